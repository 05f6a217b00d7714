"""jax.experimental.shard_map: `shard_map(f, mesh, in_specs, out_specs, check_rep=True)`,
the older spelling of `netcl.shard_map` (transforms/shard_map.py)."""
from ..transforms.shard_map import shard_map

__all__ = ["shard_map"]
