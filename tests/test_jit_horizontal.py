"""jit's horizontal fusion: independent elementwise groups of different shapes gathered into
one kernel (transforms/horizontal_fusion.py), against the same groups run eagerly."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl import optim
from netcl.transforms.horizontal_fusion import HorizontalPrimitive
from netcl.transforms.plan import assign_in_place, is_view

from util import rand

# one group's body over its input x (and y, the same or a broadcast), per dtype
_BODIES = {
    "float32": [lambda x, y: x * 2.0 + y, lambda x, y: jnp.tanh(x) * y,
                lambda x, y: jnp.maximum(x, 0.5) - y * y, lambda x, y: jnp.exp(x * 0.1) / (y * y + 1)],
    "bfloat16": [lambda x, y: x * 2.0 + y, lambda x, y: (x * y).astype(jnp.float32)],
    "int32": [lambda x, y: x * 3 + y, lambda x, y: jnp.where(x > y, x, -y)],
}


def _operand(rng, shape, dtype, layout):
    """An input of `layout` read over an output of `shape`."""
    if layout == "dense":
        return jnp.asarray(rand(rng, shape, dtype))
    if layout == "scalar":
        return jnp.asarray(rand(rng, (), dtype))
    if layout == "row":          # broadcast over the leading axes
        return jnp.asarray(rand(rng, shape[-1:], dtype))
    if layout == "column":       # broadcast over the trailing axis
        return jnp.asarray(rand(rng, shape[:-1] + (1,), dtype))
    return jnp.asarray(rand(rng, shape[::-1], dtype)).T     # "transposed": strided


def _groups(draw_seed, specs):
    rng = np.random.default_rng(draw_seed)
    args, bodies = [], []
    for shape, dtype, k, layout in specs:
        body = _BODIES[dtype][k % len(_BODIES[dtype])]
        args += [_operand(rng, shape, dtype, "dense"), _operand(rng, shape, dtype, layout)]
        bodies.append(body)
    return args, bodies


_SPEC = st.tuples(st.sampled_from([(7,), (3, 5), (2, 3, 33), (1, 1), (300,), (4, 129)]),
                  st.sampled_from(sorted(_BODIES)), st.integers(0, 3),
                  st.sampled_from(["dense", "scalar", "row", "column", "transposed"]))


def _each(bodies):
    def f(*xs):
        return tuple(b(xs[2 * i], xs[2 * i + 1]) for i, b in enumerate(bodies))
    return f


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 1000),
       specs=st.lists(_SPEC, min_size=2, max_size=6, unique_by=lambda spec: spec[0]))
def test_gathered_groups_equal_each_alone(seed, specs):
    """Groups of different shapes, of any dtypes and input layouts, gathered into one
    launch compute what each group's own kernel computes, bit for bit (and what eager ops
    compute, within float32 rounding: a fused group may round differently)."""
    args, bodies = _groups(seed, specs)
    f = _each(bodies)
    got = netcl.jit(f)(*args)
    low = netcl.jit(f).lower(*args)
    # (one launch, but where a scalar input's arithmetic runs first: two)
    assert any(isinstance(e.prim, HorizontalPrimitive) for e in low.ir.eqns), low.as_text()
    assert len([e for e in low.ir.eqns if not is_view(e)]) <= 2, low.as_text()
    for i, (body, g) in enumerate(zip(bodies, got)):
        alone = netcl.jit(body)(args[2 * i], args[2 * i + 1])
        eager = body(args[2 * i], args[2 * i + 1])
        assert g.dtype == alone.dtype == eager.dtype and g.shape == alone.shape
        np.testing.assert_array_equal(np.asarray(g), np.asarray(alone))
        np.testing.assert_allclose(np.asarray(g).astype(np.float64),
                                   np.asarray(eager).astype(np.float64), rtol=1e-6)


def test_one_kernel_per_attribute_class():
    """Groups that can share a kernel share one: on every device the float32 groups of
    plain arithmetic are one launch."""
    args = [jnp.ones(s) for s in [(5,), (3, 4), (130,), (2, 2, 2)]]
    f = lambda a, b, c, d: (a * 2, b + 1, c - 3, d * d)    # noqa: E731
    names = [k.name for k in netcl.jit(f).lower(*args).kernels]
    assert names == ["horizontal_4"]


def test_groups_of_arguments_move_to_the_start():
    """Casts of the arguments (autocast's weight casts) run together before anything reads
    them; their readers keep their order."""
    def f(w1, w2, x):
        h = jnp.dot(x.astype(jnp.bfloat16), w1.astype(jnp.bfloat16))
        return jnp.dot(h, w2.astype(jnp.bfloat16)).astype(jnp.float32)
    rng = np.random.default_rng(0)
    w1, w2, x = (jnp.asarray(rand(rng, s)) for s in [(8, 16), (16, 4), (3, 8)])
    low = netcl.jit(f).lower(w1, w2, x)
    first = low.ir.eqns[0]
    assert isinstance(first.prim, HorizontalPrimitive) and len(first.prim.groups) == 3, \
        low.as_text()
    np.testing.assert_array_equal(np.asarray(netcl.jit(f)(w1, w2, x)), np.asarray(f(w1, w2, x)))


def test_views_of_arguments_move_with_their_readers():
    def f(a, b):
        return jnp.sum(a.T * 2.0, axis=0), jnp.sum(b.reshape(4, 3) + 1.0, axis=1)
    a, b = jnp.arange(12.0).reshape(3, 4), jnp.arange(12.0)
    got, want = netcl.jit(f)(a, b), f(a, b)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _segment_of_inputs_and_outputs(eqn):
    ins, outs = {}, {}
    for s, (pos, out_pos) in enumerate(eqn.prim.in_place_segments()):
        for p in pos:
            ins.setdefault(p, set()).add(s)
        for o in out_pos:
            outs[o] = s
    return ins, outs


@pytest.mark.parametrize("donate", [False, True])
def test_updates_in_place_stay_in_their_segment(donate):
    """An optimizer step with donated state: the gathered updates write over their own
    group's dying inputs only (another segment reads its inputs at other indices), and the
    results equal the eager step's."""
    params = {"a": jnp.ones((4, 8)), "b": jnp.ones(32), "c": jnp.ones((8, 4)),
              "d": jnp.ones(3)}
    opt = optim.sgd(0.1, momentum=0.9)

    def loss(p, x):
        return jnp.sum((x @ p["a"]).reshape(-1) * p["b"]) + jnp.sum(p["c"] ** 2) + \
            jnp.sum(p["d"] * 2)

    def step(p, s, x):
        g = netcl.grad(loss)(p, x)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s
    x = jnp.asarray(rand(np.random.default_rng(1), (4, 4)))
    state = opt.init(params)
    want = step(params, state, x)
    jitted = netcl.jit(step, donate_argnums=(0, 1) if donate else ())
    low = jitted.lower(params, state, x)
    (h,) = [e for e in low.ir.eqns if isinstance(e.prim, HorizontalPrimitive)]
    placed = assign_in_place(low.ir, {0, 1, 2, 3, 4, 5, 6, 7} if donate else set())
    (h,) = [e for e in placed.eqns if isinstance(e.prim, HorizontalPrimitive)]
    ins, _ = _segment_of_inputs_and_outputs(h)
    assert all(len(ins[j]) == 1 for j in h.overwrites)
    if donate:
        assert h.overwrites, low.as_text()
    got = jitted(params, state, x)
    from netcl.tree_util import tree_leaves
    for g, w in zip(tree_leaves(got), tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_a_shared_input_is_overwritten_by_no_segment():
    """A dying input two segments read is offered to neither: here t, whose shape fits the
    first group's output, is read by the second group at every index."""
    def g(a, b):
        t = jnp.sum(a)      # (a reduction: it dies in the gathered kernel)
        return t * 2.0, t * b
    a, b = jnp.arange(6.0), jnp.ones((2, 6))
    low = netcl.jit(g).lower(a, b)
    (h,) = [e for e in assign_in_place(low.ir).eqns if isinstance(e.prim, HorizontalPrimitive)]
    ins, _ = _segment_of_inputs_and_outputs(h)
    assert any(len(s) == 2 for s in ins.values()), low.as_text()
    assert all(len(ins[j]) == 1 for j in h.overwrites)
    for got, want in zip(netcl.jit(g)(a, b), g(a, b)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_many_groups_split_by_argument_bytes():
    """Groups whose arguments exceed what one kernel may take go in several kernels, each
    within the device's limit, with the same results."""
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("no kernels on the NumPy fallback")
    xs = [jnp.full((i + 1,), float(i)) for i in range(12)]

    def f(*xs):
        return tuple(x * 2.0 + 1.0 for x in xs)
    with netcl.test_util.override_target(dev, kernel_argument_bytes=160):
        netcl.test_util.forget_launchers()
        jitted = netcl.jit(f)
        kernels = jitted.lower(*xs).kernels
        got = jitted(*xs)
    netcl.test_util.forget_launchers()
    assert len(kernels) > 1 and all(k.name.startswith("horizontal_12") for k in kernels)
    for k in kernels:
        params = k.source.split("__kernel void", 1)[1].split("{", 1)[0].count(",") + 1
        assert 8 * params <= 160 + 8 * 4, k.name
    for g, x in zip(got, xs):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(x) * 2 + 1)
