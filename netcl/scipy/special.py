"""netcl.scipy.special: jax.scipy.special's functions, composed from netcl's operations.

Everything here is written with netcl.numpy / netcl.lax / netcl.nn operations, so grad, jit
and vmap go through it as through any other netcl code (under jit a whole function fuses
into one kernel). Where the derivative of an approximation would be less accurate than the
exact one, or NaN at points where the function is fine (a branch of a `where` that is not
taken still gets a zero cotangent, and 0 * inf is NaN), a custom_jvp gives the exact
derivative: erfc, ndtr, log_ndtr, ndtri, erfinv, gammaln, xlogy, xlog1py, entr, logit.

Accuracy, float32, against scipy (tests/test_scipy.py measures it): erf, erfc, ndtr,
log_ndtr, ndtri, erfinv, gammaln and betaln to about 1e-6 relative (erfc and ndtr down to
the smallest normal float32; log_ndtr at any x), digamma to 1e-6 relative plus 1e-6 absolute
(near its zero at 1.4616 only absolute accuracy is possible in float32). The float64 paths
use float64 coefficient sets (Cephes' for erfc and ndtri, longer series elsewhere).

>>> import netcl.scipy.special as sp
>>> sp.log_ndtr(jnp.asarray([-40.0, 0.0, 5.0]))    # [-804.6084, -0.6931472, -2.866516e-07]
"""
import math

import numpy as np

from .. import lax, nn
from .. import numpy as jnp
from ..core import dtypes
from ..transforms.ad import stop_gradient
from ..transforms.custom import custom_jvp
from . import _util as _u

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "gammaln",
           "digamma", "betaln", "multigammaln", "xlogy", "xlog1py", "entr", "logit", "expit",
           "softmax", "log_softmax"]

_SQRT1_2 = 1 / math.sqrt(2)
_SQRT2 = math.sqrt(2)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _is64(x):
    return x.dtype == dtypes.float64


def _horner(x, coeffs):
    """The polynomial with `coeffs` (highest power first) at x."""
    acc = x * coeffs[0] + coeffs[1]
    for c in coeffs[2:]:
        acc = acc * x + c
    return acc


def _defjvps(f, *partials):
    """f.defjvps, but with the primal output from f itself (the custom function), not from
    its body: the custom_jvp class's defjvps evaluates the body, so a second derivative of a
    rule that uses the output would differentiate the body's approximation (and its `where`
    branches, NaN far in a tail) instead of applying the rule again."""
    def rule(primals, tangents):
        out = f(*primals)
        parts = [d(t, out, *primals) for d, t in zip(partials, tangents) if d is not None]
        acc = parts[0]
        for p in parts[1:]:
            acc = acc + p
        return out, acc
    f.defjvp(rule)


# ---- the error function family ------------------------------------------------------------
# erfc(a) = exp(-a^2) r(a) for a >= 1, with r smooth and slowly varying. r is Cephes': in
# float32 erfcf's polynomials in 1/a^2, in float64 erfc's rationals (for a >= 8 rewritten in
# u = 1/a, which is the same function but cannot overflow for large a). erfc, ndtr and
# log_ndtr all use r, with exp(-a^2) computed without the error of rounding a*a.

_ERFC_P32 = [2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
             -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
             3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1]
_ERFC_R32 = [-1.047766399936249e+1, 1.297719955372516e+1, -7.495518717768503e+0,
             2.921019019210786e+0, -1.015265279202700e+0, 4.218463358204948e-1,
             -2.820767439740514e-1, 5.641895067754075e-1]
_ERFC_P64 = [2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
             4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
             9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2]
_ERFC_Q64 = [1.0, 1.32281951154744992508e1, 8.67072140885989742329e1,
             3.54937778887819891062e2, 9.75708501743205489753e2, 1.82390916687909736289e3,
             2.24633760818710981792e3, 1.65666309194161350182e3, 5.57535340817727675546e2]
_ERFC_R64 = [5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
             6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0]
