"""netcl.scipy.optimize: jax.scipy.optimize's minimize (BFGS, and JAX's experimental L-BFGS)
and its OptimizeResults record.

A port of JAX's solvers, step for step, written with netcl operations: BFGS is Nocedal and
Wright's algorithm 6.1 (the inverse Hessian updated in place of the Hessian), L-BFGS their
algorithm 7.5 (two-loop recursion over the last `maxcor` corrections, generalized to complex
variables as Sorber et al. do); both search along each direction with the line search of
their algorithms 3.5 and 3.6 (strong Wolfe conditions with c1 = 1e-4, c2 = 0.9; zoom by
cubic, then quadratic interpolation, then bisection), with JAX's choices: the initial step
min(1, 1.01 * 2 (f_k - f_{k-1}) / phi'(0)), doubling until the minimum is bracketed, at most
30 zoom steps, a zoom interval below 1e-5 (32-bit) or 1e-10 (64-bit) a failure, a step under
1e-8 raised to 1e-8 in 32-bit precision. The loops are netcl.lax.while_loop, so minimize runs
eagerly (plain Python loops over eager operations) and under netcl.jit (staged loops), as
JAX's does; gradients come from netcl.value_and_grad of `fun`.

Results and status codes are JAX's: BFGS status 0 converged, 1 maxiter reached, 2 + the
line search's status (3: zoom failed, 5: the line search's maxiter) where the line search
failed, -1 otherwise; L-BFGS 0 converged, 1 maxiter, 2 maxfun, 3 maxgrad, 4 no progress
(ftol), 5 line search failed.

>>> import netcl.scipy.optimize as opt
>>> r = opt.minimize(lambda x: jnp.sum((x - 3.0) ** 2), jnp.zeros(2), method="BFGS")
>>> r.x, r.success                                 # [3., 3.], True
"""
from typing import NamedTuple

import numpy as np

from .. import lax
from ..core import dtypes
from ..numpy._errors import public

__all__ = ["minimize", "OptimizeResults"]


def _jnp():
    from .. import numpy as jnp
    return jnp


def _value_and_grad(f):
    from ..transforms.ad import value_and_grad
    return value_and_grad(f)


class OptimizeResults(NamedTuple):
    """What minimize returns (jax.scipy.optimize.OptimizeResults):

    x         the final point
    success   True where the solver converged (and its line search did not fail)
    status    the solver's end state (see the module docstring)
    fun       fun at x
    jac       the gradient at x
    hess_inv  BFGS's final inverse-Hessian estimate (None for L-BFGS)
    nfev      objective evaluations
    njev      gradient evaluations
    nit       iterations
    """
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def _dot(a, b):
    jnp = _jnp()
    return jnp.sum(a * b, axis=-1)


def _norm(x, ord):  # noqa: A002 (numpy's name)
    jnp = _jnp()
    return jnp.linalg.norm(x, ord=ord)


# ---- line search (Nocedal and Wright, algorithms 3.5 and 3.6; JAX's line_search) -------------

