"""The reduction and scan primitives with all their rules: abstract eval, NumPy references,
launchers (from launch.py), fusion lowering, jvp/vjp and batching, and the lax-level functions.

  reduce_sum / reduce_prod / reduce_max / reduce_min (x, axes)   the result drops `axes`
  argmax / argmin (x, axis, index_dtype)                         first NaN wins, then first max
  cumsum / cumprod / cummax / cummin (x, axis, reverse)          inclusive scans
  (ffill: internal, carries the last non-NaN value; the derivatives of cummax/cummin use it)

int32/uint32 sums and products wrap (as XLA's); float16, bfloat16 and the 8-bit floats are
loaded and accumulated in float; bool max/min are any/all. Complex sums and products are
built from real ones (complex_ops.by_parts, product_by_halving); complex max/min fold in
JAX's lexicographic order (complex_order.py); argmax/argmin refuse complex numbers, as JAX's.
"""
import numpy as np

from ...core import dtypes
from ...core.ad_util import Zero, is_zero
from ...core.shapes import normalize_axes, normalize_axis
from ...core.tracing import Primitive, ShapedArray
from ..complex_ops import by_parts, product_by_halving
from ..views import int_tuple, operand
from . import complex_order
from .kernel_common import _combine, _init_expr
from .launch import _arg_launcher, _reduce_launcher, _scan_launcher

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "argmax", "argmin",
           "cumsum", "cumprod", "cummax", "cummin"]


# =============================================================================================
# Abstract evaluation and NumPy references
# =============================================================================================

_KIND_NAMES = {"f": "floating", "i": "signed integer", "u": "unsigned integer", "b": "bool",
               "c": "complex"}


def _check_dtype(name, x, kinds):
    if dtypes.kind(x.dtype) not in kinds:
        allowed = " or ".join(_KIND_NAMES[k] for k in kinds)
        raise TypeError(f"{name}: operand of dtype {x.dtype} is not supported; it needs {allowed}")


def _check_axes(name, x, axes):
    if not isinstance(axes, tuple) or any(type(a) is not int for a in axes):
        raise TypeError(f"{name}: axes must be a tuple of ints, got {axes!r}")
    if any(not 0 <= a < x.ndim for a in axes) or list(axes) != sorted(set(axes)):
        raise ValueError(f"{name}: axes {axes} must be sorted, distinct axes of an operand of "
                         f"shape {tuple(x.shape)} (rank {x.ndim})")


def _reduce_abstract(name, kinds):
    def abstract_eval(x, *, axes):
        _check_dtype(name, x, kinds)
        _check_axes(name, x, axes)
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract_eval


def _check_axis(name, x, axis):
    if type(axis) is not int:
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of shape "
                         f"{tuple(x.shape)} (rank {x.ndim})")


def _arg_abstract(name):
    def abstract_eval(x, *, axis, index_dtype):
        _check_dtype(name, x, "fiub")
        _check_axis(name, x, axis)
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: axis {axis} of shape {tuple(x.shape)} is empty; "
                             f"{name} of an empty sequence is undefined")
        if not isinstance(index_dtype, np.dtype) or index_dtype.kind not in "iu":
            raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype!r}")
        shape = tuple(s for i, s in enumerate(x.shape) if i != axis)
        return ShapedArray(shape, index_dtype, False)
    return abstract_eval


def _scan_abstract(name, kinds):
    def abstract_eval(x, *, axis, reverse, exclusive=False):
        _check_dtype(name, x, kinds)
        _check_axis(name, x, axis)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return abstract_eval


def _work(x):
    """Reference computations of 16-bit floats happen in float32 (as the kernels do)."""
    return x.astype(dtypes.compute_dtype(x.dtype), copy=False)


def _identity_value(op, dtype):
    if dtype == np.bool_:
        return op == "min"
    if dtypes.kind(dtype) == "f":
        return -np.inf if op == "max" else np.inf
    info = dtypes.iinfo(dtype)
    return info.min if op == "max" else info.max


