"""jax.numpy's remaining real-dtype surface (netcl/numpy/surface_extras*.py): printing and
scalar-type helpers, host input/output, nextafter, bitwise_count, histogram2d/histogramdd,
poly, polydiv, setxor1d and einsum_path, against JAX on CPU (skipped without it) and NumPy.
The suite runs with x64 on (conftest.py); the last test checks host input with it off."""
import io

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp

jax = pytest.importorskip("jax")
jjnp = jax.numpy

RNG = np.random.RandomState(0)
XS, YS = RNG.randn(2, 40).astype(np.float32)
XY = np.stack([XS, YS], 1)


def same(got, want, exact=True, tol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---- NumPy-level helpers -----------------------------------------------------------------------

def test_scalar_type_hierarchy_as_jax():
    kinds = ["generic", "number", "inexact", "floating", "integer", "signedinteger",
             "unsignedinteger", "character", "flexible", "object_"]
    types = ["bool_", "int32", "uint32", "float16", "bfloat16", "float32", "float64"]
    for t in types:
        for k in kinds:
            ours = jnp.issubdtype(getattr(jnp, t), getattr(jnp, k))
            assert ours == jjnp.issubdtype(getattr(jjnp, t), getattr(jjnp, k)), (t, k)
        assert jnp.issubdtype(jnp.asarray([1], getattr(jnp, t)).dtype, jnp.generic)
    for k in kinds:
        assert getattr(jnp, k) is getattr(jjnp, k)        # NumPy's own, as JAX re-exports
    assert jnp.euler_gamma == jjnp.euler_gamma


def test_printing_helpers():
    x = jnp.arange(3.0, dtype=jnp.float32) / 3
    assert jnp.array_str(x) == jjnp.array_str(jjnp.arange(3.0, dtype=jjnp.float32) / 3)
    assert jnp.array_repr(x).startswith("Array([0.") and "dtype=float32" in jnp.array_repr(x)
    old = jnp.get_printoptions()
    with jnp.printoptions(precision=2) as opts:
        assert opts["precision"] == 2 == jnp.get_printoptions()["precision"]
        assert str(x) == "[0.   0.33 0.67]"
        assert repr(x) == "Array([0.  , 0.33, 0.67], dtype=float32)"
    assert jnp.get_printoptions() == old
    try:
        jnp.set_printoptions(precision=3)
        assert np.get_printoptions()["precision"] == 3
    finally:
        np.set_printoptions(**old)
    with pytest.raises(ValueError, match="printoptions"):
        with jnp.printoptions(floatmode="bogus"):
            pass
    for ours, theirs in ((jnp.arange(2), jjnp.arange(2)), (jnp.asarray(1.0), jjnp.asarray(1.0)),
                         ([1], [1]), (3, 3), ("ab", "ab")):
        assert jnp.iterable(ours) == jjnp.iterable(theirs)
    assert jnp.iterable(jnp.arange(2)) and not jnp.iterable(jnp.asarray(1.0))


# ---- host input and output ---------------------------------------------------------------------

def test_frombuffer_fromstring_as_jax():
    raw = np.arange(6, dtype=np.int32).tobytes()
    for kw in ({"dtype": np.int32}, {"dtype": np.int32, "count": 2, "offset": 4},
               {"dtype": np.float32}, {"dtype": np.uint8, "count": 5}, {"dtype": np.int16}):
        ours, theirs = jnp.frombuffer(raw, **kw), jjnp.frombuffer(raw, **kw)
        same(ours, theirs)
        assert ours.dtype == (np.uint32 if theirs.dtype == np.uint8 else
                              np.int32 if theirs.dtype == np.int16 else theirs.dtype)
    import array
    same(jnp.frombuffer(array.array("i", [0, 1, 2]), dtype=jnp.int32), [0, 1, 2])
    f64 = np.array([0.5, 1.5]).tobytes()          # default float64: kept (x64 is on here)
    assert jnp.frombuffer(f64).dtype == np.float64
    same(jnp.frombuffer(f64), [0.5, 1.5])
    same(jnp.frombuffer(np.asarray([1.0, 2.0], jnp.bfloat16).tobytes(), dtype=jnp.bfloat16),
         jjnp.frombuffer(np.asarray([1.0, 2.0], jjnp.bfloat16).tobytes(), dtype=jjnp.bfloat16))
    for s, kw in (("1 2 3", {"dtype": int, "sep": " "}),
                  ("0.1, 0.2, 0.3", {"dtype": np.float32, "count": 2, "sep": ","})):
        with jax.enable_x64(netcl.config.enable_x64):   # (dtype=int: the default int)
            ours, theirs = jnp.fromstring(s, **kw), jjnp.fromstring(s, **kw)
        same(ours, theirs)
        assert ours.dtype == theirs.dtype
    with pytest.raises(TypeError, match="fromstring: sep= is required"):
        jnp.fromstring("1 2")
    with pytest.raises(TypeError, match="frombuffer: buffer must be a bytes-like"):
        jnp.frombuffer(jnp.arange(3))
    with pytest.raises(TypeError, match="frombuffer: dtype=complex256 is not supported"):
        jnp.frombuffer(raw, dtype=np.clongdouble)
    with pytest.raises(ValueError, match="frombuffer"):
        jnp.frombuffer(b"\x00\x00\x00", dtype=np.int32)


def test_fromiter_fromfile_from_dlpack(tmp_path):
    same(jnp.fromiter((i * i for i in range(4)), dtype=jnp.int32), [0, 1, 4, 9])
    gen = (float(i) for i in range(10**9))                    # count stops an endless one
    x = jnp.fromiter(gen, np.float32, count=3)
    same(x, [0.0, 1.0, 2.0])
    assert x.dtype == np.float32 and next(gen) == 3.0
    same(jnp.fromiter([jnp.asarray(1.5), np.float32(2.5), 3], jnp.float32), [1.5, 2.5, 3.0])
    with pytest.raises(TypeError, match="fromiter: dtype is required"):
        jnp.fromiter([1, 2])
    with pytest.raises(TypeError, match="fromiter: item 1 must be a number"):
        jnp.fromiter([1, "a"], jnp.float32)
    with pytest.raises(ValueError, match="fromiter: the iterator gave 2 items"):
        jnp.fromiter([1, 2], jnp.int32, count=3)
    with pytest.raises(TypeError, match="fromiter: iter must be an iterable"):
        jnp.fromiter(3, jnp.int32)
    path = str(tmp_path / "x.bin")
    np.arange(5, dtype=np.int32).tofile(path)
    same(jnp.fromfile(path, jnp.int32), np.arange(5))
    same(jnp.fromfile(path, jnp.int32, count=2, offset=4), [1, 2])
    (tmp_path / "x.txt").write_text("1.5 2.5 3.5")
    same(jnp.fromfile(str(tmp_path / "x.txt"), np.float32, sep=" "), [1.5, 2.5, 3.5])
    with pytest.raises(FileNotFoundError):
        jnp.fromfile(str(tmp_path / "missing.bin"), jnp.int32)
    host = np.arange(3.0, dtype=np.float32)
    ours, theirs = jnp.from_dlpack(host), jjnp.from_dlpack(host)
    same(ours, theirs)
    assert ours.dtype == theirs.dtype
    same(jnp.from_dlpack(jjnp.arange(4)), np.arange(4))             # a JAX CPU array
    y = jnp.arange(3.0)
    assert jnp.from_dlpack(y) is y and jnp.from_dlpack(y, copy=True) is not y
    with pytest.raises(TypeError, match="from_dlpack: x must implement the DLPack"):
        jnp.from_dlpack([1, 2])
    with pytest.raises(ValueError, match="from_dlpack: copy=False"):
        jnp.from_dlpack(host, copy=False)


def test_save_load_round_trip_and_jax_reads_them(tmp_path):
    x = jnp.asarray([[1.0, 2.0], [3.0, 4.0]], jnp.float32)
    b = jnp.asarray([2, 4, 6], dtype=jnp.bfloat16)
    jnp.save(str(tmp_path / "x.npy"), x)
    got = jnp.load(str(tmp_path / "x.npy"))
    assert isinstance(got, netcl.Array) and got.dtype == np.float32
    same(got, x)
    f = io.BytesIO()
    jnp.save(f, b)
    f.seek(0)
    got = jnp.load(f)
    assert got.dtype == jnp.bfloat16 and isinstance(got, netcl.Array)
    f.seek(0)
    theirs = jjnp.load(f)
    assert theirs.dtype == jjnp.bfloat16
    same(got.astype(jnp.float32), theirs.astype(jjnp.float32))
    jnp.savez(str(tmp_path / "xs.npz"), x, b=jnp.arange(3))
    with jnp.load(str(tmp_path / "xs.npz")) as z:      # .npz: NumPy arrays, as in JAX
        same(z["arr_0"], x)
        same(z["b"], np.arange(3))
    np.save(str(tmp_path / "c.npy"), np.arange(2, dtype=np.clongdouble))
    assert isinstance(jnp.load(str(tmp_path / "c.npy")), np.ndarray)   # kept, as JAX does
    np.save(str(tmp_path / "i8.npy"), np.arange(3, dtype=np.int8))
    assert jnp.load(str(tmp_path / "i8.npy")).dtype == np.int32
    with pytest.raises(TypeError, match="save: cannot write a traced array"):
        netcl.jit(lambda a: jnp.save(str(tmp_path / "t.npy"), a))(x)
    with pytest.raises(TypeError, match="load"):
        jnp.load(None)


# ---- bits --------------------------------------------------------------------------------------

def test_nextafter_as_numpy_and_jax():
    a = np.array([1.0, -0.0, 0.0, np.inf, np.nan, 1e-45, -1.0, 3.0], np.float32)
    b = np.array([2.0, 1.0, -1.0, 0.0, 1.0, 0.0, -np.inf, 3.0], np.float32)
    same(jnp.nextafter(jnp.asarray(a), jnp.asarray(b)), np.nextafter(a, b))
    same(jnp.nextafter(jnp.asarray(a), jnp.asarray(b)), jjnp.nextafter(a, b))
    same(jnp.nextafter(jnp.asarray(a.astype(np.float64)), jnp.asarray(b.astype(np.float64))),
         np.nextafter(a.astype(np.float64), b.astype(np.float64)))       # x64 is on here
    # broadcasting and promotion as JAX's (integers and bools become float32)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    for x, y in ((m, np.float32(10)), (m, 2.0), (np.arange(3, dtype=np.int32), 5),
                 (np.array([True]), m)):
        ours, theirs = jnp.nextafter(jnp.asarray(x), y), jjnp.nextafter(jjnp.asarray(x), y)
        same(ours, theirs)
        assert ours.dtype == theirs.dtype
    for dt in (jnp.float16, jnp.bfloat16):
        ours = jnp.nextafter(jnp.asarray([1.0, -2.0], dt), jnp.asarray([2.0, 0.0], dt))
        theirs = jjnp.nextafter(jjnp.asarray([1.0, -2.0], dt), jjnp.asarray([2.0, 0.0], dt))
        assert ours.dtype == theirs.dtype
        same(ours.astype(jnp.float32), theirs.astype(jjnp.float32))
    same(netcl.jit(jnp.nextafter)(jnp.asarray(a), jnp.asarray(b)), np.nextafter(a, b))
    with pytest.raises(ValueError, match="nextafter"):
        jnp.nextafter(jnp.ones(2), jnp.ones(3))


