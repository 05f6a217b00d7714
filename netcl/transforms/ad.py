"""Automatic differentiation: forward mode (jvp) and reverse mode (vjp, grad) interpreters.

Both follow autodidax2: an interpreter wraps its parent, unwraps only its own tracers (so
nested transforms never confuse their perturbations), applies the primitive's rule while the
parent is current, and wraps the results. Reverse mode records a tape of primitive
applications with their concrete inputs (eager values, so Python control flow on values
works outside jit) and walks it backwards binding primitives again: the backward pass is
itself traced by any enclosing transform, which is how grad-of-grad and jit-of-grad work.
An eager backward pass whose tape has the structure of earlier calls runs compiled instead
(transforms/eager_backward.py): a few fused kernels instead of a launch per rule's op.
"""
import numpy as np

from ..core import dtypes
from ..core.ad_util import Zero, add_tangents, instantiate, is_zero
from ..core.array import Array, ArrayBase
from ..core.eval import to_array
from ..core.eval import eval_interpreter
from ..core.tracing import (Interpreter, Primitive, ShapedArray, Tracer, _current,
                            current_interpreter, get_aval, set_interpreter)
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from . import eager_backward


class MissingRuleError(NotImplementedError):
    pass


def _as_array(x, where):
    return x if isinstance(x, (Array, Tracer)) else to_array(x, where)


# ---- forward mode --------------------------------------------------------------------------

class _PrimalTracer(Tracer):
    """A tracer carrying a concrete (or parent-traced) primal value."""
    __slots__ = ("primal",)

    @property
    def aval(self):
        return get_aval(self.primal)

    # read straight from the primal: user code asks for shapes often (no aval object per ask)
    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)
    weak_type = property(lambda self: self.primal.weak_type)


class JVPTracer(_PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, interp, primal, tangent):
        self._interp = interp
        self.primal = primal
        self.tangent = tangent


class JVPInterpreter(Interpreter):
    transform_name = "jvp"

    def __init__(self, parent):
        self.parent = parent

    def lift(self, x):
        if isinstance(x, JVPTracer) and x._interp is self:
            return x.primal, x.tangent
        return x, Zero(get_aval(x))

    def process(self, prim, args, params):
        if prim.call is not None:
            return prim.call.jvp(self, args, params)
        primals, tangents = zip(*[self.lift(a) for a in args]) if args else ((), ())
        if all(type(t) is Zero for t in tangents):
            with set_interpreter(self.parent):
                return prim.bind(*primals, **params)
        if prim.jvp is None:
            raise MissingRuleError(f"forward-mode differentiation rule for '{prim.name}' "
                                   "is not implemented")
        with set_interpreter(self.parent):
            out, t_out = prim.jvp(primals, tangents, **params)
        if prim.multiple_results:
            return tuple(self._wrap(o, t) for o, t in zip(out, t_out))
        return self._wrap(out, t_out)

    def _wrap(self, out, t):
        if type(t) is Zero or not dtypes.is_inexact(out.dtype):
            return out
        return JVPTracer(self, out, t)

    def concrete(self, tracer, what):
        p = tracer.primal
        return p._concrete(what) if isinstance(p, Tracer) else p


def _check_float(x, fname, argname):
    if not dtypes.is_inexact(x.dtype):
        raise TypeError(f"{fname}: {argname} must be a float (or complex) array to be "
                        "differentiated, got "
                        f"{x.dtype}; convert it with .astype(jnp.float32), or leave it out of "
                        "argnums")


