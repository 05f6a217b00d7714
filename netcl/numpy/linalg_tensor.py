"""netcl.numpy.linalg's tensor forms, tensorinv and tensorsolve: inv and solve (linalg_decomp)
on the tensor reshaped to a matrix.

>>> jnp.linalg.tensorsolve(jnp.eye(6).reshape(6, 2, 3), jnp.ones(6)).shape
(2, 3)
"""
import math
import operator

import numpy as np

from ..primitives import views
from ._errors import public
from ._util import asarray_arg
from .linalg_decomp import _jnp, inv, solve

__all__ = ["tensorinv", "tensorsolve"]


def tensorinv(a, ind=2):
    """The inverse of `a` as a tensordot operator over its first `ind` axes: shape
    a.shape[ind:] + a.shape[:ind] (prod(a.shape[:ind]) == prod(a.shape[ind:])).

    >>> jnp.linalg.tensorinv(jnp.ones((2, 2, 4)) + jnp.eye(4).reshape(2, 2, 4), 2).shape
    (4, 2, 2)
    """
    where = "linalg.tensorinv"
    arr = asarray_arg(a, where)
    if isinstance(ind, (bool, np.bool_)):
        raise TypeError(f"{where}: ind must be an int, got {ind!r}")
    try:
        ind = operator.index(ind)
    except TypeError:
        raise TypeError(f"{where}: ind must be an int, got {ind!r}") from None
    if ind <= 0:
        raise ValueError(f"{where}: ind must be a positive integer, got {ind}")
    head, tail = tuple(arr.shape[:ind]), tuple(arr.shape[ind:])
    if math.prod(head) != math.prod(tail):
        raise ValueError(f"{where}: the product of the first {ind} dimensions must equal that "
                         f"of the others, got shape {tuple(arr.shape)}")
    n = math.prod(head)
    return views.reshape(inv(views.reshape(arr, (n, n))), tail + head)


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) == b, after moving the `axes` of a to the end: a's
    leading shape must be b's shape and the rest x's.

    >>> jnp.linalg.tensorsolve(jnp.eye(6).reshape(6, 2, 3), jnp.ones(6)).shape
    (2, 3)
    """
    where = "linalg.tensorsolve"
    jnp = _jnp()
    a, b = asarray_arg(a, where), asarray_arg(b, where)
    if axes is not None:
        axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
        a = jnp.moveaxis(a, axes, tuple(range(a.ndim - len(axes), a.ndim)))
    out_shape = tuple(a.shape[b.ndim:])
    if tuple(a.shape[:b.ndim]) != tuple(b.shape):
        raise ValueError(f"{where}: after moving axes to the end, the leading shape of a must "
                         f"match the shape of b, got a {tuple(a.shape)}, b {tuple(b.shape)}")
    size = math.prod(b.shape)
    if size != math.prod(out_shape):
        raise ValueError(f"{where}: prod(a.shape[:b.ndim]) must equal prod(a.shape[b.ndim:]), "
                         f"got a {tuple(a.shape)}, b.ndim {b.ndim}")
    x = solve(views.reshape(a, (size, size)), views.reshape(b, (size,)))
    return views.reshape(x, out_shape)



# Errors escaping these functions name them as they are called (linalg.tensorinv: ...).
for _n in __all__:
    _w = globals()[_n] = public(globals()[_n], f"linalg.{_n}")
    _w.__module__, _w.__qualname__, _w.__name__ = "netcl.numpy.linalg", _n, _n
del _n, _w
