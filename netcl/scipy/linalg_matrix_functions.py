"""Matrix functions of netcl.scipy.linalg: expm, expm_frechet, sqrtm, funm, polar and
solve_sylvester, composed from netcl operations (the Schur forms they start from come from
the host: linalg_schur.py).

  expm             JAX's scaling and squaring with Pade approximants of order 3 to 13 (the
                   order chosen by the 1-norm as JAX chooses it), differentiable (grad, jvp,
                   jit, vmap); expm_frechet is its jvp
  sqrtm, funm      the Schur method of Bjorck and Hammarling, and Parlett's recurrence (Golub
                   and Van Loan 11.1.1), on the complex Schur form; each superdiagonal of the
                   result depends only on the ones below it, so a superdiagonal costs two
                   matrix products (n - 1 steps, not n^2 / 2 scalar updates)
  solve_sylvester  Bartels-Stewart: complex Schur forms of a and b^H, then the triangular
                   equation one anti-diagonal at a time; or, with method='eigen', through
                   eigenvectors (netcl.numpy.linalg.eig)
  polar            QDWH (JAX's iteration) or the SVD

sqrtm, funm and solve_sylvester (method 'schur') are not differentiable, as JAX's are not
(their Schur decomposition has no derivative rule).

>>> import netcl.scipy.linalg as sla
>>> sla.expm(jnp.zeros((2, 2)))
Array([[1., 0.],
       [0., 1.]], dtype=float32)
"""
import numpy as np

from ..core import dtypes
from ..numpy.linalg_decomp import _mH
from ..primitives import linalg_host as lh
from .linalg_schur import _concrete, _jnp
# ---- expm: scaling and squaring with Pade approximants (JAX's) ---------------------------------

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.)}
# (the largest 1-norm each order covers, and the norm scaled down to, per precision: Higham
# 2005 as JAX tabulates them)
_EXPM_64 = (5.371920351148152, (1.495585217958292e-2, 2.539398330063230e-1,
                                9.504178996162932e-1, 2.097847961257068e0), (3, 5, 7, 9, 13))
_EXPM_32 = (3.925724783138660, (4.258730016922831e-1, 1.880152677804762e0), (3, 5, 7))


def _pade(A, m):
    """(U, V) of the order-m Pade approximant exp(A) ~ (V + U) / (V - U)."""
    jnp = _jnp()
    b = _PADE[m]
    eye = jnp.eye(A.shape[-1], dtype=A.dtype)
    A2 = A @ A
    if m == 13:
        A4 = A2 @ A2
        A6 = A4 @ A2
        U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4
                 + b[3] * A2 + b[1] * eye)
        V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
            + b[0] * eye
        return U, V
    powers = [eye, A2]
    while len(powers) < (m + 1) // 2:
        powers.append(powers[-1] @ A2)
    U = A @ sum(b[2 * k + 1] * P for k, P in enumerate(powers))
    V = sum(b[2 * k] * P for k, P in enumerate(powers))
    return U, V


