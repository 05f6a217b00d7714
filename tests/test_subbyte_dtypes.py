"""JAX's narrow dtypes (ml_dtypes' types, one byte per element in memory as in NumPy):

- the MX floats float4_e2m1fn, float6_e2m3fn, float6_e3m2fn: storage floats as the 8-bit
  ones (float8.py's "mx" rules: no inf, no NaN; overflow and inf saturate, NaN becomes a
  zero of the other sign, as ml_dtypes converts). Every code loads, a dense sample of float32
  values (every tie, its neighbours, the overflow edge, NaN payloads of both signs, random
  bit patterns) stores bit for bit as ml_dtypes, eagerly and fused; JAX's promotion.
- the integers int4, uint4, int2, uint2, int1, uint1: ml_dtypes' layout (the value's low
  bits), JAX's creation (ints wrap), conversions, promotion (with bools, themselves and
  Python ints only), arithmetic wrapping within the width, comparisons, reductions (JAX
  0.10's own sum/prod of them fail with "Invalid integer data type 'V'": these follow
  promote_integers, to the default int), structural ops. References are computed on int64
  values and wrapped; int4 and uint4 are also checked against JAX itself (JAX 0.10 on CPU
  cannot run most ops on int1, and crashes or errs on several int2 ones).

Also: sorting (keys in the compute type), matrix products (int32 GEMMs, wrapped when
stored), population_count/clz, checkpoints, and fused kernels that wrap a narrow result
before the next op reads it, as eager stores do.
"""
import os

import ml_dtypes
import numpy as np
import pytest
from util import raises_with

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.core import dtypes

FALLBACK = os.environ.get("NETCL_DEVICE") == "numpy"
F32 = dtypes.float32
MX = [np.dtype(getattr(ml_dtypes, n)) for n in ("float4_e2m1fn", "float6_e2m3fn",
                                                  "float6_e3m2fn")]
NARROW = [np.dtype(getattr(ml_dtypes, n)) for n in ("int4", "uint4", "int2", "uint2", "int1",
                                                      "uint1")]
INT4, UINT4 = NARROW[0], NARROW[1]
MX_IDS, NARROW_IDS = [d.name for d in MX], [d.name for d in NARROW]


def _bits(d):
    return ml_dtypes.finfo(d).bits if d in MX else ml_dtypes.iinfo(d).bits


def _bytes(a):
    return np.asarray(a).view(np.uint8)


def _wrap(v, d):
    """int64 values wrapped into narrow integer `d` (two's complement), as `d`."""
    info, n = ml_dtypes.iinfo(d), 1 << _bits(d)
    return ((np.asarray(v, np.int64) - info.min) % n + info.min).astype(d)


def _values(d):
    """Every value of narrow integer `d`, as int64."""
    info = ml_dtypes.iinfo(d)
    return np.arange(info.min, info.max + 1, dtype=np.int64)


def _same_ints(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64))


# ---- MX floats ---------------------------------------------------------------------------

@pytest.mark.parametrize("d", MX, ids=MX_IDS)
def test_mx_every_byte_loads_as_ml_dtypes_and_codes_store_back(d):
    every = np.arange(256, dtype=np.uint8).view(d)       # junk high bits read as ml_dtypes
    got = np.asarray(jnp.asarray(every).astype(F32))
    np.testing.assert_array_equal(got.view(np.uint32), every.astype(F32).view(np.uint32))
    codes = every[:1 << _bits(d)]
    np.testing.assert_array_equal(_bytes(jnp.asarray(codes.astype(F32)).astype(d)),
                                  _bytes(codes))
    assert np.asarray(jnp.asarray(codes)).dtype == d      # ml_dtypes arrays in and out


def _mx_values(d):
    """float32 values probing `d`'s rounding: every value, the midpoints between neighbours
    (ties) and the floats next to them, the overflow edge, NaNs of both signs and several
    payloads, infinities, signed zeros, float32 subnormals, random bit patterns."""
    every = np.arange(1 << _bits(d), dtype=np.uint8).view(d).astype(F32)
    fin = np.unique(every).astype(np.float64)
    mid = ((fin[1:] + fin[:-1]) / 2).astype(F32)
    top = np.float32(fin[-1])
    over = np.float32([top * 1.0625, top * 1.125, top * 1.5, top * 2, 3e38])
    near = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)),
                           np.nextafter(mid, np.float32(-np.inf)), over, -over])
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF,
                     0x7FA00000], np.uint32).view(F32)
    special = np.float32([np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 1e-39, 1.1754942e-38])
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**32, 60000, dtype=np.uint64).astype(np.uint32).view(F32)
    scaled = (rng.standard_normal(20000) * float(top)).astype(F32)  # dense in the range
    return np.concatenate([every, near, nans, special, bits, scaled]).astype(F32)


