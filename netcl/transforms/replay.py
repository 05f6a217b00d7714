"""A compiled call replayed as the OpenCL commands it enqueues.

A Plan (plan.py) runs a compiled call launcher by launcher: each makes its output arrays,
takes buffers from the pool, sets its kernel's arguments and enqueues. On a GPU that host
work, not the device, bounds small train steps, and pmap pays it once per device. After a
plan has run, a `Recorder` watches a call (between `start` and `stop`, commands.py shows
it every command the call's launchers enqueue on the device's queue) and keeps each
command: a kernel object of its own with every argument as set, the sizes, and which
arguments were the call's buffers: an argument's, or one the call took from the pool (a
temporary or an output), numbered as slots. `build` makes the `Replay`, whose `run`
enqueues the same commands with a later call's buffers in those slots: one `set_arg` per
changing buffer and one enqueue per command.

A recording is kept only where replaying it is the plan's call: every command went
through commands.py (a copy from or to the host, a fill, a wait on an event or a kernel
that does not track its arguments stops it), and a second recording of the next call gives
the same commands over the same slots, scalars and other buffers (a buffer made afresh
each call would differ). Calls whose arguments share buffers differently, or whose
donated arguments are held elsewhere, take the plan. `NETCL_REPLAY=0` turns replays off.

    >>> f = netcl.jit(lambda x: jnp.tanh(x) * 2)
    >>> for _ in range(4): y = f(x)        # (the 2nd and 3rd calls record; the 4th replays)
"""
from __future__ import annotations

import dataclasses
import os
import sys
import weakref
from dataclasses import dataclass

import pyopencl as cl

from ..core import commands
from ..core.array import Array
from ..core.devices import default_device
from ..core.kernels import TrackedKernel
from ..core.pool import Storage
from .plan import _slice_ends

ENABLED = os.environ.get("NETCL_REPLAY", "1") != "0"

# A replay keeps the temporaries of its call (those no output takes) while they come to at
# most OWN_BYTES and the device's replays keep at most DEVICE_BYTES in all (None: a 32nd
# and an 8th of the device's memory, at least 64 and 512 MB; a replay takes all of its
# temporaries at the start of a call, so keeping them raises no peak); otherwise it takes
# them from the pool each call, as the plan does.
OWN_BYTES = None
DEVICE_BYTES = None
_kept_bytes = {}        # id(pool) -> bytes the live replays keep


@dataclass(frozen=True)
class Command:
    """One recorded command: a kernel launch (`kernel`, a copy owned by the replay) or a
    buffer copy (`kernel` None; `copy` the keyword arguments); `slots`: (argument index,
    slot) of the call's buffers (for a copy: index 0 the destination, 1 the source);
    `values`: the kernel's other arguments as recorded (compared between recordings)."""
    kernel: object
    global_size: tuple
    local_size: tuple | None
    slots: tuple
    copy: dict | None = None
    values: tuple = ()
    changing: tuple = ()    # the slots of `slots` set on every call (not a kept temporary's)
    born: tuple = ()        # (slot, size class) of the call's own buffers first used here


@dataclass(frozen=True)
class OutputSpec:
    """How a replay makes one output: `argument` (that argument itself), `value` (the
    same array every call), or a new Array laid out as recorded over slot `slot`'s buffer
    or over `storage`, a buffer that is not the call's (a constant the plan returns a view
    of, a new view each call)."""
    argument: int | None = None
    value: object = None
    slot: int | None = None
    storage: object = None
    layout: tuple = ()      # shape, dtype, strides, offset, weak_type, contiguous, layout id


class Recorder:
    """What one call enqueues on one queue, while `commands.RECORDERS` shows it."""

    def __init__(self, device):
        self.device = device
        self.commands = []      # (kernel copy or None, original kernel, sizes, arguments / copy)
        self.temporaries = {}   # id(buffer) -> (size class, buffer) of Storages made here
        self.failed = None

    def launch(self, kernel, global_size, local_size, args, kwargs):
        if self.failed:
            return
        if args or any(v is not None and v is not False for v in kwargs.values()):
            return self.fail("a launch with an offset or events to wait for")
        if not isinstance(kernel, TrackedKernel):
            return self.fail(f"kernel {kernel.function_name} does not track its arguments")
        copy = _copy_kernel(kernel)
        if copy is None:
            return self.fail(f"kernel {kernel.function_name} has arguments never set")
        self.commands.append((copy, kernel, tuple(global_size),
                              None if local_size is None else tuple(local_size),
                              dict(kernel.arguments)))

    def copy(self, dest, src, kwargs):
        if self.failed:
            return
        if not (isinstance(dest, cl.MemoryObjectHolder) and isinstance(src, cl.MemoryObjectHolder)) \
                or kwargs.get("wait_for") or kwargs.get("is_blocking"):
            return self.fail("a copy from or to the host")
        self.commands.append((None, None, (), None, {0: dest, 1: src, "copy": dict(kwargs)}))

    def made(self, storage):
        if storage.pool is self.device.pool:
            self.temporaries[id(storage.buf)] = (storage.size, storage.buf)

    def fail(self, why):
        self.failed = why


