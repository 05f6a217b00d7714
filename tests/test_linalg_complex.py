"""jnp.linalg, netcl.scipy.linalg and the host linalg primitives on complex matrices
(complex64, complex128) against NumPy and JAX: values of every function (batched), the
output dtypes (real singular values, eigenvalues, logabsdet, residuals and norms; complex
slogdet sign), gradients of real-valued functions of complex matrices by JAX's convention
(jax.grad and forward-mode jax.jvp, complex128, to 1e-8), check_grads against finite
differences (second order on a few), jit and vmap, and the errors. The real cases are in
test_linalg_decomp.py, test_linalg_surface.py, test_lu_surface.py and test_scipy.py."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.linalg as sla
from netcl.primitives import linalg_host as lh
from netcl.primitives.linalg_lu import lu as lax_lu
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402
import jax.scipy.linalg as jsla  # noqa: E402
import scipy.linalg as scipy_linalg  # noqa: E402

C64, C128 = np.complex64, np.complex128


def _z(rng, shape, dtype=C128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _hpd(rng, shape, dtype=C128):
    """Hermitian positive-definite matrices, well conditioned."""
    x = _z(rng, shape, C128)
    n = shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)


def _well(rng, shape, dtype=C128):
    """General square matrices kept away from singular."""
    return (_z(rng, shape, C128) + 3 * np.eye(shape[-1])).astype(dtype)


def _leaves(x):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(
        tuple(x) if isinstance(x, tuple) else x)]


def _close(got, want, tol, check_dtype=True):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        if check_dtype and w.dtype.kind != "i":      # (netcl's indices are int32)
            assert g.dtype == w.dtype, (g.dtype, w.dtype)
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale)


# ---- values against NumPy and SciPy (LAPACK's conventions), complex64 and complex128 ---------

def _np_herm(a):
    return (a + np.conj(np.swapaxes(a, -1, -2))) / 2


def _np_pinv(a, hermitian=False):
    m, n = a.shape[-2:]      # (JAX's default cutoff, not NumPy's 1e-15)
    return np.linalg.pinv(a, rcond=10 * max(m, n) * np.finfo(a.dtype).eps, hermitian=hermitian)


def _np_lstsq(a, b):
    x, resid, _, s = np.linalg.lstsq(a, b, rcond=None)
    return x, resid, s


def _np_cond(a):
    return np.linalg.cond(a), np.linalg.cond(a, 1), np.linalg.cond(a, "fro")


def _np_solve_triangular(a, b):
    return tuple(scipy_linalg.solve_triangular(a[i], b[i], trans=t, lower=lo,
                                               unit_diagonal=u)
                 for t in (0, 1, 2, "C") for lo in (True, False) for u in (False, True)
                 for i in (0, 1))


def _np_lu(a):
    p, l, u = scipy_linalg.lu(a)
    pl, u2 = scipy_linalg.lu(a, permute_l=True)
    return p, l, u, pl, u2


def _np_lu_factor_solve(a, b):
    f = [scipy_linalg.lu_factor(x) for x in a]
    lu, piv = np.stack([x[0] for x in f]), np.stack([x[1] for x in f]).astype(np.int32)
    return (lu, piv) + tuple(np.stack([scipy_linalg.lu_solve(fi, bi, trans=t)
                                       for fi, bi in zip(f, b)]) for t in (0, 1, 2))


VALUES = {
    # name: (netcl function of (jnp.linalg, scipy.linalg, *args), NumPy/SciPy oracle, args)
    "cholesky": (lambda L, S, a: L.cholesky(a), np.linalg.cholesky,
                 lambda r, d: [_hpd(r, (2, 3, 4, 4), d)]),
    "cholesky upper": (lambda L, S, a: L.cholesky(a, upper=True),
                       lambda a: np.conj(np.swapaxes(np.linalg.cholesky(a), -1, -2)),
                       lambda r, d: [_hpd(r, (3, 4, 4), d)]),
    "solve": (lambda L, S, a, b: (L.solve(a, b), L.solve(a[0, 0], b[0, 0, :, 0])),
              lambda a, b: (np.linalg.solve(a, b), np.linalg.solve(a[0, 0], b[0, 0, :, 0])),
              lambda r, d: [_well(r, (2, 3, 4, 4), d), _z(r, (2, 3, 4, 2), d)]),
    "inv, det, slogdet": (
        lambda L, S, a: (L.inv(a), L.det(a), *L.slogdet(a), L.det(a[..., :3, :3])),
        lambda a: (np.linalg.inv(a), np.linalg.det(a), *np.linalg.slogdet(a),
                   np.linalg.det(a[..., :3, :3])),
        lambda r, d: [_well(r, (2, 3, 5, 5), d)]),
    "eigvalsh": (
        lambda L, S, a: (L.eigvalsh(a), L.eigh(a, UPLO="U", symmetrize_input=False)[0]),
        lambda a: (np.linalg.eigvalsh(_np_herm(a)), np.linalg.eigvalsh(a, UPLO="U")),
        lambda r, d: [_z(r, (2, 3, 4, 4), d)]),
    "svdvals, norms": (
        lambda L, S, a: (L.svdvals(a), *(L.norm(a, o, axis=(-2, -1)) for o in (2, -2, "nuc")),
                         L.matrix_norm(a, ord=1), L.vector_norm(a), L.vector_norm(a, ord=3)),
        lambda a: (np.linalg.svd(a, compute_uv=False),
                   *(np.linalg.norm(a, o, axis=(-2, -1)) for o in (2, -2, "nuc", 1)),
                   np.linalg.norm(a.ravel()), np.linalg.norm(a.ravel(), 3)),
        lambda r, d: [_z(r, (2, 3, 5, 4), d)]),
    "svd hermitian": (lambda L, S, a: L.svd(a, hermitian=True)[1],
                      lambda a: np.linalg.svd(a, compute_uv=False, hermitian=True),
                      lambda r, d: [_hpd(r, (2, 4, 4), d) - 8 * np.eye(4).astype(d)]),
    "qr": (lambda L, S, a, w: (*L.qr(a), *L.qr(w), L.qr(a, mode="r")),
           lambda a, w: (*np.linalg.qr(a), *np.linalg.qr(w), np.linalg.qr(a, mode="r")),
           lambda r, d: [_z(r, (2, 3, 5, 4), d), _z(r, (3, 3, 5), d)]),
    "lstsq": (lambda L, S, a, b: (lambda x, resid, rank, s: (x, resid, s))(*L.lstsq(a, b)),
              _np_lstsq, lambda r, d: [_z(r, (6, 4), d), _z(r, (6, 2), d)]),
    "pinv": (lambda L, S, a, h: (L.pinv(a), L.pinv(h, hermitian=True)),
             lambda a, h: (_np_pinv(a), _np_pinv(h, True)),
             lambda r, d: [_z(r, (2, 5, 3), d), _hpd(r, (2, 4, 4), d)]),
    "matrix_power, matrix_rank": (
        lambda L, S, a, b: (L.matrix_power(a, 3), L.matrix_power(a, -2),
                            L.matrix_rank(b, 1e-3)),
        lambda a, b: (np.linalg.matrix_power(a, 3), np.linalg.matrix_power(a, -2),
                      np.linalg.matrix_rank(b, 1e-3).astype(np.int32)),
        lambda r, d: [_well(r, (2, 4, 4), d), (_z(r, (3, 5, 2), d) @ _z(r, (3, 2, 4), d))]),
    "cond": (lambda L, S, a: (L.cond(a), L.cond(a, 1), L.cond(a, "fro")), _np_cond,
             lambda r, d: [_well(r, (2, 4, 4), d)]),
    "tensorinv, tensorsolve": (
        lambda L, S, a, b: (L.tensorinv(a.reshape(4, 2, 2), 1),
                            L.tensorsolve(a.reshape(4, 2, 2), b)),
        lambda a, b: (np.linalg.tensorinv(a.reshape(4, 2, 2), 1),
                      np.linalg.tensorsolve(a.reshape(4, 2, 2), b)),
        lambda r, d: [_well(r, (4, 4), d), _z(r, (4,), d)]),
    "scipy cholesky, cho_solve": (
        lambda L, S, a, b: (S.cholesky(a), S.cholesky(a, lower=True),
                            S.cho_solve(S.cho_factor(a), b),
                            S.cho_solve(S.cho_factor(a, lower=True), b)),
        lambda a, b: (scipy_linalg.cholesky(a), scipy_linalg.cholesky(a, lower=True),
                      np.linalg.solve(a, b), np.linalg.solve(a, b)),
        lambda r, d: [_hpd(r, (4, 4), d), _z(r, (4, 3), d)]),
    "scipy solve_triangular": (
        lambda L, S, a, b: tuple(S.solve_triangular(a[i], b[i], trans=t, lower=lo,
                                                    unit_diagonal=u)
                                 for t in (0, 1, 2, "C") for lo in (True, False)
                                 for u in (False, True) for i in (0, 1)),
        _np_solve_triangular,
        lambda r, d: [_well(r, (2, 4, 4), d), _z(r, (2, 4, 3), d)]),
    "scipy lu": (lambda L, S, a: (*S.lu(a), *S.lu(a, permute_l=True)), _np_lu,
                 lambda r, d: [_z(r, (4, 4), d)]),
    "scipy lu_factor, lu_solve": (
        lambda L, S, a, b: (*S.lu_factor(a), *(S.lu_solve(S.lu_factor(a), b, trans=t)
                                               for t in (0, 1, 2))),
        _np_lu_factor_solve,
        lambda r, d: [_well(r, (2, 4, 4), d), _z(r, (2, 4, 3), d)]),
    "scipy eigh, solve, inv, det": (
        lambda L, S, a, b: (S.eigh(a, eigvals_only=True), S.solve(a, b), S.inv(a), S.det(a)),
        lambda a, b: (np.linalg.eigvalsh(_np_herm(a)), np.linalg.solve(a, b), np.linalg.inv(a),
                      np.linalg.det(a)),
        lambda r, d: [_well(r, (4, 4), d), _z(r, (4, 3), d)]),
}


@pytest.mark.parametrize("dtype", [C64, C128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_numpy(x64_on, name, dtype):
    fn, oracle, make = VALUES[name]
    args = make(np.random.default_rng(0), dtype)
    got = fn(jnp.linalg, sla, *[jnp.asarray(x) for x in args])
    with np.errstate(all="ignore"):
        want = oracle(*[np.asarray(x, C128) for x in args])      # (in complex128)
    real = np.float32 if dtype == C64 else np.float64

    def like(w):        # (NumPy's result in the operand's precision: real stays real)
        return w.astype(dtype if w.dtype.kind == "c" else real) if w.dtype.kind in "fc" else w
    _close(got, [like(w) for w in _leaves(want)], 2e-4 if dtype == C64 else 1e-10)


def test_semantics_match_jax(x64_on):
    """Output shapes and dtypes of the functions whose conventions are JAX's own (slogdet's
    complex sign and real logabsdet, lstsq's residuals and rank, real singular values and
    eigenvalues, scipy.linalg.lu's real permutation), in complex64."""
    rng = np.random.default_rng(8)
    a, b = _well(rng, (4, 4), C64), _z(rng, (4, 2), C64)

    def outs(L, S, a, b):
        return (*L.slogdet(a), *L.lstsq(a[:, :3], b), L.svdvals(a), L.eigh(a)[0],
                S.lu(a)[0], L.pinv(a), L.cond(a), L.norm(a, "nuc"), L.vector_norm(a),
                L.matrix_rank(a[:, :2] @ a[:2, :]))
    got = outs(jnp.linalg, sla, jnp.asarray(a), jnp.asarray(b))
    want = jax.jit(lambda a, b: outs(jjnp.linalg, jsla, a, b))(a, b)
    _close(got, want, 2e-4)


