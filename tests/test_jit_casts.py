"""jit's cast passes (transforms/fusion.py): a cast back from a lossless widening is dropped
(strip_identities), and a cast read only through broadcasts moves after them into the
group that reads them (sink_casts_through_broadcasts); results equal eager execution."""
import numpy as np

import netcl
import netcl.numpy as jnp

ON_OPENCL = not netcl.default_device().is_numpy


def _ir_text(f, *args):
    """f's IR after jit's passes (before fusion: its equations still one per op)."""
    from netcl.transforms.fusion import dce, sink_casts_through_broadcasts, strip_identities
    return str(sink_casts_through_broadcasts(dce(strip_identities(netcl.make_ir(f)(*args)))))


def test_a_cast_back_from_a_lossless_widening_is_dropped():
    x = jnp.asarray(np.linspace(-3, 3, 12).astype(np.float32)).astype(jnp.bfloat16)

    def round_trip(x):
        return (x.astype(jnp.float32).astype(jnp.bfloat16) * 3).astype(jnp.float32) + 1

    got = netcl.jit(round_trip)(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(round_trip(x)))
    text = _ir_text(round_trip, x)
    assert text.count("convert_element_type") == 1, text     # only the last cast is left
    # float32 -> bfloat16 -> float32 rounds: both casts stay, and so does the rounding
    y = jnp.asarray(np.float32([1.0 + 2 ** -12, 3.14159]))

    def lossy(y):
        return y.astype(jnp.bfloat16).astype(jnp.float32) * 2
    got = netcl.jit(lossy)(y)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(lossy(y)))
    assert np.asarray(got)[0] == 2.0
    assert _ir_text(lossy, y).count("convert_element_type") == 2
    # integers: int32 -> int64 -> int32 is the identity; int64 -> int32 -> int64 is not
    i = jnp.asarray(np.int32([7, -9, 2 ** 30]))
    assert _ir_text(lambda i: i.astype(jnp.int64).astype(jnp.int32) + 1, i) \
        .count("convert_element_type") == 0
    big = jnp.asarray(np.int64([2 ** 40 + 3]))

    def wrap(v):
        return v.astype(jnp.int32).astype(jnp.int64)
    np.testing.assert_array_equal(np.asarray(netcl.jit(wrap)(big)), np.asarray(wrap(big)))


def test_a_bias_cast_joins_the_group_reading_its_broadcast():
    rng = np.random.default_rng(0)
    y = jnp.asarray(rng.standard_normal((6, 5)).astype(np.float32)).astype(jnp.bfloat16)
    b = jnp.asarray(rng.standard_normal(5).astype(np.float32))

    def layer(y, b):
        return jnp.maximum(y + b.astype(jnp.bfloat16), 0)

    got = netcl.jit(layer)(y, b)
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(got, np.float32),
                                  np.asarray(layer(y, b), np.float32))
    if ON_OPENCL:
        assert len(netcl.jit(layer).lower(y, b).kernels) == 1
    # a broadcast cast read by a product (not elementwise) keeps its cast where it was
    a = jnp.asarray(rng.standard_normal((5, 3)).astype(np.float32))

    def product(a, b):
        return jnp.broadcast_to(b.astype(jnp.bfloat16).astype(jnp.float32), (4, 5)) @ a
    np.testing.assert_allclose(np.asarray(netcl.jit(product)(a, b)),
                               np.asarray(product(a, b)), rtol=1e-6)
    text = _ir_text(product, a, b)
    assert text.index("convert_element_type") < text.index("broadcast_in_dim"), text
