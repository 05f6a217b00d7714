"""The window kernels (reduce_window_{sum,max,min}, select_and_scatter_add,
select_and_gather_add) and their launchers. Sources are generated per operand rank and per-dim
class (`_window_classes`), so trivial dims cost nothing and VALID-style windows need no bounds
checks. Where the last dim is trivial and aligned, window_reduce and the tiled select-scatter
run in their vector forms (window_vectors.py).

Performance notes (PoCL on x86): isnan() is an out-of-line call that keeps the pooling
loops from vectorising, so NaNs are detected on the bits; metadata is read into private
constants once per work-item (loads inside loops are not hoisted)."""
import numpy as np

from ...core import commands, dtypes, kernels
from ...core.array import Array
from ...core.shapes import contiguous_strides, prod
from .dimension_numbers import _dilate
from .kernel_metadata import _INDEX_LIMIT, _NDIV, _const_buffer, _magic

_MAX_WINDOW_RANK = 8
_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")


# metadata: rank, offsets of the two inputs, then per-dim arrays of 8
_WM_ARRAYS = ("in", "out", "win", "st", "pl", "bd", "wd", "xs", "ss", "xd", "od",
              "inm", "ins", "outm", "outs", "stm", "sts", "bdm", "bds")
_WM_SCALARS = ("rank", "xoff", "soff", "total", "wsize", "nodil")


def _window_meta(x_shape, out_shape, params, x_layout, s_layout=None):
    R = len(x_shape)
    pad8 = lambda v, fill: list(v) + [fill] * (_MAX_WINDOW_RANK - len(v))  # noqa: E731
    arrays = {
        "in": pad8(x_shape, 1), "out": pad8(out_shape, 1),
        "win": pad8(params["window_dimensions"], 1), "st": pad8(params["window_strides"], 1),
        "pl": pad8([lo for lo, _ in params["padding"]], 0),
        "bd": pad8(params["base_dilation"], 1), "wd": pad8(params["window_dilation"], 1),
        "xs": pad8(x_layout[0], 0), "ss": pad8(s_layout[0] if s_layout else [0] * R, 0),
        "xd": pad8(contiguous_strides(x_shape), 0), "od": pad8(contiguous_strides(out_shape), 0),
    }
    for a in ("in", "out", "st", "bd"):
        arrays[a + "m"], arrays[a + "s"] = map(list, zip(*[_magic(v) for v in arrays[a]]))
    scal = dict(rank=R, xoff=x_layout[1], soff=s_layout[1] if s_layout else 0, total=0,
                wsize=prod(params["window_dimensions"]),
                nodil=int(all(b == 1 for b in params["base_dilation"])))
    return scal, arrays


def _window_meta_values(scal, arrays):
    return [scal[k] for k in _WM_SCALARS] + [v for a in _WM_ARRAYS for v in arrays[a]]


def _window_classes(x_shape, out_shape, params):
    """Per operand dim, how the kernels treat it (part of the kernel source):
    'T' trivial (window 1, stride 1, no padding/dilation: y == x), 'F'/'f' a window of one
    element (f: with base dilation), 'V' a window needing no bounds checks, 'L'/'l' a window
    with checks (l: with base dilation)."""
    cls = []
    for d, (n, o) in enumerate(zip(x_shape, out_shape)):
        w, st, lo = (params["window_dimensions"][d], params["window_strides"][d],
                     params["padding"][d][0])
        bd, wd = params["base_dilation"][d], params["window_dilation"][d]
        if w == 1:
            if st == 1 and lo == 0 and bd == 1 and n == o:
                cls.append("T")
            else:
                cls.append("F" if bd == 1 else "f")
        elif bd == 1 and lo == 0 and (o == 0 or (o - 1) * st + (w - 1) * wd < n):
            cls.append("V")
        else:
            cls.append("L" if bd == 1 else "l")
    return "".join(cls)


