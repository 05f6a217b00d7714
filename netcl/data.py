"""Data loading: a prefetching batch loader, MNIST's IDX files, and scikit-learn's digits.

    >>> (x, y), (xt, yt) = netcl.data.load_digits()          # real 8x8 digits, no download
    >>> loader = netcl.data.DataLoader((x, y), batch_size=128, shuffle=True, seed=0)
    >>> for epoch in range(10):
    ...     for xb, yb in loader:                             # netcl Arrays on the device
    ...         params, state, loss = step(params, state, xb, yb)

``DataLoader`` slices the next batches on the host and copies them to the device in a
background thread while the training step runs; exceptions there are raised in the consumer,
and the thread ends when the iterator is exhausted, closed or garbage collected (it is a
daemon thread, and an atexit hook stops it before the interpreter finalises, so it never
keeps the process alive or crashes it at exit).
"""
import atexit
import gzip
import math
import os
import queue
import threading

import numpy as np

from . import tree_util
from .core import dtypes as _dtypes
from .core.array import Array, _bytes_view
from .core.devices import Device, default_device
from .core.shapes import contiguous_strides

__all__ = ["DataLoader", "read_idx", "load_mnist", "load_digits"]


# ---- the loader ---------------------------------------------------------------------------

def _leaf_dtype(host_dtype, device):
    """The dtype a host leaf gets on ``device`` (as ``netcl.device_put`` converts)."""
    dt = _dtypes.canonicalize_data(host_dtype, where="DataLoader")
    if dt == _dtypes.float64 and not device.capabilities.fp64:
        dt = _dtypes.float32
    return dt


_transfer_queues = {}
_transfer_lock = threading.Lock()


def _transfer_queue(device):
    """A command queue of the loader's own per device, so uploads do not wait behind the
    compute queued on ``device.queue``."""
    with _transfer_lock:
        q = _transfer_queues.get(device)
        if q is None:
            import pyopencl as cl
            q = _transfer_queues[device] = cl.CommandQueue(device.context, device.cl_device)
        return q


def _upload(host, device):
    """Copy the C-contiguous host array to a new Array on ``device`` (blocking; safe to call
    from the prefetch thread: it uses a fresh buffer, not the device's pool, and the loader's
    own queue, so it never races with the consumer's allocations or kernels)."""
    if device.is_numpy:
        return Array.from_numpy(device, host)
    import pyopencl as cl
    shape = tuple(host.shape)
    buf = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, max(host.nbytes, 64))
    if host.size:
        cl.enqueue_copy(_transfer_queue(device), buf, _bytes_view(host), is_blocking=True)
    return Array(device, buf, None, shape, host.dtype, contiguous_strides(shape), 0, False)


class _Plan:
    """Everything the producer needs; deliberately holds no reference to the iterator, so
    an abandoned iterator is garbage collected and its thread told to stop."""

    def __init__(self, leaves, treedef, order, batch_size, num_batches, device, devices=None,
                 part=None):
        self.leaves, self.treedef, self.order = leaves, treedef, order
        self.batch_size, self.num_batches, self.device = batch_size, num_batches, device
        self.devices = devices      # shard each batch over these (leading axis), or None
        self.part = part            # (index, count): take this part of each batch, or None
        self.n = leaves[0].shape[0]

    def batch(self, b):
        start = b * self.batch_size
        stop = min(start + self.batch_size, self.n)
        if self.part is not None:
            index, count = self.part
            size = (stop - start) // count
            start, stop = start + index * size, start + (index + 1) * size
        out = []
        for leaf in self.leaves:
            if self.order is None:
                host = leaf[start:stop]
            elif isinstance(leaf, np.ndarray):
                host = np.take(leaf, self.order[start:stop], axis=0)
            else:
                host = leaf[self.order[start:stop]]
            host = np.asarray(host)
            host = np.asarray(host.astype(_leaf_dtype(host.dtype, self.device), copy=False),
                              order="C")
            if self.devices is None:
                out.append(_upload(host, self.device))
            else:
                from .core.sharded import ShardedArray
                shards = host.reshape((len(self.devices), -1) + host.shape[1:])
                out.append(ShardedArray([_upload(np.ascontiguousarray(s), d)
                                         for s, d in zip(shards, self.devices)]))
        return self.treedef.unflatten(out)


_END = object()


def _put(q, item, stop):
    while not stop.is_set():
        try:
            q.put(item, timeout=0.05)
            return True
        except queue.Full:
            pass
    return False


_live = {}  # running prefetch thread -> its stop event


@atexit.register
def _stop_all():
    """Stop every prefetch thread before the interpreter finalises: a daemon thread frozen
    inside an OpenCL call during finalisation aborts the process ("terminate called...")."""
    live = list(_live.items())
    for _, stop in live:
        stop.set()
    for t, _ in live:
        t.join(timeout=10.0)


