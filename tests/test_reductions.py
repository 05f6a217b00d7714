"""Reductions and scans (netcl.primitives.reductions, netcl.numpy.reductions) against NumPy,
their layouts and kernel paths, errors, derivative rules and batching."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.primitives import reductions as R
from util import layouts, rand, shapes, to_device

SETTINGS = settings(max_examples=25, deadline=None)
ON_NUMPY = netcl.default_device().is_numpy
EPS = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1.2e-7, np.dtype(np.float64): 2.3e-16}


# ---- helpers -------------------------------------------------------------------------------

def axis_strategy(ndim):
    """None, an int (maybe negative) or a tuple of distinct axes (maybe negative)."""
    if ndim == 0:
        return st.sampled_from([None, ()])
    one = st.integers(-ndim, ndim - 1)
    many = st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).flatmap(
        lambda ax: st.tuples(*[st.sampled_from([a, a - ndim]) for a in ax]))
    return st.one_of(st.none(), one, many)


def _axes_tuple(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, int) else axis
    return tuple(sorted(a % ndim for a in axis))


def check_sum_like(got, want, x, axis, factor=4.0):
    """Floating sums: error bounded by eps * sum(|x|) along the reduced axes."""
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    with np.errstate(all="ignore"):
        mag = np.sum(np.abs(x.astype(np.float64)), axis=axis, keepdims=got.ndim == x.ndim
                     and x.ndim > 0 and axis is not None)
    tol = factor * EPS[got.dtype] * (np.broadcast_to(mag, got.shape) + 1)
    g, w = got.astype(np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    same_inf = np.isinf(w) & (g == w)
    with np.errstate(invalid="ignore"):
        ok = both_nan | same_inf | (np.abs(g - w) <= tol)
    assert ok.all(), f"got {g[~ok]} want {w[~ok]} tol {np.broadcast_to(tol, g.shape)[~ok]}"


@pytest.fixture
def gpu_kernels():
    """Run the GPU kernel family (work-groups, local-memory trees) on this device."""
    if ON_NUMPY:
        pytest.skip("no OpenCL device")
    with netcl.test_util.override_target(netcl.default_device(), reduction_style="gpu"):
        yield


# ---- sum / prod / max / min through netcl.numpy -----------------------------------------------

# (function name, dtype, value range); few (op, dtype) pairs: each is one kernel build
REDUCE_CASES = [
    ("sum", "float32", (-3, 3)), ("sum", "int32", (-50, 50)), ("sum", "float16", (-3, 3)),
    ("sum", "float64", (-3, 3)), ("sum", "bool", (0, 1)), ("prod", "float32", (0.5, 1.5)),
    ("prod", "int32", (-3, 3)), ("max", "float32", (-3, 3)), ("max", "int32", (-50, 50)),
    ("max", "float16", (-3, 3)), ("min", "float32", (-3, 3)), ("min", "float64", (-3, 3)),
    ("min", "int32", (-50, 50)), ("any", "float32", (-1, 1)), ("all", "int32", (0, 2)),
    ("count_nonzero", "int32", (-1, 1)),
]


# sums and products of bools and int32 are of the default int (int64 with x64), as JAX's
SUM_DTYPE = netcl.core.dtypes.sum_dtype
INT = netcl.core.dtypes.default_int_dtype


def _np_reduce(name, x, axis, keepdims):
    with np.errstate(all="ignore"):
        if name == "sum":
            dt = SUM_DTYPE(x.dtype)
            return np.sum(x.astype(np.float32) if x.dtype == np.float16 else x, axis=axis,
                          dtype=np.float32 if x.dtype == np.float16 else dt,
                          keepdims=keepdims).astype(dt)
        if name == "prod":
            return np.prod(x, axis=axis, dtype=SUM_DTYPE(x.dtype), keepdims=keepdims)
        if name == "count_nonzero":
            return np.count_nonzero(x, axis=axis, keepdims=keepdims).astype(INT())
        return getattr(np, name)(x, axis=axis, keepdims=keepdims)


@SETTINGS
@given(case=st.sampled_from(REDUCE_CASES), data=st.data(), seed=st.integers(0, 2**16),
       layout=layouts(), special=st.booleans(), keepdims=st.booleans())
def test_reduce_matches_numpy(case, data, seed, layout, special, keepdims):
    name, dts, (lo, hi) = case
    dt = np.dtype(dts)
    shape = data.draw(shapes(max_dims=4, max_side=5))
    axis = data.draw(axis_strategy(len(shape)))
    rng = np.random.default_rng(seed)
    x = rand(rng, shape, dt, lo, hi, special=special and dt.kind == "f")
    axes = _axes_tuple(axis, x.ndim)
    if name in ("max", "min") and any(x.shape[a] == 0 for a in axes):
        with pytest.raises(ValueError, match=name):
            getattr(jnp, name)(to_device(x, layout), axis=axis)
        return
    got = getattr(jnp, name)(to_device(x, layout), axis=axis, keepdims=keepdims)
    want = _np_reduce(name, x, axis, keepdims)
    want_dt = {"any": np.bool_, "all": np.bool_, "count_nonzero": INT(),
               "sum": SUM_DTYPE(dt), "prod": SUM_DTYPE(dt)}.get(name, dt)
    assert np.asarray(got).dtype == want_dt
    if name == "prod" and dt.kind == "f":
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5 * (x.size + 1), atol=1e-6)
    else:
        check_sum_like(got, want, x, axis)


# The primitives themselves (reduce_*, argmax/argmin, the scans and ffill) against their
# references over drawn shapes, axes, layouts and dtypes: tests/test_primitive_tables.py.


def test_empty_reductions_give_identities():
    for dt, lo, hi in (("float32", -np.inf, np.inf), ("int32", -2**31, 2**31 - 1)):
        x = jnp.zeros((3, 0, 2), dt)
        np.testing.assert_array_equal(np.asarray(R.reduce_max(x, (1,))), np.full((3, 2), lo))
        np.testing.assert_array_equal(np.asarray(R.reduce_min(x, (1,))), np.full((3, 2), hi))
        np.testing.assert_array_equal(np.asarray(R.reduce_sum(x, (0, 1))), np.zeros(2))
        np.testing.assert_array_equal(np.asarray(R.reduce_prod(x, (1, 2))), np.ones(3))
    b = jnp.zeros((0, 4), "bool")
    assert np.asarray(jnp.all(b, axis=0)).all() and not np.asarray(jnp.any(b, axis=0)).any()
    assert R.reduce_sum(jnp.zeros((0, 3)), (1,)).shape == (0,)
    assert np.asarray(jnp.max(jnp.zeros((0, 3)), axis=0, initial=-5.0)).tolist() == [-5.0] * 3
    with pytest.raises(ValueError, match="max"):
        jnp.max(jnp.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match="argmax"):
        jnp.argmax(jnp.zeros((2, 0)), axis=1)


def test_sum_accuracy_and_integer_wrap():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 2**22).astype(np.float32)
    want = x.astype(np.float64).sum()
    got = float(jnp.sum(jnp.asarray(x)))
    assert abs(got - want) / want < 1e-6  # a sequential float32 sum is off by ~1e-4
    big = np.full(4, 2**30, np.int32)      # (dtype=int32: with x64 sums are int64)
    assert int(jnp.sum(jnp.asarray(big), dtype=jnp.int32)) == 0  # wraps like XLA
    assert int(jnp.prod(jnp.asarray(np.array([65536, 65536, 3], np.int32)),
                        dtype=jnp.int32)) == 0
    u = np.array([2**32 - 1, 2], np.uint32)
    assert np.asarray(jnp.sum(jnp.asarray(u), promote_integers=False)).dtype == np.uint32
    assert int(jnp.sum(jnp.asarray(u), promote_integers=False)) == 1
    wide = netcl.core.dtypes.default_uint_dtype()
    assert np.asarray(jnp.sum(jnp.asarray(u))).dtype == wide
    assert int(jnp.sum(jnp.asarray(u))) == (2**32 + 1) % 2**(8 * wide.itemsize)
    big64 = np.full(4, 2**62, np.int64)
    if netcl.config.enable_x64:
        assert int(jnp.sum(jnp.asarray(big64))) == 0        # int64 wraps too


def test_nan_and_inf_propagation():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0], [np.inf, 1.0, 2.0]], np.float32)
    d = jnp.asarray(x)
    with np.errstate(invalid="ignore"):
        for f in ("sum", "max", "min", "prod"):
            np.testing.assert_array_equal(np.asarray(getattr(jnp, f)(d, axis=1)),
                                          getattr(np, f)(x, axis=1))
        np.testing.assert_array_equal(np.asarray(jnp.cumsum(d, axis=1)), np.cumsum(x, axis=1))
    np.testing.assert_array_equal(np.asarray(jnp.argmax(d, axis=1)), np.argmax(x, axis=1))
    np.testing.assert_array_equal(np.asarray(jnp.argmin(d, axis=0)), np.argmin(x, axis=0))


# ---- argmax / argmin --------------------------------------------------------------------------

@SETTINGS
@given(name=st.sampled_from(["argmax", "argmin"]), dts=st.sampled_from(["float32", "int32"]),
       data=st.data(), seed=st.integers(0, 2**16), layout=layouts(), special=st.booleans(),
       keepdims=st.booleans())
def test_arg_matches_numpy(name, dts, data, seed, layout, special, keepdims):
    dt = np.dtype(dts)
    shape = data.draw(shapes(min_dims=0, max_dims=4, min_side=1, max_side=5))
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1))
                     if shape else st.none())
    rng = np.random.default_rng(seed)
    x = rand(rng, shape, dt, -2, 2, special=special and dt.kind == "f")  # small range: ties
    got = getattr(jnp, name)(to_device(x, layout), axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert np.asarray(got).dtype == INT()
    np.testing.assert_array_equal(np.asarray(got), want)


def test_arg_first_nan_and_ties():
    x = np.array([1.0, 5.0, np.nan, 5.0, np.nan], np.float32)
    for layout in ("dense", "reversed"):
        assert int(jnp.argmax(to_device(x, layout))) == 2
        assert int(jnp.argmin(to_device(x, layout))) == 2
        y = np.array([3, 7, 7, 1, 1, 7], np.int32)
        assert int(jnp.argmax(to_device(y, layout))) == 1
        assert int(jnp.argmin(to_device(y, layout))) == 3
    assert R.argmax(jnp.asarray(y), 0, np.uint32).dtype == np.uint32


@pytest.mark.parametrize("dtype, lowest, highest", [("bool", False, True),
                                                    ("float32", -np.inf, np.inf),
                                                    ("int32", -2**31, 2**31 - 1)])
def test_arg_of_identity_runs_is_the_first_index(dtype, lowest, highest):
    """argmax over values all equal to max's identity (an all-False mask), argmin over min's:
    index 0, along rows and columns of 8-vectors (the CPU kernels' vector paths gave INT_MAX)."""
    x = np.full((3, 40), lowest, dtype)
    y = np.full((3, 40), highest, dtype)
    for axis in (0, 1):
        np.testing.assert_array_equal(np.asarray(jnp.argmax(jnp.asarray(x), axis=axis)), 0)
        np.testing.assert_array_equal(np.asarray(jnp.argmin(jnp.asarray(y), axis=axis)), 0)
    np.testing.assert_array_equal(np.asarray(jnp.argmax(jnp.asarray(x[:, ::-1]), axis=1)), 0)


# ---- cumulative -------------------------------------------------------------------------------

SCAN_CASES = [("cumsum", "float32"), ("cumsum", "int32"), ("cumsum", "float16"),
              ("cumprod", "float32"), ("cummax", "float32"), ("cummin", "int32"),
              ("cummax", "bool")]


def _np_scan(name, x, axis, reverse):
    w = x.astype(np.float32) if x.dtype == np.float16 else x
    if reverse:
        w = np.flip(w, axis)
    with np.errstate(all="ignore"):
        r = {"cumsum": lambda: np.cumsum(w, axis, dtype=w.dtype),
             "cumprod": lambda: np.cumprod(w, axis, dtype=w.dtype),
             "cummax": lambda: np.maximum.accumulate(w, axis),
             "cummin": lambda: np.minimum.accumulate(w, axis)}[name]()
    return (np.flip(r, axis) if reverse else r).astype(x.dtype)


@SETTINGS
@given(case=st.sampled_from(SCAN_CASES), data=st.data(), seed=st.integers(0, 2**16),
       layout=layouts(), reverse=st.booleans(), special=st.booleans())
def test_scans_match_numpy(case, data, seed, layout, reverse, special):
    name, dts = case
    dt = np.dtype(dts)
    shape = data.draw(shapes(min_dims=1, max_dims=4, max_side=6))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(seed)
    lo, hi = (0.5, 1.5) if name == "cumprod" else (-3, 3)
    x = rand(rng, shape, dt, lo, hi, special=special and dt.kind == "f")
    got = getattr(R, name)(to_device(x, layout), axis, reverse)
    want = _np_scan(name, x, axis % x.ndim, reverse)
    assert np.asarray(got).dtype == dt
    if dt.kind == "f":
        np.testing.assert_allclose(np.asarray(got, np.float64), want.astype(np.float64),
                                   rtol=4e-3 if dt == np.float16 else 1e-5, atol=1e-2 if
                                   dt == np.float16 else 1e-5, equal_nan=True)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


def test_numpy_cumulative_dtypes():
    b = np.array([[True, False, True], [True, True, False]])
    got = jnp.cumsum(jnp.asarray(b))
    assert np.asarray(got).dtype == INT()      # (int64 with x64, as JAX's)
    np.testing.assert_array_equal(np.asarray(got), np.cumsum(b))
    x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).cumprod(axis=1)), x.cumprod(1))
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(jnp.asarray(x), dtype=np.float32)),
                                  np.cumsum(x).astype(np.float32))


