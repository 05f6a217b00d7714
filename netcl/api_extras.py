"""Top-level names of the jax namespace that real programs use, over netcl's transforms:
`device_get`, `ShapeDtypeStruct`, `eval_shape`, `make_jaxpr`, `linearize`,
`linear_transpose`, `jacobian`, `custom_gradient`, `disable_jit`,
`ensure_compile_time_eval`, `named_scope`, `named_call`, `default_backend`, `typeof`,
`closure_convert`, `live_arrays`.

>>> netcl.eval_shape(lambda x: x.sum(0), netcl.ShapeDtypeStruct((3, 4), jnp.float32))
ShapeDtypeStruct(shape=(4,), dtype=float32)
"""
import contextlib
import functools

import numpy as np

from . import profiler as _profiler
from .core import dtypes
from .core.array import Array
from .core.sharded import DistributedArray
from .core.tracing import (Interpreter, ShapedArray, Tracer, current_interpreter, get_aval,
                           set_interpreter)
from .transforms.ad import jvp, vjp
from .transforms.custom import custom_vjp
from .transforms.jacobians import jacrev
from .tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["device_get", "ShapeDtypeStruct", "eval_shape", "make_jaxpr", "linearize",
           "linear_transpose", "jacobian", "custom_gradient", "disable_jit",
           "ensure_compile_time_eval", "named_scope", "named_call", "default_backend",
           "typeof", "enable_x64", "closure_convert", "live_arrays"]


def device_get(x):
    """Copy a pytree of arrays to the host: every netcl array leaf becomes a NumPy array
    (waiting for its computation), anything else is returned as it is, as jax.device_get.

    >>> netcl.device_get({"w": jnp.ones(2), "step": 3})    # {'w': array([1., 1.]), 'step': 3}
    """
    def get(leaf):
        if isinstance(leaf, Tracer):
            raise TypeError(f"device_get: got a traced value {leaf!r}; device_get needs "
                            "concrete arrays (call it outside jit/grad/vmap)")
        if isinstance(leaf, (Array, DistributedArray)):
            return np.asarray(leaf)
        return leaf
    from .core import config as config_module
    if config_module.GUARD_ON:
        with config_module.explicit_transfers():     # (reads the transfer guard allows)
            return tree_map(get, x)
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


