"""The derivative rules (jvp and vjp) of linalg_host's primitives: cholesky,
triangular_solve, solve, slogdet, eigh, svd and qr, for real and complex operands.

They are written with netcl operations (matmuls, masks, these primitives themselves), so
they run under jit and vmap and differentiate again (grad of grad). Complex operands follow
JAX's convention (jax/_src/lax/linalg.py): a vjp is the transpose of the jvp's real-linear
map under the pairing Re(sum(x * y)), without conjugation, so `grad` of a real function of a
complex matrix is conj(df/dA). Where a real rule has a transpose, the complex one has the
conjugate transpose _mH (JAX's _H), and the vjps transpose that: the transpose of X -> X^H
is X_bar -> X_bar^H, of X -> M X N is X_bar -> M^T X_bar N^T (M^T, not M^H), of X -> Re(X)
is the real cotangent embedded. _mH and _conj are no operation on real arrays, so each real
rule is exactly what it was before complex numbers came.

  cholesky          L = chol(A) reads A's lower triangle; dL = L phi(L^-1 dS L^-H), with
                    dS the Hermitian matrix of dA's lower triangle (a complex diagonal's real
                    part, as potrf reads it), phi = lower triangle with the diagonal halved
  triangular_solve  x = op(A)^-1 b (left side; lower/upper, transpose_a, unit_diagonal):
                    dx = op(A)^-1 (db - op(dA) x), dA masked to the triangle read; holomorphic,
                    so the same rules serve complex operands
  solve             x = A^-1 b: dx = A^-1 (db - dA x); b_bar = A^-T x_bar, A_bar = -b_bar x^T
                    (holomorphic too)
  slogdet           t = tr(A^-1 dA): d logabsdet = Re(t); the sign of a real A has no
                    derivative, a complex one's is i Im(t) sign (as JAX's _slogdet_jvp)
  eigh              A = V diag(w) V^H (ascending real w), reading one triangle: C = V^H dS V,
                    dw = Re(diag(C)), dV = V (F o C), F_ij = 1 / (w_j - w_i) (distinct
                    eigenvalues; complex V: the gauge with Im(v_j^H dv_j) = 0, as JAX's)
  svd               A = U diag(s) Vh, reduced (k = min(m, n)): JAX's svd_jvp_rule for distinct
                    nonzero singular values (with its imaginary diagonal term of dU for
                    complex A, and the extra terms of non-square A); a loss of s alone is
                    differentiable everywhere
  qr                A = QR, reduced: for m >= n JAX's _thin_qr_jvp (with its imaginary
                    diagonal term for complex A; its vjp the transpose: A_bar = (Q_bar +
                    conj(Q) herm(M)) R^-T), for m < n the split A = [X | Y], X = QU square,
                    V = Q^H Y (as JAX's qr_jvp_rule)

>>> netcl.grad(lambda a: jnp.real(jnp.linalg.slogdet(a)[1]))(a)     # conj(inv(a)).T
"""
from ..core.ad_util import Zero, is_zero
from ..core.tracing import ShapedArray
from . import complex_ops as cx
from . import views
from .linalg_host import (_add, _as_complex, _conj, _diag, _diagonal, _eye, _gap_inverse,
                          _herm_of_triangle, _is_complex, _jnp, _live, _mH, _mm, _mT, _phi,
                          _row, _col, _tri_solve, _tri_solve_right,
                          _triangle, cholesky_p, eigh_p, qr_p, slogdet_p, solve_p, svd_p,
                          triangular_solve_p)

__all__ = []


def _i_imag(x):
    """i Im(x) for complex x: (x - conj(x)) / 2 as one complex number."""
    return cx.complex(views.full_like(cx.imag(x), 0), cx.imag(x))


# ---- cholesky -----------------------------------------------------------------------------

def _cholesky_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    L = cholesky_p.bind(a)
    s = _herm_of_triangle(da, True)
    y = _tri_solve(L, s, True)                          # L^-1 dS
    m = _mH(_tri_solve(L, _mH(y), True))                # L^-1 dS L^-H
    return L, _mm(L, _phi(m, True))


