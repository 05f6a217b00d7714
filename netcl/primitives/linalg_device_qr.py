"""Device Householder QR of linalg_host's qr primitive (real float32, float64 where the device
has fp64): `linalg_device.launcher` hands "qr" here; None sends it to the host's LAPACK.

The result is LAPACK's, dgeqrf then dorgqr (np.linalg.qr's reduced mode): column j's
reflector H_j = I - tau_j v_j v_j^T (v_j[j] = 1) maps x = A[j:, j] to beta e_1 with
beta = -sign(alpha) ||x||, alpha = x[0], tau = (beta - alpha) / beta, v = x / (alpha - beta)
below the diagonal; where x has nothing below its first entry H_j = I (tau = 0, beta = alpha).
R's diagonal is that beta, so its signs (and Q's columns) are LAPACK's, and results agree
with the host path to rounding. Q = H_0 H_1 ... H_{k-1} I[:, :k] is accumulated backwards
over the reflectors as dorgqr does. Norms are sums of squares, taken again scaled where they
lose range (_REFLECTOR), so tiny and huge matrices factor as LAPACK's. NaN or inf in gives
NaN out (in that matrix only); no loop depends on a value, so nothing hangs.

  one launch       m, n <= SMALL_N (GPU targets) or CPU_LANES_N (CPU targets): both factors
                   from one kernel. CPU targets: a work-item factors 8 matrices at once (4 in
                   float64), one per vector lane, in local memory (unblocked dgeqr2, then
                   dorg2r in place over the reflectors; every pass walks rows). GPU targets:
                   a work-group per matrix, the matrix in local memory, the same steps with
                   the work-items across rows, columns or elements.
  larger           blocked by QR_BLOCK columns (the compact WY form, dgeqrf/dorgqr's):
                   a panel kernel factors the block's columns in global memory (a
                   work-group per matrix; its work-items split the rows) and writes the
                   block's V (unit lower trapezoidal) and T (H_k0 ... H_k0+b-1 =
                   I - V T V^T); the columns to its right are updated as
                   A2 -= V (T^T (V^T A2)), three products of dot_general and a
                   subtraction. Q is formed backwards block by block:
                   Q2 -= V (T (V^T Q2)) for the columns already formed, and the block's
                   own columns E - V (T V1^T).

>>> netcl.numpy.linalg.qr(a)        # a (..., m, n) float32 on an OpenCL device: here
"""
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.kernels import storage_ctype
from ..core.launch import Launch
from ..core.shapes import prod
from . import linalg_device as ld
from .linalg_device import SMALL_N, _I, _L, _Step, _operand

# columns of one panel of the blocked algorithm (the k of its products): CPU targets, where
# a panel is one work-item's loop, and GPU targets (its partial sums: a work-group's local
# memory, GPU_GROUP x block)
QR_BLOCK = {"cpu": 64, "gpu": 32}
# CPU targets: matrices of up to CPU_LANES_N rows and columns take the one-launch kernel (a
# vector lane per matrix; local memory is the host's caches, 512 KB at 128): it beats the
# blocked algorithm's launches there even for a single matrix
CPU_LANES_N = 128
# work-items of a work-group of the GPU kernels (rows, columns or elements in parallel)
GPU_GROUP = 64

# Where the host path (LAPACK plus the transfers) is faster, measured with
# benchmarks/linalg_bench.py --op qr (float32, interleaved medians, host time / device time):
# - CPU devices (PoCL, 2 shared AMD EPYC cores): against OpenBLAS on one thread (its best
#   case on these cores; its default two threads were 5-500x slower than that whenever other
#   processes held the cores) the device wins every batch of 2 or more (1.0-15x) and single
#   matrices of n <= 64 (1.0-3x) and n >= 160 (1.0-6x); a single matrix of 64 < n <= 128
#   loses (0.5-0.7x).
# - GPUs (H200, host LAPACK on 64 cores over PCIe): batches win 1.1-440x, single matrices of
#   n <= 56 (1.1-3x) and n >= 112 (1.3-10x); a single matrix of 56 < n <= 96 loses
#   (0.6-1.0x): a work-group's serial columns, or the blocked algorithm's launches, are all
#   the device does.
# Each entry: (max(m, n) above, max(m, n) at most, batch below) go to the host.
HOST_WINS = {"cpu": ((64, 128, 2),), "gpu": ((56, 96, 2),)}


