"""Eager grad's backward pass, compiled once per tape structure.

An eager `grad(f)(x)` runs f's forward primitives eagerly (so Python control flow on values
and Python side effects in f happen at every call, as in JAX), records a tape, and then walks
it backwards, one eager kernel per primitive of each vjp rule: several launches per forward
primitive. A loop calling the same grad on the same shapes records the same tape each time,
up to the values. This module keys a tape by its structure (each node's primitive, rule,
params and parents, and which residual array, of which layout, each node's output and inputs
are), and once a structure has been seen `NETCL_EAGER_GRAD_CACHE` times (default 3; 0 turns
this off) runs its backward pass as a jitted function of the residuals: the rules are traced
once, the elementwise ones fused, and a call enqueues a few kernels instead of dozens.

The forward pass still runs eagerly every call: only the backward, which is a pure function
of the residuals and the cotangents, is reused. A rule that needs concrete values (Python
control flow on an array) cannot be traced: its structure is marked and runs eagerly. Tapes
holding a call primitive's node (jit, custom_vjp, scan: closures, not rules) and eager grads
under another transform (their residuals are tracers) run eagerly too.

Results are those of the eager backward up to float reassociation: the fused kernels compute
each op as its eager kernel does (no contraction), and on PoCL they agree bit for bit; a GPU's
fused reductions may sum in another order than its eager ones.
(`benchmarks/eager_grad_bench.py` counts the launches of an eager grad call.)
"""
import collections
import os

from ..core.array import Array, layout_id
from ..core.shapes import contiguous_strides

_UNCACHEABLE = object()
_MAX_KEYS = 4096
_MAX_SEEN = 1024    # structures counted before their compile (each key ~ a tape long)
_MAX_COMPILED = 256


def _threshold():
    raw = os.environ.get("NETCL_EAGER_GRAD_CACHE", "3")
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"NETCL_EAGER_GRAD_CACHE must be an integer (calls of one structure "
                         f"before its backward is compiled; 0: never), got {raw!r}") from None


THRESHOLD = _threshold()

_seen = {}                              # key -> calls seen so far, or _UNCACHEABLE
_compiled = collections.OrderedDict()   # key -> jitted backward, least recently used first
stats = {"hits": 0, "compiles": 0, "eager": 0}


def clear():
    """Forget every compiled backward and every count."""
    _seen.clear()
    _compiled.clear()
    for k in stats:
        stats[k] = 0


def _params_key(params):
    # types too: 1, 1.0 and True are equal keys but need not be equal params; repr for
    # floats: -0.0 == 0.0, and nan != nan
    return tuple((k, float, repr(v)) if type(v) is float else (k, type(v), v)
                 for k, v in params.items())


def signature(tape, out_nodes, p_flat, cts, ones_dtype=None):
    """(key, residuals, views, slots) of a tape whose backward could be compiled, else None.

    residuals: the distinct arrays the tape's nodes hold (outputs and inputs), in order of
    first use, a broadcast one as the dense array it broadcasts (`views`: slot -> (shape,
    broadcast dimensions) to broadcast it again); slots: id of a node's array -> its index in
    residuals. `cts`: the output cotangents (arrays), or None for grad's cotangent 1 of dtype
    `ones_dtype`. The key is flat: per node its primitive, rule, params, parents and n_out,
    then a slot per output and input, each new slot (one past the last) followed by its
    array's layout id."""
    slots = {}
    residuals = []
    views = {}
    sig = []
    append = sig.append
    get = slots.get
    for n in tape:
        rule = n.rule
        if rule is None:
            return None
        params = n.params
        n_out = n.n_out
        append(n.prim)
        append(rule)
        append(_params_key(params) if params else ())
        append(n.parents)
        append(n_out)
        for a in ((n.out if n_out else (n.out,)) + n.primals):
            i = get(id(a))
            if i is None:
                if type(a) is not Array:
                    return None
                i = slots[id(a)] = len(residuals)
                lid = a._lid
                append(i)
                append(lid if lid is not None else a._layout_id())
                if not a._contig or a.offset:
                    # (jit would copy a strided argument: a broadcast is passed as what it
                    # broadcasts, and broadcast again in the backward's kernels)
                    base = _broadcast_base(a)
                    if base is not None:
                        a, views[i] = base
                residuals.append(a)
            else:
                append(i)
    for p in p_flat:
        append((tuple(p.shape), p.dtype, p.weak_type))
    if cts is None:
        append(("ones", ones_dtype))
    else:
        for c in cts:
            if type(c) is not Array:
                return None
            lid = c._lid
            append(lid if lid is not None else c._layout_id())
    append(tuple(out_nodes))
    return tuple(sig), residuals, views, slots