def _copy_kernel(kernel):
    """A new kernel object of `kernel`'s program and function with every argument as
    `kernel` has it (its `arguments`), or None where one was never set through it."""
    arguments = kernel.arguments
    n = kernel.num_args
    if any(i not in arguments for i in range(n)):
        return None
    copy = cl.Kernel(kernel.program, kernel.function_name)
    scalar_dtypes = kernel.scalar_arg_dtypes
    if scalar_dtypes:
        copy.set_scalar_arg_dtypes(scalar_dtypes)
    copy.set_args(*(arguments[i] for i in range(n)))
    return copy


# ---- watching a call -----------------------------------------------------------------------

_watching = []          # the recorders whose device's Storages are reported


def _unrecordable(name, real):
    """PyOpenCL's `name` while recorders watch: a command no recorder saw (one that
    `commands.launch` or `commands.copy` passes on was seen) stops every recording."""
    def refuse(queue, *args, **kwargs):
        if not commands.SHOWN:
            for recorder in commands.RECORDERS.values():
                recorder.fail(f"pyopencl.{name}")
        return real(queue, *args, **kwargs)
    return refuse


_REFUSED = ("enqueue_nd_range_kernel", "enqueue_copy", "enqueue_fill_buffer",
            "enqueue_barrier", "enqueue_marker")


def watched(device):
    """Whether a recorder watches `device`'s queue (None: the default device's): a call
    recorded whole (a pmapped step) runs its compiled parts' plans, which it records."""
    if not commands.RECORDERS:
        return False
    return id((device or default_device()).queue) in commands.RECORDERS


def start(recorder):
    """Begin reporting the device's commands (and its new Storages) to `recorder`."""
    queue = recorder.device.queue
    commands.RECORDERS[id(queue)] = recorder
    if not _watching:
        _watching.append(({n: getattr(cl, n) for n in _REFUSED}, Storage.__init__))
        real_init = Storage.__init__

        def init(self, pool, nbytes, size_class=None):
            real_init(self, pool, nbytes, size_class)
            for rec in commands.RECORDERS.values():
                rec.made(self)
        Storage.__init__ = init
        for n in _REFUSED:
            setattr(cl, n, _unrecordable(n, getattr(cl, n)))
    else:
        _watching.append(None)


def stop(recorder):
    commands.RECORDERS.pop(id(recorder.device.queue), None)
    saved = _watching.pop()
    if saved is not None:
        refused, init = saved
        Storage.__init__ = init
        for n, f in refused.items():
            setattr(cl, n, f)


# ---- from a recording to a replay --------------------------------------------------------------

