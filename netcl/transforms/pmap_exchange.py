"""How pmap runs collectives across OpenCL devices: through staging memory that every
device reaches, with the arithmetic in kernels on the devices and the order kept by events,
so the host enqueues a whole step and never waits.

Each device keeps its one in-order queue (the buffer pools rely on that order). A
collective enqueues on every device's queue copies into its own staging buffers (its send
and result buffers) and out of the others'; a copy that reads what another device wrote
waits on that copy's event. Staging memory is the devices' own where they can read each
other's (NVIDIA GPUs with peer access: core/peer_memory.py, copies over NVLink), else
pinned (page-locked, mapped once) host memory, the portable path: OpenCL has no peer copy,
and a copy between buffers last used on different devices goes through the driver's own
staging at a few GB/s (OPENCL_NOTES.md). The staging buffers and their events:
pmap_staging.py.

Schedules, with host memory as the hub every device reaches over its own link:

- all-reduce (psum, pmax, pmin): the flat value is cut into N parts, part k owned by
  device k. Reduce-scatter: each device copies the parts it does not own to its send
  buffer; device k uploads part k of every other device, and a kernel combines them with
  its own. All-gather: device k copies its combined part to its result buffer, and every
  device uploads the others'. Each device sends S bytes and receives 2(N-1)/N S in two
  rounds. A ring sends and receives 2(N-1)/N S in 2(N-1) rounds; its advantage, links
  between neighbours that bypass the hub, does not exist through host memory.
- Within one process on GPUs with peer memory, an all-reduce of up to ONE_ROUND_BYTES
  takes one round through the GPUs' own memory, ordered on the GPUs by their arrival
  counts (pmap_arrivals.py): each packs its values into its send buffer, signals, and
  combines every send buffer where it is; no event, no copy, the same kernels every
  call (so a pmapped call replays whole: pmap_replay.py).
- Every psum (pmax, pmin) of one dtype that a step runs at one point goes as one flat
  buffer, as XLA's all-reduce combiner and DDP's gradient buckets do: one round of copies
  for all gradients, not one per array.
- all_gather: each device's value to its send buffer, uploaded by every other device.
- ppermute: the source's value to its send buffer, uploaded by the destination.
- psum_scatter, all_to_all: `collective_host.HOST_RULES` on the host (the devices' values
  downloaded, waited for, combined by NumPy, uploaded). The NumPy fallback runs every
  collective that way.
- Across processes of one host whose GPUs share memory (one GPU each): an all-reduce in
  one round through the processes' GPU memory (`pmap_process_peer`).
- Across processes (netcl.distributed), elsewhere: an all-reduce combines the devices'
  parts locally, waits for them on the host, reduces them across the processes with MPI's
  Allreduce in place in pinned memory, and every device uploads them; with one device per
  process whose buffers are host memory MPI reads the input and writes the output where
  they are instead, with no copy, or reduces in place an input that nothing reads
  afterwards (`pmap_host_memory`). Other collectives gather every process's values with MPI and run
  the host rule.
"""
import hashlib
from dataclasses import dataclass

import numpy as np
import pyopencl as cl

from ..core import commands, dtypes, peer_memory
from ..core.shapes import prod
from ..core.array import Array
from ..core.kernels import compute_ctype, grid_1d, kernel, load, storage_ctype, store
from ..primitives.collective_host import HOST_RULES
from ..primitives.collectives import (all_gather_p, axis_index_p, pmax_p, pmin_p, ppermute_p,
                                      psum_p)
from ..primitives.elementwise import add_p, max_p, min_p
from ..primitives.views import reshape, transpose
from .pmap_pack import pack, pack_into
from . import pmap_host_memory as host_memory
from . import pmap_arrivals, pmap_staging
from . import pmap_process_peer as process_peer


