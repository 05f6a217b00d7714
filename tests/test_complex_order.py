"""Ordering of complex numbers, as JAX's: lexicographic (real part, then imaginary part) with
IEEE comparisons of the parts, so a NaN in the deciding part compares false.

- lax.max/min, jnp.maximum/minimum keep the second operand unless the first compares
  greater (NaNs do not propagate); jnp.fmax/fmin; jnp's <, <=, >, >= (lax.lt & co. refuse
  complex numbers, as JAX's);
- reductions (lax.reduce_max/min, jnp.max/min/amax/amin with axis, keepdims, initial,
  where; nanmax/nanmin, ptp) fold lax.max in order from -inf+0j (+inf+0j for min), which
  with NaNs depends on the order: XLA's CPU reductions fold in order up to 32 elements, so
  those compare with JAX, and every size with the fold written out below;
- sort/argsort/lax.sort, unique and searchsorted in JAX's sort order;
- JAX's errors where it refuses: argmax/argmin (and nan-), quantiles, top_k, partition,
  clip, raised before any kernel runs;
- derivatives: the cotangent goes to the selected operand (split on ties), checked with
  check_grads in complex128 and against JAX.

Against JAX where installed; without it against NumPy and the written-out fold."""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.test_util import check_grads

try:
    import jax
    import jax.numpy as jjnp
    from jax import lax as jlax
except ImportError:         # (NumPy and the written-out fold are the oracles then)
    jax = jjnp = jlax = None

