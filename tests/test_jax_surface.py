"""What JAX programs do that netcl must do the same way (issue: JAX programs run unchanged):
formatting, scalar types, JAX's error types, jit's static arguments by name or position,
jitted methods, unhashable pytree aux data, jit(f) re-created in a loop, loops under jit
closing over the jitted function's arguments, stax's Dropout. Against JAX where installed
(CI installs it), else against the values JAX gives."""
import functools

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax, random, stax, tree_util

jax = pytest.importorskip("jax")
jjnp = jax.numpy


def test_format_of_0d_arrays_and_scalar_types():
    x = jnp.asarray(np.float32(2.0) / 3)
    assert f"{x:.3f}" == f"{jjnp.asarray(np.float32(2.0) / 3):.3f}" == "0.667"
    assert f"{x}" == str(x) and f"{jnp.int32(7):4d}" == "   7"
    with pytest.raises(TypeError, match="only 0-d"):
        f"{jnp.ones(2):.2f}"
    for name in ("float32", "int32", "uint32", "bool_", "float16"):
        ours, theirs = getattr(jnp, name)(1.5), getattr(jjnp, name)(1.5)
        assert ours.dtype == theirs.dtype and ours.shape == () and \
            np.asarray(ours) == np.asarray(theirs), name
    assert jnp.zeros(2, jnp.float16).dtype == np.float16
    assert jnp.ones(2, jnp.float32).dtype == jnp.float32 and np.dtype(jnp.float32) == np.float32
    assert {np.dtype("float32"): 1}[jnp.float32] == 1 and hash(jnp.int32) == hash(np.dtype("int32"))
    assert repr(jnp.float32) == "<class 'netcl.numpy.float32'>"
    np.testing.assert_array_equal(jnp.int32(jnp.asarray([1.7, -2.2])), [1, -2])


def test_errors_have_jax_types():
    for lib in (jnp, jjnp):
        with pytest.raises(TypeError, match="sum requires ndarray or scalar arguments"):
            lib.sum([1, 2, 3])
        with pytest.raises(TypeError, match="add got incompatible shapes for broadcasting"):
            lib.add(lib.ones(2), lib.ones(3))
    with pytest.raises(ValueError):     # (also a ValueError, as NumPy's)
        jnp.ones(2) * jnp.ones(3)


def test_static_arguments_by_name_or_position():
    def power(x, n):
        for _ in range(n):          # Python control flow on the static argument
            x = x * 2.0
        return x
    x = np.arange(3, dtype=np.float32)
    for lib in (netcl, jax):
        by_name = lib.jit(power, static_argnames="n")
        by_num = lib.jit(power, static_argnums=1)
        for f in (by_name, by_num):
            np.testing.assert_allclose(f(x, 3), x * 8)
            np.testing.assert_allclose(f(x, n=2), x * 4)


def test_jitted_methods_get_self():
    class Scale:
        def __init__(self, k):
            self.k = k

        def __hash__(self):
            return hash(self.k)

        def __eq__(self, other):
            return isinstance(other, Scale) and other.k == self.k

        @functools.partial(netcl.jit, static_argnums=0)
        def apply(self, v):
            return v * self.k

    x = jnp.arange(3.0)
    np.testing.assert_allclose(Scale(2.0).apply(x), [0, 2, 4])
    np.testing.assert_allclose(Scale(3.0).apply(x), [0, 3, 6])
    assert Scale.apply is Scale.__dict__["apply"]       # on the class: the jitted function


class _Tagged:
    """A pytree whose aux data is a dict (unhashable)."""

    def __init__(self, value, meta):
        self.value, self.meta = value, meta


tree_util.register_pytree_node(_Tagged, lambda t: ((t.value,), t.meta),
                               lambda meta, children: _Tagged(children[0], meta))


def test_unhashable_aux_data_is_compared_by_equality():
    traces = []

    @netcl.jit
    def f(t):
        traces.append(1)
        return t.value * t.meta["scale"]
    x = jnp.arange(3.0)
    np.testing.assert_allclose(f(_Tagged(x, {"scale": 2.0})), [0, 2, 4])
    np.testing.assert_allclose(f(_Tagged(x + 1, {"scale": 2.0})), [2, 4, 6])
    assert len(traces) == 1                             # equal aux: the cached trace
    np.testing.assert_allclose(f(_Tagged(x, {"scale": 3.0})), [0, 3, 6])
    assert len(traces) == 2


