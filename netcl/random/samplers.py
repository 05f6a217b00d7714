"""jax.random's loop-based samplers poisson and binomial, drawing what JAX draws from a
key, and the machinery that runs them (and vectors.py's multinomial, generalized_normal
and ball) per key as JAX's vmap does.

  poisson   Knuth's method for lam < 10 (and NaN), Hormann's transformed rejection above;
            both run over every element and are selected between, as in JAX
  binomial  inversion (sums of geometric draws) where n * min(p, 1 - p) <= 10, BTRS
            rejection (Hormann) above; JAX's NaN/inf handling

JAX draws each loop's uniforms for the whole array at once from one key chain (key ->
split -> uniform(sub, shape)) and loops until every element is done; an element that
is done keeps its value (knuth, inversion) or, in the rejection loops, takes every later
accepted draw (JAX's code selects on `accept`, not on `accept and not yet accepted`), so
its value depends on how long the loop runs. The loops here are JAX's, over the same
uniforms, so the values are JAX's. Under vmap JAX runs one loop over the batch in which
an example's carry stops changing once its own loop is done: `_per_key` does the same,
so vmap gives what a Python loop over the keys gives, as in JAX.

Each public function checks its arguments (raising before anything runs) and makes its
parameters arrays, then calls its compiled core: called eagerly, that is one compiled
function (compiled.py) whatever the parameters' values, NumPy data included.

JAX caps its loops at iinfo(dtype).max (finfo(dtype).max for binomial) iterations; the
loops here have no cap, which is the same for every draw (no draw loops 2^31 times).

The counts are JAX's exactly where the loops compare the same float32 values. JAX's
float32 log and lgamma are XLA's approximations and netcl's are the device's and
netcl.scipy's, which differ in the last bit for a few percent of arguments, so a test
that a draw passes by less than that can go the other way. That is rare: in poisson's
rejection loop (lgamma of counts in the thousands) about one draw in two thousand at
rates in the thousands; none seen in Knuth's loop, in binomial or multinomial. A flipped
rejection test also changes how long that loop runs for its whole array, and with it
later accepted draws of other elements. (binomial and multinomial return their counts
as floats.)

>>> from netcl import random
>>> random.poisson(random.PRNGKey(0), 3.0, (4,))
"""
import numpy as np

from .compiled import compiled_when_eager
from ..core import dtypes
from ..core.eval import eval_interpreter
from ..core.shapes import canonical_shape, prod
from ..core.tracing import current_interpreter, set_interpreter
from ..primitives import views
from .continuous import _uniform
from .distributions import _arg_dtype, _dtype, _jnp, _shape
from .gamma import _vmap
from .keys import _check_key, split

__all__ = ["poisson", "binomial"]


# ---- running a sampler per key, as JAX's vmap runs its loops ----------------------------

def _per_key(fn, static, key, *args, depth=0):
    """fn(keys, *args, *static) for one key (2,) and args of the sample's shape: fn takes a
    leading example axis (keys (B, 2), args (B, ...)) and returns (B, ...); `static`: a
    tuple of hashable settings (dtype, shape).

    Under vmap the examples are lifted out of the batch and handed to fn as that leading
    axis, one level of vmap at a time (`depth`: the levels lifted so far): netcl's
    while_loop cannot run under a vmap that is itself being staged (jit(vmap(...)),
    vmap(jit(...))), while fn's loops, run over an explicit example axis, can."""
    from ..transforms.batching import BatchInterpreter, BatchTracer
    interp = current_interpreter()
    if isinstance(interp, BatchInterpreter):
        lifted = [interp.lift(x) for x in (key,) + args]
        with set_interpreter(interp.parent):
            if all(d is None for _, d in lifted):   # nothing of this vmap: run outside it
                return _per_key(fn, static, key, *args, depth=depth)
            vals = [views.bdim_at_front(v, d, interp.axis_size) for v, d in lifted]
            out = _per_key(fn, static, *vals, depth=depth + 1)
        return BatchTracer(interp, out, 0)
    jnp = _jnp()
    batch = tuple(key.shape[:depth])
    n = prod(batch)
    keys = jnp.reshape(key, (n, 2))
    args = [jnp.reshape(a, (n,) + tuple(a.shape[depth:])) for a in args]
    if current_interpreter() is eval_interpreter:   # (lifted out of an eager vmap)
        out = _compiled(fn, static)(keys, *args)
    else:
        out = fn(keys, *args, *static)
    return jnp.reshape(out, batch + tuple(out.shape[1:]))


_compiled_fns = {}


def _compiled(fn, static):
    """fn with its static settings, jitted once: lifted out of an eager vmap the loops
    would otherwise run op by op."""
    f = _compiled_fns.get((fn, static))
    if f is None:
        from ..transforms.jit import jit
        f = _compiled_fns[(fn, static)] = jit(lambda keys, *args: fn(keys, *args, *static))
    return f


