"""netcl.stax: layers, initializers, combinators, the state convention and the models,
against NumPy references on small inputs (few distinct shapes, so few kernel builds)."""
import math

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import random, stax, tree_util
from netcl.stax import initializers as init

from util import assert_close, float32_params

KEY = random.PRNGKey(0)
RNG = np.random.default_rng(0)
ATOL = 2e-5


def host(x):
    return np.asarray(x)


def rnd(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def check_shapes(layer, input_shape, x, **kw):
    """init's output shape equals apply's; returns (params, y). Parameters are float32, as
    the data."""
    init_fun, apply_fun = layer
    out_shape, params = init_fun(KEY, input_shape)
    params = float32_params(params)
    y = apply_fun(params, jnp.asarray(x), **kw)
    assert tuple(out_shape) == tuple(y.shape), (out_shape, y.shape)
    return params, y


# ---- NumPy references -------------------------------------------------------------------

def np_conv_nhwc(x, w, strides=(1, 1), pads=((0, 0), (0, 0)), rhs_dil=(1, 1), groups=1,
                 lhs_dil=(1, 1)):
    """Cross-correlation, x NHWC, w HWIO (I = C / groups), float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, h, wd, c = x.shape
    xd = np.zeros((n, (h - 1) * lhs_dil[0] + 1, (wd - 1) * lhs_dil[1] + 1, c))
    xd[:, ::lhs_dil[0], ::lhs_dil[1]] = x
    xp = np.pad(xd, ((0, 0), pads[0], pads[1], (0, 0)))
    kh, kw, ci, co = w.shape
    ekh, ekw = (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1
    oh = (xp.shape[1] - ekh) // strides[0] + 1
    ow = (xp.shape[2] - ekw) // strides[1] + 1
    og = co // groups
    out = np.zeros((n, oh, ow, co))
    for g in range(groups):
        for a in range(kh):
            for b in range(kw):
                patch = xp[:, a * rhs_dil[0]: a * rhs_dil[0] + strides[0] * (oh - 1) + 1:
                           strides[0],
                           b * rhs_dil[1]: b * rhs_dil[1] + strides[1] * (ow - 1) + 1:
                           strides[1], g * ci:(g + 1) * ci]
                out[..., g * og:(g + 1) * og] += patch @ w[a, b, :, g * og:(g + 1) * og]
    return out


def np_pool(x, window, strides, pads, op):
    """NHWC pooling over H, W with explicit pads; op in max/sum/avg (avg excludes padding)."""
    fill = -np.inf if op == "max" else 0.0
    xp = np.pad(x.astype(np.float64), ((0, 0), pads[0], pads[1], (0, 0)),
                constant_values=fill)
    ones = np.pad(np.ones(x.shape[1:3]), pads)
    oh = (xp.shape[1] - window[0]) // strides[0] + 1
    ow = (xp.shape[2] - window[1]) // strides[1] + 1
    out = np.zeros((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, i * strides[0]:i * strides[0] + window[0],
                     j * strides[1]:j * strides[1] + window[1]]
            if op == "max":
                out[:, i, j] = win.max(axis=(1, 2))
            else:
                out[:, i, j] = win.sum(axis=(1, 2))
                if op == "avg":
                    out[:, i, j] /= ones[i * strides[0]:i * strides[0] + window[0],
                                         j * strides[1]:j * strides[1] + window[1]].sum()
    return out


# ---- initializers -------------------------------------------------------------------------

@pytest.mark.parametrize("name,scale,mode,trunc", [
    ("glorot_normal", 1.0, "fan_avg", True), ("glorot_uniform", 1.0, "fan_avg", False),
    ("he_normal", 2.0, "fan_in", True), ("he_uniform", 2.0, "fan_in", False),
    ("lecun_normal", 1.0, "fan_in", True), ("lecun_uniform", 1.0, "fan_in", False)])
def test_variance_scaling_statistics(name, scale, mode, trunc):
    fan_in, fan_out = 300, 500
    w = host(getattr(init, name)()(KEY, (fan_in, fan_out)))
    default = np.float64 if netcl.config.enable_x64 else np.float32    # (as JAX's)
    assert w.shape == (fan_in, fan_out) and w.dtype == default
    n = {"fan_in": fan_in, "fan_avg": (fan_in + fan_out) / 2}[mode]
    var = scale / n
    assert abs(w.var() / var - 1) < 0.03, (w.var(), var)
    assert abs(w.mean()) < 0.01 * math.sqrt(var) * 10
    bound = 2 * math.sqrt(var) / 0.87962566103423978 if trunc else math.sqrt(3 * var)
    assert np.abs(w).max() <= bound * (1 + 1e-6)
    assert np.abs(w).max() > 0.95 * bound  # the tails reach the bound (150k samples)


def test_variance_scaling_conv_fans_and_distributions():
    # HWIO kernel: fan_in = 3*3*16, fan_out = 3*3*32
    w = host(init.variance_scaling(2.0, "fan_in", "normal")(KEY, (3, 3, 16, 64)))
    assert abs(w.var() / (2.0 / 144) - 1) < 0.05
    assert np.abs(w).max() > 2 * 1.2 * math.sqrt(2.0 / 144)   # untruncated tails
    # OIHW kernel: in_axis=1, out_axis=0
    w = host(init.glorot_uniform(in_axis=1, out_axis=0)(KEY, (64, 16, 3, 3)))
    assert abs(w.var() / (2.0 / (9 * (16 + 64))) - 1) < 0.05
    w = host(init.variance_scaling(1.0, "fan_out", "uniform")(KEY, (50, 400)))
    assert abs(w.var() / (1 / 400) - 1) < 0.05
    assert init.kaiming_normal is init.he_normal and init.xavier_uniform is init.glorot_uniform


def test_simple_initializers():
    a = host(init.normal(0.5)(KEY, (200, 100)))
    assert abs(a.std() / 0.5 - 1) < 0.03
    assert abs(host(init.normal()(KEY, (20000,))).std() / 1e-2 - 1) < 0.03
    u = host(init.uniform(2.0)(KEY, (20000,)))
    assert u.min() >= 0 and u.max() < 2.0 and abs(u.mean() - 1) < 0.03
    t = host(init.truncated_normal(1.0)(KEY, (20000,)))
    assert np.abs(t).max() < 2.0
    np.testing.assert_array_equal(host(init.zeros(KEY, (2, 3))), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(host(init.ones(KEY, (4,))), np.ones(4, np.float32))
    np.testing.assert_array_equal(host(init.constant(3.0)(KEY, (2,))), [3.0, 3.0])
    # determinism per key
    g = init.glorot_normal()
    k1, k2 = random.split(KEY)
    np.testing.assert_array_equal(host(g(k1, (4, 5))), host(g(k1, (4, 5))))
    assert not np.array_equal(host(g(k1, (4, 5))), host(g(k2, (4, 5))))


def test_initializer_errors():
    with pytest.raises(ValueError, match="variance_scaling.*mode"):
        init.variance_scaling(1.0, "fan_sum", "normal")
    with pytest.raises(ValueError, match="variance_scaling.*distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="variance_scaling.*scale"):
        init.variance_scaling(-1.0, "fan_in", "normal")
    with pytest.raises(ValueError, match=r"variance_scaling.*\(5,\)"):
        init.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match="normal.*stddev"):
        init.normal(-1.0)
    with pytest.raises(TypeError, match="variance_scaling.*dtype"):
        init.he_normal()(KEY, (3, 3), jnp.int32)


# ---- Dense, Embedding, Flatten, Identity, elementwise -------------------------------------

def test_dense_matches_numpy_and_stax_tree():
    x = rnd(3, 4)
    params, y = check_shapes(stax.Dense(5), (3, 4), x)
    W, b = params
    assert W.shape == (4, 5) and b.shape == (5,)
    assert_close(y, x @ host(W) + host(b), atol=ATOL)
    out_shape, _ = stax.Dense(5)[0](KEY, (-1, 7, 4))
    assert out_shape == (-1, 7, 5)
    # W drawn with glorot_normal from the first split key, b with normal(1e-2) (stax), both of
    # the default float
    _, (W, b) = stax.Dense(5)[0](KEY, (3, 4))
    k1, k2 = random.split(KEY)
    np.testing.assert_array_equal(host(W), host(init.glorot_normal()(k1, (4, 5))))
    np.testing.assert_array_equal(host(b), host(init.normal()(k2, (5,))))


def test_embedding_matches_numpy():
    ids = np.array([[0, 3, 1], [2, 2, 0]], np.int32)
    out_shape, table = stax.Embedding(4, 3)[0](KEY, ids.shape)
    assert out_shape == (2, 3, 3) and table.shape == (4, 3)
    y = stax.Embedding(4, 3)[1](table, jnp.asarray(ids))
    assert_close(y, host(table)[ids])
    with pytest.raises(TypeError, match="Embedding.*integer"):
        stax.Embedding(4, 3)[1](table, jnp.asarray(ids.astype(np.float32)))


def test_flatten_identity():
    x = rnd(2, 3, 2, 2)
    _, y = check_shapes(stax.Flatten, x.shape, x)
    assert_close(y, x.reshape(2, 12))
    _, y = check_shapes(stax.Identity, x.shape, x)
    assert_close(y, x)


def _np_gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


ELEMENTWISE = {
    "Relu": lambda x: np.maximum(x, 0), "Gelu": _np_gelu,
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Tanh": np.tanh,
    "Softplus": lambda x: np.log1p(np.exp(x)),
    "Elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "LeakyRelu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "Selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "Softmax": _np_softmax, "LogSoftmax": lambda x: np.log(_np_softmax(x)), "Exp": np.exp}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_layers(name):
    x = rnd(2, 5)
    params, y = check_shapes(getattr(stax, name), x.shape, x)
    assert params == ()
    assert_close(y, ELEMENTWISE[name](x.astype(np.float64)), rtol=1e-5, atol=1e-5)


# ---- Dropout -------------------------------------------------------------------------------

def test_dropout_rate_is_keep_probability_as_in_stax():
    x = np.ones((100, 200), np.float32)
    init_fun, apply_fun = stax.Dropout(0.75)
    out_shape, params = init_fun(KEY, x.shape)
    assert out_shape == x.shape and params == ()
    y = host(apply_fun(params, jnp.asarray(x), rng=KEY))
    dropped = (y == 0).mean()
    assert abs(dropped - 0.25) < 0.01, dropped
    np.testing.assert_allclose(y[y != 0], 1 / 0.75, rtol=1e-6)
    # the same key gives the same mask; another key another one
    np.testing.assert_array_equal(y, host(apply_fun(params, jnp.asarray(x), rng=KEY)))
    y2 = host(apply_fun(params, jnp.asarray(x), rng=random.PRNGKey(1)))
    assert not np.array_equal(y == 0, y2 == 0)
    # stax's Dropout(keep) draws bernoulli(rng, keep): the same mask
    keep = host(random.bernoulli(KEY, 0.75, x.shape))
    np.testing.assert_array_equal(y != 0, keep)


def test_dropout_modes():
    x = rnd(4, 3)
    _, apply_fun = stax.Dropout(0.5)
    assert_close(apply_fun((), jnp.asarray(x), mode="eval"), x)
    assert_close(apply_fun((), jnp.asarray(x), rng=KEY, mode="test"), x)
    assert_close(stax.Dropout(0.5, mode="eval")[1]((), jnp.asarray(x)), x)
    assert_close(stax.Dropout(1.0)[1]((), jnp.asarray(x), rng=KEY), x)
    with pytest.raises(ValueError, match="Dropout.*PRNG key"):
        apply_fun((), jnp.asarray(x))
    with pytest.raises(ValueError, match="Dropout.*mode"):
        apply_fun((), jnp.asarray(x), rng=KEY, mode="training")
    with pytest.raises(ValueError, match="Dropout.*rate.*KEEPING"):
        stax.Dropout(0.0)
    with pytest.raises(ValueError, match="Dropout.*rate"):
        stax.Dropout(-0.1)
    with pytest.raises(ValueError, match="Dropout.*rate"):
        stax.Dropout(1.5)


# ---- convolutions --------------------------------------------------------------------------

@pytest.mark.parametrize("kw,pads", [
    (dict(padding="SAME"), ((1, 1), (1, 1))),
    (dict(padding="VALID", strides=(2, 1)), ((0, 0), (0, 0))),
    (dict(padding=((1, 0), (2, 1)), rhs_dilation=(1, 2)), ((1, 0), (2, 1))),
    (dict(padding="SAME", feature_group_count=2), ((1, 1), (1, 1)))])
def test_conv_nhwc_matches_numpy(kw, pads):
    x = rnd(2, 6, 5, 4)
    params, y = check_shapes(stax.Conv(6, (3, 3), **kw), x.shape, x)
    W, b = params
    groups = kw.get("feature_group_count", 1)
    assert W.shape == (3, 3, 4 // groups, 6) and b.shape == (1, 1, 1, 6)
    want = np_conv_nhwc(x, host(W), kw.get("strides", (1, 1)), pads,
                        kw.get("rhs_dilation", (1, 1)), groups) + host(b)
    assert_close(y, want, atol=1e-4)


def test_conv_nchw_matches_numpy():
    x = rnd(2, 4, 6, 5)   # NCHW
    layer = stax.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (3, 2), strides=(1, 2),
                             padding="SAME")
    params, y = check_shapes(layer, x.shape, x)
    W, b = params
    assert W.shape == (3, 4, 3, 2) and b.shape == (1, 3, 1, 1)
    w_hwio = host(W).transpose(2, 3, 1, 0)
    # SAME for H: k=3, s=1 -> (1, 1); W: n=5, k=2, s=2 -> out 3, total 1 -> (0, 1)
    want = np_conv_nhwc(x.transpose(0, 2, 3, 1), w_hwio, (1, 2), ((1, 1), (0, 1)))
    assert_close(y, want.transpose(0, 3, 1, 2) + host(b), atol=1e-4)


@pytest.mark.parametrize("padding,strides", [("SAME", (2, 2)), ("VALID", (2, 1))])
def test_conv_transpose_matches_numpy(padding, strides):
    x = rnd(1, 3, 4, 2)
    params, y = check_shapes(stax.ConvTranspose(3, (3, 3), strides=strides, padding=padding),
                             x.shape, x)
    W, b = params
    want_hw = tuple(n * s if padding == "SAME" else n * s + max(3 - s, 0)
                    for n, s in zip((3, 4), strides))
    assert y.shape == (1,) + want_hw + (3,)
    # lax.conv_transpose = conv over the stride-dilated input with these pads
    def pads(k, s):
        if padding == "SAME":
            lo = k - 1 if s > k - 1 else -(-(k + s - 2) // 2)
            return lo, k + s - 2 - lo
        return k - 1, k + s - 2 + max(k - s, 0) - (k - 1)
    want = np_conv_nhwc(x, host(W), (1, 1), (pads(3, strides[0]), pads(3, strides[1])),
                        lhs_dil=strides) + host(b)
    assert_close(y, want, atol=1e-4)


# ---- pooling -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["max", "sum", "avg"])
@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_pools_match_numpy(op, padding):
    x = rnd(2, 5, 5, 3)
    layer = {"max": stax.MaxPool, "sum": stax.SumPool, "avg": stax.AvgPool}[op]
    params, y = check_shapes(layer((2, 2), strides=(2, 2), padding=padding), x.shape, x)
    assert params == ()
    pads = ((0, 0), (0, 0)) if padding == "VALID" else ((0, 1), (0, 1))
    assert_close(y, np_pool(x, (2, 2), (2, 2), pads, op), atol=1e-5)


def test_pool_nchw_spec_and_explicit_padding():
    x = rnd(2, 3, 5, 4)   # NCHW
    _, y = check_shapes(stax.AvgPool((3, 2), strides=(1, 2), padding=((1, 1), (0, 0)),
                                     spec="NCHW"), x.shape, x)
    want = np_pool(x.transpose(0, 2, 3, 1), (3, 2), (1, 2), ((1, 1), (0, 0)), "avg")
    assert_close(y, want.transpose(0, 3, 1, 2), atol=1e-5)
    _, y = check_shapes(stax.MaxPool((2, 2), spec="NCHW"), x.shape, x)
    want = np_pool(x.transpose(0, 2, 3, 1), (2, 2), (1, 1), ((0, 0), (0, 0)), "max")
    assert_close(y, want.transpose(0, 3, 1, 2))


# ---- normalisation -------------------------------------------------------------------------

def np_norm(x, axes, eps=1e-5):
    x = x.astype(np.float64)
    m = x.mean(axes, keepdims=True)
    v = ((x - m) ** 2).mean(axes, keepdims=True)
    return (x - m) / np.sqrt(v + eps), m, v


def test_batchnorm_stax_behaviour_without_state():
    x = rnd(4, 3, 3, 5) * 2 + 1
    init_fun, apply_fun = stax.BatchNorm()
    out_shape, (beta, gamma) = init_fun(KEY, x.shape)
    assert out_shape == x.shape and beta.shape == gamma.shape == (5,)
    beta, gamma = jnp.asarray(rnd(5)), jnp.asarray(rnd(5))
    y = apply_fun((beta, gamma), jnp.asarray(x))
    z, _, _ = np_norm(x, (0, 1, 2))
    assert_close(y, z * host(gamma) + host(beta), atol=1e-4)
    # center / scale off: () in the parameter tree
    _, params = stax.BatchNorm(axis=0, center=False)[0](KEY, (7, 5))
    assert params[0] == () and params[1].shape == (5,)
    x2 = rnd(7, 5)
    assert_close(stax.BatchNorm(axis=0, center=False, scale=False)[1](((), ()),
                 jnp.asarray(x2)), np_norm(x2, (0,))[0], atol=1e-4)


def test_batchnorm_running_statistics():
    x = rnd(6, 4) * 3 + 2
    init_fun, apply_fun = stax.BatchNorm(axis=(0,), momentum=0.9)
    _, params, state = init_fun(KEY, x.shape, return_state=True)
    assert isinstance(state, stax.BatchNormState)
    np.testing.assert_array_equal(host(state.mean), np.zeros(4, np.float32))
    np.testing.assert_array_equal(host(state.var), np.ones(4, np.float32))
    y, new = apply_fun(params, jnp.asarray(x), state=state)
    z, m, v = np_norm(x, (0,))
    assert_close(y, z, atol=1e-4)
    assert_close(new.mean, 0.1 * m[0], atol=1e-5)
    assert_close(new.var, 0.9 + 0.1 * v[0], atol=1e-5)
    # eval: the running statistics, state unchanged
    x_eval = rnd(3, 4)
    y_eval, same = apply_fun(params, jnp.asarray(x_eval), state=new, mode="eval")
    assert same is new
    want = (x_eval - host(new.mean)) / np.sqrt(host(new.var) + 1e-5)
    assert_close(y_eval, want, atol=1e-4)
    with pytest.raises(ValueError, match="BatchNorm.*eval.*state"):
        apply_fun(params, jnp.asarray(x_eval), mode="eval")
    with pytest.raises(ValueError, match=r"BatchNorm.*running mean.*\(4,\)"):
        apply_fun(params, jnp.asarray(x), state=stax.BatchNormState(jnp.zeros(3), new.var))


def test_layernorm_matches_numpy():
    x = rnd(3, 2, 6)
    params, y = check_shapes(stax.LayerNorm(), x.shape, x)
    assert params[0].shape == params[1].shape == (6,)
    assert_close(y, np_norm(x, (2,))[0], atol=1e-4)
    layer = stax.LayerNorm(axis=(1, 2))
    _, (beta, gamma) = layer[0](KEY, x.shape)
    assert beta.shape == (2, 6)
    beta, gamma = jnp.asarray(rnd(2, 6)), jnp.asarray(rnd(2, 6))
    y = layer[1]((beta, gamma), jnp.asarray(x))
    assert_close(y, np_norm(x, (1, 2))[0] * host(gamma) + host(beta), atol=1e-4)


# ---- combinators and state threading -------------------------------------------------------

def test_serial_parallel_fan_combinators():
    x = rnd(3, 4)
    net = stax.serial(stax.Dense(6), stax.Relu,
                      stax.FanOut(3),
                      stax.parallel(stax.Dense(2), stax.Identity, stax.Dense(2)),
                      stax.parallel(stax.Identity, stax.Dense(2), stax.Identity),
                      stax.FanInSum)
    params, y = check_shapes(net, x.shape, x)
    # stax's parameter tree: a list for serial, a tuple for parallel, () when parameter-free
    structure = tree_util.tree_map(lambda a: a.shape, params)
    assert structure == [((4, 6), (6,)), (), (), (((6, 2), (2,)), (), ((6, 2), (2,))),
                         ((), ((6, 2), (2,)), ()), ()]
    (W1, b1), _, _, (p_a, _, p_c), (_, p_b, _), _ = params
    h = np.maximum(x @ host(W1) + host(b1), 0)
    dense = lambda p, v: v @ host(p[0]) + host(p[1])  # noqa: E731
    want = dense(p_a, h) + dense(p_b, h) + dense(p_c, h)
    assert_close(y, want, atol=1e-4)


def test_fan_in_concat_and_shape_dependent():
    x = rnd(2, 3)
    net = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(4), stax.Identity),
                      stax.FanInConcat())
    params, y = check_shapes(net, x.shape, x)
    assert y.shape == (2, 7)
    W, b = params[1][0]
    assert_close(y, np.concatenate([x @ host(W) + host(b), x], -1), atol=1e-5)
    layer = stax.shape_dependent(lambda s: stax.Dense(s[-1] * 2))
    params, y = check_shapes(layer, x.shape, x)
    assert params[0].shape == (3, 6)


def test_serial_splits_rng_per_layer():
    x = jnp.asarray(np.ones((50, 40), np.float32))
    net = stax.serial(stax.Dropout(0.5), stax.Dropout(0.5))
    _, params = net[0](KEY, x.shape)
    y1, y2 = host(net[1](params, x, rng=KEY)), host(net[1](params, x, rng=KEY))
    np.testing.assert_array_equal(y1, y2)
    assert abs((y1 == 0).mean() - 0.75) < 0.03
    k1, k2 = random.split(KEY, 2)
    m1 = host(random.bernoulli(k1, 0.5, (50, 40)))
    m2 = host(random.bernoulli(k2, 0.5, (50, 40)))
    np.testing.assert_array_equal(y1 != 0, m1 & m2)
    np.testing.assert_array_equal(host(net[1](params, x, mode="eval")), host(x))


def test_state_threads_through_nested_combinators():
    x = rnd(5, 3) * 2 + 1
    net = stax.serial(stax.Dense(4), stax.BatchNorm(axis=0),
                      stax.FanOut(2),
                      stax.parallel(stax.serial(stax.Relu, stax.BatchNorm(axis=0)),
                                    stax.Identity),
                      stax.FanInSum, stax.Dropout(0.5))
    out_shape, params, state = net[0](KEY, x.shape, return_state=True)
    assert out_shape == (5, 4)
    # without return_state: the same params (same keys), stax's (shape, params)
    out2, params2 = net[0](KEY, x.shape)
    assert tree_util.tree_structure(params) == tree_util.tree_structure(params2)
    assert isinstance(state[1], stax.BatchNormState) and state[0] == () and state[2] == ()
    assert isinstance(state[3][0][1], stax.BatchNormState) and state[3][1] == ()
    y, new_state = net[1](params, jnp.asarray(x), state=state, mode="eval")
    assert tree_util.tree_structure(new_state) == tree_util.tree_structure(state)
    y, new_state = net[1](params, jnp.asarray(x), state=state, rng=KEY)
    assert tree_util.tree_structure(new_state) == tree_util.tree_structure(state)
    W, b = params[0]
    h = x @ host(W) + host(b)
    assert_close(new_state[1].mean, 0.01 * h.mean(0), atol=1e-5)
    hn = np_norm(h, (0,))[0]
    assert_close(new_state[3][0][1].mean, 0.01 * np.maximum(hn, 0).mean(0), atol=1e-5)
    # without state the same net is plain stax: outputs only
    y2 = net[1](params, jnp.asarray(x), rng=KEY)
    assert_close(y2, host(y))


def test_state_convention_under_jit():
    net = stax.serial(stax.Dense(4), stax.BatchNorm(axis=0), stax.Relu, stax.Dropout(0.5))
    _, params, state = net[0](KEY, (6, 3), return_state=True)
    x = jnp.asarray(rnd(6, 3))
    step = netcl.jit(lambda p, s, x, k: net[1](p, x, state=s, rng=k))
    y, new = step(params, state, x, KEY)
    y_ref, new_ref = net[1](params, x, state=state, rng=KEY)
    assert_close(y, host(y_ref), atol=1e-5)
    for a, b in zip(tree_util.tree_leaves(new), tree_util.tree_leaves(new_ref)):
        assert_close(a, host(b), atol=1e-6)


def test_plain_stax_layers_compose_with_state():
    """A user-written layer without the state convention still works inside serial."""
    def Double():
        return (lambda rng, shape: (shape, ()), lambda params, x, **kw: x * 2.0)
    net = stax.serial(Double(), stax.BatchNorm(axis=0))
    _, params, state = net[0](KEY, (4, 2), return_state=True)
    assert state[0] == ()
    x = rnd(4, 2)
    y, state = net[1](params, jnp.asarray(x), state=state)
    assert_close(y, np_norm(2 * x, (0,))[0], atol=1e-4)


# ---- models --------------------------------------------------------------------------------

def _sgd(params, grads, lr):
    return tree_util.tree_map(lambda p, g: p - lr * g, params, grads)


def _xent(logits, labels):
    return -jnp.mean(jnp.sum(netcl.nn.log_softmax(logits) * labels, axis=-1))


def test_mlp_shapes_and_training_step():
    init_fun, apply_fun = stax.mlp([8, 8, 3])
    out_shape, params = init_fun(KEY, (-1, 5))
    assert out_shape == (-1, 3) and len(params) == 5
    x = jnp.asarray(rnd(6, 5))
    labels = jnp.asarray(np.eye(3, dtype=np.float32)[RNG.integers(0, 3, 6)])
    loss = lambda p: _xent(apply_fun(p, x), labels)  # noqa: E731
    l0, g = netcl.value_and_grad(loss)(params)
    l1 = loss(_sgd(params, g, 0.5))
    assert float(l1) < float(l0)


def test_lenet_shapes_and_training_step():
    init_fun, apply_fun = stax.lenet(4)
    out_shape, params = init_fun(KEY, (2, 12, 12, 1))
    params = float32_params(params)
    assert out_shape == (2, 4)
    x = jnp.asarray(rnd(2, 12, 12, 1))
    y = apply_fun(params, x)
    assert y.shape == (2, 4)
    labels = jnp.asarray(np.eye(4, dtype=np.float32)[[1, 3]])
    loss = lambda p: _xent(apply_fun(p, x), labels)  # noqa: E731
    l0, g = netcl.value_and_grad(loss)(params)
    assert float(loss(_sgd(params, g, 0.05))) < float(l0)


def test_resnet_shapes_state_and_training_step():
    init_fun, apply_fun = stax.resnet(3, stages=(1, 1), width=4)
    out_shape, params, state = init_fun(KEY, (4, 8, 8, 2), return_state=True)
    params, state = float32_params((params, state))
    assert out_shape == (4, 3)
    x = jnp.asarray(rnd(4, 8, 8, 2))
    labels = jnp.asarray(np.eye(3, dtype=np.float32)[[0, 1, 2, 1]])

    def loss(p, s):
        logits, s = apply_fun(p, x, state=s)
        return _xent(logits, labels), s
    (l0, new_state), g = netcl.value_and_grad(loss, has_aux=True)(params, state)
    assert tree_util.tree_structure(new_state) == tree_util.tree_structure(state)
    assert tree_util.tree_structure(g) == tree_util.tree_structure(params)
    (l1, _), _ = netcl.value_and_grad(loss, has_aux=True)(_sgd(params, g, 0.1), new_state)
    assert float(l1) < float(l0)
    logits, same = apply_fun(params, x, state=new_state, mode="eval")
    assert logits.shape == (4, 3)
    assert all(a is b for a, b in zip(tree_util.tree_leaves(same),
                                      tree_util.tree_leaves(new_state)))
    assert apply_fun(params, x).shape == (4, 3)     # stax style: batch statistics


# ---- bad inputs ----------------------------------------------------------------------------

def test_bad_inputs_name_the_layer_and_shapes():
    _, params = stax.Dense(3)[0](KEY, (2, 4))
    with pytest.raises(ValueError, match=r"Dense.*\(2, 5\).*\(4, 3\)"):
        stax.Dense(3)[1](params, jnp.ones((2, 5)))
    with pytest.raises(ValueError, match="Dense.*out_dim"):
        stax.Dense(0)
    with pytest.raises(ValueError, match=r"Conv.*\(2, 5, 3\).*rank"):
        stax.Conv(4, (3, 3))[0](KEY, (2, 5, 3))
    _, params = stax.Conv(4, (3, 3))[0](KEY, (1, 5, 5, 3))
    with pytest.raises(ValueError, match=r"Conv.*\(5, 5, 3\).*rank"):
        stax.Conv(4, (3, 3))[1](params, jnp.ones((5, 5, 3)))
    with pytest.raises(ValueError, match=r"Conv.*\(1, 5, 5, 2\).*channels"):
        stax.Conv(4, (3, 3))[1](params, jnp.ones((1, 5, 5, 2)))
    with pytest.raises(ValueError, match="Conv.*padding 'FULL'"):
        stax.Conv(4, (3, 3), padding="FULL")
    with pytest.raises(ValueError, match="MaxPool.*padding"):
        stax.MaxPool((2, 2), padding="same-ish")
    with pytest.raises(ValueError, match="Conv.*feature_group_count"):
        stax.Conv(4, (3, 3), feature_group_count=3)
    with pytest.raises(ValueError, match=r"AvgPool.*\(2, 4\).*rank"):
        stax.AvgPool((2, 2))[0](KEY, (2, 4))
    with pytest.raises(ValueError, match=r"BatchNorm.*axis.*\(3, 4\)"):
        stax.BatchNorm()[0](KEY, (3, 4))
    with pytest.raises(ValueError, match="BatchNorm.*momentum"):
        stax.BatchNorm(momentum=1.5)
    with pytest.raises(ValueError, match="FanInSum.*same shape"):
        stax.FanInSum[0](KEY, [(2, 3), (2, 4)])
    with pytest.raises(ValueError, match="serial.*params"):
        stax.serial(stax.Relu, stax.Relu)[1]([()], jnp.ones(3))
    with pytest.raises(TypeError, match="serial.*layer 1"):
        stax.serial(stax.Relu, stax.Dense)
    with pytest.raises(ValueError, match="mlp"):
        stax.mlp([])
