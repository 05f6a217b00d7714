"""The confluent and Gauss hypergeometric functions hyp1f1 and hyp2f1 of jax.scipy.special
(special_hyper_more.py has bessel_jn, fresnel, sici and owens_t). Re-exported by
netcl.scipy.special; built from netcl operations only, so grad, jit and vmap go through them.

JAX sums the Taylor series (and for 1F1 the large-x asymptotic series) as given, which is
badly wrong in places (hyp1f1(1.5, 2.5, -50) = -199, hyp2f1 at x = -3 = 3e114). Here the
series run after the classical transformations that keep them convergent and free of
cancellation: Kummer's for 1F1 at x < 0; for 2F1 Pfaff's (x < -1/2) and the connection to
1 - x (x > 1/2, with the digamma form where c - a - b is an integer), as Cephes does. Series
run a fixed number of steps (a `lax.fori_loop`), enough for full accuracy for parameters up
to about 20 in size.

Derivatives as JAX: custom_jvp rules, the x derivatives exact (a/b 1F1(a+1, b+1, x) and
ab/c 2F1(a+1, b+1, c+1, x)); those in the parameters are the forward derivatives of the
evaluation itself (JAX differentiates the plain Taylor series, also where it does not use
it).

>>> import netcl.scipy.special as sp
>>> sp.hyp1f1(1.5, 2.5, jnp.asarray([-50.0, 1.0]))    # [0.00375994, 1.8834451]
"""
import numpy as np

from .. import numpy as jnp
from ..transforms.ad import jvp, stop_gradient
from ..transforms.custom import custom_jvp
from . import _util as _u
from .special import _digamma_impl, _gammaln, _is64
from .special_more import _gammasgn, parameter_derivatives

__all__ = ["hyp1f1", "hyp2f1"]


def _loop(n, body, init):
    from .. import lax
    return lax.fori_loop(0, n, lambda i, c: body(c), tuple(init))


def _nonpos_int(v):
    return (v <= 0) & (v == jnp.floor(v))


def _series(nums, dens, x, n):
    """sum_{k<=n} prod (num)_k / prod (den)_k x^k / k! (a zero denominator, reached only
    after a numerator has ended the series, is skipped)."""
    def body(c):
        k, term, s = c
        f = x / (k + 1.0)
        for p in nums:
            f = f * (p + k)
        for q in dens:
            d = q + k
            f = f / jnp.where(d == 0, 1.0, d)
        term = term * f
        return k + 1.0, term, s + term
    one = jnp.ones_like(x)
    return _loop(n, body, (x * 0.0, one, one))[2]


def _gamma_ratio(nums, dens):
    """prod Gamma(num) / prod Gamma(den), in logs (0 where a denominator is at a pole)."""
    lg, sign, zero = 0.0, 1.0, False
    for v in nums:
        lg = lg + _gammaln(v)
        sign = sign * jnp.where(_nonpos_int(v), 1.0, _gammasgn(v))
    for v in dens:
        lg = lg - _gammaln(jnp.where(_nonpos_int(v), 1.0, v))
        sign = sign * jnp.where(_nonpos_int(v), 1.0, _gammasgn(v))
        zero = zero | _nonpos_int(v)
    return jnp.where(zero, 0.0, sign * jnp.exp(lg))


def _exp_times(y, v):
    """exp(y) * v without overflow of exp(y) alone (exp(y) tiny, v huge)."""
    h = jnp.exp(y * 0.5)
    return h * (h * v)


# ---- hyp1f1 -------------------------------------------------------------------------------
# x < 0 (unless a is a non-positive integer: then a polynomial of positive terms): Kummer's
# 1F1(a, b, x) = exp(x) 1F1(b - a, b, -x). Then the series up to |x| = 100 (85 in float32,
# where the series itself would overflow), and beyond it the asymptotic series
# 1F1(a, b, x) ~ Gamma(b) / Gamma(a) e^x x^(a - b) sum (b - a)_k (1 - a)_k / (k! x^k).
_H1F1 = {True: (250, 60, 100.0), False: (200, 30, 85.0)}