def test_bitwise_count_as_jax():
    x = np.array([0, 1, -1, 7, 2**31 - 1, -2**31, -5, 255], np.int32)
    for v in (x, x.view(np.uint32), np.array([True, False])):
        ours, theirs = jnp.bitwise_count(jnp.asarray(v)), jjnp.bitwise_count(v)
        same(ours, theirs)
        assert ours.dtype == np.uint32 and theirs.dtype == np.uint8   # (no uint8 in netcl)
    same(jnp.bitwise_count(x[::-2].reshape(2, 2)), np.bitwise_count(x[::-2].reshape(2, 2)))
    same(netcl.jit(jnp.bitwise_count)(jnp.asarray(x)), np.bitwise_count(x))
    assert int(jnp.bitwise_count(3)) == 2
    with pytest.raises(TypeError, match="bitwise_count"):
        jnp.bitwise_count(jnp.ones(2))


# ---- histograms --------------------------------------------------------------------------------

HIST_CASES = [
    dict(bins=4),
    dict(bins=[3, 5], range=[(-2.0, 2.0), None]),
    dict(bins=(np.array([-1.0, 0.0, 0.5, 2.0]), 3), weights=YS, density=True),
    dict(bins=np.array([-3.0, -1.0, 0.0, 1.0, 3.0]), weights=np.abs(XS)),
    dict(bins=2, density=True, range=[[-1.0, 1.0], [-1.0, 1.0]]),
]


