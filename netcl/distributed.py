"""Several processes, one job: pmap over the devices of every process, on MPI.

Start the job with MPI's launcher, one process per host (or per device group), and call
`initialize()` first in each; then `pmap` maps over the local devices of every process, each
process passing its own shards (the leading axis of its inputs is its local device count, as
in JAX's multi-process pmap) and getting its own shards of the outputs, and the collectives
span the processes: a psum adds up the local devices' values, then MPI's Allreduce combines
the processes' sums in pinned host memory, then every device uploads the result (one device
whose buffers are host memory, a CPU's: MPI reduces its buffers where they are; processes of
one host with one NVIDIA GPU each: through each other's GPU memory, with no MPI data
transfer, transforms/pmap_process_peer.py).

    pip install -e '.[pocl,distributed]'
    mpiexec -n 2 python -m mpi4py examples/train_data_parallel.py --distributed

(`python -m mpi4py` ends the whole job when one process raises; `initialize()` also installs
an excepthook that aborts the job, naming the process.)

Faults. Every collective netcl runs across the processes starts with an arrival round, a
non-blocking MPI Iallreduce of the collective's number and a hash of its description
(primitive, dtype, shapes) that the process polls:
- a process that does not arrive within the collective timeout (it hangs, loops, or left):
  the processes waiting ask the others which collective they wait in, print the collective
  and the processes that did not arrive, and abort the job (`initialize(collective_timeout=
  seconds)` or the environment variable NETCL_COLLECTIVE_TIMEOUT; 0 or "none": no limit;
  default DEFAULT_COLLECTIVE_TIMEOUT);
- processes at different collectives (a mismatched program: other shapes, dtypes or
  collectives) raise CollectiveMismatchError naming each process's collective, before any
  data moves;
- a process that ends its program (sys.exit, the end of the script) enters a last round,
  "the end of the program", so processes waiting in a collective learn of it at once
  (CollectiveMismatchError) and the job aborts. (A process leaving with os._exit or killed
  never finalizes MPI: mpich's mpiexec then kills the whole job at once, with no message
  from netcl, and after os._exit(0) with exit status 0; under `mpiexec
  -disable-auto-cleanup` the others' timeout names it instead.)

>>> netcl.distributed.initialize()
>>> netcl.process_index(), netcl.process_count(), netcl.device_count()
(0, 2, 2)
"""
import atexit
import hashlib
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass

import numpy as np

from .core.devices import devices as _local_all, set_process_devices

__all__ = ["initialize", "is_initialized", "process_index", "process_count", "process_indices",
           "devices", "local_devices", "local_device_count", "device_count",
           "broadcast_one_to_all", "barrier", "RemoteDevice", "CollectiveMismatchError",
           "DEFAULT_COLLECTIVE_TIMEOUT"]

# Seconds a process waits in a collective for the others before it aborts the job (as
# PyTorch's NCCL default): long enough for one process's first compilation or a solo
# evaluation, short against a job that hangs.
DEFAULT_COLLECTIVE_TIMEOUT = 600.0


@dataclass(frozen=True)
class World:
    """The job this process belongs to (after `initialize`)."""
    comm: object                # a Comm: the MPI communicator (a duplicate of COMM_WORLD)
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


def initialize(local_device_ids=None, collective_timeout=None):
    """Join the MPI job this process was started in (rank and size from MPI); idempotent.

    Processes that share a host split its GPUs (accelerators) between them, in contiguous
    runs by their rank on the host (2 processes on a 4-GPU host: GPUs 0-1 and 2-3);
    `local_device_ids` (indices into `netcl.local_devices()`) chooses instead. CPU devices
    are not split: each process has PoCL devices of its own.

    `collective_timeout`: the seconds a process waits in a collective for the others before
    it aborts the job naming the processes that did not arrive (0 or math.inf: no limit;
    None: the environment variable NETCL_COLLECTIVE_TIMEOUT, else
    DEFAULT_COLLECTIVE_TIMEOUT). A later call may change it.

    >>> netcl.distributed.initialize()      # under mpiexec -n 2 python -m mpi4py script.py
    """
    global _WORLD
    timeout = (_timeout_from_env() if collective_timeout is None else
               _checked_timeout(collective_timeout, "initialize: collective_timeout"))
    if _WORLD is not None:
        if collective_timeout is not None:
            _WORLD.comm.timeout = timeout
        return _WORLD
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("netcl.distributed.initialize needs mpi4py and an MPI library: "
                          "pip install 'netcl[distributed]' (mpi4py and mpich); import failed "
                          f"with: {e}") from None
    comm = Comm(MPI.COMM_WORLD.Dup(), timeout)
    index, count = comm.Get_rank(), comm.Get_size()
    chosen = _choose_devices(comm, MPI, local_device_ids)
    if chosen is not None:
        set_process_devices(chosen)
    local = chosen if chosen is not None else _local_all()
    for d in local:
        d.process_index = index     # (0 until now)
    described = comm.raw.allgather([(d.kind, d.name) for d in local])
    from .transforms import pmap_process_peer
    pmap_process_peer.join(comm, local)
    every = []
    for p, descs in enumerate(described):
        every += local if p == index else [RemoteDevice(p, i, kind, name)
                                           for i, (kind, name) in enumerate(descs)]
    _WORLD = World(comm, index, count, tuple(every))
    if count > 1:
        _abort_on_uncaught(comm, index)
        atexit.register(_at_exit)
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
    host = comm.raw.Split_type(MPI.COMM_TYPE_SHARED)
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


