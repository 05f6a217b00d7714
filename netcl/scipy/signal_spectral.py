"""The windowed-FFT family of netcl.scipy.signal (jax.scipy.signal's `stft`, `istft`, `csd`,
`welch`), composed from netcl.numpy's FFTs: grad, jit and vmap go through it. As in JAX,
window names other than 'hann' (and tuples) come from scipy.signal.get_window, and
nperseg=None takes the whole signal (scipy's is 256).

>>> f, pxx = netcl.scipy.signal.welch(jnp.sin(jnp.arange(256.0)), nperseg=64)
"""
import warnings

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..core.shapes import normalize_axis
from ..numpy._composite_util import bool_arg, int_arg, promote_inexact
from ..numpy._util import asarray_arg
from .signal import detrend

__all__ = ["csd", "istft", "stft", "welch"]

def _hann(n, dtype):
    """The periodic Hann window (scipy's get_window('hann', n)), as JAX computes it."""
    w = np.ones(1) if n == 1 else np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2
    return jnp.asarray(w.astype(dtype))     # (an upload: no kernel runs)


def _named_window(window, n, dtype, where):
    if isinstance(window, str) and window == "hann":
        return _hann(n, dtype)
    try:
        from scipy.signal import get_window
    except ImportError:
        raise ImportError(f"{where}: scipy must be installed to use window={window!r} (only "
                          "'hann' and arrays are built in, as in JAX)") from None
    return jnp.asarray(np.asarray(get_window(window, n)).astype(dtype))


def _window(window, nperseg, length, dtype, where):
    """(window array, nperseg), as JAX's _triage_segments."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else nperseg
        if n > length:
            warnings.warn(f"{where}: nperseg={n} is greater than the input length {length}, "
                          f"using nperseg={length}")
            n = length
        return _named_window(window, n, dtype, where), n
    win = asarray_arg(window, where)      # (converted to dtype by the caller, after checks)
    if dtypes.kind(win.dtype) not in "biufc":
        raise TypeError(f"{where}: window must be numeric, got {win.dtype}")
    if win.ndim != 1:
        raise ValueError(f"{where}: window must be 1-d, got shape {tuple(win.shape)}")
    n = win.shape[0] if nperseg is None else nperseg
    if length < win.shape[0]:
        raise ValueError(f"{where}: window (length {win.shape[0]}) is longer than the input "
                         f"signal ({length})")
    if n != win.shape[0]:
        raise ValueError(f"{where}: nperseg={n} differs from the length of window "
                         f"({win.shape[0]})")
    return win, n


def _odd_ext(x, n):
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"the odd extension length {n} must not exceed the signal length "
                         f"less one ({x.shape[-1] - 1})")
    left, right = x[..., :1], x[..., -1:]
    return jnp.concatenate([2 * left - jnp.flip(x[..., 1:n + 1], -1), x,
                            2 * right - jnp.flip(x[..., -(n + 1):-1], -1)], -1)


def _extend(x, boundary, n):
    if boundary == "odd":
        return _odd_ext(x, n)
    mode = {"even": "reflect", "constant": "edge", "zeros": "constant"}[boundary]
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode)


def _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides):
    """The windowed FFT of each segment of x's last axis: (..., segments, frequencies)."""
    if dtypes.kind(x.dtype) in "iub":
        x = x.astype(win.dtype)
    length = x.shape[-1]
    if nperseg == 1 and noverlap == 0:
        seg = x[..., None]
    else:
        starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
        seg = jnp.take(x, jnp.asarray((starts[:, None] + np.arange(nperseg)).astype(np.int32)),
                       axis=-1)
    seg = detrend_func(seg) * win
    return jnp.fft.fft(seg, n=nfft) if sides == "twosided" else \
        jnp.fft.rfft(jnp.real(seg), n=nfft)


def _detrend_func(detrend_type, axis, where):
    if isinstance(detrend_type, str):
        if detrend_type not in ("constant", "linear"):
            raise ValueError(f"{where}: detrend must be 'constant', 'linear', False or a "
                             f"function, got {detrend_type!r}")
        return lambda d: detrend(d, axis=-1, type=detrend_type)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type
        # (JAX moves `axis` of the segments array, not the segment axis: kept as JAX does)
        return lambda d: jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"{where}: unsupported detrend {detrend_type!r}")


