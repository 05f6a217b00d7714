"""Products in netcl.numpy: matmul, dot, vdot, inner, outer, tensordot, einsum, kron, norm.

Every product lowers to one `dot_general` (plus free views: transposes, reshapes of dense
results); operands are promoted as JAX does, bool products are computed in int32 and
compared with 0. `norm` lives here too (`netcl.numpy.linalg.norm`).
"""
import functools
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.shapes import normalize_axis
from ..primitives import elementwise as ew
from ..primitives import views
from ..primitives.linalg import _canon_precision, bind_dot_general, dot_general
from ._util import is_array, promote

__all__ = ["matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "norm"]


def _shape(x):
    return tuple(x.shape)


def _promote_for_product(where, *args, check=None):
    """Promoted operands, and whether they were bool (computed in int32, then != 0).
    `check(*shapes)` raises for shapes the caller rejects, before any conversion runs."""
    xs = promote(where, *args, check=check)
    if xs[0].dtype == dtypes.bool_:
        return [ew.convert_element_type(x, dtypes.int32) for x in xs], True
    return xs, False


def _finish(y, was_bool):
    if was_bool:
        return ew.ne(y, views.full_like(y, 0))
    return y


def _pet(preferred_element_type, where):
    return None if preferred_element_type is None else dtypes.canonicalize(
        preferred_element_type, arg="preferred_element_type", where=where)


# ---- matmul ---------------------------------------------------------------------------------

def matmul(a, b, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's rules: 1-d operands are vectors (their dimension is
    removed from the result), leading dimensions broadcast.

    >>> netcl.numpy.matmul(netcl.numpy.ones((5, 2, 3)), netcl.numpy.ones((3, 4))).shape
    (5, 2, 4)
    """
    if is_array(a) and is_array(b) and a.dtype == b.dtype and a.weak_type == b.weak_type \
            and a.dtype != dtypes.bool_:
        was_bool = False  # the hot path: nothing to promote
    else:
        (a, b), was_bool = _promote_for_product("matmul", a, b, check=_matmul_plan)
    dn, keep, perm = _matmul_plan(tuple(a.shape), tuple(b.shape))
    y = bind_dot_general(a, b, dn, _canon_precision(precision, "matmul"),
                         _pet(preferred_element_type, "matmul"))
    if keep is not None:
        y = views.reshape(y, keep)
    if perm is not None:
        y = views.transpose(y, perm)
    return _finish(y, was_bool)


@functools.lru_cache(maxsize=4096)
def _matmul_plan(sa, sb):
    """(dimension_numbers, shape to reshape the result to or None, permutation or None)."""
    if len(sa) == 0 or len(sb) == 0:
        raise ValueError(f"matmul: operands must have at least 1 dimension, got shapes {sa} "
                         f"and {sb} (use multiply for scalars)")
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    ka = sa[-1]
    kb = sb[0] if b_vec else sb[-2]
    if ka != kb:
        raise ValueError(f"matmul: contraction dimension mismatch: a of shape {sa} has {ka} "
                         f"columns, b of shape {sb} has {kb} rows")
    a_batch = () if a_vec else sa[:-2]
    b_batch = () if b_vec else sb[:-2]
    nd = max(len(a_batch), len(b_batch))
    oa, ob = nd - len(a_batch), nd - len(b_batch)
    kinds = []
    for p in range(nd):
        da = a_batch[p - oa] if p >= oa else None
        db = b_batch[p - ob] if p >= ob else None
        if da is not None and db is not None and da != db and da != 1 and db != 1:
            raise ValueError(f"matmul: batch dimensions of shapes {sa} and {sb} cannot be "
                             f"broadcast together ({da} vs {db})")
        if da is not None and db is not None and da == db and da != 1:
            kinds.append("batch")
        elif da is not None and (da != 1 or db is None or db == 1):
            kinds.append("a")
        else:
            kinds.append("b")
    lb = tuple(p - oa for p in range(nd) if kinds[p] == "batch")
    rb = tuple(p - ob for p in range(nd) if kinds[p] == "batch")
    lc = (len(sa) - 1,)
    rc = (0,) if b_vec else (len(sb) - 2,)
    # Tags of the dot_general result's dimensions: the output position they become, or None
    # for a size-1 dimension represented by the other operand (dropped by a free reshape).
    tags = [p for p in range(nd) if kinds[p] == "batch"]
    tags += [p if kinds[p] == "a" else None for p in range(oa, nd) if kinds[p] != "batch"]
    if not a_vec:
        tags.append(nd)
    tags += [p if kinds[p] == "b" else None for p in range(ob, nd) if kinds[p] != "batch"]
    if not b_vec:
        tags.append(nd + 1)
    keep = None
    if None in tags:
        sizes = [sa[d] for d in lb] + [sa[d] for d in range(len(sa)) if d not in lb + lc] + \
            [sb[d] for d in range(len(sb)) if d not in rb + rc]
        keep = tuple(s for s, t in zip(sizes, tags) if t is not None)
        tags = [t for t in tags if t is not None]
    perm = tuple(sorted(range(len(tags)), key=tags.__getitem__))
    if perm == tuple(range(len(perm))):
        perm = None
    return ((lc, rc), (lb, rb)), keep, perm


# ---- dot, vdot, inner, outer, tensordot -----------------------------------------------------

def dot(a, b, precision=None, preferred_element_type=None):
    """numpy.dot: scalars multiply; otherwise contract a's last axis with b's only axis
    (1-d b) or second-to-last axis.

    >>> netcl.numpy.dot(netcl.numpy.ones((2, 3)), netcl.numpy.ones(3)).shape
    (2,)
    """
    (a, b), was_bool = _promote_for_product("dot", a, b, check=_dot_check)
    if a.ndim == 0 or b.ndim == 0:
        from .math import multiply
        return _finish(multiply(a, b), was_bool)
    bk = 0 if b.ndim == 1 else b.ndim - 2
    return _finish(dot_general(a, b, (((a.ndim - 1,), (bk,)), ((), ())), precision,
                               _pet(preferred_element_type, "dot")), was_bool)


def _dot_check(sa, sb):
    if sa and sb:
        bk = 0 if len(sb) == 1 else len(sb) - 2
        if sa[-1] != sb[bk]:
            raise ValueError(f"dot: shapes {sa} and {sb} are not aligned: {sa[-1]} (dim "
                             f"{len(sa) - 1}) != {sb[bk]} (dim {bk})")


def _vdot_check(sa, sb):
    if math.prod(sa) != math.prod(sb):
        raise ValueError(f"vdot: operands of shapes {sa} and {sb} have different sizes "
                         f"({math.prod(sa)} and {math.prod(sb)})")


def _inner_check(sa, sb):
    if sa and sb and sa[-1] != sb[-1]:
        raise ValueError(f"inner: last dimensions of shapes {sa} and {sb} differ "
                         f"({sa[-1]} vs {sb[-1]})")


def vdot(a, b, precision=None, preferred_element_type=None):
    """Dot product of the flattened operands, the first conjugated where complex.

    >>> jnp.vdot(jnp.asarray([1j, 2.0]), jnp.asarray([1j, 1.0]))     # 1 + 2 = 3
    """
    (a, b), was_bool = _promote_for_product("vdot", a, b, check=_vdot_check)
    if dtypes.is_complex(a.dtype):
        from ..primitives.complex_ops import conj
        a = conj(a)
    if a.size != b.size:
        raise ValueError(f"vdot: operands of shapes {_shape(a)} and {_shape(b)} have different "
                         f"sizes ({a.size} and {b.size})")
    a1, b1 = views.reshape(a, (a.size,)), views.reshape(b, (b.size,))
    return _finish(dot_general(a1, b1, (((0,), (0,)), ((), ())), precision,
                               _pet(preferred_element_type, "vdot")), was_bool)


def inner(a, b, precision=None, preferred_element_type=None):
    """Contract the last axes of a and b (scalars multiply)."""
    (a, b), was_bool = _promote_for_product("inner", a, b, check=_inner_check)
    if a.ndim == 0 or b.ndim == 0:
        from .math import multiply
        return _finish(multiply(a, b), was_bool)
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: last dimensions of shapes {_shape(a)} and {_shape(b)} differ "
                         f"({a.shape[-1]} vs {b.shape[-1]})")
    return _finish(dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())), precision,
                               _pet(preferred_element_type, "inner")), was_bool)


def outer(a, b, out=None):
    """Outer product of the flattened operands: result[i, j] = a[i] * b[j]."""
    if out is not None:
        raise ValueError("outer: the out argument is not supported (arrays are immutable)")
    from .math import multiply
    (a, b) = promote("outer", a, b)
    return multiply(views.reshape(a, (a.size, 1)), views.reshape(b, (1, b.size)))


def _axes_list(ax, ndim, where, name):
    if isinstance(ax, (int, np.integer)):
        ax = (ax,)
    return tuple(normalize_axis(x, ndim, where, name) for x in ax)


def tensordot(a, b, axes=2, precision=None, preferred_element_type=None):
    """Sum products over the given axes: an int n (a's last n with b's first n) or a pair of
    axis sequences."""
    plan = []
    (a, b), was_bool = _promote_for_product(
        "tensordot", a, b, check=lambda sa, sb: plan.append(_tensordot_axes(sa, sb, axes)))
    ax_a, ax_b = plan[0]
    return _finish(dot_general(a, b, ((ax_a, ax_b), ((), ())), precision,
                               _pet(preferred_element_type, "tensordot")), was_bool)


def _tensordot_axes(sa, sb, axes):
    """(a's axes, b's axes) that tensordot contracts, checked against the shapes."""
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if n < 0 or n > len(sa) or n > len(sb):
            raise ValueError(f"tensordot: axes={n} is invalid for shapes {sa} and {sb}")
        ax_a, ax_b = tuple(range(len(sa) - n, len(sa))), tuple(range(n))
    else:
        try:
            xa, xb = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences, got "
                            f"{axes!r}") from None
        ax_a = _axes_list(xa, len(sa), "tensordot", "axes")
        ax_b = _axes_list(xb, len(sb), "tensordot", "axes")
        if len(ax_a) != len(ax_b):
            raise ValueError(f"tensordot: axes {axes!r} pair {len(ax_a)} axes of a with "
                             f"{len(ax_b)} axes of b")
    for i, j in zip(ax_a, ax_b):
        if sa[i] != sb[j]:
            raise ValueError(f"tensordot: shape mismatch for axes {axes!r}: a of shape {sa} has "
                             f"{sa[i]} on axis {i}, b of shape {sb} has {sb[j]} on axis {j}")
    if len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b):
        raise ValueError(f"tensordot: repeated axes in {axes!r}")
    return ax_a, ax_b


def kron(a, b):
    """Kronecker product: blocks a[i, j, ...] * b."""
    from .math import multiply
    a, b = promote("kron", a, b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + _shape(a)
    sb = (1,) * (nd - b.ndim) + _shape(b)
    a2 = views.reshape(a, tuple(s for d in sa for s in (d, 1)))
    b2 = views.reshape(b, tuple(s for d in sb for s in (1, d)))
    return views.reshape(multiply(a2, b2), tuple(x * y for x, y in zip(sa, sb)))


# ---- einsum ---------------------------------------------------------------------------------

def _sum_axes(x, axes):
    """Sum x over `axes` (reduce_sum where it exists; else a dot_general with ones)."""
    if not axes:
        return x
    axes = tuple(sorted(axes))
    try:
        from ..primitives.reductions import reduce_sum
    except ImportError:
        reduce_sum = None
    if reduce_sum is not None:
        return reduce_sum(x, axes)
    ones = views.full(tuple(x.shape[d] for d in axes), 1, x.dtype)
    return dot_general(x, ones, ((axes, tuple(range(len(axes)))), ((), ())))


def _einsum_error(subscripts, shapes, msg, exc=ValueError):
    return exc(f"einsum: {msg} (subscripts {subscripts!r}, operand shapes "
               f"{', '.join(str(s) for s in shapes)})")


def _parse_term(term, subscripts, shapes):
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise _einsum_error(subscripts, shapes, f"term {term!r} has a malformed ellipsis")
    bad = [c for c in term.replace("...", "") if not (c.isascii() and c.isalpha())]
    if bad:
        raise _einsum_error(subscripts, shapes, f"term {term!r} has invalid characters "
                            f"{''.join(bad)!r}; indices are letters")
    return term


def _einsum_plan(subscripts, shapes):
    """(input index lists, output index list) with ellipses expanded to private names."""
    spec = subscripts.replace(" ", "")
    if spec.count("->") > 1:
        raise _einsum_error(subscripts, shapes, "more than one '->'")
    lhs, arrow, out = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise _einsum_error(subscripts, shapes, f"{len(terms)} input term(s) for "
                            f"{len(shapes)} operand(s)")
    terms = [_parse_term(t, subscripts, shapes) for t in terms]
    n_ell = 0
    for t, s in zip(terms, shapes):
        letters = len(t.replace("...", ""))
        if "..." in t:
            if letters > len(s):
                raise _einsum_error(subscripts, shapes, f"term {t!r} has more indices than "
                                    f"its operand of shape {s} has dimensions")
            n_ell = max(n_ell, len(s) - letters)
        elif letters != len(s):
            raise _einsum_error(subscripts, shapes, f"term {t!r} has {letters} indices but its "
                                f"operand has shape {s}")
    ell = [chr(0x3b1 + i) for i in range(n_ell)]  # Greek letters: never user indices here
    ins = []
    for t, s in zip(terms, shapes):
        head, _, tail = t.partition("...")
        k = len(s) - len(head) - len(tail) if "..." in t else 0
        ins.append(list(head) + ell[n_ell - k:] + list(tail) if "..." in t else list(t))
    for t, idx in zip(terms, ins):
        if len(set(idx)) != len(idx):
            raise _einsum_error(subscripts, shapes, f"term {t!r} repeats an index (traces and "
                                "diagonals) which is not supported")
    if arrow:
        out = _parse_term(out, subscripts, shapes)
        if "..." not in out and n_ell and any(
                shapes[i][j] != 1 for i, idx in enumerate(ins) for j, c in enumerate(idx)
                if c in ell):
            raise _einsum_error(subscripts, shapes, "the output has no '...' but the operands' "
                                "ellipsis dimensions are not all 1")
        head, _, tail = out.partition("...")
        outs = list(head) + (ell if "..." in out else []) + list(tail)
        if len(set(outs)) != len(outs):
            raise _einsum_error(subscripts, shapes, f"output term {out!r} repeats an index")
        known = {c for idx in ins for c in idx}
        missing = [c for c in outs if c not in known]
        if missing:
            raise _einsum_error(subscripts, shapes, f"output index {''.join(missing)!r} does not "
                                "appear in any input")
    else:
        counts = {}
        for idx in ins:
            for c in idx:
                counts[c] = counts.get(c, 0) + 1
        outs = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    return ins, outs


def _einsum_sizes(subscripts, shapes):
    """(input indices, output indices, {index: size}), checked against the shapes: sizes
    are equal, or 1 (broadcast: the size-1 dimension is dropped from its operand)."""
    ins, outs = _einsum_plan(subscripts, list(shapes))
    sizes = {}
    for idx, s in zip(ins, shapes):
        for c, d in zip(idx, s):
            if d != 1:
                if sizes.get(c, d) != d:
                    name = c if c.isascii() else "..."
                    raise _einsum_error(subscripts, list(shapes), f"index {name!r} has sizes "
                                        f"{sizes[c]} and {d}")
                sizes[c] = d
    return ins, outs, sizes


def einsum(subscripts, *operands, out=None, optimize=None, precision=None,
           preferred_element_type=None):
    """Einstein summation over subscripts ('ij,jk->ik', 'bij,bjk->bik', '...ij,...jk->...ik',
    implicit output), lowered to pairwise dot_generals, transposes and sums.
    Repeated indices within one operand (traces, diagonals) are not supported.

    >>> netcl.numpy.einsum('bhqd,bhkd->bhqk', q, k)
    """
    if out is not None:
        raise ValueError("einsum: the out argument is not supported (arrays are immutable)")
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a string, got {type(subscripts).__name__}")
    if not operands:
        raise ValueError(f"einsum: no operands for subscripts {subscripts!r}")
    plan = []
    xs, was_bool = _promote_for_product(
        "einsum", *operands, check=lambda *shapes: plan.append(_einsum_sizes(subscripts, shapes)))
    ins, outs, sizes = plan[0]
    pet = _pet(preferred_element_type, "einsum")
    for i, (x, idx) in enumerate(zip(xs, ins)):
        drop = [j for j, c in enumerate(idx) if x.shape[j] == 1 and sizes.get(c, 1) != 1]
        if drop:
            xs[i] = views.reshape(x, tuple(d for j, d in enumerate(x.shape) if j not in drop))
            ins[i] = [c for j, c in enumerate(idx) if j not in drop]
    for c in outs:  # an output index of size 1 everywhere must survive in some operand
        sizes.setdefault(c, 1)

    def needed_after(k):
        need = set(outs)
        for idx in ins[k:]:
            need.update(idx)
        return need

    def sum_unneeded(x, idx, need):
        axes = [j for j, c in enumerate(idx) if c not in need]
        return _sum_axes(x, axes), [c for c in idx if c in need]

    # Indices that occur in one operand only and not in the output are summed first.
    for i in range(len(xs)):
        need = set(outs)
        for j, idx in enumerate(ins):
            if j != i:
                need.update(idx)
        xs[i], ins[i] = sum_unneeded(xs[i], ins[i], need)

    y, yi = xs[0], ins[0]
    for k in range(1, len(xs)):
        x, xi = xs[k], ins[k]
        need = needed_after(k + 1)
        shared = [c for c in yi if c in xi]
        batch = [c for c in shared if c in need]
        contract = [c for c in shared if c not in need]
        dn = ((tuple(yi.index(c) for c in contract), tuple(xi.index(c) for c in contract)),
              (tuple(yi.index(c) for c in batch), tuple(xi.index(c) for c in batch)))
        last = k == len(xs) - 1
        y = dot_general(y, x, dn, precision, pet if last else None)
        yi = batch + [c for c in yi if c not in xi] + [c for c in xi if c not in yi]
        y, yi = sum_unneeded(y, yi, need)
    if len(xs) == 1 and pet is not None and y.dtype != pet:
        y = ew.convert_element_type(y, pet)
    y, yi = sum_unneeded(y, yi, set(outs))
    # Output indices of size 1 missing from every operand (all were broadcast away).
    for c in outs:
        if c not in yi:
            y = views.reshape(y, _shape(y) + (1,))
            yi = yi + [c]
    y = views.transpose(y, tuple(yi.index(c) for c in outs))
    return _finish(y, was_bool)


# ---- norm -----------------------------------------------------------------------------------

def _reduce(name, x, axes):
    from ..primitives import reductions
    return getattr(reductions, "reduce_" + name)(x, tuple(sorted(axes)))


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 (numpy's name)
    """Vector and matrix norms (numpy.linalg.norm): vector ord None/2, 1, inf, -inf, 0 or any
    p; matrix ord None/'fro', 1, -1, inf, -inf. Integer inputs give float32.

    >>> netcl.numpy.linalg.norm(netcl.numpy.ones(4))   # 2.0
    """
    from ._util import asarray_arg, promote_to_float
    x = asarray_arg(x, "norm")  # converted to float after the checks
    if axis is None:
        if ord is not None and x.ndim not in (1, 2):
            raise ValueError(f"norm: ord={ord!r} needs a 1-d or 2-d array or an explicit axis, "
                             f"got shape {_shape(x)}")
        axes = tuple(range(x.ndim))
        matrix = ord is not None and x.ndim == 2
    else:
        axes = _axes_list(axis, x.ndim, "norm", "axis")
        if len(set(axes)) != len(axes) or len(axes) not in (1, 2):
            raise ValueError(f"norm: axis={axis!r} must name one axis (vector norm) or two "
                             f"distinct axes (matrix norm) of shape {_shape(x)}")
        matrix = len(axes) == 2
    if not (ord is None or isinstance(ord, str) or
            isinstance(ord, (int, float, np.number)) and not isinstance(ord, bool)):
        raise TypeError(f"norm: ord must be None, a number, or 'fro', got {ord!r}")
    if isinstance(ord, str) and (ord != "fro" or not matrix):
        raise ValueError(f"norm: ord={ord!r} is not a {'matrix' if matrix else 'vector'} norm "
                         f"(shape {_shape(x)}, axis {axis!r})")
    if matrix and not (ord is None or ord == "fro" or ord in (1, -1, np.inf, -np.inf)):
        raise ValueError(f"norm: matrix ord={ord!r} is not supported (shape {_shape(x)}, "
                         f"axis {axes}); supported: None, 'fro', 1, -1, inf, -inf")
    (x,) = promote_to_float("norm", x)
    if dtypes.is_complex(x.dtype):     # every norm here is a norm of the magnitudes
        x = ew.abs_(x)
    if ord is None or (ord == "fro" and matrix) or (ord == 2 and not matrix):
        r = ew.sqrt(_sum_squares(x, axes))
    elif matrix:
        r = _matrix_norm(x, ord, axes)
    else:
        r = _vector_norm(x, ord, axes)
    if keepdims:
        r = views.reshape(r, tuple(1 if d in axes else s for d, s in enumerate(x.shape)))
    return r


def _sum_squares(x, axes):
    """sum(x * x) over axes as one dot_general (batch: the other axes)."""
    keep = tuple(d for d in range(x.ndim) if d not in axes)
    return dot_general(x, x, ((tuple(axes), tuple(axes)), (keep, keep)))


def _vector_norm(x, ord, axes):
    if isinstance(ord, str):
        raise ValueError(f"norm: ord={ord!r} is not a vector norm (shape {_shape(x)}, "
                         f"axis {axes})")
    ax = ew.abs_(x)
    if ord == np.inf:
        return _reduce("max", ax, axes)
    if ord == -np.inf:
        return _reduce("min", ax, axes)
    if ord == 1:
        return _sum_axes(ax, axes)
    if ord == 0:
        nz = ew.convert_element_type(ew.ne(x, views.full_like(x, 0)), x.dtype)
        return _sum_axes(nz, axes)
    p = float(ord)
    s = _sum_axes(ew.pow_(ax, views.full_like(ax, p)), axes)
    return ew.pow_(s, views.full_like(s, 1.0 / p))


def _matrix_norm(x, ord, axes):
    r, c = axes
    if ord in (1, -1):
        s = _sum_axes(ew.abs_(x), (r,))           # column sums
        rest = c - (r < c)
        return _reduce("max" if ord == 1 else "min", s, (rest,))
    if ord in (np.inf, -np.inf):
        s = _sum_axes(ew.abs_(x), (c,))           # row sums
        rest = r - (c < r)
        return _reduce("max" if ord == np.inf else "min", s, (rest,))
    raise ValueError(f"norm: matrix ord={ord!r} is not supported (shape {_shape(x)}, axis "
                     f"{axes}); supported: None, 'fro', 1, -1, inf, -inf")
