"""netcl.optim against hand-written float64 NumPy references (optax's formulas and defaults).

Every optimizer runs 30 steps on a small pytree with random gradients from a fixed seed; the
netcl (float32) updates must match the reference (float64) to a relative 2e-3 at every step.
"""
import math

import numpy as np
import pytest

import netcl
import netcl.random
import netcl.numpy as jnp
from netcl import optim
from netcl.tree_util import tree_leaves, tree_map, tree_structure

STEPS = 30
SHAPES = {"w": (3, 4), "b": (4,), "layers": [(2, 2), ()]}


def _host_tree(rng, scale=1.0):
    return {"w": rng.normal(size=(3, 4)) * scale, "b": rng.normal(size=(4,)) * scale,
            "layers": [rng.normal(size=(2, 2)) * scale, np.asarray(rng.normal() * scale)]}


def _to_netcl(tree):
    return tree_map(lambda x: jnp.asarray(np.asarray(x, np.float32)), tree)


def _to_ref(tree):
    """float32-rounded values, as float64 (both sides see exactly the same numbers)."""
    return [np.asarray(x, np.float32).astype(np.float64) for x in tree_leaves(tree)]


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    params = _host_tree(rng)
    grads = [_host_tree(rng) for _ in range(STEPS)]
    return params, grads


# ---- float64 references: each returns step(i, grads, params) -> updates (leaf lists) ---------
# State lives in closures; `_z(g)` is the zero state for a list of leaves.

def _z(g, value=0.0):
    return [np.full_like(x, value) for x in g]


def _ema(decay, new, old):
    return [(1 - decay) * x + decay * o for x, o in zip(new, old)]


def ref_sgd(lr, momentum=None, nesterov=False):
    st = {}

    def step(i, g, p):
        if momentum is None:
            return [-lr * x for x in g]
        t = st["t"] = [x + momentum * o for x, o in zip(g, st.get("t") or _z(g))]
        d = [x + momentum * tt for x, tt in zip(g, t)] if nesterov else t
        return [-lr * x for x in d]
    return step


def _adam_dirs(b1, b2, eps, eps_root, nesterov=False):
    """Adam's direction m_hat / (sqrt(v_hat + eps_root) + eps) at step i (0-based)."""
    st = {}

    def dirs(i, g):
        m = st["m"] = _ema(b1, g, st.get("m") or _z(g))
        v = st["v"] = _ema(b2, [x * x for x in g], st.get("v") or _z(g))
        t = i + 1
        if nesterov:
            mh = [b1 * a / (1 - b1 ** (t + 1)) + (1 - b1) * x / (1 - b1 ** t)
                  for a, x in zip(m, g)]
        else:
            mh = [a / (1 - b1 ** t) for a in m]
        return [a / (np.sqrt(b / (1 - b2 ** t) + eps_root) + eps) for a, b in zip(mh, v)]
    return dirs


def ref_adam(lr, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, nesterov=False):
    dirs = _adam_dirs(b1, b2, eps, eps_root, nesterov)
    return lambda i, g, p: [-_lr(lr, i) * d for d in dirs(i, g)]


def ref_adamw(lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-4, mask=None):
    dirs = _adam_dirs(b1, b2, eps, 0.0)
    mask = mask or [True] * 4
    return lambda i, g, p: [-lr * (d + (weight_decay * x if m else 0))
                            for d, x, m in zip(dirs(i, g), p, mask)]


def ref_rmsprop(lr, decay=0.9, eps=1e-8, initial_scale=0.0, centered=False, momentum=None,
                nesterov=False):
    st = {}

    def step(i, g, p):
        nu = st["nu"] = _ema(decay, [x * x for x in g], st.get("nu") or _z(g, initial_scale))
        if centered:
            mu = st["mu"] = _ema(decay, g, st.get("mu") or _z(g))
            u = [-lr * x / np.sqrt(n - m * m + eps) for x, n, m in zip(g, nu, mu)]
        else:
            u = [-lr * x / np.sqrt(n + eps) for x, n in zip(g, nu)]
        if momentum is None:
            return u
        t = st["t"] = [x + momentum * o for x, o in zip(u, st.get("t") or _z(u))]
        return [x + momentum * tt for x, tt in zip(u, t)] if nesterov else t
    return step


