"""`Array`: an immutable n-d array on one device, evaluated asynchronously.

An Array is a view (shape, strides, offset in elements) over a pooled device buffer, so
reshape of a contiguous array, transpose, broadcast, slicing with steps and reversal cost no
kernel in eager mode; kernels that need a dense layout ask for `_dense()`. Work is enqueued on
the device's in-order queue: `np.asarray(x)` and `x.block_until_ready()` wait for it.
On the NumPy fallback device the buffer is simply a numpy array.

Operators, reductions as methods and indexing are attached by `netcl.numpy` (they bind
primitives); `ArrayBase` is shared with tracers so user code sees one interface.
"""
import importlib
import itertools

import numpy as np
import pyopencl as cl

from . import config as _config, dtypes
from .shapes import contiguous_strides, prod

_devices = importlib.import_module(".devices", __package__)   # (the module, not netcl.devices)


class ArrayBase:
    """Methods common to concrete arrays and tracers; `netcl.numpy` fills in the operators."""
    __slots__ = ()
    __array_priority__ = 100

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return prod(self.shape)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    @property
    def aval(self):
        from .tracing import ShapedArray
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize


_layout_ids = {}
_next_layout_id = itertools.count()

# The layout id of a deleted array: no launcher or executable is ever cached under it, so
# eager dispatch and jit's fast path miss and reach the checks of their slow paths, and
# live arrays pay nothing for the check.
DELETED_LID = -1


def layout_id(device, shape, dtype, weak_type, strides, offset):
    """A small int naming a layout, so eager dispatch hashes one int per argument instead
    of nested tuples. Ids are never reused (a cleared table only costs cache misses)."""
    key = (device, shape, dtype, weak_type, strides, offset)
    lid = _layout_ids.get(key)
    if lid is None:
        if len(_layout_ids) > 200_000:
            _layout_ids.clear()
        # (next() on a count and setdefault are atomic: two threads naming one new layout
        # at once agree on its id, and two layouts never share one)
        lid = _layout_ids.setdefault(key, next(_next_layout_id))
    return lid


def deleted_message(x, where):
    """JAX's wording for the use of a deleted (donated) array, after `where`."""
    return (f"{where}: Array has been deleted with shape={x.dtype}{list(x.shape)}: it was "
            "donated to a jit call (donate_argnums), which may have written its outputs over "
            "its buffer, or deleted with .delete(). Use the call's result instead, or do not "
            "donate an array that is used again.")


class _UnboundCopy:
    """The storage of an unbound array standing for a copy (Array._dense of a probe)."""
    __slots__ = ()


# The copy primitive (a strided view made dense): netcl.primitives registers it at import,
# since core imports no primitive.
_copy_primitive = [None]


def register_copy_primitive(prim):
    _copy_primitive[0] = prim


