"""jax.sharding: meshes of devices and where each block of an array lives on them.

A `Mesh` arranges devices in a named grid (`make_mesh((2, 2), ("data", "model"))`); a
`PartitionSpec` names, per array dimension, the mesh axes that dimension is split over (None:
not split); a `NamedSharding(mesh, spec)` is the pair, and `netcl.device_put(x, sharding)`
puts each block on its device, giving a `GlobalArray` (core/global_array.py). `shard_map`
(transforms/shard_map.py) runs a function per block with collectives over the mesh axes.

What runs where: `shard_map` over a mesh with one axis of several devices runs on those
devices concurrently (pmap's machinery); other meshes run the blocks batched on the mesh's
first device and place the results. `jit` does not partition computations (netcl has no
GSPMD partitioner): a jitted function given global arrays gathers them onto one device, and
`out_shardings` places its results.

>>> mesh = netcl.make_mesh((2,), ("batch",))
>>> x = netcl.device_put(jnp.arange(8.0), NamedSharding(mesh, P("batch")))
>>> x.addressable_shards[1].index      # (slice(4, 8, None),)
"""
import abc
import contextlib
import contextvars
import itertools
from collections import OrderedDict

import numpy as np

from .core.devices import Device
from .core.sharded import PmapSharding  # noqa: F401  (jax.sharding.PmapSharding)

__all__ = ["Mesh", "PartitionSpec", "P", "NamedSharding", "SingleDeviceSharding",
           "make_single_device_sharding",
           "PmapSharding", "Sharding", "AxisType", "make_mesh", "set_mesh", "use_mesh",
           "get_mesh", "reshard"]


class AxisType:
    """jax.sharding.AxisType's names. netcl keeps the type a mesh was made with; every axis
    behaves as Explicit does for the operations netcl offers (shard_map, device_put)."""
    Auto = "Auto"
    Explicit = "Explicit"
    Manual = "Manual"


# ---- PartitionSpec ---------------------------------------------------------------------------

class PartitionSpec:
    """Per array dimension: the mesh axis name (or tuple of names, major to minor) it is split
    over, or None. Trailing dimensions not listed are not split.

    >>> P("data", None), P(("data", "model"))
    """
    __slots__ = ("_parts",)

    def __init__(self, *parts):
        self._parts = tuple(_normalize_part(p) for p in parts)

    def __iter__(self):
        return iter(self._parts)

    def __len__(self):
        return len(self._parts)

    def __getitem__(self, i):
        return self._parts[i]

    def __eq__(self, other):
        return isinstance(other, PartitionSpec) and self._parts == other._parts

    def __hash__(self):
        return hash(("PartitionSpec", self._parts))

    def __repr__(self):
        return "P(" + ", ".join(repr(p) for p in self._parts) + ("," if len(self) == 1 else "") \
            + ")"

    def axis_names(self):
        """Every mesh axis name the spec uses, in order."""
        return [n for p in self._parts if p is not None
                for n in (p if isinstance(p, tuple) else (p,))]


P = PartitionSpec


def _normalize_part(p):
    if p is None:
        return None
    if isinstance(p, (tuple, list)):
        names = tuple(p)
        if not names:
            return None
        return names[0] if len(names) == 1 else names
    return p


def _names_of(part):
    return () if part is None else (part if isinstance(part, tuple) else (part,))


# ---- Mesh --------------------------------------------------------------------------------------

