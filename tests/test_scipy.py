"""netcl.scipy.special and netcl.scipy.stats: values against scipy over grids that reach into
the tails and through the special points (float32, about 1e-6 relative), special values and
derivative conventions against JAX, float64 gradient checks (check_grads, and derivatives
against their closed forms), the same results under jit and vmap, and typed errors that name
the function and the argument before any kernel runs."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.special as sp
import netcl.scipy.stats as st
from netcl.test_util import check_grads
from util import assert_agrees, raises_with

ss = pytest.importorskip("scipy.special")
sst = pytest.importorskip("scipy.stats")

def _f32(x):
    return jnp.asarray(np.asarray(x, np.float32))


def _f64(x):
    return jnp.asarray(np.asarray(x, np.float64))


# ---- values against scipy, float32 ----------------------------------------------------------

def _grid(*parts):
    return np.concatenate([np.asarray(p, np.float64).ravel() for p in parts]).astype(np.float32)


_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]
_POS = _grid(np.linspace(1e-3, 100, 3001), np.logspace(-30, 30, 61), [0.5, 1.0, 1.5, 2.0, 2.5,
                                                                       8.5, 1.4616321])
_NEG = _grid(np.linspace(-20.3, -0.01, 601))
_NEG = _NEG[np.abs(_NEG - np.round(_NEG)) > 1e-3]      # (away from the poles)

# (name, function, scipy reference, argument grid, rtol, atol): measured float32 errors are
# 1e-7 to 4e-7 relative for all of these (the atol is for zeros of the function)
VALUE_CASES = [
    ("erf", sp.erf, ss.erf, _grid(np.linspace(-6, 6, 1201), _SPECIAL), 1e-6, 0),
    ("erfc", sp.erfc, ss.erfc, _grid(np.linspace(-6, 11, 1701), np.linspace(-30, 30, 121),
                                     _SPECIAL), 1e-6, 0),
    ("ndtr", sp.ndtr, ss.ndtr, _grid(np.linspace(-15, 9, 2401), [-40, 40], _SPECIAL), 1e-6, 0),
    ("log_ndtr", sp.log_ndtr, ss.log_ndtr,
     _grid(np.linspace(-60, 15, 3001), -np.logspace(1, 18, 35), _SPECIAL), 1e-6, 0),
    ("ndtri", sp.ndtri, ss.ndtri,
     _grid(np.linspace(0, 1, 2001), np.logspace(-44, -1, 87), 1 - np.logspace(-7, -1, 25),
           [-0.5, 1.5, np.nan]), 1e-6, 0),
    ("erfinv", sp.erfinv, ss.erfinv,
     _grid(np.linspace(-1, 1, 2001), 1 - np.logspace(-7, -1, 25), -1 + np.logspace(-7, -1, 25),
           [-1.5, 2.0, np.nan]), 1e-6, 0),
    ("gammaln", sp.gammaln, ss.gammaln, _POS, 1e-6, 0),
    ("gammaln_negative", sp.gammaln, ss.gammaln, _NEG, 1e-6, 2e-6),
    ("digamma", sp.digamma, ss.digamma, _POS, 1e-6, 1e-6),
    ("digamma_negative", sp.digamma, ss.digamma, _NEG, 1e-6, 1e-5),
    ("expit", sp.expit, ss.expit, _grid(np.linspace(-30, 30, 601), _SPECIAL), 1e-6, 0),
    ("logit", sp.logit, ss.logit, _grid(np.linspace(0, 1, 1001), np.logspace(-30, -1, 30),
                                        [-0.5, 2.0, np.nan]), 1e-6, 0),
    ("entr", sp.entr, ss.entr, _grid(np.linspace(-1, 5, 601), np.logspace(-30, 3, 34),
                                     _SPECIAL), 1e-6, 0),
]


@pytest.mark.parametrize("case", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_unary_values_match_scipy_float32(case):
    name, fn, ref, x, rtol, atol = case
    got = fn(_f32(x))
    assert np.asarray(got).dtype == np.float32
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    assert_agrees(got, want, rtol, atol, name)


def test_tails_are_not_computed_as_differences():
    # the cases that cancel when written as 1 - erf(x) or log(ndtr(x)) in float32
    assert_agrees(sp.erfc(_f32([5.0, 9.0])), ss.erfc([5.0, 9.0]), 1e-6)
    assert np.asarray(sp.erfc(_f32([9.0])))[0] > 0
    assert_agrees(sp.ndtr(_f32([-12.0])), ss.ndtr([-12.0]), 1e-6)
    assert_agrees(sp.log_ndtr(_f32([-1e4, -100.0, 12.0])), ss.log_ndtr([-1e4, -100.0, 12.0]),
                  1e-6)
    assert_agrees(sp.ndtri(_f32([1e-40])), ss.ndtri([np.float32(1e-40)]), 1e-6)
    assert_agrees(sp.erfinv(_f32([0.9999999])),
                  ss.erfinv([np.float32(0.9999999).astype(np.float64)]), 1e-6)


def test_binary_values_match_scipy_float32():
    v = _grid([-2.0, -1.0, -0.5, 0.0, 1e-30, 0.3, 1.0, 2.5, 7.0, 1e4, np.inf, np.nan])
    X, Y = (g.ravel() for g in np.meshgrid(v, v))
    with np.errstate(all="ignore"):
        assert_agrees(sp.xlogy(_f32(X), _f32(Y)), ss.xlogy(X.astype(float), Y.astype(float)),
                      1e-6, what="xlogy")
        assert_agrees(sp.xlog1py(_f32(X), _f32(Y)),
                      ss.xlog1py(X.astype(float), Y.astype(float)), 1e-6, what="xlog1py")
    ab = np.logspace(-3, 7, 41).astype(np.float32)
    A, B = (g.ravel() for g in np.meshgrid(ab, ab))
    assert_agrees(sp.betaln(_f32(A), _f32(B)), ss.betaln(A.astype(float), B.astype(float)),
                  1e-6, 1e-6, "betaln")
    a = np.linspace(2.5, 60, 200).astype(np.float32)
    for d in (1, 2, 5):
        want = [ss.multigammaln(float(v), d) for v in a]
        assert_agrees(sp.multigammaln(_f32(a), d), want, 1e-6, 0, f"multigammaln d={d}")


def test_float64_is_accurate_too():
    x = np.linspace(-37, 37, 297)
    assert_agrees(sp.ndtr(_f64(x)), ss.ndtr(x), 1e-12)
    assert_agrees(sp.log_ndtr(_f64(x)), ss.log_ndtr(x), 1e-12)
    assert_agrees(sp.erfc(_f64(x / 1.5)), ss.erfc(x / 1.5), 1e-12)
    p = np.concatenate([np.linspace(0, 1, 201), np.logspace(-300, -1, 30)])
    assert_agrees(sp.ndtri(_f64(p)), ss.ndtri(p), 1e-13)
    e = np.concatenate([np.linspace(-1, 1, 201), 1 - np.logspace(-15, -1, 15)])
    assert_agrees(sp.erfinv(_f64(e)), ss.erfinv(e), 1e-13)
    g = np.concatenate([np.linspace(0.01, 40, 400), -np.linspace(0.3, 20.7, 35),
                        np.logspace(-300, 300, 31)])
    assert_agrees(sp.gammaln(_f64(g)), ss.gammaln(g), 1e-12, 1e-14)
    assert_agrees(sp.digamma(_f64(g)), ss.digamma(g), 1e-12, 1e-13)
    assert np.asarray(sp.gammaln(_f64(g))).dtype == np.float64


def test_integer_and_python_scalar_inputs_promote_to_float():
    out = sp.gammaln(jnp.arange(1, 5, dtype=jnp.int32))   # (int64: float64 with x64)
    assert np.asarray(out).dtype == np.float32
    assert_agrees(out, ss.gammaln([1, 2, 3, 4]), 1e-6)
    assert abs(float(sp.ndtr(0.0)) - 0.5) < 1e-7
    assert abs(float(st.norm.cdf(1, loc=1)) - 0.5) < 1e-7


# ---- logsumexp and softmax ----------------------------------------------------------------

def test_logsumexp_matches_scipy():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4)) * 30).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    for axis in (None, 0, 1, -1, (0, 1)):
        for keepdims in (False, True):
            got = sp.logsumexp(_f32(a), axis=axis, keepdims=keepdims)
            assert_agrees(got, ss.logsumexp(a, axis=axis, keepdims=keepdims), 1e-6, 1e-6,
                          f"axis={axis} keepdims={keepdims}")
            r, s = sp.logsumexp(_f32(a), axis=axis, b=_f32(b), keepdims=keepdims,
                                return_sign=True)
            wr, ws = ss.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            assert_agrees(r, wr, 1e-5, 1e-5, "with b")
            assert_agrees(s, ws, 0)
    # a negative sum without return_sign is NaN; rows of -inf give -inf; +inf wins
    with np.errstate(all="ignore"):
        want = ss.logsumexp(a, axis=1, b=b)
    assert_agrees(sp.logsumexp(_f32(a), axis=1, b=_f32(b)), want, 1e-5, 1e-5)
    special = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [np.inf, -np.inf], [1000, 1000]],
                       np.float32)
    assert_agrees(sp.logsumexp(_f32(special), axis=1), [-np.inf, np.inf, np.inf,
                                                        1000 + np.log(2)], 1e-6)
    # b = 0 leaves an entry out; `where` too
    assert_agrees(sp.logsumexp(_f32([1.0, 200.0]), b=_f32([1.0, 0.0])), 1.0, 1e-6)
    assert_agrees(sp.logsumexp(_f32([1.0, np.inf]), b=_f32([1.0, 0.0])), 1.0, 1e-6)
    assert_agrees(sp.logsumexp(_f32([[1.0, 200.0]]), axis=1,
                               where=jnp.asarray([[True, False]])), [1.0], 1e-6)


def test_softmax_and_log_softmax_default_to_all_axes():
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    assert_agrees(sp.softmax(_f32(x)), ss.softmax(x), 1e-6)
    assert_agrees(sp.softmax(_f32(x), axis=1), ss.softmax(x, axis=1), 1e-6)
    assert_agrees(sp.log_softmax(_f32(x)), ss.log_softmax(x), 1e-6, 1e-6)
    assert_agrees(sp.log_softmax(_f32(x), axis=0), ss.log_softmax(x, axis=0), 1e-6, 1e-6)


# ---- stats against scipy.stats ------------------------------------------------------------

def test_norm_matches_scipy():
    x = _grid(np.linspace(-40, 40, 321), _SPECIAL)
    loc, scale = np.float32(0.5), np.float32(2.0)
    for name in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        got = getattr(st.norm, name)(_f32(x), loc=loc, scale=scale)
        with np.errstate(all="ignore"):
            want = getattr(sst.norm, name)(x.astype(float), loc=float(loc), scale=float(scale))
        # pdf is exp(logpdf), as in JAX: its relative error is logpdf's absolute one
        assert_agrees(got, want, 3e-5 if name == "pdf" else 2e-6, 0, f"norm.{name}")
    q = _grid(np.linspace(0, 1, 201), np.logspace(-30, -1, 30))
    assert_agrees(st.norm.ppf(_f32(q), 0.5, 2.0), sst.norm.ppf(q.astype(float), 0.5, 2.0),
                  1e-6, 1e-6, "norm.ppf")
    assert_agrees(st.norm.isf(_f32(q), 0.5, 2.0), sst.norm.isf(q.astype(float), 0.5, 2.0),
                  1e-6, 1e-6, "norm.isf")
    # broadcasting of loc and scale
    got = st.norm.logpdf(_f32(x[:5])[:, None], loc=_f32([0.0, 1.0]), scale=_f32([1.0, 3.0]))
    assert got.shape == (5, 2)


def test_other_distributions_match_scipy():
    x = _grid(np.linspace(-3, 6, 181))
    cases = [
        (st.laplace, sst.laplace, ("logpdf", "pdf", "cdf"), dict(loc=0.5, scale=1.5)),
        (st.logistic, sst.logistic, ("logpdf", "pdf", "cdf", "sf"), dict(loc=0.5, scale=1.5)),
        (st.uniform, sst.uniform, ("logpdf", "pdf", "cdf"), dict(loc=-1.0, scale=3.0)),
    ]
    for mod, ref, names, kw in cases:
        for name in names:
            with np.errstate(all="ignore"):
                want = getattr(ref, name)(x.astype(float), **kw)
            assert_agrees(getattr(mod, name)(_f32(x), **kw), want, 2e-6, 1e-7,
                          f"{ref.name}.{name}")
    q = _grid(np.linspace(0, 1, 41))
    assert_agrees(st.logistic.ppf(_f32(q), 0.5, 1.5), sst.logistic.ppf(q.astype(float), 0.5, 1.5),
                  1e-6, 1e-6)
    assert_agrees(st.uniform.ppf(_f32(q), -1.0, 3.0), sst.uniform.ppf(q.astype(float), -1, 3),
                  1e-6, 1e-6)
    k = _grid([-1, 0, 1, 2, 0.5])
    for p in (0.0, 0.3, 1.0):
        with np.errstate(all="ignore"):
            assert_agrees(st.bernoulli.logpmf(_f32(k[:4]), p), sst.bernoulli.logpmf(k[:4], p),
                          1e-6)
        assert_agrees(st.bernoulli.pmf(_f32(k[:4]), p), sst.bernoulli.pmf(k[:4], p), 1e-6)
        assert_agrees(st.bernoulli.cdf(_f32(k), p), sst.bernoulli.cdf(k, p), 1e-6)
        # (the ends differ: at q = 0 scipy gives -1, JAX 0; netcl follows JAX there)
        assert_agrees(st.bernoulli.ppf(_f32(q[1:-1]), p),
                      sst.bernoulli.ppf(q[1:-1].astype(float), p), 0)
    xs = _grid(np.linspace(0, 30, 121), [-1.0])
    for a in (0.5, 1.0, 3.0, 50.0):
        with np.errstate(all="ignore"):
            want = sst.gamma.logpdf(xs.astype(float), a, scale=2.0)
        assert_agrees(st.gamma.logpdf(_f32(xs), a, scale=2.0), want, 1e-6, 1e-5, f"gamma {a}")
        assert_agrees(st.gamma.pdf(_f32(xs), a, scale=2.0),
                      sst.gamma.pdf(xs.astype(float), a, scale=2.0), 1e-5, 1e-7)
    xb = _grid(np.linspace(-0.5, 2.5, 121))
    for a, b in ((0.5, 0.5), (1.0, 3.0), (2.0, 2.0), (40.0, 7.0)):
        with np.errstate(all="ignore"):
            want = sst.beta.logpdf(xb.astype(float), a, b, loc=0.0, scale=2.0)
        # (atol: the sum of terms of size 20 for a = 40, cancelling to 0.5 in float32)
        assert_agrees(st.beta.logpdf(_f32(xb), a, b, loc=0.0, scale=2.0), want, 2e-6, 1e-5,
                      f"beta {a} {b}")
    assert np.isnan(np.asarray(st.beta.logpdf(_f32([0.5]), -1.0, 2.0))).all()


def _spd(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def test_multivariate_normal_matches_scipy():
    rng = np.random.default_rng(2)
    n = 4
    cov = _spd(rng, n)
    x, mean = rng.standard_normal((6, n)), rng.standard_normal(n)
    want = sst.multivariate_normal.logpdf(x, mean, cov)
    assert_agrees(st.multivariate_normal.logpdf(_f32(x), _f32(mean), _f32(cov)), want, 2e-6)
    assert_agrees(st.multivariate_normal.pdf(_f32(x), _f32(mean), _f32(cov)),
                  sst.multivariate_normal.pdf(x, mean, cov), 1e-5)
    # a batch of covariances, broadcast against a batch of points
    covs = np.stack([cov, _spd(rng, n)])
    got = st.multivariate_normal.logpdf(_f64(x[:, None]), _f64(mean), _f64(covs))
    want = np.stack([sst.multivariate_normal.logpdf(x, mean, c) for c in covs], axis=1)
    assert_agrees(got, want, 1e-12)
    # diagonal (a 1-d cov, as scipy reads it), isotropic, and univariate forms
    d = np.array([0.5, 1.0, 2.0, 4.0])
    assert_agrees(st.multivariate_normal.logpdf(_f32(x), _f32(mean), _f32(d)),
                  sst.multivariate_normal.logpdf(x, mean, np.diag(d)), 2e-6)
    assert_agrees(st.multivariate_normal.logpdf(_f32(x), _f32(mean), 2.0),
                  sst.multivariate_normal.logpdf(x, mean, 2.0 * np.eye(n)), 2e-6)
    assert_agrees(st.multivariate_normal.logpdf(_f32(x[:, 0]), 0.5, 2.0),
                  sst.norm.logpdf(x[:, 0], 0.5, np.sqrt(2.0)), 2e-6)
    # not positive definite: NaN, as a Cholesky factorisation gives
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.isnan(np.asarray(st.multivariate_normal.logpdf(_f32([0, 0]), _f32([0, 0]),
                                                             _f32(bad))))


# ---- special values and derivative conventions against JAX --------------------------------

def test_special_values_match_jax():
    jax = pytest.importorskip("jax")
    jss = pytest.importorskip("jax.scipy.special")
    v = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.5, 0.5, np.inf, -np.inf, np.nan, 1e-30,
                  -1e-30, 1e30, -1e30, 1.5, -0.5], np.float32)
    for name in ("erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "gammaln", "digamma",
                 "entr", "logit", "expit"):
        want = np.asarray(getattr(jss, name)(jax.numpy.asarray(v)))
        got = getattr(sp, name)(_f32(v))
        if name == "digamma":   # at +-0 JAX's answer changed (0.10: NaN; 0.11: -inf): scipy's
            want = np.where(v == 0, ss.psi(v), want)
        # (JAX's float32 gammaln(1) is 4.8e-7, not 0: the atol)
        assert_agrees(got, want, 1e-5, 1e-6, name)
    X, Y = (g.ravel() for g in np.meshgrid(v, v))
    for name in ("xlogy", "xlog1py", "betaln"):
        want = np.asarray(getattr(jss, name)(jax.numpy.asarray(X), jax.numpy.asarray(Y)))
        assert_agrees(getattr(sp, name)(_f32(X), _f32(Y)), want, 1e-5, 1e-6, name)


def test_derivative_conventions_match_jax():
    jax = pytest.importorskip("jax")
    jss = pytest.importorskip("jax.scipy.special")
    x, y = np.float32([0.0, 0.0, 2.0]), np.float32([2.0, 0.5, 3.0])
    for name in ("xlogy", "xlog1py"):
        for argnum in (0, 1):
            f = getattr(jss, name)
            want = jax.vmap(jax.grad(f, argnums=argnum))(x, y)
            got = netcl.vmap(netcl.grad(getattr(sp, name), argnums=argnum))(_f32(x), _f32(y))
            assert_agrees(got, np.asarray(want), 1e-6, 0, f"{name} d/d{'xy'[argnum]}")
    xs = np.float32([1e-3, 0.5, 2.0])
    for name in ("entr", "logit", "expit", "log_ndtr", "ndtr", "erfc", "gammaln", "digamma"):
        want = jax.vmap(jax.grad(getattr(jss, name)))(xs if name != "logit" else xs / 3)
        got = netcl.vmap(netcl.grad(getattr(sp, name)))(_f32(xs if name != "logit" else xs / 3))
        assert_agrees(got, np.asarray(want), 1e-5, 1e-6, f"grad {name}")


# ---- derivatives, float64 -----------------------------------------------------------------

GRAD_CASES = [
    ("erfc", sp.erfc, ([-4.0, -0.5, 0.3, 1.5, 5.0],), 2),
    ("ndtr", sp.ndtr, ([-9.0, -2.0, 0.3, 1.5, 6.0],), 2),
    ("log_ndtr", sp.log_ndtr, ([-30.0, -5.0, -1.0, 0.5, 3.0, 9.0],), 2),
    ("ndtri", sp.ndtri, ([0.02, 0.1, 0.3, 0.5, 0.9, 0.98],), 2),
    ("erfinv", sp.erfinv, ([-0.99, -0.3, 0.0, 0.5, 0.95],), 2),
    ("gammaln", sp.gammaln, ([0.3, 1.7, 5.0, 12.0, -2.5],), 2),
    ("digamma", sp.digamma, ([0.3, 1.7, 5.0, 12.0, -2.5],), 1),
    ("betaln", sp.betaln, ([0.5, 3.0, 20.0, 1e3, 4.0], [2.0, 0.7, 30.0, 4.0, 1e3]), 1),
    ("multigammaln", lambda a: sp.multigammaln(a, 3), ([1.5, 4.0, 20.0],), 1),
    ("xlogy", sp.xlogy, ([0.5, 3.0, 2.0], [2.0, 0.7, 3.0]), 2),
    ("xlog1py", sp.xlog1py, ([0.5, 3.0, 2.0], [2.0, -0.7, 3.0]), 1),
    ("entr", sp.entr, ([0.1, 1.0, 3.0],), 2),
    ("logit", sp.logit, ([0.1, 0.5, 0.7, 0.95],), 2),
    ("expit", sp.expit, ([-3.0, 0.0, 4.0],), 1),
    ("logsumexp", lambda a, b: sp.logsumexp(a, axis=1, b=b),
     ([[0.1, -1.0, 2.0], [3.0, 0.5, 0.2]], [[1.0, 0.5, 2.0], [0.7, 1.5, 0.2]]), 1),
    ("softmax", lambda a: sp.softmax(a, axis=1), ([[0.1, -1.0, 2.0], [3.0, 0.5, 0.2]],), 1),
    ("log_softmax", sp.log_softmax, ([[0.1, -1.0, 2.0], [3.0, 0.5, 0.2]],), 1),
    ("norm.logpdf", st.norm.logpdf, ([-1.0, 0.5, 2.0], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]), 1),
    ("norm.cdf", st.norm.cdf, ([-1.0, 0.5, 2.0], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]), 1),
    ("norm.logcdf", st.norm.logcdf, ([-20.0, 0.5, 2.0], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]), 1),
    ("norm.logsf", st.norm.logsf, ([-1.0, 0.5, 20.0], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]), 1),
    ("norm.ppf", st.norm.ppf, ([0.05, 0.5, 0.9], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]), 1),
    ("laplace.logpdf", st.laplace.logpdf, ([-1.0, 0.5, 2.0], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]),
     1),
    ("laplace.cdf", st.laplace.cdf, ([-1.0, 0.5, 2.0], [0.2, 0.1, -0.3], [1.5, 0.7, 2.0]), 1),
    ("logistic.logpdf", st.logistic.logpdf, ([-1.0, 0.5, 40.0], [0.2, 0.1, -0.3], [1.5, 0.7,
                                                                                     2.0]), 1),
    ("gamma.logpdf", st.gamma.logpdf, ([0.5, 2.0, 7.0], [0.7, 2.0, 9.0]), 1),
    ("beta.logpdf", st.beta.logpdf, ([0.2, 0.5, 0.9], [0.7, 2.0, 9.0], [3.0, 2.0, 0.8]), 1),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads_float64(case):
    name, fn, args, order = case
    check_grads(fn, tuple(_f64(a) for a in args), order=order)


def test_multivariate_normal_gradients():
    rng = np.random.default_rng(3)
    n = 3
    cov = _spd(rng, n)
    x, mean = rng.standard_normal((2, n)), rng.standard_normal(n)
    check_grads(st.multivariate_normal.logpdf, (_f64(x), _f64(mean), _f64(cov)), order=1)
    # the covariance gradient is symmetric and equals the closed form
    # d/dS log N(x; m, S) = (S^-1 r r^T S^-1 - S^-1) / 2, summed over the points
    g = netcl.grad(lambda c: jnp.sum(st.multivariate_normal.logpdf(_f64(x), _f64(mean), c)))(
        _f64(cov))
    inv = np.linalg.inv(cov)
    want = sum(0.5 * (inv @ np.outer(r, r) @ inv - inv) for r in x - mean)
    assert_agrees(g, want, 1e-10, 1e-12)


def test_derivatives_equal_their_closed_forms():
    x = np.array([-40.0, -10.0, -1.0, 0.0, 5.0])
    grad = lambda f: netcl.vmap(netcl.grad(f))  # noqa: E731
    assert_agrees(grad(sp.log_ndtr)(_f64(x)),
                  np.exp(sst.norm.logpdf(x) - ss.log_ndtr(x)), 1e-12)
    assert_agrees(grad(sp.ndtr)(_f64(x)), sst.norm.pdf(x), 1e-12)
    assert_agrees(grad(sp.erfc)(_f64(x / 5)), -2 / np.sqrt(np.pi) * np.exp(-(x / 5) ** 2),
                  1e-12)
    p = np.array([1e-20, 0.01, 0.5, 0.99])
    assert_agrees(grad(sp.ndtri)(_f64(p)), 1 / sst.norm.pdf(ss.ndtri(p)), 1e-12)
    e = np.array([-0.999999, 0.2, 0.95])
    assert_agrees(grad(sp.erfinv)(_f64(e)), np.sqrt(np.pi) / 2 * np.exp(ss.erfinv(e) ** 2),
                  1e-11)
    g = np.array([0.01, 0.7, 1.4616321449683622, 3.0, 50.0, -3.3])
    assert_agrees(grad(sp.gammaln)(_f64(g)), ss.digamma(g), 1e-12, 1e-14)
    assert_agrees(grad(sp.digamma)(_f64(g)), ss.polygamma(1, g), 1e-11)
    assert_agrees(grad(lambda a: sp.betaln(a, 3.0))(_f64(g[:5])),
                  ss.digamma(g[:5]) - ss.digamma(g[:5] + 3.0), 1e-11, 1e-13)


# ---- jit and vmap -------------------------------------------------------------------------

JIT_CASES = [
    ("log_ndtr", sp.log_ndtr, np.linspace(-50, 10, 13)),
    ("ndtri", sp.ndtri, np.linspace(0, 1, 13)),
    ("gammaln", sp.gammaln, np.linspace(-5.5, 30, 13)),
    ("digamma", sp.digamma, np.linspace(-5.5, 30, 13)),
    ("erfinv", sp.erfinv, np.linspace(-1, 1, 13)),
    ("norm.logsf", lambda x: st.norm.logsf(x, 1.0, 2.0), np.linspace(-50, 50, 13)),
]


@pytest.mark.parametrize("case", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_agrees_with_eager(case):
    name, fn, x = case
    eager = fn(_f32(x))
    jitted = netcl.jit(fn)(_f32(x))
    assert_agrees(jitted, np.asarray(eager), 1e-6, 1e-7, name)


def test_grad_under_jit_and_vmap():
    x = np.array([-30.0, -2.0, 0.5, 4.0])
    g = netcl.jit(netcl.grad(lambda v: jnp.sum(sp.log_ndtr(v))))(_f64(x))
    assert_agrees(g, np.exp(sst.norm.logpdf(x) - ss.log_ndtr(x)), 1e-12)
    a = np.random.default_rng(4).standard_normal((5, 3)).astype(np.float32) * 10
    rows = netcl.vmap(sp.logsumexp)(_f32(a))
    assert_agrees(rows, ss.logsumexp(a, axis=1), 1e-6)
    rng = np.random.default_rng(5)
    cov, xs, mean = _spd(rng, 3), rng.standard_normal((4, 3)), rng.standard_normal(3)
    per_point = netcl.vmap(st.multivariate_normal.logpdf, (0, None, None))(
        _f64(xs), _f64(mean), _f64(cov))
    assert_agrees(per_point, sst.multivariate_normal.logpdf(xs, mean, cov), 1e-12)
    jitted = netcl.jit(st.multivariate_normal.logpdf)(_f64(xs), _f64(mean), _f64(cov))
    assert_agrees(jitted, sst.multivariate_normal.logpdf(xs, mean, cov), 1e-12)


# ---- errors -------------------------------------------------------------------------------

def test_bad_arguments_raise_typed_errors_before_any_kernel(kernel_launches):
    x3, x4 = _f32([1.0, 2.0, 3.0]), _f32([1.0, 2.0, 3.0, 4.0])
    m22 = _f32([[1.0, 2.0], [3.0, 4.0]])
    ints = jnp.arange(4)                              # (would need a conversion kernel)
    before = len(kernel_launches)
    raises_with(TypeError, lambda: sp.ndtr([1.0, 2.0]), "ndtr", "'x'", "list")
    raises_with(TypeError, lambda: sp.gammaln("3"), "gammaln", "'x'")
    raises_with(TypeError, lambda: sp.erfc(None), "erfc", "'x'")
    raises_with(TypeError, lambda: sp.digamma(np.array([1 + 2j])), "digamma", "'x'", "complex")
    raises_with(TypeError, lambda: sp.xlogy(x3, x4), "xlogy", "x (3,)", "y (4,)")
    raises_with(ValueError, lambda: sp.xlogy(ints, x3), "xlogy", "broadcast")
    raises_with(ValueError, lambda: sp.betaln(ints, x3), "betaln", "a (4,)", "b (3,)")
    raises_with(TypeError, lambda: sp.log_ndtr(x3, series_order=2.0), "log_ndtr", "series_order")
    raises_with(ValueError, lambda: sp.log_ndtr(x3, series_order=31), "log_ndtr", "series_order")
    raises_with(TypeError, lambda: sp.multigammaln(x3, 2.0), "multigammaln", "d")
    raises_with(ValueError, lambda: sp.multigammaln(x3, -1), "multigammaln", "d")
    raises_with(ValueError, lambda: sp.logsumexp(m22, axis=2), "logsumexp", "axis")
    raises_with(TypeError, lambda: sp.logsumexp(m22, axis=1.0), "logsumexp", "axis")
    raises_with(TypeError, lambda: sp.logsumexp(m22, keepdims="yes"), "logsumexp", "keepdims")
    raises_with(TypeError, lambda: sp.logsumexp(m22, return_sign=1), "logsumexp", "return_sign")
    raises_with(ValueError, lambda: sp.logsumexp(ints, b=x3), "logsumexp", "a (4,)", "b (3,)")
    raises_with(TypeError, lambda: sp.logsumexp(x3, where=x3), "logsumexp", "where")
    raises_with(ValueError, lambda: sp.softmax(m22, axis=-3), "softmax", "axis")
    raises_with(TypeError, lambda: st.norm.cdf("x"), "norm.cdf", "'x'")
    raises_with(ValueError, lambda: st.norm.logpdf(ints, scale=x3), "norm.logpdf", "scale (3,)")
    raises_with(TypeError, lambda: st.gamma.logpdf(x3, [2.0]), "gamma.logpdf", "'a'")
    raises_with(ValueError, lambda: st.beta.pdf(x3, 1.0, x4), "beta.pdf", "b (4,)")
    raises_with(TypeError, lambda: st.bernoulli.logpmf(x3, p=None), "bernoulli.logpmf", "'p'")
    raises_with(ValueError, lambda: st.uniform.cdf(x3, loc=x4), "uniform.cdf", "loc (4,)")
    mvn = st.multivariate_normal.logpdf
    raises_with(ValueError, lambda: mvn(x3, x3, m22), "multivariate_normal.logpdf", "cov", "(2, 2)")
    raises_with(ValueError, lambda: mvn(x4, x3, 1.0), "multivariate_normal.logpdf", "mean")
    raises_with(ValueError, lambda: mvn(x3, x3, _f32([1.0, 2.0])), "multivariate_normal.logpdf",
            "1-d cov")
    raises_with(NotImplementedError, lambda: mvn(x3, x3, 1.0, allow_singular=True),
            "multivariate_normal.logpdf", "allow_singular")
    raises_with(TypeError, lambda: st.multivariate_normal.pdf(x3, "m", 1.0),
            "multivariate_normal.pdf", "'mean'")
    assert len(kernel_launches) == before
    sp.xlogy(ints, ints)                     # the counter does see a valid call's kernels
    assert kernel_launches or netcl.default_device().is_numpy


def test_public_functions_have_docstrings_with_examples():
    mods = [sp] + [getattr(st, m) for m in st.__all__]
    for mod in mods:
        for name in mod.__all__:
            f = getattr(mod, name)
            assert f.__doc__ and ">>>" in f.__doc__, f"{mod.__name__}.{name}"
            assert f.__name__ == name
