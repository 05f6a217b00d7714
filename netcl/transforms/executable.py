"""What a compiled call runs: `Executable`, an optimised IR and, after its first call, its Plan.

Its first call binds every step through the eager interpreter's launcher lookup (checking
it as eager calls are checked) and records the Launches; the `Plan` (plan.py) of those,
over slots of arrays, runs every later call as one generated straight-line function,
dropping each intermediate at its last use so the buffer pool hands it to a later step, and
writing outputs over the inputs the IR's `overwrites` name. Its second and third calls are
recorded as the OpenCL commands they enqueue, and later calls replay those (replay.py).
jit keeps one per signature; pmap one per device and segment; loops one per body.
"""
import os
import sys

from ..core.array import Array
from ..core.devices import default_device
from ..core.eval import eval_interpreter
from . import replay
from .epilogue_fusion import EpiloguePrimitive
from .fusion import FusedPrimitive
from .horizontal_fusion import HorizontalPrimitive
from .plan import Plan, _donor
from .row_fusion import RowFusedPrimitive

# primitives that jit's passes make for one compiled function
_GENERATED = (FusedPrimitive, RowFusedPrimitive, EpiloguePrimitive, HorizontalPrimitive)


class Executable:
    """What a compiled jit call runs: an optimised IR, and its Plan once it has run."""

    def __init__(self, ir, out_tree, device=None):
        self.ir = ir
        self.device = device        # where it runs (None: the default device)
        self.out_tree = out_tree
        self.donated_at = None      # positions among the call's leaves of donated arrays
        self.cache_key = None       # its key in the jitted function's cache
        self.build_outputs = (out_tree.builder() if out_tree is not None else None)
        self.plan = None            # after the first call on dense arguments
        self._arg_layouts = None    # the layout ids the plan was built for
        self._run = None            # plan.run (the hot path of every call after the first)
        self._frees = None          # per equation, values that die there (see _frees)
        self._strided = {}          # equation index -> overwritten inputs that were not dense
        self._replay = None         # the plan's calls as recorded commands (replay.py)
        self._recordings_left = 0   # calls still to record before a replay (2 after the plan)
        self._signature = None      # the last recording's replay.signature

    @property
    def steps(self):
        return self.ir.eqns

    def __call__(self, flat_args):
        """Run on arrays of any layout: the first call builds the Plan for its layouts (a
        pmap segment after a collective takes views of the all-reduce's buffer), a later
        call with other layouts than the plan's takes the generic path, which binds every
        step."""
        if self.plan is not None and tuple(
                a._layout_id() if isinstance(a, Array) else None
                for a in flat_args) == self._arg_layouts:
            return self._run_plan(flat_args)
        if self.plan is None and all(isinstance(a, Array) for a in flat_args):
            return self._first_call(flat_args)
        return self._bind_each(flat_args)

    def run_dense(self, flat_args):
        """Run on arrays laid out as jit passes them (dense, offset 0)."""
        if self._run is None:
            return self._first_call(flat_args)
        return self._run_plan(flat_args)

    def _run_plan(self, flat_args):
        """The plan's call on arguments laid out as it was built for: replayed where it was
        recorded (replay.py), else run (recorded on the calls after the first)."""
        if replay.watched(self.device):     # (a recording of a whole pmapped call)
            return self.plan.run(*flat_args)
        rp = self._replay
        if rp is not None and rp.accepts(flat_args):
            return rp.run(flat_args)
        if self._recordings_left:
            return replay.drain(self._recording(flat_args, None))
        return self.plan.run(*flat_args)

    def in_slices(self, flat_args, sizes):
        """A generator that enqueues this call a slice of launches per `next()`, of
        `sizes[0]`, `sizes[1]`, ... launches (the last size repeating), and returns the
        outputs (StopIteration's value): pmap alternates the devices' calls so that every
        device has work queued early, not only after the previous device's whole step."""
        if self.plan is None or tuple(a._layout_id() if isinstance(a, Array) else None
                                      for a in flat_args) != self._arg_layouts:
            return _finished(self(flat_args))
        if replay.watched(self.device):     # (a recording of a whole pmapped call)
            return self.plan.in_slices(sizes)(*flat_args)
        rp = self._replay
        if rp is not None and rp.accepts(flat_args):
            return rp.in_slices(sizes)(flat_args)
        if self._recordings_left:
            return self._recording(flat_args, sizes)
        return self.plan.in_slices(sizes)(*flat_args)

    def _recording(self, flat_args, sizes):
        """The plan's call in slices (`sizes`; None: one) while a replay.Recorder watches
        it; two recordings that agree become the replay."""
        device = self.device or default_device()
        recorder = replay.Recorder(device)
        replay.start(recorder)
        try:
            if sizes is None:
                outs = self.plan.run(*flat_args)
            else:
                outs = yield from self.plan.in_slices(sizes)(*flat_args)
        finally:
            replay.stop(recorder)
        candidate = replay.build(recorder, flat_args, outs, self._donated_arguments())
        self._recordings_left -= 1
        if candidate is None:
            self._recordings_left = 0
        else:
            signature = replay.signature(candidate)
            if signature == self._signature:
                self._replay, self._recordings_left = candidate, 0
            self._signature = signature
        return outs

    def _donated_arguments(self):
        """Positions of the arguments whose buffers the plan's steps may write over."""
        plan = self.plan
        return {step.inputs[j] for step in plan.steps for j in step.donated
                if step.inputs[j] < plan.n_args}

    def _on_device(self, fn, *args):
        """fn(*args) with the compiled-for device as the default: steps with no array input
        (an iota) run on the default device, which need not be the arguments' one."""
        if self.device is not None and self.device is not default_device():
            with default_device(self.device):
                return fn(*args)
        return fn(*args)

    def _bind_each(self, flat_args):
        return self._on_device(self._execute, flat_args, None)

    def _first_call(self, flat_args):
        """Run binding every step, recording each one's Launch, and build the Plan."""
        recorded = []

        def lookup(prim, args, params):
            launch = launcher_for(prim, args, params)
            recorded.append(launch)
            return launch
        self._strided = {}
        outs = self._on_device(self._execute, flat_args, lookup)
        if all(launch is not None for launch in recorded):
            self.plan = Plan.build(self.ir, recorded, self._strided)
            self._arg_layouts = tuple(a._layout_id() for a in flat_args)
            # run_dense, jit's hot path, checks no layout: it takes plans of dense arguments
            # only (a call on dense arguments after others builds one)
            dense = all(a._contig and a.offset == 0 for a in flat_args)
            self._run = self.plan.run if dense else None
            device = flat_args[0].device if flat_args else self.device or default_device()
            self._recordings_left = 2 if replay.ENABLED and not device.is_numpy else 0
        return outs

    def _execute(self, flat_args, lookup=None):
        """The step loop over the IR: each step binds its primitive, or runs the Launch
        `lookup` gives (None: bind); values are dropped after their last use. Under
        NETCL_CHECK_IR, a buffer the IR lets a step overwrite must be held by that value
        alone (a view the in-place pass did not see would hold it too)."""
        ir = self.ir
        if self._frees is None:
            self._frees = _frees(ir)
        env = {v.id: x for v, x in zip(ir.invars, flat_args)}
        env.update((v.id, c) for v, c in zip(ir.constvars, ir.consts))
        arg_ids = {v.id for v in ir.invars}
        # (an output written over a donated argument shares the caller's dead array's buffer)
        arg_buffers = {id(getattr(x, "_storage", None)) for x in flat_args}
        for k, (e, frees) in enumerate(zip(ir.eqns, self._frees)):
            args = [env[v.id] for v in e.inputs]
            launch = None if lookup is None else lookup(e.prim, args, e.params)
            if launch is None:
                res = e.prim.bind(*args, **e.params)
            elif e.overwrites and launch.run_into is not None:
                strided = [j for j in e.overwrites if not _dense(args[j])]
                if strided:
                    self._strided[k] = frozenset(strided)
                res = launch.run_into(_offers(e, args, arg_ids, arg_buffers, strided), *args)
            else:
                res = launch.run(*args)
            del args
            if e.prim.multiple_results:
                for o, r in zip(e.outputs, res):
                    env[o.id] = r
            else:
                env[e.outputs[0].id] = res
            for vid in frees:       # last use: the buffer can go back to the pool now
                del env[vid]
        return [env[v.id] for v in ir.outvars]


