"""Batched 1-D complex DFTs on a device: plans of OpenCL kernels, and their launch.

`fft_plan(device, n, batch, dtype, inverse)` decides once what transforming `batch` rows of
`n` interleaved complex numbers (complex64: float2 per element, complex128: double2, on
devices with cl_khr_fp64) takes; `enqueue_fft` enqueues it for given buffers:

    forward  X[k] = sum_j x[j] exp(-2 pi i j k / n)            (numpy.fft.fft)
    inverse  x[j] = 1/n sum_k X[k] exp(+2 pi i j k / n)        (numpy.fft.ifft)

along the last, contiguous axis (row r of `src` starts at element src_offset + r n).

Algorithms, by n:
- n == 1 (or batch == 0): a copy (nothing).
- n = 2^a 3^b 5^c 7^d: mixed-radix Stockham autosort passes (fft_stockham.py, its in-register
  steps of radix 2-9: fft_codelets.py; the shapes a device gets: fft_passes.py). On CPU
  devices (PoCL) the whole FFT is one kernel while a row fits local memory (n <= 65536
  complex64, 32768 complex128): a work-group of one work-item per row loads it into local
  memory and runs the steps there in loops the compiler vectorises (short rows: one per
  vector lane); longer rows take passes of radix up to 4096, 8 sub-transforms per
  work-group in float8 lanes. GPUs take the same passes with work-groups of up to 256
  work-items.
  On PoCL the one-kernel FFT outruns both work-groups of many work-items per row (the GPU
  kernels) and radix-2/4/8/16 passes through global memory (the figures: the README and
  benchmarks/fft_bench.py); odd lengths cost more per point (radix-3/5 steps).
- other n up to fft_bluestein.direct_max(device) (64 on GPUs; on CPU devices every length
  up to 8 is a Stockham one): a direct O(n^2) DFT, a work-item per output
  (fft_bluestein.py).
- other n (a prime factor above 7): Bluestein's chirp-z algorithm over power-of-two FFTs of
  size M >= 2n - 1 (fft_bluestein.py): two chained power-of-two transforms with the chirps
  applied as they load and store (about 4x the work of a mixed-radix FFT of n).

Twiddles, codelet constants and chirps are computed on the host from exact integer angle
fractions, each within an ulp of float64 (fft_codelets.unit_roots), and rounded once to the
dtype; tables are cached per device, shape and dtype. Measured against numpy.fft in float64
(row-wise relative 2-norm error, n from 2 to 2^20, forward and inverse): complex64 <=
1.9e-7, complex128 <= 4.7e-16 (Stockham lengths), 9.2e-16 (Bluestein); against numpy's
long-double FFT, complex128 errs less than numpy's float64 FFT does (4.1e-16 against 4.7e-16,
Bluestein 5.0e-16 against 6.9e-16).

Out of place: `src` is only read, `dst` must not overlap it (ValueError if it does, in one
buffer); intermediate passes use `scratch` (scratch_bytes(plan) bytes, None where 0).

    >>> plan = fft_plan(netcl.default_device(), 1024, 256, np.complex64, inverse=False)
    >>> ev = enqueue_fft(queue, plan, src_buf, dst_buf, scratch_buf)
"""
from __future__ import annotations

import collections
import importlib
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..core import commands
from . import fft_bluestein
from .fft_stockham import ARG_IN, ARG_IN_OFFSET, ARG_OUT, ARG_OUT_OFFSET
from .fft_passes import (PassArgs, chain_roles, netcl_device, stockham_length, stockham_passes,
                         stockham_shapes)

_devices = importlib.import_module("..core.devices", __package__)   # (the module)

_PLANS = collections.OrderedDict()
_MAX_PLANS = 128


@dataclass(frozen=True)
class FftPlan:
    """What transforming `batch` rows of `n` elements of `dtype` takes on `device`:
    `algorithm` ("copy", "stockham" (mixed radix), "direct" or "bluestein") and its
    `passes`, enqueued in order; `region_elements` complex elements per scratch region;
    `tables` the device buffers (twiddles, chirps) the kernels read, held as long as the
    plan."""
    n: int
    batch: int
    dtype: np.dtype
    inverse: bool
    algorithm: str
    passes: tuple
    region_elements: int = 0
    scratch_regions: int = 0
    device: object = None
    tables: tuple = ()


def scratch_bytes(plan):
    """Bytes of scratch `plan` needs (0: pass None to enqueue_fft).

    >>> scratch_bytes(fft_plan(dev, 1024, 8, np.complex64, False))      # one kernel
    0
    """
    return plan.scratch_regions * plan.region_elements * plan.dtype.itemsize


# ---- plans ----------------------------------------------------------------------------------

