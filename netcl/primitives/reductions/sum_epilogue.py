"""The epilogue of a column sum (jit's epilogue fusion, transforms/epilogue_fusion.py): a
reduce_sum over the leading axes of a dense array, (R, C) -> (C,), whose result only feeds an
elementwise group runs that group in the same kernel, one work-item per column. A dense
layer's bias gradient and its optimizer update are then one launch instead of a reduction (one
or two passes) and an update kernel.

Each work-item adds its column in blocks of 64 rows (two-level summation). Sums of more than
`MAX_ROWS` rows keep the reduction kernels, whose passes split the rows across work-groups.

GPUs only, unless `ON_CPU` is set (tests do): on PoCL a work-item walking a column ran W4's
bias gradient and adam update (128 x 1024) in 215 us, against 25 us for the 8-wide
reduction kernels and the update kernel; a CPU version would need 8 columns per work-item.
"""
import numpy as np

from ...core import codegen, dtypes, kernels
from ...core.shapes import prod
from .. import dot_epilogue

MAX_ROWS = 4096
ON_CPU = False


def make_sum_epilogue_launcher(device, x, params, aval, extras, acc_index, body, out_vars,
                               out_avals):
    """A launcher ``(x, *extras) -> outputs`` computing `body` (codegen Ops over x0, x1, ...;
    x{acc_index} is the column sum of `x`, the others `extras`) per column, or None where x
    is not dense, the sum is not over leading axes or runs over more than MAX_ROWS rows, or
    an extra is not a dense array of the result's shape or a 0-d one."""
    axes = params["axes"]
    kd = x.dtype
    rows, cols = prod(x.shape[:len(axes)]), prod(aval.shape)
    if device.is_numpy or (device.kind == "cpu" and not ON_CPU) or \
            axes != tuple(range(len(axes))) or not x._contig or \
            kd not in (dtypes.float32, dtypes.float64) or not 0 < rows <= MAX_ROWS or \
            not cols or (kd == dtypes.float64 and not device.capabilities.fp64) or \
            any(a.shape != aval.shape for a in out_avals) or \
            any(e.ndim and (e.shape != aval.shape or not e._contig) for e in extras):
        return None
    ct = kernels.compute_ctype(kd)
    decls = [f"__global const {kernels.storage_ctype(e.dtype)}* e{j}"
             for j, e in enumerate(extras)]
    decls += [f"__global {kernels.storage_ctype(a.dtype)}* o{j}"
              for j, a in enumerate(out_avals)]
    decls += [f"__global const {kernels.storage_ctype(kd)}* x", "const int off",
              "const int R", "const int C"]
    lines = ["  const int c = get_global_id(0);", "  if (c >= C) return;",
             f"  {ct} acc = 0;",
             "  for (int r0 = 0; r0 < R; r0 += 64) {",
             f"    {ct} part = 0;",
             "    const int r1 = min(R, r0 + 64);",
             "    for (int r = r0; r < r1; ++r) part += x[off + r * C + c];",
             "    acc += part;", "  }"]
    lines += ["  " + ln for ln in dot_epilogue.flat_element(kd, acc_index, extras, body,
                                                            out_vars, out_avals, "c")]
    code = "\n".join(lines)
    src = ("#pragma OPENCL FP_CONTRACT OFF\n" + codegen.helpers_for(code) +
           f"__kernel void column_sum_epilogue({', '.join(decls)}) {{\n{code}\n}}\n")
    k = kernels.kernel(device, src, "column_sum_epilogue")
    n_in = len(extras)
    first = n_in + len(out_avals)          # x, then its offset and sizes
    for j, v in enumerate((x.offset, rows, cols)):
        k.set_arg(first + 1 + j, np.int32(v))
    gsize, lsize = kernels.grid_1d(device, cols)
    launch = dot_epilogue.flat_epilogue_launcher(device, k, 1, n_in, out_avals, gsize, lsize)
    launch.source = src
    return launch
