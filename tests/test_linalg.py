"""dot_general and the netcl.numpy products (matmul, dot, einsum, ...) against NumPy."""
import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.primitives.linalg import batch_matmul, dot, dot_general

from util import assert_close, rand, to_device

SIZES = [0, 1, 2, 3, 5, 7]
DTYPES = [np.float32, np.float64, np.int32]


def _tol(dtype, k):
    """Absolute tolerance for a sum of k products of values in [-3, 3]."""
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        return 0
    eps = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-14}[dtype.type]
    return eps * 9 * max(k, 1) * 4


def _check(got, want, dtype, k):
    got_h = np.asarray(got)
    assert got_h.shape == np.shape(want), (got_h.shape, np.shape(want))
    assert got_h.dtype == np.dtype(dtype), (got_h.dtype, dtype)
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got_h.astype(np.float64), want, rtol=0, atol=_tol(dtype, k))
    else:
        np.testing.assert_array_equal(got_h, want.astype(dtype))


def _ref_product(dtype):
    return np.int64 if np.dtype(dtype).kind == "i" else np.float64


# ---- dot_general with random dimension numbers -------------------------------------------------

@st.composite
def dot_problems(draw):
    nb, nc, nl, nr = (draw(st.integers(0, 2)) for _ in range(4))
    size = st.sampled_from(SIZES)
    b = [draw(size) for _ in range(nb)]
    c = [draw(size) for _ in range(nc)]
    lf = [draw(size) for _ in range(nl)]
    rf = [draw(size) for _ in range(nr)]
    # labels: batch 'a'.., contracting 'k'.., lhs free 'm'.., rhs free 'x'..
    l_labels = list("ab"[:nb]) + list("kl"[:nc]) + list("mn"[:nl])
    r_labels = list("ab"[:nb]) + list("kl"[:nc]) + list("xy"[:nr])
    sizes = dict(zip("ab", b)) | dict(zip("kl", c)) | dict(zip("mn", lf)) | dict(zip("xy", rf))
    l_labels = [l_labels[i] for i in draw(st.permutations(range(len(l_labels))))]
    r_labels = [r_labels[i] for i in draw(st.permutations(range(len(r_labels))))]
    lc = tuple(l_labels.index(x) for x in "kl"[:nc])
    rc = tuple(r_labels.index(x) for x in "kl"[:nc])
    lb = tuple(l_labels.index(x) for x in "ab"[:nb])
    rb = tuple(r_labels.index(x) for x in "ab"[:nb])
    lshape = tuple(sizes[x] for x in l_labels)
    rshape = tuple(sizes[x] for x in r_labels)
    out = "".join("ab"[:nb]) + "".join(x for x in l_labels if x in "mn") + \
        "".join(x for x in r_labels if x in "xy")
    spec = f"{''.join(l_labels)},{''.join(r_labels)}->{out}"
    k = int(np.prod(c)) if c else 1
    return lshape, rshape, ((lc, rc), (lb, rb)), spec, k


@settings(max_examples=100, deadline=None)
@given(dot_problems(), st.sampled_from(DTYPES),
       st.sampled_from(["dense", "transposed", "reversed"]),
       st.sampled_from(["dense", "transposed"]), st.integers(0, 2**32 - 1))
def test_dot_general_random(problem, dtype, layout_l, layout_r, seed):
    lshape, rshape, dn, spec, k = problem
    rng = np.random.default_rng(seed)
    x, y = rand(rng, lshape, dtype), rand(rng, rshape, dtype)
    got = dot_general(to_device(x, layout_l), to_device(y, layout_r), dn)
    r = _ref_product(dtype)
    _check(got, np.einsum(spec, x.astype(r), y.astype(r)), dtype, k)