# ---- kernel paths: long rows (two-pass / reduce-then-scan), column blocks, copies -------------

PATH_SHAPES = [
    ((3, 20000), 1),     # few long rows: split into chunks, partials folded in a second pass
    ((20000, 3), 0),     # long columns, few of them
    ((5, 37, 41), 1),    # middle axis, B > 1 with a partial column block
    ((4, 2, 5000), 2),
]


@pytest.mark.parametrize("shape,axis", PATH_SHAPES)
def test_long_reduction_paths(shape, axis):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    d = jnp.asarray(x)
    check_sum_like(jnp.sum(d, axis=axis), x.sum(axis), x, axis)
    np.testing.assert_array_equal(np.asarray(jnp.max(d, axis=axis)), x.max(axis))
    np.testing.assert_array_equal(np.asarray(jnp.argmin(d, axis=axis)), x.argmin(axis))
    for reverse in (False, True):
        want = _np_scan("cumsum", x.astype(np.float64), axis, reverse)
        np.testing.assert_allclose(np.asarray(R.cumsum(d, axis, reverse)), want,
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(np.asarray(R.cummax(d, axis, reverse)),
                                      _np_scan("cummax", x, axis, reverse))
    xi = rng.integers(-9, 9, shape).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(R.cumsum(jnp.asarray(xi), axis, True)),
                                  _np_scan("cumsum", xi, axis, True))
    xr = rng.integers(-3, 3, shape).astype(np.float32)  # ties, read backwards in memory
    np.testing.assert_array_equal(np.asarray(jnp.argmax(to_device(xr, "reversed"), axis=axis)),
                                  xr.argmax(axis))


