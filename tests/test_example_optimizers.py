"""netcl.example_libraries.optimizers against jax.example_libraries.optimizers.

Every optimizer and schedule runs a few steps on the same small pytree (a dict holding a
matrix, a 3-d array and a list with a vector and a scalar) with the same float32 gradients in
netcl and in JAX, eagerly and under netcl.jit, and the parameters must agree after every
step. A stax MLP trained with adam must follow JAX's stax + optimizers from the same initial
parameters. Bad arguments must raise typed errors naming the function and the argument before
any kernel is enqueued.
"""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402
from jax.example_libraries import optimizers as jopt  # noqa: E402
from jax.example_libraries import stax as jstax  # noqa: E402

import netcl  # noqa: E402
import netcl.numpy as jnp  # noqa: E402
from netcl import random  # noqa: E402
from netcl.example_libraries import optimizers as opt  # noqa: E402
from netcl.example_libraries import stax  # noqa: E402
from util import float32_params, raises_with  # noqa: E402
from netcl.tree_util import tree_leaves, tree_map, tree_structure  # noqa: E402

STEPS = 4
RTOL, ATOL = 1e-5, 1e-6


def _host_tree(rng):
    return {"w": rng.normal(size=(3, 4)).astype(np.float32),
            "t": rng.normal(size=(2, 3, 2)).astype(np.float32),
            "b": [rng.normal(size=(4,)).astype(np.float32),
                  np.asarray(rng.normal(), np.float32)]}


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    params = _host_tree(rng)
    grads = [_host_tree(rng) for _ in range(STEPS)]
    # zero gradients where adagrad and sm3 divide by the accumulated squares
    grads[0]["w"][0, :] = 0.0
    grads[0]["t"][:, 0, :] = 0.0
    return params, grads


def _nc(tree):
    return tree_map(jnp.asarray, tree)


def _jx(tree):
    return jax.tree.map(jjnp.asarray, tree)


def _leaves_np(tree, leaves_fn):
    return [np.asarray(x) for x in leaves_fn(tree)]


def _assert_trees_close(got, want, what):
    got, want = _leaves_np(got, tree_leaves), _leaves_np(want, jax.tree.leaves)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{what}: leaf {k} shape {g.shape} != {w.shape}"
        assert g.dtype == np.float32, f"{what}: leaf {k} dtype {g.dtype}"
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{what}: leaf {k}")


def _run_jax(make, params, grads, start=0):
    init, update, get_params = make
    state = init(_jx(params))
    out = []
    for k, g in enumerate(grads):
        state = update(start + k, _jx(g), state)
        out.append(get_params(state))
    return out


def _run_netcl(make, params, grads, mode, start=0):
    init, update, get_params = make
    if mode != "eager":
        update = netcl.jit(update)
    state = init(_nc(params))
    out = []
    for k, g in enumerate(grads):
        i = start + k
        if mode == "jit_array_step":
            i = jnp.asarray(i, jnp.int32)
        state = update(i, _nc(g), state)
        out.append(get_params(state))
    return out


def _compare_runs(nc_make, jx_make, mode, start=0, seed=0):
    params, grads = _problem(seed)
    want = _run_jax(jx_make, params, grads, start)
    got = _run_netcl(nc_make, params, grads, mode, start)
    for k, (g, w) in enumerate(zip(got, want)):
        _assert_trees_close(g, w, f"{mode}, after step {k}")


# non-default hyperparameters, so that each one is seen to be used
OPTIMIZERS = [
    ("sgd", (0.1,), {}),
    ("momentum", (0.1,), {"mass": 0.8}),
    ("nesterov", (0.05,), {"mass": 0.7}),
    ("adagrad", (0.2,), {"momentum": 0.5}),
    ("rmsprop", (0.01,), {"gamma": 0.8, "eps": 1e-6}),
    ("rmsprop_momentum", (0.01,), {"gamma": 0.8, "eps": 1e-6, "momentum": 0.6}),
    ("adam", (0.05,), {"b1": 0.8, "b2": 0.99, "eps": 1e-6}),
    ("adamax", (0.05,), {"b1": 0.8, "b2": 0.99, "eps": 1e-6}),
    ("sm3", (0.1,), {"momentum": 0.7}),
]


