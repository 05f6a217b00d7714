"""The Pareto distribution with shape `b` (jax.scipy.stats.pareto): logpdf, pdf, cdf, logcdf,
sf, logsf, ppf. Its support starts at loc + scale.

>>> st.pareto.cdf(jnp.asarray([0.5, 2.0]), 1.0)    # [0., 0.5]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, b, loc=0, scale=1):
    """log(b / scale) - (b + 1) log y, y = (x - loc) / scale; -inf below loc + scale.

    >>> st.pareto.logpdf(jnp.asarray([2.0]), 3.0)    # [-1.6739764]
    """
    (x, b, loc, scale), dt = _u.floats("pareto.logpdf", x=x, b=b, loc=loc, scale=scale)
    y = (x - loc) / scale
    out = -(jnp.log(scale / b) + (b + 1.0) * jnp.log(y))
    return _u.finish(jnp.where(x < loc + scale, -np.inf, out), dt)


def pdf(x, b, loc=0, scale=1):
    """The Pareto density, exp(logpdf).

    >>> st.pareto.pdf(jnp.asarray([2.0]), 3.0)    # [0.1875]
    """
    (x, b, loc, scale), dt = _u.floats("pareto.pdf", x=x, b=b, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, b, loc, scale)), dt)


def cdf(x, b, loc=0, scale=1):
    """1 - y^-b, 0 below loc + scale.

    >>> st.pareto.cdf(jnp.asarray([2.0]), 3.0)    # [0.875]
    """
    (x, b, loc, scale), dt = _u.floats("pareto.cdf", x=x, b=b, loc=loc, scale=scale)
    out = 1.0 - jnp.power((x - loc) / scale, -b)
    return _u.finish(jnp.where(x < loc + scale, 0.0, out), dt)


def logcdf(x, b, loc=0, scale=1):
    """log1p(-y^-b), -inf below loc + scale.

    >>> st.pareto.logcdf(jnp.asarray([2.0]), 3.0)    # [-0.13353139]
    """
    (x, b, loc, scale), dt = _u.floats("pareto.logcdf", x=x, b=b, loc=loc, scale=scale)
    out = jnp.log1p(-jnp.power((x - loc) / scale, -b))
    return _u.finish(jnp.where(x < loc + scale, -np.inf, out), dt)


def _logsf(x, b, loc, scale):
    return jnp.where(x < loc + scale, 0.0, -(b * jnp.log((x - loc) / scale)))


def sf(x, b, loc=0, scale=1):
    """y^-b, 1 below loc + scale.

    >>> st.pareto.sf(jnp.asarray([2.0]), 3.0)    # [0.125]
    """
    (x, b, loc, scale), dt = _u.floats("pareto.sf", x=x, b=b, loc=loc, scale=scale)
    return _u.finish(jnp.exp(_logsf(x, b, loc, scale)), dt)


def logsf(x, b, loc=0, scale=1):
    """-b log y, 0 below loc + scale.

    >>> st.pareto.logsf(jnp.asarray([2.0]), 3.0)    # [-2.0794415]
    """
    (x, b, loc, scale), dt = _u.floats("pareto.logsf", x=x, b=b, loc=loc, scale=scale)
    return _u.finish(_logsf(x, b, loc, scale), dt)


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b); NaN for q outside [0, 1].

    >>> st.pareto.ppf(jnp.asarray([0.875]), 3.0)    # [2.]
    """
    (q, b, loc, scale), dt = _u.floats("pareto.ppf", q=q, b=b, loc=loc, scale=scale)
    out = loc + scale * jnp.power(1.0 - q, -(1.0 / b))
    bad = jnp.isnan(q) | (q < 0) | (q > 1)
    return _u.finish(jnp.where(bad, np.nan, out), dt)


_u.export(globals(), "pareto", __all__)