# ---- kernel sources ---------------------------------------------------------------------------

# The Householder vector of column x = (alpha, rest) (dlarfg), given s = ||rest||^2 as a plain
# sum of squares: tau, rest's scale (v = (rest * pre) * scale), and beta (R's diagonal
# entry). Where s lost range (entries whose squares underflow or overflow, exact zeros) the
# reflector is computed from alpha and rest scaled by a power of two `pre` (exact) that
# brings rest's largest entry near 1 (as LAPACK's dnrm2 scales, and dlarfg rescales a tiny
# beta), |(alpha, rest)| by hypot (dlapy2), so that tiny, huge and nearly rank-deficient
# matrices factor without inf or NaN and H stays orthogonal. `zero` (rest all zero: H = I,
# tau = 0) selects per lane (vectors) or per work-item. `col`: rest's entry of row i.
_REFLECTOR = """
    {TV} xs = sqrt(s), pre = 1, back = 1;
    const {IV} need = !(s >= ({TV})({LIM}_MIN / {LIM}_EPSILON) && s <= ({TV}){LIM}_MAX);
    if ({any}) {{
      {TV} amax = 0, s2 = 0;
      for (int i = j + 1; i < m; i++) amax = fmax(amax, fabs({col}));
      /* (alpha * pre stays below 2^120: a huge alpha over a tiny rest) */
      const {EV} e = max(clamp(ilogb(amax), -{EMAX}, {EMAX}),
                         clamp(ilogb(alpha), -{EMAX}, {EMAX}) - 120);
      const {TV} inv = ldexp(({TV})1, -e);
      for (int i = j + 1; i < m; i++) {{
        const {TV} y = {col} * inv;
        s2 += y * y;
      }}
      xs = {sel}(xs, sqrt(s2), need);
      pre = {sel}(pre, inv, need);
      back = {sel}(back, ldexp(({TV})1, e), need);
    }}
    const {TV} alpha_s = alpha * pre;
    const {TV} beta_s = -copysign(hypot(alpha_s, xs), alpha_s);
    const {IV} zero = xs == ({TV})0;
    const {TV} tau = {sel}((beta_s - alpha_s) / beta_s, ({TV})0, zero);
    const {TV} scale = {sel}(({TV})1 / (alpha_s - beta_s), ({TV})0, zero);
    const {TV} diag = {sel}(beta_s * back, alpha, zero);
"""


def _reflector(T, col, lanes=0):
    """The reflector's code for scalar type T, over `lanes` vector lanes (0: scalar)."""
    TV = f"{T}{lanes}" if lanes else T
    I = "int" if T == "float" else "long"
    return _REFLECTOR.format(TV=TV, IV=f"{I}{lanes}" if lanes else "int", col=col,
                             EV=f"int{lanes}" if lanes else "int",
                             LIM="FLT" if T == "float" else "DBL",
                             EMAX=126 if T == "float" else 1022,
                             any="any(need)" if lanes else "need",
                             sel="select" if lanes else "_sel")