def _opt_int(v, where, arg):
    return None if v is None else int_arg(v, where, arg)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary, padded, where):
    """JAX's _spectral_helper: (freqs, times, spectra with frequencies at `axis` and
    segments last)."""
    if boundary not in (None, "even", "odd", "constant", "zeros"):
        raise ValueError(f"{where}: boundary must be one of None, 'even', 'odd', 'constant', "
                         f"'zeros', got {boundary!r}")
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"{where}: scaling must be 'density' or 'spectrum', got {scaling!r}")
    nperseg, noverlap, nfft = (_opt_int(nperseg, where, "nperseg"),
                               _opt_int(noverlap, where, "noverlap"),
                               _opt_int(nfft, where, "nfft"))
    if nperseg is not None and nperseg < 1:
        raise ValueError(f"{where}: nperseg must be a positive integer, got {nperseg}")
    return_onesided = bool_arg(return_onesided, where, "return_onesided")
    # everything is checked before anything runs: x, y (unpromoted), then the window
    xs = [asarray_arg(x, where)] + ([] if y is None else [asarray_arg(y, where)])
    for name, v in zip("xy", xs):
        if dtypes.kind(v.dtype) not in "biufc":
            raise TypeError(f"{where}: {name} must be numeric, got {v.dtype}")
    x, y = xs[0], (None if y is None else xs[1])
    if y is not None and x.ndim != y.ndim:
        raise ValueError(f"{where}: x and y must have the same rank, got shapes "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    if x.ndim == 0:
        raise ValueError(f"{where}: x must have at least one axis")
    axis = normalize_axis(int_arg(axis, where, "axis"), x.ndim, where, "axis")
    if y is not None:
        try:
            outer = np.broadcast_shapes(tuple(np.delete(x.shape, axis)),
                                        tuple(np.delete(y.shape, axis)))
        except ValueError:
            raise ValueError(f"{where}: x and y cannot be broadcast together (shapes "
                             f"{tuple(x.shape)} and {tuple(y.shape)})") from None
    dt = dtypes.inexact_dtype(*dtypes.result_type(*xs))       # (promote_dtypes_inexact's)
    cdt = dtypes.COMPLEX_OF.get(np.dtype(dt), np.dtype(dt))
    fdt = np.finfo(cdt).dtype
    win, nperseg = _window(window, nperseg, x.shape[axis], dt, where)
    noverlap = nperseg // 2 if noverlap is None else noverlap
    nfft = nperseg if nfft is None else nfft
    detrend_func = _detrend_func(detrend_type, axis, where)
    if x.size == 0 or (y is not None and y.size == 0):
        shape = x.shape if y is None else \
            outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        return jnp.zeros(shape, fdt), jnp.zeros(shape, fdt), jnp.zeros(shape, cdt)
    if nfft < nperseg:
        raise ValueError(f"{where}: nfft ({nfft}) must be at least nperseg ({nperseg})")
    if noverlap >= nperseg or noverlap < 0:
        raise ValueError(f"{where}: noverlap ({noverlap}) must lie in [0, nperseg) (nperseg="
                         f"{nperseg})")
    length = max(x.shape[axis], y.shape[axis] if y is not None else 0)
    if boundary == "odd" and nperseg // 2 > length - 1:
        raise ValueError(f"{where}: boundary='odd' extends by nperseg // 2 = {nperseg // 2}, "
                         f"which must not exceed the signal length less one ({length - 1})")
    xs = promote_inexact(where, *xs)
    x, y = xs[0], (None if y is None else xs[1])
    win = win.astype(dt)
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        d = x.shape[-1] - y.shape[-1]       # the shorter one is zero-padded
        if d:
            x, y = (jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, max(-d, 0))]),
                    jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, max(d, 0))]))
    nstep = nperseg - noverlap
    if boundary is not None:
        x = _extend(x, boundary, nperseg // 2)
        y = None if y is None else _extend(y, boundary, nperseg // 2)
    if padded:
        nadd = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nadd)])
        y = None if y is None else jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nadd)])
    scale = 1.0 / (fs * jnp.sum(win * win)) if scaling == "density" else \
        1.0 / jnp.sum(win) ** 2
    if mode == "stft":
        scale = jnp.sqrt(scale)
    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (dtypes.is_complex(x.dtype) or
                            (y is not None and dtypes.is_complex(y.dtype))):
        sides = "twosided"
        warnings.warn(f"{where}: input data is complex, switching to return_onesided=False")
    k = np.fft.fftfreq(nfft) if sides == "twosided" else np.fft.rfftfreq(nfft)
    freqs = jnp.asarray(k.astype(fdt)) * fs
    res = _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides)
    if y is not None:
        res = jnp.conj(res) * _segments_fft(y, win, detrend_func, nperseg, noverlap, nfft, sides)
    elif mode == "psd":
        res = jnp.conj(res) * res
    res = res * scale
    if sides == "onesided" and mode == "psd":   # both halves' power in the one-sided bins
        factor = np.full(res.shape[-1], 2.0, fdt)
        factor[0] = 1.0
        if nfft % 2 == 0:
            factor[-1] = 1.0
        res = res * jnp.asarray(factor)
    t = np.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep)
    if boundary is not None:
        t = t - nperseg / 2
    time = jnp.asarray(t.astype(fdt)) / fs
    res = res.astype(cdt)
    if y is None and mode != "stft":
        res = jnp.real(res)
    return freqs, time, jnp.moveaxis(res, -1, axis)


