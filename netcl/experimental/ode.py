"""netcl.experimental.ode: ``jax.experimental.ode.odeint``, adaptive Dormand-Prince
integration of ODEs with reverse-mode derivatives by the adjoint method.

The algorithm (and its constants) are JAX's, so results agree with JAX's to rounding:

- Dormand-Prince 5(4): a 5th-order step with an embedded 4th-order error estimate, the
  last stage reused as the next step's first (FSAL);
- the initial step of Hairer, Norsett and Wanner (Solving ODEs I, Sec. II.4), step-size
  control by the mean squared error ratio (safety 0.9, growth at most 10x, shrink at most
  to 0.2x), a step accepted when that ratio is at most 1;
- the solution at the requested times from a 4th-order polynomial fitted to each accepted
  step (dense output), not by stepping onto each time;
- the gradient (a custom_vjp) by integrating the augmented system (state, adjoint,
  time and argument cotangents) backwards between consecutive output times (Chen et al.
  2018, "Neural Ordinary Differential Equations", Appendix C).

The state is a pytree, flattened into one vector for the integrator. Values of an
enclosing transform that `func` closes over (parameters under grad, a batch under vmap)
are made explicit arguments first, so that they get gradients, as JAX's closure_convert
does.
"""
import math
import numbers

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import Array
from ..core.tracing import ShapedArray, Tracer
from ..lax import scan, while_loop
from ..transforms.ad import vjp
from ..transforms.custom import custom_vjp
from ..tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["odeint"]

# ---- the Dormand-Prince 5(4) tableau -------------------------------------------------------
# Stage i (1..6) is evaluated at t + NODES[i-1] * dt from y + dt * sum_j STAGES[i-1][j] k_j.
_NODES = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_STAGES = (
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
# the 5th-order solution's weights are the last stage's (so its slope is the next f0)
_SOLUTION = _STAGES[-1] + (0.0,)
# 5th- minus 4th-order weights: the local error estimate
_ERROR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
# weights giving the solution at the step's midpoint (Shampine's dense output for DOPRI5)
_MIDPOINT = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
             -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
             -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)

# step-size control (JAX's defaults)
_SAFETY, _MAX_GROWTH, _MAX_SHRINK, _ORDER = 0.9, 10.0, 0.2, 5.0


# ---- argument checks -----------------------------------------------------------------------

def _is_array(x):
    return isinstance(x, (Array, Tracer))


def _check_func(func):
    if not callable(func):
        raise TypeError(f"odeint: func must be a function func(y, t, *args), got "
                        f"{type(func).__name__} {func!r}")


def _leaf_array(x, what):
    """A pytree leaf as an array (Python and NumPy numbers too, as JAX's jit makes them)."""
    if _is_array(x):
        return x
    if isinstance(x, (bool, str, bytes)) or not (hasattr(x, "dtype") or
                                                 isinstance(x, numbers.Number)):
        raise TypeError(f"odeint: {what} must be arrays or scalars, got "
                        f"{type(x).__name__} {x!r}")
    return jnp.asarray(x)


def _check_y0(y0):
    """y0 with its leaves as float arrays (the integrator's state is real-valued)."""
    leaves, tree = tree_flatten(y0)
    if not leaves:
        raise TypeError(f"odeint: y0 must be an array or a pytree of arrays, got {y0!r}")
    leaves = [_leaf_array(x, "the leaves of y0") for x in leaves]
    for x in leaves:
        if dtypes.kind(x.dtype) != "f":
            raise TypeError(f"odeint: y0 must hold floating-point arrays, got a leaf of "
                            f"dtype {x.dtype}; cast it, e.g. y0.astype(jnp.float32)")
    return tree_unflatten(tree, leaves)


def _check_t(t):
    if not _is_array(t) and not hasattr(t, "dtype") and not isinstance(t, (list, tuple)):
        raise TypeError(f"odeint: t must be a 1-D array of float times, got "
                        f"{type(t).__name__} {t!r}")
    t = t if _is_array(t) else jnp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-D array of times, got shape "
                         f"{tuple(t.shape)}")
    if t.shape[0] < 1:
        raise ValueError("odeint: t must hold at least one time (the initial one)")
    if dtypes.kind(t.dtype) != "f":
        raise TypeError(f"odeint: t must be an array of floats, got dtype {t.dtype}")
    return t


def _check_args(args):
    leaves, tree = tree_flatten(args)
    return tree_unflatten(tree, [_leaf_array(x, "the contents of *args") for x in leaves])


