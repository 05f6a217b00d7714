"""Cold process, cold vs warm kernel cache: time to the first result of a jitted train step,
beside JAX's cold process doing the same.

    python benchmarks/compile_cache.py [--repeat N] [--no-jax]

Runs a fresh Python process with an empty kernel cache directory, then one finding that
cache warm (PoCL keeps built programs in POCL_CACHE_DIR; NVIDIA in its ComputeCache), and a
fresh JAX process (its persistent compilation cache off) taking the same step: a 3-layer MLP
(64 -> 256 -> 256 -> 10, batch 64), adam, loss and gradients in one jitted call. With
``--repeat N`` the three runs are taken in turn N times (the shared CPU's load moves between
runs), each cold run with a new empty cache; medians and ranges are printed.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import time
t0 = time.perf_counter()
import numpy as np
import netcl, netcl.numpy as jnp
from netcl import optim, random, stax
init, apply = stax.serial(stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu,
                          stax.Dense(10), stax.LogSoftmax)
_, params = init(random.PRNGKey(0), (-1, 64))
opt = optim.adam(1e-3)
state = opt.init(params)

@netcl.jit
def step(params, state, x, y):
    loss, g = netcl.value_and_grad(
        lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
    updates, state = opt.update(g, state, params)
    return optim.apply_updates(params, updates), state, loss

x = jnp.asarray(np.random.default_rng(0).standard_normal((64, 64), dtype=np.float32))
y = jnp.asarray(np.eye(10, dtype=np.float32)[np.arange(64) % 10])
params, state, loss = step(params, state, x, y)
float(loss)
print(f"{time.perf_counter() - t0:.3f}")
"""

JAX_CHILD = r"""
import time
t0 = time.perf_counter()
import numpy as np
import jax, jax.numpy as jnp
jax.config.update("jax_enable_compilation_cache", False)
from jax.example_libraries import optimizers, stax
init, apply = stax.serial(stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu,
                          stax.Dense(10), stax.LogSoftmax)
_, params = init(jax.random.PRNGKey(0), (-1, 64))
opt_init, opt_update, get_params = optimizers.adam(1e-3)
state = opt_init(params)

@jax.jit
def step(state, x, y):
    loss, g = jax.value_and_grad(
        lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(get_params(state))
    return opt_update(0, g, state), loss

x = jnp.asarray(np.random.default_rng(0).standard_normal((64, 64), dtype=np.float32))
y = jnp.asarray(np.eye(10, dtype=np.float32)[np.arange(64) % 10])
state, loss = step(state, x, y)
float(loss)
print(f"{time.perf_counter() - t0:.3f}")
"""


def first_result_seconds(child, env):
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def _summary(ts):
    if len(ts) == 1:
        return f"{ts[0]:6.2f} s"
    return f"{statistics.median(ts):6.2f} s  (median of {len(ts)}, {min(ts):.2f}-{max(ts):.2f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-jax", action="store_true")
    args = ap.parse_args(argv)
    try:
        import importlib.util
        jax_ok = not args.no_jax and importlib.util.find_spec("jax") is not None
    except Exception:  # pragma: no cover
        jax_ok = False
    cold, warm, jax_t = [], [], []
    t = time.perf_counter()
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, POCL_CACHE_DIR=cache, CUDA_CACHE_PATH=cache)
            cold.append(first_result_seconds(CHILD, env))
            warm.append(first_result_seconds(CHILD, env))
        if jax_ok:
            jax_t.append(first_result_seconds(JAX_CHILD, dict(os.environ, JAX_PLATFORMS="cpu")))
    print(f"first jitted train step, cold kernel cache: {_summary(cold)}")
    print(f"first jitted train step, warm kernel cache: {_summary(warm)}")
    if jax_t:
        print(f"JAX (CPU, no compilation cache), cold:      {_summary(jax_t)}")
    ratio = f"cold / warm: {statistics.median(cold) / statistics.median(warm):.1f}x"
    if jax_t:
        ratio += f", cold / JAX: {statistics.median(cold) / statistics.median(jax_t):.2f}x"
    print(f"{ratio}   (total {time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
