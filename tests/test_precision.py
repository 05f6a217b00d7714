"""Precision control as in JAX: netcl.config's default_matmul_precision (also
jax_default_matmul_precision), the default_matmul_precision context manager, per-call
``precision=`` on products and convolutions, which arithmetic a GEMM runs in
(matmul_precision.gemm_arithmetic), and 16-bit float products on every device.

The suite runs at "highest" (tests/conftest.py) except where a test is marked ``tf32``."""
import dataclasses
import warnings

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.core import dtypes
from netcl.core.config import config, default_matmul_precision
from netcl.primitives import matmul_precision as MP
from netcl.primitives.conv.convolution import conv_general_dilated

DEV = netcl.default_device()
ON_NUMPY = DEV.is_numpy
TENSOR_CORES = not ON_NUMPY and DEV.target.tensor_cores
KEY = "jax_default_matmul_precision"
NAMES = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32")
BF16 = getattr(dtypes, "bfloat16", None)


def _ir(f, *args):
    return str(netcl.make_ir(f)(*args))


def _mat(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---- the setting and the context manager ----------------------------------------------------

def test_config_values_and_keys():
    old = config.default_matmul_precision
    try:
        for key in (KEY, "default_matmul_precision"):
            for name in NAMES + (None,):
                config.update(key, name)
                assert config.default_matmul_precision == name
                assert config.jax_default_matmul_precision == name
                assert config.read(KEY) == name
        config.update(KEY, "HIGHEST")            # (case as jax.lax.Precision names)
        assert config.default_matmul_precision == "highest"
    finally:
        config.update(KEY, old)


def test_bad_values_name_the_function():
    with pytest.raises(ValueError, match=r"netcl.config.update.*'fast'"):
        config.update(KEY, "fast")
    with pytest.raises(TypeError, match="netcl.config.update"):
        config.update(KEY, 3)
    with pytest.raises(ValueError, match="netcl.default_matmul_precision"):
        with default_matmul_precision("float64"):
            pass
    x = jnp.ones((2, 2))
    with pytest.raises(ValueError, match="matmul: precision 'fast'"):
        jnp.matmul(x, x, precision="fast")
    with pytest.raises(ValueError, match="dot: precision 'fp8'"):
        netcl.lax.dot(x, x, precision="fp8")
    with pytest.raises(ValueError, match="dot_general: precision must be one value or a pair"):
        netcl.lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=("highest",) * 3)
    with pytest.raises(ValueError, match="conv_general_dilated: precision"):
        conv_general_dilated(jnp.ones((1, 1, 4, 4)), jnp.ones((1, 1, 3, 3)), (1, 1), "SAME",
                             precision="double")


def test_context_manager_nests_and_restores():
    old = config.default_matmul_precision
    with default_matmul_precision("tensorfloat32"):
        assert config.default_matmul_precision == "tensorfloat32"
        with default_matmul_precision(None):
            assert config.default_matmul_precision is None
        assert config.default_matmul_precision == "tensorfloat32"
        with pytest.raises(RuntimeError):
            with default_matmul_precision("bfloat16"):
                raise RuntimeError
        assert config.default_matmul_precision == "tensorfloat32"
    assert config.default_matmul_precision == old


def test_default_binds_into_products_and_convolutions():
    # as jax.lax: a None precision binds the config's default; an argument beats it
    x = jnp.ones((3, 4))
    with default_matmul_precision("float32"):
        assert "precision='highest'" in _ir(lambda a: a @ a.T, x)
        assert "precision='highest'" in _ir(lambda a: jnp.einsum("ij,kj->ik", a, a), x)
        assert "precision='default'" in _ir(lambda a: jnp.dot(a, a.T, precision="bfloat16"), x)
        assert "precision='high'" in _ir(
            lambda a: netcl.lax.dot(a, a.T, precision=netcl.lax.Precision.HIGH), x)
        img, w = jnp.ones((1, 1, 5, 5)), jnp.ones((1, 1, 3, 3))
        assert "precision='highest'" in _ir(
            lambda a, b: conv_general_dilated(a, b, (1, 1), "SAME"), img, w)
    with default_matmul_precision(None):
        assert "precision=None" in _ir(lambda a: a @ a.T, x)
        assert "precision=('default', 'highest')" in _ir(
            lambda a: netcl.lax.dot(a, a.T, precision=("default", "float32")), x)


def test_jitted_functions_trace_again_when_the_default_changes():
    traces = []

    @netcl.jit
    def f(a):
        traces.append(1)
        return a @ a
    x = jnp.ones((4, 4))
    with default_matmul_precision("highest"):
        f(x)
        f(x)
        assert len(traces) == 1
    with default_matmul_precision("tensorfloat32"):
        f(x)
        assert len(traces) == 2
        # inside a trace the setting changes what is bound from then on, nothing else
        g = netcl.jit(lambda a: _inner(a))
        assert np.allclose(np.asarray(g(x)), 4.0)
        assert "precision='highest'" in _ir(g, x)
        assert len(traces) == 2 and config.default_matmul_precision == "tensorfloat32"


