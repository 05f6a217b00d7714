"""Batched GEMM kernel generator: ``C[b] = epilogue(A[b] @ B[b])``.

Standalone (numpy + pyopencl only).  One OpenCL C source is generated per
``(config, dtype, trans_a, trans_b, epilogue)``; every size, leading dimension,
batch stride and offset is a kernel argument, so a single build serves every
shape. Which configuration a device and shape get: gemm_tiers.choose_config.

Kernel signature (all sizes, strides and offsets in ELEMENTS)::

    __kernel void netcl_gemm(__global T* C, __global const T* A, __global const T* B,
                             int M, int N, int K, int lda, int ldb, int ldc,
                             int batch_stride_a, int batch_stride_b, int batch_stride_c,
                             int off_a, int off_b, int off_c)

``A[m, k] = A_mem[off_a + b*batch_stride_a + m*lda + k]`` (``k*lda + m`` when
``trans_a``); ``B[k, n] = B_mem[off_b + b*batch_stride_b + k*ldb + n]``
(``n*ldb + k`` when ``trans_b``); ``C[m, n]`` is row-major with ``ldc``.  A batch
stride of 0 broadcasts that operand.  K == 0 stores ``epilogue(0)``.

The batch index is folded into NDRange dimension 0 (``launch_dims``), so no
NDRange dimension ever needs more than ``2**31`` work-items and dimension 1
holds only ``ceil(M / BM)`` groups.  ``launch_dims`` returns a global size with
a 0 in it when ``batch``, ``M`` or ``N`` is 0: the caller must skip the launch.

Two kernel families:

* ``kind="tiled"`` (GPUs): a work-group computes a ``BM x BN`` block of C with
  ``wg_m x wg_n`` work-items, each holding a ``tm x tn`` register block.  A and
  B tiles of depth ``bk`` are staged through local memory (k-major, padded),
  loaded with ``vec``-wide global loads where the tile is interior and the
  operand aligned, optionally double-buffered (one barrier per K step).
* ``kind="cpu"`` (PoCL and other CPU drivers): a work-item owns an
  ``mr x (nv*vw)`` block held in ``vw``-wide vector registers (an explicit
  micro-kernel, since PoCL's implicit work-item vectoriser does not reach loops
  with inner loops).  The B panel of depth ``kc`` is packed into local memory
  (contiguous per work-item sliver, zero-filled at the edges) once per
  work-group; A is streamed from global memory with clamped row indices
  (copied into local memory row by row when ``trans_a``, whose rows are then
  contiguous in m).

C must not overlap A or B (the pointers are ``restrict``).

Epilogues: ``epilogue`` is either a C expression of ``acc, row, col, batch`` (the value
stored into C) or a ``GemmEpilogue``, whose statements compute and store any number of
outputs from ``acc`` and extra kernel arguments (jit's matmul epilogue fusion uses it to
finish a bias, an activation or a whole optimizer update while the tile is in registers).
"""
from __future__ import annotations

from dataclasses import dataclass

GEMM_KERNEL_NAME = "netcl_gemm"

_DTYPES = {"float": 4, "double": 8}


@dataclass(frozen=True)
class GemmEpilogue:
    """Statements run once per element of C in place of the plain store.

    ``params``: extra kernel parameters, appended to the signature after ``off_c``
    (``"__global const float* e0, __global float* o1"``); ``args``: their names as a call
    passes them (``"e0, o1"``); ``body``: C statements over ``acc`` (the dot product),
    ``row``, ``col``, ``batch``, ``ci`` (the element's index into C, ``row * ldc + col``)
    and the extra parameters; they store every output themselves (C too, if wanted).
    ``preamble``: helper definitions the body needs."""

    params: str
    args: str
    body: str
    preamble: str = ""
    # Optional: the same statements for ``vector_width`` consecutive columns at once, over
    # ``accv`` (a T<width> vector) with ``ci``, ``row`` and ``col`` those of the first; CPU
    # kernels of that vector width use it on whole tiles straight from their registers,
    # tiled (GPU) kernels whose ``rvec`` it equals on whole column chunks.
    vector_body: str = ""
    vector_width: int = 0


