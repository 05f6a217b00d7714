"""Polynomials of netcl.numpy as jax.numpy has them: polyval, polyadd, polysub, polymul.

Coefficients are 1-d arrays, highest power first (NumPy's convention). Everything is composed
from elementwise ops, slices, pads and sums, so grad, jit and vmap work through it.

>>> import netcl.numpy as jnp
>>> jnp.polyval(jnp.asarray([1.0, 0.0, -2.0]), 3.0)                    # 9 - 2 = 7
>>> jnp.polymul(jnp.asarray([1.0, 1.0]), jnp.asarray([1.0, -1.0]))    # [1., 0., -1.]
"""
import numpy as np

from ..core import dtypes
from ..core.shapes import broadcast_shapes
from ..primitives import elementwise as ew
from ..primitives import structural as st
from ..primitives import views
from ._util import asarray_arg, promote
from ._composite_util import bool_arg, index_axis, promote_inexact, slice_axis
from .joining import concatenate
from .math import add, multiply
from .reductions import sum as _sum

__all__ = ["polyval", "polyadd", "polysub", "polymul"]


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients p (highest power first) at x, by Horner's rule:
    ((p[0] * x + p[1]) * x + ...) + p[-1]. A p of more than one dimension holds polynomials
    along its first axis, the others broadcast with x.

    The loop is unrolled into len(p) multiply-adds (`unroll` is accepted for JAX's
    signature and otherwise ignored): meant for polynomials of moderate degree.

    >>> jnp.polyval(jnp.asarray([3.0, 0.0, 1.0]), jnp.asarray([1.0, 2.0]))   # [4., 13.]
    """
    p = asarray_arg(p, "polyval")
    x = asarray_arg(x, "polyval") if type(x) not in (bool, int, float) else x
    if not isinstance(unroll, (bool, int, np.integer)):
        raise TypeError(f"polyval: unroll must be an int or a bool, got "
                        f"{type(unroll).__name__}")
    if p.ndim == 0:
        raise ValueError("polyval: p must have at least one dimension (the coefficients), got "
                         "a 0-d array")
    xshape = () if type(x) in (bool, int, float) else tuple(x.shape)
    shape = broadcast_shapes(tuple(p.shape[1:]), xshape, where="polyval")
    p, x = promote("polyval", p, x)
    y = views.full(shape, 0, p.dtype)
    for i in range(p.shape[0]):
        y = add(multiply(y, x), index_axis(p, i, 0))
    return y


def _coefficients(where, a1, a2):
    a1, a2 = asarray_arg(a1, where), asarray_arg(a2, where)
    for name, a in (("a1", a1), ("a2", a2)):
        if a.ndim != 1:
            raise ValueError(f"{where}: {name} must be a 1-d array of coefficients, got shape "
                             f"{tuple(a.shape)}")
    return a1, a2


def _pad_front(a, n):
    """a with zeros before it, to length n."""
    k = n - a.shape[0]
    if k == 0:
        return a
    return concatenate([views.full((k,), 0, a.dtype), a])


def polyadd(a1, a2):
    """The sum of two polynomials (highest power first; the shorter is aligned at the end).

    >>> jnp.polyadd(jnp.asarray([1, 2]), jnp.asarray([10, 20, 30]))   # [10, 21, 32]
    """
    a1, a2 = _coefficients("polyadd", a1, a2)
    a1, a2 = promote("polyadd", a1, a2)
    n = max(a1.shape[0], a2.shape[0])
    return add(_pad_front(a1, n), _pad_front(a2, n))


def polysub(a1, a2):
    """The difference a1 - a2 of two polynomials (highest power first).

    >>> jnp.polysub(jnp.asarray([1, 2]), jnp.asarray([10, 20, 30]))   # [-10, -19, -28]
    """
    a1, a2 = _coefficients("polysub", a1, a2)
    a1, a2 = promote("polysub", a1, a2)
    if a1.dtype == dtypes.bool_:
        raise TypeError("polysub: bool coefficients are not supported (negation of bools)")
    n = max(a1.shape[0], a2.shape[0])
    return ew.sub(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (highest power first), of length len(a1) + len(a2) - 1;
    integer coefficients give floats, as in JAX. An empty polynomial counts as [0].
    trim_leading_zeros=True drops leading zeros first, which reads the values (not under jit).

    The full convolution is computed from the outer product of the coefficients (shifted
    rows summed), so it takes len(a1) * (len(a1) + len(a2)) memory: meant for moderate sizes.

    >>> jnp.polymul(jnp.asarray([1.0, 2.0]), jnp.asarray([1.0, 3.0]))   # [1., 5., 6.]
    """
    a1, a2 = _coefficients("polymul", a1, a2)
    trim = bool_arg(trim_leading_zeros, "polymul", "trim_leading_zeros")
    a1, a2 = promote_inexact("polymul", a1, a2)
    if trim and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = _trim_front(a1), _trim_front(a2)
    if a1.shape[0] == 0:
        a1 = views.full((1,), 0, a1.dtype)
    if a2.shape[0] == 0:
        a2 = views.full((1,), 0, a2.dtype)
    n, m = a1.shape[0], a2.shape[0]
    outer = ew.mul(views.broadcast_in_dim(a1, (n, m), (0,)),
                   views.broadcast_in_dim(a2, (n, m), (1,)))
    # Row i shifted right by i: pad each row with n zeros, flatten, and read the flat array
    # back with rows one element shorter (row i then starts i elements earlier).
    padded = st.pad(outer, views.full((), 0, outer.dtype), ((0, 0, 0), (0, n, 0)))
    flat = slice_axis(views.reshape(padded, (n * (m + n),)), 0, n * (m + n - 1), 0)
    shifted = views.reshape(flat, (n, m + n - 1))
    return _sum(shifted, 0)


def _trim_front(a):
    from ..core.tracing import ConcretizationError
    try:
        h = np.asarray(a)
    except ConcretizationError as e:
        raise TypeError("polymul: trim_leading_zeros=True reads the coefficients, which a "
                        "traced array (under jit, vmap or grad) does not have; trim them "
                        "beforehand") from e
    nz = np.flatnonzero(h)
    start = int(nz[0]) if nz.size else h.shape[0]
    return slice_axis(a, start, a.shape[0], 0)
