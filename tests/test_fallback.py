"""The NumPy fallback backend: the whole suite runs again with NETCL_DEVICE=numpy, where each
primitive's NumPy reference executes instead of OpenCL kernels (as on a machine without any
OpenCL platform)."""
import os
import subprocess
import sys

import pytest


@pytest.mark.skipif(os.environ.get("NETCL_DEVICE") == "numpy", reason="already the fallback")
def test_suite_passes_on_numpy_fallback():
    here = os.path.dirname(__file__)
    env = dict(os.environ, NETCL_DEVICE="numpy")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        "-o", "addopts=", here, "--ignore", __file__],
                       env=env, capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout.splitlines()[-1], r.stdout[-2000:]