def test_dot_general_preferred_and_float16():
    rng = np.random.default_rng(0)
    x, y = rand(rng, (5, 7), np.float16), rand(rng, (7, 3), np.float16)
    want = x.astype(np.float64) @ y.astype(np.float64)
    got = dot_general(jnp.asarray(x), jnp.asarray(y), (((1,), (0,)), ((), ())))
    assert got.dtype == np.float16
    np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=0.1, rtol=2e-3)
    got = dot_general(jnp.asarray(x), jnp.asarray(y), (((1,), (0,)), ((), ())),
                      preferred_element_type=np.float32)
    _check(got, want, np.float32, 7)
    xi, yi = rand(rng, (4, 6), np.int32), rand(rng, (6, 2), np.int32)
    got = dot_general(jnp.asarray(xi), jnp.asarray(yi), (((1,), (0,)), ((), ())),
                      preferred_element_type=np.float32)
    _check(got, xi.astype(np.float64) @ yi, np.float32, 6)


@pytest.mark.parametrize("m,n,k", [(211, 257, 131), (97, 1, 61), (1, 127, 253), (131, 67, 1)])
@pytest.mark.parametrize("layout", [("dense", "dense"), ("transposed", "transposed"),
                                    ("dense", "transposed"), ("reversed", "dense")])
def test_matmul_primes_tiles(m, n, k, layout):
    """Sizes that cross the tuned kernel's tile edges, in every operand layout."""
    rng = np.random.default_rng(m * n + k)
    x, y = rand(rng, (m, k)), rand(rng, (k, n))
    got = jnp.matmul(to_device(x, layout[0]), to_device(y, layout[1]))
    _check(got, x.astype(np.float64) @ y, np.float32, k)


