"""pmap under grad, jvp and vmap: a pmapped function called inside another transform.

Where `pmap(f)(*args)` runs under reverse or forward mode or vmap, it binds `pmap_call` over
its argument leaves (`PmapCall`: the function flattened to leaves in, leaves out, with the
mapping of each), and the transforms' rules run pmaps of f's derivatives, as jit_call runs
jits of them (JAX's pmap is a call primitive too):

- forward mode: a pmap of f's jvp, each tangent mapped as its primal;
- reverse mode: the forward pass is the pmap of f (donating nothing: the backward pass reads
  the arguments); the backward pass is a pmap of f's vjp, each cotangent mapped as its
  output, whose results come back one per device along a new leading axis: a mapped
  argument's cotangent is that (moved to the argument's axis), a broadcast argument's (in_axes
  None: the same value on every device) the sum over the devices, as JAX transposes a
  broadcast into a sum.

Under vmap the call is a pmap of f's vmap (the batch axis first on every device, see
`_PmapCallRules.batch`). Collectives inside f are differentiated inside the derivative's
pmap, by their own rules. Every rule binds at the parent interpreter, so grad of grad of
pmap stays a pmap. jit of a pmapped function is not supported (`Pmapped.__call__` says so).
"""
from ..core import dtypes
from ..core.ad_util import instantiate, is_zero
from ..core.array import Array
from ..core.sharded import ShardedArray
from ..core.tracing import Primitive, ShapedArray, set_interpreter
from ..tree_util import tree_flatten, tree_unflatten
from .batching import _broadcast_prefix
from .custom import _CallRules, _zeros_for


class PmapCall:
    """One pmapped function (`pmapped`, a Pmapped) at one argument structure: `fun(*leaves)`
    -> the tuple of its output's leaves, `axes` each argument leaf's mapped axis (None:
    broadcast), `out_axes` each output leaf's (known once `shapes` has traced it), and the
    pmaps of its derivatives, each made once."""

    def __init__(self, pmapped, tree, static, n_args, axes):
        self.pmapped = pmapped
        self.tree, self.static, self.n_args = tree, dict(static), n_args
        self.axes = tuple(axes)
        self.out_tree = None
        self.out_axes = None
        self._derived = {}

    def fun(self, *leaves):
        dyn, kwargs = tree_unflatten(self.tree, list(leaves))
        it = iter(dyn)
        full = [self.static[i] if i in self.static else next(it) for i in range(self.n_args)]
        flat, self.out_tree = tree_flatten(self.pmapped.fun(*full, **kwargs))
        return tuple(flat)

    def shapes(self, leaves):
        """Trace `fun` on one shard's abstract values (with the axis bound), once, to learn
        the output's structure and each output leaf's axis."""
        if self.out_axes is not None:
            return
        from ..primitives.axis_env import axis_frame
        from .staging import stage
        size = next((x.shape[a % x.ndim] for x, a in zip(leaves, self.axes) if a is not None),
                    self.pmapped.axis_size)
        avals = tuple(_shard_aval(x, a) for x, a in zip(leaves, self.axes))
        with axis_frame(self.pmapped.axis_name, size):
            stage(self.fun, avals)
        template = tree_unflatten(self.out_tree, [0] * self.out_tree.num_leaves)
        self.out_axes = tuple(_broadcast_prefix(self.pmapped.out_axes, template, "out_axes"))

    def derived(self, kind, make, in_axes, out_axes):
        """The pmap of `make()` (built once per kind), mapping as `in_axes` and `out_axes`
        say, over the pmapped function's devices and axis, donating nothing."""
        f = self._derived.get(kind)
        if f is None:
            from .pmap import pmap
            p = self.pmapped
            f = self._derived[kind] = pmap(make(), p.axis_name, in_axes=tuple(in_axes),
                                           out_axes=tuple(out_axes), devices=p.devices,
                                           axis_size=p.axis_size)
        return f


def _drop_axis(x, axis):
    """x's abstract value without its axis `axis` (a vmapped argument's one example)."""
    shape = tuple(x.shape)
    return ShapedArray(shape[:axis] + shape[axis + 1:], x.dtype, getattr(x, "weak_type", False))


def _shard_aval(x, axis):
    shape = tuple(x.shape)
    if axis is not None:
        shape = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
    return ShapedArray(shape, x.dtype, getattr(x, "weak_type", False))


