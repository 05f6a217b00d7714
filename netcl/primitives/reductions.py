"""Reductions and cumulative (scan) primitives.

  reduce_sum / reduce_prod / reduce_max / reduce_min (x, axes)   the result drops `axes`
  argmax / argmin (x, axis, index_dtype)                         first NaN wins, then first max
  cumsum / cumprod / cummax / cummin (x, axis, reverse)          inclusive scans
  (ffill: internal, carries the last non-NaN value; the derivatives of cummax/cummin use it)

Layout. The input is viewed as (A, K, B): A the kept axes before the reduced block, K the
reduced block, B the kept axes after it. Views cost nothing: a transposed or reversed input
whose elements fill a dense block is read in *memory* order (the output is then written in
that order and returned as a permuted view); only reduced axes that are not one block in
memory, or non-dense inputs (broadcasts, steps), are first copied.

Two kernel families, one program per (operation, dtype, family), sizes as arguments:

  GPU family (GPUs, accelerators): rows kernel (B == 1) = one work-group of L items per
  (row, chunk), items stride through the chunk (coalesced), then a local-memory tree; cols
  kernel (B > 1 or short rows) = one work-item per (a, chunk, b) looping over k (coalesced
  across b). Float sums use Kahan compensation inside each work-item, a tree across items.
  Scans: one work-group per (row, chunk), tiles of L*V elements staged in local memory,
  each item scans V elements, a Hillis-Steele scan over the L item totals, a carry across
  tiles (work O(n + n log L / V)); cols scans one work-item per (a, chunk, b).

  CPU family (PoCL and other CPU runtimes run each work-item's own loop scalar, so the
  vector work is spelled out): one work-item per (row, chunk) with 4 x 8-wide accumulators,
  or per (a, chunk, block of 32 columns); float sums add blocks of 64 x 32 elements before
  folding them into the totals (two-level, pairwise across lanes and chunks); scans use
  in-register prefix sums of 8 lanes plus a carry.

Both split K into G chunks when there are too few rows to fill the device (a full sum of
2^26 elements on a GPU): pass 1 writes partials (A, G, B) in the accumulator type, pass 2
folds them; scans run reduce-then-scan (chunk totals, their scan, each chunk with its
carry-in). int32/uint32 sums and products wrap (as XLA's); float16 is loaded and
accumulated in float; bool max/min are any/all.
"""
import numpy as np
import pyopencl as cl

from ..core import dtypes, kernels
from ..core.ad_util import Zero, is_zero
from ..core.array import Array
from ..core.shapes import contiguous_strides, normalize_axes, normalize_axis, prod
from ..core.tracing import Primitive, ShapedArray

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "argmax", "argmin",
           "cumsum", "cumprod", "cummax", "cummin"]

_INDEX_LIMIT = 2**31 - 1
_V = 8  # elements per work-item per tile in the rows scan


# =============================================================================================
# OpenCL C generation
# =============================================================================================

def _init_expr(op, dtype):
    """The identity of `op` as a C expression of the accumulator type."""
    k = "b" if dtype == dtypes.bool_ else dtype.kind
    acc = kernels.compute_ctype(dtype)
    if op in ("sum",):
        return f"(({acc})0)"
    if op == "prod":
        return f"(({acc})1)"
    if op in ("max", "argmax"):
        return {"f": f"(({acc})-INFINITY)", "i": "INT_MIN", "u": "0u", "b": "0"}[k]
    if op in ("min", "argmin"):
        return {"f": f"(({acc})INFINITY)", "i": "INT_MAX", "u": "UINT_MAX", "b": "1"}[k]
    if op == "ffill":
        return f"(({acc})NAN)"
    raise AssertionError(op)


def _combine(op, dtype, n=""):
    """C template combining {a} (earlier) with {b} (later); n is a vector width ("", "8")."""
    k = dtype.kind
    if op == "sum":
        return f"as_int{n}(as_uint{n}({{a}}) + as_uint{n}({{b}}))" if k == "i" else "({a} + {b})"
    if op == "prod":
        return f"as_int{n}(as_uint{n}({{a}}) * as_uint{n}({{b}}))" if k == "i" else "({a} * {b})"
    # float max/min propagate NaN: take {b} when it is greater or NaN. {a} (the accumulator)
    # stays off the NaN test, and the masks combine with `|` (vector-friendly: `||` and
    # isnan() compile to scalarised code on PoCL)
    if op == "max":
        return "(((({b}) > ({a})) | (({b}) != ({b}))) ? ({b}) : ({a}))" if k == "f" \
            else "max({a}, {b})"
    if op == "min":
        return "(((({b}) < ({a})) | (({b}) != ({b}))) ? ({b}) : ({a}))" if k == "f" \
            else "min({a}, {b})"
    if op == "ffill":
        return "((({b}) != ({b})) ? ({a}) : ({b}))"
    raise AssertionError(op)


def _better_fn(op, dtype):
    """C helper: is (v, i) a better arg-candidate than (bv, bi)? NaN first, then ties by index."""
    acc = kernels.compute_ctype(dtype)
    cmp = ">" if op == "argmax" else "<"
    if dtype.kind == "f":
        body = (f"  const int vn = isnan(v), bn = isnan(bv);\n"
                f"  if (vn != bn) return vn;\n"
                f"  if (vn || v == bv) return i < bi;\n"
                f"  return v {cmp} bv;\n")
    else:
        body = f"  return v {cmp} bv || (v == bv && i < bi);\n"
    return f"inline int netcl_better({acc} v, int i, {acc} bv, int bi) {{\n{body}}}\n"


_CHUNK_BOUNDS = ("  const int start = max(0, g * chunk - shift), "
                 "end = min(K, (g + 1) * chunk - shift);")


def _partial_dtype(op, dtype):
    """dtype in which pass-1 partials are stored (exact for max/min; float for half sums)."""
    if op in ("sum", "prod") and dtype == dtypes.float16:
        return dtypes.float32
    return dtype


