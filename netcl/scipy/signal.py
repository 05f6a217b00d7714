"""netcl.scipy.signal: jax.scipy.signal's functions with JAX's signatures and defaults —
convolution (`convolve`, `correlate`, `convolve2d`, `correlate2d`: direct, through
lax.conv_general_dilated; `fftconvolve` and method='fft': through jnp.fft), `detrend`, and
the windowed-FFT family (`stft`, `istft`, `csd`, `welch`). Everything is composed from
netcl.numpy / netcl.lax operations, so grad, jit and vmap go through it. As in JAX, 'auto'
means the direct method, window names other than 'hann' (and tuples) come from
scipy.signal.get_window, and nperseg=None takes the whole signal (scipy's is 256).

>>> import netcl.scipy.signal as sig
>>> sig.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([0.0, 1.0, 0.5]))   # [0 1 2.5 4 1.5]
>>> f, pxx = sig.welch(jnp.sin(jnp.arange(256.0)), nperseg=64)
"""

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..core.shapes import normalize_axis
from ..numpy._composite_util import int_arg, promote_inexact
from ..numpy._errors import wrap_namespace
from ..numpy._util import asarray_arg

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


def _check_mode(mode, where):
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"{where}: mode must be 'full', 'same' or 'valid', got {mode!r}")


def _arrays(in1, in2, where):
    """in1 and in2 as arrays (not yet promoted: nothing runs before the checks), numeric and
    of equal rank."""
    a, b = asarray_arg(in1, where), asarray_arg(in2, where)
    for name, v in (("in1", a), ("in2", b)):
        if dtypes.kind(v.dtype) not in "biufc":
            raise TypeError(f"{where}: {name} must be numeric, got {v.dtype}")
    if a.ndim != b.ndim:
        raise ValueError(f"{where}: in1 and in2 must have the same number of dimensions, got "
                         f"shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return a, b


def _nonempty(a, b, where):
    if a.size == 0 or b.size == 0:
        raise ValueError(f"{where}: zero-size arrays are not supported, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")


def _swap(s1, s2, a, b, where, what="dimension"):
    """Whether the operands (lengths s1, s2) swap: in2 is the larger along every axis; a
    ValueError when neither is at least as large as the other along every axis."""
    no_swap = all(x >= y for x, y in zip(s1, s2))
    swap = all(x <= y for x, y in zip(s1, s2))
    if not (no_swap or swap):
        raise ValueError(f"{where}: one input must be at least as large as the other in every "
                         f"{what}, got shapes {tuple(a.shape)} and {tuple(b.shape)}")
    return swap


def _direct_check(in1, in2, mode, where):
    _check_mode(mode, where)
    a, b = _arrays(in1, in2, where)
    _nonempty(a, b, where)
    _swap(a.shape, b.shape, a, b, where)
    return a, b


def _real_conv(a, b, pads, precision):
    """Correlation of a with b (no flip): one single-channel conv_general_dilated."""
    out = lax.conv_general_dilated(a[None, None], b[None, None], (1,) * a.ndim, pads,
                                   precision=precision)
    return out[0, 0]


def _conv_any(a, b, pads, precision):
    """_real_conv for real or complex operands: complex ones as a 2-channel real conv
    ([re, im] in; rhs [[re, -im], [im, re]]), since conv is bilinear."""
    if not dtypes.is_complex(a.dtype):
        return _real_conv(a, b, pads, precision)
    ar, ai, br, bi = jnp.real(a), jnp.imag(a), jnp.real(b), jnp.imag(b)
    lhs = jnp.stack([ar, ai])[None]
    rhs = jnp.stack([jnp.stack([br, -bi]), jnp.stack([bi, br])])
    out = lax.conv_general_dilated(lhs, rhs, (1,) * a.ndim, pads, precision=precision)[0]
    return lax.complex(out[0], out[1])


def _convolve_nd(in1, in2, mode, precision, where):
    """JAX's direct N-d convolution (the larger operand slides under the flipped smaller)."""
    a, b = _direct_check(in1, in2, mode, where)
    swap = _swap(a.shape, b.shape, a, b, where)
    a, b = promote_inexact(where, a, b)
    if a.ndim == 0:
        return a * b
    shape_o = tuple(b.shape)
    if swap:
        a, b = b, a
    shape = tuple(b.shape)
    if mode == "valid":
        pads = [(0, 0)] * len(shape)
    elif mode == "same":      # centred on in1 (the caller's first operand), as scipy's
        pads = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2) for s, so in zip(shape, shape_o)]
    else:
        pads = [(s - 1, s - 1) for s in shape]
    return _conv_any(a, jnp.flip(b), pads, precision)


