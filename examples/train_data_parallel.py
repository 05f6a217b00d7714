"""Train the digits MLP data-parallel: one pmapped step over several devices.

    python examples/train_data_parallel.py --devices 2          # 2 PoCL devices on a CPU
    python examples/train_data_parallel.py --devices 2 --check  # also train on one device
    mpiexec -n 2 python -m mpi4py examples/train_data_parallel.py --distributed --devices 1

Parameters and optimizer state are replicated on every device; the DataLoader splits each
global batch into one shard per device (`devices=`); each device computes the gradient of its shard and `lax.pmean`
averages them, so every device applies the same update. With `--check` the same global
batches also train a copy on one device, and the two sets of parameters are compared.
On a machine with several GPUs leave out --devices: pmap takes every local device. With
--distributed each process of an MPI job trains on its part of every global batch with its
own devices, and the gradients are averaged over all of them (netcl.distributed).
"""
import argparse
import os
import sys
import time


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=int, default=None,
                   help="PoCL CPU devices to create (sets NETCL_CPU_DEVICES; default: all "
                        "local devices)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64, help="global batch")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--check", action="store_true",
                   help="also train on one device and compare the parameters")
    p.add_argument("--distributed", action="store_true",
                   help="one process of an MPI job: pmap over every process's devices")
    args = p.parse_args(argv)
    if args.devices and "netcl" not in sys.modules:
        os.environ.setdefault("NETCL_CPU_DEVICES", str(args.devices))  # before PyOpenCL loads

    import numpy as np
    import netcl
    import netcl.numpy as jnp
    from netcl import data, lax, optim, random, stax
    from netcl.tree_util import tree_leaves, tree_map

    if args.distributed:
        netcl.distributed.initialize()
    processes, me = netcl.process_count(), netcl.process_index()
    devices = netcl.local_devices()
    n = len(devices) if args.devices is None else args.devices
    if n > len(devices) or args.batch_size % (n * processes):
        raise SystemExit(f"{n} devices asked for, {len(devices)} available; the batch "
                         f"({args.batch_size}) must split evenly over them and the "
                         f"{processes} processes")
    devices = devices[:n]
    (x_tr, y_tr), (x_te, y_te) = data.load_digits(seed=0)
    classes = int(y_tr.max()) + 1
    say = print if me == 0 else (lambda *a: None)
    say(f"{processes} process(es) x {n} devices: {devices}")

    init_fun, apply_fun = stax.serial(stax.Dense(256), stax.Relu, stax.Dense(256), stax.Relu,
                                      stax.Dense(classes), stax.LogSoftmax)
    _, params = init_fun(random.PRNGKey(0), (-1, x_tr.shape[1]))
    params = netcl.distributed.broadcast_one_to_all(params)     # (process 0's, everywhere)
    opt = optim.adam(args.lr)

    def loss_fn(params, x, y):
        return -jnp.mean(jnp.sum(apply_fun(params, x) * netcl.nn.one_hot(y, classes), -1))

    def step(params, state, x, y, mean=lambda a: lax.pmean(a, "batch")):
        loss, grads = netcl.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(tree_map(mean, grads), state, params)
        return optim.apply_updates(params, updates), state, mean(loss)

    parallel_step = netcl.pmap(step, axis_name="batch", devices=devices, donate_argnums=(0, 1))
    replicated = netcl.device_put_replicated((params, opt.init(params)), devices)
    if args.check:
        single_step = netcl.jit(lambda p, s, x, y: step(p, s, x, y, mean=lambda a: a))
        single = (params, opt.init(params))

    # each batch arrives sharded: shard i of every leaf uploaded to devices[i] (and, in a
    # job of several processes, this process's part of the global batch)
    loader = data.DataLoader((x_tr, y_tr), args.batch_size, shuffle=True, seed=0,
                             drop_last=True, devices=devices,
                             split_over_processes=args.distributed)
    whole = data.DataLoader((x_tr, y_tr), args.batch_size, shuffle=True, seed=0,
                            drop_last=True)     # the same global batches, for --check
    t0, seen = time.perf_counter(), 0
    for epoch in range(args.epochs):
        for (xb, yb), (xw, yw) in zip(loader, whole if args.check else loader):
            *replicated, loss = parallel_step(*replicated, xb, yb)
            if args.check:
                *single, _ = single_step(*single, xw, yw)
            seen += args.batch_size
        say(f"epoch {epoch + 1:3d}  loss {float(loss[0]):.4f}  "
            f"{seen / (time.perf_counter() - t0):8.0f} examples/s")

    final = tree_map(lambda a: a[0], replicated[0])         # device 0's copy
    acc = float(jnp.mean(jnp.argmax(apply_fun(final, jnp.asarray(x_te)), -1)
                         == jnp.asarray(y_te)))
    say(f"test accuracy: {acc * 100:.2f}%")
    if args.check:
        diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                   for a, b in zip(tree_leaves(final), tree_leaves(single[0])))
        print(f"process {me}: largest difference from one-device training: {diff:.2e}")
        if diff > 1e-3:
            raise SystemExit("data-parallel and one-device parameters differ")
    return acc


if __name__ == "__main__":
    main()
