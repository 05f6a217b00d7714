"""jax.ops: segment reductions, as graph networks and ragged batches use them.

`segment_sum(data, segment_ids, num_segments)` gives out[s] = the sum of data[i] over the i
with segment_ids[i] == s (data's leading axis is the one segmented; its other axes are
kept). segment_prod, segment_max and segment_min combine the same way. As in JAX:

- an empty segment holds the combination's identity (0, 1, the dtype's lowest value or
  -inf for max, its highest or +inf for min);
- ids outside [0, num_segments) are dropped (`mode=None`, JAX's FILL_OR_DROP), or clamped
  into it with `mode="clip"`; negative ids are not counted from the end;
- `num_segments=None` takes max(segment_ids) + 1, which needs concrete ids (not under jit);
- `bucket_size` reduces the items in buckets of that many first (a new leading axis), then
  the buckets, which changes the order of a sum's additions (its rounding) as JAX's does;
- `indices_are_sorted` and `unique_indices` are promises JAX's compiler may use; netcl's
  scatter kernels do not need them, and the results are the same.

Each is one scatter of the segments' combination into an array of identities (the
scatter primitives' own derivative rules give grad, jvp and vmap).

>>> netcl.ops.segment_sum(jnp.array([1., 2., 3., 4.]), jnp.array([0, 0, 2, 1]), 3)
Array([3., 4., 3.], dtype=float32)
"""
import numpy as np

from .core import dtypes
from .core.tracing import Tracer
from .numpy import _util
from .primitives import elementwise as ew
from .primitives import views
from .primitives.structural import scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The sums of `data`'s items (along its leading axis) per segment, as jax.ops.segment_sum.

    >>> netcl.ops.segment_sum(jnp.ones((4, 2)), jnp.array([1, 1, 0, 3]), num_segments=4)
    """
    return _segments("segment_sum", "add", data, segment_ids, num_segments, bucket_size, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """The products of `data`'s items per segment, as jax.ops.segment_prod.

    >>> netcl.ops.segment_prod(jnp.array([2., 3., 4.]), jnp.array([0, 0, 1]))    # [6, 4]
    """
    return _segments("segment_prod", "mul", data, segment_ids, num_segments, bucket_size,
                     mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The largest of `data`'s items per segment (-inf, or the dtype's lowest, where a
    segment is empty), as jax.ops.segment_max.

    >>> netcl.ops.segment_max(jnp.array([2., 3., 4.]), jnp.array([0, 0, 2]), 3)  # [3, -inf, 4]
    """
    return _segments("segment_max", "max", data, segment_ids, num_segments, bucket_size, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The smallest of `data`'s items per segment (+inf, or the dtype's highest, where a
    segment is empty), as jax.ops.segment_min.

    >>> netcl.ops.segment_min(jnp.array([2., 3., 4.]), jnp.array([0, 0, 2]), 3)  # [2, inf, 4]
    """
    return _segments("segment_min", "min", data, segment_ids, num_segments, bucket_size, mode)


_SCATTERS = {"add": scatter_add_p, "mul": scatter_mul_p, "max": scatter_max_p,
             "min": scatter_min_p}


def _segments(name, combine, data, segment_ids, num_segments, bucket_size, mode):
    from . import numpy as jnp
    from .lax_more import GatherScatterMode
    data = _util.asarray_arg(data, name)
    ids = _util.asarray_arg(segment_ids, name)
    if data.ndim < 1:
        raise TypeError(f"{name}: data must have at least one axis (its items), got shape "
                        f"{tuple(data.shape)} ({data.dtype})")
    if data.dtype == dtypes.bool_ and combine in ("add", "mul"):
        raise TypeError(f"{name}: data of dtype bool has no "
                        f"{'sum' if combine == 'add' else 'product'} (JAX refuses it too); "
                        "convert it to an integer dtype")
    if dtypes.kind(ids.dtype) not in "iu" or ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise TypeError(f"{name}: segment_ids must be integers of shape ({data.shape[0]},), "
                        f"one per item of data {tuple(data.shape)}; got {ids.dtype} "
                        f"{tuple(ids.shape)}")
    try:
        mode = GatherScatterMode.from_any(mode)
    except ValueError:
        raise ValueError(f"{name}: mode must be None, 'drop', 'fill', 'clip' or "
                         f"'promise_in_bounds', got {mode!r}") from None
    if mode == GatherScatterMode.ONE_HOT:
        raise ValueError(f"{name}: mode ONE_HOT is not a segment mode (JAX refuses it too)")
    if bucket_size is not None and (isinstance(bucket_size, bool) or
                                    not isinstance(bucket_size, (int, np.integer)) or
                                    bucket_size < 1):
        raise ValueError(f"{name}: bucket_size must be a positive int or None, got "
                         f"{bucket_size!r}")
    if num_segments is None:
        if isinstance(ids, Tracer):
            raise TypeError(f"{name}: num_segments=None needs concrete segment_ids (it is "
                            "max(segment_ids) + 1); pass num_segments under jit or vmap")
        num_segments = int(np.max(np.asarray(ids))) + 1 if ids.shape[0] else 0
    if isinstance(num_segments, bool) or not isinstance(num_segments, (int, np.integer)):
        raise TypeError(f"{name}: num_segments must be an int, got {num_segments!r}")
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError(f"{name}: num_segments must be non-negative, got {num_segments}")
    ids = ids.astype(jnp.int32)
    if mode == GatherScatterMode.CLIP:
        ids = jnp.clip(ids, 0, max(num_segments - 1, 0))
    # (ids outside the segments go to one more, the dropped one: no kernel reads past it)
    ids = jnp.where((ids < 0) | (ids >= num_segments), num_segments, ids)
    rest = tuple(data.shape[1:])
    n = data.shape[0]
    buckets = 1 if bucket_size is None else max(1, -(-n // int(bucket_size)))
    if buckets > 1:
        # item i goes to bucket i // bucket_size: segment s of bucket b is row b * (S + 1) + s
        ids = ids + (jnp.arange(n, dtype=jnp.int32) // int(bucket_size)) * (num_segments + 1)
    rows = buckets * (num_segments + 1)
    out = views.full((rows,) + rest, _identity(combine, data.dtype), data.dtype)
    out = _SCATTERS[combine].bind(out, ids, data, axis=0, batch_dims=0)
    out = views.reshape(out, (buckets, num_segments + 1) + rest)
    out = views.slice(out, (0,) * (out.ndim), (buckets, num_segments) + rest)
    if buckets == 1:
        return views.reshape(out, (num_segments,) + rest)
    reduce = {"add": jnp.sum, "mul": jnp.prod, "max": jnp.max, "min": jnp.min}[combine]
    return reduce(out, axis=0).astype(data.dtype)


def _identity(combine, dtype):
    """The combination's identity in `dtype`: what an empty segment holds."""
    if combine in ("add", "mul"):
        return 0 if combine == "add" else 1
    if dtype == dtypes.bool_:
        return combine == "min"
    if dtypes.kind(dtype) in "iu":
        info = np.iinfo(np.dtype(dtype))
        return info.min if combine == "max" else info.max
    return -np.inf if combine == "max" else np.inf
