"""JAX's debugging, platform and promotion options (netcl.config, core/nonfinite.py,
numpy/_promotion_modes.py): jax_debug_nans and jax_debug_infs raise FloatingPointError
naming the operation (eager, under grad and vmap, and in a jitted function, found again op
by op), and never where every value is finite; jax_log_compiles logs each compilation;
jax_disable_jit runs jitted functions' Python; jax_platform_name / jax_platforms choose the
default device; strict dtype promotion agrees with JAX's, rank promotion warns or raises
(jitted functions trace again); bad values raise. Also copy_to_host_async (a copy started
early, handed to the next read)."""
import logging
import sys

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp

_devices = sys.modules["netcl.core.devices"]


@pytest.fixture
def options():
    """Every option this file sets, and the default device, restored afterwards."""
    keys = ("debug_nans", "debug_infs", "log_compiles", "disable_jit")
    before = {k: getattr(netcl.config, k) for k in keys}
    device = _devices._global_default
    yield netcl.config
    for k, v in before.items():
        netcl.config.update(k, v)
    _devices._global_default = device


def test_debug_nans_names_the_operation_eager_grad_vmap_and_jit(options):
    x = jnp.asarray([-1.0, 4.0], jnp.float32)
    options.update("jax_debug_nans", True)
    assert netcl.config.jax_debug_nans and netcl.config.read("debug_nans")
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
        jnp.log(x)
    with pytest.raises(FloatingPointError, match="nan.* in log"):
        netcl.grad(lambda v: jnp.sum(jnp.log(v)))(x)
    with pytest.raises(FloatingPointError, match="nan.* in sqrt"):
        netcl.vmap(jnp.sqrt)(x)
    f = netcl.jit(lambda v: jnp.sqrt(v) * 2.0 + 1.0)
    with pytest.raises(FloatingPointError, match="nan.* in sqrt"):   # (found op by op)
        f(x)
    np.testing.assert_allclose(f(jnp.abs(x)), [3.0, 5.0])
    # infinities pass unless debug_infs is on; finite values never raise
    assert np.isinf(np.asarray(jnp.float32(1.0) / 0.0))
    np.testing.assert_allclose(jnp.log(jnp.abs(x)), np.log([1.0, 4.0]), rtol=1e-6)
    options.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(jnp.log(x))[0])


def test_debug_infs_block_and_donated_jit_arguments(options):
    with netcl.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
            jnp.float32(1.0) / 0.0
        step = netcl.jit(lambda v: v / 0.0, donate_argnums=0)
        with pytest.raises(FloatingPointError, match=r"jit\(<lambda>\).*donated arguments"):
            step(jnp.ones(3, jnp.float32))
        ints = jnp.arange(3) // 1                       # (integers are never checked)
        assert int(ints[2]) == 2
    assert not netcl.config.debug_infs
    assert np.isinf(np.asarray(jnp.float32(1.0) / 0.0))


def test_log_compiles_and_disable_jit(options, caplog):
    calls = []

    def f(v):
        calls.append(1)
        return v + 1.0
    g = netcl.jit(f)
    with caplog.at_level(logging.WARNING, logger="netcl"), netcl.log_compiles():
        g(jnp.ones(3, jnp.float32))
        g(jnp.ones(3, jnp.float32))
    assert caplog.text.count("compiling f for (float32[3])") == 1
    assert len(calls) == 1
    options.update("jax_disable_jit", True)
    np.testing.assert_allclose(g(jnp.ones(3, jnp.float32)), 2.0)
    g(jnp.ones(3, jnp.float32))
    assert len(calls) == 3                              # (its Python ran each time)
    options.update("jax_disable_jit", False)
    g(jnp.ones(3, jnp.float32))
    assert len(calls) == 3


def test_platform_names_choose_the_default_device(options):
    first = netcl.devices()[0]
    kind = first.kind if first.kind in ("gpu", "cpu", "numpy") else "opencl"
    netcl.config.update("jax_platform_name", kind)
    assert netcl.default_device() is first
    netcl.config.update("jax_platforms", "rocm,numpy" if kind != "gpu" else "cuda,cpu")
    assert netcl.default_device().kind in ("numpy", "gpu")
    assert np.asarray(jnp.ones(2) * 2).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match=r"jax_platforms'\): unknown platform tpu"):
        netcl.config.update("jax_platforms", "tpu")
    if not netcl.devices("gpu"):
        with pytest.raises(ValueError, match="no device of platform gpu here"):
            netcl.config.update("jax_platform_name", "gpu")


