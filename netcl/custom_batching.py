"""jax.custom_batching: functions with their own vmap rule (transforms/custom_batching.py).

>>> @netcl.custom_batching.custom_vmap
... def f(x): return jnp.sin(x)
>>> f.def_vmap(lambda axis_size, in_batched, xs: (jnp.sin(xs), in_batched[0]))
"""
from .transforms.custom_batching import custom_vmap, sequential_vmap  # noqa: F401

__all__ = ["custom_vmap", "sequential_vmap"]
