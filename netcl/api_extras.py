"""Top-level names of the jax namespace that real programs use, over netcl's transforms:
`device_get`, `ShapeDtypeStruct`, `eval_shape`, `make_jaxpr`, `linearize`,
`linear_transpose`, `jacobian`, `custom_gradient`, `disable_jit`,
`ensure_compile_time_eval`, `named_scope`, `named_call`, `default_backend`, `typeof`.

>>> netcl.eval_shape(lambda x: x.sum(0), netcl.ShapeDtypeStruct((3, 4), jnp.float32))
ShapeDtypeStruct(shape=(4,), dtype=float32)
"""
import contextlib
import functools

import numpy as np

from .core import dtypes
from .core.array import Array
from .core.sharded import ShardedArray
from .core.tracing import (Interpreter, ShapedArray, Tracer, current_interpreter, get_aval,
                           set_interpreter)
from .transforms.ad import jvp, vjp
from .transforms.custom import custom_vjp
from .transforms.jacobians import jacrev
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["device_get", "ShapeDtypeStruct", "eval_shape", "make_jaxpr", "linearize",
           "linear_transpose", "jacobian", "custom_gradient", "disable_jit",
           "ensure_compile_time_eval", "named_scope", "named_call", "default_backend",
           "typeof", "enable_x64"]


def device_get(x):
    """Copy a pytree of arrays to the host: every netcl array leaf becomes a NumPy array
    (waiting for its computation), anything else is returned as it is, as jax.device_get.

    >>> netcl.device_get({"w": jnp.ones(2), "step": 3})    # {'w': array([1., 1.]), 'step': 3}
    """
    def get(leaf):
        if isinstance(leaf, Tracer):
            raise TypeError(f"device_get: got a traced value {leaf!r}; device_get needs "
                            "concrete arrays (call it outside jit/grad/vmap)")
        if isinstance(leaf, (Array, ShardedArray)):
            return np.asarray(leaf)
        return leaf
    return tree_map(get, x)