def _method(method, where):
    if method not in ("auto", "direct", "fft"):
        raise ValueError(f"{where}: method must be 'auto', 'direct' or 'fft', got {method!r}")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The N-d convolution of in1 and in2 (same rank), as jax.scipy.signal.convolve: mode
    'full', 'same' (the size of in1) or 'valid'; method 'direct'/'auto' (a convolution
    kernel) or 'fft' (fftconvolve).

    >>> sig.convolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, 1.0]))    # [1 3 5 3]
    """
    _method(method, "convolve")
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    return _convolve_nd(in1, in2, mode, precision, "convolve")


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The N-d cross-correlation of in1 and in2: convolve(in1, flip(conj(in2))), as
    jax.scipy.signal.correlate.

    >>> sig.correlate(jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, 0.0]))    # [0 1 2 3]
    """
    _method(method, "correlate")
    if method == "fft":
        a, b = _arrays(in1, in2, "correlate")
        _fft_check(a, b, mode, None, "correlate")
    else:
        a, b = _direct_check(in1, in2, mode, "correlate")
    return convolve(a, jnp.flip(jnp.conj(b)), mode, precision=precision, method=method)


def _check_2d(in1, in2, boundary, fillvalue, where):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{where}: only boundary='fill', fillvalue=0 is supported "
                                  f"(as in JAX), got boundary={boundary!r}, "
                                  f"fillvalue={fillvalue!r}")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{where}: in1 and in2 must be 2-d, got shapes {np.shape(in1)} and "
                         f"{np.shape(in2)}")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution of in1 and in2, as jax.scipy.signal.convolve2d (boundary='fill'
    with fillvalue=0 only, as JAX).

    >>> sig.convolve2d(jnp.eye(3), jnp.ones((2, 2))).shape     # (4, 4)
    """
    _check_2d(in1, in2, boundary, fillvalue, "convolve2d")
    return _convolve_nd(in1, in2, mode, precision, "convolve2d")


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d cross-correlation of in1 and in2, as jax.scipy.signal.correlate2d (whose
    orientation rules for 'valid' and 'full' with a larger in2 it follows).

    >>> sig.correlate2d(jnp.eye(3), jnp.ones((2, 2)), mode="valid")    # [[2 1] [1 2]]
    """
    where = "correlate2d"
    _check_2d(in1, in2, boundary, fillvalue, where)
    a, b = _direct_check(in1, in2, mode, where)
    swap = all(s1 <= s2 for s1, s2 in zip(a.shape, b.shape))
    same_shape = tuple(a.shape) == tuple(b.shape)
    if mode == "same" or not swap or (mode == "valid" and same_shape):
        return jnp.flip(_convolve_nd(jnp.flip(a), jnp.conj(b), mode, precision, where))
    out = _convolve_nd(jnp.flip(b), jnp.conj(a), mode, precision, where)
    return out if mode == "valid" else jnp.conj(out)


def _fft_check(a, b, mode, axes, where):
    """fftconvolve's checks on unpromoted operands: (normalised axes, whether 'valid' mode
    swaps the operands)."""
    _check_mode(mode, where)
    if axes is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(normalize_axis(ax, a.ndim, where, "axes")
                     for ax in np.atleast_1d(np.asarray(axes)).tolist())
        if len(set(axes)) != len(axes):
            raise ValueError(f"{where}: axes {axes} must be distinct")
    for d in set(range(a.ndim)) - set(axes):
        if a.shape[d] != b.shape[d]:
            raise ValueError(f"{where}: the axes not convolved must have the same length, got "
                             f"shapes {tuple(a.shape)} and {tuple(b.shape)} with axes={axes}")
    _nonempty(a, b, where)
    s1, s2 = [a.shape[d] for d in axes], [b.shape[d] for d in axes]
    swap = mode == "valid" and _swap(s1, s2, a, b, where, "convolved axis (mode 'valid')")
    return axes, swap


