"""Primitives of the random-number stack: the Threefry-2x32 block cipher and the bit-level
elementwise ops that turn its output into floats.

  threefry2x32(k1, k2, x1, x2) -> (y1, y2)   Threefry-2x32 with 20 rounds (Salmon et al.,
                                              "Parallel random numbers: as easy as 1, 2, 3",
                                              SC'11), exactly as JAX's `threefry2x32_p`: uint32
                                              operands, 0-d operands broadcast, others share a
                                              rank and broadcast size-1 dimensions.
  iota_2x32_shape(shape) -> (hi, lo)          the row-major flat index of every element as two
                                              uint32 words (JAX's counter layout; hi is 0 below
                                              2^32 elements, which netcl never exceeds)
  shift_left, shift_right_logical, shift_right_arithmetic
                                              XLA semantics: shift amounts >= 32 (as unsigned)
                                              give 0, or the sign fill for the arithmetic shift
  bitcast_convert_type(x, new_dtype)          reinterpret the bits (int32/uint32/float32)
  nextafter(x, y)                             next representable float after x toward y

Integer outputs have no derivative: jvp gives symbolic zeros, vjp gives None per input.
netcl.random builds PRNGKey/split/fold_in/bits/uniform/... from these (see its docstring).
"""
import numpy as np
import pyopencl as cl

from ..core import commands, dtypes, float8, kernels
from ..core.ad_util import Zero, defjvp, defvjp
from ..core.array import Array
from ..core.codegen import HELPERS, input_kind, make_elementwise_launcher, render_elementwise
from ..core.shapes import canonical_shape, prod
from ..core.tracing import Primitive, ShapedArray
from .elementwise import by_kind

__all__ = ["threefry2x32", "iota_2x32_shape", "shift_left", "shift_right_logical",
           "shift_right_arithmetic", "bitcast_convert_type", "nextafter"]

_U32 = dtypes.uint32
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA  # Skein key-schedule parity constant for 32-bit words


# ---- threefry2x32: the cipher ---------------------------------------------------------------

def threefry_body(k0, k1, x0, x1, prefix="t"):
    """The cipher as straight-line SSA statements [(var, "uint", expr)] over the C
    expressions k0, k1, x0, x1; returns (statements, y0_var, y1_var).

    5 groups of 4 rounds (a += b; b = rotl(b, r) ^ a), each group followed by a key
    injection (a += ks[(g+1)%3]; b += ks[(g+2)%3] + g+1). Rotations are written as shifts:
    PoCL vectorizes those across work-items but not the rotate() builtin, and
    GPU compilers turn either into one funnel shift."""
    body = [(f"{prefix}k2", "uint", f"({k0}) ^ ({k1}) ^ 0x{_PARITY:08X}u"),
            (f"{prefix}a0", "uint", f"({x0}) + ({k0})"),
            (f"{prefix}b0", "uint", f"({x1}) + ({k1})")]
    ks = (f"({k0})", f"({k1})", f"{prefix}k2")
    a, b, n = f"{prefix}a0", f"{prefix}b0", 0
    for g in range(5):
        for r in _ROTATIONS[g % 2]:
            n += 1
            body.append((f"{prefix}a{n}", "uint", f"{a} + {b}"))
            body.append((f"{prefix}b{n}", "uint",
                         f"(({b} << {r}u) | ({b} >> {32 - r}u)) ^ {prefix}a{n}"))
            a, b = f"{prefix}a{n}", f"{prefix}b{n}"
        body.append((f"{prefix}a{n}k", "uint", f"{a} + {ks[(g + 1) % 3]}"))
        body.append((f"{prefix}b{n}k", "uint", f"{b} + {ks[(g + 2) % 3]} + {g + 1}u"))
        a, b = f"{prefix}a{n}k", f"{prefix}b{n}k"
    return body, a, b


threefry2x32_p = Primitive("threefry2x32", multiple_results=True, fusion="opaque")


