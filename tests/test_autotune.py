"""The GEMM autotuner (primitives/gemm_autotune.py): shape classes timed once per device and
recorded in a JSON file; the modes of netcl.config.autotune; netcl.tune."""
import json
import warnings

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.core import dtypes
from netcl.primitives import gemm, gemm_autotune, gemm_tiers, linalg

DEVICE = netcl.default_device()
pytestmark = pytest.mark.skipif(DEVICE.is_numpy, reason="no OpenCL device: no GEMM kernels")

# a narrow product (a convolution's 32 output channels): the tables' and the tuned tiles
# differ on the CPU host this was written on; any device records some winner
M, N, K = 2048, 32, 96


@pytest.fixture
def scratch_cache(tmp_path, monkeypatch):
    path = tmp_path / "tuning.json"
    monkeypatch.setenv("NETCL_TUNING_CACHE", str(path))
    gemm_autotune.forget()
    old = netcl.config.autotune
    yield path
    netcl.config.update("autotune", old)
    gemm_autotune.forget()


def _operands(seed=0):
    rng = np.random.default_rng(seed)
    return (jnp.asarray(rng.standard_normal((M, K), dtype=np.float32)),
            jnp.asarray(rng.standard_normal((K, N), dtype=np.float32)))


def _geometry(trans_a=False, trans_b=False):
    """The global and work-group sizes the product's kernel launches with under the current
    mode (CPU kernels all run one work-item per group: their tiles show in the global size)."""
    _, g, l_, _ = linalg._gemm_kernel(DEVICE, dtypes.float32, trans_a, trans_b, 1, M, N, K)
    return tuple(g), tuple(l_)


def _dims(cfg):
    return tuple(tuple(d) for d in gemm.launch_dims(cfg, 1, M, N))


def test_tuning_records_a_winner_that_computes_what_the_table_computes(scratch_cache):
    a, b = _operands()
    netcl.config.update("autotune", "off")
    want = np.asarray(a @ b)
    got = netcl.tune(lambda: np.asarray(a @ b))
    assert netcl.config.autotune == "off"                   # tune restores the mode
    records = json.loads(scratch_cache.read_text())
    classes = records[gemm_autotune.device_key(DEVICE)]
    cls = gemm_autotune.ShapeClass.of("float", False, False, M, N, K)
    assert cls.key() == "float NN 2048x32x128" and cls.key() in classes
    winner = gemm.GemmConfig(**classes[cls.key()])
    assert winner in gemm_tiers.candidates(DEVICE.cl_device, "float", M, N, K, False,
                                           DEVICE.target.gemm_tiers)
    # every candidate adds each output's products in the same order
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(got, np.asarray(a, np.float64) @ np.asarray(b, np.float64),
                               rtol=1e-4, atol=1e-4)


def test_cached_mode_takes_recorded_tiles_and_off_mode_the_tables(scratch_cache):
    table = gemm_tiers.choose_config(DEVICE.cl_device, "float", M, N, K, False,
                                     family=DEVICE.target.gemm_tiers)
    other = next(c for c in gemm_tiers.candidates(DEVICE.cl_device, "float", M, N, K, False,
                                                  DEVICE.target.gemm_tiers)
                 if _dims(c) != _dims(table))
    gemm_autotune.record(DEVICE, gemm_autotune.ShapeClass.of("float", False, False, M, N, K),
                         other)
    gemm_autotune.forget()                                  # read back from the file
    netcl.config.update("autotune", "cached")
    assert _geometry() == _dims(other)
    assert _geometry(trans_a=True) == _dims(                # another class: the table's
        gemm_tiers.choose_config(DEVICE.cl_device, "float", M, N, K, True,
                                 family=DEVICE.target.gemm_tiers))
    netcl.config.update("autotune", "off")
    assert _geometry() == _dims(table)
    a, b = _operands(1)
    netcl.config.update("autotune", "cached")
    np.testing.assert_allclose(np.asarray(a @ b), np.asarray(a) @ np.asarray(b),
                               rtol=1e-4, atol=1e-4)


def test_a_damaged_cache_is_ignored_with_a_warning(scratch_cache):
    scratch_cache.write_text("{not json")
    netcl.config.update("autotune", "cached")
    with pytest.warns(RuntimeWarning, match="ignoring the GEMM tuning cache"):
        size = _geometry()
    table = gemm_tiers.choose_config(DEVICE.cl_device, "float", M, N, K, False,
                                     family=DEVICE.target.gemm_tiers)
    assert size == _dims(table)


def test_records_of_another_version_are_ignored(scratch_cache):
    cls = gemm_autotune.ShapeClass.of("float", False, False, M, N, K)
    scratch_cache.write_text(json.dumps(
        {gemm_autotune.device_key(DEVICE): {cls.key(): {"kind": "cpu", "no_such_field": 1}}}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gemm_autotune.recorded(DEVICE, cls) is None


def test_bad_autotune_settings_raise_naming_the_option():
    with pytest.raises(ValueError, match=r"netcl.config.update\('autotune'\).*'cached'"):
        netcl.config.update("autotune", "sometimes")
    with pytest.raises(ValueError, match="autotune must be True, False"):
        netcl.config.update("autotune", 2.5)
    assert netcl.config.autotune == "off"       # (conftest's NETCL_AUTOTUNE=off)
    with pytest.raises(TypeError, match="netcl.tune: fun must be callable, got int"):
        netcl.tune(3)