def test_jit_recreated_in_a_loop_reuses_its_compilation():
    traces = []

    def step(v):
        traces.append(1)
        return v * 2.0 + 1.0
    x = jnp.arange(3.0)
    for _ in range(5):
        x = netcl.jit(step)(x)
    assert len(traces) == 1
    scale = 3.0
    for _ in range(3):
        netcl.jit(lambda v: (traces.append(1), v * scale)[1])(x)   # same code and closure
    assert len(traces) == 2
    outs = [netcl.jit(lambda v, s=s: v * s)(jnp.ones(1)) for s in (1.0, 2.0)]
    np.testing.assert_allclose(np.concatenate(outs), [1.0, 2.0])  # other defaults: retraced
    # a closure or a global that now holds another value is another function: retraced
    outs = [netcl.jit(lambda v: v * k)(jnp.ones(1)) for k in (1.0, 2.0, 3.0)]
    np.testing.assert_allclose(np.concatenate(outs), [1.0, 2.0, 3.0])
    for name, fn in (("sin", np.sin), ("cos", np.cos)):
        global _OP
        _OP = name
        np.testing.assert_allclose(netcl.jit(lambda v: getattr(jnp, _OP)(v))(jnp.ones(1)),
                                   fn(1.0), rtol=1e-6)


_OP = None


def _loops(np_, lax_):
    def fori(a):
        return lax_.fori_loop(0, 20, lambda i, c: c + a * i, np_.zeros(3))

    def whilel(a, n):
        return lax_.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * a + 1.0),
                               (0, np_.ones(3)))

    def counter(a):
        return lax_.fori_loop(0, 30, lambda i, c: c + i, 0)
    return fori, whilel, counter


def test_loops_under_jit_close_over_the_arguments():
    x = np.arange(3, dtype=np.float32)
    (fori, whilel, counter), (jfori, jwhilel, jcounter) = _loops(jnp, lax), \
        _loops(jax.numpy, jax.lax)
    jx = jax.numpy.asarray(x)
    np.testing.assert_allclose(netcl.jit(fori)(x), jax.jit(jfori)(jx))
    got, want = netcl.jit(whilel)(x, 4), jax.jit(jwhilel)(jx, 4)
    assert int(got[0]) == int(want[0]) == 4
    np.testing.assert_allclose(got[1], want[1])
    assert int(netcl.jit(counter)(x)) == int(jax.jit(jcounter)(jx)) == 435
    eager = lax.fori_loop(0, 3, lambda i, c: c + i, 0)     # JAX returns an array here too
    assert isinstance(eager, netcl.Array) and int(eager) == 3 and eager.weak_type


def test_dropout_keeps_with_probability_rate_as_stax():
    from jax.example_libraries import stax as jstax
    x = np.ones((50, 40), np.float32)
    ours = stax.Dropout(0.75)[1]((), jnp.asarray(x), rng=random.PRNGKey(3))
    with jax.enable_x64(netcl.config.enable_x64):   # (the rate's uniforms: float64 with x64)
        theirs = jstax.Dropout(0.75)[1]((), jax.numpy.asarray(x), rng=jax.random.PRNGKey(3))
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert 0.7 < float(jnp.mean(ours != 0)) < 0.8


def test_traced_values_are_arrays_to_isinstance():
    seen = []

    def f(v):
        seen.append(isinstance(v, netcl.Array) and isinstance(v, jnp.ndarray))
        return jnp.sum(v * 2.0)
    x = jnp.ones(3)
    netcl.jit(f)(x)
    netcl.grad(f)(x)
    netcl.vmap(f)(jnp.ones((2, 3)))
    assert seen == [True, True, True]
    assert isinstance(x, netcl.Array) and not isinstance(np.ones(2), netcl.Array)
    assert isinstance(jax.numpy.ones(2), jax.Array)     # (what JAX says of its own)


def test_tree_module_has_jax_tree_names():
    import jax.tree as jtree
    missing = [n for n in dir(jtree) if not n.startswith("_") and n != "static" and
               not hasattr(netcl.tree, n)]
    assert not missing, missing
    t = {"a": 1, "b": (2, [3, 4])}
    assert netcl.tree.map(lambda x: x * 2, t) == jtree.map(lambda x: x * 2, t)
    assert netcl.tree.leaves(t) == jtree.leaves(t)
    assert netcl.tree.reduce(lambda a, b: a + b, t) == jtree.reduce(lambda a, b: a + b, t)
    assert netcl.tree.broadcast([1, 2], [(0, 0), [0]]) == jtree.broadcast([1, 2], [(0, 0), [0]])
    assert netcl.tree.reduce_associative(lambda a, b: a * b, [1, 2, 3, 4, 5]) == 120
    with pytest.raises(TypeError, match="no identity"):
        netcl.tree.reduce_associative(lambda a, b: a + b, [])


