"""netcl.optim's losses (optax.losses) and extras (inject_hyperparams, flatten, MultiSteps,
apply_if_finite, zero_nans, ema, amsgrad, adafactor).

Losses are checked against float64 NumPy formulas on random float32 inputs and on extreme
logits, and their derivatives against finite differences in float64 (x64 is on in the
suite). Transformations run a few steps on a small pytree against float64 NumPy
implementations of the published algorithms, eagerly and under jit. Where optax is installed,
both are also compared with optax itself.
"""
import functools
import math

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import optim
from netcl.test_util import check_grads
from netcl.tree_util import tree_leaves, tree_map, tree_structure

RNG = np.random.default_rng(1234)


def _f32(x):
    return jnp.asarray(np.asarray(x, np.float32))


def _f64(x):
    return jnp.asarray(np.asarray(x, np.float64), jnp.float64)


def _close(got, want, rtol=2e-5, atol=2e-6):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---- float64 NumPy references ---------------------------------------------------------------

def np_log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def np_lse(x, axis=-1, keepdims=False):
    return np.logaddexp.reduce(x, axis=axis, keepdims=keepdims)


def np_sigmoid_bce(x, y):
    return -y * np_log_sigmoid(x) - (1 - y) * np_log_sigmoid(-x)


def np_focal(x, y, alpha=None, gamma=2.0):
    with np.errstate(over="ignore"):
        p = 1 / (1 + np.exp(-x))
    p_t = p * y + (1 - p) * (1 - y)
    loss = np_sigmoid_bce(x, y) * (1 - p_t) ** gamma
    if alpha is not None:
        loss = (alpha * y + (1 - alpha) * (1 - y)) * loss
    return loss


def np_huber(e, delta):
    a = np.abs(e)
    return np.where(a <= delta, 0.5 * e * e, delta * (a - 0.5 * delta))


def np_cosine(a, b, eps=0.0, axis=-1):
    na = np.sqrt(np.maximum(np.sum(a * a, axis=axis, keepdims=True), eps))
    nb = np.sqrt(np.maximum(np.sum(b * b, axis=axis, keepdims=True), eps))
    return np.sum((a / na) * (b / nb), axis=axis)


def np_kl(lp, t, axis=-1):
    with np.errstate(divide="ignore"):
        logt = np.where(t == 0, 0.0, np.log(np.where(t == 0, 1.0, t)))
    return np.sum(t * (logt - lp), axis=axis)


# ---- losses: values -----------------------------------------------------------------------

X = RNG.normal(size=(6, 5)).astype(np.float32) * 3
T = RNG.normal(size=(6, 5)).astype(np.float32)
P = RNG.dirichlet(np.ones(5), size=6).astype(np.float32)
Q = RNG.dirichlet(np.ones(5), size=6).astype(np.float32)
Y01 = (RNG.random((6, 5)) > 0.5).astype(np.float32)
LABELS = RNG.integers(0, 5, size=6).astype(np.int32)
SIGNS = np.where(RNG.random((6, 5)) > 0.5, 1.0, -1.0).astype(np.float32)
# extreme logits: float32 overflow territory for naive formulas
XE = np.array([[-1e4, -100.0, -20.0, 0.0, 20.0, 100.0, 1e4],
               [3e38, -3e38, 88.0, -88.0, 1e-30, 0.5, -0.5]], np.float32)
YE = np.array([[1, 0, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0.3, 1, 0]], np.float32)

X64, T64 = X.astype(np.float64), T.astype(np.float64)
P64, Q64 = P.astype(np.float64), Q.astype(np.float64)
XE64 = XE.astype(np.float64)

