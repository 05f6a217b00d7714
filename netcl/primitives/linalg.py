"""dot_general: the one contraction primitive (matmul, einsum, tensordot, dense layers).

`dot_general(lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)))` has
jax.lax.dot_general's semantics: the result's dimensions are the batch dimensions, then the
lhs free dimensions, then the rhs free dimensions (each in operand order).

Eager lowering: every call becomes one batched GEMM `C[b] = A[b] @ B[b]` of
`netcl.primitives.gemm` (float and double; int32/uint32 and devices where the tuned kernel
fails to build use the simple tiled kernel below, with the same signature). Operand layouts
are inspected once per launcher: when an operand's batch, row and column dimension groups
each merge into one stride (a plain or transposed matrix per batch, batch stride possibly 0
for broadcasts) it is passed as is, with trans flags, leading dimension, batch stride and
offset; otherwise it is copied once into the canonical (batch, M, K) / (batch, K, N) order.
float16 and bfloat16 are storage only: operands are converted to float32 on the way in and
back on the way out (the same path serves `preferred_element_type`).

Tensor cores (`Target.tensor_cores`, matmul_precision.gemm_arithmetic): float32 products at
the default precision run in TF32, as XLA's do on these GPUs; float16 and bfloat16 operands
run straight from their 16-bit storage, the kernel writing the half or float32 result
itself (dot_tensor_cores.py: gemm_mma_staged.py's kernel, gemm_mma.py's for TF32 products
with a statement epilogue).
"""
import operator
import warnings

import numpy as np

from ..core import commands, dtypes, kernels
from ..core.config import config as _config
from ..core.array import Array
from ..core.launch import Kernel, Launch
from ..core.ad_util import Zero, is_zero
from ..core.shapes import contiguous_strides, prod
from ..core.tracing import Primitive, ShapedArray
from . import gemm, gemm_autotune, gemm_cpu, gemm_tiers, matmul_precision, split_k
from .gemm_simple import _simple_dims, _simple_tile, simple_source  # noqa: F401 (re-exported)
from .views import operand

__all__ = ["dot_general", "dot", "batch_matmul"]

dot_general_p = Primitive("dot_general", fusion="opaque", precision="low")

_KINDS = "fiu"
_INT_MAX = 2**31 - 1


# ---- parameters and abstract evaluation -------------------------------------------------------

def _dn_str(dn):
    (lc, rc), (lb, rb) = dn
    return f"(({lc}, {rc}), ({lb}, {rb}))"


def _free_dims(ndim, contract, batch):
    used = set(contract) | set(batch)
    return tuple(d for d in range(ndim) if d not in used)


def _kernel_dtype(in_dtype, out_dtype):
    """The dtype the GEMM runs in for these input and result dtypes."""
    if dtypes.kind(out_dtype) == "f" or dtypes.kind(in_dtype) == "f":
        return dtypes.float64 if dtypes.float64 in (in_dtype, out_dtype) else dtypes.float32
    if in_dtype in dtypes.SUBBYTE_INTS:   # int4, ...: in int32 / uint32, wrapped when stored
        return dtypes.int32 if dtypes.kind(in_dtype) == "i" else dtypes.uint32
    return in_dtype


