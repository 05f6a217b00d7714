"""JAX programs run unchanged, part 2 (issue 25): the jax / jax.lax / jax.numpy / jax.nn
names real programs use beyond test_jax_surface.py's — debug.print and host callbacks
(eagerly and at run time under jit), device_get, eval_shape/ShapeDtypeStruct, linearize,
linear_transpose, custom_gradient, disable_jit, ensure_compile_time_eval, jax.image,
jax.dtypes, lax's scans/reductions/bit operations/indexing helpers, nn's activations and
dot_product_attention, ufunc methods and packbits. Values against JAX (CPU), float64
gradient checks, and bad inputs' errors."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax, nn
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")
jjnp, jl, jn = jax.numpy, jax.lax, jax.nn

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6)).astype(np.float32)


def same(a, b, tol=1e-5, dtype=True):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    if dtype:
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
    wide = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=tol, atol=tol)


def f64(*shape, scale=1.0, low=None):
    x = RNG.standard_normal(shape) * scale
    return jnp.asarray(np.abs(x) + low if low is not None else x, dtype=jnp.float64)


# ---- debug.print, debug.callback, pure_callback --------------------------------------------

def test_debug_print_eager_jit_vmap_grad(capsys):
    x = jnp.arange(3.0, dtype=jnp.float32)
    netcl.debug.print("eager {} s={s:.2f}", x, s=x.sum())

    @netcl.jit
    def f(v):
        y = jnp.sin(v)
        netcl.debug.print("jit {y}", y=y)
        return y * 2

    f(x)
    f(x + 1)        # compiled once; the print runs at run time with this call's values
    netcl.vmap(lambda v: netcl.debug.print("vmap {}", v) or v)(jnp.ones((2, 2)))
    netcl.grad(lambda v: (netcl.debug.print("grad {}", v), jnp.sum(v * v))[1])(x)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "eager [0. 1. 2.] s=3.00"
    assert out[1] == f"jit {np.sin(np.arange(3.0, dtype=np.float32))}"
    assert out[2] == f"jit {np.sin(np.arange(1.0, 4.0, dtype=np.float32))}"
    assert out[3:5] == ["vmap [1. 1.]"] * 2 and out[5] == "grad [0. 1. 2.]"
    with pytest.raises(ValueError, match="debug.print"):
        netcl.debug.print("{} {}", x)

    @netcl.jit
    def unread(v):          # nothing reads the printed value: the print still runs
        netcl.debug.print("unread {}", v[0])
        netcl.debug.print("unread {}", v[0])
        return v + 1
    unread(x)
    assert capsys.readouterr().out.splitlines() == ["unread 0.0"] * 2
    with pytest.raises(TypeError, match="debug.callback"):
        netcl.debug.callback(3, x)


def test_debug_callback_and_pure_callback_run_at_run_time():
    seen = []
    f = netcl.jit(lambda v: (netcl.debug.callback(lambda a, k: seen.append((a.sum(), k)), v,
                                                  k="tag"), v * 2)[1])
    f(jnp.ones(3))
    f(jnp.ones(3) * 2)
    assert seen == [(3.0, "tag"), (6.0, "tag")]
    calls = []

    def host_sin(a):
        calls.append(1)
        return np.sin(a)
    g = netcl.jit(lambda v: netcl.pure_callback(host_sin, netcl.ShapeDtypeStruct(v.shape,
                                                                                 v.dtype), v))
    x = np.arange(3.0, dtype=np.float32)
    same(g(x), np.sin(x))
    same(g(x + 1), np.sin(x + 1))
    assert len(calls) == 2
    seq = netcl.vmap(lambda v: netcl.pure_callback(lambda a: a.sum(dtype=np.float32),
                                                   jnp.ones((), jnp.float32), v,
                                                   vmap_method="sequential"))
    same(seq(jnp.ones((4, 3))), np.full(4, 3.0, np.float32))
    vec = netcl.vmap(lambda v: netcl.pure_callback(lambda a: a * 2, jnp.ones(3, jnp.float32),
                                                   v, vmap_method="expand_dims"))
    same(vec(jnp.ones((4, 3), jnp.float32)), np.full((4, 3), 2.0, np.float32))
    with pytest.raises(TypeError, match="pure_callback: the host function host_sin"):
        netcl.grad(lambda v: g(v).sum())(jnp.asarray(x))
    with pytest.raises(NotImplementedError, match="vmap_method"):
        netcl.vmap(g)(jnp.ones((2, 3)))
    with pytest.raises(TypeError, match=r"pure_callback: .*returned result 0 of shape \(2,\)"):
        netcl.pure_callback(lambda a: a[:2], jnp.ones(3), jnp.ones(3))


# ---- top-level names ------------------------------------------------------------------------

def test_device_get_eval_shape_make_jaxpr_typeof():
    out = netcl.device_get({"w": jnp.ones(2), "n": 3})
    assert isinstance(out["w"], np.ndarray) and out["n"] == 3
    s = netcl.ShapeDtypeStruct((3, 4), jnp.float32)
    for lib, S in ((netcl, netcl.ShapeDtypeStruct), (jax, jax.ShapeDtypeStruct)):
        r = lib.eval_shape(lambda a, b: (a @ b, a.sum(0)), S((3, 4), np.float32),
                           S((4, 5), np.float32))
        assert [(x.shape, x.dtype) for x in r] == [((3, 5), np.float32), ((4,), np.float32)]
    assert repr(s) == repr(jax.ShapeDtypeStruct((3, 4), jjnp.float32)) and s.ndim == 2
    ir, shape = netcl.make_jaxpr(lambda a: jnp.sin(a).sum(),
                                 return_shape=True)(jnp.ones(3, jnp.float32))
    assert "sin" in str(ir) and shape == netcl.ShapeDtypeStruct((), np.float32)
    assert netcl.typeof(jnp.ones(3)).shape == (3,) and netcl.default_backend() in ("cpu", "gpu")
    with pytest.raises(ValueError, match="ShapeDtypeStruct"):
        netcl.ShapeDtypeStruct((-1,), np.float32)
    with pytest.raises(TypeError, match="device_get"):
        netcl.jit(netcl.device_get)(jnp.ones(2))


def test_linearize_linear_transpose_jacobian_custom_gradient():
    y, f_jvp = netcl.linearize(jnp.sin, 1.0)
    with jax.enable_x64(netcl.config.enable_x64):   # (Python floats: the same default float)
        yj, fj = jax.linearize(jjnp.sin, 1.0)
        same(y, yj) and same(f_jvp(2.0), fj(2.0))
    t = netcl.linear_transpose(lambda a, b: (a * 2.0 + b, a), 1.0, 2.0)((1.0, 3.0))
    tj = jax.linear_transpose(lambda a, b: (a * 2.0 + b, a), 1.0, 2.0)((1.0, 3.0))
    same(t[0], tj[0], dtype=False) and same(t[1], tj[1], dtype=False)
    same(netcl.jacobian(jnp.sin)(X[0]), jax.jacobian(jjnp.sin)(X[0]))

    def clip_pair(lib):
        @lib.custom_gradient
        def f(a):
            return a * 2.0, lambda g: (lib.numpy.clip(g, -0.5, 0.5),)
        return f
    same(netcl.grad(lambda a: (clip_pair(netcl)(a) * 3.0).sum())(X[0]),
         jax.grad(lambda a: (clip_pair(jax)(a) * 3.0).sum())(X[0]))
    with pytest.raises(TypeError, match="linearize"):
        netcl.linearize(jnp.sin, jnp.ones(2, jnp.int32))
    with pytest.raises(TypeError, match="custom_gradient"):
        netcl.grad(netcl.custom_gradient(lambda a: a))(1.0)


def test_disable_jit_compile_time_eval_named_scope():
    traces = []

    @netcl.jit
    def f(a):
        traces.append(1)
        return a * 2 if float(a.sum()) > 0 else a     # Python control flow on values

    with netcl.disable_jit():
        same(f(jnp.ones(2)), [2.0, 2.0], dtype=False)
        same(f(-jnp.ones(2)), [-1.0, -1.0], dtype=False)
    assert len(traces) == 2

    @netcl.jit
    def g(a):
        with netcl.ensure_compile_time_eval():
            n = int(jnp.arange(4).sum())
        return a * n
    same(g(jnp.ones(2)), [6.0, 6.0], dtype=False)
    with netcl.named_scope("block"):
        same(netcl.named_call(jnp.sin, name="s")(X), np.sin(X))
    with pytest.raises(TypeError, match="named_scope"):
        with netcl.named_scope(3):
            pass


def test_dtypes_and_errors():
    d, jd = netcl.dtypes, jax.dtypes
    with jax.enable_x64(netcl.config.enable_x64):
        for t in (np.float32, np.int64, np.uint32, np.bool_):
            assert d.canonicalize_dtype(t) == jd.canonicalize_dtype(t)
    assert d.issubdtype(jnp.bfloat16, jnp.floating) and not d.issubdtype(jnp.int32, np.floating)
    with jax.enable_x64(netcl.config.enable_x64):   # (a weak float with ints: the default)
        assert d.result_type(jnp.ones(2, jnp.int32), 1.0) == \
            jd.result_type(jjnp.ones(2, np.int32), 1.0)
    assert d.finfo(jnp.bfloat16).eps == jd.finfo(jjnp.bfloat16).eps
    assert d.iinfo(jnp.int32).max == 2 ** 31 - 1 and netcl.float0 == jd.float0
    with pytest.raises(TypeError, match="finfo"):
        d.finfo(jnp.int32)
    with pytest.raises(netcl.errors.ConcretizationTypeError):
        netcl.jit(lambda a: bool(a))(jnp.ones(()))


# ---- jax.image ------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["nearest", "linear", "cubic", "lanczos3"])
def test_image_resize_against_jax(method):
    img = RNG.standard_normal((2, 5, 7, 3)).astype(np.float32)
    for shape in ((2, 9, 4, 3), (2, 3, 11, 3)):
        for aa in (True, False):
            same(netcl.image.resize(img, shape, method, antialias=aa),
                 jax.image.resize(img, shape, method, antialias=aa))


def test_image_scale_and_translate_and_gradients():
    img = RNG.standard_normal((1, 5, 6, 2)).astype(np.float32)
    s, t = np.array([1.7, 0.6], np.float32), np.array([0.3, -1.2], np.float32)
    for m in ("linear", "cubic"):
        same(netcl.image.scale_and_translate(img, (1, 8, 4, 2), (1, 2), s, t, m),
             jax.image.scale_and_translate(img, (1, 8, 4, 2), (1, 2), s, t, m))
    g = netcl.grad(lambda v: netcl.image.scale_and_translate(
        jnp.asarray(img), (1, 8, 4, 2), (1, 2), v, jnp.asarray(t), "linear").sum())(s)
    gj = jax.grad(lambda v: jax.image.scale_and_translate(img, (1, 8, 4, 2), (1, 2), v, t,
                                                          "linear").sum())(s)
    same(g, gj, 1e-4)
    x = f64(3, 4)
    check_grads(lambda a: netcl.image.resize(a, (5, 3), "cubic"), (x,), order=1)
    check_grads(lambda a: netcl.image.resize(a, (6, 2), "bilinear"), (x,), order=1)
    with pytest.raises(ValueError, match="resize: shape"):
        netcl.image.resize(img, (8, 8), "linear")
    with pytest.raises(ValueError, match="resize: unknown resize method"):
        netcl.image.resize(img, img.shape, "bogus")
    with pytest.raises(ValueError, match="scale_and_translate: nearest"):
        netcl.image.scale_and_translate(img, img.shape, (1, 2), s, t, "nearest")
    with pytest.raises(ValueError, match=r"scale_and_translate: scale must have shape \(2,\)"):
        netcl.image.scale_and_translate(img, img.shape, (1, 2), s[:1], t, "linear")


# ---- lax ------------------------------------------------------------------------------------

def test_associative_scan_reduce_cumlogsumexp():
    for ax in (0, 1):
        for rev in (False, True):
            same(lax.associative_scan(jnp.add, X, reverse=rev, axis=ax),
                 jl.associative_scan(jjnp.add, X, reverse=rev, axis=ax))
            same(lax.cumlogsumexp(X * 30, axis=ax, reverse=rev),
                 jl.cumlogsumexp(X * 30, axis=ax, reverse=rev))
    a, b = X[0], X[1]

    def affine(p, q):
        return p[0] * q[0], p[1] * q[0] + q[1]
    same(lax.associative_scan(affine, (a, b))[1], jl.associative_scan(affine, (a, b))[1])
    same(lax.reduce(X, 0.0, lax.add, (0,)), jl.reduce(X, 0.0, jl.add, (0,)))
    same(lax.reduce(X, -np.inf, lax.max, (1,)), jl.reduce(X, -np.inf, jl.max, (1,)))
    same(lax.reduce(X, 0.0, lambda p, q: p + q, (0, 1)), jl.reduce(X, 0.0, lambda p, q: p + q,
                                                                   (0, 1)))

    def argmax(lib):
        def comb(p, q):
            pick = (p[0] > q[0]) | ((p[0] == q[0]) & (p[1] < q[1]))
            return lib.where(pick, p[0], q[0]), lib.where(pick, p[1], q[1])
        return comb
    idx = np.broadcast_to(np.arange(6, dtype=np.int32), X.shape)
    r = lax.reduce((X, idx), (-np.inf, 0), argmax(jnp), (1,))
    rj = jl.reduce((X, idx), (-np.inf, np.int32(0)), argmax(jjnp), (1,))
    same(r[0], rj[0]) and same(r[1], rj[1])
    check_grads(lambda v: lax.associative_scan(jnp.multiply, v), (f64(5),), order=2)
    check_grads(lambda v: lax.cumlogsumexp(v, axis=1), (f64(2, 5),), order=1)
    check_grads(lambda v: lax.reduce(v, 0.0, lambda p, q: p * q + p + q, (0,)), (f64(5, 2),),
                order=1)
    with pytest.raises(ValueError, match="associative_scan: elems must all have length"):
        lax.associative_scan(jnp.add, (X, X[:, :2]), axis=1)
    with pytest.raises(ValueError, match="reduce: init_values"):
        lax.reduce((X, X), 0.0, lax.add, (0,))
    with pytest.raises(TypeError, match="cumlogsumexp: operand must be a float"):
        lax.cumlogsumexp(jnp.ones(3, jnp.int32))


def test_bit_operations_and_reduce_precision():
    xi = RNG.integers(-2 ** 31, 2 ** 31, (6, 5)).astype(np.int32)
    xu = RNG.integers(0, 2 ** 32, (6, 5), dtype=np.uint64).astype(np.uint32)
    for v in (xi, xu, np.array([0, 1, -1], np.int32)):
        same(lax.population_count(v), jl.population_count(v))
        same(lax.clz(v), jl.clz(v))
    same(lax.mulhi(xi, xi[::-1]), jl.mulhi(xi, xi[::-1]))
    same(lax.mulhi(xu, xu[::-1]), jl.mulhi(xu, xu[::-1]))
    small = RNG.integers(-50, 50, (6, 5)).astype(np.int32)
    for op in ("and", "or", "xor"):
        for v in (small, small > 0):
            same(getattr(lax, "reduce_" + op)(v, (0,)), getattr(jl, "reduce_" + op)(v, (0,)))
    xx = (RNG.standard_normal(64) * np.exp(RNG.uniform(-20, 20, 64))).astype(np.float32)
    xx[:3] = [np.nan, np.inf, -0.0]
    for eb, mb in ((5, 10), (8, 7), (4, 3), (8, 23)):
        same(lax.reduce_precision(xx, eb, mb), jl.reduce_precision(xx, eb, mb), 0)
    x64 = jnp.asarray(xx[3:].astype(np.float64))    # float64 rounded to float32's format
    same(lax.reduce_precision(x64, 8, 23), xx[3:].astype(np.float64), 0)
    t = netcl.jvp(lambda v: lax.reduce_precision(v, 5, 10), (jnp.ones(2, jnp.float32),),
                  (jnp.asarray([1.0001, 3.0], jnp.float32),))[1]
    same(t, jl.reduce_precision(np.array([1.0001, 3.0], np.float32), 5, 10))
    with pytest.raises(TypeError, match="population_count: operand must be an int32"):
        lax.population_count(jnp.ones(2))
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(xi, xu)
    with pytest.raises(TypeError, match="reduce_xor: bitwise xor needs"):
        lax.reduce_xor(jnp.ones(2), (0,))
    with pytest.raises(ValueError, match="reduce_precision: exponent_bits"):
        lax.reduce_precision(jnp.ones(2), 0, 3)


def test_lax_shape_and_index_helpers():
    same(lax.broadcast(X, (2,)), jl.broadcast(X, (2,)))
    same(lax.broadcasted_iota(np.int32, (2, 3), 1), jl.broadcasted_iota(np.int32, (2, 3), 1))
    same(lax.collapse(X.reshape(2, 2, 6), 0, 2), jl.collapse(X.reshape(2, 2, 6), 0, 2))
    same(lax.tile(X, (2, 1)), jl.tile(X, (2, 1)))
    for p, q in zip(lax.split(X, (2, 4), 1), jl.split(X, (2, 4), 1)):
        same(p, q)
    w = RNG.integers(0, 3, X.shape).astype(np.int32)
    same(lax.select_n(w, X, X + 1, X + 2), jl.select_n(w, X, X + 1, X + 2))
    same(lax.select_n(X > 0, X, -X), jl.select_n(X > 0, X, -X))
    same(lax.index_in_dim(X, 2, 1), jl.index_in_dim(X, 2, 1))
    same(lax.index_in_dim(X, -1, 0, False), jl.index_in_dim(X, -1, 0, False))
    same(lax.slice_in_dim(X, 1, 6, 2, 1), jl.slice_in_dim(X, 1, 6, 2, 1))
    up = np.ones(6, np.float32)
    same(lax.dynamic_update_index_in_dim(X, up, 3, 0), jl.dynamic_update_index_in_dim(X, up, 3,
                                                                                       0))
    x3 = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    i0, i1 = np.array([0, 2, 1], np.int32), np.array([4, 0, 2], np.int32)
    same(lax.index_take(x3, (i0, i1), (0, 2)), jl.index_take(x3, (i0, i1), (0, 2)))
    pos = np.abs(X) + 0.1
    same(lax.erfc(X), jl.erfc(X)) and same(lax.lgamma(pos), jl.lgamma(pos), 1e-4)
    same(lax.digamma(pos), jl.digamma(pos), 1e-4)
    assert lax.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME") == \
        jl.conv_shape_tuple((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME")
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", dn) == \
        jl.conv_general_shape_tuple((1, 8, 8, 3), (3, 3, 3, 4), (2, 2), "SAME", dn)
    assert lax.reduce_window_shape_tuple((8, 7), (2, 3), (2, 1), ((0, 1), (1, 1))) == \
        jl.reduce_window_shape_tuple((8, 7), (2, 3), (2, 1), ((0, 1), (1, 1)))
    img = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)
    same(lax.conv_general_dilated_patches(img, (2, 3), (1, 2), "SAME"),
         jl.conv_general_dilated_patches(img, (2, 3), (1, 2), "SAME"))
    nhwc = np.ascontiguousarray(img.transpose(0, 2, 3, 1))
    same(lax.conv_general_dilated_patches(nhwc, (2, 3), (1, 1), "VALID", dimension_numbers=dn),
         jl.conv_general_dilated_patches(nhwc, (2, 3), (1, 1), "VALID", dimension_numbers=dn))
    assert lax.optimization_barrier((1, 2)) == (1, 2)
    with pytest.raises(ValueError, match="split: sizes"):
        lax.split(X, (2, 2), 1)
    with pytest.raises(TypeError, match="select_n: cases must have one shape"):
        lax.select_n(X > 0, X, X[0])
    with pytest.raises(IndexError, match="index_in_dim: index 9"):
        lax.index_in_dim(X, 9, 0)
    with pytest.raises(ValueError, match="slice_in_dim"):
        lax.slice_in_dim(X, 3, 1)
    with pytest.raises(ValueError, match="tile: reps"):
        lax.tile(X, (2,))


def test_custom_root_and_linear_solve_differentiate_implicitly():
    def newton(f, x0):
        x = x0
        for _ in range(30):
            x = x - f(x) / netcl.grad(f)(x)
        return x

    def scalar_solve(g, y):
        return y / g(1.0)

    def sqrt_via_root(a, lib):
        return lib.lax.custom_root(lambda x: x * x - a, 1.0, newton if lib is netcl else
                                   jax_newton, scalar_solve)

    def jax_newton(f, x0):
        x = x0
        for _ in range(30):
            x = x - f(x) / jax.grad(f)(x)
        return x
    a = jnp.asarray(2.0, jnp.float64)
    same(sqrt_via_root(a, netcl), np.sqrt(2.0), 1e-10, dtype=False)
    same(netcl.grad(lambda v: sqrt_via_root(v, netcl))(a), 0.5 / np.sqrt(2.0), 1e-8,
         dtype=False)
    A = np.array([[3.0, 1.0], [1.0, 2.0]])
    b = np.array([1.0, -1.0])

    def solve_with(m):
        Am = jnp.asarray(A) * m
        return lax.custom_linear_solve(lambda v: Am @ v, jnp.asarray(b),
                                       lambda mv, r: jnp.linalg.solve(Am, r))
    same(solve_with(1.0), np.linalg.solve(A, b), 1e-10, dtype=False)
    check_grads(lambda m: solve_with(m), (jnp.asarray(1.3, jnp.float64),), order=1)
    check_grads(lambda bb: lax.custom_linear_solve(lambda v: jnp.asarray(A) @ v, bb,
                                                   lambda mv, r: jnp.linalg.solve(
                                                       jnp.asarray(A), r)),
                (jnp.asarray(b),), order=1)
    with pytest.raises(TypeError, match="custom_root: solve must be callable"):
        lax.custom_root(lambda x: x, 1.0, None, scalar_solve)


# ---- nn -------------------------------------------------------------------------------------

def test_nn_activations_against_jax_and_gradients():
    x = X * 3
    for name in ("hard_sigmoid", "hard_silu", "hard_swish", "identity", "mish", "sparse_plus",
                 "sparse_sigmoid", "squareplus"):
        same(getattr(nn, name)(x), getattr(jn, name)(x))
    same(nn.log1mexp(np.abs(x) + 1e-3), jn.log1mexp(np.abs(x) + 1e-3))
    w = x > -1
    same(nn.logmeanexp(x, axis=1), jn.logmeanexp(x, axis=1))
    same(nn.logmeanexp(x, axis=0, where=w), jn.logmeanexp(x, axis=0, where=w))
    same(nn.softmax(x, where=w), jn.softmax(x, where=w))
    same(nn.log_softmax(x, where=w), jn.log_softmax(x, where=w))
    v = f64(3, 4)
    for f in (nn.mish, nn.squareplus, nn.hard_silu, lambda a: nn.softmax(a, where=a > -0.5)):
        check_grads(f, (v,), order=2)
    check_grads(nn.log1mexp, (f64(5, low=0.05),), order=1)
    assert callable(nn.initializers.glorot_normal()) and \
        nn.initializers.zeros(netcl.random.PRNGKey(0), (2,)).shape == (2,)
    with pytest.raises(TypeError, match="mish"):
        nn.mish("a")


def test_dot_product_attention_against_jax():
    q = RNG.standard_normal((2, 5, 4, 8)).astype(np.float32)
    k = RNG.standard_normal((2, 7, 2, 8)).astype(np.float32)
    v = RNG.standard_normal((2, 7, 2, 8)).astype(np.float32)
    bias = RNG.standard_normal((1, 4, 5, 7)).astype(np.float32)
    mask = RNG.random((2, 1, 5, 7)) > 0.3
    lens = dict(query_seq_lengths=np.array([3, 5], np.int32),
                key_value_seq_lengths=np.array([7, 4], np.int32))
    for kw in ({}, dict(is_causal=True), dict(bias=bias), dict(mask=mask), lens,
               dict(local_window_size=(1, 2)),
               dict(scale=0.3, bias=bias, mask=mask, is_causal=True)):
        same(nn.dot_product_attention(q, k, v, **kw), jn.dot_product_attention(q, k, v, **kw),
             2e-5)
    same(nn.dot_product_attention(q[0], k[0], v[0]), jn.dot_product_attention(q[0], k[0], v[0]),
         2e-5)
    g = netcl.grad(lambda a: nn.dot_product_attention(a, k, v, is_causal=True).sum())(q)
    gj = jax.grad(lambda a: jn.dot_product_attention(a, k, v, is_causal=True).sum())(q)
    same(g, gj, 1e-4)
    q64, k64 = f64(1, 3, 2, 4), f64(1, 4, 1, 4)
    check_grads(lambda a, b: nn.dot_product_attention(a, b, b, is_causal=True), (q64, k64),
                order=1)
    with pytest.raises(ValueError, match="dot_product_attention: the query's 4 heads"):
        nn.dot_product_attention(q, k[:, :, :1].repeat(3, 2), v[:, :, :1].repeat(3, 2))
    with pytest.raises(TypeError, match="dot_product_attention: mask must be a bool"):
        nn.dot_product_attention(q, k, v, mask=mask.astype(np.float32))


# ---- numpy ----------------------------------------------------------------------------------

def test_packbits_ufunc_methods_and_complex_errors():
    bits = RNG.random((3, 13)) > 0.5
    for ax in (None, 1):
        for order in ("big", "little"):
            same(jnp.packbits(bits, axis=ax, bitorder=order),
                 jjnp.packbits(bits, axis=ax, bitorder=order), dtype=False)
    by = RNG.integers(0, 256, (3, 4)).astype(np.uint8)
    for ax, count in ((None, None), (1, 5), (0, -3), (None, 40)):
        same(jnp.unpackbits(by.astype(np.uint32), axis=ax, count=count),
             jjnp.unpackbits(by, axis=ax, count=count), dtype=False)
    with jax.enable_x64(netcl.config.enable_x64):   # (aranges of the default int)
        same(jnp.add.outer(jnp.arange(2), jnp.arange(3)), jjnp.add.outer(jjnp.arange(2),
                                                                       jjnp.arange(3)))
    for name in ("add", "multiply", "maximum", "subtract"):
        for ax in (0, None):
            same(getattr(jnp, name).reduce(X, axis=ax), getattr(jjnp, name).reduce(X, axis=ax))
        same(getattr(jnp, name).accumulate(X, axis=1), getattr(jjnp, name).accumulate(X,
                                                                                     axis=1))
    f = jnp.frompyfunc(lambda p, q: p * q + 1, 2, 1)
    fj = jjnp.frompyfunc(lambda p, q: p * q + 1, 2, 1)
    same(f.outer(X[0], X[1]), fj.outer(X[0], X[1]))
    same(f.reduce(X[0]), fj.reduce(X[0])) and same(f.accumulate(X[0]), fj.accumulate(X[0]))
    same(jnp.angle(X), jjnp.angle(X))
    with jax.enable_x64(netcl.config.enable_x64):   # (of the default float)
        same(jnp.fft.fftfreq(5, 0.5), jjnp.fft.fftfreq(5, 0.5))
    same(jnp.fft.fftshift(X), jjnp.fft.fftshift(X))
    assert not jnp.issubdtype(jnp.float32, jnp.complexfloating)
    r = np.asarray(jnp.roots(jnp.asarray(np.array([1.0, -3.0, 2.0], np.float32))))
    assert r.dtype == np.complex64      # (always complex, as jnp.roots; more in test_linalg_eig)
    np.testing.assert_allclose(np.sort_complex(r), [1, 2], rtol=1e-5)
    same(jnp.sort_complex(X), jjnp.sort_complex(X))
    same(jnp.complex64(1.5), jjnp.complex64(1.5))
    same(jnp.zeros(2, jnp.complex64), jjnp.zeros(2, jjnp.complex64))
    with pytest.raises(ValueError, match="packbits: bitorder"):
        jnp.packbits(bits, bitorder="middle")
    with pytest.raises(TypeError, match="unpackbits: a must be an integer"):
        jnp.unpackbits(jnp.ones(2))
