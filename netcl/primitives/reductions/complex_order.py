"""reduce_max / reduce_min of complex numbers, as JAX computes them: a fold, in order, of
lax.max (or lax.min) over the reduced elements, starting from the identity -inf+0j (+inf+0j)
when there are two or more (one element is its own result; none gives the identity).

lax.max of complex numbers (complex_ops.py) is lexicographic with IEEE comparisons of the
parts and keeps its second operand unless the first compares greater, so NaNs do not
propagate and the fold is not associative: [1, nan+0j] folds to nan+0j, [nan+0j, 1] to 1.
Without NaNs the fold is the last element equal to the lexicographic maximum (or the
identity, where every element has real part -inf and a negative imaginary part); with NaNs
it depends on the order, and this is XLA's order on a CPU for reductions of up to 32
elements (longer ones XLA splits in an order of its own; tests/test_complex_order.py).

The kernels fold each output's elements in order: one work-item per output, or, for few
outputs of long rows, pass 1 summarises chunks of each row and pass 2 applies the summaries
in order to the identity. A chunk's fold is a function of the value folded before it, of one
of these forms (`tag`, `v`):

    0  the identity (an empty chunk)
    1  the constant v (the chunk holds an element with a NaN real part: every comparison
       with it is false, so the fold restarts after the last such element)
    2  acc > v ? acc : v (acc is kept only if it beats every element of the chunk)
    3  acc.re > v.re ? acc : v (as 2, where one of the chunk's elements with v's real part
       has a NaN imaginary part, so acc loses to v on equal real parts whatever its
       imaginary part)

Composing an element e onto a summary keeps that form (`netcl_lex_push`), which is exact.

>>> lax.reduce_max(jnp.asarray([1 + 2j, 3 - 1j, 3 - 2j]), (0,))      # 3-1j
"""
import numpy as np

from ...core import commands, dtypes
from ...core.array import Array
from ...core.kernels import compute_ctype, grid_1d, kernel
from ...core.shapes import prod


def identity(op, dtype):
    """The fold's start: -inf+0j for max, +inf+0j for min (JAX's identity, cast)."""
    return np.array(-np.inf if op == "max" else np.inf).astype(dtype)


# ---- NumPy reference ----------------------------------------------------------------------------

def reference(x, axes, op):
    """The fold, in closed form over NumPy arrays (an independent check of the kernels'
    summaries): after the last element with a NaN real part (else from the identity), the
    elements with the extreme real part R; among those after the last of them with a NaN
    imaginary part, the last with the extreme imaginary part."""
    kept = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    rows = np.transpose(x, kept + list(axes)).reshape(
        (prod(out_shape), prod(x.shape[d] for d in axes)))
    M, K = rows.shape
    init = identity(op, x.dtype)
    if K == 0:
        return np.full(out_shape, init, x.dtype)
    if K == 1:
        return rows[:, 0].reshape(out_shape).copy()
    ext, far = (np.max, -np.inf) if op == "max" else (np.min, np.inf)
    re, im = rows.real, rows.imag
    pos = np.broadcast_to(np.arange(K), (M, K))
    with np.errstate(invalid="ignore"):
        k = np.max(np.where(np.isnan(re), pos, -1), axis=1, keepdims=True)
        after = pos > k
        R = ext(np.where(after, re, far), axis=1, keepdims=True)
        group = after & (re == R)
        m = np.max(np.where(group & np.isnan(im), pos, -1), axis=1, keepdims=True)
        last = np.max(np.where(group, pos, -1), axis=1, keepdims=True)
        rest = group & (pos > m)
        # the identity takes part where nothing reset the fold and it has the real part R
        with_init = (k == -1) & (R == init.real) & (m == -1)
        imax = ext(np.where(rest, im, far), axis=1, keepdims=True)
        imax = np.where(with_init, ext(np.concatenate([imax, np.zeros_like(imax)], 1),
                                       axis=1, keepdims=True), imax)
        q = np.max(np.where(rest & (im == imax), pos, -1), axis=1)
    q = np.where(k[:, 0] == K - 1, K - 1, np.where((m[:, 0] >= 0) & (m == last)[:, 0],
                                                     m[:, 0], q))
    out = np.where(q >= 0, rows[np.arange(M), np.maximum(q, 0)], init)
    return out.reshape(out_shape).astype(x.dtype)


