"""Every primitive, each with all of its rules in one place (abstract eval, OpenCL lowering,
NumPy reference, jvp, vjp, batching, precision policy, fusion kind).

  elementwise.py  unary/binary/ternary math, comparisons, select, clamp, convert
  views.py        broadcast_in_dim, reshape, transpose, rev, slice (views when eager), full
  structural.py   concatenate, pad, dynamic_slice/update, gather, scatter_add, iota
  reductions.py   sum/max/min/prod/argmax/argmin, cumulative ops
  linalg.py       dot_general (gemm.py: the tiled matmul kernel family)
  conv.py         conv_general_dilated, reduce_window
  random_bits.py  threefry2x32
"""
