"""lax.scan as a loop primitive (netcl/transforms/scan.py): under jit a scan longer than
scan.UNROLL_UP_TO steps is one compiled loop, and its grad, jvp and vmap are scans too.
Against JAX: values, gradients with respect to closed-over weights, init and xs, reverse
scans, pytree carries, vmap, and the loop's compiled shape."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.transforms import scan as scan_mod, staged_loop

jax = pytest.importorskip("jax")
N = scan_mod.UNROLL_UP_TO + 9          # long enough to be a loop


def _rnn(lib, np_, reverse=False, unroll=None):
    def f(W, h0, xs):
        def step(carry, x):
            h, t = carry
            h = np_.tanh(h @ W + x)
            return (h, t + 1), (np_.sum(h), h * 0.5)
        kw = {} if unroll is None else {"unroll": unroll}
        (h, t), (s, hs) = lib.lax.scan(step, (h0, 0), xs, reverse=reverse, **kw)
        return np_.sum(h) + np_.sum(s) + 0.1 * np_.sum(hs ** 2) + t * 0.0
    return f


def _data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((3, 3)) * 0.5).astype(np.float32),
            rng.standard_normal(3).astype(np.float32),
            rng.standard_normal((n, 3)).astype(np.float32))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_values_and_gradients_agree_with_jax(reverse):
    W, h0, xs = _data()
    ours, theirs = _rnn(netcl, jnp, reverse), _rnn(jax, jax.numpy, reverse)
    want = theirs(W, h0, xs)
    np.testing.assert_allclose(netcl.jit(ours)(W, h0, xs), want, rtol=2e-5)
    np.testing.assert_allclose(ours(jnp.asarray(W), jnp.asarray(h0), jnp.asarray(xs)), want,
                               rtol=2e-5)
    jg = jax.grad(theirs, argnums=(0, 1, 2))(W, h0, xs)
    for g in (netcl.grad(ours, argnums=(0, 1, 2))(jnp.asarray(W), jnp.asarray(h0),
                                                   jnp.asarray(xs)),
              netcl.jit(netcl.grad(ours, argnums=(0, 1, 2)))(W, h0, xs)):
        for a, b in zip(g, jg):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_scan_jvp_and_vmap_agree_with_jax():
    W, h0, xs = _data(1)
    ours, theirs = _rnn(netcl, jnp), _rnn(jax, jax.numpy)
    dW = np.ones_like(W)
    t_ours = netcl.jit(lambda w: netcl.jvp(lambda v: ours(v, h0, xs), (w,), (dW,))[1])(W)
    t_theirs = jax.jvp(lambda v: theirs(v, h0, xs), (W,), (dW,))[1]
    np.testing.assert_allclose(t_ours, t_theirs, rtol=1e-4)
    xb = np.stack([xs, xs * 0.5, -xs])
    np.testing.assert_allclose(netcl.jit(netcl.vmap(ours, in_axes=(None, None, 0)))(W, h0, xb),
                               jax.vmap(theirs, in_axes=(None, None, 0))(W, h0, xb), rtol=2e-5)
    hb = np.stack([h0, h0 * 2])
    np.testing.assert_allclose(netcl.vmap(ours, in_axes=(None, 0, None))(
        jnp.asarray(W), jnp.asarray(hb), jnp.asarray(xs)),
        jax.vmap(theirs, in_axes=(None, 0, None))(W, hb, xs), rtol=2e-5)


def test_long_scan_under_jit_is_one_loop_with_a_trip_count(monkeypatch):
    """The compiled scan runs a counted loop (no predicate read back) of N // unroll
    iterations, plus N % unroll steps written out."""
    W, h0, xs = _data(2)
    loops = []
    run = staged_loop._Loop.run
    monkeypatch.setattr(staged_loop._Loop, "run",
                        lambda self, ops: loops.append(self) or run(self, ops))
    theirs = _rnn(jax, jax.numpy)(W, h0, xs)
    np.testing.assert_allclose(netcl.jit(_rnn(netcl, jnp, unroll=4))(W, h0, xs), theirs,
                               rtol=2e-5)
    assert [(lp.count, lp.cond_exe) for lp in loops] == [(N // 4, None)]
    loops.clear()
    short = xs[:6]              # (written out: one copy of the body per step to compile)
    np.testing.assert_allclose(netcl.jit(_rnn(netcl, jnp, unroll=True))(W, h0, short),
                               _rnn(jax, jax.numpy)(W, h0, short), rtol=2e-5)
    assert loops == []


def test_scan_bad_inputs():
    with pytest.raises(TypeError, match="unroll must be a positive int"):
        netcl.lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), unroll=0)
    with pytest.raises(TypeError, match="carry of the init's structure"):
        netcl.jit(lambda xs: netcl.lax.scan(lambda c, x: ((c, c), x), 0.0, xs))(jnp.ones(N))
    with pytest.raises(TypeError, match="pair \\(carry, y\\)"):
        netcl.jit(lambda xs: netcl.lax.scan(lambda c, x: c, 0.0, xs))(jnp.ones(N))


def _carry_cases(lib, np_, n):
    """Loops whose body changes the carry's dtype: a Python scalar init (weakly typed) takes
    the dtype it promotes to, as JAX retraces with it; a strongly typed one is an error."""
    lax = lib.lax
    return {
        "fori weak int to float": lambda: lax.fori_loop(0, n, lambda i, c: c + 0.5, 0),
        "fori weak float to float32": lambda: lax.fori_loop(
            0, n, lambda i, c: c * np_.float32(1.5), 1.0),
        "fori int32 to int64": lambda: lax.fori_loop(
            0, n, lambda i, c: c + np_.int64(1), np_.int32(0)),
        "fori weak float to int32": lambda: lax.fori_loop(0, n, lambda i, c: np_.int32(i), 1.0),
        "scan int32 to float32": lambda: lax.scan(
            lambda c, x: (c.astype(np_.float32), c), np_.int32(0), None, length=n),
        "scan weak int to float32": lambda: lax.scan(
            lambda c, x: (c + x, c), 0, np_.arange(n, dtype=np_.float32)),
        "while weak int to float": lambda: lax.while_loop(lambda c: c < n, lambda c: c + 1.5, 0),
        "while float32 to float64": lambda: lax.while_loop(
            lambda c: c < n, lambda c: c + np_.float64(1.5), np_.float32(0)),
    }


@pytest.mark.parametrize("n", [3, N], ids=["short", "long"])
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_loop_carry_dtype_changes_follow_jax(jitted, n):
    """(A scan whose int32 carry took an int64 random.categorical ran on, changing dtype,
    where JAX raises.) Eager, written out and staged loops all follow JAX's rule."""
    ours, theirs = _carry_cases(netcl, jnp, n), _carry_cases(jax, jax.numpy, n)
    for name in ours:
        try:
            with jax.enable_x64(netcl.config.enable_x64):
                want = (jax.jit if jitted else lambda f: f)(theirs[name])()
        except TypeError:
            with pytest.raises(TypeError, match="carry of the init's structure, shapes and dtypes"):
                (netcl.jit if jitted else lambda f: f)(ours[name])()
            continue
        got = (netcl.jit if jitted else lambda f: f)(ours[name])()
        for g, w in zip(netcl.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            assert (g.dtype, g.weak_type) == (w.dtype, w.weak_type), name
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=name)


