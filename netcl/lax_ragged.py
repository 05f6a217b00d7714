"""jax.lax.ragged_dot and ragged_dot_general: grouped matrix products (mixture-of-experts).

A ragged product splits one dimension of lhs into consecutive groups whose sizes come from
`group_sizes`; group i meets its own slice of rhs. It is built from netcl operations, as
JAX's reference implementation: the ragged operand is expanded to a leading group axis
with a mask (row r lies in group i where start_i <= r < end_i, the bounds from a cumsum of
the sizes), and one dot_general contracts the group axis away (or keeps it). So jit, grad,
vmap and every other transform see ordinary primitives.

Modes (as JAX's RaggedDotMode), with lhs's ragged dimension:
  1. non-contracting: [b.., m, k] x [g, b.., k, n] -> [b.., m, n]   (ragged_dot; the forward
     pass of a mixture-of-experts layer). Rows past sum(group_sizes) give zeros.
  2. contracting:     [b.., m, k] x [b.., k, n] -> [g, b.., m, n]   (the rhs gradient).
  3. batch:           [b, m, k] x [b, k, n] -> [b, m, n]             (group sizes ignored,
     as in JAX: every batch entry belongs to some group).

>>> y = netcl.lax.ragged_dot(tokens, expert_w, group_sizes)    # [m, k] x [g, k, n] -> [m, n]
"""
import dataclasses
import operator

from .core import dtypes
from .primitives.views import operand

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """jax.lax.RaggedDotDimensionNumbers: the dot_general dimension numbers
    ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)), lhs's one ragged dimension
    and rhs's group dimension (one in mode 1, none in modes 2 and 3).

    >>> dn = netcl.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    """
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        where = "RaggedDotDimensionNumbers"
        try:
            (lc, rc), (lb, rb) = dot_dimension_numbers
            dn = tuple(tuple(tuple(_ints(d, where, "dot_dimension_numbers") for d in pair))
                       for pair in ((lc, rc), (lb, rb)))
        except (TypeError, ValueError):
            raise TypeError(f"{where}: dot_dimension_numbers must be ((lhs_contracting, "
                            f"rhs_contracting), (lhs_batch, rhs_batch)), got "
                            f"{dot_dimension_numbers!r}") from None
        object.__setattr__(self, "dot_dimension_numbers", dn)
        object.__setattr__(self, "lhs_ragged_dimensions",
                           _ints(lhs_ragged_dimensions, where, "lhs_ragged_dimensions"))
        object.__setattr__(self, "rhs_group_dimensions",
                           _ints(rhs_group_dimensions, where, "rhs_group_dimensions"))


def _ints(values, where, arg):
    try:
        if any(isinstance(v, bool) for v in values):
            raise TypeError
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a sequence of ints, got {values!r}") from None


