"""jax.random's multinomial, generalized_normal and ball, drawing what JAX draws from a
key (samplers.py's machinery: each runs per key, as JAX's vmap runs its loops):

  multinomial        a scan over the outcomes: binomial(key_i, remaining n, p_i / the
                     probability left), key_i of split(key, k)
  generalized_normal rademacher * gamma(1 / p) ** (1 / p) (split keys)
  ball               generalized normal d-vectors g and an exponential e (split keys):
                     g / (sum |g|^p + e) ** (1 / p)

multinomial's counts are binomial's (see samplers.py for when a count can differ from
JAX's); generalized_normal and ball agree with JAX to float rounding.

>>> from netcl import random
>>> random.ball(random.PRNGKey(0), 3, 2, (5,)).shape
(5, 3)
"""
import numpy as np

from .compiled import compiled_when_eager
from ..core import dtypes
from ..core.shapes import canonical_shape, prod
from .continuous import _check_shape
from .distributions import _dtype, _jnp
from .gamma import _draw_all, _reparameterized_jvp, _vmap
from .keys import _check_key
from .multivariate import _index
from .samplers import _array, _binomial_each, _each, _per_key, _split_each

__all__ = ["multinomial", "generalized_normal", "ball"]


def _broadcast_or_none(*shapes):
    """NumPy's broadcast shape, or None where the shapes do not broadcast."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


# ---- multinomial ------------------------------------------------------------------------

def _multinomial_each(keys, n, p, unroll):
    """JAX's scan over the outcomes (p's last axis), over a leading example axis."""
    from ..lax import cumsum, scan
    jnp = _jnp()
    # the probability left from each outcome on: JAX sums p moved to the front along axis
    # 0; the same sums taken along p's last axis, then moved (under jit, netcl's cumsum
    # along axis 0 of a moved-axis view feeding an elementwise op gives wrong values)
    remaining_probs = jnp.moveaxis(cumsum(p, p.ndim - 1, reverse=True), -1, 0)
    p = jnp.moveaxis(p, -1, 0)                  # (k, B, ...)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = jnp.moveaxis(_split_each(keys, p.shape[0]), 1, 0)    # (k, B, 2)

    def f(remainder, ratio_key):
        ratio, ks = ratio_key
        count = _binomial_each(ks, remainder, jnp.clip(ratio, 0, 1), remainder.dtype)
        return remainder - count, count

    _, counts = scan(f, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of `n` trials over the outcomes of probabilities `p` (outcomes on
    the last axis), as floats of `dtype` (default: the default float). As JAX's code,
    `shape` is the whole result's shape, outcomes last (default p's shape): p broadcasts
    to it and n to shape[:-1]. `unroll`: the steps per iteration of the scan over the
    outcomes (as lax.scan's).

    >>> netcl.random.multinomial(netcl.random.PRNGKey(0), 10, jnp.array([0.2, 0.3, 0.5]))
    """
    name = "multinomial"
    key = _check_key(name, key)
    n = _array(name, "n", n)
    p = _array(name, "p", p)
    if not (unroll is True or unroll is False or isinstance(unroll, int) and unroll >= 1):
        raise TypeError(f"{name}: unroll must be a positive int or a bool, got {unroll!r}")
    out = dtypes.canonicalize(float if dtype is None else dtype, where=name)
    shape = tuple(p.shape) if shape is None else canonical_shape(shape, name)
    if not shape:
        raise ValueError(f"{name}: p (and shape) must have an outcome axis (the last), got "
                         f"shape {shape}")
    _check_shape(name, shape, tuple(p.shape))
    if shape[:-1] != _broadcast_or_none(shape[:-1], tuple(n.shape)):
        raise ValueError(f"{name}: n of shape {tuple(n.shape)} must broadcast to the "
                         f"shape without the outcome axis, {shape[:-1]}")
    return _multinomial(key, n, p, shape, out, unroll)