def _dot_general_abstract(lhs, rhs, *, dimension_numbers, precision=None,
                          preferred_element_type=None):
    dn = dimension_numbers
    (lc, rc), (lb, rb) = dn
    where = (f"dot_general: lhs shape {tuple(lhs.shape)}, rhs shape {tuple(rhs.shape)}, "
             f"dimension_numbers {_dn_str(dn)}")
    if lhs.dtype != rhs.dtype:
        raise TypeError(f"dot_general: operands must have equal dtypes, got {lhs.dtype} and "
                        f"{rhs.dtype} (netcl.numpy promotes; netcl.lax does not)")
    if dtypes.kind(lhs.dtype) not in _KINDS:
        raise TypeError(f"dot_general: operand dtype {lhs.dtype} is not supported; it needs a "
                        "floating or integer dtype")
    if len(lc) != len(rc):
        raise ValueError(f"{where}: lhs and rhs need the same number of contracting "
                         "dimensions")
    if len(lb) != len(rb):
        raise ValueError(f"{where}: lhs and rhs need the same number of batch dimensions")
    for name, ds, x in (("lhs", lc + lb, lhs), ("rhs", rc + rb, rhs)):
        if any(not 0 <= d < x.ndim for d in ds):
            raise ValueError(f"{where}: a {name} dimension is out of range for rank {x.ndim}")
        if len(set(ds)) != len(ds):
            raise ValueError(f"{where}: {name} contracting and batch dimensions must be "
                             "distinct")
    for kind, ls, rs in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ls, rs):
            if lhs.shape[a] != rhs.shape[b]:
                raise ValueError(f"{where}: {kind} dimension sizes differ (lhs dimension {a} "
                                 f"has size {lhs.shape[a]}, rhs dimension {b} has size "
                                 f"{rhs.shape[b]})")
    out_dtype = lhs.dtype if preferred_element_type is None else preferred_element_type
    if dtypes.kind(out_dtype) not in _KINDS:
        raise TypeError(f"dot_general: preferred_element_type {out_dtype} is not supported")
    if dtypes.kind(lhs.dtype) == "f" and dtypes.kind(out_dtype) != "f":
        raise TypeError(f"dot_general: preferred_element_type {out_dtype} cannot hold the "
                        f"product of {lhs.dtype} operands")
    shape = (tuple(lhs.shape[d] for d in lb)
             + tuple(lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb))
             + tuple(rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)))
    return ShapedArray(shape, out_dtype, lhs.weak_type and rhs.weak_type)


# ---- NumPy reference ------------------------------------------------------------------------

def _dot_general_ref(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = lhs.dtype if preferred_element_type is None else np.dtype(preferred_element_type)
    kd = _kernel_dtype(lhs.dtype, out_dtype)
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    out_shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in lf)
                 + tuple(rhs.shape[d] for d in rf))
    B = prod(lhs.shape[d] for d in lb)
    M, N, K = (prod(lhs.shape[d] for d in lf), prod(rhs.shape[d] for d in rf),
               prod(lhs.shape[d] for d in lc))
    work = np.uint64 if kd.kind in "iu" else kd    # (wrapping: the low bits of any width)
    a = np.transpose(lhs, lb + lf + lc).astype(work).reshape(B, M, K)
    b = np.transpose(rhs, rb + rc + rf).astype(work).reshape(B, K, N)
    with np.errstate(all="ignore"):
        out = np.matmul(a, b)
    if kd.kind in "iu":  # wrap around as the kernel dtype's arithmetic does
        unsigned = np.dtype(f"uint{8 * kd.itemsize}")
        out = out.astype(unsigned).view(kd)
    return out.astype(kd).reshape(out_shape).astype(out_dtype)


# ---- OpenCL: the tuned kernels, the simple one (gemm_simple.py) where they fail ------------

_gemm_failed = set()  # (device, source) pairs whose build failed: use the simple kernel


def _gemm_kernel(device, kdtype, trans_a, trans_b, B, M, N, K, epilogue=None, packable=False,
                 arith=None, aligned=False):
    """(cl.Kernel, global size, local size, packed config) for this problem on `device`;
    with an epilogue (a gemm.GemmEpilogue) None where the tuned kernel is not available.
    `packable`: a CPU configuration reads its operands packed (gemm_cpu.packed_source); the
    last item is then that configuration, else None. `arith` "tf32": on tensor cores
    (float32 operands; the float32 kernels where that kernel fails to build), `aligned`
    where the operands' rows and bases lie on 16 bytes."""
    if arith == "tf32" and kdtype == dtypes.float32:
        from .dot_tensor_cores import tf32_kernel
        found = tf32_kernel(device, trans_a, trans_b, B, M, N, epilogue, aligned)
        if found is not None:
            return found
    if kdtype in (dtypes.float32, dtypes.float64):
        name = "float" if kdtype == dtypes.float32 else "double"
        try:
            cfg = gemm_autotune.tuned_config(device, name, trans_a, trans_b, M, N, K) or \
                gemm_tiers.choose_config(device.cl_device, name, M, N, K, trans_a,
                                         family=device.target.gemm_tiers)
            # packing pays where groups re-pack both operands: A once per column block, B
            # once per row block (a classifier's 10 columns make one column block)
            packed = packable and cfg.kind == "cpu" and M > cfg.bm and N > cfg.bn
            src = gemm_cpu.packed_source(cfg, name, epilogue) if packed else \
                gemm.gemm_source(cfg, name, trans_a, trans_b, epilogue)
        except Exception as e:  # a config the generator rejects: use the simple kernel
            src, cfg, packed = None, e, False
        key = (device.cl_device.int_ptr, src)   # (a build fails per device)
        if src is not None and key not in _gemm_failed:
            try:
                k = kernels.kernel(device, src, gemm.GEMM_KERNEL_NAME)
                g, l = gemm.launch_dims(cfg, B, M, N)
                return k, g, l, (cfg if packed else None)
            except kernels.KernelBuildError as e:
                _gemm_failed.add(key)
                warnings.warn(f"netcl: the tuned GEMM kernel failed to build on {device.name} "
                              f"({str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else e}"
                              "); using the simple kernel", RuntimeWarning, stacklevel=6)
    if epilogue is not None:
        return None
    tile = _simple_tile(device)
    k = kernels.kernel(device, simple_source(kdtype, trans_a, trans_b, tile), "netcl_gemm")
    g, l = _simple_dims(tile, B, M, N)
    return k, g, l, None


