"""Staging memory of pmap's collectives (pmap_exchange.py): per device, a send and a result
buffer that the device writes and the other devices read, in the device's own memory where
the others reach it (NVIDIA GPUs with peer access: core/peer_memory.py, copies over
NVLink), else in pinned host memory, mapped once, which every device reaches over its own
link. Each buffer keeps the events of the copies out of it since its last write, which the
next write waits for, so the host enqueues a whole step and never waits.
"""
import collections
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from ..core import peer_memory


@dataclass
class _Staging:
    """A buffer that one device writes (its send or result buffer) and the others read:
    `readers` are the copies out of it since its last write, which the next write waits
    for."""
    readers: list = field(default_factory=list, kw_only=True)
    writes: list = field(default_factory=list, kw_only=True)

    def claim(self):
        """The events a new write must wait for (the uploads of the previous contents)."""
        wait = self.readers
        _retire(self.readers + self.writes)
        self.readers, self.writes = [], []
        return wait or None


@dataclass
class _Pinned(_Staging):
    """Pinned host memory, mapped once: every device reaches it over its own link."""
    buffer: cl.Buffer
    host: np.ndarray                    # the mapped bytes

    def download(self, queue, start, x, x_start, nbytes, wait):
        """Copy `nbytes` from buffer `x` at byte `x_start` to bytes [start, start+nbytes)."""
        ev = cl.enqueue_copy(queue, self.host[start:start + nbytes], x, src_offset=x_start,
                             wait_for=wait, is_blocking=False)
        self.writes.append(ev)
        return ev

    def upload(self, queue, start, y, y_start, nbytes, written):
        """Copy bytes [start, start+nbytes) to buffer `y` at byte `y_start`, after the
        write `written` (None: written by the host)."""
        ev = cl.enqueue_copy(queue, y, self.host[start:start + nbytes], dst_offset=y_start,
                             wait_for=None if written is None else [written],
                             is_blocking=False)
        self.readers.append(ev)
        return ev


@dataclass
class Peer(_Staging):
    """Memory of the writing device that the other devices copy from over the peer link
    (core/peer_memory.py): the same protocol as _Pinned, each copy on its own device."""
    memory: peer_memory.PeerBuffer

    def download(self, queue, start, x, x_start, nbytes, wait):
        ev = cl.enqueue_copy(queue, self.memory.on(queue.device), x, byte_count=nbytes,
                             src_offset=x_start, dst_offset=start, wait_for=wait)
        self.writes.append(ev)
        return ev

    def upload(self, queue, start, y, y_start, nbytes, written):
        ev = cl.enqueue_copy(queue, y, self.memory.on(queue.device), byte_count=nbytes,
                             src_offset=start, dst_offset=y_start,
                             wait_for=None if written is None else [written])
        self.readers.append(ev)
        return ev


_PINNED = {}    # (device, role) -> _Pinned
_PEER = {}      # (device, role, devices) -> Peer

# Copies to and from host memory return PyOpenCL "nanny" events, whose deletion waits for the
# copy (they guard the host memory): events no longer needed wait here until complete.
_IN_FLIGHT = collections.deque()
_COMPLETE = cl.command_execution_status.COMPLETE


def _retire(events):
    while _IN_FLIGHT and _IN_FLIGHT[0].command_execution_status == _COMPLETE:
        _IN_FLIGHT.popleft()
    _IN_FLIGHT.extend(events)


def staging(device, role, nbytes, devices):
    """`device`'s send or result buffer for a collective among `devices`: in its own
    memory, which the others copy from directly, where they can (peer_memory.available),
    else pinned host memory."""
    if not peer_memory.available(devices):
        return pinned(device, role, nbytes)
    key = (device, role, tuple(devices))
    p = _PEER.get(key)
    if p is None or p.memory.nbytes < nbytes:
        size = max(nbytes, 1 << 20)
        if p is not None:
            _drain(p)
            p.memory.release()
            size = max(size, 2 * p.memory.nbytes)
        try:
            p = _PEER[key] = Peer(peer_memory.PeerBuffer(device, devices, size))
        except peer_memory.PeerMemoryError as e:    # (out of device memory, say)
            _PEER.pop(key, None)
            peer_memory.disable(devices, e)
            return pinned(device, role, nbytes)
    return p


def _drain(staging):
    """Wait for the copies that may still use a staging buffer about to be replaced."""
    if staging.readers or staging.writes:
        cl.wait_for_events(staging.readers + staging.writes)
        staging.readers, staging.writes = [], []


def pinned(device, role, nbytes):
    p = _PINNED.get((device, role))
    if p is None or p.host.nbytes < nbytes:
        if p is not None:
            _drain(p)
        size = max(nbytes, 2 * p.host.nbytes if p is not None else 0, 1 << 16)
        buf = cl.Buffer(device.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR,
                        size)
        host, _ = cl.enqueue_map_buffer(device.queue, buf, cl.map_flags.READ |
                                        cl.map_flags.WRITE, 0, (size,), np.uint8,
                                        is_blocking=True)
        p = _PINNED[(device, role)] = _Pinned(buf, host)
    return p
