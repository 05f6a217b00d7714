"""netcl.lax's remaining jax.lax names (netcl/lax_more.py) against JAX: approx_max_k /
approx_min_k (values, indices, output sizes, derivative), empty/stack/unstack/broadcast_like
/dtype, scatter_sub/scatter_apply (and under jit, vmap and grad), the convolution helpers,
the random-bit functions, with_sharding_constraint, platform_dependent, composite,
igamma_grad_a/random_gamma_grad, pswapaxes/pshuffle under vmap(axis_name=), the records and
enums; which jax.lax names netcl leaves out; bad arguments."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

# XLA internals with no meaning on netcl (tokens, sends, ragged and scaled products, dot
# algorithms, sharding casts, staging): left out on purpose
LEFT_OUT = {"AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "Tolerance",
            "RaggedDotDimensionNumbers", "after_all", "create_token", "dce_sink", "psend",
            "precv", "ragged_all_to_all", "ragged_dot", "ragged_dot_general", "scaled_dot",
            "shape_as_value", "stage", "pcast", "pbroadcast"}


def close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_every_jax_lax_name_is_present_or_left_out_on_purpose():
    missing = {n for n in set(dir(jlax)) - set(dir(lax))
               if not n.startswith("_") and not n.endswith("_p")}
    assert missing <= LEFT_OUT, sorted(missing - LEFT_OUT)


# ---- approx top-k -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["approx_max_k", "approx_min_k"])
@pytest.mark.parametrize("shape,k,kw", [((4, 300), 5, {}),
                                        ((4, 300), 2, {"reduction_dimension": 0}),
                                        ((4, 300), 3, {"aggregate_to_topk": False}),
                                        ((5000,), 10, {"aggregate_to_topk": False}),
                                        ((6,), 2, {"recall_target": 1.0})])
def test_approx_k_matches_jax(fn, shape, k, kw):
    x = np.random.default_rng(0).permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    v, i = getattr(lax, fn)(jnp.asarray(x), k, **kw)
    wv, wi = getattr(jlax, fn)(x, k, **kw)
    assert (v.dtype, i.dtype) == (np.float32, np.int32)
    close(v, wv)
    np.testing.assert_array_equal(np.asarray(i), np.asarray(wi))


def test_approx_max_k_derivative_matches_jax():
    x = np.random.default_rng(1).standard_normal((3, 7)).astype(np.float32)
    w = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    got = netcl.grad(lambda a: jnp.sum(lax.approx_max_k(a, 2)[0] * jnp.asarray(w)))(
        jnp.asarray(x))
    want = jax.grad(lambda a: jjnp.sum(jlax.approx_max_k(a, 2)[0] * w))(x)
    close(got, want)


# ---- creation and shapes ----------------------------------------------------------------------

def test_creation_and_shape_helpers_match_jax():
    a = lax.empty((2, 3), jnp.float32)
    assert (a.shape, a.dtype) == ((2, 3), np.float32)
    xs = [np.arange(3, dtype=np.int32) + k for k in range(2)]
    for axis in (0, 1, -1):
        close(lax.stack([jnp.asarray(x) for x in xs], axis), jlax.stack(xs, axis))
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    for axis in (0, 1):
        for g, w in zip(lax.unstack(jnp.asarray(m), axis), jlax.unstack(m, axis)):
            close(g, w)
    close(lax.broadcast_like(jnp.arange(3), jnp.zeros((2, 3))),
          jlax.broadcast_like(jjnp.arange(3), jjnp.zeros((2, 3))))
    with jax.enable_x64(netcl.config.enable_x64):       # (JAX in netcl's x64 mode)
        for v in (1.0, 1, True, np.ones(2), np.ones(2, np.float32), jnp.ones(2, jnp.int32),
                  "float16"):
            want = jlax.dtype(v if not isinstance(v, netcl.Array) else np.asarray(v))
            assert lax.dtype(v) == want, v


def test_scatter_sub_and_apply_match_jax_and_transform():
    idx = np.array([0, 0, 2, 3])
    x = np.arange(5, dtype=np.float32) + 1
    u = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    close(lax.scatter_sub(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u), 0),
          jjnp.asarray(x).at[idx].add(-u))
    z = (x + 1j * x[::-1]).astype(np.complex64)
    close(lax.scatter_sub(jnp.asarray(z), jnp.asarray(idx), jnp.asarray(u * (1 + 2j)), 0),
          jjnp.asarray(z).at[idx].add(-u * (1 + 2j)))
    f = lambda v: v * v + 1     # noqa: E731 (applied twice at index 0, as JAX does)
    want = jjnp.asarray(x).at[idx].apply(f)
    close(lax.scatter_apply(jnp.asarray(x), jnp.asarray(idx), f, 0), want)
    close(netcl.jit(lambda v: lax.scatter_apply(v, jnp.asarray(idx), f, 0))(jnp.asarray(x)), want)
    g = netcl.grad(lambda v: jnp.sum(lax.scatter_apply(v, jnp.asarray(idx), f, 0)))(jnp.asarray(x))
    # (JAX has no derivative for scatter_apply; netcl differentiates the applications)
    close(g, [2 * (x[0] ** 2 + 1) * 2 * x[0], 1, 2 * x[2], 2 * x[3], 1], 1e-5)
    # a batch of rows, each scattered along axis 1 at its own indices (batch_dims=1)
    xb = np.ones((2, 4), np.float32)
    ib = np.array([[0, 1], [3, 3]])
    got = netcl.vmap(lambda v, i: lax.scatter_apply(v, i, f, 0))(jnp.asarray(xb), jnp.asarray(ib))
    close(got, lax.scatter_apply(jnp.asarray(xb), jnp.asarray(ib), f, 1, batch_dims=1))
    close(got, [[2, 2, 1, 1], [1, 1, 1, 5]])


# ---- convolution helpers ----------------------------------------------------------------------

@pytest.mark.parametrize("dn", [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"),
                                ("NWHC", "WHIO", "NCWH")])
def test_conv_permutations_and_transpose_shapes_match_jax(dn):
    assert lax.conv_general_permutations(dn) == jlax.conv_general_permutations(dn)
    lhs = tuple(np.array([2, 3, 5, 6])[np.argsort(lax.conv_general_permutations(dn)[0])])
    rhs = tuple(np.array([4, 3, 3, 2])[np.argsort(lax.conv_general_permutations(dn)[1])])
    for pad in ("SAME", "VALID", [(1, 2), (0, 1)]):
        want = jlax.conv_transpose_shape_tuple(lhs, rhs, (2, 1), pad, dn)
        assert lax.conv_transpose_shape_tuple(lhs, rhs, (2, 1), pad, dn) == want
        out = lax.conv_transpose(jnp.ones(lhs), jnp.ones(rhs), (2, 1), pad, dimension_numbers=dn)
        assert tuple(out.shape) == want


@pytest.mark.parametrize("dn,lhs,rhs", [(None, (2, 3, 5, 6), (2, 27, 3, 4)),
                                        (("NHWC", "HWIO", "NHWC"), (1, 5, 6, 2), (3, 4, 18, 7))])
def test_conv_general_dilated_local_matches_jax(dn, lhs, rhs):
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal(lhs).astype(np.float32), rng.standard_normal(rhs).astype(np.float32)
    got = lax.conv_general_dilated_local(jnp.asarray(x), jnp.asarray(w), (1, 1), "VALID", (3, 3),
                                         dimension_numbers=dn)
    want = jlax.conv_general_dilated_local(x, w, (1, 1), "VALID", (3, 3), dimension_numbers=dn,
                                           precision=jlax.Precision.HIGHEST)
    close(got, want, 1e-4)


# ---- random bits, program structure -----------------------------------------------------------

def test_rng_uniform_and_rng_bit_generator():
    a = lax.rng_uniform(jnp.float32(2), jnp.float32(3), (200,))
    b = lax.rng_uniform(jnp.float32(2), jnp.float32(3), (200,))
    assert a.dtype == np.float32 and a.shape == (200,)
    assert np.all((np.asarray(a) >= 2) & (np.asarray(a) < 3))
    assert not np.array_equal(np.asarray(a), np.asarray(b))       # (stateful: new draws)
    key = jnp.asarray(np.array([1, 2, 3, 4], np.uint32))
    k1, bits = lax.rng_bit_generator(key, (3, 5))
    k2, again = lax.rng_bit_generator(key, (3, 5), algorithm=lax.RandomAlgorithm.RNG_DEFAULT)
    assert (k1.shape, k1.dtype, bits.shape, bits.dtype) == ((4,), np.uint32, (3, 5), np.uint32)
    np.testing.assert_array_equal(np.asarray(bits), np.asarray(again))   # (stateless)
    assert not np.array_equal(np.asarray(k1), np.asarray(key))
    _, nxt = lax.rng_bit_generator(k1, (3, 5))
    assert not np.array_equal(np.asarray(nxt), np.asarray(bits))


def test_with_sharding_constraint_platform_dependent_and_composite():
    tree = {"a": jnp.ones(3), "b": (jnp.zeros(2),)}
    assert lax.with_sharding_constraint(tree, None) is tree
    x = jnp.asarray(np.array([0.0, 0.5], np.float32))
    branches = dict(cpu=jnp.sin, cuda=jnp.cos, rocm=jnp.tanh)
    from netcl.lax_more import _platform
    if netcl.default_backend() == "cpu":
        assert _platform() == "cpu"
    want = {"cpu": np.sin, "cuda": np.cos, "rocm": np.tanh}.get(_platform())
    if want is not None:
        close(lax.platform_dependent(x, **branches), want(np.asarray(x)))
        close(netcl.jit(lambda v: lax.platform_dependent(v, **branches))(x), want(np.asarray(x)))
    close(lax.platform_dependent(x, tpu=jnp.sin, default=jnp.exp), np.exp(np.asarray(x)))
    tangent = lax.composite(lambda v, *, k: jnp.sin(v) / jnp.cos(v) * k, name="my.tangent")
    close(tangent(x, k=2.0), 2 * np.tan(np.asarray(x)))
    close(netcl.grad(lambda v: jnp.sum(tangent(v, k=1.0)))(x), 1 / np.cos(np.asarray(x)) ** 2)
    with pytest.raises(netcl.errors.UnexpectedTracerError, match="my.tangent"):
        netcl.jit(lambda v: tangent(v, k=v))(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gamma_derivatives_match_jax(dtype):
    a = np.array([0.5, 1.0, 2.0, 3.0, 10.0, 1.0, 1.0, 5.0, 0.2], dtype)
    x = np.array([0.3, 1.0, 0.5, 3.0, 30.0, 20.0, 1e-3, 5.0, 2.0], dtype)
    with jax.enable_x64(dtype == np.float64):
        want_g, want_i = map(np.asarray, jax.jit(lambda u, v: (
            jlax.random_gamma_grad(u, v), jlax.igamma_grad_a(u, v)))(a, x))
    tol = 2e-5 if dtype == np.float32 else 1e-10
    got = lax.random_gamma_grad(jnp.asarray(a), jnp.asarray(x))
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got), want_g, rtol=tol * 10, atol=tol)
    np.testing.assert_allclose(np.asarray(lax.igamma_grad_a(jnp.asarray(a), jnp.asarray(x))),
                               want_i, rtol=tol * 10, atol=tol)
    edge = lax.random_gamma_grad(jnp.asarray(np.array([1.0, -1.0], dtype)),
                                 jnp.asarray(np.array([0.0, 1.0], dtype)))
    np.testing.assert_array_equal(np.asarray(edge), [0.0, np.nan])


def test_pswapaxes_and_pshuffle_match_jax_under_named_vmap():
    x = np.arange(27, dtype=np.float32).reshape(3, 3, 3)
    for axis in (0, 1):
        got = netcl.vmap(lambda v: lax.pswapaxes(v, "i", axis), axis_name="i")(jnp.asarray(x))
        want = jax.vmap(lambda v: jlax.pswapaxes(v, "i", axis), axis_name="i")(x)
        close(got, want)
    got = netcl.vmap(lambda v: lax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(jnp.asarray(x))
    close(got, jax.vmap(lambda v: jlax.pshuffle(v, "i", [2, 0, 1]), axis_name="i")(x))


def test_records_and_enums_mirror_jax():
    assert lax.GatherDimensionNumbers._fields == jlax.GatherDimensionNumbers._fields
    assert lax.ScatterDimensionNumbers._fields == jlax.ScatterDimensionNumbers._fields
    for s in ("clip", "fill", "drop", None, "promise_in_bounds", "one_hot"):
        assert lax.GatherScatterMode.from_any(s).name == jlax.GatherScatterMode.from_any(s).name
    assert [m.name for m in lax.RoundingMethod] == [m.name for m in jlax.RoundingMethod]
    assert [m.name for m in lax.RandomAlgorithm] == [m.name for m in jlax.RandomAlgorithm]
    close(lax.round(jnp.asarray(np.array([0.5, 1.5, 2.5], np.float32)),
                    lax.RoundingMethod.TO_NEAREST_EVEN), [0.0, 2.0, 2.0])


@pytest.mark.parametrize("call,error,words", [
    (lambda: lax.approx_max_k(jnp.arange(4), 2), ValueError, "approx_max_k.*floating"),
    (lambda: lax.approx_min_k(jnp.ones(4), 5), ValueError, "approx_min_k"),
    (lambda: lax.approx_max_k(jnp.ones(4), 1, recall_target=1.5), ValueError, "recall_target"),
    (lambda: lax.stack([jnp.ones(2), jnp.ones(3)]), TypeError, "stack"),
    (lambda: lax.unstack(jnp.ones(2), 1), ValueError, "unstack"),
    (lambda: lax.scatter_sub(jnp.ones(3), jnp.zeros(1, jnp.int32), jnp.ones(1),
                             lax.ScatterDimensionNumbers((), (0,), (0,))), TypeError,
     "scatter_sub"),
    (lambda: lax.scatter_apply(jnp.ones(3), jnp.zeros(1, jnp.int32), 3, 0), TypeError, "func"),
    (lambda: lax.conv_general_permutations(("NHW", "HWIO", "NHWC")), TypeError,
     "conv_general_permutations"),
    (lambda: lax.rng_bit_generator(jnp.zeros(2, jnp.uint32), (3,)), TypeError, "uint32\\[4\\]"),
    (lambda: lax.rng_bit_generator(jnp.zeros(4, jnp.uint32), (3,), jnp.int32), TypeError,
     "unsigned"),
    (lambda: lax.rng_uniform(jnp.float32(0), jnp.ones(2), (3,)), TypeError, "rng_uniform"),
    (lambda: lax.platform_dependent(jnp.ones(2), gpu=jnp.sin), ValueError, "cuda"),
    (lambda: lax.platform_dependent(jnp.ones(2), tpu=jnp.sin), NotImplementedError, "default"),
    (lambda: lax.pshuffle(jnp.ones(2), "i", [0, 0]), ValueError, "pshuffle"),
    (lambda: lax.pswapaxes(jnp.ones(2), "i", 0, axis_index_groups=[[0]]), NotImplementedError,
     "pswapaxes"),
    (lambda: lax.random_gamma_grad(jnp.ones(2), jnp.ones(2, jnp.int32)), TypeError,
     "random_gamma_grad"),
    (lambda: lax.GatherScatterMode.from_any("wrap"), ValueError, "wrap"),
])
def test_bad_arguments_raise_typed_errors_naming_the_function(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_log2_and_one_minus_square():
    """JAX 0.11's lax.log2 and lax.one_minus_square (absent from JAX 0.10: against NumPy)."""
    x = np.array([0.25, 1.0, 3.0, 8.0])
    close(lax.log2(jnp.asarray(x)), np.log2(x))
    close(lax.one_minus_square(jnp.asarray(x)), 1 - x * x)
    close(netcl.grad(lambda v: jnp.sum(lax.one_minus_square(v)))(jnp.asarray(x)), -2 * x)
    for f in (lax.log2, lax.one_minus_square):
        with pytest.raises(TypeError, match=f"{f.__name__}: x must be floating"):
            f(jnp.arange(3))
