"""Matmul epilogue fusion: a dot_general whose result only feeds an elementwise group runs
that group inside the GEMM kernel's store (`DotEpiloguePrimitive`).

A dense layer's bias and activation, the relu mask of its gradient, or a whole optimizer
update fed by a weight gradient then cost no launch of their own, and the product never
makes a round trip through memory. The GEMM's tiles and accumulation order are the eager
ones, and the epilogue is compiled without contraction like every elementwise kernel, so
results match eager execution bit for bit. Where the GEMM cannot take an epilogue (see
`dot_epilogue.make_epilogue_launcher`) the primitive runs the product and the group as two kernels.
"""
from ..core.ir import IR, Eqn
from ..core.tracing import Primitive
from ..primitives import dot_epilogue, linalg
from .fusion import FusedPrimitive, dce


class DotEpiloguePrimitive(Primitive):
    """dot_general(lhs, rhs) followed by a fused elementwise group reading its result."""

    def __init__(self, dot_params, group, acc_index):
        super().__init__(f"dot_general+{group.name}", multiple_results=True,
                         fusion="opaque")
        self.kernel_name = "netcl_gemm"
        self.dot_params = dot_params
        self.group = group            # the FusedPrimitive computed in the epilogue
        self.acc_index = acc_index    # which input of the group is the product
        self.eqns = group.eqns
        self.abstract_eval = lambda *args, **params: tuple(group.out_avals)
        self.make_launcher = self._make_launcher
        self.reference = self._reference

    def _group_inputs(self, acc, extras):
        return extras[:self.acc_index] + [acc] + extras[self.acc_index:]

    def _make_launcher(self, device, args, params, out_avals):
        lhs, rhs, extras = args[0], args[1], list(args[2:])
        launch = dot_epilogue.make_epilogue_launcher(
            device, lhs, rhs, self.dot_params["dimension_numbers"], extras, self.acc_index,
            self.group.body, self.group.out_names, self.group.out_avals)
        if launch is not None:
            return launch
        dot, group, dot_params = linalg.dot_general_p, self.group, self.dot_params

        def two_kernels(lhs, rhs, *extras):
            acc = dot.bind(lhs, rhs, **dot_params)
            return group.bind(*self._group_inputs(acc, list(extras)))
        return two_kernels

    def _reference(self, lhs, rhs, *extras):
        acc = linalg.dot_general_p.reference(lhs, rhs, **self.dot_params)
        return self.group.reference(*self._group_inputs(acc, list(extras)))

    def source_for(self, device, args):
        """The OpenCL C of the GEMM with this epilogue, for inputs laid out like `args`
        ('' where it runs as two kernels)."""
        launch = self._make_launcher(device, args, {}, self.group.out_avals)
        return getattr(launch, "source", "")

def _epilogue_ok(dot, group):
    """Whether the product of `dot` may be finished by `group` (shapes and dtypes; layouts
    and devices are checked when the launcher is built)."""
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    lhs, rhs, out = dot.inputs[0].aval, dot.inputs[1].aval, dot.outputs[0].aval
    return (not lb and lhs.dtype == rhs.dtype == out.dtype and out.dtype.kind == "f"
            and out.dtype.itemsize >= 4 and all(a.shape == out.shape for a in group.out_avals))


def _as_group(e):
    """The FusedPrimitive of a fused-group equation, or of a lone elementwise equation."""
    if isinstance(e.prim, FusedPrimitive):
        return e.prim
    if e.prim.fusion == "elementwise" and not e.prim.multiple_results and \
            e.prim.lowering is not None:
        inputs = list({v.id: v for v in e.inputs}.values())
        return FusedPrimitive([e], inputs, list(e.outputs), {})
    return None


def fuse_epilogues(ir):
    """Give each dot_general whose result has exactly one reader, an elementwise group of
    the same shape, that group as its epilogue."""
    producer = {}
    readers = {}
    for i, e in enumerate(ir.eqns):
        for o in e.outputs:
            producer[o.id] = i
        for v in e.inputs:
            readers.setdefault(v.id, set()).add(i)
    out_ids = {v.id for v in ir.outvars}
    replace, drop = {}, set()
    for i, e in enumerate(ir.eqns):
        if e.prim.fusion != "elementwise" and not isinstance(e.prim, FusedPrimitive):
            continue
        group = _as_group(e)
        if group is None:
            continue
        # the latest product among the group's inputs that nothing else reads
        for pos in reversed(range(len(group.inputs))):
            v = group.inputs[pos]
            d = producer.get(v.id)
            if d is None or d in drop or readers[v.id] != {i} or v.id in out_ids:
                continue
            dot = ir.eqns[d]
            if dot.prim is not linalg.dot_general_p or not _epilogue_ok(dot, group):
                continue
            extras = group.inputs[:pos] + group.inputs[pos + 1:]
            prim = DotEpiloguePrimitive(dot.params, group, pos)
            replace[i] = Eqn(prim, list(dot.inputs) + extras, {}, list(group.outputs))
            drop.add(d)
            break
    if not replace:
        return ir
    eqns = [replace.get(i, e) for i, e in enumerate(ir.eqns) if i not in drop]
    return dce(IR(ir.invars, ir.constvars, ir.consts, eqns, ir.outvars))
