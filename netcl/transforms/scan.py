"""lax.scan as a loop primitive: one compiled body under jit, with its own JVP, VJP and
batching rules, so that jit(grad(f)) of a long recurrence compiles one loop body (and one
for the backward pass), not one copy of the body per step.

`scan(f, init, xs)` outside every transform is a Python loop (values are concrete). Under
a transform, the body is traced once on abstract values (`_Body`): values of the enclosing
trace that `f` closes over (an RNN's weights under grad) become explicit operands, so each
transform sees them. `scan_p` binds with operands (closed-over values, init carry, xs) and
its rules each express the transformed scan as another scan at the parent interpreter:

- staging (jit): a real loop of `length` steps (control_flow's `while` with a trip count:
  no predicate read back) over (index, carry, stacked ys): x = xs[index] and ys[index] = y
  inside the compiled body. The index lives on the host (control_flow's _Counter): those
  are one copy each at an offset, the stacked ys are written in place, and the body runs
  as one Plan per step;
- jvp: a scan of the body's jvp over (primal, tangent) pairs;
- vjp: the forward scan also stacks each step's carry-in; the backward pass is a reverse
  scan of the body's vjp over (carry-in, x, y's cotangent), accumulating the closed-over
  values' cotangents in its carry;
- vmap: a scan of vmap(body), the batch axis of xs and ys moved behind the scanned axis.
"""
from ..core.ir import eval_ir
from ..core.tracing import Primitive, ShapedArray, Tracer, current_interpreter, set_interpreter
from ..tree_util import tree_flatten, tree_unflatten


class _Body:
    """The body traced once: `__call__(consts, carry, x) -> (carry, y)` over flat lists,
    by evaluating its IR under the current interpreter."""

    def __init__(self, ir, n_consts, n_carry, carry_tree, y_tree):
        self.ir, self.n_consts, self.n_carry = ir, n_consts, n_carry
        self.carry_tree, self.y_tree = carry_tree, y_tree
        self.y_avals = [v.aval for v in ir.outvars[n_carry:]]

    def __call__(self, consts, carry, x):
        outs = eval_ir(self.ir, self.ir.consts, [*consts, *carry, *x])
        return outs[:self.n_carry], outs[self.n_carry:]


def _trace_body(f, init_flat, carry_tree, x_avals, xs_tree):
    """(_Body, the traced values it closed over)."""
    from .loop_carry import PromoteCarry, check_carry
    from .staging import lift_traced_consts, stage
    carry_avals = [ShapedArray(c.shape, c.dtype, c.weak_type) for c in init_flat]
    y_tree_box = []

    def flat_body(*leaves):
        carry = tree_unflatten(carry_tree, list(leaves[:len(carry_avals)]))
        x = tree_unflatten(xs_tree, list(leaves[len(carry_avals):])) if xs_tree else None
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("scan: f must return a pair (carry, y)")
        new_carry, y = out
        c_flat, c_tree = tree_flatten(new_carry)
        promoted = check_carry("scan", carry_avals, carry_tree, c_flat, c_tree)
        if any(d is not None for d in promoted):
            raise PromoteCarry(promoted)
        y_flat, y_tree = tree_flatten(y)
        y_tree_box[:] = [y_tree]
        return tuple(c_flat) + tuple(y_flat)
    ir, _ = stage(flat_body, tuple(carry_avals) + tuple(x_avals))
    ir, captured = lift_traced_consts(ir, first=True)
    return _Body(ir, len(captured), len(carry_avals), carry_tree, y_tree_box[0]), captured


# Under a transform, a scan of at most this many steps whose caller leaves `unroll` unset
# is written out step by step, as a Python loop would be: it compiles in seconds and runs
# with fewer kernels (views for xs[i], one stack for the ys, fusion across steps: about 7
# a step for scan_bench's RNN under jit(grad), against 18 for the loop, whose backward
# body recomputes the forward one); a longer one becomes the loop primitive, whose
# compile time does not grow with its length.
UNROLL_UP_TO = 64


