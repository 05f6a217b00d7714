"""int64 and uint64 primitives (x64 on, as the suite runs: see conftest.py) against Python
integer arithmetic: values across the whole 64-bit range (past 2**31 and 2**32, negative,
the extremes), division and remainder signs and by zero, shift counts of the width and
more, conversions to and from floats, reductions, sorting and indexing with 64-bit indices.
The oracles are written here from Python ints (not the primitives' own NumPy references,
which test_primitive_tables.py checks them against).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl import lax

SETTINGS = settings(max_examples=30, deadline=None)
I64 = (-2**63, 2**63 - 1)
U64 = (0, 2**64 - 1)
_EDGES = [0, 1, -1, 2, -2, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**32, 2**32 + 1, 2**53 + 1,
          2**62, 2**63 - 1, -2**63, -2**63 + 1]


@pytest.fixture(autouse=True)
def _x64_on():
    assert netcl.config.enable_x64          # (conftest.py; restored by nothing here)


def _ints(lo, hi):
    edge = st.sampled_from([v for v in _EDGES if lo <= v <= hi] + [hi, hi - 1])
    return st.one_of(edge, st.integers(lo, hi), st.integers(-2**40, 2**40).filter(
        lambda v: lo <= v <= hi))


def _pairs(lo, hi, n=8):
    return st.lists(st.tuples(_ints(lo, hi), _ints(lo, hi)), min_size=1, max_size=n)


def _wrap(v, signed):
    v %= 2**64
    return v - 2**64 if signed and v >= 2**63 else v


def _arr(values, dtype):
    return jnp.asarray(np.array(values, dtype=dtype))


def _same(got, want, dtype):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), got.dtype
    assert got.tolist() == list(want), (got.tolist(), list(want))


def _tdiv(a, b):
    """C's truncating division of Python ints."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@SETTINGS
