"""The staged loop: a `while` primitive whose condition and body are compiled (fused)
sub-programs, run by the host reading the predicate each iteration (`_Loop`), with the trip
count's index kept on the host where the body only counts (`_split_counter`). Its rules:
batching (`_while_batch`, JAX's: run while any example's condition holds) and forward mode
(`_while_jvp`). control_flow.py's while_loop and fori_loop (and scan.py's long scans) stage
loops through `_staged_while`.
"""
import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.ir import Eqn
from ..core.tracing import Primitive, ShapedArray, Tracer
from ..primitives.elementwise import copy_p
from ..tree_util import tree_flatten, tree_unflatten
from .staging import lift_traced_consts, stage
from .loop_carry import PromoteCarry, _promoted_leaves, check_carry


# ---- a staged loop -------------------------------------------------------------------------

class _Loop:
    """A compiled condition and body over a flat carry (used by the `while` primitive).
    The primitive's operands are the carry, then the values the condition and the body
    closed over (`cond_captured`, `body_captured`: their positions among those). With a
    `count` (a trip count known when tracing: scan, fori_loop) there is no condition, and
    the host never waits for the device to read one. With a `counter` (_Counter: carry 0
    is an index the body advances by integer arithmetic, from a value known when tracing)
    the index lives on the host: `body_exe` is the rest of the body, which reads it as
    host ints (dynamic_slice / dynamic_update_slice starts: offsets of the copies, no
    device array per step) or as arrays made from it, and runs as one Plan per step."""

    def __init__(self, cond_exe, body_exe, n_carry, cond_captured=(), body_captured=(),
                 count=None, counter=None, staged=(None, None)):
        self.cond_exe, self.body_exe = cond_exe, body_exe
        # the condition's and the body's IRs as staged (captured values trailing, before
        # jit's passes and the counter split): what the batching rule vmaps
        self.cond_ir, self.body_ir = staged
        self.n_carry = n_carry
        self.cond_captured, self.body_captured = cond_captured, body_captured
        self.count = count
        self.counter = counter
        n_dev = n_carry - (counter is not None)   # the carries body_exe takes and returns
        ir = body_exe.ir
        # carries the compiled body writes over (its carry inputs are donated: a scan's
        # stacked outputs take one slice per step in place, not a copy of the whole stack)
        carry_at = {v.id: i for i, v in enumerate(ir.invars[:n_dev])}
        self.written = sorted({carry_at[e.inputs[j].id] for e in ir.eqns
                               for j in e.overwrites if e.inputs[j].id in carry_at})
        # of those, the ones the body may return as an array it did not make (an input, a
        # constant, a view, or one value twice): only these can be another carry or a
        # captured value
        from .plan import is_view
        made = {o.id for e in ir.eqns if not is_view(e) for o in e.outputs}
        outs = [v.id for v in ir.outvars[:n_dev]]
        self._shared = [i for i in self.written
                        if outs[i] not in made or outs.count(outs[i]) > 1]
        self._plans = {}        # (device, entry layouts) -> the body's Plan.run, or None

    def __repr__(self):
        cond = (f"{self.count} times" if self.count is not None else
                f"cond: {len(self.cond_exe.steps)} steps")
        return f"loop({cond}, body: {len(self.body_exe.steps)} steps)"

    def run(self, operands):
        # dense operands: the compiled body records its launchers for dense layouts only
        # (a broadcast zero carry would send every step through the launcher lookup)
        fresh = set()
        dense = []
        for x in operands:
            if isinstance(x, Array) and not x._contig:
                x = x._dense()
                fresh.add(id(x))
            dense.append(x)
        operands = dense
        carry, captured = list(operands[:self.n_carry]), operands[self.n_carry:]
        body_in = [captured[k] for k in self.body_captured]
        if self.counter is not None:
            return _not_operands(self._run_counted(carry, body_in, fresh), operands)
        self._own(carry, body_in, first=True, fresh=fresh)
        if self.count is not None:
            for _ in range(self.count):
                carry = list(self.body_exe(carry + body_in))
                if self._shared:
                    self._own(carry, body_in)
            return _not_operands(carry, operands)
        cond_in = [captured[k] for k in self.cond_captured]
        while bool(self.cond_exe(carry + cond_in)[0]):
            carry = list(self.body_exe(carry + body_in))
            if self._shared:
                self._own(carry, body_in)
        return _not_operands(carry, operands)

    def _run_counted(self, carry, body_in, fresh):
        """The loop with its index on the host (see the class docstring)."""
        ctr, device = self.counter, carry[0].device
        dev = carry[1:]
        self._own(dev, body_in, first=True, fresh=fresh)
        run = self._plan(device, dev, body_in)
        c = ctr.start
        if run is not None:
            for _ in range(self.count):
                c, extra = ctr.step(c, device)
                dev = run(*dev, *extra, *body_in)
                if self._shared:
                    self._own(dev, body_in)
        else:           # (other layouts, the NumPy device: the body binds its steps)
            for _ in range(self.count):
                c, extra = ctr.step(c, device, arrays=True)
                dev = list(self.body_exe(dev + extra + body_in))
                if self._shared:
                    self._own(dev, body_in)
        return (ctr.array(c, device), *dev)

    def _plan(self, device, dev, body_in):
        """The body's Plan.run for these entry layouts (built once), None where it has none:
        dynamic slices at host starts run host_start_launches, every other step the Launch
        a compiled call would; the carries it returns must be laid out as it takes them."""
        key = (device,) + tuple(x._layout_id() if isinstance(x, Array) else None
                                for x in dev + body_in)
        try:
            return self._plans[key]
        except KeyError:
            pass
        run = None
        if not device.is_numpy:
            from ..core.devices import default_device
            if device is default_device():
                run = self._build_plan(device, key[1:])
            else:
                with default_device(device):
                    run = self._build_plan(device, key[1:])
        self._plans[key] = run
        return run

    def _build_plan(self, device, layouts):
        from ..primitives.structural.dynamic_slices import host_start_launch
        from .executable import launcher_for
        from .plan import Plan, unbound_values
        ir, ctr = self.body_exe.ir, self.counter
        n_dev = self.n_carry - 1
        env = unbound_values(ir, device)
        outer = list(ir.invars[:n_dev]) + list(ir.invars[n_dev + ctr.n_extra:])
        if tuple(env[v.id]._layout_id() for v in outer) != layouts or any(
                env[o.id]._layout_id() != env[i.id]._layout_id()
                for o, i in zip(ir.outvars, ir.invars[:n_dev])):
            return None
        host = set(ctr.host_ids)
        known = {}
        for v, c in zip(ir.constvars, ir.consts):
            if isinstance(c, Array) and c.ndim == 0 and dtypes.kind(c.dtype) in "iu":
                known[v.id] = int(np.asarray(c))
        launches = []
        for e in ir.eqns:
            args = [env[v.id] for v in e.inputs]
            launch = None
            first = _START_AT.get(e.prim.name)
            if first is not None and all(v.id in host or v.id in known
                                         for v in e.inputs[first:]):
                launch = host_start_launch(e.prim, device, args, e.params,
                                           [known.get(v.id) for v in e.inputs[first:]])
            if launch is None:
                launch = launcher_for(e.prim, args, e.params)
            if launch is None:
                return None
            launches.append(launch)
        return Plan.build(ir, launches).run

    def _own(self, carry, others, first=False, fresh=()):
        """Make the carries the body writes over arrays of the loop's own: copies of the
        caller's on entry (not of those `run` has just made dense), and later of any that
        is also another carry or a captured value (a body may return one array twice, or
        a captured weight as a carry)."""
        for i in (self.written if first else self._shared):
            x = carry[i]
            if first and id(x) in fresh:
                continue
            if first or any(y is x for j, y in enumerate(carry) if j != i) or \
                    any(y is x for y in others):
                carry[i] = copy_p.bind(x)