def _small_cpu_source(T, cap):
    """A work-item factors V matrices at once, one per vector lane, each matrix an m x n
    array of vectors in local memory (row stride n); lanes past the batch factor zeros."""
    V = 8 if T == "float" else 4
    TV = f"{T}{V}"
    # H_j (tau, v = column j below the diagonal, 1 on it) applied to columns j+1..cend of
    # rows j..m, w = tau v^T A: both passes walk rows (contiguous), w's sums in local memory
    apply = """
#define APPLY(j, cend) do { \\
  for (int c = j + 1; c < cend; c++) w[c] = a[j * n + c]; \\
  for (int i = j + 1; i < m; i++) { \\
    const @TV@ v = a[i * n + j]; \\
    for (int c = j + 1; c < cend; c++) w[c] += v * a[i * n + c]; \\
  } \\
  for (int c = j + 1; c < cend; c++) { w[c] *= tau; a[j * n + c] -= w[c]; } \\
  for (int i = j + 1; i < m; i++) { \\
    const @TV@ v = a[i * n + j]; \\
    for (int c = j + 1; c < cend; c++) a[i * n + c] -= v * w[c]; \\
  } \\
} while (0)
""".replace("@TV@", TV)
    return apply + f"""
__kernel void netcl_qr_small_cpu(
    __global const {T}* src, const long s_off, const long s_bs, const long s_rs, const long s_cs,
    __global {T}* qo, __global {T}* ro, const int m, const int n, const int batch,
    const int walk) {{
  __local {TV} a[{cap * cap}];
  __local {TV} taus[{cap}], w[{cap}];
  const int k = min(m, n);
  const int groups = (batch + {V - 1}) / {V};
  const int g0 = (int)get_global_id(0) * walk, g1 = min(g0 + walk, groups);
  for (int g = g0; g < g1; g++) {{
    const int bb = g * {V};
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {{
        {TV} x;
        for (int q = 0; q < {V}; q++) {{
          const long b = bb + q;
          x[q] = b < batch ? src[s_off + b * s_bs + i * s_rs + j * s_cs] : 0;
        }}
        a[i * n + j] = x;
      }}
    for (int j = 0; j < k; j++) {{          /* dgeqr2 */
      {TV} s = 0;
      for (int i = j + 1; i < m; i++) s += a[i * n + j] * a[i * n + j];
      const {TV} alpha = a[j * n + j];
      {_reflector(T, 'a[i * n + j]', V)}
      a[j * n + j] = diag;
      taus[j] = tau;
      for (int i = j + 1; i < m; i++) a[i * n + j] = (a[i * n + j] * pre) * scale;
      APPLY(j, n);
    }}
    for (int q = 0; q < {V}; q++) {{
      const long b = bb + q;
      if (b >= batch) break;
      __global {T}* R = ro + b * k * n;
      for (int i = 0; i < k; i++)
        for (int j = 0; j < n; j++) R[i * n + j] = j >= i ? a[i * n + j][q] : 0;
    }}
    for (int j = k - 1; j >= 0; j--) {{     /* dorg2r: Q over the reflectors, in place */
      const {TV} tau = taus[j];
      APPLY(j, k);
      for (int i = j + 1; i < m; i++) a[i * n + j] *= -tau;
      a[j * n + j] = 1 - tau;
      for (int i = 0; i < j; i++) a[i * n + j] = 0;
    }}
    for (int q = 0; q < {V}; q++) {{
      const long b = bb + q;
      if (b >= batch) break;
      __global {T}* Q = qo + b * m * k;
      for (int i = 0; i < m; i++)
        for (int c = 0; c < k; c++) Q[i * k + c] = a[i * n + c][q];
    }}
  }}
}}
"""


_SCALAR_SELECT = "#define _sel(a, b, c) ((c) ? (b) : (a))\n"


