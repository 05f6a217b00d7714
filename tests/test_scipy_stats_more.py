"""jax.scipy.stats's further distributions (betabinom ... wrapcauchy, and the cdf family of
beta and gamma), gaussian_kde, mode / rankdata / sem, netcl.scipy.integrate and
netcl.scipy.cluster.vq against JAX 0.10: the modules' names and signatures; values on
arguments drawn by hypothesis (special values included, so NaN and inf land where JAX puts
them), float64 and float32; result dtypes and weak types with x64 on and off (traced
abstractly: no kernels); float64 gradients by finite differences and against jax.grad; jit
and vmap; and typed errors naming the function.

Each group of functions runs as one jitted program on one shape, (6,), so its kernels compile
once (fused) and the hypothesis examples reuse them."""
import functools
import inspect
import math
import types

import numpy as np
import pytest
from hypothesis import given, settings, strategies as hs
from hypothesis.extra import numpy as hnp

import netcl
import netcl.numpy as jnp
import netcl.scipy.cluster.vq
import netcl.scipy.integrate
import netcl.scipy.stats as st
from netcl.test_util import check_grads
from util import raises_with

jax = pytest.importorskip("jax")
jst = pytest.importorskip("jax.scipy.stats")
import jax.scipy.cluster.vq  # noqa: E402
import jax.scipy.integrate  # noqa: E402

JJ = jax.numpy


@pytest.fixture(autouse=True)
def _jax_x64_as_netcl():
    """JAX computes in float64 where netcl does (the suite runs with x64 on: conftest.py)."""
    with jax.enable_x64(netcl.config.enable_x64):
        yield
NEW = ["betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gennorm", "geom",
       "gumbel_l", "gumbel_r", "multinomial", "nbinom", "pareto", "poisson", "t", "truncnorm",
       "vonmises", "wrapcauchy"]


# ---- the surface --------------------------------------------------------------------------

def _params(f):
    return [(p.name, p.default, p.kind) for p in inspect.signature(f).parameters.values()]


def test_modules_functions_and_signatures_are_jax_s():
    for name in dir(jst):
        theirs = getattr(jst, name)
        if name.startswith("_"):
            continue
        assert hasattr(st, name), name
        if not isinstance(theirs, types.ModuleType):
            continue
        ours = getattr(st, name)
        names = sorted(n for n in dir(theirs) if not n.startswith("_"))
        assert sorted(ours.__all__) == names, name
        for fn in names:
            assert _params(getattr(ours, fn)) == _params(getattr(theirs, fn)), (name, fn)
    for fn in ("mode", "rankdata", "sem"):
        assert _params(getattr(st, fn)) == _params(getattr(jst, fn)), fn
    methods = sorted(n for n in dir(jst.gaussian_kde) if not n.startswith("_"))
    assert [n for n in methods if not hasattr(st.gaussian_kde, n)] == []
    assert _params(netcl.scipy.integrate.trapezoid) == _params(jax.scipy.integrate.trapezoid)
    assert _params(netcl.scipy.cluster.vq.vq) == _params(jax.scipy.cluster.vq.vq)


