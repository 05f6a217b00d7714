"""The jax.numpy names added in netcl/numpy/aliases.py, extra_ops.py and extra_numeric.py,
checked against JAX on small inputs (values, dtypes, shapes), a few under jit, float64
gradients for differentiable ones, and bad inputs (typed errors naming the function)."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.test_util import check_grads

j = pytest.importorskip("jax.numpy")
jax = pytest.importorskip("jax")
# Functions whose results are of the default float (float64 with x64, the suite's setting):
# JAX computes them under netcl's x64 setting.
DEFAULT_FLOAT = {"logspace", "geomspace", "kaiser", "bartlett", "blackman", "hamming",
                 "hanning"}


def _jax_x64():
    """JAX's x64 set as netcl's, for a block whose results are of the default float or
    int (indices: int64 with x64)."""
    return jax.enable_x64(netcl.config.enable_x64)

F = np.array([[0.5, -1.0, 2.0, 3.5], [4.0, np.nan, -6.0, 7.0], [8.0, 9.0, 0.0, -2.5]],
             np.float32)
G = np.arange(12, dtype=np.float32).reshape(3, 4)
X = np.array([-2.5, -1.0, 0.0, 0.3, 1.0, 7.0, np.nan, np.inf, -np.inf], np.float32)
Y = X[::-1].copy()
I5 = np.array([12, -18, 0, 7, 35], np.int32)
J5 = np.array([8, 6, 0, 21, -10], np.int32)
A5 = np.array([1.0, 2.0, 3.0, 0.0, 5.0], np.float32)
V3 = np.array([1.0, -1.0, 2.0], np.float32)


def _to_netcl(v):
    if isinstance(v, np.ndarray):
        return jnp.asarray(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_to_netcl(x) for x in v)
    return v


def _same(got, want, tol=1e-5):
    gs = got if isinstance(got, (tuple, list)) else (got,)
    ws = want if isinstance(want, (tuple, list)) else (want,)
    assert len(gs) == len(ws)
    for g, w in zip(gs, ws):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (g.shape, w.shape)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol,
                                   atol=tol, equal_nan=True)


CASES = [
    ("acos", (np.array([1.0, 0.5, -1.0], np.float32),), {}),
    ("acosh", (np.array([1.0, 2.0, 3.0], np.float32),), {}),
    ("asin", (np.array([1.0, 0.5, -1.0], np.float32),), {}),
    ("asinh", (X,), {}),
    ("atan", (X,), {}),
    ("atanh", (np.array([0.0, 0.5, -0.25], np.float32),), {}),
    ("atan2", (X, Y), {}),
    ("fabs", (I5,), {}),
    ("fabs", (X,), {}),
    ("astype", (I5, np.float32), {}),
    ("matrix_transpose", (np.ones((2, 3, 4), np.float32),), {}),
    ("permute_dims", (np.ones((2, 3, 4), np.float32), (2, 0, 1)), {}),
    ("bitwise_invert", (I5,), {}),
    ("left_shift", (I5, 2), {}),
    ("bitwise_left_shift", (I5, np.array([1, 2, 3, 0, 4], np.int32)), {}),
    ("right_shift", (I5, 2), {}),
    ("bitwise_right_shift", (I5.view(np.uint32), np.uint32(3)), {}),
    ("isneginf", (X,), {}),
    ("isposinf", (X,), {}),
    ("isposinf", (I5,), {}),
    ("isreal", (X,), {}),
    ("iscomplex", (X,), {}),
    ("real", (X,), {}),
    ("imag", (I5,), {}),
    ("conj", (X,), {}),
    ("conjugate", (I5,), {}),
    ("nan_to_num", (X,), {}),
    ("nan_to_num", (X,), dict(nan=1.5, posinf=9.0, neginf=-9.0)),
    ("nanvar", (F,), {}),
    ("nanvar", (F,), dict(axis=1, ddof=1, keepdims=True)),
    ("nanstd", (F,), dict(axis=0)),
    ("logspace", (0.0, 2.0, 5), {}),
    ("logspace", (1.0, 3.0, 4), dict(base=2.0, endpoint=False)),
    ("geomspace", (1.0, 1000.0, 4), {}),
    ("geomspace", (-1.0, -16.0, 5), dict(endpoint=False)),
    ("fmax", (X, Y), {}),
    ("fmin", (X, Y), {}),
    ("gcd", (I5, J5), {}),
    ("lcm", (I5, J5), {}),
    ("ldexp", (X, np.array([1, 2, -3, 4, 5, -1, 0, 1, 2], np.int32)), {}),
    ("frexp", (X,), {}),
    ("modf", (X,), {}),
    ("divmod", (I5, np.array([3, -4, 5, 2, 3], np.int32)), {}),
    ("spacing", (np.array([1.0, -2.0, 1e-3, 100.0], np.float32),), {}),
    ("logaddexp2", (X, Y), {}),
    # part 2
    ("indices", ((2, 3),), {}),
    ("indices", ((2, 3),), dict(sparse=True)),
    ("ravel_multi_index", ((np.array([1, 0], np.int32), np.array([2, 1], np.int32)), (2, 3)), {}),
    ("ravel_multi_index", ((np.array([1, 5], np.int32), np.array([2, -1], np.int32)), (2, 3)),
     dict(mode="wrap")),
    ("ravel_multi_index", ((np.array([1, 5], np.int32), np.array([2, -1], np.int32)), (2, 3)),
     dict(mode="clip", order="F")),
    ("unravel_index", (np.array([5, 1, -1, 9, -9], np.int32), (2, 3)), {}),
    # part 3
    ("insert", (I5, 1, 9), {}),
    ("insert", (G, 1, 5.0), dict(axis=1)),
    ("insert", (G, np.array([0, 2, 2]), np.array([7.0, 8.0, 9.0], np.float32)), dict(axis=1)),
    ("insert", (G, slice(0, 2), 1.0), dict(axis=0)),
    ("insert", (G, 3, np.ones((2, 3), np.float32)), dict(axis=1)),
    ("delete", (I5, np.array([0, 2])), {}),
    ("delete", (G, 1), dict(axis=1)),
    ("delete", (G, slice(0, 2)), dict(axis=0)),
    ("resize", (I5, (2, 4)), {}),
    ("rollaxis", (np.ones((2, 3, 4), np.float32), 2), {}),
    ("rollaxis", (np.ones((2, 3, 4), np.float32), 0, 2), {}),
    ("unstack", (G,), dict(axis=1)),
    ("vecdot", (G, np.arange(4.0, dtype=np.float32)), {}),
    ("matvec", (G, np.arange(4.0, dtype=np.float32)), {}),
    ("vecmat", (np.arange(3.0, dtype=np.float32), G), {}),
    ("block", ([[np.eye(2, dtype=np.float32), np.zeros((2, 1), np.float32)],
                [np.ones((1, 3), np.float32)]],), {}),
    ("choose", (np.array([0, 1, 2, 3], np.int32), [V3[:1], np.ones(4, np.float32), A5[:4]]),
     dict(mode="wrap")),
    ("choose", (np.array([0, 1, 2, -3], np.int32), [V3[:1], np.ones(4, np.float32), A5[:4]]),
     dict(mode="clip")),
    ("compress", (np.array([True, False, True]), G), dict(axis=0)),
    ("compress", (np.array([1, 0, 1]), G), dict(axis=0, size=3, fill_value=-1)),
    ("extract", (G > 4, G), {}),
    ("extract", (G > 4, G), dict(size=10)),
    ("place", (G, G > 5, np.array([1.0, 2.0], np.float32)), dict(inplace=False)),
    ("put", (G, np.array([0, 5, 13], np.int32), np.array([9.0, 8.0], np.float32)),
     dict(inplace=False)),
    ("put", (G, np.array([0, 5, 13], np.int32), np.array([9.0, 8.0], np.float32)),
     dict(mode="wrap", inplace=False)),
    ("put_along_axis", (G, np.array([[1], [0], [3]], np.int32), 99.0, 1),
     dict(inplace=False)),
    ("fill_diagonal", (G, np.array([5.0, 6.0], np.float32)), dict(inplace=False)),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0, 3, 0], np.int32),), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0], np.int32), "b"), {}),
    ("lexsort", ((np.array([1, 0, 1, 0], np.int32), np.array([0, 0, 1, 0], np.int32)),), {}),
    ("lexsort", (G.T % 3,), dict(axis=0)),
    ("setdiff1d", (np.array([5, 1, 2, 3, 4, 1], np.int32), np.array([2, 4], np.int32)), {}),
    ("setdiff1d", (np.array([5, 1, 2, 3, 4, 1], np.int32), np.array([2, 4], np.int32)),
     dict(size=6, fill_value=0)),
    ("union1d", (np.array([3, 1], np.int32), np.array([2, 1], np.int32)), {}),
    ("intersect1d", (np.array([1, 2, 3, 3], np.int32), np.array([3, 1, 5], np.int32)), {}),
    ("intersect1d", (np.array([1, 2, 3, 3], np.int32), np.array([3, 1, 5], np.int32)),
     dict(return_indices=True)),
    ("intersect1d", (np.array([1, 2, 3, 3], np.int32), np.array([3, 1, 5], np.int32)),
     dict(size=4, fill_value=-1)),
    ("unique_values", (np.array([[3, 1], [3, 2]], np.int32),), {}),
    ("unique_counts", (np.array([[3, 1], [3, 2]], np.int32),), {}),
    ("unique_inverse", (np.array([[3, 1], [3, 2]], np.int32),), {}),
    ("unique_all", (np.array([[3, 1], [3, 2]], np.int32),), {}),
    ("unique_counts", (np.array([3, 1, 3], np.int32),), dict(size=4, fill_value=0)),
    ("polyder", (A5[:4],), {}),
    ("polyder", (A5[:4], 2), {}),
    ("polyder", (A5[:4], 5), {}),
    ("polyint", (A5[:4],), {}),
    ("polyint", (A5[:4], 2, np.array([1.0, 2.0], np.float32)), {}),
    ("polyint", (A5[:4], 3, 3.0), {}),
    ("polyfit", (np.linspace(0, 1, 7).astype(np.float32),
                 (2 * np.linspace(0, 1, 7) ** 2 + 1).astype(np.float32), 2), {}),
    ("cov", (G + F * 0 + np.eye(3, 4, dtype=np.float32),), {}),
    ("cov", (G,), dict(rowvar=False, bias=True)),
    ("cov", (G[0], G[1] ** 2), dict(ddof=2)),
    ("corrcoef", (G + np.eye(3, 4, dtype=np.float32) * 3,), {}),
    ("corrcoef", (G[0], G[1] ** 2), {}),
    ("convolve", (np.array([1, 2, 3], np.int32), np.array([1, 1], np.int32)), {}),
    ("gradient", (A5,), {}),
    ("gradient", (G * G,), {}),
    ("gradient", (G * G, 2.0), dict(axis=1)),
    ("gradient", (G * G, 2.0, 0.5), {}),
    ("i0", (np.array([0.0, 1.0, -3.0, 10.0, 15.0, 16.0, 30.0, 80.0], np.float32),), {}),
    ("kaiser", (6, 5.0), {}),
    ("kaiser", (1, 5.0), {}),
]
CASES += [(f, (a, v, m), {}) for f in ("convolve", "correlate")
          for m in ("full", "same", "valid") for a, v in ((A5, V3), (V3, A5), (A5, V3[:2]))]
CASES += [(w, (m,), {}) for w in ("bartlett", "blackman", "hamming", "hanning")
          for m in (0, 1, 5)]


@pytest.mark.parametrize("name,args,kwargs", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_agrees_with_jax(name, args, kwargs):
    with np.errstate(all="ignore"), _jax_x64():
        want = getattr(j, name)(*args, **kwargs)
    got = getattr(jnp, name)(*_to_netcl(args), **kwargs)
    tol = 2e-4 if name in ("i0", "kaiser", "polyfit", "geomspace", "logspace") else 1e-5
    _same(got, want, tol)


def test_grids_and_concatenation():
    with _jax_x64():                        # (a linspace; aranges of the default int)
        _same(jnp.mgrid[0:2, 0:3], j.mgrid[0:2, 0:3])
        _same(jnp.mgrid[0:1:5j], j.mgrid[0:1:5j])
        _same(jnp.ogrid[0:2, 0:3], j.ogrid[0:2, 0:3])
        _same(jnp.r_[1:3, jnp.asarray([7, 8]), 0], j.r_[1:3, j.asarray([7, 8]), 0])
        _same(jnp.c_[jnp.asarray([1, 2]), jnp.asarray([3, 4])], j.c_[j.asarray([1, 2]),
                                                                    j.asarray([3, 4])])
        _same(jnp.ix_(jnp.asarray(I5[:3]), jnp.asarray(J5[:2])), j.ix_(I5[:3], J5[:2]))
        _same(jnp.mask_indices(3, jnp.triu), j.mask_indices(3, j.triu))
    assert jnp.s_[1:2] == np.s_[1:2] and jnp.index_exp[1] == (1,)


def test_function_application():
    g = jnp.asarray(G)
    _same(jnp.apply_along_axis(jnp.sum, 1, g), j.apply_along_axis(j.sum, 1, G))
    _same(jnp.apply_along_axis(lambda x: x * x.sum(), 0, g),
          j.apply_along_axis(lambda x: x * x.sum(), 0, G))
    _same(jnp.apply_over_axes(jnp.sum, g, [0, 1]), j.apply_over_axes(j.sum, G, [0, 1]))

    def vf(m):
        return lambda a, b: m.where(a > b, a - b, a + b)
    _same(jnp.vectorize(vf(jnp))(g, 2.0), j.vectorize(vf(j))(G, 2.0))
    with _jax_x64():
        _same(jnp.fromfunction(lambda i, k: i * 10 + k, (2, 3)),
              j.fromfunction(lambda i, k: i * 10 + k, (2, 3)))


def test_partition_property_and_scalars():
    a = jnp.asarray(np.array([3, 1, 2, 5, 0], np.int32))
    p = np.asarray(jnp.partition(a, 2))
    assert p[2] == 2 and (p[:2] <= 2).all() and (p[3:] >= 2).all()
    ip = np.asarray(jnp.argpartition(a, 2))
    assert np.asarray(a)[ip[2]] == 2
    assert jnp.isscalar(1.0) and jnp.isscalar(jnp.asarray(1.0)) and not jnp.isscalar(a)
    assert jnp.isrealobj(a) and not jnp.iscomplexobj(a)
    assert jnp.promote_types(jnp.int32, jnp.float16) == np.float16
    assert jnp.can_cast(jnp.int32, jnp.float64) and not jnp.can_cast(jnp.float32, jnp.int32)
    assert jnp.isdtype(jnp.float32, "real floating") and not jnp.isdtype(jnp.int32, "bool")
    assert jnp.isdtype(jnp.uint32, ("bool", "integral"))
    assert jnp.iinfo(jnp.int32).max == 2**31 - 1 and jnp.finfo(jnp.float32).eps == \
        np.finfo(np.float32).eps
    assert jnp.int_ == jnp.int64 and jnp.uint == jnp.uint64 and jnp.single == jnp.float32 \
        and jnp.double == jnp.float64     # (as JAX's: int_ is int64, int32 without x64)
    assert jnp.int_(3).dtype == netcl.core.dtypes.default_int_dtype()


def test_under_jit():
    x, y = jnp.asarray(X), jnp.asarray(Y)
    _same(netcl.jit(jnp.fmax)(x, y), j.fmax(X, Y))
    _same(netcl.jit(jnp.logaddexp2)(x, y), j.logaddexp2(X, Y))
    _same(netcl.jit(lambda a, b: jnp.gcd(a, b))(jnp.asarray(I5), jnp.asarray(J5)),
          j.gcd(I5, J5))
    g = jnp.asarray(G)
    _same(netcl.jit(lambda a: jnp.place(a, a > 5, jnp.asarray([1.0, 2.0]), inplace=False))(g),
          j.place(G, G > 5, np.array([1.0, 2.0], np.float32), inplace=False))
    _same(netcl.jit(lambda a: jnp.extract(a > 4, a, size=10))(g), j.extract(G > 4, G, size=10))
    _same(netcl.jit(lambda a: jnp.convolve(a, jnp.asarray(V3), "same"))(jnp.asarray(A5)),
          j.convolve(A5, V3, "same"))
    with _jax_x64():                        # (counts: the default int)
        _same(netcl.jit(lambda a: jnp.unique_counts(a, size=4, fill_value=0))(
            jnp.asarray(np.array([3, 1, 3], np.int32))),
            j.unique_counts(np.array([3, 1, 3], np.int32), size=4, fill_value=0))
    with pytest.raises(TypeError, match="compress"):
        netcl.jit(lambda c, a: jnp.compress(c, a))(jnp.asarray([True, False, True]), g)


def _f64(*shape, seed=0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=shape))


@pytest.mark.parametrize("name,fn,shapes", [
    ("logaddexp2", lambda a, b: jnp.logaddexp2(a, b), [(5,), (5,)]),
    ("nanvar", lambda a: jnp.nanvar(a, axis=0, ddof=1), [(3, 4)]),
    ("cov", lambda a: jnp.cov(a), [(3, 4)]),
    ("convolve", lambda a, v: jnp.convolve(a, v, "same"), [(5,), (3,)]),
    ("vecdot", lambda a, b: jnp.vecdot(a, b), [(3, 4), (4,)]),
    ("insert", lambda a, v: jnp.insert(a, 1, v, axis=1), [(3, 4), (3,)]),
    ("i0", lambda a: jnp.i0(a), [(5,)]),
    ("gradient", lambda a: jnp.gradient(a, 0.5), [(5,)]),
])
def test_grads(name, fn, shapes):
    args = [_f64(*s, seed=k) for k, s in enumerate(shapes)]
    check_grads(fn, args, order=1, modes=("rev",))


BAD = [
    (lambda: jnp.left_shift(jnp.asarray(X), 1), TypeError, "left_shift"),
    (lambda: jnp.matrix_transpose(jnp.asarray(A5)), ValueError, "matrix_transpose"),
    (lambda: jnp.astype(jnp.asarray(A5), "foo"), TypeError, "astype"),
    (lambda: jnp.gcd(jnp.asarray(A5), 2), TypeError, "gcd"),
    (lambda: jnp.nanvar(jnp.asarray(F), axis=5), ValueError, "nanvar"),
    (lambda: jnp.logspace(0.0, 1.0, "a"), TypeError, "logspace"),
    (lambda: jnp.geomspace(0.0, 1.0, 3), ValueError, "geomspace"),
    (lambda: jnp.isdtype(jnp.float32, "floaty"), ValueError, "isdtype"),
    (lambda: jnp.ldexp(jnp.asarray(A5), 1.5), TypeError, "ldexp"),
    (lambda: jnp.ix_(jnp.asarray(G)), ValueError, "ix_"),
    (lambda: jnp.ravel_multi_index((jnp.asarray(I5),), (3,)), ValueError, "ravel_multi_index"),
    (lambda: jnp.unravel_index(jnp.asarray(A5), (2, 3)), TypeError, "unravel_index"),
    (lambda: jnp.insert(jnp.asarray(A5), 9, 1.0), IndexError, "insert"),
    (lambda: jnp.insert(jnp.asarray(A5), 1.5, 1.0), TypeError, "insert"),
    (lambda: jnp.delete(jnp.asarray(G), 0, axis=3), ValueError, "delete"),
    (lambda: jnp.resize(jnp.asarray(A5), (-1,)), ValueError, "resize"),
    (lambda: jnp.vecdot(jnp.asarray(G), jnp.asarray(A5)), ValueError, "vecdot"),
    (lambda: jnp.matvec(jnp.asarray(A5), jnp.asarray(A5)), ValueError, "matvec"),
    (lambda: jnp.block([]), ValueError, "block"),
    (lambda: jnp.block([[jnp.asarray(A5)], jnp.asarray(A5)]), ValueError, "block"),
    (lambda: jnp.choose(jnp.asarray(I5), [jnp.asarray(A5)]), NotImplementedError, "choose"),
    (lambda: jnp.compress(jnp.asarray(G > 3), jnp.asarray(G)), ValueError, "compress"),
    (lambda: jnp.place(jnp.asarray(G), jnp.asarray(G > 3), 1.0), ValueError, "place"),
    (lambda: jnp.put(jnp.asarray(G), jnp.asarray(I5), 1.0, inplace=False, mode="bogus"),
     ValueError, "put"),
    (lambda: jnp.fill_diagonal(jnp.asarray(A5), 1.0, inplace=False), ValueError,
     "fill_diagonal"),
    (lambda: jnp.trim_zeros(jnp.asarray(G)), ValueError, "trim_zeros"),
    (lambda: jnp.apply_along_axis(3, 0, jnp.asarray(G)), TypeError, "apply_along_axis"),
    (lambda: jnp.vectorize(jnp.sin, signature="()->()"), NotImplementedError, "vectorize"),
    (lambda: jnp.lexsort([]), TypeError, "lexsort"),
    (lambda: jnp.partition(jnp.asarray(A5), 7), ValueError, "partition"),
    (lambda: jnp.polyder(jnp.asarray(A5), -1), ValueError, "polyder"),
    (lambda: jnp.polyint(jnp.asarray(A5), 2, k=jnp.asarray(V3)), ValueError, "polyint"),
    (lambda: jnp.polyfit(jnp.asarray(A5), jnp.asarray(V3), 1), TypeError, "polyfit"),
    (lambda: jnp.cov(jnp.ones((2, 2, 2))), ValueError, "cov"),
    (lambda: jnp.convolve(jnp.asarray(G), jnp.asarray(V3)), ValueError, "convolve"),
    (lambda: jnp.correlate(jnp.asarray(A5), jnp.asarray(V3), "bogus"), ValueError,
     "correlate"),
    (lambda: jnp.gradient(jnp.asarray(A5[:1])), ValueError, "gradient"),
    (lambda: jnp.hanning("a"), TypeError, "hanning"),
    (lambda: jnp.kaiser(5, "a"), TypeError, "kaiser"),
    (lambda: jnp.mgrid[0:3, 1], TypeError, "mgrid"),
]


@pytest.mark.parametrize("fn,exc,name", BAD, ids=[b[2] + f"-{i}" for i, b in enumerate(BAD)])
def test_bad_inputs(fn, exc, name):
    with pytest.raises(exc, match=rf"\b{name}\b"):
        fn()
