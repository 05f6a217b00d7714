"""User-defined derivatives (`custom_jvp`, `custom_vjp`) and rematerialisation (`checkpoint`).

Each is a *call primitive*: binding it hands the wrapped Python function to the current
interpreter, which applies the user's rule (differentiation interpreters) or simply traces
through the function (eager, vmap, staging). Reverse mode on a `custom_jvp` function
transposes the user's (linear) tangent rule by differentiating it in reverse, so one rule
serves both modes, as in JAX.
"""
import functools

from ..core.ad_util import instantiate, is_zero
from ..core.tracing import Primitive, set_interpreter
from ..tree_util import tree_flatten, tree_unflatten


class _CallRules:
    """Defaults: trace straight through the wrapped function."""

    def eval(self, args, params):
        return params["fun"](*args)

    def _through(self, interp, args, params):
        return params["fun"](*args)

    jvp_through = batch = stage = _through

    def jvp(self, interp, args, params):
        return self.jvp_through(interp, args, params)

    def vjp(self, interp, args, params):
        return self._through(interp, args, params)


def _zeros_for(x):
    from ..primitives.views import full
    return full(x.shape, 0, x.dtype)


def _forward_attr(self, name):
    """Attributes a custom_jvp/custom_vjp object lacks come from the function it wraps (as
    in JAX): `custom_vjp(custom_vmap(f))` still has the custom_vmap's `def_vmap`."""
    if name.startswith("__") or name == "fun":
        raise AttributeError(name)
    return getattr(self.fun, name)


# ---- custom_jvp ----------------------------------------------------------------------------

class _CustomJVPRules(_CallRules):
    def jvp(self, interp, args, params):
        primals, tangents = zip(*[interp.lift(a) for a in args])
        if all(is_zero(t) for t in tangents):
            with set_interpreter(interp.parent):
                return custom_jvp_call_p.bind(*primals, **params)
        with set_interpreter(interp.parent):
            outs, t_outs = params["jvp"](primals, tuple(instantiate(t) for t in tangents))
        return tuple(interp._wrap(o, t) for o, t in zip(outs, t_outs))

    def vjp(self, interp, args, params):
        primals, parents = zip(*[interp.lift(a) for a in args])
        with set_interpreter(interp.parent):
            outs = custom_jvp_call_p.bind(*primals, **params)
        if all(p is None for p in parents):
            return outs
        jvp_rule = params["jvp"]

        def backward(cts):
            from .ad import vjp as _vjp
            # The tangent map t -> jvp_rule(primals, t)[1] is linear; its reverse-mode
            # derivative at any point is its transpose.
            zeros = [_zeros_for(p) for p in primals]
            _, f_vjp = _vjp(lambda *ts: tuple(jvp_rule(primals, ts)[1]), *zeros)
            cts = tuple(_zeros_for(o) if c is None else c for c, o in zip(cts, outs))
            return f_vjp(cts)
        return interp.record(backward, parents, outs, multiple_results=True)


custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.call = _CustomJVPRules()


class custom_jvp:
    """A function with a user-defined forward-mode derivative (also used by grad).

    >>> @netcl.custom_jvp
    ... def f(x): return jnp.log1p(jnp.exp(x))
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), t * netcl.nn.sigmoid(x)
    """

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)   # (first: fun's __dict__ must not win)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None

    __getattr__ = _forward_attr

    def defjvp(self, jvp):
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """One function per argument: jvps[i](t_i, primal_out, *primals) -> tangent part."""
        def jvp(primals, tangents):
            out = self.fun(*primals)
            acc = None
            for f, t in zip(jvps, tangents):
                if f is None:
                    continue
                part = f(t, out, *primals)
                acc = part if acc is None else acc + part
            return out, acc if acc is not None else _zeros_for(out)
        self.jvp = jvp

    def __call__(self, *args):
        if self.jvp is None:
            raise TypeError(f"custom_jvp {self.fun.__name__}: no rule defined; call .defjvp "
                            "first")
        nd = self.nondiff_argnums
        static = {i: args[i] for i in nd}
        dyn = [a for i, a in enumerate(args) if i not in nd]
        flat, tree = tree_flatten(tuple(dyn))
        out_tree = []

        def merge(dyn_args):
            it = iter(dyn_args)
            return [static[i] if i in static else next(it) for i in range(len(args))]

        def fun_flat(*xs):
            out = self.fun(*merge(tree_unflatten(tree, xs)))
            o, t = tree_flatten(out)
            out_tree[:] = [t]
            return tuple(o)

        user_jvp = self.jvp

        def jvp_flat(primals, tangents):
            # the user's rule gets the non-differentiable arguments first (as in JAX)
            dp = tuple(tree_unflatten(tree, primals))
            dt = tuple(tree_unflatten(tree, tangents))
            out, t_out = user_jvp(*[static[i] for i in nd], dp, dt)
            o, ot = tree_flatten(out)
            out_tree[:] = [ot]
            return tuple(o), tuple(tree_flatten(t_out)[0])

        outs = custom_jvp_call_p.bind(*flat, fun=fun_flat, jvp=jvp_flat)
        return tree_unflatten(out_tree[0], list(outs))