def _check_number(v, name):
    """rtol, atol, hmax, mxstep: a non-negative number (or an array, taken as it is)."""
    if _is_array(v):
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0:
        raise ValueError(f"odeint: {name} must be a non-negative number, got {v!r}")
    return v


# ---- pytrees as one vector -----------------------------------------------------------------

def _ravel(tree):
    """(the leaves raveled and concatenated, in their common float dtype, unravel), where
    unravel also takes a stack of such vectors (leading axes kept) and restores each leaf's
    shape and dtype."""
    leaves, treedef = tree_flatten(tree)
    dtype = jnp.result_type(*[x.dtype for x in leaves])
    shapes = [tuple(x.shape) for x in leaves]
    leaf_dtypes = [x.dtype for x in leaves]
    sizes = [math.prod(s) for s in shapes]
    parts = [jnp.reshape(x, (-1,)).astype(dtype) for x in leaves]
    flat = parts[0] if len(parts) == 1 else jnp.concatenate(parts)

    def unravel(v):
        lead = tuple(v.shape[:-1])
        out, start = [], 0
        for shape, size, dt in zip(shapes, sizes, leaf_dtypes):
            piece = v if len(sizes) == 1 else v[..., start:start + size]
            out.append(jnp.reshape(piece, lead + shape).astype(dt))
            start += size
        return tree_unflatten(treedef, out)
    return flat, unravel


def _on_vectors(func, y0, unravel, dtype):
    """func(y, t, *args) on pytrees as a function of the flat state vector, returning the
    flat derivative in the state's dtype (checked against y0's structure and shapes)."""
    want_leaves, want_tree = tree_flatten(y0)
    want = [tuple(x.shape) for x in want_leaves]

    def flat_func(y, t, *args):
        out = func(unravel(y), t, *args)
        leaves, tree = tree_flatten(out)
        got = [tuple(getattr(x, "shape", ())) for x in leaves]
        if tree != want_tree or got != want:
            raise TypeError(f"odeint: func must return the structure and shapes of y0 "
                            f"({want_tree}, shapes {want}), got {tree}, shapes {got}")
        leaves = [x if _is_array(x) else jnp.asarray(x) for x in leaves]
        parts = [jnp.reshape(x, (-1,)).astype(dtype) for x in leaves]
        return parts[0] if len(parts) == 1 else jnp.concatenate(parts)
    return flat_func


def _hoist_closed_over(func, y0, t0, args):
    """(func', extra): func' takes the traced values of an enclosing transform that `func`
    closes over as trailing arguments `extra` (JAX's closure_convert): the integrator's
    custom_vjp sees them, so they get cotangents under grad and a batch axis under vmap.
    With none, `func` itself and ()."""
    from ..core.ir import eval_ir
    from ..transforms.staging import lift_traced_consts, stage
    flat, in_tree = tree_flatten((y0, t0, args))
    avals = [ShapedArray(tuple(x.shape), x.dtype, x.weak_type) for x in flat]
    out_tree_box = []

    def flat_func(*xs):
        y, t, a = tree_unflatten(in_tree, list(xs))
        leaves, out_tree = tree_flatten(func(y, t, *a))
        out_tree_box[:] = [out_tree]
        return tuple(leaves)
    ir, captured = lift_traced_consts(stage(flat_func, tuple(avals))[0])
    if not captured:
        return func, ()
    n_args, out_tree = len(args), out_tree_box[0]

    def converted(y, t, *rest):
        a, extra = rest[:n_args], rest[n_args:]
        xs = tree_flatten((y, t, tuple(a)))[0]
        return tree_unflatten(out_tree, eval_ir(ir, ir.consts, [*xs, *extra]))
    return converted, tuple(captured)


# ---- one Dormand-Prince step ---------------------------------------------------------------

def _combine(weights, ks):
    """sum_j weights[j] * ks[j], skipping zero weights (Python floats keep ks' dtype)."""
    acc = None
    for w, k in zip(weights, ks):
        if w != 0.0:
            acc = w * k if acc is None else acc + w * k
    return acc


def _dopri_step(func, y0, f0, t0, dt):
    """One step of size dt from (t0, y0) with slope f0: (y1, f1, error estimate, slopes)."""
    h = dt.astype(y0.dtype)
    ks = [f0]
    for node, weights in zip(_NODES, _STAGES):
        ks.append(func(y0 + h * _combine(weights, ks), t0 + dt * node))
    y1 = y0 + h * _combine(_SOLUTION, ks)
    return y1, ks[-1], h * _combine(_ERROR, ks), ks


