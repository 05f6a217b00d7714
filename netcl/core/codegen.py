"""The elementwise renderer: OpenCL C for a group of elementwise ops over strided inputs.

Each elementwise primitive carries an expression template (`"exp({0})"`, `"({0} + {1})"`),
possibly chosen by dtype. `render_elementwise` composes templates into one kernel: one
work-item per output element, each input read by one of three index kinds:

  'c'  contiguous over the output's shape:   in[off + i]
  's'  one value broadcast everywhere:        in[off]
  'g'  any strided view (broadcasts, transposes, steps): index from the output coordinates,
       with the output shape and the input's strides in a small __constant metadata buffer.

Eager mode renders one op per kernel; jit's fusion renders whole groups with the same code.
Sizes, offsets and strides are kernel arguments, so one source serves every shape.
"""
import re

import numpy as np
import pyopencl as cl

from . import kernels
from .array import Array
from .shapes import contiguous_strides, prod

INDEX_CTYPE = "int"


# C helper functions that templates may call (netcl_<name>); included only when used.
HELPERS = {}
_HELPER_RE = re.compile(r"\bnetcl_(\w+)\(")


def helpers_for(source):
    """The helper definitions `source` calls, in registration order."""
    used = set(_HELPER_RE.findall(source))
    while True:  # helpers may call helpers
        more = {m for name in used if name in HELPERS for m in _HELPER_RE.findall(HELPERS[name])}
        if more <= used:
            break
        used |= more
    out = []
    for name, src in HELPERS.items():  # registration order: callees first
        if name in used and src not in out:
            out.append(src)
    return "".join(out)


def expression(prim, in_dtypes, out_dtype, params):
    """The C expression of an elementwise primitive for these dtypes, with {0}, {1}... for
    the operands ({T} is the first operand's compute type, {U} the result's)."""
    low = prim.lowering
    template = low(in_dtypes, out_dtype, **params) if callable(low) else low
    t = kernels.compute_ctype(in_dtypes[0]) if in_dtypes else kernels.compute_ctype(out_dtype)
    return template, t, kernels.compute_ctype(out_dtype)


def apply_template(template, t, u, operands):
    return template.format(*operands, T=t, U=u)


def render_elementwise(name, inputs, body, outputs, preamble=""):
    """OpenCL C source of one elementwise kernel.

    inputs:  [(dtype, kind)] with kind in 'c', 's', 'g' (see module docstring)
    body:    [(var, compute_ctype, c_expression)] evaluated in order; inputs are x0, x1, ...
    outputs: [(dtype, var)] stored at the output index i
    Arguments: outputs..., n, (input, offset) per input, then meta and rank if any input is 'g'.
    """
    args = [f"__global {kernels.storage_ctype(d)}* out{j}" for j, (d, _) in enumerate(outputs)]
    args.append(f"const {INDEX_CTYPE} n")
    for j, (d, _) in enumerate(inputs):
        args += [f"__global const {kernels.storage_ctype(d)}* in{j}", f"const {INDEX_CTYPE} off{j}"]
    strided = [j for j, (_, kind) in enumerate(inputs) if kind == "g"]
    if strided:
        args += ["__constant int* meta", "const int rank"]
    lines = [f"__kernel void {name}({', '.join(args)}) {{",
             f"  const {INDEX_CTYPE} i = get_global_id(0);",
             "  if (i >= n) return;"]
    if strided:
        # meta[0:rank] is the output shape; meta[rank*(k+1) : rank*(k+2)] the k-th strided
        # input's strides. Walk the dimensions from the last, peeling off coordinates.
        lines += [f"  {INDEX_CTYPE} " + ", ".join(f"idx{j} = off{j}" for j in strided) + ";",
                  f"  {INDEX_CTYPE} rem = i;",
                  "  for (int d = rank - 1; d >= 0; --d) {",
                  f"    const {INDEX_CTYPE} c = rem % meta[d]; rem /= meta[d];"]
        lines += [f"    idx{j} += c * meta[rank * {k + 1} + d];" for k, j in enumerate(strided)]
        lines.append("  }")
    for j, (d, kind) in enumerate(inputs):
        index = {"c": f"off{j} + i", "s": f"off{j}", "g": f"idx{j}"}[kind]
        lines.append(f"  const {kernels.compute_ctype(d)} x{j} = {kernels.load(d, f'in{j}', index)};")
    for var, ctype, expr in body:
        lines.append(f"  const {ctype} {var} = {expr};")
    for j, (d, var) in enumerate(outputs):
        lines.append("  " + kernels.store(d, f"out{j}", "i", var))
    lines.append("}")
    code = "\n".join(lines) + "\n"
    # No fused multiply-add contraction: jitted (fused) and eager results stay identical.
    return "#pragma OPENCL FP_CONTRACT OFF\n" + preamble + helpers_for(code) + code


def input_kind(x, shape):
    """How kernel code should index array `x` read over an output of `shape`."""
    if x.shape == shape and x._contig:
        return "c"
    if all(s == 0 for s, d in zip(x.strides, x.shape) if d != 1) or prod(x.shape) == 1:
        return "s"
    return "g"


