"""The epilogue of a column sum (jit's epilogue fusion, transforms/epilogue_fusion.py): a
reduce_sum over the leading axes of a dense array, (R, C) -> (C,), whose result only feeds
an elementwise group runs that group in the same kernel: on GPUs a group of 32 columns whose
work-items split the rows, on CPUs a work-item per 32 columns. A dense layer's bias gradient
and its optimizer update are then one launch instead of a reduction (one or two passes) and
an update kernel.

A CPU work-item adds its columns in blocks of 64 rows (two-level summation); a GPU work-item
every 8th row of its column, the 8 partial sums then added in local memory. Sums of more
than `MAX_ROWS` rows keep the reduction kernels, whose passes split the rows across
work-groups. A group reading the column sums of several arrays of one shape (two layers' bias
gradients whose updates elementwise fusion merged) adds them all in its kernel, where each
would otherwise take a two-pass reduction of its own.

On CPUs a work-item adds `Target.column_sum_width` neighbouring columns as 8-wide vectors
(a work-item per column is far slower there), about what the two reduction passes and the
update kernel take, with two launches fewer per bias.
"""
import numpy as np

from ...core import codegen, dtypes, kernels
from ...core.shapes import prod
from .. import dot_epilogue

MAX_ROWS = 4096
GPU_ROW_SLICES = 8


