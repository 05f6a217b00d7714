"""The gamma distribution with shape `a` (jax.scipy.stats.gamma): logpdf, pdf, cdf, logcdf,
sf, logsf (the last four through netcl.scipy.special's gammainc / gammaincc).

>>> st.gamma.logpdf(jnp.asarray([1.0, 2.0]), 2.0)    # [-1., -1.3068528]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from . import _weak as _w
from ..special import _gammaln, _xlogy
from ..special_more import _gammainc, _gammaincc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def logpdf(x, a, loc=0, scale=1):
    """(a - 1) log y - y - gammaln(a) - log(scale), y = (x - loc) / scale; -inf below loc.

    >>> st.gamma.logpdf(jnp.asarray([0.5]), 1.0, scale=2.0)    # [-0.9431472]
    """
    (x, a, loc, scale), dt = _u.floats("gamma.logpdf", x=x, a=a, loc=loc, scale=scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, 1.0)     # (no log of a negative where not used)
    # xlogy: at y = 0 with a = 1 the density is 1 / scale, not NaN
    out = _xlogy(a - 1.0, y) - y - (_gammaln(a) + jnp.log(scale))
    return _u.finish(jnp.where(ok, out, -np.inf), dt)


def pdf(x, a, loc=0, scale=1):
    """The gamma density.

    >>> st.gamma.pdf(jnp.asarray([1.0]), 2.0)    # [0.36787945]
    """
    (x, a, loc, scale), dt = _u.floats("gamma.pdf", x=x, a=a, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, a, loc, scale)), dt)


def _cdf(x, a, loc, scale):
    # (x - loc) / scale clamped at 0 from below (NaN stays NaN), as JAX's lax.clamp
    return _gammainc(a, jnp.maximum((x - loc) / scale, 0.0))


def _sf(x, a, loc, scale):
    y = (x - loc) / scale
    # 1 below loc; gammaincc sees 0 there, so its derivative stays finite (not NaN)
    return jnp.where(y < 0, 1.0, _gammaincc(a, jnp.maximum(y, 0.0)))


def cdf(x, a, loc=0, scale=1):
    """P(X <= x) = gammainc(a, (x - loc) / scale), 0 below loc.

    >>> st.gamma.cdf(jnp.asarray([1.0, 2.0]), 2.0)    # [0.26424112, 0.59399414]
    """
    (x, a, loc, scale), dt = _u.floats("gamma.cdf", x=x, a=a, loc=loc, scale=scale)
    return _w.finish(_cdf(x, a, loc, scale), dt, x)


def logcdf(x, a, loc=0, scale=1):
    """log(cdf).

    >>> st.gamma.logcdf(jnp.asarray([1.0]), 2.0)    # [-1.3309338]
    """
    (x, a, loc, scale), dt = _u.floats("gamma.logcdf", x=x, a=a, loc=loc, scale=scale)
    return _w.finish(jnp.log(_cdf(x, a, loc, scale)), dt, x)


def sf(x, a, loc=0, scale=1):
    """P(X > x) = gammaincc(a, (x - loc) / scale), accurate in the right tail.

    >>> st.gamma.sf(jnp.asarray([1.0, 50.0]), 2.0)    # [0.7357589, 9.8366e-21]
    """
    (x, a, loc, scale), dt = _u.floats("gamma.sf", x=x, a=a, loc=loc, scale=scale)
    return _w.finish(_sf(x, a, loc, scale), dt, x)


def logsf(x, a, loc=0, scale=1):
    """log(sf).

    >>> st.gamma.logsf(jnp.asarray([1.0]), 2.0)    # [-0.30685282]
    """
    (x, a, loc, scale), dt = _u.floats("gamma.logsf", x=x, a=a, loc=loc, scale=scale)
    return _w.finish(jnp.log(_sf(x, a, loc, scale)), dt, x)


_u.export(globals(), "gamma", __all__)