# jax.lax.ragged_dot's dimension numbers: [m, k] x [g, k, n], ragged m, group axis 0 of rhs
_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def _desc(x):
    return f"shape {tuple(x.shape)} and dtype {x.dtype}"


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None):
    """jax.lax.ragged_dot: lhs [m, k] times rhs [g, k, n] by groups -> [m, n]. Rows
    group_sizes[0] of lhs multiply rhs[0], the next group_sizes[1] rows rhs[1], and so on;
    rows past sum(group_sizes) give zeros. group_sizes: [g] integers.

    >>> lhs, rhs = jnp.ones((5, 3)), jnp.ones((2, 3, 4))
    >>> netcl.lax.ragged_dot(lhs, rhs, jnp.array([2, 2], jnp.int32))   # row 4: zeros
    """
    where = "ragged_dot"
    lhs, rhs, gs = _operands(lhs, rhs, group_sizes, where)
    if lhs.ndim != 2:
        raise TypeError(f"{where}: lhs must be 2-d [m, k], got {_desc(lhs)}")
    if rhs.ndim != 3:
        raise TypeError(f"{where}: rhs must be 3-d [g, k, n], got {_desc(rhs)}")
    if gs.ndim != 1:
        raise TypeError(f"{where}: group_sizes must be 1-d [g], got {_desc(gs)}")
    if lhs.shape[1] != rhs.shape[1]:
        raise TypeError(f"{where}: lhs [m, k] and rhs [g, k, n] must agree in k, got lhs "
                        f"{_desc(lhs)} and rhs {_desc(rhs)}")
    if gs.shape[0] != rhs.shape[0]:
        raise TypeError(f"{where}: group_sizes has {gs.shape[0]} groups but rhs [g, k, n] "
                        f"has g={rhs.shape[0]} (group_sizes {_desc(gs)}, rhs {_desc(rhs)})")
    return _ragged(lhs, rhs, gs, _BASIC, precision, preferred_element_type, group_offset,
                   where)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None):
    """jax.lax.ragged_dot_general: dot_general with lhs's one ragged dimension split into
    groups by `group_sizes` ([g], or [prefix..., g] per batch entry as JAX's). Ragged
    non-contracting dimension: rhs has a group dimension and each group meets its slice;
    ragged contracting dimension: the result gains a leading [g] axis, one partial product
    per group; ragged batch dimension: a plain dot_general (as JAX).

    >>> dn = netcl.lax.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0], [])
    >>> netcl.lax.ragged_dot_general(x, dy, sizes, dn).shape     # [g, k, n]: per-group x^T dy
    """
    where = "ragged_dot_general"
    if not isinstance(ragged_dot_dimension_numbers, RaggedDotDimensionNumbers):
        raise TypeError(f"{where}: ragged_dot_dimension_numbers must be a "
                        "RaggedDotDimensionNumbers, got "
                        f"{type(ragged_dot_dimension_numbers).__name__}")
    lhs, rhs, gs = _operands(lhs, rhs, group_sizes, where)
    return _ragged(lhs, rhs, gs, ragged_dot_dimension_numbers, precision,
                   preferred_element_type, group_offset, where)


def _operands(lhs, rhs, group_sizes, where):
    lhs, rhs, gs = (operand(lhs, where), operand(rhs, where), operand(group_sizes, where))
    if dtypes.kind(gs.dtype) not in "iu":
        raise TypeError(f"{where}: group_sizes must have an integer dtype, got {_desc(gs)}")
    for name, x in (("lhs", lhs), ("rhs", rhs)):
        if dtypes.kind(x.dtype) == "b":
            raise TypeError(f"{where}: {name} must be numeric, got {_desc(x)}")
    return lhs, rhs, gs


def _mode(lhs, rhs, gs, dn, where):
    """(mode, lhs ragged dim, lhs prefix dims) after JAX's shape checks (TypeError)."""
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    for name, dims, x in (("lhs contracting", lc, lhs), ("rhs contracting", rc, rhs),
                          ("lhs batch", lb, lhs), ("rhs batch", rb, rhs),
                          ("lhs ragged", dn.lhs_ragged_dimensions, lhs),
                          ("rhs group", dn.rhs_group_dimensions, rhs)):
        for d in dims:
            if not 0 <= d < x.ndim:
                raise TypeError(f"{where}: {name} dimension {d} is out of range for an "
                                f"operand of {_desc(x)}")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError(f"{where}: expected exactly one lhs ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}")
    ragged = dn.lhs_ragged_dimensions[0]
    free = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    if ragged in free:
        mode, prefix = 1, list(lb) + free[:free.index(ragged)]
    elif ragged in lc:
        mode, prefix = 2, list(lb) + list(lc[:lc.index(ragged)])
    else:
        mode, prefix = 3, list(lb[:lb.index(ragged)])
    groups = dn.rhs_group_dimensions
    if mode == 1 and len(groups) != 1:
        raise TypeError(f"{where}: a ragged non-contracting lhs dimension needs exactly one "
                        f"rhs group dimension, got rhs_group_dimensions={groups}")
    if mode != 1 and groups:
        raise TypeError(f"{where}: a ragged contracting or batch lhs dimension takes no rhs "
                        f"group dimension, got rhs_group_dimensions={groups}")
    if gs.ndim == 0:
        raise TypeError(f"{where}: group_sizes must have at least one dimension, got "
                        f"{_desc(gs)}")
    want = tuple(lhs.shape[d] for d in prefix) + (gs.shape[-1],)
    if gs.ndim != 1 and tuple(gs.shape) != want:
        raise TypeError(f"{where}: expected group_sizes of shape {want} ([g] or "
                        f"[prefix..., g]), got {_desc(gs)}")
    if mode == 1:
        g = groups[0]
        if g in rc or g in rb:
            raise TypeError(f"{where}: rhs group dimension {g} must differ from rhs's "
                            "contracting and batch dimensions")
        if rhs.shape[g] != gs.shape[-1]:
            raise TypeError(f"{where}: group_sizes has {gs.shape[-1]} groups but rhs "
                            f"dimension {g} has {rhs.shape[g]} (rhs {_desc(rhs)})")
    for a, b in zip(lc, rc):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"{where}: contracting dimensions differ: lhs {_desc(lhs)} "
                            f"dimension {a} vs rhs {_desc(rhs)} dimension {b}")
    for a, b in zip(lb, rb):
        if lhs.shape[a] != rhs.shape[b]:
            raise TypeError(f"{where}: batch dimensions differ: lhs {_desc(lhs)} dimension "
                            f"{a} vs rhs {_desc(rhs)} dimension {b}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(f"{where}: dot_dimension_numbers {dn.dot_dimension_numbers} pair "
                        "different numbers of lhs and rhs dimensions")
    return mode, ragged, prefix


