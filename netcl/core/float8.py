"""JAX's 8-bit floats (ml_dtypes' float8_*) and its MX floats (float4_e2m1fn, float6_e2m3fn,
float6_e3m2fn) as storage dtypes: the OpenCL C that converts them.

Each such array is held as one uchar per element (as ml_dtypes' NumPy arrays: a 4- or 6-bit
code in the low bits of its byte); kernels load it into a float register
(exact: every float8 value is a float32) and round the float32 result when they store it,
to nearest even, with the format's own overflow, NaN and infinity rules, bit for bit as
ml_dtypes converts (and so as JAX does; every float32 bit pattern was checked). Per format
`t` (the tag of its dtype's name, e.g. ``e4m3fn``) the C functions are

    float  netcl_f8<t>_load(uchar)            the value, exactly (NaN: a quiet NaN, sign kept)
    uchar  netcl_f8<t>_store(float)           rounded to nearest even
    float  netcl_f8<t>_round[N](float[N])     a store and a load in registers (fused kernels
                                              round each float8 result as eager stores do)
    floatN netcl_f8<t>_vload<N>(p)            N = 2, 4, 8 consecutive values at p
    void   netcl_f8<t>_vstore<N>(floatN, p)   and stored

The vector forms are the scalar code on vectors (selects, no branches), not N calls: CPU
reduction kernels spell a vector load out several times, and N inlined scalar conversions
each took PoCL seconds to compile. The code is integer arithmetic only, so no device's
rounding mode or flushing of subnormals changes it. `preamble(source)` is the definitions
a generated source uses (kernels.py adds it).

The formats (bits: sign, exponent E, mantissa M; bias B):

    ieee    e5m2, e4m3, e3m4: IEEE-like; the top exponent holds inf and NaN, overflow gives
            inf.
    fn      e4m3fn: no infinities; S.1111.111 is NaN, and overflow and inf give NaN.
    fnuz    e4m3fnuz, e5m2fnuz, e4m3b11fnuz: no infinities and no -0; 0x80 is the only NaN;
            overflow and inf give NaN, a negative result rounding to zero gives +0.
    e8m0    e8m0fnu: unsigned powers of two 2^(e-127) (no zero: 0 and negatives are NaN),
            0xff is NaN; ties round up, as ml_dtypes does.
    mx      float4_e2m1fn, float6_e2m3fn, float6_e3m2fn (OCP MX element types, 1 + E + M =
            4 or 6 bits in the low bits of a byte): no infinities and no NaN. As ml_dtypes
            converts: overflow and +-inf saturate to +-max, and a NaN becomes a zero of the
            opposite sign (+NaN -> -0, -NaN -> +0; XLA on CPU gives -0 for both). A byte
            with any bit above the code's sign bit set loads as a negative of its low bits'
            magnitude, as ml_dtypes reads it.

>>> tag(FORMATS[np.dtype(ml_dtypes.float8_e4m3fn)])       # 'e4m3fn'
"""
from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class Format:
    """One float8 format: its name in ml_dtypes / jax.numpy, field widths, bias and rules."""
    name: str
    exp_bits: int
    man_bits: int
    bias: int
    rules: str          # "ieee", "fn", "fnuz", "e8m0" or "mx" (see the module docstring)

    @property
    def sign_bit(self):
        """The code's sign bit: 0x80 in the 8-bit formats, 0x8 in float4, 0x20 in float6
        (e8m0fnu, unsigned, has none: its code is all exponent)."""
        return 1 << (self.exp_bits + self.man_bits)


_ALL = (Format("float8_e4m3fn", 4, 3, 7, "fn"), Format("float8_e5m2", 5, 2, 15, "ieee"),
        Format("float8_e4m3fnuz", 4, 3, 8, "fnuz"), Format("float8_e5m2fnuz", 5, 2, 16, "fnuz"),
        Format("float8_e4m3b11fnuz", 4, 3, 11, "fnuz"), Format("float8_e3m4", 3, 4, 3, "ieee"),
        Format("float8_e4m3", 4, 3, 7, "ieee"), Format("float8_e8m0fnu", 8, 0, 127, "e8m0"),
        Format("float4_e2m1fn", 2, 1, 1, "mx"), Format("float6_e2m3fn", 2, 3, 1, "mx"),
        Format("float6_e3m2fn", 3, 2, 3, "mx"))
# dtype -> Format, in the order above (ml_dtypes before 0.5 lacks e3m4, e4m3, e8m0fnu and
# the MX formats)
FORMATS = {np.dtype(getattr(ml_dtypes, f.name)): f for f in _ALL if hasattr(ml_dtypes, f.name)}
WIDTHS = (2, 4, 8)      # the vector forms (no 16-wide one: PoCL on AVX-512 hosts cannot call it)


