"""netcl.scipy.linalg beyond the solvers: the structured matrices (linalg_structured.py), qr,
qr_multiply and svd with scipy's conventions, the host algorithms for the Hessenberg and
Schur forms and pivoted QR (linalg_schur.py: in NumPy against scipy/LAPACK, and through the
public functions against JAX), rsf2csf, eigh_tridiagonal, and the matrix functions expm,
expm_frechet, sqrtm, funm, polar and solve_sylvester (linalg_matrix_functions.py) against
JAX on small fixed shapes and a few random draws; expm's derivatives against finite
differences in float64; jit and vmap where they add something; bad inputs raising typed
errors that name the function.

Few shapes and dtypes: every new one compiles kernels on PoCL."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.linalg as sla
from netcl.scipy import linalg_schur as ls
from netcl.test_util import check_grads
from util import raises_with

jax = pytest.importorskip("jax")
jjnp = jax.numpy
jsla = jax.scipy.linalg

F32 = dict(rtol=2e-4, atol=2e-5)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(got, want, **tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    np.testing.assert_allclose(got, want, **(tol or F32))


def _same_spectrum(t, a, atol):
    """t and a have the same eigenvalues (matched nearest to nearest: sorting complex
    numbers whose imaginary parts are rounding noise is not stable)."""
    wt, wa = np.linalg.eigvals(t), np.linalg.eigvals(a)
    dist = np.abs(wt[:, None] - wa[None, :])
    assert dist.min(axis=0).max() <= atol and dist.min(axis=1).max() <= atol, (wt, wa)


def _x64_jax():
    """JAX with netcl's x64 setting (the default float dtype decides some results')."""
    return jax.enable_x64(netcl.config.enable_x64)


# ---- structured matrices ----------------------------------------------------------------------
# Values against scipy.linalg's (which JAX's follow), dtypes and shapes against JAX's through
# jax.eval_shape (tracing only: compiling every JAX function would dominate the file's time),
# and the batched forms, which scipy lacks, against JAX's values.

def _like_jax(got, jax_fn, *args, **kw):
    """got has the shape and dtype JAX's function gives for the same arguments."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def call(*arrs):        # (ints and strings stay static, as JAX's static_argnames)
        full = list(args)
        for i, a in zip(arrays, arrs):
            full[i] = a
        return jax_fn(*full, **kw)
    with _x64_jax():
        want = jax.eval_shape(call, *[args[i] for i in arrays])
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{jax_fn.__name__}: {got.shape} {got.dtype} != {want.shape} {want.dtype}"
    return got


def _vs_scipy(name, args, sargs=None, kw=None, jargs=None, rtol=1e-6, atol=1e-6):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    kw = kw or {}
    got = getattr(sla, name)(*[jnp.asarray(a) if isinstance(a, np.ndarray) else a
                               for a in args], **kw)
    got = _like_jax(got, getattr(jsla, name), *(args if jargs is None else jargs), **kw)
    want = getattr(scipy_linalg, name)(*(args if sargs is None else sargs), **kw)
    np.testing.assert_allclose(got.astype(np.complex128), np.asarray(want, np.complex128),
                               rtol=rtol, atol=atol, err_msg=name)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.complex64])
def test_vector_built_matrices_against_scipy(dtype):
    c = np.array([1.5, -2.0, 3.0, 0.5]).astype(dtype) if dtype != np.complex64 else \
        np.array([1 + 1j, 2 - 1j, 0.5j, 1.0], dtype)
    r = np.array([7, 8, 9]).astype(dtype)
    _vs_scipy("toeplitz", (c,))          # (r = conj(c): Hermitian where c[0] is real)
    _vs_scipy("toeplitz", (c, r))
    _vs_scipy("hankel", (c,))
    _vs_scipy("hankel", (c, r))
    _vs_scipy("circulant", (c,))
    if dtype != np.complex64:
        _vs_scipy("fiedler", (c,))
        _vs_scipy("leslie", (c, r))
    _vs_scipy("companion", (c,))
    for n in (2, 3, 4):          # the pattern's edge cases: 1x1, even and odd sizes
        _vs_scipy("fiedler_companion", (c[:n],))
    _like_jax(sla.fiedler_companion(jnp.asarray(c[:1])), jsla.fiedler_companion, c[:1])
    for mode in ("full", "same", "valid"):
        for n in (1, 2, 6):
            _vs_scipy("convolution_matrix", (c, n, mode))
    _vs_scipy("block_diag", (c, r[None, :2], np.array(5).astype(dtype)))
    _like_jax(sla.block_diag(), jsla.block_diag)


