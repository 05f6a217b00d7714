"""All-reduce between the processes of one host through each other's GPU memory: the path
that makes one process per GPU (as PyTorch's DDP runs) as fast as the GPUs' links allow.

One process driving several NVIDIA GPUs is bound by its host thread: the driver enqueues one
kernel at a time whatever the thread (README, "pmap"), so a step over N GPUs costs N times
one GPU's enqueueing. With one process per GPU each host thread feeds its own GPU, and the
all-reduce, which MPI would run through host memory, runs through GPU memory instead:

- every process allocates its send buffers in its GPU's memory (core/peer_memory.py,
  CUDA's shareable allocations), and passes a file descriptor of each to every other
  process of the host over a Unix socket (SCM_RIGHTS; abstract socket names, so nothing
  is left in the file system); each process imports the others' descriptors as OpenCL
  buffers of its own device;
- an all-reduce packs the process's values into its send buffer; then a one-work-item
  kernel raises the process's arrival count (an int in its GPU's memory, which the others
  read too) and spins until every process's count is as high, and a kernel combines all the
  send buffers, read where they are over NVLink, in process order, so every process
  computes the same sums: one round, no copy, no MPI data transfer, and the host never
  waits: it enqueues the rest of the step at once. Its arrival round (which checks that the
  processes run the same collective, and bounds the wait) runs beside, finished at the
  process's next collective (distributed.Comm.arrive_later).
- All-reduces of more than TWO_ROUND_BYTES take two rounds, a reduce-scatter into each
  process's result buffer (shared too) and an all-gather out of them, with an arrival
  between: each GPU reads 2(P-1)/P of the value instead of P-1 times it.
- Two send buffers alternate (by the count of all-reduces): a process writes buffer b
  again two all-reduces later, after its queue's wait for the one between, which every
  other process raises only after its own queue's combine that read buffer b. So no
  process overwrites what another still reads (the result buffers alike).

`join` decides it when the process joins the job (distributed.initialize), every process
alike: one device per process, every process on this host (the same kernel boot id), every
device able to share its memory (peer_memory.pci_address) and every pair of them peer
access; elsewhere the all-reduces take the MPI path (pmap_exchange).
"""
import os
import socket
import struct
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from ..core import commands, peer_memory
from ..core.array import Array
from ..core.kernels import compute_ctype, grid_1d, kernel, load, storage_ctype, store
from .pmap_arrivals import signal_source
from .pmap_pack import pack_into

# The smallest send buffer (bytes): buckets of gradients of small models share one size.
_MIN_BYTES = 1 << 20


@dataclass
class _SharedBuffer:
    """One of a process's shared buffers (a send or a result buffer of one parity): its own
    memory (`own`, `nbytes`) and, per process in rank order, the cl.Buffer through which
    this process's device reads that process's buffer of the same role and parity (`views`;
    `imported`: the others')."""
    own: peer_memory.PeerBuffer
    views: list
    imported: list
    nbytes: int

    def release(self):
        for view in self.imported:
            view.release()
        self.own.release()


@dataclass
class _ProcessPeers:
    """The path's state in one process: its device, the fd mailbox, its shared buffers
    (two send buffers, and two result buffers for large all-reduces: made when first
    used), the reduce-scatter kernels, the number of all-reduces run, and the arrival
    counts with the kernel that raises this process's and waits for the others'
    (`_Arrivals`, made at the first all-reduce)."""
    device: object
    mailbox: "_Mailbox"
    buffers: dict = field(default_factory=dict)     # (role, parity) -> _SharedBuffer
    kernels: dict = field(default_factory=dict)     # (prim, dtype, start, m) -> kernel
    calls: int = 0
    arrivals: "_Arrivals" = None


@dataclass
class _Arrivals:
    """Each process's arrival count, an int in its own GPU memory (`own`) that the others
    read (`imported`), and the one-work-item kernel that counts this process's arrival
    and spins until every process's count is as high (`signal`, its arguments set once)."""
    own: peer_memory.PeerBuffer
    imported: list
    signal: cl.Kernel


_STATE = {}     # id(world's Comm) -> _ProcessPeers, or False where the path is not taken


def join(comm, devices):
    """Decide, in every process of the job together (distributed.initialize calls this
    in each, after choosing its devices), whether its all-reduces run through GPU memory,
    and open this process's mailbox if so. Uses MPI directly (two rounds): this is part
    of joining the job, not a collective of the program."""
    address = peer_memory.pci_address(devices[0]) if len(devices) == 1 else None
    every = comm.raw.allgather((_boot_id(), address, os.getpid()))
    boots = {boot for boot, _, _ in every}
    addresses = [a for _, a, _ in every]
    ok = comm.count > 1 and len(boots) == 1 and None not in boots and \
        None not in addresses and peer_memory.peer_access(addresses)
    mailbox = _Mailbox(comm, f"netcl-{every[0][2]}") if ok else None
    # (every process must take the same path: a vote, which also makes sure that every
    # mailbox is open before any process sends)
    if comm.raw.allreduce(int(ok), op=_mpi().MIN):
        _STATE[id(comm)] = _ProcessPeers(devices[0], mailbox)
    else:
        _STATE[id(comm)] = False
        if mailbox is not None:
            mailbox.close()