@pytest.mark.parametrize("d", MX, ids=MX_IDS)
def test_mx_stores_round_as_ml_dtypes_eager_and_fused(d):
    x = _mx_values(d)
    with np.errstate(all="ignore"):
        want = x.astype(d)
    np.testing.assert_array_equal(_bytes(jnp.asarray(x).astype(d)), _bytes(want))
    # under jit: a fused kernel's store, and its rounding in registers (the MX value goes on
    # to a float32 result without being stored); (signalling NaNs make NumPy's references
    # warn on the fallback)
    with np.errstate(invalid="ignore"):
        stored, kept = netcl.jit(lambda v: ((v * 1.0).astype(d),
                                            (v * 1.0).astype(d).astype(F32) * 1.0))(x)
    # (bit for bit but a NaN's sign, which arithmetic may change: NVIDIA's OpenCL gives its
    # canonical positive NaN; a NaN still becomes a zero)
    num = ~np.isnan(x)
    np.testing.assert_array_equal(_bytes(stored)[num], _bytes(want)[num])
    np.testing.assert_array_equal(np.asarray(kept)[num].view(np.uint32),
                                  want.astype(F32)[num].view(np.uint32))
    assert (np.asarray(kept)[~num] == 0).all()


def test_mx_overflow_inf_nan_and_ties_spelled_out():
    f4, f6, e3m2 = MX
    x = np.float32([1e6, -1e6, np.inf, -np.inf, np.nan, -np.nan, -0.0, 0.25, 0.75, 5.0, -5.0])
    # saturate to +-6; NaN -> zero of the other sign; ties to even (0.25 -> 0, 0.75 -> 1,
    # 5 -> 4)
    assert _bytes(jnp.asarray(x).astype(f4)).tolist() == [7, 15, 7, 15, 8, 0, 8, 0, 2, 6, 14]
    assert np.asarray(jnp.asarray(x[:6]).astype(f6)).astype(F32).tolist() == \
        [7.5, -7.5, 7.5, -7.5, -0.0, 0.0]
    assert np.asarray(jnp.asarray(x[:4]).astype(e3m2)).astype(F32).tolist() == \
        [28.0, -28.0, 28.0, -28.0]


def test_mx_arithmetic_rounds_once_and_converts():
    """Math in float32, each result rounded once (as JAX computes them, through ml_dtypes);
    conversions to and from the other floats and int32 go through float32 (exact)."""
    rng = np.random.default_rng(3)
    hosts = [(rng.standard_normal((4, 33)) * 3).astype(d) for d in MX]
    others = [dtypes.bfloat16, dtypes.float16, dtypes.float8_e4m3fn, dtypes.int32, *MX]

    def f(xs):
        return [(x + x[::-1], x * x, jnp.maximum(x, -x), jnp.exp(x), jnp.sum(x, axis=1),
                 x @ x.T, [x.astype(o) for o in others]) for x in xs]
    got = netcl.jit(f)([jnp.asarray(h) for h in hosts])
    for h, (add, mul, mx, ex, sm, mm, conv) in zip(hosts, got):
        v = h.astype(F32)
        with np.errstate(all="ignore"):
            for g, w in ((add, v + v[::-1]), (mul, v * v), (mx, np.maximum(v, -v)),
                         (ex, np.exp(v)), (sm, v.sum(1)), (mm, v @ v.T)):
                w = w.astype(h.dtype)
                assert np.asarray(g).dtype == h.dtype
                np.testing.assert_allclose(np.asarray(g).astype(F32), w.astype(F32),
                                           rtol=0.26)   # (one MX ulp: sums' order)
            np.testing.assert_array_equal(_bytes(add), _bytes((v + v[::-1]).astype(h.dtype)))
            for o, g in zip(others, conv):
                w = v.astype(np.int32) if o == dtypes.int32 else v.astype(o)
                assert np.asarray(g).dtype == o
                np.testing.assert_array_equal(np.asarray(g).astype(F32), w.astype(F32))