class _PmapCallRules(_CallRules):
    def eval(self, args, params):
        call = params["call"]
        call.shapes(args)
        return tuple(call.derived(("forward",), lambda: call.fun, call.axes,
                                  call.out_axes)(*args))

    def stage(self, interp, args, params):
        raise NotImplementedError(
            f"{params['call'].pmapped._name}: jit or make_ir of a pmapped function under "
            "grad or jvp; pmap a jitted function instead")

    def batch(self, interp, args, params):
        """vmap of pmap is a pmap of vmap: each batched argument's batch axis goes first and
        stays on every device (the mapped axis moves one place right), f is vmapped over it
        on each device, and each output carries the batch axis first."""
        call = params["call"]
        vals, dims = zip(*[interp.lift(a) for a in args])
        unbatched = all(d is None for d in dims)
        with set_interpreter(interp.parent):
            if unbatched and interp.axis_name is None:
                return pmap_call_p.bind(*vals, **params)
            from .. import numpy as jnp
            call.shapes([v if d is None else _drop_axis(v, d) for v, d in zip(vals, dims)])
            vals = [v if d in (None, 0) else jnp.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
            in_axes = tuple(a if d is None or a is None else a % (v.ndim - 1) + 1
                            for v, d, a in zip(vals, dims, call.axes))
            vmap_axes = tuple(None if d is None else 0 for d in dims)
            out_axes = tuple(o if o is None or o < 0 else o + 1 for o in call.out_axes)
            size = interp.axis_size if unbatched else None
            from .jit_call import _vmap_fun
            f = call.derived(("vmap", vmap_axes, interp.axis_name, size),
                             lambda: _vmap_fun(call.fun, vmap_axes, interp.axis_name, size),
                             in_axes, out_axes)
            outs = f(*vals)
        from .batching import BatchTracer
        return tuple(BatchTracer(interp, o, 0) for o in outs)

    def jvp(self, interp, args, params):
        call = params["call"]
        primals, tangents = zip(*[interp.lift(a) for a in args])
        with set_interpreter(interp.parent):
            if all(is_zero(t) for t in tangents):
                return pmap_call_p.bind(*primals, **params)
            call.shapes(primals)
            floats = tuple(i for i, p in enumerate(primals) if dtypes.is_inexact(p.dtype))
            from .jit_call import _jvp_fun
            f = call.derived(("jvp", floats), lambda: _jvp_fun(call.fun, floats),
                             call.axes + tuple(call.axes[i] for i in floats),
                             call.out_axes * 2)
            outs = f(*primals, *[instantiate(tangents[i]) for i in floats])
        n = len(outs) // 2
        return tuple(interp._wrap(o, t) for o, t in zip(outs[:n], outs[n:]))

    def vjp(self, interp, args, params):
        call = params["call"]
        primals, parents = zip(*[interp.lift(a) for a in args])
        with set_interpreter(interp.parent):
            outs = pmap_call_p.bind(*primals, **params)
        if all(p is None for p in parents):
            return outs
        from .jit_call import _vjp_fun
        n = len(primals)
        backward_pmap = call.derived(("vjp",), lambda: _vjp_fun(call.fun, n),
                                     call.axes + call.out_axes, (0,) * n)

        def backward(cts):
            cts = [_zeros_for(o) if c is None else instantiate(c) for c, o in zip(cts, outs)]
            per_device = backward_pmap(*primals, *cts)
            return tuple(_cotangent(g, p, a) for g, p, a in zip(per_device, primals, call.axes))
        return interp.record(backward, parents, outs, multiple_results=True)


def _cotangent(g, primal, axis):
    """An argument's cotangent from the backward pmap's per-device results `g` (stacked
    along a new leading axis): summed over the devices for a broadcast argument, moved to
    the argument's mapped axis otherwise; an Array for an Array argument."""
    from .. import numpy as jnp
    if axis is None:
        return jnp.sum(g, axis=0)
    if isinstance(primal, ShardedArray) and axis % primal.ndim == 0:
        return g
    g = g._as_array() if isinstance(g, ShardedArray) else g
    return g if axis % primal.ndim == 0 else jnp.moveaxis(g, 0, axis)


pmap_call_p = Primitive("pmap_call", multiple_results=True)
pmap_call_p.call = _PmapCallRules()


def bind_pmap_call(pmapped, args, kwargs, dyn_pos, axes):
    """Run `pmapped(*args, **kwargs)` under the current transform (grad, jvp) as a
    `pmap_call` over its argument leaves; `axes`: each leaf's mapped axis."""
    dyn = tuple(args[i] for i in dyn_pos)
    leaves, tree = tree_flatten((dyn, kwargs))
    leaves = [x if isinstance(x, (Array, ShardedArray)) or hasattr(x, "dtype")
              else _as_array(x, pmapped._name) for x in leaves]
    static = tuple((i, args[i]) for i in range(len(args)) if i not in dyn_pos)
    call = PmapCall(pmapped, tree, static, len(args), axes)
    outs = pmap_call_p.bind(*leaves, call=call)
    return tree_unflatten(call.out_tree, list(outs))


def _as_array(x, where):
    from ..core.eval import to_array
    return to_array(x, where)
