"""OpenCL device discovery, the default device, and each device's capability profile.

Every OpenCL device of every platform becomes a `Device` with one in-order queue and one
buffer pool; devices of one platform share a context, so copies between them stay on the
driver. The default is the first GPU, then accelerator, then CPU; `NETCL_DEVICE` picks by
kind (`gpu`), index (`1`) or name substring (`H100`, `pthread`), and `numpy` forces the
NumPy fallback, which is also what runs when no OpenCL platform exists at all.
`NETCL_CPU_DEVICES=N` asks PoCL for N CPU devices sharing the cores (to test pmap on a CPU).
"""
import contextlib
import contextvars
import os
import warnings
from dataclasses import dataclass

_KIND_ORDER = {"gpu": 0, "accel": 1, "cpu": 2}


def _configure_pocl():
    """Must run before PyOpenCL lists platforms: PoCL reads these once."""
    n = os.environ.get("NETCL_CPU_DEVICES")
    if n and "POCL_DEVICES" not in os.environ:
        n = int(n)
        if n < 1:
            raise ValueError(f"NETCL_CPU_DEVICES must be >= 1, got {n}")
        os.environ["POCL_DEVICES"] = " ".join(["pthread"] * n)
        cores = os.cpu_count() or 1
        os.environ.setdefault("POCL_CPU_MAX_CU_COUNT", str(max(1, cores // n)))


@dataclass(frozen=True)
class Capabilities:
    """What a device can do; kernels query this instead of assuming limits."""
    vendor: str
    fp16: bool
    fp64: bool
    subgroups: bool
    local_mem_size: int
    max_work_group_size: int
    compute_units: int
    global_mem_size: int
    driver_version: str


class Device:
    """One OpenCL device (or the NumPy fallback) with its queue and buffer pool."""

    def __init__(self, index, platform_name, name, kind, cl_device=None, context=None):
        self.index = index
        self.platform = platform_name
        self.name = name
        self.kind = kind  # "gpu" | "cpu" | "accel" | "numpy"
        self.cl_device = cl_device
        self.context = context
        self.queue = None
        self.pool = None
        if cl_device is not None:
            import pyopencl as cl
            from .pool import BufferPool
            self.queue = cl.CommandQueue(context, cl_device)
            # GPUs keep up to a quarter of their memory cached: a big conv step frees and
            # reallocates several 0.3-0.6 GB im2col buffers, and a released buffer costs a
            # driver call that waits for the device (W5 on an H200: 7.6 ms of host time).
            cap = None
            if kind == "gpu" and "NETCL_MAX_CACHED_GB" not in os.environ:
                cap = max(2 << 30, cl_device.global_mem_size // 4)
            self.pool = BufferPool(context, cap)
            ext = cl_device.extensions
            self.capabilities = Capabilities(
                vendor=cl_device.vendor.strip(), fp16="cl_khr_fp16" in ext,
                fp64="cl_khr_fp64" in ext or cl_device.double_fp_config != 0,
                subgroups="cl_khr_subgroups" in ext or "cl_intel_subgroups" in ext,
                local_mem_size=cl_device.local_mem_size,
                max_work_group_size=cl_device.max_work_group_size,
                compute_units=cl_device.max_compute_units,
                global_mem_size=cl_device.global_mem_size,
                driver_version=cl_device.driver_version)
        else:
            self.capabilities = Capabilities("numpy", True, True, False, 0, 1, os.cpu_count() or 1,
                                             0, "numpy")
        # Work-group size for elementwise and row kernels: a multiple of the SIMD width on
        # GPUs; on PoCL it sets how many items one work-group function loops over.
        self.work_group = min(256, self.capabilities.max_work_group_size)

    @property
    def is_numpy(self):
        return self.cl_device is None

    @property
    def memory(self):
        return self.capabilities.global_mem_size

    def synchronize(self):
        if self.queue is not None:
            self.queue.finish()

    def memory_stats(self):
        """Buffer-pool statistics: hits, misses, bytes in use and cached."""
        return self.pool.stats() if self.pool is not None else {}

    def __repr__(self):
        return f"Device({self.index}: {self.kind} '{self.name}' on '{self.platform}')"


_devices = None
_default = contextvars.ContextVar("netcl_default_device", default=None)
_global_default = None


def _discover():
    _configure_pocl()
    if os.environ.get("NETCL_DEVICE", "").lower() == "numpy":
        return [Device(0, "numpy", "numpy", "numpy")]
    try:
        import pyopencl as cl
        platforms = cl.get_platforms()
    except Exception:  # no ICD loader, or no platform: the NumPy fallback
        platforms = []
    found = []
    for p in platforms:
        try:
            cl_devs = p.get_devices()
        except Exception:
            continue
        if not cl_devs:
            continue
        ctx = cl.Context(cl_devs)
        for d in cl_devs:
            t = d.type
            kind = ("gpu" if t & cl.device_type.GPU else
                    "accel" if t & cl.device_type.ACCELERATOR else "cpu")
            found.append((p.name.strip(), d.name.strip(), kind, d, ctx))
    if not found:
        warnings.warn("netcl: no OpenCL device found; running on the NumPy fallback "
                      "(pip install 'netcl[pocl]' for the PoCL CPU device)", stacklevel=3)
        return [Device(0, "numpy", "numpy", "numpy")]
    return [Device(i, *f) for i, f in enumerate(found)]


def devices(kind=None):
    """All devices, in discovery order; `kind` filters ('gpu', 'cpu', 'accel', 'numpy').

    >>> netcl.devices()
    [Device(0: cpu 'pthread-AMD EPYC ...' on 'Portable Computing Language')]
    """
    global _devices
    if _devices is None:
        _devices = _discover()
    if kind is None:
        return list(_devices)
    return [d for d in _devices if d.kind == kind]


def _pick_default():
    devs = devices()
    sel = os.environ.get("NETCL_DEVICE", "").strip()
    if not sel or sel.lower() == "numpy":
        return min(devs, key=lambda d: (_KIND_ORDER.get(d.kind, 3), d.index))
    if sel.isdigit():
        i = int(sel)
        if i >= len(devs):
            raise ValueError(f"NETCL_DEVICE={sel}: only {len(devs)} device(s): {devs}")
        return devs[i]
    low = sel.lower()
    if low in ("gpu", "cpu", "accel", "accelerator"):
        low = "accel" if low == "accelerator" else low
        match = [d for d in devs if d.kind == low]
    else:
        match = [d for d in devs if low in d.name.lower() or low in d.platform.lower()]
    if not match:
        raise ValueError(f"NETCL_DEVICE={sel!r} matches no device; devices are {devs}")
    return match[0]


def default_device(device=None):
    """The current default device; or, given a device, a context manager that makes it default.

    >>> x = netcl.numpy.ones(3)                  # on netcl.default_device()
    >>> with netcl.default_device(netcl.devices()[1]):
    ...     y = netcl.numpy.ones(3)              # on device 1
    """
    if device is None:
        d = _default.get()
        if d is not None:
            return d
        global _global_default
        if _global_default is None:
            _global_default = _pick_default()
        return _global_default
    if not isinstance(device, Device):
        raise TypeError(f"default_device: expected a netcl Device, got {type(device).__name__}")
    return _use_device(device)


@contextlib.contextmanager
def _use_device(device):
    token = _default.set(device)
    try:
        yield device
    finally:
        _default.reset(token)


def numpy_device():
    """The NumPy reference backend as a device (used by the fallback and by tests)."""
    global _numpy_device
    if _numpy_device is None:
        _numpy_device = Device(-1, "numpy", "numpy", "numpy")
    return _numpy_device


_numpy_device = None
