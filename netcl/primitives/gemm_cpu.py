"""The CPU kind of gemm.py's kernel (PoCL and other CPU drivers): a work-item owns an
``mr x (nv*vw)`` block of C in ``vw``-wide vector registers (an explicit micro-kernel, since
PoCL's implicit vectoriser does not reach loops with inner loops); the B panel of depth
``kc`` is packed into local memory once per work-group, A streamed from global memory (see
gemm.py's docstring). Same signature and epilogues as the tiled GPU kernel."""
from __future__ import annotations

from .gemm import GemmConfig, GemmEpilogue, _comp, _epi_fn, _header, _prologue, _signature, _store_call, _vt


def cpu_source(cfg: GemmConfig, T: str, ta: bool, tb: bool, epilogue: str | None) -> str:
    MR, NR, VW, KC = cfg.tm, cfg.tn, cfg.vec, cfg.bk
    NV = NR // VW
    BN = cfg.bn
    TV = _vt(T, VW)
    src = [_header(T), _epi_fn(T, epilogue)]
    src.append(_group_size(cfg))
    src.append(_signature(epilogue) + " {")
    # packed B panel: sliver s (NR columns) holds KC rows of NR contiguous values
    src.append(f"    __local {TV} Bp4[{KC * BN // VW}];")
    src.append("    __local T* bp = (__local T*)Bp4;")
    if ta:
        # A^T rows are contiguous in m: pack A[m0:m0+BM, k0:k0+kc] into ap[s][k][MR]
        src.append(f"    __local T ap[{KC * cfg.bm}];")
    src.append(_prologue(cfg))
    src.append(_work_item(cfg))
    src.append(f"    const int tid = tx * {cfg.wg_m} + ty;" if cfg.m_fastest else
               f"    const int tid = ty * {cfg.wg_n} + tx;")
    src.append(f"    const int r0 = m0 + ty * {MR};")
    src.append(f"    const int c0 = n0 + tx * {NR};")
    # clamped row pointers of A (rows beyond M read row M-1; their results are not stored)
    for i in range(MR):
        src.append(f"    const int ar{i} = (r0 + {i} < M) ? r0 + {i} : M - 1;")
    src += _accumulators(MR, NV, TV)
    src.append(f"    for (int k0 = 0; k0 < K; k0 += {KC}) {{")
    src.append(f"        const int kc = (K - k0 < {KC}) ? K - k0 : {KC};")
    src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
    # ---- pack B[k0:k0+kc, n0:n0+BN] into bp[s][k][NR].  All work-items of a
    # group run on one CPU thread, so one work-item packing with plain loops
    # (which LLVM vectorises; PoCL's vload/min are out-of-line calls) is as
    # parallel as sharing the work, and much cheaper.
    src.append("        if (tid == 0) {")
    src.append(f"          const int nfull = n0 + {BN} <= N;")
    if not tb:
        src.append("          for (int k = 0; k < kc; ++k) {")
        src.append("            __global const T* p = B + (k0 + k) * ldb + n0;")
        # B is often a weight matrix last written a whole optimizer update ago, out of cache:
        # its rows are 4 KB apart and 256 B long, too short for the hardware prefetcher, and
        # the copy stalls the group. Hence prefetching 8 rows ahead (Clang's builtin, on CPU
        # targets only; PoCL's prefetch() is a no-op), which shortens an MLP train step's
        # forward products.
        src.append("#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))")
        src.append(f"            for (int w = 0; w < {BN}; w += {64 // (4 if T == 'float' else 8)}) "
                   "__builtin_prefetch(p + 8 * ldb + w);")
        src.append("#endif")
        src.append(f"            __local T* d = bp + k * {NR};")
        src.append("            if (nfull) {")
        src.append("#pragma unroll 1")
        src.append(f"              for (int s = 0; s < {BN // NR}; ++s)")
        src.append(f"                for (int w = 0; w < {NR}; ++w) d[s * {KC * NR} + w] = p[s * {NR} + w];")
        src.append("            } else {")
        src.append("#pragma unroll 1")
        src.append(f"              for (int s = 0; s < {BN // NR}; ++s)")
        src.append(f"                for (int w = 0; w < {NR}; ++w)")
        src.append(f"                  d[s * {KC * NR} + w] = (n0 + s * {NR} + w < N) ? p[s * {NR} + w] : (T)0;")
        src.append("            }")
        src.append("          }")
    else:
        # memory holds B^T (N x K): column n of B is contiguous in k
        src.append("#pragma unroll 1")
        src.append(f"          for (int s = 0; s < {BN // NR}; ++s) {{")
        src.append(f"            __local T* d = bp + s * {KC * NR};")
        src.append("            int w0 = 0;")
        if T == "float" and VW == 8:
            src += _transposed_blocks(NR)
        src.append(f"            for (int w = w0; w < {NR}; ++w) {{")
        src.append(f"              const int n = n0 + s * {NR} + w;")
        src.append("              if (n < N) {")
        src.append("                __global const T* p = B + n * ldb + k0;")
        src.append(f"                for (int k = 0; k < kc; ++k) d[k * {NR} + w] = p[k];")
        src.append("              } else {")
        src.append(f"                for (int k = 0; k < kc; ++k) d[k * {NR} + w] = (T)0;")
        src.append("              }")
        src.append("            }")
        src.append("          }")
    if ta:
        # rows of A^T copied whole (ap[k][BM]), a straight vectorised copy: slivers of MR
        # (6) values per k are short strided copies, about twice as costly in a weight
        # gradient (a TN product with a short K) as the row copy
        BMc = cfg.bm
        src.append(f"          const int mfull = m0 + {BMc} <= M;")
        src.append("          for (int k = 0; k < kc; ++k) {")
        src.append("            __global const T* p = A + (k0 + k) * lda + m0;")
        src.append(f"            __local T* d = ap + k * {BMc};")
        src.append("            if (mfull) {")
        src.append(f"              for (int m = 0; m < {BMc}; ++m) d[m] = p[m];")
        src.append("            } else {")
        src.append(f"              for (int m = 0; m < {BMc}; ++m) d[m] = (m0 + m < M) ? p[m] : (T)0;")
        src.append("            }")
        src.append("          }")
    src.append("        }")
    src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
    # ---- micro-kernel
    src.append(f"        __local const {TV}* bq = Bp4 + tx * {KC * NV};")
    if not ta:
        for i in range(MR):
            src.append(f"        __global const T* pa{i} = A + ar{i} * lda + k0;")
    else:
        src.append(f"        __local const T* aq = ap + ty * {MR};")
    src.append("        for (int k = 0; k < kc; ++k) {")
    src += _multiply_add(MR, NV, TV, lambda i: f"pa{i}[k]" if not ta else f"aq[k * {cfg.bm} + {i}]")
    src.append("        }")
    src.append("    }")
    src += _store_tile(cfg, T, epilogue)
    out = "\n".join(src) + "\n"
    # the transposing pack's vector loads, plain vector stores
    return _with_vector_io(out) if (tb and T == "float" and VW == 8) or \
        _plain_vector_store(cfg, T, epilogue) else out


