"""The uniform distribution on [loc, loc + scale] (jax.scipy.stats.uniform): logpdf, pdf,
cdf, ppf.

>>> st.uniform.pdf(jnp.asarray([0.5, 2.0]), loc=0.0, scale=1.0)    # [1., 0.]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """-log(scale) on [loc, loc + scale], -inf outside.

    >>> st.uniform.logpdf(jnp.asarray([1.0]), loc=0.0, scale=4.0)    # [-1.3862944]
    """
    (x, loc, scale), dt = _u.floats("uniform.logpdf", x=x, loc=loc, scale=scale)
    outside = (x > loc + scale) | (x < loc)
    return _u.finish(jnp.where(outside, -np.inf, -jnp.log(scale)), dt)


def pdf(x, loc=0, scale=1):
    """1 / scale on [loc, loc + scale], 0 outside.

    >>> st.uniform.pdf(jnp.asarray([1.0]), loc=0.0, scale=4.0)    # [0.25]
    """
    (x, loc, scale), dt = _u.floats("uniform.pdf", x=x, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, loc, scale)), dt)


def cdf(x, loc=0, scale=1):
    """(x - loc) / scale clipped to [0, 1].

    >>> st.uniform.cdf(jnp.asarray([-1.0, 1.0, 9.0]), loc=0.0, scale=4.0)  # [0., 0.25, 1.]
    """
    (x, loc, scale), dt = _u.floats("uniform.cdf", x=x, loc=loc, scale=scale)
    out = jnp.where(x < loc, 0.0, jnp.where(x > loc + scale, 1.0, (x - loc) / scale))
    return _u.finish(out, dt)


def ppf(q, loc=0, scale=1):
    """loc + scale * q, NaN for q outside [0, 1].

    >>> st.uniform.ppf(jnp.asarray([0.25]), loc=1.0, scale=4.0)    # [2.]
    """
    (q, loc, scale), dt = _u.floats("uniform.ppf", q=q, loc=loc, scale=scale)
    bad = jnp.isnan(q) | (q < 0) | (q > 1)
    return _u.finish(jnp.where(bad, np.nan, loc + scale * q), dt)


_u.export(globals(), "uniform", __all__)
