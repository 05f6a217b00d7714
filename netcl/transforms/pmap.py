"""pmap: the same function on every local device, each on its own shard, with collectives.

`pmap(f, axis_name)(*args)` stages `f` once per signature on one shard's abstract values,
with `axis_name` bound (so `lax.psum(x, axis_name)` and the other collectives trace into the
IR), and cuts the IR at its collectives into segments. Each segment is compiled per device
by jit's pipeline (passes, fusion, epilogues) into an executable; a call enqueues each
segment on every device, then the collectives that end it (`pmap_exchange`: copies through
pinned host memory ordered by events, or on GPUs that read each other's memory kernels
ordered by the GPUs' arrival counts; reductions in kernels on the devices), and goes on
with the next segment: the host waits for nothing, so the devices run concurrently and the
next call is enqueued while this one runs. Where a call enqueues nothing but kernels, its
2nd and 3rd calls are recorded whole and later calls replay them, one recording per
device (pmap_replay.py).

Inputs are mapped along `in_axes` (None: the same value on every device); outputs come back
as `ShardedArray`s (`out_axes=0`), whose shards stay on their devices: passed back into a
pmap over the same devices they are used where they are. Under grad, jvp or vmap a pmapped
call is a `pmap_call` whose rules run pmaps of its derivatives or of its vmap (pmap_call.py).

>>> step = netcl.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
>>> step(jnp.arange(2.0) + 1)          # on 2 devices: ShardedArray([0.333, 0.667])
"""
import functools
import importlib
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..core.array import Array
from ..core.devices import default_device, devices as all_devices
from ..core.eval import eval_interpreter, to_array
from ..core.ir import IR
from ..core.sharded import ShardedArray
from ..core.tracing import ShapedArray, Tracer, current_interpreter
from ..tree_util import tree_flatten, tree_unflatten
from .batching import _broadcast_prefix
from .executable import Executable
from .passes import optimize
from . import pmap_replay
from .pmap_exchange import only_commands, route_collectives, run_collectives
from ..distributed import world
from .staging import stage

_devices = importlib.import_module("netcl.core.devices")   # (the module: its LOCK)


# ---- devices ---------------------------------------------------------------------------------

def local_devices():
    """The devices of this process that pmap maps over by default: the OpenCL devices of the
    default device's kind (all GPUs, or all CPU devices), in discovery order; in a job of
    several processes, the ones this process took (netcl.distributed.initialize).

    >>> netcl.local_devices()
    [Device(0: cpu 'pthread-...' ...), Device(1: cpu 'pthread-...' ...)]
    """
    chosen = _devices.process_devices()
    if chosen is not None:
        return chosen
    kind = default_device().kind
    return [d for d in all_devices() if d.kind == kind]


def local_device_count():
    """len(local_devices())."""
    return len(local_devices())


def device_count():
    """The number of devices pmap maps over: the local ones, or with netcl.distributed
    those of every process."""
    from ..distributed import world
    w = world()
    return local_device_count() if w is None else len(w.devices)


def _check_devices(devices, where):
    devices = list(local_devices() if devices is None else devices)
    from ..core.devices import Device
    for d in devices:
        if not isinstance(d, Device):
            raise TypeError(f"{where}: devices must be netcl Devices, got {type(d).__name__}")
    return devices


def device_put_sharded(shards, devices):
    """A ShardedArray (or a pytree of them) from per-device values: `shards[i]`, a pytree of
    arrays with one structure and shapes, goes to `devices[i]`.

    >>> xs = netcl.device_put_sharded([jnp.ones(3), jnp.zeros(3)], netcl.local_devices()[:2])
    """
    devices = _check_devices(devices, "device_put_sharded")
    if not isinstance(shards, (list, tuple)) or len(shards) != len(devices):
        raise ValueError(f"device_put_sharded: expected a list of {len(devices)} shards (one "
                         f"per device), got {type(shards).__name__}"
                         + (f" of {len(shards)}" if isinstance(shards, (list, tuple)) else ""))
    flats = [tree_flatten(s) for s in shards]
    tree = flats[0][1]
    for i, (_, t) in enumerate(flats):
        if t != tree:
            raise ValueError(f"device_put_sharded: shard {i} has structure {t}, shard 0 {tree}")
    leaves = [ShardedArray([_put(flat[k], d, "device_put_sharded", copy=True)
                            for (flat, _), d in zip(flats, devices)])
              for k in range(len(flats[0][0]))]
    return tree_unflatten(tree, leaves)


