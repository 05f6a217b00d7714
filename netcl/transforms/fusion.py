"""IR passes for jit: dead code, common subexpressions, and elementwise fusion.

Fusion turns every maximal group of elementwise equations over one shape into a single
generated primitive (`FusedPrimitive`) whose kernel computes the whole group per element:
one launch and one pass over memory instead of one per op. Broadcasts, transposes, slices
and reversals feeding a group are not copies: the group reads them through strided indices
(the same renderer as eager mode). Scalar constants become literals in the source.
"""
import math

import numpy as np

from ..core import dtypes
from ..core.codegen import Op, expression_template, make_body_launcher
from ..core.launch import Launch
from ..core.ir import IR, Eqn
from ..core.tracing import Primitive


# ---- dead code and common subexpressions ---------------------------------------------------

def dce(ir):
    """Drop equations whose results are never used (but not those with side effects)."""
    live = {v.id for v in ir.outvars}
    kept = []
    for e in reversed(ir.eqns):
        if e.prim.has_side_effects or any(o.id in live for o in e.outputs):
            kept.append(e)
            live.update(v.id for v in e.inputs)
    kept.reverse()
    cv = [(v, c) for v, c in zip(ir.constvars, ir.consts) if v.id in live]
    return IR(ir.invars, [v for v, _ in cv], [c for _, c in cv], kept, ir.outvars)