def _check_choice(v, choices, where, arg):
    if v not in choices:
        raise ValueError(f"{where}: {arg} must be one of {choices}, got {v!r}")


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of x along `axis`, as jax.scipy.signal.stft:
    (frequencies, segment times, Zxx with frequencies at `axis` and segments last).

    >>> f, t, Z = sig.stft(jnp.ones(100), nperseg=16)      # Z.shape == (9, 14)
    """
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary, padded, "stft")


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """The cross power spectral density of x and y by Welch's method (segment spectra
    averaged by `average`, 'mean' or 'median'), as jax.scipy.signal.csd: (freqs, Pxy).

    >>> f, pxy = sig.csd(jnp.sin(jnp.arange(64.0)), jnp.cos(jnp.arange(64.0)), nperseg=16)
    """
    _check_choice(average, ("mean", "median"), "csd", "average")
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd", None, False, "csd")
    if y is not None and not dtypes.is_complex(pxy.dtype):
        pxy = pxy.astype(dtypes.COMPLEX_OF[np.dtype(pxy.dtype)])    # (complex when x is not y)
    if pxy.ndim >= 2 and pxy.size > 0:
        nseg = pxy.shape[-1]
        if nseg > 1 and average == "median":
            bias = 1.0 + float(np.sum(1.0 / (np.arange(2.0, nseg, 2) + 1) -
                                      1.0 / np.arange(2.0, nseg, 2)))
            if dtypes.is_complex(pxy.dtype):
                pxy = lax.complex(jnp.median(jnp.real(pxy), axis=-1),
                                  jnp.median(jnp.imag(pxy), axis=-1))
            else:
                pxy = jnp.median(pxy, axis=-1)
            pxy = pxy / bias
        elif nseg > 1:
            pxy = jnp.mean(pxy, axis=-1)
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """The power spectral density of x by Welch's method, as jax.scipy.signal.welch:
    (freqs, Pxx).

    >>> f, pxx = sig.welch(jnp.sin(jnp.arange(256.0)), nperseg=64)      # pxx.shape == (33,)
    """
    _check_choice(average, ("mean", "median"), "welch", "average")
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, jnp.real(pxx)


def _overlap_and_add(x, step):
    """Frames x (..., frames, frame_length) overlapped `step` apart and summed, as JAX's
    reshape/pad formulation (no scatter)."""
    *batch, nframes, seglen = x.shape
    b = int(np.prod(batch))
    x = jnp.reshape(x, (b, nframes, seglen))
    out_size = step * (nframes - 1) + seglen
    per = 1 + (seglen - 1) // step              # steps per segment
    x = jnp.pad(x, ((0, 0), (0, 0), (0, per * step - seglen)))
    x = jnp.transpose(jnp.reshape(x, (b, nframes, per, step)), (0, 2, 1, 3))
    x = jnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))     # (b, per, 2 nframes, step)
    shrunk = x.shape[2] - 1
    x = jnp.reshape(x, (b, -1))[:, :per * shrunk * step]
    x = jnp.sum(jnp.reshape(x, (b, per, shrunk * step)), axis=1)[:, :out_size]
    return jnp.reshape(x, tuple(batch) + (-1,))


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform (windowed overlap-add), as
    jax.scipy.signal.istft: (times, x).

    >>> f, t, Z = sig.stft(jnp.arange(64.0), nperseg=16)
    >>> t, x = sig.istft(Z, nperseg=16)                        # x ~ arange(64)
    """
    where = "istft"
    Z = asarray_arg(Zxx, where)
    if Z.ndim < 2:
        raise ValueError(f"{where}: Zxx must be at least 2-d, got shape {tuple(Z.shape)}")
    freq_axis = normalize_axis(int_arg(freq_axis, where, "freq_axis"), Z.ndim, where,
                               "freq_axis")
    time_axis = normalize_axis(int_arg(time_axis, where, "time_axis"), Z.ndim, where,
                               "time_axis")
    if freq_axis == time_axis:
        raise ValueError(f"{where}: time_axis and freq_axis must differ, got {time_axis}")
    input_onesided = bool_arg(input_onesided, where, "input_onesided")
    if dtypes.kind(Z.dtype) not in "biufc":
        raise TypeError(f"{where}: Zxx must be numeric, got {Z.dtype}")
    n_default = 2 * (Z.shape[freq_axis] - 1) if input_onesided else Z.shape[freq_axis]
    # (0 and None take the defaults, as JAX's `nperseg or ...`)
    nperseg = int_arg(n_default if nperseg is None else nperseg, where, "nperseg") or n_default
    if nperseg < 1:
        raise ValueError(f"{where}: nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft = int_arg(nfft, where, "nfft")
    if nfft < nperseg:
        raise ValueError(f"{where}: the FFT length nfft ({nfft}) must be at least nperseg "
                         f"({nperseg})")
    noverlap = int_arg(nperseg // 2 if noverlap is None else noverlap, where, "noverlap") \
        or nperseg // 2
    if noverlap >= nperseg or noverlap < 0:
        raise ValueError(f"{where}: noverlap ({noverlap}) must lie in [0, nperseg) (nperseg="
                         f"{nperseg})")
    if not isinstance(window, (str, tuple)):
        win = asarray_arg(window, where)
        if win.ndim != 1:
            raise ValueError(f"{where}: window must be 1-d, got shape {tuple(win.shape)}")
        if win.shape[0] != nperseg:
            raise ValueError(f"{where}: window must have length nperseg={nperseg}, got "
                             f"{win.shape[0]}")
    (Z,) = promote_inexact(where, Z)
    if not dtypes.is_complex(Z.dtype):
        Z = Z.astype(dtypes.COMPLEX_OF[np.dtype(Z.dtype)])
    nstep = nperseg - noverlap
    if time_axis != Z.ndim - 1 or freq_axis != Z.ndim - 2:
        outer = tuple(i for i in range(Z.ndim) if i not in (time_axis, freq_axis))
        Z = jnp.transpose(Z, outer + (freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    xsubs = inverse(Z, n=nfft, axis=-2)[..., :nperseg, :]
    if isinstance(window, (str, tuple)):
        win = _named_window(window, nperseg, np.finfo(np.dtype(xsubs.dtype)).dtype, where)
        win = win.astype(xsubs.dtype)
    xsubs = xsubs * jnp.sum(win)        # (undoes stft's 'spectrum' scaling)
    win = jnp.reshape(win, (1,) * (xsubs.ndim - 2) + (nperseg, 1))
    x = _overlap_and_add(jnp.swapaxes(xsubs * win, -2, -1), nstep)
    win2 = jnp.repeat(win * win, xsubs.shape[-1], axis=-1)
    norm = _overlap_and_add(jnp.swapaxes(win2, -2, -1), nstep)
    if boundary:
        h = nperseg // 2
        x, norm = x[..., h:-h], norm[..., h:-h]
    big = (jnp.real(norm) if dtypes.is_complex(norm.dtype) else norm) > 1e-10
    x = x / jnp.where(big, norm, 1.0)
    if x.ndim > 1 and time_axis != Z.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    time = jnp.arange(x.shape[0], dtype=np.finfo(np.dtype(x.dtype)).dtype) / fs
    return time, x


