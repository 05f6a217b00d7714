"""Tensor-core GEMM with tiles staged by cp.async, for NVIDIA GPUs: ``C[b] =
epilogue(A[b] @ B[b])`` with float32 accumulation through inline-PTX ``mma.sync``
(see OPENCL_NOTES.md): float16 or bfloat16 operands (``m16n8k16.row.col.f32.{f16,bf16}``)
and float32 operands in TF32 (``m16n8k8 .tf32``, rounded to nearest as they are read, as
gemm_mma.py does).

16-bit operands are read as 16-bit words (``ushort``) and handed to the instruction two per
32-bit register, so no OpenCL ``half`` arithmetic is needed; the products of two 16-bit
floats are exact in float32, so the result is a float32 sum of exact products whatever the
requested precision. C is stored as float32, float16 (``vstore_half``: round to nearest
even) or bfloat16 (rounded to nearest even by hand). gemm.py's signature, size arguments and
launch geometry (``launch_dims``), with ``ushort`` operands for 16-bit floats.

A work-group of ``warps_m x warps_n`` warps computes a ``BM x BN`` block, each warp a
``mi*16 x nj*8`` sub-block as ``mi x nj`` m16n8 accumulator fragments. Local tiles keep each
operand's memory order (the contiguous dimension of its storage stays contiguous), so a tile
is copied from global memory in 16-byte chunks without reordering; rows are padded so that
the eight 16-byte rows an ``ldmatrix`` phase reads, or the 32 words a warp's scalar fragment
loads read, fall in distinct banks. Fragments are read with ``ldmatrix`` (``.trans`` for
16-bit pairs that are not adjacent in local memory; TF32 fragments along a row-major
operand's columns have no 32-bit transposing form and are read word by word), or with plain
local loads (``ldmatrix=False``).

Two pipelines fill the tiles: ``cp.async`` (``async_copy=True``, `stages` tiles in flight,
16-byte copies straight into local memory, zero-filled past the operand's edges), for
operands whose rows and bases are 16-byte aligned (`aligned`); and register staging
(double-buffered: the next tile's loads are issued before this tile's products, stored after
them), which reads any layout. gemm_mma.py's kernel, which also takes statement epilogues
and the convolutions' gathers, serves the rest.
"""
from __future__ import annotations

from dataclasses import dataclass

from .gemm import (GemmEpilogue, _epi_fn, _header, _signature, _store_call,
                   _prologue as _plain_prologue, launch_dims)  # noqa: F401 (launch_dims: both)
from .gemm_mma import TF32_ROUND, WarpGrid

# C types the kernel stores C as, by output dtype name
OUTPUTS = ("float", "half", "bfloat16")
# operand kinds: (PTX type, bytes per element, K of one mma)
OPERANDS = {"f16": ("f16", 2, 16), "bf16": ("bf16", 2, 16), "tf32": ("tf32", 4, 8)}


