"""Elementwise primitives: one table row each (C template, NumPy reference, derivative).

Operands of a binary or ternary op have equal shapes and dtypes (as in `jax.lax`);
`netcl.numpy` broadcasts and promotes before binding. Templates use {0}, {1}, {2} for the
operands, {T} for the first operand's C compute type and {U} for the result's. Float16 is
computed in float. Integer division and remainder follow XLA: x / 0 == -1, x % 0 == x,
INT_MIN / -1 == INT_MIN (no undefined behaviour on any device), at 32 and 64 bits (int64 and
uint64 compute in OpenCL's long and ulong; their templates are the "i64"/"u64" rows of a
table, where the 32-bit one does not serve).
"""
import math
import operator

import numpy as np

from ..core import dtypes, kernels, subbyte
from ..core.array import ArrayBase, register_copy_primitive
from ..core.ad_util import deflinear_elementwise, defjvp, defvjp
from ..core.codegen import HELPERS, make_elementwise_launcher
from ..core.tracing import Primitive, ShapedArray
from .elementwise_refs import (_div_ref, _erf, _erfinv_ref, _floor_div_ref, _nan_max, _nan_min,
                               _np_float, _np_via_float64, _pow_ref, _rem_ref, _round_ref,
                               _sign_ref)

__all__ = []  # filled by _export


def _export(fn):
    __all__.append(fn.__name__)
    return fn


# ---- abstract evaluation ----------------------------------------------------------------

_KIND_NAMES = {"f": "floating", "i": "signed integer", "u": "unsigned integer", "b": "bool",
               "c": "complex"}


def _check_kinds(name, dtype, kinds):
    if dtypes.kind(dtype) not in kinds:
        allowed = " or ".join(_KIND_NAMES[k] for k in kinds)
        raise TypeError(f"{name}: operand of dtype {dtype} is not supported; it needs {allowed}")


def _same_shapes_dtypes(name, args, check_dtypes=True):
    s0, d0 = args[0].shape, args[0].dtype
    for a in args[1:]:
        if a.shape != s0:
            raise ValueError(f"{name}: operands must have equal shapes, got "
                             f"{', '.join(str(tuple(x.shape)) for x in args)} "
                             "(netcl.numpy broadcasts; netcl.lax does not)")
        if check_dtypes and a.dtype != d0:
            raise TypeError(f"{name}: operands must have equal dtypes, got "
                            f"{', '.join(str(x.dtype) for x in args)}")


def _elementwise_prim(name, nargs, kinds, out_dtype=None, precision="follow_inputs"):
    """A primitive whose result has its operands' shape; dtype kept unless out_dtype given."""
    p = Primitive(name, fusion="elementwise", precision=precision)
    # the dtype kinds it takes ('f', 'i', 'u', 'b', 'c'; complex_ops adds 'c' to those that
    # have complex rows)
    p.kinds = kinds
    # (vector comparisons give -1/0 masks, which the vector ?: operator and &&, ||, ! accept;
    # templates calling netcl_ helpers other than the inline math are refused by codegen)
    p.vector_safe = True

    def abstract_eval(*args, **params):
        if len(args) != nargs:
            raise TypeError(f"{name}: expected {nargs} operand(s), got {len(args)}")
        _same_shapes_dtypes(name, args)
        _check_kinds(name, args[0].dtype, p.kinds)
        weak = all(a.weak_type for a in args)
        if out_dtype is not None:
            return ShapedArray(args[0].shape, out_dtype, False)
        return ShapedArray(args[0].shape, args[0].dtype, weak)

    p.abstract_eval = abstract_eval
    p.make_launcher = lambda device, args, params, out: make_elementwise_launcher(
        p, device, args, params, out)
    return p


def template_key(dtype):
    """The row of a template table for `dtype`: its kind ('f', 'i', 'u', 'b', 'c'), or 'i64' /
    'u64' for the 64-bit ints and 'c128' for complex128 where a table has such a row.

    >>> template_key(dtypes.int64)         # 'i64'
    """
    k = dtypes.kind(dtype)
    if k == "c":
        return "c128" if dtype == dtypes.complex128 else k
    return k + "64" if k in "iu" and dtype.itemsize == 8 else k


def by_kind(table):
    """A lowering choosing the template by the first operand's dtype: its `template_key`
    row, else its kind's.

    >>> by_kind({"i": "({0} + 1)"})([dtypes.int64], dtypes.int64)   # '({0} + 1)'
    """
    def lowering(in_dtypes, out_dtype, **params):
        d = in_dtypes[0]
        return table.get(template_key(d)) or table[dtypes.kind(d)]
    return lowering



