"""The row-fusion pass for jit: finds row groups in the IR and replaces each with one
`RowFusedPrimitive` (row_fusion.py, which says what a group is and how it compiles).

A group starts at a reduction over the last axis (or over everything) of a float array and
takes the elementwise work around it over the same rows: the values of the full shape, the
per-row values, the further last-axis reductions, the scalar tails of a loss (moved to the
end first so that they do not close the group), and full-shape elementwise producers that
only the group reads.
"""
from ..core import dtypes
from ..core.ir import IR, Eqn
from ..core.shapes import prod
from .fusion import emit_groups
from .row_fusion import _REDUCERS, RowFusedPrimitive


def _row_shapes(full, whole):
    """Shapes of per-row values: (R,) or (R, 1) for last-axis groups, () or (1, ...) for
    groups reducing everything (a single row)."""
    if whole:
        return {(), (1,) * len(full)}
    return {tuple(full[:-1]), tuple(full[:-1]) + (1,)}


def row_fuse(ir, scalar_literals):
    """Find row groups (each with at least one last-axis reduction) and replace them.

    Equations with 0-d results for the call's outputs only (a loss's sum over the per-row
    losses, its mean) that would close a group early move to the end first, so the group
    goes on: a classifier's log-softmax, per-row loss and logits gradient are one kernel."""
    late = []
    found = _row_fuse(ir, scalar_literals, late)
    if not late:
        return found
    at_end = set(late)
    eqns = [e for i, e in enumerate(ir.eqns) if i not in at_end] + [ir.eqns[i] for i in late]
    return _row_fuse(IR(ir.invars, ir.constvars, ir.consts, eqns, ir.outvars),
                     scalar_literals, None)


def _scalar_tails(ir):
    """Indices of the equations with 0-d results that only the call's outputs and other
    such equations read (a loss's sum, mean and sign)."""
    out_ids = {v.id for v in ir.outvars}
    consumers = {}
    for i, e in enumerate(ir.eqns):
        for v in e.inputs:
            consumers.setdefault(v.id, []).append(i)
    tails = set()
    for i in range(len(ir.eqns) - 1, -1, -1):
        if ir.eqns[i].outputs and all(
                o.aval.ndim == 0 and all(c in tails for c in consumers.get(o.id, ())) and
                (o.id in out_ids or o.id in consumers) for o in ir.eqns[i].outputs):
            tails.add(i)
    return tails


def _row_fuse(ir, scalar_literals, late):
    """row_fuse's grouping; with a list `late`, the indices of scalar tails (_scalar_tails)
    that would close a group by reading its per-row values are appended to it instead (with
    the tails reading them), and nothing is rewritten unless none were."""
    eqns = ir.eqns
    deferrable = _scalar_tails(ir) if late is not None else ()
    producer = {o.id: i for i, e in enumerate(eqns) for o in e.outputs}
    consumers = {}
    for i, e in enumerate(eqns):
        for v in e.inputs:
            consumers.setdefault(v.id, []).append(i)
    out_ids = {v.id for v in ir.outvars}
    group_of, groups, full_of, closed = {}, {}, {}, set()

    def row_reduction(e):
        """(full shape, whole) if e reduces the last axis, or all axes, of a float array."""
        if e.prim.name not in _REDUCERS:
            return None
        x = e.inputs[0].aval
        axes = tuple(e.params.get("axes", ()))
        if x.ndim == 0 or dtypes.kind(x.dtype) != "f" or x.size == 0:
            return None
        whole = axes == tuple(range(x.ndim))
        rows, k = (1, x.size) if whole else (prod(x.shape[:-1]), x.shape[-1])
        # One work-group per row: a few long rows would leave a GPU idle; those go to the
        # multi-pass reduction kernels instead.
        # k >= 2: with rows of one element the per-row and full shapes coincide (no gain).
        if (whole or axes == (x.ndim - 1,)) and k >= 2 and (k <= 8192 or rows >= 256):
            return tuple(x.shape), whole
        return None

    for i, e in enumerate(eqns):
        in_groups = []
        for v in e.inputs:
            g = group_of.get(producer.get(v.id))
            if g is not None and g not in in_groups:
                in_groups.append(g)
        if late is not None and i in deferrable and (
                any(producer.get(v.id) in late for v in e.inputs) or
                _closes_by_rows(e, in_groups, closed, full_of, producer, group_of)):
            late.append(i)
            continue
        target = None
        red = row_reduction(e)
        if red is not None:
            cands = [g for g in in_groups if g not in closed and full_of[g] == red]
            if not cands and not in_groups:
                # a reduction of values no group computes: into an open group over the same
                # rows (one kernel, e.g. a loss's gradient next to the log-softmax it needs)
                cands = [g for g in reversed(list(groups)) if g not in closed and
                         full_of[g] == red]
            target = cands[0] if cands else None
            if target is None:
                target = len(full_of)
                groups[target], full_of[target] = [], red
        else:
            for g in in_groups:
                if g in closed:
                    continue
                full, whole = full_of[g]
                rshapes = _row_shapes(full, whole)
                shape = tuple(e.outputs[0].aval.shape) if len(e.outputs) == 1 else None
                ok = shape is not None and (shape == full or shape in rshapes)
                if e.prim.fusion == "elementwise" and e.prim.lowering is not None and ok and \
                        not e.prim.multiple_results:
                    ok = all(tuple(u.aval.shape) == shape or u.id in scalar_literals
                             for u in e.inputs)
                elif e.prim.name == "broadcast_in_dim" and ok:
                    src = tuple(e.inputs[0].aval.shape)
                    ok = shape == full and src in rshapes and \
                        tuple(e.params["broadcast_dimensions"]) == tuple(range(len(src)))
                elif e.prim.name == "reshape" and ok:
                    ok = tuple(e.inputs[0].aval.shape) in rshapes and shape in rshapes
                else:
                    ok = False
                if ok:
                    target = g
                    break
        for g in in_groups:
            if g != target:
                closed.add(g)
        if target is not None:
            groups[target].append(i)
            group_of[i] = target

    if late:
        return None
    _absorb_prologues(eqns, producer, consumers, out_ids, group_of, groups, full_of,
                      scalar_literals)
    ir = _absorb_scalars(ir, consumers, group_of, groups)

    def literal(v):
        if v.id in scalar_literals and v.aval.ndim == 0:
            return True, scalar_literals[v.id]
        return False, None

    def make(g, members, inputs, outputs, literals):
        full, whole = full_of[g]
        ok_inputs = all(tuple(v.aval.shape) == full or v.aval.ndim == 0 or
                        tuple(v.aval.shape) in _row_shapes(full, whole) for v in inputs)
        if not ok_inputs:
            return members
        R, K = (1, prod(full)) if whole else (prod(full[:-1]), full[-1])
        rp = RowFusedPrimitive(members, inputs, outputs, literals, R, K, full)
        return [Eqn(rp, inputs, {}, outputs)]
    return emit_groups(ir, groups, group_of, literal, make)


