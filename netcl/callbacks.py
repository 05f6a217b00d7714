"""Host callbacks: Python functions called on host (NumPy) copies of arrays, eagerly and from
compiled code (`netcl.pure_callback`, and `netcl.debug.print` / `netcl.debug.callback`,
which build on `debug_callback_p`).

Both are call primitives (transforms/custom.py's protocol). Eagerly the function is called at
once. Under `jit` (and inside staged loop bodies, pmap) the call is an equation of the IR
whose step, when the compiled function runs, waits for its inputs, copies them to the host
and calls the function: so the function really runs at run time, on every call, with the
values of that call (not once at trace time).

- `pure_callback_p`: the function's results are arrays of the declared shapes and dtypes,
  uploaded to the device; an unused result is dropped by jit with its call, as for any pure
  computation. It has no derivative (grad/jvp of it raise a TypeError naming the function:
  wrap it in `netcl.custom_jvp` / `custom_vjp` to give it one); under vmap `vmap_method`
  says how it is called (JAX's names).
- `debug_callback_p`: called for its effect. Its outputs are copies of its inputs; under
  staging the traced values it printed are re-pointed at those copies, so that the
  computation after the print reads them and jit keeps the print. Limitation: netcl's
  jit drops equations whose results nothing reads (fusion.dce: every primitive is taken
  to be pure), so a print under jit of values that nothing computed afterwards reads (and
  that are not results) is dropped. Under grad/jvp the primal values are passed; under
  vmap the function is called once per batch element (as JAX's debug callbacks).
"""
import numpy as np

from .core.array import Array
from .core.devices import default_device
from .core.ir import Eqn, Var
from .core.tracing import Primitive, ShapedArray, Tracer, current_interpreter, set_interpreter

__all__ = ["pure_callback"]


def _host(x):
    return np.asarray(x)


def _is_eager():
    from .core.eval import eval_interpreter
    interp = current_interpreter()
    return interp is eval_interpreter or getattr(interp, "runs_eagerly", False)


# ---- debug callbacks: called for their effect ------------------------------------------------

class _PerElement:
    """A callback on batched host values, calling `fn` once per batch element (vmap)."""
    __slots__ = ("fn", "dims", "size")

    def __init__(self, fn, dims, size):
        self.fn, self.dims, self.size = fn, tuple(dims), int(size)

    def __call__(self, *values):
        for i in range(self.size):
            self.fn(*[v if d is None else np.take(v, i, axis=d)
                      for v, d in zip(values, self.dims)])

    def __eq__(self, other):
        return type(other) is _PerElement and (self.fn, self.dims, self.size) == \
            (other.fn, other.dims, other.size)

    def __hash__(self):
        return hash((id(self.fn), self.dims, self.size))


def emit_debug_callback(callback, values):
    """Call `callback(*host copies of values)`: now where evaluation is eager, else through
    the current transform (see the module docstring). Returns nothing."""
    if _is_eager():
        callback(*[_host(v) for v in values])
        return
    debug_callback_p.bind(*values, callback=callback)


class _DebugCallbackRules:
    def eval(self, args, params):
        hosts = [_host(a) for a in args]
        params["callback"](*hosts)
        # fresh copies: under jit the values after the print read these (see stage)
        return tuple(Array.from_numpy(a.device, h, weak_type=a.weak_type)
                     for a, h in zip(args, hosts))

    def _at_parent(self, interp, vals, params):
        with set_interpreter(interp.parent):
            emit_debug_callback(params["callback"], vals)

    def jvp(self, interp, args, params):
        self._at_parent(interp, [interp.lift(a)[0] for a in args], params)
        return tuple(args)

    vjp = jvp

    def batch(self, interp, args, params):
        vals, dims = zip(*[interp.lift(a) for a in args])
        cb = params["callback"]
        if any(d is not None for d in dims):
            cb = _PerElement(cb, dims, interp.axis_size)
        with set_interpreter(interp.parent):
            emit_debug_callback(cb, vals)
        return tuple(args)

    def stage(self, interp, args, params):
        from .transforms.staging import StagingTracer
        in_vars = [interp.to_var(a) for a in args]
        out_vars = [Var(ShapedArray(v.aval.shape, v.aval.dtype, v.aval.weak_type))
                    for v in in_vars]
        interp.eqns.append(Eqn(debug_callback_p, in_vars, dict(params), out_vars))
        # The values printed are read after the print through its outputs, so that the
        # print stays in the compiled function where anything later reads them.
        for a, v in zip(args, out_vars):
            if isinstance(a, StagingTracer) and a._interp is interp:
                a._var = v
        return tuple(args)


debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.call = _DebugCallbackRules()
# jit's dead-code pass keeps its equations even where nothing reads their outputs
debug_callback_p.has_side_effects = True


# ---- pure_callback --------------------------------------------------------------------------

_VMAP_METHODS = (None, "sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized")


class _HostCall:
    """The flat host function of one pure_callback: host arrays in, checked host arrays out
    (hashable by the user's function and the declared results)."""
    __slots__ = ("fn", "out_avals", "name", "in_tree", "out_tree", "static", "check")

    def __init__(self, fn, out_avals, name, in_tree, out_tree, static, check=True):
        self.fn, self.out_avals, self.name = fn, tuple(out_avals), name
        self.in_tree, self.out_tree, self.static = in_tree, out_tree, static
        self.check = check

    def relaxed(self):
        """This call without the shape check (vmap_method 'expand_dims'/'broadcast_all':
        the function returns results with a batch axis)."""
        return _HostCall(self.fn, self.out_avals, self.name, self.in_tree, self.out_tree,
                         self.static, check=False)

    def __call__(self, *values):
        from .tree_util import tree_flatten, tree_unflatten
        leaves, it = [], iter(values)
        for s in self.static:
            leaves.append(next(it) if s is _DYNAMIC else s)
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        out = self.fn(*args, **kwargs)
        flat, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(f"pure_callback: {self.name} returned a value of structure {tree}, "
                            f"but result_shape_dtypes has structure {self.out_tree}")
        res = []
        for i, (o, a) in enumerate(zip(flat, self.out_avals)):
            o = np.asarray(o)
            if self.check and (o.shape != a.shape or o.dtype != a.dtype):
                raise TypeError(f"pure_callback: {self.name} returned result {i} of shape "
                                f"{o.shape} and dtype {o.dtype}, but result_shape_dtypes "
                                f"declares {a.shape} and {a.dtype}")
            res.append(o)
        return res

    def _key(self):
        return (id(self.fn), self.out_avals, self.in_tree, self.out_tree,
                tuple(id(s) for s in self.static), self.check)

    def __eq__(self, other):
        return type(other) is _HostCall and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


_DYNAMIC = object()


class _Batched:
    """pure_callback's host function under vmap, by `vmap_method`."""
    __slots__ = ("fn", "dims", "size", "method", "out_avals")

    def __init__(self, fn, dims, size, method, out_avals):
        self.fn, self.dims, self.size, self.method = fn, tuple(dims), int(size), method
        self.out_avals = tuple(out_avals)

    def __call__(self, *values):
        values = [v if d is None else np.moveaxis(v, d, 0) for v, d in zip(values, self.dims)]
        if self.method in ("sequential", "sequential_unrolled"):
            outs = [self.fn(*[v if d is None else v[i] for v, d in zip(values, self.dims)])
                    for i in range(self.size)]
            return [np.stack([o[k] for o in outs]) if outs else np.zeros(a.shape, a.dtype)
                    for k, a in enumerate(self.out_avals)]
        if self.method == "expand_dims":
            values = [v[None] if d is None else v for v, d in zip(values, self.dims)]
        else:   # broadcast_all, legacy_vectorized
            values = [np.broadcast_to(v[None], (self.size,) + v.shape) if d is None else v
                      for v, d in zip(values, self.dims)]
        return self.fn(*values)

    def _key(self):
        return (self.fn, self.dims, self.size, self.method, self.out_avals)

    def __eq__(self, other):
        return type(other) is _Batched and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


