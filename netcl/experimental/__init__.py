"""netcl.experimental: the counterpart of ``jax.experimental``, so that programs written
against it port by changing imports::

    from netcl.experimental.ode import odeint   # was: from jax.experimental.ode import odeint

``ode``: ``odeint``, adaptive Dormand-Prince ODE integration with adjoint gradients.
"""
from . import ode

__all__ = ["ode"]