def _hyp1f1_impl(a, b, x):
    nser, nasy, far = _H1F1[_is64(x)]
    a_poly = _nonpos_int(a)
    kummer = (x < 0) & ~a_poly
    a2 = jnp.where(kummer, b - a, a)
    x2 = jnp.where(kummer, -x, x)
    finite = jnp.isfinite(x)
    asym = (x2 >= far) & ~_nonpos_int(a2) & finite
    ser = _series([a2], [b], jnp.where(asym | ~finite, 0.0, x2), nser)
    ser = jnp.where(kummer, _exp_times(x, ser), ser)
    xa = jnp.where(asym, x2, far)
    aa, ba = jnp.where(asym, a2, 1.0), jnp.where(asym, b, 2.0)
    tail = _series([ba - aa, 1.0 - aa], [], 1.0 / xa, nasy)
    # (after Kummer's exp(x) the e^x2 cancels)
    log_front = (aa - ba) * jnp.log(xa) + jnp.where(kummer, 0.0, xa)
    asy = _gamma_ratio([ba], [aa]) * jnp.exp(log_front) * tail
    out = jnp.where(asym, asy, ser)
    # b at a pole of Gamma: inf, unless the series ends first (a a non-positive integer
    # above b); JAX's conventions a == 0: 1, a == b: exp(x) there
    b_pole = _nonpos_int(b) & ~(a_poly & (a > b))
    out = jnp.where(b_pole, jnp.where(a == 0, 1.0, jnp.where(a == b, jnp.exp(x), np.inf)), out)
    out = jnp.where(finite | (a == 0), out, np.nan)
    return jnp.where(jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x), np.nan, out)


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_impl(a, b, x)


