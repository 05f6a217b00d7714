"""A per-device pool of OpenCL buffers in size buckets.

Eager code allocates an output for every op; creating and releasing cl.Buffers each time
costs driver calls and fragments device memory, so freed buffers wait in a bucket for the
next request of the same size class. The cached bytes are capped (`NETCL_MAX_CACHED_GB`;
default 2, and a quarter of the memory of a GPU); past the cap a freed buffer is released
to the driver.
"""
import os

import pyopencl as cl

_MIN_BYTES = 64  # OpenCL forbids zero-size buffers; tiny arrays share one size class.


def bucket_size(nbytes):
    """Round up to a size class: powers of two below 4 KiB, then quarter steps of 2^k."""
    if nbytes <= _MIN_BYTES:
        return _MIN_BYTES
    if nbytes <= 4096:
        return 1 << (nbytes - 1).bit_length()
    step = 1 << ((nbytes - 1).bit_length() - 4)  # 8 classes per doubling: <12.5% waste
    return (nbytes + step - 1) // step * step


class BufferPool:
    """Hands out cl.Buffers by size class; `release` puts them back for reuse."""

    def __init__(self, context, max_cached_bytes=None):
        if max_cached_bytes is None:
            max_cached_bytes = int(float(os.environ.get("NETCL_MAX_CACHED_GB", "2")) * 2**30)
        self.context = context
        self.max_cached_bytes = max_cached_bytes
        self._free = {}  # size class -> [cl.Buffer]
        self.hits = 0
        self.misses = 0
        self.bytes_in_use = 0
        self.bytes_cached = 0
        self.peak_bytes_in_use = 0

    def allocate(self, nbytes):
        """Return (buffer, size_class). The buffer holds at least nbytes."""
        return self.allocate_class(bucket_size(nbytes))

    def allocate_class(self, size):
        """allocate() for a known size class (launchers compute it once)."""
        free = self._free.get(size)
        buf = None
        if free:
            try:  # list.pop is atomic: safe against a loader thread allocating too
                buf = free.pop()
            except IndexError:
                pass
        if buf is not None:
            self.hits += 1
            self.bytes_cached -= size
        else:
            self.misses += 1
            try:
                buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size)
            except cl.Error:
                # Out of device memory: give the cached buffers back and try once more.
                self.empty()
                buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size)
        self.bytes_in_use += size
        if self.bytes_in_use > self.peak_bytes_in_use:
            self.peak_bytes_in_use = self.bytes_in_use
        return buf, size

    def release(self, buf, size):
        self.bytes_in_use -= size
        if self.bytes_cached + size <= self.max_cached_bytes:
            self._free.setdefault(size, []).append(buf)
            self.bytes_cached += size
        else:
            buf.release()

    def empty(self):
        """Release every cached buffer to the driver."""
        for bufs in self._free.values():
            for b in bufs:
                b.release()
        self._free.clear()
        self.bytes_cached = 0

    def stats(self):
        return {"hits": self.hits, "misses": self.misses, "bytes_in_use": self.bytes_in_use,
                "bytes_cached": self.bytes_cached, "peak_bytes_in_use": self.peak_bytes_in_use}


class Storage:
    """Owns one pooled buffer; when the last Array viewing it dies, the buffer goes back."""
    __slots__ = ("buf", "size", "pool", "__weakref__")

    def __init__(self, pool, nbytes, size_class=None):
        self.pool = pool
        if size_class is None:
            self.buf, self.size = pool.allocate(nbytes)
        else:
            self.buf, self.size = pool.allocate_class(size_class)

    def __del__(self):
        try:
            self.pool.release(self.buf, self.size)
        except Exception:  # interpreter shutdown: the driver frees everything anyway
            pass


def output_storage(pool, nbytes, size_class, offers):
    """A Storage for a kernel's output: one of `offers` of the same size class, taken off
    the list, else a new one from `pool`.

    `offers` are the Storages of inputs that die at this launch and that the kernel reads
    only at the index where it writes the output, before writing it (elementwise kernels
    and epilogues: see jit's in-place steps). The output then overwrites the input in
    place, and its cache lines are already there: adam's new moments written over the old
    ones read no line from memory first (W4 on PoCL, parameters and optimizer state
    donated: about 0.2 of a 10.3 ms step)."""
    for i, st in enumerate(offers):
        if st.size == size_class:
            return offers.pop(i)
    return Storage(pool, nbytes, size_class)