def _broadcast_shape(name, avals):
    """JAX's rule for threefry2x32: 0-d operands broadcast; the others must have one rank,
    and each dimension agrees or is 1."""
    shapes = [tuple(a.shape) for a in avals if a.shape]
    if not shapes:
        return ()
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise ValueError(f"{name}: operands must be 0-d or share one rank, got shapes "
                         f"{', '.join(str(tuple(a.shape)) for a in avals)}")
    out = []
    for dims in zip(*shapes):
        big = {d for d in dims if d != 1}
        if len(big) > 1:
            raise ValueError(f"{name}: shapes {', '.join(str(tuple(a.shape)) for a in avals)} "
                             "do not broadcast (each dimension must agree or be 1)")
        out.append(big.pop() if big else 1)
    return tuple(out)


def _threefry_abstract(k1, k2, x1, x2):
    avals = (k1, k2, x1, x2)
    if any(a.dtype != _U32 for a in avals):
        raise TypeError("threefry2x32: operands must be uint32, got dtypes "
                        f"{', '.join(str(a.dtype) for a in avals)}")
    shape = _broadcast_shape("threefry2x32", avals)
    return (ShapedArray(shape, _U32), ShapedArray(shape, _U32))


def _strided_meta(device, shape, strided):
    vals = list(shape)
    for x in strided:
        vals += [st if d != 1 else 0 for st, d in zip(x.strides, x.shape)]
    host = np.array(vals or [0], dtype=np.int32)
    return cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                     hostbuf=host)


def _threefry_launcher(device, args, params, out_avals):
    shape = out_avals[0].shape
    n = prod(shape)
    if n >= 2**31:
        raise ValueError(f"threefry2x32: {n} elements exceed the 2^31 index limit")

    def empties():
        return (Array.empty(device, shape, _U32), Array.empty(device, shape, _U32))

    if n == 0:
        return lambda *xs: empties()
    kinds = [input_kind(x, shape) for x in args]
    body, y0, y1 = threefry_body("x0", "x1", "x2", "x3")
    src = render_elementwise("threefry2x32", [(_U32, k) for k in kinds], body,
                             [(_U32, y0), (_U32, y1)])
    k = kernels.kernel(device, src, "threefry2x32")
    k.set_arg(2, np.int32(n))
    for j, x in enumerate(args):
        k.set_arg(4 + 2 * j, np.int32(x.offset))
    strided = [x for x, kind in zip(args, kinds) if kind == "g"]
    if strided:
        meta = _strided_meta(device, shape, strided)
        k.set_arg(11, meta)
        k.set_arg(12, np.int32(len(shape)))
        k._netcl_meta = meta  # keep the buffer alive as long as the kernel
    gsize, lsize = kernels.grid_1d(device, n)
    queue, set_arg, enqueue = device.queue, k.set_arg, commands.launch

    def launch(k1, k2, x1, x2):
        y1, y2 = empties()
        set_arg(0, y1._buf)
        set_arg(1, y2._buf)
        set_arg(3, k1._buf)
        set_arg(5, k2._buf)
        set_arg(7, x1._buf)
        set_arg(9, x2._buf)
        enqueue(queue, k, gsize, lsize)
        return y1, y2
    return launch


def _rotl(x, r):
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def _threefry_ref(k1, k2, x1, x2):
    """NumPy reference, written as the looped key schedule (independent of the C code)."""
    k1, k2, x1, x2 = (np.asarray(a, np.uint32) for a in np.broadcast_arrays(k1, k2, x1, x2))
    with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as in the kernel
        ks = [k1, k2, k1 ^ k2 ^ np.uint32(_PARITY)]
        x = [x1 + ks[0], x2 + ks[1]]
        for g in range(5):
            for r in _ROTATIONS[g % 2]:
                x[0] = x[0] + x[1]
                x[1] = _rotl(x[1], r) ^ x[0]
            x[0] = x[0] + ks[(g + 1) % 3]
            x[1] = x[1] + ks[(g + 2) % 3] + np.uint32(g + 1)
    return np.asarray(x[0], np.uint32), np.asarray(x[1], np.uint32)


def _threefry_jvp(primals, tangents):
    outs = threefry2x32_p.bind(*primals)
    return outs, tuple(Zero(ShapedArray(o.shape, o.dtype)) for o in outs)


def _threefry_vjp(cts, outs, k1, k2, x1, x2):
    return (None, None, None, None)


