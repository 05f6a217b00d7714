"""netcl.scipy.linalg: jax.scipy.linalg's names. Here: the Cholesky and triangular solvers,
solve, inv, det, eigh, the LU family, qr, qr_multiply, svd, schur, hessenberg, rsf2csf and
eigh_tridiagonal; the matrix functions expm, expm_frechet, sqrtm, funm, polar and
solve_sylvester live in linalg_matrix_functions.py, the structured matrices (block_diag,
toeplitz, hankel, circulant, companion, dft, ...) in linalg_structured.py, the host
algorithms for the Schur and Hessenberg forms and pivoted QR in linalg_schur.py.

Built on the host primitives of `netcl.primitives.linalg_host` (NumPy's LAPACK on operands
downloaded from the device) and on netcl.numpy.linalg, so grad, jit and vmap work through
them. SciPy's arguments that only manage memory or checks (overwrite_a, overwrite_b,
check_finite, debug, turbo) are accepted and ignored, as JAX does. Right-hand sides follow
jax.scipy: b of shape (n,) is one vector, (..., n, k) a batch of matrices, batch dimensions
broadcast; (..., n) with a of shape (..., n, n) is still read as a batch of vectors with a
FutureWarning, as JAX 0.10 does. lu, lu_factor and lu_solve run on netcl's own LU
(primitives/linalg_lu.py: LAPACK getrf's pivots, on the device where it covers the size).
Complex operands work as in jax.scipy.linalg (LAPACK's complex routines, on the host):
Cholesky factors of Hermitian matrices (a = U^H U), trans=2 ('C') the conjugate transpose,
eigh of the Hermitian part (a + a^H) / 2.

>>> import netcl.scipy.linalg as sla
>>> c = sla.cho_factor(jnp.array([[4.0, 2.0], [2.0, 3.0]]))
>>> sla.cho_solve(c, jnp.array([1.0, 2.0]))                 # [-0.125, 0.75]
"""
import warnings

import numpy as np

from ..core import dtypes
from ..core.shapes import IncompatibleShapesError
from ..numpy import linalg as _nla
from ..numpy._errors import public
from ..numpy.linalg_decomp import _bool, _floats, _matrix_check, _mH, _square
from ..primitives import linalg_host as lh
from ..primitives import views

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det",
           "eigh", "lu", "lu_factor", "lu_solve", "qr", "qr_multiply", "svd", "schur",
           "hessenberg", "rsf2csf", "eigh_tridiagonal"]


def _rhs_plan(where, sa, sb):
    """How b meets a (..., n, n): (batch shape, 'vector' | 'vectors' | 'matrix'), after the
    checks, or a ValueError naming the shapes."""
    _matrix_check(where, "a")(sa)
    n = sa[-1]
    if len(sb) == 0:
        raise ValueError(f"{where}: b must have shape (n,) or (..., n, k), got a scalar")
    if len(sb) == 1:
        kind, bb = "vector", ()
        rows = sb[0]
    elif len(sa) == len(sb) + 1 and sa[-1] == sb[-1]:
        kind, bb, rows = "vectors", sb[:-1], sb[-1]
    else:
        kind, bb, rows = "matrix", sb[:-2], sb[-2]
    if rows != n:
        raise ValueError(f"{where}: b of shape {sb} does not match a of shape {sa}: b needs "
                         f"{n} rows, shape (n,) or (..., n, k)")
    try:
        batch = tuple(np.broadcast_shapes(sa[:-2], bb))
    except ValueError:
        raise IncompatibleShapesError(f"{where}: the batch dimensions of a {sa} and b {sb} "
                                      "do not broadcast together") from None
    return batch, kind


