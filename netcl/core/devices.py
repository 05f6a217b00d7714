"""OpenCL device discovery, the default device, and each device's capability profile.

Every OpenCL device of every platform becomes a `Device` with one in-order queue and one
buffer pool; devices of one platform share a context, so copies between them stay on the
driver. The default is the first GPU, then accelerator, then CPU; `NETCL_DEVICE` picks by
kind (`gpu`), index (`1`) or name substring (`H100`, `pthread`), and `numpy` forces the
NumPy fallback, which is also what runs when no OpenCL platform exists at all.
`NETCL_CPU_DEVICES=N` asks PoCL for N CPU devices sharing the cores (to test pmap on a CPU).
"""
import atexit
import contextlib
import contextvars
import math
import os
import threading
import warnings
from dataclasses import dataclass

_KIND_ORDER = {"gpu": 0, "accel": 1, "cpu": 2}


def _cpu_device_count():
    """NETCL_CPU_DEVICES as a positive int, None when unset or empty."""
    raw = os.environ.get("NETCL_CPU_DEVICES")
    if raw is None or not raw.strip():
        return None
    try:
        n = int(raw.strip())
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"NETCL_CPU_DEVICES={raw!r}: expected a positive integer (the number "
                         "of PoCL CPU devices, e.g. NETCL_CPU_DEVICES=2)")
    return n


def max_cached_bytes_from_env(default_gb=2.0):
    """NETCL_MAX_CACHED_GB in bytes (`default_gb` where unset): how much memory a device's
    buffer pool keeps cached."""
    raw = os.environ.get("NETCL_MAX_CACHED_GB")
    if raw is None:
        return int(default_gb * 2**30)
    try:
        gb = float(raw)
    except ValueError:
        gb = math.nan
    if not (math.isfinite(gb) and gb >= 0):
        raise ValueError(f"NETCL_MAX_CACHED_GB={raw!r}: expected a finite number >= 0 of GiB "
                         "(the device memory netcl's buffer pool may keep cached; e.g. 2 or "
                         "0.5; 0 caches nothing)")
    return int(gb * 2**30)


def _writable_dir(path):
    """Whether `path` is (or can be made) a directory this process can write to."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return False
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def _private_dir(path):
    """Whether `path` is (or now is) a directory of this user's that no one else can write:
    PoCL loads compiled kernels from its cache, so a shared temporary directory must not be
    one another user made."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
    except OSError:
        return False
    own = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return own and not st.st_mode & 0o022 and os.access(path, os.W_OK | os.X_OK)


def _configure_pocl_cache():
    """PoCL reports no device at all when it cannot write its kernel cache, and netcl would
    then fall back to NumPy as if PoCL were not installed. Point it at a writable directory
    instead, or name the unwritable one the user chose: returns what to tell the user where
    PoCL is found (or no device is), else None."""
    chosen = os.environ.get("POCL_CACHE_DIR")
    if chosen is not None:
        if not _writable_dir(chosen):
            return (f"POCL_CACHE_DIR={chosen!r} is not a writable directory, and PoCL reports "
                    "no device without its kernel cache (unset it or point it at a writable "
                    "directory)")
        return None
    # where PoCL looks by default: $XDG_CACHE_HOME/pocl, else $HOME/.cache/pocl
    home = os.environ.get("HOME")
    base = os.environ.get("XDG_CACHE_HOME") or (os.path.join(home, ".cache") if home else None)
    default = os.path.join(base, "pocl") if base else "$HOME/.cache/pocl (HOME is unset)"
    if base and _writable_dir(default):
        return None
    import tempfile
    user = getattr(os, "getuid", lambda: "user")()
    fallback = os.path.join(tempfile.gettempdir(), f"netcl-pocl-cache-{user}")
    if not _private_dir(fallback):
        return (f"PoCL's kernel cache {default} is not writable (HOME={home!r}), nor is "
                f"{fallback}; set POCL_CACHE_DIR to a writable directory")
    os.environ["POCL_CACHE_DIR"] = fallback
    return (f"PoCL's kernel cache {default} is not writable (HOME={home!r}); using "
            f"POCL_CACHE_DIR={fallback} instead (set POCL_CACHE_DIR to choose)")