def test_layouts_that_need_a_copy_or_give_views():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    d = jnp.asarray(x)
    # reduced axes that are not one block in memory: a copy first
    check_sum_like(jnp.sum(d, axis=(0, 2)), x.sum((0, 2)), x, (0, 2))
    # broadcast (stride 0) and stepped views
    b = jnp.broadcast_to(jnp.asarray(x[0]), (3, 5, 6))
    xb = np.broadcast_to(x[0], (3, 5, 6))
    check_sum_like(jnp.sum(b, axis=1), xb.sum(1), xb, 1)
    s = d[:, ::2, 1::2]
    np.testing.assert_array_equal(np.asarray(jnp.max(s, axis=0)), x[:, ::2, 1::2].max(0))
    o = d[1:, 2:]  # dense rows at an offset
    np.testing.assert_array_equal(np.asarray(jnp.argmax(o, axis=2)), x[1:, 2:].argmax(2))
    check_sum_like(jnp.sum(d[2], axis=0), x[2].sum(0), x[2], 0)
    np.testing.assert_allclose(np.asarray(R.cumsum(d[1:], 1, True)),
                               _np_scan("cumsum", x[1:], 1, True), rtol=1e-5, atol=1e-5)
    # a permuted input gives a permuted-view output, which later ops read correctly
    t = jnp.transpose(d, (2, 0, 1))
    r = jnp.sum(t, axis=1)
    xt = x.transpose(2, 0, 1)
    check_sum_like(r, xt.sum(1), xt, 1)
    check_sum_like(r + 1.0, xt.sum(1) + 1, xt, 1)
    c = R.cumsum(t, 2, False)
    np.testing.assert_allclose(np.asarray(c), np.cumsum(x.transpose(2, 0, 1), 2), rtol=1e-5,
                               atol=1e-5)


