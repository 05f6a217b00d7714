"""The Laplace distribution (jax.scipy.stats.laplace): logpdf, pdf, cdf.

>>> st.laplace.pdf(jnp.asarray([0.0]))    # [0.5]
"""
import math

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, loc=0, scale=1):
    """-|x - loc| / scale - log(2 scale).

    >>> st.laplace.logpdf(jnp.asarray([1.0]))    # [-1.6931472]
    """
    (x, loc, scale), dt = _u.floats("laplace.logpdf", x=x, loc=loc, scale=scale)
    return _u.finish(-(jnp.abs(x - loc) / scale) - jnp.log(scale) - math.log(2), dt)


def pdf(x, loc=0, scale=1):
    """exp(-|x - loc| / scale) / (2 scale).

    >>> st.laplace.pdf(jnp.asarray([1.0]))    # [0.18393973]
    """
    (x, loc, scale), dt = _u.floats("laplace.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def cdf(x, loc=0, scale=1):
    """exp(z) / 2 for z = (x - loc) / scale <= 0, 1 - exp(-z) / 2 above.

    >>> st.laplace.cdf(jnp.asarray([-1.0, 0.0]))    # [0.18393973, 0.5]
    """
    (x, loc, scale), dt = _u.floats("laplace.cdf", x=x, loc=loc, scale=scale)
    z = (x - loc) / scale
    # exp of -|z| in both branches: the one not taken cannot overflow (nor its derivative)
    half_tail = 0.5 * jnp.exp(-jnp.abs(z))
    return _u.finish(jnp.where(z <= 0, half_tail, 1.0 - half_tail), dt)


_u.export(globals(), "laplace", __all__)
