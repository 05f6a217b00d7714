"""jax.ops (segment_sum / prod / max / min) and jax.typing: values and dtypes against JAX
over random segmentations (ids out of range, empty segments, clip mode, buckets), under
jit and vmap, float64 gradient checks, and bad inputs' errors."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import netcl
import netcl.numpy as jnp
from netcl import ops
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")

NAMES = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5,
                               atol=1e-5)


@settings(max_examples=12, deadline=None)
@given(n=st.sampled_from([1, 5, 8]), segments=st.sampled_from([1, 3, 6]),
       name=st.sampled_from(NAMES), dtype=st.sampled_from([np.float32, np.int32]),
       options=st.sampled_from([{}, {"mode": "clip"}, {"bucket_size": 3},
                                {"indices_are_sorted": True}]), seed=st.integers(0, 99))
def test_segment_reductions_agree_with_jax(n, segments, name, dtype, options, seed):
    rng = np.random.default_rng(seed)
    data = (rng.standard_normal((n, 2)) * 3).astype(dtype)
    ids = rng.integers(-1, segments + 1, n).astype(np.int32)   # (some out of range)
    if options.get("indices_are_sorted"):
        ids = np.sort(ids)
    got = getattr(ops, name)(data, ids, segments, **options)
    same(got, getattr(jax.ops, name)(data, ids, segments, **options))


def test_num_segments_from_the_ids_jit_vmap_and_bool():
    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    ids = np.array([3, 0, 3, 1, 0], np.int32)
    for name in NAMES:
        same(getattr(ops, name)(data, ids), getattr(jax.ops, name)(data, ids))
        same(netcl.jit(lambda d, i: getattr(ops, name)(d, i, 4))(data, ids),
             getattr(jax.ops, name)(data, ids, 4))
        batch = np.stack([data, -data])
        same(netcl.vmap(lambda d: getattr(ops, name)(d, ids, 4))(batch),
             jax.vmap(lambda d: getattr(jax.ops, name)(d, ids, 4))(batch))
    flags = np.array([True, False, True, False, False])
    for name in ("segment_max", "segment_min"):
        same(getattr(ops, name)(flags, ids, 5), getattr(jax.ops, name)(flags, ids, 5))
    with pytest.raises(TypeError, match="segment_sum: data of dtype bool has no sum"):
        ops.segment_sum(flags, ids, 5)


def test_segment_gradients(x64_on):
    data = jnp.asarray(np.random.default_rng(1).standard_normal((6, 3)), jnp.float64)
    ids = jnp.asarray([0, 2, 2, 1, 0, 2])
    for name in NAMES:
        check_grads(lambda d: getattr(ops, name)(d, ids, 3), (data,), order=1)
    g = netcl.grad(lambda d: jnp.sum(ops.segment_max(d, ids, 4) ** 2))(data)
    gj = jax.grad(lambda d: jax.numpy.sum(jax.ops.segment_max(d, np.asarray(ids), 4) ** 2))(
        np.asarray(data))
    same(g, gj)


def test_segment_bad_inputs():
    data = jnp.ones((4, 2))
    with pytest.raises(TypeError, match=r"segment_sum: segment_ids must be integers of shape "
                                        r"\(4,\).*float32 \(4,\)"):
        ops.segment_sum(data, jnp.zeros(4, jnp.float32), 2)
    with pytest.raises(TypeError, match=r"segment_max: segment_ids .* int32 \(3,\)"):
        ops.segment_max(data, jnp.zeros(3, jnp.int32), 2)
    with pytest.raises(ValueError, match="segment_min: num_segments must be non-negative"):
        ops.segment_min(data, jnp.zeros(4, jnp.int32), -1)
    with pytest.raises(ValueError, match="segment_prod: bucket_size must be a positive int"):
        ops.segment_prod(data, jnp.zeros(4, jnp.int32), 2, bucket_size=0)
    with pytest.raises(ValueError, match="segment_sum: mode must be"):
        ops.segment_sum(data, jnp.zeros(4, jnp.int32), 2, mode="wrap")
    with pytest.raises(TypeError, match="segment_sum: num_segments=None needs concrete"):
        netcl.jit(lambda d, i: ops.segment_sum(d, i))(data, jnp.zeros(4, jnp.int32))
    with pytest.raises(TypeError, match="segment_sum: data must have at least one axis"):
        ops.segment_sum(jnp.float32(1.0), jnp.zeros(1, jnp.int32), 1)


def test_typing_names_describe_netcl_values():
    import typing
    import netcl.typing
    from netcl.typing import ArrayLike, DTypeLike
    members = typing.get_args(ArrayLike)
    assert netcl.Array in members and np.ndarray in members and float in members
    assert isinstance(jnp.ones(2), members) and isinstance(np.float32(1), members)
    assert np.dtype in typing.get_args(DTypeLike)
    public = {n for n in dir(jax.typing) if not n.startswith("_")}
    assert public <= set(dir(netcl.typing))