@pytest.mark.parametrize("case", range(len(HIST_CASES)))
def test_histogram2d_and_dd_as_jax(case):
    kw = HIST_CASES[case]

    def conv(v, lib):
        if isinstance(v, np.ndarray):
            return lib.asarray(v)
        if isinstance(v, (list, tuple)) and kw.get("range") is not v:
            return type(v)(conv(e, lib) for e in v)
        return v
    ours_kw = {k: conv(v, jnp) for k, v in kw.items()}
    theirs_kw = {k: conv(v, jjnp) for k, v in kw.items()}
    h, ex, ey = jnp.histogram2d(jnp.asarray(XS), jnp.asarray(YS), **ours_kw)
    hj, exj, eyj = jjnp.histogram2d(XS, YS, **theirs_kw)
    assert h.dtype == hj.dtype
    same(h, hj, exact=False, tol=1e-5)
    same(ex, exj, exact=False)
    same(ey, eyj, exact=False)
    if isinstance(kw["bins"], np.ndarray):     # one array of edges: histogram2d's only
        for lib, s, k in ((jnp, jnp.asarray(XY), ours_kw), (jjnp, XY, theirs_kw)):
            with pytest.raises(ValueError):
                lib.histogramdd(s, **k)
        return
    h, edges = jnp.histogramdd(jnp.asarray(XY), **ours_kw)
    hj, edgesj = jjnp.histogramdd(XY, **theirs_kw)
    assert h.dtype == hj.dtype and len(edges) == len(edgesj) == 2
    same(h, hj, exact=False, tol=1e-5)
    if not kw.get("density") and kw.get("weights") is None:
        want = np.histogramdd(XY, bins=[np.asarray(e) for e in edges])[0]
        same(h, want)                                  # and NumPy's counts on those edges


