"""The W-suite of ../shared/BENCHMARKS.md for netcl, JAX and PyTorch.

Each `*_cases(kind)` returns [(id, variant, shape text, fn, sync, unit, amount)] where the
figure printed is amount / median seconds (or seconds * amount for per-op times).

W4b and W5b are W4's and W5's steps with bfloat16 compute and float32 parameters: netcl's
loss under `netcl.autocast(loss, jnp.bfloat16)`, JAX's under jmp's policy
"p=f32,c=bf16,o=f32" (parameters and inputs cast to bfloat16 inside the loss, the output
back to float32; plain jax.numpy casts where jmp is not installed), PyTorch's forward and
loss under `torch.autocast("cuda", dtype=torch.bfloat16)` (on CUDA only: torch's CPU
autocast runs other kernels, not the peer the GPU figure is compared with).
"""
import numpy as np


def shapes(kind):
    gpu = kind == "gpu"
    return {"W1": 2**26 if gpu else 2**22, "W2": (8192, 4096) if gpu else (2048, 1024),
            "W3": 8192 if gpu else 1024, "W4": 256 if gpu else 128, "W5": 256 if gpu else 32}


def w1(np_, x, sigmoid):
    return np_.tanh(x * 1.5 + 0.25) * sigmoid(x) + 0.5 * x


def w7_fn(np_):
    def f(x):
        y = np_.sin(x) * 2.0 + np_.cos(x * x)
        z = np_.exp(-y * y) + np_.tanh(y) * x
        z = np_.log1p(z * z) - np_.sqrt(np_.abs(x) + 1.0)
        return np_.sum(z * y + x / (1.0 + x * x))
    return f


# ---- netcl ---------------------------------------------------------------------------------

def netcl_cases(kind, which):
    import netcl
    import netcl.numpy as jnp
    from netcl import optim, random, stax
    sync = netcl.default_device().synchronize
    sz = shapes(kind)
    rng = np.random.default_rng(0)
    cases = []
    if "W1" in which:
        n = sz["W1"]
        x = jnp.asarray(rng.standard_normal(n, dtype=np.float32))
        f = netcl.jit(lambda x: w1(jnp, x, netcl.nn.sigmoid))
        cases.append(("W1", "eager", f"n={n}", lambda x=x: w1(jnp, x, netcl.nn.sigmoid), sync,
                      "GB/s", 16e-9 * n))
        cases.append(("W1", "jit", f"n={n}", lambda f=f, x=x: f(x), sync, "GB/s", 16e-9 * n))
    if "W2" in which:
        r, c = sz["W2"]
        x = jnp.asarray(rng.standard_normal((r, c), dtype=np.float32))
        f = netcl.jit(lambda x: netcl.nn.softmax(x, axis=-1))
        cases.append(("W2", "eager", f"{r}x{c}", lambda x=x: netcl.nn.softmax(x), sync, "GB/s",
                      8e-9 * r * c))
        cases.append(("W2", "jit", f"{r}x{c}", lambda f=f, x=x: f(x), sync, "GB/s", 8e-9 * r * c))
    if "W3" in which:
        n = sz["W3"]
        a = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
        b = jnp.asarray(rng.standard_normal((n, n), dtype=np.float32))
        cases.append(("W3", "eager", f"n={n}",
                      lambda a=a, b=b: jnp.matmul(a, b, precision="highest"), sync, "GFLOP/s",
                      2e-9 * n**3))
    if "W4" in which:
        cases.append(("W4", "jit", f"batch {sz['W4']}", _netcl_train_step("mlp", sz["W4"], rng),
                      sync, "steps/s", 1.0))
    if "W5" in which:
        cases.append(("W5", "jit", f"batch {sz['W5']}", _netcl_train_step("cnn", sz["W5"], rng),
                      sync, "steps/s", 1.0))
    if "W6" in which:
        r0, b = jnp.ones(4), jnp.ones(4)

        def run6(r0=r0, b=b):
            r = r0
            for _ in range(1000):
                r = r + b
            return r
        cases.append(("W6", "eager", "1000 x (4,)", run6, sync, "us/op", -1e3))
    if "W7" in which:
        g = netcl.grad(w7_fn(jnp))
        x = jnp.asarray(rng.standard_normal(16, dtype=np.float32))
        cases.append(("W7", "eager", "16-vector", lambda g=g, x=x: g(x), sync, "us/call", -1e6))
    for wid, model in (("W4b", "mlp"), ("W5b", "cnn")):
        if wid in which:
            bs = sz[wid[:2]]
            cases.append((wid, "bf16", f"batch {bs}", _netcl_train_step(
                model, bs, np.random.default_rng(0), compute=jnp.bfloat16), sync, "steps/s",
                1.0))
    return cases