def _transposed_blocks(NR: int) -> list[str]:
    """Packing lines for B^T (float): while 8 whole columns of the sliver remain (``w0`` on),
    8x8 blocks are loaded as 8 row vectors, transposed in registers (the unpack / shuffle /
    lane-swap steps of an AVX transpose, written as swizzles Clang lowers to one instruction
    each) and stored as vectors. An element-by-element copy (strided local stores) would
    take a sizeable share of an NT product's time; the rows' last kc % 8 values and partial
    column blocks still go one by one."""
    def mix(a, b, idx):   # (a|b)[idx...], idx < 8 from a, >= 8 from b
        return "(float8)(" + ", ".join(f"{a if i < 8 else b}.s{i % 8}" for i in idx) + ")"
    lines = [f"            for (; w0 + 8 <= {NR} && n0 + s * {NR} + w0 + 8 <= N; w0 += 8) {{",
             f"              __global const T* p = B + (n0 + s * {NR} + w0) * ldb + k0;",
             "              int k = 0;",
             "              for (; k + 8 <= kc; k += 8) {"]
    lines += [f"                const float8 r{i} = netcl_vload8(float, p + {i} * ldb + k);"
              for i in range(8)]
    lo, hi = (0, 8, 1, 9, 4, 12, 5, 13), (2, 10, 3, 11, 6, 14, 7, 15)   # unpack lo / hi
    for i in range(4):
        lines.append(f"                const float8 t{2 * i} = {mix(f'r{2 * i}', f'r{2 * i + 1}', lo)};")
        lines.append(f"                const float8 t{2 * i + 1} = {mix(f'r{2 * i}', f'r{2 * i + 1}', hi)};")
    even, odd = (0, 1, 8, 9, 4, 5, 12, 13), (2, 3, 10, 11, 6, 7, 14, 15)  # shuffle pairs
    for h in (0, 4):          # rows 0-3, rows 4-7
        t = [f"t{h + j}" for j in range(4)]
        lines.append(f"                const float8 u{h} = {mix(t[0], t[2], even)};")
        lines.append(f"                const float8 u{h + 1} = {mix(t[0], t[2], odd)};")
        lines.append(f"                const float8 u{h + 2} = {mix(t[1], t[3], even)};")
        lines.append(f"                const float8 u{h + 3} = {mix(t[1], t[3], odd)};")
    lines.append(f"                __local float8* q = (__local float8*)(d + k * {NR} + w0);")
    for j in range(8):    # column j of the block: lanes j % 4 of u(j%4) and u(4 + j%4)
        half = "lo" if j < 4 else "hi"
        lines.append(f"                q[{j * NR // 8}] = (float8)(u{j % 4}.{half}, u{4 + j % 4}.{half});")
    lines += ["              }",
              "              for (; k < kc; ++k)",
              f"                for (int w = 0; w < 8; ++w) d[k * {NR} + w0 + w] = p[w * ldb + k];",
              "            }"]
    return lines