def fftconvolve(in1, in2, mode="full", axes=None):
    """The N-d convolution of in1 and in2 through the FFT (rfftn/irfftn for real inputs),
    as jax.scipy.signal.fftconvolve; `axes`: the convolved axes (the others must match).

    >>> sig.fftconvolve(jnp.array([1.0, 2.0, 3.0]), jnp.array([1.0, 1.0]))   # [1 3 5 3]
    """
    where = "fftconvolve"
    a, b = _arrays(in1, in2, where)
    axes, swap = _fft_check(a, b, mode, axes, where)
    a, b = promote_inexact(where, a, b)
    s1, s2 = [a.shape[d] for d in axes], [b.shape[d] for d in axes]
    if swap:
        a, b, s1, s2 = b, a, s2, s1
    full = [x + y - 1 for x, y in zip(s1, s2)]
    if all(x == 1 or y == 1 for x, y in zip(s1, s2)):
        conv = a * b        # (a product of broadcasts: no transform needed)
    elif dtypes.is_complex(a.dtype):
        conv = jnp.fft.ifftn(jnp.fft.fftn(a, full, axes) * jnp.fft.fftn(b, full, axes),
                             full, axes)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(a, full, axes) * jnp.fft.rfftn(b, full, axes),
                              full, axes)
    out = {"full": full, "same": s1, "valid": [x - y + 1 for x, y in zip(s1, s2)]}[mode]
    idx = [slice(None)] * conv.ndim
    for d, f, o in zip(axes, full, out):
        start = (f - o) // 2
        idx[d] = slice(start, start + o)
    return conv[tuple(idx)]


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """data less its least-squares trend along `axis`: 'linear' (a line per piece between
    the breakpoints `bp`) or 'constant' (the mean), as jax.scipy.signal.detrend.

    >>> sig.detrend(jnp.array([1.0, 2.0, 4.0]))                # [ 0.167 -0.333  0.167]
    """
    where = "detrend"
    if overwrite_data is not None:
        raise NotImplementedError(f"{where}: the overwrite_data argument is not implemented")
    if type not in ("constant", "linear"):
        raise ValueError(f"{where}: type must be 'linear' or 'constant', got {type!r}")
    x = jnp.asarray(data) if isinstance(data, (list, tuple)) else asarray_arg(data, where)
    if dtypes.kind(x.dtype) not in "biufc":
        raise TypeError(f"{where}: data must be numeric, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{where}: data must have at least one axis")
    axis = normalize_axis(int_arg(axis, where, "axis"), x.ndim, where, "axis")
    n = x.shape[axis]
    try:
        bps = np.sort(np.unique(np.r_[0, np.asarray(bp, dtype=np.int64).ravel(), n]))
    except (TypeError, ValueError):
        raise TypeError(f"{where}: bp must be an int or a sequence of ints, got {bp!r}") \
            from None
    if type == "linear" and (bps[0] < 0 or bps[-1] > n):
        raise ValueError(f"{where}: breakpoints bp must lie in [0, {n}] (the length of data "
                         f"along axis {axis}), got {bp!r}")
    (x,) = promote_inexact(where, x)
    if type == "constant":
        return x - jnp.mean(x, axis, keepdims=True)
    x = jnp.moveaxis(x, axis, 0)
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        y = x[int(lo):int(hi)]
        m = int(hi - lo)
        if m == 1:          # (a line through one point fits it exactly)
            pieces.append(jnp.zeros_like(y))
            continue
        # the least-squares line, closed form, over t centred on its mean (as JAX's lstsq
        # of [1, t] with t = (1..m)/m, without a solve)
        t = np.arange(1, m + 1) / m
        tc = (t - t.mean()).reshape((m,) + (1,) * (x.ndim - 1))
        tcj = jnp.asarray(tc.astype(np.finfo(np.dtype(x.dtype)).dtype))
        ym = jnp.mean(y, 0, keepdims=True)
        slope = jnp.sum(tcj * (y - ym), 0, keepdims=True) / float(np.sum(tc * tc))
        pieces.append(y - (ym + slope * tcj))
    out = pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, 0)
    return jnp.moveaxis(out, 0, axis)


# the windowed-FFT family lives in signal_spectral.py (it imports detrend from here)
from .signal_spectral import csd, istft, stft, welch  # noqa: E402,F401

# (errors escaping these name the public function, whatever raised them inside)
wrap_namespace(globals(), __all__)