# ---- values against JAX, hypothesis ---------------------------------------------------------
# (ranges of each argument; "int" draws integers, for counts). One group: functions sharing
# their arguments.
# A third entry lists the special values to draw (default: NaN, +-inf, 0): the shapes that
# reach netcl.scipy.special's incomplete gamma function leave out 0 and inf, where it takes
# scipy's limits (gammainc(0, x) = 1, gammainc(inf, x) = 0) and JAX's gives NaN.
X, LOC, SCALE, Q, QX = (-5.0, 8.0), (-1.0, 1.0), (0.5, 2.0), (0.0, 1.0), (-0.1, 1.1)
SHAPE, P, K, N, LOCI = (0.5, 6.0), (0.0, 1.0), ("int", -1, 12), ("int", 0, 10), ("int", 0, 2)
GSHAPE = (0.5, 6.0, [np.nan])
CDFS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]
GROUPS = [
    ("beta", CDFS, [(-0.2, 1.2), SHAPE, SHAPE, (-0.1, 0.1), (0.8, 1.2)]),
    ("betabinom", ["logpmf", "pmf"], [K, N, SHAPE, SHAPE, LOCI]),
    ("binom", ["logpmf", "pmf"], [K, N, P, LOCI]),
    ("cauchy", CDFS, [X, LOC, SCALE]),
    ("cauchy", ["ppf", "isf"], [Q, LOC, SCALE]),
    ("chi2", CDFS, [X, GSHAPE, LOC, SCALE]),
    ("expon", CDFS, [X, LOC, SCALE]),
    ("expon", ["ppf"], [QX, LOC, SCALE]),
    ("gamma", CDFS, [X, GSHAPE, LOC, SCALE]),
    ("gennorm", ["logpdf", "pdf", "cdf"], [X, (0.5, 4.0, [np.nan])]),
    ("geom", ["logpmf", "pmf"], [K, P, LOCI]),
    ("gumbel_l", CDFS, [X, LOC, (-0.5, 2.0)]),
    ("gumbel_l", ["ppf"], [QX, LOC, SCALE]),
    ("gumbel_r", CDFS, [X, LOC, (-0.5, 2.0)]),
    ("gumbel_r", ["ppf"], [QX, LOC, SCALE]),
    ("nbinom", ["logpmf", "pmf"], [K, (0.5, 8.0), (0.05, 0.95), LOCI]),
    ("pareto", CDFS, [X, (0.5, 4.0), LOC, SCALE]),
    ("pareto", ["ppf"], [QX, (0.5, 4.0), LOC, SCALE]),
    ("poisson", ["logpmf", "pmf", "cdf"], [(-1.0, 12.0, [np.nan, -np.inf, 0.0]), (0.5, 8.0),
                                           LOCI]),
    ("poisson", ["entropy"], [(0.0, 300.0)]),
    ("t", ["logpdf", "pdf"], [X, (0.5, 10.0), LOC, SCALE]),
    ("truncnorm", CDFS, [X, (-3.0, 1.0), (-1.0, 4.0), LOC, SCALE]),
    ("vonmises", ["logpdf", "pdf"], [X, (-0.5, 30.0)]),
    ("wrapcauchy", ["logpdf", "pdf"], [(-1.0, 7.0), (-0.1, 1.1)]),
]
IDS = [f"{m}.{fns[0]}" for m, fns, _ in GROUPS]
# float64 agreement with JAX (relative; the special functions are different approximations):
# betabinom differs more since JAX's float64 betaln is the less accurate one (netcl's agrees
# with scipy.stats.betabinom to 1e-15; see test_betabinom_float64_matches_scipy)
RTOL64 = {"betabinom": 1e-5, "chi2": 1e-7, "gamma": 1e-7, "beta": 1e-7, "poisson": 1e-7}
SPECIALS = [np.nan, np.inf, -np.inf, 0.0]


def _arg(rng_spec, dtype):
    """Hypothesis arrays of shape (6,) in the range, with its ends and special values."""
    if rng_spec[0] == "int":
        return hnp.arrays(dtype, (6,), elements=hs.integers(rng_spec[1], rng_spec[2]))
    lo, hi, specials = (*rng_spec, SPECIALS)[:3]
    width = 32 if dtype == np.float32 else 64
    # (no subnormals: XLA on CPU flushes them to zero, OpenCL devices need not)
    elements = hs.floats(lo, hi, width=width, allow_subnormal=False) | \
        hs.sampled_from([lo, hi] + specials)
    return hnp.arrays(dtype, (6,), elements=elements)


def _bundle(lib, i):
    """One function computing all of group i's functions (for JAX's, op by op: under jax.jit
    XLA rewrites some of them, e.g. its cauchy.cdf(-inf) becomes -1e-17, not 0)."""
    mod, fns, _ = GROUPS[i]
    fs = [getattr(getattr(lib, mod), f) for f in fns]
    return lambda *a: tuple(f(*a) for f in fs)


@functools.lru_cache(maxsize=None)
def _bundles(i):
    """(netcl's group i, jitted; JAX's)."""
    return netcl.jit(_bundle(st, i)), _bundle(jst, i)


