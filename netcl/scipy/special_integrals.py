"""More of jax.scipy.special: modified Bessel functions of orders 0 and 1 (i0, i0e, i1, i1e),
erfcx, exponential integrals (expn, exp1, expi), Spence's function (the dilogarithm),
Dawson's integral and the Bernoulli numbers. Re-exported by
netcl.scipy.special; built from netcl operations only (grad, jit and vmap go through them),
with the exact derivatives as custom_jvp rules.

>>> import netcl.scipy.special as sp
>>> sp.exp1(jnp.asarray([0.5, 1.0]))    # [0.5597736, 0.21938393]
"""
import math
from fractions import Fraction

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..transforms.custom import custom_jvp
from . import _util as _u
from .special import (_defjvps, _digamma_impl, _erfc_impl, _erfc_ratio, _exp_neg_sq, _horner,
                      _is64)

__all__ = ["i0", "i0e", "i1", "i1e", "erfcx", "expn", "exp1", "expi", "spence", "dawsn",
           "bernoulli"]

_EULER = 0.57721566490153286061


def _safe(cond, x, fill):
    return jnp.where(cond, x, fill)


# ---- modified Bessel functions of orders 0 and 1 ------------------------------------------
# Chebyshev series (fitted for netcl in 40-digit arithmetic, mpmath): on [0, 8] of
# exp(-x) I0(x) and exp(-x) I1(x) / x in t = x/4 - 1, above 8 of sqrt(x) exp(-x) I_nu(x) in
# t = 16/x - 1 (smooth in 1/x; the leading term tends to 1/sqrt(2 pi)). float32 uses the
# terms above 1e-9.
_I0E_LO = [0.33839763720473803, -0.3046826723431984, 0.17162090152220877, -0.09490109704804764,
           0.04930528423967071, -0.02373741480589947, 0.010546460394594998,
           -0.004324309995050576, 0.0016394756169413357, -0.0005763755745385824,
           0.00018850288509584165, -5.754195010082104e-05, 1.6448448070728896e-05,
           -4.4167383584587505e-06, 1.1173875391201037e-06, -2.670793853940612e-07,
           6.046995022541919e-08, -1.300025009986248e-08, 2.6598237246823866e-09,
           -5.189795601635263e-10, 9.675809035373237e-11, -1.726826291441556e-11,
           2.95505266312964e-12, -4.856446783111929e-13, 7.676185498604936e-14,
           -1.1685332877993451e-14, 1.715391285555133e-15, -2.431279846547955e-16,
           3.3307945188222384e-17, -4.4153416464793395e-18]
_I1E_LO = [0.12629359322181682, -0.17641651835783406, 0.1026436586898471, -0.05294598120809499,
           0.024726449030626516, -0.010564084894626197, 0.004156422944312888,
           -0.0015135724506312532, 0.0005122859561685758, -0.00016176081582589674,
           4.781565107550054e-05, -1.3273163656039436e-05, 3.4702513081376785e-06,
           -8.568720264695455e-07, 2.0032947535521353e-07, -4.445059128796328e-08,
           9.381537386495773e-09, -1.8872497517228294e-09, 3.625590281552117e-10,
           -6.663489723502027e-11, 1.1736186298890901e-11, -1.9839743977649436e-12,
           3.223793365945575e-13, -5.042185504727912e-14, 7.600684294735408e-15,
           -1.1055969477353862e-15, 1.5536319577362005e-16, -2.111421214358166e-17,
           2.7779141127610464e-18]
_I0E_HI = [0.4022452055070544, 0.0033691164782556943, 6.889758346916825e-05,
           2.8913705208347567e-06, 2.0489185894690638e-07, 2.266668990498178e-08,
           3.3962320257083865e-09, 4.94060238822497e-10, 1.1889147107846439e-11,
           -3.1499165279632416e-11, -1.3215811840447713e-11, -1.7941785315068062e-12,
           7.180124451383666e-13, 3.8527783827421426e-13, 1.54008621752141e-14,
           -4.150569347287222e-14, -9.554846698828307e-15, 3.8116806693526224e-15,
           1.7725601330565263e-15, -3.425485619677219e-16, -2.8276239805165836e-16,
           3.461222867697461e-17, 4.46562142029676e-17, -4.830504485944182e-18,
           -7.233180487874754e-18, 9.921475412173699e-19, 1.193650890845982e-18]
