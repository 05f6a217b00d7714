"""Device kernels of linalg_host's cholesky and triangular_solve primitives (lu, solve and
slogdet: linalg_device_lu; qr: linalg_device_qr, with its own policy; through `launcher`
here).

The primitives, their rules and the host path stay in `linalg_host`; its launchers ask
`launcher(name, device, args, params, out)` here first and run the host's LAPACK where this
answers None (float16/integers never reach here; float64 on devices without fp64, complex64
and complex128 (the kernels are real only: LAPACK's complex routines run them), primitives
without kernels, and the few single mid-sized matrices where the host wins: HOST_WINS).

Matrices are read through (batch, row, column) strides passed as kernel arguments, so
transposed and sliced operands need no copy, and a triangular solve with op(A) upper (upper
and not transposed, or lower and transposed) runs the lower kernel over A, b and x read
backwards (negative strides). Sizes are arguments too: one program per kernel and dtype.

cholesky (reads the lower triangle, writes L with zeros above; a matrix that is not positive
definite gives NaN in its whole lower triangle, as the host path's `_cholesky_ref`):
  n <= SMALL_N   one launch. CPU targets: a work-item factors 8 matrices at once (4 in
                 float64), one per vector lane, their triangles packed in local memory, row
                 by row (Cholesky-Banachiewicz: every inner loop a dot of two rows). GPU
                 targets: a work-group per matrix, the matrix in local memory, right-looking
                 column by column.
  n >  SMALL_N   left-looking blocked, BLOCK columns at a time: C = A[k:, :k] A[k:k+b, :k]^T
                 (the GEMM of dot_general, batched), then the diagonal block factored by the
                 small kernel from A - C, then the panel below it solved against that block
                 by the triangular kernel; a last launch writes NaN where a block failed.
triangular_solve (left side; x = op(A)^-1 b; an exact zero on a diagonal that is read gives
NaN in that matrix's whole x, as the host path's LU solve refuses it):
  n <= SMALL_N   one launch: a work-item per (matrix, group of columns of b), forward
                 substitution.
  n >  SMALL_N   blocked by BLOCK rows: X_i = op(A)_ii^-1 (B_i - op(A)[i, done] X[done]), the
                 product by dot_general; a first launch finds singular matrices, a last one
                 writes their NaNs.

>>> netcl.numpy.linalg.cholesky(a)      # a (..., n, n) float32 on an OpenCL device: here
"""
import numpy as np
import pyopencl as cl

from ..core import commands, dtypes
from ..core.array import Array
from ..core.kernels import kernel, storage_ctype
from ..core.launch import Kernel, Launch
from ..core.shapes import prod

# Matrices of at most SMALL_N rows are factored (solved) by one launch of the small kernel;
# larger ones blocked, BLOCK columns (rows) at a time. SMALL_N is also the local-memory
# matrix of the GPU Cholesky kernel (64 x 64 doubles: 32 KB).
SMALL_N = 64
BLOCK = 64

# Where the host path (NumPy's LAPACK, plus the transfers) is faster, measured with
# benchmarks/linalg_bench.py (float32, interleaved medians; host time / device time):
# - CPU devices (PoCL, 2 shared AMD EPYC cores: LAPACK on the same cores, the transfers two
#   copies): the device kernels win every batch of matrices of n <= 64 (1.4-10x) and every
#   triangular solve (the host's is an LU solve: 1.2-60x); the blocked Cholesky wins from
#   n = 384 (batch 1) or batch 16 (n = 128); a few matrices of 96 < n <= 320: 0.5-0.9x.
# - GPUs (H100, host LAPACK on 64 cores over PCIe): batches win 2-1200x; one matrix alone
#   loses where a work-group's serial columns (Cholesky, 64 <= n <= 512: 0.4-1.0x) or one
#   work-item's substitution (solve, n = 64: 0.75x) is all the device does.
# Each entry: (n above, n at most, batch below) go to the host, per kernel family.
# - lu, solve, slogdet (PoCL as above; linalg_device_lu): the device wins batches of n <= 64
#   (1.0-7x) and n >= 256 (1.7-16x); solve of a few matrices of 100 < n <= 128 and slogdet
#   of n = 128 at every batch measured (1-256) lose (0.5-0.9x), and so does solve of many
#   matrices of n = 64 (batch 256: 0.6x), which this table cannot express. GPUs: unmeasured
#   (no entry: the device everywhere).
HOST_WINS = {
    ("cpu", "cholesky"): (96, 320, 4),
    ("cpu", "solve"): (100, 128, 16),
    ("cpu", "slogdet"): (100, 128, 512),
    ("gpu", "cholesky"): (48, 512, 2),
    ("gpu", "triangular_solve"): (48, 64, 2),
}
# columns of b one work-item of the CPU triangular kernel solves (A's rows read once for all)
CPU_SOLVE_COLUMNS = 8

