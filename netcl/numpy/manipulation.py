"""Shape manipulation in netcl.numpy: reshape, transpose, swapaxes, moveaxis, squeeze,
expand_dims, broadcast_to, ravel, flip (all views when eager)."""
import operator

from ..core.shapes import broadcast_shapes, canonical_shape, normalize_axes, normalize_axis, prod
from ..primitives import views
from ._util import asarray_arg

__all__ = ["reshape", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims",
           "broadcast_to", "broadcast_arrays", "broadcast_shapes", "ravel", "flatten", "flip",
           "fliplr", "flipud", "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size"]


def reshape(a, newshape=None, order="C", *, shape=None, copy=None):
    """Give `a` a new shape with the same number of elements; one entry may be -1. `copy`
    is accepted and unused, as in JAX (arrays are immutable: a view and a copy are alike).

    >>> netcl.numpy.reshape(netcl.numpy.arange(6), (2, -1)).shape
    (2, 3)
    """
    a = asarray_arg(a, "reshape")
    newshape = shape if newshape is None else newshape
    if order != "C":
        raise ValueError("reshape: only order='C' is supported")
    if isinstance(newshape, int) or hasattr(newshape, "__index__"):
        newshape = (newshape,)
    try:
        newshape = tuple(operator.index(s) for s in newshape)
    except TypeError:
        raise TypeError(f"reshape: new shape must be ints, got {newshape!r}") from None
    if newshape.count(-1) > 1:
        raise ValueError(f"reshape: only one dimension can be -1, got {newshape}")
    if -1 in newshape:
        known = prod(s for s in newshape if s != -1)
        if known == 0 or a.size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {a.shape} "
                             f"({a.size} elements) into shape {newshape}")
        newshape = tuple(a.size // known if s == -1 else s for s in newshape)
    if any(s < 0 for s in newshape):
        raise ValueError(f"reshape: negative dimension in {newshape}")
    return views.reshape(a, newshape)


def transpose(a, axes=None):
    """Permute the axes (reverse them when axes is None)."""
    a = asarray_arg(a, "transpose")
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    if not isinstance(axes, (tuple, list)):
        raise TypeError(f"transpose: axes must be None or a sequence of ints, got "
                        f"{type(axes).__name__} {axes!r}")
    axes = tuple(normalize_axis(ax, a.ndim, "transpose", "axes") for ax in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the axes of an "
                         f"array of shape {a.shape}")
    return views.transpose(a, axes)


def swapaxes(a, axis1, axis2):
    a = asarray_arg(a, "swapaxes")
    i = normalize_axis(axis1, a.ndim, "swapaxes", "axis1")
    j = normalize_axis(axis2, a.ndim, "swapaxes", "axis2")
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return views.transpose(a, tuple(perm))


def _axis_list(v, arg):
    if isinstance(v, (tuple, list)):
        return list(v)
    if hasattr(v, "__index__"):
        return [v]
    raise TypeError(f"moveaxis: {arg} must be an int or a sequence of ints, got "
                    f"{type(v).__name__} {v!r}")


def moveaxis(a, source, destination):
    """Move axes of `a` to new positions; the others keep their order."""
    a = asarray_arg(a, "moveaxis")
    src, dst = _axis_list(source, "source"), _axis_list(destination, "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} differ "
                         "in length")
    src = [normalize_axis(s, a.ndim, "moveaxis", "source") for s in src]
    dst = [normalize_axis(d, a.ndim, "moveaxis", "destination") for d in dst]
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return views.transpose(a, tuple(order))


def squeeze(a, axis=None):
    a = asarray_arg(a, "squeeze")
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = normalize_axes(axis, a.ndim, "squeeze")
        for ax in axes:
            if a.shape[ax] != 1:
                raise ValueError(f"squeeze: cannot select an axis to squeeze out which has "
                                 f"size not equal to one: axis {ax} of shape {a.shape}")
    return views.reshape(a, tuple(s for i, s in enumerate(a.shape) if i not in axes))


def expand_dims(a, axis):
    a = asarray_arg(a, "expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return views.expand_dims(a, tuple(axes))


def broadcast_to(array, shape):
    """Broadcast to `shape` with NumPy rules (eagerly a view)."""
    a = asarray_arg(array, "broadcast_to")
    shape = canonical_shape(shape, "broadcast_to")
    if len(shape) < a.ndim or broadcast_shapes(a.shape, shape, where="broadcast_to") != shape:
        raise ValueError(f"broadcast_to: cannot broadcast an array of shape {a.shape} to {shape}")
    return views.broadcast_to_rank(a, shape)


def broadcast_arrays(*args):
    xs = [asarray_arg(a, "broadcast_arrays") for a in args]
    shape = broadcast_shapes(*(x.shape for x in xs), where="broadcast_arrays")
    return [views.broadcast_to_rank(x, shape) for x in xs]


def ravel(a, order="C"):
    a = asarray_arg(a, "ravel")
    return views.reshape(a, (a.size,))


flatten = ravel


def flip(m, axis=None):
    m = asarray_arg(m, "flip")
    return views.rev(m, normalize_axes(axis, m.ndim, "flip"))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if asarray_arg(a, "atleast_1d").ndim == 0 else asarray_arg(a, "")
           for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray_arg(a, "atleast_2d")
        out.append(a if a.ndim >= 2 else reshape(a, (1,) * (2 - a.ndim) + a.shape))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray_arg(a, "atleast_3d")
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def shape(a):
    return tuple(asarray_arg(a, "shape").shape)


def ndim(a):
    return asarray_arg(a, "ndim").ndim


def size(a, axis=None):
    a = asarray_arg(a, "size")
    return a.size if axis is None else a.shape[normalize_axis(axis, a.ndim, "size")]