_ERFC_S64 = [1.0, 2.26052863220117276590e0, 9.39603524938001434673e0,
             1.20489539808096656605e1, 1.70814450747565897222e1, 9.60896809063285878198e0,
             3.36907645100081516050e0]


def _erfc_ratio(a):
    """r(a) = erfc(a) * exp(a*a), for a >= 1."""
    if _is64(a):
        mid = _horner(a, _ERFC_P64) / _horner(a, _ERFC_Q64)
        u = 1.0 / a
        far = u * _horner(u, _ERFC_R64[::-1]) / _horner(u, _ERFC_S64[::-1])
        return jnp.where(a < 8.0, mid, far)
    q = 1.0 / a
    y = q * q
    return q * jnp.where(a < 2.0, _horner(y, _ERFC_P32), _horner(y, _ERFC_R32))


def _exp_neg_sq(a, scale):
    """exp(-scale * a * a) for 0 <= a <= 64, scale 1 or 1/2. a = hi + lo with hi a multiple
    of 1/16, so hi*hi is exact and what is left is a small argument: the plain form carries
    a*a's rounding error times a*a (1e-5 relative at a = 9 in float32)."""
    hi = jnp.floor(a * 16.0) * 0.0625
    lo = a - hi
    return jnp.exp(hi * hi * -scale) * jnp.exp(lo * (a + hi) * -scale)


def _erfc_impl(x):
    a = jnp.abs(x)
    big = jnp.clip(a, 1.0, 40.0)      # erfc(40) is 0 in float64; clipped: no inf - inf
    tail = _exp_neg_sq(big, 1.0) * _erfc_ratio(big)
    # below 1, 1 - erf(x) loses at most a factor 6 of relative accuracy (erfc(1) = 0.157)
    return jnp.where(a < 1.0, 1.0 - lax.erf(x), jnp.where(x < 0, 2.0 - tail, tail))


def _ndtr_parts(x):
    """(|x| < sqrt 2, ndtr there, ndtr(-|x|) elsewhere)."""
    a = jnp.abs(x)
    central = 0.5 + 0.5 * lax.erf(x * _SQRT1_2)
    # ndtr(-a) = erfc(a / sqrt 2) / 2 = exp(-a^2 / 2) r(a / sqrt 2) / 2: the exponential from
    # a itself, since a / sqrt 2 is rounded (and its square's error grows like a^2)
    big = jnp.clip(a, _SQRT2, 56.0)
    tail = 0.5 * _exp_neg_sq(big, 0.5) * _erfc_ratio(big * _SQRT1_2)
    return a < _SQRT2, central, tail


def _ndtr_impl(x):
    is_central, central, tail = _ndtr_parts(x)
    return jnp.where(is_central, central, jnp.where(x > 0, 1.0 - tail, tail))


def _norm_pdf(x):
    return jnp.exp(x * x * -0.5) * (1 / _SQRT_2PI)


@custom_jvp
def _erfc(x):
    return _erfc_impl(x)


_defjvps(_erfc, lambda t, out, x: t * (jnp.exp(-(x * x)) * (-2 / math.sqrt(math.pi))))


@custom_jvp
def _ndtr(x):
    return _ndtr_impl(x)


_defjvps(_ndtr, lambda t, out, x: t * _norm_pdf(x))


@custom_jvp
def _log_ndtr(x):
    a = jnp.abs(x)
    w = jnp.maximum(a * _SQRT1_2, 1.0)
    r = _erfc_ratio(w)
    # x <= -sqrt 2: log(exp(-x^2/2) r / 2), exact in form at any x (no asymptotic series,
    # no underflow); x >= sqrt 2: log1p(-ndtr(-x)); between: log of ndtr (>= 0.079)
    left = x * x * -0.5 + jnp.log(0.5 * r)
    right = jnp.log1p(-0.5 * _exp_neg_sq(jnp.minimum(a, 56.0), 0.5) * r)
    central = jnp.log(0.5 + 0.5 * lax.erf(x * _SQRT1_2))
    return jnp.where(a < _SQRT2, central, jnp.where(x < 0, left, right))


