"""JAX's narrow integers (ml_dtypes' int4, uint4, int2, uint2, int1, uint1): their OpenCL C
and NumPy rules.

Memory holds one byte per element, as ml_dtypes' NumPy arrays do: the value's `bits` low
bits (two's complement where signed; the bits above are 0, and ignored when read, as
ml_dtypes reads them). Kernels compute in int (signed) / uint (unsigned) registers:

    value(dtype, code)      the int / uint a byte (or any int expression) holds: its low bits,
                            sign-extended where signed (loads; a fused kernel's wrap)
    bits(dtype, value)      the byte to store for an int / uint value: its low bits, i.e. the
                            value wrapped to the width, as JAX's arithmetic wraps
    from_float(dtype, x)    a float (double) converted as JAX converts it: toward zero,
                            saturated to the dtype's range, NaN to 0

and, for NumPy references (the test oracle, the NumPy fallback), `convert_reference`:
values of any dtype converted as the kernels convert them (ml_dtypes itself wraps floats
and has no casts between its narrow integers).

>>> value(dtypes.int4, "c")        # '((c & 15 ^ 8) - 8)'
"""
import numpy as np

from . import dtypes

BITS = dtypes.SUBBYTE_BITS


def _mask(dtype):
    return (1 << BITS[dtype]) - 1


def value(dtype, code):
    """C expression: the int (signed dtype) / uint value whose bits are the low bits of
    the int / uint (vector) expression `code` (an operator expression needs parentheses):
    sign-extended by xor and subtraction, not shifts (C leaves shifting negatives
    undefined)."""
    if dtypes.kind(dtype) == "u":
        return f"({code} & {_mask(dtype)}u)"
    half = 1 << (BITS[dtype] - 1)
    return f"(({code} & {_mask(dtype)} ^ {half}) - {half})"


def bits(dtype, expr):
    """C expression: the uchar to store for int / uint `expr` (the low bits, as ml_dtypes
    lays the value out)."""
    return f"(uchar)(({expr}) & {_mask(dtype)})"


def from_float(dtype, x):
    """C expression: float (or double) `x` converted to narrow integer `dtype` in its
    compute type, as JAX converts: toward zero, saturated to [min, max], NaN to 0."""
    info = dtypes.iinfo(dtype)
    return f"(({x} != {x}) ? 0 : clamp(convert_int_sat_rtz({x}), {info.min}, {info.max}))"


def convert_reference(x, dtype):
    """NumPy array `x` converted to `dtype` as the kernels convert, where a narrow integer
    is the source or the target (None otherwise): floats into one saturate toward zero (NaN:
    0), ints wrap; a narrow integer converts as its value. (ml_dtypes wraps floats and
    cannot cast between two narrow integers.)"""
    src, dst = x.dtype, np.dtype(dtype)
    if src not in BITS and dst not in BITS:
        return None
    if dst in BITS:
        if dtypes.kind(src) == "f":
            info = dtypes.iinfo(dst)
            with np.errstate(invalid="ignore"):
                v = np.nan_to_num(x.astype(np.float64), nan=0.0)
                v = np.trunc(np.clip(v, info.min, info.max)).astype(np.int64)
        else:
            v = x.astype(np.int64) if src.kind != "c" else x.real.astype(np.int64)
        return dtypes.wrap_ints(v, dst).astype(dst)
    # out of a narrow integer: its value is exact in float64 (as in float32, which kernels
    # round it from), and wraps into a narrower integer
    return x.astype(np.float64 if dtypes.kind(dst) in "fc" else np.int64).astype(dst)
