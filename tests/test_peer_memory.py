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


@needs_peers
def test_all_reduces_ordered_by_the_gpus_arrival_counts_stay_right_call_after_call():
    from netcl.transforms import pmap_arrivals
    devices = _gpus()
    k = len(devices)
    f = netcl.pmap(lambda a, b: (lax.psum(a, "d"), lax.pmin(b, "d")), axis_name="d",
                   devices=devices)
    group = pmap_arrivals.device_arrivals(devices)

    def counts():
        got = []
        for k, d in enumerate(devices):
            c = np.zeros(1, np.int32)
            cl.enqueue_copy(d.queue, c, group.own_count(k))
            got.append(int(c[0]))
        return got
    before = counts()
    rng = np.random.default_rng(0)
    busy = netcl.device_put(jnp.ones((2048, 2048)), devices[-1])
    for call in range(9):
        n = (100, 5000, 300_000)[call % 3]      # (the send buffers grow between calls)
        x = rng.standard_normal((k, n)).astype(np.float32)
        b = rng.integers(-99, 99, (k, n)).astype(np.int32)
        if call % 2:        # the last GPU arrives late: the others spin until it does
            for _ in range(4):
                busy = busy @ busy * (1 / 2048)
        s, m = f(x, b)
        np.testing.assert_allclose(np.asarray(s), np.broadcast_to(x.sum(0), (k, n)),
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(m), np.broadcast_to(b.min(0), (k, n)))
    # every GPU signalled each all-reduce (two a call: psum, pmin), replayed or not
    assert counts() == [c + 2 * 9 for c in before]
    np.testing.assert_allclose(np.asarray(busy)[:2, :2], 1.0)


def _mpiexec():
    import shutil
    import sys
    import importlib.util
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    return found if found and importlib.util.find_spec("mpi4py") else None


@needs_peers
@pytest.mark.skipif(_mpiexec() is None, reason="needs mpi4py and mpiexec")
def test_processes_of_one_host_all_reduce_through_each_others_gpu_memory():
    """Two processes of one GPU each (pmap_process_peer): all-reduces of several dtypes and
    sizes (past the first send buffer's size, both alternating buffers, round after round)
    and the gradient of a psum equal NumPy's."""
    import subprocess
    import sys
    import textwrap
    code = textwrap.dedent("""
    import numpy as np, netcl, netcl.numpy as jnp
    from netcl import lax
    from netcl.transforms import pmap_process_peer
    import mpi4py.MPI
    r = mpi4py.MPI.COMM_WORLD.Get_rank()
    w = netcl.distributed.initialize(local_device_ids=[r])
    assert pmap_process_peer.available(w)
    f = netcl.pmap(lambda a, b, c: (lax.psum(a, "i"), lax.pmax(b, "i"), lax.psum(c, "i"),
                                    lax.pmean(a, "i"), lax.pmin(b, "i")), axis_name="i")
    for n in (3, 1000, 700_000, 1_500_003, 5):
        for rep in range(3):
            a = (np.arange(n, dtype=np.float32) % 97 * (r + 1) + rep)[None]
            b = np.full((1, 5), r * 10 + rep, np.int32)
            c = np.full((1, 7), 1.5 * r + rep, np.float16)
            sa, mb, sc, ma, mnb = [np.asarray(o)[0] for o in f(a, b, c)]
            want = sum(np.arange(n, dtype=np.float32) % 97 * (p + 1) + rep for p in range(2))
            np.testing.assert_allclose(sa, want, rtol=1e-6)
            np.testing.assert_allclose(ma, want / 2, rtol=1e-6)
            assert (mb == 10 + rep).all() and (mnb == rep).all()
            np.testing.assert_allclose(sc.astype(np.float32), 1.5 + 2 * rep, rtol=1e-3)
    x = np.arange(6, dtype=np.float64).reshape(1, 6) * 0.25 + r
    g = netcl.pmap(netcl.grad(lambda v: jnp.sum(lax.psum(v * v, "i") * jnp.sin(v))),
                   axis_name="i")(x.astype(np.float32))
    both = [np.arange(6) * 0.25 + p for p in range(2)]
    s = sum(v * v for v in both)
    want = 2 * x[0] * sum(np.sin(v) for v in both) + s * np.cos(x[0])
    np.testing.assert_allclose(np.asarray(g)[0], want, rtol=2e-5, atol=2e-5)
    print("done", r)
    """)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([_mpiexec(), "-n", "2", sys.executable, "-m", "mpi4py", "-c", code],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.count("done") == 2, r.stdout[-3000:] + r.stderr[-5000:]
