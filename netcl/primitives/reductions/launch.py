"""Launch planning for reductions and scans: how the input is read, which kernel family and
how many passes, and the launchers (called once per params and input layout).

Layout. The input is viewed as (A, K, B): A the kept axes before the reduced block, K the
reduced block, B the kept axes after it. Views cost nothing: a transposed or reversed input
whose elements fill a dense block is read in *memory* order (the output is then written in
that order and returned as a permuted view); only reduced axes that are not one block in
memory, or non-dense inputs (broadcasts, steps), are first copied.

One program per (operation, dtype, family), sizes as arguments; the family is 'cpu' on CPU
devices (PoCL and other CPU runtimes run each work-item's own loop scalar, so cpu_kernels.py
spells the vector work out) and 'gpu' elsewhere (gpu_kernels.py). Both split K into G chunks
when there are too few rows to fill the device (a full sum of 2^26 elements on a GPU): pass 1
writes partials (A, G, B) in the accumulator type ((A, B, G) for GPU columns), pass 2 folds
them; scans run
reduce-then-scan (chunk totals, their scan, each chunk with its carry-in).
"""
import numpy as np
import pyopencl as cl

from ...core import commands, dtypes, kernels
from ...core.array import Array
from ...core.shapes import contiguous_strides, prod
from .cpu_kernels import _W, _cols_width, _cpu_reduce_kernel, _cpu_scan_source
from .gpu_kernels import _V, _gpu_scan_source, _reduce_kernel
from .kernel_common import _better_fn, _partial_dtype

_INDEX_LIMIT = 2**31 - 1


def _reduce_source(op, dtype, style):
    """One program per (op, dtype, style): rows/cols kernels, single-pass and two-pass
    variants (final: in -> out; part: in -> partials; fold: partials -> out)."""
    arg = op in ("argmax", "argmin")
    gen = _cpu_reduce_kernel if style == "cpu" else _reduce_kernel
    pd = _partial_dtype(op, dtype)
    parts = [_better_fn(op, dtype)] if arg else []
    for kind in ("rows", "cols"):
        if arg:
            parts.append(gen(kind, f"{kind}_final", op, dtype, None, dtype, out_val=False))
            parts.append(gen(kind, f"{kind}_part", op, dtype, dtype, dtype))
            parts.append(gen(kind, f"{kind}_fold", op, dtype, None, dtype, in_idx=True,
                             out_val=False))
        else:
            parts.append(gen(kind, f"{kind}_final", op, dtype, dtype, dtype))
            parts.append(gen(kind, f"{kind}_part", op, dtype, pd, dtype))
            parts.append(gen(kind, f"{kind}_fold", op, pd, dtype, dtype))
    if style == "gpu":
        parts.append(gen("cols", "cols_partT", op, dtype, dtype if arg else pd, dtype,
                         transposed=True))
    return "".join(parts)


def _scan_source(op, dtype, style):
    """One program per (op, dtype, style): the rows scan and the cols scan."""
    if style == "cpu":
        return _cpu_scan_source(op, dtype)
    return _gpu_scan_source(op, dtype)


_wg_cache = {}


def _pow2_floor(n):
    return 1 << (max(1, int(n)).bit_length() - 1)


