"""Horizontal fusion: independent elementwise groups of different shapes in one launch.

`fuse` (fusion.py) joins elementwise equations of one shape into a group, one kernel
each. A train step still launches many small groups that nothing connects: an optimizer
updates each parameter in its own group, and autocast casts each weight to the compute
dtype in its own. Each launch costs the host the driver's enqueue (several microseconds
on GPUs, where a small step is bound by it; with pmap, once per device) and the device a
kernel's start. The pass `fuse_horizontally` moves such groups together and makes each
gathering one `HorizontalPrimitive`: one kernel whose work-items are cut into segments,
segment k running group k's code on its own elements.

Which groups move:
- groups whose every input exists when the call starts (arguments, constants, views of
  them): to the start, together (autocast's weight casts);
- groups whose outputs nothing in the call reads (results only): to the end, together
  (the optimizer's updates), with the groups that could go either way.
A gathering of one group stays as it was.

    >>> import netcl, netcl.numpy as jnp
    >>> f = netcl.jit(lambda a, b: (a * 2 + 1, b * b))
    >>> [k.name for k in f.lower(jnp.ones(8), jnp.ones((2, 3))).kernels]
    ['horizontal_2']
"""
import numpy as np

from ..core.array import Array, layout_id
from ..core.codegen import (INDEX_CTYPE, elementwise_parameters, expression_template,
                            helpers_for, layout_elementwise, set_fixed_args)
from ..core import commands, kernels
from ..core.ir import IR, Eqn
from ..core.launch import Kernel, Launch
from ..core.pool import bucket_size, output_storage
from ..core.shapes import contiguous_strides, prod
from ..core.tracing import Primitive
from .fusion import as_group, dce
from .plan import is_view


class HorizontalPrimitive(Primitive):
    """Independent elementwise groups (FusedPrimitive) run by one kernel, each on its own
    segment of the work-items. Inputs are the groups' inputs, each once; outputs are the
    groups' outputs, group after group."""

    def __init__(self, groups, inputs):
        super().__init__(f"horizontal_{len(groups)}", multiple_results=True)
        self.kernel_name = self.name
        self.groups = groups
        position = {v.id: j for j, v in enumerate(inputs)}
        # per group, the position of each of its inputs among the primitive's
        self.positions = [tuple(position[v.id] for v in g.inputs) for g in groups]
        self.out_avals = [a for g in groups for a in g.out_avals]
        self.abstract_eval = lambda *args, **params: tuple(self.out_avals)
        self.make_launcher = lambda device, args, params, out_avals: \
            horizontal_launch(self, device, args)
        self.reference = self._reference

    def in_place_inputs(self, n_inputs):
        """Every input, within its group (see in_place_segments)."""
        return range(n_inputs)

    def in_place_segments(self):
        """(input positions, output positions) of each group: an output overwrites only an
        input of its own group (other segments read theirs at other indices)."""
        parts, first = [], 0
        for g, pos in zip(self.groups, self.positions):
            parts.append((pos, tuple(range(first, first + len(g.out_avals)))))
            first += len(g.out_avals)
        return parts

    def _reference(self, *xs):
        return tuple(y for g, pos in zip(self.groups, self.positions)
                     for y in g.reference(*(xs[p] for p in pos)))


# ---- the launch ------------------------------------------------------------------------------

def _renamed(param, prefix):
    """A parameter declaration with its name (the last word) prefixed."""
    head, name = param.rsplit(" ", 1)
    return f"{head} {prefix}{name}"


def _param_bytes(params):
    """Bytes a kernel's parameters take, counting every one as a pointer (the most)."""
    return 8 * len(params)


