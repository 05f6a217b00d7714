"""Dense linear algebra computed on the host: cholesky, triangular_solve, solve, slogdet,
eigh, svd and qr.

cholesky, triangular_solve, solve and slogdet (and linalg_lu's lu) run device kernels where
`linalg_device` covers them (float32,
and float64 where the device has fp64; not the few mid-sized single matrices where the
host is faster, linalg_device.HOST_WINS): its `launcher` is asked first. The host path, in
every other case: the launcher downloads its operands (`Array._to_host`), runs NumPy's LAPACK
bindings (`np.linalg`, which batch over leading dimensions natively) and
uploads the results (`Array.from_numpy`). The transfers are the cost: every call waits for
the queue, reads its operands back and writes its results, so a decomposition inside a jitted
step splits the step's kernels into a part before and a part after it. Device kernels for LU,
Householder QR and Jacobi eigh/SVD are future work; they would replace the launchers only.
`reference` is the same NumPy computation (the fallback backend and the tables' oracle).

Conventions: matrices are the last two axes, every leading axis is a batch axis; the two
operands of triangular_solve and solve have equal batch shapes (netcl.numpy.linalg
broadcasts them first). float32 and float64 only: integers are refused here (the
netcl.numpy.linalg functions convert them to float first, as jax.numpy.linalg does), float16
too (as JAX's LAPACK kernels refuse it). Where LAPACK fails (a matrix that is not positive
definite, a singular system, an SVD or eigh that does not converge) the failing matrices'
results are NaN, as JAX returns NaN instead of raising: a jitted or vmapped program cannot
raise for one matrix of a batch.

The derivative rules are written with netcl operations (matmuls, masks, these primitives
themselves), so they run under jit and vmap and differentiate again (grad of grad):

  cholesky          L = chol(A) reads A's lower triangle; dL = L phi(L^-1 dS L^-T), with
                    dS the symmetric matrix of dA's lower triangle, phi = lower triangle with
                    the diagonal halved; the vjp is its transpose
  triangular_solve  x = op(A)^-1 b (left side; lower/upper, transpose_a, unit_diagonal):
                    dx = op(A)^-1 (db - op(dA) x), dA masked to the triangle read
  solve             x = A^-1 b: dx = A^-1 (db - dA x); b_bar = A^-T x_bar, A_bar = -b_bar x^T
  slogdet           d logabsdet = tr(A^-1 dA); the sign has no derivative
  eigh              A = V diag(w) V^T (ascending w), reading one triangle: dw = diag(V^T dS V),
                    dV = V (F o V^T dS V), F_ij = 1 / (w_j - w_i) (distinct eigenvalues)
  svd               A = U diag(s) Vh, reduced (k = min(m, n)): the standard formulas for
                    distinct nonzero singular values (as JAX's), with the extra terms of
                    non-square A; a loss of s alone is differentiable everywhere
  qr                A = QR, reduced: for m >= n the formula of JAX's rule (its vjp the
                    transpose: A_bar = (Q_bar + Q copyltu(M)) R^-T), for m < n (which JAX
                    does not differentiate) the split A = [X | Y], X = QU square, V = Q^T Y

>>> L = cholesky(a); x = triangular_solve(L, b, left_side=True, lower=True)     # L^-1 b
"""
import warnings

import numpy as np

from ..core import dtypes
from ..core.ad_util import Zero, is_zero
from ..core.array import Array
from ..core.tracing import Primitive, ShapedArray
from . import views
from .views import operand

__all__ = ["cholesky", "triangular_solve", "solve", "slogdet", "eigh", "svd", "qr"]

# precision="keep_fp32": a decomposition is not computed in reduced precision
cholesky_p = Primitive("cholesky", precision="keep_fp32")
triangular_solve_p = Primitive("triangular_solve", precision="keep_fp32")
solve_p = Primitive("solve", precision="keep_fp32")
slogdet_p = Primitive("slogdet", multiple_results=True, precision="keep_fp32")
eigh_p = Primitive("eigh", multiple_results=True, precision="keep_fp32")
svd_p = Primitive("svd", multiple_results=True, precision="keep_fp32")
qr_p = Primitive("qr", multiple_results=True, precision="keep_fp32")

_FLOATS = (dtypes.float32, dtypes.float64)


# ---- abstract evaluation ----------------------------------------------------------------------