class Mesh:
    """Devices in a named grid, as jax.sharding.Mesh: `devices` an array of netcl Devices
    (distinct), `axis_names` one name per dimension. Used as a context manager it is the mesh
    shard_map and bare PartitionSpecs refer to.

    >>> mesh = Mesh(np.array(netcl.local_devices()[:4]).reshape(2, 2), ("data", "model"))
    >>> mesh.shape        # OrderedDict([('data', 2), ('model', 2)])
    """

    def __init__(self, devices, axis_names, axis_types=None):
        arr = np.empty(np.shape(devices), dtype=object)
        flat = list(np.asarray(devices, dtype=object).flat)
        arr.reshape(-1)[:] = flat
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if arr.ndim != len(names):
            raise ValueError(f"Mesh: devices has {arr.ndim} dimensions {arr.shape} but "
                             f"axis_names has {len(names)} names {names}")
        for d in flat:
            if not isinstance(d, Device):
                raise TypeError(f"Mesh: devices must be netcl Devices (netcl.local_devices()), "
                                f"got {type(d).__name__}")
        if len({id(d) for d in flat}) != len(flat):
            raise ValueError(f"Mesh: devices must be distinct, got {flat}")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis_names must be distinct, got {names}")
        for n in names:
            try:
                hash(n)
            except TypeError:
                raise TypeError(f"Mesh: axis names must be hashable, got {n!r}") from None
        self.devices = arr
        self.axis_names = names
        self.axis_types = tuple(axis_types) if axis_types is not None else \
            (AxisType.Explicit,) * len(names)
        if len(self.axis_types) != len(names):
            raise ValueError(f"Mesh: axis_types has {len(self.axis_types)} entries for "
                             f"{len(names)} axes")
        self._token = []
        self._hash = None

    @property
    def shape(self):
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.devices.shape))

    @property
    def size(self):
        return int(self.devices.size)

    @property
    def empty(self):
        return self.size == 0

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.index, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        return list(self.devices.flat)

    def __eq__(self, other):
        if self is other:
            return True
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.devices.shape == other.devices.shape
                and all(a is b for a, b in zip(self.devices.flat, other.devices.flat)))

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.axis_names, self.devices.shape,
                               tuple(id(d) for d in self.devices.flat)))
        return self._hash

    def __repr__(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        return f"Mesh({sizes})"

    def __enter__(self):
        self._token.append(_context_mesh.set(self))
        return self

    def __exit__(self, *exc):
        _context_mesh.reset(self._token.pop())

    # -- where each block goes --

    def coordinates(self):
        """(device, {axis name: index}) for every device, in the mesh's row-major order."""
        for pos in itertools.product(*[range(s) for s in self.devices.shape]):
            yield self.devices[pos], dict(zip(self.axis_names, pos))


_context_mesh = contextvars.ContextVar("netcl_mesh", default=None)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of the first prod(axis_shapes) devices (default: netcl.local_devices()), as
    jax.make_mesh.

    >>> mesh = netcl.make_mesh((netcl.device_count(),), ("batch",))
    """
    from .transforms.pmap import local_devices
    shape = tuple(int(s) for s in axis_shapes)
    names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(shape) != len(names):
        raise ValueError(f"make_mesh: axis_shapes {shape} and axis_names {names} differ in "
                         "length")
    devs = list(local_devices() if devices is None else devices)
    n = int(np.prod(shape, dtype=np.int64))
    if len(devs) < n:
        raise ValueError(f"make_mesh: Number of devices {len(devs)} must be >= the product of "
                         f"mesh_shape {shape}")
    grid = np.empty(len(devs[:n]), dtype=object)
    grid[:] = devs[:n]
    return Mesh(grid.reshape(shape), names, axis_types)


def get_mesh():
    """The mesh set by `set_mesh`/`use_mesh`/`with mesh:` (None outside)."""
    return _context_mesh.get()


@contextlib.contextmanager
def use_mesh(mesh):
    """Within the block, `mesh` is the mesh shard_map and bare PartitionSpecs refer to."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"use_mesh: expected a Mesh, got {type(mesh).__name__}")
    token = _context_mesh.set(mesh)
    try:
        yield mesh
    finally:
        _context_mesh.reset(token)


class set_mesh:
    """jax.set_mesh: make `mesh` the current mesh (until reset), or within a `with` block."""

    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh: expected a Mesh, got {type(mesh).__name__}")
        self._token = _context_mesh.set(mesh)

    def __enter__(self):
        return _context_mesh.get()

    def __exit__(self, *exc):
        _context_mesh.reset(self._token)


def reshard(x, shardings):
    """x placed as `shardings` say (jax.sharding.reshard): lax.with_sharding_constraint.

    >>> y = netcl.sharding.reshard(x, NamedSharding(mesh, P(None, "model")))
    """
    from .lax_more import with_sharding_constraint
    return with_sharding_constraint(x, shardings)


# ---- shardings ---------------------------------------------------------------------------------

class Sharding(abc.ABC):
    """Where each block of an array lives (jax.sharding.Sharding). A sharding says which
    devices it uses (`_device_list`), the block shape (`shard_shape`) and each device's
    block (`_blocks`: (device, index, replica id) in order)."""

    def devices_indices_map(self, global_shape):
        """{device: the index (tuple of slices) of its block} for an array of global_shape."""
        return {d: idx for d, idx, _ in self._blocks(tuple(global_shape))}

    @abc.abstractmethod
    def _device_list(self):
        """The devices holding blocks, in order."""

    @abc.abstractmethod
    def _blocks(self, shape):
        """(device, index, replica id) for each device, for an array of `shape`."""

    @abc.abstractmethod
    def shard_shape(self, global_shape):
        """The shape of one block of an array of `global_shape`."""

    def check_fits(self, global_shape, where):
        """ValueError naming `where` unless an array of `global_shape` can be cut so."""

    @property
    def device_set(self):
        return set(self._device_list())

    @property
    def addressable_devices(self):
        return self.device_set

    @property
    def num_devices(self):
        return len(self._device_list())

    @property
    def memory_kind(self):
        return "device"

    def is_equivalent_to(self, other, ndim):
        """True where both put the same blocks on the same devices for rank `ndim`."""
        if not isinstance(other, Sharding):
            return False
        shape = (2 * 3 * 5 * 7 * 11,) * ndim     # divisible by any small mesh
        try:
            return self.devices_indices_map(shape) == other.devices_indices_map(shape)
        except ValueError:
            return False


class SingleDeviceSharding(Sharding):
    """The whole array on one device.

    >>> SingleDeviceSharding(netcl.local_devices()[0])
    """

    def __init__(self, device, *, memory_kind=None):
        if not isinstance(device, Device):
            raise TypeError(f"SingleDeviceSharding: expected a netcl Device, got "
                            f"{type(device).__name__}")
        self.device = device

    def _device_list(self):
        return [self.device]

    def _blocks(self, shape):
        yield self.device, tuple(slice(None) for _ in shape), 0

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    @property
    def is_fully_replicated(self):
        return True

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other.device is self.device

    def __hash__(self):
        return hash(("SingleDeviceSharding", id(self.device)))

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r})"