def _small_gpu_source(T):
    """A work-group of GPU_GROUP work-items per matrix, the matrix in local memory."""
    G = GPU_GROUP
    # H_j applied to columns j+1..cend of rows j..m: w = tau v^T A a work-item per column,
    # then the update a work-item per element
    apply = """
#define APPLY(j, cend) do { \\
  for (int c = j + 1 + lid; c < cend; c += @G@) { \\
    @T@ s = a[j * n + c]; \\
    for (int i = j + 1; i < m; i++) s += a[i * n + j] * a[i * n + c]; \\
    w[c] = tau * s; \\
  } \\
  barrier(CLK_LOCAL_MEM_FENCE); \\
  const int nc = cend - j - 1; \\
  for (int e = lid; e < (m - j) * nc; e += @G@) { \\
    const int i = j + e / nc, c = j + 1 + e % nc; \\
    a[i * n + c] -= (i == j ? (@T@)1 : a[i * n + j]) * w[c]; \\
  } \\
  barrier(CLK_LOCAL_MEM_FENCE); \\
} while (0)
""".replace("@T@", T).replace("@G@", str(G))
    return _SCALAR_SELECT + apply + f"""
__kernel void netcl_qr_small_gpu(
    __global const {T}* src, const long s_off, const long s_bs, const long s_rs, const long s_cs,
    __global {T}* qo, __global {T}* ro, const int m, const int n, const int batch,
    const int walk) {{
  __local {T} a[{SMALL_N * SMALL_N}];
  __local {T} taus[{SMALL_N}], w[{SMALL_N}], red[{G}];
  const int lid = get_local_id(0);
  const long b = get_group_id(0);
  const int k = min(m, n);
  __global const {T}* S = src + s_off + b * s_bs;
  for (int e = lid; e < m * n; e += {G}) {{
    const int i = e / n, j = e - i * n;
    a[e] = S[i * s_rs + j * s_cs];
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = 0; j < k; j++) {{          /* dgeqr2 */
    {T} p = 0;
    for (int i = j + 1 + lid; i < m; i += {G}) p += a[i * n + j] * a[i * n + j];
    red[lid] = p;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {{
      {T} s = 0;
      for (int q = 0; q < {G}; q++) s += red[q];
      const {T} alpha = a[j * n + j];
      {_reflector(T, "a[i * n + j]")}
      a[j * n + j] = diag;
      taus[j] = tau;
      red[0] = pre;
      red[1] = scale;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    const {T} tau = taus[j], pre = red[0], scale = red[1];
    for (int i = j + 1 + lid; i < m; i += {G}) a[i * n + j] = (a[i * n + j] * pre) * scale;
    barrier(CLK_LOCAL_MEM_FENCE);
    APPLY(j, n);
  }}
  __global {T}* R = ro + b * k * n;
  for (int e = lid; e < k * n; e += {G}) {{
    const int i = e / n, j = e - i * n;
    R[e] = j >= i ? a[e] : 0;
  }}
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = k - 1; j >= 0; j--) {{     /* dorg2r: Q over the reflectors, in place */
    const {T} tau = taus[j];
    APPLY(j, k);
    for (int i = lid; i < m; i += {G})
      a[i * n + j] = i < j ? 0 : (i == j ? 1 - tau : -tau * a[i * n + j]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  __global {T}* Q = qo + b * m * k;
  for (int e = lid; e < m * k; e += {G}) {{
    const int i = e / k, c = e - i * k;
    Q[e] = a[i * n + c];
  }}
}}
"""


def _block(device):
    return QR_BLOCK["gpu" if _gpu(device) else "cpu"]