def test_bad_option_values(options):
    with pytest.raises(TypeError, match="jax_debug_nans takes a bool"):
        netcl.config.update("jax_debug_nans", "yes")
    with pytest.raises(AttributeError, match="unknown option 'jax_debug_everything'"):
        netcl.config.update("jax_debug_everything", True)
    with pytest.raises(AttributeError, match="no option 'jax_nothing'"):
        netcl.config.jax_nothing


_PROMOTIONS = {
    "i32+True": lambda m: m.ones(2, m.int32) + True,
    "f32+1j": lambda m: m.ones(2, m.float32) + 1j,
    "f16+1.5": lambda m: m.ones(2, m.float16) + 1.5,
    "c64+1.5": lambda m: m.ones(2, m.complex64) + 1.5,
    "bool+1": lambda m: m.ones(2, bool) + 1,
    "f32+np.int32": lambda m: m.ones(2, m.float32) + np.int32(1),
    "concatenate": lambda m: m.concatenate([m.ones(2, m.float32), m.ones(2, m.int32)]),
    "f32+1": lambda m: m.ones(2, m.float32) + 1,
    "i32+1.5": lambda m: m.ones(2, m.int32) + 1.5,
    "f32+f16": lambda m: m.ones(2, m.float32) + m.ones(2, m.float16),
    "i32+f32": lambda m: m.ones(2, m.int32) * m.ones(2, m.float32),
    "where": lambda m: m.where(True, m.ones(2, m.float32), m.ones(2, m.float16)),
}


def test_strict_dtype_promotion_agrees_with_jax(options):
    jax = pytest.importorskip("jax")
    for name, f in _PROMOTIONS.items():
        with jax.numpy_dtype_promotion("strict"):
            try:
                want = f(jax.numpy).dtype
            except Exception as e:
                want = type(e).__name__
        with netcl.numpy_dtype_promotion("strict"):
            try:
                got = f(jnp).dtype
            except netcl.dtypes.TypePromotionError as e:
                assert "jax_numpy_dtype_promotion=strict" in str(e)
                got = "TypePromotionError"
        assert str(got) == str(want), (name, got, want)
    assert f(jnp).dtype == jnp.float32                      # (standard again outside)


def test_rank_promotion_modes_and_jit_retraces(options):
    add = netcl.jit(lambda a, b: a + b)
    assert add(jnp.ones(2), jnp.ones((3, 2))).shape == (3, 2)
    with netcl.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=r"could not be broadcast together for add on "
                                             r"shapes \(2,\) \(3, 2\)"):
            jnp.ones(2) + jnp.ones((3, 2))
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            add(jnp.ones(2), jnp.ones((3, 2)))     # (traced again under the new mode)
        assert (jnp.ones((1, 2)) + jnp.ones((3, 2))).shape == (3, 2)
        assert (jnp.ones((3, 2)) * 2.0).shape == (3, 2)
    with netcl.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="jax_numpy_rank_promotion='warn'"):
            jnp.ones(2) - jnp.ones((3, 2))
    with pytest.raises(ValueError, match="numpy_rank_promotion takes one of 'allow', 'warn', "
                                         "'raise', got 'never'"):
        netcl.config.update("jax_numpy_rank_promotion", "never")


def test_environment_info_and_process_indices(capsys):
    text = netcl.print_environment_info(return_string=True)
    assert text.startswith("netcl:") and "numpy:" in text and "process_count: 1" in text
    assert netcl.default_device().name in text
    netcl.print_environment_info()
    assert capsys.readouterr().out == text
    assert netcl.process_indices() == [0] == list(range(netcl.process_count()))


def test_copy_to_host_async_hands_its_copy_to_the_next_read():
    x = jnp.arange(10.0, dtype=jnp.float32) * 2
    view = x[::3]                                   # (a strided view: copied dense first)
    assert x.copy_to_host_async() is None
    tree = {"x": x, "view": view, "n": 3}
    assert netcl.copy_to_host_async(tree) is tree
    first = np.asarray(x)
    first[0] = -1.0                                 # (the handed-over copy is the caller's)
    np.testing.assert_array_equal(np.asarray(x), np.arange(10.0) * 2)
    np.testing.assert_array_equal(np.asarray(view), (np.arange(10.0) * 2)[::3])
    gone = jnp.ones(3)
    gone.copy_to_host_async()
    gone.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(gone)
    with pytest.raises(RuntimeError, match="copy_to_host_async"):
        gone.copy_to_host_async()
