"""Cold process, cold vs warm kernel cache: time to the first result of a jitted train step.

    python benchmarks/compile_cache.py

Runs a fresh Python process twice with the same empty cache directory: the first run
compiles every kernel; the second finds the driver's binary cache warm (PoCL keeps built
programs in POCL_CACHE_DIR; NVIDIA in its ComputeCache). Prints both times and the ratio.
"""
import os
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


def first_result_seconds(env):
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, POCL_CACHE_DIR=cache, CUDA_CACHE_PATH=cache)
        t = time.perf_counter()
        cold = first_result_seconds(env)
        warm = first_result_seconds(env)
        print(f"first jitted train step, cold kernel cache: {cold:6.2f} s")
        print(f"first jitted train step, warm kernel cache: {warm:6.2f} s")
        print(f"cold / warm: {cold / warm:.1f}x   (total {time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
