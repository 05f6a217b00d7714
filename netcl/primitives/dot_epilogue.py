"""GEMM epilogues for jit's epilogue fusion (transforms/epilogue_fusion.py): the elementwise
group that reads a product runs in the GEMM kernel's store, reading its other inputs at
(row, col) through their own layouts. `build_epilogue` writes the C (gemm.GemmEpilogue) for
dot_general (`make_epilogue_launcher`, on linalg.py's GEMM set-up) and for convolutions
(conv_gemm.make_conv_epilogue_launcher).
"""

from ..core import commands, dtypes, kernels
from ..core.array import Array
from ..core.launch import Launch
from ..core.shapes import contiguous_strides, prod
from . import gemm, matmul_precision
from .linalg import (_Prep, _check_index_limit, _free_dims, _gemm_setup, _merge, _preparer,
                     _set_operands, _split_count, launched_kernels)

def _vector_epilogue(device, kd, extras, positions, acc_index, body, out_avals, out_vars,
                     rows, cols):
    """(statements, width): the epilogue for `width` consecutive columns (see
    gemm.GemmEpilogue.vector_body; 8 on CPUs, 4, the float tiers' rvec, on GPUs), or
    ('', 0) where kernels should stay scalar: non-float32 values, ops without a vector
    form."""
    from ..core import codegen
    w = device.target.epilogue_vector_width
    cpu = device.target.kernel_family == "cpu"
    body = codegen.as_ops(body)
    if kd != dtypes.float32 or \
            any(x.dtype != dtypes.float32 for x in extras) or \
            any(a.dtype != dtypes.float32 for a in out_avals) or \
            not all(not isinstance(op, codegen.Line) and
                    codegen.op_vector_safe(op.prim, op.t_dtype, op.u_dtype, op.template)
                    for op in body):
        return "", 0
    vt = codegen.vtype(kd, w)
    lines = ["#pragma OPENCL FP_CONTRACT OFF", f"const {vt} x{acc_index} = accv;"]
    for j, (pos, x) in enumerate(zip(positions, extras)):
        if x.ndim == 0:
            sr = sc = 0
        else:
            sr = _merge(x.shape, x.strides, rows)[1] or 0
            sc = _merge(x.shape, x.strides, cols)[1] or 0
        base = f"{x.offset} + row * {sr} + col * {sc}"
        if sc == 1:
            load = kernels.vload(x.dtype, w, f"e{j} + {base}", cpu)
        elif sc == 0:
            load = f"({vt})(e{j}[{base}])"
        else:
            load = f"({vt})(" + ", ".join(f"e{j}[{base} + {e * sc}]" for e in range(w)) + ")"
        lines.append(f"const {vt} x{pos} = {load};")
    lines += [op.render(w) for op in body]
    lines += [kernels.vstore(a.dtype, w, f"o{j} + ci", var, cpu)
              for j, (a, var) in enumerate(zip(out_avals, out_vars))]
    return "\n".join("    " + ln for ln in lines), w