def _cholesky_vjp(ct, L, a):
    ct = _live(ct)
    if ct is None:
        return (None,)
    p = _phi(_mm(_mT(L), ct), True)                     # the cotangent of L^-1 dS L^-H
    z = _tri_solve(L, p, True, transpose_a=True)        # L^-T p
    s_bar = _mH(_tri_solve(L, _mH(z), True, transpose_a=True))    # L^-T p conj(L)^-1
    return (_phi(s_bar + _mH(s_bar), True),)            # onto the lower triangle read


# ---- triangular_solve (holomorphic: real and complex alike) -------------------------------

def _triangular_solve_jvp(primals, tangents, *, lower, transpose_a, unit_diagonal):
    (a, b), (da, db) = primals, tangents
    p = dict(lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    x = triangular_solve_p.bind(a, b, **p)
    rhs = None if is_zero(db) else db
    if not is_zero(da):
        d = _triangle(da, lower, 1 if unit_diagonal else 0)   # the entries the solve reads
        t = _mm(_mT(d) if transpose_a else d, x)
        rhs = -t if rhs is None else rhs - t
    if rhs is None:
        return x, Zero(ShapedArray(tuple(x.shape), x.dtype))
    return x, triangular_solve_p.bind(a, rhs, **p)


def _triangular_solve_vjp(ct, x, a, b, *, lower, transpose_a, unit_diagonal):
    ct = _live(ct)
    if ct is None:
        return None, None
    b_bar = triangular_solve_p.bind(a, ct, lower=lower, transpose_a=not transpose_a,
                                    unit_diagonal=unit_diagonal)
    a_bar = _mm(x, _mT(b_bar)) if transpose_a else _mm(b_bar, _mT(x))
    return -_triangle(a_bar, lower, 1 if unit_diagonal else 0), b_bar


# ---- solve (holomorphic) ------------------------------------------------------------------

def _solve_jvp(primals, tangents):
    (a, b), (da, db) = primals, tangents
    x = solve_p.bind(a, b)
    rhs = None if is_zero(db) else db
    if not is_zero(da):
        t = _mm(da, x)
        rhs = -t if rhs is None else rhs - t
    if rhs is None:
        return x, Zero(ShapedArray(tuple(x.shape), x.dtype))
    return x, solve_p.bind(a, rhs)


def _solve_vjp(ct, x, a, b):
    ct = _live(ct)
    if ct is None:
        return None, None
    b_bar = solve_p.bind(_mT(a), ct)
    return -_mm(b_bar, _mT(x)), b_bar


# ---- slogdet ------------------------------------------------------------------------------

def _slogdet_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    sign, logdet = slogdet_p.bind(a)
    t = _jnp().trace(solve_p.bind(a, da), axis1=-2, axis2=-1)
    if not _is_complex(a):
        return (sign, logdet), (Zero(ShapedArray(tuple(sign.shape), sign.dtype)), t)
    # sign = det / |det|: d sign = (t - Re t) sign, d log|det| = Re t (JAX's _slogdet_jvp)
    return (sign, logdet), (_i_imag(t) * sign, cx.real(t))


def _slogdet_vjp(ct, out, a):
    c = _live(ct[1])
    if not _is_complex(a):     # (a real sign is piecewise constant: its cotangent goes nowhere)
        if c is None:
            return (None,)
        eye = _jnp().broadcast_to(_eye(a.shape[-1], a.dtype), tuple(a.shape))
        inv_t = solve_p.bind(_mT(a), eye)               # A^-T
        return (views.reshape(c, tuple(c.shape) + (1, 1)) * inv_t,)
    sign_bar = _live(ct[0])
    t_bar = None                # the cotangent of t = tr(A^-1 dA) = sum(A^-T o dA)
    if c is not None:           # (Re t's transpose: the real cotangent embedded)
        t_bar = _as_complex(c, a.dtype)
    if sign_bar is not None:    # (t -> i Im(t) sign's transpose: i Im(sign_bar sign))
        t_bar = _add(t_bar, _i_imag(sign_bar * out[0]))
    if t_bar is None:
        return (None,)
    eye = _jnp().broadcast_to(_eye(a.shape[-1], a.dtype), tuple(a.shape))
    inv_t = solve_p.bind(_mT(a), eye)
    return (views.reshape(t_bar, tuple(t_bar.shape) + (1, 1)) * inv_t,)


# ---- eigh ---------------------------------------------------------------------------------

def _eigh_jvp(primals, tangents, *, lower):
    (a,), (da,) = primals, tangents
    w, v = eigh_p.bind(a, lower=lower)
    c = _mm(_mH(v), _mm(_herm_of_triangle(da, lower), v))    # V^H dS V
    dw = cx.real(_diagonal(c)) if _is_complex(c) else _diagonal(c)
    return (w, v), (dw, _mm(v, _as_complex(_gap_inverse(w), v.dtype) * c))


def _eigh_vjp(ct, out, a, *, lower):
    (w, v), (w_bar, v_bar) = out, (_live(ct[0]), _live(ct[1]))
    g = None                    # the cotangent of C = V^H dS V
    if w_bar is not None:       # (dw = Re diag C: w_bar embedded)
        g = _as_complex(_diag(w_bar), v.dtype)
    if v_bar is not None:
        g = _add(g, _as_complex(_gap_inverse(w), v.dtype) * _mm(_mT(v), v_bar))
    if g is None:
        return (None,)
    s_bar = _mm(_conj(v), _mm(g, _mT(v)))              # (C = conj(V)^T dS V)
    return (_phi(s_bar + _mH(s_bar), lower),)


# ---- svd ----------------------------------------------------------------------------------

def _svd_gaps(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it."""
    eye = _eye(s.shape[-1], s.dtype)
    r, c = _row(s), _col(s)
    return 1.0 / ((r + c) * (r - c) + eye) - eye


def _safe_inverse(s):
    """1 / s where s != 0, else 0 (JAX's s_inv)."""
    jnp = _jnp()
    zero = s == 0
    return jnp.where(zero, 0.0, 1.0 / jnp.where(zero, 1.0, s))


def _svd_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    u, s, vh = svd_p.bind(a)
    m, n = a.shape[-2:]
    cplx = _is_complex(a)
    v = _mH(vh)
    ds_mat = _mm(_mH(u), _mm(da, v))                    # U^H dA V, (k, k)
    ds = cx.real(_diagonal(ds_mat)) if cplx else _diagonal(ds_mat)
    f, r, c = _svd_gaps(s), _row(s), _col(s)
    if cplx:
        f, r, c = (_as_complex(x, a.dtype) for x in (f, r, c))
    dss = ds_mat * r                                    # dS S
    sds = c * ds_mat                                    # S dS
    inner_u = f * (dss + _mH(dss))
    if cplx:        # U's phase on the diagonal: i Im(dS_ii) / s_i (JAX's dUdV_diag)
        inner_u = inner_u + _diag(_i_imag(_diagonal(ds_mat))
                                  * _as_complex(_safe_inverse(s), a.dtype))
    du = _mm(u, inner_u)
    dv = _mm(v, f * (sds + _mH(sds)))
    if m > n:       # the part of dA V outside U's span
        dav = _mm(da, v)
        du = du + (dav - _mm(u, _mm(_mH(u), dav))) / r
    if n > m:
        dahu = _mm(_mH(da), u)
        dv = dv + (dahu - _mm(v, _mm(vh, dahu))) / r
    return (u, s, vh), (du, ds, _mH(dv))


def _svd_vjp(ct, out, a):
    (u, s, vh) = out
    u_bar, s_bar, vh_bar = (_live(c) for c in ct)
    m, n = a.shape[-2:]
    cplx = _is_complex(a)
    uc, vt = _conj(u), _conj(vh)                        # (U^H)^T and V^T
    g = None                                            # the cotangent of U^H dA V
    if s_bar is not None:
        g = _as_complex(_diag(s_bar), a.dtype)
    if u_bar is not None or vh_bar is not None:
        f, r, c = (_as_complex(x, a.dtype) for x in (_svd_gaps(s), _row(s), _col(s)))
    if u_bar is not None:
        yb = _mm(_mT(u), u_bar)                         # the cotangent of U^H dU
        y = f * yb
        g = _add(g, (y + _mH(y)) * r)
        if cplx:    # (the transpose of the phase term: i Im(yb_ii) / s_i)
            g = g + _diag(_i_imag(_diagonal(yb)) * _as_complex(_safe_inverse(s), a.dtype))
    v_bar = None if vh_bar is None else _mH(vh_bar)
    if v_bar is not None:
        z = f * _mm(vt, v_bar)
        g = _add(g, c * (z + _mH(z)))
    a_bar = None if g is None else _mm(uc, _mm(g, vt))
    if u_bar is not None and m > n:
        a_bar = _add(a_bar, _mm((u_bar - _mm(uc, _mm(_mT(u), u_bar))) / r, vt))
    if v_bar is not None and n > m:
        a_bar = _add(a_bar, _mm(uc, _mH((v_bar - _mm(_mT(vh), _mm(vt, v_bar))) / r)))
    return (a_bar,)


# ---- qr -----------------------------------------------------------------------------------

def _qr_jvp_tall(q, r, da):
    """dQ, dR of A = QR with m >= n (r square): C = Q^H dA R^-1, dQ = Q (O - C) + dA R^-1,
    dR = (C - O) R, with O the skew-Hermitian matrix of C's strict lower triangle plus, for
    complex A, i Im(diag C) (R's diagonal stays real)."""
    x = _tri_solve_right(r, da, lower=False)            # dA R^-1
    c = _mm(_mH(q), x)
    low = _triangle(c, True, 1)
    o = low - _mH(low)
    if _is_complex(c):
        o = o + _diag(_i_imag(_diagonal(c)))
    return _mm(q, o - c) + x, _mm(c - o, r)


def _qr_vjp_tall(q, r, q_bar, r_bar):
    """A_bar = (Q_bar + conj(Q) herm(M)) R^-T, M = conj(R) R_bar^H - Q_bar^H conj(Q),
    herm(M) the Hermitian matrix of M's lower triangle with a real diagonal (the transpose
    of _qr_jvp_tall; real A: M = R R_bar^T - Q_bar^T Q, herm the symmetric matrix)."""
    m_ = None
    if r_bar is not None:
        m_ = _mm(_conj(r), _mH(r_bar))
    if q_bar is not None:
        m_ = _add(m_, -_mm(_mH(q_bar), _conj(q)))
    y = _mm(_conj(q), _herm_of_triangle(m_, True))
    if q_bar is not None:
        y = y + q_bar
    return _mT(_tri_solve(r, _mT(y), lower=False))     # y R^-T


def _split_cols(x, k):
    return x[..., :k], x[..., k:]


def _qr_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    q, r = qr_p.bind(a)
    m, n = a.shape[-2:]
    if m >= n:
        return (q, r), _qr_jvp_tall(q, r, da)
    # wide: A = [X | Y], X = Q U square, R = [U | Q^H Y]
    (u, _), (dx, dy), (_, y) = _split_cols(r, m), _split_cols(da, m), _split_cols(a, m)
    dq, du = _qr_jvp_tall(q, u, dx)
    dv = _mm(_mH(dq), y) + _mm(_mH(q), dy)
    return (q, r), (dq, _jnp().concatenate([du, dv], axis=-1))


def _qr_vjp(ct, out, a):
    (q, r), (q_bar, r_bar) = out, (_live(ct[0]), _live(ct[1]))
    if q_bar is None and r_bar is None:
        return (None,)
    m, n = a.shape[-2:]
    if m >= n:
        return (_qr_vjp_tall(q, r, q_bar, r_bar),)
    u, _ = _split_cols(r, m)
    _, y = _split_cols(a, m)
    u_bar = v_bar = None
    if r_bar is not None:
        u_bar, v_bar = _split_cols(r_bar, m)
    y_bar = None
    if v_bar is not None:      # V = Q^H Y
        q_bar = _add(q_bar, _mm(_conj(y), _mH(v_bar)))
        y_bar = _mm(_conj(q), v_bar)
    x_bar = _qr_vjp_tall(q, u, q_bar, u_bar)
    if y_bar is None:
        y_bar = _jnp().zeros_like(y)
    return (_jnp().concatenate([x_bar, y_bar], axis=-1),)


for _p, _jvp, _vjp in (
        (cholesky_p, _cholesky_jvp, _cholesky_vjp),
        (triangular_solve_p, _triangular_solve_jvp, _triangular_solve_vjp),
        (solve_p, _solve_jvp, _solve_vjp),
        (slogdet_p, _slogdet_jvp, _slogdet_vjp),
        (eigh_p, _eigh_jvp, _eigh_vjp),
        (svd_p, _svd_jvp, _svd_vjp),
        (qr_p, _qr_jvp, _qr_vjp)):
    _p.jvp = _jvp
    _p.vjp = _vjp
del _p, _jvp, _vjp
