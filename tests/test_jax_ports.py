"""Programs written against JAX, run twice with only the imports changed: once with JAX's
modules, once with netcl's. Each is a small version of a JAX example or tutorial (a stax
classifier trained with example_libraries.optimizers, kernel least squares by gradient
descent with vmap, an RNN over lax.scan trained with jit(grad), a VAE-style objective with
random.normal and the reparameterisation trick, a per-example-gradient clipping step, a
Gaussian process's marginal likelihood through Cholesky and triangular solves, a
character-level LSTM trained with adam and sampled with random.categorical, a Neural-ODE
fit through RK4 steps in fori_loop inside scan, Monte-Carlo option pricing with keys from
split and fold_in under vmap, per-example gradients of a transformer block, a pseudo-spectral
Burgers solver through rfft/irfft and complex wavenumbers), and their numbers must agree."""
import types

import numpy as np
import pytest

import netcl

jax = pytest.importorskip("jax")


def _modules(lib):
    """What a JAX program imports, from JAX or from netcl."""
    if lib == "jax":
        import jax.nn as nn
        import jax.numpy as jnp
        import jax.scipy.linalg as sla
        from jax import lax, random
        from jax.example_libraries import optimizers, stax
        return types.SimpleNamespace(jit=jax.jit, grad=jax.grad, vmap=jax.vmap,
                                     value_and_grad=jax.value_and_grad, jnp=jnp, lax=lax,
                                     random=random, stax=stax, optimizers=optimizers,
                                     tree_map=jax.tree_util.tree_map, scipy_linalg=sla, nn=nn)
    import netcl.nn as nn
    import netcl.numpy as jnp
    import netcl.scipy.linalg as sla
    from netcl import lax, random
    from netcl.example_libraries import optimizers, stax
    return types.SimpleNamespace(jit=netcl.jit, grad=netcl.grad, vmap=netcl.vmap,
                                 value_and_grad=netcl.value_and_grad, jnp=jnp, lax=lax,
                                 random=random, stax=stax, optimizers=optimizers,
                                 tree_map=netcl.tree_util.tree_map, scipy_linalg=sla, nn=nn)


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


def char_lstm(m):
    """A character-level LSTM language model: an embedding lookup, an LSTM cell (one fused
    gate matrix split in four) over lax.scan, a next-character cross-entropy with
    log_softmax, trained by jit(value_and_grad) and optimizers.adam; then text sampled by
    random.categorical in a jitted scan whose carry holds the last character."""
    text = "the quick brown fox jumps over the lazy dog. " * 2
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text], np.int32)
    inputs, targets = ids[:-1], ids[1:]
    v, e, h = len(vocab), 8, 16
    rng = np.random.default_rng(7)
    params = {"embed": (rng.standard_normal((v, e)) * 0.1).astype(np.float32),
              "wx": (rng.standard_normal((e, 4 * h)) * 0.2).astype(np.float32),
              "wh": (rng.standard_normal((h, 4 * h)) * 0.2).astype(np.float32),
              "b": np.zeros(4 * h, np.float32),
              "out": (rng.standard_normal((h, v)) * 0.2).astype(np.float32)}

    def lstm_cell(p, carry, x):
        hidden, cell = carry
        gates = x @ p["wx"] + hidden @ p["wh"] + p["b"]
        i, f, g, o = m.jnp.split(gates, 4)
        cell = m.nn.sigmoid(f + 1.0) * cell + m.nn.sigmoid(i) * m.jnp.tanh(g)
        hidden = m.nn.sigmoid(o) * m.jnp.tanh(cell)
        return (hidden, cell), hidden

    def loss(p, inputs, targets):
        xs = p["embed"][inputs]
        init = (m.jnp.zeros(h), m.jnp.zeros(h))
        _, hs = m.lax.scan(lambda c, x: lstm_cell(p, c, x), init, xs)
        logp = m.nn.log_softmax(hs @ p["out"])
        return -m.jnp.mean(m.jnp.take_along_axis(logp, targets[:, None], axis=1))
    opt_init, opt_update, get_params = m.optimizers.adam(0.01)

    @m.jit
    def step(i, opt_state):
        value, grads = m.value_and_grad(loss)(get_params(opt_state), inputs, targets)
        return value, opt_update(i, grads, opt_state)
    opt_state = opt_init(params)
    losses = []
    for i in range(8):
        value, opt_state = step(i, opt_state)
        losses.append(float(value))
    final = get_params(opt_state)

    @m.jit
    def sample(p, key):
        def next_char(carry, k):
            state, char = carry
            state, hidden = lstm_cell(p, state, p["embed"][char])
            char = m.random.categorical(k, hidden @ p["out"])
            return (state, char), char
        # (the character carried is the default int, random.categorical's dtype)
        init = ((m.jnp.zeros(h), m.jnp.zeros(h)), m.jnp.array(vocab.index("t")))
        return m.lax.scan(next_char, init, m.random.split(key, 12))[1]
    chars = sample(final, m.random.PRNGKey(4))
    return [np.array(losses), np.asarray(chars)] + [np.asarray(final[k]) for k in sorted(final)]