def tag(fmt):
    """The part of the C function names that says which format: 'e4m3fn' for float8_e4m3fn,
    'e2m1fn' for float4_e2m1fn (the C names keep the prefix netcl_f8 for every format)."""
    return fmt.name.split("_", 1)[1]


def _fn(dtype, what):
    return f"netcl_f8{tag(FORMATS[dtype])}_{what}"


def load(dtype, value):
    """C expression: the float that uchar `value` of float8 (or MX float) `dtype` holds."""
    return f"{_fn(dtype, 'load')}({value})"


def store(dtype, value):
    """C expression: float `value` rounded to float8 (or MX float) `dtype`, as the uchar to
    store."""
    return f"{_fn(dtype, 'store')}({value})"


def round_to(dtype, width, expr):
    """C expression: float (vector of `width`) `expr` rounded to float8 `dtype`, widened back."""
    return f"{_fn(dtype, 'round')}{width if width > 1 else ''}({expr})"


def vload(dtype, width, ptr):
    """C expression: the float{width} of the `width` values at `ptr` (None: no such form)."""
    return f"{_fn(dtype, 'vload')}{width}({ptr})" if width in WIDTHS else None


def vstore(dtype, width, ptr, value):
    """C statement storing float{width} `value` at `ptr` (None: no such form)."""
    return f"{_fn(dtype, 'vstore')}{width}({value}, {ptr});" if width in WIDTHS else None


# ---- the C source -------------------------------------------------------------------------
# Written once for scalars and vectors: U / F are uint / float or uintN / floatN, every
# condition is a comparison (-1 per true lane of a vector, 1 for a scalar: both select with
# ?:), and both operands of a ?: have the result's type.

def _decode(f, U, F):
    """Body of `F netcl_f8<t>_dec(U b)`: the value of the code b (0..255)."""
    if f.rules == "e8m0":
        return (f"  /* 2^(b-127): b = 0 is 2^-127, a float32 subnormal; 0xff is NaN */\n"
                f"  const {U} bits = (b == 0u) ? ({U})0x400000u : b << 23;\n"
                f"  return as_{F}((b == 0xffu) ? ({U})0x7fc00000u : bits);\n")
    E, M, B = f.exp_bits, f.man_bits, f.bias
    emask = ((1 << E) - 1) << M
    magmask = f.sign_bit - 1
    # normal: exponent and mantissa shifted into float32's fields, the bias changed; a
    # subnormal: m * 2^(1-B-M), m made a float exactly as (2^23 + m) - 2^23
    lines = [f"  const {U} m = b & {(1 << M) - 1}u;",
             f"  const {U} normal = ((b & {magmask:#x}u) << {23 - M}) + {(127 - B) << 23:#x}u;",
             f"  const {U} sub = as_{U}((as_{F}(m | 0x4b000000u) - 0x1p23f) * 0x1p{1 - B - M}f);",
             f"  {U} mag = ((b & {emask:#x}u) != 0u) ? normal : sub;"]
    if f.rules == "ieee":
        lines.append(f"  mag = ((b & {emask:#x}u) == {emask:#x}u) ? "
                     f"((m != 0u) ? ({U})0x7fc00000u : ({U})0x7f800000u) : mag;")
    elif f.rules == "fn":
        lines.append(f"  mag = ((b & 0x7fu) == 0x7fu) ? ({U})0x7fc00000u : mag;")
    elif f.rules == "fnuz":  # 0x80 (the bits of -0) is the NaN; ml_dtypes loads it negative
        lines.append(f"  mag = (b == 0x80u) ? ({U})0x7fc00000u : mag;")
    if f.rules == "mx":     # every code finite; any bit from the sign bit up makes it negative
        lines.append(f"  return as_{F}(mag | "
                     f"((b > {magmask:#x}u) ? ({U})0x80000000u : ({U})0u));")
    else:
        lines.append(f"  return as_{F}(mag | ((b & 0x80u) << 24));")
    return "\n".join(lines) + "\n"