FILL_CASES = [
    lambda l, a: a.at[l.array([9, 1, -1, -4])].get(mode="fill", fill_value=-1.0),
    lambda l, a: a.at[:, l.array([5, 0])].get(mode="fill"),
    lambda l, a: a.at[..., l.array([-5, 2])].get(mode="fill", fill_value=0.5),
    lambda l, a: a.at[l.array([[0, 3], [2, 2]]), l.array([1, 9])].get(mode="fill",
                                                                      fill_value=-2.0),
    lambda l, a: a.astype(l.int32).at[l.array([4])].get(mode="fill"),
    lambda l, a: a.at[7].get(mode="fill", fill_value=3.0),
    lambda l, a: a.at[None, l.array([2, 5]), 1:3].get(mode="fill", fill_value=3.0),
    lambda l, a: a.at[l.array([7, -9])].get(),                     # clamps, as JAX's
]


@pytest.mark.parametrize("case", range(len(FILL_CASES)))
def test_at_get_modes_as_jax(case):
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    ours = np.asarray(FILL_CASES[case](jnp, jnp.asarray(x)))
    theirs = np.asarray(FILL_CASES[case](jax.numpy, jax.numpy.asarray(x)))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    if case == 0:
        got = netcl.jit(lambda a, i: a.at[i].get(mode="fill", fill_value=-1.0))(
            jnp.asarray(x), jnp.array([9, 1, -1, -4]))
        np.testing.assert_array_equal(got, theirs)
    with pytest.raises(ValueError, match="at\\[\\].get: mode must be"):
        jnp.asarray(x).at[0].get(mode="wrap")


def _clipped_power(lib):
    @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
    def f(n, x):
        return x ** n

    def fwd(n, x):
        return x ** n, x

    def bwd(n, res, g):        # the non-differentiable argument first, as in JAX
        return (g * n * res ** (n - 1),)
    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_nondiff_argnums_and_custom_jvp_of_python_floats():
    ours, theirs = _clipped_power(netcl), _clipped_power(jax)
    for transform in (lambda lib, g: g, lambda lib, g: lib.jit(g)):
        a = transform(netcl, netcl.grad(lambda x: ours(3, x)))(2.0)
        b = transform(jax, jax.grad(lambda x: theirs(3, x)))(2.0)
        assert float(a) == float(b) == 12.0
    np.testing.assert_allclose(netcl.vmap(netcl.grad(lambda x: ours(2, x)))(jnp.arange(3.0)),
                               [0.0, 2.0, 4.0])

    @netcl.custom_jvp
    def g(x):
        return jnp.sin(x)

    @g.defjvp
    def g_jvp(primals, tangents):
        return jnp.sin(primals[0]), jnp.cos(primals[0]) * tangents[0]
    np.testing.assert_allclose(netcl.grad(g)(1.0), np.cos(1.0), rtol=1e-6)
    with pytest.raises(TypeError, match="nondiff_argnums must be non-negative ints"):
        netcl.custom_vjp(lambda x: x, nondiff_argnums=(-1,))


def test_while_loop_under_vmap_with_a_batched_predicate():
    def f(lib, np_):
        return lambda n: lib.lax.while_loop(lambda c: c[0] < n,
                                            lambda c: (c[0] + 1, c[1] * 2.0), (0, np_.ones(2)))
    n = np.array([0, 2, 5], np.int32)
    ours = netcl.vmap(f(netcl, jnp))(jnp.asarray(n))
    theirs = jax.vmap(f(jax, jax.numpy))(jax.numpy.asarray(n))
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    nested = netcl.vmap(netcl.vmap(f(netcl, jnp)))(jnp.asarray([[0, 2], [3, 1]]))
    np.testing.assert_array_equal(nested[1][:, :, 0], [[1, 4], [8, 2]])


def test_while_loop_under_vmap_and_jit_in_either_order():
    """A batched predicate under a trace (jit of vmap, vmap of jit, nested vmaps): the
    loop is staged once and batched by its rule, as in JAX; the body closes over a batched
    value and the carry mixes batched and unbatched leaves."""
    def f(lib, np_):
        def run(n, scale):
            return lib.lax.while_loop(lambda c: c[0] < n,
                                      lambda c: (c[0] + 1, c[1] * scale + 1.0), (0, np_.ones(2)))
        return run
    n = np.array([0, 2, 5, 3], np.int32)
    scale = np.array([1.5, -1.0, 0.5, 2.0], np.float32)
    theirs = jax.jit(jax.vmap(f(jax, jax.numpy)))(n, scale)
    ours = f(netcl, jnp)
    for wrapped, args, want in (
            (netcl.jit(netcl.vmap(ours)), (n, scale), theirs),
            (netcl.vmap(netcl.jit(ours)), (n, scale), theirs),
            (netcl.jit(netcl.vmap(ours, in_axes=(0, None))), (n, np.float32(2.0)),
             jax.vmap(f(jax, jax.numpy), in_axes=(0, None))(n, np.float32(2.0)))):
        got = wrapped(*[jnp.asarray(a) for a in args])
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    grid = np.array([[0, 2], [3, 1]], np.int32)
    nested = netcl.jit(netcl.vmap(netcl.vmap(lambda k: ours(k, jnp.float32(2.0)))))(
        jnp.asarray(grid))
    np.testing.assert_array_equal(nested[0], grid)
    np.testing.assert_array_equal(nested[1][:, :, 0], 2.0 ** (grid + 1) - 1)


