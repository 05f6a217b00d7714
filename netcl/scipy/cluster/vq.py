"""netcl.scipy.cluster.vq: `vq`, the nearest code of a code book for each observation
(jax.scipy.cluster.vq).

>>> vq(jnp.asarray([[1.1, 2.1, 3.1]]), jnp.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
(Array([0]), Array([0.173205]))
"""
from ... import numpy as jnp
from .. import _util as _u

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """``(code, dist)``: for each row of `obs` (M, N) the index of the nearest row of
    `code_book` (K, N) by Euclidean distance (the first of equally near ones), and that
    distance. 1-d arguments are M (and K) observations of one feature. `check_finite` is
    accepted and ignored, as in JAX.

    >>> obs = jnp.asarray([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2]])
    >>> book = jnp.asarray([[1., 2., 3.], [2., 3., 4.], [3., 4., 5.], [4., 5., 6.]])
    >>> vq(obs, book)    # ([0, 3], [0.17320499, 1.9209373])
    """
    del check_finite
    where = "vq"
    (obs, code_book), _ = _u.floats(where, broadcast=False, obs=obs, code_book=code_book)
    if obs.ndim != code_book.ndim:
        raise ValueError(f"{where}: Observation and code_book should have the same rank, got "
                         f"shapes {obs.shape} and {code_book.shape}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError(f"{where}: ndim different than 1 or 2 are not supported, got "
                         f"{obs.ndim}")
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"{where}: obs has {obs.shape[1]} features and code_book "
                         f"{code_book.shape[1]}")
    # (M, K) distances, every pair at once (JAX maps over the observations)
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]


_u.export(globals(), "", __all__)     # (errors name vq)