def _backend_kind(backend, where):
    """netcl's device kind for JAX's backend name (None: no filter; 'opencl': any), or a
    RuntimeError naming `where` for a name netcl does not know (as JAX's for an unknown
    backend)."""
    if backend is None:
        return None
    from .core.devices import _PLATFORM_KINDS
    name = str(backend).lower() if isinstance(backend, str) else None
    if name not in _PLATFORM_KINDS:
        raise RuntimeError(f"{where}: unknown backend {backend!r}; netcl's backends are "
                           f"{sorted(_PLATFORM_KINDS)}")
    return _PLATFORM_KINDS[name] or "any"


def _of_kind(found, kind):
    """The devices of `kind` (none: an empty list, as netcl.devices(kind) has always given;
    JAX raises for a backend it cannot start)."""
    return found if kind is None else [d for d in found if kind == "any" or d.kind == kind]


def process_index(backend=None):
    """This process's index in the job (0 without `initialize`); `backend` as JAX's (the
    index is the same for every backend).

    >>> netcl.process_index()
    0
    """
    _backend_kind(backend, "process_index")
    return _WORLD.index if _WORLD is not None else 0


def process_count(backend=None):
    """The number of processes in the job (1 without `initialize`); `backend` as JAX's.

    >>> netcl.process_count()
    1
    """
    _backend_kind(backend, "process_count")
    return _WORLD.count if _WORLD is not None else 1


def process_indices(backend=None):
    """Every process's index in the job, in order (as jax.process_indices).

    >>> netcl.process_indices()
    [0]
    """
    return list(range(process_count(backend)))


