"""Eager grad's compiled backward (transforms/eager_backward.py): the backward pass of a tape
structure seen before runs as one jitted function of the residuals. Its gradients must be
those of the eager backward (bit for bit on CPUs, see _same), and f must still run (side
effects, control flow on values) at every call."""
import numpy as np
import pyopencl as cl
import pytest

import netcl
import netcl.numpy as jnp
from netcl.transforms import eager_backward
from util import assert_close


@pytest.fixture
def cache(monkeypatch):
    """The compiled backward from the first call of a structure on (threshold 1), empty."""
    monkeypatch.setattr(eager_backward, "THRESHOLD", 1)
    eager_backward.clear()
    yield eager_backward
    eager_backward.clear()


def _eager(fun, *args, monkeypatch):
    monkeypatch.setattr(eager_backward, "THRESHOLD", 0)
    try:
        return fun(*args)
    finally:
        monkeypatch.setattr(eager_backward, "THRESHOLD", 1)


def _same(a, b):
    """Equal bit for bit on CPUs (PoCL: a fused kernel computes each op as its eager kernel
    does, and jit's reductions sum in the eager order); elsewhere up to float reassociation
    (an NVIDIA GPU's fused reductions sum in another order than the eager ones)."""
    exact = netcl.default_device().kind == "cpu"
    la, lb = netcl.tree_util.tree_leaves(a), netcl.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            tol = 1e-12 if x.dtype == np.float64 else 1e-5
            np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def w7(np_):
    def f(x):
        y = np_.sin(x) * 2.0 + np_.cos(x * x)
        z = np_.exp(-y * y) + np_.tanh(y) * x
        z = np_.log1p(z * z) - np_.sqrt(np_.abs(x) + 1.0)
        return np_.sum(z * y + x / (1.0 + x * x))
    return f


def _rand(*shape, seed=0, dtype=np.float32):
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


