"""Elementwise semantics (integer division, rounding, weak types), errors and derivative rules.
"""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.primitives import elementwise as ew
from netcl.test_util import check_grads
from util import assert_close, rand

# Every elementwise primitive against its NumPy reference over drawn shapes, layouts, dtypes
# and values: tests/test_primitive_tables.py (parametrized over the table itself).


def test_integer_division_never_traps():
    a = jnp.array([7, -7, 5, -2147483648, 0], jnp.int32)
    b = jnp.array([0, 2, -3, -1, 0], jnp.int32)
    assert np.asarray(lax.div(a, b)).tolist() == [-1, -3, -1, -2147483648, -1]
    assert np.asarray(lax.rem(a, b)).tolist() == [7, -1, 2, 0, 0]
    assert np.asarray(jnp.floor_divide(a, b)).tolist() == [0, -4, -2, -2147483648, 0]


@pytest.mark.parametrize("dtype", ["float16", "float64", "uint32"])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(0)
    x = rand(rng, (5, 3), dtype, 0, 4)
    y = rand(rng, (5, 3), dtype, 1, 4)
    assert_close(jnp.add(x, y), (x + y).astype(dtype), dtype)
    assert_close(jnp.multiply(jnp.asarray(x), jnp.asarray(y)), (x * y).astype(dtype), dtype)
    if np.dtype(dtype).kind == "f":
        assert_close(jnp.exp(jnp.asarray(x)), np.exp(x.astype(np.float64)).astype(dtype),
                     dtype, rtol=2e-3)


def test_select_clamp_convert():
    rng = np.random.default_rng(1)
    x = rand(rng, (4, 5), np.float32, -3, 3, special=True)
    p = x > 0
    assert_close(lax.select(jnp.asarray(p), jnp.asarray(x), jnp.zeros((4, 5), jnp.float32)),
                 np.where(p, x, 0))
    lo, hi = np.full((4, 5), -1, np.float32), np.full((4, 5), 1, np.float32)
    assert_close(lax.clamp(jnp.asarray(lo), jnp.asarray(x), jnp.asarray(hi)),
                 ew.clamp_p.reference(lo, x, hi))
    conv = lax.convert_element_type(jnp.asarray(x), jnp.int32)
    assert_close(conv, ew.convert_element_type_p.reference(x, np.dtype(np.int32)))
    assert np.asarray(lax.convert_element_type(jnp.array([0.0, 2.5]), jnp.bool_)).tolist() == \
        [False, True]


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_next_to_an_infinity(name):
    """An infinity in the same 8-vector did not spoil its neighbours (PoCL's vector trig gave
    sin(1e-6) = 0.0082 there): the kernels turn infinities into NaN before the call."""
    x = np.array([1e-6, 5.8e-4, 0.3, np.inf, -3.0, -np.inf, -0.0, 2.0] * 2, np.float32)
    with np.errstate(invalid="ignore"):
        want = getattr(np, name)(x)
    for f in (getattr(lax, name), netcl.jit(getattr(lax, name))):
        assert_close(f(jnp.asarray(x)), want, np.float32, rtol=1e-6, atol=0)


def test_round_methods():
    x = jnp.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997])
    assert np.asarray(lax.round(x, 0)).tolist() == [1, 2, 3, -1, -3, 0]
    assert np.asarray(jnp.round(x)).tolist() == [0, 2, 2, -0.0, -2, 0]


def test_integer_pow():
    x = jnp.array([1.5, -2.0, 3.0])
    for y in (-3, 0, 1, 2, 5):
        assert_close(lax.integer_pow(x, y), np.array([1.5, -2.0, 3.0], np.float32) ** y,
                     rtol=1e-6)
    assert np.asarray(jnp.array([2, -3]) ** 3).tolist() == [8, -27]