class WorkGroupTiles:
    """Blocks of ``wg_m x wg_n`` work-items, each ``tm x tn`` outputs (fields of the
    dataclasses that inherit this)."""

    @property
    def bm(self) -> int:
        return self.wg_m * self.tm

    @property
    def bn(self) -> int:
        return self.wg_n * self.tn

    @property
    def threads(self) -> int:
        return self.wg_m * self.wg_n


@dataclass(frozen=True)
class GemmConfig(WorkGroupTiles):
    """Tile configuration (hashable).

    kind="tiled": ``wg_m x wg_n`` work-items per group, ``tm x tn`` outputs per
    work-item, K step ``bk``, global vector load width ``vec``, local read
    vector width ``rvec`` (the register block is strided by ``rvec``-wide
    chunks), local padding ``pad`` (elements), ``double_buffer``.

    kind="cpu": ``wg_m x wg_n`` work-items per group, each ``tm`` rows by
    ``tn = nv*vw`` columns (``vec`` is the vector width ``vw``), K panel
    depth ``bk``; ``m_fastest`` makes local dimension 0 walk the M slivers.
    """

    kind: str = "tiled"
    wg_m: int = 16
    wg_n: int = 16
    tm: int = 8
    tn: int = 8
    bk: int = 8
    vec: int = 4
    rvec: int = 4
    pad: int = 4
    double_buffer: bool = True
    m_fastest: bool = False

    def local_mem_bytes(self, dtype: str, trans_a: bool = True) -> int:
        """Local memory of a work-group (CPU kind: B's panel, and A's where A is transposed)."""
        es = _DTYPES[dtype]
        if self.kind == "tiled":
            nbuf = 2 if self.double_buffer else 1
            return nbuf * self.bk * ((self.bm + self.pad) + (self.bn + self.pad)) * es
        return self.bk * (self.bn + (self.bm if trans_a else 0)) * es

    def validate(self, dtype: str = "float") -> None:
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be 'float' or 'double', got {dtype!r}")
        if self.kind == "tiled":
            if self.vec not in (1, 2, 4, 8, 16) or self.rvec not in (1, 2, 4, 8, 16):
                raise ValueError("vec and rvec must be 1, 2, 4, 8 or 16")
            if self.tm % self.rvec or self.tn % self.rvec:
                raise ValueError("tm and tn must be multiples of rvec")
            w = max(self.rvec, self.vec)   # local rows must stay aligned for vector stores and reads
            if (self.bm + self.pad) % w or (self.bn + self.pad) % w:
                raise ValueError("bm+pad and bn+pad must be multiples of max(vec, rvec)")
            if self.bk % self.vec or self.bm % self.vec or self.bn % self.vec:
                raise ValueError("bk, bm and bn must be multiples of vec")
        elif self.kind == "cpu":
            if self.vec not in (1, 2, 4, 8, 16):
                raise ValueError("vec must be 1, 2, 4, 8 or 16")
            if self.tn % self.vec:
                raise ValueError("tn must be a multiple of vec")
        else:
            raise ValueError(f"unknown kind {self.kind!r}")
        if min(self.wg_m, self.wg_n, self.tm, self.tn, self.bk) < 1:
            raise ValueError("sizes must be positive")


# ----------------------------------------------------------------------------
# source generation

def _vt(T: str, n: int) -> str:
    return T if n == 1 else f"{T}{n}"


def _comp(n: int, e: int) -> str:
    """Component ``e`` of an ``n``-wide vector ('' for scalars)."""
    if n == 1:
        return ""
    return ".s" + "0123456789abcdef"[e]


def _header(T: str, operand: str | None = None, out: str | None = None) -> str:
    """Typedefs: T, the accumulator's type; TA/TB, the operands' element type as stored
    (`operand`, default T: ``ushort`` for 16-bit floats handed to tensor cores as bits);
    TC, C's element type (`out`, default T)."""
    h = []
    if T == "double":
        h.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    h.append(f"typedef {T} T;")
    h.append(f"typedef {operand or T} TA;")
    h.append(f"typedef {operand or T} TB;")
    h.append(f"typedef {out or T} TC;")
    return "\n".join(h) + "\n"


