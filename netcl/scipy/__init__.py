"""netcl.scipy: jax.scipy's special functions and distributions, composed from netcl's
operations (so grad, jit and vmap work through them).

>>> import netcl.scipy.special as sp, netcl.scipy.stats as st
>>> sp.gammaln(jnp.asarray([0.5, 10.0]))      # [0.5723649, 12.801827]
>>> st.norm.logcdf(jnp.asarray([-40.0]))      # [-804.6084]
"""
from . import special, stats

__all__ = ["special", "stats"]