def _panel_source(T, group, NB):
    """Columns k0..k0+nb of rows k0..m of each dense (m, n) matrix factored in place (dgeqr2
    on the panel), then the block's V (mp x nb, mp = m - k0, unit diagonal, zeros above)
    and T (nb x nb upper, dlarft's forward columnwise recurrence) written out. `group`
    work-items split the rows: each sums its rows' share of v^T A for every column of the
    panel at once (one pass over each row), the shares are added in local memory."""
    G = group
    return _SCALAR_SELECT + f"""
__kernel void netcl_qr_panel(__global {T}* a, const int m, const int n, const int k0,
                             const int nb, __global {T}* vo, __global {T}* to,
                             const int batch, const int walk) {{
  __local {T} red[{G} * {NB}];
  __local {T} w[{NB}], coef[3];
  const int lid = get_local_id(0);
  const int g0 = get_group_id(0) * walk, g1 = min(g0 + walk, batch);
  const int mp = m - k0;
  for (int b = g0; b < g1; b++) {{
    __global {T}* A = a + (long)b * m * n + k0;      /* column k0 of row 0 */
    __global {T}* Vb = vo + (long)b * mp * nb;
    __global {T}* Tb = to + (long)b * nb * nb;
    for (int jj = 0; jj < nb; jj++) {{
      const int j = k0 + jj;
      {T} p = 0;
      for (int i = j + 1 + lid; i < m; i += {G}) p += A[i * n + jj] * A[i * n + jj];
      red[lid] = p;
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      if (lid == 0) {{
        {T} s = 0;
        for (int q = 0; q < {G}; q++) s += red[q];
        const {T} alpha = A[j * n + jj];
        {_reflector(T, "A[i * n + jj]")}
        A[j * n + jj] = diag;
        coef[0] = tau;
        coef[1] = pre;
        coef[2] = scale;
      }}
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      const {T} tau = coef[0], pre = coef[1], scale = coef[2];
      for (int i = j + 1 + lid; i < m; i += {G}) A[i * n + jj] = (A[i * n + jj] * pre) * scale;
      barrier(CLK_GLOBAL_MEM_FENCE);
      /* v^T A[:, c] for every column c of the panel: w for c > jj (times tau), dlarft's
         z = V^T v for c < jj */
      {T} part[{NB}];
      for (int c = 0; c < nb; c++) part[c] = 0;
      for (int i = j + 1 + lid; i < m; i += {G}) {{
        const {T} v = A[i * n + jj];
        for (int c = 0; c < nb; c++) part[c] += v * A[i * n + c];
      }}
      for (int c = 0; c < nb; c++) red[c * {G} + lid] = part[c];
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int c = lid; c < nb; c += {G}) {{
        {T} s = A[j * n + c];
        for (int q = 0; q < {G}; q++) s += red[c * {G} + q];
        w[c] = c > jj ? tau * s : s;
      }}
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int i = j + lid; i < m; i += {G}) {{
        const {T} v = i == j ? ({T})1 : A[i * n + jj];
        for (int c = jj + 1; c < nb; c++) A[i * n + c] -= v * w[c];
      }}
      for (int l = lid; l < nb; l += {G}) {{    /* T's column jj */
        {T} s = 0;
        for (int q = l; q < jj; q++) s += Tb[l * nb + q] * w[q];
        Tb[l * nb + jj] = l < jj ? -tau * s : (l == jj ? tau : 0);
      }}
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }}
    for (int i = lid; i < mp; i += {G})
      for (int c = 0; c < nb; c++)
        Vb[i * nb + c] = i < c ? 0 : (i == c ? ({T})1 : A[(k0 + i) * n + c]);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }}
}}
"""


# Row kernels over (batch, rows, cols): `per_row` work-items per row, across its columns (CPU
# targets: one, walking the row's contiguous columns; GPU targets: a work-group). A 1-D grid
# (GPUs bound the other dimensions), one division per work-item.
_ROW_HEAD = """
  const long g = get_global_id(0), row = g / per_row;
  if (row >= (long)rows * batch) return;
  const long b = row / rows;
  const int i = (int)(row - b * rows);
  for (int j = (int)(g - row * per_row); j < cols; j += per_row)"""
_ROW_ARGS = "const int rows, const int cols, const int batch, const int per_row"


def _copy_source(T):
    """d (batch, rows, cols) dense from s through (batch, row, column) strides."""
    return f"""
__kernel void netcl_qr_copy(__global const {T}* s, const long off, const long bs,
                            const long rs, const long cs, __global {T}* d,
                            {_ROW_ARGS}) {{{_ROW_HEAD}
    d[(b * rows + i) * cols + j] = s[off + b * bs + i * rs + j * cs];
}}
"""


