"""The Hessenberg and Schur forms and column-pivoted QR's order, computed on the host, and
rsf2csf (netcl operations): the pieces behind netcl.scipy.linalg's schur, hessenberg,
rsf2csf and qr(pivoting=True), and behind sqrtm, funm and solve_sylvester
(linalg_matrix_functions.py).

NumPy exposes no LAPACK routine for the Hessenberg or Schur forms (gehrd, gees) or for
column-pivoted QR (geqp3), and SciPy is no dependency of netcl, so those three run here as
NumPy algorithms on the host, through netcl.pure_callback (so they work eagerly, under jit,
where the call downloads its operands when the compiled program reaches it, and under vmap),
in float64/complex128 whatever the operand's precision:

  hessenberg   Householder reduction with LAPACK's gehrd conventions (xLARFG reflectors,
               Q = H(0) H(1) ...; complex subdiagonals made real), so H and Q agree with
               JAX's to rounding
  schur        real: Francis' implicit double-shift QR on the Hessenberg form, with dlahqr's
               exceptional shifts, and every 2x2 block of a complex pair standardized as
               LAPACK's dlanv2 does (equal diagonal entries, b c < 0); complex: the single-
               shift QR with Wilkinson shifts and Givens rotations. A Schur form is unique
               only up to the order of the eigenvalues on its diagonal and the phases of Z's
               columns, which may differ from LAPACK's; Z T Z^H = a holds to rounding. A
               matrix that does not converge in 30 max(10, n) steps gives NaN (as JAX's
               LAPACK failures do)
  pivoting     the columns' order of geqp3 (the largest remaining column norm first); the
               factors themselves are netcl's QR of the permuted matrix (differentiable)

Like JAX's (whose LAPACK kernels have no derivative rules), the host parts are not
differentiable: grad through them raises pure_callback's TypeError naming the host function.

>>> t, z = schur_of(a, complex_output=False)       # (netcl.scipy.linalg.schur checks a)
"""
import math

import numpy as np

from ..core import dtypes
from ..core.tracing import ConcretizationError
from ..primitives import linalg_host as lh


def _jnp():
    from .. import numpy as jnp     # (netcl.numpy must be imported first; it is, by then)
    return jnp


def _concrete(x):
    """x's value as a NumPy array where it has one (eagerly, and under eager grad), else None
    (under jit or vmap)."""
    try:
        return np.asarray(x)
    except (TypeError, ConcretizationError):
        return None


# ---- host algorithms (NumPy; one matrix at a time) ----------------------------------------------

def _larfg(x):
    """LAPACK's xLARFG: (v, tau, beta) with v[0] = 1 and (I - tau v v^H)^H x = beta e_1,
    beta real."""
    alpha = x[0]
    xnorm = float(np.linalg.norm(x[1:]))
    v = np.zeros_like(x)
    v[0] = 1
    if xnorm == 0.0 and np.imag(alpha) == 0:
        return v, 0.0, alpha
    beta = -math.copysign(math.hypot(abs(alpha), xnorm), float(np.real(alpha)))
    v[1:] = x[1:] / (alpha - beta)
    return v, (beta - alpha) / beta, beta


def _hessenberg1(a):
    """(H, Q) with a = Q H Q^H, H upper Hessenberg (gehrd's reflectors and conventions)."""
    h = a.copy()
    n = h.shape[0]
    q = np.eye(n, dtype=h.dtype)
    for i in range(n - 1):      # (the last, length-1 step makes a complex subdiagonal real)
        v, tau, beta = _larfg(h[i + 1:, i])
        if tau == 0:
            continue
        vh = v.conj()
        h[:, i + 1:] -= tau * np.outer(h[:, i + 1:] @ v, vh)          # H <- H H(i)
        h[i + 1:, i:] -= np.conj(tau) * np.outer(v, vh @ h[i + 1:, i:])  # H <- H(i)^H H
        h[i + 2:, i] = 0
        h[i + 1, i] = beta
        q[:, i + 1:] -= tau * np.outer(q[:, i + 1:] @ v, vh)
    return h, q