# ---- custom_vjp ----------------------------------------------------------------------------

class _CustomVJPRules(_CallRules):
    def jvp(self, interp, args, params):
        if all(is_zero(interp.lift(a)[1]) for a in args):
            with set_interpreter(interp.parent):
                return custom_vjp_call_p.bind(*[interp.lift(a)[0] for a in args], **params)
        raise TypeError("can't apply forward-mode differentiation (jvp, jacfwd, hessian) to a "
                        "custom_vjp function; define a custom_jvp instead")

    def vjp(self, interp, args, params):
        primals, parents = zip(*[interp.lift(a) for a in args])
        with set_interpreter(interp.parent):
            if all(p is None for p in parents):
                return custom_vjp_call_p.bind(*primals, **params)
            outs, res = params["fwd"](*primals)
        bwd = params["bwd"]

        def backward(cts):
            cts = tuple(_zeros_for(o) if c is None else c for c, o in zip(cts, outs))
            return bwd(res, cts)
        return interp.record(backward, parents, outs, multiple_results=True)


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.call = _CustomVJPRules()


class custom_vjp:
    """A function with a user-defined reverse-mode derivative.

    >>> @netcl.custom_vjp
    ... def clip_grad(x): return x
    >>> clip_grad.defvjp(lambda x: (x, None), lambda res, g: (jnp.clip(g, -1, 1),))
    """

    def __init__(self, fun, nondiff_argnums=()):
        nd = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else tuple(nondiff_argnums)
        if any(not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in nd):
            raise TypeError(f"custom_vjp: nondiff_argnums must be non-negative ints, got "
                            f"{nondiff_argnums!r}")
        functools.update_wrapper(self, fun)   # (first: fun's __dict__ must not win)
        self.fun = fun
        self.nondiff_argnums = nd
        self.fwd = self.bwd = None

    __getattr__ = _forward_attr

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args):
        if self.fwd is None:
            raise TypeError(f"custom_vjp {self.fun.__name__}: no rule defined; call .defvjp "
                            "first")
        # arguments at nondiff_argnums are passed through as they are (as in JAX: bwd gets
        # them first, and returns cotangents for the other arguments only)
        nd = self.nondiff_argnums
        if any(i >= len(args) for i in nd):
            raise ValueError(f"custom_vjp {self.fun.__name__}: nondiff_argnums={nd} but the "
                             f"call has {len(args)} arguments")
        static = {i: args[i] for i in nd}
        dyn = tuple(a for i, a in enumerate(args) if i not in static)
        flat, tree = tree_flatten(dyn)
        out_tree = []

        def merge(xs):
            it = iter(tree_unflatten(tree, xs))
            return [static[i] if i in static else next(it) for i in range(len(args))]

        def fun_flat(*xs):
            o, t = tree_flatten(self.fun(*merge(xs)))
            out_tree[:] = [t]
            return tuple(o)

        def fwd_flat(*xs):
            out, res = self.fwd(*merge(xs))
            o, t = tree_flatten(out)
            out_tree[:] = [t]
            return tuple(o), res

        def bwd_flat(res, cts):
            ct_tree = tree_unflatten(out_tree[0], list(cts))
            in_cts = self.bwd(*[static[i] for i in nd], res, ct_tree)
            if not isinstance(in_cts, tuple) or len(in_cts) != len(dyn):
                raise TypeError(f"custom_vjp {self.fun.__name__}: bwd must return a tuple with "
                                f"one cotangent per differentiable argument ({len(dyn)}), got "
                                f"{in_cts!r}")
            flat_cts = []
            for a, c in zip(dyn, in_cts):
                leaves = tree_flatten(a)[0]
                flat_cts += [None] * len(leaves) if c is None else tree_flatten(c)[0]
            return tuple(flat_cts)

        outs = custom_vjp_call_p.bind(*flat, fun=fun_flat, fwd=fwd_flat, bwd=bwd_flat)
        return tree_unflatten(out_tree[0], list(outs))


