"""Structured matrices of netcl.scipy.linalg: jax.scipy.linalg's block_diag, toeplitz, hankel,
circulant, leslie, companion, fiedler, fiedler_companion and convolution_matrix (built from
their arguments with netcl operations, so grad, jit and vmap go through them; leading axes
of the vector arguments are batch axes, as JAX vectorizes them), and hilbert, invhilbert,
pascal, invpascal, helmert, hadamard and dft (functions of a Python int n only: built on the
host, exactly, and uploaded as constants).

dtypes follow JAX's: toeplitz, hankel, circulant, leslie, fiedler and block_diag keep their
arguments' promoted dtype (integers stay integers); companion and fiedler_companion promote
to an inexact dtype; hilbert, invhilbert, invpascal and helmert are of the default float
dtype (float64 under x64), pascal is float32 as JAX's, hadamard takes a dtype (default int),
dft a complex dtype (default: the default complex dtype).

Where JAX evaluates binomial coefficients through exp(lgamma) (pascal, invpascal,
invhilbert), the integers are computed exactly here (Python ints) and rounded once to the
result dtype, so the entries are the nearest floats to the true values (JAX's are within a
few ulps of them); entries beyond the dtype's range are +-inf.

>>> import netcl.scipy.linalg as sla
>>> sla.toeplitz(jnp.array([1, 2, 3]), jnp.array([1, 4, 5]))
Array([[1, 4, 5],
       [2, 1, 4],
       [3, 2, 1]], dtype=int32)
"""
import math
import operator

import numpy as np

from ..core import dtypes
from ..numpy._errors import public
from ..numpy._util import asarray_arg

__all__ = ["block_diag", "toeplitz", "hankel", "circulant", "leslie", "companion", "fiedler",
           "fiedler_companion", "convolution_matrix", "hilbert", "invhilbert", "pascal",
           "invpascal", "helmert", "hadamard", "dft"]


def _jnp():
    from .. import numpy as jnp     # (netcl.numpy imports netcl.scipy lazily; keep it so)
    return jnp


def _arg(where, name, v):
    """An array for argument `name` (lists refused, as JAX's check_arraylike refuses them)."""
    if isinstance(v, (list, tuple)):
        raise TypeError(f"{where}: {name} must be an array or a scalar, got "
                        f"{type(v).__name__}; convert it with netcl.numpy.array first")
    return asarray_arg(v, where)


def _promoted(where, named, inexact=False):
    """The (name, value) pairs as arrays of one dtype (JAX's promote_dtypes, or
    promote_dtypes_inexact with inexact=True)."""
    jnp = _jnp()
    xs = [_arg(where, n, v) for n, v in named]
    for (n, _), x in zip(named, xs):
        if dtypes.kind(x.dtype) not in "biufc":
            raise TypeError(f"{where}: {n} must have a numeric dtype, got {x.dtype}")
    dt, weak = dtypes.result_type(*xs)
    if inexact and dtypes.kind(dt) not in "fc":
        dt = dtypes.inexact_dtype(dt, weak)
    return [x if x.dtype == dt else jnp.asarray(x, dtype=dt) for x in xs]


def _n(where, n, lo=0, name="n"):
    """A Python int size argument (static: it decides the result's shape)."""
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be an int, got bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{where}: {name} must be an int (it sets the result's shape), got "
                        f"{type(n).__name__}") from None
    if n < lo:
        raise ValueError(f"{where}: {name} must be {'positive' if lo == 1 else f'>= {lo}'}; "
                         f"got {n}")
    return n


def _broadcast_batch(where, c, r):
    """c (..., m) and r (..., n) with their batch dimensions broadcast together."""
    jnp = _jnp()
    try:
        batch = tuple(np.broadcast_shapes(tuple(c.shape[:-1]), tuple(r.shape[:-1])))
    except ValueError:
        raise ValueError(f"{where}: the batch dimensions of c {tuple(c.shape)} and r "
                         f"{tuple(r.shape)} do not broadcast together") from None
    return (jnp.broadcast_to(c, batch + tuple(c.shape[-1:])),
            jnp.broadcast_to(r, batch + tuple(r.shape[-1:])))


def _exact_float(values, dtype):
    """Python ints (a nested list) rounded once to `dtype`; beyond its range +-inf."""
    big = float(np.finfo(np.float64).max)

    def f(v):
        try:
            return float(v)
        except OverflowError:
            return math.copysign(math.inf, v)
    with np.errstate(over="ignore"):
        out = np.array([[f(v) for v in row] for row in values], np.float64)
        out[np.abs(out) > big] = np.copysign(np.inf, out[np.abs(out) > big])
        return out.astype(dtype)