def neural_ode(m):
    """A Neural-ODE-style fit: an MLP vector field integrated by RK4 steps in
    lax.fori_loop, the trajectory saved by lax.scan, the loss against a damped
    pendulum's trajectory, gradient descent by jit(grad)."""
    dt, n_steps = 0.1, 20

    def pendulum(y):
        return m.jnp.stack([y[1], -m.jnp.sin(y[0]) - 0.1 * y[1]])

    def rk4(f, y, dt):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        return y + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    def trajectory(f, y0):
        def save(y, _):
            y = m.lax.fori_loop(0, 2, lambda i, y: rk4(f, y, dt / 2), y)
            return y, y
        return m.lax.scan(save, y0, None, length=n_steps)[1]
    y0 = m.jnp.array([1.0, 0.0])
    target = trajectory(pendulum, y0)
    rng = np.random.default_rng(8)
    params = [(rng.standard_normal((2, 16)) * 0.5, np.zeros(16)),
              (rng.standard_normal((16, 2)) * 0.5, np.zeros(2))]

    def field(params):
        (w1, b1), (w2, b2) = params
        return lambda y: m.jnp.tanh(y @ w1 + b1) @ w2 + b2

    def loss(params):
        return m.jnp.mean((trajectory(field(params), y0) - target) ** 2)
    update = m.jit(lambda p: m.tree_map(lambda a, g: a - 0.2 * g, p, m.grad(loss)(p)))
    for _ in range(5):
        params = update(params)
    return [np.asarray(target), float(loss(params))] + \
        [np.asarray(a) for layer in params for a in layer]


def monte_carlo(m):
    """Monte-Carlo pricing of a European call under geometric Brownian motion: per-path
    keys from random.split and fold_in, paths by vmap over keys, random.normal steps,
    the price and its pathwise gradient (delta, vega) by jit(grad) with the keys fixed."""
    n_paths, n_steps, t, r = 256, 16, 1.0, 0.03
    key = m.random.PRNGKey(11)
    path_keys = m.random.split(key, n_paths)

    def terminal(key, s0, sigma):
        dt = t / n_steps
        steps = m.jnp.stack([m.random.normal(m.random.fold_in(key, i)) for i in range(n_steps)])
        log_s = m.jnp.log(s0) + m.jnp.sum((r - 0.5 * sigma ** 2) * dt + sigma *
                                           m.jnp.sqrt(dt) * steps)
        return m.jnp.exp(log_s)

    def price(s0, sigma, strike):
        st = m.vmap(terminal, in_axes=(0, None, None))(path_keys, s0, sigma)
        return m.jnp.exp(-r * t) * m.jnp.mean(m.jnp.maximum(st - strike, 0.0))
    value_and_greeks = m.jit(m.value_and_grad(price, argnums=(0, 1)))
    value, (delta, vega) = value_and_greeks(100.0, 0.2, 105.0)
    # an estimate of pi from uniform draws under another split of the key
    k1, k2 = m.random.split(m.random.fold_in(key, 99))
    u = m.random.uniform(k1, (2000, 2))
    inside = m.jnp.sum(u ** 2, axis=1) <= 1.0
    noisy = m.random.bernoulli(k2, 0.3, (50,))
    return [float(value), float(delta), float(vega), float(4 * m.jnp.mean(inside)),
            np.asarray(noisy).astype(np.float32), np.asarray(path_keys[:3]).astype(np.float64)]