def ref_adagrad(lr, initial_accumulator_value=0.1, eps=1e-7):
    st = {}

    def step(i, g, p):
        s = st["s"] = [x * x + a for x, a in zip(g, st.get("s") or
                                                 _z(g, initial_accumulator_value))]
        return [-lr * x / np.sqrt(a + eps) for x, a in zip(g, s)]
    return step


def ref_lamb(lr, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0):
    dirs = _adam_dirs(b1, b2, eps, 0.0)

    def step(i, g, p):
        out = []
        for d, x in zip(dirs(i, g), p):
            a = d + weight_decay * x
            pn, an = np.linalg.norm(x), np.linalg.norm(a)
            r = 1.0 if pn == 0 or an == 0 else pn / an
            out.append(-lr * r * a)
        return out
    return step


def ref_lion(lr, b1=0.9, b2=0.99, weight_decay=1e-3):
    st = {}

    def step(i, g, p):
        m = st.get("m") or _z(g)
        u = [-lr * (np.sign((1 - b1) * x + b1 * a) + weight_decay * w)
             for x, a, w in zip(g, m, p)]
        st["m"] = _ema(b2, g, m)
        return u
    return step


def _lr(lr, i):
    return lr(i) if callable(lr) else lr


def _run(opt, ref, seed=0, rtol=2e-3):
    """Run opt (netcl) and ref (NumPy float64) side by side for STEPS steps."""
    params_h, grads_h = _problem(seed)
    params, ref_params = _to_netcl(params_h), _to_ref(params_h)
    state = opt.init(params)
    for i, g_h in enumerate(grads_h):
        updates, state = opt.update(_to_netcl(g_h), state, params)
        want = ref(i, _to_ref(g_h), ref_params)
        got = [np.asarray(u, np.float64) for u in tree_leaves(updates)]
        assert tree_structure(updates) == tree_structure(params)
        for gu, wu in zip(got, want):
            scale = max(np.max(np.abs(wu)), 1e-30)
            np.testing.assert_allclose(gu, wu, rtol=rtol, atol=rtol * scale * 1e-2,
                                       err_msg=f"step {i}")
        params = optim.apply_updates(params, updates)
        ref_params = [p + u for p, u in zip(ref_params, want)]
    for got, want in zip(tree_leaves(params), ref_params):
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=1e-5)
    return state


ALIASES = [
    ("sgd", lambda: optim.sgd(0.1), ref_sgd(0.1)),
    ("sgd_momentum", lambda: optim.sgd(0.1, momentum=0.9), ref_sgd(0.1, 0.9)),
    ("sgd_nesterov", lambda: optim.sgd(0.1, momentum=0.9, nesterov=True),
     ref_sgd(0.1, 0.9, True)),
    ("adam", lambda: optim.adam(1e-2), ref_adam(1e-2)),
    ("adam_eps_root", lambda: optim.adam(1e-2, b1=0.8, b2=0.99, eps=1e-3, eps_root=1e-4),
     ref_adam(1e-2, 0.8, 0.99, 1e-3, 1e-4)),
    ("nadam", lambda: optim.nadam(1e-2), ref_adam(1e-2, nesterov=True)),
    ("adamw", lambda: optim.adamw(1e-2, weight_decay=0.1), ref_adamw(1e-2, weight_decay=0.1)),
    ("adamw_default_wd", lambda: optim.adamw(1e-2), ref_adamw(1e-2)),
    ("adamw_mask", lambda: optim.adamw(1e-2, weight_decay=0.5,
                                       mask={"w": True, "b": False, "layers": [True, False]}),
     ref_adamw(1e-2, weight_decay=0.5, mask=[False, True, False, True])),  # leaf order b, l0, l1, w
    ("rmsprop", lambda: optim.rmsprop(1e-2), ref_rmsprop(1e-2)),
    ("rmsprop_init_scale", lambda: optim.rmsprop(1e-2, decay=0.8, initial_scale=1.0),
     ref_rmsprop(1e-2, 0.8, initial_scale=1.0)),
    ("rmsprop_centered_momentum",
     lambda: optim.rmsprop(1e-2, centered=True, momentum=0.9, nesterov=True),
     ref_rmsprop(1e-2, centered=True, momentum=0.9, nesterov=True)),
    ("adagrad", lambda: optim.adagrad(0.1), ref_adagrad(0.1)),
    ("lamb", lambda: optim.lamb(1e-2, weight_decay=0.1), ref_lamb(1e-2, weight_decay=0.1)),
    ("lion", lambda: optim.lion(1e-3), ref_lion(1e-3)),
    ("lion_no_wd", lambda: optim.lion(1e-3, b1=0.5, b2=0.9, weight_decay=0.0),
     ref_lion(1e-3, 0.5, 0.9, 0.0)),
]