def _not_operands(outputs, operands):
    """The loop's outputs, each its own buffer: a carry the body returned unchanged (or every
    carry, where the loop ran no step) is the caller's operand, or a captured value, itself;
    a jitted program treats the loop's outputs as new values and may write over one in place
    while the operand is still read (the same buffer under two names)."""
    def memory(x):
        return id(x._storage if x._storage is not None else x._buf)
    taken = {memory(x) for x in operands if isinstance(x, Array)}
    return tuple(copy_p.bind(x) if isinstance(x, Array) and memory(x) in taken else x
                 for x in outputs)


# where the start indices begin among the inputs of the primitives a loop's host index feeds
_START_AT = {"dynamic_slice": 1, "dynamic_update_slice": 2}


class _Counter:
    """The host side of a counted loop whose carry 0 is an index (a 0-d integer) that the
    body advances by integer arithmetic on 0-d values, from `start` (known when tracing):
    `step(index)` evaluates that arithmetic with the primitives' NumPy references and
    returns the next index and the values the rest of the body reads: host ints (starts of
    dynamic slices, `host_ids`), then 0-d arrays made from the others (`made`)."""

    def __init__(self, start, aval, prog, next_id, host_ids, made, in_id):
        self.start, self.aval = start, aval
        self.host_ids, self.made = tuple(host_ids), tuple(made)   # made: (id, aval)
        self.n_extra = len(self.host_ids) + len(self.made)
        self._next = _host_program(prog, in_id, next_id, self.host_ids,
                                   [i for i, _ in self.made])

    def step(self, c, device, arrays=False):
        c, extra, made = self._next(c)
        if arrays:
            from ..core.eval import scalar_constant
            extra = [scalar_constant(v, dtypes.int32, device, weak=False) for v in extra]
        if made:
            extra = extra + [_host_array(v, a, device) for v, (_, a) in zip(made, self.made)]
        return c, extra

    def array(self, c, device):
        return _host_array(c, self.aval, device)


