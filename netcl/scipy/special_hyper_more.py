"""More of jax.scipy.special (with special_hyper.py): Bessel functions of the first kind of
integer order (bessel_jn), the Fresnel integrals, the sine and cosine integrals (sici) and
Owen's T function. Re-exported by netcl.scipy.special; built from netcl operations only, so
grad, jit and vmap go through them. fresnel, sici and owens_t have JAX's exact derivatives
(custom_jvp); bessel_jn is differentiated through its recurrence, as in JAX.

>>> import netcl.scipy.special as sp
>>> sp.sici(jnp.asarray([1.0]))    # ([0.9460831], [0.3374039])
"""
import math

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..transforms.custom import custom_jvp
from . import _util as _u
from .special import _erfc_impl, _horner, _is64

__all__ = ["bessel_jn", "fresnel", "sici", "owens_t"]

_EULER = 0.57721566490153286061


# ---- sine and cosine integrals ------------------------------------------------------------
# Cephes' sici (as JAX and scipy): rational functions of x^2 up to 4, then
# Si = pi/2 - f cos x - g sin x, Ci = f sin x - g cos x with f, g rational in 1/x^2.
_SN = [-8.39167827910303881427e-11, 4.62591714427012837309e-8, -9.75759303843632795789e-6,
       9.76945438170435310816e-4, -4.13470316229406538752e-2, 1.00000000000000000302e0]
_SD = [2.03269266195951942049e-12, 1.27997891179943299903e-9, 4.41827842801218905784e-7,
       9.96412122043875552487e-5, 1.42085239326149893930e-2, 9.99999999999999996984e-1]
_CN = [2.02524002389102268789e-11, -1.35249504915790756375e-8, 3.59325051419993077021e-6,
       -4.74007206873407909465e-4, 2.89159652607555242092e-2, -1.00000000000000000080e0]
_CD = [4.07746040061880559506e-12, 3.06780997581887812692e-9, 1.23210355685883423679e-6,
       3.17442024775032769882e-4, 5.10028056236446052392e-2, 4.00000000000000000080e0]
_FN4 = [4.23612862892216586994e0, 5.45937717161812843388e0, 1.62083287701538329132e0,
        1.67006611831323023771e-1, 6.81020132472518137426e-3, 1.08936580650328664411e-4,
        5.48900223421373614008e-7]
_FD4 = [1.0, 8.16496634205391016773e0, 7.30828822505564552187e0, 1.86792257950184183883e0,
        1.78792052963149907262e-1, 7.01710668322789753610e-3, 1.10034357153915731354e-4,
        5.48900252756255700982e-7]
_GN4 = [8.71001698973114191777e-2, 6.11379109952219284151e-1, 3.97180296392337498885e-1,
        7.48527737628469092119e-2, 5.38868681462177273157e-3, 1.61999794598934024525e-4,
        1.97963874140963632189e-6, 7.82579040744090311069e-9]
_GD4 = [1.0, 1.64402202413355338886e0, 6.66296701268987968381e-1, 9.88771761277688796203e-2,
        6.22396345441768420760e-3, 1.73221081474177119497e-4, 2.02659182086343991969e-6,
        7.82579218933534490868e-9]
_FN8 = [4.55880873470465315206e-1, 7.13715274100146711374e-1, 1.60300158222319456320e-1,
        1.16064229408124407915e-2, 3.49556442447859055605e-4, 4.86215430826454749482e-6,
        3.20092790091004902806e-8, 9.41779576128512936592e-11, 9.70507110881952024631e-14]
_FD8 = [1.0, 9.17463611873684053703e-1, 1.78685545332074536321e-1, 1.22253594771971293032e-2,
        3.58696481881851580297e-4, 4.92435064317881464393e-6, 3.21956939101046018377e-8,
        9.43720590350276732376e-11, 9.70507110881952025725e-14]
_GN8 = [6.97359953443276214934e-1, 3.30410979305632063225e-1, 3.84878767649974295920e-2,
        1.71718239052347903558e-3, 3.48941165502279436777e-5, 3.47131167084116673800e-7,
        1.70404452782044526189e-9, 3.85945925430276600453e-12, 3.14040098946363334640e-15]