@pytest.mark.parametrize("name,make,ref", ALIASES, ids=[a[0] for a in ALIASES])
def test_alias_matches_reference(name, make, ref):
    _run(make(), ref)


def test_learning_rate_schedule_in_alias():
    sched = optim.exponential_decay(1e-2, transition_steps=5, decay_rate=0.5)
    state = _run(optim.adam(sched), ref_adam(lambda i: 1e-2 * 0.5 ** (i / 5)))
    count = state[1].count
    assert count.dtype == jnp.int32 and count.shape == () and int(count) == STEPS
    assert state[0].count.dtype == jnp.int32 and int(state[0].count) == STEPS


def test_sgd_state_structure_matches_optax():
    p = _to_netcl(_problem()[0])
    assert optim.sgd(0.1).init(p) == (optim.EmptyState(), optim.EmptyState())
    s = optim.adam(0.1).init(p)
    assert isinstance(s[0], optim.ScaleByAdamState) and s[1] == optim.EmptyState()
    assert tree_structure(s[0].mu) == tree_structure(p)
    s = optim.adam(optim.constant_schedule(0.1)).init(p)
    assert isinstance(s[1], optim.ScaleByScheduleState)


# ---- individual transformations ---------------------------------------------------------

def _ref_rms_variant(eps, eps_in_sqrt, bias_correction, centered, decay=0.9):
    st = {}

    def step(i, g, p):
        nu = st["nu"] = _ema(decay, [x * x for x in g], st.get("nu") or _z(g))
        mu = st["mu"] = _ema(decay, g, st.get("mu") or _z(g))
        c = 1 - decay ** (i + 1) if bias_correction else 1.0
        out = []
        for x, n, m in zip(g, nu, mu):
            var = n / c - (m / c) ** 2 if centered else n / c
            out.append(x / np.sqrt(var + eps) if eps_in_sqrt else x / (np.sqrt(var) + eps))
        return out
    return step


# (centered with bias correction has var = 0 exactly at step 1: too ill-conditioned to compare)
@pytest.mark.parametrize("centered,eps_in_sqrt,bias_correction", [
    (False, True, False), (False, False, True), (True, True, False), (True, False, False)])
def test_scale_by_rms_and_stddev_variants(centered, eps_in_sqrt, bias_correction):
    fn = optim.scale_by_stddev if centered else optim.scale_by_rms
    _run(fn(eps=1e-6, eps_in_sqrt=eps_in_sqrt, bias_correction=bias_correction),
         _ref_rms_variant(1e-6, eps_in_sqrt, bias_correction, centered))


def test_trace_and_scale_chain():
    opt = optim.chain(optim.trace(decay=0.5), optim.scale(-0.3))
    _run(opt, ref_sgd(0.3, 0.5))


def test_scale_by_trust_ratio_options():
    def ref(i, g, p):
        out = []
        for x, w in zip(g, p):
            pn, un = max(np.linalg.norm(w), 0.5), max(np.linalg.norm(x), 0.5)
            out.append(x * 2.0 * pn / (un + 0.1))
        return out
    _run(optim.scale_by_trust_ratio(min_norm=0.5, trust_coefficient=2.0, eps=0.1), ref)


def test_scale_by_trust_ratio_zero_norms():
    opt = optim.scale_by_trust_ratio()
    p = {"a": jnp.zeros((3,)), "b": jnp.ones((2,))}
    g = {"a": jnp.ones((3,)), "b": jnp.zeros((2,))}
    u, _ = opt.update(g, opt.init(p), p)
    np.testing.assert_array_equal(np.asarray(u["a"]), np.ones(3))
    np.testing.assert_array_equal(np.asarray(u["b"]), np.zeros(2))


