"""Checkpoint policies: which values `netcl.checkpoint(fun, policy=...)` keeps from the forward
pass instead of recomputing them (jax.checkpoint_policies, jax.ad_checkpoint.checkpoint_name).

A policy is a function `policy(prim, *avals, **params) -> bool` asked of every primitive that
`fun` applies: True saves that application's outputs. Without a policy checkpoint saves
only `fun`'s inputs and recomputes everything in the backward pass; with one,

- the forward pass runs `fun` under `_Saving`, which binds each primitive where it would
  have run and keeps, in order, the outputs of those the policy saves;
- the backward pass differentiates `fun` again, under `_Replaying`, which puts the saved
  outputs on the differentiation's tape, in the same order, instead of computing them
  again (the primitive's VJP rule then runs at its recomputed inputs: a matrix product's
  needs its operands, not its result, so a saved product is never multiplied again).

The function runs again in Python, in order, so the operations that produce a saved value
run again unless the policy saves them too (JAX's partial evaluation prunes them; netcl does
not): dots_saveable skips the products and recomputes the elementwise work between them,
everything_saveable recomputes nothing, and a name policy saves the tagged value itself.
Values are those of plain differentiation whatever the policy; only what is recomputed
changes. `checkpoint_name(x, name)` tags a value for the name policies.

>>> f = netcl.checkpoint(layer, policy=netcl.checkpoint_policies.dots_saveable)
"""
from ..core.tracing import Interpreter, Primitive, get_aval, set_interpreter
from .custom import _CallRules


class _NameRules(_CallRules):
    """checkpoint_name is the identity everywhere; the name is for the policies."""


name_p = Primitive("name", multiple_results=True)
name_p.call = _NameRules()


def checkpoint_name(x, name):
    """`x`, tagged `name` for checkpoint policies (save_only_these_names, ...), as
    jax.ad_checkpoint.checkpoint_name.

    >>> h = checkpoint_name(jnp.tanh(x @ w), "hidden")
    """
    from ..tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(x)
    outs = name_p.bind(*leaves, fun=lambda *xs: tuple(xs), name=str(name))
    return tree_unflatten(tree, list(outs))


# ---- the policies (jax.checkpoint_policies) ---------------------------------------------------

def everything_saveable(prim, *avals, **params):
    """Save every value (no recomputation)."""
    return True


def nothing_saveable(prim, *avals, **params):
    """Save nothing but the inputs (recompute everything: checkpoint's default)."""
    return False


def dots_saveable(prim, *avals, **params):
    """Save the results of matrix products and convolutions."""
    from ..primitives.conv.convolution import conv_general_dilated_p
    from ..primitives.linalg import dot_general_p
    return prim is dot_general_p or prim is conv_general_dilated_p


def dots_with_no_batch_dims_saveable(prim, *avals, **params):
    """Save the results of matrix products without batch dimensions."""
    from ..primitives.linalg import dot_general_p
    if prim is not dot_general_p:
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


checkpoint_dots = dots_saveable
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names):
    """Save only the values tagged (checkpoint_name) with one of `names`."""
    names = frozenset(names)
    return lambda prim, *avals, **params: prim is name_p and params["name"] in names


def save_any_names_but_these(*names):
    """Save the values tagged with any name but `names`."""
    names = frozenset(names)
    return lambda prim, *avals, **params: prim is name_p and params["name"] not in names


def save_anything_except_these_names(*names):
    """Save every value except those tagged with one of `names`."""
    names = frozenset(names)
    return lambda prim, *avals, **params: not (prim is name_p and params["name"] in names)


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""
    return lambda prim, *avals, **params: (policy_1(prim, *avals, **params) or
                                           policy_2(prim, *avals, **params))


# ---- the forward and backward passes under a policy --------------------------------------------

def _saves(policy, prim, args, params):
    visible = {k: v for k, v in params.items() if k != "fun"}
    return bool(policy(prim, *[get_aval(a) for a in args], **visible))


class _Saving(Interpreter):
    """Binds every primitive at its parent and keeps the outputs the policy saves."""
    transform_name = "checkpoint"

    def __init__(self, parent, policy):
        self.parent, self.policy, self.saved = parent, policy, []

    def process(self, prim, args, params):
        with set_interpreter(self.parent):
            out = prim.bind(*args, **params)
        if _saves(self.policy, prim, args, params):
            self.saved.append(out)
        return out

    def concrete(self, tracer, what):
        return self.parent.concrete(tracer, what)


class _Replaying(Interpreter):
    """Binds every primitive at its parent (the backward pass's differentiation), except
    those the policy saved: their saved outputs go on its tape instead of a new
    computation (VJPInterpreter.known). A saved checkpoint_name is the identity anyway."""
    transform_name = "checkpoint"

    def __init__(self, parent, policy, saved):
        self.parent, self.policy, self.saved = parent, policy, iter(saved)

    def process(self, prim, args, params):
        from .ad import VJPInterpreter
        with set_interpreter(self.parent):
            if _saves(self.policy, prim, args, params):
                out = next(self.saved)
                if prim.call is None and isinstance(self.parent, VJPInterpreter):
                    return self.parent.known(prim, args, params, out)
            return prim.bind(*args, **params)

    def concrete(self, tracer, what):
        return self.parent.concrete(tracer, what)


def forward(fun, policy, primals):
    """fun(*primals) and the values `policy` saves from it."""
    from ..core.tracing import current_interpreter
    saving = _Saving(current_interpreter(), policy)
    with set_interpreter(saving):
        outs = fun(*primals)
    return outs, saving.saved


def replaying(fun, policy, saved):
    """`fun`, with the primitives `policy` saved giving back `saved` (in order)."""
    from ..core.tracing import current_interpreter

    def run(*xs):
        with set_interpreter(_Replaying(current_interpreter(), policy, saved)):
            return fun(*xs)
    return run
