"""jit's in-place steps: an elementwise kernel (or a product's epilogue) whose input dies
there writes its output over that input's buffer, for intermediates and for donated
arguments (jit(..., donate_argnums=...)); never over an argument the caller still holds, a
buffer a live view shares, or a product's operand."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from util import assert_close, float32_params

ON_OPENCL = not netcl.default_device().is_numpy
needs_buffers = pytest.mark.skipif(not ON_OPENCL, reason="buffers exist on OpenCL devices only")


def adam_like(p, m, g):
    m = 0.9 * m + 0.1 * g
    return p - 0.01 * m / (jnp.sqrt(m * m) + 1e-3), m


def adam_like_np(p, m, g):
    m = 0.9 * m + 0.1 * g
    return p - 0.01 * m / (np.sqrt(m * m) + 1e-3), m


@needs_buffers
def test_donated_arguments_are_updated_in_place():
    rng = np.random.default_rng(0)
    p_h, m_h = rng.standard_normal((2, 300)).astype(np.float32)
    g = jnp.asarray(rng.standard_normal(300).astype(np.float32))
    step = netcl.jit(adam_like, donate_argnums=(0, 1))
    p, m = jnp.asarray(p_h), jnp.asarray(m_h)
    for call in range(4):
        bufs = {p._buf, m._buf}
        p, m = step(p, m, g)
        p_h, m_h = adam_like_np(p_h, m_h, np.asarray(g))
        assert_close(p, p_h, rtol=1e-6, atol=1e-6)
        assert_close(m, m_h, rtol=1e-6, atol=1e-6)
        assert {p._buf, m._buf} == bufs   # from the first call on


@needs_buffers
def test_arguments_not_donated_are_never_overwritten():
    rng = np.random.default_rng(1)
    p_h, m_h, g_h = rng.standard_normal((3, 257)).astype(np.float32)
    p, m, g = jnp.asarray(p_h), jnp.asarray(m_h), jnp.asarray(g_h)
    step = netcl.jit(adam_like)
    for _ in range(3):
        p2, m2 = step(p, m, g)
        assert {p2._buf, m2._buf}.isdisjoint({p._buf, m._buf, g._buf})
    assert np.array_equal(np.asarray(p), p_h) and np.array_equal(np.asarray(m), m_h)
    want = adam_like_np(p_h, m_h, g_h)
    assert_close(p2, want[0], rtol=1e-6, atol=1e-6)


@needs_buffers
def test_a_donated_array_that_a_live_view_shares_is_not_overwritten():
    x_h = np.arange(12, dtype=np.float32)
    f = netcl.jit(lambda x: x * 2.0 + 1.0, donate_argnums=0)
    f(jnp.ones(12))                       # records the plan
    x = jnp.asarray(x_h)
    view = x.reshape(3, 4)
    assert view._storage is x._storage
    out = f(x)
    assert out._buf is not view._buf
    assert_close(out, x_h * 2 + 1)
    assert np.array_equal(np.asarray(view), x_h.reshape(3, 4))


@needs_buffers
def test_an_intermediate_is_overwritten_by_the_step_where_it_dies(taken_buffers):
    x_h = np.linspace(-1, 1, 40, dtype=np.float32)
    f = netcl.jit(lambda x: jnp.tanh(jnp.cumsum(x) * 2.0) + 1.0)   # cumsum: not fused
    x = jnp.asarray(x_h)
    for _ in range(2):
        assert_close(f(x), np.tanh(np.cumsum(x_h) * 2) + 1, rtol=1e-5, atol=1e-6)
    assert len(taken_buffers) == 2          # each call's fused group
    assert np.array_equal(np.asarray(x), x_h)


@pytest.mark.parametrize("donate", [(), (0,), (0, 1)])
def test_an_operand_that_is_also_an_epilogue_input_is_not_overwritten(donate):
    rng = np.random.default_rng(2)
    a_h, b_h = rng.standard_normal((2, 300, 300)).astype(np.float32)
    f = netcl.jit(lambda a, b: jnp.maximum(a @ b, 0.0) + a * b, donate_argnums=donate)
    want = np.maximum(a_h @ b_h, 0) + a_h * b_h
    for _ in range(3):
        assert_close(f(jnp.asarray(a_h), jnp.asarray(b_h)), want, rtol=1e-4, atol=1e-4)


OPS = {"add": (lambda x, y: x + y, np.add), "mul": (lambda x, y: x * y, np.multiply),
       "max": (jnp.maximum, np.maximum), "sub_exp": (lambda x, y: jnp.exp(x - y),
                                                   lambda x, y: np.exp(x - y))}


@settings(max_examples=12, deadline=None)
@given(shape=st.sampled_from([(), (1,), (7,), (33, 5), (2, 3, 17)]),
       ops=st.lists(st.sampled_from(sorted(OPS)), min_size=1, max_size=3),
       donate=st.sampled_from([(), (0,), (1,), (0, 1)]), seed=st.integers(0, 50))
def test_random_elementwise_chains_match_numpy_with_and_without_donation(shape, ops, donate,
                                                                         seed):
    rng = np.random.default_rng(seed)
    x_h, y_h = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))

    def f(x, y):
        for op in ops:
            x, y = OPS[op][0](x, y), x
        return x, y * 0.5

    def f_np(x, y):
        for op in ops:
            x, y = OPS[op][1](x, y), x
        return x, y * 0.5
    g = netcl.jit(f, donate_argnums=donate)
    want = f_np(x_h, y_h)
    # exp of an exp: a result of 1e27 has an argument of 63, whose last-bit differences
    # between two float32 exps come out as relative errors of ~4e-5
    rtol = 1e-4 if ops.count("sub_exp") > 1 else 1e-5
    for _ in range(2):
        x, y = jnp.asarray(x_h), jnp.asarray(y_h)
        got = g(x, y)
        for a, b in zip(got, want):
            assert_close(a, b, rtol=rtol, atol=1e-6)
        if 0 not in donate:
            assert np.array_equal(np.asarray(x), x_h)
        if 1 not in donate:
            assert np.array_equal(np.asarray(y), y_h)


def test_donated_strided_arrays_are_copied_and_invalidated():
    f = netcl.jit(lambda x: x + 1.0, donate_argnums=0)
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(2):               # the second call takes jit's cached donation positions
        x = jnp.asarray(base).T          # strided: the call runs on a dense copy
        assert_close(f(x), base.T + 1)
        assert x.deleted
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            np.asarray(x)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_donated_train_steps_match_undonated_ones(model):
    """A stax model's jitted train step (adam / sgd with momentum) gives the same parameters
    whether or not it donates them and the optimizer state (updates then run in place)."""
    from netcl import optim, random, stax
    if model == "mlp":
        init, apply = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(16), stax.Relu,
                                  stax.Dense(4), stax.LogSoftmax)
        in_shape, opt = (8, 12), optim.adam(1e-2)
    else:
        init, apply = stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu,
                                  stax.MaxPool((2, 2), (2, 2)), stax.Flatten, stax.Dense(4),
                                  stax.LogSoftmax)
        in_shape, opt = (4, 8, 8, 3), optim.sgd(0.05, momentum=0.9)
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.standard_normal(in_shape).astype(np.float32))
    y = jnp.asarray(np.eye(4, dtype=np.float32)[rng.integers(0, 4, in_shape[0])])

    def step(params, st):
        g = netcl.grad(lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
        upd, st = opt.update(g, st, params)
        return optim.apply_updates(params, upd), st
    results = []
    for donate in ((), (0, 1)):
        params = float32_params(init(random.PRNGKey(0), in_shape)[1])
        state = (params, opt.init(params))
        f = netcl.jit(step, donate_argnums=donate)
        for _ in range(3):
            state = f(*state)
        results.append([np.asarray(p) for p in netcl.tree_util.tree_leaves(state[0])])
    for a, b in zip(*results):
        assert_close(a, b, rtol=1e-6, atol=1e-7)


@needs_buffers
def test_a_buffer_a_later_view_reads_is_not_overwritten(taken_buffers):
    """The IR decides (assign_in_place): the exp group is y's last direct reader, but y's
    transposed view is read after it, so the group writes a new buffer."""
    def f(x):
        y = jnp.cumsum(x, axis=1)          # not fused: an intermediate with its own buffer
        v = y.T                            # a view of y's buffer
        a = jnp.exp(y) * 2.0               # a fused group, which may write in place
        return a, jnp.cumsum(v, axis=0)
    x_h = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    y_h = np.cumsum(x_h, axis=1)
    g = netcl.jit(f)
    text = g.lower(jnp.asarray(x_h)).as_text()
    exp_line = [ln for ln in text.splitlines() if "fused_exp" in ln and " = " in ln]
    assert exp_line and "writes over" not in exp_line[0], text
    assert "writes over" in netcl.jit(lambda x: jnp.exp(jnp.cumsum(x, axis=1)) * 2.0).lower(
        jnp.asarray(x_h)).as_text()        # (without the view: in place)
    for _ in range(2):
        a, b = g(jnp.asarray(x_h))
        assert_close(a, np.exp(y_h) * 2, rtol=1e-6)
        assert_close(b, np.cumsum(y_h.T, axis=0), rtol=1e-5, atol=1e-6)


@needs_buffers
def test_a_view_the_caller_keeps_of_a_donated_array_keeps_its_values():
    """Donation gives up the array, not its views (netcl's views share the buffer): the
    plan writes over a donated buffer only where no other array holds it."""
    f = netcl.jit(lambda p: p * 2.0 + 1.0, donate_argnums=0)
    for _ in range(2):
        p = jnp.asarray(np.arange(6, dtype=np.float32))
        kept = p.reshape(2, 3)             # a view of p's buffer
        bufs = p._buf
        out = f(p)
        assert_close(out, np.arange(6) * 2.0 + 1)
        assert np.array_equal(np.asarray(kept), np.arange(6, dtype=np.float32).reshape(2, 3))
        assert out._buf is not bufs
    p = jnp.asarray(np.arange(6, dtype=np.float32))
    bufs = p._buf
    assert f(p)._buf is bufs               # alone on its buffer: written over


def test_a_donated_argument_whose_view_is_returned_is_not_overwritten():
    """A result that is a view of a donated argument keeps the argument's buffer alive."""
    f = netcl.jit(lambda p: (p.reshape(2, 3), p * 2.0 + 1.0), donate_argnums=0)
    assert "writes over" not in f.lower(jnp.zeros(6)).as_text()
    for _ in range(2):
        view, out = f(jnp.asarray(np.arange(6, dtype=np.float32)))
        assert np.array_equal(np.asarray(view), np.arange(6, dtype=np.float32).reshape(2, 3))
        assert_close(out, np.arange(6) * 2.0 + 1)


def test_outputs_of_other_element_sizes_never_take_a_dying_input():
    """An int32 output of a fused group must not write over a dying bool input of the same
    pool size class (the group still reads it elsewhere): once wrong in most calls."""
    f = netcl.jit(lambda x, y: (jnp.any(x, 1) != jnp.any(y, 1),
                                jnp.any(x, 1).astype(jnp.int32)))
    rng = np.random.default_rng(0)
    for _ in range(5):
        xh, yh = rng.random((11, 6)) > 0.7, rng.random((11, 5)) > 0.7
        a, b = f(jnp.asarray(xh), jnp.asarray(yh))
        assert np.array_equal(np.asarray(a), xh.any(1) != yh.any(1))
        assert np.array_equal(np.asarray(b), xh.any(1).astype(np.int32))


X3 = np.arange(60, dtype=np.float32).reshape(3, 4, 5) % 7 - 2.5


@pytest.mark.parametrize("name,fn", [
    ("sum of a transpose", lambda x: jnp.sum(jnp.transpose(x, (2, 0, 1)), axis=1) * 2),
    ("max of a reversed transpose", lambda x: jnp.max(x[::-1].T, axis=0) + 1),
    ("argmax of a transpose", lambda x: jnp.argmax(jnp.transpose(x, (1, 2, 0)), 2) * 3),
    ("cumsum of a transpose", lambda x: netcl.lax.cumsum(x.T, 0, reverse=True) * 2),
    ("cummax of a permutation", lambda x: netcl.lax.cummax(jnp.transpose(x, (2, 0, 1)), 0)
     * 3 - 1),
    ("cumprod of a reversal", lambda x: jnp.cumprod(x[:, ::-1] * 0.5, axis=1) - x[:, ::-1]),
])
def test_a_reduction_in_its_input_memory_order_is_not_overwritten_in_dense_order(name, fn):
    """Reductions and scans of permuted or reversed inputs return their results in the
    input's memory order (a permuted view of a dense buffer): the elementwise step after
    them, where the result dies, must not write over it in dense order (it did, reading
    values it had already overwritten)."""
    want = np.asarray(fn(jnp.asarray(X3)))
    f = netcl.jit(fn)
    for _ in range(3):      # the first call, then the plan's
        assert_close(f(jnp.asarray(X3)), want, rtol=1e-6, atol=1e-6)