def _ref_reduce(op):
    def ref(x, *, axes):
        if dtypes.is_complex(x.dtype):
            return complex_order.reference(x, axes, op)
        with np.errstate(all="ignore"):
            w = _work(x)
            if op == "sum":
                r = np.sum(w, axis=axes, dtype=w.dtype)
            elif op == "prod":
                r = np.prod(w, axis=axes, dtype=w.dtype)
            else:
                fn = np.max if op == "max" else np.min
                r = fn(w, axis=axes, initial=_identity_value(op, x.dtype))
            return np.asarray(r).astype(x.dtype)
    return ref


def _ref_arg(op):
    def ref(x, *, axis, index_dtype):
        fn = np.argmax if op == "argmax" else np.argmin
        return np.asarray(fn(_work(x), axis=axis)).astype(index_dtype)
    return ref


def _ffill_np(w, axis):
    out = np.array(w, copy=True)
    moved = np.moveaxis(out, axis, 0)
    for k in range(1, moved.shape[0]):
        moved[k] = np.where(np.isnan(moved[k]), moved[k - 1], moved[k])
    return out


def _ref_scan(op):
    def ref(x, *, axis, reverse, exclusive=False):
        w = _work(x)
        if reverse:
            w = np.flip(w, axis)
        with np.errstate(all="ignore"):
            if op == "sum":
                r = np.cumsum(w, axis=axis, dtype=w.dtype)
            elif op == "prod":
                r = np.cumprod(w, axis=axis, dtype=w.dtype)
            elif op == "max":
                r = np.maximum.accumulate(w, axis=axis) if w.size else w
            elif op == "min":
                r = np.minimum.accumulate(w, axis=axis) if w.size else w
            else:
                r = _ffill_np(w, axis)
        if exclusive and r.size:
            r = np.moveaxis(r, axis, 0)
            r = np.concatenate([np.full((1,) + r.shape[1:], np.nan, r.dtype), r[:-1]])
            r = np.moveaxis(r, 0, axis)
        if reverse:
            r = np.flip(r, axis)
        return np.ascontiguousarray(r).astype(x.dtype)
    return ref


# =============================================================================================
# The primitives
# =============================================================================================

def _lowering(op):
    """For jit's fusion pass: dtype -> (identity C expression, combine template over {a}
    (earlier) and {b} (later)), in the accumulator type (float for the 16-bit floats)."""
    return lambda dtype: (_init_expr(op, dtype), _combine(op, dtype))


def _reduce_prim(op, kinds):
    p = Primitive(f"reduce_{op}", fusion="reduction", precision="keep_fp32")
    p.abstract_eval = _reduce_abstract(p.name, kinds)
    p.make_launcher = _reduce_launcher(op)
    p.reference = _ref_reduce(op)
    p.lowering = _lowering(op)
    return p


reduce_sum_p = _reduce_prim("sum", "fiu")
reduce_prod_p = _reduce_prim("prod", "fiu")
reduce_max_p = _reduce_prim("max", "fiubc")
reduce_min_p = _reduce_prim("min", "fiubc")


def _complex_launcher(p, op):
    """Complex operands go to the in-order lexicographic fold (complex_order.py)."""
    real, lex = p.make_launcher, complex_order.launcher(op)
    p.make_launcher = lambda device, args, params, out: (
        lex if dtypes.is_complex(args[0].dtype) else real)(device, args, params, out)


_complex_launcher(reduce_max_p, "max")
_complex_launcher(reduce_min_p, "min")

argmax_p = Primitive("argmax", fusion="reduction")
argmin_p = Primitive("argmin", fusion="reduction")
for _p, _op in ((argmax_p, "argmax"), (argmin_p, "argmin")):
    _p.abstract_eval = _arg_abstract(_op)
    _p.make_launcher = _arg_launcher(_op)
    _p.reference = _ref_arg(_op)


def _scan_prim(name, op, kinds):
    p = Primitive(name, fusion="reduction", precision="keep_fp32")
    p.abstract_eval = _scan_abstract(name, kinds)
    p.make_launcher = _scan_launcher(op)
    p.reference = _ref_scan(op)
    p.lowering = _lowering(op)
    return p


cumsum_p = _scan_prim("cumsum", "sum", "fiu")
cumprod_p = _scan_prim("cumprod", "prod", "fiu")
cummax_p = _scan_prim("cummax", "max", "fiub")
cummin_p = _scan_prim("cummin", "min", "fiub")
# Internal: carry the last non-NaN value forward (NaN marks "no value"); used by the
# derivatives of cummax/cummin and closed under differentiation itself.
ffill_p = _scan_prim("ffill", "ffill", "f")


