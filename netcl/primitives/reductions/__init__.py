"""Reductions and cumulative (scan) primitives: sum/max/min/prod over axes, argmax/argmin,
cumsum/cumprod/cummax/cummin.

  primitives.py     the primitives and every rule (abstract eval, references, jvp/vjp,
                    batching) and the lax-level functions
  launch.py         layout analysis, kernel family choice, pass splitting, launchers
  gpu_kernels.py    OpenCL source: work-group rows/cols reductions and tiled scans
  cpu_kernels.py    OpenCL source: explicit 8-wide vector kernels for CPU runtimes
  kernel_common.py  C identities/combines, arg comparison, partial dtypes (both families)
  complex_order.py  complex max/min: JAX's in-order lexicographic fold (kernels, reference)
"""
from .primitives import (  # noqa: E402
    __all__, reduce_sum, reduce_prod, reduce_max, reduce_min, argmax, argmin,
    cumsum, cumprod, cummax, cummin,
    reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, argmax_p, argmin_p,
    cumsum_p, cumprod_p, cummax_p, cummin_p, ffill_p, no_complex_order)