def build_epilogue(device, kd, extras, acc_index, body, out_vars, out_avals, rows, cols):
    """The gemm.GemmEpilogue computing `body` per element (row, col) of a product, or None
    where it cannot (an extra whose layout does not merge into a row and a column stride,
    or the CPU policy below).

    body: codegen Ops over x0, x1, ... where x{acc_index} is the product and the other x's
    are `extras` in order, each of the product's shape (`rows` + `cols` dims, in memory
    order) or 0-d; out_vars name the values stored into `out_avals` (dense, row-major)."""
    from ..core import codegen
    shape = out_avals[0].shape
    most = device.target.max_dense_epilogue_extras
    if most >= 0 and sum(x.ndim > 0 and x._contig for x in extras) > most:
        # A CPU work-item reads its tile of each dense extra row by row, which the hardware
        # prefetcher does not follow: a streaming kernel over them is faster.
        return None
    params, names, lines = [], [], ["#pragma OPENCL FP_CONTRACT OFF"]
    positions = [p for p in range(len(extras) + 1) if p != acc_index]
    # a 16-bit product is rounded to its dtype first, as the product's own store would
    acc = kernels.round_to(kd, 1, "acc") if kd in dtypes.STORAGE_FLOATS else "acc"
    lines.append(f"const {kernels.compute_ctype(kd)} x{acc_index} = {acc};")
    for j, (pos, x) in enumerate(zip(positions, extras)):
        if x.ndim == 0:
            index = str(x.offset)
        elif x.shape != shape:
            return None
        else:
            _, sr = _merge(x.shape, x.strides, rows)
            _, sc = _merge(x.shape, x.strides, cols)
            if sr is False or sc is False:
                return None
            index = f"{x.offset} + row * {sr or 0} + col * {sc or 0}"
        params.append(f"__global const {kernels.storage_ctype(x.dtype)}* e{j}")
        names.append(f"e{j}")
        lines.append(f"const {kernels.compute_ctype(x.dtype)} x{pos} = "
                     f"{kernels.load(x.dtype, f'e{j}', index)};")
    lines += [op.render(1) for op in codegen.as_ops(body)]
    for j, (a, var) in enumerate(zip(out_avals, out_vars)):
        params.append(f"__global {kernels.storage_ctype(a.dtype)}* o{j}")
        names.append(f"o{j}")
        lines.append(kernels.store(a.dtype, f"o{j}", "ci", var))
    code = "\n".join("    " + ln for ln in lines)
    vcode, width = _vector_epilogue(device, kd, extras, positions, acc_index, body,
                                    out_avals, out_vars, rows, cols)
    return gemm.GemmEpilogue(", ".join(params), ", ".join(names), code,
                             codegen.helpers_for(code), vcode, width)


def epilogue_outputs(device, out_avals):
    """new_outputs(k, first, offers) -> dense arrays for `out_avals`, each bound to kernel
    argument first + j, in buffers of `offers` where they fit (pool.output_storage; an
    epilogue reads its extras where it writes its outputs), else fresh ones."""
    from ..core.array import layout_id
    from ..core.pool import bucket_size, output_storage
    shape = out_avals[0].shape
    strides = contiguous_strides(shape)
    pool = device.pool
    meta = [(a.dtype, a.weak_type, prod(shape) * a.dtype.itemsize,
             bucket_size(prod(shape) * a.dtype.itemsize),
             layout_id(device, shape, a.dtype, a.weak_type, strides, 0)) for a in out_avals]

    def new_outputs(k, first, offers):
        outs = []
        for j, (dt, weak, nbytes, size_class, lid) in enumerate(meta):
            st = output_storage(pool, nbytes, size_class, offers)
            outs.append(Array(device, st.buf, st, shape, dt, strides, 0, weak, True, lid))
            k.set_arg(first + j, st.buf)
        return outs
    return new_outputs


def flat_element(kd, acc_index, extras, body, out_vars, out_avals, index, accs=("acc",)):
    """C statements finishing the element at flat `index` of an epilogue kernel whose extras
    (e0, e1, ...) are dense arrays of the result's shape or 0-d, and whose outputs (o0, ...)
    are dense: x{acc_index} is `acc` (or, for a tuple of positions, each x at one is the
    variable of `accs` in its place), the rest are the extras (scatter_epilogue.py and
    reductions/sum_epilogue.py)."""
    from ..core import codegen
    at = (acc_index,) if isinstance(acc_index, int) else tuple(acc_index)
    positions = [p for p in range(len(extras) + len(at)) if p not in at]
    lines = [f"const {kernels.compute_ctype(kd)} x{p} = {a};" for p, a in zip(at, accs)]
    for j, (pos, x) in enumerate(zip(positions, extras)):
        at = str(x.offset) if x.ndim == 0 else f"{index} + {x.offset}"
        lines.append(f"const {kernels.compute_ctype(x.dtype)} x{pos} = "
                     f"{kernels.load(x.dtype, f'e{j}', at)};")
    lines += [op.render(1) for op in codegen.as_ops(body)]
    lines += [kernels.store(a.dtype, f"o{j}", index, v)
              for j, (a, v) in enumerate(zip(out_avals, out_vars))]
    return lines


