"""netcl.experimental: the counterpart of ``jax.experimental``, so that programs written
against it port by changing imports::

    from netcl.experimental.ode import odeint   # was: from jax.experimental.ode import odeint

``ode``: ``odeint``, adaptive Dormand-Prince ODE integration with adjoint gradients.
``shard_map``: ``shard_map(f, mesh, in_specs, out_specs)`` (now ``netcl.shard_map``).
``mesh_utils``: ``create_device_mesh``. ``multihost_utils``: ``sync_global_devices``,
``process_allgather``, ``broadcast_one_to_all``, ``assert_equal`` over netcl.distributed.
"""
from . import mesh_utils, multihost_utils, ode, shard_map

__all__ = ["mesh_utils", "multihost_utils", "ode", "shard_map"]
