"""A per-device pool of OpenCL buffers in size buckets.

Eager code allocates an output for every op; creating and releasing cl.Buffers each time
costs driver calls and fragments device memory, so freed buffers wait in a bucket for the
next request of the same size class. The cached bytes are capped (`NETCL_MAX_CACHED_GB`;
default 2, and a quarter of the memory of a GPU); past the cap a freed buffer is released
to the driver.

On targets whose buffers may be host memory netcl allocates (Target.host_pointer_buffers:
PoCL's CPU devices), every buffer is made over page-aligned NumPy memory
(CL_MEM_USE_HOST_PTR), so that the host reads and writes a buffer where it is
(`host_array`): MPI reduces device buffers across processes with no map or copy.
"""
import collections
import importlib
import mmap

import numpy as np
import pyopencl as cl

try:
    import resource
except ImportError:     # (not on Windows: no address-space limit to respect there)
    resource = None

# the module (netcl.core's `devices` is the function): its LOCK is looked up at each use
_devices = importlib.import_module(".devices", __package__)

_MIN_BYTES = 64  # OpenCL forbids zero-size buffers; tiny arrays share one size class.

# Errors of a buffer creation that mean "no memory" (others are bugs and pass through).
_OUT_OF_MEMORY = {cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, cl.status_code.OUT_OF_RESOURCES,
                  cl.status_code.OUT_OF_HOST_MEMORY}


# Alignment of the host memory under a buffer: a page from a page's size on, else 128 bytes
# (PoCL's CL_DEVICE_MEM_BASE_ADDR_ALIGN, 1024 bits; NumPy aligns its arrays to 64).
_PAGE = 4096
_SMALL_ALIGN = 128

_USE_HOST_PTR = cl.mem_flags.USE_HOST_PTR
_COMPLETE = cl.command_execution_status.COMPLETE


def _host_memory(size):
    """`size` bytes of NumPy memory (uint8), aligned for a buffer over it."""
    align = _PAGE if size >= _PAGE else _SMALL_ALIGN
    raw = np.empty(size + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + size]


def host_array(x, offset, n):
    """A NumPy view of `n` elements of Array x's buffer from element `offset`, over the
    buffer's own bytes where the pool made it over host memory
    (Target.host_pointer_buffers), else None. Reading it is valid once the commands writing
    those elements have completed, and what the host writes there is what commands
    enqueued afterwards read (the Target's field says why, and on which devices)."""
    pool = x.device.pool
    memory = pool.host_memory.get(x._buf) if pool is not None else None
    if memory is None:
        return None
    isz = x.dtype.itemsize
    return memory[offset * isz:(offset + n) * isz].view(x.dtype)


def nbytes_str(n):
    return f"{n} bytes ({n / 2**30:.2f} GiB)" if n >= 2**30 else \
        f"{n} bytes ({n / 2**20:.1f} MiB)"


