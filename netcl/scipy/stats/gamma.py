"""The gamma distribution with shape `a` (jax.scipy.stats.gamma): logpdf, pdf.

>>> st.gamma.logpdf(jnp.asarray([1.0, 2.0]), 2.0)    # [-1., -1.3068528]
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _gammaln, _xlogy

__all__ = ["logpdf", "pdf"]


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


_u.export(globals(), "gamma", __all__)