def _unary(name, template, reference, kinds="f", precision="follow_inputs"):
    p = _elementwise_prim(name, 1, kinds, precision=precision)
    p.lowering = by_kind(template) if isinstance(template, dict) else template
    p.reference = reference
    return p


def _binary(name, template, reference, kinds="fiu", out_dtype=None):
    p = _elementwise_prim(name, 2, kinds, out_dtype)
    p.lowering = by_kind(template) if isinstance(template, dict) else template
    p.reference = reference
    return p


# ---- C helpers for integer semantics and erf_inv --------------------------------------

def _int_helpers(i, u, imin, sfx):
    """The integer division, remainder and power helpers for signed type `i` and unsigned
    `u` (int/uint or long/ulong), named netcl_{i,u}{div,rem,pow}{sfx} and
    netcl_ifloordiv{sfx}."""
    return {
        f"idiv{sfx}": f"""
inline {i} netcl_idiv{sfx}({i} a, {i} b) {{ return b == 0 ? -1 : ((a == {imin} && b == -1) ? a : a / b); }}
inline {u} netcl_udiv{sfx}({u} a, {u} b) {{ return b == 0 ? ({u})-1 : a / b; }}
""",
        f"irem{sfx}": f"""
inline {i} netcl_irem{sfx}({i} a, {i} b) {{ return b == 0 ? a : ((a == {imin} && b == -1) ? 0 : a % b); }}
inline {u} netcl_urem{sfx}({u} a, {u} b) {{ return b == 0 ? a : a % b; }}
""",
        f"ifloordiv{sfx}": f"""
inline {i} netcl_ifloordiv{sfx}({i} a, {i} b) {{
  if (b == 0) return 0;
  if (a == {imin} && b == -1) return a;
  {i} q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }}
""",
        f"ipow{sfx}": f"""
inline {i} netcl_ipow{sfx}({i} x, {i} y) {{
  if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
  {i} r = 1; while (y) {{ if (y & 1) r *= x; x *= x; y >>= 1; }} return r; }}
inline {u} netcl_upow{sfx}({u} x, {u} y) {{
  {u} r = 1; while (y) {{ if (y & 1) r *= x; x *= x; y >>= 1; }} return r; }}
"""}


for _sfx, _i, _u, _min in (("", "int", "uint", "INT_MIN"), ("64", "long", "ulong", "LONG_MIN")):
    _h = _int_helpers(_i, _u, _min, _sfx)
    HELPERS.update(_h)
    # (a helper named by its first function: the unsigned ones live with the signed)
    HELPERS[f"udiv{_sfx}"] = _h[f"idiv{_sfx}"]
    HELPERS[f"urem{_sfx}"] = _h[f"irem{_sfx}"]
    HELPERS[f"upow{_sfx}"] = _h[f"ipow{_sfx}"]
# Giles, "Approximating the erfinv function" (single precision), as XLA uses for float32.
HELPERS["erfinv"] = """
inline float netcl_erfinv(float x) {
  float w = -log1p(-x * x), p;  /* as XLA: exact near |x| = 0 */
  if (w < 5.0f) { w = w - 2.5f;
    p = 2.81022636e-08f; p = 3.43273939e-07f + p*w; p = -3.5233877e-06f + p*w;
    p = -4.39150654e-06f + p*w; p = 0.00021858087f + p*w; p = -0.00125372503f + p*w;
    p = -0.00417768164f + p*w; p = 0.246640727f + p*w; p = 1.50140941f + p*w;
  } else { w = netcl_sqrt(w) - 3.0f;
    p = -0.000200214257f; p = 0.000100950558f + p*w; p = 0.00134934322f + p*w;
    p = -0.00367342844f + p*w; p = 0.00573950773f + p*w; p = -0.0076224613f + p*w;
    p = 0.00943887047f + p*w; p = 1.00167406f + p*w; p = 2.83297682f + p*w; }
  return netcl_fabs(x) == 1.0f ? x * INFINITY : p * x; }
"""
HELPERS["erfinv_d"] = """
inline double netcl_erfinv_d(double x) {
  if (netcl_fabs(x) >= 1.0) return netcl_fabs(x) == 1.0 ? x * INFINITY : NAN;
  double y = (double)netcl_erfinv((float)x);
  for (int k = 0; k < 2; ++k) {  /* Newton steps to double precision */
    double err = erf(y) - x; y -= err / (1.1283791670955126 * exp(-y * y)); }
  return y; }
"""