def _check_float(where, name, x):
    if x.dtype not in _FLOATS:
        hint = ("netcl.numpy.linalg converts integers to float first" if x.dtype.kind in "biu"
                else "compute in float32: x.astype(jnp.float32)")
        raise TypeError(f"{where}: {name} must be float32 or float64, got {x.dtype} ({hint})")


def _check_matrix(where, name, x, square=True):
    _check_float(where, name, x)
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise ValueError(f"{where}: {name} must have shape (..., m, n) with at least two "
                         f"dimensions, got shape {shape}")
    if square and shape[-1] != shape[-2]:
        raise ValueError(f"{where}: {name} must be square, shape (..., n, n), got shape "
                         f"{shape}")


def _check_rhs(where, a, b):
    """b of a solve with a: (..., n, k), a's batch shape and dtype."""
    _check_matrix(where, "a", a)
    _check_matrix(where, "b", b, square=False)
    sa, sb = tuple(a.shape), tuple(b.shape)
    if a.dtype != b.dtype:
        raise TypeError(f"{where}: a and b must have equal dtypes, got {a.dtype} and {b.dtype} "
                        "(netcl.numpy.linalg promotes; the primitives do not)")
    if sa[:-2] != sb[:-2] or sb[-2] != sa[-1]:
        want = ", ".join(str(d) for d in sa[:-2] + (sa[-1],))
        raise ValueError(f"{where}: b must have shape ({want}, k) for a of shape {sa}, got "
                         f"shape {sb} (netcl.numpy.linalg broadcasts batch dimensions; the "
                         "primitives do not)")


def _same(a):
    return ShapedArray(tuple(a.shape), a.dtype)


def _cholesky_abstract(a):
    _check_matrix("cholesky", "a", a)
    return _same(a)


def _triangular_solve_abstract(a, b, *, lower, transpose_a, unit_diagonal):
    _check_rhs("triangular_solve", a, b)
    return _same(b)


def _solve_abstract(a, b):
    _check_rhs("solve", a, b)
    return _same(b)


def _slogdet_abstract(a):
    _check_matrix("slogdet", "a", a)
    batch = tuple(a.shape[:-2])
    return ShapedArray(batch, a.dtype), ShapedArray(batch, a.dtype)


def _eigh_abstract(a, *, lower):
    _check_matrix("eigh", "a", a)
    return ShapedArray(tuple(a.shape[:-1]), a.dtype), _same(a)


def _svd_abstract(a):
    _check_matrix("svd", "a", a, square=False)
    *batch, m, n = a.shape
    k, batch = min(m, n), tuple(batch)
    return (ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k,), a.dtype),
            ShapedArray(batch + (k, n), a.dtype))


def _qr_abstract(a):
    _check_matrix("qr", "a", a, square=False)
    *batch, m, n = a.shape
    k, batch = min(m, n), tuple(batch)
    return ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype)


# ---- NumPy references (also what the launchers run) -------------------------------------------

def _per_matrix(fn, xs, fill):
    """fn(*xs) over the whole batch at once; where LAPACK refuses the batch (one matrix not
    positive definite, singular, not converging), matrix by matrix with fill(*xs) standing
    for the failing ones' results."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return fn(*xs)
        except np.linalg.LinAlgError:
            pass
        batch = xs[0].shape[:-2]
        results = []
        for idx in np.ndindex(*batch):
            one = tuple(x[idx] for x in xs)
            try:
                results.append(fn(*one))
            except np.linalg.LinAlgError:
                results.append(fill(*one))
    if isinstance(results[0], tuple):
        return tuple(np.stack([r[i] for r in results]).reshape(batch + results[0][i].shape)
                     for i in range(len(results[0])))
    return np.stack(results).reshape(batch + results[0].shape)


def _nan(shape, dtype):
    return np.full(shape, np.nan, dtype)


def _cholesky_ref(a):
    # NaN in the lower triangle where a matrix is not positive definite, as JAX's result
    out = _per_matrix(np.linalg.cholesky, (a,), lambda a: np.tril(_nan(a.shape, a.dtype)))
    return out.astype(a.dtype, copy=False)


def _triangular_ref(a, lower, transpose_a, unit_diagonal):
    """op(A) as a dense matrix: only the triangle read, the unit diagonal where assumed."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        i = np.arange(a.shape[-1])
        t[..., i, i] = 1
    return np.swapaxes(t, -1, -2) if transpose_a else t