# =============================================================================================
# lax-level functions
# =============================================================================================

def _axes_param(x, axes, name):
    if isinstance(axes, int) or hasattr(axes, "__index__") and not hasattr(axes, "__len__"):
        axes = (axes,)
    return normalize_axes(int_tuple(axes, name, "axes"), len(x.shape), name, "axes")


def reduce_sum(x, axes):
    """lax.reduce_sum: sum over `axes` (dropped from the result); ints wrap, as XLA's."""
    x = operand(x, "reduce_sum")
    axes = _axes_param(x, axes, "reduce_sum")
    if axes and dtypes.is_complex(x.dtype):
        return by_parts(lambda part: reduce_sum_p.bind(part, axes=axes), x)
    return reduce_sum_p.bind(x, axes=axes) if axes else x


def reduce_prod(x, axes):
    """lax.reduce_prod: product over `axes`; ints wrap."""
    x = operand(x, "reduce_prod")
    axes = _axes_param(x, axes, "reduce_prod")
    if axes and dtypes.is_complex(x.dtype):
        return product_by_halving(x, axes)
    return reduce_prod_p.bind(x, axes=axes) if axes else x


def reduce_max(x, axes):
    """lax.reduce_max: maximum over `axes` (NaN propagates; empty gives -inf / the min int).
    Complex numbers: lax.max folded over the elements in order, as JAX's (lexicographic;
    see complex_order.py for its NaN rule); empty gives -inf+0j.

    >>> lax.reduce_max(jnp.asarray([[1.0, 3.0], [2.0, 0.0]]), (1,))     # [3., 2.]
    """
    x = operand(x, "reduce_max")
    axes = _axes_param(x, axes, "reduce_max")
    return reduce_max_p.bind(x, axes=axes) if axes else x


def reduce_min(x, axes):
    """lax.reduce_min: minimum over `axes` (NaN propagates; empty gives +inf / the max int).
    Complex numbers as reduce_max's, with lax.min; empty gives inf+0j.

    >>> lax.reduce_min(jnp.asarray([1 + 1j, 1 - 1j]), (0,))            # 1-1j
    """
    x = operand(x, "reduce_min")
    axes = _axes_param(x, axes, "reduce_min")
    return reduce_min_p.bind(x, axes=axes) if axes else x


def _index_dtype(index_dtype, name):
    return dtypes.canonicalize(index_dtype, arg="index_dtype", where=name)


def no_complex_order(x, name, arg="operand"):
    """JAX's argmax/argmin compare with lax.gt/lt, which refuse complex numbers: so do these
    (and jnp's argmax, nanargmax, ...), with a TypeError naming `name` and `arg`."""
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{name}: {arg} of shape {tuple(x.shape)} and dtype {x.dtype} is not "
                        f"supported: complex numbers have no order {name} uses (as in JAX); "
                        f"take jnp.real, jnp.imag or jnp.abs first")


def argmax(x, axis, index_dtype=dtypes.int32):
    """lax.argmax: index of the maximum along `axis` (the first NaN, else the first max);
    complex operands raise TypeError, as in JAX.

    >>> lax.argmax(jnp.asarray([1.0, 3.0, 3.0]), 0)       # 1
    """
    x = operand(x, "argmax")
    no_complex_order(x, "argmax")
    axis = normalize_axis(axis, len(x.shape), "argmax")
    return argmax_p.bind(x, axis=axis, index_dtype=_index_dtype(index_dtype, "argmax"))


def argmin(x, axis, index_dtype=dtypes.int32):
    """lax.argmin: index of the minimum along `axis` (the first NaN, else the first min);
    complex operands raise TypeError, as in JAX.

    >>> lax.argmin(jnp.asarray([2.0, 1.0, 1.0]), 0)       # 1
    """
    x = operand(x, "argmin")
    no_complex_order(x, "argmin")
    axis = normalize_axis(axis, len(x.shape), "argmin")
    return argmin_p.bind(x, axis=axis, index_dtype=_index_dtype(index_dtype, "argmin"))


