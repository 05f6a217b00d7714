"""Control flow with jax.lax's names: cond, switch, while_loop, fori_loop, scan.

With concrete values (eager mode, and eager grad/jvp, which carry values) these are plain
Python control flow, so they differentiate like any other code. Under staging (jit,
make_ir), `while_loop` (and long `fori_loop`s) become a real loop primitive whose condition
and body are compiled (fused) sub-programs; the loop runs on the host, reading the predicate
each iteration. `cond` with a traced predicate computes both branches and selects (so it
also works under vmap and differentiation); mind that a NaN in the unselected branch's
gradient can then leak, as with `jnp.where`.
"""
from ..core import dtypes
from ..core.array import Array
from ..core.tracing import Primitive, ShapedArray, Tracer, current_interpreter
from ..primitives.elementwise import copy_p
from ..tree_util import tree_flatten, tree_unflatten
from .staging import StagingInterpreter, stage


def _check_callable(f, where, arg):
    if not callable(f):
        raise TypeError(f"{where}: {arg} must be a function, got {type(f).__name__} {f!r}")


def _check_scalar(v, where, arg, kinds="biuf"):
    """v is a Python/NumPy number or a 0-d array of one of `kinds`, else a TypeError."""
    import numpy as np
    if isinstance(v, (Array, Tracer)):
        if v.ndim or dtypes.kind(v.dtype) not in kinds:
            raise TypeError(f"{where}: {arg} must be a scalar, got an array of shape "
                            f"{tuple(v.shape)} and dtype {v.dtype}")
    elif not isinstance(v, (bool, int, float, np.number, np.bool_)) or \
            dtypes.kind(np.asarray(v).dtype) not in kinds:
        raise TypeError(f"{where}: {arg} must be a scalar, got {type(v).__name__} {v!r}")


def _concrete_pred(pred):
    """bool(pred) when it has a value, else None."""
    if isinstance(pred, (bool, int)):
        return bool(pred)
    if isinstance(pred, Array):
        return bool(pred)
    if isinstance(pred, Tracer):
        try:
            return bool(pred)
        except TypeError:  # staging (no values) or vmap (a batch of values)
            return None
    return bool(pred)


def cond(pred, true_fun, false_fun, *operands):
    """true_fun(*operands) if pred else false_fun(*operands).

    >>> netcl.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)
    """
    if len(operands) == 0:
        raise TypeError("cond: give the branch operands after the two functions")
    _check_scalar(pred, "cond", "pred")
    _check_callable(true_fun, "cond", "true_fun")
    _check_callable(false_fun, "cond", "false_fun")
    c = _concrete_pred(pred)
    if c is not None:
        return true_fun(*operands) if c else false_fun(*operands)
    from .. import numpy as jnp
    t, f = true_fun(*operands), false_fun(*operands)
    t_leaves, t_tree = tree_flatten(t)
    f_leaves, f_tree = tree_flatten(f)
    if t_tree != f_tree:
        raise TypeError(f"cond: branches return different structures: {t_tree} and {f_tree}")
    for a, b in zip(t_leaves, f_leaves):
        if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
            raise TypeError(f"cond: branches return different types: "
                            f"{a.dtype}{list(a.shape)} and {b.dtype}{list(b.shape)}")
    return tree_unflatten(t_tree, [jnp.where(pred, a, b) for a, b in zip(t_leaves, f_leaves)])


def switch(index, branches, *operands):
    """branches[clamp(index)](*operands)."""
    c = None
    try:
        c = int(index)
    except TypeError:
        pass
    if c is not None:
        return branches[min(max(c, 0), len(branches) - 1)](*operands)
    from .. import numpy as jnp
    out = branches[-1](*operands)
    for k in range(len(branches) - 2, -1, -1):
        out = cond(jnp.less_equal(index, k), branches[k], lambda *o, out=out: out, *operands)
    return out


# ---- a staged loop -------------------------------------------------------------------------

