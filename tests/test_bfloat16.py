"""bfloat16 as a storage dtype (with float16, the other one), on every device.

Both 16-bit floats are held in memory only: kernels load them into float registers and round
when they store (round to nearest even; NaN stays a quiet NaN); fused kernels round each
16-bit result in registers, as the eager kernel's store would. The references here
follow that: each is computed in float32 from the same rounded inputs and rounded at the end.

- every elementwise and reduction primitive that takes a float takes both 16-bit floats,
  checked against those references (the primitive tables are scanned, as in
  test_primitive_tables; shapes are drawn from a short list so each kernel builds once);
- JAX's promotion lattice (bfloat16 + float16 is float32; weak scalars keep bfloat16);
- the store's rounding at ties, NaN, inf, -0.0 and overflow, and every bfloat16 bit pattern
  loaded and stored back;
- NumPy (ml_dtypes) arrays in and out, checkpoints, structural ops, products, random draws
  (bit for bit JAX's), autocast and mixed_precision policies in bfloat16.
"""
import importlib
import inspect
import os
import pkgutil
import tempfile

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import (example_body, float32_params, prebuild_ahead, prebuilt_examples,
                  raises_with)

import netcl
import netcl.numpy as jnp
import netcl.primitives
from netcl import io, lax, mixed_precision as mp, random, stax
from netcl.core import dtypes
from netcl.core.tracing import Primitive, ShapedArray

BF16, F16, F32 = dtypes.bfloat16, dtypes.float16, dtypes.float32
HALVES = [BF16, F16]
HALF_IDS = ["bfloat16", "float16"]
DEVICE = netcl.default_device()
SETTINGS = settings(max_examples=10, deadline=None)


@pytest.fixture(autouse=True)
def _prebuilt_in_groups(request):
    """The table tests' kernels (@prebuilt_examples), built a dozen tests at a time
    (util.prebuild_ahead): few PoCL compiler runs, then each test runs its examples."""
    prebuild_ahead(request, 12)
# results within two units in the last place of the 16-bit dtype
ULP2 = {BF16: 2.0 ** -6, F16: 2.0 ** -9}


def _bits(a):
    return np.asarray(a).view(np.uint16)


# ---- the tables ---------------------------------------------------------------------------

def _scan():
    found = {}
    for info in pkgutil.walk_packages(netcl.primitives.__path__, "netcl.primitives."):
        mod = importlib.import_module(info.name)
        for v in vars(mod).values():
            if isinstance(v, Primitive) and v.call is None:
                found[v.name] = v
    return found


ALL = _scan()
_EW_PARAMS = {
    "round": [{"rounding_method": 0}, {"rounding_method": 1}],
    "integer_pow": [{"y": 3}, {"y": -2}],
    "convert_element_type": [{"new_dtype": np.dtype(d), "weak_type": False}
                             for d in ("float32", "int32", "bool")],
    "bitcast_convert_type": [{"new_dtype": np.dtype("int32")}],
}
# correctly rounded or exact in float32, so exact after rounding to 16 bits (division and
# sqrt are correctly rounded on CPU devices, as NumPy's; elsewhere within ulps)
_EXACT = {"neg", "abs", "sign", "floor", "ceil", "round", "square", "add", "sub", "mul", "rem",
          "floor_div", "max", "min", "eq", "ne", "lt", "le", "gt", "ge", "is_finite", "select",
          "clamp", "copy", "convert_element_type", "nextafter"}
if DEVICE.is_numpy or DEVICE.target.host_cpu:
    _EXACT |= {"div", "sqrt"}


def _signature(prim, dtype):
    """(operand dtypes, params choices) the primitive accepts for float operands `dtype`,
    or None."""
    choices = _EW_PARAMS.get(prim.name, [{}])
    if prim.name == "convert_element_type":
        other = F16 if dtype == BF16 else BF16
        choices = choices + [{"new_dtype": other, "weak_type": False}]
    for ins in [(dtype,) * n for n in (1, 2, 3)] + [(dtypes.bool_, dtype, dtype)]:
        try:
            prim.abstract_eval(*[ShapedArray((2,), d, False) for d in ins], **choices[0])
        except (TypeError, ValueError):
            continue
        return ins, choices
    return None