def device_put_replicated(x, devices):
    """A ShardedArray (or a pytree of them) holding `x` once on each of `devices`.

    >>> params = netcl.device_put_replicated(params, netcl.local_devices())
    """
    devices = _check_devices(devices, "device_put_replicated")
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [ShardedArray([_put(leaf, d, "device_put_replicated", copy=True)
                                               for d in devices]) for leaf in leaves])


def _put(x, device, where, copy=False):
    """`x` on `device`: itself where it is there already (unless `copy`: values a caller
    may donate must not alias the array they came from)."""
    if isinstance(x, Array):
        x._check_live(where)
        if x.device is device:
            if not copy:
                return x
            from ..primitives.elementwise import copy as copy_array
            return copy_array(x)
        return Array.from_numpy(device, x._to_host(where), x.weak_type)
    if isinstance(x, Tracer):
        raise TypeError(f"{where}: got a traced value; call it outside of transforms")
    return to_array(x, where, device)


# ---- the compiled program --------------------------------------------------------------------

class _Segment:
    """Equations between two collectives: run by one executable per device."""

    def __init__(self, ir, executables):
        self.ir = ir
        self.executables = executables      # one per device


class _Program:
    """A pmapped function compiled for one signature: segments, and after each the
    collective equations that run between it and the next."""

    def __init__(self, invars, segments, collectives, outvars, out_tree, const_outs,
                 last_read=None, live_after=None):
        self.invars = invars
        self.segments = segments
        self.collectives = collectives
        self.outvars = outvars
        self.out_tree = out_tree
        self.const_outs = const_outs    # var id -> per device, outputs that are constants
        self.out_axes = None            # out_axes per output leaf (the first call sets it)
        # per collective group, how its collectives run (pmap_exchange.Routes; the first
        # call in a world works it out)
        self.routes = [None] * len(collectives)
        self.replays = pmap_replay.CallReplays()   # the call replayed whole, per device
        self.invar_ids = frozenset(v.id for v in invars)
        # per collective group: the inputs read there for the last time, by one collective,
        # made by a segment or arguments (donated ones may be overwritten); the variables
        # read there, after it or returned, and the arguments (a segment may return one
        # array for several variables)
        self.last_read = last_read or [frozenset()] * len(collectives)
        self.live_after = live_after or [()] * len(collectives)
        # per device, the ids of the segments' constants (a segment may return one)
        self.const_ids = [{id(c) for seg in segments for c in seg.executables[i].ir.consts}
                          for i in range(len(segments[0].executables) if segments else 0)]


@dataclass(frozen=True)
class _CallPlan:
    """What a pmapped function's calls with one argument structure share."""
    axes: tuple             # in_axes of every argument leaf (keyword leaves: 0)
    donated: list           # positions of the donated arguments' leaves


def _split_at_collectives(ir, is_collective):
    """[(eqns of a segment, the collectives run after it)], as few segments as the chains of
    dependent collectives allow: an equation joins the first segment after every collective
    it depends on, so independent collectives (every gradient's pmean) run together, with
    one wait per device for all of them."""
    at = {}                         # var id -> the segment from which it is available
    stage = []
    for e in ir.eqns:
        k = max((at.get(v.id, 0) for v in e.inputs), default=0)
        stage.append(k)
        for o in e.outputs:
            at[o.id] = k + 1 if is_collective(e.prim) else k
    n = max(stage, default=0) + 1
    parts = [([], []) for _ in range(n)]
    for e, k in zip(ir.eqns, stage):
        parts[k][1 if is_collective(e.prim) else 0].append(e)
    return parts


