"""The chi-squared distribution with `df` degrees of freedom (jax.scipy.stats.chi2): logpdf,
pdf, cdf, logcdf, sf, logsf (through netcl.scipy.special's gammainc / gammaincc).

>>> st.chi2.cdf(jnp.asarray([3.841459]), 1.0)    # [0.95]
"""
import math

import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from . import _weak as _w
from ..special import _gammaln, _xlogy
from ..special_more import _gammainc, _gammaincc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, df, loc=0, scale=1):
    """(df/2 - 1) log y - y/2 - gammaln(df/2) - (df/2) log 2 - log(scale), y = (x - loc) /
    scale; -inf below loc.

    >>> st.chi2.logpdf(jnp.asarray([1.0, 2.0]), 2.0)    # [-1.1931472, -1.6931472]
    """
    (x, df, loc, scale), dt = _u.floats("chi2.logpdf", x=x, df=df, loc=loc, scale=scale)
    below = x < loc         # (not x >= loc: a NaN loc gives NaN, as JAX)
    y = jnp.where(below, 1.0, (x - loc) / scale)     # (no log of a negative where not used)
    half = df * 0.5
    # xlogy: at y = 0 with df = 2 the density is 1 / (2 scale) (JAX's log(y) * 0 is NaN)
    out = _xlogy(half - 1.0, y) - y * 0.5 - (_gammaln(half) + half * math.log(2.0)) \
        - jnp.log(scale)
    return _u.finish(jnp.where(below, -np.inf, out), dt)


def pdf(x, df, loc=0, scale=1):
    """The chi-squared density, exp(logpdf).

    >>> st.chi2.pdf(jnp.asarray([2.0]), 4.0)    # [0.18393973]
    """
    (x, df, loc, scale), dt = _u.floats("chi2.pdf", x=x, df=df, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, df, loc, scale)), dt)


def _half_y(x, loc, scale):
    # (x - loc) / (2 scale) clamped at 0 from below (NaN stays NaN), as JAX's lax.clamp
    return jnp.maximum((x - loc) / (scale * 2.0), 0.0)


def cdf(x, df, loc=0, scale=1):
    """gammainc(df/2, y/2), y = (x - loc) / scale clamped at 0.

    >>> st.chi2.cdf(jnp.asarray([-1.0, 2.0]), 2.0)    # [0., 0.63212055]
    """
    (x, df, loc, scale), dt = _u.floats("chi2.cdf", x=x, df=df, loc=loc, scale=scale)
    return _w.finish(_gammainc(df * 0.5, _half_y(x, loc, scale)), dt, x)


def logcdf(x, df, loc=0, scale=1):
    """log(cdf).

    >>> st.chi2.logcdf(jnp.asarray([2.0]), 2.0)    # [-0.45867515]
    """
    (x, df, loc, scale), dt = _u.floats("chi2.logcdf", x=x, df=df, loc=loc, scale=scale)
    return _w.finish(jnp.log(_gammainc(df * 0.5, _half_y(x, loc, scale))), dt, x)


def sf(x, df, loc=0, scale=1):
    """gammaincc(df/2, y/2): accurate in the right tail (not 1 - cdf).

    >>> st.chi2.sf(jnp.asarray([100.0]), 3.0)    # [1.6097e-21]
    """
    (x, df, loc, scale), dt = _u.floats("chi2.sf", x=x, df=df, loc=loc, scale=scale)
    return _w.finish(_gammaincc(df * 0.5, _half_y(x, loc, scale)), dt, x)


def logsf(x, df, loc=0, scale=1):
    """log(sf).

    >>> st.chi2.logsf(jnp.asarray([2.0]), 2.0)    # [-1.]
    """
    (x, df, loc, scale), dt = _u.floats("chi2.logsf", x=x, df=df, loc=loc, scale=scale)
    return _w.finish(jnp.log(_gammaincc(df * 0.5, _half_y(x, loc, scale))), dt, x)


_u.export(globals(), "chi2", __all__)