@pytest.mark.parametrize("dtype", [C64, C128], ids=["c64", "c128"])
def test_decompositions_reconstruct_and_match_numpy(x64_on, dtype):
    """Gauge-free checks of eigh and svd (their vectors' phases are LAPACK's choice), lu's
    factors, and the primitives' output dtypes."""
    rng = np.random.default_rng(1)
    tol = 2e-4 if dtype == C64 else 1e-10
    real = np.float32 if dtype == C64 else np.float64
    a = _z(rng, (2, 3, 4, 4), dtype)
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    w, v = jnp.linalg.eigh(jnp.asarray(a))
    assert w.dtype == real and v.dtype == dtype
    w, v = np.asarray(w), np.asarray(v)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=tol * 30)
    np.testing.assert_allclose(np.conj(np.swapaxes(v, -1, -2)) @ v,
                               np.broadcast_to(np.eye(4), v.shape), atol=tol * 10)
    # eigh reading one triangle (the diagonal's real part, as LAPACK's heevd)
    w_l, _ = lh.eigh(jnp.asarray(a), lower=True)
    np.testing.assert_allclose(np.asarray(w_l), np.linalg.eigvalsh(a, UPLO="L"),
                               rtol=tol, atol=tol * 10)
    for shape in ((2, 5, 3), (3, 5)):
        x = _z(rng, shape, dtype)
        u, s, vh = jnp.linalg.svd(jnp.asarray(x), full_matrices=False)
        assert u.dtype == vh.dtype == dtype and s.dtype == real
        u, s, vh = (np.asarray(t) for t in (u, s, vh))
        np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), rtol=tol,
                                   atol=tol * 10)
        np.testing.assert_allclose((u * s[..., None, :]) @ vh, x, atol=tol * 30)
    # cholesky of the lower triangle alone, as LAPACK's potrf reads it
    p = _hpd(rng, (2, 4, 4), dtype)
    lower_only = np.tril(p) + np.triu(_z(rng, (2, 4, 4), dtype), 1)
    np.testing.assert_allclose(np.asarray(lh.cholesky(jnp.asarray(lower_only))),
                               np.linalg.cholesky(p), rtol=tol, atol=tol * 10)
    sign, logdet = lh.slogdet(jnp.asarray(a))
    assert sign.dtype == dtype and logdet.dtype == real
    np.testing.assert_allclose(np.abs(np.asarray(sign)), 1, atol=tol)
    f, piv, perm = lax_lu(jnp.asarray(a))
    jf, jpiv, jperm = jax.lax.linalg.lu(jjnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(piv), np.asarray(jpiv))
    np.testing.assert_array_equal(np.asarray(perm), np.asarray(jperm))
    np.testing.assert_allclose(np.asarray(f), np.asarray(jf), rtol=tol, atol=tol * 10)


