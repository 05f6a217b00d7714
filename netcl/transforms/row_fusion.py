"""Row fusion for jit: reductions over the last axis with the elementwise work around them.

Softmax, log-softmax, logsumexp, layer norm and cross-entropy are chains like
`x -> max over rows -> x - max -> exp -> sum over rows -> divide`. A row group collects such
a chain over one shape (R, K): values of the full shape, per-row values (shape (R,) or (R, 1))
and reductions over the last axis. It compiles to one kernel with one work-group per row:

    for each reduction, in order:  loop k over the row (work-items striding), recompute the
                                   elementwise values it needs, accumulate; tree in local memory
    per-row values:                computed by every work-item from the reduced values
    full-shape outputs:            a last loop over the row computes and stores them

Re-reading a row is cheaper than writing and reading intermediates: a row is small enough to
stay in cache, and there is one launch instead of five or six. The pass finding the groups in
the IR is row_fusion_pass.py.
"""
import numpy as np

from ..core import commands, kernels
from ..core.codegen import (Op, broadcast_period, expression_template, helpers_for, input_kind,
                            op_vector_safe, vtype)
from ..core.shapes import prod
from ..core.tracing import Primitive
from .fusion import _c_literal

_REDUCERS = {"reduce_sum": ("sum", "0"), "reduce_max": ("max", "-INFINITY"),
             "reduce_min": ("min", "INFINITY")}  # op, identity


def _combine(op, a, b):
    if op == "sum":
        return f"({a} + {b})"
    cmp = ">" if op == "max" else "<"
    return f"((({b}) {cmp} ({a}) || ({b}) != ({b})) ? ({b}) : ({a}))"