class _Loop:
    """A compiled condition and body over a flat carry (used by the `while` primitive).
    The primitive's operands are the carry, then the values the condition and the body
    closed over (`cond_captured`, `body_captured`: their positions among those). With a
    `count` (a trip count known when tracing: scan, fori_loop) there is no condition, and
    the host never waits for the device to read one."""

    def __init__(self, cond_exe, body_exe, n_carry, cond_captured=(), body_captured=(),
                 count=None):
        self.cond_exe, self.body_exe = cond_exe, body_exe
        self.n_carry = n_carry
        self.cond_captured, self.body_captured = cond_captured, body_captured
        self.count = count
        # carries the compiled body writes over (its carry inputs are donated: a scan's
        # stacked outputs take one slice per step in place, not a copy of the whole stack)
        carry_at = {v.id: i for i, v in enumerate(body_exe.ir.invars[:n_carry])}
        self.written = sorted({carry_at[e.inputs[j].id] for e in body_exe.ir.eqns
                               for j in e.overwrites if e.inputs[j].id in carry_at})

    def __repr__(self):
        cond = (f"{self.count} times" if self.count is not None else
                f"cond: {len(self.cond_exe.steps)} steps")
        return f"loop({cond}, body: {len(self.body_exe.steps)} steps)"

    def run(self, operands):
        # dense operands: the compiled body records its launchers for dense layouts only
        # (a broadcast zero carry would send every step through the launcher lookup)
        operands = [x._dense() if isinstance(x, Array) and not x._contig else x
                    for x in operands]
        carry, captured = list(operands[:self.n_carry]), operands[self.n_carry:]
        body_in = [captured[k] for k in self.body_captured]
        self._own(carry, body_in, first=True)
        if self.count is not None:
            for _ in range(self.count):
                carry = list(self.body_exe(carry + body_in))
                self._own(carry, body_in)
            return tuple(carry)
        cond_in = [captured[k] for k in self.cond_captured]
        while bool(self.cond_exe(carry + cond_in)[0]):
            carry = list(self.body_exe(carry + body_in))
            self._own(carry, body_in)
        return tuple(carry)

    def _own(self, carry, others, first=False):
        """Make the carries the body writes over arrays of the loop's own: copies of the
        caller's on entry, and later of any that is also another carry or a captured value
        (a body may return one array twice, or a captured weight as a carry)."""
        for i in self.written:
            x = carry[i]
            if first or any(y is x for j, y in enumerate(carry) if j != i) or \
                    any(y is x for y in others):
                carry[i] = copy_p.bind(x)


while_p = Primitive("while", multiple_results=True)
while_p.abstract_eval = lambda *args, loop, avals: tuple(avals)
while_p.make_launcher = lambda device, args, params, out: (
    lambda *xs: params["loop"].run(xs))
while_p.reference = lambda *xs, loop, avals: tuple(
    x._buf if isinstance(x, Array) else x for x in loop.run(
        tuple(_wrap_np(x) for x in xs)))


def _wrap_np(x):
    from ..core.devices import default_device
    from ..core.eval import to_array
    return to_array(x, "while", default_device())


def _staged_while(cond_fun, body_fun, init_val, count=None):
    """The loop as one `while` equation (a compiled body; `count`: a trip count known
    now, instead of `cond_fun`)."""
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
        if out_tree != tree or any(tuple(o.shape) != a.shape or o.dtype != a.dtype
                                   for o, a in zip(out_flat, avals)):
            raise TypeError(f"while_loop: body_fun must return the carry's structure and "
                            f"types {[a.str_short() for a in avals]}, got {out_tree} with "
                            f"{[(o.dtype.name, tuple(o.shape)) for o in out_flat]}")
        return tuple(out_flat)
    captured = []           # traced values of the enclosing function the loop closed over
    cond_exe, cond_at = None, ()
    if count is None:
        cond_ir, cond_tree = stage(cond_flat, avals)
        cond_ir, cond_at = _lift_captured(cond_ir, captured)
        cond_exe = Executable(optimize(cond_ir), cond_tree)
    body_ir, body_tree = stage(body_flat, avals)
    body_ir, body_at = _lift_captured(body_ir, captured)
    body_exe = Executable(optimize(body_ir, donated=range(len(flat))), body_tree)
    loop = _Loop(cond_exe, body_exe, len(flat), cond_at, body_at, count)
    outs = while_p.bind(*flat, *captured, loop=loop, avals=avals)
    return tree_unflatten(tree, list(outs))


def _lift_captured(ir, captured):
    """The IR with the traced values it closed over (constants that are tracers of the
    enclosing trace: a loop body using the jitted function's arguments) made trailing
    inputs; and their positions in `captured`, to which new ones are added."""
    from ..core.ir import IR
    consts, constvars, lifted, at = [], [], [], []
    for v, c in zip(ir.constvars, ir.consts):
        if isinstance(c, Tracer):
            k = next((k for k, t in enumerate(captured) if t is c), None)
            if k is None:
                k = len(captured)
                captured.append(c)
            lifted.append(v)
            at.append(k)
        else:
            constvars.append(v)
            consts.append(c)
    if not lifted:
        return ir, ()
    return IR(list(ir.invars) + lifted, constvars, consts, ir.eqns, ir.outvars), tuple(at)


def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; a real loop under jit."""
    if isinstance(current_interpreter(), StagingInterpreter):
        return _staged_while(cond_fun, body_fun, init_val)
    val = init_val
    while True:
        pred = cond_fun(val)
        c = _concrete_pred(pred)
        if c is None:       # under vmap, one predicate per example: run while any holds,
            c = _any_of_batch(pred)     # and keep the carry of those whose does not
            if c is None:
                raise TypeError("while_loop: the predicate has no concrete value here (a "
                                "transform nested inside jit); use fori_loop with static "
                                "bounds or lax.scan")
            if not c:
                return _as_arrays(val)
            from .. import numpy as jnp
            from ..tree_util import tree_map
            val = tree_map(lambda new, old: jnp.where(pred, new, old), body_fun(val), val)
            continue
        if not c:
            return _as_arrays(val)
        val = body_fun(val)


def _any_of_batch(pred):
    """Whether any example's predicate holds, for a predicate batched by vmap (over every
    level of vmap there is); None where it has no value (staging)."""
    from .batching import BatchTracer
    if not isinstance(pred, BatchTracer):
        return None
    from ..core.tracing import set_interpreter
    with set_interpreter(pred._interp.parent):
        from .. import numpy as jnp
        whole = jnp.any(pred.val)
        c = _concrete_pred(whole)
        return _any_of_batch(whole) if c is None else c


def _as_arrays(tree):
    """Python scalars among the leaves as arrays (JAX's loops return arrays)."""
    from ..core.eval import to_array
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [x if isinstance(x, (Array, Tracer)) else
                                    to_array(x, "loop") for x in leaves])


