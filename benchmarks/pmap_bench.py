"""Data-parallel figures of ../shared/BENCHMARKS.md: W8 (W5's CNN step pmapped over the local
devices, pmean of the gradients, donated state) and W9 (psum of float32 arrays of 1, 16 and
256 MB across the devices, bus bandwidth as nccl-tests defines it), beside the portable path's
limit (a bare PyOpenCL copy of the same bytes from device 0 to device 1 through pinned host
memory) and, with --peers, JAX's pmap of the same step and psum on the same devices.

    python benchmarks/pmap_bench.py [--peers]       # every local device
    NETCL_CPU_DEVICES=2 python benchmarks/pmap_bench.py --batch 32   # two PoCL devices
    mpiexec -n 2 python -m mpi4py benchmarks/pmap_bench.py --distributed --batch 8
        # W8 and W9 across processes, W9 beside mpi4py's own Allreduce of NumPy arrays
    mpiexec -n 4 python -m mpi4py benchmarks/pmap_bench.py --distributed
        # on a 4-GPU host: one process per GPU, all-reduces through GPU memory
        # (NETCL_PEER_MEMORY=0: through MPI)

Across processes, W8's one-device figure is one process's jit step while the others wait
(idle, not in MPI's spinning barrier), and W9 takes its four timings in turn, a call of each
per round (the psum keeping its input, the psum of a donated input, mpi4py's Allreduce in
place and into another array): on a shared host their ratios are what to read. A psum that
keeps its input compares with an Allreduce into another array, one of a donated input with
one in place.
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


def cnn_step(n_devices, batch, axis="batch", mapped=None, via="pmap"):
    """(run, sync): one W5 step per device on its own batch (n_devices == 1: plain jit,
    unless `mapped`: in a job of several processes one device is mapped too). via="shard_map":
    the same step as `jit(shard_map(step))` over a 1-D mesh, parameters replicated, the
    batch split."""
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
    mapped = n_devices > 1 if mapped is None else mapped
    mean = (lambda a: lax.pmean(a, axis)) if mapped else (lambda a: a)

    def step(p, s, x, y):
        loss, g = netcl.value_and_grad(
            lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(p)
        u, s = opt.update(netcl.tree_util.tree_map(mean, g), s, p)
        return optim.apply_updates(p, u), s, mean(loss)
    devices = netcl.local_devices()[:n_devices]
    if via == "shard_map":
        from netcl.sharding import NamedSharding, P
        mesh = netcl.make_mesh((n_devices,), (axis,), devices=devices)
        f = netcl.jit(netcl.shard_map(step, mesh=mesh, in_specs=(P(), P(), P(axis), P(axis)),
                                      out_specs=(P(), P(), P())), donate_argnums=(0, 1))
        state = list(netcl.device_put((params, opt.init(params)), NamedSharding(mesh, P())))
        xs = netcl.device_put(x.reshape((-1,) + x.shape[2:]), NamedSharding(mesh, P(axis)))
        ys = netcl.device_put(y.reshape((-1,) + y.shape[2:]), NamedSharding(mesh, P(axis)))
    elif mapped:
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


def jax_cnn_step(n_devices, batch, axis="batch"):
    """(run, sync): the same step in JAX, pmapped over its first n_devices (1: jit)."""
    import jax
    import jax.numpy as jnp
    from workloads import jax_model
    rng = np.random.default_rng(0)
    params, _, apply = jax_model("cnn", batch, rng)
    x = rng.standard_normal((n_devices, batch, 32, 32, 3), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, (n_devices, batch))]
    tm = jax.tree_util.tree_map
    mean = (lambda a: jax.lax.pmean(a, axis)) if n_devices > 1 else (lambda a: a)

    def step(p, m, x, y):
        g = jax.grad(lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))(p)
        m = tm(lambda m, g: 0.9 * m + g, m, tm(mean, g))
        return tm(lambda p, m: p - 0.01 * m, p, m), m
    devices = jax.devices()[:n_devices]
    momentum = tm(jnp.zeros_like, params)
    if n_devices > 1:
        f = jax.pmap(step, axis_name=axis, devices=devices, donate_argnums=(0, 1))
        put = jax.pmap(lambda v: v, devices=devices)     # (stacked host values to shards)
        stack = lambda t: tm(lambda a: np.stack([np.asarray(a)] * n_devices), t)  # noqa: E731
        state = [put(stack(params)), put(stack(momentum))]
        xs, ys = put(x), put(y)
    else:
        f = jax.jit(step, donate_argnums=(0, 1))
        state = [jax.device_put(params, devices[0]), jax.device_put(momentum, devices[0])]
        xs, ys = jax.device_put(x[0], devices[0]), jax.device_put(y[0], devices[0])

    def run():
        state[:] = f(state[0], state[1], xs, ys)
    return run, lambda: jax.block_until_ready(state[0])


def jax_psum_seconds(n_devices, nbytes, repeat):
    import jax
    devices = jax.devices()[:n_devices]
    f = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i", devices=devices)
    xs = jax.pmap(lambda v: v, devices=devices)(np.ones((n_devices, nbytes // 4), np.float32))
    last = [None]

    def run():
        last[0] = f(xs)
    return timed(run, lambda: jax.block_until_ready(last[0]), repeat, warmup=2)


def in_turn(runs, repeat, warmup=2):
    """{name: median seconds} of `runs` ({name: function}, each running and waiting for one
    call), a call of each per round, the order rotating, every process starting each call
    together (MPI barrier): calls taken in turn see the same load on a shared host."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    for fn in runs.values():
        for _ in range(warmup):
            fn()
    names, times = list(runs), {name: [] for name in runs}
    for i in range(repeat):
        for name in names[i % len(names):] + names[:i % len(names)]:
            comm.Barrier()
            t = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(v) for name, v in times.items()}