_FLOATS = (dtypes.float32, dtypes.float64)


# ---- kernel sources (one per dtype and family) ------------------------------------------------

def _chol_cpu_source(T):
    """CPU targets: a work-item factors V matrices at once, one per vector lane (V = 8
    floats, 4 doubles: 256-bit vectors), their lower triangles packed in local memory; lanes
    past the batch factor the identity."""
    V = 8 if T == "float" else 4
    I = "int" if T == "float" else "long"
    NT = SMALL_N * (SMALL_N + 1) // 2
    return f"""
__kernel void netcl_chol_cpu(
    __global const {T}* src, const long s_off, const long s_bs, const long s_rs, const long s_cs,
    __global const {T}* c, const long c_off, const long c_bs, const long c_rs, const int has_c,
    __global {T}* dst, const long d_off, const long d_bs, const long d_rs,
    __global int* info, const int n, const int zero_to, const int batch, const int walk,
    const int final) {{
  __local {T}{V} a[{NT}];
  const int groups = (batch + {V - 1}) / {V};
  const int g0 = (int)get_global_id(0) * walk;
  const int g1 = min(g0 + walk, groups);
  for (int g = g0; g < g1; g++) {{
    const int bb = g * {V};
    for (int i = 0; i < n; i++) {{
      for (int j = 0; j <= i; j++) {{
        {T}{V} v;
        for (int q = 0; q < {V}; q++) {{
          const long b = bb + q;
          {T} s = i == j ? 1 : 0;
          if (b < batch) {{
            s = src[s_off + b * s_bs + i * s_rs + j * s_cs];
            if (has_c) s -= c[c_off + b * c_bs + i * c_rs + j];
          }}
          v[q] = s;
        }}
        a[i * (i + 1) / 2 + j] = v;
      }}
    }}
    {I}{V} bad = 0;
    for (int i = 0; i < n; i++) {{
      const int ri = i * (i + 1) / 2;
      for (int j = 0; j <= i; j++) {{
        const int rj = j * (j + 1) / 2;
        {T}{V} s0 = a[ri + j], s1 = 0;
        int l = 0;
        for (; l + 2 <= j; l += 2) {{
          s0 -= a[ri + l] * a[rj + l];
          s1 -= a[ri + l + 1] * a[rj + l + 1];
        }}
        if (l < j) s0 -= a[ri + l] * a[rj + l];
        s0 += s1;
        if (j < i) {{
          a[ri + j] = s0 / a[rj + j];
        }} else {{
          bad |= ~(s0 > ({T}{V})0);
          a[ri + i] = sqrt(s0);
        }}
      }}
    }}
    for (int q = 0; q < {V}; q++) {{
      const long b = bb + q;
      if (b >= batch) break;
      const int fail = bad[q] != 0;
      __global {T}* D = dst + d_off + b * d_bs;
      for (int i = 0; i < n; i++) {{
        const int ri = i * (i + 1) / 2;
        for (int j = 0; j <= i; j++) D[i * d_rs + j] = final && fail ? NAN : a[ri + j][q];
        for (int j = i + 1; j < zero_to; j++) D[i * d_rs + j] = 0;
      }}
      if (!final && fail) info[b] = 1;
    }}
  }}
}}
"""


