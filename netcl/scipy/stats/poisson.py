"""The Poisson distribution with mean `mu` (jax.scipy.stats.poisson): logpmf, pmf, cdf,
entropy.

>>> st.poisson.pmf(jnp.asarray([0.0, 1.0, 2.0]), 1.0)    # [0.36787945, 0.36787945, 0.18393973]
"""
import math

import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from . import _weak as _w
from ..special import _gammaln, _xlogx, _xlogy
from ..special_more import _gammaincc

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


def _logpmf(k, mu, loc):
    x = k - loc
    out = _xlogy(x, mu) - _gammaln(x + 1.0) - mu
    # -inf below loc and off the integers (JAX's test is on k, not on k - loc)
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, out)


def logpmf(k, mu, loc=0):
    """k log mu - gammaln(k + 1) - mu (k shifted by loc); -inf below loc or where k is not
    an integer.

    >>> st.poisson.logpmf(jnp.asarray([2.0, 2.5]), 3.0)    # [-1.4959226, -inf]
    """
    (k, mu, loc), dt = _u.floats("poisson.logpmf", k=k, mu=mu, loc=loc)
    return _u.finish(_logpmf(k, mu, loc), dt)


def pmf(k, mu, loc=0):
    """P(K = k), exp(logpmf).

    >>> st.poisson.pmf(jnp.asarray([2.0]), 3.0)    # [0.22404182]
    """
    (k, mu, loc), dt = _u.floats("poisson.pmf", k=k, mu=mu, loc=loc)
    return _u.finish(jnp.exp(_logpmf(k, mu, loc)), dt)


def cdf(k, mu, loc=0):
    """P(K <= k) = gammaincc(floor(k - loc) + 1, mu), 0 below loc.

    >>> st.poisson.cdf(jnp.asarray([-1.0, 0.0, 2.5]), 1.0)    # [0., 0.36787945, 0.9196986]
    """
    (k, mu, loc), dt = _u.floats("poisson.cdf", k=k, mu=mu, loc=loc)
    x = k - loc
    # gammaincc sees a = 1 below loc: the value is not used, and its derivative stays finite
    p = _gammaincc(jnp.floor(jnp.maximum(x, 0.0) + 1.0), mu)
    return _w.finish(jnp.where(x < 0, 0.0, p), dt, k)


def _entropy_sum(mu, n, upper):
    """-sum p log p over k < min(n, upper(mu)), p the pmf at k (a static n: one program)."""
    k = jnp.reshape(jnp.arange(n, dtype=mu.dtype), (n,) + (1,) * mu.ndim)
    p = jnp.exp(_logpmf(k, mu, 0.0))
    p = jnp.where(k < upper, p, 0.0)
    return jnp.sum(-_xlogx(p), axis=0)


def entropy(mu, loc=0):
    """The entropy -sum_k p(k) log p(k), as JAX computes it: 0 at mu = 0, the sum over
    k < 35 for mu < 10, over k < 250 for mu < 100, the asymptotic series
    log(2 pi e mu) / 2 - 1 / (12 mu) from 100 on. `loc` only broadcasts (the entropy does
    not depend on it).

    >>> st.poisson.entropy(jnp.asarray([1.0, 200.0]))    # [1.3048419, 4.0676804]
    """
    (mu, loc), dt = _u.floats("poisson.entropy", mu=mu, loc=loc)
    small = _entropy_sum(mu, 35, jnp.ceil(mu + 20.0))
    medium = _entropy_sum(mu, 250, jnp.ceil(mu + jnp.sqrt(mu) * 10.0 + 20.0))
    large = jnp.log(mu * (2 * math.pi * math.e)) * 0.5 - 1.0 / (mu * 12.0)
    out = jnp.where(mu == 0, 0.0, jnp.where(mu < 10, small, jnp.where(mu < 100, medium,
                                                                        large)))
    return _u.finish(out, dt)


_u.export(globals(), "poisson", __all__)
