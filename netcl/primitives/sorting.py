"""argsort: the stable ascending order of every row along the last axis.

One primitive carries sorting: jnp.sort is argsort then take_along_axis (so sort's
gradient is the gather's), and top_k, median, quantile and unique build on those. On a
device it is a bitonic network over each row padded to a power of two: keys and their
indices sorted together, compared as (key, index) pairs, so equal keys keep their order
(stable, as NumPy's kind="stable") and NaNs go last (as NumPy and JAX put them). One kernel
launch per stage of the network: log2(P) (log2(P) + 1) / 2 of them for rows padded to P.

>>> netcl.primitives.sorting.argsort(jnp.array([3.0, 1.0, 2.0]))     # [1, 2, 0]
"""
import numpy as np

from ..core import commands, dtypes
from ..core.ad_util import Zero
from ..core.array import Array
from ..core.kernels import compute_ctype, grid_1d, kernel, load, storage_ctype
from ..core.shapes import prod
from ..core.tracing import Primitive, ShapedArray

argsort_p = Primitive("argsort")


def _abstract(x):
    if dtypes.kind(x.dtype) not in "fiub":
        raise TypeError(f"argsort: operand of dtype {x.dtype} cannot be sorted")
    if x.ndim == 0:
        raise ValueError("argsort: operand must have at least one axis (sorted: the last)")
    return ShapedArray(x.shape, dtypes.int32)


def _reference(x):
    # (as the keys the kernels sort: ml_dtypes' bfloat16 sorts NaN first)
    return np.argsort(x.astype(_key_dtype(x.dtype), copy=False), axis=-1,
                      kind="stable").astype(np.int32)


def _jvp(primals, tangents):
    out = argsort_p.bind(*primals)
    return out, Zero(ShapedArray(out.shape, out.dtype))


def _batch(args, dims):
    (x,), (d,) = args, dims
    if d == x.ndim - 1:             # the batch axis must not be the sorted one
        from .views import move_batch_axis
        x, d = move_batch_axis(x, d, 0), 0
    return argsort_p.bind(x), d


# Pads sort last: the greatest key (ties go by index, and pads' indices are the greatest)
_PAD = {"f": "NAN", "i": "INT_MAX", "u": "UINT_MAX", "b": "INT_MAX", "i64": "LONG_MAX",
        "u64": "ULONG_MAX"}


def _sources(dtype):
    """(init, stage, finish) kernel sources for keys of `dtype`."""
    T, K = storage_ctype(dtype), compute_ctype(dtype)
    nan_last = dtypes.kind(dtype) == "f"
    k = dtypes.kind(dtype)
    pad = _PAD[k + "64" if k in "iu" and dtype.itemsize == 8 else k]
    before = ("  if (a != a) return (b != b) && ia < ib;\n  if (b != b) return 1;\n"
              if nan_last else "")
    init = f"""
__kernel void netcl_argsort_init(__global const {T}* x, const long x_off, __global {K}* keys,
                                 __global int* idx, const int n, const int P, const long total) {{
  const long g = get_global_id(0);
  if (g >= total) return;
  const long r = g / P; const int i = (int)(g - r * P);
  keys[g] = i < n ? ({K})({load(dtype, "x", "x_off + r * n + i")}) : ({K}){pad};
  idx[g] = i;
}}
"""
    stage = f"""
inline int netcl_before({K} a, int ia, {K} b, int ib) {{
{before}  if (a < b) return 1;
  if (b < a) return 0;
  return ia < ib;
}}
__kernel void netcl_argsort_stage(__global {K}* keys, __global int* idx, const int P,
                                  const long total, const int k, const int j) {{
  const long g = get_global_id(0);
  if (g >= total) return;
  const long base = (g / P) * P; const int i = (int)(g - base); const int l = i ^ j;
  if (l <= i) return;
  const {K} a = keys[g], b = keys[base + l];
  const int ia = idx[g], ib = idx[base + l];
  const int ascending = (i & k) == 0;
  if (ascending ? netcl_before(b, ib, a, ia) : netcl_before(a, ia, b, ib)) {{
    keys[g] = b; keys[base + l] = a; idx[g] = ib; idx[base + l] = ia;
  }}
}}
"""
    finish = """
__kernel void netcl_argsort_finish(__global const int* idx, __global int* out, const int n,
                                   const int P, const long total) {
  const long g = get_global_id(0);
  if (g >= total) return;
  const long r = g / n;
  out[g] = idx[r * P + (g - r * n)];
}
"""
    return init, stage, finish