def expm_of(A, upper_triangular, max_squarings):
    """exp of a checked inexact A (..., n, n). Where the order and the number of squarings
    are known (eagerly) only what they ask for is computed; under jit every order is and
    the right one selected (as lax.switch does there)."""
    jnp = _jnp()
    maxnorm, conds, orders = _EXPM_64 if lh._real_dtype(A.dtype) == dtypes.float64 \
        else _EXPM_32
    norm1 = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
    n_sq = jnp.maximum(0.0, jnp.floor(jnp.log2(norm1 / maxnorm)))
    A = A / jnp.exp2(n_sq).astype(A.dtype)[..., None, None]
    idx = sum((norm1 >= c).astype(jnp.int32) for c in conds)   # (jnp.digitize's index)
    known = _concrete(idx)
    wanted = sorted(set(known.reshape(-1).tolist())) if known is not None else \
        range(len(orders))
    U = V = None
    for k in wanted:
        u, v = _pade(A, orders[k])
        if U is None:
            U, V = u, v
        else:
            pick = (idx == k)[..., None, None]
            U, V = jnp.where(pick, u, U), jnp.where(pick, v, V)
    P, Q = U + V, V - U
    R = lh._tri_solve(Q, P, lower=False) if upper_triangular else jnp.linalg.solve(Q, P)
    counts = _concrete(n_sq)
    if counts is not None:      # (a NaN matrix squares nothing, as in JAX's loop)
        counts = np.nan_to_num(counts, nan=0.0, posinf=max_squarings + 1.0)
    steps = max_squarings if counts is None else int(min(np.max(counts, initial=0),
                                                         max_squarings))
    uniform = counts is not None and counts.size and np.all(counts == counts.flat[0])
    for i in range(steps):      # R <- R @ R, n_sq times for each matrix
        R = R @ R if uniform else jnp.where((i < n_sq)[..., None, None], R @ R, R)
    return jnp.where((n_sq > max_squarings)[..., None, None], jnp.full_like(R, np.nan), R)


# ---- sqrtm and funm: recurrences on the complex Schur form, one superdiagonal at a time ------

def _superdiagonal(n, p):
    return (np.arange(n)[None, :] - np.arange(n)[:, None]) == p


def sqrtm_triu(T):
    """The upper-triangular square root R of upper-triangular T: R[i, i] = sqrt(T[i, i]),
    R[i, j] = (T[i, j] - sum_{i<k<j} R[i, k] R[k, j]) / (R[i, i] + R[j, j]), the sum being
    (R @ R)[i, j] while only the superdiagonals below j - i are filled (0 where the numerator
    is exactly 0, as JAX's)."""
    jnp = _jnp()
    n = T.shape[-1]
    d = jnp.sqrt(jnp.diagonal(T, axis1=-2, axis2=-1))
    R = d[..., :, None] * jnp.eye(n, dtype=T.dtype)
    den = d[..., :, None] + d[..., None, :]
    for p in range(1, n):
        num = T - R @ R
        vals = jnp.where(num == 0, jnp.zeros_like(num), num / den)
        R = jnp.where(jnp.asarray(_superdiagonal(n, p)), vals, R)
    return R


def parlett(T, F):
    """Parlett's recurrence: f(T) for upper-triangular T from F = diag(f(diag(T))), one
    superdiagonal at a time: F[i, j] = (T @ F - F @ T)[i, j] / (T[j, j] - T[i, i]) while only
    the superdiagonals below j - i are filled (the numerator as is where the denominator is
    0, as JAX's). Also the smallest |T[j, j] - T[i, i]| (and |T[0, 0]|), for funm's error."""
    jnp = _jnp()
    n = T.shape[-1]
    t = jnp.diagonal(T, axis1=-2, axis2=-1)
    den = t[..., None, :] - t[..., :, None]
    for p in range(1, n):
        num = T @ F - F @ T
        vals = jnp.where(den != 0, num / jnp.where(den != 0, den, 1), num)
        F = jnp.where(jnp.asarray(_superdiagonal(n, p)), vals, F)
    upper = jnp.asarray(np.triu(np.ones((n, n), bool), 1))
    minden = jnp.minimum(jnp.abs(T[..., 0, 0]),
                         jnp.min(jnp.where(upper, jnp.abs(den), np.inf), axis=(-2, -1)))
    return F, minden


# ---- solve_sylvester: Bartels-Stewart --------------------------------------------------------