@dataclass(frozen=True)
class StagedConfig(WarpGrid):
    """``warps_m x warps_n`` warps per work-group, each ``mi`` m16 by ``nj`` n8 fragments;
    K step ``bk`` (a multiple of 16); ``stages`` local tiles in flight with ``cp.async``
    (register staging keeps two); local row padding ``pad`` (16-bit words; TF32 tiles whose
    rows run along K take half of it in 32-bit words); fragments read with ``ldmatrix`` or
    with plain local loads; ``group_m`` > 1 hands blocks out in bands of that many block rows
    (work-groups running together then share their A and B panels in cache)."""

    warps_m: int = 2
    warps_n: int = 2
    mi: int = 4
    nj: int = 8
    bk: int = 32
    stages: int = 2
    pad: int = 8
    ldmatrix: bool = True
    group_m: int = 1
    kind = "mma"


    def tiles(self, ta: bool, tb: bool):
        """((rows, cols) of A's local tile, (rows, cols) of B's): cols are the operand's
        contiguous dimension."""
        a = (self.bk, self.bm) if ta else (self.bm, self.bk)
        b = (self.bn, self.bk) if tb else (self.bk, self.bn)
        return a, b

    def tile_pad(self, operands: str, k_is_col: bool) -> int:
        """Row padding (elements) of a local tile: 16 bytes for 16-bit elements; for TF32,
        16 bytes along K (ldmatrix rows an odd number of 16-byte units apart), 32 across it
        (the scalar fragment loads of a warp: rows 8 banks apart)."""
        return self.pad // 2 if OPERANDS[operands][1] == 4 and k_is_col else self.pad

    def local_mem_bytes(self, ta: bool = False, tb: bool = False, async_copy: bool = True,
                        operands: str = "f16") -> int:
        (ra, ca), (rb, cb) = self.tiles(ta, tb)
        nbuf = self.stages if async_copy else 2
        pa, pb = self.tile_pad(operands, not ta), self.tile_pad(operands, tb)
        return OPERANDS[operands][1] * nbuf * (ra * (ca + pa) + rb * (cb + pb))

    def validate(self, operands: str = "f16") -> None:
        if operands not in OPERANDS:
            raise ValueError(f"staged mma GEMM: operands must be one of {list(OPERANDS)}, got "
                             f"{operands!r}")
        if self.bk % 16 or min(self.warps_m, self.warps_n, self.mi, self.nj) < 1 or \
                self.nj % 2 or self.pad % 8 or self.stages < 2:
            raise ValueError(f"bad StagedConfig {self}: bk a multiple of 16, nj even, pad a "
                             "multiple of 8, at least 2 stages")
        per = 16 // OPERANDS[operands][1]
        for rows in (self.bm, self.bn):
            if (rows * self.bk // per) % self.threads:
                raise ValueError(f"bad StagedConfig {self}: a {rows}x{self.bk} tile is not "
                                 f"a whole number of 16-byte chunks per work-item")


# Tiers per operand kind, biggest block first: `choose_config` takes the first that fits the
# device's local memory (Target.local_mem_limit) and pads the product's columns by at most a
# quarter. Four warps of 64 x 64 with three stages of 128 bytes of K per row, handed out in
# bands of 8 block rows, were the fastest of the configurations benchmarks/gemm_mma_bench.py
# --half tried on a square product; then four stages of 64 bytes, and two (within the 48 KB
# every OpenCL driver of these GPUs reports).
_C = StagedConfig
HALF_TIERS = [
    _C(2, 2, 4, 8, bk=64, stages=3, group_m=8), _C(2, 2, 4, 8, bk=32, stages=4, group_m=8),
    _C(2, 2, 4, 8, bk=32, stages=2, group_m=8),                                 # 128 x 128
    _C(2, 2, 4, 4, bk=64, stages=3, group_m=8), _C(2, 2, 4, 4, bk=32, stages=2, group_m=8),
    _C(4, 1, 2, 4, bk=64, stages=3, group_m=8), _C(4, 1, 2, 4, bk=32, stages=2, group_m=8),
]
TF32_TIERS = [        # the same bytes per row of K
    _C(2, 2, 4, 8, bk=32, stages=3, group_m=8), _C(2, 2, 4, 8, bk=16, stages=4, group_m=8),
    _C(2, 2, 4, 8, bk=16, stages=2, group_m=8),
    _C(2, 2, 4, 4, bk=32, stages=3, group_m=8), _C(2, 2, 4, 4, bk=16, stages=2, group_m=8),
    _C(4, 1, 2, 4, bk=32, stages=3, group_m=8), _C(4, 1, 2, 4, bk=16, stages=2, group_m=8),
]


def choose_config(operands: str, M: int, N: int, local_mem: int, ta=False, tb=False,
                  async_copy=True) -> StagedConfig:
    """The first tier of `operands` ("f16", "bf16", "tf32") whose local tiles fit
    `local_mem` bytes and whose blocks pad the product's N columns by at most a quarter
    (else the narrowest that fits)."""
    tiers = TF32_TIERS if operands == "tf32" else HALF_TIERS
    fits = [c for c in tiers
            if c.local_mem_bytes(ta, tb, async_copy, operands) + 256 <= local_mem] or tiers[-1:]
    for cfg in fits:
        if -(-N // cfg.bn) * cfg.bn <= 1.25 * N:
            return cfg
    return min(fits, key=lambda c: c.bn)


def aligned(operands: str, ld: int, offset: int, batch_stride: int) -> bool:
    """Whether an operand's rows and bases start on 16 bytes: cp.async's copies."""
    per = 16 // OPERANDS[operands][1]
    return ld % per == 0 and offset % per == 0 and batch_stride % per == 0


_PTX = TF32_ROUND + r"""inline uint netcl_pack2(const ushort lo, const ushort hi) {
    return (uint)lo | ((uint)hi << 16);
}
#define NETCL_MMA16(c0, c1, c2, c3, a0, a1, a2, a3, b0, b1) \
    asm volatile("mma.sync.aligned.m16n8kK.row.col.f32.OPT.OPT.f32 " \
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" \
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3) \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
#define NETCL_LDSM4(r0, r1, r2, r3, addr) \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" \
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr))
#define NETCL_LDSM4_T(r0, r1, r2, r3, addr) \
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" \
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr))
#define NETCL_CP16(dst, src, bytes) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" \
                 :: "r"(dst), "l"(src), "r"(bytes) : "memory")
#define NETCL_CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
"""

# two floats to a register of two 16-bit floats (round to nearest even), lo in the lower half
_PACK_OUT = r"""inline uint netcl_cvt2(const float lo, const float hi) {
    uint r;
    asm("cvt.rn.OUTx2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
"""

_BF16_STORE = r"""inline ushort netcl_bf16_rne(const float f) {
    const uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);   /* NaN */
    return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
"""


def _store(out: str, ci: str, v: str) -> str:
    if out == "float":
        return f"C[{ci}] = {v};"
    if out == "half":
        return f"vstore_half({v}, {ci}, C);"
    return f"C[{ci}] = netcl_bf16_rne({v});"


def output_preamble(out: str, epilogue, gather_a: str | None) -> list:
    """The helper definitions a tensor-core kernel storing C as `out` needs (the bfloat16
    rounding, the paired conversion), its epilogue function and its gather's source."""
    src = []
    if out == "bfloat16":
        src.append(_BF16_STORE)
    if out != "float":
        src.append(_PACK_OUT.replace("OUT", "bf16" if out == "bfloat16" else "f16"))
    return src + [_epi_fn("float", epilogue), gather_a or ""]


def pair_store(out: str, epilogue, a0: str, a1: str) -> str:
    """The statement storing accumulators `a0`, `a1` at C's (row, col) and (row, col + 1)
    (C variables ``row``, ``col``; ``c_ok``: the block lies inside C, whose rows are
    2-aligned): one paired store where ``c_ok``, else each element inside C."""
    if not isinstance(epilogue, GemmEpilogue):
        v0 = f"netcl_gemm_epilogue({a0}, row, col, bidx)"
        v1 = f"netcl_gemm_epilogue({a1}, row, col + 1, bidx)"
        s0 = _store(out, "row * ldc + col", v0)
        s1 = _store(out, "row * ldc + col + 1", v1)
        fast = (f"*((__global float2*)(C + row * ldc + col)) = (float2)({v0}, {v1});"
                if out == "float" else
                f"*((__global uint*)(C + row * ldc + col)) = netcl_cvt2({v0}, {v1});")
    else:
        s0 = _store_call(epilogue, "row * ldc + col", a0, "row", "col")
        s1 = _store_call(epilogue, "row * ldc + col + 1", a1, "row", "col + 1")
        fast = f"{s0} {s1}"
    return (f"if (c_ok) {{ {fast} }} else if (row < M) {{ "
            f"if (col < N) {s0} if (col + 1 < N) {s1} }}")


class _Operand:
    """Loading code of one operand's tiles: local tile of `rows x cols` (cols contiguous in
    memory) of element type `T` (`E` elements per 16-byte chunk), `k_is_col` where K runs
    along the contiguous dimension."""

    def __init__(self, name, cfg, operands, rows, cols, k_is_col, base, ext, gather=False):
        self.x, self.cfg = name, cfg                  # "A" / "B"
        # a gathered operand: its chunks' addresses come from ``netcl_gather_a_at`` (A only,
        # K along its rows' contiguous run, every chunk wholly inside or outside the input)
        self.gather = gather
        self.T = "float" if OPERANDS[operands][1] == 4 else "ushort"
        self.E = 16 // OPERANDS[operands][1]
        self.VT = "float4" if self.T == "float" else "uint4"
        self.rows, self.cols, self.k_is_col = rows, cols, k_is_col
        self.base, self.ext = base, ext               # m0 / n0, M / N
        self.P = cols + cfg.tile_pad(operands, k_is_col)   # local row length (elements)
        self.stage = rows * self.P                    # one local tile (elements)
        self.per = rows * cols // self.E // cfg.threads    # 16-byte chunks per work-item
        self.ld = "lda" if name == "A" else "ldb"

    def decls(self):
        x, E, cpr = self.x, self.E, self.cols // self.E
        big = self.rows if self.k_is_col else self.cols
        # whether the block's rows (columns) all lie inside the operand
        out = [f"    const int {x}_in = {self.base} + {big} <= {self.ext};"]
        for i in range(self.per):
            c, v = f"{x}{i}", f"(tid + {i * self.cfg.threads})"
            out.append(f"    const int {c}_r = {v} / {cpr}, {c}_c = ({v} % {cpr}) * {E};")
            out.append(f"    const int {c}_l = {c}_r * {self.P} + {c}_c;")   # local offset
            if self.gather and self.k_is_col:    # the chunk's storage row; inside A?
                out.append(f"    const int {c}_row = {x}_bo + {self.base} + {c}_r;")
                out.append(f"    const int {c}_ok = {self.base} + {c}_r < {self.ext};")
            elif self.gather:                     # its storage column
                out.append(f"    const int {c}_col = {x}_bi + {self.base} + {c}_c;")
                out.append(f"    const int {c}_ok = {self.base} + {c}_c < {self.ext};")
            elif self.k_is_col:      # rows: M (N) from base; cols: K from k0
                out.append(f"    const int {c}_g = ({self.base} + {c}_r) * {self.ld} + {c}_c;")
                out.append(f"    const int {c}_ok = {self.base} + {c}_r < {self.ext};")
            else:                  # rows: K from k0; cols: M (N) from base
                out.append(f"    const int {c}_g = {c}_r * {self.ld} + {self.base} + {c}_c;")
                out.append(f"    const int {c}_n = clamp({self.ext} - {self.base} - {c}_c, "
                           f"0, {E});")
        return out

    def _koff(self):
        return "k0" if self.k_is_col else f"k0 * {self.ld}"

    def _valid(self, c):
        """Elements of chunk c inside the operand, 0 to E (uses k0)."""
        if self.k_is_col:
            return f"({c}_ok ? clamp(K - k0 - {c}_c, 0, {self.E}) : 0)"
        return f"(k0 + {c}_r < K ? {c}_n : 0)"

    def copy_async(self, stage):
        """cp.async of this work-item's chunks of the tile at k0 into local stage `stage`:
        tiles inside the operand copy whole chunks, edge tiles as many elements as lie inside
        (the rest of a chunk is zero-filled)."""
        x, whole, edge = self.x, [], []
        es = 16 // self.E
        if self.gather:
            return [self._copy_gathered(stage)]
        for i in range(self.per):
            c = f"{x}{i}"
            dst = f"{x.lower()}s_sh + {es} * (({stage}) * {self.stage} + {c}_l)"
            whole.append(f"NETCL_CP16({dst}, (ulong)({x} + {c}_g + {self._koff()}), 16);")
            edge.append(f"{{ const int nv = {self._valid(c)}; NETCL_CP16({dst}, "
                        f"(ulong)(nv > 0 ? {x} + {c}_g + {self._koff()} : {x}), nv * {es}); }}")
        return [f"        if ({x}_in && k0 + {self.cfg.bk} <= K) {{ {' '.join(whole)} }}",
                f"        else {{ {' '.join(edge)} }}"]

    def _copy_gathered(self, stage):
        """cp.async of this work-item's gathered chunks: 16 bytes from the input where the
        chunk lies in it, zeros (no read) in the padding or past P's rows and K."""
        x, es, out = self.x, 16 // self.E, []
        for i in range(self.per):
            c = f"{x}{i}"
            dst = f"{x.lower()}s_sh + {es} * (({stage}) * {self.stage} + {c}_l)"
            if self.k_is_col:
                inside, at = f"k0 + {c}_c < K", f"{c}_row, {x}_bi + k0 + {c}_c"
            else:
                inside, at = f"k0 + {c}_r < K", f"{x}_bo + k0 + {c}_r, {c}_col"
            out.append(f"{{ const int g = {c}_ok && {inside} ? netcl_gather_a_at({at}) : -1; "
                       f"NETCL_CP16({dst}, (ulong)(g >= 0 ? {x} + g : {x}), g >= 0 ? 16 : 0); }}")
        return "        " + " ".join(out)

    def reg_decls(self):
        return [f"    {self.VT} {self.x}{i}_v = ({self.VT})(0);" for i in range(self.per)]

    def reg_load(self):
        """Global -> registers of this work-item's chunks of the tile at k0."""
        x, T, E, out = self.x, self.T, self.E, []
        for i in range(self.per):
            c = f"{x}{i}"
            p = f"{x} + {c}_g + {self._koff()}"
            el = " ".join(f"const {T} e{e} = nv > {e} ? ({p})[{e}] : ({T})0;" for e in range(E))
            if T == "float":
                pk = "e0, e1, e2, e3"
            else:
                pk = ", ".join(f"netcl_pack2(e{2 * e}, e{2 * e + 1})" for e in range(4))
            out.append(f"        {{ const int nv = {self._valid(c)}; "
                       f"if ({x}_VEC && nv == {E}) "
                       f"{{ {c}_v = *((__global const {self.VT}*)({p})); }} "
                       f"else {{ {el} {c}_v = ({self.VT})({pk}); }} }}")
        return out

    def reg_store(self, stage):
        x = self.x
        return [f"        *((__local {self.VT}*)({x.lower()}s + ({stage}) * {self.stage} + "
                f"{x}{i}_l)) = {x}{i}_v;" for i in range(self.per)]


def _prologue(cfg: StagedConfig, gather_a: bool = False) -> str:
    """gemm.py's prologue (block origin m0, n0, batch index, operand bases), with blocks
    handed out in bands of `group_m` block rows: the linear block index within a batch
    walks a band's rows first, then its columns. A gathered A keeps its pointer (its base
    offset becomes a storage row and column, as in gemm.py)."""
    if cfg.group_m <= 1:
        return _plain_prologue(cfg, gather_a)
    advance_a = ("const int A_bo = (int)(boa / lda), A_bi = (int)(boa % lda);" if gather_a
                 else "A += boa;")
    return f"""    const int ntn = (N + {cfg.bn - 1}) / {cfg.bn};
    const int ntm = get_num_groups(1);
    const int g0 = get_group_id(0);
    const int bidx = g0 / ntn;
    const int lin = get_group_id(1) * ntn + (g0 - bidx * ntn);
    const int band = lin / ({cfg.group_m} * ntn), first = band * {cfg.group_m};
    const int rows = min(ntm - first, {cfg.group_m}), in_band = lin - band * {cfg.group_m} * ntn;
    const int m0 = (first + in_band % rows) * {cfg.bm};
    const int n0 = (in_band / rows) * {cfg.bn};
    const long boa = (long)off_a + (long)bidx * batch_stride_a;
    const long bob = (long)off_b + (long)bidx * batch_stride_b;
    const long boc = (long)off_c + (long)bidx * batch_stride_c;
    {advance_a} B += bob; C += boc;
"""


def staged_source(cfg: StagedConfig, ta: bool, tb: bool, operands: str = "f16",
                  out: str = "float", epilogue: str | GemmEpilogue | None = None,
                  async_copy: bool = True, gather_a: str | None = None) -> str:
    """OpenCL C source of kernel ``netcl_gemm`` (gemm.py's signature; ``ushort`` operands for
    16-bit floats, C of `out`: "float", "half" or "bfloat16") on tensor cores. `operands`:
    "f16", "bf16" or "tf32" (float32 operands, float C); `epilogue`: a C expression of
    ``acc, row, col, batch`` (float), the value stored, or a GemmEpilogue (its statements
    store every output; C is then float); `async_copy`: the cp.async pipeline (operands
    must be `aligned`).

    `gather_a` (cp.async only): C source defining ``int netcl_gather_a_at(int row, int
    col)``, the element index in the buffer passed as A of A's 16 bytes from storage (row,
    col) on (col a multiple of a chunk), or -1 where they are zeros: the convolutions'
    implicit GEMM copies its patches matrix's tiles straight from the input image this way
    (conv_kernels._p_chunk_source). A's contiguous extent (K, or M where `ta`) must be a
    whole number of chunks.

    >>> src = staged_source(HALF_TIERS[0], False, False, "bf16", "bfloat16")
    """
    cfg.validate(operands)
    if isinstance(epilogue, GemmEpilogue):
        out = "float"
    if out not in OUTPUTS or (operands == "tf32" and out != "float"):
        raise ValueError(f"staged_source: operands {operands!r} cannot store C as {out!r}")
    if gather_a and not async_copy:
        raise ValueError("staged_source: gather_a needs async_copy")
    ptx, es, KM = OPERANDS[operands]
    tf32 = operands == "tf32"
    BK, S = cfg.bk, (cfg.stages if async_copy else 2)
    (ra, ca), (rb, cb) = cfg.tiles(ta, tb)
    A = _Operand("A", cfg, operands, ra, ca, not ta, "m0", "M", bool(gather_a))
    B = _Operand("B", cfg, operands, rb, cb, tb, "n0", "N")
    T, KH = A.T, 16 // es            # KH: K extent of one 8x8 ldmatrix block (16 bytes)
    ctype = {"float": "float", "half": "half", "bfloat16": "ushort"}[out]
    src = [_header("float", T, ctype), _PTX.replace("OPT", ptx).replace("kK", f"k{KM}")]
    src += output_preamble(out, epilogue, gather_a)
    src.append(f"__attribute__((reqd_work_group_size({cfg.threads}, 1, 1)))")
    src.append(_signature(epilogue) + " {")
    src.append(f"    __local uint4 AsW[{S * A.stage * es // 16}];")
    src.append(f"    __local uint4 BsW[{S * B.stage * es // 16}];")
    src.append(f"    __local {T}* as = (__local {T}*)AsW;")
    src.append(f"    __local {T}* bs = (__local {T}*)BsW;")
    # shared-window addresses of the tiles, for ldmatrix and cp.async
    src.append("    const uint as_sh = (uint)(size_t)as, bs_sh = (uint)(size_t)bs;")
    src.append(_prologue(cfg, bool(gather_a)))
    src.append("    const int tid = get_local_id(0);")
    src.append("    const int lane = tid & 31, warp = tid >> 5;")
    # PTX's groupID and threadID_in_group
    src.append("    const int gid = lane >> 2, tig = lane & 3;")
    src.append("    const int lq = lane >> 3, lr = lane & 7;     /* ldmatrix: matrix, row */")
    src.append(f"    const int wm = (warp / {cfg.warps_n}) * {cfg.mi * 16};")
    src.append(f"    const int wn = (warp % {cfg.warps_n}) * {cfg.nj * 8};")
    src.append(f"    const int A_VEC = {0 if gather_a else 1} && ((lda % {A.E}) == 0) && "
               f"((boa % {A.E}) == 0);")
    src.append(f"    const int B_VEC = ((ldb % {B.E}) == 0) && ((bob % {B.E}) == 0);")
    PA, PB = A.P, B.P
    # this lane's row address inside a fragment group, for ldmatrix (see compute): matrix lq
    # of the four, row lr of it
    if ta:
        src.append(f"    const int la = ((lq >> 1) * 8 + lr) * {PA} + (lq & 1) * 8;")
    else:
        src.append(f"    const int la = ((lq & 1) * 8 + lr) * {PA} + (lq >> 1) * {KH};")
    if tb:
        src.append(f"    const int lb = ((lq >> 1) * 8 + lr) * {PB} + (lq & 1) * {KH};")
    else:
        src.append(f"    const int lb = ((lq & 1) * 8 + lr) * {PB} + (lq >> 1) * 8;")
    src += A.decls() + B.decls()
    for i in range(cfg.mi):
        for j in range(cfg.nj):
            src.append(f"    float c{i}_{j}_0 = 0, c{i}_{j}_1 = 0, c{i}_{j}_2 = 0, c{i}_{j}_3 = 0;")
    src.append(f"    const int nkt = (K + {BK - 1}) / {BK};")

    def a_frags(i, ks):
        """Statements setting a{i}_0..3 for the K step at ks. Fragment layouts (PTX ISA):
        m16n8k16: a0 (row gid, k 2tig, 2tig+1), a1 (row +8), a2 (k +8), a3 (both), the lower
        k in the lower half; m16n8k8 .tf32: a0 (row gid, k tig), a1 (row +8), a2 (k +4)."""
        r = f"a{i}_0, a{i}_1, a{i}_2, a{i}_3"
        o = [f"        uint {r};"]
        h = KM // 2                                         # K offset of a2, a3
        if cfg.ldmatrix and not (tf32 and ta):
            at = f"{ks * PA} + wm + {i * 16}" if ta else f"(wm + {i * 16}) * {PA} + {ks}"
            o.append(f"        {'NETCL_LDSM4_T' if ta else 'NETCL_LDSM4'}({r}, "
                     f"pa_sh + {es} * ({at} + la));")
            if tf32:
                o += [f"        a{i}_{q} = netcl_tf32(as_float(a{i}_{q}));" for q in range(4)]
            return o
        for q, (dm, dk) in enumerate(((0, 0), (8, 0), (0, h), (8, h))):
            m, k = f"wm + {i * 16 + dm} + gid", f"{ks + dk}"
            if tf32:           # one element per register
                at = f"({k} + tig) * {PA} + {m}" if ta else f"({m}) * {PA} + {k} + tig"
                o.append(f"        a{i}_{q} = netcl_tf32(pa[{at}]);")
            elif ta:           # pa[k][m]: the pair along k is a row apart
                o.append(f"        a{i}_{q} = netcl_pack2(pa[({k} + 2 * tig) * {PA} + {m}], "
                         f"pa[({k} + 2 * tig + 1) * {PA} + {m}]);")
            else:              # pa[m][k]: the pair is adjacent
                o.append(f"        a{i}_{q} = *((__local const uint*)(pa + ({m}) * {PA} + {k} "
                         f"+ 2 * tig));")
        return o

    def b_frags(j, ks):
        """Statements setting b{j}_0..1 and b{j+1}_0..1: m16n8k16: b0 (k 2tig, 2tig+1, col
        gid), b1 (k +8); m16n8k8 .tf32: b0 (k tig, col gid), b1 (k +4)."""
        r = f"b{j}_0, b{j}_1, b{j + 1}_0, b{j + 1}_1"
        o = [f"        uint {r};"]
        if cfg.ldmatrix and not (tf32 and not tb):
            at = f"(wn + {j * 8}) * {PB} + {ks}" if tb else f"{ks * PB} + wn + {j * 8}"
            o.append(f"        {'NETCL_LDSM4' if tb else 'NETCL_LDSM4_T'}({r}, "
                     f"pb_sh + {es} * ({at} + lb));")
            if tf32:
                o += [f"        b{jj}_{q} = netcl_tf32(as_float(b{jj}_{q}));"
                      for jj in (j, j + 1) for q in range(2)]
            return o
        for jj in (j, j + 1):
            for q in range(2):
                n, k = f"wn + {jj * 8} + gid", f"{ks + q * KM // 2}"
                if tf32:
                    at = f"({n}) * {PB} + {k} + tig" if tb else f"({k} + tig) * {PB} + {n}"
                    o.append(f"        b{jj}_{q} = netcl_tf32(pb[{at}]);")
                elif tb:       # pb[n][k]: the pair is adjacent
                    o.append(f"        b{jj}_{q} = *((__local const uint*)(pb + ({n}) * {PB} + "
                             f"{k} + 2 * tig));")
                else:          # pb[k][n]
                    o.append(f"        b{jj}_{q} = netcl_pack2(pb[({k} + 2 * tig) * {PB} + {n}], "
                             f"pb[({k} + 2 * tig + 1) * {PB} + {n}]);")
        return o

    def compute(stage):
        o = [f"        __local const {T}* pa = as + ({stage}) * {A.stage};",
             f"        __local const {T}* pb = bs + ({stage}) * {B.stage};",
             f"        const uint pa_sh = as_sh + {es} * ({stage}) * {A.stage};",
             f"        const uint pb_sh = bs_sh + {es} * ({stage}) * {B.stage};"]
        for ks in range(0, BK, KM):
            o.append("        {")
            for i in range(cfg.mi):
                o += a_frags(i, ks)
            for j in range(0, cfg.nj, 2):
                o += b_frags(j, ks)
            for i in range(cfg.mi):
                for j in range(cfg.nj):
                    c = f"c{i}_{j}"
                    o.append(f"        NETCL_MMA16({c}_0, {c}_1, {c}_2, {c}_3, a{i}_0, a{i}_1, "
                             f"a{i}_2, a{i}_3, b{j}_0, b{j}_1);")
            o.append("        }")
        return ["        {"] + o + ["        }"]

    if async_copy:
        for s in range(S - 1):
            src.append(f"    if ({s} < nkt) {{ const int k0 = {s * BK};")
            src += A.copy_async(str(s)) + B.copy_async(str(s))
            src.append("    }")
            src.append("    NETCL_CP_COMMIT();")
        src.append("    for (int kt = 0; kt < nkt; ++kt) {")
        # tile kt has landed once at most S-2 newer copy groups are pending
        src.append(f'        asm volatile("cp.async.wait_group {S - 2};" ::: "memory");')
        src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
        # the stage refilled now was read in the last iteration, before everyone's barrier
        src.append(f"        if (kt + {S - 1} < nkt) {{ const int k0 = (kt + {S - 1}) * {BK}; "
                   f"const int st = (kt + {S - 1}) % {S};")
        src += A.copy_async("st") + B.copy_async("st")
        src.append("        }")
        src.append("        NETCL_CP_COMMIT();")
        src += compute(f"kt % {S}")
        src.append("    }")
        src.append('    asm volatile("cp.async.wait_group 0;" ::: "memory");')
    else:
        src += A.reg_decls() + B.reg_decls()
        src.append("    if (nkt > 0) { const int k0 = 0;")
        src += A.reg_load() + B.reg_load() + A.reg_store("0") + B.reg_store("0")
        src.append("    }")
        src.append("    barrier(CLK_LOCAL_MEM_FENCE);")
        src.append("    for (int kt = 0; kt < nkt; ++kt) {")
        src.append("        const int cur = kt & 1, more = kt + 1 < nkt;")
        src.append(f"        if (more) {{ const int k0 = (kt + 1) * {BK};")
        src += A.reg_load() + B.reg_load()
        src.append("        }")
        src += compute("cur")
        src.append("        if (more) {")
        src += A.reg_store("cur ^ 1") + B.reg_store("cur ^ 1")
        src.append("        }")
        src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
        src.append("    }")

    # store C: accumulator c{i}_{j}_{h}: row gid (+8 for h >= 2), columns 2*tig (+1 for odd h)
    src.append(f"    const int c_ok = ((ldc % 2) == 0) && ((boc % 2) == 0) && "
               f"(m0 + {cfg.bm} <= M) && (n0 + {cfg.bn} <= N);")
    for i in range(cfg.mi):
        for j in range(cfg.nj):
            for h in (0, 1):
                a0, a1 = f"c{i}_{j}_{2 * h}", f"c{i}_{j}_{2 * h + 1}"
                src.append(f"    {{ const int row = m0 + wm + {i * 16 + 8 * h} + gid; "
                           f"const int col = n0 + wn + {j * 8} + 2 * tig;")
                src.append(f"      {pair_store(out, epilogue, a0, a1)}")
                src.append("    }")
    src.append("}")
    return "\n".join(src) + "\n"
