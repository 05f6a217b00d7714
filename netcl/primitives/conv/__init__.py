"""Convolutions and windowed reductions, with jax.lax's names and semantics.

  dimension_numbers.py  ConvDimensionNumbers, conv_dimension_numbers, padtype_to_pads and the
                        argument normalisation both families share
  convolution.py        conv_general_dilated_p with its rules; conv_general_dilated, conv,
                        conv_with_general_padding, conv_transpose
  conv_kernels.py       OpenCL source of the direct / im2col / split-K kernels, _ConvGeometry
  conv_gemm.py          the im2col + GEMM path for large convolutions: its kernels and launchers
  conv_gemm_plan.py     whether a convolution takes that path and how (_plan_gemm): P's layout,
                        the im2col's slots, split-K counts, 16-bit operands
  pooling.py            reduce_window_{sum,max,min}_p, select_and_scatter_add_p,
                        select_and_gather_add_p with their rules; reduce_window and friends
  window_kernels.py     OpenCL source and launchers of the window kernels
  window_vectors.py     their vector forms where the last dim is not pooled (NHWC pooling):
                        several adjacent channels per work-item, aligned 16-byte accesses
  scatter_epilogue.py   a max-pooling gradient running the elementwise group that reads it
                        (jit's epilogue fusion), where the windows tile the operand
  kernel_metadata.py    what both kernel families share: __constant metadata buffers,
                        multiply-shift division, the 2^31 index limit
"""
from .convolution import (  # noqa: F401  (re-exports)
    _conv_transpose_lhs, _conv_transpose_rhs, conv, conv_general_dilated,
    conv_general_dilated_p, conv_transpose, conv_with_general_padding)
from .dimension_numbers import ConvDimensionNumbers, conv_dimension_numbers, padtype_to_pads
from .pooling import (  # noqa: F401  (re-exports)
    reduce_window, reduce_window_max, reduce_window_max_p, reduce_window_min, reduce_window_min_p,
    reduce_window_sum, reduce_window_sum_p, select_and_gather_add, select_and_gather_add_p,
    select_and_scatter_add, select_and_scatter_add_p)

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_transpose", "padtype_to_pads", "reduce_window",
           "reduce_window_sum", "reduce_window_max", "reduce_window_min",
           "select_and_scatter_add", "select_and_gather_add"]

# Tests and benchmarks set this to "direct" or "gemm" (then clear the eager launcher cache) to
# force a conv path; conv_gemm reads it from here, so setting it on this package works.
_impl_override = None

# Likewise "implicit", "special" or "generic" forces how the GEMM path makes its patches matrix
# (None: implicit on GPUs, generic on CPUs; see conv_gemm._im2col_mode).
_im2col_override = None