def _produce(plan, q, stop):
    try:
        for b in range(plan.num_batches):
            if stop.is_set():
                return
            if not _put(q, (True, plan.batch(b)), stop):
                return
        _put(q, (True, _END), stop)
    except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there
        _put(q, (False, e), stop)
    finally:
        _live.pop(threading.current_thread(), None)


class _Iterator:
    """One epoch of a DataLoader. ``close()`` (or dropping it) stops the prefetch thread."""

    def __init__(self, plan, prefetch):
        self._plan, self._next, self._done = plan, 0, plan.num_batches == 0
        self._thread = None
        if prefetch and not self._done:
            self._queue = queue.Queue(maxsize=prefetch)
            self._stop = threading.Event()
            self._thread = threading.Thread(target=_produce, args=(plan, self._queue, self._stop),
                                            name="netcl-DataLoader-prefetch", daemon=True)
            _live[self._thread] = self._stop
            self._thread.start()

    def __iter__(self):
        return self

    def __len__(self):
        return self._plan.num_batches - self._next

    def __next__(self):
        if self._done:
            raise StopIteration
        if self._thread is None:
            try:
                batch = self._plan.batch(self._next)
            except BaseException:
                self._done = True  # as with the thread: an error ends the epoch
                raise
        else:
            while True:
                try:
                    ok, batch = self._queue.get(timeout=0.5)
                    break
                except queue.Empty:
                    if not self._thread.is_alive() and self._queue.empty():
                        self._done = True
                        raise RuntimeError("DataLoader: the prefetch thread ended "
                                           "unexpectedly") from None
            if not ok:
                self.close()
                raise batch
            if batch is _END:
                self.close()
                raise StopIteration
        self._next += 1
        if self._next == self._plan.num_batches and self._thread is None:
            self._done = True
        return batch

    def close(self):
        """Stop the prefetch thread and drop the batches it had prepared."""
        self._done = True
        t = self._thread
        if t is None:
            return
        self._thread = None
        self._stop.set()
        try:
            while True:
                self._queue.get_nowait()
        except queue.Empty:
            pass
        if t is not threading.current_thread():
            t.join(timeout=5.0)

    def __del__(self):
        try:
            t = self._thread
            if t is not None:
                self._thread = None
                self._stop.set()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


