"""The beta-binomial distribution, n trials with a Beta(a, b) success probability
(jax.scipy.stats.betabinom): logpmf, pmf.

>>> st.betabinom.pmf(jnp.asarray([0.0, 1.0, 2.0]), 2.0, 1.0, 1.0)    # [1/3, 1/3, 1/3]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _betaln

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    """-log(n + 1) - betaln(n - y + 1, y + 1) + betaln(y + a, n - y + b) - betaln(a, b),
    y = floor(k) - loc; -inf outside the support, NaN for n < 0, a <= 0 or b <= 0 (JAX's
    conditions, including its support test y < -loc).

    >>> st.betabinom.logpmf(jnp.asarray([1.0]), 4.0, 2.0, 3.0)    # [-1.2527606]
    """
    (k, n, a, b, loc), dt = _u.floats("betabinom.logpmf", k=k, n=n, a=a, b=b, loc=loc)
    y = jnp.floor(k) - loc
    combiln = -(jnp.log1p(n) + _betaln(n - y + 1.0, y + 1.0))
    out = combiln + _betaln(y + a, n - y + b) - _betaln(a, b)
    out = jnp.where((y == 0) & (n == 0), 0.0, out)
    out = jnp.where((y < -loc) | (y > n) | (y + a <= 0), -np.inf, out)
    return _u.finish(jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, out), dt)


def pmf(k, n, a, b, loc=0):
    """P(K = k), exp(logpmf).

    >>> st.betabinom.pmf(jnp.asarray([1.0]), 4.0, 2.0, 3.0)    # [0.28571495]
    """
    (k, n, a, b, loc), dt = _u.floats("betabinom.pmf", k=k, n=n, a=a, b=b, loc=loc)
    return _u.finish(jnp.exp(logpmf(k, n, a, b, loc)), dt)


_u.export(globals(), "betabinom", __all__)
