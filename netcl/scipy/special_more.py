"""More of jax.scipy.special: the gamma family (gamma, gammasgn, loggamma, beta, factorial,
comb, poch), entropies (rel_entr, kl_div), Box-Cox, the incomplete gamma and beta functions,
Hurwitz zeta and polygamma (special_integrals.py has the rest).
Re-exported by netcl.scipy.special; built, as that module, from netcl operations only, so
grad, jit and vmap go through them.

Iterative methods (series, continued fractions) run a fixed number of steps (a
`lax.fori_loop`: a real loop under jit), enough for full accuracy over the ranges given in
each docstring. Derivatives that JAX defines are exact formulas (custom_jvp) where one
exists; derivatives in the shape parameters of gammainc/gammaincc/betainc are those of the
iteration itself (forward mode through the loop), which converge with it.

>>> import netcl.scipy.special as sp
>>> sp.gammainc(jnp.asarray([1.0, 3.0]), 2.0)     # [0.86466473, 0.32332358]
"""

import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..transforms.ad import jvp, stop_gradient
from ..transforms.custom import custom_jvp
from . import _util as _u
from .special import (_LOG_SQRT_2PI, _STIRLING_FROM, _betaln, _digamma_impl, _gammaln, _is64,
                      _stirling_corr)

__all__ = ["gamma", "gammasgn", "loggamma", "beta", "factorial", "comb", "poch", "rel_entr",
           "kl_div", "boxcox", "boxcox1p", "gammainc", "gammaincc", "betainc", "zeta",
           "polygamma"]


def _loop(n, body, init):
    """init after n applications of body(carry) -> carry (a tuple of arrays)."""
    return lax.fori_loop(0, n, lambda i, c: body(c), tuple(init))


def _safe(cond, x, fill):
    """x where cond, else `fill`: so that a branch not taken computes (and differentiates)
    at a harmless point."""
    return jnp.where(cond, x, fill)


# ---- the gamma function family ------------------------------------------------------------

def _gammasgn(x):
    fl = jnp.floor(x)
    neg = x < 0
    pole = (neg & (x == fl)) | jnp.isnan(x)
    odd = neg & (jnp.remainder(fl, 2.0) != 0)
    minus = odd | ((x == 0) & jnp.signbit(x))
    return jnp.where(pole, np.nan, jnp.where(minus, -1.0, 1.0)).astype(x.dtype)


def gammasgn(x):
    """The sign of Gamma(x): 1 or -1, -1 at -0, NaN at the poles 0 > x in Z, -inf and NaN.

    >>> sp.gammasgn(jnp.asarray([2.5, -0.5, -1.5, -0.0]))    # [1., -1., 1., -1.]
    """
    (x,), dt = _u.floats("gammasgn", x=x)
    return _u.finish(_gammasgn(x), dt)


def _gamma(x):
    return _gammasgn(x) * jnp.exp(_gammaln(x))


def gamma(x):
    """The gamma function, gammasgn(x) * exp(gammaln(x)): +-inf at +-0, NaN at the negative
    integers and -inf, inf from 171.6 on (float64; 35.04 in float32).

    >>> sp.gamma(jnp.asarray([0.5, 5.0, -1.5]))    # [1.7724539, 24., 2.3632717]
    """
    (x,), dt = _u.floats("gamma", x=x)
    return _u.finish(_gamma(x), dt)


def loggamma(x):
    """The principal branch of log Gamma for real x: gammaln(x) for x > 0 (inf at 0, as
    scipy; JAX gives NaN there), NaN for x < 0 (where the log of Gamma is complex).

    >>> sp.loggamma(jnp.asarray([3.0, -0.5]))    # [0.6931472, nan]
    """
    (x,), dt = _u.floats("loggamma", x=x)
    return _u.finish(jnp.where(x >= 0, _gammaln(x), np.nan), dt)


