"""jax.experimental.multihost_utils over netcl.distributed's MPI job: the helpers multi-process
programs call between steps. In a single process each is what JAX's is with one process
(the value itself; no communication).

>>> from netcl.experimental import multihost_utils
>>> multihost_utils.sync_global_devices("after init")
>>> losses = multihost_utils.process_allgather(loss)      # (process_count(),) + loss.shape
"""
import numpy as np

from .. import distributed
from ..tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["broadcast_one_to_all", "sync_global_devices", "process_allgather",
           "assert_equal"]

broadcast_one_to_all = distributed.broadcast_one_to_all


def sync_global_devices(name):
    """Wait until every process reaches a `sync_global_devices` with this `name`; processes
    that arrive with different names raise (netcl's collective mismatch check).

    >>> multihost_utils.sync_global_devices("checkpoint written")
    """
    if not isinstance(name, str):
        raise TypeError(f"sync_global_devices: name must be a str, got {type(name).__name__}")
    w = distributed.world()
    if w is not None:
        w.comm.Barrier(what=f"sync_global_devices({name!r})")


def process_allgather(in_tree, tiled=False):
    """Every process's value of `in_tree` (a pytree of arrays), as NumPy arrays on every
    process: stacked on a new leading axis of size process_count() (`tiled`: concatenated
    along the first axis instead).

    >>> all_losses = multihost_utils.process_allgather(loss)
    """
    leaves, tree = tree_flatten(in_tree)
    hosts = [np.asarray(x) for x in leaves]
    w = distributed.world()
    if w is None:
        gathered = [[h] for h in hosts]
    else:
        every = w.comm.allgather([(h.shape, h.dtype.str) for h in hosts],
                                 what=f"process_allgather of {len(hosts)} leaves")
        gathered = []
        for k, h in enumerate(hosts):
            shapes = {e[k] for e in every}
            if len(shapes) != 1:
                raise ValueError(f"process_allgather: leaf {k} differs between processes: "
                                 f"{sorted(str(s) for s in shapes)}")
            out = np.empty((w.count,) + h.shape, h.dtype)
            w.comm.raw.Allgather(np.ascontiguousarray(h).reshape(-1).view(np.uint8),
                                 out.reshape(-1).view(np.uint8))
            gathered.append(list(out))
    out = []
    for k, parts in enumerate(gathered):
        if tiled:
            if parts[0].ndim == 0:
                raise ValueError(f"process_allgather: tiled=True needs arrays of rank >= 1; "
                                 f"leaf {k} is a scalar")
            out.append(np.concatenate(parts))
        else:
            out.append(np.stack(parts))
    return tree_unflatten(tree, out)


def assert_equal(in_tree, fail_message=""):
    """AssertionError (with `fail_message`) unless `in_tree` is the same on every process.

    >>> multihost_utils.assert_equal(params, "parameters diverged")
    """
    gathered = process_allgather(in_tree)

    def same(x):
        return all(np.array_equal(x[0], x[i], equal_nan=x.dtype.kind in "fc")
                   for i in range(1, len(x)))
    if not all(tree_flatten(tree_map(same, gathered))[0]):
        raise AssertionError(f"{fail_message} Expected the pytree to be equal across "
                             "processes (multihost_utils.assert_equal)".strip())