def sylvester_triangular(R, S, F):
    """Y with R Y + Y S = F for upper-triangular R (m, m) and lower-triangular S (n, n):
    Y[i, j] needs the entries below it and right of it, so the anti-diagonals are solved from
    the bottom-right corner, each with two matrix products of what is filled so far."""
    jnp = _jnp()
    m, n = F.shape[-2:]
    Rs, Ss = jnp.triu(R, 1), jnp.tril(S, -1)
    den = jnp.diagonal(R, axis1=-2, axis2=-1)[..., :, None] + \
        jnp.diagonal(S, axis1=-2, axis2=-1)[..., None, :]
    level = (m - 1 - np.arange(m))[:, None] + (n - 1 - np.arange(n))[None, :]
    Y = jnp.zeros_like(F)
    for lv in range(m + n - 1):
        vals = (F - Rs @ Y - Y @ Ss) / den
        Y = jnp.where(jnp.asarray(level == lv), vals, Y)
    return Y


# ---- polar: QDWH (JAX's iteration) -----------------------------------------------------------

def _qdwh_qr(u, params):
    jnp = _jnp()
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    m, n = u.shape[-2:]
    eye = jnp.broadcast_to(jnp.eye(n, dtype=u.dtype), tuple(u.shape[:-2]) + (n, n))
    q, _ = jnp.linalg.qr(jnp.concatenate([sqrt_c * u, eye], axis=-2))
    return e * u + a_minus_e_by_sqrt_c * (q[..., :m, :] @ _mH(q[..., m:, :]))


def _qdwh_cholesky(u, params):
    jnp = _jnp()
    a_minus_e, c, e = params
    n = u.shape[-1]
    x = c * (_mH(u) @ u) + jnp.eye(n, dtype=u.dtype)
    y = lh.cholesky_p.bind(x)
    w = lh._tri_solve(y, _mH(u), lower=True)                  # y^-1 u^H
    z = lh._tri_solve(y, w, lower=True, transpose_a=True, conjugate_a=True)   # x^-1 u^H
    return e * u + a_minus_e * _mH(z)


def qdwh(x, max_iterations, eps):
    """(u, h) of x = u h, x (..., m, n) with m >= n: QR-based dynamically weighted Halley
    iterations (Nakatsukasa, Bai and Gygi 2010), as JAX's qdwh: the weights' schedule is
    computed from eps once; QR-based steps while c > 100, Cholesky-based ones after, then
    Halley steps until each matrix's iterate stops moving, at most max_iterations in all."""
    from .. import lax
    jnp = _jnp()
    real = lh._real_dtype(x.dtype)
    eps = float(dtypes.finfo(real).eps) if eps is None else float(eps)
    one_norm = jnp.max(jnp.sum(jnp.abs(x), axis=-2), axis=-1)
    inf_norm = jnp.max(jnp.sum(jnp.abs(x), axis=-1), axis=-1)
    alpha_inv = jnp.where(one_norm == 0, 1.0, 1.0 / jnp.sqrt(one_norm * inf_norm))
    u = x * alpha_inv.astype(x.dtype)[..., None, None]
    tol_l = 10.0 * eps / 2.0
    tol_norm = tol_l ** (1 / 3)
    lo, k, qr_params, chol_params = eps, 0, [], []
    while lo + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lo * lo
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** 0.5
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lo = lo * (a + b * l2) / (1 + c * l2)
        if c > 100:
            qr_params.append(((a - b / c) / c ** 0.5, c ** 0.5, b / c))
        else:
            chol_params.append((a - b / c, c, b / c))
    for params in qr_params:
        u = _qdwh_qr(u, params)
    moving = jnp.ones(tuple(x.shape[:-2]), dtype=bool)
    for params in chol_params:
        prev, u = u, _qdwh_cholesky(u, params)
        moving = jnp.sqrt(jnp.sum(jnp.abs(u - prev) ** 2, axis=(-2, -1))) > tol_norm

    def cond(state):
        i, _, moving = state
        return jnp.any(moving) & (i < max_iterations)

    def body(state):
        i, u, moving = state
        new = _qdwh_cholesky(u, (8.0 / 3.0, 3.0, 1.0 / 3.0))   # Halley: (a, b, c) = (3, 1, 3)
        still = jnp.sqrt(jnp.sum(jnp.abs(new - u) ** 2, axis=(-2, -1))) > tol_norm
        return i + 1, jnp.where(moving[..., None, None], new, u), moving & still
    _, u, _ = lax.while_loop(cond, body, (jnp.asarray(len(qr_params) + len(chol_params)),
                                          u, moving))
    u = 1.5 * u - 0.5 * u @ (_mH(u) @ u)        # a Newton-Schulz refinement
    h = _mH(u) @ x
    return u, (h + _mH(h)) / 2