def _plain_vector_store(cfg: GemmConfig, T: str, epilogue) -> bool:
    """Whether whole tiles of a product without an epilogue store their accumulators as
    8-wide vectors (netcl_vstore8: the source then carries the vector-I/O preamble)."""
    return epilogue is None and T == "float" and cfg.vec == 8


def _with_vector_io(src: str) -> str:
    """`src` with kernels.PREAMBLE_VECTOR_IO in front (tests build GEMM sources as they are)."""
    from ..core.kernels import PREAMBLE_VECTOR_IO
    return PREAMBLE_VECTOR_IO + src


def _group_size(cfg: GemmConfig) -> str:
    """The kernel's required work-group size, in gemm.launch_dims's order of dimensions."""
    d0, d1 = (cfg.wg_m, cfg.wg_n) if cfg.m_fastest else (cfg.wg_n, cfg.wg_m)
    return f"__attribute__((reqd_work_group_size({d0}, {d1}, 1)))"


def _work_item(cfg: GemmConfig) -> str:
    """``tx`` (the work-item's column sliver) and ``ty`` (its row sliver) in its group."""
    x, y = (1, 0) if cfg.m_fastest else (0, 1)
    return f"    const int tx = get_local_id({x});\n    const int ty = get_local_id({y});"


def _accumulators(MR: int, NV: int, TV: str) -> list[str]:
    """Declarations of a work-item's ``MR x NV`` accumulator vectors ``c{i}_{v}``, zeroed."""
    return ["    " + " ".join(f"{TV} c{i}_{v} = ({TV})(0);" for v in range(NV)) for i in range(MR)]


def _multiply_add(MR: int, NV: int, TV: str, a_at) -> list[str]:
    """The micro-kernel's step ``k``: B's ``NV`` vectors from ``bq``, then each of the ``MR``
    values ``a_at(i)`` of A broadcast and multiplied into row ``i``'s accumulators."""
    src = [f"            const {TV} b{v} = bq[k * {NV} + {v}];" for v in range(NV)]
    for i in range(MR):
        src.append(f"            {{ const {TV} a = ({TV})({a_at(i)});")
        src.append("              " + " ".join(f"c{i}_{v} += a * b{v};" for v in range(NV)) + " }")
    return src


def _store_tile(cfg: GemmConfig, T: str, epilogue) -> list[str]:
    """Lines storing a work-item's accumulators ``c{i}_{v}`` through the epilogue, closing
    the kernel."""
    MR, NR, VW = cfg.tm, cfg.tn, cfg.vec
    NV = NR // VW
    src = []
    # ---- store: spill the accumulators to a private tile, then plain loops
    # (one copy of the epilogue keeps PoCL's compile time down)
    vector_epi = isinstance(epilogue, GemmEpilogue) and epilogue.vector_body and \
        epilogue.vector_width == VW
    if vector_epi or _plain_vector_store(cfg, T, epilogue):
        # whole tiles: the epilogue runs on the accumulator vectors themselves, or they are
        # stored as they are (a plain product such as a weight gradient), a little cheaper
        # than element stores from the spilled tile
        src.append(f"    if (r0 + {MR} <= M && c0 + {NR} <= N) {{")
        for i in range(MR):
            for v in range(NV):
                at = f"(r0 + {i}) * ldc + c0 + {v * VW}"
                src.append(f"        netcl_gemm_store_v(C, {at}, c{i}_{v}, r0 + {i}, c0 + {v * VW}, "
                           f"bidx, {epilogue.args});" if vector_epi else
                           f"        netcl_vstore8(float, c{i}_{v}, C + {at});")
        src.append("        return;")
        src.append("    }")
    src.append(f"    T acc_out[{MR * NR}];")
    for i in range(MR):
        for v in range(NV):
            src.append("    " + " ".join(f"acc_out[{i * NR + v * VW + e}] = c{i}_{v}{_comp(VW, e)};"
                                         for e in range(VW)))
    src.append(f"    const int ncols = (N - c0 < {NR}) ? N - c0 : {NR};")
    src.append(f"    const int nrows = (M - r0 < {MR}) ? M - r0 : {MR};")
    src.append("#pragma unroll 1")
    src.append("    for (int i = 0; i < nrows; ++i) {")
    src.append("        for (int j = 0; j < ncols; ++j)")
    src.append("            " + _store_call(epilogue, "(r0 + i) * ldc + c0 + j",
                                             f"acc_out[i * {NR} + j]", "r0 + i", "c0 + j"))
    src.append("    }")
    src.append("}")
    return src