def _threefry_batch(args, dims):
    """Like JAX's defbroadcasting: batch axes to the front; a batched 0-d operand becomes
    (B, 1, ..., 1), an unbatched operand of full rank gets a leading 1, unbatched 0-d
    operands stay 0-d."""
    from .views import move_batch_axis, reshape
    rank = max(a.ndim - (d is not None) for a, d in zip(args, dims))
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    moved = []
    for a, d in zip(args, dims):
        if d is None:
            moved.append(a if a.ndim == 0 else reshape(a, (1,) + tuple(a.shape)))
            continue
        a = move_batch_axis(a, d, 0)
        core = tuple(a.shape[1:])
        moved.append(reshape(a, (size,) + ((1,) * rank if not core else core)))
    return threefry2x32_p.bind(*moved), (0, 0)


threefry2x32_p.abstract_eval = _threefry_abstract
threefry2x32_p.make_launcher = _threefry_launcher
threefry2x32_p.reference = _threefry_ref
threefry2x32_p.jvp = _threefry_jvp
threefry2x32_p.vjp = _threefry_vjp
threefry2x32_p.batch = _threefry_batch


def threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32 (20 rounds) of the counter pair (x1, x2) under the key (k1, k2).

    All operands uint32; 0-d operands broadcast against the others. Returns (y1, y2).

    >>> threefry2x32(*(netcl.numpy.array(0, netcl.uint32),) * 4)   # (0x6b200159, 0x99ba4efe)
    """
    return tuple(threefry2x32_p.bind(k1, k2, x1, x2))


# ---- iota_2x32_shape: counters ----------------------------------------------------------------

counter_iota_p = Primitive("counter_iota", fusion="opaque")
_IOTA_SRC = """
__kernel void counter_iota(__global uint* out, const int n) {
  const int i = get_global_id(0);
  if (i < n) out[i] = (uint)i;
}
"""


def _counter_abstract(*, shape, device=None):
    return ShapedArray(shape, _U32)


def _counter_launcher(device, args, params, out_aval):
    shape = out_aval.shape
    n = prod(shape)
    if n >= 2**31:
        raise ValueError(f"iota_2x32_shape: {n} elements exceed the 2^31 index limit")
    # `device`: the device param, or the default device the eager cache keyed this
    # operand-less launcher by (so a compiled plan keeps it on its device)
    if n == 0:
        return lambda: Array.empty(device, shape, _U32)
    k = kernels.kernel(device, _IOTA_SRC, "counter_iota")
    k.set_arg(1, np.int32(n))
    gsize, lsize = kernels.grid_1d(device, n)

    def launch():
        out = Array.empty(device, shape, _U32)
        k.set_arg(0, out._buf)
        commands.launch(device.queue, k, gsize, lsize)
        return out
    return launch


counter_iota_p.abstract_eval = _counter_abstract
counter_iota_p.make_launcher = _counter_launcher
counter_iota_p.reference = lambda *, shape, device=None: \
    np.arange(prod(shape), dtype=np.uint32).reshape(shape)
counter_iota_p.jvp = lambda primals, tangents, **params: (
    counter_iota_p.bind(**params), Zero(_counter_abstract(**params)))
counter_iota_p.vjp = lambda ct, out, **params: ()


def iota_2x32_shape(shape, device=None):
    """(hi, lo): the row-major flat index of each element of `shape` as two uint32 words.

    JAX's counter layout for the partitionable threefry stream; hi is always 0 here (netcl
    arrays hold fewer than 2^31 elements) and is returned as a broadcast zero. `device`
    None means the default device when the counters are computed.
    """
    from .views import full
    shape = canonical_shape(shape, "iota_2x32_shape")
    lo = counter_iota_p.bind(shape=shape, device=device)
    return full(shape, 0, _U32, device=device), lo


# ---- elementwise bit ops ---------------------------------------------------------------------

def _ew_prim(name, nargs, kinds, template, reference):
    """An elementwise primitive over operands of equal shape and dtype (lax style)."""
    p = Primitive(name, fusion="elementwise")

    def abstract_eval(*args):
        if len(args) != nargs:
            raise TypeError(f"{name}: expected {nargs} operand(s), got {len(args)}")
        if any(a.shape != args[0].shape for a in args):
            raise ValueError(f"{name}: operands must have equal shapes, got "
                             f"{', '.join(str(tuple(a.shape)) for a in args)}")
        if any(a.dtype != args[0].dtype for a in args):
            raise TypeError(f"{name}: operands must have equal dtypes, got "
                            f"{', '.join(str(a.dtype) for a in args)}")
        if dtypes.kind(args[0].dtype) not in kinds:
            raise TypeError(f"{name}: dtype {args[0].dtype} is not supported")
        return ShapedArray(args[0].shape, args[0].dtype, all(a.weak_type for a in args))

    p.abstract_eval = abstract_eval
    p.lowering = by_kind(template) if isinstance(template, dict) else template
    p.reference = reference
    p.make_launcher = lambda device, args, params, out: make_elementwise_launcher(
        p, device, args, params, out)
    p.batch = _batch_elementwise(p)
    return p


def _batch_elementwise(prim):
    def rule(args, dims, **params):
        from .views import bdim_at_front
        batched = [(a, d) for a, d in zip(args, dims) if d is not None]
        d0 = batched[0][1]
        if len(batched) == len(args) and all(d == d0 for _, d in batched):
            return prim.bind(*args, **params), d0
        size = batched[0][0].shape[d0]
        return prim.bind(*[bdim_at_front(a, d, size) for a, d in zip(args, dims)], **params), 0
    return rule


def _narrow_shift_ref(kind, x, y):
    """Shifts of int4, ... as JAX's: on the width's bits (a count read as unsigned; the
    width or more shifts every bit out, or fills with the sign), wrapped to the width."""
    w = dtypes.SUBBYTE_BITS[x.dtype]
    v, s = x.astype(np.int64), y.astype(np.int64) & 0xFFFFFFFF
    bits = v & ((1 << w) - 1)
    if kind == "left":
        out = np.where(s < w, bits << np.minimum(s, w), 0)
    elif kind == "logical":
        out = np.where(s < w, bits >> np.minimum(s, w), 0)
    else:       # (the width's bits read as signed)
        sign = 1 << (w - 1)
        out = ((bits ^ sign) - sign) >> np.minimum(s, w - 1)
    return dtypes.wrap_ints(out, x.dtype).astype(x.dtype)


def _shift_ref(kind):
    def ref(x, y):
        if x.dtype in dtypes.SUBBYTE_BITS:
            return _narrow_shift_ref(kind, x, y)
        nbits = 8 * x.dtype.itemsize
        u, i = np.dtype(f"uint{nbits}"), np.dtype(f"int{nbits}")
        bits, s = x.view(u), y.view(u)
        big = s >= nbits
        safe = np.where(big, 0, s).astype(u)
        if kind == "left":
            out = np.where(big, u.type(0), bits << safe)
        elif kind == "logical":
            out = np.where(big, u.type(0), bits >> safe)
        else:
            out = (x.view(i) >> np.minimum(s, nbits - 1).astype(i)).view(u)
        return np.asarray(out, u).view(x.dtype)
    return ref


def _shift_templates(kind):
    """Shift templates of each integer width: a count of the width or more shifts every bit
    out (XLA's semantics; C leaves it undefined), read as unsigned so negatives count big.
    Operands are cast before as_type() and min(): under jit they may be int literals."""
    rows = {}
    for key, (i, u, n) in {"": ("int", "uint", 32), "64": ("long", "ulong", 64)}.items():
        fits = f"(({u}){{1}} < {n}u)"
        x, s = f"(({i}){{0}})", f"(({i}){{1}})"
        if kind == "left":
            rows["u" + key] = f"({fits} ? (({u}){{0}} << ({u}){{1}}) : ({u})0)"
            rows["i" + key] = f"({fits} ? as_{i}(as_{u}({x}) << as_{u}({s})) : ({i})0)"
        elif kind == "logical":
            rows["u" + key] = f"({fits} ? (({u}){{0}} >> ({u}){{1}}) : ({u})0)"
            rows["i" + key] = f"({fits} ? as_{i}(as_{u}({x}) >> as_{u}({s})) : ({i})0)"
        else:
            rows["u" + key] = f"as_{u}(as_{i}(({u}){{0}}) >> ({i})min(({u}){{1}}, ({u}){n - 1}))"
            rows["i" + key] = f"({x} >> ({i})min(as_{u}({s}), ({u}){n - 1}))"
    return rows


def _narrow_shift_template(kind, dtype):
    """The shift of int4, ... (held in an int or uint register, sign- or zero-extended) on
    the width's bits, as JAX shifts them; the store wraps the result to the width."""
    w = dtypes.SUBBYTE_BITS[dtype]
    r = "int" if dtypes.kind(dtype) == "i" else "uint"
    count = "as_uint((int){1})"
    bits = f"(as_uint((int){{0}}) & {(1 << w) - 1}u)"
    if kind == "left":
        return f"(({count} < {w}u) ? as_{r}({bits} << {count}) : ({r})0)"
    if kind == "logical":
        return f"(({count} < {w}u) ? as_{r}({bits} >> {count}) : ({r})0)"
    signed = f"(as_int({bits} << {32 - w}u) >> {32 - w})"
    return f"as_{r}({signed} >> (int)min({count}, {w - 1}u))"


def _shift_lowering(kind):
    """The shift's template for its operands' dtype: 32- and 64-bit rows, and the narrow
    integers' own (their width, not the register's, is what shifts)."""
    rows = by_kind(_shift_templates(kind))

    def lowering(in_dtypes, out_dtype, **params):
        if in_dtypes[0] in dtypes.SUBBYTE_BITS:
            return _narrow_shift_template(kind, in_dtypes[0])
        return rows(in_dtypes, out_dtype, **params)
    return lowering


shift_left_p = _ew_prim("shift_left", 2, "iu", _shift_lowering("left"), _shift_ref("left"))
shift_right_logical_p = _ew_prim("shift_right_logical", 2, "iu", _shift_lowering("logical"),
                                 _shift_ref("logical"))
shift_right_arithmetic_p = _ew_prim("shift_right_arithmetic", 2, "iu",
                                    _shift_lowering("arithmetic"),
                                    _shift_ref("arithmetic"))

for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p):
    defjvp(_p, None, None)
    defvjp(_p, None, None)


