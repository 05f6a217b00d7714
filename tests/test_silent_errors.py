"""Inputs that used to give silently wrong answers: they now raise, or give JAX's answer.

Expected values at non-differentiable points and large |x| are JAX's (x64 disabled), written
out so that the assertions do not need JAX; `test_matches_jax_where_installed` compares with
JAX itself when it is installed.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import netcl
import netcl.lax as lax
import netcl.nn as nn
import netcl.numpy as jnp
from netcl.core.devices import default_device
from netcl.test_util import check_grads

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
OVERFLOW = r"Python int -?\d+ too large to convert to u?int32"


# ---- 1. Python ints beyond 32 bits raise instead of wrapping --------------------------------
# These run with x64 off (netcl.enable_x64(False): the setting comes back after), where the
# default int is int32; with x64 (the suite's setting) Python ints are int64 and only
# those beyond 64 bits raise, checked after them.

def _i32():
    return jnp.array([1, 2], jnp.int32)


WRAPPING = {
    "array scalar": lambda: jnp.array(2**40),
    "array list": lambda: jnp.array([2**31]),
    "array nested": lambda: jnp.array([[1, 2], [3, -2**31 - 1]]),
    "array beyond int64": lambda: jnp.array([2**70]),
    "asarray": lambda: jnp.asarray(2**40),
    "array uint32 negative": lambda: jnp.array([-1], jnp.uint32),
    "array uint32 too big": lambda: jnp.array(2**32, jnp.uint32),
    "binary op": lambda: _i32() + 2**40,
    "reflected op": lambda: 2**31 * _i32(),
    "uint32 binary op": lambda: jnp.array([1], jnp.uint32) + 2**32,
    "lax op": lambda: lax.add(_i32(), 2**40),
    "full": lambda: jnp.full((2,), 2**40),
    "full int32": lambda: jnp.full((2,), 2**31, jnp.int32),
    "full_like": lambda: jnp.full_like(_i32(), 2**40),
    "at set": lambda: _i32().at[0].set(2**40),
    "where": lambda: jnp.where(_i32() > 1, 2**40, _i32()),
    "arange start": lambda: jnp.arange(2**31, 2**31 + 3),
    "arange past the end": lambda: jnp.arange(2**31 - 2, 2**31 + 2),
    "arange step": lambda: jnp.arange(0, 2**40, 2**38),
}


@pytest.mark.parametrize("name", list(WRAPPING))
def test_python_int_out_of_range_raises(name):
    with netcl.enable_x64(False), pytest.raises(OverflowError, match=OVERFLOW):
        WRAPPING[name]()


WRAPPING_X64 = {
    "array scalar": lambda: jnp.array(2**63),
    "array list": lambda: jnp.array([-2**63 - 1]),
    "array beyond 64 bits": lambda: jnp.array([2**70]),
    "binary op": lambda: jnp.array([1]) + 2**63,
    "int32 binary op": lambda: _i32() + 2**40,      # (a weak int takes int32: it must fit)
    "full": lambda: jnp.full((2,), 2**63),
    "arange": lambda: jnp.arange(2**63 - 2, 2**63 + 2),
}


@pytest.mark.parametrize("name", list(WRAPPING_X64))
def test_python_int_out_of_range_raises_with_x64(name):
    with netcl.enable_x64(True), pytest.raises(OverflowError, match=r"Python int -?\d+ too "
                                                                    r"large to convert to u?int"):
        WRAPPING_X64[name]()


def test_python_ints_in_range_are_exact_with_x64():
    with netcl.enable_x64(True):
        a = jnp.array([2**63 - 1, -2**63])
        assert a.dtype == np.int64 and np.asarray(a).tolist() == [2**63 - 1, -2**63]
        u = jnp.array([2**63, 2**64 - 1], jnp.uint64)
        assert np.asarray(u).tolist() == [2**63, 2**64 - 1]
        assert np.asarray(jnp.arange(2**40, 2**40 + 2)).tolist() == [2**40, 2**40 + 1]


@pytest.fixture
def x64_off():
    with netcl.enable_x64(False):
        yield


def test_python_ints_in_range_are_exact(x64_off):
    a = jnp.array([INT32_MAX, INT32_MIN])
    assert a.dtype == np.int32 and np.asarray(a).tolist() == [INT32_MAX, INT32_MIN]
    u = jnp.array([2**31, 2**32 - 1], jnp.uint32)
    assert np.asarray(u).tolist() == [2**31, 2**32 - 1]
    np.testing.assert_array_equal(jnp.arange(2**31 - 3, 2**31), [2**31 - 3, 2**31 - 2, 2**31 - 1])
    assert np.asarray(jnp.full((2,), 2**32 - 1, jnp.uint32)).tolist() == [2**32 - 1] * 2
    np.testing.assert_array_equal(jnp.arange(2**31, 2**31), np.zeros(0, np.int32))


def test_uint32_arithmetic_takes_int32_scalars_modulo_2_32():
    u = jnp.array([1, 2], jnp.uint32)
    np.testing.assert_array_equal(u + (-1), [0, 1])             # as JAX: u - 1
    np.testing.assert_array_equal(u + (2**32 - 1), [0, 1])
    np.testing.assert_array_equal(u * 2**31, [2**31, 0])


def test_python_ints_into_floats_do_not_overflow():
    np.testing.assert_array_equal(jnp.array([1.5, 2**40]), np.array([1.5, 2**40], np.float32))
    assert float(jnp.array(2**70, jnp.float32)) == np.float32(2**70)
    f = jnp.array([1.0, 2.0], jnp.float32)
    np.testing.assert_array_equal(f + 2**40, np.float32(2**40) + np.array([1, 2], np.float32))
    big = jnp.array([1e40, -1e40], jnp.float32)     # as JAX: inf in float32, no error
    assert big.dtype == np.float32 and np.isinf(np.asarray(big)).all()


def test_python_float_lists_are_the_default_float_everywhere():
    # jnp.array gives the default float (float64 with x64, conftest.py's setting, as in JAX);
    # other functions refuse lists and tuples, as JAX's do (they converted them, to float64)
    default = np.float64 if netcl.config.enable_x64 else np.float32
    assert jnp.array([1.5]).dtype == jnp.asarray((2.5,)).dtype == default
    for f in (lambda: jnp.concatenate([(1.5,), (2.5,)]), lambda: jnp.add([1.5], [2.5])):
        with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
            f()
    # NumPy float64 data keeps float64 where the device has it, as before
    fp64 = default_device().capabilities.fp64
    assert jnp.add(np.array([1.5]), 1).dtype == (np.float64 if fp64 else np.float32)


@settings(max_examples=40, deadline=None)
@given(v=st.one_of(st.integers(-2**40, 2**40), st.integers(INT32_MIN - 2, INT32_MIN + 2),
                   st.integers(INT32_MAX - 2, INT32_MAX + 2)))
def test_python_int_exact_or_overflow(v):
    fits = INT32_MIN <= v <= INT32_MAX
    for make in (lambda: jnp.array(v), lambda: jnp.array([v, 0]),
                 lambda: jnp.add(jnp.zeros((2,), jnp.int32), v)):
        with netcl.enable_x64(False):
            if fits:
                assert (np.asarray(make()) == v).any()
            else:
                with pytest.raises(OverflowError, match=OVERFLOW):
                    make()
    with netcl.enable_x64(True):        # int64 holds them all
        assert np.asarray(jnp.array([v, 0])).tolist() == [v, 0]


# ---- 2. integers to negative powers ---------------------------------------------------------

NEGATIVE_POWERS = {
    "operator": lambda x: x ** -1,
    "power": lambda x: jnp.power(x, -1),
    "power numpy int": lambda x: jnp.power(x, np.int32(-2)),
    "power 0-d array": lambda x: jnp.power(x, jnp.array(-1)),
    "power large": lambda x: jnp.power(x, -2**40),
    "integer_pow": lambda x: lax.integer_pow(x, -1),
    "jit": lambda x: netcl.jit(lambda a: a ** -3)(x),
}


@pytest.mark.parametrize("name", list(NEGATIVE_POWERS))
@pytest.mark.parametrize("dtype", ["int32", "uint32", "bool"])
def test_integer_to_negative_power_raises(name, dtype):
    if dtype == "bool" and name == "integer_pow":
        pytest.skip("lax.integer_pow takes no bools")
    x = jnp.array([2, 1, 0], dtype)  # 0 ** -1 would divide by zero in the kernel
    for err in (ValueError, TypeError):    # NumPy raises the first, JAX the second
        with pytest.raises(err, match="Integers cannot be raised to negative powers"):
            NEGATIVE_POWERS[name](x)


def test_powers_that_are_fine():
    np.testing.assert_array_equal(jnp.array([2.0, 4.0]) ** -1, [0.5, 0.25])
    np.testing.assert_array_equal(jnp.array([2, -3]) ** 2, [4, 9])
    np.testing.assert_array_equal(jnp.array([2, -3]) ** 0, [1, 1])
    np.testing.assert_array_equal(jnp.power(jnp.array([2, 3]), jnp.array(2)), [4, 9])


# ---- 3. activations at large |x| ------------------------------------------------------------

def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _gelu_erf(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))


def _softplus(x):
    return np.logaddexp(x, 0)


ACTIVATIONS = {  # name: (netcl, float64 NumPy oracle)
    "tanh": (jnp.tanh, np.tanh),
    "gelu": (nn.gelu, _gelu_tanh),
    "gelu_erf": (lambda x: nn.gelu(x, approximate=False), _gelu_erf),
    "sigmoid": (nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "softplus": (nn.softplus, _softplus),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -_softplus(-x)),
    "silu": (nn.silu, lambda x: x / (1 + np.exp(-x))),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "soft_sign": (nn.soft_sign, lambda x: x / (1 + np.abs(x))),
}
# 16 values: jit's fused kernels run 8-wide vectors on CPU devices, eager ones scalars
LARGE = np.array([-1e4, -100, -30, -10, -9.5, -9.02, -9, -1, 1, 9, 9.02, 9.5, 10, 30, 100, 1e4],
                 np.float32)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_activations_at_large_magnitudes(name, mode):
    fn, oracle = ACTIVATIONS[name]
    f = netcl.jit(lambda a: fn(a) * 1.0) if mode == "jit" else fn
    with np.errstate(over="ignore"):
        want = oracle(LARGE.astype(np.float64))
    got = np.asarray(f(jnp.array(LARGE))).astype(np.float64)
    assert not np.isnan(got).any(), got
    assert (np.sign(got) * np.sign(want) >= 0).all(), (got, want)     # no sign flip
    # no spurious non-zero (gelu(-1e4) was -3e-4); float32 rounding elsewhere
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30)


def test_tanh_saturates_exactly():
    x = jnp.array([-np.inf, -1e30, -9.0109134, 9.0109134, 1e30, np.inf, np.nan, -0.0],
                  jnp.float32)
    got = np.asarray(jnp.tanh(x))
    np.testing.assert_array_equal(got[:6], [-1, -1, -1, 1, 1, 1])
    assert np.isnan(got[6]) and got[7] == 0 and np.signbit(got[7])
    assert float(nn.gelu(-1e4)) == 0.0


# ---- 4. derivatives at non-differentiable points: JAX's conventions -------------------------

def _g(f, *args):
    out = netcl.grad(f, argnums=tuple(range(len(args))))(*args)
    return [float(v) for v in out]


GRADS = {  # name: (function, arguments, JAX's gradient)
    "abs at 0": (jnp.abs, (0.0,), [1.0]),
    "abs at -0": (jnp.abs, (-0.0,), [1.0]),
    "relu at 0": (nn.relu, (0.0,), [0.0]),
    "relu6 at 0": (nn.relu6, (0.0,), [0.0]),
    "relu6 at 6": (nn.relu6, (6.0,), [0.0]),
    "hard_tanh at 1": (nn.hard_tanh, (1.0,), [1.0]),
    "hard_tanh at -1": (nn.hard_tanh, (-1.0,), [1.0]),
    "elu at 0": (nn.elu, (0.0,), [1.0]),
    "celu at 0": (nn.celu, (0.0,), [1.0]),
    "selu at 0": (nn.selu, (0.0,), [1.0507009873554805 * 1.6732632423543772]),
    "leaky_relu at 0": (nn.leaky_relu, (0.0,), [1.0]),
    "maximum tie": (jnp.maximum, (1.0, 1.0), [0.5, 0.5]),
    "minimum tie": (jnp.minimum, (1.0, 1.0), [0.5, 0.5]),
    "clip at bound": (lambda x: jnp.clip(x, 0.0, 1.0), (1.0,), [0.5]),
    "lax.clamp at bound": (lambda x: lax.clamp(0.0, x, 1.0), (1.0,), [0.0]),
    "sqrt at 0": (jnp.sqrt, (0.0,), [math.inf]),
    "cbrt at 0": (jnp.cbrt, (0.0,), [math.inf]),
    "cbrt at -8": (jnp.cbrt, (-8.0,), [1 / 12]),
    "hypot at 0": (jnp.hypot, (0.0, 0.0), [0.5, 0.5]),
    "hypot at (3, 0)": (jnp.hypot, (3.0, 0.0), [1.0, 0.0]),
    "sign at 0": (jnp.sign, (0.0,), [0.0]),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradient_conventions_at_kinks(name):
    f, args, want = GRADS[name]
    np.testing.assert_allclose(_g(f, *args), want, rtol=1e-6)


def test_abs_gradient_in_arrays_and_under_jit():
    x = jnp.array([-2.0, -0.0, 0.0, 3.0])
    g = netcl.grad(lambda v: jnp.abs(v).sum())
    for g in (g, netcl.jit(g)):
        np.testing.assert_array_equal(g(x), [-1, 1, 1, 1])


def test_max_reduction_splits_ties():
    g = netcl.grad(lambda v: jnp.max(v))(jnp.array([1.0, 1.0, 1.0, 0.0]))
    np.testing.assert_allclose(g, [1 / 3, 1 / 3, 1 / 3, 0], rtol=1e-6)


def test_hypot_and_cbrt_values():
    # the squares overflowed (inf) or underflowed (0) in float32
    np.testing.assert_allclose(jnp.hypot(jnp.array([1e30, 1e-30, 3.0, np.inf, np.nan]),
                                         jnp.array([1e30, 1e-30, 4.0, np.nan, 1.0])),
                               [math.sqrt(2) * 1e30, math.sqrt(2) * 1e-30, 5.0, np.inf, np.nan],
                               rtol=1e-6)
    # sign(x) * |x|**(1/3) was off by an ulp on exact cubes
    np.testing.assert_array_equal(jnp.cbrt(jnp.array([27.0, -8.0, 0.0, 1e-30 ** 3 * 0])),
                                  [3.0, -2.0, 0.0, 0.0])


def test_rewritten_functions_keep_float64_gradients():
    x = np.array([0.7, -1.3, 2.5])
    y = np.array([-0.4, 2.0, 0.3])
    check_grads(jnp.cbrt, (x,), order=2, modes=("fwd", "rev"))
    check_grads(jnp.hypot, (x, y), order=2, modes=("fwd", "rev"))
    for f in (jnp.abs, nn.elu, nn.celu, nn.hard_tanh, nn.relu6):
        check_grads(f, (np.array([-0.7, 0.4, 3.5]),), order=2, modes=("fwd", "rev"))


# ---- 5. unsupported dtype arguments raise -------------------------------------------------

UNSUPPORTED = [np.int8, np.int16, np.uint8, np.uint16, np.clongdouble, object, "U5", jnp.int8,
               jnp.uint8]
TAKES_DTYPE = {
    "astype": lambda d: jnp.ones(2).astype(d),
    "asarray": lambda d: jnp.asarray([1, 2], dtype=d),
    "array": lambda d: jnp.array(np.arange(2), dtype=d),
    "zeros": lambda d: jnp.zeros((2,), dtype=d),
    "ones_like": lambda d: jnp.ones_like(jnp.ones(2), dtype=d),
    "full": lambda d: jnp.full((2,), 1, dtype=d),
    "arange": lambda d: jnp.arange(3, dtype=d),
    "eye": lambda d: jnp.eye(2, dtype=d),
    "sum": lambda d: jnp.sum(jnp.ones(2), dtype=d),
    "convert_element_type": lambda d: lax.convert_element_type(jnp.ones(2), d),
    "one_hot": lambda d: nn.one_hot(jnp.array([0, 1]), 2, dtype=d),
}


@pytest.mark.parametrize("fname", list(TAKES_DTYPE))
@pytest.mark.parametrize("dtype", UNSUPPORTED, ids=str)
def test_unsupported_dtype_argument_raises(fname, dtype):
    with pytest.raises(TypeError, match=rf"{fname}.*{np.dtype(dtype)}.*supports bool, int32"):
        TAKES_DTYPE[fname](dtype)


def test_supported_dtype_arguments_and_data():
    with netcl.enable_x64(False):       # JAX without x64: the 32-bit types
        assert jnp.ones(2).astype(np.int64).dtype == np.int32
        assert jnp.zeros(2, np.uint64).dtype == np.uint32
    with netcl.enable_x64(True):
        assert jnp.ones(2).astype(np.int64).dtype == np.int64
        assert jnp.zeros(2, np.uint64).dtype == np.uint64
    # data is not a dtype argument: narrow NumPy ints widen, values kept
    u8 = jnp.array(np.array([0, 255], np.uint8))
    assert u8.dtype == np.uint32 and np.asarray(u8).tolist() == [0, 255]
    i8 = jnp.asarray(np.array([-128, 127], np.int8))
    assert i8.dtype == np.int32 and np.asarray(i8).tolist() == [-128, 127]
    assert jnp.add(np.array([1], np.int16), 1).dtype == np.int32


# ---- against JAX itself, where it is installed --------------------------------------------

def test_matches_jax_where_installed():
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    with pytest.raises(OverflowError):
        jjnp.array(2**40)
    for name, (f, args, want) in GRADS.items():
        if name.startswith(("abs", "maximum", "minimum", "sqrt", "cbrt", "hypot", "sign", "clip")):
            jf = getattr(jjnp, f.__name__) if name.split()[0] != "clip" else \
                (lambda x: jjnp.clip(x, 0.0, 1.0))
            got = jax.grad(jf, argnums=tuple(range(len(args))))(*args)
            np.testing.assert_allclose([float(v) for v in got], want, rtol=1e-6, err_msg=name)
    np.testing.assert_allclose(np.asarray(nn.gelu(jnp.array(LARGE))),
                               np.asarray(jax.nn.gelu(jjnp.asarray(LARGE))), rtol=1e-6, atol=1e-30)


def test_wrappers_keep_their_own_attributes_over_the_wrapped_functions():
    """jit, pmap, custom_jvp and custom_vjp copy a wrapped function's __dict__ (as
    functools.wraps does): a custom_jvp's `fun` and `jvp` once replaced jit's own `fun`, so
    grad(jit(f)) silently ignored f's rule."""
    @netcl.custom_jvp
    def f(x):
        return x * 1.0

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), 100.0 * tangents[0]
    assert float(netcl.grad(f)(2.0)) == 100.0
    assert float(netcl.grad(netcl.jit(f))(2.0)) == 100.0
    assert float(netcl.grad(netcl.jit(netcl.jit(f)))(2.0)) == 100.0
    outer = netcl.custom_jvp(f)          # a rule of its own, not f's
    with pytest.raises(TypeError, match="no rule defined"):
        netcl.jvp(outer, (2.0,), (1.0,))