_I1E_HI = [0.38928811750914005, -0.009761097491361469, -0.00011058893876262371,
           -3.882564808877691e-06, -2.512236237870209e-07, -2.6314688468895196e-08,
           -3.835380385964237e-09, -5.589743462196584e-10, -1.8974958123505413e-11,
           3.2526035830154884e-11, 1.4125807436613782e-11, 2.0356285441470896e-12,
           -7.198551776245908e-13, -4.0835511110921974e-13, -2.1015418427726643e-14,
           4.272440016711951e-14, 1.0420276984128802e-14, -3.8144030724370075e-15,
           -1.8803547755107825e-15, 3.3082023109209285e-16, 2.96262899764595e-16,
           -3.209525921993424e-17, -4.6503053684893586e-17, 4.414348323071708e-18,
           7.517296310842105e-18, -9.314178867326884e-19, -1.242193275194891e-18]


def _cheb(t, coeffs, is64):
    """sum_k c_k T_k(t) by Clenshaw's recurrence (terms below 1e-9 dropped in float32)."""
    if not is64:
        coeffs = [c for c in coeffs if abs(c) > 1e-9]
    b1 = b2 = jnp.zeros_like(t)
    t2 = t * 2.0
    for c in coeffs[:0:-1]:
        b1, b2 = t2 * b1 - b2 + c, b1
    return t * b1 - b2 + coeffs[0]


def _bessel_ie(x, order):
    """exp(-|x|) I_order(x), order 0 or 1."""
    is64 = _is64(x)
    a = jnp.abs(x)
    lo_c, hi_c = (_I0E_LO, _I0E_HI) if order == 0 else (_I1E_LO, _I1E_HI)
    small = a <= 8.0
    al = jnp.minimum(a, 8.0)
    lo = _cheb(al * 0.25 - 1.0, lo_c, is64)
    ah = jnp.maximum(a, 8.0)
    hi = _cheb(16.0 / ah - 1.0, hi_c, is64) * lax.rsqrt(ah)
    if order == 0:
        return jnp.where(small, lo, hi)
    return jnp.where(small, lo * x, jnp.sign(x) * hi)


@custom_jvp
def _i0e(x):
    return _bessel_ie(x, 0)


@custom_jvp
def _i1e(x):
    return _bessel_ie(x, 1)


_defjvps(_i0e, lambda t, out, x: t * (_i1e(x) - jnp.sign(x) * out))


def _i1e_deriv(t, out, x):
    # i1e' = i0e - i1e (sign(x) + 1/x), 1/2 at 0
    xs = _safe(x == 0, 1.0, x)
    d = _i0e(x) - out * (jnp.sign(x) + 1.0 / xs)
    return t * jnp.where(x == 0, 0.5, d)


_defjvps(_i1e, _i1e_deriv)


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x).

    >>> sp.i0e(jnp.asarray([0.0, 1.0, 100.0]))    # [1., 0.4657596, 0.03994438]
    """
    (x,), dt = _u.floats("i0e", x=x)
    return _u.finish(_i0e(x), dt)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x).

    >>> sp.i1e(jnp.asarray([0.0, 1.0, -100.0]))    # [0., 0.2079104, -0.03974415]
    """
    (x,), dt = _u.floats("i1e", x=x)
    return _u.finish(_i1e(x), dt)


def i0(x):
    """The modified Bessel function of order 0, I0(x) = exp(|x|) i0e(x) (inf from |x| =
    713.99 in float64, 91.9 in float32).

    >>> sp.i0(jnp.asarray([0.0, 1.0]))    # [1., 1.2660658]
    """
    (x,), dt = _u.floats("i0", x=x)
    return _u.finish(_unscale(x, _i0e(x)), dt)


def i1(x):
    """The modified Bessel function of order 1, I1(x) = exp(|x|) i1e(x).

    >>> sp.i1(jnp.asarray([0.0, 1.0]))    # [0., 0.5651591]
    """
    (x,), dt = _u.floats("i1", x=x)
    return _u.finish(_unscale(x, _i1e(x)), dt)


