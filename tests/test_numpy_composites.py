"""netcl.numpy's composite functions (composites.py, polynomials.py, searching.py) against
jax.numpy: values, dtypes and shapes on float32 / int32 / bool data (odd sizes, empty arrays,
NaNs), the same under netcl.jit and vmap, float64 gradient checks of the differentiable ones,
and bad inputs (typed errors naming the function, raised before any kernel runs)."""
import numpy as np
import pyopencl as cl
import pytest

import netcl
import netcl.numpy as jnp
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")
jjnp = jax.numpy

RNG = np.random.default_rng(0)
F7 = RNG.standard_normal(7).astype(np.float32)
G7 = RNG.standard_normal(7).astype(np.float32)
F35 = RNG.standard_normal((3, 5)).astype(np.float32)
G35 = RNG.standard_normal((3, 5)).astype(np.float32)
I7 = RNG.integers(-4, 5, 7).astype(np.int32)
I35 = RNG.integers(-4, 5, (3, 5)).astype(np.int32)
B7 = RNG.random(7) < 0.5
E0 = np.zeros(0, np.float32)
NAN7 = F7.copy()
NAN7[[1, 4]] = np.nan
SORTED7 = np.sort(F7)
N = np.nan


# ---- helpers ------------------------------------------------------------------------------------

def _to(lib, v):
    if isinstance(v, np.ndarray):
        return lib.asarray(v)
    if isinstance(v, list):
        return [_to(lib, x) for x in v]
    return v


def _flat(r):
    return list(r) if isinstance(r, (list, tuple)) else [r]


def _same(got, want, rtol=2e-5, atol=2e-5, dtype=True):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), (len(got), len(want))
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
        if dtype:
            assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
        if w.dtype.kind == "f" or g.dtype.kind == "f":
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(g, w)


def agree(f, *args, jit=False, **tol):
    """f(lib, *args) with lib netcl.numpy and jax.numpy (host arrays in args are converted)
    gives the same; with jit, also netcl.jit of it."""
    with jax.enable_x64(netcl.config.enable_x64):   # (JAX's ints as netcl's: int64 with x64)
        want = f(jjnp, *[_to(jjnp, a) for a in args])
    xs = [_to(jnp, a) for a in args]
    _same(f(jnp, *xs), want, **tol)
    if jit:
        arrays = [i for i, a in enumerate(xs) if isinstance(a, netcl.Array)]

        def g(*arrs):
            ys = list(xs)
            for i, a in zip(arrays, arrs):
                ys[i] = a
            return f(jnp, *ys)
        _same(netcl.jit(g)(*[xs[i] for i in arrays]), want, **tol)


def f64(*shape, seed=1):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape))


@pytest.fixture
def no_kernels():
    """Counts kernel launches and fills (launchers capture enqueue_nd_range_kernel when
    they are built, so the built ones are dropped first)."""
    count = [0]
    saved = {n: getattr(cl, n) for n in ("enqueue_nd_range_kernel", "enqueue_fill_buffer")}

    def counting(fn):
        def wrapper(*a, **k):
            count[0] += 1
            return fn(*a, **k)
        return wrapper
    for n, fn in saved.items():
        setattr(cl, n, counting(fn))
    netcl.test_util.forget_launchers()
    yield count
    for n, fn in saved.items():
        setattr(cl, n, fn)
    netcl.test_util.forget_launchers()


# ---- whole-array comparisons ---------------------------------------------------------------------

def test_isclose_allclose():
    a = np.array([1.0, N, np.inf, -np.inf, 1e-9, 2.0, N], np.float32)
    b = np.array([1.0 + 1e-6, N, np.inf, np.inf, 0.0, 2.1, 1.0], np.float32)
    agree(lambda L, x, y: (L.isclose(x, y), L.isclose(x, y, equal_nan=True),
                           L.allclose(x, y), L.allclose(x, y, equal_nan=True),
                           L.allclose(x[:1], y[:1]), L.isclose(x, 1.0)), a, b, jit=True)
    agree(lambda L, x, y: L.isclose(x, y, rtol=0.1, atol=0.5), F35, G7[:5])   # broadcasting
    agree(lambda L, x, y: (L.isclose(x, y), L.allclose(x, x)), I7, I7 + 1)    # ints as floats
    agree(lambda L, x, y: L.allclose(x, y), E0, E0)
    assert bool(jnp.allclose(jnp.asarray(F7), jnp.asarray(F7 + 1e-7)))
    assert not bool(jnp.allclose(jnp.asarray(F7), jnp.asarray(F7 + 1e-3)))


