"""Collectives over named mapped axes (jax.lax's parallel operators): psum, pmean, pmax, pmin,
all_gather, ppermute, psum_scatter, all_to_all, axis_index. Semantics are JAX's. A collective
runs only where a transform binds its axis name:

- `axis_env.axis_frame(name, size)` binds a name while a function is traced or run
  (vmap with `axis_name`, pmap); an unbound name raises JAX's NameError before any binding.
- The primitives are *call primitives* (`prim.call`): every interpreter hands them to
  `_CollectiveRules`, whose `batch` gets the BatchInterpreter. Where the vmap level binds one
  of the collective's names the rule implements the collective over the batch dimension
  with ordinary primitives (psum: a sum over the batch; all_gather: the batch stacked;
  ppermute: a gather along the batch; axis_index: an iota) and binds the rest of the names
  at the parent; other names pass to the parent unchanged (the collective per batch
  element). jvp/vjp apply the rules below (all collectives but pmax/pmin are linear, as in
  JAX, which has no derivative for pmax/pmin); staging records an equation (pmap's IR).
- How pmap runs each collective across devices: `collective_host.HOST_RULES`.

Params: `axis_name` is a tuple of names (major to minor, as JAX's combined index),
`axis_size` the product of their sizes, `perm` a tuple of (source, destination) pairs;
`all_to_all_p` has JAX's tiled semantics (the untiled form adds a unit axis around it).
"""
import operator

import numpy as np

from ..core import dtypes
from ..core.ad_util import Zero, instantiate, is_zero
from ..core.shapes import normalize_axis, prod
from ..core.tracing import Primitive, ShapedArray, get_aval, set_interpreter
from ..tree_util import tree_map
from .axis_env import _names, _size_of, axis_frame, axis_size, bound_axis_names  # noqa: F401

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "ppermute", "psum_scatter",
           "all_to_all", "axis_index", "axis_size", "axis_frame"]

# ---- the rules every interpreter applies ---------------------------------------------------

class _CollectiveRules:
    """The `call` object of every collective primitive (see the module docstring)."""

    def __init__(self, prim):
        self.prim = prim

    def eval(self, args, params):
        raise RuntimeError(
            f"collective over axis {params['axis_name']} reached eager evaluation: no "
            "transform handles that axis here (collectives run inside vmap(..., axis_name=) "
            "or pmap, traced with the function, not through an inner jit of unmapped values)")

    def stage(self, interp, args, params):
        from ..transforms.staging import StagingTracer
        from ..core.ir import Eqn, Var
        prim = self.prim
        in_vars = [interp.to_var(a) for a in args]
        out = prim.abstract_eval(*[v.aval for v in in_vars], **params)
        outs = out if prim.multiple_results else (out,)
        out_vars = [Var(ShapedArray(o.shape, o.dtype, o.weak_type)) for o in outs]
        interp.eqns.append(Eqn(prim, in_vars, dict(params), out_vars))
        tracers = [StagingTracer(interp, v) for v in out_vars]
        return tuple(tracers) if prim.multiple_results else tracers[0]

    def jvp(self, interp, args, params):
        prim = self.prim
        primals, tangents = zip(*[interp.lift(a) for a in args]) if args else ((), ())
        if all(is_zero(t) for t in tangents):
            with set_interpreter(interp.parent):
                return prim.bind(*primals, **params)
        if prim.jvp is None:
            from ..transforms.ad import MissingRuleError
            raise MissingRuleError(f"Differentiation rule for '{prim.name}' not implemented "
                                   "(as in JAX)")
        with set_interpreter(interp.parent):
            out, t_out = prim.jvp(primals, tangents, **params)
        return interp._wrap(out, t_out)

    def vjp(self, interp, args, params):
        prim = self.prim
        primals, parents = zip(*[interp.lift(a) for a in args]) if args else ((), ())
        with set_interpreter(interp.parent):
            out = prim.bind(*primals, **params)
        if all(p is None for p in parents):
            return out
        if prim.vjp is None:
            from ..transforms.ad import MissingRuleError
            raise MissingRuleError(f"Differentiation rule for '{prim.name}' not implemented "
                                   "(as in JAX)")
        rule = prim.vjp

        def backward(ct):
            return rule(ct, out, *primals, **params)
        return interp.record(backward, parents, out)

    def batch(self, interp, args, params):
        from ..transforms.batching import BatchTracer
        prim = self.prim
        vals, dims = zip(*[interp.lift(a) for a in args]) if args else ((), ())
        names = params["axis_name"]
        if interp.axis_name is None or interp.axis_name not in names:
            with set_interpreter(interp.parent):
                if all(d is None for d in dims):
                    return prim.bind(*vals, **params)
                out, d = _PASS[prim](vals, dims, **params)
        else:
            out, d = _FRAME[prim](interp, vals, dims, **params)
        return out if d is None else BatchTracer(interp, out, d)


