"""A pmapped call replayed whole: on each device, the commands of every segment and every
collective of one call, as one replay (replay.py).

A pmapped call runs its segments (each a compiled executable per device) and the
collectives between them; each executable replays its own commands, but the host still
walks the call: the collectives' Python, every segment's arguments and outputs, a pool
buffer for every value passed between them. On GPUs that host time bounds a data-parallel
step. Where the collectives are commands too (all-reduces ordered by the GPUs' arrival
counts, pmap_arrivals: no event, no copy from the host), a call is one straight sequence
of commands per device, which a recorder can watch from the first segment to the last:
the values between segments become slots, kept by the replay like any temporary.

Recorded like an executable's call (the 2nd and 3rd calls, which must agree); the
segments' executables run their plans while the whole call is recorded (replay.watched).
A call whose collectives enqueue anything else (copies through host memory, events, the
host path) is not replayed whole: its segments replay one by one, as before.
"""
import importlib
import signal
import threading
from dataclasses import dataclass, field

from . import replay

_devices = importlib.import_module("netcl.core.devices")   # (the module: its LOCK)


@dataclass
class CallReplays:
    """One compiled pmapped function's replays (a Replay per device, once two recordings
    agree), the recordings still to make, and the last recording's signatures."""
    replays: list = None
    recordings_left: int = 2
    signatures: list = None
    calls: int = field(default=0)


def run(state, inputs, devices, run_call, alternate, slices, replayable):
    """The per-device outputs of a call on `inputs` (per device, its argument arrays):
    replayed where `state` has replays that accept them, else `run_call()` (the call
    segment by segment), recorded on the calls after the first. `alternate(generators,
    devices)` runs per-device generators of commands in `slices`, the devices in turn
    (pmap.py). `replayable()`, asked after the first call: whether the call enqueues
    nothing but kernels (pmap_exchange.only_commands)."""
    replays = state.replays
    if replays is not None:
        if all(rp.accepts(args) for rp, args in zip(replays, inputs)):
            with _uninterrupted():
                return alternate([rp.in_slices(slices)(args)
                                  for rp, args in zip(replays, inputs)], devices)
        return run_call()
    state.calls += 1
    if state.calls == 1 or not state.recordings_left:
        return run_call()
    if state.calls == 2 and not (replay.ENABLED and replayable()):
        state.recordings_left = 0       # (its segments replay one by one)
        return run_call()
    recorders = [replay.Recorder(d) for d in devices]
    # (the lock for the whole call: another thread's commands on these queues would be
    # recorded as the call's)
    with _devices.LOCK:
        for r in recorders:
            replay.start(r)
        try:
            rows = run_call()
        finally:
            for r in reversed(recorders):
                replay.stop(r)
    state.recordings_left -= 1
    built = [replay.build(r, args, row, ()) for r, args, row in zip(recorders, inputs, rows)]
    if any(b is None for b in built):
        state.recordings_left = 0       # (its segments replay one by one)
        return rows
    signatures = [replay.signature(b) for b in built]
    if signatures == state.signatures:
        state.replays, state.recordings_left = built, 0
    state.signatures = signatures
    return rows


class _uninterrupted:
    """Hold Ctrl-C (SIGINT) back while a replayed call is enqueued on the main thread: a
    device whose all-reduce was enqueued spins until every other device's is, so a call
    must not stop halfway through its devices."""

    def __enter__(self):
        self.before = None
        if hasattr(signal, "pthread_sigmask") and \
                threading.current_thread() is threading.main_thread():
            self.before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def __exit__(self, *exc):
        if self.before is not None:     # (the mask as it was: SIGINT may have been blocked)
            signal.pthread_sigmask(signal.SIG_SETMASK, self.before)