class RowFusedPrimitive(Primitive):
    """A row group compiled into one kernel (one work-group per row)."""

    def __init__(self, eqns, inputs, outputs, literals, R, K, full_shape):
        # full_shape: the shape reduced over; R rows of K elements in row-major order
        super().__init__("rowfused_" + "_".join(e.prim.name for e in eqns
                                               if e.prim.name in _REDUCERS)[:60],
                         multiple_results=True, fusion="reduction")
        self.kernel_name = "rowfused"    # (one kernel per program: see FusedPrimitive)
        self.eqns, self.inputs, self.outputs, self.literals = eqns, inputs, outputs, literals
        # values are named by their position in the group, not by the trace's variable ids,
        # so the same group traced again renders the same source (built once)
        self._local = {o.id: i for i, o in enumerate(o for e in eqns for o in e.outputs)}
        self.R, self.K, self.full_shape = R, K, tuple(full_shape)
        self.out_avals = [v.aval for v in outputs]
        self.abstract_eval = lambda *args, **params: tuple(self.out_avals)
        self.make_launcher = self._make_launcher
        self.reference = self._reference

    # -- classification of values ---------------------------------------------------------
    def _is_full(self, aval):
        return tuple(aval.shape) == self.full_shape

    # -- code generation ------------------------------------------------------------------
    def source_for(self, device, args, L):
        R, K = self.R, self.K
        full_in = {}
        row_in = {}
        lines_args = [f"__global {kernels.storage_ctype(v.aval.dtype)}* out{j}"
                      for j, v in enumerate(self.outputs)]
        for j, (v, x) in enumerate(zip(self.inputs, args)):
            lines_args += [f"__global const {kernels.storage_ctype(x.dtype)}* in{j}",
                           f"const int off{j}"]
            if self._is_full(v.aval):
                full_in[v.id] = (j, self._full_kind(x))
            else:   # (0-d inputs: one value for every row)
                row_in[v.id] = (j, "s" if v.aval.ndim == 0 else input_kind(x, tuple(v.aval.shape)))
        strided = [x for x, v in zip(args, self.inputs)
                   if (full_in.get(v.id) or row_in.get(v.id))[1] == "g"]
        if strided:
            lines_args.append("__constant int* meta")
        cpu = device.target.kernel_family == "cpu"
        rows = self._rows_per_item(device)
        if rows:  # a work-item walks `rows` rows, in groups of one (see _rows_per_item)
            body = [f"__kernel void {self.kernel_name}({', '.join(lines_args)}) {{",
                    f"  const int K = {K};",
                    f"  const int row0 = get_global_id(0) * {rows};",
                    f"  const int row1 = min({R}, row0 + {rows});",
                    "  for (int row = row0; row < row1; ++row) {"]
        elif cpu:  # one work-item per row, no barriers: PoCL vectorises the explicit float8 loops
            body = [f"__kernel void {self.kernel_name}({', '.join(lines_args)}) {{",
                    "  const int row = get_global_id(0);",
                    f"  if (row >= {R}) return;",
                    f"  const int K = {K};"]
        else:
            body = [f"#define L {L}",
                    f"__kernel __attribute__((reqd_work_group_size(L, 1, 1))) void "
                    f"{self.kernel_name}({', '.join(lines_args)}) {{",
                    "  const int row = get_group_id(0);",
                    "  const int lid = get_local_id(0);",
                    f"  const int K = {K};",
                    "  __local float scratch_f[L];"]
            if any(v.aval.dtype == np.float64 for v in self._all_vars()):
                body.append("  __local double scratch_d[L];")
        # Per-row inputs, read once.
        meta_pos = {}
        pos = 0
        for x, v in zip(args, self.inputs):
            kind = (full_in.get(v.id) or row_in.get(v.id))[1]
            if kind == "g":
                meta_pos[v.id] = pos
                pos += 2 * x.ndim
        names = {}
        for vid, (j, kind) in row_in.items():
            v = next(u for u in self.inputs if u.id == vid)
            idx = self._index(j, kind, "row", v, meta_pos)
            names[vid] = f"r{j}"
            body.append(f"  const {kernels.compute_ctype(v.aval.dtype)} r{j} = "
                        f"{kernels.load(v.aval.dtype, f'in{j}', idx)};")
        for vid, val in self.literals.items():
            names[vid] = _c_literal(val, self._aval(vid).dtype)
        alias = self._aliases()
        once = self._once_scalars() if R > 1 else frozenset()
        w = device.target.vector_width if cpu and self._vector_ok(full_in) else 1
        emit = (lambda tgt, nm, ind, width=1:
                self._emit_full(tgt, nm, full_in, meta_pos, alias, ind, width))
        # CPU: the last reduction's input, if an output needs it (softmax's exp(x - max)),
        # is stored into that output during the reduction loop and read back in the store
        # loop instead of being recomputed (one item owns a row, so this is race-free).
        stash = self._stash_plan(alias) if cpu else None
        last_red = [e for e in self.eqns if e.prim.name in _REDUCERS][-1]
        # Reductions, in program order, each with the full-shape chain it needs.
        for e in self.eqns:
            if e.prim.name not in _REDUCERS:
                continue
            op, init = _REDUCERS[e.prim.name]
            src = alias.get(e.inputs[0].id, e.inputs[0].id)
            ct = kernels.compute_ctype(e.outputs[0].aval.dtype)
            acc = f"acc{self._local[e.outputs[0].id]}"
            body.append(f"  {ct} {acc} = ({ct}){init};")
            if cpu:
                body.append("  {\n    int k = 0;")
                if w > 1:
                    vacc = f"vacc{self._local[e.outputs[0].id]}"
                    body.append(f"    {vtype(e.outputs[0].aval.dtype, w)} {vacc} = "
                                f"({vtype(e.outputs[0].aval.dtype, w)})({init});")
                    body.append(f"    for (; k + {w} <= K; k += {w}) {{")
                    nm = dict(names)
                    body += emit(src, nm, "      ", w)
                    body.append(f"      {vacc} = {_combine(op, vacc, nm[src])};")
                    if stash and e is last_red:
                        body.append("      " + kernels.vstore(
                            np.dtype(np.float32), w, f"out{stash[1]} + row * K + k", nm[src], cpu))
                    body.append("    }")
                    for lane in range(w):
                        body.append(f"    {acc} = {_combine(op, acc, f'{vacc}.s{lane}')};")
                body.append("    for (; k < K; ++k) {")
                nm = dict(names)
                body += emit(src, nm, "      ")
                if stash and e is last_red:
                    body.append(f"      out{stash[1]}[row * K + k] = {nm[src]};")
                body += [f"      {acc} = {_combine(op, acc, nm[src])};", "    }", "  }"]
                body.append(f"  const {ct} v{self._local[e.outputs[0].id]} = {acc};")
            else:
                scratch = "scratch_d" if ct == "double" else "scratch_f"
                body.append("  for (int k = lid; k < K; k += L) {")
                nm = dict(names)
                body += emit(src, nm, "    ")
                body.append(f"    {acc} = {_combine(op, acc, nm[src])};")
                body.append("  }")
                body += [f"  {scratch}[lid] = {acc};", "  barrier(CLK_LOCAL_MEM_FENCE);",
                         "  for (int s = L / 2; s > 0; s >>= 1) {",
                         f"    if (lid < s) {scratch}[lid] = "
                         f"{_combine(op, f'{scratch}[lid]', f'{scratch}[lid + s]')};",
                         "    barrier(CLK_LOCAL_MEM_FENCE);", "  }",
                         f"  const {ct} v{self._local[e.outputs[0].id]} = {scratch}[0];",
                         "  barrier(CLK_LOCAL_MEM_FENCE);"]
            names[e.outputs[0].id] = f"v{self._local[e.outputs[0].id]}"
            # Per-row elementwise values that only depend on what is known now.
            body += self._emit_rows(names, alias, "  ", once)
        # Outputs.
        full_outs = [(j, v) for j, v in enumerate(self.outputs) if self._is_full(v.aval)]
        row_outs = [(j, v) for j, v in enumerate(self.outputs) if not self._is_full(v.aval)]
        if full_outs:
            if cpu:
                body.append("  {\n    int k = 0;")
                if w > 1:
                    body.append(f"    for (; k + {w} <= K; k += {w}) {{")
                    nm = dict(names)
                    if stash:
                        st = kernels.vload(np.dtype(np.float32), w,
                                           f"out{stash[1]} + row * K + k", cpu)
                        body.append(f"      const float{w} st = {st};")
                        nm[stash[0]] = "st"
                    for j, v in full_outs:
                        if stash and alias.get(v.id, v.id) == stash[0] and j == stash[1]:
                            continue  # stored during the reduction loop
                        body += emit(v.id, nm, "      ", w)
                        body.append("      " + kernels.vstore(
                            v.aval.dtype, w, f"out{j} + row * K + k", nm[alias.get(v.id, v.id)],
                            cpu))
                    body.append("    }")
                body.append("    for (; k < K; ++k) {")
            else:
                body.append("  for (int k = lid; k < K; k += L) {")
            nm = dict(names)
            if stash:
                body.append(f"      const float st = out{stash[1]}[row * K + k];")
                nm[stash[0]] = "st"
            for j, v in full_outs:
                if stash and alias.get(v.id, v.id) == stash[0] and j == stash[1]:
                    continue  # stored during the reduction loop
                body += emit(v.id, nm, "      " if cpu else "    ")
                body.append(("      " if cpu else "    ") + kernels.store(
                    v.aval.dtype, f"out{j}", "row * K + k", nm[alias.get(v.id, v.id)]))
            body.append("    }\n  }" if cpu else "  }")
        if row_outs:
            body.append("  {" if cpu else "  if (lid == 0) {")
            scalars = [(j, v) for j, v in row_outs if v.aval.ndim == 0 and R > 1]
            for j, v in row_outs:
                if (j, v) not in scalars:
                    body.append("    " + kernels.store(v.aval.dtype, f"out{j}", "row",
                                                       names[alias.get(v.id, v.id)]))
            if scalars:     # free scalars (see _absorb_scalars): row 0 computes and stores
                body.append("    if (row == 0) {")
                body += self._emit_rows(names, alias, "      ")
                body += ["      " + kernels.store(v.aval.dtype, f"out{j}", "0",
                                                  names[alias.get(v.id, v.id)])
                         for j, v in scalars]
                body.append("    }")
            body.append("  }")
        if rows:
            body.append("  }")     # (the rows' loop)
        body.append("}")
        code = "\n".join(body) + "\n"
        meta = None
        if strided:
            vals = []
            for x, v in zip(args, self.inputs):
                if v.id in meta_pos:
                    vals += list(x.shape) + [st if d != 1 else 0
                                             for st, d in zip(x.strides, x.shape)]
            meta = np.array(vals, dtype=np.int32)
        return "#pragma OPENCL FP_CONTRACT OFF\n" + helpers_for(code) + code, meta

    def _rows_per_item(self, device):
        """Rows one work-item of a CPU row kernel walks, in work-groups of one work-item:
        about the elements of the Target's elementwise_walk (vectors of its width), at least
        one row; 0 where work-items take one row each, in groups of 8 (no walk: GPUs)."""
        walk = device.target.elementwise_walk
        if device.target.kernel_family != "cpu" or walk <= 1:
            return 0
        return max(1, min(self.R, walk * device.target.vector_width // max(self.K, 1)))

    def _all_vars(self):
        for e in self.eqns:
            yield from e.inputs
            yield from e.outputs

    def _aval(self, vid):
        for v in self._all_vars():
            if v.id == vid:
                return v.aval
        raise KeyError(vid)

    def _aliases(self):
        """broadcasts/reshapes inside the group read their source value directly."""
        alias = {}
        for e in self.eqns:
            if e.prim.name in ("broadcast_in_dim", "reshape"):
                src = e.inputs[0].id
                alias[e.outputs[0].id] = alias.get(src, src)
        return alias

    def _full_kind(self, x):
        """input_kind of a full-shape input, with two more: 'col', one value per column
        broadcast over the rows (a bias added to logits), and 'row', one value per row
        broadcast along it. Both read without the generic index's divisions, and 'col'
        loads vectors (a log-softmax of logits + bias on a CPU spends most of its time in
        those divisions otherwise)."""
        kind = input_kind(x, self.full_shape, broadcasts=True)
        if kind in ("r", "q"):
            period = broadcast_period(x)[1]
            if period == self.K:
                return "col" if kind == "r" else "row"
            return "g"
        return kind

    def _index(self, j, kind, flat, v, meta_pos):
        """The index into in{j} of element `flat` (for 'col' and 'row' kinds, flat is
        row * K + k)."""
        if kind == "c":
            return f"off{j} + {flat}"
        if kind == "s":
            return f"off{j}"
        if kind == "col":
            return f"off{j} + k"
        if kind == "row":
            return f"off{j} + row"
        # generic: peel coordinates of `flat` over the input's own shape
        nd = v.aval.ndim
        base = meta_pos[v.id]
        terms = []
        rem = f"({flat})"
        for d in range(nd - 1, -1, -1):
            terms.append(f"(({rem} % meta[{base + d}]) * meta[{base + nd + d}])")
            rem = f"({rem} / meta[{base + d}])"
        return f"off{j} + " + " + ".join(terms) if terms else f"off{j}"

    def _emit_full(self, target, names, full_in, meta_pos, alias, ind, width=1):
        """Lines computing full-shape value `target` (and what it needs) at element k (or,
        with width > 1, at elements k .. k+width-1 as vectors)."""
        lines = []
        target = alias.get(target, target)
        if target in names:
            return lines
        producer = {o.id: e for e in self.eqns for o in e.outputs}
        if target in full_in:
            j, kind = full_in[target]
            dt = next(u for u in self.inputs if u.id == target).aval.dtype
            v = next(u for u in self.inputs if u.id == target)
            names[target] = f"f{j}"
            if width == 1:
                load = kernels.load(dt, f"in{j}",
                                    self._index(j, kind, "row * K + k", v, meta_pos))
            elif kind in ("c", "col"):
                at = "row * K + k" if kind == "c" else "k"
                load = kernels.vload(dt, width, f"in{j} + off{j} + {at}", cpu=True)
            else:  # 's' or 'row': one value for the whole array or row
                one = kernels.load(dt, f"in{j}", self._index(j, kind, "", v, meta_pos))
                load = f"({vtype(dt, width)})({one})"
            lines.append(f"{ind}const {vtype(dt, width)} f{j} = {load};")
            return lines
        e = producer[target]
        ops = []
        for u in e.inputs:
            lines += self._emit_full(u.id, names, full_in, meta_pos, alias, ind, width)
            ops.append(names[alias.get(u.id, u.id)])
        out = e.outputs[0]
        w = width if self._is_full(out.aval) else 1
        in_dtypes = [u.aval.dtype for u in e.inputs]
        op = Op(f"e{self._local[target]}", e.prim,
                expression_template(e.prim, in_dtypes, out.aval.dtype, e.params),
                in_dtypes[0], out.aval.dtype, ops)
        lines.append(ind + op.render(w))
        names[target] = op.var
        return lines

    def _stash_plan(self, alias):
        """(value id, output index) to stash, or None (see source_for)."""
        last = [e for e in self.eqns if e.prim.name in _REDUCERS][-1]
        src = alias.get(last.inputs[0].id, last.inputs[0].id)
        if src in {v.id for v in self.inputs} or self._aval(src).dtype != np.float32:
            return None
        for j, v in enumerate(self.outputs):
            if self._is_full(v.aval) and v.aval.dtype == np.float32 and \
                    src in self._deps(alias.get(v.id, v.id), alias):
                return src, j
        return None

    def _deps(self, target, alias):
        """Ids of the group values `target` is computed from (itself included)."""
        producer = {o.id: e for e in self.eqns for o in e.outputs}
        seen, todo = set(), [target]
        while todo:
            t = todo.pop()
            t = alias.get(t, t)
            if t in seen:
                continue
            seen.add(t)
            e = producer.get(t)
            if e is not None and e.prim.name not in _REDUCERS:
                todo += [u.id for u in e.inputs]
        return seen

    def _vector_ok(self, full_in):
        """CPU row kernels use float8 loops when every full-shape op is vector-safe."""
        if any(kind == "g" for _, kind in full_in.values()):
            return False
        for v in self.inputs:
            if v.id in full_in and v.aval.dtype not in (np.float32, np.float16):
                return False
        for e in self.eqns:
            o = e.outputs[0]
            if e.prim.name in _REDUCERS or e.prim.name in ("broadcast_in_dim", "reshape") \
                    or not self._is_full(o.aval):
                continue
            ins = [u.aval.dtype for u in e.inputs]
            template = expression_template(e.prim, ins, o.aval.dtype, e.params)
            if not op_vector_safe(e.prim, ins[0], o.aval.dtype, template):
                return False
        return all(v.aval.dtype in (np.float32, np.float16) for v in self.outputs
                   if self._is_full(v.aval))

    def _once_scalars(self):
        """The 0-d values that no per-row or full-shape value reads (free scalars and their
        chains, see _absorb_scalars): row 0 alone computes them, where it stores them.
        Computing them in every row (adam's powers of its decay rates, say) would repeat
        work that costs more than the row's own in a small log-softmax kernel."""
        zero = {e.outputs[0].id for e in self.eqns if e.outputs[0].aval.ndim == 0}
        needed = {u.id for e in self.eqns if e.outputs[0].aval.ndim != 0 for u in e.inputs}
        for e in reversed(self.eqns):       # what a needed scalar reads is needed too
            if e.outputs[0].id in needed:
                needed.update(u.id for u in e.inputs)
        return frozenset(zero - needed)

    def _emit_rows(self, names, alias, ind, skip=frozenset()):
        """Per-row elementwise values whose inputs are all known per-row values (but not
        the values in `skip`)."""
        lines = []
        progress = True
        while progress:
            progress = False
            for e in self.eqns:
                o = e.outputs[0]
                if o.id in names or o.id in skip or e.prim.name in _REDUCERS or \
                        e.prim.name in ("broadcast_in_dim", "reshape") or self._is_full(o.aval):
                    continue
                ins = [alias.get(u.id, u.id) for u in e.inputs]
                if all(i in names for i in ins):
                    in_dtypes = [u.aval.dtype for u in e.inputs]
                    op = Op(f"w{self._local[o.id]}", e.prim,
                            expression_template(e.prim, in_dtypes, o.aval.dtype, e.params),
                            in_dtypes[0], o.aval.dtype, [names[i] for i in ins])
                    lines.append(ind + op.render(1))
                    names[o.id] = f"w{self._local[o.id]}"
                    progress = True
        # aliases of per-row values
        for a, src in alias.items():
            if src in names and a not in names:
                names[a] = names[src]
        return lines

    def _make_launcher(self, device, args, params, out_avals):
        import pyopencl as cl
        from ..core.array import Array, layout_id
        from ..core.pool import Storage
        from ..core.shapes import contiguous_strides
        L = 1
        while L < min(self.K, device.work_group):
            L *= 2
        L = max(L, 1)
        src, meta = self.source_for(device, args, L)
        k = kernels.kernel(device, src, self.kernel_name)
        m, nin = len(self.outputs), len(self.inputs)
        for j, x in enumerate(args):
            k.set_arg(m + 2 * j + 1, np.int32(x.offset))
        if meta is not None:
            mb = cl.Buffer(device.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                           hostbuf=meta)
            k.set_arg(m + 2 * nin, mb)
            k._netcl_meta = mb
        outs_meta = []
        for a in self.out_avals:
            st = contiguous_strides(a.shape)
            outs_meta.append((a.shape, a.dtype, a.weak_type, st, prod(a.shape) * a.dtype.itemsize,
                              layout_id(device, a.shape, a.dtype, a.weak_type, st, 0)))
        rows = self._rows_per_item(device)
        if rows:
            gsize, lsize = (max(-(-self.R // rows), 1),), (1,)
        elif device.target.kernel_family == "cpu":
            gsize, lsize = ((self.R + 7) // 8 * 8,), (8,)
        else:
            gsize, lsize = (self.R * L,), (L,)
        queue, pool, set_arg = device.queue, device.pool, k.set_arg
        enqueue = commands.launch
        R = self.R

        def launch(*xs):
            outs = []
            for j, (shape, dt, weak, st, nbytes, lid) in enumerate(outs_meta):
                s = Storage(pool, nbytes)
                outs.append(Array(device, s.buf, s, shape, dt, st, 0, weak, True, lid))
                set_arg(j, s.buf)
            if R:
                for j, x in enumerate(xs):
                    set_arg(m + 2 * j, x._buf)
                enqueue(queue, k, gsize, lsize)
            return tuple(outs)
        return launch

    def _reference(self, *xs):
        env = {v.id: x for v, x in zip(self.inputs, xs)}
        for vid, val in self.literals.items():
            env[vid] = np.asarray(val, dtype=self._aval(vid).dtype)
        for e in self.eqns:
            ins = [env[v.id] for v in e.inputs]
            outs = e.prim.reference(*ins, **e.params)
            env[e.outputs[0].id] = np.asarray(outs, dtype=e.outputs[0].aval.dtype)
        return tuple(env[v.id] for v in self.outputs)