def test_scale_by_schedule_and_learning_rate():
    sched = optim.linear_schedule(1.0, 0.0, transition_steps=20, transition_begin=5)

    def f(i):
        return 1.0 - min(max(i - 5, 0), 20) / 20
    _run(optim.scale_by_schedule(sched), lambda i, g, p: [f(i) * x for x in g])
    _run(optim.scale_by_learning_rate(sched), lambda i, g, p: [-f(i) * x for x in g])
    _run(optim.scale_by_learning_rate(0.5, flip_sign=False), lambda i, g, p: [0.5 * x for x in g])
    assert optim.scale_by_learning_rate(None).init({}) == optim.EmptyState()


@pytest.mark.parametrize("mode", ["hard", "smooth", "refined"])
def test_scale_by_lion_modes(mode):
    fn = {"hard": np.sign, "smooth": lambda x: np.tanh(2.0 * x),
          "refined": lambda x: np.where(np.abs(x) < 1.0, x, np.sign(x))}[mode]
    st = {}

    def ref(i, g, p):
        m = st.get("m") or _z(g)
        st["m"] = _ema(0.9, g, m)
        return [fn(0.5 * x + 0.5 * a) for x, a in zip(g, m)]
    _run(optim.scale_by_lion(b1=0.5, b2=0.9, mode=mode, smooth_beta=2.0), ref)


def test_add_decayed_weights_and_masked():
    _run(optim.add_decayed_weights(0.3), lambda i, g, p: [x + 0.3 * w for x, w in zip(g, p)])
    # mask as a function of params; leaf order: b, layers[0], layers[1], w
    opt = optim.add_decayed_weights(0.3, mask=lambda ps: tree_map(lambda x: x.ndim == 2, ps))
    _run(opt, lambda i, g, p: [x + (0.3 * w if w.ndim == 2 else 0) for x, w in zip(g, p)])
    # masked stateful inner: the inner state covers only the selected leaves
    opt = optim.masked(optim.trace(0.5), {"w": False, "b": True, "layers": False})
    trace_ref = ref_sgd(-1.0, 0.5)
    st = _run(opt, lambda i, g, p: [trace_ref(i, g[:1], p[:1])[0]] + g[1:])
    assert len(tree_leaves(st.inner_state)) == 1


def test_clip():
    _run(optim.clip(0.5), lambda i, g, p: [np.clip(x, -0.5, 0.5) for x in g])


def test_clip_by_global_norm():
    def ref(i, g, p):
        n = math.sqrt(sum(float(np.sum(x * x)) for x in g))
        return [x * (2.0 / n) if n >= 2.0 else x for x in g]
    _run(optim.clip_by_global_norm(2.0), ref)
    _run(optim.clip_by_global_norm(100.0), lambda i, g, p: g)  # below the threshold: unchanged
    g = {"a": jnp.asarray(np.array([3.0, 0.0], np.float32)),
         "b": jnp.asarray(np.array([[4.0]], np.float32))}
    assert float(optim.global_norm(g)) == pytest.approx(5.0)
    u, _ = optim.clip_by_global_norm(1.0).update(g, optim.EmptyState())
    np.testing.assert_allclose(np.asarray(u["a"]), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(u["b"]), [[0.8]], rtol=1e-6)
    z = tree_map(jnp.zeros_like, g)  # zero norm: no NaN
    u, _ = optim.clip_by_global_norm(1.0).update(z, optim.EmptyState())
    assert all(np.all(np.asarray(x) == 0) for x in tree_leaves(u))


def test_chain_clip_adam_composition():
    def ref():
        dirs = _adam_dirs(0.9, 0.999, 1e-8, 0.0)

        def step(i, g, p):
            n = math.sqrt(sum(float(np.sum(x * x)) for x in g))
            g = [x * (1.0 / n) if n >= 1.0 else x for x in g]
            return [-1e-2 * d for d in dirs(i, g)]
        return step
    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.adam(1e-2))
    state = _run(opt, ref())
    assert isinstance(state, tuple) and len(state) == 2 and len(state[1]) == 2


