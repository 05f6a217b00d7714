"""The epilogue of a max-pooling gradient (jit's epilogue fusion, transforms/epilogue_fusion.py):
where the windows tile the operand (2x2 pooling with stride 2 on even sizes), the
select-and-scatter kernel writes every operand element, so the elementwise group reading its
result (the relu mask of the layer below) runs per element in the same kernel, reading its
other inputs at the same flat index. The scattered gradient then never goes to memory.
"""
import numpy as np

from ...core import dtypes, kernels
from ...core.shapes import contiguous_strides, prod
from .. import dot_epilogue
from .kernel_metadata import _const_buffer
from .window_kernels import (_check_window_sizes, _window_classes, _window_meta,
                             _window_meta_values, _window_params, _window_source, _windows_tile)
from .window_vectors import vector_source, vector_width, vload, vstore


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

    classes = _window_classes(shape, source.shape, wp)
    dense = contiguous_strides(shape)
    width = vector_width(kd, classes, [(shape, operand.strides, operand.offset),
                                       (source.shape, source.strides, source.offset)] +
                         [(shape, dense, x.offset) for x in extras if x.ndim],
                         [x.dtype for x in extras] + [a.dtype for a in out_avals]) \
        if isinstance(acc_index, int) else 1

    def element(f):
        return " ".join(dot_epilogue.flat_element(kd, acc_index, extras, body, out_vars,
                                                  out_avals, f))

    def lanes(f):
        return " ".join(_vector_element(width, acc_index, extras, body, out_vars, out_avals,
                                        f))

    if width > 1:
        src = vector_source(kd, classes, width, wp["window_dimensions"],
                            ("".join(decls), lanes))
    else:
        src = _window_source(kd, classes, ("".join(decls), element))
    src = "#pragma OPENCL FP_CONTRACT OFF\n" + src
    k = kernels.kernel(device, src, "window_select_scatter_epilogue")
    scal, arrays = _window_meta(shape, source.shape, wp, (operand.strides, operand.offset),
                                (source.strides, source.offset))
    scal["total"] = prod(source.shape) // width
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    first = n_in + n_out
    k.set_arg(first + 2, meta)
    k.set_arg(first + 3, np.int32(1 if params["select"] == "ge" else 2))
    k._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, scal["total"])
    return dot_epilogue.flat_epilogue_launcher(device, k, 2, n_in, out_avals, gsize, lsize)


def _vector_element(width, acc_index, extras, body, out_vars, out_avals, f):
    """C statements finishing the `width` elements from dense flat index f (a multiple of
    width) of the vector kernel (window_vectors.py), whose float{width} `acc` holds the
    scattered values: the extras are read and the outputs written as aligned vectors, and
    the body (scalar code, as `dot_epilogue.flat_element` renders it) runs once per lane in
    a block of its own, so its names do not clash across lanes."""
    from ...core import codegen
    lines, reads = [], []
    positions = [p for p in range(len(extras) + 1) if p != acc_index]
    for j, (pos, x) in enumerate(zip(positions, extras)):
        if x.ndim == 0:
            lines.append(f"const {kernels.compute_ctype(x.dtype)} e{j}s = "
                         f"{kernels.load(x.dtype, f'e{j}', str(x.offset))};")
            reads.append(lambda lane, pos=pos, j=j: f"const float x{pos} = e{j}s;")
        else:
            lines.append(f"const float{width} e{j}v = "
                         f"{vload(x.dtype, width, f'e{j}', f'{f} + {x.offset}')};")
            reads.append(lambda lane, pos=pos, j=j: f"const float x{pos} = e{j}v.s{lane:x};")
    lines += [f"float{width} ov{j};" for j in range(len(out_avals))]
    ops = [op.render(1) for op in codegen.as_ops(body)]
    for lane in range(width):
        block = [f"const float x{acc_index} = acc.s{lane:x};"]
        block += [read(lane) for read in reads] + ops
        block += [f"ov{j}.s{lane:x} = {v};" for j, v in enumerate(out_vars)]
        lines.append("{ " + " ".join(block) + " }")
    lines += [vstore(a.dtype, width, f"o{j}", f, f"ov{j}") for j, a in enumerate(out_avals)]
    return lines