def beta(a, b):
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b), as its sign times exp(betaln).

    >>> sp.beta(jnp.asarray([2.0, 0.5]), jnp.asarray([3.0, 0.5]))    # [0.08333334, 3.1415927]
    """
    (a, b), dt = _u.floats("beta", a=a, b=b)
    s = a + b
    sign = _gammasgn(a) * _gammasgn(b) * _gammasgn(s)
    v = sign * jnp.exp(_betaln(a, b))
    # a + b at a pole of Gamma, a and b not: 1 / Gamma(a + b) = 0 (as scipy)
    return _u.finish(jnp.where(_is_pole(s) & ~_is_pole(a) & ~_is_pole(b), 0.0, v), dt)


def _is_pole(x):
    return (x <= 0) & (x == jnp.floor(x)) & jnp.isfinite(x)


def factorial(n, exact=False):
    """n! as a float, Gamma(n + 1) (for any real n; 0 for n < 0, as scipy and JAX).
    exact=True (Python integers) is not supported, as in JAX.

    >>> sp.factorial(jnp.asarray([0, 5, 10]))    # [1., 120., 3628800.]
    """
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,), dt = _u.floats("factorial", n=n)
    v = jnp.exp(_gammaln(n + 1.0))
    # integers: the exact n! from a table (to 34! in float32, 170! in float64; inf above),
    # straight through (the derivative stays that of Gamma(n + 1))
    top = 170 if _is64(n) else 34
    exact = (n == jnp.floor(n)) & (n >= 0) & (n <= top)
    idx = jnp.where(exact, n, 0.0).astype(jnp.int32)
    table = jnp.take(jnp.asarray(_FACTORIALS[:top + 1].astype(np.dtype(n.dtype))), idx)
    v = v + stop_gradient(jnp.where(exact, table - v, 0.0))
    return _u.finish(jnp.where(n < 0, 0.0, v), dt)


_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)])


def _round_exact(v, integral):
    """v rounded to an integer where `integral` and v is below 2^24 (float32) or 2^44
    (float64; exp(log form) is good to a few ulps times the log there, well under 1/2), the
    integer count it is; straight through, so the derivative stays that of v."""
    exact = integral & (v < (2.0 ** 44 if _is64(v) else 2.0 ** 24))
    return v + stop_gradient(jnp.where(exact, jnp.round(v), v) - v)


def comb(N, k, *, repetition=False):
    """The number of combinations of N things taken k at a time, exp(-log(N + 1) -
    betaln(N - k + 1, k + 1)) as a float; 0 where k < 0, N < 0 or k > N. With
    repetition=True, comb(N + k - 1, k) (1 where k == 0 and N >= 0).

    >>> sp.comb(jnp.asarray([5.0, 10.0]), jnp.asarray([2.0, 3.0]))    # [10., 120.]
    """
    repetition = _u.check_bool("comb", "repetition", repetition)
    (N, k), dt = _u.floats("comb", N=N, k=k)
    if repetition:
        out = jnp.where((k == 0) & (N >= 0), 1.0, _comb(N + k - 1.0, k))
    else:
        out = _comb(N, k)
    return _u.finish(out, dt)


def _comb(N, k):
    ok = (k <= N) & (N >= 0) & (k >= 0)
    n, kk = _safe(ok, N, 1.0), _safe(ok, k, 0.0)
    # the betaln form has no cancellation of large gammaln terms (betaln combines them)
    v = jnp.exp(-jnp.log1p(n) - _betaln(n - kk + 1.0, kk + 1.0))
    v = _round_exact(v, (n == jnp.floor(n)) & (kk == jnp.floor(kk)))
    return jnp.where(ok, v, 0.0)


@custom_jvp
def _poch(z, m):
    zm = z + m
    sign = _gammasgn(zm) * _gammasgn(z)
    v = sign * jnp.exp(_gammaln(zm) - _gammaln(z))
    # one of them at a pole of Gamma: inf (z + m) or 0 (z), as scipy; both: NaN (as JAX)
    pz, pzm = _is_pole(z), _is_pole(zm)
    v = jnp.where(pzm & ~pz, np.inf, jnp.where(pz & ~pzm, 0.0, v))
    return jnp.where(m == 0, 1.0, v)


def _poch_jvp(primals, tangents):
    z, m = primals
    tz, tm = tangents
    out = _poch(z, m)
    dzm = _digamma_impl(z + m)
    return out, out * ((dzm - _digamma_impl(z)) * tz + dzm * tm)


_poch.defjvp(_poch_jvp)


def poch(z, m):
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z), 1 where m == 0;
    inf where z + m is a pole of Gamma and z is not, 0 the other way round (as scipy), NaN
    where both are.

    >>> sp.poch(jnp.asarray([2.0, 0.5]), jnp.asarray([3.0, 2.0]))    # [24., 0.75]
    """
    (z, m), dt = _u.floats("poch", z=z, m=m)
    return _u.finish(_poch(z, m), dt)


