"""The NumPy fallback backend: the primitive suites run again with NETCL_DEVICE=numpy, where
each primitive's NumPy reference executes instead of OpenCL kernels."""
import os
import subprocess
import sys

import pytest

SUITES = ["test_elementwise.py", "test_core.py", "test_transforms.py", "test_structural.py",
          "test_indexing.py", "test_reductions.py", "test_linalg.py", "test_conv.py",
          "test_random.py"]


@pytest.mark.skipif(os.environ.get("NETCL_DEVICE") == "numpy", reason="already the fallback")
def test_suites_pass_on_numpy_fallback():
    here = os.path.dirname(__file__)
    files = [os.path.join(here, f) for f in SUITES if os.path.exists(os.path.join(here, f))]
    env = dict(os.environ, NETCL_DEVICE="numpy")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        *files], env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
