"""Epilogue fusion: a dot_general, conv_general_dilated, select_and_scatter_add or column sum
(reduce_sum over leading axes) whose result only feeds an elementwise group runs that group
inside its own kernel's store (`EpiloguePrimitive`).

A dense or convolution layer's bias and activation, the relu mask of its gradient, or a
whole optimizer update fed by a weight gradient then cost no launch of their own, and the
product never makes a round trip through memory. The GEMM's tiles and accumulation order
are the eager ones, and the epilogue is compiled without contraction like every elementwise
kernel, so results match eager execution. Where the product cannot take an epilogue (see
`dot_epilogue.make_epilogue_launcher`, `conv_gemm.make_conv_epilogue_launcher`) the
primitive runs the product and the group as two kernels. A max-pooling gradient
(select_and_scatter_add) takes the relu mask of the layer below where its windows tile the
operand (conv/scatter_epilogue.py). A bias gradient (the column sum of a layer's output
gradient) takes its optimizer update (reductions/sum_epilogue.py), with the other column
sums of same-shaped arrays that group reads; it adds each column in its own order (blocks of
64 rows), so its results match eager ones within rounding.
"""
from ..core import dtypes, kernels
from ..core.ir import IR, Eqn
from ..core.launch import Launch, as_launch
from ..core.tracing import Primitive
from ..primitives import conv, dot_epilogue, linalg
from ..primitives.conv import conv_gemm, scatter_epilogue
from ..primitives.reductions import reduce_sum_p, sum_epilogue
from .fusion import FusedPrimitive, as_group, dce
from .plan import unbound_values


def _dot_launcher(device, lhs, rhs, params, aval, extras, acc_index, body, out_vars, out_avals):
    return dot_epilogue.make_epilogue_launcher(device, lhs, rhs, params["dimension_numbers"],
                                               extras, acc_index, body, out_vars, out_avals,
                                               precision=params.get("precision"))


def _sum_launcher(device, *args):
    """sum_epilogue's builder called as the table's builders are: the summed arrays, then
    the table's seven other arguments."""
    return sum_epilogue.make_sum_epilogue_launcher(device, list(args[:-7]), *args[-7:])


# product primitive -> (its epilogue launcher builder, the kernel's name, operand count);
# a builder takes (device, *operands, params, aval, extras, acc_index, body, out_vars,
# out_avals) and returns a launcher (operands..., extras...) -> outputs, or None
_LAUNCHERS = {
    linalg.dot_general_p: (_dot_launcher, "netcl_gemm", 2),
    conv.conv_general_dilated_p: (conv_gemm.make_conv_epilogue_launcher, "netcl_gemm", 2),
    conv.select_and_scatter_add_p: (scatter_epilogue.make_scatter_epilogue_launcher,
                                    "window_select_scatter_epilogue", 2),
    reduce_sum_p: (_sum_launcher, "column_sum_epilogue", 1)}


class EpiloguePrimitive(Primitive):
    """A product (dot_general or conv_general_dilated of lhs, rhs; select_and_scatter_add
    of source, operand; reduce_sum of x) followed by a fused elementwise group reading its
    result."""

    def __init__(self, product, product_params, product_aval, group, acc_index):
        super().__init__(f"{product.name}+{group.name}", multiple_results=True,
                         fusion="opaque")
        self.kernel_name = _LAUNCHERS[product][1]
        self.product = product
        self.product_params = product_params
        self.product_aval = product_aval
        self.group = group            # the FusedPrimitive computed in the epilogue
        # which input of the group is the product; column sums: a tuple of positions, each
        # the same sum of its own operand (the operands in that order)
        self.acc_index = acc_index
        self.acc_positions = (acc_index,) if isinstance(acc_index, int) else tuple(acc_index)
        self.n_operands = _LAUNCHERS[product][2] * len(self.acc_positions)
        self.eqns = group.eqns
        self.abstract_eval = lambda *args, **params: tuple(group.out_avals)
        self.make_launcher = self._make_launcher
        self._launches = {}           # (device, argument layouts) -> Launch or None
        self.reference = self._reference

    def _group_inputs(self, accs, extras):
        """The group's inputs: `accs` (the products) at their positions among `extras`."""
        inputs, it = list(extras), iter(accs)
        for p in sorted(self.acc_positions):
            inputs.insert(p, None)
        for p in self.acc_positions:
            inputs[p] = next(it)
        return inputs

    def launch_for(self, device, args):
        """The one-kernel Launch for arguments laid out like `args` (arrays, bound or not),
        built once per layout; None where the product cannot take this epilogue there
        (see the builders in `_LAUNCHERS`). jit's fuse_epilogues pass asks before it fuses."""
        key = (device, tuple(a._layout_id() for a in args))
        if key not in self._launches:
            n = self.n_operands
            launch = _LAUNCHERS[self.product][0](
                device, *args[:n], self.product_params, self.product_aval, list(args[n:]),
                self.acc_index, self.group.body, self.group.out_names, self.group.out_avals)
            self._launches[key] = None if launch is None else as_launch(launch)
        return self._launches[key]

    def _make_launcher(self, device, args, params, out_avals):
        launch = self.launch_for(device, args)
        if launch is not None:
            return launch
        # Layouts the pass did not fuse for (a call that binds each step with other
        # layouts than the compiled ones): the product, then the group.
        return Launch(self._product_then_group)

    def _product_then_group(self, *args):
        n, pparams = self.n_operands, self.product_params
        m = n // len(self.acc_positions)     # operands per product
        accs = [self.product.bind(*args[i:i + m], **pparams) for i in range(0, n, m)]
        return self.group.bind(*self._group_inputs(accs, list(args[n:])))

    def in_place_inputs(self, n_inputs):
        """Inputs an output may overwrite when they die here: the extras (the epilogue reads
        each where it writes the outputs; the product's operands are read everywhere)."""
        return range(self.n_operands, n_inputs)

    def _reference(self, *args):
        n = self.n_operands
        m = n // len(self.acc_positions)
        accs = [self.product.reference(*args[i:i + m], **self.product_params)
                for i in range(0, n, m)]
        return self.group.reference(*self._group_inputs(accs, list(args[n:])))

    def source_for(self, device, args):
        """The OpenCL C of the kernel with this epilogue, for inputs laid out like `args`
        ('' where it runs as two kernels)."""
        launch = self.launch_for(device, args)
        return launch.kernels[-1].source if launch is not None and launch.kernels else ""