def make_single_device_sharding(device, *, memory_kind=None):
    """SingleDeviceSharding(device), as jax.sharding.make_single_device_sharding (a TypeError
    naming it for anything but a netcl Device).

    >>> netcl.sharding.make_single_device_sharding(netcl.devices()[0])
    """
    if not isinstance(device, Device):
        raise TypeError(f"make_single_device_sharding: device must be a netcl Device, got "
                        f"{type(device).__name__}")
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class NamedSharding(Sharding):
    """Blocks of an array on the devices of `mesh`, split as `spec` says.

    >>> s = NamedSharding(mesh, P("data", None)); s.shard_shape((8, 3))    # (4, 3) on 2 devices
    """

    def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a Mesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got "
                            f"{type(spec).__name__}")
        check_spec(spec, mesh, "NamedSharding")
        self.mesh = mesh
        self.spec = spec

    def _device_list(self):
        return list(self.mesh.devices.flat)

    def shard_shape(self, global_shape):
        return block_shape(tuple(global_shape), self.spec, self.mesh, "NamedSharding")

    def check_fits(self, global_shape, where):
        block_shape(tuple(global_shape), self.spec, self.mesh, where)

    def _blocks(self, shape):
        """(device, index, replica_id) per device in mesh order."""
        block = block_shape(shape, self.spec, self.mesh, "NamedSharding")
        seen = {}
        for device, coords in self.mesh.coordinates():
            index = block_index(shape, block, self.spec, self.mesh, coords)
            key = tuple((s.start, s.stop) for s in index)
            replica = seen.get(key, 0)
            seen[key] = replica + 1
            yield device, index, replica

    @property
    def is_fully_replicated(self):
        return all(self.mesh.shape[n] == 1 for n in self.spec.axis_names())

    def with_spec(self, spec):
        return NamedSharding(self.mesh, spec)

    def __eq__(self, other):
        return self is other or (isinstance(other, NamedSharding) and self.mesh == other.mesh
                                 and self.spec == other.spec)

    def __hash__(self):
        return hash(("NamedSharding", self.mesh, self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


# ---- block arithmetic (shared by NamedSharding and shard_map) --------------------------------

def check_spec(spec, mesh, where, ndim=None):
    """ValueError unless every name of `spec` is an axis of `mesh`, used once, and the spec
    fits rank `ndim`."""
    names = spec.axis_names()
    for n in names:
        if n not in mesh.axis_names:
            raise ValueError(f"{where}: Resource axis: {n} of {spec!r} is not found in mesh: "
                             f"{mesh.axis_names}.")
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: {spec!r} uses a mesh axis more than once")
    if ndim is not None and len(spec) > ndim:
        raise ValueError(f"{where}: {spec!r} is only valid for values of rank at least "
                         f"{len(spec)}, but was applied to a value of rank {ndim}")


def split_count(part, mesh):
    """How many blocks a dimension with spec entry `part` is cut into."""
    n = 1
    for name in _names_of(part):
        n *= mesh.shape[name]
    return n


def block_shape(shape, spec, mesh, where):
    """The block of an array of `shape` each device holds under `spec`."""
    check_spec(spec, mesh, where, len(shape))
    out = list(shape)
    for dim, part in enumerate(spec):
        k = split_count(part, mesh)
        if shape[dim] % k:
            raise ValueError(f"{where}: dimension {dim} of shape {shape} (size {shape[dim]}) "
                             f"is not divisible by {k}, the number of devices along mesh "
                             f"axes {_names_of(part)} of {spec!r}")
        out[dim] = shape[dim] // k
    return tuple(out)


def block_index(shape, block, spec, mesh, coords):
    """The slices of the block at mesh coordinates `coords` ({axis name: index})."""
    index = []
    for dim in range(len(shape)):
        part = spec[dim] if dim < len(spec) else None
        if split_count(part, mesh) == 1:          # (JAX's index for a dimension not cut)
            index.append(slice(None))
            continue
        pos = 0
        for name in _names_of(part):            # major to minor
            pos = pos * mesh.shape[name] + coords[name]
        index.append(slice(pos * block[dim], (pos + 1) * block[dim]))
    return tuple(index)


def expand_prefix(prefix, tree, is_entry, where, name):
    """One entry of `prefix` (a pytree prefix of `tree` whose leaves satisfy `is_entry`) per
    leaf of `tree`, as JAX expands in_specs / device prefixes."""
    from .tree_util import tree_flatten
    if is_entry(prefix) or not isinstance(prefix, (list, tuple, dict)):
        return [prefix] * len(tree_flatten(tree)[0])       # (the caller checks the entry)
    if isinstance(prefix, (list, tuple)) and isinstance(tree, (list, tuple)) \
            and not hasattr(tree, "_fields"):
        if len(prefix) != len(tree):
            raise ValueError(f"{where}: {name} has {len(prefix)} entries but the value it "
                             f"describes has {len(tree)}")
        return [e for p, t in zip(prefix, tree) for e in expand_prefix(p, t, is_entry, where,
                                                                          name)]
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            raise ValueError(f"{where}: {name} keys {sorted(prefix)} differ from the value's "
                             f"{sorted(tree)}")
        return [e for k in sorted(tree) for e in expand_prefix(prefix[k], tree[k], is_entry,
                                                               where, name)]
    raise ValueError(f"{where}: {name}={prefix!r} is not a pytree prefix of the value "
                     f"{tree_flatten(tree)[1]}")