def _dlanv2(a, b, c, d):
    """LAPACK's dlanv2: the Schur factorization of a real 2x2 block, [[a, b], [c, d]] =
    [[cs, -sn], [sn, cs]] [[aa, bb], [cc, dd]] [[cs, sn], [-sn, cs]], with cc = 0 (real
    eigenvalues) or aa = dd and bb cc < 0 (a complex pair). Returns aa, bb, cc, dd, cs, sn."""
    eps = np.finfo(np.float64).eps
    sign = lambda x: math.copysign(1.0, x)  # noqa: E731 (Fortran's SIGN(ONE, x))
    if c == 0:
        return a, b, c, d, 1.0, 0.0
    if b == 0:              # swap rows and columns
        return d, -c, 0.0, a, 0.0, 1.0
    if a - d == 0 and sign(b) != sign(c):
        return a, b, c, d, 1.0, 0.0
    temp = a - d
    p = 0.5 * temp
    bcmax = max(abs(b), abs(c))
    bcmis = min(abs(b), abs(c)) * sign(b) * sign(c)
    scale = max(abs(p), bcmax)
    z = p / scale * p + bcmax / scale * bcmis
    if z >= 4.0 * eps:      # real eigenvalues
        z = p + math.copysign(math.sqrt(scale) * math.sqrt(z), p)
        a = d + z
        d = d - bcmax / z * bcmis
        tau = math.hypot(c, z)
        return a, b - c, 0.0, d, z / tau, c / tau
    # a complex pair, or real eigenvalues nearly equal: make the diagonal entries equal
    sigma = b + c
    tau = math.hypot(sigma, temp)
    cs = math.sqrt(0.5 * (1.0 + abs(sigma) / tau))
    sn = -(p / (tau * cs)) * sign(sigma)
    aa, bb = a * cs + b * sn, -a * sn + b * cs
    cc, dd = c * cs + d * sn, -c * sn + d * cs
    a, b = aa * cs + cc * sn, bb * cs + dd * sn
    c, d = -aa * sn + cc * cs, -bb * sn + dd * cs
    temp = 0.5 * (a + d)
    a = d = temp
    if c != 0:
        if b != 0:
            if sign(b) == sign(c):     # real eigenvalues after all: triangular
                sab, sac = math.sqrt(abs(b)), math.sqrt(abs(c))
                p = math.copysign(sab * sac, c)
                tau = 1.0 / math.sqrt(abs(b + c))
                a, d = temp + p, temp - p
                b, c = b - c, 0.0
                cs1, sn1 = sab * tau, sac * tau
                cs, sn = cs * cs1 - sn * sn1, cs * sn1 + sn * cs1
        else:
            b, c, cs, sn = -c, 0.0, -sn, cs
    return a, b, c, d, cs, sn


def _rot(x, y, cs, sn):
    """BLAS drot on two rows or columns, in place."""
    x[...], y[...] = cs * x + sn * y, cs * y - sn * x


def _deflation_point(h, p, hnorm, eps):
    """The start l of the unreduced block ending at row p (a negligible h[l, l-1] set to 0)."""
    for l in range(p, 0, -1):
        s = abs(h[l - 1, l - 1]) + abs(h[l, l])
        if abs(h[l, l - 1]) <= eps * (s if s != 0 else hnorm):
            h[l, l - 1] = 0
            return l
    return 0


def _francis_step(h, z, l, p, its):
    """One implicit double-shift QR step on the block l..p of the real Hessenberg h
    (transformations applied to all of h's rows and columns, and to z)."""
    if its in (10, 20):     # dlahqr's exceptional shifts, against cycling
        s = abs(h[l + 1, l]) + abs(h[l + 2, l + 1]) if its == 10 else \
            abs(h[p, p - 1]) + abs(h[p - 1, p - 2])
        h11 = 0.75 * s + (h[l, l] if its == 10 else h[p, p])
        h12, h21, h22 = -0.4375 * s, s, h11
    else:
        h11, h12, h21, h22 = h[p - 1, p - 1], h[p - 1, p], h[p, p - 1], h[p, p]
    tr, det = h11 + h22, h11 * h22 - h12 * h21
    # the first column of (H - s1)(H - s2), s1 and s2 the trailing block's eigenvalues
    x = h[l, l] * h[l, l] + h[l, l + 1] * h[l + 1, l] - tr * h[l, l] + det
    y = h[l + 1, l] * (h[l, l] + h[l + 1, l + 1] - tr)
    w = h[l + 1, l] * h[l + 2, l + 1]
    for k in range(l, p):
        size = 3 if k < p - 1 else 2
        v, tau, _ = _larfg(np.array([x, y, w][:size]))
        if tau != 0:
            r = max(l, k - 1)
            blk = h[k:k + size, r:]
            blk -= tau * np.outer(v, v @ blk)
            rr = min(k + 3, p)
            blk = h[:rr + 1, k:k + size]
            blk -= tau * np.outer(blk @ v, v)
            zb = z[:, k:k + size]
            zb -= tau * np.outer(zb @ v, v)
        if k > l:
            h[k + 1:k + size, k - 1] = 0        # (the bulge, chased one column on)
        if k < p - 1:
            x, y = h[k + 1, k], h[k + 2, k]
            w = h[k + 3, k] if k < p - 2 else 0.0


