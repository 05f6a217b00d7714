"""netcl.numpy.fft: jnp.fft's transforms (fft, ifft, rfft, irfft, their 2-D and N-D forms,
hfft, ihfft; `n=`/`s=` crop or zero-pad, `norm=` as NumPy's) over the device FFT primitive
(netcl.primitives.fft), and the helpers (`fftfreq`, `rfftfreq`, `fftshift`, `ifftshift`).
Multi-axis transforms run one axis after another. Derivatives come from the primitive's
rules (each transform is linear).

>>> jnp.fft.fftfreq(4)          # [0, 0.25, -0.5, -0.25]
>>> jnp.fft.rfft(jnp.arange(4.0))   # [6, -2+2j, -2]
"""
import numpy as np

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft", "ifft", "rfft", "irfft",
           "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft",
           "ihfft"]


def _n(n, where):
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"fft.{where}: n must be a non-negative int, got {n!r}")
    return int(n)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point FFT with spacing d, as jnp.fft.fftfreq (of the
    default float, float64 with x64, unless dtype is given).

    >>> jnp.fft.fftfreq(5, 0.5)      # [0, 0.4, 0.8, -0.8, -0.4]
    """
    from .. import numpy as jnp
    n = _n(n, "fftfreq")
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return jnp.asarray(k, dtype=dtype or float) / (n * d) if n else \
        jnp.zeros(0, dtype or float)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point real FFT, as jnp.fft.rfftfreq (of the default
    float unless dtype is given).

    >>> jnp.fft.rfftfreq(5)          # [0, 0.2, 0.4]
    """
    from .. import numpy as jnp
    n = _n(n, "rfftfreq")
    if n == 0:
        raise ValueError("fft.rfftfreq: n must be positive")
    return jnp.asarray(np.arange(n // 2 + 1), dtype=dtype or float) / (n * d)


def _shift(x, axes, sign, where):
    from .. import numpy as jnp
    x = jnp.asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else tuple(np.atleast_1d(axes).tolist())
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise ValueError(f"fft.{where}: axis {a} is out of range for shape {tuple(x.shape)}")
    shifts = tuple(sign * (x.shape[a] // 2) for a in axes)
    return jnp.roll(x, shifts, axes) if axes else x


def fftshift(x, axes=None):
    """x with the zero frequency moved to the centre, as jnp.fft.fftshift.

    >>> jnp.fft.fftshift(jnp.fft.fftfreq(4))     # [-0.5, -0.25, 0, 0.25]
    """
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None):
    """The inverse of fftshift, as jnp.fft.ifftshift."""
    return _shift(x, axes, -1, "ifftshift")


# ---- the transforms ---------------------------------------------------------------------------

_NORMS = (None, "backward", "ortho", "forward")


def _prepare(a, where, kind):
    """a as an array of the transform's input dtype: complex for fft/ifft/irfft/hfft (ints
    and floats promoted, as JAX), float for rfft/ihfft."""
    from .. import numpy as jnp
    from ..core import dtypes
    x = jnp.asarray(a)
    if dtypes.kind(x.dtype) not in "biufc":
        raise TypeError(f"fft.{where}: a must be numeric, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"fft.{where}: a must have at least one axis, got a scalar")
    f = dtypes.inexact_dtype(x.dtype) if not dtypes.is_complex(x.dtype) else x.dtype
    if f in dtypes.STORAGE_FLOATS:
        f = dtypes.float32
    if kind == "real":
        if dtypes.is_complex(f):
            raise TypeError(f"fft.{where}: a must be real, got {x.dtype}")
        return x.astype(f)
    return x.astype(dtypes.COMPLEX_OF.get(f, f))


def _axes_sizes(x, s, axes, where, default_last=None):
    """The transformed axes (normalised, distinct) and their lengths (s, or the shape)."""
    from ..core.shapes import normalize_axis
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(normalize_axis(a, x.ndim, f"fft.{where}", "axes") for a in
                 np.atleast_1d(axes).tolist())
    if len(set(axes)) != len(axes):
        raise ValueError(f"fft.{where}: axes {axes} must be distinct")
    if s is None:
        sizes = [x.shape[a] for a in axes]
        if default_last is not None:
            sizes[-1] = default_last(x.shape[axes[-1]])
    else:
        sizes = [_n(v, where) for v in np.atleast_1d(s).tolist()]
        if len(sizes) != len(axes):
            raise ValueError(f"fft.{where}: s {tuple(sizes)} and axes {axes} differ in length")
    if any(v < 1 for v in sizes):
        raise ValueError(f"fft.{where}: transform lengths must be positive, got {tuple(sizes)}")
    return axes, tuple(sizes)


def _fit(x, axis, n):
    """x cropped or zero-padded to length n along axis (NumPy's n= and s=)."""
    from ..primitives import views
    from ..primitives.structural import pad
    m = x.shape[axis]
    if m == n:
        return x
    if m > n:
        return views.slice(x, (0,) * x.ndim, tuple(n if d == axis else k
                                                   for d, k in enumerate(x.shape)))
    zero = views.full((), 0, x.dtype)
    return pad(x, zero, [(0, n - m if d == axis else 0, 0) for d in range(x.ndim)])


def _scale(x, sizes, norm, inverse, where):
    """NumPy's norm= scaling of a transform over axes of `sizes` (the kernels compute the
    'backward' convention: none forward, 1/n inverse)."""
    from ..primitives import views, elementwise as ew
    if norm not in _NORMS:
        raise ValueError(f"fft.{where}: norm must be None, 'backward', 'ortho' or 'forward', "
                         f"got {norm!r}")
    n = float(np.prod(sizes))
    if norm in (None, "backward"):
        return x
    factor = (1 / np.sqrt(n) if not inverse else np.sqrt(n)) if norm == "ortho" else \
        (1 / n if not inverse else n)
    return ew.mul(x, views.full_like(x, factor))


def _complex_transform(a, s, axes, norm, inverse, where):
    from ..primitives.fft import _along, transform_last
    x = _prepare(a, where, "complex")
    axes, sizes = _axes_sizes(x, s, axes, where)
    for ax, n in zip(axes, sizes):
        x = _fit(x, ax, n)
    for ax in axes:
        x = _along(x, ax, lambda v: transform_last(v, inverse))
    return _scale(x, sizes, norm, inverse, where)


def _real_forward(a, s, axes, norm, where):
    from ..primitives.fft import _along, rfft_last, transform_last
    x = _prepare(a, where, "real")
    axes, sizes = _axes_sizes(x, s, axes, where)
    for ax, n in zip(axes, sizes):
        x = _fit(x, ax, n)
    x = _along(x, axes[-1], rfft_last)
    for ax in axes[:-1]:
        x = _along(x, ax, lambda v: transform_last(v, False))
    return _scale(x, sizes, norm, False, where)


def _real_inverse(a, s, axes, norm, where):
    from ..primitives.fft import _along, irfft_last, transform_last
    x = _prepare(a, where, "complex")
    axes, sizes = _axes_sizes(x, s, axes, where, default_last=lambda m: 2 * (m - 1))
    for ax, n in zip(axes[:-1], sizes[:-1]):
        x = _fit(x, ax, n)
    x = _fit(x, axes[-1], sizes[-1] // 2 + 1)
    for ax in axes[:-1]:
        x = _along(x, ax, lambda v: transform_last(v, True))
    x = _along(x, axes[-1], lambda v: irfft_last(v, sizes[-1]))
    return _scale(x, sizes, norm, True, where)


def _one_axis(n, axis):
    return None if n is None else (n,), (axis,)


def fft(a, n=None, axis=-1, norm=None):
    """The discrete Fourier transform along `axis`, as jnp.fft.fft (n: crop or zero-pad).

    >>> jnp.fft.fft(jnp.array([1.0, 0.0, 0.0, 0.0]))      # [1, 1, 1, 1] (complex)
    """
    return _complex_transform(a, *_one_axis(n, axis), norm, False, "fft")


def ifft(a, n=None, axis=-1, norm=None):
    """The inverse discrete Fourier transform along `axis`, as jnp.fft.ifft.

    >>> jnp.fft.ifft(jnp.fft.fft(jnp.arange(4.0)))          # [0, 1, 2, 3] (complex)
    """
    return _complex_transform(a, *_one_axis(n, axis), norm, True, "ifft")


def rfft(a, n=None, axis=-1, norm=None):
    """The half spectrum (n // 2 + 1 entries) of a real signal along `axis`, as
    jnp.fft.rfft.

    >>> jnp.fft.rfft(jnp.arange(4.0))                       # [6, -2+2j, -2]
    """
    return _real_forward(a, *_one_axis(n, axis), norm, "rfft")


def irfft(a, n=None, axis=-1, norm=None):
    """The real signal of length n (default 2 (m - 1)) whose half spectrum is a, as
    jnp.fft.irfft.

    >>> jnp.fft.irfft(jnp.fft.rfft(jnp.arange(4.0)))        # [0, 1, 2, 3]
    """
    return _real_inverse(a, *_one_axis(n, axis), norm, "irfft")


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D discrete Fourier transform, as jnp.fft.fft2.

    >>> jnp.fft.fft2(jnp.ones((2, 2)))                      # [[4, 0], [0, 0]]
    """
    return _complex_transform(a, s, axes, norm, False, "fft2")


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D inverse discrete Fourier transform, as jnp.fft.ifft2."""
    return _complex_transform(a, s, axes, norm, True, "ifft2")


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """The 2-D transform of a real array, half spectrum along the last axis (jnp.fft.rfft2)."""
    return _real_forward(a, s, axes, norm, "rfft2")


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of rfft2, as jnp.fft.irfft2."""
    return _real_inverse(a, s, axes, norm, "irfft2")


def fftn(a, s=None, axes=None, norm=None):
    """The N-D discrete Fourier transform (all axes by default), as jnp.fft.fftn."""
    return _complex_transform(a, s, axes, norm, False, "fftn")


def ifftn(a, s=None, axes=None, norm=None):
    """The N-D inverse discrete Fourier transform, as jnp.fft.ifftn."""
    return _complex_transform(a, s, axes, norm, True, "ifftn")


def rfftn(a, s=None, axes=None, norm=None):
    """The N-D transform of a real array, half spectrum along the last axis (jnp.fft.rfftn)."""
    return _real_forward(a, s, axes, norm, "rfftn")


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of rfftn, as jnp.fft.irfftn."""
    return _real_inverse(a, s, axes, norm, "irfftn")


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None):
    """The real spectrum of a signal with Hermitian symmetry given by its first half, as
    jnp.fft.hfft (irfft of conj(a) with the opposite normalisation).

    >>> jnp.fft.hfft(jnp.array([1.0, 2.0, 3.0]))           # [8, -4, 0, -4]
    """
    from .aliases import conj
    if norm not in _NORMS:
        raise ValueError(f"fft.hfft: norm must be None, 'backward', 'ortho' or 'forward', "
                         f"got {norm!r}")
    return _real_inverse(conj(_prepare(a, "hfft", "complex")), *_one_axis(n, axis),
                         _SWAP[norm], "hfft")


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: conj(rfft(a)) with the opposite normalisation, as
    jnp.fft.ihfft."""
    from .aliases import conj
    if norm not in _NORMS:
        raise ValueError(f"fft.ihfft: norm must be None, 'backward', 'ortho' or 'forward', "
                         f"got {norm!r}")
    return conj(_real_forward(a, *_one_axis(n, axis), _SWAP[norm], "ihfft"))