def available(world) -> bool:
    """Whether all-reduces among the processes of `world` run through GPU memory (decided
    by `join`)."""
    return bool(_STATE.get(id(world.comm)))


def _boot_id():
    """This host's kernel boot id: processes that read the same one share a host."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


def all_reduce(prim, dtype, eqns, sizes, env, world, describe):
    """The all-reduce (prim: psum, pmax or pmin) of the inputs of `eqns` (one dtype, element
    counts `sizes`) of this process's one device with every other process's, as one flat
    buffer through the send buffers; the outputs go to `env[0]`. `describe`: the
    collective's description for the arrival round."""
    from .pmap_exchange import _scatter_kernels
    state = _STATE[id(world.comm)]
    d, n, isz = state.device, sum(sizes), dtype.itemsize
    if n * isz > TWO_ROUND_BYTES:
        return _two_rounds(state, prim, dtype, eqns, n, env, world, describe)
    outs = [Array.empty(d, tuple(e.outputs[0].aval.shape), dtype, e.outputs[0].aval.weak_type)
            for e in eqns]
    if n:
        parity = state.calls % 2
        state.calls += 1
        send = _shared_buffer(state, world, ("send", parity), n * isz)
        if state.arrivals is None:
            state.arrivals = _share_arrivals(state, world)
        # (after this queue's last wait for the others: none still reads this buffer)
        pack_into(send.own.on(d), [env[0][e.inputs[0].id] for e in eqns], dtype)
        world.comm.arrive_later(describe)
        commands.launch(d.queue, state.arrivals.signal, (1,), (1,))
        for kern, first, stop, total, _ in _scatter_kernels(prim, d, world.index, dtype,
                                                            world.count, tuple(sizes),
                                                            peer=True):
            for i, buf in enumerate(send.views):
                kern.set_arg(i, buf)
            for j, o in enumerate(outs[first:stop]):
                kern.set_arg(world.count + j, o._buf)
            g, lws = grid_1d(d, total)
            commands.launch(d.queue, kern, g, lws)
        d.queue.flush()
    for e, o in zip(eqns, outs):
        env[0][e.outputs[0].id] = o


def _two_rounds(state, prim, dtype, eqns, n, env, world, describe):
    """A large all-reduce as a reduce-scatter and an all-gather, which read 2(P-1)/P of the
    value per GPU instead of the one round's P-1: each process packs its values into its
    send buffer; after the arrival, process k combines part k of every send buffer into
    part k of its result buffer; after a second arrival, every process copies part i of
    process i's result buffer, for every i, into its output (P copies over NVLink). The
    result buffers alternate as the send buffers do, and for the same reason."""
    from .pmap_exchange import _parts, _unpack
    d, isz, k = state.device, dtype.itemsize, world.index
    parity = state.calls % 2
    state.calls += 1
    send = _shared_buffer(state, world, ("send", parity), n * isz)
    result = _shared_buffer(state, world, ("result", parity), n * isz)
    if state.arrivals is None:
        state.arrivals = _share_arrivals(state, world)
    pack_into(send.own.on(d), [env[0][e.inputs[0].id] for e in eqns], dtype)
    world.comm.arrive_later(describe)
    signal = state.arrivals.signal
    commands.launch(d.queue, signal, (1,), (1,))
    parts = _parts(n, world.count)
    a, b = parts[k]
    if b > a:
        reduce_part = _reduce_part_kernel(state, prim, dtype, world.count, a, b - a)
        for i, buf in enumerate(send.views):
            reduce_part.set_arg(i, buf)
        reduce_part.set_arg(world.count, result.own.on(d))
        g, lws = grid_1d(d, b - a)
        commands.launch(d.queue, reduce_part, g, lws)
    commands.launch(d.queue, signal, (1,), (1,))
    flat = Array.empty(d, (n,), dtype)
    for i, (a, b) in enumerate(parts):
        if b > a:
            cl.enqueue_copy(d.queue, flat._buf, result.views[i], byte_count=(b - a) * isz,
                            src_offset=a * isz, dst_offset=a * isz)
    d.queue.flush()
    _unpack(flat, [e.outputs[0] for e in eqns], env[0])


# All-reduces of more bytes than this per process take two rounds (`_two_rounds`).
TWO_ROUND_BYTES = 4 << 20


