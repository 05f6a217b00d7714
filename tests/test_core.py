"""Devices, arrays, the buffer pool, kernels and views."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.core import kernels
from netcl.core.pool import BufferPool, bucket_size
from util import assert_close


def test_devices_and_default():
    devs = netcl.devices()
    assert devs and netcl.default_device() in devs
    d = netcl.default_device()
    c = d.capabilities
    assert d.kind in ("gpu", "cpu", "accel", "numpy")
    assert c.max_work_group_size >= 1 and isinstance(c.fp64, bool)
    with netcl.default_device(d):
        assert netcl.default_device() is d
    with pytest.raises(TypeError, match="default_device"):
        netcl.default_device("gpu")


def test_array_basics():
    x = jnp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], jnp.float32)
    assert x.shape == (2, 3) and x.dtype == np.float32 and x.ndim == 2 and x.size == 6
    assert len(x) == 2 and [r.shape for r in x] == [(3,), (3,)]
    assert float(x[1, 2]) == 6.0 and int(jnp.array(7)) == 7
    assert x.T.shape == (3, 2) and x.astype(jnp.int32).dtype == np.int32
    assert np.asarray(x.reshape(3, 2)).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert x.block_until_ready() is x
    assert netcl.block_until_ready({"a": x}) == {"a": x} or True
    assert "Array(" in repr(x)
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    with pytest.raises(TypeError, match="0-d"):
        len(jnp.array(1.0))
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_views_share_storage_and_read_correctly():
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = jnp.asarray(host)
    t = jnp.transpose(x, (2, 0, 1))
    if not netcl.default_device().is_numpy:  # the fallback's arrays are numpy views
        assert t._storage is x._storage and not t._contig
    assert_close(t, host.transpose(2, 0, 1))
    assert_close(x[:, ::-1, 1::2], host[:, ::-1, 1::2])
    assert_close(jnp.broadcast_to(x[:1], (3, 3, 4)), np.broadcast_to(host[:1], (3, 3, 4)))
    assert_close(jnp.exp(t[::2]), np.exp(host.transpose(2, 0, 1)[::2]), rtol=1e-6)
    assert_close(jnp.reshape(t, (4, 6)), host.transpose(2, 0, 1).reshape(4, 6))


def test_dtypes_and_zero_size():
    for dt in ("float32", "int32", "uint32", "bool", "float16", "float64"):
        host = (np.arange(6) % 3).astype(dt)
        assert_close(jnp.asarray(host), host, dt)
    e = jnp.zeros((0, 3))
    assert e.shape == (0, 3) and np.asarray(e + 1.0).shape == (0, 3)
    assert jnp.array([1.0]).dtype == np.float64        # Python floats: the default float
    assert jnp.asarray(np.ones(2)).dtype == np.float64  # NumPy float64 kept (device has fp64)
    assert jnp.asarray(np.ones(2, np.int64)).dtype == np.int64    # (x64 on, as JAX)
    with netcl.enable_x64(False):
        assert jnp.asarray(np.ones(2, np.int64)).dtype == np.int32


def test_bucket_sizes():
    assert bucket_size(0) == 64 and bucket_size(65) == 128 and bucket_size(4096) == 4096
    for n in (5000, 12345, 10**6, 3 * 2**20 + 1):
        b = bucket_size(n)
        assert n <= b < n * 1.13


def test_pool_reuses_buffers_and_does_not_grow():
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no buffer pool on the NumPy fallback")
    r, b = jnp.ones(4), jnp.ones(4)
    for _ in range(100):
        r = r + b
    gc.collect()
    before = dev.memory_stats()
    for _ in range(100_000):
        r = r + b
    r.block_until_ready()
    after = dev.memory_stats()
    assert after["bytes_in_use"] <= before["bytes_in_use"] + 256
    assert after["hits"] - before["hits"] >= 100_000
    assert float(r[0]) == 1.0 + 100 + 100_000


def test_pool_cap_releases():
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no buffer pool on the NumPy fallback")
    pool = BufferPool(dev.context, max_cached_bytes=1024)
    bufs = [pool.allocate(512) for _ in range(4)]
    for b, s in bufs:
        pool.release(b, s)
    assert pool.bytes_cached == 1024 and pool.bytes_in_use == 0
    pool.allocate(512)
    assert pool.hits == 1
    pool.empty()
    assert pool.bytes_cached == 0


def test_pool_buffers_over_host_memory():
    """Where the Target says so (PoCL's CPU devices), the pool makes buffers over NumPy
    memory: the host reads a kernel's result there once it has finished, kernels read what
    the host wrote there, and a buffer given back to the driver past the cap keeps its
    memory until the commands enqueued before are done."""
    import pyopencl as cl
    from netcl.core.pool import host_array
    dev = netcl.default_device()
    if dev.is_numpy or not dev.target.host_pointer_buffers:
        pytest.skip("buffers are not host memory netcl allocates on this device")
    for n in (1, 1023, 1024, 300_001):      # (below a page: 128-byte aligned; from it: a page)
        x = jnp.arange(n, dtype=jnp.float32) * 2
        x.block_until_ready()
        view = host_array(x, 0, n)
        assert view.ctypes.data % (4096 if n * 4 >= 4096 else 128) == 0
        np.testing.assert_array_equal(view, np.arange(n, dtype=np.float32) * 2)
        np.testing.assert_array_equal(host_array(x, n // 2, n - n // 2), view[n // 2:])
        view[:] = 5.0               # (x's buffer, written by the host: kernels read it)
        np.testing.assert_array_equal(np.asarray(x + 1), np.full(n, 6.0, np.float32))
    pool = BufferPool(dev.context, max_cached_bytes=0, device=dev)
    buf, size = pool.allocate(1 << 20)
    assert buf in pool.host_memory
    z = jnp.zeros(1 << 18, jnp.float32) + 3.0
    cl.enqueue_copy(dev.queue, buf, z._buf, byte_count=1 << 20)     # (may still run ...)
    pool.release(buf, size)                          # (... past the cap: given back)
    assert buf not in pool.host_memory and pool._retiring
    dev.synchronize()
    pool._forget_retired()
    assert not pool._retiring and pool.bytes_in_use == 0
    assert host_array(jnp.ones(3), 0, 3) is not None


def test_kernel_build_error_carries_log_and_source():
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no OpenCL on the NumPy fallback")
    with pytest.raises(kernels.KernelBuildError) as e:
        kernels.build(dev, "__kernel void broken(__global float* x) { x[0] = undefined_name; }")
    assert "undefined_name" in str(e.value) and "broken" in e.value.source
    # a program that builds without the kernel asked for (what PoCL does on AVX-512 hosts
    # when a builtin gets a 512-bit vector) is a build error too, with the source
    with pytest.raises(kernels.KernelBuildError, match="has no kernel 'missing'"):
        kernels.kernel(dev, "__kernel void present(__global float* x) { x[0] = 1; }\n",
                       "missing")


def test_built_programs_are_kept_least_recently_used_first(monkeypatch):
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no OpenCL on the NumPy fallback")
    monkeypatch.setattr(kernels, "_MAX_PROGRAMS", 2)
    src = "__kernel void k(__global float* x) {{ x[0] = {}; }}\n"
    a = kernels.build(dev, src.format(1))
    kernels.build(dev, src.format(2))
    assert kernels.build(dev, src.format(1)) is a          # a hit: now the most recent
    kernels.build(dev, src.format(3))                       # evicts 2, the least recent
    assert len(kernels._programs) == 2
    assert kernels.build(dev, src.format(1)) is a


def test_device_put_and_mismatched_devices():
    x = jnp.ones(3)
    assert netcl.device_put(x) is x
    assert netcl.device_put(np.ones(2)).shape == (2,)
    tree = netcl.device_put({"a": np.zeros(2), "b": [1.0]})
    assert isinstance(tree["a"], netcl.Array)
    with pytest.raises(TypeError, match="device_put"):
        netcl.device_put(x, "cpu")


def _has_pocl():
    return any("Portable" in d.platform for d in netcl.devices())


@pytest.mark.skipif(not _has_pocl(), reason="needs PoCL (NETCL_CPU_DEVICES)")
def test_two_cpu_devices_and_cross_device_error():
    code = ("import netcl, netcl.numpy as jnp\n"
            "d = netcl.devices(); assert len(d) == 2, d\n"
            "a = netcl.device_put(jnp.ones(3), d[0]); b = netcl.device_put(jnp.ones(3), d[1])\n"
            "assert a.device is d[0] and b.device is d[1]\n"
            "assert float((b + b)[0]) == 2.0\n"
            "try:\n    a + b\nexcept ValueError as e:\n    assert 'different devices' in str(e)\n"
            "else:\n    raise SystemExit('no error')\n"
            # jit on the second device: a folded scalar read by a row kernel (-1/2 of the
            # mean's gradient) becomes a constant there too
            "c = netcl.device_put(jnp.ones((2, 3)), d[1])\n"
            "f = lambda v: -jnp.mean(jnp.sum(netcl.nn.log_softmax(v) * v, axis=-1))\n"
            "g = netcl.jit(netcl.grad(f))\n"
            "assert float(g(c)[0, 0]) == float(g(netcl.device_put(c, d[0]))[0, 0])\n")
    env = dict(os.environ, NETCL_CPU_DEVICES="2")
    env.pop("POCL_DEVICES", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


def test_netcl_device_selection_errors():
    code = "import netcl; netcl.default_device()"
    env = dict(os.environ, NETCL_DEVICE="no-such-device-xyz")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0 and "matches no device" in r.stderr