def shift_left(x, y):
    """lax.shift_left: x << y elementwise (equal shapes and dtypes); a count of the width
    (32, 64) or more gives 0.

    >>> shift_left(jnp.array([1], jnp.int32), jnp.array([3], jnp.int32))   # [8]
    """
    return shift_left_p.bind(x, y)


def shift_right_logical(x, y):
    """lax.shift_right_logical: zero-filling right shift; a count of the width or more
    gives 0.

    >>> shift_right_logical(jnp.array([-8], jnp.int32), jnp.array([28], jnp.int32))   # [15]
    """
    return shift_right_logical_p.bind(x, y)


def shift_right_arithmetic(x, y):
    """lax.shift_right_arithmetic: sign-filling right shift (of the bits read as signed).

    >>> shift_right_arithmetic(jnp.array([-8], jnp.int32), jnp.array([1], jnp.int32))  # [-4]
    """
    return shift_right_arithmetic_p.bind(x, y)


# ---- bitcast_convert_type ------------------------------------------------------------------

# the types of one width reinterpret each other (32 or 64 bits)
_BITCASTABLE = ((dtypes.int32, dtypes.uint32, dtypes.float32),
                (dtypes.int64, dtypes.uint64, dtypes.float64))
bitcast_convert_type_p = Primitive("bitcast_convert_type", fusion="elementwise")