# ---- unary -------------------------------------------------------------------------------

neg_p = _unary("neg", "(-{0})", lambda x: np.negative(x), "fiu")
abs_p = _unary("abs", {"f": "netcl_fabs({0})", "i": "({T})abs({0})", "u": "{0}"}, np.abs, "fiu")
sign_p = _unary("sign", {"f": "({0} > 0 ? ({T})1 : ({0} < 0 ? ({T})-1 : {0}))",
                         "i": "({T})(({0} > 0) - ({0} < 0))", "u": "({T})({0} > 0)"}, _sign_ref,
                "fiu")
# (netcl_exp, netcl_tanh: the builtins, or core.wide_math's on 16-float vectors)
exp_p = _unary("exp", "netcl_exp({0})", _np_float(np.exp), precision="keep_fp32")
exp2_p = _unary("exp2", "exp2({0})", _np_float(np.exp2), precision="keep_fp32")
log_p = _unary("log", "log({0})", _np_float(np.log), precision="keep_fp32")
log1p_p = _unary("log1p", "log1p({0})", _np_float(np.log1p), precision="keep_fp32")
expm1_p = _unary("expm1", "expm1({0})", _np_float(np.expm1),
                 precision="keep_fp32")
sqrt_p = _unary("sqrt", "netcl_sqrt({0})", _np_float(np.sqrt))
rsqrt_p = _unary("rsqrt", "netcl_rsqrt({0})", _np_float(lambda x: 1 / np.sqrt(x)))
square_p = _unary("square", "({0} * {0})", lambda x: np.square(x), "fiu")
reciprocal_p = _unary("reciprocal", "(({T})1 / {0})", _np_float(np.reciprocal))
# Saturated explicitly where float32 tanh rounds to +-1 (|x| >= 9.0109134): PoCL's tanh
# stops at +-0.99999994 even for +-inf, which made gelu(-1e4) -3e-4 instead of -0. A select
# on comparisons keeps the template vector safe; NaN compares false and stays NaN.
_TANH_ONE_F32 = "9.0109134f"
tanh_p = _unary("tanh", lambda d, o: "tanh({0})" if d[0] == dtypes.float64 else
                f"({{0}} >= {_TANH_ONE_F32} ? ({{T}})1 : ({{0}} <= -{_TANH_ONE_F32} ? ({{T}})-1 "
                ": netcl_tanh({0})))", _np_via_float64(np.tanh))
logistic_p = _unary("logistic", "(({T})1 / (({T})1 + netcl_exp(-{0})))",
                    _np_float(lambda x: 1 / (1 + np.exp(-x))))
# +-inf lanes are made NaN (their result anyway) before the call: PoCL's 8-wide sin/cos/tan
# return garbage in the other lanes of a vector holding an infinity (sin(1e-6) gave 0.0082)
_TRIG_ARG = "(netcl_fabs({0}) < INFINITY ? {0} : ({T})NAN)"
sin_p = _unary("sin", f"sin({_TRIG_ARG})", _np_float(np.sin))
cos_p = _unary("cos", f"cos({_TRIG_ARG})", _np_float(np.cos))
tan_p = _unary("tan", f"tan({_TRIG_ARG})", _np_float(np.tan))
asin_p = _unary("asin", "asin({0})", _np_float(np.arcsin))
acos_p = _unary("acos", "acos({0})", _np_float(np.arccos))
atan_p = _unary("atan", "atan({0})", _np_float(np.arctan))
sinh_p = _unary("sinh", "sinh({0})", _np_float(np.sinh))
cosh_p = _unary("cosh", "cosh({0})", _np_float(np.cosh))
asinh_p = _unary("asinh", "asinh({0})", _np_float(np.arcsinh))
acosh_p = _unary("acosh", "acosh({0})", _np_float(np.arccosh))
atanh_p = _unary("atanh", "atanh({0})", _np_float(np.arctanh))
erf_p = _unary("erf", "erf({0})", _np_float(_erf))
cbrt_p = _unary("cbrt", "cbrt({0})", _np_via_float64(np.cbrt))
erf_inv_p = _unary("erf_inv", lambda d, o: "netcl_erfinv_d({0})" if d[0] == dtypes.float64
                   else "netcl_erfinv({0})", _erfinv_ref)
erf_inv_p.vector_safe = False     # (its helpers take scalars)
floor_p = _unary("floor", "netcl_floor({0})", _np_float(np.floor))
ceil_p = _unary("ceil", "netcl_ceil({0})", _np_float(np.ceil))
round_p = _unary("round", lambda d, o, rounding_method: "netcl_rint({0})" if rounding_method
                 else "netcl_round({0})", _np_float(_round_ref))