def _inner(a):
    with default_matmul_precision("float32"):
        return a @ a


# ---- which arithmetic ---------------------------------------------------------------------------

def test_canonical_forms_and_levels():
    P = netcl.lax.Precision
    for given, want in [("bfloat16", "default"), ("fastest", "default"), (P.DEFAULT, "default"),
                        ("tensorfloat32", "high"), (P.HIGH, "high"), ("HIGHEST", "highest"),
                        ("float32", "highest"), (("highest", P.HIGHEST), "highest"),
                        (("default", "highest"), ("default", "highest"))]:
        assert MP.canonicalize(given, "f") == want
    with default_matmul_precision("tensorfloat32"):
        assert MP.canonicalize(None, "f") == "high"
        assert MP.canonicalize(None, "f", use_config=False) is None
        assert MP.level(None) == "high"
    with default_matmul_precision(None):
        assert MP.canonicalize(None, "f") is None and MP.level(None) == "default"
    assert MP.level(("default", "highest")) == "highest"


def test_gemm_arithmetic_policy():
    from netcl.core.target import NUMPY
    tc = dataclasses.replace(NUMPY, tensor_cores=True)
    f32, f16, f64 = dtypes.float32, dtypes.float16, dtypes.float64
    for p, want in [("default", "tf32"), ("high", "tf32"), ("highest", None),
                    (("default", "highest"), None)]:
        assert MP.gemm_arithmetic(tc, f32, p) == want
    with default_matmul_precision(None):
        assert MP.gemm_arithmetic(tc, f32, None) == "tf32"      # JAX's default on sm_80+
    with default_matmul_precision("float32"):
        assert MP.gemm_arithmetic(tc, f32, None) is None
    # small float32 products keep the float32 tiles (faster there, and exact either way)
    assert MP.gemm_arithmetic(tc, f32, "default", tc.tf32_min_work) == "tf32"
    assert MP.gemm_arithmetic(tc, f32, "default", tc.tf32_min_work - 1) is None
    for p in (None, "default", "highest"):
        assert MP.gemm_arithmetic(tc, f16, p) == "f16"        # exact products either way
        assert MP.gemm_arithmetic(tc, f64, p) is None         # never on tensor cores
        assert MP.gemm_arithmetic(NUMPY, f32, p) is None
        assert MP.gemm_arithmetic(NUMPY, f16, p) is None
        if BF16 is not None:
            assert MP.gemm_arithmetic(tc, BF16, p) == "bf16"


@pytest.mark.skipif(ON_NUMPY or TENSOR_CORES, reason="a device without tensor cores")
def test_highest_keeps_the_float32_kernels_bit_for_bit():
    # a target claiming tensor cores at "highest" runs exactly the kernels it runs without
    # them (no TF32 build is even tried: PoCL cannot build PTX)
    rng = np.random.default_rng(0)
    a, b = jnp.asarray(_mat(rng, (70, 130))), jnp.asarray(_mat(rng, (130, 33)))
    plain = np.asarray(jnp.matmul(a, b, precision="highest"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with netcl.test_util.override_target(DEV, tensor_cores=True):
            with default_matmul_precision("highest"):
                got = np.asarray(a @ b)
                low = netcl.jit(lambda a, b: a @ b).lower(a, b)
            got2 = np.asarray(jnp.matmul(a, b, precision="float32"))
    sources = [getattr(k, "source", None) or k[1] for k in low.kernels]
    assert sources and all("mma.sync" not in src for src in sources)
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(got2, plain)


# ---- 16-bit float products ------------------------------------------------------------------

def _half_dtypes():
    out = [np.dtype(np.float16)]
    if BF16 is not None:
        out.append(BF16)
    return out


def _as(x, dt):
    try:
        return jnp.asarray(x.astype(dt))
    except Exception as e:        # bfloat16 arrays not supported yet on this build
        pytest.skip(f"{dt} arrays: {e}")


@pytest.mark.parametrize("dt", _half_dtypes(), ids=str)
def test_half_products_match_a_float32_reference(dt):
    # JAX's rule: 16-bit operands give a 16-bit result (float32 with
    # preferred_element_type), accumulated in float32 on every device
    rng = np.random.default_rng(1)
    eps = float(dtypes.finfo(dt).eps) if hasattr(dtypes, "finfo") else 2.0 ** -10
    for (ma, ka, nb), batch in [((33, 70, 19), ()), ((64, 128, 40), (3,)), ((1, 5, 1), ())]:
        x = _mat(rng, batch + (ma, ka)).astype(dt)
        y = _mat(rng, batch + (ka, nb)).astype(dt)
        xs, ys = _as(x, dt), _as(y, dt)
        want = np.matmul(x.astype(np.float32).astype(np.float64),
                         y.astype(np.float32).astype(np.float64))
        tol = 4 * np.sqrt(ka) * 1e-6 * np.abs(want).max()
        got = jnp.matmul(xs, ys)
        assert got.dtype == dt
        np.testing.assert_allclose(np.asarray(got).astype(np.float64), want,
                                   rtol=eps, atol=tol + eps * np.abs(want).max() / 8)
        got32 = netcl.lax.dot_general(xs, ys, (((xs.ndim - 1,), (ys.ndim - 2,)),
                                               (tuple(range(len(batch))),) * 2),
                                      preferred_element_type=np.float32)
        assert got32.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got32).astype(np.float64), want, rtol=0,
                                   atol=tol)