def _dense_fit(y0, y1, ks, dt):
    """Coefficients (a, b, c, d, e) of the quartic in s in [0, 1] through y0 (s=0), the
    midpoint estimate and y1 (s=1), with slopes dt*k0 and dt*k6 at the ends."""
    h = dt.astype(y0.dtype)
    y_mid = y0 + h * _combine(_MIDPOINT, ks)
    dy0, dy1 = h * ks[0], h * ks[-1]
    a = -2.0 * dy0 + 2.0 * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * dy0 - 3.0 * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * dy0 + dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return a, b, c, dy0, y0


def _dense_eval(coeffs, s):
    """The quartic at s, by Horner's rule."""
    acc = coeffs[0]
    for c in coeffs[1:]:
        acc = acc * s + c
    return acc


# ---- step-size selection -------------------------------------------------------------------

def _norm(x):
    return jnp.sqrt(jnp.sum(x * x))


def _first_step(func, t0, y0, f0, rtol, atol, order=4):
    """Hairer-Norsett-Wanner's starting step: small enough that an explicit Euler step
    changes y and f by about 1% of the tolerance scale."""
    scale = atol + jnp.abs(y0) * rtol
    d0, d1 = _norm(y0 / scale), _norm(f0 / scale)
    # (the ratio is unused, and may be 0/0, where the norms are tiny)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = func(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = _norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


def _error_ratio(err, rtol, atol, y0, y1):
    """Root-mean-square of the error estimate over its tolerance: a step is accepted at <= 1."""
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean((err / tol) ** 2))


def _next_step(dt, ratio):
    """The step size after a step of size dt with error ratio `ratio`: never shrunk after an
    accepted step, grown at most 10x, shrunk at most to 0.2x."""
    shrink = jnp.where(ratio < 1, 1.0, _MAX_SHRINK)
    factor = jnp.minimum(_MAX_GROWTH,
                         jnp.maximum(ratio ** (-1.0 / _ORDER) * _SAFETY, shrink))
    return jnp.where(ratio == 0, dt * _MAX_GROWTH, dt * factor)


def _clip_step(dt, hmax):
    dt = jnp.maximum(dt, 0.0)
    if not _is_array(hmax) and hmax == math.inf:
        return dt
    return jnp.minimum(dt, hmax).astype(dt.dtype)


# ---- the integrator on a flat state --------------------------------------------------------