CASES = {
    "w7": (w7(jnp), lambda: (_rand(16),)),
    "w7_f64": (w7(jnp), lambda: (_rand(7, dtype=np.float64),)),
    "bias_broadcast": (lambda w, b, x: jnp.sum(jnp.tanh(x @ w + b) ** 2),
                       lambda: (_rand(4, 3, seed=1), _rand(3, seed=2), _rand(5, 4, seed=3))),
    "softmax_max": (lambda x: jnp.sum(netcl.nn.log_softmax(x, axis=-1) * x) +
                    jnp.max(x) + jnp.mean(jnp.maximum(x, 0.1)),
                    lambda: (_rand(3, 6, seed=4),)),
    "where_slices": (lambda x: jnp.sum(jnp.where(x > 0, x * x, -x)[1:, ::2]) +
                     jnp.sum(jnp.transpose(x) * 3.0),
                     lambda: (_rand(4, 5, seed=5),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_backward_matches_eager_bit_for_bit(cache, monkeypatch, name):
    fun, make = CASES[name]
    args = make()
    argnums = tuple(range(len(args)))
    vg = netcl.value_and_grad(fun, argnums=argnums)
    want = _eager(vg, *args, monkeypatch=monkeypatch)
    compiles = cache.stats["compiles"]
    got = vg(*args)                       # compiled here (threshold 1)
    assert cache.stats["compiles"] == compiles + 1
    hits = cache.stats["hits"]
    again = vg(*args)                     # and reused
    assert cache.stats["hits"] == hits + 1
    _same(got, want)
    _same(again, want)


def test_new_values_same_structure_reuse_the_compiled_backward(cache, monkeypatch):
    g = netcl.grad(w7(jnp))
    g(_rand(16, seed=0))
    hits = cache.stats["hits"]
    for seed in (1, 2, 3):
        x = _rand(16, seed=seed)
        _same(g(x), _eager(g, x, monkeypatch=monkeypatch))
    assert cache.stats["hits"] == hits + 3


def test_side_effects_and_control_flow_run_every_call(cache):
    calls = []

    def f(x):
        calls.append(1)
        if float(jnp.sum(x)) > 0:           # a value decides the tape's structure
            return jnp.sum(jnp.sin(x) * x)
        return jnp.sum(jnp.exp(x))
    g = netcl.grad(f)
    xp = jnp.asarray(np.array([1.0, 2.0, 0.5], np.float32))
    xn = -xp
    for _ in range(3):
        assert_close(g(xp), np.cos(np.asarray(xp)) * np.asarray(xp) + np.sin(np.asarray(xp)))
        assert_close(g(xn), np.exp(np.asarray(xn)))
    assert len(calls) == 6
    assert cache.stats["hits"] >= 4


def test_vjp_with_given_cotangents_and_pytrees(cache, monkeypatch):
    def f(p, x):
        return {"a": jnp.tanh(p["w"] * x), "b": jnp.sum(p["w"] * p["v"])}
    p = {"w": _rand(5, seed=1), "v": _rand(5, seed=2)}
    x = _rand(5, seed=3)
    ct = {"a": _rand(5, seed=4), "b": jnp.asarray(np.float32(0.5))}

    def run(p, x):
        return netcl.vjp(f, p, x)[1](ct)
    want = _eager(run, p, x, monkeypatch=monkeypatch)
    for _ in range(2):
        _same(run(p, x), want)
    assert cache.stats["hits"] >= 1


def test_unused_and_integer_inputs(cache, monkeypatch):
    def f(x, y, n):
        return jnp.sum(x * x) + n.astype(jnp.float32).sum() * 0.0
    x, y = _rand(3), _rand(4, seed=1)
    n = jnp.arange(3)
    g = netcl.grad(f, argnums=(0, 1))
    want = _eager(g, x, y, n, monkeypatch=monkeypatch)
    for _ in range(2):
        _same(g(x, y, n), want)
    assert np.all(np.asarray(g(x, y, n)[1]) == 0)


def test_grad_of_grad_and_jacrev_eagerly(cache, monkeypatch):
    f = lambda x: jnp.sum(jnp.sin(x) * x)  # noqa: E731
    x = _rand(4)
    gg = netcl.grad(lambda x: jnp.sum(netcl.grad(f)(x) ** 2))
    want = _eager(gg, x, monkeypatch=monkeypatch)
    for _ in range(2):
        _same(gg(x), want)
    jr = netcl.jacrev(lambda x: jnp.sin(x) * x)
    want = _eager(jr, x, monkeypatch=monkeypatch)
    for _ in range(2):
        _same(jr(x), want)


def test_a_rule_that_needs_values_runs_eagerly(cache, monkeypatch):
    """A vjp rule with Python control flow on a value cannot be compiled: its structure is
    marked and keeps running eagerly, with the right gradient."""
    from netcl.core.tracing import Primitive, ShapedArray
    p = Primitive("test_scale_by_sign")
    p.abstract_eval = lambda x: ShapedArray(x.shape, x.dtype, x.weak_type)
    p.make_launcher = lambda device, args, params, out: (lambda x: x * 2.0)
    p.vjp = lambda ct, out, x: (ct * (2.0 if float(jnp.sum(x)) > -1e30 else 0.0),)
    g = netcl.grad(lambda x: jnp.sum(p.bind(x) * x))
    x = _rand(3)
    for _ in range(3):
        assert_close(g(x), 4.0 * np.asarray(x))
    assert cache.stats["hits"] == 0 and cache.stats["compiles"] == 0
    assert eager_backward._UNCACHEABLE in eager_backward._seen.values()


def test_off_with_threshold_zero(monkeypatch):
    monkeypatch.setattr(eager_backward, "THRESHOLD", 0)
    eager_backward.clear()
    before = dict(eager_backward.stats)
    g = netcl.grad(w7(jnp))
    x = _rand(16)
    for _ in range(3):
        g(x)
    assert eager_backward.stats["hits"] == before["hits"]
    assert eager_backward.stats["compiles"] == before["compiles"]


def test_default_threshold_compiles_on_the_third_call(monkeypatch):
    monkeypatch.setattr(eager_backward, "THRESHOLD", 3)
    eager_backward.clear()
    g = netcl.grad(lambda x: jnp.sum(jnp.cos(x) * x * 1.5))
    x = _rand(6)
    c = eager_backward.stats["compiles"]
    g(x)
    g(x)
    assert eager_backward.stats["compiles"] == c
    g(x)
    assert eager_backward.stats["compiles"] == c + 1
    eager_backward.clear()


def test_w7_launches(cache, monkeypatch):
    """W7's eager grad: its forward's kernels and one fused backward kernel (70 launches
    before the backward was compiled)."""
    count = [0]
    enqueue = cl.enqueue_nd_range_kernel

    def counting(*a, **k):
        count[0] += 1
        return enqueue(*a, **k)
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", counting)
    netcl.test_util.forget_launchers()
    try:
        f = w7(jnp)
        g = netcl.grad(f)
        x = _rand(16)
        g(x)
        g(x)
        count[0] = 0
        f(x)
        forward = count[0]
        count[0] = 0
        g(x)
        assert count[0] == forward + 1, (count[0], forward)
    finally:
        monkeypatch.undo()
        netcl.test_util.forget_launchers()