def build(recorder, args, outputs, donated):
    """The Replay of `recorder`'s call on `args` that returned `outputs`, or None where it
    cannot be replayed. `donated`: argument positions whose buffers an output may take."""
    if recorder.failed or not recorder.commands:
        return None
    slot_of, sizes = {}, []
    for j, a in enumerate(args):
        slot_of.setdefault(id(a._buf), j)
    n_args = len(args)

    def slot(buf):
        key = id(buf)
        s = slot_of.get(key)
        if s is None and key in recorder.temporaries:
            s = slot_of[key] = n_args + len(sizes)
            sizes.append(recorder.temporaries[key][0])
        return s
    cmds, held = [], []
    for copy_k, original, gsize, lsize, arguments in recorder.commands:
        copy = arguments.pop("copy", None)
        dyn = tuple((i, s) for i, v in sorted(arguments.items())
                    if isinstance(v, cl.MemoryObjectHolder) and (s := slot(v)) is not None)
        if copy is not None:
            if len(dyn) != 2:
                return None     # (a copy between buffers the call does not own)
            cmds.append(Command(None, (), None, dyn, copy))
        else:
            # other arguments, buffers included (by identity: a buffer left from an earlier
            # call would differ between recordings), are the copy's own; the replay holds
            # the buffers
            dynamic = {i for i, _ in dyn}
            values = tuple((i, _value(v)) for i, v in sorted(arguments.items())
                           if i not in dynamic)
            held.extend(v for i, v in arguments.items()
                        if i not in dynamic and isinstance(v, cl.MemoryObjectHolder))
            cmds.append(Command(copy_k, gsize, lsize, dyn, None, values))
    outs, taken = [], set()
    for o in outputs:
        j = next((j for j, a in enumerate(args) if o is a), None)
        if j is not None:
            outs.append(OutputSpec(argument=j))
            continue
        s = slot_of.get(id(o._buf)) if isinstance(o, Array) else None
        if s is None:
            if isinstance(o, Array) and id(o._buf) in recorder.temporaries:
                s = slot(o._buf)
            elif isinstance(o, Array) and isinstance(o._storage, Storage) and \
                    o._storage.buf is o._buf:
                outs.append(OutputSpec(storage=o._storage, layout=_layout(o)))
                continue
            else:
                outs.append(OutputSpec(value=o))
                continue
        if s < n_args:
            taken.add(s)
        outs.append(OutputSpec(slot=s, layout=_layout(o)))
    # (an output over an argument that was not donated is a view of it: no check)
    sharing = tuple((j, slot_of[id(a._buf)]) for j, a in enumerate(args)
                    if slot_of[id(a._buf)] != j)
    # temporaries no output keeps are the replay's own, made once: each call's commands
    # run after the previous call's on the queue, which orders every reuse
    returned = {o.slot for o in outs if o.slot is not None}
    pool = recorder.device.pool
    own = sum(size for k, size in enumerate(sizes) if n_args + k not in returned)
    own_budget, device_budget = _budgets(recorder.device)
    keep = own <= own_budget and _kept_bytes.get(id(pool), 0) + own <= device_budget
    kept = tuple(Storage(pool, size, size) if keep and n_args + k not in returned else None
                 for k, size in enumerate(sizes))
    cmds = [_set_kept(c, kept, n_args) for c in cmds]
    cmds, unused = _births(cmds, kept, sizes, n_args)
    replay = Replay(recorder.device, tuple(cmds), n_args, tuple(sizes), tuple(outs),
                    sharing, len({id(a._buf) for a in args}),
                    tuple(sorted(taken & set(donated))), kept, tuple(held), unused)
    if keep and own:
        _kept_bytes[id(pool)] = _kept_bytes.get(id(pool), 0) + own
        weakref.finalize(replay, _release, id(pool), own)
    return replay