LOSS_VALUES = [
    ("l2_loss", lambda: optim.l2_loss(_f32(X), _f32(T)), 0.5 * (X64 - T64) ** 2),
    ("l2_loss_no_targets", lambda: optim.l2_loss(_f32(X)), 0.5 * X64 ** 2),
    ("squared_error", lambda: optim.squared_error(_f32(X), _f32(T)), (X64 - T64) ** 2),
    ("huber", lambda: optim.huber_loss(_f32(X), _f32(T)), np_huber(X64 - T64, 1.0)),
    ("huber_delta", lambda: optim.huber_loss(_f32(X), _f32(T[0]), delta=0.3),
     np_huber(X64 - T64[0], 0.3)),
    ("log_cosh", lambda: optim.log_cosh(_f32(X), _f32(T)),
     np.logaddexp(X64 - T64, T64 - X64) - math.log(2)),
    ("log_cosh_extreme", lambda: optim.log_cosh(_f32(XE[:1])),
     np.logaddexp(XE64[:1], -XE64[:1]) - math.log(2)),
    ("cosine_similarity", lambda: optim.cosine_similarity(_f32(X), _f32(T)),
     np_cosine(X64, T64)),
    ("cosine_similarity_axis0_eps",
     lambda: optim.cosine_similarity(_f32(X), _f32(T), axis=0, epsilon=50.0),
     np_cosine(X64, T64, 50.0, axis=0)),
    ("cosine_distance", lambda: optim.cosine_distance(_f32(X), _f32(T)),
     1 - np_cosine(X64, T64)),
    ("sigmoid_bce", lambda: optim.sigmoid_binary_cross_entropy(_f32(X), _f32(Y01)),
     np_sigmoid_bce(X64, Y01)),
    ("sigmoid_bce_soft_labels", lambda: optim.sigmoid_binary_cross_entropy(_f32(X), _f32(P)),
     np_sigmoid_bce(X64, P64)),
    ("sigmoid_bce_extreme", lambda: optim.sigmoid_binary_cross_entropy(_f32(XE), _f32(YE)),
     np_sigmoid_bce(XE64, YE)),
    ("sigmoid_bce_int_labels",
     lambda: optim.sigmoid_binary_cross_entropy(_f32(X), jnp.asarray(Y01.astype(np.int32))),
     np_sigmoid_bce(X64, Y01)),
    ("focal", lambda: optim.sigmoid_focal_loss(_f32(X), _f32(Y01)), np_focal(X64, Y01)),
    ("focal_alpha_gamma", lambda: optim.sigmoid_focal_loss(_f32(X), _f32(P), alpha=0.25,
                                                           gamma=1.5),
     np_focal(X64, P64, 0.25, 1.5)),
    ("focal_extreme", lambda: optim.sigmoid_focal_loss(_f32(XE[:1]), _f32(YE[:1])),
     np_focal(XE64[:1], YE[:1])),
    ("hinge", lambda: optim.hinge_loss(_f32(X), _f32(SIGNS)),
     np.maximum(0, 1 - X64 * SIGNS)),
    ("softmax_ce", lambda: optim.softmax_cross_entropy(_f32(X), _f32(P)),
     -np.sum(P64 * (X64 - np_lse(X64, keepdims=True)), -1)),
    ("softmax_ce_axis0", lambda: optim.softmax_cross_entropy(_f32(X), _f32(P), axis=0),
     -np.sum(P64 * (X64 - np_lse(X64, 0, keepdims=True)), 0)),
    ("softmax_ce_extreme",
     lambda: optim.softmax_cross_entropy(_f32(XE[:1]), _f32(YE[:1] / YE[:1].sum())),
     -np.sum(YE[:1] / YE[:1].sum() * (XE64[:1] - np_lse(XE64[:1], keepdims=True)), -1)),
    ("safe_softmax_ce", lambda: optim.safe_softmax_cross_entropy(_f32(X), _f32(P)),
     -np.sum(P64 * (X64 - np_lse(X64, keepdims=True)), -1)),
    ("safe_softmax_ce_neg_inf",
     lambda: optim.safe_softmax_cross_entropy(_f32([[0.0, -np.inf, 1.0]]),
                                              _f32([[0.25, 0.0, 0.75]])),
     -np.array([0.25 * (0 - np.log1p(np.e)) + 0.75 * (1 - np.log1p(np.e))])),
    ("softmax_ce_int", lambda: optim.softmax_cross_entropy_with_integer_labels(
        _f32(X), jnp.asarray(LABELS)),
     np_lse(X64) - X64[np.arange(6), LABELS]),
    ("softmax_ce_int_extreme", lambda: optim.softmax_cross_entropy_with_integer_labels(
        _f32(XE), jnp.asarray(np.array([0, 2], np.int32))),
     np_lse(XE64) - XE64[[0, 1], [0, 2]]),
    ("kl", lambda: optim.kl_divergence(jnp.log(_f32(P)), _f32(Q)), np_kl(np.log(P64), Q64)),
    ("kl_zero_targets", lambda: optim.kl_divergence(jnp.log(_f32(P)), _f32(Y01 / 5)),
     np_kl(np.log(P64), Y01.astype(np.float64) / 5)),
    ("kl_log_targets", lambda: optim.kl_divergence_with_log_targets(
        jnp.log(_f32(P)), jnp.log(_f32(Q))),
     np.sum(Q64 * (np.log(Q64) - np.log(P64)), -1)),
]


@pytest.mark.parametrize("name,fn,want", LOSS_VALUES, ids=[c[0] for c in LOSS_VALUES])
def test_loss_values(name, fn, want):
    got = fn()
    assert got.dtype == jnp.float32
    assert np.all(np.isfinite(np.asarray(got))), got
    _close(got, want, rtol=3e-5, atol=3e-6 * max(1.0, float(np.max(np.abs(want)))))


def test_losses_with_where_and_tuple_axes():
    w = RNG.random((6, 5)) > 0.3
    w[2] = False                                       # a row with nothing selected
    W = jnp.asarray(w)
    with np.errstate(divide="ignore"):
        lp = np.where(w, X64 - np.log(np.sum(np.where(w, np.exp(X64), 0), -1, keepdims=True)),
                      0)
    _close(optim.softmax_cross_entropy(_f32(X), _f32(P), where=W),
           -np.sum(np.where(w, P64 * lp, 0), -1))
    lab = np.where(w[np.arange(6), LABELS], LABELS, np.argmax(w, -1)).astype(np.int32)
    got = optim.softmax_cross_entropy_with_integer_labels(_f32(X), jnp.asarray(lab), where=W)
    with np.errstate(divide="ignore"):
        lse = np.log(np.sum(np.where(w, np.exp(X64), 0), -1))
    want = np.where(w.any(-1), lse - X64[np.arange(6), lab], 0.0)
    _close(got, want)
    w_cos = w.copy()
    w_cos[2] = True                                    # (no empty row: 0/0 without epsilon)
    _close(optim.cosine_similarity(_f32(X), _f32(T), where=jnp.asarray(w_cos)),
           np_cosine(np.where(w_cos, X64, 0), np.where(w_cos, T64, 0)))
    _close(optim.kl_divergence(jnp.log(_f32(P)), _f32(Q), where=W),
           np.sum(np.where(w, Q64 * (np.log(Q64) - np.log(P64)), 0), -1))
    # a tuple of class axes: labels are flat indices into the (3, 4) slice, row-major
    x4 = RNG.normal(size=(2, 3, 3, 4))
    l4 = RNG.integers(0, 12, size=(2, 3)).astype(np.int32)
    flat = x4.reshape(2, 3, 12)
    _close(optim.softmax_cross_entropy_with_integer_labels(_f32(x4), jnp.asarray(l4),
                                                           axis=(2, 3)),
           np_lse(flat) - np.take_along_axis(flat, l4[..., None], -1)[..., 0])
    # axes given out of order: the slice is taken in that order (transposed)
    l4b = RNG.integers(0, 12, size=(2, 3)).astype(np.int32)
    flat_b = np.transpose(x4, (0, 1, 3, 2)).reshape(2, 3, 12)
    _close(optim.softmax_cross_entropy_with_integer_labels(_f32(x4), jnp.asarray(l4b),
                                                           axis=(3, 2)),
           np_lse(flat_b) - np.take_along_axis(flat_b, l4b[..., None], -1)[..., 0])


def test_int_label_ce_matches_one_hot_ce():
    got = optim.softmax_cross_entropy_with_integer_labels(_f32(X), jnp.asarray(LABELS))
    one_hot = netcl.nn.one_hot(jnp.asarray(LABELS), 5)
    _close(got, optim.softmax_cross_entropy(_f32(X), one_hot), rtol=1e-6)


# ---- losses: derivatives --------------------------------------------------------------------