def _unscale(x, scaled):
    # exp(|x|) * scaled as two halves: finite wherever the result is (exp(|x|) alone
    # overflows first)
    h = jnp.exp(jnp.abs(x) * 0.5)
    return h * (scaled * h)


# ---- erfcx --------------------------------------------------------------------------------

@custom_jvp
def _erfcx(x):
    a = jnp.abs(x)
    # |x| >= 1: the ratio erfc(a) exp(a^2) that erfc uses, directly (no overflow, no
    # underflow at any a); x <= -1: 2 exp(x^2) - erfcx(-x); |x| < 1: the product
    big = jnp.maximum(a, 1.0)
    r = _erfc_ratio(big)
    neg = 2.0 / _exp_neg_sq(jnp.minimum(big, 27.5), 1.0) - r
    xs = jnp.clip(x, -1.0, 1.0)
    mid = jnp.exp(xs * xs) * _erfc_impl(xs)
    return jnp.where(a < 1.0, mid, jnp.where(x > 0, r, jnp.where(x < -27.5, np.inf, neg)))


_defjvps(_erfcx, lambda t, out, x: t * (2.0 * x * out - 2.0 / math.sqrt(math.pi)))


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x): finite for large positive
    x (about 1 / (x sqrt(pi))), inf where 2 exp(x^2) overflows (x < -26.6 in float64).

    >>> sp.erfcx(jnp.asarray([0.0, 1.0, 1e4]))    # [1., 0.42758358, 5.641895e-05]
    """
    (x,), dt = _u.floats("erfcx", x=x)
    return _u.finish(_erfcx(x), dt)


# ---- exponential integrals ----------------------------------------------------------------
# E_n(x) = int_1^inf exp(-x t) / t^n dt. x > 2: the continued fraction
# E_n(x) = exp(-x) / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...))) (modified
# Lentz; it needs no zero guards, every denominator is > 1); x <= 2: the power series
# E_n(x) = (-x)^(n-1) / (n-1)! (psi(n) - log x) - sum_{k != n-1} (-x)^k / ((k - n + 1) k!).
_EXPN_CF_STEPS = {True: 80, False: 40}
_EXPN_SERIES_STEPS = {True: 30, False: 20}
_EXPN_SPLIT = 2.0        # (the fraction needs 100 steps for 1e-16 at x = 1, 64 at x = 2)


def _expn_cf(n, x, steps):
    nm1 = n - 1.0
    b = x + n
    d = 1.0 / b
    h = d
    c = jnp.full_like(x, 1e300 if _is64(x) else 1e30)
    for i in range(1, steps + 1):
        an = -float(i) * (nm1 + float(i))
        b = b + 2.0
        d = 1.0 / (an * d + b)
        c = b + an / c
        h = h * (c * d)
    return h * jnp.exp(-x)


def _expn_series(n, x, steps):
    nm1 = n - 1.0
    logx = jnp.log(x)
    ans = jnp.where(nm1 != 0, 1.0 / _safe(nm1 != 0, nm1, 1.0), -logx - _EULER)
    psi = _digamma_impl(jnp.maximum(n, 1.0))
    fact = jnp.ones_like(x)
    for i in range(1, steps + 1):
        fact = fact * (x * (-1.0 / i))
        at = nm1 == float(i)
        ans = ans + jnp.where(at, fact * (psi - logx),
                              -fact / _safe(at, 1.0, float(i) - nm1))
    return ans


def _expn_impl(n, x):
    is64 = _is64(x)
    ok = (n >= 1) & (n == jnp.floor(n)) & (x > 0) & jnp.isfinite(x) & jnp.isfinite(n)
    cf = x > _EXPN_SPLIT
    n_s = _safe(ok, n, 1.0)
    v_cf = _expn_cf(n_s, _safe(ok & cf, x, 3.0), _EXPN_CF_STEPS[is64])
    v_ser = _expn_series(n_s, _safe(ok & ~cf, x, 0.5), _EXPN_SERIES_STEPS[is64])
    v = jnp.where(cf, v_cf, v_ser)
    # the edges, as scipy: E_0(x) = exp(-x) / x; E_n(0) = 1/(n-1) (n >= 2), inf (n <= 1);
    # E_n(inf) = 0; NaN for n < 0, x < 0 and non-integer n
    xs = _safe(x > 0, x, 1.0)
    e0 = jnp.where(x == 0, np.inf, jnp.exp(-xs) / xs)
    at0 = jnp.where(n <= 1, np.inf, 1.0 / _safe(n > 1, n - 1.0, 1.0))
    edge = jnp.where(n == 0, e0, jnp.where(x == 0, at0, jnp.where(
        jnp.isinf(x) & (x > 0), 0.0, np.nan)))
    bad = (n < 0) | (x < 0) | (n != jnp.floor(n)) | jnp.isnan(x)
    return jnp.where(bad, np.nan, jnp.where(ok, v, edge))


@custom_jvp
def _expn(n, x):
    return _expn_impl(n, x)


# d/dx E_n(x) = -E_{n-1}(x) (n is an integer: no derivative in it, as in JAX)
_defjvps(_expn, None, lambda t, out, n, x: -t * _expn_impl(n - 1.0, x))


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt for
    integer n >= 0 and x >= 0 (NaN for n < 0, x < 0 or a non-integer n).

    >>> sp.expn(jnp.asarray([1, 2, 3]), 1.0)    # [0.21938393, 0.14849551, 0.10969197]
    """
    (n, x), dt = _u.floats("expn", n=n, x=x)
    return _u.finish(_expn(n, x), dt)


