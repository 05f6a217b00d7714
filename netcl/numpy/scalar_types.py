"""jnp.float32 and the other scalar types: a dtype wherever one is expected
(`jnp.zeros(3, jnp.float32)`, `x.dtype == jnp.float32`, `np.dtype(jnp.float32)`), and a
constructor, as in JAX: `jnp.float32(1.5)` is a 0-d float32 Array, `jnp.int32(x)` converts.

>>> jnp.float32(1.5)
Array(1.5, dtype=float32)
"""
import numpy as np


class ScalarType:
    """A dtype that can be called to make an array of it (JAX's scalar types)."""

    def __init__(self, dtype, name):
        self.dtype = np.dtype(dtype)
        self.__name__ = self.__qualname__ = name

    def __call__(self, x):
        from .creation import asarray
        return asarray(x, dtype=self.dtype)

    # equal to, and hashed as, its dtype: tables keyed by dtypes find it
    def __eq__(self, other):
        try:
            return self.dtype == np.dtype(other)
        except TypeError:
            return NotImplemented

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"<class 'netcl.numpy.{self.__name__}'>"


def scalar_types(*dtypes):
    """ScalarType objects for the dtypes, named as the dtypes."""
    return tuple(ScalarType(d, np.dtype(d).name) for d in dtypes)
