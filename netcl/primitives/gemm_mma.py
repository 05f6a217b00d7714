"""Tensor-core GEMM for NVIDIA GPUs: ``C[b] = epilogue(A[b] @ B[b])`` with TF32 inputs and
float32 accumulation, through inline-PTX ``mma.sync.aligned.m16n8k8`` (OpenCL C has no matrix
instructions, but NVIDIA's compiler passes PTX through: see OPENCL_NOTES.md).

Same signature, operand layouts, epilogues and gathers as gemm.py's tiled kernel (it reuses
its tile loaders and prologue), so a caller swaps one for the other. A work-group of
``warps_m x warps_n`` warps computes a ``BM x BN`` block; each warp a ``mi*16 x nj*8``
sub-block as ``mi x nj`` m16n8 accumulator fragments. A and B tiles of depth ``bk`` go
through local memory (k-major, rows padded to 8 mod 32 words, so that the fragment reads of a
warp hit 32 distinct banks), double-buffered; the fragments are rounded to TF32 as they are
read (round to nearest, ties away, as ``cvt.rna`` and cuBLAS do).

TF32 keeps 10 mantissa bits: products are exact to about 5e-4 relative, sums accumulate in
float32. It is what PyTorch's cuDNN convolutions and XLA's default precision use on these
GPUs; netcl takes it for float32 convolutions and products whose precision allows it
(matmul_precision.py) on sm_80 and newer, and never for float64. Convolutions (with their
gathers) and products with statement epilogues run this kernel; other products run
gemm_mma_staged.py's, whose tiles arrive by cp.async.
"""
from __future__ import annotations

from dataclasses import dataclass

from .gemm import (_epi_fn, _header, _k_loop, _prologue, _signature, _store_call,
                   _tiled_loader, GemmEpilogue, launch_dims)  # noqa: F401 (launch_dims: both)


class WarpGrid:
    """The block of a tensor-core config: ``warps_m x warps_n`` warps per work-group, each
    ``mi`` m16 by ``nj`` n8 accumulator fragments."""

    @property
    def bm(self) -> int:
        return self.warps_m * self.mi * 16

    @property
    def bn(self) -> int:
        return self.warps_n * self.nj * 8

    @property
    def threads(self) -> int:
        return self.warps_m * self.warps_n * 32


@dataclass(frozen=True)
class MmaConfig(WarpGrid):
    """``warps_m x warps_n`` warps per work-group, each ``mi`` m16 by ``nj`` n8 fragments;
    K step ``bk`` (a multiple of 8), global vector load width ``vec``, local row padding
    ``pad`` (rows of ``bm + pad`` and ``bn + pad`` words should be 8 mod 32)."""

    warps_m: int = 4
    warps_n: int = 2
    mi: int = 2
    nj: int = 4
    bk: int = 32
    vec: int = 4
    pad: int = 8
    double_buffer: bool = True
    kind = "mma"


    def local_mem_bytes(self, dtype: str = "float") -> int:
        nbuf = 2 if self.double_buffer else 1
        return 4 * nbuf * self.bk * (self.bm + self.pad + self.bn + self.pad)

    def validate(self, dtype: str = "float") -> None:
        if dtype != "float":
            raise ValueError(f"the tensor-core GEMM is float32 only, got {dtype!r}")
        if self.bk % 8 or self.bk % self.vec or min(self.warps_m, self.warps_n, self.mi,
                                                   self.nj) < 1:
            raise ValueError(f"bad MmaConfig {self}")
        if (self.bm + self.pad) % self.vec or (self.bn + self.pad) % self.vec:
            raise ValueError("bm+pad and bn+pad must be multiples of vec")


# Tiers, biggest block first (conv_gemm picks by the product's columns).
MMA_TIERS = [
    MmaConfig(warps_m=4, warps_n=2, mi=2, nj=8),     # 128 x 128
    MmaConfig(warps_m=4, warps_n=2, mi=2, nj=4),     # 128 x 64
    MmaConfig(warps_m=4, warps_n=1, mi=2, nj=4),     # 128 x 32
]


