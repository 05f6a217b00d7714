"""Decompositions and solvers of netcl.numpy.linalg (jax.numpy.linalg's names and conventions).

cholesky, solve, inv, det, slogdet, eigh, eigvalsh, svd, svdvals, qr, lstsq, pinv,
matrix_power, matrix_rank, cond, and the matrix norms that need singular values (norm's
ord=2, -2, 'nuc'); tensorinv and tensorsolve on them: linalg_tensor.py.

The factorizations are the host primitives of `netcl.primitives.linalg_host` (NumPy's
LAPACK on the operands downloaded from the device: the transfer is the cost), each with jvp,
vjp and batching rules, so everything here works under grad, jit and vmap; the rest is
composed from netcl operations. Matrices are the last two axes and leading axes are batch
axes (broadcast where two operands meet, as JAX vectorizes). Integer and bool operands become
the default float (float32) as jax.numpy.linalg promotes them; float16 and bfloat16 are
refused (as JAX's LAPACK kernels refuse them); every argument is checked before anything
runs, and errors name the function (``linalg.solve: ...``). As in JAX a failed
factorization gives NaN, not an exception: cholesky of a matrix that is not positive
definite, solve with a singular matrix.

complex64 and complex128 operands work as in JAX (on the host: LAPACK's complex routines):
"symmetric" means Hermitian (cholesky's a = L L^H, eigh's real eigenvalues, symmetrize_input's
(a + a^H) / 2), transposes in the formulas are conjugate transposes (pinv, lstsq, svd's
hermitian=True), singular values, eigh's eigenvalues, slogdet's logabsdet, lstsq's residuals
and the norms are real, slogdet's sign is complex of modulus 1.

>>> import netcl.numpy as jnp
>>> a = jnp.array([[4.0, 2.0], [2.0, 3.0]])
>>> jnp.linalg.solve(a, jnp.array([1.0, 2.0]))      # [-0.125, 0.75]
>>> jnp.linalg.slogdet(a)                            # SlogdetResult(sign=1.0, logabsdet=2.0794)
"""
import operator
from typing import NamedTuple

import numpy as np

from ..core import dtypes
from ..core.shapes import IncompatibleShapesError, normalize_axis
from ..primitives import linalg_host as lh
from ..primitives import views
from ..primitives.elementwise import convert_element_type
from ..transforms.custom import custom_jvp
from ._errors import public
from ._util import asarray_arg, is_array
from .linalg_ops import norm as _norm_ops

__all__ = ["cholesky", "solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "svd", "svdvals",
           "qr", "lstsq", "pinv", "matrix_power", "matrix_rank", "cond", "norm", "EighResult",
           "QRResult", "SlogdetResult", "SVDResult"]


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _jnp():
    from .. import numpy as jnp     # (netcl.numpy imports this module)
    return jnp


# ---- argument checks (all before anything runs) -----------------------------------------------

def _floats(where, named, check=None):
    """The (name, value) pairs as arrays promoted to one inexact (float or complex) dtype
    (JAX's promote_dtypes_inexact: ints and bools become float32, a float meeting a complex
    becomes complex). Lists are refused as JAX refuses them; `check(*shapes)` raises for
    shapes the caller rejects; the conversions run last."""
    xs = [asarray_arg(v, where) for _, v in named]
    for (name, _), x in zip(named, xs):
        if dtypes.kind(x.dtype) not in "biufc":
            raise TypeError(f"{where}: {name} must have a numeric dtype, got {x.dtype}")
    dt, weak = dtypes.result_type(*xs)
    if dtypes.kind(dt) not in "fc":
        dt = dtypes.inexact_dtype(dt, weak)
    if dt in dtypes.STORAGE_FLOATS:
        raise TypeError(f"{where}: {dt} operands are not supported (LAPACK has no 16- "
                        "or 8-bit precision, and jax.numpy.linalg refuses them too); convert with "
                        ".astype(jnp.float32)")
    if check is not None:
        check(*[tuple(x.shape) for x in xs])
    return [x if x.dtype == dt else convert_element_type(x, dt) for x in xs]


