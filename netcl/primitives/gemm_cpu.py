"""The CPU kind of gemm.py's kernel (PoCL and other CPU drivers): a sliver of C, ``mr x
(nv*vw)`` values, is computed in ``vw``-wide vector registers (an explicit micro-kernel,
since PoCL's implicit vectoriser does not reach loops with inner loops); the B panel of
depth ``kc`` is packed into local memory once per work-group, A streamed from global memory
(see gemm.py's docstring). A work-group is one work-item, which walks the group's ``wg_m x
wg_n`` slivers in loops: the same code as one work-item per sliver with barriers around the
packing, which PoCL compiles several times slower (its first launch waits for that) and
runs no faster. Same signature and epilogues as the tiled GPU kernel."""
from __future__ import annotations

from .gemm import GemmConfig, GemmEpilogue, _epi_fn, _header, _prologue, _signature, _store_call, _vt


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
        # A^T rows are contiguous in m: pack A[m0:m0+BM, k0:k0+kc] into ap[k][BM]
        src.append(f"    __local T ap[{KC * cfg.bm}];")
    src += _spill_decl(cfg, TV)
    src.append(_prologue(cfg))
    src += _panel_loop_head(KC)
    # ---- pack B[k0:k0+kc, n0:n0+BN] into bp[s][k][NR] (plain loops, which LLVM
    # vectorises; PoCL's vload/min are out-of-line calls)
    src.append("        {")
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
    # ---- every sliver's micro-kernel over this panel
    src += _sliver_loops_head(cfg)
    # clamped row pointers of A (rows beyond M read row M-1; their results are not stored)
    if not ta:
        for i in range(MR):
            src.append(f"        __global const T* pa{i} = A + ((r0 + {i} < M) ? r0 + {i} : M - 1) * lda + k0;")
    else:
        src.append(f"        __local const T* aq = ap + ty * {MR};")
    src.append(f"        __local const {TV}* bq = Bp4 + tx * {KC * NV};")
    src += _accumulators(MR, NV, TV)
    src.append("        for (int k = 0; k < kc; ++k) {")
    src += _multiply_add(MR, NV, TV, lambda i: f"pa{i}[k]" if not ta else f"aq[k * {cfg.bm} + {i}]")
    src.append("        }")
    src += _store_tile(cfg, T, epilogue)
    src += _sliver_loops_tail()
    out = "\n".join(src) + "\n"
    # the transposing pack's vector loads, plain vector stores
    return _with_vector_io(out) if (tb and T == "float" and VW == 8) or \
        _plain_vector_store(cfg, T, epilogue) else out


# The element-by-element stores of edge tiles stay a scalar loop: LLVM's vectorised form
# of it (the epilogue inlined, runtime checks, remainder loops) adds a sizeable share of a
# kernel's compile time at its first launch and saves little time after it.
_NO_VECTORIZE = "#pragma clang loop vectorize(disable) interleave(disable) unroll(disable)"


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
    """One work-item per group: the kernel walks its ``wg_m x wg_n`` slivers itself (see
    `_sliver_loops_head`)."""
    return "__attribute__((reqd_work_group_size(1, 1, 1)))"


def spill_bytes(cfg: GemmConfig, dtype: str) -> int:
    """Local memory holding a group's accumulators between K panels (`_spill_decl`)."""
    return cfg.bm * cfg.bn * (4 if dtype == "float" else 8)


def _spill_decl(cfg: GemmConfig, TV: str) -> list[str]:
    """The group's accumulators between K panels: ``accs[sliver][i][v]``, written where K
    goes on past this panel and read back at the next (exactly what the next panel adds
    to, so the sum's order is that of one long K loop)."""
    return [f"    __local {TV} accs[{cfg.wg_m * cfg.wg_n * cfg.tm * (cfg.tn // cfg.vec)}];"]


def _panel_loop_head(KC: int) -> list[str]:
    """Opens the loop over K panels of depth KC (``k0``, ``kc`` rows; ``spilled``: the
    accumulators continue from `_spill_decl`'s buffer; ``last``: the panel ends K). K == 0
    still runs one empty panel, which stores ``epilogue(0)``."""
    return ["    int k0 = 0;",
            "    do {",
            f"        const int kc = (K - k0 < {KC}) ? K - k0 : {KC};",
            "        const int spilled = k0 > 0;",
            f"        const int last = K - k0 <= {KC};"]


