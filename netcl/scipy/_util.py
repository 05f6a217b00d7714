"""Argument checks and promotion shared by netcl.scipy.special and netcl.scipy.stats.

Every public function checks its arguments here before anything runs on the device, so that
a bad call fails with a TypeError/ValueError naming the function and the argument (not with
an error from deep inside the composition, or after half of its kernels have run).

Arguments are promoted as jax.scipy promotes them (`promote_args_inexact`): integers and
bools become the default float, all arguments take one dtype and broadcast together.
The 16- and 8-bit floats are computed in float32 and rounded back at the end (the approximations'
constants and ranges are float32's and float64's).
"""
import numpy as np

from ..core import dtypes
from ..core.shapes import IncompatibleShapesError, normalize_axes
from ..numpy._errors import public
from ..numpy._util import promote, promote_to_float
from ..primitives.elementwise import convert_element_type

_PY_SCALARS = (bool, int, float)


def shape_dtype(where, name, v, /):
    """(shape, dtype or None for a Python scalar) of argument `name`, or a TypeError."""
    if type(v) in _PY_SCALARS:
        return (), None
    if isinstance(v, (list, tuple)):
        raise TypeError(f"{where}: argument {name!r} must be an array or a scalar, got "
                        f"{type(v).__name__}; convert it with netcl.numpy.array first")
    if isinstance(v, (str, bytes)) or not (hasattr(v, "shape") and hasattr(v, "dtype")):
        raise TypeError(f"{where}: argument {name!r} must be a real array or a real scalar, "
                        f"got {type(v).__name__}")
    try:
        dt = np.dtype(v.dtype)
    except TypeError:
        dt = None
    if dt is None or dtypes.kind(dt) not in "biuf":
        raise TypeError(f"{where}: argument {name!r} must have a real (bool, integer or "
                        f"float) dtype, got {v.dtype}")
    return tuple(v.shape), dt


def check(where, /, **named):
    """Check each argument's type and dtype, and that their shapes broadcast together."""
    shapes = {n: shape_dtype(where, n, v)[0] for n, v in named.items()}
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{n} {s}" for n, s in shapes.items())
        raise IncompatibleShapesError(f"{where}: shapes do not broadcast together: "
                                      f"{listed}") from None
    return shapes


def floats(where, /, broadcast=True, **named):
    """The arguments checked (see `check`), promoted to one float dtype and (unless
    broadcast=False) broadcast to their common shape; also the dtype to return (float16 is
    computed in float32).

    >>> (x, loc), out_dtype = floats("norm.cdf", x=x, loc=0.0)
    """
    if broadcast:
        check(where, **named)
        xs = promote_to_float(where, *named.values())
    else:
        for n, v in named.items():
            shape_dtype(where, n, v)
        xs = promote(where, *named.values())
        if dtypes.kind(xs[0].dtype) != "f":
            dt = dtypes.inexact_dtype(xs[0].dtype, xs[0].weak_type)
            xs = [convert_element_type(x, dt, x.weak_type) for x in xs]
    out_dtype = xs[0].dtype
    if out_dtype in dtypes.STORAGE_FLOATS:
        xs = [convert_element_type(x, dtypes.float32, x.weak_type) for x in xs]
    return xs, out_dtype


def finish(out, dtype):
    """`out` in the caller's dtype (16-bit float inputs were computed in float32)."""
    if out.dtype != dtype:
        return convert_element_type(out, dtype, out.weak_type)
    return out


def check_bool(where, name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be a bool, got {type(v).__name__}")
    return bool(v)


def check_int(where, name, v, lo=None, hi=None):
    """A Python int argument (not a bool, not an array: it changes the program's shape)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{where}: {name} must be a Python int, got {type(v).__name__}")
    v = int(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise ValueError(f"{where}: {name} must be {rng}, got {v}")
    return v


def check_axis(where, axis, ndim):
    if axis is not None and not isinstance(axis, (int, np.integer, tuple, list)) or \
            isinstance(axis, bool):
        raise TypeError(f"{where}: axis must be None, an int or a tuple of ints, got "
                        f"{type(axis).__name__}")
    if isinstance(axis, (tuple, list)) and any(
            isinstance(a, bool) or not isinstance(a, (int, np.integer)) for a in axis):
        raise TypeError(f"{where}: axis must be None, an int or a tuple of ints, got {axis!r}")
    ax = axis if axis is None or isinstance(axis, (tuple, list)) else int(axis)
    return normalize_axes(ax, ndim, where)


def export(namespace, prefix, names):
    """Wrap the public functions of a stats module so that escaping errors name them as
    `prefix.name` (``norm.cdf``), the way they are called."""
    for n in names:
        f = namespace[n]
        w = namespace[n] = public(f, f"{prefix}.{n}" if prefix else n)
        w.__module__, w.__qualname__, w.__name__ = namespace["__name__"], n, n