def _hyp1f1_jvp(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    out, da, db = parameter_derivatives(_hyp1f1_impl, a, b, x)
    dx = a / b * _hyp1f1(a + 1.0, b + 1.0, x)
    return out, ta * da + tb * db + tx * dx


_hyp1f1.defjvp(_hyp1f1_jvp)


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!.

    Conventions as JAX: 1 where a == 0 (also at b == 0, where scipy gives inf), exp(x) where
    a == b; inf where b is 0 or a negative integer (unless a is a non-positive integer above
    b: then the series ends first, as scipy); NaN at infinite x. Accurate for |a|, |b| up to
    about 20 (the asymptotic series from |x| = 100 needs |x| well above |a| |b - a|).

    >>> sp.hyp1f1(jnp.asarray([1.0, -1.0]), 3.0, 2.0)    # [2.1945283, 0.3333333]
    """
    (a, b, x), dt = _u.floats("hyp1f1", a=a, b=b, x=x)
    return _u.finish(_hyp1f1(a, b, x), dt)


# ---- hyp2f1 -------------------------------------------------------------------------------
# x < -1/2: Pfaff's 2F1(a, b; c; x) = (1 - x)^-a 2F1(a, c - b; c; x / (x - 1)), with the new
# argument in (1/3, 1). Then on [-1/2, 1/2] the series; above, the connection to 1 - z
# (A&S 15.3.6), after Euler's 2F1(a, b; c; z) = (1 - z)^d 2F1(c - a, c - b; c; z) where
# d = c - a - b < 0. Where d is (within sqrt(eps) of) an integer m, 15.3.6's gamma functions
# have poles that cancel; there A&S 15.3.10/15.3.11, the digamma forms (as Cephes and JAX).
# a or b a non-positive integer: a polynomial, summed as it is (for any x); c - a or c - b
# one: Euler's transformation makes it a polynomial.
_H2F1 = {True: (400, 60, 1.5e-8), False: (200, 30, 2.5e-4)}    # steps: series, in 1 - z < 0.1
_NEAR = 0.9           # above: the connection to 1 - z (below, the series: 0.9^k)
_M_MAX = 8            # |d| above this: the series (15.3.6 cancels; the series converges
                      # like k^-(d+1))


def _hyp2f1_digamma(a, b, m, w, n):
    """2F1(a, b; a + b + m; 1 - w) for an integer m >= 0 (A&S 15.3.10-11)."""
    c = a + b + m
    # the finite sum sum_{k<m} (a)_k (b)_k / (k! (1 - m)_k) w^k, times Gamma(m) Gamma(c) /
    # (Gamma(a + m) Gamma(b + m)) (terms past m - 1 masked: (1 - m)_k is 0 there)
    def fin_body(cr):
        k, term, s = cr
        live = k + 1.0 < m
        d = (1.0 - m + k) * (k + 1.0)
        term = term * (a + k) * (b + k) * w / jnp.where(live, d, 1.0)
        return k + 1.0, term, s + jnp.where(live, term, 0.0)
    one = jnp.ones_like(w)
    fin = _loop(_M_MAX, fin_body, (w * 0.0, one, one))[2]
    ms = jnp.maximum(m, 1.0)
    fin = jnp.where(m >= 1.0, fin * _gamma_ratio([ms, c], [a + m, b + m]), 0.0)
    # the log series: sum_k (a+m)_k (b+m)_k / (k! (k+m)!) w^k [log w - psi(k+1) - psi(k+m+1)
    # + psi(a+k+m) + psi(b+k+m)], digammas by their recurrence
    am, bm = a + m, b + m
    lw = jnp.log(w)

    def log_body(cr):
        k, u, s, p1, pm, pa, pb = cr
        s = s + u * (lw - p1 - pm + pa + pb)
        u = u * (am + k) * (bm + k) * w / ((k + 1.0) * (k + m + 1.0))
        p1, pm = p1 + 1.0 / (k + 1.0), pm + 1.0 / (k + m + 1.0)
        pa, pb = pa + 1.0 / (am + k), pb + 1.0 / (bm + k)
        return k + 1.0, u, s, p1, pm, pa, pb
    u0 = jnp.exp(-_gammaln(m + 1.0))
    init = (w * 0.0, u0, w * 0.0, _digamma_impl(one), _digamma_impl(m + 1.0),
            _digamma_impl(am), _digamma_impl(bm))
    s = _loop(n, log_body, init)[2]
    sign = jnp.where(jnp.remainder(m, 2.0) == 1.0, -1.0, 1.0)      # (z - 1)^m = (-w)^m
    return fin - sign * jnp.exp(m * lw) * _gamma_ratio([c], [a, b]) * s


def _hyp2f1_near_one(a, b, c, z, n, tol):
    """2F1(a, b; c; z) for _NEAR < z < 1 and 0 <= d = c - a - b <= _M_MAX."""
    w = 1.0 - z
    d = c - a - b
    m = jnp.round(d)
    is_int = jnp.abs(d - m) < tol
    # d far from an integer: 15.3.6
    dn = jnp.where(is_int, 0.5, d)
    t1 = _gamma_ratio([c, dn], [c - a, c - b]) * _series([a, b], [1.0 - dn], w, n)
    t2 = _gamma_ratio([c, -dn], [a, b]) * jnp.exp(dn * jnp.log(w)) * \
        _series([c - a, c - b], [dn + 1.0], w, n)
    # d an integer: the digamma form (with d taken as that integer)
    dig = _hyp2f1_digamma(a, b, jnp.where(is_int, m, 0.0), w, n)
    return jnp.where(is_int, dig, t1 + t2)


def _hyp2f1_unit(a, b, c, z, n, n_near, tol):
    """2F1(a, b; c; z) for -1/2 <= z < 1: Euler's transformation where d = c - a - b < 0
    (the series' terms fall like k^-(d+1) z^k, the transformed ones like k^(d-1) z^k); then
    the series, or near 1 with d small the connection to 1 - z."""
    d = c - a - b
    neg = d < 0
    a1, b1 = jnp.where(neg, c - a, a), jnp.where(neg, c - b, b)
    front = jnp.where(neg, jnp.exp(d * jnp.log1p(-z)), 1.0)
    near = (z > _NEAR) & (jnp.abs(d) <= _M_MAX)
    ser = _series([a1, b1], [c], jnp.where(near, 0.0, z), n)
    zn = jnp.where(near, z, 0.95)
    nr = _hyp2f1_near_one(jnp.where(near, a1, 0.5), jnp.where(near, b1, 0.5),
                          jnp.where(near, c, 1.5), zn, n_near, tol)
    return front * jnp.where(near, nr, ser)


def _hyp2f1_impl(a, b, c, x):
    n, n_near, tol = _H2F1[_is64(x)]
    poly = _nonpos_int(a) | _nonpos_int(b)
    poly_euler = ~poly & (_nonpos_int(c - a) | _nonpos_int(c - b))
    d = c - a - b
    # the general case, x < 1
    gen = (x < 1) & ~poly & ~poly_euler
    xs = jnp.where(gen, x, 0.0)
    pf = xs < -0.5
    z = jnp.where(pf, xs / (xs - 1.0), xs)
    # (as Cephes: the smaller of a and b in the power)
    swap = pf & (a > b)
    p, q = jnp.where(swap, b, a), jnp.where(swap, a, b)
    q = jnp.where(pf, c - q, q)
    front = jnp.where(pf, jnp.exp(-p * jnp.log1p(-xs)), 1.0)
    out = front * _hyp2f1_unit(p, q, c, z, n, n_near, tol)
    # polynomials: a or b a non-positive integer, or (after Euler's) c - a or c - b
    xp = jnp.where(poly | poly_euler, x, 0.0)
    p1 = _series([a, b], [c], jnp.where(poly, xp, 0.0), n)
    # (x > 1: real where d is an integer, as scipy)
    d_int = d == jnp.round(d)
    xe = jnp.where(poly_euler & ((xp < 1) | d_int), xp, 0.0)
    sign = jnp.where((xe > 1) & (jnp.remainder(d, 2.0) == 1.0), -1.0, 1.0)
    p2 = sign * jnp.exp(d * jnp.log(jnp.abs(1.0 - xe))) * _series([c - a, c - b], [c], xe, n)
    out = jnp.where(poly, p1, jnp.where(poly_euler, p2, out))
    # x == 1 (Gauss: Gamma(c) Gamma(d) / (Gamma(c - a) Gamma(c - b)) for d > 0, else inf)
    # and x > 1: inf, as JAX and scipy (polynomials keep their value, as scipy)
    dg = jnp.where(d > 0, d, 1.0)
    gauss = jnp.where(d > 0, _gamma_ratio([c, dg], [c - a, c - b]), np.inf)
    out = jnp.where(~poly & (x == 1), gauss, out)
    out = jnp.where(~poly & (x > 1) & ~(poly_euler & d_int), np.inf, out)
    # c at a pole of Gamma: inf, unless a polynomial ends before it (as scipy)
    ends = (_nonpos_int(a) & (a > c)) | (_nonpos_int(b) & (b > c))
    out = jnp.where(_nonpos_int(c) & ~ends, np.inf, out)
    bad = jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(c) | jnp.isnan(x) | (x == -np.inf)
    return jnp.where(bad, np.nan, out)


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_impl(a, b, c, x)


def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    ta, tb, tc, tx = tangents
    sg = stop_gradient
    out, da = jvp(lambda v: _hyp2f1_impl(v, sg(b), sg(c), sg(x)), (a,), (jnp.ones_like(a),))
    _, db = jvp(lambda v: _hyp2f1_impl(sg(a), v, sg(c), sg(x)), (b,), (jnp.ones_like(b),))
    _, dc = jvp(lambda v: _hyp2f1_impl(sg(a), sg(b), v, sg(x)), (c,), (jnp.ones_like(c),))
    dx = a * b / c * _hyp2f1(a + 1.0, b + 1.0, c + 1.0, x)
    return out, ta * da + tb * db + tc * dc + tx * dx


_hyp2f1.defjvp(_hyp2f1_jvp)


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!
    for real x < 1 (at x = 1 Gauss's value where c - a - b > 0, else inf; inf for x > 1, as
    JAX and scipy, except for polynomials: a or b a non-positive integer). inf where c is 0
    or a negative integer (unless a polynomial ends before it, as scipy). Accurate for
    parameters up to about 20 in size; where c - a - b is within 1e-8 of an integer but not
    one, to about 1e-8 (float64; 1e-4 in float32), as in Cephes.

    >>> sp.hyp2f1(1.0, 1.0, 2.0, jnp.asarray([-3.0, 0.5]))    # [0.4620981, 1.3862944]
    """
    (a, b, c, x), dt = _u.floats("hyp2f1", a=a, b=b, c=c, x=x)
    return _u.finish(_hyp2f1(a, b, c, x), dt)


_u.export(globals(), "", __all__)