class _PureCallbackRules:
    def eval(self, args, params):
        device = args[0].device if args else default_device()
        outs = params["callback"](*[_host(a) for a in args])
        res = []
        for o, a in zip(outs, params["out_avals"]):
            o = np.asarray(o)
            if o.shape != a.shape:
                raise TypeError(f"pure_callback: {params['name']} returned shape {o.shape}, "
                                f"expected {a.shape}")
            res.append(Array.from_numpy(device, np.ascontiguousarray(o, dtype=a.dtype)))
        return tuple(res)

    def _no_derivative(self, interp, args, params, tangent_of):
        if all(tangent_of(a) for a in args):
            with set_interpreter(interp.parent):
                return pure_callback_p.bind(*[interp.lift(a)[0] for a in args], **params)
        raise TypeError(f"pure_callback: the host function {params['name']} has no derivative "
                        "(netcl cannot differentiate Python code run on the host); wrap the "
                        "call in netcl.custom_jvp or netcl.custom_vjp to give it one")

    def jvp(self, interp, args, params):
        from .core.ad_util import is_zero
        return self._no_derivative(interp, args, params, lambda a: is_zero(interp.lift(a)[1]))

    def vjp(self, interp, args, params):
        return self._no_derivative(interp, args, params, lambda a: interp.lift(a)[1] is None)

    def batch(self, interp, args, params):
        from .transforms.batching import BatchTracer
        vals, dims = zip(*[interp.lift(a) for a in args])
        method = params["vmap_method"]
        if method is None:
            raise NotImplementedError(
                f"pure_callback: {params['name']} is called under vmap, but no vmap_method "
                "was given; pass vmap_method='sequential' (one call per element), "
                "'expand_dims' or 'broadcast_all' (one call on the batch)")
        size = interp.axis_size
        out_avals = tuple(ShapedArray((size,) + a.shape, a.dtype) for a in params["out_avals"])
        fn = params["callback"]
        if method not in ("sequential", "sequential_unrolled") and type(fn) is _HostCall:
            fn = fn.relaxed()       # it returns the whole batch's results
        cb = _Batched(fn, dims, size, method, out_avals)
        with set_interpreter(interp.parent):
            outs = pure_callback_p.bind(*vals, callback=cb, out_avals=out_avals,
                                        name=params["name"], vmap_method=method)
        return tuple(BatchTracer(interp, o, 0) for o in outs)

    def stage(self, interp, args, params):
        from .transforms.staging import StagingTracer
        in_vars = [interp.to_var(a) for a in args]
        out_vars = [Var(a) for a in params["out_avals"]]
        interp.eqns.append(Eqn(pure_callback_p, in_vars, dict(params), out_vars))
        return tuple(StagingTracer(interp, v) for v in out_vars)


pure_callback_p = Primitive("pure_callback", multiple_results=True)
pure_callback_p.call = _PureCallbackRules()


def _result_avals(result_shape_dtypes, name):
    from .core import dtypes
    from .tree_util import tree_flatten
    flat, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for i, s in enumerate(flat):
        if not (hasattr(s, "shape") and hasattr(s, "dtype")):
            raise TypeError(f"pure_callback: result_shape_dtypes leaf {i} of {name} must have "
                            f"a shape and a dtype (a netcl.ShapeDtypeStruct or an array), got "
                            f"{type(s).__name__}")
        avals.append(ShapedArray(tuple(int(d) for d in s.shape),
                                 dtypes.canonicalize(s.dtype, where="pure_callback")))
    return avals, tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call a side-effect-free Python function on host (NumPy) copies of `args`, as
    jax.pure_callback: eagerly at once; under jit each time the compiled function runs.
    `result_shape_dtypes` (a pytree of netcl.ShapeDtypeStruct or arrays) declares what it
    returns. No derivative (wrap it in netcl.custom_jvp for one); under vmap `vmap_method`
    ('sequential', 'expand_dims', 'broadcast_all') says how it is called.

    >>> f = netcl.jit(lambda x: netcl.pure_callback(np.sin, netcl.ShapeDtypeStruct(x.shape,
    ...     x.dtype), x))
    >>> f(jnp.ones(3))        # np.sin ran on the host, at run time
    """
    from .tree_util import tree_flatten
    name = getattr(callback, "__name__", None) or type(callback).__name__
    if not callable(callback):
        raise TypeError(f"pure_callback: callback must be callable, got {type(callback).__name__}")
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"pure_callback: vmap_method={vmap_method!r} for {name}; expected one "
                         f"of {', '.join(map(repr, _VMAP_METHODS[1:]))}")
    out_avals, out_tree = _result_avals(result_shape_dtypes, name)
    leaves, in_tree = tree_flatten((args, kwargs))
    static, dyn = [], []
    for x in leaves:
        if isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float)):
            static.append(_DYNAMIC)
            dyn.append(x)
        else:
            static.append(x)
    host = _HostCall(callback, out_avals, name, in_tree, out_tree, tuple(static))
    from .tree_util import tree_unflatten
    outs = pure_callback_p.bind(*dyn, callback=host, out_avals=tuple(out_avals), name=name,
                                vmap_method=vmap_method)
    return tree_unflatten(out_tree, list(outs))
