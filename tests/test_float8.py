"""JAX's 8-bit floats (float8_e4m3fn, float8_e5m2 and the other ml_dtypes formats) as storage
dtypes, on every device.

Each is one byte in memory; kernels load it into a float register (exact) and round each
result when they store it, with the format's own overflow / NaN / inf rules; fused kernels
round each float8 result in registers, as the eager store would. ml_dtypes is the
reference (JAX converts with it): the references here are computed in float32 from the
float8 inputs and rounded once.

- conversions: every byte loaded, float32 values (ties, overflow, NaN payloads, subnormals,
  random bit patterns) stored, bit for bit ml_dtypes', eager and under jit; between formats
  and to/from the other dtypes;
- the elementwise primitives (the tables, as test_bfloat16 scans them) under jit: every one
  in the two training formats, a few in the others (which differ in their conversions
  only); a few eagerly; reductions (accumulated in float32); products (in float32);
- JAX's promotion (float8 meets only bools, ints and weak scalars; another float raises
  TypePromotionError), the scalar types (jnp.float8_e4m3fn), NumPy arrays in and out,
  structural ops, nextafter, random draws and errors.
"""
import importlib
import pkgutil

import ml_dtypes
import numpy as np
import pytest
from util import raises_with

import netcl
import netcl.numpy as jnp
import netcl.primitives
from netcl import lax, random
from netcl.core import dtypes
from netcl.core.tracing import Primitive, ShapedArray

F32 = dtypes.float32
E4M3, E5M2 = dtypes.float8_e4m3fn, dtypes.float8_e5m2
FLOAT8 = list(dtypes.FLOAT8)
IDS = [d.name for d in FLOAT8]
DEVICE = netcl.default_device()
assert {E4M3, E5M2} <= set(FLOAT8) and len(FLOAT8) >= 5


def _bytes(a):
    return np.asarray(a).view(np.uint8)