def _sub_source(T):
    """x[b, i, j] -= c[b, i, j] over a (rows, cols) block of x (row stride x_rs), c dense."""
    return f"""
__kernel void netcl_qr_sub(__global {T}* x, const long off, const long bs, const long rs,
                           __global const {T}* c, {_ROW_ARGS}) {{{_ROW_HEAD}
    x[off + b * bs + i * rs + j] -= c[(b * rows + i) * cols + j];
}}
"""


def _triu_source(T):
    """R (batch, rows = k, cols = n): the upper triangle of the first k rows of the factored
    (m, n) matrices."""
    return f"""
__kernel void netcl_qr_triu(__global const {T}* a, __global {T}* r, const int m,
                            {_ROW_ARGS}) {{{_ROW_HEAD}
    r[(b * rows + i) * cols + j] = j >= i ? a[(b * m + i) * cols + j] : 0;
}}
"""


def _eye_minus_source(T):
    """Q's columns k0..k0+cols (Q (batch, rows = m, k)): rows above k0 zero, rows k0.. E - C
    (C dense (m - k0, cols))."""
    return f"""
__kernel void netcl_qr_eye_minus(__global {T}* q, __global const {T}* c, const int k,
                                 const int k0, {_ROW_ARGS}) {{{_ROW_HEAD}
    q[(b * rows + i) * k + k0 + j] = i < k0 ? 0 :
        (i - k0 == j) - c[(b * (rows - k0) + i - k0) * cols + j];
}}
"""


