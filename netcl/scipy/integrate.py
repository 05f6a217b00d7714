"""netcl.scipy.integrate: jax.scipy.integrate's `trapezoid` (its only function in JAX 0.10).

>>> import netcl.scipy.integrate as si
>>> si.trapezoid(jnp.asarray([1.0, 2.0, 3.0, 2.0, 3.0, 2.0, 1.0]))    # 13.0
"""
from .. import numpy as jnp
from . import _util as _u

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of `y` along `axis` by the composite trapezoidal rule, at sample points
    `x` (same length along `axis`, or broadcastable) or spaced `dx` apart; as
    netcl.numpy.trapezoid (JAX's is the same function).

    >>> si.trapezoid(jnp.asarray([1.0, 2.0, 3.0]), jnp.asarray([0.0, 2.0, 5.0]))    # 10.5
    """
    return jnp.trapezoid(y, x, dx, axis)


_u.export(globals(), "", __all__)     # (errors name trapezoid)