# (bitcast_convert_type takes float32, not the 16-bit floats: netcl has no 16-bit ints)
HALF_EW = sorted(n for n, p in ALL.items() if p.fusion == "elementwise"
                 and _signature(p, F16) is not None)
REDUCTIONS = sorted(n for n, p in ALL.items() if p.fusion == "reduction")


def test_every_primitive_taking_float16_takes_bfloat16():
    for name, prim in sorted(ALL.items()):
        if prim.fusion in ("elementwise", "reduction"):
            assert (_signature(prim, F16) is None) == (_signature(prim, BF16) is None), name
    assert len(HALF_EW) >= 45 and len(REDUCTIONS) >= 11, (HALF_EW, REDUCTIONS)


def _values(rng, shape, dtype, lo, hi, special):
    if dtype == dtypes.bool_:
        return rng.random(shape) < 0.5
    x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    if special and x.size:
        pool = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], np.float32)
        x = np.where(rng.random(shape) < 0.3, rng.choice(pool, size=shape), x)
    return x.astype(dtype)


def _reference(prim, hosts, params, out_dtype, dtype):
    """The primitive's reference computed in float32 from the 16-bit inputs, rounded once to
    the result's dtype (nextafter is about the 16-bit dtype's own spacing: in it)."""
    if prim.name != "nextafter":
        hosts = [h.astype(F32) if h.dtype == dtype else h for h in hosts]
    with np.errstate(all="ignore"):
        return np.asarray(prim.reference(*hosts, **params)).astype(out_dtype)


def _compare(got, want, exact, rtol, atol=1e-6):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (got.shape, got.dtype, want.shape, want.dtype)
    if dtypes.kind(got.dtype) != "f":
        np.testing.assert_array_equal(got, want)
    elif exact:     # (in float32: NumPy finds NaN positions agreeing only in its own floats)
        np.testing.assert_array_equal(got.astype(F32), want.astype(F32))
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("name", HALF_EW)
@prebuilt_examples
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), special=st.booleans(),
       shape=st.sampled_from([(), (7,), (2, 3)]),
       span=st.sampled_from([(-4.0, 4.0), (-1.2, 1.2), (-40.0, 40.0)]))
@example_body
def test_elementwise_table(name, dtype, data, seed, special, shape, span):
    prim = ALL[name]
    sig = _signature(prim, dtype)
    ins, choices = sig
    params = data.draw(st.sampled_from(choices), label="params")
    rng = np.random.default_rng(seed)
    hosts = [_values(rng, shape, d, *span, special) for d in ins]
    out = prim.abstract_eval(*[ShapedArray(shape, d, False) for d in ins], **params)
    want = _reference(prim, hosts, params, out.dtype, dtype)
    with np.errstate(all="ignore"):
        got = prim.bind(*[jnp.asarray(h) for h in hosts], **params)
    _compare(got, want, name in _EXACT, ULP2[dtype])


@pytest.mark.parametrize("layout", ["transposed", "reversed", "broadcast_rows",
                                    "broadcast_cols", "scalar"])
def test_strided_bfloat16_operands(layout):
    """Each way a kernel indexes an input (strided, periodic broadcasts, one value)."""
    rng = np.random.default_rng(1)
    a = rng.uniform(-3, 3, (4, 5)).astype(BF16)
    b = rng.uniform(-3, 3, (4, 5)).astype(BF16)
    x = {"transposed": lambda: jnp.asarray(np.ascontiguousarray(a.T)).T,
         "reversed": lambda: jnp.asarray(np.ascontiguousarray(a[::-1]))[::-1],
         "broadcast_rows": lambda: jnp.broadcast_to(jnp.asarray(a[:1]), (4, 5)),
         "broadcast_cols": lambda: jnp.broadcast_to(jnp.asarray(a[:, :1]), (4, 5)),
         "scalar": lambda: jnp.broadcast_to(jnp.asarray(a[0, 0]), (4, 5))}[layout]()
    host = {"broadcast_rows": np.broadcast_to(a[:1], (4, 5)),
            "broadcast_cols": np.broadcast_to(a[:, :1], (4, 5)),
            "scalar": np.broadcast_to(a[0, 0], (4, 5))}.get(layout, a)
    got = x + jnp.asarray(b)
    assert got.dtype == BF16
    np.testing.assert_array_equal(_bits(got), _bits((host.astype(F32) + b.astype(F32))
                                                     .astype(BF16)))