# ---- OpenCL -------------------------------------------------------------------------------------

def _source(op, dtype):
    C = compute_ctype(dtype)
    R = compute_ctype(dtypes.COMPLEX_PART[dtype])
    cmp = ">" if op == "max" else "<"
    init = f"(({C})(({R}){'-' if op == 'max' else ''}INFINITY, ({R})0))"
    return f"""
/* a beats b: a is kept by lax.{op}(a, b) */
inline int netcl_lex_beats({C} a, {C} b) {{ return a.x == b.x ? a.y {cmp} b.y : a.x {cmp} b.x; }}

/* the summary (*tag, *v) of a chunk, with element e folded after it */
inline void netcl_lex_push(int* tag, {C}* v, const {C} e) {{
  if (e.x != e.x) {{ *tag = 1; *v = e; return; }}
  const int en = e.y != e.y;
  if (*tag == 0) {{ *tag = 2 + en; *v = e; }}
  else if (*tag == 1) {{ if (!netcl_lex_beats(*v, e)) *v = e; }}
  else if (e.x {cmp} (*v).x) {{ *tag = 2 + en; *v = e; }}
  else if (e.x == (*v).x) {{
    if (en) {{ *tag = 3; *v = e; }}
    else if (!((*v).y {cmp} e.y)) *v = e;
  }}
}}

/* the value folded so far, then a chunk of summary (tag, v) */
inline {C} netcl_lex_apply({C} acc, const int tag, const {C} v) {{
  if (tag == 1) return v;
  if (tag == 2) return netcl_lex_beats(acc, v) ? acc : v;
  if (tag == 3) return acc.x {cmp} v.x ? acc : v;
  return acc;
}}

/* x viewed as (A, K, B) from off; one work-item per output (a, b) */
__kernel void lex_final(__global {C}* out, __global const {C}* x, const long off,
                        const int K, const int B, const int n) {{
  const int i = get_global_id(0);
  if (i >= n) return;
  const int a = i / B, b = i - a * B;
  __global const {C}* p = x + off + (long)a * K * B + b;
  if (K == 1) {{ out[i] = p[0]; return; }}
  {C} acc = {init};
  for (int k = 0; k < K; ++k) {{
    const {C} e = p[(long)k * B];
    if (!netcl_lex_beats(acc, e)) acc = e;
  }}
  out[i] = acc;
}}

/* pass 1: the summary of chunk g of output (a, b); work-item (a * G + g) * B + b */
__kernel void lex_part(__global {C}* vals, __global int* tags, __global const {C}* x,
                       const long off, const int K, const int B, const int G, const int chunk,
                       const int n) {{
  const int i = get_global_id(0);
  if (i >= n) return;
  const int b = i % B, ag = i / B, g = ag % G, a = ag / G;
  __global const {C}* p = x + off + (long)a * K * B + b;
  const int end = min(K, (g + 1) * chunk);
  int tag = 0;
  {C} v = {init};
  for (int k = g * chunk; k < end; ++k) netcl_lex_push(&tag, &v, p[(long)k * B]);
  vals[i] = v;
  tags[i] = tag;
}}

/* pass 2: the identity, then each chunk's summary in order; one work-item per output */
__kernel void lex_fold(__global {C}* out, __global const {C}* vals, __global const int* tags,
                       const int G, const int B, const int n) {{
  const int i = get_global_id(0);
  if (i >= n) return;
  const int a = i / B, b = i - a * B;
  {C} acc = {init};
  for (int g = 0; g < G; ++g) {{
    const int j = (a * G + g) * B + b;
    acc = netcl_lex_apply(acc, tags[j], vals[j]);
  }}
  out[i] = acc;
}}
"""


