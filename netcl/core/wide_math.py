"""exp and tanh callable on 16-float vectors: `netcl_exp` and `netcl_tanh`.

Generated code spells float exp and tanh `netcl_exp(x)` and `netcl_tanh(x)`. For scalars,
doubles and vectors of up to 8 floats these call the OpenCL builtins, as before. A vector
of 16 floats cannot be passed to PoCL's builtins on x86-64 hosts with AVX-512 (see
target.X86_AVX512_ATTRIBUTE), so there they are computed inline, in functions carrying the
AVX-512 attribute, by the very operations PoCL 3.0's builtin library applies to an 8-float
vector (its SLEEF-derived exp, with fused multiply-adds; its rational / exp-based tanh):
every lane comes out bitwise what the 8-wide builtin gives (checked over every float32),
so a kernel's results do not depend on which width computed them. (PoCL's scalar exp and
tanh differ from its vector forms in the last bit for some inputs; scalar code keeps them.)

Compilers other than Clang on x86-64 get the builtins under both names.
"""
import re

from .target import X86_AVX512_ATTRIBUTE

WIDE_MATH = ("exp", "tanh")
WIDE_MATH_USE = re.compile(r"\bnetcl_(exp|tanh)\(")

_FN = "static inline __attribute__((overloadable, always_inline))"
_FN_WIDE = f"{_FN} {X86_AVX512_ATTRIBUTE}"

# exp(d) before its range checks, for float16 `d` (PoCL's vector exp): q = rint(d / ln 2),
# found by adding 1.5 * 2^23 (exact for |d / ln 2| < 2^22; larger |d| end in the range
# checks); d - q ln 2 in two fused steps; a degree-6 polynomial; times 2^q in two steps.
_EXP_CORE = """{fn} float16 netcl_exp_core(float16 d) {{
#pragma OPENCL FP_CONTRACT ON
  const float16 v = d * 0x1.715476p+0f;
  const float16 t = v + 0x1.8p23f;
  const int16 q = as_int16(t) - (int16)0x4b400000;
  const float16 qf = t - 0x1.8p23f;
  float16 s = qf * -0x1.62e4p-1f + d;
  s = qf * -0x1.7f7d1cp-20f + s;
  float16 u = 0x1.a057b4p-13f;
  u = u * s + 0x1.6d2d92p-10f;
  u = u * s + 0x1.11114cp-7f;
  u = u * s + 0x1.5554f4p-5f;
  u = u * s + 0x1.555556p-3f;
  u = u * s + 0.5f;
  const float16 s2 = s * s;
  u = u * s2 + s;
  u = u + 1.0f;
  const int16 m = q >> 1;
  u = u * as_float16((as_uint16(m) << 23) + (uint16)0x3f800000u);
  u = u * as_float16((as_uint16(q - m) << 23) + (uint16)0x3f800000u);
  return u;
}}
{fn} float16 netcl_exp(float16 d) {{
  const float16 u = netcl_exp_core(d);
  return d > 100.0f ? (float16)INFINITY : (d < -104.0f ? (float16)0.0f : u);
}}
"""

# tanh(x), float16: a = |x|; a <= 1: a + a^3 n(a^2) / d(a^2) (one rational below 0.9,
# another above); 1 < a <= 8.3177662: 1 - 2 / (1 + exp(2a)); beyond: 1 - 2^-24; x's sign.
_TANH = """{fn} float16 netcl_tanh(float16 x) {{
#pragma OPENCL FP_CONTRACT ON
  const float16 a = as_float16(as_uint16(x) & (uint16)0x7fffffffu);
  const float16 x2 = a * a;
  float16 n1 = x2 * 0x1.9a56fap-15f + -0x1.7f793cp-10f;
  n1 = n1 * x2 + -0x1.20b1cp-2f;
  const float16 d1 = x2 * 0x1.5eed38p-2f + 0x1.b10aap-1f;
  float16 n2 = x2 * 0x1.4113bp-15f + -0x1.431cp-10f;
  n2 = n2 * x2 + -0x1.ecf362p-3f;
  const float16 d2 = x2 * 0x1.2b8cbep-2f + 0x1.71b6cp-1f;
  const float16 r = (a < 0.9f ? n1 : n2) / (a < 0.9f ? d1 : d2);
  const float16 a3 = x2 * a;
  const float16 small = r * a3 + a;
  const float16 a2 = a + a;
  const float16 e = netcl_exp_core(a2);
  const float16 e1 = (a2 < -104.0f ? (float16)0.0f : e) + 1.0f;
  const float16 large = a2 > 100.0f ? (float16)1.0f : 1.0f - 2.0f / e1;
  const float16 y = a > 0x1.0a2b24p+3f ? (float16)0x1.fffffep-1f : (a <= 1.0f ? small : large);
  return as_float16(as_uint16(y) | (as_uint16(x) & (uint16)0x80000000u));
}}
"""


def _builtin_overloads(name, types):
    return [f"{_FN} {t} netcl_{name}({t} x) {{ return {name}(x); }}" for t in types]


def wide_math_preamble(names):
    """Definitions of netcl_exp / netcl_tanh, those of `names` (see the module docstring)."""
    names = sorted(set(names) & set(WIDE_MATH))
    lines = ["#if defined(__clang__) && defined(__x86_64__)"]
    for n in names:
        lines += _builtin_overloads(n, ("float", "float2", "float3", "float4", "float8"))
    lines.append(_EXP_CORE.format(fn=_FN_WIDE))    # (tanh calls netcl_exp_core)
    if "tanh" in names:
        lines.append(_TANH.format(fn=_FN_WIDE))
    lines.append("#ifdef cl_khr_fp64")
    for n in names:
        lines += _builtin_overloads(n, ("double", "double2", "double3", "double4", "double8"))
    lines += ["#endif", "#else"] + [f"#define netcl_{n} {n}" for n in names] + ["#endif", ""]
    return "\n".join(lines)