def _kernel_source(name, layouts):
    """One kernel running each layout's body on its segment of the work-items: a function
    per segment and a dispatch on the global id. Segment k starts at parameter `start{k}`."""
    fns, params, calls = [], [], []
    attribute = layouts[0].attribute
    head_attr = f"{attribute} " if attribute else ""
    for k, lay in enumerate(layouts):
        fns.append(lay.function(f"{head_attr}void segment{k}", unit="u"))
        own = elementwise_parameters(lay.inputs, lay.outputs)
        params += [_renamed(p, f"s{k}_") for p in own]
        args = ", ".join(f"s{k}_{p.rsplit(' ', 1)[1]}" for p in own)
        calls.append((k, args))
    params += [f"const {INDEX_CTYPE} start{k}" for k in range(1, len(layouts))]
    lines = [f"{head_attr}__kernel void {name}({', '.join(params)}) {{",
             f"  const {INDEX_CTYPE} g = get_global_id(0);"]
    for k, args in calls:
        unit = "g" if k == 0 else f"g - start{k}"
        call = f"segment{k}({args}, {unit});"
        if k + 1 < len(calls):
            lines.append(f"  if (g < start{k + 1}) {{ {call} return; }}")
        else:
            lines.append(f"  {call}")
    lines.append("}")
    code = "".join(fns) + "\n".join(lines) + "\n"
    return "#pragma OPENCL FP_CONTRACT OFF\n" + helpers_for(code) + code


def _kernel_classes(layouts, limit):
    """Segments (indices into `layouts`) that can share a kernel: the same function
    attribute and work-group size, their parameters within `limit` bytes."""
    classes = {}
    for k, lay in enumerate(layouts):
        key = (lay.attribute, lay.grid[1])
        chunks = classes.setdefault(key, [[]])
        params = sum(_param_bytes(elementwise_parameters(layouts[j].inputs, layouts[j].outputs))
                     + 4 for j in chunks[-1] + [k])
        if chunks[-1] and params > limit:
            chunks.append([])
        chunks[-1].append(k)
    return [chunk for chunks in classes.values() for chunk in chunks]


def horizontal_launch(prim, device, args):
    """The Launch of `prim` over arrays laid out like `args`: one kernel per class of
    segments that can share one (almost always one), each output taking, where the plan
    offers them, only the buffers of its own group's inputs."""
    layouts = [layout_elementwise(g.kernel_name, device, [args[p] for p in pos], g.body,
                                  g.out_names, g.out_avals)
               for g, pos in zip(prim.groups, prim.positions)]
    first_out = np.cumsum([0] + [len(g.out_avals) for g in prim.groups]).tolist()
    # per kernel: (kernel, global size, local size, outputs, inputs) where an output is
    # (result index, parameter, its group, what its Array needs) and an input
    # (parameter, argument index)
    launches, declared = [], []
    for c, members in enumerate(_kernel_classes(layouts, device.target.kernel_argument_bytes)):
        name = prim.kernel_name if c == 0 else f"{prim.kernel_name}_{c}"
        src = _kernel_source(name, [layouts[s] for s in members])
        k = kernels.kernel(device, src, name)
        declared.append(Kernel(name, src))
        base, total, starts, outs, ins = 0, 0, [], [], []
        for s in members:
            lay, g = layouts[s], prim.groups[s]
            set_fixed_args(k, lay.fixed, base)
            strides = contiguous_strides(lay.shape)
            for j, a in enumerate(g.out_avals):
                nbytes = lay.n * a.dtype.itemsize
                outs.append((first_out[s] + j, base + j, s, nbytes, bucket_size(nbytes),
                             lay.shape, a.dtype, strides, a.weak_type,
                             layout_id(device, lay.shape, a.dtype, a.weak_type, strides, 0)))
            ins += [(base + p_rel, p) for p_rel, p in zip(lay.in_pos, prim.positions[s])]
            starts.append(total)
            base += lay.n_params
            total += lay.grid[0][0]
        for j, start in enumerate(starts[1:]):
            k.set_arg(base + j, np.int32(start))
        launches.append((k, (total,), lay.grid[1], outs, ins))
    owner = [s for s, pos in enumerate(prim.positions) for _ in pos]
    flat_positions = [p for pos in prim.positions for p in pos]
    queue, pool, n_outs = device.queue, device.pool, first_out[-1]
    enqueue = commands.launch

    def run_into(offers, *xs):
        own = {}        # group -> the offered storages of its inputs
        if offers:
            group_of = {id(xs[p]._storage): s for s, p in zip(owner, flat_positions)}
            for st in offers:
                own.setdefault(group_of.get(id(st)), []).append(st)
        results = [None] * n_outs
        for k, gsize, lsize, outs, ins in launches:
            for at, param, s, nbytes, size_class, shape, dtype, strides, weak, lid in outs:
                st = output_storage(pool, nbytes, size_class, own.get(s, ()))
                results[at] = Array(device, st.buf, st, shape, dtype, strides, 0, weak, True,
                                    lid)
                k.set_arg(param, st.buf)
            for param, p in ins:
                k.set_arg(param, xs[p]._buf)
            enqueue(queue, k, gsize, lsize)
        return tuple(results)

    def run(*xs):
        return run_into((), *xs)
    return Launch(run, run_into, tuple(declared))