def test_batched_vector_built_matrices_match_jax():
    rng = _rng(1)
    c = rng.standard_normal((2, 3)).astype(np.float32)
    r = rng.standard_normal(4).astype(np.float32)
    _close(sla.toeplitz(jnp.asarray(c), jnp.asarray(r)), jsla.toeplitz(c, r))
    _close(sla.companion(jnp.asarray(c)), jsla.companion(c))
    _close(sla.hankel(jnp.asarray(c), jnp.asarray(r)), np.stack(
        [pytest.importorskip("scipy.linalg").hankel(ci, r) for ci in c]).astype(np.float32))


@pytest.mark.parametrize("n", [0, 1, 6])
def test_size_built_matrices_against_scipy(n):
    tol = dict(rtol=1e-6, atol=0)
    for name in ("hilbert", "invhilbert"):
        _vs_scipy(name, (n,), **tol)
    for kind in ("symmetric", "lower", "upper"):
        _vs_scipy("pascal", (n,), kw=dict(kind=kind), **tol)
        _vs_scipy("invpascal", (n,), kw=dict(kind=kind), **tol)
    for scale in (None, "sqrtn", "n"):
        _vs_scipy("dft", (n,), kw=dict(scale=scale), atol=1e-6)
    if n:
        _vs_scipy("helmert", (n,), **tol)
        _vs_scipy("helmert", (n,), kw=dict(full=True), **tol)
    _vs_scipy("hadamard", (2 ** n,))
    _vs_scipy("hadamard", (2 ** n,), kw=dict(dtype=jnp.float32), jargs=(2 ** n,))
    # exact integers: pascal @ invpascal is the identity exactly
    p = np.asarray(sla.pascal(n), np.float64)
    assert np.array_equal(p @ np.asarray(sla.invpascal(n), np.float64), np.eye(n))


def test_structured_bad_inputs():
    raises_with(TypeError, lambda: sla.toeplitz([1, 2, 3]), "scipy.linalg.toeplitz", "list")
    raises_with(ValueError, lambda: sla.hankel(jnp.asarray(1.0)), "scipy.linalg.hankel",
                "scalar")
    raises_with(ValueError, lambda: sla.leslie(jnp.ones(3), jnp.ones(3)),
                "scipy.linalg.leslie", "(3,)")
    raises_with(ValueError, lambda: sla.companion(jnp.ones(1)), "scipy.linalg.companion",
                "(1,)")
    raises_with(ValueError, lambda: sla.convolution_matrix(jnp.ones(3), 0),
                "scipy.linalg.convolution_matrix", "n must be positive")
    raises_with(ValueError, lambda: sla.convolution_matrix(jnp.ones(3), 2, "wide"),
                "scipy.linalg.convolution_matrix", "'wide'")
    raises_with(TypeError, lambda: sla.hilbert(2.5), "scipy.linalg.hilbert", "int")
    raises_with(ValueError, lambda: sla.hadamard(6), "scipy.linalg.hadamard", "power of 2")
    raises_with(ValueError, lambda: sla.dft(4, dtype=jnp.float32), "scipy.linalg.dft",
                "complex", "float32")
    raises_with(ValueError, lambda: sla.pascal(3, "diagonal"), "scipy.linalg.pascal",
                "'diagonal'")
    raises_with(ValueError, lambda: sla.block_diag(jnp.ones((1, 2, 2))),
                "scipy.linalg.block_diag", "(1, 2, 2)")
    raises_with(ValueError, lambda: sla.toeplitz(jnp.ones((2, 3)), jnp.ones((3, 3))),
                "scipy.linalg.toeplitz", "(2, 3)", "(3, 3)")