def _sliver_loops_head(cfg: GemmConfig) -> list[str]:
    """Opens the loops over the group's slivers (``ty``: rows ``r0``.., ``tx``: columns
    ``c0``..; ``sl`` the sliver's index), in the order PoCL ran a group's work-items when
    each sliver was one (local dimension 0 fastest). One work-item doing a group's work in
    loops gives the same code without barriers: PoCL compiles a kernel with barriers and
    many work-items per group (its work-group function, per region) several times slower,
    and a first run waits for that. Slivers wholly outside C are skipped."""
    loops = [("ty", cfg.wg_m), ("tx", cfg.wg_n)]
    if cfg.m_fastest:
        loops.reverse()
    out = []
    for var, n in loops:
        out += ["#pragma unroll 1", f"        for (int {var} = 0; {var} < {n}; ++{var}) {{"]
    out += [f"        const int r0 = m0 + ty * {cfg.tm};",
            f"        const int c0 = n0 + tx * {cfg.tn};",
            "        if (r0 >= M || c0 >= N) continue;",
            f"        const int sl = ty * {cfg.wg_n} + tx;"]
    return out


def _sliver_loops_tail() -> list[str]:
    """Closes `_sliver_loops_head`'s loops, `_panel_loop_head`'s loop and the kernel."""
    return ["        }", "        }", "        k0 += kc;", "    } while (k0 < K);", "}"]


def _accumulators(MR: int, NV: int, TV: str) -> list[str]:
    """Declarations of a sliver's ``MR x NV`` accumulator vectors ``c{i}_{v}``: zero, or
    where an earlier K panel left them (``spilled``)."""
    return ["        " + " ".join(f"{TV} c{i}_{v} = spilled ? accs[(sl * {MR} + {i}) * {NV} + {v}] "
                                   f": ({TV})(0);" for v in range(NV)) for i in range(MR)]


def _multiply_add(MR: int, NV: int, TV: str, a_at) -> list[str]:
    """The micro-kernel's step ``k``: B's ``NV`` vectors from ``bq``, then each of the ``MR``
    values ``a_at(i)`` of A broadcast and multiplied into row ``i``'s accumulators."""
    src = [f"            const {TV} b{v} = bq[k * {NV} + {v}];" for v in range(NV)]
    for i in range(MR):
        src.append(f"            {{ const {TV} a = ({TV})({a_at(i)});")
        src.append("              " + " ".join(f"c{i}_{v} += a * b{v};" for v in range(NV)) + " }")
    return src


def _store_tile(cfg: GemmConfig, T: str, epilogue) -> list[str]:
    """Lines ending a sliver's panel: its accumulators ``c{i}_{v}`` spilled where K goes on,
    else stored through the epilogue (then ``continue`` to the next sliver)."""
    MR, NR, VW = cfg.tm, cfg.tn, cfg.vec
    NV = NR // VW
    src = ["        if (!last) {"]
    src += ["            " + " ".join(f"accs[(sl * {MR} + {i}) * {NV} + {v}] = c{i}_{v};"
                                     for v in range(NV)) for i in range(MR)]
    src += ["            continue;", "        }"]
    # ---- store (one copy of the epilogue each for whole and edge tiles keeps PoCL's
    # compile time down)
    vector_epi = isinstance(epilogue, GemmEpilogue) and epilogue.vector_body and \
        epilogue.vector_width == VW
    # the accumulators as vectors acc_v[i][v] (and elements acc_out[i][j]) in private memory
    TV = _vt(T, VW)
    src.append(f"        {TV} acc_v[{MR * NV}];")
    src += ["        " + " ".join(f"acc_v[{i * NV + v}] = c{i}_{v};" for v in range(NV))
            for i in range(MR)]
    if vector_epi or _plain_vector_store(cfg, T, epilogue):
        # whole tiles: the epilogue runs on the accumulator vectors, or they are stored as
        # they are (a plain product such as a weight gradient), a little cheaper than element
        # stores. A loop over rows: one copy of the epilogue compiles faster than MR x NV.
        src.append(f"        if (r0 + {MR} <= M && c0 + {NR} <= N) {{")
        src.append("#pragma unroll 1")
        src.append(f"            for (int i = 0; i < {MR}; ++i)")
        src.append("#pragma unroll 1")
        src.append(f"              for (int v = 0; v < {NV}; ++v) {{")
        at = f"(r0 + i) * ldc + c0 + v * {VW}"
        src.append(f"                netcl_gemm_store_v(C, {at}, acc_v[i * {NV} + v], r0 + i, "
                   f"c0 + v * {VW}, bidx, {epilogue.args});" if vector_epi else
                   f"                netcl_vstore8(float, acc_v[i * {NV} + v], C + {at});")
        src.append("              }")
        src.append("            continue;")
        src.append("        }")
    src.append("        const T* acc_out = (const T*)acc_v;")
    src.append(f"        const int ncols = (N - c0 < {NR}) ? N - c0 : {NR};")
    src.append(f"        const int nrows = (M - r0 < {MR}) ? M - r0 : {MR};")
    src.append("#pragma unroll 1")
    src.append("        for (int i = 0; i < nrows; ++i) {")
    src.append(_NO_VECTORIZE)
    src.append("            for (int j = 0; j < ncols; ++j)")
    src.append("                " + _store_call(epilogue, "(r0 + i) * ldc + c0 + j",
                                                 f"acc_out[i * {NR} + j]", "r0 + i", "c0 + j"))
    src.append("        }")
    return src


