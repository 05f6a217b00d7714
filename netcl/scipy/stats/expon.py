"""The exponential distribution (jax.scipy.stats.expon): logpdf, pdf, cdf, logcdf, sf,
logsf, ppf.

>>> st.expon.cdf(jnp.asarray([-1.0, 1.0]))    # [0., 0.63212055]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """-(x - loc) / scale - log(scale) from loc on, -inf below.

    >>> st.expon.logpdf(jnp.asarray([1.0]), scale=2.0)    # [-1.1931472]
    """
    (x, loc, scale), dt = _u.floats("expon.logpdf", x=x, loc=loc, scale=scale)
    out = -((x - loc) / scale + jnp.log(scale))
    return _u.finish(jnp.where(x < loc, -np.inf, out), dt)


def pdf(x, loc=0, scale=1):
    """The exponential density, exp(logpdf).

    >>> st.expon.pdf(jnp.asarray([0.0, 1.0]))    # [1., 0.36787945]
    """
    (x, loc, scale), dt = _u.floats("expon.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def _logsf(x, loc, scale):
    return jnp.where(x < loc, 0.0, (loc - x) / scale)


def cdf(x, loc=0, scale=1):
    """1 - exp(-(x - loc) / scale) (as -expm1: accurate near loc), 0 below loc.

    >>> st.expon.cdf(jnp.asarray([1e-6]))    # [9.999995e-07]
    """
    (x, loc, scale), dt = _u.floats("expon.cdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.where(x < loc, 0.0, -jnp.expm1((loc - x) / scale)), dt)


def logcdf(x, loc=0, scale=1):
    """log1p(-sf).

    >>> st.expon.logcdf(jnp.asarray([1.0]))    # [-0.45867515]
    """
    (x, loc, scale), dt = _u.floats("expon.logcdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.log1p(-jnp.exp(_logsf(x, loc, scale))), dt)


def sf(x, loc=0, scale=1):
    """exp(-(x - loc) / scale), 1 below loc.

    >>> st.expon.sf(jnp.asarray([1.0]))    # [0.36787945]
    """
    (x, loc, scale), dt = _u.floats("expon.sf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(_logsf(x, loc, scale)), dt)


def logsf(x, loc=0, scale=1):
    """-(x - loc) / scale, 0 below loc.

    >>> st.expon.logsf(jnp.asarray([3.0]))    # [-3.]
    """
    (x, loc, scale), dt = _u.floats("expon.logsf", x=x, loc=loc, scale=scale)
    return _u.finish(_logsf(x, loc, scale), dt)


def ppf(q, loc=0, scale=1):
    """loc - scale log1p(-q); NaN for q outside [0, 1].

    >>> st.expon.ppf(jnp.asarray([0.5]))    # [0.6931472]
    """
    (q, loc, scale), dt = _u.floats("expon.ppf", q=q, loc=loc, scale=scale)
    bad = jnp.isnan(q) | (q < 0) | (q > 1)
    return _u.finish(jnp.where(bad, np.nan, loc - scale * jnp.log1p(-q)), dt)


_u.export(globals(), "expon", __all__)