def _compare(got, want, rtol, atol, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _run_group(i, args, dtype, rtol, atol):
    mod, fns, _ = GROUPS[i]
    ours, theirs = _bundles(i)
    with netcl.enable_x64(dtype == np.float64), jax.enable_x64(dtype == np.float64):
        got = ours(*[jnp.asarray(a) for a in args])
        want = theirs(*[JJ.asarray(a) for a in args])
    for f, g, w in zip(fns, got, want):
        _compare(g, w, rtol, atol, f"{mod}.{f} at {[a.tolist() for a in args]}")


@pytest.mark.parametrize("i", range(len(GROUPS)), ids=IDS)
@settings(max_examples=4, deadline=None)
@given(data=hs.data())
def test_values_match_jax_float64(i, data):
    mod, _, ranges = GROUPS[i]
    args = [data.draw(_arg(r, np.float64), label=f"arg{j}") for j, r in enumerate(ranges)]
    _run_group(i, args, np.float64, RTOL64.get(mod, 1e-9), 1e-12)


def test_float32_agrees_with_float64():
    """float32 (x64 off) against netcl's own float64 results, which the test above checks
    against JAX (JAX itself would compile each function again for float32: slow here). All
    groups in one program: one build."""
    rng = np.random.default_rng(5)
    args = [[rng.integers(r[1], r[2] + 1, 6) if r[0] == "int" else rng.uniform(*r[:2], 6)
             for r in ranges] for _, _, ranges in GROUPS]
    groups = [_bundle(st, i) for i in range(len(GROUPS))]
    everything = netcl.jit(lambda all_args: [g(*a) for g, a in zip(groups, all_args)])
    want = [_bundles(i)[0](*[jnp.asarray(a) for a in args[i]]) for i in range(len(GROUPS))]
    with netcl.enable_x64(False):
        got = everything([[jnp.asarray(a.astype(np.float32)) for a in g] for g in args])
    for (mod, fns, _), gs, ws in zip(GROUPS, got, want):
        for f, g, w in zip(fns, gs, ws):
            assert np.asarray(g).dtype == np.float32, (mod, f)
            # (a few float32 ulp; more where terms cancel (the binomial coefficients) or
            # add up (poisson's entropy: 250 terms))
            rtol = 1e-4 if "binom" in mod or mod == "poisson" else 1e-5
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), equal_nan=True,
                                       rtol=rtol, atol=1e-5, err_msg=f"{mod}.{f}")


def _group(mod, fn):
    return next(i for i, (m, fns, _) in enumerate(GROUPS) if m == mod and fn in fns)


def _call_group(mod, fn, *args):
    """`mod.fn` at 6 points, through its group's jitted program (compiled once)."""
    i = _group(mod, fn)
    out = _bundles(i)[0](*[jnp.asarray(np.broadcast_to(a, (6,))) for a in args])
    return np.asarray(out[GROUPS[i][1].index(fn)])


def test_betabinom_float64_matches_scipy():
    k, n = np.array([0.0, 3.0, 6.0, 10.0, 9.0, 2.0]), np.array([9.0, 9.0, 9.0, 12.0, 9.0, 4.0])
    a, b = np.array([1.1, 3.9, 3.2, 0.7, 40.0, 2.0]), np.array([2.5, 0.9, 2.9, 5.0, 0.6, 3.0])
    # scipy.stats.betabinom.logpmf(k, n, a, b) (scipy 1.x; written out: importing scipy.stats
    # takes seconds)
    want = [-1.6630414378921523, -3.6693960003538564, -1.904597315673589, -6.631794802943364,
            -0.1223146587361994, -1.3581234841531935]
    np.testing.assert_allclose(_call_group("betabinom", "logpmf", k, n, a, b, 0.0), want,
                               rtol=1e-12)


def test_deliberate_differences_from_jax():
    # chi2 at x = loc with df = 2 is the density 1/2 (JAX: 0 * log 0 = NaN); gumbel_r.sf in
    # the right tail through expm1 (JAX's 1 - exp(...) rounds to 0 in float32)
    assert np.allclose(_call_group("chi2", "pdf", 0.0, 2.0, 0.0, 1.0), 0.5, rtol=1e-12)
    with netcl.enable_x64(False):
        sf = _call_group("gumbel_r", "sf", np.float32(30.0), np.float32(0), np.float32(1))
    assert np.allclose(sf, -math.expm1(-math.exp(-30.0)), rtol=1e-6)