def _sum_tolerance(x, axes, keep, dtype):
    mag = np.sum(np.abs(x.astype(np.float64)), axis=axes, keepdims=keep)
    return 8 * float(np.finfo(np.float32).eps) * mag + ULP2[dtype] * mag + 1e-6


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
@pytest.mark.parametrize("name", REDUCTIONS)
@prebuilt_examples
@SETTINGS
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), special=st.booleans(),
       shape=st.sampled_from([(5,), (3, 4), (2, 0)]))
@example_body
def test_reduction_table(name, dtype, data, seed, special, shape):
    prim = ALL[name]
    rng = np.random.default_rng(seed)
    lo, hi = (0.5, 1.5) if "prod" in name else (-3.0, 3.0)
    host = _values(rng, shape, dtype, lo, hi, special)
    if name == "ffill" and host.size:   # mostly NaN: the values to carry forward
        host = np.where(rng.random(shape) < 0.5, np.float32(np.nan), host).astype(dtype)
    x = jnp.asarray(host)
    sig = set(inspect.signature(prim.abstract_eval).parameters)
    if "axes" in sig:
        axes = tuple(sorted(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True,
                                               max_size=len(shape)), label="axes")))
        params, keep = {"axes": axes}, False
    else:
        axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
        if "index_dtype" in sig:
            if shape[axis] == 0:
                return
            params = {"axis": axis, "index_dtype": dtypes.int32}
        else:
            params = {"axis": axis, "reverse": data.draw(st.booleans(), label="reverse")}
        axes, keep = (axis,), True
    out = prim.abstract_eval(ShapedArray(shape, dtype, False), **params)
    want = _reference(prim, [host], params, out.dtype, dtype)
    got = prim.bind(x, **params)
    if name in ("reduce_sum", "cumsum", "reduce_prod", "cumprod"):
        g = np.asarray(got)
        assert g.shape == want.shape and g.dtype == want.dtype == dtype
        g64, w64 = g.astype(np.float64), want.astype(np.float64)
        if "sum" in name:
            tol = np.broadcast_to(_sum_tolerance(host, axes, keep, dtype), want.shape)
        else:
            tol = 2 * ULP2[dtype] * (shape[axes[0]] if axes else 1) * np.abs(w64) + 1e-6
        with np.errstate(invalid="ignore"):
            ok = (np.isnan(g64) & np.isnan(w64)) | (g64 == w64) | (np.abs(g64 - w64) <= tol)
        assert ok.all(), (g[~ok], want[~ok])
    else:
        _compare(got, want, exact=True, rtol=0)


def test_reductions_accumulate_in_float32():
    # 4096 ones: a bfloat16 accumulator would stop at 256 (256 + 1 rounds back to 256)
    x = jnp.ones((4096,), BF16)
    assert float(jnp.sum(x)) == 4096.0 and jnp.sum(x).dtype == BF16
    assert float(jnp.cumsum(x)[-1]) == 4096.0
    assert jnp.mean(x).dtype == BF16 and float(jnp.mean(x)) == 1.0
    assert jnp.var(jnp.asarray(np.array([1, 2, 3, 4], BF16))).dtype == BF16
    assert float(jnp.std(jnp.asarray(np.array([1, 3], BF16)))) == 1.0


# ---- promotion ----------------------------------------------------------------------------

_LATTICE = [np.bool_, np.int32, np.uint32, np.float16, BF16, np.float32, np.float64]


def test_promotion_matches_jax():
    jax_numpy = pytest.importorskip("jax.numpy")
    for a in _LATTICE:
        for b in _LATTICE:
            if BF16 in (np.dtype(a), np.dtype(b)) or np.float16 in (a, b):
                want = jax_numpy.promote_types(a, b)
                assert jnp.promote_types(a, b) == want, (a, b)
    x = np.ones(2, BF16)
    for other in (2.0, 2, True, np.ones(2, np.int32), np.ones(2, np.uint32),
                  np.ones(2, np.float16), np.ones(2, np.float32), x):
        want = jax_numpy.result_type(jax_numpy.asarray(x), other if np.isscalar(other) else
                                     jax_numpy.asarray(other))
        mine = other if np.isscalar(other) else jnp.asarray(other)
        assert jnp.result_type(jnp.asarray(x), mine) == want, other


