"""The rest of jax.scipy.special in netcl.scipy.special (special_more.py,
special_integrals.py): values against scipy in float32 and float64 over grids through the
edges (0, negative, large, inf, NaN), edge conventions, float64 gradient checks
(check_grads, and derivatives against closed forms or scipy finite differences), jit and
vmap, and argument errors."""
import math

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.special as sp
from netcl.test_util import check_grads
from util import as_dtype, assert_agrees, concat_points, grid_points, raises_with

ss = pytest.importorskip("scipy.special")



_SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]
_X = concat_points(np.linspace(-20.5, 30, 1011), [1e-30, 100.3, 170.5, -170.5], _SPECIAL)
with np.errstate(invalid="ignore"):
    _X = _X[~((_X < 0) & (np.abs(_X - np.round(_X)) < 1e-3) & np.isfinite(_X))]   # off poles
_AB = [-2.5, -1.5, -0.5, 0.1, 0.5, 1.0, 2.0, 3.5, 10.0, 50.0, 200.0]
_BESSEL = concat_points(np.linspace(-100, 100, 801), np.logspace(-30, 3, 34), -np.logspace(-30, 2.8, 20),
               _SPECIAL)
_GA = [0, 1e-3, 0.1, 0.5, 1, 1.5, 2, 5, 10, 30, 100, 500, 1000, np.inf, np.nan]
_GX = [0, 1e-5, 0.01, 0.1, 0.5, 1, 1.5, 2, 3, 5, 9, 10, 11, 30, 95, 100, 105, 500, 1000, 1100,
       np.inf, np.nan, -1]
_IB = ([0, 0.01, 0.5, 1, 2.5, 10, 100, 1000, np.inf], [0, 0.01, 0.5, 1, 3, 10, 100, 1000],
       [-0.5, 0, 1e-10, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-10, 1, 1.5, np.nan])
_EXPI = concat_points(np.linspace(-60, 100, 1601), np.logspace(-30, 2.84, 40), -np.logspace(-30, 2.84, 40),
             [0, np.inf, -np.inf, np.nan])
_EXPI_NEAR_ZERO = np.abs(_EXPI - 0.3725074107813666) < 1e-2     # (absolute accuracy there)
_ZETA = grid_points([1, 1.001, 1.5, 2, 3, 4.5, 10, 30, 60, 0.5, -1],
              [-3, -1.5, -0.5, 0, 1e-3, 0.5, 1, 2, 10, 1e3, 1e8, np.inf, np.nan])


def _polygamma_ref(n, x):
    return ss.polygamma(n.astype(int), x)