def _collective(name):
    p = Primitive(name)
    p.call = _CollectiveRules(p)
    return p


def _bind(prim, *args, **params):
    return prim.bind(*args, **params)


def _eager_error(*args, **params):
    raise RuntimeError("collectives have no eager NumPy "
                       "reference; they run under vmap(..., axis_name=) or pmap")


# ---- small helpers written with primitives -------------------------------------------------

def _moveaxis(x, src, dst):
    from .views import move_batch_axis
    return move_batch_axis(x, src, dst)


def _fold(x, axis):
    """Merge axes axis and axis + 1 (major, minor)."""
    from .views import reshape
    s = list(x.shape)
    s[axis:axis + 2] = [s[axis] * s[axis + 1]]
    return reshape(x, tuple(s))


def _split(x, axis, factor):
    from .views import reshape
    s = list(x.shape)
    s[axis:axis + 1] = [factor, s[axis] // factor]
    return reshape(x, tuple(s))


def _front(x, d, n):
    from .views import bdim_at_front
    return bdim_at_front(x, d, n)


def _const(host):
    from .views import operand
    return operand(np.asarray(host), "collective")


def _scalar_like(x, v):
    from .views import full
    return full(x.shape, v, x.dtype)


# ---- psum / pmax / pmin --------------------------------------------------------------------

psum_p = _collective("psum")
pmax_p = _collective("pmax")
pmin_p = _collective("pmin")


def _same_abstract(x, **params):
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _reduce_pass(prim):
    def rule(vals, dims, **params):
        return prim.bind(vals[0], **params), dims[0]
    return rule


def _reduce_frame(prim, local):
    def rule(interp, vals, dims, *, axis_name):
        (x,), (d,) = vals, dims
        rest = tuple(n for n in axis_name if n != interp.axis_name)
        with set_interpreter(interp.parent):
            if d is None:
                y = x if prim is not psum_p else _mul_size(x, interp.axis_size)
            else:
                y = local(x, (d,))
            if rest:
                y = _bind(prim, y, axis_name=rest)
        return y, None
    return rule


def _mul_size(x, n):
    from .elementwise import mul
    return mul(x, _scalar_like(x, n))


def _linear_jvp(prim):
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t = tangents[0]
        return out, (Zero(get_aval(out)) if is_zero(t) else prim.bind(instantiate(t), **params))
    return jvp


for _p in (psum_p, pmax_p, pmin_p):
    _p.abstract_eval = _same_abstract
    _p.reference = _eager_error
psum_p.jvp = _linear_jvp(psum_p)
psum_p.vjp = lambda ct, out, x, **params: (psum_p.bind(instantiate(ct), **params),)
# pmax / pmin: no derivative rules, as in JAX (MissingRuleError where a tangent reaches them)


def _tree(fname, x, fn):
    from .views import operand

    def leaf(v):
        v = operand(v, fname)
        return fn(v)
    return tree_map(leaf, x)


def _as_summable(v):
    from .elementwise import convert_element_type
    return convert_element_type(v, dtypes.int32) if v.dtype == dtypes.bool_ else v


def psum(x, axis_name):
    """lax.psum: the sum of x over the mapped axis (or axes) `axis_name`, on every member.
    x may be a pytree; bools are summed as int32; `psum(1, 'i')` is the axis size.

    >>> netcl.vmap(lambda x: x / lax.psum(x, 'i'), axis_name='i')(jnp.arange(4.0))
    """
    names = _names(axis_name, "psum")
    if not names:
        return x
    return _tree("psum", x, lambda v: _bind(psum_p, _as_summable(v), axis_name=names))


def pmean(x, axis_name):
    """lax.pmean: psum(x) / axis size (integers and bools give float32, as JAX's `/`)."""
    from .elementwise import convert_element_type, div
    names = _names(axis_name, "pmean")
    n = axis_size(names)

    def mean(v):
        s = _bind(psum_p, _as_summable(v), axis_name=names) if names else v
        if dtypes.kind(s.dtype) != "f":
            s = convert_element_type(s, dtypes.inexact_dtype(s.dtype))
        return div(s, _scalar_like(s, n))
    return _tree("pmean", x, mean)


def pmax(x, axis_name):
    """lax.pmax: the maximum of x over the mapped axis (axes) `axis_name` (NaN propagates)."""
    names = _names(axis_name, "pmax")
    if not names:
        return x
    return _tree("pmax", x, lambda v: _bind(pmax_p, v, axis_name=names))


def pmin(x, axis_name):
    """lax.pmin: the minimum of x over the mapped axis (axes) `axis_name`."""
    names = _names(axis_name, "pmin")
    if not names:
        return x
    return _tree("pmin", x, lambda v: _bind(pmin_p, v, axis_name=names))


# ---- axis_index ----------------------------------------------------------------------------

axis_index_p = _collective("axis_index")
axis_index_p.abstract_eval = lambda **params: ShapedArray((), dtypes.int32)
axis_index_p.reference = _eager_error


def _axis_index_frame(interp, vals, dims, *, axis_name):
    from .structural import iota
    with set_interpreter(interp.parent):
        return iota(dtypes.int32, interp.axis_size), 0


def _combined_index(names):
    """axis_index over a tuple of names: major to minor (binds at the current interpreter)."""
    from .elementwise import add, mul
    from .views import full
    index, inner = None, 1
    for name in reversed(names):
        i = _bind(axis_index_p, axis_name=(name,))
        if inner != 1:
            i = mul(i, full((), inner, dtypes.int32))
        index = i if index is None else add(index, i)
        inner *= _size_of(name)
    return full((), 0, dtypes.int32) if index is None else index


def axis_index(axis_name):
    """lax.axis_index: this member's index along the mapped axis `axis_name` (int32; for a
    tuple of names the row-major combined index)."""
    return _combined_index(_names(axis_name, "axis_index"))


# ---- all_gather ----------------------------------------------------------------------------

all_gather_p = _collective("all_gather")


def _all_gather_abstract(x, *, axis_name, axis, tiled, axis_size):
    s = list(x.shape)
    if tiled:
        if not 0 <= axis < len(s):
            raise ValueError(f"all_gather: axis {axis} is out of range for a tiled gather of "
                             f"shape {tuple(x.shape)}")
        s[axis] *= axis_size
    else:
        if not 0 <= axis <= len(s):
            raise ValueError(f"all_gather: axis {axis} is out of range for shape "
                             f"{tuple(x.shape)}")
        s.insert(axis, axis_size)
    return ShapedArray(tuple(s), x.dtype, x.weak_type)


def _all_gather_pass(vals, dims, *, axis_name, axis, tiled, axis_size):
    (x,), (d,) = vals, dims
    if d <= axis:
        axis += 1
    elif not tiled:
        d += 1
    return _bind(all_gather_p, x, axis_name=axis_name, axis=axis, tiled=tiled,
                 axis_size=axis_size), d


def _all_gather_frame(interp, vals, dims, *, axis_name, axis, tiled, axis_size):
    from .views import reshape
    (x,), (d,) = vals, dims
    n = interp.axis_size
    pos = axis_name.index(interp.axis_name)
    major, minor = axis_name[:pos], axis_name[pos + 1:]
    with set_interpreter(interp.parent):
        y = _front(x, d, n)                                   # (n, *s)
        s = tuple(y.shape[1:])
        if minor:
            nm = axis_size_of(minor)
            y = _bind(all_gather_p, y, axis_name=minor, axis=1, tiled=False, axis_size=nm)
            y = reshape(y, (n * nm,) + s)
        if major:
            nM = axis_size_of(major)
            y = _bind(all_gather_p, y, axis_name=major, axis=0, tiled=False, axis_size=nM)
            y = reshape(y, (y.shape[0] * y.shape[1],) + s)
        y = _moveaxis(y, 0, axis)                             # stacked at `axis`
        if tiled:
            y = _fold(y, axis)
    return y, None


def axis_size_of(names):
    return prod([_size_of(n) for n in names])


all_gather_p.abstract_eval = _all_gather_abstract
all_gather_p.reference = _eager_error
all_gather_p.jvp = _linear_jvp(all_gather_p)
all_gather_p.vjp = lambda ct, out, x, *, axis_name, axis, tiled, axis_size: (
    _bind(psum_scatter_p, instantiate(ct), axis_name=axis_name, scatter_dimension=axis,
          tiled=tiled, axis_size=axis_size),)


def all_gather(x, axis_name, *, axis=0, tiled=False):
    """lax.all_gather: every member's x, stacked along a new axis `axis` (tiled:
    concatenated along existing axis `axis`), in axis-index order."""
    names = _names(axis_name, "all_gather")
    if not names:
        return x
    n = axis_size(names)

    def gather_leaf(v):
        if tiled and v.ndim == 0:
            raise ValueError("all_gather: tiled=True needs an operand of rank >= 1, got a "
                             "0-d array")
        a = normalize_axis(axis, v.ndim if tiled else v.ndim + 1, "all_gather", "axis")
        return _bind(all_gather_p, v, axis_name=names, axis=a, tiled=bool(tiled), axis_size=n)
    return _tree("all_gather", x, gather_leaf)


# ---- psum_scatter --------------------------------------------------------------------------

psum_scatter_p = _collective("psum_scatter")


def _psum_scatter_abstract(x, *, axis_name, scatter_dimension, tiled, axis_size):
    s, sd = list(x.shape), scatter_dimension
    if not 0 <= sd < len(s):
        raise ValueError(f"psum_scatter: scatter_dimension {sd} is out of range for shape "
                         f"{tuple(x.shape)}")
    if tiled:
        if s[sd] % axis_size:
            raise ValueError(f"psum_scatter: tiled scatter dimension {sd} of shape "
                             f"{tuple(x.shape)} (size {s[sd]}) must be divisible by the axis "
                             f"size {axis_size}")
        s[sd] //= axis_size
    else:
        if s[sd] != axis_size:
            raise ValueError(f"psum_scatter: scatter dimension {sd} of shape {tuple(x.shape)} "
                             f"(size {s[sd]}) must equal the axis size {axis_size} (or pass "
                             "tiled=True)")
        del s[sd]
    return ShapedArray(tuple(s), x.dtype, x.weak_type)


def _psum_scatter_pass(vals, dims, *, axis_name, scatter_dimension, tiled, axis_size):
    (x,), (d,) = vals, dims
    sd = scatter_dimension
    if d <= sd:
        sd += 1
    elif not tiled:
        d -= 1
    return _bind(psum_scatter_p, x, axis_name=axis_name, scatter_dimension=sd, tiled=tiled,
                 axis_size=axis_size), d


def _psum_scatter_frame(interp, vals, dims, *, axis_name, scatter_dimension, tiled,
                        axis_size):
    from .reductions import reduce_sum
    from .structural import dynamic_index_in_dim
    (x,), (d,) = vals, dims
    n, sd = interp.axis_size, scatter_dimension
    pos = axis_name.index(interp.axis_name)
    major, minor = axis_name[:pos], axis_name[pos + 1:]
    with set_interpreter(interp.parent):
        y = _mul_size(x, n) if d is None else reduce_sum(x, (d,))   # the sum over this level
        rest = major + minor
        if rest:
            y = _bind(psum_p, y, axis_name=rest)                       # the total
        # the scatter dimension as (major, this level, minor[, chunk]): member b of this
        # level takes block (i_major, b, i_minor)
        nM, nm = axis_size_of(major), axis_size_of(minor)
        s = list(y.shape)
        blocks = [nM, n, nm] + ([s[sd] // axis_size] if tiled else [])
        from .views import reshape
        y = reshape(y, tuple(s[:sd] + blocks + s[sd + 1:]))
        if minor:
            y = dynamic_index_in_dim(y, _combined_index(minor), sd + 2, keepdims=False)
        else:
            y = reshape(y, tuple(s[:sd] + blocks[:2] + blocks[3:] + s[sd + 1:]))
        if major:
            y = dynamic_index_in_dim(y, _combined_index(major), sd, keepdims=False)
        else:
            y = reshape(y, tuple(s[:sd] + blocks[1:2] + blocks[3:] + s[sd + 1:]))
    return y, sd


psum_scatter_p.abstract_eval = _psum_scatter_abstract
psum_scatter_p.reference = _eager_error
psum_scatter_p.jvp = _linear_jvp(psum_scatter_p)
psum_scatter_p.vjp = lambda ct, out, x, *, axis_name, scatter_dimension, tiled, axis_size: (
    _bind(all_gather_p, instantiate(ct), axis_name=axis_name, axis=scatter_dimension,
          tiled=tiled, axis_size=axis_size),)


def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False):
    """lax.psum_scatter: psum(x), of which member k keeps block k along
    `scatter_dimension` (untiled: that dimension has the axis size and is dropped; tiled: it
    is divided by the axis size)."""
    names = _names(axis_name, "psum_scatter")
    if not names:
        return x
    n = axis_size(names)

    def leaf(v):
        v = _as_summable(v)
        if v.ndim == 0:
            raise ValueError("psum_scatter: the operand must have rank >= 1, got a 0-d array")
        sd = normalize_axis(scatter_dimension, v.ndim, "psum_scatter", "scatter_dimension")
        params = dict(axis_name=names, scatter_dimension=sd, tiled=bool(tiled), axis_size=n)
        _psum_scatter_abstract(get_aval(v), **params)        # (errors before binding)
        return _bind(psum_scatter_p, v, **params)
    return _tree("psum_scatter", x, leaf)


# ---- ppermute ------------------------------------------------------------------------------

ppermute_p = _collective("ppermute")
ppermute_p.abstract_eval = _same_abstract
ppermute_p.reference = _eager_error
ppermute_p.jvp = _linear_jvp(ppermute_p)
ppermute_p.vjp = lambda ct, out, x, *, axis_name, perm: (
    _bind(ppermute_p, instantiate(ct), axis_name=axis_name,
          perm=tuple((dst, src) for src, dst in perm)),)


def _ppermute_pass(vals, dims, *, axis_name, perm):
    return _bind(ppermute_p, vals[0], axis_name=axis_name, perm=perm), dims[0]


def _perm_tables(perm, n):
    src = np.zeros(n, np.int32)
    valid = np.zeros(n, np.bool_)
    for s, t in perm:
        src[t], valid[t] = s, True
    return src, valid


def _ppermute_frame(interp, vals, dims, *, axis_name, perm):
    from .elementwise import select
    from .structural import gather
    from .views import broadcast_in_dim
    (x,), (d,) = vals, dims
    n = interp.axis_size
    src, valid = _perm_tables(perm, axis_size_of(axis_name))
    if len(axis_name) > 1:
        return _ppermute_general(interp, x, d, axis_name, src, valid)
    with set_interpreter(interp.parent):
        if d is None and valid.all():
            return x, None          # every member holds the same value
        y = _front(x, d, n)
        out = gather(y, src, 0)
        if not valid.all():
            mask = broadcast_in_dim(_const(valid), tuple(y.shape), (0,))
            out = select(mask, out, _scalar_like(out, 0))
    return out, 0


def _ppermute_general(interp, x, d, names, src, valid):
    """ppermute over several names: gather every member's value, each takes its source's."""
    from ..transforms.batching import BatchTracer
    from .elementwise import select
    from .structural import dynamic_index_in_dim
    with set_interpreter(interp):
        v = x if d is None else BatchTracer(interp, x, d)
        g = all_gather(v, names)
        me = _combined_index(names)
        mine = dynamic_index_in_dim(g, dynamic_index_in_dim(_const(src), me, 0, False), 0,
                                    keepdims=False)
        ok = dynamic_index_in_dim(_const(valid), me, 0, keepdims=False)
        from .views import broadcast_in_dim
        out = select(broadcast_in_dim(ok, tuple(mine.shape), ()), mine,
                     _scalar_like(mine, 0))
    return interp.lift(out)


def _check_perm(perm, n, fname="ppermute"):
    try:
        pairs = tuple((operator.index(s), operator.index(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise TypeError(f"{fname}: perm must be a sequence of (source, destination) pairs of "
                        f"ints, got {perm!r}") from None
    for s, t in pairs:
        if not (0 <= s < n and 0 <= t < n):
            raise ValueError(f"{fname}: perm {list(perm)!r} has index pair ({s}, {t}) out of "
                             f"range for an axis of size {n}")
    srcs, dsts = [s for s, _ in pairs], [t for _, t in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"{fname}: sources and destinations must be unique, got "
                         f"{list(perm)!r}")
    return pairs


def ppermute(x, axis_name, perm):
    """lax.ppermute: member `dst` receives member `src`'s x for each (src, dst) in `perm`;
    members that are no destination receive zeros."""
    names = _names(axis_name, "ppermute")
    if not names:
        raise ValueError("ppermute: axis_name must name at least one axis")
    pairs = _check_perm(perm, axis_size(names))
    return _tree("ppermute", x, lambda v: _bind(ppermute_p, v, axis_name=names, perm=pairs))


# ---- all_to_all ----------------------------------------------------------------------------

all_to_all_p = _collective("all_to_all")


def _all_to_all_abstract(x, *, axis_name, split_axis, concat_axis, axis_size):
    s = list(x.shape)
    for a, arg in ((split_axis, "split_axis"), (concat_axis, "concat_axis")):
        if not 0 <= a < len(s):
            raise ValueError(f"all_to_all: {arg} {a} is out of range for shape {tuple(s)}")
    if s[split_axis] % axis_size:
        raise ValueError(f"all_to_all: split_axis {split_axis} of shape {tuple(x.shape)} "
                         f"(size {s[split_axis]}) must be divisible by the axis size "
                         f"{axis_size}")
    s[split_axis] //= axis_size
    s[concat_axis] *= axis_size
    return ShapedArray(tuple(s), x.dtype, x.weak_type)


def _all_to_all_pass(vals, dims, *, axis_name, split_axis, concat_axis, axis_size):
    (x,), (d,) = vals, dims
    return _bind(all_to_all_p, x, axis_name=axis_name, split_axis=split_axis + (d <= split_axis),
                 concat_axis=concat_axis + (d <= concat_axis), axis_size=axis_size), d


def _all_to_all_frame(interp, vals, dims, *, axis_name, split_axis, concat_axis, axis_size):
    from .views import transpose
    (x,), (d,) = vals, dims
    n, sa, ca = interp.axis_size, split_axis, concat_axis
    if len(axis_name) > 1:
        return _all_to_all_general(interp, x, d, axis_name, sa, ca, axis_size)
    with set_interpreter(interp.parent):
        y = _split(_front(x, d, n), 1 + sa, n)     # (src, s[:sa], chunk, c, s[sa+1:])
        nd = x.ndim - (d is not None)

        def pos(j):
            return 1 + j if j < sa else 2 + j
        perm = [1 + sa]
        for j in range(nd):
            perm += [0, pos(j)] if j == ca else [pos(j)]
        y = transpose(y, tuple(perm))               # (chunk, ..., src, dim ca, ...)
        y = _fold(y, 1 + ca)
    return y, 0


def _all_to_all_general(interp, x, d, names, sa, ca, total):
    from ..transforms.batching import BatchTracer
    from .elementwise import mul
    from .structural import dynamic_slice_in_dim
    from .views import full
    with set_interpreter(interp):
        v = x if d is None else BatchTracer(interp, x, d)
        g = all_gather(v, names)                     # (N, *s)
        c = g.shape[1 + sa] // total
        me = _combined_index(names)
        piece = dynamic_slice_in_dim(g, mul(me, full((), c, dtypes.int32)), c, 1 + sa)
        out = _fold(_moveaxis(piece, 0, ca), ca)     # sources concatenated along ca
    return interp.lift(out)


all_to_all_p.abstract_eval = _all_to_all_abstract
all_to_all_p.reference = _eager_error
all_to_all_p.jvp = _linear_jvp(all_to_all_p)
all_to_all_p.vjp = lambda ct, out, x, *, axis_name, split_axis, concat_axis, axis_size: (
    _bind(all_to_all_p, instantiate(ct), axis_name=axis_name, split_axis=concat_axis,
          concat_axis=split_axis, axis_size=axis_size),)


def all_to_all(x, axis_name, split_axis, concat_axis, *, tiled=False):
    """lax.all_to_all: split x's `split_axis` into axis-size chunks, send chunk k to member
    k, and concatenate what arrives along `concat_axis` in source order. Untiled:
    x.shape[split_axis] must equal the axis size; that axis is removed and the sources'
    axis is inserted at `concat_axis`. Tiled: split_axis shrinks, concat_axis grows."""
    from .views import expand_dims, squeeze
    names = _names(axis_name, "all_to_all")
    if not names:
        raise ValueError("all_to_all: axis_name must name at least one axis")
    n = axis_size(names)

    def leaf(v):
        if v.ndim == 0:
            raise ValueError("all_to_all: the operand must have rank >= 1, got a 0-d array")
        sa = normalize_axis(split_axis, v.ndim, "all_to_all", "split_axis")
        ca = normalize_axis(concat_axis, v.ndim, "all_to_all", "concat_axis")
        if tiled:
            params = dict(axis_name=names, split_axis=sa, concat_axis=ca, axis_size=n)
            _all_to_all_abstract(get_aval(v), **params)
            return _bind(all_to_all_p, v, **params)
        if v.shape[sa] != n:
            raise ValueError(f"all_to_all: x.shape[split_axis] must equal the size of the "
                             f"mapped axis {names} ({n}), got shape {tuple(v.shape)} with "
                             f"split_axis={sa}")
        if sa < ca:
            ca += 1
            v = expand_dims(v, (ca,))
        elif sa > ca:
            v = expand_dims(v, (ca,))
            sa += 1
        out = _bind(all_to_all_p, v, axis_name=names, split_axis=sa, concat_axis=ca,
                    axis_size=n)
        return squeeze(out, (sa,)) if sa != ca else out
    return _tree("all_to_all", x, leaf)


# ---- batching tables -----------------------------------------------------------------------

_PASS = {psum_p: _reduce_pass(psum_p), pmax_p: _reduce_pass(pmax_p),
         pmin_p: _reduce_pass(pmin_p), all_gather_p: _all_gather_pass,
         psum_scatter_p: _psum_scatter_pass, ppermute_p: _ppermute_pass,
         all_to_all_p: _all_to_all_pass}


def _reducers():
    from .reductions import reduce_max, reduce_min, reduce_sum
    return reduce_sum, reduce_max, reduce_min


_FRAME = {psum_p: _reduce_frame(psum_p, lambda x, a: _reducers()[0](x, a)),
          pmax_p: _reduce_frame(pmax_p, lambda x, a: _reducers()[1](x, a)),
          pmin_p: _reduce_frame(pmin_p, lambda x, a: _reducers()[2](x, a)),
          axis_index_p: _axis_index_frame, all_gather_p: _all_gather_frame,
          psum_scatter_p: _psum_scatter_frame, ppermute_p: _ppermute_frame,
          all_to_all_p: _all_to_all_frame}