def choose_mma_config(M: int, N: int) -> MmaConfig:
    """The biggest tier that pads the product's columns by at most a quarter."""
    for cfg in MMA_TIERS:
        if -(-N // cfg.bn) * cfg.bn <= 1.25 * N:
            return cfg
    return MMA_TIERS[-1]


# Rounding to TF32 (to nearest, ties away from zero). (The same rounding in integer
# arithmetic, off the conversion unit, made the kernels slower: more instructions.)
TF32_ROUND = r"""inline uint netcl_tf32(const float x) {
    uint r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
"""

_PTX = TF32_ROUND + r"""
#define NETCL_MMA(c0, c1, c2, c3, a0, a1, a2, a3, b0, b1) \
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 " \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" \
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
"""


def mma_source(cfg: MmaConfig, ta: bool, tb: bool, epilogue=None, gather_a: str | None = None,
               gather_b: str | None = None) -> str:
    """OpenCL C source of kernel ``netcl_gemm`` (gemm.py's signature) on tensor cores."""
    cfg.validate()
    T, BM, BN, BK, LV = "float", cfg.bm, cfg.bn, cfg.bk, cfg.vec
    PA, PB = BM + cfg.pad, BN + cfg.pad
    NBUF = 2 if cfg.double_buffer else 1
    adecl, aload, astore = _tiled_loader("a", cfg, T, ta, True, bool(gather_a))
    bdecl, bload, bstore = _tiled_loader("b", cfg, T, tb, False, bool(gather_b))
    if LV > 1:
        a_al = f"((lda % {LV}) == 0) && ((boa % {LV}) == 0)"
        b_al = f"((ldb % {LV}) == 0) && ((bob % {LV}) == 0)"
    else:
        a_al = b_al = "1"
    src = [_header(T), _PTX, _epi_fn(T, epilogue), gather_a or "", gather_b or ""]
    src.append(f"__attribute__((reqd_work_group_size({cfg.threads}, 1, 1)))")
    src.append(_signature(epilogue) + " {")
    src.append(f"    __local float4 AsW[{NBUF * BK * PA // 4}];")
    src.append(f"    __local float4 BsW[{NBUF * BK * PB // 4}];")
    src.append("    __local T* as = (__local T*)AsW;")
    src.append("    __local T* bs = (__local T*)BsW;")
    src.append(_prologue(cfg, bool(gather_a), bool(gather_b)))
    src.append("    const int tid = get_local_id(0);")
    src.append("    const int lane = tid & 31, warp = tid >> 5;")
    src.append("    const int gid = lane >> 2, tig = lane & 3;   /* PTX's groupID, threadID_in_group */")
    src.append(f"    const int wm = (warp / {cfg.warps_n}) * {cfg.mi * 16};")
    src.append(f"    const int wn = (warp % {cfg.warps_n}) * {cfg.nj * 8};")
    src.append(f"    const int A_VEC = {a_al};")
    src.append(f"    const int B_VEC = {b_al};")
    src.append(f"    const int a_ok = A_VEC && (m0 + {BM} <= M);")
    src.append(f"    const int b_ok = B_VEC && (n0 + {BN} <= N);")
    src.extend(adecl)
    src.extend(bdecl)
    for i in range(cfg.mi):
        for j in range(cfg.nj):
            src.append(f"    float c{i}_{j}_0 = 0, c{i}_{j}_1 = 0, c{i}_{j}_2 = 0, c{i}_{j}_3 = 0;")
    src.append(f"    const int nkt = (K + {BK - 1}) / {BK};")

    def compute(buf: str) -> list[str]:
        # fragment layouts of mma.m16n8k8 .tf32 (PTX ISA): a0 (gid, tig), a1 (gid+8, tig),
        # a2 (gid, tig+4), a3 (gid+8, tig+4); b0 (k tig, n gid), b1 (k tig+4, n gid)
        out = [f"        __local const T* pa = as + ({buf}) * {BK * PA} + tig * {PA} + wm + gid;",
               f"        __local const T* pb = bs + ({buf}) * {BK * PB} + tig * {PB} + wn + gid;",
               "#pragma unroll", f"        for (int ks = 0; ks < {BK}; ks += 8) {{"]
        for i in range(cfg.mi):
            o = i * 16
            out.append(f"            const uint a{i}_0 = netcl_tf32(pa[ks * {PA} + {o}]), "
                       f"a{i}_1 = netcl_tf32(pa[ks * {PA} + {o + 8}]), "
                       f"a{i}_2 = netcl_tf32(pa[(ks + 4) * {PA} + {o}]), "
                       f"a{i}_3 = netcl_tf32(pa[(ks + 4) * {PA} + {o + 8}]);")
        for j in range(cfg.nj):
            o = j * 8
            out.append(f"            const uint b{j}_0 = netcl_tf32(pb[ks * {PB} + {o}]), "
                       f"b{j}_1 = netcl_tf32(pb[(ks + 4) * {PB} + {o}]);")
        for i in range(cfg.mi):
            for j in range(cfg.nj):
                c = f"c{i}_{j}"
                out.append(f"            NETCL_MMA({c}_0, {c}_1, {c}_2, {c}_3, a{i}_0, a{i}_1, "
                           f"a{i}_2, a{i}_3, b{j}_0, b{j}_1);")
        out.append("        }")
        return out

    src += _k_loop(cfg, aload, bload, astore, bstore, compute)

    # store C: accumulator c{i}_{j}_{h}: row gid (+8 for h >= 2), columns 2*tig (+1 for odd h)
    src.append(f"    const int c_ok = ((ldc % 2) == 0) && ((boc % 2) == 0) && "
               f"(m0 + {BM} <= M) && (n0 + {BN} <= N);")
    plain = not isinstance(epilogue, GemmEpilogue)
    for i in range(cfg.mi):
        for j in range(cfg.nj):
            for half in (0, 1):
                a0, a1 = f"c{i}_{j}_{2 * half}", f"c{i}_{j}_{2 * half + 1}"
                src.append(f"    {{ const int row = m0 + wm + {i * 16 + 8 * half} + gid; "
                           f"const int col = n0 + wn + {j * 8} + 2 * tig;")
                s0 = _store_call(epilogue, "row * ldc + col", a0, "row", "col")
                s1 = _store_call(epilogue, "row * ldc + col + 1", a1, "row", "col + 1")
                if plain:
                    fast = (f"*((__global float2*)(C + row * ldc + col)) = (float2)("
                            f"netcl_gemm_epilogue({a0}, row, col, bidx), "
                            f"netcl_gemm_epilogue({a1}, row, col + 1, bidx));")
                else:
                    fast = f"{s0} {s1}"
                src.append(f"      if (c_ok) {{ {fast} }} else if (row < M) {{ "
                           f"if (col < N) {s0} if (col + 1 < N) {s1} }}")
                src.append("    }")
    src.append("}")
    return "\n".join(src) + "\n"


def supports_mma(cl_device) -> bool:
    """True on NVIDIA GPUs of compute capability 8.0 or newer (mma.sync with TF32, float16
    and bfloat16 operands); netcl's own kernels read `device.target.tensor_cores`."""
    from ..core.target import nvidia_tensor_cores
    return nvidia_tensor_cores(cl_device)