def test_weak_type_promotion():
    x = jnp.ones(3, jnp.float32)
    assert (x * 2).dtype == np.float32 and (x * 2.0).dtype == np.float32
    i = jnp.arange(3)
    assert i.dtype == netcl.core.dtypes.default_int_dtype()     # (int64 with x64)
    assert (i * 2).dtype == i.dtype
    i32 = jnp.arange(3, dtype=jnp.int32)
    assert (i32 * 2).dtype == np.int32 and (i32 + jnp.asarray(2)).dtype == np.int32
    assert (i * 2.5).dtype == np.float64    # the default float (x64 on: conftest.py)
    assert (i + jnp.ones(3, jnp.float16)).dtype == np.float16
    h = jnp.ones(3, jnp.float16)
    assert (h + 1.0).dtype == np.float16
    assert jnp.sin(i32).dtype == np.float32 and jnp.sin(i).dtype == \
        netcl.core.dtypes.inexact_dtype(i.dtype)     # (int64: float64, as JAX's)
    assert (jnp.ones(2, jnp.float64) + jnp.ones(2, jnp.float32)).dtype == np.float64


@pytest.mark.parametrize("fn, bad, err", [
    (lambda: lax.add(jnp.ones(3), jnp.ones(4)), ValueError, "add: operands must have equal shapes"),
    (lambda: lax.add(jnp.ones(3), jnp.ones(3, jnp.int32)), TypeError, "add: .*equal dtypes"),
    (lambda: lax.exp(jnp.ones(3, jnp.int32)), TypeError, "exp: operand of dtype int32"),
    (lambda: jnp.add(jnp.ones((2, 3)), jnp.ones((4,))), TypeError,
     r"add got incompatible shapes for broadcasting: \(2, 3\), \(4,\)"),
    (lambda: jnp.add(jnp.ones(2), "a"), TypeError, "numeric"),
    (lambda: lax.select(jnp.ones(3), jnp.ones(3), jnp.ones(3)), TypeError, "select: pred"),
    (lambda: jnp.bitwise_and(jnp.ones(2), jnp.ones(2)), TypeError, "bitwise_and"),
])
def test_bad_input(fn, bad, err):
    with pytest.raises(bad, match=err):
        fn()


# ---- derivatives --------------------------------------------------------------------------

GRAD_CASES = [
    (jnp.sin, (-2, 2)), (jnp.cos, (-2, 2)), (jnp.tan, (-1, 1)), (jnp.exp, (-2, 2)),
    (jnp.exp2, (-2, 2)), (jnp.log, (0.5, 3)), (jnp.log1p, (0.1, 2)), (jnp.expm1, (-1, 1)),
    (jnp.sqrt, (0.5, 3)), (lax.rsqrt, (0.5, 3)), (jnp.square, (-2, 2)),
    (jnp.reciprocal, (0.5, 2)), (jnp.tanh, (-2, 2)), (lax.logistic, (-3, 3)),
    (jnp.arcsin, (-0.8, 0.8)), (jnp.arccos, (-0.8, 0.8)), (jnp.arctan, (-2, 2)),
    (jnp.sinh, (-2, 2)), (jnp.cosh, (-2, 2)), (jnp.arcsinh, (-2, 2)), (jnp.arccosh, (1.2, 3)),
    (jnp.arctanh, (-0.8, 0.8)), (lax.erf, (-2, 2)), (lax.erf_inv, (-0.8, 0.8)),
    (jnp.abs, (0.2, 2)), (lambda x: x ** 3, (-2, 2)), (lambda x: x ** -2, (0.5, 2)),
    (lambda x: jnp.maximum(x, 0.3), (-2, 2)), (lambda x: jnp.clip(x, -0.5, 0.5), (-2, 2)),
    (lambda x: jnp.where(x > 0, x * x, -x), (-2, 2)), (lambda x: x.astype(jnp.float32), (-1, 1)),
]


@pytest.mark.parametrize("k", range(len(GRAD_CASES)))
def test_unary_grads(k):
    f, (lo, hi) = GRAD_CASES[k]
    rng = np.random.default_rng(k)
    x = jnp.asarray(rng.uniform(lo, hi, size=(3,)))  # float64 on the device
    if f is GRAD_CASES[30][0]:  # the float32 cast: first order only (precision)
        check_grads(f, (x,), order=1, modes=("rev",), atol=1e-3, rtol=1e-3)
        return
    check_grads(f, (x,), order=2)