# ---- checkpoint (rematerialisation) --------------------------------------------------------

class _CheckpointRules(_CallRules):
    def vjp(self, interp, args, params):
        primals, parents = zip(*[interp.lift(a) for a in args])
        fun, policy = params["fun"], params.get("policy")
        saved = ()
        with set_interpreter(interp.parent):
            if policy is None:
                outs = fun(*primals)  # no tape inside: only inputs are kept
            else:                     # (and what the policy saves: remat_policies)
                from .remat_policies import forward
                outs, saved = forward(fun, policy, primals)
        if all(p is None for p in parents):
            return outs

        def backward(cts):
            from .ad import vjp as _vjp
            again = fun
            if policy is not None:
                from .remat_policies import replaying
                again = replaying(fun, policy, saved)
            _, f_vjp = _vjp(again, *primals)  # recompute the forward pass, then go back
            cts = tuple(_zeros_for(o) if c is None else c for c, o in zip(cts, outs))
            return f_vjp(cts)
        return interp.record(backward, parents, outs, multiple_results=True)


checkpoint_call_p = Primitive("checkpoint", multiple_results=True)
checkpoint_call_p.call = _CheckpointRules()


def checkpoint(fun, prevent_cse=True, policy=None, static_argnums=(), static_argnames=(),
               concrete=False):
    """Recompute `fun`'s intermediate values in the backward pass instead of storing them;
    `policy` (netcl.checkpoint_policies: dots_saveable, save_only_these_names(...), ...)
    keeps the values it chooses instead (transforms/remat_policies.py). Arguments named by
    `static_argnums` / `static_argnames` (keywords) reach `fun` as they are (Python values
    that choose the computation), as JAX's.

    >>> layer = netcl.checkpoint(lambda p, x: jnp.tanh(x @ p))
    >>> layer = netcl.checkpoint(layer, policy=netcl.checkpoint_policies.dots_saveable)
    >>> act = netcl.checkpoint(lambda x, kind: getattr(jnp, kind)(x), static_argnames="kind")
    """
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function (prim, *avals, **params) -> "
                        f"bool, as netcl.checkpoint_policies' are; got {policy!r}")
    if concrete:        # (JAX removed it: it raises likewise)
        raise NotImplementedError("checkpoint: concrete=True is not supported (JAX removed "
                                  "it); use static_argnums for Python values")
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    for v, what, kind in ((nums, "static_argnums", int), (names, "static_argnames", str)):
        if any(isinstance(x, bool) or not isinstance(x, kind) for x in v):
            raise TypeError(f"checkpoint: {what} must be {kind.__name__}s, got {v!r}")

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        n = len(args)
        static = {i % n: args[i] for i in nums if -n <= i < n}
        static_kw = {k: v for k, v in kwargs.items() if k in names}
        dyn = ([a for i, a in enumerate(args) if i not in static],
               {k: v for k, v in kwargs.items() if k not in names})
        flat, tree = tree_flatten(dyn)
        out_tree = []

        def fun_flat(*xs):
            d_args, d_kw = tree_unflatten(tree, xs)
            it = iter(d_args)
            full = [static[i] if i in static else next(it) for i in range(n)]
            o, t = tree_flatten(fun(*full, **d_kw, **static_kw))
            out_tree[:] = [t]
            return tuple(o)
        outs = checkpoint_call_p.bind(*flat, fun=fun_flat, policy=policy)
        return tree_unflatten(out_tree[0], list(outs))
    return wrapped


remat = checkpoint
