"""netcl.scipy.fft: jax.scipy.fft's discrete cosine transforms (dct, idct, dctn, idctn) over
jnp.fft, with scipy's definitions and norms (None/'backward' or 'ortho', as JAX).

Type 2 is JAX's algorithm (Makhoul: the even samples then the odd ones reversed, one
complex FFT of length N, a quarter-wave twiddle); type 3, which JAX lacks, is type 2's
inverse scaled (scipy: dct type 3 = 2N idct type 2, and 'ortho' type 3 is the inverse of
'ortho' type 2). Complex inputs are transformed part by part. Multi-axis transforms run one
axis after another. Everything is composed from netcl.numpy operations, so grad, jit and
vmap go through it.

>>> import netcl.scipy.fft as sf
>>> sf.dct(jnp.array([1.0, 2.0, 3.0]))                    # [12, -3.4641, 0]
>>> sf.idct(sf.dct(jnp.array([1.0, 2.0, 3.0])))           # [1, 2, 3]
"""
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..core.shapes import normalize_axis
from ..numpy._composite_util import promote_inexact
from ..numpy._errors import wrap_namespace
from ..numpy._util import asarray_arg

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(x, type, norm, where):
    """x as an inexact array; type and norm checked."""
    x = asarray_arg(x, where)
    if isinstance(type, bool) or type not in (2, 3):
        if type in (1, 4):
            raise NotImplementedError(f"{where}: only DCT types 2 and 3 are implemented, got "
                                      f"type={type}")
        raise ValueError(f"{where}: type must be 1, 2, 3 or 4, got {type!r}")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"{where}: norm must be None, 'backward' or 'ortho', got {norm!r}")
    if dtypes.kind(x.dtype) not in "biufc":
        raise TypeError(f"{where}: x must be numeric, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{where}: x must have at least one axis, got a scalar")
    return x        # (promoted by the caller once every argument is checked)


def _length(n, where, arg="n"):
    if isinstance(n, bool):
        raise TypeError(f"{where}: {arg} must be an int, got bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be an int, got {type(n).__name__}") from None
    if n < 1:
        raise ValueError(f"{where}: {arg} must be positive, got {n}")
    return n


def _fit(x, axis, n):
    """x cropped or zero-padded to length n along axis (scipy's n= and s=)."""
    m = x.shape[axis]
    if n < m:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    if n > m:
        return jnp.pad(x, [(0, n - m if d == axis else 0) for d in range(x.ndim)])
    return x


def _along(v, axis, ndim):
    """A 1-d NumPy vector shaped to broadcast along `axis` of an ndim-d array."""
    return v.reshape([-1 if d == axis else 1 for d in range(ndim)])


def _ortho(out, axis):
    """Scale by 1/sqrt(4N) (first coefficient) and 1/sqrt(2N) (the rest)."""
    n = out.shape[axis]
    f = np.full(n, 1 / np.sqrt(2.0 * n))
    f[0] = 1 / np.sqrt(4.0 * n)
    return out * jnp.asarray(_along(f, axis, out.ndim).astype(out.dtype))


def _dct2(x, axis, norm):
    """DCT-II of real x along axis (scipy's unnormalised, or orthonormal)."""
    n = x.shape[axis]
    perm = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    v = jnp.take(x, jnp.asarray(perm.astype(np.int32)), axis=axis)
    V = jnp.fft.fft(v, axis=axis)
    theta = _along(np.pi * np.arange(n) / (2 * n), axis, x.ndim)
    # 2 Re(V exp(-i theta)), written with real operations
    out = 2 * (jnp.real(V) * jnp.asarray(np.cos(theta).astype(x.dtype)) +
               jnp.imag(V) * jnp.asarray(np.sin(theta).astype(x.dtype)))
    return _ortho(out, axis) if norm == "ortho" else out


def _idct2(x, axis, norm):
    """The inverse of _dct2 (scipy's idct type 2, a scaled DCT-III) of real x along axis."""
    n = x.shape[axis]
    x = _ortho(x, axis)
    if norm != "ortho":
        x = _ortho(x, axis)
    theta = _along(np.pi * np.arange(n) / (2 * n), axis, x.ndim)
    z = lax.complex(x * jnp.asarray((2 * n * np.cos(theta)).astype(x.dtype)),
                    x * jnp.asarray((2 * n * np.sin(theta)).astype(x.dtype)))
    y = jnp.real(jnp.fft.ifft(z, axis=axis))
    perm = np.concatenate([np.arange(0, n, 2), np.arange(1, n, 2)[::-1]])
    return jnp.take(y, jnp.asarray(np.argsort(perm).astype(np.int32)), axis=axis)


