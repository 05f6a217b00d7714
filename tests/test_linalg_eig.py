"""eig, eigvals (netcl.numpy.linalg and netcl.lax.linalg), roots and poly of a square matrix:
the primitive `eig` of netcl.primitives.linalg_eig (LAPACK on the host) against NumPy and
JAX. Eigenvalues are compared as sorted sets and eigenvectors through A V = V diag(w) (they
are fixed only up to a phase); derivatives against JAX's rules and finite differences;
batching, jit, vmap, NaN for failing matrices, and errors. Shapes are few and small."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.lax import linalg as lax_linalg
from netcl.primitives import linalg_eig as le
from util import raises_with

jax = pytest.importorskip("jax")
jjnp = jax.numpy

L, JL = jnp.linalg, jjnp.linalg


def _rand(shape, seed=0, dtype=None, complex_=False):
    rng = np.random.default_rng(seed)
    dtype = dtype or (np.complex128 if complex_ else np.float64)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _sorted(w):
    w = np.asarray(w)
    return np.take_along_axis(w, np.lexsort((w.imag, w.real), axis=-1), axis=-1)


def _check_decomposition(a, w, v, tol):
    """A V = V diag(w) and unit columns, for each matrix of the batch."""
    a, w, v = np.asarray(a), np.asarray(w), np.asarray(v)
    scale = max(1.0, float(np.abs(a).max()))
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tol * scale)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)


def _match(w, ref):
    """The permutation putting `w` in `ref`'s order (nearest eigenvalue)."""
    w, ref = np.asarray(w), np.asarray(ref)
    return np.argmin(np.abs(ref[..., :, None] - w[..., None, :]), axis=-1)


# ---- the primitive against its reference (test_primitive_tables.py points here) ------------

def test_primitive_matches_reference():
    a = _rand((2, 3, 3), dtype=np.float32)
    for left, right in ((False, False), (False, True), (True, True), (True, False)):
        params = dict(compute_left_eigenvectors=left, compute_right_eigenvectors=right,
                      enable_eigvec_derivs=False)
        got = le.eig_p.bind(jnp.asarray(a), **params)
        want = le.eig_p.reference(a, **params)
        avals = le.eig_p.abstract_eval(jnp.asarray(a), **params)
        assert len(got) == len(want) == len(avals) == 1 + left + right
        for g, r, av in zip(got, want, avals):
            g = np.asarray(g)
            assert g.dtype == r.dtype == av.dtype == np.complex64
            assert g.shape == r.shape == tuple(av.shape)
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


# ---- values ----------------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_eig_against_numpy_and_jax(x64, complex_):
    dt = (np.complex128 if complex_ else np.float64) if x64 else \
        (np.complex64 if complex_ else np.float32)
    a = _rand((2, 3, 4, 4), seed=1, dtype=dt, complex_=complex_)       # batched
    w, v = L.eig(jnp.asarray(a))
    jw = JL.eigvals(a)
    assert w.dtype == v.dtype == jw.dtype == (np.complex128 if x64 else np.complex64)
    assert w.shape == (2, 3, 4) and v.shape == (2, 3, 4, 4)
    tol = 1e-12 if x64 else 1e-5
    np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(a)), atol=tol * 10)
    np.testing.assert_allclose(_sorted(w), _sorted(jw), atol=tol * 10)
    _check_decomposition(a, w, v, tol * 10)
    np.testing.assert_allclose(np.asarray(L.eigvals(jnp.asarray(a))), np.asarray(w), atol=tol)


def test_dtypes_follow_jax(x64):
    for a in (np.eye(2, dtype=np.int32), np.eye(2, dtype=bool),
              np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
              np.array([[1j, 2.0], [3.0, 4.0]], np.complex64)):
        got, want = L.eigvals(jnp.asarray(a)), JL.eigvals(a)
        assert got.dtype == want.dtype, (a.dtype, got.dtype, want.dtype)
        np.testing.assert_allclose(_sorted(got), _sorted(want), rtol=1e-5, atol=1e-6)