def _host_headroom_ok(nbytes):
    """On a CPU device buffers are host memory, allocated by PoCL at first use, and a failed
    allocation there crashes the process. Under an address-space limit (RLIMIT_AS), reserve
    the range once (mmap, untouched: nothing is committed) to learn whether it still fits."""
    if resource is None:
        return True
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return True
    try:
        # (with room for the allocator's and the kernel launch's own needs)
        probe = mmap.mmap(-1, nbytes + (64 << 20))
    except (OSError, OverflowError, ValueError):
        return False
    probe.close()
    return True


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

    def __init__(self, context, max_cached_bytes=None, device=None):
        if max_cached_bytes is None:
            max_cached_bytes = _devices.max_cached_bytes_from_env()
        self.context = context
        self.device = device     # (a netcl Device: its limits and name in errors)
        self.max_cached_bytes = max_cached_bytes
        self._free = {}  # size class -> [cl.Buffer]
        # (marker, buffer) of buffers over NumPy memory given back to the driver: the
        # buffer object holds that memory until the commands enqueued before the marker,
        # the last that may use it, have completed (the driver keeps the memory it allocated
        # itself alive as long as commands use it, not memory it was given)
        self._retiring = collections.deque()
        self.host_memory = {}       # buffer made over NumPy memory -> that memory (uint8)
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
        with _devices.LOCK:
            free = self._free.get(size)
            if free:
                buf = free.pop()
                self.hits += 1
                self.bytes_cached -= size
            else:
                self.misses += 1
                buf = self._new_buffer(size)
            self.bytes_in_use += size
            if self.bytes_in_use > self.peak_bytes_in_use:
                self.peak_bytes_in_use = self.bytes_in_use
            return buf, size

    def _new_buffer(self, size):
        """A new cl.Buffer of `size` bytes; MemoryError (after the cached buffers went back
        to the driver) where the device or the host has no room for it."""
        dev = self.device
        caps = dev.capabilities if dev is not None else None
        if caps is not None and caps.max_mem_alloc_size and size > caps.max_mem_alloc_size:
            raise MemoryError(self._no_room(size, "the device's largest buffer "
                                            f"(max_mem_alloc_size) is "
                                            f"{nbytes_str(caps.max_mem_alloc_size)}"))
        # (CPU targets: buffers are host memory, which PoCL takes at first use)
        if dev is not None and dev.target.host_cpu and not _host_headroom_ok(size):
            self.empty()
            if not _host_headroom_ok(size):
                soft, _ = resource.getrlimit(resource.RLIMIT_AS)
                raise MemoryError(self._no_room(size, "the process's address-space limit "
                                                f"(RLIMIT_AS) is {nbytes_str(soft)}"))
        host = dev is not None and dev.target.host_pointer_buffers
        if host:
            self._forget_retired()
        try:
            return self._create(size, host)
        except MemoryError:
            pass
        except cl.Error as e:
            if _status(e) not in _OUT_OF_MEMORY:
                raise
        self.empty()    # give the cached buffers back and try once more
        if host:        # (their memory is freed once the commands using them are done)
            dev.queue.finish()
            self._forget_retired()
        try:
            return self._create(size, host)
        except MemoryError:
            raise MemoryError(self._no_room(size, "the host has no room for it")) from None
        except cl.Error as e:
            if _status(e) not in _OUT_OF_MEMORY:
                raise
            raise MemoryError(self._no_room(size, f"the driver said {e}")) from None

    def _create(self, size, host):
        if not host:
            return cl.Buffer(self.context, cl.mem_flags.READ_WRITE, size)
        memory = _host_memory(size)
        buf = cl.Buffer(self.context, cl.mem_flags.READ_WRITE | _USE_HOST_PTR, hostbuf=memory)
        self.host_memory[buf] = memory
        return buf

    def _drop(self, bufs):
        """Give `bufs` back to the driver. NumPy memory under one is freed once the commands
        enqueued so far on this device's queue (the only queue that uses the pool's
        buffers) are done."""
        held = [b for b in bufs if b in self.host_memory] if self.host_memory else ()
        if held:
            with _devices.LOCK:
                for b in held:
                    del self.host_memory[b]
        for b in bufs:
            b.release()
        if held:
            marker = cl.enqueue_marker(self.device.queue)
            with _devices.LOCK:
                self._forget_retired()
                self._retiring.extend((marker, b) for b in held)

    def _forget_retired(self):
        retiring = self._retiring
        while retiring and retiring[0][0].command_execution_status == _COMPLETE:
            retiring.popleft()

    def _no_room(self, size, why):
        where = self.device.name if self.device is not None else "the device"
        total = (f"; device memory {nbytes_str(self.device.capabilities.global_mem_size)}"
                 if self.device is not None else "")
        return (f"netcl: out of memory on {where}: a buffer of {nbytes_str(size)} does not "
                f"fit ({why}; {nbytes_str(self.bytes_in_use)} in use by live arrays{total})")

    def release(self, buf, size):
        """Put a buffer back (any thread: the last reference to an array may die anywhere;
        Storage.__del__ writes this out)."""
        lock = _devices.LOCK
        lock.acquire()
        try:
            self.bytes_in_use -= size
            if self.bytes_cached + size <= self.max_cached_bytes:
                self._free.setdefault(size, []).append(buf)
                self.bytes_cached += size
                return
        finally:
            lock.release()
        self._drop([buf])

    def empty(self):
        """Release every cached buffer to the driver."""
        with _devices.LOCK:
            free, self._free = self._free, {}
            self.bytes_cached = 0
        self._drop([b for bufs in free.values() for b in bufs])

    def stats(self):
        with _devices.LOCK:
            return {"hits": self.hits, "misses": self.misses, "bytes_in_use": self.bytes_in_use,
                    "bytes_cached": self.bytes_cached,
                    "peak_bytes_in_use": self.peak_bytes_in_use}


def _status(error):
    try:
        return error.code
    except Exception:
        return None


class Storage:
    """Owns one pooled buffer; when the last Array viewing it dies, the buffer goes back."""
    __slots__ = ("buf", "size", "pool", "__weakref__")

    # Every eager op makes one Storage and drops one: the pool's hit path (allocate_class)
    # and its release are written out here (fewer calls, which pays for part of the lock a
    # release takes). Storages are made by launchers, which run under devices.LOCK (eager
    # dispatch and jit calls hold it), so the hit path does not take it again.

    def __init__(self, pool, nbytes, size_class=None):
        self.pool = pool
        size = self.size = bucket_size(nbytes) if size_class is None else size_class
        free = pool._free.get(size)
        if free:
            try:
                self.buf = free.pop()
            except IndexError:      # (a caller without the lock raced another thread)
                self.buf = pool.allocate_class(size)[0]
                return
            pool.hits += 1
            pool.bytes_cached -= size
            used = pool.bytes_in_use = pool.bytes_in_use + size
            if used > pool.peak_bytes_in_use:
                pool.peak_bytes_in_use = used
        else:
            self.buf = pool.allocate_class(size)[0]

    def __del__(self):
        try:
            # (an __init__ that raised, out of memory, left no buffer: nothing to give back)
            buf, pool, size = self.buf, self.pool, self.size
            lock = _devices.LOCK
            lock.acquire()
            try:
                pool.bytes_in_use -= size
                if pool.bytes_cached + size <= pool.max_cached_bytes:
                    pool._free.setdefault(size, []).append(buf)
                    pool.bytes_cached += size
                    return
            finally:
                lock.release()
            pool._drop([buf])
        except Exception:   # interpreter shutdown (the driver frees everything anyway), or
            pass            # a forked child (see devices.FORK_MESSAGE)


def output_storage(pool, nbytes, size_class, offers):
    """A Storage for a kernel's output: one of `offers` of the same size class, taken off
    the list, else a new one from `pool`.

    `offers` are the Storages of inputs that die at this launch and that the kernel reads
    only at the index where it writes the output, before writing it (elementwise kernels
    and epilogues: see jit's in-place steps). The output then overwrites the input in
    place, and its cache lines are already there: adam's new moments written over the old
    ones read no line from memory first (with parameters and optimizer state donated, a
    sizeable share of an MLP train step on a CPU)."""
    for i, st in enumerate(offers):
        if st.size == size_class:
            return offers.pop(i)
    return Storage(pool, nbytes, size_class)