def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The solution at each of ts (a leading axis), from y0 at ts[0]; func on vectors."""
    def f(y, t):
        return func(y, t, *args)
    bounded = _is_array(mxstep) or mxstep != math.inf

    def advance(carry, target):
        def unfinished(state):
            i, _, _, t, dt, _, _ = state
            going = (t < target) & (dt > 0)
            return going & (i < mxstep) if bounded else going

        def attempt(state):
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, err, ks = _dopri_step(f, y, fy, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_dt = _clip_step(_next_step(dt, ratio), hmax)
            ok = ratio <= 1.0
            keep = lambda new, old: jnp.where(ok, new, old)   # noqa: E731
            t1 = (t + dt).astype(t.dtype)     # (dt has y's dtype, maybe wider than t's)
            return (i + 1, keep(y1, y), keep(f1, fy), keep(t1, t), new_dt,
                    keep(t, last_t), tuple(map(keep, _dense_fit(y, y1, ks, dt), coeffs)))
        i0 = jnp.asarray(0, dtype=jnp.int32)
        _, *carry = while_loop(unfinished, attempt, (i0, *carry))
        _, _, t, _, last_t, coeffs = carry
        # the target lies in the last accepted step [last_t, t]: evaluate its quartic
        s = ((target - last_t) / (t - last_t)).astype(y0.dtype)
        return tuple(carry), _dense_eval(coeffs, s)

    if ts.shape[0] == 1:
        return y0[None]
    f0 = f(y0, ts[0])
    dt = _clip_step(_first_step(f, ts[0], y0, f0, rtol, atol), hmax)
    start = (y0, f0, ts[0], dt, ts[0], (y0,) * 5)
    _, ys = scan(advance, start, ts[1:])
    return jnp.concatenate([y0[None], ys])


def _integrate_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _integrate_bwd(func, rtol, atol, mxstep, hmax, res, g):
    """Cotangents of (y0, ts, *args) from those of the solution, by integrating the adjoint
    system backwards from each output time to the one before it."""
    ys, ts, args = res
    if ts.shape[0] == 1:     # the solution is y0 itself
        return (g[0], jnp.zeros_like(ts), *tree_map(jnp.zeros_like, args))

    def augmented(state, minus_t, *args):
        # integrated in reversed time s = -t: d/ds of (y, adjoint, t cotangent, args
        # cotangents) is (-f, a^T df/dy, a^T df/dt, a^T df/dargs)
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        y_bar_dot, t_bar_dot, *args_bar_dot = pullback(y_bar)
        return -y_dot, y_bar_dot, t_bar_dot, tuple(args_bar_dot)

    def back(carry, x):
        y_bar, t0_bar, args_bar = carry
        y_i, g_i, g_prev, t_i, t_prev = x
        # moving output time t_i moves its output along the solution: dL/dt_i = f . g_i
        t_bar = jnp.sum(func(y_i, t_i, *args) * g_i).astype(ts.dtype)
        t0_bar = t0_bar - t_bar
        span = jnp.stack([-t_i, -t_prev])
        _, y_bar, t0_bar, args_bar = _odeint_tree(
            augmented, (y_i, y_bar, t0_bar, args_bar), span, args, rtol, atol, mxstep, hmax)
        y_bar, t0_bar, args_bar = tree_map(lambda v: v[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g_prev, t0_bar, args_bar), t_bar

    start = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    xs = (ys[1:], g[1:], g[:-1], ts[1:], ts[:-1])
    (y_bar, t0_bar, args_bar), ts_bar = scan(back, start, xs, reverse=True)
    return (y_bar, jnp.concatenate([t0_bar[None], ts_bar]), *args_bar)


# func and the solver's settings are not differentiated (JAX's nondiff_argnums)
_integrate = custom_vjp(_solve, nondiff_argnums=(0, 1, 2, 3, 4))
_integrate.defvjp(_integrate_fwd, _integrate_bwd)


def _odeint_tree(func, y0, ts, args, rtol, atol, mxstep, hmax):
    """odeint on checked arguments, `func` closing over no traced values."""
    y_flat, unravel = _ravel(y0)
    flat_func = _on_vectors(func, y0, unravel, y_flat.dtype)
    return unravel(_integrate(flat_func, rtol, atol, mxstep, hmax, y_flat, ts, *args))


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=math.inf, hmax=math.inf):
    """Integrate dy/dt = func(y, t, *args) from y(t[0]) = y0 and return y at each of t
    (``jax.experimental.ode.odeint``): adaptive Dormand-Prince steps, the solution at t by
    dense output, and gradients (w.r.t. y0, t and args) by the adjoint method.

    Args:
      func: the time derivative, ``func(y, t, *args)``, returning y's structure.
      y0: the initial state: a float array or a pytree of them.
      t: 1-D float array of strictly increasing times; t[0] is y0's time.
      *args: extra arguments of func (arrays, scalars or pytrees of them); values func
        closes over get gradients as well.
      rtol, atol: relative and absolute local error tolerances.
      mxstep: the most steps (accepted or not) between two consecutive times.
      hmax: the largest step size.

    Returns:
      y at each time: y0's structure with a new leading axis of length len(t).

    >>> from netcl.experimental.ode import odeint
    >>> ys = odeint(lambda y, t, k: -k * y, jnp.ones(2), jnp.linspace(0.0, 1.0, 5), 0.5)
    >>> ys[-1]                                            # ~ exp(-0.5)
    Array([0.6065307, 0.6065307], dtype=float32)
    >>> netcl.grad(lambda k: odeint(lambda y, t, k: -k * y, 1.0, jnp.array([0.0, 1.0]),
    ...                             k)[-1])(0.5)          # -exp(-0.5)
    Array(-0.6065307, dtype=float32, weak_type=True)
    """
    _check_func(func)
    y0 = _check_y0(y0)
    t = _check_t(t)
    args = _check_args(args)
    rtol, atol = _check_number(rtol, "rtol"), _check_number(atol, "atol")
    mxstep, hmax = _check_number(mxstep, "mxstep"), _check_number(hmax, "hmax")
    func, extra = _hoist_closed_over(func, y0, t[0], args)
    return _odeint_tree(func, y0, t, (*args, *extra), rtol, atol, mxstep, hmax)