nan, inf = np.nan, np.inf
SPECIAL = (0.0, -0.0, 1.0, -1.0, 2.0, inf, -inf, nan)
DTYPES = (np.complex64, np.complex128)
SETTINGS = settings(max_examples=20, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def parts(re, im, dtype):
    """A complex array from its parts (re + 1j * im would turn infinities into NaNs)."""
    re, im = np.broadcast_arrays(np.asarray(re, float), np.asarray(im, float))
    z = np.empty(re.shape, dtype)
    z.real, z.imag = re, im
    return z


def all_pairs(dtype):
    """Every pair of the special values' complex numbers: (x, y) of 4096 elements."""
    v = parts(*zip(*itertools.product(SPECIAL, SPECIAL)), dtype)
    return np.repeat(v, v.size), np.tile(v, v.size)


def same(got, want):
    """Equal values, dtypes and shapes; NaN equals NaN, -0.0 differs from 0.0."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (got.shape, got.dtype, want.shape, want.dtype)
    for g, w in ((got.real, want.real), (got.imag, want.imag)) if got.dtype.kind == "c" \
            else ((got, want),):
        ok = (g == w) & (np.signbit(g) == np.signbit(w)) if g.dtype.kind == "f" else g == w
        if g.dtype.kind == "f":
            ok |= np.isnan(g) & np.isnan(w)
        if not np.all(ok):
            bad = np.flatnonzero(~ok)[:4]
            raise AssertionError(f"{got.ravel()[bad]} != {want.ravel()[bad]} at {bad}")


# ---- oracles written without netcl -----------------------------------------------------------

def lex(x, y, op):
    """x op y lexicographically, as JAX's jnp comparisons of complex numbers."""
    with np.errstate(invalid="ignore"):
        return np.where(x.real == y.real, op(x.imag, y.imag), op(x.real, y.real))


def beats(a, b, name):
    gt = (a.imag > b.imag) if a.real == b.real else (a.real > b.real)
    lt = (a.imag < b.imag) if a.real == b.real else (a.real < b.real)
    return gt if name == "max" else lt


def fold(x, axes, name):
    """XLA's reduce_max/min of complex numbers done in order: lax.max(acc, element) from
    the identity over each output's elements (row-major), one element given as is."""
    kept = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    rows = np.transpose(x, kept + list(axes)).reshape(
        int(np.prod(out_shape)), int(np.prod([x.shape[d] for d in axes])))
    init = complex(-inf if name == "max" else inf, 0)
    out = []
    for row in rows:
        acc = row[0] if len(row) == 1 else init
        for e in row[1:] if len(row) == 1 else row:
            acc = acc if beats(acc, e, name) else e
        out.append(acc)
    return np.array(out, x.dtype).reshape(out_shape)


# ---- elementwise -----------------------------------------------------------------------------

ELEMENTWISE = {
    # name: (netcl's function, the NumPy oracle)
    "maximum": (jnp.maximum, lambda x, y: np.where(lex(x, y, np.greater), x, y)),
    "minimum": (jnp.minimum, lambda x, y: np.where(lex(x, y, np.less), x, y)),
    "lax.max": (lax.max, lambda x, y: np.where(lex(x, y, np.greater), x, y)),
    "lax.min": (lax.min, lambda x, y: np.where(lex(x, y, np.less), x, y)),
    "fmax": (jnp.fmax, lambda x, y: np.where(lex(x, y, np.greater) | np.isnan(y), x, y)),
    "fmin": (jnp.fmin, lambda x, y: np.where(lex(x, y, np.less) | np.isnan(y), x, y)),
    "less": (jnp.less, lambda x, y: lex(x, y, np.less)),
    "less_equal": (jnp.less_equal, lambda x, y: lex(x, y, np.less_equal)),
    "greater": (jnp.greater, lambda x, y: lex(x, y, np.greater)),
    "greater_equal": (jnp.greater_equal, lambda x, y: lex(x, y, np.greater_equal)),
    "x < y": (lambda x, y: x < y, lambda x, y: lex(x, y, np.less)),
    "x >= y": (lambda x, y: x >= y, lambda x, y: lex(x, y, np.greater_equal)),
}


def _jax_fn(name):
    """ELEMENTWISE's function `name` in JAX."""
    ops = {"x < y": lambda x, y: x < y, "x >= y": lambda x, y: x >= y,
           "lax.max": jlax.max, "lax.min": jlax.min}
    return ops.get(name) or getattr(jjnp, name)


def want_elementwise(name, x, y):
    if jax is None:
        return ELEMENTWISE[name][1](x, y)
    return np.asarray(_jax_fn(name)(jjnp.asarray(x),
                                    jjnp.asarray(y) if isinstance(y, np.ndarray) else y))


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("dtype", DTYPES, ids=["c64", "c128"])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_every_special_pair(x64_on, name, dtype, mode):
    x, y = all_pairs(dtype)
    fn = ELEMENTWISE[name][0]
    if mode == "jit":
        fn = netcl.jit(fn)
    elif mode == "vmap":
        x, y = x.reshape(64, 64), y.reshape(64, 64)
        fn = netcl.vmap(fn)
    got = fn(jnp.asarray(x), jnp.asarray(y))
    same(got, want_elementwise(name, x, y))
    same(got, ELEMENTWISE[name][1](x, y))      # (the oracle agrees with JAX, above)


@SETTINGS
@given(data=st.data())
def test_elementwise_broadcasting_and_scalars(x64_on, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    name = data.draw(st.sampled_from(["maximum", "minimum", "fmax", "less", "greater_equal"]))
    shape = tuple(data.draw(st.lists(st.integers(1, 3), max_size=3)))
    draw = lambda s: parts(*(data.draw(st.lists(st.sampled_from(SPECIAL), min_size=int(
        np.prod(s)), max_size=int(np.prod(s)))) for _ in "ri"), dtype).reshape(s)
    x = draw(shape)
    other = data.draw(st.sampled_from(["row", "complex scalar", "float scalar", "real array"]))
    if other == "row":
        y = draw(shape[-1:])
    elif other == "complex scalar":
        y = complex(data.draw(st.sampled_from(SPECIAL)), data.draw(st.sampled_from(SPECIAL)))
    elif other == "float scalar":
        y = data.draw(st.sampled_from(SPECIAL))
    else:
        y = np.asarray(data.draw(st.sampled_from(SPECIAL)), np.float32)
    got = ELEMENTWISE[name][0](jnp.asarray(x), jnp.asarray(y) if isinstance(y, np.ndarray)
                               else y)
    xb, yb = np.broadcast_arrays(x, np.asarray(y).astype(dtype))
    want = want_elementwise(name, x, y) if jax is not None else \
        ELEMENTWISE[name][1](xb, yb)
    same(got, want)


def test_lax_comparisons_refuse_complex_as_jax(x64_on):
    z = jnp.asarray(np.array([1 + 1j, 2j], np.complex64))
    for fn in (lax.lt, lax.le, lax.gt, lax.ge):
        with pytest.raises(TypeError, match="complex"):
            fn(z, z)


# ---- reductions ------------------------------------------------------------------------------

def _values(data, shape, dtype, p_nan):
    """Random special values with NaNs in either part at rate p_nan."""
    n = int(np.prod(shape))
    finite = st.sampled_from(SPECIAL[:-1])
    re = np.array(data.draw(st.lists(finite, min_size=n, max_size=n)), float)
    im = np.array(data.draw(st.lists(finite, min_size=n, max_size=n)), float)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    re[rng.random(n) < p_nan] = nan
    im[rng.random(n) < p_nan] = nan
    return parts(re, im, dtype).reshape(shape)


def _present(x, layout):
    """x as a netcl array that is `layout` in memory, with x's logical values."""
    if layout == "transposed" and x.ndim >= 2:
        return jnp.swapaxes(jnp.asarray(np.ascontiguousarray(np.swapaxes(x, 0, -1))), 0, -1)
    if layout == "reversed" and x.ndim >= 1:
        return jnp.flip(jnp.asarray(np.ascontiguousarray(np.flip(x, -1))), -1)
    return jnp.asarray(x)


@SETTINGS
@given(data=st.data())
def test_reduce_max_min_fold_in_order(x64_on, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    shape = tuple(data.draw(st.lists(st.integers(0, 5), min_size=1, max_size=3)))
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))))
    name = data.draw(st.sampled_from(["max", "min"]))
    x = _values(data, shape, dtype, data.draw(st.sampled_from([0.0, 0.1, 0.4])))
    layout = data.draw(st.sampled_from(["dense", "transposed", "reversed"]))
    mode = data.draw(st.sampled_from(["eager", "jit", "vmap"]))
    fn = {"max": lax.reduce_max, "min": lax.reduce_min}[name]
    f = lambda a: fn(a, axes)
    if mode == "jit":
        f = netcl.jit(f)
    elif mode == "vmap":        # a batch of x and x reversed, the batch axis last
        f = netcl.vmap(f, in_axes=-1, out_axes=-1)
        x = np.stack([x, x[::-1]], -1)
    got = np.asarray(f(_present(x, layout)))
    if mode == "vmap":
        same(got, np.stack([fold(x[..., i], axes, name) for i in range(2)], -1))
    else:
        same(got, fold(x, axes, name))
        if jax is not None and x.size and int(np.prod([shape[a] for a in axes])) <= 32:
            same(got, getattr(jlax, f"reduce_{name}")(x, axes))