def run_collectives(eqns, env, devices, world=None, overwritable=None, routes=None):
    """Enqueue the collective equations `eqns` (independent of one another) on every device:
    `env[i]` maps variable ids to device i's values and receives the outputs. With a
    `world` (netcl.distributed: several processes, each running this with its own devices,
    in axis order process by process) the collectives span the processes.
    `overwritable(var id)`: whether an all-reduce may write its result over that input on
    every device (nothing reads it afterwards and no other array holds its buffer); None:
    none may. `routes`: `route_collectives(eqns, world)`, which a caller running the same
    equations again keeps (None: worked out here)."""
    if devices[0].queue is None:                    # the NumPy fallback
        for e in eqns:
            _host_collective(e, env, devices, world)
        return
    if routes is None:
        routes = route_collectives(eqns, world)
    for e, run in routes.singles:
        if run is None:
            _host_collective(e, env, devices, world)
        else:
            run(e, env, devices)
    for bucket in routes.buckets:
        _bucketed_all_reduce(bucket, env, devices, world, overwritable)
    for d in devices:
        d.queue.flush()     # (other devices' queues wait on these copies)


@dataclass(frozen=True)
class _Bucket:
    """All-reduces that run as one flat buffer: one primitive and dtype, their equations,
    each input's element count, and across processes the description their arrival round
    compares (`_describe`; None within one process)."""
    prim: object
    dtype: np.dtype
    eqns: tuple
    sizes: tuple
    what: str


@dataclass(frozen=True)
class Routes:
    """How `run_collectives` runs a group of collective equations in `world`: `singles`,
    (equation, its device rule, or None for the host rule) in order, then the all-reduce
    `buckets`. The same for every call of a compiled step: pmap keeps it, so a call pays
    for the enqueueing, not for sorting and describing the collectives again."""
    world: object
    singles: tuple
    buckets: tuple


def route_collectives(eqns, world=None):
    """The Routes of the collective equations `eqns` (independent of one another) in
    `world` (None: one process)."""
    buckets, singles = {}, []
    for e in eqns:
        dtype = e.inputs[0].aval.dtype if e.inputs else None
        if e.prim in _COMBINE and dtype != dtypes.bool_ and \
                (world is None or dtype in _MPI_DTYPES or process_peer.available(world)):
            buckets.setdefault((e.prim, dtype), []).append(e)
        elif e.prim in _DIRECT and world is None:
            singles.append((e, _DIRECT[e.prim]))
        else:
            singles.append((e, None))
    return Routes(world, tuple(singles), tuple(
        _Bucket(prim, dtype, tuple(group), tuple(prod(e.inputs[0].aval.shape) for e in group),
                None if world is None else
                _describe(prim.name, [e.inputs[0].aval for e in group]))
        for (prim, dtype), group in buckets.items()))


def only_commands(routes, devices):
    """Whether running `routes` (one process) on `devices` enqueues kernels and nothing
    else on the devices' queues: every all-reduce ordered by the GPUs' arrival counts, no
    other collective but axis_index (which enqueues nothing). Such a pmapped call can be
    replayed whole (pmap_replay.py)."""
    if routes.world is not None or any(e.prim is not axis_index_p for e, _ in routes.singles):
        return False
    return not routes.buckets or (peer_memory.available(devices) and all(
        0 < sum(b.sizes) * b.dtype.itemsize <= ONE_ROUND_BYTES for b in routes.buckets))


# ---- all-reduce ------------------------------------------------------------------------------

_COMBINE = {psum_p: add_p, pmax_p: max_p, pmin_p: min_p}


# what MPI reduces in place (float16 goes the host path, MPI has no half type)
_MPI_DTYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.uint32)


