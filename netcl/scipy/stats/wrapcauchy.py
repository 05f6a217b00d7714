"""The wrapped Cauchy distribution on [0, 2 pi] with shape `c` (jax.scipy.stats.wrapcauchy):
logpdf, pdf.

>>> st.wrapcauchy.pdf(jnp.asarray([0.0]), 0.5)    # [0.47746483]
"""
import math

import numpy as np

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x) on [0, 2 pi], -inf outside; NaN
    unless 0 < c < 1.

    >>> st.wrapcauchy.logpdf(jnp.asarray([math.pi]), 0.5)    # [-2.9364009]
    """
    (x, c), dt = _u.floats("wrapcauchy.logpdf", x=x, c=c)
    c2 = c * c
    out = jnp.log(1.0 - c2) - math.log(2 * math.pi) - jnp.log(1.0 + c2 - 2.0 * c * jnp.cos(x))
    out = jnp.where((x >= 0) & (x <= 2 * math.pi), out, -np.inf)
    return _u.finish(jnp.where((c > 0) & (c < 1), out, np.nan), dt)


def pdf(x, c):
    """The wrapped Cauchy density, exp(logpdf).

    >>> st.wrapcauchy.pdf(jnp.asarray([math.pi]), 0.5)    # [0.05305165]
    """
    (x, c), dt = _u.floats("wrapcauchy.pdf", x=x, c=c)
    return _u.finish(jnp.exp(logpdf(x, c)), dt)


_u.export(globals(), "wrapcauchy", __all__)
