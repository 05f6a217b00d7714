"""Dense linear algebra: the host primitives of netcl.primitives.linalg_host (cholesky,
triangular_solve, solve, slogdet, eigh, svd, qr) against their NumPy references, and
netcl.numpy.linalg / netcl.scipy.linalg against JAX on well-conditioned random matrices
(float32 values, batched); every primitive's jvp and vjp against finite differences in
float64 (order 2 where it is cheap); gradients of compositions against jax.grad; jit, vmap;
bad inputs raising typed errors before anything runs.

Matrices are small and the shapes few: every new shape compiles the kernels of the
derivative rules on PoCL."""
import warnings

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.linalg as sla
from netcl.primitives import linalg_host as lh
from netcl.test_util import check_grads
from util import raises_with

jax = pytest.importorskip("jax")
jjnp = jax.numpy
jsla = jax.scipy.linalg

F32 = dict(rtol=2e-4, atol=2e-5)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _spd(rng, shape, dtype=np.float32):
    """Symmetric positive definite, eigenvalues in about [1, 3]."""
    n = shape[-1]
    x = rng.standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) / n + np.eye(n)).astype(dtype)


def _square(rng, shape, dtype=np.float32):
    """Well-conditioned general square matrices."""
    n = shape[-1]
    return (rng.standard_normal(shape) + 2 * n ** 0.5 * np.eye(n)).astype(dtype)


def _tri(rng, shape, lower, dtype=np.float32):
    t = rng.standard_normal(shape) * 0.5 + 2 * np.eye(shape[-1])
    return (np.tril(t) if lower else np.triu(t)).astype(dtype)


