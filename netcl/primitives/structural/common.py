"""Helpers every structural primitive shares: the int32 size limit of the kernels and the
int32 indices they take (`index32`), the metadata buffers and raw item types, and small
pieces of the rules."""
import numpy as np
import pyopencl as cl

from ...core import dtypes
from ...core.ad_util import Zero
from ...core.array import Array
from ...core.shapes import prod
from ...core.tracing import ShapedArray
from ..views import full

_INT_LIMIT = 2**31 - 1


def _check_size(name, shape):
    if prod(shape) > _INT_LIMIT:
        raise ValueError(f"{name}: arrays of {prod(shape)} elements exceed the 2^31 index limit")


_RAW_CTYPE = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong", 16: "ulong2"}


def index32(i):
    """Device integer indices as the int32 the kernels index with. Values beyond int32's
    range (of int64, uint64, or uint32 past 2**31) are clamped into it first, so that an
    index out of range stays out of range instead of wrapping into it.

    >>> index32(jnp.asarray(np.array([2**40, -1]))).dtype      # int32: [2147483647, -1]
    """
    from .. import elementwise as ew
    if i.dtype == dtypes.int32:
        return i
    if i.dtype.itemsize == 8 or i.dtype == dtypes.uint32:
        lo = 0 if i.dtype.kind == "u" else -2**31
        i = ew.clamp(full(i.shape, lo, i.dtype), i, full(i.shape, _INT_LIMIT, i.dtype))
    return ew.convert_element_type(i, dtypes.int32)


def _const_buffer(device, values):
    arr = np.array(list(values) or [0], dtype=np.int32)
    return cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=arr)


def _empty_launcher(device, aval):
    return lambda *xs: Array.empty(device, aval.shape, aval.dtype, aval.weak_type)


def _zeros(shape, dtype):
    return full(tuple(shape), 0, dtype)


def _zero_tangent(x):
    return Zero(ShapedArray(x.shape, x.dtype, x.weak_type))


def _batch_size(args, dims):
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise AssertionError("no batched argument")
