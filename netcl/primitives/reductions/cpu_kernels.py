"""OpenCL source of the CPU kernel family: explicit 8-wide vectors.

One work-item per (row, chunk) with 4 x 8-wide accumulators, or per (a, chunk, block of 32
columns); float sums add blocks of 64 x 32 elements before folding them into the totals
(two-level, pairwise across lanes and chunks); scans use in-register prefix sums of 8 lanes
plus a carry.
"""
from ...core import dtypes, kernels
from .kernel_common import _CHUNK_BOUNDS, _combine, _init_expr, _partial_dtype


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


def _mask_conv(dtype, mask):
    """`mask` (an int8 comparison) as the mask type of `dtype`'s comparisons: double vectors
    compare to long vectors, everything else to int vectors."""
    return f"netcl_convert8(long, {mask})" if dtype.itemsize == 8 else f"({mask})"


def _load8(dtype, ptr, index):
    load = kernels.vload(dtype, _W, f"{ptr} + ({index})", cpu=True)
    return f"convert_int8({load})" if dtype == dtypes.bool_ else load


def _store8(dtype, ptr, index, value):
    if dtype == dtypes.bool_:
        value = f"convert_uchar8(-(({value}) != 0))"
    return kernels.vstore(dtype, _W, f"{ptr} + ({index})", value, cpu=True)


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
    lt = _mask_conv(dtype, "i < bi")
    if dtypes.kind(dtype) == "f":
        return (f"((x != x) != (bv != bv)) ? (x != x) : "
                f"(((x != x) | (x == bv)) ? {lt} : (x {cmp} bv))")
    return f"(x {cmp} bv) | ((x == bv) & {lt})"


def _take8(op, dtype, later):
    """Mask vector: should lane value x replace bv, where x comes from a later (later=True)
    or earlier index than bv? Index order is known, so no index compare is needed, except
    that a lane with no index yet (bi == INT_MAX) takes its first value: otherwise a run of
    the identity (all False, all -inf) kept INT_MAX as its index."""
    cmp = ">" if op == "argmax" else "<"
    unset = _mask_conv(dtype, "(bi == (int8)(INT_MAX))")
    if dtypes.kind(dtype) == "f":
        if later:  # ties keep the earlier; the first NaN stays
            return f"(x {cmp} bv) | ((x != x) & (bv == bv)) | {unset}"
        return f"(x {cmp}= bv) | (x != x)"
    return f"(x {cmp} bv) | {unset}" if later else f"(x {cmp}= bv)"


def _cpu_reduce_kernel(kind, name, op, in_dt, out_dt, acc_dt, in_idx=False, out_val=True):
    """CPU version of _reduce_kernel; one work-item per (a, g) (rows) or (a, g, 8-block of b)
    (cols), n work-items in all. Same arguments, minus local buffers, plus n."""
    arg = op in ("argmax", "argmin")
    acc = kernels.compute_ctype(acc_dt)
    v8 = _vec_type(acc_dt)
    init = _init_expr(op, acc_dt)
    blocked = op == "sum" and dtypes.kind(acc_dt) == "f"
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
            mt = "long8" if acc_dt.itemsize == 8 else "int8"
            im = "netcl_convert8(int, m)" if acc_dt.itemsize == 8 else "m"

            def arg_loop(i_expr, mask, indent="  "):
                return [f"{indent}for (; k + 8 <= end; k += 8) {{",
                        f"{indent}  const {v8} x = {_load8(in_dt, 'in', 'base + k')};",
                        f"{indent}  const int8 i = {i_expr};",
                        f"{indent}  const {mt} m = {mask};",
                        f"{indent}  bv = m ? x : bv;",
                        f"{indent}  bi = {im} ? i : bi;",
                        f"{indent}}}"]
            if in_idx:
                L += arg_loop(_load8(dtypes.int32, "iidx", "a * K + k"), _better8(op, acc_dt))
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
        mt = "long8" if acc_dt.itemsize == 8 else "int8"
        im = "netcl_convert8(int, m)" if acc_dt.itemsize == 8 else "m"
        if in_idx:
            L += [f"      const int8 i = {_load8(dtypes.int32, 'iidx', 'p - off')};",
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
        L += ["    " + _store8(dtypes.int32, "oidx", "obase", "bi"),
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
