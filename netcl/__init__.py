"""netcl: a functional, JAX-style deep-learning library on OpenCL.

>>> import netcl, netcl.numpy as jnp
>>> x = jnp.arange(4.0)
>>> netcl.grad(lambda x: jnp.sum(jnp.sin(x)))(x)
"""
from .core import (ConcretizationError, Device, KernelBuildError, LeakedTracerError,
                   ShapedArray, block_until_ready, default_device)
from .core.array import AnyArray as Array
from .core.array import copy_to_host_async  # noqa: F401
from .core.config import config, default_matmul_precision, tune
from .core.dtypes import bool_, bfloat16, float16, float32, float64, int32, uint32
from . import tree_util  # noqa: F401
from . import tree  # noqa: F401
from . import numpy  # noqa: F401  (installs array operators)
from . import lax  # noqa: F401
from . import nn  # noqa: F401
from . import random  # noqa: F401
from . import data, io, optim, stax  # noqa: F401
from . import example_libraries, scipy  # noqa: F401
from . import experimental  # noqa: F401  (jax.experimental.ode's odeint)
from .numpy.creation import device_put
from . import test_util  # noqa: F401
from .transforms.jit import clear_caches, jit
from .transforms.pmap import (device_count, device_put_replicated, device_put_sharded,
                              local_device_count, local_devices, pmap)
from .core.sharded import ShardedArray
from . import sharding  # noqa: F401
from .sharding import NamedSharding, P, make_mesh, reshard, set_mesh  # noqa: F401
from .core.global_array import (make_array_from_callback,  # noqa: F401
                                make_array_from_process_local_data,
                                make_array_from_single_device_arrays)
from .transforms.shard_map import shard_map  # noqa: F401
from . import distributed  # noqa: F401
from .distributed import devices, process_count, process_index, process_indices
# (with JAX's backend= argument, over pmap's own: distributed.py)
from .distributed import device_count, local_device_count, local_devices  # noqa: F811
from .transforms import (checkpoint, custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jvp,
                         make_ir, remat, stop_gradient, value_and_grad, vjp, vmap)
from .transforms.autocast import autocast
from . import mixed_precision  # noqa: F401
# More of the jax namespace: api_extras.py (eval_shape, linearize, disable_jit, ...), host
# callbacks (callbacks.py), jax.debug / jax.image / jax.dtypes / jax.errors
from .api_extras import (ShapeDtypeStruct, custom_gradient, default_backend,  # noqa: F401
                         device_get, disable_jit, ensure_compile_time_eval, eval_shape,
                         jacobian, linear_transpose, linearize, make_jaxpr, named_call,
                         named_scope, print_environment_info, typeof, enable_x64,
                         closure_convert, live_arrays)
from .callbacks import pure_callback  # noqa: F401
from . import debug, dtypes, errors, image, ops, typing  # noqa: F401
from . import ad_checkpoint, checkpoint_policies, custom_batching, profiler  # noqa: F401
from .dtypes import float0  # noqa: F401
from .core.config import (debug_infs, debug_nans, log_compiles,  # noqa: F401
                          numpy_dtype_promotion, numpy_rank_promotion, transfer_guard,
                          transfer_guard_device_to_device, transfer_guard_device_to_host,
                          transfer_guard_host_to_device)
from .core.global_array import Shard  # noqa: F401


def _renamed(new, old):
    """JAX's deprecated alias `old` of `new`: warns (UserWarning, as JAX's), then calls it."""
    def alias(backend=None):
        import warnings
        warnings.warn(f"netcl.{old} is a deprecated alias of netcl.{new.__name__} (as "
                      f"jax.{old}); use netcl.{new.__name__}", stacklevel=2)
        return new()
    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = (f"Deprecated alias of `{new.__name__}` (jax.{old}).\n\n    >>> "
                     f"netcl.{old}()     # UserWarning; then netcl.{new.__name__}()")
    return alias


host_count = _renamed(process_count, "host_count")
host_id = _renamed(process_index, "host_id")
host_ids = _renamed(process_indices, "host_ids")

try:        # einops finds netcl's arrays through a backend defined where einops is installed
    import importlib.util as _util
    if _util.find_spec("einops") is not None:
        from . import einops_backend  # noqa: F401
except ImportError:
    pass

__version__ = "0.1.0"
