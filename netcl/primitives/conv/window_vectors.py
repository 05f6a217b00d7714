"""The window kernels on vectors of adjacent elements along a trivial last dimension.

Where the operand's last dimension is trivial (class 'T' of `_window_classes`: window 1,
stride 1, so operand and result agree along it), as the channels of NHWC pooling are, `width`
adjacent elements along it share every window position and every bounds check: one
work-item runs the scalar kernels' loops once for all of them, on float vectors, and moves
them with one aligned load or store of up to 16 bytes. The scalar kernels move one element
per access and work-item (2 bytes for 16-bit types), too little to reach a GPU's memory
bandwidth. Every lane runs the scalar kernel's comparisons and additions in the same order,
so the results are the scalar kernels', bit for bit.

  vector_width    the lanes a window kernel over given operands takes (1: the scalar ones)
  vector_source   window_reduce and window_select_scatter_all (or, with an epilogue, the
                  window_select_scatter_epilogue kernel) over vectors of that many lanes
  vload, vstore   aligned vector loads and stores of float32, bfloat16 and float16
  with_helpers    a source with the float16 lane conversions it calls
"""
from ...core import dtypes, kernels
from .kernel_metadata import _NDIV
from .window_kernels import _decompose, _window_code, _window_prologue

# one 128-bit access per array and window element: the widest that every OpenCL device
# loads in one instruction
_MAX_BYTES = 16
_LANE_DTYPES = (dtypes.float32, dtypes.bfloat16, dtypes.float16)


def vector_width(dtype, classes, arrays, other_dtypes=()):
    """Lanes per work-item for window kernels over an operand of `dtype` whose dims have
    `classes`, touching `arrays` ((shape, strides, offset) of each array the kernel reads or
    writes; dense outputs need not be listed): the widest count of 16 bytes of `dtype` or
    fewer, down to 2, that divides every array's last dim, its offset and its other strides
    (so every vector is aligned), with unit strides along the last dim. 1 (the scalar
    kernels) where the last dim is not trivial or a dtype (of `dtype` or `other_dtypes`, the
    epilogue's) is not float32, bfloat16 or float16."""
    if dtype not in _LANE_DTYPES or any(d not in _LANE_DTYPES for d in other_dtypes) or \
            not classes or classes[-1] != "T":
        return 1
    width = _MAX_BYTES // dtype.itemsize
    while width > 1:
        if all(_aligned(shape, strides, offset, width) for shape, strides, offset in arrays):
            return width
        width //= 2
    return 1


def _aligned(shape, strides, offset, width):
    """Whether every run of `width` elements along the last dim that starts at a multiple of
    `width` is one aligned vector of this array (dims of size 1 index nothing)."""
    return shape[-1] % width == 0 and offset % width == 0 and \
        (shape[-1] == 1 or strides[-1] == 1) and \
        all(st % width == 0 for n, st in zip(shape[:-1], strides[:-1]) if n > 1)


def vload(dtype, width, ptr, index):
    """C expression (float{width}) of elements index .. index + width - 1 of `ptr`, where
    index is a multiple of width: one aligned load."""
    unit = f"({index}) >> {width.bit_length() - 1}"     # (index >= 0)
    if dtype == dtypes.bfloat16:
        return (f"as_float{width}(convert_uint{width}("
                f"((__global const ushort{width}*)({ptr}))[{unit}]) << 16)")
    if dtype == dtypes.float16:
        return f"netcl_f16_unpack{width}(((__global const ushort{width}*)({ptr}))[{unit}])"
    return f"((__global const float{width}*)({ptr}))[{unit}]"


def vstore(dtype, width, ptr, index, value):
    """C statement storing float{width} `value` as elements index .. index + width - 1 of
    `ptr` (index a multiple of width), rounded as the scalar kernels' stores round."""
    unit = f"({index}) >> {width.bit_length() - 1}"
    if dtype == dtypes.bfloat16:
        lanes = ", ".join(f"netcl_bf16_store(netcl_v.s{lane:x})" for lane in range(width))
        return (f"{{ const float{width} netcl_v = {value}; "
                f"((__global ushort{width}*)({ptr}))[{unit}] = (ushort{width})({lanes}); }}")
    if dtype == dtypes.float16:
        return f"((__global ushort{width}*)({ptr}))[{unit}] = netcl_f16_pack{width}({value});"
    return f"((__global float{width}*)({ptr}))[{unit}] = {value};"