@compiled_when_eager
def _multinomial(key, n, p, shape, dtype, unroll):
    jnp = _jnp()
    dt, weak = dtypes.result_type(n, p)
    pd = dtypes.inexact_dtype(dt, weak)         # (JAX's promote_dtypes_inexact(n, p))
    n = jnp.broadcast_to(n.astype(pd), shape[:-1])
    p = jnp.broadcast_to(p.astype(pd), shape)
    counts = _per_key(_multinomial_each, (unroll,), key, n, p)
    return counts.astype(dtype)


# ---- generalized_normal and ball --------------------------------------------------------

def _gamma_each_impl(keys, a):
    """gamma(key, a) for each key of keys (B, 2), a (B, ...): JAX's one key per element
    (split(key, a.size)), every example's elements in one rejection loop."""
    jnp = _jnp()
    size = prod(a.shape[1:])
    ks = jnp.reshape(_split_each(keys, size), (-1, 2))
    return jnp.reshape(_draw_all("generalized_normal", ks, jnp.reshape(a, (-1,)), False),
                       a.shape)


def _make_gamma_each():
    from ..transforms.custom import custom_jvp
    f = custom_jvp(_gamma_each_impl)
    f.defjvp(_reparameterized_jvp(f, False))
    return f


_gamma_each = _make_gamma_each()


def _generalized_normal_each(keys, p, shape, dtype):
    """JAX's _generalized_normal over a leading example axis (p: (B,) + shape)."""
    from .discrete import rademacher
    ks = _split_each(keys, 2)
    inv_p = 1 / p
    g = _gamma_each(ks[:, 0], inv_p.astype(dtype))
    r = _vmap(lambda k: rademacher(k, shape, dtype), ks[:, 1])
    return r * g ** inv_p


def generalized_normal(key, p, shape=(), dtype=None):
    """Values of density proportional to exp(-|x|^p): r * g ** (1 / p), g gamma(1 / p) and
    r Rademacher signs, from split(key) (JAX's method). `p` broadcasts to `shape`.

    >>> netcl.random.generalized_normal(netcl.random.PRNGKey(0), 1.5, (4,))
    """
    name = "generalized_normal"
    shape = canonical_shape(shape, name)
    key = _check_key(name, key)
    dtype = _dtype(name, dtype, key)
    p = _array(name, "p", p)
    _check_shape(name, shape, tuple(p.shape))
    return _generalized_normal(key, p, shape, dtype)


@compiled_when_eager
def _generalized_normal(key, p, shape, dtype):
    p = _jnp().broadcast_to(p, shape)
    return _per_key(_generalized_normal_each, (shape, dtype), key, p)


def _ball_each(keys, p, d, shape, dtype):
    """JAX's _ball over a leading example axis (p: (B,))."""
    from .continuous import exponential
    jnp = _jnp()
    ks = _split_each(keys, 2)
    full = (keys.shape[0],) + shape + (d,)
    g = _generalized_normal_each(ks[:, 0], jnp.broadcast_to(_each(p, len(full)), full),
                                 shape + (d,), dtype)
    e = _vmap(lambda k: exponential(k, shape, dtype), ks[:, 1])
    norm = (jnp.abs(g) ** _each(p, g.ndim)).sum(-1) + e
    return g / (norm ** (1 / _each(p, norm.ndim)))[..., None]


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit Lp ball of dimension `d`: shape shape + (d,). JAX's
    method (Barthe, Guedon, Mendelson and Naor): generalized normal d-vectors g and an
    exponential e, from split(key); g / (sum |g|^p + e) ** (1 / p). `p` is a scalar.

    >>> netcl.random.ball(netcl.random.PRNGKey(0), 3, 2, (5,)).shape
    (5, 3)
    """
    name = "ball"
    shape = canonical_shape(shape, name)
    key = _check_key(name, key)
    dtype = _dtype(name, dtype, key)
    d = _index(name, "d", d)
    p = _array(name, "p", p)
    if p.ndim:
        raise TypeError(f"{name}: p must be a scalar, got an array of shape "
                        f"{tuple(p.shape)}")
    return _ball(key, d, p, shape, dtype)


@compiled_when_eager
def _ball(key, d, p, shape, dtype):
    return _per_key(_ball_each, (d, shape, dtype), key, p)