is_finite_p = _elementwise_prim("is_finite", 1, "f", out_dtype=dtypes.bool_)
is_finite_p.lowering = "(netcl_fabs({0}) < INFINITY)"    # NaN compares false
is_finite_p.reference = lambda x: np.isfinite(x)
not_p = _unary("not", {"b": "(!{0})", "i": "(~{0})", "u": "(~{0})"},
               lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x), "biu")
copy_p = _unary("copy", "{0}", lambda x: np.array(x, copy=True), "biuf")


def _integer_pow_template(in_dtypes, out_dtype, y):
    if y == 0:
        return "(({T})1)"
    base, e = "{0}", abs(y)
    # Repeated squaring written out: exact for ints, as XLA's integer_pow.
    terms, sq = [], base
    while e:
        if e & 1:
            terms.append(sq)
        e >>= 1
        if e:
            sq = f"({sq} * {sq})"
    prod_ = " * ".join(terms)
    return "(({T})1 / (" + prod_ + "))" if y < 0 else f"({prod_})"


class IntegerPowerError(ValueError, TypeError):
    """An integer raised to a negative power: NumPy raises ValueError for it, JAX TypeError;
    this is both, so code written for either catches it."""


integer_pow_p = _elementwise_prim("integer_pow", 1, "fiu")
_integer_pow_shape_rule = integer_pow_p.abstract_eval


def _integer_pow_abstract(x, *, y):
    # 1 / x**n truncated is 0 for |x| > 1 (a silent wrong answer), and a trap for x == 0
    if y < 0 and not dtypes.is_inexact(x.dtype):
        raise IntegerPowerError(f"integer_pow: Integers cannot be raised to negative powers, "
                                f"got integer_pow({x.dtype}{list(x.shape)}, {y})")
    return _integer_pow_shape_rule(x, y=y)


integer_pow_p.abstract_eval = _integer_pow_abstract
integer_pow_p.lowering = _integer_pow_template
integer_pow_p.reference = lambda x, y: (
    _np_float(lambda v: np.power(v, float(y)))(x) if dtypes.is_inexact(x.dtype)
    else _pow_ref(x, np.full_like(x, y)) if x.dtype not in dtypes.SUBBYTE_BITS
    else dtypes.wrap_ints(x.astype(np.int64) ** y, x.dtype).astype(x.dtype))


def _convert_template(in_dtypes, out_dtype, new_dtype, weak_type=False):
    src = in_dtypes[0]
    if out_dtype == dtypes.bool_:
        return "({0} != 0)"
    if dtypes.kind(src) == "f" and out_dtype in dtypes.SUBBYTE_INTS:
        return subbyte.from_float(out_dtype, "{0}")    # saturated to its range, as JAX
    if dtypes.kind(src) == "f" and out_dtype.kind in "iu":
        # NaN first: PoCL's _sat conversion does not map NaN to 0 as the spec says
        return f"(({{0}} != {{0}}) ? 0 : convert_{_ctype(out_dtype)}_sat_rtz({{0}}))"
    return "(({U}){0})"


def _ctype(d):
    return dtypes.COMPUTE_CTYPE[d]


def _convert_ref(x, new_dtype, weak_type=False):
    narrow = subbyte.convert_reference(x, new_dtype)   # int4, uint4, ... in or out
    if narrow is not None:
        return narrow
    if dtypes.kind(x.dtype) == "f" and new_dtype.kind in "iu":
        # saturated: compared as floats, since int64's max is no float64 (it rounds to 2**63)
        info = np.iinfo(new_dtype)
        with np.errstate(all="ignore"):
            y = np.trunc(x.astype(np.float64))
            over, under = y >= float(info.max), y <= float(info.min)
            inside = np.where(over | under | np.isnan(y), 0, y).astype(new_dtype)
            return np.where(over, new_dtype.type(info.max),
                            np.where(under, new_dtype.type(info.min), inside))
    if x.dtype in dtypes.FLOAT8 or new_dtype in dtypes.FLOAT8:
        # through float32, as kernels convert (every float8 value is one; ml_dtypes has no
        # direct casts between some formats, e.g. into float8_e8m0fnu)
        x = x.astype(dtypes.float32)
    with np.errstate(invalid="ignore", over="ignore"):   # NaN and inf narrowed, as kernels do
        return x.astype(new_dtype)


