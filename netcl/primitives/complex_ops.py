"""Complex numbers in the elementwise table: the C helpers, the complex rows of the
elementwise primitives, and the primitives only complex numbers have (real, imag, conj,
complex), each with all its rules.

A complex64 element is OpenCL's float2 (x: real part, y: imaginary part; NumPy's layout in
memory), complex128 double2. Addition, subtraction, negation, selects and equality work on
those vectors directly; everything else calls a `netcl_c<op>` helper (float2) or its
`netcl_z<op>` twin (double2), written once below for both. The formulas are the usual
ones (Smith's division, Kahan's square root and tanh) and keep float32 accuracy for finite
operands; infinities and NaNs inside a complex number follow those formulas, not C99's
Annex G special cases.

Derivatives follow JAX's convention: a VJP is the transpose of the JVP's linear map (no
conjugation), so holomorphic functions reuse the real rules unchanged (`exp`'s `g * out`)
and `grad` of a real function of a complex input gives conj(df/dz) (`grad(abs)(z)` is
`conj(z) / |z|`, as in JAX).

>>> z = lax.complex(jnp.ones(2), jnp.arange(2.0)); lax.real(z * z)     # [1, 0]
"""
from string import Template

import numpy as np

from ..core import dtypes
from ..core.ad_util import Zero, deflinear_elementwise, defjvp, defvjp, is_zero
from ..core.codegen import HELPERS
from ..core.tracing import ShapedArray
from . import elementwise as ew
from .elementwise import _batch_elementwise, _elementwise_prim

__all__ = ["real", "imag", "conj", "complex", "lex_compare", "by_parts", "bilinear_by_parts",
           "product_by_halving"]

# ---- the C helpers, written once for float2 ('c') and double2 ('z') ------------------------