def test_identity_stateless_apply_updates():
    p = {"a": jnp.ones((2,)), "n": None, "h": jnp.ones((2,), jnp.float16)}
    u = {"a": jnp.full((2,), 0.5), "n": None, "h": jnp.full((2,), 0.25)}
    out, st = optim.identity().update(u, optim.identity().init(p))
    assert out is u and st == optim.EmptyState()
    new = optim.apply_updates(p, u)
    assert new["n"] is None and new["h"].dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(new["a"]), [1.5, 1.5])
    np.testing.assert_array_equal(np.asarray(new["h"]), [1.25, 1.25])
    neg = optim.stateless(lambda g, params: tree_map(lambda x: -x, g))
    out, _ = neg.update({"a": jnp.ones((2,))}, neg.init(None))
    np.testing.assert_array_equal(np.asarray(out["a"]), [-1.0, -1.0])


def test_add_noise_is_deterministic_and_annealed():
    opt = optim.add_noise(eta=0.01, gamma=0.55, seed=3)
    g = {"a": jnp.zeros((400,)), "b": jnp.zeros((3,))}
    u1, s1 = opt.update(g, opt.init(g))
    u1b, _ = opt.update(g, opt.init(g))
    np.testing.assert_array_equal(np.asarray(u1["a"]), np.asarray(u1b["a"]))
    key_opt = optim.add_noise(0.01, 0.55, netcl.random.PRNGKey(3))
    u1c, _ = key_opt.update(g, key_opt.init(g))
    np.testing.assert_array_equal(np.asarray(u1["a"]), np.asarray(u1c["a"]))
    u2, s2 = opt.update(g, s1)
    assert int(s2.count) == 2
    a1, a2 = np.asarray(u1["a"]), np.asarray(u2["a"])
    assert not np.array_equal(a1, a2)
    # variance eta / t^gamma at step t (1-based)
    assert np.std(a1) == pytest.approx(math.sqrt(0.01), rel=0.2)
    assert np.std(a2) == pytest.approx(math.sqrt(0.01 / 2 ** 0.55), rel=0.2)


# ---- schedules ----------------------------------------------------------------------------

def _check_schedule(sched, formula, steps):
    for s in steps:
        want = formula(s)
        for count in (s, jnp.asarray(s, jnp.int32)):
            got = float(np.asarray(sched(count)))
            assert got == pytest.approx(want, rel=1e-5, abs=1e-7), (s, got, want)


def test_constant_and_polynomial_schedules():
    _check_schedule(optim.constant_schedule(0.3), lambda s: 0.3, [0, 7])
    _check_schedule(optim.linear_schedule(1.0, 0.1, 10, transition_begin=3),
                    lambda s: 1.0 + (0.1 - 1.0) * min(max(s - 3, 0), 10) / 10,
                    [0, 2, 3, 4, 8, 12, 13, 14, 100])
    _check_schedule(optim.polynomial_schedule(2.0, 0.5, 3, 8),
                    lambda s: (2.0 - 0.5) * (1 - min(s, 8) / 8) ** 3 + 0.5, [0, 1, 4, 7, 8, 20])
    _check_schedule(optim.linear_schedule(0.7, 0.0, 0), lambda s: 0.7, [0, 5])


def test_exponential_decay():
    _check_schedule(optim.exponential_decay(1.0, 10, 0.5),
                    lambda s: 0.5 ** (s / 10), [0, 1, 5, 10, 11, 37])
    _check_schedule(optim.exponential_decay(2.0, 4, 0.1, transition_begin=3, staircase=True),
                    lambda s: 2.0 if s <= 3 else 2.0 * 0.1 ** math.floor((s - 3) / 4),
                    [0, 3, 4, 6, 7, 8, 11, 12])
    _check_schedule(optim.exponential_decay(1.0, 1, 0.5, end_value=0.1),
                    lambda s: max(0.5 ** s, 0.1), [0, 1, 3, 4, 10])
    _check_schedule(optim.exponential_decay(1.0, 2, 2.0, end_value=5.0),
                    lambda s: min(2.0 ** (s / 2), 5.0), [0, 2, 4, 5, 6, 20])