convert_element_type_p = Primitive("convert_element_type", fusion="elementwise")
convert_element_type_p.lowering = _convert_template
convert_element_type_p.reference = _convert_ref


def _convert_abstract(x, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_launcher(device, args, params, out):
    x = args[0]
    if x.dtype == out.dtype:  # only the weak-type flag changes: a view, no kernel
        return lambda x: x._view(x.shape, x.strides, x.offset, weak_type=out.weak_type)
    return make_elementwise_launcher(convert_element_type_p, device, args, params, out)


convert_element_type_p.abstract_eval = _convert_abstract
convert_element_type_p.make_launcher = _convert_launcher
# vector casts need convert_T8(): only same-compute-type casts and tests for != 0 are safe
convert_element_type_p.vector_safe = lambda t, u: \
    u == dtypes.bool_ or kernels.compute_ctype(t) == kernels.compute_ctype(u)
# (a conversion to the same dtype changes the weak-type flag only: its launcher is a view)
convert_element_type_p.returns_view = \
    lambda e: e.inputs[0].aval.dtype == e.outputs[0].aval.dtype

# ---- binary ------------------------------------------------------------------------------

add_p = _binary("add", "({0} + {1})", lambda a, b: np.add(a, b))
sub_p = _binary("sub", "({0} - {1})", lambda a, b: np.subtract(a, b))
mul_p = _binary("mul", "({0} * {1})", lambda a, b: np.multiply(a, b))
div_p = _binary("div", {"f": "({0} / {1})", "i": "netcl_idiv({0}, {1})",
                        "u": "netcl_udiv({0}, {1})", "i64": "netcl_idiv64({0}, {1})",
                        "u64": "netcl_udiv64({0}, {1})"}, _div_ref)
rem_p = _binary("rem", {"f": "fmod({0}, {1})", "i": "netcl_irem({0}, {1})",
                        "u": "netcl_urem({0}, {1})", "i64": "netcl_irem64({0}, {1})",
                        "u64": "netcl_urem64({0}, {1})"}, _rem_ref)
floor_div_p = _binary("floor_div", {"f": "netcl_floor({0} / {1})",
                                    "i": "netcl_ifloordiv({0}, {1})",
                                    "i64": "netcl_ifloordiv64({0}, {1})",
                                    "u": "({1} == 0 ? ({T})0 : {0} / {1})"}, _floor_div_ref)
floor_div_p.vector_safe = False
pow_p = _binary("pow", {"f": "pow({0}, {1})", "i": "netcl_ipow({0}, {1})",
                        "u": "netcl_upow({0}, {1})", "i64": "netcl_ipow64({0}, {1})",
                        "u64": "netcl_upow64({0}, {1})"}, _pow_ref)
pow_p.precision = "keep_fp32"       # (autocast keeps it in float32, as PyTorch's)
atan2_p = _binary("atan2", "atan2({0}, {1})", _np_float(np.arctan2), kinds="f")
# NaN tests as x != x and integer max/min as selects: inline on every compiler (PoCL calls
# its isnan / max / min builtins out of line, see kernels.INLINE_MATH)
max_p = _binary("max", {"f": "(({0} > {1} || {0} != {0}) ? {0} : {1})",
                        "i": "({0} > {1} ? {0} : {1})", "u": "({0} > {1} ? {0} : {1})"}, _nan_max)
min_p = _binary("min", {"f": "(({0} < {1} || {0} != {0}) ? {0} : {1})",
                        "i": "({0} < {1} ? {0} : {1})", "u": "({0} < {1} ? {0} : {1})"}, _nan_min)
eq_p = _binary("eq", "({0} == {1})", np.equal, "fiub", dtypes.bool_)
ne_p = _binary("ne", "({0} != {1})", np.not_equal, "fiub", dtypes.bool_)
lt_p = _binary("lt", "({0} < {1})", np.less, "fiub", dtypes.bool_)
le_p = _binary("le", "({0} <= {1})", np.less_equal, "fiub", dtypes.bool_)
gt_p = _binary("gt", "({0} > {1})", np.greater, "fiub", dtypes.bool_)
ge_p = _binary("ge", "({0} >= {1})", np.greater_equal, "fiub", dtypes.bool_)
and_p = _binary("and", {"b": "({0} && {1})", "i": "({0} & {1})", "u": "({0} & {1})"},
                lambda a, b: np.bitwise_and(a, b), "biu")
or_p = _binary("or", {"b": "({0} || {1})", "i": "({0} | {1})", "u": "({0} | {1})"},
               lambda a, b: np.bitwise_or(a, b), "biu")
xor_p = _binary("xor", {"b": "({0} != {1})", "i": "({0} ^ {1})", "u": "({0} ^ {1})"},
                lambda a, b: np.bitwise_xor(a, b), "biu")

# ---- ternary -----------------------------------------------------------------------------

select_p = Primitive("select", fusion="elementwise")  # select(pred, on_true, on_false)


def _select_abstract(pred, on_true, on_false):
    if pred.dtype != dtypes.bool_:
        raise TypeError(f"select: pred must be bool, got {pred.dtype}")
    _same_shapes_dtypes("select", (pred, on_true, on_false), check_dtypes=False)
    if on_true.dtype != on_false.dtype:
        raise TypeError(f"select: on_true and on_false must have equal dtypes, got "
                        f"{on_true.dtype} and {on_false.dtype}")
    return ShapedArray(on_true.shape, on_true.dtype, on_true.weak_type and on_false.weak_type)


select_p.abstract_eval = _select_abstract
select_p.lowering = lambda d, o: "({0} ? {1} : {2})"
select_p.vector_safe = True
select_p.reference = lambda p, a, b: np.where(p, a, b)
select_p.make_launcher = lambda device, args, params, out: make_elementwise_launcher(
    select_p, device, args, params, out)

clamp_p = _elementwise_prim("clamp", 3, "fiu")  # clamp(lo, x, hi), NaN anywhere propagates
# NaN-propagating max then min written as selects (as max_p/min_p): OpenCL's max/min leave
# NaN operands undefined (PoCL's clamp(-3.3, lo=nan, hi=-0.) gave -0., JAX and NumPy NaN)
_CLAMP_LO = "(({1} > {0} || {1} != {1}) ? {1} : {0})"
# (selects, not min/max: OpenCL's long min() of a variable and an int literal is ambiguous)
_CLAMP_INT = "(({1} > {0} ? {1} : {0}) < {2} ? ({1} > {0} ? {1} : {0}) : {2})"
clamp_p.lowering = by_kind({"f": f"(({_CLAMP_LO} < {{2}} || {_CLAMP_LO} != {_CLAMP_LO}) ? "
                                  f"{_CLAMP_LO} : {{2}})",
                             "i": _CLAMP_INT, "u": _CLAMP_INT})
clamp_p.reference = lambda lo, x, hi: np.where(np.isnan(x), x, np.minimum(np.maximum(x, lo), hi)) \
    if dtypes.kind(x.dtype) == "f" else np.minimum(np.maximum(x, lo), hi)


# ---- lax-level functions (each binds one primitive) ---------------------------------------

def _fn(p):
    def f(*args):
        return p.bind(*args)
    # names that are Python keywords or builtins get a trailing underscore (netcl.lax maps
    # them back to JAX's names: lax.max, lax.bitwise_and, ...)
    f.__name__ = p.name + "_" if p.name in ("and", "or", "not", "abs", "pow", "max", "min") \
        else p.name
    f.__doc__ = f"lax.{p.name}: elementwise {p.name} (operands of equal shape and dtype)."
    return f


for _p in (neg_p, abs_p, sign_p, exp_p, exp2_p, log_p, log1p_p, expm1_p, sqrt_p, rsqrt_p,
           square_p, reciprocal_p, tanh_p, logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p,
           atan_p, sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, erf_p, erf_inv_p, floor_p, ceil_p,
           is_finite_p, not_p, add_p, sub_p, mul_p, div_p, rem_p, floor_div_p, pow_p, atan2_p,
           max_p, min_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, select_p,
           clamp_p, copy_p, cbrt_p):
    _f = _fn(_p)
    globals()[_f.__name__] = _export(_f)


@_export
def round_(x, rounding_method=0):
    """Round to integral values; rounding_method 0 = away from zero, 1 = to nearest even."""
    return round_p.bind(x, rounding_method=_int_param(rounding_method, "round",
                                                      "rounding_method"))


@_export
def integer_pow(x, y):
    """x ** y for a Python int y (exact repeated multiplication)."""
    return integer_pow_p.bind(x, y=_int_param(y, "integer_pow", "y"))


def _int_param(v, where, arg):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a Python int, got {v!r}") from None


@_export
def convert_element_type(x, new_dtype, weak_type=False):
    """Cast to `new_dtype` (float -> int truncates toward zero and saturates; NaN -> 0)."""
    new_dtype = dtypes.canonicalize(new_dtype, arg="new_dtype", where="convert_element_type")
    if not isinstance(x, ArrayBase):
        from .views import operand
        x = operand(x, "convert_element_type")
    if x.dtype == new_dtype and x.weak_type == weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=bool(weak_type))


