"""netcl.scipy.ndimage: jax.scipy.ndimage's map_coordinates (nearest and linear
interpolation), composed from netcl operations (gathers and weighted sums), so grad (with
respect to the input and, for order 1, the coordinates), jit and vmap go through it.

Boundary modes are JAX's, which follow scipy's documentation rather than its old
implementation: 'constant' (cval outside; scipy's 'grid-constant'), 'nearest' (the edge
value), 'wrap' (periodic; scipy's 'grid-wrap'), 'mirror' (reflection about the edge
samples: ... 2 1 | 0 1 2 ... n-1 | n-2 ...) and 'reflect' (reflection about the edges
themselves: ... 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...).

>>> import netcl.scipy.ndimage as ndi
>>> ndi.map_coordinates(jnp.arange(12.0).reshape(3, 4),
...                     [jnp.array([0.5, 1.5]), jnp.array([1.5, 2.5])], order=1)
Array([3.5, 8.5], dtype=float32)
"""
import functools
import itertools
import operator

from ..core import dtypes
from ..numpy._errors import public

__all__ = ["map_coordinates"]


def _jnp():
    from .. import numpy as jnp
    return jnp


def _mirror(index, size):
    # the triangular wave |x - round(x)| with half-period size - 1, in integers
    jnp = _jnp()
    s = size - 1
    return jnp.abs((index + s) % (2 * s) - s) if s > 0 else jnp.zeros_like(index)


def _reflect(index, size):
    return _jnp().floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: _jnp().clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x):
    from .. import lax
    return lax.round(x)     # (lax.round's default: halves away from zero, as JAX's)


def _nearest(coordinate):
    """[(index, weight)]: the nearest sample, halves rounded away from zero (as JAX's)."""
    jnp = _jnp()
    if dtypes.kind(coordinate.dtype) in "biu":
        return [(coordinate.astype(jnp.int32), None)]
    return [(_round_half_away(coordinate).astype(jnp.int32), None)]


def _linear(coordinate):
    """[(index, weight)] of the two neighbouring samples."""
    jnp = _jnp()
    if dtypes.kind(coordinate.dtype) in "biu":    # (integer points: weights exactly 1, 0)
        coordinate = coordinate.astype(dtypes.default_float_dtype())
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(jnp.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002
    """The values of `input` (an n-dimensional array) at the points `coordinates` (a
    sequence of n arrays of one shape, the points' index along each axis), interpolated with
    order 0 (nearest sample) or 1 (linear); points outside take `mode`'s value (see the
    module docstring; cval for 'constant'). The result has the coordinates' shape and
    input's dtype (integer inputs rounded, halves away from zero, as JAX's).

    >>> map_coordinates(jnp.array([1.0, 2.0, 4.0]), [jnp.array([0.5, 3.0])], order=1)
    Array([1.5, 0. ], dtype=float32)
    """
    where = "scipy.ndimage.map_coordinates"
    from ..numpy._util import asarray_arg
    jnp = _jnp()
    # (array-likes as JAX's jnp.asarray takes them: lists too)
    x = jnp.asarray(input) if isinstance(input, (list, tuple)) else asarray_arg(input, where)
    if isinstance(coordinates, (str, bytes)) or not hasattr(coordinates, "__len__") or \
            hasattr(coordinates, "dtype") and getattr(coordinates, "ndim", 1) == 0:
        raise TypeError(f"{where}: coordinates must be a sequence of input.ndim arrays, got "
                        f"{type(coordinates).__name__}")
    coords = [jnp.asarray(c) if isinstance(c, (list, tuple)) else asarray_arg(c, where)
              for c in coordinates]
    if len(coords) != x.ndim:
        raise ValueError(f"{where}: coordinates must be a sequence of length input.ndim, but "
                         f"{len(coords)} != {x.ndim} (input of shape {tuple(x.shape)})")
    for i, c in enumerate(coords):
        if dtypes.kind(c.dtype) not in "biuf":
            raise TypeError(f"{where}: coordinates[{i}] must be real, got dtype {c.dtype}")
    shapes = {tuple(c.shape) for c in coords}
    if len(shapes) > 1:
        raise ValueError(f"{where}: the coordinate arrays must have one shape, got shapes "
                         f"{[tuple(c.shape) for c in coords]}")
    if isinstance(order, bool) or order not in (0, 1):
        raise NotImplementedError(f"{where}: order must be 0 (nearest) or 1 (linear), got "
                                  f"{order!r} (higher orders are not implemented, as in JAX)")
    fixer = _INDEX_FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(f"{where}: mode {mode!r} is not supported; supported modes "
                                  f"are {sorted(_INDEX_FIXERS)}")
    if any(d == 0 for d in x.shape):
        raise ValueError(f"{where}: input of shape {tuple(x.shape)} has no samples")
    cval = jnp.asarray(cval, dtype=x.dtype)
    interp = _nearest if order == 0 else _linear
    per_axis = []
    for c, size in zip(coords, x.shape):
        nodes = []
        for index, weight in interp(c):
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            # (the valid index itself; an invalid one clipped to any sample, then replaced)
            fixed = jnp.clip(fixer(index, size), 0, size - 1)
            nodes.append((fixed, valid, weight))
        per_axis.append(nodes)
    outputs = []
    for items in itertools.product(*per_axis):
        indices, valids, weights = zip(*items)
        value = x[tuple(indices)]
        valids = [v for v in valids if v is not None]
        if valids:
            value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
        weights = [w for w in weights if w is not None]
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        outputs.append(value)
    result = functools.reduce(operator.add, outputs)
    if dtypes.kind(x.dtype) in "iub":
        result = _round_half_away(result) if dtypes.kind(result.dtype) == "f" else result
    return result.astype(x.dtype)


map_coordinates = public(map_coordinates, "scipy.ndimage.map_coordinates")
map_coordinates.__module__ = __name__
map_coordinates.__qualname__ = map_coordinates.__name__ = "map_coordinates"
