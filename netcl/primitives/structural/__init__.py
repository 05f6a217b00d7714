"""Structural primitives: iota, concatenate, pad, dynamic_slice, dynamic_update_slice, gather
and the scatter family (scatter_add, scatter, scatter_mul, scatter_min, scatter_max).

  shape_ops.py       iota, concatenate, pad
  dynamic_slices.py  dynamic_slice, dynamic_update_slice and their *_in_dim forms
  gather_scatter.py  gather and the scatter family, their kernels and rules
  copy_kernels.py    nc_copy, the strided box copy behind concatenate, pad and dynamic slices
  common.py          size limit, kernel metadata buffers, helpers the rules share
"""
from .dynamic_slices import (  # noqa: F401
    dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_slice_p,
    dynamic_update_slice, dynamic_update_slice_in_dim, dynamic_update_slice_p)
from .gather_scatter import (  # noqa: F401
    gather, gather_p, scatter, scatter_add, scatter_add_p, scatter_max, scatter_max_p,
    scatter_min, scatter_min_p, scatter_mul, scatter_mul_p, scatter_p)
from .shape_ops import concatenate, concatenate_p, iota, iota_p, pad, pad_p  # noqa: F401

__all__ = ["iota", "concatenate", "pad", "dynamic_slice", "dynamic_update_slice",
           "dynamic_slice_in_dim", "dynamic_update_slice_in_dim", "dynamic_index_in_dim",
           "gather", "scatter_add", "scatter", "scatter_mul", "scatter_min", "scatter_max"]