_HELPER_SOURCE = {
    "mul": "inline $C netcl_${P}mul($C a, $C b) { return ($C)(a.x * b.x - a.y * b.y, "
           "a.x * b.y + a.y * b.x); }\n",
    # Smith's algorithm: no overflow in |b|^2 for large divisors
    "div": """inline $C netcl_${P}div($C a, $C b) {
  if (fabs(b.x) >= fabs(b.y)) {
    if (b.x == 0) return ($C)(a.x / b.x, a.y / b.x);
    $R r = b.y / b.x, d = b.x + b.y * r;
    return ($C)((a.x + a.y * r) / d, (a.y - a.x * r) / d); }
  $R r = b.x / b.y, d = b.x * r + b.y;
  return ($C)((a.x * r + a.y) / d, (a.y * r - a.x) / d); }
""",
    "abs": "inline $R netcl_${P}abs($C a) { return hypot(a.x, a.y); }\n",
    # exp(x) exactly where the imaginary part is 0 (cos 0 * exp(x) would be too, but
    # exp(inf) * sin(0) is NaN)
    "exp": """inline $C netcl_${P}exp($C a) {
  const $R e = exp(a.x);
  return a.y == 0 ? ($C)(e, a.y) : ($C)(e * cos(a.y), e * sin(a.y)); }
""",
    "expm1": """inline $C netcl_${P}expm1($C a) {
  const $R s = sin(($R)0.5 * a.y);   /* cos y - 1 = -2 sin^2(y/2), exact near 0 */
  return ($C)(expm1(a.x) * cos(a.y) - ($R)2 * s * s, exp(a.x) * sin(a.y)); }
""",
    "log": """inline $C netcl_${P}log($C a) {
  return ($C)(log(hypot(a.x, a.y)), atan2(a.y, a.x)); }
""",
    # |1 + z|^2 - 1 = x (2 + x) + y^2 keeps log1p's accuracy where |1 + z| is near 1; near
    # z = -1 that sum cancels, and log |1 + z| (1 + x exact there) is the accurate form
    "log1p": """inline $C netcl_${P}log1p($C a) {
  const $R u = a.x * (($R)2 + a.x) + a.y * a.y;
  const $R re = fabs(u) < ($R)0.5 ? ($R)0.5 * log1p(u) : log(hypot(($R)1 + a.x, a.y));
  return ($C)(re, atan2(a.y, ($R)1 + a.x)); }
""",
    # Kahan: the root of the larger part first, no cancellation
    "sqrt": """inline $C netcl_${P}sqrt($C a) {
  if (a.x == 0 && a.y == 0) return ($C)(($R)0, a.y);
  const $R t = sqrt((fabs(a.x) + hypot(a.x, a.y)) * ($R)0.5);
  return a.x >= 0 ? ($C)(t, a.y / (($R)2 * t)) : ($C)(fabs(a.y) / (($R)2 * t), copysign(t, a.y)); }
""",
    "rsqrt": """inline $C netcl_${P}rsqrt($C a) {
  return netcl_${P}div(($C)(($R)1, ($R)0), netcl_${P}sqrt(a)); }
""",
    "reciprocal": """inline $C netcl_${P}reciprocal($C a) {
  return netcl_${P}div(($C)(($R)1, ($R)0), a); }
""",
    "sign": """inline $C netcl_${P}sign($C a) {
  const $R r = hypot(a.x, a.y);
  return r == 0 ? ($C)(($R)0, ($R)0) : ($C)(a.x / r, a.y / r); }
""",
    "sin": """inline $C netcl_${P}sin($C a) {
  return ($C)(sin(a.x) * cosh(a.y), cos(a.x) * sinh(a.y)); }
""",
    "cos": """inline $C netcl_${P}cos($C a) {
  return ($C)(cos(a.x) * cosh(a.y), -sin(a.x) * sinh(a.y)); }
""",
    "sinh": """inline $C netcl_${P}sinh($C a) {
  return ($C)(sinh(a.x) * cos(a.y), cosh(a.x) * sin(a.y)); }
""",
    "cosh": """inline $C netcl_${P}cosh($C a) {
  return ($C)(cosh(a.x) * cos(a.y), sinh(a.x) * sin(a.y)); }
""",
    # tanh(x + iy) = (t + i s) / (1 + i t s) with t = tanh x, s = tan y (Kahan); 1 - t^2 as
    # 1 / cosh^2 x, which keeps the imaginary part's accuracy for large |x|
    "tanh": """inline $C netcl_${P}tanh($C a) {
  const $R t = tanh(a.x), s = tan(a.y), c = cosh(a.x), d = ($R)1 + t * t * s * s;
  return ($C)(t * (($R)1 + s * s) / d, s / (c * c * d)); }
""",
    "tan": """inline $C netcl_${P}tan($C a) {   /* tan z = -i tanh(i z) */
  const $C h = netcl_${P}tanh(($C)(-a.y, a.x));
  return ($C)(h.y, -h.x); }
""",
    # 0^y is 1 for y == 0 and 0 for a real y > 0, NaN for other y (as JAX); exp(y log x)
    # elsewhere
    "pow": """inline $C netcl_${P}pow($C a, $C b) {
  if (a.x == 0 && a.y == 0) {
    if (b.x == 0 && b.y == 0) return ($C)(($R)1, ($R)0);
    return b.x > 0 && b.y == 0 ? ($C)(($R)0, ($R)0) : ($C)(NAN, NAN); }
  return netcl_${P}exp(netcl_${P}mul(b, netcl_${P}log(a))); }
""",
    # The inverse functions by their logarithms (principal branches), each in a form without
    # cancellation: asin z = -i log(i z + s), s = sqrt(1 - z^2), or i log(s - i z) (asin is
    # odd) whichever argument is the larger, and for |z| < 1/2 -i log1p(i z - z^2 / (1 + s))
    # (s - 1 without the cancellation); acos z = -i log(z + i s), or pi + i log(i s - z);
    # atan z = i/2 (log1p(-i z) - log1p(i z)), atanh z = (log1p(z) - log1p(-z)) / 2,
    # asinh z = -i asin(i z), acosh z = log(z + sqrt(z + 1) sqrt(z - 1)) (Kahan)
    "asin": """inline $C netcl_${P}asin($C a) {
  const $C z2 = netcl_${P}mul(a, a);    /* 1 - z^2 as (1 - z)(1 + z): exact near z = 1 */
  const $C s = netcl_${P}sqrt(netcl_${P}mul(($C)(($R)1 - a.x, -a.y), ($C)(($R)1 + a.x, a.y)));
  const $C iz = ($C)(-a.y, a.x);
  if (hypot(a.x, a.y) < ($R)0.5) {
    const $C l = netcl_${P}log1p(iz - netcl_${P}div(z2, ($C)(($R)1 + s.x, s.y)));
    return ($C)(l.y, -l.x); }
  const $C up = s + iz, down = s - iz;
  if (hypot(up.x, up.y) >= hypot(down.x, down.y)) {
    const $C l = netcl_${P}log(up); return ($C)(l.y, -l.x); }
  const $C l = netcl_${P}log(down); return ($C)(-l.y, l.x); }
""",
    "acos": """inline $C netcl_${P}acos($C a) {
  /* 1 - z^2 as (1 - z)(1 + z): exact near z = 1 */
  const $C s = netcl_${P}sqrt(netcl_${P}mul(($C)(($R)1 - a.x, -a.y), ($C)(($R)1 + a.x, a.y)));
  const $C is = ($C)(-s.y, s.x);
  const $C up = a + is, down = is - a;
  if (hypot(up.x, up.y) >= hypot(down.x, down.y)) {
    const $C l = netcl_${P}log(up); return ($C)(l.y, -l.x); }
  const $C l = netcl_${P}log(down);
  return ($C)(($R)M_PI - l.y, l.x); }
""",
    "atan": """inline $C netcl_${P}atan($C a) {
  const $C d = netcl_${P}log1p(($C)(a.y, -a.x)) - netcl_${P}log1p(($C)(-a.y, a.x));
  return ($C)(-($R)0.5 * d.y, ($R)0.5 * d.x); }
""",
    "asinh": """inline $C netcl_${P}asinh($C a) {
  const $C r = netcl_${P}asin(($C)(-a.y, a.x));
  return ($C)(r.y, -r.x); }
""",
    "acosh": """inline $C netcl_${P}acosh($C a) {
  const $C p = netcl_${P}sqrt(($C)(a.x + ($R)1, a.y)), m = netcl_${P}sqrt(($C)(a.x - ($R)1, a.y));
  return netcl_${P}log(a + netcl_${P}mul(p, m)); }
""",
    "atanh": """inline $C netcl_${P}atanh($C a) {
  return ($R)0.5 * (netcl_${P}log1p(a) - netcl_${P}log1p(-a)); }
""",
    "ipow": """inline $C netcl_${P}ipow($C x, int y) {
  int e = y < 0 ? -y : y; $C r = ($C)(($R)1, ($R)0);
  while (e) { if (e & 1) r = netcl_${P}mul(r, x); x = netcl_${P}mul(x, x); e >>= 1; }
  return y < 0 ? netcl_${P}reciprocal(r) : r; }
""",
}