def _ragged(lhs, rhs, gs, dn, precision, preferred_element_type, group_offset, where):
    from .numpy import result_type
    from .primitives.elementwise import convert_element_type
    from .primitives.linalg import dot_general
    if group_offset is not None:     # (JAX's implementation has none either)
        raise NotImplementedError(f"{where}: group_offset is not supported (JAX does not "
                                  "implement it either); slice group_sizes instead")
    mode, ragged, prefix = _mode(lhs, rhs, gs, dn, where)
    if lhs.dtype != rhs.dtype:       # (JAX promotes mixed operands; netcl's dot does not)
        dt = result_type(lhs, rhs)
        lhs, rhs = convert_element_type(lhs, dt), convert_element_type(rhs, dt)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    up = lambda dims: [d + 1 for d in dims]  # noqa: E731  (behind the new group axis)

    def dot(a, b, dims):
        return dot_general(a, b, dims, precision=precision,
                           preferred_element_type=preferred_element_type)
    if mode == 3:
        return dot(lhs, rhs, dn.dot_dimension_numbers)
    if mode == 1:
        return dot(_expand(lhs, ragged, gs, prefix), rhs,
                   ((up(lc) + [0], list(rc) + [dn.rhs_group_dimensions[0]]), (up(lb), rb)))
    rhs_ragged = rc[lc.index(ragged)]
    rhs_prefix = list(rb) + list(rc[:rc.index(rhs_ragged)])
    return dot(_expand(lhs, ragged, gs, prefix), _expand(rhs, rhs_ragged, gs, rhs_prefix),
               ((up(lc), up(rc)), ([0] + up(lb), [0] + up(rb))))


def _expand(x, dim, gs, prefix):
    """x with a leading group axis [g, *x.shape]: entry i keeps the positions of dimension
    `dim` that group i covers, zeros elsewhere. gs is [g] or [x.shape[p] for p in prefix..,
    g] (sizes per entry of those dimensions of x)."""
    from . import lax, numpy as jnp
    g = gs.shape[-1]
    if gs.ndim == 1 and prefix:      # (the same sizes for every prefix entry)
        gs = jnp.broadcast_to(gs, tuple(x.shape[p] for p in prefix) + (g,))
    ends = lax.cumsum(gs, axis=gs.ndim - 1)
    starts = ends - gs
    order = sorted(range(len(prefix)), key=lambda i: prefix[i])
    shape = [g] + [1] * x.ndim
    for p in prefix:
        shape[1 + p] = x.shape[p]
    perm = (gs.ndim - 1,) + tuple(order)      # group axis first, prefix in x's order
    starts = jnp.reshape(jnp.transpose(starts, perm), shape)
    ends = jnp.reshape(jnp.transpose(ends, perm), shape)
    iota_shape = [1] * (x.ndim + 1)
    iota_shape[1 + dim] = x.shape[dim]
    pos = lax.broadcasted_iota(ends.dtype, tuple(iota_shape), 1 + dim)
    inside = (starts <= pos) & (pos < ends)
    return jnp.where(inside, x[None], jnp.zeros((), x.dtype))