def test_histogramdd_three_dims_jit_and_errors():
    s = RNG.rand(30, 3).astype(np.float32)
    h, edges = jnp.histogramdd(jnp.asarray(s), bins=(2, 3, 4))
    hj, edgesj = jjnp.histogramdd(s, bins=(2, 3, 4))
    same(h, hj)
    for e, ej in zip(edges, edgesj):
        same(e, ej, exact=False)
    f = netcl.jit(lambda a: jnp.histogramdd(a, bins=3, range=[(0.0, 1.0)] * 3)[0])
    same(f(jnp.asarray(s)), jjnp.histogramdd(s, bins=3, range=[(0.0, 1.0)] * 3)[0])
    for call, exc, words in [
            (lambda: jnp.histogramdd(jnp.ones(3)), ValueError, "histogramdd: sample must be"),
            (lambda: jnp.histogramdd(jnp.ones((3, 2)), bins=[2, 3, 4]), ValueError,
             "one entry per dimension"),
            (lambda: jnp.histogramdd(jnp.ones((3, 2)), range=[(0, 1)]), ValueError,
             "histogramdd: range must be"),
            (lambda: jnp.histogramdd(jnp.ones((3, 2)), weights=jnp.ones(2)), ValueError,
             "one weight per sample"),
            (lambda: jnp.histogramdd(jnp.ones((3, 2)), bins=[2, [0.0, 1.0]]), TypeError,
             "convert it with"),
            (lambda: jnp.histogramdd([[1.0, 2.0]]), TypeError, "histogramdd"),
            (lambda: jnp.histogram2d(jnp.ones(3), jnp.ones(4)), ValueError,
             "histogram2d: x and y must be"),
            (lambda: jnp.histogram2d(jnp.ones(3), jnp.ones(3), bins=0), ValueError,
             "histogram2d: bins must be >= 1"),
            (lambda: jnp.histogram2d(jnp.ones(3), jnp.ones(3), density="a"), TypeError,
             "histogram2d: density"),
            (lambda: jnp.histogram2d(jnp.zeros(0), jnp.zeros(0)), ValueError,
             "histogram2d: an empty sample needs an explicit range")]:
        with pytest.raises(exc, match=words):
            call()


# ---- polynomials -------------------------------------------------------------------------------

