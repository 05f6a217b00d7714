"""The W-suite of ../shared/BENCHMARKS.md for netcl, JAX and PyTorch.

Each `*_cases(kind)` returns [(id, variant, shape text, fn, sync, unit, amount)] where the
figure printed is amount / median seconds (or seconds * amount for per-op times).
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
        cases.append(("W3", "eager", f"n={n}", lambda a=a, b=b: a @ b, sync, "GFLOP/s",
                      2e-9 * n**3))
    if "W4" in which:
        bs = sz["W4"]
        init, apply = stax.serial(stax.Dense(1024), stax.Relu, stax.Dense(1024), stax.Relu,
                                  stax.Dense(10), stax.LogSoftmax)
        _, params = init(random.PRNGKey(0), (-1, 784))
        opt = optim.adam(1e-3)
        state = [params, opt.init(params)]
        x = jnp.asarray(rng.standard_normal((bs, 784), dtype=np.float32))
        y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, bs)])

        @netcl.jit
        def step(params, st, x, y):
            loss, g = netcl.value_and_grad(
                lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
            upd, st = opt.update(g, st, params)
            return optim.apply_updates(params, upd), st, loss

        def run(state=state, x=x, y=y, step=step):
            state[0], state[1], _ = step(state[0], state[1], x, y)
        cases.append(("W4", "jit", f"batch {bs}", run, sync, "steps/s", 1.0))
    if "W5" in which:
        bs = sz["W5"]
        init, apply = stax.serial(
            stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
            stax.Conv(64, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
            stax.Conv(128, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
            stax.Flatten, stax.Dense(10), stax.LogSoftmax)
        _, params = init(random.PRNGKey(0), (bs, 32, 32, 3))
        opt = optim.sgd(0.01, momentum=0.9)
        state = [params, opt.init(params)]
        x = jnp.asarray(rng.standard_normal((bs, 32, 32, 3), dtype=np.float32))
        y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, bs)])

        @netcl.jit
        def step5(params, st, x, y):
            loss, g = netcl.value_and_grad(
                lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
            upd, st = opt.update(g, st, params)
            return optim.apply_updates(params, upd), st, loss

        def run5(state=state, x=x, y=y, step5=step5):
            state[0], state[1], _ = step5(state[0], state[1], x, y)
        cases.append(("W5", "jit", f"batch {bs}", run5, sync, "steps/s", 1.0))
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
    return cases


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
        torch.backends.cuda.matmul.allow_tf32 = False
        n = sz["W3"]
        a, b = torch.randn(n, n, device=dev), torch.randn(n, n, device=dev)
        cases.append(("W3", "eager", f"n={n}", lambda a=a, b=b: a @ b, sync, "GFLOP/s",
                      2e-9 * n**3))
    if "W6" in which:
        r0, b = torch.ones(4, device=dev), torch.ones(4, device=dev)

        def run6(r0=r0, b=b):
            r = r0
            for _ in range(1000):
                r = r + b
            return r
        cases.append(("W6", "eager", "1000 x (4,)", run6, sync, "us/op", -1e3))
    return cases
