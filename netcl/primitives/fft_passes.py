"""The passes of device FFT plans (fft_kernels.py): FftPass records, twiddle and chirp
tables on the device, the Stockham pass shapes a device gets (lengths 2^a 3^b 5^c 7^d:
`stockham_length`), and building them.

Shapes by device (chosen with benchmarks/fft_bench.py and sweeps of group and work-group
sizes on PoCL):
- CPU targets: a row that fits local memory (n <= 65536 complex64) is one pass, a work-group
  of one work-item per row, without barriers (short rows, and rows under 256 that 8 does
  not divide: several per work-group, one per vector lane): faster than several work-items
  per work-group (PoCL runs a work-group's items as loops between barriers) and than
  radix-16 passes through global memory. Longer rows: passes of radix <= 4096
  (as few as fit, near equal), 8 sub-transforms per work-group in float8 lanes (complex128:
  4 in double4).
- GPU targets: work-groups of up to 256 work-items; rows whose pass takes up to 48 KB of
  local memory in one pass, several per work-group; longer rows in passes of 16
  sub-transforms per work-group. (Checked on an H100 with NVIDIA's OpenCL; not tuned.)

    >>> stockham_shapes(netcl.default_device(), 1024, np.dtype(np.complex64))
    [PassShape(n=1024, radix=1024, ns=1, group=1, threads=1, lanes=1)]
"""
from __future__ import annotations

import collections
import importlib
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..core import kernels
from . import fft_stockham
from .fft_stockham import PassShape

_devices = importlib.import_module("..core.devices", __package__)   # (the module)

# CPU devices (PoCL: local memory is ordinary memory, in cache): a row whose pass takes at
# most _CPU_LOCAL_BYTES (four arrays of n parts: n <= 65536 complex64) is one pass, a
# work-group of one work-item per row (faster than two passes up to there); rows shorter
# than _CPU_SHORT_ROW go max(lanes, 128 / n) per work-group, one per vector lane (faster
# than one per work-group). Longer rows: passes of _CPU_LANES sub-transforms per work-group
# in at most _CPU_PASS_LOCAL_BYTES (radix 4096: the fewest, largest passes that fit ran
# fastest, several sub-transforms per work-group well ahead of one).
_CPU_LOCAL_BYTES = 1024 * 1024
_CPU_PASS_LOCAL_BYTES = 512 * 1024
_CPU_LANES = {np.dtype(np.complex64): 8, np.dtype(np.complex128): 4}
_CPU_SHORT_ROW = 32
# Rows of other lengths (2^a 3^b 5^c 7^d) shorter than _CPU_LANE_ROW go one per lane too
# where 8 does not divide them or they are shorter than _CPU_LANE_ROW_8: their steps of
# radix 2-7 first leave the later steps' unit-stride loops too short to vectorise well
# (rows of 72-240 that 8 divides vectorise well enough: one per lane is slower for them)
_CPU_LANE_ROW = 256
_CPU_LANE_ROW_8 = 64
# GPUs: local memory a work-group takes at most (occupancy), rows of up to _GPU_ROW_ELEMENTS
# elements per work-group in one-pass FFTs, _GPU_PASS_GROUP sub-transforms per work-group in
# the passes of longer ones (runs of 16 consecutive elements per read), work-items at most
_GPU_LOCAL_BYTES = 48 * 1024
_GPU_ROW_ELEMENTS = 1024
_GPU_PASS_GROUP = 16
_GPU_THREADS = 256

_TABLES = collections.OrderedDict()
_MAX_TABLES = 256


@dataclass(frozen=True)
class FftPass:
    """One kernel launch of a plan: the kernel (its fixed arguments set), its sizes, and
    the buffers it reads and writes: "src", "dst", or scratch region "scratch0"/"scratch1"
    (at element 0 and at `FftPlan.region_elements` of the scratch buffer)."""
    kernel: cl.Kernel
    global_size: tuple
    local_size: tuple
    reads: str
    writes: str
    description: str


