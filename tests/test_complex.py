"""Complex dtypes (complex64, complex128 with x64) against NumPy and JAX: type promotion,
jax.numpy's functions on complex operands, reductions and products (computed by parts),
derivatives by JAX's convention (float64/complex128 checks against JAX and finite
differences), jit/vmap composition, and clear errors where complex numbers have no meaning.
The primitive-level kernels are in test_primitive_tables.py (complex64/complex128 rows)."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402


def _z(rng, shape, dtype=np.complex64, scale=1.0):
    return (scale * (rng.standard_normal(shape) + 1j * rng.standard_normal(shape))).astype(dtype)


def close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---- promotion ------------------------------------------------------------------------------

OPERANDS = {
    "c64": lambda m: m.ones(2, np.complex64), "c128": lambda m: m.ones(2, np.complex128),
    "f32": lambda m: m.ones(2, np.float32), "f64": lambda m: m.ones(2, np.float64),
    "bf16": lambda m: m.ones(2, m.bfloat16), "f16": lambda m: m.ones(2, np.float16),
    "i32": lambda m: m.ones(2, np.int32), "bool": lambda m: m.ones(2, bool),
    "py_complex": lambda m: 1j, "py_float": lambda m: 2.0, "py_int": lambda m: 3,
}


@pytest.mark.parametrize("a", ["c64", "c128", "py_complex"])
@pytest.mark.parametrize("b", sorted(OPERANDS))
def test_promotion_matches_jax(a, b):
    if a.startswith("py") and b.startswith("py"):
        return    # (two Python scalars: Python's arithmetic)
    with jax.enable_x64(netcl.config.enable_x64):
        want = (OPERANDS[a](jjnp) * OPERANDS[b](jjnp))
        got = OPERANDS[a](jnp) * OPERANDS[b](jnp)
        want_dtype = jjnp.result_type(want)
    assert np.dtype(got.dtype) == want_dtype, (a, b, got.dtype, want_dtype)
    assert getattr(got, "weak_type", False) == getattr(want, "weak_type", False)


def test_arrays_scalars_and_conversions():
    z = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j], np.complex64)
    x = jnp.asarray(z)
    assert x.dtype == np.complex64 and np.array_equal(np.asarray(x), z)
    assert jnp.asarray([1 + 2j, 3]).dtype == jnp.result_type(complex)
    assert complex(x[0]) == 1 + 2j and x[2].item() == 3 - 1j and f"{x[0]}" == "(1+2j)"
    close(jnp.complex64(1.5), np.complex64(1.5))
    close(x.astype(np.float32), z.real)           # the real part, as JAX
    close(x.astype(bool), z != 0)
    close(jnp.arange(3.0, dtype=np.float32).astype(np.complex64), np.arange(3, dtype=np.complex64))
    close(jnp.full(2, 1 - 1j, np.complex64), np.full(2, 1 - 1j, np.complex64))
    assert jnp.iscomplexobj(x) and not jnp.isrealobj(x)
    close(jnp.iscomplex(jnp.asarray([1.0, 1j])), [False, True])
    close(jnp.isreal(jnp.asarray([1.0, 1j])), [True, False])
    # structural operations move complex elements as they are
    y = jnp.asarray(_z(np.random.default_rng(0), (3, 4)))
    h = np.asarray(y)
    close(y.T[1:, ::2], h.T[1:, ::2])
    close(jnp.concatenate([y, y[:1]]), np.concatenate([h, h[:1]]))
    close(jnp.where(jnp.asarray(h.real > 0), y, 0), np.where(h.real > 0, h, 0))
    close(jnp.flip(y, 1).reshape(2, 6), np.flip(h, 1).reshape(2, 6))
    close(y[jnp.asarray([2, 0])], h[[2, 0]])
    # scatters: repeated indices add and multiply as complex numbers
    idx, v = np.array([1, 1, 0]), np.complex64([2j, 1 + 1j, -1])
    want_add, want_mul = h.copy(), h.copy()
    np.add.at(want_add, idx, v[:, None])
    np.multiply.at(want_mul, idx, v[:, None])
    close(y.at[jnp.asarray(idx)].add(jnp.asarray(v)[:, None]), want_add, 1e-5)
    close(y.at[jnp.asarray(idx)].multiply(jnp.asarray(v)[:, None]), want_mul, 1e-5)


# ---- jax.numpy on complex operands ----------------------------------------------------------

UNARY = ["exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "abs", "angle",
         "real", "imag", "conj", "conjugate", "sign", "square", "reciprocal", "expm1",
         "log1p", "negative", "log2", "log10", "isfinite", "exp2", "arcsin", "arccos",
         "arctan", "arcsinh", "arccosh", "arctanh"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_unary_functions_match_jax(name, dtype):
    h = _z(np.random.default_rng(1), (5, 3), dtype, scale=1.5)
    h[0, 0] = 0.5   # a real value (imaginary part 0)
    with jax.enable_x64(True):
        want = getattr(jjnp, name)(h)
    got = getattr(jnp, name)(jnp.asarray(h))
    close(got, want, 2e-5 if dtype == np.complex64 else 1e-12)


def test_log1p_and_expm1_near_their_hard_points():
    z = np.array([-0.9944 + 0j, -0.99 + 0.01j, 1e-4 + 1e-4j, -1e-5 + 2e-3j, 3 - 2j,
                  -2 + 0.5j], np.complex128)
    for dtype, tol in ((np.complex64, 2e-6), (np.complex128, 1e-13)):
        x = jnp.asarray(z.astype(dtype))
        with np.errstate(all="ignore"):
            # the references in long double: NumPy's complex log1p is log(1 + z)
            ref_log1p = np.log(1 + z.astype(np.clongdouble)).astype(dtype)
            ref_expm1 = (np.exp(z.astype(np.clongdouble)) - 1).astype(dtype)
        np.testing.assert_allclose(np.asarray(jnp.log1p(x)), ref_log1p, rtol=tol)
        np.testing.assert_allclose(np.asarray(jnp.expm1(x)), ref_expm1, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "power",
                                  "true_divide", "equal", "not_equal"])
def test_binary_functions_match_jax(name):
    rng = np.random.default_rng(2)
    a, b = _z(rng, (4, 3)), _z(rng, (3,))
    b[0] = a[0, 0]
    with jax.enable_x64(netcl.config.enable_x64):
        want = getattr(jjnp, name)(a, b)
        want_scalar = getattr(jjnp, name)(a, 0.5 - 2j)
    close(getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b)), want, 1e-4)
    close(getattr(jnp, name)(jnp.asarray(a), 0.5 - 2j), want_scalar, 1e-4)


def test_reductions_by_parts_match_numpy():
    h = _z(np.random.default_rng(3), (4, 5, 3))
    x = jnp.asarray(h)
    close(jnp.sum(x), h.sum(dtype=np.complex64), 1e-4)
    close(jnp.sum(x, axis=(0, 2)), h.sum((0, 2)), 1e-4)
    close(jnp.mean(x, axis=1), h.mean(1), 1e-5)
    close(jnp.cumsum(x, axis=1), np.cumsum(h, 1), 1e-4)
    close(jnp.cumprod(x, axis=1), np.cumprod(h, 1), 1e-4)
    close(lax.cumprod(x, axis=0, reverse=True), np.flip(np.cumprod(np.flip(h, 0), 0), 0), 1e-4)
    close(jnp.prod(x[..., :2] * 0.5, axis=1), np.prod(h[..., :2] * 0.5, 1), 1e-4)
    close(jnp.prod(x, axis=(0, 1)), np.prod(h, (0, 1)), 1e-3)   # 20 factors, odd halvings
    close(jnp.prod(x[:0], axis=0), np.prod(h[:0], 0))
    close(jnp.var(x, axis=0), np.var(h, 0).astype(np.float32), 1e-5)
    close(jnp.std(x), np.float32(np.std(h)), 1e-5)


def test_products_match_numpy():
    rng = np.random.default_rng(4)
    a, b, v = _z(rng, (2, 5, 6)), _z(rng, (6, 3)), _z(rng, (6,))
    close(jnp.asarray(a) @ jnp.asarray(b), a @ b, 1e-4)
    close(jnp.dot(jnp.asarray(v), jnp.asarray(v)), np.dot(v, v), 1e-4)
    close(jnp.vdot(jnp.asarray(v), jnp.asarray(v)), np.vdot(v, v), 1e-4)
    close(jnp.einsum("bij,jk->bki", jnp.asarray(a), jnp.asarray(b)),
          np.einsum("bij,jk->bki", a, b), 1e-4)
    close(lax.dot_general(jnp.asarray(a), jnp.asarray(a), (((2,), (2,)), ((0,), (0,)))),
          np.einsum("bij,bkj->bik", a, a), 1e-4)
    # a real operand promotes to complex
    r = rng.standard_normal((6, 3)).astype(np.float32)
    close(jnp.asarray(a) @ jnp.asarray(r), a @ r, 1e-4)


def test_convolutions_by_parts_match_numpy_and_jax():
    rng = np.random.default_rng(10)
    a, v, w = _z(rng, (9,)), _z(rng, (4,)), _z(rng, (12,))
    for mode in ("full", "same", "valid"):
        close(jnp.convolve(jnp.asarray(a), jnp.asarray(v), mode=mode),
              np.convolve(a, v, mode=mode), 1e-4)
        for x, y in ((a, v), (v, w)):      # (the shorter first: numpy swaps and conjugates)
            close(jnp.correlate(jnp.asarray(x), jnp.asarray(y), mode=mode),
                  np.correlate(x, y, mode=mode), 1e-4)
    x, k = _z(rng, (2, 3, 7, 7)), _z(rng, (4, 3, 3, 3))
    with jax.enable_x64(netcl.config.enable_x64):
        want = jax.lax.conv(x, k, (1, 2), "SAME", precision="highest")
    close(lax.conv(jnp.asarray(x), jnp.asarray(k), (1, 2), "SAME"), want, 1e-4)
    f = lambda m, x, k: m.sum(m.abs(m.convolve(x, k, mode="same")) ** 2)  # noqa: E731
    xd, kd = a.astype(np.complex128), v.astype(np.complex128)
    with jax.enable_x64(True):
        want = jax.grad(lambda x: f(jjnp, x, kd))(xd)
    close(netcl.grad(lambda x: f(jnp, x, jnp.asarray(kd)))(jnp.asarray(xd)), want, 1e-10)


def test_lax_complex_parts_and_sort():
    re, im = np.float32([1, -2, 0]), np.float32([0.5, 3, -1])
    z = lax.complex(jnp.asarray(re), jnp.asarray(im))
    close(z, re + 1j * im)
    close(lax.real(z), re) and close(lax.imag(z), im)
    close(lax.conj(z), re - 1j * im)
    close(jnp.sort_complex(jnp.asarray(np.array([1 + 2j, 1 - 1j, 0.5], np.complex64))),
          np.sort_complex(np.array([1 + 2j, 1 - 1j, 0.5], np.complex64)))


def test_methods_sorting_norms_and_sampling_match_jax():
    rng = np.random.default_rng(8)
    h = _z(rng, (3, 4))
    h[0, :2] = [1 + 1j, 1 - 2j]     # equal real parts: ordered by imaginary part
    x = jnp.asarray(h)
    close(x.real, h.real) and close(x.imag, h.imag)
    close(x.conj(), h.conj()) and close(x.conjugate(), h.conj())
    with jax.enable_x64(netcl.config.enable_x64):
        close(jnp.sort(x, axis=1), jjnp.sort(h, axis=1))
        close(jnp.argsort(x, axis=0, descending=True), jjnp.argsort(h, axis=0, descending=True))
        close(jnp.linalg.norm(x), jjnp.linalg.norm(h), 1e-5)
        close(jnp.linalg.norm(x, ord=1, axis=1), jjnp.linalg.norm(h, ord=1, axis=1), 1e-5)
        close(jnp.isclose(x, x + 1e-7j), jjnp.isclose(h, h + 1e-7j))
        assert bool(jnp.allclose(x, x * (1 + 1e-7)))
        close(lax.integer_pow(x, -2), jax.lax.integer_pow(h, -2), 1e-4)
        close(netcl.random.normal(netcl.random.PRNGKey(3), (5,), np.complex64),
              jax.random.normal(jax.random.PRNGKey(3), (5,), np.complex64), 1e-6)


def test_nan_and_inf_tests_look_at_both_parts():
    h = np.array([complex(np.nan, 0), complex(1, np.inf), 1 + 1j, complex(np.inf, np.nan),
                  complex(0, np.nan)], np.complex64)
    x = jnp.asarray(h)
    close(jnp.isnan(x), np.isnan(h)) and close(jnp.isinf(x), np.isinf(h))
    close(jnp.isfinite(x), np.isfinite(h))
    close(netcl.jit(jnp.isnan)(x), np.isnan(h))


def test_lax_linalg_triangular_solve_conjugates_as_jax():
    rng = np.random.default_rng(11)
    a = np.tril(_z(rng, (3, 3))) + 3 * np.eye(3, dtype=np.complex64)
    b = _z(rng, (3, 2))
    for kw in (dict(left_side=True, lower=True, conjugate_a=True),
               dict(left_side=True, lower=True, transpose_a=True, conjugate_a=True),
               dict(left_side=False, lower=True, conjugate_a=True)):
        bb = b if kw["left_side"] else b.T
        with jax.enable_x64(netcl.config.enable_x64):
            want = jax.lax.linalg.triangular_solve(a, bb, **kw)
        close(lax.linalg.triangular_solve(jnp.asarray(a), jnp.asarray(bb), **kw), want, 1e-5)


def test_rounding_statistics_and_refusals_match_jax():
    h = np.array([[1.26 + 2.5j, -0.5 + 0.25j, 3.7 - 1.49j], [0.2 - 0.7j, 2 + 0j, -1 - 1j]],
                 np.complex64)
    x = jnp.asarray(h)
    with jax.enable_x64(netcl.config.enable_x64):
        for name, args in (("round", ()), ("round", (1,)), ("rint", ()), ("around", ())):
            close(getattr(jnp, name)(x, *args), getattr(jjnp, name)(h, *args), 1e-6)
        close(jnp.cov(x), jjnp.cov(h), 1e-5)
        close(jnp.vecdot(x, x[::-1]), jjnp.vecdot(h, h[::-1]), 1e-5)
    for name in ("floor", "ceil", "trunc", "fix", "fabs", "isposinf", "isneginf", "i0"):
        with pytest.raises(TypeError, match=f"{name}: complex values are not supported"):
            getattr(jnp, name)(x)


# ---- transforms -----------------------------------------------------------------------------

def test_jit_fuses_complex_arithmetic_with_literals():
    h = _z(np.random.default_rng(5), (7, 3))
    f = lambda z: jnp.sum(jnp.exp(z * (0.5 - 1j)) / (z + 2) + jnp.abs(z) ** 2, axis=1)  # noqa: E731
    want = np.sum(np.exp(h * (0.5 - 1j)) / (h + 2) + np.abs(h) ** 2, axis=1)
    close(netcl.jit(f)(jnp.asarray(h)), want.astype(np.complex64), 1e-4)
    close(f(jnp.asarray(h)), want.astype(np.complex64), 1e-4)
    close(netcl.vmap(lambda z: z * jnp.conj(z))(jnp.asarray(h)), h * np.conj(h), 1e-5)


REAL_VALUED = {
    "abs2": lambda m, z: m.sum(m.abs(z) ** 2),
    "real_exp": lambda m, z: m.sum(m.real(m.exp(z))),
    "imag_sin": lambda m, z: m.sum(m.imag(m.sin(z) * z)),
    "abs_log": lambda m, z: m.sum(m.abs(m.log(z + 3))),
    "angle": lambda m, z: m.sum(m.angle(z)),
    "matmul": lambda m, z: m.real(m.sum((z @ z.T) * m.conj(z[:, :1]))),
    "tanh_div": lambda m, z: m.sum(m.real(m.tanh(z) / (z * z + 2))),
    "sqrt_pow": lambda m, z: m.sum(m.imag(m.sqrt(z + 4) ** 3)),
    "mean_prod": lambda m, z: m.real(m.mean(z) * m.prod(z[0])),
    "inverse_trig": lambda m, z: m.sum(m.abs(m.arcsin(z) + m.arccos(z * 0.5) * m.arctan(z)
                                             - m.arcsinh(z) * m.arccosh(z + 2)
                                             + m.arctanh(z * 0.3))),
}


@pytest.mark.parametrize("name", sorted(REAL_VALUED))
def test_grad_of_real_functions_of_complex_inputs_matches_jax(name):
    h = _z(np.random.default_rng(6), (3, 3), np.complex128, 0.7)
    f = REAL_VALUED[name]
    with jax.enable_x64(True):
        want = jax.grad(lambda z: f(jjnp, z))(h)
    got = netcl.grad(lambda z: f(jnp, z))(jnp.asarray(h))
    close(got, want, 1e-10)


def test_holomorphic_grad_jvp_and_finite_differences():
    h = _z(np.random.default_rng(7), (4,), np.complex128, 0.8)
    f = lambda z: jnp.sum(jnp.exp(z) * jnp.sin(z) / (z + 3))  # noqa: E731
    with jax.enable_x64(True):
        want = jax.grad(lambda z: jjnp.sum(jjnp.exp(z) * jjnp.sin(z) / (z + 3)),
                        holomorphic=True)(h)
    close(netcl.grad(f, holomorphic=True)(jnp.asarray(h)), want, 1e-10)
    # jvp and vjp against central differences (check_grads: float64 parts)
    check_grads(lambda z: jnp.tanh(z) * jnp.conj(z) + jnp.abs(z), (h,), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda z: lax.complex(lax.real(z) ** 2, lax.imag(z)), (h,), order=1,
                modes=("fwd", "rev"))
    # a real input through complex intermediates gets a real gradient
    x = np.array([0.3, -1.2, 2.0])
    with jax.enable_x64(True):
        want_x = jax.grad(lambda x: jjnp.sum(jjnp.abs(jjnp.exp(1j * x) * (x + 1j))))(x)
    close(netcl.grad(lambda x: jnp.sum(jnp.abs(jnp.exp(1j * x) * (x + 1j))))(jnp.asarray(x)),
          want_x, 1e-10)


def test_holomorphic_jacobians_match_jax():
    z = _z(np.random.default_rng(12), (3,), np.complex128)
    f = lambda m: (lambda v: m.exp(v) * v[::-1] + m.sin(v) ** 2)  # noqa: E731
    with jax.enable_x64(True):
        want = jax.jacrev(f(jjnp), holomorphic=True)(z)
    for jac in (netcl.jacrev, netcl.jacfwd, netcl.jacobian):
        close(jac(f(jnp), holomorphic=True)(jnp.asarray(z)), want, 1e-10)
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs.*holomorphic"):
        netcl.jacrev(f(jnp))(jnp.asarray(z))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        netcl.jacfwd(f(jnp))(jnp.asarray(z))
    with pytest.raises(TypeError, match="holomorphic=True requires complex inputs"):
        netcl.jacrev(jnp.sin, holomorphic=True)(jnp.ones(2))


# ---- errors ---------------------------------------------------------------------------------

def test_errors_name_the_function_and_dtype():
    z = jnp.asarray(np.array([1 + 1j, 2j], np.complex64))
    # (maximum, less and max order complex numbers as JAX does: test_complex_order.py)
    with pytest.raises(TypeError, match=r"floor_divide.*complex64"):
        jnp.floor_divide(z, z)
    with pytest.raises(TypeError, match="real float scalar.*holomorphic=True"):
        netcl.grad(lambda z: jnp.sum(z))(z)
    with pytest.raises(TypeError, match="holomorphic=True needs complex inputs"):
        netcl.grad(lambda x: jnp.sum(x * 1j), holomorphic=True)(jnp.ones(2))
    with pytest.raises(TypeError, match="real: operand of dtype float"):
        lax.real(jnp.ones(2))
    with pytest.raises(TypeError, match="complex: operands must have equal dtypes"):
        lax.complex(jnp.ones(2), jnp.ones(2, np.int32))
    with pytest.raises(TypeError, match="scatter_max: operand of dtype complex64"):
        z.at[jnp.asarray([0, 0])].max(1j)
