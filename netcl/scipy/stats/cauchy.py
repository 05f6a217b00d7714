"""The Cauchy distribution (jax.scipy.stats.cauchy): logpdf, pdf, cdf, logcdf, sf, logsf,
ppf, isf.

>>> st.cauchy.cdf(jnp.asarray([-1.0, 0.0, 1.0]))    # [0.25, 0.5, 0.75]
"""
import math

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """-log(pi scale) - log1p(z^2), z = (x - loc) / scale.

    >>> st.cauchy.logpdf(jnp.asarray([0.0, 1.0]))    # [-1.1447299, -1.8378770]
    """
    (x, loc, scale), dt = _u.floats("cauchy.logpdf", x=x, loc=loc, scale=scale)
    z = (x - loc) / scale
    return _u.finish(-(jnp.log(scale * math.pi) + jnp.log1p(z * z)), dt)


def pdf(x, loc=0, scale=1):
    """The Cauchy density, exp(logpdf).

    >>> st.cauchy.pdf(jnp.asarray([0.0]))    # [0.31830987]
    """
    (x, loc, scale), dt = _u.floats("cauchy.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def _cdf(x, loc, scale):
    return 0.5 + jnp.arctan((x - loc) / scale) * (1 / math.pi)


def cdf(x, loc=0, scale=1):
    """1/2 + arctan(z) / pi.

    >>> st.cauchy.cdf(jnp.asarray([1.0]), scale=2.0)    # [0.6475836]
    """
    (x, loc, scale), dt = _u.floats("cauchy.cdf", x=x, loc=loc, scale=scale)
    return _u.finish(_cdf(x, loc, scale), dt)


def logcdf(x, loc=0, scale=1):
    """log(cdf) (as JAX: the log of the cdf, so -inf once the cdf underflows).

    >>> st.cauchy.logcdf(jnp.asarray([0.0]))    # [-0.6931472]
    """
    (x, loc, scale), dt = _u.floats("cauchy.logcdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.log(_cdf(x, loc, scale)), dt)


def sf(x, loc=0, scale=1):
    """P(X > x) = cdf(-x, -loc, scale).

    >>> st.cauchy.sf(jnp.asarray([1.0]))    # [0.25]
    """
    (x, loc, scale), dt = _u.floats("cauchy.sf", x=x, loc=loc, scale=scale)
    return _u.finish(_cdf(-x, -loc, scale), dt)


def logsf(x, loc=0, scale=1):
    """log(sf).

    >>> st.cauchy.logsf(jnp.asarray([1.0]))    # [-1.3862944]
    """
    (x, loc, scale), dt = _u.floats("cauchy.logsf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.log(_cdf(-x, -loc, scale)), dt)


def ppf(q, loc=0, scale=1):
    """The quantile function, loc + scale tan(pi q - pi/2).

    >>> st.cauchy.ppf(jnp.asarray([0.75]))    # [1.]
    """
    (q, loc, scale), dt = _u.floats("cauchy.ppf", q=q, loc=loc, scale=scale)
    return _u.finish(jnp.tan(q * math.pi - math.pi / 2) * scale + loc, dt)


def isf(q, loc=0, scale=1):
    """The inverse survival function, loc + scale tan(pi/2 - pi q).

    >>> st.cauchy.isf(jnp.asarray([0.25]))    # [1.]
    """
    (q, loc, scale), dt = _u.floats("cauchy.isf", q=q, loc=loc, scale=scale)
    return _u.finish(jnp.tan(math.pi / 2 - q * math.pi) * scale + loc, dt)


_u.export(globals(), "cauchy", __all__)
