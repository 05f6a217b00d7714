"""Array creation in netcl.numpy: array, asarray, zeros, ones, full, arange, linspace, eye..."""
import builtins
import operator

import numpy as np

from ..core import config as _config, dtypes
from ..core.array import Array
from ..core.devices import Device, default_device
from ..core.eval import to_array
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives.views import full as _full

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "linspace", "eye", "identity", "tri",
           "device_put", "copy"]


def _dtype(dtype, where):
    return None if dtype is None else dtypes.canonicalize(dtype, where=where)


def _int_arg(v, where, arg, minimum=None):
    """A Python int (or a TypeError/ValueError naming the function and argument)."""
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be an int, got {type(v).__name__} {v!r}") from None
    if minimum is not None and v < minimum:
        raise ValueError(f"{where}: {arg} must be >= {minimum}, got {v}")
    return v


def _number(v, where, arg):
    """A concrete number (a 0-d array is read back), or an error naming the argument."""
    if isinstance(v, (Array, Tracer)):
        if v.ndim:
            raise ValueError(f"{where}: {arg} must be a scalar, got an array of shape {v.shape}")
        return v.item()
    if isinstance(v, (bool, int, float, complex, np.number, np.bool_)):
        return v
    raise TypeError(f"{where}: {arg} must be a number, got {type(v).__name__} {v!r}")


def _check_device(device, where):
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"{where}: device must be a netcl Device, got {type(device).__name__}")
    return device or default_device()


def array(object, dtype=None, copy=True, device=None, *, order="K", ndmin=0):  # noqa: A002
    """Create an array on the default device (or `device`), with at least `ndmin`
    dimensions (ones prepended, as NumPy). `order` must be 'K' or None, as in JAX; `copy`
    is accepted (netcl arrays are immutable, so sharing one is as good as a copy).

    Python floats give the default float (float32, or float64 with x64, as in JAX); NumPy
    float64 arrays keep float64 with x64 where the device supports it. A Python int or float
    alone, without a dtype, gives a weakly typed array, as in JAX: `jnp.asarray(2.0) * x`
    keeps x's float dtype.

    >>> x = netcl.numpy.array([[1.0, 2.0], [3.0, 4.0]])
    """
    ndmin = _int_arg(ndmin, "array", "ndmin", 0)
    if order is not None and order != "K":
        raise NotImplementedError(f"array: only order='K' is implemented (as in JAX), got "
                                  f"{order!r}")
    if ndmin:
        out = array(object, dtype, copy, device)
        if out.ndim >= ndmin:
            return out
        from ..primitives.views import reshape
        return reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    dt = _dtype(dtype, "array")
    if isinstance(object, (Array, Tracer)):
        return object if dt is None else ew.convert_element_type(object, dt)
    dev = _check_device(device, "array")
    if isinstance(object, (list, tuple)) and any(isinstance(o, (Array, Tracer))
                                                 for o in _flat(object)):
        from .joining import stack
        return stack([array(o, dt, device=device) for o in object])
    host = np.asarray(object)
    if dtypes.kind(host.dtype) not in "biufcO":  # O: maybe a huge Python int (from_python says)
        raise TypeError(f"array: cannot make a numeric array from {type(object).__name__} "
                        f"(numpy sees dtype {host.dtype})")
    # Python floats give the default float; Python ints that would wrap raise OverflowError
    host = dtypes.from_python(object, host, dt, where="array")
    if host.dtype in (dtypes.float64, dtypes.complex128) and not dev.capabilities.fp64:
        raise TypeError(f"array: {host.dtype} requested but {dev.name} has no fp64 support")
    if _config.GUARD_ON and type(object) not in (bool, int, float, complex):
        _config.check_transfer("host_to_device", False, lambda: (
            f"netcl.numpy.array: {host.dtype}{list(host.shape)} to {dev.name}"))
    return Array.from_numpy(dev, host, dt is None and type(object) in (int, float, complex))


