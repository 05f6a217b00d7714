"""nc_copy: one strided box copy, typed by item size only (uchar/ushort/uint/ulong), so
float32, int32 and uint32 share one build. With `dyn` set it adds clamped start indices read
from device memory to the source (dynamic_slice) or destination (dynamic_update_slice)
offset. concatenate is one copy per operand, pad a fill (a copy from the 0-d padding value
with zero strides) plus one copy into the strided interior, dynamic_update_slice a copy of
the operand plus one of the update. No kernel ever reads or writes out of bounds: starts are
clamped as in JAX (into [0, dim - size]).
"""
import numpy as np
import pyopencl as cl

from ...core import commands, dtypes, kernels
from ...core.array import Array
from ...core.shapes import prod
from .common import _RAW_CTYPE, _const_buffer

_COPY_SRC = """
__kernel void nc_copy(__global {T}* out, const int out_off, __global const {T}* in,
                      const int in_off, __constant int* meta, __global const int* starts,
                      const int rank, const int n, const int dyn) {{
  /* meta: box shape [0, rank), destination strides [rank, 2 rank), source strides
     [2 rank, 3 rank), largest start [3 rank, 4 rank) (dyn: 1 source, 2 destination) */
  const int i = get_global_id(0);
  if (i >= n) return;
  int o = out_off, s = in_off, rem = i;
  for (int d = rank - 1; d >= 0; --d) {{
    const int c = rem % meta[d]; rem /= meta[d];
    o += c * meta[rank + d]; s += c * meta[2 * rank + d];
  }}
  if (dyn) {{
    for (int d = 0; d < rank; ++d) {{
      const int st = clamp(starts[d], 0, meta[3 * rank + d]);
      if (dyn == 1) s += st * meta[2 * rank + d]; else o += st * meta[rank + d];
    }}
  }}
  out[o] = in[s];
}}
"""


def _copy_piece(device, itemsize, box, out_strides, out_off, in_strides, in_off,
                max_start=None, dyn=0):
    """A prepared launch of nc_copy; returns run(out_buf, in_buf, starts_buf) or None if empty."""
    n = prod(box)
    if n == 0:
        return None
    rank = len(box)
    k = kernels.kernel(device, _COPY_SRC.format(T=_RAW_CTYPE[itemsize]), "nc_copy")
    meta = _const_buffer(device, list(box) + list(out_strides) + list(in_strides)
                         + list(max_start if max_start is not None else [0] * rank))
    k.set_arg(1, np.int32(out_off))
    k.set_arg(3, np.int32(in_off))
    k.set_arg(4, meta)
    k.set_arg(5, meta)  # placeholder; replaced by the packed starts when dyn
    k.set_arg(6, np.int32(rank))
    k.set_arg(7, np.int32(n))
    k.set_arg(8, np.int32(dyn if rank else 0))
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, n)
    queue, set_arg, enqueue = device.queue, k.set_arg, commands.launch

    def run(out_buf, in_buf, starts_buf=None):
        set_arg(0, out_buf)
        set_arg(2, in_buf)
        if starts_buf is not None:
            set_arg(5, starts_buf)
        enqueue(queue, k, gsize, lsize)
    return run


def _copy_piece_at(device, itemsize, box, out_strides, in_strides):
    """nc_copy with its offsets given per run: run(out_buf, out_off, in_buf, in_off), or
    None if empty. A loop whose dynamic_slice / dynamic_update_slice starts are known on the
    host (its counter) moves the box by offsets: no device array of starts per run."""
    n = prod(box)
    if n == 0:
        return None
    rank = len(box)
    k = kernels.kernel(device, _COPY_SRC.format(T=_RAW_CTYPE[itemsize]), "nc_copy",
                       scalar_arg_dtypes=_COPY_ARGS)
    meta = _const_buffer(device, list(box) + list(out_strides) + list(in_strides)
                         + [0] * rank)
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, n)
    queue, set_args, enqueue = device.queue, k.set_args, commands.launch

    def run(out_buf, out_off, in_buf, in_off):
        # (typed arguments set together: PyOpenCL's set_arg of one untyped scalar costs
        # microseconds a call; dyn is 0, so the starts argument is not read)
        set_args(out_buf, out_off, in_buf, in_off, meta, meta, rank, n, 0)
        enqueue(queue, k, gsize, lsize)
    return run


_COPY_ARGS = (None, np.int32, None, np.int32, None, None, np.int32, np.int32, np.int32)


def _pack_starts(device, starts):
    """The 0-d int32 start indices side by side in one small device buffer (no kernel)."""
    packed = Array.empty(device, (len(starts),), dtypes.int32)
    for d, s in enumerate(starts):
        cl.enqueue_copy(device.queue, packed._buf, s._buf, byte_count=4,
                        src_offset=s.offset * 4, dst_offset=d * 4)
    return packed