# d/dx log ndtr(x) = pdf(x) / ndtr(x), as a difference of logs: finite far in the left tail
_defjvps(_log_ndtr, lambda t, out, x: t * jnp.exp(x * x * -0.5 - _LOG_SQRT_2PI - out))


# ndtri: Cephes' piecewise rational approximations (as jax.scipy.special.ndtri)
_NDTRI_P0 = [-5.99633501014107895267e1, 9.80010754185999661536e1, -5.66762857469070293439e1,
             1.39312609387279679503e1, -1.23916583867381258016e0]
_NDTRI_Q0 = [1.0, 1.95448858338141759834e0, 4.67627912898881538453e0, 8.63602421390890590575e1,
             -2.25462687854119370527e2, 2.00260212380060660359e2, -8.20372256168333339912e1,
             1.59056225126211695515e1, -1.18331621121330003142e0]
_NDTRI_P1 = [4.05544892305962419923e0, 3.15251094599893866154e1, 5.71628192246421288162e1,
             4.40805073893200834700e1, 1.46849561928858024014e1, 2.18663306850790267539e0,
             -1.40256079171354495875e-1, -3.50424626827848203418e-2, -8.57456785154685413611e-4]
_NDTRI_Q1 = [1.0, 1.57799883256466749731e1, 4.53907635128879210584e1, 4.13172038254672030440e1,
             1.50425385692907503408e1, 2.50464946208309415979e0, -1.42182922854787788574e-1,
             -3.80806407691578277194e-2, -9.33259480895457427372e-4]
_NDTRI_P2 = [3.23774891776946035970e0, 6.91522889068984211695e0, 3.93881025292474443415e0,
             1.33303460815807542389e0, 2.01485389549179081538e-1, 1.23716634817820021358e-2,
             3.01581553508235416007e-4, 2.65806974686737550832e-6, 6.23974539184983293730e-9]
_NDTRI_Q2 = [1.0, 6.02427039364742014255e0, 3.67983563856160859403e0, 1.37702099489081330271e0,
             2.16236993594496635890e-1, 1.34204006088543189037e-2, 3.28014464682127739104e-4,
             2.89247864745380683936e-6, 6.79019408009981274425e-9]
_EXP_M2 = math.exp(-2.0)


def _ndtri_impl(p):
    upper = p > 1.0 - _EXP_M2
    q = jnp.where(upper, 1.0 - p, p)          # the smaller tail; exact for p > 1/2
    q = jnp.where(q == 0.0, 0.5, q)           # (p = 0 or 1: set below; no log(0) here)
    # central region: x / sqrt(2 pi) = w + w^3 P0(w^2) / Q0(w^2)
    w = q - 0.5
    ww = w * w
    central = (w + w * ww * (_horner(ww, _NDTRI_P0) / _horner(ww, _NDTRI_Q0))) * -_SQRT_2PI
    # tails: x = z - log(z) / z - P(1/z) / Q(1/z) / z with z = sqrt(-2 log q)
    z = jnp.sqrt(jnp.log(q) * -2.0)
    iz = 1.0 / z
    corr = jnp.where(z >= 8.0, _horner(iz, _NDTRI_P2) / _horner(iz, _NDTRI_Q2),
                     _horner(iz, _NDTRI_P1) / _horner(iz, _NDTRI_Q1))
    tail = z - jnp.log(z) * iz - corr * iz
    x = jnp.where(q > _EXP_M2, central, tail)
    x = jnp.where(upper, x, -x)
    return jnp.where(p == 0.0, -np.inf, jnp.where(p == 1.0, np.inf, x))


@custom_jvp
def _ndtri(p):
    return _ndtri_impl(p)


_defjvps(_ndtri, lambda t, out, p: t * (_SQRT_2PI * jnp.exp(out * out * 0.5)))