def test_batched_strided_and_broadcast_operands():
    if netcl.default_device().is_numpy:
        pytest.skip("strided layouts are an OpenCL-device matter")
    rng = np.random.default_rng(1)
    x, y = rand(rng, (4, 3, 9, 5)), rand(rng, (3, 5, 6))
    xd = jnp.asarray(x)
    # a batch-strided view (every other batch entry), and a broadcast (stride-0) batch
    xs = netcl.lax.slice(xd, (0, 0, 0, 0), (4, 3, 9, 5), (2, 1, 1, 1))
    yb = jnp.broadcast_to(jnp.asarray(y), (2, 3, 5, 6))
    _check(jnp.matmul(xs, yb), x[::2].astype(np.float64) @ y, np.float32, 5)
    # a column slice: leading dimension larger than the row length
    xc = netcl.lax.slice(xd, (0, 0, 0, 1), (4, 3, 9, 4))
    yc = jnp.asarray(rand(rng, (3, 7)))
    _check(jnp.matmul(xc, yc), x[..., 1:4].astype(np.float64) @ np.asarray(yc), np.float32, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_simple_kernel_fallback(monkeypatch, dtype):
    """Where gemm.py cannot give a kernel, the simple tiled kernel computes the same."""
    if netcl.default_device().is_numpy:
        pytest.skip("kernels are an OpenCL-device matter")
    from netcl.primitives import linalg

    def refuse(*args, **kwargs):
        raise ValueError("no config")
    monkeypatch.setattr(linalg.gemm_tiers, "choose_config", refuse)
    rng = np.random.default_rng(13)
    x, y = rand(rng, (2, 19, 23), dtype), rand(rng, (2, 17, 23), dtype)
    for lx, ly in (("dense", "dense"), ("transposed", "transposed")):
        got = dot_general(to_device(x, lx), to_device(y, ly), (((2,), (2,)), ((0,), (0,))))
        _check(got, np.einsum("bmk,bnk->bmn", x.astype(np.float64), y), dtype, 23)


@pytest.mark.parametrize("parts", [2, 8])
@pytest.mark.parametrize("layout", ["dense", "transposed", "reversed"])
def test_split_k_products(monkeypatch, parts, layout):
    """GPUs split long contractions with few output tiles into K chunks plus a sum kernel
    (split_k.py); forced here so the path runs on any device."""
    if netcl.default_device().is_numpy:
        pytest.skip("kernels are an OpenCL-device matter")
    from netcl.primitives import linalg
    monkeypatch.setattr(linalg, "_split_count", lambda device, kd, B, M, N, K: parts)
    rng = np.random.default_rng(parts)
    x, y = rand(rng, (9, 64 * parts), np.float32), rand(rng, (64 * parts, 5), np.float32)
    got = dot_general(to_device(x, layout), to_device(y, layout), (((1,), (0,)), ((), ())))
    _check(got, x.astype(np.float64) @ y, np.float32, 64 * parts)
    # a jitted product with an epilogue falls back to two kernels when it is split
    f = netcl.jit(lambda a, b: jnp.tanh(a @ b))
    assert_close(f(jnp.asarray(x), jnp.asarray(y)), np.tanh(x.astype(np.float64) @ y),
                 rtol=1e-4, atol=1e-5)

def test_uint32_wraps():
    a = np.array([[2**31, 3], [1, 2**32 - 1]], np.uint32)
    got = jnp.matmul(jnp.asarray(a), jnp.asarray(a))
    want = (a.astype(np.uint64) @ a.astype(np.uint64)) % 2**32
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.uint32))
    b = np.array([[2**30, 2**30], [7, -3]], np.int32)
    got = jnp.matmul(jnp.asarray(b), jnp.asarray(b))
    want = ((b.astype(np.int64) @ b.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_lax_dot_and_batch_matmul():
    rng = np.random.default_rng(2)
    a, b, v = rand(rng, (3, 4)), rand(rng, (4, 5)), rand(rng, (4,))
    _check(dot(jnp.asarray(a), jnp.asarray(b)), a.astype(np.float64) @ b, np.float32, 4)
    _check(dot(jnp.asarray(a), jnp.asarray(v)), a.astype(np.float64) @ v, np.float32, 4)
    _check(dot(jnp.asarray(v), jnp.asarray(v)), v.astype(np.float64) @ v, np.float32, 4)
    p, q = rand(rng, (2, 3, 4, 5)), rand(rng, (2, 3, 5, 2))
    _check(batch_matmul(jnp.asarray(p), jnp.asarray(q)), p.astype(np.float64) @ q,
           np.float32, 5)


# ---- matmul (NumPy semantics) ----------------------------------------------------------------

@st.composite
def matmul_shapes(draw):
    size = st.sampled_from([0, 1, 2, 3, 5])
    m, k, n = draw(size), draw(size), draw(size)
    nd = draw(st.integers(0, 3))
    batch = [draw(st.sampled_from([1, 2, 3])) for _ in range(nd)]

    def operand_batch():
        keep = draw(st.integers(0, nd))
        return tuple(1 if draw(st.booleans()) else d for d in batch[nd - keep:])
    a_vec, b_vec = draw(st.booleans()), draw(st.booleans())
    ashape = (k,) if a_vec else operand_batch() + (m, k)
    bshape = (k,) if b_vec else operand_batch() + (k, n)
    return ashape, bshape


@settings(max_examples=100, deadline=None)
@given(matmul_shapes(), st.sampled_from(DTYPES), st.sampled_from(["dense", "transposed"]),
       st.integers(0, 2**32 - 1))
def test_matmul_broadcasting(shapes, dtype, layout, seed):
    ashape, bshape = shapes
    rng = np.random.default_rng(seed)
    a, b = rand(rng, ashape, dtype), rand(rng, bshape, dtype)
    r = _ref_product(dtype)
    want = np.matmul(a.astype(r), b.astype(r))
    _check(jnp.matmul(to_device(a, layout), to_device(b, "dense")), want, dtype, ashape[-1])
    _check(to_device(a, "dense") @ to_device(b, layout), want, dtype, ashape[-1])


def test_matmul_promotion_and_bool():
    a = jnp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    b = jnp.asarray(np.ones((3, 2), np.float32))
    assert jnp.matmul(a, b).dtype == np.float32
    assert jnp.matmul(b, 2.0 * jnp.ones((2, 2), jnp.float32)).dtype == np.float32
    p = np.array([[True, False], [False, False]])
    q = np.array([[True], [True]])
    got = jnp.matmul(jnp.asarray(p), jnp.asarray(q))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), np.matmul(p, q))


