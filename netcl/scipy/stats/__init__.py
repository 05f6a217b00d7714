"""netcl.scipy.stats: jax.scipy.stats's distributions, composed from netcl's operations.

Each distribution is a module of functions with JAX's (and scipy's) signatures, ``loc`` and
``scale`` keywords included; grad, jit and vmap work through all of them.

>>> import netcl.scipy.stats as st
>>> st.norm.logpdf(jnp.asarray([0.0, 1.0]), loc=0.0, scale=2.0)   # [-1.6120857, -1.7370857]
>>> st.multivariate_normal.logpdf(x, mean, cov)
"""
from . import bernoulli, beta, gamma, laplace, logistic, multivariate_normal, norm, uniform

__all__ = ["bernoulli", "beta", "gamma", "laplace", "logistic", "multivariate_normal", "norm",
           "uniform"]