def _epilogue_ok(product, group):
    """Whether the result of `product` may be finished by `group` (shapes and dtypes;
    layouts and devices are checked when the launcher is built)."""
    if product.prim not in _LAUNCHERS:
        return False
    if product.prim is linalg.dot_general_p and product.params["dimension_numbers"][1][0]:
        return False                                    # batched products
    if product.prim is reduce_sum_p and \
            product.params["axes"] != tuple(range(len(product.params["axes"]))):
        return False                                    # sums over other than leading axes
    out = product.outputs[0].aval
    # 16-bit products: the launchers take them where tensor cores take 16-bit operands
    wide = out.dtype.itemsize >= 4 or product.prim in _HALF_PRODUCTS
    return (all(v.aval.dtype == out.dtype for v in product.inputs) and
            dtypes.kind(out.dtype) == "f" and wide and all(a.shape == out.shape for a in group.out_avals))


# the products whose epilogue launchers take float16 and bfloat16 results (a max-pooling
# gradient's scattered values are the 16-bit source's, exact in its float registers; a
# column sum is rounded to its dtype before its update, on GPUs)
_HALF_PRODUCTS = (conv.conv_general_dilated_p, linalg.dot_general_p,
                  conv.select_and_scatter_add_p, reduce_sum_p)


def _takes(prim, device, args, deferred):
    """Whether the product's kernel takes the epilogue for arguments laid out like `args`.
    Where its program is not built yet and `deferred` is a list, the builder has decided
    by then (layouts and sizes) and asks for the program: yes, and the request is left in
    `deferred` (were the build to fail, the call would run the product and the group as
    two kernels, see _make_launcher)."""
    if deferred is None:
        return prim.launch_for(device, args) is not None
    with kernels.deferring(deferred):
        try:
            return prim.launch_for(device, args) is not None
        except kernels.Deferred:
            return True


def fuse_epilogues(ir, device, deferred=None):
    """Give each product (`_LAUNCHERS`) whose result has exactly one reader, an elementwise
    group of the same shape, that group as its epilogue, where the product's kernel can take
    it on `device` for the layouts the compiled call will have (decided here, once). With a
    list `deferred`, the programs those kernels need are not built here but recorded there
    (kernels.deferring), for the pipeline's last pass to build with the others."""
    producer = {}
    readers = {}
    for i, e in enumerate(ir.eqns):
        for o in e.outputs:
            producer[o.id] = i
        for v in e.inputs:
            readers.setdefault(v.id, set()).add(i)
    out_ids = {v.id for v in ir.outvars}
    values = None if device.is_numpy else unbound_values(ir, device)
    replace, drop = {}, set()
    for i, e in enumerate(ir.eqns):
        if e.prim.fusion != "elementwise" and not isinstance(e.prim, FusedPrimitive):
            continue
        group = as_group(e)
        if group is None:
            continue
        # the latest product among the group's inputs that nothing else reads
        for pos in reversed(range(len(group.inputs))):
            v = group.inputs[pos]
            d = producer.get(v.id)
            if d is None or d in drop or readers[v.id] != {i} or v.id in out_ids:
                continue
            product = ir.eqns[d]
            if not _epilogue_ok(product, group):
                continue
            at, operands, also = [pos], list(product.inputs), []
            if product.prim is reduce_sum_p:
                # the group's other inputs that are the same sum of another array, read only
                # here, are summed in the same kernel (an MLP's bias gradients and their
                # updates in one launch, where the second sum would take a reduction of its
                # own)
                for q, u in enumerate(group.inputs):
                    other = ir.eqns[producer[u.id]] if u.id in producer else None
                    if q != pos and other is not None and other.prim is reduce_sum_p and \
                            other.params == product.params and readers[u.id] == {i} and \
                            u.id not in out_ids and producer[u.id] not in drop and \
                            other.inputs[0].aval == product.inputs[0].aval and \
                            u.id not in {w.id for w in group.inputs[:q]}:
                        at.append(q)
                        operands += other.inputs
                        also.append(producer[u.id])
            extras = [u for q, u in enumerate(group.inputs) if q not in at]
            prim = EpiloguePrimitive(product.prim, product.params, product.outputs[0].aval,
                                     group, pos if len(at) == 1 else tuple(at))
            if values is not None and not _takes(
                    prim, device, [values[u.id] for u in operands + extras], deferred):
                continue
            replace[i] = Eqn(prim, operands + extras, {}, list(group.outputs))
            drop.update([d, *also])
            break
    if not replace:
        return ir
    eqns = [replace.get(i, e) for i, e in enumerate(ir.eqns) if i not in drop]
    return dce(IR(ir.invars, ir.constvars, ir.consts, eqns, ir.outvars))