# ---- dot, vdot, inner, outer, tensordot, kron ------------------------------------------------

@pytest.mark.parametrize("fn,shapes", [
    ("dot", [(3, 4), (4, 5)]), ("dot", [(2, 3, 4), (5, 4, 2)]), ("dot", [(4,), (4,)]),
    ("dot", [(2, 4), (4,)]), ("dot", [(), (2, 3)]), ("dot", [(0, 3), (3, 2)]),
    ("vdot", [(2, 3), (3, 2)]), ("inner", [(2, 3), (4, 3)]), ("inner", [(3,), (3,)]),
    ("inner", [(2,), ()]), ("outer", [(2, 3), (4,)]), ("kron", [(2, 3), (3, 2)]),
    ("kron", [(2,), (2, 3)]),
])
def test_products(fn, shapes):
    rng = np.random.default_rng(3)
    xs = [rand(rng, s) for s in shapes]
    got = getattr(jnp, fn)(*[jnp.asarray(x) for x in xs])
    want = getattr(np, fn)(*[x.astype(np.float64) for x in xs])
    _check(got, np.asarray(want), np.float32, 12)


@pytest.mark.parametrize("axes", [0, 1, 2, ([0, 2], [2, 0]), (1, 0), ([2], [0])])
def test_tensordot(axes):
    rng = np.random.default_rng(4)
    a, b = rand(rng, (2, 3, 4)), rand(rng, (4, 3, 2))
    if axes in (1, 2):
        b = rand(rng, (3, 4, 2)) if axes == 2 else rand(rng, (4, 3, 2))
    if axes == (1, 0):
        b = rand(rng, (3, 5))
    got = jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes)
    _check(got, np.tensordot(a.astype(np.float64), b, axes), np.float32, 24)