def exp1(x):
    """The exponential integral E1(x) = int_x^inf exp(-t) / t dt (inf at 0, NaN for x < 0).

    >>> sp.exp1(jnp.asarray([0.5, 1.0, 10.0]))    # [0.5597736, 0.21938393, 4.156969e-06]
    """
    (x,), dt = _u.floats("exp1", x=x)
    return _u.finish(_expn(jnp.ones_like(x), x), dt)


# Ei(x) for x > 0: the series euler_gamma + log x + sum_k x^k / (k k!) (positive terms) up to
# x = 50 (float64; 20 in float32), the asymptotic series exp(x)/x sum_k k!/x^k above
# (25 terms, 4e-18 at x = 50; 14 terms, 5e-8 at x = 20). Near its zero at x = 0.3725 the
# series has absolute, not relative, accuracy. Ei(x) = -E1(-x) for x < 0.
def _expi_pos(x):
    is64 = _is64(x)
    split, n_ser, n_asy = (50.0, 120, 25) if is64 else (20.0, 52, 14)
    xs = jnp.minimum(x, split)
    term = jnp.ones_like(x)
    acc = jnp.zeros_like(x)
    for k in range(1, n_ser + 1):
        term = term * (xs * (1.0 / k))
        acc = acc + term * (1.0 / k)
    small = _EULER + jnp.log(xs) + acc
    xb = jnp.maximum(x, split)
    r = 1.0 / xb
    s = jnp.ones_like(x)
    t = jnp.ones_like(x)
    for k in range(1, n_asy):
        t = t * (float(k) * r)
        s = s + t
    # exp(x) / x as exp(x/2) (exp(x/2) / x): no rounded argument, finite where Ei(x) is
    h = jnp.exp(xb * 0.5)
    big = jnp.where(jnp.isinf(xb), np.inf, h * (h / xb) * s)
    return jnp.where(x <= split, small, big)


@custom_jvp
def _expi(x):
    pos = x > 0
    vp = _expi_pos(_safe(pos, x, 1.0))
    vn = -_expn_impl(jnp.ones_like(x), _safe(pos, 1.0, -x))
    return jnp.where(x == 0, -np.inf, jnp.where(pos, vp, vn))


_defjvps(_expi, lambda t, out, x: t * (jnp.exp(x) / x))


def expi(x):
    """The exponential integral Ei(x) = -PV int_{-x}^inf exp(-t) / t dt (-inf at 0,
    -E1(-x) for x < 0).

    >>> sp.expi(jnp.asarray([-1.0, 1.0, 10.0]))    # [-0.21938393, 1.8951179, 2492.229]
    """
    (x,), dt = _u.floats("expi", x=x)
    return _u.finish(_expi(x), dt)


