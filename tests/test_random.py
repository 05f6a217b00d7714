"""Tests for the threefry2x32 primitive, the bit-level primitives of random_bits.py and
netcl.random: known-answer vectors, device vs NumPy reference, JAX's streams, determinism
and independence of split/fold_in, distribution sanity, dtypes/shapes, and bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import netcl
import netcl.numpy as jnp
from netcl import random
from netcl.core.devices import numpy_device
from netcl.primitives import random_bits as rb

from util import to_device

U32 = np.uint32
INT = netcl.core.dtypes.default_int_dtype      # (int64 with x64, as JAX's)
N = 100_000  # samples for distribution checks
Z = 5.0      # tolerance in standard errors (a false alarm is ~1e-6 per check)


def u32(*vals):
    return [jnp.array(np.asarray(v, dtype=U32)) for v in vals]


def host(x):
    return np.asarray(x)


def same_bits(a, b):
    a, b = host(a), host(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def ulps(a, b):
    a, b = host(a).astype(np.float32), np.asarray(b, np.float32)
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


# ---- the cipher ---------------------------------------------------------------------------------

# Random123's known-answer vectors for Threefry-2x32 with 20 rounds (kat_vectors; also
# JAX's testThreefry2x32): (key1, key2, x1, x2) -> (y1, y2).
KAT = [((0, 0, 0, 0), (0x6B200159, 0x99BA4EFE)),
       ((0xFFFFFFFF,) * 4, (0x1CB996FC, 0xBB002BE7)),
       ((0x13198A2E, 0x03707344, 0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]


@pytest.mark.parametrize("args,want", KAT)
def test_threefry_known_answers(args, want):
    y1, y2 = rb.threefry2x32(*u32(*args))
    assert (int(y1), int(y2)) == want
    r1, r2 = rb._threefry_ref(*[np.asarray(a, U32) for a in args])
    assert (int(r1), int(r2)) == want


def test_threefry_known_answers_batched():
    # the three vectors as one call of shape (3,), and through broadcasting keys
    k1, k2, x1, x2 = u32(*zip(*[a for a, _ in KAT]))
    y1, y2 = rb.threefry2x32(k1, k2, x1, x2)
    assert host(y1).tolist() == [w[0] for _, w in KAT]
    assert host(y2).tolist() == [w[1] for _, w in KAT]
    k = jnp.array(np.uint32(0x13198A2E))
    y1, _ = rb.threefry2x32(k, jnp.array(np.uint32(0x03707344)),
                            *u32([[0x243F6A88], [0x243F6A88]], [[0x85A308D3, 0x85A308D3]]))
    assert host(y1).tolist() == [[0xC4923A9C] * 2] * 2


# Operand kinds: 0-d, full shape, or a size-1-dimension broadcast. A short list keeps the
# number of kernel variants (one per combination of read patterns) small.
_KINDS = [("scalar", "scalar", "scalar", "full"), ("scalar", "scalar", "full", "full"),
          ("full", "full", "full", "full"), ("row", "scalar", "full", "row"),
          ("scalar", "scalar", "scalar", "scalar")]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([(0,), (1,), (7,), (3, 5), (2, 3, 4)]), st.sampled_from(_KINDS),
       st.sampled_from(["dense", "transposed", "reversed"]), st.integers(0, 2**32 - 1))
def test_threefry_matches_reference(shape, kinds, layout, seed):
    rng = np.random.default_rng(seed)
    ops = []
    for kind in kinds:
        s = {"scalar": (), "full": shape, "row": (1,) * (len(shape) - 1) + shape[-1:]}[kind]
        ops.append(rng.integers(0, 2**32, size=s, dtype=np.uint64).astype(U32))
    want = rb._threefry_ref(*ops)
    got = rb.threefry2x32(*[to_device(o, layout) for o in ops])
    for g, w in zip(got, want):
        same_bits(g, np.broadcast_to(w, want[0].shape))


def test_threefry_abstract_errors():
    a = jnp.array(np.zeros(3, U32))
    with pytest.raises(TypeError, match="threefry2x32"):
        rb.threefry2x32(a, a, a, jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match="threefry2x32"):
        rb.threefry2x32(a, a, a, jnp.array(np.zeros(4, U32)))
    with pytest.raises(ValueError, match="threefry2x32"):
        rb.threefry2x32(a, a, a, jnp.array(np.zeros((1, 3), U32)))


def test_threefry_has_no_derivative():
    assert rb.threefry2x32_p.vjp(None, None, *u32(0, 0, 0, 0)) == (None,) * 4
    _, tangents = rb.threefry2x32_p.jvp(tuple(u32(0, 0, 0, 0)), (None,) * 4)
    assert all(type(t).__name__ == "Zero" for t in tangents)


def test_iota_2x32_shape():
    hi, lo = rb.iota_2x32_shape((2, 3))
    assert host(hi).tolist() == [[0] * 3] * 2
    assert host(lo).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert host(lo).dtype == U32 and host(hi).dtype == U32
    assert host(rb.iota_2x32_shape(())[1]).tolist() == 0
    assert host(rb.iota_2x32_shape((0, 4))[1]).shape == (0, 4)


# ---- bit-level primitives ------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["int32", "uint32"]), st.sampled_from([(), (9,), (2, 5)]),
       st.integers(0, 2**32 - 1))
def test_shifts_match_reference(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(U32).view(dtype)
    amounts = np.array([0, 1, 5, 31, 32, 33, 100, 0xFFFFFFFF], np.uint64)
    s = rng.choice(amounts, size=shape).astype(U32).view(dtype)
    for fn, p in [(rb.shift_left, rb.shift_left_p), (rb.shift_right_logical,
                  rb.shift_right_logical_p), (rb.shift_right_arithmetic,
                                              rb.shift_right_arithmetic_p)]:
        same_bits(fn(jnp.array(x), jnp.array(s)), p.reference(x, s))


def test_shift_semantics():
    x = jnp.array(np.array([-8, 8, -1, 1], np.int32))
    s = jnp.array(np.array([1, 1, 32, 31], np.int32))
    assert host(rb.shift_left(x, s)).tolist() == [-16, 16, 0, -2**31]
    assert host(rb.shift_right_logical(x, s)).tolist() == [2**31 - 4, 4, 0, 0]
    assert host(rb.shift_right_arithmetic(x, s)).tolist() == [-4, 4, -1, 0]
    with pytest.raises(TypeError, match="shift_left"):
        rb.shift_left(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match="shift_right_logical"):
        rb.shift_right_logical(x, jnp.array(np.ones(4, U32)))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["int32", "uint32", "float32"]), st.sampled_from(["int32", "uint32",
                                                                         "float32"]),
       st.integers(0, 2**32 - 1))
def test_bitcast_matches_reference(src, dst, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=(3, 4), dtype=np.uint64).astype(U32)
    bits[0, :3] = [0x7F800000, 0xFF800000, 0x80000000]  # inf, -inf, -0.0
    x = bits.view(src)
    same_bits(rb.bitcast_convert_type(jnp.array(x), dst), x.view(dst))


def test_bitcast_errors():
    with pytest.raises(TypeError, match="bitcast_convert_type"):
        rb.bitcast_convert_type(jnp.ones(3, jnp.float32), jnp.float16)
    with pytest.raises(TypeError, match="bitcast_convert_type"):
        rb.bitcast_convert_type(jnp.ones(3, jnp.bool_), jnp.int32)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_nextafter_matches_reference(dtype):
    if dtype == "float64" and not netcl.default_device().capabilities.fp64:
        pytest.skip("no fp64")
    big = float(np.finfo(dtype).max)
    x = np.array([1.0, 1.0, 0.0, 0.0, -0.0, -1.5, big, big, -np.inf, np.inf, np.nan, 2.0, 3.0],
                 dtype)
    y = np.array([2.0, 0.0, 1.0, -1.0, 1.0, -2.0, np.inf, 0.0, 0.0, np.inf, 1.0, np.nan, 3.0],
                 dtype)
    with np.errstate(all="ignore"):
        want = np.nextafter(x, y)
    got = host(rb.nextafter(jnp.array(x), jnp.array(y)))
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))


# ---- keys and JAX's streams -----------------------------------------------------------------

def test_prngkey_seeds():
    # JAX without x64: [0, seed mod 2^32]; with x64 the seed's two 32-bit halves
    x64 = netcl.config.enable_x64
    assert host(random.PRNGKey(0)).tolist() == [0, 0]
    assert host(random.PRNGKey(42)).tolist() == [0, 42]
    assert host(random.PRNGKey(-1)).tolist() == [2**32 - 1 if x64 else 0, 2**32 - 1]
    assert host(random.PRNGKey(2**32 + 5)).tolist() == [1 if x64 else 0, 5]
    assert host(random.PRNGKey(np.int64(7))).tolist() == [0, 7]
    assert host(random.key(3)).tolist() == [0, 3]
    assert host(random.PRNGKey(jnp.array(-2, jnp.int32))).tolist() == [0, 2**32 - 2]
    k = random.PRNGKey(5)
    assert host(k).dtype == U32 and k.shape == (2,)
    assert random.key_data(k) is k and random.wrap_key_data(k) is k


# Values printed by JAX (threefry2x32, jax_threefry_partitionable=True, the default since
# JAX 0.5): they are also the golden values of jax-js's test suite and follow from the
# cipher's known answers and JAX's counter layout, which test_split_fold_in_symmetry checks.
JAX_SPLIT_0_3 = [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]]
JAX_BITS_0 = 4070199207
JAX_BITS_10_4 = [169096361, 1572511259, 2689743692, 2228103506]
JAX_UNIFORM_0_4 = np.array([0.947667, 0.9785799, 0.33229148, 0.46866846], np.float32)
# randint(key(0), (8,), 0, 20) and bernoulli(key(0), 0.3, (8,)): golden values of another
# port's tests against JAX (they follow from JAX's randint algorithm on the bits above).
JAX_RANDINT_0_8 = [9, 0, 12, 13, 11, 7, 12, 3]
JAX_BERNOULLI_0_8 = [False] * 5 + [True, False, False]
JAX_NORMAL_0_16 = np.array(
    [1.6226422, 2.0252647, -0.43359444, -0.07861735, 0.1760909, -0.97208923, -0.49529874,
     0.4943786, 0.6643493, -0.9501635, 2.1795304, -1.9551506, 0.35857072, 0.15779513,
     1.2770847, 1.5104648], np.float32)


def test_jax_streams():
    k = random.PRNGKey(0)
    assert host(random.split(k, 3)).tolist() == JAX_SPLIT_0_3
    assert int(random.bits(k)) == JAX_BITS_0
    assert host(random.bits(random.PRNGKey(10), (4,))).tolist() == JAX_BITS_10_4
    same_bits(random.uniform(k, (4,), jnp.float32), JAX_UNIFORM_0_4)
    # normal goes through erf_inv, whose float32 rounding differs by an ulp or two
    assert ulps(random.normal(k, (16,), jnp.float32), JAX_NORMAL_0_16).max() <= 3
    assert host(random.split(k)).tolist() == JAX_SPLIT_0_3[:2]
    # (int32: JAX's values without x64; int64 draws 64-bit words, checked below)
    assert host(random.randint(k, (8,), 0, 20, jnp.int32)).tolist() == JAX_RANDINT_0_8
    assert host(random.bernoulli(k, jnp.float32(0.3), (8,))).tolist() == JAX_BERNOULLI_0_8
    assert random.split(k, 0).shape == (0, 2)


def test_split_fold_in_symmetry():
    # With JAX's partitionable counters, fold_in(key, i) == split(key, n)[i].
    k = random.PRNGKey(1234)
    keys = host(random.split(k, 6))
    for i in range(6):
        assert host(random.fold_in(k, i)).tolist() == keys[i].tolist()
    # split of a shape: row-major flat index as counter
    assert host(random.split(k, (2, 3))).reshape(6, 2).tolist() == keys.tolist()


def test_streams_match_reference_model():
    # a pure-Python model of bits / uniform / split built from the reference cipher
    key = random.PRNGKey(77)
    k1, k2 = (U32(v) for v in host(key))
    idx = np.arange(12, dtype=U32)
    y1, y2 = rb._threefry_ref(k1, k2, np.zeros(12, U32), idx)
    bits = y1 ^ y2
    same_bits(random.bits(key, (3, 4)), bits.reshape(3, 4))
    f = ((bits >> U32(9)) | U32(0x3F800000)).view(np.float32) - np.float32(1)
    same_bits(random.uniform(key, (12,), jnp.float32), f)
    lo, hi = np.float32(-2.5), np.float32(4.0)
    want = np.maximum(lo, f * (hi - lo) + lo)
    same_bits(random.uniform(key, (12,), jnp.float32, minval=-2.5, maxval=4.0), want)
    same_bits(random.split(key, 12), np.stack([y1, y2], axis=-1))


def test_same_key_same_numbers_on_numpy_device():
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("already on the NumPy fallback")
    fns = [lambda k: random.bits(k, (5, 3)), lambda k: random.split(k, 4),
           lambda k: random.fold_in(k, 123), lambda k: random.uniform(k, (64,)),
           lambda k: random.randint(k, (64,), -5, 1000), lambda k: random.bernoulli(k, 0.3, (64,))]
    outs = [f(random.PRNGKey(9)) for f in fns]
    normal = random.normal(random.PRNGKey(9), (64,))
    with netcl.default_device(numpy_device()):
        key = random.PRNGKey(9)
        assert key.device.is_numpy
        for f, o in zip(fns, outs):
            same_bits(f(key), o)
        # erf_inv: the kernel's float32 approximation vs the reference's exact value
        assert ulps(random.normal(key, (64,)), host(normal)).max() <= 4


# ---- determinism and independence -----------------------------------------------------------

def test_determinism():
    a = random.uniform(random.PRNGKey(3), (100,))
    b = random.uniform(random.PRNGKey(3), (100,))
    same_bits(a, b)
    k1, k2 = random.split(random.PRNGKey(3))
    assert not np.array_equal(host(random.uniform(k1, (100,))), host(a))
    assert not np.array_equal(host(k1), host(k2))
    # a prefix of a longer draw is the shorter draw (counters are flat indices)
    same_bits(random.bits(k1, (10,)), host(random.bits(k1, (20,)))[:10])


def test_split_and_fold_in_keys_are_distinct():
    k = random.PRNGKey(0)
    keys = host(random.split(k, 1000))
    assert len({tuple(r) for r in keys.tolist()}) == 1000
    folded = {tuple(host(random.fold_in(k, d)).tolist()) for d in range(50)}
    assert len(folded) == 50
    assert host(random.fold_in(k, 2**32 - 1)).tolist() == host(random.fold_in(k, -1)).tolist()


def test_independence_of_split_streams():
    k1, k2 = random.split(random.PRNGKey(11))
    a = host(random.uniform(k1, (N,))).astype(np.float64)
    b = host(random.uniform(k2, (N,))).astype(np.float64)
    corr = np.corrcoef(a, b)[0, 1]
    assert abs(corr) < Z / math.sqrt(N)
    lag = np.corrcoef(a[:-1], a[1:])[0, 1]
    assert abs(lag) < Z / math.sqrt(N)
    # bits of neighbouring fold_in keys agree on half of their bits
    x = host(random.bits(random.fold_in(k1, 0), (4096,)))
    y = host(random.bits(random.fold_in(k1, 1), (4096,)))
    same = np.unpackbits((~(x ^ y)).view(np.uint8)).mean()
    assert abs(same - 0.5) < Z * 0.5 / math.sqrt(4096 * 32)


# ---- distributions ----------------------------------------------------------------------------

def moments(x):
    x = host(x).astype(np.float64)
    return x.mean(), x.var()


def test_uniform_distribution():
    x = host(random.uniform(random.PRNGKey(1), (N,), jnp.float32))
    assert x.dtype == np.float32 and x.min() >= 0 and x.max() < 1
    m, v = moments(x)
    assert abs(m - 0.5) < Z * math.sqrt(1 / 12 / N)
    assert abs(v - 1 / 12) < Z * math.sqrt(1 / 180 / N)
    counts = np.bincount((x * 10).astype(int), minlength=10)
    chi2 = ((counts - N / 10) ** 2 / (N / 10)).sum()
    assert chi2 < 40  # 9 degrees of freedom: P(chi2 > 40) ~ 1e-5
    y = host(random.uniform(random.PRNGKey(2), (N,), minval=-3.0, maxval=5.0))
    assert y.min() >= -3 and y.max() < 5
    assert abs(y.mean() - 1) < Z * 8 * math.sqrt(1 / 12 / N)


def test_uniform_array_bounds():
    lo = jnp.array([0.0, 10.0, -1.0])
    hi = jnp.array([1.0, 20.0, -0.5])
    x = host(random.uniform(random.PRNGKey(4), (1000, 3), minval=lo, maxval=hi))
    assert x.shape == (1000, 3)
    assert (x >= host(lo)).all() and (x < host(hi)).all()


def test_normal_distribution():
    x = host(random.normal(random.PRNGKey(5), (N,), jnp.float32))
    assert x.dtype == np.float32 and np.isfinite(x).all()
    m, v = moments(x)
    assert abs(m) < Z / math.sqrt(N)
    assert abs(v - 1) < Z * math.sqrt(2 / N)
    assert abs((np.abs(x) < 1).mean() - 0.6826895) < Z * math.sqrt(0.22 / N)


@pytest.mark.parametrize("lower,upper", [(-1.0, 1.0), (-0.5, 2.0), (1.0, 3.0)])
def test_truncated_normal(lower, upper):
    x = host(random.truncated_normal(random.PRNGKey(6), lower, upper, (N,), jnp.float32))
    assert x.dtype == np.float32
    assert (x > lower).all() and (x < upper).all()
    phi = lambda t: math.exp(-t * t / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2)))  # noqa: E731
    z = cdf(upper) - cdf(lower)
    mean = (phi(lower) - phi(upper)) / z
    var = 1 + (lower * phi(lower) - upper * phi(upper)) / z - mean ** 2
    m, v = moments(x)
    assert abs(m - mean) < Z * math.sqrt(var / N)
    assert abs(v - var) < Z * var * math.sqrt(2 / N) * 1.5


def test_truncated_normal_shapes_and_open_interval():
    lo = jnp.array([[-1.0], [0.0]])
    x = random.truncated_normal(random.PRNGKey(7), lo, 0.5)
    assert x.shape == (2, 1)
    x = host(random.truncated_normal(random.PRNGKey(7), lo, 0.5, (3, 2, 4)))
    assert x.shape == (3, 2, 4)
    assert (x[:, 0] > -1).all() and (x[:, 1] > 0).all() and (x < 0.5).all()
    # a degenerate interval is clamped inside the open bounds, never onto them
    y = host(random.truncated_normal(random.PRNGKey(7), 1.0, np.nextafter(np.float32(1),
                                                                          np.float32(2)), (8,)))
    assert np.isfinite(y).all()


def test_bernoulli():
    x = host(random.bernoulli(random.PRNGKey(8), 0.3, (N,)))
    assert x.dtype == np.bool_
    assert abs(x.mean() - 0.3) < Z * math.sqrt(0.21 / N)
    p = jnp.array([0.0, 1.0, 0.5])
    y = host(random.bernoulli(random.PRNGKey(8), p))
    assert y.shape == (3,) and y[0] == False and y[1] == True  # noqa: E712
    z = host(random.bernoulli(random.PRNGKey(8), p, (1000, 3)))
    assert not z[:, 0].any() and z[:, 1].all() and 0.4 < z[:, 2].mean() < 0.6
    assert host(random.bernoulli(random.PRNGKey(8))).shape == ()


def test_randint_range_and_uniformity():
    x = host(random.randint(random.PRNGKey(9), (N,), 0, 10))
    assert x.dtype == INT() and x.min() == 0 and x.max() == 9
    counts = np.bincount(x, minlength=10)
    assert ((counts - N / 10) ** 2 / (N / 10)).sum() < 40
    y = host(random.randint(random.PRNGKey(9), (N,), -7, 3))
    assert y.min() == -7 and y.max() == 2


def test_randint_edges():
    k = random.PRNGKey(10)
    assert (host(random.randint(k, (50,), 5, 6)) == 5).all()
    full = host(random.randint(k, (4096,), -2**31, 2**31 - 1))
    assert full.min() < -2**30 and full.max() > 2**30
    # maxval beyond the dtype's range: the span grows by one (JAX's convention)
    top = host(random.randint(k, (4096,), 2**31 - 3, 2**31))
    assert set(top.tolist()) == {2**31 - 3, 2**31 - 2, 2**31 - 1}
    u = host(random.randint(k, (4096,), 0, 2**32, dtype=jnp.uint32))
    assert u.dtype == U32 and u.max() > 2**31
    # array bounds follow JAX: maxval <= minval gives minval
    lo = jnp.array([0, 5, 10])
    hi = jnp.array([3, 5, 2])
    z = host(random.randint(k, (100, 3), lo, hi))
    assert set(z[:, 0].tolist()) <= {0, 1, 2} and (z[:, 1] == 5).all() and (z[:, 2] == 10).all()
    assert random.randint(k, (0, 3), 0, 4).shape == (0, 3)


def test_randint_matches_jax_algorithm():
    # the algorithm of jax.random.randint, on the host, from netcl's own bits
    key = random.PRNGKey(21)
    ka, kb = random.split(key)
    higher = host(random.bits(ka, (200,))).astype(np.uint64)
    lower = host(random.bits(kb, (200,))).astype(np.uint64)
    span = np.uint64(1000 - (-300))
    mult = (2**16 % span) ** 2 % span
    offset = (higher % span * mult % 2**32 + lower % span) % 2**32 % span
    want = (offset.astype(np.int64) - 300).astype(np.int32)
    np.testing.assert_array_equal(host(random.randint(key, (200,), -300, 1000, jnp.int32)),
                                  want)


def test_other_distributions():
    k = random.PRNGKey(12)
    e = host(random.exponential(k, (N,)))
    assert e.min() >= 0
    m, v = moments(e)
    assert abs(m - 1) < Z / math.sqrt(N) and abs(v - 1) < Z * math.sqrt(8 / N)
    g = host(random.gumbel(k, (N,)))
    m, v = moments(g)
    assert abs(m - 0.5772157) < Z * math.sqrt(1.645 / N)
    assert abs(v - math.pi ** 2 / 6) < Z * 0.03
    lap = host(random.laplace(k, (N,)))
    m, v = moments(lap)
    assert abs(m) < Z * math.sqrt(2 / N) and abs(v - 2) < Z * 0.03
    lg = host(random.logistic(k, (N,)))
    m, v = moments(lg)
    assert abs(m) < Z * math.sqrt(3.3 / N) and abs(v - math.pi ** 2 / 3) < Z * 0.05
    c = host(random.cauchy(k, (N,)))
    assert abs(np.median(c)) < Z * 1.6 / math.sqrt(N)
    r = host(random.rademacher(k, (N,)))
    assert r.dtype == INT() and set(np.unique(r).tolist()) == {-1, 1}
    assert abs(r.mean()) < Z / math.sqrt(N)


def test_exponential_and_gumbel_formulas():
    # JAX's formulas applied to netcl's own uniform draws
    k = random.PRNGKey(13)
    u = host(random.uniform(k, (64,))).astype(np.float64)
    np.testing.assert_allclose(host(random.exponential(k, (64,))), -np.log1p(-u), rtol=2e-6,
                               atol=1e-7)
    ug = host(random.uniform(k, (64,), minval=float(np.finfo(np.float32).tiny))).astype(
        np.float64)
    np.testing.assert_allclose(host(random.gumbel(k, (64,))), -np.log(-np.log(ug)), rtol=2e-5,
                               atol=1e-6)


# ---- dtypes and shapes -------------------------------------------------------------------------

@pytest.mark.parametrize("fn", [random.uniform, random.normal, random.gumbel,
                                random.exponential, random.laplace])
def test_shapes_and_default_dtype(fn):
    k = random.PRNGKey(14)
    default = np.float64 if netcl.config.enable_x64 else np.float32    # (as JAX's)
    for shape in [(), (0,), (1,), (2, 3), 5]:
        x = fn(k, shape)
        want = (shape,) if isinstance(shape, int) else shape
        assert x.shape == want and x.dtype == default


def test_float_dtypes():
    k = random.PRNGKey(15)
    h = host(random.uniform(k, (2000,), jnp.float16))
    assert h.dtype == np.float16 and h.min() >= 0 and h.max() < 1
    # JAX's float16 draw: the low 16 bits of the word, top 10 of them as the mantissa
    b = host(random.bits(k, (2000,)))
    np.testing.assert_array_equal(h, ((b & 0xFFFF) >> 6).astype(np.float32) / 1024)
    if netcl.default_device().capabilities.fp64:
        d = host(random.uniform(k, (2000,), jnp.float64))
        assert d.dtype == np.float64 and d.min() >= 0 and d.max() < 1
        y1, y2 = rb._threefry_ref(U32(0), U32(15), np.zeros(2000, U32), np.arange(2000,
                                                                                dtype=U32))
        want = ((y1.astype(np.uint64) << np.uint64(32) | y2) >> np.uint64(12)) * 2.0 ** -52
        np.testing.assert_array_equal(d, want)


def test_bits_dtype():
    k = random.PRNGKey(16)
    assert host(random.bits(k, (3,), jnp.uint32)).dtype == U32
    # uint64 with x64 (JAX's 64-bit draws: the pair's first word high), uint32 without
    wide = host(random.bits(k, (3,), np.uint64))
    assert wide.dtype == (np.uint64 if netcl.config.enable_x64 else U32)
    jax = pytest.importorskip("jax")
    if netcl.config.enable_x64:
        with jax.enable_x64(True):
            want = np.asarray(jax.random.bits(jax.random.PRNGKey(16), (3,), np.uint64))
            want_int = np.asarray(jax.random.randint(jax.random.PRNGKey(0), (8,), -5, 2**40))
        np.testing.assert_array_equal(wide, want)
        np.testing.assert_array_equal(host(random.randint(random.PRNGKey(0), (8,), -5, 2**40)),
                                      want_int)
    with pytest.raises(TypeError, match="bits"):
        random.bits(k, (3,), np.uint8)
    with pytest.raises(ValueError, match="bits"):
        random.bits(k, (3,), jnp.int32)


# ---- categorical, permutation, choice -------------------------------------------------------

def need(name):
    if not hasattr(jnp, name):
        pytest.skip(f"netcl.numpy.{name} is not available yet")


def test_categorical_frequencies():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    logits = jnp.array(np.log(p).astype(np.float32))
    x = host(random.categorical(random.PRNGKey(17), logits, shape=(20000,)))
    assert x.shape == (20000,) and x.dtype == INT()
    freq = np.bincount(x, minlength=4) / 20000
    assert (np.abs(freq - p) < Z * np.sqrt(p * (1 - p) / 20000)).all()
    batch = jnp.array(np.log(np.array([[0.98, 0.01, 0.01], [0.01, 0.01, 0.98]], np.float32)))
    y = host(random.categorical(random.PRNGKey(17), batch, axis=1, shape=(500, 2)))
    assert y.shape == (500, 2) and (y[:, 0] == 0).mean() > 0.9 and (y[:, 1] == 2).mean() > 0.9
    z = random.categorical(random.PRNGKey(17), jnp.transpose(batch), axis=0)
    assert z.shape == (2,)


def test_permutation():
    k = random.PRNGKey(18)
    p = host(random.permutation(k, 50))
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    x = jnp.array(np.arange(12, dtype=np.float32) * 10)
    q = host(random.permutation(k, x))
    assert sorted(q.tolist()) == (np.arange(12) * 10).tolist()
    # uniformity over the 6 permutations of 3 items
    seen = {}
    for i in range(600):
        t = tuple(host(random.permutation(random.fold_in(k, i), 3)).tolist())
        seen[t] = seen.get(t, 0) + 1
    assert len(seen) == 6 and min(seen.values()) > 60


def test_permutation_of_rows():
    k = random.PRNGKey(19)
    m = np.arange(20, dtype=np.int32).reshape(5, 4)
    ind = random.permutation(k, 5)
    try:
        rows = host(random.permutation(k, jnp.array(m)))
    except NotImplementedError:
        pytest.skip("netcl.numpy.take is not available yet")
    np.testing.assert_array_equal(rows, m[host(ind)])
    ind = host(random.permutation(k, jnp.array(m), axis=1, independent=True))
    assert (np.sort(ind, axis=1) == m).all()


def test_choice():
    k = random.PRNGKey(20)
    c = host(random.choice(k, 5, (1000,)))
    assert c.dtype == INT() and set(c.tolist()) == set(range(5))
    d = host(random.choice(k, 10, (10,), replace=False))
    assert sorted(d.tolist()) == list(range(10))
    e = host(random.choice(k, 10, (4,), replace=False))
    assert len(set(e.tolist())) == 4
    assert random.choice(k, 3, (0,)).shape == (0,)


def test_choice_with_p():
    k = random.PRNGKey(21)
    p = jnp.array([0.0, 0.5, 0.5, 0.0])
    c = host(random.choice(k, 4, (2000,), p=p))
    assert set(c.tolist()) == {1, 2} and abs((c == 1).mean() - 0.5) < Z * math.sqrt(0.25 / 2000)
    q = np.array([0.1, 0.6, 0.3], np.float32)
    d = host(random.choice(k, 3, (20000,), p=jnp.array(q)))
    freq = np.bincount(d, minlength=3) / 20000
    assert (np.abs(freq - q) < Z * np.sqrt(q * (1 - q) / 20000)).all()
    # JAX's inverse-CDF construction, from netcl's own uniform draws
    u = host(random.uniform(k, (50,), jnp.float32))
    cum = np.cumsum(q, dtype=np.float32)
    want = np.searchsorted(cum, cum[-1] * (np.float32(1) - u), side="left")
    np.testing.assert_array_equal(host(random.choice(k, 3, (50,), p=jnp.array(q))), want)
    e = host(random.choice(k, 4, (2,), replace=False, p=jnp.array([0.0, 0.5, 0.5, 0.0])))
    assert sorted(e.tolist()) == [1, 2]


def test_choice_of_arrays():
    need("take")
    k = random.PRNGKey(21)
    a = jnp.array(np.arange(8, dtype=np.float32).reshape(4, 2))
    rows = host(random.choice(k, a, (3,)))
    assert rows.shape == (3, 2) and all(r.tolist() in host(a).tolist() for r in rows)
    cols = host(random.choice(k, a, (5,), axis=1))
    assert cols.shape == (4, 5)
    perm = host(random.choice(k, a, (4,), replace=False))
    assert sorted(perm[:, 0].tolist()) == [0, 2, 4, 6]


# ---- transforms ------------------------------------------------------------------------------

def test_vmap_over_keys():
    pytest.importorskip("netcl.transforms.batching")
    vmap = getattr(netcl, "vmap", None)
    if vmap is None:
        pytest.skip("netcl.vmap is not exported yet")
    keys = random.split(random.PRNGKey(22), 4)
    got = host(vmap(lambda k: random.uniform(k, (3,)))(keys))
    want = np.stack([host(random.uniform(keys[i], (3,))) for i in range(4)])
    np.testing.assert_array_equal(got, want)
    got = host(vmap(lambda k: random.split(k, 2))(keys))
    want = np.stack([host(random.split(keys[i], 2)) for i in range(4)])
    np.testing.assert_array_equal(got, want)
    got = host(vmap(lambda s: random.PRNGKey(s))(jnp.arange(3)))
    assert got.tolist() == [[0, 0], [0, 1], [0, 2]]


def test_jit_matches_eager():
    k = random.PRNGKey(23)
    for f in [lambda k: random.split(k, 3), lambda k: random.bits(k, (7,)),
              lambda k: random.uniform(k, (2, 5), minval=-1.0, maxval=3.0),
              lambda k: random.randint(k, (9,), -4, 40), lambda k: random.fold_in(k, 5),
              lambda k: random.bernoulli(k, 0.25, (12,))]:
        same_bits(netcl.jit(f)(k), f(k))
    # transcendental samplers: a fused kernel may round differently (on NVIDIA, a*b+c in
    # one kernel becomes an fma), and erf_inv/log carry that on
    for f in [lambda k: random.normal(k, (16,)), lambda k: random.exponential(k, (16,)),
              lambda k: random.truncated_normal(k, -0.5, 1.5, (16,))]:
        np.testing.assert_allclose(host(netcl.jit(f)(k)), host(f(k)), rtol=1e-5, atol=1e-6)
    seeded = netcl.jit(lambda s: random.uniform(random.PRNGKey(s), (3,)))
    same_bits(seeded(jnp.array(42)), random.uniform(random.PRNGKey(42), (3,)))


def test_grad_through_location_and_scale():
    k = random.PRNGKey(24)
    u = float(random.uniform(k, ()))
    g = netcl.grad(lambda lo: random.uniform(k, (), minval=lo, maxval=2.0))(0.5)
    assert abs(float(g) - (1 - u)) < 1e-6
    g = netcl.grad(lambda hi: random.uniform(k, (), minval=0.5, maxval=hi))(2.0)
    assert abs(float(g) - u) < 1e-6


# ---- bad input ------------------------------------------------------------------------------

def test_bad_keys():
    with pytest.raises(ValueError, match="split"):
        random.split(jnp.array(np.zeros(3, U32)))
    with pytest.raises(ValueError, match="uniform"):
        random.uniform(random.split(random.PRNGKey(0), 2), (2,))
    with pytest.raises(TypeError, match="normal"):
        random.normal(jnp.array([0, 1]), (2,))
    with pytest.raises(TypeError, match="bits"):
        random.bits("key", (2,))
    with pytest.raises(TypeError, match="fold_in"):
        random.fold_in(np.array([0, 1], np.int64), 3)
    with pytest.raises(ValueError, match="split"):
        random.split(random.PRNGKey(0), -1)


def test_bad_seeds_and_data():
    with pytest.raises(TypeError, match="PRNGKey"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="PRNGKey"):
        random.PRNGKey(np.array([1, 2]))
    with pytest.raises(TypeError, match="PRNGKey"):
        random.PRNGKey(jnp.ones(2, jnp.int32))
    with pytest.raises(TypeError, match="PRNGKey"):
        random.PRNGKey(jnp.array(1.0))
    with pytest.raises(ValueError, match="PRNGKey"):
        random.PRNGKey(2**64)
    with pytest.raises(ValueError, match="PRNGKey"):
        random.PRNGKey(0, impl="rbg")
    k = random.PRNGKey(0)
    with pytest.raises(TypeError, match="fold_in"):
        random.fold_in(k, 1.5)
    with pytest.raises(TypeError, match="fold_in"):
        random.fold_in(k, jnp.array([1, 2]))
    with pytest.raises(ValueError, match="fold_in"):
        random.fold_in(k, 2**32)


def test_bad_sampler_arguments():
    k = random.PRNGKey(0)
    with pytest.raises(ValueError, match="uniform"):
        random.uniform(k, (3,), jnp.int32)
    with pytest.raises(ValueError, match="uniform"):
        random.uniform(k, (3,), minval=jnp.zeros(4))
    with pytest.raises(ValueError, match="uniform"):
        random.uniform(k, (3,), minval=jnp.zeros((2, 3)))
    with pytest.raises(ValueError, match="normal"):
        random.normal(k, (2,), jnp.uint32)
    with pytest.raises(ValueError, match="randint"):
        random.randint(k, (3,), 5, 5)
    with pytest.raises(ValueError, match="randint"):
        random.randint(k, (3,), 7, 2)
    with pytest.raises(TypeError, match="randint"):
        random.randint(k, (3,), 0, 5, dtype=jnp.float32)
    with pytest.raises(ValueError, match="randint"):
        random.randint(k, (3,), jnp.zeros(4, jnp.int32), 5)
    with pytest.raises(TypeError, match="bernoulli"):
        random.bernoulli(k, jnp.array([1, 0]))
    with pytest.raises(ValueError, match="bernoulli"):
        random.bernoulli(k, jnp.array([0.5, 0.5]), (3,))
    with pytest.raises(ValueError, match="truncated_normal"):
        random.truncated_normal(k, jnp.zeros(3), 1.0, (2,))
    with pytest.raises(TypeError, match="categorical"):
        random.categorical(k, jnp.array([1, 2]))
    with pytest.raises(ValueError, match="categorical"):
        random.categorical(k, jnp.zeros((2, 3)), shape=(4,))
    with pytest.raises(ValueError, match="choice"):
        random.choice(k, 3, (5,), replace=False)
    with pytest.raises(TypeError, match="choice"):
        random.choice(k, 3, 5)
    with pytest.raises(TypeError, match="permutation"):
        random.permutation(k, 2.5)
    with pytest.raises(ValueError, match="gumbel: mode must be 'low' or 'high'"):
        random.gumbel(k, (2,), mode="middle")


# ---- samplers called eagerly run compiled (random/compiled.py) -----------------------------

_SAMPLERS = [
    ("uniform", ((37,),), {"minval": -2.0, "maxval": 3.0}),
    ("normal", ((5, 7),), {}),
    ("truncated_normal", (-1.5, 2.0, (33,)), {}),
    ("gumbel", ((9,),), {}),
    ("exponential", ((9,),), {}),
    ("laplace", ((9,),), {}),
    ("logistic", ((9,),), {}),
    ("cauchy", ((9,),), {}),
    ("bernoulli", (0.3, (40,)), {}),
    ("randint", ((25,), 3, 1000), {}),
    ("rademacher", ((25,),), {}),
    ("split", (3,), {}),
    ("bits", ((6,),), {}),
]


@pytest.mark.parametrize("name,args,kwargs", _SAMPLERS, ids=[s[0] for s in _SAMPLERS])
def test_eager_samplers_run_compiled_and_draw_what_their_primitives_draw(name, args, kwargs,
                                                                      monkeypatch):
    from netcl.core.eval import EvalInterpreter
    bound, process = [], EvalInterpreter.process
    monkeypatch.setattr(EvalInterpreter, "process",
                        lambda self, prim, *a: bound.append(prim) or process(self, prim, *a))
    sampler = getattr(random, name)
    key = random.PRNGKey(21)
    got = sampler(key, *args, **kwargs)
    assert not bound, f"the eager call bound {bound} one by one"
    want = sampler.eager(key, *args, **kwargs)        # primitive by primitive
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_float_parameter_is_an_argument_of_the_compiled_sampler(monkeypatch):
    import netcl.transforms.jit as jit_module
    compiled, optimize = [], jit_module.optimize
    monkeypatch.setattr(jit_module, "optimize",
                        lambda ir, *a, **k: compiled.append(1) or optimize(ir, *a, **k))
    key = random.PRNGKey(3)
    draws = [np.asarray(random.bernoulli(key, p, (1000,))).mean() for p in (0.11, 0.52, 0.93)]
    assert len(compiled) <= 1                         # one compilation for every p
    assert draws[0] < draws[1] < draws[2]
    np.testing.assert_array_equal(random.uniform(key, (4,), maxval=2.5),
                                  random.uniform.eager(key, (4,), maxval=2.5))


def test_samplers_with_unusual_arguments_still_check_them():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="normal: dtype must be a float dtype"):
        random.normal(key, (3,), jnp.int32)
    with pytest.raises(TypeError, match="uniform"):
        random.uniform("not a key", (3,))
    # a NumPy key and a list of bounds run primitive by primitive, with the same numbers
    np_key = np.asarray(key)
    np.testing.assert_array_equal(random.normal(np_key, (4,)), random.normal(key, (4,)))
    lows = random.uniform(key, (2,), minval=jnp.asarray([0.0, 10.0]), maxval=11.0)
    assert np.asarray(lows)[1] >= 10.0