def _simplex_and_counts(lib, xs, alpha, counts, p):
    return ([lib.dirichlet.logpdf(x, alpha) for x in xs] +
            [lib.dirichlet.pdf(xs[0], alpha)] +
            [f(counts[0], n, p) for f in (lib.multinomial.logpmf, lib.multinomial.pmf)
             for n in (3, 4)] +
            [lib.multinomial.logpmf(counts, 3, p)])


def test_dirichlet_and_multinomial_match_jax():
    rng = np.random.default_rng(2)
    alpha = rng.uniform(0.5, 3.0, 4)
    x = rng.dirichlet(alpha, 5).T
    xs = [x, x[:-1], x[:, 0], x * 1.1, np.abs(x - 0.3)]
    p = np.array([0.2, 0.3, 0.5])
    counts = np.array([[2, 1, 0], [0, 0, 3], [1, 1, 1]], np.int32)
    got = netcl.jit(functools.partial(_simplex_and_counts, st))(
        [jnp.asarray(v) for v in xs], jnp.asarray(alpha), jnp.asarray(counts), jnp.asarray(p))
    want = _simplex_and_counts(jst, [JJ.asarray(v) for v in xs], JJ.asarray(alpha),
                               JJ.asarray(counts), JJ.asarray(p))
    for k, (g, w) in enumerate(zip(got[:-1], want[:-1])):
        _compare(g, w, 1e-12, 1e-12, f"dirichlet / multinomial output {k}")
    # a batch of count vectors: each row is checked against n (JAX sums all of x)
    want = [float(jst.multinomial.logpmf(JJ.asarray(c), 3, JJ.asarray(p))) for c in counts]
    np.testing.assert_allclose(np.asarray(got[-1]), want, rtol=1e-12)


# ---- dtypes and weak types, x64 on and off (abstract evaluation) ---------------------------

def _abstract(lib, f, args):
    if lib is st:
        specs = [a if not isinstance(a, tuple) else netcl.ShapeDtypeStruct(*a) for a in args]
        return netcl.eval_shape(f, *specs)
    specs = [a if not isinstance(a, tuple) else jax.ShapeDtypeStruct(*a) for a in args]
    return jax.eval_shape(f, *specs)


@pytest.mark.parametrize("x64", [False, True], ids=["x64_off", "x64_on"])
def test_result_dtypes_match_jax(x64):
    """JAX's dtype and weak type for Python scalars (weak: the default float), every function;
    and, for one function of each group, JAX's dtype for an int32 array with Python floats,
    and (with x64 off) float32 and float16 arrays (strong)."""
    with netcl.enable_x64(x64), jax.enable_x64(x64):
        for mod, fns, ranges in GROUPS:
            n = len(ranges)
            more = [[((3,), np.int32)] + [0.5] * (n - 1)]
            if not x64:
                more += [[((3,), np.float32)] * n,
                         [((3,), np.float16)] + [((1,), np.float16)] * (n - 1)]
            for k, f in enumerate(fns):
                ours, theirs = getattr(getattr(st, mod), f), getattr(getattr(jst, mod), f)
                for args in [[1.5] * n] + (more if k == 0 else []):
                    try:
                        b = _abstract(jax, theirs, args)
                    except TypeError:       # (JAX's log_ndtr refuses float16)
                        continue
                    a = _abstract(st, ours, args)
                    assert (a.shape, a.dtype) == (b.shape, b.dtype), (mod, f, args, a, b)
                    # (int32 with Python floats: JAX's weak type depends on its formula)
                    if args[0] != ((3,), np.int32):
                        assert a.weak_type == b.weak_type, (mod, f, args, a, b)
        for fn, args in (("rankdata", [((4,), np.int32)]), ("sem", [((4,), np.int32)]),
                         ("sem", [((4,), np.float16)])):
            a, b = _abstract(st, getattr(st, fn), args), _abstract(jax, getattr(jst, fn), args)
            assert (a.shape, a.dtype) == (b.shape, b.dtype), (fn, a, b)
        a = _abstract(st, st.mode, [((5, 2), np.int32)])
        b = _abstract(jax, jst.mode, [((5, 2), np.int32)])
        assert [(v.shape, v.dtype) for v in a] == [(v.shape, v.dtype) for v in b]


# ---- gradients, float64 ---------------------------------------------------------------------

