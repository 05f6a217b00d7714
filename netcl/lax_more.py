"""The rest of jax.lax that programs reach for, built from netcl operations (so grad, jit and
vmap go through it): `approx_max_k`/`approx_min_k` (exact top-k, as JAX computes them off
TPU, with the output size JAX gives for aggregate_to_topk=False), `empty`, `stack`,
`unstack`, `broadcast_like`, `dtype`, `scatter_sub` and `scatter_apply` (netcl's scatter
signature: operand, indices, updates, axis, batch_dims; netcl.lax's public ones take JAX's
dimension numbers too: lax_gather_scatter.py), convolution helpers
(`conv_general_permutations`, `conv_transpose_shape_tuple`, `conv_general_dilated_local`),
`with_sharding_constraint` (places concrete values; traced ones pass through),
`platform_dependent`, `composite`, the collectives `pswapaxes`, `pshuffle`, `pcast` and
`pbroadcast`, and JAX's records and enums
(`GatherDimensionNumbers`, `ScatterDimensionNumbers`, `GatherScatterMode`, `RoundingMethod`,
`RandomAlgorithm`, the typing aliases).

>>> netcl.lax.approx_max_k(jnp.array([1.0, 4.0, 2.0]), 2)       # ([4., 2.], [1, 2])
"""
import enum
import functools
import math
from typing import NamedTuple, Sequence, Tuple, Union

import numpy as np

from . import numpy as jnp
from .core import dtypes
from .core.array import Array
from .core.tracing import Tracer
from .lax_extras_util import arr as _arr, ints as _ints
from .numpy._composite_util import int_arg as _int
from .numpy._errors import rename_error, wrap_namespace
from .tree_util import tree_flatten, tree_map

__all__ = ["approx_max_k", "approx_min_k", "empty", "stack", "unstack", "broadcast_like",
           "dtype", "scatter_sub", "scatter_apply", "GatherDimensionNumbers",
           "ScatterDimensionNumbers", "GatherScatterMode", "RoundingMethod", "RandomAlgorithm",
           "DotDimensionNumbers", "ConvGeneralDilatedDimensionNumbers", "PrecisionLike",
           "conv_general_permutations", "conv_transpose_shape_tuple",
           "conv_general_dilated_local", "with_sharding_constraint", "platform_dependent",
           "composite", "pswapaxes", "pshuffle", "pcast", "pbroadcast", "log2",
           "one_minus_square"]


# ---- records, enums and typing aliases (as jax.lax defines them) ------------------------------

class GatherDimensionNumbers(NamedTuple):
    """jax.lax.GatherDimensionNumbers: netcl.lax.gather takes it (JAX's form, with
    slice_sizes), beside netcl's axis/batch_dims form (lax_gather_scatter.py)."""
    offset_dims: Tuple[int, ...]
    collapsed_slice_dims: Tuple[int, ...]
    start_index_map: Tuple[int, ...]
    operand_batching_dims: Tuple[int, ...] = ()
    start_indices_batching_dims: Tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """jax.lax.ScatterDimensionNumbers: netcl's scatter family takes it (JAX's form), beside
    netcl's axis/batch_dims form (lax_gather_scatter.py)."""
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """jax.lax.GatherScatterMode: how out-of-bounds indices are handled in JAX's form of
    gather and scatter (netcl's axis form clamps, CLIP; jnp indexing follows the mode= it
    is given). ONE_HOT is named, not implemented."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        """A mode from a GatherScatterMode, 'clip', 'fill'/'drop'/None, 'promise_in_bounds'
        or 'one_hot', as JAX's."""
        if isinstance(s, GatherScatterMode):
            return s
        named = {"clip": "CLIP", None: "FILL_OR_DROP", "fill": "FILL_OR_DROP",
                 "drop": "FILL_OR_DROP", "promise_in_bounds": "PROMISE_IN_BOUNDS",
                 "one_hot": "ONE_HOT"}
        if not isinstance(s, (str, type(None))) or s not in named:
            raise ValueError(f'GatherScatterMode.from_any: unknown gather mode "{s}"')
        return GatherScatterMode[named[s]]


