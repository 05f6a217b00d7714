"""netcl.random: jax.random's functions over the Threefry-2x32 counter-based generator.

Keys are raw uint32[2] arrays; every function is pure and traces under jit, grad and vmap.
PRNGKey, split, fold_in, bits, randint, bernoulli and uniform are bit-identical to JAX.

  keys.py        PRNGKey/key, split, fold_in, bits, key_data, wrap_key_data; the streams
  continuous.py  uniform, normal, truncated_normal, gumbel, exponential, laplace, logistic,
                 cauchy
  discrete.py    bernoulli, randint, rademacher, categorical, permutation, choice

>>> from netcl import random
>>> key = random.PRNGKey(0)
>>> key, sub = random.split(key)
>>> x = random.normal(sub, (3, 4))
"""
from .continuous import (cauchy, exponential, gumbel, laplace, logistic, normal,
                         truncated_normal, uniform)
from .discrete import (bernoulli, categorical, choice, permutation, rademacher, randint)
from .keys import PRNGKey, bits, fold_in, key, key_data, split, wrap_key_data

__all__ = ["PRNGKey", "key", "key_data", "wrap_key_data", "split", "fold_in", "bits",
           "uniform", "normal", "truncated_normal", "bernoulli", "randint", "categorical",
           "gumbel", "exponential", "laplace", "logistic", "cauchy", "rademacher",
           "permutation", "choice"]
