"""jax.typing: the annotations library code writes against (`def f(x: ArrayLike) -> Array`).

- `ArrayLike`: what netcl's functions accept as an array: a netcl Array (or a tracer of
  one, which is an Array), a NumPy array or scalar, or a Python bool, int, float or complex.
- `DTypeLike`: what they accept as a dtype: a name ("float32"), a NumPy dtype or scalar type,
  or anything with a `dtype` attribute.

>>> from netcl.typing import ArrayLike
>>> def scale(x: ArrayLike, by: float = 2.0): return netcl.numpy.asarray(x) * by
"""
from typing import Any, Protocol, Union

import numpy as np

from .core.array import AnyArray as Array

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