@pytest.mark.parametrize("dtype", DTYPES, ids=["c64", "c128"])
def test_long_rows_fold_in_chunks(x64_on, dtype):
    """Few outputs of long rows fold chunk by chunk (each chunk's fold as a function of
    what came before it); the result is the in-order fold's, NaNs included."""
    rng = np.random.default_rng(0)
    pick = lambda n: rng.choice(np.array(SPECIAL[:-1]), n)
    for shape, axes in (((5000,), (0,)), ((2, 1500), (1,)), ((1500, 2), (0,))):
        for p_nan in (0.0, 0.001, 0.02, 0.5):
            n = int(np.prod(shape))
            re, im = pick(n), pick(n)
            re[rng.random(n) < p_nan] = nan
            im[rng.random(n) < p_nan] = nan
            x = parts(re, im, dtype).reshape(shape)
            for name in ("max", "min"):
                got = getattr(jnp, name)(jnp.asarray(x), axis=axes)
                same(got, fold(x, axes, name))
                if jax is not None and p_nan == 0:     # (then the order does not matter)
                    same(got, getattr(jjnp, name)(x, axis=axes))


def test_identity_and_single_elements_as_jax(x64_on):
    """Two or more elements fold from -inf+0j, which beats (-inf, negative imaginary part):
    XLA's result, equal to no element; one element is its own result; none the identity."""
    x = parts(np.full((2, 3), -inf), np.full((2, 3), -1.0), np.complex64)
    same(jnp.max(x, axis=1), parts([-inf, -inf], [0.0, 0.0], np.complex64))
    same(jnp.max(x[:, :1], axis=1), x[:, 0])
    same(lax.reduce_max(jnp.zeros((2, 0), np.complex64), (1,)),
         parts([-inf, -inf], [0.0, 0.0], np.complex64))
    same(lax.reduce_min(jnp.zeros((0, 2), np.complex128), (0,)),
         parts([inf, inf], [0.0, 0.0], np.complex128))
    same(jnp.max(jnp.asarray(parts([nan, 1.0], 0.0, np.complex64))), np.complex64(1))
    same(jnp.max(jnp.asarray(parts([1.0, nan], 0.0, np.complex64))),
         parts(nan, 0.0, np.complex64)[()])
    if jax is not None:
        for v in (x, x[:, :1]):
            same(jnp.max(v, axis=1), jjnp.max(v, axis=1))