def jvp(fun, primals, tangents, has_aux=False):
    """Forward mode: (fun(*primals), d fun(primals) . tangents).

    >>> y, dy = netcl.jvp(jnp.sin, (x,), (jnp.ones_like(x),))
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp: primals and tangents must be tuples (or lists) of arguments, got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(f"jvp: primals and tangents must have the same structure, got "
                         f"{p_tree} and {t_tree}")
    p_flat = [_as_array(p, "jvp") for p in p_flat]
    t_flat = [_as_array(t, "jvp") for t in t_flat]
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        if tuple(p.shape) != tuple(t.shape) or (dtypes.is_inexact(p.dtype) and
                                                 p.dtype != t.dtype):
            raise ValueError(f"jvp: primal {i} has shape/dtype {p.shape} {p.dtype} but its "
                             f"tangent has {t.shape} {t.dtype}")
    interp = JVPInterpreter(current_interpreter())
    ins = [JVPTracer(interp, p, t) if dtypes.is_inexact(p.dtype) else p
           for p, t in zip(p_flat, t_flat)]
    with set_interpreter(interp):
        out = fun(*tree_unflatten(p_tree, ins))
    if has_aux:
        out, aux = out
    outs, out_tree = tree_flatten(out)
    po, to = [], []
    for o in outs:
        p, t = interp.lift(o) if isinstance(o, Tracer) else (o, None)
        po.append(p)
        to.append(instantiate(t) if t is not None and not is_zero(t) else
                  _zeros_like(p))
    res = (tree_unflatten(out_tree, po), tree_unflatten(out_tree, to))
    if has_aux:
        return res + (_unwrap_aux(interp, aux),)
    return res


def _zeros_like(x):
    from ..primitives.views import full
    x = _as_array(x, "jvp")
    return full(x.shape, 0, x.dtype)


def _unwrap_aux(interp, aux):
    def unwrap(x):
        while isinstance(x, (JVPTracer, VJPTracer)) and x._interp is interp:
            x = x.primal
        return x
    return tree_map(unwrap, aux)


# ---- reverse mode --------------------------------------------------------------------------

class VJPTracer(_PrimalTracer):
    __slots__ = ("node",)

    def __init__(self, interp, primal, node):
        self._interp = interp
        self.primal = primal
        self.node = node


# Operators on reverse-mode tracers: an operation of two operands of one shape and dtype
# (float) binds its primitive straight away, as Array's operators do for arrays (their fast
# path takes arrays only); anything else takes ArrayBase's operator (netcl.numpy's
# promotion and broadcasting), with the same result.
_OPERATOR_PRIMS = {"__add__": "add_p", "__sub__": "sub_p", "__mul__": "mul_p",
                   "__truediv__": "div_p"}


def _vjp_binop(name):
    prims = []

    def op(self, other):
        if type(other) is VJPTracer:
            if other._interp is self._interp:
                q = other.primal
            else:
                q = None
        else:
            q = other if type(other) is Array else None
        if q is not None:
            p = self.primal
            if p.dtype is q.dtype and p.shape == q.shape and p.weak_type is q.weak_type and \
                    dtypes.is_inexact(p.dtype):
                if not prims:
                    from ..primitives import elementwise
                    prims.append(getattr(elementwise, _OPERATOR_PRIMS[name]))
                return prims[0].bind(self, other)
        return getattr(ArrayBase, name)(self, other)
    op.__name__ = name
    return op


def _vjp_neg(self):
    p = self.primal
    if dtypes.is_inexact(p.dtype):
        from ..primitives.elementwise import neg_p
        return neg_p.bind(self)
    return ArrayBase.__neg__(self)


for _name in _OPERATOR_PRIMS:
    setattr(VJPTracer, _name, _vjp_binop(_name))
VJPTracer.__neg__ = _vjp_neg


class _Node:
    """One recorded application: how to send its output cotangent back to its inputs.

    A primitive's node keeps its vjp rule and the rule's arguments (`rule(ct, out, *primals,
    **params)`), so that the backward pass of an eager grad can be keyed by structure and
    compiled (transforms/eager_backward.py); a call primitive's node keeps a closure
    (`custom`, with `rule` None)."""
    __slots__ = ("rule", "prim", "out", "primals", "params", "parents", "n_out", "custom")

    def __init__(self, rule, prim, out, primals, params, parents, n_out, custom=None):
        self.rule = rule
        self.prim = prim
        self.out = out
        self.primals = primals
        self.params = params
        self.parents = parents    # per input: (node index, output index) or None
        self.n_out = n_out        # 0 for single-result nodes
        self.custom = custom      # ct (or tuple of cts) -> tuple of input cts (None = none)

    def backward(self, ct):
        if self.rule is not None:
            return self.rule(ct, self.out, *self.primals, **self.params)
        return self.custom(ct)


def run_backward(parents, n_outs, apply, out_nodes, cts):
    """Propagate cotangents from outputs through a tape (per node: its parents and n_out;
    `apply(idx, ct)` runs node idx's rule); return the cotangent map, which holds the
    differentiated inputs' cotangents at (_INPUT, i)."""
    acc = {}
    for node, ct in zip(out_nodes, cts):
        if node is not None:
            acc[node] = add_tangents(acc[node], ct) if node in acc else ct
    pop = acc.pop
    for idx in range(len(parents) - 1, -1, -1):
        n_out = n_outs[idx]
        if n_out:
            got = [pop((idx, k), None) for k in range(n_out)]
            if all(g is None for g in got):
                continue
            ct = tuple(got)
        else:
            ct = pop((idx, 0), None)
            if ct is None:
                continue
        in_cts = apply(idx, ct)
        for parent, c in zip(parents[idx], in_cts):
            if parent is None or c is None or type(c) is Zero:
                continue
            acc[parent] = add_tangents(acc[parent], c) if parent in acc else c
    return acc


class VJPInterpreter(Interpreter):
    transform_name = "grad"

    def __init__(self, parent):
        self.parent = parent
        self.tape = []

    def lift(self, x):
        if isinstance(x, VJPTracer) and x._interp is self:
            return x.primal, x.node
        return x, None

    def process(self, prim, args, params):
        if prim.call is not None:
            return prim.call.vjp(self, args, params)
        primals = []
        parents = []
        traced = False
        for a in args:
            if isinstance(a, VJPTracer) and a._interp is self:
                primals.append(a.primal)
                parents.append(a.node)
                traced = True
            else:
                primals.append(a)
                parents.append(None)
        # (the context variable set and reset directly: set_interpreter's context manager
        # costs as much again, on every primitive of every eager grad)
        token = _current.set(self.parent)
        try:
            out = prim.bind(*primals, **params)
        finally:
            _current.reset(token)
        if not traced:
            return out
        return self._taped(prim, primals, parents, params, out)

    def known(self, prim, args, params, out):
        """`process` of a primitive application whose outputs `out` (values of the parent)
        are known already: recorded with its rule, not computed again (checkpoint
        policies' saved values: remat_policies)."""
        primals, parents = zip(*[self.lift(a) for a in args]) if args else ((), ())
        if all(p is None for p in parents):
            return out
        return self._taped(prim, list(primals), list(parents), params, out)

    def _taped(self, prim, primals, parents, params, out):
        rule = prim.vjp
        if rule is None:
            raise MissingRuleError(f"reverse-mode differentiation rule for '{prim.name}' "
                                   "is not implemented")
        tape = self.tape
        idx = len(tape)
        if prim.multiple_results:
            tape.append(_Node(rule, prim, out, tuple(primals), params, tuple(parents),
                              len(out)))
            return tuple(VJPTracer(self, o, (idx, k)) if dtypes.is_inexact(o.dtype) else o
                         for k, o in enumerate(out))
        tape.append(_Node(rule, prim, out, tuple(primals), params, tuple(parents), 0))
        return VJPTracer(self, out, (idx, 0)) if dtypes.is_inexact(out.dtype) else out

    def record(self, backward, parents, out, multiple_results=False):
        """Add a node that runs `backward(ct)` to the tape; wrap its float outputs as
        tracers."""
        idx = len(self.tape)
        self.tape.append(_Node(None, None, out, (), None, tuple(parents),
                               len(out) if multiple_results else 0, backward))
        if multiple_results:
            return tuple(VJPTracer(self, o, (idx, k)) if dtypes.is_inexact(o.dtype) else o
                         for k, o in enumerate(out))
        return VJPTracer(self, out, (idx, 0)) if dtypes.is_inexact(out.dtype) else out

    def concrete(self, tracer, what):
        p = tracer.primal
        return p._concrete(what) if isinstance(p, Tracer) else p

    def backward_pass(self, out_nodes, cts):
        """Propagate cotangents from outputs to every node; return the cotangent map."""
        tape = self.tape
        return run_backward([n.parents for n in tape], [n.n_out for n in tape],
                            lambda idx, ct: tape[idx].backward(ct), out_nodes, cts)


_INPUT = -1  # node index of the differentiated inputs


def vjp(fun, *primals, has_aux=False):
    """Reverse mode: (fun(*primals), vjp_fun), where vjp_fun(ct) gives the input cotangents.

    >>> y, f_vjp = netcl.vjp(jnp.sin, x)
    >>> (dx,) = f_vjp(jnp.ones_like(y))
    """
    primal_out, backward, aux = _vjp(fun, primals, has_aux)

    def vjp_fun(ct):
        return backward(ct)
    if has_aux:
        return primal_out, vjp_fun, aux
    return primal_out, vjp_fun


def _vjp(fun, primals, has_aux):
    """(primal_out, backward, aux): vjp's work. backward(ct) gives the input cotangents;
    backward(None, dtype) those from the cotangent 1 of a single scalar output (grad's,
    made where the backward runs: inside the compiled backward when there is one)."""
    p_flat, p_tree = tree_flatten(tuple(primals))
    p_flat = [_as_array(p, "vjp") for p in p_flat]
    interp = VJPInterpreter(current_interpreter())
    ins = [VJPTracer(interp, p, (_INPUT, i)) if dtypes.is_inexact(p.dtype) else p
           for i, p in enumerate(p_flat)]
    with set_interpreter(interp):
        out = fun(*tree_unflatten(p_tree, ins))
    if has_aux:
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError("vjp: with has_aux=True the function must return a pair (out, aux)")
        out, aux = out
    outs, out_tree = tree_flatten(out)
    out_primals, out_nodes = zip(*[interp.lift(o) for o in outs]) if outs else ((), ())

    def backward(ct, ones=None):
        if ones is not None:    # (grad: one scalar output, cotangent 1)
            ct_flat = None
        else:
            ct_flat, ct_tree = tree_flatten(ct)
            if ct_tree != out_tree:
                raise ValueError(f"vjp: the cotangent's structure {ct_tree} differs from the "
                                 f"output's {out_tree}")
            ct_flat = [_as_array(c, "vjp") for c in ct_flat]
            for c, o in zip(ct_flat, out_primals):
                if tuple(c.shape) != tuple(o.shape):
                    raise ValueError(f"vjp: cotangent of shape {c.shape} for an output of "
                                     f"shape {o.shape}")
        grads = None
        if interp.parent is eval_interpreter and current_interpreter() is eval_interpreter \
                and interp.tape:
            # eager, on concrete values: a backward of a structure seen before runs compiled
            grads = eager_backward.lookup(interp.tape, out_nodes, p_flat, ct_flat, ones)
        if grads is None:
            if ct_flat is None:
                from ..primitives.views import full
                ct_flat = [full((), 1, ones)]
            acc = interp.backward_pass(out_nodes, ct_flat)
            grads = []
            for i, p in enumerate(p_flat):
                g = acc.get((_INPUT, i))
                grads.append(_zeros_like(p) if g is None else _cast_like(g, p))
        return tree_unflatten(p_tree, grads)

    primal_out = tree_unflatten(out_tree, list(out_primals))
    return primal_out, backward, (_unwrap_aux(interp, aux) if has_aux else None)


def _cast_like(g, p):
    return _cast_like_aval(g, tuple(p.shape), p.dtype, p.weak_type)


def _cast_like_aval(g, shape, dtype, weak_type):
    from ..primitives.elementwise import convert_element_type
    from ..primitives.views import broadcast_in_dim
    g = instantiate(g)
    if tuple(g.shape) != shape:
        g = broadcast_in_dim(g, shape, tuple(range(len(shape) - g.ndim, len(shape))))
    if g.dtype != dtype or g.weak_type != weak_type:
        g = convert_element_type(g, dtype, weak_type)
    return g


def _argnums_tuple(argnums, nargs, fname):
    multi = isinstance(argnums, (tuple, list))
    nums = tuple(argnums) if multi else (argnums,)
    for a in nums:
        if not isinstance(a, int):
            raise TypeError(f"{fname}: argnums must be ints, got {argnums!r}")
        if not -nargs <= a < nargs:
            raise ValueError(f"{fname}: argnums={argnums!r} is out of range for a call with "
                             f"{nargs} positional arguments")
    return tuple(a % nargs for a in nums), multi


def float0_zeros(x):
    """JAX's gradient of an integer or bool input under allow_int=True: a NumPy array of
    dtype float0 (no data) of x's shape."""
    return np.zeros(tuple(x.shape), dtype=FLOAT0)


# (netcl.dtypes.float0 and jax.dtypes.float0 are this dtype; netcl.dtypes imports the core)
FLOAT0 = np.dtype([("float0", np.void, 0)])


def _is_int_leaf(x):
    return not dtypes.is_inexact(x.dtype)


def _check_reduce_axes(reduce_axes, fname):
    if reduce_axes:     # (removed from JAX's grad: it raises likewise)
        raise NotImplementedError(f"{fname}: reduce_axes is not supported (JAX dropped it); "
                                  "sum the gradient over the named axis with lax.psum")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=(), *, _name="value_and_grad"):
    """Like grad, but returns (value, gradient). allow_int=True lets integer and bool
    arguments through, whose gradients are float0 zeros, as JAX's.

    >>> loss, g = netcl.value_and_grad(loss_fn)(params, x, y)
    """
    _check_reduce_axes(reduce_axes, _name)
    if not callable(fun):
        raise TypeError(f"{_name}: expected a function, got {type(fun).__name__} {fun!r}")
    fname = f"{_name}({getattr(fun, '__name__', 'fun')})"  # grad's errors say grad

    def wrapped(*args, **kwargs):
        nums, multi = _argnums_tuple(argnums, len(args), fname)

        def partial_fun(*dyn):
            full = list(args)
            for n, d in zip(nums, dyn):
                full[n] = d
            return fun(*full, **kwargs)
        dyn = [args[n] for n in nums]
        for n, d in zip(nums, dyn):
            for leaf in tree_flatten(d)[0]:
                leaf = _as_array(leaf, fname)
                if not (allow_int and _is_int_leaf(leaf)):
                    _check_float(leaf, fname, f"argument {n}")
                if holomorphic and not dtypes.is_complex(leaf.dtype):
                    raise TypeError(f"{fname}: holomorphic=True needs complex inputs, got "
                                    f"argument {n} of dtype {leaf.dtype}")
        out, f_vjp, aux = _vjp(partial_fun, dyn, has_aux)
        if not isinstance(out, (Array, Tracer)) and not np.isscalar(out):
            raise TypeError(f"{fname}: the function must return a scalar array, got "
                            f"{type(out).__name__}" + (" (with has_aux=True return a pair "
                                                        "(scalar, aux))" if not has_aux else ""))
        out_a = _as_array(out, fname)
        if out_a.shape != ():
            raise TypeError(f"{fname}: the function must return a scalar (shape ()), got shape "
                            f"{tuple(out_a.shape)}; use netcl.vjp or netcl.jacrev for "
                            "non-scalar outputs")
        if holomorphic and not dtypes.is_complex(out_a.dtype):
            raise TypeError(f"{fname}: with holomorphic=True the function must return a "
                            f"complex scalar, got {out_a.dtype}")
        if not holomorphic and dtypes.kind(out_a.dtype) != "f":
            raise TypeError(f"{fname}: the function must return a real float scalar, got "
                            f"{out_a.dtype}" + ("; for a holomorphic function pass "
                                                "holomorphic=True" if
                                                dtypes.is_complex(out_a.dtype) else ""))
        grads = f_vjp(None, out_a.dtype)    # (from the cotangent 1)
        if allow_int:
            grads = tree_map(lambda gr, d: float0_zeros(d) if _is_int_leaf(_as_array(
                d, fname)) else gr, tuple(grads), tuple(dyn))
        g = grads if multi else grads[0]
        if has_aux:
            return (out, aux), g
        return out, g
    wrapped.__name__ = f"value_and_grad_{getattr(fun, '__name__', 'fun')}"
    wrapped.__doc__ = fun.__doc__
    return wrapped


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar function with respect to argument(s) `argnums`. The function
    returns a real float scalar; its inputs may be complex, and then the gradient is
    conj(df/dz) by JAX's convention. With `holomorphic=True` a complex function of complex
    inputs gives its complex derivative f'(z).

    >>> netcl.grad(lambda x: jnp.sum(x ** 2))(jnp.arange(3.0))   # [0, 2, 4]
    >>> netcl.grad(lambda z: z * z, holomorphic=True)(jnp.complex64(1j))   # 2j
    >>> netcl.grad(lambda x, n: x * n, (0, 1), allow_int=True)(2.0, 3)  # (3.0, float0 zeros)
    """
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, reduce_axes,
                        _name="grad")

    def wrapped(*args, **kwargs):
        (out, g) = vg(*args, **kwargs)
        if has_aux:
            return g, out[1]
        return g
    wrapped.__name__ = f"grad_{getattr(fun, '__name__', 'fun')}"
    wrapped.__doc__ = fun.__doc__
    return wrapped


# ---- stop_gradient -------------------------------------------------------------------------

stop_gradient_p = Primitive("stop_gradient", fusion="view")
stop_gradient_p.abstract_eval = lambda x: ShapedArray(x.shape, x.dtype, x.weak_type)
stop_gradient_p.make_launcher = lambda device, args, params, out: (lambda x: x)
stop_gradient_p.reference = lambda x: x
stop_gradient_p.jvp = lambda primals, tangents: (stop_gradient_p.bind(*primals),
                                                 Zero(get_aval(primals[0])))
stop_gradient_p.vjp = lambda ct, out, x: (None,)
stop_gradient_p.batch = lambda args, dims: (stop_gradient_p.bind(args[0]), dims[0])


def stop_gradient(x):
    """The identity, with zero derivative (applies to every array in a pytree)."""
    def stop(leaf):
        leaf = _as_array(leaf, "stop_gradient")
        return stop_gradient_p.bind(leaf) if dtypes.is_inexact(leaf.dtype) else leaf
    return tree_map(stop, x)