def test_loss_gradients_exact_at_zero():
    """Zero logits (a zero-initialised last layer) and zero errors: the derivative of a
    log-sigmoid is 0.5 there, of log-cosh 0 (max/abs formulations get these wrong)."""
    z = jnp.zeros((4,), jnp.float32)
    y = _f32([0.0, 1.0, 0.3, 1.0])
    g = netcl.grad(lambda x: jnp.sum(optim.sigmoid_binary_cross_entropy(x, y)))(z)
    _close(g, 0.5 - np.array([0.0, 1.0, 0.3, 1.0]), atol=1e-7)
    g = netcl.grad(lambda x: jnp.sum(optim.log_cosh(x)))(z)
    _close(g, np.zeros(4), atol=1e-7)
    g = netcl.grad(lambda x: jnp.sum(optim.sigmoid_focal_loss(x, y, gamma=0.0)))(z)
    _close(g, 0.5 - np.array([0.0, 1.0, 0.3, 1.0]), atol=1e-7)


def test_loss_gradients_finite_at_extremes():
    g = netcl.grad(lambda x: jnp.sum(optim.sigmoid_binary_cross_entropy(x, _f32(YE))))(
        _f32(XE))
    _close(g, 1 / (1 + np.exp(-np.clip(XE64, -700, 700))) - YE, atol=1e-6)
    # (not at |x| = 3e38: there loss * its log-derivative overflows float32, as in optax)
    g = netcl.grad(lambda x: jnp.sum(optim.sigmoid_focal_loss(x, _f32(YE[0]), alpha=0.25)))(
        _f32(XE[0]))
    assert np.all(np.isfinite(np.asarray(g)))
    g = netcl.grad(lambda x: jnp.sum(optim.softmax_cross_entropy_with_integer_labels(
        x, jnp.asarray(np.array([0, 2], np.int32)))))(_f32(XE))
    sm = np.exp(XE64 - np_lse(XE64, keepdims=True))
    sm[[0, 1], [0, 2]] -= 1
    _close(g, sm, atol=1e-6)
    lg = _f32([[0.0, -np.inf, 1.0]])
    g = netcl.grad(lambda x: jnp.sum(optim.safe_softmax_cross_entropy(
        x, _f32([[0.25, 0.0, 0.75]]))))(lg)
    s = np.exp([0.0, 1.0]) / np.sum(np.exp([0.0, 1.0]))
    _close(g, [[s[0] - 0.25, 0.0, s[1] - 0.75]], atol=1e-6)
    g = netcl.grad(lambda t: jnp.sum(optim.kl_divergence(jnp.log(_f32(P)), t)))(
        _f32(Y01 / 5))
    assert np.all(np.isfinite(np.asarray(g)))


X2 = RNG.normal(size=(3, 4))
T2 = RNG.normal(size=(3, 4))
P2 = RNG.dirichlet(np.ones(4), size=3)
L2 = RNG.integers(0, 4, size=3).astype(np.int32)
# kink-free points for huber (|e| != delta) and hinge (margin != 1)
GRAD_CASES = [
    ("l2_loss", lambda x: optim.l2_loss(x, _f64(T2)), 2),
    ("squared_error", lambda x: optim.squared_error(x, _f64(T2)), 2),
    ("huber", lambda x: optim.huber_loss(x, _f64(T2), delta=0.7), 1),
    ("log_cosh", lambda x: optim.log_cosh(x, _f64(T2)), 2),
    ("cosine_similarity", lambda x: optim.cosine_similarity(x, _f64(T2)), 2),
    ("cosine_distance", lambda x: optim.cosine_distance(x, _f64(T2), axis=0), 1),
    ("sigmoid_bce", lambda x: optim.sigmoid_binary_cross_entropy(x * 4, _f64(P2)), 2),
    ("focal", lambda x: optim.sigmoid_focal_loss(x * 4, _f64(P2), alpha=0.3), 1),
    ("hinge", lambda x: optim.hinge_loss(x, _f64(np.sign(T2))), 1),
    ("softmax_ce", lambda x: optim.softmax_cross_entropy(x * 4, _f64(P2)), 2),
    ("safe_softmax_ce", lambda x: optim.safe_softmax_cross_entropy(x * 4, _f64(P2)), 1),
    ("softmax_ce_int", lambda x: optim.softmax_cross_entropy_with_integer_labels(
        x * 4, jnp.asarray(L2)), 2),
    ("kl_log_predictions", lambda x: optim.kl_divergence(
        netcl.nn.log_softmax(x), _f64(P2)), 1),
    ("kl_targets", lambda x: optim.kl_divergence(
        jnp.log(_f64(P2)), netcl.nn.softmax(x)), 1),
    ("kl_log_targets", lambda x: optim.kl_divergence_with_log_targets(
        jnp.log(_f64(P2)), netcl.nn.log_softmax(x)), 1),
]


