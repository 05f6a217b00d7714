"""netcl.numpy.linalg: jax.numpy.linalg's names. The products and the basic norms live in
linalg_ops (netcl.numpy's matmul family); the decompositions and solvers (cholesky, solve,
inv, det, slogdet, eigh, eigvalsh, svd, svdvals, qr, lstsq, pinv, matrix_power,
matrix_rank, cond) and the singular-value matrix norms in linalg_decomp, on the host
primitives of netcl.primitives.linalg_host; tensorinv and tensorsolve in linalg_tensor; the
array-API names (cross, diagonal, matmul, matrix_norm, matrix_transpose, multi_dot, outer,
tensordot, trace, vecdot, vector_norm, and eig/eigvals: LAPACK on the host through
netcl.primitives.linalg_eig, complex results) in linalg_surface."""
from .linalg_decomp import (  # noqa: F401
    EighResult, QRResult, SlogdetResult, SVDResult, cholesky, cond, det, eigh, eigvalsh, inv,
    lstsq, matrix_power, matrix_rank, norm, pinv, qr, slogdet, solve, svd, svdvals)
from .linalg_surface import (  # noqa: F401
    cross, diagonal, eig, eigvals, matmul, matrix_norm, matrix_transpose, multi_dot, outer,
    tensordot, trace, vecdot, vector_norm)
from .linalg_tensor import tensorinv, tensorsolve  # noqa: F401

__all__ = ["norm", "cholesky", "solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "svd",
           "svdvals", "qr", "lstsq", "pinv", "matrix_power", "matrix_rank", "cond",
           "tensorinv", "tensorsolve", "cross", "diagonal", "matmul", "matrix_norm",
           "matrix_transpose", "multi_dot", "outer", "tensordot", "trace", "vecdot",
           "vector_norm", "eig", "eigvals", "EighResult", "QRResult", "SlogdetResult",
           "SVDResult"]
