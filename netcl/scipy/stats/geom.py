"""The geometric distribution, trials up to the first success of probability p
(jax.scipy.stats.geom): logpmf, pmf.

>>> st.geom.pmf(jnp.asarray([1.0, 2.0, 3.0]), 0.5)    # [0.5, 0.25, 0.125]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """(y - 1) log(1 - p) + log p, y = k - loc; -inf for y <= 0.

    >>> st.geom.logpmf(jnp.asarray([2.0]), 0.25)    # [-1.6739764]
    """
    (k, p, loc), dt = _u.floats("geom.logpmf", k=k, p=p, loc=loc)
    x = k - loc
    out = _xlog1py(x - 1.0, -p) + jnp.log(p)
    return _u.finish(jnp.where(x <= 0, -np.inf, out), dt)


def pmf(k, p, loc=0):
    """P(K = k), exp(logpmf).

    >>> st.geom.pmf(jnp.asarray([2.0]), 0.25)    # [0.1875]
    """
    (k, p, loc), dt = _u.floats("geom.pmf", k=k, p=p, loc=loc)
    return _u.finish(jnp.exp(logpmf(k, p, loc)), dt)


_u.export(globals(), "geom", __all__)
