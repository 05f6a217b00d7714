"""netcl.experimental: the counterpart of ``jax.experimental``, so that programs written
against it port by changing imports::

    from netcl.experimental.ode import odeint   # was: from jax.experimental.ode import odeint

``ode``: ``odeint``, adaptive Dormand-Prince ODE integration with adjoint gradients.
``shard_map``: ``shard_map(f, mesh, in_specs, out_specs)`` (now ``netcl.shard_map``).
"""
from . import ode, shard_map

__all__ = ["ode", "shard_map"]
