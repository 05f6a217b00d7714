"""Helpers shared by primitives' differentiation rules: symbolic zeros and rule builders.

`Zero(aval)` stands for a tangent or cotangent known to be zero (integer inputs, constants),
so rules skip work instead of multiplying by zeros. `defjvp` / `defvjp` build a primitive's
rules from per-argument partials written with primitives, so rules are differentiable again.
"""
from .tracing import ShapedArray, get_aval

# The array operations tangent arithmetic needs: netcl.primitives registers them when it is
# imported (core sits below the primitives and imports none of them).
_tangent_ops = {}


def register_tangent_ops(zeros, add):
    """Register `zeros(shape, dtype)` and `add(a, b)` (netcl.primitives does, at import)."""
    _tangent_ops.update(zeros=zeros, add=add)


class Zero:
    """A symbolic zero with the abstract value of the array it stands for."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def is_zero(x):
    return type(x) is Zero


def zero_like(x):
    return Zero(get_aval(x))


def tangent_aval(aval):
    """Integer and bool values have no tangent space: their tangents stay zero (float0 in JAX)."""
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type)


def instantiate(z):
    """A real zeros array for a symbolic Zero (or the value itself)."""
    if type(z) is not Zero:
        return z
    return _tangent_ops["zeros"](z.aval.shape, z.aval.dtype)


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return _tangent_ops["add"](a, b)


def defjvp(prim, *partials):
    """JVP rule from partial derivatives: partials[i](t_i, out, *primals) -> contribution.

    A None partial marks an argument with no derivative (e.g. select's predicate).
    """
    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        acc = Zero(get_aval(out))
        for f, t in zip(partials, tangents):
            if f is not None and type(t) is not Zero:
                acc = add_tangents(acc, f(t, out, *primals, **params))
        return out, acc
    prim.jvp = jvp
    return jvp


def defvjp(prim, *partials):
    """VJP rule from the same kind of partials: partials[i](ct, out, *primals) -> cotangent."""
    def vjp(ct, out, *primals, **params):
        return tuple(None if f is None else f(ct, out, *primals, **params) for f in partials)
    prim.vjp = vjp
    return vjp


def deflinear_elementwise(prim, *partials):
    """Elementwise ops whose partials are `ct * derivative`: one formula gives jvp and vjp."""
    defjvp(prim, *partials)
    defvjp(prim, *partials)
