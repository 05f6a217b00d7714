"""netcl.scipy: jax.scipy's special functions and distributions, signal processing
(convolutions, spectra) and discrete cosine transforms, composed from netcl's operations
(so grad, jit and vmap work through them), and scipy.linalg's factorizations.

>>> import netcl.scipy.special as sp, netcl.scipy.stats as st
>>> sp.gammaln(jnp.asarray([0.5, 10.0]))      # [0.5723649, 12.801827]
>>> st.norm.logcdf(jnp.asarray([-40.0]))      # [-804.6084]
"""
from . import fft, linalg, signal, special, stats

__all__ = ["fft", "linalg", "signal", "special", "stats"]