def fft_plan(device, n: int, batch: int, dtype, inverse: bool) -> FftPlan:
    """The plan of a batched 1-D DFT of `batch` rows of `n` complex elements of `dtype`
    (complex64, or complex128 where the device has fp64) on `device`, forward or `inverse`
    (with 1/n). Plans are cached per (device, n, batch, dtype, inverse).

    >>> plan = fft_plan(netcl.default_device(), 1000, 16, np.complex64, inverse=False)
    >>> plan.algorithm, len(plan.passes), scratch_bytes(plan)
    ('stockham', 1, 0)
    >>> fft_plan(netcl.default_device(), 1009, 16, np.complex64, False).algorithm
    'bluestein'
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"fft_plan: n must be an int, got {type(n).__name__}")
    if isinstance(batch, (bool, np.bool_)) or not isinstance(batch, (int, np.integer)):
        raise TypeError(f"fft_plan: batch must be an int, got {type(batch).__name__}")
    n, batch = int(n), int(batch)
    if n < 1:
        raise ValueError(f"fft_plan: n must be >= 1, got n={n}")
    if batch < 0:
        raise ValueError(f"fft_plan: batch must be >= 0, got batch={batch}")
    dtype = np.dtype(dtype)
    if dtype not in (np.complex64, np.complex128):
        raise TypeError(f"fft_plan: dtype must be complex64 or complex128, got {dtype}")
    device = netcl_device(device)
    if dtype == np.complex128 and not device.capabilities.fp64:
        raise TypeError(f"fft_plan: complex128 needs cl_khr_fp64, which {device.name} lacks")
    inverse = bool(inverse)
    key = (device.context.int_ptr, device.cl_device.int_ptr, device.target, n, batch,
           dtype.str, inverse)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _make_plan(device, n, batch, dtype, inverse)
        _PLANS[key] = plan
        while len(_PLANS) > _MAX_PLANS:
            _PLANS.popitem(last=False)
    else:
        _PLANS.move_to_end(key)
    return plan


def _make_plan(device, n, batch, dtype, inverse):
    if batch == 0 or n == 1:
        return FftPlan(n, batch, dtype, inverse, "copy", (), device=device)
    if stockham_length(n):
        shapes = stockham_shapes(device, n, dtype)
        roles, regions = chain_roles(len(shapes), dst_holds_rows=True)
        args = [PassArgs(n, n, n, n, conj_in=inverse and i == 0,
                         conj_out=inverse and i == len(shapes) - 1,
                         scale=1.0 / n if inverse and i == len(shapes) - 1 else 1.0)
                for i in range(len(shapes))]
        passes, tables = stockham_passes(device, shapes, dtype, batch, args, roles)
        return FftPlan(n, batch, dtype, inverse, "stockham", tuple(passes),
                       region_elements=batch * n if regions else 0, scratch_regions=regions,
                       device=device, tables=tables)
    if n <= fft_bluestein.direct_max(device):
        passes, tables = fft_bluestein.direct_passes(device, n, batch, dtype, inverse)
        return FftPlan(n, batch, dtype, inverse, "direct", tuple(passes), device=device,
                       tables=tables)
    passes, tables, m, regions = fft_bluestein.bluestein_passes(device, n, batch, dtype,
                                                                inverse)
    return FftPlan(n, batch, dtype, inverse, "bluestein", tuple(passes),
                   region_elements=batch * m, scratch_regions=regions, device=device,
                   tables=tables)


# ---- launch ---------------------------------------------------------------------------------

def _check_buffer(what, buf, offset, elements, itemsize):
    if offset < 0:
        raise ValueError(f"enqueue_fft: {what}_offset_elems must be >= 0, got {offset}")
    need = (offset + elements) * itemsize
    if buf.size < need:
        raise ValueError(f"enqueue_fft: {what} holds {buf.size} bytes, the plan reads or "
                         f"writes {need} (offset {offset} + {elements} elements)")


def enqueue_fft(queue, plan: FftPlan, src, dst, scratch=None, src_offset_elems=0,
                dst_offset_elems=0, wait_for=None):
    """Enqueue `plan` on `queue`: rows from `src` (from element src_offset_elems) transformed
    into `dst` (from dst_offset_elems), out of place: `src` is not written, and `dst` must
    not overlap it. `scratch`: a buffer of at least scratch_bytes(plan) bytes, or None when
    that is 0. Returns the event of the last command.

    >>> plan = fft_plan(dev, 8, 2, np.complex64, inverse=False)
    >>> x = np.arange(16, dtype=np.complex64)
    >>> src = cl.Buffer(dev.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
    ...                 hostbuf=x)
    >>> dst = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, x.nbytes)
    >>> enqueue_fft(dev.queue, plan, src, dst, None).wait()    # dst: np.fft.fft(x.reshape(2, 8))
    """
    item = plan.dtype.itemsize
    elements = plan.batch * plan.n
    src_off, dst_off = int(src_offset_elems), int(dst_offset_elems)
    if elements == 0:
        return cl.enqueue_marker(queue, wait_for=wait_for)
    _check_buffer("src", src, src_off, elements, item)
    _check_buffer("dst", dst, dst_off, elements, item)
    if src.int_ptr == dst.int_ptr and src_off < dst_off + elements and \
            dst_off < src_off + elements:
        raise ValueError("enqueue_fft: dst overlaps src (the transform is out of place: "
                         "give dst its own buffer or a disjoint range)")
    need = scratch_bytes(plan)
    if need and (scratch is None or scratch.size < need):
        raise ValueError(f"enqueue_fft: the plan needs {need} bytes of scratch, got "
                         f"{'None' if scratch is None else scratch.size}")
    if plan.algorithm == "copy":
        return cl.enqueue_copy(queue, dst, src, byte_count=elements * item,
                               src_offset=src_off * item, dst_offset=dst_off * item,
                               wait_for=wait_for)
    places = {"src": (src, src_off), "dst": (dst, dst_off), "scratch0": (scratch, 0),
              "scratch1": (scratch, plan.region_elements)}
    event = None
    with _devices.LOCK:     # (the plan's kernels are shared: set and enqueue together)
        for p in plan.passes:
            (ib, io), (ob, oo) = places[p.reads], places[p.writes]
            p.kernel.set_arg(ARG_IN, ib)
            p.kernel.set_arg(ARG_IN_OFFSET, np.int64(io))
            p.kernel.set_arg(ARG_OUT, ob)
            p.kernel.set_arg(ARG_OUT_OFFSET, np.int64(oo))
            event = commands.launch(queue, p.kernel, p.global_size, p.local_size,
                                               wait_for=wait_for if event is None else None)
    return event
