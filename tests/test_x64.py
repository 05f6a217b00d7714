"""x64 off by default, as in JAX: float64 data and dtype requests give float32 unless
`netcl.config.update("enable_x64", True)` or NETCL_ENABLE_X64=1. The default is checked in
a subprocess (the suite runs with x64 on, see conftest.py), against JAX's own default."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp

CASES = [
    "lib.asarray(np.zeros(3))",
    "lib.array(np.float64(1.5))",
    "lib.ones(2) * np.float64(2)",
    "lib.ones(2, np.float32) + np.ones(2)",
    "lib.asarray(np.arange(3))",
    "lib.zeros(3, lib.float64)",
    "lib.ones(3).astype(np.float64)",
    "lib.float64(1.5)",
    "lib.sum(lib.asarray(np.ones(3)))",
    "lib.arange(3.0)",
    "lib.linspace(0.0, 1.0, 5)",
    "lib.full((2,), 1.5, np.float64)",
]


def test_x64_is_off_by_default_as_in_jax():
    pytest.importorskip("jax")
    code = textwrap.dedent(f"""
        import warnings
        warnings.simplefilter("ignore")
        import numpy as np
        import jax.numpy as jjnp
        import netcl, netcl.numpy as jnp
        assert not netcl.config.enable_x64
        for case in {CASES!r}:
            ours = eval(case, {{"lib": jnp, "np": np}}).dtype
            theirs = eval(case, {{"lib": jjnp, "np": np}}).dtype
            assert ours == theirs, (case, ours, theirs)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert jnp.zeros(2, np.float64).dtype == np.float32
        assert any("enable_x64" in str(w.message) for w in seen), seen
        netcl.config.update("jax_enable_x64", True)
        assert netcl.config.read("enable_x64")
        if netcl.default_device().capabilities.fp64:
            assert jnp.asarray(np.zeros(3)).dtype == np.float64
        print("ok")
        """)
    env = {k: v for k, v in os.environ.items() if k not in ("NETCL_ENABLE_X64",
                                                              "JAX_ENABLE_X64")}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-2000:] + r.stderr[-4000:]


def test_x64_on_keeps_float64_where_the_device_has_it():
    assert netcl.config.enable_x64          # (conftest.py)
    fp64 = netcl.default_device().capabilities.fp64
    want = np.float64 if fp64 else np.float32
    assert jnp.asarray(np.zeros(3)).dtype == want
    assert jnp.array([1.5]).dtype == np.float32     # Python floats: float32 either way


def test_bad_options_and_values():
    with pytest.raises(AttributeError, match="unknown option 'enable_x32'"):
        netcl.config.update("enable_x32", True)
    with pytest.raises(TypeError, match="takes a bool"):
        netcl.config.update("enable_x64", "yes")
    env = dict(os.environ, NETCL_ENABLE_X64="maybe")
    r = subprocess.run([sys.executable, "-c", "import netcl"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "NETCL_ENABLE_X64='maybe'" in r.stderr, r.stderr[-2000:]