def _operands(where, a, b):
    """a (..., n, n) and b (..., n, k) promoted and broadcast to one batch shape, and a
    function giving the result b's shape back."""
    plan = []
    a, b = _floats(where, [("a", a), ("b", b)],
                   lambda sa, sb: plan.append(_rhs_plan(where, sa, sb)))
    batch, kind = plan[0]
    if kind == "vectors":
        warnings.warn(f"{where}: batched 1D solves with b.ndim > 1 are deprecated (as in "
                      "JAX), and in the future will be treated as a batched 2D solve; use "
                      "b[..., None] and take [..., 0] of the result", FutureWarning,
                      stacklevel=4)
    n = a.shape[-1]
    a = views.broadcast_to_rank(a, batch + (n, n))
    if kind == "matrix":
        return a, views.broadcast_to_rank(b, batch + tuple(b.shape[-2:])), lambda x: x
    b = views.broadcast_to_rank(views.reshape(b, tuple(b.shape) + (1,)), batch + (n, 1))
    return a, b, lambda x: views.reshape(x, batch + (n,))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of each positive-definite matrix of `a` (..., n, n): upper U with
    a = U^H U (default), or lower L with a = L L^H (^H the conjugate transpose: the transpose
    of real a). Only the triangle named is read (no symmetrization, as scipy and jax.scipy);
    NaN where a matrix is not positive definite.
    The gradient is the derivative of exactly that (the other triangle gets none), where
    JAX's rule assumes symmetric perturbations: the two agree whenever `a` is computed
    symmetric (a = x @ x.T + ...), and differ for a non-symmetric leaf `a`.

    >>> sla.cholesky(jnp.array([[4.0, 2.0], [2.0, 3.0]]))
    Array([[2.       , 1.       ],
           [0.       , 1.4142135]], dtype=float32)
    """
    where = "scipy.linalg.cholesky"
    lower = _bool(where, "lower", lower)
    a = _square(where, a)
    L = lh.cholesky_p.bind(a if lower else _mH(a))   # (the upper triangle of a: a^H's lower)
    return L if lower else _mH(L)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """(c, lower) for cho_solve: c the Cholesky factor of `a` (upper by default).

    >>> c, low = sla.cho_factor(jnp.array([[4.0, 2.0], [2.0, 3.0]]), lower=True)
    """
    lower = _bool("scipy.linalg.cho_factor", "lower", lower)
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """x with a @ x = b from a's Cholesky factor (c, lower) = cho_factor(a): two triangular
    solves. b: (n,) or (..., n, k).

    >>> sla.cho_solve(sla.cho_factor(jnp.array([[4.0, 2.0], [2.0, 3.0]])),
    ...               jnp.array([1.0, 2.0]))
    Array([-0.125,  0.75 ], dtype=float32)
    """
    where = "scipy.linalg.cho_solve"
    if not (isinstance(c_and_lower, (tuple, list)) and len(c_and_lower) == 2):
        raise TypeError(f"{where}: c_and_lower must be the pair (c, lower) that cho_factor "
                        f"returns, got {type(c_and_lower).__name__}")
    c, lower = c_and_lower
    lower = _bool(where, "lower", lower)
    c, b, back = _operands(where, c, b)
    # a = L L^H: L y = b, then L^H x = y (upper: a = U^H U: U^H y = b, then U x = y)
    y = lh._tri_solve(c, b, lower, transpose_a=not lower, conjugate_a=not lower)
    return back(lh._tri_solve(c, y, lower, transpose_a=lower, conjugate_a=lower))


_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}
_CONJ = {0: False, "N": False, 1: False, "T": False, 2: True, "C": True}   # (2, 'C': a^H)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
    """x with op(a) @ x = b for triangular a (..., n, n), reading only its lower or upper
    (default) triangle: op(a) = a (trans 0 or 'N'), a^T (1, 'T') or a^H (2, 'C': a^T for
    real a); unit_diagonal assumes ones on the diagonal. b: (n,) or (..., n, k).

    >>> sla.solve_triangular(jnp.array([[2.0, 0.0], [1.0, 1.0]]), jnp.array([2.0, 3.0]),
    ...                      lower=True)
    Array([1., 2.], dtype=float32)
    """
    where = "scipy.linalg.solve_triangular"
    if isinstance(trans, (bool, np.bool_)) or not isinstance(trans, (int, str, np.integer)) \
            or trans not in _TRANS:
        raise ValueError(f"{where}: invalid trans {trans!r}; expected 0, 1, 2, 'N', 'T' or "
                         "'C'")
    lower = _bool(where, "lower", lower)
    unit_diagonal = _bool(where, "unit_diagonal", unit_diagonal)
    a, b, back = _operands(where, a, b)
    return back(lh._tri_solve(a, b, lower, _TRANS[trans], unit_diagonal, _CONJ[trans]))


_ASSUME = ("gen", "sym", "her", "pos")


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
    """x with a @ x = b: a (..., n, n), b (..., n) or (..., n, k) (netcl.numpy.linalg.solve's
    shapes; with assume_a='pos' b of shape a.shape[:-1] is a batch of vectors, as in JAX).
    Every assume_a is solved by LAPACK's LU of the whole matrix: for the symmetric (positive
    definite) matrices 'sym', 'her' and 'pos' assume this is the same solution, and the
    gradient is the same as JAX's (which differentiates through the whole matrix too); the
    `lower` triangle choice of 'pos' therefore has no effect.

    >>> sla.solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.array([1.0, 1.0]))
    Array([0.5 , 0.25], dtype=float32)
    """
    where = "scipy.linalg.solve"
    if assume_a not in _ASSUME:
        raise ValueError(f"{where}: expected assume_a to be one of {list(_ASSUME)}, got "
                         f"{assume_a!r}")
    _bool(where, "lower", lower)
    if assume_a == "pos" and hasattr(a, "ndim") and hasattr(b, "ndim") and \
            b.ndim >= 1 and a.ndim == b.ndim + 1:
        return _nla.solve(a, b[..., None])[..., 0]
    return _nla.solve(a, b)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each square matrix of `a` (netcl.numpy.linalg.inv).

    >>> sla.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))
    Array([[0.5 , 0.  ],
           [0.  , 0.25]], dtype=float32)
    """
    return _nla.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each square matrix of `a` (netcl.numpy.linalg.det).

    >>> sla.det(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    Array(-2., dtype=float32)
    """
    return _nla.det(a)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):  # noqa: A002 (scipy's name)
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric (complex: Hermitian)
    matrix of `a`, or the eigenvalues alone (eigvals_only). As jax.scipy.linalg.eigh: the
    input is symmetrized ((a + a^H) / 2) and only the standard problem is solved (b=None,
    type=1, eigvals=None; anything else is a NotImplementedError).

    >>> w, v = sla.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w
    Array([1., 3.], dtype=float32)
    """
    where = "scipy.linalg.eigh"
    if b is not None:
        raise NotImplementedError(f"{where}: only b=None is implemented (the generalized "
                                  "problem a v = w b v is not)")
    if type != 1:
        raise NotImplementedError(f"{where}: only type=1 is implemented, got type={type!r}")
    if eigvals is not None:
        raise NotImplementedError(f"{where}: only eigvals=None is implemented")
    lower = _bool(where, "lower", lower)
    eigvals_only = _bool(where, "eigvals_only", eigvals_only)
    a = _square(where, a)
    w, v = lh.eigh_p.bind((a + _mH(a)) * 0.5, lower=lower)
    return w if eigvals_only else (w, v)



def _lu_of(where, a):
    from ..primitives.linalg_lu import lu as _lu
    return _lu(_square(where, a))


def lu_factor(a, overwrite_a=False, check_finite=True):
    """(lu, piv) of each square matrix of `a` (..., n, n): L (unit lower, below the diagonal)
    and U (on and above it) packed in lu, and the row piv[i] swapped with row i at step i
    (int32, counted from 0), as jax.scipy.linalg.lu_factor.

    >>> lu, piv = sla.lu_factor(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv
    Array([1, 1], dtype=int32)
    """
    lu_, piv, _ = _lu_of("scipy.linalg.lu_factor", a)
    return lu_, piv


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """(p, l, u) with a = p @ l @ u for each square matrix of `a`: p a permutation matrix (of
    a's real dtype for complex a, as JAX's), l unit lower and u upper triangular; with
    permute_l, (p @ l, u). As jax.scipy.linalg.lu (square matrices only).

    >>> p, l, u = sla.lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> p
    Array([[0., 1.],
           [1., 0.]], dtype=float32)
    """
    from .. import numpy as jnp
    where = "scipy.linalg.lu"
    permute_l = _bool(where, "permute_l", permute_l)
    lu_, _, perm = _lu_of(where, a)
    n = lu_.shape[-1]
    eye = jnp.eye(n, dtype=lu_.dtype)
    l_ = jnp.tril(lu_, -1) + eye
    u = jnp.triu(lu_)
    # A[perm] = L U, so A = P L U with P[perm[i], i] = 1
    p = (perm[..., None, :] == jnp.arange(n, dtype=perm.dtype)[:, None]).astype(
        lh._real_dtype(lu_.dtype))
    return (p.astype(lu_.dtype) @ l_, u) if permute_l else (p, l_, u)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """x with op(a) @ x = b from lu_factor(a) = (lu, piv): op(a) = a (trans 0 or 'N'), a^T
    (1, 'T') or a^H (2, 'C': a^T for real a). b: (n,) or (..., n, k), as jax.scipy.linalg.
    lu_solve.

    >>> f = sla.lu_factor(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> sla.lu_solve(f, jnp.array([5.0, 6.0]))
    Array([-4. ,  4.5], dtype=float32)
    """
    from .. import numpy as jnp
    where = "scipy.linalg.lu_solve"
    if not (isinstance(lu_and_piv, (tuple, list)) and len(lu_and_piv) == 2):
        raise TypeError(f"{where}: lu_and_piv must be the pair (lu, piv) that lu_factor "
                        f"returns, got {type(lu_and_piv).__name__}")
    if isinstance(trans, (bool, np.bool_)) or not isinstance(trans, (int, str, np.integer)) \
            or trans not in _TRANS:
        raise ValueError(f"{where}: invalid trans {trans!r}; expected 0, 1, 2, 'N', 'T' or "
                         "'C'")
    lu_, piv = lu_and_piv
    lu_, b, back = _operands(where, lu_, b)
    if tuple(piv.shape) != tuple(lu_.shape[-len(piv.shape) - 1:-1]) or \
            jnp.dtype(piv.dtype).kind not in "iu":
        raise ValueError(f"{where}: piv must be the integer pivots of lu's rows, shape "
                         f"{tuple(lu_.shape[:-1])}; got shape {tuple(piv.shape)} and dtype "
                         f"{piv.dtype}")
    from ..lax_linalg import lu_pivots_to_permutation
    perm = jnp.broadcast_to(lu_pivots_to_permutation(piv, piv.shape[-1]), lu_.shape[:-1])
    if not _TRANS[trans]:        # P^T L U x = b: L U x = b[perm]
        pb = jnp.take_along_axis(b, perm[..., None], axis=-2)
        y = lh._tri_solve(lu_, pb, True, False, True)
        return back(lh._tri_solve(lu_, y, False, False, False))
    # U^T L^T P x = b: U^T y = b, L^T z = y, x[perm] = z (U^H and L^H for trans 2, 'C')
    conj = _CONJ[trans]
    y = lh._tri_solve(lu_, b, False, True, False, conj)
    z = lh._tri_solve(lu_, y, True, True, True, conj)
    inverse = jnp.argsort(perm, axis=-1)
    return back(jnp.take_along_axis(z, inverse[..., None], axis=-2))



# ---- QR, SVD, Hessenberg and Schur forms ------------------------------------------------------

def _with_identity(a):
    """[a | I_m] for a (..., m, k): its QR's Q is square, its first k columns a's own Q (the
    Householder steps on a's columns come first), the rest completing them to a unitary
    matrix."""
    from .. import numpy as jnp
    m = a.shape[-2]
    eye = jnp.broadcast_to(jnp.eye(m, dtype=a.dtype), tuple(a.shape[:-2]) + (m, m))
    return jnp.concatenate([a, eye], axis=-1)


def _complement(u):
    """Orthonormal columns (..., m, m - k) orthogonal to u's k orthonormal columns."""
    return lh.qr_p.bind(_with_identity(u))[0][..., u.shape[-1]:]


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """The QR decomposition a = Q R of each matrix of `a` (..., m, n), as scipy's and
    jax.scipy's: mode 'full' (default) gives Q (..., m, m) and R (..., m, n), 'economic'
    Q (..., m, k) and R (..., k, n) (k = min(m, n)), 'r' the tuple (R,) of 'full's R. With
    pivoting, a[..., P] = Q R with the column order P (..., n) (int32) of LAPACK's geqp3
    (the diagonal of R non-increasing in magnitude) appended: (Q, R, P) or (R, P).
    For m > n, 'full's extra columns of Q complete the first n to a unitary matrix (any
    completion is one; they may differ from LAPACK's); gradients flow through all of it
    (JAX raises there), and through the pivoted factors (the order is a constant).

    >>> q, r = sla.qr(jnp.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> r                                            # [[-5., -2.2], [0., 0.4]]
    """
    where = "scipy.linalg.qr"
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"{where}: unsupported QR decomposition mode {mode!r}; expected "
                         "'full', 'r' or 'economic'")
    pivoting = _bool(where, "pivoting", pivoting)
    a = _floats(where, [("a", a)], _matrix_check(where, "a", square=False))[0]
    p = None
    if pivoting:
        from .. import numpy as jnp
        from .linalg_schur import pivots_of
        from ..transforms.ad import stop_gradient
        p = pivots_of(stop_gradient(a))     # (the order is a constant of the derivative)
        a = jnp.take_along_axis(a, p[..., None, :], axis=-1)
    m, n = a.shape[-2:]
    if mode != "economic" and m > n:
        q, r = lh.qr_p.bind(_with_identity(a))
        r = r[..., :n]
    else:
        q, r = lh.qr_p.bind(a)
    if mode == "r":
        return (r,) if p is None else (r, p)
    return (q, r) if p is None else (q, r, p)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """(Q @ c, R) (mode 'left') or (c @ Q, R) (mode 'right', default) from the QR
    decomposition of `a` (..., m, n), k = min(m, n): Q the economic (..., m, k) factor
    (conj(Q) with conjugate=True), R (..., k, n); c (..., k, p) for 'left', (..., p, m) for
    'right'; a 1-D c is one column ('left') or row ('right') and the result 1-D. With
    pivoting the column order P is appended, as in qr. Batch dimensions broadcast.

    >>> qtb, r = sla.qr_multiply(jnp.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]),
    ...                          jnp.array([1.0, 2.0, 2.0]))
    >>> sla.solve_triangular(r, qtb)                 # the least-squares line: [0.667, 0.5]
    """
    from .. import numpy as jnp
    where = "scipy.linalg.qr_multiply"
    if mode not in ("right", "left"):
        raise ValueError(f"{where}: mode must be 'right' or 'left', got {mode!r}")
    pivoting = _bool(where, "pivoting", pivoting)
    conjugate = _bool(where, "conjugate", conjugate)

    def check(sa, sc):
        _matrix_check(where, "a", square=False)(sa)
        if len(sc) == 0:
            raise ValueError(f"{where}: c must be at least 1-dimensional, got a scalar")
        k = min(sa[-2:])
        if mode == "left" and (sc[0] if len(sc) == 1 else sc[-2]) != k:
            raise ValueError(f"{where}: shapes are not compatible for Q @ c: a has shape {sa} "
                             f"so Q has {k} columns, but c of shape {sc} has "
                             f"{sc[0] if len(sc) == 1 else sc[-2]} rows")
        if mode == "right" and sc[-1] != sa[-2]:
            raise ValueError(f"{where}: shapes are not compatible for c @ Q: a has shape {sa} "
                             f"so Q has {sa[-2]} rows, but c of shape {sc} has {sc[-1]} "
                             "columns")
        try:
            np.broadcast_shapes(sa[:-2], sc[:-2])
        except ValueError:
            raise IncompatibleShapesError(f"{where}: the batch dimensions of a {sa} and c "
                                          f"{sc} do not broadcast together") from None
    a, c = _floats(where, [("a", a), ("c", c)], check)
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    out = qr(a, mode="economic", pivoting=pivoting)
    q = lh._conj(out[0]) if conjugate else out[0]
    cq = jnp.matmul(q, c) if mode == "left" else jnp.matmul(c, q)
    if onedim:
        cq = jnp.ravel(cq)
    return (cq,) + tuple(out[1:])


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """The singular value decomposition a = U diag(S) Vh of each matrix of `a` (..., m, n),
    k = min(m, n): with full_matrices (default) U (..., m, m) and Vh (..., n, n), otherwise
    (..., m, k) and (..., k, n); S (..., k) real, descending; only S with compute_uv=False.
    A non-square matrix's extra singular vectors complete the others to unitary matrices
    (any completion is one; they may differ from LAPACK's). lapack_driver is accepted and
    ignored, as in JAX.

    >>> sla.svd(jnp.array([[3.0, 0.0], [0.0, -2.0]]), compute_uv=False)
    Array([3., 2.], dtype=float32)
    """
    where = "scipy.linalg.svd"
    full_matrices = _bool(where, "full_matrices", full_matrices)
    compute_uv = _bool(where, "compute_uv", compute_uv)
    a = _floats(where, [("a", a)], _matrix_check(where, "a", square=False))[0]
    u, s, vh = lh.svd_p.bind(a)
    if not compute_uv:
        return s
    from .. import numpy as jnp
    m, n = a.shape[-2:]
    if full_matrices and m > n:
        u = jnp.concatenate([u, _complement(u)], axis=-1)
    elif full_matrices and n > m:
        vh = jnp.concatenate([vh, _mH(_complement(_mH(vh)))], axis=-2)
    return u, s, vh