# registration order is dependency order (helpers_for emits callees first)
for _prefix, _c2, _r in (("c", "float2", "float"), ("z", "double2", "double")):
    for _name, _src in _HELPER_SOURCE.items():
        HELPERS[_prefix + _name] = Template(_src).substitute(P=_prefix, C=_c2, R=_r)


def _call(op, nargs=1):
    """The lowering calling helper netcl_c<op> / netcl_z<op> on the operands."""
    args = ", ".join("{%d}" % i for i in range(nargs))
    return {"c": f"netcl_c{op}({args})", "c128": f"netcl_z{op}({args})"}


# ---- complex rows of the existing elementwise primitives -------------------------------------

def _with_complex(p, rows, reference=None):
    """Give elementwise primitive `p` complex operands: `rows` are its templates for
    complex64 ('c') and complex128 ('c128') (or a lowering function of the dtypes and
    params); `reference` its NumPy reference for complex operands where the real one would
    lose the imaginary part (a complex result is cast back to the operands' precision)."""
    real_lowering, real_reference = p.lowering, p.reference

    def lowering(in_dtypes, out_dtype, **params):
        if dtypes.is_complex(in_dtypes[0]):
            return rows(in_dtypes, out_dtype, **params) if callable(rows) \
                else rows[ew.template_key(in_dtypes[0])]
        return real_lowering(in_dtypes, out_dtype, **params) if callable(real_lowering) \
            else real_lowering

    def ref(*xs, **params):
        if reference is not None and dtypes.is_complex(xs[0].dtype):
            with np.errstate(all="ignore"):
                r = np.asarray(reference(*xs, **params))
            return r.astype(xs[0].dtype) if r.dtype.kind == "c" else r
        return real_reference(*xs, **params)

    p.lowering, p.reference = lowering, ref
    p.kinds += "c"