class RoundingMethod(enum.IntEnum):
    """jax.lax.RoundingMethod, for netcl.lax.round's rounding_method."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


class RandomAlgorithm(enum.IntEnum):
    """jax.lax.RandomAlgorithm, for rng_bit_generator (netcl draws threefry bits for each)."""
    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2


# (lax.py imports this module last, so its Precision exists by now)
from .lax import Precision  # noqa: E402
from .primitives.conv import ConvDimensionNumbers  # noqa: E402

DotDimensionNumbers = Tuple[Tuple[Sequence[int], Sequence[int]],
                            Tuple[Sequence[int], Sequence[int]]]
ConvGeneralDilatedDimensionNumbers = Union[Tuple[str, str, str], ConvDimensionNumbers, None]
PrecisionLike = Union[None, str, Precision, Tuple[str, str], Tuple[Precision, Precision]]


def _shape(shape, where):
    shape = _ints(shape, where, "shape")
    if any(d < 0 for d in shape):
        raise ValueError(f"{where}: shape {shape} has a negative dimension")
    return shape


# ---- top-k, creation, shapes ------------------------------------------------------------------

def _approx_output_size(n, rank, k, recall, aggregate, override, where):
    """XLA's ApproxTopKReductionOutputSize: the reduced length JAX's abstract eval gives."""
    if aggregate:
        return k
    tiling = 1024 if rank == 1 else 128
    if n <= tiling:
        return n
    if override >= 0 and n > override:
        raise ValueError(f"{where}: reduction_input_size_override ({override}) must be at "
                         f"least the reduced dimension's size ({n})")
    logical = override if override >= 0 else n
    if k == 1:
        return tiling
    if recall == 1.0:
        return n
    m = min(max(int((1.0 - k) / math.log(recall)), tiling), n)
    log2_red = (logical // m).bit_length() - 1 if logical // m else 0
    if log2_red == 0:
        return n
    log2_red = min(log2_red, ((n // tiling) - 1).bit_length() if n // tiling else 0)
    chunks = -(-n // tiling)                     # (ceiling divisions, as XLA's CeilOfRatio)
    return -(-chunks // (1 << log2_red)) * tiling


def _approx_k(operand, k, reduction_dimension, recall_target, override, aggregate, largest,
              where):
    from .lax import top_k
    x = _arr(operand, where)
    if x.ndim == 0:
        raise TypeError(f"{where}: operand must have at least one dimension, got a scalar")
    if not dtypes.is_float(x.dtype):
        raise ValueError(f"{where}: operand must be a floating type, got {x.dtype}")
    k = _int(k, where, "k")
    if k <= 0:
        raise ValueError(f"{where}: k must be positive, got {k}")
    d = _int(reduction_dimension, where, "reduction_dimension")
    if not -x.ndim <= d < x.ndim:
        raise ValueError(f"{where}: reduction_dimension={d} is out of range for rank {x.ndim}")
    d %= x.ndim
    if x.shape[d] < k:
        raise ValueError(f"{where}: k ({k}) must not exceed the size of the reduction "
                         f"dimension ({x.shape[d]})")
    if isinstance(recall_target, (bool, str)) or not isinstance(
            recall_target, (int, float, np.floating, np.integer)) or \
            not 0 < float(recall_target) <= 1:
        raise ValueError(f"{where}: recall_target must be a number in (0, 1], got "
                         f"{recall_target!r}")
    size = _approx_output_size(x.shape[d], x.ndim, k, float(recall_target), bool(aggregate),
                               _int(override, where, "reduction_input_size_override"),
                               where)
    v = jnp.moveaxis(x, d, -1)
    vals, idx = top_k(v if largest else -v, size)
    return jnp.moveaxis(vals if largest else -vals, -1, d), jnp.moveaxis(idx, -1, d)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """(values, int32 indices) of the k largest entries along reduction_dimension, largest
    first, as jax.lax.approx_max_k computes them off TPU (exactly). With
    aggregate_to_topk=False the output keeps the length JAX's abstract eval gives (the
    leading entries of the full sort).

    >>> netcl.lax.approx_max_k(jnp.array([[3.0, 1.0, 2.0]]), 2)    # ([[3., 2.]], [[0, 2]])
    """
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True, "approx_max_k")


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """(values, int32 indices) of the k smallest entries, smallest first, as
    jax.lax.approx_min_k off TPU (NaN sorts first here, as the smallest of -x's top_k).

    >>> netcl.lax.approx_min_k(jnp.array([3.0, 1.0, 2.0]), 2)     # ([1., 2.], [1, 2])
    """
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False, "approx_min_k")


def log2(x, accuracy=None):
    """Elementwise base-2 logarithm (jax.lax.log2, JAX 0.11).

    >>> netcl.lax.log2(jnp.array([1.0, 8.0]))      # [0., 3.]
    """
    x = _arr(x, "log2", "x")
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        raise TypeError(f"log2: x must be floating or complex, got {x.dtype}")
    return jnp.log2(x)


def one_minus_square(x, accuracy=None):
    """1 - x * x elementwise (jax.lax.one_minus_square, JAX 0.11: tanh's derivative).

    >>> netcl.lax.one_minus_square(jnp.array([0.5, 2.0]))      # [0.75, -3.]
    """
    x = _arr(x, "one_minus_square", "x")
    if not (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        raise TypeError(f"one_minus_square: x must be floating or complex, got {x.dtype}")
    return 1 - x * x


def empty(shape, dtype=None, *, out_sharding=None):
    """An array of `shape` and `dtype` whose values are unspecified (netcl gives zeros, as
    JAX on CPU does), as jax.lax.empty (dtype=None: the default float, as jnp.empty).

    >>> netcl.lax.empty((2,), jnp.float32)       # [0., 0.]
    """
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    dtype = dtypes.default_float_dtype() if dtype is None else \
        dtypes.canonicalize(dtype, where="empty")
    return jnp.zeros(_shape(shape, "empty"), dtype)


def stack(operands, axis=0):
    """The operands (one shape and dtype, as lax requires) joined along a new axis, as
    jax.lax.stack.

    >>> netcl.lax.stack([jnp.array([1, 2]), jnp.array([3, 4])], axis=1)   # [[1, 3], [2, 4]]
    """
    if isinstance(operands, (Tracer,)) or not isinstance(operands, (list, tuple)):
        raise TypeError(f"stack: operands must be a sequence of arrays, got "
                        f"{type(operands).__name__}")
    xs = [_arr(x, "stack", "operands") for x in operands]
    if not xs:
        raise ValueError("stack: need at least one operand")
    if len({(tuple(x.shape), np.dtype(x.dtype)) for x in xs}) != 1:
        raise TypeError(f"stack: operands must have one shape and dtype, got "
                        f"{[(tuple(x.shape), str(x.dtype)) for x in xs]}")
    axis = _int(axis, "stack", "axis")
    if not -xs[0].ndim - 1 <= axis <= xs[0].ndim:
        raise ValueError(f"stack: axis={axis} is out of range for rank {xs[0].ndim + 1}")
    return jnp.stack(xs, axis=axis)


def unstack(x, axis=0):
    """The slices of x along `axis`, as a tuple, as jax.lax.unstack.

    >>> netcl.lax.unstack(jnp.array([[1, 2], [3, 4]]), axis=1)     # ([1, 3], [2, 4])
    """
    from .lax import index_in_dim
    x = _arr(x, "unstack", "x")
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one axis")
    axis = _int(axis, "unstack", "axis")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"unstack: axis={axis} is out of range for rank {x.ndim}")
    return tuple(index_in_dim(x, i, axis % x.ndim, keepdims=False)
                 for i in range(x.shape[axis]))


def broadcast_like(arr, like_arr):
    """arr broadcast to the shape of like_arr, as jax.lax.broadcast_like.

    >>> netcl.lax.broadcast_like(jnp.array([1, 2, 3]), jnp.zeros((2, 3)))   # [[1 2 3] [1 2 3]]
    """
    like = like_arr if hasattr(like_arr, "shape") else _arr(like_arr, "broadcast_like",
                                                             "like_arr")
    return jnp.broadcast_to(_arr(arr, "broadcast_like", "arr"), tuple(like.shape))


def dtype(x):
    """The dtype netcl holds x as (arrays, NumPy values, Python scalars: the default of
    their kind; dtype-likes), as jax.lax.dtype.

    >>> netcl.lax.dtype(1.0)         # float32 (float64 with x64)
    """
    if isinstance(x, bool):
        return dtypes.bool_
    if isinstance(x, int):
        return dtypes.default_int_dtype()
    if isinstance(x, float):
        return dtypes.default_float_dtype()
    if isinstance(x, complex):
        return dtypes.default_complex_dtype()
    d = x.dtype if hasattr(x, "dtype") else x
    try:
        d = np.dtype(d)
    except TypeError:
        raise TypeError(f"dtype: cannot determine the dtype of {type(x).__name__} "
                        f"{x!r}") from None
    return dtypes.canonicalize_data(d, where="dtype")


# ---- scatter ----------------------------------------------------------------------------------

def _no_dimension_numbers(axis, where):
    if isinstance(axis, ScatterDimensionNumbers):
        raise TypeError(f"{where}: netcl's scatter family takes (operand, indices, updates, "
                        "axis, batch_dims), not ScatterDimensionNumbers; write general "
                        "scatters with x.at[idx] indexing")


def _scatter_args(where, operand, indices, axis, batch_dims, updates=None):
    """(operand, indices, axis, batch_dims) checked as netcl's scatter primitives check them
    (and updates, when given), before anything runs."""
    from .primitives.structural.gather_scatter import _gathered_shape, _scatter_abstract
    from .core.tracing import ShapedArray
    _no_dimension_numbers(axis, where)
    x = _arr(operand, where)
    idx = _arr(indices, where, "indices")
    if dtypes.kind(idx.dtype) not in "iu":
        raise TypeError(f"{where}: indices must be integers, got {idx.dtype}")
    ax, nb = _int(axis, where, "axis"), _int(batch_dims, where, "batch_dims")
    if x.ndim and -x.ndim <= ax < 0:
        ax %= x.ndim
    if updates is None:     # (a stand-in of the shape scatter_add would take)
        ok = x.ndim and 0 <= nb <= ax < x.ndim and idx.ndim >= nb
        shape = _gathered_shape(x.shape, idx.shape, ax, nb) if ok else ()
        updates = ShapedArray(shape, x.dtype)
    _scatter_abstract(where)(x, ShapedArray(tuple(idx.shape), dtypes.int32), updates, ax, nb)
    return x, idx, ax, nb


def scatter_sub(operand, indices, updates, axis, batch_dims=0):
    """operand with `updates` subtracted at `indices` along `axis` (repeated indices
    subtract each time), as netcl.lax.scatter_add's counterpart of jax.lax.scatter_sub.

    >>> netcl.lax.scatter_sub(jnp.zeros(3), jnp.array([0, 0, 2]), jnp.ones(3), 0)  # [-2 0 -1]
    """
    from .lax import neg, scatter_add
    u = _arr(updates, "scatter_sub", "updates")
    x, idx, ax, nb = _scatter_args("scatter_sub", operand, indices, axis, batch_dims, u)
    if x.dtype == dtypes.bool_:
        raise TypeError("scatter_sub: operand must be numeric, got bool")
    if dtypes.is_complex(x.dtype):      # (the scatter kernels are real: part by part)
        from .lax import complex as make_complex, imag, real
        return make_complex(scatter_add(real(x), idx, neg(real(u)), ax, nb),
                            scatter_add(imag(x), idx, neg(imag(u)), ax, nb))
    # (unsigned updates negate modulo 2**bits, which subtracts exactly in modular arithmetic)
    return scatter_add(x, idx, neg(u), ax, nb)


def scatter_apply(operand, indices, func, axis, batch_dims=0):
    """operand with `func` applied to the entries at `indices` along `axis`, once per
    occurrence of an index (as JAX applies it), as jax.lax.scatter_apply in netcl's scatter
    signature.

    >>> netcl.lax.scatter_apply(jnp.zeros(3), jnp.array([0, 0, 2]), lambda v: v + 1, 0)
    [2., 0., 1.]
    """
    from .lax import broadcast_in_dim, scatter_add, while_loop
    if not callable(func):
        raise TypeError(f"scatter_apply: func must be callable, got {type(func).__name__}")
    x, idx, ax, nb = _scatter_args("scatter_apply", operand, indices, axis, batch_dims)
    rows = tuple(x.shape[:nb]) + (x.shape[ax],)
    counts = scatter_add(jnp.zeros(rows, jnp.int32), idx, jnp.ones(idx.shape, jnp.int32), nb,
                         nb)
    counts = broadcast_in_dim(counts, tuple(x.shape), tuple(range(nb)) + (ax,))

    def once(v, times):
        out = func(v)
        if tuple(out.shape) != tuple(v.shape):
            raise ValueError(f"scatter_apply: func must keep the shape {tuple(v.shape)}, "
                             f"got {tuple(out.shape)}")
        return jnp.where(times, out.astype(v.dtype), v)
    if not isinstance(counts, Array):   # traced indices (jit, vmap): a loop to the top count
        _, out = while_loop(lambda c: jnp.any(c[0] > 0),
                            lambda c: (c[0] - 1, once(c[1], c[0] > 0)), (counts, x))
        return out
    # concrete indices (eager, eager grad): a Python loop, which grad differentiates
    most = int(jnp.max(counts)) if counts.size else 0
    for k in range(most):
        x = once(x, counts > k)
    return x


# ---- convolution helpers ----------------------------------------------------------------------

def conv_general_permutations(dimension_numbers):
    """The (lhs, rhs, out) dimension permutations of three layout strings relative to
    ('NC...', 'OI...', 'NC...'), as jax.lax.conv_general_permutations.

    >>> netcl.lax.conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    from .primitives.conv import conv_dimension_numbers
    where = "conv_general_permutations"
    if not (isinstance(dimension_numbers, (tuple, list)) and len(dimension_numbers) == 3 and
            all(isinstance(s, str) for s in dimension_numbers)):
        raise TypeError(f"{where}: dimension_numbers must be three layout strings, got "
                        f"{dimension_numbers!r}")
    rank = (1,) * len(dimension_numbers[0])   # (the layouts alone decide the permutations)
    try:
        return tuple(conv_dimension_numbers(rank, rank, tuple(dimension_numbers)))
    except TypeError as e:
        rename_error(e, where)
        raise


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of lax.conv_transpose for these shapes and layout strings, as
    jax.lax.conv_transpose_shape_tuple.

    >>> netcl.lax.conv_transpose_shape_tuple((1, 4, 4, 3), (3, 3, 3, 8), (2, 2), "SAME",
    ...                                      ("NHWC", "HWIO", "NHWC"))        # (1, 8, 8, 8)
    """
    from .primitives.conv.convolution import _conv_transpose_padding
    where = "conv_transpose_shape_tuple"
    lhs_shape = _ints(lhs_shape, where, "lhs_shape")
    rhs_shape = _ints(rhs_shape, where, "rhs_shape", len(lhs_shape))
    strides = _ints(window_strides, where, "window_strides", len(lhs_shape) - 2)
    lp, rp, op = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = [lhs_shape[i] for i in lp], [rhs_shape[i] for i in rp]
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"{where}: padding must be 'SAME', 'VALID' or (low, high) pairs, "
                             f"got {padding!r}")
        padding = [_conv_transpose_padding(k, s, padding.upper())
                   for k, s in zip(rhs_t[2:], strides)]
    if not isinstance(padding, (list, tuple)) or len(padding) != len(strides):
        raise TypeError(f"{where}: padding must be 'SAME', 'VALID' or {len(strides)} (low, "
                        f"high) pairs, got {padding!r}")
    pads = [sum(_ints(p, where, "padding", 2)) for p in padding]
    space = [(i - 1) * s - k + 2 + p for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], strides, pads)]
    out_t = [lhs_t[0], rhs_t[0]] + space
    return tuple(int(out_t[j]) for j in np.argsort(op))


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """The unshared (locally connected) convolution: a separate kernel at each output
    position, as jax.lax.conv_general_dilated_local. rhs's spatial dimensions are the
    output's; its 'I' dimension holds input channels times the filter window (in
    conv_general_dilated_patches' order).

    >>> x = jnp.ones((1, 2, 5)); w = jnp.ones((2 * 3, 3, 4))        # ('NCH', 'IHO', 'NCH')
    >>> netcl.lax.conv_general_dilated_local(x, w, (1,), "VALID", (3,)).shape   # (1, 4, 3)
    """
    from .api_extras import eval_shape
    where = "conv_general_dilated_local"
    lhs, rhs = _arr(lhs, where, "lhs"), _arr(rhs, where, "rhs")
    filter_shape = _ints(filter_shape, where, "filter_shape", lhs.ndim - 2)
    args = (window_strides, padding, filter_shape, lhs_dilation, rhs_dilation,
            dimension_numbers, precision)
    # traced first (no kernel runs): a bad rhs fails before the patches are computed
    eval_shape(lambda a, b: _local(a, b, *args), lhs, rhs)
    return _local(lhs, rhs, *args)


def _local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation, rhs_dilation,
           dimension_numbers, precision):
    from .lax import conv_dimension_numbers, conv_general_dilated_patches, dot_general
    if isinstance(precision, (tuple, list)):
        lhs_precision = precision[0]
    else:
        lhs_precision = precision
    patches = conv_general_dilated_patches(
        lhs, filter_shape=filter_shape, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, precision=lhs_precision)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        tuple(lhs.shape), (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
    rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
    dn = (([out_spec[1]], [rhs_spec[1]]), (sorted(lhs_b), rhs_b))
    out = dot_general(patches, rhs, dn, precision=precision)
    return jnp.moveaxis(out, (-2, -1), (out_spec[0], out_spec[1]))


# ---- program structure ------------------------------------------------------------------------

def with_sharding_constraint(x, shardings):
    """x with its values unchanged, placed as `shardings` say (a Sharding, or a
    PartitionSpec of the mesh set by `with mesh:`, per pytree prefix). Under a trace the
    constraint is checked against the shapes and the value passes through: netcl does not
    partition traced computations (see netcl.sharding).

    >>> netcl.lax.with_sharding_constraint(x, NamedSharding(mesh, P("batch")))
    """
    from .sharding import NamedSharding, PartitionSpec, Sharding, expand_prefix, get_mesh
    from .core.global_array import put
    from .tree_util import tree_flatten, tree_unflatten
    where = "with_sharding_constraint"
    if shardings is None:
        return x
    leaves, tree = tree_flatten(x)
    entries = expand_prefix(shardings, x, lambda s: s is None or isinstance(
        s, (Sharding, PartitionSpec)), where, "shardings")
    out = []
    for leaf, s in zip(leaves, entries):
        if isinstance(s, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise ValueError(f"{where}: a bare PartitionSpec {s!r} needs a mesh: call it "
                                 "inside `with mesh:` or pass a NamedSharding")
            s = NamedSharding(mesh, s)
        if s is None:
            out.append(leaf)
            continue
        if not isinstance(s, Sharding):
            raise TypeError(f"{where}: shardings entries must be Shardings or PartitionSpecs, "
                            f"got {type(s).__name__}")
        s.check_fits(tuple(jnp.shape(leaf)), where)
        out.append(leaf if isinstance(leaf, Tracer) else put(leaf, s, where))
    return tree_unflatten(tree, out)


def _platform():
    """The name JAX would give the default device's platform: 'cpu', 'cuda' (NVIDIA),
    'rocm' (AMD), else the device kind ('gpu', 'accelerator')."""
    from .core.devices import default_device
    d = default_device()
    if d.is_numpy or d.kind == "cpu":
        return "cpu"
    vendor = ""
    try:
        vendor = (d.cl_device.vendor + " " + d.platform).lower()
    except Exception:
        pass
    if "nvidia" in vendor:
        return "cuda"
    if "amd" in vendor or "advanced micro" in vendor:
        return "rocm"
    return str(d.kind)


def platform_dependent(*args, default=None, **per_platform):
    """The branch for netcl's device platform applied to args: per_platform['cpu'] on CPU
    devices and the NumPy fallback, 'cuda' on NVIDIA GPUs, 'rocm' on AMD GPUs; `default`
    elsewhere, as jax.lax.platform_dependent (the platform is known when netcl traces, so
    only the chosen branch runs).

    >>> netcl.lax.platform_dependent(x, cpu=jnp.sin, default=jnp.cos)     # sin(x) on PoCL
    """
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"platform_dependent: the {name!r} branch must be a callable")
        if name == "gpu":
            raise ValueError("platform_dependent: use 'cuda' or 'rocm' for GPU branches, as "
                             "in JAX")
    if default is not None and not callable(default):
        raise TypeError("platform_dependent: the 'default' branch must be a callable")
    branch = per_platform.get(_platform(), default)
    if branch is None:
        raise NotImplementedError(f"platform_dependent: no branch for platform "
                                  f"{_platform()!r} (branches: {sorted(per_platform)}) and "
                                  "no default")
    return branch(*args)


def composite(decomposition, name, version=0):
    """A function computing `decomposition` (positional arguments are inputs, keyword
    arguments attributes), as jax.lax.composite: netcl has no compiler that matches
    composites by name, so the decomposition is what runs (and what grad differentiates).

    >>> tangent = netcl.lax.composite(lambda x: jnp.sin(x) / jnp.cos(x), name="my.tangent")
    >>> tangent(jnp.array([0.0, 0.5]))          # [0, 0.5463]
    """
    from .errors import UnexpectedTracerError
    if not callable(decomposition):
        raise TypeError(f"composite: decomposition must be callable, got "
                        f"{type(decomposition).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"composite: name must be a str, got {type(name).__name__}")
    _int(version, "composite", "version")

    @functools.wraps(decomposition)
    def composed(*args, **kwargs):
        leaves, _ = tree_flatten(kwargs)
        if any(isinstance(v, Tracer) for v in leaves):
            raise UnexpectedTracerError(
                f"composite {name!r}: an attribute (keyword argument) is a traced value; "
                "pass traced values as positional arguments (attributes must be known "
                "when the program is built; use NumPy arrays for array attributes)")
        return decomposition(*args, **kwargs)
    return composed


# ---- collectives --------------------------------------------------------------------------------

def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the mapped axis `axis_name` with x's axis `axis` (whose length must equal the
    axis size): all_to_all(x, axis_name, axis, axis), as jax.lax.pswapaxes. x may be a
    pytree.

    >>> netcl.vmap(lambda v: netcl.lax.pswapaxes(v, "i", 0), axis_name="i")(jnp.eye(3))
    """
    from .lax import all_to_all
    if axis_index_groups is not None:
        raise NotImplementedError("pswapaxes: axis_index_groups is not supported (netcl's "
                                  "collectives act on the whole mapped axis)")
    try:
        return tree_map(lambda v: all_to_all(v, axis_name, axis, axis), x)
    except NameError as e:      # (an unbound axis name: named as pswapaxes's error)
        rename_error(e, "pswapaxes")
        raise


def pshuffle(x, axis_name, perm):
    """Member i receives member perm[i]'s x (perm: a permutation of range(axis size)):
    ppermute with pairs (perm[i], i), as jax.lax.pshuffle. x may be a pytree.

    >>> netcl.vmap(lambda v: netcl.lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(
    ...     jnp.arange(3.0))                     # [2., 0., 1.]
    """
    from .lax import ppermute
    if not isinstance(perm, (list, tuple)):
        raise TypeError(f"pshuffle: perm must be a list of ints, got {type(perm).__name__}")
    perm = [_int(p, "pshuffle", "perm") for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle: perm must be a permutation of range({len(perm)}), got "
                         f"{perm}")
    try:
        return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))
    except NameError as e:
        rename_error(e, "pshuffle")
        raise


