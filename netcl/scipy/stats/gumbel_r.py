"""The right-skewed Gumbel distribution (jax.scipy.stats.gumbel_r): logpdf, pdf, logcdf,
cdf, ppf, sf, logsf. Everything is NaN unless scale > 0 (as JAX).

>>> st.gumbel_r.cdf(jnp.asarray([0.0]))    # [0.36787945]
"""
import numpy as np

from ... import nn
from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "logcdf", "cdf", "ppf", "sf", "logsf"]


def logpdf(x, loc=0, scale=1):
    """-(z + exp(-z)) - log(scale), z = (x - loc) / scale.

    >>> st.gumbel_r.logpdf(jnp.asarray([0.0, 1.0]))    # [-1., -1.3678794]
    """
    (x, loc, scale), dt = _u.floats("gumbel_r.logpdf", x=x, loc=loc, scale=scale)
    z = (x - loc) / scale
    return _u.finish(jnp.where(scale > 0, -(z + jnp.exp(-z)) - jnp.log(scale), np.nan), dt)


def pdf(x, loc=0, scale=1):
    """The density, exp(logpdf).

    >>> st.gumbel_r.pdf(jnp.asarray([0.0]))    # [0.36787945]
    """
    (x, loc, scale), dt = _u.floats("gumbel_r.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def _logcdf(x, loc, scale):
    return jnp.where(scale > 0, -jnp.exp((loc - x) / scale), np.nan)


def logcdf(x, loc=0, scale=1):
    """-exp(-z).

    >>> st.gumbel_r.logcdf(jnp.asarray([-1.0]))    # [-2.7182817]
    """
    (x, loc, scale), dt = _u.floats("gumbel_r.logcdf", x=x, loc=loc, scale=scale)
    return _u.finish(_logcdf(x, loc, scale), dt)


def cdf(x, loc=0, scale=1):
    """exp(-exp(-z)).

    >>> st.gumbel_r.cdf(jnp.asarray([1.0]))    # [0.69220066]
    """
    (x, loc, scale), dt = _u.floats("gumbel_r.cdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(_logcdf(x, loc, scale)), dt)


def ppf(p, loc=0, scale=1):
    """loc - scale log(-log p) for 0 < p < 1, NaN elsewhere (the ends too, as JAX).

    >>> st.gumbel_r.ppf(jnp.asarray([0.36787945]))    # [0.]
    """
    (p, loc, scale), dt = _u.floats("gumbel_r.ppf", p=p, loc=loc, scale=scale)
    out = loc - scale * jnp.log(-jnp.log(p))
    return _u.finish(jnp.where((p > 0) & (p < 1), out, np.nan), dt)


def sf(x, loc=0, scale=1):
    """1 - exp(-exp(-z)), as -expm1(-exp(-z)): accurate far in the right tail (where
    JAX's 1 - exp(...) rounds to 0).

    >>> st.gumbel_r.sf(jnp.asarray([0.0, 30.0]))    # [0.63212055, 9.357623e-14]
    """
    (x, loc, scale), dt = _u.floats("gumbel_r.sf", x=x, loc=loc, scale=scale)
    out = -jnp.expm1(-jnp.exp((loc - x) / scale))
    return _u.finish(jnp.where(scale > 0, out, np.nan), dt)


def logsf(x, loc=0, scale=1):
    """log(1 - exp(-exp(-z))), through log1mexp.

    >>> st.gumbel_r.logsf(jnp.asarray([0.0]))    # [-0.45867515]
    """
    (x, loc, scale), dt = _u.floats("gumbel_r.logsf", x=x, loc=loc, scale=scale)
    out = nn.log1mexp(jnp.exp((loc - x) / scale))
    return _u.finish(jnp.where(scale > 0, out, np.nan), dt)


_u.export(globals(), "gumbel_r", __all__)