def test_promotion_in_arithmetic():
    x = jnp.asarray(np.array([1.5, -2.0], BF16))
    assert (x * 2.0).dtype == BF16 and (x + 1).dtype == BF16 and (2.5 - x).dtype == BF16
    assert (x + jnp.asarray(np.ones(2, np.float16))).dtype == F32
    assert (x * jnp.ones(2, jnp.float32)).dtype == F32
    assert (x + jnp.arange(2)).dtype == BF16
    assert (x + np.ones(2, BF16)).dtype == BF16          # NumPy (ml_dtypes) operands
    assert (np.ones(2, BF16) * x).dtype == BF16
    assert (x * ml_dtypes.bfloat16(3)).dtype == BF16
    assert float((x * 2.0)[0]) == 3.0
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating) and \
        not jnp.issubdtype(jnp.bfloat16, jnp.integer)
    assert jnp.finfo(jnp.bfloat16).eps == 2.0 ** -7 and jnp.finfo("bfloat16").bits == 16
    assert jnp.isdtype(jnp.bfloat16, "real floating")


# ---- the store's rounding and the loads ---------------------------------------------------

def test_store_rounds_to_nearest_even():
    big = float(dtypes.finfo(BF16).max)
    f = np.array([1 + 2 ** -8,               # halfway, down to the even 1.0
                  1 + 3 * 2 ** -8,           # halfway, up to the even 1 + 2^-6
                  1 + 2 ** -8 + 2 ** -20,    # just above halfway: up
                  -(1 + 2 ** -8),            # halfway, negative
                  2.0 ** -130,               # a subnormal
                  -0.0, np.inf, -np.inf,
                  big + 2 ** 119,            # halfway between the max (odd) and inf: inf
                  -3.4028235e38,             # float32's lowest: -inf
                  big + 2 ** 119 - 2 ** 104],  # just below: the max
                 np.float32)
    want = f.astype(BF16)
    got = jnp.asarray(f).astype(jnp.bfloat16)
    np.testing.assert_array_equal(_bits(got), _bits(want))
    assert np.asarray(got)[:3].astype(np.float32).tolist() == [1.0, 1.015625, 1.0078125]
    assert np.signbit(np.asarray(got)[5]) and np.isinf(np.asarray(got)[8])
    assert np.asarray(got)[10] == big


def test_store_keeps_nan_quiet():
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0xFF80FFFF],
                    np.uint32).view(np.float32)
    got = _bits(jnp.asarray(nans).astype(jnp.bfloat16))
    # NaN whatever the payload (a payload in the low bits alone must not become inf), sign
    # kept, quiet bit set
    assert (got & 0x7FC0 == 0x7FC0).all(), [hex(v) for v in got]
    np.testing.assert_array_equal(got >> 15, [0, 1, 0, 0, 1])


def test_every_bit_pattern_loads_exactly_and_stores_back():
    pats = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)
    h = pats.view(BF16)
    f = np.asarray(jnp.asarray(h).astype(jnp.float32))
    np.testing.assert_array_equal(f.view(np.uint32), pats.astype(np.uint32) << 16)
    back = _bits(jnp.asarray(f).astype(jnp.bfloat16))
    nan = np.isnan(f)
    np.testing.assert_array_equal(back[~nan], pats[~nan])
    assert (back[nan] & 0x7FC0 == 0x7FC0).all()
    # and between the two 16-bit floats, through float32 (float16 -> bfloat16 rounds)
    h16 = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = _bits(jnp.asarray(h16).astype(jnp.bfloat16))
    ok = ~np.isnan(h16)
    np.testing.assert_array_equal(got[ok], _bits(h16[ok].astype(np.float32).astype(BF16)))


def test_nextafter_steps_bfloat16_spacing():
    big = float(dtypes.finfo(BF16).max)
    x = np.array([1.0, 1.0, 0.0, 0.0, -0.0, -1.5, big, big, -np.inf, np.inf, np.nan, 2.0, 3.0],
                 BF16)
    y = np.array([2.0, 0.0, 1.0, -1.0, 1.0, -2.0, np.inf, 0.0, 0.0, np.inf, 1.0, np.nan, 3.0],
                 BF16)
    with np.errstate(all="ignore"):
        want = np.nextafter(x, y)
    got = lax.nextafter(jnp.asarray(x), jnp.asarray(y))
    assert got.dtype == BF16
    np.testing.assert_array_equal(np.asarray(got).astype(F32), want.astype(F32))
    assert float(got[0]) == 1 + 2 ** -7 and float(got[2]) == 2.0 ** -133


