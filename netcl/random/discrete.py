"""Discrete samplers: bernoulli, randint, rademacher (bit-identical to JAX where their bits
are: bernoulli and randint), and categorical, permutation, choice, which use the reductions
(argmax, cumsum, sum) and netcl.numpy.take; `permutation` (and `choice` without replacement)
sort by random keys: on the device through netcl.lax.sort_key_val when netcl has it,
otherwise on the host in eager mode only (see `permutation`).
"""
import math
import operator

import numpy as np

from .compiled import compiled_when_eager
from ..core import dtypes
from ..core.array import Array
from ..core.eval import to_array
from ..core.shapes import broadcast_shapes, canonical_shape, normalize_axis, prod
from ..primitives import elementwise as ew
from ..primitives import views
from .continuous import _check_shape, _gumbel, _param, _shape_of, _uniform, gumbel_mode
from .keys import _U32, _bits, _bits32, _check_key, _counters, _device, _is_array, split


@compiled_when_eager
def bernoulli(key, p=0.5, shape=None, mode="low"):
    """Booleans that are True with probability p (uniform(key, shape, p.dtype) < p; a Python
    float p is of the default float, as in JAX: float64 uniforms with x64). mode="high", as
    JAX's: two uniforms per sample, u2 * 2**-nmant < p - u1, right down to p ~ 1e-14 in
    float32 (mode "low" is wrong below p ~ 1e-7), at twice the cost.

    >>> netcl.random.bernoulli(key, 1e-9, (4,), mode="high")
    """
    if mode not in ("low", "high"):
        raise ValueError(f"bernoulli: mode must be 'low' or 'high', got {mode!r}")
    device = _device(key)
    if _is_array(p):
        if dtypes.kind(p.dtype) != "f":
            raise TypeError(f"bernoulli: p must have a floating dtype, got {p.dtype}")
        pd = p.dtype
    elif isinstance(p, float):
        pd = dtypes.default_float_dtype()
    else:
        host = np.asarray(p)
        if dtypes.kind(host.dtype) != "f":
            raise TypeError(f"bernoulli: p must have a floating dtype, got {host.dtype}")
        pd = dtypes.canonicalize_data(host.dtype, where="bernoulli")
    if shape is None:
        shape = _shape_of(p)
    else:
        shape = canonical_shape(shape, "bernoulli")
        _check_shape("bernoulli", shape, _shape_of(p))
    p = _param("bernoulli", "p", p, pd, device)
    if mode == "high":
        both = _uniform("bernoulli", key, (2,) + tuple(shape), pd, 0.0, 1.0)
        n = len(shape)
        u1 = views.reshape(views.slice(both, (0,) * (n + 1), (1,) + tuple(shape)), shape)
        u2 = views.reshape(views.slice(both, (1,) + (0,) * n, (2,) + tuple(shape)), shape)
        u2 = ew.mul(u2, views.full_like(u2, 2.0 ** -dtypes.finfo(pd).nmant))
        return ew.lt(u2, ew.sub(views.broadcast_to_rank(p, shape), u1))
    u = _uniform("bernoulli", key, shape, pd, 0.0, 1.0)
    return ew.lt(u, views.broadcast_to_rank(p, shape))


# ---- integer samplers ------------------------------------------------------------------------

def _int_bound(name, arg, x, dtype, device):
    """(bound as `dtype`, whether it exceeds dtype's max): JAX's convert-and-clip of an
    integer bound (float bounds are truncated to the default int first, as JAX's
    astype(int))."""
    info = np.iinfo(dtype)
    if isinstance(x, (int, np.integer, np.bool_)):  # exact on the host
        v = int(x)
        return views.full((), min(max(v, info.min), info.max), dtype, device=device), \
            v > info.max
    if not _is_array(x):
        host = np.asarray(x)
        if dtypes.kind(host.dtype) not in "biuf":
            raise TypeError(f"{name}: {arg} must be an integer or an array, got "
                            f"{type(x).__name__}")
        x = to_array(host if dtypes.kind(host.dtype) != "f" else
                     host.astype(dtypes.default_int_dtype()), name, device)
    if x.dtype.kind not in "iu":
        x = ew.convert_element_type(x, dtypes.default_int_dtype())
    over = False
    if x.dtype != dtype:
        xinfo = np.iinfo(x.dtype)
        if xinfo.max > info.max:  # clip above (where the bound is beyond dtype's max)
            top = views.full_like(x, info.max)
            over = ew.gt(x, top)
            x = ew.min_(x, top)
        if xinfo.min < info.min:  # clip below
            x = ew.max_(x, views.full_like(x, info.min))
        x = ew.convert_element_type(x, dtype)
    return x, over