_SAME = {"c": "{0}", "c128": "{0}"}
_with_complex(ew.neg_p, {"c": "(-{0})", "c128": "(-{0})"})
_with_complex(ew.add_p, {"c": "({0} + {1})", "c128": "({0} + {1})"})
_with_complex(ew.sub_p, {"c": "({0} - {1})", "c128": "({0} - {1})"})
_with_complex(ew.mul_p, _call("mul", 2))
_with_complex(ew.div_p, _call("div", 2), np.divide)
def _pow_reference(x, y):
    """NumPy's power in complex128 (a complex64 one rounds exp(y log x)), except 0^y for a
    non-real y: NaN, as JAX (NumPy gives 0 where Re y > 0)."""
    r = np.power(x.astype(np.complex128), y.astype(np.complex128))
    return np.where((x == 0) & (y.imag != 0), np.complex128(complex(np.nan, np.nan)), r)


_with_complex(ew.pow_p, _call("pow", 2), _pow_reference)
_with_complex(ew.eq_p, {"c": "({0}.x == {1}.x && {0}.y == {1}.y)",
                        "c128": "({0}.x == {1}.x && {0}.y == {1}.y)"})
_with_complex(ew.ne_p, {"c": "({0}.x != {1}.x || {0}.y != {1}.y)",
                        "c128": "({0}.x != {1}.x || {0}.y != {1}.y)"})
_with_complex(ew.copy_p, _SAME)
def _in_long_double(fn):
    """A reference computed in long double: NumPy's complex expm1 and log1p are exp(z) - 1
    and log(1 + z), which cancel for small z (the NumPy fallback runs these)."""
    return lambda x: fn(x.astype(np.clongdouble))


for _p, _np_fn in ((ew.exp_p, np.exp), (ew.expm1_p, _in_long_double(np.expm1)),
                   (ew.log_p, np.log), (ew.log1p_p, _in_long_double(np.log1p)),
                   (ew.sqrt_p, np.sqrt),
                   (ew.rsqrt_p, lambda x: 1 / np.sqrt(x)), (ew.reciprocal_p, np.reciprocal),
                   (ew.sin_p, np.sin), (ew.cos_p, np.cos), (ew.tan_p, np.tan),
                   (ew.sinh_p, np.sinh), (ew.cosh_p, np.cosh), (ew.tanh_p, np.tanh),
                   (ew.asin_p, np.arcsin), (ew.acos_p, np.arccos), (ew.atan_p, np.arctan),
                   (ew.asinh_p, np.arcsinh), (ew.acosh_p, np.arccosh),
                   (ew.atanh_p, np.arctanh),
                   (ew.sign_p, lambda x: np.where(x == 0, 0, x / np.where(x == 0, 1, abs(x))))):
    _with_complex(_p, _call(_p.name), _np_fn)
_with_complex(ew.exp2_p, {"c": "netcl_cexp({0} * 0.69314718055994531f)",
                          "c128": "netcl_zexp({0} * 0.69314718055994531)"}, np.exp2)
_with_complex(ew.square_p, {"c": "netcl_cmul({0}, {0})", "c128": "netcl_zmul({0}, {0})"},
              np.square)
_with_complex(ew.is_finite_p, {"c": "(fabs({0}.x) < INFINITY && fabs({0}.y) < INFINITY)",
                               "c128": "(fabs({0}.x) < INFINITY && fabs({0}.y) < INFINITY)"},
              np.isfinite)
_with_complex(ew.integer_pow_p, lambda in_dtypes, out_dtype, y: (
    "netcl_zipow({0}, %d)" if in_dtypes[0] == dtypes.complex128 else "netcl_cipow({0}, %d)")
    % y, lambda x, y: np.power(x, y) if y >= 0 else 1 / np.power(x, -y))