def test_gpu_kernel_family(gpu_kernels):
    """The work-group kernels (local-memory trees, tiled scans) the GPUs run, here on PoCL."""
    rng = np.random.default_rng(3)
    # long columns: partials transposed (cols_partT), folded by the rows kernel
    for shape, axis in PATH_SHAPES + [((7, 9), 1), ((6, 300), 0), ((5000, 3), 0),
                                      ((2, 3000, 5), 1)]:
        x = rng.standard_normal(shape).astype(np.float32)
        d = jnp.asarray(x)
        check_sum_like(jnp.sum(d, axis=axis), x.sum(axis), x, axis)
        np.testing.assert_array_equal(np.asarray(jnp.min(d, axis=axis)), x.min(axis))
        np.testing.assert_array_equal(np.asarray(jnp.argmax(d, axis=axis)), x.argmax(axis))
        np.testing.assert_array_equal(np.asarray(jnp.argmax(to_device(x, "reversed"),
                                                            axis=axis)), x.argmax(axis))
        for reverse in (False, True):
            want = _np_scan("cumsum", x.astype(np.float64), axis, reverse)
            np.testing.assert_allclose(np.asarray(R.cumsum(d, axis, reverse)), want,
                                       rtol=1e-4, atol=1e-3)
    h = rng.standard_normal((5, 3000)).astype(np.float16)
    check_sum_like(jnp.sum(jnp.asarray(h), axis=1),
                   h.astype(np.float32).sum(1).astype(np.float16), h, 1)
    xi = rng.integers(-9, 9, (300, 7)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.sum(jnp.asarray(xi), axis=0)), xi.sum(0))
    x = rng.uniform(0, 1, 2**18).astype(np.float32)
    assert abs(float(jnp.sum(jnp.asarray(x))) - x.astype(np.float64).sum()) < 1e-6 * x.sum()