# ---- the pass --------------------------------------------------------------------------------

def _movable_group(e):
    """Whether equation `e` is an elementwise group (fused, or one equation) computing
    something, that may join a horizontal kernel: not a copy in its own dtype (a weak-type
    cast launches nothing, a dense copy is the driver's), not empty."""
    group = as_group(e)
    if group is None or not all(prod(a.shape) for a in group.out_avals):
        return False
    if len(group.eqns) == 1:
        (m,), out = group.eqns, group.out_avals[0]
        if all(v.aval.dtype == out.dtype for v in m.inputs) and expression_template(
                m.prim, [v.aval.dtype for v in m.inputs], out.dtype, m.params) == "{0}":
            return False
    return True


def fuse_horizontally(ir):
    """Gather the fused groups whose inputs all exist when the call starts at the start,
    and those whose outputs no equation reads at the end, each gathering of two or more
    as one HorizontalPrimitive equation (see the module docstring)."""
    read = {v.id for e in ir.eqns for v in e.inputs}
    at_start = {v.id for v in list(ir.invars) + list(ir.constvars)}
    start_views, early, late, free = {}, [], [], []
    for e in ir.eqns:
        if is_view(e) and e.inputs[0].id in at_start:
            at_start.add(e.outputs[0].id)
            start_views[e.outputs[0].id] = e
        elif _movable_group(e):
            first = all(v.id in at_start for v in e.inputs)
            last = not any(o.id in read for o in e.outputs)
            (free if first and last else early if first else late if last else []).append(e)
    # a group that may go either way joins the end's gathering where there is one
    if late:
        late = _in_order(ir.eqns, late + free)
    else:
        early = _in_order(ir.eqns, early + free)
    early, late = (early if len(early) > 1 else []), (late if len(late) > 1 else [])
    if not early and not late:
        return ir
    # the views of arguments the early groups read move with them (views launch nothing)
    needed, todo = set(), [v.id for e in early for v in e.inputs]
    while todo:
        vid = todo.pop()
        if vid in start_views and vid not in needed:
            needed.add(vid)
            todo.append(start_views[vid].inputs[0].id)
    head = [e for e in ir.eqns if is_view(e) and e.outputs[0].id in needed] + _gathered(early)
    moved = {id(e) for e in head + early + late}
    body = [e for e in ir.eqns if id(e) not in moved]
    return dce(IR(ir.invars, ir.constvars, ir.consts, head + body + _gathered(late),
                  ir.outvars))


def _in_order(eqns, some):
    """`some` in their order among `eqns`."""
    ids = {id(e) for e in some}
    return [e for e in eqns if id(e) in ids]


def _gathered(group_eqns):
    """One equation running every group of `group_eqns` (none for none)."""
    if not group_eqns:
        return []
    if len(group_eqns) == 1:
        return list(group_eqns)
    inputs = list({v.id: v for e in group_eqns for v in e.inputs}.values())
    prim = HorizontalPrimitive([as_group(e) for e in group_eqns], inputs)
    return [Eqn(prim, inputs, {}, [o for e in group_eqns for o in e.outputs])]