# ---- Spence's function --------------------------------------------------------------------
# spence(x) = int_1^x log t / (1 - t) dt = Li2(1 - x), x >= 0. With u = -log(1 - z),
# Li2(z) = sum_n B_n u^(n+1) / (n+1)! (B_1 = -1/2), which converges fast for |u| <= log 2:
# used for x in [1/2, 2] (u = -log x) and, through Li2(1-x) = pi^2/6 - log x log(1-x)
# - Li2(x), for x in [0, 1/2) (u = -log1p(-x)); x > 2 by spence(x) = -spence(1/x)
# - log(x)^2 / 2.
def _bernoulli_exact(n):
    """B_0 ... B_{n-1} as Fractions (B_1 = -1/2), from sum_{k<=m} C(m+1, k) B_k = 0."""
    b = [Fraction(1), Fraction(-1, 2)]
    for m in range(2, n):
        s = sum(Fraction(math.comb(m + 1, k)) * b[k] for k in range(m))
        b.append(-s / (m + 1))
    return b[:n]


_B_EXACT = _bernoulli_exact(64)
_BERNOULLI = [float(v) for v in _B_EXACT]         # (bernoulli: exact below 64)
_LI2 = [float(_B_EXACT[k] / math.factorial(k + 1)) for k in range(24)]


def _li2_bernoulli(u, is64):
    """Li2(1 - exp(-u)) for |u| <= log 2."""
    n = 24 if is64 else 12
    c = [v for v in _LI2[:n]]
    return u * _horner(u, c[::-1])


@custom_jvp
def _spence(x):
    is64 = _is64(x)
    inv = x > 2.0
    y = jnp.where(inv, 1.0 / _safe(inv, x, 1.0), x)
    low = y < 0.5
    ys = _safe(y > 0, y, 1.0)
    yl = _safe(low, y, 0.25)
    # y in [1/2, 2]: Li2(1 - y) with u = -log y
    mid = _li2_bernoulli(-jnp.log(ys), is64)
    # y in [0, 1/2): pi^2/6 - log y log1p(-y) - Li2(y), Li2(y) with u = -log1p(-y)
    l1 = jnp.log1p(-yl)
    lo = math.pi ** 2 / 6 - jnp.log(_safe(yl > 0, yl, 1.0)) * l1 - _li2_bernoulli(-l1, is64)
    v = jnp.where(low, lo, mid)
    lx = jnp.log(_safe(inv, x, 1.0))
    v = jnp.where(inv, -v - 0.5 * lx * lx, v)
    v = jnp.where(x == 0, math.pi ** 2 / 6, v)
    # NaN at inf too, as scipy and JAX
    return jnp.where((x < 0) | jnp.isnan(x) | jnp.isinf(x), np.nan, v)


def _spence_deriv(t, out, x):
    # d/dx Li2(1 - x) = log(x) / (1 - x) = -log1p(u) / u (u = x - 1); its Taylor series for
    # |u| < 1e-3 (five terms: 2e-16), so that the rule is itself differentiable at x = 1
    u = x - 1.0
    near = jnp.abs(u) < 1e-3
    un = _safe(near, u, 0.0)
    series = -(1.0 - un * (1 / 2 - un * (1 / 3 - un * (1 / 4 - un * (1 / 5)))))
    uf = _safe(near | (x <= 0), 1.0, u)
    return t * jnp.where(near, series, -jnp.log1p(uf) / uf)


_defjvps(_spence, _spence_deriv)


