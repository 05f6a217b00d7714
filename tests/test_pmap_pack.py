"""pmap's bucket packing (transforms/pmap_pack.py): one kernel puts a device's values end to
end, whatever their layouts, against NumPy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.transforms.pmap_pack import pack

from util import rand

pytestmark = pytest.mark.skipif(netcl.default_device().is_numpy,
                                reason="no kernels on the NumPy fallback")


def _value(rng, dtype, layout):
    if layout == "dense":
        return jnp.asarray(rand(rng, (3, 5), dtype))
    if layout == "offset":          # a slice that starts inside its buffer
        return jnp.asarray(rand(rng, (40,), dtype))[7:30]
    if layout == "transposed":
        return jnp.asarray(rand(rng, (4, 3, 2), dtype)).transpose(2, 0, 1)
    if layout == "broadcast":
        return jnp.broadcast_to(jnp.asarray(rand(rng, (1, 6), dtype)), (3, 6))
    if layout == "empty":
        return jnp.zeros((0, 4), dtype)
    return jnp.asarray(rand(rng, (), dtype))        # "scalar"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 1000),
       dtype=st.sampled_from([np.float32, jnp.bfloat16, np.int32, np.float16]),
       layouts=st.lists(st.sampled_from(["dense", "offset", "transposed", "broadcast",
                                         "empty", "scalar"]), min_size=1, max_size=7))
def test_pack_equals_concatenated_values(seed, dtype, layouts):
    rng = np.random.default_rng(seed)
    xs = [_value(rng, dtype, layout) for layout in layouts]
    got = pack(xs, xs[0].dtype)
    want = np.concatenate([np.asarray(x).ravel() for x in xs])
    assert got.dtype == xs[0].dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), want.view(np.uint8))


def test_pack_splits_by_argument_bytes():
    """More values than one kernel's arguments hold: several kernels, one flat result."""
    dev = netcl.default_device()
    xs = [jnp.full((i + 2,), float(i), np.float32) for i in range(20)]
    with netcl.test_util.override_target(dev, kernel_argument_bytes=96):
        got = pack(xs, np.float32)
    np.testing.assert_array_equal(np.asarray(got),
                                  np.concatenate([np.asarray(x) for x in xs]))