def _budgets(device):
    """(bytes one replay keeps at most, bytes the device's replays keep at most)."""
    memory = device.memory
    return (max(64 << 20, memory // 32) if OWN_BYTES is None else OWN_BYTES,
            max(512 << 20, memory // 8) if DEVICE_BYTES is None else DEVICE_BYTES)


def _set_kept(command, kept, n_args):
    """`command` with the buffers of the kept temporaries (the same every call) set in its
    kernel once, here, and its other slots `changing`."""
    changing = []
    for i, s in command.slots:
        st = kept[s - n_args] if s >= n_args else None
        if st is None or command.kernel is None:
            changing.append((i, s))
        else:
            command.kernel.set_arg(i, st.buf)
    return dataclasses.replace(command, changing=tuple(changing))


def _births(cmds, kept, sizes, n_args):
    """`cmds` with the buffers each call takes from the pool (temporaries not kept) taken
    at their first command (`born`: the first launch goes out before the rest are taken),
    and those no command uses (empty outputs)."""
    pending = {n_args + k for k, st in enumerate(kept) if st is None}
    out = []
    for c in cmds:
        born = tuple((s, sizes[s - n_args]) for s in dict.fromkeys(s for _, s in c.slots)
                     if s in pending)
        pending.difference_update(s for s, _ in born)
        out.append(dataclasses.replace(c, born=born) if born else c)
    return out, tuple((s, sizes[s - n_args]) for s in sorted(pending))


def _layout(x):
    return (x.shape, x.dtype, x.strides, x.offset, x.weak_type, x._contig, x._lid)


def _release(pool_id, nbytes):
    _kept_bytes[pool_id] -= nbytes


def _value(v):
    """A kernel argument (not one of the call's buffers), comparable between recordings."""
    if isinstance(v, cl.MemoryObjectHolder):
        return ("buffer", id(v))
    if isinstance(v, cl.LocalMemory):
        return ("local", v.size)
    try:
        return (type(v).__name__, bytes(memoryview(v)) if hasattr(v, "dtype") else v)
    except TypeError:
        return (type(v).__name__, id(v))


def signature(replay):
    """What two recordings of one plan must share to be replayed."""
    return (tuple((c.kernel is None, c.global_size, c.local_size, c.slots, c.values,
                   None if c.kernel is None else c.kernel.function_name,
                   tuple(sorted(c.copy.items())) if c.copy else None)
                  for c in replay.commands),
            replay.sizes, replay.sharing, replay.taken,
            # (a storage itself, not its id: the signature keeps it from being reused)
            tuple((o.argument, o.slot, o.layout, id(o.value), o.storage)
                  for o in replay.outputs))


@dataclass(frozen=True)
class Replay:
    """A recorded call: `commands` over slots 0..n_args-1 (the arguments' buffers) and
    `sizes` (buffers of those size classes taken from the pool each call)."""
    device: object
    commands: tuple
    n_args: int
    sizes: tuple
    outputs: tuple
    sharing: tuple          # (position, earlier position) of arguments sharing a buffer
    n_buffers: int          # distinct argument buffers
    taken: tuple            # donated arguments whose buffers outputs take
    kept: tuple = ()        # per size, the replay's own Storage, or None: one per call
    held: tuple = ()        # buffers the commands' copies read as recorded
    unused: tuple = ()      # (slot, size class) of buffers taken each call that no command uses

    def accepts(self, args):
        """Whether `args` share buffers as the recorded call's did and the donated
        arguments whose buffers outputs take are held by nothing else (plan._donor)."""
        if len({id(a._buf) for a in args}) != self.n_buffers:
            return False
        for j, first in self.sharing:
            if args[j]._buf is not args[first]._buf:
                return False
        for j in self.taken:
            if sys.getrefcount(args[j]._storage) != 2:      # (as plan._donor)
                return False
        return True

    def run(self, args):
        """Enqueue the commands on `args`; the list of outputs."""
        return drain(self.in_slices(None)(args))

    def in_slices(self, sizes):
        """A generator function of `args`: enqueues the commands, yielding after slices of
        `sizes[0]`, `sizes[1]`, ... commands (the last repeating; None: one slice), and
        returns the outputs (see Plan.in_slices)."""
        queue, pool, launch, copy = (self.device.queue, self.device.pool, commands.launch,
                                     commands.copy)
        cmds, outputs, device = self.commands, self.outputs, self.device
        ends = _ends(sizes, len(cmds))

        def run(args):
            storages = [a._storage for a in args] + list(self.kept)
            bufs = [a._buf for a in args] + [None if st is None else st.buf
                                             for st in self.kept]
            for k, c in enumerate(cmds):
                for s, size in c.born:
                    st = storages[s] = Storage(pool, size, size)
                    bufs[s] = st.buf
                if c.kernel is not None:
                    kern = c.kernel
                    for i, s in c.changing:
                        kern.set_arg(i, bufs[s])
                    launch(queue, kern, c.global_size, c.local_size)
                else:
                    (_, d), (_, s) = c.slots
                    copy(queue, bufs[d], bufs[s], **c.copy)
                if k + 1 in ends:
                    yield
            for s, size in self.unused:
                storages[s] = Storage(pool, size, size)
            outs = []
            for o in outputs:
                if o.argument is not None:
                    outs.append(args[o.argument])
                elif o.slot is None and o.storage is None:
                    outs.append(o.value)
                else:
                    shape, dtype, strides, offset, weak, contiguous, lid = o.layout
                    st = storages[o.slot] if o.storage is None else o.storage
                    outs.append(Array(device, st.buf, st, shape, dtype, strides, offset,
                                      weak, contiguous, lid))
            return outs
        return run


def drain(gen):
    """Run generator `gen` to its end; what it returns."""
    try:
        while True:
            next(gen)
    except StopIteration as done:
        return done.value


def _ends(sizes, n):
    """The command counts after which a slice ends (see plan._slice_ends)."""
    return frozenset() if sizes is None else _slice_ends(tuple(sizes), n)