def _hashable(params):
    try:
        key = tuple(sorted(params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def cse(ir):
    """Reuse the result of an identical earlier equation (same primitive, params, inputs)."""
    rename = {}
    seen = {}
    eqns = []
    for e in ir.eqns:
        ins = [rename.get(v.id, v) for v in e.inputs]
        pk = None if e.prim.has_side_effects else _hashable(e.params)
        key = None if pk is None else (e.prim, pk, tuple(v.id for v in ins))
        if key is not None and key in seen:
            for old, new in zip(e.outputs, seen[key]):
                rename[old.id] = new
            continue
        if key is not None:
            seen[key] = e.outputs
        eqns.append(Eqn(e.prim, ins, e.params, e.outputs))
    outvars = [rename.get(v.id, v) for v in ir.outvars]
    return IR(ir.invars, ir.constvars, ir.consts, eqns, outvars)


_REDUCTIONS = ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")


def strip_identities(ir):
    """Drop stop_gradient (once staged, after any grad was applied, it is the identity) and
    casts back from a lossless widening (a bfloat16 value cast to float32 and back: what
    autocast's boundaries leave between 16-bit layers), and turn reductions over axes of
    size 1 into reshapes."""
    from ..primitives.views import reshape_p
    rename = {}
    cast_from = {}      # output id of a convert_element_type -> the Var it converted
    eqns = []
    for e in ir.eqns:
        ins = [rename.get(v.id, v) for v in e.inputs]
        if e.prim.name == "stop_gradient":
            rename[e.outputs[0].id] = ins[0]
            continue
        if e.prim.name == "convert_element_type":
            src, out = cast_from.get(ins[0].id), e.outputs[0].aval
            if src is not None and src.aval.dtype == out.dtype and \
                    src.aval.weak_type == out.weak_type and \
                    _lossless_widening(src.aval.dtype, ins[0].aval.dtype):
                rename[e.outputs[0].id] = src
                continue
            cast_from[e.outputs[0].id] = ins[0]
        if e.prim.name in _REDUCTIONS and all(ins[0].aval.shape[a] == 1
                                               for a in e.params["axes"]):
            eqns.append(Eqn(reshape_p, ins, {"new_sizes": tuple(e.outputs[0].aval.shape)},
                            e.outputs))
            continue
        eqns.append(Eqn(e.prim, ins, e.params, e.outputs))
    return IR(ir.invars, ir.constvars, ir.consts, eqns,
              [rename.get(v.id, v) for v in ir.outvars])


def _lossless_widening(src, mid):
    """Whether every value of dtype `src` is exactly one of dtype `mid` (so a cast to `mid`
    and back gives the value itself): a wider float for a float, a wider integer of the
    same signedness for an integer."""
    ks, km = dtypes.kind(src), dtypes.kind(mid)
    if ks != km or ks not in "fiu" or mid.itemsize <= src.itemsize:
        return False
    if ks == "f":   # (wider is not enough: float8_e8m0fnu's 2^-127 is no float16)
        s, m = dtypes.finfo(src), dtypes.finfo(mid)
        return m.nmant >= s.nmant and m.maxexp >= s.maxexp and \
            s.minexp - s.nmant >= m.minexp - m.nmant
    return True


def sink_casts_through_broadcasts(ir):
    """``broadcast_in_dim(convert_element_type(x))`` becomes ``convert_element_type(
    broadcast_in_dim(x))`` where the cast's result is read only by broadcasts whose readers
    are all elementwise: the cast then joins the group reading the broadcast (which reads x
    through broadcast indices, no copy) and is computed per element, the same value, where
    it took a kernel of its own (a float32 bias added in a 16-bit layer's dtype)."""
    readers = {}
    for e in ir.eqns:
        for v in e.inputs:
            readers.setdefault(v.id, []).append(e)
    keep = {v.id for v in ir.outvars}

    def sinkable(e):
        if e.prim.name != "convert_element_type" or e.outputs[0].id in keep:
            return False
        bs = readers.get(e.outputs[0].id, [])
        return bool(bs) and all(
            b.prim.name == "broadcast_in_dim" and b.outputs[0].id not in keep and
            readers.get(b.outputs[0].id) and all(_elementwise(r) for r in readers[b.outputs[0].id])
            for b in bs)
    casts = {e.outputs[0].id: e for e in ir.eqns if sinkable(e)}
    if not casts:
        return ir
    from ..core.ir import Var
    from ..core.tracing import ShapedArray
    eqns = []
    for e in ir.eqns:
        if e.outputs and e.outputs[0].id in casts:
            continue
        cast = casts.get(e.inputs[0].id) if e.prim.name == "broadcast_in_dim" else None
        if cast is None:
            eqns.append(e)
            continue
        x = cast.inputs[0]
        wide = Var(ShapedArray(e.outputs[0].aval.shape, x.aval.dtype, x.aval.weak_type))
        eqns.append(Eqn(e.prim, [x], e.params, [wide]))
        eqns.append(Eqn(cast.prim, [wide], cast.params, e.outputs))
    return IR(ir.invars, ir.constvars, ir.consts, eqns, ir.outvars)


# Ops whose NumPy result on 0-d literals is what the device computes (IEEE basic operations;
# division within OpenCL's 2.5 ulp); anything transcendental stays on the device.
_FOLDABLE = frozenset(["convert_element_type", "neg", "add", "sub", "mul", "div", "max", "min",
                       "abs"])


def fold_literals(ir, literals):
    """Propagate 0-d literal constants through scalar casts and arithmetic (a weak 2.0 cast
    to float32; the -1/batch of a mean's gradient): such values become literals in the
    kernels that read them instead of kernels of their own."""
    literals = dict(literals)
    for e in ir.eqns:
        if e.prim.name not in _FOLDABLE or e.prim.multiple_results or \
                e.outputs[0].aval.ndim != 0 or not all(v.id in literals for v in e.inputs):
            continue
        ins = [np.asarray(literals[v.id], dtype=v.aval.dtype) for v in e.inputs]
        with np.errstate(all="ignore"):
            value = np.asarray(e.prim.reference(*ins, **e.params),
                               dtype=e.outputs[0].aval.dtype)
        literals[e.outputs[0].id] = value.item()
    return literals


def forward_scalar_broadcasts(ir):
    """Let elementwise equations read 0-d values directly instead of through a broadcast
    (or a cast that only changes the weak type).

    Fused kernels read a 0-d input as a scalar at no cost, so a broadcast of a 0-d value
    whose readers are all elementwise (or such broadcasts again) is dropped: one step fewer
    to run, and a group producing the scalar is not closed early by the broadcast reading it
    (an optimizer's bias corrections then share one kernel)."""
    source = {}      # broadcast (or weak-type cast) output id -> the 0-d var it repeats
    for e in ir.eqns:
        if e.prim.name == "broadcast_in_dim" or (
                e.prim.name == "convert_element_type" and
                e.inputs[0].aval.dtype == e.outputs[0].aval.dtype):
            src = source.get(e.inputs[0].id, e.inputs[0])
            if src.aval.ndim == 0:
                source[e.outputs[0].id] = src
    if not source:
        return ir
    readers = {}
    for e in ir.eqns:
        for v in e.inputs:
            readers.setdefault(v.id, []).append(e)
    keep = {v.id for v in ir.outvars}
    dropped = set()
    for e in reversed(ir.eqns):     # readers come later: decide them first
        o = e.outputs[0].id if e.outputs else None
        if o in source and o not in keep and all(
                _elementwise(r) or r.outputs[0].id in dropped for r in readers.get(o, [])):
            dropped.add(o)
    eqns = []
    for e in ir.eqns:
        if e.outputs and e.outputs[0].id in dropped:
            continue
        if _elementwise(e):
            e = Eqn(e.prim, [source[v.id] if v.id in dropped else v for v in e.inputs],
                    e.params, e.outputs)
        eqns.append(e)
    return IR(ir.invars, ir.constvars, ir.consts, eqns, ir.outvars)


def _hoist(ir, movable):
    """`ir` with each equation for which `movable(e)` holds moved up to just after the
    producers of its inputs (the others keep their order)."""
    order, where = [], {}                         # var id -> index in order of its producer
    for e in ir.eqns:
        if movable(e):
            at = max((where[v.id] + 1 for v in e.inputs if v.id in where), default=0)
            order.insert(at, e)
            where = {o.id: i for i, x in enumerate(order) for o in x.outputs}
        else:
            order.append(e)
            for o in e.outputs:
                where[o.id] = len(order) - 1
    return IR(ir.invars, ir.constvars, ir.consts, order, ir.outvars)


def hoist_scalars(ir):
    """Move each 0-d elementwise equation up to just after the producers of its inputs.

    Traced code computes scalars where it needs them (an optimizer's second bias correction
    after the first leaf's update); gathered together they fuse into one small kernel
    instead of several, since a group is closed once a later equation reads it."""
    return _hoist(ir, lambda e: _elementwise(e) and e.outputs[0].aval.ndim == 0)


def _bytes(v):
    return math.prod(v.aval.shape) * v.aval.dtype.itemsize


def hoist_reductions(ir, min_bytes=1 << 16, ratio=4):
    """Move each equation that reads at least `ratio` times what it writes (and at least
    `min_bytes`: a column sum with its fused update, a product with few columns) up to just
    after the producers of its inputs, so that it reads them while they are still in cache.

    Traced code reduces where it needs the result: an MLP train step's bias gradients
    would be summed after both weight updates, whose optimizer state pushes the gradients
    out of every cache, so the sums, reading rows far apart, wait on memory latency."""
    def reduces(e):
        read = sum(_bytes(v) for v in e.inputs if v.aval.ndim)
        return bool(e.outputs) and read >= min_bytes and \
            read >= ratio * sum(_bytes(o) for o in e.outputs)
    return _hoist(ir, reduces)


def sink_scalars(ir):
    """Move each equation whose outputs are all 0-d down to just before its first reader
    (the end where only the call's outputs read it).

    A device idles from a call's start until its first launch: an optimizer's step count
    and bias corrections (hoisted into one small kernel, see `hoist_scalars`) would go
    first and delay the first product, the work the device could already be doing."""
    scalar = [bool(e.outputs) and all(o.aval.ndim == 0 for o in e.outputs) for e in ir.eqns]
    if not any(scalar):
        return ir
    first_read = {}
    for k, e in enumerate(ir.eqns):
        for v in e.inputs:
            first_read.setdefault(v.id, k)
    before = {}                                   # eqn index -> scalar eqns to run first
    tail = []
    for k, e in enumerate(ir.eqns):
        if scalar[k]:
            at = min((first_read[o.id] for o in e.outputs if o.id in first_read), default=None)
            (tail if at is None else before.setdefault(at, [])).append(e)
    order = []
    for k, e in enumerate(ir.eqns):
        order += before.get(k, [])
        if not scalar[k]:
            order.append(e)
    return IR(ir.invars, ir.constvars, ir.consts, order + tail, ir.outvars)


def _elementwise(e):
    return (e.prim.fusion == "elementwise" and not e.prim.multiple_results
            and e.prim.lowering is not None)


# ---- elementwise fusion --------------------------------------------------------------------

class FusedPrimitive(Primitive):
    """A group of elementwise equations compiled into one kernel."""

    def __init__(self, eqns, inputs, outputs, literals):
        names = [e.prim.name for e in eqns]
        super().__init__(f"fused_{'_'.join(names[:4])}{'_etc' if len(names) > 4 else ''}",
                         multiple_results=True, fusion="elementwise")
        # One kernel per program, so the name needs no counter: the same group traced
        # again (the same function jitted twice, a retrace) gives the same source, which
        # builds once per process and hits the driver's binary cache across processes.
        self.kernel_name = f"fused_{'_'.join(names[:3])}"
        self.eqns = eqns          # the equations it computes, in order
        self.inputs = inputs      # Vars read from memory
        self.outputs = outputs    # Vars written to memory
        self.literals = literals  # var id -> Python scalar inlined in the source
        self.out_avals = [v.aval for v in outputs]
        self.body, self.out_names = self._render_body()
        self.abstract_eval = lambda *args, **params: tuple(self.out_avals)
        self.make_launcher = self._make_launcher
        self.reference = self._reference

    def _render_body(self):
        names = {v.id: f"x{j}" for j, v in enumerate(self.inputs)}
        body = []
        for k, e in enumerate(self.eqns):
            operands = []
            in_dtypes = []
            for v in e.inputs:
                if v.id in self.literals:
                    operands.append(_c_literal(self.literals[v.id], v.aval.dtype))
                else:
                    operands.append(names[v.id])
                in_dtypes.append(v.aval.dtype)
            out = e.outputs[0]
            template = expression_template(e.prim, in_dtypes, out.aval.dtype, e.params)
            var = f"t{k}"
            body.append(Op(var, e.prim, template,
                           in_dtypes[0] if in_dtypes else out.aval.dtype, out.aval.dtype,
                           operands))
            names[out.id] = var
        return body, [names[v.id] for v in self.outputs]

    def source_for(self, device, args):
        """The OpenCL C this group compiles to for inputs laid out like `args`."""
        from ..core.codegen import elementwise_geometry, input_kind, render_elementwise
        shape = self.out_avals[0].shape
        inputs = [(x.dtype, input_kind(x, shape, broadcasts=True)) for x in args]
        outputs = [(a.dtype, v) for a, v in zip(self.out_avals, self.out_names)]
        width, walk, attribute = elementwise_geometry(device, inputs, self.body, outputs)
        return render_elementwise(self.kernel_name, inputs, self.body, outputs, width=width,
                                  walk=walk, attribute=attribute,
                                  narrow=device.target.vector_width)

    def _make_launcher(self, device, args, params, out_avals):
        launch = make_body_launcher(self.kernel_name, device, args, self.body, self.out_names,
                                    self.out_avals)
        if len(self.out_avals) == 1:     # (a fused group always returns a tuple)
            one, into = launch.run, launch.run_into
            launch = Launch(lambda *xs: (one(*xs),),
                            lambda offers, *xs: (into(offers, *xs),), launch.kernels)
        return launch

    def in_place_inputs(self, n_inputs):
        """Inputs an output may overwrite when they die here: all (each element is read
        where it is written, before; jit checks shapes and layouts)."""
        return range(n_inputs)

    def _reference(self, *xs):
        env = {v.id: x for v, x in zip(self.inputs, xs)}
        env.update({k: np.asarray(v, dtype=_aval_of(self, k).dtype)
                    for k, v in self.literals.items()})
        for e in self.eqns:
            ins = [env[v.id] for v in e.inputs]
            shape = e.outputs[0].aval.shape
            ins = [np.broadcast_to(i, shape) if np.ndim(i) == 0 else i for i in ins]
            env[e.outputs[0].id] = np.asarray(e.prim.reference(*ins, **e.params),
                                              dtype=e.outputs[0].aval.dtype)
        return tuple(env[v.id] for v in self.outputs)


def as_group(e):
    """The FusedPrimitive of a fused-group equation, or of a lone elementwise equation."""
    if isinstance(e.prim, FusedPrimitive):
        return e.prim
    if _elementwise(e):
        inputs = list({v.id: v for v in e.inputs}.values())
        return FusedPrimitive([e], inputs, list(e.outputs), {})
    return None


def _aval_of(fp, var_id):
    for e in fp.eqns:
        for v in e.inputs:
            if v.id == var_id:
                return v.aval
    raise KeyError(var_id)


def _c_literal(value, dtype):
    """A C literal of `value` for a compute type (exact: hex floats)."""
    if dtypes.is_complex(dtype):
        part = dtypes.COMPLEX_PART[dtype]
        v = complex(value)
        return (f"(({dtypes.COMPUTE_CTYPE[dtype]})({_c_literal(v.real, part)}, "
                f"{_c_literal(v.imag, part)}))")
    if dtypes.kind(dtype) == "f":
        v = float(value)
        suffix = "" if dtype == np.float64 else "f"
        if math.isnan(v):
            return "NAN" if suffix else "((double)NAN)"
        if math.isinf(v):
            return ("" if v > 0 else "-") + ("INFINITY" if suffix else "((double)INFINITY)")
        return f"({v.hex()}{suffix})"
    if dtype.kind == "b":
        return "1" if value else "0"
    if dtype.kind == "u":
        return f"{int(value)}u"
    return f"({int(value)})"


def fuse(ir, scalar_literals):
    """Group elementwise equations; returns an IR whose groups are FusedPrimitive eqns.

    scalar_literals: var id -> Python value for 0-d constants (inlined where consumed by
    a fused group after a broadcast).
    """
    eqns = ir.eqns
    producer = {}
    for i, e in enumerate(eqns):
        for o in e.outputs:
            producer[o.id] = i

    # A broadcast of a scalar literal reads as the literal itself inside a fused group.
    bcast_literal = {}
    for e in eqns:
        src = e.inputs[0].id if e.inputs else None
        if e.prim.name == "broadcast_in_dim" and (src in scalar_literals or src in bcast_literal):
            bcast_literal[e.outputs[0].id] = scalar_literals.get(src, bcast_literal.get(src))

    group_of = {}      # eqn index -> group id
    groups = {}        # group id -> list of eqn indices (kept sorted)
    closed = set()
    shape_of = {}
    recent = {}        # shape -> most recent open group of that shape

    fusible = _elementwise

    def merge(into, other):
        for j in groups.pop(other):
            group_of[j] = into
            groups[into].append(j)
        groups[into].sort()

    for i, e in enumerate(eqns):
        in_groups = []
        for v in e.inputs:
            p = producer.get(v.id)
            g = group_of.get(p) if p is not None else None
            if g is not None and g not in in_groups:
                in_groups.append(g)
        if fusible(e) and e.outputs[0].id not in scalar_literals:
            shape = e.outputs[0].aval.shape
            # Join (and merge) every open group of this shape that it reads, and the most
            # recent open sibling group of the same shape (horizontal fusion).
            cands = [g for g in in_groups if g not in closed and shape_of[g] == shape]
            sib = recent.get(shape)
            if sib is not None and sib in groups and sib not in closed and sib not in cands:
                cands.append(sib)
            for g in in_groups:  # groups read but not joined are consumed from outside
                if g not in cands:
                    closed.add(g)
            if cands:
                target = cands[0]
                for g in cands[1:]:
                    merge(target, g)
            else:
                target = len(shape_of)
                groups[target] = []
                shape_of[target] = shape
            groups[target].append(i)
            group_of[i] = target
            recent[shape] = target
        else:
            closed.update(in_groups)

    def literal(v):
        if v.id in bcast_literal:
            return True, bcast_literal[v.id]
        if v.id in scalar_literals and v.aval.ndim == 0:
            return True, scalar_literals[v.id]
        return False, None

    def make(g, members, inputs, outputs, literals):
        if len(members) == 1 and not literals and all(
                v.aval.shape == members[0].outputs[0].aval.shape for v in inputs):
            return members  # nothing to gain: keep the primitive itself (a 0-d input
            # forwarded past its broadcast still needs the fused kernel's scalar read)
        return [Eqn(FusedPrimitive(members, inputs, outputs, literals), inputs, {}, outputs)]
    return emit_groups(ir, groups, group_of, literal, make)


def emit_groups(ir, groups, group_of, literal, make):
    """Rebuild `ir` with every group replaced, at the position of its last equation, by
    make(g, members, inputs, outputs, literals) -> equations.

    inputs: values the group reads from memory; literals: var id -> scalar (literal(v) says
    which reads are scalars inlined in the source); outputs: values used after the group.
    Emitting at the last member is safe because a group is closed as soon as anything
    outside it reads one of its values (see the fusion passes)."""
    out_ids = {v.id for v in ir.outvars}
    consumers = {}
    for i, e in enumerate(ir.eqns):
        for v in e.inputs:
            consumers.setdefault(v.id, []).append(i)
    last_of = {g: idx[-1] for g, idx in groups.items() if idx}
    new_eqns = []
    for i, e in enumerate(ir.eqns):
        g = group_of.get(i)
        if g is None:
            new_eqns.append(e)
            continue
        if i != last_of[g]:
            continue
        members = [ir.eqns[j] for j in groups[g]]
        produced = {o.id for m in members for o in m.outputs}
        inputs, seen, literals = [], set(), {}
        for m in members:
            for v in m.inputs:
                if v.id in produced or v.id in seen or v.id in literals:
                    continue
                is_lit, value = literal(v)
                if is_lit:
                    literals[v.id] = value
                    continue
                seen.add(v.id)
                inputs.append(v)
        outputs = [o for m in members for o in m.outputs
                   if o.id in out_ids or any(group_of.get(c) != g for c in consumers.get(o.id, []))]
        new_eqns += make(g, members, inputs, outputs, literals)
    return dce(IR(ir.invars, ir.constvars, ir.consts, new_eqns, ir.outvars))