def _const(host, dtype):
    return _jnp().asarray(host, dtype=dtype)


# ---- matrices built from vectors ----------------------------------------------------------------

def block_diag(*arrs):
    """The block-diagonal matrix of the arguments (scalars, vectors (as one row) and
    matrices), their dtypes promoted; no arguments give an empty (1, 0) matrix of the
    default float dtype.

    >>> sla.block_diag(jnp.ones((1, 1)), 2 * jnp.ones((2, 2)))
    Array([[1., 0., 0.],
           [0., 2., 2.],
           [0., 2., 2.]], dtype=float32)
    """
    where = "scipy.linalg.block_diag"
    jnp = _jnp()
    if not arrs:
        return jnp.zeros((1, 0), dtype=dtypes.default_float_dtype())
    xs = _promoted(where, [(f"arrs[{i}]", a) for i, a in enumerate(arrs)])
    for i, x in enumerate(xs):
        if x.ndim > 2:
            raise ValueError(f"{where}: arguments must have at most 2 dimensions, got shape "
                             f"{tuple(x.shape)} at argument {i}")
    xs = [jnp.atleast_2d(x) for x in xs]
    total = sum(x.shape[1] for x in xs)
    rows, col = [], 0
    for x in xs:
        k = x.shape[1]
        rows.append(jnp.pad(x, ((0, 0), (col, total - k - col))))
        col += k
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (r[0] is ignored; r defaults
    to conj(c), a Hermitian matrix where c[0] is real): T[i, j] = c[i - j] for i >= j, else
    r[j - i]. c (..., m) and r (..., n) give (..., m, n), batch dimensions broadcast;
    scalars are vectors of one element.

    >>> sla.toeplitz(jnp.array([1.0, 2.0, 3.0]))
    Array([[1., 2., 3.],
           [2., 1., 2.],
           [3., 2., 1.]], dtype=float32)
    """
    where = "scipy.linalg.toeplitz"
    jnp = _jnp()
    if r is None:
        c = _arg(where, "c", c)
        r = jnp.conjugate(c)
    c, r = _promoted(where, [("c", c), ("r", r)])
    c, r = _broadcast_batch(where, jnp.atleast_1d(c), jnp.atleast_1d(r))
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return jnp.zeros(tuple(c.shape[:-1]) + (m, n), dtype=c.dtype)
    # every diagonal in one vector: elems[m - 1 - i + j] is T[i, j]
    elems = jnp.concatenate([jnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return jnp.take(elems, jnp.asarray(idx.astype(np.int32)), axis=-1)


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (r[0] is ignored; r defaults
    to zeros): H[i, j] = v[i + j] with v = concatenate([c, r[1:]]). c (..., m) and r
    (..., n) give (..., m, n), batch dimensions broadcast.

    >>> sla.hankel(jnp.array([1, 2, 3]))
    Array([[1, 2, 3],
           [2, 3, 0],
           [3, 0, 0]], dtype=int32)
    """
    where = "scipy.linalg.hankel"
    jnp = _jnp()
    c = _arg(where, "c", c)
    r = jnp.zeros_like(c) if r is None else _arg(where, "r", r)
    if c.ndim == 0:
        raise ValueError(f"{where}: c must be at least 1-dimensional, got a scalar")
    if r.ndim == 0:
        raise ValueError(f"{where}: r must be at least 1-dimensional, got a scalar")
    c, r = _promoted(where, [("c", c), ("r", r)])
    c, r = _broadcast_batch(where, c, r)
    m, n = c.shape[-1], r.shape[-1]
    if m == 0 or n == 0:
        return jnp.zeros(tuple(c.shape[:-1]) + (m, n), dtype=c.dtype)
    v = jnp.concatenate([c, r[..., 1:]], axis=-1)
    idx = np.arange(m)[:, None] + np.arange(n)[None, :]
    return jnp.take(v, jnp.asarray(idx.astype(np.int32)), axis=-1)