def spence(x):
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x) for x >= 0 (NaN for
    x < 0 and, as in scipy and JAX, at inf; pi^2/6 at 0, 0 at 1).

    >>> sp.spence(jnp.asarray([0.0, 0.5, 2.0]))    # [1.644934, 0.5822405, -0.8224670]
    """
    (x,), dt = _u.floats("spence", x=x)
    return _u.finish(_spence(x), dt)


# ---- Dawson's integral --------------------------------------------------------------------
# F(x) = exp(-x^2) int_0^x exp(t^2) dt. |x| < 0.2: its Taylor series; up to 50 (float64; 10
# in float32): Rybicki's sum F(x) ~ 1/sqrt(pi) sum_{n odd} exp(-(x - n h)^2) / n (error
# about exp(-(pi / 2h)^2): h = 0.25 and 14 pairs of terms for float64, h = 0.4 and 6 for
# float32, as in Numerical Recipes); beyond, the asymptotic series 1/(2x) sum (2k-1)!!
# / (2x^2)^k.
def _dawsn_impl(x):
    is64 = _is64(x)
    h, pairs, far, n_asy = (0.25, 14, 50.0, 10) if is64 else (0.4, 6, 10.0, 6)
    a = jnp.abs(x)
    # small: F(x) = sum_k (-1)^k 2^k x^(2k+1) / (2k+1)!!
    xs = jnp.minimum(a, 0.2)
    x2 = xs * xs
    term, acc = xs, xs
    for k in range(1, 12 if is64 else 6):
        term = term * (x2 * (-2.0 / (2 * k + 1)))
        acc = acc + term
    small = acc
    # Rybicki: n0 the even multiple of h nearest a, xp = a - n0 h
    am = jnp.clip(a, 0.2, far)
    n0 = 2.0 * jnp.round(am * (0.5 / h))
    xp = am - n0 * h
    e1 = jnp.exp(2.0 * h * xp)
    e2 = e1 * e1
    d1, d2 = n0 + 1.0, n0 - 1.0
    s = jnp.zeros_like(x)
    for i in range(1, pairs + 1):
        c = math.exp(-((2 * i - 1) * h) ** 2)
        s = s + c * (e1 / d1 + 1.0 / (d2 * e1))
        d1, d2, e1 = d1 + 2.0, d2 - 2.0, e1 * e2
    mid = (1 / math.sqrt(math.pi)) * jnp.exp(-xp * xp) * s
    # asymptotic
    ab = jnp.maximum(a, far)
    r = 1.0 / (2.0 * ab * ab)
    t = jnp.ones_like(x)
    acc2 = jnp.ones_like(x)
    for k in range(1, n_asy):
        t = t * ((2 * k - 1) * r)
        acc2 = acc2 + t
    big = jnp.where(jnp.isinf(ab), 0.0, acc2 / (2.0 * ab))
    v = jnp.where(a < 0.2, small, jnp.where(a <= far, mid, big))
    return jnp.sign(x) * v


@custom_jvp
def _dawsn(x):
    return _dawsn_impl(x)


_defjvps(_dawsn, lambda t, out, x: t * (1.0 - 2.0 * x * out))


def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt (odd; about 1/(2x) for large x).

    >>> sp.dawsn(jnp.asarray([0.5, 1.0, 100.0]))    # [0.4244364, 0.5380795, 0.005000250]
    """
    (x,), dt = _u.floats("dawsn", x=x)
    return _u.finish(_dawsn(x), dt)


# ---- Bernoulli numbers --------------------------------------------------------------------

def bernoulli(n):
    """The Bernoulli numbers B_0 ... B_n (with B_1 = -1/2, as scipy and JAX), an array of
    n + 1 floats of the default float dtype (inf where they overflow, from n = 260 in
    float64). n must be a non-negative Python int.

    >>> sp.bernoulli(6)    # [1., -0.5, 0.16666667, 0., -0.03333334, 0., 0.02380952]
    """
    n = _u.check_int("bernoulli", "n", n, 0)
    out = np.zeros(n + 1, np.float64)
    exact = _BERNOULLI[:n + 1]
    out[:len(exact)] = exact
    # B_2k = (-1)^(k+1) 2 (2k)! / (2 pi)^2k zeta(2k), the factorial ratio by its recurrence
    # (exact to a few ulps; zeta(2k) - 1 is below 2^-2k, its sum converges at once)
    ratio = 2.0 / (2 * math.pi) ** 2 * 2.0         # 2 (2k)! / (2 pi)^2k at k = 1
    with np.errstate(over="ignore"):
        for k in range(2, n // 2 + 1):
            if 2 * k < len(_BERNOULLI):
                ratio *= (2 * k) * (2 * k - 1) / (2 * math.pi) ** 2
                continue
            ratio *= (2 * k) * (2 * k - 1) / (2 * math.pi) ** 2
            z = 1.0 + sum(j ** (-2.0 * k) for j in range(2, 40))
            out[2 * k] = (-1) ** (k + 1) * ratio * z
    return jnp.asarray(out.astype(np.dtype(jnp.zeros(()).dtype)))


_u.export(globals(), "", __all__)