def _bitcast_abstract(x, *, new_dtype):
    if not any(x.dtype in g and new_dtype in g for g in _BITCASTABLE):
        raise TypeError(f"bitcast_convert_type: only int32, uint32 and float32 (or int64, "
                        f"uint64 and float64) reinterpret each other, got {x.dtype} -> "
                        f"{new_dtype}")
    return ShapedArray(x.shape, new_dtype, False)


bitcast_convert_type_p.abstract_eval = _bitcast_abstract
bitcast_convert_type_p.lowering = lambda in_dtypes, out_dtype, new_dtype: \
    f"as_{dtypes.COMPUTE_CTYPE[new_dtype]}({{0}})"
bitcast_convert_type_p.reference = lambda x, *, new_dtype: np.asarray(x).view(new_dtype)
bitcast_convert_type_p.make_launcher = lambda device, args, params, out: \
    make_elementwise_launcher(bitcast_convert_type_p, device, args, params, out)
bitcast_convert_type_p.batch = _batch_elementwise(bitcast_convert_type_p)
defjvp(bitcast_convert_type_p, None)
defvjp(bitcast_convert_type_p, None)


def bitcast_convert_type(x, new_dtype):
    """lax.bitcast_convert_type between the types of one width (32 or 64 bits): the same
    bits, another dtype.

    >>> bitcast_convert_type(netcl.numpy.array(0x3f800000, netcl.uint32), 'float32')  # 1.0
    """
    new_dtype = dtypes.canonicalize(new_dtype, arg="new_dtype", where="bitcast_convert_type")
    if x.dtype == new_dtype:
        return x
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype)