def warm_train_step(wid, warmup=5):
    """(run, batch, kind): W4, W5, W4b or W5b's jitted step at the default device's shape,
    run `warmup` times and synchronised (the set-up of the step profilers)."""
    import netcl
    import netcl.numpy as jnp
    dev = netcl.default_device()
    kind = "gpu" if dev.kind == "gpu" else "cpu"
    bs = shapes(kind)[wid[:2]]
    run = _netcl_train_step("mlp" if wid.startswith("W4") else "cnn", bs,
                            np.random.default_rng(0),
                            compute=jnp.bfloat16 if wid.endswith("b") else None)
    for _ in range(warmup):
        run()
    dev.synchronize()
    return run, bs, kind


def _netcl_train_step(model, bs, rng, donate=False, compute=None):
    """W4 (MLP, adam) or W5 (CNN, sgd momentum 0.9): a jitted train step, as a closure.
    donate: the step donates the parameters and optimizer state (jit's donate_argnums), so
    their updates are written in place. compute: a half dtype to run the loss in
    (netcl.autocast: W4b, W5b); the parameters stay float32."""
    import netcl
    import netcl.numpy as jnp
    from netcl import optim, random, stax
    if model == "mlp":
        init, apply = stax.serial(stax.Dense(1024), stax.Relu, stax.Dense(1024), stax.Relu,
                                  stax.Dense(10), stax.LogSoftmax)
        in_shape, opt = (bs, 784), optim.adam(1e-3)
    else:
        init, apply = stax.serial(
            stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
            stax.Conv(64, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
            stax.Conv(128, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
            stax.Flatten, stax.Dense(10), stax.LogSoftmax)
        in_shape, opt = (bs, 32, 32, 3), optim.sgd(0.01, momentum=0.9)
    _, params = init(random.PRNGKey(0), in_shape)
    state = [params, opt.init(params)]
    x = jnp.asarray(rng.standard_normal(in_shape, dtype=np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, bs)])

    def loss_fn(p, x, y):
        return -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1))
    if compute is not None:
        loss_fn = netcl.autocast(loss_fn, compute)

    def step(params, st, x, y):
        loss, g = netcl.value_and_grad(loss_fn)(params, x, y)
        upd, st = opt.update(g, st, params)
        return optim.apply_updates(params, upd), st, loss
    step = netcl.jit(step, donate_argnums=(0, 1) if donate else ())

    def run():
        state[0], state[1], _ = step(state[0], state[1], x, y)
    return run


# ---- JAX -----------------------------------------------------------------------------------

def jax_cases(kind, which):
    import jax
    import jax.numpy as jnp
    dev = jax.devices("gpu")[0] if kind == "gpu" and jax.default_backend() == "gpu" else \
        jax.devices("cpu")[0]

    sz = shapes(kind)
    rng = np.random.default_rng(0)
    cases = []
    put = lambda a: jax.device_put(a, dev)  # noqa: E731
    if "W1" in which:
        n = sz["W1"]
        x = put(rng.standard_normal(n, dtype=np.float32))
        f = jax.jit(lambda x: w1(jnp, x, jax.nn.sigmoid))
        last = [None]
        cases.append(("W1", "jit", f"n={n}", lambda f=f, x=x, last=last: last.__setitem__(0, f(x)),
                      lambda last=last: jax.block_until_ready(last[0]), "GB/s", 16e-9 * n))
    if "W2" in which:
        r, c = sz["W2"]
        x = put(rng.standard_normal((r, c), dtype=np.float32))
        f = jax.jit(lambda x: jax.nn.softmax(x, axis=-1))
        last = [None]
        cases.append(("W2", "jit", f"{r}x{c}", lambda f=f, x=x, last=last: last.__setitem__(
            0, f(x)), lambda last=last: jax.block_until_ready(last[0]), "GB/s", 8e-9 * r * c))
    if "W3" in which:
        n = sz["W3"]
        a, b = put(rng.standard_normal((n, n), dtype=np.float32)), \
            put(rng.standard_normal((n, n), dtype=np.float32))
        f = jax.jit(lambda a, b: jnp.matmul(a, b, precision="highest"))
        last = [None]
        cases.append(("W3", "jit", f"n={n}", lambda f=f, a=a, b=b, last=last: last.__setitem__(
            0, f(a, b)), lambda last=last: jax.block_until_ready(last[0]), "GFLOP/s",
            2e-9 * n**3))
    for wid, model in (("W4", "mlp"), ("W5", "cnn")):
        if wid in which:
            run, sync = _jax_train_step(model, sz[wid], rng, dev)
            cases.append((wid, "jit", f"batch {sz[wid]}", run, sync, "steps/s", 1.0))
    for wid, model in (("W4b", "mlp"), ("W5b", "cnn")):
        if wid in which:
            bs = sz[wid[:2]]
            run, sync = _jax_train_step(model, bs, np.random.default_rng(0), dev,
                                        compute="bfloat16")
            cases.append((wid, "bf16", f"batch {bs}", run, sync, "steps/s", 1.0))
    if "W7" in which:
        g = jax.grad(w7_fn(jnp))
        x7 = put(rng.standard_normal(16, dtype=np.float32))
        last7 = [None]
        cases.append(("W7", "eager", "16-vector",
                      lambda g=g, x=x7, last=last7: last.__setitem__(0, g(x)),
                      lambda last=last7: jax.block_until_ready(last[0]), "us/call", -1e6))
    if "W6" in which:
        r0, b = put(np.ones(4, np.float32)), put(np.ones(4, np.float32))
        last = [None]

        def run6(r0=r0, b=b, last=last):
            r = r0
            for _ in range(1000):
                r = r + b
            last[0] = r
        cases.append(("W6", "eager", "1000 x (4,)", run6,
                      lambda last=last: jax.block_until_ready(last[0]), "us/op", -1e3))
    return cases