def _configure_pocl():
    """Must run before PyOpenCL lists platforms: PoCL reads these once."""
    n = _cpu_device_count()
    if n and "POCL_DEVICES" not in os.environ:
        # (POCL_MAX_PTHREAD_COUNT is left alone: PoCL's pthread devices share one pool of
        # that many workers, so a share of the cores per device would leave the devices
        # one core's worth of threads together, and they could not run concurrently)
        os.environ["POCL_DEVICES"] = " ".join(["pthread"] * n)


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
    max_mem_alloc_size: int = 0   # the largest single buffer (0: no limit known)


class Device:
    """One OpenCL device (or the NumPy fallback) with its queue and buffer pool."""

    def __init__(self, index, platform_name, name, kind, cl_device=None, context=None):
        self.index = index
        self.platform = platform_name
        self.name = name
        self.kind = kind  # "gpu" | "cpu" | "accel" | "numpy"
        self.process_index = 0      # this process's index in a job (netcl.distributed)
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
            # driver call that waits for the device, host time a CNN train step waits on.
            cap = None
            if kind == "gpu" and "NETCL_MAX_CACHED_GB" not in os.environ:
                cap = max(2 << 30, cl_device.global_mem_size // 4)
            self.pool = BufferPool(context, cap, device=self)
            ext = cl_device.extensions
            self.capabilities = Capabilities(
                vendor=cl_device.vendor.strip(), fp16="cl_khr_fp16" in ext,
                fp64="cl_khr_fp64" in ext or cl_device.double_fp_config != 0,
                subgroups="cl_khr_subgroups" in ext or "cl_intel_subgroups" in ext,
                local_mem_size=cl_device.local_mem_size,
                max_work_group_size=cl_device.max_work_group_size,
                compute_units=cl_device.max_compute_units,
                global_mem_size=cl_device.global_mem_size,
                driver_version=cl_device.driver_version,
                max_mem_alloc_size=cl_device.max_mem_alloc_size)
        else:
            self.capabilities = Capabilities("numpy", True, True, False, 0, 1, os.cpu_count() or 1,
                                             0, "numpy")
        # Work-group size for elementwise and row kernels: a multiple of the SIMD width on
        # GPUs; on PoCL it sets how many items one work-group function loops over.
        self.work_group = min(256, self.capabilities.max_work_group_size)
        from .target import NUMPY, target_for
        self.target = NUMPY if cl_device is None else target_for(cl_device, kind)

    @property
    def is_numpy(self):
        return self.cl_device is None

    @property
    def memory(self):
        return self.capabilities.global_mem_size

    def synchronize(self):
        if self.queue is not None:
            check_not_forked()
            self.queue.finish()

    def memory_stats(self):
        """Buffer-pool statistics: hits, misses, bytes in use and cached."""
        return self.pool.stats() if self.pool is not None else {}

    def __repr__(self):
        return f"Device({self.index}: {self.kind} '{self.name}' on '{self.platform}')"


_devices = None
_default = contextvars.ContextVar("netcl_default_device", default=None)
_global_default = None

# One lock orders every use of a shared cl.Kernel (set its arguments, enqueue it: two
# threads interleaving those launch each other's buffers) and the pools' books: eager
# dispatch and jit calls hold it while launchers run (and allocate), and a buffer going
# back to its pool takes it. Reentrant: a launcher may dispatch (a dense copy) and a buffer
# may be freed inside a launch. Users look it up as `devices.LOCK` at each use, so that a
# forked child can replace it (below).
LOCK = threading.RLock()

# ---- fork ----------------------------------------------------------------------------
# A child forked after OpenCL was initialised hangs at its first wait on the device (the
# driver's threads do not survive fork). The child's first device use raises instead.
_opencl_initialised = False
_forked_after_init = False

FORK_MESSAGE = ("netcl: this process was forked after OpenCL was initialised in its parent, "
                "and OpenCL cannot be used in a forked child (it would hang). Start worker "
                "processes with the 'spawn' or 'forkserver' start method "
                "(multiprocessing.get_context('spawn'), or "
                "multiprocessing.set_start_method('spawn')), or fork before the first netcl "
                "use.")


class _ForkedLock:
    """The child's LOCK: every dispatch and allocation raises instead of hanging."""

    def __enter__(self):
        raise RuntimeError(FORK_MESSAGE)

    def __exit__(self, *exc):
        return False

    acquire = __enter__

    def release(self):
        pass


def _after_fork_in_child():
    global LOCK, _forked_after_init
    if _opencl_initialised:
        _forked_after_init = True
        LOCK = _ForkedLock()
    else:   # the parent's lock may have been held by one of its other threads
        LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def check_not_forked():
    """Raise RuntimeError in a child forked after OpenCL was initialised (see FORK_MESSAGE)."""
    if _forked_after_init:
        raise RuntimeError(FORK_MESSAGE)


def _discover():
    global _opencl_initialised
    _configure_pocl()
    max_cached_bytes_from_env()     # (a bad value fails here, whatever the device)
    if os.environ.get("NETCL_DEVICE", "").lower() == "numpy":
        return [Device(0, "numpy", "numpy", "numpy")]
    cache_note = _configure_pocl_cache()
    try:
        import pyopencl as cl
        _opencl_initialised = True
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
    if cache_note and any("Portable" in f[0] for f in found):
        warnings.warn(f"netcl: {cache_note}", stacklevel=3)
    if not found:
        why = (f"PoCL found no device: {cache_note}" if cache_note
               else "pip install 'netcl[pocl]' for the PoCL CPU device")
        warnings.warn(f"netcl: no OpenCL device found; running on the NumPy fallback ({why})",
                      stacklevel=3)
        return [Device(0, "numpy", "numpy", "numpy")]
    found = [Device(i, *f) for i, f in enumerate(found)]
    atexit.register(_finish_at_exit, found)
    return found


def _finish_at_exit(found, limit_s=60.0):
    """Wait for the work still queued on `found`'s devices before the interpreter tears
    down (registered after PyOpenCL's own exit handlers, so it runs before them): a PoCL
    worker thread still running a kernel while the exiting process unmaps the buffers it
    reads crashes (SIGSEGV at the exit of a script that never waited for its last step).
    At most `limit_s` seconds in all: a device that never finishes (a hung kernel) must not
    keep the process from exiting."""
    if _forked_after_init:
        return
    import time
    import pyopencl as cl
    queues = [d.queue for d in found if d.queue is not None]
    try:
        markers = [cl.enqueue_marker(q) for q in queues]
        for q in queues:
            q.flush()
    except Exception:       # (a lost device: nothing left to wait for)
        return
    deadline = time.monotonic() + limit_s
    for m in markers:
        try:
            while m.command_execution_status > cl.command_execution_status.COMPLETE:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.001)
        except Exception:
            pass