def _window_prologue(R, fixed=None):
    """(#defines naming the metadata, the kernel prologue) for operand rank R. Every metadata
    value is read once into a private constant (loads from m inside the loops are not hoisted
    by PoCL's compiler and cost a load per use); unused ones are dropped. `fixed` ({array
    name: its values}, as "win": the window dimensions) writes those into the source
    instead: loops of a known trip count unroll, and their loads issue together."""
    fixed = fixed or {}
    defs = "".join(f"#define WM_{k.upper()} {i}\n" for i, k in enumerate(_WM_SCALARS))
    base = len(_WM_SCALARS)
    defs += "".join(f"#define WA_{k.upper()}(d) wa_{k}_##d\n" for k in _WM_ARRAYS)
    prologue = "".join(
        f"  const int wa_{k}_{d} = "
        f"{fixed[k][d] if k in fixed else f'm[{base + 8 * i + d}]'};\n"
        for i, k in enumerate(_WM_ARRAYS) for d in range(R))
    prologue += "  const int xoff = m[WM_XOFF], soff = m[WM_SOFF];\n"
    return defs, prologue


def _decompose(R, var, size):
    """Code splitting `rem` (a dense flat index) into coordinates {var}0 .. {var}{R-1} of the
    shape WA_{size}."""
    out = []
    for d in range(R - 1, 0, -1):
        out.append(f"  const int {var}{d}_q = NDIV(rem, {size}M({d}), {size}S({d}));\n"
                   f"  const int {var}{d} = rem - {var}{d}_q * {size}({d}); "
                   f"rem = {var}{d}_q;\n")
    out.append(f"  const int {var}0 = rem;\n")
    return "".join(out)


def _position(classes, d, ind, k, skip):
    """Code computing p{d} (operand coordinate) of window offset k; `skip` leaves."""
    c = classes[d]
    code = [f"{ind}int p{d} = y{d} * WA_ST({d}){k} - WA_PL({d});"]
    if c in "fl":
        code.append(f"{ind}if (p{d} < 0) {skip[0]}")
        code.append(f"{ind}{{ const int q = NDIV(p{d}, WA_BDM({d}), WA_BDS({d})); "
                    f"if (p{d} != q * WA_BD({d})) {skip[0]} p{d} = q; }}")
        code.append(f"{ind}if (p{d} >= WA_IN({d})) {skip[1]}")
    elif c in "FL":
        code.append(f"{ind}if (p{d} < 0) {skip[0]}")
        code.append(f"{ind}if (p{d} >= WA_IN({d})) {skip[1]}")
    return code


def _window_code(classes, body, flat=False):
    """Loops over the window of output y (coordinates y0, y1, ...): body(a, f) runs per
    window element, a = its operand offset, f = its dense flat index (with `flat`)."""
    R = len(classes)
    code = ["  int a = xoff, f = 0, ok = 1;"]
    for d in range(R):
        c = classes[d]
        if c == "T":
            code.append(f"  a += y{d} * WA_XS({d});" + (f" f += y{d} * WA_XD({d});"
                                                       if flat else ""))
        elif c in "Ff":
            code.append("  do {")
            code += _position(classes, d, "    ", "",
                              ("{ ok = 0; break; }", "{ ok = 0; break; }"))
            code.append(f"    a += p{d} * WA_XS({d});" + (f" f += p{d} * WA_XD({d});"
                                                          if flat else ""))
            code.append("  } while (0);")
    code.append("  if (ok) {")
    ind, prev_a, prev_f = "    ", "a", "f"
    loops = [d for d in range(R) if classes[d] in "VLl"]
    for d in loops:
        code.append(f"{ind}for (int k{d} = 0; k{d} < WA_WIN({d}); ++k{d}) {{")
        ind += "  "
        code += _position(classes, d, ind, f" + k{d} * WA_WD({d})", ("continue;", "break;"))
        code.append(f"{ind}const int a{d} = {prev_a} + p{d} * WA_XS({d});")
        prev_a = f"a{d}"
        if flat:
            code.append(f"{ind}const int f{d} = {prev_f} + p{d} * WA_XD({d});")
            prev_f = f"f{d}"
    code.append(f"{ind}{body(prev_a, prev_f)}")
    for _ in loops:
        ind = ind[:-2]
        code.append(f"{ind}}}")
    code.append("  }")
    return "\n".join(code)