# abs: a complex operand gives its real dtype
_with_complex(ew.abs_p, _call("abs"), np.abs)
_real_abs_abstract = ew.abs_p.abstract_eval


def _abs_abstract(*args, **params):
    out = _real_abs_abstract(*args, **params)      # (checks the operand count and kinds)
    if dtypes.is_complex(args[0].dtype):
        return ShapedArray(out.shape, dtypes.COMPLEX_PART[args[0].dtype], out.weak_type)
    return out


ew.abs_p.abstract_eval = _abs_abstract


# ---- order: JAX's lexicographic order of complex numbers ----------------------------------------
# JAX orders complex numbers by real part, then imaginary part, with IEEE comparisons of the
# parts (its _minmax_hlo and jnp's _complex_comparison): x > y is (x.re == y.re ? x.im > y.im :
# x.re > y.re). A NaN in the deciding part compares false, so lax.max(x, y) picks y and
# NaN does not propagate: max(nan+0j, 1+0j) is 1+0j, max(1+0j, nan+0j) is nan+0j.

_LEX = "(({0}.x == {1}.x) ? ({0}.y %s {1}.y) : ({0}.x %s {1}.x))"
_COMPARE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
_C_OPS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _lex_compare_ref(x, y, direction):
    """x `direction` y in JAX's lexicographic order (NumPy's comparisons of complex numbers
    are lexicographic too, but order NaNs)."""
    op = _COMPARE[direction]
    with np.errstate(invalid="ignore"):
        return np.where(x.real == y.real, op(x.imag, y.imag), op(x.real, y.real))


def _lex_pick(direction):
    """max (direction 'gt') / min ('lt') rows: x where x compares so with y, else y."""
    t = "(%s ? {0} : {1})" % (_LEX % ((_C_OPS[direction],) * 2))
    return {"c": t, "c128": t}, \
        lambda x, y: np.where(_lex_compare_ref(x, y, direction), x, y)


# (their derivative rules are the real ones: the cotangent goes to the operand equal to the
# result, half each on ties, as JAX's _balanced_eq)
_with_complex(ew.max_p, *_lex_pick("gt"))
_with_complex(ew.min_p, *_lex_pick("lt"))


# jnp.less & co. of complex numbers (lax.lt refuses them, as JAX's): x > y is y < x, with
# NaNs too (every comparison with a NaN is false)
def _lex_compare_prim(direction):
    p = _elementwise_prim(f"lex_{direction}", 2, "c", out_dtype=dtypes.bool_)
    p.vector_safe = False
    p.lowering = _LEX % ((_C_OPS[direction],) * 2)
    p.reference = lambda x, y: _lex_compare_ref(x, y, direction)
    defjvp(p, None, None)
    defvjp(p, None, None)
    return p


lex_lt_p = _lex_compare_prim("lt")
lex_le_p = _lex_compare_prim("le")


def lex_compare(x, y, direction):
    """x < y ('lt'), <= ('le'), > ('gt') or >= ('ge') for complex x and y of one shape and
    dtype, in JAX's lexicographic order (a NaN in the deciding part compares false).

    >>> lex_compare(jnp.asarray([1 + 2j]), jnp.asarray([1 + 3j]), "lt")    # [True]
    """
    if direction not in _C_OPS:
        raise ValueError(f"lex_compare: direction must be one of {sorted(_C_OPS)}, "
                         f"got {direction!r}")
    if direction in ("gt", "ge"):
        x, y = y, x
    return (lex_lt_p if direction in ("lt", "gt") else lex_le_p).bind(x, y)


# ---- conversions to, from and between complex dtypes ------------------------------------------

_real_convert_lowering = ew.convert_element_type_p.lowering
_real_convert_reference = ew.convert_element_type_p.reference


