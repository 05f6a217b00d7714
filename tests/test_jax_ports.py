"""Programs written against JAX, run twice with only the imports changed: once with JAX's
modules, once with netcl's. Each is a small version of a JAX example or tutorial (a stax
classifier trained with example_libraries.optimizers, kernel least squares by gradient
descent with vmap, an RNN over lax.scan trained with jit(grad), a VAE-style objective with
random.normal and the reparameterisation trick, a per-example-gradient clipping step, a
Gaussian process's marginal likelihood through Cholesky and triangular solves), and their
numbers must agree."""
import types

import numpy as np
import pytest

import netcl

jax = pytest.importorskip("jax")


def _modules(lib):
    """What a JAX program imports, from JAX or from netcl."""
    if lib == "jax":
        import jax.numpy as jnp
        import jax.scipy.linalg as sla
        from jax import lax, random
        from jax.example_libraries import optimizers, stax
        return types.SimpleNamespace(jit=jax.jit, grad=jax.grad, vmap=jax.vmap,
                                     value_and_grad=jax.value_and_grad, jnp=jnp, lax=lax,
                                     random=random, stax=stax, optimizers=optimizers,
                                     tree_map=jax.tree_util.tree_map, scipy_linalg=sla)
    import netcl.numpy as jnp
    import netcl.scipy.linalg as sla
    from netcl import lax, random
    from netcl.example_libraries import optimizers, stax
    return types.SimpleNamespace(jit=netcl.jit, grad=netcl.grad, vmap=netcl.vmap,
                                 value_and_grad=netcl.value_and_grad, jnp=jnp, lax=lax,
                                 random=random, stax=stax, optimizers=optimizers,
                                 tree_map=netcl.tree_util.tree_map, scipy_linalg=sla)