def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa), (b, fb), (c, fc) with slope fpa at a."""
    jnp = _jnp()
    C = fpa
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1, d2 = fb - fa - C * db, fc - fa - C * dc
    A = (dc ** 2 * d1 - db ** 2 * d2) / denom
    B = (-dc ** 3 * d1 + db ** 3 * d2) / denom
    radical = B * B - 3.0 * A * C
    return a + (-B + jnp.sqrt(radical)) / (3.0 * A)


def _quadmin(a, fa, fpa, b, fb):
    """The minimizer of the quadratic through (a, fa), (b, fb) with slope fpa at a."""
    db = b - a
    B = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * B)


def _replace(state, bit, **new):
    """state with the fields in `new` taken where `bit` holds (a select, as JAX's
    _binary_replace: the loops stay branch-free, so they stage and vectorize)."""
    jnp = _jnp()
    return state._replace(**{k: jnp.where(bit, v, getattr(state, k)) for k, v in new.items()})


class _ZoomState(NamedTuple):
    done: object
    failed: object
    j: object
    a_lo: object
    phi_lo: object
    dphi_lo: object
    a_hi: object
    phi_hi: object
    dphi_hi: object
    a_rec: object
    phi_rec: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object
    nfev: object
    ngev: object


def _zoom(restricted, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi,
          g_0, pass_through):
    """Algorithm 3.6: shrink [a_lo, a_hi] until a step satisfies the strong Wolfe
    conditions (cubic interpolation where it lands well inside, else quadratic, else
    bisection). Nothing happens where pass_through holds."""
    jnp = _jnp()
    dt = phi_lo.dtype
    tiny = 1e-5 if dtypes.finfo(dt).bits < 64 else 1e-10
    state = _ZoomState(
        done=jnp.asarray(False), failed=jnp.asarray(False), j=jnp.asarray(0),
        a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo, a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0, phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=jnp.asarray(1.0, dtype=dt), phi_star=phi_lo, dphi_star=dphi_lo, g_star=g_0,
        nfev=jnp.asarray(0), ngev=jnp.asarray(0))
    delta1, delta2 = 0.2, 0.1

    def body(s):
        dalpha = s.a_hi - s.a_lo
        a, b = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        cchk, qchk = delta1 * dalpha, delta2 * dalpha
        # an interval this small stops the search (and, the Wolfe conditions not holding,
        # the minimization)
        s = s._replace(failed=s.failed | (dalpha <= tiny))
        a_cubic = _cubicmin(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cubic = (s.j > 0) & (a_cubic > a + cchk) & (a_cubic < b - cchk)
        a_quad = _quadmin(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = (~use_cubic) & (a_quad > a + qchk) & (a_quad < b - qchk)
        a_j = jnp.where(use_cubic, a_cubic, s.a_rec)
        a_j = jnp.where(use_quad, a_quad, a_j)
        a_j = jnp.where((~use_cubic) & (~use_quad), (s.a_lo + s.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = restricted(a_j)
        phi_j, dphi_j = phi_j.astype(dt), dphi_j.astype(dt)
        g_j = g_j.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= s.phi_lo)
        star_to_j = wolfe_two(dphi_j) & (~hi_to_j)
        hi_to_lo = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & (~hi_to_j) & (~star_to_j)
        lo_to_j = (~hi_to_j) & (~star_to_j)
        s = _replace(s, hi_to_j, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi,
                     phi_rec=s.phi_hi)
        s = _replace(s, star_to_j, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j)
        s = s._replace(done=star_to_j | s.done)
        s = _replace(s, hi_to_lo, a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                     a_rec=s.a_hi, phi_rec=s.phi_hi)
        s = _replace(s, lo_to_j & ~hi_to_lo, a_rec=s.a_lo, phi_rec=s.phi_lo)
        s = _replace(s, lo_to_j, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        s = s._replace(j=s.j + 1)
        # (a higher cutoff than scipy's 10, as JAX's)
        return s._replace(failed=s.failed | (s.j >= 30))

    return lax.while_loop(lambda s: (~s.done) & (~pass_through) & (~s.failed), body, state)


class _LineSearchState(NamedTuple):
    done: object
    failed: object
    i: object
    a_i1: object
    phi_i1: object
    dphi_i1: object
    nfev: object
    ngev: object
    a_star: object
    phi_star: object
    dphi_star: object
    g_star: object


class _LineSearchResults(NamedTuple):
    failed: object
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object
    f_k: object
    g_k: object
    status: object


def _line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                 maxiter=20):
    """Algorithm 3.5 (JAX's line_search): a step a_k along the descent direction pk from xk
    satisfying the strong Wolfe conditions, found by doubling the step until the minimum is
    bracketed, then zooming."""
    jnp = _jnp()
    vg = _value_and_grad(f)

    def restricted(t):
        t = jnp.asarray(t, dtype=pk.dtype)
        phi, g = vg(xk + t * pk)
        return phi, jnp.real(_dot(g, pk)), g

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = restricted(0.0)
    else:
        phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
    dt = phi_0.dtype
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(candidate > 1, jnp.asarray(1.0, dt), candidate)
    else:
        start = jnp.asarray(1.0, dt)

    def wolfe_one(a_i, phi_i):      # (the negation of the sufficient-decrease condition)
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):          # (the curvature condition)
        return jnp.abs(dphi_i) <= -c2 * dphi_0

    fresh = old_fval is None or gfk is None
    state = _LineSearchState(
        done=jnp.asarray(False), failed=jnp.asarray(False),
        # (from 1, as Nocedal and Wright; scipy starts at 0: scipy issue 12157)
        i=jnp.asarray(1), a_i1=jnp.asarray(0.0, dt), phi_i1=phi_0, dphi_i1=dphi_0,
        nfev=jnp.asarray(1 if fresh else 0), ngev=jnp.asarray(1 if fresh else 0),
        a_star=jnp.asarray(0.0, dt), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def body(s):
        a_i = jnp.where(s.i == 1, start, s.a_i1 * 2.0)
        phi_i, dphi_i, g_i = restricted(a_i)
        phi_i, dphi_i = phi_i.astype(dt), dphi_i.astype(dt)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
        to_i = wolfe_two(dphi_i) & (~to_zoom1)
        to_zoom2 = (dphi_i >= 0.0) & (~to_zoom1) & (~to_i)
        z1 = _zoom(restricted, wolfe_one, wolfe_two, s.a_i1, s.phi_i1, s.dphi_i1, a_i, phi_i,
                   dphi_i, gfk, ~to_zoom1)
        s = s._replace(nfev=s.nfev + z1.nfev, ngev=s.ngev + z1.ngev)
        z2 = _zoom(restricted, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, s.a_i1, s.phi_i1,
                   s.dphi_i1, gfk, ~to_zoom2)
        s = s._replace(nfev=s.nfev + z2.nfev, ngev=s.ngev + z2.ngev)
        s = s._replace(done=to_zoom1 | s.done, failed=(to_zoom1 & z1.failed) | s.failed)
        s = _replace(s, to_zoom1, a_star=z1.a_star, phi_star=z1.phi_star,
                     dphi_star=z1.dphi_star, g_star=z1.g_star)
        s = s._replace(done=to_i | s.done)
        s = _replace(s, to_i, a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i)
        s = s._replace(done=to_zoom2 | s.done, failed=(to_zoom2 & z2.failed) | s.failed)
        s = _replace(s, to_zoom2, a_star=z2.a_star, phi_star=z2.phi_star,
                     dphi_star=z2.dphi_star, g_star=z2.g_star)
        return s._replace(i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda s: (~s.done) & (s.i <= maxiter) & (~s.failed), body, state)
    status = jnp.where(state.failed, 1, jnp.where(state.i > maxiter, 3, 0))
    # a step this small would leave the point where it is in 32-bit precision
    a_k = state.a_star
    if dtypes.finfo(a_k.dtype).bits != 64:
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return _LineSearchResults(failed=state.failed | (~state.done), nit=state.i - 1,
                              nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=a_k,
                              f_k=state.phi_star, g_k=state.g_star, status=status)


# ---- BFGS (Nocedal and Wright, algorithm 6.1; JAX's minimize_bfgs) ---------------------------

class _BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    jnp = _jnp()
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d = x0.shape[0]
    f_0, g_0 = _value_and_grad(fun)(x0)
    state = _BFGSResults(
        converged=_norm(g_0, norm) < gtol, failed=jnp.asarray(False), k=jnp.asarray(0),
        nfev=jnp.asarray(1), ngev=jnp.asarray(1), nhev=jnp.asarray(0), x_k=x0, f_k=f_0,
        g_k=g_0, H_k=jnp.eye(d, dtype=x0.dtype), old_old_fval=f_0 + _norm(g_0, 2) / 2,
        status=jnp.asarray(0), line_search_status=jnp.asarray(0))

    def cond(s):
        return (~s.converged) & (~s.failed) & (s.k < maxiter)

    def body(s):
        p_k = -(s.H_k @ s.g_k)
        ls = _line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                          gfk=s.g_k, maxiter=line_search_maxiter)
        s = s._replace(nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
                       line_search_status=ls.status)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - s.g_k
        rho_k = 1.0 / _dot(y_k, s_k)
        w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * (s_k[:, None] * y_k[None, :])
        H = w @ s.H_k @ w.T + rho_k * (s_k[:, None] * s_k[None, :])
        H = jnp.where(jnp.isfinite(rho_k), H, s.H_k)   # (no update where y_k . s_k = 0)
        return s._replace(converged=_norm(ls.g_k, norm) < gtol, k=s.k + 1, x_k=s.x_k + s_k,
                          f_k=ls.f_k, g_k=ls.g_k, H_k=H, old_old_fval=s.f_k)

    state = lax.while_loop(cond, body, state)
    status = jnp.where(state.converged, 0, jnp.where(
        state.k == maxiter, 1, jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)


# ---- L-BFGS (Nocedal and Wright, algorithm 7.5; JAX's _minimize_lbfgs) ----------------------

class _LBFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    x_k: object
    f_k: object
    g_k: object
    s_history: object
    y_history: object
    rho_history: object
    gamma: object
    status: object
    ls_status: object


def _two_loop_recursion(s):
    """The search direction -H_k g_k from the stored corrections (two-loop recursion)."""
    jnp = _jnp()
    dt = s.rho_history.dtype
    his = s.rho_history.shape[0]
    curr = jnp.where(s.k < his, s.k, his)
    q = -jnp.conj(s.g_k)
    a_his = jnp.zeros_like(s.rho_history)

    def first(j, carry):
        q, a_his = carry
        i = his - 1 - j
        a_i = s.rho_history[i] * jnp.real(_dot(jnp.conj(s.s_history[i]), q)).astype(dt)
        return q - a_i * jnp.conj(s.y_history[i]), a_his.at[i].set(a_i)
    q, a_his = lax.fori_loop(0, curr, first, (q, a_his))
    q = s.gamma * q

    def second(j, q):
        i = his - curr + j
        b_i = s.rho_history[i] * jnp.real(_dot(s.y_history[i], q)).astype(dt)
        return q + (a_his[i] - b_i) * s.s_history[i]
    return lax.fori_loop(0, curr, second, q)


def _lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
           gtol=1e-05, maxfun=None, maxgrad=None, maxls=20):
    jnp = _jnp()
    d = x0.shape[0]
    dt = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200        # (at least one way to stop)
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad
    f_0, g_0 = _value_and_grad(fun)(x0)
    state = _LBFGSResults(
        converged=jnp.asarray(False), failed=jnp.asarray(False), k=jnp.asarray(0),
        nfev=jnp.asarray(1), ngev=jnp.asarray(1), x_k=x0, f_k=f_0, g_k=g_0,
        s_history=jnp.zeros((maxcor, d), dtype=dt), y_history=jnp.zeros((maxcor, d), dtype=dt),
        rho_history=jnp.zeros((maxcor,), dtype=dt), gamma=jnp.asarray(1.0, dtype=dt),
        status=jnp.asarray(0), ls_status=jnp.asarray(0))

    def roll_in(history, new):
        return jnp.concatenate([history[1:], new[None]], axis=0)

    def body(s):
        p_k = _two_loop_recursion(s)
        ls = _line_search(fun, s.x_k, p_k, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        s_k = ls.a_k.astype(p_k.dtype) * p_k
        y_k = ls.g_k - s.g_k
        rho_inv = jnp.real(_dot(y_k, s_k))
        rho_k = (1.0 / rho_inv).astype(y_k.dtype)
        gamma = rho_inv / jnp.real(_dot(jnp.conj(y_k), y_k))
        status = jnp.asarray(0)
        status = jnp.where(s.f_k - ls.f_k < ftol, 4, status)
        status = jnp.where(s.ngev >= maxgrad, 3, status)
        status = jnp.where(s.nfev >= maxfun, 2, status)
        status = jnp.where(s.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = _norm(ls.g_k, norm) < gtol
        return s._replace(
            converged=converged, failed=(status > 0) & (~converged), k=s.k + 1,
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=(s.x_k + s_k).astype(dt),
            f_k=ls.f_k.astype(s.f_k.dtype), g_k=ls.g_k.astype(s.g_k.dtype),
            s_history=roll_in(s.s_history, s_k), y_history=roll_in(s.y_history, y_k),
            rho_history=roll_in(s.rho_history, rho_k), gamma=gamma.astype(s.g_k.dtype),
            status=jnp.where(converged, 0, status), ls_status=ls.status)

    return lax.while_loop(lambda s: (~s.converged) & (~s.failed), body, state)


_BFGS_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")
_LBFGS_OPTIONS = ("maxiter", "norm", "maxcor", "ftol", "gtol", "maxfun", "maxgrad", "maxls")


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize fun(x, *args) over x (a 1-D float array, starting at x0), as
    jax.scipy.optimize.minimize: gradients by netcl.value_and_grad, method 'BFGS' or
    'l-bfgs-experimental-do-not-rely-on-this' (case-insensitive). options: for BFGS maxiter
    (default 200 n), norm (of the gradient's convergence test, default inf), gtol (1e-5),
    line_search_maxiter (10); for L-BFGS maxiter, norm, maxcor (10), ftol, gtol, maxfun,
    maxgrad, maxls (20). tol is accepted and unused, as in JAX (use options' gtol). Runs
    eagerly and under netcl.jit (fun traced; its loops staged). Returns OptimizeResults.

    >>> r = minimize(lambda x, c: jnp.sum((x - c) ** 2), jnp.zeros(3), (2.0,), method="BFGS")
    >>> r.x                                           # [2., 2., 2.]
    """
    where = "scipy.optimize.minimize"
    jnp = _jnp()
    if not callable(fun):
        raise TypeError(f"{where}: fun must be callable, got {type(fun).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"{where}: args must be a tuple, got {type(args).__name__}")
    if not isinstance(method, str):
        raise TypeError(f"{where}: method must be a string, got {type(method).__name__}")
    options = {} if options is None else options
    if not hasattr(options, "keys"):
        raise TypeError(f"{where}: options must be a dict, got {type(options).__name__}")
    if isinstance(x0, (list, tuple)):
        raise TypeError(f"{where}: x0 must be an array, got {type(x0).__name__}; convert it "
                        "with netcl.numpy.array first")
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"{where}: x0 must be one-dimensional, shape (n,), got shape "
                         f"{tuple(x0.shape)} (ravel it, and reshape inside fun)")
    if dtypes.kind(x0.dtype) not in "fc":
        raise TypeError(f"{where}: x0 must have a floating-point (or complex) dtype, got "
                        f"{x0.dtype}: gradients are taken with respect to it; convert with "
                        ".astype(jnp.float32)")

    def fun_with_args(x):
        return fun(x, *args)
    kind = method.lower()
    allowed = _BFGS_OPTIONS if kind == "bfgs" else _LBFGS_OPTIONS
    if kind not in ("bfgs", "l-bfgs-experimental-do-not-rely-on-this"):
        raise ValueError(f"{where}: method {method!r} not recognized; expected 'BFGS' or "
                         "'l-bfgs-experimental-do-not-rely-on-this'")
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"{where}: unknown options {unknown} for method {method!r}; "
                        f"expected some of {list(allowed)}")
    if kind == "bfgs":
        r = _bfgs(fun_with_args, x0, **options)
        return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                               fun=r.f_k, jac=r.g_k, hess_inv=r.H_k, nfev=r.nfev,
                               njev=r.ngev, nit=r.k)
    r = _lbfgs(fun_with_args, x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status,
                           fun=r.f_k, jac=r.g_k, hess_inv=None, nfev=r.nfev, njev=r.ngev,
                           nit=r.k)


minimize = public(minimize, "scipy.optimize.minimize")
minimize.__module__, minimize.__qualname__, minimize.__name__ = __name__, "minimize", "minimize"