KEYWORDS = [
    dict(axis=1), dict(axis=0, keepdims=True), dict(axis=None), dict(axis=(0, 1)),
    dict(axis=1, initial=1 + 0j), dict(axis=1, initial=-1.0), dict(axis=0, initial=2 - 1j),
    dict(axis=1, initial=0.5 + 0j, where=np.array([True, False, True, True, False])),
    dict(axis=0, initial=nan + 0j, where=np.array([[True], [False], [True]])),
]


@pytest.mark.parametrize("kw", range(len(KEYWORDS)))
@pytest.mark.parametrize("name", ["max", "min", "amax", "amin", "nanmax", "nanmin", "ptp"])
def test_numpy_reductions_keywords(x64_on, name, kw):
    kw = KEYWORDS[kw]
    if name == "ptp" and ("initial" in kw or "where" in kw):
        return      # (ptp takes neither)
    rng = np.random.default_rng(kw.get("axis") == 1)
    x = parts(rng.choice(SPECIAL, (3, 5)), rng.choice(SPECIAL, (3, 5)), np.complex64)
    x[2] = parts([nan, nan, 1.0, nan, 1.0], [0.0, 1.0, nan, nan, 2.0], np.complex64)
    got = getattr(jnp, name)(jnp.asarray(x), **kw)
    if jax is not None:
        same(got, getattr(jjnp, name)(x, **kw))
    elif name in ("max", "min", "amax", "amin") and set(kw) <= {"axis", "keepdims"}:
        axis = kw["axis"]
        axes = (0, 1) if axis is None else (axis,) if isinstance(axis, int) else axis
        want = fold(x, axes, name[-3:])
        same(got, want.reshape(got.shape))


def test_empty_reductions_need_initial_as_jax(x64_on):
    e = jnp.zeros((2, 0), np.complex64)
    with pytest.raises(ValueError, match="max"):
        jnp.max(e, axis=1)
    with pytest.raises(ValueError, match="initial"):
        jnp.min(jnp.ones((2, 3), np.complex64), where=np.ones((2, 3), bool))
    same(jnp.max(e, axis=1, initial=2 - 1j), parts([2.0, 2.0], -1.0, np.complex64))
    same(jnp.nanmin(e, axis=1, initial=3.0), parts([3.0, 3.0], 0.0, np.complex64))


