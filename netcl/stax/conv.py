"""Convolution, transposed convolution and pooling layers (stax's shapes and defaults).

Layouts are named by ``dimension_numbers`` strings, as in stax: ``(lhs, rhs, out)`` such as
``('NHWC', 'HWIO', 'NHWC')`` (``Conv``'s default) or ``('NCHW', 'OIHW', 'NCHW')``.
``filter_shape``, ``strides``, explicit ``padding`` pairs and ``rhs_dilation`` list the
spatial dimensions in the order they appear in the kernel layout (rhs), as lax does.
"""
import functools
import math

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from .. import random
from ..primitives import conv as lax_conv
from ._core import (add_bias, as_shape, dilate, int_tuple, padding_arg, positive_int,
                    same_pads, shape_of, stateless, window_out_size)
from .initializers import glorot_normal, normal

__all__ = ["GeneralConv", "Conv", "Conv1D", "Conv3D", "GeneralConvTranspose", "ConvTranspose",
           "Conv1DTranspose", "MaxPool", "SumPool", "AvgPool"]


def _dimension_numbers(dn, where):
    if not (isinstance(dn, (tuple, list)) and len(dn) == 3 and all(isinstance(s, str)
                                                                    for s in dn)):
        raise TypeError(f"{where}: dimension_numbers must be three layout strings such as "
                        f"('NHWC', 'HWIO', 'NHWC'), got {dn!r}")
    lhs, rhs, out = dn
    for s, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if len(s) != len(lhs) or any(s.count(c) != 1 for c in pair) or len(set(s)) != len(s):
            raise ValueError(f"{where}: invalid dimension_numbers {tuple(dn)}: each layout "
                             "needs the same rank, 'N'/'C' (input, output) or 'O'/'I' "
                             "(kernel) exactly once, and no repeated letters")
    spatial = [c for c in rhs if c not in "OI"]
    if set(spatial) != set(lhs) - set("NC") or set(spatial) != set(out) - set("NC"):
        raise ValueError(f"{where}: dimension_numbers {tuple(dn)} must name the same spatial "
                         "letters in all three layouts")
    if not spatial:
        raise ValueError(f"{where}: dimension_numbers {tuple(dn)} have no spatial dimension")
    return lhs, rhs, out, spatial


def _conv_common(where, dimension_numbers, out_chan, filter_shape, strides, padding,
                 rhs_dilation, allowed_padding):
    lhs, rhs, out, spatial = _dimension_numbers(dimension_numbers, where)
    out_chan = positive_int(out_chan, "out_chan", where)
    nsp = len(spatial)
    filter_shape = int_tuple(filter_shape, nsp, "filter_shape", where)
    strides = int_tuple(1 if strides is None else strides, nsp, "strides", where)
    rhs_dilation = int_tuple(1 if rhs_dilation is None else rhs_dilation, nsp, "rhs_dilation",
                             where)
    padding = padding_arg(padding, nsp, where, allowed_padding)
    return lhs, rhs, out, spatial, out_chan, filter_shape, strides, rhs_dilation, padding


def _check_input(where, shape, lhs, groups, in_chan=None, what="input_shape"):
    if len(shape) != len(lhs):
        raise ValueError(f"{where}: {what} {shape} has rank {len(shape)}, but the layout "
                         f"{lhs!r} needs rank {len(lhs)}")
    c = shape[lhs.index("C")]
    if c <= 0 or c % groups:
        raise ValueError(f"{where}: {what} {shape} has {c} channels (dimension "
                         f"{lhs.index('C')} of layout {lhs!r}), which must be positive and "
                         f"divisible by feature_group_count={groups}")
    if in_chan is not None and c // groups != in_chan:
        raise ValueError(f"{where}: {what} {shape} has {c} channels (dimension "
                         f"{lhs.index('C')} of layout {lhs!r}) but the kernel expects "
                         f"{in_chan * groups} ({in_chan} per group x {groups} groups)")
    return c