def _chol_gpu_source(T):
    return f"""
__kernel void netcl_chol_gpu(
    __global const {T}* src, const long s_off, const long s_bs, const long s_rs, const long s_cs,
    __global const {T}* c, const long c_off, const long c_bs, const long c_rs, const int has_c,
    __global {T}* dst, const long d_off, const long d_bs, const long d_rs,
    __global int* info, const int n, const int zero_to, const int batch, const int walk,
    const int final) {{
  __local {T} a[{SMALL_N} * {SMALL_N}];
  __local int bad;
  const int b = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
  __global const {T}* S = src + s_off + b * s_bs;
  __global const {T}* C = c + c_off + b * c_bs;
  __global {T}* D = dst + d_off + b * d_bs;
  if (lid == 0) bad = 0;
  for (int e = lid; e < n * n; e += ls) {{
    const int i = e / n, j = e - i * n;
    if (j <= i) {{
      {T} s = S[i * s_rs + j * s_cs];
      if (has_c) s -= C[i * c_rs + j];
      a[i * {SMALL_N} + j] = s;
    }}
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < n; j++) {{
    const {T} d = a[j * {SMALL_N} + j];
    const {T} r = sqrt(d);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {{
      if (!(d > 0)) bad = 1;
      a[j * {SMALL_N} + j] = r;
    }}
    for (int i = j + 1 + lid; i < n; i += ls) a[i * {SMALL_N} + j] /= r;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int m = n - j - 1;
    for (int e = lid; e < m * m; e += ls) {{
      const int i = j + 1 + e / m, k = j + 1 + e % m;
      if (k <= i) a[i * {SMALL_N} + k] -= a[i * {SMALL_N} + j] * a[k * {SMALL_N} + j];
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  const int nan_out = final && bad;
  for (int e = lid; e < n * zero_to; e += ls) {{
    const int i = e / zero_to, j = e - i * zero_to;
    D[i * d_rs + j] = j > i ? 0 : (nan_out ? NAN : a[i * {SMALL_N} + j]);
  }}
  if (!final && lid == 0 && bad) info[b] = 1;
}}
"""


def _trsm_source(T, cols):
    """x = L^-1 (b - c) for lower L (a unit diagonal where `unit`), a work-item per (matrix,
    group of `cols` columns); every operand through (batch, row, column) strides."""
    return f"""
#define NC {cols}
__kernel void netcl_trsm(
    __global const {T}* a, const long a_off, const long a_bs, const long a_rs, const long a_cs,
    __global const {T}* bb, const long b_off, const long b_bs, const long b_rs, const long b_cs,
    __global const {T}* c, const long c_off, const long c_bs, const long c_rs, const long c_cs,
    const int has_c,
    __global {T}* x, const long x_off, const long x_bs, const long x_rs, const long x_cs,
    __global const int* info, const int use_info,
    const int n, const int k, const int groups, const long total, const int walk,
    const int unit, const int check) {{
  const long t0 = (long)get_global_id(0) * walk;
  const long t1 = min(t0 + walk, total);
  for (long t = t0; t < t1; t++) {{
    const long b = t / groups;
    const int c0 = (int)(t - b * groups) * NC;
    const int nc = min(NC, k - c0);
    __global const {T}* A = a + a_off + b * a_bs;
    __global const {T}* B = bb + b_off + b * b_bs + c0 * b_cs;
    __global const {T}* Cm = c + c_off + b * c_bs + c0 * c_cs;
    __global {T}* X = x + x_off + b * x_bs + c0 * x_cs;
    int sing = use_info ? info[b] : 0;
    if (check && !unit)
      for (int i = 0; i < n; i++) if (A[i * (a_rs + a_cs)] == 0) sing = 1;
    for (int i = 0; i < n; i++) {{
      {T} s[NC];
      for (int q = 0; q < NC; q++) if (q < nc) s[q] = B[i * b_rs + q * b_cs];
      if (has_c)
        for (int q = 0; q < NC; q++) if (q < nc) s[q] -= Cm[i * c_rs + q * c_cs];
      for (int j = 0; j < i; j++) {{
        const {T} l = A[i * a_rs + j * a_cs];
        for (int q = 0; q < NC; q++) if (q < nc) s[q] -= l * X[j * x_rs + q * x_cs];
      }}
      const {T} d = unit ? ({T})1 : A[i * (a_rs + a_cs)];
      for (int q = 0; q < NC; q++) if (q < nc) X[i * x_rs + q * x_cs] = s[q] / d;
    }}
    if (sing)
      for (int i = 0; i < n; i++)
        for (int q = 0; q < nc; q++) X[i * x_rs + q * x_cs] = NAN;
  }}
}}
"""


