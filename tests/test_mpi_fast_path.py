"""The all-reduce across processes on MPI where one PoCL device per process lets MPI reduce
the device's buffers where they are (transforms/pmap_host_memory.py): between two processes,
a sum of PAIRWISE_BYTES or more as point-to-point exchanges summed by NumPy
(`_pairwise_sum`), bit for bit MPI's own Allreduce, into another array or in place, in one
chunk or many, for every dtype MPI reduces; other process counts keep MPI's collectives; and
pmap's calls, whose collectives' routes are worked out once per compiled step. Each job is a
subprocess under mpiexec (the mpich wheel of the `test` extra)."""
import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

_BIN = os.path.join(os.path.dirname(sys.executable), "mpiexec")
MPIEXEC = _BIN if os.path.exists(_BIN) else shutil.which("mpiexec")
needs_mpi = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None or MPIEXEC is None,
                               reason="needs mpi4py and mpiexec (pip install "
                                      "'netcl[distributed]')")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PRELUDE = """
import warnings
import numpy as np
from mpi4py import MPI
from netcl.transforms import pmap_host_memory as hm
comm = MPI.COMM_WORLD
r, size = comm.Get_rank(), comm.Get_size()
warnings.simplefilter("error")      # (a sum that overflows stays silent, as MPI's)

def same_everywhere(a):
    every = comm.allgather(a.tobytes())
    assert all(b == every[0] for b in every), "the processes hold different bits"

def check_sum(x, ref):
    kept = x.copy()
    out = np.full_like(x, 7)
    hm.mpi_combine(comm, hm.psum_p, x, out)
    assert np.array_equal(out.view(np.uint8), ref.view(np.uint8)), (x.dtype, x.size)
    assert np.array_equal(x.view(np.uint8), kept.view(np.uint8))    # (the input kept)
    same_everywhere(out)
    hm.mpi_combine(comm, hm.psum_p, x)                              # in place
    assert np.array_equal(x.view(np.uint8), ref.view(np.uint8)), (x.dtype, x.size)
"""