def circulant(c):
    """The circulant matrix with first column c: C[i, j] = c[(i - j) % n]; c (..., n) gives
    (..., n, n).

    >>> sla.circulant(jnp.array([1, 2, 3]))
    Array([[1, 3, 2],
           [2, 1, 3],
           [3, 2, 1]], dtype=int32)
    """
    jnp = _jnp()
    c = jnp.atleast_1d(_arg("scipy.linalg.circulant", "c", c))
    n = c.shape[-1]
    idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1)
    return jnp.take(c, jnp.asarray(idx.astype(np.int32)), axis=-1)


def leslie(f, s):
    """The Leslie matrix of fecundity coefficients f (..., n) and survival coefficients s
    (..., n - 1): f its first row, s its first subdiagonal, zeros elsewhere; (..., n, n).

    >>> sla.leslie(jnp.array([0.1, 2.0, 1.0]), jnp.array([0.2, 0.8]))
    Array([[0.1, 2. , 1. ],
           [0.2, 0. , 0. ],
           [0. , 0.8, 0. ]], dtype=float32)
    """
    where = "scipy.linalg.leslie"
    jnp = _jnp()
    f, s = _promoted(where, [("f", f), ("s", s)])
    f, s = jnp.atleast_1d(f), jnp.atleast_1d(s)
    n = f.shape[-1]
    if n < 2:
        raise ValueError(f"{where}: the length of f along the last axis must be at least 2; "
                         f"got shape {tuple(f.shape)}")
    if s.shape[-1] != n - 1:
        raise ValueError(f"{where}: the length of s along the last axis must be one less "
                         f"than that of f; got f of shape {tuple(f.shape)} and s of shape "
                         f"{tuple(s.shape)}")
    f, s = _broadcast_batch(where, f, s)
    below = jnp.pad(s[..., None] * jnp.eye(n - 1, dtype=s.dtype), [(0, 0)] * (s.ndim - 1)
                    + [(1, 0), (0, 1)])
    return below + jnp.pad(f[..., None, :], [(0, 0)] * (f.ndim - 1) + [(0, n - 1), (0, 0)])


def companion(a):
    """The companion matrix of the polynomial with coefficients a (..., n), highest power
    first: first row -a[1:] / a[0], ones on the first subdiagonal; (..., n - 1, n - 1),
    inexact. As JAX's, a[0] == 0 is not checked (inf/NaN entries).

    >>> sla.companion(jnp.array([1.0, -3.0, 2.0]))
    Array([[ 3., -2.],
           [ 1.,  0.]], dtype=float32)
    """
    where = "scipy.linalg.companion"
    jnp = _jnp()
    (a,) = _promoted(where, [("a", a)], inexact=True)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"{where}: the length of a along the last axis must be at least 2; "
                         f"got shape {tuple(a.shape)}")
    m = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    rest = jnp.broadcast_to(jnp.eye(m, dtype=a.dtype, k=-1)[1:], tuple(a.shape[:-1])
                            + (m - 1, m))
    return jnp.concatenate([first[..., None, :], rest], axis=-2)


