"""jax.nn functions beyond netcl/nn.py's core set, as composites of netcl operations:
hard_sigmoid / hard_silu / hard_swish, identity, log1mexp, logmeanexp, mish, sparse_plus,
sparse_sigmoid, squareplus, softmax / log_softmax with `where=`, and
`dot_product_attention` (JAX's XLA implementation: grouped-query heads, bias, boolean
mask, causal, sequence lengths, local windows).

>>> netcl.nn.mish(jnp.array([1.0]))         # 0.865
"""
import math

import numpy as np

from . import numpy as jnp
from . import nn as _nn
from .core import dtypes
from .core.array import Array
from .core.tracing import Tracer
from .lax_extras_util import arr
from .transforms.ad import stop_gradient

__all__ = ["hard_sigmoid", "hard_silu", "hard_swish", "identity", "log1mexp", "logmeanexp",
           "mish", "sparse_plus", "sparse_sigmoid", "squareplus", "softmax", "log_softmax",
           "dot_product_attention"]

# nn.py's versions (this module is imported at its end, before it rebinds these names)
_softmax, _log_softmax = _nn.softmax, _nn.log_softmax


def _float(x, where):
    x = x if isinstance(x, (Array, Tracer)) else _arr(x, where)
    if dtypes.kind(x.dtype) != "f":
        x = x.astype(dtypes.inexact_dtype(x.dtype, x.weak_type))
    return x


def _arr(x, where, arg="x"):
    return arr(x, where, arg)


def hard_sigmoid(x):
    """relu6(x + 3) / 6, as jax.nn.hard_sigmoid.

    >>> netcl.nn.hard_sigmoid(jnp.array([0.0]))     # 0.5
    """
    x = _float(x, "hard_sigmoid")
    return _nn.relu6(x + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x), as jax.nn.hard_silu (also hard_swish).

    >>> netcl.nn.hard_silu(jnp.array([1.0]))       # 0.6667
    """
    x = _float(x, "hard_silu")
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def identity(x):
    """x itself, as jax.nn.identity.

    >>> netcl.nn.identity(jnp.ones(2))
    """
    return x if isinstance(x, (Array, Tracer)) else _arr(x, "identity")


def log1mexp(x):
    """log(1 - exp(-x)) for x > 0, accurate near 0 and for large x, as jax.nn.log1mexp.

    >>> netcl.nn.log1mexp(jnp.array([1e-3, 10.0]))
    """
    x = _float(x, "log1mexp")
    c = math.log(2.0)
    small = x < c
    # each branch evaluated where it is accurate, its argument kept finite elsewhere
    xs = jnp.where(small, x, 1.0)
    xl = jnp.where(small, 1.0, x)
    return jnp.where(small, jnp.log(-jnp.expm1(-xs)), jnp.log1p(-jnp.exp(-xl)))


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """log(mean(exp(x))) along `axis` (over the entries `where` selects), as
    jax.nn.logmeanexp.

    >>> netcl.nn.logmeanexp(jnp.array([0.0, 0.0]))    # 0
    """
    x = _float(x, "logmeanexp")
    if where is None:
        lse = _nn.logsumexp(x, axis=axis, keepdims=keepdims)
        n = x.size if axis is None else int(np.prod(
            [x.shape[a] for a in np.atleast_1d(np.asarray(axis)) % max(x.ndim, 1)]))
        return lse - jnp.log(jnp.asarray(float(n), dtype=lse.dtype))
    w = jnp.broadcast_to(_arr(where, "logmeanexp", "where").astype(bool), x.shape)
    lse = _masked_logsumexp(x, w, axis, keepdims)
    count = jnp.sum(w.astype(lse.dtype), axis=axis, keepdims=keepdims)
    return lse - jnp.log(count)


def _masked_logsumexp(x, w, axis, keepdims):
    m = jnp.max(jnp.where(w, x, -jnp.inf), axis=axis, keepdims=True)
    m = stop_gradient(jnp.where(jnp.isfinite(m), m, 0.0))
    e = jnp.where(w, jnp.exp(jnp.where(w, x - m, 0.0)), 0.0)
    s = jnp.sum(e, axis=axis, keepdims=True)
    out = jnp.log(s) + m
    if not keepdims:
        out = jnp.squeeze(out, axis=axis) if axis is not None else jnp.reshape(out, ())
    return out


def mish(x):
    """x * tanh(softplus(x)), as jax.nn.mish.

    >>> netcl.nn.mish(jnp.array([1.0]))     # 0.8651
    """
    x = _float(x, "mish")
    return x * jnp.tanh(_nn.softplus(x))


def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between, as jax.nn.sparse_plus.

    >>> netcl.nn.sparse_plus(jnp.array([-2.0, 0.0, 2.0]))    # [0, 0.25, 2]
    """
    x = _float(x, "sparse_plus")
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """The derivative of sparse_plus: clip((x + 1) / 2, 0, 1), as jax.nn.sparse_sigmoid.

    >>> netcl.nn.sparse_sigmoid(jnp.array([0.0]))     # 0.5
    """
    x = _float(x, "sparse_sigmoid")
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def squareplus(x, b=4):
    """(x + sqrt(x^2 + b)) / 2, as jax.nn.squareplus.

    >>> netcl.nn.squareplus(jnp.array([0.0]))    # 1
    """
    x = _float(x, "squareplus")
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def softmax(x, axis=-1, where=None, initial=None):
    """exp(x) / sum(exp(x)) along `axis`; with `where`, over the selected entries only
    (the others give 0), as jax.nn.softmax.

    >>> netcl.nn.softmax(jnp.array([1.0, 2.0, 3.0]), where=jnp.array([True, True, False]))
    """
    if where is None:
        return _softmax(x, axis=axis)
    x = _float(x, "softmax")
    w = jnp.broadcast_to(_arr(where, "softmax", "where").astype(bool), x.shape)
    m = jnp.max(jnp.where(w, x, -jnp.inf), axis=axis, keepdims=True)
    m = stop_gradient(jnp.where(jnp.isfinite(m), m, 0.0))
    e = jnp.where(w, jnp.exp(jnp.where(w, x - m, 0.0)), 0.0)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1, where=None, initial=None):
    """x - logsumexp(x) along `axis`; with `where`, over the selected entries only (the
    others give -inf), as jax.nn.log_softmax.

    >>> netcl.nn.log_softmax(jnp.array([1.0, 2.0]))
    """
    if where is None:
        return _log_softmax(x, axis=axis)
    x = _float(x, "log_softmax")
    w = jnp.broadcast_to(_arr(where, "log_softmax", "where").astype(bool), x.shape)
    lse = _masked_logsumexp(x, w, axis, True)
    return jnp.where(w, x - lse, -jnp.inf)