def _absorb_scalars(ir, consumers, group_of, groups):
    """The first row kernel also computes the 0-d elementwise values that need only the
    call's inputs and constants (an optimizer's step count and bias corrections), when
    nothing reads them before it: one launch fewer per train step. They move to just
    before the group's last equation (where it is emitted) and join it; `groups` and
    `group_of` are renumbered for the returned IR."""
    known = {v.id for v in ir.invars} | {v.id for v in ir.constvars}
    free = []
    for i, e in enumerate(ir.eqns):
        elementwise = e.prim.fusion == "elementwise" and e.prim.lowering is not None and \
            not e.prim.multiple_results
        if i not in group_of and elementwise and e.outputs[0].aval.ndim == 0 and \
                all(v.id in known for v in e.inputs):
            free.append(i)
            known.add(e.outputs[0].id)
    if not free or not groups:
        return ir
    g = min(groups, key=lambda g: max(groups[g]))
    last = max(groups[g])
    moved = set(free)
    if any(c <= last and c not in moved for i in free
           for c in consumers.get(ir.eqns[i].outputs[0].id, ())):
        return ir
    order = [i for i in range(last) if i not in moved] + free + \
        [i for i in range(last, len(ir.eqns)) if i not in moved]
    new_at = {old: new for new, old in enumerate(order)}
    for h in groups:
        groups[h] = sorted(new_at[i] for i in groups[h] + (free if h == g else []))
    group_of.clear()
    group_of.update({i: h for h, idx in groups.items() for i in idx})
    return IR(ir.invars, ir.constvars, ir.consts, [ir.eqns[i] for i in order], ir.outvars)


def _closes_by_rows(e, in_groups, closed, full_of, producer, group_of):
    """Whether `e` reads an open group's values, all of them per-row ones (or 0-d)."""
    opened = [g for g in in_groups if g not in closed]
    if not opened:
        return False
    for v in e.inputs:
        g = group_of.get(producer.get(v.id))
        if g in opened and tuple(v.aval.shape) not in _row_shapes(*full_of[g]) | {()}:
            return False
    return True


def _absorb_prologues(eqns, producer, consumers, out_ids, group_of, groups, full_of, literals):
    """Pull full-shape elementwise producers used only by one row group into it (they are
    then computed inside the group's loops instead of written out and read back)."""
    changed = True
    while changed:
        changed = False
        for i in range(len(eqns) - 1, -1, -1):
            e = eqns[i]
            if i in group_of or e.prim.fusion != "elementwise" or e.prim.lowering is None \
                    or e.prim.multiple_results or e.outputs[0].id in out_ids:
                continue
            users = consumers.get(e.outputs[0].id, [])
            gs = {group_of.get(c) for c in users}
            if len(gs) != 1 or None in gs:
                continue
            g = gs.pop()
            full, _ = full_of[g]
            if tuple(e.outputs[0].aval.shape) != full or not all(
                    tuple(u.aval.shape) == full or u.id in literals for u in e.inputs):
                continue
            group_of[i] = g
            groups[g].append(i)
            groups[g].sort()
            changed = True