def test_cosine_schedules():
    def cos(init, steps, alpha, exponent=1.0):
        def f(s):
            c = 0.5 * (1 + math.cos(math.pi * min(s, steps) / steps))
            return init * ((1 - alpha) * c ** exponent + alpha)
        return f
    _check_schedule(optim.cosine_decay_schedule(1.0, 100),
                    cos(1.0, 100, 0.0), [0, 1, 25, 50, 99, 100, 150])
    _check_schedule(optim.cosine_decay_schedule(0.5, 20, alpha=0.1, exponent=2.0),
                    cos(0.5, 20, 0.1, 2.0), [0, 5, 10, 19, 20, 21])

    def warm(s):
        if s < 10:
            return 0.1 + (1.0 - 0.1) * s / 10
        return cos(1.0, 90, 0.05)(s - 10)
    _check_schedule(optim.warmup_cosine_decay_schedule(0.1, 1.0, 10, 100, end_value=0.05),
                    warm, [0, 5, 9, 10, 11, 55, 99, 100, 200])


def test_piecewise_and_join_schedules():
    sched = optim.piecewise_constant_schedule(1.0, {10: 0.5, 5: 0.1, 20: 2.0})

    def f(s):
        v = 1.0
        for b, sc in ((5, 0.1), (10, 0.5), (20, 2.0)):
            v *= sc if s >= b else 1.0
        return v
    _check_schedule(sched, f, [0, 4, 5, 6, 9, 10, 19, 20, 30])
    _check_schedule(optim.piecewise_constant_schedule(0.3), lambda s: 0.3, [0, 100])
    joined = optim.join_schedules([optim.constant_schedule(1.0),
                                   optim.linear_schedule(1.0, 0.0, 10),
                                   optim.constant_schedule(0.25)], [5, 15])
    _check_schedule(joined, lambda s: 1.0 if s < 5 else (1.0 - (s - 5) / 10 if s < 15 else 0.25),
                    [0, 4, 5, 6, 14, 15, 16])


# ---- loss scaling -------------------------------------------------------------------------

def test_dynamic_loss_scale_state_machine():
    ls = optim.DynamicLossScale(8.0, period=3, factor=2, min_loss_scale=2.0)
    flags = [True, True, True, True, False, True, False, False, False, True, True, True]
    scale, counter = 8.0, 0
    for f in flags:
        ls = ls.adjust(jnp.asarray(f))
        if f:
            if counter == 2:
                scale, counter = scale * 2, 0
            else:
                counter += 1
        else:
            scale, counter = max(scale / 2, 2.0), 0
        assert float(ls.loss_scale) == scale and int(ls.counter) == counter
        assert ls.loss_scale.dtype == jnp.float32 and ls.counter.dtype == jnp.int32
    leaves, treedef = netcl.tree_util.tree_flatten(ls)
    assert len(leaves) == 2 and treedef.unflatten(leaves).period == 3


def test_loss_scale_scale_unscale_and_all_finite():
    ls = optim.DynamicLossScale(2.0 ** 10)
    loss = jnp.asarray(np.float32(0.75))
    assert float(ls.scale(loss)) == 0.75 * 1024
    grads = {"a": jnp.asarray(np.array([1024.0, -2048.0], np.float16)),
             "b": jnp.asarray(np.array([512.0], np.float32)), "i": jnp.asarray([3])}
    un = ls.unscale(grads)
    assert un["a"].dtype == jnp.float16 and un["i"].dtype == grads["i"].dtype
    np.testing.assert_array_equal(np.asarray(un["a"]), [1.0, -2.0])
    np.testing.assert_array_equal(np.asarray(un["b"]), [0.5])
    assert bool(optim.all_finite(grads)) and bool(optim.all_finite({}))
    for bad in (np.inf, -np.inf, np.nan):
        g = dict(grads, b=jnp.asarray(np.array([1.0, bad], np.float32)))
        assert not bool(optim.all_finite(g))
    assert float(optim.StaticLossScale(4.0).scale(loss)) == 3.0
    assert optim.NoOpLossScale().unscale(grads) is grads
    picked = optim.select_tree(jnp.asarray(False), {"x": jnp.ones((2,))}, {"x": jnp.zeros((2,))})
    np.testing.assert_array_equal(np.asarray(picked["x"]), [0.0, 0.0])


def test_loss_scale_under_grad():
    ls = optim.DynamicLossScale(2.0 ** 8)
    x = jnp.asarray(np.array([1.0, 2.0], np.float32))
    g = netcl.grad(lambda w: ls.scale(jnp.sum(w * w)))(x)
    np.testing.assert_allclose(np.asarray(ls.unscale(g)), [2.0, 4.0])