# (not the gamma family's cdfs: their derivative in the shape runs the incomplete gamma
# function's iteration forward-mode, a program too large to build in this file's time)
GRADS = [
    ("t.logpdf", (0.7, 3.5, 0.2, 1.3)), ("truncnorm.logcdf", (0.3, -1.0, 1.5, 0.1, 1.2)),
    ("vonmises.logpdf", (0.4, 2.5)), ("gumbel_r.logsf", (0.3, 0.1, 2.0)),
    ("binom.logpmf", (3.0, 10.0, 0.3)),
]


def _fn(lib, name):
    mod, f = name.split(".")
    return getattr(getattr(lib, mod), f)


@pytest.mark.parametrize("name,args", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_float64(name, args):
    # the counts of binom are not differentiated (integers), the rest are
    nums = tuple(range(1, len(args))) if name.startswith("binom") else tuple(range(len(args)))
    ours, theirs = _fn(st, name), _fn(jst, name)
    xs = [jnp.asarray(np.float64(a) * np.ones(2)) for a in args]
    xs[0] = jnp.asarray(np.float64(args[0]) * np.array([1.0, 0.9]))
    fixed = {i: x for i, x in enumerate(xs) if i not in nums}

    def f(*free):
        it = iter(free)
        return ours(*[fixed[i] if i in fixed else next(it) for i in range(len(xs))])
    # under jit: one fused program per derivative, not one kernel per operation
    check_grads(netcl.jit(f), tuple(xs[i] for i in nums), order=1, atol=1e-6, rtol=1e-6)
    got = netcl.jit(netcl.grad(lambda *a: jnp.sum(ours(*a)), argnums=nums))(*xs)
    with jax.enable_x64(True):
        want = jax.grad(lambda *a: JJ.sum(theirs(*a)), argnums=nums)(
            *[JJ.asarray(np.asarray(x)) for x in xs])
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-8, atol=1e-12)


def test_vmap_and_eager_agree_with_jit():
    x = jnp.asarray(np.linspace(-2.0, 3.0, 6))
    scale = jnp.asarray(np.linspace(0.5, 2.0, 3))
    eager = st.gumbel_l.logcdf(x[None, :], 0.2, scale[:, None])
    mapped = netcl.vmap(lambda s: st.gumbel_l.logcdf(x, 0.2, s))(scale)
    jitted = netcl.jit(lambda s: st.gumbel_l.logcdf(x, 0.2, s[:, None]))(scale)
    np.testing.assert_allclose(np.asarray(mapped), np.asarray(eager), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-13)


# ---- gaussian_kde -----------------------------------------------------------------------------

def _kde_summary(lib, key, data, pts, *rest):
    """What gaussian_kde computes from `data` (d, n) (and bw_method, weights), in one
    program: netcl's under jit, so the test builds a few programs, not one per operation."""
    np_ = jnp if lib is st else JJ
    kde = lib.gaussian_kde(data, *rest)
    d = kde.d
    mean, cov = np_.full(d, 0.3), np_.eye(d) * 0.5
    return (kde.covariance, kde.inv_cov, kde.neff, kde.evaluate(pts), kde(pts),
            kde.logpdf(pts * 40.0),             # far out: finite, through logsumexp
            kde.integrate_gaussian(mean, cov), kde.integrate_kde(kde),
            kde.resample(key, (5,)),            # the same samples as JAX from the same key
            kde.integrate_box_1d(-0.5, 1.0) if d == 1 else kde.neff)


