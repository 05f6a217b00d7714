"""eig: the eigen-decomposition of general (non-symmetric) square matrices, computed on the
host by NumPy's LAPACK (`np.linalg.eig`, geev), as linalg_host computes eigh and svd.

`eig_p` takes a float32/float64/complex64/complex128 operand (..., n, n), every leading axis
a batch axis, and returns jax.lax.linalg.eig's results: the eigenvalues w (..., n), then the
left eigenvectors vl (..., n, n) where `compute_left_eigenvectors`, then the right ones vr
(..., n, n) where `compute_right_eigenvectors`, all complex (complex64 for float32 and
complex64 operands, complex128 for the 64-bit ones), as JAX's. Eigenvectors are columns of
unit 2-norm whose largest-magnitude component is real (LAPACK's normalisation). NumPy returns
the right ones only: the left ones are the rows of V^-1 conjugated (u_j^H A = w_j u_j^H),
normalised the same way (so they need V invertible: a defective matrix's are inaccurate;
and a real one's sign may differ from JAX's, which LAPACK computes separately).
Matrices LAPACK refuses (NaN or infinite entries) or that do not converge give NaN results,
as JAX returns NaN instead of raising.

Derivatives follow JAX's rules (jax/_src/lax/linalg.py, eig_jvp_rule), written with netcl
operations, so they run under jit and vmap and differentiate again:

  eigenvalues   dw = diag(V^-1 dA V); the vjp is its transpose, A_bar = V^-T diag(w_bar) V^T
                (the real part for a real A), so grad of a function of the eigenvalues works;
                dw does not change when V's columns are scaled, so it differentiates again
                through the eigenvector rule below whatever the normalisation (hessians of
                eigenvalues work, where JAX raises)
  eigenvectors  nondegenerate perturbation theory under geev's normalisation: with
                P = V^-1 dA V and F_ij = 1 / (w_j - w_i), U = V (F o P), dv_j = u_j + c_j v_j
                where c_j = -Re(v_j^H u_j) - i Im(u_kj) / v_kj, k the largest component of
                v_j; vl the same for A^H. Valid only for distinct eigenvalues and no tie for
                the largest component, which cannot be checked, so (as JAX) only with
                `enable_eigvec_derivs=True`; otherwise NotImplementedError. The vjp is the
                transpose of the same map (JAX's convention: no conjugation).

V^-1 times a matrix is a complex solve: solve_p takes real matrices, so the complex system
(Vr + i Vi)(Xr + i Xi) = Br + i Bi runs as the real one [[Vr, -Vi], [Vi, Vr]] [Xr; Xi] =
[Br; Bi] of twice the size (which has the same condition number).

>>> w, vr = eig(jnp.array([[0.0, 1.0], [-1.0, 0.0]]), compute_left_eigenvectors=False)
>>> w                                          # [0+1j, 0-1j], complex64
"""
import numpy as np

from ..core import dtypes
from ..core.tracing import Primitive, ShapedArray
from . import complex_ops as cx
from . import linalg_host as lh
from . import views
from .views import operand

__all__ = ["eig"]

eig_p = Primitive("eig", multiple_results=True, precision="keep_fp32")

_ACCEPTED = (dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)


def _complex_of(dtype):
    return dtype if dtypes.is_complex(dtype) else dtypes.COMPLEX_OF[dtype]


# ---- abstract evaluation ----------------------------------------------------------------------

def _eig_abstract(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
                  enable_eigvec_derivs):
    shape = tuple(a.shape)
    if a.dtype not in _ACCEPTED:
        hint = ("netcl.numpy.linalg.eig converts integers to float first, as JAX's"
                if dtypes.kind(a.dtype) in "biu" else
                "LAPACK has no half precision: a.astype(jnp.float32)")
        raise TypeError(f"eig: a must be float32, float64, complex64 or complex128, got "
                        f"{a.dtype} of shape {shape} ({hint})")
    if len(shape) < 2:
        raise ValueError(f"eig: a must have shape (..., n, n) with at least two dimensions, "
                         f"got shape {shape}")
    if shape[-1] != shape[-2]:
        raise ValueError(f"eig: a must be square in its last two dimensions, shape "
                         f"(..., n, n), got shape {shape}")
    c = _complex_of(a.dtype)
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return (ShapedArray(shape[:-1], c),) + (ShapedArray(shape, c),) * count


# ---- the NumPy reference (also what the launcher runs) ----------------------------------------

def _nan(shape, dtype):
    # NaN in both parts, as JAX's failed matrices
    return np.full(shape, complex(np.nan, np.nan), dtype)


def _normalised(v):
    """Columns of v scaled to unit 2-norm with their largest-magnitude component real and
    positive (geev's normalisation, except that geev leaves a real vector's sign as its
    algorithm gives it)."""
    with np.errstate(all="ignore"):
        v = v / np.linalg.norm(v, axis=-2, keepdims=True)
        k = np.argmax(np.abs(v), axis=-2)[..., None, :]
        top = np.take_along_axis(v, k, axis=-2)
        return v * (np.conj(top) / np.abs(top))