def _is_static_number(x):
    """A finite Python/NumPy scalar (a bound known before anything is traced)."""
    if isinstance(x, (float, np.floating)):
        return math.isfinite(x)
    return isinstance(x, (bool, int, np.integer, np.bool_))


@compiled_when_eager
def randint(key, shape, minval, maxval, dtype=int):
    """Integers uniform in [minval, maxval) (bounds broadcast to `shape`), of the default int
    unless `dtype` says (int64 with x64, as in JAX). JAX's method: two words of bits (32 or
    64, as dtype's width) reduced modulo the span.

    Scalar bounds with minval >= maxval raise ValueError (an empty range); array bounds are
    data and follow JAX: where maxval <= minval the result is minval.

    >>> netcl.random.randint(netcl.random.PRNGKey(0), (3,), 0, 10)
    """
    key = _check_key("randint", key)
    device = _device(key)
    dtype = dtypes.canonicalize(dtype, where="randint")
    if dtype.kind not in "iu":
        raise TypeError(f"randint: dtype must be an integer dtype, got {dtype}")
    shape = canonical_shape(shape, "randint")
    if _is_static_number(minval) and _is_static_number(maxval) \
            and not math.trunc(minval) < math.trunc(maxval):
        raise ValueError(f"randint: minval ({minval}) must be less than maxval ({maxval})")
    _check_shape("randint", shape, _shape_of(minval), _shape_of(maxval))
    lo, _ = _int_bound("randint", "minval", minval, dtype, device)
    hi, over = _int_bound("randint", "maxval", maxval, dtype, device)
    pshape = broadcast_shapes(lo.shape, hi.shape, where="randint")
    lo_p, hi_p = views.broadcast_to_rank(lo, pshape), views.broadcast_to_rank(hi, pshape)

    keys = split(key)
    k_hi = views.reshape(views.slice(keys, (0, 0), (1, 2)), (2,))
    k_lo = views.reshape(views.slice(keys, (1, 0), (2, 2)), (2,))
    nbits = 8 * dtype.itemsize
    U = dtypes.uint64 if nbits == 64 else _U32
    higher = _bits("randint", k_hi, shape, nbits)
    lower = _bits("randint", k_lo, shape, nbits)

    span = ew.sub(ew.convert_element_type(hi_p, U), ew.convert_element_type(lo_p, U))
    span = ew.select(ew.le(hi_p, lo_p), views.full_like(span, 1), span)
    if over is not False:
        grow = ew.gt(hi_p, lo_p)
        if over is not True:
            grow = ew.and_(views.broadcast_to_rank(over, pshape), grow)
        span = ew.select(grow, ew.add(span, views.full_like(span, 1)), span)
    mult = ew.rem(views.full_like(span, 2 ** (nbits // 2)), span)
    mult = ew.rem(ew.mul(mult, mult), span)

    span_s, mult_s = views.broadcast_to_rank(span, shape), views.broadcast_to_rank(mult, shape)
    offset = ew.add(ew.mul(ew.rem(higher, span_s), mult_s), ew.rem(lower, span_s))
    offset = ew.rem(offset, span_s)
    low_s = ew.convert_element_type(views.broadcast_to_rank(lo, shape), U)
    return ew.convert_element_type(ew.add(low_s, offset), dtype)


@compiled_when_eager
def rademacher(key, shape=(), dtype=int):
    """-1 or +1 with equal probability."""
    dtype = dtypes.canonicalize(dtype, where="rademacher")
    shape = canonical_shape(shape, "rademacher")
    b = ew.convert_element_type(bernoulli(key, 0.5, shape), dtype)
    return ew.sub(ew.mul(views.full_like(b, 2), b), views.full_like(b, 1))


# ---- samplers built on reductions, sorts and gathers ----------------------------------------

def jnp_take(*args, **kwargs):
    from ..numpy import take  # netcl.numpy imports this package's parent: import late
    return take(*args, **kwargs)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Samples of categorical distributions given by unnormalised log-probabilities along
    `axis` (the Gumbel-max trick: argmax(logits + gumbel noise)); indices of the default
    int (int64 with x64, as in JAX).

    `shape` defaults to logits' shape without `axis`; a longer shape draws several samples
    per distribution (its leading dimensions). replace=False draws them without
    replacement (the Gumbel top-k trick, as JAX: at most logits.shape[axis] of them);
    mode: the Gumbel noise's ('low', 'high'; None: 'low'), as gumbel's.

    >>> netcl.random.categorical(key, jnp.zeros(5), shape=(3,), replace=False)  # distinct
    """
    from ..numpy._util import asarray_arg
    key = _check_key("categorical", key)
    logits = asarray_arg(logits, "categorical")
    if dtypes.kind(logits.dtype) != "f":
        raise TypeError(f"categorical: logits must have a floating dtype, got {logits.dtype}")
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    ax = normalize_axis(axis, logits.ndim, "categorical")
    batch_shape = tuple(s for i, s in enumerate(logits.shape) if i != ax)
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(ax, logits.shape[ax])
    full_shape = tuple(prefix) + tuple(logits_shape)
    mode = gumbel_mode("categorical", mode)
    if not replace:
        return _categorical_without_replacement(key, logits, ax, shape, prefix, mode)
    from ..primitives.reductions import argmax
    noise = _gumbel("categorical", key, full_shape, logits.dtype, mode)
    scores = ew.add(noise, views.broadcast_to_rank(logits, full_shape))
    return argmax(scores, len(prefix) + ax, dtypes.default_int_dtype())


def _categorical_without_replacement(key, logits, ax, shape, prefix, mode):
    """JAX's: the top k = prod(prefix) of logits + gumbel noise along `ax`, the k samples
    laid out as the leading dimensions."""
    from .. import lax
    from ..numpy import moveaxis
    k = prod(prefix)
    if k > logits.shape[ax]:
        raise ValueError(f"categorical: the number of samples without replacement ({k}, "
                         f"shape {tuple(shape)}) cannot exceed the number of categories "
                         f"({logits.shape[ax]})")
    scores = ew.add(logits, _gumbel("categorical", key, tuple(logits.shape), logits.dtype,
                                    mode))
    _, ind = lax.top_k(moveaxis(scores, ax, -1), k)      # batch_shape + (k,)
    ind = moveaxis(ind, -1, 0)
    # (int32, as JAX's: top_k's indices, where replace=True gives argmax's default int)
    return views.reshape(ew.convert_element_type(ind, dtypes.int32), tuple(shape))


def _arange(n, key):
    _, lo = _counters(key, (n,))
    return ew.convert_element_type(lo, dtypes.default_int_dtype())


def _searchsorted_left(sorted_1d, values_1d):
    """For each value, the number of entries of sorted_1d strictly below it (numpy's
    searchsorted, side='left'), by comparing all pairs: O(len(values) * len(sorted))."""
    from ..primitives.reductions import reduce_sum
    n, m = sorted_1d.shape[0], values_1d.shape[0]
    below = ew.lt(views.broadcast_in_dim(sorted_1d, (m, n), (1,)),
                  views.broadcast_in_dim(values_1d, (m, n), (0,)))
    return reduce_sum(ew.convert_element_type(below, dtypes.int32), (1,))


def _sort_by_keys(sort_keys, x, axis, where="permutation"):
    """x reordered along `axis` by ascending sort_keys (stable)."""
    from .. import lax
    sort_key_val = getattr(lax, "sort_key_val", None)
    if sort_key_val is not None:
        return sort_key_val(sort_keys, x, axis)[1]
    # No device sort in this build: eager-only host path (see `permutation`).
    if not (isinstance(sort_keys, Array) and isinstance(x, Array)):
        raise NotImplementedError(
            f"{where}: under jit/vmap/grad netcl needs a device sort "
            "(netcl.lax.sort_key_val), which this build does not provide yet; call it "
            "outside the transform")
    order = np.argsort(np.asarray(sort_keys), axis=axis, kind="stable")
    host = np.take_along_axis(np.asarray(x), order, axis=axis)
    return Array.from_numpy(x.device, host, x.weak_type)


def _shuffle(key, x, axis):
    # JAX's method: sort by fresh 32-bit keys, enough rounds that all keys are distinct with
    # high probability (3 * log(n) / log(2^32 - 1) rounds).
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = split(key)
        key = views.reshape(views.slice(keys, (0, 0), (1, 2)), (2,))
        sub = views.reshape(views.slice(keys, (1, 0), (2, 2)), (2,))
        x = _sort_by_keys(_bits32("permutation", sub, tuple(x.shape)), x, axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of range(x) (x an int) or of x's entries along `axis`.

    As JAX: sorts along `axis` by random 32-bit keys (`independent=True` shuffles each slice
    separately; otherwise whole slices move together). The sort runs on the device through
    `netcl.lax.sort_key_val` when netcl has it; until then the sort runs on the host, which
    works in eager mode only (under jit/vmap/grad it raises NotImplementedError).
    """
    from ..numpy._util import asarray_arg
    key = _check_key("permutation", key)
    if not _is_array(x) and np.ndim(x) == 0:
        if isinstance(x, (bool, np.bool_)) or np.asarray(x).dtype.kind not in "iu":
            raise TypeError(f"permutation: x must be an integer or an array with at least "
                            f"one dimension, got {x!r}")
        n = operator.index(x)
        if n < 0:
            raise ValueError(f"permutation: x must be non-negative, got {n}")
        return _shuffle(key, _arange(n, key), 0)
    x = asarray_arg(x, "permutation")
    if x.ndim == 0:
        if x.dtype.kind not in "iu":
            raise TypeError(f"permutation: x must be an integer or at least 1-d, got a 0-d "
                            f"{x.dtype} array")
        return _shuffle(key, _arange(operator.index(x), key), 0)
    ax = normalize_axis(axis, x.ndim, "permutation")
    if independent or x.ndim == 1:
        return _shuffle(key, x, ax)
    ind = _shuffle(key, _arange(x.shape[ax], key), 0)
    return jnp_take(x, ind, axis=ax)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples of a (an int n means range(n)) along `axis`, with or without
    replacement, uniformly or with probabilities p (mode: the Gumbel noise's for p without
    replacement, 'low' or 'high', as JAX's).

    JAX's methods: randint (uniform, with replacement); a prefix of a permutation (uniform,
    without); the inverse CDF (p, with: cumsum, then a search done by comparing every draw
    with every cumulative probability, O(draws * len(p)) work); Gumbel top-k (p, without: a
    sort, eager-only until netcl has a device sort, as `permutation`).
    """
    from ..numpy._util import asarray_arg
    key = _check_key("choice", key)
    mode = gumbel_mode("choice", mode)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice: shape must be a sequence, got {shape!r}")
    shape = canonical_shape(shape, "choice")
    scalar = not _is_array(a) and np.ndim(a) == 0
    if scalar:
        if isinstance(a, (bool, np.bool_)) or np.asarray(a).dtype.kind not in "iu":
            raise TypeError(f"choice: a must be an integer or an array, got {a!r}")
        n_inputs = operator.index(a)
        arr = None
    else:
        arr = asarray_arg(a, "choice")
        if arr.ndim == 0:
            raise ValueError("choice: a must be an integer or an array with a dimension")
        axis = normalize_axis(axis, arr.ndim, "choice")
        n_inputs = arr.shape[axis]
    n_draws = prod(shape)
    out_dtype = dtypes.default_int_dtype() if arr is None else arr.dtype
    if n_draws == 0:
        out_shape = shape if arr is None else arr.shape[:axis] + shape + arr.shape[axis + 1:]
        return views.full(out_shape, 0, out_dtype, device=_device(key))
    if n_inputs <= 0:
        raise ValueError(f"choice: a must be greater than 0 unless no samples are taken, "
                         f"got {n_inputs}")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                         f"population (size {n_inputs}) when replace=False")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
        else:
            perm = permutation(key, n_inputs)
            ind = views.slice(perm, (0,), (n_draws,))
    else:
        p = asarray_arg(p, "choice")
        if dtypes.kind(p.dtype) != "f":
            p = ew.convert_element_type(p, dtypes.float32)
        if tuple(p.shape) != (n_inputs,):
            raise ValueError(f"choice: p must be None or a 1-d vector of the same size as "
                             f"a.shape[axis], got p of shape {tuple(p.shape)} for "
                             f"{n_inputs} inputs")
        if replace:
            from ..primitives.reductions import cumsum
            cum = cumsum(p, 0)
            total = views.reshape(views.slice(cum, (n_inputs - 1,), (n_inputs,)), ())
            u = _uniform("choice", key, shape, p.dtype, 0.0, 1.0)
            r = ew.mul(views.broadcast_to_rank(total, shape),
                       ew.sub(views.full_like(u, 1), u))
            ind = _searchsorted_left(cum, views.reshape(r, (n_draws,)))
        else:
            g = ew.sub(ew.neg(_gumbel("choice", key, (n_inputs,), p.dtype, mode)), ew.log(p))
            order = _sort_by_keys(g, _arange(n_inputs, key), 0, "choice")
            ind = views.slice(order, (0,), (n_draws,))
    if arr is None:
        return views.reshape(ind, shape)
    ind = views.reshape(ind, (n_draws,))
    out = jnp_take(arr, ind, axis=axis)
    return views.reshape(out, arr.shape[:axis] + shape + arr.shape[axis + 1:])
