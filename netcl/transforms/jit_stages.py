"""jit's stages, as JAX's: `jit(f).lower(*args)` gives a `Lowered` (the optimised IR, the
kernels it launches and their sources), whose `compile()` gives a `Compiled`, called like
`f` without its static arguments.

>>> low = netcl.jit(lambda x: jnp.tanh(x) * 2 + 1).lower(jnp.ones(8))
>>> [k.name for k in low.kernels], low.compile()(jnp.ones(8))
"""
from ..core.devices import default_device
from ..core.launch import Kernel
from .epilogue_fusion import EpiloguePrimitive
from .executable import launcher_for
from .fusion import FusedPrimitive
from .horizontal_fusion import HorizontalPrimitive
from .plan import Plan, is_view, unbound_values
from .row_fusion import RowFusedPrimitive


class Lowered:
    """What `jit(f).lower(*args)` returns: the optimised IR, kernels and their sources."""

    def __init__(self, jitted, key, ir, flat_args):
        self._jitted, self._key, self.ir = jitted, key, ir
        self._flat_args = flat_args

    def as_text(self):
        """The optimised IR; fused groups show as fused_* equations with their members."""
        lines = [str(self.ir)]
        for e in self.ir.eqns:
            if isinstance(e.prim, (FusedPrimitive, RowFusedPrimitive, EpiloguePrimitive)):
                lines.append(f"-- {e.prim.name}: " + "; ".join(m.prim.name for m in e.prim.eqns))
            elif isinstance(e.prim, HorizontalPrimitive):
                lines.append(f"-- {e.prim.name}: " + "; ".join(g.name for g in e.prim.groups))
        return "\n".join(lines)

    @property
    def kernels(self):
        """Kernels that launch, in order: the Plan's (a GEMM's pack kernel on CPUs, a product
        and its epilogue group as two kernels), built for dense arguments of the lowered
        shapes without running; a step whose launch does not list its kernels shows its
        primitive's (fused groups with their OpenCL C); views, weak-type casts and no-ops
        launch nothing."""
        device = default_device()
        env = unbound_values(self.ir, device)
        steps = [[env[v.id] for v in e.inputs] for e in self.ir.eqns]
        launches = [launcher_for(e.prim, args, e.params)
                    for e, args in zip(self.ir.eqns, steps)]
        plan = Plan.build(self.ir, launches)
        out = []
        for e, step, args in zip(self.ir.eqns, plan.steps, steps):
            if is_view(e):
                continue
            if step.launch.kernels is not None and not device.is_numpy:
                out += step.launch.kernels
                continue
            src = ""
            if isinstance(e.prim, (FusedPrimitive, EpiloguePrimitive)) and not device.is_numpy:
                src = e.prim.source_for(device, args)
            elif isinstance(e.prim, RowFusedPrimitive) and not device.is_numpy:
                src = e.prim.source_for(device, args, 64)[0]
            out.append(Kernel(getattr(e.prim, "kernel_name", e.prim.name), src))
        return out

    def compile(self):
        return self._jitted._compiled_for(self._key, self.ir)


class Compiled:
    """What `jit(f).lower(*args).compile()` returns, as JAX's: called with f's arguments less
    the static ones (the lowered structure, shapes and dtypes), it runs the compiled code and
    returns f's outputs. `executable` is the Executable (flat arrays in, a list out).

    >>> step = netcl.jit(f).lower(w, x).compile(); step(w, x)
    """

    def __init__(self, jitted, executable, key):
        self._jitted, self.executable, self._key = jitted, executable, key

    def as_text(self):
        return str(self.executable.ir)

    def __call__(self, *args, **kwargs):
        name = f"jit({_name(self._jitted.fun)}) compiled"
        flat, tree, _ = self._jitted._flatten(args, kwargs)
        tree0, sig0 = self._key[0], self._key[1]
        sig = tuple((x.shape, x.dtype, x.weak_type) for x in flat)
        if tree != tree0:
            raise TypeError(f"{name}: the arguments' structure {tree} differs from the "
                            f"lowered one {tree0} (static arguments are not passed again)")
        if sig != sig0:
            diff = [f"argument leaf {i}: {_fmt(g)} vs lowered {_fmt(w)}"
                    for i, (g, w) in enumerate(zip(sig, sig0)) if g != w]
            raise TypeError(f"{name}: Argument types differ from the types for which this "
                            f"computation was compiled: {'; '.join(diff)}")
        outs = self.executable(flat)
        build = self.executable.build_outputs
        return build(outs) if build is not None else outs


def _name(fun):
    return getattr(fun, "__name__", "fun")


def _fmt(sig):
    shape, dtype, weak = sig
    return f"{dtype.name}[{','.join(map(str, shape))}]" + ("(weak)" if weak else "")