def job(n_processes, code, timeout=300, **env_vars):
    env = dict(os.environ, NETCL_CPU_DEVICES="1", **env_vars)
    env.pop("POCL_DEVICES", None)
    return subprocess.run([MPIEXEC, "-n", str(n_processes), sys.executable, "-m", "mpi4py",
                           "-c", PRELUDE + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def ok(r):
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    return r.stdout


@needs_mpi
def test_two_processes_sum_pairwise_bit_for_bit_mpi_allreduce():
    """float32, float64, int32 and uint32 sums below PAIRWISE_BYTES (one Allreduce), at it,
    odd sizes above it (halves of unequal length), in one chunk and in many (a small chunk
    size): the same bits as MPI's Allreduce in both processes, into another array (the
    input kept) and in place; overflow to inf, NaN and integer wrap-around as MPI's, with no
    warning; pmax and pmin as MPI's."""
    out = ok(job(2, """
    rng = np.random.default_rng(r)
    for chunk in (hm.PAIRWISE_CHUNK_BYTES, 4096 + 8):
        hm.PAIRWISE_CHUNK_BYTES = chunk
        for dt in (np.float32, np.float64, np.int32, np.uint32):
            at = hm.PAIRWISE_BYTES // np.dtype(dt).itemsize
            for n in (1, 5, at - 1, at, at + 1, 3 * at + 7):
                x = (rng.standard_normal(n) * 1000).astype(dt)
                ref = np.empty_like(x)
                comm.Allreduce(x, ref, op=MPI.SUM)
                check_sum(x, ref)
    n = hm.PAIRWISE_BYTES // 4 + 3
    big = np.full(n, np.finfo(np.float32).max, np.float32)
    big[:5] = [np.nan, np.inf, -np.inf, 1, -np.inf if r else np.inf]
    ref = np.empty_like(big)
    comm.Allreduce(big, ref, op=MPI.SUM)
    check_sum(big, ref)
    assert np.isinf(ref[5:]).all() and np.isnan(ref[[0, 4]]).all() and ref[2] < 0
    wrap = np.full(n, np.iinfo(np.int32).max, np.int32)
    ref = np.empty_like(wrap)
    comm.Allreduce(wrap, ref, op=MPI.SUM)
    check_sum(wrap, ref)
    for prim, op in ((hm.pmax_p, MPI.MAX), (hm.pmin_p, MPI.MIN)):
        x = rng.standard_normal(n).astype(np.float32)
        ref, out = np.empty_like(x), np.empty_like(x)
        comm.Allreduce(x, ref, op=op)
        hm.mpi_combine(comm, prim, x, out)
        assert np.array_equal(out, ref)
    print("done", r)
    """))
    assert out.count("done") == 2, out


@needs_mpi
def test_three_processes_sum_by_mpi_collectives():
    """Among three processes a sum goes by MPI's collectives (the pairwise exchange is for
    two): into another array and in place, sizes below, at and above PAIRWISE_BYTES, the
    same bits in every process."""
    out = ok(job(3, """
    assert size == 3
    rng = np.random.default_rng(r)
    at = hm.PAIRWISE_BYTES // 4
    for n in (2, at, at + 5):
        x = rng.standard_normal(n).astype(np.float32)
        ref = np.empty_like(x)
        comm.Allreduce(x, ref, op=MPI.SUM)
        out = np.empty_like(x)
        hm.mpi_combine(comm, hm.psum_p, x, out)
        np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
        same_everywhere(out)
        hm.mpi_combine(comm, hm.psum_p, x)
        np.testing.assert_allclose(x, ref, rtol=1e-6, atol=1e-6)
        same_everywhere(x)
    print("done", r)
    """))
    assert out.count("done") == 3, out


@needs_mpi
def test_pmap_sums_across_two_processes_pairwise_kept_donated_and_chained():
    """pmap over one PoCL device per process: psums of PAIRWISE_BYTES and more (the
    pairwise exchange, reading and writing the device's buffers where they are) of an input
    kept, of a donated one, and a step whose collectives follow a segment and feed another
    (psum, then a segment, then a psum of several values: a packed bucket), against NumPy,
    call after call; each collective group's routes are worked out at the first call and
    kept."""
    out = ok(job(2, """
    import netcl, netcl.numpy as jnp
    from netcl import lax
    netcl.distributed.initialize()
    d = netcl.local_devices()[0]
    assert d.target.host_pointer_buffers
    calls = []
    pairwise = hm._pairwise_sum
    hm._pairwise_sum = lambda c, s, t: calls.append(s is t) or pairwise(c, s, t)
    mine = lambda a: np.asarray(a)[0]
    rng = np.random.default_rng(0)
    n = hm.PAIRWISE_BYTES // 4 + 9
    g = rng.standard_normal((2, n)).astype(np.float32)
    xs = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
    psum = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d")
    step = netcl.pmap(lambda v: (lambda s: lax.psum((s * 2, s[:3] - 1), "d"))(
        lax.psum(v, "d")), axis_name="d")
    for _ in range(3):
        calls.clear()
        np.testing.assert_array_equal(mine(psum(xs)), g[0] + g[1])
        np.testing.assert_array_equal(mine(xs), g[r])
        a, b = step(xs)
        total = g[0] + g[1]
        np.testing.assert_array_equal(mine(a), (total * 2) * 2)
        np.testing.assert_array_equal(mine(b), (total[:3] - 1) * 2)
        donated = netcl.device_put_sharded([jnp.asarray(g[r])], [d])
        out = netcl.pmap(lambda v: lax.psum(v, "d"), axis_name="d", donate_argnums=0)(donated)
        np.testing.assert_array_equal(mine(out), g[0] + g[1])
        assert donated.shards[0].is_deleted()
        # (kept input: into a new buffer; the step's second bucket and a donated input: in
        # place)
        assert calls == [False, False, True, True], calls
    (program,) = step.cache.values()
    routes = list(program.routes)
    assert len(routes) == 2 and all(x is not None for x in routes)
    step(xs)
    assert all(x is y for x, y in zip(program.routes, routes))
    print("done", r)
    """))
    assert out.count("done") == 2, out
