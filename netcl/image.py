"""netcl.image: jax.image's resampling (`resize`, `scale_and_translate`, `ResizeMethod`), as
composites of netcl.numpy operations, so grad, jit and vmap go through them.

As in JAX, every method but 'nearest' is a separable filter: per resized dimension a weight
matrix (input size x output size, from the method's kernel, rescaled when downsampling with
antialias) is contracted with the image; 'nearest' gathers. For `resize` the weights are
constants (computed on the host); for `scale_and_translate` they are computed from `scale`
and `translation` with netcl operations, so those may be traced and differentiated.

>>> img = jnp.ones((1, 8, 8, 3))
>>> netcl.image.resize(img, (1, 16, 16, 3), "bilinear").shape      # (1, 16, 16, 3)
"""
import enum
import math

import numpy as np

from . import numpy as jnp
from .core import dtypes
from .lax_extras_util import arr

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """jax.image.ResizeMethod: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s):
        """The method a name gives: 'nearest', 'linear' ('bilinear', 'trilinear',
        'triangle'), 'lanczos3', 'lanczos5', 'cubic' ('bicubic', 'tricubic')."""
        names = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR,
                 "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
                 "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
                 "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC,
                 "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC}
        try:
            return names[s.lower()]
        except (KeyError, AttributeError):
            raise ValueError(f"unknown resize method {s!r}; expected one of "
                             f"{', '.join(sorted(names))}") from None


def _method(method, where):
    if isinstance(method, ResizeMethod):
        return method
    try:
        return ResizeMethod.from_string(method)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


# ---- kernels (xp: numpy for constant weights, netcl.numpy for traced ones) ------------------

def _triangle(xp, x):
    return xp.maximum(0.0, 1.0 - xp.abs(x))


def _keys_cubic(xp, x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = xp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return xp.where(x >= 2.0, 0.0, out)


def _lanczos(radius):
    def kernel(xp, x):
        y = radius * xp.sin(math.pi * x) * xp.sin(math.pi * x / radius)
        out = xp.where(x > 1e-3, y / xp.where(x != 0, math.pi ** 2 * x * x, 1.0), 1.0)
        return xp.where(x > radius, 0.0, out)
    return kernel


_KERNELS = {ResizeMethod.LINEAR: _triangle, ResizeMethod.CUBIC: _keys_cubic,
            ResizeMethod.LANCZOS3: _lanczos(3.0), ResizeMethod.LANCZOS5: _lanczos(5.0)}


def _weight_matrix(xp, in_size, out_size, scale, translation, kernel, antialias, dtype):
    """(in_size, out_size) weights of one dimension (JAX's compute_weight_mat)."""
    inv_scale = 1.0 / scale
    kernel_scale = xp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample_f = ((xp.arange(out_size, dtype=dtype) + 0.5) * inv_scale
                - translation * inv_scale - 0.5)
    x = xp.abs(xp.reshape(sample_f, (1, out_size)) -
               xp.reshape(xp.arange(in_size, dtype=dtype), (in_size, 1))) / kernel_scale
    weights = kernel(xp, x)
    total = xp.sum(weights, axis=0, keepdims=True)
    weights = xp.where(xp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps),
                       weights / xp.where(total != 0, total, 1.0), 0.0)
    inside = xp.logical_and(sample_f >= -0.5, sample_f <= in_size - 0.5)
    return xp.where(xp.reshape(inside, (1, out_size)), weights, 0.0)


def _contract(x, d, w):
    """x with dimension d replaced by its product with w (in_size, out_size)."""
    from .lax import Precision
    y = jnp.tensordot(x, w, axes=([d], [0]), precision=Precision.HIGHEST)
    return jnp.moveaxis(y, -1, d)


def _shape(shape, image, where):
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"{where}: shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) != image.ndim:
        raise ValueError(f"{where}: shape {shape} must have the image's rank {image.ndim} "
                         f"(image shape {tuple(image.shape)})")
    if any(d < 0 for d in shape):
        raise ValueError(f"{where}: shape {shape} has a negative dimension")
    return shape