def _triangular_solve_ref(a, b, *, lower, transpose_a, unit_diagonal):
    t = _triangular_ref(a, lower, transpose_a, unit_diagonal)
    if lower != transpose_a:
        # a lower-triangular system read backwards (rows and columns reversed) is an upper
        # one, and LU with partial pivoting of an upper-triangular matrix never pivots: its
        # factors are the matrix itself, so np.linalg.solve is exactly back substitution
        t, b = t[..., ::-1, ::-1], b[..., ::-1, :]
    x = _per_matrix(np.linalg.solve, (t, b), lambda t, b: _nan(b.shape, b.dtype))
    if lower != transpose_a:
        x = x[..., ::-1, :]
    return np.ascontiguousarray(x, dtype=a.dtype)


def _solve_ref(a, b):
    x = _per_matrix(np.linalg.solve, (a, b), lambda a, b: _nan(b.shape, b.dtype))
    return x.astype(a.dtype, copy=False)


def _slogdet_ref(a):
    sign, logdet = _per_matrix(lambda a: tuple(np.linalg.slogdet(a)), (a,), None)
    return np.asarray(sign, a.dtype), np.asarray(logdet, a.dtype)


def _eigh_ref(a, *, lower):
    def fill(a):
        return _nan(a.shape[:-1], a.dtype), _nan(a.shape, a.dtype)
    w, v = _per_matrix(lambda a: tuple(np.linalg.eigh(a, UPLO="L" if lower else "U")), (a,),
                       fill)
    return w.astype(a.dtype, copy=False), v.astype(a.dtype, copy=False)


def _svd_ref(a):
    def fill(a):
        m, n = a.shape[-2:]
        k = min(m, n)
        return _nan((m, k), a.dtype), _nan((k,), a.dtype), _nan((k, n), a.dtype)
    u, s, vh = _per_matrix(lambda a: tuple(np.linalg.svd(a, full_matrices=False)), (a,), fill)
    return tuple(x.astype(a.dtype, copy=False) for x in (u, s, vh))


def _qr_ref(a):
    q, r = np.linalg.qr(a, mode="reduced")  # (Householder: never fails; NaN in, NaN out)
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


# ---- the launchers: download, compute on the host, upload -------------------------------------

def _host_launcher(prim):
    def make_launcher(device, args, params, out):
        ref, multi = prim.reference, prim.multiple_results
        avals = out if multi else (out,)

        def launch(*xs):
            hosts = [x._to_host(prim.name) for x in xs]
            res = ref(*hosts, **params)
            res = res if multi else (res,)
            ys = tuple(Array.from_numpy(device, np.asarray(r, aval.dtype).reshape(aval.shape),
                                        aval.weak_type) for r, aval in zip(res, avals))
            return ys if multi else ys[0]
        return launch
    return make_launcher


def _device_or_host_launcher(prim):
    """linalg_device's kernels where it has a Launch for these arguments, else the host."""
    host = _host_launcher(prim)

    def make_launcher(device, args, params, out):
        from . import linalg_device     # (kernels built on first use only)
        launch = linalg_device.launcher(prim.name, device, args, params, out)
        return host(device, args, params, out) if launch is None else launch
    return make_launcher


# ---- helpers of the rules (netcl operations, so that the rules are traced and nest) -----------

def _jnp():
    from .. import numpy as jnp   # (imported here: netcl.numpy imports this module)
    return jnp


def _mT(x):
    n = x.ndim
    return views.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _mm(a, b):
    return _jnp().matmul(a, b)


def _eye(n, dtype):
    return _jnp().eye(n, dtype=dtype)


def _triangle(x, lower, k=0):
    jnp = _jnp()
    return jnp.tril(x, -k) if lower else jnp.triu(x, k)


def _sym_of_triangle(x, lower):
    """The symmetric matrix that a routine reading only x's lower (upper) triangle sees."""
    return _triangle(x, lower) + _mT(_triangle(x, lower, 1))


def _phi(x, lower):
    """x's lower (upper) triangle with its diagonal halved: the map of Cholesky's derivative,
    and also its own transpose."""
    return _triangle(x, lower) - 0.5 * x * _eye(x.shape[-1], x.dtype)