def named_scope(name):
    """jax.named_scope: while a netcl.profiler trace is active the block is a span named
    `name` in it (around the spans of the operations inside); otherwise it only runs the
    block.

    >>> with netcl.named_scope("encoder"): y = layer(x)
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope: name must be a str, got {type(name).__name__}")
    return _profiler._span(name, "named_scope")


def named_call(fun, *, name=None):
    """jax.named_call: `fun`, each call a span named `name` (default: fun's name) while a
    netcl.profiler trace is active (see named_scope).

    >>> f = netcl.named_call(jnp.sin, name="sine")
    """
    if not callable(fun):
        raise TypeError(f"named_call: fun must be callable, got {type(fun).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str, got {type(name).__name__}")
    label = name or getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if _profiler._session is None:
            return fun(*args, **kwargs)
        with _profiler._span(label, "named_call"):
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
    return _backend_of(default_device())


def typeof(x):
    """The abstract value (shape, dtype, weak type) of an array or traced value, as
    jax.typeof.

    >>> netcl.typeof(jnp.ones(3))     # ShapedArray(float32[3])
    """
    if isinstance(x, (Array, Tracer, DistributedArray)):
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


def closure_convert(fun, *example_args):
    """(converted_fun, consts), as jax.closure_convert: `fun` traced on the types of
    `example_args`, with the traced values it closes over (arrays of an enclosing grad,
    jvp, vmap or jit that may carry a derivative: float tracers) hoisted out as `consts`;
    `converted_fun(*args, *consts)` computes `fun(*args)`. Concrete arrays it closes over
    stay inside. What custom_vjp/custom_jvp rules need to differentiate with respect to
    values a function argument closes over (a fixed-point solver, odeint).

    >>> def solve(f, x0):
    ...     converted, consts = netcl.closure_convert(f, x0)
    ...     return _solve(converted, x0, *consts)   # a custom_vjp taking consts explicitly
    """
    from .core.ir import eval_ir
    from .transforms.staging import stage
    if not callable(fun):
        raise TypeError(f"closure_convert: fun must be callable, got {type(fun).__name__}")
    flat, in_tree = tree_flatten(example_args)
    avals = tuple(_abstract(x, "closure_convert") for x in flat)
    ir, out_tree = stage(lambda *xs: fun(*tree_unflatten(in_tree, list(xs))), avals)
    hoist = [_maybe_perturbed(c) for c in ir.consts]
    kept = [c for c, h in zip(ir.consts, hoist) if not h]
    hoisted = [c for c, h in zip(ir.consts, hoist) if h]
    n_consts = len(hoisted)
    name = getattr(fun, "__name__", "fun")

    def converted_fun(*args_and_consts):
        if len(args_and_consts) < n_consts:
            raise TypeError(f"closure_convert({name}): the converted function takes the "
                            f"arguments and then {n_consts} hoisted constant(s), got "
                            f"{len(args_and_consts)} argument(s) in all")
        n_args = len(args_and_consts) - n_consts
        args, given = args_and_consts[:n_args], args_and_consts[n_args:]
        flat_args, tree = tree_flatten(tuple(args))
        if tree != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have "
                            "the same Pytree structure as the example arguments passed when "
                            f"closure_convert was called. Expected {in_tree}, but got {tree}")
        k, g = iter(kept), iter(given)
        consts = [next(g) if h else next(k) for h in hoist]
        return tree_unflatten(out_tree, eval_ir(ir, consts, flat_args))
    converted_fun.__name__ = "converted_fun"
    converted_fun.__qualname__ = f"closure_convert({name})"
    return converted_fun, hoisted


def _maybe_perturbed(x):
    """Whether `x` may carry a derivative (JAX's rule for what closure_convert hoists): a
    float value of grad or jvp, or of a trace being staged (differentiated later, maybe);
    a vmap value only where its batched value is one of those; never a concrete array."""
    from .transforms.batching import BatchTracer
    if not isinstance(x, Tracer):
        return False
    if not dtypes.is_inexact(np.dtype(x.dtype)):
        return False        # (an integer value has no tangent)
    if isinstance(x, BatchTracer):
        return _maybe_perturbed(x.val)
    return True             # (grad, jvp, staging, or a tracer we can't see into)


def live_arrays(platform=None):
    """Every live netcl array (not deleted) on the devices of `platform` ('cpu', 'gpu',
    ...; None: the default backend's), as jax.live_arrays. A sharded array counts once
    (its shards are not listed beside it). Found by walking the garbage collector's
    objects when called, so arrays carry no bookkeeping on the eager path; arrays held
    only by netcl's caches (a jitted function's constants) are live and listed too.

    >>> x = jnp.ones(3)
    >>> any(a is x for a in netcl.live_arrays())      # True
    """
    import gc
    if platform is not None and not isinstance(platform, str):
        raise TypeError(f"live_arrays: platform must be a str or None, got "
                        f"{type(platform).__name__}")
    from .core.devices import devices
    wanted = platform.lower() if platform is not None else default_backend()
    known = {_backend_of(d) for d in devices()}
    if wanted not in known and wanted not in ("cpu", "gpu", "tpu", "cuda", "rocm"):
        raise ValueError(f"live_arrays: unknown platform {platform!r}; this process has "
                         f"{sorted(known)}")
    wanted = "gpu" if wanted in ("cuda", "rocm") else wanted
    from .core.sharded import DistributedArray
    arrays, spread = [], []
    for obj in gc.get_objects():
        if type(obj) is Array:
            arrays.append(obj)
        elif isinstance(obj, DistributedArray):
            spread.append(obj)
    spread = [s for s in spread if not s.is_deleted()]
    blocks = {id(x) for s in spread for x in s._arrays()}
    out = [a for a in arrays if not a.deleted and id(a) not in blocks
           and _backend_of(a.device) == wanted]
    out += [s for s in spread if _backend_of(s._arrays()[0].device) == wanted]
    return out


def _backend_of(device):
    """The jax-style platform name of a netcl device ('cpu' for PoCL and the fallback)."""
    if device.is_numpy:
        return "cpu"
    return {"cpu": "cpu", "gpu": "gpu"}.get(device.kind, str(device.kind))
