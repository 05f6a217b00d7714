"""The beta distribution with shapes `a`, `b` (jax.scipy.stats.beta): logpdf, pdf, cdf,
logcdf, sf, logsf (the last four through netcl.scipy.special's betainc).

>>> st.beta.pdf(jnp.asarray([0.5]), 2.0, 2.0)    # [1.5]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from . import _weak as _w
from ..special import _betaln, _xlog1py, _xlogy
from ..special_more import _betainc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, b, loc=0, scale=1):
    """(a-1) log y + (b-1) log(1-y) - betaln(a, b) - log(scale), y = (x - loc) / scale;
    -inf outside [loc, loc + scale], NaN unless a, b and scale are positive (as JAX).

    >>> st.beta.logpdf(jnp.asarray([0.5]), 2.0, 2.0)    # [0.4054651]
    """
    (x, a, b, loc, scale), dt = _u.floats("beta.logpdf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    y = (x - loc) / scale
    out = _xlogy(a - 1.0, y) + _xlog1py(b - 1.0, -y) - _betaln(a, b) - jnp.log(scale)
    out = jnp.where((x > loc + scale) | (x < loc), -np.inf, out)
    return _u.finish(jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out), dt)


def pdf(x, a, b, loc=0, scale=1):
    """The beta density.

    >>> st.beta.pdf(jnp.asarray([0.25]), 1.0, 3.0)    # [1.6875]
    """
    (x, a, b, loc, scale), dt = _u.floats("beta.pdf", x=x, a=a, b=b, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, a, b, loc, scale)), dt)


def _y(x, loc, scale):
    # (x - loc) / scale clamped to [0, 1] (NaN stays NaN), as JAX's lax.clamp
    return jnp.minimum(jnp.maximum((x - loc) / scale, 0.0), 1.0)


def cdf(x, a, b, loc=0, scale=1):
    """P(X <= x) = betainc(a, b, y), y = (x - loc) / scale clamped to [0, 1].

    >>> st.beta.cdf(jnp.asarray([0.25, 0.5]), 2.0, 2.0)    # [0.15625, 0.5]
    """
    (x, a, b, loc, scale), dt = _u.floats("beta.cdf", x=x, a=a, b=b, loc=loc, scale=scale)
    return _w.finish(_betainc(a, b, _y(x, loc, scale)), dt, x)


def logcdf(x, a, b, loc=0, scale=1):
    """log(cdf).

    >>> st.beta.logcdf(jnp.asarray([0.5]), 2.0, 2.0)    # [-0.6931472]
    """
    (x, a, b, loc, scale), dt = _u.floats("beta.logcdf", x=x, a=a, b=b, loc=loc,
                                          scale=scale)
    return _w.finish(jnp.log(_betainc(a, b, _y(x, loc, scale))), dt, x)


def sf(x, a, b, loc=0, scale=1):
    """P(X > x) = betainc(b, a, 1 - y), accurate in the right tail.

    >>> st.beta.sf(jnp.asarray([0.25]), 2.0, 2.0)    # [0.84375]
    """
    (x, a, b, loc, scale), dt = _u.floats("beta.sf", x=x, a=a, b=b, loc=loc, scale=scale)
    return _w.finish(_betainc(b, a, 1.0 - _y(x, loc, scale)), dt, x)


def logsf(x, a, b, loc=0, scale=1):
    """log(sf).

    >>> st.beta.logsf(jnp.asarray([0.5]), 2.0, 2.0)    # [-0.6931472]
    """
    (x, a, b, loc, scale), dt = _u.floats("beta.logsf", x=x, a=a, b=b, loc=loc, scale=scale)
    return _w.finish(jnp.log(_betainc(b, a, 1.0 - _y(x, loc, scale))), dt, x)


_u.export(globals(), "beta", __all__)
