"""The von Mises distribution on the circle with concentration `kappa`
(jax.scipy.stats.vonmises): logpdf, pdf. Not restricted to one period, as JAX.

>>> st.vonmises.pdf(jnp.asarray([0.0]), 1.0)    # [0.34171045]
"""
import math

import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from . import _weak as _w
from ..special_integrals import _i0e

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """kappa (cos x - 1) - log(2 pi i0e(kappa)) (i0e, the scaled Bessel function: no
    overflow for large kappa); NaN unless kappa > 0.

    >>> st.vonmises.logpdf(jnp.asarray([0.0, 3.0]), 2.0)    # [-0.6618706, -4.6418557]
    """
    (x, kappa), dt = _u.floats("vonmises.logpdf", x=x, kappa=kappa)
    out = kappa * (jnp.cos(x) - 1.0) - jnp.log(_i0e(kappa) * (2 * math.pi))
    return _w.finish(jnp.where(kappa > 0, out, np.nan), dt, x)


def pdf(x, kappa):
    """The von Mises density, exp(logpdf).

    >>> st.vonmises.pdf(jnp.asarray([1.0]), 2.0)    # [0.2057145]
    """
    (x, kappa), dt = _u.floats("vonmises.pdf", x=x, kappa=kappa)
    return _u.finish(jnp.exp(logpdf(x, kappa)), dt)


_u.export(globals(), "vonmises", __all__)