def fiedler(a):
    """The symmetric Fiedler matrix F[i, j] = |a[i] - a[j]| of a (..., n): (..., n, n).

    >>> sla.fiedler(jnp.array([1, 4, 12]))
    Array([[ 0,  3, 11],
           [ 3,  0,  8],
           [11,  8,  0]], dtype=int32)
    """
    jnp = _jnp()
    a = jnp.atleast_1d(_arg("scipy.linalg.fiedler", "a", a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a (..., n), highest
    power first: a pentadiagonal matrix (..., n - 1, n - 1) whose eigenvalues are the
    polynomial's roots; inexact. As JAX's, a[0] == 0 is not checked.

    >>> sla.fiedler_companion(jnp.array([1.0, -3.0, 2.0]))
    Array([[ 3., -2.],
           [ 1.,  0.]], dtype=float32)
    """
    where = "scipy.linalg.fiedler_companion"
    jnp = _jnp()
    (a,) = _promoted(where, [("a", a)], inexact=True)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(f"{where}: the last axis of a must have nonzero length, got shape "
                         f"{tuple(a.shape)}")
    n = a.shape[-1] - 1
    batch = tuple(a.shape[:-1])
    if n == 0:
        return jnp.zeros(batch + (0, 0), dtype=a.dtype)
    a = a / a[..., :1]
    if n == 1:
        return -a[..., 1:, None]
    # the pentadiagonal pattern (as JAX's): where each entry comes from, decided on the
    # host once: -a[k] (code k >= 1), 1 (code -1) or 0 (code 0)
    code = np.zeros((n, n), np.int32)
    code[0, 0], code[1, 0] = 1, -1
    for i in range(0, n, 2):
        if i + 1 < n:
            code[i, i + 1] = i + 2
        if i + 2 < n:
            code[i, i + 2] = -1
        if i >= 2:
            code[i, i - 1] = i + 1
    for i in range(3, n, 2):
        code[i, i - 2] = -1
    vals = jnp.take(-a, jnp.asarray(np.maximum(code, 0)), axis=-1)
    ones = jnp.asarray((code == -1).astype(np.float64), dtype=a.dtype)
    return jnp.where(jnp.asarray(code > 0), vals, ones)


def convolution_matrix(a, n, mode="full"):
    """The matrix A with A @ v == jnp.convolve(a, v, mode) for v of length n: (k, n), k =
    m + n - 1 ('full'), max(m, n) ('same') or max(m, n) - min(m, n) + 1 ('valid'), m =
    a.shape[-1]; leading axes of a are batch axes.

    >>> sla.convolution_matrix(jnp.array([1, 2]), 3)
    Array([[1, 0, 0],
           [2, 1, 0],
           [0, 2, 1],
           [0, 0, 2]], dtype=int32)
    """
    where = "scipy.linalg.convolution_matrix"
    jnp = _jnp()
    n = _n(where, n, lo=1)
    a = _arg(where, "a", a)
    if a.ndim == 0:
        raise ValueError(f"{where}: a must be at least 1-dimensional, got a scalar")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"{where}: len(a) must be at least 1; got shape {tuple(a.shape)}")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"{where}: mode must be one of 'full', 'valid', 'same'; got "
                         f"{mode!r}")
    pad = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
    az, raz = jnp.pad(a, pad), jnp.pad(jnp.flip(a, axis=-1), pad)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb:length - te], raz[..., length - n - tb:length - tb])


# ---- matrices of a size n only (built on the host) ----------------------------------------------

def hilbert(n):
    """The Hilbert matrix H[i, j] = 1 / (i + j + 1) of order n (default float dtype).

    >>> sla.hilbert(2)
    Array([[1.        , 0.5       ],
           [0.5       , 0.33333334]], dtype=float32)
    """
    n = _n("scipy.linalg.hilbert", n)
    i = np.arange(n, dtype=np.float64)
    return _const(1.0 / (i[:, None] + i[None, :] + 1.0), dtypes.default_float_dtype())


def _binomials(top):
    """Exact binomial coefficients C(a, b) for 0 <= b <= a <= top (Python ints, rows of
    Pascal's triangle)."""
    rows = [[1]]
    for _ in range(top):
        prev = rows[-1]
        rows.append([1] + [prev[k] + prev[k + 1] for k in range(len(prev) - 1)] + [1])
    return lambda a, b: rows[a][b] if 0 <= b <= a else 0


def invhilbert(n):
    """The inverse of the Hilbert matrix of order n (default float dtype): (-1)^(i+j)
    (i + j + 1) C(n + i, n - j - 1) C(n + j, n - i - 1) C(i + j, i)^2, computed exactly and
    rounded once (entries beyond the dtype's range are +-inf).

    >>> sla.invhilbert(2)
    Array([[ 4., -6.],
           [-6., 12.]], dtype=float32)
    """
    n = _n("scipy.linalg.invhilbert", n)
    C = _binomials(2 * n)
    vals = [[(-1) ** (i + j) * (i + j + 1) * C(n + i, n - j - 1) * C(n + j, n - i - 1)
             * C(i + j, i) ** 2 for j in range(n)] for i in range(n)]
    dt = dtypes.default_float_dtype()
    return _const(_exact_float(vals, np.dtype(dt)) if n else np.zeros((0, 0)), dt)


def _kind(where, kind):
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{where}: expected kind to be one of ['symmetric', 'lower', "
                         f"'upper']; got {kind!r}")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix of order n: 'symmetric' (default) C(i + j, i), 'lower' C(i, j) or
    'upper' its transpose; float32, as JAX's (exact where float32 holds the integers).

    >>> sla.pascal(3)
    Array([[1., 1., 1.],
           [1., 2., 3.],
           [1., 3., 6.]], dtype=float32)
    """
    where = "scipy.linalg.pascal"
    n = _n(where, n)
    kind = _kind(where, kind)
    C = _binomials(2 * n)
    if kind == "symmetric":
        vals = [[C(i + j, i) for j in range(n)] for i in range(n)]
    else:
        vals = [[C(i, j) for j in range(n)] for i in range(n)]
    out = _exact_float(vals, np.float32) if n else np.zeros((0, 0), np.float32)
    return _const(out.T if kind == "upper" else out, dtypes.float32)


def invpascal(n, kind=None):
    """The inverse of pascal(n, kind) (default float dtype): 'lower' (-1)^(i - j) C(i, j),
    'upper' its transpose, 'symmetric' upper @ lower; computed exactly, rounded once.

    >>> sla.invpascal(3)
    Array([[ 3., -3.,  1.],
           [-3.,  5., -2.],
           [ 1., -2.,  1.]], dtype=float32)
    """
    where = "scipy.linalg.invpascal"
    n = _n(where, n)
    kind = _kind(where, kind)
    C = _binomials(n)
    low = [[(-1) ** (i - j) * C(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":        # (L^-1)^T L^-1, in integers
        vals = [[sum(low[k][i] * low[k][j] for k in range(max(i, j), n)) for j in range(n)]
                for i in range(n)]
    else:
        vals = low
    dt = dtypes.default_float_dtype()
    out = _exact_float(vals, np.dtype(dt)) if n else np.zeros((0, 0))
    return _const(out.T if kind == "upper" else out, dt)


def helmert(n, full=False):
    """The Helmert matrix of order n (default float dtype): row k - 1 (k = 1 .. n - 1) is
    (1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1)) with k ones, (n - 1, n); with full=True a
    first row of 1 / sqrt(n) is added, (n, n), an orthogonal matrix.

    >>> sla.helmert(3)
    Array([[ 0.70710677, -0.70710677,  0.        ],
           [ 0.4082483 ,  0.4082483 , -0.8164966 ]], dtype=float32)
    """
    where = "scipy.linalg.helmert"
    n = _n(where, n, lo=1)
    if not isinstance(full, (bool, np.bool_)):
        raise TypeError(f"{where}: full must be a bool, got {type(full).__name__}")
    i = np.arange(n - 1)[:, None]
    j = np.arange(n)[None, :]
    k = (i + 1).astype(np.float64)
    d = np.sqrt(k * (k + 1))
    h = np.where(j <= i, 1.0 / d, np.where(j == i + 1, -k / d, 0.0))
    if full:
        h = np.concatenate([np.full((1, n), 1.0 / math.sqrt(n)), h], axis=0)
    return _const(h, dtypes.default_float_dtype())


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix of the Sylvester construction (n a power of 2):
    H_2m = [[H_m, H_m], [H_m, -H_m]], of `dtype` (default int: the default integer dtype).

    >>> sla.hadamard(2)
    Array([[ 1,  1],
           [ 1, -1]], dtype=int32)
    """
    where = "scipy.linalg.hadamard"
    n = _n(where, n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"{where}: n must be a positive power of 2; got {n}")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    dt = dtypes.canonicalize(dtype, where=where)
    return _const(h, dt)


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix W[i, j] = exp(-2 pi i j sqrt(-1) / n), so
    W @ x == jnp.fft.fft(x); scale None, 'sqrtn' (divided by sqrt(n): unitary) or 'n'.
    dtype: a complex dtype (default: the default complex dtype). The phases are reduced
    modulo n in integers first, so entries stay accurate for large n.

    >>> sla.dft(2)                                   # [[1, 1], [1, -1]], complex64
    """
    where = "scipy.linalg.dft"
    n = _n(where, n)
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"{where}: scale must be None, 'sqrtn', or 'n'; got {scale!r}")
    if dtype is None:
        dt = dtypes.default_complex_dtype()
    else:
        dt = dtypes.canonicalize(dtype, where=where)
        if not dtypes.is_complex(dt):
            raise ValueError(f"{where}: dtype must be a complex floating-point type; got "
                             f"{dt}")
    k = np.arange(n, dtype=np.int64)
    w = np.exp(-2j * np.pi * ((k[:, None] * k[None, :]) % max(n, 1)) / max(n, 1))
    if scale == "sqrtn":
        w = w / math.sqrt(n)
    elif scale == "n":
        w = w / n
    return _const(w, dt)


# Errors escaping these functions name them as they are called (scipy.linalg.toeplitz: ...).
for _n_ in __all__:
    _w = globals()[_n_] = public(globals()[_n_], f"scipy.linalg.{_n_}")
    _w.__module__, _w.__qualname__, _w.__name__ = "netcl.scipy.linalg", _n_, _n_
del _n_, _w