def test_loop_carry_of_numpy_data_has_the_dtype_netcl_stores_it_in(x64):
    """A NumPy float64 init is float32 data without x64 (as in JAX): a body returning
    float32 keeps its carry's dtype."""
    def run(lib, np_):
        return lib.lax.fori_loop(0, 3, lambda i, c: c + np_.ones(2), np.zeros(2))
    got, want = run(netcl, jnp), run(jax, jax.numpy)
    assert got.dtype == want.dtype and np.asarray(got).tolist() == [3.0, 3.0]


def test_compiled_scan_stacks_outputs_in_place_and_keeps_the_callers_arrays():
    """The loop body's carries are its own: the stacked outputs take each step's slice in
    place (one slice moved per step, not the whole stack), and the caller's init and a
    carry the body returns twice keep their values."""
    init = jnp.asarray(np.arange(4, dtype=np.float32))
    xs_h = np.random.default_rng(7).standard_normal((N, 4)).astype(np.float32)

    def f(c, xs):
        def step(carry, x):
            a, b = carry
            y = a * 0.5 + x
            return (y, y), a + b
        return netcl.lax.scan(step, (c, c), xs)
    g = netcl.jit(f)
    (a, b), ys = g(init, jnp.asarray(xs_h))
    ca, cb, want = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32), []
    for x in xs_h:
        want.append(ca + cb)
        ca = cb = ca * 0.5 + x
    np.testing.assert_allclose(np.asarray(ys), np.stack(want), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(a), ca, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(b), cb, rtol=1e-5)
    assert np.asarray(init).tolist() == [0, 1, 2, 3]
    (loop,) = [e.params["loop"] for e in g.lower(init, jnp.asarray(xs_h)).ir.eqns
               if e.prim.name == "while"]
    body = str(loop.body_exe.ir)
    assert any("dynamic_update_slice" in ln and "writes over" in ln
               for ln in body.splitlines()), body