def _nodes(tape, slots):
    """Per node of `tape`: (rule, params, parents, output slots, input slots, n_out)."""
    nodes = []
    for n in tape:
        outs = n.out if n.n_out else (n.out,)
        nodes.append((n.rule, n.params, n.parents, tuple(slots[id(a)] for a in outs),
                       tuple(slots[id(a)] for a in n.primals), n.n_out))
    return nodes


_bases = {}     # layout id -> (dense shape, its strides, its layout id, (shape, dims)) or None


def _broadcast_base(a):
    """(dense array, (shape, broadcast_dimensions)) for an array `a` that is a broadcast
    (stride 0 along some dimensions) of a dense one starting at offset 0, else None."""
    lid = a._layout_id()
    hit = _bases.get(lid, False)
    if hit is False:
        hit = None
        if not a.offset and a.strides is not None:
            dims = tuple(i for i, (n, st) in enumerate(zip(a.shape, a.strides))
                         if st and n != 1)
            shape = tuple(a.shape[i] for i in dims)
            strides = contiguous_strides(shape)
            if tuple(a.strides[i] for i in dims) == strides:
                hit = (shape, strides, layout_id(a.device, shape, a.dtype, a.weak_type,
                                                 strides, 0), (tuple(a.shape), dims))
        if len(_bases) >= _MAX_KEYS:
            _bases.clear()
        _bases[lid] = hit
    if hit is None:
        return None
    shape, strides, base_lid, view = hit
    return (Array(a.device, a._buf, a._storage, shape, a.dtype, strides, 0, a.weak_type,
                  True, base_lid), view)


def lookup(tape, out_nodes, p_flat, cts, ones_dtype):
    """The input gradients from a compiled backward (a list, one per p_flat), or None
    where the caller runs the backward eagerly."""
    if THRESHOLD <= 0:
        return None
    got = signature(tape, out_nodes, p_flat, cts, ones_dtype)
    if got is None:
        return None
    key, residuals, views, slots = got
    try:
        fn = _compiled.get(key)
    except TypeError:           # unhashable params
        return None
    if fn is None:
        seen = _seen.get(key, 0)
        if seen is _UNCACHEABLE:
            return None
        seen += 1
        if seen < THRESHOLD:
            if len(_seen) >= _MAX_SEEN:
                _seen.clear()
            _seen[key] = seen
            stats["eager"] += 1
            return None
        fn = _make(_nodes(tape, slots), views, out_nodes,
                   [(tuple(p.shape), p.dtype, p.weak_type) for p in p_flat],
                   ones_dtype if cts is None else None)
        try:
            grads = fn(residuals, [] if cts is None else list(cts))
        except Exception:       # (a rule that needs values: it runs eagerly, as before)
            _seen[key] = _UNCACHEABLE
            return None
        _seen.pop(key, None)
        if len(_compiled) >= _MAX_COMPILED:
            _compiled.popitem(last=False)
        _compiled[key] = fn
        stats["compiles"] += 1
        return grads
    try:
        _compiled.move_to_end(key)
    except KeyError:            # (another thread evicted it meanwhile: it still runs)
        pass
    stats["hits"] += 1
    return fn(residuals, [] if cts is None else list(cts))


def _make(nodes, views, out_nodes, p_avals, ones_dtype):
    """The jitted backward: (residuals, cts) -> input gradients."""
    from ..primitives.views import broadcast_in_dim, full
    from .ad import _cast_like_aval, run_backward
    from .jit import jit

    def backward(residuals, cts):
        residuals = list(residuals)
        for i, (shape, dims) in views.items():
            residuals[i] = broadcast_in_dim(residuals[i], shape, dims)
        if ones_dtype is not None:
            cts = [full((), 1, ones_dtype)]

        def apply(idx, ct):
            rule, params, _, s_out, s_in, n_out = nodes[idx]
            out = tuple(residuals[i] for i in s_out) if n_out else residuals[s_out[0]]
            return rule(ct, out, *[residuals[i] for i in s_in], **params)
        parents = [n[2] for n in nodes]
        n_outs = [n[5] for n in nodes]
        acc = run_backward(parents, n_outs, apply, out_nodes, cts)
        grads = []
        for i, (shape, dtype, weak) in enumerate(p_avals):
            g = acc.get((-1, i))
            grads.append(full(shape, 0, dtype) if g is None else
                         _cast_like_aval(g, shape, dtype, weak))
        return grads
    backward.__name__ = "eager_backward"
    return jit(backward)