_SIG = ("__kernel void " + GEMM_KERNEL_NAME + "(__global TC* restrict C, __global const TA* restrict A,\n"
        "    __global const TB* restrict B,\n"
        "    int M, int N, int K, int lda, int ldb, int ldc,\n"
        "    int batch_stride_a, int batch_stride_b, int batch_stride_c,\n"
        "    int off_a, int off_b, int off_c)")


def _epi_fn(T: str, epilogue) -> str:
    """The C functions storing an element of C: ``netcl_gemm_store`` (and ``_v``) for a
    GemmEpilogue, else ``netcl_gemm_epilogue`` returning the value stored. `T` is the
    accumulator's type (the typedef T); the C pointer is ``__global TC*`` (_header)."""
    if isinstance(epilogue, GemmEpilogue):
        src = (f"{epilogue.preamble}void netcl_gemm_store(__global TC* C, const int ci, const T acc,"
               f" const int row, const int col, const int batch, {epilogue.params}) {{\n"
               f"{epilogue.body}\n}}\n")
        if epilogue.vector_body:
            src += (f"void netcl_gemm_store_v(__global TC* C, const int ci, "
                    f"const {_vt(T, epilogue.vector_width)} accv, const int row, const int col, "
                    f"const int batch, {epilogue.params}) {{\n{epilogue.vector_body}\n}}\n")
        return src
    expr = "acc" if not epilogue else epilogue
    return (f"T netcl_gemm_epilogue(T acc, int row, int col, int batch) {{\n"
            f"    return ({expr});\n}}\n")


def _signature(epilogue) -> str:
    if isinstance(epilogue, GemmEpilogue):
        return _SIG[:-1] + f",\n    {epilogue.params})"
    return _SIG


def _store_call(epilogue, ci: str, acc: str, row: str, col: str) -> str:
    """The statement storing element (row, col) of C (index ci) from accumulator acc."""
    if isinstance(epilogue, GemmEpilogue):
        return f"netcl_gemm_store(C, {ci}, {acc}, {row}, {col}, bidx, {epilogue.args});"
    return f"C[{ci}] = netcl_gemm_epilogue({acc}, {row}, {col}, bidx);"


def _prologue(cfg: GemmConfig, gather_a: bool = False, gather_b: bool = False) -> str:
    # a gathered operand keeps its pointer; its base offset becomes a storage row and column
    advance = " ".join(
        f"const int {x}_bo = (int)(bo{x.lower()} / ld{x.lower()}), "
        f"{x}_bi = (int)(bo{x.lower()} % ld{x.lower()});" if g else f"{x} += bo{x.lower()};"
        for x, g in (("A", gather_a), ("B", gather_b)))
    return f"""    const int ntn = (N + {cfg.bn - 1}) / {cfg.bn};
    const int g0 = get_group_id(0);
    const int bidx = g0 / ntn;
    const int n0 = (g0 - bidx * ntn) * {cfg.bn};
    const int m0 = get_group_id(1) * {cfg.bm};
    const long boa = (long)off_a + (long)bidx * batch_stride_a;
    const long bob = (long)off_b + (long)bidx * batch_stride_b;
    const long boc = (long)off_c + (long)bidx * batch_stride_c;
    {advance} C += boc;
"""