@custom_jvp
def _erfinv(x):
    a = jnp.abs(x)
    # lax.erf_inv loses accuracy close to +-1 (1e-6 relative at 0.999 in float32, NaN at
    # 1 - 1e-8 in float64); there erfinv(x) = -ndtri((1 - |x|) / 2) / sqrt 2, exact in form
    tail = _ndtri_impl((1.0 - a) * 0.5) * -_SQRT1_2
    return jnp.where(a < 0.9, lax.erf_inv(x), jnp.sign(x) * tail)


_defjvps(_erfinv, lambda t, out, x: t * ((math.sqrt(math.pi) / 2) * jnp.exp(out * out)))


def erf(x):
    """The error function, 2/sqrt(pi) * integral of exp(-t^2) from 0 to x.

    >>> sp.erf(jnp.asarray([0.0, 1.0]))      # [0., 0.8427008]
    """
    (x,), dt = _u.floats("erf", x=x)
    return _u.finish(lax.erf(x), dt)


def erfc(x):
    """1 - erf(x), accurate where erf(x) is close to 1 (down to the smallest float).

    >>> sp.erfc(jnp.asarray([0.0, 9.0]))     # [1., 4.1370317e-37]
    """
    (x,), dt = _u.floats("erfc", x=x)
    return _u.finish(_erfc(x), dt)


def erfinv(x):
    """The inverse of erf on [-1, 1] (+-inf at +-1, NaN outside).

    >>> sp.erfinv(jnp.asarray([0.5, 0.9]))   # [0.4769363, 1.1630871]
    """
    (x,), dt = _u.floats("erfinv", x=x)
    return _u.finish(_erfinv(x), dt)


def ndtr(x):
    """The standard normal CDF, accurate in both tails.

    >>> sp.ndtr(jnp.asarray([-10.0, 0.0]))   # [7.619853e-24, 0.5]
    """
    (x,), dt = _u.floats("ndtr", x=x)
    return _u.finish(_ndtr(x), dt)


def ndtri(p):
    """The inverse of ndtr: x with ndtr(x) = p (-inf at 0, inf at 1, NaN outside [0, 1]).

    >>> sp.ndtri(jnp.asarray([0.975, 1e-30]))   # [1.959964, -11.464024]
    """
    (p,), dt = _u.floats("ndtri", p=p)
    return _u.finish(_ndtri(p), dt)


def log_ndtr(x, series_order=3):
    """log(ndtr(x)), accurate at every x: in the left tail it is -x^2/2 + log of a smooth
    rational factor (no underflow, no asymptotic series), in the right tail log1p(-ndtr(-x)).

    series_order is accepted and checked as JAX does (an int in [0, 30]); it does not change
    the result here, which needs no series.

    >>> sp.log_ndtr(jnp.asarray([-40.0, 10.0]))   # [-804.6084, -7.619853e-24]
    """
    _u.check_int("log_ndtr", "series_order", series_order, 0, 30)
    (x,), dt = _u.floats("log_ndtr", x=x)
    return _u.finish(_log_ndtr(x), dt)


# ---- gamma function family ----------------------------------------------------------------
# lgamma(2 + f) = sum_k c_k f^k with c_1 = 1 - euler_gamma, c_k = (-1)^k zetac(k) / k: its
# radius of convergence is 2, so on |f| <= 1/2 it converges like 4^-k; 13 terms reach float32
# accuracy, 30 float64's. Relative accuracy holds near the zeros at 1 and 2 too (the series
# starts at f^1, and lgamma(1 + f) = lgamma(2 + f) - log1p(f)).
_LGAMMA2 = [0.42278433509846713, 0.3224670334241132, -0.0673523010531981,
            0.020580808427784546, -0.007385551028673986, 0.0028905103307415234,
            -0.001192753911703261, 0.0005096695247430425, -0.00022315475845357936,
            9.945751278180853e-05, -4.492623673813314e-05, 2.0507212775670694e-05,
            -9.439488275268395e-06, 4.374866789907487e-06, -2.039215753801366e-06,
            9.55141213040742e-07, -4.492469198764566e-07, 2.1207184805554667e-07,
            -1.00432248239681e-07, 4.769810169363981e-08, -2.2711094608943164e-08,
            1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09,
            -1.1921401405860912e-09, 5.731367241678862e-10, -2.7595228851242334e-10,
            1.3304764374244491e-10, -6.422964563838101e-11, 3.104424774732227e-11]