def _close(got, want, **tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    np.testing.assert_allclose(got, want, **(tol or F32))


def _col_signs(u):
    """Signs that make each column's largest entry positive (eigenvectors and singular
    vectors are defined up to sign)."""
    u = np.asarray(u)
    idx = np.argmax(np.abs(u), axis=-2)[..., None, :]
    return np.sign(np.take_along_axis(u, idx, axis=-2))


# ---- the primitives against their references --------------------------------------------------

def _layouts(host):
    """The same values dense and as a transposed view."""
    t = jnp.swapaxes(jnp.asarray(np.ascontiguousarray(np.swapaxes(host, -1, -2))), -1, -2)
    return [jnp.asarray(host), t]


PRIMS = {
    "cholesky": (lh.cholesky_p, lambda r: [_spd(r, (2, 3, 3))], {}),
    "triangular_solve": (lh.triangular_solve_p,
                         lambda r: [_tri(r, (2, 3, 3), True), r.standard_normal((2, 3, 2))],
                         dict(lower=True, transpose_a=True, unit_diagonal=False)),
    "solve": (lh.solve_p, lambda r: [_square(r, (2, 3, 3)), r.standard_normal((2, 3, 2))], {}),
    "slogdet": (lh.slogdet_p, lambda r: [_square(r, (2, 3, 3))], {}),
    "eigh": (lh.eigh_p, lambda r: [_spd(r, (2, 3, 3))], dict(lower=False)),
    "svd": (lh.svd_p, lambda r: [r.standard_normal((2, 4, 3))], {}),
    "qr": (lh.qr_p, lambda r: [r.standard_normal((2, 3, 4))], {}),
}


@pytest.mark.parametrize("name", sorted(PRIMS))
def test_primitive_matches_reference(name):
    prim, draw, params = PRIMS[name]
    hosts = [np.asarray(h, np.float32) for h in draw(_rng(3))]
    want = prim.reference(*hosts, **params)
    for layout in range(2):
        args = [_layouts(h)[layout] for h in hosts]
        got = prim.bind(*args, **params)
        for g, w in zip(got if prim.multiple_results else [got],
                        want if prim.multiple_results else [want]):
            _close(g, w, rtol=1e-5, atol=1e-6)


def test_references_follow_jax_on_failures():
    """NaN where LAPACK fails, as JAX gives (no exception from one matrix of a batch)."""
    bad = np.array([[[4.0, 2.0], [2.0, 3.0]], [[1.0, 2.0], [2.0, 1.0]]], np.float32)
    got = np.asarray(jnp.linalg.cholesky(jnp.asarray(bad)))
    np.testing.assert_allclose(got[0], np.linalg.cholesky(bad[0]), rtol=1e-6)
    want = np.asarray(jjnp.linalg.cholesky(bad[1]))
    np.testing.assert_array_equal(np.isnan(got[1]), np.isnan(want))
    x = np.asarray(jnp.linalg.solve(jnp.asarray(np.ones((2, 2), np.float32)),
                                    jnp.asarray(np.ones(2, np.float32))))
    assert not np.isfinite(x).all()
    sign, logdet = jnp.linalg.slogdet(jnp.asarray(np.zeros((2, 2), np.float32)))
    assert float(sign) == 0 and float(logdet) == -np.inf


# ---- values against JAX (float32) -------------------------------------------------------------

def test_cholesky_matches_jax():
    rng = _rng(0)
    a = _spd(rng, (2, 3, 3))
    for upper in (False, True):
        _close(jnp.linalg.cholesky(jnp.asarray(a), upper=upper),
               jjnp.linalg.cholesky(a, upper=upper))
    for lower in (False, True):
        _close(sla.cholesky(jnp.asarray(a), lower=lower), jsla.cholesky(a, lower=lower))
        c, low = sla.cho_factor(jnp.asarray(a), lower=lower)
        assert low is lower
        _close(c, jsla.cho_factor(a, lower=lower)[0])
    # only the triangle read: garbage in the other one changes nothing
    junk = a + np.triu(rng.standard_normal(a.shape), 1).astype(np.float32)
    _close(jnp.linalg.cholesky(jnp.asarray(junk), symmetrize_input=False),
           jjnp.linalg.cholesky(junk, symmetrize_input=False))
    _close(jnp.linalg.cholesky(jnp.asarray(junk)), jjnp.linalg.cholesky(junk))
    _close(jnp.linalg.cholesky(jnp.asarray(np.arange(1, 2, dtype=np.int32).reshape(1, 1))),
           jjnp.linalg.cholesky(np.ones((1, 1), np.int32)))
    b = rng.standard_normal((2, 3, 2)).astype(np.float32)
    for lower in (False, True):
        _close(sla.cho_solve(sla.cho_factor(jnp.asarray(a), lower=lower), jnp.asarray(b)),
               jsla.cho_solve(jsla.cho_factor(a, lower=lower), b))
    v = b[0, :, 0]
    _close(sla.cho_solve(sla.cho_factor(jnp.asarray(a[0])), jnp.asarray(v)),
           jsla.cho_solve(jsla.cho_factor(a[0]), v))


@pytest.mark.parametrize("lower", [True, False])
def test_triangular_solve_matches_jax(lower):
    rng = _rng(1)
    a = _tri(rng, (2, 3, 3), lower)
    a_junk = a + (np.triu if lower else np.tril)(rng.standard_normal(a.shape), 1 if lower else -1)
    a_junk = a_junk.astype(np.float32)    # (the other triangle must not be read)
    b = rng.standard_normal((2, 3, 2)).astype(np.float32)
    for trans in (0, 1, "T"):
        for unit in (False, True):
            _close(sla.solve_triangular(jnp.asarray(a_junk), jnp.asarray(b), trans=trans,
                                        lower=lower, unit_diagonal=unit),
                   jsla.solve_triangular(a_junk, b, trans=trans, lower=lower,
                                         unit_diagonal=unit))
    v = b[0, :, 0]                       # one vector, a broadcast over the batch of matrices
    _close(sla.solve_triangular(jnp.asarray(a[0]), jnp.asarray(v), lower=lower),
           jsla.solve_triangular(a[0], v, lower=lower))
    _close(sla.solve_triangular(jnp.asarray(a[0]), jnp.asarray(b), lower=lower),
           jsla.solve_triangular(a[0], b, lower=lower))
    for left in (True, False):           # the lax-level function, both sides
        bb = b if left else np.swapaxes(b, -1, -2)
        _close(lh.triangular_solve(jnp.asarray(a), jnp.asarray(bb), left_side=left,
                                   lower=lower, transpose_a=True),
               jax.lax.linalg.triangular_solve(a, bb, left_side=left, lower=lower,
                                               transpose_a=True))


def test_solve_inv_det_match_jax():
    rng = _rng(2)
    a = _square(rng, (2, 3, 3))
    b = rng.standard_normal((2, 3, 2)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    for aa, bb in ((a, b), (a, v), (a[0], b), (a, b[0]), (a[0], v)):
        _close(jnp.linalg.solve(jnp.asarray(aa), jnp.asarray(bb)), jjnp.linalg.solve(aa, bb))
    _close(sla.solve(jnp.asarray(a), jnp.asarray(b)), jsla.solve(a, b))
    spd = _spd(rng, (2, 3, 3))
    with warnings.catch_warnings():     # (JAX's own cho_solve warns on this path)
        warnings.simplefilter("ignore", FutureWarning)
        want = jsla.solve(spd, b[..., 0], assume_a="pos")
    _close(sla.solve(jnp.asarray(spd), jnp.asarray(b[..., 0]), assume_a="pos"), want)
    _close(jnp.linalg.inv(jnp.asarray(a)), jjnp.linalg.inv(a))
    _close(sla.inv(jnp.asarray(a)), jsla.inv(a))
    _close(jnp.linalg.inv(jnp.asarray(np.array([[2, 1], [1, 1]], np.int32))),
           jjnp.linalg.inv(np.array([[2, 1], [1, 1]], np.int32)))
    a4 = _square(rng, (2, 4, 4))
    swapped = a4[:, [1, 0, 2, 3]]          # (a negative determinant)
    for m in (a[..., :2, :2], a, a4, swapped):
        _close(jnp.linalg.det(jnp.asarray(m)), jjnp.linalg.det(m), rtol=1e-4, atol=1e-4)
        for got, want in zip(jnp.linalg.slogdet(jnp.asarray(m)), jjnp.linalg.slogdet(m)):
            _close(got, want)
    _close(sla.det(jnp.asarray(a4)), jsla.det(a4), rtol=1e-4)
    r = jnp.linalg.slogdet(jnp.asarray(-a4[0]))
    assert r.sign.shape == () and r.logabsdet.dtype == np.float32
    _close(jnp.linalg.det(jnp.ones((0, 0), jnp.float32)),
           jjnp.linalg.det(np.ones((0, 0), np.float32)))


def test_eigh_matches_jax():
    rng = _rng(4)
    a = _spd(rng, (2, 3, 3))
    w, v = jnp.linalg.eigh(jnp.asarray(a))
    jw, jv = jjnp.linalg.eigh(a)
    _close(w, jw)
    _close(np.asarray(v) * _col_signs(v), np.asarray(jv) * _col_signs(jv), rtol=1e-3,
           atol=1e-4)
    junk = a + np.triu(rng.standard_normal(a.shape), 1).astype(np.float32)
    for uplo in ("L", "U"):
        _close(jnp.linalg.eigvalsh(jnp.asarray(junk), uplo, symmetrize_input=False),
               jjnp.linalg.eigvalsh(junk, uplo, symmetrize_input=False))
    _close(jnp.linalg.eigvalsh(jnp.asarray(junk)), jjnp.linalg.eigvalsh(junk))
    _close(sla.eigh(jnp.asarray(junk), eigvals_only=True), jsla.eigh(junk, eigvals_only=True))
    sw, sv = sla.eigh(jnp.asarray(a), lower=False)
    _close(sw, jw)
    recon = np.asarray(sv) @ (np.asarray(sw)[..., None] * np.swapaxes(np.asarray(sv), -1, -2))
    np.testing.assert_allclose(recon, a, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 4), (3, 3)])