_GD8 = [1.0, 1.68548898811011640017e0, 4.87852258695304967486e-1, 4.67913194259625806320e-2,
        1.90284426674399523638e-3, 3.68475504442561108162e-5, 3.57043223443740838771e-7,
        1.72693748966316146736e-9, 3.87830166023954706752e-12, 3.14040098946363335242e-15]


def _ratio(t, num, den):
    return _horner(t, num) / _horner(t, den)


@custom_jvp
def _sici(x):
    a = jnp.abs(x)
    small = a <= 4.0
    # (each branch at a point where it is finite: a branch not taken still runs)
    s = jnp.where(small, a, 1.0)
    t = s * s
    si_small = s * _ratio(t, _SN, _SD)
    ci_small = _EULER + jnp.log(s) + t * _ratio(t, _CN, _CD)
    big = jnp.where(small | jnp.isinf(a), 5.0, a)
    z = 1.0 / (big * big)
    near = big < 8.0
    f = jnp.where(near, _ratio(z, _FN4, _FD4), _ratio(z, _FN8, _FD8)) / big
    g = z * jnp.where(near, _ratio(z, _GN4, _GD4), _ratio(z, _GN8, _GD8))
    sn, cs = jnp.sin(big), jnp.cos(big)
    si_big = math.pi / 2 - f * cs - g * sn
    ci_big = f * sn - g * cs
    si = jnp.where(small, si_small, jnp.where(jnp.isinf(a), math.pi / 2, si_big))
    ci = jnp.where(small, ci_small, jnp.where(jnp.isinf(a), 0.0, ci_big))
    # Si is odd; Ci(x) for x < 0 is Ci(|x|) (the real part, as scipy), NaN at -inf
    si = jnp.where(x < 0, -si, si)
    ci = jnp.where(x == -np.inf, np.nan, jnp.where(a == 0, -np.inf, ci))
    return si, ci


def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    xs = jnp.where(x == 0, 1.0, x)
    sinc = jnp.where(x == 0, 1.0, jnp.sin(xs) / xs)
    return _sici(x), (t * sinc, t * (jnp.cos(x) / x))


