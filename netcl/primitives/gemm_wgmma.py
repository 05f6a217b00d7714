"""Tensor-core GEMM on Hopper's warpgroup instructions: ``C[b] = epilogue(A[b] @ B[b])`` for
float16, bfloat16 or TF32 operands with float32 accumulation through inline-PTX
``wgmma.mma_async`` (sm_90a), for NVIDIA GPUs of compute capability 9.0.

Why a kernel of its own: ``mma.sync`` (gemm_mma_staged.py) feeds the tensor cores one warp
at a time from registers that ``ldmatrix`` fills, and tops out near half of what the H100's
tensor cores do; ``wgmma`` is issued by a warpgroup (four warps) and reads both operands
straight from local (shared) memory, asynchronously, so the copies of the next tiles and
the products of this one overlap with no register traffic.

NVIDIA's OpenCL compiler emits PTX for ``sm_90``, on which ``wgmma`` does not assemble. The
source therefore writes each ``wgmma`` statement behind ``kernels.PTX_DEFERRED`` (a PTX
comment, so the first build assembles) and names the target it needs with
``kernels.ptx_target_mark("sm_90a")``; kernels.py builds the source, takes the PTX the driver
made of it, uncomments those statements, retargets the PTX to ``sm_90a`` and builds that
(NVIDIA's drivers accept PTX as a program binary).

Layout. A work-group of ``wgs`` warpgroups computes a ``BM x BN`` block, warpgroup w the
rows ``w*mt*64`` on, all BN columns, as ``mt x (BN / n_inst)`` instructions of
``m64 n<n_inst> k16`` per 16 of K (``k8`` per 8 for TF32). Tiles are 128 bytes of K deep (64
16-bit or 32 TF32 elements, the width of the 128-byte swizzle) and `stages` deep in flight,
copied from global memory
by ``cp.async`` in 16-byte chunks (zero-filled past the operands' edges) into the
canonical layouts ``wgmma`` reads with the 128-byte swizzle (16-byte chunk c of 128-byte row
r at chunk ``c ^ (r % 8)``; the tile base on 1024 bytes):

- an operand whose K is contiguous in memory (A not transposed, B transposed: "K-major")
  as rows of its 128 bytes of K, 8-row groups 1024 bytes apart (the descriptor's stride
  byte offset);
- an operand whose M (N) is contiguous ("MN-major", 16-bit only) as atoms of 64 M (N)
  elements by the tile's 64 rows of K, 8-row groups 1024 bytes apart (stride byte offset),
  atoms a tile's depth apart (leading byte offset); ``wgmma`` reads it transposed (its
  imm-trans flag).

Accumulators: instruction (i, j)'s register r holds row ``16 * (warp % 4) + gid + 8 * h`` and
column ``8 * q + 2 * tig + e`` of its 64 x n_inst block, for q = r / 4, h = (r / 2) % 2,
e = r % 2 (gid = lane / 4, tig = lane % 4), as ``mma.sync``'s m16n8 fragments side by side.
gemm.py's signature, size arguments and launch geometry (``launch_dims``), 16-bit operands
as ``ushort`` words; C stored as float32, float16 or bfloat16 (rounded to nearest even).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..core.kernels import PTX_DEFERRED, ptx_target_mark
from .gemm import GemmEpilogue, _header, _signature, launch_dims  # noqa: F401 (launch_dims)
from .gemm_mma_staged import _prologue, output_preamble, pair_store

# operand kinds: (PTX type, bytes per element); TF32 reads float32 words (the hardware
# ignores their 13 low mantissa bits, so callers round them first: see `tf32_run`)
OPERANDS = {"f16": ("f16", 2), "bf16": ("bf16", 2), "tf32": ("tf32", 4)}
OUTPUTS = ("float", "half", "bfloat16")
ROW_BYTES = 128          # one swizzled row: a tile's depth of K (64 16-bit, 32 TF32 elements)
ATOM_BYTES = 1024        # eight rows: the swizzle's period, the tiles' alignment


@dataclass(frozen=True)
class WgmmaConfig:
    """``wgs`` warpgroups per work-group along M, each ``mt`` 64-row instruction blocks by
    all ``bn`` columns in instructions of ``n_inst`` columns; ``stages`` tiles of 128 bytes of
    K in flight; ``inflight`` groups of ``wgmma`` left running while the next tile's copies are
    issued (0 or 1); ``group_m`` > 1 hands blocks out in bands of that many block rows."""

    wgs: int = 2
    mt: int = 1
    bn: int = 256
    n_inst: int = 256
    stages: int = 4
    inflight: int = 1
    group_m: int = 8
    kind = "mma"     # (gemm.launch_dims: one 1-D work-group of whole warps per block)

    @property
    def bm(self) -> int:
        return self.wgs * self.mt * 64

    @property
    def threads(self) -> int:
        return self.wgs * 128

    def local_mem_bytes(self) -> int:
        # (+ one atom: the base is rounded up to 1024 bytes at run time)
        return self.stages * (self.bm + self.bn) * ROW_BYTES + ATOM_BYTES

    def validate(self, operands: str = "bf16") -> None:
        if operands not in OPERANDS:
            raise ValueError(f"wgmma GEMM: operands must be one of {list(OPERANDS)}, got "
                             f"{operands!r}")
        # (n_inst whole atoms of 64 columns: an MN-major B slice starts on an atom)
        ok = (self.wgs >= 1 and self.mt >= 1 and self.n_inst % 64 == 0
              and self.n_inst <= 256 and self.bn % self.n_inst == 0
              and self.stages >= 2 + self.inflight and self.inflight in (0, 1))
        if not ok:
            raise ValueError(f"bad WgmmaConfig {self}: n_inst 64, 128, 192 or 256 dividing "
                             "bn, stages >= 2 + inflight, inflight 0 or 1")
        for rows in (self.bm, self.bn):
            if (rows * 8) % self.threads:
                raise ValueError(f"bad WgmmaConfig {self}: a {rows}-row tile is not a whole "
                                 "number of 16-byte chunks per work-item")


# Biggest block first: `choose_config` takes the first that gives every compute unit a
# block without padding the product by more than a quarter. 128 x 256 with four stages
# was the fastest on an 8192^3 product (benchmarks/gemm_mma_bench.py --wgmma); the
# smaller blocks are for products of few columns (a CNN's 64 or 128 channels), in fewer
# stages so that two or three work-groups fit a compute unit.
TIERS = [
    WgmmaConfig(wgs=2, mt=1, bn=256, n_inst=256, stages=4),
    WgmmaConfig(wgs=2, mt=1, bn=128, n_inst=128, stages=5),
    WgmmaConfig(wgs=2, mt=1, bn=64, n_inst=64, stages=4),
    WgmmaConfig(wgs=1, mt=1, bn=128, n_inst=128, stages=4),
    WgmmaConfig(wgs=1, mt=1, bn=64, n_inst=64, stages=4),
]


def choose_config(M: int, N: int, local_mem: int, compute_units: int) -> WgmmaConfig | None:
    """The first tier whose tiles fit `local_mem` bytes, whose blocks pad the M x N product
    by at most a quarter and number at least `compute_units`; None where none does (a
    product too small to fill the device runs faster on mma.sync's smaller tiles)."""
    m, n = max(M, 1), max(N, 1)
    for cfg in TIERS:
        blocks = -(-m // cfg.bm) * -(-n // cfg.bn)
        if cfg.local_mem_bytes() <= local_mem and blocks >= compute_units and \
                blocks * cfg.bm * cfg.bn <= 1.25 * m * n:
            return cfg
    return None


_PTX = r"""#define NETCL_CP16(dst, src, bytes) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" \
                 :: "r"(dst), "l"(src), "r"(bytes) : "memory")
#define NETCL_CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define NETCL_WG_FENCE() asm volatile("DEFER wgmma.fence.sync.aligned;\n" ::: "memory")
#define NETCL_WG_COMMIT() asm volatile("DEFER wgmma.commit_group.sync.aligned;\n" ::: "memory")
#define NETCL_WG_WAIT0() asm volatile("DEFER wgmma.wait_group.sync.aligned 0;\n" ::: "memory")
#define NETCL_WG_WAIT1() asm volatile("DEFER wgmma.wait_group.sync.aligned 1;\n" ::: "memory")
#define NETCL_PROXY_FENCE() asm volatile("DEFER fence.proxy.async.shared::cta;\n" ::: "memory")
inline ulong netcl_desc(const uint addr, const uint lbo, const uint sbo) {
    /* a wgmma matrix descriptor: start, leading and stride byte offsets in 16-byte units,
       the 128-byte swizzle (mode 1, bits 62-63) */
    return (ulong)(((addr & 0x3FFFFu) >> 4) | ((lbo >> 4) << 16))
         | ((ulong)((sbo >> 4) | (1u << 30)) << 32);
}
""".replace("DEFER", PTX_DEFERRED)


class _Tile:
    """One operand's tiles: `rows` of M (N) by bk of K, K-major (`k_major`: K contiguous
    in memory) or MN-major; copied by `threads` work-items, `per` 16-byte chunks each."""

    def __init__(self, name, cfg, rows, k_major, base, ext, es, gather=False):
        self.x, self.cfg, self.rows, self.k_major = name, cfg, rows, k_major
        self.es, self.E = es, 16 // es                 # bytes per element, per chunk
        self.bk = ROW_BYTES // es                      # the tile's depth of K
        # a gathered operand (A only): its chunks' element indices come from
        # ``netcl_gather_a_at(row, col)`` at its storage row and column (-1: zeros)
        self.gather = gather
        self.base, self.ext = base, ext                # m0 / n0, M / N
        self.bytes = rows * ROW_BYTES                  # one stage of this operand
        self.per = rows * 8 // cfg.threads
        self.ld = "lda" if name == "A" else "ldb"

    def decls(self):
        """Per chunk: its global element offset at k0 = 0 (`_g`), its swizzled local byte
        offset (`_l`), and what bounds its valid elements."""
        x, T, out = self.x, self.cfg.threads, []
        out.append(f"    const int {x}_in = {self.base} + {self.rows} <= {self.ext};")
        for p in range(self.per):
            c, q = f"{x}{p}", f"(tid + {p * T})"
            if self.k_major:        # row r of M (N), chunk cc of K
                out.append(f"    const int {c}_r = {q} >> 3, {c}_c = {q} & 7;")
                out.append(f"    const int {c}_g = ({self.base} + {c}_r) * {self.ld} + "
                           f"{c}_c * {self.E};")
                out.append(f"    const uint {c}_l = {c}_r * {ROW_BYTES} + "
                           f"((({c}_c) ^ ({c}_r & 7)) << 4);")
                out.append(f"    const int {c}_ok = {self.base} + {c}_r < {self.ext};")
                if self.gather:
                    out.append(f"    const int {c}_row = {x}_bo + {self.base} + {c}_r;")
            else:                   # row k of K, chunk cc of M (N): atom cc / 8
                cpr = self.rows // 8
                out.append(f"    const int {c}_k = {q} / {cpr}, {c}_c = {q} % {cpr};")
                out.append(f"    const int {c}_g = {c}_k * {self.ld} + {self.base} + {c}_c * 8;")
                out.append(f"    const uint {c}_l = ({c}_c >> 3) * {self.bk * ROW_BYTES} + "
                           f"{c}_k * {ROW_BYTES} + ((({c}_c & 7) ^ ({c}_k & 7)) << 4);")
                out.append(f"    const int {c}_n = clamp({self.ext} - {self.base} - {c}_c * 8, 0, 8);")
                if self.gather:
                    out.append(f"    const int {c}_col = {x}_bi + {self.base} + {c}_c * 8;")
        return out

    def copy(self, stage):
        """cp.async of this work-item's chunks of the tile at k0 into `stage`: whole chunks
        for a tile inside the operand, else as many elements as lie inside."""
        x, whole, edge = self.x, [], []
        koff = "k0" if self.k_major else f"k0 * {self.ld}"
        head = f"        {{ const uint {x.lower()}_st = {x.lower()}_sh + ({stage}) * {self.bytes};"
        if self.gather:
            return [head, self._copy_gathered() + " }"]
        for p in range(self.per):
            c = f"{x}{p}"
            dst = f"{x.lower()}_st + {c}_l"
            src = f"{x} + {c}_g + {koff}"
            valid = (f"({c}_ok ? clamp(K - k0 - {c}_c * {self.E}, 0, {self.E}) : 0)"
                     if self.k_major
                     else f"(k0 + {c}_k < K ? {c}_n : 0)")
            whole.append(f"NETCL_CP16({dst}, (ulong)({src}), 16);")
            edge.append(f"{{ const int nv = {valid}; NETCL_CP16({dst}, "
                        f"(ulong)(nv > 0 ? {src} : {x}), nv * {self.es}); }}")
        return [head,
                f"        if ({x}_in && k0 + {self.bk} <= K) {{ {' '.join(whole)} }}",
                f"        else {{ {' '.join(edge)} }} }}"]

    def _copy_gathered(self):
        """cp.async of this work-item's gathered chunks: 16 bytes from the input where the
        chunk lies in it, zeros (no read) in the padding or past the operand's edges."""
        x, out = self.x, []
        for p in range(self.per):
            c = f"{x}{p}"
            if self.k_major:
                inside = f"{c}_ok && k0 + {c}_c * {self.E} < K"
                at = f"{c}_row, {x}_bi + k0 + {c}_c * {self.E}"
            else:
                inside, at = f"{c}_n > 0 && k0 + {c}_k < K", f"{x}_bo + k0 + {c}_k, {c}_col"
            out.append(f"{{ const int g = {inside} ? netcl_gather_a_at({at}) : -1; "
                       f"NETCL_CP16({x.lower()}_st + {c}_l, (ulong)(g >= 0 ? {x} + g : {x}), "
                       f"g >= 0 ? 16 : 0); }}")
        return "        " + " ".join(out)

    def desc(self, stage_base, block, kk):
        """The descriptor of this operand's `block`-th 64-row (A) or n_inst-column (B) slice
        at K step kk (16 elements) of the tile at `stage_base` (a C expression)."""
        if self.k_major:     # rows of 128 bytes; K step = 32 bytes along the row
            return f"netcl_desc({stage_base} + {block} * {ROW_BYTES} + {kk * 32}, 16, {ATOM_BYTES})"
        # MN-major: atoms of 64 columns a tile (bk rows) apart; K step = two 8-row groups
        return (f"netcl_desc({stage_base} + ({block}) / 64 * {self.bk * ROW_BYTES} + "
                f"{kk * 2 * ATOM_BYTES}, {self.bk * ROW_BYTES}, {ATOM_BYTES})")


def _wgmma(cfg, i, j, operands, trans_a, trans_b):
    """The asm statement of instruction (i, j): d{i}_{j}_* += A slice i x B slice j (32
    bytes of K: 16 16-bit or 8 TF32 elements; TF32 takes no transpose flags)."""
    ptx, es = OPERANDS[operands]
    trans = "" if es == 4 else f", {int(trans_a)}, {int(trans_b)}"
    n = cfg.n_inst // 2
    regs = ", ".join(f"%{r}" for r in range(n))
    outs = ", ".join(f'"+f"(d{i}_{j}_{r})' for r in range(n))
    text = (f"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{n + 2}, 0;\\n"
            f"{PTX_DEFERRED} wgmma.mma_async.sync.aligned.m64n{cfg.n_inst}k{32 // es}.f32.{ptx}.{ptx} "
            f"{{{regs}}}, %{n}, %{n + 1}, p, 1, 1{trans};\\n}}\\n")
    return (f'            asm volatile("{text}" : {outs} : "l"(da{i}), "l"(db{j}), "r"(1) '
            f': "memory");')


def wgmma_source(cfg: WgmmaConfig, ta: bool, tb: bool, operands: str = "bf16",
                 out: str = "float", epilogue: str | GemmEpilogue | None = None,
                 gather_a: str | None = None) -> str:
    """OpenCL C source of kernel ``netcl_gemm`` (gemm.py's signature, ``ushort`` operands
    for 16-bit floats) on Hopper's warpgroup tensor-core instructions; it builds only
    through kernels.py (its PTX is retargeted to sm_90a). `operands` "f16", "bf16" or "tf32"
    (float32 words, A not transposed and B transposed: TF32 has only K-major operands; C
    float); C of `out` ("float", "half", "bfloat16"); `epilogue` a C expression of ``acc, row, col, batch`` (float), the
    value stored, or a GemmEpilogue (its statements store every output; C is then float).
    Operand rows and bases must lie on 16 bytes (gemm_mma_staged.aligned). `gather_a`: C
    source of ``int netcl_gather_a_at(int row, int col)`` as gemm_mma_staged.staged_source
    takes it (the convolutions' patches copied straight from their input).

    >>> src = wgmma_source(TIERS[0], False, False, "bf16", "bfloat16")
    """
    cfg.validate(operands)
    if isinstance(epilogue, GemmEpilogue):
        out = "float"
    es = OPERANDS[operands][1]
    if out not in OUTPUTS or (es == 4 and out != "float"):
        raise ValueError(f"wgmma_source: {operands} operands cannot store C as {out!r}")
    if es == 4 and (ta or not tb):
        raise ValueError("wgmma_source: TF32 operands must be K-major (ta False, tb True)")
    S, T = cfg.stages, cfg.threads
    A = _Tile("A", cfg, cfg.bm, not ta, "m0", "M", es, bool(gather_a))
    B = _Tile("B", cfg, cfg.bn, tb, "n0", "N", es)
    bk = A.bk
    ctype = {"float": "float", "half": "half", "bfloat16": "ushort"}[out]
    src = [ptx_target_mark("sm_90a"),
           _header("float", "float" if es == 4 else "ushort", ctype), _PTX]
    src += output_preamble(out, epilogue, gather_a)
    src.append(f"__attribute__((reqd_work_group_size({T}, 1, 1)))")
    src.append(_signature(epilogue) + " {")
    src.append(f"    __local uint4 smem[{cfg.local_mem_bytes() // 16}];")
    # the tiles' base on 1024 bytes: the swizzle's pattern follows address bits 4-9
    src.append(f"    const uint sm = ((uint)(size_t)smem + {ATOM_BYTES - 1}u) & "
               f"~{ATOM_BYTES - 1}u;")
    src.append(f"    const uint a_sh = sm, b_sh = sm + {S} * {A.bytes};")
    src.append(_prologue(cfg, bool(gather_a)))
    src.append("    const int tid = get_local_id(0);")
    src.append("    const int lane = tid & 31, warp = tid >> 5;")
    src.append("    const int gid = lane >> 2, tig = lane & 3;")
    src.append(f"    const int wrow = (warp >> 2) * {cfg.mt * 64};   /* this warpgroup's rows */")
    src += A.decls() + B.decls()
    n_j = cfg.bn // cfg.n_inst
    for i in range(cfg.mt):
        for j in range(n_j):
            src.append("    float " + ", ".join(f"d{i}_{j}_{r} = 0.0f"
                                                for r in range(cfg.n_inst // 2)) + ";")
    src.append(f"    const int nkt = (K + {bk - 1}) / {bk};")
    ahead = S - 1 - cfg.inflight          # tiles copied ahead of the one multiplied
    for s in range(ahead):
        src.append(f"    if ({s} < nkt) {{ const int k0 = {s * bk};")
        src += A.copy(str(s)) + B.copy(str(s))
        src.append("    }")
        src.append("    NETCL_CP_COMMIT();")
    src.append("    for (int kt = 0; kt < nkt; ++kt) {")
    # tile kt has landed once at most ahead-1 newer copy groups are pending; the fence
    # makes these generic-proxy writes visible to wgmma's reads (the async proxy)
    src.append(f'        asm volatile("cp.async.wait_group {ahead - 1};" ::: "memory");')
    src.append("        NETCL_PROXY_FENCE();")
    src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
    # the stage refilled now was last read by wgmma group kt - 1 - inflight, which every
    # warpgroup waited for before the barrier
    src.append(f"        if (kt + {ahead} < nkt) {{ const int k0 = (kt + {ahead}) * {bk}; "
               f"const int st = (kt + {ahead}) % {S};")
    src += A.copy("st") + B.copy("st")
    src.append("        }")
    src.append("        NETCL_CP_COMMIT();")
    src.append("        {")
    src.append(f"        const int cur = kt % {S};")
    src.append(f"        const uint a_cur = a_sh + cur * {A.bytes}, b_cur = b_sh + cur * {B.bytes};")
    src.append("        NETCL_WG_FENCE();")
    for kk in range(ROW_BYTES // 32):          # K steps of 32 bytes
        src.append("        {")
        for i in range(cfg.mt):
            src.append(f"            const ulong da{i} = "
                       f"{A.desc('a_cur', f'(wrow + {i * 64})', kk)};")
        for j in range(n_j):
            src.append(f"            const ulong db{j} = {B.desc('b_cur', j * cfg.n_inst, kk)};")
        for i in range(cfg.mt):
            for j in range(n_j):
                src.append(_wgmma(cfg, i, j, operands, ta, not tb))
        src.append("        }")
    src.append("        NETCL_WG_COMMIT();")
    src.append(f"        NETCL_WG_WAIT{cfg.inflight}();")
    src.append("        }")
    src.append("    }")
    src.append("    NETCL_WG_WAIT0();")
    src.append('    asm volatile("cp.async.wait_group 0;" ::: "memory");')
    src += _store_c(cfg, out, n_j, epilogue)
    src.append("}")
    return "\n".join(src) + "\n"


def _store_c(cfg, out, n_j, epilogue):
    """Statements storing the accumulators (module docstring's layout), two adjacent
    columns at a time where the block lies inside C."""
    o = [f"    const int c_ok = ((ldc % 2) == 0) && ((boc % 2) == 0) && "
         f"(m0 + {cfg.bm} <= M) && (n0 + {cfg.bn} <= N);",
         "    const int row0 = m0 + wrow + (warp & 3) * 16 + gid;"]
    for i in range(cfg.mt):
        for j in range(n_j):
            for r in range(0, cfg.n_inst // 2, 2):
                q, h = r // 4, (r // 2) % 2
                o.append(f"    {{ const int row = row0 + {i * 64 + 8 * h}; "
                         f"const int col = n0 + {j * cfg.n_inst + 8 * q} + 2 * tig;")
                o.append(f"      {pair_store(out, epilogue, f'd{i}_{j}_{r}', f'd{i}_{j}_{r + 1}')} }}")
    return o


# TF32 operands: wgmma reads only K-major TF32 tiles and ignores the 13 low mantissa bits of
# each float32 word; netcl's TF32 rounds to nearest (ties away, as cvt.rna and gemm_mma.py).
# These kernels write an operand as a dense (batch, rows, K) matrix of rounded words: rows
# of K read as they are (`netcl_tf32_rows`), or K-major rows made of an operand whose rows
# are contiguous through 32 x 32 tiles of local memory (`netcl_tf32_transpose`). Element
# (b, r, k) of the source is at off + b * bstride + r * ld + k (rows) or + k * ld + r.
TF32_PACK_SOURCE = r"""
inline float netcl_tf32_rna(const float x) {
    /* to nearest, ties away: add half of the 13 dropped bits' unit, clear them (infinities
       and NaNs as they are) */
    const uint u = as_uint(x);
    return (u & 0x7f800000u) == 0x7f800000u ? x : as_float((u + 0x1000u) & 0xffffe000u);
}
__kernel void netcl_tf32_rows(__global float* restrict out, __global const float* restrict in,
                              const int R, const int K, const int ld, const int bstride,
                              const int off) {
    const int k = get_global_id(0), row = get_global_id(1);      /* row: b * R + r */
    if (k >= K) return;
    const int b = row / R, r = row - b * R;
    out[(long)row * K + k] = netcl_tf32_rna(in[off + (long)b * bstride + (long)r * ld + k]);
}
__kernel __attribute__((reqd_work_group_size(32, 8, 1)))
void netcl_tf32_transpose(__global float* restrict out, __global const float* restrict in,
                          const int R, const int K, const int ld, const int bstride,
                          const int off) {
    __local float t[32][33];
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int r0 = get_group_id(0) * 32, k0 = get_group_id(1) * 32, b = get_group_id(2);
    const long base = off + (long)b * bstride;
    for (int j = ly; j < 32; j += 8) {          /* read along r, the contiguous dimension */
        const int r = r0 + lx, k = k0 + j;
        t[j][lx] = (r < R && k < K) ? in[base + (long)k * ld + r] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = ly; j < 32; j += 8) {          /* write along k */
        const int r = r0 + j, k = k0 + lx;
        if (r < R && k < K) out[((long)b * R + r) * K + k] = netcl_tf32_rna(t[lx][j]);
    }
}
"""


def tf32_pack_dims(transposed: bool, batch: int, R: int, K: int):
    """(kernel name, global size, local size) of the TF32 pack of a (batch, R, K) operand,
    its rows contiguous (`transposed`) or its K."""
    if transposed:
        return ("netcl_tf32_transpose", (-(-R // 32) * 32, -(-K // 32) * 8, batch), (32, 8, 1))
    return "netcl_tf32_rows", (-(-K // 64) * 64, batch * R), (64, 1)