@pytest.mark.parametrize("mode", ["eager", "jit", "jit_array_step"])
@pytest.mark.parametrize("name,args,kwargs", OPTIMIZERS, ids=[c[0] for c in OPTIMIZERS])
def test_optimizer_matches_jax(name, args, kwargs, mode):
    # starting at step 3 checks that adam's and adamax's bias corrections use i
    start = 3 if name in ("adam", "adamax") else 0
    _compare_runs(getattr(opt, name)(*args, **kwargs), getattr(jopt, name)(*args, **kwargs),
                  mode, start=start)


def test_default_hyperparameters_match_jax():
    for name, args, _ in OPTIMIZERS:
        args = args + ((0.9,) if name in ("momentum", "nesterov") else ())   # mass: required
        _compare_runs(getattr(opt, name)(*args), getattr(jopt, name)(*args), "eager", seed=1)


SCHEDULES = [
    ("constant", (0.1,)),
    ("exponential_decay", (0.1, 3, 0.5)),
    ("inverse_time_decay", (0.1, 2, 0.5)),
    ("inverse_time_decay", (0.1, 2, 0.5, True)),
    ("polynomial_decay", (0.1, 5, 0.01, 2.0)),
    ("piecewise_constant", ([1, 3], [0.1, 0.05, 0.01])),
]
SCHEDULE_IDS = ["constant", "exponential", "inverse_time", "inverse_time_staircase",
                "polynomial", "piecewise"]


@pytest.mark.parametrize("name,args", SCHEDULES, ids=SCHEDULE_IDS)
def test_schedule_values_match_jax(name, args):
    ours, theirs = getattr(opt, name)(*args), getattr(jopt, name)(*args)
    jitted = netcl.jit(ours)
    for i in range(9):
        want = float(np.asarray(theirs(i)))
        for got in (ours(i), ours(jnp.asarray(i, jnp.int32)), jitted(i)):
            np.testing.assert_allclose(float(np.asarray(got)), want, rtol=1e-6,
                                       err_msg=f"{name} at step {i}")


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("name,args", SCHEDULES, ids=SCHEDULE_IDS)
def test_schedule_as_step_size_matches_jax(name, args, mode):
    """Under jit the schedule sees a traced step and (x64 is on in the tests) may come out
    float64: the parameters must stay float32 (checked by _assert_trees_close)."""
    _compare_runs(opt.momentum(getattr(opt, name)(*args), 0.5),
                  jopt.momentum(getattr(jopt, name)(*args), 0.5), mode, start=1)


def test_make_schedule():
    assert opt.make_schedule(0.3)(7) == pytest.approx(0.3)
    s = opt.exponential_decay(1.0, 2, 0.5)
    assert opt.make_schedule(s) is s
    assert float(np.asarray(opt.make_schedule(jnp.asarray(0.25))(3))) == 0.25


def test_custom_optimizer_decorator_matches_jax():
    def make(decorator, np_):
        @decorator
        def signed(step_size, decay):
            def init(x0):
                return {"x": x0, "acc": [np_.zeros_like(x0)]}

            def update(i, g, state):
                acc = decay * state["acc"][0] + np_.sign(g)
                return {"x": state["x"] - step_size * acc / (i + 1), "acc": [acc]}
            return init, update, lambda state: state["x"]
        return signed(0.1, 0.5)
    for mode in ("eager", "jit"):
        _compare_runs(make(opt.optimizer, jnp), make(jopt.optimizer, jjnp), mode)