# ---- differentiation: one partial per operand, used for both jvp and vjp --------------------
# Each partial maps (g, out, *primals) to g times the derivative, written with primitives so
# the rules differentiate again (grad of grad, hessians).

def _c(x, v):
    from .views import full_like
    return full_like(x, v)


deflinear_elementwise(neg_p, lambda g, out, x: neg(g))
# select(x >= 0, g, -g), not g * sign(x): the derivative at 0 is 1, JAX's convention
deflinear_elementwise(abs_p, lambda g, out, x: select(ge(x, _c(x, 0)), g, neg(g)))
deflinear_elementwise(exp_p, lambda g, out, x: mul(g, out))
deflinear_elementwise(exp2_p, lambda g, out, x: mul(g, mul(out, _c(x, math.log(2)))))
deflinear_elementwise(log_p, lambda g, out, x: div(g, x))
deflinear_elementwise(log1p_p, lambda g, out, x: div(g, add(x, _c(x, 1))))
deflinear_elementwise(expm1_p, lambda g, out, x: mul(g, add(out, _c(x, 1))))
deflinear_elementwise(sqrt_p, lambda g, out, x: div(g, mul(out, _c(x, 2))))
deflinear_elementwise(rsqrt_p, lambda g, out, x: mul(g, mul(div(out, x), _c(x, -0.5))))
deflinear_elementwise(square_p, lambda g, out, x: mul(g, mul(x, _c(x, 2))))
deflinear_elementwise(reciprocal_p, lambda g, out, x: neg(mul(g, mul(out, out))))
deflinear_elementwise(tanh_p, lambda g, out, x: mul(g, sub(_c(x, 1), mul(out, out))))
deflinear_elementwise(logistic_p, lambda g, out, x: mul(g, mul(out, sub(_c(x, 1), out))))
deflinear_elementwise(sin_p, lambda g, out, x: mul(g, cos(x)))
deflinear_elementwise(cos_p, lambda g, out, x: neg(mul(g, sin(x))))
deflinear_elementwise(tan_p, lambda g, out, x: mul(g, add(_c(x, 1), mul(out, out))))
deflinear_elementwise(asin_p, lambda g, out, x: mul(g, rsqrt(sub(_c(x, 1), mul(x, x)))))
deflinear_elementwise(acos_p, lambda g, out, x: neg(mul(g, rsqrt(sub(_c(x, 1), mul(x, x))))))
deflinear_elementwise(atan_p, lambda g, out, x: div(g, add(_c(x, 1), mul(x, x))))
deflinear_elementwise(sinh_p, lambda g, out, x: mul(g, cosh(x)))
deflinear_elementwise(cosh_p, lambda g, out, x: mul(g, sinh(x)))
deflinear_elementwise(asinh_p, lambda g, out, x: mul(g, rsqrt(add(mul(x, x), _c(x, 1)))))
deflinear_elementwise(acosh_p, lambda g, out, x: mul(g, rsqrt(mul(sub(x, _c(x, 1)),
                                                                  add(x, _c(x, 1))))))