def test_forward_mode_through_staged_while_loops_as_jax():
    """jvp of a while_loop (and of a fori_loop with traced bounds) under jit, in either
    order, and jacfwd, against JAX and float64 finite differences; reverse mode through a
    trip count that depends on traced values raises, as in JAX."""
    from netcl.transforms.ad import MissingRuleError
    from netcl.test_util import check_grads

    def make(lib, np_):
        def f(x, a):
            return lib.lax.while_loop(lambda c: c[0] < 5, lambda c: (
                c[0] + 1, c[1] * a + np_.sin(c[1])), (0, x))[1]
        return f
    ours, theirs = make(netcl, jnp), make(jax, jax.numpy)
    x, a = np.float32(0.3), np.float32(1.1)
    want = jax.jvp(theirs, (x, a), (np.float32(1.0), np.float32(0.5)))
    one, half = np.float32(1.0), np.float32(0.5)
    for got in (netcl.jit(lambda x, a: netcl.jvp(ours, (x, a), (one, half)))(x, a),
                netcl.jvp(netcl.jit(ours), (jnp.asarray(x), jnp.asarray(a)),
                          (jnp.float32(1.0), jnp.float32(0.5)))):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    v = np.array([x, a])
    np.testing.assert_allclose(
        netcl.jit(netcl.jacfwd(lambda v: ours(v[0], v[1]) * v))(jnp.asarray(v)),
        jax.jacfwd(lambda v: theirs(v[0], v[1]) * v)(v), rtol=1e-5)
    check_grads(netcl.jit(ours), (np.float64(0.3), np.float64(1.1)), order=1, modes=("fwd",))
    counted = netcl.jit(lambda x, n: netcl.jvp(
        lambda y: netcl.lax.fori_loop(0, n, lambda i, c: c * 1.5 + i, y), (x,), (one,)))
    np.testing.assert_allclose(counted(jnp.float32(2.0), jnp.int32(4)), (18.375, 5.0625))
    grows = netcl.jit(lambda x: netcl.lax.while_loop(lambda v: v < 10.0, lambda v: v * 1.7, x))
    with pytest.raises(MissingRuleError, match="reverse-mode"):     # (a traced trip count)
        netcl.grad(grows)(jnp.float32(1.3))


def test_einops_works_on_netcl_arrays_and_traced_values():
    einops = pytest.importorskip("einops")
    h = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = jnp.asarray(h)
    for pattern, kw in (("a b c -> c (a b)", {}), ("a (b1 b2) c -> a b1 b2 c", {"b1": 1})):
        np.testing.assert_array_equal(einops.rearrange(x, pattern, **kw),
                                      einops.rearrange(h, pattern, **kw))
    np.testing.assert_allclose(einops.reduce(x, "a b c -> a c", "mean"),
                               einops.reduce(h, "a b c -> a c", "mean"))
    np.testing.assert_array_equal(einops.repeat(x, "a b c -> a b c r", r=2),
                                  einops.repeat(h, "a b c -> a b c r", r=2))
    assert netcl.jit(lambda v: einops.rearrange(v, "a b c -> (a b) c"))(x).shape == (6, 4)
    g = netcl.grad(lambda v: jnp.sum(einops.reduce(v, "a b c -> c", "max")))(x)
    np.testing.assert_array_equal(g, (h == h.max(axis=(0, 1))).astype(np.float32))


def test_logaddexp_derivative_splits_ties_as_jax():
    for ours, theirs in ((netcl.nn.softplus, jax.nn.softplus),
                         (netcl.nn.log_sigmoid, jax.nn.log_sigmoid)):
        assert float(netcl.grad(ours)(0.0)) == float(jax.grad(theirs)(0.0)) == 0.5
    x = np.array([-3.0, 0.0, 5.0, 40.0], np.float32)
    y = np.array([1.0, 0.0, 5.0, -40.0], np.float32)
    for k in (0, 1):
        np.testing.assert_allclose(
            netcl.grad(lambda a, b: jnp.sum(jnp.logaddexp(a, b)), argnums=k)(
                jnp.asarray(x), jnp.asarray(y)),
            jax.grad(lambda a, b: jax.numpy.sum(jax.numpy.logaddexp(a, b)), argnums=k)(x, y),
            rtol=1e-6)
