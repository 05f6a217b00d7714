"""Numerical checks of derivative rules: `check_grads` (like jax.test_util.check_grads).

Derivatives are compared with central differences computed on the device, in float64 when
the device has it: forward mode as directional derivatives, reverse mode through the
identity <vjp(ct), t> == <ct, jvp(t)>. With order=2 the derivative functions themselves are
checked again, so second-order rules (grad of grad, hessian) are exercised. Complex
arguments are perturbed in random complex directions, and reverse mode is checked as JAX's
check_vjp does: Re<t, conj(vjp(conj(ct)))> == Re<jvp(t), ct> (its VJP is the transpose of
the JVP, not the adjoint).
"""
import contextlib
import dataclasses

import numpy as np

from .core.array import Array
from .transforms.ad import jvp, vjp
from .tree_util import tree_flatten, tree_map, tree_unflatten

DEFAULT_EPS = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 1e-2,
               np.dtype(np.complex128): 1e-5, np.dtype(np.complex64): 1e-2}
DEFAULT_TOL = {np.dtype(np.float64): 1e-5, np.dtype(np.float32): 2e-2,
               np.dtype(np.complex128): 1e-5, np.dtype(np.complex64): 2e-2}


def _host(x):
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _random_like(rng, x):
    from .numpy import asarray
    dt = np.asarray(x).dtype
    v = rng.standard_normal(np.shape(x))
    if dt.kind == "c":
        v = v + 1j * rng.standard_normal(np.shape(x))
    return asarray(v.astype(dt))


def _vdot(xs, ys):
    """Re <x, y> = Re sum(conj(x) y) over the leaves."""
    return sum(float(np.real(np.sum(np.conj(_host(a)) * _host(b)))) for a, b in zip(xs, ys))


def _conj(x):
    from .numpy import conj
    return conj(x)


def _numerical_jvp(f, args, tangents, eps):
    from .numpy import asarray
    plus = [asarray(_host(a) + eps * _host(t), dtype=np.asarray(a).dtype)
            for a, t in zip(args, tangents)]
    minus = [asarray(_host(a) - eps * _host(t), dtype=np.asarray(a).dtype)
             for a, t in zip(args, tangents)]
    fp, fm = tree_flatten(f(*plus))[0], tree_flatten(f(*minus))[0]
    return [(_host(p) - _host(m)) / (2 * eps) for p, m in zip(fp, fm)]


def _check_close(what, got, want, atol, rtol):
    for g, w in zip(got, want):
        g, w = _host(g), _host(w)
        if not np.allclose(g, w, atol=atol, rtol=rtol, equal_nan=False):
            err = np.max(np.abs(g - w)) if g.size else 0.0
            raise AssertionError(f"check_grads: {what} mismatch (max abs err {err:.3g}, "
                                 f"atol={atol}, rtol={rtol})\n got:  {g}\n want: {w}")


def check_jvp(f, args, eps=None, atol=None, rtol=None, rng=None):
    rng = rng or np.random.default_rng(0)
    dt = np.asarray(args[0]).dtype
    eps = eps or DEFAULT_EPS.get(dt, 1e-3)
    tol = DEFAULT_TOL.get(dt, 1e-3)
    ts = [_random_like(rng, a) for a in args]
    _, out_t = jvp(f, tuple(args), tuple(ts))
    num = _numerical_jvp(f, args, ts, eps)
    _check_close("jvp vs numerical", tree_flatten(out_t)[0], num, atol or tol, rtol or tol)


def check_vjp(f, args, eps=None, atol=None, rtol=None, rng=None):
    rng = rng or np.random.default_rng(1)
    dt = np.asarray(args[0]).dtype
    eps = eps or DEFAULT_EPS.get(dt, 1e-3)
    tol = DEFAULT_TOL.get(dt, 1e-3)
    out, f_vjp = vjp(f, *args)
    out_flat, out_tree = tree_flatten(out)
    cts = [_random_like(rng, o) for o in out_flat]
    in_cts = f_vjp(tree_unflatten(out_tree, [_conj(c) for c in cts]))
    ts = [_random_like(rng, a) for a in args]
    num = _numerical_jvp(f, args, ts, eps)
    lhs = _vdot(ts, [_conj(c) for c in tree_flatten(in_cts)[0]])
    rhs = _vdot(num, cts)
    scale = max(1.0, abs(rhs))
    if not abs(lhs - rhs) <= (atol or tol) * scale + (rtol or tol) * abs(rhs):
        raise AssertionError(f"check_grads: vjp mismatch: <vjp(ct), t> = {lhs!r} but "
                             f"<ct, numerical jvp(t)> = {rhs!r}")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check f's derivatives up to `order` against finite differences (float64 args advised).

    >>> check_grads(jnp.sin, (jnp.asarray(np.random.rand(3)),), order=2)
    """
    args = tuple(a if isinstance(a, Array) else _to_array(a) for a in args)
    rng = np.random.default_rng(0)

    def _check(f, args, order):
        if "fwd" in modes:
            check_jvp(f, args, eps, atol, rtol, rng)
        if "rev" in modes:
            check_vjp(f, args, eps, atol, rtol, rng)
        if order > 1:
            if "fwd" in modes:
                ts = [_random_like(rng, a) for a in args]
                _check(lambda *xs: jvp(f, xs, tuple(ts))[1], args, order - 1)
            if "rev" in modes:
                out, _ = vjp(f, *args)
                cts = tree_map(lambda o: _random_like(rng, o), out)
                _check(lambda *xs: vjp(f, *xs)[1](cts), args, order - 1)
    _check(f, args, order)


def _to_array(a):
    from .numpy import asarray
    return asarray(a)


@contextlib.contextmanager
def override_target(device, **fields):
    """Run with some fields of `device`'s Target replaced (netcl.core.target.Target), to
    exercise another kernel family on this device: the GPU reduction kernels, or the GPUs'
    column-sum epilogue, on PoCL. Compiled code is forgotten on entry and exit
    (`netcl.clear_caches`), so nothing built for one target runs under the other.

    >>> with netcl.test_util.override_target(netcl.default_device(), reduction_style="gpu"):
    ...     jnp.sum(x, axis=0)
    """
    from .transforms.jit import clear_caches
    old = device.target
    new = dataclasses.replace(old, **fields)     # (unknown fields raise TypeError)
    clear_caches()
    device.target = new
    try:
        yield new
    finally:
        device.target = old
        clear_caches()


def forget_launchers():
    """Drop the eager interpreter's built launchers (kernels and programs stay built): a
    launcher looks PyOpenCL's enqueue functions up when it is built, so a test that wraps
    them to count launches calls this first, and again when it restores them.

    >>> cl.enqueue_nd_range_kernel = counting(cl.enqueue_nd_range_kernel)
    >>> netcl.test_util.forget_launchers()
    """
    from .core.eval import eval_interpreter
    eval_interpreter.launchers.clear()