def _host_program(prog, in_id, next_id, int_ids, made_ids):
    """The index arithmetic as one generated function ``(index) -> (next index, [host
    ints], [values to make arrays of])`` calling the primitives' NumPy references."""
    env, lines, names = {}, [], {in_id: "c"}
    for k, (ref, ins, params, out) in enumerate(prog):
        env[f"R{k}"] = ref
        args = []
        for j, (var, x) in enumerate(ins):
            if var:
                args.append(names[x])
            else:
                env[f"K{k}_{j}"] = x
                args.append(f"K{k}_{j}")
        if params:
            env[f"P{k}"] = params
            args.append(f"**P{k}")
        names[out] = f"v{k}"
        lines.append(f"    v{k} = R{k}({', '.join(args)})\n")
    ints = "".join(f"int({names[i]}), " for i in int_ids)
    made = "".join(f"{names[i]}, " for i in made_ids)
    src = "def step(c):\n" + "".join(lines) + \
        f"    return {names[next_id]}, [{ints}], [{made}]\n"
    exec(src, env)
    return env["step"]


def _host_array(v, aval, device):
    """A fresh 0-d array of `aval` holding v (fresh: a loop may write over its carries)."""
    return Array.from_numpy(device, np.asarray(v, dtype=aval.dtype), aval.weak_type)