def _same(got, want):
    """Bit for bit, except that any NaN equals any NaN (a NaN's sign from arithmetic, e.g.
    inf - inf, differs between NumPy and devices)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    with np.errstate(invalid="ignore"):
        nan = np.isnan(got.astype(F32)) & np.isnan(want.astype(F32))
    unsigned = f"u{got.dtype.itemsize}"
    bad = (got.view(unsigned) != want.view(unsigned)) & ~nan
    assert not bad.any(), (got[bad][:8], want[bad][:8], np.nonzero(bad)[0][:8])


def _values(dtype):
    """float32 values that probe `dtype`'s rounding: every value of it, the midpoints between
    neighbours (ties) and the float32 values next to them, past the largest finite one,
    NaN payloads, infinities, signed zeros, float32 subnormals, random bit patterns."""
    every = np.arange(256, dtype=np.uint8).view(dtype).astype(F32)
    fin = np.unique(every[np.isfinite(every)]).astype(np.float64)
    mid = ((fin[1:] + fin[:-1]) / 2).astype(F32)                 # exact in float32
    top = np.float32(min(fin[-1] * 2, 3.0e38))
    near = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)),
                           np.nextafter(mid, np.float32(-np.inf)), [top, -top, 3.0e38, -3.0e38]])
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFF80FFFF, 0x7F900000],
                    np.uint32).view(F32)
    special = np.array([np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-39, 1.1754942e-38],
                       F32)
    bits = np.random.default_rng(0).integers(0, 2**32, 4000, dtype=np.uint64)
    with np.errstate(invalid="ignore"):
        return np.concatenate([every, near, nans, special,
                               bits.astype(np.uint32).view(F32)]).astype(F32)


# ---- conversions ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT8, ids=IDS)
def test_every_byte_loads_and_stores_back_as_ml_dtypes(dtype):
    pats = np.arange(256, dtype=np.uint8).view(dtype)
    got = np.asarray(jnp.asarray(pats).astype(F32))
    want = pats.astype(F32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))   # NaN bits too
    _same(jnp.asarray(got).astype(dtype), want.astype(dtype))
    _same(jnp.asarray(pats), pats)


@pytest.mark.parametrize("dtype", FLOAT8, ids=IDS)
def test_stores_round_as_ml_dtypes_eager_and_fused(dtype):
    x = _values(dtype)
    with np.errstate(all="ignore"):
        want = x.astype(dtype)
    _same(jnp.asarray(x).astype(dtype), want)
    # under jit: a fused kernel's store, and its rounding in registers (the float8 value
    # goes on to a float32 result without being stored)
    stored, kept = netcl.jit(lambda v: ((v * 1.0).astype(dtype),
                                        (v * 1.0).astype(dtype).astype(F32) * 1.0))(x)
    _same(stored, want)
    # (bit for bit but the NaNs' payloads: after arithmetic they are the device's own, and
    # NVIDIA's OpenCL gives its canonical 0x7fffffff)
    kept, want32 = np.asarray(kept), want.astype(F32)
    np.testing.assert_array_equal(np.isnan(kept), np.isnan(want32))
    finite = ~np.isnan(want32)
    np.testing.assert_array_equal(kept[finite].view(np.uint32), want32[finite].view(np.uint32))


def test_overflow_nan_and_zero_rules_spelled_out():
    big = np.float32([1e6, -1e6, 464.0, 465.0, np.inf, -0.0])
    assert _bytes(jnp.asarray(big).astype(E4M3)).tolist() == [0x7F, 0xFF, 0x7E, 0x7F, 0x7F, 0x80]
    big = np.float32([1e6, 61440.0, 61439.0, -np.inf, np.nan])
    assert _bytes(jnp.asarray(big).astype(E5M2)).tolist() == [0x7C, 0x7C, 0x7B, 0xFC, 0x7E]
    fnuz = dtypes.float8_e4m3fnuz
    assert _bytes(jnp.asarray(np.float32([-0.0, -1e-9, np.inf, 1e6])).astype(fnuz)).tolist() \
        == [0, 0, 0x80, 0x80]        # no -0, and NaN is 0x80
    e8m0 = getattr(dtypes, "float8_e8m0fnu", None)
    if e8m0 is not None:             # powers of two, ties up, no zero: 0 is NaN
        got = jnp.asarray(np.float32([1.5, 3.0, 1.49, 0.0, -2.0])).astype(e8m0)
        assert np.asarray(got).astype(F32)[:3].tolist() == [2.0, 4.0, 1.0]
        assert np.isnan(np.asarray(got).astype(F32)[3:]).all()


def test_between_formats_and_other_dtypes():
    """Every format to every other, to the 16-bit floats, int32 (toward zero, saturating,
    NaN to 0, as every float converts) and bool, and into float8 from those: one jitted
    function (its kernels build as one program)."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-600, 600, 200), rng.uniform(-2, 2, 200),
                        [np.nan, np.inf, -np.inf, -0.0]]).astype(F32)
    with np.errstate(all="ignore"):
        hosts = [x.astype(src) for src in FLOAT8]
    targets = FLOAT8 + [dtypes.bfloat16, dtypes.float16, dtypes.int32, dtypes.bool_]
    into = [(x[np.isfinite(x)] * 3).astype(src) for src in (dtypes.bfloat16, dtypes.float16,
                                                              np.int32)]
    got, got_into = netcl.jit(lambda hs, ins: ([[h.astype(d) for d in targets] for h in hs],
                                               [v.astype(E4M3) for v in ins]))(
        [jnp.asarray(h) for h in hosts], [jnp.asarray(v) for v in into])
    for h, row in zip(hosts, got):
        for dst, g in zip(targets, row):
            if dst == dtypes.int32:
                f = h.astype(np.float64)
                want = np.where(np.isnan(f), 0, np.clip(np.trunc(np.nan_to_num(f)), -2**31,
                                                        2**31 - 1)).astype(np.int32)
                np.testing.assert_array_equal(g, want)
            elif dst == dtypes.bool_:
                np.testing.assert_array_equal(g, h.astype(F32) != 0)
            else:
                with np.errstate(all="ignore"):
                    try:      # ml_dtypes' direct conversion (none to or from e8m0fnu)
                        want = h.astype(dst)
                    except TypeError:
                        want = h.astype(F32).astype(dst)
                _same(g, want)
    for v, g in zip(into, got_into):
        with np.errstate(all="ignore"):
            _same(g, v.astype(F32).astype(E4M3))


# ---- elementwise primitives, reductions, products ------------------------------------------

