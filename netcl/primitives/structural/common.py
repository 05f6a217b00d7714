"""Helpers every structural primitive shares: the int32 size limit of the kernels, the
metadata buffers and raw item types they take, and small pieces of the rules."""
import numpy as np
import pyopencl as cl

from ...core.ad_util import Zero
from ...core.array import Array
from ...core.shapes import prod
from ...core.tracing import ShapedArray
from ..views import full

_INT_LIMIT = 2**31 - 1


def _check_size(name, shape):
    if prod(shape) > _INT_LIMIT:
        raise ValueError(f"{name}: arrays of {prod(shape)} elements exceed the 2^31 index limit")


_RAW_CTYPE = {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"}


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