# ---- host arrays, checkpoints -------------------------------------------------------------

def test_numpy_round_trip_and_dtype_arguments():
    h = np.array([1.5, -0.0, np.inf, -np.inf, np.nan, 3.0e38, 2.0 ** -133], BF16)
    x = jnp.asarray(h)
    assert x.dtype == BF16 and x.dtype == jnp.bfloat16
    back = np.asarray(x)
    assert back.dtype == BF16
    np.testing.assert_array_equal(_bits(back), _bits(h))
    assert np.asarray(x[::-2]).dtype == BF16
    for make in (lambda: jnp.array([1.5, 2.0], dtype=jnp.bfloat16),
                 lambda: jnp.asarray([1.5, 2.0], dtype="bfloat16"),
                 lambda: jnp.zeros(2, "bfloat16") + jnp.asarray([1.5, 2.0]).astype("bfloat16"),
                 lambda: jnp.bfloat16(jnp.asarray([1.5, 2.0])),
                 lambda: jnp.full((2,), 1.5, jnp.bfloat16).at[1].set(2.0)):
        y = make()
        assert y.dtype == BF16 and np.asarray(y).astype(np.float32).tolist() == [1.5, 2.0]
    assert jnp.arange(3, dtype=jnp.bfloat16).dtype == BF16
    assert jnp.linspace(0, 1, 5, dtype=jnp.bfloat16).dtype == BF16
    assert float(jnp.asarray(np.float32(1.00390625)).astype(jnp.bfloat16)) == 1.0
    assert jnp.asarray(np.array(2.5, BF16)).shape == () and x.tolist()[0] == 1.5
    assert "bfloat16" in repr(x)


def test_checkpoint_round_trip():
    h = np.array([[1.5, -0.0, np.nan], [np.inf, 3.0e38, -2.0 ** -133]], BF16)
    tree = {"w": jnp.asarray(h), "np": h.copy(), "scalar": h[0, 0],
            "f32": jnp.ones(2, jnp.float32)}
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "ckpt.npz")
        io.save(p, tree)
        back = io.load(p, like=tree)
        with np.load(p) as z:   # .npy has no bfloat16: the members hold the bits
            stored = {z[k].dtype for k in z.files if k.startswith("leaf")}
        assert stored == {np.dtype(np.uint16), F32}
    assert isinstance(back["w"], netcl.Array) and back["w"].dtype == BF16
    assert isinstance(back["np"], np.ndarray) and back["np"].dtype == BF16
    assert back["scalar"].dtype == BF16 and back["f32"].dtype == F32
    for k in ("w", "np", "scalar"):
        np.testing.assert_array_equal(_bits(back[k]), _bits(tree[k]))


# ---- structural ops, products, random draws -----------------------------------------------

def test_structural_ops_move_bfloat16_bits():
    rng = np.random.default_rng(2)
    h = rng.uniform(-4, 4, (4, 6)).astype(BF16)
    h[0, 0], h[1, 1] = np.nan, -0.0
    x = jnp.asarray(h)
    same = lambda got, want: np.testing.assert_array_equal(_bits(got), _bits(want))  # noqa
    same(jnp.concatenate([x, x[:1]]), np.concatenate([h, h[:1]]))
    same(jnp.pad(x, ((1, 0), (0, 2))), np.pad(h, ((1, 0), (0, 2))))
    same(jnp.take(x, jnp.asarray([3, 0, 3]), axis=0), h[[3, 0, 3]])
    same(x[jnp.asarray([1, 2]), jnp.asarray([0, 5])], h[[1, 2], [0, 5]])
    same(lax.dynamic_slice(x, (1, 2), (2, 3)), h[1:3, 2:5])
    same(jnp.transpose(x).reshape(-1), h.T.reshape(-1))
    with np.errstate(invalid="ignore"):    # (ml_dtypes warns comparing NaN)
        same(jnp.where(x > 0, x, jnp.zeros_like(x)), np.where(h > 0, h, np.zeros_like(h)))
    s = np.asarray(jnp.sort(x, axis=1)).astype(F32)
    np.testing.assert_array_equal(s, np.sort(h.astype(F32), axis=1))
    assert jnp.argsort(x[1]).tolist() == np.argsort(h[1].astype(F32), kind="stable").tolist()
    upd = jnp.asarray(np.array([0.5, 0.25], BF16))
    got = x.at[jnp.asarray([2, 2]), 1].add(upd)
    want = h.astype(F32)
    want[2, 1] += 0.75
    np.testing.assert_array_equal(np.asarray(got).astype(F32), want.astype(BF16).astype(F32))
    assert x.at[0, 1].max(100.0).dtype == BF16 and float(x.at[0, 1].max(100.0)[0, 1]) == 100


