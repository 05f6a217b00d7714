"""netcl.numpy.linalg: the jax.numpy.linalg names netcl has so far (norm). Decompositions
(det, inv, solve, qr, svd, eigh, cholesky) are not implemented yet."""
from .linalg_ops import norm  # noqa: F401

__all__ = ["norm"]