def _diag(v):
    """(..., n) -> (..., n, n) with v on the diagonal."""
    return _col(v) * _eye(v.shape[-1], v.dtype)


def _row(v):
    return views.reshape(v, tuple(v.shape[:-1]) + (1, v.shape[-1]))


def _col(v):
    return views.reshape(v, tuple(v.shape) + (1,))


def _diagonal(x):
    return _jnp().diagonal(x, axis1=-2, axis2=-1)


def _gap_inverse(w):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (eigh's and svd's derivatives)."""
    eye = _eye(w.shape[-1], w.dtype)
    return 1.0 / (_row(w) - _col(w) + eye) - eye


def _live(ct):
    """A cotangent that carries something, or None."""
    return None if ct is None or is_zero(ct) else ct


def _add(a, b):
    return b if a is None else a + b


def _tri_solve(a, b, lower, transpose_a=False, unit_diagonal=False):
    return triangular_solve_p.bind(a, b, lower=lower, transpose_a=transpose_a,
                                   unit_diagonal=unit_diagonal)


def _tri_solve_right(a, b, lower, transpose_a=False):
    """x with x op(a) = b: op(a)^T x^T = b^T."""
    return _mT(_tri_solve(a, _mT(b), lower, not transpose_a))


# ---- cholesky -----------------------------------------------------------------------------

def _cholesky_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    L = cholesky_p.bind(a)
    s = _sym_of_triangle(da, True)
    y = _tri_solve(L, s, True)                          # L^-1 dS
    m = _mT(_tri_solve(L, _mT(y), True))                # L^-1 dS L^-T
    return L, _mm(L, _phi(m, True))


def _cholesky_vjp(ct, L, a):
    ct = _live(ct)
    if ct is None:
        return (None,)
    p = _phi(_mm(_mT(L), ct), True)                     # the cotangent of L^-1 dS L^-T
    z = _tri_solve(L, p, True, transpose_a=True)        # L^-T p
    s_bar = _mT(_tri_solve(L, _mT(z), True, transpose_a=True))    # L^-T p L^-1
    return (_phi(s_bar + _mT(s_bar), True),)            # onto the lower triangle read


# ---- triangular_solve ---------------------------------------------------------------------

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


# ---- solve --------------------------------------------------------------------------------

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
    d = _jnp().trace(solve_p.bind(a, da), axis1=-2, axis2=-1)
    return (sign, logdet), (Zero(ShapedArray(tuple(sign.shape), sign.dtype)), d)


def _slogdet_vjp(ct, out, a):
    c = _live(ct[1])       # (the sign is piecewise constant: its cotangent goes nowhere)
    if c is None:
        return (None,)
    eye = _jnp().broadcast_to(_eye(a.shape[-1], a.dtype), tuple(a.shape))
    inv_t = solve_p.bind(_mT(a), eye)                   # A^-T
    return (views.reshape(c, tuple(c.shape) + (1, 1)) * inv_t,)


# ---- eigh ---------------------------------------------------------------------------------

def _eigh_jvp(primals, tangents, *, lower):
    (a,), (da,) = primals, tangents
    w, v = eigh_p.bind(a, lower=lower)
    c = _mm(_mT(v), _mm(_sym_of_triangle(da, lower), v))     # V^T dS V
    return (w, v), (_diagonal(c), _mm(v, _gap_inverse(w) * c))


def _eigh_vjp(ct, out, a, *, lower):
    (w, v), (w_bar, v_bar) = out, (_live(ct[0]), _live(ct[1]))
    g = None
    if w_bar is not None:
        g = _diag(w_bar)
    if v_bar is not None:
        g = _add(g, _gap_inverse(w) * _mm(_mT(v), v_bar))
    if g is None:
        return (None,)
    s_bar = _mm(v, _mm(g, _mT(v)))
    return (_phi(s_bar + _mT(s_bar), lower),)


# ---- svd ----------------------------------------------------------------------------------

def _svd_gaps(s):
    """F_ij = 1 / (s_j^2 - s_i^2) off the diagonal, 0 on it."""
    eye = _eye(s.shape[-1], s.dtype)
    r, c = _row(s), _col(s)
    return 1.0 / ((r + c) * (r - c) + eye) - eye


def _svd_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    u, s, vh = svd_p.bind(a)
    m, n = a.shape[-2:]
    v = _mT(vh)
    ds_mat = _mm(_mT(u), _mm(da, v))                    # U^T dA V, (k, k)
    ds = _diagonal(ds_mat)
    f, r, c = _svd_gaps(s), _row(s), _col(s)
    dss = ds_mat * r                                    # dS S
    sds = c * ds_mat                                    # S dS
    du = _mm(u, f * (dss + _mT(dss)))
    dv = _mm(v, f * (sds + _mT(sds)))
    if m > n:       # the part of dA V outside U's span
        dav = _mm(da, v)
        du = du + (dav - _mm(u, _mm(_mT(u), dav))) / r
    if n > m:
        datu = _mm(_mT(da), u)
        dv = dv + (datu - _mm(v, _mm(vh, datu))) / r
    return (u, s, vh), (du, ds, _mT(dv))


def _svd_vjp(ct, out, a):
    (u, s, vh) = out
    u_bar, s_bar, vh_bar = (_live(c) for c in ct)
    m, n = a.shape[-2:]
    g = None                                            # the cotangent of U^T dA V
    if s_bar is not None:
        g = _diag(s_bar)
    if u_bar is not None or vh_bar is not None:
        f, r, c = _svd_gaps(s), _row(s), _col(s)
    if u_bar is not None:
        y = f * _mm(_mT(u), u_bar)
        g = _add(g, (y + _mT(y)) * r)
    v_bar = None if vh_bar is None else _mT(vh_bar)
    if v_bar is not None:
        z = f * _mm(vh, v_bar)
        g = _add(g, c * (z + _mT(z)))
    a_bar = None if g is None else _mm(u, _mm(g, vh))
    if u_bar is not None and m > n:
        a_bar = _add(a_bar, _mm((u_bar - _mm(u, _mm(_mT(u), u_bar))) / r, vh))
    if v_bar is not None and n > m:
        a_bar = _add(a_bar, _mm(u, _mT((v_bar - _mm(_mT(vh), _mm(vh, v_bar))) / r)))
    return (a_bar,)


# ---- qr -----------------------------------------------------------------------------------

def _qr_jvp_tall(q, r, da):
    """dQ, dR of A = QR with m >= n (r square): C = Q^T dA R^-1, dQ = Q (O - C) + dA R^-1,
    dR = (C - O) R, with O the skew-symmetric matrix of C's strict lower triangle."""
    x = _tri_solve_right(r, da, lower=False)            # dA R^-1
    c = _mm(_mT(q), x)
    low = _triangle(c, True, 1)
    o = low - _mT(low)
    return _mm(q, o - c) + x, _mm(c - o, r)