# Stirling's series: lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + sum_k s_k / x^(2k-1),
# s_k = B_2k / (2k (2k - 1)); from x = 8.5 on, 3 terms reach float32 accuracy, 7 float64's
_STIRLING = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156]
_STIRLING_FROM = 8.5


def _stirling_corr(x):
    """lgamma(x) minus the leading terms of Stirling's formula, for x >= 8."""
    n = 7 if _is64(x) else 3
    r = 1.0 / x
    r2 = r * r
    return r * _horner(r2, _STIRLING[:n][::-1])


def _lgamma_positive(x):
    """lgamma(x) for x > 0 (inf at 0 and at inf)."""
    # 0 < x < 8.5: lgamma(x) = lgamma(2 + f) + log(prod) with f = x - 2 - n in [-1/2, 1/2),
    # n = floor(x - 3/2) in [-2, 6]: prod = (x-1)...(x-n) for n > 0, 1/x or 1/(x (x+1))
    # below. The factors are exact, so only the product's roundings and one log remain.
    n = jnp.clip(jnp.floor(x - 1.5), -2.0, 6.0)
    f = x - (n + 2.0)
    coeffs = _LGAMMA2[:30 if _is64(x) else 13]
    g = f * _horner(f, coeffs[::-1])
    prod = jnp.where(n >= 1.0, x - 1.0, 1.0)
    for j in range(2, 7):
        prod = prod * jnp.where(n >= j, x - float(j), 1.0)
    below = jnp.where(n == -2.0, -(jnp.log(x) + jnp.log1p(x)), -jnp.log(x))
    small = g + jnp.where(n >= 0.0, jnp.log(prod), below)
    big_x = jnp.maximum(x, _STIRLING_FROM)
    # (x - 1/2)(log x - 1) is (x - 1/2) log x - x + 1/2, without the larger cancellation
    big = (big_x - 0.5) * (jnp.log(big_x) - 1.0) + (_LOG_SQRT_2PI - 0.5) + \
        _stirling_corr(big_x)
    return jnp.where(x >= _STIRLING_FROM, big, small)


def _gammaln_impl(x):
    neg = x < 0
    pos = _lgamma_positive(jnp.where(neg, 1.0 - x, x))
    # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); |sin(pi x)| from the
    # distance to the nearest integer (exact; x - floor(x) rounds to 1 for x = -1e-30), so
    # that large |x| is not multiplied by pi first
    s = jnp.sin(jnp.abs(x - jnp.round(x)) * math.pi)
    refl = (math.log(math.pi) - jnp.log(s)) - pos
    out = jnp.where(neg, refl, pos)
    return jnp.where(x == -np.inf, np.inf, out)       # JAX's (lax.lgamma's) value there


# digamma: psi(x) = log x - 1/(2x) - sum_n B_2n / (2n x^2n) for x >= N, reached with
# psi(x) = psi(x + N) - sum_{k<N} 1 / (x + k) below; N = 6 and 3 terms for float32 (the next
# is 2.5e-9 at 6), N = 10 and 7 terms for float64 (4e-17 at 10)
_DIGAMMA = [1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12]


def _digamma_positive(x):
    N, terms = (10, 7) if _is64(x) else (6, 3)
    shift = x < N
    y = jnp.where(shift, x + float(N), x)
    r2 = 1.0 / (y * y)
    asym = jnp.log(y) - 0.5 / y - r2 * _horner(r2, _DIGAMMA[:terms][::-1])
    xs = jnp.where(shift, x, 1.0)            # (a branch not taken still differentiates)
    s = 1.0 / xs
    for k in range(1, N):
        s = s + 1.0 / (xs + float(k))
    return asym - jnp.where(shift, s, 0.0)


