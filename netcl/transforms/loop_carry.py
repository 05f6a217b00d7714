"""JAX's rule for a loop's carry, shared by scan, fori_loop and while_loop, eager and
staged: the body returns the init's structure, shapes and dtypes, except that a weakly typed
leaf (a Python scalar init) may come back in the dtype it promotes to; then the init is
converted and the body runs (or is traced) again, as JAX does.

>>> check_carry("scan", [0.0], tree, [jnp.float32(1)], tree)     # [dtype('float32')]
"""
import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracing import ShapedArray, Tracer
from ..tree_util import tree_flatten, tree_unflatten


def _carry_aval(x):
    """The abstract value of a loop carry's leaf: an array, a tracer, a NumPy value or a
    Python scalar (weakly typed, as JAX's)."""
    if isinstance(x, (Array, Tracer, ShapedArray)):
        return ShapedArray(tuple(x.shape), x.dtype, x.weak_type)
    if isinstance(x, (bool, int, float)):
        return ShapedArray((), dtypes.scalar_dtype(x), not isinstance(x, bool))
    x = np.asarray(x)       # (NumPy data: stored as netcl stores it, float32 without x64)
    return ShapedArray(x.shape, dtypes.canonicalize_data(x.dtype, where="loop"), False)


class PromoteCarry(Exception):
    """Raised while staging a loop body that returned a weakly typed carry leaf in the dtype
    it promotes to: the caller converts the init to `dtypes` (None: unchanged) and stages
    again, as JAX does."""

    def __init__(self, dtypes):
        super().__init__(dtypes)
        self.dtypes = dtypes


def check_carry(what, ins, in_tree, outs, out_tree):
    """JAX's rule for a loop's carry: the body returns the structure, shapes and dtypes it
    was given, except that a weakly typed leaf (a Python scalar init: `0` as a counter,
    `0.0` as a sum) may come back in the dtype it promotes to with the returned one
    (`fori_loop(0, n, lambda i, c: c + x32, 0.0)` carries float32). Anything else is a
    TypeError (a carry that changed dtype would otherwise run on silently, unlike JAX).
    Returns the promoted dtypes per leaf (None where unchanged)."""
    a_in, a_out = [_carry_aval(x) for x in ins], [_carry_aval(x) for x in outs]
    promoted, bad = [], in_tree != out_tree
    for a, b in zip(a_in, a_out):
        p = None
        if a.dtype != b.dtype and a.weak_type and \
                dtypes.result_type(a, b)[0] == b.dtype:
            p = b.dtype
        promoted.append(p)
        bad = bad or a.shape != b.shape or (a.dtype != b.dtype and p is None)
    if bad:
        raise TypeError(f"{what}: the body must return a carry of the init's structure, "
                        f"shapes and dtypes: init {[a.str_short() for a in a_in]} ({in_tree}), "
                        f"carry {[b.str_short() for b in a_out]} ({out_tree})")
    return promoted


def _promoted_leaves(flat, promoted):
    """The init's leaves converted to the dtypes a PromoteCarry named."""
    from ..core.eval import to_array
    from .. import numpy as jnp
    return [x if d is None else jnp.asarray(x if isinstance(x, (Array, Tracer))
                                             else to_array(x, "loop"), dtype=d)
            for x, d in zip(flat, promoted)]


def _checked_step(what, step, carry, carry_of=lambda out: out):
    """(carry, out = step(carry)) for one step of a loop run in Python, the returned carry
    (`carry_of(out)`) checked by check_carry. Where a weakly typed leaf came back promoted,
    the step runs again from the carry converted: JAX converts the init and traces again,
    so that the loop carries a strongly typed value from then on."""
    out = step(carry)
    c_flat, c_tree = tree_flatten(carry)
    o_flat, o_tree = tree_flatten(carry_of(out))
    promoted = check_carry(what, c_flat, c_tree, o_flat, o_tree)
    if any(d is not None for d in promoted):
        carry = tree_unflatten(c_tree, _promoted_leaves(c_flat, promoted))
        out = step(carry)
        o_flat, o_tree = tree_flatten(carry_of(out))
        check_carry(what, tree_flatten(carry)[0], c_tree, o_flat, o_tree)
    return carry, out