def _convert_lowering(in_dtypes, out_dtype, new_dtype, weak_type=False):
    src = in_dtypes[0]
    if dtypes.is_complex(out_dtype):
        if dtypes.is_complex(src):
            return f"convert_{dtypes.COMPUTE_CTYPE[out_dtype]}({{0}})"
        part = dtypes.COMPUTE_CTYPE[dtypes.COMPLEX_PART[out_dtype]]
        return f"(({{U}})(({part})({{0}}), ({part})0))"
    if dtypes.is_complex(src):      # the real part, as JAX's convert_element_type
        if out_dtype == dtypes.bool_:
            return "({0}.x != 0 || {0}.y != 0)"
        return _real_convert_lowering([dtypes.COMPLEX_PART[src]], out_dtype,
                                      new_dtype=new_dtype, weak_type=weak_type) \
            .replace("{0}", "{0}.x")
    return _real_convert_lowering(in_dtypes, out_dtype, new_dtype=new_dtype,
                                  weak_type=weak_type)


def _convert_reference(x, new_dtype, weak_type=False):
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        if new_dtype == dtypes.bool_:
            return x != 0
        return _real_convert_reference(np.array(x.real), new_dtype)
    if dtypes.is_complex(new_dtype):
        return x.astype(dtypes.compute_dtype(x.dtype)).astype(new_dtype)
    return _real_convert_reference(x, new_dtype, weak_type)


ew.convert_element_type_p.lowering = _convert_lowering
ew.convert_element_type_p.reference = _convert_reference


# ---- the complex-only primitives --------------------------------------------------------------

def _part_prim(name, template, reference):
    """real / imag: a complex operand's part, in its float dtype."""
    p = _elementwise_prim(name, 1, "c")
    p.vector_safe = False
    shape_rule = p.abstract_eval

    def abstract_eval(*args):
        checked = shape_rule(*args)      # (raises for a non-complex operand, or several)
        return ShapedArray(checked.shape, dtypes.COMPLEX_PART[args[0].dtype],
                           checked.weak_type)
    p.abstract_eval = abstract_eval
    p.lowering = template
    p.reference = reference
    return p


real_p = _part_prim("real", "({0}.x)", lambda x: np.array(x.real))
imag_p = _part_prim("imag", "({0}.y)", lambda x: np.array(x.imag))
conj_p = _elementwise_prim("conj", 1, "c")
conj_p.vector_safe = False
conj_p.lowering = "(({T})({0}.x, -{0}.y))"
conj_p.reference = np.conjugate

complex_p = _elementwise_prim("complex", 2, "f")
complex_p.vector_safe = False
_complex_shape_rule = complex_p.abstract_eval


def _complex_abstract(*args):
    out = _complex_shape_rule(*args)     # (checks the operand count, shapes and kinds)
    if args[0].dtype not in dtypes.COMPLEX_OF:
        raise TypeError(f"complex: operands must be float32 or float64, got {args[0].dtype}")
    return ShapedArray(out.shape, dtypes.COMPLEX_OF[args[0].dtype], out.weak_type)


complex_p.abstract_eval = _complex_abstract
complex_p.lowering = "(({U})({0}, {1}))"


def _complex_reference(re, im):
    out = np.empty(re.shape, dtypes.COMPLEX_OF[re.dtype])
    out.real, out.imag = re, im      # (re + 1j * im would turn an infinite im into NaNs)
    return out


complex_p.reference = _complex_reference

for _p in (real_p, imag_p, conj_p, complex_p, lex_lt_p, lex_le_p):
    _p.batch = _batch_elementwise(_p)


def real(x):
    """lax.real: the real part of a complex array, in its float dtype.

    >>> lax.real(lax.complex(jnp.ones(2), jnp.zeros(2)))     # [1, 1]
    """
    return real_p.bind(x)


def imag(x):
    """lax.imag: the imaginary part of a complex array, in its float dtype.

    >>> lax.imag(lax.complex(jnp.ones(2), jnp.full(2, 3.0)))   # [3, 3]
    """
    return imag_p.bind(x)


def conj(x):
    """lax.conj: the complex conjugate of a complex array.

    >>> lax.conj(lax.complex(jnp.ones(1), jnp.ones(1)))       # [1-1j]
    """
    return conj_p.bind(x)


def complex(re, im):  # noqa: A001 (lax's name)
    """lax.complex: re + i im for float32 (or float64) arrays of equal shape and dtype.

    >>> lax.complex(jnp.ones(2), jnp.arange(2.0))             # [1+0j, 1+1j]
    """
    return complex_p.bind(re, im)


