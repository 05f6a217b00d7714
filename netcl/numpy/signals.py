"""jax.numpy's polynomial fitting and calculus (polyder, polyint, polyfit), statistics
(cov, corrcoef), signals (convolve, correlate, gradient) and windows (bartlett, blackman,
hamming, hanning, kaiser, with i0), composed from other netcl.numpy operations (so grad,
jit and vmap work through them); arguments are checked before any kernel runs.

>>> jnp.convolve(jnp.asarray([1.0, 2.0]), jnp.asarray([1.0, 1.0]))    # [1., 3., 2.]
"""
import numpy as np

from ..core import dtypes
from .. import numpy as jnp
from ._composite_util import bool_arg, int_arg, is_array
from .extra_numeric import _arr
from .extra_ops import _axis

__all__ = ["polyder", "polyint", "polyfit", "cov", "corrcoef", "convolve", "correlate",
           "gradient", "i0", "bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _poly1d(p, where):
    p = _arr(p, where)
    if p.ndim != 1:
        raise ValueError(f"{where}: p must be 1-d, got shape {tuple(p.shape)}")
    return p if dtypes.kind(p.dtype) == "f" else p.astype(dtypes.inexact_dtype(p.dtype))


def polyder(p, m=1):
    """The coefficients of the m-th derivative of the polynomial p (highest power first).

    >>> jnp.polyder(jnp.asarray([1.0, 2.0, 3.0]))    # [2., 2.]
    """
    m = int_arg(m, "polyder", "m")
    p = _poly1d(p, "polyder")
    if m < 0:
        raise ValueError(f"polyder: m must be >= 0, got {m}")
    n = p.shape[0]
    if m == 0:
        return p
    if m >= n:
        return jnp.zeros((0,), p.dtype)
    powers = np.arange(n - 1, m - 1, -1)    # the surviving terms' powers
    coef = np.ones(n - m)
    for j in range(m):
        coef = coef * (powers - j)
    return jnp.multiply(p[:n - m], jnp.asarray(coef.astype(p.dtype)))


def polyint(p, m=1, k=None):
    """The coefficients of the m-th antiderivative of p, with integration constants k (k[0]
    for the first integration; a scalar is used for each).

    >>> jnp.polyint(jnp.asarray([3.0, 2.0]))    # [1.5, 2., 0.]
    """
    m = int_arg(m, "polyint", "m")
    if m < 0:
        raise ValueError(f"polyint: m must be >= 0, got {m}")
    if k is not None:
        kk = _arr(k, "polyint")
        if kk.ndim > 1 or kk.ndim == 1 and kk.shape[0] not in (1, m):
            raise ValueError(f"polyint: k must be a scalar or have length m={m}, got shape "
                             f"{tuple(kk.shape)}")
    p = _poly1d(p, "polyint")
    if m == 0:
        return p
    if k is None:
        ks = jnp.zeros((m,), p.dtype)
    else:
        ks = _arr(k, "polyint")
        ks = jnp.reshape(ks, (1,)) if ks.ndim == 0 else ks
        if ks.shape == (1,) and m != 1:
            ks = jnp.broadcast_to(ks, (m,))
        if tuple(ks.shape) != (m,):
            raise ValueError(f"polyint: k must be a scalar or have length m={m}, got shape "
                             f"{tuple(ks.shape)}")
        ks = ks.astype(p.dtype)
    for j in range(m):
        n = p.shape[0]
        div = jnp.asarray(np.arange(n, 0, -1).astype(p.dtype))
        p = jnp.concatenate([jnp.true_divide(p, div), ks[j:j + 1]])
    return p


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y) (highest power first); y may
    be 2-d (one fit per column), w weights the residuals.

    >>> jnp.polyfit(jnp.asarray([0.0, 1.0, 2.0]), jnp.asarray([1.0, 3.0, 5.0]), 1)   # [2., 1.]
    """
    deg = int_arg(deg, "polyfit", "deg", 0)
    if bool_arg(full, "polyfit", "full") or bool_arg(cov, "polyfit", "cov"):
        raise NotImplementedError("polyfit: full=True and cov=True are not supported")
    x, y = _arr(x, "polyfit"), _arr(y, "polyfit")
    if x.ndim != 1 or x.shape[0] == 0:
        raise (TypeError if x.ndim != 1 else ValueError)(
            f"polyfit: x must be a non-empty 1-d array, got shape {tuple(x.shape)}")
    if y.ndim not in (1, 2) or y.shape[0] != x.shape[0]:
        raise TypeError(f"polyfit: y must be 1-d or 2-d with len(x)={x.shape[0]} rows, got "
                        f"shape {tuple(y.shape)}")
    dt = jnp.result_type(x, y, 1.0)
    x, y = x.astype(dt), y.astype(dt)
    lhs = jnp.vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = _arr(w, "polyfit")
        if tuple(w.shape) != (x.shape[0],):
            raise TypeError(f"polyfit: w must have shape ({x.shape[0]},), got {tuple(w.shape)}")
        w = w.astype(dt)
        lhs = jnp.multiply(lhs, w[:, None])
        rhs = jnp.multiply(rhs, w if rhs.ndim == 1 else w[:, None])
    scale = jnp.sqrt(jnp.sum(jnp.multiply(lhs, lhs), axis=0))
    scale = jnp.where(jnp.equal(scale, 0), 1, scale)
    lhs = jnp.true_divide(lhs, scale)
    c = jnp.linalg.lstsq(lhs, rhs, rcond=rcond)[0]
    return jnp.true_divide(c, scale if c.ndim == 1 else scale[:, None])


# ---- statistics ---------------------------------------------------------------------------------

def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in m's rows (columns with rowvar=False), with
    y's appended; divided by N - 1 (N with bias=True, N - ddof with ddof).

    >>> jnp.cov(jnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))    # [[1., -1.], [-1., 1.]]
    """
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    rowvar = bool_arg(rowvar, "cov", "rowvar")
    bias = bool_arg(bias, "cov", "bias")
    if ddof is not None:
        ddof = int_arg(ddof, "cov", "ddof")
    m = _arr(m, "cov")
    if m.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions (shape {tuple(m.shape)})")
    X = jnp.atleast_2d(m)
    if not rowvar and X.shape[0] != 1:
        X = X.T
    if y is not None:
        y = _arr(y, "cov")
        if y.ndim > 2:
            raise ValueError(f"cov: y has more than 2 dimensions (shape {tuple(y.shape)})")
        Y = jnp.atleast_2d(y)
        if not rowvar and Y.shape[0] != 1:
            Y = Y.T
        if Y.shape[1] != X.shape[1]:
            raise ValueError(f"cov: m and y have {X.shape[1]} and {Y.shape[1]} observations")
        X = jnp.concatenate([X, Y], axis=0)
    if X.shape[0] == 0:
        return jnp.zeros((0, 0), dtypes.inexact_dtype(X.dtype, X.weak_type))
    if dtypes.kind(X.dtype) != "f":
        X = X.astype(dtypes.inexact_dtype(X.dtype, X.weak_type))
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    if n == 0:   # no observations: NaN (as NumPy and JAX give)
        return jnp.squeeze(jnp.full((X.shape[0], X.shape[0]), np.nan, X.dtype))
    Xc = jnp.subtract(X, jnp.mean(X, axis=1, keepdims=True))
    c = jnp.true_divide(jnp.matmul(Xc, jnp.conj(Xc.T)), float(n - ddof))   # (Hermitian)
    return jnp.squeeze(c)