def _finish_source(T):
    """NaN where info says a matrix failed: the lower triangle (cholesky) or all of it."""
    return f"""
__kernel void netcl_linalg_nan(__global {T}* x, const long rows, const long cols,
                               __global const int* info, const int tril, const long total) {{
  const long g = get_global_id(0);
  if (g >= total) return;
  const long per = rows * cols;
  const long b = g / per;
  if (!info[b]) return;
  const long e = g - b * per, i = e / cols, j = e - i * cols;
  if (!tril || j <= i) x[g] = NAN;
}}
"""


def _singular_source(T):
    """info[b] = 1 where matrix b of op(A) has an exact zero on its diagonal."""
    return f"""
__kernel void netcl_linalg_singular(__global const {T}* a, const long a_off, const long a_bs,
                                    const long a_d, const int n, const int batch,
                                    __global int* info) {{
  const int b = get_global_id(0);
  if (b >= batch) return;
  int z = 0;
  for (int i = 0; i < n; i++) if (a[a_off + b * a_bs + i * a_d] == 0) z = 1;
  info[b] = z;
}}
"""


# ---- layouts ----------------------------------------------------------------------------------

def _strides3(x):
    """(batch_stride, row_stride, col_stride) reading x (..., m, n) as a stack of matrices
    (element strides), or None where its batch dimensions do not merge into one stride."""
    shape, strides = tuple(x.shape), tuple(x.strides)
    batch = [d for d in range(len(shape) - 2) if shape[d] != 1]
    bs = 0
    if batch:
        for a, b in zip(batch, batch[1:]):
            if strides[a] != strides[b] * shape[b]:
                return None
        bs = strides[batch[-1]]
    return bs, strides[-2], strides[-1]