def _scan_fn(p, doc):
    def f(x, axis=0, reverse=False):
        x = operand(x, p.name)
        axis = normalize_axis(axis, len(x.shape), p.name)
        if p is cumsum_p and dtypes.is_complex(x.dtype):
            return by_parts(lambda part: p.bind(part, axis=axis, reverse=bool(reverse)), x)
        if p is cumprod_p and dtypes.is_complex(x.dtype):
            # complex products have no scan kernel: JAX's odd/even recursion of multiplies
            from ...lax_extras import associative_scan
            from ..elementwise import mul
            return associative_scan(mul, x, reverse=bool(reverse), axis=axis)
        return p.bind(x, axis=axis, reverse=bool(reverse))
    f.__name__ = p.name
    f.__doc__ = doc
    return f


cumsum = _scan_fn(cumsum_p, "lax.cumsum: inclusive running sum along `axis` (from the end "
                            "when reverse=True); ints wrap.")
cumprod = _scan_fn(cumprod_p, "lax.cumprod: inclusive running product along `axis`.")
cummax = _scan_fn(cummax_p, "lax.cummax: running maximum along `axis` (NaN propagates).")
cummin = _scan_fn(cummin_p, "lax.cummin: running minimum along `axis` (NaN propagates).")


def _ffill(x, axis, reverse=False, exclusive=False):
    return ffill_p.bind(x, axis=axis, reverse=bool(reverse), exclusive=bool(exclusive))


# =============================================================================================
# Differentiation (written with primitives, so the rules differentiate again)
# =============================================================================================

def _ew():
    from .. import elementwise
    return elementwise


def _c(x, v, dtype=None):
    from ..views import full_like
    return full_like(x, v, dtype)


def _bcast_back(y, x_shape, axes):
    """Broadcast a reduction's result back to the operand's shape."""
    from ..views import broadcast_in_dim
    kept = tuple(d for d in range(len(x_shape)) if d not in axes)
    return broadcast_in_dim(y, tuple(x_shape), kept)


def _tangent_zero(out):
    return Zero(ShapedArray(out.shape, out.dtype, out.weak_type))


def _is_float(x):
    return dtypes.kind(x.dtype) == "f"


def _is_inexact(x):
    return dtypes.kind(x.dtype) in "fc"


# ---- reduce_sum: linear ---------------------------------------------------------------------

def _reduce_sum_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_sum_p.bind(x, axes=axes)
    if is_zero(t):
        return out, _tangent_zero(out)
    return out, reduce_sum_p.bind(t, axes=axes)


def _reduce_sum_vjp(ct, out, x, *, axes):
    return (_bcast_back(ct, x.shape, axes),)


reduce_sum_p.jvp = _reduce_sum_jvp
reduce_sum_p.vjp = _reduce_sum_vjp


# ---- reduce_max / reduce_min: the cotangent is split evenly among the maxima ------------------

def _sum(x, axes):
    """reduce_sum, complex numbers by parts (reduce_sum_p takes real numbers only)."""
    if dtypes.is_complex(x.dtype):
        return by_parts(lambda part: reduce_sum_p.bind(part, axes=axes), x)
    return reduce_sum_p.bind(x, axes=axes)


def _chooser_weights(x, out, axes):
    """(indicator, count): 1 where x equals the reduction result, else 0, and how many do
    (JAX's tie rule: the derivative is split evenly among them; a result equal to no
    element, as a NaN or a complex fold's identity, has count 0 and a NaN derivative)."""
    ew = _ew()
    ind = ew.convert_element_type(ew.eq(x, _bcast_back(out, x.shape, axes)), x.dtype)
    return ind, _sum(ind, axes)


def _chooser_rules(p):
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = p.bind(x, axes=axes)
        if is_zero(t) or not _is_inexact(x):
            return out, _tangent_zero(out)
        ew = _ew()
        ind, counts = _chooser_weights(x, out, axes)
        return out, ew.div(_sum(ew.mul(t, ind), axes), counts)

    def vjp(ct, out, x, *, axes):
        if not _is_inexact(x):
            return (None,)
        ew = _ew()
        ind, counts = _chooser_weights(x, out, axes)
        return (ew.mul(_bcast_back(ew.div(ct, counts), x.shape, axes), ind),)
    p.jvp, p.vjp = jvp, vjp