def _scan():
    found = {}
    for info in pkgutil.walk_packages(netcl.primitives.__path__, "netcl.primitives."):
        mod = importlib.import_module(info.name)
        for v in vars(mod).values():
            if isinstance(v, Primitive) and v.call is None:
                found[v.name] = v
    return found


ALL = _scan()
_PARAMS = {"round": {"rounding_method": 1}, "integer_pow": {"y": 3},
           "convert_element_type": {"new_dtype": F32, "weak_type": False}}
# exact in float32 (or correctly rounded there, division and sqrt on CPUs as NumPy's), so
# exactly the reference after one rounding to float8
_EXACT = {"neg", "abs", "sign", "floor", "ceil", "round", "square", "add", "sub", "mul", "rem",
          "floor_div", "max", "min", "eq", "ne", "lt", "le", "gt", "ge", "is_finite", "select",
          "clamp", "copy", "convert_element_type", "nextafter", "integer_pow"}
if DEVICE.is_numpy or DEVICE.target.host_cpu:
    _EXACT |= {"div", "sqrt"}


def _signature(prim, dtype):
    """The operand dtypes the primitive accepts for float operands `dtype`, or None."""
    params = _PARAMS.get(prim.name, {})
    for ins in [(dtype,) * n for n in (1, 2, 3)] + [(dtypes.bool_, dtype, dtype)]:
        try:
            prim.abstract_eval(*[ShapedArray((2,), d, False) for d in ins], **params)
        except (TypeError, ValueError):
            continue
        return ins
    return None


EW = sorted(n for n, p in ALL.items() if p.fusion == "elementwise"
            and _signature(p, dtypes.float16) is not None)


def test_every_primitive_taking_float16_takes_float8():
    assert len(EW) >= 45, EW
    for name in EW:
        assert _signature(ALL[name], E4M3) is not None, name


