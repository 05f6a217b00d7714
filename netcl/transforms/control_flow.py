"""Control flow with jax.lax's names: cond, switch, while_loop, fori_loop, scan (the staged
loop itself, its primitive and rules: staged_loop.py; the carry's dtype rule: loop_carry.py).

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
from ..core.tracing import Tracer, current_interpreter
from ..tree_util import tree_flatten, tree_unflatten
from .loop_carry import _checked_step
from .staged_loop import _staged_while
from .staging import StagingInterpreter


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


def while_loop(cond_fun, body_fun, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; a real loop under jit."""
    if isinstance(current_interpreter(), StagingInterpreter):
        return _staged_while(cond_fun, body_fun, init_val)
    val, step = init_val, _first_checked("while_loop", body_fun)
    while True:
        pred = cond_fun(val)
        c = _concrete_pred(pred)
        if c is None:       # under vmap, one predicate per example: run while any holds,
            c = _any_of_batch(pred)     # and keep the carry of those whose does not
            if c is None:   # (vmap inside jit or jit inside vmap: the loop is staged and
                return _staged_while(cond_fun, body_fun, val)   # _while_batch batches it)
            if not c:
                return _as_arrays(val)
            from .. import numpy as jnp
            from ..tree_util import tree_map
            val, new = step(val)
            val = tree_map(lambda new, old: jnp.where(pred, new, old), new, val)
            continue
        if not c:
            return _as_arrays(val)
        val = step(val)[1]


def _first_checked(what, body, carry_of=lambda out: out):
    """step(carry, *more) -> (carry, body(carry, *more)) for a loop run in Python, the first
    call's carry checked by loop_carry._checked_step (promoted where JAX promotes). Later
    steps take a carry of the checked types, whose results have the same types, so they run
    unchecked: the check is off the loop's hot path."""
    checked = []

    def step(carry, *more):
        if checked:
            return carry, body(carry, *more)
        checked.append(True)
        return _checked_step(what, lambda c: body(c, *more), carry, carry_of)
    return step


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


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """val = body_fun(i, val) for i in [lower, upper); a staged loop under jit when long.
    `unroll` as JAX's (static bounds only): True writes the loop out step by step; an int
    or False leaves the choice to netcl (the result is the same).

    >>> netcl.lax.fori_loop(0, 4, lambda i, v: v + i, 0.0, unroll=True)     # 6.0
    """
    _check_scalar(lower, "fori_loop", "lower", "iu")
    _check_scalar(upper, "fori_loop", "upper", "iu")
    _check_callable(body_fun, "fori_loop", "body_fun")
    if unroll is not None and not isinstance(unroll, bool) and (
            not isinstance(unroll, int) or unroll < 1):
        raise TypeError(f"fori_loop: unroll must be a positive int or a bool, got {unroll!r}")
    try:
        lo, hi = int(lower), int(upper)
    except TypeError:
        lo = hi = None
    if lo is None and unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("fori_loop: unroll can only be used when the loop bounds are "
                         "statically known (as in JAX)")
    if lo is not None and (hi - lo <= 16 or unroll is True or
                           not isinstance(current_interpreter(), StagingInterpreter)):
        val, step = init_val, _first_checked("fori_loop", lambda v, i: body_fun(i, v))
        for i in range(lo, hi):
            val = step(val, i)[1]
        return _as_arrays(val)
    from .. import numpy as jnp
    # the counter's dtype is the bounds' (Python ints: the default int), as JAX's
    i_dtype = jnp.result_type(lower, upper)
    i0 = jnp.asarray(lower, dtype=i_dtype)
    step = (lambda c: (c[0] + 1, body_fun(c[0], c[1])))
    if lo is not None:      # static bounds: a counted loop (no predicate read each step)
        return _staged_while(None, step, (i0, init_val), count=max(hi - lo, 0),
                             what="fori_loop")[1]
    hi_arr = jnp.asarray(upper, dtype=i_dtype)
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
    step = _first_checked("scan", lambda c, x: _pair(f(c, x)), lambda out: out[0])
    for i in order:
        x = tree_unflatten(xs_tree, [v[i] for v in xs_flat]) if xs_flat else None
        carry, (carry, y) = step(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()
    if not ys:
        return carry, None
    y_leaves = [tree_flatten(y)[0] for y in ys]
    y_tree = tree_flatten(ys[0])[1]
    stacked = [jnp.stack([yl[k] for yl in y_leaves]) for k in range(len(y_leaves[0]))]
    return carry, tree_unflatten(y_tree, stacked)


def _pair(out):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("scan: f must return a pair (carry, y)")
    return out


def map(f, xs, *, batch_size=None):  # noqa: A001 (jax.lax.map)
    """Apply f over the leading axis of xs (sequentially) and stack the results. With
    `batch_size`, as JAX: f is vmapped over batches of that many entries, the batches run
    in sequence, and the remainder (n % batch_size entries) is one more vmapped call.

    >>> netcl.lax.map(jnp.sin, jnp.arange(10.0), batch_size=4)
    """
    if batch_size is None:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    from .batching import vmap
    from ..tree_util import tree_map
    from .. import numpy as jnp
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 0:
        raise TypeError(f"map: batch_size must be a non-negative int, got {batch_size!r}")
    _check_callable(f, "map", "f")
    leaves, tree = tree_flatten(xs)
    if not leaves:
        return scan(lambda c, x: (c, f(x)), None, xs)[1]
    n = leaves[0].shape[0] if getattr(leaves[0], "ndim", 0) else 0
    nb, rem = divmod(n, batch_size) if batch_size else (0, n)
    head = nb * batch_size
    fv = vmap(f)
    ys = None
    if nb:
        batched = tree_unflatten(tree, [jnp.reshape(v[:head], (nb, batch_size) +
                                                    tuple(v.shape[1:])) for v in leaves])
        ys = scan(lambda c, x: (c, fv(x)), None, batched)[1]
        ys = tree_map(lambda y: jnp.reshape(y, (head,) + tuple(y.shape[2:])), ys)
    if rem or not nb:
        tail = fv(tree_unflatten(tree, [v[head:] for v in leaves]))
        ys = tail if ys is None else tree_map(lambda a, b: jnp.concatenate([a, b]), ys, tail)
    return ys