_chooser_rules(reduce_max_p)
_chooser_rules(reduce_min_p)


# ---- reduce_prod: product of the others, safe at zeros ------------------------------------------

def _prod_partials(x, out, axes):
    """d out / d x_i = prod_{j != i} x_j, without dividing by zero: P / x_i where the row has
    no zero; the product of the nonzeros at a row's only zero; 0 elsewhere."""
    ew = _ew()
    zero = _c(x, 0)
    iszero = ew.eq(x, zero)
    n0 = reduce_sum_p.bind(ew.convert_element_type(iszero, dtypes.int32), axes=axes)
    n0 = _bcast_back(n0, x.shape, axes)
    x_safe = ew.select(iszero, _c(x, 1), x)
    p_nz = _bcast_back(reduce_prod_p.bind(x_safe, axes=axes), x.shape, axes)
    none = ew.eq(n0, _c(n0, 0))
    one = ew.and_(iszero, ew.eq(n0, _c(n0, 1)))
    return ew.select(none, ew.div(_bcast_back(out, x.shape, axes), x_safe),
                     ew.select(one, p_nz, zero))


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    if is_zero(t) or not _is_float(x):
        return out, _tangent_zero(out)
    ew = _ew()
    return out, reduce_sum_p.bind(ew.mul(t, _prod_partials(x, out, axes)), axes=axes)


def _reduce_prod_vjp(ct, out, x, *, axes):
    if not _is_float(x):
        return (None,)
    ew = _ew()
    return (ew.mul(_bcast_back(ct, x.shape, axes), _prod_partials(x, out, axes)),)


reduce_prod_p.jvp = _reduce_prod_jvp
reduce_prod_p.vjp = _reduce_prod_vjp


# ---- argmax / argmin: integer outputs, no derivative ---------------------------------------------

def _arg_jvp(p):
    def jvp(primals, tangents, **params):
        out = p.bind(*primals, **params)
        return out, _tangent_zero(out)
    return jvp


for _p in (argmax_p, argmin_p):
    _p.jvp = _arg_jvp(_p)
    _p.vjp = lambda ct, out, x, **params: (None,)


# ---- cumsum: linear; the transpose is the cumsum the other way --------------------------------

def _cumsum_jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = cumsum_p.bind(x, axis=axis, reverse=reverse)
    if is_zero(t):
        return out, _tangent_zero(out)
    return out, cumsum_p.bind(t, axis=axis, reverse=reverse)


cumsum_p.jvp = _cumsum_jvp
cumsum_p.vjp = lambda ct, out, x, *, axis, reverse: (
    cumsum_p.bind(ct, axis=axis, reverse=not reverse),)


# ---- cumprod: zero-safe, through the first zero of each row -------------------------------------

def _cumprod_parts(x, axis, reverse):
    """(before, is_z, x_safe, q): before marks positions ahead of the row's first zero, is_z the
    first zero itself; q is the running product with that zero replaced by 1."""
    ew = _ew()
    zero = _c(x, 0)
    iszero = ew.eq(x, zero)
    count = cumsum_p.bind(ew.convert_element_type(iszero, dtypes.int32), axis=axis,
                          reverse=reverse)
    before = ew.eq(count, _c(count, 0))
    is_z = ew.and_(iszero, ew.eq(count, _c(count, 1)))
    x_safe = ew.select(before, x, _c(x, 1))
    q = cumprod_p.bind(ew.select(is_z, _c(x, 1), x), axis=axis, reverse=reverse)
    return before, is_z, x_safe, q


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if is_zero(t) or not _is_float(x):
        return out, _tangent_zero(out)
    ew = _ew()
    before, is_z, x_safe, q = _cumprod_parts(x, axis, reverse)
    zero = _c(x, 0)
    head = ew.mul(out, cumsum_p.bind(ew.select(before, ew.div(t, x_safe), zero), axis=axis,
                                     reverse=reverse))
    tail = ew.mul(q, cumsum_p.bind(ew.select(is_z, t, zero), axis=axis, reverse=reverse))
    return out, ew.select(before, head, tail)