_PCAST_TO = ("varying", "reduced", "unreduced")


def pcast(x, axis_name, *, to):
    """jax.lax.pcast: mark x as varying (or reduced, unreduced) over the manual mesh axes
    `axis_name` inside shard_map; values are unchanged. netcl's shard_map checks
    replication by value, so this is the identity once the names are bound (NameError,
    as JAX's, where one is not). x may be a pytree.

    >>> netcl.shard_map(lambda v: netcl.lax.pcast(v, "i", to="varying"), mesh=mesh,
    ...                 in_specs=P(), out_specs=P("i"))(x)
    """
    from .primitives.axis_env import _names
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"pcast: axis_name={axis_name!r} must be a tuple or a str")
    if not axis_name and axis_name != 0:
        return x
    if to not in _PCAST_TO:
        raise ValueError(f"pcast: got unexpected to={to!r}; allowed values are "
                         f"{', '.join(map(repr, _PCAST_TO))}")
    _names(axis_name, "pcast")
    return x


def pbroadcast(x, axis_name, source):
    """jax.lax.pbroadcast: every member of the mapped axis `axis_name` receives member
    `source`'s x (a collective broadcast: psum of x masked to the source member). x may be
    a pytree; its derivative sums the cotangents onto the source member, as JAX's.

    >>> netcl.vmap(lambda v: netcl.lax.pbroadcast(v, "i", 2), axis_name="i")(
    ...     jnp.arange(4.0))                     # [2., 2., 2., 2.]
    """
    from .lax import axis_index, psum
    from .primitives.axis_env import _names, axis_size
    names = _names(axis_name, "pbroadcast")
    source = _int(source, "pbroadcast", "source")
    n = axis_size(names)
    if not 0 <= source < n:
        raise ValueError(f"pbroadcast: source={source} is out of range for axis "
                         f"{axis_name!r} of size {n}")
    if not names:
        return x

    def leaf(v):
        v = _arr(v, "pbroadcast")
        kept = jnp.where(axis_index(names) == source, v, jnp.zeros((), v.dtype))
        out = psum(kept, names)
        return out if out.dtype == v.dtype else out.astype(v.dtype)   # (bools: summed as int)
    return tree_map(leaf, x)


# (errors escaping these name the public function, whatever raised them inside)
wrap_namespace(globals(), [n for n in __all__ if n not in ("platform_dependent", "composite")])

# random bits and the gamma derivatives: lax_more_random.py
from .lax_more_random import *  # noqa: E402,F401,F403
from .lax_more_random import __all__ as _random_all  # noqa: E402

__all__ += _random_all