def test_compiled_scan_keeps_its_index_on_the_host(device_work):
    """The loop's index lives on the host: x = xs[i] and ys[i] = y are one copy each at an
    offset, with no device array of start indices made per step (no transfer per step)
    and no kernel for the index arithmetic."""
    xs_h = np.arange(N * 3, dtype=np.float32).reshape(N, 3)
    g = netcl.jit(lambda c, xs: netcl.lax.scan(lambda c, x: (c + x, c * 2.0), c, xs))
    c0, xs = jnp.zeros(3), jnp.asarray(xs_h)
    netcl.block_until_ready(g(c0, xs))
    device_work.clear()
    c, ys = g(c0, xs)
    want = np.concatenate([np.zeros((1, 3), np.float32), np.cumsum(xs_h, 0)[:-1]]) * 2
    np.testing.assert_allclose(np.asarray(ys), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(c), xs_h.sum(0), rtol=1e-6)
    if netcl.default_device().is_numpy:
        return
    kernels = device_work.count("enqueue_nd_range_kernel")
    assert device_work.count("enqueue_copy") < 8, device_work      # (the reads above)
    assert kernels <= 3 * N + 8, kernels    # xs[i], the body's fused kernel, ys[i] = y


def test_counted_loop_index_arithmetic_on_the_host_agrees_with_jax():
    """fori_loop with static bounds: starts computed from the index (clamped where they
    leave the operand), the index read as a value, and updates at index-dependent places."""
    def f(lib, np_):
        lax_ = lib.lax

        def run(xs):
            def body(i, acc):
                s = lax_.dynamic_slice(xs, (i * 2 - 5,), (4,))
                acc = acc + s * i
                return lax_.dynamic_update_slice(acc, s[:2] * 0.5, (i % 7,))
            return lax_.fori_loop(0, 40, body, np_.zeros(4, np_.float32))
        return run
    xs = np.random.default_rng(3).standard_normal(50).astype(np.float32)
    np.testing.assert_allclose(netcl.jit(f(netcl, jnp))(xs), jax.jit(f(jax, jax.numpy))(xs),
                               rtol=1e-5, atol=1e-5)


def test_compiled_scan_with_a_carry_returned_as_a_view():
    """A carry the body returns as a view (a transpose) is laid out otherwise than the
    loop takes it: the steps still agree with JAX."""
    def f(lib, np_):
        def run(m, xs):
            def step(c, x):
                return np_.transpose(c), c[0] * x
            return lib.lax.scan(step, m, xs)
        return run
    rng = np.random.default_rng(4)
    m = rng.standard_normal((3, 3)).astype(np.float32)
    xs = rng.standard_normal((N, 3)).astype(np.float32)
    ours, theirs = netcl.jit(f(netcl, jnp))(m, xs), f(jax, jax.numpy)(m, xs)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_loop_outputs_never_share_a_buffer_with_live_values():
    """A jitted while_loop that runs no step (or returns a carry unchanged) must not hand
    back the operand's own buffer: the program may then write over it in place while the
    operand is still read (it returned g's buffer overwritten with 10s)."""
    def f(x, stop):
        g = x * 2.0
        _, out = lax.while_loop(lambda s: ~stop & (s[0] < 3), lambda s: (s[0] + 1, s[1]),
                                (0, g))
        _, kept = lax.fori_loop(0, 2, lambda i, s: s, (0, g))
        return jnp.where(x > 5, out, x * 10.0), g, jnp.where(x > 5, kept, x * 7.0)
    x = jnp.ones(2, jnp.float32)
    for stop in (True, False):
        want = [np.asarray(v) for v in f(x, jnp.asarray(stop))]
        got = netcl.jit(f)(x, jnp.asarray(stop))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), w)
        np.testing.assert_array_equal(np.asarray(got[1]), [2.0, 2.0])