def jax_model(model, bs, rng):
    """(params, x, apply) of the MLP or CNN workload in JAX (x on the host)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def dense(k, i, o):
        return [jax.random.normal(k, (i, o)) * (2 / i) ** 0.5, jnp.zeros(o)]
    keys = jax.random.split(jax.random.PRNGKey(0), 6)
    if model == "mlp":
        params = [dense(keys[0], 784, 1024), dense(keys[1], 1024, 1024), dense(keys[2], 1024, 10)]
        x = rng.standard_normal((bs, 784), dtype=np.float32)

        def apply(p, x):
            for w, b in p[:-1]:
                x = jax.nn.relu(x @ w + b)
            return jax.nn.log_softmax(x @ p[-1][0] + p[-1][1])
    else:
        conv = lambda k, i, o: [jax.random.normal(k, (3, 3, i, o)) * (2 / (9 * i)) ** 0.5,  # noqa
                                jnp.zeros(o)]
        params = [conv(keys[0], 3, 32), conv(keys[1], 32, 64), conv(keys[2], 64, 128),
                  dense(keys[3], 8 * 8 * 128, 10)]
        x = rng.standard_normal((bs, 32, 32, 3), dtype=np.float32)

        def apply(p, x):
            def c(x, wb):
                return jax.nn.relu(lax.conv_general_dilated(
                    x, wb[0], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + wb[1])
            pool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1),  # noqa
                                               (1, 2, 2, 1), "VALID")
            x = pool(c(c(x, p[0]), p[1]))
            x = pool(c(x, p[2])).reshape(bs, -1)
            return jax.nn.log_softmax(x @ p[3][0] + p[3][1])
    return params, x, apply


def _jax_compute_policy(compute):
    """(to_compute, to_output): jmp's "p=f32,c=<compute>,o=f32" casts of pytrees, or the same
    with jax.numpy where jmp is not installed."""
    import jax
    import jax.numpy as jnp
    try:
        import jmp
    except ImportError:
        dt = jnp.dtype(compute)

        def cast(tree, to):
            return jax.tree_util.tree_map(
                lambda a: a.astype(to) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree)
        return (lambda t: cast(t, dt)), (lambda t: cast(t, jnp.float32))
    policy = jmp.get_policy(f"p=f32,c={compute},o=f32")
    return policy.cast_to_compute, policy.cast_to_output


def _jax_train_step(model, bs, rng, dev, donate=False, compute=None):
    """W4/W5's step in JAX; compute: a half dtype's name for jmp's mixed-precision policy
    (parameters and inputs cast to it inside the loss, float32 master parameters)."""
    import jax
    import jax.numpy as jnp
    params, x, apply = jax_model(model, bs, rng)
    if compute is not None:
        to_compute, to_output = _jax_compute_policy(compute)
        full_apply = apply

        def apply(p, x):
            return to_output(full_apply(to_compute(p), to_compute(x)))
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, bs)]
    x, y = jax.device_put(x, dev), jax.device_put(y, dev)
    params = jax.device_put(params, dev)
    tm = jax.tree_util.tree_map

    def step(p, m, v, t, x, y):
        g = jax.grad(lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))(p)
        if model == "mlp":  # adam
            m = tm(lambda m, g: 0.9 * m + 0.1 * g, m, g)
            v = tm(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
            t = t + 1
            p = tm(lambda p, m, v: p - 1e-3 * (m / (1 - 0.9 ** t)) /
                   (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8), p, m, v)
        else:  # sgd, momentum 0.9
            m = tm(lambda m, g: 0.9 * m + g, m, g)
            p = tm(lambda p, m: p - 0.01 * m, p, m)
        return p, m, v, t
    step = jax.jit(step, donate_argnums=(0, 1, 2) if donate else ())
    st = [params, tm(jnp.zeros_like, params), tm(jnp.zeros_like, params), jnp.zeros((), jnp.int32)]

    def run():
        st[:] = step(*st, x, y)
    return run, lambda: jax.block_until_ready(st[0])


# ---- PyTorch -------------------------------------------------------------------------------

def torch_cases(kind, which):
    import torch
    dev = "cuda" if kind == "gpu" and torch.cuda.is_available() else "cpu"
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    sz = shapes(kind)
    cases = []
    if "W1" in which:
        x = torch.randn(sz["W1"], device=dev)
        cases.append(("W1", "eager", f"n={sz['W1']}", lambda x=x: w1(torch, x, torch.sigmoid), sync,
                      "GB/s", 16e-9 * sz["W1"]))
    if "W2" in which:
        r, c = sz["W2"]
        x = torch.randn(r, c, device=dev)
        cases.append(("W2", "eager", f"{r}x{c}", lambda x=x: torch.softmax(x, -1), sync, "GB/s",
                      8e-9 * r * c))
    if "W3" in which:
        n = sz["W3"]
        a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)

        def w3(a=a, b=b):       # float32 products, leaving the other rows' setting alone
            old = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = False
            try:
                return a @ b
            finally:
                torch.backends.cuda.matmul.allow_tf32 = old
        cases.append(("W3", "eager", f"n={n}", w3, sync, "GFLOP/s", 2e-9 * n**3))
    for wid, model in (("W4", "mlp"), ("W5", "cnn")):
        if wid in which:
            cases.append((wid, "eager", f"batch {sz[wid]}", _torch_train_step(model, sz[wid], dev),
                          sync, "steps/s", 1.0))
    for wid, model in (("W4b", "mlp"), ("W5b", "cnn")):
        if wid not in which:
            continue
        if dev != "cuda":
            print(f"(torch {wid}: torch.autocast bfloat16 is timed on CUDA only; skipped on {dev})")
            continue
        bs = sz[wid[:2]]
        cases.append((wid, "bf16", f"batch {bs}", _torch_train_step(model, bs, dev, autocast=True),
                      sync, "steps/s", 1.0))
    if "W7" in which:
        f7 = w7_fn(torch)
        x7 = torch.randn(16, device=dev)

        def run7(x=x7):
            x = x.detach().requires_grad_(True)
            f7(x).backward()
            return x.grad
        cases.append(("W7", "eager", "16-vector", run7, sync, "us/call", -1e6))
    if "W6" in which:
        r0, b = torch.ones(4, device=dev), torch.ones(4, device=dev)

        def run6(r0=r0, b=b):
            r = r0
            for _ in range(1000):
                r = r + b
            return r
        cases.append(("W6", "eager", "1000 x (4,)", run6, sync, "us/op", -1e3))
    return cases


def _torch_train_step(model, bs, dev, autocast=False):
    """W4/W5's step in PyTorch; autocast: forward and loss under torch.autocast(bfloat16)."""
    import contextlib

    import torch
    import torch.nn as tnn
    if model == "mlp":
        net = tnn.Sequential(tnn.Linear(784, 1024), tnn.ReLU(), tnn.Linear(1024, 1024), tnn.ReLU(),
                             tnn.Linear(1024, 10), tnn.LogSoftmax(-1)).to(dev)
        x = torch.randn(bs, 784, device=dev)
        opt = torch.optim.Adam(net.parameters(), 1e-3)
    else:
        net = tnn.Sequential(tnn.Conv2d(3, 32, 3, padding=1), tnn.ReLU(),
                             tnn.Conv2d(32, 64, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                             tnn.Conv2d(64, 128, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                             tnn.Flatten(), tnn.Linear(8 * 8 * 128, 10),
                             tnn.LogSoftmax(-1)).to(dev)
        x = torch.randn(bs, 3, 32, 32, device=dev)
        opt = torch.optim.SGD(net.parameters(), 0.01, momentum=0.9)
    y = torch.nn.functional.one_hot(torch.randint(0, 10, (bs,), device=dev), 10).float()

    def run():
        opt.zero_grad()
        with torch.autocast(dev, dtype=torch.bfloat16) if autocast else \
                contextlib.nullcontext():
            loss = -(net(x) * y).sum(-1).mean()
        loss.backward()
        opt.step()
    return run