# ---- qr, qr_multiply, svd ---------------------------------------------------------------------
# Values against LAPACK through scipy and NumPy (JAX's CPU kernels are the same routines),
# result structure, shapes and dtypes against JAX's (eval_shape).

SHAPES = [(4, 4), (5, 3), (3, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_qr_against_lapack(shape):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    x = _rng(2).standard_normal(shape).astype(np.float32)
    k = min(shape)
    for mode in ("full", "economic", "r"):
        for pivoting in (False, True):
            got = sla.qr(jnp.asarray(x), mode=mode, pivoting=pivoting)
            with _x64_jax():
                want_shapes = jax.eval_shape(lambda a: jsla.qr(a, mode=mode,
                                                               pivoting=pivoting), x)
            want = scipy_linalg.qr(x, mode=mode, pivoting=pivoting)
            assert len(got) == len(want_shapes) == len(want)
            for g, w in zip(got, want_shapes):
                assert np.asarray(g).shape == w.shape and np.asarray(g).dtype == w.dtype
            if pivoting:
                np.testing.assert_array_equal(got[-1], want[-1])     # geqp3's order
            r = got[0] if mode == "r" else got[1]
            rw = want[0] if mode == "r" else want[1]
            np.testing.assert_allclose(np.asarray(r), rw, rtol=1e-4, atol=1e-5)
            if mode != "r":
                q = np.asarray(got[0])
                np.testing.assert_allclose(q[:, :k], want[0][:, :k], rtol=1e-4, atol=1e-5)
                np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-5)
                xp = x[:, np.asarray(got[-1])] if pivoting else x
                np.testing.assert_allclose(q @ np.asarray(r), xp, atol=1e-5)


@pytest.mark.parametrize("shape", SHAPES)
def test_qr_multiply_and_svd_against_lapack(shape):
    rng = _rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    k = min(shape)
    q, r = np.linalg.qr(x)
    for mode, cshape in (("left", (k, 2)), ("right", (2, shape[0]))):
        c = rng.standard_normal(cshape).astype(np.float32)
        for arg in (c, c[:, 0] if mode == "left" else c[0]):
            got = sla.qr_multiply(jnp.asarray(x), jnp.asarray(arg), mode)
            _like_jax(got[0], lambda a, c: jsla.qr_multiply(a, c, mode)[0], x, arg)
            np.testing.assert_allclose(np.asarray(got[0]), q @ arg if mode == "left" else
                                       arg @ q, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(np.asarray(got[1]), r, rtol=1e-4, atol=1e-5)
    for full in (True, False):
        u, s, vh = sla.svd(jnp.asarray(x), full_matrices=full)
        with _x64_jax():
            uw, sw, vhw = jax.eval_shape(lambda a: jsla.svd(a, full_matrices=full), x)
        assert (u.shape, s.shape, vh.shape) == (uw.shape, sw.shape, vhw.shape)
        np.testing.assert_allclose(np.asarray(s), np.linalg.svd(x, compute_uv=False),
                                   rtol=1e-5, atol=1e-6)
        u, vh = np.asarray(u), np.asarray(vh)
        np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=1e-5)
        np.testing.assert_allclose(vh @ vh.T, np.eye(vh.shape[0]), atol=1e-5)
        np.testing.assert_allclose((u[:, :k] * np.asarray(s)) @ vh[:k], x, atol=1e-5)
    assert sla.svd(jnp.asarray(x), compute_uv=False).shape == (k,)


def test_qr_complex_and_pivoted_gradient():
    rng = _rng(4)
    x = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    q, r = sla.qr(jnp.asarray(x))
    _, rw = np.linalg.qr(x, mode="complete")
    assert q.dtype == np.complex64 and q.shape == (4, 4) and r.shape == (4, 3)
    _close(np.abs(np.asarray(r)), np.abs(rw), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), x, atol=1e-5)
    # the pivoted factors differentiate as the unpivoted QR of the permuted matrix
    a = rng.standard_normal((4, 3))
    g = netcl.grad(lambda a: jnp.sum(sla.qr(a, mode="economic", pivoting=True)[1] ** 2))(
        jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), 2 * a, rtol=1e-5)    # sum(R^2) = |a|_F^2


