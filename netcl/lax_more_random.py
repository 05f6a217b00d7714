"""jax.lax's random-number pieces and gamma derivatives, built from netcl operations:
`rng_uniform` and `rng_bit_generator` (threefry; JAX's bits are backend-specific too),
`igamma_grad_a` and `random_gamma_grad` (d/da of P(a, x), and of a Gamma(a) sample by
implicit reparameterisation).

>>> key, bits = netcl.lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (2,))
"""
import itertools

import numpy as np

from . import numpy as jnp
from .core import dtypes
from .lax_extras_util import arr as _arr
from .lax_more import RandomAlgorithm, _shape
from .numpy._errors import wrap_namespace

__all__ = ["rng_uniform", "rng_bit_generator", "igamma_grad_a", "random_gamma_grad"]


# ---- random bits ------------------------------------------------------------------------------

_RNG_COUNTER = itertools.count()


def rng_uniform(a, b, shape):
    """Uniform values in [a, b) of a's dtype, from a process-wide stream (stateful: each call
    draws new values), as jax.lax.rng_uniform. Prefer netcl.random.

    >>> netcl.lax.rng_uniform(jnp.float32(0), jnp.float32(1), (3,))
    """
    from . import random
    a, b = _arr(a, "rng_uniform", "a"), _arr(b, "rng_uniform", "b")
    if a.ndim or b.ndim or a.dtype != b.dtype or not dtypes.is_float(a.dtype):
        raise TypeError(f"rng_uniform: a and b must be float scalars of one dtype, got "
                        f"{a.dtype}{list(a.shape)} and {b.dtype}{list(b.shape)}")
    shape = _shape(shape, "rng_uniform")
    key = random.fold_in(random.PRNGKey(0x5EED), next(_RNG_COUNTER))
    return random.uniform(key, shape, a.dtype, a, b)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """(new key, random bits of `shape` and unsigned `dtype`) from a uint32[4] key, as
    jax.lax.rng_bit_generator. The bits are threefry's for every `algorithm` (JAX's are
    backend-specific as well); netcl holds uint32 and (with x64) uint64 only.

    >>> key, bits = netcl.lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (2,))
    """
    from . import random
    where = "rng_bit_generator"
    k = _arr(key, where, "key")
    if tuple(k.shape) != (4,) or k.dtype != dtypes.uint32:
        raise TypeError(f"{where}: key must be a uint32[4] array, got "
                        f"{k.dtype}{list(k.shape)}")
    RandomAlgorithm(algorithm)
    d = np.dtype(dtype)
    if d.kind != "u":
        raise TypeError(f"{where}: dtype must be an unsigned integer type, got {d}")
    d = dtypes.canonicalize(d, where=where)
    shape = _shape(shape, where)
    # the 4 words fold into threefry's 2-word key; one split gives the bits' and the next key
    ks = random.split(jnp.bitwise_xor(k[:2], k[2:]), 3)
    bits = random.bits(ks[0], shape, d)
    return jnp.concatenate([ks[1], ks[2]]), bits


# ---- special functions ------------------------------------------------------------------------

def igamma_grad_a(a, x):
    """d/da of the regularised lower incomplete gamma function P(a, x), as
    jax.lax.igamma_grad_a (forward mode through netcl.scipy.special.gammainc's iteration).

    >>> netcl.lax.igamma_grad_a(jnp.array([3.0]), jnp.array([3.0]))    # [-0.2368]
    """
    from .scipy.special import gammainc
    from .transforms.ad import jvp
    a, x = _float_pair(a, x, "igamma_grad_a")
    return jvp(lambda a_: gammainc(a_, x), (a,), (jnp.ones_like(a),))[1]


def _float_pair(a, x, where):
    a, x = _arr(a, where, "a"), _arr(x, where, "x")
    if not (dtypes.is_float(a.dtype) and a.dtype == x.dtype):
        raise TypeError(f"{where}: a and x must be floats of one dtype, got {a.dtype} and "
                        f"{x.dtype}")
    shape = np.broadcast_shapes(tuple(a.shape), tuple(x.shape))
    return jnp.broadcast_to(a, shape), jnp.broadcast_to(x, shape)


def random_gamma_grad(a, x):
    """The derivative of a Gamma(a, 1) sample x with respect to a (implicit
    reparameterisation: -(dP/da) / (dP/dx)), as jax.lax.random_gamma_grad. Written over P's
    series (x <= max(1, a)) and Q's continued fraction, each divided by the density
    analytically, so that tails do not divide underflowed values.

    >>> netcl.lax.random_gamma_grad(jnp.array([3.0]), jnp.array([3.0]))    # [1.0570]
    """
    from .scipy.special import digamma
    from .scipy.special_more import _IGAMMA_STEPS, _igamma_series, _igammac_cf, _is64, _safe
    from .transforms.ad import jvp
    a, x = _float_pair(a, x, "random_gamma_grad")
    n = _IGAMMA_STEPS[_is64(a)]
    ok = (a > 0) & (x > 0) & jnp.isfinite(a) & jnp.isfinite(x)
    use_cf = (x > 1.0) & (x > a)
    # P / density = (x / a) S with S P's series; Q / density = x CF with CF Q's fraction:
    # d/da of each over the density gives the derivatives below (digamma(a + 1) = digamma(a)
    # + 1/a absorbs d/da log(a) of Q's prefactor)
    a_s, x_s = _safe(ok & ~use_cf, a, 1.0), _safe(ok & ~use_cf, x, 0.5)
    s, ds = jvp(lambda a_: _igamma_series(a_, x_s, n), (a_s,), (jnp.ones_like(a_s),))
    series = -(x_s / a_s) * (s * (jnp.log(x_s) - digamma(a_s + 1.0)) + ds)
    a_c, x_c = _safe(ok & use_cf, a, 1.0), _safe(ok & use_cf, x, 2.0)
    cf, dcf = jvp(lambda a_: _igammac_cf(a_, x_c, n), (a_c,), (jnp.ones_like(a_c),))
    frac = x_c * (cf * (jnp.log(x_c) - digamma(a_c)) + dcf)
    out = jnp.where(use_cf, frac, series)
    edge = jnp.where((x == 0) & (a > 0), 0.0, np.nan)     # (x = 0: 0; outside the domain: NaN)
    return jnp.where(ok, out, edge).astype(a.dtype)


# (errors escaping these name the public function, whatever raised them inside)
wrap_namespace(globals(), __all__)
