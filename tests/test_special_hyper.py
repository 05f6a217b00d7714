"""netcl.scipy.special's bessel_jn, fresnel, sici, owens_t, hyp1f1 and hyp2f1
(special_hyper.py, special_hyper_more.py): values against scipy in float32 and float64 (one
array of many points per function: each new shape builds kernels), against JAX on a few
points, float64 derivatives against closed forms and scipy finite differences, jit and vmap,
and argument errors."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.special as sp
from util import as_dtype, assert_agrees, concat_points, grid_points, raises_with

ss = pytest.importorskip("scipy.special")


def _bessel_ref(z):
    return np.stack([ss.jv(k, z) for k in range(8)])


_SPECIAL = [0.0, np.inf, -np.inf, np.nan]
_TRIG = concat_points(np.linspace(-30, 30, 241), np.logspace(-20, 9, 30), -np.logspace(-20, 9, 30),
             _SPECIAL)
_OWENS = grid_points([0, 0.01, 0.1, 0.5, 1, 2, 3, 5, 8, 10, 20, 35, -1.5, np.inf, np.nan],
               [0, 0.01, 0.1, 0.5, 0.9, 0.99, 1, 1.01, 1.5, 3, 10, 100, 1e5, -0.7, np.inf])
# hyp1f1: a - b up to about 10 where x < 0 (Kummer's transformation leaves a series in
# b - a, which cancels when that is far below 0; 1.6e-7 at a = 20, b = -2.5, x = -30)
_H1 = grid_points([-10, -3.5, -1, 0, 0.5, 1, 2.5, 7, 12.2], [-2.5, 0.5, 1, 2, 3.7, 10, 20],
            [-150, -90, -30, -5, -1, -0.1, 0, 0.3, 1, 5, 30, 80, 99, 120, 300])
_H2 = grid_points([-3, -1.5, 0, 0.5, 1, 2.3, 5, 12.5], [0.5, 1, 2.3, -2, 4.1],
            [-2.5, 0.5, 1, 2, 3.3, 7.5, 15],
            [-20, -3, -1, -0.6, -0.3, 0, 0.2, 0.5, 0.6, 0.8, 0.9, 0.95, 0.99, 1.0, 1.5])
_H2_F32 = (_H2[0] <= 5) & (_H2[1] <= 2.3)      # (float32: away from the largest cancellations)
_H1_F32 = (_H1[0] >= -3.5) & (_H1[0] <= 7)


def _hyp2f1_ref(*args):
    # infinities unsigned, as JAX (scipy signs some at x == 1 and at the poles of c)
    v = ss.hyp2f1(*args)
    return np.where(np.isinf(v), np.inf, v)

# (name, netcl function, scipy reference, argument arrays, (rtol, atol) for float32 and for
# float64): a few times the measured errors. sici's Ci and the hypergeometric functions near
# their zeros are accurate only absolutely (atol). hyp2f1's float64 worst case, 1.4e-8, is
# a cancelling alternating series (a = 12.5, c = 1, x = -3, value 8e-8); most points are
# at 1e-14.
VALUE_CASES = [
    ("sici_si", lambda x: sp.sici(x)[0], lambda x: ss.sici(x)[0], (_TRIG,), (3e-7, 0),
     (1e-15, 0)),
    ("sici_ci", lambda x: sp.sici(x)[1], lambda x: ss.sici(x)[1], (_TRIG,), (3e-7, 3e-7),
     (1e-15, 1e-15)),
    ("fresnel_s", lambda x: sp.fresnel(x)[0], lambda x: ss.fresnel(x)[0], (_TRIG,), (1e-6, 0),
     (1e-12, 0)),
    ("fresnel_c", lambda x: sp.fresnel(x)[1], lambda x: ss.fresnel(x)[1], (_TRIG,), (1e-6, 0),
     (1e-12, 0)),
    ("owens_t", sp.owens_t, ss.owens_t, _OWENS, (1e-5, 0), (5e-13, 0)),
    ("bessel_jn", lambda z: sp.bessel_jn(z, v=7), _bessel_ref,
     (concat_points(np.linspace(-22, 22, 177), np.logspace(-20, 0, 11), _SPECIAL),), (0, 2e-7),
     (0, 2e-15)),
    ("bessel_jn_far", lambda z: sp.bessel_jn(z, v=7, n_iter=160),  _bessel_ref,
     (np.linspace(20, 100, 33),), (0, 2e-6), (0, 1e-14)),
    ("hyp1f1", sp.hyp1f1, ss.hyp1f1, _H1, None, (2e-9, 1e-14)),
    ("hyp1f1_f32", sp.hyp1f1, ss.hyp1f1, [v[_H1_F32] for v in _H1], (2e-3, 1e-6), None),
    ("hyp2f1", sp.hyp2f1, _hyp2f1_ref, _H2, None, (3e-8, 1e-14)),
    ("hyp2f1_f32", sp.hyp2f1, _hyp2f1_ref, [v[_H2_F32] for v in _H2], (5e-4, 1e-6), None),
]


# (case, dtype) pairs with a tolerance: some grids are for one dtype only
_VALUE_RUNS = [(c, dt) for c in VALUE_CASES
               for dt, tol in ((np.float32, c[4]), (np.float64, c[5])) if tol is not None]


@pytest.mark.parametrize("case,dtype", _VALUE_RUNS,
                         ids=[f"{c[0]}-{dt.__name__}" for c, dt in _VALUE_RUNS])
def test_values_match_scipy(case, dtype):
    name, fn, ref, args, tol32, tol64 = case
    tol = tol32 if dtype == np.float32 else tol64
    args = [np.asarray(a, dtype) for a in args]
    got = fn(*[jnp.asarray(a) for a in args])
    assert np.asarray(got).dtype == dtype, name
    with np.errstate(all="ignore"):
        want = np.asarray(ref(*[a.astype(np.float64) for a in args])).astype(dtype)
    assert_agrees(got, want, *tol, f"{name} {dtype.__name__}")


def test_edge_conventions():
    nan, inf = np.nan, np.inf
    f = lambda v: as_dtype(v, np.float64)                        # noqa: E731
    # bessel_jn: (v + 1, *z.shape); J_k(0) = [k == 0] (JAX: NaN), 0 at +-inf
    out = sp.bessel_jn(jnp.zeros((2, 3)), v=2)
    assert out.shape == (3, 2, 3)
    assert_agrees(out[:, 0, 0], [1.0, 0.0, 0.0], 0)
    # hyp1f1 (JAX's conventions): a == 0: 1 (also b == 0), a == b: exp(x), b == 0: inf;
    # a non-positive integer above a negative integer b: the polynomial (as scipy)
    assert_agrees(sp.hyp1f1(f([0, 0, 1.5, 1, -1]), f([0, 1, 1.5, 0, -2]), f([1, 1, 1, 1, 1])),
                  [1, 1, np.e, inf, 1.5], 1e-15)
    # hyp2f1: x == 1 Gauss's value (d > 0) or inf, x > 1 inf except polynomials (as scipy)
    # and c at a pole: inf unless a polynomial ends before it; NaN in, NaN out
    assert_agrees(sp.hyp2f1(f([1, 1.5, -2, 1, -2, 1, nan]), f([1, 1, 1, 1, 1, 1, 1]),
                            f([3, 2, 1, 2, -3, -2, 2]), f([1, 1, 3, 1.5, 0.5, 0.5, 0.5])),
                  [2.0, inf, 4.0, inf, ss.hyp2f1(-2, 1, -3, 0.5), inf, nan], 1e-14)
    si, ci = sp.sici(f([0.0, inf, -inf]))
    assert_agrees(si, [0, np.pi / 2, -np.pi / 2], 1e-16)
    assert_agrees(ci, [-inf, 0, nan], 0)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jsp = pytest.importorskip("jax.scipy.special")
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        x = np.array([-7.5, -1.0, 0.3, 2.0, 6.0, 40.0])
        # (fresnel: the same Cephes port; JAX's takes 1.5 s to compile)
        for g, w in zip(sp.sici(as_dtype(x, np.float64)), jsp.sici(x)):
            assert_agrees(g, np.asarray(w), 1e-14, 1e-16, "sici")
        h, a = np.array([0.0, 0.5, 2.0, -1.0]), np.array([0.3, 1.0, 3.0, -0.8])
        assert_agrees(sp.owens_t(as_dtype(h, np.float64), as_dtype(a, np.float64)),
                      np.asarray(jsp.owens_t(h, a)), 1e-13)
        z = np.array([0.5, 3.0, -8.0])
        assert_agrees(sp.bessel_jn(as_dtype(z, np.float64), v=3),
                      np.asarray(jsp.bessel_jn(z, v=3)), 1e-12, 1e-15)
        # (hyp1f1, hyp2f1: JAX's only agree where its plain series are right, and take
        # seconds to compile; they are checked against scipy above)
    finally:
        jax.config.update("jax_enable_x64", old)


# ---- derivatives (float64) ----------------------------------------------------------------

def _vgrad(f, argnum=0):
    return netcl.vmap(netcl.grad(f, argnums=argnum))


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_derivatives():
    # (not at 0: there Ci' = 1/x is inf, and reverse mode multiplies it by Ci's zero
    # cotangent, NaN, also when only Si is differentiated)
    x = np.array([1e-3, 0.4, 2.5, -3.0, 12.0])
    f64 = lambda v: as_dtype(v, np.float64)                          # noqa: E731
    # JAX's rules: Si' = sin x / x, Ci' = cos x / x, S' = sin(pi x^2/2), C' = cos(pi x^2/2)
    assert_agrees(_vgrad(lambda v: sp.sici(v)[0])(f64(x)), np.sinc(x / np.pi), 1e-15)
    assert_agrees(_vgrad(lambda v: sp.sici(v)[1])(f64(x)), np.cos(x) / x, 1e-14)
    # (numpy's sin(pi x^2 / 2) carries the rounding of pi x^2 / 2: 1e-14 at x = 12)
    assert_agrees(_vgrad(lambda v: sp.fresnel(v)[0])(f64(x)), np.sin(np.pi * x * x / 2),
                  1e-13, 5e-14)
    assert_agrees(_vgrad(lambda v: sp.fresnel(v)[1])(f64(x)), np.cos(np.pi * x * x / 2),
                  1e-13, 5e-14)
    # owens_t: JAX's closed forms, checked here against scipy's differences
    h, a = np.array([0.3, 1.0, 2.5, -0.7]), np.array([0.5, 2.0, -0.4, 1.3])
    assert_agrees(_vgrad(sp.owens_t, 0)(f64(h), f64(a)), _fd(lambda v: ss.owens_t(v, a), h),
                  1e-8, 1e-12)
    assert_agrees(_vgrad(sp.owens_t, 1)(f64(h), f64(a)), _fd(lambda v: ss.owens_t(h, v), a),
                  1e-8, 1e-12)
    # bessel_jn through the recurrence: J_0' = -J_1, J_3' = (J_2 - J_4) / 2
    z = np.array([0.5, 3.0, -8.0, 15.0])
    assert_agrees(_vgrad(lambda v: sp.bessel_jn(v, v=4)[0])(f64(z)), -ss.jv(1, z), 1e-12, 1e-14)
    assert_agrees(_vgrad(lambda v: sp.bessel_jn(v, v=4)[3])(f64(z)),
                  (ss.jv(2, z) - ss.jv(4, z)) / 2, 1e-12, 1e-14)
    # hyp1f1 and hyp2f1: x exactly (a/b 1F1(a+1, b+1, x), ab/c 2F1(a+1, b+1, c+1, x)), the
    # parameters through the evaluation. Forward mode along all arguments at once (each
    # evaluation of the rule differentiates every argument), against the same sum of scipy's
    # differences and the x rule; hyp2f1 through the series (x = 0.3), Pfaff's (x = -3) and
    # the connection to 1 - x (x = 0.95), hyp1f1 through Kummer's (x = -4) and the
    # asymptotic series (x = 120)
    a, b, x = np.array([0.5, 2.0, -1.5, 1.2]), np.array([1.5, 0.7, 2.5, 3.0]), \
        np.array([0.3, -4.0, 2.0, 120.0])
    args = tuple(f64(v) for v in (a, b, x))
    _, t = netcl.jvp(sp.hyp1f1, args, tuple(jnp.ones_like(v) for v in args))
    want = (_fd(lambda v: ss.hyp1f1(v, b, x), a) + _fd(lambda v: ss.hyp1f1(a, v, x), b)
            + a / b * ss.hyp1f1(a + 1, b + 1, x))
    assert_agrees(t, want, 1e-7)
    a, b, c, x = (np.array([0.5, 1.2, 2.0]), np.array([1.0, 0.7, 1.5]), np.array([2.5, 3.1, 4.0]),
                  np.array([0.3, -3.0, 0.95]))
    args = tuple(f64(v) for v in (a, b, c, x))
    _, t = netcl.jvp(sp.hyp2f1, args, tuple(jnp.ones_like(v) for v in args))
    want = (_fd(lambda v: ss.hyp2f1(v, b, c, x), a) + _fd(lambda v: ss.hyp2f1(a, v, c, x), b)
            + _fd(lambda v: ss.hyp2f1(a, b, v, x), c)
            + a * b / c * ss.hyp2f1(a + 1, b + 1, c + 1, x))
    assert_agrees(t, want, 1e-7)


# ---- jit and vmap -------------------------------------------------------------------------

def test_jit_and_vmap_agree_with_eager():
    x = as_dtype(np.linspace(-9, 9, 7), np.float64)
    cases = [("sici", lambda v: sp.sici(v)[1], (x,)),
             ("owens_t", sp.owens_t, (x, x * 0.3)),
             ("bessel_jn", lambda v: sp.bessel_jn(v, v=2), (x,)),
             ("hyp1f1", sp.hyp1f1, (x * 0.1 + 1.0, x * 0.1 + 2.0, x))]
    for name, fn, args in cases:
        eager = np.asarray(fn(*args))
        assert_agrees(netcl.jit(fn)(*args), eager, 1e-14, 1e-16, f"jit {name}")
        if name != "bessel_jn":                    # (its output is stacked: (v + 1, n))
            assert_agrees(netcl.vmap(fn)(*args), eager, 1e-14, 1e-16, f"vmap {name}")
    b = np.asarray(sp.bessel_jn(x, v=2))
    assert_agrees(netcl.vmap(lambda v: sp.bessel_jn(v, v=2))(x), b.T, 1e-14, 1e-16)
    a = as_dtype([0.5, 1.0, 2.0], np.float64)
    args = (a, a + 0.5, a + 2.0, as_dtype([-2.0, 0.4, 0.97], np.float64))
    assert_agrees(netcl.vmap(sp.hyp2f1)(*args), np.asarray(sp.hyp2f1(*args)), 1e-14)


# ---- arguments ----------------------------------------------------------------------------

def test_argument_handling():
    # v and n_iter: Python ints, as JAX (operator.index); v <= n_iter here (JAX truncates)
    raises_with(TypeError, lambda: sp.bessel_jn(1.0, v=2.0), "bessel_jn", "v")
    raises_with(TypeError, lambda: sp.bessel_jn(1.0, v=jnp.asarray(2)), "bessel_jn", "v")
    raises_with(ValueError, lambda: sp.bessel_jn(1.0, v=-1), "bessel_jn", "v")
    raises_with(ValueError, lambda: sp.bessel_jn(1.0, v=5, n_iter=3), "bessel_jn", "n_iter")
    raises_with(TypeError, lambda: sp.bessel_jn(1.0, v=1, n_iter=2.5), "bessel_jn", "n_iter")
    raises_with(TypeError, lambda: sp.sici("x"), "sici")
    raises_with(TypeError, lambda: sp.fresnel([1.0]), "fresnel")
    raises_with(TypeError, lambda: sp.hyp2f1(1.0, 1.0, 2.0, None), "hyp2f1")
    from netcl.core.shapes import IncompatibleShapesError
    raises_with(IncompatibleShapesError, lambda: sp.owens_t(jnp.ones(2), jnp.ones(3)),
                "owens_t")
    # integers promote to the default float; float16 is computed in float32
    from netcl.core.dtypes import default_float_dtype
    assert np.asarray(sp.hyp1f1(1, 2, jnp.asarray([1, 2]))).dtype == default_float_dtype()
    s, c = sp.fresnel(jnp.asarray([1.0], jnp.float16))
    assert np.asarray(s).dtype == np.float16 and np.asarray(c).dtype == np.float16
    assert sp.bessel_jn(jnp.ones(3, jnp.float32), v=1).dtype == np.float32
    for n in ("bessel_jn", "fresnel", "hyp1f1", "hyp2f1", "owens_t", "sici"):
        assert n in sp.__all__ and getattr(sp, n).__doc__