def test_products_through_the_float32_gemm():
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (2, 5, 7)).astype(BF16)
    b = rng.uniform(-2, 2, (2, 7, 3)).astype(BF16)
    want = np.matmul(a.astype(F32), b.astype(F32))
    got = jnp.matmul(jnp.asarray(a), jnp.asarray(b))
    assert got.dtype == BF16
    np.testing.assert_allclose(np.asarray(got).astype(F32), want, rtol=ULP2[BF16], atol=1e-5)
    f32 = lax.dot_general(jnp.asarray(a[0]), jnp.asarray(b[0]), (((1,), (0,)), ((), ())),
                          preferred_element_type=jnp.float32)
    assert f32.dtype == F32
    np.testing.assert_allclose(f32, want[0], rtol=1e-5, atol=1e-5)
    g = netcl.grad(lambda a: jnp.sum(a @ jnp.asarray(b[0])))(jnp.asarray(a[0]))
    assert g.dtype == BF16


def test_convolution_in_bfloat16():
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (2, 3, 6, 5)).astype(BF16)
    w = rng.uniform(-1, 1, (4, 3, 3, 2)).astype(BF16)
    got = lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 1), "SAME")
    want = lax.conv_general_dilated(jnp.asarray(x.astype(F32)), jnp.asarray(w.astype(F32)),
                                    (1, 1), "SAME")
    assert got.dtype == BF16
    np.testing.assert_allclose(np.asarray(got).astype(F32), want, rtol=2e-2, atol=2e-2)


def test_random_draws_match_jax_bit_for_bit():
    jax = pytest.importorskip("jax")
    for fn in ("uniform", "normal"):
        got = getattr(random, fn)(random.PRNGKey(15), (500,), jnp.bfloat16)
        want = getattr(jax.random, fn)(jax.random.PRNGKey(15), (500,), "bfloat16")
        assert got.dtype == BF16
        np.testing.assert_array_equal(_bits(got), _bits(np.asarray(want)))
    u = np.asarray(random.uniform(random.PRNGKey(1), (2000,), jnp.bfloat16)).astype(F32)
    assert u.min() >= 0 and u.max() < 1 and len(np.unique(u)) == 128


def test_gradients_and_jit_in_bfloat16():
    x = jnp.asarray(np.array([1.5, -2.0, 0.25], BF16))
    g = netcl.grad(lambda v: jnp.sum(jnp.tanh(v) * v))(x)
    assert g.dtype == BF16
    v = np.asarray(x).astype(F32)
    want = np.tanh(v) + v * (1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(np.asarray(g).astype(F32), want, rtol=2e-2)


@pytest.mark.parametrize("dtype", HALVES, ids=HALF_IDS)
def test_fused_kernels_round_each_result_as_eager_stores_do(dtype):
    """A fused kernel rounds every 16-bit result to its dtype in registers, so jit and eager
    agree bit for bit (as XLA's fused kernels do); 21 elements: vector blocks and a tail."""
    x = jnp.asarray(np.random.default_rng(5).uniform(-2, 2, 21).astype(dtype))

    def f(a, b):
        return jnp.exp(a) * b - a / 3 + jnp.tanh(b * 1.7)
    got = netcl.jit(f)(x, x[::-1])
    assert got.dtype == dtype
    np.testing.assert_array_equal(_bits(got), _bits(f(x, x[::-1])))


def test_jit_with_a_scalar_literal():
    x = jnp.asarray(np.array([1.5, 2.0, 3.0], BF16))
    got = netcl.jit(lambda a: a * 0.5 + 1)(x)
    assert np.asarray(got).astype(F32).tolist() == [1.75, 2.0, 2.5]


# ---- autocast and mixed precision ---------------------------------------------------------

def _mlp():
    rng = np.random.default_rng(0)
    init, apply = stax.serial(stax.Dense(32), stax.Tanh, stax.Dense(10), stax.LogSoftmax)
    params = float32_params(init(random.PRNGKey(0), (-1, 16))[1])
    x = jnp.asarray(rng.standard_normal((8, 16)).astype(np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)])
    return params, x, y, (lambda p, x, y: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))


