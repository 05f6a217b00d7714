"""The complex functions of jax.scipy.special: wofz (the Faddeeva function) and sph_harm_y
(spherical harmonics). Re-exported by netcl.scipy.special; built from netcl operations on
complex arrays, so jit and vmap go through them (wofz also grad, by its derivative
w'(z) = -2 z w(z) + 2i / sqrt(pi)).

wofz: Weideman's rational approximation with N = 32 terms (J. A. C. Weideman, "Computation
of the complex error function", SIAM J. Numer. Anal. 31, 1994): in the upper half-plane
w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz), L = sqrt(N /
sqrt(2)), the polynomial's coefficients computed here from the FFT that paper gives; in the
lower half-plane w(z) = 2 exp(-z^2) - w(-z). About 1e-14 relative in the upper half-plane.

>>> import netcl.scipy.special as sp
>>> sp.wofz(jnp.asarray([1.0 + 1.0j]))      # [0.30474421+0.20821893j]
"""
import math

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..transforms.custom import custom_jvp

__all__ = ["wofz", "sph_harm_y"]

_WOFZ_N = 32
_WOFZ_L = math.sqrt(_WOFZ_N / math.sqrt(2.0))


def _weideman_coefficients(n, length):
    """Weideman's coefficients a_n ... a_1 (highest first, as polyval takes them)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    t = length * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t * t) * (length ** 2 + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return tuple(float(c) for c in a[1:n + 1][::-1])


_WOFZ_COEFFICIENTS = _weideman_coefficients(_WOFZ_N, _WOFZ_L)


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz), as jax.scipy.special.wofz (real
    arguments give complex results).

    >>> sp.wofz(jnp.asarray([0.0, 1.0 + 1.0j]))     # [1.+0.j, 0.30474421+0.20821893j]
    """
    arg = z
    try:
        z = jnp.asarray(arg)
    except (TypeError, ValueError):
        z = None
    if z is None or dtypes.kind(z.dtype) not in "fciub":
        got = np.asarray(arg).dtype if z is None else z.dtype
        raise TypeError(f"wofz: z must be a number array, got {got}")
    if not dtypes.is_complex(z.dtype):     # (as JAX: float32 -> complex64, ...)
        z = z.astype(dtypes.COMPLEX_OF.get(z.dtype, jnp.complex64))
    return _wofz(z)


@custom_jvp
def _wofz(z):
    upper = jnp.imag(z) >= 0
    zu = jnp.where(upper, z, -z)
    w = _wofz_upper(zu)
    return jnp.where(upper, w, 2 * jnp.exp(-z * z) - w)


def _wofz_upper(z):
    iz = 1j * z
    denominator = _WOFZ_L - iz
    big_z = (_WOFZ_L + iz) / denominator
    p = jnp.zeros_like(big_z)
    for c in _WOFZ_COEFFICIENTS:        # (Horner)
        p = p * big_z + c
    return 2 * p / (denominator * denominator) + (1 / math.sqrt(math.pi)) / denominator


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    w = _wofz(z)
    return w, dz * (-2 * z * w + 2j / math.sqrt(math.pi))


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi) (theta the colatitude, phi the longitude;
    the Condon-Shortley phase included, as scipy.special.sph_harm_y), as
    jax.scipy.special.sph_harm_y: `n_max` the largest degree (default max(n), which needs
    concrete n; degrees above it are clipped to it, as JAX's); diff_n unsupported, as in
    JAX.

    >>> sp.sph_harm_y(jnp.asarray([1]), jnp.asarray([0]), jnp.asarray([0.0]), jnp.asarray([0.0]))
    """
    if diff_n is not None:
        raise NotImplementedError("sph_harm_y: diff_n is not supported (JAX does not support "
                                  "it either)")
    n, m = jnp.asarray(n), jnp.asarray(m)
    if dtypes.kind(n.dtype) not in "iu" or dtypes.kind(m.dtype) not in "iu":
        raise TypeError(f"sph_harm_y: n and m must be integer arrays, got {n.dtype} and "
                        f"{m.dtype}")
    theta, phi = jnp.asarray(theta), jnp.asarray(phi)
    real = jnp.result_type(theta, phi, dtypes.default_float_dtype()
                           if not dtypes.is_inexact(theta.dtype) else theta.dtype)
    if n_max is None:
        n_max = int(np.max(np.asarray(n))) if n.size else 0
    n_max = int(n_max)
    n, m = jnp.minimum(n, n_max), m
    am = jnp.abs(m)
    x, s = jnp.cos(theta).astype(real), jnp.sin(theta).astype(real)
    # P_{k,k} up to k = |m|, normalized: p_00 = 1 / sqrt(4 pi),
    # p_kk = -sqrt((2k + 1) / (2k)) sin(theta) p_{k-1,k-1} (the sign: Condon-Shortley)
    pmm = jnp.full(jnp.broadcast_shapes(x.shape, am.shape), 1 / math.sqrt(4 * math.pi), real)
    for k in range(1, n_max + 1):
        pmm = jnp.where(am >= k, -math.sqrt((2 * k + 1) / (2 * k)) * s * pmm, pmm)
    # up the degree at order |m|: p_{l,m} = a_lm (x p_{l-1,m} - p_{l-2,m} / a_{l-1,m}),
    # a_lm = sqrt((4 l^2 - 1) / (l^2 - m^2)), from p_{m-1,m} = 0
    prev, cur = jnp.zeros_like(pmm), pmm
    a_prev = jnp.ones_like(pmm)
    mf = am.astype(real)
    for j in range(1, n_max + 1):
        lf = mf + j
        a = jnp.sqrt((4 * lf * lf - 1) / jnp.maximum(lf * lf - mf * mf, 1))
        nxt = a * (x * cur - prev / a_prev)
        going = (am + j) <= n
        prev, cur, a_prev = (jnp.where(going, cur, prev), jnp.where(going, nxt, cur),
                             jnp.where(going, a, a_prev))
    phase = jnp.exp(1j * (m.astype(real) * phi.astype(real)))
    sign = jnp.where((m < 0) & (am % 2 == 1), -1.0, 1.0).astype(real)
    return sign * cur * phase