def _bucketed_all_reduce(bucket, env, devices, world, overwritable=None):
    """All-reduce the inputs of `bucket`'s equations (one collective, one dtype) as one flat
    buffer."""
    prim, dtype, eqns, sizes = bucket.prim, bucket.dtype, bucket.eqns, bucket.sizes
    if world is not None and process_peer.available(world):
        return process_peer.all_reduce(prim, dtype, eqns, sizes, env, world, bucket.what)
    if world is None and 1 < len(devices) and 0 < sum(sizes) * dtype.itemsize <= ONE_ROUND_BYTES:
        return _one_round_bucket(prim, dtype, eqns, sizes, env, devices)
    flats = [_pack([env[i][e.inputs[0].id] for e in eqns], dtype) for i in range(len(devices))]
    # (several inputs are packed into a new buffer, which the result may overwrite)
    in_place = len(eqns) > 1 or (overwritable is not None and overwritable(eqns[0].inputs[0].id))
    reduced = _all_reduce(prim, dtype, flats, devices, world, bucket.what, in_place)
    for i, y in enumerate(reduced):
        _unpack(y, [e.outputs[0] for e in eqns], env[i])


def _pack(xs, dtype):
    """(array, element offset, size): the values of `xs` (one device's) end to end; the
    array must outlive the collective's enqueueing (its buffer goes back to the pool)."""
    if len(xs) == 1 and xs[0]._contig:
        return xs[0], xs[0].offset, xs[0].size
    flat = pack(xs, dtype)
    return flat, 0, flat.size


def _unpack(y, outvars, env):
    """The outputs `outvars` from the flat reduced array `y` (dense, from its offset), each
    its own dense array."""
    if len(outvars) == 1:
        v = outvars[0]
        shape = tuple(v.aval.shape)
        if y.shape == shape and y.weak_type == v.aval.weak_type:
            env[v.id] = y       # (a 1-d value: the reduced array itself)
            return
        env[v.id] = Array(y.device, y._buf, y._storage, shape, y.dtype, _strides(shape),
                          y.offset, v.aval.weak_type)
        return
    at, isz = y.offset, y.dtype.itemsize
    for v in outvars:
        out = Array.empty(y.device, tuple(v.aval.shape), y.dtype, v.aval.weak_type)
        if out.size:
            cl.enqueue_copy(y.device.queue, out._buf, y._buf, src_offset=at * isz,
                            byte_count=out.size * isz)
        at += out.size
        env[v.id] = out


def _strides(shape):
    from ..core.shapes import contiguous_strides
    return contiguous_strides(tuple(shape))