def _walk(device, units):
    """Units per work-item on CPU targets: a few work-groups per compute unit."""
    cu = max(1, device.capabilities.compute_units)
    return max(1, -(-units // (8 * cu)))


class _Step:
    """One kernel launch whose scalar arguments are set once (setting an argument costs
    ~5 us in PyOpenCL): `args` holds values, or names of the buffers passed per call."""

    def __init__(self, device, source, name, gsize, lsize, args):
        self.k = k = kernel(device, source, name)
        self.queue, self.gsize, self.lsize = device.queue, gsize, lsize
        self.record = Kernel(name, source)
        self.slots = []
        for i, v in enumerate(args):
            if isinstance(v, str):
                self.slots.append((i, v))
            else:
                k.set_arg(i, v)

    def __call__(self, bufs):
        k = self.k
        for i, name in self.slots:
            k.set_arg(i, bufs[name])
        commands.launch(self.queue, k, self.gsize, self.lsize)


_L = np.int64
_I = np.int32


def _operand(x, name):
    """(run-time preparer, offset, (bs, rs, cs)) of operand x: the array itself where its
    batch dimensions merge, else a dense copy (offset 0)."""
    s = _strides3(x)
    if s is not None:
        return (lambda y: y), x.offset, s
    n, m = x.shape[-2:]
    return (lambda y: y._dense()), 0, (n * m, m, 1)


# ---- cholesky ---------------------------------------------------------------------------------

def _chol_step(device, dtype, batch, n, zero_to, final, src, c, dst, info):
    """The small Cholesky kernel over `batch` matrices: src (name, offset, bs, rs, cs), c None
    or (name, offset, bs, rs), dst (name, offset, bs, rs), info a buffer name."""
    T, V = storage_ctype(dtype), 8 if dtype == dtypes.float32 else 4
    if device.target.kernel_family == "cpu":
        source, name = _chol_cpu_source(T), "netcl_chol_cpu"
        walk = _walk(device, -(-batch // V))
        gsize, lsize = (-(-(-(-batch // V)) // walk),), (1,)
    else:
        source, name = _chol_gpu_source(T), "netcl_chol_gpu"
        walk, gsize, lsize = 1, (batch * 64,), (64,)
    cargs = (src[0], _L(0), _L(0), _L(0), _I(0)) if c is None else \
        (c[0], _L(c[1]), _L(c[2]), _L(c[3]), _I(1))
    args = (src[0], _L(src[1]), _L(src[2]), _L(src[3]), _L(src[4]), *cargs,
            dst[0], _L(dst[1]), _L(dst[2]), _L(dst[3]),
            info, _I(n), _I(zero_to), _I(batch), _I(walk), _I(final))
    return _Step(device, source, name, gsize, lsize, args)


def _cholesky_launcher(device, a, out):
    shape, dtype = tuple(out.shape), out.dtype
    n, batch = shape[-1], prod(shape[:-2])
    if n == 0 or batch == 0:
        return Launch(lambda x: Array.empty(device, shape, dtype))
    prep, off, (sb, sr, sc) = _operand(a, "a")
    if n <= SMALL_N:
        step = _chol_step(device, dtype, batch, n, n, 1, ("x", off, sb, sr, sc), None,
                          ("o", 0, n * n, n), "o")

        def run(x):
            x = prep(x)
            o = Array.empty(device, shape, dtype)
            step({"x": x._buf, "o": o._buf})
            return o
        return Launch(run, kernels=(step.record,))

    dot = _dot(device)
    steps = []
    for k in range(0, n, BLOCK):
        nb, m = min(BLOCK, n - k), n - k
        c = None if k == 0 else ("c", 0, m * nb, nb)
        # the diagonal block from A - C, C = A[k:, :k] A[k:k+nb, :k]^T, then the rows below
        # it: X L_kk^T = A - C (a lower solve whose columns are the panel's rows)
        chol = _chol_step(device, dtype, batch, nb, n - k, 0,
                          ("x", off + k * (sr + sc), sb, sr, sc), c,
                          ("o", k * (n + 1), n * n, n), "info")
        panel = None
        if m > nb:
            panel = _trsm_step(device, dtype, batch, nb, m - nb, False, False,
                               a=("o", k * (n + 1), n * n, n, 1),
                               b=("x", off + k * (sr + sc) + nb * sr, sb, sc, sr),
                               c=None if k == 0 else ("c", nb * nb, m * nb, 1, nb),
                               x=("o", (k + nb) * n + k, n * n, 1, n))
        steps.append((k, nb, m, chol, panel))
    nan = _nan_step(device, dtype, batch, n, n, True, "o")

    def run(x):
        x = prep(x)
        o = Array.empty(device, shape, dtype)
        info = Array.empty(device, (batch,), dtypes.int32)
        cl.enqueue_fill_buffer(device.queue, info._buf, np.int32(0), 0, 4 * batch)
        bufs = {"x": x._buf, "o": o._buf, "info": info._buf}
        for k, nb, m, chol, panel in steps:
            if k:       # the finished columns of L times the block's rows of them
                lhs = o._view((batch, m, k), (n * n, n, 1), k * n)
                rhs = o._view((batch, nb, k), (n * n, n, 1), k * n)
                c = dot(lhs, rhs, transpose_rhs=True)        # (batch, m, nb)
                bufs["c"] = c._buf
            chol(bufs)
            if panel is not None:
                panel(bufs)
        nan(bufs)
        return o
    return Launch(run)


def _nan_step(device, dtype, batch, rows, cols, tril, name):
    wg = device.work_group
    total = batch * rows * cols
    return _Step(device, _finish_source(storage_ctype(dtype)), "netcl_linalg_nan",
                 (-(-total // wg) * wg,), (wg,),
                 (name, _L(rows), _L(cols), "info", _I(tril), _L(total)))


# ---- triangular solve -------------------------------------------------------------------------

def _trsm_step(device, dtype, batch, n, k, unit, check, a, b, c, x):
    """x = L^-1 (b - c) for lower L over `batch` systems of k columns; a, b, c, x: (buffer
    name, offset, bs, rs, cs), c may be None; check: NaN where L has a zero diagonal."""
    T = storage_ctype(dtype)
    cols = CPU_SOLVE_COLUMNS if device.target.kernel_family == "cpu" else 1
    groups = -(-k // cols)
    total = batch * groups
    if device.target.kernel_family == "cpu":
        walk = _walk(device, total)
        gsize, lsize = (-(-total // walk),), (1,)
    else:
        walk, wg = 1, device.work_group
        gsize, lsize = (-(-total // wg) * wg,), (wg,)
    cargs = (b[0], _L(0), _L(0), _L(0), _L(0), _I(0)) if c is None else \
        (c[0], _L(c[1]), _L(c[2]), _L(c[3]), _L(c[4]), _I(1))
    args = (a[0], _L(a[1]), _L(a[2]), _L(a[3]), _L(a[4]),
            b[0], _L(b[1]), _L(b[2]), _L(b[3]), _L(b[4]), *cargs,
            x[0], _L(x[1]), _L(x[2]), _L(x[3]), _L(x[4]),
            x[0], _I(0), _I(n), _I(k), _I(groups), _L(total), _I(walk),
            _I(unit), _I(check))
    return _Step(device, _trsm_source(T, cols), "netcl_trsm", gsize, lsize, args)


def _triangular_solve_launcher(device, a, b, out, lower, transpose_a, unit_diagonal):
    shape, dtype = tuple(out.shape), out.dtype
    n, k, batch = shape[-2], shape[-1], prod(shape[:-2])
    if n == 0 or k == 0 or batch == 0:
        return Launch(lambda a, b: Array.empty(device, shape, dtype))
    prep_a, a_off, (ab, ar, ac) = _operand(a, "a")
    prep_b, b_off, (bb, br, bc) = _operand(b, "b")
    if transpose_a:
        ar, ac = ac, ar                     # op(A)'s strides
    forward = lower != transpose_a          # op(A) lower: forward substitution
    unit = bool(unit_diagonal)

    def operands(s, e, c):
        """a, b, c, x of the solve of rows s..e (c: C's name or None), read backwards where
        op(A) is upper."""
        nb = e - s
        if forward:
            return dict(a=("a", a_off + s * (ar + ac), ab, ar, ac),
                        b=("b", b_off + s * br, bb, br, bc),
                        c=None if c is None else (c, 0, nb * k, k, 1),
                        x=("x", s * k, n * k, k, 1))
        last = e - 1
        return dict(a=("a", a_off + last * (ar + ac), ab, -ar, -ac),
                    b=("b", b_off + last * br, bb, -br, bc),
                    c=None if c is None else (c, (nb - 1) * k, nb * k, -k, 1),
                    x=("x", last * k, n * k, -k, 1))

    if n <= SMALL_N:
        step = _trsm_step(device, dtype, batch, n, k, unit, True, **operands(0, n, None))

        def run(a, b):
            a, b = prep_a(a), prep_b(b)
            x = Array.empty(device, shape, dtype)
            step({"a": a._buf, "b": b._buf, "x": x._buf})
            return x
        return Launch(run, kernels=(step.record,))

    dot = _dot(device)
    T, wg = storage_ctype(dtype), device.work_group
    single = None if unit else _Step(
        device, _singular_source(T), "netcl_linalg_singular", (-(-batch // wg) * wg,), (wg,),
        ("a", _L(a_off), _L(ab), _L(ar + ac), _I(n), _I(batch), "info"))
    nan = _nan_step(device, dtype, batch, n, k, False, "x")
    blocks = [(s, min(s + BLOCK, n)) for s in range(0, n, BLOCK)]
    steps = []
    for s, e in (blocks if forward else blocks[::-1]):
        done = (0, s) if forward else (e, n)      # the rows of x already solved
        c = "c" if done[1] > done[0] else None
        steps.append((s, e, done, _trsm_step(device, dtype, batch, e - s, k, unit, False,
                                             **operands(s, e, c))))

    def run(a, b):
        a, b = prep_a(a), prep_b(b)
        x = Array.empty(device, shape, dtype)
        info = Array.empty(device, (batch,), dtypes.int32)
        bufs = {"a": a._buf, "b": b._buf, "x": x._buf, "info": info._buf}
        if single is None:
            cl.enqueue_fill_buffer(device.queue, info._buf, np.int32(0), 0, 4 * batch)
        else:
            single(bufs)
        for s, e, done, step in steps:
            w = done[1] - done[0]
            if w:
                lhs = a._view((batch, e - s, w), (ab, ar, ac), a_off + s * ar + done[0] * ac)
                rhs = x._view((batch, w, k), (n * k, k, 1), done[0] * k)
                c = dot(lhs, rhs, transpose_rhs=False)     # (batch, nb, k), alive until
                bufs["c"] = c._buf                         # its reader is enqueued
            step(bufs)
        nan(bufs)
        return x
    return Launch(run)


# ---- the product of the blocked algorithms: dot_general, eagerly --------------------------

def _dot(device):
    from ..core.eval import eval_interpreter
    from .linalg import dot_general_p
    process = eval_interpreter.process
    # "highest": a factorization is not computed in TF32 on tensor cores
    nt = dict(dimension_numbers=(((2,), (2,)), ((0,), (0,))), precision="highest",
              preferred_element_type=None)
    nn = dict(dimension_numbers=(((2,), (1,)), ((0,), (0,))), precision="highest",
              preferred_element_type=None)

    def dot(lhs, rhs, transpose_rhs):
        return process(dot_general_p, (lhs, rhs), nt if transpose_rhs else nn)
    return dot


# ---- policy and entry point -------------------------------------------------------------------

def _covered(device, dtype):
    if device.is_numpy or dtype not in _FLOATS:
        return False
    if dtype == dtypes.float64 and not device.capabilities.fp64:
        return False
    # the Cholesky kernels' local memory: a packed triangle of 256-bit vectors (CPU), a
    # SMALL_N x SMALL_N matrix (GPU)
    need = (SMALL_N * (SMALL_N + 1) // 2 * 32 if device.target.kernel_family == "cpu" else
            SMALL_N * SMALL_N * dtype.itemsize + 16)
    return device.capabilities.local_mem_size >= need


def _prefer_host(device, name, n, batch):
    """Where the host's LAPACK is faster (HOST_WINS): a few mid-sized matrices."""
    rule = HOST_WINS.get((device.target.kernel_family, name))
    if rule is None:
        return False
    low, high, few = rule
    return low < n <= high and batch < few


def launcher(name, device, args, params, out):
    """The device Launch of primitive `name` for these arguments, or None (the host path)."""
    if name == "cholesky":
        (a,) = args
        if not _covered(device, a.dtype):
            return None
        if _prefer_host(device, name, a.shape[-1], prod(a.shape[:-2])):
            return None
        return _cholesky_launcher(device, a, out)
    if name == "triangular_solve":
        a, b = args
        if not _covered(device, a.dtype):
            return None
        if _prefer_host(device, name, a.shape[-1], prod(a.shape[:-2])):
            return None
        return _triangular_solve_launcher(device, a, b, out, **params)
    if name in ("lu", "solve", "slogdet"):
        from . import linalg_device_lu as ldl
        a = args[0]
        if not _covered(device, a.dtype):
            return None
        if _prefer_host(device, name, a.shape[-1], prod(a.shape[:-2])):
            return None
        if name == "lu":
            return ldl.lu_launcher(device, a, tuple(a.shape), a.dtype)
        if name == "solve":
            return ldl.solve_launcher(device, a, args[1], out)
        return ldl.slogdet_launcher(device, a, out)
    if name == "qr":
        from . import linalg_device_qr      # (its own coverage and HOST_WINS)
        return linalg_device_qr.launcher(device, args[0])
    return None
