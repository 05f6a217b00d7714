import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # tests/util.py
os.environ.setdefault("NETCL_CHECK_IR", "1")     # every jit pass's output is checked
# float64 gradient checks and float64 data: x64 on (as JAX's own tests run); test_x64.py
# checks the default, off, in subprocesses
os.environ.setdefault("NETCL_ENABLE_X64", "1")
# JAX, where tests compare with it, on its CPU backend: on a GPU its default matmul
# precision is TF32 and some special values differ by backend (digamma(0): -inf on CUDA)
os.environ.setdefault("JAX_PLATFORMS", "cpu")
# float32 products (see _float32_products), also at import and in subprocesses
os.environ.setdefault("NETCL_DEFAULT_MATMUL_PRECISION", "highest")
# GEMM tiles from the built-in tables, whatever a developer's tuning cache holds
# (test_autotune.py turns tuning on with a scratch cache)
os.environ.setdefault("NETCL_AUTOTUNE", "off")


def _jax_compilation_cache():
    """JAX's references in its persistent compilation cache, beside PoCL's kernel cache
    ($XDG_CACHE_HOME, else ~/.cache): XLA compiles each op of an eager JAX program (about
    40 ms each on CPU), about half the suite's time without it. The NumPy-fallback rerun and
    the subprocesses inherit it, so within a run they load what the other compiled.
    JAX_COMPILATION_CACHE_DIR set by hand wins; JAX_ENABLE_COMPILATION_CACHE=false turns it
    off."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.environ.get("JAX_COMPILATION_CACHE_DIR") or os.path.join(base, "netcl-tests",
                                                                       "jax")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return                  # (no cache: JAX compiles, as without this)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = path
    # every compile, however short (JAX's default keeps those of a second or more only)
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")


_jax_compilation_cache()

from hypothesis import settings  # noqa: E402

# Hypothesis draws the same examples every run, as it does on CI (its "ci" profile, which it
# loads itself where $CI is set: derandomize, no deadline, no example database): examples
# that build kernels of their own (random jitted programs, layouts, dtypes) then find them
# in PoCL's kernel cache from the second run on, instead of compiling a few hundred new
# programs each run. `--hypothesis-profile=default` draws fresh examples (a wider search
# over runs); a test's own settings (max_examples, ...) apply either way.
settings.load_profile("ci")

import pytest  # noqa: E402


def pytest_collection_modifyitems(config, items):
    """The NumPy-fallback rerun (test_fallback.py) starts now, in its own process, and its
    test, which waits for it, goes last: the rerun overlaps the rest of the suite."""
    waiting = [i for i in items if i.name == "test_suite_passes_on_numpy_fallback"]
    if waiting:
        items[:] = [i for i in items if i not in waiting] + waiting
        waiting[0].module.start_fallback_run()


@pytest.fixture(autouse=True)
def _float32_products(request):
    """Matrix products and convolutions keep float32 products in tests
    (jax_default_matmul_precision "highest"), so that results are checked at float32
    tolerances on every device: the library's default on NVIDIA GPUs of sm_80 and newer is
    TF32 (as XLA's). Tests marked ``tf32`` run at the library's default."""
    from netcl.core.config import default_matmul_precision
    with default_matmul_precision(None if request.node.get_closest_marker("tf32") else "highest"):
        yield


@pytest.fixture
def taken_buffers(monkeypatch):
    """The buffers that outputs took from offered inputs (pool.output_storage: jit's
    in-place steps), in order."""
    from netcl.core import pool
    got = []
    output_storage = pool.output_storage

    def spy(p, nbytes, size_class, offers):
        n = len(offers)
        st = output_storage(p, nbytes, size_class, offers)
        if len(offers) < n:
            got.append(st.buf)
        return st
    monkeypatch.setattr(pool, "output_storage", spy)
    return got


def _recording(monkeypatch, names):
    """Record the names of the PyOpenCL calls `names` from now on (launchers bind their
    enqueue when they are built: the cached ones are dropped before and after)."""
    import netcl
    recorded = []
    if netcl.default_device().is_numpy:
        yield recorded
        return
    import pyopencl as cl
    for name in names:
        def counting(*args, _orig=getattr(cl, name), _name=name, **kwargs):
            recorded.append(_name)
            return _orig(*args, **kwargs)
        monkeypatch.setattr(cl, name, counting)
    netcl.test_util.forget_launchers()
    yield recorded
    netcl.test_util.forget_launchers()


@pytest.fixture
def kernel_launches(monkeypatch):
    """Names of the kernels (and buffer fills) enqueued from now on."""
    yield from _recording(monkeypatch, ("enqueue_nd_range_kernel", "enqueue_fill_buffer"))


@pytest.fixture
def device_work(monkeypatch):
    """What ran on a device from now on: kernels, fills and host transfers."""
    yield from _recording(monkeypatch, ("enqueue_nd_range_kernel", "enqueue_fill_buffer",
                                        "enqueue_copy"))


def _x64_both(on):
    """netcl and JAX both with x64 `on`; both restored after (a generator for fixtures)."""
    import netcl
    jax = pytest.importorskip("jax")
    if on and not netcl.default_device().capabilities.fp64:
        pytest.skip("the device has no fp64")
    old, old_jax = netcl.config.enable_x64, jax.config.jax_enable_x64
    netcl.config.update("enable_x64", on)
    jax.config.update("jax_enable_x64", on)
    try:
        yield on
    finally:
        netcl.config.update("enable_x64", old)
        jax.config.update("jax_enable_x64", old_jax)


@pytest.fixture(params=[False, True], ids=["x64_off", "x64_on"])
def x64(request):
    """netcl and JAX both with x64 set to the parameter; both restored after."""
    yield from _x64_both(request.param)


@pytest.fixture
def x64_on():
    """netcl and JAX both with x64 on (float64, complex128; the suite runs with it on, a
    file alone may not); both restored after."""
    yield from _x64_both(True)
