"""User-defined batching (jax.custom_batching): `custom_vmap` and `sequential_vmap`.

A `custom_vmap` function is a call primitive, as custom_jvp is (custom.py): eager
evaluation and staging (jit, make_ir) trace straight through the wrapped function; the
batching interpreter (vmap) runs the user's rule instead, at its parent interpreter, on the
arguments with their batch axes first. As in JAX:

- forward mode (jvp) differentiates the function, and under vmap the rule: the jvp of a
  custom_vmap function is a custom_vmap function whose rule is the jvp of the user's rule;
- reverse mode (grad, vjp) of the function itself raises ValueError (JAX's linearization
  fails the same way); `grad(vmap(f))` works, since vmap runs the rule first. To give it a
  reverse-mode derivative wrap it in `netcl.custom_vjp` (custom_vjp outermost).

Where JAX runs the jvp of the rule under an extra vmap for arguments whose primal is
batched but whose tangent is not (or the reverse), netcl broadcasts the unbatched one: the
rule then sees that argument as batched. Inside a loop body that is staged first and batched
afterwards (lax.scan under vmap), the function is traced through like any other code.
"""
import functools
import inspect

from ..core import dtypes
from ..core.ad_util import instantiate, is_zero
from ..core.tracing import Primitive, ShapedArray, set_interpreter
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from .custom import _CallRules, _zeros_for

__all__ = ["custom_vmap", "sequential_vmap"]


class _CustomVmapRules(_CallRules):
    """eval and stage: through `fun` (the defaults); batch: the rule; jvp: a custom_vmap
    of the jvp; vjp: an error where a differentiated value comes in."""

    def batch(self, interp, args, params):
        vals, dims = zip(*[interp.lift(a) for a in args])
        if all(d is None for d in dims):
            with set_interpreter(interp.parent):
                return custom_vmap_call_p.bind(*vals, **params)
        from ..primitives.views import move_batch_axis
        from .batching import BatchTracer
        size = interp.axis_size
        with set_interpreter(interp.parent):
            # the rule sees every batched argument with its batch axis first (as in JAX)
            moved = [v if d is None or d == 0 else move_batch_axis(v, d, 0)
                     for v, d in zip(vals, dims)]
            outs, out_batched = params["rule"](size, tuple(d is not None for d in dims),
                                               *moved)
        return tuple(BatchTracer(interp, o, 0 if b else None)
                     for o, b in zip(outs, out_batched))

    def jvp(self, interp, args, params):
        primals, tangents = zip(*[interp.lift(a) for a in args])
        if all(is_zero(t) for t in tangents):
            with set_interpreter(interp.parent):
                return custom_vmap_call_p.bind(*primals, **params)
        floats = tuple(i for i, p in enumerate(primals) if dtypes.is_inexact(p.dtype))
        jvp_fun, jvp_rule = _jvp_call(params, len(primals), floats)
        with set_interpreter(interp.parent):
            outs = custom_vmap_call_p.bind(
                *primals, *[instantiate(tangents[i]) for i in floats], fun=jvp_fun,
                rule=jvp_rule, name=f"jvp({params['name']})")
        n = len(outs) // 2
        return tuple(interp._wrap(o, t) for o, t in zip(outs[:n], outs[n:]))

    def vjp(self, interp, args, params):
        primals, parents = zip(*[interp.lift(a) for a in args])
        if any(p is not None for p in parents):
            raise ValueError(
                f"custom_vmap function {params['name']}: reverse-mode differentiation (grad, "
                "vjp, jacrev) is not supported, as in JAX: a custom_vmap function has forward "
                "mode (jvp) and vmap only. Wrap it in netcl.custom_vjp (custom_vjp outermost) "
                "to give it a reverse-mode derivative; grad(vmap(f)) works as it is.")
        with set_interpreter(interp.parent):
            return custom_vmap_call_p.bind(*primals, **params)


custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)
custom_vmap_call_p.call = _CustomVmapRules()