def test_svd_matches_jax(shape):
    rng = _rng(5)
    a = rng.standard_normal(shape).astype(np.float32)
    u, s, vh = jnp.linalg.svd(jnp.asarray(a), full_matrices=False)
    ju, js, jvh = jjnp.linalg.svd(a, full_matrices=False)
    _close(s, js)
    su, sj = _col_signs(u), _col_signs(ju)
    _close(np.asarray(u) * su, np.asarray(ju) * sj, rtol=1e-3, atol=1e-4)
    _close(np.asarray(vh) * np.swapaxes(su, -1, -2), np.asarray(jvh) * np.swapaxes(sj, -1, -2),
           rtol=1e-3, atol=1e-4)
    _close(jnp.linalg.svd(jnp.asarray(a), compute_uv=False), js)
    _close(jnp.linalg.svdvals(jnp.asarray(a)), js)
    if shape[-1] == shape[-2]:
        _close(jnp.linalg.svd(jnp.asarray(a))[1], js)         # full_matrices: same when square
        sym = a + np.swapaxes(a, -1, -2)
        hu, hs, hvh = jnp.linalg.svd(jnp.asarray(sym), hermitian=True)
        _close(hs, jjnp.linalg.svd(sym, hermitian=True)[1])
        np.testing.assert_allclose(np.asarray(hu) * np.asarray(hs)[..., None, :] @ np.asarray(hvh),
                                   sym, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
def test_qr_matches_jax(shape):
    rng = _rng(6)
    a = rng.standard_normal(shape).astype(np.float32)
    q, r = jnp.linalg.qr(jnp.asarray(a))
    jq, jr = jjnp.linalg.qr(a)
    # (both are LAPACK's Householder QR; signs fixed by R's diagonal all the same)
    d = np.sign(np.diagonal(np.asarray(r), axis1=-2, axis2=-1))
    jd = np.sign(np.diagonal(np.asarray(jr), axis1=-2, axis2=-1))
    _close(np.asarray(q) * d[..., None, :], np.asarray(jq) * jd[..., None, :], rtol=1e-3,
           atol=1e-4)
    _close(np.asarray(r) * d[..., :, None], np.asarray(jr) * jd[..., :, None], rtol=1e-3,
           atol=1e-4)
    _close(jnp.linalg.qr(jnp.asarray(a), mode="r"), r)
    if shape[-2] <= shape[-1]:
        _close(jnp.linalg.qr(jnp.asarray(a), mode="complete")[0], q)


def test_lstsq_pinv_rank_power_cond_norm_match_jax():
    rng = _rng(7)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    for bb in (b, b[:, 0]):
        with jax.enable_x64(netcl.config.enable_x64):   # (the rank: the default int)
            theirs = jjnp.linalg.lstsq(a, bb)
        for got, want in zip(jnp.linalg.lstsq(jnp.asarray(a), jnp.asarray(bb)), theirs):
            _close(got, want, rtol=1e-4, atol=1e-4)
    x, resid, rank, s = jnp.linalg.lstsq(jnp.asarray(a.T), jnp.asarray(b[:3]), numpy_resid=True)
    assert resid.shape == (0,) and int(rank) == 3
    low = (a @ np.diag([1.0, 1.0, 0.0]).astype(np.float32))       # rank 2
    for m in (a, a.T, low):
        _close(jnp.linalg.pinv(jnp.asarray(m)), jjnp.linalg.pinv(m), rtol=1e-3, atol=1e-4)
        _close(jnp.linalg.matrix_rank(jnp.asarray(m)), jjnp.linalg.matrix_rank(m))
    _close(jnp.linalg.matrix_rank(jnp.asarray(low), 0.5), jjnp.linalg.matrix_rank(low, 0.5))
    sq = _square(rng, (2, 3, 3)) / 4
    for n in (0, 1, 3, 6, -2):
        _close(jnp.linalg.matrix_power(jnp.asarray(sq), n), jjnp.linalg.matrix_power(sq, n),
               rtol=1e-4, atol=1e-4)
    ints = np.array([[1, 2], [3, 4]], np.int32)
    _close(jnp.linalg.matrix_power(jnp.asarray(ints), 3), jjnp.linalg.matrix_power(ints, 3))
    for p in (None, 2, -2, 1, -np.inf, "fro", "nuc"):
        _close(jnp.linalg.cond(jnp.asarray(sq), p), jjnp.linalg.cond(sq, p), rtol=1e-4)
    _close(jnp.linalg.cond(jnp.asarray(np.array([[1.0, 1.0], [1.0, 1.0]], np.float32)), 1),
           jjnp.linalg.cond(np.array([[1.0, 1.0], [1.0, 1.0]], np.float32), 1))
    for ord_ in (2, -2, "nuc"):
        _close(jnp.linalg.norm(jnp.asarray(a), ord_), jjnp.linalg.norm(a, ord_))
        _close(jnp.linalg.norm(jnp.asarray(sq), ord_, axis=(2, 1), keepdims=True),
               jjnp.linalg.norm(sq, ord_, axis=(2, 1), keepdims=True))
    _close(jnp.linalg.norm(jnp.asarray(a[:, 0]), 2), jjnp.linalg.norm(a[:, 0], 2))
    t = _square(rng, (6, 6)).reshape(2, 3, 6)
    _close(jnp.linalg.tensorinv(jnp.asarray(t), 2), jjnp.linalg.tensorinv(t, 2), rtol=1e-4,
           atol=1e-5)
    rhs = rng.standard_normal((2, 3)).astype(np.float32)
    t2 = t.reshape(2, 3, 2, 3)
    _close(jnp.linalg.tensorsolve(jnp.asarray(t2), jnp.asarray(rhs)),
           jjnp.linalg.tensorsolve(t2, rhs), rtol=1e-4, atol=1e-5)


# ---- derivative rules (float64, finite differences) -------------------------------------------

def _f64(x):
    return jnp.asarray(np.asarray(x, np.float64))


def _sym_loss_eigh(a):
    w, v = lh.eigh(a)
    return w, v * v                 # (v's columns are defined up to sign)


GRAD_CASES = {
    "cholesky": (lh.cholesky, lambda r: [_spd(r, (2, 3, 3), np.float64)], 2),
    "triangular_solve lower": (
        lambda a, b: lh.triangular_solve(a, b, left_side=True, lower=True),
        lambda r: [_tri(r, (2, 3, 3), True, np.float64), r.standard_normal((2, 3, 2))], 2),
    "triangular_solve upper transposed unit": (
        lambda a, b: lh.triangular_solve(a, b, left_side=True, lower=False, transpose_a=True,
                                         unit_diagonal=True),
        lambda r: [_tri(r, (3, 3), False, np.float64), r.standard_normal((3, 2))], 1),
    "solve": (lh.solve, lambda r: [_square(r, (2, 3, 3), np.float64),
                                   r.standard_normal((2, 3, 2))], 2),
    "slogdet": (lambda a: lh.slogdet(a)[1], lambda r: [_square(r, (2, 3, 3), np.float64)], 2),
    "eigh": (lh.eigh, lambda r: [_spd(r, (2, 3, 3), np.float64)], 1),
    "eigh upper": (lambda a: lh.eigh(a, lower=False), lambda r: [_spd(r, (3, 3), np.float64)],
                   1),
    "svd square": (lh.svd, lambda r: [r.standard_normal((2, 3, 3))], 1),
    "svd tall": (lh.svd, lambda r: [r.standard_normal((4, 3))], 1),
    "svd wide": (lh.svd, lambda r: [r.standard_normal((3, 4))], 1),
    "qr tall": (lh.qr, lambda r: [r.standard_normal((2, 4, 3))], 1),
    "qr wide": (lh.qr, lambda r: [r.standard_normal((3, 4))], 1),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_primitive_derivatives_match_finite_differences(name):
    f, draw, order = GRAD_CASES[name]
    args = [_f64(x) for x in draw(_rng(8))]
    check_grads(f, args, order=1, modes=("fwd", "rev"))
    if order > 1:
        check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_second_order_of_eigh_svd_qr():
    """Second order where it is cheap: one matrix each, reverse over reverse."""
    rng = _rng(9)
    check_grads(lambda a: _sym_loss_eigh(a)[1], [_f64(_spd(rng, (3, 3), np.float64))], order=2,
                modes=("rev",))
    check_grads(lambda a: lh.svd(a)[1], [_f64(rng.standard_normal((3, 2)))], order=2,
                modes=("rev",))
    check_grads(lambda a: lh.qr(a)[1], [_f64(rng.standard_normal((3, 3)))], order=2,
                modes=("fwd",))


# ---- gradients of compositions against jax.grad (float64) -------------------------------------

def _logdet_chol(m, a):
    return 2.0 * m.sum(m.log(m.diagonal(m.linalg.cholesky(a), axis1=-2, axis2=-1)))


COMPOSITIONS = {
    "logdet via cholesky": (lambda m, a, b: _logdet_chol(m, a), "spd"),
    "solve": (lambda m, a, b: m.sum(m.linalg.solve(a, b) ** 2), "square"),
    # (scipy's cholesky reads one triangle: netcl's rule is the derivative of exactly that,
    # JAX's assumes symmetric perturbations; they agree where `a` is made symmetric)
    "cho_solve": (lambda m, a, b: m.sum(m.sin((sla if m is jnp else jsla).cho_solve(
        (sla if m is jnp else jsla).cho_factor(a @ m.swapaxes(a, -1, -2) + 3 * m.eye(3),
                                               lower=True), b))), "square"),
    "inv": (lambda m, a, b: m.sum(m.linalg.inv(a) * b[..., :1]), "square"),
    "det 3x3": (lambda m, a, b: m.sum(m.linalg.det(a)), "square"),
    "slogdet": (lambda m, a, b: m.sum(m.linalg.slogdet(a)[1]), "square"),
    "eigh": (lambda m, a, b: m.sum(m.linalg.eigh(a)[0] ** 3)
             + m.sum(m.linalg.eigh(a)[1] ** 2 * b[..., :1]), "spd"),
    "svd": (lambda m, a, b: m.sum(m.linalg.svd(a, full_matrices=False)[1] ** 2)
            + m.sum(m.linalg.svd(a, full_matrices=False)[0] ** 2 * b[..., :1]), "square"),
    "qr": (lambda m, a, b: m.sum(m.linalg.qr(a)[1] ** 2) + m.sum(m.linalg.qr(a)[0] ** 2 * b),
           "square"),
    "pinv": (lambda m, a, b: m.sum(m.linalg.pinv(a) * b), "square"),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_gradients_of_compositions_match_jax(name):
    f, kind = COMPOSITIONS[name]
    rng = _rng(10)
    a = (_spd if kind == "spd" else _square)(rng, (2, 3, 3), np.float64)
    b = rng.standard_normal((2, 3, 3))
    got = netcl.grad(lambda a, b: f(jnp, a, b), argnums=(0, 1))(_f64(a), _f64(b))
    with jax.enable_x64(True):
        want = jax.grad(lambda a, b: f(jjnp, a, b), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-7, atol=1e-9)


def _cofactors(m):
    """The gradient of det: the cofactor matrix (defined for singular matrices too)."""
    n = m.shape[0]
    return np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(m, i, 0), j, 1))
                      for j in range(n)] for i in range(n)])