def gemm_source(config: GemmConfig, dtype: str, trans_a: bool, trans_b: bool,
                epilogue: str | GemmEpilogue | None = None, gather_a: str | None = None,
                gather_b: str | None = None) -> str:
    """OpenCL C source of kernel ``netcl_gemm`` for this configuration.

    ``gather_a`` (``gather_b``): C source defining ``T netcl_gather_a(__global const T* X,
    int row, int col)``, the element of A's storage at ``row * lda + col`` (the index the
    plain kernel would read, batch stride and offset included), and ``T<vec>
    netcl_gather_a_v(X, row, col)``, the ``vec`` elements from there on (``col`` a multiple
    of ``vec``). A is then read through them from the buffer passed as A, which holds
    something else: the convolutions' implicit GEMM reads its patches matrix straight from
    the input image this way. Tiled kernels only.

    >>> src = gemm_source(GemmConfig(), "float", False, False, "acc * 2")
    """
    config.validate(dtype)
    if config.kind == "tiled":
        return _tiled_source(config, dtype, bool(trans_a), bool(trans_b), epilogue,
                             gather_a, gather_b)
    if gather_a or gather_b:
        raise ValueError("gemm_source: gather_a/gather_b need a tiled configuration, got "
                         f"kind={config.kind!r}")
    from .gemm_cpu import cpu_source      # the CPU kind lives in its own file
    return cpu_source(config, dtype, bool(trans_a), bool(trans_b), epilogue)