def _jvp_call(params, n, floats):
    """(fun, rule) of the custom_vmap call that computes the jvp of `params`' one: the
    arguments are the n primals, then the tangents of the float ones (at `floats`); the
    results are the primal outputs, then their tangents."""
    from .ad import jvp
    fun, rule = params["fun"], params["rule"]

    def full_tangents(ps, ts):
        it = iter(ts)
        return tuple(next(it) if i in floats else _zeros_for(p) for i, p in enumerate(ps))

    def jvp_fun(*xs):
        ps = xs[:n]
        out, t_out = jvp(lambda *a: fun(*a), ps, full_tangents(ps, xs[n:]))
        return tuple(out) + tuple(t_out)

    def jvp_rule(axis_size, in_batched, *xs):
        from ..primitives.views import bdim_at_front
        ps, ts = list(xs[:n]), list(xs[n:])
        batched = list(in_batched[:n])
        # a primal and its tangent batched alike: the unbatched one is broadcast
        for k, i in enumerate(floats):
            if batched[i] and not in_batched[n + k]:
                ts[k] = bdim_at_front(ts[k], None, axis_size)
            elif in_batched[n + k] and not batched[i]:
                ps[i] = bdim_at_front(ps[i], None, axis_size)
                batched[i] = True
        box = []

        def rule_primal(*a):
            outs, out_batched = rule(axis_size, tuple(batched), *a)
            box.append(out_batched)
            return outs
        out, t_out = jvp(rule_primal, tuple(ps), full_tangents(ps, ts))
        return tuple(out) + tuple(t_out), tuple(box[0]) * 2
    return jvp_fun, jvp_rule