@pytest.mark.parametrize("name,f,order", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_loss_gradients_float64(name, f, order):
    x = _f64(X2)
    assert f(x).dtype == jnp.float64
    check_grads(f, (x,), order=order, modes=("rev",) if order == 1 else ("fwd", "rev"))


def test_losses_under_jit_and_grad_of_jit():
    x, lab, y = _f32(X), jnp.asarray(LABELS), _f32(Y01)

    def loss(x, lab, y):
        return (jnp.mean(optim.softmax_cross_entropy_with_integer_labels(x, lab))
                + jnp.mean(optim.sigmoid_binary_cross_entropy(x, y))
                + jnp.mean(optim.huber_loss(x, y)) + jnp.mean(optim.cosine_distance(x, y)))

    _close(netcl.jit(loss)(x, lab, y), loss(x, lab, y), rtol=1e-5)
    g_eager = netcl.grad(loss)(x, lab, y)
    _close(netcl.jit(netcl.grad(loss))(x, lab, y), g_eager, rtol=1e-5, atol=1e-7)
    _close(netcl.grad(netcl.jit(loss))(x, lab, y), g_eager, rtol=1e-5, atol=1e-7)


# ---- transformations: float64 NumPy references ------------------------------------------------

SHAPES = {"w": (3, 4), "b": (4,), "k": (2, 3, 5), "s": ()}
STEPS = 6


def _tree(rng, scale=1.0):
    return {k: np.asarray(rng.normal(size=s) * scale) for k, s in SHAPES.items()}


def _problem(seed=0, steps=STEPS):
    rng = np.random.default_rng(seed)
    return _tree(rng), [_tree(rng) for _ in range(steps)]


def _nc(tree):
    return tree_map(lambda x: jnp.asarray(np.asarray(x, np.float32)), tree)


def _ref64(tree):
    return {k: np.asarray(v, np.float32).astype(np.float64) for k, v in tree.items()}


def _run(opt, ref_step, seed=0, steps=STEPS, jit=False, rtol=2e-4, between=None):
    """opt (netcl) and ref_step(i, grads, params) -> updates (dicts of float64) side by side;
    `between(i, state)` may edit the state before step i."""
    params_h, grads_h = _problem(seed, steps)
    params, ref_params = _nc(params_h), _ref64(params_h)
    state = opt.init(params)
    update = netcl.jit(opt.update) if jit else opt.update
    for i, g_h in enumerate(grads_h):
        if between is not None:
            state = between(i, state) or state
        updates, state = update(_nc(g_h), state, params)
        want = ref_step(i, _ref64(g_h), ref_params)
        assert tree_structure(updates) == tree_structure(params)
        for k in SHAPES:
            scale = max(float(np.max(np.abs(want[k]))), 1e-12)
            np.testing.assert_allclose(np.asarray(updates[k], np.float64), want[k], rtol=rtol,
                                       atol=rtol * scale, err_msg=f"step {i}, leaf {k}")
        params = optim.apply_updates(params, updates)
        ref_params = {k: ref_params[k] + want[k] for k in SHAPES}
    return state


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-8):
    st = {"m": None, "v": None}

    def step(i, g, p):
        m = st["m"] = {k: (1 - b1) * g[k] + b1 * (st["m"][k] if st["m"] else 0) for k in g}
        v = st["v"] = {k: (1 - b2) * g[k] ** 2 + b2 * (st["v"][k] if st["v"] else 0)
                       for k in g}
        t = i + 1
        lr_i = lr(i) if callable(lr) else lr
        return {k: -lr_i * (m[k] / (1 - b1 ** t)) / (np.sqrt(v[k] / (1 - b2 ** t)) + eps)
                for k in g}
    return step


def ref_amsgrad(lr, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, bc_mu=True, bc_nu=True):
    st = {}

    def step(i, g, p):
        t = i + 1
        out = {}
        for k in g:
            m = st[k, "m"] = (1 - b1) * g[k] + b1 * st.get((k, "m"), 0)
            v = st[k, "v"] = (1 - b2) * g[k] ** 2 + b2 * st.get((k, "v"), 0)
            m_hat = m / (1 - b1 ** t) if bc_mu else m
            v_eff = v / (1 - b2 ** t) if bc_nu else v
            vmax = st[k, "vmax"] = np.maximum(st.get((k, "vmax"), 0), v_eff)
            out[k] = -lr * m_hat / (np.sqrt(vmax + eps_root) + eps)
        return out
    return step


def ref_adafactor(lr, min_dim=128, decay_rate=0.8, clip=1.0, param_scale=True,
                  momentum=None, weight_decay=None, eps=1e-30):
    """Shazeer & Stern's Adafactor as optax composes it, written out in NumPy."""
    st = {}

    def factored(shape):
        if len(shape) < 2:
            return None
        order = np.argsort(shape, kind="stable")
        if shape[order[-2]] < min_dim:
            return None
        return int(order[-2]), int(order[-1])

    def step(i, g, p):
        beta = 1 - (i + 1.0) ** -decay_rate
        out = {}
        for k in g:
            g2 = g[k] ** 2 + eps
            dims = factored(g[k].shape)
            if dims is None:
                v = st[k, "v"] = beta * st.get((k, "v"), 0) + (1 - beta) * g2
                u = g[k] / np.sqrt(v)
            else:
                d1, d0 = dims            # second largest, largest
                r = st[k, "r"] = beta * st.get((k, "r"), 0) + (1 - beta) * g2.mean(axis=d0)
                c = st[k, "c"] = beta * st.get((k, "c"), 0) + (1 - beta) * g2.mean(axis=d1)
                rd1 = d1 - 1 if d1 > d0 else d1
                row = r / r.mean(axis=rd1, keepdims=True)
                v_hat = np.expand_dims(row, d0) * np.expand_dims(c, d1)
                u = g[k] / np.sqrt(v_hat)
            if clip is not None:
                u = u / max(1.0, np.sqrt(np.mean(u * u)) / clip)
            u = lr * u
            if param_scale:
                u = u * max(np.sqrt(np.mean(p[k] ** 2)), 1e-3)
            if momentum is not None:
                u = st[k, "m"] = momentum * st.get((k, "m"), 0) + (1 - momentum) * u
            if weight_decay is not None:
                u = u + weight_decay * p[k]
            out[k] = -u
        return out
    return step


def test_amsgrad_matches_reference():
    _run(optim.amsgrad(0.05), ref_amsgrad(0.05))
    _run(optim.amsgrad(0.05, b1=0.5, eps_root=1e-6, bias_correction_mu=False,
                       bias_correction_nu=False),
         ref_amsgrad(0.05, b1=0.5, eps_root=1e-6, bc_mu=False, bc_nu=False))


def test_amsgrad_nu_max_never_decreases():
    p = {"w": jnp.zeros((3,))}
    opt = optim.scale_by_amsgrad()
    s = opt.init(p)
    for g in (10.0, 0.1, 0.1):
        _, s = opt.update({"w": jnp.full((3,), g)}, s)
    nu = 0.999 ** 2 * 0.001 * 100 + 0.999 * 0.001 * 0.01 + 0.001 * 0.01
    assert float(s.nu_max["w"][0]) > float(s.nu["w"][0] / (1 - 0.999 ** 3)) * 0.99
    _close(s.nu["w"], np.full(3, nu), rtol=1e-5)


def test_adafactor_unfactored_defaults_match_reference():
    # every leaf here is smaller than min_dim_size_to_factor=128: full second moments
    state = _run(optim.adafactor(0.05), ref_adafactor(0.05))
    fs = state[0]
    assert isinstance(fs, optim.FactoredState) and int(fs.count) == STEPS
    assert fs.v["w"].shape == (3, 4) and fs.v_row["w"].shape == (1,)