# ---- entropies and Box-Cox ----------------------------------------------------------------

def _rel_entr(p, q):
    both = (p > 0) & (q > 0)
    ps, qs = _safe(both, p, 1.0), _safe(both, q, 1.0)
    r = ps / qs
    # log(p / q) (accurate where p ~ q) unless the ratio overflows or underflows
    lr = jnp.where((r > 0) & jnp.isfinite(r), jnp.log(r), jnp.log(ps) - jnp.log(qs))
    v = jnp.where(both, ps * lr, jnp.where((p == 0) & (q >= 0), 0.0, np.inf))
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), np.nan, v)


def rel_entr(p, q):
    """The elementwise relative entropy: p log(p / q) for p, q > 0, 0 for p == 0 and
    q >= 0, inf otherwise (NaN for NaN inputs).

    >>> sp.rel_entr(jnp.asarray([0.5, 0.0, 1.0]), jnp.asarray([0.25, 1.0, 0.0]))
    [0.3465736, 0., inf]
    """
    (p, q), dt = _u.floats("rel_entr", p=p, q=q)
    return _u.finish(_rel_entr(p, q), dt)


def kl_div(p, q):
    """The elementwise Kullback-Leibler divergence term p log(p / q) - p + q (q for p == 0,
    inf for p < 0 or q < 0 < p).

    >>> sp.kl_div(jnp.asarray([0.5, 0.0]), jnp.asarray([0.25, 1.0]))    # [0.09657359, 1.]
    """
    (p, q), dt = _u.floats("kl_div", p=p, q=q)
    return _u.finish(_rel_entr(p, q) - p + q, dt)


def _boxcox(logx, lmbda):
    zero = lmbda == 0
    lm = _safe(zero, 1.0, lmbda)
    return jnp.where(zero, logx, jnp.expm1(lm * logx) / lm)


def boxcox(x, lmbda):
    """The Box-Cox transformation (x^lmbda - 1) / lmbda, log(x) for lmbda == 0.

    >>> sp.boxcox(jnp.asarray([2.0, 2.0]), jnp.asarray([0.0, 2.0]))    # [0.6931472, 1.5]
    """
    (x, lmbda), dt = _u.floats("boxcox", x=x, lmbda=lmbda)
    return _u.finish(_boxcox(jnp.log(x), lmbda), dt)


def boxcox1p(x, lmbda):
    """The Box-Cox transformation of 1 + x: ((1 + x)^lmbda - 1) / lmbda, log1p(x) for
    lmbda == 0 (accurate for small x).

    >>> sp.boxcox1p(jnp.asarray([1e-8, 1.0]), jnp.asarray([0.5, 0.0]))   # [1e-08, 0.6931472]
    """
    (x, lmbda), dt = _u.floats("boxcox1p", x=x, lmbda=lmbda)
    return _u.finish(_boxcox(jnp.log1p(x), lmbda), dt)


# ---- incomplete gamma functions -----------------------------------------------------------
# Cephes' method: x <= 1 or x <= a, the series P(a, x) = x^a e^-x / Gamma(a+1) *
# sum_n x^n / ((a+1)...(a+n)); else the continued fraction for Q(a, x) = x^a e^-x / Gamma(a)
# * CF(a, x) in Cephes' three-term recurrence (rescaled each step). Both converge in
# O(sqrt(a)) steps near x = a: the fixed step counts reach full accuracy for a up to about
# 1e3 in float32 and 2e3 in float64. The prefactor's log, a log x - x - lgamma(a + 1), is
# written for a >= 8.5 as a (log1p(d) - d) - log(a)/2 - log(2 pi)/2 - stirling(a) with
# d = (x - a)/a: without cancelling terms of size a (error |x - a| eps, not a eps).
_IGAMMA_STEPS = {True: 384, False: 192}