def _split_counter(ir, n_carry, init):
    """(_Counter, the body IR without the index arithmetic) for a counted loop's body IR
    (invars: the carries, then captured values) whose carry 0 is an index that the body
    advances on 0-d integers only, from `init` (a concrete array); else None. The rest of
    the body takes, after its other carries, the host ints that dynamic slices read as
    starts, then arrays of the index values anything else reads; it returns the other
    carries."""
    from ..core.ir import IR, Var
    if n_carry == 0 or not isinstance(init, Array) or init.ndim or \
            dtypes.kind(init.dtype) not in "iu":
        return None
    index = ir.invars[0]

    def scalar_int(v):
        return v.aval.shape == () and dtypes.kind(v.aval.dtype) in "biu"
    consts = {v.id: np.asarray(c) for v, c in zip(ir.constvars, ir.consts)
              if isinstance(c, Array) and scalar_int(v)}
    host, prog, rest = {index.id}, [], []
    for e in ir.eqns:
        if not ((e.prim.fusion == "elementwise" or e.prim.fusion == "view") and
                e.prim.reference is not None and e.prim.call is None and
                not e.prim.multiple_results and len(e.outputs) == 1 and
                scalar_int(e.outputs[0]) and
                all(v.id in host or v.id in consts for v in e.inputs)):
            rest.append(e)
        elif any(v.id in host for v in e.inputs):
            prog.append((e.prim.reference, [(True, v.id) if v.id in host else
                                            (False, consts[v.id]) for v in e.inputs],
                         dict(e.params), e.outputs[0].id))
            host.add(e.outputs[0].id)
        else:       # of constants only: its value now, for the index arithmetic after it
            consts[e.outputs[0].id] = np.asarray(e.prim.reference(
                *[consts[v.id] for v in e.inputs], **e.params))
            rest.append(e)
    if ir.outvars[0].id not in host:
        return None
    ints, made = {}, {}         # host value id -> the Var the rest of the body reads

    def made_var(v):
        if v.id not in made:
            made[v.id] = Var(v.aval)
        return made[v.id]
    eqns = []
    for e in rest:
        first = _START_AT.get(e.prim.name)
        ins = list(e.inputs)
        for j, v in enumerate(ins):
            if v.id in host:
                if first is not None and j >= first:
                    ints.setdefault(v.id, v)
                else:
                    ins[j] = made_var(v)
        eqns.append(e if ins == list(e.inputs) else
                    Eqn(e.prim, ins, e.params, e.outputs, e.overwrites))
    outs = [made_var(v) if v.id in host else v for v in ir.outvars[1:]]
    rest_ir = IR(list(ir.invars[1:n_carry]) + list(ints.values()) + list(made.values()) +
                 list(ir.invars[n_carry:]), ir.constvars, ir.consts, eqns, outs)
    start = np.asarray(init)[()]
    counter = _Counter(start, index.aval, prog, ir.outvars[0].id, list(ints),
                       [(i, v.aval) for i, v in made.items()], index.id)
    return counter, rest_ir


while_p = Primitive("while", multiple_results=True)
while_p.abstract_eval = lambda *args, loop, avals: tuple(avals)
while_p.make_launcher = lambda device, args, params, out: (
    lambda *xs: params["loop"].run(xs))
while_p.reference = lambda *xs, loop, avals: tuple(
    x._buf if isinstance(x, Array) else x for x in loop.run(
        tuple(_wrap_np(x) for x in xs)))