def _kernel_shape(rhs, out_chan, in_chan, filter_shape):
    it = iter(filter_shape)
    return tuple(out_chan if c == "O" else in_chan if c == "I" else next(it) for c in rhs)


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6), rhs_dilation=None, feature_group_count=1):
    """A convolution layer in any layout (stax's GeneralConv, plus rhs_dilation and groups).

    params: ``(W, b)``: W in the rhs layout with O = out_chan and I = in_chan /
    feature_group_count; b of shape 1 everywhere but out_chan at 'C' of the out layout.
    padding: 'SAME', 'SAME_LOWER', 'VALID' or one (low, high) pair per spatial dimension.
    W_init defaults to glorot_normal over the kernel's I and O axes (stax's default).
    """
    where = "GeneralConv" if dimension_numbers != ("NHWC", "HWIO", "NHWC") else "Conv"
    (lhs, rhs, out, spatial, out_chan, filter_shape, strides, rhs_dilation,
     padding) = _conv_common(where, dimension_numbers, out_chan, filter_shape, strides,
                             padding, rhs_dilation, ("SAME", "SAME_LOWER", "VALID"))
    groups = positive_int(feature_group_count, "feature_group_count", where)
    if out_chan % groups:
        raise ValueError(f"{where}: out_chan={out_chan} must be divisible by "
                         f"feature_group_count={groups}")
    W_init = W_init or glorot_normal(rhs.index("I"), rhs.index("O"))
    dn = (lhs, rhs, out)

    def init_fun(rng, input_shape):
        input_shape = as_shape(input_shape, where)
        c = _check_input(where, input_shape, lhs, groups)
        kernel_shape = _kernel_shape(rhs, out_chan, c // groups, filter_shape)
        out_shape = [0] * len(out)
        out_shape[out.index("N")] = input_shape[lhs.index("N")]
        out_shape[out.index("C")] = out_chan
        for i, (d, k, s, r) in enumerate(zip(spatial, filter_shape, strides, rhs_dilation)):
            pad = padding if isinstance(padding, str) else padding[i]
            out_shape[out.index(d)] = window_out_size(input_shape[lhs.index(d)], dilate(k, r),
                                                      s, pad, where)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out)
        k1, k2 = random.split(rng)
        return tuple(out_shape), (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        xs, ws = shape_of(inputs), shape_of(W)
        if len(ws) != len(rhs):
            raise ValueError(f"{where}: kernel W of shape {ws} does not match layout {rhs!r}")
        _check_input(where, xs, lhs, groups, ws[rhs.index("I")], what="inputs of shape")
        y = lax_conv.conv_general_dilated(inputs, W, strides, padding,
                                          rhs_dilation=rhs_dilation, dimension_numbers=dn,
                                          feature_group_count=groups)
        return add_bias(y, b)
    return stateless(init_fun, apply_fun)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv.__doc__ = "GeneralConv with stax's layout ('NHWC', 'HWIO', 'NHWC')."
Conv1D = functools.partial(GeneralConv, ("NWC", "WIO", "NWC"))
Conv3D = functools.partial(GeneralConv, ("NDHWC", "DHWIO", "NDHWC"))


def _transpose_out_size(n, k, s, pad):
    if n < 0:
        return -1
    if pad == "SAME":
        return n * s
    if pad == "VALID":
        return n * s + max(k - s, 0)
    lo, hi = pad
    return max(0, dilate(n, s) + lo + hi - k + 1)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6), rhs_dilation=None):
    """A transposed (fractionally strided) convolution layer, as stax's, via
    lax.conv_transpose: 'SAME' gives spatial size n * stride, 'VALID' n * stride +
    max(k - stride, 0); explicit pairs pad the stride-dilated input directly.

    params: ``(W, b)``: W in the rhs layout with I = in_chan and O = out_chan.
    """
    where = ("ConvTranspose" if dimension_numbers == ("NHWC", "HWIO", "NHWC")
             else "GeneralConvTranspose")
    (lhs, rhs, out, spatial, out_chan, filter_shape, strides, rhs_dilation,
     padding) = _conv_common(where, dimension_numbers, out_chan, filter_shape, strides,
                             padding, rhs_dilation, ("SAME", "VALID"))
    W_init = W_init or glorot_normal(rhs.index("I"), rhs.index("O"))
    dn = (lhs, rhs, out)

    def init_fun(rng, input_shape):
        input_shape = as_shape(input_shape, where)
        c = _check_input(where, input_shape, lhs, 1)
        kernel_shape = _kernel_shape(rhs, out_chan, c, filter_shape)
        out_shape = [0] * len(out)
        out_shape[out.index("N")] = input_shape[lhs.index("N")]
        out_shape[out.index("C")] = out_chan
        for i, (d, k, s, r) in enumerate(zip(spatial, filter_shape, strides, rhs_dilation)):
            pad = padding if isinstance(padding, str) else padding[i]
            out_shape[out.index(d)] = _transpose_out_size(input_shape[lhs.index(d)],
                                                          dilate(k, r), s, pad)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out)
        k1, k2 = random.split(rng)
        return tuple(out_shape), (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        xs, ws = shape_of(inputs), shape_of(W)
        if len(ws) != len(rhs):
            raise ValueError(f"{where}: kernel W of shape {ws} does not match layout {rhs!r}")
        _check_input(where, xs, lhs, 1, ws[rhs.index("I")], what="inputs of shape")
        y = lax_conv.conv_transpose(inputs, W, strides, padding, rhs_dilation=rhs_dilation,
                                    dimension_numbers=dn)
        return add_bias(y, b)
    return stateless(init_fun, apply_fun)


ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
ConvTranspose.__doc__ = "GeneralConvTranspose with layout ('NHWC', 'HWIO', 'NHWC')."
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))


