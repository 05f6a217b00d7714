"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal): logpdf, pdf.

`cov` is a scalar (isotropic), a vector of length n (the diagonal, as scipy reads a 1-d
cov; JAX refuses one), or a (..., n, n) matrix. netcl has no Cholesky or triangular-solve
primitive yet, so a full covariance is factorised here with netcl operations: one column of
the Cholesky factor per step (a matmul with the columns before it, a sqrt, a divide), then a
forward substitution, n steps each, unrolled at trace time. grad, jit and vmap go through
it; it suits the small n of typical uses (the program grows with n; under jit it compiles
once per shape).

>>> cov = jnp.asarray([[2.0, 0.5], [0.5, 1.0]])
>>> st.multivariate_normal.logpdf(jnp.asarray([1.0, -1.0]), jnp.zeros(2), cov)  # -3.260542
"""
import math

import numpy as np

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2 * math.pi)


def _check(where, x, mean, cov, allow_singular):
    if allow_singular is not None:
        raise NotImplementedError(f"{where}: allow_singular is not supported (as in JAX)")
    shapes = {n: _u.shape_dtype(where, n, v)[0] for n, v in
              (("x", x), ("mean", mean), ("cov", cov))}
    xs, ms, cs = shapes["x"], shapes["mean"], shapes["cov"]
    _u.check(where, x=x, mean=mean)
    if not ms:
        _u.check(where, x=x, mean=mean, cov=cov)
        return None, "scalar"
    n = ms[-1]
    if xs and xs[-1] != n:
        raise ValueError(f"{where}: x has {xs[-1]} components on its last axis but mean has "
                         f"{n} (shapes {xs} and {ms})")
    if not cs:
        return n, "isotropic"
    if len(cs) == 1:
        if cs[0] != n:
            raise ValueError(f"{where}: a 1-d cov is the diagonal and needs {n} entries, got "
                             f"shape {cs}")
        return n, "diagonal"
    if cs[-2:] != (n, n):
        raise ValueError(f"{where}: cov of shape {cs} is not (..., {n}, {n}) for mean of "
                         f"shape {ms}")
    try:
        np.broadcast_shapes(np.broadcast_shapes(xs, ms)[:-1], cs[:-2])
    except ValueError:
        raise ValueError(f"{where}: the batch shapes of x {xs}, mean {ms} and cov {cs} do "
                         "not broadcast together") from None
    return n, "full"


def _cholesky_solve(cov, r):
    """(z, sum of log diag L) with cov = L L^T (lower L) and z = L^-1 r."""
    n = cov.shape[-1]
    # the symmetric part, as JAX's cholesky reads it: gradients come out symmetric
    cov = (cov + jnp.swapaxes(cov, -1, -2)) * 0.5
    rows = jnp.arange(n)
    cols = []      # column j of L, zeros above the diagonal
    for j in range(n):
        v = cov[..., :, j]
        if j:
            done = jnp.stack(cols, axis=-1)                         # L[:, :j]
            v = v - jnp.matmul(done, done[..., j, :, None])[..., 0]  # - L[:, :j] L[j, :j]
        d = jnp.sqrt(v[..., j])        # NaN where cov is not positive definite (as JAX)
        cols.append(jnp.where(rows >= j, v / d[..., None], 0.0))
    # forward substitution, one column at a time: z_i = res_i / L_ii, res -= L[:, i] z_i
    res = r
    quad = 0.0
    logdiag = 0.0
    for i in range(n):
        lii = cols[i][..., i]
        zi = res[..., i] / lii
        res = res - cols[i] * zi[..., None]
        quad = quad + zi * zi
        logdiag = logdiag + jnp.log(lii)
    return quad, logdiag


def logpdf(x, mean, cov, allow_singular=None):
    """log density of N(mean, cov) at x (the last axis of x and mean is the vector's).

    >>> st.multivariate_normal.logpdf(jnp.zeros(3), jnp.zeros(3), 1.0)     # -2.7568154
    >>> st.multivariate_normal.logpdf(x, mean, jnp.asarray([1.0, 2.0, 3.0]))  # diagonal
    """
    where = "multivariate_normal.logpdf"
    n, kind = _check(where, x, mean, cov, allow_singular)
    if kind == "scalar":
        (x, mean, cov), dt = _u.floats(where, x=x, mean=mean, cov=cov)
        d = x - mean
        return _u.finish(d * d / cov * -0.5 - (jnp.log(cov) + _LOG_2PI) * 0.5, dt)
    # promoted together, but cov not broadcast against x: their last axes mean different
    # things
    (x, mean, cov), dt = _u.floats(where, broadcast=False, x=x, mean=mean, cov=cov)
    if kind == "full":
        quad, logdiag = _cholesky_solve(cov, x - mean)
        return _u.finish(quad * -0.5 - n * 0.5 * _LOG_2PI - logdiag, dt)
    d = x - mean
    if kind == "isotropic":
        quad = jnp.sum(d * d, axis=-1) / cov
        return _u.finish(quad * -0.5 - n * 0.5 * (_LOG_2PI + jnp.log(cov)), dt)
    quad = jnp.sum(d * d / cov, axis=-1)                   # diagonal
    return _u.finish(quad * -0.5 - n * 0.5 * _LOG_2PI - 0.5 * jnp.sum(jnp.log(cov)), dt)


def pdf(x, mean, cov):
    """The multivariate normal density, exp(logpdf).

    >>> st.multivariate_normal.pdf(jnp.zeros(2), jnp.zeros(2), 1.0)     # 0.15915494
    """
    return jnp.exp(logpdf(x, mean, cov))


_u.export(globals(), "multivariate_normal", __all__)