def _unique(variables):
    """The variables in order of first appearance, each once."""
    seen, out = set(), []
    for v in variables:
        if v.id not in seen:
            seen.add(v.id)
            out.append(v)
    return out


def _compile(ir, out_tree, devices):
    from ..primitives.collective_host import HOST_RULES
    parts = _split_at_collectives(ir, lambda p: p in HOST_RULES)
    const_of = {v.id: c for v, c in zip(ir.constvars, ir.consts)}
    # what is read after each point: a segment outputs what later segments, collectives or
    # the call's outputs read
    later = [set() for _ in parts]
    needed = {v.id for v in ir.outvars}
    for k in range(len(parts) - 1, -1, -1):
        later[k] = set(needed)
        eqns, colls = parts[k]
        for e in eqns + colls:
            needed |= {v.id for v in e.inputs}
    known = {v.id for v in ir.invars}      # values held per device, by variable id
    owned = set(known)                      # arguments, and what segments make
    segments, collectives, last_read, live_after = [], [], [], []
    for k, (eqns, colls) in enumerate(parts):
        produced = {o.id for e in eqns for o in e.outputs}
        owned |= produced
        last_read.append(_read_last(colls, later[k], owned))
        live_after.append(tuple(later[k] | {v.id for v in ir.invars} |
                                {v.id for c in colls for v in c.inputs}))
        read = _unique(v for e in eqns for v in e.inputs)
        reads = [v for v in read if v.id in known and v.id not in produced]
        consts = [(v, const_of[v.id]) for v in read if v.id in const_of]
        after = later[k] | {v.id for c in colls for v in c.inputs}
        outs = [o for o in _unique(o for e in eqns for o in e.outputs) if o.id in after]
        executables = []
        for d in devices:
            cs = [c if not isinstance(c, Array) or c.device is d else _put(c, d, "pmap")
                  for _, c in consts]
            seg_ir = IR(reads, [v for v, _ in consts], cs, eqns, outs)
            executables.append(Executable(optimize(seg_ir, d, "pmap"), None, d))
        segments.append(_Segment(IR(reads, [], [], eqns, outs), executables))
        collectives.append(colls)
        known |= produced | {o.id for c in colls for o in c.outputs}
    const_outs = {v.id: [_put(const_of[v.id], d, "pmap") for d in devices]
                  for v in ir.outvars if v.id in const_of}
    return _Program(ir.invars, segments, collectives, ir.outvars, out_tree, const_outs,
                    last_read, live_after)


def _read_last(colls, later, owned):
    """The ids of the variables of `owned` that one collective of `colls` reads, once, and
    nothing after them (`later`) reads: an all-reduce may write its result over them."""
    reads = Counter(v.id for c in colls for v in c.inputs)
    return frozenset(vid for vid, n in reads.items()
                     if n == 1 and vid in owned and vid not in later)


def _overwritable(program, k, env, donated):
    """For the collectives of group k: whether the value of a variable they read may be
    overwritten by its collective's result on every device (`run_collectives`): read there
    for the last time (an argument only if donated), and its buffer held by no other array
    (a view, a constant a segment returned, another variable's value that is the same
    array). None when no input qualifies."""
    last = program.last_read[k]
    if not last:
        return None

    def check(vid):
        if vid not in last or (vid in program.invar_ids and vid not in donated):
            return False
        live = [u for u in program.live_after[k] if u != vid]
        for i, values in enumerate(env):
            x = values[vid]
            if not isinstance(x, Array) or sys.getrefcount(x._storage) != 2 or \
                    id(x) in program.const_ids[i] or any(values.get(u) is x for u in live):
                return False
        return True
    return check