def _reduce_kernel(kind, name, op, in_dt, out_dt, acc_dt, in_idx=False, out_val=True):
    """Source of one reduction kernel: kind 'rows' or 'cols'.

    Arguments: [out (out_dt) if out_val], [oidx (int) if arg op], in (in_dt), [iidx if in_idx],
    off, K, (B for cols), G, chunk, shift, [rev if arg op], then the local buffer(s) (rows)
    or n (cols).
    """
    arg = op in ("argmax", "argmin")
    acc = kernels.compute_ctype(acc_dt)
    kahan = op == "sum" and acc_dt.kind == "f"
    params = []
    if out_val:
        params.append(f"__global {kernels.storage_ctype(out_dt)}* out")
    if arg:
        params.append("__global int* oidx")
    params.append(f"__global const {kernels.storage_ctype(in_dt)}* in")
    if in_idx:
        params.append("__global const int* iidx")
    params += ["const int off", "const int K"]
    if kind == "cols":
        params.append("const int B")
    params += ["const int G", "const int chunk", "const int shift"]
    if arg:
        params.append("const int rev")
    if kind == "rows":
        params.append(f"__local {acc}* sv")
        if arg:
            params.append("__local int* si")
    else:
        params.append("const int n")
    comb = _combine(op, acc_dt) if not arg else None
    init = _init_expr(op, acc_dt)

    lines = [f"__kernel void {name}({', '.join(params)}) {{"]
    if kind == "rows":
        lines += ["  const int L = get_local_size(0), lid = get_local_id(0);",
                  "  const int grp = get_group_id(0);",
                  "  const int a = grp / G, g = grp - a * G;",
                  _CHUNK_BOUNDS,
                  "  const int base = off + a * K;"]
        loop = "  for (int k = start + lid; k < end; k += L) {"
        pos = "base + k"
        ipos = "a * K + k"
        out_index = "grp"
    else:
        lines += ["  const int t = get_global_id(0);",
                  "  if (t >= n) return;",
                  "  const int b = t % B, ag = t / B, a = ag / G, g = ag - a * G;",
                  _CHUNK_BOUNDS,
                  "  int p = off + (a * K + start) * B + b;"]
        loop = "  for (int k = start; k < end; ++k, p += B) {"
        pos = "p"
        ipos = "p - off"
        out_index = "t"
    lines.append(f"  {acc} s = {init};")
    if kahan:
        lines.append(f"  {acc} c = ({acc})0;")
    if arg:
        lines.append("  int bi = INT_MAX;")
    lines.append(loop)
    lines.append(f"    const {acc} x = {kernels.load(in_dt, 'in', pos)};")
    if arg:
        idx = f"iidx[{ipos}]" if in_idx else "(rev ? K - 1 - k : k)"
        lines += [f"    const int i = {idx};",
                  "    if (netcl_better(x, i, s, bi)) { s = x; bi = i; }"]
    elif kahan:
        lines += [f"    const {acc} y = x - c;",
                  f"    const {acc} tt = s + y;",
                  f"    c = isinf(tt) ? ({acc})0 : (tt - s) - y;",
                  "    s = tt;"]
    else:
        lines.append(f"    s = {comb.format(a='s', b='x')};")
    lines.append("  }")
    if kahan:
        lines.append("  s = s - c;")
    if kind == "rows":
        lines.append("  sv[lid] = s;")
        if arg:
            lines.append("  si[lid] = bi;")
        lines += ["  barrier(CLK_LOCAL_MEM_FENCE);",
                  "  for (int h = L >> 1; h > 0; h >>= 1) {",
                  "    if (lid < h) {"]
        if arg:
            lines += ["      if (netcl_better(sv[lid + h], si[lid + h], sv[lid], si[lid])) {",
                      "        sv[lid] = sv[lid + h]; si[lid] = si[lid + h]; }"]
        else:
            lines.append(f"      sv[lid] = {comb.format(a='sv[lid]', b='sv[lid + h]')};")
        lines += ["    }",
                  "    barrier(CLK_LOCAL_MEM_FENCE);",
                  "  }",
                  "  if (lid == 0) {"]
        if out_val:
            lines.append("    " + kernels.store(out_dt, "out", out_index, "sv[0]"))
        if arg:
            lines.append(f"    oidx[{out_index}] = si[0];")
        lines.append("  }")
    else:
        if out_val:
            lines.append("  " + kernels.store(out_dt, "out", out_index, "s"))
        if arg:
            lines.append(f"  oidx[{out_index}] = bi;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _reduce_source(op, dtype, style):
    """One program per (op, dtype, style): rows/cols kernels, single-pass and two-pass
    variants (final: in -> out; part: in -> partials; fold: partials -> out)."""
    arg = op in ("argmax", "argmin")
    gen = _cpu_reduce_kernel if style == "cpu" else _reduce_kernel
    pd = _partial_dtype(op, dtype)
    parts = [_better_fn(op, dtype)] if arg else []
    for kind in ("rows", "cols"):
        if arg:
            parts.append(gen(kind, f"{kind}_final", op, dtype, None, dtype, out_val=False))
            parts.append(gen(kind, f"{kind}_part", op, dtype, dtype, dtype))
            parts.append(gen(kind, f"{kind}_fold", op, dtype, None, dtype, in_idx=True,
                             out_val=False))
        else:
            parts.append(gen(kind, f"{kind}_final", op, dtype, dtype, dtype))
            parts.append(gen(kind, f"{kind}_part", op, dtype, pd, dtype))
            parts.append(gen(kind, f"{kind}_fold", op, pd, dtype, dtype))
    return "".join(parts)


def _scan_source(op, dtype, style):
    """One program per (op, dtype, style): the rows scan and the cols scan."""
    if style == "cpu":
        return _cpu_scan_source(op, dtype)
    acc = kernels.compute_ctype(dtype)
    st = kernels.storage_ctype(dtype)
    pd = _partial_dtype(op, dtype)
    ct = kernels.storage_ctype(pd)
    init = _init_expr(op, dtype)
    comb = _combine(op, dtype)

    def OP(a, b):
        return comb.format(a=a, b=b)
    carry_load = kernels.load(pd, "carry", "{}")
    rows = f"""
__kernel void scan_rows(__global {st}* out, __global const {st}* in, const int off, const int K,
                        const int G, const int chunk, const int rev, const int excl,
                        __global const {ct}* carry, const int has_carry,
                        __local {acc}* tile, __local {acc}* tot) {{
  const int L = get_local_size(0), lid = get_local_id(0), grp = get_group_id(0);
  const int a = grp / G, g = grp - a * G;
  const int start = g * chunk, end = min(K, start + chunk);
  const int ibase = off + a * K, obase = a * K;
  {acc} run = {init};
  if (has_carry && g > 0) run = {carry_load.format("a * G + (rev ? G - g : g - 1)")};
  for (int t0 = start; t0 < end; t0 += L * {_V}) {{
    for (int j = lid; j < L * {_V}; j += L) {{
      const int k = t0 + j;
      tile[j] = k < end ? {kernels.load(dtype, "in", "ibase + (rev ? K - 1 - k : k)")} : {init};
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    {acc} s = {init};
    for (int v = 0; v < {_V}; ++v) {{
      const {acc} y = tile[lid * {_V} + v];
      const {acc} ns = {OP("s", "y")};
      tile[lid * {_V} + v] = excl ? s : ns;
      s = ns;
    }}
    tot[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = 1; h < L; h <<= 1) {{
      const {acc} y = lid >= h ? tot[lid - h] : {init};
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid >= h) tot[lid] = {OP("y", "tot[lid]")};
      barrier(CLK_LOCAL_MEM_FENCE);
    }}
    const {acc} before = lid > 0 ? tot[lid - 1] : {init};
    const {acc} pre = {OP("run", "before")};
    for (int v = 0; v < {_V}; ++v) tile[lid * {_V} + v] = {OP("pre", f"tile[lid * {_V} + v]")};
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = lid; j < L * {_V}; j += L) {{
      const int k = t0 + j;
      if (k < end) {{ {kernels.store(dtype, "out", "obase + (rev ? K - 1 - k : k)", "tile[j]")} }}
    }}
    run = {OP("run", "tot[L - 1]")};
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
}}
"""
    cols = f"""
__kernel void scan_cols(__global {st}* out, __global const {st}* in, const int off, const int K,
                        const int B, const int G, const int chunk, const int rev, const int excl,
                        __global const {ct}* carry, const int has_carry, const int n) {{
  const int t = get_global_id(0);
  if (t >= n) return;
  const int b = t % B, ag = t / B, a = ag / G, g = ag - a * G;
  const int start = g * chunk, end = min(K, start + chunk);
  {acc} run = {init};
  if (has_carry && g > 0) run = {carry_load.format("(a * G + (rev ? G - g : g - 1)) * B + b")};
  for (int k = start; k < end; ++k) {{
    const int q = (a * K + (rev ? K - 1 - k : k)) * B + b;
    const {acc} x = {kernels.load(dtype, "in", "off + q")};
    const {acc} nr = {OP("run", "x")};
    {kernels.store(dtype, "out", "q", "excl ? run : nr")}
    run = nr;
  }}
}}
"""
    return rows + cols



# ---- CPU devices: explicit 8-wide vectors --------------------------------------------------
# PoCL (and other CPU runtimes) vectorise across work-items but run each work-item's own loop
# scalar, so a reduction loop per work-item is latency-bound. The CPU kernels therefore give
# each work-item one (row, chunk) or (row-block, chunk, 8 columns) and spell the vector work
# out: 4 x 8 accumulators for rows, 8 lanes of columns, in-register prefix sums for scans.
# Float sums add blocks of 64 x 32 elements before folding them into the totals (two-level
# summation), and lanes and partials are combined pairwise.

_W = 8


def _cols_width(op):
    """Columns per work-item of the CPU cols reduction: 4 vectors (128 contiguous bytes of
    float per row) for plain reductions, one vector for arg reductions."""
    return 8 if op in ("argmax", "argmin") else 32


def _vec_type(dtype):
    return f"{kernels.compute_ctype(dtype)}{_W}"


def _mask_conv(dtype):
    """Comparisons of double vectors give long vectors; of everything else int vectors."""
    return "convert_long8" if dtype == dtypes.float64 else ""


def _load8(dtype, ptr, index):
    if dtype == dtypes.float16:
        return f"vload_half8(0, {ptr} + ({index}))"
    if dtype == dtypes.bool_:
        return f"convert_int8(vload8(0, {ptr} + ({index})))"
    return f"vload8(0, {ptr} + ({index}))"


def _store8(dtype, ptr, index, value):
    if dtype == dtypes.float16:
        return f"vstore_half8({value}, 0, {ptr} + ({index}));"
    if dtype == dtypes.bool_:
        return f"vstore8(convert_uchar8(-(({value}) != 0)), 0, {ptr} + ({index}));"
    return f"vstore8({value}, 0, {ptr} + ({index}));"


def _lane_fold(op, dtype, v):
    """C statements folding the 8-vector `v` into scalar `r` pairwise (8 -> 4 -> 2 -> 1)."""
    acc = kernels.compute_ctype(dtype)
    c4, c2, c1 = (_combine(op, dtype, n) for n in ("4", "2", ""))
    return (f"const {acc}4 h4 = {c4.format(a=f'{v}.lo', b=f'{v}.hi')};\n"
            f"  const {acc}2 h2 = {c2.format(a='h4.lo', b='h4.hi')};\n"
            f"  {acc} r = {c1.format(a='h2.x', b='h2.y')};")


def _better8(op, dtype):
    """C expression (mask vector): is (x, i) better than (bv, bi), lane by lane."""
    cmp = ">" if op == "argmax" else "<"
    cv = _mask_conv(dtype)
    lt = f"{cv}(i < bi)"
    if dtype.kind == "f":
        return (f"((x != x) != (bv != bv)) ? (x != x) : "
                f"(((x != x) | (x == bv)) ? {lt} : (x {cmp} bv))")
    return f"(x {cmp} bv) | ((x == bv) & {lt})"


def _take8(op, dtype, later):
    """Mask vector: should lane value x replace bv, where x comes from a later (later=True)
    or earlier index than bv? Index order is known, so no index compare is needed."""
    cmp = ">" if op == "argmax" else "<"
    if dtype.kind == "f":
        if later:  # ties keep the earlier; the first NaN stays
            return f"(x {cmp} bv) | ((x != x) & (bv == bv))"
        return f"(x {cmp}= bv) | (x != x)"
    return f"(x {cmp} bv)" if later else f"(x {cmp}= bv)"


def _cpu_reduce_kernel(kind, name, op, in_dt, out_dt, acc_dt, in_idx=False, out_val=True):
    """CPU version of _reduce_kernel; one work-item per (a, g) (rows) or (a, g, 8-block of b)
    (cols), n work-items in all. Same arguments, minus local buffers, plus n."""
    arg = op in ("argmax", "argmin")
    acc = kernels.compute_ctype(acc_dt)
    v8 = _vec_type(acc_dt)
    init = _init_expr(op, acc_dt)
    blocked = op == "sum" and acc_dt.kind == "f"
    c1, c8 = (None, None) if arg else (_combine(op, acc_dt), _combine(op, acc_dt, "8"))
    params = []
    if out_val:
        params.append(f"__global {kernels.storage_ctype(out_dt)}* out")
    if arg:
        params.append("__global int* oidx")
    params.append(f"__global const {kernels.storage_ctype(in_dt)}* in")
    if in_idx:
        params.append("__global const int* iidx")
    params += ["const int off", "const int K"] + (["const int B"] if kind == "cols" else [])
    params += ["const int G", "const int chunk", "const int shift"]
    params += (["const int rev"] if arg else []) + ["const int n"]
    L = [f"__kernel void {name}({', '.join(params)}) {{",
         "  const int t = get_global_id(0);",
         "  if (t >= n) return;"]
    if kind == "rows":
        L += ["  const int a = t / G, g = t - a * G;"]
    else:
        cw = _cols_width(op)
        L += [f"  const int NB = (B + {cw - 1}) / {cw}, bb = t % NB, ag = t / NB, a = ag / G, "
              "g = ag - a * G;",
              f"  const int b0 = bb * {cw};"]
    L += [_CHUNK_BOUNDS]

    def scalar_update(pos, ipos, kexpr):
        out = [f"      const {acc} x = {kernels.load(in_dt, 'in', pos)};"]
        if arg:
            idx = f"iidx[{ipos}]" if in_idx else f"(rev ? K - 1 - ({kexpr}) : ({kexpr}))"
            out += [f"      const int i = {idx};",
                    "      if (netcl_better(x, i, r, ri)) { r = x; ri = i; }"]
        else:
            out.append(f"      r = {c1.format(a='r', b='x')};")
        return out

    def store_scalar(index):
        out = []
        if out_val:
            out.append("  " + kernels.store(out_dt, "out", index, "r"))
        if arg:
            out.append(f"  oidx[{index}] = ri;")
        return out

    if kind == "rows":
        L.append("  const int base = off + a * K;")
        L.append("  int k = start;")
        if arg:
            L += [f"  {v8} bv = ({v8})({init});",
                  "  int8 bi = (int8)(INT_MAX);",
                  "  const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7);",
                  ]
            mt = "long8" if acc_dt == dtypes.float64 else "int8"
            im = "convert_int8(m)" if acc_dt == dtypes.float64 else "m"

            def arg_loop(i_expr, mask, indent="  "):
                return [f"{indent}for (; k + 8 <= end; k += 8) {{",
                        f"{indent}  const {v8} x = {_load8(in_dt, 'in', 'base + k')};",
                        f"{indent}  const int8 i = {i_expr};",
                        f"{indent}  const {mt} m = {mask};",
                        f"{indent}  bv = m ? x : bv;",
                        f"{indent}  bi = {im} ? i : bi;",
                        f"{indent}}}"]
            if in_idx:
                L += arg_loop("vload8(0, iidx + (a * K + k))", _better8(op, acc_dt))
            else:
                L += ["  if (!rev) {"]
                L += arg_loop("(int8)(k) + lane", _take8(op, acc_dt, True), "    ")
                L += ["  } else {"]
                L += arg_loop("(int8)(K - 1 - k) - lane", _take8(op, acc_dt, False), "    ")
                L += ["  }"]
            L += [
                  f"  {acc} r = {init};",
                  "  int ri = INT_MAX;",
                  ] + [f"  if (netcl_better(bv.s{j}, bi.s{j}, r, ri)) "
                       f"{{ r = bv.s{j}; ri = bi.s{j}; }}"
                       for j in range(8)]
        else:
            L += [f"  {v8} s0 = ({v8})({init}), s1 = s0, s2 = s0, s3 = s0;"]

            def step(v):
                return [f"{v}{j} = "
                        f"{c8.format(a=f'{v}{j}', b=_load8(in_dt, 'in', f'base + k + {8 * j}'))};"
                        for j in range(4)]
            if blocked:
                L += ["  while (k + 32 <= end) {",
                      "    const int stop = min(end - 31, k + 2048);",
                      f"    {v8} t0 = ({v8})(0), t1 = t0, t2 = t0, t3 = t0;",
                      "    for (; k < stop; k += 32) {"]
                L += ["      " + x for x in step("t")]
                L += ["    }",
                      "    s0 += t0; s1 += t1; s2 += t2; s3 += t3;",
                      "  }"]
            else:
                L += ["  for (; k + 32 <= end; k += 32) {"]
                L += ["    " + x for x in step("s")]
                L += ["  }"]
            pair01, pair23 = c8.format(a="s0", b="s1"), c8.format(a="s2", b="s3")
            L += [f"  const {v8} s = {c8.format(a=pair01, b=pair23)};",
                  "  " + _lane_fold(op, acc_dt, "s")]
        L.append("  for (; k < end; ++k) {")
        L += scalar_update("base + k", "a * K + k", "k")
        L.append("  }")
        L += store_scalar("t")
        L.append("}")
        return "\n".join(L) + "\n"

    # cols: full 8-column vectors, then the remaining columns lane by lane
    L += ["  const int obase = (a * G + g) * B + b0;"]
    if arg:
        L += ["  if (b0 + 8 <= B) {",
              "    int p = off + (a * K + start) * B + b0;",
              f"    {v8} bv = ({v8})({init});",
              "    int8 bi = (int8)(INT_MAX);",
              "    for (int k = start; k < end; ++k, p += B) {",
              f"      const {v8} x = {_load8(in_dt, 'in', 'p')};"]
        mt = "long8" if acc_dt == dtypes.float64 else "int8"
        im = "convert_int8(m)" if acc_dt == dtypes.float64 else "m"
        if in_idx:
            L += ["      const int8 i = vload8(0, iidx + (p - off));",
                  f"      const {mt} m = {_better8(op, acc_dt)};"]
        else:
            L += ["      const int8 i = (int8)(rev ? K - 1 - k : k);",
                  f"      const {mt} m = rev ? ({_take8(op, acc_dt, False)}) : "
                  f"({_take8(op, acc_dt, True)});"]
        L += ["      bv = m ? x : bv;",
              f"      bi = {im} ? i : bi;",
              "    }"]
        if out_val:
            L.append("    " + _store8(out_dt, "out", "obase", "bv"))
        L += ["    vstore8(bi, 0, oidx + obase);",
              "  } else {",
              "    for (int j = 0; j < B - b0; ++j) {"]
    else:
        def vec_loop(nv, col, indent):
            """Loop over k accumulating nv 8-vectors of columns starting at column `col`."""
            pad = " " * indent
            out = [f"{pad}{{",
                   f"{pad}  int p = off + (a * K + start) * B + b0 + {col};",
                   f"{pad}  {v8} " + ", ".join(f"s{u} = ({v8})({init})" for u in range(nv)) + ";"]
            if blocked:
                out += [f"{pad}  int k = start;",
                        f"{pad}  while (k < end) {{",
                        f"{pad}    const int stop = min(end, k + 64);",
                        f"{pad}    {v8} " + ", ".join(f"t{u} = ({v8})(0)" for u in range(nv)) + ";",
                        f"{pad}    for (; k < stop; ++k, p += B) {{"]
                out += [f"{pad}      t{u} += {_load8(in_dt, 'in', f'p + {8 * u}')};"
                        for u in range(nv)]
                out += [f"{pad}    }}",
                        f"{pad}    " + " ".join(f"s{u} += t{u};" for u in range(nv)),
                        f"{pad}  }}"]
            else:
                out += [f"{pad}  for (int k = start; k < end; ++k, p += B) {{"]
                out += [f"{pad}    s{u} = "
                        f"{c8.format(a=f's{u}', b=_load8(in_dt, 'in', f'p + {8 * u}'))};"
                        for u in range(nv)]
                out += [f"{pad}  }}"]
            out += [f"{pad}  " + _store8(out_dt, "out", f"obase + {col} + {8 * u}", f"s{u}")
                    for u in range(nv)]
            out.append(f"{pad}}}")
            return out
        L.append(f"  if (b0 + {cw} <= B) {{")
        L += vec_loop(cw // 8, "0", 4)
        L += ["  } else {",
              "    int j0 = 0;",
              "    for (; b0 + j0 + 8 <= B; j0 += 8)"]
        L += vec_loop(1, "j0", 6)
        L += ["    for (int j = j0; j < B - b0; ++j) {"]
    L += ["      int p = off + (a * K + start) * B + b0 + j;",
          f"      {acc} r = {init};"]
    if arg:
        L.append("      int ri = INT_MAX;")
    L.append("      for (int k = start; k < end; ++k, p += B) {")
    L += ["  " + x for x in scalar_update("p", "p - off", "k")]
    L.append("      }")
    L += ["    " + x for x in store_scalar("obase + j")]
    L += ["    }", "  }", "}"]
    return "\n".join(L) + "\n"


def _cpu_scan_source(op, dtype):
    acc = kernels.compute_ctype(dtype)
    v8 = _vec_type(dtype)
    st = kernels.storage_ctype(dtype)
    pd = _partial_dtype(op, dtype)
    ct = kernels.storage_ctype(pd)
    I = _init_expr(op, dtype)
    c1, c8 = _combine(op, dtype), _combine(op, dtype, "8")

    def OP(a, b, c=c8):
        return c.format(a=a, b=b)
    xs = [f"x.s{j}" for j in range(8)]
    fwd = [f"({v8})({I}, {', '.join(xs[:7])})",
           f"({v8})({I}, {I}, {', '.join(xs[:6])})",
           f"({v8})(({acc}4)({I}), x.lo)"]
    bwd = [f"({v8})({', '.join(xs[1:])}, {I})",
           f"({v8})({', '.join(xs[2:])}, {I}, {I})",
           f"({v8})(x.hi, ({acc}4)({I}))"]
    excl_f = f"({v8})(run, {', '.join(xs[:7])})"
    excl_b = f"({v8})({', '.join(xs[1:])}, run)"

    def vec_loop(shifts, excl, last, pos):
        """One loop per (direction, exclusive): no runtime flag inside the vector loop."""
        body = ["    for (; k + 8 <= end; k += 8) {",
                f"      {v8} x = {_load8(dtype, 'in', f'ibase + {pos}')};"]
        body += [f"      x = {OP(sh, 'x')};" for sh in shifts]
        body += [f"      x = {OP(f'({v8})(run)', 'x')};",
                 "      " + _store8(dtype, "out", f"obase + {pos}", excl or "x"),
                 f"      run = x.{last};",
                 "    }"]
        return body
    rows = [f"__kernel void scan_rows(__global {st}* out, __global const {st}* in, const int off,",
            "    const int K, const int G, const int chunk, const int rev, const int excl,",
            f"    __global const {ct}* carry, const int has_carry, const int n) {{",
            "  const int t = get_global_id(0);",
            "  if (t >= n) return;",
            "  const int a = t / G, g = t - a * G;",
            "  const int start = g * chunk, end = min(K, start + chunk);",
            "  const int ibase = off + a * K, obase = a * K;",
            f"  {acc} run = {I};",
            "  if (has_carry && g > 0) run = "
            f"{kernels.load(pd, 'carry', 'a * G + (rev ? G - g : g - 1)')};",
            "  int k = start;",
            "  if (!rev && !excl) {"]
    rows += vec_loop(fwd, None, "s7", "k")
    rows += ["  } else if (!rev) {"]
    rows += vec_loop(fwd, excl_f, "s7", "k")
    rows += ["  } else if (!excl) {"]
    rows += vec_loop(bwd, None, "s0", "(K - 8 - k)")
    rows += ["  } else {"]
    rows += vec_loop(bwd, excl_b, "s0", "(K - 8 - k)")
    rows += ["  }",
             "  for (; k < end; ++k) {",
             "    const int q = rev ? K - 1 - k : k;",
             f"    const {acc} y = {kernels.load(dtype, 'in', 'ibase + q')};",
             f"    const {acc} nr = {OP('run', 'y', c1)};",
             "    " + kernels.store(dtype, "out", "obase + q", "excl ? run : nr"),
             "    run = nr;",
             "  }",
             "}"]
    cols = [f"__kernel void scan_cols(__global {st}* out, __global const {st}* in, const int off,",
            "    const int K, const int B, const int G, const int chunk, const int rev,",
            f"    const int excl, __global const {ct}* carry, const int has_carry, const int n) {{",
            "  const int t = get_global_id(0);",
            "  if (t >= n) return;",
            "  const int NB = (B + 7) >> 3, bb = t % NB, ag = t / NB, a = ag / G, g = ag - a * G;",
            "  const int b0 = bb << 3;",
            "  const int start = g * chunk, end = min(K, start + chunk);",
            "  const int cpos = (a * G + (rev ? G - g : g - 1)) * B + b0;",
            "  if (b0 + 8 <= B) {",
            f"    {v8} run = ({v8})({I});",
            f"    if (has_carry && g > 0) run = {_load8(pd, 'carry', 'cpos')};",
            "    for (int k = start; k < end; ++k) {",
            "      const int q = (a * K + (rev ? K - 1 - k : k)) * B + b0;",
            f"      const {v8} y = {_load8(dtype, 'in', 'off + q')};",
            f"      const {v8} nr = {OP('run', 'y')};",
            "      " + _store8(dtype, "out", "q", "excl ? run : nr"),
            "      run = nr;",
            "    }",
            "  } else {",
            "    for (int j = 0; j < B - b0; ++j) {",
            f"      {acc} run = {I};",
            "      if (has_carry && g > 0) run = "
            f"{kernels.load(pd, 'carry', 'cpos + j')};",
            "      for (int k = start; k < end; ++k) {",
            "        const int q = (a * K + (rev ? K - 1 - k : k)) * B + b0 + j;",
            f"        const {acc} y = {kernels.load(dtype, 'in', 'off + q')};",
            f"        const {acc} nr = {OP('run', 'y', c1)};",
            "        " + kernels.store(dtype, "out", "q", "excl ? run : nr"),
            "        run = nr;",
            "      }",
            "    }",
            "  }",
            "}"]
    return "\n".join(rows) + "\n" + "\n".join(cols) + "\n"


# =============================================================================================
# Launch planning
# =============================================================================================

_wg_cache = {}


def _pow2_floor(n):
    return 1 << (max(1, int(n)).bit_length() - 1)


def _group_size(device, k, key, per_item_local):
    """Power-of-two work-group size for kernel k (cached under key) within the device's
    limits, leaving room for per_item_local bytes of local memory per work-item."""
    key = (device, key, per_item_local)
    L = _wg_cache.get(key)
    if L is None:
        limit = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device.cl_device)
        L = min(device.work_group, device.capabilities.max_work_group_size, limit)
        if per_item_local:
            L = min(L, max(1, (device.capabilities.local_mem_size - 1024) // per_item_local))
        L = _pow2_floor(L)
        _wg_cache[key] = L
    return L


_FORCE_STYLE = None  # tests set "gpu" to run the GPU kernel family on a CPU device
# work-items per core on CPUs when rows are few: several, so a preempted thread (a busy
# machine) delays a small share of the work
_CPU_ITEMS_PER_CORE = 32


def _style(device):
    """Kernel family: 'cpu' (explicit vectors, one work-item per row or column block) or
    'gpu' (work-groups with local-memory trees; also accelerators)."""
    if _FORCE_STYLE is not None:
        return _FORCE_STYLE
    return "cpu" if device.kind == "cpu" else "gpu"


def _use_rows(device, K, B):
    """Rows kernel (contiguous reduced block) or cols kernel (work-item per output)?"""
    if B != 1:
        return False
    if _style(device) == "cpu":
        return True
    return K > 32


def _split(device, A, K, B, rows, op="sum"):
    """(G, chunk): how many chunks each reduced row is split into for pass 1, so that a few
    long rows still give every compute unit work."""
    cu = device.capabilities.compute_units
    if K <= 1:
        return 1, max(K, 1)
    if _style(device) == "cpu":
        target = cu * _CPU_ITEMS_PER_CORE
        if rows:
            if A >= target:
                return 1, K
            G = min(-(-K // 1024), -(-target // A))
            chunk = kernels.round_up(-(-K // max(G, 1)), 32)
        else:
            items = A * (-(-B // (_cols_width(op) if op else _W)))
            if items >= target:
                return 1, K
            G = min(-(-K // 64), -(-target // items))
            chunk = -(-K // max(G, 1))
    elif rows:
        L = device.work_group
        target = cu * 8
        if A >= target:
            return 1, K
        G = min(-(-K // (L * 32)), -(-target // A))
        chunk = kernels.round_up(-(-K // max(G, 1)), L)
    else:
        target = cu * 2048
        if A * B >= target:
            return 1, K
        G = min(-(-K // 32), -(-target // (A * B)))
        chunk = -(-K // max(G, 1))
    G = -(-K // chunk)
    return (G, chunk) if G > 1 else (1, K)


def _options(style, dtype):
    """Build options: double8 is wider than AVX2 registers, which clang notes as an ABI
    warning for every vector builtin; the code is right, so keep the build log quiet."""
    return ("-w",) if style == "cpu" and dtype == dtypes.float64 else ()


def _cpu_geometry(device, n, total):
    """(global, local) for n independent work-items reading `total` elements in all, on a
    CPU device. Each item loops over its data, so groups of one item spread best over the
    cores; with very many items, or little work in all, the per-group cost shows and groups
    of 8 win. Two local sizes in all: PoCL builds one function per local size."""
    L = 8 if n > 4096 or total < 65536 else 1
    return (kernels.round_up(n, L),), (L,)


def _layout(x):
    """(base, order, flipped) when x's elements fill a dense block of memory in some axis
    order, some axes possibly reversed: `order` lists the axes of size > 1 from slowest to
    fastest in memory, `base` is the element offset of the block's start. None otherwise."""
    dims = [d for d in range(x.ndim) if x.shape[d] != 1]
    if x._contig:
        return x.offset, tuple(dims), frozenset()
    if any(x.strides[d] == 0 for d in dims):
        return None
    order = sorted(dims, key=lambda d: -abs(x.strides[d]))
    expect = 1
    for d in reversed(order):
        if abs(x.strides[d]) != expect:
            return None
        expect *= x.shape[d]
    flipped = frozenset(d for d in dims if x.strides[d] < 0)
    base = x.offset + sum((x.shape[d] - 1) * x.strides[d] for d in flipped)
    return base, tuple(order), flipped


def _copy_dense(x):
    """A dense copy of the (strided) view x, run eagerly."""
    from ..core.eval import eval_interpreter
    from .elementwise import copy_p
    return eval_interpreter.process(copy_p, (x,), {})


def _prepare(x, reduced):
    """Plan how the kernels read x: (pre, base, A, K, B, phys_kept, flipped).

    `pre` maps the launched array to the one the kernels read (identity, or a copy with
    the reduced axes last); phys_kept lists the kept axes (size > 1) in the order the
    kernels write them.
    """
    lay = _layout(x)
    pre = None
    if lay is not None:
        base, order, flipped = lay
        marks = [d in reduced for d in order]
        runs = sum(1 for i, m in enumerate(marks) if m and (i == 0 or not marks[i - 1]))
    if lay is None or runs > 1:
        perm = tuple(d for d in range(x.ndim) if d not in reduced) + tuple(sorted(reduced))
        shape = tuple(x.shape[d] for d in perm)
        strides = tuple(x.strides[d] for d in perm)

        def pre(a, perm=perm, shape=shape, strides=strides):
            return _copy_dense(a._view(shape, strides, a.offset))
        base, order, flipped = 0, tuple(d for d in perm if x.shape[d] != 1), frozenset()
    A = K = B = 1
    seen = False
    for d in order:
        if d in reduced:
            K *= x.shape[d]
            seen = True
        elif seen:
            B *= x.shape[d]
        else:
            A *= x.shape[d]
    phys_kept = tuple(d for d in order if d not in reduced)
    return pre, base, A, K, B, phys_kept, flipped


def _out_maker(device, x_shape, reduced, phys_kept, flipped, out_aval, dtype=None):
    """new() -> (dense buffer array written by the kernels, the Array returned to the user)."""
    dtype = out_aval.dtype if dtype is None else dtype
    shape, weak = out_aval.shape, out_aval.weak_type
    kept = [d for d in range(len(x_shape)) if d not in reduced]
    logical = tuple(d for d in kept if x_shape[d] != 1)
    if phys_kept == logical and not (flipped & set(phys_kept)):
        return _dense_maker(device, shape, dtype, weak), None
    phys_shape = tuple(x_shape[d] for d in phys_kept)
    pstr = dict(zip(phys_kept, contiguous_strides(phys_shape)))
    strides, offset = [], 0
    for d in kept:
        if x_shape[d] == 1:
            strides.append(0)
        elif d in flipped:
            strides.append(-pstr[d])
            offset += (x_shape[d] - 1) * pstr[d]
        else:
            strides.append(pstr[d])
    strides = tuple(strides)

    def view(buf):
        return buf._view(shape, strides, offset)
    return _dense_maker(device, phys_shape, dtype, weak), view


def _dense_maker(device, shape, dtype, weak):
    """new() -> an uninitialised dense Array (what Array.empty does, precomputed)."""
    from ..core.pool import Storage
    pool, strides, nbytes = device.pool, contiguous_strides(shape), prod(shape) * dtype.itemsize

    def new():
        st = Storage(pool, nbytes)
        return Array(device, st.buf, st, shape, dtype, strides, 0, weak, True)
    return new


def _Pass(k, gsize, lsize, nbuf):
    """One kernel launch with its scalar arguments set once: fn(queue, *buffers)."""
    set_arg, enqueue = k.set_arg, cl.enqueue_nd_range_kernel
    if nbuf == 2:
        def run2(queue, b0, b1):
            set_arg(0, b0)
            set_arg(1, b1)
            enqueue(queue, k, gsize, lsize)
        return run2

    def run(queue, *bufs):
        for i, b in enumerate(bufs):
            set_arg(i, b)
        enqueue(queue, k, gsize, lsize)
    return run


def _make_pass(device, op, dtype, variant, A, K, B, G, chunk, off, rows, arg=False, shift=0,
               rev=0):
    """A reduction pass over (A, K, B) split in G chunks. variant: final | part | fold."""
    kind = "rows" if rows else "cols"
    name = f"{kind}_{variant}"
    style = _style(device)
    k = kernels.kernel(device, _reduce_source(op, dtype, style), name,
                       options=_options(style, dtype))
    # buffer arguments come first: [out], [oidx], in, [iidx]
    nbuf = 2 + (arg and variant != "final")
    i = nbuf
    vals = [off, K] + ([] if rows else [B]) + [G, chunk, shift] + ([rev] if arg else [])
    for v in vals:
        k.set_arg(i, np.int32(v))
        i += 1
    if style == "cpu":
        n = A * G * (1 if rows else -(-B // _cols_width(op)))
        k.set_arg(i, np.int32(n))
        gsize, lsize = _cpu_geometry(device, n, A * K * B)
        return _Pass(k, gsize, lsize, nbuf)
    acc_size = max(4, dtype.itemsize)  # half and bool accumulate in float / int
    if rows:
        L = _group_size(device, k, (op, dtype, name), acc_size + (4 if arg else 0))
        k.set_arg(i, cl.LocalMemory(L * acc_size))
        if arg:
            k.set_arg(i + 1, cl.LocalMemory(L * 4))
        return _Pass(k, (A * G * L,), (L,), nbuf)
    n = A * G * B
    k.set_arg(i, np.int32(n))
    L = _group_size(device, k, (op, dtype, name), 0)
    return _Pass(k, (kernels.round_up(n, L),), (L,), nbuf)


def _check_size(name, x):
    if x.size > _INDEX_LIMIT:
        raise ValueError(f"{name}: arrays of {x.size} elements exceed the 2^31 index limit")


def _reduce_launcher(op):
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        _check_size(op, x)
        reduced = set(params["axes"])
        n_out = prod(out_aval.shape)
        if n_out == 0:
            return lambda x: Array.empty(device, out_aval.shape, out_aval.dtype,
                                         out_aval.weak_type)
        dtype = x.dtype
        queue, pool = device.queue, device.pool
        if x.size == 0:  # empty reduction: the identity everywhere
            p = _make_pass(device, op, dtype, "final", n_out, 0, 1, 1, 1, 0, rows=False)

            def launch_empty(x):
                out = Array.empty(device, out_aval.shape, dtype, out_aval.weak_type)
                p(queue, out._buf, x._buf)
                return out
            return launch_empty
        pre, base, A, K, B, phys_kept, flipped = _prepare(x, reduced)
        new, view = _out_maker(device, x.shape, reduced, phys_kept, flipped, out_aval)
        rows = _use_rows(device, K, B)
        G, chunk = _split(device, A, K, B, rows, op)
        if G == 1:
            p1 = _make_pass(device, op, dtype, "final", A, K, B, 1, K, base, rows)

            def launch(x):
                if pre is not None:
                    x = pre(x)
                out = new()
                p1(queue, out._buf, x._buf)
                return out if view is None else view(out)
            return launch
        pd = _partial_dtype(op, dtype)
        p1 = _make_pass(device, op, dtype, "part", A, K, B, G, chunk, base, rows)
        rows2 = _use_rows(device, G, B)
        p2 = _make_pass(device, op, dtype, "fold", A, G, B, 1, G, 0, rows2)
        tmp_bytes = A * G * B * pd.itemsize
        from ..core.pool import Storage

        def launch2(x):
            if pre is not None:
                x = pre(x)
            out = new()
            tmp = Storage(pool, tmp_bytes)
            p1(queue, tmp.buf, x._buf)
            p2(queue, out._buf, tmp.buf)
            return out if view is None else view(out)
        return launch2
    return make_launcher


def _arg_launcher(op):
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        _check_size(op, x)
        axis = params["axis"]
        n_out = prod(out_aval.shape)
        if n_out == 0:
            return lambda x: Array.empty(device, out_aval.shape, out_aval.dtype, False)
        dtype = x.dtype
        queue, pool = device.queue, device.pool
        reduced = {axis}
        pre, base, A, K, B, phys_kept, flipped = _prepare(x, reduced)
        rev = int(axis in flipped and x.shape[axis] > 1)
        new, view = _out_maker(device, x.shape, reduced, phys_kept, flipped, out_aval,
                               dtypes.int32)
        rows = _use_rows(device, K, B)
        G, chunk = _split(device, A, K, B, rows, op)
        cast = out_aval.dtype != dtypes.int32

        def finish(out):
            out = out if view is None else view(out)
            if cast:
                from ..core.eval import eval_interpreter
                from .elementwise import convert_element_type_p
                out = eval_interpreter.process(convert_element_type_p, (out,), dict(
                    new_dtype=out_aval.dtype, weak_type=False))
            return out
        if G == 1:
            p1 = _make_pass(device, op, dtype, "final", A, K, B, 1, K, base, rows, arg=True,
                            rev=rev)

            def launch(x):
                if pre is not None:
                    x = pre(x)
                out = new()
                p1(queue, out._buf, x._buf)
                return finish(out)
            return launch
        p1 = _make_pass(device, op, dtype, "part", A, K, B, G, chunk, base, rows, arg=True,
                        rev=rev)
        rows2 = _use_rows(device, G, B)
        p2 = _make_pass(device, op, dtype, "fold", A, G, B, 1, G, 0, rows2, arg=True)
        m = A * G * B
        from ..core.pool import Storage

        def launch2(x):
            if pre is not None:
                x = pre(x)
            out = new()
            vals, idx = Storage(pool, m * dtype.itemsize), Storage(pool, m * 4)
            p1(queue, vals.buf, idx.buf, x._buf)
            p2(queue, out._buf, vals.buf, idx.buf)
            return finish(out)
        return launch2
    return make_launcher


_SCAN_REDUCE = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "ffill": None}


def _scan_pass(device, op, dtype, A, K, B, G, chunk, off, rev, excl, rows):
    """A scan pass over (A, K, B) in G chunks; buffers: out, in, carry (or None)."""
    style = _style(device)
    name = "scan_rows" if rows else "scan_cols"
    k = kernels.kernel(device, _scan_source(op, dtype, style), name,
                       options=_options(style, dtype))
    vals = [off, K] + ([] if rows else [B]) + [G, chunk, rev, excl]
    for i, v in enumerate(vals):
        k.set_arg(2 + i, np.int32(v))
    i = 2 + len(vals)  # the carry buffer
    k.set_arg(i + 1, np.int32(1 if G > 1 else 0))
    acc_size = max(4, dtype.itemsize)
    if style == "cpu":
        n = A * G * (1 if rows else -(-B // _W))
        k.set_arg(i + 2, np.int32(n))
        gsize, lsize = _cpu_geometry(device, n, A * K * B)
    elif rows:
        L = _group_size(device, k, (op, dtype, name), acc_size * (_V + 1))
        k.set_arg(i + 2, cl.LocalMemory(L * _V * acc_size))
        k.set_arg(i + 3, cl.LocalMemory(L * acc_size))
        gsize, lsize = (A * G * L,), (L,)
    else:
        n = A * G * B
        k.set_arg(i + 2, np.int32(n))
        L = _group_size(device, k, (op, dtype, name), 0)
        gsize, lsize = (kernels.round_up(n, L),), (L,)
    enqueue = cl.enqueue_nd_range_kernel

    def run(queue, out, x, carry):
        k.set_arg(0, out)
        k.set_arg(1, x)
        k.set_arg(i, carry)
        enqueue(queue, k, gsize, lsize)
    return run


def _scan_launcher(op):
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        _check_size(op, x)
        axis, reverse = params["axis"], params["reverse"]
        excl = int(params.get("exclusive", False))
        dtype = x.dtype
        queue, pool = device.queue, device.pool
        if x.size == 0:
            return lambda x: Array.empty(device, x.shape, dtype, out_aval.weak_type)
        lay = _layout(x)
        pre = None
        if lay is None:
            pre = _copy_dense
            lay = (0, tuple(d for d in range(x.ndim) if x.shape[d] != 1), frozenset())
        base, order, flipped = lay
        if axis in order:
            j = order.index(axis)
            A, K, B = prod(x.shape[d] for d in order[:j]), x.shape[axis], \
                prod(x.shape[d] for d in order[j + 1:])
        else:
            A, K, B = prod(x.shape[d] for d in order), 1, 1
        rev = int(bool(reverse) != (axis in flipped))
        # the output is written in the input's memory order: a permuted/reversed view
        new, view = _out_maker(device, x.shape, set(), order, flipped, out_aval)
        rows = _use_rows(device, K, B)
        G, chunk = _split(device, A, K, B, rows, None)
        if G == 1 or _SCAN_REDUCE[op] is None:  # (ffill's chunks do not fold in any order)
            s1 = _scan_pass(device, op, dtype, A, K, B, 1, K, base, rev, excl, rows)

            def launch(x):
                if pre is not None:
                    x = pre(x)
                out = new()
                s1(queue, out._buf, x._buf, None)
                return out if view is None else view(out)
            return launch
        # reduce-then-scan: chunk totals, their inclusive scan, then each chunk with a carry
        pd = _partial_dtype(op, dtype)
        shift = G * chunk - K if rev else 0  # reversed chunks, seen from the front
        p1 = _make_pass(device, _SCAN_REDUCE[op], dtype, "part", A, K, B, G, chunk, base, rows,
                        shift=shift)
        rows2 = _use_rows(device, G, B)
        s2 = _scan_pass(device, op, pd, A, G, B, 1, G, 0, rev, 0, rows2)
        s3 = _scan_pass(device, op, dtype, A, K, B, G, chunk, base, rev, excl, rows)
        m = A * G * B
        from ..core.pool import Storage

        def launch3(x):
            if pre is not None:
                x = pre(x)
            out = new()
            tot, car = Storage(pool, m * pd.itemsize), Storage(pool, m * pd.itemsize)
            p1(queue, tot.buf, x._buf)
            s2(queue, car.buf, tot.buf, None)
            s3(queue, out._buf, x._buf, car.buf)
            return out if view is None else view(out)
        return launch3
    return make_launcher


# =============================================================================================
# Abstract evaluation and NumPy references
# =============================================================================================

_KIND_NAMES = {"f": "floating", "i": "signed integer", "u": "unsigned integer", "b": "bool"}


def _check_dtype(name, x, kinds):
    if x.dtype.kind not in kinds:
        allowed = " or ".join(_KIND_NAMES[k] for k in kinds)
        raise TypeError(f"{name}: operand of dtype {x.dtype} is not supported; it needs {allowed}")


def _check_axes(name, x, axes):
    if not isinstance(axes, tuple) or any(type(a) is not int for a in axes):
        raise TypeError(f"{name}: axes must be a tuple of ints, got {axes!r}")
    if any(not 0 <= a < x.ndim for a in axes) or list(axes) != sorted(set(axes)):
        raise ValueError(f"{name}: axes {axes} must be sorted, distinct axes of an operand of "
                         f"shape {tuple(x.shape)} (rank {x.ndim})")


def _reduce_abstract(name, kinds):
    def abstract_eval(x, *, axes):
        _check_dtype(name, x, kinds)
        _check_axes(name, x, axes)
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return abstract_eval


def _check_axis(name, x, axis):
    if type(axis) is not int:
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of shape "
                         f"{tuple(x.shape)} (rank {x.ndim})")


def _arg_abstract(name):
    def abstract_eval(x, *, axis, index_dtype):
        _check_dtype(name, x, "fiub")
        _check_axis(name, x, axis)
        if x.shape[axis] == 0:
            raise ValueError(f"{name}: axis {axis} of shape {tuple(x.shape)} is empty; "
                             f"{name} of an empty sequence is undefined")
        if not isinstance(index_dtype, np.dtype) or index_dtype.kind not in "iu":
            raise TypeError(f"{name}: index_dtype must be an integer dtype, got {index_dtype!r}")
        shape = tuple(s for i, s in enumerate(x.shape) if i != axis)
        return ShapedArray(shape, index_dtype, False)
    return abstract_eval


def _scan_abstract(name, kinds):
    def abstract_eval(x, *, axis, reverse, exclusive=False):
        _check_dtype(name, x, kinds)
        _check_axis(name, x, axis)
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return abstract_eval


def _work(x):
    """Reference computations of float16 happen in float32 (as the kernels do)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _identity_value(op, dtype):
    if dtype == np.bool_:
        return op == "min"
    if dtype.kind == "f":
        return -np.inf if op == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if op == "max" else info.max


def _ref_reduce(op):
    def ref(x, *, axes):
        with np.errstate(all="ignore"):
            w = _work(x)
            if op == "sum":
                r = np.sum(w, axis=axes, dtype=w.dtype)
            elif op == "prod":
                r = np.prod(w, axis=axes, dtype=w.dtype)
            else:
                fn = np.max if op == "max" else np.min
                r = fn(w, axis=axes, initial=_identity_value(op, x.dtype))
            return np.asarray(r).astype(x.dtype)
    return ref


def _ref_arg(op):
    def ref(x, *, axis, index_dtype):
        fn = np.argmax if op == "argmax" else np.argmin
        return np.asarray(fn(_work(x), axis=axis)).astype(index_dtype)
    return ref


def _ffill_np(w, axis):
    out = np.array(w, copy=True)
    moved = np.moveaxis(out, axis, 0)
    for k in range(1, moved.shape[0]):
        moved[k] = np.where(np.isnan(moved[k]), moved[k - 1], moved[k])
    return out


def _ref_scan(op):
    def ref(x, *, axis, reverse, exclusive=False):
        w = _work(x)
        if reverse:
            w = np.flip(w, axis)
        with np.errstate(all="ignore"):
            if op == "sum":
                r = np.cumsum(w, axis=axis, dtype=w.dtype)
            elif op == "prod":
                r = np.cumprod(w, axis=axis, dtype=w.dtype)
            elif op == "max":
                r = np.maximum.accumulate(w, axis=axis) if w.size else w
            elif op == "min":
                r = np.minimum.accumulate(w, axis=axis) if w.size else w
            else:
                r = _ffill_np(w, axis)
        if exclusive and r.size:
            r = np.moveaxis(r, axis, 0)
            r = np.concatenate([np.full((1,) + r.shape[1:], np.nan, r.dtype), r[:-1]])
            r = np.moveaxis(r, 0, axis)
        if reverse:
            r = np.flip(r, axis)
        return np.ascontiguousarray(r).astype(x.dtype)
    return ref


# =============================================================================================
# The primitives
# =============================================================================================

def _lowering(op):
    """For jit's fusion pass: dtype -> (identity C expression, combine template over {a}
    (earlier) and {b} (later)), in the accumulator type (float for float16)."""
    return lambda dtype: (_init_expr(op, dtype), _combine(op, dtype))


def _reduce_prim(op, kinds):
    p = Primitive(f"reduce_{op}", fusion="reduction", precision="keep_fp32")
    p.abstract_eval = _reduce_abstract(p.name, kinds)
    p.make_launcher = _reduce_launcher(op)
    p.reference = _ref_reduce(op)
    p.lowering = _lowering(op)
    return p


reduce_sum_p = _reduce_prim("sum", "fiu")
reduce_prod_p = _reduce_prim("prod", "fiu")
reduce_max_p = _reduce_prim("max", "fiub")
reduce_min_p = _reduce_prim("min", "fiub")

argmax_p = Primitive("argmax", fusion="reduction")
argmin_p = Primitive("argmin", fusion="reduction")
for _p, _op in ((argmax_p, "argmax"), (argmin_p, "argmin")):
    _p.abstract_eval = _arg_abstract(_op)
    _p.make_launcher = _arg_launcher(_op)
    _p.reference = _ref_arg(_op)


def _scan_prim(name, op, kinds):
    p = Primitive(name, fusion="reduction", precision="keep_fp32")
    p.abstract_eval = _scan_abstract(name, kinds)
    p.make_launcher = _scan_launcher(op)
    p.reference = _ref_scan(op)
    p.lowering = _lowering(op)
    return p


cumsum_p = _scan_prim("cumsum", "sum", "fiu")
cumprod_p = _scan_prim("cumprod", "prod", "fiu")
cummax_p = _scan_prim("cummax", "max", "fiub")
cummin_p = _scan_prim("cummin", "min", "fiub")
# Internal: carry the last non-NaN value forward (NaN marks "no value"); used by the
# derivatives of cummax/cummin and closed under differentiation itself.
ffill_p = _scan_prim("ffill", "ffill", "f")


# =============================================================================================
# lax-level functions
# =============================================================================================

def _axes_param(x, axes, name):
    if isinstance(axes, int) or hasattr(axes, "__index__") and not hasattr(axes, "__len__"):
        axes = (axes,)
    return normalize_axes(tuple(axes), len(x.shape), name, "axes")


def reduce_sum(x, axes):
    """lax.reduce_sum: sum over `axes` (dropped from the result); ints wrap, as XLA's."""
    axes = _axes_param(x, axes, "reduce_sum")
    return reduce_sum_p.bind(x, axes=axes) if axes else x


def reduce_prod(x, axes):
    """lax.reduce_prod: product over `axes`; ints wrap."""
    axes = _axes_param(x, axes, "reduce_prod")
    return reduce_prod_p.bind(x, axes=axes) if axes else x


def reduce_max(x, axes):
    """lax.reduce_max: maximum over `axes` (NaN propagates; empty gives -inf / the min int)."""
    axes = _axes_param(x, axes, "reduce_max")
    return reduce_max_p.bind(x, axes=axes) if axes else x


def reduce_min(x, axes):
    """lax.reduce_min: minimum over `axes` (NaN propagates; empty gives +inf / the max int)."""
    axes = _axes_param(x, axes, "reduce_min")
    return reduce_min_p.bind(x, axes=axes) if axes else x


def _index_dtype(index_dtype, name):
    return dtypes.canonicalize(index_dtype, arg="index_dtype", where=name)


def argmax(x, axis, index_dtype=dtypes.int32):
    """lax.argmax: index of the maximum along `axis` (the first NaN, else the first max)."""
    axis = normalize_axis(axis, len(x.shape), "argmax")
    return argmax_p.bind(x, axis=axis, index_dtype=_index_dtype(index_dtype, "argmax"))


def argmin(x, axis, index_dtype=dtypes.int32):
    """lax.argmin: index of the minimum along `axis` (the first NaN, else the first min)."""
    axis = normalize_axis(axis, len(x.shape), "argmin")
    return argmin_p.bind(x, axis=axis, index_dtype=_index_dtype(index_dtype, "argmin"))


def _scan_fn(p, doc):
    def f(x, axis=0, reverse=False):
        axis = normalize_axis(axis, len(x.shape), p.name)
        return p.bind(x, axis=axis, reverse=bool(reverse))
    f.__name__ = p.name
    f.__doc__ = doc
    return f


cumsum = _scan_fn(cumsum_p, "lax.cumsum: inclusive running sum along `axis` (from the end "
                            "when reverse=True); ints wrap.")
cumprod = _scan_fn(cumprod_p, "lax.cumprod: inclusive running product along `axis`.")
cummax = _scan_fn(cummax_p, "lax.cummax: running maximum along `axis` (NaN propagates).")
cummin = _scan_fn(cummin_p, "lax.cummin: running minimum along `axis` (NaN propagates).")


def _ffill(x, axis, reverse=False, exclusive=False):
    return ffill_p.bind(x, axis=axis, reverse=bool(reverse), exclusive=bool(exclusive))


# =============================================================================================
# Differentiation (written with primitives, so the rules differentiate again)
# =============================================================================================

def _ew():
    from . import elementwise
    return elementwise


def _c(x, v, dtype=None):
    from .views import full_like
    return full_like(x, v, dtype)


def _bcast_back(y, x_shape, axes):
    """Broadcast a reduction's result back to the operand's shape."""
    from .views import broadcast_in_dim
    kept = tuple(d for d in range(len(x_shape)) if d not in axes)
    return broadcast_in_dim(y, tuple(x_shape), kept)


def _tangent_zero(out):
    return Zero(ShapedArray(out.shape, out.dtype, out.weak_type))


def _is_float(x):
    return x.dtype.kind == "f"


# ---- reduce_sum: linear ---------------------------------------------------------------------

def _reduce_sum_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_sum_p.bind(x, axes=axes)
    if is_zero(t):
        return out, _tangent_zero(out)
    return out, reduce_sum_p.bind(t, axes=axes)


def _reduce_sum_vjp(ct, out, x, *, axes):
    return (_bcast_back(ct, x.shape, axes),)


reduce_sum_p.jvp = _reduce_sum_jvp
reduce_sum_p.vjp = _reduce_sum_vjp


# ---- reduce_max / reduce_min: the cotangent is split evenly among the maxima ------------------

def _chooser_weights(x, out, axes):
    """1/count where x equals the reduction result, else 0 (JAX's tie rule)."""
    ew = _ew()
    ind = ew.convert_element_type(ew.eq(x, _bcast_back(out, x.shape, axes)), x.dtype)
    counts = reduce_sum_p.bind(ind, axes=axes)
    return ind, counts


def _chooser_rules(p):
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = p.bind(x, axes=axes)
        if is_zero(t) or not _is_float(x):
            return out, _tangent_zero(out)
        ew = _ew()
        ind, counts = _chooser_weights(x, out, axes)
        return out, ew.div(reduce_sum_p.bind(ew.mul(t, ind), axes=axes), counts)

    def vjp(ct, out, x, *, axes):
        if not _is_float(x):
            return (None,)
        ew = _ew()
        ind, counts = _chooser_weights(x, out, axes)
        return (ew.mul(_bcast_back(ew.div(ct, counts), x.shape, axes), ind),)
    p.jvp, p.vjp = jvp, vjp


_chooser_rules(reduce_max_p)
_chooser_rules(reduce_min_p)


# ---- reduce_prod: product of the others, safe at zeros ------------------------------------------

def _prod_partials(x, out, axes):
    """d out / d x_i = prod_{j != i} x_j, without dividing by zero: P / x_i where the row has
    no zero; the product of the nonzeros at a row's only zero; 0 elsewhere."""
    ew = _ew()
    zero = _c(x, 0)
    iszero = ew.eq(x, zero)
    n0 = reduce_sum_p.bind(ew.convert_element_type(iszero, dtypes.int32), axes=axes)
    n0 = _bcast_back(n0, x.shape, axes)
    x_safe = ew.select(iszero, _c(x, 1), x)
    p_nz = _bcast_back(reduce_prod_p.bind(x_safe, axes=axes), x.shape, axes)
    none = ew.eq(n0, _c(n0, 0))
    one = ew.and_(iszero, ew.eq(n0, _c(n0, 1)))
    return ew.select(none, ew.div(_bcast_back(out, x.shape, axes), x_safe),
                     ew.select(one, p_nz, zero))


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    if is_zero(t) or not _is_float(x):
        return out, _tangent_zero(out)
    ew = _ew()
    return out, reduce_sum_p.bind(ew.mul(t, _prod_partials(x, out, axes)), axes=axes)


def _reduce_prod_vjp(ct, out, x, *, axes):
    if not _is_float(x):
        return (None,)
    ew = _ew()
    return (ew.mul(_bcast_back(ct, x.shape, axes), _prod_partials(x, out, axes)),)


reduce_prod_p.jvp = _reduce_prod_jvp
reduce_prod_p.vjp = _reduce_prod_vjp


# ---- argmax / argmin: integer outputs, no derivative ---------------------------------------------

def _arg_jvp(p):
    def jvp(primals, tangents, **params):
        out = p.bind(*primals, **params)
        return out, _tangent_zero(out)
    return jvp


for _p in (argmax_p, argmin_p):
    _p.jvp = _arg_jvp(_p)
    _p.vjp = lambda ct, out, x, **params: (None,)


# ---- cumsum: linear; the transpose is the cumsum the other way --------------------------------

def _cumsum_jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = cumsum_p.bind(x, axis=axis, reverse=reverse)
    if is_zero(t):
        return out, _tangent_zero(out)
    return out, cumsum_p.bind(t, axis=axis, reverse=reverse)


cumsum_p.jvp = _cumsum_jvp
cumsum_p.vjp = lambda ct, out, x, *, axis, reverse: (
    cumsum_p.bind(ct, axis=axis, reverse=not reverse),)


# ---- cumprod: zero-safe, through the first zero of each row -------------------------------------

def _cumprod_parts(x, axis, reverse):
    """(before, is_z, x_safe, q): before marks positions ahead of the row's first zero, is_z the
    first zero itself; q is the running product with that zero replaced by 1."""
    ew = _ew()
    zero = _c(x, 0)
    iszero = ew.eq(x, zero)
    count = cumsum_p.bind(ew.convert_element_type(iszero, dtypes.int32), axis=axis,
                          reverse=reverse)
    before = ew.eq(count, _c(count, 0))
    is_z = ew.and_(iszero, ew.eq(count, _c(count, 1)))
    x_safe = ew.select(before, x, _c(x, 1))
    q = cumprod_p.bind(ew.select(is_z, _c(x, 1), x), axis=axis, reverse=reverse)
    return before, is_z, x_safe, q


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if is_zero(t) or not _is_float(x):
        return out, _tangent_zero(out)
    ew = _ew()
    before, is_z, x_safe, q = _cumprod_parts(x, axis, reverse)
    zero = _c(x, 0)
    head = ew.mul(out, cumsum_p.bind(ew.select(before, ew.div(t, x_safe), zero), axis=axis,
                                     reverse=reverse))
    tail = ew.mul(q, cumsum_p.bind(ew.select(is_z, t, zero), axis=axis, reverse=reverse))
    return out, ew.select(before, head, tail)


def _cumprod_vjp(ct, out, x, *, axis, reverse):
    if not _is_float(x):
        return (None,)
    ew = _ew()
    before, is_z, x_safe, q = _cumprod_parts(x, axis, reverse)
    head = ew.div(cumsum_p.bind(ew.mul(ct, out), axis=axis, reverse=not reverse), x_safe)
    at_zero = cumsum_p.bind(ew.mul(ct, q), axis=axis, reverse=not reverse)
    return (ew.select(before, head, ew.select(is_z, at_zero, _c(x, 0))),)


cumprod_p.jvp = _cumprod_jvp
cumprod_p.vjp = _cumprod_vjp


# ---- cummax / cummin (and ffill): the derivative follows the most recent position holding the
# running extreme. Written with ffill, whose own rules use ffill and cumsum, so every order of
# differentiation stays within these primitives.

def _nan_where_not(mask, v):
    ew = _ew()
    return ew.select(mask, v, _c(v, float("nan")))


def _segment_sums(ct, valid, axis, reverse, exclusive):
    """For each valid position i: the sum of ct over the positions whose most recent valid
    position (strictly earlier when exclusive) is i; 0 elsewhere."""
    ew = _ew()
    r = cumsum_p.bind(ct, axis=axis, reverse=not reverse)
    if exclusive:
        r = ew.sub(r, ct)
    nxt = _ffill(_nan_where_not(valid, r), axis, reverse=not reverse, exclusive=True)
    nxt = ew.select(ew.ne(nxt, nxt), _c(nxt, 0), nxt)
    return ew.select(valid, ew.sub(r, nxt), _c(ct, 0))


def _cumext_rules(p):
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = p.bind(x, axis=axis, reverse=reverse)
        if is_zero(t) or not _is_float(x):
            return out, _tangent_zero(out)
        hit = _ew().eq(x, out)
        return out, _ffill(_nan_where_not(hit, t), axis, reverse)

    def vjp(ct, out, x, *, axis, reverse):
        if not _is_float(x):
            return (None,)
        return (_segment_sums(ct, _ew().eq(x, out), axis, reverse, False),)
    p.jvp, p.vjp = jvp, vjp


_cumext_rules(cummax_p)
_cumext_rules(cummin_p)


def _ffill_jvp(primals, tangents, *, axis, reverse, exclusive=False):
    (v,), (t,) = primals, tangents
    out = _ffill(v, axis, reverse, exclusive)
    if is_zero(t):
        return out, _tangent_zero(out)
    ew = _ew()
    valid = ew.eq(v, v)
    tout = _ffill(_nan_where_not(valid, t), axis, reverse, exclusive)
    return out, ew.select(ew.ne(tout, tout), _c(tout, 0), tout)


def _ffill_vjp(ct, out, v, *, axis, reverse, exclusive=False):
    ew = _ew()
    return (_segment_sums(ct, ew.eq(v, v), axis, reverse, exclusive),)


ffill_p.jvp = _ffill_jvp
ffill_p.vjp = _ffill_vjp


# =============================================================================================
# Batching: the batch axis is one more kept axis
# =============================================================================================

def _reduce_batch(p):
    def rule(args, dims, *, axes):
        (x,), (d,) = args, dims
        new_axes = tuple(a if a < d else a + 1 for a in axes)
        out_dim = d - sum(1 for a in axes if a < d)
        return p.bind(x, axes=new_axes), out_dim
    return rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p):
    _p.batch = _reduce_batch(_p)


def _arg_batch(p):
    def rule(args, dims, *, axis, index_dtype):
        (x,), (d,) = args, dims
        new_axis = axis if axis < d else axis + 1
        return p.bind(x, axis=new_axis, index_dtype=index_dtype), d - (1 if axis < d else 0)
    return rule


argmax_p.batch = _arg_batch(argmax_p)
argmin_p.batch = _arg_batch(argmin_p)


def _scan_batch(p):
    def rule(args, dims, *, axis, reverse, **params):
        (x,), (d,) = args, dims
        new_axis = axis if axis < d else axis + 1
        return p.bind(x, axis=new_axis, reverse=reverse, **params), d
    return rule


for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, ffill_p):
    _p.batch = _scan_batch(_p)
