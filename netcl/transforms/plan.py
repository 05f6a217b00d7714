"""A compiled call's Plan: its launches over buffer slots, where each slot's buffer dies, and
which launches write their outputs over an input's buffer.

jit's passes end with `assign_in_place`, which decides in the IR which inputs each
equation's outputs overwrite (`Eqn.overwrites`). `Plan.build` pairs the optimised IR with
the Launch every equation got on the call's device for the call's argument layouts;
`plan.run(*arguments)` enqueues it. `Plan.kernels` lists what it launches (jit's
`lower().kernels`).

    >>> f = netcl.jit(lambda x: jnp.tanh(x) * 2 + 1)
    >>> [k.name for k in f.lower(jnp.ones(8)).kernels]
    ['fused_tanh_mul_add']
"""
from __future__ import annotations

import collections
import functools
import sys
from dataclasses import dataclass, field
from ..core.ir import IR, Eqn
from ..core.launch import Launch
from ..core.pool import bucket_size
from ..core.shapes import prod


# ---- the in-place decision, in the IR -------------------------------------------------------

def assign_in_place(ir, donated=frozenset()):
    """The IR with each equation's `overwrites` set: positions of its inputs whose buffers
    its outputs may take. Such an input is one its primitive allows (`in_place_inputs`),
    read nowhere else in the equation, with the shape and element size of an output, whose
    buffer nothing reads afterwards: not a result of the call, a constant, an argument
    unless donated (argument numbers in `donated`), a view, nor a buffer a live view reads.
    A primitive whose outputs are computed in independent parts (a horizontal kernel's
    segments) lists them in `in_place_segments() -> [(input positions, output positions)]`:
    an output may take only an input of its own part, read by no other part."""
    root = {}         # var id -> the var whose buffer it reads (views share their input's)
    for e in ir.eqns:
        if is_view(e):
            root[e.outputs[0].id] = root.get(e.inputs[0].id, e.inputs[0].id)
    last_use, readers_of = {}, {}
    for k, e in enumerate(ir.eqns):
        for v in e.inputs:
            last_use[v.id] = k
    for vid, r in root.items():
        readers_of.setdefault(r, []).append(vid)
    args = {v.id: i for i, v in enumerate(ir.invars)}
    keep = {v.id for v in ir.outvars} | {v.id for v in ir.constvars} | \
        {vid for vid, i in args.items() if i not in donated}
    keep |= {root.get(vid, vid) for vid in keep}   # (a result that is a view keeps its base)
    eqns = []
    for k, e in enumerate(ir.eqns):
        rule = getattr(e.prim, "in_place_inputs", None)
        if rule is None:
            eqns.append(e)
            continue
        allowed = set(rule(len(e.inputs)))
        segments = getattr(e.prim, "in_place_segments", None)
        parts = segments() if segments is not None else \
            [(range(len(e.inputs)), range(len(e.outputs)))]
        shared = {j for j, n in collections.Counter(j for ins, _ in parts for j in ins).items()
                  if n > 1}
        read_here = {v.id for v in e.inputs}
        chosen, seen = [], set()
        for ins, outs in parts:
            outputs = [e.outputs[i] for i in outs]
            fits = {(o.aval.shape, o.aval.dtype.itemsize) for o in outputs}
            # an output takes any offered buffer of its size class (pool.output_storage): an
            # input is offered only where every output of its class has its shape and
            # itemsize (an int32 output must not take a dying bool input's buffer of the
            # same class)
            by_class = {}
            for o in outputs:
                by_class.setdefault(_size_class(o.aval), set()).add(
                    (o.aval.shape, o.aval.dtype.itemsize))
            for j in ins:
                v = e.inputs[j]
                if v.id in seen or j in shared:
                    continue
                seen.add(v.id)
                views = readers_of.get(v.id, ())
                if v.id in root or v.id in keep or last_use[v.id] != k or \
                        (v.aval.shape, v.aval.dtype.itemsize) not in fits or \
                        len(by_class[_size_class(v.aval)]) > 1 or \
                        any(i not in allowed for i, u in enumerate(e.inputs) if u.id == v.id) or \
                        any(w in read_here or w in keep or last_use.get(w, -1) > k
                            for w in views):
                    continue
                chosen.append(j)
        eqns.append(Eqn(e.prim, e.inputs, e.params, e.outputs, tuple(sorted(chosen)))
                    if chosen else e)
    return IR(ir.invars, ir.constvars, ir.consts, eqns, ir.outvars)