def test_array_equal_equiv():
    agree(lambda L, x, y: (L.array_equal(x, x), L.array_equal(x, y), L.array_equal(x, y[:3]),
                           L.array_equiv(x, x[:1]), L.array_equiv(x, y)), F7, G7, jit=True)
    # shapes that do not broadcast are not equivalent (JAX 0.10 raises a TypeError there)
    assert not bool(jnp.array_equiv(jnp.asarray(F7), jnp.asarray(F7[:3])))
    assert not np.array_equiv(F7, F7[:3])
    agree(lambda L, x, y: (L.array_equal(x, y), L.array_equiv(x, y)), I7, I7.astype(np.float32))
    agree(lambda L, x, y: (L.array_equiv(x, y), L.array_equiv(x, y + 1)), F35, F35[1])
    agree(lambda L, x: (L.array_equal(x, x), L.array_equal(x, x, equal_nan=True)), NAN7)
    agree(lambda L, x: L.array_equal(x, x), E0)
    assert bool(jnp.array_equal(jnp.asarray(B7), jnp.asarray(B7)))


# ---- differences ----------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [F7, I7, B7, F35, E0], ids=["f32", "i32", "bool", "2d", "empty"])
def test_diff(data):
    agree(lambda L, x: tuple(L.diff(x, n=n) for n in (0, 1, 2, 8)), data,
          jit=data.dtype == np.float32)
    if data.ndim == 2:
        agree(lambda L, x, p: (L.diff(x, axis=0), L.diff(x, axis=0, prepend=p, append=1.5)),
              data, G35[:2])
    elif data.dtype != np.bool_:
        agree(lambda L, x, p: (L.diff(x, prepend=p, append=p),
                               L.diff(x, n=3, prepend=2, append=-1)), data, data[:3])


def test_ediff1d():
    agree(lambda L, x, b, e: (L.ediff1d(x, to_end=e, to_begin=b), L.ediff1d(x[:1])),
          I7, F7[:2], I7[:3], jit=True)
    agree(lambda L, x, b: (L.ediff1d(x), L.ediff1d(x, to_begin=b)), F35, G7)
    agree(lambda L, x: L.ediff1d(x), E0)


def test_nancumsum_nancumprod():
    x = F35.copy()
    x[0, 1] = x[2, 4] = x[1, 0] = N
    agree(lambda L, v: tuple(f(v, axis=a) for f in (L.nancumsum, L.nancumprod)
                             for a in (None, 0, -1)), x, jit=True)
    agree(lambda L, i, b, s: (L.nancumsum(i), L.nancumprod(i, axis=1), L.nancumsum(b),
                              L.nancumprod(b), L.nancumsum(i, dtype=L.float32),
                              L.nancumsum(s), L.nancumprod(s)), I35, B7, np.float32(N))
    agree(lambda L, v: (L.nancumsum(v), L.nancumprod(v)), E0)
    # dtype=bool: the running any (sum) / all (product) of x != 0, NaN counting as 0 / 1
    np.testing.assert_array_equal(jnp.nancumsum(jnp.asarray(np.float32([0, N, 2, 0])),
                                                dtype=bool), [False, False, True, True])
    np.testing.assert_array_equal(jnp.nancumprod(jnp.asarray(np.float32([1, N, 0, 2])),
                                                 dtype=bool), [True, True, False, False])


def test_trapezoid():
    agree(lambda L, y, x, d: (L.trapezoid(y), L.trapezoid(y, dx=0.5, axis=0),
                              L.trapezoid(y, x[:5]), L.trapezoid(y, x[:3], axis=0),
                              L.trapezoid(y, dx=d[:, :1]), L.trapezoid(y, dx=d[:, :4])),
          F35, SORTED7, np.abs(G35), jit=True)
    agree(lambda L, y, x: (L.trapezoid(y, x), L.trapezoid(y, x[:1])), F35,
          np.cumsum(np.abs(G35), axis=1))                                      # n-d x
    agree(lambda L, y, z: (L.trapezoid(y), L.trapezoid(z[:1])), I35, F7)
    # an empty axis integrates to 0, as in NumPy (JAX raises an IndexError)
    _same(jnp.trapezoid(jnp.zeros((3, 0), jnp.float32)), np.zeros(3, np.float32))


def test_unwrap():
    phase = np.cumsum(np.abs(F7) * 2.5).astype(np.float32)
    agree(lambda L, p: (L.unwrap(p), L.unwrap(L.sin(p) * 4.0), L.unwrap(p, discont=4.0)),
          phase, jit=True)
    agree(lambda L, p: (L.unwrap(p * 5.0, axis=0), L.unwrap(p * 3.0, period=1.0)), F35)
    # ints with the default period (2 pi) give the default float: JAX under netcl's x64
    with jax.enable_x64(netcl.config.enable_x64):
        agree(lambda L, p: (L.unwrap(p, period=6), L.unwrap(p * 3)), I7)
    agree(lambda L, p: L.unwrap(p), E0)


