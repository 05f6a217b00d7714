"""ShardedArray: one array per device, stacked along a leading axis (what pmap returns).

Each shard stays on its device: `x[i]` is shard i (no copy), passing `x` back to a pmap over
the same devices hands every device its own shard without a host round trip, and
`np.asarray(x)` gathers. Any other use as an array (`x + 1`, `jnp.mean(x)`) gathers the
shards onto the default device first, as one array, and runs there.

>>> xs = netcl.device_put_sharded([jnp.ones(3), jnp.zeros(3)], netcl.local_devices()[:2])
>>> xs.shape, xs[1]
((2, 3), Array([0., 0., 0.], dtype=float32))
"""
from dataclasses import dataclass

import numpy as np

from .array import Array, ArrayBase


@dataclass(frozen=True)
class PmapSharding:
    """Where a ShardedArray lives: shard i of the leading axis on `devices[i]`."""
    devices: tuple
    shard_shape: tuple


class DistributedArray(ArrayBase):
    """An array held as blocks on several devices (ShardedArray, GlobalArray). Used as an
    ordinary array it is gathered onto the default device once (`_as_array`)."""
    __slots__ = ()

    def _as_array(self):
        """The blocks gathered into one Array on the default device (kept while `self`
        lives: a distributed value used several times is gathered once)."""
        if self._gathered is None:
            from .devices import default_device
            self._gathered = Array.from_numpy(default_device(), np.asarray(self),
                                              self.weak_type)
        return self._gathered

    def _arrays(self):
        """The per-device Arrays that hold the data."""
        raise NotImplementedError

    def devices(self):
        """The devices holding the blocks, as a set (as `jax.Array.devices()`)."""
        return {a.device for a in self._arrays()}

    def block_until_ready(self):
        for a in self._arrays():
            a.block_until_ready()
        return self

    def delete(self):
        for a in self._arrays():
            a.delete()

    def is_deleted(self):
        return any(a.is_deleted() for a in self._arrays())

    def tolist(self):
        return np.asarray(self).tolist()

    def item(self):
        return self._as_array().item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        return bool(self._as_array())

    def __hash__(self):
        raise TypeError(f"unhashable type: netcl {type(self).__name__}")


class ShardedArray(DistributedArray):
    __slots__ = ("shards", "shape", "dtype", "weak_type", "_gathered")

    def __init__(self, shards):
        shards = tuple(shards)
        if not shards:
            raise ValueError("ShardedArray: needs at least one shard")
        first = shards[0]
        for i, s in enumerate(shards):
            if not isinstance(s, Array):
                raise TypeError(f"ShardedArray: shard {i} is a {type(s).__name__}, not a "
                                "netcl Array")
            if s.shape != first.shape or s.dtype != first.dtype:
                raise ValueError(f"ShardedArray: shard {i} is {s.dtype}{list(s.shape)}, shard 0 "
                                 f"is {first.dtype}{list(first.shape)}; shards must agree")
        self.shards = shards
        self.shape = (len(shards),) + tuple(first.shape)
        self.dtype = first.dtype
        self.weak_type = first.weak_type
        self._gathered = None

    @property
    def sharding(self):
        return PmapSharding(tuple(s.device for s in self.shards), self.shape[1:])

    @property
    def addressable_shards(self):
        return list(self.shards)

    def _arrays(self):
        return self.shards

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
            n = len(self.shards)
            if not -n <= index < n:
                raise IndexError(f"index {index} is out of bounds for axis 0 with size {n}")
            return self.shards[index]
        return self._as_array()[index]

    def __len__(self):
        return len(self.shards)

    def __iter__(self):
        return iter(self.shards)

    def __array__(self, dtype=None, copy=None):
        host = np.stack([np.asarray(s) for s in self.shards])
        return host if dtype is None else host.astype(dtype, copy=False)

    def __repr__(self):
        body = np.array2string(np.asarray(self), separator=", ", prefix="ShardedArray(")
        return f"ShardedArray({body}, dtype={self.dtype}, devices={len(self.shards)})"