# ---- the public functions ------------------------------------------------------------------------

def _square(where, a, name="a"):
    from ..numpy.linalg_decomp import _square as square
    return square(where, a, name)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential of each square matrix of `A` (..., n, n), by JAX's scaling
    and squaring: A / 2^s has 1-norm small enough for a Pade approximant of order 3 to 13,
    whose value is squared s times; NaN where s would exceed max_squarings.
    upper_triangular=True solves the approximant's triangular system by substitution (the
    matrices must then be upper triangular). Differentiable (grad, jvp, hessian), jit and
    vmap.

    >>> sla.expm(jnp.array([[0.0, 1.0], [0.0, 0.0]]))
    Array([[1., 1.],
           [0., 1.]], dtype=float32)
    """
    where = "scipy.linalg.expm"
    from ..numpy.linalg_decomp import _bool
    upper_triangular = _bool(where, "upper_triangular", upper_triangular)
    if isinstance(max_squarings, (bool, np.bool_)) or not isinstance(max_squarings,
                                                                     (int, np.integer)):
        raise TypeError(f"{where}: max_squarings must be an int, got "
                        f"{type(max_squarings).__name__}")
    if max_squarings < 0:
        raise ValueError(f"{where}: max_squarings must be >= 0, got {max_squarings}")
    return expm_of(_square(where, A, "A"), upper_triangular, int(max_squarings))


def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of expm at A in the direction E (the jvp of expm), with
    expm(A) first unless compute_expm=False: (expm(A), L(A, E)) or L(A, E). A and E of one
    shape (..., n, n); method is accepted and ignored, as in JAX.

    >>> a, l = sla.expm_frechet(jnp.eye(2), jnp.eye(2))    # both e * I
    """
    from ..numpy.linalg_decomp import _bool, _floats, _matrix_check
    from ..transforms.ad import jvp
    where = "scipy.linalg.expm_frechet"
    compute_expm = _bool(where, "compute_expm", compute_expm)

    def check(sa, se):
        _matrix_check(where, "A")(sa)
        _matrix_check(where, "E")(se)
        if sa != se:
            raise ValueError(f"{where}: expected A and E to have the same shape, got A of "
                             f"shape {sa} and E of shape {se}")
    A, E = _floats(where, [("A", A), ("E", E)], check)
    out, tangent = jvp(lambda a: expm_of(a, False, 16), (A,), (E,))
    return (out, tangent) if compute_expm else tangent


def sqrtm(A, blocksize=1):
    """The principal square root of each square matrix of `A` (..., n, n), complex (as
    JAX's: complex64 for float32 input): the Schur method of Bjorck and Hammarling on the
    complex Schur form A = Z T Z^H (computed on the host), R = Z sqrt(T) Z^H. blocksize > 1
    is not implemented, as in JAX. Not differentiable (nor is JAX's).

    >>> sla.sqrtm(jnp.array([[4.0, 0.0], [0.0, 9.0]]))
    Array([[2.+0.j, 0.+0.j],
           [0.+0.j, 3.+0.j]], dtype=complex64)
    """
    from .linalg_schur import schur_of
    where = "scipy.linalg.sqrtm"
    if blocksize != 1:
        raise NotImplementedError(f"{where}: the blocked version (blocksize={blocksize!r}) is "
                                  "not implemented; use blocksize=1")
    T, Z = schur_of(_square(where, A, "A"), complex_output=True)
    return Z @ sqrtm_triu(T) @ _mH(Z)