def _flat(obj):
    for o in obj:
        if isinstance(o, (list, tuple)):
            yield from _flat(o)
        else:
            yield o


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """Like `array`, but returns netcl arrays of the right dtype unchanged. `order` and
    `copy` as JAX's: order 'K' or None; copy=False is fine on the host-memory devices and
    otherwise copies as needed (netcl arrays are immutable).

    >>> jnp.asarray([1.0, 2.0], copy=True)
    """
    if order is not None and order != "K":
        raise NotImplementedError(f"asarray: only order='K' is implemented (as in JAX), got "
                                  f"{order!r}")
    if isinstance(a, (Array, Tracer)) and (dtype is None or
                                           _dtype(dtype, "asarray") == a.dtype):
        return a
    return array(a, dtype, device=device)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Copy an array (or a pytree of arrays) to `device` (default: the default device), or
    into blocks on the devices of a sharding (`NamedSharding(mesh, spec)`: a GlobalArray).
    `device` may be a pytree prefix of `x` (a device or sharding per subtree).

    >>> netcl.device_put(x, NamedSharding(mesh, P("batch")))
    """
    from ..sharding import Sharding, expand_prefix
    from ..tree_util import tree_flatten, tree_unflatten
    from ..core.global_array import put as put_sharded

    def target(d):
        if d is None or isinstance(d, (Device, Sharding)):
            return _check_device(d, "device_put") if not isinstance(d, Sharding) else d
        raise TypeError(f"device_put: device must be a netcl Device or a Sharding, got "
                        f"{type(d).__name__}")

    def put(leaf, dev):
        if isinstance(dev, Sharding):
            return put_sharded(leaf, dev)
        if isinstance(leaf, Array):
            if leaf.device is dev:
                return leaf._check_live("device_put")
            return Array.from_numpy(dev, leaf._to_host("device_put"), leaf.weak_type)
        if isinstance(leaf, Tracer):
            return leaf
        return to_array(leaf, "device_put", dev)

    leaves, tree = tree_flatten(x)
    if device is None or isinstance(device, (Device, Sharding)):
        targets = [target(device)] * len(leaves)
    else:
        devs = expand_prefix(device, x, lambda d: d is None or isinstance(d, (Device, Sharding)),
                             "device_put", "device")
        targets = [target(d) for d in devs]
    return tree_unflatten(tree, [put(leaf, d) for leaf, d in zip(leaves, targets)])


def full(shape, fill_value, dtype=None, device=None):
    """An array of `shape` filled with `fill_value`. Without a dtype, a Python int or float
    gives the default int or float, weakly typed (as in JAX: `jnp.full(3, 1.5) * x` keeps
    x's float dtype).

    >>> netcl.numpy.full((2, 3), 7.0)
    """
    dt = _dtype(dtype, "full")
    if isinstance(fill_value, (Array, Tracer)):
        return _full(shape, fill_value, dt or fill_value.dtype)
    if dt is None and isinstance(fill_value, (bool, int, float)):
        dt = dtypes.scalar_dtype(fill_value, "full")   # OverflowError beyond int32
    elif dt is None:
        dt = dtypes.canonicalize_data(np.asarray(fill_value).dtype, where="full")
    _check_device(device, "full")
    # A materialised copy, not a broadcast view: users expect full() to own its memory.
    out = ew.copy(_full(shape, fill_value, dt, device=device))
    if dtype is None and type(fill_value) in (int, float):
        return ew.convert_element_type(out, dt, True)   # (only the flag: a view)
    return out


def zeros(shape, dtype=None, device=None):
    """An array of zeros (of the default float unless dtype is given: float32, or float64
    with x64)."""
    return full(shape, 0, _dtype(dtype, "zeros") or dtypes.default_float_dtype(), device)


def ones(shape, dtype=None, device=None):
    """An array of ones (of the default float unless dtype is given: float32, or float64
    with x64)."""
    return full(shape, 1, _dtype(dtype, "ones") or dtypes.default_float_dtype(), device)


def empty(shape, dtype=None, device=None):
    """Like zeros (netcl arrays are never left uninitialised)."""
    return zeros(shape, dtype, device)


def _like_dtype(a, dtype):
    return _dtype(dtype, "like") or a.dtype


def zeros_like(a, dtype=None, shape=None):
    a = asarray(a)
    return full(a.shape if shape is None else shape, 0, _like_dtype(a, dtype))


def ones_like(a, dtype=None, shape=None):
    a = asarray(a)
    return full(a.shape if shape is None else shape, 1, _like_dtype(a, dtype))


def full_like(a, fill_value, dtype=None, shape=None):
    a = asarray(a)
    return full(a.shape if shape is None else shape, fill_value, _like_dtype(a, dtype))


def empty_like(a, dtype=None, shape=None):
    return zeros_like(a, dtype, shape)


def copy(a):
    """A copy of `a` in a fresh buffer."""
    return ew.copy(asarray(a))


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in [start, stop), like numpy.arange: of the default int when
    start, stop and step are ints, else of the default float (float64 with x64).

    >>> netcl.numpy.arange(5)       # int32 [0 1 2 3 4]
    """
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, (Array, Tracer)):
            raise TypeError(f"arange: {name} must be a concrete Python number, got an array "
                            "(under jit, make it a static argument)")
        if (v is not None or name == "start") and \
                not isinstance(v, (bool, int, float, np.number, np.bool_)):
            raise TypeError(f"arange: {name} must be a number, got {type(v).__name__} {v!r}")
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("arange: step must not be zero")
    dt = _dtype(dtype, "arange")
    if dt is None:
        dt = dtypes.default_int_dtype() if all(isinstance(v, (int, np.integer))
                                               for v in (start, stop, step)) \
            else dtypes.default_float_dtype()
    n = builtins.max(0, int(np.ceil((stop - start) / step)))
    if dt.kind in "iu" and n:  # every value must fit: int32 arithmetic would wrap past the end
        step = step if n > 1 else 1
        for v in (start, start + (n - 1) * step):
            dtypes.check_int(int(v), dt, where="arange")
    from ..primitives.structural import iota
    idx = iota(dt if dt.kind != "b" else dtypes.int32, n)
    if (start == 0 and step == 1) or n == 0:
        return idx
    from .math import add, multiply
    return add(multiply(idx, np.asarray(step, dt)[()].item()), np.asarray(start, dt)[()].item()) \
        if dtypes.kind(dt) != "f" else add(multiply(idx, float(step)), float(start))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """`num` evenly spaced samples from start to stop, of the default float (float64 with
    x64) unless dtype is given; an integer dtype takes samples computed in the default
    float. Array start/stop (broadcast together) give one sequence per element, laid along
    `axis`; retstep=True returns (samples, step) as JAX does.

    >>> jnp.linspace(0.0, 1.0, 5, retstep=True)        # ([0., .25, .5, .75, 1.], 0.25)
    >>> jnp.linspace(jnp.zeros(2), jnp.ones(2), 3, axis=1).shape    # (2, 3)
    """
    num = _int_arg(num, "linspace", "num", 0)
    axis = _int_arg(axis, "linspace", "axis")
    scalar = all(isinstance(v, (bool, int, float, np.number)) or
                 (isinstance(v, np.ndarray) and v.ndim == 0) for v in (start, stop))
    if not scalar:
        return _linspace_arrays(start, stop, num, endpoint, retstep, dtype, axis)
    if axis not in (0, -1):
        raise ValueError(f"linspace: axis {axis} is out of range for scalar start and stop "
                         "(a 1-d result)")
    start, stop = _number(start, "linspace", "start"), _number(stop, "linspace", "stop")
    dt = _dtype(dtype, "linspace") or dtypes.default_float_dtype()
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    from ..primitives.structural import iota
    from .math import add, multiply
    idx = iota(dtypes.default_float_dtype() if dtypes.kind(dt) != "f" else dt, num)
    out = add(multiply(idx, float(step)), float(start))
    if endpoint and num > 1:
        from .joining import concatenate
        from ..primitives.views import slice as lax_slice
        out = concatenate([lax_slice(out, (0,), (num - 1,)), array([stop], out.dtype)])
    out = out if out.dtype == dt else ew.convert_element_type(out, dt)
    if not retstep:
        return out
    # (JAX's step: NaN for one sample with the endpoint, and for none)
    delta = step if div > 0 else (float("nan") if endpoint or num == 0 else stop - start)
    return out, array(delta, _inexact(dt))