class Array(ArrayBase):
    # (_host_copy, set by copy_to_host_async only, is left unset elsewhere: no cost per array)
    __slots__ = ("device", "_buf", "_storage", "shape", "dtype", "strides", "offset",
                 "weak_type", "_contig", "_lid", "deleted", "_host_copy", "__weakref__")

    def __init__(self, device, buf, storage, shape, dtype, strides, offset=0, weak_type=False,
                 contiguous=True, lid=None):
        self.device = device
        self._buf = buf
        self._storage = storage
        self.shape = shape
        self.dtype = dtype
        self.strides = strides
        self.offset = offset
        self.weak_type = weak_type
        self._contig = contiguous
        self._lid = lid  # layout id, computed on first dispatch unless the launcher knows it
        self.deleted = False  # set when donated to a jit call

    def delete(self):
        """Free this array's buffer now (as a donation to a jit call does); any later use
        raises RuntimeError.

        >>> x = netcl.numpy.ones(3); x.delete(); x.is_deleted()
        True
        """
        # (_buf stays: a launch another thread began on this array before the deletion
        # must not pass a null buffer to the driver)
        self._storage = None
        self._lid = DELETED_LID
        self.deleted = True
        self._host_copy = None

    def is_deleted(self):
        """Whether this array was deleted (donated to a jit call, or `delete()`)."""
        return self.deleted

    # ---- where it lives, as a JAX Array with a SingleDeviceSharding ---------------------
    @property
    def sharding(self):
        from ..sharding import SingleDeviceSharding
        return SingleDeviceSharding(self.device)

    def devices(self):
        """{the device holding this array} (as `jax.Array.devices()`)."""
        return {self.device}

    @property
    def addressable_shards(self):
        from .global_array import Shard
        return [Shard(self.device, tuple(slice(None) for _ in self.shape), 0, self)]

    global_shards = addressable_shards

    def addressable_data(self, index):
        if index != 0:
            raise IndexError(f"addressable_data: a single-device array has one shard, got "
                             f"index {index}")
        return self

    is_fully_replicated = True
    is_fully_addressable = True

    def _check_live(self, where):
        """RuntimeError naming `where` if this array was deleted; else self."""
        if self.deleted:
            raise RuntimeError(deleted_message(self, where))
        return self

    def _layout_id(self):
        lid = self._lid
        if lid is None:
            lid = self._lid = layout_id(self.device, self.shape, self.dtype, self.weak_type,
                                        self.strides, self.offset)
        return lid

    # ---- creation -------------------------------------------------------------------
    @staticmethod
    def empty(device, shape, dtype, weak_type=False):
        """An uninitialised dense array (the output of a kernel about to be enqueued)."""
        if device.is_numpy:
            a = np.empty(shape, dtype)
            return Array(device, a, None, shape, dtype, None, 0, weak_type)
        from .pool import Storage
        st = Storage(device.pool, prod(shape) * dtype.itemsize)
        return Array(device, st.buf, st, shape, dtype, contiguous_strides(shape), 0, weak_type)

    @staticmethod
    def unbound(device, shape, dtype, weak_type=False):
        """A dense array with a layout and no buffer: what launchers are built from where
        nothing runs (jit's lower().kernels)."""
        return Array(device, None, None, shape, dtype, contiguous_strides(shape), 0, weak_type)

    @staticmethod
    def from_numpy(device, host, weak_type=False):
        """Copy a numpy array (of a supported dtype) to `device`."""
        host = np.asarray(host, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        shape = tuple(host.shape)
        if device.is_numpy:
            return Array(device, host.copy(), None, shape, host.dtype, None, 0, weak_type)
        with _devices.LOCK:         # (the pool's books; the copy needs no lock)
            out = Array.empty(device, shape, host.dtype, weak_type)
        if host.size:
            cl.enqueue_copy(device.queue, out._buf, _bytes_view(host), is_blocking=True)
        return out

    def _view(self, shape, strides, offset, weak_type=None):
        """A new Array over the same storage (eager shape ops use this)."""
        return Array(self.device, self._buf, self._storage, shape, self.dtype, strides, offset,
                     self.weak_type if weak_type is None else weak_type,
                     strides == contiguous_strides(shape))

    # ---- host transfer --------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        host = self._to_host()
        return host if dtype is None else host.astype(dtype, copy=False)

    def _to_host(self, where="np.asarray"):
        if self.deleted:
            raise RuntimeError(deleted_message(self, where))
        if _config.GUARD_ON:
            _guard_read(self, where)
        if self.device.is_numpy:
            return np.array(self._buf, copy=True)
        _devices.check_not_forked()     # (the read would wait forever)
        started = getattr(self, "_host_copy", None)
        if started is not None:         # (copy_to_host_async's copy: handed over once)
            self._host_copy = None
            host, event = started
            if event is not None:
                event.wait()
            return host
        x = self if self._contig else self._dense()
        host = np.empty(x.shape, x.dtype)
        if host.size:
            cl.enqueue_copy(x.device.queue, _bytes_view(host), x._buf,
                            src_offset=x.offset * x.dtype.itemsize, is_blocking=True)
        return host

    def _dense(self):
        """This array with a contiguous layout (a copy kernel when it is a strided view; an
        unbound one for an unbound view: jit's layout probes run no kernel)."""
        if self._contig:
            return self
        if self._buf is None and self._storage is None and not self.device.is_numpy:
            # a new array, as the copy would be: its own (empty) storage, so that a view
            # launcher built on probes sees that this view copies
            copied = Array.unbound(self.device, self.shape, self.dtype, self.weak_type)
            copied._storage = _UnboundCopy()
            return copied
        return _copy_primitive[0].bind(self)

    def block_until_ready(self):
        """Wait until the work that computes this array has finished; returns self."""
        self._check_live("block_until_ready")
        self.device.synchronize()
        return self

    def copy_to_host_async(self):
        """Start copying this array's values to host memory and return at once (as JAX's);
        the next np.asarray (or item, tolist) waits for that copy instead of making one.

        >>> loss.copy_to_host_async(); next_step(...); print(float(loss))
        """
        self._check_live("copy_to_host_async")
        if self.device.is_numpy or getattr(self, "_host_copy", None) is not None:
            return
        _devices.check_not_forked()
        x = self if self._contig else self._dense()
        host = np.empty(x.shape, x.dtype)
        event = None
        if host.size:
            event = cl.enqueue_copy(x.device.queue, _bytes_view(host), x._buf,
                                    src_offset=x.offset * x.dtype.itemsize, is_blocking=False)
            x.device.queue.flush()
        self._host_copy = (host, event)

    def tolist(self):
        return self._to_host("tolist").tolist()

    def item(self):
        if self.size != 1:
            raise ValueError(f"item: array of shape {self.shape} has {self.size} elements, not 1")
        return self._to_host("item").reshape(()).item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if not dtypes.is_int(self.dtype):
            raise TypeError(f"only integer arrays can be used as an index, got {self.dtype}")
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"the truth value of an array of shape {self.shape} is ambiguous; "
                             "use .any() or .all()")
        return bool(self.item())

    def __complex__(self):
        return complex(self.item())

    def __repr__(self):
        if self.deleted:
            return f"Array(<deleted>, shape={self.shape}, dtype={self.dtype})"
        body = np.array2string(self._to_host("repr"), separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={self.dtype}{weak})"

    def __str__(self):
        return str(self._to_host("str"))

    def __format__(self, spec):
        """f"{loss:.3f}": a 0-d array formats as its value (as NumPy's and JAX's)."""
        if not spec:
            return str(self)
        if self.ndim == 0:
            return format(self.item(), spec)
        raise TypeError(f"unsupported format string {spec!r} for an array of shape "
                        f"{self.shape} (only 0-d arrays take one)")

    def __hash__(self):
        raise TypeError("unhashable type: netcl Array (arrays are mutable-free but compared "
                        "elementwise; use a tuple of Python numbers as a static argument)")

    def __reduce__(self):  # pickling copies to host
        return (_rebuild, (self._to_host(), self.weak_type))


