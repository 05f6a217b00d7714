"""Dense linear algebra computed on the host: cholesky, triangular_solve, solve, slogdet,
eigh, svd and qr (their derivative rules: linalg_host_rules).

cholesky, triangular_solve, solve, slogdet and qr (and linalg_lu's lu) run device kernels
where `linalg_device` covers them (real float32, and float64 where the device has fp64; not
the few mid-sized single matrices where the host is faster, linalg_device.HOST_WINS and
linalg_device_qr.HOST_WINS): its `launcher` is asked first. The host path, in
every other case: the launcher downloads its operands (`Array._to_host`), runs NumPy's LAPACK
bindings (`np.linalg`, which batch over leading dimensions natively) and
uploads the results (`Array.from_numpy`). The transfers are the cost: every call waits for
the queue, reads its operands back and writes its results, so a decomposition inside a jitted
step splits the step's kernels into a part before and a part after it. Device kernels for
Jacobi eigh/SVD are future work; they would replace the launchers only (qr's Householder
kernels: linalg_device_qr).
`reference` is the same NumPy computation (the fallback backend and the tables' oracle).

Conventions: matrices are the last two axes, every leading axis is a batch axis; the two
operands of triangular_solve and solve have equal batch shapes (netcl.numpy.linalg
broadcasts them first). float32, float64, complex64 and complex128: integers are refused
here (the netcl.numpy.linalg functions convert them to float first, as jax.numpy.linalg
does), float16 too (as JAX's LAPACK kernels refuse it). Complex operands always take the
host path (LAPACK's z/c routines; the device kernels are real only) and follow JAX's
lax.linalg: cholesky of Hermitian positive-definite matrices (A = L L^H, reading the lower
triangle with its diagonal taken real, as LAPACK's potrf), eigh of Hermitian matrices (real
eigenvalues, complex eigenvectors), svd's singular values real, slogdet's sign complex of
modulus 1 and its logabsdet real, qr's R with a real diagonal. Where LAPACK fails (a matrix
that is not positive definite, a singular system, an SVD or eigh that does not converge)
the failing matrices' results are NaN, as JAX returns NaN instead of raising: a jitted or
vmapped program cannot raise for one matrix of a batch.

>>> L = cholesky(a); x = triangular_solve(L, b, left_side=True, lower=True)     # L^-1 b
"""
import warnings

import numpy as np

from ..core import dtypes
from ..core.ad_util import is_zero
from ..core.array import Array
from ..core.tracing import Primitive, ShapedArray
from . import complex_ops as cx
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

_INEXACT = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def _real_dtype(dtype):
    """The dtype of a complex dtype's parts (singular values, eigh's eigenvalues, slogdet's
    logabsdet); a real dtype itself."""
    return dtypes.COMPLEX_PART.get(dtype, dtype)


# ---- abstract evaluation ----------------------------------------------------------------------

def _check_inexact(where, name, x):
    if x.dtype not in _INEXACT:
        hint = ("netcl.numpy.linalg converts integers to float first" if x.dtype.kind in "biu"
                else "compute in float32: x.astype(jnp.float32)")
        raise TypeError(f"{where}: {name} must be float32, float64, complex64 or complex128, "
                        f"got {x.dtype} ({hint})")


def _check_matrix(where, name, x, square=True):
    _check_inexact(where, name, x)
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
    batch = tuple(a.shape[:-2])    # (a complex sign of modulus 1, a real logabsdet)
    return ShapedArray(batch, a.dtype), ShapedArray(batch, _real_dtype(a.dtype))


def _eigh_abstract(a, *, lower):
    _check_matrix("eigh", "a", a)
    return ShapedArray(tuple(a.shape[:-1]), _real_dtype(a.dtype)), _same(a)