def _row_step(device, source, name, batch, rows, cols, args):
    """A row kernel over (batch, rows, cols); `args` before (rows, cols, ...)."""
    per_row = min(device.work_group, 64) if _gpu(device) else 1
    wg = per_row if _gpu(device) else 8
    total = batch * rows * per_row
    return _Step(device, source, name, (-(-total // wg) * wg,), (wg,),
                 (*args, _I(rows), _I(cols), _I(batch), _I(per_row)))


# ---- launchers --------------------------------------------------------------------------------

def _gpu(device):
    return device.target.kernel_family != "cpu"


def _small_step(device, dtype, batch, m, n, src):
    """The one-launch kernel over `batch` matrices; src (name, offset, bs, rs, cs); outputs
    "q" and "r" dense."""
    T = storage_ctype(dtype)
    if _gpu(device):
        source, name = _small_gpu_source(T), "netcl_qr_small_gpu"
        walk, gsize, lsize = 1, (batch * GPU_GROUP,), (GPU_GROUP,)
    else:
        V = 8 if dtype == dtypes.float32 else 4
        groups = -(-batch // V)
        walk = ld._walk(device, groups)
        source, name = _small_cpu_source(T, _cap(m, n)), "netcl_qr_small_cpu"
        gsize, lsize = (-(-groups // walk),), (1,)
    args = (src[0], _L(src[1]), _L(src[2]), _L(src[3]), _L(src[4]), "q", "r",
            _I(m), _I(n), _I(batch), _I(walk))
    return _Step(device, source, name, gsize, lsize, args)


@dataclass(frozen=True)
class _Block:
    """One panel of the blocked algorithm: columns k0..k0+nb; its panel kernel; the
    subtractions of the update of the columns to its right (None where there are none) and
    of the columns of Q formed after it (None for the last block); the writer of its own
    columns of Q; the buffer names of its V and T."""
    k0: int
    nb: int
    panel: _Step
    update_a: Optional[_Step]
    update_q: Optional[_Step]
    eye_minus: _Step
    v: str
    t: str


def _blocked(device, dtype, batch, m, n, src, qshape, rshape):
    """The blocked algorithm's run(x) -> (q, r) (see the module's docstring)."""
    T = storage_ctype(dtype)
    k = min(m, n)
    copy = _row_step(device, _copy_source(T), "netcl_qr_copy", batch, m, n,
                     (src[0], _L(src[1]), _L(src[2]), _L(src[3]), _L(src[4]), "o"))
    if _gpu(device):
        group, walk = GPU_GROUP, 1
        gsize = (batch * group,)
    else:
        group, walk = 1, ld._walk(device, batch)
        gsize = (-(-batch // walk),)

    def sub(name, off, bs, rs, rows, cols):
        """x -= c over rows x cols of buffer `name` from `off` (c: buffer "c", dense)."""
        return _row_step(device, _sub_source(T), "netcl_qr_sub", batch, rows, cols,
                         (name, _L(off), _L(bs), _L(rs), "c"))

    blocks = []
    block = _block(device)
    for k0 in range(0, k, block):
        nb = min(block, k - k0)
        mp, c0 = m - k0, k0 + nb
        v, t = f"v{k0}", f"t{k0}"
        panel = _Step(device, _panel_source(T, group, block), "netcl_qr_panel", gsize, (group,),
                      ("o", _I(m), _I(n), _I(k0), _I(nb), v, t, _I(batch), _I(walk)))
        update_a = sub("o", k0 * n + c0, m * n, n, mp, n - c0) if c0 < n else None
        update_q = sub("q", k0 * k + c0, m * k, k, mp, k - c0) if c0 < k else None
        eye = _row_step(device, _eye_minus_source(T), "netcl_qr_eye_minus", batch, m, nb,
                        ("q", "c", _I(k), _I(k0)))
        blocks.append(_Block(k0, nb, panel, update_a, update_q, eye, v, t))
    triu = _row_step(device, _triu_source(T), "netcl_qr_triu", batch, k, n,
                     ("o", "r", _I(m)))
    dot = _dot()

    def run(x):
        o = Array.empty(device, (batch, m, n), dtype)
        q = Array.empty(device, qshape, dtype)
        r = Array.empty(device, rshape, dtype)
        bufs = {src[0]: x._buf, "o": o._buf, "q": q._buf, "r": r._buf}
        keep = {}       # each block's V and T, alive until Q is formed
        copy(bufs)
        for blk in blocks:
            mp = m - blk.k0
            v = Array.empty(device, (batch, mp, blk.nb), dtype)
            t = Array.empty(device, (batch, blk.nb, blk.nb), dtype)
            keep[blk.k0] = v, t
            bufs[blk.v], bufs[blk.t] = v._buf, t._buf
            blk.panel(bufs)
            if blk.update_a is not None:      # A2 -= V (T^T (V^T A2))
                c0 = blk.k0 + blk.nb
                a2 = o._view((batch, mp, n - c0), (m * n, n, 1), blk.k0 * n + c0)
                c = dot(v, dot(t, dot(v, a2, "tn"), "tn"), "nn")
                bufs["c"] = c._buf      # (c alive until its reader is enqueued)
                blk.update_a(bufs)
        triu(bufs)
        for blk in reversed(blocks):
            v, t = keep.pop(blk.k0)
            mp, c0 = m - blk.k0, blk.k0 + blk.nb
            if blk.update_q is not None:      # Q2 -= V (T (V^T Q2)): the columns formed
                q2 = q._view((batch, mp, k - c0), (m * k, k, 1), blk.k0 * k + c0)
                c = dot(v, dot(t, dot(v, q2, "tn"), "nn"), "nn")
                bufs["c"] = c._buf
                blk.update_q(bufs)
            v1 = v._view((batch, blk.nb, blk.nb), (mp * blk.nb, blk.nb, 1), 0)
            c = dot(v, dot(t, v1, "nt"), "nn")     # E - V T V1^T: the block's own columns
            bufs["c"] = c._buf
            blk.eye_minus(bufs)
        return q, r
    return run


def _dot():
    """dot_general over one batch axis, eagerly: "nn" a b, "nt" a b^T, "tn" a^T b."""
    from ..core.eval import eval_interpreter
    from .linalg import dot_general_p
    process = eval_interpreter.process
    # "highest": a factorization is not computed in TF32 on tensor cores
    dims = {"nn": (2, 1), "nt": (2, 2), "tn": (1, 1)}
    params = {key: dict(dimension_numbers=(((lc,), (rc,)), ((0,), (0,))),
                        precision="highest", preferred_element_type=None)
              for key, (lc, rc) in dims.items()}

    def dot(lhs, rhs, form):
        return process(dot_general_p, (lhs, rhs), params[form])
    return dot


def qr_launcher(device, a):
    """A Launch a -> (q, r) for a (..., m, n) float: q (..., m, k), r (..., k, n), dense,
    k = min(m, n)."""
    dtype, lead = a.dtype, tuple(a.shape[:-2])
    m, n = a.shape[-2:]
    qshape, rshape = lead + (m, min(m, n)), lead + (min(m, n), n)
    batch = prod(lead)
    if batch == 0 or min(m, n) == 0:
        def empty(x):
            q = Array.from_numpy(device, np.zeros(qshape, dtype))
            return q, Array.from_numpy(device, np.zeros(rshape, dtype))
        return Launch(empty)
    prep, off, (sb, sr, sc) = _operand(a, "a")
    src = ("x", off, sb, sr, sc)
    if _small(device, dtype, m, n):
        step = _small_step(device, dtype, batch, m, n, src)

        def run(x):
            x = prep(x)
            q = Array.empty(device, qshape, dtype)
            r = Array.empty(device, rshape, dtype)
            step({"x": x._buf, "q": q._buf, "r": r._buf})
            return q, r
        return Launch(run, kernels=(step.record,))
    blocked = _blocked(device, dtype, batch, m, n, src, qshape, rshape)
    return Launch(lambda x: blocked(prep(x)))


# ---- policy -----------------------------------------------------------------------------------

def _local_need(device, dtype, cap):
    """Bytes of local memory the kernels declare: the one-launch kernel's matrix of up to
    cap x cap (cap 0: the panel kernel's partial sums)."""
    size = dtype.itemsize
    if not _gpu(device):        # (vectors of 32 bytes)
        return (cap * cap + 2 * cap) * 32 if cap else (2 * _block(device) + 3) * size
    if cap:
        return (SMALL_N * SMALL_N + 3 * SMALL_N + GPU_GROUP) * size
    return (GPU_GROUP * _block(device) + _block(device) + 3) * size


def _cap(m, n):
    """The largest matrix (cap x cap) the one-launch kernel for (m, n) holds."""
    return SMALL_N if max(m, n) <= SMALL_N else CPU_LANES_N


def _small(device, dtype, m, n):
    """Whether the one-launch kernel factors (m, n) matrices: up to SMALL_N rows and columns
    (CPU targets: CPU_LANES_N) where its local memory fits."""
    if max(m, n) > (SMALL_N if _gpu(device) else CPU_LANES_N):
        return False
    return device.capabilities.local_mem_size >= _local_need(device, dtype, _cap(m, n))


def _prefer_host(device, m, n, batch):
    """Where the host's LAPACK is faster (HOST_WINS)."""
    for low, high, few in HOST_WINS.get(device.target.kernel_family, ()):
        if low < max(m, n) <= high and batch < few:
            return True
    return False


def launcher(device, a):
    """The device Launch of qr for operand `a`, or None (the host path)."""
    if device.is_numpy or a.dtype not in ld._FLOATS:
        return None
    if a.dtype == dtypes.float64 and not device.capabilities.fp64:
        return None
    if device.capabilities.local_mem_size < _local_need(device, a.dtype, 0):
        return None
    m, n = a.shape[-2:]
    if _prefer_host(device, m, n, prod(a.shape[:-2])):
        return None
    return qr_launcher(device, a)