def netcl_device(device):
    """The netcl Device for `device`: a netcl Device, or the pyopencl.Device one wraps."""
    if hasattr(device, "cl_device") and hasattr(device, "context"):
        if device.cl_device is None:
            raise ValueError("fft_plan: device is netcl's NumPy fallback (no OpenCL device)")
        return device
    if isinstance(device, cl.Device):
        for d in _devices.devices():
            if d.cl_device is not None and d.cl_device.int_ptr == device.int_ptr:
                return d
        raise ValueError(f"fft_plan: device {device.name!r} is not one of netcl's devices")
    raise TypeError(f"fft_plan: device must be a netcl Device or a pyopencl.Device, "
                    f"got {type(device).__name__}")


def device_table(device, key, dtype, compute):
    """A read-only device buffer of `compute()` (complex128 on the host) as `dtype`, made
    once per (device, key, dtype)."""
    full_key = (device.context.int_ptr, device.cl_device.int_ptr, key, dtype.str)
    buf = _TABLES.get(full_key)
    if buf is None:
        host = np.ascontiguousarray(compute(), dtype=dtype)
        buf = cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                        hostbuf=host)
        _TABLES[full_key] = buf
        while len(_TABLES) > _MAX_TABLES:
            _TABLES.popitem(last=False)
    else:
        _TABLES.move_to_end(full_key)
    return buf


# ---- pass shapes ---------------------------------------------------------------------------

def stockham_length(n):
    """Whether a length-`n` (>= 2) DFT runs as Stockham passes: its prime factors are all
    among fft_stockham.STEP_PRIMES (2, 3, 5, 7). (Other lengths: fft_bluestein.)"""
    for p in fft_stockham.STEP_PRIMES:
        while n % p == 0:
            n //= p
    return n == 1


def _split_radices(n, fits):
    """The radices of the fewest passes of a length-`n` Stockham FFT such that each
    `fits(radix)` (monotonic), as near equal as a greedy split gets them, larger first: the
    prime factors, largest first, each go to the pass of least product so far. (For powers
    of two: log2 n split in near-equal shares.)"""
    primes, left = [], n
    for p in reversed(fft_stockham.STEP_PRIMES):
        while left % p == 0:
            primes.append(p)
            left //= p
    parts = 1
    while True:
        radices = [1] * parts
        for p in primes:
            i = min(range(parts), key=radices.__getitem__)
            if not fits(radices[i] * p):
                break
            radices[i] *= p
        else:
            return sorted(radices, reverse=True)
        parts += 1


def _cpu_lane_rows(n):
    """Whether rows of `n` go one per vector lane on CPU devices (see _CPU_LANE_ROW)."""
    if n < _CPU_SHORT_ROW:
        return True
    if n & (n - 1) == 0 or n >= _CPU_LANE_ROW:
        return False
    return n % 8 != 0 or n < _CPU_LANE_ROW_8