def _digamma_impl(x):
    neg = x < 0
    pos = _digamma_positive(jnp.where(neg, 1.0 - x, x))
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi x); tan has period pi, so the argument
    # is reduced to [-1/2, 1/2] first (kept away from 0 where it is not used)
    r = jnp.where(neg, x - jnp.round(x), 0.25)
    refl = pos - math.pi / jnp.tan(r * math.pi)
    out = jnp.where(neg, refl, pos)
    # the poles 0, -1, -2, ...: NaN, as JAX (scipy gives -inf at +0)
    return jnp.where((x <= 0) & (x == jnp.floor(x)), np.nan, out)


@custom_jvp
def _gammaln(x):
    return _gammaln_impl(x)


_defjvps(_gammaln, lambda t, out, x: t * _digamma_impl(x))


def gammaln(x):
    """log|Gamma(x)|: a Taylor series about 2 on [1.5, 8.5) (shifted there by exact
    recurrences), Stirling's series above, reflection below 0. inf at 0, -1, -2, ...

    >>> sp.gammaln(jnp.asarray([0.5, 1.0, 100.0]))    # [0.5723649, 0., 359.13422]
    """
    (x,), dt = _u.floats("gammaln", x=x)
    return _u.finish(_gammaln(x), dt)


def digamma(x):
    """psi(x) = d/dx log Gamma(x): -inf at +0 and inf at -0 (as scipy and JAX >= 0.11),
    NaN at -1, -2, ...

    >>> sp.digamma(jnp.asarray([1.0, 10.0]))    # [-0.5772157, 2.2517526]
    """
    (x,), dt = _u.floats("digamma", x=x)
    pole = jnp.where(1.0 / x < 0, jnp.inf, -jnp.inf)     # (1 / -0 is -inf: the sign of 0)
    return _u.finish(jnp.where(x == 0, pole, _digamma_impl(x)), dt)


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b), without that difference's
    cancellation when a or b is large (Stirling's series for the large ones).

    >>> sp.betaln(jnp.asarray([1.0, 1e6]), 1.0)    # [0., -13.815511]
    """
    (a, b), dt = _u.floats("betaln", a=a, b=b)
    return _u.finish(_betaln(a, b), dt)


def _betaln(a, b):
    lo, hi = jnp.minimum(a, b), jnp.maximum(a, b)
    both = lo >= _STIRLING_FROM
    one = (hi >= _STIRLING_FROM) & (hi + lo >= _STIRLING_FROM) & ~both
    # both small (or negative): the plain difference, of moderate terms
    direct = _gammaln(a) + _gammaln(b) - _gammaln(a + b)
    # both large: Stirling for all three, the large terms combined before they cancel:
    # (a-1/2) log(a/(a+b)) + (b-1/2) log(b/(a+b)) - log(a+b)/2 + log(2 pi)/2 + corrections
    lb, hb = jnp.where(both, lo, 10.0), jnp.where(both, hi, 10.0)
    sb = lb + hb
    v_both = (_LOG_SQRT_2PI - 0.5 * jnp.log(sb) - (lb - 0.5) * jnp.log1p(hb / lb)
              - (hb - 0.5) * jnp.log1p(lb / hb)
              + _stirling_corr(lb) + _stirling_corr(hb) - _stirling_corr(sb))
    # one large (hi and hi + lo): gammaln(lo) + [gammaln(hi) - gammaln(hi + lo)], the
    # bracket by Stirling; lo may be small, or negative
    lo1, hi1 = jnp.where(one, lo, 1.0), jnp.where(one, hi, 10.0)
    s1 = hi1 + lo1
    v_one = (_gammaln(lo1) + _stirling_corr(hi1) - _stirling_corr(s1)
             - (hi1 - 0.5) * jnp.log1p(lo1 / hi1) - lo1 * jnp.log(s1) + lo1)
    return jnp.where(both, v_both, jnp.where(one, v_one, direct))


def multigammaln(a, d):
    """log of the multivariate gamma function: sum_{i<d} gammaln(a - i/2) + d(d-1)/4 log(pi).

    >>> sp.multigammaln(jnp.asarray([3.0]), 2)    # [1.550195]
    """
    d = _u.check_int("multigammaln", "d", d, 0)
    (a,), dt = _u.floats("multigammaln", a=a)
    if d == 0:
        return _u.finish(a * 0.0, dt)
    shifts = jnp.arange(d, dtype=a.dtype) * -0.5
    terms = _gammaln(jnp.expand_dims(a, -1) + shifts)
    return _u.finish(jnp.sum(terms, axis=-1) + d * (d - 1) / 4 * math.log(math.pi), dt)


# ---- x log y and friends ------------------------------------------------------------------
# 0 * log(0) is 0 here, and the custom derivative rules are JAX's: the one of the formula,
# not the one through the `where` (which would drop the log(y) term at x = 0).

@custom_jvp
def _xlogy(x, y):
    return jnp.where((x != 0) | jnp.isnan(y), x * jnp.log(y), 0.0)


_defjvps(_xlogy, lambda t, out, x, y: t * jnp.log(y), lambda t, out, x, y: t * (x / y))


@custom_jvp
def _xlog1py(x, y):
    return jnp.where((x != 0) | jnp.isnan(y), x * jnp.log1p(y), 0.0)


_defjvps(_xlog1py, lambda t, out, x, y: t * jnp.log1p(y),
                 lambda t, out, x, y: t * (x / (1.0 + y)))


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


_defjvps(_xlogx, lambda t, out, x: t * (jnp.log(x) + 1.0))


def xlogy(x, y):
    """x * log(y), 0 where x == 0 (unless y is NaN).

    >>> sp.xlogy(jnp.asarray([0.0, 2.0]), jnp.asarray([0.0, 3.0]))   # [0., 2.1972246]
    """
    (x, y), dt = _u.floats("xlogy", x=x, y=y)
    return _u.finish(_xlogy(x, y), dt)


def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (unless y is NaN).

    >>> sp.xlog1py(jnp.asarray([0.0, 2.0]), jnp.asarray([-1.0, 1e-8]))   # [0., 2e-08]
    """
    (x, y), dt = _u.floats("xlog1py", x=x, y=y)
    return _u.finish(_xlog1py(x, y), dt)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf for x < 0.

    >>> sp.entr(jnp.asarray([0.5, 0.0, -1.0]))    # [0.3465736, -0., -inf]
    """
    (x,), dt = _u.floats("entr", x=x)
    return _u.finish(jnp.where(x < 0, -np.inf, -_xlogx(x)), dt)


@custom_jvp
def _logit(x):
    # log(x / (1 - x)) has only absolute accuracy near x = 1/2, where it crosses 0 (1e-5
    # relative in float32 at 0.498); there log1p((2x - 1) / (1 - x)) is relatively accurate
    # (2x - 1 is exact). Not everywhere: at x = 1e-10 its argument rounds to -1.
    mid = jnp.abs(x - 0.5) < 0.25
    xm = jnp.where(mid, x, 0.5)
    return jnp.where(mid, jnp.log1p((xm * 2.0 - 1.0) / (1.0 - xm)), jnp.log(x / (1.0 - x)))


_defjvps(_logit, lambda t, out, x: t / (x * (1.0 - x)))


def logit(x):
    """log(x / (1 - x)), the inverse of expit (-inf at 0, inf at 1, NaN outside).

    >>> sp.logit(jnp.asarray([0.5, 0.9]))    # [0., 2.1972246]
    """
    (x,), dt = _u.floats("logit", x=x)
    return _u.finish(_logit(x), dt)


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)).

    >>> sp.expit(jnp.asarray([0.0, 2.0]))    # [0.5, 0.8807971]
    """
    (x,), dt = _u.floats("expit", x=x)
    return _u.finish(lax.logistic(x), dt)


# ---- reductions ---------------------------------------------------------------------------

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, without overflow, as jax.scipy.special.logsumexp.

    With `b`, the sum may be negative: return_sign=True returns (log|sum|, sign(sum)), else
    such entries are NaN. `where` (a boolean array) leaves entries out of the sum.

    >>> sp.logsumexp(jnp.asarray([1000.0, 1000.0]))                   # 1000.6931
    >>> sp.logsumexp(jnp.asarray([1.0, 2.0]), b=jnp.asarray([1.0, -1.0]), return_sign=True)
    (1.5413249, -1.0)
    """
    fname = "logsumexp"
    keepdims = _u.check_bool(fname, "keepdims", keepdims)
    return_sign = _u.check_bool(fname, "return_sign", return_sign)
    named = {"a": a} if b is None else {"a": a, "b": b}
    shapes = _u.check(fname, **named, **({} if where is None else {"where": where}))
    if where is not None and type(where) is not bool and \
            _u.shape_dtype(fname, "where", where)[1] != np.bool_:
        raise TypeError(f"{fname}: where must be a boolean array, got "
                        f"{getattr(where, 'dtype', type(where).__name__)}")
    axes = _u.check_axis(fname, axis, len(np.broadcast_shapes(*shapes.values())))
    xs, dt = _u.floats(fname, **named)
    a = xs[0]
    if b is not None:
        b = xs[1]
        a = jnp.where(b != 0, a, -np.inf)          # b = 0 leaves an entry out, as in JAX
    if where is not None:
        a = jnp.where(where, a, -np.inf)
    amax = jnp.max(a, axis=axes, keepdims=True)
    # a row of +-inf would make a - amax NaN: shift by 0 there (its result is +-inf anyway)
    amax = stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.0))
    e = jnp.exp(a - amax)
    if b is not None:
        e = e * b
    s = jnp.sum(e, axis=axes, keepdims=True)
    sign = jnp.sign(s)
    out = jnp.log(jnp.abs(s)) + amax
    if not keepdims:
        out, sign = (jnp.reshape(v, tuple(d for i, d in enumerate(v.shape) if i not in axes))
                     for v in (out, sign))
    if return_sign:
        return _u.finish(out, dt), _u.finish(sign, dt)
    if b is not None:
        out = jnp.where(sign < 0, np.nan, out)
    return _u.finish(out, dt)


def softmax(x, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default, as jax.scipy.special.softmax;
    netcl.nn.softmax's default is the last axis).

    >>> sp.softmax(jnp.asarray([0.0, 0.0]))    # [0.5, 0.5]
    """
    shapes = _u.check("softmax", x=x)
    axes = _u.check_axis("softmax", axis, len(shapes["x"]))
    (x,), dt = _u.floats("softmax", x=x)
    return _u.finish(nn.softmax(x, axis=axes), dt)


def log_softmax(x, *, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default, as jax.scipy.special.log_softmax).

    >>> sp.log_softmax(jnp.asarray([0.0, 0.0]))    # [-0.6931472, -0.6931472]
    """
    shapes = _u.check("log_softmax", x=x)
    axes = _u.check_axis("log_softmax", axis, len(shapes["x"]))
    (x,), dt = _u.floats("log_softmax", x=x)
    return _u.finish(nn.log_softmax(x, axis=axes), dt)


# Errors escaping these functions name them.
_u.export(globals(), "", __all__)

# More of jax.scipy.special, in their own modules (which use the helpers above).
from . import special_integrals as _si, special_more as _sm  # noqa: E402
from . import special_hyper as _sh, special_hyper_more as _shm  # noqa: E402
from . import special_complex as _sc  # noqa: E402

for _mod in (_sm, _si, _sh, _shm, _sc):
    for _n in _mod.__all__:
        globals()[_n] = getattr(_mod, _n)
    __all__ += _mod.__all__
del _mod, _n
_lax_polygamma = _sm._lax_polygamma     # (lax.polygamma: a float m, as jax.lax's)