@given(pairs=_pairs(*I64))
def test_int64_arithmetic_division_and_comparisons(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    x, y = _arr(a, np.int64), _arr(b, np.int64)
    w = lambda v: _wrap(v, True)    # noqa: E731
    _same(x + y, [w(p + q) for p, q in pairs], np.int64)
    _same(x - y, [w(p - q) for p, q in pairs], np.int64)
    _same(x * y, [w(p * q) for p, q in pairs], np.int64)
    _same(-x, [w(-p) for p in a], np.int64)
    # XLA's division: x / 0 == -1, x % 0 == x, INT_MIN / -1 == INT_MIN (no trap)
    _same(lax.div(x, y), [-1 if q == 0 else w(_tdiv(p, q)) for p, q in pairs], np.int64)
    _same(lax.rem(x, y), [p if q == 0 else p - _tdiv(p, q) * q for p, q in pairs], np.int64)
    nz = [(p, q) for p, q in pairs if q != 0 and not (p == -2**63 and q == -1)]
    if nz:
        xs, ys = _arr([p for p, _ in nz], np.int64), _arr([q for _, q in nz], np.int64)
        _same(xs // ys, [p // q for p, q in nz], np.int64)        # floor, as Python's
        _same(xs % ys, [p % q for p, q in nz], np.int64)          # sign of the divisor
    _same(x < y, [p < q for p, q in pairs], np.bool_)
    _same(x == y, [p == q for p, q in pairs], np.bool_)
    _same(jnp.maximum(x, y), [max(p, q) for p, q in pairs], np.int64)
    _same(jnp.minimum(x, y), [min(p, q) for p, q in pairs], np.int64)
    _same(jnp.abs(x), [w(abs(p)) for p in a], np.int64)
    _same(jnp.sign(x), [(p > 0) - (p < 0) for p in a], np.int64)
    _same(jnp.bitwise_xor(x, y), [p ^ q for p, q in pairs], np.int64)
    _same(jnp.bitwise_and(x, y), [p & q for p, q in pairs], np.int64)
    _same(jnp.invert(x), [~p for p in a], np.int64)
    _same(jnp.where(x > y, x, y), [max(p, q) for p, q in pairs], np.int64)
    _same(jnp.clip(x, -2**40, 2**40), [min(max(p, -2**40), 2**40) for p in a], np.int64)


@SETTINGS
@given(pairs=_pairs(*U64))
def test_uint64_arithmetic_division_and_comparisons(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    x, y = _arr(a, np.uint64), _arr(b, np.uint64)
    w = lambda v: _wrap(v, False)    # noqa: E731
    _same(x + y, [w(p + q) for p, q in pairs], np.uint64)
    _same(x - y, [w(p - q) for p, q in pairs], np.uint64)
    _same(x * y, [w(p * q) for p, q in pairs], np.uint64)
    _same(lax.div(x, y), [2**64 - 1 if q == 0 else p // q for p, q in pairs], np.uint64)
    _same(lax.rem(x, y), [p if q == 0 else p % q for p, q in pairs], np.uint64)
    _same(x <= y, [p <= q for p, q in pairs], np.bool_)
    _same(jnp.maximum(x, y), [max(p, q) for p, q in pairs], np.uint64)
    _same(jnp.sign(x), [int(p > 0) for p in a], np.uint64)
    _same(x + 1, [w(p + 1) for p in a], np.uint64)
    _same(x - 1, [w(p - 1) for p in a], np.uint64)       # a weak -1 taken modulo 2**64


@SETTINGS
@given(values=st.lists(_ints(*I64), min_size=1, max_size=8),
       counts=st.lists(st.integers(-3, 70), min_size=8, max_size=8))
def test_shifts_of_every_count(values, counts):
    n = len(values)
    counts = counts[:n]
    x, s = _arr(values, np.int64), _arr(counts, np.int64)
    u = [v % 2**64 for v in values]
    big = [c < 0 or c >= 64 for c in counts]    # (a negative count reads as a huge unsigned)
    _same(lax.shift_left(x, s), [0 if g else _wrap(v << c, True)
                                 for v, c, g in zip(values, counts, big)], np.int64)
    _same(lax.shift_right_logical(x, s), [0 if g else _wrap(v >> c, True)
                                          for v, c, g in zip(u, counts, big)], np.int64)
    _same(lax.shift_right_arithmetic(x, s), [v >> (63 if g else c)
                                             for v, c, g in zip(values, counts, big)],
          np.int64)
    xu, su = _arr(u, np.uint64), _arr([c % 2**64 for c in counts], np.uint64)
    _same(lax.shift_right_logical(xu, su), [0 if g else v >> c
                                            for v, c, g in zip(u, counts, big)], np.uint64)


def _saturate(f, lo, hi):
    if math.isnan(f):
        return 0
    if math.isinf(f):
        return hi if f > 0 else lo
    return min(max(math.trunc(f), lo), hi)


@SETTINGS
@given(values=st.lists(_ints(*I64), min_size=1, max_size=8),
       floats=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                 st.floats(-2**65, 2**65)), min_size=1, max_size=8))
def test_conversions_to_and_from_64_bit_ints(values, floats):
    x = _arr(values, np.int64)
    _same(x.astype(jnp.float64), [float(v) for v in values], np.float64)
    _same(x.astype(jnp.float32), np.array(values, np.int64).astype(np.float32).tolist(),
          np.float32)
    _same(x.astype(jnp.int32), [_wrap(v, True) % 2**32 - (2**32 if _wrap(v, True) % 2**32
                                                          >= 2**31 else 0) for v in values],
          np.int32)
    _same(x.astype(jnp.uint64), [v % 2**64 for v in values], np.uint64)
    _same(x.astype(jnp.bool_), [v != 0 for v in values], np.bool_)
    _same(_arr([v % 2**32 for v in values], np.uint32).astype(jnp.int64),
          [v % 2**32 for v in values], np.int64)
    f = _arr(floats, np.float64)       # float -> int: truncated, saturated, NaN -> 0
    _same(f.astype(jnp.int64), [_saturate(v, *I64) for v in floats], np.int64)
    _same(f.astype(jnp.uint64), [_saturate(v, *U64) for v in floats], np.uint64)
    _same(lax.bitcast_convert_type(x, jnp.uint64), [v % 2**64 for v in values], np.uint64)


@SETTINGS
@given(values=st.lists(_ints(*I64), min_size=1, max_size=40))
def test_reductions_sorting_and_scans(values):
    x = _arr(values, np.int64)
    _same(jnp.sum(x)[None], [_wrap(sum(values), True)], np.int64)
    _same(jnp.prod(x)[None], [_wrap(math.prod(values), True)], np.int64)
    _same(jnp.max(x)[None], [max(values)], np.int64)
    _same(jnp.min(x)[None], [min(values)], np.int64)
    _same(jnp.argmax(x)[None], [values.index(max(values))], np.int64)
    _same(jnp.argmin(x)[None], [values.index(min(values))], np.int64)
    _same(jnp.cumsum(x), [_wrap(sum(values[:i + 1]), True) for i in range(len(values))],
          np.int64)
    _same(jnp.sort(x), sorted(values), np.int64)
    _same(jnp.argsort(x), sorted(range(len(values)), key=lambda i: values[i]), np.int64)
    u = [v % 2**64 for v in values]
    xu = _arr(u, np.uint64)
    _same(jnp.sort(xu), sorted(u), np.uint64)
    _same(jnp.max(xu)[None], [max(u)], np.uint64)
    _same(jnp.sum(xu)[None], [sum(u) % 2**64], np.uint64)
    # sums of narrower ints widen to int64, as JAX's (no int32 wrap-around)
    small = [v % 2**31 for v in values]
    _same(jnp.sum(_arr(small, np.int32))[None], [sum(small)], np.int64)


@SETTINGS
@given(values=st.lists(_ints(*I64), min_size=2, max_size=10),
       idx=st.lists(_ints(*I64), min_size=1, max_size=6), start=_ints(*I64))
def test_indexing_and_structure_with_64_bit_indices(values, idx, start):
    n = len(values)
    x = _arr(values, np.int64)
    inside = [i for i in idx if -n <= i < n]
    if inside:
        _same(x[_arr(inside, np.int64)], [values[i] for i in inside], np.int64)
        _same(x[_arr([i % n for i in inside], np.uint64)], [values[i % n] for i in inside],
              np.int64)
    # out-of-range int64 indices stay out of range (filled), never wrapping into it
    _same(jnp.take(x, _arr(idx, np.int64), mode="fill"),
          [values[i] if -n <= i < n else -2**63 for i in idx], np.int64)
    size = max(1, n // 2)
    s = min(max(start, 0), n - size)
    _same(lax.dynamic_slice(x, (_arr(start, np.int64),), (size,)), values[s:s + size],
          np.int64)
    upd = _arr(values[:size], np.int64)
    want = values[:s] + values[:size] + values[s + size:]
    _same(lax.dynamic_update_slice(x, upd, (_arr(start, np.int64),)), want, np.int64)
    _same(jnp.concatenate([x, x[::-1]]), values + values[::-1], np.int64)
    _same(jnp.pad(x, (1, 2)), [0] + values + [0, 0], np.int64)
    _same(jnp.transpose(jnp.reshape(jnp.concatenate([x, x]), (2, n))).reshape(-1),
          [v for v in values for _ in (0, 1)], np.int64)
    _same(jnp.broadcast_to(x, (2, n)).reshape(-1), values + values, np.int64)
    _same(lax.iota(jnp.int64, n), list(range(n)), np.int64)
    _same(x.at[_arr([0], np.int64)].add(_arr([2**40], np.int64)),
          [_wrap(values[0] + 2**40, True)] + values[1:], np.int64)


def test_jit_fuses_64_bit_integer_work():
    values = [2**40 + 3, -2**35, 7, -2**63, 2**63 - 1]

    @netcl.jit
    def f(x, y):
        return (x * 3 + y) // 5, jnp.sum(x ^ y), jnp.argmax(x)

    x, y = _arr(values, np.int64), _arr(values[::-1], np.int64)
    q, s, i = f(x, y)
    _same(q, [_wrap(_wrap(a * 3, True) + b, True) // 5 for a, b in zip(values, values[::-1])],
          np.int64)
    _same(s[None], [_wrap(sum(a ^ b for a, b in zip(values, values[::-1])), True)], np.int64)
    _same(i[None], [4], np.int64)


def test_python_ints_and_numpy_data_keep_64_bits():
    assert jnp.asarray(2**40).dtype == np.int64 and int(jnp.asarray(2**40)) == 2**40
    assert jnp.asarray(np.uint64(2**63)).dtype == np.uint64
    assert np.asarray(jnp.arange(2**33, 2**33 + 3)).tolist() == [2**33, 2**33 + 1, 2**33 + 2]
    with pytest.raises(OverflowError, match="int64"):
        jnp.asarray(2**63)
    with pytest.raises(OverflowError):
        _arr([1], np.int32) + 2**40     # a weak int64 that does not fit int32: no wrap


@pytest.mark.parametrize("dtype,bounds", [(np.int64, I64), (np.uint64, U64)])
@given(data=st.data())
@SETTINGS
def test_mulhi_is_the_high_64_bits_of_the_128_bit_product(dtype, bounds, data):
    pairs = data.draw(_pairs(*bounds))
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    want = [_wrap((x * y) >> 64, dtype == np.int64) for x, y in pairs]
    _same(lax.mulhi(_arr(a, dtype), _arr(b, dtype)), want, dtype)


def test_mulhi_of_mixed_widths_raises_a_clear_type_error():
    with pytest.raises(TypeError, match=r"mulhi: .*int64.*int32"):
        lax.mulhi(_arr([1, 2], np.int64), _arr([1, 2], np.int32))