# ---- grids, products, rotations ---------------------------------------------------------------------

def test_meshgrid():
    agree(lambda L, a, b, c: [g for ix in ("xy", "ij") for sp in (False, True)
                              for g in L.meshgrid(a, b[:4], c[:2], indexing=ix, sparse=sp)
                              + L.meshgrid(a, b[:4], indexing=ix, sparse=sp)
                              + L.meshgrid(a, indexing=ix)], F7[:3], I7, G7, jit=True)
    agree(lambda L, a, b: L.meshgrid(a, b), E0, F7[:3])
    assert jnp.meshgrid() == []


def test_cross():
    agree(lambda L, a, b: (L.cross(a[:, :3], b[:, 2:]), L.cross(a[:, :3], b[0, :3]),
                           L.cross(a[:, :3], b[:, :2]), L.cross(a[0, :2], b[:, 2:]),
                           L.cross(a[:, :2], b[:, 3:]), L.cross(a, b, axisa=0, axisb=0),
                           L.cross(a[:, :4], b[:, 1:], axis=0),
                           L.cross(a, b.T[:, :3], axisa=0, axisc=0),
                           L.cross(a[:2], b, axisa=0, axisb=0)), F35, G35, jit=True)
    agree(lambda L, a, b: L.cross(a[:, :3], b[:, 2:]), I35, I35)


def test_vander():
    agree(lambda L, x, i: (L.vander(x[:5]), L.vander(x, 3, increasing=True), L.vander(i, 4),
                           L.vander(x, 0)), F7, I7, jit=True)
    agree(lambda L, x: L.vander(x), E0)


def test_rot90():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    agree(lambda L, m, y: [L.rot90(m, k) for k in (-3, -1, 0, 1, 2, 3, 5)] +
          [L.rot90(y, k, axes=(2, 0)) for k in (1, 2, 3)] + [L.rot90(y, axes=(-1, 1))],
          F35, x, jit=True)
    agree(lambda L, m, i: (L.fliplr(m), L.flipud(i)), F35, I35)


# ---- choosing -------------------------------------------------------------------------------------------

def test_select():
    agree(lambda L, x, y: (L.select([x > 0, y > 0], [x, y * 2.0], -1.0),
                           L.select([x > 0], [y], y[0]),                          # array default
                           L.select([x > 0, y[0] < 0], [1.0, y[0]], 0)),          # broadcast
          F35, G35, jit=True)
    agree(lambda L, x, y: (L.select([x > 0, x > -1], [x, x * 3]),                 # first one wins
                           L.select([x, x > 2], [y, x], 7)), I35, F35)            # int conditions
    agree(lambda L, x: L.select([x > 0], [x]), E0)


def test_piecewise():
    x = np.linspace(-3, 3, 7).astype(np.float32)
    agree(lambda L, v: (L.piecewise(v, [v < 0, v >= 0], [lambda u: -u, lambda u: u ** 2]),
                        L.piecewise(v, [v < -1, v > 1], [lambda u: 1 + u, lambda u: u - 1, 0.5]),
                        L.piecewise(v, [v < 2, v > -2], [lambda u: u * 10, 3]),   # later wins
                        L.piecewise(v, [v > 0], [lambda u, s: u * s], 2.0)), x, jit=True)
    agree(lambda L, v, c: (L.piecewise(v, [v > 0], [lambda u: u * 1.5]),          # cast to int
                           L.piecewise(v, c, [lambda u: u * 0, lambda u: u * 10,
                                              lambda u: u * 100])),
          I7, np.array([False, True, False]))


# ---- polynomials ----------------------------------------------------------------------------------------

def test_polyval():
    agree(lambda L, p, x: (L.polyval(p[:4], x), L.polyval(p[:4], 2.5), L.polyval(x, p[:5])),
          F7, G35, jit=True)                                       # (columns of polynomials)
    agree(lambda L, p, x: L.polyval(p[:3], x), I7, I35)
    agree(lambda L, p, x: L.polyval(p, x), E0, G7)


