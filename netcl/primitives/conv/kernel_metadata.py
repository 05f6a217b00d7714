"""What the convolution and window kernels share. Sizes and strides travel in a small
__constant int32 buffer (`_const_buffer`), so one build per dtype serves every shape and
layout; every index stays below 2^31; and every n / d is a multiply-shift (`_magic`, the
NDIV macro), because integer division is the slowest part of index arithmetic on CPUs
(PoCL on x86)."""
import numpy as np

_INDEX_LIMIT = 2**31 - 1


def _magic(d):
    """(multiplier, shift) with n / d == (n * multiplier) >> shift for 0 <= n < 2^31
    (Granlund-Montgomery with a 32-bit multiplier; integer division is the slowest
    instruction of these index computations on CPUs). The multiplier is returned as the
    int32 bit pattern of a uint32."""
    d = max(int(d), 1)
    ell = (d - 1).bit_length()
    m = (1 << (31 + ell)) // d + 1
    return (m - (1 << 32) if m >= 1 << 31 else m), 31 + ell


# n / d for 0 <= n < 2^31, with (mg, sh) = _magic(d)
_NDIV = "#define NDIV(n, mg, sh) ((int)(((ulong)(uint)(n) * (ulong)(uint)(mg)) >> (sh)))\n"


def _const_buffer(device, values):
    import pyopencl as cl
    arr = np.asarray(values, dtype=np.int64)
    if arr.size and (arr.max() > _INDEX_LIMIT or arr.min() < -2**31):
        raise ValueError("conv: an index exceeds the 2^31 limit of the kernels")
    arr = arr.astype(np.int32)
    if arr.size == 0:
        arr = np.zeros(1, np.int32)
    return cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=arr)
