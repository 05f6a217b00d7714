"""jit's optimisation pipeline: named passes IR -> IR, run in the order of `PASSES`.

Each pass is a `Pass(name, run)` whose `run(ir, ctx)` returns a new IR; `ctx` (a
`PassContext`) carries what passes share: the device compiled for and the 0-d literals that
generated code inlines. After every pass the IR can be checked (`check_ir`: every variable
defined once, before its readers) and written out:

- `NETCL_CHECK_IR=1` checks the IR after each pass (the test suite sets it);
- `NETCL_DUMP_IR=dir` writes `dir/<n>_<function>/<k>_<pass>.txt` after each pass.

>>> from netcl.transforms.passes import PASSES
>>> [p.name for p in PASSES][:3]
['strip_identities', 'dce', 'cse']
"""
import itertools
import os
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import kernels
from ..core.array import Array
from ..core.devices import Device, default_device
from ..core.ir import IR, pretty
from .epilogue_fusion import fuse_epilogues
from .fusion import (cse, dce, fold_literals, forward_scalar_broadcasts, fuse, hoist_reductions,
                     hoist_scalars, sink_casts_through_broadcasts, sink_scalars,
                     strip_identities)
from .executable import launcher_for
from .horizontal_fusion import fuse_horizontally
from .plan import assign_in_place, is_view, unbound_values
from .row_fusion_pass import row_fuse


@dataclass
class PassContext:
    """What the passes of one compilation share."""
    device: Device
    literals: dict = field(default_factory=dict)   # var id -> Python scalar inlined in code
    donated: frozenset = frozenset()   # argument numbers whose buffers the call may reuse
    deferred: list = field(default_factory=list)   # kernels.BuildRequest not built yet


@dataclass(frozen=True)
class Pass:
    name: str
    run: Callable[[IR, PassContext], IR]
    doc: str = ""


def _literals(ir, ctx):
    """0-d constants (Python scalars in the traced code) become literals, propagated through
    scalar arithmetic; equations whose every output folded run no kernel (their outputs
    become 0-d constants on the device, which kernels that fuse them still inline)."""
    for v, c in zip(ir.constvars, ir.consts):
        if isinstance(c, Array) and c.shape == () and c.device is not None:
            ctx.literals[v.id] = c.item()
    ctx.literals = fold_literals(ir, ctx.literals)
    folded = [e for e in ir.eqns if e.outputs and all(o.id in ctx.literals for o in e.outputs)]
    if not folded:
        return ir
    outs = [o for e in folded for o in e.outputs]
    # fresh arrays, not the shared scalar cache: an output of the call may be donated later
    consts = [Array.from_numpy(ctx.device, np.asarray(ctx.literals[o.id], o.aval.dtype),
                               weak_type=o.aval.weak_type) for o in outs]
    return dce(IR(ir.invars, list(ir.constvars) + outs, list(ir.consts) + consts,
                  [e for e in ir.eqns if not any(e is f for f in folded)], ir.outvars))


def _build_kernels(ir, ctx):
    """Build every program the call's launchers will ask for, together (one compiler run
    per device, options and contraction state: kernels.build_together), where each would
    otherwise be built alone at its first launch. The launchers are built over unbound
    values with builds deferred (kernels.deferring), which records the sources they ask
    for; a launcher that builds a second program after its first is walked again."""
    device = ctx.device
    if device.is_numpy:
        return ir
    wanted = list(ctx.deferred)
    values = unbound_values(ir, device)
    for _ in range(3):
        with kernels.deferring(wanted):
            for e in ir.eqns:
                if is_view(e):
                    continue
                try:
                    launcher_for(e.prim, [values[v.id] for v in e.inputs], e.params)
                except kernels.Deferred:
                    pass
                except Exception:   # noqa: BLE001 - a launcher that needs bound arrays:
                    pass            # it builds at the first call, which reports any error
        if not wanted:
            break
        kernels.build_together(wanted)
        wanted = []
    return ir


