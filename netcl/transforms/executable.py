"""What a compiled call runs: `Executable`, the steps of an optimised IR over slots of arrays.

Its first run binds every step through the eager interpreter's launcher lookup and records
the launchers; later runs call them as one generated straight-line function
(`_straight_line`), dropping each intermediate at its last use so the buffer pool hands it to
a later step. Steps whose primitive allows it write their outputs over inputs that die there
(`_overwritable`, `_in_place`). jit keeps one per signature; pmap one per device and segment.
"""
import sys

from ..core.array import Array
from ..core.devices import default_device
from ..core.eval import eval_interpreter
from .epilogue_fusion import EpiloguePrimitive
from .fusion import FusedPrimitive
from .row_fusion import RowFusedPrimitive


# primitives that jit's passes make for one compiled function
_GENERATED = (FusedPrimitive, RowFusedPrimitive, EpiloguePrimitive)


class Executable:
    """What a compiled jit call runs: steps over an environment of arrays."""

    def __init__(self, ir, out_tree, device=None):
        self.ir = ir
        self.device = device        # where it runs (None: the default device)
        self.out_tree = out_tree
        n_in = len(ir.invars)
        slot = {}
        for i, v in enumerate(ir.invars):
            slot[v.id] = i
        for i, v in enumerate(ir.constvars):
            slot[v.id] = n_in + i
        for e in ir.eqns:
            for o in e.outputs:
                slot.setdefault(o.id, len(slot))
        self.n_slots = len(slot)
        self.const_slots = [(slot[v.id], c) for v, c in zip(ir.constvars, ir.consts)]
        last_use = {}
        for k, e in enumerate(ir.eqns):
            for v in e.inputs:
                last_use[v.id] = k
        keep = {v.id for v in ir.outvars} | {v.id for v in ir.constvars}
        steps = []
        for k, e in enumerate(ir.eqns):
            free = tuple(slot[v.id] for v in set(e.inputs)
                         if last_use.get(v.id) == k and v.id not in keep)
            steps.append((e.prim, e.params, tuple(slot[v.id] for v in e.inputs),
                          tuple(slot[o.id] for o in e.outputs), e.prim.multiple_results, free))
        self.steps = steps
        # per step, [(input position, argument number or None)]: inputs dying there that an
        # output may overwrite (arguments only where donated; see _in_place)
        invar_at = {v.id: i for i, v in enumerate(ir.invars)}
        self._overwritable = [_overwritable(e, k, last_use, keep, invar_at)
                              for k, e in enumerate(ir.eqns)]
        self.donated = frozenset()  # argument numbers donated by the caller (jit sets them)
        self.donated_at = None      # their positions among the call's leaves (jit's cache)
        self.cache_key = None       # its key in the jitted function's cache
        self.out_slots = [slot[v.id] for v in ir.outvars]
        # After the first run: the launcher of every step, valid for arguments laid out as
        # then (jit's own calls always are: dense, offset 0, shapes and dtypes from the key).
        self._launchers = None
        self._arg_layouts = None
        self.build_outputs = (out_tree.builder() if out_tree is not None else None)
        self._plan = None   # [(launcher, input slots, output slot(s), multi, freed slots)]
        self._straight = None   # the plan as one function (see _straight_line)
        self._sliced = None     # the same as a generator (see in_slices)

    def __call__(self, flat_args):
        """Run on arrays (any layout: a call with other layouts than the first takes the
        generic path, which looks every launcher up)."""
        if self._launchers is None:
            dense = all(isinstance(a, Array) and a._contig and a.offset == 0 for a in flat_args)
            return self._run(flat_args, record=dense)   # record only what jit will pass
        if tuple(a._layout_id() if isinstance(a, Array) else None
                 for a in flat_args) != self._arg_layouts:
            return self._run(flat_args, record=False)
        return self.run_dense(flat_args)

    def run_dense(self, flat_args):
        """Run on arrays laid out as jit passes them (dense, offset 0)."""
        plan = self._plan
        if plan is None:
            if self._launchers is None:
                return self._run(flat_args, record=True)
            return self._execute(flat_args, self._launchers)
        return self._straight(*flat_args)   # the hot path of every call after the first

    def in_slices(self, flat_args, size=16):
        """A generator that enqueues this call `size` launches per `next()` and returns
        the outputs (StopIteration's value): pmap alternates the devices' calls so that every
        device has work queued early, not only after the previous device's whole step."""
        if self._plan is None or tuple(a._layout_id() if isinstance(a, Array) else None
                                       for a in flat_args) != self._arg_layouts:
            return _finished(self(flat_args))
        if self._sliced is None:
            self._sliced = _straight_line(self._plan, len(flat_args), self.const_slots,
                                          self.out_slots, yield_every=size)
        return self._sliced(*flat_args)

    def _run(self, flat_args, record):
        """Run through the eager interpreter's launcher lookup (recording the launchers), on
        the device compiled for: steps with no array input (an iota) run on the default
        device, which need not be the arguments' one."""
        if self.device is not None and self.device is not default_device():
            with default_device(self.device):
                return self._run_here(flat_args, record)
        return self._run_here(flat_args, record)

    def _run_here(self, flat_args, record):
        if not record:
            return self._execute(flat_args, [None] * len(self.steps))
        recorded = []

        def lookup(prim, args, params):
            launch = eval_interpreter.launcher(prim, args, params,
                                               shared=not isinstance(prim, _GENERATED))
            recorded.append(launch)
            return launch
        outs = self._execute(flat_args, None, lookup)
        self._arg_layouts = tuple(a._layout_id() if isinstance(a, Array) else None
                                  for a in flat_args)
        self._launchers = recorded
        if all(launch is not None for launch in recorded):
            self._plan = []
            for launch, (_, _, ins, outs_, multi, free), over in zip(recorded, self.steps,
                                                                      self._overwritable):
                donors = [j for j, arg in over if arg is None or arg in self.donated]
                if donors and hasattr(launch, "reusing"):
                    launch = _in_place(launch.reusing, donors)
                self._plan.append((launch, ins, outs_ if multi else outs_[0], multi, free))
            self._straight = _straight_line(self._plan, len(flat_args), self.const_slots,
                                            self.out_slots)
        return outs

    def _execute(self, flat_args, launchers, lookup=None):
        """The step loop: step k runs launchers[k] (None: prim.bind), or lookup's launcher."""
        env = [None] * self.n_slots
        env[:len(flat_args)] = flat_args
        for s, c in self.const_slots:
            env[s] = c
        for k, (prim, params, ins, outs, multi, free) in enumerate(self.steps):
            args = [env[i] for i in ins]
            launch = launchers[k] if lookup is None else lookup(prim, args, params)
            res = launch(*args) if launch is not None else prim.bind(*args, **params)
            if multi:
                for s, r in zip(outs, res):
                    env[s] = r
            else:
                env[outs[0]] = res
            for s in free:  # last use: the buffer can go back to the pool now
                env[s] = None
        return [env[s] for s in self.out_slots]

    @property
    def kernels(self):
        return [s[0] for s in self.steps]