def unbound_values(ir, device):
    """var id -> an array laid out as that value will be when the call runs on `device`
    with dense arguments, holding no memory (the constants are themselves): views laid out
    by their launchers, every other result dense. Passes and `lower()` build launches for
    these layouts without running anything (on the NumPy device, which has no layouts,
    every value is dense)."""
    from ..core.array import Array
    from ..core.eval import eval_interpreter

    def unbound(aval):
        return Array.unbound(device, aval.shape, aval.dtype, aval.weak_type)
    env = {v.id: unbound(v.aval) for v in ir.invars}
    env.update((v.id, c) for v, c in zip(ir.constvars, ir.consts))
    for e in ir.eqns:
        if is_view(e) and not device.is_numpy:
            args = [env[e.inputs[0].id]]
            env[e.outputs[0].id] = eval_interpreter.launcher(e.prim, args, e.params).run(*args)
        else:
            for o in e.outputs:
                env[o.id] = unbound(o.aval)
    return env


def is_view(e):
    """Whether equation `e` returns a view of its one input's buffer (no kernel, eagerly)."""
    return len(e.outputs) == 1 and len(e.inputs) == 1 and e.prim.returns_view(e)


def _size_class(aval):
    return bucket_size(prod(aval.shape) * aval.dtype.itemsize)


# ---- the plan ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One launch of a plan over its slots."""
    launch: Launch
    inputs: tuple          # slots read, in the launch's argument order
    outputs: tuple         # slots written
    multiple: bool         # the launch returns a tuple
    frees: tuple           # slots read for the last time here: their buffers go back to the pool
    overwrites: tuple = ()  # input positions whose buffers the outputs take
    donated: tuple = ()    # of those, the caller's donated arrays (see _donor)


@dataclass(frozen=True)
class Plan:
    """Launches over buffer slots: slots 0..n_args-1 are the arguments, then the constants,
    then every value the steps produce; `run(*arguments)` returns the `out_slots`."""
    steps: tuple
    n_args: int
    const_slots: tuple      # (slot, Array)
    out_slots: tuple
    _compiled: dict = field(default_factory=dict, compare=False, repr=False)

    @staticmethod
    def build(ir, launches, strided=None):
        """The plan of an optimised IR whose k-th equation runs `launches[k]`; `strided`
        maps equation indices to the inputs it must not write over after all (laid out
        other than densely in this plan's call: executable._dense)."""
        strided = strided or {}
        slot = {v.id: i for i, v in enumerate(list(ir.invars) + list(ir.constvars))}
        for e in ir.eqns:
            for o in e.outputs:
                slot.setdefault(o.id, len(slot))
        last_use = {}
        for k, e in enumerate(ir.eqns):
            for v in e.inputs:
                last_use[v.id] = k
        keep = {v.id for v in ir.outvars} | {v.id for v in ir.constvars}
        args = {v.id for v in ir.invars}
        steps = []
        for k, (e, launch) in enumerate(zip(ir.eqns, launches)):
            frees = tuple(sorted({slot[v.id] for v in e.inputs
                                  if last_use.get(v.id) == k and v.id not in keep}))
            over = tuple(j for j in e.overwrites
                         if launch.run_into is not None and j not in strided.get(k, ()))
            steps.append(Step(launch, tuple(slot[v.id] for v in e.inputs),
                              tuple(slot[o.id] for o in e.outputs), e.prim.multiple_results,
                              frees, over, tuple(j for j in over if e.inputs[j].id in args)))
        n_in = len(ir.invars)
        return Plan(tuple(steps), n_in,
                    tuple((n_in + i, c) for i, c in enumerate(ir.consts)),
                    tuple(slot[v.id] for v in ir.outvars))

    def run(self, *arguments):
        """Enqueue every step on these arguments (laid out as the plan was built for);
        returns the list of outputs."""
        fn = self._compiled.get(None)
        if fn is None:
            fn = self._compiled[None] = _straight_line(self)
        return fn(*arguments)

    def in_slices(self, sizes):
        """`run` as a generator function: each `next()` enqueues the next slice of steps,
        of `sizes[0]`, `sizes[1]`, ... steps (the last size repeating); the outputs are the
        StopIteration's value (pmap alternates its devices this way)."""
        fn = self._compiled.get(sizes)
        if fn is None:
            fn = self._compiled[sizes] = _straight_line(
                self, yield_after=_slice_ends(sizes, len(self.steps)))
        return fn

    @property
    def kernels(self):
        """The Kernels the plan launches in order; steps whose launch does not declare its
        kernels appear as None."""
        return [k for s in self.steps for k in (s.launch.kernels or (None,))]