def devices(backend=None, *, kind=None):
    """Every device of the job: this process's netcl Devices and, after `initialize` in a
    job of several processes, a RemoteDevice for each device of the others (each with its
    `process_index`). `backend` ('cpu', 'gpu', 'cuda', 'rocm', ...: JAX's names) or netcl's
    `kind` ('cpu', 'gpu', 'accel', 'numpy') filters (a kind without devices: []).

    >>> netcl.devices()
    [Device(0: cpu 'pthread-...' ...)]
    >>> netcl.devices("cpu")
    """
    found = list(_WORLD.devices) if _WORLD is not None else _local_all()
    if kind is not None:
        return [d for d in found if d.kind == kind]
    # (a positional netcl kind that is no JAX backend name, 'accel': netcl's filter)
    if backend in ("accel",):
        return [d for d in found if d.kind == backend]
    return _of_kind(found, _backend_kind(backend, "devices"))


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of process `process_index` (default: this one). For this process
    without a backend, the ones pmap maps over by default (netcl.transforms.pmap's
    local_devices); `backend` (JAX's names) picks that kind's devices instead.

    >>> netcl.local_devices()
    >>> netcl.local_devices(backend="cpu")
    """
    from .core.devices import process_devices
    from .transforms.pmap import local_devices as pmap_local
    if host_id is not None:
        import warnings
        warnings.warn("local_devices: host_id is deprecated, use process_index",
                      DeprecationWarning, stacklevel=2)
        process_index = host_id if process_index is None else process_index
    kind = _backend_kind(backend, "local_devices")
    me = _WORLD.index if _WORLD is not None else 0
    if process_index is not None and process_index != me:
        if _WORLD is None or not 0 <= process_index < _WORLD.count:
            raise ValueError(f"local_devices: process_index {process_index!r} is not a "
                             f"process of this job (0 to {process_count() - 1})")
        found = [d for d in _WORLD.devices if d.process_index == process_index]
        return _of_kind(found, kind)
    if kind is None:
        return pmap_local()
    found = process_devices() or _local_all()
    return _of_kind(found, kind)


def local_device_count(backend=None):
    """len(local_devices(backend=backend)).

    >>> netcl.local_device_count()
    """
    return len(local_devices(backend=backend))


def device_count(backend=None):
    """The number of devices pmap maps over (the local ones, or with netcl.distributed
    those of every process); with `backend`, the number of devices of that kind in the job.

    >>> netcl.device_count()
    """
    from .transforms.pmap import device_count as pmap_count
    if backend is None:
        return pmap_count()
    return len(devices(backend))


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
    w.comm.arrive(f"broadcast_one_to_all of {len(leaves)} leaves")
    comm = w.comm.raw
    root = comm.allreduce(w.index if source else w.count, op=_mpi().MIN)
    if root == w.count:
        raise ValueError("broadcast_one_to_all: no process is the source")
    out = []
    for x in leaves:
        host = np.asarray(x, order="C")     # (ascontiguousarray makes 0-d 1-d)
        meta = comm.bcast((host.shape, host.dtype.str) if w.index == root else None, root)
        if w.index != root:
            host = np.empty(meta[0], np.dtype(meta[1]))
        comm.Bcast(host.reshape(-1).view(np.uint8), root)
        device = x.device if isinstance(x, Array) else None
        out.append(Array.from_numpy(device, host, getattr(x, "weak_type", False))
                   if device is not None else host)
    return tree_util.tree_unflatten(tree_def, out)


def barrier():
    """Wait until every process of the job gets here (at most the collective timeout)."""
    w = world()
    if w is not None:
        w.comm.Barrier(what="netcl.distributed.barrier()")


def _mpi():
    from mpi4py import MPI
    return MPI


# ---- faults: timeouts, mismatched programs, early exits ---------------------------------------

class CollectiveMismatchError(RuntimeError):
    """The processes of the job reached different collectives (other primitives, shapes or
    dtypes, or one process ended its program): raised in every process of the round, before
    any data moves."""


def _checked_timeout(t, name):
    if isinstance(t, bool) or not isinstance(t, (int, float)) or math.isnan(t) or t < 0:
        raise ValueError(f"{name} must be seconds (a number >= 0; 0 or math.inf: no limit), "
                         f"got {t!r}")
    return None if t == 0 or math.isinf(t) else float(t)


def _timeout_from_env():
    v = os.environ.get("NETCL_COLLECTIVE_TIMEOUT", "").strip().lower()
    if not v:
        return DEFAULT_COLLECTIVE_TIMEOUT
    if v in ("none", "off", "inf", "infinity"):
        return None
    try:
        t = float(v)
    except ValueError:
        t = -1.0
    if math.isnan(t) or t < 0:
        raise ValueError(f"NETCL_COLLECTIVE_TIMEOUT={v!r} must be seconds (a number >= 0), or "
                         "0 or 'none' for no limit")
    return _checked_timeout(t, "NETCL_COLLECTIVE_TIMEOUT")


_QUERY, _REPLY = 1, 2       # tags on Comm.ctl
_GRACE = 1.0                # seconds a timed-out process waits for the others' answers
_SPIN = 0.002               # seconds a wait polls flat out before it starts to sleep
_EXIT = "the end of its program (exit)"
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class _Round:
    """An arrival round under way: its MPI request, the values it reduces in place, and the
    collective's number and description."""
    request: object
    values: np.ndarray
    seq: int
    what: str


class Comm:
    """`World.comm`: the job's MPI communicator (`raw`, a duplicate of COMM_WORLD; what this
    class does not define is forwarded to it) with the collectives netcl runs across the
    processes guarded. `arrive(what)` is the arrival round each starts with: an Iallreduce
    (MIN) of [h, -h, vote], h a hash of the collective's number in the job and its
    description `what`, polled until every process arrived (min h == max h: all at the same
    collective) or the timeout passed (the job aborts, naming the processes that did not
    arrive). Its data then moves with blocking MPI calls: every process is there."""

    def __init__(self, raw, timeout):
        self.raw = raw
        self.ctl = raw.Dup()        # a timed-out process's questions, apart from the rounds
        self.index, self.count = raw.Get_rank(), raw.Get_size()
        self.timeout = timeout
        self.seq = 0                # the collectives this process started
        self.at = None              # (seq, what) of the round it waits in
        self._answers = []          # its answers' send requests
        self._pending = None        # the _Round that arrive_later started

    def __getattr__(self, name):
        return getattr(self.raw, name)

    # mpi4py's collectives that netcl uses, each after an arrival round (`what`: a
    # description for the messages; default: the calling function)
    def Barrier(self, what=None):
        self.arrive(what or _caller("Barrier"))

    def allgather(self, obj, what=None):
        self.arrive(what or _caller("allgather"))
        return self.raw.allgather(obj)

    def allreduce(self, obj, op=None, what=None):
        self.arrive(what or _caller("allreduce"))
        return self.raw.allreduce(obj, op=_mpi().SUM if op is None else op)

    def bcast(self, obj, root=0, what=None):
        self.arrive(what or _caller("bcast"))
        return self.raw.bcast(obj, root)

    def Bcast(self, buf, root=0, what=None):
        self.arrive(what or _caller("Bcast"))
        self.raw.Bcast(buf, root)

    def Allreduce(self, sendbuf, recvbuf, op=None, what=None):
        self.arrive(what or _caller("Allreduce"))
        self.raw.Allreduce(sendbuf, recvbuf, op=_mpi().SUM if op is None else op)

    def arrive(self, what, timeout=False, agree=True):
        """Wait until every process reaches its next collective, this one (`what`): at most
        `timeout` seconds (False: self.timeout; None: no limit), then print which processes
        did not arrive and abort the job; CollectiveMismatchError when they are at
        different collectives. Returns whether every process passed `agree` true: a choice
        the collective's MPI calls must make alike in every process (MPI's in-place
        reduction), voted in the same round."""
        self.settle()
        return self._finish(self._start(what, agree), timeout)

    def arrive_later(self, what):
        """Start the arrival round of collective `what` and return at once: a collective
        whose data moves without MPI (GPU memory shared by the processes) and must not make
        the host wait. The round is finished, with `arrive`'s checks and timeout, by this
        process's next collective (`settle`): a mismatch or a missing process is reported
        there, one collective late."""
        self.settle()
        self._pending = self._start(what, True)

    def settle(self):
        """Finish the arrival round that `arrive_later` started, if any."""
        pending, self._pending = self._pending, None
        if pending is not None:
            self._finish(pending, False)

    def _start(self, what, agree):
        MPI = _mpi()
        self.seq += 1
        h = int.from_bytes(hashlib.blake2b(f"{self.seq}\0{what}".encode(),
                                           digest_size=8).digest(), "little") >> 2
        both = np.array([h, -h, 1 if agree else 0], np.int64)
        return _Round(self.raw.Iallreduce(MPI.IN_PLACE, both, op=MPI.MIN), both, self.seq,
                      what)

    def _finish(self, round_, timeout):
        self.at = (round_.seq, round_.what)
        try:
            if not round_.request.Test():
                self._wait(round_.request, self.timeout if timeout is False else timeout)
        finally:
            self.at = None
        both = round_.values
        if both[0] != -both[1]:     # (every process learns it in the same round)
            every = self.raw.allgather((round_.seq, round_.what))
            raise CollectiveMismatchError(_mismatch(every))
        return bool(both[2])

    def _wait(self, request, timeout):
        start = time.monotonic()
        while not request.Test():
            now = time.monotonic()
            self._answer()
            if timeout is not None and now - start >= timeout:
                self._timed_out(now - start)
            if now - start > _SPIN:     # (the others are late: leave the cores to compute)
                time.sleep(min(0.002, (now - start) / 100))

    def _answer(self):
        """Tell processes that timed out which collective this one waits in."""
        MPI = _mpi()
        status = MPI.Status()
        while self.ctl.Iprobe(MPI.ANY_SOURCE, _QUERY, status):
            source = status.Get_source()
            self.ctl.recv(source=source, tag=_QUERY)
            self._answers.append(self.ctl.isend(self.at, dest=source, tag=_REPLY))
        if self._answers:
            self._answers = [r for r in self._answers if not r.Test()]

    def _timed_out(self, waited):
        """Ask the others which collective they wait in (those that do not answer within
        _GRACE seconds did not arrive), say so on stderr, and abort the job."""
        MPI = _mpi()
        seq, what = self.at
        others = [p for p in range(self.count) if p != self.index]
        asked = [self.ctl.isend(seq, dest=p, tag=_QUERY) for p in others]
        answers, status = {}, MPI.Status()
        end = time.monotonic() + _GRACE
        while len(answers) < len(others) and time.monotonic() < end:
            while self.ctl.Iprobe(MPI.ANY_SOURCE, _REPLY, status):
                source = status.Get_source()
                answers[source] = self.ctl.recv(source=source, tag=_REPLY)
            self._answer()
            time.sleep(0.001)
        missing = [p for p in others if p not in answers]
        elsewhere = {p: a for p, a in answers.items() if a is not None and tuple(a) != (seq, what)}
        lines = [f"netcl.distributed: process {self.index} waited {waited:.3g} s in collective "
                 f"#{seq} ({_short(what)}), and {_processes(missing)} did not arrive "
                 f"({'it hangs or loops' if len(missing) == 1 else 'they hang or loop'} outside "
                 "netcl's collectives, or left)"
                 + (f"; {_processes(sorted(answers))} wait in it" if answers else "")
                 + ". Aborting the job (the limit: netcl.distributed.initialize("
                 "collective_timeout=seconds) or NETCL_COLLECTIVE_TIMEOUT)."]
        lines += [f"  process {p} waits in collective #{a[0]} ({_short(a[1])})"
                  for p, a in sorted(elsewhere.items())]
        here = [f for f in traceback.extract_stack() if not f.filename.startswith(_PACKAGE)]
        if here:
            lines.append(f"  process {self.index} waits at " + "; ".join(
                f"{f.filename}:{f.lineno} ({f.name})" for f in here[-3:]))
        sys.stderr.write("\n".join(lines) + "\n")
        sys.stderr.flush()
        del asked
        self.raw.Abort(1)


def _mismatch(every):
    """The message of a round whose processes are at different collectives: every
    process's (collective number, description), the processes grouped."""
    groups = {}
    for p, at in enumerate(every):
        groups.setdefault(tuple(at), []).append(p)
    same_seq = len({seq for seq, _ in groups}) == 1
    parts = [f"{_processes(ps)}: " + ("" if same_seq else f"#{seq} ") + _short(what)
             for (seq, what), ps in groups.items()]
    where = f" (collective #{every[0][0]} of the job)" if same_seq else ""
    return ("netcl.distributed: the processes are at different collectives" + where + ": "
            + "; ".join(parts) + ". Every process must run the same collectives in the same "
            "order, on the same shapes and dtypes"
            + (", and end its program only after the others' last collective."
               if any(what == _EXIT for _, what in groups) else "."))


def _processes(ps):
    ps = list(ps)
    if len(ps) > 12:
        return f"processes {', '.join(map(str, ps[:12]))}, ... ({len(ps)} in all)"
    return f"process {ps[0]}" if len(ps) == 1 else f"processes {', '.join(map(str, ps))}"


def _short(what, limit=400):
    return what if len(what) <= limit else what[:limit - 20] + f"... ({len(what)} chars)"


# what the callers of Comm's collectives in netcl do there, for the messages
_CALLERS = {"Pmapped._global_size": "compiling for new arguments (the processes' mapped "
                                    "axis sizes)"}


def _caller(op):
    """A description of the collective `op` from the function that calls it (2 frames
    up): "pmap(f): compiling for new arguments (allgather in Pmapped._global_size)"."""
    f = sys._getframe(2)
    name = getattr(f.f_code, "co_qualname", f.f_code.co_name)
    owner = getattr(f.f_locals.get("self"), "_name", None)
    known = _CALLERS.get(name)
    return ((f"{owner}: " if isinstance(owner, str) else "") +
            (f"{known} ({op} in {name})" if known else f"{op} in {name}"))


def _at_exit():
    """A process that ends its program enters one last round: processes waiting in a
    collective it will never reach learn of it (CollectiveMismatchError) instead of
    waiting for it; then the job aborts. No time limit: the others may still work."""
    w = _WORLD
    if w is None or w.count == 1 or _mpi().Is_finalized():
        return
    try:
        w.comm.arrive(_EXIT, timeout=None)
    except CollectiveMismatchError as e:
        sys.stderr.write(f"{e}\nnetcl.distributed: process {w.index} ended its program while "
                         "other processes wait in a collective; aborting the job\n")
        sys.stderr.flush()
        w.comm.raw.Abort(1)

