"""Large float32 products at full precision on NVIDIA GPUs (sm_80 and newer): FFMA tiles
staged by cp.async.

The portable tiled kernel (gemm.py) copies each K tile of both operands through registers
into local memory, which costs registers and instructions a copy engine need not spend.
Here `cp.async` copies 16-byte chunks from global to local memory directly, the next tile
while this one is multiplied, so each work-item keeps only its 8x8 accumulators and
operand fragments, and more warps fit on a multiprocessor. The copies cannot transpose,
so the kernel takes both operands with their free dimension contiguous (A as K x M, B as
K x N, the outer products' natural layout); an operand stored the other way round (a
row-major A, a transposed B) is first written so by one pack pass (`PACK_SOURCE`), about
1% of a large product's time.

`ffma_async_run` is linalg's launcher for such products: float32 operands and result at
"highest" precision (at the default precision they run on TF32 tensor cores instead,
dot_tensor_cores.py), big enough for the pack and every multiprocessor's blocks, on a
Target with `tensor_cores` (the same NVIDIA sm_80+ gate: cp.async arrived with mma.sync's
Ampere).

    >>> src = ffma_async_source(AsyncFfmaConfig())
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import commands, dtypes, kernels
from ..core.array import Array
from ..core.launch import Launch
from ..core.shapes import contiguous_strides
from .gemm import WorkGroupTiles

KERNEL_NAME = "netcl_gemm_ffma_async"

# products from this many multiply-adds on: below, the pack pass and the launch cost more
# than the kernel saves over gemm.py's, and fewer blocks than multiprocessors leave them idle
MIN_WORK = 1 << 30


@dataclass(frozen=True)
class AsyncFfmaConfig(WorkGroupTiles):
    """``wg_m x wg_n`` work-items, each ``tm x tn`` outputs (strided by 4-wide chunks, as
    gemm.py's tiled kernel), K tiles of ``bk``, ``stages`` tiles in local memory, rows
    padded by ``pad`` floats."""
    wg_m: int = 16
    wg_n: int = 16
    tm: int = 8
    tn: int = 8
    bk: int = 16
    stages: int = 2
    pad: int = 4

    def local_mem_bytes(self) -> int:
        return 4 * self.stages * self.bk * (self.bm + self.bn + 2 * self.pad)


def _tile_copies(cfg, operand, extent, base, guarded):
    """Statements copying K tile ``k0`` of `operand` (K x `extent` rows, leading dimension
    ``ld<operand>``) into local stage ``st`` in 16-byte chunks; `guarded`: zero-filled past
    K and past `extent` (a chunk straddling the edge copies its valid bytes), else the
    tile lies inside the operand."""
    op = operand.lower()
    width = cfg.bm if operand == "A" else cfg.bn
    row = width + cfg.pad
    chunks = cfg.bk * width // 4
    out = []
    for i in range(-(-chunks // cfg.threads)):
        v = f"(tid + {i * cfg.threads})"
        head = (f"if ({v} < {chunks}) " if chunks % cfg.threads else "") + \
            f"{{ const int v = {v}; const int kk = v / {width // 4}, c = (v % {width // 4}) * 4; "
        dst = f"{op}s_sh + (uint)(((st * {cfg.bk} + kk) * {row} + c) * 4)"
        if guarded:
            out.append(f"        {head}const int k = k0 + kk, r = {base} + c; "
                       f"const int bytes = k < K ? 4 * clamp({extent} - r, 0, 4) : 0; "
                       f"NETCL_CP16_PART({dst}, {operand} + (bytes ? k * ld{op} + r : 0), "
                       "bytes); }")
        else:
            out.append(f"        {head}NETCL_CP16({dst}, "
                       f"{operand} + ((k0 + kk) * ld{op} + {base} + c)); }}")
    return out


def ffma_async_source(cfg: AsyncFfmaConfig) -> str:
    """OpenCL C of ``netcl_gemm_ffma_async(C, A, B, M, N, K, lda, ldb, ldc, bsa, bsb,
    bsc, offa, offb)``: ``C[b][m][n] = sum_k A[b][k][m] * B[b][k][n]`` (A's elements from
    ``offa``, B's from ``offb``) over a grid of (N tiles x wg_n, M tiles x wg_m, batch); the
    operands' starts, leading dimensions and batch strides 16-byte aligned."""
    S, BK, BM, BN = cfg.stages, cfg.bk, cfg.bm, cfg.bn
    PA, PB = BM + cfg.pad, BN + cfg.pad
    xyzw = "xyzw"
    src = [r"""#define NETCL_CP16(dst, src) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory")
#define NETCL_CP16_PART(dst, src, bytes) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" \
                 :: "r"(dst), "l"(src), "r"(bytes) : "memory")
#define NETCL_CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")""",
           f"__attribute__((reqd_work_group_size({cfg.wg_n}, {cfg.wg_m}, 1)))",
           f"__kernel void {KERNEL_NAME}(__global float* C, __global const float* A,",
           "        __global const float* B, const int M, const int N, const int K,",
           "        const int lda, const int ldb, const int ldc, const long bsa,",
           "        const long bsb, const long bsc, const long offa, const long offb) {",
           f"    __local float4 AsW[{S * BK * PA // 4}];",
           f"    __local float4 BsW[{S * BK * PB // 4}];",
           "    const uint as_sh = (uint)(size_t)AsW, bs_sh = (uint)(size_t)BsW;",
           f"    const int tx = get_local_id(0), ty = get_local_id(1), tid = ty * {cfg.wg_n} + tx;",
           f"    const int n0 = get_group_id(0) * {BN}, m0 = get_group_id(1) * {BM};",
           "    const long b = get_group_id(2);",
           "    A += offa + b * bsa; B += offb + b * bsb; C += b * bsc;",
           f"    const int nkt = (K + {BK - 1}) / {BK};",
           f"    const int inside = m0 + {BM} <= M && n0 + {BN} <= N;"]
    # a tile inside both operands (every block's but the edges') copies without bounds
    fast = _tile_copies(cfg, "A", "M", "m0", False) + _tile_copies(cfg, "B", "N", "n0", False)
    edge = _tile_copies(cfg, "A", "M", "m0", True) + _tile_copies(cfg, "B", "N", "n0", True)
    src.append("#define NETCL_LOAD_TILE(ST, KT) { const int st = (ST); "
               f"const int k0 = (KT) * {BK}; if (inside && k0 + {BK} <= K) {{ \\\n" +
               " \\\n".join(fast) + " } else { \\\n" + " \\\n".join(edge) + " } }")
    for i in range(cfg.tm):
        src.append("    " + " ".join(f"float c{i}_{j} = 0.f;" for j in range(cfg.tn)))
    # stages-1 tiles in flight before the loop; each iteration waits for its tile, then
    # (after the barrier: every work-item is done with the stage it refills) starts the
    # copy of the tile stages-1 ahead
    src += [(f"    for (int s = 0; s < {S - 1}; ++s) {{ if (s < nkt) NETCL_LOAD_TILE(s, s); "
             "NETCL_CP_COMMIT(); }"),
            "    for (int kt = 0; kt < nkt; ++kt) {",
            f'        asm volatile("cp.async.wait_group {S - 2};" ::: "memory");',
            "        barrier(CLK_LOCAL_MEM_FENCE);",
            (f"        {{ const int nx = kt + {S - 1}; if (nx < nkt) "
             f"NETCL_LOAD_TILE(nx % {S}, nx); NETCL_CP_COMMIT(); }}"),
            f"        const int cur = kt % {S};",
            f"        __local const float4* pla = AsW + cur * {BK * PA // 4} + ty;",
            f"        __local const float4* plb = BsW + cur * {BK * PB // 4} + tx;",
            "#pragma unroll",
            f"        for (int kk = 0; kk < {BK}; ++kk) {{"]
    for c in range(cfg.tm // 4):
        src.append(f"            const float4 ra{c} = pla[kk * {PA // 4} + {c * cfg.wg_m}];")
    for c in range(cfg.tn // 4):
        src.append(f"            const float4 rb{c} = plb[kk * {PB // 4} + {c * cfg.wg_n}];")
    for i in range(cfg.tm):
        src.append("            " + " ".join(
            f"c{i}_{j} = mad(ra{i // 4}.{xyzw[i % 4]}, rb{j // 4}.{xyzw[j % 4]}, c{i}_{j});"
            for j in range(cfg.tn)))
    src += ["        }", "    }",
            ("    const int whole = inside && (ldc % 4 == 0) && (bsc % 4 == 0);")]
    for i in range(cfg.tm):
        src.append(f"    {{ const int row = m0 + {(i // 4) * cfg.wg_m * 4} + ty * 4 + {i % 4};")
        for c in range(cfg.tn // 4):
            vals = [f"c{i}_{4 * c + e}" for e in range(4)]
            src.append(f"      {{ const int col = n0 + {c * cfg.wg_n * 4} + tx * 4; "
                       "__global float* p = C + (long)row * ldc + col;")
            src.append(f"        if (whole) *((__global float4*)p) = (float4)({', '.join(vals)});")
            src.append("        else if (row < M) { " + " ".join(
                f"if (col + {e} < N) p[{e}] = {v};" for e, v in enumerate(vals)) + " }")
            src.append("      }")
        src.append("    }")
    src.append("}")
    return "\n".join(src) + "\n"


# (batch, R, K) with K contiguous -> (batch, K, ldo) with R contiguous, zeros in [R, ldo)
PACK_SOURCE = r"""
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void netcl_free_major_pack(__global float* restrict out, __global const float* restrict in,
                           const int R, const int K, const int ld, const long bstride,
                           const long off, const int ldo) {
    __local float t[32][33];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int k0 = get_group_id(0) * 32, r0 = get_group_id(1) * 32;
    const long b = get_group_id(2);
    for (int j = ly; j < 32; j += 8) {          /* read along k, the contiguous dimension */
        const int r = r0 + j, k = k0 + lx;
        t[j][lx] = (r < R && k < K) ? in[off + b * bstride + (long)r * ld + k] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = ly; j < 32; j += 8) {          /* write along r */
        const int k = k0 + j, r = r0 + lx;
        if (k < K && r < ldo) out[(b * K + k) * ldo + r] = t[lx][j];
    }
}
"""


def _aligned(p):
    """Whether operand `p` (linalg._Prep) can be read as it is: free dimension contiguous,
    rows, batches and start on 16 bytes."""
    return p.direct and p.trans and p.ld % 4 == 0 and p.bstride % 4 == 0 and p.offset % 4 == 0


def ffma_async_run(device, lhs, rhs, lhs_dims, rhs_dims, B, M, N, K, out_aval,
                   cfg=AsyncFfmaConfig()):
    """run(a, b) for a float32 product at full precision on this kernel, or None where the
    Target has no cp.async or the product is too small. `lhs_dims` = (batch, free,
    contracting) dimensions of lhs, `rhs_dims` = (batch, contracting, free) of rhs."""
    from ..core.pool import Storage
    from .linalg import _INT_MAX, _Prep, _preparer
    target = device.target
    f32 = dtypes.float32
    if not target.tensor_cores or out_aval.dtype != f32 or lhs.dtype != f32 or \
            rhs.dtype != f32 or B * M * N * K < MIN_WORK or \
            B * -(-M // cfg.bm) * -(-N // cfg.bn) < device.capabilities.compute_units or \
            (target.local_mem_limit and cfg.local_mem_bytes() > target.local_mem_limit):
        return None
    lb, lf, lc = lhs_dims
    rb, rc, rf = rhs_dims
    operands = (_Prep(lhs, lb, lf, lc, f32), _Prep(rhs, rb, rf, rc, f32))   # (batch, R, K)
    if any(p.direct and p.trans and not _aligned(p) for p in operands):
        return None     # (free dimension contiguous but misaligned: gemm.py's kernel)
    packs, lds = [], []
    for p, R in zip(operands, (M, N)):
        if _aligned(p):
            packs.append(None)
            lds.append((p.ld, p.bstride if B > 1 else 0, p.offset))
            continue
        ldo = -(-R // 4) * 4
        kp = kernels.kernel(device, PACK_SOURCE, "netcl_free_major_pack")
        direct = p.direct
        for i, v in enumerate((np.int32(R), np.int32(K), np.int32(p.ld if direct else K),
                               np.int64(p.bstride if direct and B > 1 else R * K),
                               np.int64(p.offset if direct else 0), np.int32(ldo))):
            kp.set_arg(2 + i, v)
        packs.append((kp, (-(-K // 32) * 32, -(-R // 32) * 8, B), (32, 8, 1), B * K * ldo * 4))
        lds.append((ldo, K * ldo, 0))
    (lda, bsa, offa), (ldb, bsb, offb) = lds
    if max(K * (lda + 4), K * (ldb + 4), M * N) > _INT_MAX:
        return None     # (an operand's indices are ints within its batch: gemm.py's kernel)
    k = kernels.kernel(device, ffma_async_source(cfg), KERNEL_NAME)
    for i, v in enumerate((np.int32(M), np.int32(N), np.int32(K), np.int32(lda),
                           np.int32(ldb), np.int32(N), np.int64(bsa), np.int64(bsb),
                           np.int64(M * N), np.int64(offa), np.int64(offb))):
        k.set_arg(3 + i, v)
    gsize = (-(-N // cfg.bn) * cfg.wg_n, -(-M // cfg.bm) * cfg.wg_m, B)
    lsize = (cfg.wg_n, cfg.wg_m, 1)
    shape, weak = out_aval.shape, out_aval.weak_type
    out_strides = contiguous_strides(shape)
    queue, pool, enqueue = device.queue, device.pool, commands.launch
    prep = _preparer(*operands)
    pack_a, pack_b = packs

    def operand(pack, x):
        """(buffer the kernel reads, Storage to hold until enqueued)."""
        if pack is None:
            return x._buf, None
        kp, g, l_, nbytes = pack
        st = Storage(pool, nbytes)
        kp.set_arg(0, st.buf)
        kp.set_arg(1, x._buf)
        enqueue(queue, kp, g, l_)
        return st.buf, st

    def run(a, b):
        if prep is not None:
            a, b = prep(a, b)
        # (the packed operands' Storages are held until the GEMM is enqueued)
        abuf, _held_a = operand(pack_a, a)
        bbuf, _held_b = operand(pack_b, b)
        st = Storage(pool, B * M * N * 4)
        out = Array(device, st.buf, st, shape, f32, out_strides, 0, weak, True)
        k.set_arg(0, out._buf)
        k.set_arg(1, abuf)
        k.set_arg(2, bbuf)
        enqueue(queue, k, gsize, lsize)
        return out      # the packed operands return to the pool; the in-order queue orders reuse
    described = None if prep is not None else tuple(
        kernels.described(m) for m in [p[0] for p in packs if p is not None] + [k])
    return Launch(run, kernels=described)