def _group_size(device, k, key, per_item_local):
    """Power-of-two work-group size for kernel k (cached under key) within the device's
    limits, leaving room for per_item_local bytes of local memory per work-item."""
    key = (device, key, per_item_local)
    L = _wg_cache.get(key)
    if L is None:
        limit = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device.cl_device)
        L = min(device.work_group, device.capabilities.max_work_group_size, limit)
        if per_item_local:
            L = min(L, max(1, (device.capabilities.local_mem_size - 1024) // per_item_local))
        L = _pow2_floor(L)
        _wg_cache[key] = L
    return L


# work-items per core on CPUs when rows are few: several, so a preempted thread (a busy
# machine) delays a small share of the work
_CPU_ITEMS_PER_CORE = 32


def _style(device):
    """Kernel family: 'cpu' (explicit vectors, one work-item per row or column block) or
    'gpu' (work-groups with local-memory trees; also accelerators)."""
    return device.target.reduction_style


def _use_rows(device, K, B):
    """Rows kernel (contiguous reduced block) or cols kernel (work-item per output)?"""
    if B != 1:
        return False
    if _style(device) == "cpu":
        return True
    return K > 32


def _split(device, A, K, B, rows, op="sum", max_parts=256):
    """(G, chunk): how many chunks each reduced row is split into for pass 1, so that a few
    long rows still give every compute unit work. max_parts caps G for GPU column passes
    whose partials a cols pass folds (one work-item per output over G partials, a serial
    loop that thousands of partials make slow for a few outputs); None where a rows pass
    folds them (`_two_passes`)."""
    cu = device.capabilities.compute_units
    if K <= 1:
        return 1, max(K, 1)
    if _style(device) == "cpu":
        target = cu * _CPU_ITEMS_PER_CORE
        if rows:
            if A >= target:
                return 1, K
            G = min(-(-K // 1024), -(-target // A))
            chunk = kernels.round_up(-(-K // max(G, 1)), 32)
        else:
            items = A * (-(-B // (_cols_width(op) if op else _W)))
            if items >= target:
                return 1, K
            G = min(-(-K // 64), -(-target // items))
            chunk = -(-K // max(G, 1))
    elif rows:
        L = device.work_group
        target = cu * 8
        if A >= target:
            return 1, K
        G = min(-(-K // (L * 32)), -(-target // A))
        chunk = kernels.round_up(-(-K // max(G, 1)), L)
    else:
        target = cu * 2048
        # Short columns over enough outputs (a bias gradient: 256 rows x 1024) take one
        # pass: a second kernel would cost a launch (host time from Python) to save less
        # device time than that.
        if A * B >= target or (K <= 1024 and K <= 64 * A * B):
            return 1, K
        G = min(-(-K // 32), -(-target // (A * B)), max_parts or K)
        chunk = -(-K // max(G, 1))
    G = -(-K // chunk)
    return (G, chunk) if G > 1 else (1, K)


def _options(style, dtype):
    """Build options: double8 and long8 are wider than AVX2 registers, which clang notes as an ABI
    warning for every vector builtin; the code is right, so keep the build log quiet."""
    return ("-w",) if style == "cpu" and dtype.itemsize == 8 else ()


def _cpu_geometry(device, n, total):
    """(global, local) for n independent work-items reading `total` elements in all, on a
    CPU device. Each item loops over its data, so groups of one item spread best over the
    cores; with very many items, or little work in all, the per-group cost shows and groups
    of 8 win. Two local sizes in all: PoCL builds one function per local size."""
    L = 8 if n > 4096 or total < 65536 else 1
    return (kernels.round_up(n, L),), (L,)


def _layout(x):
    """(base, order, flipped) when x's elements fill a dense block of memory in some axis
    order, some axes possibly reversed: `order` lists the axes of size > 1 from slowest to
    fastest in memory, `base` is the element offset of the block's start. None otherwise."""
    dims = [d for d in range(x.ndim) if x.shape[d] != 1]
    if x._contig:
        return x.offset, tuple(dims), frozenset()
    if any(x.strides[d] == 0 for d in dims):
        return None
    order = sorted(dims, key=lambda d: -abs(x.strides[d]))
    expect = 1
    for d in reversed(order):
        if abs(x.strides[d]) != expect:
            return None
        expect *= x.shape[d]
    flipped = frozenset(d for d in dims if x.strides[d] < 0)
    base = x.offset + sum((x.shape[d] - 1) * x.strides[d] for d in flipped)
    return base, tuple(order), flipped


def _copy_dense(x):
    """A dense copy of the (strided) view x, run eagerly."""
    from ...core.eval import eval_interpreter
    from ..elementwise import copy_p
    return eval_interpreter.process(copy_p, (x,), {})


def _prepare(x, reduced):
    """Plan how the kernels read x: (pre, base, A, K, B, phys_kept, flipped).

    `pre` maps the launched array to the one the kernels read (identity, or a copy with
    the reduced axes last); phys_kept lists the kept axes (size > 1) in the order the
    kernels write them.
    """
    lay = _layout(x)
    pre = None
    if lay is not None:
        base, order, flipped = lay
        marks = [d in reduced for d in order]
        runs = sum(1 for i, m in enumerate(marks) if m and (i == 0 or not marks[i - 1]))
    if lay is None or runs > 1:
        perm = tuple(d for d in range(x.ndim) if d not in reduced) + tuple(sorted(reduced))
        shape = tuple(x.shape[d] for d in perm)
        strides = tuple(x.strides[d] for d in perm)

        def pre(a, perm=perm, shape=shape, strides=strides):
            return _copy_dense(a._view(shape, strides, a.offset))
        base, order, flipped = 0, tuple(d for d in perm if x.shape[d] != 1), frozenset()
    A = K = B = 1
    seen = False
    for d in order:
        if d in reduced:
            K *= x.shape[d]
            seen = True
        elif seen:
            B *= x.shape[d]
        else:
            A *= x.shape[d]
    phys_kept = tuple(d for d in order if d not in reduced)
    return pre, base, A, K, B, phys_kept, flipped


def _out_maker(device, x_shape, reduced, phys_kept, flipped, out_aval, dtype=None):
    """new() -> (dense buffer array written by the kernels, the Array returned to the user)."""
    dtype = out_aval.dtype if dtype is None else dtype
    shape, weak = out_aval.shape, out_aval.weak_type
    kept = [d for d in range(len(x_shape)) if d not in reduced]
    logical = tuple(d for d in kept if x_shape[d] != 1)
    if phys_kept == logical and not (flipped & set(phys_kept)):
        return _dense_maker(device, shape, dtype, weak), None
    phys_shape = tuple(x_shape[d] for d in phys_kept)
    pstr = dict(zip(phys_kept, contiguous_strides(phys_shape)))
    strides, offset = [], 0
    for d in kept:
        if x_shape[d] == 1:
            strides.append(0)
        elif d in flipped:
            strides.append(-pstr[d])
            offset += (x_shape[d] - 1) * pstr[d]
        else:
            strides.append(pstr[d])
    strides = tuple(strides)

    def view(buf):
        return buf._view(shape, strides, offset)
    return _dense_maker(device, phys_shape, dtype, weak), view


def _dense_maker(device, shape, dtype, weak):
    """new() -> an uninitialised dense Array (what Array.empty does, precomputed)."""
    from ...core.pool import Storage
    pool, strides, nbytes = device.pool, contiguous_strides(shape), prod(shape) * dtype.itemsize

    def new():
        st = Storage(pool, nbytes)
        return Array(device, st.buf, st, shape, dtype, strides, 0, weak, True)
    return new


def _Pass(k, gsize, lsize, nbuf):
    """One kernel launch with its scalar arguments set once: fn(queue, *buffers)."""
    set_arg, enqueue = k.set_arg, commands.launch
    if nbuf == 2:
        def run2(queue, b0, b1):
            set_arg(0, b0)
            set_arg(1, b1)
            enqueue(queue, k, gsize, lsize)
        return run2

    def run(queue, *bufs):
        for i, b in enumerate(bufs):
            set_arg(i, b)
        enqueue(queue, k, gsize, lsize)
    return run


def _make_pass(device, op, dtype, variant, A, K, B, G, chunk, off, rows, arg=False, shift=0,
               rev=0):
    """A reduction pass over (A, K, B) split in G chunks. variant: final | part | partT
    (transposed partials, GPU cols) | fold."""
    kind = "rows" if rows else "cols"
    name = f"{kind}_{variant}"
    style = _style(device)
    k = kernels.kernel(device, _reduce_source(op, dtype, style), name,
                       options=_options(style, dtype))
    # buffer arguments come first: [out], [oidx], in, [iidx]
    nbuf = 2 + (arg and variant != "final")
    i = nbuf
    vals = [off, K] + ([] if rows else [B]) + [G, chunk, shift] + ([rev] if arg else [])
    for v in vals:
        k.set_arg(i, np.int32(v))
        i += 1
    if style == "cpu":
        n = A * G * (1 if rows else -(-B // _cols_width(op)))
        k.set_arg(i, np.int32(n))
        gsize, lsize = _cpu_geometry(device, n, A * K * B)
        return _Pass(k, gsize, lsize, nbuf)
    acc_size = max(4, dtype.itemsize)  # half and bool accumulate in float / int
    if rows:
        L = _group_size(device, k, (op, dtype, name), acc_size + (4 if arg else 0))
        k.set_arg(i, cl.LocalMemory(L * acc_size))
        if arg:
            k.set_arg(i + 1, cl.LocalMemory(L * 4))
        return _Pass(k, (A * G * L,), (L,), nbuf)
    n = A * G * B
    k.set_arg(i, np.int32(n))
    L = _group_size(device, k, (op, dtype, name), 0)
    return _Pass(k, (kernels.round_up(n, L),), (L,), nbuf)


def _two_passes(device, op, dtype, A, K, B, G, chunk, base, rows, arg=False, rev=0):
    """Pass 1 (partials of G chunks) and pass 2 (their fold) of a split reduction. GPU
    column reductions write the partials transposed, (A, B, G), so a rows pass folds them:
    a work-group per output reading its partials contiguously. (With a cols fold, a
    64-column bias gradient over 262144 rows got a G capped so the fold stays short, which
    left only 124 work-items per compute unit and the memory bus far from busy.)"""
    if not rows and _style(device) == "gpu":
        p1 = _make_pass(device, op, dtype, "partT", A, K, B, G, chunk, base, False, arg=arg,
                        rev=rev)
        return p1, _make_pass(device, op, dtype, "fold", A * B, G, 1, 1, G, 0,
                              _use_rows(device, G, 1), arg=arg)
    p1 = _make_pass(device, op, dtype, "part", A, K, B, G, chunk, base, rows, arg=arg, rev=rev)
    return p1, _make_pass(device, op, dtype, "fold", A, G, B, 1, G, 0,
                          _use_rows(device, G, B), arg=arg)


def _check_size(name, x):
    if x.size > _INDEX_LIMIT:
        raise ValueError(f"{name}: arrays of {x.size} elements exceed the 2^31 index limit")


def _reduce_launcher(op):
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        _check_size(op, x)
        reduced = set(params["axes"])
        n_out = prod(out_aval.shape)
        if n_out == 0:
            return lambda x: Array.empty(device, out_aval.shape, out_aval.dtype,
                                         out_aval.weak_type)
        dtype = x.dtype
        queue, pool = device.queue, device.pool
        if x.size == 0:  # empty reduction: the identity everywhere
            p = _make_pass(device, op, dtype, "final", n_out, 0, 1, 1, 1, 0, rows=False)

            def launch_empty(x):
                out = Array.empty(device, out_aval.shape, dtype, out_aval.weak_type)
                p(queue, out._buf, x._buf)
                return out
            return launch_empty
        pre, base, A, K, B, phys_kept, flipped = _prepare(x, reduced)
        new, view = _out_maker(device, x.shape, reduced, phys_kept, flipped, out_aval)
        rows = _use_rows(device, K, B)
        G, chunk = _split(device, A, K, B, rows, op, max_parts=None)
        if G == 1:
            p1 = _make_pass(device, op, dtype, "final", A, K, B, 1, K, base, rows)

            def launch(x):
                if pre is not None:
                    x = pre(x)
                out = new()
                p1(queue, out._buf, x._buf)
                return out if view is None else view(out)
            return launch
        pd = _partial_dtype(op, dtype)
        p1, p2 = _two_passes(device, op, dtype, A, K, B, G, chunk, base, rows)
        tmp_bytes = A * G * B * pd.itemsize
        from ...core.pool import Storage

        def launch2(x):
            if pre is not None:
                x = pre(x)
            out = new()
            tmp = Storage(pool, tmp_bytes)
            p1(queue, tmp.buf, x._buf)
            p2(queue, out._buf, tmp.buf)
            return out if view is None else view(out)
        return launch2
    return make_launcher


def _arg_launcher(op):
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        _check_size(op, x)
        axis = params["axis"]
        n_out = prod(out_aval.shape)
        if n_out == 0:
            return lambda x: Array.empty(device, out_aval.shape, out_aval.dtype, False)
        dtype = x.dtype
        queue, pool = device.queue, device.pool
        reduced = {axis}
        pre, base, A, K, B, phys_kept, flipped = _prepare(x, reduced)
        rev = int(axis in flipped and x.shape[axis] > 1)
        new, view = _out_maker(device, x.shape, reduced, phys_kept, flipped, out_aval,
                               dtypes.int32)
        rows = _use_rows(device, K, B)
        G, chunk = _split(device, A, K, B, rows, op, max_parts=None)
        cast = out_aval.dtype != dtypes.int32

        def finish(out):
            out = out if view is None else view(out)
            if cast:
                from ...core.eval import eval_interpreter
                from ..elementwise import convert_element_type_p
                out = eval_interpreter.process(convert_element_type_p, (out,), dict(
                    new_dtype=out_aval.dtype, weak_type=False))
            return out
        if G == 1:
            p1 = _make_pass(device, op, dtype, "final", A, K, B, 1, K, base, rows, arg=True,
                            rev=rev)

            def launch(x):
                if pre is not None:
                    x = pre(x)
                out = new()
                p1(queue, out._buf, x._buf)
                return finish(out)
            return launch
        p1, p2 = _two_passes(device, op, dtype, A, K, B, G, chunk, base, rows, arg=True,
                             rev=rev)
        m = A * G * B
        from ...core.pool import Storage

        def launch2(x):
            if pre is not None:
                x = pre(x)
            out = new()
            vals, idx = Storage(pool, m * dtype.itemsize), Storage(pool, m * 4)
            p1(queue, vals.buf, idx.buf, x._buf)
            p2(queue, out._buf, vals.buf, idx.buf)
            return finish(out)
        return launch2
    return make_launcher


_SCAN_REDUCE = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "ffill": None}


def _scan_pass(device, op, dtype, A, K, B, G, chunk, off, rev, excl, rows):
    """A scan pass over (A, K, B) in G chunks; buffers: out, in, carry (or None)."""
    style = _style(device)
    name = "scan_rows" if rows else "scan_cols"
    k = kernels.kernel(device, _scan_source(op, dtype, style), name,
                       options=_options(style, dtype))
    vals = [off, K] + ([] if rows else [B]) + [G, chunk, rev, excl]
    for i, v in enumerate(vals):
        k.set_arg(2 + i, np.int32(v))
    i = 2 + len(vals)  # the carry buffer
    k.set_arg(i + 1, np.int32(1 if G > 1 else 0))
    acc_size = max(4, dtype.itemsize)
    if style == "cpu":
        n = A * G * (1 if rows else -(-B // _W))
        k.set_arg(i + 2, np.int32(n))
        gsize, lsize = _cpu_geometry(device, n, A * K * B)
    elif rows:
        L = _group_size(device, k, (op, dtype, name), acc_size * (_V + 1))
        k.set_arg(i + 2, cl.LocalMemory(L * _V * acc_size))
        k.set_arg(i + 3, cl.LocalMemory(L * acc_size))
        gsize, lsize = (A * G * L,), (L,)
    else:
        n = A * G * B
        k.set_arg(i + 2, np.int32(n))
        L = _group_size(device, k, (op, dtype, name), 0)
        gsize, lsize = (kernels.round_up(n, L),), (L,)
    enqueue = commands.launch

    def run(queue, out, x, carry):
        k.set_arg(0, out)
        k.set_arg(1, x)
        k.set_arg(i, carry)
        enqueue(queue, k, gsize, lsize)
    return run


def _scan_launcher(op):
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        _check_size(op, x)
        axis, reverse = params["axis"], params["reverse"]
        excl = int(params.get("exclusive", False))
        dtype = x.dtype
        queue, pool = device.queue, device.pool
        if x.size == 0:
            return lambda x: Array.empty(device, x.shape, dtype, out_aval.weak_type)
        lay = _layout(x)
        pre = None
        if lay is None:
            pre = _copy_dense
            lay = (0, tuple(d for d in range(x.ndim) if x.shape[d] != 1), frozenset())
        base, order, flipped = lay
        if axis in order:
            j = order.index(axis)
            A, K, B = prod(x.shape[d] for d in order[:j]), x.shape[axis], \
                prod(x.shape[d] for d in order[j + 1:])
        else:
            A, K, B = prod(x.shape[d] for d in order), 1, 1
        rev = int(bool(reverse) != (axis in flipped))
        # the output is written in the input's memory order: a permuted/reversed view
        new, view = _out_maker(device, x.shape, set(), order, flipped, out_aval)
        rows = _use_rows(device, K, B)
        G, chunk = _split(device, A, K, B, rows, None)
        if G == 1 or _SCAN_REDUCE[op] is None:  # (ffill's chunks do not fold in any order)
            s1 = _scan_pass(device, op, dtype, A, K, B, 1, K, base, rev, excl, rows)

            def launch(x):
                if pre is not None:
                    x = pre(x)
                out = new()
                s1(queue, out._buf, x._buf, None)
                return out if view is None else view(out)
            return launch
        # reduce-then-scan: chunk totals, their inclusive scan, then each chunk with a carry
        pd = _partial_dtype(op, dtype)
        shift = G * chunk - K if rev else 0  # reversed chunks, seen from the front
        p1 = _make_pass(device, _SCAN_REDUCE[op], dtype, "part", A, K, B, G, chunk, base, rows,
                        shift=shift)
        rows2 = _use_rows(device, G, B)
        s2 = _scan_pass(device, op, pd, A, G, B, 1, G, 0, rev, 0, rows2)
        s3 = _scan_pass(device, op, dtype, A, K, B, G, chunk, base, rev, excl, rows)
        m = A * G * B
        from ...core.pool import Storage

        def launch3(x):
            if pre is not None:
                x = pre(x)
            out = new()
            tot, car = Storage(pool, m * pd.itemsize), Storage(pool, m * pd.itemsize)
            p1(queue, tot.buf, x._buf)
            s2(queue, car.buf, tot.buf, None)
            s3(queue, out._buf, x._buf, car.buf)
            return out if view is None else view(out)
        return launch3
    return make_launcher
