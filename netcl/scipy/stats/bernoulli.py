"""The Bernoulli distribution (jax.scipy.stats.bernoulli): logpmf, pmf, cdf, ppf.

>>> st.bernoulli.pmf(jnp.asarray([0.0, 1.0]), 0.3)    # [0.7, 0.3]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _xlog1py, _xlogy

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k, p, loc=0):
    """log P(K = k) for K - loc ~ Bernoulli(p); -inf outside {0, 1} (as JAX, values between
    0 and 1 are not refused: k log p + (1 - k) log(1 - p)).

    >>> st.bernoulli.logpmf(jnp.asarray([0.0, 1.0]), 0.25)   # [-0.2876821, -1.3862944]
    """
    (k, p, loc), dt = _u.floats("bernoulli.logpmf", k=k, p=p, loc=loc)
    x = k - loc
    # xlogy: 0 * log(0) is 0, so p = 0 or 1 gives 0 (not NaN) for the certain outcome
    logp = _xlogy(x, p) + _xlog1py(1.0 - x, -p)
    return _u.finish(jnp.where((x < 0) | (x > 1), -np.inf, logp), dt)


def pmf(k, p, loc=0):
    """P(K = k).

    >>> st.bernoulli.pmf(jnp.asarray([1.0]), 0.25)    # [0.25]
    """
    (k, p, loc), dt = _u.floats("bernoulli.pmf", k=k, p=p, loc=loc)
    return _u.finish(jnp.exp(logpmf(k, p, loc)), dt)


def cdf(k, p):
    """P(K <= k): 0 below 0, 1 - p on [0, 1), 1 from 1 on; NaN for p outside [0, 1].

    >>> st.bernoulli.cdf(jnp.asarray([-1.0, 0.5, 2.0]), 0.25)    # [0., 0.75, 1.]
    """
    (k, p), dt = _u.floats("bernoulli.cdf", k=k, p=p)
    out = jnp.where(k < 0, 0.0, jnp.where(k < 1, 1.0 - p, 1.0))
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    return _u.finish(jnp.where(bad, np.nan, out), dt)


def ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q; NaN for q or p outside [0, 1].

    >>> st.bernoulli.ppf(jnp.asarray([0.5, 0.9]), 0.25)    # [0., 1.]
    """
    (q, p), dt = _u.floats("bernoulli.ppf", q=q, p=p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return _u.finish(jnp.where(bad, np.nan, jnp.where(q <= 1.0 - p, 0.0, 1.0)), dt)


_u.export(globals(), "bernoulli", __all__)