def test_gaussian_kde_matches_jax():
    rng = np.random.default_rng(1)
    data, w = rng.standard_normal((2, 12)), rng.uniform(0.2, 1.0, 12)
    pts = rng.standard_normal((2, 4))
    ours = netcl.jit(functools.partial(_kde_summary, st), static_argnums=(3,))
    theirs = jax.jit(functools.partial(_kde_summary, jst), static_argnums=(3,))
    for d, rest in ((2, ()), (2, ("silverman", w)), (1, (0.4,))):
        got = ours(netcl.random.PRNGKey(3), jnp.asarray(data[:d]), jnp.asarray(pts[:d]),
                   *[jnp.asarray(r) if isinstance(r, np.ndarray) else r for r in rest])
        want = theirs(jax.random.PRNGKey(3), JJ.asarray(data[:d]), JJ.asarray(pts[:d]),
                      *[JJ.asarray(r) if isinstance(r, np.ndarray) else r for r in rest])
        for k, (g, w_) in enumerate(zip(got, want)):
            _compare(g, w_, 1e-10, 1e-13, f"gaussian_kde d={d} {rest} output {k}")
    # a pytree: taken apart and rebuilt, an argument of jit, differentiable in its data
    kde = st.gaussian_kde(jnp.asarray(data[0]))
    leaves, treedef = netcl.tree_util.tree_flatten(kde)
    assert len(leaves) == 5 and treedef.unflatten(leaves).n == kde.n == 12
    x = jnp.asarray(pts[0])
    np.testing.assert_allclose(np.asarray(netcl.jit(lambda k, y: k.pdf(y))(kde, x)),
                               np.asarray(kde.pdf(x)), rtol=1e-13)
    g = netcl.jit(netcl.grad(lambda d: jnp.sum(st.gaussian_kde(d).logpdf(x))))(
        jnp.asarray(data[0]))
    gj = jax.grad(lambda d: JJ.sum(jst.gaussian_kde(d).logpdf(JJ.asarray(pts[0]))))(
        JJ.asarray(data[0]))
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-9, atol=1e-12)


# ---- mode, rankdata, sem, trapezoid, vq -----------------------------------------------------

int_arrays = hnp.arrays(np.int32, (5, 4), elements=hs.integers(0, 3))


def _order_stats(lib, a):
    """mode over each axis, rankdata by each method along axis 1 and of the flattened
    array, sem with each nan_policy: netcl's jitted, one program per dtype."""
    modes = [lib.mode(a, axis=axis) for axis in (0, 1, None)]
    ranks = [lib.rankdata(a, m, axis=axis) for m in ("average", "min", "max", "dense",
                                                      "ordinal") for axis in (None, 1)]
    sems = [lib.sem(a.astype(float), axis=1, nan_policy=p) for p in ("propagate", "omit")]
    return modes, ranks, sems


@settings(max_examples=6, deadline=None)
@given(a=int_arrays, nan_at=hs.none() | hs.tuples(hs.integers(0, 4), hs.integers(0, 3)))
def test_mode_rankdata_sem_match_jax(a, nan_at):
    f = a.astype(np.float64)
    if nan_at is not None:
        f[nan_at] = np.nan
    ours = _order_stats_jit()
    for arr in (a, f):
        got = ours(jnp.asarray(arr))
        want = _order_stats(jst, JJ.asarray(arr))
        for g, w in zip(got[0], want[0]):
            _compare_tree(g, w, "mode")
        for g, w in zip(got[1] + got[2], want[1] + want[2]):
            _compare(g, w, 1e-12, 1e-15, "rankdata / sem")


@functools.lru_cache(maxsize=None)
def _order_stats_jit():
    return netcl.jit(functools.partial(_order_stats, st))


def _compare_tree(got, want, what):
    assert type(got).__name__ == type(want).__name__ == "ModeResult"
    for g, w in zip(got, want):
        _compare(g, w, 0, 0, what)


def _options(lib, a):
    return ([lib.mode(a, axis=1, keepdims=kd) for kd in (False, True)] +
            [lib.mode(a[0, :1])] +
            [lib.sem(a, axis=None, ddof=0, keepdims=kd) for kd in (False, True)] +
            [lib.rankdata(a, "dense", axis=0)])


def test_mode_keepdims_sem_options_and_vmap():
    a = np.array([[1, 2, 1, 3, 2, 1], [3, 1, 3, 2, 1, 3], [1, 2, 2, 3, 1, 2]], np.int32)
    got = netcl.jit(functools.partial(_options, st))(jnp.asarray(a))
    want = _options(jst, JJ.asarray(a))
    for g, w in zip(got[:3], want[:3]):
        _compare_tree(g, w, "mode")
    for g, w in zip(got[3:], want[3:]):
        _compare(g, w, 1e-6, 0, "sem (float32: from int32) / rankdata")
    got = netcl.vmap(lambda v: st.mode(v).count)(jnp.asarray(a))
    _compare(got, jax.vmap(lambda v: jst.mode(v).count)(JJ.asarray(a)), 0, 0, "vmap mode")