def by_parts(linear, x):
    """A real-linear map `linear` (a sum, a cumulative sum) applied to complex `x` part by
    part: the reductions' kernels run on real numbers only.

    >>> by_parts(lambda p: reduce_sum(p, (0,)), z)      # the complex sum of z
    """
    return complex(linear(real(x)), linear(imag(x)))


def bilinear_by_parts(product, a, b):
    """A real-bilinear `product` (dot_general) of complex `a` and `b` from four real
    products: (ar + i ai)(br + i bi) = ar br - ai bi + i (ar bi + ai br). Each runs on the
    tuned real kernels; Gauss's three-product form would save one at some accuracy.

    >>> bilinear_by_parts(lambda x, y: x @ y, za, zb)    # the complex matrix product
    """
    ar, ai, br, bi = real(a), imag(a), real(b), imag(b)
    return complex(ew.sub(product(ar, br), product(ai, bi)),
                   ew.add(product(ar, bi), product(ai, br)))


def product_by_halving(x, axes):
    """The product of complex `x` over `axes`: the reduced axes moved last and flattened, then
    the row's halves multiplied elementwise until one element is left (log2 n elementwise
    kernels; the reduction kernels take real numbers only). Differentiable through mul.

    >>> product_by_halving(z, (0,))                      # the complex product of z
    """
    from .views import full, reshape, slice as slice_, transpose
    from .structural import concatenate
    kept = [d for d in range(x.ndim) if d not in axes]
    n = 1
    for d in axes:
        n *= x.shape[d]
    rows = tuple(x.shape[d] for d in kept)
    y = reshape(transpose(x, tuple(kept) + tuple(axes)), rows + (n,))
    if n == 0:
        return full(rows, 1, x.dtype)
    while n > 1:
        if n % 2:
            y = concatenate([y, full(rows + (1,), 1, x.dtype)], len(rows))
            n += 1
        half = n // 2
        lo = slice_(y, (0,) * len(rows) + (0,), rows + (half,))
        hi = slice_(y, (0,) * len(rows) + (half,), rows + (n,))
        y, n = ew.mul(lo, hi), half
    return reshape(y, rows)


# ---- derivatives (JAX's convention: the transpose of the JVP's linear map) ---------------------

def _zeros_like(x):
    from .views import full_like
    return full_like(x, 0)


# real and imag are linear: their transposes embed a real cotangent in the complex plane
defjvp(real_p, lambda t, out, x: real(t))
defvjp(real_p, lambda ct, out, x: complex(ct, _zeros_like(ct)))
defjvp(imag_p, lambda t, out, x: imag(t))
defvjp(imag_p, lambda ct, out, x: complex(_zeros_like(ct), ew.neg(ct)))
deflinear_elementwise(conj_p, lambda g, out, x: conj(g))
defjvp(complex_p, lambda t, out, re, im: complex(t, _zeros_like(t)),
          lambda t, out, re, im: complex(_zeros_like(t), t))
defvjp(complex_p, lambda ct, out, re, im: real(ct),
          lambda ct, out, re, im: ew.neg(imag(ct)))


def _safe_abs(out):
    """|x| with 1 where it is 0 (there conj(x) is 0 too, so the derivative is 0, as JAX)."""
    from .views import full_like
    return ew.select(ew.eq(out, full_like(out, 0)), full_like(out, 1), out)


_real_abs_jvp, _real_abs_vjp = ew.abs_p.jvp, ew.abs_p.vjp


def _abs_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    if not dtypes.is_complex(x.dtype):
        return _real_abs_jvp(primals, tangents, **params)
    out = ew.abs_p.bind(x)
    if is_zero(t):
        return out, Zero(ShapedArray(out.shape, out.dtype, out.weak_type))
    return out, ew.div(real(ew.mul(conj(x), t)), _safe_abs(out))


def _abs_vjp(ct, out, x, **params):
    if not dtypes.is_complex(x.dtype):
        return _real_abs_vjp(ct, out, x, **params)
    scaled = ew.div(ct, _safe_abs(out))
    return (ew.mul(complex(scaled, _zeros_like(scaled)), conj(x)),)


ew.abs_p.jvp, ew.abs_p.vjp = _abs_jvp, _abs_vjp
