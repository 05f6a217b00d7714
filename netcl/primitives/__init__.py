"""Every primitive, each with all of its rules in one place (abstract eval, OpenCL lowering,
NumPy reference, jvp, vjp, batching, precision policy, fusion kind).

  elementwise.py  unary/binary/ternary math, comparisons, select, clamp, convert
                  (elementwise_refs.py: their NumPy references)
  complex_ops.py  complex64/complex128 rows of the elementwise table, real/imag/conj/complex
  views.py        broadcast_in_dim, reshape, transpose, rev, slice (views when eager), full
  structural/     concatenate, pad, dynamic_slice/update, gather, scatter family, iota
  reductions/     sum/max/min/prod/argmax/argmin, cumulative ops (CPU and GPU kernel families)
  linalg.py       dot_general (gemm.py: the tuned tiled matmul kernel family, its CPU kind
                  in gemm_cpu.py, NVIDIA tensor cores in gemm_mma.py, the configurations
                  a device and shape get in gemm_tiers.py; split_k.py: long
                  contractions in K chunks; dot_epilogue.py: the launcher of jit's matmul
                  epilogue fusion)
  linalg_host.py  cholesky, triangular_solve, solve, slogdet, eigh, svd, qr: LAPACK on the
                  host through NumPy (the transfer is the cost), derivative rules in netcl ops
  linalg_host_rules.py  the jvp/vjp rules of linalg_host's primitives (complex: as JAX's)
  linalg_eig.py   eig of general matrices (complex results; host LAPACK), eigenvalue jvp/vjp
  fft.py          fft along the last axis (fft_kernels.py: batched Stockham / Bluestein)
  sorting.py      argsort: a bitonic network per row (jnp.sort, quantile, unique, top_k)
  conv/           conv_general_dilated, reduce_window, pooling derivatives
  random_bits.py  threefry2x32, bit shifts, bitcast (netcl.random builds on them)
  collectives.py  psum/pmax/pmin, all_gather, ppermute, psum_scatter, all_to_all, axis_index
                  over named axes (vmap(axis_name=)/pmap), the axis environment, HOST_RULES
"""
from ..core.ad_util import register_tangent_ops
from . import complex_ops  # noqa: F401 (complex rows join the elementwise table)
from .elementwise import add_p
from .views import full

# tangent arithmetic in core (symbolic zeros made real, tangents summed) uses these
register_tangent_ops(zeros=lambda shape, dtype: full(shape, 0, dtype),
                     add=lambda a, b: add_p.bind(a, b))
