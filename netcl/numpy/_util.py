"""Argument handling shared by netcl.numpy: conversion, promotion and broadcasting."""
from ..core import dtypes
from ..core.array import Array
from ..core.eval import to_array
from ..core.shapes import broadcast_shapes
from ..core.tracing import Tracer
from ..primitives.elementwise import convert_element_type
from ..primitives.views import broadcast_to_rank


def is_array(x):
    return isinstance(x, (Array, Tracer))


def asarray_arg(x, where):
    """An Array or Tracer for x (Python scalars become weakly typed 0-d arrays)."""
    if isinstance(x, (Array, Tracer)):
        return x
    return to_array(x, where)


def promote(where, *args):
    """Convert args to arrays of one dtype (JAX promotion), not yet broadcast."""
    xs = [asarray_arg(a, where) for a in args]
    dtype, weak = dtypes.result_type(*xs)
    return [x if (x.dtype == dtype and x.weak_type == weak) else
            convert_element_type(x, dtype, weak) for x in xs]


def promote_broadcast(where, *args):
    """Promote, then broadcast to the common shape (NumPy rules)."""
    xs = promote(where, *args)
    shape = broadcast_shapes(*(x.shape for x in xs), where=where)
    return [broadcast_to_rank(x, shape) for x in xs]


def promote_to_float(where, *args):
    """Promote; integer and bool results become the default float (as jnp.sin(int) does)."""
    xs = promote_broadcast(where, *args)
    if xs and xs[0].dtype.kind != "f":
        xs = [convert_element_type(x, dtypes.DEFAULT_FLOAT, x.weak_type) for x in xs]
    return xs