def test_autocast_bfloat16_matches_float32_with_float32_gradients():
    params, x, y, loss = _mlp()
    half = netcl.autocast(loss, jnp.bfloat16)
    np.testing.assert_allclose(half(params, x, y), loss(params, x, y), rtol=2e-2)
    ir = netcl.make_ir(half)(params, x, y)
    dots = [e for e in ir.eqns if e.prim.name == "dot_general"]
    assert dots and all(v.aval.dtype == BF16 for e in dots for v in e.inputs)
    want = netcl.tree_util.tree_leaves(netcl.grad(loss)(params, x, y))
    got = netcl.tree_util.tree_leaves(netcl.grad(half)(params, x, y))
    for a, b in zip(got, want):
        assert a.dtype == np.float32
        a, b = np.asarray(a), np.asarray(b)
        assert np.linalg.norm(a - b) <= 5e-2 * np.linalg.norm(b), (a, b)
    for name, dt in (("bfloat16", BF16), ("bf16", BF16), (" BF16", BF16), ("f16", F16)):
        ir = netcl.make_ir(netcl.autocast(loss, name))(params, x, y)
        assert all(v.aval.dtype == dt for e in ir.eqns if e.prim.name == "dot_general"
                   for v in e.inputs), name
    raises_with(ValueError, lambda: netcl.autocast(loss, "bf8"), "autocast", "bfloat16")


def test_mixed_precision_policies_in_bfloat16():
    for spec in ("p=f32,c=bf16,o=f32", "params=float32,compute=bfloat16,output=float32",
                 "compute=BF16,params=float32"):
        pol = mp.get_policy(spec)
        assert (pol.param_dtype, pol.compute_dtype, pol.output_dtype) == (F32, BF16, F32), spec
    assert str(mp.get_policy("p=f32,c=bf16,o=f32")) == "p=float32,c=bfloat16,o=float32"
    assert mp.get_policy("bf16").output_dtype == BF16
    assert mp.Policy(F32, jnp.bfloat16, "bfloat16").output_dtype == BF16
    pol = mp.get_policy("p=f32,c=bf16,o=f32")
    tree = {"w": jnp.ones(3), "n": jnp.arange(3), "h": np.ones(2, np.float32)}
    cast = pol.cast_to_compute(tree)
    assert cast["w"].dtype == BF16 and cast["h"].dtype == BF16 and \
        cast["n"].dtype == tree["n"].dtype     # ints untouched
    assert pol.cast_to_output(cast)["w"].dtype == F32
    assert mp.get_policy("p=f32,c=f16,o=f32").compute_dtype == F16    # (unchanged)


# ---- errors -------------------------------------------------------------------------------

def test_unsupported_uses_raise_typed_errors_naming_the_function():
    x = jnp.asarray(np.array([1.0, 2.0], BF16))
    raises_with(TypeError, lambda: jnp.bitwise_and(x, x), "bitwise_and", "bfloat16")
    raises_with(TypeError, lambda: jnp.linalg.inv(jnp.ones((2, 2), jnp.bfloat16)), "inv",
                "bfloat16")
    raises_with(TypeError, lambda: jnp.zeros(2, "bf16"), "zeros", "bf16")
    raises_with(TypeError, lambda: x.astype(np.int8), "astype", "int8")
    raises_with(TypeError, lambda: lax.shift_left(x, x), "shift_left")


def test_pooling_in_bfloat16():
    x = np.random.default_rng(5).uniform(-1, 1, (2, 6, 6, 3)).astype(BF16)
    got = lax.reduce_window(jnp.asarray(x), -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                            "VALID")
    want = x.astype(F32).reshape(2, 3, 2, 3, 2, 3).max(axis=(2, 4))
    assert got.dtype == BF16
    np.testing.assert_array_equal(np.asarray(got).astype(F32), want)
