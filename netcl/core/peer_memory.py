"""Device memory that the other GPUs of a host read directly, over NVLink or PCIe peer
access: what pmap's collectives stage through on NVIDIA GPUs instead of pinned host memory.

OpenCL has no peer copy. NVIDIA's driver offers `cl_khr_external_memory_opaque_fd`: memory
that the CUDA driver API allocates (`cuMemCreate`, exported as a POSIX file descriptor) is
imported as an OpenCL buffer, once for each device that uses it, and a copy or a kernel on
another GPU then reaches it over the peer link (NVLink: an order of magnitude faster than
a copy through pinned host memory; the README has the figures). libcuda ships with
NVIDIA's driver and is loaded through ctypes, so this adds no dependency; it is optional,
detected at run time (`available`), and `NETCL_PEER_MEMORY=0` turns it off.

    >>> if peer_memory.available(devices):
    ...     buf = peer_memory.PeerBuffer(devices[0], devices, 1 << 20)
    ...     buf.on(devices[1])      # the cl.Buffer device 1's commands use

The descriptor can also go to another process (`PeerBuffer.export`, `import_buffer`): processes
of one host, a GPU each, all-reduce through each other's memory that way
(transforms/pmap_process_peer.py).

Ownership follows the external-memory extensions: each export makes a new descriptor and
a successful import hands it to the OpenCL driver (the descriptor of a failed import is
closed here). The CUDA allocation handle is released with the buffer, after the OpenCL
buffers that import it.
"""
from __future__ import annotations

import ctypes
import os
import threading
import warnings

import pyopencl as cl

# cl_khr_external_memory
_CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR = 0x2060
_CL_DEVICE_HANDLE_LIST_KHR = 0x2051
_CL_DEVICE_HANDLE_LIST_END_KHR = 0
# CUDA driver API enums
_CU_MEM_ALLOCATION_TYPE_PINNED = 1
_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
_CU_MEM_LOCATION_TYPE_DEVICE = 1
_CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0
_CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33
_CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34
_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocationProp(ctypes.Structure):
    """CUDA's CUmemAllocationProp."""
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", _Location), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", _AllocFlags)]


class PeerMemoryError(RuntimeError):
    """A CUDA or OpenCL call of the peer-memory path failed."""


_LOCK = threading.RLock()
_state = {}         # "cuda": the libcuda CDLL or None; "create": clCreateBufferWithProperties


def _cuda():
    """libcuda, initialised (None where it does not load or initialise)."""
    with _LOCK:
        if "cuda" not in _state:
            try:
                lib = ctypes.CDLL("libcuda.so.1")
                _state["cuda"] = lib if lib.cuInit(0) == 0 else None
            except OSError:
                _state["cuda"] = None
        return _state["cuda"]


def _check(result, what):
    if result != 0:
        lib, text = _cuda(), ctypes.c_char_p()
        if lib is not None:
            lib.cuGetErrorString(result, ctypes.byref(text))
        raise PeerMemoryError(f"peer memory: {what} failed: CUDA error {result} "
                              f"({(text.value or b'').decode()})")


def _create_buffer_with_properties():
    """clCreateBufferWithProperties of the OpenCL library PyOpenCL loaded (OpenCL 3.0)."""
    with _LOCK:
        if "create" not in _state:
            try:
                with open("/proc/self/maps") as f:
                    loaded = [ln.split()[-1] for ln in f if "libOpenCL" in ln]
            except OSError:     # (no /proc: not Linux, where the extension is not offered)
                loaded = []
            fn = None
            if loaded:
                fn = getattr(ctypes.CDLL(loaded[0]), "clCreateBufferWithProperties", None)
            if fn is not None:
                fn.restype = ctypes.c_void_p
                fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                               ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_int)]
            _state["create"] = fn
        return _state["create"]


def _pci(cl_device):
    return (int(cl_device.pci_domain_id_nv), int(cl_device.pci_bus_id_nv),
            int(cl_device.pci_slot_id_nv))


_ORDINALS = {}      # PCI (domain, bus, device) -> CUDA device ordinal