# ---- einsum ----------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->ji", [(3, 4)]),
    ("i,i->", [(5,), (5,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),
    ("...ij,...jk->...ik", [(3, 4), (4, 6)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ba", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ij,kl->iljk", [(2, 3), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]),
    ("i,j->ij", [(0,), (3,)]),
    ("ij,jk->ik", [(3, 0), (0, 2)]),
    ("bn,anm->bm", [(3, 4), (2, 4, 5)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_einsum(spec, shapes, dtype):
    rng = np.random.default_rng(5)
    xs = [rand(rng, s, dtype) for s in shapes]
    got = jnp.einsum(spec, *[jnp.asarray(x) for x in xs])
    r = _ref_product(dtype)
    _check(got, np.einsum(spec, *[x.astype(r) for x in xs]), dtype, 60)


def test_einsum_transposed_inputs():
    rng = np.random.default_rng(6)
    q, k = rand(rng, (2, 3, 4, 5)), rand(rng, (2, 3, 6, 5))
    got = jnp.einsum("bhqd,bhkd->bhqk", to_device(q, "transposed"), to_device(k, "reversed"))
    _check(got, np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), k), np.float32, 5)


# ---- norm ------------------------------------------------------------------------------------

def _norm_or_skip(*args, **kwargs):
    return jnp.norm(*args, **kwargs)


@pytest.mark.parametrize("shape,ord,axis", [
    ((5,), None, None), ((5,), 2, None), ((5,), 1, None), ((5,), np.inf, None),
    ((5,), -np.inf, None), ((5,), 0, None), ((5,), 3, None), ((3, 4), None, None),
    ((3, 4), "fro", None), ((3, 4), 1, None), ((3, 4), np.inf, None), ((3, 4), -1, None),
    ((2, 3, 4), None, 1), ((2, 3, 4), 1, -1), ((2, 3, 4), "fro", (0, 2)), ((2, 3, 4), None, None),
])
def test_norm(shape, ord, axis):
    rng = np.random.default_rng(7)
    x = rand(rng, shape)
    x.reshape(-1)[0] = 0.0
    for keepdims in (False, True):
        got = _norm_or_skip(jnp.asarray(x), ord, axis, keepdims)
        want = np.linalg.norm(x.astype(np.float64), ord, axis, keepdims)
        assert_close(got, np.asarray(want), np.float32, rtol=1e-5, atol=1e-5)


def test_norm_int_input_and_bad_ord():
    got = jnp.norm(jnp.asarray(np.array([3, 4], np.int32)))
    assert got.dtype == np.float32 and float(got) == 5.0
    with pytest.raises(ValueError, match="norm"):
        jnp.norm(jnp.ones((3, 3)), 2)
    with pytest.raises(ValueError, match="norm"):
        jnp.norm(jnp.ones((3,)), "fro")
    with pytest.raises(ValueError, match="norm"):
        jnp.norm(jnp.ones((2, 2, 2)), 1)


# ---- bad input -------------------------------------------------------------------------------

def test_bad_inputs():
    a, b = jnp.ones((2, 3)), jnp.ones((4, 5))
    with pytest.raises(ValueError, match=r"dot_general.*\(2, 3\).*\(4, 5\)"):
        dot_general(a, b, (((1,), (0,)), ((), ())))
    with pytest.raises(ValueError, match="dot_general.*batch"):
        dot_general(jnp.ones((2, 3)), jnp.ones((3, 3)), (((1,), (0,)), ((0,), (1,))))
    with pytest.raises(ValueError, match="dot_general"):
        dot_general(a, b, (((5,), (0,)), ((), ())))
    with pytest.raises(ValueError, match="dot_general"):
        dot_general(a, b, (((1, 0), (0,)), ((), ())))
    with pytest.raises(ValueError, match="dot_general.*distinct"):
        dot_general(jnp.ones((3, 3)), jnp.ones((3, 3)), (((0,), (0,)), ((0,), (1,))))
    with pytest.raises(TypeError, match="dot_general.*dtypes"):
        dot_general(jnp.ones((2, 3)), jnp.ones((3, 2), dtype=np.int32), (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="dot_general.*bool"):
        dot_general(jnp.ones((2, 3), bool), jnp.ones((3, 2), bool), (((1,), (0,)), ((), ())))
    with pytest.raises(ValueError, match=r"matmul.*\(2, 3\).*\(4, 5\)"):
        jnp.matmul(a, b)
    with pytest.raises(ValueError, match="matmul.*at least 1 dimension"):
        jnp.matmul(jnp.ones(()), a)
    with pytest.raises(ValueError, match="matmul.*broadcast"):
        jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 2)))
    with pytest.raises(ValueError, match="dot.*aligned"):
        jnp.dot(a, b)
    with pytest.raises(ValueError, match="vdot"):
        jnp.vdot(a, b)
    with pytest.raises(ValueError, match="inner"):
        jnp.inner(a, b)
    with pytest.raises(ValueError, match="tensordot"):
        jnp.tensordot(a, b, 1)
    with pytest.raises(ValueError, match="tensordot"):
        jnp.tensordot(a, b, ([0], [0, 1]))
    with pytest.raises(TypeError, match="dot"):
        dot(jnp.ones((2, 2, 2)), a)


@pytest.mark.parametrize("spec,shapes,match", [
    ("ij,jk->ik", [(2, 3), (4, 5)], "index 'j' has sizes 3 and 4"),
    ("ij,jk->ikx", [(2, 3), (3, 5)], "output index 'x'"),
    ("ij,jk", [(2, 3)], "2 input term"),
    ("ij", [(2, 3, 4)], "'ij' has 2 indices"),
    ("i.j", [(2, 3)], "ellipsis"),
    ("i1", [(2, 3)], "invalid characters"),
    ("ii->i", [(3, 3)], "not supported"),
    ("ij->ii", [(3, 3)], "repeats an index"),
    ("ij->i->j", [(3, 3)], "more than one"),
    ("...ij->ij", [(2, 3, 4)], "no '...'"),
])
def test_einsum_bad_inputs(spec, shapes, match):
    xs = [jnp.ones(s) for s in shapes]
    with pytest.raises(ValueError, match="einsum") as info:
        jnp.einsum(spec, *xs)
    assert match in str(info.value) and repr(spec) in str(info.value)
    with pytest.raises(TypeError, match="einsum"):
        jnp.einsum(3, jnp.ones(2))


# ---- gradients and vmap ----------------------------------------------------------------------

def _check_grads():
    return pytest.importorskip("netcl.test_util").check_grads


GRAD_DNS = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),
    ((2, 3, 4), (4, 2, 5), (((2,), (0,)), ((0,), (1,)))),
    ((2, 3, 4), (3, 4, 2), (((1, 2), (0, 1)), ((0,), (2,)))),
    ((2, 3), (4,), (((), ()), ((), ()))),
]