def test_det_gradient_at_singular_and_larger_matrices():
    # (against the cofactors, not JAX: JAX 0.11 gives zeros at this singular matrix, 0.10
    # the cofactors)
    for m in (np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]),
              _square(_rng(11), (4, 4), np.float64)):
        np.testing.assert_allclose(np.asarray(netcl.grad(jnp.linalg.det)(_f64(m))),
                                   _cofactors(m), rtol=1e-8, atol=1e-10)


def test_hessian_of_logdet_matches_jax():
    a = _spd(_rng(12), (3, 3), np.float64)
    got = netcl.hessian(lambda a: _logdet_chol(jnp, a))(_f64(a))
    with jax.enable_x64(True):
        want = jax.hessian(lambda a: _logdet_chol(jjnp, a))(a)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-7, atol=1e-9)


# ---- jit and vmap -----------------------------------------------------------------------------

def _pipeline(a, b):
    L = jnp.linalg.cholesky(a)
    x = sla.cho_solve((L, True), b)
    w = jnp.linalg.eigvalsh(a)
    s = jnp.linalg.svd(a, compute_uv=False)
    q, r = jnp.linalg.qr(a)
    return jnp.sum(x) + jnp.sum(w) + jnp.sum(s) + jnp.sum(r * r) + jnp.linalg.slogdet(a)[1]