# ---- prepacked operands: weight gradients (A^T B with a short K) would re-pack the same
# panels in every group, a noticeable share of such a product's time; packed once up front,
# every group streams its slivers straight from global memory.

PACK_KERNEL_NAME = "netcl_pack_slivers"


def pack_source(T: str, wa: int, wb: int) -> str:
    """Kernel ``netcl_pack_slivers``: work-item (k, 0) copies row k of A (K x M from
    ``off_a`` on, rows ``lda`` apart) into ``pa[s][k][wa]`` and (k, 1) row k of B (K x N,
    ``off_b``, ``ldb``) into ``pb[s][k][wb]``: slivers of ``wa`` (``wb``) columns, the last
    zero-padded. Launched over (K rounded up to 16, 2) in groups of (16, 1). (A work-item
    per sliver, writing one contiguous block, is slower: each reads a short piece of every
    row.)"""
    return _header(T) + f"""void netcl_pack_row(__global T* restrict out, __global const T* restrict x, const int k,
                    const int K, const int n, const int w) {{
    const int full = n / w;
    __global T* d = out + k * w;
    for (int s = 0; s < full; ++s)
        for (int j = 0; j < w; ++j) d[(long)s * K * w + j] = x[s * w + j];
    if (full * w < n)
        for (int j = 0; j < w; ++j)
            d[(long)full * K * w + j] = (full * w + j < n) ? x[full * w + j] : (T)0;
}}
__kernel void {PACK_KERNEL_NAME}(__global T* restrict pa, __global const T* restrict A,
    const int lda, const int M, const int off_a, __global T* restrict pb,
    __global const T* restrict B, const int ldb, const int N, const int off_b, const int K) {{
    const int k = get_global_id(0);
    if (k >= K) return;
    if (get_global_id(1) == 0) netcl_pack_row(pa, A + off_a + (long)k * lda, k, K, M, {wa});
    else netcl_pack_row(pb, B + off_b + (long)k * ldb, k, K, N, {wb});
}}
"""


def packed_source(cfg: GemmConfig, T: str, epilogue: str | None) -> str:
    """The CPU GEMM of A^T B over operands pack_source(T, cfg.tm, cfg.tn) packed: A as
    ``[ceil(M/tm)][K][tm]``, B as ``[ceil(N/tn)][K][tn]``. No local memory; a barrier per
    K panel of depth ``bk`` keeps a group's slivers in cache (PoCL runs every work-item of a
    group up to a barrier before any goes on)."""
    MR, NR, VW, KC = cfg.tm, cfg.tn, cfg.vec, cfg.bk
    NV = NR // VW
    TV = _vt(T, VW)
    src = [_header(T), _epi_fn(T, epilogue)]
    src.append(_group_size(cfg))
    src.append(_signature(epilogue) + " {")
    src.append(_prologue(cfg))
    src.append(_work_item(cfg))
    src.append(f"    const int r0 = m0 + ty * {MR};")
    src.append(f"    const int c0 = n0 + tx * {NR};")
    # slivers past the last one hold nothing: read the last (results not stored)
    src.append(f"    const int sa = min(r0 / {MR}, (M - 1) / {MR});")
    src.append(f"    const int sb = min(c0 / {NR}, (N - 1) / {NR});")
    src.append(f"    __global const T* aq = A + (long)sa * K * {MR};")
    src.append(f"    __global const {TV}* bq = (__global const {TV}*)(B + (long)sb * K * {NR});")
    src += _accumulators(MR, NV, TV)
    src.append(f"    for (int k0 = 0; k0 < K; k0 += {KC}) {{")
    src.append(f"        const int k1 = (K - k0 < {KC}) ? K : k0 + {KC};")
    src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
    src.append("        for (int k = k0; k < k1; ++k) {")
    src += _multiply_add(MR, NV, TV, lambda i: f"aq[k * {MR} + {i}]")
    src.append("        }")
    src.append("    }")
    src += _store_tile(cfg, T, epilogue)
    out = "\n".join(src) + "\n"
    return _with_vector_io(out) if _plain_vector_store(cfg, T, epilogue) else out