def _inexact(dt):
    """JAX's to_inexact_dtype: 64-bit integers to float64, other integers and bool to
    float32."""
    if dtypes.kind(dt) in "fc":
        return dt
    return dtypes.float64 if np.dtype(dt).itemsize == 8 else dtypes.float32


def _linspace_arrays(start, stop, num, endpoint, retstep, dtype, axis):
    """linspace for array (or traced) bounds, as JAX computes it: start * (1 - t) + stop * t
    with t = i / div, the stop appended when endpoint."""
    from .joining import concatenate
    from .manipulation import expand_dims, moveaxis
    from .math import add, floor, multiply, subtract, true_divide
    from ._util import promote_broadcast
    start, stop = (asarray(v) if not isinstance(v, (Array, Tracer)) else v
                   for v in (start, stop))
    start, stop = promote_broadcast("linspace", start, stop)
    dt = _dtype(dtype, "linspace")
    if dt is None:
        dt = _inexact(start.dtype)
    ct = _inexact(dt)
    start, stop = (ew.convert_element_type(v, ct) if v.dtype != ct else v for v in (start, stop))
    rank = start.ndim + 1
    if not -rank <= axis < rank:
        raise ValueError(f"linspace: axis {axis} is out of range for bounds of shape "
                         f"{tuple(start.shape)} (result rank {rank})")
    div = (num - 1) if endpoint else num
    s0, s1 = expand_dims(start, -1), expand_dims(stop, -1)
    if num > 1:
        t = true_divide(arange(div, dtype=ct), div)
        out = add(multiply(s0, subtract(1.0, t)), multiply(s1, t))
        if endpoint:
            out = concatenate([out, s1], axis=-1)
        delta = true_divide(subtract(stop, start), div)
    else:
        out = s0 if num == 1 else zeros(tuple(start.shape) + (0,), ct)
        delta = (subtract(stop, start) if num == 1 and not endpoint else
                 full(start.shape, float("nan"), ct))
    if dtypes.kind(dt) in "iu" and dtypes.kind(ct) == "f":
        out = floor(out)
    out = moveaxis(out, -1, axis)
    out = out if out.dtype == dt else ew.convert_element_type(out, dt)
    return (out, delta) if retstep else out