def test_polyadd_polysub_polymul():
    for name in ("polyadd", "polysub", "polymul"):
        agree(lambda L, a, b: tuple(getattr(L, name)(u, v) for u, v in
                                    ((a[:4], b[:2]), (a[:2], b[:5]), (a[:1], b))), F7, G7,
              jit=name == "polymul")
        agree(lambda L, a, b: (getattr(L, name)(a[:3], a[2:]), getattr(L, name)(a[:3], b[:3])),
              I7, F7)
    agree(lambda L, a, b: L.polymul(a, b), E0, F7[:3])
    z = np.float32([0, 0, 1, 2])
    agree(lambda L, a, b: L.polymul(a, b, trim_leading_zeros=True), z, F7[:3])
    np.testing.assert_allclose(jnp.polymul(jnp.asarray([1.0, 1.0]), jnp.asarray([1.0, -1.0])),
                               [1.0, 0.0, -1.0])


# ---- searching ------------------------------------------------------------------------------------------

def test_searchsorted():
    a = np.float32([-1.0, 0.0, 0.0, 0.5, 2.0, N, N])
    v = np.float32([[-2.0, -1.0, 0.0, -0.0, 0.25], [2.0, 3.0, N, np.inf, -np.inf]])
    sides = ("left", "right")
    agree(lambda L, x, y, s, f: [L.searchsorted(x, y, side=d) for d in sides] +
          [L.searchsorted(s, f, side=d) for d in sides] +
          [L.searchsorted(s, 0.1, side=d) for d in sides], a, v, SORTED7, F35, jit=True)
    agree(lambda L, x, y, f: [L.searchsorted(x, y, side=d) for d in sides] +
          [L.searchsorted(x, f * 3)], np.sort(I7), I35, F7)                   # ints, promotion
    agree(lambda L, x, e: (L.searchsorted(e, x), L.searchsorted(x, e, side="right")), F7, E0)
    agree(lambda L, x, y: L.searchsorted(x, y), np.sort(B7), B7)
    order = np.argsort(F7).astype(np.int32)
    agree(lambda L, x, y, s: L.searchsorted(x, y, sorter=s), F7, G7, order)


def test_digitize():
    bins = np.float32([-1.0, 0.0, 0.5, 2.0])
    x = np.float32([-3, -1, -0.5, 0, 0.25, 0.5, 1, 2, 5, N])
    agree(lambda L, v, b: [L.digitize(v, c, right=r) for r in (False, True)
                           for c in (b, b[::-1])], x, bins, jit=True)   # increasing, decreasing
    agree(lambda L, v, b: (L.digitize(v, b), L.digitize(v, b, right=True)), I35,
          np.int32([-2, 0, 3]))
    agree(lambda L, v, b: L.digitize(v, b), x, E0)


def test_interp():
    xp, fp = SORTED7, G7
    x = np.concatenate([G35.ravel() * 1.5, [N, np.inf, SORTED7[0], SORTED7[-1]]]).astype(np.float32)
    agree(lambda L, a, b, c: (L.interp(a, b, c), L.interp(a, b, c, left=-5.0, right=5.0),
                              L.interp(a, b, c, left="extrapolate", right="extrapolate"),
                              L.interp(a, b[:1], c[:1]),                       # one point
                              L.interp(0.3, b, c)), x, xp, fp, jit=True)
    agree(lambda L, a, b, c: L.interp(a, b, c), I35, np.int32([-3, 0, 1, 4]),
          np.int32([1, 2, 0, 5]))
    agree(lambda L, a, b, c: L.interp(a, b, c), F7, np.float32([0, 0, 1, 1]),
          np.float32([1, 2, 3, 4]))                                                  # repeats
    agree(lambda L, a, b, c: L.interp(a, b, c, period=2.0), F35 * 3, F7, G7)
    agree(lambda L, a, b, c: L.interp(a, b, c, period=360), np.float32([-10, 5, 350, 725]),
          np.float32([340, 0, 10, 180]), np.float32([1, 0, 2, 5]))


def test_isin_in1d():
    t = np.int32([3, -1, 0, 4, 3])
    agree(lambda L, e, s, x, f: [g for inv in (False, True) for g in (
        L.isin(e, s, invert=inv), L.isin(x, f, invert=inv), L.isin(e, f[:3] * 2.0, invert=inv),
        L.isin(e, 2, invert=inv))], I35, t, NAN7, np.float32([N, F7[0], 2.0]), jit=True)
    agree(lambda L, e, s: (L.isin(e, s), L.isin(s, e, invert=True)), E0, t)
    for invert in (False, True):
        np.testing.assert_array_equal(jnp.in1d(jnp.asarray(I35), jnp.asarray(t), invert=invert),
                                      np.isin(I35, t, invert=invert).ravel())


# ---- counting -------------------------------------------------------------------------------------------