def test_known_spectra_and_empty_shapes():
    rot = jnp.asarray(np.array([[0.0, 1.0], [-1.0, 0.0]], np.float32))
    np.testing.assert_allclose(_sorted(L.eigvals(rot)), [-1j, 1j], atol=1e-6)
    tri = np.array([[2.0, 1.0, 0.0], [0.0, 3.0, 4.0], [0.0, 0.0, -1.0]], np.float32)
    np.testing.assert_allclose(_sorted(L.eigvals(jnp.asarray(tri))), [-1, 2, 3], atol=1e-5)
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        w, v = L.eig(jnp.zeros(shape, jnp.float32))
        assert w.shape == shape[:-1] and v.shape == shape and w.dtype == np.complex64


def test_left_eigenvectors_as_lax_linalg_eig():
    a = _rand((2, 4, 4), seed=2, dtype=np.float32)
    w, vl, vr = lax_linalg.eig(jnp.asarray(a))          # (JAX's defaults: both sides)
    jw, jvl, jvr = jax.lax.linalg.eig(a)
    np.testing.assert_allclose(_sorted(w), _sorted(jw), atol=1e-5)
    _check_decomposition(a, w, vr, 1e-5)
    # vl_j^H A = w_j vl_j^H: the right eigenvectors of A^H, eigenvalues conj(w)
    _check_decomposition(np.conj(np.swapaxes(a, -1, -2)), np.conj(np.asarray(w)), vl, 1e-5)
    # against JAX's, column by column up to a phase (LAPACK's signs differ)
    p = _match(w, jw)
    for got, want in ((vl, jvl), (vr, jvr)):
        got = np.take_along_axis(np.asarray(got), p[..., None, :], axis=-1)
        inner = np.abs(np.sum(np.conj(got) * np.asarray(want), axis=-2))
        np.testing.assert_allclose(inner, 1, atol=1e-4)
    w2, vr2 = lax_linalg.eig(jnp.asarray(a), compute_left_eigenvectors=False)
    (w3,) = lax_linalg.eig(jnp.asarray(a), compute_left_eigenvectors=False,
                           compute_right_eigenvectors=False)
    np.testing.assert_allclose(np.asarray(w2), np.asarray(w), atol=1e-6)
    np.testing.assert_allclose(np.asarray(w3), np.asarray(w), atol=1e-6)


def test_failing_matrices_give_nan_as_jax():
    a = _rand((3, 3, 3), seed=3, dtype=np.float32)
    a[1, 0, 0] = np.nan
    w, v = L.eig(jnp.asarray(a))
    w, v = np.asarray(w), np.asarray(v)
    assert np.isnan(w[1].real).all() and np.isnan(w[1].imag).all() and np.isnan(v[1]).all()
    assert np.isfinite(w[[0, 2]]).all()
    _check_decomposition(a[[0, 2]], w[[0, 2]], v[[0, 2]], 1e-5)
    assert np.isnan(np.asarray(JL.eigvals(a[1]))).all()


def test_jit_and_vmap():
    a = jnp.asarray(_rand((3, 3, 3), seed=4, dtype=np.float32))
    w, v = L.eig(a)
    jw, jv = netcl.jit(L.eig)(a)
    np.testing.assert_allclose(np.asarray(jw), np.asarray(w), atol=1e-6)
    np.testing.assert_allclose(np.asarray(jv), np.asarray(v), atol=1e-6)
    vw = netcl.vmap(L.eigvals, in_axes=1, out_axes=1)(a)    # (a batch axis not in front)
    np.testing.assert_allclose(_sorted(np.asarray(vw).T),
                               _sorted(np.asarray(L.eigvals(jnp.swapaxes(a, 0, 1)))),
                               atol=1e-5)
    assert "eig" in str(netcl.make_ir(L.eigvals)(a))


# ---- derivatives -----------------------------------------------------------------------------