# (name, netcl function, scipy reference, argument arrays, (rtol, atol) for float32 and for
# float64). The tolerances are a few times the measured errors: gamma, factorial, poch and
# beta are exp(log form), whose relative error grows with the size of the log (x = 30:
# gammaln 71, 7e-6 in float32); gammaincc below x = 1 is 1 - P (1e-12 where Q is 2e-4).
VALUE_CASES = [
    ("gamma", sp.gamma, ss.gamma, (_X,), (1e-5, 0), (5e-14, 0)),
    ("gammasgn", sp.gammasgn, ss.gammasgn, (_X[np.isfinite(_X)],), (0, 0), (0, 0)),
    ("loggamma", sp.loggamma, lambda x: np.where(x >= 0, ss.gammaln(x), np.nan), (_X,),
     (1e-6, 0), (5e-13, 1e-15)),
    ("beta", sp.beta, ss.beta, grid_points(_AB, _AB), (1e-4, 0), (1e-12, 0)),
    ("factorial", sp.factorial, ss.factorial, (concat_points(np.arange(-3, 175), [2.5, 10.5, np.nan]),),
     (1e-5, 0), (5e-14, 0)),
    ("comb", sp.comb, ss.comb, grid_points(np.arange(-2, 70), np.arange(-2, 70)), (2e-5, 0),
     (5e-14, 0)),
    ("comb_real", sp.comb, ss.comb, grid_points([0.5, 3.7, 10.2, 40.5], [0.0, 0.3, 1.0, 2.5, 11.0]),
     (2e-5, 0), (5e-14, 0)),
    ("poch", sp.poch, ss.poch, grid_points(_AB[:-1], [-2.5, -0.5, 0.0, 0.1, 0.5, 1, 2, 3.5, 10]),
     (2e-4, 0), (1e-12, 0)),
    ("rel_entr", sp.rel_entr, ss.rel_entr, grid_points(_AB + _SPECIAL, _AB + _SPECIAL), (1e-6, 1e-7),
     (1e-15, 1e-16)),
    ("kl_div", sp.kl_div, ss.kl_div, grid_points(_AB + [0.0, np.nan], _AB + [0.0, np.inf, np.nan]),
     (1e-6, 2e-5), (1e-15, 1e-13)),
    ("boxcox", sp.boxcox, ss.boxcox, grid_points([0, 1e-5, 0.5, 1, 2, 10, 1e3, -1, np.nan],
                                           [-2.5, -0.5, -1e-9, 0, 1e-9, 0.1, 0.5, 1, 3]),
     (1e-5, 1e-7), (1e-14, 1e-16)),
    ("boxcox1p", sp.boxcox1p, ss.boxcox1p, grid_points([-0.5, 0, 1e-8, 0.5, 1, 10, 1e3, -1, np.nan],
                                                 [-2.5, -0.5, -1e-9, 0, 1e-9, 0.1, 0.5, 1, 3]),
     (1e-5, 1e-7), (1e-14, 1e-16)),
    ("i0e", sp.i0e, ss.i0e, (_BESSEL,), (1e-6, 0), (2e-15, 0)),
    ("i1e", sp.i1e, ss.i1e, (_BESSEL,), (2e-6, 0), (3e-15, 0)),
    ("i0", sp.i0, ss.i0, (_BESSEL,), (2e-6, 0), (3e-15, 0)),
    ("i1", sp.i1, ss.i1, (_BESSEL,), (2e-6, 0), (3e-15, 0)),
    ("erfcx", sp.erfcx, ss.erfcx, (concat_points(np.linspace(-30, 50, 1601), np.logspace(-30, 30, 61),
                                        -np.logspace(-30, 1.4, 20), _SPECIAL),),
     (1e-6, 0), (2e-13, 0)),
    ("gammainc", sp.gammainc, ss.gammainc, grid_points(_GA, _GX), (1e-5, 1e-7), (2e-12, 1e-300)),
    ("gammaincc", sp.gammaincc, ss.gammaincc, grid_points(_GA, _GX), (1e-5, 1e-7), (1e-11, 1e-300)),
    ("betainc", sp.betainc, ss.betainc, grid_points(*_IB), (1e-4, 1e-7), (1e-12, 1e-300)),
    ("zeta", sp.zeta, ss.zeta, _ZETA, (2e-6, 0), (1e-14, 0)),
    ("polygamma", lambda n, x: sp.polygamma(n.astype(jnp.int32), x), _polygamma_ref,
     grid_points(np.arange(0, 6), concat_points(np.linspace(-5.55, 20, 52), [0, 1e-3, 100, 1e4, np.nan])),
     (1e-5, 1e-4), (1e-13, 1e-13)),
    ("expn", sp.expn, ss.expn, grid_points(np.arange(0, 8), [0, 1e-10, 0.01, 0.5, 0.99, 1, 1.01, 1.5,
                                                      1.99, 2, 2.01, 2.5, 5, 10, 50, 700, np.inf,
                                                      np.nan, -1]),
     (1e-5, 0), (2e-14, 0)),
    ("expn_large_n", sp.expn, ss.expn, grid_points([60, 500], np.linspace(0.1, 100, 25)),
     (1e-5, 0), (2e-14, 0)),
    ("exp1", sp.exp1, ss.exp1, (concat_points(np.linspace(0, 60, 601), np.logspace(-30, 2.8, 40),
                                     [-1, np.inf, np.nan]),), (2e-6, 0), (2e-14, 0)),
    ("expi", sp.expi, ss.expi, (_EXPI[~_EXPI_NEAR_ZERO],), (2e-6, 0), (1e-13, 0)),
    ("expi_near_zero", sp.expi, ss.expi, (_EXPI[_EXPI_NEAR_ZERO],), (0, 2e-7), (0, 1e-16)),
    ("spence", sp.spence, ss.spence, (concat_points(np.linspace(0, 10, 501), np.logspace(-30, 30, 61),
                                           [-1, np.inf, np.nan]),), (1e-6, 0), (1e-14, 0)),
    ("dawsn", sp.dawsn, ss.dawsn, (concat_points(np.linspace(-60, 60, 1201), np.logspace(-30, 30, 61),
                                        -np.logspace(-30, 30, 61), _SPECIAL),),
     (2e-6, 0), (1e-14, 0)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_scipy(case, dtype):
    name, fn, ref, args, tol32, tol64 = case
    args = [np.asarray(a, dtype) for a in args]
    got = fn(*[jnp.asarray(a) for a in args])
    assert np.asarray(got).dtype == dtype, name
    with np.errstate(all="ignore"):
        # the reference at the same (rounded) arguments, rounded to the dtype (so that
        # overflow and underflow agree)
        want = np.asarray(ref(*[a.astype(np.float64) for a in args])).astype(dtype)
    rtol, atol = tol32 if dtype == np.float32 else tol64
    assert_agrees(got, want, rtol, atol, f"{name} {dtype.__name__}")


def test_edge_conventions():
    f = as_dtype(_SPECIAL + [-1.0, -2.0], np.float64)      # 0, -0, inf, -inf, nan, -1, -2
    nan, inf = np.nan, np.inf
    # gammasgn and gamma: +-1 / +-inf at +-0, NaN at the poles and at -inf (as JAX)
    assert_agrees(sp.gammasgn(f), [1, -1, 1, nan, nan, nan, nan], 0)
    assert_agrees(sp.gamma(f), [inf, -inf, inf, nan, nan, nan, nan], 0)
    assert_agrees(sp.loggamma(f), [inf, inf, inf, nan, nan, nan, nan], 0)
    # factorial of an integer is the exact n! (rounded to the dtype)
    for dt, top in ((np.float32, 34), (np.float64, 170)):
        k = np.arange(top + 1)
        got = np.asarray(sp.factorial(as_dtype(k, dt)))
        assert (got == np.array([math.factorial(int(i)) for i in k], np.float64).astype(dt)).all()
    # beta at a pole of Gamma(a + b) only: 0; poch with z + m at a pole: inf, z at one: 0
    assert_agrees(sp.beta(as_dtype([-2.5, 1.0], np.float64), as_dtype([-0.5, -1.0], np.float64)),
                  [0.0, nan], 0)
    assert_agrees(sp.poch(as_dtype([0.5, -2.0, 3.0], np.float64), as_dtype([-1.5, 0.5, 0.0], np.float64)),
                  [inf, 0.0, 1.0], 0)
    # gammainc and its complement at the edges (as scipy)
    a = as_dtype([0.0, 0.0, 2.0, 2.0, inf, -1.0, 1.0], np.float64)
    x = as_dtype([0.5, 0.0, 0.0, inf, 1.0, 1.0, -1.0], np.float64)
    assert_agrees(sp.gammainc(a, x), [1, nan, 0, 1, 0, nan, nan], 0)
    assert_agrees(sp.gammaincc(a, x), [0, nan, 1, 0, 1, nan, nan], 0)
    # zeta: inf at x == 1 and the poles of q, NaN for x < 1; q = inf: 0
    assert_agrees(sp.zeta(as_dtype([1.0, 2.0, 0.5, 2.0, 2.0, nan], np.float64),
                          as_dtype([1.0, -2.0, 1.0, inf, -1.5, 1.0], np.float64)),
                  [inf, inf, nan, 0.0, ss.zeta(2.0, -1.5), nan], 1e-14)
    # polygamma: digamma's signed pole at 0 (n = 0), NaN for n < 0
    assert_agrees(sp.polygamma(jnp.asarray([0, 0, -1, 1]), as_dtype([0.0, -0.0, 1.0, 0.0],
                                                                 np.float64)),
                  [-inf, inf, nan, inf], 0)
    # exponential integrals
    assert_agrees(sp.expi(as_dtype([0.0, inf, -inf, 800.0], np.float64)), [-inf, inf, -0.0, inf], 0)
    assert_agrees(sp.expn(as_dtype([0.0, 1.0, 3.0, 2.5], np.float64),
                          as_dtype([0.0, 0.0, 0.0, 1.0], np.float64)), [inf, inf, 0.5, nan], 0)
    assert_agrees(sp.erfcx(as_dtype([-30.0, inf, -inf], np.float64)), [inf, 0.0, inf], 0)
    assert_agrees(sp.dawsn(as_dtype([inf, -inf, -0.0], np.float64)), [0.0, -0.0, -0.0], 0)


def test_bernoulli():
    assert_agrees(sp.bernoulli(0), [1.0], 0)
    assert_agrees(sp.bernoulli(2), [1.0, -0.5, 1 / 6], 1e-15)
    from fractions import Fraction
    b = [Fraction(1)]                         # exactly, from sum_k C(m+1, k) B_k = 0
    for m in range(1, 81):
        b.append(-sum(Fraction(math.comb(m + 1, k)) * b[k] for k in range(m)) / (m + 1))
    got = np.asarray(sp.bernoulli(80))
    assert got.shape == (81,) and got.dtype == np.float64
    assert_agrees(got, [float(v) for v in b], 1e-14, what="bernoulli(80)")
    for n in (64, 300):                       # (scipy's own values are good to about 1e-11)
        assert_agrees(sp.bernoulli(n)[2:], ss.bernoulli(n)[2:], 1e-10, what=f"bernoulli({n})")
    raises_with(ValueError, lambda: sp.bernoulli(-1), "bernoulli", "n")
    raises_with(TypeError, lambda: sp.bernoulli(2.0), "bernoulli", "n")


# ---- derivatives --------------------------------------------------------------------------

GRAD_CASES = [
    ("gamma", sp.gamma, ([-2.5, 0.3, 1.0, 4.5],), 2),
    ("beta", sp.beta, ([0.5, 2.0, 7.0], [1.5, 0.3, 3.0]), 1),
    ("factorial", sp.factorial, ([0.5, 3.0, 7.2],), 1),
    ("comb", sp.comb, ([5.5, 10.0, 30.0], [2.0, 3.5, 7.0]), 1),
    ("poch", sp.poch, ([0.5, 2.0, 7.0], [1.5, 0.3, -0.7]), 1),
    ("rel_entr", sp.rel_entr, ([0.2, 1.0, 3.0], [0.5, 1.0, 0.1]), 2),
    ("kl_div", sp.kl_div, ([0.2, 1.0, 3.0], [0.5, 1.0, 0.1]), 1),
    ("boxcox", sp.boxcox, ([0.5, 2.0, 7.0], [0.5, 1.3, -0.7]), 1),
    ("boxcox1p", sp.boxcox1p, ([0.5, 2.0, 7.0], [0.5, 1.3, -0.7]), 1),
    ("i0e", sp.i0e, ([-20.0, -3.0, 0.3, 8.5, 30.0],), 2),
    ("i1e", sp.i1e, ([-20.0, -3.0, 0.0, 0.3, 8.5, 30.0],), 2),
    ("i0", sp.i0, ([-3.0, 0.3, 5.0],), 1),
    ("i1", sp.i1, ([-3.0, 0.3, 5.0],), 1),
    ("erfcx", sp.erfcx, ([-3.0, -0.5, 0.3, 2.0, 30.0],), 2),
    ("gammainc", sp.gammainc, ([0.5, 2.0, 7.0, 30.0], [0.3, 3.0, 5.0, 35.0]), 1),
    ("gammaincc", sp.gammaincc, ([0.5, 2.0, 7.0, 30.0], [0.3, 3.0, 5.0, 35.0]), 1),
    ("betainc", sp.betainc, ([0.5, 2.0, 7.0], [1.5, 3.0, 2.0], [0.2, 0.5, 0.9]), 1),
    ("zeta", sp.zeta, ([2.0, 3.5, 7.0], [0.5, 2.0, 10.0]), 1),
    ("expn", lambda x: sp.expn(2, x), ([0.3, 1.5, 2.5, 10.0],), 2),
    ("exp1", sp.exp1, ([0.3, 1.5, 2.5, 10.0],), 2),
    ("expi", sp.expi, ([-3.0, 0.3, 1.5, 10.0, 60.0],), 2),
    ("spence", sp.spence, ([0.2, 0.7, 1.0, 1.5, 5.0],), 2),
    ("dawsn", sp.dawsn, ([-3.0, 0.1, 0.5, 4.0, 60.0],), 2),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_check_grads_float64(case):
    name, fn, args, order = case
    check_grads(fn, tuple(as_dtype(a, np.float64) for a in args), order=order)


def _vgrad(f, argnum=0):
    return netcl.vmap(netcl.grad(f, argnums=argnum))


def _fd(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_derivatives_against_closed_forms_and_scipy():
    x = np.array([0.01, 0.5, 2.0, 10.0, 80.0])
    a = np.array([0.5, 1.5, 3.0, 8.0, 60.0])
    # d/dx P(a, x) is the gamma density; d/da by central differences of scipy (the
    # derivatives in every argument from one grad: an eager pass through the series each)
    da, dx = _vgrad(sp.gammainc, (0, 1))(as_dtype(a, np.float64), as_dtype(x, np.float64))
    assert_agrees(dx, np.exp((a - 1) * np.log(x) - x - ss.gammaln(a)), 1e-12, 1e-300)
    assert_agrees(da, _fd(lambda v: ss.gammainc(v, x), a, 1e-6), 1e-6, 1e-12)
    assert_agrees(_vgrad(sp.gammaincc, 0)(as_dtype(a, np.float64), as_dtype(x, np.float64)),
                  -_fd(lambda v: ss.gammainc(v, x), a, 1e-6), 1e-6, 1e-12)
    b, t = np.array([0.7, 2.0, 5.0, 1.5]), np.array([0.1, 0.4, 0.8, 0.95])
    ab = as_dtype(a[:4], np.float64), as_dtype(b, np.float64), as_dtype(t, np.float64)
    da, db, dt = _vgrad(sp.betainc, (0, 1, 2))(*ab)
    assert_agrees(dt, t ** (a[:4] - 1) * (1 - t) ** (b - 1) / ss.beta(a[:4], b), 1e-12)
    assert_agrees(da, _fd(lambda v: ss.betainc(v, b, t), a[:4], 1e-6), 1e-6, 1e-12)
    assert_agrees(db, _fd(lambda v: ss.betainc(a[:4], v, t), b, 1e-6), 1e-6, 1e-12)
    # exact rules
    assert_agrees(_vgrad(sp.gamma)(as_dtype(a, np.float64)), ss.gamma(a) * ss.digamma(a), 1e-12)
    assert_agrees(_vgrad(sp.i0e)(as_dtype(x, np.float64)), ss.i1e(x) - ss.i0e(x), 1e-13, 1e-16)
    assert_agrees(_vgrad(sp.erfcx)(as_dtype(x, np.float64)),
                  2 * x * ss.erfcx(x) - 2 / np.sqrt(np.pi), 1e-11, 1e-15)
    assert_agrees(_vgrad(lambda v: sp.expn(3, v))(as_dtype(x, np.float64)), -ss.expn(2, x), 1e-13)
    assert_agrees(_vgrad(sp.expi)(as_dtype(x, np.float64)), np.exp(x) / x, 1e-13)
    assert_agrees(_vgrad(sp.spence)(as_dtype([0.5, 1.0, 3.0], np.float64)),
                  [np.log(0.5) / 0.5, -1.0, np.log(3.0) / -2.0], 1e-14)
    assert_agrees(_vgrad(sp.dawsn)(as_dtype(x, np.float64)), 1 - 2 * x * ss.dawsn(x), 1e-12, 1e-15)
    assert_agrees(_vgrad(lambda v: sp.zeta(3.0, v))(as_dtype(a, np.float64)),
                  -3.0 * ss.zeta(4.0, a), 1e-12)
    n = jnp.asarray(np.array([0, 1, 2, 3, 1]))
    assert_agrees(netcl.vmap(netcl.grad(sp.polygamma, argnums=1))(n, as_dtype(a, np.float64)),
                  ss.polygamma(np.array([1, 2, 3, 4, 2]), a), 1e-11)


# ---- jit and vmap -------------------------------------------------------------------------

JIT_CASES = [
    ("gammainc", sp.gammainc, (np.array([0.5, 2.0, 30.0, 200.0]),
                               np.array([0.3, 3.0, 25.0, 210.0]))),
    ("betainc", sp.betainc, (np.array([0.5, 2.0, 30.0]), np.array([1.5, 3.0, 40.0]),
                             np.array([0.2, 0.5, 0.45]))),
    ("expi", sp.expi, (np.linspace(-30, 60, 13),)),
    ("i0e", sp.i0e, (np.linspace(-30, 30, 13),)),
    ("zeta", sp.zeta, (np.linspace(1.5, 9, 13), np.linspace(0.2, 20, 13))),
]


@pytest.mark.parametrize("case", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_and_vmap_agree_with_eager(case):
    name, fn, args = case
    for dt, tol in ((np.float32, 1e-6), (np.float64, 1e-14)):
        xs = [as_dtype(a, dt) for a in args]
        eager = np.asarray(fn(*xs))
        assert_agrees(netcl.jit(fn)(*xs), eager, tol, 0, f"jit {name}")
        assert_agrees(netcl.vmap(fn)(*xs), eager, tol, 0, f"vmap {name}")


def test_grad_under_jit():
    a, x = np.array([0.5, 2.0, 7.0]), np.array([0.3, 3.0, 9.0])
    g = netcl.jit(netcl.grad(lambda u, v: jnp.sum(sp.gammainc(u, v)), argnums=(0, 1)))(
        as_dtype(a, np.float64), as_dtype(x, np.float64))
    assert_agrees(g[1], np.exp((a - 1) * np.log(x) - x - ss.gammaln(a)), 1e-12)
    assert_agrees(g[0], _fd(lambda v: ss.gammainc(v, x), a, 1e-6), 1e-6, 1e-12)


# ---- arguments ----------------------------------------------------------------------------

def test_argument_handling():
    # integers and Python scalars promote to the default float; shapes broadcast
    ints = jnp.asarray([1, 2, 3])
    out = sp.gammainc(ints, 2.0)
    # (as JAX: integers promote to the default float, float64 with x64 on)
    from netcl.core.dtypes import default_float_dtype
    assert np.asarray(out).dtype == default_float_dtype() and out.shape == (3,)
    assert np.asarray(sp.gammainc(jnp.asarray([1.0], jnp.float32), 2)).dtype == np.float32
    assert sp.beta(jnp.ones((2, 1), jnp.float32), jnp.ones((3,), jnp.float32)).shape == (2, 3)
    assert np.asarray(sp.i0(jnp.asarray([1.0], jnp.float16))).dtype == np.float16
    raises_with(ValueError, lambda: sp.polygamma(1.0, 2.0), "polygamma", "integer")
    raises_with(ValueError, lambda: sp.polygamma(jnp.asarray([1.0]), 2.0), "polygamma")
    raises_with(NotImplementedError, lambda: sp.zeta(2.0), "zeta", "Hurwitz")
    raises_with(NotImplementedError, lambda: sp.factorial(3, exact=True), "factorial")
    raises_with(TypeError, lambda: sp.comb(5.0, 2.0, repetition=1), "comb", "repetition")
    raises_with(TypeError, lambda: sp.gamma("x"), "gamma")
    assert_agrees(sp.comb(jnp.asarray([3.0, 0.0]), jnp.asarray([2.0, 0.0]), repetition=True),
                  [6.0, 1.0], 1e-12)
    # lax's special functions forward here
    assert_agrees(netcl.lax.igamma(as_dtype([2.0], np.float64), as_dtype([3.0], np.float64)),
                  ss.gammainc([2.0], [3.0]), 1e-13)
    assert_agrees(netcl.lax.bessel_i1e(as_dtype([2.0], np.float64)), ss.i1e([2.0]), 1e-14)
    assert_agrees(netcl.lax.polygamma(as_dtype([1.0, 2.0], np.float64), as_dtype([3.0, 3.0], np.float64)),
                  ss.polygamma([1, 2], [3.0, 3.0]), 1e-13)
    assert_agrees(netcl.lax.zeta(as_dtype([2.0], np.float64), as_dtype([1.0], np.float64)),
                  [np.pi ** 2 / 6], 1e-14)