def _blobs(n=96, d=12, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((classes, d)) * 2
    y = rng.integers(0, classes, n)
    x = (centers[y] + rng.standard_normal((n, d))).astype(np.float32)
    return x, np.eye(classes, dtype=np.float32)[y]


def classifier(m):
    """mnist_classifier.py's shape: stax MLP, optimizers.momentum, jit(update)."""
    x, y = _blobs()
    init_random_params, predict = m.stax.serial(
        m.stax.Dense(32), m.stax.Relu, m.stax.Dense(32), m.stax.Relu, m.stax.Dense(3),
        m.stax.LogSoftmax)

    def loss(params, batch):
        inputs, targets = batch
        return -m.jnp.mean(m.jnp.sum(predict(params, inputs) * targets, axis=1))

    def accuracy(params, batch):
        inputs, targets = batch
        return m.jnp.mean(m.jnp.argmax(predict(params, inputs), axis=1) ==
                          m.jnp.argmax(targets, axis=1))
    opt_init, opt_update, get_params = m.optimizers.momentum(0.05, mass=0.9)

    @m.jit
    def update(i, opt_state, batch):
        params = get_params(opt_state)
        return opt_update(i, m.grad(loss)(params, batch), opt_state)
    _, init_params = init_random_params(m.random.PRNGKey(0), (-1, 12))
    opt_state = opt_init(init_params)
    for i in range(30):
        k = (i * 32) % 96
        opt_state = update(i, opt_state, (x[k:k + 32], y[k:k + 32]))
    params = get_params(opt_state)
    return [float(loss(params, (x, y))), float(accuracy(params, (x, y)))] + \
        [np.asarray(p) for layer in params for p in layer]


def kernel_lsq(m):
    """kernel_lsq.py's shape: a Gram matrix by nested vmap, gradient descent under jit."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((40, 3)).astype(np.float32)
    y = np.sin(x.sum(1)).astype(np.float32)

    def rbf(a, b):
        return m.jnp.exp(-m.jnp.sum((a - b) ** 2) / 2.0)
    gram = m.vmap(lambda a: m.vmap(lambda b: rbf(a, b))(x))(x)

    def objective(alpha):
        r = gram @ alpha - y
        return m.jnp.dot(r, r) / 2.0 + 1e-3 * m.jnp.dot(alpha, gram @ alpha)
    step = m.jit(lambda a: a - 0.01 * m.grad(objective)(a))
    alpha = m.jnp.zeros(40)
    for _ in range(50):
        alpha = step(alpha)
    return [np.asarray(alpha), float(objective(alpha))]


def rnn_over_scan(m):
    """A tanh RNN over lax.scan (longer than netcl writes out), trained by jit(grad)."""
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((80, 4)).astype(np.float32)
    target = np.float32(0.5)
    params = {"w": (rng.standard_normal((8, 8)) * 0.3).astype(np.float32),
              "u": (rng.standard_normal((4, 8)) * 0.3).astype(np.float32),
              "v": (rng.standard_normal(8) * 0.3).astype(np.float32)}

    def loss(p):
        def step(h, x):
            h = m.jnp.tanh(h @ p["w"] + x @ p["u"])
            return h, m.jnp.dot(h, p["v"])
        _, outs = m.lax.scan(step, m.jnp.zeros(8), xs)
        return m.jnp.mean((outs - target) ** 2)
    update = m.jit(lambda p: m.tree_map(lambda a, g: a - 0.1 * g, p, m.grad(loss)(p)))
    for _ in range(5):
        params = update(params)
    return [float(loss(params))] + [np.asarray(params[k]) for k in ("w", "u", "v")]


def vae_objective(m):
    """mnist_vae.py's shape: an encoder's mean and log-variance, a reparameterised sample
    from random.normal, a decoder, an ELBO, its gradient under jit."""
    x = _blobs(32, 10, 2, seed=3)[0]
    enc_init, encode = m.stax.serial(m.stax.Dense(16), m.stax.Softplus,
                                     m.stax.FanOut(2), m.stax.parallel(m.stax.Dense(4),
                                                                       m.stax.Dense(4)))
    dec_init, decode = m.stax.serial(m.stax.Dense(16), m.stax.Relu, m.stax.Dense(10))
    k1, k2, k3 = m.random.split(m.random.PRNGKey(5), 3)
    _, enc = enc_init(k1, (-1, 10))
    _, dec = dec_init(k2, (-1, 4))

    def elbo(params, key):
        enc, dec = params
        mu, logvar = encode(enc, x)
        z = mu + m.jnp.exp(0.5 * logvar) * m.random.normal(key, mu.shape)
        rec = m.jnp.sum((decode(dec, z) - x) ** 2)
        kl = -0.5 * m.jnp.sum(1 + logvar - mu ** 2 - m.jnp.exp(logvar))
        return rec + kl
    value, grads = m.jit(m.value_and_grad(elbo))((enc, dec), k3)
    return [float(value)] + [np.asarray(g) for g in m.jnp.concatenate(
        [m.jnp.ravel(g) for layer in grads[1] for g in layer])[None]]


def clipped_per_example_grads(m):
    """differentially_private_sgd.py's shape: vmap(grad) per example, clip by norm, mean."""
    x, y = _blobs(24, 6, 2, seed=4)
    w = np.zeros((6, 2), np.float32)

    def loss(w, xi, yi):
        logits = xi @ w
        return -m.jnp.sum(yi * (logits - m.jnp.log(m.jnp.sum(m.jnp.exp(logits)))))

    @m.jit
    def private_step(w):
        g = m.vmap(m.grad(loss), in_axes=(None, 0, 0))(w, x, y)
        norms = m.jnp.sqrt(m.jnp.sum(g ** 2, axis=(1, 2)))
        g = g / m.jnp.maximum(1.0, norms / 0.5)[:, None, None]
        return w - 0.5 * m.jnp.mean(g, axis=0)
    for _ in range(10):
        w = private_step(w)
    return [np.asarray(w)]


def gaussian_process(m):
    """gaussian_process_regression.py's shape: the marginal likelihood of an RBF kernel
    through a Cholesky factor and triangular solves, its gradient in the hyperparameters,
    a few steps of gradient descent, then the posterior mean."""
    rng = np.random.default_rng(6)
    x = np.sort(rng.uniform(-3, 3, 25)).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.standard_normal(25)).astype(np.float32)
    xt = np.linspace(-3, 3, 7).astype(np.float32)

    def kernel(a, b, log_amp, log_len):
        d = (a[:, None] - b[None, :]) / m.jnp.exp(log_len)
        return m.jnp.exp(2 * log_amp) * m.jnp.exp(-0.5 * d ** 2)

    def neg_marginal(params):
        log_amp, log_len, log_noise = params
        k = kernel(x, x, log_amp, log_len) + (m.jnp.exp(2 * log_noise) + 1e-4) * \
            m.jnp.eye(25)
        chol = m.scipy_linalg.cholesky(k, lower=True)
        alpha = m.scipy_linalg.cho_solve((chol, True), y)
        return 0.5 * m.jnp.dot(y, alpha) + m.jnp.sum(m.jnp.log(m.jnp.diag(chol)))
    step = m.jit(lambda p: p - 0.05 * m.grad(neg_marginal)(p))
    params = m.jnp.zeros(3)
    for _ in range(10):
        params = step(params)
    log_amp, log_len, log_noise = params
    k = kernel(x, x, log_amp, log_len) + (m.jnp.exp(2 * log_noise) + 1e-4) * m.jnp.eye(25)
    mean = kernel(xt, x, log_amp, log_len) @ m.jnp.linalg.solve(k, y)
    return [np.asarray(params), float(neg_marginal(params)), np.asarray(mean)]


PROGRAMS = [classifier, kernel_lsq, rnn_over_scan, vae_objective, clipped_per_example_grads,
            gaussian_process]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_ported_program_agrees_with_jax(program):
    ours = program(_modules("netcl"))
    with jax.enable_x64(netcl.config.enable_x64):   # (the same default dtypes: x64 on here)
        theirs = program(_modules("jax"))
    assert len(ours) == len(theirs)
    # (ten float32 steps through a Cholesky factor: its rounding differs by LAPACK build)
    rtol, atol = (2e-3, 1e-4) if program is gaussian_process else (2e-4, 2e-5)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