def scan_flat(f, init, xs, length, reverse, unroll=1):
    """(carry, ys) of scan under a transform: binds scan_p (see the module docstring)."""
    from ..core.eval import to_array
    init_flat, carry_tree = tree_flatten(init)
    init_flat = [x if isinstance(x, Tracer) or hasattr(x, "_buf") else to_array(x, "scan")
                 for x in init_flat]
    xs_flat, xs_tree = tree_flatten(xs)
    xs_flat = [x if isinstance(x, Tracer) or hasattr(x, "_buf") else to_array(x, "scan")
               for x in xs_flat]
    x_avals = [ShapedArray(tuple(x.shape[1:]), x.dtype, x.weak_type) for x in xs_flat]
    from .loop_carry import PromoteCarry, _promoted_leaves
    try:
        body, captured = _trace_body(f, init_flat, carry_tree, x_avals,
                                     xs_tree if xs_flat else None)
    except PromoteCarry as p:   # a Python scalar init: the loop carries its promotion
        init_flat = _promoted_leaves(init_flat, p.dtypes)
        body, captured = _trace_body(f, init_flat, carry_tree, x_avals,
                                     xs_tree if xs_flat else None)
    outs = scan_p.bind(*captured, *init_flat, *xs_flat, body=body, length=length,
                       reverse=reverse, unroll=unroll)
    carry = tree_unflatten(carry_tree, list(outs[:body.n_carry]))
    return carry, tree_unflatten(body.y_tree, list(outs[body.n_carry:]))


def _split(args, body):
    k, c = body.n_consts, body.n_carry
    return list(args[:k]), list(args[k:k + c]), list(args[k + c:])


def _stack(ys, avals, length):
    from .. import numpy as jnp
    if length == 0:
        return [jnp.zeros((0,) + tuple(a.shape), a.dtype) for a in avals]
    return [jnp.stack([y[k] for y in ys]) for k in range(len(avals))]


def _python_loop(body, consts, carry, xs, length, reverse):
    """The scan on concrete values: a loop over the steps."""
    ys = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        carry, y = body(consts, carry, [x[i] for x in xs])
        ys.append(y)
    if reverse:
        ys.reverse()
    return list(carry) + _stack(ys, body.y_avals, length)


