"""The all-reduce across processes (netcl.distributed) of one device per process whose buffers
are host memory: MPI reads and writes the device's buffers where they are, with no staging
copy (pmap_exchange stages through pinned memory elsewhere).

- Buffers over host memory netcl allocated (Target.host_pointer_buffers: PoCL's CPU
  devices; the buffer pool makes every buffer so there): the host waits for the device's
  queue, then MPI reads the input's bytes and writes the output's, or reduces the input in
  place where nothing reads it afterwards. No command is enqueued: at small sizes the
  device's commands (a few tens of microseconds each with a process per core) cost more
  than MPI's reduction.
- Other buffers that are host memory (Target.host_memory_buffers): the input and a new
  output are mapped, reduced by MPI, and unmapped (one map and one unmap in place), from
  MAPPED_BYTES on; below it pinned memory's two copies cost less.
- Between two processes a sum (psum, pmean, a gradient bucket) of PAIRWISE_BYTES or more is
  a reduce-scatter and an all-gather of MPI point-to-point exchanges, summed by NumPy where
  the values are (`_pairwise_sum`), where MPI's own collectives make more copies.

Every process arrives at the collective (its arrival round, after its device has finished
the input) before any data moves, and votes on MPI's in-place reduction, which is a choice
of all processes or none: one that keeps its input (or stages through pinned memory) makes
every process reduce into a new buffer.
"""
import numpy as np
import pyopencl as cl

from ..core.array import Array
from ..core.pool import host_array
from ..primitives.collectives import pmax_p, pmin_p, psum_p

# From this many bytes, where the device's buffers are host memory but not netcl's own, MPI
# reads the input and writes a new output through maps: four commands on the device's queue
# (two maps, two unmaps), where staging through pinned memory enqueues two copies, which
# cost more from here. An input the result may overwrite is reduced where it is at every
# size (one map, one unmap).
MAPPED_BYTES = 512 << 10


def addressable(device, x):
    """Whether the host reads and writes x's buffer where it is (direct_all_reduce)."""
    return device.target.host_pointer_buffers and x._buf in device.pool.host_memory


def direct_all_reduce(world, prim, dtype, device, x, off, n, in_place, what):
    """A (n,) array: the processes' combination (prim) of x's n elements from element `off`,
    with MPI reading x's bytes and writing a new output's where they are, in the host
    memory under the buffers (`addressable`). `in_place`: the result may overwrite x, which
    MPI then reduces where it is, if every process may (the arrival round's vote). The host
    waits for the device's queue: x's value is complete, and no command enqueued before
    still uses the output's buffer (a pooled buffer may have been another array's); those
    enqueued afterwards read what MPI wrote (Target.host_pointer_buffers says why both
    hold)."""
    q = device.queue
    out = None if in_place else Array.empty(device, (n,), dtype)
    q.finish()
    # (after the wait: a process whose device hangs does not arrive either)
    everywhere = world.comm.arrive(what, agree=in_place)
    if out is None and not everywhere:          # (another process keeps its input)
        out = Array.empty(device, (n,), dtype)
        q.finish()
    mpi_combine(world.comm.raw, prim, host_array(x, off, n),
                None if everywhere else host_array(out, 0, n))
    return out if out is not None else Array(device, x._buf, x._storage, (n,), dtype, (1,),
                                             off)


def mapped_all_reduce(world, prim, dtype, device, x, off, n, in_place, what):
    """A (n,) array: the processes' combination (prim) of x's n elements from element `off`,
    on a device whose buffers are host memory: x and a new output are mapped (views of the
    device's own bytes), MPI reads one and writes the other, and they are unmapped, where
    the pinned path copies x to pinned memory and back. `in_place`: the result may
    overwrite x, which MPI then reduces where it is, if every process may (the arrival
    round's vote). The host waits for x, then for every process to arrive at `what`."""
    q, isz = device.queue, dtype.itemsize

    def mapped(buf, start, flags, blocking=False):
        return cl.enqueue_map_buffer(q, buf, flags, start * isz, (n,), dtype,
                                     is_blocking=blocking)
    out = None if in_place else Array.empty(device, (n,), dtype)
    maps = [mapped(x._buf, off, cl.map_flags.READ | (cl.map_flags.WRITE if in_place else 0))]
    if out is not None:
        maps.append(mapped(out._buf, 0, cl.map_flags.WRITE_INVALIDATE_REGION))
    try:
        q.flush()
        cl.wait_for_events([ev for _, ev in maps])
        # (after the wait: a process whose device hangs does not arrive either)
        everywhere = world.comm.arrive(what, agree=in_place)
        if out is None and not everywhere:      # (another process keeps its input)
            out = Array.empty(device, (n,), dtype)
            maps.append(mapped(out._buf, 0, cl.map_flags.WRITE_INVALIDATE_REGION, True))
        mpi_combine(world.comm.raw, prim, maps[0][0], None if everywhere else maps[1][0])
    finally:
        for host, _ in maps:
            host.base.release(q)
    return out if out is not None else Array(device, x._buf, x._storage, (n,), dtype, (1,),
                                             off)