class DataLoader:
    """Batches of a pytree of arrays, on the device, prefetched in a background thread.

    ``arrays``: a pytree (tuple, dict, ...) of NumPy arrays (or array-likes with ``shape``,
    ``dtype`` and ``__getitem__``, e.g. ``np.memmap``) sharing their leading dimension.
    Each iteration is one epoch and yields batches as the same pytree of netcl Arrays on
    ``device`` (default: the default device when iteration starts), with dtypes converted as
    ``netcl.device_put`` does (int64 -> int32 without x64, uint8 -> uint32, ...).
    ``shuffle``: a new permutation per epoch, deterministic given ``seed`` and the epoch
    number (``loader.epoch``, incremented by each ``iter(loader)``; ``set_epoch`` sets it).
    ``drop_last``: skip the final short batch. ``prefetch``: how many batches the thread
    prepares ahead (0: no thread, batches are made on demand).
    ``devices``: a list of devices (instead of ``device``) to shard each batch over, for
    ``netcl.pmap``: every leaf comes as a ShardedArray of shape ``(len(devices),
    batch_size // len(devices), ...)``, shard i uploaded to ``devices[i]``; batch_size (and the
    final short batch, unless ``drop_last``) must divide by the number of devices.
    ``split_over_processes``: in a job of several processes (``netcl.distributed``), each
    global batch (same order everywhere, given ``seed``) is cut into ``process_count()``
    equal parts and this process gets part ``process_index()`` (then sharded over
    ``devices``, if given); batch_size is the global batch.

    >>> loader = DataLoader({"x": x, "y": y}, batch_size=32, shuffle=True, seed=1)
    >>> len(loader), next(iter(loader))["x"].shape
    >>> sharded = DataLoader((x, y), 256, drop_last=True, devices=netcl.local_devices())
    """

    def __init__(self, arrays, batch_size, shuffle=False, seed=0, drop_last=False, prefetch=2,
                 device=None, devices=None, split_over_processes=False):
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size <= 0:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if isinstance(prefetch, bool) or not isinstance(prefetch, (int, np.integer)) \
                or prefetch < 0:
            raise ValueError(f"DataLoader: prefetch must be an int >= 0, got {prefetch!r}")
        if device is not None and not isinstance(device, Device):
            raise TypeError(f"DataLoader: device must be a netcl Device, got "
                            f"{type(device).__name__}")
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"DataLoader: seed must be an int, got {seed!r}")
        if devices is not None:
            if device is not None:
                raise ValueError("DataLoader: give device or devices, not both")
            devices = list(devices) if isinstance(devices, (list, tuple)) else devices
            if not isinstance(devices, list) or not devices or \
                    not all(isinstance(d, Device) for d in devices):
                raise TypeError(f"DataLoader: devices must be a non-empty list of netcl "
                                f"Devices, got {devices!r}")
            if batch_size % len(devices):
                raise ValueError(f"DataLoader: batch_size={batch_size} does not divide over "
                                 f"{len(devices)} devices")
        pairs, treedef = tree_util.tree_flatten_with_path(arrays)
        if not pairs:
            raise ValueError(f"DataLoader: arrays has no leaves (structure {treedef})")
        leaves = []
        for path, leaf in pairs:
            where = tree_util.keystr(path) or "arrays"
            if isinstance(leaf, Array):
                leaf = np.asarray(leaf)
            elif not (isinstance(leaf, np.ndarray) or (hasattr(leaf, "shape") and
                                                        hasattr(leaf, "dtype") and
                                                        hasattr(leaf, "__getitem__"))):
                leaf = np.asarray(leaf)
            if len(leaf.shape) == 0:
                raise ValueError(f"DataLoader: the leaf at {where} is 0-d; every leaf needs a "
                                 "leading (example) dimension")
            try:
                _dtypes.canonicalize_data(np.dtype(leaf.dtype), where="DataLoader")
            except TypeError as e:
                raise TypeError(f"DataLoader: the leaf at {where}: {e}") from None
            leaves.append(leaf)
        sizes = [leaf.shape[0] for leaf in leaves]
        if len(set(sizes)) != 1:
            desc = ", ".join(f"{tree_util.keystr(p) or 'arrays'}: {tuple(leaf.shape)}"
                             for (p, _), leaf in zip(pairs, leaves))
            raise ValueError(f"DataLoader: the arrays must share their leading dimension; "
                             f"got {desc}")
        self._leaves, self._treedef = leaves, treedef
        self.num_examples = int(sizes[0])
        self.batch_size, self.shuffle, self.seed = int(batch_size), bool(shuffle), seed
        self.drop_last, self.prefetch, self.device = bool(drop_last), int(prefetch), device
        self.devices = devices
        self.epoch = 0
        self.part = None        # (index, count): this process's part of every batch
        ways = len(devices) if devices is not None else 1
        if split_over_processes:
            from .distributed import process_count, process_index
            self.part = (process_index(), process_count())
            ways *= self.part[1]
            if self.batch_size % ways:
                raise ValueError(f"DataLoader: batch_size={self.batch_size} does not divide "
                                 f"over {self.part[1]} processes x "
                                 f"{len(devices) if devices else 1} devices")
        last = self.num_examples % self.batch_size
        if not self.drop_last and last % ways:
            raise ValueError(f"DataLoader: the final batch of {last} examples ({self.num_examples}"
                             f" examples, batch_size={self.batch_size}) does not divide over "
                             f"{ways} devices and processes; pass drop_last=True")

    def __len__(self):
        n, b = self.num_examples, self.batch_size
        return n // b if self.drop_last else -(-n // b)

    def set_epoch(self, epoch):
        """Make the next ``iter(loader)`` epoch number ``epoch`` (its shuffle order)."""
        self.epoch = int(epoch)

    def permutation(self, epoch):
        """The example order of ``epoch`` (``arange`` when not shuffling)."""
        if not self.shuffle:
            return np.arange(self.num_examples)
        return np.random.default_rng([int(self.seed), int(epoch)]).permutation(self.num_examples)

    def __iter__(self):
        device = self.devices[0] if self.devices else (self.device or default_device())
        order = self.permutation(self.epoch) if self.shuffle else None
        self.epoch += 1
        plan = _Plan(self._leaves, self._treedef, order, self.batch_size, len(self), device,
                     self.devices, self.part)
        return _Iterator(plan, self.prefetch)

    def __repr__(self):
        return (f"DataLoader({self.num_examples} examples, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last}, "
                f"structure={self._treedef})")


# ---- IDX (MNIST) --------------------------------------------------------------------------

_IDX_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
              0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def _read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, ValueError) as e:
            raise ValueError(f"read_idx: {path}: corrupted or truncated gzip data "
                             f"({type(e).__name__}: {e})") from None
    return data