def _igamma_log_prefactor(a, x):
    direct = a * jnp.log(x) - x - _gammaln(a + 1.0)
    big = a >= _STIRLING_FROM
    ab = _safe(big, a, 10.0)
    d = (x - ab) / ab
    # (for x < a/2, log(x/a) itself: 1 + d would carry d's rounding, relative eps a/x)
    l1 = jnp.where(d < -0.5, jnp.log(x / ab), jnp.log1p(d))
    lp = ab * (l1 - d) - 0.5 * jnp.log(ab) - _LOG_SQRT_2PI - _stirling_corr(ab)
    return jnp.where(big, lp, direct)


def _igamma_series(a, x, n):
    def body(c):
        k, term, s = c
        k = k + 1.0
        term = term * (x / k)
        return k, term, s + term
    _, _, s = _loop(n, body, (a, jnp.ones_like(a), jnp.ones_like(a)))
    return s


def _igammac_cf(a, x, n):
    big, inv = 2.0 ** 50, 2.0 ** -50
    y = 1.0 - a
    z = x + y + 1.0
    zero = jnp.zeros_like(a)

    def body(c):
        k, y, z, pm2, qm2, pm1, qm1 = c
        k, y, z = k + 1.0, y + 1.0, z + 2.0
        yc = y * k
        pk = pm1 * z - pm2 * yc
        qk = qm1 * z - qm2 * yc
        s = jnp.where(jnp.abs(pk) > big, inv, 1.0)
        return k, y, z, pm1 * s, qm1 * s, pk * s, qk * s
    c = _loop(n, body, (zero, y, z, jnp.ones_like(a), x, x + 1.0, z * x))
    return c[5] / c[6]


def _igammac_small_a(a, x, n):
    """Q(a, x) for a < 1/2 and x <= 1, where P is close to 1 (1 - P would cancel):
    Q = -expm1(a log x - lgamma(a + 1)) - x^a / Gamma(a) sum_{k>=1} (-x)^k / (k! (a + k))."""
    lead = -jnp.expm1(a * jnp.log(x) - _gammaln(a + 1.0))
    term = jnp.ones_like(x)
    acc = jnp.zeros_like(x)
    for k in range(1, n + 1):
        term = term * (x * (-1.0 / k))
        acc = acc + term / (a + float(k))
    return lead - jnp.exp(a * jnp.log(x) - _gammaln(a)) * acc


def _igamma_impl(a, x, upper):
    """P(a, x) (upper=False) or Q(a, x), values only, for all (a, x)."""
    n = _IGAMMA_STEPS[_is64(a)]
    n_small = 24 if _is64(a) else 14
    use_cf = (x > 1.0) & (x > a)
    ok = (a > 0) & (x > 0) & jnp.isfinite(a) & jnp.isfinite(x)
    a_s = _safe(ok & ~use_cf, a, 1.0)
    x_s = _safe(ok & ~use_cf, x, 0.5)
    p_series = jnp.exp(_igamma_log_prefactor(a_s, x_s)) * _igamma_series(a_s, x_s, n)
    a_c = _safe(ok & use_cf, a, 1.0)
    x_c = _safe(ok & use_cf, x, 2.0)
    q_cf = jnp.exp(_igamma_log_prefactor(a_c, x_c)) * a_c * _igammac_cf(a_c, x_c, n)
    p = jnp.where(use_cf, 1.0 - q_cf, p_series)
    q = jnp.where(use_cf, q_cf, jnp.where(a < 0.5, _igammac_small_a(a_s, x_s, n_small),
                                          1.0 - p_series))
    v = q if upper else p
    # the edges, as scipy: P(0, x > 0) = 1, P(a, 0) = 0, P(a, inf) = 1, P(inf, x) = 0
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    v = jnp.where(ok, v, jnp.where((a == 0) & (x > 0), hi, jnp.where(
        (x == 0) & (a > 0), lo, jnp.where(jnp.isinf(x) & (a > 0) & ~jnp.isinf(a), hi,
                                          jnp.where(jnp.isinf(a) & ~jnp.isinf(x) & (x > 0),
                                                    lo, np.nan)))))
    return jnp.where((a < 0) | (x < 0), np.nan, v)


