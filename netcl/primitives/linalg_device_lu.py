"""Device LU factorization with partial pivoting, and the solve and slogdet built on it.

The sibling of `linalg_device` (whose layouts, launch steps, triangular solves and
dot_general it uses): `linalg_device.launcher` hands "lu", "solve" and "slogdet" here.

lu (jax.lax.linalg.lu: A[perm] = L U, L unit lower and U upper packed in one matrix; pivots
the rows swapped in turn, LAPACK's ipiv counted from 0; perm the permutation they make):
  n <= SMALL_N   one launch, a work-group per matrix. GPU targets: 64 work-items, the matrix
                 in local memory, column by column: the pivot (the first largest |a|, found
                 by the work-items' partial maxima), the row swap, the column scaled, the
                 rank-1 update of the rest. CPU targets: one work-item per matrix, the same
                 steps in place in the output (its rows stay in cache).
  n >  SMALL_N   right-looking blocked, BLOCK columns at a time: the panel (rows k.., columns
                 k..k+b) factored by the same kernel in global memory, its row swaps applied
                 to whole rows; then U12 = L11^-1 A12 in place (the unit lower triangular
                 kernel) and A22 -= L21 U12 (dot_general, then a subtraction kernel).
A zero pivot (a singular matrix) is not divided by, as LAPACK's getrf: U has a zero on its
diagonal and nothing is NaN, as the host's.

solve: LU, b's rows permuted, then the unit lower and the upper triangular solves (an exact
zero on U's diagonal: NaN in that matrix's whole x, as the host path's LinAlgError gives).
slogdet: LU, then per matrix the sign of the permutation times the signs of U's diagonal, and
the sum of log|u_ii| (a zero on it: sign 0, -inf, as np.linalg.slogdet).

>>> netcl.numpy.linalg.solve(a, b)      # a (..., n, n) float32 on an OpenCL device: here
"""
import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.kernels import storage_ctype
from ..core.launch import Launch
from ..core.shapes import prod
from . import linalg_device as ld
from .linalg_device import SMALL_N, BLOCK, _I, _L, _Step, _operand

# work-items of a work-group of the GPU LU kernel (rows updated in parallel)
GPU_LU_GROUP = 64


# ---- kernel sources ---------------------------------------------------------------------------

def _lu_source(T, local):
    """Columns k0..k0+nb of rows k0..n of each matrix factored with partial pivoting (rows
    swapped whole, only the panel's columns updated); with `copy` the matrix is first read
    from src (strided) into dst; with `do_perm` the permutation of all n pivots is written
    last. local: the matrix held in local memory (n <= SMALL_N, GPU), else worked on in dst."""
    if local:
        mem, at = "__local", f"a[(i) * {SMALL_N} + (j)]"
        decl = f"__local {T} a[{SMALL_N} * {SMALL_N}];"
    else:
        mem, at, decl = "__global", "D[(i) * d_rs + (j)]", ""
    G = GPU_LU_GROUP
    return f"""
#define AT(i, j) {at}
__kernel void netcl_lu(
    __global const {T}* src, const long s_off, const long s_bs, const long s_rs, const long s_cs,
    const int copy, __global {T}* dst, const long d_off, const long d_bs, const long d_rs,
    __global int* piv, __global int* perm, const int do_perm,
    const int n, const int k0, const int nb, const int batch, const int walk) {{
  {decl}
  __local {T} best_v[{G}];
  __local int best_i[{G}];
  __local int pivot;
  const int lid = get_local_id(0), ls = get_local_size(0);
  const int g0 = get_group_id(0) * walk, g1 = min(g0 + walk, batch);
  const int kend = k0 + nb;
  for (int b = g0; b < g1; b++) {{
    __global const {T}* S = src + s_off + (long)b * s_bs;
    __global {T}* D = dst + d_off + (long)b * d_bs;
    __global int* P = piv + (long)b * n;
    if (copy) {{
      for (int i = lid; i < n; i += ls)
        for (int j = 0; j < n; j++) AT(i, j) = copy ? S[i * s_rs + j * s_cs] : D[i * d_rs + j];
    }}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    for (int j = k0; j < kend; j++) {{
      /* the pivot: the first row of the largest |a(i, j)|, i >= j (LAPACK's idamax) */
      {T} bv = -1;
      int bi = j;
      for (int i = j + lid; i < n; i += ls) {{
        const {T} v = fabs(AT(i, j));
        if (bv < 0 || v > bv) {{ bv = v; bi = i; }}
      }}
      best_v[lid] = bv;
      best_i[lid] = bi;
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lid == 0) {{
        {T} v0 = best_v[0];
        int i0 = best_i[0];
        for (int q = 1; q < ls; q++)
          if (best_v[q] > v0 || (best_v[q] == v0 && best_i[q] < i0)) {{
            v0 = best_v[q]; i0 = best_i[q];
          }}
        pivot = i0;
        P[j] = i0;
      }}
      barrier(CLK_LOCAL_MEM_FENCE);
      const int p = pivot;
      if (p != j)
        for (int c = lid; c < n; c += ls) {{
          const {T} t = AT(j, c);
          AT(j, c) = AT(p, c);
          AT(p, c) = t;
        }}
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
      const {T} d = AT(j, j);
      if (d != 0) {{
        for (int i = j + 1 + lid; i < n; i += ls) {{
          const {T} l = AT(i, j) / d;
          AT(i, j) = l;
          for (int c = j + 1; c < kend; c++) AT(i, c) -= l * AT(j, c);
        }}
      }}
      barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }}
    if ({int(local)})
      for (int i = lid; i < n; i += ls)
        for (int j = 0; j < n; j++) D[i * d_rs + j] = AT(i, j);
    if (do_perm && lid == 0) {{
      __global int* Q = perm + (long)b * n;
      for (int i = 0; i < n; i++) Q[i] = i;
      for (int i = 0; i < n; i++) {{
        const int t = Q[i];
        Q[i] = Q[P[i]];
        Q[P[i]] = t;
      }}
    }}
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }}
}}
"""