# ---- sorting, unique, searchsorted ------------------------------------------------------------

@pytest.mark.skipif(jax is None, reason="JAX's sort order (NaNs, signed zeros)")
@settings(SETTINGS, max_examples=8)     # (unique's sizes vary: JAX compiles each)
@given(data=st.data())
def test_sort_unique_searchsorted_as_jax(x64_on, data):
    dtype = data.draw(st.sampled_from(DTYPES))
    n = 10          # (one shape: JAX compiles each function for each)
    x = _values(data, (n,), dtype, data.draw(st.sampled_from([0.0, 0.2])))
    X = jnp.asarray(x)
    for fn, jfn in ((lambda a: jnp.sort(a), lambda a: jjnp.sort(a)),
                    (lambda a: jnp.sort(a, descending=True),
                     lambda a: jjnp.sort(a, descending=True)),
                    (lambda a: jnp.argsort(a), lambda a: jjnp.argsort(a)),
                    (lambda a: jnp.argsort(a, descending=True),
                     lambda a: jjnp.argsort(a, descending=True)),
                    (lambda a: lax.sort(a), lambda a: jlax.sort(a)),
                    (lambda a: jnp.unique(a, return_index=True, return_inverse=True,
                                          return_counts=True),
                     lambda a: jjnp.unique(a, return_index=True, return_inverse=True,
                                           return_counts=True)),
                    (lambda a: jnp.unique(a, equal_nan=False), lambda a: jjnp.unique(
                        a, equal_nan=False)),
                    (lambda a: jnp.unique(a, size=n + 1), lambda a: jjnp.unique(
                        a, size=n + 1))):
        got, want = fn(X), jfn(x)
        for g, w in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
            same(g, w)
    s = np.asarray(jjnp.sort(x))
    for side in ("left", "right"):
        same(jnp.searchsorted(jnp.asarray(s), X, side=side),
             jjnp.searchsorted(s, x, side=side))
    same(netcl.jit(lambda a, v: jnp.searchsorted(a, v))(jnp.asarray(s), X),
         jjnp.searchsorted(s, x))


def test_sort_without_jax(x64_on):
    x = parts([1.0, nan, 1.0, -inf, 0.0, -0.0], [2.0, 0.0, -1.0, 5.0, 1.0, 0.5], np.complex128)
    same(jnp.sort(jnp.asarray(x)), np.sort(x))          # (NumPy's order, without NaN parts)
    same(jnp.argsort(jnp.asarray(x)), np.argsort(x, kind="stable"))


# ---- errors where JAX refuses ------------------------------------------------------------------