def test_poly_as_jax():
    for r in (np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.5, 2.0, 2.0]),
              np.array(2.5, np.float32), np.zeros(0, np.float32), np.array([1, 2], np.int32),
              np.array([True, False])):
        ours, theirs = jnp.poly(jnp.asarray(r)), jjnp.poly(r)
        if r.dtype == np.float64:
            theirs = np.poly(r)          # (JAX runs with x64 off; netcl keeps float64 here)
        assert ours.dtype == theirs.dtype
        same(ours, theirs, exact=False, tol=1e-5)
    same(netcl.jit(jnp.poly)(jnp.asarray([1.0, 2.0])), [1.0, -3.0, 2.0])
    m = np.array([[2, 1, 5], [3, 4, 7], [1, 3, 5]], np.int32)    # (JAX's docstring example)
    ours, theirs = jnp.poly(jnp.asarray(m)), jjnp.poly(m)          # complex, as JAX
    assert ours.dtype == theirs.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="poly: input must be 1-d"):
        jnp.poly(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="poly"):
        jnp.poly([1.0, 2.0])


def test_polydiv_as_jax():
    for u, v in (([5.0, 7.0, 9.0], [4.0, 1.0]), ([1.0, -3.0, 2.0], [1.0, -1.0]),
                 ([1.0, 2.0], [1.0, 2.0, 3.0]), ([3, 0, 1, 2], [2, 1]), ([2.0], [4.0]),
                 ([1.0, 0.0, 0.0, -1.0], [1.0, -1.0])):
        u32, v32 = np.asarray(u, np.float32 if isinstance(u[0], float) else np.int32), \
            np.asarray(v, np.float32 if isinstance(v[0], float) else np.int32)
        for trim in (False, True):
            q, r = jnp.polydiv(jnp.asarray(u32), jnp.asarray(v32), trim_leading_zeros=trim)
            qj, rj = jjnp.polydiv(u32, v32, trim_leading_zeros=trim)
            assert q.dtype == qj.dtype and r.dtype == rj.dtype
            same(q, qj, exact=False, tol=1e-5)
            same(r, rj, exact=False, tol=1e-5)
    q, r = netcl.jit(jnp.polydiv)(jnp.asarray([5.0, 7.0, 9.0]), jnp.asarray([4.0, 1.0]))
    same(q, [1.25, 1.4375])
    same(r, [0.0, 0.0, 7.5625])
    with pytest.raises(ValueError, match="polydiv: v must be a 1-d"):
        jnp.polydiv(jnp.ones(3), jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="polydiv: v .the divisor. has no coefficients"):
        jnp.polydiv(jnp.ones(3), jnp.ones(0))
    with pytest.raises(TypeError, match="polydiv: trim_leading_zeros=True"):
        netcl.jit(lambda a: jnp.polydiv(a, a, trim_leading_zeros=True))(jnp.ones(2))


# ---- setxor1d ----------------------------------------------------------------------------------

def test_setxor1d_as_jax():
    a = np.array([[5, 1, 3], [3, 7, 1]], np.int32)
    b = np.array([3, 8, 9, 1, 8], np.int32)
    fa = np.array([0.5, -1.0, np.inf, 2.0], np.float32)
    fb = np.array([2.0, 3.0, -1.0], np.float32)
    for x, y in ((a, b), (b, a), (fa, fb), (a, np.zeros(0, np.int32)), (a, a)):
        same(jnp.setxor1d(jnp.asarray(x), jnp.asarray(y)), jjnp.setxor1d(x, y))
    for x, y, size, fill in ((a, b, 2, None), (a, b, 8, -4), (fa, fb, 6, None)):
        # (JAX compiles each: a few only)
        ours = jnp.setxor1d(jnp.asarray(x), jnp.asarray(y), size=size, fill_value=fill)
        theirs = jjnp.setxor1d(x, y, size=size, fill_value=fill)
        same(ours, theirs)
        assert ours.dtype == theirs.dtype
    u1, u2 = np.array([1, 4, 2], np.int32), np.array([2, 6], np.int32)
    same(jnp.setxor1d(jnp.asarray(u1), jnp.asarray(u2), assume_unique=True),
         jjnp.setxor1d(u1, u2, assume_unique=True))
    same(jnp.setxor1d(jnp.asarray(u1), jnp.asarray(u2), True, size=5),
         jjnp.setxor1d(u1, u2, True, size=5))
    same(jnp.setxor1d(jnp.asarray(fa), jnp.asarray(fb).astype(jnp.int32)),
         jjnp.setxor1d(fa, fb.astype(np.int32)))                       # promotion
    same(jnp.setxor1d([1, 2], [2, 3]), [1, 3])     # lists, as netcl's other set functions
    f = netcl.jit(lambda x, y: jnp.setxor1d(x, y, size=6))
    same(f(jnp.asarray(a), jnp.asarray(b)), jjnp.setxor1d(a, b, size=6))
    with pytest.raises(TypeError, match="setxor1d: traced inputs need size="):
        netcl.jit(jnp.setxor1d)(jnp.asarray(a), jnp.asarray(b))
    with pytest.raises(ValueError, match="setxor1d: size must be >= 0"):
        jnp.setxor1d(jnp.asarray(a), jnp.asarray(b), size=-1)
    with pytest.raises(TypeError, match="setxor1d: assume_unique"):
        jnp.setxor1d(jnp.asarray(a), jnp.asarray(b), "yes")