def _parts(n, count):
    """[(start, stop)]: `n` elements cut into `count` parts (multiples of 16 elements but
    the last, so that parts start aligned)."""
    step = -(-n // count)
    step = -(-step // 16) * 16
    return [(min(k * step, n), min((k + 1) * step, n)) for k in range(count)]


# Up to this many bytes per device a bucket's all-reduce takes one round (every device
# uploads every other's whole value) instead of two: small values cost a round's latency
# and the host's enqueueing, not bytes.
ONE_ROUND_BYTES = 4 << 20

# The most outputs one combine-and-scatter kernel writes (kernel arguments are limited).
_SCATTER_OUTPUTS = 32


def _one_round_bucket(prim, dtype, eqns, sizes, env, devices):
    """The bucket's all-reduce in one round: each device packs its inputs end to end and
    downloads them into its send buffer; each uploads the other devices' send buffers, and
    kernels combine the values in device order, its own read where they are (every device
    computes the same sums), and write each output."""
    count, n, isz = len(devices), sum(sizes), dtype.itemsize
    if peer_memory.available(devices):
        try:
            group = pmap_arrivals.device_arrivals(devices)
            sends = group.send_buffers(n * isz)
        except peer_memory.PeerMemoryError as e:    # (out of device memory, say)
            peer_memory.disable(devices, e)
        else:
            return _one_round_in_peer_memory(prim, dtype, eqns, sizes, env, devices, group,
                                             sends)
    sends, sent, own = [], [], []
    for i, d in enumerate(devices):
        send = pmap_staging.staging(d, "send", n * isz, devices)
        # (the values end to end by one kernel, then one copy: a command each costs more)
        flat, start, _ = _pack([env[i][e.inputs[0].id] for e in eqns], dtype)
        last = send.download(d.queue, 0, flat._buf, start * isz, n * isz, send.claim())
        sends.append(send)
        sent.append(last)
        own.append((flat, start))
        d.queue.flush()
    for k, d in enumerate(devices):
        others = Array.empty(d, ((count - 1) * n,), dtype)
        for slot, i in enumerate(i for i in range(count) if i != k):
            sends[i].upload(d.queue, 0, others._buf, slot * n * isz, n * isz, sent[i])
        outs = [Array.empty(d, tuple(e.outputs[0].aval.shape), dtype,
                            e.outputs[0].aval.weak_type) for e in eqns]
        flat, start = own[k]
        for kern, first, stop, total, at in _scatter_kernels(prim, d, k, dtype, count,
                                                             tuple(sizes)):
            if at[0] != start:          # (a scalar argument costs PyOpenCL ~10 us)
                kern.set_arg(1, np.int64(start))
                at[0] = start
            kern.set_arg(0, flat._buf)
            kern.set_arg(2, others._buf)
            for j, o in enumerate(outs[first:stop]):
                kern.set_arg(3 + j, o._buf)
            g, lws = grid_1d(d, total)
            commands.launch(d.queue, kern, g, lws)
        for e, o in zip(eqns, outs):
            env[k][e.outputs[0].id] = o


def _one_round_in_peer_memory(prim, dtype, eqns, sizes, env, devices, group, sends):
    """`_one_round_bucket` where every device's send buffer is its own memory, which the
    others read (peer memory), ordered on the GPUs by their arrival counts (`group`,
    pmap_arrivals): each device packs its inputs straight into its send buffer (`sends`;
    the half its count's parity picks), signals its arrival and waits for the others', and
    its combine kernels read every send buffer where it is, the others' over the peer
    link: no copy, no event between the queues, and the same commands every call."""
    count, n = len(devices), sum(sizes)
    for i, d in enumerate(devices):
        pack_into(sends[i].on(d), [env[i][e.inputs[0].id] for e in eqns], dtype,
                  parity=(group.own_count(i), n))
    group.arrive()
    for k, d in enumerate(devices):
        outs = [Array.empty(d, tuple(e.outputs[0].aval.shape), dtype,
                            e.outputs[0].aval.weak_type) for e in eqns]
        for kern, first, stop, total, _ in _scatter_kernels(prim, d, k, dtype, count,
                                                            tuple(sizes), peer=True,
                                                            parity=True):
            for i, send in enumerate(sends):
                kern.set_arg(i, send.on(d))
            kern.set_arg(count, group.own_count(k))
            for j, o in enumerate(outs[first:stop]):
                kern.set_arg(count + 1 + j, o._buf)
            g, lws = grid_1d(d, total)
            commands.launch(d.queue, kern, g, lws)
        for e, o in zip(eqns, outs):
            env[k][e.outputs[0].id] = o


def _scatter_kernels(prim, device, k, dtype, count, sizes, peer=False, parity=False):
    """[(kernel, first output, stop, elements, [its start argument as set])] of device `k`
    of `count`: kernels that combine its own values with the others' uploaded (with
    `peer`: every device's values read from its send buffer; with `parity` too, from the
    half of it its arrival count picks) and write outputs [first, stop) (empty ones
    skipped), built once per bucket layout."""
    key = (prim, device, k, dtype, count, sizes, peer, parity)
    got = _KERNELS.get(key)
    if got is not None:
        return got
    starts = [sum(sizes[:j]) for j in range(len(sizes))]
    live = [j for j, m in enumerate(sizes) if m]
    groups = [live[a:a + _SCATTER_OUTPUTS] for a in range(0, len(live), _SCATTER_OUTPUTS)]
    n = sum(sizes)
    got = _KERNELS[key] = []
    for group in groups:
        base = starts[group[0]]
        total = starts[group[-1]] + sizes[group[-1]] - base
        source, name = _scatter_source(prim, dtype, count, k, n, base, total,
                                       [(starts[j] - base, sizes[j]) for j in group], peer,
                                       parity)
        got.append((kernel(device, source, name), group[0], group[-1] + 1, total, [None]))
    # (outputs not in a group are empty: their arrays need no kernel)
    return got


def _scatter_source(prim, dtype, count, k, n, base, total, ranges, peer=False,
                    parity=False):
    """OpenCL C of one combine-and-scatter kernel of device `k` (its name from a hash of
    its body): the values of devices 0..count-1 in order, k's from `own` (at `start`), the
    others' from their slots of `others`; with `peer`, device i's from `v<i>` (its send
    buffer), with `parity` n elements further where the count, raised for this
    all-reduce, is even (pack_into wrote there before raising it)."""
    template = _template(prim, dtype)
    T, C = storage_ctype(dtype), compute_ctype(dtype)
    if peer:
        at = "h + f" if parity else "f"
        sources = [load(dtype, f"v{i}", at) for i in range(count)]
    else:
        sources = [load(dtype, "own", "start + f") if i == k else
                   load(dtype, "others", f"{(i if i < k else i - 1) * n} + f")
                   for i in range(count)]
    lines = [f"if (i >= {total}) return;", f"const long f = {base} + i;"]
    if parity:
        lines.append(f"const long h = (count[0] & 1) ? 0 : {n};")
    lines += [f"{C} a = {sources[0]};", f"{C} b;"]
    for value in sources[1:]:
        lines += [f"b = {value};", f"a = {template.format('a', 'b')};"]
    for j, (start, m) in enumerate(ranges):
        lines.append(f"if (i < {start + m}) {{ {store(dtype, f'y{j}', f'i - {start}', 'a')} "
                     "return; }")
    inputs = [f"__global const {T}* v{i}" for i in range(count)] if peer else \
        [f"__global const {T}* own", "const long start", f"__global const {T}* others"]
    if parity:
        inputs.append("__global const volatile int* count")
    params = ", ".join(inputs + [f"__global {T}* y{j}" for j in range(len(ranges))])
    body = "  const long i = get_global_id(0);\n  " + "\n  ".join(lines)
    name = f"netcl_{prim.name}_scatter_" + hashlib.sha1(body.encode()).hexdigest()[:12]
    return f"__kernel void {name}({params}) {{\n{body}\n}}\n", name


def _all_reduce(prim, dtype, flats, devices, world=None, what=None, in_place=False):
    """Per device an (n,) array: the elementwise combination (prim) of every device's
    flat value; `flats[i]` is (array, element offset, n) on devices[i]. With a `world`,
    the devices' combined parts are combined across the processes by MPI's Allreduce in
    pinned memory before every device uploads them (after the processes' arrival round,
    which checks that they all reduce `what`), or, with one device whose buffers are host
    memory, where they are (`in_place`: the result may overwrite the flat value)."""
    count, n, isz = len(devices), flats[0][2], dtype.itemsize
    if count == 1 and world is not None and n:
        (d,), ((x, off, _),) = devices, flats
        what = what or f"{prim.name} of {dtype.name} ({n},)"
        if host_memory.addressable(d, x):
            return [host_memory.direct_all_reduce(world, prim, dtype, d, x, off, n, in_place,
                                                  what)]
        if d.target.host_memory_buffers and (in_place or n * isz >= host_memory.MAPPED_BYTES):
            return [host_memory.mapped_all_reduce(world, prim, dtype, d, x, off, n, in_place,
                                                  what)]
        return [_pinned_all_reduce(world, prim, dtype, d, x, off, n, what)]
    outs = [Array.empty(d, (n,), dtype) for d in devices]
    if not n:
        return outs
    parts = _parts(n, count)
    # reduce-scatter: every device sends the parts it does not own ...
    # (across processes MPI reduces the results in host memory)
    stage = pmap_staging.pinned if world is not None else \
        (lambda d, role, nbytes: pmap_staging.staging(d, role, nbytes, devices))
    sends, sent = [], []
    for i, (d, (x, off, _)) in enumerate(zip(devices, flats)):
        send = stage(d, "send", n * isz)
        wait = send.claim()
        sent.append({j: send.download(d.queue, a * isz, x._buf, (off + a) * isz,
                                      (b - a) * isz, wait)
                     for j, (a, b) in enumerate(parts) if j != i and b > a})
        sends.append(send)
        d.queue.flush()
    # ... and combines its own part with the others'
    for k, (d, (x, off, _)) in enumerate(zip(devices, flats)):
        a, b = parts[k]
        if b == a:
            continue
        others = Array.empty(d, ((count - 1) * (b - a),), dtype)
        slot = 0
        for i in range(count):
            if i != k:
                sends[i].upload(d.queue, a * isz, others._buf, slot * (b - a) * isz,
                                (b - a) * isz, sent[i][k])
                slot += 1
        _combine(prim, d, dtype, count - 1, outs[k]._buf, x._buf, others._buf, b - a, off + a,
                 a)
    if count == 1 and world is None:
        return outs
    # all-gather: every device publishes its combined part and uploads the others'
    results, published = [], []
    for k, d in enumerate(devices):
        a, b = parts[k]
        result = stage(d, "result", n * isz)
        wait = result.claim()
        published.append(result.download(d.queue, a * isz, outs[k]._buf, a * isz,
                                          (b - a) * isz, wait) if b > a else None)
        results.append(result)
        d.queue.flush()
    if world is not None:
        _mpi_all_reduce(world, prim, dtype, n, what, published, results, parts)
    for k, d in enumerate(devices):
        for i, (a, b) in enumerate(parts):
            if (i != k or world is not None) and b > a:
                results[i].upload(d.queue, a * isz, outs[k]._buf, a * isz, (b - a) * isz,
                                  published[i] if world is None else None)
    return outs


def _mpi_all_reduce(world, prim, dtype, n, what, published, results, parts):
    """Combine part i of `results[i]`'s pinned memory across the processes (MPI's
    Allreduce in place), once the copies `published` have landed there and every process
    has arrived at this collective (`what`). The host waits here: MPI reads host memory."""
    from mpi4py import MPI
    isz = dtype.itemsize
    cl.wait_for_events([e for e in published if e is not None])
    # (after the wait: a process whose device hangs does not arrive either)
    world.comm.arrive(what or f"{prim.name} of {dtype.name} ({n},)")
    op = {psum_p: MPI.SUM, pmax_p: MPI.MAX, pmin_p: MPI.MIN}[prim]
    for i, (a, b) in enumerate(parts):
        if b > a:
            world.comm.raw.Allreduce(MPI.IN_PLACE,
                                     results[i].host[a * isz:b * isz].view(dtype), op=op)


def _pinned_all_reduce(world, prim, dtype, device, x, off, n, what):
    """A new (n,) array: the processes' combination (prim) of x's n elements from element
    `off`, through pinned memory: x's value goes there as it is, MPI reduces it there (in
    place, unless a process keeps its input: into the pinned send buffer, unused on this
    path), and it comes back (two copies; the general path makes three)."""
    q, isz, nbytes = device.queue, dtype.itemsize, n * dtype.itemsize
    result = pmap_staging.pinned(device, "result", nbytes)
    published = result.download(q, 0, x._buf, off * isz, nbytes, result.claim())
    q.flush()
    cl.wait_for_events([published])
    # (after the wait: a process whose device hangs does not arrive either)
    source = result
    if world.comm.arrive(what, agree=True):
        host_memory.mpi_combine(world.comm.raw, prim, result.host[:nbytes].view(dtype))
    else:
        source = pmap_staging.pinned(device, "send", nbytes)
        wait = source.claim()
        if wait:
            cl.wait_for_events(wait)        # (the host writes it: its last uploads first)
        host_memory.mpi_combine(world.comm.raw, prim, result.host[:nbytes].view(dtype),
                     source.host[:nbytes].view(dtype))
    out = Array.empty(device, (n,), dtype)
    source.upload(q, 0, out._buf, 0, nbytes, None)
    return out


_KERNELS = {}


def _template(prim, dtype):
    """The C spelling ({0}, {1}) of the collective's elementwise combination: add's, max's
    or min's own."""
    op = _COMBINE[prim]
    return op.lowering if isinstance(op.lowering, str) else op.lowering((dtype, dtype), dtype)


def _combine(prim, device, dtype, count, y, x, others, m, x_start, y_start):
    """y[y_start + i] = op(x[x_start + i], others[0*m + i], ..., others[(count-1)*m + i])
    for i < m, with op the elementwise spelling of add/max/min (their table's)."""
    key = (device, prim, dtype, count)
    k = _KERNELS.get(key)
    if k is None:
        template = _template(prim, dtype)
        T, C = storage_ctype(dtype), compute_ctype(dtype)
        name = f"netcl_{prim.name}_combine_{count}"
        lines = [f"{C} a = {load(dtype, 'x', 'x_start + i')};", f"{C} b;"]
        for s in range(count):
            lines += [f"b = {load(dtype, 'others', f'{s} * m + i')};",
                      f"a = {template.format('a', 'b')};"]
        lines.append(store(dtype, "y", "y_start + i", "a"))
        source = (f"__kernel void {name}(__global {T}* y, __global const {T}* x, "
                  f"__global const {T}* others, const long m, const long x_start, "
                  "const long y_start) {\n  const long i = get_global_id(0);\n"
                  "  if (i >= m) return;\n  " + "\n  ".join(lines) + "\n}\n")
        k = _KERNELS[key] = kernel(device, source, name, [None, None, None, np.int64, np.int64,
                                                          np.int64])
    k.set_args(y, x, others, m, x_start, y_start)
    g, lws = grid_1d(device, m)
    commands.launch(device.queue, k, g, lws)


# ---- all_gather, ppermute, axis_index --------------------------------------------------------

def _sent(env, v, devices, senders):
    """Each sender's value of `v` downloaded whole to its send buffer: {i: (x, event)}."""
    out = {}
    for i in senders:
        x = env[i][v.id]
        x = x if x._contig else x._dense()
        send = pmap_staging.staging(devices[i], "send", max(x.size * x.dtype.itemsize, 1),
                                    devices)
        ev = send.download(devices[i].queue, 0, x._buf, x.offset * x.dtype.itemsize,
                           x.size * x.dtype.itemsize, send.claim()) if x.size else None
        out[i] = (send, x, ev)
        devices[i].queue.flush()
    return out


def _all_gather(e, env, devices):
    count, v = len(devices), e.inputs[0]
    shape, dtype = tuple(v.aval.shape), v.aval.dtype
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    sent = _sent(env, v, devices, range(count))
    axis, tiled = e.params["axis"], e.params["tiled"]
    for k, d in enumerate(devices):
        stacked = Array.empty(d, (count,) + shape, dtype)
        for i, (send, x, ev) in sent.items():
            if not nbytes:
                continue
            if i == k:
                cl.enqueue_copy(d.queue, stacked._buf, x._buf, src_offset=x.offset *
                                dtype.itemsize, dst_offset=k * nbytes, byte_count=nbytes)
            else:
                send.upload(d.queue, 0, stacked._buf, i * nbytes, nbytes, ev)
        y = stacked
        if axis:
            y = transpose(y, tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1,
                                                                             len(shape) + 1)))
        if tiled:
            y = reshape(y, shape[:axis] + (count * shape[axis],) + shape[axis + 1:])
        env[k][e.outputs[0].id] = y._dense()