def test_adafactor_factored_matches_reference():
    opt = optim.adafactor(0.05, min_dim_size_to_factor=2, momentum=0.9, weight_decay_rate=0.01)
    state = _run(opt, ref_adafactor(0.05, min_dim=2, momentum=0.9, weight_decay=0.01))
    fs = state[0]
    # (3, 4): rows over axis 1 (the largest) removed -> (3,), cols -> (4,); (2, 3, 5): the
    # two largest axes are 2 (5) and 1 (3)
    assert fs.v_row["w"].shape == (3,) and fs.v_col["w"].shape == (4,)
    assert fs.v_row["k"].shape == (2, 3) and fs.v_col["k"].shape == (2, 5)
    assert fs.v["w"].shape == (1,) and fs.v["b"].shape == (4,)


def test_adafactor_options_and_jit():
    _run(optim.adafactor(0.05, min_dim_size_to_factor=3, clipping_threshold=None,
                         multiply_by_parameter_scale=False, decay_rate=0.5),
         ref_adafactor(0.05, min_dim=3, clip=None, param_scale=False, decay_rate=0.5),
         jit=True)


def test_ema():
    st = {}

    def ref(i, g, p, decay=0.8, debias=True):
        out = {}
        for k in g:
            e = st[k] = decay * st.get(k, 0) + (1 - decay) * g[k]
            out[k] = e / (1 - decay ** (i + 1)) if debias else e
        return out
    _run(optim.ema(0.8), ref)
    st.clear()
    _run(optim.ema(0.8, debias=False), functools.partial(ref, debias=False), jit=True)


def test_flatten_equals_the_inner_optimizer():
    _run(optim.flatten(optim.adam(0.05)), ref_adam(0.05))
    _run(optim.flatten(optim.adam(0.05)), ref_adam(0.05), jit=True)
    opt = optim.flatten(optim.sgd(0.1, momentum=0.9))
    s = opt.init(_nc(_problem()[0]))
    assert s[0].trace.shape == (3 * 4 + 4 + 2 * 3 * 5 + 1,)


# ---- inject_hyperparams -----------------------------------------------------------------------

def test_inject_hyperparams_change_learning_rate_between_steps():
    lrs = [0.1, 0.1, 0.01, 0.01, 0.5, 0.5]
    st = {}

    def ref(i, g, p):
        out = {}
        for k in g:
            t = st[k] = g[k] + 0.9 * st.get(k, 0)
            out[k] = -lrs[i] * t
        return out

    def between(i, state):
        assert float(state.hyperparams["learning_rate"]) == pytest.approx(lrs[i - 1] if i
                                                                          else lrs[0])
        state.hyperparams["learning_rate"] = lrs[i]   # a Python float: the factory checks it

    opt = optim.inject_hyperparams(optim.sgd)(learning_rate=0.1, momentum=0.9)
    state = _run(opt, ref, between=between)
    assert isinstance(state, optim.InjectStatefulHyperparamsState)
    assert int(state.count) == STEPS and set(state.hyperparams) == {"learning_rate", "momentum"}
    assert state.hyperparams["momentum"].shape == () and float(
        state.hyperparams["momentum"]) == pytest.approx(0.9)

    # under jit, with the new value as an array (no recompilation needed)
    st.clear()

    def between_jit(i, state):
        state.hyperparams["learning_rate"] = jnp.asarray(lrs[i], jnp.float32)
    _run(opt, ref, between=between_jit, jit=True)


def test_inject_hyperparams_schedules_match_plain_optimizer():
    sched = optim.exponential_decay(0.05, transition_steps=2, decay_rate=0.5)
    opt = optim.inject_hyperparams(optim.adam)(learning_rate=sched, b1=0.8)
    state = _run(opt, ref_adam(lambda i: 0.05 * 0.5 ** (i / 2), b1=0.8))
    # the value recorded is the one the last step used (count STEPS - 1)
    assert float(state.hyperparams["learning_rate"]) == pytest.approx(
        0.05 * 0.5 ** ((STEPS - 1) / 2), rel=1e-6)
    assert int(state.hyperparams_states["learning_rate"].count) == STEPS
    # a schedule for a non-learning-rate hyperparameter, under jit
    b1 = optim.piecewise_constant_schedule(0.9, {3: 0.5})
    opt = optim.inject_hyperparams(optim.scale_by_amsgrad)(b1=b1)
    st = {}

    def ref(i, g, p):
        b = 0.9 if i < 3 else 0.45
        out = {}
        for k in g:
            m = st[k, "m"] = (1 - b) * g[k] + b * st.get((k, "m"), 0)
            v = st[k, "v"] = 0.001 * g[k] ** 2 + 0.999 * st.get((k, "v"), 0)
            vm = st[k, "vm"] = np.maximum(st.get((k, "vm"), 0), v / (1 - 0.999 ** (i + 1)))
            out[k] = (m / (1 - b ** (i + 1))) / (np.sqrt(vm) + 1e-8)
        return out
    _run(opt, ref, jit=True, rtol=1e-3)


def test_inject_hyperparams_static_args_and_dtype():
    p = {"w": jnp.ones((2, 2), jnp.float64)}
    opt = optim.inject_hyperparams(optim.adamw, static_args="mask")(
        0.1, weight_decay=0.01, mask=lambda params: {"w": True})
    s = opt.init(p)
    assert "mask" not in s.hyperparams and s.hyperparams["learning_rate"].dtype == jnp.float64
    opt = optim.inject_hyperparams(optim.sgd, hyperparam_dtype=jnp.float32)(0.1)
    assert opt.init(p).hyperparams["learning_rate"].dtype == jnp.float32
    u, _ = opt.update({"w": jnp.ones((2, 2), jnp.float64)}, opt.init(p), p)
    _close(u["w"], np.full((2, 2), -0.1), rtol=1e-6)
    # a shape-deciding int must be static: a clear error, then fine with static_args
    with pytest.raises(TypeError, match="min_dim_size_to_factor must be a static int"):
        optim.inject_hyperparams(optim.adafactor)(0.1).init(p)
    opt = optim.inject_hyperparams(optim.adafactor, static_args="min_dim_size_to_factor")(
        0.1, min_dim_size_to_factor=2)
    s = opt.init(p)
    assert s.inner_state[0].v_row["w"].shape == (2,)
    assert set(s.hyperparams) == {"learning_rate", "decay_rate", "decay_offset",
                                  "clipping_threshold", "eps"}
    u, s = opt.update({"w": jnp.ones((2, 2), jnp.float64)}, s, p)
    _close(u["w"], np.full((2, 2), -0.1), rtol=1e-6)