def _f16_helpers(width):
    """float16 lanes converted one by one with the scalar builtins the scalar kernels call
    (vload_half, vstore_half), through private words: a vector builtin may convert NaNs
    to other bits (PoCL's vstorea_halfN does)."""
    lanes = ", ".join(f"vload_half({lane}, (__private const half*)b)" for lane in range(width))
    stores = " ".join(f"vstore_half(v.s{lane:x}, {lane}, (__private half*)b);"
                      for lane in range(width))
    return f"""#ifndef NETCL_F16_LANES{width}
#define NETCL_F16_LANES{width}
inline float{width} netcl_f16_unpack{width}(const ushort{width} h) {{
  ushort b[{width}]; vstore{width}(h, 0, b); return (float{width})({lanes});
}}
inline ushort{width} netcl_f16_pack{width}(const float{width} v) {{
  ushort b[{width}]; {stores} return vload{width}(0, b);
}}
#endif
"""


def with_helpers(source):
    """`source` with the helper functions it calls (the float16 lane conversions)."""
    for width in (2, 4, 8):
        if f"netcl_f16_unpack{width}(" in source or f"netcl_f16_pack{width}(" in source:
            source = _f16_helpers(width) + source
    return source


def vector_source(dtype, classes, width, window_dimensions, epilogue=None):
    """window_reduce and window_select_scatter_all over vectors of `width` lanes along the
    trivial last dim (`vector_width`), with the scalar kernels' arguments; each work-item
    computes `width` consecutive results, so m[WM_TOTAL] counts vectors. The window
    dimensions are part of the source (the loops over a window unroll: its loads issue
    together rather than one after another). With `epilogue` (parameter declarations,
    element(f) -> code storing the float{width} `acc` as the elements from dense flat index
    f), only window_select_scatter_epilogue."""
    R = len(classes)
    S = kernels.storage_ctype(dtype)
    T, I = f"float{width}", f"int{width}"
    defs, prologue = _window_prologue(R, {"win": tuple(window_dimensions)})
    ld = lambda p, i: vload(dtype, width, p, i)  # noqa: E731
    # NaNs are found on the bits, as the scalar kernels do (see window_kernels.py)
    nanbits = f"((as_uint{width}(v) & 0x7fffffffu) > 0x7f800000u)"
    init = f"(({T})(op == 0 ? 0.0f : (op == 1 ? -INFINITY : INFINITY)))"
    head = f"""  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i * {width};
{_decompose(R, "y", "WA_OUT")}"""
    # s: per lane, the dense flat index of lane 0's element at the window position the lane
    # selects (the lane's own element is that plus the lane number): every lane walks the
    # same positions, so the scalar kernel's first-maximum and first-NaN rules hold per lane
    select_body = lambda a, f: (  # noqa: E731
        f"const {T} v = {ld('x', a)}; const {I} take = op == 1 ? v > best : v < best; "
        f"best = select(best, v, take); s = select(s, ({I})({f}), take); fv = min(fv, {f}); "
        f"sn = select(sn, ({I})({f}), (sn < 0) & {nanbits});")
    select_head = f"""{head}  {T} best = {init};
  {I} s = ({I})(-1), sn = ({I})(-1);
  int fv = INT_MAX;
{_window_code(classes, select_body, flat=True)}
  if (fv != INT_MAX) s = select(s, ({I})(fv), s < 0);
  s = select(s, sn, sn >= 0);
"""

    def tiled_scatter_kernel(name, params, element):
        """As window_kernels.py's: windows tiling the operand write all their elements."""
        sa = "soff" + "".join(f" + y{d} * WA_SS({d})" for d in range(R))
        store = lambda a, f: (  # noqa: E731
            f"{{ const {T} acc = select(({T})(0.0f), sv, ({I})({f}) == s); {element(f)} }}")
        return f"""__kernel void {name}({params}__global const {S}* src, __global const {S}* x,
    __constant int* m, const int op) {{
{select_head}  const {T} sv = {ld("src", sa)};
  {{
{_window_code(classes, store, flat=True)}
  }}
}}
"""

    if epilogue is not None:
        params, element = epilogue
        return with_helpers(_NDIV + defs + tiled_scatter_kernel(
            "window_select_scatter_epilogue", params, element))
    reduce_body = lambda a, f: (  # noqa: E731
        f"const {T} v = {ld('x', a)}; acc = op == 0 ? acc + v : "
        f"(op == 1 ? select(acc, v, v > acc) : select(acc, v, v < acc)); nf |= {nanbits};")
    scatter_all = tiled_scatter_kernel(
        "window_select_scatter_all", f"__global {S}* out, ",
        lambda f: vstore(dtype, width, "out", f, "acc"))
    return with_helpers(f"""{_NDIV}{defs}
__kernel void window_reduce(__global {S}* out, __global const {S}* x, __constant int* m,
                            const int op) {{
{head}  {T} acc = {init};
  {I} nf = ({I})(0);
{_window_code(classes, reduce_body)}
  if (op != 0) acc = select(acc, ({T})(NAN), nf);
  {vstore(dtype, width, "out", f"i * {width}", "acc")}
}}

{scatter_all}""")