def _matrix_check(where, name="a", square=True):
    def check(shape, *_):
        if len(shape) < 2:
            raise ValueError(f"{where}: {name} must have at least two dimensions, shape "
                             f"(..., {'n, n' if square else 'm, n'}), got shape {shape}")
        if square and shape[-1] != shape[-2]:
            raise ValueError(f"{where}: {name} must be square in its last two dimensions, "
                             f"shape (..., n, n), got shape {shape}")
    return check


def _square(where, a, name="a"):
    return _floats(where, [(name, a)], _matrix_check(where, name))[0]


def _bool(where, name, v):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def _mT(x):
    return lh._mT(x)


def _mH(x):
    """The conjugate transpose (the transpose of a real x)."""
    return lh._mH(x)


def _symmetrize(x):
    """(x + x^H) / 2: the Hermitian (real: symmetric) part, as JAX's symmetrize."""
    return (x + _mH(x)) * 0.5


def _eps(dtype):
    return float(dtypes.finfo(np.dtype(dtype)).eps)


def _eye_like(a):
    """The identity broadcast to a's (..., n, n) shape."""
    jnp = _jnp()
    return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), tuple(a.shape))


# ---- cholesky, solve, inv ---------------------------------------------------------------------

def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of each positive-definite matrix of `a` (..., n, n): lower L with
    a = L L^H, or upper U = L^H with a = U^H U (^H: the conjugate transpose, the transpose of
    real matrices). With symmetrize_input (the default) the factor of (a + a^H) / 2 is
    computed, which keeps gradients symmetric (Hermitian); otherwise only a's lower triangle
    is read. NaN where a matrix is not positive definite (as JAX).

    >>> jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array([[2.       , 0.       ],
           [1.       , 1.4142135]], dtype=float32)
    """
    where = "linalg.cholesky"
    upper = _bool(where, "upper", upper)
    symmetrize_input = _bool(where, "symmetrize_input", symmetrize_input)
    a = _square(where, a)
    L = lh.cholesky_p.bind(_symmetrize(a) if symmetrize_input else a)
    return _mH(L) if upper else L


def _solve_shapes(where, sa, sb):
    """(batch shape, b is a vector) of solve(a, b), or a ValueError naming the shapes."""
    _matrix_check(where, "a")(sa)
    n = sa[-1]
    if len(sb) == 0:
        raise ValueError(f"{where}: b must have shape (n,) or (..., n, k), got a scalar")
    if len(sb) == 1:
        if sb[0] != n:
            raise ValueError(f"{where}: b of shape {sb} does not match a of shape {sa}: "
                             f"b needs {n} rows")
        return sa[:-2], True
    if len(sa) == len(sb) + 1 and sa[-1] == sb[-1] and sa[-1] != sb[-2]:
        # (what JAX before 0.5 solved as a batch of vectors; JAX refuses it now)
        raise ValueError(f"{where}: invalid shapes a {sa}, b {sb}: b of shape (..., n, k) "
                         "needs n rows; for a batch of vectors use solve(a, b[..., None])"
                         "[..., 0]")
    if sb[-2] != n:
        raise ValueError(f"{where}: b of shape {sb} does not match a of shape {sa}: b must "
                         f"have shape (..., {n}, k)")
    try:
        batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    except ValueError:
        raise IncompatibleShapesError(f"{where}: the batch dimensions of a {sa} and b {sb} "
                                      "do not broadcast together") from None
    return batch, False


def _solve(a, b, vector, batch):
    """solve_p on operands broadcast to the batch shape; a vector b solved as one column."""
    n = a.shape[-1]
    a = views.broadcast_to_rank(a, batch + (n, n))
    if vector:
        b = views.broadcast_to_rank(views.reshape(b, (n, 1)), batch + (n, 1))
        return views.reshape(lh.solve_p.bind(a, b), batch + (n,))
    b = views.broadcast_to_rank(b, batch + tuple(b.shape[-2:]))
    return lh.solve_p.bind(a, b)


def solve(a, b):
    """x with a @ x = b: a (..., n, n); b (n,) (one vector: x (..., n)) or (..., n, k),
    batch dimensions broadcast. Singular matrices give inf/NaN (as JAX).

    >>> jnp.linalg.solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.array([1.0, 1.0]))
    Array([0.5 , 0.25], dtype=float32)
    """
    where = "linalg.solve"
    shapes = []
    a, b = _floats(where, [("a", a), ("b", b)],
                   lambda sa, sb: shapes.append(_solve_shapes(where, sa, sb)))
    batch, vector = shapes[0]
    return _solve(a, b, vector, batch)


def inv(a):
    """The inverse of each square matrix of `a` (..., n, n): solve(a, I).

    >>> jnp.linalg.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    a = _square("linalg.inv", a)
    return lh.solve_p.bind(a, _eye_like(a))


