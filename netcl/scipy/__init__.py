"""netcl.scipy: jax.scipy's special functions and distributions, signal processing
(convolutions, spectra) and discrete cosine transforms, trapezoidal integration and vector
quantization, composed from netcl's operations (so grad, jit and vmap work through them), and
scipy.linalg's factorizations, matrix functions and structured matrices; minimize
(BFGS), map_coordinates, RegularGridInterpolator, and 3-D rotations (spatial.transform).

>>> import netcl.scipy.special as sp, netcl.scipy.stats as st
>>> sp.gammaln(jnp.asarray([0.5, 10.0]))      # [0.5723649, 12.801827]
>>> st.norm.logcdf(jnp.asarray([-40.0]))      # [-804.6084]
"""
from . import cluster, fft, integrate, linalg, signal, special, stats
from . import interpolate, ndimage, optimize, spatial

__all__ = ["cluster", "fft", "integrate", "linalg", "signal", "special", "stats"]
__all__ += ["interpolate", "ndimage", "optimize", "spatial"]