def cuda_device(cl_device):
    """The CUDA device (ordinal) that `cl_device` is, matched by PCI address; None where
    there is none (not NVIDIA, or hidden from CUDA)."""
    lib = _cuda()
    if lib is None:
        return None
    try:
        pci = _pci(cl_device)
    except Exception:       # (no cl_nv_device_attribute_query)
        return None
    with _LOCK:
        if not _ORDINALS:
            count = ctypes.c_int()
            if lib.cuDeviceGetCount(ctypes.byref(count)) == 0:
                for k in range(count.value):
                    dev, vals = ctypes.c_int(), []
                    lib.cuDeviceGet(ctypes.byref(dev), k)
                    for attr in (_CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID,
                                 _CU_DEVICE_ATTRIBUTE_PCI_BUS_ID,
                                 _CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID):
                        v = ctypes.c_int()
                        lib.cuDeviceGetAttribute(ctypes.byref(v), attr, dev)
                        vals.append(v.value)
                    _ORDINALS[tuple(vals)] = dev.value
    return _ORDINALS.get(pci)


_AVAILABLE = {}


def available(devices) -> bool:
    """Whether `devices` (netcl Devices of one context) can stage collectives in each
    other's memory: every one's Target imports external memory, each is a CUDA device, every
    pair has peer access, and NETCL_PEER_MEMORY is not 0."""
    if os.environ.get("NETCL_PEER_MEMORY", "1") == "0" or len(devices) < 2:
        return False
    key = tuple(devices)
    got = _AVAILABLE.get(key)
    if got is None:
        got = _AVAILABLE[key] = _available(devices)
    return got


def disable(devices, reason):
    """Stop using peer memory among `devices` (after `reason`, a PeerMemoryError, which is
    shown once as a warning): their collectives stage through pinned host memory."""
    warnings.warn(f"{reason}; collectives among {[d.name for d in devices]} stage through "
                  "pinned host memory from now on", RuntimeWarning, stacklevel=3)
    _AVAILABLE[tuple(devices)] = False


def _available(devices):
    if any(d.target.external_memory != "opaque_fd" for d in devices) or \
            len({id(d.context) for d in devices}) != 1 or _create_buffer_with_properties() is None:
        return False
    ordinals = [cuda_device(d.cl_device) for d in devices]
    if None in ordinals or len(set(ordinals)) != len(ordinals):
        return False
    return _pairwise_access(ordinals)


def _cuda_call(name):
    """A libcuda entry point by its current name (the _v2 symbol where there is one)."""
    lib = _cuda()
    return getattr(lib, name + "_v2", None) or getattr(lib, name)