@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_eigvals_jvp_and_grad_against_jax_and_differences(x64_on, complex_):
    a = _rand((2, 4, 4), seed=5, complex_=complex_)
    da = _rand((2, 4, 4), seed=6, complex_=complex_)
    w, dw = netcl.jvp(L.eigvals, (jnp.asarray(a),), (jnp.asarray(da),))
    jw, jdw = jax.jvp(JL.eigvals, (a,), (da,))
    p = _match(w, jw)                          # (eigenvalue order: LAPACK's own)
    np.testing.assert_allclose(np.take_along_axis(np.asarray(dw), p, -1), jdw, atol=1e-10)
    eps = 1e-6                                 # central differences, same order for small h
    fd = (np.linalg.eigvals(a + eps * da) - np.linalg.eigvals(a - eps * da)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(dw), fd, atol=1e-6)

    def loss(lib):
        return lambda a: lib.sum(lib.abs(lib.linalg.eigvals(a)) ** 2
                                 + 0.3 * lib.imag(lib.linalg.eigvals(a)))
    g = netcl.grad(loss(jnp))(jnp.asarray(a))
    assert g.dtype == a.dtype
    np.testing.assert_allclose(np.asarray(g), jax.grad(loss(jjnp))(a), atol=1e-10)
    gj = netcl.jit(netcl.grad(loss(jnp)))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(gj), np.asarray(g), atol=1e-12)


def test_eigvals_second_derivatives_against_differences(x64_on):
    # (JAX raises here: its eigvals rule differentiates eigenvectors it has no rule for;
    # the eigenvalues' tangent does not depend on their normalisation, so netcl's does)
    a = _rand((3, 3), seed=10)

    def loss(lib):
        return lambda a: lib.sum(lib.real(lib.linalg.eigvals(a)) ** 3
                                 + lib.imag(lib.linalg.eigvals(a)) ** 2)
    h = np.asarray(netcl.hessian(loss(jnp))(jnp.asarray(a)))
    grad, eps = jax.grad(loss(jjnp)), 1e-5
    fd = np.stack([(grad(a + eps * e.reshape(3, 3)) - grad(a - eps * e.reshape(3, 3)))
                   / (2 * eps) for e in np.eye(9)], -1).reshape(3, 3, 3, 3)
    np.testing.assert_allclose(h, fd, atol=1e-7 * max(1.0, np.abs(fd).max()))


@pytest.mark.parametrize("complex_", [False, True], ids=["real", "complex"])
def test_eigenvector_derivatives_on_request_as_jax(x64_on, complex_):
    a = _rand((3, 3), seed=7, complex_=complex_)
    da = _rand((3, 3), seed=8, complex_=complex_)

    def ours(a):
        return tuple(lax_linalg.eig(a, enable_eigvec_derivs=True))

    def theirs(a):
        return tuple(jax.lax.linalg.eig(a, enable_eigvec_derivs=True))
    out, tan = netcl.jvp(ours, (jnp.asarray(a),), (jnp.asarray(da),))
    jout, jtan = jax.jvp(theirs, (a,), (da,))
    np.testing.assert_allclose(np.asarray(out[0]), jout[0], atol=1e-12)   # (same order)
    # each column's phase against JAX's, s = <JAX's, ours> (the signs of real eigenvectors
    # may differ); a derivative turns with its column
    phases = [1.0] + [np.sum(np.conj(jout[k]) * np.asarray(out[k]), axis=-2) for k in (1, 2)]
    for k in (0, 1, 2):
        np.testing.assert_allclose(np.asarray(tan[k]) * np.conj(phases[k]), jtan[k], atol=1e-9)
    # reverse mode: one loss of all three results, Re(sum v * C), the same function of A for
    # both libraries once C is turned by each column's phase
    weights = [np.conj(np.asarray(j)) for j in jout]

    def loss(fn, lib, phased):
        return lambda a: sum(lib.sum(lib.real(o * (wt * np.conj(ph) if phased else wt)))
                             for o, wt, ph in zip(fn(a), weights, phases))
    got = netcl.grad(loss(ours, jnp, True))(jnp.asarray(a))
    assert got.dtype == a.dtype
    np.testing.assert_allclose(np.asarray(got), jax.grad(loss(theirs, jjnp, False))(a),
                               atol=1e-9)


def test_eigenvector_derivatives_raise_without_opt_in():
    a = jnp.asarray(_rand((3, 3), seed=9, dtype=np.float32))
    raises_with(NotImplementedError, lambda: netcl.jvp(L.eig, (a,), (a,)),
                "eig", "enable_eigvec_derivs")
    raises_with(NotImplementedError,
                lambda: netcl.grad(lambda a: jnp.sum(jnp.real(L.eig(a)[0])))(a),
                "eig", "enable_eigvec_derivs")