def test_jit_and_vmap_agree_with_eager():
    rng = _rng(13)
    a = _spd(rng, (4, 3, 3))
    b = rng.standard_normal((4, 3, 2)).astype(np.float32)
    A, B = jnp.asarray(a), jnp.asarray(b)
    eager = np.stack([np.asarray(_pipeline(A[i], B[i])) for i in range(4)])
    _close(netcl.vmap(_pipeline)(A, B), eager, rtol=1e-5, atol=1e-5)
    _close(netcl.jit(netcl.vmap(_pipeline))(A, B), eager, rtol=1e-5, atol=1e-5)
    _close(netcl.vmap(_pipeline, in_axes=(None, 0))(A[0], B)[0], eager[0], rtol=1e-5)
    # batch axis elsewhere than in front
    At = jnp.moveaxis(A, 0, 2)
    got = netcl.vmap(lambda a: jnp.linalg.eigh(a)[0], in_axes=2)(At)
    _close(got, jnp.linalg.eigh(A)[0], rtol=1e-5, atol=1e-6)
    g = netcl.grad(_pipeline, argnums=(0, 1))
    g_eager = g(A[1], B[1])
    for got_, want_ in zip(netcl.jit(g)(A[1], B[1]), g_eager):
        _close(got_, want_, rtol=1e-5, atol=1e-5)
    for got_, want_ in zip(netcl.vmap(g)(A, B), g_eager):
        _close(got_[1], want_, rtol=1e-5, atol=1e-5)


