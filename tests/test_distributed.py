"""netcl.distributed: jobs of several processes on MPI (mpiexec from the mpich wheel of the
`test` extra), each job a subprocess of PoCL devices: pmap over every process's devices with
collectives spanning the processes (against vmap of the global batch), the data-parallel
example against one-device training, a raising process ending the job, bad inputs; the
faults: a process that does not arrive (named after the collective timeout), ends early, or
runs other collectives (shapes, dtypes), and checkpoints written by process 0 alone."""
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest

import netcl

_BIN = os.path.join(os.path.dirname(sys.executable), "mpiexec")
MPIEXEC = _BIN if os.path.exists(_BIN) else shutil.which("mpiexec")
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None and MPIEXEC is not None
needs_mpi = pytest.mark.skipif(not HAVE_MPI or netcl.default_device().is_numpy,
                               reason="needs mpi4py, mpiexec (pip install 'netcl[distributed]') "
                                      "and PoCL")

PRELUDE = """
import numpy as np
import netcl, netcl.numpy as jnp
from netcl import lax
def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a, np.float32), np.asarray(b, np.float32), rtol=tol,
                               atol=tol)
"""
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def job(n_processes, devices_each, code=None, args=None, module=True, timeout=300, **env_vars):
    env = dict(os.environ, NETCL_CPU_DEVICES=str(devices_each), **env_vars)
    env.pop("POCL_DEVICES", None)
    run = ["-m", "mpi4py"] if module else []
    what = args if args is not None else ["-c", PRELUDE + textwrap.dedent(code)]
    return subprocess.run([MPIEXEC, "-n", str(n_processes), sys.executable, *run, *what],
                          env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def ok(r):
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    return r.stdout


@needs_mpi
def test_two_processes_of_two_devices_agree_with_vmap_over_all_four():
    ok(job(2, 2, """
    netcl.distributed.initialize()
    netcl.distributed.initialize()                  # (idempotent)
    r = netcl.process_index()
    assert netcl.process_count() == 2 and netcl.device_count() == 4
    devs = netcl.devices()
    assert [d.process_index for d in devs] == [0, 0, 1, 1]
    assert devs[2 * r] is netcl.local_devices()[0] and netcl.local_device_count() == 2

    x = np.arange(4 * 5, dtype=np.float32).reshape(4, 5) - 7        # the global batch
    i = np.arange(4 * 3, dtype=np.int32).reshape(4, 3) * (1 - 2 * (np.arange(4) % 2))[:, None]
    mine = slice(2 * r, 2 * r + 2)

    def body(x, i):
        return (lax.psum(x, "d"), lax.pmean(x, "d"), lax.pmax(x, "d"), lax.psum(i, "d"),
                lax.pmin(i, "d"), lax.all_gather(x, "d"), lax.all_gather(i, "d", tiled=True),
                lax.ppermute(x, "d", [(k, (k + 1) % 4) for k in range(4)]),
                lax.axis_index("d") + 0 * i[0], lax.psum(x.astype(jnp.float16), "d"),
                lax.psum_scatter(x[:4], "d", tiled=True))
    got = netcl.pmap(body, axis_name="d")(x[mine], i[mine])
    want = netcl.vmap(body, axis_name="d")(jnp.asarray(x), jnp.asarray(i))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == (2,) + w.shape[1:], (k, g.shape, w.shape)
        close(g, np.asarray(w)[mine])

    loss = lambda v: jnp.sum(lax.psum(v * v, "d") * jnp.sin(v))
    close(netcl.pmap(netcl.grad(loss), axis_name="d")(x[mine]),
          np.asarray(netcl.vmap(netcl.grad(loss), axis_name="d")(jnp.asarray(x)))[mine])

    b = netcl.distributed.broadcast_one_to_all({"a": jnp.full(3, float(r) + 1), "n": 2 * r})
    close(b["a"], np.ones(3))
    assert int(b["n"]) == 0
    netcl.distributed.barrier()
    from netcl.experimental import multihost_utils as mh
    mh.sync_global_devices("after the broadcast")
    g = mh.process_allgather({"r": np.full(2, r, np.int32), "s": r})
    assert g["r"].tolist() == [[0, 0], [1, 1]] and g["s"].tolist() == [0, 1]
    assert mh.process_allgather(np.arange(2) + 2 * r, tiled=True).tolist() == [0, 1, 2, 3]
    mh.assert_equal({"w": np.ones(3, np.float32)})
    try:
        mh.assert_equal(np.full(1, r), "diverged:")
    except AssertionError as e:
        assert str(e).startswith("diverged: Expected the pytree to be equal"), e
    else:
        raise AssertionError("assert_equal of values that differ")
    loader = netcl.data.DataLoader(np.arange(16, dtype=np.int32), 8, devices=netcl.local_devices(),
                                   split_over_processes=True)
    first = next(iter(loader))
    assert first.shape == (2, 2)
    close(first, np.arange(4 * r, 4 * r + 4).reshape(2, 2))
    try:
        netcl.pmap(lambda v: v)(x[:2 - r])        # process 1 maps 1 device, process 0 two
    except ValueError as e:
        assert "different sizes [2, 1]" in str(e), e
    else:
        raise AssertionError("sizes that differ between processes")
    print("done", r)
    """))


@needs_mpi
def test_training_over_two_processes_matches_one_device():
    """Each process takes its part of every global batch (DataLoader split over the
    processes), parameters start from process 0's; the pmapped sgd steps give the
    parameters of the same steps on the whole batches on one device."""
    ok(job(2, 1, """
    from netcl import optim, random, stax
    netcl.distributed.initialize()
    r = netcl.process_index()
    init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    _, params = init(random.PRNGKey(r), (-1, 4))          # different per process ...
    params = netcl.distributed.broadcast_one_to_all(params)  # ... until process 0's
    opt = optim.sgd(0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 4)).astype(np.float32)
    y = rng.integers(0, 3, 24).astype(np.int32)

    def step(p, s, x, y, mean=lambda a: lax.pmean(a, "b")):
        l, g = netcl.value_and_grad(lambda p: -jnp.mean(jnp.sum(
            apply(p, x) * netcl.nn.one_hot(y, 3), -1)))(p)
        u, s = opt.update(netcl.tree_util.tree_map(mean, g), s, p)
        return optim.apply_updates(p, u), s, mean(l)
    pstep = netcl.pmap(step, axis_name="b", donate_argnums=(0, 1))
    jstep = netcl.jit(lambda p, s, x, y: step(p, s, x, y, mean=lambda a: a))
    devs = netcl.local_devices()
    p2, s2 = netcl.device_put_replicated((params, opt.init(params)), devs)
    p1, s1 = params, opt.init(params)
    split = netcl.data.DataLoader((x, y), 8, shuffle=True, devices=devs,
                                  split_over_processes=True)
    whole = netcl.data.DataLoader((x, y), 8, shuffle=True)
    for (xb, yb), (xw, yw) in zip(split, whole):
        p2, s2, l2 = pstep(p2, s2, xb, yb)
        p1, s1, l1 = jstep(p1, s1, xw, yw)
        close(l2[0], l1)
    for a, b in zip(netcl.tree_util.tree_leaves(p2), netcl.tree_util.tree_leaves(p1)):
        close(a[0], b)
    """))


@needs_mpi
def test_distributed_example_matches_one_device_training():
    pytest.importorskip("sklearn")      # (the example's digits; the `examples` extra)
    out = ok(job(2, 1, args=["examples/train_data_parallel.py", "--distributed", "--check",
                             "--epochs", "2"]))
    assert out.count("largest difference from one-device training") == 2, out
    assert "test accuracy" in out


@needs_mpi
def test_a_raising_process_ends_the_job_naming_it():
    """Process 1 raises while process 0 waits in a psum: the excepthook initialize installs
    aborts the job (no `-m mpi4py` here), which ends instead of hanging."""
    r = job(2, 1, """
    netcl.distributed.initialize()
    if netcl.process_index() == 1:
        raise KeyError("boom")
    netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d")(np.ones((1, 3), np.float32))
    """, module=False, timeout=120)
    assert r.returncode != 0
    assert "netcl.distributed: process 1 raised KeyError" in r.stderr, r.stderr[-3000:]


@needs_mpi
def test_one_device_per_process_all_reduces_in_host_memory_like_numpy():
    """One PoCL device per process: the pool makes its buffers over NumPy memory
    (Target.host_pointer_buffers), so MPI reduces them where they are, with no command on
    the device's queue (pmap_host_memory.direct_all_reduce), at every size: into a new
    output for an input that lives on, in place for an intermediate, a donated input or a
    packed bucket. Without that, through maps (mapped_all_reduce) from MAPPED_BYTES on and
    pinned memory below it. Sizes below and above the processes' count, odd, around a page
    and around MAPPED_BYTES, float32 and int32, psum/pmax/pmin against NumPy; kept inputs
    keep their values; the processes vote on the in-place reduction (one holding a view of
    its donated input, or staging through pinned memory as a GPU does, makes every process
    reduce into a new buffer)."""
    ok(job(2, 1, """
    from netcl.transforms import pmap_host_memory as hm
    netcl.distributed.initialize()
    r = netcl.process_index()
    d = netcl.local_devices()[0]
    assert d.target.host_memory_buffers and d.target.host_pointer_buffers
    ran = []        # (path, in place) of each all-reduce's steps
    direct, mapped, combine = hm.direct_all_reduce, hm.mapped_all_reduce, hm.mpi_combine
    hm.direct_all_reduce = lambda *a: ran.append(("direct", a[7])) or direct(*a)
    hm.mapped_all_reduce = lambda *a: ran.append(("mapped", a[7])) or mapped(*a)
    hm.mpi_combine = lambda c, p, x, y=None: ran.append(("mpi", y is None)) or combine(c, p, x, y)
    mine = lambda a: np.asarray(a)[0]
    rng = np.random.default_rng(0)
    at = hm.MAPPED_BYTES // 4
    ops = [(lax.psum, np.sum), (lax.pmax, np.max), (lax.pmin, np.min)]
    for n in (1, 2, 7, 1023, 1025, at + 5):
        for dt in (np.float32, np.int32):
            g = (rng.standard_normal((2, n)) * 1000).astype(dt)
            xs = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
            for f, ref in ops:
                ran.clear()
                out = netcl.pmap(lambda v: f(v, "d"), axis_name="d")(xs)    # input kept
                close(mine(out), ref(g, 0), 0)
                assert ran == [("direct", False), ("mpi", False)], ran
                ran.clear()
                out = netcl.pmap(lambda v: f(v * 3, "d") - 1, axis_name="d")(xs)
                close(mine(out), ref(g * 3, 0) - 1, 0)
                assert ran == [("direct", True), ("mpi", True)], ran
            close(mine(xs), g[r], 0)
            donated = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
            ran.clear()
            out = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d", donate_argnums=0)(donated)
            close(mine(out), g.sum(0), 0)
            assert donated.shards[0].is_deleted() and ran == [("direct", True), ("mpi", True)]
            ran.clear()
            a, b, c = netcl.pmap(lambda v: (lax.psum(v, "d"), lax.psum(v[:1] * 2, "d"), v + 1),
                                 axis_name="d")(xs)        # a bucket: packed, in place
            close(mine(a), g.sum(0), 0)
            close(mine(b), g[:, :1].sum(0) * 2, 0)
            close(mine(c), g[r] + 1, 0)
            assert ran == [("direct", True), ("mpi", True)], ran
    g = rng.standard_normal((2, at + 5)).astype(np.float32)
    # process 0 keeps a view of its donated input: no process reduces in place
    donated = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
    view = donated.shards[0][3:9] if r == 0 else None
    ran.clear()
    out = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d", donate_argnums=0)(donated)
    close(mine(out), g.sum(0))
    if r == 0:
        close(view, g[0][3:9], 0)
    assert ran == [("direct", r == 1), ("mpi", False)], ran
    # buffers that are host memory but not netcl's: through maps from MAPPED_BYTES on, below
    # it through pinned memory (in place there), in place through maps for an intermediate
    with netcl.test_util.override_target(d, host_pointer_buffers=False):
        for n in (at - 1, at, at + 5):
            g = rng.standard_normal((2, n)).astype(np.float32)
            xs = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
            ran.clear()
            close(mine(netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d")(xs)), g.sum(0))
            assert ran == ([("mapped", False), ("mpi", False)] if n >= at else
                           [("mpi", True)]), ran
            ran.clear()
            close(mine(netcl.pmap(lambda v: lax.psum(v * 2, "d"), axis_name="d")(xs)),
                  g.sum(0) * 2)
            assert ran == [("mapped", True), ("mpi", True)], ran
            close(mine(xs), g[r], 0)
    # process 0 stages through pinned memory (as a GPU would) or maps, process 1 reduces
    # where the buffers are: they vote alike, into a new buffer for an input process 1
    # keeps, in place for an intermediate
    g = rng.standard_normal((2, at + 5)).astype(np.float32)
    xs = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
    for memory in (False, True):
        with netcl.test_util.override_target(d, host_memory_buffers=memory or r == 1,
                                             host_pointer_buffers=r == 1):
            for fun, scale, in_place in ((lambda v: lax.psum(v, "d"), 1, False),
                                         (lambda v: lax.psum(v * 2, "d"), 2, True)):
                ran.clear()
                close(mine(netcl.pmap(fun, axis_name="d")(xs)), g.sum(0) * scale)
                assert ran[-1] == ("mpi", in_place), ran
                assert ran[0][0] == "direct" if r == 1 else len(ran) == (2 if memory else 1)
    close(mine(xs), g[r], 0)
    print("done", r)
    """))


@needs_mpi
@pytest.mark.parametrize("devices_each", [1, 2])
def test_all_reduces_across_processes_like_numpy_kept_and_donated(devices_each):
    """2 processes of 1 or 2 PoCL devices each (buffers over host memory netcl allocates):
    psum/pmax/pmin of float32 and int32 values whose sizes fall below and above the
    processes' count, odd, around a page (the pool aligns buffers of a page or more to a
    page) and past MAPPED_BYTES, of inputs kept (they keep their values) and donated, and
    of a gradient-like bucket, against NumPy over the 2 * devices_each values."""
    ok(job(2, devices_each, """
    from netcl.transforms.pmap_host_memory import MAPPED_BYTES
    netcl.distributed.initialize()
    r = netcl.process_index()
    devs = netcl.local_devices()
    m = len(devs)
    assert all(d.target.host_pointer_buffers for d in devs)
    mine = slice(m * r, m * r + m)
    rng = np.random.default_rng(1)
    ops = [(lax.psum, np.sum), (lax.pmax, np.max), (lax.pmin, np.min)]
    for n in (1, 3, 1023, 1024, 1025, MAPPED_BYTES // 4 + 7):
        for dt in (np.float32, np.int32):
            g = (rng.standard_normal((2 * m, n)) * 100).astype(dt)
            tol = 0 if dt == np.int32 else 1e-4      # (the sums' order is not NumPy's)
            xs = netcl.device_put_sharded([jnp.asarray(v) for v in g[mine]], devs)
            for f, ref in ops:
                close(netcl.pmap(lambda v: f(v, "d"), axis_name="d")(xs),
                      np.broadcast_to(ref(g, 0), (m, n)), tol)
            close(xs, g[mine], 0)
            donated = netcl.device_put_sharded([jnp.asarray(v) for v in g[mine]], devs)
            out = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d",
                             donate_argnums=0)(donated)
            close(out, np.broadcast_to(g.sum(0), (m, n)), tol)
            assert all(s.is_deleted() for s in donated.shards)
            again = netcl.pmap(lambda v: lax.pmax(v, "d"), axis_name="d", donate_argnums=0)(out)
            close(again, np.broadcast_to(g.sum(0), (m, n)), tol)
            a, b = netcl.pmap(lambda v: (lax.psum(v * 2, "d"), lax.psum(v[:1], "d")),
                              axis_name="d")(xs)
            close(a, np.broadcast_to(g.sum(0) * 2, (m, n)), tol)
            close(b, np.broadcast_to(g[:, :1].sum(0), (m, 1)), tol)
    print("done", r)
    """))


def test_initialize_without_mpi4py_names_the_extra():
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import netcl\n"
            "try:\n    netcl.distributed.initialize()\n"
            "except ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "pip install 'netcl[distributed]'" in r.stdout, r.stdout + r.stderr
    assert netcl.process_index() == 0 and netcl.process_count() == 1
    local = importlib.import_module("netcl.core.devices").devices()
    assert netcl.devices() == local and all(d.process_index == 0 for d in local)


# ---- faults: a process that does not arrive, ends early, or runs other collectives -----------

FAULT = """
import os, sys, time
netcl.distributed.initialize()
r = netcl.process_index()
f = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d")
close(f(np.ones((1, 3), np.float32)), 2 * np.ones((1, 3)))
netcl.distributed.initialize(collective_timeout={timeout})   # (after the start-up's skew)
if r == 1:
    {fault}
f(np.ones((1, 3), np.float32))
print("second psum", r)
"""


def fault_job(fault, collective_timeout=3, mpiexec_args=(), timeout=120):
    env = dict(os.environ, NETCL_CPU_DEVICES="1")
    env.pop("POCL_DEVICES", None)
    code = PRELUDE + FAULT.format(fault=fault, timeout=collective_timeout)
    t = time.perf_counter()
    r = subprocess.run([MPIEXEC, *mpiexec_args, "-n", "2", sys.executable, "-c", code], env=env,
                       capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return r, time.perf_counter() - t


@needs_mpi
def test_a_process_that_does_not_arrive_is_named_after_the_timeout():
    """Process 1 sleeps instead of its second psum: process 0 waits the collective timeout
    (2 s, set by initialize), names process 1 and the collective, and aborts the job."""
    r, seconds = fault_job("time.sleep(600)", collective_timeout=2)
    assert r.returncode != 0 and "second psum" not in r.stdout
    assert ("netcl.distributed: process 0 waited 2" in r.stderr and "in collective #3 (psum of "
            "float32 (3,)), and process 1 did not arrive" in r.stderr), r.stderr[-3000:]
    assert "Aborting the job" in r.stderr and "NETCL_COLLECTIVE_TIMEOUT" in r.stderr
    assert seconds < 60


@needs_mpi
def test_a_process_that_ends_early_ends_the_job_with_a_message():
    """sys.exit in process 1 while process 0 goes on to a psum: the last round process 1
    enters at exit meets process 0's psum, both say so, and the job aborts at once."""
    r, seconds = fault_job("sys.exit(0)")
    assert r.returncode != 0 and "second psum" not in r.stdout
    assert ("the processes are at different collectives (collective #3 of the job): process 0: "
            "psum of float32 (3,); process 1: the end of its program (exit)") in r.stderr, \
        r.stderr[-3000:]
    assert seconds < 60


@needs_mpi
def test_a_process_that_leaves_without_finalizing_ends_the_job():
    """os._exit skips MPI_Finalize: mpiexec (hydra) kills the job at once, silently; with
    -disable-auto-cleanup process 0 waits the timeout and names process 1."""
    r, seconds = fault_job("os._exit(0)")
    assert "second psum" not in r.stdout and seconds < 60, r.stdout + r.stderr[-3000:]
    r, seconds = fault_job("os._exit(0)", mpiexec_args=["-disable-auto-cleanup"])
    assert r.returncode != 0 and "second psum" not in r.stdout
    assert "waited 3" in r.stderr and "process 1 did not arrive" in r.stderr, r.stderr[-3000:]
    assert seconds < 60


@needs_mpi
def test_mismatched_collectives_raise_in_every_process_then_the_job_goes_on():
    """Other shapes, dtypes or collectives in one process: CollectiveMismatchError in
    every process, naming each one's collective, before any data moves (through pinned
    memory, or where MPI reads device buffers in place); the processes are
    still in step after it (caught here) and the next collectives agree. Checkpoints: only
    process 0 writes, every process loads what it wrote once save returns."""
    out = ok(job(2, 1, """
    import os, tempfile
    from netcl.distributed import CollectiveMismatchError
    netcl.distributed.initialize()
    assert netcl.distributed.world().comm.timeout == 45.0       # (NETCL_COLLECTIVE_TIMEOUT)
    r = netcl.process_index()
    def must_mismatch(fn, *expected):
        try:
            fn()
        except CollectiveMismatchError as e:
            for s in expected:
                assert s in str(e), (s, str(e))
        else:
            raise AssertionError("no mismatch")
    psum = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d")
    must_mismatch(lambda: psum(np.ones((1, 3 + r), np.float32)),
                  "process 0: psum of float32 (3,); process 1: psum of float32 (4,)")
    must_mismatch(lambda: psum(np.ones((1, 2), [np.float32, np.int32][r])),
                  "process 0: psum of float32 (2,); process 1: psum of int32 (2,)")
    gather = netcl.pmap(lambda v: lax.all_gather(v, "d"), axis_name="d")
    must_mismatch(lambda: (psum if r else gather)(np.ones((1, 2), np.float32)),
                  "process 0: all_gather of float32 (2,)", "process 1: psum of float32 (2,)")
    # past MAPPED_BYTES (MPI reduces device buffers where they are), in place too: caught
    # before any data moves, a donated input left as it was
    from netcl.transforms.pmap_host_memory import MAPPED_BYTES
    big = MAPPED_BYTES // 4 + 1
    must_mismatch(lambda: psum(np.ones((1, big + r), np.float32)),
                  f"process 0: psum of float32 ({big},); process 1: psum of float32 ({big + 1},)")
    twice = netcl.pmap(lambda v: lax.psum(v * 2, "d"), axis_name="d")
    must_mismatch(lambda: twice(np.ones((1, big), [np.float32, np.int32][r])),
                  f"process 0: psum of float32 ({big},); process 1: psum of int32 ({big},)")
    donated = netcl.device_put_sharded([jnp.full(big + r, 5.0, jnp.float32)],
                                       netcl.local_devices())
    must_mismatch(lambda: netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d",
                                     donate_argnums=0)(donated), "psum of float32")
    assert not donated.shards[0].is_deleted()
    close(donated, np.full((1, big + r), 5.0))
    # (shapes new to both processes: one that compiles runs a collective the other does not)
    close(psum(np.full((1, 5), r + 1.0, np.float32)), np.full((1, 5), 3.0))
    close(gather(np.full((1, 1), float(r), np.float32)), [[[0], [1]]])

    path = os.path.join(tempfile.gettempdir(), f"netcl_dist_{os.getppid()}.npz")
    netcl.distributed.barrier()
    if r == 0 and os.path.exists(path):
        os.remove(path)
    netcl.distributed.barrier()
    netcl.io.save(path, {"w": jnp.full(3, float(r)), "step": 10 + r})
    back = netcl.io.load(path)                 # (written by process 0 before save returns)
    close(back["w"], np.zeros(3))
    assert back["step"] == 10
    netcl.distributed.barrier()
    if r == 0:
        os.remove(path)
    print("done", r)
    """, module=False, timeout=180, NETCL_COLLECTIVE_TIMEOUT="45"))
    assert out.count("done") == 2


@needs_mpi
def test_descriptors_pass_between_processes_and_late_arrival_rounds_are_checked():
    """The pieces of the GPU-memory path that run on any host: the mailbox passes a file
    descriptor from every process to every other (memfds here; GPU memory on NVIDIA GPUs),
    round after round; an arrival round started by arrive_later and finished at the next
    collective passes where the processes agree, and raises CollectiveMismatchError in
    every process, one collective late, where they do not."""
    out = ok(job(3, 1, """
    import os
    from netcl.distributed import CollectiveMismatchError
    from netcl.transforms import pmap_process_peer
    w = netcl.distributed.initialize()
    assert not pmap_process_peer.available(w)            # (PoCL: the MPI path)
    comm, r = w.comm, w.index
    box = pmap_process_peer._Mailbox(comm, f"netcl-test-{comm.raw.bcast(os.getpid())}")
    comm.raw.Barrier()
    def export():
        fd = os.memfd_create("netcl-test")
        os.write(fd, f"from {r}".encode())
        return fd
    for round_ in range(2):
        got = box.share(comm, export, 100 + r)
        assert sorted(got) == [p for p in range(3) if p != r]
        for p, (fd, nbytes) in got.items():
            assert nbytes == 100 + p
            os.lseek(fd, 0, 0)
            assert os.read(fd, 16) == f"from {p}".encode()
            os.close(fd)
    box.close()
    comm.arrive_later("psum of float32 (3,)")
    comm.arrive_later("psum of float32 (4,)")        # (settles the first: they agree)
    comm.arrive_later("psum of float32 (5,)" if r else "psum of int32 (5,)")
    try:
        comm.arrive("the next collective")
    except CollectiveMismatchError as e:
        assert "process 0: psum of int32 (5,); processes 1, 2: psum of float32 (5,)" in str(e)
    else:
        raise AssertionError("no mismatch")
    comm.arrive("in step again")
    print("done", r)
    """, module=False, timeout=120))
    assert out.count("done") == 3


def test_collective_timeout_settings(monkeypatch):
    from netcl import distributed
    for value, want in [("", distributed.DEFAULT_COLLECTIVE_TIMEOUT), ("7.5", 7.5),
                        ("0", None), ("none", None), ("inf", None)]:
        monkeypatch.setenv("NETCL_COLLECTIVE_TIMEOUT", value)
        assert distributed._timeout_from_env() == want
    monkeypatch.setenv("NETCL_COLLECTIVE_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="NETCL_COLLECTIVE_TIMEOUT"):
        distributed._timeout_from_env()
    for bad in (-1, "5", float("nan"), True):
        with pytest.raises(ValueError, match="collective_timeout"):
            distributed.initialize(collective_timeout=bad)
    assert not distributed.is_initialized()
