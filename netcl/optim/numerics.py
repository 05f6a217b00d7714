"""Numerically careful building blocks of the transformations: moment updates, bias
correction, the saturating step counter and a norm with a safe gradient at zero. Each works
leaf-wise on pytrees (or on one array) and binds only netcl.numpy ops, so it traces under
grad, vmap and jit."""
import numpy as np

from .. import numpy as jnp
from ..tree_util import tree_map

__all__ = ["safe_increment", "safe_int32_increment", "safe_norm", "abs_sq", "update_moment",
           "update_moment_per_elem_norm", "bias_correction", "tree_zeros_like",
           "tree_full_like", "tree_cast"]

_INT32_MAX = int(np.iinfo(np.int32).max)


def safe_increment(count):
    """count + 1, saturating at the int32 maximum instead of wrapping (a 0-d int32 array).

    >>> safe_increment(netcl.numpy.zeros([], netcl.numpy.int32))   # 1
    """
    count = jnp.asarray(count, dtype=jnp.int32)
    return count + (count < _INT32_MAX).astype(jnp.int32)


safe_int32_increment = safe_increment


def abs_sq(x):
    """|x|^2 elementwise (netcl has no complex dtypes, so x * x)."""
    return x * x


def safe_norm(x, min_norm, axis=None, keepdims=False):
    """max(||x||_2, min_norm), written so that its gradient is finite where ||x|| <= min_norm
    (the norm of a zero vector has no gradient; the masked input keeps it out of the graph)."""
    def norm(v):
        return jnp.sqrt(jnp.sum(abs_sq(v), axis=axis, keepdims=keepdims))
    n = jnp.sqrt(jnp.sum(abs_sq(x), axis=axis, keepdims=True))
    small = n <= min_norm
    masked = norm(jnp.where(small, jnp.ones_like(x), x))
    if not keepdims:
        small = jnp.reshape(small, masked.shape)
    return jnp.where(small, jnp.asarray(min_norm, dtype=masked.dtype), masked)


def update_moment(updates, moments, decay, order):
    """Exponential moving average of updates**order: (1 - decay) * g**order + decay * m."""
    if order == 1:
        return tree_map(lambda g, t: (1 - decay) * g + decay * t, updates, moments)
    return tree_map(lambda g, t: (1 - decay) * g ** order + decay * t, updates, moments)


def update_moment_per_elem_norm(updates, moments, decay, order):
    """Exponential moving average of |g|**order (order 2: of g * g)."""
    if order == 2:
        return tree_map(lambda g, t: (1 - decay) * abs_sq(g) + decay * t, updates, moments)
    return tree_map(lambda g, t: (1 - decay) * jnp.abs(g) ** order + decay * t,
                    updates, moments)


def bias_correction(moment, decay, count):
    """moment / (1 - decay**count), in each leaf's dtype (`count` is the 1-based step)."""
    correction = 1 - decay ** count
    return tree_map(lambda t: t / correction.astype(t.dtype), moment)


def tree_zeros_like(tree, dtype=None):
    """Zeros of each leaf's shape (and dtype, unless `dtype` is given)."""
    return tree_map(lambda p: jnp.zeros_like(p, dtype=dtype), tree)


def tree_full_like(tree, value, dtype=None):
    return tree_map(lambda p: jnp.full_like(p, value, dtype=dtype), tree)


def tree_cast(tree, dtype):
    """Each leaf cast to `dtype` (no-op when `dtype` is None)."""
    if dtype is None:
        return tree
    return tree_map(lambda t: t.astype(dtype), tree)