_CHECK = os.environ.get("NETCL_CHECK_IR", "") not in ("", "0")


def launcher_for(prim, args, params):
    """The Launch a compiled call runs for `prim` on arrays laid out like `args` (bound or
    not): the eager interpreter's, except that the primitives jit's passes made for one
    function are built for it alone, not cached beside eager ones."""
    return eval_interpreter.launcher(prim, args, params,
                                     shared=not isinstance(prim, _GENERATED))


def _frees(ir):
    """Per equation, the ids of the values read there for the last time (not results of
    the call, arguments or constants)."""
    last_use = {}
    for k, e in enumerate(ir.eqns):
        for v in e.inputs:
            last_use[v.id] = k
    keep = {v.id for v in list(ir.outvars) + list(ir.constvars) + list(ir.invars)}
    return [tuple({v.id for v in e.inputs if last_use[v.id] == k and v.id not in keep})
            for k, e in enumerate(ir.eqns)]


def _dense(x):
    """Whether `x` is laid out densely from its buffer's start: an output written over its
    buffer is written at the index each element is read from. The IR does not know
    layouts: a reduction or scan of a permuted or reversed input returns its result in the
    input's memory order (a permuted view of a dense buffer), and an argument may be any
    view, so the plan drops the overwrites of inputs that are not dense."""
    return x._contig and x.offset == 0


def _offers(e, args, arg_ids, arg_buffers, strided=()):
    """The buffers equation `e` writes over (the IR's `overwrites`, but for the inputs
    `strided`, not dense) as the plan offers them: donated arguments where the caller holds
    no other array on them (plan._donor). Under NETCL_CHECK_IR, an intermediate offered
    must be the only array on its buffer (a primitive returning a view without saying so
    in `returns_view` would let the in-place pass write over a buffer a view still
    reads)."""
    offers = []
    for j in e.overwrites:
        if j in strided:
            continue
        x = args[j]
        if e.inputs[j].id in arg_ids:
            offers += _donor(x)
            continue
        if _CHECK and sys.getrefcount(x._storage) != 2 and id(x._storage) not in arg_buffers:
            raise AssertionError(f"jit: {e.prim.name} may not write over its input {j}: "
                                 "another array shares its buffer")
        offers.append(x._storage)
    return offers


def _finished(value):
    """A generator that returns `value` at once."""
    return value
    yield   # (never reached: it makes this a generator function)