ERRORS = [
    # (call, error type, what the message names)
    (lambda z: jnp.argmax(z), TypeError, r"argmax: a of shape \(2, 3\) and dtype complex64"),
    (lambda z: jnp.argmin(z, axis=1), TypeError, r"argmin: a of shape \(2, 3\)"),
    (lambda z: jnp.nanargmax(z), TypeError, r"nanargmax: a of shape \(2, 3\)"),
    (lambda z: jnp.nanargmin(z, axis=0), TypeError, r"nanargmin: a of shape \(2, 3\)"),
    (lambda z: lax.argmax(z, 1, np.int32), TypeError, r"argmax: operand of shape \(2, 3\)"),
    (lambda z: lax.argmin(z, 0, np.int32), TypeError, r"argmin: operand .*complex64"),
    (lambda z: jnp.median(z), ValueError, r"median: a of shape \(2, 3\) and dtype complex64"),
    (lambda z: jnp.quantile(z, 0.5), ValueError, r"quantile: a of shape"),
    (lambda z: jnp.percentile(z, 50, axis=1), ValueError, r"percentile: a of shape"),
    (lambda z: jnp.nanmedian(z), ValueError, r"nanmedian: a of shape"),
    (lambda z: jnp.nanquantile(z, 0.5), ValueError, r"nanquantile: a of shape"),
    (lambda z: lax.top_k(z, 2), ValueError, r"top_k: operand of shape \(2, 3\) and dtype"),
    (lambda z: jnp.partition(z, 1), NotImplementedError, r"partition: a of shape \(2, 3\)"),
    (lambda z: jnp.argpartition(z, 1), NotImplementedError, r"argpartition: a of shape"),
    (lambda z: jnp.clip(z, 0, 1), ValueError,
     r"clip: arr of shape \(2, 3\) and dtype complex64"),
    (lambda z, r: jnp.clip(r, 0j), ValueError, r"clip: min of shape \(\) and dtype complex"),
    (lambda z, r: jnp.clip(r, None, z), ValueError, r"clip: max of shape \(2, 3\)"),
]
JAX_ERRORS = [
    lambda z: jjnp.argmax(z), lambda z: jjnp.argmin(z, axis=1), lambda z: jjnp.nanargmax(z),
    lambda z: jjnp.nanargmin(z, axis=0), lambda z: jlax.argmax(z, 1, np.int32),
    lambda z: jlax.argmin(z, 0, np.int32), lambda z: jjnp.median(z),
    lambda z: jjnp.quantile(z, 0.5), lambda z: jjnp.percentile(z, 50, axis=1),
    lambda z: jjnp.nanmedian(z), lambda z: jjnp.nanquantile(z, 0.5),
    lambda z: jlax.top_k(z, 2), lambda z: jjnp.partition(z, 1),
    lambda z: jjnp.argpartition(z, 1), lambda z: jjnp.clip(z, 0, 1),
    lambda z, r: jjnp.clip(r, 0j), lambda z, r: jjnp.clip(r, None, z),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_refused_as_jax_before_any_kernel(x64_on, i, kernel_launches):
    call, error, message = ERRORS[i]
    z = np.arange(6).reshape(2, 3).astype(np.complex64) * (1 - 1j)
    args = (z, z.real)[:call.__code__.co_argcount]
    arrays = [jnp.asarray(a) for a in args]
    del kernel_launches[:]
    with pytest.raises(error, match=message):
        call(*arrays)
    assert kernel_launches == [], kernel_launches
    with pytest.raises(error, match=message.split(":")[0]):
        netcl.jit(call)(*arrays)
    if jax is not None:
        with pytest.raises(error):
            JAX_ERRORS[i](*args)


# ---- derivatives -------------------------------------------------------------------------------

def _z(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex128)


DIFFERENTIABLE = {
    "maximum": lambda a, b: jnp.maximum(a, b) * (1 + 2j),
    "minimum": lambda a, b: jnp.minimum(a, b * 1j),
    "fmax": lambda a, b: jnp.fmax(a, b),
    "fmin": lambda a, b: jnp.fmin(b, a) * a,
    "max": lambda a, b: jnp.max(a * b, axis=1),
    "min": lambda a, b: jnp.min(a - b, axis=0, keepdims=True),
    "amax all": lambda a, b: jnp.amax(a) * b,
    "max initial": lambda a, b: jnp.max(a, axis=1, initial=0.1 + 0j) + jnp.sum(b),
    "nanmax": lambda a, b: jnp.nanmax(a + b, axis=0),
    "nanmin": lambda a, b: jnp.nanmin(a, axis=1) * jnp.sum(b),
    "ptp": lambda a, b: jnp.ptp(a * b, axis=1),
    "lax.reduce_min": lambda a, b: lax.reduce_min(a, (0, 1)) + b,
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_check_grads_complex128(x64_on, name):
    """Away from ties (random operands): the derivative is the selected operand's."""
    rng = np.random.default_rng(len(name))
    a, b = _z(rng, (3, 4)), _z(rng, (3, 4))
    check_grads(DIFFERENTIABLE[name], (a, b), order=1)


TIES = np.array([[1 + 1j, 1 + 1j, 2 - 1j, 0j], [2 - 1j, 1 + 1j, 2 - 1j, 3 + 0j],
                 [-1 + 5j, -1 + 5j, -1 + 5j, -1 + 6j]], np.complex128)


@pytest.mark.skipif(jax is None, reason="JAX's tie rules")
@pytest.mark.parametrize("mode", ["grad", "jit grad", "jvp"])
@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_derivatives_with_ties_as_jax(x64_on, name, mode):
    """Ties split the cotangent evenly (elementwise: half each; reductions: 1/count), as
    JAX's; the gradient of the real part of a complex function is JAX's (conjugated)."""
    f, jf = DIFFERENTIABLE[name], _as_jax(name)
    a, b = TIES, TIES[::-1, ::-1].copy()
    if mode == "jvp":
        ta, tb = a * 0 + 1j, b * 0 + 1
        got = netcl.jvp(f, (jnp.asarray(a), jnp.asarray(b)), (jnp.asarray(ta), jnp.asarray(tb)))
        want = _jax_or_skip(lambda: jax.jvp(jf, (a, b), (ta, tb)), name)
        for g_, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g_), np.asarray(w), rtol=1e-12, atol=1e-12)
        return
    loss = lambda m, fn: (lambda a, b: m.real(m.sum(fn(a, b) * (0.5 - 2j))))
    grad = netcl.grad(loss(jnp, f), argnums=(0, 1))
    if mode == "jit grad":
        grad = netcl.jit(grad)
    got = grad(jnp.asarray(a), jnp.asarray(b))
    want = _jax_or_skip(lambda: jax.grad(loss(jjnp, jf), argnums=(0, 1))(a, b), name)
    for g_, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g_), np.asarray(w), rtol=1e-12, atol=1e-12)