def _sub_source(T):
    """x[b, i, j] -= c[b, i, j] over an (m, w) block of x (row stride x_rs), c dense."""
    return f"""
__kernel void netcl_lu_sub(__global {T}* x, const long x_off, const long x_bs,
                           const long x_rs, __global const {T}* c, const long m,
                           const long w, const long total) {{
  const long g = get_global_id(0);
  if (g >= total) return;
  const long per = m * w, b = g / per, e = g - b * per, i = e / w, j = e - i * w;
  x[x_off + b * x_bs + i * x_rs + j] -= c[g];
}}
"""


def _permute_source(T):
    """y[b, i, :] = x[b, perm[b, i], :]: b's rows in the order of A's (x strided)."""
    return f"""
__kernel void netcl_lu_permute(
    __global const {T}* x, const long x_off, const long x_bs, const long x_rs, const long x_cs,
    __global const int* perm, __global {T}* y, const int n, const int k, const long total) {{
  const long g = get_global_id(0);
  if (g >= total) return;
  const long per = (long)n * k, b = g / per, e = g - b * per;
  const int i = (int)(e / k), j = (int)(e - (long)i * k);
  y[g] = x[x_off + b * x_bs + (long)perm[b * n + i] * x_rs + (long)j * x_cs];
}}
"""


def _slogdet_source(T):
    """(sign, log|det|) of each matrix from its LU factors and pivots."""
    return f"""
__kernel void netcl_lu_slogdet(__global const {T}* lu, __global const int* piv,
                               __global {T}* sign, __global {T}* logdet, const int n,
                               const int batch) {{
  const int b = get_global_id(0);
  if (b >= batch) return;
  __global const {T}* A = lu + (long)b * n * n;
  {T} s = 1, l = 0;
  for (int i = 0; i < n; i++) {{
    const {T} d = A[(long)i * (n + 1)];
    if (piv[(long)b * n + i] != i) s = -s;
    if (d < 0) s = -s;
    if (d == 0) s = 0;
    l += log(fabs(d));
  }}
  sign[b] = s;
  logdet[b] = l;
}}
"""


# ---- steps ------------------------------------------------------------------------------------

def _gpu(device):
    return device.target.kernel_family != "cpu"


