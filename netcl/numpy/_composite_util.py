"""Helpers shared by composites.py, polynomials.py and searching.py: concrete argument
checks (each error names the function and the argument), dtype promotion without
broadcasting, and slices along one axis (views when eager)."""
import operator

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives import views
from ._util import asarray_arg, promote

PY_SCALAR = (bool, int, float)


def int_arg(v, where, arg, minimum=None):
    """A concrete Python int, or a TypeError/ValueError naming the function and argument."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {arg} must be an int, got bool {v!r}")
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a concrete int, got {type(v).__name__} "
                        f"{v!r}") from None
    if minimum is not None and v < minimum:
        raise ValueError(f"{where}: {arg} must be >= {minimum}, got {v}")
    return v


def bool_arg(v, where, arg):
    """A concrete Python bool (traced values are refused: they choose the program)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)) and v in (0, 1):
        return bool(v)
    raise TypeError(f"{where}: {arg} must be a Python bool, got {type(v).__name__} {v!r}")


def is_array(x):
    return isinstance(x, (Array, Tracer))


def scalar_arg(v, where, arg):
    """A Python number (kept weakly typed) or a 0-d array; anything else is refused."""
    if type(v) in PY_SCALAR:
        return v
    if isinstance(v, (np.number, np.bool_)):
        return asarray_arg(v, where)
    if isinstance(v, (list, tuple)) or not (is_array(v) or isinstance(v, np.ndarray)):
        raise TypeError(f"{where}: {arg} must be a scalar (a number or a 0-d array), got "
                        f"{type(v).__name__}")
    v = asarray_arg(v, where)
    if v.ndim != 0:
        raise ValueError(f"{where}: {arg} must be a scalar, got an array of shape "
                         f"{tuple(v.shape)}")
    return v


def to_float(x):
    """x, or x converted to a float when it is bool or integer (`dtypes.inexact_dtype`:
    float32 for int32 arrays, the default float for Python ints)."""
    return x if dtypes.kind(x.dtype) == "f" else \
        ew.convert_element_type(x, dtypes.inexact_dtype(x.dtype, x.weak_type), x.weak_type)


def promote_inexact(where, *args):
    """Promote to one dtype (JAX's rules), then to float if that is bool or integer; shapes
    are left alone (jnp's promote_dtypes_inexact)."""
    xs = promote(where, *args)
    return [to_float(x) for x in xs]


def to_bool(x):
    return x if x.dtype == dtypes.bool_ else ew.ne(x, views.full_like(x, 0))


def slice_axis(x, start, stop, axis):
    """x[..., start:stop, ...] along `axis` (start and stop clamped into range; no negatives)."""
    n = x.shape[axis]
    start = min(max(start, 0), n)
    stop = min(max(stop, start), n)
    lo = [0] * x.ndim
    hi = list(x.shape)
    lo[axis], hi[axis] = start, stop
    return views.slice(x, tuple(lo), tuple(hi))


def index_axis(x, i, axis):
    """x[..., i, ...] along `axis` (i >= 0 in range): the axis dropped."""
    s = slice_axis(x, i, i + 1, axis)
    return views.reshape(s, tuple(d for k, d in enumerate(x.shape) if k != axis))


def isnan(x):
    return ew.ne(x, x)
