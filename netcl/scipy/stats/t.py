"""Student's t distribution with `df` degrees of freedom (jax.scipy.stats.t): logpdf, pdf.

>>> st.t.pdf(jnp.asarray([0.0]), 1.0)    # [0.31830987]  (df = 1: the Cauchy density)
"""
import math

from ... import numpy as jnp
from .. import _util as _u
from ..special import _gammaln

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """gammaln((df + 1) / 2) - gammaln(df / 2) - log(pi df scale^2) / 2
    - (df + 1) / 2 log1p(z^2 / df), z = (x - loc) / scale.

    >>> st.t.logpdf(jnp.asarray([0.0, 2.0]), 3.0)    # [-1.0008892, -2.695485]
    """
    (x, df, loc, scale), dt = _u.floats("t.logpdf", x=x, df=df, loc=loc, scale=scale)
    z = (x - loc) / scale
    half = df * 0.5
    half1 = half + 0.5
    norm = _gammaln(half) + jnp.log(scale * scale * math.pi * df) * 0.5 - _gammaln(half1)
    return _u.finish(-(norm + half1 * jnp.log1p(z * z / df)), dt)


def pdf(x, df, loc=0, scale=1):
    """The t density, exp(logpdf).

    >>> st.t.pdf(jnp.asarray([2.0]), 3.0)    # [0.06750966]
    """
    (x, df, loc, scale), dt = _u.floats("t.pdf", x=x, df=df, loc=loc, scale=scale)
    return _u.finish(jnp.exp(logpdf(x, df, loc, scale)), dt)


_u.export(globals(), "t", __all__)