def corrcoef(x, y=None, rowvar=True):
    """Pearson correlation coefficients (cov normalised by the standard deviations, clipped
    to [-1, 1]).

    >>> jnp.corrcoef(jnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.5]]))[0, 1]    # -0.98...
    """
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return jnp.true_divide(c, c)
    d = jnp.sqrt(jnp.diagonal(c))
    c = jnp.true_divide(jnp.true_divide(c, d[:, None]), d[None, :])
    return jnp.clip(c, -1, 1)


# ---- signals ------------------------------------------------------------------------------------

def _conv1d(a, v, mode, where, flip_v, precision, preferred_element_type):
    from ..lax import conv_general_dilated
    a, v = _arr(a, where), _arr(v, where)
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"{where}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{where}: a and v must be 1-d, got shapes {tuple(a.shape)} and "
                         f"{tuple(v.shape)}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{where}: a and v must not be empty")
    dt = jnp.result_type(a, v)
    if dtypes.kind(dt) != "f":
        dt = dtypes.inexact_dtype(dt)
    a, v = a.astype(dt), v.astype(dt)
    if not flip_v and dtypes.is_complex(dt):    # correlate conjugates v (as NumPy and JAX)
        v = jnp.conj(v)
    reverse = False
    if a.shape[0] < v.shape[0]:
        a, v = v, a
        reverse = not flip_v
    if flip_v:
        v = jnp.flip(v)
    k = v.shape[0]
    pad = {"valid": (0, 0), "same": (k // 2, k - k // 2 - 1), "full": (k - 1, k - 1)}[mode]
    out = conv_general_dilated(a[None, None], v[None, None], (1,), [pad], precision=precision,
                               preferred_element_type=preferred_element_type)[0, 0]
    return jnp.flip(out) if reverse else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of 1-d a and v (mode 'full', 'same' or 'valid').

    >>> jnp.convolve(jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([0.0, 1.0]))   # [0., 1., 2., 3.]
    """
    return _conv1d(a, v, mode, "convolve", True, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of 1-d a and v: c[k] = sum_n a[n + k] * conj(v[n]) (mode
    'valid', 'same' or 'full').

    >>> jnp.correlate(jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([0.0, 1.0]))    # [2., 3.]
    """
    return _conv1d(a, v, mode, "correlate", False, precision, preferred_element_type)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled f: central differences inside, one-sided at the edges; one
    array per axis (a single array for one axis). Spacings are scalars (one, or one per axis).

    >>> jnp.gradient(jnp.asarray([1.0, 2.0, 4.0, 7.0]))    # [1., 1.5, 2.5, 3.]
    """
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError("gradient: only edge_order=1 is supported")
    f = _arr(f, "gradient")
    if f.ndim == 0:
        raise ValueError("gradient: f must be at least 1-d")
    if axis is None:
        axes = list(range(f.ndim))
    else:
        axes = [_axis(ax, f.ndim, "gradient") for ax in
                (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if not varargs:
        hs = [1.0] * len(axes)
    elif len(varargs) == 1:
        hs = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        hs = list(varargs)
    else:
        raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
    for h in hs:
        if is_array(h) and h.ndim != 0 or isinstance(h, (list, tuple, np.ndarray)) and \
                np.ndim(h) != 0:
            raise NotImplementedError("gradient: only scalar spacings are supported")
        if not (is_array(h) or isinstance(h, (int, float, np.number))) or \
                isinstance(h, (bool, np.bool_)):
            raise TypeError(f"gradient: spacing must be a number, got {type(h).__name__}")
    for ax in axes:
        if f.shape[ax] < 2:
            raise ValueError(f"gradient: the shape of f along axis {ax} must be at least 2 "
                             f"(edge_order + 1), got {f.shape[ax]}")
    if dtypes.kind(f.dtype) != "f":
        f = f.astype(dtypes.inexact_dtype(f.dtype, f.weak_type))
    out = []
    for ax, h in zip(axes, hs):
        n = f.shape[ax]

        def sl(lo, hi, ax=ax):
            return jnp.take(f, jnp.arange(lo, hi), axis=ax)
        first = jnp.subtract(sl(1, 2), sl(0, 1))
        last = jnp.subtract(sl(n - 1, n), sl(n - 2, n - 1))
        parts = [first]
        if n > 2:
            parts.append(jnp.multiply(jnp.subtract(sl(2, n), sl(0, n - 2)), 0.5))
        parts.append(last)
        g = jnp.concatenate(parts, axis=ax)
        out.append(jnp.true_divide(g, h))
    return out[0] if len(out) == 1 else out


# ---- windows ------------------------------------------------------------------------------------

def i0(x):
    """The modified Bessel function of the first kind, order 0 (a power series for |x| <= 15,
    the asymptotic expansion beyond).

    >>> jnp.i0(jnp.asarray([0.0, 1.0]))    # [1., 1.266...]
    """
    x = _arr(x, "i0")
    from .math import _no_complex
    _no_complex("i0", x)
    if dtypes.kind(x.dtype) != "f":
        x = x.astype(dtypes.inexact_dtype(x.dtype, x.weak_type))
    ax = jnp.abs(x)
    small = jnp.less_equal(ax, 15.0)
    xs = jnp.where(small, ax, 0.0)
    q = jnp.multiply(jnp.multiply(xs, xs), 0.25)
    term = jnp.ones_like(xs)
    total = term
    for k in range(1, 60):
        term = jnp.multiply(term, jnp.true_divide(q, float(k * k)))
        total = jnp.add(total, term)
    xl = jnp.where(small, 16.0, ax)
    inv = jnp.true_divide(1.0, jnp.multiply(xl, 8.0))
    series = jnp.ones_like(xl)
    t = jnp.ones_like(xl)
    for k in range(1, 12):
        t = jnp.multiply(t, jnp.multiply(inv, float((2 * k - 1) ** 2) / k))
        series = jnp.add(series, t)
    big = jnp.multiply(jnp.true_divide(jnp.exp(xl), jnp.sqrt(jnp.multiply(xl, 2 * np.pi))),
                       series)
    return jnp.where(small, total, big)


def _window_m(M, where):
    M = int_arg(M, where, "M")
    return M


def _window(M, where, coeffs):
    M = _window_m(M, where)
    dt = dtypes.default_float_dtype()    # (windows are of the default float, as in JAX)
    if M < 1:
        return jnp.zeros((0,), dt)
    if M == 1:
        return jnp.ones((1,), dt)
    n = jnp.arange(1 - M, M, 2).astype(dt)
    out = None
    for j, c in enumerate(coeffs):
        t = jnp.full((M,), c, dt) if j == 0 else \
            jnp.multiply(jnp.cos(jnp.multiply(n, j * np.pi / (M - 1))), c)
        out = t if out is None else jnp.add(out, t)
    return out


def bartlett(M):
    """The Bartlett (triangular) window of M points.

    >>> jnp.bartlett(5)    # [0., 0.5, 1., 0.5, 0.]
    """
    M = _window_m(M, "bartlett")
    dt = dtypes.default_float_dtype()
    if M < 1:
        return jnp.zeros((0,), dt)
    if M == 1:
        return jnp.ones((1,), dt)
    n = jnp.arange(1 - M, M, 2).astype(dt)
    return jnp.subtract(1.0, jnp.true_divide(jnp.abs(n), float(M - 1)))


def blackman(M):
    """The Blackman window of M points. >>> jnp.blackman(3)    # [0., 1., 0.] (about)"""
    return _window(M, "blackman", (0.42, 0.5, 0.08))


def hamming(M):
    """The Hamming window of M points. >>> jnp.hamming(3)    # [0.08, 1., 0.08]"""
    return _window(M, "hamming", (0.54, 0.46))


def hanning(M):
    """The Hann window of M points. >>> jnp.hanning(3)    # [0., 1., 0.]"""
    return _window(M, "hanning", (0.5, 0.5))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta.

    >>> jnp.kaiser(3, 5.0)    # [0.0367, 1., 0.0367]
    """
    M = _window_m(M, "kaiser")
    dt = dtypes.default_float_dtype()
    if isinstance(beta, (bool, np.bool_)) or not (isinstance(beta, (int, float, np.number))
                                                 or is_array(beta) and beta.ndim == 0):
        raise TypeError(f"kaiser: beta must be a scalar, got {type(beta).__name__} {beta!r}")
    if M < 1:
        return jnp.zeros((0,), dt)
    if M == 1:
        return jnp.ones((1,), dt)
    alpha = (M - 1) / 2.0
    n = jnp.arange(M).astype(dt)
    r = jnp.true_divide(jnp.subtract(n, alpha), alpha)
    arg = jnp.multiply(jnp.sqrt(jnp.clip(jnp.subtract(1.0, jnp.multiply(r, r)), 0.0, None)),
                       beta)
    b = jnp.asarray(beta, dt) if not is_array(beta) else beta.astype(dt)
    return jnp.true_divide(i0(arg), i0(b)).astype(dt)