def _qr_vjp_tall(q, r, q_bar, r_bar):
    """A_bar = (Q_bar + Q copyltu(M)) R^-T, M = R R_bar^T - Q_bar^T Q, copyltu(M) the
    symmetric matrix of M's lower triangle (the transpose of _qr_jvp_tall)."""
    m_ = None
    if r_bar is not None:
        m_ = _mm(r, _mT(r_bar))
    if q_bar is not None:
        m_ = _add(m_, -_mm(_mT(q_bar), q))
    y = _mm(q, _sym_of_triangle(m_, True))
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
    # wide: A = [X | Y], X = Q U square, R = [U | Q^T Y]
    (u, _), (dx, dy), (_, y) = _split_cols(r, m), _split_cols(da, m), _split_cols(a, m)
    dq, du = _qr_jvp_tall(q, u, dx)
    dv = _mm(_mT(dq), y) + _mm(_mT(q), dy)
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
    if v_bar is not None:      # V = Q^T Y
        q_bar = _add(q_bar, _mm(y, _mT(v_bar)))
        y_bar = _mm(q, v_bar)
    x_bar = _qr_vjp_tall(q, u, q_bar, u_bar)
    if y_bar is None:
        y_bar = _jnp().zeros_like(y)
    return (_jnp().concatenate([x_bar, y_bar], axis=-1),)


# ---- batching: every operand's batch axis to the front, where LAPACK batches --------------