def mpi_combine(comm, prim, src, dst=None):
    """dst = the combination (prim) over the processes of src (host arrays of one size; dst
    None: into src; every process passes one or every process none). Between two
    processes a sum of PAIRWISE_BYTES or more goes by `_pairwise_sum`, a smaller value by
    one Allreduce. Among more processes, into another array: MPI's reduce-scatter then its
    all-gather in place (an Allreduce into another buffer first copies the whole input
    there, MPICH's, where the reduce-scatter reads each part where it is); in place: MPI's
    Allreduce."""
    from mpi4py import MPI
    op = {psum_p: MPI.SUM, pmax_p: MPI.MAX, pmin_p: MPI.MIN}[prim]
    count, n = comm.Get_size(), src.size
    if count == 2 and prim is psum_p and src.nbytes >= PAIRWISE_BYTES:
        _pairwise_sum(comm, src, src if dst is None else dst)
        return
    block = n // count
    if dst is None or not block or (count == 2 and src.nbytes < PAIRWISE_BYTES):
        comm.Allreduce(MPI.IN_PLACE if dst is None else src, src if dst is None else dst,
                       op=op)
        return
    rank, whole = comm.Get_rank(), block * count
    comm.Reduce_scatter_block(src[:whole], dst[rank * block:(rank + 1) * block], op=op)
    comm.Allgather(MPI.IN_PLACE, dst[:whole])
    if whole < n:
        comm.Allreduce(src[whole:], dst[whole:], op=op)


# From this many bytes a sum between two processes goes by `_pairwise_sum`; below it MPI's
# Allreduce, one message each way, costs less than two exchanges.
PAIRWISE_BYTES = 128 << 10

# The bytes of the other process's values one exchange step of `_pairwise_sum` receives: a
# scratch buffer of this size, kept, stays in the core's cache between the receive and the
# sum that reads it.
PAIRWISE_CHUNK_BYTES = 1 << 20

_SCRATCH = []       # the scratch buffer of `_pairwise_sum` (uint8), made at its first use

_TAG = 0x6E63       # the tag of `_pairwise_sum`'s messages ("nc")


def _pairwise_sum(comm, src, dst):
    """dst = src + the other process's src, between the two processes of `comm` (dst may
    be src): process p owns half p of the elements; each sends the other the other's half
    of src, in chunks, receiving its own half's values into a scratch buffer it keeps and
    summing them with its own into dst (NumPy), then each sends the other its half of dst.
    Each half is summed once, by its owner, so both processes hold the same bits (as MPI's
    sum: addition is commutative). MPI's reduce-scatter (MPICH's) copies a process's own
    part into the output and receives into a buffer it allocates per call before it sums;
    here the sum reads both values where they are and writes the output once."""
    rank, n = comm.Get_rank(), src.size
    half = n // 2
    parts = [(0, half), (half, n)]
    (a, b), (c, d) = parts[rank], parts[1 - rank]
    peer = 1 - rank
    if not _SCRATCH or _SCRATCH[0].nbytes < PAIRWISE_CHUNK_BYTES:
        _SCRATCH[:] = [np.empty(PAIRWISE_CHUNK_BYTES, np.uint8)]
    step = PAIRWISE_CHUNK_BYTES // src.itemsize
    scratch = _SCRATCH[0][:step * src.itemsize].view(src.dtype)
    # (the same number of steps in both processes: the longer half's; a step may move
    # nothing one way)
    with np.errstate(over="ignore", invalid="ignore"):   # (inf and NaN as MPI's: silent)
        for s in range(0, max(b - a, d - c), step):
            got = scratch[:max(0, min(step, b - a - s))]
            comm.Sendrecv(src[min(c + s, d):min(c + s + step, d)], peer, _TAG, got, peer,
                          _TAG)
            if got.size:
                np.add(src[a + s:a + s + got.size], got, out=dst[a + s:a + s + got.size])
    comm.Sendrecv(dst[a:b], peer, _TAG, dst[c:d], peer, _TAG)