# ---- the host algorithms (NumPy) against LAPACK, through scipy ---------------------------------

def test_host_schur_hessenberg_and_pivots_against_lapack():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = _rng(5)
    for trial in range(60):
        n = int(rng.integers(1, 9))
        kind = trial % 4
        a = rng.standard_normal((n, n))
        if kind == 1:
            a = a + a.T
        elif kind == 2:     # repeated and defective eigenvalues
            a = rng.integers(-2, 3, (n, n)).astype(np.float64)
        elif kind == 3:
            a = a + 1j * rng.standard_normal((n, n))
        h, q = ls._hessenberg1(a)
        if n > 2:           # (scipy returns n <= 2 matrices as they are; gehrd does not)
            hw, qw = scipy_linalg.hessenberg(a, calc_q=True)
            np.testing.assert_allclose(h, hw, atol=1e-10)
            np.testing.assert_allclose(q, qw, atol=1e-10)
        for fn in ((ls._complex_schur1,) if kind == 3 else
                   (ls._real_schur1, ls._complex_schur1)):
            t, z = fn(a)
            np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=1e-12 * max(1, n))
            np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=1e-12)
            if fn is ls._complex_schur1:
                assert np.all(np.tril(t, -1) == 0)
            else:           # quasi-triangular, 2x2 blocks standardized as dlanv2's
                assert np.all(np.tril(t, -2) == 0)
                sub = np.diag(t, -1)
                for i in np.nonzero(sub)[0]:
                    assert t[i, i] == t[i + 1, i + 1] and t[i, i + 1] * t[i + 1, i] < 0
                    assert i + 1 >= len(sub) or sub[i + 1] == 0
            _same_spectrum(t, a, 1e-8)
        m = int(rng.integers(1, 7))
        b = rng.standard_normal((m, n))
        np.testing.assert_array_equal(ls._pivots1(b),
                                      scipy_linalg.qr(b, pivoting=True)[2])
    # a matrix that cannot converge gives NaN (as LAPACK's failures in JAX)
    t, z = ls._real_schur1(np.full((3, 3), np.nan))
    assert np.isnan(t).all() and np.isnan(z).all()


def test_schur_hessenberg_rsf2csf_public():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = _rng(6)
    a = rng.standard_normal((2, 4, 4)).astype(np.float32)
    h, q = sla.hessenberg(jnp.asarray(a[0]), calc_q=True)
    hw, qw = scipy_linalg.hessenberg(a[0], calc_q=True)     # (gehrd, as JAX's)
    _like_jax(h, lambda x: jsla.hessenberg(x, calc_q=True)[0], a[0])
    np.testing.assert_allclose(np.asarray(h), hw, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(q), qw, rtol=1e-4, atol=1e-5)
    assert sla.hessenberg(jnp.asarray(a)).shape == (2, 4, 4)
    for output in ("real", "complex"):
        t, z = sla.schur(jnp.asarray(a), output)
        _like_jax(t, lambda x: jsla.schur(x, output)[0], a)
        t, z = np.asarray(t), np.asarray(z)
        np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=2e-5)
        for i in range(2):    # (the same eigenvalues; their order on T's diagonal may differ)
            _same_spectrum(t[i], a[i], 1e-4)
    # rsf2csf of LAPACK's own real Schur form, as scipy's (which JAX's ports)
    tw, zw = scipy_linalg.schur(a[0].astype(np.float64))
    t2, z2 = sla.rsf2csf(jnp.asarray(tw), jnp.asarray(zw))
    t2w, z2w = scipy_linalg.rsf2csf(tw, zw)
    _like_jax(t2, lambda t, z: jsla.rsf2csf(t, z)[0], tw, zw)
    np.testing.assert_allclose(np.asarray(t2), t2w, atol=1e-10)
    np.testing.assert_allclose(np.asarray(z2), z2w, atol=1e-10)
    t3, z3 = sla.rsf2csf(*sla.schur(jnp.asarray(a)))
    t3, z3 = np.asarray(t3), np.asarray(z3)
    assert np.all(np.tril(t3, -1) == 0) and t3.dtype == np.complex64
    np.testing.assert_allclose(z3 @ t3 @ np.conj(np.swapaxes(z3, -1, -2)), a, atol=2e-5)
    # under jit and vmap (a host call at run time)
    t4 = netcl.jit(lambda x: sla.schur(x)[0])(jnp.asarray(a[0]))
    np.testing.assert_allclose(np.asarray(t4), np.asarray(sla.schur(jnp.asarray(a[0]))[0]))
    assert netcl.vmap(sla.hessenberg)(jnp.asarray(a)).shape == (2, 4, 4)


