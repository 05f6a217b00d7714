"""The left-skewed Gumbel distribution (jax.scipy.stats.gumbel_l): logpdf, pdf, logcdf, cdf,
ppf, sf, logsf. Everything is NaN unless scale > 0 (as JAX).

>>> st.gumbel_l.cdf(jnp.asarray([0.0]))    # [0.63212055]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def logpdf(x, loc=0, scale=1):
    """z - exp(z) - log(scale), z = (x - loc) / scale.

    >>> st.gumbel_l.logpdf(jnp.asarray([0.0, -1.0]))    # [-1., -1.3678794]
    """
    (x, loc, scale), dt = _u.floats("gumbel_l.logpdf", x=x, loc=loc, scale=scale)
    z = (x - loc) / scale
    return _u.finish(jnp.where(scale > 0, z - jnp.exp(z) - jnp.log(scale), np.nan), dt)


def pdf(x, loc=0, scale=1):
    """The density, exp(logpdf).

    >>> st.gumbel_l.pdf(jnp.asarray([0.0]))    # [0.36787945]
    """
    (x, loc, scale), dt = _u.floats("gumbel_l.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def _logcdf(x, loc, scale):
    # log(1 - exp(-exp(z))) as log(-expm1(-exp(z))): accurate for z far below 0 (JAX's form)
    z = (x - loc) / scale
    return jnp.where(scale > 0, jnp.log(-jnp.expm1(-jnp.exp(z))), np.nan)


def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-exp(z))).

    >>> st.gumbel_l.logcdf(jnp.asarray([-20.0]))    # [-20.]
    """
    (x, loc, scale), dt = _u.floats("gumbel_l.logcdf", x=x, loc=loc, scale=scale)
    return _u.finish(_logcdf(x, loc, scale), dt)


def cdf(x, loc=0, scale=1):
    """1 - exp(-exp(z)), exp(logcdf).

    >>> st.gumbel_l.cdf(jnp.asarray([1.0]))    # [0.93401015]
    """
    (x, loc, scale), dt = _u.floats("gumbel_l.cdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(_logcdf(x, loc, scale)), dt)


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log1p(-p)) for 0 < p < 1, NaN elsewhere (the ends too, as JAX).

    >>> st.gumbel_l.ppf(jnp.asarray([0.63212055]))    # [0.]
    """
    (p, loc, scale), dt = _u.floats("gumbel_l.ppf", p=p, loc=loc, scale=scale)
    out = loc + scale * jnp.log(-jnp.log1p(-p))
    return _u.finish(jnp.where((p > 0) & (p < 1), out, np.nan), dt)


def _logsf(x, loc, scale):
    return jnp.where(scale > 0, -jnp.exp((x - loc) / scale), np.nan)


def sf(x, loc=0, scale=1):
    """exp(-exp(z)).

    >>> st.gumbel_l.sf(jnp.asarray([0.0]))    # [0.36787945]
    """
    (x, loc, scale), dt = _u.floats("gumbel_l.sf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(_logsf(x, loc, scale)), dt)


def logsf(x, loc=0, scale=1):
    """-exp(z).

    >>> st.gumbel_l.logsf(jnp.asarray([1.0]))    # [-2.7182817]
    """
    (x, loc, scale), dt = _u.floats("gumbel_l.logsf", x=x, loc=loc, scale=scale)
    return _u.finish(_logsf(x, loc, scale), dt)


_u.export(globals(), "gumbel_l", __all__)
