"""jax.lax's bit operations as composites of netcl's integer primitives (so jit fuses
them): `population_count`, `clz`, `mulhi`, and `reduce_precision` (float rounding to a
narrower format, with JAX's derivative). Exported by netcl.lax (through lax_extras).

>>> netcl.lax.population_count(jnp.array([7, -1]))     # [3, 32]
"""
import numpy as np

from . import numpy as jnp
from .core import dtypes
from .lax_extras_util import arr as _arr

__all__ = ["population_count", "clz", "mulhi", "reduce_precision"]


def _int_bits(x, where, wide=False):
    """x's bits as uint32 (or uint64 where `wide` allows 64-bit operands)."""
    from . import lax as _lax
    ok = dtypes.kind(x.dtype) in "iu" and (wide or x.dtype.itemsize == 4)
    if not ok:
        raise TypeError(f"{where}: operand must be an int32 or uint32 "
                        f"{'(or int64 or uint64) ' if wide else ''}array, got {x.dtype}")
    if x.dtype in dtypes.SUBBYTE_BITS:    # int4, ...: the width's bits, as uint32
        return x.astype(np.uint32) & _u32((1 << dtypes.SUBBYTE_BITS[x.dtype]) - 1, x)
    if x.dtype.kind == "i":
        return _lax.bitcast_convert_type(x, np.uint64 if x.dtype.itemsize == 8 else np.uint32)
    return x


def _halves(u):
    """(high, low) 32-bit halves of uint64 values, as uint32."""
    from . import lax as _lax
    hi = _lax.shift_right_logical(u, jnp.full(u.shape, 32, np.uint64))
    return hi.astype(np.uint32), u.astype(np.uint32)


def _u32(v, like):
    return jnp.full(like.shape, v, np.uint32) if like.shape else jnp.asarray(v, np.uint32)


def population_count(x):
    """The number of set bits of each integer element (two's complement; 32 or 64 bits), in
    the operand's dtype, as jax.lax.population_count.

    >>> netcl.lax.population_count(jnp.array([7, -1], jnp.int32))     # [3, 32]
    """
    a = _arr(x, "population_count", "x")
    u = _int_bits(a, "population_count", wide=True)
    if u.dtype == np.uint64:
        hi, lo = _halves(u)
        return (_popcount32(hi) + _popcount32(lo)).astype(a.dtype)
    return _popcount32(u).astype(a.dtype)


def _popcount32(u):
    from . import lax as _lax
    c = lambda v: _u32(v, u)    # noqa: E731
    u = u - (_lax.shift_right_logical(u, c(1)) & c(0x55555555))
    u = (u & c(0x33333333)) + (_lax.shift_right_logical(u, c(2)) & c(0x33333333))
    u = (u + _lax.shift_right_logical(u, c(4))) & c(0x0F0F0F0F)
    return _lax.shift_right_logical(u * c(0x01010101), c(24))


def clz(x):
    """The number of leading zero bits of each integer element (32 or 64 bits; all of them
    for 0), in the operand's dtype, as jax.lax.clz.

    >>> netcl.lax.clz(jnp.array([1, 0, -1], jnp.int32))     # [31, 32, 0]
    """
    a = _arr(x, "clz", "x")
    u = _int_bits(a, "clz", wide=True)
    if u.dtype == np.uint64:
        hi, lo = _halves(u)
        return jnp.where(hi == _u32(0, hi), _clz32(lo) + _u32(32, lo), _clz32(hi)).astype(a.dtype)
    if a.dtype in dtypes.SUBBYTE_BITS:    # zeros above the width's bits do not count
        return (_clz32(u) - _u32(32 - dtypes.SUBBYTE_BITS[a.dtype], u)).astype(a.dtype)
    return _clz32(u).astype(a.dtype)


def _clz32(u):
    from . import lax as _lax
    n = jnp.zeros(u.shape, np.uint32)
    y = u
    for s in (16, 8, 4, 2, 1):
        top_zero = y < _u32(1 << (32 - s), u)
        n = jnp.where(top_zero, n + _u32(s, u), n)
        y = jnp.where(top_zero, _lax.shift_left(y, _u32(s, u)), y)
    return jnp.where(u == _u32(0, u), _u32(32, u), n)