# ---- OpenCL: layout analysis and the launcher -------------------------------------------------

def _merge(shape, strides, dims):
    """(size, stride) of dimension group `dims` read as one dimension: stride None when the
    group has no dimension of size > 1, False when the dimensions do not merge."""
    dims = [d for d in dims if shape[d] != 1]
    size = prod(shape[d] for d in dims)
    if not dims:
        return size, None
    for a, b in zip(dims, dims[1:]):
        if strides[a] != strides[b] * shape[b]:
            return size, False
    return size, strides[dims[-1]]


def _as_matrix(shape, strides, batch, rows, cols):
    """(trans, ld, batch_stride) reading the operand as a (batch, rows, cols) matrix stack
    with unit stride along cols (trans False) or rows (trans True); None if it cannot be."""
    _, sb = _merge(shape, strides, batch)
    R, sr = _merge(shape, strides, rows)
    C, sc = _merge(shape, strides, cols)
    if sb is False or sr is False or sc is False:
        return None
    sb = 0 if sb is None else sb
    if sb < 0:
        return None
    if sc in (None, 1) and (sr is None or sr >= 0):
        return False, (max(C, 1) if sr is None else sr), sb
    if sr in (None, 1) and sc is not None and sc >= 0:
        return True, sc, sb
    return None


class _Prep:
    """How one operand reaches the kernel: as is, or through a copy/convert kernel into the
    canonical dense order `perm` (in `kdtype`)."""

    def __init__(self, x, batch, rows, cols, kdtype):
        perm = batch + rows + cols
        self.perm_shape = tuple(x.shape[d] for d in perm)
        self.perm = perm
        self.kdtype = kdtype
        layout = None if x.dtype != kdtype else _as_matrix(x.shape, x.strides, batch, rows, cols)
        if layout is None:
            self.direct = False
            self.trans = False
            self.ld = max(prod(x.shape[d] for d in cols), 1)
            self.bstride = prod(x.shape[d] for d in rows + cols)
            self.offset = 0
        else:
            self.direct = True
            self.trans, self.ld, self.bstride = layout
            self.offset = x.offset
        if self.direct:
            self.prep = None
        else:
            from ..core.eval import eval_interpreter
            from .elementwise import convert_element_type_p, copy_p
            process = eval_interpreter.process
            pshape, perm_ = self.perm_shape, perm
            if x.dtype == kdtype:
                prim, params = copy_p, {}
            else:
                prim, params = convert_element_type_p, {"new_dtype": kdtype, "weak_type": False}

            def prep(a):
                view = a._view(pshape, tuple(a.strides[d] for d in perm_), a.offset)
                return process(prim, (view,), params)
            self.prep = prep


def _index_extent(p, rows, cols, B):
    """Largest element index the kernel reads for an operand (must fit an int)."""
    if p.trans:
        return p.offset + (B - 1) * p.bstride + (cols - 1) * p.ld + rows
    return p.offset + (B - 1) * p.bstride + (rows - 1) * p.ld + cols


def _check_index_limit(lhs, rhs, pa, pb, B, M, N, K, parts=1):
    if max(B * M * N * parts, _index_extent(pa, M, K, B), _index_extent(pb, K, N, B)) > _INT_MAX:
        raise ValueError(f"dot_general: lhs {lhs.shape} x rhs {rhs.shape} exceeds the 2^31 "
                         "element index limit of the GEMM kernel")