def _meta(shape, strided_inputs):
    vals = list(shape)
    for x in strided_inputs:
        # broadcast dims of size 1 read with stride 0
        vals += [st if d != 1 else 0 for st, d in zip(x.strides, x.shape)]
    return np.array(vals or [0], dtype=np.int32)


def make_elementwise_launcher(prim, device, args, params, out_aval, preamble=""):
    """An eager launcher for one elementwise primitive over arrays laid out like `args`."""
    in_dtypes = [x.dtype for x in args]
    template, t, u = expression(prim, in_dtypes, out_aval.dtype, params)
    body = [("y", u, apply_template(template, t, u, [f"x{j}" for j in range(len(args))]))]
    launch = make_body_launcher("ew_" + prim.name, device, args, body, ["y"], [out_aval],
                                preamble)
    return launch


def make_body_launcher(name, device, args, body, out_vars, out_avals, preamble=""):
    """A launcher running `body` (see render_elementwise) once per element of the common
    output shape, reading `args` in their current layouts; returns one array per out_var
    (a tuple when there are several)."""
    shape = out_avals[0].shape
    n = prod(shape)
    if n >= 2**31:
        raise ValueError(f"{name}: arrays of {n} elements exceed the 2^31 index limit")
    kinds = [input_kind(x, shape) for x in args]
    in_dtypes = [x.dtype for x in args]
    outputs = [(a.dtype, v) for a, v in zip(out_avals, out_vars)]
    src = render_elementwise(name, list(zip(in_dtypes, kinds)), body, outputs, preamble)
    k = kernels.kernel(device, src, name)
    m = len(out_avals)
    # Scalar arguments never change for this launcher: set them once.
    k.set_arg(m, np.int32(n))
    for j, x in enumerate(args):
        k.set_arg(m + 2 + 2 * j, np.int32(x.offset))
    strided = [x for x, kind in zip(args, kinds) if kind == "g"]
    if strided:
        meta = _meta(shape, strided)
        meta_buf = cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                             hostbuf=meta)
        k.set_arg(m + 1 + 2 * len(args), meta_buf)
        k.set_arg(m + 2 + 2 * len(args), np.int32(len(shape)))
        k._netcl_meta = meta_buf  # keep the buffer alive as long as the kernel
    if m == 1:
        return _launcher(device, k, shape, out_avals[0].dtype, out_avals[0].weak_type, n,
                         len(args))
    return _multi_launcher(device, k, shape, out_avals, n, len(args))


def _multi_launcher(device, k, shape, out_avals, n, nargs):
    from .array import layout_id
    from .pool import Storage
    queue, pool = device.queue, device.pool
    strides = contiguous_strides(shape)
    gsize, lsize = kernels.grid_1d(device, n)
    outs_meta = [(a.dtype, a.weak_type, n * a.dtype.itemsize,
                  layout_id(device, shape, a.dtype, a.weak_type, strides, 0)) for a in out_avals]
    m = len(out_avals)
    set_arg = k.set_arg
    enqueue = cl.enqueue_nd_range_kernel

    def launch(*xs):
        outs = []
        for j, (dt, weak, nbytes, lid) in enumerate(outs_meta):
            st = Storage(pool, nbytes)
            outs.append(Array(device, st.buf, st, shape, dt, strides, 0, weak, True, lid))
            set_arg(j, st.buf)
        if n:
            for j, x in enumerate(xs):
                set_arg(m + 1 + 2 * j, x._buf)
            enqueue(queue, k, gsize, lsize)
        return tuple(outs)
    return launch


def _launcher(device, k, shape, dtype, weak, n, nargs):
    queue, pool = device.queue, device.pool
    strides = contiguous_strides(shape)
    gsize, lsize = kernels.grid_1d(device, n)
    nbytes = n * dtype.itemsize
    enqueue = cl.enqueue_nd_range_kernel
    set_arg = k.set_arg
    from .array import layout_id
    from .pool import Storage
    lid = layout_id(device, shape, dtype, weak, strides, 0)

    def new_out():
        st = Storage(pool, nbytes)
        return Array(device, st.buf, st, shape, dtype, strides, 0, weak, True, lid)

    if n == 0:
        return lambda *xs: new_out()
    if nargs == 1:
        def launch1(x):
            out = new_out()
            set_arg(0, out._buf)
            set_arg(2, x._buf)
            enqueue(queue, k, gsize, lsize)
            return out
        return launch1
    if nargs == 2:
        def launch2(x, y):
            out = new_out()
            set_arg(0, out._buf)
            set_arg(2, x._buf)
            set_arg(4, y._buf)
            enqueue(queue, k, gsize, lsize)
            return out
        return launch2

    def launch(*xs):
        out = new_out()
        set_arg(0, out._buf)
        for j, x in enumerate(xs):
            set_arg(2 + 2 * j, x._buf)
        enqueue(queue, k, gsize, lsize)
        return out
    return launch