# ---- bad input ----------------------------------------------------------------------------

def test_state_from_another_tree_is_rejected():
    p = _to_netcl(_problem()[0])
    other = {"w": jnp.ones((3, 4)), "b": jnp.ones((4,))}
    for opt in (optim.adam(0.1), optim.sgd(0.1, momentum=0.9), optim.rmsprop(0.1),
                optim.adagrad(0.1), optim.lion(0.1)):
        state = opt.init(other)
        with pytest.raises(ValueError, match=r"(?s)structure.*'layers'.*\{'b': \*, 'w': \*\}"):
            opt.update(p, state, p)
    with pytest.raises(ValueError, match="apply_updates"):
        optim.apply_updates(p, other)
    with pytest.raises(ValueError, match="chain: expected a tuple of 2 states"):
        optim.adam(0.1).update(p, optim.sgd(0.1, 0.9).init(p)[0], p)
    with pytest.raises(ValueError, match="scale_by_adam: expected a ScaleByAdamState"):
        optim.adam(0.1).update(p, optim.sgd(0.1, momentum=0.9).init(p), p)
    with pytest.raises(ValueError, match="add_decayed_weights: .*params"):
        optim.adamw(0.1).update(p, optim.adamw(0.1).init(p))


@pytest.mark.parametrize("make,match", [
    (lambda: optim.sgd(-0.1), "sgd: learning_rate"),
    (lambda: optim.adam(-1e-3), "adam: learning_rate"),
    (lambda: optim.adam(1e-3, b1=1.0), "adam: b1"),
    (lambda: optim.adam(1e-3, b2=-0.1), "adam: b2"),
    (lambda: optim.adam(1e-3, eps=-1.0), "adam: eps"),
    (lambda: optim.adamw(1e-3, weight_decay=-1.0), "adamw: weight_decay"),
    (lambda: optim.sgd(0.1, momentum=1.5), "sgd: momentum"),
    (lambda: optim.rmsprop(0.1, decay=2.0), "rmsprop: decay"),
    (lambda: optim.rmsprop(0.1, momentum=-0.5), "rmsprop: momentum"),
    (lambda: optim.lion(0.1, b2=1.1), "lion: b2"),
    (lambda: optim.scale_by_lion(mode="soft"), "scale_by_lion: mode"),
    (lambda: optim.lamb(float("nan")), "lamb: learning_rate"),
    (lambda: optim.adagrad(0.1, initial_accumulator_value=-1), "adagrad: initial_acc"),
    (lambda: optim.trace(decay=-0.1), "trace: decay"),
    (lambda: optim.scale_by_learning_rate(-1.0), "scale_by_learning_rate: learning_rate"),
    (lambda: optim.clip(-1.0), "clip: max_delta"),
    (lambda: optim.clip_by_global_norm(0.0), "clip_by_global_norm: max_norm"),
    (lambda: optim.cosine_decay_schedule(1.0, 0), "cosine_decay_schedule: decay_steps"),
    (lambda: optim.warmup_cosine_decay_schedule(0.0, 1.0, 10, 10), "warmup_cosine.*decay_steps"),
    (lambda: optim.exponential_decay(1.0, 10, -0.5), "exponential_decay: decay_rate"),
    (lambda: optim.piecewise_constant_schedule(1.0, {5: -1.0}), "piecewise_constant.*5"),
    (lambda: optim.join_schedules([optim.constant_schedule(1.0)], [3]), "join_schedules"),
    (lambda: optim.DynamicLossScale(2.0, period=0), "DynamicLossScale: period"),
    (lambda: optim.DynamicLossScale(-2.0), "DynamicLossScale: loss_scale"),
    (lambda: optim.DynamicLossScale(2.0).adjust(jnp.ones((2,), jnp.bool_)), "adjust"),
])
def test_bad_hyperparameters(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_types():
    with pytest.raises(TypeError, match="scale: step_size"):
        optim.scale("0.1")
    with pytest.raises(TypeError, match="chain: argument 1"):
        optim.chain(optim.identity(), 3)
    with pytest.raises(TypeError, match="linear_schedule: transition_steps"):
        optim.linear_schedule(1.0, 0.0, 2.5)


# ---- transforms: grad, vmap, end to end -----------------------------------------------------

def test_meta_gradient_through_update():
    """d/d lr of a loss after one momentum-SGD step (the learning rate traced by grad)."""
    p = jnp.asarray(np.array([1.0, -2.0], np.float32))
    g = jnp.asarray(np.array([0.5, 1.0], np.float32))

    def after_step(lr):
        opt = optim.sgd(lr, momentum=0.9)
        u, _ = opt.update(g, opt.init(p), p)
        new = optim.apply_updates(p, u)
        return jnp.sum(new * new)
    # new = p - lr * g  ->  d/dlr sum(new^2) = -2 * sum((p - lr g) g)
    lr = 0.1
    want = -2 * float(np.sum((np.array([1.0, -2.0]) - lr * np.array([0.5, 1.0]))
                             * np.array([0.5, 1.0])))
    assert float(netcl.grad(after_step)(jnp.asarray(np.float32(lr)))) == pytest.approx(want,
                                                                                        rel=1e-5)


def test_update_under_vmap():
    """vmap of an adam step over a batch of independent problems == a loop."""
    rng = np.random.default_rng(1)
    P = rng.normal(size=(3, 5)).astype(np.float32)
    G = rng.normal(size=(3, 5)).astype(np.float32)
    opt = optim.adam(0.1)

    def step(p, g):
        u, s = opt.update(g, opt.init(p), p)
        return optim.apply_updates(p, u), s[0].nu

    new, nu = netcl.vmap(step)(jnp.asarray(P), jnp.asarray(G))
    for i in range(3):
        want_p, want_nu = step(jnp.asarray(P[i]), jnp.asarray(G[i]))
        np.testing.assert_allclose(np.asarray(new)[i], np.asarray(want_p), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(nu)[i], np.asarray(want_nu), rtol=1e-6)


def test_adam_minimises_a_quadratic():
    rng = np.random.default_rng(2)
    target = {"w": rng.normal(size=(3, 2)).astype(np.float32),
              "b": rng.normal(size=(2,)).astype(np.float32)}
    scale = {"w": np.float32(1.0), "b": np.float32(10.0)}

    def loss(params):
        return sum(jnp.sum(scale[k] * (params[k] - target[k]) ** 2) for k in params)

    params = {"w": jnp.zeros((3, 2)), "b": jnp.zeros((2,))}
    opt = optim.adam(optim.exponential_decay(0.2, 40, 0.5))
    state = opt.init(params)
    first = float(loss(params))
    for _ in range(150):
        l, g = netcl.value_and_grad(loss)(params)
        updates, state = opt.update(g, state, params)
        params = optim.apply_updates(params, updates)
    assert float(loss(params)) < 1e-4 * first
    for k in params:
        np.testing.assert_allclose(np.asarray(params[k]), target[k], atol=1e-2)


def test_jitted_step_matches_eager():
    """A jitted training step (schedule + clipping + adamw + dynamic loss scale) == eager."""
    params_h, grads_h = _problem(3)
    opt = optim.chain(optim.clip_by_global_norm(1.0),
                      optim.adamw(optim.warmup_cosine_decay_schedule(0.0, 1e-2, 2, 6)))

    def step(params, state, ls, grads):
        grads = ls.unscale(ls.scale(grads))
        finite = optim.all_finite(grads)
        updates, new_state = opt.update(grads, state, params)
        params = optim.select_tree(finite, optim.apply_updates(params, updates), params)
        return params, optim.select_tree(finite, new_state, state), ls.adjust(finite)

    jitted = netcl.jit(step)
    p_e = p_j = _to_netcl(params_h)
    s_e = s_j = opt.init(p_e)
    ls_e = ls_j = optim.DynamicLossScale(2.0 ** 4, period=2)
    for g_h in grads_h[:4]:
        g = _to_netcl(g_h)
        p_e, s_e, ls_e = step(p_e, s_e, ls_e, g)
        p_j, s_j, ls_j = jitted(p_j, s_j, ls_j, g)
    for a, b in zip(tree_leaves((p_e, s_e, ls_e)), tree_leaves((p_j, s_j, ls_j))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-7)
    assert int(s_j[1][0].count) == 4 and float(ls_j.loss_scale) == 2.0 ** 6