def _inputs(rng, ins, n=24):
    x = [rng.uniform(-6, 6, n).astype(F32) if d != dtypes.bool_ else rng.random(n) < 0.5
         for d in ins]
    for v in x:
        if v.dtype == F32:
            v[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    return x


def _check(name, got, want, dtype):
    """Exact for the exact ops; elsewhere within one step of `dtype` (NumPy's float32
    math and the device's differ by float32 ulps, which can cross a float8 tie)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
    if dtypes.kind(got.dtype) != "f" or name.split()[0] in _EXACT:
        return _same(got, want) if dtypes.kind(got.dtype) == "f" else \
            np.testing.assert_array_equal(got, want, err_msg=name)
    g, w = got.astype(np.float64), want.astype(np.float64)
    info = dtypes.finfo(got.dtype)
    step = np.exp2(np.maximum(np.floor(np.log2(np.abs(np.where(w == 0, 1, w)))),
                              info.minexp) - info.nmant)
    with np.errstate(invalid="ignore"):
        ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= step)
    assert ok.all(), (name, got[~ok], want[~ok])


def _reference(prim, hosts, params, out_dtype, dtype):
    if prim.name != "nextafter":      # (nextafter steps in the float8 spacing itself)
        hosts = [h.astype(F32) if h.dtype == dtype else h for h in hosts]
    with np.errstate(all="ignore"):
        return np.asarray(prim.reference(*hosts, **params)).astype(out_dtype)


# the other formats differ from these in their conversions only (checked above, every byte
# and every rounding case): a few ops each
_FEW = ["add", "div", "exp", "sqrt", "max", "floor", "select", "lt", "integer_pow",
        "convert_element_type", "nextafter"]


def _cases(rng, dtype, names):
    """(name, primitive, host operands, params, reference) per primitive of `names`."""
    cases = []
    for name in names:
        prim, ins = ALL[name], _signature(ALL[name], dtype)
        hosts = [h.astype(d) if d != dtypes.bool_ else h for h, d in zip(_inputs(rng, ins), ins)]
        params = _PARAMS.get(name, {})
        out = prim.abstract_eval(*[ShapedArray(h.shape, d, False) for h, d in zip(hosts, ins)],
                                 **params)
        cases.append((name, prim, hosts, params, _reference(prim, hosts, params, out.dtype,
                                                            dtype)))
    return cases


@pytest.mark.parametrize("which", ["float8_e4m3fn", "float8_e5m2", "others"])
def test_elementwise_table_fused(which):
    """Every elementwise primitive for the two training formats, a few for the others, in one
    jitted function each (fused kernels, each result rounded to its format where the kernel
    stores it, built as one program)."""
    rng = np.random.default_rng(2)
    if which == "others":
        cases = [(d, c) for d in FLOAT8 if d not in (E4M3, E5M2) for c in _cases(rng, d, _FEW)]
    else:
        d = np.dtype(getattr(ml_dtypes, which))
        cases = [(d, c) for c in _cases(rng, d, EW)]

    def every(args):
        return [c[1].bind(*a, **c[3]) for (_, c), a in zip(cases, args)]
    with np.errstate(all="ignore"):
        outs = netcl.jit(every)([[jnp.asarray(h) for h in c[2]] for _, c in cases])
    for (d, (name, _, _, _, want)), got in zip(cases, outs):
        _check(f"{name} {d}", got, want, d)


@pytest.mark.parametrize("dtype, name", [(E4M3, "add"), (E4M3, "exp"), (E4M3, "select"),
                                         (E4M3, "lt"), (E4M3, "integer_pow"), (E5M2, "div"),
                                         (E5M2, "tanh")])
def test_elementwise_eager(name, dtype):
    (_, prim, hosts, params, want), = _cases(np.random.default_rng(3), dtype, [name])
    with np.errstate(all="ignore"):
        got = prim.bind(*[jnp.asarray(h) for h in hosts], **params)
    _check(name, got, want, dtype)


def test_fused_rounds_each_result_as_eager_does():
    x = jnp.asarray(np.random.default_rng(5).uniform(-3, 3, 21).astype(E4M3))

    def f(a, b):
        return jnp.exp(a) * b - a / 3
    got = netcl.jit(f)(x, x[::-1])
    assert got.dtype == E4M3
    _same(got, f(x, x[::-1]))


def test_reductions_accumulate_in_float32():
    rng = np.random.default_rng(6)
    h = rng.uniform(-4, 4, (6, 40)).astype(E4M3)
    f = h.astype(F32)

    def stats(x):
        return (jnp.sum(x, axis=1), jnp.max(x, axis=0), jnp.min(x), jnp.cumsum(x, axis=1),
                jnp.mean(x, axis=1), jnp.prod(x[:, :4], axis=1), jnp.argmax(x, axis=1),
                jnp.std(x, axis=0))
    *got, arg, std = netcl.jit(stats)(jnp.asarray(h))
    for g, want in zip(got, (f.sum(axis=1), f.max(axis=0), f.min(), np.cumsum(f, axis=1),
                             f.mean(axis=1), f[:, :4].prod(axis=1))):
        assert g.dtype == E4M3
        _check("sum", g, np.asarray(want).astype(E4M3), E4M3)
    assert arg.tolist() == np.argmax(f, axis=1).tolist()
    # (the variance is rounded to float8 before its square root, as in JAX)
    assert std.dtype == E4M3
    np.testing.assert_allclose(np.asarray(std).astype(F32), f.std(axis=0), rtol=0.15)
    # 20 x 16: a float8 accumulator stops at 256 (256 + 16 rounds back), float32 does not
    assert float(jnp.sum(jnp.full((20,), 16.0, E4M3))) == 320.0
    assert float(jnp.cumsum(jnp.full((20,), 16.0, E5M2))[-1]) == 320.0


def test_products_convert_to_float32_first():
    rng = np.random.default_rng(7)
    a = rng.uniform(-2, 2, (2, 5, 9)).astype(E4M3)
    b = rng.uniform(-2, 2, (2, 9, 3)).astype(E5M2).astype(E4M3)
    want = np.matmul(a.astype(F32), b.astype(F32))
    got = jnp.matmul(jnp.asarray(a), jnp.asarray(b))
    assert got.dtype == E4M3
    _check("dot", got, want.astype(E4M3), E4M3)
    f32 = lax.dot_general(jnp.asarray(a[0]), jnp.asarray(b[0]), (((1,), (0,)), ((), ())),
                          preferred_element_type=jnp.float32)
    assert f32.dtype == F32
    np.testing.assert_allclose(f32, want[0], rtol=1e-6, atol=1e-6)
    # under jit, with an epilogue (the product is rounded before the bias is added)
    bias = jnp.asarray(np.float32([0.5, -1, 2]).astype(E4M3))
    fn = netcl.jit(lambda p, q: jnp.maximum(p @ q + bias, 0))
    got = fn(jnp.asarray(a[0]), jnp.asarray(b[0]))
    step = (want[0].astype(E4M3).astype(F32) + bias.astype(F32)).astype(E4M3)
    _same(got, np.maximum(step.astype(F32), 0).astype(E4M3))
    g = netcl.grad(lambda p: jnp.sum(p @ jnp.asarray(b[0])).astype(F32))(jnp.asarray(a[0]))
    assert g.dtype == E4M3


# ---- promotion, scalar types, NumPy arrays ------------------------------------------------

def test_promotion_matches_jax():
    jax_numpy = pytest.importorskip("jax.numpy")
    from jax.dtypes import TypePromotionError as JaxError
    others = FLOAT8 + [np.dtype(t) for t in (np.bool_, np.int32, np.uint32, np.float16,
                                             np.float32, np.complex64)] + [dtypes.bfloat16]
    for a in FLOAT8:
        for b in others:
            try:
                want = jax_numpy.promote_types(a, b)
            except JaxError:
                raises_with(TypeError, lambda: jnp.promote_types(a, b), a.name, b.name)
                raises_with(ValueError, lambda: jnp.promote_types(a, b), "promotion")
                continue
            assert jnp.promote_types(a, b) == want == jnp.promote_types(b, a), (a, b)
    x = jnp.ones(2, E4M3)
    for other in (2.0, 2, True, jnp.ones(2, jnp.int32), jnp.ones(2, bool), x):
        jo = other if np.isscalar(other) else jax_numpy.asarray(np.asarray(other))
        want = jax_numpy.result_type(jax_numpy.ones(2, "float8_e4m3fn"), jo)
        assert jnp.result_type(x, other) == want, other
    assert (x * 2.5).dtype == E4M3 and not (x * 2.5).weak_type and (3 - x).dtype == E4M3
    assert float((x * 2.5)[0]) == 2.5 and float((x * 2.6)[0]) == 2.5   # rounded
    assert (x + jnp.arange(2)).dtype == E4M3 and (x + np.ones(2, E4M3)).dtype == E4M3


def test_scalar_types_and_dtype_arguments():
    assert jnp.float8_e4m3fn == E4M3 and np.dtype(jnp.float8_e5m2) == E5M2
    assert jnp.float8_e4m3fn.__name__ == "float8_e4m3fn"
    for d in FLOAT8:
        assert getattr(jnp, d.name).dtype == d
    y = jnp.float8_e4m3fn(1.7)
    assert isinstance(y, netcl.Array) and y.dtype == E4M3 and float(y) == 1.75
    assert jnp.float8_e5m2(jnp.asarray([1.7, 300.0])).tolist() == [1.75, 320.0]
    for make in (lambda: jnp.zeros(2, jnp.float8_e4m3fn) + jnp.asarray([1.5, 2.0]).astype(E4M3),
                 lambda: jnp.asarray([1.5, 2.0], dtype="float8_e4m3fn"),
                 lambda: jnp.array([1.5, 2.0]).astype(jnp.float8_e4m3fn),
                 lambda: jnp.full((2,), 1.5, E4M3).at[1].set(2.0)):
        y = make()
        assert y.dtype == E4M3 and np.asarray(y).astype(F32).tolist() == [1.5, 2.0]
    assert jnp.arange(3, dtype=jnp.float8_e5m2).dtype == E5M2
    assert jnp.issubdtype(jnp.float8_e4m3fn, jnp.floating) and \
        not jnp.issubdtype(jnp.float8_e4m3fn, jnp.integer) and \
        not jnp.issubdtype(jnp.float8_e4m3fn, jnp.float8_e5m2)
    assert jnp.isdtype(jnp.float8_e5m2, "real floating")
    assert jnp.finfo(jnp.float8_e4m3fn).max == 448 and jnp.finfo("float8_e5m2").bits == 8
    assert netcl.dtypes.itemsize_bits(jnp.float8_e4m3fn) == 8
    assert "float8_e4m3fn" in repr(jnp.ones(2, E4M3))


def test_numpy_arrays_in_and_out():
    h = np.array([[1.5, -0.0, np.nan], [448, 2.0 ** -9, -3.25]], E4M3)
    x = jnp.asarray(h)
    assert x.dtype == E4M3 and np.asarray(x).dtype == E4M3
    _same(np.asarray(x), h)
    _same(np.asarray(x[:, ::-2]), h[:, ::-2])
    _same(np.asarray(x.T), h.T)
    assert jnp.asarray(np.array(2.5, E4M3)).shape == () and x.tolist()[0][0] == 1.5
    assert (x * ml_dtypes.float8_e4m3fn(2)).dtype == E4M3


def test_structural_ops_move_bytes():
    rng = np.random.default_rng(8)
    h = rng.uniform(-4, 4, (4, 6)).astype(E5M2)
    h[0, 0], h[1, 1] = np.nan, -0.0
    upd = np.array([0.5, 0.25], E5M2)

    def moves(x, u):
        return (jnp.concatenate([x, x[:1]]), jnp.pad(x, ((1, 0), (0, 2))),
                jnp.take(x, jnp.asarray([3, 0, 3]), axis=0),
                x[jnp.asarray([1, 2]), jnp.asarray([0, 5])], jnp.transpose(x).reshape(-1),
                jnp.where(x > 0, x, jnp.zeros_like(x)), jnp.sort(x, axis=1),
                x.at[jnp.asarray([2, 2]), 1].add(u))
    got = netcl.jit(moves)(jnp.asarray(h), jnp.asarray(upd))
    added = h.astype(F32)
    added[2, 1] += 0.75
    with np.errstate(invalid="ignore"):
        want = (np.concatenate([h, h[:1]]), np.pad(h, ((1, 0), (0, 2))), h[[3, 0, 3]],
                h[[1, 2], [0, 5]], h.T.reshape(-1),
                np.where(h.astype(F32) > 0, h, 0).astype(E5M2),
                np.sort(h.astype(F32), axis=1).astype(E5M2), added.astype(E5M2))
    for g, w in zip(got, want):
        _same(g, w)


def test_nextafter_steps_every_pair_of_bytes():
    pairs = []
    for d in FLOAT8:    # (the MX formats: their codes; bytes with bits above one are not)
        b = np.arange(min(256, 1 << ml_dtypes.finfo(d).bits), dtype=np.uint8).view(d)
        pairs.append((np.repeat(b, len(b)), np.tile(b, len(b))))
    got = netcl.jit(lambda ps: [lax.nextafter(x, y) for x, y in ps])(
        [(jnp.asarray(x), jnp.asarray(y)) for x, y in pairs])
    for (x, y), g in zip(pairs, got):
        with np.errstate(all="ignore"):
            _same(g, np.nextafter(x, y))


def test_random_draws_match_jax_bit_for_bit():
    jax = pytest.importorskip("jax")
    for fn, d in (("uniform", E4M3), ("normal", E5M2)):
        got = getattr(random, fn)(random.PRNGKey(15), (300,), d)
        want = getattr(jax.random, fn)(jax.random.PRNGKey(15), (300,), d.name)
        assert got.dtype == d
        _same(got, np.asarray(want))


# ---- errors -------------------------------------------------------------------------------

def test_mixing_floats_and_unsupported_uses_raise_typed_errors():
    x = jnp.ones(2, E4M3)
    for other in (jnp.ones(2, jnp.float32), jnp.ones(2, jnp.bfloat16), jnp.ones(2, E5M2),
                  np.ones(2, np.float32)):
        raises_with(TypeError, lambda: jnp.add(x, other), "add", "float8_e4m3fn",
                    str(np.dtype(other.dtype)), "astype")
        raises_with(netcl.dtypes.TypePromotionError, lambda: x * other, "float8_e4m3fn")
    raises_with(TypeError, lambda: x + 1j, "float8_e4m3fn", "complex")
    raises_with(TypeError, lambda: jnp.bitwise_and(x, x), "bitwise_and", "float8_e4m3fn")
    raises_with(TypeError, lambda: jnp.linalg.inv(jnp.ones((2, 2), E4M3)), "inv",
                "float8_e4m3fn")
    raises_with(TypeError, lambda: jnp.zeros(2, "float8"), "zeros", "float8")
    raises_with(TypeError, lambda: x.astype(np.int8), "astype", "int8")
    # explicit conversions are the way across
    assert (x.astype(F32) + jnp.ones(2, F32)).dtype == F32
