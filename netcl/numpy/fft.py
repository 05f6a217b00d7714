"""netcl.numpy.fft: the real-valued helpers of jnp.fft (`fftfreq`, `rfftfreq`, `fftshift`,
`ifftshift`). The transforms need complex numbers, which netcl does not have: they raise
NotImplementedError naming themselves.

>>> jnp.fft.fftfreq(4)          # [0, 0.25, -0.5, -0.25]
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


def _unsupported(name):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"fft.{name}: Fourier transforms give complex arrays and "
                                  "netcl has no complex dtype; use numpy.fft on the host")
    fn.__name__ = name
    fn.__doc__ = f"jnp.fft.{name}: not supported (no complex dtype); raises NotImplementedError."
    return fn


for _name in ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
              "ifftn", "rfftn", "irfftn", "hfft", "ihfft"]:
    globals()[_name] = _unsupported(_name)
del _name
