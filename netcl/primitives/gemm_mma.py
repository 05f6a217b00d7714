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

import dataclasses
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


    def local_mem_bytes(self, dtype: str = "float", operands: str = "tf32") -> int:
        nbuf = 2 if self.double_buffer else 1
        return OPERAND_BYTES[operands] * nbuf * self.bk * (self.bm + self.pad + self.bn +
                                                           self.pad)

    def validate(self, dtype: str = "float", operands: str = "tf32") -> None:
        if dtype != "float":
            raise ValueError(f"the tensor-core GEMM accumulates in float32, got {dtype!r}")
        if operands not in OPERAND_BYTES:
            raise ValueError(f"operands must be one of {sorted(OPERAND_BYTES)}, got "
                             f"{operands!r}")
        k_step = 8 if operands == "tf32" else 16
        if self.bk % k_step or self.bk % self.vec or min(self.warps_m, self.warps_n, self.mi,
                                                         self.nj) < 1:
            raise ValueError(f"bad MmaConfig {self} for {operands} operands")
        if (self.bm + self.pad) % self.vec or (self.bn + self.pad) % self.vec:
            raise ValueError("bm+pad and bn+pad must be multiples of vec")


# Operand kinds: TF32 (float32 storage, rounded as read) and 16-bit floats, which reach the
# tensor cores as stored (two to a 32-bit register); bytes per element of the local tiles.
OPERAND_BYTES = {"tf32": 4, "f16": 2, "bf16": 2}

# Tiers, biggest block first (conv_gemm picks by the product's columns).
MMA_TIERS = [
    MmaConfig(warps_m=4, warps_n=2, mi=2, nj=8),     # 128 x 128
    MmaConfig(warps_m=4, warps_n=2, mi=2, nj=4),     # 128 x 64
    MmaConfig(warps_m=4, warps_n=1, mi=2, nj=4),     # 128 x 32
]
# Smaller blocks, for products of few output tiles (an MLP's 256 x 1024: 16 blocks of 128 x
# 128 leave most of a GPU's compute units idle)
SMALL_TIERS = [
    MmaConfig(warps_m=2, warps_n=2, mi=2, nj=4),     # 64 x 64
    MmaConfig(warps_m=2, warps_n=2, mi=2, nj=2),     # 64 x 32
]