def _finished(value):
    """A generator that returns `value` at once."""
    return value
    yield   # (never reached: it makes this a generator function)


def _straight_line(plan, n_args, const_slots, out_slots, yield_every=None):
    """The recorded plan as one generated Python function ``(*arguments) -> outputs``: each
    step a call on local variables, each freed slot a ``del``. The step loop it replaces
    built an argument list per step from an environment list and cleared freed entries one
    by one, and cost more host time per call: the objects a call touches are out of the
    caches after a train step's kernels, so what counts is how few it touches.
    With `yield_every`, a generator that yields after every that many steps."""
    env = {f"K{slot}": c for slot, c in const_slots}
    lines = [f"s{slot} = K{slot}" for slot, _ in const_slots]
    for k, (launch, ins, out, multi, free) in enumerate(plan):
        env[f"L{k}"] = launch
        call = f"L{k}({', '.join(f's{i}' for i in ins)})"
        if multi:
            lines.append(f"{''.join(f's{o}, ' for o in out)}= {call}" if out else call)
        else:
            lines.append(f"s{out} = {call}")
        if free:
            lines.append(f"del {', '.join(f's{i}' for i in free)}")
        if yield_every and (k + 1) % yield_every == 0 and k + 1 < len(plan):
            lines.append("yield")
    if yield_every and len(plan) < yield_every:
        lines.append("yield")       # (a generator however short)
    lines.append(f"return [{', '.join(f's{i}' for i in out_slots)}]")
    src = f"def run({', '.join(f's{i}' for i in range(n_args))}):\n" + \
        "".join(f"    {ln}\n" for ln in lines)
    exec(src, env)
    return env["run"]


def _overwritable(e, k, last_use, keep, invar_at):
    """[(position, argument number or None)] of the inputs of equation `e` (the k-th) that
    its outputs may overwrite: ones its primitive's `in_place_inputs` names, read nowhere
    else in `e`, dying at `e` (not outputs of the call or constants), with the shape and
    element size of an output."""
    rule = getattr(e.prim, "in_place_inputs", None)
    if rule is None:
        return []
    allowed = set(rule(len(e.inputs)))
    fits = {(o.aval.shape, o.aval.dtype.itemsize) for o in e.outputs}
    found, seen = [], set()
    for j, v in enumerate(e.inputs):
        if v.id in seen:
            continue
        seen.add(v.id)
        at = [i for i, u in enumerate(e.inputs) if u.id == v.id]
        if all(i in allowed for i in at) and last_use.get(v.id) == k and v.id not in keep \
                and (v.aval.shape, v.aval.dtype.itemsize) in fits:
            found.append((j, invar_at.get(v.id)))
    return found


def _in_place(reusing, donors):
    """A plan step running `reusing` (a launcher's variant whose outputs take offered
    buffers, see pool.output_storage) with the buffers of its inputs at `donors`: dense
    arrays whose buffer nothing else shares (a view would hold the same Storage)."""
    def launch(*xs):
        return reusing([x._storage for x in [xs[j] for j in donors]
                        if x._contig and x.offset == 0 and sys.getrefcount(x._storage) == 2],
                       *xs)
    return launch