# ---- statistics and NaN-ignoring functions -------------------------------------------------------

@settings(max_examples=15, deadline=None)  # each function brings its own elementwise kernels
@given(name=st.sampled_from(["mean", "var", "std", "ptp", "nansum", "nanmax", "nanmin",
                             "nanmean"]),
       dts=st.sampled_from(["float32", "int32"]), data=st.data(), seed=st.integers(0, 2**16),
       keepdims=st.booleans(), layout=layouts())
def test_statistics_match_numpy(name, dts, data, seed, keepdims, layout):
    dt = np.dtype(dts)
    shape = data.draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    axis = data.draw(axis_strategy(len(shape)))
    rng = np.random.default_rng(seed)
    x = rand(rng, shape, dt, -4, 4)
    if name.startswith("nan") and dt.kind == "f":
        x[rng.random(shape) < 0.3] = np.nan
    got = getattr(jnp, name)(to_device(x, layout), axis=axis, keepdims=keepdims)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = getattr(np, name)(x.astype(np.float64) if name in ("mean", "var", "std")
                                 else x, axis=axis, keepdims=keepdims)
    want_dt = SUM_DTYPE(dt) if name == "nansum" else \
        dt if name in ("ptp", "nanmax", "nanmin") else np.dtype(np.float32)
    assert np.asarray(got).dtype == want_dt, name
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=1e-5, atol=1e-5, equal_nan=True)


def test_statistics_options():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    d = jnp.asarray(x)
    m = x > 0
    np.testing.assert_allclose(np.asarray(jnp.var(d, axis=1, ddof=1)), x.var(1, ddof=1),
                               rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.std(d, correction=1)), x.std(ddof=1), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.sum(d, axis=0, where=jnp.asarray(m))),
                               np.sum(x, 0, where=m), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.mean(d, axis=1, where=jnp.asarray(m))),
                               np.mean(x, 1, where=m), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jnp.max(d, axis=1, where=jnp.asarray(m),
                                                  initial=-9.0)),
                               np.max(x, 1, where=m, initial=-9.0))
    np.testing.assert_allclose(np.asarray(jnp.sum(d, initial=2.0)), x.sum() + 2, rtol=1e-5)
    w = rng.uniform(0.1, 1, 6).astype(np.float32)
    avg, wsum = jnp.average(d, axis=1, weights=jnp.asarray(w), returned=True)
    np.testing.assert_allclose(np.asarray(avg), np.average(x, 1, weights=w), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(wsum), np.full(4, w.sum()), rtol=1e-5)
    w2 = rng.uniform(0.1, 1, (4, 6)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.average(d, weights=jnp.asarray(w2))),
                               np.average(x, weights=w2), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(jnp.count_nonzero(jnp.asarray(m), axis=1)),
                                  np.count_nonzero(m, axis=1))
    h = x.astype(np.float16)
    assert np.asarray(jnp.mean(jnp.asarray(h))).dtype == np.float16
    np.testing.assert_allclose(float(jnp.mean(jnp.asarray(h))),
                               h.astype(np.float64).mean(), atol=2e-3)
    xn = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.nanargmax(jnp.asarray(xn), axis=1)), [-1, 0])
    assert np.isnan(np.asarray(jnp.nanmax(jnp.asarray(xn), axis=1))[0])
    assert float(jnp.asarray(x).sum()) == pytest.approx(float(x.sum()), rel=1e-5)
    assert int(jnp.asarray(x).argmax()) == int(x.argmax())