def test_state_layout_and_names_follow_jax():
    assert opt.Optimizer._fields == jopt.Optimizer._fields
    assert opt.OptimizerState._fields == jopt.OptimizerState._fields
    for name in ("optimizer", "sgd", "momentum", "nesterov", "adagrad", "rmsprop",
                 "rmsprop_momentum", "adam", "adamax", "sm3", "constant", "exponential_decay",
                 "inverse_time_decay", "polynomial_decay", "piecewise_constant",
                 "make_schedule", "l2_norm", "clip_grads", "pack_optimizer_state",
                 "unpack_optimizer_state", "JoinPoint"):
        assert callable(getattr(jopt, name)) and callable(getattr(opt, name)), name
    params, _ = _problem()
    made = opt.adam(0.1)
    assert isinstance(made, opt.Optimizer)
    state = made.init_fn(_nc(params))
    jstate = jopt.adam(0.1).init_fn(_jx(params))
    assert isinstance(state, opt.OptimizerState)
    assert [len(s) for s in state.packed_state] == [len(s) for s in jstate.packed_state]
    assert repr(state.tree_def) == repr(tree_structure(params))
    # the tree structure is aux data: only arrays are leaves (what jit traces)
    assert len(tree_leaves(state)) == 3 * len(tree_leaves(params))
    assert all(isinstance(x, netcl.Array) for x in tree_leaves(state))


def test_example_libraries_stax_is_netcl_stax():
    import netcl.example_libraries.stax as imported
    assert stax is netcl.stax and imported is netcl.stax


def test_stax_mlp_with_adam_matches_jax():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(16, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 16)]
    init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(8), stax.Tanh,
                              stax.Dense(3), stax.LogSoftmax)
    params = float32_params(init(random.PRNGKey(0), (-1, 5))[1])
    host = tree_map(np.asarray, params)
    _, japply = jstax.serial(jstax.Dense(8), jstax.Relu, jstax.Dense(8), jstax.Tanh,
                             jstax.Dense(3), jstax.LogSoftmax)

    def trainer(lib, np_, apply_fn, jit):
        opt_init, opt_update, get_params = lib.adam(1e-2)

        def loss(p, x, y):
            return -np_.mean(np_.sum(apply_fn(p, x) * y, axis=-1))

        @jit
        def step(i, opt_state, x, y):
            value, g = lib_grad[lib](loss)(get_params(opt_state), x, y)
            return value, opt_update(i, g, opt_state)
        return opt_init, step, get_params

    lib_grad = {opt: netcl.value_and_grad, jopt: jax.value_and_grad}
    n_init, n_step, n_get = trainer(opt, jnp, apply, netcl.jit)
    j_init, j_step, j_get = trainer(jopt, jjnp, japply, jax.jit)
    n_state, j_state = n_init(_nc(host)), j_init(_jx(host))
    nx, ny, jx, jy = jnp.asarray(x), jnp.asarray(y), jjnp.asarray(x), jjnp.asarray(y)
    losses = []
    for i in range(5):
        n_loss, n_state = n_step(i, n_state, nx, ny)
        j_loss, j_state = j_step(i, j_state, jx, jy)
        np.testing.assert_allclose(float(n_loss), float(j_loss), rtol=1e-5)
        _assert_trees_close(n_get(n_state), j_get(j_state), f"mlp after step {i}")
        losses.append(float(n_loss))
    assert losses[-1] < losses[0]   # it trains, and moved away from the initial parameters
    assert not np.allclose(np.asarray(tree_leaves(n_get(n_state))[0]), tree_leaves(host)[0])


