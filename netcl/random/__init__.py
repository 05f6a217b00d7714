"""netcl.random: jax.random's functions over the Threefry-2x32 counter-based generator.

Keys are raw uint32[2] arrays; every function is pure and traces under jit, grad and vmap.
PRNGKey, split, fold_in, bits, randint, bernoulli and uniform are bit-identical to JAX.

  keys.py        PRNGKey/key, split, fold_in, bits, key_data, wrap_key_data; the streams
  continuous.py  uniform, normal, truncated_normal, gumbel, exponential, laplace, logistic,
                 cauchy
  discrete.py    bernoulli, randint, rademacher, categorical, permutation, choice
  distributions.py  lognormal, rayleigh, pareto, weibull_min, maxwell, double_sided_maxwell,
                 geometric, triangular, wald
  multivariate.py   multivariate_normal, orthogonal
  key_extras.py  clone, key_impl, key_dtype
  gamma.py       gamma, loggamma (JAX's rejection sampler), beta, dirichlet, chisquare, t, f
  samplers.py    poisson, binomial (JAX's loops, run per key as JAX's vmap runs them)
  vectors.py     multinomial, generalized_normal, ball

>>> from netcl import random
>>> key = random.PRNGKey(0)
>>> key, sub = random.split(key)
>>> x = random.normal(sub, (3, 4))
"""
from .continuous import (cauchy, exponential, gumbel, laplace, logistic, normal,
                         truncated_normal, uniform)
from .discrete import (bernoulli, categorical, choice, permutation, rademacher, randint)
from .distributions import (double_sided_maxwell, geometric, lognormal, maxwell, pareto,
                            rayleigh, triangular, wald, weibull_min)
from .gamma import beta, chisquare, dirichlet, f, gamma, loggamma, t
from .key_extras import clone, key_dtype, key_impl
from .keys import PRNGKey, bits, fold_in, key, key_data, split, wrap_key_data
from .multivariate import multivariate_normal, orthogonal
from .samplers import binomial, poisson
from .vectors import ball, generalized_normal, multinomial

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "truncated_normal", "bernoulli", "randint", "categorical",
           "gumbel", "exponential", "laplace", "logistic", "cauchy", "rademacher",
           "permutation", "choice", "lognormal", "rayleigh", "pareto", "weibull_min",
           "maxwell", "double_sided_maxwell", "geometric", "triangular", "wald",
           "multivariate_normal", "orthogonal", "clone", "key_impl", "key_dtype", "gamma",
           "loggamma", "beta", "dirichlet", "chisquare", "t", "f", "poisson", "binomial",
           "multinomial", "generalized_normal", "ball"]
