"""The IR: a flat list of equations `outs = primitive[params](ins)` over typed variables.

`Staging` (transforms/staging.py) produces it from a Python function; jit optimises, fuses
and compiles it; `eval_ir` interprets it by binding each primitive (so an IR can itself be
differentiated, batched or traced again). The printer aims at `jax.make_jaxpr`'s readability.
"""
import itertools



class Var:
    __slots__ = ("aval", "id")
    _counter = itertools.count()

    def __init__(self, aval):
        self.aval = aval
        self.id = next(Var._counter)

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Eqn:
    __slots__ = ("prim", "inputs", "params", "outputs", "overwrites")

    def __init__(self, prim, inputs, params, outputs, overwrites=()):
        self.prim = prim
        self.inputs = inputs    # list of Var
        self.params = params    # dict
        self.outputs = outputs  # list of Var
        # positions of inputs whose buffers the outputs take (jit's assign_in_place pass)
        self.overwrites = overwrites


class IR:
    """invars: the inputs; constvars with consts: captured arrays; outvars: the results."""

    def __init__(self, invars, constvars, consts, eqns, outvars):
        self.invars = invars
        self.constvars = constvars
        self.consts = consts
        self.eqns = eqns
        self.outvars = outvars

    def __str__(self):
        return pretty(self)

    __repr__ = __str__


def _names():
    for n in itertools.count():
        s, q = "", n
        while True:
            s = chr(ord("a") + q % 26) + s
            q = q // 26 - 1
            if q < 0:
                break
        yield s


def _fmt_param(v):
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    if hasattr(v, "name") and hasattr(v, "kind") and hasattr(v, "itemsize"):
        return v.name  # a numpy dtype
    return repr(v)


def pretty(ir):
    """Text like `{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add a b in (c,) }`."""
    gen = _names()
    names = {}

    def name(v):
        if v.id not in names:
            names[v.id] = next(gen)
        return names[v.id]

    def decl(v):
        return f"{name(v)}:{v.aval.str_short()}"

    consts = " ".join(decl(v) for v in ir.constvars)
    ins = " ".join(decl(v) for v in ir.invars)
    lines = [f"{{ lambda {consts}{'; ' if consts else ''}{ins}. let"]
    for e in ir.eqns:
        outs = " ".join(decl(v) for v in e.outputs)
        params = ""
        if e.params:
            params = "[" + ", ".join(f"{k}={_fmt_param(v)}" for k, v in e.params.items()) + "]"
        args = " ".join(name(v) for v in e.inputs)
        over = f"  (writes over {', '.join(name(e.inputs[j]) for j in e.overwrites)})" \
            if e.overwrites else ""
        lines.append(f"    {outs} = {e.prim.name}{params} {args}{over}")
    outs = ", ".join(name(v) for v in ir.outvars)
    lines.append(f"  in ({outs}{',' if len(ir.outvars) == 1 else ''}) }}")
    return "\n".join(lines)


def eval_ir(ir, consts, args):
    """Run an IR by binding its primitives under the current interpreter."""
    env = {}
    for v, x in zip(ir.constvars, consts):
        env[v.id] = x
    for v, x in zip(ir.invars, args):
        env[v.id] = x
    for e in ir.eqns:
        outs = e.prim.bind(*[env[v.id] for v in e.inputs], **e.params)
        if not e.prim.multiple_results:
            outs = (outs,)
        for v, o in zip(e.outputs, outs):
            env[v.id] = o
    return [env[v.id] for v in ir.outvars]