def _reduce_part_kernel(state, prim, dtype, count, start, m):
    """The kernel that writes y[start + i] = op(v0[start + i], ..., v<count-1>[start + i])
    for i < m (op: the collective's combination, in process order), its scalars set once
    (one kernel per part layout)."""
    from .pmap_exchange import _template
    key = (prim, dtype, start, m)
    k = state.kernels.get(key)
    if k is None:
        T, C = storage_ctype(dtype), compute_ctype(dtype)
        template = _template(prim, dtype)
        name = f"netcl_{prim.name}_reduce_part_{count}"
        lines = [f"{C} a = {load(dtype, 'v0', 'f')};", f"{C} b;"]
        for i in range(1, count):
            lines += [f"b = {load(dtype, f'v{i}', 'f')};", f"a = {template.format('a', 'b')};"]
        lines.append(store(dtype, "y", "f", "a"))
        params = ", ".join([f"__global const {T}* v{i}" for i in range(count)] +
                           [f"__global {T}* y", "const long start", "const long m"])
        source = (f"__kernel void {name}({params}) {{\n  const long i = get_global_id(0);\n"
                  "  if (i >= m) return;\n  const long f = start + i;\n  "
                  + "\n  ".join(lines) + "\n}\n")
        k = state.kernels[key] = kernel(state.device, source, name)
        k.set_arg(count + 1, np.int64(start))
        k.set_arg(count + 2, np.int64(m))
    return k


def _shared_buffer(state, world, key, nbytes):
    """This process's shared buffer `key` ((role, parity)), at least `nbytes`, with its
    views of the others': grown by every process together (a new allocation shared
    through the mailbox) where it is smaller."""
    buf = state.buffers.get(key)
    if buf is not None and buf.nbytes >= nbytes:
        return buf
    size = max(nbytes, _MIN_BYTES, 2 * buf.nbytes if buf is not None else 0)
    d = state.device
    # The others' kernels may still read the old buffers: every process finishes its queue
    # before the round, so after it none is read.
    d.queue.finish()
    world.comm.arrive(f"pmap: sharing GPU memory for all-reduces ({size} bytes)")
    if buf is not None:
        buf.release()
    own = peer_memory.PeerBuffer(d, [d], size)
    shared = state.mailbox.share(world.comm, own.export, own.nbytes)
    views = []
    for p in range(world.count):
        if p == world.index:
            views.append(own.on(d))
        else:
            fd, their_bytes = shared[p]
            views.append(peer_memory.import_buffer(d, fd, their_bytes))
    buf = state.buffers[key] = _SharedBuffer(
        own, views, [v for p, v in enumerate(views) if p != world.index], own.nbytes)
    return buf


def _share_arrivals(state, world):
    """Every process's arrival count (zeroed) in its GPU's memory, shared with the others,
    and this process's signal kernel over them."""
    d = state.device
    own = peer_memory.PeerBuffer(d, [d], 4)
    cl.enqueue_fill_buffer(d.queue, own.on(d), np.int32(0), 0, own.nbytes)
    d.queue.finish()        # (zero before any other process can read it)
    shared = state.mailbox.share(world.comm, own.export, own.nbytes)
    imported = {p: peer_memory.import_buffer(d, fd, nbytes) for p, (fd, nbytes) in
                shared.items()}
    counts = [own.on(d) if p == world.index else imported[p] for p in range(world.count)]
    signal = kernel(d, signal_source(world.count, world.index), "netcl_arrive")
    for i, buf in enumerate(counts):
        signal.set_arg(i, buf)
    limit = world.comm.timeout
    signal.set_arg(world.count, np.uint64(0 if limit is None else limit * 1e9))
    return _Arrivals(own, list(imported.values()), signal)


class _Mailbox:
    """This process's end of the descriptor exchange: an abstract Unix socket, named from
    the job (process 0's pid: unique on the host while it runs) and the rank, that every
    other process of the host connects to."""

    def __init__(self, comm, job):
        self.names = [f"\0{job}-{p}".encode() for p in range(comm.count)]
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.names[comm.index])
        self.server.listen(2 * comm.count)

    def close(self):
        self.server.close()

    def share(self, comm, export, nbytes):
        """{process: (descriptor, bytes)} of every other process, after sending each a new
        descriptor from `export()` with this process's `nbytes`. Sends do not wait for the
        receiver (the socket's backlog holds them), so every process sends, then
        receives; a last round keeps one exchange's messages from meeting the next's."""
        header = struct.Struct("<qq")
        for p in range(comm.count):
            if p == comm.index:
                continue
            fd = export()
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                    s.connect(self.names[p])
                    socket.send_fds(s, [header.pack(comm.index, nbytes)], [fd])
            finally:
                os.close(fd)
        got = {}
        self.server.settimeout(comm.timeout)
        while len(got) < comm.count - 1:
            try:
                conn, _ = self.server.accept()
            except socket.timeout:
                missing = [p for p in range(comm.count) if p != comm.index and p not in got]
                raise peer_memory.PeerMemoryError(
                    f"pmap: process {comm.index} waited {comm.timeout} s for the GPU memory "
                    f"of processes {missing}") from None
            with conn:
                msg, fds, _, _ = socket.recv_fds(conn, header.size, 1)
            rank, size = header.unpack(msg)
            got[rank] = (fds[0], size)
        comm.Barrier(what="pmap: GPU memory shared")
        return got


def _mpi():
    from mpi4py import MPI
    return MPI