def _cumprod_vjp(ct, out, x, *, axis, reverse):
    if not _is_float(x):
        return (None,)
    ew = _ew()
    before, is_z, x_safe, q = _cumprod_parts(x, axis, reverse)
    head = ew.div(cumsum_p.bind(ew.mul(ct, out), axis=axis, reverse=not reverse), x_safe)
    at_zero = cumsum_p.bind(ew.mul(ct, q), axis=axis, reverse=not reverse)
    return (ew.select(before, head, ew.select(is_z, at_zero, _c(x, 0))),)


cumprod_p.jvp = _cumprod_jvp
cumprod_p.vjp = _cumprod_vjp


# ---- cummax / cummin (and ffill): the derivative follows the most recent position holding the
# running extreme. Written with ffill, whose own rules use ffill and cumsum, so every order of
# differentiation stays within these primitives.

def _nan_where_not(mask, v):
    ew = _ew()
    return ew.select(mask, v, _c(v, float("nan")))


def _segment_sums(ct, valid, axis, reverse, exclusive):
    """For each valid position i: the sum of ct over the positions whose most recent valid
    position (strictly earlier when exclusive) is i; 0 elsewhere."""
    ew = _ew()
    r = cumsum_p.bind(ct, axis=axis, reverse=not reverse)
    if exclusive:
        r = ew.sub(r, ct)
    nxt = _ffill(_nan_where_not(valid, r), axis, reverse=not reverse, exclusive=True)
    nxt = ew.select(ew.ne(nxt, nxt), _c(nxt, 0), nxt)
    return ew.select(valid, ew.sub(r, nxt), _c(ct, 0))


def _cumext_rules(p):
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = p.bind(x, axis=axis, reverse=reverse)
        if is_zero(t) or not _is_float(x):
            return out, _tangent_zero(out)
        hit = _ew().eq(x, out)
        return out, _ffill(_nan_where_not(hit, t), axis, reverse)

    def vjp(ct, out, x, *, axis, reverse):
        if not _is_float(x):
            return (None,)
        return (_segment_sums(ct, _ew().eq(x, out), axis, reverse, False),)
    p.jvp, p.vjp = jvp, vjp


_cumext_rules(cummax_p)
_cumext_rules(cummin_p)


def _ffill_jvp(primals, tangents, *, axis, reverse, exclusive=False):
    (v,), (t,) = primals, tangents
    out = _ffill(v, axis, reverse, exclusive)
    if is_zero(t):
        return out, _tangent_zero(out)
    ew = _ew()
    valid = ew.eq(v, v)
    tout = _ffill(_nan_where_not(valid, t), axis, reverse, exclusive)
    return out, ew.select(ew.ne(tout, tout), _c(tout, 0), tout)


def _ffill_vjp(ct, out, v, *, axis, reverse, exclusive=False):
    ew = _ew()
    return (_segment_sums(ct, ew.eq(v, v), axis, reverse, exclusive),)


ffill_p.jvp = _ffill_jvp
ffill_p.vjp = _ffill_vjp


# =============================================================================================
# Batching: the batch axis is one more kept axis
# =============================================================================================

def _reduce_batch(p):
    def rule(args, dims, *, axes):
        (x,), (d,) = args, dims
        new_axes = tuple(a if a < d else a + 1 for a in axes)
        out_dim = d - sum(1 for a in axes if a < d)
        return p.bind(x, axes=new_axes), out_dim
    return rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p):
    _p.batch = _reduce_batch(_p)


def _arg_batch(p):
    def rule(args, dims, *, axis, index_dtype):
        (x,), (d,) = args, dims
        new_axis = axis if axis < d else axis + 1
        return p.bind(x, axis=new_axis, index_dtype=index_dtype), d - (1 if axis < d else 0)
    return rule


argmax_p.batch = _arg_batch(argmax_p)
argmin_p.batch = _arg_batch(argmin_p)


def _scan_batch(p):
    def rule(args, dims, *, axis, reverse, **params):
        (x,), (d,) = args, dims
        new_axis = axis if axis < d else axis + 1
        return p.bind(x, axis=new_axis, reverse=reverse, **params), d
    return rule


for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, ffill_p):
    _p.batch = _scan_batch(_p)