def read_idx(path):
    """Read an IDX file (the MNIST format; gzip-compressed files too, by content) into a
    NumPy array of native byte order: uint8, int8, int16, int32, float32 or float64.

    Bad magic, a truncated file or trailing bytes raise ValueError naming the file.

    >>> read_idx("train-labels-idx1-ubyte.gz").shape      # (60000,)
    """
    path = os.fspath(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise ValueError(f"read_idx: {path}: file too short for an IDX header "
                         f"({len(data)} bytes)")
    if data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise ValueError(f"read_idx: {path}: bad magic number {data[:4].hex()} (expected "
                         f"00 00 <type in {sorted(hex(t) for t in _IDX_TYPES)}> <ndim>); not an "
                         "IDX file")
    dtype, ndim = _IDX_TYPES[data[2]], data[3]
    head = 4 + 4 * ndim
    if len(data) < head:
        raise ValueError(f"read_idx: {path}: truncated header (ndim={ndim} needs {head} bytes, "
                         f"file has {len(data)})")
    shape = tuple(int(d) for d in np.frombuffer(data, ">u4", count=ndim, offset=4))
    count = math.prod(shape)
    need = head + count * dtype.itemsize
    if len(data) < need:
        raise ValueError(f"read_idx: {path}: truncated: shape {shape} of {dtype.newbyteorder('=')}"
                         f" needs {need} bytes, file has {len(data)}")
    if len(data) > need:
        raise ValueError(f"read_idx: {path}: {len(data) - need} unexpected trailing bytes after "
                         f"shape {shape} of {dtype.newbyteorder('=')}")
    arr = np.frombuffer(data, dtype, count=count, offset=head).reshape(shape)
    return arr.astype(dtype.newbyteorder("="))


_MNIST_FILES = {"train_x": "train-images-idx3-ubyte", "train_y": "train-labels-idx1-ubyte",
                "test_x": "t10k-images-idx3-ubyte", "test_y": "t10k-labels-idx1-ubyte"}


def _find(directory, stem):
    dotted = stem.replace("-idx", ".idx")  # some mirrors name them train-images.idx3-ubyte
    tried = [os.path.join(directory, s + ext) for s in (stem, dotted) for ext in ("", ".gz")]
    for t in tried:
        if os.path.isfile(t):
            return t
    raise FileNotFoundError(f"load_mnist: none of {tried} exists")


def load_mnist(path, flatten=False):
    """Read MNIST (or Fashion-MNIST) from the directory ``path`` holding the four standard
    files ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
    ``t10k-labels-idx1-ubyte`` (each optionally ``.gz``).

    Returns ``((x_train, y_train), (x_test, y_test))``: images float32 in [0, 1] of shape
    (N, 28, 28), or (N, 784) with ``flatten=True``; labels int32.
    """
    path = os.fspath(path)
    files = {k: _find(path, v) for k, v in _MNIST_FILES.items()}
    out = []
    for split in ("train", "test"):
        fx, fy = files[split + "_x"], files[split + "_y"]
        x, y = read_idx(fx), read_idx(fy)
        if x.ndim != 3 or x.dtype != np.uint8:
            raise ValueError(f"load_mnist: {fx}: expected a 3-d ubyte image file, got "
                             f"{x.ndim}-d {x.dtype}")
        if y.ndim != 1 or _dtypes.kind(y.dtype) not in "iu":
            raise ValueError(f"load_mnist: {fy}: expected a 1-d integer label file, got "
                             f"{y.ndim}-d {y.dtype}")
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"load_mnist: {fx} has {x.shape[0]} images but {fy} has "
                             f"{y.shape[0]} labels")
        x = x.astype(np.float32) / np.float32(255.0)
        if flatten:
            x = x.reshape(x.shape[0], -1)
        out.append((x, y.astype(np.int32)))
    return tuple(out)


# ---- scikit-learn's digits ----------------------------------------------------------------

def load_digits(test_fraction=0.2, seed=0, flatten=True):
    """scikit-learn's bundled handwritten digits (1797 8x8 images, 10 classes; no download),
    split per class (stratified) with ``seed``.

    Returns ``((x_train, y_train), (x_test, y_test))``: images float32 in [0, 1] of shape
    (N, 64), or (N, 8, 8) with ``flatten=False``; labels int32. Needs scikit-learn
    (``pip install 'netcl[examples]'``).
    """
    if not (isinstance(test_fraction, (int, float)) and 0 < test_fraction < 1):
        raise ValueError(f"load_digits: test_fraction must be in (0, 1), got {test_fraction!r}")
    try:
        from sklearn.datasets import load_digits as _sk_load_digits
    except ImportError as e:
        raise ImportError("load_digits needs scikit-learn: pip install 'netcl[examples]' "
                          f"(or pip install scikit-learn); import failed with: {e}") from e
    ds = _sk_load_digits()
    x = np.asarray(ds.data, np.float32) / np.float32(16.0)
    y = np.asarray(ds.target, np.int32)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = int(round(test_fraction * len(idx)))
        test.append(idx[:k])
        train.append(idx[k:])
    train = rng.permutation(np.concatenate(train))
    test = rng.permutation(np.concatenate(test))
    if not flatten:
        x = x.reshape(-1, 8, 8)
    return (x[train], y[train]), (x[test], y[test])