def make_sum_epilogue_launcher(device, xs, params, aval, extras, acc_index, body, out_vars,
                               out_avals):
    """A launcher ``(*xs, *extras) -> outputs`` computing `body` (codegen Ops over x0, x1,
    ...) per column: the group's inputs at `acc_index` (a position, or one per array of
    `xs`) are the column sums of `xs` (arrays of one shape and dtype, summed the same way),
    the others `extras`. None where an x is not dense, the sum is not over leading axes or
    runs over more than MAX_ROWS rows, or an extra is not a dense array of the result's
    shape or a 0-d one."""
    positions = (acc_index,) if isinstance(acc_index, int) else tuple(acc_index)
    axes = params["axes"]
    x = xs[0]
    kd = x.dtype
    rows, cols = prod(x.shape[:len(axes)]), prod(aval.shape)
    width = device.target.column_sum_width
    # (16-bit sums: the GPUs' form, a column per work-item, reading them element by element)
    wide_enough = kd in (dtypes.float32, dtypes.float64) or (kd in dtypes.HALF and width == 1)
    if device.is_numpy or axes != tuple(range(len(axes))) or len(xs) != len(positions) or \
            any(not y._contig or y.shape != x.shape or y.dtype != kd for y in xs) or \
            not wide_enough or not 0 < rows <= MAX_ROWS or \
            not cols or (kd == dtypes.float64 and not device.capabilities.fp64) or \
            any(a.shape != aval.shape for a in out_avals) or \
            any(e.ndim and (e.shape != aval.shape or not e._contig) for e in extras):
        return None
    ct = kernels.compute_ctype(kd)
    n = len(xs)
    decls = [f"__global const {kernels.storage_ctype(e.dtype)}* e{j}"
             for j, e in enumerate(extras)]
    decls += [f"__global {kernels.storage_ctype(a.dtype)}* o{j}"
              for j, a in enumerate(out_avals)]
    # the summed arrays are s0, s1, ... (the group's values are x0, x1, ...)
    decls += [f"__global const {kernels.storage_ctype(kd)}* s{i}" for i in range(n)]
    decls += [f"const int off{i}" for i in range(n)] + ["const int R", "const int C"]
    sums = [f"acc{i}" for i in range(n)]
    # a 16-bit sum is rounded to its dtype first, as the reduction's own store would
    rounded = [kernels.round_to(kd, 1, a) if kd in dtypes.STORAGE_FLOATS else a for a in sums]
    finish = dot_epilogue.flat_element(kd, positions, extras, body, out_vars, out_avals, "c",
                                       rounded)
    one_by_one = _column_sum(ct, sums, [f"s{i}[off{i} + r * C + c]" for i in range(n)])
    slices = max(1, min(GPU_ROW_SLICES, device.work_group // 32))
    if width == 1:
        # GPUs: a group of 32 columns x `slices` row slices; each work-item adds every
        # slices-th row of its column, the slices meet in local memory, and the first
        # finishes the column (a work-item per column leaves a GPU nearly idle: an MLP's
        # bias gradients, 256 x 1024, make only 1024 work-items walking 256 rows each)
        lines = ["  const int c = get_global_id(0);", "  const int t = get_local_id(1);",
                 "  const int l = get_local_id(0);"]
        lines += [f"  __local {ct} part{i}[{slices}][32];" for i in range(n)]
        lines += [f"  {ct} " + ", ".join(f"acc{i} = ({ct})(0)" for i in range(n)) + ";",
                  f"  if (c < C) for (int r = t; r < R; r += {slices}) {{"]
        lines += [f"    acc{i} += {kernels.load(kd, f's{i}', f'off{i} + r * C + c')};"
                  for i in range(n)]
        lines += ["  }"] + [f"  part{i}[t][l] = acc{i};" for i in range(n)]
        lines += ["  barrier(CLK_LOCAL_MEM_FENCE);", "  if (t != 0 || c >= C) return;"]
        lines += [f"  for (int u = 1; u < {slices}; ++u) acc{i} += part{i}[u][l];"
                  for i in range(n)]
        lines += ["  " + ln for ln in finish]
    else:
        # CPUs: `width` neighbouring columns per work-item as 8-wide vectors, then the update
        # column by column; the last columns (C % width) one by one
        vt, nv = codegen.vtype(kd, 8), width // 8
        loads = [kernels.vload(kd, 8, f"s{i} + off{i} + r * C + c0 + {8 * v}", True)
                 for i in range(n) for v in range(nv)]
        lines = [f"  const int c0 = get_global_id(0) * {width};", "  if (c0 >= C) return;",
                 f"  if (c0 + {width} <= C) {{"]
        lines += ["    " + ln for ln in _column_sum(
            vt, [f"acc{i}_{v}" for i in range(n) for v in range(nv)], loads)]
        lines += [f"    {ct} sums{i}[{width}];" for i in range(n)]
        # lane by lane: PoCL (LLVM 14) on AVX-512 hosts drops a kernel that passes a double8
        # to vstore8 (an ABI warning, then no kernel in the program)
        lines += [f"    sums{i}[{8 * v + lane}] = acc{i}_{v}.s{lane:x};"
                  for i in range(n) for v in range(nv) for lane in range(8)]
        lines += [f"    for (int e = 0; e < {width}; ++e) {{", "      const int c = c0 + e;"]
        lines += [f"      const {ct} acc{i} = sums{i}[e];" for i in range(n)]
        lines += ["      " + ln for ln in finish]
        lines += ["    }", "  } else {", "    for (int c = c0; c < C; ++c) {"]
        lines += ["      " + ln for ln in one_by_one + finish]
        lines += ["    }", "  }"]
    code = "\n".join(lines)
    src = ("#pragma OPENCL FP_CONTRACT OFF\n" + codegen.helpers_for(code) +
           f"__kernel void column_sum_epilogue({', '.join(decls)}) {{\n{code}\n}}\n")
    k = kernels.kernel(device, src, "column_sum_epilogue")
    n_in = len(extras)
    first = n_in + len(out_avals) + n         # after the xs: their offsets, then the sizes
    for j, v in enumerate((*(y.offset for y in xs), rows, cols)):
        k.set_arg(first + j, np.int32(v))
    units = -(-cols // width)
    if width == 1:
        gsize, lsize = (kernels.round_up(cols, 32), slices), (32, slices)
    else:
        # a group per work-item: a dense layer's 1024 columns make 32 groups for the CPU
        # threads
        gsize, lsize = (units,), (1,)
    return dot_epilogue.flat_epilogue_launcher(device, k, n, n_in, out_avals, gsize, lsize)


def _column_sum(ctype, accs, loads):
    """Lines adding each of `loads` (expressions of row r) over the R rows into its `accs`,
    in blocks of 64 rows."""
    zero = f"({ctype})(0)"
    return ([f"{ctype} " + ", ".join(f"{a} = {zero}" for a in accs) + ";",
             "for (int r0 = 0; r0 < R; r0 += 64) {",
             f"  {ctype} " + ", ".join(f"part{j} = {zero}" for j in range(len(accs))) + ";",
             "  const int r1 = min(R, r0 + 64);",
             "  for (int r = r0; r < r1; ++r) {"]
            + [f"    part{j} += {ld};" for j, ld in enumerate(loads)]
            + ["  }"] + [f"  {a} += part{j};" for j, a in enumerate(accs)] + ["}"])
