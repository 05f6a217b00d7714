"""netcl.experimental.ode.odeint against jax.experimental.ode.odeint: the same
Dormand-Prince steps, dense output and adjoint gradients, so values and gradients (w.r.t.
y0, args, closed-over parameters and the times) agree to rounding; under jit, vmap and
vmap of grad; float64 gradients against finite differences; and errors for bad inputs."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl.experimental.ode import odeint


@pytest.fixture
def jax_ode():
    """(jax, jax.numpy, JAX's odeint), JAX with x64 on (as netcl in the suite) while the
    test runs."""
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jax_odeint
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax, jax.numpy, jax_odeint
    finally:
        jax.config.update("jax_enable_x64", old)


@pytest.fixture
def fp64():
    if not netcl.default_device().capabilities.fp64:
        pytest.skip("the device has no fp64")


def _close(got, want, rtol, atol=0.0):
    """Each leaf of `got` (netcl) against `want` (JAX), same structure."""
    import jax
    got_leaves = netcl.tree_util.tree_leaves(got)
    want_leaves = jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


# ---- problems, written once against either library ----------------------------------------

def _decay(y, t, k):
    return -k * y


def _pendulum(np_):
    def f(y, t, damping, gravity):
        theta, omega = y[0], y[1]
        return np_.stack([omega, -damping * omega - gravity * np_.sin(theta)])
    return f


def _pendulum_loss(np_, ode):
    def loss(y0, damping, gravity, ts):
        ys = ode(_pendulum(np_), y0, ts, damping, gravity)
        return np_.sum(ys[:, 0] ** 2) + np_.sum(ys[-1])
    return loss


def _mlp_field(np_):
    """A small neural vector field on a dict state with dict parameters."""
    def f(y, t, p):
        x = np_.concatenate([y["pos"], y["vel"]])
        h = np_.tanh(x @ p["w1"] + p["b1"] + t * p["tw"])
        d = h @ p["w2"]
        return {"pos": d[:2], "vel": d[2:]}
    return f


def _mlp_data(dtype=np.float32):
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((3, 8)) * 0.5, "b1": rng.standard_normal(8) * 0.1,
              "tw": rng.standard_normal(8) * 0.1, "w2": rng.standard_normal((8, 3)) * 0.5}
    y0 = {"pos": rng.standard_normal(2), "vel": rng.standard_normal(1)}
    cast = lambda tree: {k: v.astype(dtype) for k, v in tree.items()}  # noqa: E731
    return cast(params), cast(y0), np.linspace(0.0, 1.0, 3).astype(dtype)


def _mlp_loss(np_, ode, closure):
    f = _mlp_field(np_)

    def loss(params, y0, ts):
        if closure:      # the parameters closed over, not passed: still differentiated
            ys = ode(lambda y, t: f(y, t, params), y0, ts)
        else:
            ys = ode(f, y0, ts, params)
        return np_.sum(ys["pos"] ** 2) + np_.sum(ys["vel"])
    return loss


# ---- values --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_decay_values_match_jax_and_exact(jax_ode, dtype):
    _, jjnp, jax_odeint = jax_ode
    if dtype == np.float64 and not netcl.default_device().capabilities.fp64:
        pytest.skip("the device has no fp64")
    y0 = np.array([1.0, -2.0, 0.5], dtype)
    ts = np.array([0.0, 0.3, 1.0, 2.5], dtype)
    got = odeint(_decay, jnp.asarray(y0), jnp.asarray(ts), 0.7)
    want = jax_odeint(_decay, jjnp.asarray(y0), jjnp.asarray(ts), 0.7)
    assert got.shape == (4, 3) and got.dtype == dtype
    tight = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tight, atol=tight)
    exact = y0 * np.exp(-0.7 * ts[:, None].astype(np.float64))
    np.testing.assert_allclose(np.asarray(got), exact, rtol=1e-7 if dtype == np.float64 else 1e-5)


def test_pendulum_values_match_jax_with_hmax(jax_ode, fp64):
    _, jjnp, jax_odeint = jax_ode
    y0, ts = np.array([2.5, 0.0]), np.linspace(0.0, 3.0, 7)
    for kw in ({}, {"hmax": 0.05, "rtol": 1e-6, "atol": 1e-6}):
        got = odeint(_pendulum(jnp), jnp.asarray(y0), jnp.asarray(ts), 0.25, 5.0, **kw)
        want = jax_odeint(_pendulum(jjnp), jjnp.asarray(y0), jjnp.asarray(ts), 0.25, 5.0, **kw)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-11, atol=1e-12)


def test_mxstep_stops_where_jax_stops(jax_ode, fp64):
    """With too few steps allowed the solution is the last step's extrapolation: JAX's."""
    _, jjnp, jax_odeint = jax_ode
    y0, ts = np.array([2.5, 0.0]), np.array([0.0, 3.0])
    got = odeint(_pendulum(jnp), jnp.asarray(y0), jnp.asarray(ts), 0.25, 5.0, mxstep=3)
    want = jax_odeint(_pendulum(jjnp), jjnp.asarray(y0), jjnp.asarray(ts), 0.25, 5.0,
                      mxstep=3)
    # (extrapolating far past the last step magnifies rounding: not 1e-10 here)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-7)


def test_single_time_is_y0_and_its_gradient_is_identity():
    y0 = jnp.asarray([1.0, 2.0], dtype=jnp.float32)
    ys = odeint(_decay, y0, jnp.asarray([0.5], dtype=jnp.float32), 0.3)
    np.testing.assert_array_equal(np.asarray(ys), [[1.0, 2.0]])
    g = netcl.grad(lambda y: jnp.sum(odeint(_decay, y, jnp.asarray([0.5]), 0.3) * 3.0))(y0)
    np.testing.assert_allclose(np.asarray(g), [3.0, 3.0])


# ---- gradients (adjoint) -------------------------------------------------------------------

def test_pendulum_grads_wrt_y0_args_and_t_match_jax(jax_ode, fp64):
    jax, jjnp, jax_odeint = jax_ode
    y0, ts = np.array([2.5, 0.0]), np.linspace(0.0, 3.0, 4)
    got = netcl.grad(_pendulum_loss(jnp, odeint), argnums=(0, 1, 2, 3))(
        jnp.asarray(y0), jnp.asarray(0.25), jnp.asarray(5.0), jnp.asarray(ts))
    want = jax.grad(_pendulum_loss(jjnp, jax_odeint), argnums=(0, 1, 2, 3))(
        jjnp.asarray(y0), 0.25, 5.0, jjnp.asarray(ts))
    _close(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("closure", [False, True], ids=["args", "closure"])
def test_mlp_pytree_grads_match_jax(jax_ode, closure):
    """Dict state, dict parameters (float32), passed as an argument or closed over."""
    jax, jjnp, jax_odeint = jax_ode
    params, y0, ts = _mlp_data()
    got_val, got = netcl.value_and_grad(_mlp_loss(jnp, odeint, closure), argnums=(0, 1, 2))(
        netcl.tree_util.tree_map(jnp.asarray, params), netcl.tree_util.tree_map(jnp.asarray, y0),
        jnp.asarray(ts))
    want_val, want = jax.value_and_grad(_mlp_loss(jjnp, jax_odeint, closure), argnums=(0, 1, 2))(
        params, y0, jjnp.asarray(ts))
    np.testing.assert_allclose(float(got_val), float(want_val), rtol=1e-5)
    _close(got, want, rtol=1e-4, atol=1e-5)
    assert all(np.asarray(g).dtype == np.float32 for g in netcl.tree_util.tree_leaves(got))


def test_float64_gradients_against_finite_differences(fp64):
    from netcl.test_util import check_grads

    def f(y0, k, ts):
        return odeint(lambda y, t, k: -k * y + jnp.sin(2.0 * t) * y[::-1], y0, ts, k,
                      rtol=1e-10, atol=1e-10)
    check_grads(f, (jnp.asarray([1.0, -0.5]), jnp.asarray(0.8), jnp.asarray([0.0, 0.4, 1.1])),
                order=1, modes=("rev",), atol=1e-5, rtol=1e-5)


# ---- jit and vmap --------------------------------------------------------------------------

def test_jit_matches_eager_values_and_grads(fp64):
    y0, ts = jnp.asarray([2.5, 0.0]), jnp.linspace(0.0, 2.0, 3)
    solve = lambda y0, b: odeint(_pendulum(jnp), y0, ts, b, 5.0)  # noqa: E731
    np.testing.assert_allclose(np.asarray(netcl.jit(solve)(y0, 0.25)),
                               np.asarray(solve(y0, 0.25)), rtol=1e-12, atol=1e-14)
    loss = _pendulum_loss(jnp, odeint)
    args = (y0, jnp.asarray(0.25), jnp.asarray(5.0), ts)
    got = netcl.jit(netcl.grad(loss, argnums=(0, 1, 3)))(*args)
    want = netcl.grad(loss, argnums=(0, 1, 3))(*args)
    _close_netcl(got, want, rtol=1e-10)


def _close_netcl(got, want, rtol):
    for g, w in zip(netcl.tree_util.tree_leaves(got), netcl.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-12)


def test_vmap_and_vmap_of_grad_match_jax(jax_ode):
    """A batch of initial states and rates, each example stepping on its own (the loop runs
    while any example's does, as JAX's batched while_loop)."""
    jax, jjnp, jax_odeint = jax_ode
    rng = np.random.default_rng(1)
    ys0 = rng.standard_normal((4, 2)).astype(np.float32)
    ks = np.array([0.1, 0.5, 1.0, 3.0], np.float32)
    ts = np.linspace(0.0, 1.0, 3).astype(np.float32)

    def final(np_, ode):
        return lambda y0, k: np_.sum(
            ode(lambda y, t, k: -k * y + np_.sin(t), y0, np_.asarray(ts), k)[-1])
    got = netcl.vmap(final(jnp, odeint))(jnp.asarray(ys0), jnp.asarray(ks))
    want = jax.vmap(final(jjnp, jax_odeint))(ys0, ks)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6, atol=1e-6)
    got = netcl.vmap(netcl.grad(final(jnp, odeint), argnums=(0, 1)))(
        jnp.asarray(ys0), jnp.asarray(ks))
    want = jax.vmap(jax.grad(final(jjnp, jax_odeint), argnums=(0, 1)))(ys0, ks)
    _close(got, want, rtol=1e-5, atol=1e-6)


def test_jit_of_vmap_matches_vmap():
    ys0 = jnp.asarray([[1.0], [2.0], [-1.0]], dtype=jnp.float32)
    ts = jnp.asarray([0.0, 0.5, 1.0], dtype=jnp.float32)
    solve = netcl.vmap(lambda y0: odeint(_decay, y0, ts, 1.5))
    np.testing.assert_allclose(np.asarray(netcl.jit(solve)(ys0)), np.asarray(solve(ys0)),
                               rtol=1e-6)
    np.testing.assert_allclose(np.asarray(solve(ys0))[:, :, 0],
                               np.asarray(ys0) * np.exp(-1.5 * np.asarray(ts)), rtol=1e-5)


# ---- bad inputs ----------------------------------------------------------------------------

def test_bad_inputs_raise_typed_errors_naming_the_argument():
    y0, ts = jnp.asarray([1.0]), jnp.asarray([0.0, 1.0])
    with pytest.raises(TypeError, match=r"odeint: func must be a function"):
        odeint("not a function", y0, ts)
    with pytest.raises(ValueError, match=r"odeint: t must be a 1-D array"):
        odeint(_decay, y0, jnp.asarray([[0.0, 1.0]]), 1.0)
    with pytest.raises(TypeError, match=r"odeint: t must be an array of floats"):
        odeint(_decay, y0, jnp.asarray([0, 1]), 1.0)
    with pytest.raises(TypeError, match=r"odeint: y0 must hold floating-point arrays"):
        odeint(_decay, jnp.asarray([1, 2]), ts, 1.0)
    with pytest.raises(TypeError, match=r"odeint: the leaves of y0 must be arrays"):
        odeint(_decay, {"y": "1.0"}, ts, 1.0)
    with pytest.raises(TypeError, match=r"odeint: the contents of \*args must be arrays"):
        odeint(_decay, y0, ts, "fast")
    with pytest.raises(ValueError, match=r"odeint: rtol must be a non-negative number"):
        odeint(_decay, y0, ts, 1.0, rtol=-1.0)
    with pytest.raises(ValueError, match=r"odeint: mxstep must be a non-negative number"):
        odeint(_decay, y0, ts, 1.0, mxstep="many")
    with pytest.raises(TypeError, match=r"odeint: func must return the structure and shapes"):
        odeint(lambda y, t: jnp.concatenate([y, y]), y0, ts)
