"""jit as a call primitive: transforms of a compiled function stay compiled.

Under grad, jvp or vmap, `jit(f)(*args)` binds `jit_call` with the function flattened to
arrays in, arrays out (`FlatCall`). Each transform's rule then runs a compiled version of
its own derivative of `f`, made once per signature and cached on the call:

- reverse mode: the forward pass is `jit(f)`; the backward pass is `jit` of f's vjp, which
  recomputes f's forward values inside its own kernels (as `checkpoint` does) instead of
  keeping f's intermediates;
- forward mode: `jit` of f's jvp;
- vmap: `jit` of `vmap(f)` over the batched arguments' axes.

Every rule binds at the parent interpreter, where a compiled function is a call again, so
grad of grad of jit stays compiled. Under staging (jit of a function that calls a jitted
one, make_ir) the call is traced through, to fuse with its surroundings.
"""
from ..core import dtypes
from ..core.ad_util import instantiate, is_zero
from ..core.tracing import Primitive, set_interpreter
from .custom import _CallRules, _zeros_for


class FlatCall:
    """One jitted function at one argument structure: `fun(*leaves) -> tuple of leaves`
    (static arguments and pytree structure closed over), its compiled form, and the
    compiled transforms of it, each made on first use."""

    def __init__(self, fun, name):
        self.fun = fun
        self.name = name
        self.out_trees = {}     # leaves' shapes and dtypes -> the output's structure, set
        #                         when `fun` runs for them
        self._compiled = {}

    def compiled(self, kind, make):
        """The compiled function `make()` of this kind (built once)."""
        f = self._compiled.get(kind)
        if f is None:
            from .jit import jit
            f = make()
            f.__name__ = f"{kind[0]}_{self.name}" if kind else self.name
            f = self._compiled[kind] = jit(f)
        return f

    def forward(self):
        return self.compiled((), lambda: self.fun)


class _JitCallRules(_CallRules):
    def eval(self, args, params):
        return tuple(params["call"].forward()(*args))

    def stage(self, interp, args, params):
        return params["call"].fun(*args)       # traced through: fused with the rest

    def jvp(self, interp, args, params):
        call = params["call"]
        primals, tangents = zip(*[interp.lift(a) for a in args])
        with set_interpreter(interp.parent):
            if all(is_zero(t) for t in tangents):
                return jit_call_p.bind(*primals, **params)
            floats = tuple(i for i, p in enumerate(primals) if dtypes.is_inexact(p.dtype))
            outs = call.compiled(("jvp", floats), lambda: _jvp_fun(call.fun, floats))(
                *primals, *[instantiate(tangents[i]) for i in floats])
        n = len(outs) // 2
        return tuple(interp._wrap(o, t) for o, t in zip(outs[:n], outs[n:]))

    def vjp(self, interp, args, params):
        call = params["call"]
        primals, parents = zip(*[interp.lift(a) for a in args])
        with set_interpreter(interp.parent):
            outs = jit_call_p.bind(*primals, **params)
        if all(p is None for p in parents):
            return outs
        backward_fun = call.compiled(("vjp",), lambda: _vjp_fun(call.fun, len(primals)))

        def backward(cts):
            cts = [_zeros_for(o) if c is None else instantiate(c) for c, o in zip(cts, outs)]
            return tuple(backward_fun(*primals, *cts))
        return interp.record(backward, parents, outs, multiple_results=True)

    def batch(self, interp, args, params):
        call = params["call"]
        vals, dims = zip(*[interp.lift(a) for a in args])
        # (under a named vmap, unbatched calls are vmapped too: the function may hold
        # collectives over the name, e.g. psum of a constant, which only vmap can apply)
        unbatched = all(d is None for d in dims)
        size = interp.axis_size if unbatched else None
        with set_interpreter(interp.parent):
            if unbatched and interp.axis_name is None:
                return jit_call_p.bind(*vals, **params)
            outs = call.compiled(("vmap", dims, interp.axis_name, size),
                                 lambda: _vmap_fun(call.fun, dims, interp.axis_name, size))(
                *vals)
        from .batching import BatchTracer
        return tuple(BatchTracer(interp, o, 0) for o in outs)


def _jvp_fun(fun, floats):
    from ..primitives.views import full

    def f(*xs):
        from .ad import jvp
        n = len(xs) - len(floats)
        primals = xs[:n]
        tangents = [full(p.shape, 0, p.dtype) for p in primals]
        for i, t in zip(floats, xs[n:]):
            tangents[i] = t
        outs, t_outs = jvp(fun, tuple(primals), tuple(tangents))
        return tuple(outs) + tuple(t_outs)
    return f


def _vjp_fun(fun, n):
    def f(*xs):
        from .ad import vjp
        _, f_vjp = vjp(fun, *xs[:n])
        return tuple(f_vjp(tuple(xs[n:])))
    return f


def _vmap_fun(fun, dims, axis_name, axis_size=None):
    def f(*xs):
        from .batching import vmap
        return tuple(vmap(fun, in_axes=tuple(dims), axis_name=axis_name,
                          axis_size=axis_size)(*xs))
    return f


jit_call_p = Primitive("jit_call", multiple_results=True)
jit_call_p.call = _JitCallRules()