def _while_batch(vals, dims, *, loop, avals):
    """vmap of a staged loop: the batched condition and body (vmaps of the loop's staged
    IRs) run while any example's condition holds, each example keeping its carry once its
    own condition fails (JAX's rule); a counted loop runs its count for every example."""
    from .. import numpy as jnp
    from ..core.ir import eval_ir
    from .batching import vmap
    n = loop.n_carry
    size = next(v.shape[d] for v, d in zip(vals, dims) if d is not None)
    at0 = [v if d is None else jnp.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    carry = tuple(v if d is not None else jnp.broadcast_to(v, (size,) + tuple(v.shape))
                  for v, d in zip(at0[:n], dims[:n]))
    captured, cap_axes = at0[n:], [None if d is None else 0 for d in dims[n:]]

    def batched(ir, positions):
        """(the IR's function vmapped over carry and its captured values, those values)"""
        fn = vmap(lambda *xs: tuple(eval_ir(ir, ir.consts, xs)),
                  in_axes=(0,) * n + tuple(cap_axes[k] for k in positions))
        return fn, [captured[k] for k in positions]
    body, body_in = batched(loop.body_ir, loop.body_captured)
    if loop.count is not None:
        out = _staged_while(None, lambda c: body(*c, *body_in), carry, count=loop.count)
        return tuple(out), [0] * n
    cond, cond_in = batched(loop.cond_ir, loop.cond_captured)

    def step(c):
        holds = cond(*c, *cond_in)[0]
        new = body(*c, *body_in)
        return tuple(jnp.where(jnp.reshape(holds, (size,) + (1,) * (x.ndim - 1)), y, x)
                     for x, y in zip(c, new))
    from .control_flow import while_loop
    out = while_loop(lambda c: jnp.any(cond(*c, *cond_in)[0]), step, carry)
    return tuple(out), [0] * n


while_p.batch = _while_batch


def _while_jvp(primals, tangents, *, loop, avals):
    """Forward mode through a staged loop: the loop over (carry, tangent) pairs, the body
    differentiated by jvp (of its staged IR), the condition read from the carry alone."""
    from ..core.ad_util import instantiate
    from ..core.ir import eval_ir
    from .ad import jvp
    n = loop.n_carry
    tangents = [instantiate(t) for t in tangents]
    captured, d_captured = primals[n:], tangents[n:]
    body_in = [captured[k] for k in loop.body_captured]
    d_body_in = [d_captured[k] for k in loop.body_captured]

    def body(*xs):
        return tuple(eval_ir(loop.body_ir, loop.body_ir.consts, xs))

    def step(state):
        c, dc = state
        out, d_out = jvp(body, (*c, *body_in), (*dc, *d_body_in))
        return tuple(out), tuple(d_out)
    state = (tuple(primals[:n]), tuple(tangents[:n]))
    if loop.count is not None:
        out, d_out = _staged_while(None, step, state, count=loop.count)
    else:
        from .control_flow import while_loop
        cond_in = [captured[k] for k in loop.cond_captured]
        out, d_out = while_loop(
            lambda s: eval_ir(loop.cond_ir, loop.cond_ir.consts, (*s[0], *cond_in))[0],
            step, state)
    return tuple(out), tuple(d_out)


while_p.jvp = _while_jvp


def _wrap_np(x):
    from ..core.devices import default_device
    from ..core.eval import to_array
    return to_array(x, "while", default_device())


def _staged_while(cond_fun, body_fun, init_val, count=None, what="while_loop"):
    """The loop as one `while` equation (a compiled body; `count`: a trip count known
    now, instead of `cond_fun`; `what`: the caller's name, for errors)."""
    from ..core.eval import to_array
    from .executable import Executable
    from .passes import optimize
    flat, tree = tree_flatten(init_val)
    flat = [x if isinstance(x, (Array, Tracer)) else to_array(x, "while_loop") for x in flat]
    avals = tuple(ShapedArray(x.shape, x.dtype, x.weak_type) for x in flat)

    def cond_flat(*xs):
        return cond_fun(tree_unflatten(tree, list(xs)))

    def body_flat(*xs):
        out = body_fun(tree_unflatten(tree, list(xs)))
        out_flat, out_tree = tree_flatten(out)
        promoted = check_carry(what, avals, tree, out_flat, out_tree)
        if any(d is not None for d in promoted):
            raise PromoteCarry(promoted)
        return tuple(out_flat)
    captured = []           # traced values of the enclosing function the loop closed over
    cond_exe, cond_at = None, ()
    if count is None:
        cond_ir, cond_tree = stage(cond_flat, avals)
        cond_ir, cond_at = _lift_captured(cond_ir, captured)
        cond_exe = Executable(optimize(cond_ir), cond_tree)
    try:
        body_ir, body_tree = stage(body_flat, avals)
    except PromoteCarry as p:    # a Python scalar init: the loop carries its promotion
        return _staged_while(cond_fun, body_fun,
                             tree_unflatten(tree, _promoted_leaves(flat, p.dtypes)), count, what)
    body_ir, body_at = _lift_captured(body_ir, captured)
    staged = (cond_ir if count is None else None, body_ir)
    split = _split_counter(body_ir, len(flat), flat[0]) if count is not None else None
    counter = None
    if split is not None:       # the index on the host (see _Loop)
        counter, body_ir = split
        body_tree = None
    body_exe = Executable(optimize(body_ir, donated=range(len(flat) - (split is not None))),
                          body_tree)
    loop = _Loop(cond_exe, body_exe, len(flat), cond_at, body_at, count, counter, staged)
    outs = while_p.bind(*flat, *captured, loop=loop, avals=avals)
    return tree_unflatten(tree, list(outs))


def _lift_captured(ir, captured):
    """The IR with the traced values it closed over (constants that are tracers of the
    enclosing trace: a loop body using the jitted function's arguments) made trailing
    inputs; and their positions in `captured`, to which new ones are added."""
    ir, tracers = lift_traced_consts(ir)
    at = []
    for c in tracers:
        k = next((k for k, t in enumerate(captured) if t is c), None)
        if k is None:
            k = len(captured)
            captured.append(c)
        at.append(k)
    return ir, tuple(at)
