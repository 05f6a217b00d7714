"""The normal distribution (jax.scipy.stats.norm): logpdf, pdf, cdf, logcdf, sf, logsf, ppf,
isf. The tails go through netcl.scipy.special's ndtr / log_ndtr / ndtri, accurate far out.

>>> st.norm.logcdf(jnp.asarray([-40.0, 0.0]))   # [-804.6084, -0.6931472]
"""
import math

from ... import numpy as jnp
from .. import _util as _u
from .. import special as _sp

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """log of the normal density with mean `loc` and standard deviation `scale`.

    >>> st.norm.logpdf(jnp.asarray([0.0]))     # [-0.9189385]
    """
    (x, loc, scale), dt = _u.floats("norm.logpdf", x=x, loc=loc, scale=scale)
    # JAX's form: log(2 pi scale^2), so a negative scale acts as its absolute value
    scale2 = scale * scale
    d = x - loc
    return _u.finish((jnp.log(scale2 * (2 * math.pi)) + d * d / scale2) * -0.5, dt)


def pdf(x, loc=0, scale=1):
    """The normal density.

    >>> st.norm.pdf(jnp.asarray([0.0]))     # [0.3989423]
    """
    (x, loc, scale), dt = _u.floats("norm.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def cdf(x, loc=0, scale=1):
    """P(X <= x).

    >>> st.norm.cdf(jnp.asarray([1.959964]))     # [0.975]
    """
    (x, loc, scale), dt = _u.floats("norm.cdf", x=x, loc=loc, scale=scale)
    return _u.finish(_sp._ndtr((x - loc) / scale), dt)


def logcdf(x, loc=0, scale=1):
    """log P(X <= x), accurate far in the left tail.

    >>> st.norm.logcdf(jnp.asarray([-20.0]))     # [-203.91716]
    """
    (x, loc, scale), dt = _u.floats("norm.logcdf", x=x, loc=loc, scale=scale)
    return _u.finish(_sp._log_ndtr((x - loc) / scale), dt)


def sf(x, loc=0, scale=1):
    """P(X > x) = cdf(-x, -loc, scale), accurate in the right tail.

    >>> st.norm.sf(jnp.asarray([10.0]))     # [7.619853e-24]
    """
    (x, loc, scale), dt = _u.floats("norm.sf", x=x, loc=loc, scale=scale)
    return _u.finish(_sp._ndtr((loc - x) / scale), dt)


def logsf(x, loc=0, scale=1):
    """log P(X > x).

    >>> st.norm.logsf(jnp.asarray([20.0]))     # [-203.91716]
    """
    (x, loc, scale), dt = _u.floats("norm.logsf", x=x, loc=loc, scale=scale)
    return _u.finish(_sp._log_ndtr((loc - x) / scale), dt)


def ppf(q, loc=0, scale=1):
    """The quantile function: x with cdf(x) = q.

    >>> st.norm.ppf(jnp.asarray([0.975]), loc=1.0, scale=2.0)     # [4.919928]
    """
    (q, loc, scale), dt = _u.floats("norm.ppf", q=q, loc=loc, scale=scale)
    return _u.finish(_sp._ndtri(q) * scale + loc, dt)


def isf(q, loc=0, scale=1):
    """The inverse survival function: x with sf(x) = q.

    >>> st.norm.isf(jnp.asarray([0.025]))     # [1.959964]
    """
    (q, loc, scale), dt = _u.floats("norm.isf", q=q, loc=loc, scale=scale)
    return _u.finish(_sp._ndtri(q) * -scale + loc, dt)


_u.export(globals(), "norm", __all__)