def _ppermute(e, env, devices):
    v, perm = e.inputs[0], e.params["perm"]
    sent = _sent(env, v, devices, sorted({s for s, _ in perm}))
    source_of = {t: s for s, t in perm}
    for k, d in enumerate(devices):
        out = Array.empty(d, tuple(v.aval.shape), v.aval.dtype, v.aval.weak_type)
        nbytes = out.size * out.dtype.itemsize
        if nbytes and k in source_of:
            send, _, ev = sent[source_of[k]]
            send.upload(d.queue, 0, out._buf, 0, nbytes, ev)
        elif nbytes:
            cl.enqueue_fill_buffer(d.queue, out._buf, np.uint8(0), 0, nbytes)
        env[k][e.outputs[0].id] = out


_AXIS_INDEX = {}    # (device, index) -> its int32 0-d array (read only: never donated)


def _axis_index(e, env, devices):
    for k, d in enumerate(devices):
        x = _AXIS_INDEX.get((d, k))
        if x is None:
            x = _AXIS_INDEX[(d, k)] = Array.from_numpy(d, np.asarray(k, np.int32))
        env[k][e.outputs[0].id] = x


_DIRECT = {all_gather_p: _all_gather, ppermute_p: _ppermute, axis_index_p: _axis_index}


# ---- the host path ---------------------------------------------------------------------------