_sici.defjvp(_sici_jvp)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si = int_0^x sin(t)/t dt, Ci = euler_gamma
    + log|x| + int_0^x (cos(t) - 1)/t dt (Ci(-x) = Ci(x), as scipy's real result; -inf at 0,
    NaN at -inf). Cephes' rational approximations, as JAX and scipy; the derivatives are
    sin(x)/x and cos(x)/x (JAX's).

    >>> si, ci = sp.sici(jnp.asarray([1.0, 10.0]))
    >>> si, ci      # [0.9460831, 1.6583477], [0.3374039, -0.0454564]
    """
    (x,), dt = _u.floats("sici", x=x)
    si, ci = _sici(x)
    return _u.finish(si, dt), _u.finish(ci, dt)


# ---- Fresnel integrals --------------------------------------------------------------------
# Cephes' fresnl (float64) and fresnlf (float32), as JAX's fresnel and scipy.
_FR32_SN = [1.647629463788700e-9, -1.522754752581096e-7, 8.424748808502400e-6,
            -3.120693124703272e-4, 7.244727626597022e-3, -9.228055941124598e-2,
            5.235987735681432e-1]
_FR32_CN = [1.416802502367354e-8, -1.157231412229871e-6, 5.387223446683264e-5,
            -1.604381798862293e-3, 2.818489036795073e-2, -2.467398198317899e-1,
            9.999999760004487e-1]
_FR32_FN = [-1.903009855649792e12, 1.355942388050252e11, -4.158143148511033e9,
            7.343848463587323e7, -8.732356681548485e5, 8.560515466275470e3,
            -1.032877601091159e2, 2.999401847870011e0]
_FR32_GN = [-1.860843997624650e11, 1.278350673393208e10, -3.779387713202229e8,
            6.492611570598858e6, -7.787789623358162e4, 8.602931494734327e2,
            -1.493439396592284e1, 9.999841934744914e-1]
_FR64_SN = [-2.99181919401019853726e3, 7.08840045257738576863e5, -6.29741486205862506537e7,
            2.54890880573376359104e9, -4.42979518059697779103e10, 3.18016297876567817986e11]
_FR64_SD = [1.0, 2.81376268889994315696e2, 4.55847810806532581675e4, 5.17343888770096400730e6,
            4.19320245898111231129e8, 2.24411795645340920940e10, 6.07366389490084639049e11]
_FR64_CN = [-4.98843114573573548651e-8, 9.50428062829859605134e-6, -6.45191435683965050962e-4,
            1.88843319396703850064e-2, -2.05525900955013891793e-1, 9.99999999999999998822e-1]
_FR64_CD = [3.99982968972495980367e-12, 9.15439215774657478799e-10, 1.25001862479598821474e-7,
            1.22262789024179030997e-5, 8.68029542941784300606e-4, 4.12142090722199792936e-2,
            1.00000000000000000118e0]
_FR64_FN = [4.21543555043677546506e-1, 1.43407919780758885261e-1, 1.15220955073585758835e-2,
            3.45017939782574027900e-4, 4.63613749287867322088e-6, 3.05568983790257605827e-8,
            1.02304514164907233465e-10, 1.72010743268161828879e-13, 1.34283276233062758925e-16,
            3.76329711269987889006e-20]
_FR64_FD = [1.0, 7.51586398353378947175e-1, 1.16888925859191382142e-1, 6.44051526508858611005e-3,
            1.55934409164153020873e-4, 1.84627567348930545870e-6, 1.12699224763999035261e-8,
            3.60140029589371370404e-11, 5.88754533621578410010e-14, 4.52001434074129701496e-17,
            1.25443237090011264384e-20]
_FR64_GN = [5.04442073643383265887e-1, 1.97102833525523411709e-1, 1.87648584092575249293e-2,
            6.84079380915393090172e-4, 1.15138826111884280931e-5, 9.82852443688422223854e-8,
            4.45344415861750144738e-10, 1.08268041139020870318e-12, 1.37555460633261799868e-15,
            8.36354435630677421531e-19, 1.86958710162783235106e-22]
_FR64_GD = [1.0, 1.47495759925128324529e0, 3.37748989120019970451e-1, 2.53603741420338795122e-2,
            8.14679107184306179049e-4, 1.27545075667729118702e-5, 1.04314589657571990585e-7,
            4.60680728146520428211e-10, 1.10273215066240270757e-12, 1.38796531259578871258e-15,
            8.39158816283118707363e-19, 1.86958710162783236342e-22]


def _sincos_half_pi_sq(x):
    """(sin, cos) of pi x^2 / 2 for x >= 0, with the argument reduced exactly: x^2 / 2 mod 2
    from s = x mod 2 as s (x - s/2) mod 2 (x^2 itself would carry a rounding error times pi
    x^2, all of the result at large x)."""
    s = jnp.fmod(x, 2.0)
    r = jnp.fmod(s * (x - s * 0.5), 2.0)
    sn = jnp.where(r < 0.5, jnp.sin(math.pi * r), jnp.where(
        r > 1.5, jnp.sin(math.pi * (r - 2.0)), -jnp.sin(math.pi * (r - 1.0))))
    cs = jnp.where(r == 0.5, 0.0, jnp.where(r < 1.0, -jnp.sin(math.pi * (r - 0.5)),
                                            jnp.sin(math.pi * (r - 1.5))))
    return sn, cs


@custom_jvp
def _fresnel(x):
    is64 = _is64(x)
    a = jnp.abs(x)
    small = a * a < 2.5625
    xs = jnp.where(small, a, 0.0)
    x2 = xs * xs
    t = x2 * x2
    if is64:
        s_small = xs * x2 * _ratio(t, _FR64_SN, _FR64_SD)
        c_small = xs * _ratio(t, _FR64_CN, _FR64_CD)
    else:
        s_small = xs * x2 * _horner(t, _FR32_SN)
        c_small = xs * _horner(t, _FR32_CN)
    xb = jnp.where(small | jnp.isinf(a), 2.0, a)
    sn, cs = _sincos_half_pi_sq(xb)
    # the auxiliary functions f, g (rational in 1/(pi x^2)^2), then the far form from 36974
    pt = math.pi * xb * xb
    u = 1.0 / (pt * pt)
    if is64:
        f = 1.0 - u * _ratio(u, _FR64_FN, _FR64_FD)
        g = _ratio(u, _FR64_GN, _FR64_GD) / pt
    else:
        f = 1.0 - u * _horner(u, _FR32_FN)
        g = _horner(u, _FR32_GN) / pt
    px = math.pi * xb
    c_mid = 0.5 + (f * sn - g * cs) / px
    s_mid = 0.5 - (f * cs + g * sn) / px
    if is64:
        far = xb > 36974.0
        c_mid = jnp.where(far, 0.5 + sn / px, c_mid)
        s_mid = jnp.where(far, 0.5 - cs / px, s_mid)
    s = jnp.where(small, s_small, jnp.where(jnp.isinf(a), 0.5, s_mid))
    c = jnp.where(small, c_small, jnp.where(jnp.isinf(a), 0.5, c_mid))
    neg = x < 0
    return jnp.where(neg, -s, s), jnp.where(neg, -c, c)


def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    sn, cs = _sincos_half_pi_sq(jnp.abs(x))
    return _fresnel(x), (t * sn, t * cs)


_fresnel.defjvp(_fresnel_jvp)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)): int_0^x sin(pi t^2 / 2) dt and int_0^x
    cos(pi t^2 / 2) dt (both +-1/2 at +-inf). Cephes' approximations (fresnlf's in float32),
    as JAX and scipy; the derivatives are sin(pi x^2 / 2) and cos(pi x^2 / 2) (JAX's).

    >>> s, c = sp.fresnel(jnp.asarray([1.0, 3.0]))
    >>> s, c        # [0.4382591, 0.496313], [0.7798934, 0.6057208]
    """
    (x,), dt = _u.floats("fresnel", x=x)
    s, c = _fresnel(x)
    return _u.finish(s, dt), _u.finish(c, dt)


# ---- Owen's T function --------------------------------------------------------------------
# T(h, a) = exp(-h^2/2) / (2 pi) int_0^a exp(-h^2 u^2 / 2) / (1 + u^2) du. For |a| <= 1, the
# integral by Gauss-Legendre quadrature over [0, min(a, A/h)]: past u = A/h the Gaussian
# factor is below exp(-A^2/2) (A = 9: 3e-18; 6 in float32) relative to what came before, and
# on [0, A/h] the integrand is smooth enough for 20 points (float64; 12 in float32: 1e-13
# and 3e-9 relative against scipy). JAX uses 13 fixed points on [0, a], which loses relative
# accuracy once h a > 6 (1e-6 at h = 10, 6% at h = 20, a = 0.99). |a| > 1: reflection, as
# JAX: T(h, a) = (Q(h) + Q(a h)) / 2 - Q(h) Q(a h) - T(a h, 1 / a), Q = ndtr(-h).
_OWENS = {True: (20, 9.0), False: (12, 6.0)}


def _owens_t_core(h, a):
    """T(h, a) for h >= 0, 0 <= a <= 1."""
    n, cut = _OWENS[_is64(h)]
    nodes, weights = np.polynomial.legendre.leggauss(n)
    hs = jnp.where(h > 0, h, 1.0)
    half = jnp.where(h * a > cut, cut / hs, a) * 0.5
    acc = jnp.zeros_like(h)
    for xi, wi in zip(nodes, weights):
        u = (float(xi) + 1.0) * half
        acc = acc + float(wi) * jnp.exp(h * h * u * u * -0.5) / (1.0 + u * u)
    return jnp.exp(h * h * -0.5) * (half * acc) * (1 / (2 * math.pi))


@custom_jvp
def _owens_t(h, a):
    h_ = jnp.abs(h)
    aa = jnp.abs(a)
    inv = aa > 1.0
    hh = jnp.where(inv, aa * h_, h_)
    ai = jnp.where(inv, 1.0 / jnp.where(inv, aa, 1.0), aa)
    core = _owens_t_core(jnp.where(jnp.isinf(hh), 0.0, hh), ai)
    core = jnp.where(jnp.isinf(hh), 0.0, core)
    r2 = 1 / math.sqrt(2)
    # (erf form where both are small: 1 - erfc products would cancel)
    eh, eah = _erfc_impl(h_ * r2), _erfc_impl(aa * h_ * r2)
    small = 0.25 - 0.25 * lax.erf(h_ * r2) * lax.erf(jnp.where(inv, aa, 1.0) * h_ * r2)
    refl = jnp.where(aa * h_ <= 0.67, small, 0.25 * (eh + eah - eh * eah)) - core
    out = jnp.sign(a) * jnp.where(inv, jnp.where(jnp.isinf(aa), 0.25 * eh, refl), core)
    return jnp.where(jnp.isnan(h) | jnp.isnan(a), np.nan, out)


def _owens_t_jvp(primals, tangents):
    h, a = primals
    th, ta = tangents
    # JAX's: dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi)),
    # dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2))
    dh = jnp.exp(h * h * -0.5) * lax.erf(a * h * (1 / math.sqrt(2))) * (
        -0.5 / math.sqrt(2 * math.pi))
    da = jnp.exp((1.0 + a * a) * h * h * -0.5) / ((1.0 + a * a) * (2 * math.pi))
    return _owens_t(h, a), th * dh + ta * da


_owens_t.defjvp(_owens_t_jvp)


def owens_t(h, a):
    """Owen's T function, T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx:
    even in h, odd in a (T(h, +-inf) = +-Q(|h|)/2). Gauss-Legendre quadrature on a cut
    interval (relative accuracy at every h, where JAX's 13 fixed points lose it past h a ~ 6),
    reflection for |a| > 1. The derivatives are JAX's exact formulas.

    >>> sp.owens_t(jnp.asarray([0.0, 1.0]), jnp.asarray([1.0, 0.5]))   # [0.125, 0.0430647]
    """
    (h, a), dt = _u.floats("owens_t", h=h, a=a)
    return _u.finish(_owens_t(h, a), dt)


# ---- Bessel functions of the first kind, orders 0..v ---------------------------------------
# Miller's backward recurrence, as JAX (Zhang and Jin's BJNDD): from order n_iter + 1 down,
# f_k = 2 (k + 1) / z f_{k+1} - f_{k+2}, normalized by J_0 + 2 J_2 + 2 J_4 + ... = 1. Here in
# ratios q_k = f_{k+1} / f_k = z / (2 (k + 1) - z q_{k+1}) and e_k = sum_{j >= k, j even}
# f_j / f_k = [k even] + q_k e_{k+1}: the same recurrence, but the f_k themselves grow like
# 1/J_k and overflow (JAX's float32 result is NaN for |z| < 10 or so, and at z = 0).

def _bessel_jn_impl(z, v, n_iter):
    zero = jnp.zeros_like(z)
    # start: f_{n+2} = 0 (q_{n+1} = 0), e_{n+1} = [n + 1 even]
    top = n_iter + 1
    init = (zero + float(top - 1), zero, zero + float(top % 2 == 0), zero + float(top % 2))

    def step(c):
        k, q, e, even = c                    # k: the order being computed, even: [k even]
        q = z / ((k + 1.0) * 2.0 - z * q)
        return k - 1.0, q, even + q * e, 1.0 - even
    # orders n_iter .. v: only the running ratio and sum are needed
    c = lax.fori_loop(0, n_iter - v + 1, lambda i, c: step(c), init)
    qs = []
    for _ in range(v):                       # orders v - 1 .. 0: keep each ratio
        c = step(c)
        qs.append(c[1])
    e0 = c[2]
    j = 1.0 / (e0 * 2.0 - 1.0)
    out = [j]
    for q in reversed(qs):
        j = j * q
        out.append(j)
    return jnp.stack(out)            # (NaN at +-inf, as scipy)


def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind J_0(z), ..., J_v(z) for real z, stacked along a new
    leading axis (shape (v + 1, *z.shape)), as jax.scipy.special.bessel_jn: Miller's backward
    recurrence from order n_iter + 1 (in ratios, so without JAX's float32 overflow: JAX gives
    NaN at z = 0 and, in float32, for small |z|). Accurate for |z| well below n_iter (the
    recurrence must start past the turning point: n_iter = 50 gives float64 accuracy up to
    |z| ~ 25); v must be an int with 0 <= v <= n_iter. Differentiable through the recurrence.

    >>> sp.bessel_jn(jnp.asarray([1.0, 2.0]), v=1)
    [[0.7651977, 0.2238908], [0.4400506, 0.5767248]]
    """
    v = _u.check_int("bessel_jn", "v", v, 0)
    n_iter = _u.check_int("bessel_jn", "n_iter", n_iter, 1)
    if v > n_iter:
        raise ValueError(f"bessel_jn: v must be <= n_iter (the recurrence starts at order "
                         f"n_iter + 1), got v={v}, n_iter={n_iter}")
    (z,), dt = _u.floats("bessel_jn", z=z)
    return _u.finish(_bessel_jn_impl(z, v, n_iter), dt)


_u.export(globals(), "", __all__)