def _donor(x):
    """[the storage of x], a donated argument, when no other array shares it: a view the
    caller kept of a donated array (netcl's views share buffers) must keep its values."""
    return [x._storage] if sys.getrefcount(x._storage) == 2 else []


@functools.lru_cache(maxsize=256)
def _slice_ends(sizes, n):
    """The step counts, below n, at which slices of `sizes` (a tuple, the last size
    repeating) end (a frozenset: every pmapped call asks again).

    >>> sorted(_slice_ends((1, 2, 4), 12))
    [1, 3, 7, 11]
    """
    ends, at = set(), 0
    for k in range(n):
        at += sizes[min(k, len(sizes) - 1)]
        if at >= n:
            break
        ends.add(at)
    return frozenset(ends)


def _straight_line(plan, yield_after=None):
    """The plan as one generated Python function ``(*arguments) -> outputs``: each step a
    call on local variables, each freed slot a ``del``. The objects a call touches are out
    of the caches after a train step's kernels, so what counts is how few it touches: no
    environment list, no per-step argument lists. With `yield_after` (a set of step
    counts), a generator that yields after those many steps."""
    env = {"_donor": _donor}
    lines = []
    for slot, c in plan.const_slots:
        env[f"K{slot}"] = c
        lines.append(f"s{slot} = K{slot}")
    for k, step in enumerate(plan.steps):
        ins = ", ".join(f"s{i}" for i in step.inputs)
        if step.overwrites:
            env[f"L{k}"] = step.launch.run_into
            own = [f"s{step.inputs[j]}._storage" for j in step.overwrites
                   if j not in step.donated]
            offers = " + ".join([f"[{', '.join(own)}]"] * bool(own) +
                                [f"_donor(s{step.inputs[j]})" for j in step.donated])
            call = f"L{k}({offers}, {ins})"
        else:
            env[f"L{k}"] = step.launch.run
            call = f"L{k}({ins})"
        if step.multiple:
            outs = "".join(f"s{o}, " for o in step.outputs)
            lines.append(f"{outs}= {call}" if outs else call)
        else:
            lines.append(f"s{step.outputs[0]} = {call}")
        if step.frees:
            lines.append(f"del {', '.join(f's{i}' for i in step.frees)}")
        if yield_after and k + 1 in yield_after:
            lines.append("yield")
    if yield_after is not None and not yield_after:
        lines.append("yield")       # (a generator however short)
    lines.append(f"return [{', '.join(f's{i}' for i in plan.out_slots)}]")
    src = f"def run({', '.join(f's{i}' for i in range(plan.n_args))}):\n" + \
        "".join(f"    {ln}\n" for ln in lines)
    exec(src, env)
    return env["run"]