def test_pack_unpack_round_trip():
    params, grads = _problem()
    init, update, get_params = opt.adam(0.05)
    jinit, jupdate, _ = jopt.adam(0.05)
    state, jstate = init(params), jinit(_jx(params))    # numpy params are accepted
    for k in range(2):
        state, jstate = update(k, _nc(grads[k]), state), jupdate(k, _jx(grads[k]), jstate)

    marked = opt.unpack_optimizer_state(state)
    jmarked = jopt.unpack_optimizer_state(jstate)
    # the parameter tree with a JoinPoint (that leaf's (x, m, v)) at each leaf, as in JAX
    assert sorted(marked) == sorted(jmarked) and len(marked["b"]) == 2
    for ours, theirs in zip(tree_leaves(marked), jax.tree.leaves(jmarked)):
        assert isinstance(ours, opt.JoinPoint) and isinstance(theirs, jopt.JoinPoint)
        assert isinstance(ours.subtree, tuple) and len(ours.subtree) == 3
        for a, b in zip(ours.subtree, theirs.subtree):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=RTOL, atol=ATOL)

    packed = opt.pack_optimizer_state(marked)
    assert isinstance(packed, opt.OptimizerState)
    assert packed.tree_def == state.tree_def and packed.subtree_defs == state.subtree_defs
    for a, b in zip(tree_leaves(packed), tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # a packed state carries on exactly as the original, eagerly and under jit
    a = update(2, _nc(grads[2]), state)
    b = netcl.jit(update)(2, _nc(grads[2]), packed)
    for x, y in zip(tree_leaves(get_params(a)), tree_leaves(get_params(b))):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=RTOL, atol=ATOL)


def test_l2_norm_and_clip_grads_match_jax():
    _, grads = _problem()
    g = grads[1]
    norm = float(np.asarray(opt.l2_norm(_nc(g))))
    np.testing.assert_allclose(norm, float(jopt.l2_norm(_jx(g))), rtol=1e-6)
    assert float(np.asarray(opt.l2_norm({"a": []}))) == 0.0
    for max_norm in (norm / 3, norm * 2):     # clipped, and left alone
        got = opt.clip_grads(_nc(g), max_norm)
        _assert_trees_close(got, jopt.clip_grads(_jx(g), max_norm), f"clip {max_norm}")
        clipped = float(np.asarray(opt.l2_norm(got)))
        np.testing.assert_allclose(clipped, min(norm, max_norm), rtol=1e-5)


def test_bad_constructor_arguments():
    raises_with(TypeError, lambda: opt.sgd("0.1"), "optimizers.sgd", "step_size")
    raises_with(TypeError, lambda: opt.adam([0.1]), "optimizers.adam", "step_size")
    raises_with(TypeError, lambda: opt.adam(jnp.ones(3)), "optimizers.adam", "step_size")
    raises_with(ValueError, lambda: opt.sgd(-0.1), "optimizers.sgd", "step_size")
    raises_with(ValueError, lambda: opt.momentum(0.1, mass=-0.5), "optimizers.momentum", "mass")
    raises_with(ValueError, lambda: opt.nesterov(0.1, 1.5), "optimizers.nesterov", "mass")
    raises_with(ValueError, lambda: opt.adam(0.1, b1=1.0), "optimizers.adam", "b1")
    raises_with(ValueError, lambda: opt.adam(0.1, b2=float("nan")), "optimizers.adam", "b2")
    raises_with(ValueError, lambda: opt.adamax(0.1, eps=-1e-8), "optimizers.adamax", "eps")
    raises_with(ValueError, lambda: opt.rmsprop(0.1, gamma=2.0), "optimizers.rmsprop", "gamma")
    raises_with(ValueError, lambda: opt.rmsprop_momentum(0.1, momentum=-1),
            "optimizers.rmsprop_momentum", "momentum")
    raises_with(ValueError, lambda: opt.adagrad(0.1, momentum=1.1), "optimizers.adagrad", "momentum")
    raises_with(TypeError, lambda: opt.sm3(0.1, momentum="0.9"), "optimizers.sm3", "momentum")
    raises_with(TypeError, lambda: opt.make_schedule("fast"), "optimizers.make_schedule")
    raises_with(TypeError, lambda: opt.optimizer(3), "optimizer", "opt_maker")
    raises_with(TypeError, lambda: opt.optimizer(lambda: (len, len))(), "optimizer", "triple")