def _preparer(pa, pb):
    """prep(a, b) -> the operands as the kernel reads them (copies where _Prep needs one),
    or None where both are read as they are."""
    prep_a, prep_b = pa.prep, pb.prep
    if prep_a is None and prep_b is None:
        return None
    return lambda a, b: (a if prep_a is None else prep_a(a), b if prep_b is None else prep_b(b))


# Weight gradients (A^T B) on CPUs from this many multiply-adds on read their operands
# packed once (gemm_cpu.pack_source) instead of re-packing them in every group, which
# saves more than the pack launch costs on an MLP's weight gradients (1024x1024x128,
# 784x1024x128). Below it the extra launch costs more than the packing it saves, and a
# first run pays the pack kernel's build and first launch: a 256x256x64 product (a small
# MLP's) runs a few percent slower unpacked but reaches its first result sooner.
PACK_MIN_FMAS = 1 << 23


def _packable(device, kd, pa, pb, B, M, N, K):
    return device.target.kernel_family == "cpu" and pa.trans and not pb.trans and B == 1 and \
        kd in (dtypes.float32, dtypes.float64) and M * N * K >= PACK_MIN_FMAS


def _packer(device, kd, cfg, pa, pb, M, N, K):
    """pack(a_buf, b_buf) -> (packed A, packed B) Storages: the operands in the sliver
    layout gemm_cpu.packed_source reads, written by one pack kernel."""
    from ..core.pool import Storage
    T = "float" if kd == dtypes.float32 else "double"
    src = gemm_cpu.pack_source(T, cfg.tm, cfg.tn)
    kp = kernels.kernel(device, src, gemm_cpu.PACK_KERNEL_NAME)
    for i, v in ((2, pa.ld), (3, M), (4, pa.offset), (7, pb.ld), (8, N), (9, pb.offset), (10, K)):
        kp.set_arg(i, np.int32(v))
    bytes_a = -(-M // cfg.tm) * cfg.tm * K * kd.itemsize
    bytes_b = -(-N // cfg.tn) * cfg.tn * K * kd.itemsize
    # work-groups of one work-item, each copying one row (see pack_source): PoCL compiles
    # that at the first launch in a third of the time a group of 16 takes
    gsize, lsize = (K, 2), (1, 1)
    queue, pool, enqueue, set_arg = device.queue, device.pool, commands.launch, kp.set_arg

    def pack(a_buf, b_buf):
        packed_a, packed_b = Storage(pool, bytes_a), Storage(pool, bytes_b)
        set_arg(0, packed_a.buf)
        set_arg(1, a_buf)
        set_arg(5, packed_b.buf)
        set_arg(6, b_buf)
        enqueue(queue, kp, gsize, lsize)
        return packed_a, packed_b     # back to the pool after the GEMM's enqueue (in-order queue)
    return Launch(pack, kernels=(Kernel(gemm_cpu.PACK_KERNEL_NAME, src),))


def launched_kernels(k, pack, prep, more=()):
    """The Kernels a GEMM launcher enqueues, in order (jit's lower().kernels): the pack
    kernel where it packs (`pack`, a Launch), the GEMM `k`, then the kernels of `more`;
    None where operand copies (`prep`) launch kernels of their own."""
    if prep is not None:
        return None
    return (pack.kernels if pack is not None else ()) + \
        tuple(kernels.described(m) for m in (k, *more))


def _set_operands(set_arg, pack, a, b):
    """Set the GEMM kernel's A and B arguments: the operands' buffers, or their packed copies
    where `pack` is set (returned: they must outlive the kernel's enqueue)."""
    if pack is None:
        set_arg(1, a._buf)
        set_arg(2, b._buf)
        return None
    packed = pack(a._buf, b._buf)
    set_arg(1, packed[0].buf)
    set_arg(2, packed[1].buf)
    return packed


def _gemm_setup(device, lhs, rhs, pa, pb, kd, B, M, N, K, epilogue=None, arith=None):
    """(kernel, global size, local size, pack) for prepared operands, the kernel's size
    arguments set; `pack` is None, or _packer's function whose results the kernel reads
    instead of the operands. None when an epilogue kernel is not available. `arith`:
    matmul_precision.gemm_arithmetic's answer for the product."""
    _check_index_limit(lhs, rhs, pa, pb, B, M, N, K)
    aligned = False
    if arith == "tf32":
        from .dot_tensor_cores import operands_aligned
        aligned = operands_aligned(arith, pa, pb, B)
    found = _gemm_kernel(device, kd, pa.trans, pb.trans, B, M, N, K, epilogue,
                         _packable(device, kd, pa, pb, B, M, N, K), arith, aligned)
    if found is None:
        return None
    k, gsize, lsize, packed_cfg = found
    pack = None if packed_cfg is None else _packer(device, kd, packed_cfg, pa, pb, M, N, K)
    offsets = (0, 0) if pack is not None else (pa.offset, pb.offset)   # the pack applies them
    for i, v in enumerate((M, N, K, pa.ld, pb.ld, N, pa.bstride, pb.bstride, M * N, *offsets, 0)):
        k.set_arg(3 + i, np.int32(v))
    return k, gsize, lsize, pack


def _split_count(device, kd, B, M, N, K):
    """How many K chunks this product runs as on `device` (split_k.py; 1: one GEMM); the
    tiled kernels' blocks stand for the tensor-core kernels' (the same or larger)."""
    if B != 1 or kd not in (dtypes.float32, dtypes.float64) or not device.target.split_k:
        return 1
    cfg = gemm_tiers.choose_config(device.cl_device,
                                   "float" if kd == dtypes.float32 else "double", M, N, K,
                                   family=device.target.gemm_tiers)
    return split_k.gpu_parts(device, -(-M // cfg.bm) * -(-N // cfg.bn), K)


def _single_run(device, lhs, rhs, pa, pb, kd, B, M, N, K, shape, weak, arith=None):
    """run(a, b): one (batched) GEMM into a fresh output."""
    from ..core.pool import Storage
    k, gsize, lsize, pack = _gemm_setup(device, lhs, rhs, pa, pb, kd, B, M, N, K, arith=arith)
    queue, pool = device.queue, device.pool
    out_strides = contiguous_strides(shape)
    nbytes = B * M * N * kd.itemsize
    enqueue, set_arg = commands.launch, k.set_arg
    prep = _preparer(pa, pb)
    set_operands = _set_operands

    def run(a, b):
        if prep is not None:
            a, b = prep(a, b)
        st = Storage(pool, nbytes)
        out = Array(device, st.buf, st, shape, kd, out_strides, 0, weak, True)
        set_arg(0, out._buf)
        keep = set_operands(set_arg, pack, a, b)  # noqa: F841  (packed buffers live past the enqueue)
        enqueue(queue, k, gsize, lsize)
        return out
    return Launch(run, kernels=launched_kernels(k, pack, prep))


def _split_run(device, lhs, rhs, pa, pb, kd, M, N, K, parts, shape, weak, arith=None):
    """run(a, b): `parts` equal K chunks as one batched GEMM into a temporary, then their
    sum into a fresh output (split_k.py)."""
    from ..core.pool import Storage
    _check_index_limit(lhs, rhs, pa, pb, 1, M, N, K, parts)
    kc = K // parts
    sa, sb = split_k.chunk_strides(pa.trans, pa.ld, pb.trans, pb.ld, kc)
    aligned = False
    if arith == "tf32":
        from .dot_tensor_cores import operands_aligned
        aligned = operands_aligned(arith, pa, pb, parts, (sa, sb))
    k, gsize, lsize, _ = _gemm_kernel(device, kd, pa.trans, pb.trans, parts, M, N, kc,
                                      arith=arith, aligned=aligned)
    for i, v in enumerate((M, N, kc, pa.ld, pb.ld, N, sa, sb, M * N, pa.offset, pb.offset, 0)):
        k.set_arg(3 + i, np.int32(v))
    ksum = split_k.sum_kernel(device, kd)
    split_k.set_sum_args(ksum, M * N, parts)
    sum_g, sum_l = kernels.grid_1d(device, M * N)
    queue, pool = device.queue, device.pool
    out_strides = contiguous_strides(shape)
    nbytes, tmp_bytes = M * N * kd.itemsize, parts * M * N * kd.itemsize
    enqueue = commands.launch
    prep = _preparer(pa, pb)

    def run(a, b):
        if prep is not None:
            a, b = prep(a, b)
        tmp = Storage(pool, tmp_bytes)
        k.set_arg(0, tmp.buf)
        k.set_arg(1, a._buf)
        k.set_arg(2, b._buf)
        enqueue(queue, k, gsize, lsize)
        st = Storage(pool, nbytes)
        out = Array(device, st.buf, st, shape, kd, out_strides, 0, weak, True)
        ksum.set_arg(0, out._buf)
        ksum.set_arg(1, tmp.buf)
        enqueue(queue, ksum, sum_g, sum_l)
        return out          # tmp returns to the pool; the in-order queue orders its reuse
    return Launch(run, kernels=launched_kernels(k, None, prep, (ksum,)))


def _dot_general_launcher(device, args, params, out_aval):
    lhs, rhs = args
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    B = prod(lhs.shape[d] for d in lb)
    M = prod(lhs.shape[d] for d in lf)
    N = prod(rhs.shape[d] for d in rf)
    K = prod(lhs.shape[d] for d in lc)
    shape, out_dtype, weak = out_aval.shape, out_aval.dtype, out_aval.weak_type
    kd = _kernel_dtype(lhs.dtype, out_dtype)
    if kd == dtypes.float64 and not device.capabilities.fp64:
        raise TypeError(f"dot_general: float64 is not supported on {device.name} (no fp64)")
    if B * M * N == 0:
        return lambda a, b: Array.empty(device, shape, out_dtype, weak)
    from ..core.eval import eval_interpreter, scalar_constant
    if K == 0:  # an empty sum: zeros, without touching the (empty) operands
        from .elementwise import copy_p
        zero = scalar_constant(0, out_dtype, device, weak=False)
        zeros = zero._view(shape, (0,) * len(shape), zero.offset, weak)
        return lambda a, b: eval_interpreter.process(copy_p, (zeros,), {})

    arith = matmul_precision.gemm_arithmetic(device.target, lhs.dtype, params.get("precision"),
                                             B * M * N * K)
    if arith in ("f16", "bf16") and out_dtype in (lhs.dtype, dtypes.float32):
        from .dot_tensor_cores import half_run
        run = half_run(device, lhs, rhs, (lb, lf, lc), (rb, rc, rf), B, M, N, K, out_aval, arith)
        if run is not None:
            return run
    arith = arith if arith == "tf32" and kd == dtypes.float32 else None
    if arith == "tf32" and out_dtype == kd:
        from .dot_tensor_cores import tf32_run
        run = tf32_run(device, lhs, rhs, (lb, lf, lc), (rb, rc, rf), B, M, N, K, out_aval)
        if run is not None:
            return run
    if arith is None and kd == dtypes.float32 and out_dtype == kd:
        from .gemm_ffma_async import ffma_async_run
        run = ffma_async_run(device, lhs, rhs, (lb, lf, lc), (rb, rc, rf), B, M, N, K, out_aval)
        if run is not None:
            return run
    pa = _Prep(lhs, lb, lf, lc, kd)
    pb = _Prep(rhs, rb, rc, rf, kd)
    parts = _split_count(device, kd, B, M, N, K)
    if parts > 1:
        run = _split_run(device, lhs, rhs, pa, pb, kd, M, N, K, parts, shape, weak, arith)
    else:
        run = _single_run(device, lhs, rhs, pa, pb, kd, B, M, N, K, shape, weak, arith)

    if kd == out_dtype:
        return run
    # (a converted result: one more kernel, so lower().kernels lists the primitive instead)
    from .elementwise import convert_element_type_p
    process, cparams = eval_interpreter.process, {"new_dtype": out_dtype, "weak_type": weak}
    return lambda a, b: process(convert_element_type_p, (run(a, b),), cparams)


# ---- differentiation and batching -----------------------------------------------------------

def _ranges_like(*xs):
    start = 0
    for x in xs:
        yield tuple(range(start, start + len(x)))
        start += len(x)


def _argsort(seq):
    return tuple(sorted(range(len(seq)), key=seq.__getitem__))


def _transpose_lhs(g, x_aval, y, dimension_numbers, precision, swap_ans=False):
    """Cotangent of x in dot_general(x, y) (swap_ans: the answer's free dims are y's first)."""
    from .elementwise import convert_element_type
    from .views import transpose
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = _free_dims(x_aval.ndim, x_contract, x_batch)
    y_kept = _free_dims(y.ndim, y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((ans_y, y_kept), (ans_batch, y_batch))
    y_order = _argsort(y_contract)
    x_contract_by_y = tuple(x_contract[i] for i in y_order)
    out_axes = _argsort(tuple(x_batch) + x_kept + x_contract_by_y)
    if y.dtype != g.dtype:
        y = convert_element_type(y, g.dtype)
    # dot_general(g, y) has dims (batch, g-free, y-free). When x's order wants y-free first,
    # dot_general(y, g) yields it directly: a dense result instead of a transposed view
    # (XLA picks layouts; here a view would make every consumer read with strides).
    nb, ng = len(ans_batch), g.ndim - len(ans_batch) - len(ans_y)
    ny = len(y_contract)  # y dims left after contracting its free dims with g
    to_swapped = list(range(nb)) + [nb + ny + k for k in range(ng)] + [nb + k for k in range(ny)]
    swapped_axes = tuple(to_swapped[a] for a in out_axes)
    if out_axes != tuple(range(len(out_axes))) and swapped_axes == tuple(range(len(out_axes))):
        return _cast_to(dot_general(y, g, ((y_kept, ans_y), (y_batch, ans_batch)), precision),
                        x_aval)
    return _cast_to(transpose(dot_general(g, y, dims, precision), out_axes), x_aval)


def _cast_to(x_bar, x_aval):
    from .elementwise import convert_element_type
    if x_bar.dtype != x_aval.dtype:
        x_bar = convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
    return x_bar


def _dot_general_vjp(ct, out, lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None):
    if is_zero(ct) or dtypes.kind(lhs.dtype) != "f":
        return None, None
    (lc, rc), (lb, rb) = dimension_numbers
    lhs_bar = _transpose_lhs(ct, lhs, rhs, dimension_numbers, precision)
    rhs_bar = _transpose_lhs(ct, rhs, lhs, ((rc, lc), (rb, lb)), precision, swap_ans=True)
    return lhs_bar, rhs_bar


def _dot_general_jvp(primals, tangents, *, dimension_numbers, precision=None,
                     preferred_element_type=None):
    from ..core.ad_util import add_tangents
    lhs, rhs = primals
    tl, tr = tangents
    params = dict(dimension_numbers=dimension_numbers, precision=precision,
                  preferred_element_type=preferred_element_type)
    out = dot_general_p.bind(lhs, rhs, **params)
    t = Zero(ShapedArray(out.shape, out.dtype, out.weak_type))
    if dtypes.kind(lhs.dtype) != "f":
        return out, t
    if not is_zero(tl):
        t = add_tangents(t, dot_general_p.bind(tl, rhs, **params))
    if not is_zero(tr):
        t = add_tangents(t, dot_general_p.bind(lhs, tr, **params))
    return out, t


def _shift(ds, d):
    """Dimension indices after inserting a new dimension at position d."""
    return tuple(x + (x >= d) for x in ds)


def _dot_general_batch(args, dims, *, dimension_numbers, precision=None,
                       preferred_element_type=None):
    (lhs, rhs), (ld, rd) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    p = dict(precision=precision, preferred_element_type=preferred_element_type)
    if ld is not None and rd is not None:
        dn = ((_shift(lc, ld), _shift(rc, rd)), ((ld,) + _shift(lb, ld), (rd,) + _shift(rb, rd)))
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **p), 0
    if ld is not None:
        lc2, lb2 = _shift(lc, ld), _shift(lb, ld)
        dn = ((lc2, rc), (lb2, rb))
        used = set(lc2) | set(lb2)
        out_dim = len(lb) + sum(1 for d in range(ld) if d not in used)
        return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **p), out_dim
    rc2, rb2 = _shift(rc, rd), _shift(rb, rd)
    dn = ((lc, rc2), (lb, rb2))
    used = set(rc2) | set(rb2)
    n_lhs_free = lhs.ndim - len(lc) - len(lb)
    out_dim = len(lb) + n_lhs_free + sum(1 for d in range(rd) if d not in used)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **p), out_dim


dot_general_p.abstract_eval = _dot_general_abstract
dot_general_p.make_launcher = _dot_general_launcher
dot_general_p.reference = _dot_general_ref
dot_general_p.jvp = _dot_general_jvp
dot_general_p.vjp = _dot_general_vjp
dot_general_p.batch = _dot_general_batch


# ---- lax-level functions ------------------------------------------------------------------

def _canon_dims(ds, ndim, which):
    if isinstance(ds, (int, np.integer)):
        ds = (ds,)
    try:
        out = tuple(operator.index(d) for d in ds)
    except TypeError:
        raise TypeError(f"dot_general: {which} dimensions must be ints, got {ds!r}") from None
    return tuple(d + ndim if -ndim <= d < 0 else d for d in out)


def _canon_precision(precision, where="dot_general"):
    """A ``precision=`` as bound (matmul_precision.canonicalize: None takes the config's
    default, as jax.lax does; a bad value raises naming `where`)."""
    return matmul_precision.canonicalize(precision, where)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """lax.dot_general: contract `lhs` and `rhs` over the contracting dimensions, batched over
    the batch dimensions. dimension_numbers = ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch)); the result's dimensions are the batch dimensions, then the free
    dimensions of lhs, then those of rhs.

    >>> dot_general(a, b, (((1,), (0,)), ((), ())))      # a @ b for matrices
    """
    lhs, rhs = operand(lhs, "dot_general"), operand(rhs, "dot_general")
    try:
        dn = _canon_cache.get((dimension_numbers, lhs.ndim, rhs.ndim))
    except TypeError:  # lists: unhashable
        dn = None
    if dn is None:
        dn = _canon_dn(dimension_numbers, lhs.ndim, rhs.ndim)
    pet = None if preferred_element_type is None else dtypes.canonicalize(
        preferred_element_type, arg="preferred_element_type", where="dot_general")
    if precision is not None or _config.default_matmul_precision is not None:
        precision = _canon_precision(precision)
    return bind_dot_general(lhs, rhs, dn, precision, pet)


def bind_dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type):
    """dot_general_p.bind on canonical parameters; complex operands as four real products
    (complex_ops.bilinear_by_parts: the GEMM kernels are real)."""
    if dtypes.is_complex(lhs.dtype) and lhs.dtype == rhs.dtype:
        from .complex_ops import bilinear_by_parts
        pet = preferred_element_type
        part = None if pet is None else dtypes.COMPLEX_PART.get(pet, pet)
        return bilinear_by_parts(lambda a, b: dot_general_p.bind(
            a, b, dimension_numbers=dimension_numbers, precision=precision,
            preferred_element_type=part), lhs, rhs)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers,
                              precision=precision, preferred_element_type=preferred_element_type)


