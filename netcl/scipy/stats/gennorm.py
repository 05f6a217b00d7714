"""The generalized normal distribution with shape `beta` (jax.scipy.stats.gennorm): logpdf,
pdf, cdf. beta = 2 is a normal of variance 1/2, beta = 1 the Laplace distribution.

>>> st.gennorm.cdf(jnp.asarray([0.0, 1.0]), 1.0)    # [0.5, 0.8160603]
"""
from ... import numpy as jnp
from .. import _util as _u
from . import _weak as _w
from ..special import _gammaln
from ..special_more import _gammainc

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, beta):
    """log(beta / 2) - gammaln(1 / beta) - |x|^beta.

    >>> st.gennorm.logpdf(jnp.asarray([0.0, 1.0]), 2.0)    # [-0.5723649, -1.5723649]
    """
    (x, beta), dt = _u.floats("gennorm.logpdf", x=x, beta=beta)
    return _u.finish(jnp.log(beta * 0.5) - _gammaln(1.0 / beta)
                     - jnp.power(jnp.abs(x), beta), dt)


def pdf(x, beta):
    """The generalized normal density, exp(logpdf).

    >>> st.gennorm.pdf(jnp.asarray([0.0]), 1.0)    # [0.5]
    """
    (x, beta), dt = _u.floats("gennorm.pdf", x=x, beta=beta)
    return _u.finish(jnp.exp(logpdf(x, beta)), dt)


def cdf(x, beta):
    """(1 + sign(x) gammainc(1 / beta, |x|^beta)) / 2.

    >>> st.gennorm.cdf(jnp.asarray([-1.0]), 2.0)    # [0.07864960]
    """
    (x, beta), dt = _u.floats("gennorm.cdf", x=x, beta=beta)
    p = _gammainc(1.0 / beta, jnp.power(jnp.abs(x), beta))
    return _w.finish((jnp.sign(x) * p + 1.0) * 0.5, dt, x)


_u.export(globals(), "gennorm", __all__)
