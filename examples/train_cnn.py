"""Train a small CNN (LeNet-style, or a small ResNet) on handwritten digits, jitted step.

    pip install -e '.[pocl,examples]' && python examples/train_cnn.py
    python examples/train_cnn.py --model resnet           # basic blocks with BatchNorm
    python examples/train_cnn.py --data ~/mnist           # MNIST IDX files
    python examples/train_cnn.py --precision bf16         # bfloat16 products (autocast)
    python examples/train_cnn.py --precision fp16         # float16, dynamic loss scaling

Digits are the 8x8 images bundled with scikit-learn (no download), MNIST 28x28 with --data.
The ResNet threads BatchNorm's running statistics as an explicit state (netcl.stax's
convention) and evaluates with them.

`--precision bf16|fp16` runs the loss (and evaluation) under `netcl.autocast(..., dtype)`:
convolutions and matmuls take half operands and accumulate in float32, softmax and the loss
stay float32, and the parameters, gradients and optimizer state stay float32 (master
weights). float16's range is narrow (largest 65504, smallest normal 6e-5), so fp16 scales
the loss by a `netcl.mixed_precision.DynamicLossScale` before differentiating, unscales the
gradients, skips the update of a step whose gradients overflowed (and halves the scale), and
doubles the scale after `--loss-scale-period` finite steps; the run prints the scale and the
skipped steps per epoch. bfloat16 has float32's range and needs no loss scale.
"""
import argparse
import time

import numpy as np

import netcl
import netcl.numpy as jnp
from netcl import data, optim, random, stax
from netcl import mixed_precision as mp

PRECISIONS = {"fp32": jnp.float32, "bf16": jnp.bfloat16, "fp16": jnp.float16}


def make_model(name, num_classes):
    if name == "resnet":
        return stax.resnet(num_classes, stages=(1, 1), width=16)
    if name == "lenet":  # LeNet-5 needs 28x28 inputs (MNIST)
        return stax.lenet(num_classes)
    # LeNet-style, sized for 8x8 digits as well as 28x28
    return stax.serial(stax.Conv(16, (3, 3), padding="SAME"), stax.Relu,
                       stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,
                       stax.MaxPool((2, 2), strides=(2, 2)), stax.Flatten,
                       stax.Dense(64), stax.Relu, stax.Dense(num_classes))


