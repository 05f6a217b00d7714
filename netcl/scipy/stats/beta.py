"""The beta distribution with shapes `a`, `b` (jax.scipy.stats.beta): logpdf, pdf.

>>> st.beta.pdf(jnp.asarray([0.5]), 2.0, 2.0)    # [1.5]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _betaln, _xlog1py, _xlogy

__all__ = ["logpdf", "pdf"]


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


_u.export(globals(), "beta", __all__)