class PeerBuffer:
    """`nbytes` (rounded up to the allocation granularity) of `owner`'s memory, imported as
    an OpenCL buffer for each of `devices` (the owner among them)."""

    def __init__(self, owner, devices, nbytes):
        lib = _cuda()
        ordinal = cuda_device(owner.cl_device)
        prop = _AllocationProp()
        prop.type = _CU_MEM_ALLOCATION_TYPE_PINNED
        prop.requestedHandleTypes = _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        prop.location.type = _CU_MEM_LOCATION_TYPE_DEVICE
        prop.location.id = ordinal
        dev, ctx = ctypes.c_int(), ctypes.c_void_p()
        with _LOCK:
            # The device's primary context (cuMemCreate needs a current one), retained for
            # the buffer's life and asked for anew each time: a CUDA library in the same
            # process (JAX) shares it and may have replaced it. Pushed for these calls and
            # popped after, the thread's CUDA state is left as the OpenCL driver had it.
            _check(lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
            _check(_cuda_call("cuDevicePrimaryCtxRetain")(ctypes.byref(ctx), dev),
                   "cuDevicePrimaryCtxRetain")
            try:
                _check(_cuda_call("cuCtxPushCurrent")(ctx), "cuCtxPushCurrent")
                try:
                    grain = ctypes.c_size_t()
                    _check(lib.cuMemGetAllocationGranularity(
                        ctypes.byref(grain), ctypes.byref(prop),
                        _CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity")
                    size = max(-(-nbytes // grain.value) * grain.value, grain.value)
                    handle = ctypes.c_ulonglong()
                    _check(lib.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size),
                                           ctypes.byref(prop), ctypes.c_ulonglong(0)),
                           f"cuMemCreate of {size} bytes")
                finally:
                    _cuda_call("cuCtxPopCurrent")(ctypes.byref(ctypes.c_void_p()))
            except PeerMemoryError:
                _cuda_call("cuDevicePrimaryCtxRelease")(dev)
                raise
        self.nbytes, self._handle, self._buffers, self._device = size, handle, {}, dev
        try:
            for d in devices:
                self._buffers[d.cl_device.int_ptr] = self._import(d)
        except Exception:
            self.release()
            raise

    def export(self):
        """A new POSIX file descriptor of the allocation: what another process (or another
        device of this one) imports (`import_buffer`), handing the descriptor on."""
        fd = ctypes.c_int()
        _check(_cuda().cuMemExportToShareableHandle(
            ctypes.byref(fd), self._handle, _CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            ctypes.c_ulonglong(0)), "cuMemExportToShareableHandle")
        return fd.value

    def _import(self, device):
        return import_buffer(device, self.export(), self.nbytes)

    def on(self, device_or_cl_device):
        """The OpenCL buffer that a device's commands use (a netcl Device or a cl.Device)."""
        cl_device = getattr(device_or_cl_device, "cl_device", device_or_cl_device)
        return self._buffers[cl_device.int_ptr]

    def release(self):
        """Release the OpenCL buffers, then the allocation (commands using them must have
        completed)."""
        for buf in self._buffers.values():
            buf.release()
        self._buffers = {}
        if self._handle is not None:
            _cuda().cuMemRelease(self._handle)
            _cuda_call("cuDevicePrimaryCtxRelease")(self._device)
        self._handle = None


def import_buffer(device, fd, nbytes):
    """The cl.Buffer of `device` (a netcl Device) over the `nbytes` of GPU memory that the
    descriptor `fd` (from `PeerBuffer.export`, in this process or passed from another)
    shares; the descriptor goes to the OpenCL driver, or is closed if the import fails."""
    props = (ctypes.c_uint64 * 6)(_CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, fd,
                                  _CL_DEVICE_HANDLE_LIST_KHR, device.cl_device.int_ptr,
                                  _CL_DEVICE_HANDLE_LIST_END_KHR, 0)
    err = ctypes.c_int()
    mem = _create_buffer_with_properties()(
        ctypes.c_void_p(device.context.int_ptr), props, cl.mem_flags.READ_WRITE,
        nbytes, None, ctypes.byref(err))
    if err.value != 0 or not mem:
        os.close(fd)
        raise PeerMemoryError(f"peer memory: importing {nbytes} bytes for {device.name}: "
                              f"clCreateBufferWithProperties error {err.value}")
    return cl.Buffer.from_int_ptr(mem, retain=False)


def pci_address(device):
    """(domain, bus, device) of a netcl Device where it can share its memory with other
    processes' GPUs (an NVIDIA GPU that CUDA sees, whose Target imports external memory,
    NETCL_PEER_MEMORY not 0); None otherwise."""
    if os.environ.get("NETCL_PEER_MEMORY", "1") == "0" or \
            device.target.external_memory != "opaque_fd" or \
            _create_buffer_with_properties() is None or cuda_device(device.cl_device) is None:
        return None
    return _pci(device.cl_device)


def peer_access(addresses) -> bool:
    """Whether the CUDA devices at these PCI `addresses` (distinct) can each read every
    other's memory."""
    with _LOCK:
        by_address = dict(_ORDINALS)
    ordinals = [by_address.get(tuple(a)) for a in addresses]
    if None in ordinals or len(set(ordinals)) != len(ordinals):
        return False
    return _pairwise_access(ordinals)


def _pairwise_access(ordinals):
    lib = _cuda()
    for a in ordinals:
        for b in ordinals:
            can = ctypes.c_int()
            if a != b and (lib.cuDeviceCanAccessPeer(ctypes.byref(can), a, b) != 0 or
                           not can.value):
                return False
    return True