@pytest.mark.parametrize("ls,rs,dn", GRAD_DNS)
def test_dot_general_grads(ls, rs, dn):
    check_grads = _check_grads()
    rng = np.random.default_rng(8)
    x, y = jnp.asarray(rng.standard_normal(ls)), jnp.asarray(rng.standard_normal(rs))
    check_grads(lambda a, b: dot_general(a, b, dn), (x, y), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("fn,shapes", [
    (lambda a, b: jnp.matmul(a, b), [(2, 3, 4), (4, 5)]),
    (lambda a, b: jnp.matmul(a, b), [(4,), (2, 4, 3)]),
    (lambda a, b: jnp.einsum("bhqd,bhkd->bhqk", a, b), [(1, 2, 3, 4), (1, 2, 2, 4)]),
    (lambda a, b: jnp.einsum("ij,jk->", a, b), [(2, 3), (3, 2)]),
    (lambda a, b: jnp.tensordot(a, b, ([0, 2], [2, 0])), [(2, 3, 4), (4, 3, 2)]),
    (lambda a: jnp.norm(a), [(3, 4)]),
    (lambda a: jnp.norm(a, axis=0), [(3, 4)]),
])
def test_numpy_product_grads(fn, shapes):
    check_grads = _check_grads()
    rng = np.random.default_rng(9)
    args = tuple(jnp.asarray(rng.standard_normal(s) + 0.5) for s in shapes)
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


def test_grad_float16_preferred_float32():
    netcl_grad = getattr(netcl, "grad", None)
    if netcl_grad is None:
        pytest.skip("netcl.grad not available")
    rng = np.random.default_rng(10)
    x, y = rand(rng, (3, 4), np.float16), rand(rng, (4, 2), np.float16)
    dn = (((1,), (0,)), ((), ()))
    ones = jnp.ones((3, 2))
    g = netcl_grad(lambda a: jnp.vdot(dot_general(a, jnp.asarray(y), dn,
                                                  preferred_element_type=np.float32),
                                      ones))(jnp.asarray(x))
    assert g.dtype == np.float16
    want = np.ones((3, 2)) @ y.astype(np.float64).T
    np.testing.assert_allclose(np.asarray(g, np.float64), want, atol=2e-2, rtol=2e-3)


VMAP_CASES = [  # (lhs shape, rhs shape, dn, in_axes), shapes include the mapped axis
    ((3, 2, 4), (4, 5), (((1,), (0,)), ((), ())), (0, None)),
    ((2, 4), (4, 3, 5), (((1,), (0,)), ((), ())), (None, 1)),
    ((2, 3, 4), (4, 5, 3), (((1,), (0,)), ((), ())), (1, 2)),
    ((3, 2, 6, 4), (2, 4, 3, 5), (((2,), (1,)), ((0,), (0,))), (0, 2)),
    ((2, 6, 4, 3), (2, 4, 5), (((2,), (1,)), ((0,), (0,))), (3, None)),
    ((2, 6, 4), (3, 2, 4, 5), (((2,), (1,)), ((0,), (0,))), (None, 0)),
]


@pytest.mark.parametrize("ls,rs,dn,in_axes", VMAP_CASES)
def test_dot_general_vmap(ls, rs, dn, in_axes):
    vmap = getattr(netcl, "vmap", None)
    if vmap is None:
        pytest.skip("netcl.vmap not available")
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal(ls), rng.standard_normal(rs)
    got = vmap(lambda a, b: dot_general(a, b, dn), in_axes=in_axes)(jnp.asarray(x), jnp.asarray(y))
    size = ls[in_axes[0]] if in_axes[0] is not None else rs[in_axes[1]]
    want = []
    for i in range(size):
        xi = x if in_axes[0] is None else np.take(x, i, axis=in_axes[0])
        yi = y if in_axes[1] is None else np.take(y, i, axis=in_axes[1])
        (lc, rc), (lb, rb) = dn
        want.append(_np_dot_general(xi, yi, dn))
    _check(got, np.stack(want), np.float64, 8)


def _np_dot_general(x, y, dn):
    (lc, rc), (lb, rb) = dn
    letters = iter(string.ascii_letters)
    xl = [next(letters) for _ in range(x.ndim)]
    yl = [next(letters) for _ in range(y.ndim)]
    for a, b in zip(lc + lb, rc + rb):
        yl[b] = xl[a]
    out = [xl[d] for d in lb] + [c for i, c in enumerate(xl) if i not in lc + lb] + \
        [c for i, c in enumerate(yl) if i not in rc + rb]
    return np.einsum(f"{''.join(xl)},{''.join(yl)}->{''.join(out)}", x, y)


def test_matmul_vmap_and_grad_of_vmap():
    vmap = getattr(netcl, "vmap", None)
    if vmap is None:
        pytest.skip("netcl.vmap not available")
    rng = np.random.default_rng(12)
    w, xs = rng.standard_normal((4, 3)), rng.standard_normal((5, 2, 4))
    got = vmap(jnp.matmul, in_axes=(0, None))(jnp.asarray(xs), jnp.asarray(w))
    _check(got, xs @ w, np.float64, 4)
    check_grads = _check_grads()
    check_grads(lambda a, b: vmap(jnp.matmul, in_axes=(0, None))(a, b),
                (jnp.asarray(xs), jnp.asarray(w)), order=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weight_gradient_products_read_packed_operands(monkeypatch, dtype):
    """On CPUs an A^T B product over more than one block each way packs its operands once
    (linalg._packer, gemm_cpu.packed_source); eager, offset views and a jitted epilogue."""
    dev = netcl.default_device()
    if dev.is_numpy or dev.kind != "cpu":
        pytest.skip("operand packing is a CPU-device path")
    from netcl.primitives import linalg
    calls = []
    packer = linalg._packer
    monkeypatch.setattr(linalg, "_packer", lambda *a: calls.append(a[3:]) or packer(*a))
    rng = np.random.default_rng(5)
    K, M, N = 203, 209, 211                        # M*N*K above linalg.PACK_MIN_FMAS
    assert K * M * N >= linalg.PACK_MIN_FMAS
    x, y, c = rand(rng, (K + 1, M), dtype), rand(rng, (K, N), dtype), rand(rng, (N,), dtype)
    want = x[1:].T.astype(np.float64) @ y
    xd, yd = netcl.device_put(x), netcl.device_put(y)
    _check(jnp.matmul(xd[1:].T, yd), want, dtype, K)          # A read from an offset
    got = netcl.jit(lambda a, b, c: jnp.maximum(a[1:].T @ b + c, 0))(xd, yd, netcl.device_put(c))
    _check(got, np.maximum(want + c, 0), dtype, K)
    assert len(calls) == 2, "both products should have packed their operands"
