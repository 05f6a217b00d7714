"""netcl.scipy.linalg: jax.scipy.linalg's Cholesky and triangular solvers, solve, inv, det and
eigh.

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

from ..core.shapes import IncompatibleShapesError
from ..numpy import linalg as _nla
from ..numpy._errors import public
from ..numpy.linalg_decomp import _bool, _floats, _matrix_check, _mH, _square
from ..primitives import linalg_host as lh
from ..primitives import views

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det",
           "eigh", "lu", "lu_factor", "lu_solve"]


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


# Errors escaping these functions name them as they are called (scipy.linalg.solve: ...).
for _n in __all__:
    _w = globals()[_n] = public(globals()[_n], f"scipy.linalg.{_n}")
    _w.__module__, _w.__qualname__, _w.__name__ = __name__, _n, _n
del _n, _w
