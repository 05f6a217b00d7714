"""OpenCL source of the GPU kernel family (GPUs, accelerators).

Rows kernel (B == 1): one work-group of L items per (row, chunk); items stride through the
chunk (coalesced), then a local-memory tree. Cols kernel (B > 1 or short rows): one work-item
per (a, chunk, b) looping over k (coalesced across b); split in many short chunks, its
partials go out transposed (cols_partT) and a rows kernel folds them. Float sums use Kahan compensation inside
each work-item, a tree across items.

Scans: one work-group per (row, chunk), tiles of L*V elements staged in local memory, each
item scans V elements, a Hillis-Steele scan over the L item totals, a carry across tiles
(work O(n + n log L / V)); the cols scan is one work-item per (a, chunk, b).
"""
from ...core import dtypes, kernels
from .kernel_common import _CHUNK_BOUNDS, _combine, _init_expr, _partial_dtype

_V = 8  # elements per work-item per tile in the rows scan


def _reduce_kernel(kind, name, op, in_dt, out_dt, acc_dt, in_idx=False, out_val=True,
                   transposed=False):
    """Source of one reduction kernel: kind 'rows' or 'cols'. A transposed cols kernel
    writes its partials as (A, B, G), each output's G partials contiguous for a rows fold.

    Arguments: [out (out_dt) if out_val], [oidx (int) if arg op], in (in_dt), [iidx if in_idx],
    off, K, (B for cols), G, chunk, shift, [rev if arg op], then the local buffer(s) (rows)
    or n (cols).
    """
    arg = op in ("argmax", "argmin")
    acc = kernels.compute_ctype(acc_dt)
    kahan = op == "sum" and dtypes.kind(acc_dt) == "f"
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
        out_index = "(a * B + b) * G + g" if transposed else "t"
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


def _gpu_scan_source(op, dtype):
    """The GPU family's scan program for (op, dtype): the rows scan and the cols scan."""
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