# ---- prepacked operands: weight gradients (A^T B with a short K) would re-pack the same
# panels in every group, a noticeable share of such a product's time; packed once up front,
# every group streams its slivers straight from global memory.

PACK_KERNEL_NAME = "netcl_pack_slivers"


def pack_source(T: str, wa: int, wb: int) -> str:
    """Kernel ``netcl_pack_slivers``: work-item (k, 0) copies row k of A (K x M from
    ``off_a`` on, rows ``lda`` apart) into ``pa[s][k][wa]`` and (k, 1) row k of B (K x N,
    ``off_b``, ``ldb``) into ``pb[s][k][wb]``: slivers of ``wa`` (``wb``) columns, the last
    zero-padded. Launched over (K rounded up to 16, 2) in groups of (16, 1), or of (1, 1):
    the first work-item of a group copies the group's rows (k .. k + local size), the others
    return, which PoCL compiles at the first launch in two thirds of the time a kernel of
    16 working work-items takes (with groups of one work-item, a third). (A work-item per
    sliver, writing one contiguous block, is slower: each reads a short piece of every
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
    if (get_local_id(0) != 0) return;
    const int k1 = min(K, (int)(get_global_id(0) + get_local_size(0)));
    for (int k = get_global_id(0); k < k1; ++k) {{
        if (get_global_id(1) == 0) netcl_pack_row(pa, A + off_a + (long)k * lda, k, K, M, {wa});
        else netcl_pack_row(pb, B + off_b + (long)k * ldb, k, K, N, {wb});
    }}
}}
"""


def packed_source(cfg: GemmConfig, T: str, epilogue: str | None) -> str:
    """The CPU GEMM of A^T B over operands pack_source(T, cfg.tm, cfg.tn) packed: A as
    ``[ceil(M/tm)][K][tm]``, B as ``[ceil(N/tn)][K][tn]``. Local memory only for the
    accumulators: every sliver of the group takes a K panel of depth ``bk`` before any
    takes the next, which keeps the group's slivers of A and B in cache."""
    MR, NR, VW, KC = cfg.tm, cfg.tn, cfg.vec, cfg.bk
    NV = NR // VW
    TV = _vt(T, VW)
    src = [_header(T), _epi_fn(T, epilogue)]
    src.append(_group_size(cfg))
    src.append(_signature(epilogue) + " {")
    src += _spill_decl(cfg, TV)
    src.append(_prologue(cfg))
    src += _panel_loop_head(KC)
    src += _sliver_loops_head(cfg)
    src.append(f"        const int sa = r0 / {MR};")
    src.append(f"        const int sb = c0 / {NR};")
    src.append(f"        __global const T* aq = A + (long)sa * K * {MR};")
    src.append(f"        __global const {TV}* bq = (__global const {TV}*)(B + (long)sb * K * {NR});")
    src += _accumulators(MR, NV, TV)
    src.append("        for (int k = k0; k < k0 + kc; ++k) {")
    src += _multiply_add(MR, NV, TV, lambda i: f"aq[k * {MR} + {i}]")
    src.append("        }")
    src += _store_tile(cfg, T, epilogue)
    src += _sliver_loops_tail()
    out = "\n".join(src) + "\n"
    return _with_vector_io(out) if _plain_vector_store(cfg, T, epilogue) else out