PASSES = (
    Pass("strip_identities", lambda ir, ctx: strip_identities(ir),
         "stop_gradient and casts back from a lossless widening dropped, reductions over "
         "size-1 axes become reshapes"),
    Pass("dce", lambda ir, ctx: dce(ir), "unused equations dropped"),
    Pass("cse", lambda ir, ctx: cse(ir), "identical equations computed once"),
    Pass("dce_after_cse", lambda ir, ctx: dce(ir), "what cse left unused dropped"),
    Pass("sink_casts", lambda ir, ctx: sink_casts_through_broadcasts(ir),
         "casts read only through broadcasts move after them, into the readers' groups"),
    Pass("fold_literals", _literals, "0-d constants inlined and folded"),
    Pass("row_fuse", lambda ir, ctx: row_fuse(ir, ctx.literals),
         "row groups (softmax, norms, losses) become one kernel each"),
    Pass("forward_scalar_broadcasts", lambda ir, ctx: forward_scalar_broadcasts(ir),
         "elementwise readers read 0-d values directly"),
    Pass("hoist_scalars", lambda ir, ctx: hoist_scalars(ir),
         "0-d equations gathered so that they fuse together"),
    Pass("fuse_elementwise", lambda ir, ctx: fuse(ir, ctx.literals),
         "maximal elementwise groups become one kernel each"),
    Pass("fuse_epilogues", lambda ir, ctx: fuse_epilogues(ir, ctx.device, ctx.deferred),
         "products and column sums take the group that reads them"),
    Pass("hoist_reductions", lambda ir, ctx: hoist_reductions(ir),
         "reductions run just after their inputs are produced"),
    Pass("sink_scalars", lambda ir, ctx: sink_scalars(ir),
         "0-d steps run just before their first reader"),
    Pass("fuse_horizontally", lambda ir, ctx: fuse_horizontally(ir),
         "independent groups gathered at the start (their inputs exist) or the end (nothing "
         "reads them), each gathering one kernel"),
    Pass("assign_in_place", lambda ir, ctx: assign_in_place(ir, ctx.donated),
         "outputs written over inputs that die there (donated arguments included)"),
    Pass("build_kernels", _build_kernels,
         "every kernel the call launches built, as few programs as can hold them"),
)


class IRCheckError(AssertionError):
    """A pass produced an IR that breaks an invariant (a bug in netcl, not in user code)."""


def check_ir(ir, after="(input)"):
    """Raise IRCheckError unless every variable is defined once, before any reader, and
    every output is defined; `after` names the pass for the message."""
    defined = set()

    def define(v, what):
        if v.id in defined:
            raise IRCheckError(f"after {after}: {what} {v!r} is defined twice\n{pretty(ir)}")
        defined.add(v.id)
    if len(ir.constvars) != len(ir.consts):
        raise IRCheckError(f"after {after}: {len(ir.constvars)} constvars but "
                           f"{len(ir.consts)} constants")
    for v in list(ir.constvars) + list(ir.invars):
        define(v, "input")
    for k, e in enumerate(ir.eqns):
        for v in e.inputs:
            if v.id not in defined:
                raise IRCheckError(f"after {after}: equation {k} ({e.prim.name}) reads "
                                   f"{v!r} before it is defined\n{pretty(ir)}")
        outs = e.outputs if e.prim.multiple_results else e.outputs[:1]
        if not e.prim.multiple_results and len(e.outputs) != 1:
            raise IRCheckError(f"after {after}: equation {k} ({e.prim.name}) has "
                               f"{len(e.outputs)} outputs")
        for v in outs:
            define(v, f"equation {k} ({e.prim.name}) output")
    for v in ir.outvars:
        if v.id not in defined:
            raise IRCheckError(f"after {after}: output {v!r} is never defined\n{pretty(ir)}")


_dumps = itertools.count()


def _flag(name):
    return os.environ.get(name, "") not in ("", "0")


def optimize(ir, device=None, name="fun", donated=frozenset()):
    """Run `PASSES` over `ir` for `device`, checking and dumping as the environment asks;
    `donated`: the numbers of the arguments whose buffers the call may reuse."""
    ctx = PassContext(device or default_device(), donated=frozenset(donated))
    check = _flag("NETCL_CHECK_IR")
    dump = os.environ.get("NETCL_DUMP_IR")
    folder = None
    if dump:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60]
        folder = os.path.join(dump, f"{next(_dumps):04d}_{safe}")
        os.makedirs(folder, exist_ok=True)
        _write(folder, 0, "traced", ir)
    if check:
        check_ir(ir)
    for k, p in enumerate(PASSES, 1):
        ir = p.run(ir, ctx)
        if check:
            check_ir(ir, p.name)
        if folder:
            _write(folder, k, p.name, ir)
    return ir


def _write(folder, k, name, ir):
    with open(os.path.join(folder, f"{k:02d}_{name}.txt"), "w") as f:
        f.write(pretty(ir) + "\n")