# ---- determinants -----------------------------------------------------------------------------

def slogdet(a, *, method=None):
    """(sign, log|det|) of each square matrix of `a` (..., n, n), each of shape a.shape[:-2];
    sign 0 and logabsdet -inf for a singular matrix; for complex a the sign is det / |det|
    (complex, differentiable as JAX's) and logabsdet real. method: None or 'lu' (LAPACK's
    LU), or 'qr' (accepted for JAX's signature; computed by the same LU).

    >>> jnp.linalg.slogdet(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    SlogdetResult(sign=Array(-1., dtype=float32), logabsdet=Array(0.6931472, dtype=float32))
    """
    where = "linalg.slogdet"
    if method not in (None, "lu", "qr"):
        raise ValueError(f"{where}: unknown method {method!r}; supported: 'lu' (None) and "
                         "'qr'")
    a = _square(where, a)
    return SlogdetResult(*lh.slogdet_p.bind(a))


def _det_small(a):
    """The 2x2 and 3x3 determinant formulas (as JAX's): differentiable at singular matrices
    too, where the gradient through slogdet would be NaN."""
    def e(i, j):
        return a[..., i, j]
    if a.shape[-1] == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    return (e(0, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1))
            - e(0, 1) * (e(1, 0) * e(2, 2) - e(1, 2) * e(2, 0))
            + e(0, 2) * (e(1, 0) * e(2, 1) - e(1, 1) * e(2, 0)))


def det(a):
    """The determinant of each square matrix of `a` (..., n, n), shape a.shape[:-2]. 2x2 and
    3x3 matrices use the explicit formulas (differentiable everywhere); larger ones sign *
    exp(logabsdet) from slogdet, whose gradient det * inv(a)^T is NaN at singular matrices.

    >>> jnp.linalg.det(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(-2., dtype=float32)
    """
    a = _square("linalg.det", a)
    if a.shape[-1] in (2, 3):
        return _det_small(a)
    sign, logdet = lh.slogdet_p.bind(a)
    return sign * _jnp().exp(logdet)


# ---- eigh -------------------------------------------------------------------------------------

