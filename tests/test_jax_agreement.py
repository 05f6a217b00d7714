"""Agreement with JAX: the same research code, written once against jax.numpy / jax.nn /
jax.lax names, run through JAX and through netcl's transforms, gives the same values and
gradients (float32, relative 2e-4). Runs where JAX is installed (`pip install jax`)."""
import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402

# On GPUs JAX runs float32 matmuls and convolutions in TF32 by default; compare against
# full float32, which is what netcl computes.
jax.config.update("jax_default_matmul_precision", "highest")

import netcl  # noqa: E402
import netcl.numpy as njnp  # noqa: E402

JAX = dict(np=jjnp, nn=jax.nn, lax=jax.lax, grad=jax.grad, vmap=jax.vmap, jit=jax.jit,
           value_and_grad=jax.value_and_grad, hessian=jax.hessian, jacrev=jax.jacrev,
           jacfwd=jax.jacfwd, stop_gradient=jax.lax.stop_gradient)
NETCL = dict(np=njnp, nn=netcl.nn, lax=netcl.lax, grad=netcl.grad, vmap=netcl.vmap,
             jit=netcl.jit, value_and_grad=netcl.value_and_grad, hessian=netcl.hessian,
             jacrev=netcl.jacrev, jacfwd=netcl.jacfwd, stop_gradient=netcl.stop_gradient)


def mlp_loss(L, params, x, y):
    np_, nn = L["np"], L["nn"]
    h = x
    for w, b in params[:-1]:
        h = nn.gelu(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -np_.mean(np_.sum(nn.log_softmax(logits) * y, axis=-1))


def conv_loss(L, params, x):
    lax, np_, nn = L["lax"], L["np"], L["nn"]
    k1, k2 = params
    h = lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = nn.relu(h)
    h = lax.reduce_window(h, -np_.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, k2, (2, 2), ((1, 0), (0, 1)), rhs_dilation=(1, 1),
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return np_.sum(nn.softplus(h)) / h.size


def layer_norm_attention(L, params, x):
    np_, nn = L["np"], L["nn"]
    wq, wk, wv = params
    x = (x - x.mean(-1, keepdims=True)) / np_.sqrt(x.var(-1, keepdims=True) + 1e-5)
    q, k, v = x @ wq, x @ wk, x @ wv
    att = nn.softmax(np_.einsum("td,sd->ts", q, k) / np_.sqrt(q.shape[-1]), axis=-1)
    return np_.sum(np_.tanh(att @ v) ** 2) + nn.logsumexp(x, axis=None)


def elementwise_zoo(L, params, x):
    np_, nn = L["np"], L["nn"]
    a, = params
    y = np_.where(x > 0, np_.sqrt(np_.abs(x) + 1.0), np_.exp(x) - 1.0) * a
    y = nn.sigmoid(y) + nn.silu(y) * np_.cos(y) + np_.arctan2(y, 1.5) + nn.elu(y - 0.3)
    y = np_.maximum(y, -0.5) + np_.clip(y, -1, 1) ** 3 + np_.log1p(y * y)
    return np_.sum(y * np_.take(x, np_.array([2, 0, 1, 3]), axis=-1)) + np_.max(y)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    f = lambda *s: rng.normal(size=s).astype(np.float32) * 0.5  # noqa: E731
    return {
        "mlp": (mlp_loss, ([(f(6, 8), f(8)), (f(8, 8), f(8)), (f(8, 4), f(4))],
                           f(5, 6), np.eye(4, dtype=np.float32)[rng.integers(0, 4, 5)])),
        "conv": (conv_loss, ((f(3, 3, 2, 4), f(2, 2, 4, 3)), f(2, 8, 8, 2))),
        "attention": (layer_norm_attention, ((f(6, 4), f(6, 4), f(6, 4)), f(5, 6))),
        "zoo": (elementwise_zoo, ((f(3, 4),), f(3, 4))),
    }


def _to(lib, tree):
    conv = jjnp.asarray if lib is JAX else njnp.asarray
    return jax.tree_util.tree_map(conv, tree)


def _close(a, b, rtol=2e-4):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        scale = max(np.abs(x).max(), 1e-6)
        assert np.abs(x - y).max() <= rtol * scale, (np.abs(x - y).max(), scale)


@pytest.mark.parametrize("case", ["mlp", "conv", "attention", "zoo"])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_values_and_grads_match_jax(case, mode):
    fn, args = _data()[case]
    out = {}
    for name, L in (("jax", JAX), ("netcl", NETCL)):
        f = (lambda *a, L=L: fn(L, *a))
        vg = L["value_and_grad"](f)
        if mode == "jit":
            vg = L["jit"](vg)
        out[name] = vg(*_to(L, args))
    _close(out["netcl"][0], out["jax"][0])
    _close(out["netcl"][1], out["jax"][1])


def test_per_example_grads_and_hessian_match_jax():
    fn, (params, x, y) = _data(1)["mlp"]
    res = {}
    for name, L in (("jax", JAX), ("netcl", NETCL)):
        per = L["vmap"](L["grad"](lambda p, xi, yi, L=L: fn(L, p, xi[None], yi[None])),
                        in_axes=(None, 0, 0))
        h = L["hessian"](lambda v, L=L: L["np"].sum(L["nn"].softplus(v) * v ** 2))
        res[name] = (per(*_to(L, (params, x, y))), h(_to(L, x[0])))
    _close(res["netcl"], res["jax"])