def _resolve_kwargs(fun, args, kwargs, name):
    """`args` with `kwargs` placed by `fun`'s signature (custom_vmap's arguments are
    positional, as in JAX)."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise TypeError(f"custom_vmap {name}: the arguments could not be resolved to "
                        f"positional ones: {e}") from None
    if bound.kwargs:
        raise TypeError(f"custom_vmap {name}: keyword-only arguments "
                        f"{sorted(bound.kwargs)} are not supported; pass them by position")
    return bound.args


class custom_vmap:
    """A function with a user-defined batching rule (jax.custom_batching.custom_vmap).

    Outside vmap the function runs as it is (jit traces through it); under netcl.vmap the
    rule `rule(axis_size, in_batched, *args) -> (out, out_batched)` runs instead: `in_batched`
    is a list with one pytree of bools per argument, batched arguments have their batch axis
    first, and `out_batched` is a pytree of bools with `out`'s structure (an unbatched
    output is broadcast). Forward mode works; reverse mode raises ValueError as in JAX
    (combine with netcl.custom_vjp).

    >>> @netcl.custom_batching.custom_vmap
    ... def f(x, y):
    ...     return x + y
    >>> @f.def_vmap
    ... def f_rule(axis_size, in_batched, xs, ys):
    ...     return xs * ys, True
    >>> netcl.vmap(f)(jnp.arange(3.0), jnp.arange(1.0, 4.0))     # xs * ys: [0., 2., 6.]
    """

    def __init__(self, fun):
        if not callable(fun):
            raise TypeError(f"custom_vmap: fun must be callable, got {type(fun).__name__}")
        # (stored under names of its own: functools.update_wrapper, which jit and other
        # wrappers apply to this object, copies its __dict__ onto theirs, and a plain `fun`
        # there would replace the wrapper's own `fun` with the undecorated function)
        self._custom_vmap_fun = fun
        self._custom_vmap_out_trees = {}    # (input structure, avals) -> the output's
        self.vmap_rule = None
        functools.update_wrapper(self, fun)

    @property
    def fun(self):
        """The wrapped function (as JAX's custom_vmap.fun)."""
        return self._custom_vmap_fun

    def def_vmap(self, vmap_rule):
        """Set the batching rule (see the class); returns it unchanged, so it decorates.

        >>> @f.def_vmap
        ... def f_rule(axis_size, in_batched, xs, ys):
        ...     return xs * ys, in_batched[0] or in_batched[1]
        """
        if not callable(vmap_rule):
            raise TypeError(f"custom_vmap.def_vmap: vmap_rule must be callable, got "
                            f"{type(vmap_rule).__name__}")
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __get__(self, obj, objtype=None):
        """Defined in a class, it is a method: `self` is bound as its first argument."""
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "fun")
        if self.vmap_rule is None:
            # (JAX raises this at every call, batched or not)
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} "
                                 "using def_vmap.")
        from .ad import _as_array
        args = _resolve_kwargs(self.fun, args, kwargs, name)
        flat, in_tree = tree_flatten(tuple(args))
        flat = [_as_array(x, f"custom_vmap {name}") for x in flat]
        out_tree = []
        fun, user_rule = self.fun, self.vmap_rule

        def fun_flat(*xs):
            o, t = tree_flatten(fun(*tree_unflatten(in_tree, xs)))
            out_tree[:] = [t]
            return tuple(o)

        def rule_flat(axis_size, in_batched, *xs):
            batched = tree_unflatten(in_tree, list(in_batched))
            res = user_rule(axis_size, list(batched), *tree_unflatten(in_tree, xs))
            rname = getattr(user_rule, "__name__", "<unnamed rule>")
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"custom_vmap rule {rname} of {name} must return a pair "
                                f"(out, out_batched), got {type(res).__name__}")
            out, out_batched = res
            outs, t_out = tree_flatten(out)
            flags, t_flags = tree_flatten(out_batched)
            if t_out != t_flags:
                raise ValueError(
                    "structure of output value and output batching specification returned "
                    f"by custom vmap rule ({rname}) do not match.\nOutput values: {t_out}\n"
                    f"Batching spec: {t_flags}")
            original = self._out_tree(in_tree, xs, in_batched, fun_flat, out_tree)
            if t_out != original:
                raise ValueError(
                    f"structure of output returned by custom vmap rule ({rname}) does not "
                    f"match that of original custom-vmapped function.\nOriginal output: "
                    f"{original}\nRule output: {t_out}")
            outs = [_as_array(o, f"custom_vmap rule {rname}") for o in outs]
            for i, (o, b) in enumerate(zip(outs, flags)):
                if b and (o.ndim == 0 or o.shape[0] != axis_size):
                    raise ValueError(
                        f"custom_vmap rule {rname} of {name}: output {i} is marked batched "
                        f"but has shape {tuple(o.shape)}, not a leading axis of size "
                        f"{axis_size}")
            out_tree[:] = [t_out]
            return tuple(outs), tuple(bool(b) for b in flags)

        outs = custom_vmap_call_p.bind(*flat, fun=fun_flat, rule=rule_flat, name=name)
        return tree_unflatten(out_tree[0], list(outs))

    def _out_tree(self, in_tree, xs, in_batched, fun_flat, box):
        """The output structure of the function itself for these (batched) arguments: the
        rule's must equal it. Found by staging the function on the unbatched avals, once
        per input structure and avals."""
        avals = tuple(ShapedArray(x.shape[1:] if b else x.shape, x.dtype, x.weak_type)
                      for x, b in zip(xs, in_batched))
        key = (in_tree, avals)
        cache = self._custom_vmap_out_trees
        tree = cache.get(key)
        if tree is None:
            from .staging import stage
            stage(fun_flat, avals)      # (fun_flat records its output structure in box)
            tree = cache[key] = box[0]
        return tree


def sequential_vmap(f):
    """A custom_vmap function whose batching rule loops over the batch with lax.map: for a
    function that does not batch well (jax.custom_batching.sequential_vmap). Unbatched
    arguments are passed to every iteration as they are; every output is batched.

    >>> @netcl.custom_batching.sequential_vmap
    ... def f(x):
    ...     return x + 1
    >>> netcl.vmap(f)(jnp.arange(3.0))       # one iteration per element: [1., 2., 3.]
    """
    if not callable(f):
        raise TypeError(f"sequential_vmap: f must be callable, got {type(f).__name__}")
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        from .control_flow import map as lax_map
        args = list(args)
        # (lists, not tuples: a tuple in_batched entry would flatten as a node)
        mapped = tree_map(lambda b, x: x if b else None, in_batched, args)
        fixed = tree_map(lambda b, x: None if b else x, in_batched, args)

        def one(m):
            merged = tree_map(lambda b, x_m, x_f: x_m if b else x_f, in_batched, m, fixed,
                              is_leaf=lambda x: x is None)
            return f(*merged)
        out = lax_map(one, mapped)
        return out, tree_map(lambda _: True, out)
    return f