def _attention_checks(q, k, v, where):
    if q.ndim not in (3, 4) or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ValueError(f"{where}: query, key and value must all be 3-d (T, N, H) or 4-d "
                         f"(B, T, N, H), got shapes {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    B, T, N, H = q.shape
    _, S, K, Hk = k.shape
    if k.shape[0] != B or tuple(v.shape) != tuple(k.shape) or Hk != H:
        raise ValueError(f"{where}: key and value must have one shape (B, S, K, H) with the "
                         f"query's B={B} and H={H}, got query {tuple(q.shape)}, key "
                         f"{tuple(k.shape)}, value {tuple(v.shape)}")
    if K == 0 or N % K:
        raise ValueError(f"{where}: the query's {N} heads must be a multiple of the key's {K} "
                         "heads")
    for name, a in (("query", q), ("key", k), ("value", v)):
        if dtypes.kind(a.dtype) != "f":
            raise TypeError(f"{where}: {name} must be a float array, got {a.dtype}")
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"{where}: query, key and value must have one dtype, got {q.dtype}, "
                        f"{k.dtype}, {v.dtype}")
    return B, T, N, H, S, K


def _bias_like(t, name, B, N, T, S, where):
    """A bias or mask broadcast to (B, N, T, S) (from any shape that broadcasts there)."""
    if t is None:
        return None
    t = _arr(t, where, name) if not isinstance(t, (Array, Tracer)) else t
    if t.ndim > 4:
        raise ValueError(f"{where}: {name} must broadcast to (B, N, T, S) = {(B, N, T, S)}, "
                         f"got shape {tuple(t.shape)}")
    try:
        return jnp.broadcast_to(t, (B, N, T, S))
    except (ValueError, TypeError):
        raise ValueError(f"{where}: {name} of shape {tuple(t.shape)} does not broadcast to "
                         f"(B, N, T, S) = {(B, N, T, S)}") from None


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
    """softmax(query . key^T * scale + bias, masked) . value, as jax.nn.dot_product_attention
    (its XLA implementation): query (B, T, N, H), key and value (B, S, K, H) with N a
    multiple of K (grouped-query attention), or the same without B; `mask` (boolean, True =
    attend) and `bias` broadcast to (B, N, T, S); `is_causal`, per-example
    `query_seq_lengths` / `key_value_seq_lengths`, `local_window_size` (left, right);
    scale defaults to 1/sqrt(H). Logits and softmax in float32 for 16-bit inputs.

    >>> q = jnp.ones((2, 5, 4, 8)); out = netcl.nn.dot_product_attention(q, q, q, is_causal=True)
    """
    where = "dot_product_attention"
    if implementation not in (None, "xla"):
        raise ValueError(f"{where}: implementation={implementation!r}: netcl has one "
                         "implementation (None or 'xla')")
    q, k, v = (_arr(t, where, n) if not isinstance(t, (Array, Tracer)) else t
               for t, n in ((query, "query"), (key, "key"), (value, "value")))
    unbatched = q.ndim == 3
    if unbatched:
        if k.ndim != 3 or v.ndim != 3:
            _attention_checks(q, k, v, where)
        q, k, v = q[None], k[None], v[None]
    B, T, N, H, S, K = _attention_checks(q, k, v, where)
    G = N // K
    sc = 1.0 / math.sqrt(H) if scale is None else scale
    ldt = dtypes.float64 if q.dtype == dtypes.float64 else dtypes.float32
    qg = jnp.reshape(q, (B, T, K, G, H)).astype(ldt)
    logits = jnp.einsum("btkgh,bskh->bkgts", qg, k.astype(ldt)) * sc
    logits = jnp.reshape(logits, (B, N, T, S))
    if bias is not None:
        logits = logits + _bias_like(bias, "bias", B, N, T, S, where).astype(ldt)
    combined = None

    def both(m):
        return m if combined is None else jnp.logical_and(combined, m)
    if mask is not None:
        mk = _bias_like(mask, "mask", B, N, T, S, where)
        if mk.dtype != np.bool_:
            raise TypeError(f"{where}: mask must be a bool array, got {mk.dtype}")
        combined = both(mk)
    tq = np.arange(T)[:, None]
    ts = np.arange(S)[None, :]
    if is_causal:
        combined = both(jnp.asarray(np.broadcast_to(tq >= ts, (T, S))))
    if local_window_size is not None:
        lw, rw = (local_window_size, local_window_size) if isinstance(local_window_size, int) \
            else tuple(local_window_size)
        combined = both(jnp.asarray((tq <= ts + lw) & (tq >= ts - rw)))
    for lens, n, axis_len in ((query_seq_lengths, "query_seq_lengths", T),
                              (key_value_seq_lengths, "key_value_seq_lengths", S)):
        if lens is None:
            continue
        lens = _arr(lens, where, n) if not isinstance(lens, (Array, Tracer)) else lens
        if tuple(lens.shape) != (B,) or dtypes.kind(lens.dtype) not in "iu":
            raise ValueError(f"{where}: {n} must be an integer array of shape ({B},), got "
                             f"{lens.dtype}{list(lens.shape)}")
        pos = jnp.arange(axis_len, dtype=lens.dtype)
        m = pos[None, :] < lens[:, None]
        m = m[:, None, :, None] if n == "query_seq_lengths" else m[:, None, None, :]
        combined = both(m)
    if combined is not None:
        big = -0.7 * float(np.finfo(np.float32).max)
        logits = jnp.where(combined, logits, big)
    probs = _softmax(logits, axis=-1).astype(k.dtype)
    probs = jnp.reshape(probs, (B, K, G, T, S))
    out = jnp.einsum("bkgts,bskh->btkgh", probs, v)
    out = jnp.reshape(out, (B, T, N, H))
    if query_seq_lengths is not None:
        qm = jnp.arange(T, dtype=jnp.int32)[None, :] < \
            _arr(query_seq_lengths, where).astype(jnp.int32)[:, None]
        out = out * qm[:, :, None, None].astype(out.dtype)
    if return_residual:
        lse = jnp.transpose(_nn.logsumexp(logits, axis=-1), (0, 2, 1)).astype(k.dtype)
        res = stop_gradient(lse)
        return (out[0], res[0]) if unbatched else (out, res)
    return out[0] if unbatched else out