def stockham_shapes(device, n, dtype):
    """The passes of a length-`n` FFT (n > 1, stockham_length(n)) on `device`, as
    PassShapes."""
    target = device.target
    if target.host_cpu:
        lanes = _CPU_LANES[dtype]
        limit = min(_CPU_LOCAL_BYTES, target.local_mem_limit or _CPU_LOCAL_BYTES)
        if _cpu_lane_rows(n):           # short rows: one per vector lane
            return [PassShape(n, n, 1, group=lanes * max(1, 128 // (n * lanes)), lanes=lanes)]
        if PassShape(n, n, 1).local_bytes(dtype) <= limit:
            return [PassShape(n, n, 1)]
        group, shape = lanes, {"lanes": lanes}
        limit = min(_CPU_PASS_LOCAL_BYTES, target.local_mem_limit or _CPU_PASS_LOCAL_BYTES)
    else:
        limit = min(_GPU_LOCAL_BYTES, target.local_mem_limit or _GPU_LOCAL_BYTES)
        row = PassShape(n, n, 1).local_bytes(dtype)
        if row <= limit:
            group = max(1, min(limit // row, _GPU_ROW_ELEMENTS // n))
            return [PassShape(n, n, 1, group=group, threads=_gpu_threads(device, group * n))]
        group, shape = _GPU_PASS_GROUP, {}
    radices = _split_radices(n, lambda radix: radix in fft_stockham.STEP_PRIMES or PassShape(
        radix, radix, 1, group=group, **shape).local_bytes(dtype) <= limit)
    shapes, ns = [], 1
    for radix in radices:
        if target.host_cpu:
            shapes.append(PassShape(n, radix, ns, group=group, lanes=lanes))
        else:
            shapes.append(PassShape(n, radix, ns, group=group,
                                    threads=_gpu_threads(device, group * radix)))
        ns *= radix
    return shapes


def _gpu_threads(device, elements):
    """Work-items of a GPU work-group over `elements` (a radix-8 butterfly each, at most)."""
    return max(1, min(_GPU_THREADS, device.work_group, elements // 8))


@dataclass(frozen=True)
class PassArgs:
    """The hook arguments of one Stockham pass (see fft_stockham): rows read and written,
    the pre/post tables (None: off), conjugations and scale."""
    in_row: int
    in_len: int
    out_row: int
    out_len: int
    pre: object = None
    post: object = None
    conj_in: bool = False
    conj_out: bool = False
    scale: float = 1.0


def build_kernels(device, sources, name):
    """Fresh kernels `name` of each of `sources` (built together: one compiler run)."""
    unique = list(dict.fromkeys(sources))
    if len(unique) > 1:
        kernels.build_together([kernels.BuildRequest(device, s, ()) for s in unique])
    return [kernels.kernel(device, s, name) for s in sources]


def stockham_passes(device, shapes, dtype, batch, args, roles):
    """(FftPasses, their twiddle tables) of Stockham passes `shapes` over `batch` rows, each
    with its PassArgs and (reads, writes) roles."""
    real = np.float32 if dtype == np.complex64 else np.float64
    for s in shapes:    # (PoCL crashes, rather than fail, on a kernel that declares more)
        if device.target.local_mem_limit and \
                s.local_bytes(dtype) > device.target.local_mem_limit:
            raise ValueError(f"fft pass {s} takes {s.local_bytes(dtype)} bytes of local "
                             f"memory, more than {device.name}'s "
                             f"{device.target.local_mem_limit}")
    sources = [fft_stockham.pass_source(s, dtype) for s in shapes]
    built = build_kernels(device, sources, fft_stockham.KERNEL_NAME)
    out, tables = [], []
    for shape, k, a, (reads, writes) in zip(shapes, built, args, roles):
        tw = device_table(device, ("stockham", shape), dtype,
                          lambda shape=shape: fft_stockham.twiddle_table(shape))
        total = batch * shape.per_row
        for i, v in ((2, np.int32(a.in_row)), (3, np.int32(a.in_len)),
                     (6, np.int32(a.out_row)), (7, np.int32(a.out_len)), (8, tw),
                     (9, a.pre if a.pre is not None else tw), (10, np.int32(a.pre is not None)),
                     (11, a.post if a.post is not None else tw),
                     (12, np.int32(a.post is not None)),
                     (13, real(-1 if a.conj_in else 1)), (14, real(-1 if a.conj_out else 1)),
                     (15, real(a.scale)), (16, np.int64(total))):
            k.set_arg(i, v)
        groups = -(-total // shape.group)
        out.append(FftPass(k, (groups * shape.threads,), (shape.threads,), reads, writes,
                           f"stockham radix {shape.radix} after {shape.ns} of {shape.n}"))
        tables.append(tw)
    return out, tables


def chain_roles(count, dst_holds_rows):
    """(reads, writes) of `count` chained passes from src to dst: intermediates alternate
    between dst and scratch0 where dst can hold them (so the last lands in dst), else
    between scratch0 and scratch1. Returns (roles, scratch regions used)."""
    if dst_holds_rows:
        writes = ["dst" if (count - 1 - i) % 2 == 0 else "scratch0" for i in range(count)]
    else:
        writes = [f"scratch{i % 2}" for i in range(count - 1)] + ["dst"]
    reads = ["src"] + writes[:-1]
    regions = len({w for w in writes if w.startswith("scratch")})
    return list(zip(reads, writes)), regions