def test_eigh_tridiagonal():
    d = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    e = np.array([1.0, -0.5, 2.0], np.float32)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    got = sla.eigh_tridiagonal(jnp.asarray(d), jnp.asarray(e), eigvals_only=True)
    _like_jax(got, lambda d, e: jsla.eigh_tridiagonal(d, e, eigvals_only=True), d, e)
    np.testing.assert_allclose(np.asarray(got), np.linalg.eigvalsh(t), rtol=1e-5, atol=1e-5)
    w, v = sla.eigh_tridiagonal(jnp.asarray(d), jnp.asarray(e), select="i",
                                select_range=(1, 2))
    _like_jax(v, lambda d, e: jsla.eigh_tridiagonal(d, e, select="i",
                                                    select_range=(1, 2))[1], d, e)
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(t)[1:3], rtol=1e-5)
    np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-5)
    ec = (e + 1j * np.array([0.5, 0.0, -1.0])).astype(np.complex64)
    w, v = sla.eigh_tridiagonal(jnp.asarray(d.astype(np.complex64)), jnp.asarray(ec))
    tc = np.diag(d) + np.diag(ec, 1) + np.diag(ec.conj(), -1)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    np.testing.assert_allclose(tc @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-5)


def test_decomposition_bad_inputs():
    raises_with(ValueError, lambda: sla.qr(jnp.ones((3, 3)), mode="raw"), "scipy.linalg.qr",
                "'raw'")
    raises_with(ValueError, lambda: sla.qr(jnp.ones(3)), "scipy.linalg.qr", "(3,)")
    raises_with(ValueError, lambda: sla.qr_multiply(jnp.ones((4, 3)), jnp.ones((2, 3))),
                "scipy.linalg.qr_multiply", "(4, 3)", "(2, 3)")
    raises_with(ValueError, lambda: sla.schur(jnp.ones((2, 3))), "scipy.linalg.schur",
                "square", "(2, 3)")
    raises_with(ValueError, lambda: sla.schur(jnp.ones((2, 2)), "imaginary"),
                "scipy.linalg.schur", "'imaginary'")
    raises_with(TypeError, lambda: sla.hessenberg(jnp.ones((2, 2), jnp.float16)),
                "scipy.linalg.hessenberg", "float16")
    raises_with(ValueError, lambda: sla.rsf2csf(jnp.ones((3, 3)), jnp.ones((2, 2))),
                "scipy.linalg.rsf2csf", "(3, 3)", "(2, 2)")
    raises_with(TypeError, lambda: sla.eigh_tridiagonal(jnp.ones(3, jnp.float32),
                                                        jnp.ones(2, jnp.int32)),
                "scipy.linalg.eigh_tridiagonal", "float32", "int32")
    raises_with(NotImplementedError,
                lambda: sla.eigh_tridiagonal(jnp.ones(3), jnp.ones(2), select="v"),
                "scipy.linalg.eigh_tridiagonal", "'v'")
    raises_with(NotImplementedError,
                lambda: netcl.grad(lambda x: jnp.sum(sla.schur(x)[0]))(jnp.eye(2)),
                "scipy.linalg.schur", "not implemented")


