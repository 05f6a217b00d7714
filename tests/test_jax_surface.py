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
    assert jnp.ones(2).dtype == jnp.float32 and np.dtype(jnp.float32) == np.float32
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