def test_half_products_of_views():
    rng = np.random.default_rng(2)
    x = _mat(rng, (41, 67)).astype(np.float16)
    y = _mat(rng, (67, 50)).astype(np.float16)
    xs, ys = jnp.asarray(x), jnp.asarray(y)
    f64 = lambda a: a.astype(np.float32).astype(np.float64)  # noqa: E731
    cases = [(xs[1:, 3:], ys[3:, :-1], x[1:, 3:], y[3:, :-1]),            # offsets
             (jnp.asarray(x.T.copy()).T, jnp.asarray(y.T.copy()).T, x, y),   # transposed
             (xs[::2], ys, x[::2], y)]                                        # strided rows
    for a, b, ah, bh in cases:
        want = f64(ah) @ f64(bh)
        got = np.asarray(a @ b).astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=2.0 ** -10,
                                   atol=1e-4 * np.abs(want).max())


# ---- on tensor cores -----------------------------------------------------------------------

needs_tc = pytest.mark.skipif(not TENSOR_CORES, reason="needs a tensor-core GPU")


@needs_tc
@pytest.mark.tf32
def test_float32_products_take_tf32_at_the_default():
    rng = np.random.default_rng(3)
    x, y = _mat(rng, (1024, 512)), _mat(rng, (512, 1024))     # M*N*K: Target.tf32_min_work
    want = x.astype(np.float64) @ y.astype(np.float64)
    scale = np.abs(want).max()
    a, b = jnp.asarray(x), jnp.asarray(y)
    errs = {}
    for name in (None, "tensorfloat32", "highest"):
        with default_matmul_precision(name):
            errs[name] = np.abs(np.asarray(a @ b) - want).max() / scale
    assert errs["highest"] < 1e-5
    for name in (None, "tensorfloat32"):
        assert 1e-5 < errs[name] < 3e-3, errs          # TF32, not float32, and not worse
    exact = np.asarray(jnp.matmul(a, b, precision="highest"))   # the argument beats the default
    assert np.abs(exact - want).max() / scale < 1e-5
    # jit's fused epilogue (bias + relu) on the same kernels
    bias = jnp.asarray(_mat(rng, (1024,)))
    with default_matmul_precision(None):
        f = netcl.jit(lambda a, b, c: netcl.nn.relu(a @ b + c))
        got = np.asarray(f(a, b, bias))
    np.testing.assert_allclose(got, np.maximum(want + np.asarray(bias), 0), rtol=0,
                               atol=3e-3 * scale)


@needs_tc
def test_float64_products_never_take_tensor_cores():
    if not DEV.capabilities.fp64:
        pytest.skip("no fp64")
    rng = np.random.default_rng(4)
    x, y = _mat(rng, (64, 96), np.float64), _mat(rng, (96, 80), np.float64)
    with default_matmul_precision(None):
        got = np.asarray(jnp.asarray(x) @ jnp.asarray(y))
    np.testing.assert_allclose(got, x @ y, rtol=1e-12, atol=1e-12)


@needs_tc
@pytest.mark.parametrize("dt", _half_dtypes(), ids=str)
def test_half_products_on_tensor_cores_are_exact_products(dt):
    # float32 sums of exact products: float32 accumulation error only
    rng = np.random.default_rng(5)
    for M, N, K in [(512, 256, 1024), (130, 70, 40), (8, 8, 8)]:
        x, y = _mat(rng, (M, K)).astype(dt), _mat(rng, (K, N)).astype(dt)
        want = x.astype(np.float32).astype(np.float64) @ y.astype(np.float32).astype(np.float64)
        got = netcl.lax.dot(_as(x, dt), _as(y, dt), preferred_element_type=np.float32)
        np.testing.assert_allclose(np.asarray(got), want, rtol=0,
                                   atol=10 * np.sqrt(K) * 1e-6 * np.abs(want).max())