def _launcher(device, args, params, out):
    (x,) = args
    n, rows = x.shape[-1], prod(x.shape[:-1])
    if n == 0 or rows == 0:
        return lambda x: Array.empty(device, out.shape, out.dtype)
    P = 1 << max(0, (n - 1).bit_length())
    K = np.dtype(_key_dtype(x.dtype))
    init_src, stage_src, finish_src = _sources(x.dtype)
    total = rows * P
    g, lws = grid_1d(device, total)
    gf, lf = grid_1d(device, rows * n)
    stages = [(k, j) for k in _powers(2, P) for j in _powers(k // 2, 1, down=True)]
    queue = device.queue
    # Every scalar argument is set here, once: PyOpenCL takes ~10 us to set one (0.1 us a
    # buffer), so each stage gets its own kernel object with its (k, j) fixed.
    k_init = kernel(device, init_src, "netcl_argsort_init")
    for i, v in ((4, np.int32(n)), (5, np.int32(P)), (6, np.int64(total))):
        k_init.set_arg(i, v)
    k_stages = []
    for k, j in stages:
        ks = kernel(device, stage_src, "netcl_argsort_stage")
        for i, v in ((2, np.int32(P)), (3, np.int64(total)), (4, np.int32(k)),
                     (5, np.int32(j))):
            ks.set_arg(i, v)
        k_stages.append(ks)
    k_finish = kernel(device, finish_src, "netcl_argsort_finish")
    for i, v in ((2, np.int32(n)), (3, np.int32(P)), (4, np.int64(rows * n))):
        k_finish.set_arg(i, v)
    offset = [None]     # x's offset as set on k_init

    def launch(x):
        x = x if x._contig else x._dense()
        keys = Array.empty(device, (total,), K)
        idx = Array.empty(device, (total,), dtypes.int32)
        result = Array.empty(device, out.shape, out.dtype)
        k_init.set_arg(0, x._buf)
        if offset[0] != x.offset:
            k_init.set_arg(1, np.int64(x.offset))
            offset[0] = x.offset
        k_init.set_arg(2, keys._buf)
        k_init.set_arg(3, idx._buf)
        commands.launch(queue, k_init, g, lws)
        for ks in k_stages:
            ks.set_arg(0, keys._buf)
            ks.set_arg(1, idx._buf)
            commands.launch(queue, ks, g, lws)
        k_finish.set_arg(0, idx._buf)
        k_finish.set_arg(1, result._buf)
        commands.launch(queue, k_finish, gf, lf)
        return result
    return launch


def _key_dtype(dtype):
    """The NumPy dtype of the keys' compute type (16- and 8-bit floats and bool sort as
    float/int)."""
    if dtype in dtypes.SUBBYTE_INTS:    # int4, ...: keys in their compute type, int / uint
        return np.int32 if dtypes.kind(dtype) == "i" else np.uint32
    return np.float32 if dtype in dtypes.STORAGE_FLOATS else \
        {dtypes.bool_: np.int32}.get(dtype, dtype)


def _powers(start, stop, down=False):
    """start, 2 start, ... up to stop (or down to stop, halving)."""
    out, v = [], start
    while (v >= stop) if down else (v <= stop):
        out.append(v)
        v = v // 2 if down else v * 2
    return out


argsort_p.abstract_eval = _abstract
argsort_p.reference = _reference
argsort_p.make_launcher = _launcher
argsort_p.jvp = _jvp
argsort_p.vjp = lambda ct, out, x: (None,)
argsort_p.batch = _batch


def argsort(x):
    """The stable ascending order (int32 indices) of `x` along its last axis (jnp.argsort
    gives them as the default int).

    >>> argsort(jnp.array([3, 1, 2], jnp.int64))     # [1, 2, 0]
    """
    from .views import operand
    return argsort_p.bind(operand(x, "argsort"))