# ---- pooling ---------------------------------------------------------------------------------

def _pool_counts(in_spatial, window, strides, pads):
    """Per output position, how many window elements fall inside the input (host NumPy)."""
    counts = np.ones((), np.float64)
    for n, k, s, (lo, hi) in zip(in_spatial, window, strides, pads):
        o = window_out_size(n, k, s, (lo, hi), "pool")
        start = np.arange(o) * s - lo
        c = np.minimum(start + k, n) - np.maximum(start, 0)
        counts = np.multiply.outer(counts, c)
    return counts


def _pooling_layer(name, kind):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        nsp = len(window_shape) if hasattr(window_shape, "__len__") else -1
        if nsp <= 0:
            raise TypeError(f"{name}: window_shape must be a non-empty tuple of spatial window "
                            f"sizes, got {window_shape!r}")
        window = int_tuple(window_shape, nsp, "window_shape", name)
        strides_ = int_tuple(1 if strides is None else strides, nsp, "strides", name)
        pad = padding_arg(padding, nsp, name)
        if spec is None:
            rank = nsp + 2
            n_ax, c_ax = 0, rank - 1
        else:
            if not isinstance(spec, str) or len(spec) != nsp + 2 or spec.count("N") != 1 \
                    or spec.count("C") != 1:
                raise ValueError(f"{name}: spec={spec!r} must be a layout string of rank "
                                 f"{nsp + 2} with one 'N' and one 'C' (e.g. 'NCHW')")
            rank = nsp + 2
            n_ax, c_ax = spec.index("N"), spec.index("C")
        sp_axes = [i for i in range(rank) if i not in (n_ax, c_ax)]

        def full(values, fill):
            out = [fill] * rank
            for a, v in zip(sp_axes, values):
                out[a] = v
            return tuple(out)
        full_window, full_strides = full(window, 1), full(strides_, 1)

        def explicit_pads(shape):
            sp = [shape[a] for a in sp_axes]
            if isinstance(pad, str):
                if pad == "VALID":
                    return [(0, 0)] * nsp
                return [same_pads(n, k, s, pad) for n, k, s in zip(sp, window, strides_)]
            return list(pad)

        def check(shape, what):
            if len(shape) != rank:
                raise ValueError(f"{name}: {what} {shape} has rank {len(shape)}, but a "
                                 f"{nsp}-d window {window} with layout "
                                 f"{spec or 'N...C'!r} needs rank {rank}")

        def init_fun(rng, input_shape):
            input_shape = as_shape(input_shape, name)
            check(input_shape, "input_shape")
            pads = explicit_pads(input_shape)
            out = list(input_shape)
            for a, k, s, p in zip(sp_axes, window, strides_, pads):
                out[a] = window_out_size(input_shape[a], k, s, p, name)
            return tuple(out), ()

        def apply_fun(params, inputs, **kwargs):
            xs = shape_of(inputs)
            check(xs, "inputs of shape")
            pads = explicit_pads(xs)
            full_pads = full(pads, (0, 0))
            if kind == "max":
                return lax_conv.reduce_window_max(inputs, full_window, full_strides, full_pads)
            y = lax_conv.reduce_window_sum(inputs, full_window, full_strides, full_pads)
            if kind == "sum":
                return y
            if all(p == (0, 0) for p in pads):
                return jnp.divide(y, float(math.prod(window)))
            counts = _pool_counts([xs[a] for a in sp_axes], window, strides_, pads)
            bshape = full(counts.shape, 1)
            dt = y.dtype if dtypes.kind(y.dtype) == "f" else np.float32
            return jnp.divide(y, jnp.asarray(counts.reshape(bshape).astype(dt)))
        return stateless(init_fun, apply_fun)

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    PoolingLayer.__doc__ = (
        f"{name}(window_shape, strides=None, padding='VALID', spec=None): {kind} pooling over "
        "the spatial dims (stax's signature).\n\n"
        "window_shape / strides list the spatial dims only; the batch and channel axes are "
        "taken from `spec` (e.g. 'NCHW'), by default N first and C last (NHWC). padding: "
        "'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs per spatial dim." +
        ("\nAverages count only the elements inside the input (padding is excluded), as stax."
         if kind == "avg" else ""))
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", "max")
SumPool = _pooling_layer("SumPool", "sum")
AvgPool = _pooling_layer("AvgPool", "avg")
