"""The epilogue of a max-pooling gradient (jit's epilogue fusion, transforms/epilogue_fusion.py):
where the windows tile the operand (2x2 pooling with stride 2 on even sizes), the
select-and-scatter kernel writes every operand element, so the elementwise group reading its
result (the relu mask of the layer below) runs per element in the same kernel, reading its
other inputs at the same flat index. The scattered gradient then never goes to memory.
"""
import numpy as np

from ...core import dtypes, kernels
from ...core.shapes import prod
from .. import dot_epilogue
from .kernel_metadata import _const_buffer
from .window_kernels import (_check_window_sizes, _window_classes, _window_meta,
                             _window_meta_values, _window_params, _window_source, _windows_tile)


def make_scatter_epilogue_launcher(device, source, operand, params, aval, extras, acc_index,
                                   body, out_vars, out_avals):
    """A launcher ``(source, operand, *extras) -> outputs`` computing `body` (codegen Ops over
    x0, x1, ...; x{acc_index} is select_and_scatter_add's result, the others `extras`) per
    operand element, or None where the windows do not tile the operand or an extra is not a
    dense array of the operand's shape or a 0-d one."""
    wp = _window_params(params)
    shape, kd = operand.shape, operand.dtype
    if device.is_numpy or dtypes.kind(kd) != "f" or source.dtype != kd or not prod(source.shape) or \
            not _windows_tile(shape, source.shape, wp) or \
            any(a.shape != shape for a in out_avals) or \
            any(x.ndim and (x.shape != shape or not x._contig) for x in extras):
        return None
    _check_window_sizes("select_and_scatter_add", shape, source.shape)
    n_in, n_out = len(extras), len(out_avals)
    decls = [f"__global const {kernels.storage_ctype(x.dtype)}* e{j}, "
             for j, x in enumerate(extras)]
    decls += [f"__global {kernels.storage_ctype(a.dtype)}* o{j}, "
              for j, a in enumerate(out_avals)]

    def element(f):
        return " ".join(dot_epilogue.flat_element(kd, acc_index, extras, body, out_vars,
                                                  out_avals, f))

    src = "#pragma OPENCL FP_CONTRACT OFF\n" + _window_source(
        kd, _window_classes(shape, source.shape, wp), ("".join(decls), element))
    k = kernels.kernel(device, src, "window_select_scatter_epilogue")
    scal, arrays = _window_meta(shape, source.shape, wp, (operand.strides, operand.offset),
                                (source.strides, source.offset))
    scal["total"] = prod(source.shape)
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    first = n_in + n_out
    k.set_arg(first + 2, meta)
    k.set_arg(first + 3, np.int32(1 if params["select"] == "ge" else 2))
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, scal["total"])
    return dot_epilogue.flat_epilogue_launcher(device, k, 2, n_in, out_avals, gsize, lsize)