def _bytes_view(host):
    """`host` as PyOpenCL can copy it: bfloat16 and the 8-bit floats have no buffer-protocol
    format, so they travel as the uint16 / uint8 bit patterns they are."""
    if host.dtype == dtypes.bfloat16:
        return host.view(np.uint16)
    return host.view(np.uint8) if host.dtype in dtypes.FLOAT8 else host


def _guard_read(x, where):
    """The transfer guard on a read of x's values: device_put to another device is an
    explicit device-to-device copy; other reads go to the host, explicit inside
    config.explicit_transfers() (device_get), implicit elsewhere."""
    if where == "device_put":
        direction, explicit = "device_to_device", True
    else:
        direction, explicit = "device_to_host", False
    _config.check_transfer(direction, explicit, lambda: (
        f"{where}: {x.dtype}{list(x.shape)} from {x.device.name}"))


def _rebuild(host, weak_type):
    from .devices import default_device
    return Array.from_numpy(default_device(), host, weak_type)


def copy_to_host_async(tree):
    """Start copying every array of a pytree to host memory (Array.copy_to_host_async);
    returns the tree, as jax.copy_to_host_async.

    >>> netcl.copy_to_host_async(metrics)       # reads overlap the next step's work
    """
    from ..tree_util import tree_leaves
    for leaf in tree_leaves(tree):
        if isinstance(leaf, Array) and not leaf.deleted:
            leaf.copy_to_host_async()
    return tree


def block_until_ready(tree):
    """Wait for every array in a pytree; returns the tree (like jax.block_until_ready)."""
    from ..tree_util import tree_leaves
    seen = set()
    for leaf in tree_leaves(tree):
        if isinstance(leaf, Array) and id(leaf.device) not in seen:
            seen.add(id(leaf.device))
            leaf.device.synchronize()
    return tree


class _AnyArrayMeta(type):
    def __instancecheck__(cls, obj):
        from .sharded import DistributedArray
        from .tracing import Tracer
        return isinstance(obj, (Array, DistributedArray, Tracer))

    def __subclasscheck__(cls, sub):
        from .sharded import DistributedArray
        from .tracing import Tracer
        return issubclass(sub, (Array, DistributedArray, Tracer))


class AnyArray(metaclass=_AnyArrayMeta):
    """What `netcl.Array` (and `netcl.numpy.ndarray`) is to isinstance: an array, a sharded
    array, or a traced value inside a transform, as `jax.Array` is to JAX's.

    >>> netcl.jit(lambda x: isinstance(x, netcl.Array))    # True while tracing too
    """
