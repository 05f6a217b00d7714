"""jax.debug's sharding views: `inspect_array_sharding` hands a value's sharding to a
callback, `visualize_array_sharding` / `visualize_sharding` draw which device holds which
block of a 1-D or 2-D array, as a text grid (JAX draws with `rich`; netcl needs no package).

Traced values (inside jit, grad, vmap) report the default device's SingleDeviceSharding:
netcl's jit runs a function on one device (shard_map and pmap split work).

>>> x = netcl.device_put(jnp.ones((4, 8)), NamedSharding(mesh, P("a")))
>>> netcl.debug.visualize_array_sharding(x)
┌──────────┐
│  CPU 0   │
├──────────┤
│  CPU 1   │
└──────────┘
"""
import builtins

__all__ = ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]


def _sharding_of(x):
    from .core.devices import default_device
    from .core.tracing import Tracer
    from .sharding import SingleDeviceSharding
    if isinstance(x, Tracer):
        return SingleDeviceSharding(default_device())
    sharding = getattr(x, "sharding", None)
    if sharding is None:
        raise TypeError(f"inspect_array_sharding: expected a netcl array, got "
                        f"{type(x).__name__}")
    return sharding


def inspect_array_sharding(value, *, callback):
    """Call `callback(sharding)` for each array leaf of `value` (at trace time under jit).

    >>> netcl.debug.inspect_array_sharding(x, callback=print)
    """
    from .tree_util import tree_leaves
    if not callable(callback):
        raise TypeError(f"inspect_array_sharding: callback must be callable, got "
                        f"{type(callback).__name__}")
    for leaf in tree_leaves(value):
        callback(_sharding_of(leaf))


def visualize_array_sharding(arr, **kwargs):
    """Print which device holds which block of the 1-D or 2-D array `arr`.

    >>> netcl.debug.visualize_array_sharding(netcl.device_put(x, NamedSharding(mesh, P("a"))))
    """
    shape = tuple(getattr(arr, "shape", ()))
    visualize_sharding(shape, _sharding_of(arr), **kwargs)


def visualize_sharding(shape, sharding, *, use_color=False, scale=1.0, min_width=9,
                       max_width=80, color_map=None):
    """Print a text grid of `sharding`'s blocks of an array of `shape` (rank 1 or 2), each
    cell naming the devices that hold it (replicas share a cell).

    >>> netcl.debug.visualize_sharding((8,), NamedSharding(mesh, P("a")))
    """
    shape = tuple(int(n) for n in shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding: only 1-D and 2-D arrays can be drawn, got "
                         f"shape {shape}")
    grid = (1,) + shape if len(shape) == 1 else shape
    blocks = {}
    for device, index in sharding.devices_indices_map(shape).items():
        index = ((slice(None),) + tuple(index)) if len(shape) == 1 else tuple(index)
        key = tuple(_bounds(s, n) for s, n in zip(index, grid))
        blocks.setdefault(key, []).append(device)
    rows = sorted({k[0] for k in blocks})
    cols = sorted({k[1] for k in blocks})
    labels = {k: _label(ds) for k, ds in blocks.items()}
    width = max(min_width, max(len(v) for v in labels.values()) + 2)
    width = min(max_width // max(len(cols), 1), int(width * scale)) or 1
    line = builtins.print
    line("┌" + "┬".join("─" * width for _ in cols) + "┐")
    for r, row in enumerate(rows):
        cells = [labels.get((row, col), "").center(width)[:width] for col in cols]
        line("│" + "│".join(cells) + "│")
        if r + 1 < len(rows):
            line("├" + "┼".join("─" * width for _ in cols) + "┤")
    line("└" + "┴".join("─" * width for _ in cols) + "┘")


def _bounds(s, n):
    start, stop, _ = s.indices(n)
    return start, stop


def _label(devices):
    kind = devices[0].kind.upper() if devices[0].kind in ("cpu", "gpu") else "DEV"
    return f"{kind} " + ",".join(str(d.index) for d in sorted(devices, key=lambda d: d.index))