@pytest.mark.parametrize("f", [jnp.add, jnp.subtract, jnp.multiply, jnp.divide, jnp.power,
                               jnp.arctan2, jnp.maximum, jnp.minimum, jnp.fmod])
def test_binary_grads(f):
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.uniform(0.5, 2, size=(4,)))
    y = jnp.asarray(rng.uniform(0.5, 2, size=(4,)))
    check_grads(f, (x, y), order=2)


def test_max_tie_splits_gradient():
    g = netcl.grad(lambda x, y: jnp.sum(jnp.maximum(x, y)), argnums=(0, 1))(
        jnp.array([1.0, 2.0]), jnp.array([1.0, 0.0]))
    assert np.asarray(g[0]).tolist() == [0.5, 1.0] and np.asarray(g[1]).tolist() == [0.5, 0.0]


def test_vmap_elementwise_mixed_axes():
    a = jnp.asarray(np.arange(6.0).reshape(2, 3))
    b = jnp.asarray(np.arange(2.0))
    out = netcl.vmap(lambda x, y: x * y + 1.0, in_axes=(1, None))(a, b)
    assert_close(out, (np.arange(6.0).reshape(2, 3).T * np.arange(2.0)[None, :] + 1))
    out = netcl.vmap(netcl.vmap(jnp.add, (0, None)), (None, 0))(jnp.ones(2), jnp.ones(3))
    assert out.shape == (3, 2)





def _walk_lengths(chunk):
    return [1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5]


def test_walked_kernels_cover_every_element_and_match_unwalked():
    """On CPUs an elementwise or fused kernel's work-item walks Target.elementwise_walk
    vectors (scalar code: elements) in work-groups of one: lengths that are not a multiple
    of the walk end in a partial walk and a scalar tail, with the same bits as kernels of a
    work-item per vector (a walk of 1)."""
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no kernels on the NumPy fallback")
    walk, width = dev.target.elementwise_walk, dev.target.vector_width
    rng = np.random.default_rng(3)
    fused = netcl.jit(lambda a, b: (jnp.tanh(a * 1.5 + 0.25) * b + 0.5 * a, a - b))
    lengths = sorted(set(_walk_lengths(walk * width) + _walk_lengths(walk)))

    def run_all():
        out = []
        for n in lengths:
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n).astype(np.float32)
            i = rng.integers(-1000, 1000, n).astype(np.int32)
            xd, yd, idd = jnp.asarray(x), jnp.asarray(y), jnp.asarray(i)
            got = [jnp.exp(xd) * yd, idd * 3 + idd, *fused(xd, yd)]
            np.testing.assert_array_equal(np.asarray(got[1]), i * 3 + i)
            assert_close(got[0], np.exp(x.astype(np.float64)) * y, np.float32, rtol=2e-6)
            out += [np.asarray(g) for g in got]
        m = rng.standard_normal((37, 3 * walk + 7)).astype(np.float32)   # strided, broadcast
        md = jnp.asarray(m)
        got = [md.T * 2.0, md + jnp.asarray(m[0]), md[::2, 1:] - 1.0]
        for g, want in zip(got, [m.T * 2, m + m[0], m[::2, 1:] - 1]):
            np.testing.assert_array_equal(np.asarray(g), want)
        return out + [np.asarray(g) for g in got]
    rng = np.random.default_rng(3)
    walked = run_all()
    with netcl.test_util.override_target(dev, elementwise_walk=1):
        rng = np.random.default_rng(3)
        plain = run_all()
    for a, b in zip(walked, plain):
        np.testing.assert_array_equal(a, b)