# Launches per slice when the devices' segments alternate (the last size repeats). The
# first slices are short so that every device starts almost at once: a device waits for the
# host to enqueue every other device's slice before its own, and enqueueing costs several
# microseconds a launch on GPUs. Later slices are long, so flushes stay few.
ENQUEUE_SLICES = (1, 2, 4, 8, 16)


def _run(program, per_device_inputs, devices, world=None, donated=frozenset()):
    """Per device, the outputs of one call (`donated`: the ids of the arguments' variables
    the caller donated): replayed whole where it can be (pmap_replay.py)."""
    def run_call():
        return _run_call(program, per_device_inputs, devices, world, donated)
    if world is not None:
        return run_call()
    return pmap_replay.run(program.replays, per_device_inputs, devices, run_call,
                           _alternate_locked, ENQUEUE_SLICES, lambda: _only_commands(
                               program, devices))


def _only_commands(program, devices):
    """Whether a call of `program` on `devices` enqueues kernels and nothing else (after
    its first call, which worked out its routes)."""
    return devices[0].queue is not None and all(
        routes is not None and only_commands(routes, devices)
        for routes, colls in zip(program.routes, program.collectives) if colls)


def _run_call(program, per_device_inputs, devices, world, donated):
    """`_run`, segment by segment."""
    n = len(devices)
    env = [{v.id: x for v, x in zip(program.invars, per_device_inputs[i])} for i in range(n)]
    for vid, per_device in program.const_outs.items():
        for i in range(n):
            env[i][vid] = per_device[i]
    for k, (seg, colls) in enumerate(zip(program.segments, program.collectives)):
        if seg.ir.eqns:
            _run_segment(seg, env, devices)
        if colls:
            # (across processes an all-reduce may reduce in place: run_collectives)
            overwritable = None if world is None else _overwritable(program, k, env, donated)
            routes = program.routes[k]
            if routes is None or routes.world is not world:
                routes = program.routes[k] = route_collectives(colls, world)
            with _devices.LOCK:     # (the pinned staging memory is shared)
                run_collectives(colls, env, devices, world, overwritable, routes)
    return [[env[i][v.id] for v in program.outvars] for i in range(n)]


def _run_segment(seg, env, devices):
    """Enqueue segment `seg` on every device (its outputs into `env[i]`)."""
    ins = [v.id for v in seg.ir.invars]
    outs = _alternate_locked([exe.in_slices([env[i][vid] for vid in ins], ENQUEUE_SLICES)
                              for i, exe in enumerate(seg.executables)], devices)
    for values, row in zip(env, outs):
        for v, o in zip(seg.ir.outvars, row):
            values[v.id] = o


def _alternate_locked(generators, devices):
    """The values the per-device `generators` of commands return, run a slice each in
    turn, each device's queue flushed after its slice: every device starts at once, where
    device by device the last would start a whole step's enqueueing late."""
    results = [None] * len(generators)
    with _devices.LOCK:         # (launchers share kernel objects between threads)
        running = dict(enumerate(generators))
        while running:
            for i, slices in list(running.items()):
                try:
                    next(slices)
                except StopIteration as done:
                    results[i] = done.value
                    del running[i]
                if devices[i].queue is not None:     # (the NumPy fallback has none)
                    devices[i].queue.flush()
    return results


# ---- pmap ------------------------------------------------------------------------------------

