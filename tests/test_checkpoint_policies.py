"""Checkpoint policies (netcl.checkpoint_policies, netcl.ad_checkpoint.checkpoint_name): every
policy gives plain differentiation's gradients (float64, against JAX's jax.checkpoint with
the same policy), eagerly and under jit and vmap; the saved values are not computed again
(matrix products counted in the traced gradient); checkpoint_name is the identity under
every transform; a policy sees each primitive with its inputs' abstract values."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import checkpoint_policies as cp
from netcl.ad_checkpoint import checkpoint_name

jax = pytest.importorskip("jax")

RNG = np.random.default_rng(3)
W1, W2, X = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 3)), RNG.standard_normal((2, 4))


def layer(m, name):
    def f(w1, w2, x):
        h = name(m.tanh(x @ w1), "hidden")
        return m.sum(m.sin(h @ w2) ** 2)
    return f


POLICIES = {
    "none": lambda c: None, "nothing": lambda c: c.nothing_saveable,
    "everything": lambda c: c.everything_saveable, "dots": lambda c: c.dots_saveable,
    "dots_no_batch": lambda c: c.dots_with_no_batch_dims_saveable,
    "names": lambda c: c.save_only_these_names("hidden"),
    "but_these": lambda c: c.save_any_names_but_these("other"),
    "except": lambda c: c.save_anything_except_these_names("hidden"),
    "both": lambda c: c.save_from_both_policies(c.dots_saveable,
                                                c.save_only_these_names("hidden")),
}


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_policies_give_plain_gradients(policy, x64_on):
    from jax.ad_checkpoint import checkpoint_name as jax_name
    want = jax.grad(jax.checkpoint(layer(jax.numpy, jax_name),
                                   policy=POLICIES[policy](jax.checkpoint_policies)),
                    argnums=(0, 1, 2))(W1, W2, X)
    f = netcl.checkpoint(layer(jnp, checkpoint_name), policy=POLICIES[policy](cp))
    g = netcl.grad(f, argnums=(0, 1, 2))
    args = [jnp.asarray(a) for a in (W1, W2, X)]
    for got in (g(*args), netcl.jit(g)(*args)):
        for a, b in zip(got, want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
    batched = netcl.vmap(g, in_axes=(None, None, 0))(*args[:2], jnp.stack([args[2]] * 2))
    np.testing.assert_allclose(np.asarray(batched[0][1]), np.asarray(want[0]), rtol=1e-12)


def test_saved_values_are_not_computed_again(x64_on):
    args = [jnp.asarray(a) for a in (W1, W2, X)]

    def counts(policy):
        g = netcl.grad(netcl.checkpoint(layer(jnp, checkpoint_name), policy=policy),
                       argnums=(0, 1, 2))
        text = str(netcl.make_jaxpr(g)(*args))
        return text.count("dot_general"), text.count("tanh")
    # forward 2 products, again 2 in the backward pass, and 4 for the gradients
    assert counts(cp.nothing_saveable) == counts(None) == (8, 2)
    assert counts(cp.dots_saveable) == (6, 2)           # the products are kept
    assert counts(cp.everything_saveable) == (6, 1)     # nothing runs again


def test_checkpoint_name_is_the_identity_and_policies_see_avals():
    x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    for f in (lambda v: checkpoint_name(v, "a") * 2.0,
              netcl.jit(lambda v: checkpoint_name(v, "a") * 2.0),
              netcl.vmap(lambda v: checkpoint_name(v, "a") * 2.0)):
        np.testing.assert_allclose(np.asarray(f(x)), np.asarray(x) * 2.0)
    np.testing.assert_allclose(
        np.asarray(netcl.grad(lambda v: jnp.sum(checkpoint_name({"v": v}, "t")["v"] ** 2))(x)),
        2 * np.asarray(x))
    seen = []

    def policy(prim, *avals, **params):
        seen.append((prim.name, tuple(tuple(a.shape) for a in avals)))
        return False
    netcl.grad(netcl.checkpoint(lambda v: jnp.sum(jnp.sin(v @ v.T)), policy=policy))(x)
    assert ("dot_general", ((2, 3), (3, 2))) in seen or \
        ("dot_general", ((2, 3), (2, 3))) in seen, seen
    with pytest.raises(TypeError, match="checkpoint: policy must be a function"):
        netcl.checkpoint(lambda v: v, policy="dots")
