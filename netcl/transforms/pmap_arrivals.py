"""Arrival counts: how GPUs that read each other's memory order an all-reduce among
themselves, on the GPUs, with no event between their queues and no wait on the host.

Each GPU keeps an int in its own memory (its arrival count) that the others read over the
peer link. After a GPU's queue has packed its values into its send buffer, a one-work-item
kernel raises its count by one and spins until every other count is as high; the kernels
after it (the combine that reads every send buffer) run only then. A count seen raised
means that GPU's send buffer holds this all-reduce's values: the queue is in order, so
its pack was complete before its signal ran.

Two send buffers alternate. A GPU writes buffer b again two all-reduces later, after its
own signal of the all-reduce between, which passes only once every other GPU has raised its
count for that one, which each does after its combine that read buffer b. So nobody
overwrites what another still reads. Within one process the GPUs pick the buffer from
their own count (its parity: every count is the same between two all-reduces), in the
pack and combine kernels, so an all-reduce enqueues the same commands every time: a
pmapped step is replayed whole (pmap.py).

Used by one process driving several GPUs (`DeviceArrivals`, pmap_exchange) and by the
processes of one host, one GPU each (pmap_process_peer, which shares the counts through
file descriptors).
"""
from dataclasses import dataclass, field

import numpy as np
import pyopencl as cl

from ..core import commands, peer_memory
from ..core.kernels import kernel


def signal_source(count, own):
    """The arrival kernel of GPU `own` among `count` (one work-item; `c<i>` is GPU i's
    count): its own count goes up by one, then it spins until every count reaches it, or
    until `limit_ns` of the GPU's clock passed (0: no limit), where it gives up (across
    processes the hosts' arrival rounds report a process that does not arrive). The counts
    are volatile: read from memory each time, never from a cache."""
    params = ", ".join(f"__global volatile int* c{i}" for i in range(count))
    waits = "\n".join(f"  while (c{i}[0] - seq < 0) {{ if (netcl_late(start, limit_ns)) return; }}"
                       for i in range(count))
    return f"""
static inline ulong netcl_clock_ns(void) {{
  ulong t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}}
static inline int netcl_late(ulong start, ulong limit_ns) {{
  return limit_ns != 0 && netcl_clock_ns() - start > limit_ns;
}}
__kernel void netcl_arrive({params}, const ulong limit_ns) {{
  __global volatile int* own = c{own};
  const int seq = own[0] + 1;
  own[0] = seq;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  const ulong start = netcl_clock_ns();
{waits}
}}
"""


@dataclass
class DeviceArrivals:
    """The arrival counts of one process's GPUs (`devices`, which reach each other's
    memory: peer_memory.available): each GPU's count in its own memory, imported on every
    GPU (`counts`), each GPU's signal kernel with its arguments set (`signals`), and the
    send buffers of each all-reduce layout (`sends`)."""
    devices: tuple
    counts: list
    signals: list
    sends: dict = field(default_factory=dict)  # bytes of one value -> [PeerBuffer per GPU]

    def own_count(self, k):
        """GPU k's count as its kernels read it (pack and combine pick the send buffer by
        its parity)."""
        return self.counts[k].on(self.devices[k])

    def send_buffers(self, nbytes):
        """Each GPU's send buffer for all-reduces of `nbytes` per GPU: two halves of that
        size, in its own memory, imported on every GPU. One pair per size, kept: replayed
        steps hold the buffers, so none is ever replaced."""
        got = self.sends.get(nbytes)
        if got is None:
            got = self.sends[nbytes] = [peer_memory.PeerBuffer(d, self.devices, 2 * nbytes)
                                        for d in self.devices]
        return got

    def arrive(self):
        """Enqueue every GPU's signal, each after its queue's pack. Every signal is
        enqueued whatever happens: a GPU whose signal ran while another's was never
        enqueued would spin for ever."""
        pending = list(zip(self.devices, self.signals))
        try:
            while pending:
                d, signal = pending.pop(0)
                commands.launch(d.queue, signal, (1,), (1,))
                d.queue.flush()
        finally:
            for d, signal in pending:
                commands.launch(d.queue, signal, (1,), (1,))
                d.queue.flush()


_GROUPS = {}    # devices -> DeviceArrivals


def device_arrivals(devices):
    """The DeviceArrivals of `devices` (made once: counts zeroed on every GPU)."""
    key = tuple(devices)
    got = _GROUPS.get(key)
    if got is None:
        counts = [peer_memory.PeerBuffer(d, key, 4) for d in key]
        for d, c in zip(key, counts):
            cl.enqueue_fill_buffer(d.queue, c.on(d), np.int32(0), 0, c.nbytes)
        for d in key:
            d.queue.finish()    # (zero before any GPU reads another's)
        signals = []
        for k, d in enumerate(key):
            signal = kernel(d, signal_source(len(key), k), "netcl_arrive")
            for i, c in enumerate(counts):
                signal.set_arg(i, c.on(d))
            # (no time limit: the host enqueues every GPU's signal together, `arrive`)
            signal.set_arg(len(key), np.uint64(0))
            signals.append(signal)
        got = _GROUPS[key] = DeviceArrivals(key, counts, signals)
    return got