# ---- nextafter -----------------------------------------------------------------------------

# Half is storage-only in netcl (math in float), so the next half value is found on the
# half bit pattern itself: store to a private ushort, step it, load it back.
HELPERS["nextafter_h"] = """
inline float netcl_nextafter_h(float x, float y) {
  if (isnan(x) || isnan(y)) return x + y;
  if (x == y) return y;
  ushort h; vstore_half(x, 0, (__private half*)&h);
  if (x == 0.0f) h = (ushort)(y > 0.0f ? 0x0001u : 0x8001u);
  else if ((x < y) == (x > 0.0f)) h = (ushort)(h + 1u);
  else h = (ushort)(h - 1u);
  return vload_half(0, (__private const half*)&h); }
"""
# bfloat16 likewise (x holds a bfloat16 value exactly, so storing it does not round)
HELPERS["nextafter_bf"] = """
inline float netcl_nextafter_bf(float x, float y) {
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  ushort h = netcl_bf16_store(x);
  if (x == 0.0f) h = (ushort)(y > 0.0f ? 0x0001u : 0x8001u);
  else if ((x < y) == (x > 0.0f)) h = (ushort)(h + 1u);
  else h = (ushort)(h - 1u);
  return netcl_bf16_load(h); }
"""
_NEXTAFTER = {dtypes.float16: "netcl_nextafter_h({0}, {1})",
              dtypes.bfloat16: "netcl_nextafter_bf({0}, {1})"}


def _nextafter_float8(fmt):
    """The 8-bit floats likewise, each on its own byte (as ml_dtypes' nextafter). The fnuz
    formats have no -0: a step from -smallest toward 0 lands on 0, not on 0x80 (their NaN)."""
    t = float8.tag(fmt)
    fnuz = "  if (h == 0x80u) h = 0u;\n" if fmt.rules == "fnuz" else ""
    return f"""
inline float netcl_nextafter_f8{t}(float x, float y) {{
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  if (x == 0.0f) return netcl_f8{t}_load(y > 0.0f ? 0x01u : 0x81u);
  uchar h = netcl_f8{t}_store(x);
  h = (uchar)((x < y) == (x > 0.0f) ? h + 1u : h - 1u);
{fnuz}  return netcl_f8{t}_load(h); }}
"""


for _d, _f in float8.FORMATS.items():
    HELPERS[f"nextafter_f8{float8.tag(_f)}"] = _nextafter_float8(_f)
    _NEXTAFTER[_d] = f"netcl_nextafter_f8{float8.tag(_f)}({{0}}, {{1}})"
nextafter_p = _ew_prim("nextafter", 2, "f", None, None)
nextafter_p.lowering = lambda in_dtypes, out_dtype: _NEXTAFTER.get(in_dtypes[0],
                                                                   "nextafter({0}, {1})")


def _nextafter_ref(x, y):
    with np.errstate(all="ignore"):
        return np.nextafter(x, y).astype(x.dtype)


nextafter_p.reference = _nextafter_ref
defjvp(nextafter_p, None, None)
defvjp(nextafter_p, None, None)


def nextafter(x, y):
    """lax.nextafter: the representable float next to x in the direction of y."""
    return nextafter_p.bind(x, y)
