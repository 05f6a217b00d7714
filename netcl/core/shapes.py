"""Shape arithmetic shared by primitives and the numpy layer, with error messages that name
the function, the argument and the shapes involved."""
import operator


def prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def contiguous_strides(shape):
    """Row-major strides, in elements."""
    strides = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= shape[i]
    return tuple(strides)


def canonical_shape(shape, where, arg="shape"):
    """Turn an int or sequence of ints into a tuple of non-negative ints, or raise."""
    if isinstance(shape, int) or hasattr(shape, "__index__") and not hasattr(shape, "__len__"):
        shape = (shape,)
    try:
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a sequence of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"{where}: {arg} has a negative dimension: {out}")
    return out


def normalize_axis(axis, ndim, where, arg="axis"):
    """One axis in [-ndim, ndim) -> [0, ndim), or a ValueError naming the shape's rank."""
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be an int, got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{where}: {arg}={axis} is out of bounds for an array of rank {ndim}")
    return a % ndim if ndim else 0


def normalize_axes(axes, ndim, where, arg="axis"):
    """None (all axes), an int, or a sequence of ints -> sorted tuple of distinct axes."""
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, (list, tuple)):
        out = tuple(normalize_axis(a, ndim, where, arg) for a in axes)
    else:
        out = (normalize_axis(axes, ndim, where, arg),)
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: {arg}={axes} has repeated axes")
    return tuple(sorted(out))


class IncompatibleShapesError(TypeError, ValueError):
    """Shapes that do not broadcast: a TypeError as JAX raises for its operations, and a
    ValueError as NumPy's broadcasting raises."""


def broadcast_shapes(*shapes, where="broadcast_shapes"):
    """NumPy broadcasting of shapes, or an IncompatibleShapesError listing them all."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, ndim - len(s)):
            if d == out[i] or d == 1:
                continue
            if out[i] == 1:
                out[i] = d
            else:
                raise IncompatibleShapesError(
                    f"{where} got incompatible shapes for broadcasting: "
                    f"{', '.join(str(tuple(x)) for x in shapes)}")
    return tuple(out)