# ---- MultiSteps ---------------------------------------------------------------------------

def test_multisteps_accumulates_k_steps():
    k = 3
    inner = ref_adam(0.05)
    buf = []

    def ref(i, g, p):
        buf.append(g)
        if len(buf) < k:
            return {kk: np.zeros_like(v) for kk, v in g.items()}
        mean = {kk: sum(b[kk] for b in buf) / k for kk in g}
        buf.clear()
        return inner(i // k, mean, p)

    ms = optim.MultiSteps(optim.adam(0.05), every_k_schedule=k)
    state = _run(ms.gradient_transformation(), ref)
    assert isinstance(state, optim.MultiStepsState)
    assert int(state.gradient_step) == STEPS // k and int(state.mini_step) == 0
    assert bool(ms.has_updated(state))
    assert int(state.inner_opt_state[0].count) == STEPS // k


def test_multisteps_sum_schedule_and_jit():
    # every_k as a schedule: 1 for the first gradient step, then 2; summed gradients
    inner = ref_adam(0.05)
    buf, done = [], [0]

    def ref(i, g, p):
        buf.append(g)
        if len(buf) < (1 if done[0] == 0 else 2):
            return {kk: np.zeros_like(v) for kk, v in g.items()}
        total = {kk: sum(b[kk] for b in buf) for kk in g}
        buf.clear()
        done[0] += 1
        return inner(done[0] - 1, total, p)

    ms = optim.MultiSteps(optim.adam(0.05), lambda step: jnp.where(step < 1, 1, 2),
                          use_grad_mean=False)
    state = _run(ms.gradient_transformation(), ref, steps=5, jit=True)
    assert int(state.gradient_step) == 3 and int(state.mini_step) == 0


def test_multisteps_skips_non_finite_micro_steps():
    ms = optim.MultiSteps(optim.sgd(1.0), 2, should_skip_update_fn=optim.skip_not_finite)
    p = {"w": jnp.zeros((2,))}
    s = ms.init(p)
    assert int(s.skip_state["num_not_finite"]) == 0
    u, s = ms.update({"w": _f32([1.0, 2.0])}, s, p)
    assert int(s.mini_step) == 1 and not np.any(np.asarray(u["w"]))
    u, s = ms.update({"w": _f32([np.nan, 2.0])}, s, p)          # skipped: nothing changes
    assert int(s.mini_step) == 1 and int(s.skip_state["num_not_finite"]) == 1
    assert bool(s.skip_state["should_skip"]) and not np.any(np.asarray(u["w"]))
    u, s = ms.update({"w": _f32([3.0, 4.0])}, s, p)
    _close(u["w"], [-2.0, -3.0])
    assert int(s.gradient_step) == 1 and int(s.mini_step) == 0
    big = functools.partial(optim.skip_large_updates, max_squared_norm=10.0)
    ms = optim.MultiSteps(optim.sgd(1.0), 1, should_skip_update_fn=big)
    u, s = ms.update({"w": _f32([3.0, 4.0])}, ms.init(p), p)
    assert not np.any(np.asarray(u["w"])) and int(s.gradient_step) == 0
    u, s = ms.update({"w": _f32([1.0, 2.0])}, s, p)
    _close(u["w"], [-1.0, -2.0])


# ---- apply_if_finite, zero_nans -----------------------------------------------------------------

def test_apply_if_finite():
    opt = optim.apply_if_finite(optim.sgd(1.0, momentum=0.5), max_consecutive_errors=1)
    p = {"w": jnp.zeros((2,))}
    s = opt.init(p)
    u, s = opt.update({"w": _f32([1.0, 1.0])}, s, p)
    _close(u["w"], [-1.0, -1.0])
    u, s = opt.update({"w": _f32([np.inf, 1.0])}, s, p)          # rejected
    _close(u["w"], [0.0, 0.0])
    assert not bool(s.last_finite) and int(s.notfinite_count) == 1
    _close(s.inner_state[0].trace["w"], [1.0, 1.0])             # inner state kept
    u, s = opt.update({"w": _f32([np.nan, 1.0])}, s, p)          # 2 > 1 in a row: applied
    assert np.isnan(np.asarray(u["w"])[0]) and int(s.total_notfinite) == 2
    u, s = opt.update({"w": _f32([1.0, 1.0])}, s, p)
    assert int(s.notfinite_count) == 0 and bool(s.last_finite) and int(s.total_notfinite) == 2
    # under jit
    step = netcl.jit(opt.update)
    s = opt.init(p)
    u, s = step({"w": _f32([np.nan, 1.0])}, s, p)
    _close(u["w"], [0.0, 0.0])
    assert int(s.notfinite_count) == 1


def test_zero_nans():
    opt = optim.chain(optim.zero_nans(), optim.sgd(1.0))
    p = {"a": jnp.zeros((3,)), "b": jnp.zeros((2,))}
    s = opt.init(p)
    assert not bool(s[0].found_nan["a"])
    u, s = opt.update({"a": _f32([1.0, np.nan, 2.0]), "b": _f32([1.0, np.inf])}, s, p)
    _close(u["a"], [-1.0, 0.0, -2.0])
    assert np.isinf(np.asarray(u["b"])[1])                       # only NaNs are replaced
    assert bool(s[0].found_nan["a"]) and not bool(s[0].found_nan["b"])


# ---- a whole jitted training step ---------------------------------------------------------------

def test_jitted_training_step_with_wrappers():
    rng = np.random.default_rng(5)
    x = _f32(rng.normal(size=(16, 3)))
    lab = jnp.asarray(rng.integers(0, 4, size=16).astype(np.int32))
    params = {"w": _f32(rng.normal(size=(3, 4)) * 0.1), "b": jnp.zeros((4,), jnp.float32)}
    opt = optim.MultiSteps(optim.inject_hyperparams(optim.adam)(learning_rate=0.05), 2)

    def loss(p):
        return jnp.mean(optim.softmax_cross_entropy_with_integer_labels(x @ p["w"] + p["b"],
                                                                        lab))

    def step(p, s):
        l, g = netcl.value_and_grad(loss)(p)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s, l

    jstep = netcl.jit(step)
    pe, se = params, opt.init(params)
    pj, sj = params, opt.init(params)
    first = float(loss(params))
    for _ in range(8):
        pe, se, _ = step(pe, se)
        pj, sj, _ = jstep(pj, sj)
    for a, b in zip(tree_leaves((pe, se)), tree_leaves((pj, sj))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert float(loss(pj)) < first
    assert int(sj.gradient_step) == 4 and int(sj.inner_opt_state.count) == 4


# ---- bad input --------------------------------------------------------------------------------

BAD = [
    (lambda: optim.l2_loss(jnp.ones(3, jnp.int32)), TypeError, "l2_loss: predictions"),
    (lambda: optim.squared_error(jnp.ones(3), jnp.ones(4)), ValueError, "squared_error.*shape"),
    (lambda: optim.huber_loss(jnp.ones(3), jnp.ones(4)), ValueError, "huber_loss: predictions"),
    (lambda: optim.huber_loss(jnp.ones(3), delta=-1.0), ValueError, "huber_loss: delta"),
    (lambda: optim.log_cosh([1.0, 2.0]), TypeError, "log_cosh"),
    (lambda: optim.cosine_similarity(jnp.ones((2, 3)), jnp.ones((2, 3)), axis=2), ValueError,
     "cosine_similarity: axis"),
    (lambda: optim.cosine_distance(jnp.ones(3), jnp.ones(3), epsilon=-1.0), ValueError,
     "cosine_distance: epsilon"),
    (lambda: optim.sigmoid_binary_cross_entropy(jnp.ones(3, jnp.int32), jnp.ones(3)),
     TypeError, "sigmoid_binary_cross_entropy: logits"),
    (lambda: optim.sigmoid_focal_loss(jnp.ones(3), jnp.ones(3), alpha=1.5), ValueError,
     "sigmoid_focal_loss: alpha"),
    (lambda: optim.sigmoid_focal_loss(jnp.ones(3), jnp.ones(3), gamma=-1.0), ValueError,
     "sigmoid_focal_loss: gamma"),
    (lambda: optim.hinge_loss(jnp.ones(3), jnp.ones(2)), ValueError, "hinge_loss"),
    (lambda: optim.softmax_cross_entropy(jnp.ones((2, 3)), jnp.ones((2, 4))), ValueError,
     "softmax_cross_entropy: .*labels"),
    (lambda: optim.softmax_cross_entropy(jnp.ones((2, 3)), jnp.ones((2, 3)),
                                         where=jnp.ones((2, 3))), TypeError,
     "softmax_cross_entropy: where"),
    (lambda: optim.softmax_cross_entropy_with_integer_labels(jnp.ones((2, 3)), jnp.ones(2)),
     TypeError, "softmax_cross_entropy_with_integer_labels: labels"),
    (lambda: optim.softmax_cross_entropy_with_integer_labels(
        jnp.ones((2, 3)), jnp.zeros((2, 3), jnp.int32)), ValueError,
     "softmax_cross_entropy_with_integer_labels: labels of shape"),
    (lambda: optim.softmax_cross_entropy_with_integer_labels(
        jnp.ones((2, 3)), jnp.zeros(3, jnp.int32)), ValueError,
     r"softmax_cross_entropy_with_integer_labels: .*labels of shape \(3,\)"),
    (lambda: optim.softmax_cross_entropy_with_integer_labels(
        jnp.ones((2, 3)), jnp.zeros(2, jnp.int32), axis=None), TypeError,
     "softmax_cross_entropy_with_integer_labels: axis"),
    (lambda: optim.safe_softmax_cross_entropy(jnp.ones(()), jnp.ones(())), ValueError,
     "safe_softmax_cross_entropy: logits"),
    (lambda: optim.kl_divergence(jnp.ones(3), jnp.ones(3, jnp.int32)), TypeError,
     "kl_divergence: targets"),
    (lambda: optim.amsgrad(-0.1), ValueError, "amsgrad: learning_rate"),
    (lambda: optim.amsgrad(0.1, b1=1.0), ValueError, "amsgrad: b1"),
    (lambda: optim.scale_by_amsgrad(eps=-1.0), ValueError, "scale_by_amsgrad: eps"),
    (lambda: optim.ema(1.5), ValueError, "ema: decay"),
    (lambda: optim.adafactor(-1.0), ValueError, "adafactor: learning_rate"),
    (lambda: optim.adafactor(0.1, clipping_threshold=0.0), ValueError,
     "adafactor: clipping_threshold"),
    (lambda: optim.adafactor(0.1, min_dim_size_to_factor=2.5), TypeError,
     "scale_by_factored_rms: min_dim_size_to_factor"),
    (lambda: optim.adafactor(0.1, momentum=2.0), ValueError, "adafactor: momentum"),
    (lambda: optim.clip_by_block_rms(0.0), ValueError, "clip_by_block_rms: threshold"),
    (lambda: optim.scale_by_param_block_rms(-1.0), ValueError,
     "scale_by_param_block_rms: min_scale"),
    (lambda: optim.flatten(3), TypeError, "flatten: inner"),
    (lambda: optim.apply_if_finite(optim.sgd(0.1), -1), ValueError,
     "apply_if_finite: max_consecutive_errors"),
    (lambda: optim.apply_if_finite(optim.sgd(0.1), 1.5), TypeError,
     "apply_if_finite: max_consecutive_errors"),
    (lambda: optim.MultiSteps(optim.sgd(0.1), 0), ValueError, "MultiSteps: every_k_schedule"),
    (lambda: optim.MultiSteps("sgd", 2), TypeError, "MultiSteps: opt"),
    (lambda: optim.MultiSteps(optim.sgd(0.1), 2, accumulator_dtype=jnp.int32), TypeError,
     "MultiSteps: accumulator_dtype"),
    (lambda: optim.inject_hyperparams(3), TypeError, "inject_hyperparams: inner_factory"),
    (lambda: optim.inject_hyperparams(optim.sgd, static_args="lr"), ValueError,
     "inject_hyperparams: static_args"),
    (lambda: optim.inject_hyperparams(optim.sgd)(0.1, lr=0.2), TypeError,
     r"inject_hyperparams\(sgd\)"),
    # the factory's own checks run when the wrapper is built, schedules included
    (lambda: optim.inject_hyperparams(optim.adam)(optim.constant_schedule(0.1), b1=1.5),
     ValueError, "adam: b1"),
    (lambda: optim.inject_hyperparams(optim.sgd)(-0.1), ValueError, "sgd: learning_rate"),
]


@pytest.mark.parametrize("make,exc,match", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_inputs(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_bad_states_and_update_inputs():
    p = {"w": jnp.ones((2, 3))}
    g = {"w": jnp.ones((2, 3))}
    opt = optim.inject_hyperparams(optim.sgd)(0.1)
    s = opt.init(p)
    s.hyperparams["learning_rate"] = -1.0       # checked by sgd at the next update
    with pytest.raises(ValueError, match="sgd: learning_rate"):
        opt.update(g, s, p)
    s.hyperparams.pop("learning_rate")
    with pytest.raises(ValueError, match=r"inject_hyperparams\(sgd\): state.hyperparams"):
        opt.update(g, s, p)
    with pytest.raises(ValueError, match="inject_hyperparams: expected a InjectStatefulHyperparamsState"):
        opt.update(g, optim.sgd(0.1).init(p), p)
    ms = optim.MultiSteps(optim.sgd(0.1), 2)
    with pytest.raises(ValueError, match="MultiSteps.update: expected a MultiStepsState"):
        ms.update(g, optim.sgd(0.1).init(p), p)
    with pytest.raises(ValueError, match="MultiSteps.update: updates and state.acc_grads"):
        ms.update({"v": jnp.ones((2, 3))}, ms.init(p), p)
    bad_skip = optim.MultiSteps(optim.sgd(0.1), 2,
                                should_skip_update_fn=lambda u, s, p: (jnp.ones(2), ()))
    with pytest.raises(ValueError, match="should_skip_update_fn must return a 0-d bool"):
        bad_skip.update(g, bad_skip.init(p), p)
    with pytest.raises(ValueError, match="scale_by_factored_rms: .*params"):
        opt = optim.adafactor(0.1)
        opt.update(g, opt.init(p))
    with pytest.raises(ValueError, match="flatten: params has no array leaves"):
        optim.flatten(optim.sgd(0.1)).init({})
    with pytest.raises(ValueError, match="apply_if_finite: expected a ApplyIfFiniteState"):
        optim.apply_if_finite(optim.sgd(0.1), 1).update(g, optim.sgd(0.1).init(p), p)


# ---- agreement with optax itself, where it is installed -----------------------------------------

def test_agreement_with_optax():
    optax = pytest.importorskip("optax")
    import jax.numpy as jjnp

    losses = [
        (optim.l2_loss, optax.l2_loss, (X, T)),
        (optim.huber_loss, optax.huber_loss, (X, T)),
        (optim.log_cosh, optax.log_cosh, (XE[:1],)),
        (optim.cosine_similarity, optax.cosine_similarity, (X, T)),
        (optim.sigmoid_binary_cross_entropy, optax.sigmoid_binary_cross_entropy, (XE, YE)),
        (optim.sigmoid_focal_loss, optax.sigmoid_focal_loss, (XE, YE)),
        (optim.hinge_loss, optax.hinge_loss, (X, SIGNS)),
        (optim.softmax_cross_entropy, optax.softmax_cross_entropy, (X, P)),
        (optim.safe_softmax_cross_entropy, optax.safe_softmax_cross_entropy, (X, P)),
        (optim.softmax_cross_entropy_with_integer_labels,
         optax.softmax_cross_entropy_with_integer_labels, (X, LABELS)),
        (optim.kl_divergence, optax.kl_divergence, (np.log(P), Q)),
    ]
    for ours, theirs, args in losses:
        _close(ours(*[jnp.asarray(a) for a in args]), theirs(*[jjnp.asarray(a) for a in args]),
               rtol=1e-5, atol=1e-5)

    def run(o_opt, n_opt, jit=False):
        params_h, grads_h = _problem(7)
        po = {k: jjnp.asarray(v, jjnp.float32) for k, v in params_h.items()}
        pn = _nc(params_h)
        so, sn = o_opt.init(po), n_opt.init(pn)
        upd = netcl.jit(n_opt.update) if jit else n_opt.update
        for g in grads_h:
            uo, so = o_opt.update({k: jjnp.asarray(v, jjnp.float32) for k, v in g.items()},
                                  so, po)
            un, sn = upd(_nc(g), sn, pn)
            for k in SHAPES:
                np.testing.assert_allclose(np.asarray(un[k]), np.asarray(uo[k]), rtol=1e-4,
                                           atol=1e-6)
            po, pn = optax.apply_updates(po, uo), optim.apply_updates(pn, un)

    run(optax.amsgrad(0.05), optim.amsgrad(0.05))
    run(optax.adafactor(0.05, min_dim_size_to_factor=2, momentum=0.9, weight_decay_rate=1e-2),
        optim.adafactor(0.05, min_dim_size_to_factor=2, momentum=0.9, weight_decay_rate=1e-2))
    run(optax.flatten(optax.adam(0.05)), optim.flatten(optim.adam(0.05)))
    run(optax.MultiSteps(optax.adam(0.05), 3).gradient_transformation(),
        optim.MultiSteps(optim.adam(0.05), 3).gradient_transformation())
    run(optax.inject_hyperparams(optax.adam)(optax.linear_schedule(0.1, 0.01, 4), b1=0.8),
        optim.inject_hyperparams(optim.adam)(optim.linear_schedule(0.1, 0.01, 4), b1=0.8),
        jit=True)
    run(optax.apply_if_finite(optax.adam(0.05), 2), optim.apply_if_finite(optim.adam(0.05), 2))
