"""netcl.scipy.cluster: jax.scipy.cluster's `vq` module (vector quantization).

>>> from netcl.scipy.cluster import vq
>>> vq.vq(jnp.asarray([[1.1, 2.1]]), jnp.asarray([[1.0, 2.0], [3.0, 4.0]]))  # ([0], [0.1414])
"""
from . import vq

__all__ = ["vq"]
