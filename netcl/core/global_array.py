"""GlobalArray: an array of a global shape held as blocks on the devices of a sharding.

What `netcl.device_put(x, NamedSharding(mesh, spec))` and `shard_map` return, as a JAX
`Array` with a `NamedSharding`: `x.addressable_shards` lists each device's `Shard` (device,
index into the global array, replica id, data), `x.sharding` says where blocks live, and a
GlobalArray passed to shard_map with the sharding it asks for is used where it is. Any other
use as an array (`x + 1`, a jit call) gathers it onto one device first (DistributedArray).

>>> x = netcl.device_put(jnp.arange(4.0), NamedSharding(mesh, P("i")))
>>> [s.index for s in x.addressable_shards]       # [(slice(0, 2, None),), (slice(2, 4, None),)]
"""
from dataclasses import dataclass

import numpy as np

from . import dtypes
from .array import Array
from .sharded import DistributedArray
from .tracing import Tracer


@dataclass(frozen=True)
class Shard:
    """One device's block of a global array (jax.Shard)."""
    device: object
    index: tuple          # slices into the global array
    replica_id: int       # 0 for the first device holding this block
    data: Array


class GlobalArray(DistributedArray):
    __slots__ = ("shape", "dtype", "weak_type", "sharding", "_shards", "_gathered")

    def __init__(self, shape, sharding, shards):
        shards = tuple(shards)
        first = shards[0].data
        self.shape = tuple(shape)
        self.dtype = first.dtype
        self.weak_type = first.weak_type
        self.sharding = sharding
        self._shards = shards
        self._gathered = None

    @property
    def addressable_shards(self):
        return list(self._shards)

    global_shards = addressable_shards

    def addressable_data(self, index):
        """The data of addressable shard `index`."""
        return self._shards[index].data

    @property
    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self):
        return True

    def _arrays(self):
        return [s.data for s in self._shards]

    def _as_array(self):
        if self._gathered is None:
            # A block that is the whole array is the array: no gathering.
            full = [s.data for s in self._shards if _covers(s.index, self.shape)]
            if not full:
                return DistributedArray._as_array(self)
            from .devices import default_device
            here = [a for a in full if a.device is default_device()]
            self._gathered = (here or full)[0]
        return self._gathered

    def __array__(self, dtype=None, copy=None):
        host = np.empty(self.shape, dtype=self.dtype)
        for s in self._shards:
            if s.replica_id == 0:
                host[s.index] = np.asarray(s.data)
        return host if dtype is None else host.astype(dtype, copy=False)

    def __getitem__(self, index):
        return self._as_array()[index]

    def __repr__(self):
        body = np.array2string(np.asarray(self), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"


def _covers(index, shape):
    return all(s.start in (None, 0) and s.stop in (None, n) for s, n in zip(index, shape))


def put(x, sharding, where="device_put"):
    """`x` (an array-like, Array or GlobalArray) as blocks on the devices of `sharding`:
    a GlobalArray, or for a SingleDeviceSharding an Array on that device."""
    from ..sharding import SingleDeviceSharding
    from .eval import to_array
    if isinstance(x, Tracer):
        return x                     # (placement is not traced; jit's out_shardings place)
    if isinstance(sharding, SingleDeviceSharding):
        return _on_device(x, sharding.device, where)
    if isinstance(x, GlobalArray) and x.sharding == sharding:
        return x
    if not isinstance(x, (Array, DistributedArray)):
        x = to_array(x, where)
    shape = tuple(x.shape)
    sharding.check_fits(shape, where)
    blocks = list(sharding._blocks(shape))
    host = None
    shards = []
    for device, index, replica in blocks:
        if isinstance(x, Array) and x.device is device and _covers(index, shape):
            data = x._check_live(where)
        else:
            if host is None:
                host = np.asarray(x) if not isinstance(x, Array) else x._to_host(where)
            data = Array.from_numpy(device, np.ascontiguousarray(host[index]), x.weak_type)
        shards.append(Shard(device, index, replica, data))
    return GlobalArray(shape, sharding, shards)


def _on_device(x, device, where):
    from .eval import to_array
    if isinstance(x, DistributedArray):
        x = x._as_array()
    if isinstance(x, Array):
        if x.device is device:
            return x._check_live(where)
        return Array.from_numpy(device, x._to_host(where), x.weak_type)
    return to_array(x, where, device)


def make_array_from_single_device_arrays(shape, sharding, arrays):
    """A GlobalArray of `shape` from one block per device of `sharding` (each array's device
    says which block it is), as jax.make_array_from_single_device_arrays.

    >>> x = netcl.make_array_from_single_device_arrays((4,), s, [a0, a1])
    """
    where = "make_array_from_single_device_arrays"
    shape = tuple(int(n) for n in shape)
    sharding.check_fits(shape, where)
    blocks = list(sharding._blocks(shape))
    by_device = {}
    for i, a in enumerate(arrays):
        if not isinstance(a, Array):
            raise TypeError(f"{where}: arrays[{i}] is a {type(a).__name__}, not a netcl Array")
        by_device[a.device] = a
    if len(by_device) != len(blocks) or any(d not in by_device for d, _, _ in blocks):
        raise ValueError(f"{where}: expected one array on each of the sharding's "
                         f"{len(blocks)} devices, got arrays on {len(by_device)} devices")
    want = sharding.shard_shape(shape)
    dts = {a.dtype for a in by_device.values()}
    if len(dts) != 1:
        raise ValueError(f"{where}: arrays differ in dtype: {sorted(str(d) for d in dts)}")
    shards = []
    for device, index, replica in blocks:
        a = by_device[device]
        if tuple(a.shape) != want:
            raise ValueError(f"{where}: the array on {device} has shape {tuple(a.shape)}; "
                             f"the sharding's block of {shape} is {want}")
        shards.append(Shard(device, index, replica, a))
    return GlobalArray(shape, sharding, shards)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """A GlobalArray of `shape` whose block on each device is `data_callback(index)` (index: a
    tuple of slices into the global array), as jax.make_array_from_callback.

    >>> x = netcl.make_array_from_callback((8,), s, lambda idx: host[idx])
    """
    where = "make_array_from_callback"
    shape = tuple(int(n) for n in shape)
    sharding.check_fits(shape, where)
    want = sharding.shard_shape(shape)
    shards = []
    for device, index, replica in sharding._blocks(shape):
        value = data_callback(index)
        a = _on_device(value, device, where)
        if dtype is not None and a.dtype != dtypes.canonicalize(dtype, where=where):
            from ..primitives.elementwise import convert_element_type
            a = convert_element_type(a, dtypes.canonicalize(dtype, where=where))
        if tuple(a.shape) != want:
            raise ValueError(f"{where}: data_callback({index}) returned shape "
                             f"{tuple(a.shape)}; the block is {want}")
        shards.append(Shard(device, index, replica, a))
    return GlobalArray(shape, sharding, shards)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """A GlobalArray of this process's data placed as `sharding` says, as
    jax.make_array_from_process_local_data. netcl's meshes hold this process's devices only,
    so the local data is the whole array (`global_shape`, where given, must be its shape).

    >>> x = netcl.make_array_from_process_local_data(NamedSharding(mesh, P("b")), batch)
    """
    where = "make_array_from_process_local_data"
    shape = tuple(np.shape(local_data))
    if global_shape is not None and tuple(global_shape) != shape:
        raise ValueError(f"{where}: global_shape {tuple(global_shape)} differs from the "
                         f"local data's shape {shape}; netcl's meshes hold this process's "
                         "devices only, so the local data is the whole array")
    return put(local_data, sharding, where)