def shifted_copies(x, y):
    """The training images plus copies shifted by one pixel in each direction (zero fill):
    a cheap augmentation that makes the small CNN robust to where a digit sits."""
    xs, ys = [x], [y]
    for axis, step in ((1, 1), (1, -1), (2, 1), (2, -1)):
        s = np.roll(x, step, axis=axis)
        edge = [slice(None)] * x.ndim
        edge[axis] = 0 if step == 1 else -1
        s[tuple(edge)] = 0
        xs.append(s)
        ys.append(y)
    return np.concatenate(xs), np.concatenate(ys)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", choices=["cnn", "lenet", "resnet"], default="cnn")
    p.add_argument("--data", help="directory with MNIST IDX files (default: sklearn digits)")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--no-augment", action="store_true", help="train on the images as they are")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precision", choices=sorted(PRECISIONS), default="fp32",
                   help="dtype of the convolutions and matmuls (autocast; parameters stay "
                        "float32)")
    p.add_argument("--loss-scale-period", type=int, default=200,
                   help="fp16: finite steps before the dynamic loss scale doubles")
    args = p.parse_args(argv)

    if args.data:
        (x_tr, y_tr), (x_te, y_te) = data.load_mnist(args.data)
    else:
        (x_tr, y_tr), (x_te, y_te) = data.load_digits(seed=args.seed, flatten=False)
    x_tr, x_te = x_tr[..., None], x_te[..., None]  # NHWC with one channel
    if not args.no_augment:
        x_tr, y_tr = shifted_copies(x_tr, y_tr)
    n_classes = int(y_tr.max()) + 1
    print(f"device: {netcl.default_device().name}; model {args.model}; train {x_tr.shape}; "
          f"precision {args.precision}")

    init_fun, apply_fun = make_model(args.model, n_classes)
    _, params, bn_state = init_fun(random.PRNGKey(args.seed), (-1,) + x_tr.shape[1:],
                                   return_state=True)
    steps = args.epochs * (len(x_tr) // args.batch_size)
    opt = optim.adamw(optim.warmup_cosine_decay_schedule(0.0, args.lr, steps // 20, steps),
                      weight_decay=1e-4)
    opt_state = opt.init(params)

    def loss_fn(params, bn_state, x, y):
        logits, bn_state = apply_fun(params, x, state=bn_state, mode="train")
        logp = netcl.nn.log_softmax(logits)
        return -jnp.mean(jnp.sum(logp * netcl.nn.one_hot(y, n_classes), axis=-1)), bn_state

    def predict_fn(params, bn_state, x):
        logits, _ = apply_fun(params, x, state=bn_state, mode="eval")
        return jnp.argmax(logits, axis=-1)

    # float32: autocast gives the functions themselves
    loss_fn = netcl.autocast(loss_fn, PRECISIONS[args.precision])
    predict = netcl.jit(netcl.autocast(predict_fn, PRECISIONS[args.precision]))

    @netcl.jit
    def step(params, bn_state, opt_state, loss_scale, x, y):
        def scaled(params):
            loss, bn_state_out = loss_fn(params, bn_state, x, y)
            return loss_scale.scale(loss), (loss, bn_state_out)
        grads, (loss, bn_state_out) = netcl.grad(scaled, has_aux=True)(params)
        grads = loss_scale.unscale(grads)
        updates, opt_state_out = opt.update(grads, opt_state, params)
        params_out = optim.apply_updates(params, updates)
        if isinstance(loss_scale, mp.NoOpLossScale):   # nothing can overflow: no checks
            return params_out, bn_state_out, opt_state_out, loss_scale, loss, None
        # a step whose gradients overflowed changes nothing but the (smaller) loss scale
        finite = mp.all_finite(grads)
        keep = lambda new, old: mp.select_tree(finite, new, old)  # noqa: E731
        return (keep(params_out, params), keep(bn_state_out, bn_state),
                keep(opt_state_out, opt_state), loss_scale.adjust(finite), loss, finite)

    loss_scale = (mp.DynamicLossScale(2.0 ** 15, period=args.loss_scale_period)
                  if args.precision == "fp16" else mp.NoOpLossScale())
    loader = data.DataLoader((x_tr, y_tr), args.batch_size, shuffle=True, seed=args.seed,
                             drop_last=True)
    fp16 = args.precision == "fp16"
    t0, seen = time.perf_counter(), 0
    for epoch in range(args.epochs):
        losses, finites = [], []
        for xb, yb in loader:
            params, bn_state, opt_state, loss_scale, loss, finite = step(
                params, bn_state, opt_state, loss_scale, xb, yb)
            losses.append(loss)
            finites.append(finite)
            seen += xb.shape[0]
        if fp16 or (epoch + 1) % 5 == 0 or epoch == 0:
            line = (f"epoch {epoch + 1:3d}  loss {float(jnp.mean(jnp.stack(losses))):.4f}  "
                    f"{seen / (time.perf_counter() - t0):7.0f} examples/s")
            if fp16:        # the loss scale's history: where it ended, and the steps skipped
                skipped = len(finites) - int(jnp.sum(jnp.stack(finites).astype(jnp.int32)))
                line += (f"  loss scale 2^{np.log2(float(loss_scale.loss_scale)):.0f}  "
                         f"skipped {skipped}")
            print(line)
    preds = np.concatenate([np.asarray(predict(params, bn_state, jnp.asarray(x_te[i:i + 256])))
                            for i in range(0, len(x_te), 256)])
    acc = float(np.mean(preds == y_te))
    print(f"test accuracy: {acc * 100:.2f}%  ({time.perf_counter() - t0:.1f} s)")
    return acc


if __name__ == "__main__":
    main()