def _left_vectors(vr):
    """The left eigenvectors from the right ones: V^-1 A = diag(w) V^-1, so the columns vl_j
    of (V^-1)^H satisfy vl_j^H A = w_j vl_j^H (LAPACK's definition)."""
    inv = lh._per_matrix(np.linalg.inv, (vr,), lambda v: _nan(v.shape, v.dtype))
    return _normalised(np.conj(np.swapaxes(inv, -1, -2)))


def _eig_ref(a, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    c = _complex_of(a.dtype)
    n = a.shape[-1]
    if not (compute_left_eigenvectors or compute_right_eigenvectors):
        w = lh._per_matrix(np.linalg.eigvals, (a,), lambda a: _nan((n,), c))
        return (np.asarray(w, c),)

    def fill(a):
        return _nan((n,), c), _nan((n, n), c)
    w, vr = lh._per_matrix(lambda a: tuple(np.linalg.eig(a)), (a,), fill)
    w, vr = np.asarray(w, c), np.asarray(vr, c)
    out = [w]
    if compute_left_eigenvectors:
        out.append(np.asarray(_left_vectors(vr), c))
    if compute_right_eigenvectors:
        out.append(vr)
    return tuple(out)


# ---- helpers of the rules (netcl operations: traced, batched, differentiable) -----------------

def _jnp():
    return lh._jnp()


def _as_complex(x, dtype):
    """x in complex `dtype`: a real tangent through lax.complex (which has derivatives; a
    real-to-complex convert_element_type has none), a complex one as it is."""
    if dtypes.is_complex(x.dtype):
        return x
    return cx.complex(x, views.full_like(x, 0))


def _csolve(a, b):
    """a^-1 b for complex a (..., n, n) and b (..., n, k) of the same batch shape, as the
    real system [[ar, -ai], [ai, ar]] [xr; xi] = [br; bi] (solve_p is real only)."""
    jnp = _jnp()
    ar, ai, br, bi = cx.real(a), cx.imag(a), cx.real(b), cx.imag(b)
    m = jnp.concatenate([jnp.concatenate([ar, -ai], axis=-1),
                         jnp.concatenate([ai, ar], axis=-1)], axis=-2)
    x = lh.solve_p.bind(m, jnp.concatenate([br, bi], axis=-2))
    n = a.shape[-1]
    return cx.complex(x[..., :n, :], x[..., n:, :])


def _mH(x):
    return cx.conj(lh._mT(x))


def _gaps(w):
    """F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it (complex)."""
    eye = _jnp().eye(w.shape[-1], dtype=w.dtype)
    return 1.0 / (eye + lh._row(w) - lh._col(w)) - eye


def _top_mask(v):
    """Booleans (..., n, n): True at each column's largest-magnitude component (the one
    geev makes real)."""
    jnp = _jnp()
    k = jnp.argmax(jnp.abs(v), axis=-2)
    return jnp.arange(v.shape[-2])[:, None] == k[..., None, :]


def _vec_jvp(w, v, da):
    """(dw, dv) of eigenvalues w and geev-normalised eigenvectors v of A for a tangent dA
    (JAX's _eig_vec_jvp)."""
    jnp = _jnp()
    p = lh._mm(_csolve(v, da), v)                       # V^-1 dA V
    u = lh._mm(v, _gaps(w) * p)
    mask = _top_mask(v)
    zero = views.full((), 0, v.dtype)
    top_v = cx.real(jnp.sum(jnp.where(mask, v, zero), axis=-2))
    c = cx.complex(-cx.real(jnp.sum(cx.conj(v) * u, axis=-2)),
                   -cx.imag(jnp.sum(jnp.where(mask, u, zero), axis=-2)) / top_v)
    return lh._diagonal(p), u + v * lh._row(c)


def _vec_vjp(w, v, v_bar):
    """The cotangent of P = V^-1 dA V that v_bar sends back through _vec_jvp's dv (the
    transpose of that map under the pairing Re(sum x y))."""
    jnp = _jnp()
    mask = _top_mask(v)
    zero = views.full((), 0, v.dtype)
    top_v = cx.real(jnp.sum(jnp.where(mask, v, zero), axis=-2))
    c_bar = jnp.sum(v * v_bar, axis=-2)                 # dv = U + v c
    re_bar, im_bar = cx.real(c_bar), -cx.imag(c_bar)    # c = complex(re, im)
    # re = -Re(sum conj(v) U); im = -Im(sum mask U) / top_v
    u_bar = (v_bar - cx.conj(v) * lh._row(_as_complex(re_bar, v.dtype))
             + jnp.where(mask, lh._row(cx.complex(views.full_like(im_bar, 0),
                                                  im_bar / top_v)), zero))
    return _gaps(w) * lh._mm(lh._mT(v), u_bar)        # U = V (F o P)


def _no_vector_derivatives():
    raise NotImplementedError(
        "eig: derivatives of non-symmetric eigenvectors are only valid under assumptions on "
        "the input that cannot be checked (distinct eigenvalues, no tie for an eigenvector's "
        "largest component); pass enable_eigvec_derivs=True to netcl.lax.linalg.eig to opt "
        "in, or differentiate the eigenvalues alone (jnp.linalg.eigvals), as in JAX")


# ---- derivative rules ---------------------------------------------------------------------

def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    (a,), (da,) = primals, tangents
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        _no_vector_derivatives()
    # The eigenvalues' tangent diag(V^-1 dA V) does not change when V's columns are scaled,
    # so differentiating it again through any normalisation of V is exact: its vectors
    # carry derivatives (unlike JAX, whose eigvals has no second derivative).
    outs = eig_p.bind(a, compute_left_eigenvectors=left, compute_right_eigenvectors=True,
                      enable_eigvec_derivs=enable_eigvec_derivs or not (left or right))
    w, vr = outs[0], outs[-1]
    da = _as_complex(da, vr.dtype)
    if not (left or right):        # diag(V^-1 dA V) without the product's other entries
        return (w,), (_jnp().sum(_csolve(vr, da) * lh._mT(vr), axis=-1),)
    dw, dvr = _vec_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if left:
        vl = outs[1]
        _, dvl = _vec_jvp(cx.conj(w), vl, _mH(da))
        primal_out.append(vl)
        tangent_out.append(dvl)
    if right:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return tuple(primal_out), tuple(tangent_out)


def _eig_vjp(ct, out, a, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs):
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    cts = [lh._live(c) for c in ct]
    if all(c is None for c in cts):
        return (None,)
    if (left or right) and not enable_eigvec_derivs:
        _no_vector_derivatives()
    w = out[0]
    if right:
        vr = out[-1]
    else:       # (the forward pass computed what was asked: the vectors are needed here)
        # (with derivatives: see _eig_jvp)
        vr = eig_p.bind(a, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
                        enable_eigvec_derivs=True)[-1]
    w_bar, vl_bar, vr_bar = cts[0], cts[1] if left else None, cts[-1] if right else None
    p_bar = None                                        # the cotangent of V^-1 dA V
    if w_bar is not None:
        p_bar = lh._diag(w_bar)
    if vr_bar is not None:
        p_bar = lh._add(p_bar, _vec_vjp(w, vr, vr_bar))
    a_bar = None
    if p_bar is not None:                               # V^-T P_bar V^T
        a_bar = _csolve(lh._mT(vr), lh._mm(p_bar, lh._mT(vr)))
    if vl_bar is not None:      # vl: the same map of A^H (its transpose conjugates back)
        vl = out[1]
        pl_bar = _vec_vjp(cx.conj(w), vl, vl_bar)
        a_bar = lh._add(a_bar, _mH(_csolve(lh._mT(vl), lh._mm(pl_bar, lh._mT(vl)))))
    if not dtypes.is_complex(a.dtype):                  # (a real A: the real part)
        a_bar = cx.real(a_bar)
    return (a_bar,)


eig_p.abstract_eval = _eig_abstract
eig_p.reference = _eig_ref
eig_p.make_launcher = lh._host_launcher(eig_p)
eig_p.jvp = _eig_jvp
eig_p.vjp = _eig_vjp
eig_p.batch = lh._batch_rule(eig_p)


# ---- the lax-level function (jax.lax.linalg.eig) ----------------------------------------------

def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None):
    """jax.lax.linalg.eig: [w, vl, vr] for each matrix of `x` (..., n, n), float32, float64,
    complex64 or complex128: the eigenvalues, then the left eigenvectors where
    compute_left_eigenvectors and the right ones where compute_right_eigenvectors (columns,
    unit norm, largest component real), all complex. NaN where a matrix fails. Eigenvector
    derivatives need enable_eigvec_derivs=True (valid for distinct eigenvalues only);
    `implementation` may only be None or "lapack" (NumPy's LAPACK on the host).

    >>> w, vl, vr = eig(jnp.array([[2.0, 1.0], [0.0, 3.0]]))     # w: [2+0j, 3+0j]
    """
    where = "eig"
    if implementation is not None and str(getattr(implementation, "value", implementation)
                                          ).lower() != "lapack":
        raise ValueError(f"eig: implementation must be None or 'lapack' (netcl runs LAPACK "
                         f"on the host), got {implementation!r}")
    return list(eig_p.bind(
        operand(x, where),
        compute_left_eigenvectors=lh._bool(compute_left_eigenvectors, where,
                                           "compute_left_eigenvectors"),
        compute_right_eigenvectors=lh._bool(compute_right_eigenvectors, where,
                                            "compute_right_eigenvectors"),
        enable_eigvec_derivs=lh._bool(enable_eigvec_derivs, where, "enable_eigvec_derivs")))
