"""Several processes, one job: pmap over the devices of every process, on MPI.

Start the job with MPI's launcher, one process per host (or per device group), and call
`initialize()` first in each; then `pmap` maps over the local devices of every process, each
process passing its own shards (the leading axis of its inputs is its local device count, as
in JAX's multi-process pmap) and getting its own shards of the outputs, and the collectives
span the processes: a psum adds up the local devices' values, then MPI's Allreduce combines
the processes' sums in pinned host memory, then every device uploads the result.

    pip install -e '.[pocl,distributed]'
    mpiexec -n 2 python -m mpi4py examples/train_data_parallel.py --distributed

(`python -m mpi4py` ends the whole job when one process raises; `initialize()` also installs
an excepthook that aborts the job, naming the process.)

>>> netcl.distributed.initialize()
>>> netcl.process_index(), netcl.process_count(), netcl.device_count()
(0, 2, 2)
"""
import sys
from dataclasses import dataclass

import numpy as np

from .core.devices import devices as _local_all, set_process_devices

__all__ = ["initialize", "is_initialized", "process_index", "process_count", "devices",
           "broadcast_one_to_all", "barrier", "RemoteDevice"]


@dataclass(frozen=True)
class World:
    """The job this process belongs to (after `initialize`)."""
    comm: object                # the MPI communicator (a duplicate of COMM_WORLD)
    index: int                  # this process's rank
    count: int                  # the number of processes
    devices: tuple              # every process's devices, process by process


@dataclass(frozen=True)
class RemoteDevice:
    """A device of another process: what `netcl.devices()` lists for it (it runs nothing
    here)."""
    process_index: int
    index: int
    kind: str
    name: str

    def __repr__(self):
        return f"RemoteDevice(process {self.process_index}, {self.index}: {self.kind} '{self.name}')"


_WORLD = None


def initialize(local_device_ids=None):
    """Join the MPI job this process was started in (rank and size from MPI); idempotent.

    Processes that share a host split its GPUs (accelerators) between them, in contiguous
    runs by their rank on the host (2 processes on a 4-GPU host: GPUs 0-1 and 2-3);
    `local_device_ids` (indices into `netcl.local_devices()`) chooses instead. CPU devices
    are not split: each process has PoCL devices of its own.

    >>> netcl.distributed.initialize()      # under mpiexec -n 2 python -m mpi4py script.py
    """
    global _WORLD
    if _WORLD is not None:
        return _WORLD
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("netcl.distributed.initialize needs mpi4py and an MPI library: "
                          "pip install 'netcl[distributed]' (mpi4py and mpich); import failed "
                          f"with: {e}") from None
    comm = MPI.COMM_WORLD.Dup()
    index, count = comm.Get_rank(), comm.Get_size()
    chosen = _choose_devices(comm, MPI, local_device_ids)
    if chosen is not None:
        set_process_devices(chosen)
    local = chosen if chosen is not None else _local_all()
    for d in local:
        d.process_index = index     # (0 until now)
    described = comm.allgather([(d.kind, d.name) for d in local])
    every = []
    for p, descs in enumerate(described):
        every += local if p == index else [RemoteDevice(p, i, kind, name)
                                           for i, (kind, name) in enumerate(descs)]
    _WORLD = World(comm, index, count, tuple(every))
    if count > 1:
        _abort_on_uncaught(comm, index)
    return _WORLD


def _choose_devices(comm, MPI, ids):
    """This process's devices: `ids` of local_devices(), or its share of the host's GPUs
    when several processes run on the host; None: all of them."""
    from .transforms.pmap import local_devices
    mapped = local_devices()
    if ids is not None:
        ids = [ids] if isinstance(ids, int) else list(ids)
        bad = [i for i in ids if not isinstance(i, int) or not 0 <= i < len(mapped)]
        if bad or not ids:
            raise ValueError(f"initialize: local_device_ids={ids} must be indices into the "
                             f"{len(mapped)} local devices {mapped}")
        return [mapped[i] for i in ids]
    host = comm.Split_type(MPI.COMM_TYPE_SHARED)
    rank, size = host.Get_rank(), host.Get_size()
    host.Free()
    if size == 1 or not mapped or mapped[0].kind == "cpu" or len(mapped) < size:
        return None
    per = len(mapped) // size
    return mapped[rank * per:(rank + 1) * per]


def _abort_on_uncaught(comm, index):
    """An exception that ends one process ends the job (the others would wait forever in
    their next collective): print it, say which process, and abort."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        sys.stderr.write(f"netcl.distributed: process {index} raised {kind.__name__}; "
                         "aborting the job\n")
        sys.stderr.flush()
        comm.Abort(1)
    sys.excepthook = hook


def is_initialized():
    return _WORLD is not None


def world():
    """The World when this process is one of several; None otherwise."""
    return _WORLD if _WORLD is not None and _WORLD.count > 1 else None


def process_index():
    """This process's index in the job (0 without `initialize`)."""
    return _WORLD.index if _WORLD is not None else 0


def process_count():
    """The number of processes in the job (1 without `initialize`)."""
    return _WORLD.count if _WORLD is not None else 1


def devices(kind=None):
    """Every device of the job: this process's netcl Devices and, after `initialize` in a
    job of several processes, a RemoteDevice for each device of the others (each with its
    `process_index`); `kind` filters.

    >>> netcl.devices()
    [Device(0: cpu 'pthread-...' ...)]
    """
    found = list(_WORLD.devices) if _WORLD is not None else _local_all()
    return found if kind is None else [d for d in found if d.kind == kind]


def broadcast_one_to_all(tree, is_source=None):
    """Process 0's value of `tree` (a pytree of arrays) on every process, as
    jax.experimental.multihost_utils.broadcast_one_to_all: the initial parameters, say.

    >>> params = netcl.distributed.broadcast_one_to_all(params)
    """
    from . import tree_util
    from .core.array import Array
    w = world()
    leaves, tree_def = tree_util.tree_flatten(tree)
    if w is None:
        return tree
    source = (w.index == 0) if is_source is None else bool(is_source)
    root = w.comm.allreduce(w.index if source else w.count, op=_mpi().MIN)
    if root == w.count:
        raise ValueError("broadcast_one_to_all: no process is the source")
    out = []
    for x in leaves:
        host = np.asarray(x, order="C")     # (ascontiguousarray makes 0-d 1-d)
        meta = w.comm.bcast((host.shape, host.dtype.str) if w.index == root else None, root)
        if w.index != root:
            host = np.empty(meta[0], np.dtype(meta[1]))
        w.comm.Bcast(host.reshape(-1).view(np.uint8), root)
        device = x.device if isinstance(x, Array) else None
        out.append(Array.from_numpy(device, host, getattr(x, "weak_type", False))
                   if device is not None else host)
    return tree_util.tree_unflatten(tree_def, out)


def barrier():
    """Wait until every process of the job gets here."""
    w = world()
    if w is not None:
        w.comm.Barrier()


def _mpi():
    from mpi4py import MPI
    return MPI