def _igamma_rule(upper):
    def rule(primals, tangents):
        a, x = primals
        ta, tx = tangents
        out, da = jvp(lambda a_: _igamma_impl(a_, stop_gradient(x), upper), (a,),
                      (jnp.ones_like(a),))
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
        xs = _safe(x > 0, x, 1.0)
        dx = jnp.where(x > 0, jnp.exp((a - 1.0) * jnp.log(xs) - xs - _gammaln(a)), 0.0)
        dx = -dx if upper else dx
        return out, ta * da + tx * dx
    return rule


@custom_jvp
def _gammainc(a, x):
    return _igamma_impl(a, x, False)


@custom_jvp
def _gammaincc(a, x):
    return _igamma_impl(a, x, True)


_gammainc.defjvp(_igamma_rule(False))
_gammaincc.defjvp(_igamma_rule(True))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a)
    (a, x >= 0; NaN for negative arguments, 1 for a == 0 < x, as scipy). Differentiable in
    x (exactly) and in a (through the iteration).

    >>> sp.gammainc(jnp.asarray([0.5, 1.0, 10.0]), 2.0)   # [0.9544997, 0.8646647, 4.649808e-05]
    """
    (a, x), dt = _u.floats("gammainc", a=a, x=x)
    return _u.finish(_gammainc(a, x), dt)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), accurate
    where it is small (computed directly there, not as 1 - P).

    >>> sp.gammaincc(jnp.asarray([0.5, 1.0]), 30.0)    # [9.485753e-15, 9.357623e-14]
    """
    (a, x), dt = _u.floats("gammaincc", a=a, x=x)
    return _u.finish(_gammaincc(a, x), dt)


# ---- incomplete beta function -------------------------------------------------------------
# The continued fraction for I_x(a, b) (modified Lentz), on the side of the mean where it
# converges fast (x < (a + 1) / (a + b + 2); else 1 - I_{1-x}(b, a)): O(sqrt(max(a, b)))
# steps; full accuracy for a, b up to about 1e3 (float32) and 3e3 (float64).
_IBETA_STEPS = {True: 300, False: 150}


def _ibeta_cf(a, b, x, n):
    tiny = 1e-300 if _is64(x) else 1e-30
    qab, qap, qam = a + b, a + 1.0, a - 1.0

    def fix(v):
        return jnp.where(jnp.abs(v) < tiny, tiny, v)
    d0 = 1.0 / fix(1.0 - qab * x / qap)

    def body(c):
        m, cc, d, h = c
        m = m + 1.0
        m2 = 2.0 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 / fix(1.0 + aa * d)
        cc = fix(1.0 + aa / cc)
        h = h * d * cc
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 / fix(1.0 + aa * d)
        cc = fix(1.0 + aa / cc)
        return m, cc, d, h * d * cc
    c = _loop(n, body, (jnp.zeros_like(x), jnp.ones_like(x), d0, d0))
    return c[3]


def _ibeta_log_front_big(a, b, x):
    """a log x + b log(1 - x) - betaln(a, b) for a, b >= 8.5, with betaln by Stirling and
    its terms of size a and b cancelled analytically: a (log1p(d1) - d1) + b (log1p(d2) -
    d2) + log(a b / (a + b)) / 2 - log(2 pi) / 2 - corrections, d1 = x/mu - 1, d2 = (1 - x)
    / (1 - mu) - 1, mu = a / (a + b) (a d1 + b d2 = 0)."""
    ok = jnp.minimum(a, b) >= _STIRLING_FROM
    a, b = _safe(ok, a, 10.0), _safe(ok, b, 10.0)
    s = a + b
    mu, nu = a / s, b / s
    d1, d2 = (x - mu) / mu, (mu - x) / nu

    def l1(d, r):       # log1p(d) - d; for d < -1/2 log of the ratio itself
        return jnp.where(d < -0.5, jnp.log(r), jnp.log1p(d)) - d
    main = a * l1(d1, x / mu) + b * l1(d2, (1.0 - x) / nu)
    return main + 0.5 * (jnp.log(a) + jnp.log(b) - jnp.log(s)) - _LOG_SQRT_2PI - (
        _stirling_corr(a) + _stirling_corr(b) - _stirling_corr(s))