def launch_dims(config: GemmConfig, batch: int, M: int, N: int):
    """``(global_size, local_size)`` for ``enqueue_nd_range_kernel`` (tensor-core configs
    of gemm_mma.py too)."""
    ntn = -(-N // config.bn)
    ntm = -(-M // config.bm)
    if config.kind == "mma":       # one 1-D work-group of whole warps per block
        return (ntn * batch * config.threads, ntm), (config.threads, 1)
    if config.kind == "cpu":       # one work-item per group walks its slivers (gemm_cpu.py)
        return (ntn * batch, ntm), (1, 1)
    local = (config.wg_n, config.wg_m)
    glob = (ntn * batch * local[0], ntm * local[1])
    return glob, local


# ---------------------------------------------------------------- tiled (GPU)

def _tiled_loader(name: str, cfg: GemmConfig, T: str, trans: bool, is_a: bool,
                  gather: bool = False):
    """Code to load one tile of A (BM x BK) or B (BK x BN) into registers
    (``vec``-wide when FAST, else guarded scalars), and to store those registers
    into the k-major local tile; with ``gather``, through ``netcl_gather_a``/``_b``
    (see gemm_source) at the operand's storage row and column, offset by the batch's base
    ``A_bo``, ``A_bi`` (``B_``...).

    Returns (decls, loads, stores); loads use ``k0`` and the token FAST,
    stores the token BUF.
    """
    BK, LV, NT = cfg.bk, cfg.vec, cfg.threads
    big = cfg.bm if is_a else cfg.bn          # the M (or N) extent of the tile
    P = big + cfg.pad                         # padded row length of the local tile
    ptr = "A" if is_a else "B"
    # contiguous dimension in memory: A: k (not trans) / m (trans);
    #                                  B: n (not trans) / k (trans)
    contig_is_k = (not trans) if is_a else trans
    CL = BK if contig_is_k else big           # contiguous length of the tile
    OL = big if contig_is_k else BK           # other length
    nvec = CL * OL // LV
    per = -(-nvec // NT)
    guard_tail = nvec % NT != 0
    TV = _vt(T, LV)
    ld = "lda" if is_a else "ldb"
    ext = "M" if is_a else "N"                # bound of the big dimension
    base = "m0" if is_a else "n0"
    decls, loads, stores = [], [], []
    if gather:
        fn = f"netcl_gather_{ptr.lower()}"
        tile_flag = f"NETCL_GATHER_{ptr}_TILE_{'COL' if contig_is_k else 'ROW'}"
        moving = f"{ptr}_bi" if contig_is_k else f"{ptr}_bo"
        decls.append(f"#if {tile_flag}\n    const int {ptr}_tok = {ptr}_VEC && "
                     f"({moving} % {BK} == 0);\n#endif")
        part = "col" if contig_is_k else "row"
        # the moving part of this K tile's start, once per tile
        loads.append(f"#if {tile_flag}\n        const int4 {ptr}_u = "
                     f"{fn}_part_{part}({moving} + k0);\n#endif")
    for i in range(per):
        r = f"{name}r{i}"
        v = i * NT
        decls.append(f"    {TV} {r} = ({TV})(0);")
        decls.append(f"    const int {r}_v = tid + {v};")
        decls.append(f"    const int {r}_c = ({r}_v % {CL // LV}) * {LV};")   # index along contiguous dim
        decls.append(f"    const int {r}_o = {r}_v / {CL // LV};")            # index along other dim
        if contig_is_k:
            kk, bb = f"{r}_c", f"{r}_o"
            decls.append(f"    const int {r}_b = {base} + {bb};")              # global row/col (M or N)
            decls.append(f"    const int {r}_p = {r}_b * {ld} + {kk};")        # offset at k0 = 0
            koff = "k0"
        else:
            kk, bb = f"{r}_o", f"{r}_c"
            decls.append(f"    const int {r}_b = {base} + {bb};")
            decls.append(f"    const int {r}_p = {kk} * {ld} + {r}_b;")
            koff = f"k0 * {ld}"
        if gather:
            fn = f"netcl_gather_{ptr.lower()}"
            if contig_is_k:      # storage row: the M (N) index, column: k
                at = f"{ptr}_bo + {r}_b, {ptr}_bi + k0 + {kk}"
                fixed = f"{fn}_part_row({ptr}_bo + {r}_b) + {fn}_part_col({kk})"
            else:
                at = f"{ptr}_bo + k0 + {kk}, {ptr}_bi + {r}_b"
                fixed = f"{fn}_part_col({ptr}_bi + {r}_b) + {fn}_part_row({kk})"
            # the tile-uniform form (see gemm_source): this work-item's part, fixed
            decls.append(f"#if {tile_flag}\n    const int4 {r}_fk = {fixed};\n#endif")
            fast = f"{r} = {fn}_v({ptr}, {at});"
            elem = lambda e: f"{fn}({ptr}, {at} + {e})"  # noqa: E731
        else:
            fast = (f"{r} = *((__global const {TV}*)({ptr} + ({r}_p + {koff})));" if LV > 1
                    else f"{r} = {ptr}[{r}_p + {koff}];")
            elem = lambda e: f"{ptr}[{r}_p + {koff} + {e}]"  # noqa: E731
        slow = []
        for e in range(LV):
            if contig_is_k:
                cond = f"{r}_b < {ext} && k0 + {kk} + {e} < K"
            else:
                cond = f"{r}_b + {e} < {ext} && k0 + {kk} < K"
            slow.append(f"{r}{_comp(LV, e)} = ({cond}) ? {elem(e)} : ({T})0;")
        slow = " ".join(slow)
        if gather and LV > 1:
            # an edge tile still gathers whole vectors where they lie inside the operand
            # (a CNN's kernel gradient of 288 rows: the third 128-row tile a quarter full)
            if contig_is_k:
                whole = f"{r}_b < {ext} && k0 + {kk} + {LV} <= K"
            else:
                whole = f"{r}_b + {LV} <= {ext} && k0 + {kk} < K"
            slow = f"if ({name.upper()}_VEC && {whole}) {{ {fast} }} else {{ {slow} }}"
        body = f"if (FAST) {{ {fast} }} else {{ {slow} }}"
        if gather:
            inb = f"{r}_b < {ext}" if contig_is_k else f"{r}_b + {LV} <= {ext}"
            body = (f"\n#if {tile_flag}\n        if ({ptr}_tok && kfull && {inb}) {{ "
                    f"{r} = {fn}_at_v({ptr}, {r}_fk + {ptr}_u); }} else\n#endif\n"
                    f"        {body}")
        if guard_tail:
            body = f"if ({r}_v < {nvec}) {{ {body} }}"
        loads.append("        " + body)
        # store into the local tile [BUF][k][big]
        loc = f"{name}s"
        if contig_is_k:
            st = " ".join(f"{loc}[((BUF) * {BK} + {kk} + {e}) * {P} + {bb}] = {r}{_comp(LV, e)};"
                          for e in range(LV))
        elif LV > 1:
            st = f"*((__local {TV}*)&{loc}[((BUF) * {BK} + {kk}) * {P} + {bb}]) = {r};"
        else:
            st = f"{loc}[((BUF) * {BK} + {kk}) * {P} + {bb}] = {r};"
        if guard_tail:
            st = f"if ({r}_v < {nvec}) {{ {st} }}"
        stores.append("        " + st)
    return decls, loads, stores


def _k_loop(cfg, aload, bload, astore, bstore, compute) -> list[str]:
    """The K loop of the tiled kernels (tiled and gemm_mma's): each K tile's global loads
    (``_tiled_loader``'s ``aload``/``bload``) into registers and stores into the local tiles,
    then ``compute(buf)``'s statements over local buffer ``buf``. Double-buffered: the next
    tile's loads are issued before this tile's compute, stored after it, one barrier per
    tile."""
    BK = cfg.bk

    def load_block(k0: str) -> list[str]:
        out = [f"    {{ const int k0 = {k0}; const int kfull = (k0 + {BK} <= K);"]
        out += [l.replace("FAST", "a_ok && kfull") for l in aload]
        out += [l.replace("FAST", "b_ok && kfull") for l in bload]
        out.append("    }")
        return out

    def store_block(buf: str) -> list[str]:
        return [l.replace("BUF", buf) for l in astore + bstore]

    src = []
    if cfg.double_buffer:
        src.append("    if (nkt > 0) {")
        src += load_block("0")
        src += store_block("0")
        src.append("    }")
        src.append("    barrier(CLK_LOCAL_MEM_FENCE);")
        src.append("    for (int kt = 0; kt < nkt; ++kt) {")
        src.append("        const int cur = kt & 1;")
        src.append("        const int more = kt + 1 < nkt;")
        src.append("        if (more) {")
        src += load_block(f"(kt + 1) * {BK}")
        src.append("        }")
        src += compute("cur")
        src.append("        if (more) {")
        src += store_block("cur ^ 1")
        src.append("        }")
        src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
        src.append("    }")
    else:
        src.append("    for (int kt = 0; kt < nkt; ++kt) {")
        src += load_block(f"kt * {BK}")
        src += store_block("0")
        src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
        src += compute("0")
        src.append("        barrier(CLK_LOCAL_MEM_FENCE);")
        src.append("    }")
    return src


def _tiled_source(cfg: GemmConfig, T: str, ta: bool, tb: bool, epilogue: str | None,
                  gather_a: str | None = None, gather_b: str | None = None) -> str:
    BM, BN, BK = cfg.bm, cfg.bn, cfg.bk
    TM, TN, RV, LV = cfg.tm, cfg.tn, cfg.rvec, cfg.vec
    PA, PB = BM + cfg.pad, BN + cfg.pad
    NBUF = 2 if cfg.double_buffer else 1
    TRV = _vt(T, RV)
    adecl, aload, astore = _tiled_loader("a", cfg, T, ta, True, bool(gather_a))
    bdecl, bload, bstore = _tiled_loader("b", cfg, T, tb, False, bool(gather_b))

    # alignment of the vector loads: the contiguous dim must start aligned
    if LV > 1:
        a_al = f"((lda % {LV}) == 0) && ((boa % {LV}) == 0)"
        b_al = f"((ldb % {LV}) == 0) && ((bob % {LV}) == 0)"
    else:
        a_al = b_al = "1"

    src = [_header(T), _epi_fn(T, epilogue), gather_a or "", gather_b or ""]
    src.append(f"__attribute__((reqd_work_group_size({cfg.wg_n}, {cfg.wg_m}, 1)))")
    src.append(_signature(epilogue) + " {")
    # declared with the widest vector type used on them, so that every vector
    # access is aligned (NVIDIA faults on misaligned vector shared accesses)
    W = max(RV, LV)
    TW = _vt(T, W)
    src.append(f"    __local {TW} AsW[{NBUF * BK * PA // W}];")
    src.append(f"    __local {TW} BsW[{NBUF * BK * PB // W}];")
    src.append("    __local T* as = (__local T*)AsW;")
    src.append("    __local T* bs = (__local T*)BsW;")
    src.append(f"    __local const {TRV}* As4 = (__local const {TRV}*)AsW;")
    src.append(f"    __local const {TRV}* Bs4 = (__local const {TRV}*)BsW;")
    src.append(_prologue(cfg, bool(gather_a), bool(gather_b)))
    src.append("    const int tx = get_local_id(0);")
    src.append("    const int ty = get_local_id(1);")
    src.append(f"    const int tid = ty * {cfg.wg_n} + tx;")
    src.append(f"    const int A_VEC = {a_al};")
    src.append(f"    const int B_VEC = {b_al};")
    src.append(f"    const int a_ok = A_VEC && (m0 + {BM} <= M);")
    src.append(f"    const int b_ok = B_VEC && (n0 + {BN} <= N);")
    src.extend(adecl)
    src.extend(bdecl)
    for i in range(TM):
        src.append("    " + " ".join(f"T c{i}_{j} = (T)0;" for j in range(TN)))
    src.append(f"    const int nkt = (K + {BK - 1}) / {BK};")

    def compute(buf: str) -> list[str]:
        out = [f"        __local const {TRV}* pla = As4 + ({buf}) * {BK * PA // RV} + ty;",
               f"        __local const {TRV}* plb = Bs4 + ({buf}) * {BK * PB // RV} + tx;",
               "#pragma unroll", f"        for (int kk = 0; kk < {BK}; ++kk) {{"]
        for c in range(TM // RV):
            out.append(f"            const {TRV} ra{c} = pla[kk * {PA // RV} + {c * cfg.wg_m}];")
        for c in range(TN // RV):
            out.append(f"            const {TRV} rb{c} = plb[kk * {PB // RV} + {c * cfg.wg_n}];")
        for i in range(TM):
            a = f"ra{i // RV}{_comp(RV, i % RV)}"
            line = []
            for j in range(TN):
                b = f"rb{j // RV}{_comp(RV, j % RV)}"
                line.append(f"c{i}_{j} = mad({a}, {b}, c{i}_{j});")
            out.append("            " + " ".join(line))
        out.append("        }")
        return out

    src += _k_loop(cfg, aload, bload, astore, bstore, compute)

    # store C
    if RV > 1:
        c_al = f"((ldc % {RV}) == 0) && ((boc % {RV}) == 0)"
    else:
        c_al = "1"
    src.append(f"    const int c_ok = ({c_al}) && (m0 + {BM} <= M) && (n0 + {BN} <= N);")
    for i in range(TM):
        row = f"(m0 + {(i // RV) * cfg.wg_m * RV} + ty * {RV} + {i % RV})"
        src.append(f"    {{ const int row = {row};")
        for c in range(TN // RV):
            col = f"(n0 + {c * cfg.wg_n * RV} + tx * {RV})"
            src.append(f"      {{ const int col = {col};")
            stores = [_store_call(epilogue, f"row * ldc + col + {e}", f"c{i}_{c * RV + e}", "row",
                                  f"col + {e}") for e in range(RV)]
            if isinstance(epilogue, GemmEpilogue) and epilogue.vector_body and \
                    epilogue.vector_width == RV and RV > 1:
                # whole chunks: the epilogue runs on RV columns at once (vector loads and
                # stores, as the plain kernel stores C)
                accv = f"({TRV})({', '.join(f'c{i}_{c * RV + e}' for e in range(RV))})"
                fast = (f"netcl_gemm_store_v(C, row * ldc + col, {accv}, row, col, bidx, "
                        f"{epilogue.args});")
            elif isinstance(epilogue, GemmEpilogue):
                fast = " ".join(stores)
            elif RV > 1:
                vals = [f"netcl_gemm_epilogue(c{i}_{c * RV + e}, row, col + {e}, bidx)"
                        for e in range(RV)]
                fast = f"*((__global {TRV}*)(C + row * ldc + col)) = ({TRV})({', '.join(vals)});"
            else:
                fast = stores[0]
            slow = " ".join(f"if (col + {e} < N) {stores[e]}" for e in range(RV))
            src.append(f"        if (c_ok) {{ {fast} }} else if (row < M) {{ {slow} }}")
            src.append("      }")
        src.append("    }")
    src.append("}")
    return "\n".join(src) + "\n"