def _svd_abstract(a):
    _check_matrix("svd", "a", a, square=False)
    *batch, m, n = a.shape
    k, batch = min(m, n), tuple(batch)
    return (ShapedArray(batch + (m, k), a.dtype),
            ShapedArray(batch + (k,), _real_dtype(a.dtype)),
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
    # (complex: NaN in both parts, as JAX's failed matrices)
    return np.full(shape, complex(np.nan, np.nan) if np.dtype(dtype).kind == "c" else np.nan,
                   dtype)


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
    return np.asarray(sign, a.dtype), np.asarray(logdet, _real_dtype(a.dtype))


def _eigh_ref(a, *, lower):
    real = _real_dtype(a.dtype)

    def fill(a):
        return _nan(a.shape[:-1], real), _nan(a.shape, a.dtype)
    w, v = _per_matrix(lambda a: tuple(np.linalg.eigh(a, UPLO="L" if lower else "U")), (a,),
                       fill)
    return w.astype(real, copy=False), v.astype(a.dtype, copy=False)


def _svd_ref(a):
    real = _real_dtype(a.dtype)

    def fill(a):
        m, n = a.shape[-2:]
        k = min(m, n)
        return _nan((m, k), a.dtype), _nan((k,), real), _nan((k, n), a.dtype)
    u, s, vh = _per_matrix(lambda a: tuple(np.linalg.svd(a, full_matrices=False)), (a,), fill)
    return u.astype(a.dtype, copy=False), s.astype(real, copy=False), \
        vh.astype(a.dtype, copy=False)


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


def _is_complex(x):
    return dtypes.is_complex(x.dtype)


def _conj(x):
    """The complex conjugate; a real x itself (no operation, so real rules stay as they
    were)."""
    return cx.conj(x) if _is_complex(x) else x


def _mH(x):
    """The conjugate transpose (the transpose of a real x)."""
    return _conj(_mT(x))


def _as_complex(x, dtype):
    """Real x embedded in complex `dtype` (through lax.complex, which has derivatives);
    x itself where `dtype` is real or x already complex."""
    if not dtypes.is_complex(dtype) or _is_complex(x):
        return x
    return cx.complex(x, views.full_like(x, 0))


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


def _herm_of_triangle(x, lower):
    """The Hermitian matrix that LAPACK's potrf/heevd see reading only x's lower (upper)
    triangle: the imaginary parts of the diagonal are ignored (taken 0), so its diagonal is
    Re(diag x): phi(x) + phi(x)^H. A real x: _sym_of_triangle (the same matrix)."""
    if not _is_complex(x):
        return _sym_of_triangle(x, lower)
    p = _phi(x, lower)
    return p + _mH(p)


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


def _tri_solve(a, b, lower, transpose_a=False, unit_diagonal=False, conjugate_a=False):
    """x = op(a)^-1 b, op(a) = a or a^T (transpose_a), conjugated with conjugate_a (complex
    a: the primitive has no conjugation, so a is conjugated first; its derivative flows
    through conj)."""
    if conjugate_a:
        a = _conj(a)
    return triangular_solve_p.bind(a, b, lower=lower, transpose_a=transpose_a,
                                   unit_diagonal=unit_diagonal)


def _tri_solve_right(a, b, lower, transpose_a=False):
    """x with x op(a) = b: op(a)^T x^T = b^T."""
    return _mT(_tri_solve(a, _mT(b), lower, not transpose_a))


# ---- batching: every operand's batch axis to the front, where LAPACK batches --------------

def _batch_rule(prim):
    def rule(args, dims, **params):
        size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
        xs = [views.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
        return prim.bind(*xs, **params), 0
    return rule


for _p, _abs, _ref in (
        (cholesky_p, _cholesky_abstract, _cholesky_ref),
        (triangular_solve_p, _triangular_solve_abstract, _triangular_solve_ref),
        (solve_p, _solve_abstract, _solve_ref),
        (slogdet_p, _slogdet_abstract, _slogdet_ref),
        (eigh_p, _eigh_abstract, _eigh_ref),
        (svd_p, _svd_abstract, _svd_ref),
        (qr_p, _qr_abstract, _qr_ref)):
    _p.abstract_eval = _abs
    _p.reference = _ref
    _p.make_launcher = _device_or_host_launcher(_p)
    _p.batch = _batch_rule(_p)

from . import linalg_host_rules  # noqa: E402,F401 (registers the jvp and vjp rules)


# ---- lax-level functions (jax.lax.linalg's names; inexact operands, equal batch shapes) ---

def _bool(v, where, name):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be a bool, got {type(v).__name__} {v!r}")
    return bool(v)


def cholesky(a):
    """The lower Cholesky factor L (A = L L^H; L L^T for real a) of each matrix of `a`
    (..., n, n), reading only its lower triangle (a complex diagonal's real part); NaN where
    a matrix is not positive definite.

    >>> cholesky(jnp.array([[4.0, 2.0], [2.0, 3.0]]))       # [[2, 0], [1, 1.4142]]
    """
    return cholesky_p.bind(operand(a, "cholesky"))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """jax.lax.linalg.triangular_solve: x with op(a) x = b (left_side) or x op(a) = b, op(a)
    = a or a^T (transpose_a), conjugated where conjugate_a (a^H with both; nothing for real
    a), reading a's lower or upper triangle (and a unit diagonal where unit_diagonal).
    a: (..., n, n); b: (..., n, k) left, (..., k, n) right, same batch.

    >>> triangular_solve(L, b, left_side=True, lower=True)      # L^-1 b
    """
    where = "triangular_solve"
    a, b = operand(a, where), operand(b, where)
    left_side, lower = _bool(left_side, where, "left_side"), _bool(lower, where, "lower")
    transpose_a = _bool(transpose_a, where, "transpose_a")
    conjugate_a = _bool(conjugate_a, where, "conjugate_a")
    unit_diagonal = _bool(unit_diagonal, where, "unit_diagonal")
    if left_side:
        return _tri_solve(a, b, lower, transpose_a, unit_diagonal, conjugate_a)
    _check_matrix(where, "b", b, square=False)     # (before the transpose below)
    return _mT(_tri_solve(a, _mT(b), lower, not transpose_a, unit_diagonal, conjugate_a))


def solve(a, b):
    """x with a x = b for a (..., n, n) and b (..., n, k) of the same batch shape.

    >>> solve(jnp.array([[2.0, 0.0], [0.0, 4.0]]), jnp.ones((2, 1)))      # [[0.5], [0.25]]
    """
    return solve_p.bind(operand(a, "solve"), operand(b, "solve"))


def slogdet(a):
    """(sign, log|det|) of each matrix of `a` (..., n, n); for complex a the sign is complex
    (det / |det|) and log|det| real.

    >>> slogdet(jnp.array([[1.0, 2.0], [3.0, 4.0]]))           # (-1.0, 0.6931472)
    """
    return slogdet_p.bind(operand(a, "slogdet"))


def eigh(a, *, lower=True):
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric (complex: Hermitian)
    matrix of `a`, reading its lower (upper) triangle; the eigenvalues are real. (netcl's
    order; jax.lax.linalg.eigh returns (v, w).)

    >>> w, v = eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]))        # w: [1, 3]
    """
    return eigh_p.bind(operand(a, "eigh"), lower=_bool(lower, "eigh", "lower"))


def svd(a):
    """(u, s, vh): the reduced SVD of each matrix of `a` (..., m, n), k = min(m, n):
    u (..., m, k), s (..., k) descending (real), vh (..., k, n); a = u diag(s) vh.

    >>> u, s, vh = svd(jnp.ones((3, 2)))                        # s: [2.4494898, 0]
    """
    return svd_p.bind(operand(a, "svd"))


def qr(a):
    """(q, r): the reduced QR decomposition of each matrix of `a` (..., m, n): q (..., m, k)
    with orthonormal (unitary) columns, r (..., k, n) upper triangular (a real diagonal),
    k = min(m, n).

    >>> q, r = qr(jnp.array([[3.0, 1.0], [4.0, 2.0]]))          # r: [[-5, -2.2], [0, 0.4]]
    """
    return qr_p.bind(operand(a, "qr"))