deflinear_elementwise(atanh_p, lambda g, out, x: div(g, sub(_c(x, 1), mul(x, x))))
deflinear_elementwise(erf_p, lambda g, out, x: mul(g, mul(_c(x, 2 / math.sqrt(math.pi)),
                                                          exp(neg(mul(x, x))))))
# 1 / (3 cbrt(x)^2): inf at 0, as in JAX (sign(x) * |x|^(1/3) gave 0 * inf = NaN there)
deflinear_elementwise(cbrt_p, lambda g, out, x: mul(g, div(_c(x, 1 / 3), mul(out, out))))
deflinear_elementwise(erf_inv_p, lambda g, out, x: mul(g, mul(_c(x, math.sqrt(math.pi) / 2),
                                                              exp(mul(out, out)))))
deflinear_elementwise(integer_pow_p, lambda g, out, x, y: (
    mul(g, _c(x, 0)) if y == 0 else
    mul(g, mul(_c(x, y), integer_pow(x, y - 1) if y != 1 else _c(x, 1)))))
deflinear_elementwise(copy_p, lambda g, out, x: g)
deflinear_elementwise(add_p, lambda g, out, x, y: g, lambda g, out, x, y: g)
deflinear_elementwise(sub_p, lambda g, out, x, y: g, lambda g, out, x, y: neg(g))
deflinear_elementwise(mul_p, lambda g, out, x, y: mul(g, y), lambda g, out, x, y: mul(g, x))
deflinear_elementwise(div_p, lambda g, out, x, y: div(g, y),
                      lambda g, out, x, y: neg(mul(g, div(out, y))))


