"""Peer memory (core/peer_memory.py): device memory the other GPUs of a host read directly,
which pmap's collectives stage through on NVIDIA GPUs. Where it is available (several
NVIDIA GPUs with peer access), buffers round-trip between the devices and the collectives
give the same results through it as through pinned host memory (NETCL_PEER_MEMORY=0);
elsewhere (PoCL, one GPU) it says it is not available and nothing else changes."""
import os

import numpy as np
import pyopencl as cl
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.core import peer_memory


def _gpus():
    devices = netcl.local_devices()
    return devices if peer_memory.available(devices) else None


def test_cpu_devices_and_the_off_switch_have_no_peer_memory(monkeypatch):
    devices = netcl.local_devices()
    if all(d.target.external_memory == "" for d in devices):
        assert not peer_memory.available(devices)
    monkeypatch.setenv("NETCL_PEER_MEMORY", "0")
    assert not peer_memory.available(devices)


needs_peers = pytest.mark.skipif(_gpus() is None, reason="needs GPUs with peer memory")


@needs_peers
def test_a_buffer_written_by_its_owner_is_read_by_every_other_device():
    devices = _gpus()
    for owner in devices:
        buf = peer_memory.PeerBuffer(owner, devices, 3 << 20)
        assert buf.nbytes >= 3 << 20
        values = np.arange(1 << 18, dtype=np.float32) + owner.index
        cl.enqueue_copy(owner.queue, buf.on(owner), values)
        owner.queue.finish()
        for d in devices:
            got = np.empty_like(values)
            cl.enqueue_copy(d.queue, got, buf.on(d))
            d.queue.finish()
            np.testing.assert_array_equal(got, values)
        buf.release()


@needs_peers
@pytest.mark.parametrize("n", [7, 1000, 3 << 18, (5 << 20) + 3])
def test_collectives_through_peer_memory_equal_those_through_host_memory(monkeypatch, n):
    devices = _gpus()
    k = len(devices)
    rng = np.random.default_rng(n)
    x = rng.standard_normal((k, n)).astype(np.float32)
    i = rng.integers(-50, 50, (k, n)).astype(np.int32)
    perm = [(j, (j + 1) % k) for j in range(k)]

    def step(a, b):
        return (lax.psum(a, "d"), lax.pmax(b, "d"), lax.all_gather(a, "d"),
                lax.ppermute(b, "d", perm), lax.psum((a, 2 * a), "d"))
    results = {}
    for setting in ("1", "0"):
        monkeypatch.setenv("NETCL_PEER_MEMORY", setting)
        f = netcl.pmap(step, axis_name="d", devices=devices)
        results[setting] = [np.asarray(r) for r in netcl.tree_util.tree_leaves(f(x, i))]
    for a, b in zip(results["1"], results["0"]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(results["1"][0][0], x.sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(results["1"][1][0], i.max(0))
    np.testing.assert_array_equal(results["1"][3][1], i[0])