_canon_cache = {}


def _canon_dn(dimension_numbers, lndim, rndim):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError("dot_general: dimension_numbers must be ((lhs_contracting, "
                        "rhs_contracting), (lhs_batch, rhs_batch)), got "
                        f"{dimension_numbers!r}") from None
    dn = ((_canon_dims(lc, lndim, "lhs contracting"), _canon_dims(rc, rndim, "rhs contracting")),
          (_canon_dims(lb, lndim, "lhs batch"), _canon_dims(rb, rndim, "rhs batch")))
    try:
        if len(_canon_cache) > 4096:
            _canon_cache.clear()
        _canon_cache[(dimension_numbers, lndim, rndim)] = dn
    except TypeError:
        pass
    return dn


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """lax.dot: vector·vector, matrix·vector, vector·matrix or matrix·matrix product."""
    lhs, rhs = operand(lhs, "dot"), operand(rhs, "dot")
    if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2):
        raise TypeError(f"dot: operands must have rank 1 or 2, got shapes {tuple(lhs.shape)} "
                        f"and {tuple(rhs.shape)} (use dot_general or netcl.numpy.matmul)")
    if lhs.shape[-1] != rhs.shape[0]:
        raise ValueError(f"dot: shapes {tuple(lhs.shape)} and {tuple(rhs.shape)} are not "
                         f"aligned: {lhs.shape[-1]} (dim {lhs.ndim - 1}) != {rhs.shape[0]} "
                         "(dim 0)")
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """lax.batch_matmul: (..., m, k) @ (..., k, n) with equal leading (batch) dimensions."""
    lhs, rhs = operand(lhs, "batch_matmul"), operand(rhs, "batch_matmul")
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim or lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"batch_matmul: operands need equal rank >= 2 and equal batch "
                         f"dimensions, got shapes {tuple(lhs.shape)} and {tuple(rhs.shape)}")
    n = lhs.ndim
    batch = tuple(range(n - 2))
    return dot_general(lhs, rhs, (((n - 1,), (n - 2,)), (batch, batch)), precision)