def transformer_block(m):
    """A pre-norm transformer block (layer norm by hand, causal multi-head attention with
    einsum and nn.softmax, a gelu MLP) with per-example gradients by jit(vmap(grad))."""
    rng = np.random.default_rng(9)
    seq, d, heads, batch = 6, 16, 2, 4
    dh = d // heads

    def init(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    params = {"ln1": (np.ones(d, np.float32), np.zeros(d, np.float32)),
              "qkv": init(d, 3 * d), "proj": init(d, d),
              "ln2": (np.ones(d, np.float32), np.zeros(d, np.float32)),
              "fc1": init(d, 4 * d), "fc2": init(4 * d, d)}
    xs = rng.standard_normal((batch, seq, d)).astype(np.float32)
    ys = rng.standard_normal((batch, seq, d)).astype(np.float32)

    def layer_norm(x, scale_bias, eps=1e-5):
        scale, bias = scale_bias
        mean = m.jnp.mean(x, axis=-1, keepdims=True)
        var = m.jnp.var(x, axis=-1, keepdims=True)
        return (x - mean) * m.lax.rsqrt(var + eps) * scale + bias

    def attention(p, x):
        q, k, v = m.jnp.split(x @ p["qkv"], 3, axis=-1)
        q, k, v = (a.reshape(seq, heads, dh) for a in (q, k, v))
        logits = m.jnp.einsum("qhd,khd->hqk", q, k) / np.sqrt(dh)
        mask = m.jnp.tril(m.jnp.ones((seq, seq), bool))
        weights = m.nn.softmax(m.jnp.where(mask, logits, -m.jnp.inf), axis=-1)
        out = m.jnp.einsum("hqk,khd->qhd", weights, v).reshape(seq, d)
        return out @ p["proj"]

    def block(p, x):
        x = x + attention(p, layer_norm(x, p["ln1"]))
        return x + m.nn.gelu(layer_norm(x, p["ln2"]) @ p["fc1"]) @ p["fc2"]

    def loss(p, x, y):
        return m.jnp.mean((block(p, x) - y) ** 2)
    per_example = m.jit(m.vmap(m.grad(loss), in_axes=(None, 0, 0)))(params, xs, ys)
    leaves = [per_example["qkv"], per_example["proj"], per_example["fc1"],
              per_example["fc2"], per_example["ln1"][0], per_example["ln2"][1]]
    return [float(m.vmap(loss, in_axes=(None, 0, 0))(params, xs, ys).sum())] + \
        [np.asarray(g) for g in leaves]


def spectral_burgers(m):
    """A pseudo-spectral solver (rfft/irfft derivatives, complex wavenumbers, an
    integrating-factor Euler step in lax.scan) for the viscous Burgers equation on a
    periodic grid, and the gradient of the final state's energy in the initial condition
    and the viscosity, by jit(grad) through the solver."""
    n, steps, dt = 64, 40, 2e-3
    x = np.linspace(0, 2 * np.pi, n, endpoint=False).astype(np.float32)
    k = np.fft.rfftfreq(n, 1.0 / n).astype(np.float32)

    def rhs(u_hat):
        u = m.jnp.fft.irfft(u_hat, n=n)
        du = m.jnp.fft.irfft(1j * k * u_hat, n=n)
        return -m.jnp.fft.rfft(u * du)

    def solve(u0, nu):
        decay = m.jnp.exp(-nu * k ** 2 * dt)

        def step(u_hat, _):
            u_hat = decay * (u_hat + dt * rhs(u_hat))
            return u_hat, m.jnp.abs(u_hat[1])
        u_hat, first_mode = m.lax.scan(step, m.jnp.fft.rfft(u0), None, length=steps)
        return m.jnp.fft.irfft(u_hat, n=n), first_mode

    def energy(u0, nu):
        u, _ = solve(u0, nu)
        return m.jnp.mean(u ** 2)
    u0 = (np.sin(x) + 0.5 * np.cos(2 * x)).astype(np.float32)
    u, modes = m.jit(solve)(u0, np.float32(0.05))
    g_u0, g_nu = m.jit(m.grad(energy, argnums=(0, 1)))(u0, np.float32(0.05))
    return [np.asarray(u), np.asarray(modes), np.asarray(g_u0), float(g_nu)]


PROGRAMS = [classifier, kernel_lsq, rnn_over_scan, vae_objective, clipped_per_example_grads,
            gaussian_process, char_lstm, neural_ode, monte_carlo, transformer_block,
            spectral_burgers]


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
