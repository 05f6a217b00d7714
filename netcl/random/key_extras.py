"""jax.random's key utilities that netcl's raw keys make simple: clone, key_impl, key_dtype.

netcl's keys are raw uint32 arrays of shape (..., 2) (as JAX's legacy `PRNGKey` keys) of the
one implementation netcl has, threefry2x32, and arrays are immutable, so `clone` returns
the key itself and `key_impl` always names 'threefry2x32'.

>>> k = netcl.random.PRNGKey(0)
>>> netcl.random.key_impl(k)
'threefry2x32'
"""
import numpy as np

from .keys import _check_impl, _is_array, key_data

__all__ = ["clone", "key_impl", "key_dtype"]


def _keys(name, keys):
    if not _is_array(keys):
        raise TypeError(f"{name}: expected PRNG keys (a uint32 array of shape (..., 2) from "
                        f"netcl.random.PRNGKey or split), got {type(keys).__name__}")
    try:
        return key_data(keys)
    except TypeError as e:
        raise TypeError(f"{name}: {str(e).split(': ', 1)[-1]}") from None


def clone(key):
    """A copy of `key`, for code written for JAX's consumable typed keys: netcl's arrays are
    immutable, so the copy is the key itself.

    >>> k2 = netcl.random.clone(netcl.random.PRNGKey(0))
    """
    return _keys("clone", key)


def key_impl(keys):
    """The name of the PRNG implementation of `keys` (a key or an array of keys):
    'threefry2x32', the only one netcl has.

    >>> netcl.random.key_impl(netcl.random.split(netcl.random.PRNGKey(0), 4))
    'threefry2x32'
    """
    _keys("key_impl", keys)
    return "threefry2x32"


def key_dtype(impl_spec=None):
    """The dtype of netcl's keys of implementation `impl_spec` (None or 'threefry2x32'):
    uint32, as netcl has no typed key arrays (a key is uint32 data of shape (2,)).

    >>> netcl.random.key_dtype()
    dtype('uint32')
    """
    _check_impl("key_dtype", impl_spec)
    return np.dtype(np.uint32)