def _jax_or_skip(reference, name):
    """JAX's derivative, or a skip where this JAX version cannot take it (some versions'
    reductions with `initial=` refuse complex operands under differentiation)."""
    try:
        return reference()
    except TypeError as e:
        pytest.skip(f"JAX {jax.__version__} cannot differentiate {name}: {e}")


def _as_jax(name):
    """DIFFERENTIABLE's function `name` written with JAX."""
    return {
        "maximum": lambda a, b: jjnp.maximum(a, b) * (1 + 2j),
        "minimum": lambda a, b: jjnp.minimum(a, b * 1j),
        "fmax": lambda a, b: jjnp.fmax(a, b),
        "fmin": lambda a, b: jjnp.fmin(b, a) * a,
        "max": lambda a, b: jjnp.max(a * b, axis=1),
        "min": lambda a, b: jjnp.min(a - b, axis=0, keepdims=True),
        "amax all": lambda a, b: jjnp.amax(a) * b,
        "max initial": lambda a, b: jjnp.max(a, axis=1, initial=0.1 + 0j) + jjnp.sum(b),
        "nanmax": lambda a, b: jjnp.nanmax(a + b, axis=0),
        "nanmin": lambda a, b: jjnp.nanmin(a, axis=1) * jjnp.sum(b),
        "ptp": lambda a, b: jjnp.ptp(a * b, axis=1),
        "lax.reduce_min": lambda a, b: jlax.reduce_min(a, (0, 1)) + b,
    }[name]


def test_comparisons_have_no_derivative(x64_on):
    z = jnp.asarray(_z(np.random.default_rng(1), (4,)))
    g = netcl.grad(lambda a: jnp.real(jnp.sum(jnp.where(a < 0.5 + 0j, a, a * 2))))(z)
    want = np.where(np.asarray(jnp.less(z, 0.5 + 0j)), 1, 2).astype(np.complex128)
    np.testing.assert_allclose(np.asarray(g), want)