def mulhi(x, y):
    """The high half of the double-width product of integer elements: the high 32 bits of
    int32 (uint32) products, the high 64 bits of int64 (uint64) ones under x64, as
    jax.lax.mulhi.

    >>> netcl.lax.mulhi(jnp.array([2 ** 30], jnp.int32), jnp.array([16], jnp.int32))   # [4]
    """
    from . import lax as _lax
    a, b = _arr(x, "mulhi", "x"), _arr(y, "mulhi", "y")
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        raise TypeError(f"mulhi: x and y must have one shape and dtype, got "
                        f"{a.dtype}{list(a.shape)} and {b.dtype}{list(b.shape)}")
    ua, ub = _int_bits(a, "mulhi", wide=True), _int_bits(b, "mulhi", wide=True)
    r = _mulhi_unsigned(ua, ub)
    if a.dtype.kind == "i":     # signed: subtract the other operand where one is negative
        zero = jnp.zeros(ua.shape, ua.dtype)
        r = r - jnp.where(a < 0, ub, zero) - jnp.where(b < 0, ua, zero)
        return _lax.bitcast_convert_type(r, a.dtype)
    return r


def _mulhi_unsigned(ua, ub):
    """The high half of the products of unsigned ua and ub, schoolbook on half-width digits
    (each partial product fits the operands' width)."""
    from . import lax as _lax
    half = ua.dtype.itemsize * 4
    c = lambda v: jnp.full(ua.shape, v, ua.dtype)    # noqa: E731
    srl, mask = _lax.shift_right_logical, c((1 << half) - 1)
    ah, al = srl(ua, c(half)), ua & mask
    bh, bl = srl(ub, c(half)), ub & mask
    lo, m1, m2, hi = al * bl, ah * bl, al * bh, ah * bh
    t = srl(lo, c(half)) + (m1 & mask) + (m2 & mask)
    return hi + srl(m1, c(half)) + srl(m2, c(half)) + srl(t, c(half))


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Round float elements to a format with `exponent_bits` exponent and `mantissa_bits`
    mantissa bits (round to nearest even; overflow to inf, underflow to signed zero; NaN
    kept), keeping the dtype, as jax.lax.reduce_precision. Its derivative rounds the
    tangent the same way (as JAX's).

    >>> netcl.lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10)   # float16 values
    """
    x = _arr(operand, "reduce_precision")
    if dtypes.kind(x.dtype) != "f":
        raise TypeError(f"reduce_precision: operand must be a float array, got {x.dtype}")
    for name, v in (("exponent_bits", exponent_bits), ("mantissa_bits", mantissa_bits)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"reduce_precision: {name} must be an int, got {v!r}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits={exponent_bits} must be >= 1 and "
                         f"mantissa_bits={mantissa_bits} >= 0")
    return _reduce_precision(x, int(exponent_bits), int(mantissa_bits))


def _reduce_precision(x, eb, mb):
    from .transforms.custom import custom_jvp

    @custom_jvp
    def f(v):
        return _round_bits(v, eb, mb)

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), f(tangents[0])
    return f(x)


def _round_bits(x, eb, mb):
    from . import lax as _lax
    dt = x.dtype
    if dt == np.float64:
        return _round_bits64(x, eb, mb)
    v = x if dt == np.float32 else x.astype(np.float32)
    u = _lax.bitcast_convert_type(v, np.uint32)
    c = lambda k: _u32(k, u)    # noqa: E731
    if mb < 23:
        last = 1 << (23 - mb)
        bias = _lax.shift_right_logical(u & c(last), c(23 - mb)) + c((last >> 1) - 1)
        u = (u + bias) & c((~(last - 1)) & 0xFFFFFFFF)
    if eb < 8:
        exp_mask = ((1 << 8) - 1) << 23
        rbias = (1 << (eb - 1)) - 1
        e = u & c(exp_mask)
        sign = u & c(1 << 31)
        u = jnp.where(e > c((127 + rbias) << 23), sign | c(exp_mask),
                      jnp.where(e <= c((127 - rbias) << 23), sign, u))
    out = _lax.bitcast_convert_type(u, np.float32)
    out = jnp.where(jnp.isnan(v), v, out)
    return out if dt == np.float32 else out.astype(dt)


def _round_bits64(x, eb, mb):
    """float64: the same rounding done in two float32 halves is not exact; round with
    arithmetic instead: scale by a power of two so that mb bits stay, rint, scale back."""
    ax = jnp.abs(x)
    safe = jnp.where((ax > 0) & jnp.isfinite(ax), ax, 1.0)
    e = jnp.floor(jnp.log2(safe))
    q = jnp.exp2(e - mb)
    out = jnp.where((ax > 0) & jnp.isfinite(ax), jnp.rint(x / q) * q, x)
    if eb < 11:
        rbias = (1 << (eb - 1)) - 1
        big = jnp.abs(out) >= 2.0 ** (rbias + 1)
        small = jnp.abs(out) < 2.0 ** (1 - rbias)
        out = jnp.where(big, jnp.copysign(jnp.inf, x), jnp.where(small, jnp.copysign(0.0, x),
                                                                  out))
    return jnp.where(jnp.isnan(x), x, out)


