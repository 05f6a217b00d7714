"""The Dirichlet distribution with concentrations `alpha` (jax.scipy.stats.dirichlet):
logpdf, pdf. The components of `x` are on its first axis (scipy's and JAX's layout): `x` of
shape (K, ...) for K = len(alpha), or (K - 1, ...) with the last component implied.

>>> st.dirichlet.pdf(jnp.asarray([0.2, 0.3, 0.5]), jnp.asarray([1.0, 1.0, 1.0]))   # 2.0
"""
import numpy as np

from ... import numpy as jnp
from .. import _util as _u
from ..special import _gammaln, _xlogy

__all__ = ["logpdf", "pdf"]


def _logpdf(where, x, alpha):
    xs = _u.shape_dtype(where, "x", x)[0]
    ashape = _u.shape_dtype(where, "alpha", alpha)[0]
    if len(ashape) != 1:
        raise ValueError(f"{where}: `alpha` must be one-dimensional; got alpha.shape="
                         f"{ashape}")
    if not xs or xs[0] not in (ashape[0], ashape[0] - 1):
        raise ValueError(f"{where}: `x` must have either the same number of entries as "
                         f"`alpha` or one entry fewer on its first axis; got x.shape={xs}, "
                         f"alpha.shape={ashape}")
    # promoted to one float dtype, not broadcast (x's trailing axes are a batch)
    (x, alpha), dt = _u.floats(where, broadcast=False, x=x, alpha=alpha)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1.0 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    norm = jnp.sum(_gammaln(alpha)) - _gammaln(jnp.sum(alpha))
    a = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    out = jnp.sum(_xlogy(a - 1.0, x), axis=0) - norm
    # off the simplex (a component <= 0, or a sum 1e-6 or more away from 1): -inf, as JAX
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1.0) < 1e-6)
    return jnp.where(simplex, out, -np.inf), dt


def logpdf(x, alpha):
    """sum_i (alpha_i - 1) log x_i - (sum_i gammaln(alpha_i) - gammaln(sum_i alpha_i)) on
    the simplex, -inf off it.

    >>> st.dirichlet.logpdf(jnp.asarray([0.2, 0.3]), jnp.asarray([2.0, 3.0, 4.0]))  # 2.0228705
    """
    out, dt = _logpdf("dirichlet.logpdf", x, alpha)
    return _u.finish(out, dt)


def pdf(x, alpha):
    """The Dirichlet density, exp(logpdf).

    >>> st.dirichlet.pdf(jnp.asarray([[0.2, 0.5], [0.8, 0.5]]), jnp.asarray([2.0, 2.0]))
    [0.96, 1.5]
    """
    out, dt = _logpdf("dirichlet.pdf", x, alpha)
    return _u.finish(jnp.exp(out), dt)


_u.export(globals(), "dirichlet", __all__)