def _float_dtype(image):
    return image.dtype if dtypes.kind(image.dtype) == "f" else dtypes.float32


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        if m == 0:
            raise ValueError(f"resize: cannot resize dimension {d} of size 0 to {n}")
        offsets = np.floor((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m)
                           / np.float32(n)).astype(np.int32)
        x = jnp.take(x, jnp.asarray(offsets), axis=d)
    return x


def resize(image, shape, method, antialias=True, precision=None):
    """`image` resampled to `shape`, as jax.image.resize. Methods: 'nearest', 'linear'
    ('bilinear', 'trilinear', 'triangle'), 'cubic' ('bicubic', 'tricubic': Keys, a=-0.5),
    'lanczos3', 'lanczos5'. Dimensions whose size changes are resampled (batch and channel
    dimensions keep their sizes); half-pixel centres; with `antialias` a downsampling
    filter is widened by the scale. Integer images give float32 (except 'nearest').
    Differentiable in `image`.

    >>> netcl.image.resize(jnp.arange(4.0).reshape(1, 4), (1, 8), "linear")
    """
    image = arr(image, "resize", "image")
    shape = _shape(shape, image, "resize")
    method = _method(method, "resize")
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    kernel = _KERNELS[method]
    dt = _float_dtype(image)
    if image.dtype != dt:
        image = image.astype(dt)
    host_dt = np.float64 if dt == dtypes.float64 else np.float32
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m == n:
            continue
        if m == 0:
            raise ValueError(f"resize: cannot resize dimension {d} of size 0 to {n}")
        scale = 1.0 if n == 0 else n / m
        with np.errstate(all="ignore"):
            w = _weight_matrix(np, m, n, host_dt(scale), host_dt(0.0), kernel, antialias,
                               host_dt)
        image = _contract(image, d, jnp.asarray(w.astype(host_dt), dtype=dt))
    return image


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=None):
    """Resample `image` to `shape` with a scale and translation per spatial dimension:
    output pixel centre `i + 0.5` samples input location `(i + 0.5 - translation) / scale`,
    as jax.image.scale_and_translate. `scale` and `translation` (one entry per dimension
    of `spatial_dims`) may be arrays, traced and differentiated. 'nearest' is not
    supported (as in JAX).

    >>> netcl.image.scale_and_translate(img, (1, 16, 16, 3), (1, 2), jnp.array([2.0, 2.0]),
    ...                                 jnp.zeros(2), "linear")
    """
    where = "scale_and_translate"
    image = arr(image, where, "image")
    shape = _shape(shape, image, where)
    method = _method(method, where)
    if method == ResizeMethod.NEAREST:
        raise ValueError(f"{where}: nearest neighbor resampling is not supported (as in JAX); "
                         "use resize(..., 'nearest')")
    try:
        dims = tuple(int(d) for d in spatial_dims)
    except TypeError:
        raise TypeError(f"{where}: spatial_dims must be a sequence of ints, got "
                        f"{spatial_dims!r}") from None
    for d in dims:
        if not -image.ndim <= d < image.ndim:
            raise ValueError(f"{where}: spatial dimension {d} is out of range for an image of "
                             f"rank {image.ndim}")
    dims = tuple(d % image.ndim for d in dims)
    for d in range(image.ndim):
        if d not in dims and shape[d] != image.shape[d]:
            raise ValueError(f"{where}: dimension {d} is not in spatial_dims={dims} but "
                             f"shape {shape} changes its size {image.shape[d]}")
    scale = jnp.asarray(scale)
    translation = jnp.asarray(translation)
    for name, v in (("scale", scale), ("translation", translation)):
        if v.shape != (len(dims),):
            raise ValueError(f"{where}: {name} must have shape ({len(dims)},) (one entry per "
                             f"spatial dimension), got {tuple(v.shape)}")
    dt = _float_dtype(image)
    if image.dtype != dt:
        image = image.astype(dt)
    pdt = jnp.result_type(scale, translation, 1.0)
    scale, translation = scale.astype(pdt), translation.astype(pdt)
    kernel = _KERNELS[method]
    for i, d in enumerate(dims):
        w = _weight_matrix(jnp, image.shape[d], shape[d], scale[i], translation[i], kernel,
                           antialias, pdt)
        image = _contract(image, d, w.astype(dt))
    return image