def eye(N, M=None, k=0, dtype=None):
    """A 2-d array with ones on the k-th diagonal (of the default float unless dtype is
    given)."""
    N = _int_arg(N, "eye", "N", 0)
    M = N if M is None else _int_arg(M, "eye", "M", 0)
    k = _int_arg(k, "eye", "k")
    return _diagonal_mask(N, M, k, _dtype(dtype, "eye"))


def _diagonal_mask(N, M, k, dt):
    from ..primitives.structural import iota
    from ..primitives.views import broadcast_in_dim
    from .math import add, equal
    rows = broadcast_in_dim(iota(dtypes.int32, N), (N, M), (0,))
    cols = broadcast_in_dim(iota(dtypes.int32, M), (N, M), (1,))
    return ew.convert_element_type(equal(add(rows, k), cols), dt or dtypes.default_float_dtype())


def identity(n, dtype=None):
    return eye(_int_arg(n, "identity", "n", 0), dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Lower-triangular ones: 1 where column <= row + k; the default float unless dtype is
    given (float64 with x64, as jnp.tri since JAX 0.11; 0.10 gave float32)."""
    N = _int_arg(N, "tri", "N", 0)
    M = N if M is None else _int_arg(M, "tri", "M", 0)
    k = _int_arg(k, "tri", "k")
    from ..primitives.structural import iota
    from .math import greater_equal, add
    from ..primitives.views import broadcast_in_dim
    rows = broadcast_in_dim(iota(dtypes.int32, N), (N, M), (0,))
    cols = broadcast_in_dim(iota(dtypes.int32, M), (N, M), (1,))
    mask = greater_equal(add(rows, k), cols)
    return ew.convert_element_type(mask, _dtype(dtype, "tri") or dtypes.default_float_dtype())

