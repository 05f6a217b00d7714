"""The negative binomial distribution, failures before the n-th success of probability p
(jax.scipy.stats.nbinom): logpmf, pmf.

>>> st.nbinom.pmf(jnp.asarray([0.0, 1.0]), 2.0, 0.5)    # [0.25, 0.25]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _gammaln, _xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """gammaln(y + n) - gammaln(n) - gammaln(y + 1) + n log p + y log(1 - p), y = k - loc;
    -inf below loc.

    >>> st.nbinom.logpmf(jnp.asarray([3.0]), 5.0, 0.5)    # [-1.98983]
    """
    (k, n, p, loc), dt = _u.floats("nbinom.logpmf", k=k, n=n, p=p, loc=loc)
    y = k - loc
    comb = _gammaln(y + n) - _gammaln(n) - _gammaln(y + 1.0)
    out = comb + _xlogy(n, p) + _xlogy(y, 1.0 - p)
    return _u.finish(jnp.where(k < loc, -np.inf, out), dt)


def pmf(k, n, p, loc=0):
    """P(K = k), exp(logpmf).

    >>> st.nbinom.pmf(jnp.asarray([3.0]), 5.0, 0.5)    # [0.13671866]
    """
    (k, n, p, loc), dt = _u.floats("nbinom.pmf", k=k, n=n, p=p, loc=loc)
    return _u.finish(jnp.exp(logpmf(k, n, p, loc)), dt)


_u.export(globals(), "nbinom", __all__)