def test_trapezoid_and_vq_match_jax():
    rng = np.random.default_rng(4)
    y, x = rng.standard_normal((3, 5)), np.sort(rng.standard_normal(5))
    si, jsi = netcl.scipy.integrate, jax.scipy.integrate
    _compare(si.trapezoid(jnp.asarray(y)), jsi.trapezoid(JJ.asarray(y)), 1e-13, 0, "trap")
    _compare(si.trapezoid(jnp.asarray(y), jnp.asarray(x)),
             jsi.trapezoid(JJ.asarray(y), JJ.asarray(x)), 1e-13, 1e-15, "trap x")
    _compare(si.trapezoid(jnp.asarray(y), dx=0.5, axis=0),
             jsi.trapezoid(JJ.asarray(y), dx=0.5, axis=0), 1e-13, 1e-15, "trap dx")
    obs, book = rng.standard_normal((6, 3)), rng.standard_normal((4, 3))
    vq, jvq = netcl.scipy.cluster.vq.vq, jax.scipy.cluster.vq.vq
    for o, b in ((obs, book), (obs[:, 0], book[:, 0])):
        code, dist = vq(jnp.asarray(o), jnp.asarray(b))
        jcode, jdist = jvq(JJ.asarray(o), JJ.asarray(b))
        _compare(code, jcode, 0, 0, "vq code")
        _compare(dist, jdist, 1e-13, 0, "vq dist")


# ---- errors ---------------------------------------------------------------------------------

def test_bad_arguments_raise_typed_errors_naming_the_function():
    v = jnp.asarray(np.ones(3))
    raises_with(TypeError, lambda: st.t.logpdf([1.0], 2.0), "t.logpdf", "'x'")
    raises_with(TypeError, lambda: st.cauchy.cdf("a"), "cauchy.cdf")
    raises_with(ValueError, lambda: st.chi2.cdf(v, jnp.ones(2)), "chi2.cdf", "broadcast")
    raises_with(TypeError, lambda: st.gumbel_r.ppf(jnp.asarray(np.ones(2, np.complex64))),
                "gumbel_r.ppf", "complex64")
    raises_with(ValueError, lambda: st.dirichlet.logpdf(v, jnp.ones((2, 2))),
                "dirichlet.logpdf", "one-dimensional")
    raises_with(ValueError, lambda: st.dirichlet.pdf(jnp.ones(5), v), "dirichlet.pdf", "x.shape")
    raises_with(ValueError, lambda: st.multinomial.logpmf(v, 3, v / 3), "multinomial.logpmf",
                "integer")
    raises_with(NotImplementedError, lambda: st.mode(v, nan_policy="omit"), "mode", "omit")
    raises_with(ValueError, lambda: st.mode(v, nan_policy="bad"), "mode", "Illegal nan_policy")
    raises_with(ValueError, lambda: st.mode(v, axis=2), "mode", "axis")
    raises_with(ValueError, lambda: st.rankdata(v, "foo"), "rankdata", "unknown method")
    raises_with(TypeError, lambda: st.rankdata([1, 2]), "rankdata")
    raises_with(ValueError, lambda: st.sem(v, nan_policy="raise"), "sem", "raise")
    raises_with(ValueError, lambda: st.gaussian_kde(jnp.ones(1)), "gaussian_kde", "multiple")
    raises_with(ValueError, lambda: st.gaussian_kde(v, bw_method="x"), "gaussian_kde",
                "bw_method")
    raises_with(ValueError, lambda: st.gaussian_kde(v, weights=jnp.ones(2)), "weights")
    kde = st.gaussian_kde(jnp.asarray([1.0, 2.0, 4.0]))
    raises_with(ValueError, lambda: kde.evaluate(jnp.ones((2, 2))), "gaussian_kde.evaluate",
                "dimension")
    raises_with(NotImplementedError, lambda: kde.integrate_box(0.0, 1.0), "integrate_box_1d")
    raises_with(NotImplementedError, lambda: kde.set_bandwidth("scott"), "set_bandwidth")
    raises_with(ValueError, lambda: kde.integrate_box_1d(v, 1.0), "integrate_box_1d",
                "scalars")
    raises_with(ValueError, lambda: netcl.scipy.integrate.trapezoid(v, axis=3), "trapezoid")
    raises_with(ValueError, lambda: netcl.scipy.cluster.vq.vq(jnp.ones((2, 3)), v), "vq",
                "same rank")