def _lu_step(device, dtype, batch, n, k0, nb, copy, do_perm, src, local):
    """The LU kernel over `batch` matrices: src (name, offset, bs, rs, cs) read when `copy`;
    dst "lu" (dense n x n), pivots "piv", permutation "perm"."""
    T = storage_ctype(dtype)
    if _gpu(device):
        walk, gsize, lsize = 1, (batch * GPU_LU_GROUP,), (GPU_LU_GROUP,)
    else:
        walk = ld._walk(device, batch)
        gsize, lsize = (-(-batch // walk),), (1,)
    args = (src[0], _L(src[1]), _L(src[2]), _L(src[3]), _L(src[4]), _I(copy),
            "lu", _L(0), _L(n * n), _L(n), "piv", "perm", _I(do_perm),
            _I(n), _I(k0), _I(nb), _I(batch), _I(walk))
    return _Step(device, _lu_source(T, local), "netcl_lu", gsize, lsize, args)


def _elementwise_step(device, source, name, total, args):
    wg = device.work_group
    return _Step(device, source, name, (max(1, -(-total // wg)) * wg,), (wg,), args)


# ---- lu ---------------------------------------------------------------------------------------

def lu_launcher(device, a, shape, dtype):
    """A Launch a -> (lu, pivots, perm) for a (..., n, n) float of `shape`: lu dense; pivots
    and perm int32 (..., n)."""
    n, batch = shape[-1], prod(shape[:-2])
    ishape = tuple(shape[:-1])
    if n == 0 or batch == 0:
        return Launch(lambda x: (Array.empty(device, shape, dtype),
                                 Array.empty(device, ishape, dtypes.int32),
                                 Array.empty(device, ishape, dtypes.int32)))
    prep, off, (sb, sr, sc) = _operand(a, "a")
    src = ("x", off, sb, sr, sc)
    if n <= SMALL_N:
        steps = [(0, 0, _lu_step(device, dtype, batch, n, 0, n, 1, 1, src, _gpu(device)))]
    else:
        steps = []
        for k in range(0, n, BLOCK):
            nb = min(BLOCK, n - k)
            panel = _lu_step(device, dtype, batch, n, k, nb, int(k == 0), int(k + nb == n),
                             src, False)
            steps.append((k, nb, panel))
    dot = ld._dot(device) if n > SMALL_N else None
    trsm, sub = {}, {}
    T = storage_ctype(dtype)
    for k in range(0, n - BLOCK if n > SMALL_N else 0, BLOCK):
        nb, w = BLOCK, n - k - BLOCK
        # U12 = L11^-1 A12 in place: rows k..k+nb, columns k+nb.. (x read as b)
        u12 = ("lu", k * n + k + nb, n * n, n, 1)
        trsm[k] = ld._trsm_step(device, dtype, batch, nb, w, True, False,
                                a=("lu", k * (n + 1), n * n, n, 1), b=u12, c=None, x=u12)
        total = batch * w * w
        sub[k] = _elementwise_step(device, _sub_source(T), "netcl_lu_sub", total,
                                   ("lu", _L((k + nb) * (n + 1)), _L(n * n), _L(n), "c",
                                    _L(w), _L(w), _L(total)))

    def run(x):
        x = prep(x)
        o = Array.empty(device, shape, dtype)
        piv = Array.empty(device, ishape, dtypes.int32)
        perm = Array.empty(device, ishape, dtypes.int32)
        bufs = {"x": x._buf, "lu": o._buf, "piv": piv._buf, "perm": perm._buf}
        if n <= SMALL_N:
            steps[0][2](bufs)
            return o, piv, perm
        for k, nb, panel in steps:
            panel(bufs)
            if k in trsm:
                trsm[k](bufs)
                w = n - k - nb
                lhs = o._view((batch, w, nb), (n * n, n, 1), (k + nb) * n + k)
                rhs = o._view((batch, nb, w), (n * n, n, 1), k * n + k + nb)
                c = dot(lhs, rhs, transpose_rhs=False)      # (batch, w, w)
                bufs["c"] = c._buf
                sub[k](bufs)
        return o, piv, perm
    kernels = (steps[0][2].record,) if n <= SMALL_N else None
    return Launch(run, kernels=kernels)


# ---- solve and slogdet ------------------------------------------------------------------------

def solve_launcher(device, a, b, out):
    """x = A^-1 b: P A = L U; x = U^-1 (L^-1 (P b))."""
    shape, dtype = tuple(out.shape), out.dtype
    n, k, batch = shape[-2], shape[-1], prod(shape[:-2])
    if n == 0 or k == 0 or batch == 0:
        return Launch(lambda a, b: Array.empty(device, shape, dtype))
    lu = lu_launcher(device, a, tuple(a.shape), dtype)
    prep_b, b_off, (bb, br, bc) = _operand(b, "b")
    total = batch * n * k
    permute = _elementwise_step(device, _permute_source(storage_ctype(dtype)),
                                "netcl_lu_permute", total,
                                ("b", _L(b_off), _L(bb), _L(br), _L(bc), "perm", "y", _I(n),
                                 _I(k), _L(total)))
    fa = Array.unbound(device, tuple(a.shape), dtype)
    fb = Array.unbound(device, shape, dtype)
    lower = ld._triangular_solve_launcher(device, fa, fb, out, lower=True, transpose_a=False,
                                          unit_diagonal=True)
    upper = ld._triangular_solve_launcher(device, fa, fb, out, lower=False, transpose_a=False,
                                          unit_diagonal=False)

    def run(a, b):
        b = prep_b(b)
        f, _, perm = lu(a)
        y = Array.empty(device, shape, dtype)
        permute({"b": b._buf, "perm": perm._buf, "y": y._buf})
        return upper(f, lower(f, y))
    return Launch(run)


def slogdet_launcher(device, a, outs):
    shape, dtype = tuple(a.shape), a.dtype
    n, batch = shape[-1], prod(shape[:-2])
    bshape = tuple(shape[:-2])
    if batch == 0 or n == 0:
        def empty(x):
            s = Array.from_numpy(device, np.ones(bshape, dtype))
            return s, Array.from_numpy(device, np.zeros(bshape, dtype))
        return Launch(empty)
    lu = lu_launcher(device, a, shape, dtype)
    wg = device.work_group
    step = _Step(device, _slogdet_source(storage_ctype(dtype)), "netcl_lu_slogdet",
                 (-(-batch // wg) * wg,), (wg,),
                 ("lu", "piv", "sign", "logdet", _I(n), _I(batch)))

    def run(x):
        f, piv, _ = lu(x)
        sign = Array.empty(device, bshape, dtype)
        logdet = Array.empty(device, bshape, dtype)
        step({"lu": f._buf, "piv": piv._buf, "sign": sign._buf, "logdet": logdet._buf})
        return sign, logdet
    return Launch(run)