def _uplo(where, UPLO):
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"{where}: UPLO must be one of None, 'L', or 'U', got {UPLO!r}")


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending, (..., n), real) and eigenvectors (columns, (..., n, n)) of
    each symmetric (complex: Hermitian) matrix of `a`. With symmetrize_input (the default)
    the decomposition of (a + a^H) / 2, which keeps gradients symmetric; otherwise only the
    triangle UPLO ('L' default, or 'U') is read. Gradients need distinct eigenvalues (as
    JAX's; complex eigenvectors: of functions that do not depend on their phases).

    >>> w, v = jnp.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    Array([1., 3.], dtype=float32)
    """
    where = "linalg.eigh"
    lower = _uplo(where, UPLO)
    symmetrize_input = _bool(where, "symmetrize_input", symmetrize_input)
    a = _square(where, a)
    w, v = lh.eigh_p.bind(_symmetrize(a) if symmetrize_input else a, lower=lower)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues (ascending) of each symmetric matrix of `a`: eigh(a)[0].

    >>> jnp.linalg.eigvalsh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
    Array([1., 3.], dtype=float32)
    """
    where = "linalg.eigvalsh"
    lower = _uplo(where, UPLO)
    symmetrize_input = _bool(where, "symmetrize_input", symmetrize_input)
    a = _square(where, a)
    return lh.eigh_p.bind(_symmetrize(a) if symmetrize_input else a, lower=lower)[0]


# ---- svd --------------------------------------------------------------------------------------

def _svd_hermitian(a):
    """The SVD of symmetric (Hermitian) matrices from eigh (as JAX's hermitian=True):
    singular values |w| in descending order, u the eigenvectors in that order,
    vh = (u * sign(w))^H."""
    jnp = _jnp()
    w, v = lh.eigh_p.bind(_symmetrize(a), lower=True)
    s = jnp.abs(w)
    order = jnp.flip(jnp.argsort(s, axis=-1), axis=-1)   # (JAX: a stable sort, reversed)
    s = jnp.take_along_axis(s, order, axis=-1)
    sign = jnp.take_along_axis(jnp.sign(w), order, axis=-1)
    u = jnp.take_along_axis(v, lh._row(order), axis=-1)
    return u, s, _mH(u * lh._row(sign))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """The singular value decomposition a = U diag(S) Vh of each matrix of `a` (..., m, n),
    k = min(m, n): U (..., m, k), S (..., k) descending, Vh (..., k, n). Only the reduced
    decomposition is computed: full_matrices=True (the default, as in JAX) is accepted for
    square matrices, where both agree, and for compute_uv=False; for a non-square matrix
    pass full_matrices=False. Gradients need distinct nonzero singular values where U or Vh
    are used (a loss of S alone is differentiable everywhere).

    >>> u, s, vh = jnp.linalg.svd(jnp.array([[3.0, 0.0], [0.0, -2.0]]))
    >>> s
    Array([3., 2.], dtype=float32)
    """
    where = "linalg.svd"
    full_matrices = _bool(where, "full_matrices", full_matrices)
    compute_uv = _bool(where, "compute_uv", compute_uv)
    hermitian = _bool(where, "hermitian", hermitian)
    if subset_by_index is not None:
        raise NotImplementedError(f"{where}: subset_by_index is not supported (JAX has it "
                                  "on TPU only)")

    def check(shape):
        _matrix_check(where, square=hermitian)(shape)
        if compute_uv and full_matrices and shape[-1] != shape[-2]:
            raise NotImplementedError(
                f"{where}: full_matrices=True for a non-square matrix (shape {shape}) is not "
                "implemented: only the reduced SVD is; pass full_matrices=False")
    a = _floats(where, [("a", a)], check)[0]
    u, s, vh = _svd_hermitian(a) if hermitian else lh.svd_p.bind(a)
    return SVDResult(u, s, vh) if compute_uv else s


def svdvals(x):
    """The singular values (descending) of each matrix of `x`: svd(x, compute_uv=False).

    >>> jnp.linalg.svdvals(jnp.array([[3.0, 0.0], [0.0, -2.0]]))
    Array([3., 2.], dtype=float32)
    """
    x = _floats("linalg.svdvals", [("x", x)], _matrix_check("linalg.svdvals", "x", False))[0]
    return lh.svd_p.bind(x)[1]


# ---- qr ---------------------------------------------------------------------------------------

def qr(a, mode="reduced"):
    """The QR decomposition a = Q R of each matrix of `a` (..., m, n), k = min(m, n):
    Q (..., m, k) with orthonormal columns, R (..., k, n) upper triangular. mode 'reduced'
    (default; 'full' is its old NumPy name, as in JAX) returns (Q, R), 'r' returns R;
    'complete' equals 'reduced' where m <= n and is not implemented for m > n; 'raw' is not
    implemented.

    >>> q, r = jnp.linalg.qr(jnp.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> r
    Array([[-5. , -2.2],
           [ 0. ,  0.4]], dtype=float32)
    """
    where = "linalg.qr"
    if not isinstance(mode, str) or mode not in ("reduced", "r", "full", "complete", "raw"):
        raise ValueError(f"{where}: unsupported QR decomposition mode {mode!r}; supported: "
                         "'reduced', 'complete', 'r'")

    def check(shape):
        _matrix_check(where, square=False)(shape)
        if mode == "raw" or (mode == "complete" and shape[-2] > shape[-1]):
            raise NotImplementedError(
                f"{where}: mode={mode!r} is not implemented"
                + (f" for m > n (shape {shape}): only the reduced Q (..., m, min(m, n)) is "
                   "computed" if mode == "complete" else " (LAPACK's Householder form)"))
    a = _floats(where, [("a", a)], check)[0]
    q, r = lh.qr_p.bind(a)
    return r if mode == "r" else QRResult(q, r)


# ---- least squares and the pseudo-inverse -----------------------------------------------------

def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution of a @ x = b through the SVD, with JAX's outputs
    (x, resid, rank, s): a (m, n); b (m,) or (m, k); x (n,) or (n, k); resid the squared
    residual norm of each column of b ((1,) for a vector b, as JAX), always computed unless
    numpy_resid=True, which gives an empty array where NumPy does (rank < n or m <= n;
    needs a concrete rank: not under jit); rank (int32) counts the singular values at least
    rcond * s[0] (default eps * max(m, n)); s the singular values of a.

    >>> x, resid, rank, s = jnp.linalg.lstsq(jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
    ...                                      jnp.array([1.0, 1.0, 3.0]))
    >>> x
    Array([1.3333334, 1.3333334], dtype=float32)
    """
    where = "linalg.lstsq"
    jnp = _jnp()

    def check(sa, sb):
        if len(sa) != 2:
            raise TypeError(f"{where}: a must be two-dimensional, got shape {sa}")
        if len(sb) not in (1, 2):
            raise TypeError(f"{where}: b must be one- or two-dimensional, got shape {sb}")
        if sa[0] != sb[0]:
            raise ValueError(f"{where}: the leading dimensions of a {sa} and b {sb} must "
                             "match")
    a, b = _floats(where, [("a", a), ("b", b)], check)
    numpy_resid = _bool(where, "numpy_resid", numpy_resid)
    vector = b.ndim == 1
    if vector:
        b = views.reshape(b, (b.shape[0], 1))
    m, n = a.shape
    eps = _eps(a.dtype)
    real = lh._real_dtype(a.dtype)      # (of s and resid)
    if m == 0 or n == 0:
        s = jnp.zeros((0,), real)
        rank = jnp.asarray(0, dtype=jnp.int32)
        x = jnp.zeros((n, b.shape[1]), a.dtype)
    else:
        if rcond is None:
            rcond = eps * max(m, n)
        elif isinstance(rcond, (int, float)):
            rcond = eps if rcond < 0 else float(rcond)
        else:
            rcond = jnp.where(rcond < 0, eps, rcond)
        u, s, vh = lh.svd_p.bind(a)
        mask = (s > 0) & (s >= s[0] * rcond)
        rank = jnp.sum(mask)
        s_inv = jnp.where(mask, 1.0 / jnp.where(mask, s, 1.0), 0.0)
        x = jnp.matmul(_mH(vh), lh._col(s_inv) * jnp.matmul(_mH(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = jnp.zeros((0,), real)
    else:
        r = b - jnp.matmul(a, x)
        if lh._is_complex(r):       # (|r|^2 as JAX's norm(r) ** 2)
            r = jnp.abs(r)
        resid = jnp.sum(r * r, axis=0)
    if vector:
        x = views.reshape(x, (n,))
    return x, resid, rank, s


def _pinv_impl(a, rtol, hermitian):
    jnp = _jnp()
    m, n = a.shape[-2:]
    batch = tuple(a.shape[:-2])
    if m == 0 or n == 0:
        return jnp.zeros(batch + (n, m), a.dtype)
    if rtol is None:
        rtol = 10.0 * max(m, n) * _eps(a.dtype)
    u, s, vh = _svd_hermitian(a) if hermitian else lh.svd_p.bind(a)
    rtol = jnp.asarray(rtol, dtype=s.dtype)
    cutoff = lh._col(rtol) * s[..., :1] if rtol.ndim else rtol * s[..., :1]
    s = jnp.where(s > cutoff, s, np.inf)          # (1 / inf: the dropped directions)
    return jnp.matmul(_mH(vh), _mH(u) / lh._col(s))


_pinv = custom_jvp(_pinv_impl, nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    # The derivative of the pseudo-inverse of constant rank (Golub and Pereyra 1973): valid
    # where singular values are dropped, where differentiating through the SVD is not
    (a,), (da,) = primals, tangents
    mm = _jnp().matmul
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a, da = _symmetrize(a), _symmetrize(da)
    m, n = a.shape[-2:]
    if m >= n:
        s = mm(mm(p, _mH(p)), _mH(da))
        t = mm(mm(_mH(da), _mH(p)), p)
        dp = -mm(mm(p, da), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(_mH(p), _mH(da)))
        t = mm(_mH(da), mm(_mH(p), p))
        dp = -mm(p, mm(da, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, dp


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse of each matrix of `a` (..., m, n) -> (..., n, m),
    through the SVD: singular values at most rtol * the largest are dropped (default rtol
    10 * max(m, n) * eps, as JAX's, not NumPy's 1e-15). rcond is rtol's old name. The
    gradient is the constant-rank formula (as JAX's custom rule).

    >>> jnp.linalg.pinv(jnp.array([[1.0, 0.0], [0.0, 0.0]]))
    Array([[1., 0.],
           [0., 0.]], dtype=float32)
    """
    where = "linalg.pinv"
    if rcond is not None:
        if rtol is not None:
            raise ValueError(f"{where}: only one of rtol and rcond may be specified")
        rtol = rcond
    hermitian = _bool(where, "hermitian", hermitian)
    a = _floats(where, [("a", a)], _matrix_check(where, square=hermitian))[0]
    if rtol is not None and not (is_array(rtol) or isinstance(rtol, (int, float, np.number))):
        raise TypeError(f"{where}: rtol must be a number or an array, got "
                        f"{type(rtol).__name__}")
    return _pinv(a, rtol, hermitian)


# ---- powers, rank, condition number -----------------------------------------------------------

def matrix_power(a, n):
    """a @ a @ ... (n factors) for each square matrix of `a` by repeated squaring; n = 0
    gives the identity, n < 0 powers of inv(a). Integer matrices stay integer for n >= 0.

    >>> jnp.linalg.matrix_power(jnp.array([[1.0, 1.0], [0.0, 1.0]]), 3)
    Array([[1., 3.],
           [0., 1.]], dtype=float32)
    """
    where = "linalg.matrix_power"
    jnp = _jnp()
    arr = asarray_arg(a, where)
    if arr.ndim < 2:
        raise TypeError(f"{where}: a must be at least two-dimensional, got shape "
                        f"{tuple(arr.shape)}")
    if arr.shape[-1] != arr.shape[-2]:
        raise TypeError(f"{where}: the last two dimensions of a must be square, got shape "
                        f"{tuple(arr.shape)}")
    if isinstance(n, (bool, np.bool_)):
        raise TypeError(f"{where}: exponent must be an integer, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{where}: exponent must be an integer, got {n!r}") from None
    if n == 0:
        return jnp.broadcast_to(jnp.eye(arr.shape[-1], dtype=arr.dtype), tuple(arr.shape))
    if n < 0:
        arr = inv(arr)
        n = -n
    result = z = None
    while n > 0:       # binary powering: the squares of a times the bits of n
        z = arr if z is None else jnp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else jnp.matmul(result, z)
    return result


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values of each matrix of `M` (..., m, n) above the tolerance
    (int32, shape M.shape[:-2]): by default max(s) * max(m, n) * eps. As in JAX, a given
    rtol (or its old name tol) is compared with the singular values as it is.

    >>> jnp.linalg.matrix_rank(jnp.array([[1.0, 2.0], [2.0, 4.0]]))
    Array(1, dtype=int32)
    """
    where = "linalg.matrix_rank"
    jnp = _jnp()
    if tol is not None:
        if rtol is not None:
            raise ValueError(f"{where}: only one of tol or rtol may be specified")
        rtol = tol
    hermitian = _bool(where, "hermitian", hermitian)
    (M,) = _floats(where, [("M", M)])
    if M.ndim < 2:
        return jnp.any(M != 0).astype(jnp.int32)
    if hermitian and M.shape[-1] != M.shape[-2]:
        raise ValueError(f"{where}: hermitian=True needs square matrices, got shape "
                         f"{tuple(M.shape)}")
    s = _svd_hermitian(M)[1] if hermitian else lh.svd_p.bind(M)[1]
    if rtol is None:
        rtol = jnp.max(s, axis=-1) * (max(M.shape[-2:]) * _eps(s.dtype))
    rtol = jnp.asarray(rtol, dtype=s.dtype)
    return jnp.sum(s > jnp.expand_dims(rtol, rtol.ndim), axis=-1).astype(jnp.int32)


def cond(x, p=None):
    """The condition number of each matrix of `x` (..., m, n): for p None or 2 the ratio of
    the largest and smallest singular values (-2: its inverse); for 1, -1, inf, -inf, 'fro'
    and 'nuc' (square matrices) norm(x, p) * norm(inv(x), p), inf where that is NaN for a
    NaN-free x (a singular matrix).

    >>> jnp.linalg.cond(jnp.array([[2.0, 0.0], [0.0, 0.5]]))
    Array(4., dtype=float32)
    """
    where = "linalg.cond"
    jnp = _jnp()

    def check(s):
        if len(s) < 2:
            raise ValueError(f"{where}: x must be at least two-dimensional, got shape {s}")
        if s[-1] == 0 or s[-2] == 0:
            raise ValueError(f"{where}: x must not be empty, got shape {s}")
        if p not in (None, 2, -2) and s[-1] != s[-2]:
            raise ValueError(f"{where}: for p={p!r} x must be square, got shape {s}")
    if p not in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"):
        raise ValueError(f"{where}: p must be one of None, 1, -1, 2, -2, inf, -inf, 'fro', "
                         f"'nuc', got {p!r}")
    (x,) = _floats(where, [("x", x)], check)
    if p is None or p == 2 or p == -2:
        s = lh.svd_p.bind(x)[1]
        if p == -2:
            r = s[..., -1] / s[..., 0]
        else:
            return s[..., 0] / s[..., -1]
    else:
        r = norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))
    # (NaN in either part of a complex x: jnp.isnan of complex is not relied on here)
    nan_x = (jnp.isnan(jnp.real(x)) | jnp.isnan(jnp.imag(x)) if lh._is_complex(x)
             else jnp.isnan(x))
    nan_free = jnp.logical_not(jnp.any(nan_x, axis=(-2, -1)))
    return jnp.where(jnp.isnan(r) & nan_free, np.inf, r)


def _int_or_ints(v):
    def is_int(d):
        return isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))
    return is_int(v) or isinstance(v, (tuple, list)) and all(is_int(d) for d in v)


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (numpy's name)
    """Vector and matrix norms (numpy.linalg.norm). netcl.numpy's norm, plus the matrix
    norms of singular values: ord=2 (the largest), -2 (the smallest) and 'nuc' (their sum).

    >>> jnp.linalg.norm(jnp.array([[3.0, 0.0], [0.0, -2.0]]), 2)
    Array(3., dtype=float32)
    """
    where = "linalg.norm"
    if axis is not None and not _int_or_ints(axis):
        raise TypeError(f"{where}: axis must be None, an int or a tuple of ints, got "
                        f"{axis!r}")
    if isinstance(ord, str) and ord != "nuc" or not (ord == 2 or ord == -2 or ord == "nuc"):
        return _norm_ops(x, ord, axis, keepdims)
    x = asarray_arg(x, where)
    if axis is None:
        if x.ndim != 2:
            return _norm_ops(x, ord, axis, keepdims)     # (vectors; the error otherwise)
        axes = (0, 1)
    elif isinstance(axis, (tuple, list)) and len(axis) == 2:
        axes = tuple(normalize_axis(d, x.ndim, where, "axis") for d in axis)
        if axes[0] == axes[1]:
            raise ValueError(f"{where}: axis={axis!r} must name two distinct axes of shape "
                             f"{tuple(x.shape)}")
    else:
        return _norm_ops(x, ord, axis, keepdims)
    (x,) = _floats(where, [("x", x)])
    jnp = _jnp()
    s = lh.svd_p.bind(jnp.moveaxis(x, axes, (-2, -1)))[1]
    r = jnp.sum(s, axis=-1) if ord == "nuc" else s[..., 0] if ord == 2 else s[..., -1]
    if keepdims:
        r = views.reshape(r, tuple(1 if d in axes else k for d, k in enumerate(x.shape)))
    return r


# Errors escaping these functions name them as they are called (linalg.solve: ...).
for _n in __all__:
    _f = globals()[_n]
    if callable(_f) and not isinstance(_f, type):
        _w = globals()[_n] = public(_f, f"linalg.{_n}")
        _w.__module__, _w.__qualname__, _w.__name__ = "netcl.numpy.linalg", _n, _n
del _n, _f, _w