def test_bincount():
    x = np.int32([0, 3, 3, 1, 6, 1, 3])
    agree(lambda L, v, w: (L.bincount(v), L.bincount(v, minlength=10), L.bincount(v, w)),
          x, F7)
    agree(lambda L, v, w, i, b: (L.bincount(v, w, length=4),            # larger values dropped
                                 L.bincount(i, length=9),               # negatives in bin 0
                                 L.bincount(b, length=3), L.bincount(v, i, length=5)),
          x, F7, I7, B7, jit=True)
    agree(lambda L, v: L.bincount(v, minlength=3), np.zeros(0, np.int32))


def test_histogram():
    x = RNG.standard_normal(15).astype(np.float32)
    agree(lambda L, a, w, b: L.histogram(a) + L.histogram(a, bins=7, range=(-1.0, 2.0)) +
          L.histogram(a, bins=4, weights=w, density=True) + L.histogram(a, bins=b) +
          L.histogram(a, bins=b[::2], density=True) + (L.histogram_bin_edges(w, bins=5),),
          x.reshape(3, 5), F35, np.float32([-2, -0.5, 0, 0.3, 3]), jit=True)
    agree(lambda L, a: L.histogram(a, bins=3) + (L.histogram_bin_edges(a, 4, range=(0, 1)),),
          np.int32([1, 2, 2, 3, 7]))                                      # int data, edges
    agree(lambda L, a: L.histogram(a, bins=2) + L.histogram(a, bins=2, range=(0, 3)) +
          L.histogram(a[1:2], bins=3), np.float32([N, 1.0, 2.0, 3.0, 4.0]))   # NaN; widened
    # exactly representable edges are exact (NumPy's linspace): 0.5 falls in [0.5, 0.75)
    counts, edges = jnp.histogram(jnp.asarray(np.float32([-1, -0.5, 0, 0.5, 1, 1.5])))
    np.testing.assert_array_equal(counts, [1, 0, 1, 0, 1, 0, 1, 0, 1, 1])
    np.testing.assert_array_equal(edges, np.linspace(-1, 1.5, 11, dtype=np.float32))


# ---- transforms -----------------------------------------------------------------------------------------

def test_vmap_agrees_with_jax():
    X = F35
    S = np.sort(G35, axis=1)
    cases = [
        (lambda L: lambda a, v: L.searchsorted(a, v, side="right"), (S, X)),
        (lambda L: lambda x, xp, fp: L.interp(x, xp, fp), (X, S, X)),
        (lambda L: lambda p, x: L.polyval(p, x), (X, X)),
        (lambda L: lambda a, b: L.polymul(a, b), (X, G35[:, :2])),
        (lambda L: lambda i: L.bincount(i, length=6), (np.abs(I35),)),
        (lambda L: lambda a, b: L.cross(a[:3], b[2:]), (X, G35)),
        (lambda L: lambda a: L.diff(a, n=2, prepend=0.0), (X,)),
        (lambda L: lambda a: L.histogram(a, bins=3, range=(-1.0, 1.0)), (X,)),
        (lambda L: lambda y, x: L.trapezoid(y, x), (X, S)),
        (lambda L: lambda e, t: L.isin(e, t), (I35, I35[::-1])),
    ]
    for make, args in cases:
        with jax.enable_x64(netcl.config.enable_x64):
            want = jax.vmap(make(jjnp))(*[jjnp.asarray(a) for a in args])
        _same(netcl.vmap(make(jnp))(*[jnp.asarray(a) for a in args]), want)