# ---- bad inputs -------------------------------------------------------------------------------

def test_bad_inputs_raise_typed_errors_before_anything_runs(device_work):
    sq_i = jnp.asarray(np.ones((3, 3), np.int32))
    rect_i = jnp.asarray(np.ones((2, 3), np.int32))
    v3, v4 = jnp.asarray(np.ones(3, np.int32)), jnp.asarray(np.ones(4, np.int32))
    h16 = jnp.asarray(np.ones((2, 2), np.float16))
    f233, f33, f431, f23, f3, f32_ = (jnp.asarray(np.ones(s, np.float32)) for s in
                                      [(2, 3, 3), (3, 3), (4, 3, 1), (2, 3), (3,), (3, 2)])
    device_work.clear()
    raises_with(ValueError, lambda: jnp.linalg.cholesky(rect_i), "linalg.cholesky", "(2, 3)",
            "square")
    raises_with(ValueError, lambda: jnp.linalg.inv(v3), "linalg.inv", "(3,)")
    raises_with(ValueError, lambda: jnp.linalg.solve(sq_i, v4), "linalg.solve", "(4,)", "(3, 3)")
    raises_with(ValueError, lambda: jnp.linalg.solve(sq_i, f23), "linalg.solve")
    raises_with(TypeError, lambda: jnp.linalg.solve(f233, f431),
            "linalg.solve", "(2, 3, 3)", "(4, 3, 1)")
    raises_with(TypeError, lambda: jnp.linalg.det(h16), "linalg.det", "float16")
    raises_with(TypeError, lambda: jnp.linalg.inv([[1.0, 0.0], [0.0, 1.0]]), "linalg.inv", "list")
    raises_with(ValueError, lambda: jnp.linalg.eigh(sq_i, UPLO="X"), "linalg.eigh", "UPLO")
    raises_with(ValueError, lambda: jnp.linalg.slogdet(rect_i), "linalg.slogdet", "(2, 3)")
    raises_with(ValueError, lambda: jnp.linalg.slogdet(sq_i, method="cholesky"), "method")
    raises_with(NotImplementedError, lambda: jnp.linalg.svd(rect_i), "linalg.svd",
            "full_matrices=False")
    raises_with(ValueError, lambda: jnp.linalg.svd(v3), "linalg.svd", "(3,)")
    raises_with(ValueError, lambda: jnp.linalg.qr(rect_i, mode="economic"), "linalg.qr", "mode")
    raises_with(NotImplementedError, lambda: jnp.linalg.qr(f32_, mode="complete"),
            "linalg.qr", "complete")
    raises_with(TypeError, lambda: jnp.linalg.lstsq(f233, v3), "linalg.lstsq",
            "two-dimensional")
    raises_with(ValueError, lambda: jnp.linalg.lstsq(sq_i, v4), "linalg.lstsq", "(3, 3)", "(4,)")
    raises_with(TypeError, lambda: jnp.linalg.matrix_power(sq_i, 1.5), "matrix_power", "integer")
    raises_with(TypeError, lambda: jnp.linalg.matrix_power(rect_i, 2), "matrix_power", "square")
    raises_with(ValueError, lambda: jnp.linalg.pinv(sq_i, rtol=0.1, rcond=0.1), "linalg.pinv")
    raises_with(ValueError, lambda: jnp.linalg.cond(rect_i, 1), "linalg.cond", "square")
    raises_with(ValueError, lambda: jnp.linalg.tensorinv(f23, 1), "tensorinv")
    raises_with(ValueError, lambda: jnp.linalg.tensorsolve(f23, f3),
            "tensorsolve")
    raises_with(ValueError, lambda: sla.solve_triangular(sq_i, v4), "scipy.linalg.solve_triangular",
            "(4,)")
    raises_with(ValueError, lambda: sla.solve_triangular(sq_i, v3, trans=3), "trans")
    raises_with(TypeError, lambda: sla.cho_solve(sq_i, v3), "scipy.linalg.cho_solve", "(c, lower)")
    raises_with(ValueError, lambda: sla.cholesky(rect_i), "scipy.linalg.cholesky", "(2, 3)")
    raises_with(ValueError, lambda: sla.solve(sq_i, v3, assume_a="banded"), "assume_a")
    raises_with(NotImplementedError, lambda: sla.eigh(sq_i, sq_i), "scipy.linalg.eigh")
    raises_with(TypeError, lambda: sla.cholesky(sq_i, lower="yes"), "lower")
    # the primitives refuse integers (netcl.numpy.linalg converts them first)
    raises_with(TypeError, lambda: lh.cholesky(sq_i), "cholesky", "int32")
    raises_with(ValueError, lambda: lh.solve(f233, f33), "solve",
            "(2, 3, 3)", "(3, 3)")
    raises_with(TypeError, lambda: lh.triangular_solve(f33, sq_i), "triangular_solve",
            "int32")
    assert device_work == [], device_work


def test_deprecated_batched_vector_rhs_warns_as_jax():
    a = _tri(_rng(14), (2, 3, 3), True)
    b = np.ones((2, 3), np.float32)
    with pytest.warns(FutureWarning, match="solve_triangular"):
        got = sla.solve_triangular(jnp.asarray(a), jnp.asarray(b), lower=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        _close(got, jsla.solve_triangular(a, b, lower=True))


def test_public_functions_have_docstrings_with_examples():
    for mod in (jnp.linalg, sla, lh):
        for name in mod.__all__:
            f = getattr(mod, name)
            if isinstance(f, type):
                continue
            assert f.__doc__ and ">>>" in f.__doc__, f"{mod.__name__}.{name}"
            assert f.__name__ == name
