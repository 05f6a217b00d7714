"""Samplers of vectors and matrices, as jax.random draws them: multivariate_normal and
orthogonal (the same numbers as JAX from the same key, to float rounding).

  multivariate_normal  mean + factor @ z, z = normal(key, shape + (n,)); factor: cholesky(cov)
                       (the default), or u * sqrt(s) of svd(cov), or v * sqrt(w) of eigh(cov)
  orthogonal           q * sign(diag(r)) of qr(normal(key, shape + (max(n, m), min(n, m)))),
                       transposed when n < m (Haar-distributed, Mezzadri's method)

The factorizations are netcl.numpy.linalg's (NumPy's LAPACK on the host), so both work
under jit, vmap and grad. With method='svd' or 'eigh' the factor's column signs are
LAPACK's and may differ from XLA's: the samples then have the same distribution as JAX's
but not the same values (the default, 'cholesky', is unique and gives JAX's values).

>>> from netcl import random
>>> random.multivariate_normal(random.PRNGKey(0), jnp.zeros(2), jnp.eye(2), (5,)).shape
(5, 2)
"""
import operator

import numpy as np

from ..core import dtypes
from ..core.shapes import broadcast_shapes, canonical_shape
from .continuous import _check_shape, _float_dtype, _normal
from .keys import _check_key, _device, _is_array

__all__ = ["multivariate_normal", "orthogonal"]


def _jnp():
    from .. import numpy as jnp     # (netcl.numpy imports this package's parent: late)
    return jnp


def _as_array(name, arg, x):
    if _is_array(x):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{name}: {arg} must be an array, got {type(x).__name__}; convert "
                        "it with netcl.numpy.array first")
    try:
        host = np.asarray(x)
    except Exception:
        raise TypeError(f"{name}: {arg} must be an array, got {type(x).__name__}") from None
    if dtypes.kind(host.dtype) not in "biuf":
        raise TypeError(f"{name}: {arg} must be numeric, got dtype {host.dtype}")
    return _jnp().asarray(x)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
    """Multivariate normal vectors with mean `mean` (..., n) and covariance `cov`
    (..., n, n): mean + factor @ z with factor @ factor.T == cov, z standard normal of shape
    shape + (n,). `shape` (the batch shape) defaults to the broadcast of mean.shape[:-1] and
    cov.shape[:-2], which must broadcast to it; `dtype` defaults to the (inexact) dtype of
    mean; method: 'cholesky' (the default), 'svd' or 'eigh' (for singular covariances).

    >>> k = netcl.random.PRNGKey(0)
    >>> cov = jnp.array([[1.0, 0.5], [0.5, 2.0]])
    >>> netcl.random.multivariate_normal(k, jnp.zeros(2), cov, (1000,)).shape
    (1000, 2)
    """
    name = "multivariate_normal"
    key = _check_key(name, key)
    jnp = _jnp()
    mean, cov = _as_array(name, "mean", mean), _as_array(name, "cov", cov)
    dt, weak = dtypes.result_type(mean, cov)
    if dtypes.kind(dt) != "f":
        dt = dtypes.inexact_dtype(dt, weak)
    mean, cov = mean.astype(dt), cov.astype(dt)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError(f"{name}: method must be one of 'svd', 'eigh', 'cholesky', got "
                         f"{method!r}")
    dtype = _float_dtype(name, mean.dtype if dtype is None else dtype, _device(key))
    if mean.ndim < 1:
        raise ValueError(f"{name}: mean must have at least one dimension, got shape "
                         f"{tuple(mean.shape)}")
    if cov.ndim < 2:
        raise ValueError(f"{name}: cov must have at least two dimensions, got shape "
                         f"{tuple(cov.shape)}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"{name}: cov must have shape (..., n, n) for n={n} (mean's last "
                         f"dimension), got shape {tuple(cov.shape)}")
    batch = (tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if shape is None:
        shape = broadcast_shapes(*batch, where=name)
    else:
        shape = canonical_shape(shape, name)
        _check_shape(name, shape, *batch)
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = _normal(name, key, shape + (n,), dtype)
    return mean + jnp.matmul(factor, z[..., None])[..., 0]


def _index(name, arg, v):
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name}: {arg} must be an int, got {v!r}")
    try:
        v = operator.index(v)
    except TypeError:
        raise TypeError(f"{name}: {arg} must be a concrete int, got {type(v).__name__} "
                        f"{v!r}") from None
    if v < 0:
        raise ValueError(f"{name}: {arg} must be non-negative, got {v}")
    return v


def orthogonal(key, n, shape=(), dtype=None, m=None):
    """Random matrices with orthonormal columns (or rows), uniform (Haar) over the
    orthogonal group when square: shape shape + (n, m) (m defaults to n).

    >>> q = netcl.random.orthogonal(netcl.random.PRNGKey(0), 3)
    >>> jnp.allclose(q @ q.T, jnp.eye(3), atol=1e-5)
    Array(True, dtype=bool)
    """
    name = "orthogonal"
    shape = canonical_shape(shape, name)
    key = _check_key(name, key)
    dtype = _float_dtype(name, float if dtype is None else dtype, _device(key))
    n = _index(name, "n", n)
    m = n if m is None else _index(name, "m", m)
    if dtype in dtypes.STORAGE_FLOATS:
        raise TypeError(f"{name}: {dtype} is not supported (qr has no 16- or 8-bit "
                        "precision); use float32")
    jnp = _jnp()
    z = _normal(name, key, shape + (max(n, m), min(n, m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.linalg.diagonal(r)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.linalg.matrix_transpose(x) if n < m else x