def _encode(f, U, F):
    """Body of `U netcl_f8<t>_enc(F x)`: x rounded to nearest even, as a code 0..255."""
    if f.rules == "e8m0":
        return (f"  const {U} u = as_{U}(x);\n"
                "  /* the exponent, rounded half up on the significand (as ml_dtypes; 255 is\n"
                "     NaN); float32 subnormals: 2^-127 up to it, 2^-126 above it; no zero and\n"
                "     no sign: 0, negatives, inf and NaN are NaN */\n"
                f"  const {U} r = (u < 0x800000u) ? ((u > 0x400000u) ? ({U})1u : ({U})0u) : "
                f"(u + 0x400000u) >> 23;\n"
                f"  return (u == 0u || u >= 0x7f800000u) ? ({U})0xffu : r;\n")
    E, M, B = f.exp_bits, f.man_bits, f.bias
    emask = ((1 << E) - 1) << M
    if f.rules == "ieee":
        maxcode, inf, nan = emask - 1, f"s | {emask:#x}u", f"s | {emask | 1 << (M - 1):#x}u"
        over, zero = inf, "s | r"
    elif f.rules == "fn":
        maxcode, inf, nan, over, zero = 0x7e, "s | 0x7fu", "s | 0x7fu", "s | 0x7fu", "s | r"
    elif f.rules == "mx":   # saturating: every code is finite; a NaN is a zero of the other sign
        maxcode = f.sign_bit - 1
        inf = over = f"s | {maxcode:#x}u"
        nan, zero = f"s ^ {f.sign_bit:#x}u", "s | r"
    else:   # fnuz: one NaN; no -0: a negative rounding to zero is +0
        maxcode, inf, nan, over = 0x7f, f"({U})0x80u", f"({U})0x80u", f"({U})0x80u"
        zero = f"(r != 0u) ? s | r : ({U})0u"
    special = nan if inf == nan else f"(a == 0x7f800000u) ? {inf} : {nan}"
    return f"""  const {U} u = as_{U}(x), a = u & 0x7fffffffu;
  const {U} s = (u >> {31 - E - M}) & {f.sign_bit:#x}u;   /* the sign, at the code's sign bit */
  /* at or above the smallest normal: rebias, round the mantissa to nearest even (a carry
     steps the exponent) */
  const {U} y = a - {(127 - B) << 23:#x}u;
  const {U} rn = (y + {(1 << (22 - M)) - 1:#x}u + ((y >> {23 - M}) & 1u)) >> {23 - M};
  /* below: the significand (implicit one included) shifted to the subnormal's place, to
     nearest even; past 24 places it is 0 (and the shift, taken modulo 32, is ignored) */
  const {U} ea = a >> 23;
  const {U} mant = (a & 0x7fffffu) | ((ea != 0u) ? ({U})0x800000u : ({U})0u);
  const {U} sh = {128 - B + 23 - M}u - ((ea > 1u) ? ea : ({U})1u);
  const {U} rs = (sh > 24u) ? ({U})0u :
      (mant + (({U})1u << (sh - 1u)) - 1u + ((mant >> sh) & 1u)) >> sh;
  const {U} r = (a < {(128 - B) << 23:#x}u) ? rs : rn;
  const {U} code = (r > {maxcode:#x}u) ? ({over}) : ({zero});
  return (a >= 0x7f800000u) ? ({special}) : code;
"""


def _source(fmt):
    t = tag(fmt)
    out = [f"#ifndef NETCL_F8{t.upper()}", f"#define NETCL_F8{t.upper()}"]
    for w in (1,) + WIDTHS:
        n = "" if w == 1 else str(w)
        U, F = f"uint{n}", f"float{n}"
        out += [f"inline {F} netcl_f8{t}_dec{n}({U} b) {{\n{_decode(fmt, U, F)}}}",
                f"inline {U} netcl_f8{t}_enc{n}({F} x) {{\n{_encode(fmt, U, F)}}}",
                f"inline {F} netcl_f8{t}_round{n}({F} x) "
                f"{{ return netcl_f8{t}_dec{n}(netcl_f8{t}_enc{n}(x)); }}"]
        if w == 1:
            out += [f"inline float netcl_f8{t}_load(uchar v) {{ return netcl_f8{t}_dec(v); }}",
                    f"inline uchar netcl_f8{t}_store(float x) "
                    f"{{ return (uchar)netcl_f8{t}_enc(x); }}"]
            continue
        lanes = ", ".join(f"p[{i}]" for i in range(w))
        stores = " ".join(f"p[{i}] = (uchar)c.s{i:x};" for i in range(w))
        out += [f"inline {F} netcl_f8{t}_vload{w}(const __global uchar* p) "
                f"{{ return netcl_f8{t}_dec{w}(({U})({lanes})); }}",
                f"inline void netcl_f8{t}_vstore{w}({F} x, __global uchar* p) "
                f"{{ const {U} c = netcl_f8{t}_enc{w}(x); {stores} }}"]
    return "\n".join(out) + "\n#endif\n"


# The C definitions per format, built once; kernels.py lists them among its preambles.
SOURCES = {d: _source(f) for d, f in FORMATS.items()}
_USE = {f"netcl_f8{tag(f)}_": SOURCES[d] for d, f in FORMATS.items()}


def preamble(source):
    """The definitions of the float8 functions `source` calls ('' where none)."""
    if "netcl_f8" not in source:
        return ""
    return "".join(text for use, text in _USE.items() if use in source)