# ---- matrix functions ---------------------------------------------------------------------------

def test_expm_matches_jax_at_each_pade_order():
    rng = _rng(7)
    a = rng.standard_normal((3, 3)).astype(np.float32)
    a /= np.abs(a).sum(axis=0).max()      # 1-norm 1: scaled below to each order and beyond
    # a batch with a matrix for each Pade order of float32 (3, 5, 7) and one squared 4 times
    batch = np.stack([a * 0.1, a * 1.0, a * 40.0])
    _close(sla.expm(jnp.asarray(batch)), jsla.expm(batch), rtol=3e-4, atol=1e-5)
    _close(sla.expm(jnp.asarray(a * 3)), jsla.expm(a * 3), rtol=3e-4, atol=1e-5)
    # under jit every order is computed and the right one selected
    _close(netcl.jit(sla.expm)(jnp.asarray(batch)), jsla.expm(batch), rtol=3e-4, atol=1e-5)
    u = np.triu(a) * 3
    _close(sla.expm(jnp.asarray(u), upper_triangular=True),
           jsla.expm(u, upper_triangular=True), rtol=3e-4, atol=1e-5)
    # beyond max_squarings: NaN, as JAX's
    _close(sla.expm(jnp.asarray(a * 40.0), max_squarings=2),
           jsla.expm(a * 40.0, max_squarings=2), equal_nan=True)
    c = (a + 1j * a.T).astype(np.complex64)
    _close(sla.expm(jnp.asarray(c)), jsla.expm(c), rtol=3e-4, atol=1e-5)


def test_expm_gradients_and_frechet(x64_on):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = _rng(8)
    a = rng.standard_normal((3, 3))
    check_grads(sla.expm, (jnp.asarray(a),), order=1)
    check_grads(sla.expm, (jnp.asarray(4 * a),), order=1, modes=("rev",))    # (squarings)
    e = rng.standard_normal((3, 3))
    got = sla.expm_frechet(jnp.asarray(a), jnp.asarray(e))
    want = scipy_linalg.expm_frechet(a, e)
    _close(got[0], want[0], rtol=1e-10, atol=1e-12)
    _close(got[1], want[1], rtol=1e-9, atol=1e-11)
    _close(sla.expm_frechet(jnp.asarray(a), jnp.asarray(e), compute_expm=False), want[1],
           rtol=1e-9, atol=1e-11)


def test_sqrtm_and_funm_match_jax():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = _rng(9)
    a = rng.standard_normal((4, 4)).astype(np.float32)
    spd = a @ a.T + np.eye(4, dtype=np.float32)
    got = sla.sqrtm(jnp.asarray(a))
    _close(got, jsla.sqrtm(a), rtol=2e-3, atol=2e-4)     # (complex, as JAX's)
    np.testing.assert_allclose(np.asarray(got) @ np.asarray(got), a, atol=2e-4)
    got = sla.sqrtm(jnp.asarray(spd))
    np.testing.assert_allclose(np.asarray(got), scipy_linalg.sqrtm(spd.astype(np.float64)),
                               rtol=2e-3, atol=2e-4)
    _close(sla.funm(jnp.asarray(a), jnp.sin), jsla.funm(a, jjnp.sin), rtol=2e-3, atol=2e-4)
    f, err = sla.funm(jnp.asarray(spd), jnp.exp, disp=False)
    fw, errw = scipy_linalg.funm(spd.astype(np.float64), np.exp, disp=False)
    np.testing.assert_allclose(np.asarray(f), fw, rtol=2e-3, atol=2e-3)
    assert 0 < float(err) < 1e-3 and float(errw) < 1e-3
    # a diagonal matrix with repeated eigenvalues: the zero-denominator paths
    d = np.diag(np.array([4.0, 4.0, 9.0, 9.0], np.float32))
    np.testing.assert_allclose(np.asarray(sla.sqrtm(jnp.asarray(d))), np.sqrt(d), atol=1e-6)
    np.testing.assert_allclose(np.asarray(sla.funm(jnp.asarray(d), jnp.sqrt)), np.sqrt(d),
                               atol=1e-6)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_polar(shape):
    scipy_linalg = pytest.importorskip("scipy.linalg")
    x = _rng(10).standard_normal(shape).astype(np.float32)
    for side in ("right", "left"):
        uw, pw = scipy_linalg.polar(x.astype(np.float64), side)   # (unique: x has full rank)
        for method in ("qdwh", "svd"):
            if method == "qdwh" and (shape[0] >= shape[1]) != (side == "right"):
                raises_with(NotImplementedError, lambda: sla.polar(jnp.asarray(x), side),
                            "scipy.linalg.polar", "qdwh")
                continue
            u, p = sla.polar(jnp.asarray(x), side, method=method)
            _like_jax(p, lambda x: jsla.polar(x, side, method=method)[1], x)
            np.testing.assert_allclose(np.asarray(u), uw, rtol=1e-3, atol=1e-4)
            np.testing.assert_allclose(np.asarray(p), pw, rtol=1e-3, atol=1e-4)
    if shape[0] >= shape[1]:      # one direct comparison with JAX's QDWH
        _close(sla.polar(jnp.asarray(x))[0], jsla.polar(x)[0], rtol=1e-3, atol=1e-4)


