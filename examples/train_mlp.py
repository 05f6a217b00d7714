"""Train an MLP on handwritten digits with a jitted step, on the default device.

    pip install -e '.[pocl,examples]' && python examples/train_mlp.py
    python examples/train_mlp.py --data ~/mnist        # MNIST IDX files instead of digits
    python examples/train_mlp.py --plot curve.png      # also write a training curve

The digits dataset ships with scikit-learn (1797 real 8x8 handwritten digits), so nothing is
downloaded. The script prints progress (loss, throughput), saves a checkpoint, reloads it and
reports test accuracy from the reloaded parameters.
"""
import argparse
import os
import tempfile
import time

import numpy as np

import netcl
import netcl.numpy as jnp
from netcl import data, io, optim, random, stax


def make_model(num_classes, hidden):
    return stax.serial(stax.Dense(hidden), stax.Relu, stax.Dense(hidden), stax.Relu,
                       stax.Dense(num_classes), stax.LogSoftmax)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", help="directory with MNIST IDX files (default: sklearn digits)")
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(), "mlp.ckpt"))
    p.add_argument("--plot", metavar="PNG", help="write the training curve to this file")
    args = p.parse_args(argv)

    if args.data:
        (x_tr, y_tr), (x_te, y_te) = data.load_mnist(args.data, flatten=True)
    else:
        (x_tr, y_tr), (x_te, y_te) = data.load_digits(seed=args.seed)
    n_classes = int(y_tr.max()) + 1
    print(f"device: {netcl.default_device().name}; train {x_tr.shape}, test {x_te.shape}")

    init_fun, apply_fun = make_model(n_classes, args.hidden)
    _, params = init_fun(random.PRNGKey(args.seed), (-1, x_tr.shape[1]))
    opt = optim.adam(optim.cosine_decay_schedule(args.lr, args.epochs * (len(x_tr) // args.batch_size)))
    state = opt.init(params)

    def loss_fn(params, x, y):
        logp = apply_fun(params, x)
        return -jnp.mean(jnp.sum(logp * netcl.nn.one_hot(y, n_classes), axis=-1))

    @netcl.jit
    def step(params, state, x, y):
        loss, grads = netcl.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, loss

    @netcl.jit
    def accuracy(params, x, y):
        return jnp.mean(jnp.argmax(apply_fun(params, x), axis=-1) == y)

    loader = data.DataLoader((x_tr, y_tr), args.batch_size, shuffle=True, seed=args.seed,
                             drop_last=True)
    try:
        from tqdm import tqdm
    except ImportError:  # the progress bar is optional
        tqdm = None
    curve = []
    t0 = time.perf_counter()
    seen = 0
    for epoch in range(args.epochs):
        batches = tqdm(loader, desc=f"epoch {epoch + 1}/{args.epochs}", leave=False) \
            if tqdm else loader
        losses = []
        for xb, yb in batches:
            params, state, loss = step(params, state, xb, yb)
            losses.append(loss)
            seen += xb.shape[0]
        epoch_loss = float(jnp.mean(jnp.stack(losses)))
        curve.append(epoch_loss)
        rate = seen / (time.perf_counter() - t0)
        if tqdm is None or epoch == args.epochs - 1 or (epoch + 1) % 5 == 0:
            print(f"epoch {epoch + 1:3d}  loss {epoch_loss:.4f}  {rate:8.0f} examples/s")

    io.save(args.checkpoint, {"params": params, "opt_state": state, "epoch": args.epochs})
    restored = io.load(args.checkpoint, like={"params": params, "opt_state": state,
                                              "epoch": args.epochs})
    acc = float(accuracy(restored["params"], jnp.asarray(x_te), jnp.asarray(y_te)))
    print(f"checkpoint: {args.checkpoint}")
    print(f"test accuracy: {acc * 100:.2f}%  ({time.perf_counter() - t0:.1f} s)")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.plot(range(1, len(curve) + 1), curve)
        plt.xlabel("epoch")
        plt.ylabel("training loss")
        plt.savefig(args.plot, dpi=100)
        print(f"training curve: {args.plot}")
    return acc


if __name__ == "__main__":
    main()
