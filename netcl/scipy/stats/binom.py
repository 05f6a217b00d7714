"""The binomial distribution, n trials of probability p (jax.scipy.stats.binom): logpmf, pmf.
`k` and `n` are floats here as in JAX (gammaln makes the coefficient continuous in them).

>>> st.binom.pmf(jnp.asarray([0.0, 1.0, 2.0]), 2.0, 0.5)    # [0.25, 0.5, 0.25]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _gammaln, _xlog1py, _xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """log C(n, y) + y log p + (n - y) log(1 - p), y = k - loc; -inf outside
    [loc, loc + n] (JAX's rule: 0 where the log-linear term is 0, e.g. p = 0 at y = 0).

    >>> st.binom.logpmf(jnp.asarray([3.0]), 10.0, 0.2)    # [-1.6032506]
    """
    (k, n, p, loc), dt = _u.floats("binom.logpmf", k=k, n=n, p=p, loc=loc)
    y = k - loc
    comb = _gammaln(n + 1.0) - (_gammaln(y + 1.0) + _gammaln(n - y + 1.0))
    linear = _xlogy(y, p) + _xlog1py(n - y, -p)
    out = jnp.where(((y == 0) & (n == 0)) | (linear == 0), 0.0, comb + linear)
    return _u.finish(jnp.where((k >= loc) & (k < loc + n + 1.0), out, -np.inf), dt)


def pmf(k, n, p, loc=0):
    """P(K = k), exp(logpmf).

    >>> st.binom.pmf(jnp.asarray([3.0]), 10.0, 0.2)    # [0.20132658]
    """
    (k, n, p, loc), dt = _u.floats("binom.pmf", k=k, n=n, p=p, loc=loc)
    return _u.finish(jnp.exp(logpmf(k, n, p, loc)), dt)


_u.export(globals(), "binom", __all__)