def test_solve_sylvester():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    rng = _rng(11)
    A = (rng.standard_normal((4, 4)) + 3 * np.eye(4)).astype(np.float32)
    B = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    C = rng.standard_normal((4, 3)).astype(np.float32)
    want = scipy_linalg.solve_sylvester(A.astype(np.float64), B, C)
    for method in ("schur", "eigen"):
        got = sla.solve_sylvester(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C),
                                  method=method)
        _like_jax(got, lambda a, b, c: jsla.solve_sylvester(a, b, c, method=method), A, B, C)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-3, atol=1e-4)
    # batched, broadcasting A against a batch of C
    got = sla.solve_sylvester(jnp.asarray(A), jnp.asarray(B), jnp.asarray(np.stack([C, -C])))
    np.testing.assert_allclose(np.asarray(got), np.stack([want, -want]), rtol=1e-3, atol=1e-4)
    # a singular equation (eigenvalues of A and B summing to 0): NaN, as JAX's
    s = sla.solve_sylvester(jnp.eye(2), -jnp.eye(2), jnp.ones((2, 2)))
    assert np.isnan(np.asarray(s)).all()


def test_matrix_function_bad_inputs():
    raises_with(ValueError, lambda: sla.expm(jnp.ones((2, 3))), "scipy.linalg.expm", "A",
                "(2, 3)")
    raises_with(TypeError, lambda: sla.expm(jnp.eye(2), max_squarings=2.0),
                "scipy.linalg.expm", "max_squarings")
    raises_with(ValueError, lambda: sla.expm_frechet(jnp.eye(2), jnp.eye(3)),
                "scipy.linalg.expm_frechet", "(2, 2)", "(3, 3)")
    raises_with(NotImplementedError, lambda: sla.sqrtm(jnp.eye(2), blocksize=2),
                "scipy.linalg.sqrtm", "blocksize")
    raises_with(ValueError, lambda: sla.funm(jnp.ones((2, 2, 2)), jnp.exp),
                "scipy.linalg.funm", "(2, 2, 2)")
    raises_with(TypeError, lambda: sla.funm(jnp.eye(2), "exp"), "scipy.linalg.funm",
                "callable")
    raises_with(ValueError, lambda: sla.polar(jnp.eye(2), "up"), "scipy.linalg.polar",
                "'up'")
    raises_with(ValueError, lambda: sla.solve_sylvester(jnp.eye(2), jnp.eye(3),
                                                        jnp.ones((3, 3))),
                "scipy.linalg.solve_sylvester", "(2, 2)", "(3, 3)")
    raises_with(ValueError, lambda: sla.solve_sylvester(jnp.eye(2), jnp.eye(2),
                                                        jnp.ones((2, 2)), method="lu"),
                "scipy.linalg.solve_sylvester", "'lu'")