# ---- errors -----------------------------------------------------------------------------------

def test_bad_arguments_raise_naming_the_function():
    x = jnp.zeros((2, 3))
    with pytest.raises(ValueError, match="sum"):
        jnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="mean"):
        jnp.mean(x, axis=(0, 0))
    with pytest.raises(TypeError, match="max"):
        jnp.max(x, axis=1.5)
    with pytest.raises(ValueError, match="reduce_sum"):
        R.reduce_sum_p.bind(x, axes=(1, 0))          # unsorted, at the primitive level
    with pytest.raises(ValueError, match="reduce_max"):
        R.reduce_max(x, (5,))
    with pytest.raises(TypeError, match="reduce_sum"):
        R.reduce_sum(jnp.zeros((2,), "bool"), (0,))  # lax: bool sums are not defined
    with pytest.raises(TypeError, match="cumprod"):
        R.cumprod(jnp.zeros((2,), "bool"), 0)
    with pytest.raises(ValueError, match="cumsum"):
        R.cumsum(x, 2)
    with pytest.raises(ValueError, match="argmin"):
        jnp.argmin(x, axis=-3)
    with pytest.raises(TypeError, match="argmax"):
        R.argmax(x, 0, np.float32)
    with pytest.raises(ValueError, match="average"):
        jnp.average(x, weights=jnp.ones(3))
    with pytest.raises(ValueError, match="max"):
        jnp.max(x, where=jnp.ones((2, 3), "bool"))
    with pytest.raises(ValueError, match="out"):
        jnp.sum(x, out=x)
    with pytest.raises(TypeError, match="ptp"):
        jnp.ptp(jnp.zeros(3, "bool"))


# ---- derivatives and batching (float64) ----------------------------------------------------------

needs_fp64 = pytest.mark.skipif(not netcl.default_device().capabilities.fp64,
                                reason="device has no float64")


def _grad_cases():
    r = R
    return {
        "reduce_sum": (lambda a: r.reduce_sum(a, (1,)), "normal"),
        "reduce_sum_all": (lambda a: r.reduce_sum(a, (0, 1)), "normal"),
        "reduce_max": (lambda a: r.reduce_max(a, (0,)), "normal"),
        "reduce_min": (lambda a: r.reduce_min(a, (1,)), "normal"),
        "reduce_prod": (lambda a: r.reduce_prod(a, (1,)), "positive"),
        "cumsum": (lambda a: r.cumsum(a, 1), "normal"),
        "cumsum_rev": (lambda a: r.cumsum(a, 0, True), "normal"),
        "cumprod": (lambda a: r.cumprod(a, 1), "positive"),
        "cumprod_rev": (lambda a: r.cumprod(a, 0, True), "positive"),
        "cummax": (lambda a: r.cummax(a, 1), "normal"),
        "cummin_rev": (lambda a: r.cummin(a, 0, True), "normal"),
        "jnp.var": (lambda a: jnp.var(a, axis=0), "normal"),
        "jnp.std": (lambda a: jnp.std(a), "normal"),
        "jnp.average": (lambda a: jnp.average(a, axis=1, weights=jnp.asarray(
            np.arange(1.0, 5.0))), "normal"),
    }


@needs_fp64
@pytest.mark.parametrize("name", list(_grad_cases()))
def test_gradients(name):
    from netcl.test_util import check_grads
    f, kind = _grad_cases()[name]
    rng = np.random.default_rng(5)
    x = rng.uniform(0.5, 1.5, (3, 4)) if kind == "positive" else rng.standard_normal((3, 4))
    check_grads(f, (jnp.asarray(x),), order=2, modes=("fwd", "rev"))