def _each(x, ndim):
    """A per-example value (B,) shaped to broadcast against arrays (B, ...) of rank ndim."""
    return _jnp().reshape(x, tuple(x.shape) + (1,) * (ndim - 1))


def _loop(pending, body, carry):
    """JAX's while_loop under vmap, over the leading example axis of every carry leaf:
    repeat body while any example is `pending` (a (B,) bool of the carry); the carry of an
    example that is not stays as it is."""
    from ..lax import while_loop
    jnp = _jnp()

    def step(c):
        todo = pending(c)
        return tuple(jnp.where(_each(todo, new.ndim), new, old)
                     for new, old in zip(body(c), c))
    return while_loop(lambda c: jnp.any(pending(c)), step, carry)


def _any_each(x):
    """Per example (leading axis): whether any element of x holds."""
    return _jnp().any(_jnp().reshape(x, (x.shape[0], -1)), axis=1)


def _split_each(keys, num):
    """split(key, num) for each key of keys (B, 2): (B, num, 2)."""
    return _vmap(lambda k: split(k, num), keys)


def _uniform_each(name, keys, shape, dtype):
    """uniform(key, shape, dtype) for each key of keys (B, 2): (B,) + shape."""
    return _vmap(lambda k: _uniform(name, k, shape, dtype, 0.0, 1.0), keys)


# ---- argument handling -----------------------------------------------------------------

def _array(name, arg, x):
    """A parameter as a netcl array (Python scalars weak), after JAX's check_arraylike."""
    _arg_dtype(name, arg, x)
    return _jnp().asarray(x)


def _inexact(x):
    """x's dtype as JAX's promote_dtypes_inexact makes it."""
    return dtypes.inexact_dtype(x.dtype, bool(getattr(x, "weak_type", False)))


def _int_dtype(name, dtype):
    d = dtypes.canonicalize(int if dtype is None else dtype, where=name)
    if dtypes.kind(d) not in "iu":
        raise ValueError(f"{name}: dtype must be an integer dtype, got {d}")
    return d


# ---- poisson ----------------------------------------------------------------------------

def _poisson_knuth(keys, lam, dtype):
    """Knuth's method: count uniforms until their product falls below exp(-lam)."""
    jnp = _jnp()
    shape = tuple(lam.shape[1:])

    def body(c):
        k, rng, log_prod = c
        ks = _split_each(rng, 2)            # rng, subkey = split(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        u = _uniform_each("poisson", ks[:, 1], shape, dtypes.float32)
        return k, ks[:, 0], log_prod + jnp.log(u)

    k0 = jnp.zeros(lam.shape, dtype)
    log0 = jnp.zeros(lam.shape, dtypes.float32)
    k = _loop(lambda c: _any_each(c[2] > -lam), body, (k0, keys, log0))[0]
    return (k - 1).astype(dtype)


def _poisson_rejection(keys, lam, dtype):
    """Hormann's transformed rejection (PTRS)."""
    from ..lax import lgamma
    jnp = _jnp()
    shape = tuple(lam.shape[1:])
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(c):
        k_out, accepted, rng = c
        ks = _split_each(rng, 3)            # rng, subkey_0, subkey_1 = split(rng, 3)
        u = _uniform_each("poisson", ks[:, 1], shape, lam.dtype) - 0.5
        v = _uniform_each("poisson", ks[:, 2], shape, lam.dtype)
        u_shifted = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = jnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return jnp.where(accept, k, k_out), accepted | accept, ks[:, 0]

    k0 = jnp.full(lam.shape, -1, lam.dtype)
    done0 = jnp.zeros(lam.shape, bool)
    k = _loop(lambda c: _any_each(~c[1]), body, (k0, done0, keys))[0]
    return k.astype(dtype)


def _poisson_each(keys, lam, dtype):
    jnp = _jnp()
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    # (JAX: the rejection loop's acceptance peaks at 89% as lam grows; the elements that
    # take Knuth's method give it some large lam)
    lam_rejection = jnp.where(use_knuth, 1e5, lam)
    result = jnp.where(use_knuth, _poisson_knuth(keys, lam_knuth, dtype),
                       _poisson_rejection(keys, lam_rejection, dtype))
    return jnp.where(lam == 0, jnp.zeros_like(result), result)


def poisson(key, lam, shape=None, dtype=None):
    """Poisson values of rate `lam` (broadcast to `shape`; default lam's shape), of an
    integer `dtype` (default: the default int). As JAX: lam is taken as float32; Knuth's
    method below 10, transformed rejection above; lam == 0 gives 0.

    >>> netcl.random.poisson(netcl.random.PRNGKey(0), 3.0, (4,))
    """
    name = "poisson"
    key = _check_key(name, key)
    dtype = _int_dtype(name, dtype)
    lam = _array(name, "lam", lam)
    shape = _shape(name, shape, [("lam", lam)])
    return _poisson(key, lam, shape, dtype)