def flat_epilogue_launcher(device, k, n_operands, n_extras, out_avals, gsize, lsize):
    """The launcher ``(*operands, *extras) -> outputs`` of an epilogue kernel whose arguments
    are the extras, the outputs, then the operands (see `flat_element`)."""
    queue, enqueue, set_arg = device.queue, commands.launch, k.set_arg
    new_outputs = epilogue_outputs(device, out_avals)
    first = n_extras + len(out_avals)
    slots = [first + j for j in range(n_operands)] + list(range(n_extras))

    def reusing(offers, *args):
        outs = new_outputs(k, n_extras, offers)
        for slot, a in zip(slots, args):
            set_arg(slot, a._buf)
        enqueue(queue, k, gsize, lsize)
        return tuple(outs)

    def launch(*args):
        return reusing((), *args)
    return Launch(launch, reusing, (kernels.described(k),))


def make_epilogue_launcher(device, lhs, rhs, dimension_numbers, extras, acc_index, body,
                           out_vars, out_avals, precision="highest"):
    """A launcher ``(lhs, rhs, *extras) -> outputs`` for a dot_general whose (M, N) result
    feeds an elementwise group, computed in the GEMM kernel's epilogue (one launch, and the
    product never goes to memory unless the group stores it); see `build_epilogue`. None
    when this product cannot take an epilogue (batch dimensions, mixed or non-float dtypes,
    a split contraction, layouts that do not merge, a device without the tuned GEMM): the
    caller then runs the GEMM and the group as two kernels. `precision`: the product's
    (its bound ``precision``; TF32 tensor cores where matmul_precision allows them). A
    caller that does not pass it gets float32 products, which every precision allows."""
    (lc, rc), (lb, rb) = dimension_numbers
    kd = lhs.dtype
    half = kd in dtypes.HALF and device.target.tensor_cores     # 16-bit operands as stored
    if lb or rb or device.is_numpy or (kd not in (dtypes.float32, dtypes.float64) and
                                       not half) \
            or rhs.dtype != kd or (kd == dtypes.float64 and not device.capabilities.fp64):
        return None
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    shape = tuple(lhs.shape[d] for d in lf) + tuple(rhs.shape[d] for d in rf)
    M, N = prod(shape[:len(lf)]), prod(shape[len(lf):])
    K = prod(lhs.shape[d] for d in lc)
    arith = matmul_precision.gemm_arithmetic(device.target, kd, precision, M * N * K)
    if M * N == 0 or K == 0 or any(a.shape != shape for a in out_avals) or \
            _split_count(device, kd, 1, M, N, K) > 1 or \
            (half and arith not in ("f16", "bf16")):      # split products add their parts
        return None
    epilogue = build_epilogue(device, kd, extras, acc_index, body, out_vars, out_avals,
                              tuple(range(len(lf))), tuple(range(len(lf), len(shape))))
    if epilogue is None:
        return None
    pa = _Prep(lhs, lb, lf, lc, kd)
    pb = _Prep(rhs, rb, rc, rf, kd)
    if half:
        from .dot_tensor_cores import half_epilogue_kernel
        _check_index_limit(lhs, rhs, pa, pb, 1, M, N, K)
        found = half_epilogue_kernel(device, pa, pb, M, N, K, epilogue, arith)
    else:
        found = _gemm_setup(device, lhs, rhs, pa, pb, kd, 1, M, N, K, epilogue, arith)
    if found is None:
        return None
    k, gsize, lsize, pack = found
    queue = device.queue
    new_outputs = epilogue_outputs(device, out_avals)
    first_out = 15 + len(extras)
    enqueue, set_arg = commands.launch, k.set_arg
    prep = _preparer(pa, pb)

    def reusing(offers, a, b, *xs):
        if prep is not None:
            a, b = prep(a, b)
        outs = new_outputs(k, first_out, offers)
        set_arg(0, outs[0]._buf)      # C: unused by the epilogue, any buffer will do
        keep = _set_operands(set_arg, pack, a, b)  # noqa: F841  (packed buffers outlive the enqueue)
        for j, x in enumerate(xs):
            set_arg(15 + j, x._buf)
        enqueue(queue, k, gsize, lsize)
        return tuple(outs)

    def launch(*args):
        return reusing((), *args)
    return Launch(launch, reusing, launched_kernels(k, pack, prep))