def _betainc_impl(a, b, x):
    n = _IBETA_STEPS[_is64(x)]
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1) & jnp.isfinite(a) & jnp.isfinite(b)
    flip = x * (a + b + 2.0) > a + 1.0
    aa = _safe(ok, jnp.where(flip, b, a), 1.0)
    bb = _safe(ok, jnp.where(flip, a, b), 1.0)
    xx = _safe(ok, jnp.where(flip, 1.0 - x, x), 0.5)
    log_front = jnp.where(jnp.minimum(aa, bb) >= _STIRLING_FROM, _ibeta_log_front_big(aa, bb, xx),
                          aa * jnp.log(xx) + bb * jnp.log1p(-xx) - _betaln(aa, bb)) - jnp.log(aa)
    v = jnp.exp(log_front) * _ibeta_cf(aa, bb, xx, n)
    v = jnp.where(flip, 1.0 - v, v)
    # the edges, as scipy: I_0 = 0, I_1 = 1; a == 0 < b: 1, b == 0 < a: 0
    edge = jnp.where(x == 0, 0.0, jnp.where(x == 1, 1.0, np.nan))
    edge = jnp.where((a == 0) & (b > 0) & (x > 0) & (x <= 1), 1.0, edge)
    edge = jnp.where((b == 0) & (a > 0) & (x >= 0) & (x < 1), 0.0, edge)
    # a or b infinite (the other finite): the limits, a step at x = 1 or at x = 0
    edge = jnp.where(jnp.isinf(a) & jnp.isfinite(b), jnp.where(x < 1, 0.0, 1.0), edge)
    edge = jnp.where(jnp.isinf(b) & jnp.isfinite(a), jnp.where(x > 0, 1.0, 0.0), edge)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | ((a == 0) & (b == 0)) | \
        jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x) | (jnp.isinf(a) & jnp.isinf(b))
    return jnp.where(bad, np.nan, jnp.where(ok, v, edge))


@custom_jvp
def _betainc(a, b, x):
    return _betainc_impl(a, b, x)


def parameter_derivatives(impl, a, b, x):
    """impl(a, b, x) and its forward derivatives in `a` and in `b`, x held: the parameter
    derivatives of a function whose derivative in x has a closed form (its custom_jvp
    rule adds that one)."""
    xc = stop_gradient(x)
    out, da = jvp(lambda a_: impl(a_, stop_gradient(b), xc), (a,), (jnp.ones_like(a),))
    _, db = jvp(lambda b_: impl(stop_gradient(a), b_, xc), (b,), (jnp.ones_like(b),))
    return out, da, db


