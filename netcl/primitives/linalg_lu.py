"""The LU factorization primitive: jax.lax.linalg.lu of square matrices.

lu(A) = (lu, pivots, perm) with A[perm] = L U: L unit lower triangular (below lu's diagonal),
U upper (on and above it); pivots (int32, (..., n)) the row swapped with row i at step i
(LAPACK's getrf ipiv counted from 0), perm (int32, (..., n)) the permutation they make.
Partial pivoting takes the first largest |a| of a column (complex a: the first largest
|Re a| + |Im a|, LAPACK's cabs1, so that the pivots are zgetrf's, JAX's and SciPy's); a zero
pivot is not divided by (a singular matrix gives a zero on U's diagonal, nothing raises, no
NaN), as LAPACK's getrf.

It runs on the device where `linalg_device` covers it (linalg_device_lu's kernels: float32
and float64), else on the host: `reference`, a NumPy LU vectorized over the batch (NumPy
exposes no getrf); complex64 and complex128 always there. Rectangular matrices are refused
(jax.lax.linalg.lu accepts them): not implemented here.

Derivatives (square A, as JAX's rule): with x = L^-1 P dA U^-1, dL = L tril(x, -1) and
dU = triu(x) U, so d lu = dL + dU; the vjp is that map's transpose,
A_bar = P^T L^-T (tril(L^T lu_bar, -1) + triu(lu_bar U^T)) U^-T. With the pivots fixed the
factors are rational functions of A's entries (holomorphic), so the same rules serve complex
matrices, with transposes, not conjugate transposes (JAX's convention). pivots and perm are
piecewise constant: no derivative.

>>> lu, pivots, perm = netcl.primitives.linalg_lu.lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
"""
import numpy as np

from ..core import dtypes
from ..core.ad_util import Zero
from ..core.tracing import Primitive, ShapedArray
from . import linalg_host as lh
from .views import operand

__all__ = ["lu"]

lu_p = Primitive("lu", multiple_results=True, precision="keep_fp32")


def _lu_abstract(a):
    lh._check_matrix("lu", "a", a)
    shape = tuple(a.shape)
    return (ShapedArray(shape, a.dtype), ShapedArray(shape[:-1], dtypes.int32),
            ShapedArray(shape[:-1], dtypes.int32))


def _lu_ref(a):
    """LAPACK getrf's steps in NumPy, every matrix of the batch at once."""
    a = np.array(a, dtype=a.dtype, copy=True)
    shape, n = a.shape, a.shape[-1]
    f = a.reshape((-1, n, n))
    batch = np.arange(f.shape[0])
    piv = np.zeros(f.shape[:2], np.int32)
    if f.dtype.kind == "c":     # (getrf's izamax compares |Re| + |Im|, not the modulus)
        def size(x):
            return np.abs(x.real) + np.abs(x.imag)
    else:
        size = np.abs
    with np.errstate(all="ignore"):
        for j in range(n):
            p = j + np.argmax(size(f[:, j:, j]), axis=1)       # the first largest
            piv[:, j] = p
            rows = f[batch, p].copy()
            f[batch, p] = f[:, j]
            f[:, j] = rows
            d = f[:, j, j]
            scale = np.where(d != 0, d, 1)[:, None]              # a zero pivot: no division
            f[:, j + 1:, j] = np.where(d[:, None] != 0, f[:, j + 1:, j] / scale,
                                       f[:, j + 1:, j])
            f[:, j + 1:, j + 1:] -= f[:, j + 1:, j, None] * f[:, j, None, j + 1:]
    perm = np.tile(np.arange(n, dtype=np.int32), (f.shape[0], 1))
    for j in range(n):
        t = perm[batch, piv[:, j]].copy()
        perm[batch, piv[:, j]] = perm[:, j]
        perm[:, j] = t
    return f.reshape(shape), piv.reshape(shape[:-1]), perm.reshape(shape[:-1])


def _factors(f):
    """(L, U) of the packed factors."""
    n = f.shape[-1]
    return lh._triangle(f, True, 1) + lh._eye(n, f.dtype), lh._triangle(f, False)


def _perm_matrix(perm, dtype):
    """P with P A = A[perm] (rows of the identity in perm's order)."""
    jnp = lh._jnp()
    n = perm.shape[-1]
    return (lh._col(perm) == jnp.arange(n, dtype=perm.dtype)).astype(dtype)


def _lu_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    f, piv, perm = lu_p.bind(a)
    L, U = _factors(f)
    pda = lh._mm(_perm_matrix(perm, a.dtype), da)
    x = lh._tri_solve_right(U, lh._tri_solve(L, pda, True, unit_diagonal=True), lower=False)
    df = lh._mm(L, lh._triangle(x, True, 1)) + lh._mm(lh._triangle(x, False), U)
    zero = Zero(ShapedArray(tuple(piv.shape), piv.dtype))
    return (f, piv, perm), (df, zero, zero)


def _lu_vjp(ct, out, a):
    f, _, perm = out
    f_bar = lh._live(ct[0])
    if f_bar is None:
        return (None,)
    L, U = _factors(f)
    x_bar = (lh._triangle(lh._mm(lh._mT(L), f_bar), True, 1)
             + lh._triangle(lh._mm(f_bar, lh._mT(U)), False))
    y = lh._tri_solve(L, x_bar, True, transpose_a=True, unit_diagonal=True)     # L^-T x_bar
    y = lh._tri_solve_right(U, y, lower=False, transpose_a=True)                # ... U^-T
    return (lh._mm(lh._mT(_perm_matrix(perm, a.dtype)), y),)


lu_p.abstract_eval = _lu_abstract
lu_p.reference = _lu_ref
lu_p.make_launcher = lh._device_or_host_launcher(lu_p)
lu_p.jvp = _lu_jvp
lu_p.vjp = _lu_vjp
lu_p.batch = lh._batch_rule(lu_p)


def lu(a):
    """jax.lax.linalg.lu of square matrices: (lu, pivots, perm) of each matrix of `a`
    (..., n, n), float or complex, A[perm] = L U (L unit lower and U upper, packed in lu).

    >>> lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))[0]       # [[3, 4], [0.33333, 0.66667]]
    """
    return lu_p.bind(operand(a, "lu"))