# ---- einsum_path -------------------------------------------------------------------------------

def test_einsum_path_shapes_only():
    shapes = [(2, 3), (3, 100), (100, 5)]
    ops = [jnp.ones(s) for s in shapes]
    path, report = jnp.einsum_path("ij,jk,kl->il", *ops)
    want = np.einsum_path("ij,jk,kl->il", *[np.ones(s) for s in shapes], optimize="optimal")
    assert path == want[0] and report == want[1]
    jpath, _ = jjnp.einsum_path("ij,jk,kl->il", *[jjnp.ones(s) for s in shapes])
    assert path[1:] == jpath                               # JAX's path, after NumPy's marker
    assert jnp.einsum_path("ij,jk,kl->il", *ops, optimize="greedy")[0] == \
        np.einsum_path("ij,jk,kl->il", *[np.ones(s) for s in shapes], optimize="greedy")[0]
    assert jnp.einsum_path("ij,jk,kl->il", *ops, optimize=[(1, 2), (0, 1)])[0] == path
    got = []
    netcl.jit(lambda a, b: got.append(jnp.einsum_path("ij,jk", a, b)[0]) or a)(*ops[:2])
    assert got == [["einsum_path", (0, 1)]]
    same(jnp.einsum("ij,jk,kl->il", *ops, optimize=path), np.full((2, 5), 300.0))
    with pytest.raises(TypeError, match="einsum_path: subscripts must be a string"):
        jnp.einsum_path(ops[0], ops[1])
    with pytest.raises(ValueError, match="einsum_path"):
        jnp.einsum_path("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 2)))
    with pytest.raises(ValueError, match="einsum_path: optimize must be"):
        jnp.einsum_path("ij,jk->ik", *ops[:2], optimize="bogus")
    with pytest.raises(TypeError, match="einsum_path: operand 1 .*asarray"):
        jnp.einsum_path("ij,jk->ik", ops[0], [[1.0]])


def test_bad_inputs_raise_before_any_kernel(kernel_launches):
    x, s = jnp.asarray(XS), jnp.asarray(XY)
    for call in (lambda: jnp.histogram2d(x, x, bins=[3, -1]),
                 lambda: jnp.histogramdd(s, range=[(0.0, 1.0), (0.0, np.inf)]),
                 lambda: jnp.histogramdd(s, weights=x, density="a"),
                 lambda: jnp.polydiv(x, s),
                 lambda: jnp.setxor1d(x, x, size=2, fill_value="a"),
                 lambda: jnp.bitwise_count(x),
                 lambda: jnp.nextafter(x, s),
                 lambda: jnp.poly(s)):
        with pytest.raises((TypeError, ValueError)):
            call()
    assert kernel_launches == []


def test_host_input_follows_x64_off():
    """x64 off (JAX's default): float64 data becomes float32, as jnp.asarray makes it."""
    raw = np.array([0.5, 1.5]).tobytes()
    netcl.config.update("enable_x64", False)
    try:
        for ours, theirs in ((jnp.frombuffer(raw), jjnp.frombuffer(raw)),
                             (jnp.fromstring("1.5 2", sep=" "), jjnp.fromstring("1.5 2", sep=" ")),
                             (jnp.fromiter([1.0, 2.0], float), None),
                             (jnp.from_dlpack(np.ones(2)), jjnp.from_dlpack(np.ones(2)))):
            assert ours.dtype == np.float32 and (theirs is None or theirs.dtype == ours.dtype)
        f = io.BytesIO()
        np.save(f, np.arange(3.0))
        f.seek(0)
        assert jnp.load(f).dtype == np.float32
    finally:
        netcl.config.update("enable_x64", True)