def _blocks(x, reduced):
    """(perm, A, K, B): x's axes in the order the kernels read them (None: x's own, when x
    is dense and the reduced axes of size > 1 are consecutive) as (A, K, B). The fold's
    order is the logical row-major order of the reduced axes, so transposed or reversed
    views are copied (the real reductions read them in memory order instead)."""
    if x.size == 0:         # (nothing is read: every output is the identity)
        return None, prod(x.shape[d] for d in range(x.ndim) if d not in reduced), 0, 1
    big = [d for d in range(x.ndim) if x.shape[d] != 1]
    marks = [d in reduced for d in big]
    starts = sum(1 for i, m in enumerate(marks) if m and (i == 0 or not marks[i - 1]))
    K = prod(x.shape[d] for d in reduced)
    if x._contig and starts <= 1:
        first = marks.index(True) if True in marks else len(big)
        A = prod(x.shape[d] for d in big[:first])
        return None, A, K, prod(x.shape) // max(A * K, 1) if K else 1
    perm = tuple(d for d in range(x.ndim) if d not in reduced) + tuple(sorted(reduced))
    return perm, prod(x.shape) // max(K, 1) if K else 1, K, 1


def launcher(op):
    """make_launcher of reduce_max / reduce_min for complex operands."""
    def make_launcher(device, args, params, out_aval):
        (x,) = args
        reduced = set(params["axes"])
        n = prod(out_aval.shape)
        if n == 0:
            return lambda x: Array.empty(device, out_aval.shape, out_aval.dtype,
                                         out_aval.weak_type)
        dtype, queue = x.dtype, device.queue
        perm, A, K, B = _blocks(x, reduced)
        src = _source(op, dtype)
        cpu = device.target.reduction_style == "cpu"
        # enough work-items to fill the device, each folding a chunk of >= 64 elements
        target = device.capabilities.compute_units * (32 if cpu else 512)
        G = 1 if n >= target or K < 128 else min(-(-K // 64), -(-target // n))
        chunk = -(-K // G)
        G = -(-K // chunk) if K else 1

        def dense(x):
            if perm is None:
                return x, x.offset
            from .launch import _copy_dense
            shape = tuple(x.shape[d] for d in perm)
            return _copy_dense(x._view(shape, tuple(x.strides[d] for d in perm), x.offset)), 0

        def new():
            return Array.empty(device, out_aval.shape, dtype, out_aval.weak_type)

        if G == 1:
            k1 = kernel(device, src, "lex_final")
            for i, v in ((3, np.int32(K)), (4, np.int32(B)), (5, np.int32(n))):
                k1.set_arg(i, v)
            g1 = grid_1d(device, n)

            def launch(x):
                x, off = dense(x)
                out = new()
                k1.set_arg(0, out._buf)
                k1.set_arg(1, x._buf)
                k1.set_arg(2, np.int64(off))
                commands.launch(queue, k1, *g1)
                return out
            return launch
        m = A * G * B
        kp, kf = kernel(device, src, "lex_part"), kernel(device, src, "lex_fold")
        for i, v in ((4, np.int32(K)), (5, np.int32(B)), (6, np.int32(G)), (7, np.int32(chunk)),
                     (8, np.int32(m))):
            kp.set_arg(i, v)
        for i, v in ((3, np.int32(G)), (4, np.int32(B)), (5, np.int32(n))):
            kf.set_arg(i, v)
        gp, gf = grid_1d(device, m), grid_1d(device, n)

        def launch2(x):
            x, off = dense(x)
            out = new()
            vals = Array.empty(device, (m,), dtype)
            tags = Array.empty(device, (m,), dtypes.int32)
            kp.set_arg(0, vals._buf)
            kp.set_arg(1, tags._buf)
            kp.set_arg(2, x._buf)
            kp.set_arg(3, np.int64(off))
            commands.launch(queue, kp, *gp)
            kf.set_arg(0, out._buf)
            kf.set_arg(1, vals._buf)
            kf.set_arg(2, tags._buf)
            commands.launch(queue, kf, *gf)
            return out
        return launch2
    return make_launcher