PROMOTION_DTYPES = ["bool", "int4", "uint4", "int2", "uint2", "int1", "uint1", "int32",
                    "uint32", "float16", "bfloat16", "float32", "float8_e4m3fn",
                    "float8_e5m2", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"]
NEW = {"int4", "uint4", "int2", "uint2", "int1", "uint1", "float4_e2m1fn", "float6_e2m3fn",
       "float6_e3m2fn"}


def test_promotion_table_matches_jax():
    """Every pair with a new dtype in it: JAX's promote_types, or its TypePromotionError."""
    jax = pytest.importorskip("jax")
    for a in PROMOTION_DTYPES:
        for b in PROMOTION_DTYPES:
            if a not in NEW and b not in NEW:
                continue
            try:
                want = np.dtype(jax.numpy.promote_types(a, b))
            except jax.errors.JaxRuntimeError:      # pragma: no cover
                raise
            except Exception as e:                  # (jax.dtypes.TypePromotionError)
                assert type(e).__name__ == "TypePromotionError", e
                raises_with(netcl.dtypes.TypePromotionError,
                            lambda: jnp.promote_types(a, b), a, b)
                continue
            assert jnp.promote_types(a, b) == want, (a, b)


@pytest.mark.parametrize("name", sorted(NEW))
def test_weak_python_scalars_promote_as_jax(name):
    """Python ints join every new dtype (wrapping into a narrow integer); Python floats join
    the MX floats and raise TypePromotionError with a narrow integer; Python complex
    numbers raise with both, as in JAX."""
    d = np.dtype(name)
    x = jnp.zeros(3, d)
    assert jnp.result_type(d, int) == d and (x + 1).dtype == d
    if d in MX:
        assert jnp.result_type(d, float) == d and (x * 2.0).dtype == d
        assert (x + jnp.ones(3, jnp.int32)).dtype == d
    else:
        raises_with(netcl.dtypes.TypePromotionError, lambda: jnp.add(x, 1.5), "add", name,
                    "float")
        raises_with(netcl.dtypes.TypePromotionError, lambda: x * 1.5, name, "float")
        raises_with(TypeError, lambda: jnp.result_type(d, float), name)
        raises_with(netcl.dtypes.TypePromotionError,
                    lambda: jnp.add(x, jnp.ones(3, jnp.int32)), "add", name, "int32")
    raises_with(TypeError, lambda: x + 1j, name, "complex")


def test_names_and_dtype_helpers():
    jax = pytest.importorskip("jax")
    for name in sorted(NEW):
        t = getattr(jnp, name)
        assert t == np.dtype(name) and np.dtype(t) == np.dtype(name)
        assert netcl.dtypes.itemsize_bits(t) == jax.dtypes.itemsize_bits(name)
        assert np.dtype(name).itemsize == 1
    for d in MX:
        assert jnp.issubdtype(d, jnp.floating) and not jnp.issubdtype(d, jnp.integer)
        assert float(jnp.finfo(d).max) == float(ml_dtypes.finfo(d).max)
        assert jnp.float4_e2m1fn(7.0).dtype == MX[0]
    for d in NARROW:
        signed = ml_dtypes.iinfo(d).min < 0
        assert jnp.issubdtype(d, jnp.integer) and not jnp.issubdtype(d, jnp.floating)
        assert jnp.issubdtype(d, np.signedinteger) == signed
        assert jnp.issubdtype(d, np.unsignedinteger) == (not signed)
        assert (jnp.iinfo(d).min, jnp.iinfo(d).max) == (ml_dtypes.iinfo(d).min,
                                                         ml_dtypes.iinfo(d).max)
        assert netcl.dtypes.iinfo(d).bits == _bits(d)
        assert jnp.isdtype(d, "signed integer" if signed else "unsigned integer")


# ---- narrow integers: layout and creation ----------------------------------------------------

def test_narrow_ints_layout_and_creation_wrap_as_jax():
    # Python ints wrap into the width, as JAX converts them (no OverflowError)
    assert jnp.int4(9) == -7 and jnp.int4(9).dtype == INT4
    _same_ints(jnp.array([1, 9, -9, 2**40], INT4), _wrap([1, 9, -9, 2**40], INT4))
    _same_ints(jnp.array([-1, 17], UINT4), np.array([15, 1], UINT4))
    _same_ints(jnp.arange(20, dtype=INT4), _wrap(np.arange(20), INT4))
    _same_ints(jnp.full((2, 3), 100, INT4), np.full((2, 3), 4, INT4))
    _same_ints(jnp.zeros(3, jnp.uint2), np.zeros(3, NARROW[3]))
    _same_ints(jnp.ones_like(jnp.zeros(3), dtype=jnp.int1), np.full(3, -1, NARROW[4]))
    _same_ints(jnp.array([True, False], INT4), np.array([1, 0], INT4))
    for d in NARROW:
        v = _values(d)
        # device memory and np.asarray hold ml_dtypes' bytes: the low bits, 0 above
        assert _bytes(jnp.asarray(v.astype(d))).tolist() == _bytes(v.astype(d)).tolist()
        assert _bytes(jnp.array(v.tolist(), d)).tolist() == _bytes(v.astype(d)).tolist()
        # bits above the width are ignored when read, as ml_dtypes reads them
        junk = np.arange(256, dtype=np.uint8).view(d)
        _same_ints(jnp.asarray(junk).astype(jnp.int32), junk.astype(np.int32))
        _same_ints(jnp.asarray(junk) + 0, junk.astype(np.int64).astype(d))
    # Python floats: truncated where they fit, else an error (NumPy arrays wrap, as JAX's)
    _same_ints(jnp.array([1.7, -3.5, 7.9], INT4), np.array([1, -3, 7], INT4))
    raises_with(OverflowError, lambda: jnp.array([1.0, 8.0], INT4), "array", "int4")
    raises_with(ValueError, lambda: jnp.array([np.nan], INT4), "NaN")
    _same_ints(jnp.asarray(np.float32([100.5, -3]), dtype=INT4), np.array([4, -3], INT4))
    # a weak Python int must fit the default int, as in JAX
    too_big = 2**63 if netcl.config.enable_x64 else 2**40
    raises_with(OverflowError, lambda: jnp.ones(2, INT4) + too_big, "add", str(too_big))


# ---- narrow integers: arithmetic ---------------------------------------------------------------

# name -> (netcl function of (a, b), int64 reference of (a, b, dtype)); b != 0 for the
# divisions, 0 <= b for the shifts
OPS = {
    "add": (lambda a, b: a + b, lambda a, b, d: a + b),
    "sub": (lambda a, b: a - b, lambda a, b, d: a - b),
    "mul": (lambda a, b: a * b, lambda a, b, d: a * b),
    "and": (lambda a, b: a & b, lambda a, b, d: a & b),
    "or": (lambda a, b: a | b, lambda a, b, d: a | b),
    "xor": (lambda a, b: a ^ b, lambda a, b, d: a ^ b),
    "max": (jnp.maximum, lambda a, b, d: np.maximum(a, b)),
    "min": (jnp.minimum, lambda a, b, d: np.minimum(a, b)),
    "where": (lambda a, b: jnp.where(a > b, a, b), lambda a, b, d: np.where(a > b, a, b)),
    "lt": (lambda a, b: a < b, lambda a, b, d: a < b),
    "ge": (lambda a, b: a >= b, lambda a, b, d: a >= b),
    "eq": (lambda a, b: a == b, lambda a, b, d: a == b),
    "neg": (lambda a, b: -a, lambda a, b, d: -a),
    "not": (lambda a, b: ~a, lambda a, b, d: ~a),
    "sign": (lambda a, b: jnp.sign(a), lambda a, b, d: np.sign(a)),
    "square": (lambda a, b: jnp.square(a), lambda a, b, d: a * a),
    "plus_weak": (lambda a, b: a + 5, lambda a, b, d: a + 5),
    "times_weak": (lambda a, b: a * 3, lambda a, b, d: a * 3),
    # (a Python int wraps into the dtype first: int1's 1 is -1, as in JAX)
    "lt_weak": (lambda a, b: a < 1, lambda a, b, d: a < _wrap(1, d).astype(np.int64)),
    "floordiv": (lambda a, b: a // b, lambda a, b, d: np.floor_divide(a, b)),
    "mod": (lambda a, b: a % b, lambda a, b, d: np.remainder(a, b)),
    "lax_div": (lax.div, lambda a, b, d: np.trunc(a / b).astype(np.int64)),
    "lax_rem": (lax.rem, lambda a, b, d: a - b * np.trunc(a / b).astype(np.int64)),
}
# (left shifts wrap; right shifts are arithmetic for signed dtypes, logical for unsigned)
SHIFTS_AND_POWERS = {
    "shl": (jnp.left_shift, lambda a, b, d: a << b),
    "shr": (jnp.right_shift, lambda a, b, d: a >> b),
    "cube": (lambda a, b: a ** 3, lambda a, b, d: a ** 3),
}
DIVISIONS, SHIFTS = {"floordiv", "mod", "lax_div", "lax_rem"}, {"shl", "shr"}


def _pairs(d, name):
    """(a, b): every pair of `d`'s values (as int64) that op `name` takes."""
    v = _values(d)
    a, b = (m.ravel() for m in np.meshgrid(v, v))
    keep = b != 0 if name in DIVISIONS else b >= 0 if name in SHIFTS else slice(None)
    return a[keep], b[keep]


def _check_ops(ops):
    """Every op on every pair of values of every narrow integer, each applied to the inputs
    themselves, in one jitted function (its kernels build as one program), against int64
    arithmetic wrapped to the width."""
    got = netcl.jit(lambda xs: [{k: f(*xs[i][k]) for k, (f, _) in ops.items()}
                                for i in range(len(NARROW))])(
        [{k: tuple(jnp.asarray(t.astype(d)) for t in _pairs(d, k)) for k in ops}
         for d in NARROW])
    for d, outs in zip(NARROW, got):
        for k, (_, ref) in ops.items():
            want = ref(*_pairs(d, k), d)
            want = want if want.dtype == np.bool_ else _wrap(want, d)
            assert np.asarray(outs[k]).dtype == want.dtype, (d, k)
            np.testing.assert_array_equal(np.asarray(outs[k]).astype(np.int64),
                                          want.astype(np.int64), err_msg=f"{d} {k}")


def test_narrow_int_arithmetic_wraps_within_the_width():
    _check_ops(OPS)


def test_narrow_int_shifts_and_powers():
    _check_ops(SHIFTS_AND_POWERS)


def test_int4_uint4_agree_with_jax():
    """The same ops run by JAX itself (but the shifts: JAX 0.10 on CPU shifts uint4 right
    arithmetically, and lax.div / lax.rem, which jax.numpy has not)."""
    jax = pytest.importorskip("jax")
    jnp_ = jax.numpy
    jops = {"max": jnp_.maximum, "min": jnp_.minimum, "sign": lambda p, q: jnp_.sign(p),
            "square": lambda p, q: jnp_.square(p), "where": lambda p, q: jnp_.where(p > q, p, q)}
    ops = {k: f for k, (f, _) in OPS.items() if k not in ("lax_div", "lax_rem")}
    inputs = [{k: tuple(t.astype(d) for t in _pairs(d, k)) for k in ops} for d in (INT4, UINT4)]
    got = netcl.jit(lambda xs: [{k: f(*x[k]) for k, f in ops.items()} for x in xs])(
        [{k: tuple(jnp.asarray(t) for t in v) for k, v in x.items()} for x in inputs])
    for x, outs in zip(inputs, got):
        for k, f in ops.items():
            want = jops.get(k, f)(*(jnp_.asarray(t) for t in x[k]))
            _same_ints(outs[k], np.asarray(want))


def test_narrow_int_conversions():
    """Into a narrow integer: ints and bools wrap; out of one: its value, exactly. Floats
    within the range truncate toward zero."""
    ints = np.array([0, 1, -1, 7, 8, 9, -9, 17, 2**31 - 1, -2**31], np.int32)
    targets = [dtypes.int32, dtypes.uint32, dtypes.bool_, dtypes.float32, dtypes.bfloat16,
               dtypes.float16, dtypes.float8_e4m3fn, MX[0]]
    floats = {d: np.float32([ml_dtypes.iinfo(d).min, ml_dtypes.iinfo(d).max,
                             ml_dtypes.iinfo(d).max - 0.5, ml_dtypes.iinfo(d).min + 0.75, -0.0])
              for d in NARROW}
    got = netcl.jit(lambda xs, i, fs, b: [
        ([x.astype(t) for t in targets], i.astype(d), i.astype(jnp.uint32).astype(d),
         f.astype(d), b.astype(d)) for d, x, f in zip(NARROW, xs, fs)])(
        [jnp.asarray(_values(d).astype(d)) for d in NARROW], jnp.asarray(ints),
        [jnp.asarray(floats[d]) for d in NARROW], jnp.asarray(np.array([True, False])))
    for d, (outs, from_int, from_uint, from_float, from_bool) in zip(NARROW, got):
        v = _values(d)
        for t, g in zip(targets, outs):
            if t == dtypes.uint32:
                want = v.astype(np.uint32)          # (sign-extended, as int32 -> uint32)
            else:
                want = v.astype(np.float64).astype(t) if dtypes.kind(t) == "f" else v.astype(t)
            assert np.asarray(g).dtype == t
            np.testing.assert_array_equal(np.asarray(g).astype(np.float64),
                                          want.astype(np.float64), err_msg=f"{d} -> {t}")
        _same_ints(from_int, _wrap(ints, d))
        _same_ints(from_uint, _wrap(ints.astype(np.uint32), d))
        _same_ints(from_float, np.trunc(floats[d]).astype(np.int64).astype(d))
        _same_ints(from_bool, np.array([1, 0], np.int64).astype(d))


def test_narrow_ints_convert_into_each_other_wrapping():
    got = netcl.jit(lambda xs: [[x.astype(t) for t in NARROW] for x in xs])(
        [jnp.asarray(_values(d).astype(d)) for d in NARROW])
    for d, outs in zip(NARROW, got):
        for t, g in zip(NARROW, outs):
            _same_ints(g, _wrap(_values(d), t))


def test_floats_into_narrow_ints_saturate_as_jax():
    x = np.float32([1.7, -1.7, 7.9, 8.5, 100.0, -100.0, np.nan, 1e10, -1e10, np.inf])
    _same_ints(jnp.asarray(x).astype(INT4),
               np.array([1, -1, 7, 7, 7, -8, 0, 7, -8, 7], INT4))
    _same_ints(jnp.asarray(x).astype(UINT4),
               np.array([1, 0, 7, 8, 15, 0, 0, 15, 0, 15], UINT4))


def test_fused_chains_wrap_each_narrow_result():
    v = _values(INT4)
    a, b = (m.ravel() for m in np.meshgrid(v, v))
    got = netcl.jit(lambda x, y: ((x + y) < 0, (x * y).astype(F32),
                                  jnp.maximum(x - y, y)))(jnp.asarray(a.astype(INT4)),
                                                          jnp.asarray(b.astype(INT4)))
    np.testing.assert_array_equal(np.asarray(got[0]), _wrap(a + b, INT4).astype(int) < 0)
    np.testing.assert_array_equal(np.asarray(got[1]), _wrap(a * b, INT4).astype(F32))
    _same_ints(got[2], _wrap(np.maximum(_wrap(a - b, INT4).astype(int), b), INT4))


# ---- narrow integers: reductions, scans, structure ---------------------------------------------

# signed and unsigned, each width (each dtype's reduction kernels build on their own)
REDUCED = [INT4, NARROW[3], NARROW[4]]


def _random_values():
    rng = np.random.default_rng(5)
    return [rng.integers(ml_dtypes.iinfo(d).min, ml_dtypes.iinfo(d).max + 1, (3, 1031))
            for d in REDUCED]


def test_narrow_int_sums_and_scans():
    """Sums and products promote as JAX's promote_integers (to the default int, unsigned
    for the unsigned dtypes); cumulative sums and products keep the dtype, wrapping."""
    vs = _random_values()
    got = netcl.jit(lambda xs: [(jnp.sum(x), jnp.sum(x, axis=0), jnp.prod(x[:, :9], axis=1),
                                 jnp.cumsum(x, axis=1), jnp.cumprod(x[:, :40], axis=1),
                                 jnp.any(x != 0, axis=1), jnp.mean(x)) for x in xs])(
        [jnp.asarray(v.astype(d)) for d, v in zip(REDUCED, vs)])
    for d, v, (total, s0, pr, cs, cp, anyv, mean) in zip(REDUCED, vs, got):
        acc = dtypes.default_int_dtype() if v.min() < 0 else dtypes.default_uint_dtype()
        assert np.asarray(total).dtype == acc and int(total) == v.sum()
        _same_ints(s0, v.sum(0).astype(acc))
        _same_ints(pr, v[:, :9].prod(1).astype(acc))
        _same_ints(cs, _wrap(np.cumsum(v, 1), d))
        _same_ints(cp, _wrap(np.cumprod(v[:, :40], 1), d))
        np.testing.assert_array_equal(np.asarray(anyv), (v != 0).any(1))
        assert np.asarray(mean).dtype == F32 and abs(float(mean) - v.mean()) < 1e-4


def test_narrow_int_max_min_and_arg_reductions():
    vs = _random_values()
    got = netcl.jit(lambda xs: [(jnp.max(x, axis=1), jnp.min(x), jnp.argmax(x, axis=1),
                                 jnp.argmin(x), lax.cummax(x, axis=1)) for x in xs])(
        [jnp.asarray(v.astype(d)) for d, v in zip(REDUCED, vs)])
    for d, v, (mx, mn, amx, amn, cm) in zip(REDUCED, vs, got):
        _same_ints(mx, v.max(1).astype(d))
        assert int(mn) == v.min() and np.asarray(mn).dtype == d
        np.testing.assert_array_equal(np.asarray(amx), v.argmax(1))
        assert int(amn) == v.argmin()
        _same_ints(cm, np.maximum.accumulate(v, 1).astype(d))


def test_narrow_int_structural_ops():
    v = np.random.default_rng(6).integers(-8, 8, (4, 6))
    h = v.astype(INT4)
    x = jnp.asarray(h)
    got = netcl.jit(lambda x: (x.T, x.reshape(3, 8), jnp.concatenate([x, x[:1]]),
                               jnp.pad(x, 1), x[::-1, 1::2], jnp.take(x, jnp.asarray([3, 0]),
                                                                      axis=1),
                               jnp.roll(x, 2, axis=1), jnp.broadcast_to(x[:1], (3, 6)),
                               jnp.stack([x, x]), x.at[0, 1].set(9),
                               x.at[jnp.asarray([1, 1]), 2].add(jnp.asarray([7, 7], INT4))))(x)
    added = v.copy()
    added[1, 2] += 14
    want = (h.T, h.reshape(3, 8), np.concatenate([h, h[:1]]), np.pad(h, 1), h[::-1, 1::2],
            np.take(h, [3, 0], axis=1), np.roll(h, 2, axis=1), np.broadcast_to(h[:1], (3, 6)),
            np.stack([h, h]), _wrap(np.where((np.arange(24) == 1).reshape(4, 6), 9, v), INT4),
            _wrap(added, INT4))
    for g, w in zip(got, want):
        _same_ints(g, w)


def test_narrow_int_sort():
    for d in (INT4, UINT4):
        info = ml_dtypes.iinfo(d)
        v = np.random.default_rng(8).integers(info.min, info.max + 1, (3, 300))
        x = jnp.asarray(v.astype(d))
        _same_ints(jnp.sort(x, axis=1), np.sort(v, 1).astype(d))
        np.testing.assert_array_equal(np.asarray(jnp.argsort(x, axis=1, stable=True)),
                                      np.argsort(v, 1, kind="stable"))


def test_narrow_int_matmul_wraps_as_jax():
    v = np.random.default_rng(9).integers(-8, 8, (5, 7))
    w = np.random.default_rng(10).integers(-8, 8, (7, 3))
    _same_ints(jnp.asarray(v.astype(INT4)) @ jnp.asarray(w.astype(INT4)), _wrap(v @ w, INT4))


def test_narrow_int_bit_counts():
    v = _values(INT4)
    x = jnp.asarray(v.astype(INT4))
    bits = [int(b) for b in v & 15]
    _same_ints(lax.population_count(x), np.array([bin(b).count("1") for b in bits], INT4))
    _same_ints(lax.clz(x), np.array([4 - b.bit_length() for b in bits], INT4))


def test_full_converts_float_fill_values_as_jax():
    """A float fill value for an integer dtype saturates (NaN gives 0), as JAX's full does
    and convert_element_type does, instead of NumPy's undefined out-of-range cast."""
    cases = [(1e10, jnp.int32, 2**31 - 1), (-1e10, jnp.int32, -2**31), (np.nan, jnp.int32, 0),
             (-3.0, jnp.uint32, 0), (2.7, jnp.uint32, 2), (100.0, INT4, 7), (-9.5, INT4, -8)]
    for value, dtype, want in cases:
        got = np.asarray(jnp.full(3, value, dtype)).astype(np.int64)
        assert (got == want).all(), (value, dtype, got)
