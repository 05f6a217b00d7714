"""A tour of netcl on the default device: arrays, kernels, grad, vmap and the IR.

    python examples/arrays_demo.py
"""
import numpy as np

import netcl
import netcl.numpy as jnp


def main():
    dev = netcl.default_device()
    print(f"default device: {dev.name} ({dev.kind}, platform {dev.platform})")
    for d in netcl.devices():
        c = d.capabilities
        print(f"  {d}: {c.compute_units} compute units, {d.memory / 2**30:.1f} GiB, "
              f"fp64={c.fp64} fp16={c.fp16}, max work-group {c.max_work_group_size}")

    x = jnp.linspace(-3.0, 3.0, 7)
    print("x                 =", x)
    print("tanh(x)*2 + 1     =", jnp.tanh(x) * 2.0 + 1.0)
    a = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    print("a.T @ a           =\n", a.T @ a)
    print("a[:, ::-1].sum(0) =", a[:, ::-1].sum(axis=0))

    def loss(w, x):
        return jnp.sum(netcl.nn.softplus(x @ w) ** 2)

    w = jnp.ones((4, 2)) * 0.1
    print("grad(loss)(w, a)  =\n", netcl.grad(loss)(w, a))
    per_row = netcl.vmap(netcl.grad(lambda w, row: jnp.sum(jnp.tanh(row @ w))), (None, 0))(w, a)
    print("per-row grads     :", per_row.shape)
    print("IR of loss:")
    print(netcl.make_ir(loss)(w, a))
    print("buffer pool       :", dev.memory_stats())


if __name__ == "__main__":
    main()