GRADS = [   # (name, function, float64 arguments, derivative modes)
    ("diff", lambda a: jnp.diff(a, n=2, prepend=a[:1], append=2.0), (f64(7),), "fr"),
    ("diff axis 0", lambda a: jnp.diff(a, axis=0), (f64(3, 5),), "r"),
    ("ediff1d", lambda a, b: jnp.ediff1d(a, to_begin=b), (f64(7), f64(2, seed=2)), "r"),
    ("cross", lambda a, b: jnp.cross(a, b), (f64(3, 5)[:, :3], f64(3, seed=2)), "fr"),
    ("cross 2x3", lambda a, b: jnp.cross(a, b, axisa=0), (f64(2, 5), f64(5, 3, seed=2)), "r"),
    ("cross 2x2", lambda a, b: jnp.cross(a, b), (f64(2), f64(2, seed=2)), "r"),
    ("polyval", lambda p, x: jnp.polyval(p, x), (f64(4), f64(7, seed=2)), "fr"),
    ("polyadd", lambda a, b: jnp.polyadd(a, b), (f64(5), f64(2, seed=2)), "r"),
    ("polysub", lambda a, b: jnp.polysub(a, b), (f64(2), f64(5, seed=2)), "r"),
    ("polymul", lambda a, b: jnp.polymul(a, b), (f64(5), f64(3, seed=2)), "fr"),
    ("vander", lambda x: jnp.vander(x, 4), (f64(7),), "r"),
    ("trapezoid", lambda y: jnp.trapezoid(y, dx=0.3), (f64(3, 5),), "fr"),
    ("trapezoid x", lambda y, x: jnp.trapezoid(y, x), (f64(3, 5), f64(5, seed=2)), "r"),
    ("trapezoid dx", lambda y, d: jnp.trapezoid(y, dx=d, axis=0), (f64(3, 5), f64(2, 5, seed=2)),
     "r"),
    ("unwrap", lambda p: jnp.unwrap(p * 3.0), (f64(7),), "r"),
    ("nancumsum", lambda a: jnp.nancumsum(a, axis=1), (f64(3, 5),), "r"),
    ("nancumprod", lambda a: jnp.nancumprod(a), (f64(7),), "r"),
    ("select", lambda a, b: jnp.select([a > 0, b > 0], [a * b, jnp.sin(b)], a),
     (f64(7), f64(7, seed=2)), "r"),
    ("piecewise", lambda a: jnp.piecewise(a, [a < 0, a > 1], [jnp.sin, lambda v: v * v, 1.0]),
     (f64(7),), "r"),
    ("rot90", lambda m: jnp.rot90(m, 3), (f64(3, 5),), "r"),
    ("meshgrid", lambda a, b: jnp.meshgrid(a, b)[0] * jnp.meshgrid(a, b)[1],
     (f64(3), f64(5, seed=2)), "r"),
    ("bincount weights", lambda w: jnp.bincount(jnp.asarray(np.int32([0, 3, 3, 1, 6, 1, 3])), w,
                                                length=5), (f64(7),), "r"),
    ("histogram weights", lambda w: jnp.histogram(jnp.asarray(np.linspace(0, 1, 7)), bins=3,
                                                  weights=w)[0], (f64(7),), "r"),
]


@pytest.mark.parametrize("name,f,args,modes", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, f, args, modes):
    check_grads(f, args, order=1, modes=[{"f": "fwd", "r": "rev"}[m] for m in modes])


def test_interp_grads():
    xp = jnp.asarray(np.sort(np.random.default_rng(3).standard_normal(7)))
    fp = f64(7, seed=4)
    x = jnp.asarray(np.random.default_rng(5).uniform(-3, 3, 7))   # outside points too
    check_grads(lambda v: jnp.interp(v, xp, fp), (x,), order=1)
    check_grads(lambda v, p: jnp.interp(v, xp, p), (x, fp), order=1, modes=["rev"])
    check_grads(lambda v: jnp.interp(v, xp, fp, left="extrapolate", right="extrapolate"),
                (x,), order=2, modes=["rev"])
    check_grads(lambda v: jnp.interp(v, xp, fp, period=2.5), (x,), order=1, modes=["rev"])
    # the slope of each segment, as JAX's
    g = netcl.grad(lambda v: jnp.sum(jnp.interp(v, xp, fp)))(x)
    want = jax.grad(lambda v: jjnp.sum(jjnp.interp(v, np.asarray(xp), np.asarray(fp))))(
        np.asarray(x, np.float32))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4, atol=1e-4)


def test_jit_reuses_compilation_and_traced_bincount_needs_length():
    f = netcl.jit(lambda x: jnp.bincount(x))
    with pytest.raises(TypeError, match=r"bincount: .*length="):
        f(jnp.asarray(np.int32([1, 2])))
    with pytest.raises(TypeError, match=r"polymul: .*trim"):
        netcl.jit(lambda a: jnp.polymul(a, a, trim_leading_zeros=True))(jnp.ones(3))
    with pytest.raises(TypeError, match=r"histogram: .*bins"):
        netcl.jit(lambda a, b: jnp.histogram(a, bins=b))(jnp.ones(3), jnp.asarray(3))


# ---- bad inputs -----------------------------------------------------------------------------------------