# ---- errors ----------------------------------------------------------------------------------

def test_errors_name_eig_and_the_shapes():
    raises_with(ValueError, lambda: L.eig(jnp.ones((2, 3))), "linalg.eig", "square", "(2, 3)")
    raises_with(ValueError, lambda: L.eigvals(jnp.ones(3)), "linalg.eigvals", "(3,)")
    raises_with(TypeError, lambda: L.eig(jnp.ones((2, 2), jnp.float16)), "linalg.eig",
                "float16")
    raises_with(TypeError, lambda: L.eigvals([[1.0, 0.0], [0.0, 1.0]]), "linalg.eigvals")
    ints = jnp.ones((2, 2), jnp.int32)
    raises_with(TypeError, lambda: le.eig_p.bind(ints, compute_left_eigenvectors=False,
                                                 compute_right_eigenvectors=True,
                                                 enable_eigvec_derivs=False),
                "eig", "int32", "(2, 2)")
    raises_with(ValueError, lambda: lax_linalg.eig(jnp.ones((2, 3))), "lax.linalg.eig",
                "square")
    raises_with(ValueError, lambda: lax_linalg.eig(jnp.eye(2), implementation="magma"),
                "eig", "implementation")
    raises_with(TypeError, lambda: lax_linalg.eig(jnp.eye(2), compute_left_eigenvectors=1),
                "compute_left_eigenvectors")


# ---- roots and poly ------------------------------------------------------------------------

def test_roots_as_jax():
    # (float32 and int32 coefficients: complex64 roots whatever x64 says, in both libraries)
    for p in ([1.0, -3.0, 2.0], [1, -3, 2], [0.0, 1.0, 2.0], [0.0, 0.0], [3.0],
              [1.0, 2.0, 3.0, 0.0, 0.0], [0.0, 0.0, 1.0, 2.0, 3.0]):
        p = np.array(p, np.float32 if isinstance(p[0], float) else np.int32)
        for strip in (True, False):
            got, want = jnp.roots(jnp.asarray(p), strip_zeros=strip), \
                jjnp.roots(p, strip_zeros=strip)
            assert got.dtype == want.dtype == np.complex64 and got.shape == want.shape, p
            got, want = np.asarray(got), np.asarray(want)
            nan = np.isnan(want)
            np.testing.assert_array_equal(np.isnan(got), nan)     # (the stripped roots)
            np.testing.assert_allclose(_sorted(got[~nan]), _sorted(want[~nan]), atol=1e-5,
                                       err_msg=str(p))
    z = np.array([1 + 1j, 2.0, 3j], np.complex64)
    np.testing.assert_allclose(_sorted(jnp.roots(jnp.asarray(z))), _sorted(np.roots(z)),
                               atol=1e-5)
    p = jnp.asarray(np.array([0.0, 1.0, 2.0], np.float32))
    jitted = netcl.jit(lambda p: jnp.roots(p, strip_zeros=False))(p)
    np.testing.assert_allclose(np.asarray(jitted)[0], -2, atol=1e-6)
    assert np.isnan(np.asarray(jitted)[1])
    raises_with(TypeError, lambda: netcl.jit(jnp.roots)(jnp.ones(3)), "roots",
                "strip_zeros=False")
    raises_with(ValueError, lambda: jnp.roots(jnp.ones((2, 2))), "roots", "1-d")


def test_poly_of_a_square_matrix_as_jax():
    for m in (np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
              np.array([[2, 1, 5], [3, 4, 7], [1, 3, 5]], np.int32),
              np.array([[1j, 2.0], [0.5, -1.0]], np.complex64)):
        got, want = jnp.poly(jnp.asarray(m)), jjnp.poly(m)
        assert got.dtype == want.dtype == np.complex64
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    jitted = netcl.jit(jnp.poly)(jnp.eye(2, dtype=jnp.float32))
    np.testing.assert_allclose(np.asarray(jitted), [1, -2, 1], atol=1e-6)