def _one(x, type, axis, norm, inverse):
    """The 1-d transform of real x along axis: dct (inverse=False) or idct of `type`."""
    n = x.shape[axis]
    if (type == 2) != inverse:          # dct type 2, idct type 3
        out = _dct2(x, axis, norm)
        return out if norm == "ortho" or not inverse else out / (2.0 * n)
    out = _idct2(x, axis, norm)         # idct type 2, dct type 3
    return out if norm == "ortho" or inverse else out * (2.0 * n)


def _by_parts(x, f):
    """f on real x; on complex x, f of the real and imaginary parts (f is real-linear)."""
    if dtypes.is_complex(x.dtype):
        return lax.complex(f(jnp.real(x)), f(jnp.imag(x)))
    return f(x)


def _transform_1d(x, type, n, axis, norm, where, inverse):
    x = _check(x, type, norm, where)
    axis = normalize_axis(axis, x.ndim, where, "axis")
    n = None if n is None else _length(n, where)
    (x,) = promote_inexact(where, x)
    if n is not None:
        x = _fit(x, axis, n)
    return _by_parts(x, lambda v: _one(v, type, axis, norm, inverse))


def _transform_nd(x, type, s, axes, norm, where, inverse):
    x = _check(x, type, norm, where)
    if s is not None:
        s = [_length(v, where, "s") for v in np.atleast_1d(np.asarray(s)).tolist()] \
            if not isinstance(s, (int, np.integer)) else [_length(s, where, "s")]
        if len(s) > x.ndim:
            raise ValueError(f"{where}: s must have at most x.ndim ({x.ndim}) entries, got "
                             f"{len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
    else:
        axes = tuple(normalize_axis(a, x.ndim, where, "axes")
                     for a in np.atleast_1d(np.asarray(axes)).tolist())
        if len(set(axes)) != len(axes):
            raise ValueError(f"{where}: axes {axes} must be distinct")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{where}: s {tuple(s)} and axes {axes} differ in length")
    (x,) = promote_inexact(where, x)
    if s is not None:
        for a, n in zip(axes, s):
            x = _fit(x, a, n)

    def f(v):
        for a in axes:
            v = _one(v, type, a, norm, inverse)
        return v
    return _by_parts(x, f)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """The discrete cosine transform of x along `axis`, as jax.scipy.fft.dct (scipy's
    definition): type 2 or 3; n crops or zero-pads; norm None/'backward' or 'ortho'.

    >>> sf.dct(jnp.array([1.0, 2.0, 3.0]), norm="ortho")      # [3.4641, -1.4142, 0]
    """
    return _transform_1d(x, type, n, axis, norm, "dct", False)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """The inverse discrete cosine transform of x along `axis` (idct(dct(x)) == x for the
    same type and norm), as jax.scipy.fft.idct.

    >>> sf.idct(jnp.array([12.0, -3.4641016, 0.0]))          # [1, 2, 3]
    """
    return _transform_1d(x, type, n, axis, norm, "idct", True)


def dctn(x, type=2, s=None, axes=None, norm=None):
    """The N-d discrete cosine transform over `axes` (default: all, or the last len(s)),
    as jax.scipy.fft.dctn; s crops or zero-pads each transformed axis.

    >>> sf.dctn(jnp.ones((2, 2)))                              # [[16, 0], [0, 0]]
    """
    return _transform_nd(x, type, s, axes, norm, "dctn", False)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """The N-d inverse discrete cosine transform over `axes`, as jax.scipy.fft.idctn.

    >>> sf.idctn(sf.dctn(jnp.ones((2, 2))))                    # [[1, 1], [1, 1]]
    """
    return _transform_nd(x, type, s, axes, norm, "idctn", True)


# (errors escaping these name the public function, whatever raised them inside)
wrap_namespace(globals(), __all__)