def schur(a, output="real"):
    """The Schur decomposition a = Z T Z^H of each square matrix of `a` (..., n, n): Z
    unitary, T upper triangular ('complex' output, or any complex a) or quasi upper
    triangular with standardized 2x2 blocks for complex pairs of eigenvalues ('real'
    output of a real a), as LAPACK's gees. Computed on the host (linalg_schur.py); the order
    of the eigenvalues on T's diagonal may differ from LAPACK's. Not differentiable (nor is
    JAX's).

    >>> t, z = sla.schur(jnp.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> t
    Array([[1., 2.],
           [0., 3.]], dtype=float32)
    """
    from .linalg_schur import schur_of
    where = "scipy.linalg.schur"
    if output not in ("real", "complex"):
        raise ValueError(f"{where}: expected output to be either 'real' or 'complex', got "
                         f"{output!r}")
    return schur_of(_square(where, a), output == "complex")


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The Hessenberg form H (zero below the first subdiagonal) of each square matrix of
    `a` (..., n, n), with the unitary Q of a = Q H Q^H if calc_q: (H, Q). LAPACK gehrd's
    Householder reduction, on the host (so H and Q are JAX's to rounding). Not
    differentiable (nor is JAX's).

    >>> sla.hessenberg(jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.0, 1.0, 0.0]]))
    """
    from .linalg_schur import hessenberg_of
    where = "scipy.linalg.hessenberg"
    calc_q = _bool(where, "calc_q", calc_q)
    h, q = hessenberg_of(_square(where, a))
    return (h, q) if calc_q else h


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form (T, Z) from the real one that schur(a) returns: each 2x2 block
    of T reduced to triangular by a unitary rotation (applied to Z too), as scipy's and
    JAX's; both complex (complex64 from float32). T and Z (..., n, n), batch dimensions
    broadcast. Composed from netcl operations (a Python loop over n, unrolled under jit).

    >>> t, z = sla.rsf2csf(*sla.schur(jnp.array([[0.0, 1.0], [-1.0, 0.0]])))
    >>> jnp.diagonal(t)                              # [0+1j, 0-1j]
    """
    from .. import numpy as jnp
    from .linalg_schur import rsf2csf_of
    where = "scipy.linalg.rsf2csf"

    def check(st, sz):
        _matrix_check(where, "T")(st)
        _matrix_check(where, "Z")(sz)
        if st[-1] != sz[-1]:
            raise ValueError(f"{where}: T of shape {st} and Z of shape {sz} must be matrices "
                             "of the same size")
        try:
            np.broadcast_shapes(st[:-2], sz[:-2])
        except ValueError:
            raise IncompatibleShapesError(f"{where}: the batch dimensions of T {st} and Z "
                                          f"{sz} do not broadcast together") from None
    T, Z = _floats(where, [("T", T), ("Z", Z)], check)
    if not lh._is_complex(T):
        T, Z = (x.astype(dtypes.COMPLEX_OF[x.dtype]) for x in (T, Z))
    batch = tuple(np.broadcast_shapes(tuple(T.shape[:-2]), tuple(Z.shape[:-2])))
    n = T.shape[-1]
    T, Z = (jnp.broadcast_to(x, batch + (n, n)) for x in (T, Z))
    return (T, Z) if n <= 1 else rsf2csf_of(T, Z)


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
    """The eigenvalues (ascending, real) and, unless eigvals_only, the eigenvectors (as
    columns, (n, k)) of the Hermitian tridiagonal matrix with diagonal d (n,) (its real
    part) and superdiagonal e (n - 1,) (subdiagonal conj(e)); d and e of one float or
    complex dtype, as JAX requires. select 'a' (all) or 'i' (the indices select_range[0] ..
    select_range[1], inclusive); 'v' is not implemented, as in JAX. Solved by the dense
    Hermitian eigensolver (eigh), exact to rounding, so `tol` and `key` (JAX's bisection
    tolerance and inverse iteration's start) have nothing to do; unlike JAX's it is
    differentiable (as eigh is: distinct eigenvalues).

    >>> sla.eigh_tridiagonal(jnp.array([1.0, 2.0, 3.0, 4.0]), jnp.array([1.0, 1.0, 1.0]),
    ...                      eigvals_only=True)         # [0.2547, 1.8227, 3.1773, 4.7453]
    """
    from .. import numpy as jnp
    from ..numpy._util import asarray_arg
    where = "scipy.linalg.eigh_tridiagonal"
    eigvals_only = _bool(where, "eigvals_only", eigvals_only)
    # (lists too, as JAX's jnp.asarray takes them here)
    d, e = (jnp.asarray(v) if isinstance(v, (list, tuple)) else asarray_arg(v, where)
            for v in (d, e))
    if d.dtype != e.dtype:
        raise TypeError(f"{where}: the diagonal d and the off-diagonal e must have the same "
                        f"dtype, got {d.dtype} and {e.dtype}")
    if d.dtype not in lh._INEXACT:
        raise TypeError(f"{where}: d and e must be float32, float64, complex64 or complex128, "
                        f"got {d.dtype}")
    if d.ndim != 1 or e.ndim != 1 or e.shape[0] != max(d.shape[0] - 1, 0):
        raise ValueError(f"{where}: d must have shape (n,) and e shape (n - 1,), got shapes "
                         f"{tuple(d.shape)} and {tuple(e.shape)}")
    n = d.shape[0]
    if select == "a":
        lo, hi = 0, n - 1
    elif select == "i":
        if select_range is None:
            raise ValueError(f"{where}: for select='i', select_range must be specified")
        lo, hi = (int(v) for v in select_range)
        if lo > hi:
            raise ValueError(f"{where}: got an empty index range in select_range "
                             f"{tuple(select_range)}")
        if lo < 0 or hi >= n:
            raise ValueError(f"{where}: select_range {tuple(select_range)} must lie in "
                             f"[0, {n - 1}] for a matrix of order {n}")
    elif select == "v":
        raise NotImplementedError(f"{where}: select='v' is not implemented (as in JAX: the "
                                  "number of eigenvalues in a range is not a static shape)")
    else:
        raise ValueError(f"{where}: select must be one of 'a', 'i', 'v', got {select!r}")
    real = jnp.real(d)
    if n <= 1:
        return real if eigvals_only else (real, jnp.eye(n, dtype=d.dtype))
    t = jnp.diag(real.astype(d.dtype)) + jnp.diag(e, 1) + jnp.diag(jnp.conj(e), -1)
    w, v = lh.eigh_p.bind(t, lower=True)
    w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    return w if eigvals_only else (w, v)


# Errors escaping these functions name them as they are called (scipy.linalg.solve: ...).
for _n in __all__:
    _w = globals()[_n] = public(globals()[_n], f"scipy.linalg.{_n}")
    _w.__module__, _w.__qualname__, _w.__name__ = __name__, _n, _n
del _n, _w

# the matrix functions and the structured matrices (their own modules; already wrapped)
from .linalg_matrix_functions import (  # noqa: E402,F401
    expm, expm_frechet, funm, polar, solve_sylvester, sqrtm)
from .linalg_structured import (  # noqa: E402,F401
    block_diag, circulant, companion, convolution_matrix, dft, fiedler, fiedler_companion,
    hadamard, hankel, helmert, hilbert, invhilbert, invpascal, leslie, pascal, toeplitz)

__all__ += ["expm", "expm_frechet", "funm", "polar", "solve_sylvester", "sqrtm",
            "block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler",
            "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
            "invpascal", "leslie", "pascal", "toeplitz"]