def choose_mma_config(M: int, N: int, operands: str = "tf32", long_k: bool = False,
                      local_mem: int = 48 * 1024, min_blocks: int = 0) -> MmaConfig:
    """The biggest tier that pads the product's columns by at most a quarter and, with
    `min_blocks` (a device's compute units), makes that many blocks if any tier does (the
    smaller tiers then count too). 16-bit operands load 8 to a 16-byte vector (their tiles
    take half the local memory); with `long_k` (a split product's chunks: few tiles, each a
    long walk along K) their K step doubles where `local_mem` (bytes a work-group may
    declare) holds it, so that each tile's products hide its loads' latency."""
    tiers = MMA_TIERS + (SMALL_TIERS if min_blocks else [])
    fitting = [c for c in tiers if -(-N // c.bn) * c.bn <= 1.25 * N] or tiers[-1:]
    cfg = next((c for c in fitting if -(-M // c.bm) * -(-N // c.bn) >= min_blocks),
               fitting[-1])
    if operands == "tf32":
        return cfg
    half = dataclasses.replace(cfg, vec=8)
    deep = dataclasses.replace(half, bk=64)
    return deep if long_k and deep.local_mem_bytes("float", operands) <= local_mem else half


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

# m16n8k16 with 16-bit operands: each register holds two elements adjacent along K, the
# lower one in the low half (PTX ISA, "Matrix Fragments for mma.m16n8k16")
_PTX_HALF = r"""
#define NETCL_PAIR(lo, hi) ((uint)(lo) | ((uint)(hi) << 16))
#define NETCL_MMA(c0, c1, c2, c3, a0, a1, a2, a3, b0, b1) \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.OPND.OPND.f32 " \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" \
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
"""


def _fragments(cfg: MmaConfig, PA: int, PB: int, half: bool) -> list[str]:
    """One K step of the mma over local tiles pa, pb (k-major), as PTX lays its fragments
    out (ISA, "Matrix Fragments for mma.m16n8k8 / m16n8k16"), with h = 4 (TF32, k8: one
    element per register, rounded as read) or 8 (16-bit, k16: pa, pb point at K row 2*tig,
    each register two elements adjacent along K): a0 (row gid, k), a1 (gid+8, k), a2 (gid,
    k+h), a3 (gid+8, k+h); b0 (k, col gid), b1 (k+h, col gid). Local rows of 8 mod 32
    words put the four tig's K rows in distinct banks."""
    h = 8 if half else 4

    def at(p, P, k, o):
        return f"{p}[{'ks' if k == 0 else f'(ks + {k})'} * {P} + {o}]"

    def read(p, P, k, o):
        if half:
            return f"NETCL_PAIR({at(p, P, k, o)}, {at(p, P, k + 1, o)})"
        return f"netcl_tf32({at(p, P, k, o)})"
    out = []
    for i in range(cfg.mi):
        o = i * 16
        out.append(f"            const uint a{i}_0 = {read('pa', PA, 0, o)}, "
                   f"a{i}_1 = {read('pa', PA, 0, o + 8)}, a{i}_2 = {read('pa', PA, h, o)}, "
                   f"a{i}_3 = {read('pa', PA, h, o + 8)};")
    for j in range(cfg.nj):
        o = j * 8
        out.append(f"            const uint b{j}_0 = {read('pb', PB, 0, o)}, "
                   f"b{j}_1 = {read('pb', PB, h, o)};")
    return out


# C's element type, by output: float32, or a 16-bit float rounded to nearest even (bfloat16
# through kernels.py's netcl_bf16_store, which the build adds)
OUTPUTS = {"float": "float", "half": "half", "bfloat16": "ushort"}


def _store_pair(out: str, ci: str, v0: str, v1: str) -> str:
    """Stores two adjacent elements of C (ci even, C aligned for two)."""
    if out == "float":
        return f"*((__global float2*)(C + {ci})) = (float2)({v0}, {v1});"
    if out == "half":
        return f"vstore_half2((float2)({v0}, {v1}), 0, C + {ci});"
    return (f"*((__global ushort2*)(C + {ci})) = (ushort2)(netcl_bf16_store({v0}), "
            f"netcl_bf16_store({v1}));")


def mma_source(cfg: MmaConfig, ta: bool, tb: bool, epilogue=None, gather_a: str | None = None,
               gather_b: str | None = None, operands: str = "tf32", out: str = "float") -> str:
    """OpenCL C source of kernel ``netcl_gemm`` (gemm.py's signature) on tensor cores.

    `operands`: "tf32" (float32 A and B, rounded to TF32 as read) or "f16"/"bf16" (A and B
    stored as 16-bit floats, passed as ``ushort`` bits: gathers return them as such); `out`:
    C's type for plain stores ("float", "half" or "bfloat16"; GemmEpilogues store their own
    outputs and get C as float).

    >>> src = mma_source(MMA_TIERS[0], False, False, operands="bf16", out="bfloat16")
    """
    cfg.validate("float", operands)
    half = operands != "tf32"
    if isinstance(epilogue, GemmEpilogue):
        out = "float"
    T, BM, BN, BK, LV = "float", cfg.bm, cfg.bn, cfg.bk, cfg.vec
    E = "ushort" if half else T                     # operand element, as stored
    PA, PB = BM + cfg.pad, BN + cfg.pad
    NBUF = 2 if cfg.double_buffer else 1
    adecl, aload, astore = _tiled_loader("a", cfg, E, ta, True, bool(gather_a))
    bdecl, bload, bstore = _tiled_loader("b", cfg, E, tb, False, bool(gather_b))
    if LV > 1:
        a_al = f"((lda % {LV}) == 0) && ((boa % {LV}) == 0)"
        b_al = f"((ldb % {LV}) == 0) && ((bob % {LV}) == 0)"
    else:
        a_al = b_al = "1"
    ptx = _PTX_HALF.replace("OPND", operands) if half else _PTX
    src = [_header(T, E, OUTPUTS[out]), ptx, _epi_fn(T, epilogue), gather_a or "",
           gather_b or ""]
    src.append(f"__attribute__((reqd_work_group_size({cfg.threads}, 1, 1)))")
    src.append(_signature(epilogue) + " {")
    per16 = 16 // OPERAND_BYTES[operands]           # elements per 16-byte local word
    src.append(f"    __local uint4 AsW[{-(-NBUF * BK * PA // per16)}];")
    src.append(f"    __local uint4 BsW[{-(-NBUF * BK * PB // per16)}];")
    src.append(f"    __local {E}* as = (__local {E}*)AsW;")
    src.append(f"    __local {E}* bs = (__local {E}*)BsW;")
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
    k_step, krow = (16, "2 * tig") if half else (8, "tig")

    def compute(buf: str) -> list[str]:
        out_ = [f"        __local const {E}* pa = as + ({buf}) * {BK * PA} + {krow} * {PA} + wm + gid;",
                f"        __local const {E}* pb = bs + ({buf}) * {BK * PB} + {krow} * {PB} + wn + gid;",
                "#pragma unroll", f"        for (int ks = 0; ks < {BK}; ks += {k_step}) {{"]
        out_ += _fragments(cfg, PA, PB, half)
        for i in range(cfg.mi):
            for j in range(cfg.nj):
                c = f"c{i}_{j}"
                out_.append(f"            NETCL_MMA({c}_0, {c}_1, {c}_2, {c}_3, a{i}_0, a{i}_1, "
                            f"a{i}_2, a{i}_3, b{j}_0, b{j}_1);")
        out_.append("        }")
        return out_

    src += _k_loop(cfg, aload, bload, astore, bstore, compute)

    # store C: accumulator c{i}_{j}_{h}: row gid (+8 for h >= 2), columns 2*tig (+1 for odd h)
    src.append(f"    const int c_ok = ((ldc % 2) == 0) && ((boc % 2) == 0) && "
               f"(m0 + {BM} <= M) && (n0 + {BN} <= N);")
    plain = not isinstance(epilogue, GemmEpilogue)
    for i in range(cfg.mi):
        for j in range(cfg.nj):
            for h in (0, 1):
                a0, a1 = f"c{i}_{j}_{2 * h}", f"c{i}_{j}_{2 * h + 1}"
                src.append(f"    {{ const int row = m0 + wm + {i * 16 + 8 * h} + gid; "
                           f"const int col = n0 + wn + {j * 8} + 2 * tig;")
                if plain:
                    v0 = f"netcl_gemm_epilogue({a0}, row, col, bidx)"
                    v1 = f"netcl_gemm_epilogue({a1}, row, col + 1, bidx)"
                    fast = _store_pair(out, "row * ldc + col", v0, v1)
                    s0, s1 = (_store_one(out, "row * ldc + col", v0),
                              _store_one(out, "row * ldc + col + 1", v1))
                else:
                    s0 = _store_call(epilogue, "row * ldc + col", a0, "row", "col")
                    s1 = _store_call(epilogue, "row * ldc + col + 1", a1, "row", "col + 1")
                    fast = f"{s0} {s1}"
                src.append(f"      if (c_ok) {{ {fast} }} else if (row < M) {{ "
                           f"if (col < N) {s0} if (col + 1 < N) {s1} }}")
                src.append("    }")
    src.append("}")
    return "\n".join(src) + "\n"


def _store_one(out: str, ci: str, v: str) -> str:
    if out == "float":
        return f"C[{ci}] = {v};"
    if out == "half":
        return f"vstore_half({v}, {ci}, C);"
    return f"C[{ci}] = netcl_bf16_store({v});"


def supports_mma(cl_device) -> bool:
    """True on NVIDIA GPUs of compute capability 8.0 or newer (mma.sync with TF32, float16
    and bfloat16 operands); netcl's own kernels read `device.target.tensor_cores`."""
    from ..core.target import nvidia_tensor_cores
    return nvidia_tensor_cores(cl_device)