def distributed_psum_seconds(devices, nbytes, repeat):
    """W9 across processes, in turn: netcl's psum of a float32 argument of nbytes per device
    (kept, and donated), and mpi4py's own Allreduce (sum) of a NumPy array of nbytes in place
    and into another array (the engine's figures beside)."""
    import netcl
    import netcl.numpy as jnp
    from mpi4py import MPI
    from netcl import lax
    comm = MPI.COMM_WORLD
    psum = netcl.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=devices)
    donating = netcl.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=devices,
                          donate_argnums=0)
    size = nbytes // 4
    kept = netcl.device_put_sharded([jnp.ones(size) for _ in devices], devices)
    state = [netcl.device_put_sharded([jnp.ones(size) for _ in devices], devices)]
    host, into = np.ones(size, np.float32), np.empty(size, np.float32)

    def sync():
        for d in devices:
            d.synchronize()

    def donated():
        state[0] = donating(state[0])
        sync()
    return in_turn({
        "psum": lambda: (psum(kept), sync()),
        "psum donated": donated,
        "Allreduce": lambda: comm.Allreduce(host, into, op=MPI.SUM),
        "Allreduce in place": lambda: comm.Allreduce(MPI.IN_PLACE, host, op=MPI.SUM)},
        repeat)


def alone_seconds(run_and_sync, repeat):
    """Process 0's median seconds of `run_and_sync` while the other processes wait, idle
    (a polled barrier: MPI's own would keep a core busy): one process's figure."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    t = timed(*run_and_sync, repeat) if comm.Get_rank() == 0 else None
    done = comm.Ibarrier()
    while not done.Test():
        time.sleep(0.005)
    return comm.bcast(t)


def staged_copy_seconds(devices, nbytes, repeat):
    """A bare PyOpenCL copy of nbytes from devices[0] to devices[1] through pinned host
    memory (mapped once): the portable path's limit between two devices."""
    import pyopencl as cl
    a, b = devices[0], devices[1]
    src = cl.Buffer(a.context, cl.mem_flags.READ_WRITE, nbytes)
    dst = cl.Buffer(b.context, cl.mem_flags.READ_WRITE, nbytes)
    cl.enqueue_fill_buffer(a.queue, src, np.uint8(1), 0, nbytes)
    cl.enqueue_fill_buffer(b.queue, dst, np.uint8(0), 0, nbytes)
    pin = cl.Buffer(a.context, cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
    host, _ = cl.enqueue_map_buffer(a.queue, pin, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                    (nbytes,), np.uint8, is_blocking=True)

    def run():
        ev = cl.enqueue_copy(a.queue, host, src, is_blocking=False)
        cl.enqueue_copy(b.queue, dst, host, wait_for=[ev], is_blocking=False)
        b.queue.flush()
    return timed(run, lambda: (a.queue.finish(), b.queue.finish()), repeat, warmup=2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=None, help="per-device batch (W5's: 256 on "
                   "GPUs, 32 on CPUs)")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--peers", action="store_true", help="JAX's pmap and psum beside")
    p.add_argument("--devices", type=int, default=None, help="use the first N local devices")
    p.add_argument("--only", default="W8,W9", help="comma-separated: W8, W9 or both")
    p.add_argument("--sizes", default="1,16,256", help="W9's sizes in MB, comma-separated")
    p.add_argument("--shard-map", action="store_true", help="W8 also as jit(shard_map(step)) "
                   "over a 1-D mesh, interleaved with the pmap")
    p.add_argument("--distributed", action="store_true", help="one process of an MPI job "
                   "(mpiexec -n P python -m mpi4py benchmarks/pmap_bench.py --distributed)")
    args = p.parse_args()
    import netcl
    if args.distributed:
        netcl.distributed.initialize()
    devices = netcl.local_devices()[:args.devices]
    n_local = len(devices)
    n = n_local * netcl.process_count()
    say = print if netcl.process_index() == 0 else (lambda *a, **k: None)
    batch = args.batch or (256 if devices[0].kind == "gpu" else 32)
    say(f"{netcl.process_count()} process(es) x {n_local} devices: "
        f"{', '.join(d.name for d in devices)}")
    if n < 2:
        print("W8/W9 need at least 2 devices (NETCL_CPU_DEVICES=2 on a CPU)")
        return
    which = set(args.only.split(","))
    if "W8" in which:
        w8(args, n, n_local, batch, say)
    if "W9" in which:
        w9(args, devices, n, n_local, say)


def w8(args, n, n_local, batch, say):
    """W8: the pmapped step's rate and its scaling over one device's jit step."""
    one = (alone_seconds(cnn_step(1, batch), args.repeat) if args.distributed else
           timed(*cnn_step(1, batch), args.repeat))
    many = timed(*cnn_step(n_local, batch, mapped=True), args.repeat)
    say(f"W8   {n} devices, batch {batch} each: {1 / many:8.1f} steps/s; one device "
        f"{1 / one:8.1f} steps/s" + (" (one process alone)" if args.distributed else "")
        + f"; scaling {n * one / many:.2f} (of {n})")
    if args.shard_map and not args.distributed:
        # interleaved with pmap: the same step written as jit(shard_map(...)) over a mesh
        runs = {"pmap": cnn_step(n_local, batch, mapped=True),
                "shard_map": cnn_step(n_local, batch, via="shard_map")}
        t = {k: [] for k in runs}
        for _ in range(3):
            for k, r in runs.items():
                t[k].append(timed(*r, args.repeat))
        pm, sm = statistics.median(t["pmap"]), statistics.median(t["shard_map"])
        say(f"W8   as jit(shard_map): {1 / sm:8.1f} steps/s against pmap's {1 / pm:8.1f} "
            f"({pm / sm:.2f}x; interleaved, medians of 3)")
    if args.peers:
        assert not args.distributed, "--peers runs JAX in one process"
        j1 = timed(*jax_cnn_step(1, batch), args.repeat)
        jn = timed(*jax_cnn_step(n, batch), args.repeat)
        print(f"W8   JAX {n} devices: {1 / jn:8.1f} steps/s; one device {1 / j1:8.1f} "
              f"steps/s; scaling {n * j1 / jn:.2f}")


def w9(args, devices, n, n_local, say):
    """W9: psum's bus bandwidth beside the pinned staging copy's (and JAX's)."""
    import netcl
    import netcl.numpy as jnp
    from netcl import lax
    psum = netcl.pmap(lambda v: lax.psum(v, "i"), axis_name="i", devices=devices)
    repeat = max(3, args.repeat // 2)
    for mb in (int(v) for v in args.sizes.split(",")):
        if args.distributed:
            calls = max(args.repeat, args.repeat * 32 // mb)    # (small ones: more calls)
            t = distributed_psum_seconds(devices, mb * 2**20, calls)
            bus = {k: mb * 2**20 / v * 2 * (n - 1) / n / 1e9 for k, v in t.items()}
            say(f"W9   psum of {mb:3d} MB over {n} devices: {t['psum'] * 1e3:8.2f} ms, bus "
                f"{bus['psum']:6.2f} GB/s, {bus['psum'] / bus['Allreduce']:.2f}x mpi4py's "
                f"Allreduce into another array ({bus['Allreduce']:6.2f}), "
                f"{bus['psum'] / bus['Allreduce in place']:.2f}x in place "
                f"({bus['Allreduce in place']:6.2f}); donated input "
                f"{t['psum donated'] * 1e3:8.2f} ms, bus {bus['psum donated']:6.2f} GB/s, "
                f"{bus['psum donated'] / bus['Allreduce in place']:.2f}x in place "
                f"[{calls} calls each, in turn]")
            continue
        size = mb * 2**20 // 4
        xs = netcl.device_put_sharded([jnp.ones(size) for _ in devices], devices)
        t = timed(lambda xs=xs: psum(xs), lambda: [d.synchronize() for d in devices],
                  repeat, warmup=2)
        del xs
        bus = mb * 2**20 / t * 2 * (n - 1) / n / 1e9
        line = (f"W9   psum of {mb:3d} MB over {n} devices: {t * 1e3:8.2f} ms, bus "
                f"{bus:6.2f} GB/s")
        if n_local > 1:
            copy = staged_copy_seconds(devices, mb * 2**20, repeat)
            line += (f"; pinned staging copy 0->1 {mb * 2**20 / copy / 1e9:6.2f} GB/s "
                     f"({bus * copy * 1e9 / (mb * 2**20):.2f}x)")
        if args.peers:
            tj = jax_psum_seconds(n, mb * 2**20, repeat)
            line += f"; JAX psum bus {mb * 2**20 / tj * 2 * (n - 1) / n / 1e9:7.2f} GB/s"
        say(line)


if __name__ == "__main__":
    main()
