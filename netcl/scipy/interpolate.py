"""netcl.scipy.interpolate: jax.scipy.interpolate's RegularGridInterpolator (linear and
nearest interpolation on a rectilinear grid), composed from netcl operations (searchsorted,
gathers, weighted sums), so grad, jit and vmap go through it. It is a registered pytree (its
grid, values and fill_value are the leaves), so an interpolator can be passed into jit and
vmap, as JAX's can.

As JAX's: bounds_error=True is not implemented (it cannot raise under jit); points outside
the grid get fill_value (NaN by default; None extrapolates); each grid axis must be strictly
increasing (not checked: a decreasing axis gives wrong results, as in JAX).

>>> from netcl.scipy.interpolate import RegularGridInterpolator
>>> f = RegularGridInterpolator((jnp.array([1.0, 2.0, 3.0]), jnp.array([4.0, 5.0, 6.0])),
...                             jnp.array([[10., 20., 30.], [40., 50., 60.], [70., 80., 90.]]))
>>> f(jnp.array([[1.5, 4.5], [2.2, 5.8]]))
Array([30., 64.], dtype=float32)
"""
from itertools import product

import numpy as np

from ..core import dtypes
from ..numpy._util import asarray_arg
from ..tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_WHERE = "scipy.interpolate.RegularGridInterpolator"


def _jnp():
    from .. import numpy as jnp
    return jnp


def _arraylike(v, what):
    if isinstance(v, (list, tuple)):
        raise TypeError(f"{_WHERE}: {what} must be an array, got {type(v).__name__}; convert "
                        "it with netcl.numpy.array first")
    return asarray_arg(v, _WHERE)


def _ndim_coords_from_arrays(points, ndim):
    """Query points as one (..., ndim) array: a tuple of coordinate arrays (broadcast
    together, one per axis) or an array whose last axis holds the coordinates (a 1-D one is
    a list of points)."""
    jnp = _jnp()
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]      # (an argument tuple)
    if isinstance(points, tuple):
        arrays = jnp.broadcast_arrays(*[_arraylike(p, "xi") for p in points])
        dt = jnp.result_type(dtypes.default_float_dtype(), *arrays)
        return jnp.stack([a.astype(dt) for a in arrays], axis=-1)
    points = _arraylike(points, "xi")
    if points.ndim == 1:
        points = points.reshape(-1, ndim)
    return points


def _check_method(method):
    if not isinstance(method, str):
        raise TypeError(f"{_WHERE}: method must be 'linear' or 'nearest', got "
                        f"{type(method).__name__}")
    if method not in ("linear", "nearest"):
        raise ValueError(f"{_WHERE}: method {method!r} is not defined; expected 'linear' or "
                         "'nearest'")


class RegularGridInterpolator:
    """Interpolate values given on a rectilinear grid (scipy's RegularGridInterpolator, as
    JAX's): points, a sequence of N strictly increasing 1-D arrays (the grid's coordinates
    along each axis); values, an array whose first N axes have their lengths (further axes
    are carried along); method 'linear' (default) or 'nearest'; fill_value for points
    outside the grid (NaN; None to extrapolate linearly). Calling it with query points xi
    (..., N) returns (...,) + values.shape[N:].

    >>> f = RegularGridInterpolator((jnp.linspace(0.0, 1.0, 5),), jnp.linspace(0.0, 2.0, 5))
    >>> f(jnp.array([[0.3]]))                           # [0.6]
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        _check_method(method)
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError(f"{_WHERE}: bounds_error=True is not implemented (it "
                                      "cannot raise under jit, as in JAX)")
        values = _arraylike(values, "values")
        if isinstance(points, (str, bytes)) or not hasattr(points, "__len__"):
            raise TypeError(f"{_WHERE}: points must be a sequence of 1-D arrays, got "
                            f"{type(points).__name__}")
        if len(points) > values.ndim:
            raise ValueError(f"{_WHERE}: there are {len(points)} point arrays, but values has "
                             f"{values.ndim} dimensions (shape {tuple(values.shape)})")
        if dtypes.kind(values.dtype) not in "fc":
            values = values.astype(dtypes.inexact_dtype(values.dtype, values.weak_type))
        if fill_value is not None:
            fill_value = _jnp().asarray(fill_value) if not hasattr(fill_value, "dtype") \
                else fill_value
            if not _jnp().can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(f"{_WHERE}: fill_value must be None or of a dtype compatible "
                                 f"with values ({values.dtype}), got {fill_value.dtype}")
        self.fill_value = fill_value
        grid = tuple(_arraylike(p, f"points[{i}]") for i, p in enumerate(points))
        for i, (g, n) in enumerate(zip(grid, values.shape)):
            if g.ndim != 1 or g.shape[0] != n:
                raise ValueError(f"{_WHERE}: points[{i}] must be 1-D with {n} entries "
                                 f"(values' axis {i}), got shape {tuple(g.shape)}")
            if n < 2:
                raise ValueError(f"{_WHERE}: points[{i}] needs at least 2 entries, got {n}")
        self.grid = grid
        self.values = values

    def __call__(self, xi, method=None):
        """Interpolate at xi (..., N); method overrides the interpolator's."""
        jnp = _jnp()
        method = self.method if method is None else method
        _check_method(method)
        ndim = len(self.grid)
        xi = _ndim_coords_from_arrays(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"{_WHERE}: the requested sample points xi have dimension "
                             f"{xi.shape[-1]} (shape {tuple(xi.shape)}), but this "
                             f"interpolator has dimension {ndim}")
        xi_shape = tuple(xi.shape)
        xi = xi.reshape(-1, xi_shape[-1])
        indices, distances, out = self._find_indices(jnp.transpose(xi))
        result = self._evaluate_linear(indices, distances) if method == "linear" else \
            self._evaluate_nearest(indices, distances)
        if self.fill_value is not None:
            shape = tuple(result.shape[:1]) + (1,) * (result.ndim - 1)
            result = jnp.where(out.reshape(shape), self.fill_value, result)
        return result.reshape(xi_shape[:-1] + tuple(self.values.shape[ndim:]))

    def _evaluate_linear(self, indices, distances):
        # the 2^N corners of each point's cell, each weighted by the product of the 1-D
        # weights (1 - t at the lower corner, t at the upper)
        jnp = _jnp()
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
        total = None
        for corner in product(*[[i, i + 1] for i in indices]):
            weight = None
            for ci, i, t in zip(corner, indices, distances):
                w = 1 - t if ci is i else t
                weight = w if weight is None else weight * w
            term = self.values[corner] * weight[trailing]
            total = term if total is None else total + term
        return total if total is not None else jnp.asarray(0.0)

    def _evaluate_nearest(self, indices, distances):
        jnp = _jnp()
        return self.values[tuple(jnp.where(t <= 0.5, i, i + 1)
                                 for i, t in zip(indices, distances))]

    def _find_indices(self, xi):
        """Per axis: the cell's lower index, the distance into it (in cell units) and
        whether a point lies outside the grid."""
        jnp = _jnp()
        indices, distances = [], []
        out = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            indices.append(i)
            distances.append((x - g[i]) / (g[i + 1] - g[i]))
            out = out | (x < g[0]) | (x > g[-1])
        return indices, distances, out


def _unflatten(aux, children):
    # (without __init__'s checks: transforms rebuild the object around tracers, and vmap's
    # in_axes around ints and None)
    obj = object.__new__(RegularGridInterpolator)
    obj.method, obj.bounds_error = aux
    obj.grid, obj.values, obj.fill_value = children
    return obj


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    _unflatten)
