"""netcl.scipy.stats: jax.scipy.stats's distributions and statistics, composed from netcl's
operations.

Each distribution is a module of functions with JAX's (and scipy's) signatures, ``loc`` and
``scale`` keywords included; grad, jit and vmap work through all of them. Also
`gaussian_kde` (a pytree class), `mode`, `rankdata` and `sem`.

>>> import netcl.scipy.stats as st
>>> st.norm.logpdf(jnp.asarray([0.0, 1.0]), loc=0.0, scale=2.0)   # [-1.6120857, -1.7370857]
>>> st.multivariate_normal.logpdf(x, mean, cov)
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma,
               gennorm, geom, gumbel_l, gumbel_r, laplace, logistic, multinomial,
               multivariate_normal, nbinom, norm, pareto, poisson, t, truncnorm, uniform,
               vonmises, wrapcauchy)
from ._core import mode, rankdata, sem
from ._kde import gaussian_kde

# the distribution modules (each with its own __all__); gaussian_kde, mode, rankdata and sem
# are names here too, as in jax.scipy.stats
__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
           "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
           "truncnorm", "uniform", "vonmises", "wrapcauchy"]
