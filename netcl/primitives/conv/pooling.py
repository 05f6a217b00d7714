"""Windowed reductions, with all their rules, and their lax-level functions `reduce_window`,
`reduce_window_sum`/`_max`/`_min`, `select_and_scatter_add`, `select_and_gather_add`.

  reduce_window_{sum,max,min}_p   windowed reductions over any dims (pooling)
  select_and_scatter_add_p / select_and_gather_add_p   the max/min-pooling derivatives

Derivatives follow JAX: reduce_window_sum's transpose is a reduce_window_sum; max/min pooling
differentiate through select_and_gather_add (jvp) and select_and_scatter_add (vjp), which are
each other's transposes. The kernels live in window_kernels.py.
"""
import numpy as np

from ...core import dtypes
from ...core.array import Array
from ...core.ad_util import Zero, is_zero
from ...core.shapes import prod
from ...core.tracing import Primitive, ShapedArray
from .convolution import _convert, _dilate_pad_np, _vjp_lhs_padding
from .dimension_numbers import _dilate, _explicit_padding, _int_tuple, padtype_to_pads
from .window_kernels import (_MAX_WINDOW_RANK, _reduce_window_launcher,
                             _select_and_gather_add_launcher, _select_and_scatter_add_launcher)


# ---- shapes, abstract evaluation, NumPy references --------------------------------------------

