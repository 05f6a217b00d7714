"""Argument handling shared by netcl.numpy: conversion, promotion and broadcasting."""
import numpy as np

from ..core import dtypes
from ..core.config import config
from ..core.array import Array
from ..core.devices import default_device
from ..core.eval import scalar_constant, to_array
from ..core.shapes import broadcast_shapes
from ..core.eval import eval_interpreter
from ..core.tracing import Tracer, current_interpreter
from ..primitives.elementwise import convert_element_type
from ..primitives.views import broadcast_to_rank
from . import _promotion_modes


def is_array(x):
    return isinstance(x, (Array, Tracer))


def asarray_arg(x, where):
    """An Array or Tracer for x (Python scalars become weakly typed 0-d arrays; lists and
    tuples are refused, as JAX refuses them: jnp.array(x) says what they mean)."""
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{where} requires ndarray or scalar arguments, got {type(x)}; "
                        "convert it with netcl.numpy.array first")
    return to_array(x, where)


class _WeakScalar:
    """Stands for a Python scalar in type promotion (weakly typed)."""
    __slots__ = ("dtype",)
    weak_type = True

    def __init__(self, dtype):
        self.dtype = dtype


class _StrongDtype:
    """Stands for a dtype named in type promotion (jnp.result_type(jnp.float32, x))."""
    __slots__ = ("dtype",)
    weak_type = False

    def __init__(self, dtype):
        self.dtype = dtype


def promotion_operand(x, where):
    """What `x` counts as in JAX's type promotion (an object with .dtype and .weak_type):
    arrays as they are; Python scalars and Python's int and float types weakly typed, of the
    default int or float (`result_type(jnp.float32, float)` is float32 also with x64);
    other dtypes (names, NumPy dtypes, jnp.float32, bool) strongly typed."""
    if isinstance(x, (Array, Tracer)):
        return x
    scalars = _py_scalars()
    if type(x) in scalars:
        return scalars[type(x)]
    if x is int or x is float or x is complex:
        return scalars[x]
    if isinstance(x, (str, type, np.dtype)) or hasattr(x, "dtype") and \
            not isinstance(x, (np.ndarray, np.generic)):
        try:
            return _StrongDtype(dtypes.canonicalize(getattr(x, "dtype", x), where=where))
        except TypeError:
            pass
    return asarray_arg(x, where)


# Python scalar types and the weak dtypes they promote as: an int is int32 and a float
# float32, or int64 and float64 with x64 (`_py_scalars` picks the table at each call; its
# keys are the same either way).
_PY_SCALARS = {bool: _WeakScalar(dtypes.bool_), int: _WeakScalar(dtypes.int32),
               float: _WeakScalar(dtypes.float32), complex: _WeakScalar(dtypes.complex64)}
_PY_SCALARS_X64 = {**_PY_SCALARS, int: _WeakScalar(dtypes.int64),
                   float: _WeakScalar(dtypes.float64), complex: _WeakScalar(dtypes.complex128)}


def _py_scalars():
    """The Python scalar table for the current x64 setting."""
    return _PY_SCALARS_X64 if dtypes.default_float_dtype() == dtypes.float64 else _PY_SCALARS


def promote(where, *args, kinds=None, broadcast=False, check=None):
    """Convert args to arrays of one dtype (JAX promotion), not yet broadcast.

    Python scalars become constants of the promoted dtype directly (no cast op), which
    keeps `x * 2.0` to one kernel and a dictionary lookup in eager mode. Everything is
    checked before any conversion runs: the promoted dtype's kind is one of `kinds` (a
    string of dtype kinds, "fiub"), with broadcast=True the shapes broadcast together, and
    `check(*shapes)` (Python scalars have shape ()) raises for shapes the caller rejects.
    """
    scalars = _py_scalars()
    xs = [a if type(a) in scalars else asarray_arg(a, where) for a in args]
    if config.numpy_dtype_promotion == "strict" and len(xs) > 1:
        _promotion_modes.check_dtypes(where, [scalars.get(type(x), x) for x in xs])
    dtype, weak = dtypes.result_type(*[scalars.get(type(x), x) for x in xs])
    if kinds is not None and dtypes.kind(dtype) not in kinds:
        raise TypeError(f"{where}: operands of dtype "
                        f"{', '.join(str(scalars.get(type(x), x).dtype) for x in xs)} "
                        f"promote to {dtype}, which is not supported here")
    if check is not None:
        check(*[() if type(x) in _PY_SCALARS else tuple(x.shape) for x in xs])
    device = None
    out = []
    for x in xs:
        if type(x) in _PY_SCALARS:
            if device is None:
                device = next((a.device for a in xs if isinstance(a, Array)), None) or \
                    default_device()
            out.append(_scalar(x, dtype, weak, device, where))
        elif x.dtype == dtype and x.weak_type == weak:
            out.append(x)
        else:
            if broadcast:  # before the first conversion kernel (else promote_broadcast's)
                broadcast_shapes(*(a.shape for a in xs if type(a) not in _PY_SCALARS),
                                 where=where)
                broadcast = False
            out.append(convert_element_type(x, dtype, weak))
    return out


def _scalar(value, dtype, weak, device, where):
    if type(value) is int:  # OverflowError where it would wrap (uints also take signed ones)
        dtypes.check_int(value, dtype, where=where, weak=True)
    if dtype.kind == "u" and type(value) is int and value < 0:
        value += 2 ** (8 * dtype.itemsize)   # modulo 2**32 (2**64), as JAX converts a weak int
    return scalar_constant(np.asarray(value, dtype=dtype).item(), dtype, device, weak)


def promote_broadcast(where, *args, kinds=None):
    """Promote, then broadcast to the common shape (NumPy rules); shapes and `kinds` (see
    `promote`) are checked before anything runs."""
    xs = promote(where, *args, kinds=kinds, broadcast=len(args) > 1)
    if config.numpy_rank_promotion != "allow":
        _promotion_modes.check_ranks(where, [x.shape for x in xs])
    shape = broadcast_shapes(*(x.shape for x in xs), where=where)
    if current_interpreter() is eval_interpreter:  # eager: scalars as cached broadcast views
        return [_broadcast_constant(x, shape) if type(a) in _PY_SCALARS and shape else
                broadcast_to_rank(x, shape) for a, x in zip(args, xs)]
    return [broadcast_to_rank(x, shape) for x in xs]


_broadcasts = {}


def _broadcast_constant(c, shape):
    """A Python scalar's constant broadcast to `shape` (immutable, so it can be reused)."""
    key = (id(c), shape)
    hit = _broadcasts.get(key)
    if hit is None or hit[0] is not c:
        if len(_broadcasts) > 4096:
            _broadcasts.clear()
        hit = _broadcasts[key] = (c, broadcast_to_rank(c, shape))
    return hit[1]


def promote_to_float(where, *args, kinds=None):
    """Promote; integer and bool results become floats as jnp.sin(int) does
    (`dtypes.inexact_dtype`: float32 for int32 arrays, the default float for Python ints)."""
    xs = promote_broadcast(where, *args, kinds=kinds)
    if xs and dtypes.kind(xs[0].dtype) != "f":
        dt = dtypes.inexact_dtype(xs[0].dtype, xs[0].weak_type)
        xs = [convert_element_type(x, dt, x.weak_type) for x in xs]
    return xs
