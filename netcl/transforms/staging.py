"""Staging: trace a Python function on abstract values into the IR (`make_ir`).

The staging interpreter has no values: each primitive application is checked with its
`abstract_eval` and recorded as an equation. Arrays the function closes over become
constants of the IR. jit builds on this.
"""
from ..core.array import Array
from ..core.ir import IR, Eqn, Var
from ..core.tracing import (Interpreter, ShapedArray, Tracer, current_interpreter, get_aval,
                            set_interpreter)
from ..tree_util import tree_flatten, tree_unflatten


class StagingTracer(Tracer):
    __slots__ = ("_var",)

    def __init__(self, interp, var):
        self._interp = interp
        self._var = var

    @property
    def aval(self):
        return self._var.aval


class StagingInterpreter(Interpreter):
    transform_name = "staging (jit/make_ir)"
    records_program = True

    def __init__(self, parent=None):
        self.parent = parent
        self.eqns = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}

    def to_var(self, x):
        if isinstance(x, StagingTracer) and x._interp is self:
            return x._var
        key = id(x)
        v = self._const_ids.get(key)
        if v is None:
            if not isinstance(x, (Array, Tracer)):
                from ..core.eval import to_array
                x = to_array(x, "staging")
            v = Var(get_aval(x))
            self._const_ids[key] = v
            self.constvars.append(v)
            self.consts.append(x)
        return v

    def process(self, prim, args, params):
        if prim.call is not None:
            return prim.call.stage(self, args, params)
        in_vars = [self.to_var(a) for a in args]
        out = prim.abstract_eval(*[v.aval for v in in_vars], **params)
        outs = out if prim.multiple_results else (out,)
        out_vars = [Var(ShapedArray(o.shape, o.dtype, o.weak_type)) for o in outs]
        self.eqns.append(Eqn(prim, in_vars, dict(params), out_vars))
        tracers = [StagingTracer(self, v) for v in out_vars]
        return tuple(tracers) if prim.multiple_results else tracers[0]


def stage(fun, avals_tree_args, name="fun"):
    """Trace fun on abstract arguments (a pytree of ShapedArray). Returns (ir, out_tree)."""
    flat, in_tree = tree_flatten(avals_tree_args)
    interp = StagingInterpreter(current_interpreter())
    invars = [Var(a) for a in flat]
    with set_interpreter(interp):
        out = fun(*tree_unflatten(in_tree, [StagingTracer(interp, v) for v in invars]))
    outs, out_tree = tree_flatten(out)
    outvars = [interp.to_var(o) for o in outs]
    return IR(invars, interp.constvars, interp.consts, interp.eqns, outvars), out_tree


def lift_traced_consts(ir, first=False):
    """(ir', tracers): the IR with the constants that are tracers of an enclosing trace (the
    values a staged body closed over: a loop body using the jitted function's arguments)
    made inputs, after its own (before them with `first`), and those tracers in order."""
    lifted, tracers, constvars, consts = [], [], [], []
    for v, c in zip(ir.constvars, ir.consts):
        if isinstance(c, Tracer):
            lifted.append(v)
            tracers.append(c)
        else:
            constvars.append(v)
            consts.append(c)
    if not lifted:
        return ir, []
    invars = lifted + list(ir.invars) if first else list(ir.invars) + lifted
    return IR(invars, constvars, consts, ir.eqns, ir.outvars), tracers


def make_ir(fun, static_argnums=()):
    """Like jax.make_jaxpr: make_ir(f)(*args) returns the traced IR (print it to read it).

    >>> print(netcl.make_ir(lambda x: jnp.sin(x) * 2.0)(jnp.ones(3)))
    { lambda a:float32[]; b:float32[3]. let
        c:float32[3] = sin b
        ...
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def wrapped(*args):
        def abstract(x):
            if isinstance(x, (Array, Tracer)) or hasattr(x, "shape") and hasattr(x, "dtype"):
                from ..core import dtypes
                return ShapedArray(tuple(x.shape), dtypes.canonicalize_data(x.dtype),
                                   getattr(x, "weak_type", False))
            from ..core.eval import to_array
            return get_aval(to_array(x, "make_ir"))
        dyn_idx = [i for i in range(len(args)) if i not in static]

        def f(*dyn):
            full = list(args)
            for i, d in zip(dyn_idx, dyn):
                full[i] = d
            return fun(*full)
        from ..tree_util import tree_map
        avals = tuple(tree_map(abstract, args[i]) for i in dyn_idx)
        ir, _ = stage(f, avals)
        return ir
    return wrapped