def _np_op(a, lower, transpose_a, conjugate_a, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(t.shape[-1])
    t = np.swapaxes(t, -1, -2) if transpose_a else t
    return np.conj(t) if conjugate_a else t


def test_triangular_solve_conjugate_a(x64_on):
    """The lax-level triangular_solve's transpose_a and conjugate_a (a^H with both), both
    sides, as jax.lax.linalg.triangular_solve defines them."""
    rng = np.random.default_rng(2)
    a, b = _well(rng, (4, 4)), _z(rng, (4, 3))
    for left, lower, transpose_a, conjugate_a, unit in np.ndindex(2, 2, 2, 2, 2):
        kw = dict(lower=bool(lower), transpose_a=bool(transpose_a),
                  conjugate_a=bool(conjugate_a), unit_diagonal=bool(unit))
        op = _np_op(a, **kw)
        # (right side: x op(a) = b.T, so x.T = op(a)^-T b)
        want = np.linalg.solve(op, b) if left else np.linalg.solve(op.T, b).T
        got = lh.triangular_solve(jnp.asarray(a), jnp.asarray(b if left else b.T),
                                  left_side=bool(left), **kw)
        _close(got, want, 1e-10)


# ---- gradients against JAX (complex128) -------------------------------------------------------

def _herm(m, x):
    return x @ m.conj(m.swapaxes(x, -1, -2)) + 4 * m.eye(x.shape[-1])


def _svd_loss(m, u, s, vh):
    # (gauge-free: U diag(s) Vh and the projector products are independent of the phases)
    return m.sum(m.abs(u[..., :1] @ vh[..., :1, :])) + \
        m.sum(m.real((u * s[..., None, :]) @ vh * (1 - 2j)))


GRADS = {
    # name: (real-valued loss of (numpy module, jax-like module, *args), args)
    "solve": (lambda m, j, a, b: m.sum(m.abs(m.linalg.solve(a, b)) ** 2),
              lambda r: [_well(r, (2, 4, 4)), _z(r, (2, 4, 3))]),
    "slogdet": (lambda m, j, a: m.sum(m.linalg.slogdet(a)[1])
                + m.sum(m.real(m.linalg.slogdet(a)[0] * (1 + 2j))),
                lambda r: [_z(r, (2, 4, 4))]),
    "cholesky": (lambda m, j, a: m.sum(m.abs(m.linalg.cholesky(a))),
                 lambda r: [_hpd(r, (2, 4, 4))]),
    "eigh eigenvalues": (lambda m, j, a: m.sum(m.linalg.eigh(a)[0] * m.arange(1.0, 5.0)),
                         lambda r: [_z(r, (2, 4, 4))]),
    "eigh eigenvectors": (lambda m, j, a: m.sum(m.abs(m.linalg.eigh(a)[1]) ** 2
                                                * m.arange(1.0, 5.0)),
                          lambda r: [_z(r, (2, 4, 4))]),
    "svd singular values": (lambda m, j, a: m.sum(m.linalg.svd(a, compute_uv=False)
                                                  * m.arange(1.0, 5.0)),
                            lambda r: [_z(r, (2, 4, 4))]),
    "svd tall": (lambda m, j, a: _svd_loss(m, *m.linalg.svd(a, full_matrices=False)),
                 lambda r: [_z(r, (2, 5, 3))]),
    "svd wide": (lambda m, j, a: _svd_loss(m, *m.linalg.svd(a, full_matrices=False)),
                 lambda r: [_z(r, (3, 5))]),
    "qr tall": (lambda m, j, a: (lambda q, r: m.sum(m.real(q * (1 + 1j))) + m.sum(m.abs(r)))(
        *m.linalg.qr(a)), lambda r: [_z(r, (2, 5, 3))]),
    "qr wide": (lambda m, j, a: (lambda q, r: m.sum(m.real(q * (1 + 1j)))
                                 + m.sum(m.imag(r * r)))(*m.linalg.qr(a)),
                lambda r: [_z(r, (3, 5))]),
    "pinv": (lambda m, j, a: m.sum(m.abs(m.linalg.pinv(a)) ** 2), lambda r: [_z(r, (2, 5, 3))]),
    "scipy cho_solve": (lambda m, j, x, b: m.sum(m.abs(j.scipy.linalg.cho_solve(
        j.scipy.linalg.cho_factor(_herm(m, x), lower=True), b))),
        lambda r: [_z(r, (4, 4)), _z(r, (4, 2))]),
    "scipy solve_triangular": (lambda m, j, a, b: m.sum(m.abs(j.scipy.linalg.solve_triangular(
        a, b, trans="C", lower=True))), lambda r: [_well(r, (2, 4, 4)), _z(r, (2, 4, 3))]),
    "scipy lu": (lambda m, j, a: (lambda p, l, u: m.sum(m.abs(l)) + m.sum(m.real(u * 1j)))(
        *j.scipy.linalg.lu(a)), lambda r: [_z(r, (4, 4))]),
}


def _netcl_and_jax(loss):
    return (lambda *xs: loss(jnp, netcl, *xs)), (lambda *xs: loss(jjnp, jax, *xs))


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad_matches_jax(x64_on, name):
    loss, make = GRADS[name]
    args = make(np.random.default_rng(3))
    f, jf = _netcl_and_jax(loss)
    argnums = tuple(range(len(args)))
    got = netcl.grad(f, argnums=argnums)(*[jnp.asarray(x) for x in args])
    want = jax.jit(jax.grad(jf, argnums=argnums))(*args)
    _close(got, want, 1e-8)


def test_lax_triangular_solve_grad_matches_jax(x64_on):
    rng = np.random.default_rng(4)
    a, b = _well(rng, (2, 4, 4)), _z(rng, (2, 3, 4))
    kw = dict(left_side=False, lower=False, transpose_a=True, conjugate_a=True,
              unit_diagonal=False)
    got = netcl.grad(lambda a, b: jnp.sum(jnp.abs(lh.triangular_solve(a, b, **kw))),
                     argnums=(0, 1))(jnp.asarray(a), jnp.asarray(b))
    want = jax.jit(jax.grad(lambda a, b: jjnp.sum(jjnp.abs(jax.lax.linalg.triangular_solve(
        a, b, **kw))), argnums=(0, 1)))(a, b)
    _close(got, want, 1e-8)


JVPS = {
    # name: (function with complex outputs free of gauge choices, args); forward mode of
    # every primitive is also checked against finite differences below
    "cholesky": (lambda L, a: L.cholesky(a), lambda r: [_hpd(r, (2, 4, 4))]),
    "slogdet, svdvals": (lambda L, a: (*L.slogdet(a), L.svd(a, compute_uv=False)),
                         lambda r: [_z(r, (2, 4, 4))]),
    "qr wide": (lambda L, a: tuple(L.qr(a)), lambda r: [_z(r, (3, 5))]),
}


@pytest.mark.parametrize("name", sorted(JVPS))
def test_jvp_matches_jax(x64_on, name):
    fn, make = JVPS[name]
    rng = np.random.default_rng(5)
    args = make(rng)
    tangents = [_z(rng, x.shape) for x in args]
    if name == "cholesky":      # (JAX's rule assumes Hermitian perturbations)
        tangents = [(t + np.conj(np.swapaxes(t, -1, -2))) / 2 for t in tangents]
    got = netcl.jvp(lambda *xs: fn(jnp.linalg, *xs), tuple(jnp.asarray(x) for x in args),
                    tuple(jnp.asarray(t) for t in tangents))
    want = jax.jit(lambda xs, ts: jax.jvp(lambda *xs: fn(jjnp.linalg, *xs), xs, ts))(
        tuple(args), tuple(tangents))
    _close(got, want, 1e-8)


# ---- finite differences (the primitives' own reading of their operands) ----------------------

CHECKS = {
    "cholesky": (lh.cholesky, lambda r: [_hpd(r, (2, 3, 3))], 2),
    "triangular_solve": (lambda a, b: lh.triangular_solve(a, b, left_side=True, lower=True,
                                                          transpose_a=True, conjugate_a=True),
                         lambda r: [_well(r, (2, 3, 3)), _z(r, (2, 3, 2))], 1),
    "slogdet": (lh.slogdet, lambda r: [_z(r, (2, 3, 3))], 1),
    "eigh": (lambda a: (lambda w, v: (w, jnp.abs(v) ** 2))(*lh.eigh(a, lower=False)),
             lambda r: [_hpd(r, (2, 3, 3))], 1),
    "svd": (lambda a: (lambda u, s, vh: (s, (u * s[..., None, :]) @ jnp.conj(
        jnp.swapaxes(u, -1, -2)), jnp.abs(vh) ** 2))(*lh.svd(a)),
        lambda r: [_z(r, (4, 3))], 2),
    "qr wide": (lh.qr, lambda r: [_z(r, (3, 4))], 1),
    "lu": (lambda a: lax_lu(a)[0], lambda r: [_z(r, (2, 3, 3))], 1),
    # compositions (their gradients against JAX's too costly to compile here)
    "inv, matrix_power": (lambda a: (jnp.linalg.inv(a), jnp.linalg.matrix_power(a, -2)),
                          lambda r: [_well(r, (2, 3, 3))], 1),
    "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], lambda r: [_z(r, (5, 3)), _z(r, (5, 2))],
              1),
    "pinv hermitian, cond": (lambda h, a: (jnp.linalg.pinv(h, hermitian=True),
                                           jnp.linalg.cond(a)),
                             lambda r: [_hpd(r, (3, 3)), _z(r, (2, 3, 3))], 1),
    "det": (lambda a: (jnp.linalg.det(a), jnp.linalg.det(a[..., :3, :3])),
            lambda r: [_z(r, (2, 4, 4))], 1),
    "tensorsolve": (lambda a, b: jnp.linalg.tensorsolve(jnp.reshape(a, (4, 2, 2)), b),
                    lambda r: [_well(r, (4, 4)), _z(r, (4,))], 1),
    "scipy lu_solve": (lambda a, b: sla.lu_solve(sla.lu_factor(a), b, trans=2),
                       lambda r: [_well(r, (3, 3)), _z(r, (3, 2))], 1),
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_check_grads(x64_on, name):
    fn, make, order = CHECKS[name]
    check_grads(fn, [jnp.asarray(x) for x in make(np.random.default_rng(6))], order=order,
                atol=1e-5, rtol=1e-5)


# ---- jit, vmap ------------------------------------------------------------------------------

def test_jit_and_vmap(x64_on):
    rng = np.random.default_rng(7)
    a, b = _well(rng, (3, 4, 4)), _z(rng, (3, 4, 2))

    def loss(a, b):
        w = jnp.linalg.eigvalsh(a)
        u, s, vh = jnp.linalg.svd(a)
        return (jnp.sum(jnp.abs(jnp.linalg.solve(a, b)) ** 2) + jnp.sum(w * w)
                + jnp.sum(jnp.abs(u @ vh)) + jnp.linalg.slogdet(a)[1].sum())
    a_, b_ = jnp.asarray(a), jnp.asarray(b)
    grad = netcl.grad(loss, argnums=(0, 1))
    _close(netcl.jit(grad)(a_, b_), grad(a_, b_), 1e-10)
    # vmap over a middle axis moves it to the front, where LAPACK batches
    h = _hpd(rng, (3, 4, 4))
    got = netcl.vmap(jnp.linalg.cholesky, in_axes=1)(jnp.asarray(np.moveaxis(h, 0, 1)))
    _close(got, np.linalg.cholesky(h), 1e-10)
    got = netcl.vmap(lambda x: jnp.linalg.svd(x, compute_uv=False))(jnp.asarray(a))
    _close(got, np.linalg.svd(a, compute_uv=False), 1e-10)


# ---- errors -----------------------------------------------------------------------------------

def _raises(exc, fn, *words):
    with pytest.raises(exc) as info:
        fn()
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_errors_name_the_function():
    c = jnp.asarray(np.ones((2, 3), C64))
    sq = jnp.asarray(np.eye(3, dtype=C64))
    _raises(ValueError, lambda: jnp.linalg.solve(c, jnp.ones((2,), C64)), "linalg.solve",
            "square")
    _raises(ValueError, lambda: jnp.linalg.cholesky(c), "linalg.cholesky", "square")
    _raises(ValueError, lambda: jnp.linalg.slogdet(c), "linalg.slogdet")
    _raises(ValueError, lambda: jnp.linalg.eigh(c), "linalg.eigh")
    _raises(ValueError, lambda: sla.solve_triangular(sq, jnp.ones(3, C64), trans=3),
            "scipy.linalg.solve_triangular", "trans")
    _raises(TypeError, lambda: lh.solve(sq, jnp.ones((3, 1), np.float32)), "solve",
            "equal dtypes")
    _raises(TypeError, lambda: lh.triangular_solve(sq, jnp.ones((3, 1), np.float32),
                                                   left_side=True), "triangular_solve",
            "equal dtypes")
    _raises(TypeError, lambda: lh.cholesky(jnp.ones((3, 3), np.int32)), "cholesky",
            "complex64")
    _raises(ValueError, lambda: lh.svd(jnp.ones((3,), C64)), "svd", "two dimensions")
    _raises(TypeError, lambda: lh.triangular_solve(sq, sq, conjugate_a=1),
            "triangular_solve", "conjugate_a")
    # (jnp.linalg promotes: a float meeting a complex is complex, as JAX)
    x = jnp.linalg.solve(sq, jnp.ones((3,), np.float32))
    assert x.dtype == C64
