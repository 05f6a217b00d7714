"""jax.lax's convolution helpers: `conv_general_dilated_patches` (a grouped convolution
with an identity kernel) and the shape functions `conv_shape_tuple`,
`conv_general_shape_tuple`, `reduce_window_shape_tuple`. Exported by netcl.lax (through
lax_extras).

>>> netcl.lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME")  # (1, 4, 8, 8)
"""
import numpy as np

from . import numpy as jnp
from .core import dtypes
from .lax_extras_util import arr as _arr, ints as _ints, pairs as _pairs

__all__ = ["conv_general_dilated_patches", "conv_shape_tuple", "conv_general_shape_tuple",
           "reduce_window_shape_tuple"]


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution with a window of `filter_shape` reads: output features are
    the input's channels times the window's positions (channel major), as
    jax.lax.conv_general_dilated_patches (a grouped convolution with an identity kernel).

    >>> netcl.lax.conv_general_dilated_patches(jnp.ones((1, 3, 8, 8)), (2, 2), (1, 1),
    ...                                        "VALID").shape     # (1, 12, 7, 7)
    """
    from . import lax as _lax
    x = _arr(lhs, "conv_general_dilated_patches", "lhs")
    if dtypes.kind(x.dtype) != "f":
        raise TypeError(f"conv_general_dilated_patches: lhs must be a float array, got "
                        f"{x.dtype}")
    filter_shape = _ints(filter_shape, "conv_general_dilated_patches", "filter_shape")
    _ints(window_strides, "conv_general_dilated_patches", "window_strides")
    if not isinstance(padding, str):
        _pairs(padding, len(filter_shape), "conv_general_dilated_patches")
    if len(filter_shape) != x.ndim - 2:
        raise ValueError(f"conv_general_dilated_patches: filter_shape {filter_shape} must have "
                         f"{x.ndim - 2} spatial entries for lhs of shape {tuple(x.shape)}")
    dn = _lax.conv_dimension_numbers(x.shape, (1, 1) + filter_shape, dimension_numbers)
    lhs_spec, rhs_spec, _ = dn
    k = int(np.prod(filter_shape, dtype=np.int64))
    c = x.shape[lhs_spec[1]]
    eye = np.eye(k, dtype=np.float64).reshape((1, k, k))
    rhs = np.broadcast_to(eye, (c, k, k)).reshape((c * k, 1) + filter_shape)
    # rhs is in OIHW... order; put it in the layout rhs_spec names
    perm = [0] * rhs.ndim
    for i, d in enumerate(rhs_spec):
        perm[d] = i
    rhs = np.transpose(rhs, perm)
    w = jnp.asarray(rhs.astype(np.dtype(x.dtype) if x.dtype != dtypes.bfloat16 else np.float32),
                    dtype=x.dtype)
    return _lax.conv_general_dilated(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                                     dn, feature_group_count=c, precision=precision,
                                     preferred_element_type=preferred_element_type)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape (N, O, spatial...) of a convolution of NC... `lhs_shape` with
    OI... `rhs_shape`, as jax.lax.conv_shape_tuple.

    >>> netcl.lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME")  # (1, 4, 8, 8)
    """
    from . import lax as _lax
    where = "conv_shape_tuple"
    lhs_shape = _ints(lhs_shape, where, "lhs_shape")
    if len(lhs_shape) < 2:
        raise ValueError(f"{where}: lhs_shape {lhs_shape} needs batch and feature dimensions")
    rhs_shape = _ints(rhs_shape, where, "rhs_shape", len(lhs_shape))
    strides = _ints(strides, where, "strides", len(lhs_shape) - 2)
    if isinstance(pads, str):
        pads = _lax.padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    pads = _pairs(pads, len(lhs_shape) - 2, where)
    if any(st < 1 for st in strides) or isinstance(batch_group_count, bool) or \
            not isinstance(batch_group_count, (int, np.integer)) or batch_group_count < 1:
        raise ValueError(f"{where}: strides {strides} and batch_group_count "
                         f"{batch_group_count!r} must be positive ints")
    padded = np.add(lhs_shape[2:], np.sum(np.array(pads).reshape(-1, 2), axis=1))
    if np.any(padded < 0):
        raise ValueError(f"conv_shape_tuple: negative padded spatial sizes {padded.tolist()}")
    out = np.maximum(0, np.floor_divide(np.subtract(padded, rhs_shape[2:]), strides) + 1)
    n = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (int(n), int(rhs_shape[0])) + tuple(int(s) for s in out)


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """conv_shape_tuple for layouts given by `dimension_numbers`, as
    jax.lax.conv_general_shape_tuple.

    >>> netcl.lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (1, 1), "SAME",
    ...                                    ("NHWC", "HWIO", "NHWC"))    # (1, 8, 8, 4)
    """
    from . import lax as _lax
    where = "conv_general_shape_tuple"
    lhs_shape = _ints(lhs_shape, where, "lhs_shape")
    rhs_shape = _ints(rhs_shape, where, "rhs_shape", len(lhs_shape))
    dn = _lax.conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_perm, rhs_perm, out_perm = dn
    lhs_t = tuple(lhs_shape[i] for i in lhs_perm)
    rhs_t = tuple(rhs_shape[i] for i in rhs_perm)
    out = conv_shape_tuple(lhs_t, rhs_t, window_strides, padding)
    res = [0] * len(out)
    for i, d in enumerate(out_perm):
        res[d] = out[i]
    return tuple(res)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of reduce_window, as jax.lax.reduce_window_shape_tuple (`padding`:
    pairs per dimension).

    >>> netcl.lax.reduce_window_shape_tuple((8, 8), (2, 2), (2, 2), ((0, 0), (0, 0)))  # (4, 4)
    """
    where = "reduce_window_shape_tuple"
    operand_shape = _ints(operand_shape, where, "operand_shape")
    n = len(operand_shape)
    window_dimensions = _ints(window_dimensions, where, "window_dimensions", n)
    window_strides = _ints(window_strides, where, "window_strides", n)
    base = (1,) * n if base_dilation is None else _ints(base_dilation, where, "base_dilation", n)
    wdil = (1,) * n if window_dilation is None else _ints(window_dilation, where,
                                                          "window_dilation", n)
    if isinstance(padding, str):
        raise TypeError(f"{where}: padding must be (low, high) pairs; use "
                        "netcl.lax.padtype_to_pads for 'SAME'/'VALID'")
    padding = _pairs(padding, n, where)
    if any(v < 1 for v in window_dimensions + window_strides + base + wdil):
        raise ValueError(f"{where}: window dimensions, strides and dilations must be positive")
    out = []
    for s, w, st, (lo, hi), b, wd in zip(operand_shape, window_dimensions, window_strides,
                                          padding, base, wdil):
        size = (s - 1) * b + 1 + lo + hi if s else lo + hi
        win = (w - 1) * wd + 1
        out.append(max(0, (size - win) // st + 1) if size >= win else 0)
    return tuple(out)
