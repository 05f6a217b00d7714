"""The normal distribution truncated to [a, b] (standardised bounds: x lies in
[loc + a scale, loc + b scale]) (jax.scipy.stats.truncnorm): logpdf, pdf, logcdf, cdf,
logsf, sf. The normalising mass is computed in log space on the side of the tails where
log_ndtr is accurate (scipy's method, as JAX's). NaN where a >= b.

>>> st.truncnorm.pdf(jnp.asarray([0.0]), -1.0, 1.0)    # [0.58436865]
"""
import math

import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from .. import special as _sp

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "logsf", "sf"]


def _log_diff(x, y):
    """log(exp(x) - exp(y)) (NaN where y > x), as JAX: logsumexp with weights 1, -1."""
    ones = jnp.ones_like(x)
    return _sp.logsumexp(jnp.stack([x, y]), b=jnp.stack([ones, -ones]), axis=0)


def _log_gauss_mass(a, b):
    """log P(a < Z < b) for a standard normal Z."""
    a, b = jnp.broadcast_arrays(a, b)
    left, right = b <= 0, a > 0
    # both ends in one tail: the difference of the log cdfs there, reflected into the left
    # tail (log_ndtr is accurate there); straddling 0: log1p of minus both tails' masses
    a_tail = jnp.where(right, -b, a)
    b_tail = jnp.where(right, -a, b)
    tail = _log_diff(_sp._log_ndtr(b_tail), _sp._log_ndtr(a_tail))
    central = jnp.log1p(-_sp._ndtr(a) - _sp._ndtr(-b))
    return jnp.where(left | right, tail, central)


def _logpdf(x, a, b, loc, scale):
    d = x - loc
    out = (jnp.log(scale * scale * (2 * math.pi)) + d * d / (scale * scale)) * -0.5 \
        - _log_gauss_mass(a, b)
    z = d / scale
    out = jnp.where((z < a) | (z > b), -np.inf, out)
    return jnp.where(a >= b, np.nan, out)


def logpdf(x, a, b, loc=0, scale=1):
    """norm.logpdf(x, loc, scale) - log P(a < Z < b) inside the bounds, -inf outside.

    >>> st.truncnorm.logpdf(jnp.asarray([0.0, 2.0]), -1.0, 1.0)    # [-0.53722334, -inf]
    """
    (x, a, b, loc, scale), dt = _u.floats("truncnorm.logpdf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _u.finish(_logpdf(x, a, b, loc, scale), dt)


def pdf(x, a, b, loc=0, scale=1):
    """The truncated normal density, exp(logpdf).

    >>> st.truncnorm.pdf(jnp.asarray([1.0]), 0.0, np.inf)    # [0.48394145]
    """
    (x, a, b, loc, scale), dt = _u.floats("truncnorm.pdf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _u.finish(jnp.exp(_logpdf(x, a, b, loc, scale)), dt)


def _logcdf(x, a, b, loc, scale):
    z = (x - loc) / scale
    mass = _log_gauss_mass(a, b)
    logcdf = _log_gauss_mass(a, z) - mass
    logsf = _log_gauss_mass(z, b) - mass
    # near 1, log1p(-sf) keeps the digits that log(mass below) / mass loses (scipy's rule)
    out = jnp.select([z >= b, z <= a, logcdf > -0.1, z > a],
                     [jnp.zeros_like(z), jnp.full_like(z, -np.inf),
                      jnp.log1p(-jnp.exp(logsf)), logcdf])
    return jnp.where(a >= b, np.nan, out)


def logcdf(x, a, b, loc=0, scale=1):
    """log P(X <= x): 0 above the upper bound, -inf below the lower one.

    >>> st.truncnorm.logcdf(jnp.asarray([0.0]), -1.0, 1.0)    # [-0.6931472]
    """
    (x, a, b, loc, scale), dt = _u.floats("truncnorm.logcdf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _u.finish(_logcdf(x, a, b, loc, scale), dt)


def cdf(x, a, b, loc=0, scale=1):
    """P(X <= x), exp(logcdf).

    >>> st.truncnorm.cdf(jnp.asarray([0.5]), -1.0, 1.0)    # [0.7804532]
    """
    (x, a, b, loc, scale), dt = _u.floats("truncnorm.cdf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _u.finish(jnp.exp(_logcdf(x, a, b, loc, scale)), dt)


def logsf(x, a, b, loc=0, scale=1):
    """log P(X > x) = logcdf(-x, -b, -a, -loc, scale).

    >>> st.truncnorm.logsf(jnp.asarray([0.0]), -1.0, 1.0)    # [-0.6931472]
    """
    (x, a, b, loc, scale), dt = _u.floats("truncnorm.logsf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _u.finish(_logcdf(-x, -b, -a, -loc, scale), dt)


def sf(x, a, b, loc=0, scale=1):
    """P(X > x), exp(logsf).

    >>> st.truncnorm.sf(jnp.asarray([0.5]), -1.0, 1.0)    # [0.21954677]
    """
    (x, a, b, loc, scale), dt = _u.floats("truncnorm.sf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _u.finish(jnp.exp(_logcdf(-x, -b, -a, -loc, scale)), dt)


_u.export(globals(), "truncnorm", __all__)
