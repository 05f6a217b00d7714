"""netcl.lax.linalg: jax.lax.linalg's factorizations and triangular solve over the library's
linear-algebra primitives (device kernels where `primitives.linalg_device` covers the size).

    >>> lu, pivots, perm = netcl.lax.linalg.lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> perm
    Array([1, 0], dtype=int32)
"""
from .numpy._errors import public
from .primitives import linalg_host as lh
from .primitives.linalg_eig import eig
from .primitives.linalg_lu import lu

__all__ = ["lu", "lu_pivots_to_permutation", "cholesky", "triangular_solve", "eig"]


def lu_pivots_to_permutation(pivots, permutation_size):
    """The row order that the swaps `pivots` (..., k) make of arange(permutation_size): the
    swap of step j exchanges entries j and pivots[j], as jax.lax.linalg.
    lu_pivots_to_permutation.

    >>> netcl.lax.linalg.lu_pivots_to_permutation(jnp.array([1, 1], jnp.int32), 2)
    Array([1, 0], dtype=int32)
    """
    from . import lax, numpy as jnp
    k = pivots.shape[-1]
    if not isinstance(permutation_size, int) or permutation_size < k:
        raise ValueError(f"lax.linalg.lu_pivots_to_permutation: permutation_size must be an "
                         f"int of at least the pivots' length {k}, got {permutation_size!r}")
    idx = jnp.arange(permutation_size, dtype=pivots.dtype)
    perm = jnp.broadcast_to(idx, tuple(pivots.shape[:-1]) + (permutation_size,))

    def swap(j, perm):
        pj = pivots[..., j][..., None]
        at_j = perm[..., j][..., None]
        at_p = jnp.take_along_axis(perm, pj, axis=-1)
        return jnp.where(idx == j, at_p, jnp.where(idx == pj, at_j, perm))
    return lax.fori_loop(0, k, swap, perm)


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor of each matrix of `x` (..., n, n), of (x + x^T) / 2 with
    `symmetrize_input`, as jax.lax.linalg.cholesky (NaN where x is not positive definite).

    >>> netcl.lax.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 3.0]]))
    """
    from .numpy import linalg
    return linalg.cholesky(x, symmetrize_input=symmetrize_input)


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """x with op(a) @ x = b (`left_side`) or x @ op(a) = b, op(a) = a or a^T (`transpose_a`),
    conjugated with `conjugate_a` (nothing changes for real a), reading one triangle of a
    (`lower`), as jax.lax.linalg.triangular_solve.

    >>> netcl.lax.linalg.triangular_solve(jnp.eye(2) * 2, jnp.ones((2, 3)), left_side=True)
    """
    return lh.triangular_solve(a, b, left_side=left_side, lower=lower,
                               transpose_a=transpose_a, conjugate_a=conjugate_a,
                               unit_diagonal=unit_diagonal)


for _n in __all__:
    if _n != "lu":
        globals()[_n] = public(globals()[_n], f"lax.linalg.{_n}")
del _n