def _describe(name, avals, params=None):
    """A collective as the processes' arrival round compares and names it: "psum of float32
    (4, 3), (10,)"."""
    shapes = ", ".join(str(tuple(a.shape)) for a in avals)
    dtypes_ = sorted({a.dtype.name for a in avals})
    extra = [f"{k}={v!r}" for k, v in sorted((params or {}).items()) if k != "axis_name"]
    return f"{name} of {'/'.join(dtypes_)} {shapes}" + (" " + ", ".join(extra) if extra else "")


def _host_collective(eqn, env, devices, world=None):
    """Run one collective with its host rule: the devices' inputs downloaded to pinned
    memory and waited for, the rule applied by NumPy, the results uploaded. With a `world`
    every process's inputs are gathered (MPI allgather) and the rule runs on all of them in
    every process, which keeps its own devices' results."""
    n = len(devices)
    ins = [[env[i][v.id] for i in range(n)] for v in eqn.inputs]
    if devices[0].queue is None:        # the NumPy fallback: values are host arrays already
        shards = [[np.asarray(x) for x in xs] for xs in ins]
    else:
        shards, events = [], []
        for k, xs in enumerate(ins):
            row = []
            for i, x in enumerate(xs):
                x = x if x._contig else x._dense()
                nbytes = x.size * x.dtype.itemsize
                region = pmap_staging.pinned(devices[i], ("host-in", k), max(nbytes, 1))
                wait = region.claim()
                if nbytes:
                    events.append(region.download(devices[i].queue, 0, x._buf,
                                                  x.offset * x.dtype.itemsize, nbytes, wait))
                row.append(region.host[:nbytes].view(x.dtype).reshape(x.shape))
            shards.append(row)
        if events:
            cl.wait_for_events(events)
    rule = HOST_RULES[eqn.prim]
    total, first = n, 0
    if world is not None:                           # per process: per input, per device
        every = world.comm.allgather(shards, what=_describe(eqn.prim.name, [
            v.aval for v in eqn.inputs], eqn.params))
        shards = [[s for process in every for s in process[k]] for k in range(len(shards))]
        total, first = n * world.count, n * world.index
    results = rule(*shards, **eqn.params) if shards else rule(total, **eqn.params)
    outs = results if eqn.prim.multiple_results else [results]
    outs = [per_device[first:first + n] for per_device in outs]
    for k, (v, per_device) in enumerate(zip(eqn.outputs, outs)):
        for i, d in enumerate(devices):
            value = np.asarray(per_device[i], v.aval.dtype)
            if d.queue is None or not value.size:
                env[i][v.id] = Array.from_numpy(d, value, v.aval.weak_type)
                continue
            region = pmap_staging.pinned(d, ("host-out", k), value.nbytes)
            wait = region.claim()
            if wait:
                cl.wait_for_events(wait)    # (the host writes it: the last uploads must be done)
            region.host[:value.nbytes] = value.reshape(-1).view(np.uint8)
            out = Array.empty(d, value.shape, value.dtype, v.aval.weak_type)
            region.readers.append(cl.enqueue_copy(d.queue, out._buf,
                                                  region.host[:value.nbytes],
                                                  is_blocking=False))
            env[i][v.id] = out
