"""The logistic distribution (jax.scipy.stats.logistic): logpdf, pdf, cdf, sf, ppf, isf.

>>> st.logistic.cdf(jnp.asarray([0.0]))    # [0.5]
"""
from ... import lax
from ... import numpy as jnp
from .. import _util as _u
from ..special import _logit

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """log of exp(-z) / (scale (1 + exp(-z))^2), z = (x - loc) / scale; finite at any x.

    >>> st.logistic.logpdf(jnp.asarray([0.0]))    # [-1.3862944]
    """
    (x, loc, scale), dt = _u.floats("logistic.logpdf", x=x, loc=loc, scale=scale)
    z = (x - loc) / scale
    # -2 log(exp(z/2) + exp(-z/2)) (JAX's form): no overflow for large |z|
    return _u.finish(-2.0 * jnp.logaddexp(z * 0.5, z * -0.5) - jnp.log(scale), dt)


def pdf(x, loc=0, scale=1):
    """The logistic density.

    >>> st.logistic.pdf(jnp.asarray([0.0]))    # [0.25]
    """
    (x, loc, scale), dt = _u.floats("logistic.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def cdf(x, loc=0, scale=1):
    """expit((x - loc) / scale).

    >>> st.logistic.cdf(jnp.asarray([2.0]))    # [0.8807971]
    """
    (x, loc, scale), dt = _u.floats("logistic.cdf", x=x, loc=loc, scale=scale)
    return _u.finish(lax.logistic((x - loc) / scale), dt)


def sf(x, loc=0, scale=1):
    """expit(-(x - loc) / scale).

    >>> st.logistic.sf(jnp.asarray([2.0]))    # [0.11920292]
    """
    (x, loc, scale), dt = _u.floats("logistic.sf", x=x, loc=loc, scale=scale)
    return _u.finish(lax.logistic((loc - x) / scale), dt)


def ppf(x, loc=0, scale=1):
    """loc + scale * logit(x), x the probability (JAX's argument name).

    >>> st.logistic.ppf(jnp.asarray([0.5]))    # [0.]
    """
    (x, loc, scale), dt = _u.floats("logistic.ppf", x=x, loc=loc, scale=scale)
    return _u.finish(_logit(x) * scale + loc, dt)


def isf(x, loc=0, scale=1):
    """loc - scale * logit(x), x the probability (JAX's argument name).

    >>> st.logistic.isf(jnp.asarray([0.5]))    # [0.]
    """
    (x, loc, scale), dt = _u.floats("logistic.isf", x=x, loc=loc, scale=scale)
    return _u.finish(_logit(x) * -scale + loc, dt)


_u.export(globals(), "logistic", __all__)
