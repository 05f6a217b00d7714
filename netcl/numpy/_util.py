"""Argument handling shared by netcl.numpy: conversion, promotion and broadcasting."""
import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.devices import default_device
from ..core.eval import scalar_constant, to_array
from ..core.shapes import broadcast_shapes
from ..core.eval import eval_interpreter
from ..core.tracing import Tracer, current_interpreter
from ..primitives.elementwise import convert_element_type
from ..primitives.views import broadcast_to_rank


def is_array(x):
    return isinstance(x, (Array, Tracer))


def asarray_arg(x, where):
    """An Array or Tracer for x (Python scalars become weakly typed 0-d arrays)."""
    if isinstance(x, (Array, Tracer)):
        return x
    return to_array(x, where)


class _WeakScalar:
    """Stands for a Python scalar in type promotion (weakly typed)."""
    __slots__ = ("dtype",)
    weak_type = True

    def __init__(self, dtype):
        self.dtype = dtype


_PY_SCALARS = {bool: _WeakScalar(dtypes.bool_), int: _WeakScalar(dtypes.int32),
               float: _WeakScalar(dtypes.float32)}


def promote(where, *args):
    """Convert args to arrays of one dtype (JAX promotion), not yet broadcast.

    Python scalars become constants of the promoted dtype directly (no cast op), which
    keeps `x * 2.0` to one kernel and a dictionary lookup in eager mode.
    """
    xs = [a if type(a) in _PY_SCALARS else asarray_arg(a, where) for a in args]
    dtype, weak = dtypes.result_type(*[_PY_SCALARS.get(type(x), x) for x in xs])
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
            out.append(convert_element_type(x, dtype, weak))
    return out


def _scalar(value, dtype, weak, device, where):
    try:
        return scalar_constant(np.asarray(value, dtype=dtype).item(), dtype, device, weak)
    except OverflowError:
        raise ValueError(f"{where}: Python scalar {value!r} does not fit in {dtype}") from None


def promote_broadcast(where, *args):
    """Promote, then broadcast to the common shape (NumPy rules)."""
    xs = promote(where, *args)
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


def promote_to_float(where, *args):
    """Promote; integer and bool results become the default float (as jnp.sin(int) does)."""
    xs = promote_broadcast(where, *args)
    if xs and xs[0].dtype.kind != "f":
        xs = [convert_element_type(x, dtypes.DEFAULT_FLOAT, x.weak_type) for x in xs]
    return xs