def _window_out_shape(name, shape, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
    nd = len(shape)
    ctx = (f" (operand shape {tuple(shape)}, window_dimensions {window_dimensions}, "
           f"window_strides {window_strides}, padding {padding})")
    for pname, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                     ("padding", padding), ("base_dilation", base_dilation),
                     ("window_dilation", window_dilation)):
        if len(v) != nd:
            raise ValueError(f"{name}: {pname} {v} must have one entry per operand "
                             f"dimension ({nd}){ctx}")
    if any(w < 0 for w in window_dimensions):
        raise ValueError(f"{name}: window_dimensions must be non-negative{ctx}")
    for pname, v in (("window_strides", window_strides), ("base_dilation", base_dilation),
                     ("window_dilation", window_dilation)):
        if any(s < 1 for s in v):
            raise ValueError(f"{name}: {pname} {v} must be positive{ctx}")
    out = []
    for n, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        padded = _dilate(n, bd) + lo + hi
        if padded < 0:
            raise ValueError(f"{name}: negative padding ({lo}, {hi}) is larger than the "
                             f"dimension (size {_dilate(n, bd)} after base dilation){ctx}")
        wdil = _dilate(w, wd)
        out.append(0 if padded < wdil else (padded - wdil) // s + 1)
    return tuple(out)


def _window_abstract(name, kinds="fi"):
    def abstract(x, *, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
        if dtypes.kind(x.dtype) not in kinds or x.dtype == dtypes.uint32:
            raise TypeError(f"{name}: operand dtype {x.dtype} is not supported (floating "
                            f"point{' or int32' if 'i' in kinds else ''})")
        if x.ndim > _MAX_WINDOW_RANK:
            raise ValueError(f"{name}: operand rank {x.ndim} > {_MAX_WINDOW_RANK} is not supported")
        shape = _window_out_shape(name, x.shape, window_dimensions, window_strides, padding,
                                  base_dilation, window_dilation)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract


_IDENTITY = {"sum": 0.0, "max": -np.inf, "min": np.inf}


def _identity_np(op, dtype):
    if dtypes.kind(dtype) == "f":
        return _IDENTITY[op]
    info = np.iinfo(dtype)
    return {"sum": 0, "max": info.min, "min": info.max}[op]


def _window_slices(out_shape, window_dimensions, window_strides, window_dilation):
    """For each window offset: the strided slice of the padded operand it reads."""
    for k in np.ndindex(*window_dimensions):
        yield k, tuple(slice(kk * wd, kk * wd + s * (o - 1) + 1, s) for kk, wd, s, o in
                       zip(k, window_dilation, window_strides, out_shape))


def _reduce_window_ref(op):
    def ref(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        out_shape = _window_out_shape("reduce_window_" + op, x.shape, window_dimensions,
                                      window_strides, padding, base_dilation, window_dilation)
        work = np.float64 if dtypes.kind(x.dtype) == "f" else np.int64
        ident = _identity_np(op, x.dtype)
        xp = _dilate_pad_np(x.astype(work), range(x.ndim), base_dilation, padding, ident)
        acc = np.full(out_shape, ident, work)
        if prod(out_shape):
            comb = {"sum": np.add, "max": np.maximum, "min": np.minimum}[op]
            for _, sl in _window_slices(out_shape, window_dimensions, window_strides,
                                        window_dilation):
                acc = comb(acc, xp[sl])
        return acc.astype(x.dtype)
    return ref


def _selected_flat_index(operand, select, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation):
    """For each window: the flat index of the operand element it selects (-1 for none):
    the first (in window order) real element that is >= (ge) / <= (le) all others, the
    first NaN winning over numbers. (Window order is increasing flat index.)"""
    out_shape = _window_out_shape("select_and_scatter_add", operand.shape, window_dimensions,
                                  window_strides, padding, base_dilation, window_dilation)
    x = operand.astype(np.float64)
    idx = np.arange(x.size, dtype=np.int64).reshape(x.shape)
    xp = _dilate_pad_np(x, range(x.ndim), base_dilation, padding, 0.0)
    ip = _dilate_pad_np(idx, range(x.ndim), base_dilation, padding, -1)
    best = np.zeros(out_shape, np.float64)
    sel = np.full(out_shape, -1, np.int64)
    if prod(out_shape):
        for _, sl in _window_slices(out_shape, window_dimensions, window_strides,
                                    window_dilation):
            v, i = xp[sl], ip[sl]
            with np.errstate(invalid="ignore"):
                better = (v > best) if select == "ge" else (v < best)
            take = (i >= 0) & ((sel < 0) | better | (np.isnan(v) & ~np.isnan(best)))
            best = np.where(take, v, best)
            sel = np.where(take, i, sel)
    return sel


def _select_and_scatter_add_ref(source, operand, *, select, window_dimensions, window_strides,
                                padding, base_dilation, window_dilation):
    sel = _selected_flat_index(operand, select, window_dimensions, window_strides, padding,
                               base_dilation, window_dilation)
    out = np.zeros(operand.size, np.float64)
    ok = sel >= 0
    np.add.at(out, sel[ok], source.astype(np.float64)[ok])
    return out.reshape(operand.shape).astype(source.dtype)


def _select_and_gather_add_ref(tangent, operand, *, select, window_dimensions, window_strides,
                               padding, base_dilation, window_dilation):
    sel = _selected_flat_index(operand, select, window_dimensions, window_strides, padding,
                               base_dilation, window_dilation)
    flat = tangent.reshape(-1)
    out = np.where(sel >= 0, flat[np.maximum(sel, 0)] if flat.size else 0, 0)
    return np.asarray(out).astype(tangent.dtype)


# ---- the primitives ---------------------------------------------------------------------------

reduce_window_sum_p = Primitive("reduce_window_sum", fusion="opaque")
reduce_window_max_p = Primitive("reduce_window_max", fusion="opaque")
reduce_window_min_p = Primitive("reduce_window_min", fusion="opaque")
select_and_scatter_add_p = Primitive("select_and_scatter_add", fusion="opaque")
select_and_gather_add_p = Primitive("select_and_gather_add", fusion="opaque")

for _op, _p in (("sum", reduce_window_sum_p), ("max", reduce_window_max_p),
                ("min", reduce_window_min_p)):
    _p.abstract_eval = _window_abstract("reduce_window_" + _op)
    _p.reference = _reduce_window_ref(_op)
    _p.make_launcher = _reduce_window_launcher(_op)


def _pair_abstract(name, first, first_is_window_shaped):
    """select_and_scatter_add (source: one value per window -> operand-shaped result) and
    select_and_gather_add (tangent: operand-shaped -> one value per window)."""
    def abstract(a, operand, *, select, window_dimensions, window_strides, padding,
                 base_dilation, window_dilation):
        if select not in ("ge", "le"):
            raise ValueError(f"{name}: select must be 'ge' or 'le', got {select!r}")
        if dtypes.kind(a.dtype) != "f" or dtypes.kind(operand.dtype) != "f":
            raise TypeError(f"{name}: {first} and operand must be floating point, got "
                            f"{a.dtype} and {operand.dtype}")
        if operand.ndim > _MAX_WINDOW_RANK:
            raise ValueError(f"{name}: operand rank {operand.ndim} > {_MAX_WINDOW_RANK} is not supported")
        out = _window_out_shape(name, operand.shape, window_dimensions, window_strides,
                                padding, base_dilation, window_dilation)
        want = out if first_is_window_shaped else tuple(operand.shape)
        if tuple(a.shape) != want:
            raise ValueError(f"{name}: {first} has shape {tuple(a.shape)}, expected {want} "
                             f"for operand shape {tuple(operand.shape)} and window "
                             f"{window_dimensions}")
        if first_is_window_shaped:
            return ShapedArray(tuple(operand.shape), a.dtype, a.weak_type)
        return ShapedArray(out, a.dtype, a.weak_type)
    return abstract


select_and_scatter_add_p.abstract_eval = _pair_abstract("select_and_scatter_add", "source",
                                                        True)
select_and_scatter_add_p.reference = _select_and_scatter_add_ref
select_and_scatter_add_p.make_launcher = _select_and_scatter_add_launcher
select_and_gather_add_p.abstract_eval = _pair_abstract("select_and_gather_add", "tangent", False)
select_and_gather_add_p.reference = _select_and_gather_add_ref
select_and_gather_add_p.make_launcher = _select_and_gather_add_launcher


# ---- derivatives ------------------------------------------------------------------------------

def _zero_of(out):
    return Zero(ShapedArray(out.shape, out.dtype, out.weak_type))


def _reduce_window_sum_transpose(ct, operand_shape, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    pads = _vjp_lhs_padding(operand_shape, window_dimensions, window_strides, ct.shape,
                            padding, base_dilation, window_dilation)
    return reduce_window_sum_p.bind(ct, window_dimensions=window_dimensions,
                                    window_strides=tuple(base_dilation), padding=pads,
                                    base_dilation=tuple(window_strides),
                                    window_dilation=window_dilation)


def _rws_jvp(primals, tangents, **params):
    out = reduce_window_sum_p.bind(primals[0], **params)
    t = tangents[0]
    return out, (_zero_of(out) if is_zero(t) else reduce_window_sum_p.bind(t, **params))


def _rws_vjp(ct, out, x, **params):
    return (_reduce_window_sum_transpose(ct, x.shape, **params),)


reduce_window_sum_p.jvp = _rws_jvp
reduce_window_sum_p.vjp = _rws_vjp


def _chooser_rules(prim, select):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        if is_zero(t):
            return out, _zero_of(out)
        return out, select_and_gather_add_p.bind(t, x, select=select, **params)

    def vjp(ct, out, x, **params):
        return (select_and_scatter_add_p.bind(ct, x, select=select, **params),)
    prim.jvp, prim.vjp = jvp, vjp


_chooser_rules(reduce_window_max_p, "ge")
_chooser_rules(reduce_window_min_p, "le")


def _linear_pair_rules(prim, transpose_prim):
    """prim(a, operand) is linear in a; the operand only selects (zero derivative)."""
    def jvp(primals, tangents, **params):
        (a, x), (ta, _) = primals, tangents
        out = prim.bind(a, x, **params)
        if is_zero(ta):
            return out, _zero_of(out)
        return out, prim.bind(ta, x, **params)

    def vjp(ct, out, a, x, **params):
        return (transpose_prim.bind(ct, x, **params), None)
    prim.jvp, prim.vjp = jvp, vjp


_linear_pair_rules(select_and_scatter_add_p, select_and_gather_add_p)
_linear_pair_rules(select_and_gather_add_p, select_and_scatter_add_p)


# ---- batching: the vmapped axis becomes a window dimension of size 1 ------------------------

def _batched_window_params(params):
    p = dict(params)
    p["window_dimensions"] = (1,) + tuple(params["window_dimensions"])
    p["window_strides"] = (1,) + tuple(params["window_strides"])
    p["padding"] = ((0, 0),) + tuple(params["padding"])
    p["base_dilation"] = (1,) + tuple(params["base_dilation"])
    p["window_dilation"] = (1,) + tuple(params["window_dilation"])
    return p


def _window_batch(prim):
    def rule(args, dims, **params):
        from ..views import move_batch_axis
        x = move_batch_axis(args[0], dims[0], 0)
        return prim.bind(x, **_batched_window_params(params)), 0
    return rule


def _pair_batch(prim):
    def rule(args, dims, **params):
        from ..views import bdim_at_front
        a, x = args
        da, dx = dims
        size = a.shape[da] if da is not None else x.shape[dx]
        return prim.bind(bdim_at_front(a, da, size), bdim_at_front(x, dx, size),
                         **_batched_window_params(params)), 0
    return rule


for _p in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
    _p.batch = _window_batch(_p)
for _p in (select_and_scatter_add_p, select_and_gather_add_p):
    _p.batch = _pair_batch(_p)


# ---- lax-level functions ----------------------------------------------------------------------

def _window_args(name, x, window_dimensions, window_strides, padding, base_dilation,
                 window_dilation):
    nd = x.ndim
    wdims = _int_tuple(window_dimensions, nd, "window_dimensions", name)
    ws = _int_tuple(window_strides, nd, "window_strides", name)
    bd = _int_tuple(base_dilation, nd, "base_dilation", name)
    wd = _int_tuple(window_dilation, nd, "window_dilation", name)
    if isinstance(padding, str):
        if padding.upper() in ("SAME", "SAME_LOWER", "VALID"):
            pads = tuple(tuple(p) for p in padtype_to_pads(
                [_dilate(n, b) for n, b in zip(x.shape, bd)],
                [_dilate(w, d) for w, d in zip(wdims, wd)], ws, padding))
        else:
            raise ValueError(f"{name}: unknown padding {padding!r}; expected 'SAME', "
                             f"'SAME_LOWER', 'VALID' or (low, high) pairs (operand shape "
                             f"{tuple(x.shape)}, window_dimensions {wdims})")
    else:
        pads = _explicit_padding(padding, nd, name, f" (operand shape {tuple(x.shape)})")
    return dict(window_dimensions=wdims, window_strides=ws, padding=pads, base_dilation=bd,
                window_dilation=wd)


def _as_operand(x, name):
    from ...core.eval import to_array
    from ...core.tracing import Tracer
    return x if isinstance(x, (Array, Tracer)) else to_array(x, name)


def reduce_window_sum(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """Sum over windows (sum pooling); padding and base-dilation holes count as 0."""
    x = _as_operand(operand, "reduce_window_sum")
    return reduce_window_sum_p.bind(x, **_window_args(
        "reduce_window_sum", x, window_dimensions, window_strides, padding, base_dilation,
        window_dilation))


def reduce_window_max(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """Max over windows (max pooling); padding and holes count as -inf."""
    x = _as_operand(operand, "reduce_window_max")
    return reduce_window_max_p.bind(x, **_window_args(
        "reduce_window_max", x, window_dimensions, window_strides, padding, base_dilation,
        window_dilation))


def reduce_window_min(operand, window_dimensions, window_strides=None, padding="VALID",
                      base_dilation=None, window_dilation=None):
    """Min over windows; padding and holes count as +inf."""
    x = _as_operand(operand, "reduce_window_min")
    return reduce_window_min_p.bind(x, **_window_args(
        "reduce_window_min", x, window_dimensions, window_strides, padding, base_dilation,
        window_dilation))


def select_and_scatter_add(source, operand, select, window_dimensions, window_strides, padding,
                           base_dilation=None, window_dilation=None):
    """Add each source element (one per window) to the operand element its window selects
    (select='ge': the window max, 'le': the min): the gradient of max/min pooling."""
    x = _as_operand(operand, "select_and_scatter_add")
    return select_and_scatter_add_p.bind(
        _as_operand(source, "select_and_scatter_add"), x, select=select,
        **_window_args("select_and_scatter_add", x, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation))


def select_and_gather_add(tangent, operand, select, window_dimensions, window_strides, padding,
                          base_dilation=None, window_dilation=None):
    """For each window, the tangent element at the operand element the window selects."""
    x = _as_operand(operand, "select_and_gather_add")
    return select_and_gather_add_p.bind(
        _as_operand(tangent, "select_and_gather_add"), x, select=select,
        **_window_args("select_and_gather_add", x, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation))


def _computation_name(computation):
    if isinstance(computation, str):
        c = computation.lower()
        if c in ("add", "sum"):
            return "sum"
        if c in ("max", "min"):
            return c
    else:
        from .. import elementwise as ew
        if computation in (ew.add,):
            return "sum"
        if computation in (ew.max_,):
            return "max"
        if computation in (ew.min_,):
            return "min"
        for name in ("add", "max", "min"):
            if getattr(computation, "__name__", None) in (name, name + "_") and \
                    getattr(computation, "__module__", "").startswith("netcl"):
                return "sum" if name == "add" else name
    raise TypeError(f"reduce_window: computation {computation!r} is not supported; use "
                    "netcl.lax.add / netcl.lax.max / netcl.lax.min or 'add' / 'max' / 'min'")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """lax.reduce_window for computation add/max/min (XLA semantics: padding and
    base-dilation holes hold init_value, and each window's reduction starts from it)."""
    from ...core.tracing import Tracer
    op = _computation_name(computation)
    x = _as_operand(operand, "reduce_window")
    params = _window_args("reduce_window", x, window_dimensions, window_strides, padding,
                          base_dilation, window_dilation)
    prim = {"sum": reduce_window_sum_p, "max": reduce_window_max_p,
            "min": reduce_window_min_p}[op]
    out = prim.bind(x, **params)
    ident = _identity_np(op, x.dtype)
    concrete = None
    if not isinstance(init_value, Tracer):
        try:
            concrete = np.asarray(init_value).reshape(())
        except Exception:
            raise TypeError(f"reduce_window: init_value must be a scalar, got "
                            f"{init_value!r}") from None
        if concrete.item() == ident:
            return out
    elif init_value.ndim != 0:
        raise TypeError(f"reduce_window: init_value must be a scalar, got shape "
                        f"{init_value.shape}")
    from ..elementwise import add, max_, min_, mul, sub
    from ..views import full_like
    if concrete is not None:
        init = full_like(out, concrete.item())
    else:
        init = _broadcast_scalar(_convert(init_value, x.dtype), out.shape)
    if op == "max":
        return max_(out, init)
    if op == "min":
        return min_(out, init)
    # sum: init once per window plus once per padding/hole position in the window
    ones = full_like(x, 1)
    valid = reduce_window_sum_p.bind(ones, **params)
    count = full_like(out, prod(params["window_dimensions"]) + 1)
    return add(out, mul(init, sub(count, valid)))


def _broadcast_scalar(s, shape):
    from ..views import broadcast_in_dim
    return broadcast_in_dim(s, tuple(shape), ())