@needs_fp64
def test_gradients_at_zeros_and_ties():
    xz = np.array([[1.5, 0.0, 2.0, 3.0], [0.0, 0.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]])
    g = netcl.grad(lambda a: jnp.sum(R.reduce_prod(a, (1,))))(jnp.asarray(xz))
    want = np.array([[np.prod(np.delete(row, i)) for i in range(4)] for row in xz])
    np.testing.assert_allclose(np.asarray(g), want)
    w = np.arange(1.0, 5.0)

    def cumprod_grad(row):
        return np.array([sum(w[k] * np.prod(np.delete(row[:k + 1], i)) for k in range(i, 4))
                         for i in range(4)])
    g = netcl.grad(lambda a: jnp.sum(R.cumprod(a, 1) * jnp.asarray(w)))(jnp.asarray(xz))
    np.testing.assert_allclose(np.asarray(g), np.array([cumprod_grad(r) for r in xz]))
    _, t = netcl.jvp(lambda a: R.cumprod(a, 1), (jnp.asarray(xz),),
                     (jnp.asarray(np.ones_like(xz)),))
    want_t = np.array([[sum(np.prod(np.delete(r[:k + 1], i)) for i in range(k + 1))
                        for k in range(4)] for r in xz])
    np.testing.assert_allclose(np.asarray(t), want_t)
    g = netcl.grad(lambda a: R.reduce_max(a, (0,)))(jnp.asarray(np.array([1.0, 3.0, 3.0, 2.0])))
    np.testing.assert_allclose(np.asarray(g), [0, 0.5, 0.5, 0])  # ties share, as in JAX
    g = netcl.grad(lambda a: jnp.sum(R.cummax(a, 0)))(jnp.asarray(np.array([2.0, 1.0, 3.0, 0.5])))
    np.testing.assert_allclose(np.asarray(g), [2, 0, 2, 0])
    g = netcl.grad(lambda a: jnp.sum(jnp.argmax(a) * a))(jnp.asarray(np.array([1.0, 4.0, 2.0])))
    np.testing.assert_allclose(np.asarray(g), [1, 1, 1])  # argmax itself has no gradient
    g = netcl.grad(lambda a: jnp.sum(R.cumsum(a, 0) * jnp.asarray(w)))(jnp.asarray(w))
    np.testing.assert_allclose(np.asarray(g), np.cumsum(w[::-1])[::-1])


@needs_fp64
def test_vmap_shifts_axes():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 5))
    d = jnp.asarray(x)
    for in_axis in (0, 1, 2):
        f = netcl.vmap(lambda a: R.reduce_sum(a, (1,)), in_axes=in_axis)
        want = np.moveaxis(x, in_axis, 0).sum(2)
        np.testing.assert_allclose(np.asarray(f(d)), want, rtol=1e-12)
        f = netcl.vmap(lambda a: R.reduce_max(a, (0, 1)), in_axes=in_axis)
        np.testing.assert_array_equal(np.asarray(f(d)), np.moveaxis(x, in_axis, 0).max((1, 2)))
        f = netcl.vmap(lambda a: R.argmin(a, 1), in_axes=in_axis)
        np.testing.assert_array_equal(np.asarray(f(d)), np.moveaxis(x, in_axis, 0).argmin(2))
        f = netcl.vmap(lambda a: R.cumsum(a, 0, True), in_axes=in_axis, out_axes=0)
        np.testing.assert_allclose(np.asarray(f(d)),
                                   _np_scan("cumsum", np.moveaxis(x, in_axis, 0), 1, True),
                                   rtol=1e-12)
    f = netcl.vmap(lambda a: jnp.mean(a, axis=-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(f(d)), x.mean(-1, keepdims=True), rtol=1e-12)
    g = netcl.vmap(netcl.grad(lambda a: jnp.sum(R.cummax(a, 0))))(d[:, :, 0])
    np.testing.assert_allclose(np.asarray(g).shape, (3, 4))


def test_jit_stages_reductions():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 5)).astype(np.float32)

    @netcl.jit
    def f(a):
        return jnp.sum(a * 2.0, axis=1) + jnp.max(a, axis=1), jnp.cumsum(a, axis=0)
    s, c = f(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(s), (x * 2).sum(1) + x.max(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(c), np.cumsum(x, 0), rtol=1e-5, atol=1e-5)