def devices(kind=None):
    """All devices, in discovery order; `kind` filters ('gpu', 'cpu', 'accel', 'numpy').

    >>> netcl.devices()
    [Device(0: cpu 'pthread-AMD EPYC ...' on 'Portable Computing Language')]
    """
    global _devices
    if _devices is None:
        with LOCK:      # (threads starting at once discover once: one context per platform)
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


_process_devices = None     # the devices a job's process took (netcl.distributed), or None


def set_process_devices(chosen):
    """Make `chosen` this process's devices: what pmap maps over (`local_devices`), the
    first the default. netcl.distributed.initialize calls it so that processes sharing a
    host take different GPUs."""
    global _process_devices, _global_default
    with LOCK:
        _process_devices = list(chosen)
        _global_default = _process_devices[0]


# JAX's platform names -> netcl's device kinds
_PLATFORM_KINDS = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "rocm": "gpu", "opencl": None,
                   "numpy": "numpy"}


def set_default_platform(platforms, where):
    """Make the first device of the first available of `platforms` (JAX's platform names,
    comma-separated as jax_platforms takes them: "cuda,cpu") the default device, as
    jax_platform_name / jax_platforms choose JAX's backend. "opencl" is any device; "tpu"
    and unknown names raise ValueError naming `where`, as a platform with no device here
    does."""
    names = [n.strip().lower() for n in str(platforms).split(",") if n.strip()]
    unknown = [n for n in names if n not in _PLATFORM_KINDS]
    if unknown or not names:
        raise ValueError(f"{where}: unknown platform {', '.join(unknown) or repr(platforms)}; "
                         f"netcl's platforms are {sorted(_PLATFORM_KINDS)}")
    found = devices()
    for n in names:
        kind = _PLATFORM_KINDS[n]
        chosen = [d for d in found if kind is None or d.kind == kind]
        if kind == "numpy" and not chosen:
            chosen = [numpy_device()]
        if chosen:
            global _global_default
            with LOCK:
                _global_default = chosen[0]
            return chosen[0]
    raise ValueError(f"{where}: no device of platform {', '.join(names)} here (devices: "
                     f"{found})")


def process_devices():
    """The devices set by set_process_devices, or None."""
    return None if _process_devices is None else list(_process_devices)


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
            with LOCK:
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