def test_wide_vectors_compute_bitwise_what_the_vector_width_computes():
    """Targets with wide vectors (16 floats on PoCL's AVX-512 CPU devices) run kernels that
    compute exp or tanh with nothing but netcl's inline math (exp, tanh, logistic, sqrt,
    arithmetic) 16 lanes at a time, with the AVX-512 attribute; every element, through whole
    wide vectors, a last 8-wide one and scalars, comes out bitwise as the target's 8-wide
    kernels give it, eager and jitted. A body calling another builtin (sin), and one without
    exp or tanh, keep 8 lanes."""
    dev = netcl.default_device()
    if dev.is_numpy or not dev.target.wide_vector_width:
        pytest.skip("the device has no wide vectors")
    rng = np.random.default_rng(5)
    n = 2048 * 2 + 16 * 3 + 8 + 5
    x = (rng.standard_normal(n) * 6).astype(np.float32)
    x[:12] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-30, 89.0, -104.5, 8.3177662, 9.0109134,
              0.9, 1.0]

    def w1(v):
        return jnp.tanh(v * 1.5 + 0.25) * netcl.nn.sigmoid(v) + 0.5 * v
    fns = [w1, jnp.exp, jnp.tanh, lambda v: jnp.sqrt(jnp.abs(v)) * jnp.exp(-v) - v]

    def run_all():
        xd = jnp.asarray(x)
        return [np.asarray(g(xd)) for f in fns for g in (f, netcl.jit(f))]
    netcl.clear_caches()
    wide = run_all()
    src = netcl.jit(w1).lower(jnp.asarray(x)).kernels[0].source
    assert dev.target.wide_kernel_attribute in src and "float16" in src
    trig = netcl.jit(lambda v: jnp.sin(v) * 2.0).lower(jnp.asarray(x)).kernels[0].source
    assert "float16" not in trig and dev.target.wide_kernel_attribute not in trig
    plain = netcl.jit(lambda v: v * 2.0 + 1.0).lower(jnp.asarray(x)).kernels[0].source
    assert "float16" not in plain and "float8" in plain
    with netcl.test_util.override_target(dev, wide_vector_width=0):
        narrow = run_all()
    for a, b in zip(wide, narrow):
        same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
        assert same.all(), np.flatnonzero(~same)[:10]


def test_copies_take_the_buffer_copy_or_one_program_per_element_size(monkeypatch):
    """A copy of a dense array (an offset view: jit's dense arguments) is the driver's
    buffer copy, no kernel; fills and gathers of int32, uint32 and float32 share one
    program (they move 32-bit words)."""
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no kernels on the NumPy fallback")
    from netcl.core import kernels
    netcl.clear_caches()
    built = []
    compile_ = kernels._compile
    monkeypatch.setattr(kernels, "_compile", lambda d, s, o: built.append(s) or compile_(d, s, o))
    for n in [1, 9, 5000]:
        x = np.arange(2 * n + 3, dtype=np.float32)
        xd = jnp.asarray(x)
        np.testing.assert_array_equal(np.asarray(ew.copy(xd[3:n + 3])), x[3:n + 3])
        np.testing.assert_array_equal(np.asarray(ew.copy(xd[:n])), x[:n])
        h = jnp.asarray(x.astype(np.float16))
        np.testing.assert_array_equal(np.asarray(ew.copy(h[1:])), x.astype(np.float16)[1:])
    assert built == [], "copies of dense arrays should build no kernel"
    for n in [1, 9, 5000]:
        np.testing.assert_array_equal(np.asarray(jnp.zeros((n,), jnp.int32)), np.zeros(n))
        np.testing.assert_array_equal(np.asarray(jnp.full((n,), 2.5, jnp.float32)),
                                      np.full(n, 2.5))
        np.testing.assert_array_equal(np.asarray(jnp.full((n,), 7, jnp.uint32)), np.full(n, 7))
    assert len(built) == 1, "fills of 32-bit dtypes should share one program"
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(ew.copy(jnp.asarray(m).T)), m.T)
    # a donated argument's buffer offered to the copy of its own offset view
    f = netcl.jit(lambda a: a[2:] * 1, donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x))), x[2:])
    g = netcl.jit(lambda a: lax.slice(a, (1,), (a.shape[0],)), donate_argnums=0)
    np.testing.assert_array_equal(np.asarray(g(jnp.asarray(x))), x[1:])
