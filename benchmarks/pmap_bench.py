"""Data-parallel figures of ../shared/BENCHMARKS.md: W8 (W5's CNN step pmapped over the local
devices, pmean of the gradients, donated state) and W9 (psum of float32 arrays of 1, 16 and
256 MB across the devices, bus bandwidth as nccl-tests defines it).

    python benchmarks/pmap_bench.py                 # every local device
    NETCL_CPU_DEVICES=2 python benchmarks/pmap_bench.py --batch 32   # two PoCL devices
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def timed(fn, sync, repeat, warmup=3):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cnn_step(n_devices, batch, axis="batch"):
    """(run, sync): one W5 step per device on its own batch (n_devices == 1: plain jit)."""
    import netcl
    import netcl.numpy as jnp
    from netcl import lax, optim, random, stax
    init, apply = stax.serial(
        stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
        stax.Conv(64, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
        stax.Conv(128, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
        stax.Flatten, stax.Dense(10), stax.LogSoftmax)
    _, params = init(random.PRNGKey(0), (batch, 32, 32, 3))
    opt = optim.sgd(0.01, momentum=0.9)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n_devices, batch, 32, 32, 3), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, (n_devices, batch))]
    mean = (lambda a: lax.pmean(a, axis)) if n_devices > 1 else (lambda a: a)

    def step(p, s, x, y):
        loss, g = netcl.value_and_grad(
            lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(p)
        u, s = opt.update(netcl.tree_util.tree_map(mean, g), s, p)
        return optim.apply_updates(p, u), s, mean(loss)
    devices = netcl.local_devices()[:n_devices]
    if n_devices > 1:
        f = netcl.pmap(step, axis_name=axis, devices=devices, donate_argnums=(0, 1))
        state = list(netcl.device_put_replicated((params, opt.init(params)), devices))
        xs = netcl.device_put_sharded([jnp.asarray(v) for v in x], devices)
        ys = netcl.device_put_sharded([jnp.asarray(v) for v in y], devices)
    else:
        f = netcl.jit(step, donate_argnums=(0, 1))
        state = [params, opt.init(params)]
        xs, ys = jnp.asarray(x[0]), jnp.asarray(y[0])

    def run():
        state[0], state[1], _ = f(state[0], state[1], xs, ys)

    def sync():
        for d in devices:
            d.synchronize()
    return run, sync


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=None, help="per-device batch (W5's: 256 on "
                   "GPUs, 32 on CPUs)")
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    import netcl
    import netcl.numpy as jnp
    from netcl import lax
    devices = netcl.local_devices()
    n = len(devices)
    batch = args.batch or (256 if devices[0].kind == "gpu" else 32)
    print(f"{n} devices: {', '.join(d.name for d in devices)}")
    if n < 2:
        print("W8/W9 need at least 2 devices (NETCL_CPU_DEVICES=2 on a CPU)")
        return
    one = timed(*cnn_step(1, batch), args.repeat)
    many = timed(*cnn_step(n, batch), args.repeat)
    print(f"W8   {n} devices, batch {batch} each: {1 / many:8.1f} steps/s; one device "
          f"{1 / one:8.1f} steps/s; scaling {n * one / many:.2f} (of {n})")
    psum = netcl.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    for mb in (1, 16, 256):
        size = mb * 2**20 // 4
        xs = netcl.device_put_sharded([jnp.ones(size) for _ in devices], devices)
        t = timed(lambda xs=xs: psum(xs), lambda: [d.synchronize() for d in devices],
                  max(3, args.repeat // 2), warmup=2)
        bus = mb * 2**20 / t * 2 * (n - 1) / n / 1e9
        print(f"W9   psum of {mb:3d} MB over {n} devices: {t * 1e3:8.2f} ms, bus "
              f"{bus:6.2f} GB/s")


if __name__ == "__main__":
    main()