def fori_loop(lower, upper, body_fun, init_val):
    """val = body_fun(i, val) for i in [lower, upper); a staged loop under jit when long."""
    _check_scalar(lower, "fori_loop", "lower", "iu")
    _check_scalar(upper, "fori_loop", "upper", "iu")
    _check_callable(body_fun, "fori_loop", "body_fun")
    try:
        lo, hi = int(lower), int(upper)
    except TypeError:
        lo = hi = None
    if lo is not None and (hi - lo <= 16 or
                           not isinstance(current_interpreter(), StagingInterpreter)):
        val = init_val
        for i in range(lo, hi):
            val = body_fun(i, val)
        return _as_arrays(val)
    from .. import numpy as jnp
    i0 = jnp.asarray(lower, dtype=jnp.int32)
    step = (lambda c: (c[0] + 1, body_fun(c[0], c[1])))
    if lo is not None:      # static bounds: a counted loop (no predicate read each step)
        return _staged_while(None, step, (i0, init_val), count=max(hi - lo, 0))[1]
    hi_arr = jnp.asarray(upper, dtype=jnp.int32)
    _, out = while_loop(lambda c: c[0] < hi_arr, step, (i0, init_val))
    return out


def scan(f, init, xs=None, length=None, reverse=False, unroll=None):
    """carry, y = f(carry, x) over the leading axis of xs; returns (carry, stacked ys).
    Under a transform, a scan longer than scan.UNROLL_UP_TO steps (or with an int `unroll`:
    steps per iteration) is one compiled loop, and grad, jvp and vmap of it are scans too
    (scan.py); a shorter one (or unroll=True) is written out step by step.

    >>> carry, ys = netcl.lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(5.0))
    """
    from .. import numpy as jnp
    _check_callable(f, "scan", "f")
    xs_flat, xs_tree = tree_flatten(xs)
    for x in xs_flat:
        if not getattr(x, "ndim", 0):  # arrays (NumPy's too) with a leading axis
            raise TypeError(f"scan: xs leaves must be arrays with a leading axis, got "
                            f"{getattr(x, 'shape', type(x).__name__)}")
    if xs_flat:
        n = xs_flat[0].shape[0]
        if any(x.shape[0] != n for x in xs_flat):
            raise ValueError(f"scan: xs leaves have different leading sizes "
                             f"{[x.shape[0] for x in xs_flat]}")
        if length is not None and length != n:
            raise ValueError(f"scan: length={length} but xs have leading size {n}")
    elif length is None:
        raise ValueError("scan: give xs or length")
    else:
        n = length
    from .scan import scan_flat, under_transform
    if unroll is not None and not isinstance(unroll, bool) and (
            not isinstance(unroll, int) or unroll < 1):
        raise TypeError(f"scan: unroll must be a positive int or a bool, got {unroll!r}")
    from .scan import UNROLL_UP_TO
    written_out = unroll is True or (unroll is None and n <= UNROLL_UP_TO)
    if under_transform() and not written_out:   # one traced body, a loop (see scan.py)
        return scan_flat(f, init, xs if xs_flat else None, n, reverse, unroll or 1)
    carry, ys = init, []
    order = range(n - 1, -1, -1) if reverse else range(n)
    for i in order:
        x = tree_unflatten(xs_tree, [v[i] for v in xs_flat]) if xs_flat else None
        carry, y = f(carry, x)
        _check_carry(init, carry)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    y_leaves = [tree_flatten(y)[0] for y in ys]
    y_tree = tree_flatten(ys[0])[1]
    stacked = [jnp.stack([yl[k] for yl in y_leaves]) for k in range(len(y_leaves[0]))]
    return carry, tree_unflatten(y_tree, stacked)


def _check_carry(init, carry):
    """f's carry keeps init's structure and shapes (as JAX requires: else the stacked ys
    would fail later with a less clear error)."""
    import numpy as np
    i_leaves, i_tree = tree_flatten(init)
    c_leaves, c_tree = tree_flatten(carry)
    if i_tree != c_tree or any(np.shape(a) != np.shape(b) for a, b in zip(i_leaves, c_leaves)):
        raise TypeError(f"scan: f must return a carry of the init's structure and shapes: "
                        f"init {[np.shape(a) for a in i_leaves]} ({i_tree}), carry "
                        f"{[np.shape(b) for b in c_leaves]} ({c_tree})")


def map(f, xs):  # noqa: A001 (jax.lax.map)
    """Apply f over the leading axis of xs (sequentially) and stack the results."""
    return scan(lambda c, x: (c, f(x)), None, xs)[1]