def _real_schur1(a):
    """(T, Z) with a = Z T Z^T, T quasi upper triangular, its 2x2 blocks standardized."""
    n = a.shape[0]
    h, z = _hessenberg1(a)
    eps = np.finfo(np.float64).eps
    hnorm = max(float(np.abs(h).sum()), np.finfo(np.float64).tiny)
    p, its, total, itmax = n - 1, 0, 0, 30 * max(10, n)
    while p > 0:
        l = _deflation_point(h, p, hnorm, eps)
        if l == p:
            p, its = p - 1, 0
            continue
        if l == p - 1:
            m = p - 1
            aa, bb, cc, dd, cs, sn = _dlanv2(h[m, m], h[m, p], h[p, m], h[p, p])
            h[m, m], h[m, p], h[p, m], h[p, p] = aa, bb, cc, dd
            _rot(h[m, p + 1:], h[p, p + 1:], cs, sn)
            _rot(h[:m, m], h[:m, p], cs, sn)
            _rot(z[:, m], z[:, p], cs, sn)
            p, its = p - 2, 0
            continue
        if total >= itmax:
            return np.full_like(a, np.nan), np.full_like(a, np.nan)
        its, total = its + 1, total + 1
        _francis_step(h, z, l, p, its)
    h[np.tril_indices(n, -2)] = 0
    return h, z


def _complex_schur1(a):
    """(T, Z) with a = Z T Z^H, T upper triangular (complex)."""
    n = a.shape[0]
    h, z = _hessenberg1(a.astype(np.complex128))
    eps = np.finfo(np.float64).eps
    hnorm = max(float(np.abs(h).sum()), np.finfo(np.float64).tiny)
    p, its, total, itmax = n - 1, 0, 0, 30 * max(10, n)
    while p > 0:
        l = _deflation_point(h, p, hnorm, eps)
        if l == p:
            p, its = p - 1, 0
            continue
        if total >= itmax:
            return np.full_like(h, np.nan), np.full_like(h, np.nan)
        its, total = its + 1, total + 1
        if its in (10, 20):     # zlahqr's exceptional shifts
            k = l if its == 10 else p
            mu = 0.75 * abs(h[k + 1, k].real if its == 10 else h[p, p - 1].real) + h[k, k]
        else:                   # Wilkinson's: the trailing block's eigenvalue nearer h[p, p]
            a11, a12, a21, a22 = h[p - 1, p - 1], h[p - 1, p], h[p, p - 1], h[p, p]
            half = 0.5 * (a11 - a22)
            root = np.sqrt(half * half + a12 * a21)
            mu = min((a22 + half + root, a22 + half - root), key=lambda e: abs(e - a22))
        x, y = h[l, l] - mu, h[l + 1, l]
        for k in range(l, p):
            nrm = math.hypot(abs(x), abs(y))
            if nrm == 0:
                c, s = 1.0, 0.0
            elif x == 0:
                c, s = 0.0, np.conj(y) / abs(y)
            else:
                c, s = abs(x) / nrm, (x / abs(x)) * np.conj(y) / nrm
            g = np.array([[c, s], [-np.conj(s), c]])
            r = max(l, k - 1)
            h[k:k + 2, r:] = g @ h[k:k + 2, r:]
            rr = min(k + 2, p)
            h[:rr + 1, k:k + 2] = h[:rr + 1, k:k + 2] @ g.conj().T
            z[:, k:k + 2] = z[:, k:k + 2] @ g.conj().T
            if k > l:
                h[k + 1, k - 1] = 0
            if k < p - 1:
                x, y = h[k + 1, k], h[k + 2, k]
    h[np.tril_indices(n, -1)] = 0
    return h, z


def _pivots1(a):
    """geqp3's column order of a (m, n): at each step the remaining column of largest norm
    (after the previous Householder steps) first, the first of equal ones."""
    a = a.copy()
    m, n = a.shape
    perm = np.arange(n)
    for k in range(min(m, n)):
        norms = np.linalg.norm(a[k:, k:], axis=0)
        j = k + int(np.argmax(norms))
        if j != k:
            a[:, [k, j]] = a[:, [j, k]]
            perm[[k, j]] = perm[[j, k]]
        v, tau, _ = _larfg(a[k:, k])
        a[k:, k:] -= np.conj(tau) * np.outer(v, v.conj() @ a[k:, k:])
    return perm.astype(np.int32)


def _each(fn, x, wide, outs):
    """fn on every matrix of x (..., m, n) computed in float64 or complex128 (`wide`), its
    results stacked and cast to `outs` (a dtype per result)."""
    batch = x.shape[:-2]
    x = np.asarray(x).astype(wide)
    res = [fn(x[i]) for i in np.ndindex(*batch)] if batch else [fn(x)]
    res = [r if isinstance(r, tuple) else (r,) for r in res]
    return tuple(np.stack([r[k] for r in res]).reshape(batch + res[0][k].shape).astype(dt)
                 for k, dt in enumerate(outs))