def _staged_loop(body, consts, carry, xs, length, reverse, unroll):
    """The scan under staging: one compiled loop (control_flow's `while` with a trip count)
    whose body runs `unroll` steps, then the steps left over written out."""
    from .. import numpy as jnp
    from ..primitives.structural.dynamic_slices import (dynamic_index_in_dim,
                                                        dynamic_update_slice_in_dim)
    from .staged_loop import _staged_while
    from ..primitives.views import reshape
    steps = max(1, min(int(unroll), length)) if length else 1

    def one(i, carry, ys):
        at = (length - 1 - i) if reverse else i
        x = [dynamic_index_in_dim(v, at, 0, keepdims=False) for v in xs]
        carry, y = body(consts, carry, x)
        ys = [dynamic_update_slice_in_dim(s, reshape(v, (1,) + tuple(v.shape)), at, 0)
              for s, v in zip(ys, y)]
        return i + 1, list(carry), ys

    def several(state):
        for _ in range(steps):
            state = one(*state)
        return state
    ys0 = [jnp.zeros((length,) + tuple(a.shape), a.dtype) for a in body.y_avals]
    state = (jnp.asarray(0, dtype=jnp.int32), list(carry), ys0)
    if length // steps:
        state = _staged_while(None, several, state, count=length // steps)
    for _ in range(length % steps):
        state = one(*state)
    return list(state[1]) + list(state[2])


class _ScanRules:
    """The `call` object of scan_p: every interpreter hands the primitive to these."""

    def eval(self, args, params):
        body = params["body"]
        return tuple(_python_loop(body, *_split(args, body), params["length"],
                                  params["reverse"]))

    def stage(self, interp, args, params):
        body = params["body"]
        return tuple(_staged_loop(body, *_split(args, body), params["length"],
                                  params["reverse"], params["unroll"]))

    def jvp(self, interp, args, params):
        from ..core.ad_util import instantiate, is_zero
        from .ad import jvp as jvp_of
        body, length, reverse = params["body"], params["length"], params["reverse"]
        unroll = params["unroll"]
        primals, tangents = zip(*[interp.lift(a) for a in args])
        if all(is_zero(t) for t in tangents):
            with set_interpreter(interp.parent):
                return scan_p.bind(*primals, **params)
        tangents = [instantiate(t) for t in tangents]
        kp, cp, xp = _split(primals, body)
        kt, ct, xt = _split(tangents, body)

        def pair_body(carry, x):
            (c, dc), (v, dv) = carry, x
            (nc, y), (dnc, dy) = jvp_of(lambda k, cc, vv: body(k, cc, vv), (kp, c, v),
                                        (kt, dc, dv))
            return (nc, dnc), (y, dy)
        with set_interpreter(interp.parent):
            (c, dc), (y, dy) = scan_flat(pair_body, (cp, ct), (xp, xt), length, reverse,
                                         unroll)
        return tuple(interp._wrap(o, t) for o, t in zip(list(c) + list(y),
                                                        list(dc) + list(dy)))

    def vjp(self, interp, args, params):
        from ..core.ad_util import instantiate
        from .ad import vjp as vjp_of
        from .custom import _zeros_for
        body, length, reverse = params["body"], params["length"], params["reverse"]
        unroll = params["unroll"]
        primals, parents = zip(*[interp.lift(a) for a in args])
        consts, init, xs = _split(primals, body)

        def saving_body(carry, x):     # each step's carry-in is kept for the backward pass
            new, y = body(consts, carry, x)
            return new, (y, carry)
        with set_interpreter(interp.parent):
            carry, (ys, carries_in) = scan_flat(saving_body, init, xs, length, reverse,
                                                unroll)
        outs = tuple(carry) + tuple(ys)
        if all(p is None for p in parents):
            return outs

        def backward(cts):
            cts = [_zeros_for(o) if c is None else instantiate(c) for c, o in zip(cts, outs)]
            ct_carry, ct_ys = cts[:body.n_carry], cts[body.n_carry:]

            def back_body(acc, x):
                ct_c, ct_k = acc
                c_in, v, ct_y = x
                _, pullback = vjp_of(lambda k, cc, vv: body(k, cc, vv), consts, c_in, v)
                d_k, d_c, d_v = pullback((ct_c, ct_y))
                return (d_c, [a + b for a, b in zip(ct_k, d_k)]), d_v
            zeros_k = [_zeros_for(k) for k in consts]
            (ct_init, ct_consts), ct_xs = scan_flat(back_body, (ct_carry, zeros_k),
                                                    (carries_in, xs, ct_ys), length,
                                                    not reverse, unroll)
            return tuple(ct_consts) + tuple(ct_init) + tuple(ct_xs)
        return interp.record(backward, parents, outs, multiple_results=True)

    def batch(self, interp, args, params):
        from .. import numpy as jnp
        from .batching import BatchTracer, vmap
        body, length, reverse = params["body"], params["length"], params["reverse"]
        unroll = params["unroll"]
        vals, dims = zip(*[interp.lift(a) for a in args])
        if all(d is None for d in dims):
            with set_interpreter(interp.parent):
                return scan_p.bind(*vals, **params)
        size = interp.axis_size
        k, c = body.n_consts, body.n_carry
        with set_interpreter(interp.parent):
            consts = [v if d in (None, 0) else jnp.moveaxis(v, d, 0)
                      for v, d in zip(vals[:k], dims[:k])]
            k_axes = [None if d is None else 0 for d in dims[:k]]
            carry = [jnp.broadcast_to(v, (size,) + tuple(v.shape)) if d is None else
                     jnp.moveaxis(v, d, 0) for v, d in zip(vals[k:k + c], dims[k:k + c])]
            xs = [v if d is None else jnp.moveaxis(v, d, 1)
                  for v, d in zip(vals[k + c:], dims[k + c:])]
            x_axes = [None if d is None else 0 for d in dims[k + c:]]
            batched = vmap(lambda kk, cc, vv: body(kk, cc, vv), in_axes=(k_axes, 0, x_axes))
            new, ys = scan_flat(lambda cc, vv: batched(consts, cc, vv), carry, xs, length,
                                reverse, unroll)
        return tuple([BatchTracer(interp, v, 0) for v in new] +
                     [BatchTracer(interp, v, 1) for v in ys])


scan_p = Primitive("scan", multiple_results=True)
scan_p.call = _ScanRules()


def under_transform():
    """Whether scan runs under a transform (else it is a plain loop over values)."""
    from ..core.eval import eval_interpreter
    return current_interpreter() is not eval_interpreter