class ShapeDtypeStruct:
    """A shape and a dtype standing for an array (jax.ShapeDtypeStruct): the argument of
    eval_shape / make_jaxpr, and pure_callback's declared results.

    >>> s = netcl.ShapeDtypeStruct((2, 3), jnp.float32); s.ndim, s.size     # (2, 6)
    """
    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, sharding=None, weak_type=False):
        try:
            shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list))
                                           else (shape,)))
        except TypeError:
            raise TypeError(f"ShapeDtypeStruct: shape must be a tuple of ints, got "
                            f"{shape!r}") from None
        if any(d < 0 for d in shape):
            raise ValueError(f"ShapeDtypeStruct: shape {shape} has a negative dimension")
        if dtype is None:
            raise TypeError("ShapeDtypeStruct: dtype must be given, got None")
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type) \
            == (other.shape, other.dtype, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _abstract(x, where):
    if isinstance(x, (Array, Tracer, ShapeDtypeStruct, ShapedArray)) or \
            (hasattr(x, "shape") and hasattr(x, "dtype")):
        return ShapedArray(tuple(x.shape), dtypes.canonicalize_data(np.dtype(x.dtype)),
                           bool(getattr(x, "weak_type", False)))
    from .core.eval import to_array
    return get_aval(to_array(x, where))


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes `fun(*args, **kwargs)` would return, as a pytree of
    ShapeDtypeStruct, found by tracing it (no kernel runs), as jax.eval_shape. Arguments
    may be arrays, ShapeDtypeStructs or anything with `shape` and `dtype`.

    >>> netcl.eval_shape(jnp.matmul, netcl.ShapeDtypeStruct((2, 3), jnp.float32),
    ...                  netcl.ShapeDtypeStruct((3, 5), jnp.float32))     # shape (2, 5)
    """
    from .transforms.staging import stage
    if not callable(fun):
        raise TypeError(f"eval_shape: fun must be callable, got {type(fun).__name__}")
    avals = tree_map(lambda x: _abstract(x, "eval_shape"), (args, kwargs))
    out_tree_box = []

    def f(a, k):
        out = fun(*a, **k)
        flat, tree = tree_flatten(out)
        out_tree_box.append(tree)
        return flat
    ir, _ = stage(f, avals)
    return tree_unflatten(out_tree_box[0], [ShapeDtypeStruct(v.aval.shape, v.aval.dtype,
                                                             weak_type=v.aval.weak_type)
                                            for v in ir.outvars])


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, **unused):
    """jax.make_jaxpr's name for `netcl.make_ir`: `make_jaxpr(f)(*args)` returns netcl's IR
    (print it: the same `{ lambda ... let ... in (...) }` layout, with netcl's primitive
    names, which are not JAX's). With return_shape=True also the output's ShapeDtypeStructs.

    >>> print(netcl.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(jnp.ones(3)))
    """
    from .transforms.staging import make_ir
    if axis_env:
        raise NotImplementedError("make_jaxpr: axis_env is not supported (trace inside "
                                  "netcl.vmap/pmap with an axis_name instead)")
    traced = make_ir(fun, static_argnums)

    @functools.wraps(fun)
    def wrapped(*args):
        ir = traced(*args)
        if not return_shape:
            return ir
        static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

        def dyn_fun(*dyn):
            full, it = [], iter(dyn)
            for i in range(len(args)):
                full.append(args[i] if i in static else next(it))
            return fun(*full)
        shape = eval_shape(dyn_fun, *[a for i, a in enumerate(args) if i not in static])
        return ir, shape
    return wrapped


def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) is the forward-mode derivative of fun
    at primals, as jax.linearize (with has_aux: also fun's auxiliary output). netcl has no
    partial evaluation: each f_jvp call evaluates jvp(fun, primals, tangents), forward pass
    included.

    >>> y, f_jvp = netcl.linearize(jnp.sin, 1.0); f_jvp(2.0)    # 2 cos(1)
    """
    if not callable(fun):
        raise TypeError(f"linearize: fun must be callable, got {type(fun).__name__}")
    from .transforms.ad import _as_array
    primals = tree_map(lambda p: _as_array(p, "linearize"), primals)
    flat, tree = tree_flatten(primals)
    for i, p in enumerate(flat):
        if not dtypes.is_inexact(p.dtype):
            raise TypeError(f"linearize: primal {i} has dtype {p.dtype}; linearize needs float "
                            "arrays")
    res = fun(*primals)
    out, aux = res if has_aux else (res, None)

    def f_jvp(*tangents):
        if len(tangents) != len(primals):
            raise TypeError(f"linearize: the linearized function takes {len(primals)} "
                            f"tangent(s), one per primal, got {len(tangents)}")
        t_flat, t_tree = tree_flatten(tangents)
        if t_tree != tree:
            raise ValueError(f"linearize: tangents must have the primals' structure {tree}, "
                             f"got {t_tree}")
        for i, (p, t) in enumerate(zip(flat, t_flat)):
            if tuple(np.shape(t)) != tuple(p.shape):
                raise ValueError(f"linearize: tangent {i} has shape {tuple(np.shape(t))}, "
                                 f"its primal {tuple(p.shape)}")
        t_flat = [_as_array(t, "linearize") for t in t_flat]
        t_flat = [t if t.dtype == p.dtype else t.astype(p.dtype) for t, p in zip(t_flat, flat)]
        g = (lambda *ps: fun(*ps)[0]) if has_aux else fun
        return jvp(g, tuple(primals), tuple(tree_unflatten(tree, t_flat)))[1]
    return (out, f_jvp, aux) if has_aux else (out, f_jvp)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of a linear function, as jax.linear_transpose: `primals` (arrays or
    ShapeDtypeStructs) give the input shapes and dtypes; the result maps an output
    cotangent to the tuple of input cotangents. `fun` must be linear (it is transposed
    through reverse mode at zero inputs; an affine term is ignored silently, as JAX would
    reject it at trace time — check linearity yourself).

    >>> t = netcl.linear_transpose(lambda x: 2.0 * x, jnp.ones(3)); t(jnp.ones(3))  # (2, 2, 2)
    """
    if not callable(fun):
        raise TypeError(f"linear_transpose: fun must be callable, got {type(fun).__name__}")
    from .numpy import zeros
    flat, tree = tree_flatten(primals)
    flat = [_abstract(p, "linear_transpose") for p in flat]
    for i, p in enumerate(flat):
        if not dtypes.is_inexact(np.dtype(p.dtype)):
            raise TypeError(f"linear_transpose: primal {i} has dtype {p.dtype}; only float "
                            "inputs can be transposed")

    def transposed(out_cotangent):
        zs = [zeros(p.shape, p.dtype) for p in flat]
        _, f_vjp = vjp(fun, *tree_unflatten(tree, zs))
        return f_vjp(out_cotangent)
    return transposed


def jacobian(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """jax.jacobian: the Jacobian by reverse mode (netcl.jacrev; `holomorphic=True` for a
    complex function of complex inputs).

    >>> netcl.jacobian(jnp.sin)(jnp.zeros(2))     # eye(2)
    """
    return jacrev(fun, argnums=argnums, has_aux=has_aux, holomorphic=holomorphic)


def custom_gradient(fun):
    """jax.custom_gradient: `fun(*args)` returns `(value, vjp_fn)`; the returned function
    computes `value`, and its reverse-mode derivative is `vjp_fn(cotangent)` (a tuple, one
    cotangent per argument). Forward mode is not defined (as for custom_vjp).

    >>> @netcl.custom_gradient
    ... def clip_grad(x):
    ...     return x, lambda g: (jnp.clip(g, -1.0, 1.0),)
    """
    if not callable(fun):
        raise TypeError(f"custom_gradient: fun must be callable, got {type(fun).__name__}")
    name = getattr(fun, "__name__", "fun")

    def primal(*args):
        return _split_pair(fun(*args), name)[0]
    primal.__name__ = name
    wrapped = custom_vjp(primal)

    def fwd(*args):
        return _split_pair(fun(*args), name)

    def bwd(vjp_fn, ct):
        cts = vjp_fn(ct)
        if not isinstance(cts, (tuple, list)):
            cts = (cts,)
        return tuple(cts)
    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


def _split_pair(res, name):
    if not (isinstance(res, (tuple, list)) and len(res) == 2 and callable(res[1])):
        raise TypeError(f"custom_gradient: {name} must return a pair (value, vjp_fn) with "
                        f"vjp_fn callable, got {type(res).__name__}")
    return res[0], res[1]


# ---- interpreters that run code eagerly inside other transforms -----------------------------

class _DisableJit(Interpreter):
    """Binds everything at its parent; a jitted function's call runs its Python function
    (under this interpreter, so jitted functions inside it run in Python too)."""
    transform_name = "disable_jit"

    def __init__(self, parent):
        from .core.eval import eval_interpreter
        self.parent = parent
        self.runs_eagerly = parent is eval_interpreter

    def process(self, prim, args, params):
        from .transforms.jit_call import jit_call_p
        if prim is jit_call_p:
            return tuple(params["call"].fun(*args))
        with set_interpreter(self.parent):
            return prim.bind(*args, **params)

    def concrete(self, tracer, what):
        return self.parent.concrete(tracer, what)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within the block, functions made with netcl.jit run as plain Python, op by op (values
    are concrete: print them, use breakpoint()), as jax.disable_jit.

    >>> with netcl.disable_jit():
    ...     step(params, batch)      # its Python runs now, with concrete arrays
    """
    if not disable:
        yield
        return
    with set_interpreter(_DisableJit(current_interpreter())):
        yield


class _CompileTimeEval(Interpreter):
    """Operations on concrete arrays only run now (eagerly); others go to the parent."""
    transform_name = "ensure_compile_time_eval"

    def __init__(self, parent):
        from .core.eval import eval_interpreter
        self.parent = parent
        self.runs_eagerly = parent is eval_interpreter

    def process(self, prim, args, params):
        from .core.eval import eval_interpreter
        eager = not any(isinstance(a, Tracer) for a in args)
        with set_interpreter(eval_interpreter if eager else self.parent):
            return prim.bind(*args, **params)

    def concrete(self, tracer, what):
        return self.parent.concrete(tracer, what)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Within the block, operations whose inputs are all concrete (not traced) run at once,
    even while a function is being traced by jit; their results are concrete arrays
    (usable in Python control flow), as jax.ensure_compile_time_eval.

    >>> @netcl.jit
    ... def f(x):
    ...     with netcl.ensure_compile_time_eval():
    ...         n = int(jnp.arange(4).sum())      # 6, computed at trace time
    ...     return x * n
    """
    with set_interpreter(_CompileTimeEval(current_interpreter())):
        yield


@contextlib.contextmanager
def named_scope(name):
    """jax.named_scope: names operations for profilers in JAX; netcl's profiles name
    kernels, so this only checks `name` and runs the block.

    >>> with netcl.named_scope("encoder"): y = layer(x)
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    yield


def named_call(fun, *, name=None):
    """jax.named_call: `fun` itself (the name is for JAX's profiler; see named_scope).

    >>> f = netcl.named_call(jnp.sin, name="sine")
    """
    if not callable(fun):
        raise TypeError(f"named_call: fun must be callable, got {type(fun).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str, got {type(name).__name__}")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        return fun(*args, **kwargs)
    return wrapped


def print_environment_info(return_string=False):
    """The versions netcl runs with (netcl, NumPy, PyOpenCL, Python), its devices and the
    job's processes, printed (or returned, with `return_string`), as
    jax.print_environment_info: what to paste into a bug report.

    >>> netcl.print_environment_info()
    """
    import platform
    import sys

    import pyopencl as cl

    import netcl
    from .core.devices import devices
    found = devices()
    text = "\n".join([
        f"netcl:    {netcl.__version__}", f"numpy:    {np.__version__}",
        f"pyopencl: {cl.VERSION_TEXT}", f"python:   {sys.version}",
        f"device info: {len(found)} local devices: "
        + "; ".join(f"{d.kind} {d.name!r} ({d.platform})" for d in found),
        f"process_count: {netcl.process_count()}",
        f"platform: {platform.uname()}"]) + "\n"
    if return_string:
        return text
    print(text, end="")


def default_backend():
    """The default device's platform, as jax.default_backend: 'cpu' (PoCL and other CPU
    devices, and the NumPy fallback), 'gpu' or 'accelerator'.

    >>> netcl.default_backend()     # 'cpu'
    """
    from .core.devices import default_device
    d = default_device()
    if d.is_numpy:
        return "cpu"
    return {"cpu": "cpu", "gpu": "gpu"}.get(d.kind, str(d.kind))


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array or traced value, as
    jax.typeof.

    >>> netcl.typeof(jnp.ones(3))     # ShapedArray(float32[3])
    """
    if isinstance(x, (Array, Tracer, ShardedArray)):
        return get_aval(x)
    return _abstract(x, "typeof")


@contextlib.contextmanager
def enable_x64(new_val=True):
    """Within the block, netcl.config.enable_x64 is `new_val` (float64 kept where the
    device has fp64), as jax.enable_x64; the previous setting comes back after it.

    >>> with netcl.enable_x64():
    ...     x = jnp.ones(3, jnp.float64)
    """
    from .core.config import config
    old = config.enable_x64
    config.update("enable_x64", bool(new_val))
    try:
        yield
    finally:
        config.update("enable_x64", old)