def _batch_rule(prim):
    def rule(args, dims, **params):
        size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
        xs = [views.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
        return prim.bind(*xs, **params), 0
    return rule


for _p, _abs, _ref, _jvp, _vjp in (
        (cholesky_p, _cholesky_abstract, _cholesky_ref, _cholesky_jvp, _cholesky_vjp),
        (triangular_solve_p, _triangular_solve_abstract, _triangular_solve_ref,
         _triangular_solve_jvp, _triangular_solve_vjp),
        (solve_p, _solve_abstract, _solve_ref, _solve_jvp, _solve_vjp),
        (slogdet_p, _slogdet_abstract, _slogdet_ref, _slogdet_jvp, _slogdet_vjp),
        (eigh_p, _eigh_abstract, _eigh_ref, _eigh_jvp, _eigh_vjp),
        (svd_p, _svd_abstract, _svd_ref, _svd_jvp, _svd_vjp),
        (qr_p, _qr_abstract, _qr_ref, _qr_jvp, _qr_vjp)):
    _p.abstract_eval = _abs
    _p.reference = _ref
    _p.make_launcher = _device_or_host_launcher(_p)
    _p.jvp = _jvp
    _p.vjp = _vjp
    _p.batch = _batch_rule(_p)


# ---- lax-level functions (jax.lax.linalg's names; float operands, equal batch shapes) -----

def _bool(v, where, name):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def cholesky(a):
    """The lower Cholesky factor L (A = L L^T) of each matrix of `a` (..., n, n), reading
    only its lower triangle; NaN where a matrix is not positive definite.

    >>> cholesky(jnp.array([[4.0, 2.0], [2.0, 3.0]]))       # [[2, 0], [1, 1.4142]]
    """
    return cholesky_p.bind(operand(a, "cholesky"))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """jax.lax.linalg.triangular_solve: x with op(a) x = b (left_side) or x op(a) = b, op(a)
    = a or a^T (transpose_a), reading a's lower or upper triangle (and a unit diagonal where
    unit_diagonal). a: (..., n, n); b: (..., n, k) left, (..., k, n) right, same batch.

    >>> triangular_solve(L, b, left_side=True, lower=True)      # L^-1 b
    """
    where = "triangular_solve"
    a, b = operand(a, where), operand(b, where)
    left_side, lower = _bool(left_side, where, "left_side"), _bool(lower, where, "lower")
    transpose_a = _bool(transpose_a, where, "transpose_a")
    _bool(conjugate_a, where, "conjugate_a")   # (real dtypes only: conjugation is nothing)
    unit_diagonal = _bool(unit_diagonal, where, "unit_diagonal")
    if left_side:
        return _tri_solve(a, b, lower, transpose_a, unit_diagonal)
    _check_matrix(where, "b", b, square=False)     # (before the transpose below)
    return _mT(_tri_solve(a, _mT(b), lower, not transpose_a, unit_diagonal))


def solve(a, b):
    """x with a x = b for a (..., n, n) and b (..., n, k) of the same batch shape.

    >>> solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.ones((2, 1)))      # [[0.5], [0.25]]
    """
    return solve_p.bind(operand(a, "solve"), operand(b, "solve"))


def slogdet(a):
    """(sign, log|det|) of each matrix of `a` (..., n, n).

    >>> slogdet(jnp.array([[1.0, 2.0], [3.0, 4.0]]))           # (-1.0, 0.6931472)
    """
    return slogdet_p.bind(operand(a, "slogdet"))


def eigh(a, *, lower=True):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix of `a`,
    reading its lower (upper) triangle. (netcl's order; jax.lax.linalg.eigh returns (v, w).)

    >>> w, v = eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))        # w: [1, 3]
    """
    return eigh_p.bind(operand(a, "eigh"), lower=_bool(lower, "eigh", "lower"))


def svd(a):
    """(u, s, vh): the reduced SVD of each matrix of `a` (..., m, n), k = min(m, n):
    u (..., m, k), s (..., k) descending, vh (..., k, n).

    >>> u, s, vh = svd(jnp.ones((3, 2)))                        # s: [2.4494898, 0]
    """
    return svd_p.bind(operand(a, "svd"))


def qr(a):
    """(q, r): the reduced QR decomposition of each matrix of `a` (..., m, n): q (..., m, k)
    with orthonormal columns, r (..., k, n) upper triangular, k = min(m, n).

    >>> q, r = qr(jnp.array([[3.0, 1.0], [4.0, 2.0]]))          # r: [[-5, -2.2], [0, 0.4]]
    """
    return qr_p.bind(operand(a, "qr"))