def _betainc_jvp(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    out, da, db = parameter_derivatives(_betainc_impl, a, b, x)
    inside = (x > 0) & (x < 1)
    xs = _safe(inside, x, 0.5)
    dx = jnp.exp((a - 1.0) * jnp.log(xs) + (b - 1.0) * jnp.log1p(-xs) - _betaln(a, b))
    return out, ta * da + tb * db + tx * jnp.where(inside, dx, 0.0)


_betainc.defjvp(_betainc_jvp)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (a, b >= 0, 0 <= x <= 1, else
    NaN). Differentiable in x (exactly) and in a and b (through the continued fraction;
    JAX defines the x derivative only).

    >>> sp.betainc(jnp.asarray([2.0, 0.5]), 3.0, 0.4)    # [0.5248, 0.9075736]
    """
    (a, b, x), dt = _u.floats("betainc", a=a, b=b, x=x)
    return _u.finish(_betainc(a, b, x), dt)


# ---- Hurwitz zeta and polygamma -----------------------------------------------------------
# Euler-Maclaurin summation: zeta(s, q) = sum_{k<N} (q+k)^-s + (q+N)^(1-s)/(s-1)
# + (q+N)^-s / 2 + sum_{j=1..M} B_2j/(2j)! s(s+1)...(s+2j-2) (q+N)^(-s-2j+1)
# (N = M = 9 for float32, 16 for float64). Its derivatives (in s and in q) are those of the
# sum, which is as accurate for them.
_B2J = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
        43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730, 8553103 / 6,
        -23749461029 / 870, 8615841276005 / 14322, -7709321041217 / 510]


def _zeta_impl(s, q):
    N = 16 if _is64(q) else 9
    pole = (q <= 0) & (q == jnp.floor(q))
    ok = (s > 1) & ~pole & ~((q < 0) & (s != jnp.floor(s)))
    ss = _safe(ok, s, 2.0)
    qs = _safe(ok, q, 1.0)
    acc = jnp.zeros_like(qs)
    for k in range(N):
        acc = acc + jnp.power(qs + float(k), -ss)
    w = qs + float(N)
    wp = jnp.power(w, -ss)
    acc = acc + w * wp / (ss - 1.0) + 0.5 * wp
    fact, term = 1.0, wp / w * ss       # s (q+N)^(-s-1)
    inv_w2 = 1.0 / (w * w)
    for j in range(1, N + 1):
        fact *= (2 * j) * (2 * j - 1)
        acc = acc + term * (_B2J[j - 1] / fact)
        term = term * (ss + (2 * j - 1)) * (ss + 2 * j) * inv_w2
    out = jnp.where(ok, acc, np.nan)
    out = jnp.where((s == 1) | (pole & (s > 1)), np.inf, out)
    # s = inf (as scipy): q^-s, summed
    out = jnp.where(jnp.isinf(s) & (s > 0) & (q > 0),
                    jnp.where(q < 1, np.inf, jnp.where(q == 1, 1.0, 0.0)), out)
    return jnp.where(jnp.isinf(q) & (q > 0) & (s > 1), 0.0, out)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (x > 1; inf at x == 1 and at the poles
    q = 0, -1, ...; NaN for x < 1, and for q < 0 unless x is an integer). As in JAX, q is
    required (the Riemann zeta function is not implemented).

    >>> sp.zeta(jnp.asarray([2.0, 3.0]), 1.0)    # [1.644934, 1.2020569]
    """
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None "
                                  "to compute the Hurwitz Zeta function.")
    (x, q), dt = _u.floats("zeta", x=x, q=q)
    return _u.finish(_zeta_impl(x, q), dt)


def polygamma(n, x):
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, digamma for
    n == 0 (NaN for n < 0). n must be an integer (a Python int or an integer array), as in
    JAX.

    >>> sp.polygamma(jnp.asarray([0, 1, 2]), 1.0)    # [-0.5772157, 1.644934, -2.4041138]
    """
    if isinstance(n, float) or (hasattr(n, "dtype") and np.dtype(n.dtype).kind == "f"):
        raise ValueError(f"polygamma: argument n must be of integer type, got "
                         f"{getattr(n, 'dtype', type(n).__name__)}")
    return _polygamma(n, x, "polygamma")


def _lax_polygamma(m, x):
    """lax.polygamma(m, x): m of x's float dtype (an integer value), as jax.lax."""
    return _polygamma(m, x, "polygamma")


def _polygamma(n, x, fname):
    (n, x), dt = _u.floats(fname, n=n, x=x)
    n = stop_gradient(n)
    nz = jnp.maximum(n, 1.0)
    sign = jnp.where(jnp.remainder(nz, 2.0) == 0, -1.0, 1.0)
    v = sign * jnp.exp(_gammaln(nz + 1.0)) * _zeta_impl(nz + 1.0, x)
    psi = jnp.where(x == 0, jnp.where(1.0 / x < 0, np.inf, -np.inf), _digamma_impl(x))
    v = jnp.where(n == 0, psi, v)
    return _u.finish(jnp.where((n < 0) | (n != jnp.floor(n)), np.nan, v), dt)


_u.export(globals(), "", __all__)