def _window_source(dtype, classes, epilogue=None):
    """The window kernels for one operand rank and dim classes (`_window_classes`); with
    `epilogue` (parameter declarations, element(f) -> code), only the tiled select-scatter
    kernel `window_select_scatter_epilogue` running that code per element."""
    R = len(classes)
    S = kernels.storage_ctype(dtype)
    T = kernels.compute_ctype(dtype)
    isf = dtypes.kind(dtype) == "f"
    ld = lambda p, i: kernels.load(dtype, p, i)  # noqa: E731
    defs, prologue = _window_prologue(R)
    # NaN handling without isnan() (an out-of-line call on PoCL that keeps these loops
    # scalar): a NaN anywhere in a max/min window wins (sticky flag / first NaN index).
    if dtype == dtypes.float64:
        nanbits = "((as_ulong(v) & 0x7fffffffffffffffUL) > 0x7ff0000000000000UL)"
    else:
        nanbits = "((as_uint(v) & 0x7fffffffu) > 0x7f800000u)"
    if isf:
        init = f"(op == 0 ? ({T})0 : (op == 1 ? -({T})INFINITY : ({T})INFINITY))"
        combine = (f"acc = op == 0 ? acc + v : (op == 1 ? (v > acc ? v : acc) : "
                   f"(v < acc ? v : acc)); nf |= {nanbits};")
        nan_select = f" if (sn < 0 && {nanbits}) sn = FLAT;"
        finish_reduce = f"  if (op != 0 && nf) acc = ({T})NAN;\n"
        finish_select = "  if (s < 0 && fv != INT_MAX) s = fv;\n  if (sn >= 0) s = sn;\n"
    else:
        init = "(op == 0 ? 0 : (op == 1 ? INT_MIN : INT_MAX))"
        combine = "acc = op == 0 ? acc + v : (op == 1 ? max(acc, v) : min(acc, v));"
        nan_select = finish_reduce = ""
        finish_select = "  if (s < 0 && fv != INT_MAX) s = fv;\n"
    better = "(op == 1 ? v > best : v < best)"
    decompose = lambda var, size: _decompose(R, var, size)  # noqa: E731
    window_code = lambda body, flat=False: _window_code(classes, body, flat)  # noqa: E731

    reduce_body = lambda a, f: f"const {T} v = {ld('x', a)}; {combine}"  # noqa: E731
    select_body = lambda a, f: (f"const {T} v = {ld('x', a)}; "  # noqa: E731
                                f"const int take = {better}; "
                                f"best = take ? v : best; s = take ? {f} : s; fv = min(fv, {f});"
                                + nan_select.replace("FLAT", f))
    # scatter: operand element x lies in window y at offset k when y*st + k*wd - pl = x*bd
    sc = ["  int yf = 0, sa = soff, ok = 1;"]
    for d in range(R):
        c = classes[d]
        if c == "T":
            sc.append(f"  yf += x{d} * WA_OD({d}); sa += x{d} * WA_SS({d});")
        elif c in "Ff":
            sc.append("  do {")
            sc.append(f"    const int t = x{d} * WA_BD({d}) + WA_PL({d});")
            sc.append("    if (t < 0) { ok = 0; break; }")
            sc.append(f"    const int y = NDIV(t, WA_STM({d}), WA_STS({d}));")
            sc.append(f"    if (t != y * WA_ST({d}) || y >= WA_OUT({d})) {{ ok = 0; break; }}")
            sc.append(f"    yf += y * WA_OD({d}); sa += y * WA_SS({d});")
            sc.append("  } while (0);")
    sc.append("  if (ok) {")
    ind, prev_y, prev_s = "    ", "yf", "sa"
    loops = [d for d in range(R) if classes[d] in "VLl"]
    for d in loops:
        sc.append(f"{ind}for (int k{d} = 0; k{d} < WA_WIN({d}); ++k{d}) {{")
        ind += "  "
        # branch-free (the taken/not-taken pattern is data-dependent): invalid offsets
        # read element 0 and are masked out
        sc.append(f"{ind}const int t{d} = x{d} * WA_BD({d}) + WA_PL({d}) - k{d} * WA_WD({d});")
        sc.append(f"{ind}if (t{d} < 0) break;")
        sc.append(f"{ind}const int y{d} = NDIV(t{d}, WA_STM({d}), WA_STS({d}));")
        prev_ok = "1" if prev_y == "yf" else f"ok{prev_y[2:]}"
        sc.append(f"{ind}const int ok{d} = {prev_ok} & (t{d} == y{d} * WA_ST({d})) & "
                  f"(y{d} < WA_OUT({d}));")
        sc.append(f"{ind}const int yf{d} = {prev_y} + y{d} * WA_OD({d});")
        sc.append(f"{ind}const int sa{d} = {prev_s} + y{d} * WA_SS({d});")
        prev_y, prev_s = f"yf{d}", f"sa{d}"
    if loops:
        okv = f"ok{loops[-1]}"
        sc.append(f"{ind}{{ const {T} sv = {ld('src', f'({okv} ? {prev_s} : soff)')}; "
                  f"acc += ({okv} && sel[{okv} ? {prev_y} : 0] == i) ? sv : ({T})0; }}")
    else:
        sc.append(f"{ind}if (sel[{prev_y}] == i) acc += {ld('src', prev_s)};")
    for _ in loops:
        ind = ind[:-2]
        sc.append(f"{ind}}}")
    sc.append("  }")
    scatter_code = "\n".join(sc)
    gather_addr = "".join(f"    {{ const int q = NDIV(s, WA_INM({d}), WA_INS({d})); "
                          f"addr += (s - q * WA_IN({d})) * WA_SS({d}); s = q; }}\n"
                          for d in range(R - 1, -1, -1))
    # the start of every select kernel: s = dense flat index of what window i selects
    select_head = f"""  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("y", "WA_OUT")}  {T} best = {init};
  int s = -1, sn = -1, fv = INT_MAX;
{window_code(select_body, flat=True)}
{finish_select}"""

    def tiled_scatter_kernel(name, params, element):
        """Windows that tile the operand exactly: each writes all its elements (element(f):
        the code storing dense flat index f, where `acc` is src[y] if f is the one selected
        and 0 if not), so no zero-fill pass is needed."""
        sa = "soff" + "".join(f" + y{d} * WA_SS({d})" for d in range(R))
        store = lambda a, f: f"{{ const {T} acc = {f} == s ? sv : ({T})0; {element(f)} }}"  # noqa: E731
        return f"""__kernel void {name}({params}__global const {S}* src, __global const {S}* x,
    __constant int* m, const int op) {{
{select_head}  const {T} sv = {ld("src", sa)};
  {{
{window_code(store, flat=True)}
  }}
}}
"""

    if epilogue is not None:
        params, element = epilogue
        return _NDIV + defs + tiled_scatter_kernel("window_select_scatter_epilogue", params,
                                                   element)
    scatter_all = tiled_scatter_kernel("window_select_scatter_all", f"__global {S}* out, ",
                                       lambda f: kernels.store(dtype, "out", f, "acc"))
    return f"""{_NDIV}{defs}
__kernel void window_reduce(__global {S}* out, __global const {S}* x, __constant int* m,
                            const int op) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("y", "WA_OUT")}  {T} acc = {init};
  uint nf = 0;
{window_code(reduce_body)}
{finish_reduce}  {kernels.store(dtype, "out", "i", "acc")}
}}

/* for each window: the dense flat index of the selected operand element, -1 if none */
__kernel void window_select(__global int* sel, __global const {S}* x, __constant int* m,
                            const int op) {{
{select_head}  sel[i] = s;
}}

/* non-overlapping windows: out (zero-filled) [selected element of y] = src[y] */
__kernel void window_select_scatter(__global {S}* out, __global const {S}* src,
                                    __global const {S}* x, __constant int* m, const int op) {{
{select_head}  if (s >= 0) {{
    const int sa = soff{"".join(f" + y{d} * WA_SS({d})" for d in range(R))};
    {kernels.store(dtype, "out", "s", ld("src", "sa"))}
  }}
}}

{scatter_all}
/* out[x] = sum of src[y] over the windows y that selected x (a gather: no atomics) */
__kernel void window_scatter(__global {S}* out, __global const {S}* src,
                             __global const int* sel, __constant int* m) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int rem = i;
{decompose("x", "WA_IN")}  {T} acc = 0;
{scatter_code}
  {kernels.store(dtype, "out", "i", "acc")}
}}

/* out[y] = t[selected element of window y] (0 if none) */
__kernel void window_gather(__global {S}* out, __global const {S}* t,
                            __global const int* sel, __constant int* m) {{
  const int i = get_global_id(0);
  if (i >= m[WM_TOTAL]) return;
{prologue}  int s = sel[i];
  {T} v = 0;
  if (s >= 0) {{
    int addr = soff;
{gather_addr}    v = {ld("t", "addr")};
  }}
  {kernels.store(dtype, "out", "i", "v")}
}}
"""