@compiled_when_eager
def _poisson(key, lam, shape, dtype):
    lam = _jnp().broadcast_to(lam.astype(dtypes.float32), shape)
    return _per_key(_poisson_each, (dtype,), key, lam)


# ---- binomial ---------------------------------------------------------------------------

_STIRLING_TAIL = [0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287]


def _stirling_approx_tail(k):
    """log(k!) minus Stirling's approximation of it: a table for k <= 9, else a series.
    As JAX's, the series is evaluated at k clamped to 9 (so it is the k = 9 value)."""
    jnp = _jnp()
    use_tail_values = k <= 9
    k = jnp.minimum(jnp.maximum(k, 0.0), 9.0)
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    table = jnp.asarray(np.array(_STIRLING_TAIL), dtype=k.dtype)
    return jnp.where(use_tail_values, table[jnp.floor(k).astype(dtypes.int32)], approx)


def _binomial_inversion(keys, count, prob, dtype):
    """The number of geometric(prob) waiting times that fit in `count` trials."""
    jnp = _jnp()
    shape = tuple(prob.shape[1:])
    log1minusprob = jnp.log1p(-prob)

    def body(c):
        num_geom, geom_sum, rng = c
        ks = _split_each(rng, 2)            # subkey, rng = split(rng): JAX's order here
        num_geom = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform_each("binomial", ks[:, 0], shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return num_geom, geom_sum + geom, ks[:, 1]

    zeros = jnp.zeros(prob.shape, prob.dtype)
    k = _loop(lambda c: _any_each(c[1] <= count), body, (zeros, zeros, keys))[0]
    return (k - 1).astype(dtype)


def _btrs(keys, count, prob, dtype):
    """Hormann's transformed rejection with squeeze (BTRS)."""
    jnp = _jnp()
    shape = tuple(prob.shape[1:])
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        k_out, accepted, rng = carry
        ks = _split_each(rng, 3)            # rng, subkey_0, subkey_1 = split(rng, 3)
        u = _uniform_each("binomial", ks[:, 1], shape, prob.dtype)
        v = _uniform_each("binomial", ks[:, 2], shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return jnp.where(accept, k, k_out), accepted | accept, ks[:, 0]

    k0 = jnp.full(prob.shape, -1, prob.dtype)
    done0 = jnp.zeros(prob.shape, bool)
    return _loop(lambda c: _any_each(~c[1]), body, (k0, done0, keys))[0].astype(dtype)


def _binomial_each(keys, count, prob, dtype):
    """JAX's _binomial over a leading example axis: count and prob of prob's float dtype,
    of one shape (B, ...)."""
    jnp = _jnp()
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)      # (as np.random.binomial takes a float count)
    count_inv = jnp.where(use_inversion, count, 0.0)
    count_btrs = jnp.where(use_inversion, 1e4, count)
    q_btrs = jnp.where(use_inversion, 0.5, q)
    samples = jnp.where(use_inversion, _binomial_inversion(keys, count_inv, q, dtype),
                        _btrs(keys, count_btrs, q_btrs, dtype))
    # NaN p, p outside [0, 1] and NaN or negative n give NaN; an infinite n gives inf
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, jnp.full_like(samples, np.nan), samples)
    samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
    return jnp.where(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                     count.astype(dtype) - samples)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial values: successes in `n` trials of probability `p` (both broadcast to
    `shape`; default their broadcast shape), as floats of `dtype` (default: the default
    float). As JAX: drawn in p's float dtype, by inversion where n * min(p, 1 - p) <= 10
    and BTRS rejection above; n is floored; NaN for NaN or negative n and p outside
    [0, 1], inf for infinite n.

    >>> netcl.random.binomial(netcl.random.PRNGKey(0), 10, 0.3, (4,))
    """
    name = "binomial"
    key = _check_key(name, key)
    n = _array(name, "n", n)
    p = _array(name, "p", p)
    dtype = _dtype(name, dtype, key)
    if shape is not None:
        shape = canonical_shape(shape, name)
    shape = _shape(name, shape, [("n", n), ("p", p)])
    return _binomial(key, n, p, shape, dtype)


@compiled_when_eager
def _binomial(key, n, p, shape, dtype):
    jnp = _jnp()
    pd = _inexact(p)
    count = jnp.broadcast_to(n.astype(pd), shape)
    prob = jnp.broadcast_to(p.astype(pd), shape)
    return _per_key(_binomial_each, (dtype,), key, count, prob)