# The host functions pure_callback calls (module level: jit's cache keys on them)
def _schur_real_host(a):
    return _each(_real_schur1, a, np.float64, (a.dtype, a.dtype))


def _schur_complex_host(a):
    return _each(_complex_schur1, a, np.complex128, (a.dtype, a.dtype))


def _hessenberg_host(a):
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return _each(_hessenberg1, a, wide, (a.dtype, a.dtype))


def _pivots_host(a):
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    return _each(_pivots1, a, wide, (np.int32,))


_schur_real_host.__name__ = "scipy.linalg.schur (host, real)"
_schur_complex_host.__name__ = "scipy.linalg.schur (host, complex)"
_hessenberg_host.__name__ = "scipy.linalg.hessenberg (host)"
_pivots_host.__name__ = "scipy.linalg.qr (host, column pivoting)"


def _host(fn, outs, a):
    """fn(host copy of a) through netcl.pure_callback (outs: (shape, dtype) pairs), under a
    custom_jvp whose rule raises: grad of it says which function is not differentiable (as
    JAX's NotImplementedError does), instead of pure_callback's advice to give it a rule."""
    from ..api_extras import ShapeDtypeStruct
    from ..callbacks import pure_callback
    from ..transforms.custom import custom_jvp
    specs = tuple(ShapeDtypeStruct(s, d) for s, d in outs)
    call = custom_jvp(lambda a: pure_callback(fn, specs, a, vmap_method="broadcast_all"))

    def no_derivative(primals, tangents):
        name = fn.__name__.split(" ")[0]
        users = " (sqrtm, funm and solve_sylvester start from it)" if "schur" in name else ""
        raise NotImplementedError(f"{name}: differentiation is not implemented{users}: its "
                                  "host algorithm has no derivative rule, as JAX's LAPACK "
                                  "kernel has none")
    call.defjvp(no_derivative)
    return call(a)


def schur_of(a, complex_output):
    """(T, Z) of a checked inexact a (..., n, n); complex_output casts a real a to complex
    first (scipy's output='complex'); complex a always gives the complex form."""
    jnp = _jnp()
    if complex_output and not dtypes.is_complex(a.dtype):
        a = a.astype(dtypes.COMPLEX_OF[a.dtype])
    fn = _schur_complex_host if dtypes.is_complex(a.dtype) else _schur_real_host
    shape = tuple(a.shape)
    t, z = _host(fn, ((shape, a.dtype), (shape, a.dtype)), a)
    return jnp.asarray(t), jnp.asarray(z)


def hessenberg_of(a):
    shape = tuple(a.shape)
    return _host(_hessenberg_host, ((shape, a.dtype), (shape, a.dtype)), a)


def pivots_of(a):
    return _host(_pivots_host, ((tuple(a.shape[:-2]) + (a.shape[-1],), np.int32),), a)[0]


# ---- rsf2csf (netcl operations, as JAX's) ------------------------------------------------------

def rsf2csf_of(T, Z):
    """The complex Schur form of the real Schur form (T, Z), both complex (..., n, n): each
    2x2 block's subdiagonal entry removed by a Givens rotation built from the block's
    eigenvalue of positive imaginary part (the one LAPACK lists first), as JAX's."""
    jnp = _jnp()
    n = T.shape[-1]
    eps = float(dtypes.finfo(lh._real_dtype(T.dtype)).eps)
    for m in range(n - 1, 0, -1):
        a, b = T[..., m - 1, m - 1], T[..., m - 1, m]
        c, d = T[..., m, m - 1], T[..., m, m]
        half = 0.5 * (a - d)
        root = jnp.sqrt(half * half + b * c)
        root = jnp.where(jnp.imag(root) < 0, -root, root)
        mu = half + root            # (the eigenvalue minus d)
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2).astype(T.dtype)
        cs, sn = mu / r, c / r
        split = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
        one, zero = jnp.ones_like(cs), jnp.zeros_like(cs)
        cs, sn = jnp.where(split, cs, one), jnp.where(split, sn, zero)
        g = jnp.stack([jnp.stack([jnp.conj(cs), sn], -1), jnp.stack([-sn, cs], -1)], -2)
        gh = jnp.conj(jnp.swapaxes(g, -1, -2))
        T = T.at[..., m - 1:m + 1, m - 1:].set(g @ T[..., m - 1:m + 1, m - 1:])
        T = T.at[..., :m + 1, m - 1:m + 1].set(T[..., :m + 1, m - 1:m + 1] @ gh)
        Z = Z.at[..., :, m - 1:m + 1].set(Z[..., :, m - 1:m + 1] @ gh)
        T = T.at[..., m, m - 1].set(0)
    return T, Z