def _bad_cases():
    f3, f23, i3 = jnp.asarray(F7[:3]), jnp.asarray(F35[:2, :3]), jnp.asarray(I7[:3])
    b3, f24 = jnp.asarray(B7[:3]), jnp.asarray(np.ones((2, 4), np.float32))
    c3, c23 = jnp.asarray(F7[:3] > 0), jnp.asarray(F35[:2, :3] > 0)
    f43, f23b = jnp.asarray(np.ones((4, 3), np.float32)), jnp.asarray(np.ones((2, 3), np.float32))
    return [
        (lambda: jnp.isclose(f3, f23[:, :2]), TypeError, r"isclose.*\(3,\).*\(2, 2\)"),
        (lambda: jnp.isclose(f3, f3, rtol=f3), ValueError, r"isclose: rtol .*shape \(3,\)"),
        (lambda: jnp.isclose(f3, f3, equal_nan="yes"), TypeError, r"isclose: equal_nan"),
        (lambda: jnp.allclose([1.0], f3), TypeError, r"allclose"),
        (lambda: jnp.array_equal(f3, None), TypeError, r"array_equal"),
        (lambda: jnp.diff(f3, n=-1), ValueError, r"diff: order n must be non-negative"),
        (lambda: jnp.diff(f3, n=1.5), TypeError, r"diff: n must be"),
        (lambda: jnp.diff(jnp.asarray(1.0)), ValueError, r"diff: .*0-d"),
        (lambda: jnp.diff(f23, axis=2), ValueError, r"diff.*axis"),
        (lambda: jnp.diff(f23, prepend=f3), ValueError, r"diff: prepend of shape \(3,\)"),
        (lambda: jnp.diff(f23, axis=0, append=f23[:, :2]), ValueError, r"diff: append"),
        (lambda: jnp.ediff1d(b3), TypeError, r"ediff1d: bool"),
        (lambda: jnp.meshgrid(f23, f3), ValueError, r"meshgrid: .*1-d.*\(2, 3\)"),
        (lambda: jnp.meshgrid(f3, indexing="xz"), ValueError, r"meshgrid: indexing"),
        (lambda: jnp.meshgrid(f3, copy=False), ValueError, r"meshgrid: .*copy"),
        (lambda: jnp.cross(f24, f23), ValueError, r"cross: .*2 or 3.*\(2, 4\)"),
        (lambda: jnp.cross(f43, f23b), TypeError, r"cross.*\(4,\)"),
        (lambda: jnp.cross(f3, f3, axisc=3), ValueError, r"cross.*axisc"),
        (lambda: jnp.cross(b3, b3), TypeError, r"cross: bool"),
        (lambda: jnp.cross(f3, 1.0), ValueError, r"cross: b .*0-d"),
        (lambda: jnp.nancumsum(f23, axis=2), ValueError, r"nancumsum.*axis"),
        (lambda: jnp.nancumprod(f3, dtype="foo"), TypeError, r"nancumprod"),
        (lambda: jnp.nancumsum(f3, out=f3), ValueError, r"nancumsum: the out argument"),
        (lambda: jnp.vander(f23), ValueError, r"vander: x must be 1-d, got shape \(2, 3\)"),
        (lambda: jnp.vander(f3, -1), ValueError, r"vander: N must be >= 0"),
        (lambda: jnp.vander(b3), TypeError, r"vander: bool"),
        (lambda: jnp.trapezoid(f23, x=f3[:2]), ValueError, r"trapezoid: x of shape \(2,\)"),
        (lambda: jnp.trapezoid(f23, dx=f24), ValueError, r"trapezoid: the spac"),
        (lambda: jnp.trapezoid(f23, axis=3), ValueError, r"trapezoid.*axis"),
        (lambda: jnp.trapezoid(jnp.asarray(1.0)), ValueError, r"trapezoid: y .*0-d"),
        (lambda: jnp.unwrap(f3, period=f3), ValueError, r"unwrap: period .*shape \(3,\)"),
        (lambda: jnp.unwrap(f3, discont="a"), TypeError, r"unwrap: discont"),
        (lambda: jnp.rot90(f3), ValueError, r"rot90: .*two dimensions, got shape \(3,\)"),
        (lambda: jnp.rot90(f23, axes=(1, 1)), ValueError, r"rot90: the two axes"),
        (lambda: jnp.rot90(f23, axes=(0, 2)), ValueError, r"rot90.*axes"),
        (lambda: jnp.rot90(f23, k=1.5), TypeError, r"rot90: k"),
        (lambda: jnp.select([c3], [f3, f3]), ValueError, r"select: .*same length.*1 and 2"),
        (lambda: jnp.select([], []), ValueError, r"select: condlist must be non-empty"),
        (lambda: jnp.select([c3], [f23[:, :2]]), TypeError, r"select.*\(3,\).*\(2, 2\)"),
        (lambda: jnp.select(c3, 1.0), TypeError, r"select: choicelist"),
        (lambda: jnp.piecewise(f3, [c3], [1, 2, 3]), ValueError, r"piecewise: with 1 cond"),
        (lambda: jnp.piecewise(f3, [c23], [1]), ValueError, r"piecewise: condition 0 of sh"),
        (lambda: jnp.piecewise(f3, [c3], ["a"]), TypeError, r"piecewise: funclist entries"),
        (lambda: jnp.polyval(jnp.asarray(1.0), f3), ValueError, r"polyval: p .*0-d"),
        (lambda: jnp.polyval(f23, f3[:2]), TypeError, r"polyval.*\(3,\).*\(2,\)"),
        (lambda: jnp.polyadd(f23, f3), ValueError, r"polyadd: a1 must be a 1-d.*\(2, 3\)"),
        (lambda: jnp.polysub(b3, b3), TypeError, r"polysub: bool"),
        (lambda: jnp.polymul(f3, [1.0]), TypeError, r"polymul"),
        (lambda: jnp.searchsorted(f23, f3), ValueError, r"searchsorted: a must be 1-d.*\(2, 3\)"),
        (lambda: jnp.searchsorted(f3, f3, side="middle"), ValueError, r"searchsorted: side"),
        (lambda: jnp.searchsorted(f3, f3, sorter=f3), TypeError, r"searchsorted: sorter"),
        (lambda: jnp.searchsorted(f3, f3, sorter=i3[:2]), ValueError, r"searchsorted: sorter "),
        (lambda: jnp.searchsorted(f3, f3, method="fast"), ValueError, r"searchsorted: method"),
        (lambda: jnp.digitize(f3, f23), ValueError, r"digitize: bins must be 1-d"),
        (lambda: jnp.digitize(f3, f3, right="no"), TypeError, r"digitize: right"),
        (lambda: jnp.interp(f3, f3, f3[:2]), ValueError, r"interp: xp and fp.*\(3,\).*\(2,\)"),
        (lambda: jnp.interp(f3, f3[:0], f3[:0]), ValueError, r"interp: xp and fp must not be"),
        (lambda: jnp.interp(f3, f3, f3, left="extend"), ValueError, r"interp: .*'extrapolate'"),
        (lambda: jnp.interp(f3, f3, f3, period=f3), ValueError, r"interp: period"),
        (lambda: jnp.isin(f3, f3, method="hash"), ValueError, r"isin: method"),
        (lambda: jnp.in1d(f3, f3, invert=None), TypeError, r"in1d: invert"),
        (lambda: jnp.bincount(f3), TypeError, r"bincount: x must be an integer array.*float32"),
        (lambda: jnp.bincount(jnp.asarray(I35)), ValueError, r"bincount: x must be 1-d"),
        (lambda: jnp.bincount(i3, minlength=-1), ValueError, r"bincount: minlength must be >= 0"),
        (lambda: jnp.bincount(i3, length=2.5), TypeError, r"bincount: length"),
        (lambda: jnp.bincount(i3, f3[:2]), ValueError, r"bincount: weights of shape \(2,\)"),
        (lambda: jnp.histogram(f3, bins="auto"), NotImplementedError, r"histogram: string"),
        (lambda: jnp.histogram(f3, bins=0), ValueError, r"histogram: bins must be >= 1"),
        (lambda: jnp.histogram(f3, bins=[1, 2]), TypeError, r"histogram: bins must be"),
        (lambda: jnp.histogram(f3, bins=f23), ValueError, r"histogram: bins .*\(2, 3\)"),
        (lambda: jnp.histogram(f3, range=(0, 1, 2)), ValueError, r"histogram: range"),
        (lambda: jnp.histogram(f3, range=(0, np.inf)), ValueError, r"histogram: range must be "),
        (lambda: jnp.histogram(f3, weights=f3[:2]), ValueError, r"histogram: weights of shape"),
        (lambda: jnp.histogram(f3[:0]), ValueError, r"histogram: an empty array needs"),
        (lambda: jnp.histogram_bin_edges(f3, bins=2.5), TypeError, r"histogram_bin_edges: bins"),
    ]


def test_bad_inputs_raise_typed_errors_before_any_kernel(no_kernels):
    for fn, exc, pattern in _bad_cases():
        netcl.default_device().synchronize()
        no_kernels[0] = 0
        with pytest.raises(exc, match=pattern) as info:
            fn()
        assert no_kernels[0] == 0, f"{no_kernels[0]} kernels ran before: {info.value}"


def test_the_kernel_counter_counts():
    """The bad-input test can fail: a good call launches kernels that the fixture sees."""
    x = jnp.asarray(F7)
    netcl.default_device().synchronize()
    saved = cl.enqueue_nd_range_kernel
    seen = []
    cl.enqueue_nd_range_kernel = lambda *a, **k: (seen.append(1), saved(*a, **k))[1]
    netcl.test_util.forget_launchers()
    try:
        np.asarray(jnp.diff(x * 3.0))
    finally:
        cl.enqueue_nd_range_kernel = saved
        netcl.test_util.forget_launchers()
    if not netcl.default_device().is_numpy:
        assert seen