def test_bad_schedule_arguments():
    raises_with(ValueError, lambda: opt.exponential_decay(0.1, 0, 0.5), "exponential_decay",
            "decay_steps")
    raises_with(ValueError, lambda: opt.exponential_decay(0.1, 10, -0.5), "exponential_decay",
            "decay_rate")
    raises_with(ValueError, lambda: opt.inverse_time_decay(0.1, -2, 0.5), "inverse_time_decay",
            "decay_steps")
    raises_with(ValueError, lambda: opt.inverse_time_decay(0.1, 2, -1.0), "inverse_time_decay",
            "decay_rate")
    raises_with(TypeError, lambda: opt.inverse_time_decay(0.1, 2, 1.0, "yes"), "staircase")
    raises_with(ValueError, lambda: opt.polynomial_decay(0.1, 0, 0.0), "polynomial_decay",
            "decay_steps")
    raises_with(ValueError, lambda: opt.polynomial_decay(0.1, 10, 0.0, power=-1.0),
            "polynomial_decay", "power")
    raises_with(TypeError, lambda: opt.constant(None), "optimizers.constant", "step_size")
    raises_with(ValueError, lambda: opt.piecewise_constant([1, 2], [0.1]), "piecewise_constant",
            "one longer")
    raises_with(ValueError, lambda: opt.piecewise_constant([[1]], [[0.1, 0.2]]),
            "piecewise_constant", "1-d")
    raises_with(ValueError, lambda: opt.piecewise_constant([5, 2], [1.0, 0.5, 0.1]),
            "piecewise_constant", "non-decreasing")
    raises_with(TypeError, lambda: opt.piecewise_constant(["a"], [1.0, 0.5]),
            "piecewise_constant", "boundaries")


def test_bad_update_inputs_raise_before_any_kernel(kernel_launches):
    params, grads = _problem()
    init, update, get_params = opt.adam(0.1)
    state = init(_nc(params))
    g = _nc(grads[0])
    wrong_tree = {"w": g["w"], "t": g["t"], "b": [g["b"][0]]}
    wrong_shape = dict(g, w=jnp.ones((4, 3)))
    vector_step = jnp.zeros(2, jnp.int32)
    launched_before = len(kernel_launches)
    where = "optimizers.adam update_fn"
    raises_with(TypeError, lambda: update(0, wrong_tree, state), where, "grads", "structure")
    raises_with(TypeError, lambda: update(0, [g], state), where, "grads")
    raises_with(ValueError, lambda: update(0, wrong_shape, state), where, "grads['w']", "(4, 3)")
    raises_with(ValueError, lambda: update(-1, g, state), where, "step index", "-1")
    raises_with(TypeError, lambda: update("0", g, state), where, "step index")
    raises_with(TypeError, lambda: update(vector_step, g, state), where, "step index")
    raises_with(TypeError, lambda: update(0, g, _nc(params)), where, "opt_state")
    raises_with(TypeError, lambda: update(0, g, tuple(state)), where, "opt_state")
    raises_with(TypeError, lambda: update(0, dict(g, w="grad"), state), where, "grads")
    raises_with(TypeError, lambda: get_params(params), "optimizers.adam params_fn", "opt_state")
    raises_with(TypeError, lambda: init({"w": "weights"}), "optimizers.adam init_fn", "params")
    raises_with(TypeError, lambda: netcl.jit(update)(0, wrong_tree, state), where, "grads")
    raises_with(ValueError, lambda: opt.clip_grads(g, 0.0), "clip_grads", "max_norm")
    raises_with(ValueError, lambda: opt.clip_grads(g, -1.0), "clip_grads", "max_norm")
    raises_with(TypeError, lambda: opt.unpack_optimizer_state(tuple(state)),
            "unpack_optimizer_state", "opt_state")
    raises_with(TypeError, lambda: opt.pack_optimizer_state(g), "pack_optimizer_state",
            "JoinPoint")
    assert len(kernel_launches) == launched_before
    state = update(0, g, state)                 # the counter does see a valid update's kernels
    assert np.isfinite(np.asarray(get_params(state)["w"])).all()
    assert kernel_launches or netcl.default_device().is_numpy