def funm(A, func, disp=True):
    """f(A) for a square matrix A (n, n) and a scalar function `func` (applied to A's
    eigenvalues, as an array; written with netcl operations): Parlett's recurrence on the
    complex Schur form (schur, then rsf2csf, on the host), complex as JAX's. With
    disp=False also an estimate of the relative error, as scipy's and JAX's: (F, err). Not
    differentiable (nor is JAX's).

    >>> sla.funm(jnp.array([[1.0, 2.0], [0.0, 3.0]]), jnp.exp)     # = expm, complex
    """
    from .linalg_schur import rsf2csf_of, schur_of
    where = "scipy.linalg.funm"
    jnp = _jnp()
    if not callable(func):
        raise TypeError(f"{where}: func must be callable, got {type(func).__name__}")
    A = _square(where, A, "A")
    if A.ndim != 2:
        raise ValueError(f"{where}: expected a square matrix (n, n), got shape "
                         f"{tuple(A.shape)}")
    T, Z = schur_of(A, complex_output=False)
    if not dtypes.is_complex(T.dtype):
        cdt = dtypes.COMPLEX_OF[T.dtype]
        T, Z = T.astype(cdt), Z.astype(cdt)
    if A.shape[-1] > 1:
        T, Z = rsf2csf_of(T, Z)
    F = jnp.diag(jnp.asarray(func(jnp.diagonal(T))).astype(T.dtype))
    F, minden = parlett(T, F)
    F = Z @ F @ _mH(Z)
    if disp:
        return F
    tol = float(dtypes.finfo(lh._real_dtype(F.dtype)).eps)
    minden = jnp.where(minden == 0.0, tol, minden)
    one_norm = jnp.max(jnp.sum(jnp.abs(jnp.triu(T, 1)), axis=-2), axis=-1)
    err = jnp.where(jnp.any(jnp.isinf(F)), np.inf,
                    jnp.minimum(1.0, jnp.maximum(tol, (tol / minden) * one_norm)))
    return F, err


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition of each matrix of `a` (..., m, n): (u, p) with a = u p
    (side 'right', p (..., n, n)) or a = p u ('left', p (..., m, m)), u with orthonormal
    columns (rows where n > m), p Hermitian positive semidefinite. method 'qdwh' (default:
    JAX's QR-based dynamically weighted Halley iteration; m >= n with side 'right', m < n
    with 'left', as JAX's; eps and max_iterations (default 10) bound its iterations) or
    'svd' (u = U Vh; differentiable where the SVD is).

    >>> u, p = sla.polar(jnp.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> p
    Array([[2., 0.],
           [0., 3.]], dtype=float32)
    """
    from ..numpy.linalg_decomp import _floats, _matrix_check
    where = "scipy.linalg.polar"
    if side not in ("right", "left"):
        raise ValueError(f"{where}: side must be either 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"{where}: unknown polar decomposition method {method!r}; expected "
                         "'qdwh' or 'svd'")
    if max_iterations is None:
        max_iterations = 10
    elif isinstance(max_iterations, (bool, np.bool_)) or \
            not isinstance(max_iterations, (int, np.integer)):
        raise TypeError(f"{where}: max_iterations must be an int or None, got "
                        f"{type(max_iterations).__name__}")
    a = _floats(where, [("a", a)], _matrix_check(where, "a", square=False))[0]
    m, n = a.shape[-2:]
    if method == "svd":
        u, s, vh = lh.svd_p.bind(a)
        s = s.astype(u.dtype)
        unitary = u @ vh
        posdef = (_mH(vh) * s[..., None, :]) @ vh if side == "right" else \
            (u * s[..., None, :]) @ _mH(u)
        return unitary, posdef
    if m >= n and side == "right":
        return qdwh(a, int(max_iterations), eps)
    if m < n and side == "left":
        u, h = qdwh(_mH(a), int(max_iterations), eps)
        return _mH(u), _mH(h)
    raise NotImplementedError(f"{where}: method='qdwh' supports m >= n with side='right' and "
                              f"m < n with side='left', got shape {tuple(a.shape)} with "
                              f"side={side!r}; use method='svd'")


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with A X + X B = C: A (..., m, m), B (..., n, n), C (..., m, n), batch dimensions
    broadcast. method 'schur' (default, Bartels-Stewart on complex Schur forms computed on
    the host) or 'eigen' (through eigenvectors; A and B must be diagonalizable). NaN where
    some eigenvalues satisfy |lambda_A + lambda_B| < tol (the equation is then singular or
    nearly so), as JAX's; real where C is real.

    >>> sla.solve_sylvester(jnp.eye(2), jnp.eye(2), jnp.eye(2))
    Array([[0.5, 0. ],
           [0. , 0.5]], dtype=float32)
    """
    from ..core.shapes import IncompatibleShapesError
    from ..numpy.linalg_decomp import _floats, _matrix_check
    from .linalg_schur import schur_of
    where = "scipy.linalg.solve_sylvester"
    jnp = _jnp()
    if method not in ("schur", "eigen"):
        raise ValueError(f"{where}: unrecognized method {method!r}; expected 'schur' or "
                         "'eigen'")

    def check(sa, sb, sc):
        _matrix_check(where, "A")(sa)
        _matrix_check(where, "B")(sb)
        _matrix_check(where, "C", square=False)(sc)
        if sa[-1] != sc[-2] or sb[-1] != sc[-1]:
            raise ValueError(f"{where}: incompatible shapes for A X + X B = C: A {sa}, B "
                             f"{sb}, C {sc} (A (..., m, m), B (..., n, n), C (..., m, n))")
        try:
            np.broadcast_shapes(sa[:-2], sb[:-2], sc[:-2])
        except ValueError:
            raise IncompatibleShapesError(f"{where}: the batch dimensions of A {sa}, B {sb} "
                                          f"and C {sc} do not broadcast together") from None
    A, B, C = _floats(where, [("A", A), ("B", B), ("C", C)], check)
    batch = tuple(np.broadcast_shapes(*(tuple(x.shape[:-2]) for x in (A, B, C))))
    A, B, C = (jnp.broadcast_to(x, batch + tuple(x.shape[-2:])) for x in (A, B, C))
    if method == "schur":
        R, U = schur_of(A, complex_output=True)
        S, V = schur_of(_mH(B), complex_output=True)
        F = _mH(U) @ C.astype(R.dtype) @ V
        X = U @ sylvester_triangular(R, _mH(S), F) @ _mH(V)
        # (the eigenvalues, for the check below: T's diagonals; B's are conj(diag(S)))
        ra, rb = jnp.diagonal(R, axis1=-2, axis2=-1), jnp.conj(jnp.diagonal(S, axis1=-2,
                                                                             axis2=-1))
    else:
        ra, ua = jnp.linalg.eig(A)
        rb, ub = jnp.linalg.eig(B)
        F = jnp.linalg.solve(ua, C.astype(ra.dtype) @ ub)
        X = ua @ (F / (ra[..., :, None] + rb[..., None, :])) @ jnp.linalg.inv(ub)
    if not dtypes.is_complex(C.dtype):
        X = jnp.real(X)
    close = jnp.abs(ra[..., :, None] + rb[..., None, :])
    singular = jnp.any(close < tol, axis=(-2, -1))
    return jnp.where(singular[..., None, None], jnp.full_like(X, np.nan), X)


__all__ = ["expm", "expm_frechet", "sqrtm", "funm", "polar", "solve_sylvester"]

# Errors escaping these functions name them as they are called (scipy.linalg.expm: ...).
from ..numpy._errors import public  # noqa: E402
for _n in __all__:
    _w = globals()[_n] = public(globals()[_n], f"scipy.linalg.{_n}")
    _w.__module__, _w.__qualname__, _w.__name__ = "netcl.scipy.linalg", _n, _n
del _n, _w
