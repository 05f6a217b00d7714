"""netcl.numpy.linalg's array-API names (linalg_surface.py) against jax.numpy.linalg: cross,
diagonal, matmul, matrix_norm, matrix_transpose, multi_dot, outer, tensordot, trace, vecdot,
vector_norm (values, dtypes, shapes, keyword arguments), their gradients against finite
differences in float64, jit and vmap, bad inputs, and eig/eigvals' complex results (more in
test_linalg_eig.py). Shapes are few and small (each new shape compiles kernels)."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.test_util import check_grads
from util import raises_with

jax = pytest.importorskip("jax")
jjnp = jax.numpy

L, JL = jnp.linalg, jjnp.linalg
F32 = dict(rtol=2e-5, atol=2e-6)


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _same(got, want, **tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, **(tol or F32))
    else:
        np.testing.assert_array_equal(got, want)


def test_names_match_jax():
    missing = {n for n in dir(JL) if not n.startswith("_")} - set(dir(L))
    assert missing == set(), missing
    for n in L.__all__:
        assert getattr(L, n).__module__ == "netcl.numpy.linalg" or isinstance(
            getattr(L, n), type), n


@pytest.mark.parametrize("ord", [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1.5])
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1])
def test_vector_norm(ord, axis):
    x = _rand((3, 4, 5))
    x[0, 0, :2] = 0
    for keepdims in (False, True):
        _same(L.vector_norm(jnp.asarray(x), ord=ord, axis=axis, keepdims=keepdims),
              JL.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims))


def test_vector_norm_integer_and_bool_dtypes():
    xi = np.array([[1, -2], [3, 4]], np.int32)
    for ord in (2, None, np.inf, -np.inf, 1):       # JAX: float for 2, int otherwise
        got, want = L.vector_norm(jnp.asarray(xi), ord=ord), JL.vector_norm(xi, ord=ord)
        assert np.asarray(got).dtype.kind == np.asarray(want).dtype.kind, ord
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    xb = np.array([True, False, True])
    for ord in (2, np.inf, -np.inf, 1):
        got, want = L.vector_norm(jnp.asarray(xb), ord=ord), JL.vector_norm(xb, ord=ord)
        assert np.asarray(got).dtype.kind == np.asarray(want).dtype.kind, ord
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    # where JAX fails on integers (ord 0: finfo of an int; ord 3: an integer power), netcl
    # computes in the default float, as NumPy does
    np.testing.assert_allclose(np.asarray(L.vector_norm(jnp.asarray(xi), ord=0)), 4.0)
    np.testing.assert_allclose(np.asarray(L.vector_norm(jnp.asarray(xi), ord=3)),
                               np.linalg.norm(xi.ravel(), 3), rtol=1e-6)
    # ord=inf of an empty vector: 0 (max with initial 0), as in JAX
    _same(L.vector_norm(jnp.zeros((0,), jnp.float32), ord=np.inf),
          JL.vector_norm(np.zeros(0, np.float32), ord=np.inf))


@pytest.mark.parametrize("ord", ["fro", None, "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm(ord):
    x = _rand((2, 3, 4))
    for keepdims in (False, True):
        _same(L.matrix_norm(jnp.asarray(x), ord=ord, keepdims=keepdims),
              JL.matrix_norm(x, ord=ord, keepdims=keepdims), rtol=2e-5, atol=1e-5)


def test_products_match_jax():
    a, b = _rand((2, 3, 4)), _rand((4, 5), 1)
    _same(L.matmul(jnp.asarray(a), jnp.asarray(b)), JL.matmul(a, b))
    _same(L.matmul(jnp.asarray(a[0, 0]), jnp.asarray(b)), JL.matmul(a[0, 0], b))
    _same(L.matmul(jnp.asarray(a), jnp.asarray(b), preferred_element_type=jnp.float32),
          JL.matmul(a, b, preferred_element_type=jjnp.float32))
    c, d = _rand((2, 3, 4)), _rand((3, 4, 5), 1)
    _same(L.tensordot(jnp.asarray(c), jnp.asarray(d)), JL.tensordot(c, d))
    e = _rand((4, 5), 2)
    _same(L.tensordot(jnp.asarray(c), jnp.asarray(e), axes=1), JL.tensordot(c, e, axes=1))
    _same(L.tensordot(jnp.asarray(c), jnp.asarray(d), axes=([1], [0])),
          JL.tensordot(c, d, axes=([1], [0])))
    u, v = _rand((4, 3)), _rand((3,), 1)
    _same(L.vecdot(jnp.asarray(u), jnp.asarray(v)), JL.vecdot(u, v))
    _same(L.vecdot(jnp.asarray(u), jnp.asarray(u[:, :1]), axis=0),
          JL.vecdot(u, u[:, :1], axis=0))
    p, q = _rand((3,)), _rand((4,), 1)
    _same(L.outer(jnp.asarray(p), jnp.asarray(q)), JL.outer(p, q))
    pi, qb = np.arange(3, dtype=np.int32), np.array([True, False])
    _same(L.outer(jnp.asarray(pi), jnp.asarray(pi)), JL.outer(pi, pi))
    _same(L.outer(jnp.asarray(qb), jnp.asarray(qb)), JL.outer(qb, qb))


def test_cross():
    a, b = _rand((4, 3)), _rand((4, 3), 1)
    _same(L.cross(jnp.asarray(a), jnp.asarray(b)), JL.cross(a, b))
    _same(L.cross(jnp.asarray(a.T), jnp.asarray(b[:1].T), axis=0), JL.cross(a.T, b[:1].T,
                                                                             axis=0))
    ai = np.arange(6, dtype=np.int32).reshape(2, 3)
    _same(L.cross(jnp.asarray(ai), jnp.asarray(ai[::-1].copy())), JL.cross(ai, ai[::-1]))


def test_matrix_views_and_traces():
    x = _rand((2, 3, 4))
    _same(L.matrix_transpose(jnp.asarray(x)), JL.matrix_transpose(x))
    for offset in (0, 1, -2, 5):
        _same(L.diagonal(jnp.asarray(x), offset=offset), JL.diagonal(x, offset=offset))
        _same(L.trace(jnp.asarray(x), offset=offset), JL.trace(x, offset=offset))
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert int(L.trace(jnp.asarray(xi), offset=1)) == 18
    assert np.asarray(L.trace(jnp.asarray(xi))).dtype == jnp.asarray(0).dtype   # default int
    _same(L.trace(jnp.asarray(xi), offset=-1, dtype=jnp.float32),
          JL.trace(xi, offset=-1, dtype=jjnp.float32))


@pytest.mark.parametrize("shapes", [
    [(2, 3), (3, 4)], [(10, 30), (30, 5), (5, 60)], [(3,), (3, 4), (4, 2), (2,)],
    [(3,), (3, 4)], [(5, 2), (2,)], [(4, 1), (1, 6), (6, 3), (3, 2)]])
def test_multi_dot(shapes):
    arrs = [_rand(s, i) for i, s in enumerate(shapes)]
    _same(L.multi_dot([jnp.asarray(a) for a in arrs]), JL.multi_dot(arrs),
          rtol=2e-5, atol=1e-5)
    _same(L.multi_dot(tuple(jnp.asarray(a) for a in arrs)), JL.multi_dot(arrs),
          rtol=2e-5, atol=1e-5)


def test_multi_dot_order():
    # (a @ b) @ c costs 10*100*5 + 10*5*50 = 7500 products; a @ (b @ c) costs 75000
    from netcl.numpy.linalg_surface import _chain_order
    assert _chain_order([10, 100, 5, 50])[0][2] == 1
    assert _chain_order([50, 5, 100, 10])[0][2] == 0


def test_grads_float64():
    rng = np.random.default_rng(3)
    x = jnp.asarray(rng.standard_normal((3, 4)))
    check_grads(lambda x: L.vector_norm(x), (x,), order=2)
    check_grads(lambda x: L.vector_norm(x, ord=3, axis=1, keepdims=True), (x,), order=1)
    check_grads(lambda x: L.vector_norm(x, ord=1, axis=(0, 1)), (x,), order=1)
    check_grads(lambda x: L.vector_norm(x, ord=np.inf, axis=0), (x,), order=1)
    check_grads(lambda x: L.matrix_norm(x), (x,), order=2)
    check_grads(lambda x: L.matrix_norm(x, ord="nuc"), (x,), order=1)
    check_grads(lambda x: L.matrix_norm(x, ord=1), (x,), order=1)
    y = jnp.asarray(rng.standard_normal((4, 2)))
    z = jnp.asarray(rng.standard_normal((2, 3)))
    check_grads(lambda a, b, c: L.multi_dot([a, b, c]), (x, y, z), order=2)
    check_grads(lambda a, b: L.matmul(a, b), (x, y), order=1)
    check_grads(lambda a, b: L.tensordot(a, b, axes=1), (x, y), order=1)
    check_grads(lambda a, b: L.vecdot(a, b, axis=0), (x, x * 2.0), order=1)
    u, v = jnp.asarray(rng.standard_normal((2, 3))), jnp.asarray(rng.standard_normal((2, 3)))
    check_grads(lambda a, b: L.cross(a, b), (u, v), order=2)
    check_grads(lambda a, b: L.outer(a, b), (u[0], v[1]), order=1)
    check_grads(lambda a: L.trace(a, offset=1), (x,), order=1)
    check_grads(lambda a: L.diagonal(a, offset=-1), (x,), order=1)
    check_grads(lambda a: L.matrix_transpose(a), (x,), order=1)


def test_grads_match_jax():
    x = _rand((3, 4), 5)
    for f, jf in [(lambda a: L.vector_norm(a, ord=3), lambda a: JL.vector_norm(a, ord=3)),
                  (lambda a: L.matrix_norm(a, ord=2), lambda a: JL.matrix_norm(a, ord=2)),
                  (lambda a: jnp.sum(L.multi_dot([a, a.T, a])),
                   lambda a: jjnp.sum(JL.multi_dot([a, a.T, a])))]:
        np.testing.assert_allclose(np.asarray(netcl.grad(f)(jnp.asarray(x))),
                                   np.asarray(jax.grad(jf)(x)), rtol=1e-4, atol=1e-5)


def test_jit_and_vmap():
    x = _rand((2, 3, 3))
    jitted = netcl.jit(lambda a: (L.vector_norm(a, ord=3, axis=-1), L.trace(a, offset=1),
                                  L.matrix_norm(a, ord=np.inf), L.multi_dot([a[0], a[1]])))
    for got, want in zip(jitted(jnp.asarray(x)),
                         (JL.vector_norm(x, ord=3, axis=-1), JL.trace(x, offset=1),
                          JL.matrix_norm(x, ord=np.inf), JL.multi_dot([x[0], x[1]]))):
        _same(got, want)
    _same(netcl.vmap(lambda a: L.diagonal(a, offset=1))(jnp.asarray(x)),
          JL.diagonal(x, offset=1))
    _same(netcl.vmap(lambda a, b: L.cross(a, b))(jnp.asarray(x), jnp.asarray(x[::-1].copy())),
          JL.cross(x, x[::-1]))
    _same(netcl.vmap(lambda a: L.vector_norm(a, ord=1))(jnp.asarray(x)),
          jax.vmap(lambda a: JL.vector_norm(a, ord=1))(x))


def test_bad_inputs():
    v, m = jnp.ones(3), jnp.ones((2, 2))
    raises_with(ValueError, lambda: L.cross(jnp.ones(2), jnp.ones(2)), "linalg.cross",
                "3-dimensional")
    raises_with(ValueError, lambda: L.cross(v, v, axis=1), "linalg.cross", "axis")
    raises_with(TypeError, lambda: L.cross(v, v, axis=1.0), "linalg.cross", "axis")
    raises_with(ValueError, lambda: L.outer(m, v), "linalg.outer", "one-dimensional")
    for name in ("diagonal", "trace", "matrix_transpose", "matrix_norm"):
        raises_with(ValueError, lambda: getattr(L, name)(v), f"linalg.{name}",
                    "two dimensions", "(3,)")
    raises_with(TypeError, lambda: L.diagonal(m, offset=0.5), "linalg.diagonal", "offset")
    raises_with(TypeError, lambda: L.trace(m, offset="1"), "linalg.trace", "offset")
    raises_with(ValueError, lambda: L.multi_dot([m]), "linalg.multi_dot", "two arrays")
    raises_with(ValueError, lambda: L.multi_dot([m, jnp.ones((2, 2, 2)), m]),
                "linalg.multi_dot", "two-dimensional")
    raises_with(ValueError, lambda: L.multi_dot([m, jnp.ones((3, 2))]), "linalg.multi_dot",
                "(2, 2)", "(3, 2)")
    raises_with(TypeError, lambda: L.multi_dot(3.0), "linalg.multi_dot", "sequence")
    raises_with(TypeError, lambda: L.vector_norm([1.0, 2.0]), "linalg.vector_norm")
    raises_with(ValueError, lambda: L.vector_norm(v, ord="fro"), "linalg.vector_norm", "fro")
    raises_with(ValueError, lambda: L.vector_norm(v, ord="inf"), "linalg.vector_norm",
                "jnp.inf")
    raises_with(TypeError, lambda: L.vector_norm(v, ord=True), "linalg.vector_norm", "ord")
    raises_with(ValueError, lambda: L.vector_norm(v, axis=1), "linalg.vector_norm", "axis")
    raises_with(ValueError, lambda: L.vector_norm(m, axis=(0, 0)), "linalg.vector_norm",
                "axis")
    raises_with(TypeError, lambda: L.vector_norm(m, keepdims=None), "linalg.vector_norm",
                "keepdims")
    raises_with(ValueError, lambda: L.matrix_norm(m, ord=3), "linalg.matrix_norm", "3")
    raises_with(ValueError, lambda: L.matrix_norm(m, ord="inf"), "linalg.matrix_norm")
    raises_with(ValueError, lambda: L.matmul(m, v[:, None][:, :, None][0]), "matmul")
    raises_with(TypeError, lambda: L.matmul([1.0], v), "linalg.matmul")
    raises_with(TypeError, lambda: L.tensordot(m, [[1.0]]), "linalg.tensordot")
    raises_with(TypeError, lambda: L.vecdot(v, (1.0, 2.0, 3.0)), "linalg.vecdot")
    with pytest.raises(TypeError):
        L.trace(x=m)            # positional only, as in JAX
    with pytest.raises(TypeError):
        L.diagonal(m, 1)        # offset is keyword only


def test_eig_and_eigvals_give_complex_results():
    # (values, derivatives, batching and errors in test_linalg_eig.py)
    a = np.array([[0.0, 1.0], [-1.0, 0.0]], np.float32)
    w = L.eigvals(jnp.asarray(a))
    assert w.dtype == JL.eigvals(a).dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)), [-1j, 1j], atol=1e-6)
    w, v = L.eig(jnp.asarray(a))
    np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-6)
    raises_with(ValueError, lambda: L.eig(jnp.ones((2, 3))), "linalg.eig", "square")