def _window_program(dtype, classes, window_dimensions, arrays):
    """(lanes per work-item, source) of the window kernels over these operands: the vector
    kernels (window_vectors.py) where `vector_width` allows them, else the scalar ones.
    Their results are the same; only window_reduce and window_select_scatter_all have a
    vector form."""
    from .window_vectors import vector_source, vector_width
    width = vector_width(dtype, classes, arrays)
    if width > 1:
        return width, vector_source(dtype, classes, width, window_dimensions)
    return 1, _window_source(dtype, classes)


def _window_params(params):
    return {k: params[k] for k in _WINDOW_PARAMS}


def _new_out_fn(device, shape, dtype, weak):
    from ...core.pool import Storage
    strides = contiguous_strides(shape)
    nbytes = prod(shape) * dtype.itemsize
    pool = device.pool

    def new_out():
        st = Storage(pool, nbytes)
        return Array(device, st.buf, st, shape, dtype, strides, 0, weak, True)
    return new_out


def _check_window_sizes(name, *shapes):
    for s in shapes:
        if prod(s) > _INDEX_LIMIT:
            raise ValueError(f"{name}: an array of shape {tuple(s)} exceeds the kernels' 2^31 "
                             "index limit")


def _reduce_window_launcher(op):
    code = {"sum": 0, "max": 1, "min": 2}[op]

    def make(device, args, params, out_aval):
        (x,) = args
        _check_window_sizes("reduce_window_" + op, x.shape, out_aval.shape)
        new_out = _new_out_fn(device, out_aval.shape, out_aval.dtype, out_aval.weak_type)
        n = prod(out_aval.shape)
        if n == 0:
            return lambda x: new_out()
        scal, arrays = _window_meta(x.shape, out_aval.shape, params, (x.strides, x.offset))
        classes = _window_classes(x.shape, out_aval.shape, params)
        width, src = _window_program(x.dtype, classes, params["window_dimensions"],
                                     [(x.shape, x.strides, x.offset)])
        scal["total"] = n // width
        k = kernels.kernel(device, src, "window_reduce")
        meta = _const_buffer(device, _window_meta_values(scal, arrays))
        k.set_arg(2, meta)
        k.set_arg(3, np.int32(code))
        k._netcl_meta = meta
        gsize, lsize = kernels.grid_1d(device, n // width)
        queue, enqueue = device.queue, commands.launch

        def launch(x):
            out = new_out()
            k.set_arg(0, out._buf)
            k.set_arg(1, x._buf)
            enqueue(queue, k, gsize, lsize)
            return out
        return launch
    return make


def _windows_tile(x_shape, out_shape, params):
    """Whether the windows cover every operand element exactly once (stride == window, no
    padding or dilation, no remainder), as 2x2 max-pooling with stride 2 on even sizes."""
    return all(
        w == st and lo == hi == 0 and bd == 1 and (w == 1 or wd == 1) and o * st == n
        for n, o, w, st, (lo, hi), bd, wd in zip(
            x_shape, out_shape, params["window_dimensions"], params["window_strides"],
            params["padding"], params["base_dilation"], params["window_dilation"]))


def _fill_pattern(nbytes):
    """The widest zero pattern (up to 16 bytes) dividing nbytes: NVIDIA's driver fills a
    1-byte pattern far below copy speed, a wide one near it."""
    for width in (16, 8, 4, 2):
        if nbytes % width == 0:
            return np.zeros(width, np.uint8)
    return np.uint8(0)


def _select_kernel(device, operand, out_shape, params, select):
    """(kernel computing the selected flat index per window, its grid, the window count)."""
    scal, arrays = _window_meta(operand.shape, out_shape, params,
                                (operand.strides, operand.offset))
    n = prod(out_shape)
    scal["total"] = n
    classes = _window_classes(operand.shape, out_shape, params)
    k = kernels.kernel(device, _window_source(operand.dtype, classes), "window_select")
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    k.set_arg(2, meta)
    k.set_arg(3, np.int32(1 if select == "ge" else 2))
    k._netcl_meta = meta
    return k, kernels.grid_1d(device, max(n, 1)), n


def _select_and_scatter_add_launcher(device, args, params, out_aval):
    import pyopencl as cl
    from ...core.pool import Storage
    source, operand = args
    wp = _window_params(params)
    out_shape = source.shape
    _check_window_sizes("select_and_scatter_add", operand.shape, source.shape)
    new_out = _new_out_fn(device, out_aval.shape, out_aval.dtype, out_aval.weak_type)
    n_in = prod(operand.shape)
    n_out = prod(out_shape)
    if n_in == 0:
        return lambda s, x: new_out()
    queue, enqueue, pool = device.queue, commands.launch, device.pool
    classes = _window_classes(operand.shape, out_shape, wp)
    src = _window_source(source.dtype, classes)
    disjoint = all(st >= _dilate(w, wd) for w, st, wd in zip(
        wp["window_dimensions"], wp["window_strides"], wp["window_dilation"]))
    if disjoint:
        # every operand element is in at most one window: each window writes its source value
        # to the element it selects (one pass, no index buffer); where the windows tile the
        # operand it also writes the zeros, else a fill comes first
        scal, arrays = _window_meta(operand.shape, out_shape, wp,
                                    (operand.strides, operand.offset),
                                    (source.strides, source.offset))
        tiled = n_out and _windows_tile(operand.shape, out_shape, wp)
        width = 1
        if tiled and operand.dtype == source.dtype:
            width, src = _window_program(source.dtype, classes, wp["window_dimensions"], [
                (operand.shape, operand.strides, operand.offset),
                (source.shape, source.strides, source.offset)])
        scal["total"] = n_out // width
        kss = kernels.kernel(device, src, "window_select_scatter_all" if tiled
                             else "window_select_scatter")
        meta = _const_buffer(device, _window_meta_values(scal, arrays))
        kss.set_arg(3, meta)
        kss.set_arg(4, np.int32(1 if params["select"] == "ge" else 2))
        kss._netcl_meta = meta
        g1, l1 = kernels.grid_1d(device, max(n_out // width, 1))
        nbytes = n_in * out_aval.dtype.itemsize
        zero = _fill_pattern(nbytes)

        def launch_disjoint(s, x):
            out = new_out()
            if not tiled:
                cl.enqueue_fill_buffer(queue, out._buf, zero, 0, nbytes)
            if n_out:
                kss.set_arg(0, out._buf)
                kss.set_arg(1, s._buf)
                kss.set_arg(2, x._buf)
                enqueue(queue, kss, g1, l1)
            return out
        return launch_disjoint
    ksel, (sg, sl), _ = _select_kernel(device, operand, out_shape, wp, params["select"])
    scal, arrays = _window_meta(operand.shape, out_shape, wp, (operand.strides, 0),
                                (source.strides, source.offset))
    scal["total"] = n_in
    ksc = kernels.kernel(device, src, "window_scatter")
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    ksc.set_arg(3, meta)
    ksc._netcl_meta = meta
    gsize, lsize = kernels.grid_1d(device, n_in)
    sel_bytes = max(n_out, 1) * 4

    def launch(s, x):
        out = new_out()
        sel = Storage(pool, sel_bytes)
        if n_out:
            ksel.set_arg(0, sel.buf)
            ksel.set_arg(1, x._buf)
            enqueue(queue, ksel, sg, sl)
        ksc.set_arg(0, out._buf)
        ksc.set_arg(1, s._buf)
        ksc.set_arg(2, sel.buf)
        enqueue(queue, ksc, gsize, lsize)
        return out
    return launch


def _select_and_gather_add_launcher(device, args, params, out_aval):
    from ...core.pool import Storage
    tangent, operand = args
    wp = _window_params(params)
    out_shape = out_aval.shape
    _check_window_sizes("select_and_gather_add", operand.shape, out_shape)
    new_out = _new_out_fn(device, out_shape, out_aval.dtype, out_aval.weak_type)
    n_out = prod(out_shape)
    if n_out == 0:
        return lambda t, x: new_out()
    ksel, (sg, sl), _ = _select_kernel(device, operand, out_shape, wp, params["select"])
    scal, arrays = _window_meta(operand.shape, out_shape, wp, (operand.strides, 0),
                                (tangent.strides, tangent.offset))
    scal["total"] = n_out
    classes = _window_classes(operand.shape, out_shape, wp)
    kga = kernels.kernel(device, _window_source(tangent.dtype, classes), "window_gather")
    meta = _const_buffer(device, _window_meta_values(scal, arrays))
    kga.set_arg(3, meta)
    kga._netcl_meta = meta
    queue, enqueue, pool = device.queue, commands.launch, device.pool

    def launch(t, x):
        out = new_out()
        sel = Storage(pool, n_out * 4)
        ksel.set_arg(0, sel.buf)
        ksel.set_arg(1, x._buf)
        enqueue(queue, ksel, sg, sl)
        kga.set_arg(0, out._buf)
        kga.set_arg(1, t._buf)
        kga.set_arg(2, sel.buf)
        enqueue(queue, kga, sg, sl)
        return out
    return launch
