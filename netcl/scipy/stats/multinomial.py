"""The multinomial distribution, counts `x` of n trials over categories of probabilities `p`
(jax.scipy.stats.multinomial): logpmf, pmf. The categories are on the last axis; `x` and `n`
must be integers (as JAX).

>>> st.multinomial.pmf(jnp.asarray([1, 1]), 2, jnp.asarray([0.5, 0.5]))    # 0.5
"""
import numpy as np

from ... import numpy as jnp
from ...core import dtypes
from .. import _util as _u
from ..special import _gammaln, _xlogy

__all__ = ["logpmf", "pmf"]


def _logpmf(where, x, n, p):
    for name, v in (("x", x), ("n", n)):
        dt = _u.shape_dtype(where, name, v)[1]
        kind = ("i" if type(v) is int else "f" if type(v) is float else "b") if dt is None \
            else dtypes.kind(dt)
        if kind not in "iu":
            raise ValueError(f"{where}: x and n must be of integer type; got {name} of "
                             f"{'dtype ' + str(dt) if dt is not None else type(v).__name__}")
    (p,), dt = _u.floats(where, p=p)
    x, n = (jnp.asarray(v).astype(p.dtype) for v in (x, n))
    out = _gammaln(n + 1.0) + jnp.sum(_xlogy(x, p) - _gammaln(x + 1.0), axis=-1)
    # the counts must add up to n (per row of x; JAX sums all of x, which agrees for one row)
    return jnp.where(jnp.sum(x, axis=-1) == n, out, -np.inf), dt


def logpmf(x, n, p):
    """log n! + sum_i (x_i log p_i - log x_i!) where sum_i x_i == n, -inf elsewhere.

    >>> st.multinomial.logpmf(jnp.asarray([2, 1, 0]), 3, jnp.asarray([0.5, 0.3, 0.2]))
    -1.4916548
    """
    out, dt = _logpmf("multinomial.logpmf", x, n, p)
    return _u.finish(out, dt)


def pmf(x, n, p):
    """P(X = x), exp(logpmf).

    >>> st.multinomial.pmf(jnp.asarray([2, 1, 0]), 3, jnp.asarray([0.5, 0.3, 0.2]))    # 0.225
    """
    out, dt = _logpmf("multinomial.pmf", x, n, p)
    return _u.finish(jnp.exp(out), dt)


_u.export(globals(), "multinomial", __all__)
