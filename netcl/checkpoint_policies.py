"""jax.checkpoint_policies: which values `netcl.checkpoint(fun, policy=...)` keeps from the
forward pass (transforms/remat_policies.py says how). JAX's offloading policies
(offload_dot_with_no_batch_dims, save_and_offload_only_these_names) move values to host
memory, which netcl's devices do not distinguish: they are not here.

>>> layer = netcl.checkpoint(layer, policy=netcl.checkpoint_policies.dots_saveable)
"""
from .transforms.remat_policies import (checkpoint_dots,  # noqa: F401
                                        checkpoint_dots_with_no_batch_dims, dots_saveable,
                                        dots_with_no_batch_dims_saveable, everything_saveable,
                                        nothing_saveable, save_any_names_but_these,
                                        save_anything_except_these_names,
                                        save_from_both_policies, save_only_these_names)