class Pmapped:
    """What `pmap(f)` returns; called like `f`."""

    def __init__(self, fun, axis_name, in_axes, out_axes, static, devices, donate, axis_size):
        functools.update_wrapper(self, fun)   # (first: fun's __dict__ must not win)
        self.fun = fun
        self._name = f"pmap({getattr(fun, '__name__', 'fun')})"     # (errors name it)
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.static = static
        self.devices = None if devices is None else _check_devices(devices, "pmap")
        self.donate = donate
        self.axis_size = axis_size
        self.cache = {}
        self._plans = {}        # (argument structure, argument count) -> _CallPlan

    def __call__(self, *args, **kwargs):
        interp = current_interpreter()
        under_call = interp is not eval_interpreter and \
            getattr(interp, "transform_name", None) in ("grad", "jvp", "vmap")
        if interp is not eval_interpreter and not under_call:
            raise NotImplementedError(
                f"{self._name}: called under {getattr(interp, 'transform_name', 'a transform')}"
                " (jit of a pmapped function); apply jit inside the pmapped function instead")
        name = self._name
        for i in self.static:
            if i >= len(args):
                raise ValueError(f"{name}: static_broadcasted_argnums={self.static} but the "
                                 f"call has {len(args)} positional arguments")
            try:
                hash(args[i])
            except TypeError:
                raise ValueError(f"{name}: static argument {i} of type "
                                 f"{type(args[i]).__name__} is not hashable") from None
        if self.static:
            dyn_pos = [i for i in range(len(args)) if i not in self.static]
            dyn = tuple(args[i] for i in dyn_pos)
        else:
            dyn_pos, dyn = range(len(args)), args
        raw, tree = tree_flatten((dyn, kwargs))
        plan = self._plans.get((tree, len(args)))
        if plan is None:
            plan = self._plans[(tree, len(args))] = self._plan(dyn, dyn_pos, tree, len(args))
        axes = plan.axes
        if under_call:      # (grad, jvp or vmap of the pmapped function: pmap_call.py)
            from .pmap_call import bind_pmap_call
            return bind_pmap_call(self, args, kwargs, dyn_pos, axes)
        leaves = [x if isinstance(x, (Array, ShardedArray)) else to_array(x, name)
                  for x in raw]
        mapped = self._mapped_shards(leaves, axes)
        if mapped is None:
            n = self._size(leaves, axes)
            devices = self._devices(n)
            per_device, signature = self._shard(leaves, axes, devices)
        else:
            devices, per_device, signature = mapped
        n = len(devices)
        w = world()
        static = tuple((i, args[i]) for i in self.static)
        key = (tree, signature, axes, static, tuple(devices))
        program = self.cache.get(key)
        if program is None:
            avals = [ShapedArray(*leaf) for leaf in signature]
            program = self.cache[key] = self._compile(tree, static, avals, devices,
                                                      self._global_size(n, w))
        rows = _run(program, per_device, devices, w, frozenset(
            program.invars[k].id for k in plan.donated) if w is not None else frozenset())
        if plan.donated:
            self._delete_donated([raw[k] for k in plan.donated],
                                 {id(x) for row in rows for x in row})
        return self._outputs(rows, program, devices)

    def _plan(self, dyn, dyn_pos, tree, n_args):
        """How calls with this argument structure map and donate (checked once per
        structure): the in_axes entry of every leaf, and the leaves of donated arguments."""
        name = self._name
        in_axes = self.in_axes
        if isinstance(in_axes, (tuple, list)):
            if len(in_axes) != n_args:
                raise ValueError(f"{name}: in_axes has {len(in_axes)} entries but the call has "
                                 f"{n_args} positional arguments")
            in_axes = tuple(in_axes[i] for i in dyn_pos)
        elif in_axes is not None and not isinstance(in_axes, int):
            raise TypeError(f"{name}: in_axes must be an int, None or a tuple, got "
                            f"{type(in_axes).__name__}")
        axes = _broadcast_prefix(in_axes if isinstance(in_axes, tuple) else
                                 (in_axes,) * len(dyn), dyn, "in_axes")
        dyn_def, kw_def = tree.children()
        counts = [c.num_leaves for c in dyn_def.children()]
        starts = [sum(counts[:j]) for j in range(len(counts))]
        donated = [k for j, i in enumerate(dyn_pos) if i in self.donate
                   for k in range(starts[j], starts[j] + counts[j])]
        return _CallPlan(tuple(axes) + (0,) * kw_def.num_leaves, donated)

    def _size(self, leaves, axes):
        name = self._name
        sizes = {}
        for i, (x, a) in enumerate(zip(leaves, axes)):
            if a is None:
                continue
            if not isinstance(a, int):
                raise TypeError(f"{name}: in_axes entries must be ints or None, got {a!r}")
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"{name}: in_axes={a} is out of range for argument leaf {i} "
                                 f"of shape {tuple(x.shape)}")
            sizes.setdefault(x.shape[a % x.ndim], []).append(i)
        if len(sizes) > 1:
            raise ValueError(f"{name}: pmap got inconsistent sizes for array axes to be mapped: "
                             + "; ".join(f"size {s} for argument leaves {v}"
                                         for s, v in sizes.items()))
        if not sizes:
            if self.axis_size is None:
                raise ValueError(f"{name}: in_axes maps no argument; give axis_size")
            return self.axis_size
        n = next(iter(sizes))
        if self.axis_size is not None and self.axis_size != n:
            raise ValueError(f"{name}: axis_size={self.axis_size} but the mapped axes have "
                             f"size {n}")
        return n

    def _devices(self, n):
        avail = self.devices if self.devices is not None else local_devices()
        if self.devices is not None and len(avail) != n:
            raise ValueError(f"{self._name}: the mapped axis has size {n} but devices has "
                             f"{len(avail)} entries")
        if n > len(avail):
            raise ValueError(f"{self._name}: compiling a computation that requires {n} "
                             f"logical devices, but only {len(avail)} are available "
                             f"({avail}); set NETCL_CPU_DEVICES=N for N PoCL devices")
        if n < 1:
            raise ValueError(f"{self._name}: the mapped axis has size 0")
        return list(avail[:n])

    def _mapped_shards(self, leaves, axes):
        """`_size`, `_devices` and `_shard` at once where every argument leaf is a
        ShardedArray mapped along its first axis whose shards are dense, live and on the
        pmap's devices in order (a training loop's parameters, state and batches, which
        come back from the previous call so): (devices, per-device inputs, signature), or
        None (the general path checks, moves and reports)."""
        if not leaves or any(a != 0 or type(x) is not ShardedArray
                             for x, a in zip(leaves, axes)):
            return None
        n = len(leaves[0].shards)
        avail = self.devices if self.devices is not None else local_devices()
        if n > len(avail) or (self.devices is not None and len(avail) != n) or \
                (self.axis_size is not None and self.axis_size != n):
            return None
        devices = avail[:n]
        per_device = [[] for _ in devices]
        signature = []
        for x in leaves:
            shards = x.shards
            if len(shards) != n:
                return None
            for s, d, row in zip(shards, devices, per_device):
                if s.device is not d or s.deleted or not s._contig or s.offset:
                    return None
                row.append(s)
            s0 = shards[0]
            signature.append((tuple(s0.shape), s0.dtype, s0.weak_type))
        return list(devices), per_device, tuple(signature)

    def _shard(self, leaves, axes, devices):
        """Per device, its input leaves; and per leaf, one shard's (shape, dtype, weak_type):
        the compiled programs' key, a tuple of plain tuples (hashed and compared in C), the
        abstract values built from it only to compile."""
        n = len(devices)
        columns, signature = [], []
        for x, a in zip(leaves, axes):
            if a is None:
                shards = [_put(x, d, self._name) for d in devices] \
                    if not isinstance(x, ShardedArray) else [_put(x._as_array(), d, self._name)
                                                           for d in devices]
            elif isinstance(x, ShardedArray) and a % x.ndim == 0 and \
                    [s.device for s in x.shards] == devices:
                shards = [s._check_live(self._name) for s in x.shards]
            else:
                host = np.moveaxis(np.asarray(x), a, 0)
                # (ascontiguousarray makes a 0-d shard 1-d: reshape to the shard's shape)
                shards = [Array.from_numpy(d, np.ascontiguousarray(host[i]).reshape(
                    host.shape[1:]), x.weak_type) for i, d in enumerate(devices)]
            shards = [s if s._contig and s.offset == 0 else s._dense() for s in shards]
            columns.append(shards)
            s0 = shards[0]
            signature.append((tuple(s0.shape), s0.dtype, s0.weak_type))
        return [[col[i] for col in columns] for i in range(n)], tuple(signature)

    def _global_size(self, n, w):
        """The mapped axis's size over every process (each maps n devices of its own: its
        first n local devices, or the `devices` given to it)."""
        if w is None:
            return n
        sizes = w.comm.allgather(n)
        if len(set(sizes)) != 1:
            raise ValueError(f"{self._name}: the processes map axes of different sizes "
                             f"{sizes} (process {w.index}: {n}); each must pass one shard per "
                             "local device, the same number everywhere")
        return n * w.count

    def _compile(self, tree, static, avals, devices, n):
        from ..primitives.axis_env import axis_frame
        static_d = dict(static)

        def f(*leaves):
            dyn, kwargs = tree_unflatten(tree, list(leaves))
            it = iter(dyn)
            full = [static_d[i] if i in static_d else next(it)
                    for i in range(len(dyn) + len(static_d))]
            return self.fun(*full, **kwargs)
        with axis_frame(self.axis_name, n):
            ir, out_tree = stage(f, tuple(avals))
        return _compile(ir, out_tree, devices)

    def _delete_donated(self, donated, outputs):
        """Delete the donated arguments' leaves (their shards, except those returned as they
        came, which are outputs now), so that a later use raises as in jit."""
        for x in donated:
            for s in (x.shards if isinstance(x, ShardedArray) else [x]):
                if isinstance(s, Array) and id(s) not in outputs:
                    s.delete()

    def _outputs(self, rows, program, devices):
        out_tree = program.out_tree
        n_out = len(rows[0])
        per_out = zip(*rows)        # (per output, its value on each device)
        out_axes = program.out_axes
        if out_axes is None:            # (once per program: the outputs' structure is fixed)
            template = tree_unflatten(out_tree, [0] * n_out) if n_out else None   # (leaves)
            out_axes = program.out_axes = (
                _broadcast_prefix(self.out_axes, template, "out_axes") if n_out else [])
        outs = []
        for shards, a in zip(per_out, out_axes):
            if a is None:
                outs.append(shards[0])
            elif a == 0:
                outs.append(ShardedArray(shards))
            else:
                stacked = np.stack([np.asarray(s) for s in shards], axis=a)
                outs.append(Array.from_numpy(devices[0], stacked, shards[0].weak_type))
        return tree_unflatten(out_tree, outs)


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, donate_argnums=(), axis_size=None):
    """Map `fun` over the leading axis (`in_axes`) of its arguments, one slice per device,
    with collectives over `axis_name` (`lax.psum`, `pmean`, `all_gather`, ...).

    >>> @functools.partial(netcl.pmap, axis_name="batch")
    ... def step(params, x):
    ...     g = netcl.grad(loss)(params, x)
    ...     return netcl.tree_util.tree_map(lambda a: lax.pmean(a, "batch"), g)
    """
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes,
                                 out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums,
                                 devices=devices, donate_argnums=donate_argnums,
                                 axis_size=axis_size)
    if not callable(fun):
        raise TypeError(f"pmap: expected a function, got {type(fun).__name__}")
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    donate = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
    for what, nums in (("static_broadcasted_argnums", static), ("donate_argnums", donate)):
        for i in nums:
            if not isinstance(i, int) or isinstance(i, bool) or i < 0:
                raise TypeError(f"pmap: {what} must be non-negative ints, got {i!r}")
    if set(static) & set(donate):
        raise ValueError("pmap: an argument cannot be both static and donated")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 1):
        raise ValueError(f"pmap: axis_size must be a positive int, got {axis_size!r}")
    return Pmapped(fun, axis_name, in_axes, out_axes, static, devices, donate, axis_size)
