"""NumPy references of the elementwise primitives (the test oracle and the NumPy fallback):
float math computed in at least float32 and returned in the input dtype, integer division,
remainder and powers with the kernels' wrap-around semantics in the operands' width, erf_inv as devices
compute it."""
import math

import numpy as np

from ..core import dtypes


def _np_float(fn):
    """Reference for float math: compute in at least float32, return the input dtype."""
    def ref(*xs, **params):
        dt = xs[0].dtype
        with np.errstate(all="ignore"):
            work = [x.astype(dtypes.compute_dtype(x.dtype), copy=False) for x in xs]
            return np.asarray(fn(*work, **params)).astype(dt)
    return ref


def _np_via_float64(fn):
    """Reference computed wider and rounded once: NumPy's float32 tanh and cbrt are off by
    an ulp where the result should be exact (tanh(9.02) is 1, cbrt(27.0) is 3), and so is
    its float64 cbrt in some SIMD loops (NumPy 2.4 on AVX-512: 3.0000000000000004), so
    float64 goes through the long double (64-bit mantissa on x86)."""
    def ref(x):
        wide = np.longdouble if x.dtype == np.float64 else np.float64
        with np.errstate(all="ignore"):
            return np.asarray(fn(x.astype(wide))).astype(x.dtype)
    return ref


def _safe_divisor(a, b):
    """b with 1 where the kernels do not divide: b == 0, and INT_MIN / -1 (which traps)."""
    special = b == 0
    if a.dtype.kind == "i":
        special |= (a == np.iinfo(a.dtype).min) & (b == -1)
    return np.where(special, np.ones_like(b), b), special


def _int_div(a, b):
    """Truncating division in the operands' dtype: x / 0 is -1 (all ones unsigned),
    INT_MIN / -1 is INT_MIN (XLA's semantics, any width)."""
    with np.errstate(all="ignore"):
        d, special = _safe_divisor(a, b)
        q = a // d
        if a.dtype.kind == "i":   # floor to truncation: one up where a remainder is left
            q = q + ((q * d != a) & ((a < 0) != (d < 0))).astype(a.dtype)
        return np.where(b == 0, np.array(-1).astype(a.dtype), np.where(special, a, q))


def _int_rem(a, b):
    """C's remainder (sign of the dividend) in the operands' dtype: x % 0 is x,
    INT_MIN % -1 is 0."""
    with np.errstate(all="ignore"):
        d, special = _safe_divisor(a, b)
        return np.where(b == 0, a, np.where(special, np.zeros_like(a), np.fmod(a, d)))


def _div_ref(a, b):
    if a.dtype.kind in "iu":
        return _int_div(a, b)
    return _np_float(np.divide)(a, b)


def _rem_ref(a, b):
    if a.dtype.kind in "iu":
        return _int_rem(a, b)
    return _np_float(np.fmod)(a, b)


def _floor_div_ref(a, b):
    if a.dtype.kind in "iu":
        with np.errstate(all="ignore"):   # x // 0 is 0; INT_MIN // -1 is INT_MIN
            d, special = _safe_divisor(a, b)
            return np.where(b == 0, np.zeros_like(a), np.where(special, a, a // d))
    return _np_float(lambda x, y: np.floor(x / y))(a, b)


def _pow_ref(a, b):
    if a.dtype.kind in "iu":
        bits = 8 * a.dtype.itemsize
        out = np.empty(a.shape, a.dtype)
        for idx in np.ndindex(a.shape):
            x, y = int(a[idx]), int(b[idx])
            if y < 0:
                r = 1 if x == 1 else ((-1 if y & 1 else 1) if x == -1 else 0)
            else:
                r = pow(x, y, 2**bits)
            r %= 2**bits
            if a.dtype.kind == "i" and r >= 2**(bits - 1):
                r -= 2**bits
            out[idx] = r
        return out
    return _np_float(np.power)(a, b)


def _nan_max(a, b):
    if dtypes.kind(a.dtype) == "f":
        return _np_float(np.maximum)(a, b)  # np.maximum propagates NaN, like lax.max
    return np.maximum(a, b)


def _nan_min(a, b):
    if dtypes.kind(a.dtype) == "f":
        return _np_float(np.minimum)(a, b)
    return np.minimum(a, b)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def _erfinv_np(x):
    x = np.asarray(x, np.float64)
    y = np.zeros_like(x)
    inside = np.abs(x) < 1
    # Newton on erf from a good start (Winitzki's approximation).
    a = 0.147
    xi = x[inside]
    ln = np.log1p(-xi * xi)
    t = 2 / (np.pi * a) + ln / 2
    yi = np.sign(xi) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    for _ in range(6):
        yi -= (_erf(yi) - xi) / (2 / np.sqrt(np.pi) * np.exp(-yi * yi))
    y[inside] = yi
    y[np.abs(x) == 1] = np.sign(x[np.abs(x) == 1]) * np.inf
    y[np.abs(x) > 1] = np.nan
    y[np.isnan(x)] = np.nan
    return y


def _erfinv_giles_np(x):
    """Giles' single-precision polynomial in float32 arithmetic: what devices compute."""
    x = np.asarray(x, np.float32)
    with np.errstate(all="ignore"):
        w = -np.log1p(-x * x).astype(np.float32)
        lo = w < np.float32(5)
        wl = (w - np.float32(2.5)).astype(np.float32)
        wh = (np.sqrt(w) - np.float32(3)).astype(np.float32)
        pl = np.float32(2.81022636e-08)
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                  -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
            pl = (np.float32(c) + pl * wl).astype(np.float32)
        ph = np.float32(-0.000200214257)
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
            ph = (np.float32(c) + ph * wh).astype(np.float32)
        out = np.where(lo, pl, ph) * x
        return np.where(np.abs(x) == 1, x * np.float32(np.inf), out).astype(np.float32)


def _erfinv_ref(x):
    if x.dtype == np.float64:
        return _erfinv_np(x)
    return _erfinv_giles_np(x.astype(np.float32)).astype(x.dtype)


def _round_ref(x, rounding_method=0):
    if rounding_method == 1:
        return np.round(x)
    x64 = x.astype(np.float64)
    return np.sign(x64) * np.floor(np.abs(x64) + 0.5)


def _sign_ref(x):
    if dtypes.kind(x.dtype) == "f":
        return np.where(np.isnan(x) | (x == 0), x, np.sign(x))
    return np.sign(x)