def _pow_dx(g, out, x, y):
    # y * x^(y-1), with 0 where y == 0 (so x = 0, y = 0 has gradient 0 as in JAX)
    d = mul(y, pow_(x, sub(y, _c(y, 1))))
    return mul(g, select(eq(y, _c(y, 0)), _c(y, 0), d))


def _pow_dy(g, out, x, y):
    # out * log(x), with 0 where x == 0 (JAX's convention)
    zero = _c(x, 0)
    safe_x = select(eq(x, zero), _c(x, 1), x)
    return mul(g, select(eq(x, zero), zero, mul(out, log(safe_x))))


deflinear_elementwise(pow_p, _pow_dx, _pow_dy)


def _atan2_dx(g, out, x, y):
    return mul(g, div(y, add(mul(x, x), mul(y, y))))


def _atan2_dy(g, out, x, y):
    return neg(mul(g, div(x, add(mul(x, x), mul(y, y)))))


deflinear_elementwise(atan2_p, _atan2_dx, _atan2_dy)


def _rem_dy(g, out, x, y):
    q = div(x, y)
    return neg(mul(g, mul(sign(q), floor(abs_(q)))))


deflinear_elementwise(rem_p, lambda g, out, x, y: g, _rem_dy)


def _balanced(x, out, other):
    """1 where x alone attains the max/min, 0.5 on ties, 0 elsewhere (JAX's convention)."""
    one, half, zero = _c(x, 1), _c(x, 0.5), _c(x, 0)
    return select(eq(x, out), select(eq(other, out), half, one), zero)


deflinear_elementwise(max_p, lambda g, out, x, y: mul(g, _balanced(x, out, y)),
                      lambda g, out, x, y: mul(g, _balanced(y, out, x)))
deflinear_elementwise(min_p, lambda g, out, x, y: mul(g, _balanced(x, out, y)),
                      lambda g, out, x, y: mul(g, _balanced(y, out, x)))
deflinear_elementwise(select_p, None, lambda g, out, p, a, b: select(p, g, _c(g, 0)),
                      lambda g, out, p, a, b: select(p, _c(g, 0), g))
deflinear_elementwise(
    clamp_p,
    lambda g, out, lo, x, hi: select(gt(lo, x), g, _c(g, 0)),
    lambda g, out, lo, x, hi: select(and_(gt(x, lo), lt(x, hi)), g, _c(g, 0)),
    lambda g, out, lo, x, hi: select(lt(hi, x), g, _c(g, 0)))

# Piecewise-constant or integer-valued ops: zero derivative everywhere.
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p, floor_div_p, eq_p, ne_p, lt_p,
           le_p, gt_p, ge_p, and_p, or_p, xor_p):
    _n = 2 if _p in (floor_div_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p) else 1
    defjvp(_p, *([None] * _n))
    defvjp(_p, *([None] * _n))


def _convert_jvp(primals, tangents, new_dtype, weak_type=False):
    from ..core.ad_util import Zero, is_zero
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if is_zero(t) or not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(x.dtype):
        return out, Zero(ShapedArray(out.shape, out.dtype, out.weak_type))
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_vjp(ct, out, x, new_dtype, weak_type=False):
    if not dtypes.is_inexact(x.dtype) or not dtypes.is_inexact(new_dtype):
        return (None,)
    return (convert_element_type(ct, x.dtype, x.weak_type),)


convert_element_type_p.jvp = _convert_jvp
convert_element_type_p.vjp = _convert_vjp


# ---- batching: elementwise ops map over any batch axis ------------------------------------

def _batch_elementwise(prim):
    def rule(args, dims, **params):
        from .views import bdim_at_front
        batched = [(a, d) for a, d in zip(args, dims) if d is not None]
        d0 = batched[0][1]
        if all(d == d0 for _, d in batched) and len(batched) == len(args):
            return prim.bind(*args, **params), d0
        size = batched[0][0].shape[d0]
        return prim.bind(*[bdim_at_front(a, d, size) for a, d in zip(args, dims)], **params), 0
    return rule


for _p in list(globals().values()):
    if isinstance(_p, Primitive) and _p.fusion == "elementwise":
        _p.batch = _batch_elementwise(_p)

register_copy_primitive(copy_p)
