"""netcl.data: DataLoader (coverage, shuffling, prefetch thread), IDX/MNIST readers, digits."""
import gc
import gzip
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import netcl
from netcl import data
from netcl.core.devices import numpy_device
from netcl.data import DataLoader, load_mnist, read_idx


def _ids(loader):
    """The example ids an epoch yields (leaf 'i' holds each example's id)."""
    out = []
    for b in loader:
        assert isinstance(b["i"], netcl.Array)
        ids = np.asarray(b["i"])
        np.testing.assert_array_equal(np.asarray(b["x"])[:, 0], ids * 10)
        out.append(ids)
    return out


def _arrays(n):
    return {"i": np.arange(n, dtype=np.int32),
            "x": np.arange(n, dtype=np.float32)[:, None] * np.float32(10) + np.zeros((n, 3),
                                                                                      np.float32)}


@pytest.mark.parametrize("n, bs, drop_last, prefetch", [
    (10, 3, False, 2), (10, 3, True, 2), (9, 3, False, 1), (9, 3, True, 0), (2, 5, False, 2),
    (2, 5, True, 2), (0, 4, False, 2), (7, 1, False, 3)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_batches_cover_data_once_per_epoch(n, bs, drop_last, prefetch, shuffle):
    loader = DataLoader(_arrays(n), bs, shuffle=shuffle, drop_last=drop_last, prefetch=prefetch)
    expect_batches = n // bs if drop_last else -(-n // bs)
    assert len(loader) == expect_batches
    for _ in range(2):
        batches = _ids(loader)
        assert len(batches) == expect_batches
        sizes = [len(b) for b in batches]
        assert all(s == bs for s in sizes[:-1])
        if batches:
            assert sizes[-1] == (bs if drop_last or n % bs == 0 else n % bs)
        got = np.concatenate(batches) if batches else np.zeros(0, np.int32)
        assert len(np.unique(got)) == len(got) == (n // bs * bs if drop_last else n)
        if not shuffle:
            np.testing.assert_array_equal(got, np.arange(len(got)))


def test_shuffle_is_deterministic_per_seed_and_changes_per_epoch():
    a = DataLoader(_arrays(50), 7, shuffle=True, seed=3)
    b = DataLoader(_arrays(50), 7, shuffle=True, seed=3)
    c = DataLoader(_arrays(50), 7, shuffle=True, seed=4)
    ea = [np.concatenate(_ids(a)) for _ in range(3)]
    eb = [np.concatenate(_ids(b)) for _ in range(3)]
    for x, y in zip(ea, eb):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(ea[0], ea[1]) and not np.array_equal(ea[1], ea[2])
    assert not np.array_equal(ea[0], np.arange(50))
    assert not np.array_equal(ea[0], np.concatenate(_ids(c)))
    assert a.epoch == 3
    a.set_epoch(1)
    np.testing.assert_array_equal(np.concatenate(_ids(a)), ea[1])
    np.testing.assert_array_equal(a.permutation(2), ea[2])


def test_pytree_structure_dtypes_and_device():
    x = np.random.default_rng(0).random((6, 2, 2))  # float64
    y = np.arange(6, dtype=np.int64)
    u = np.arange(6, dtype=np.uint8)
    loader = DataLoader((x, {"y": y, "u": u}), 4)
    xb, rest = next(iter(loader))
    assert isinstance(rest, dict) and set(rest) == {"y", "u"}
    assert xb.shape == (4, 2, 2) and xb.dtype == (np.float64 if netcl.default_device()
                                                  .capabilities.fp64 else np.float32)
    assert rest["y"].dtype == netcl.core.dtypes.default_int_dtype()   # (int64 with x64)
    assert rest["u"].dtype == np.uint32
    np.testing.assert_allclose(np.asarray(xb), x[:4])
    np.testing.assert_array_equal(np.asarray(rest["y"]), y[:4])
    # the batches are ordinary arrays: compute with them
    np.testing.assert_allclose(np.asarray(netcl.numpy.sum(xb * 2.0)), x[:4].sum() * 2)
    dev = numpy_device()
    xb, rest = next(iter(DataLoader((x, {"y": y, "u": u}), 4, device=dev)))
    assert xb.device is dev and rest["y"].device is dev
    with netcl.default_device(dev):  # device=None: the default when iteration starts
        it = iter(DataLoader(x, 4))
    assert next(it).device is dev
    it.close()


class CountingLeaf:
    """An array-like that counts the batches read from it (and can fail on one)."""

    def __init__(self, a, fail_at=None):
        self.a, self.fail_at, self.reads = a, fail_at, 0
        self.shape, self.dtype = a.shape, a.dtype

    def __getitem__(self, idx):
        self.reads += 1
        if self.reads == self.fail_at:
            raise KeyError(f"boom on read {self.reads}")
        return self.a[idx]


def _wait_for(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while not cond() and time.monotonic() < end:
        time.sleep(0.01)
    return cond()


@pytest.mark.parametrize("shuffle", [False, True])
def test_prefetch_runs_ahead_and_is_bounded(shuffle):
    leaf = CountingLeaf(np.arange(100, dtype=np.float32))
    it = iter(DataLoader(leaf, 5, shuffle=shuffle, prefetch=3))
    assert _wait_for(lambda: leaf.reads >= 3)  # batches made before anyone asked
    first = next(it)
    # one consumed, 3 queued, at most one more waiting to be queued
    assert _wait_for(lambda: leaf.reads >= 4)
    time.sleep(0.1)
    assert 4 <= leaf.reads <= 5
    rest = list(it)
    ids = np.concatenate([np.asarray(first)] + [np.asarray(b) for b in rest])
    np.testing.assert_array_equal(np.sort(ids), np.arange(100))
    assert leaf.reads == 20
    assert it._thread is None


@pytest.mark.parametrize("prefetch", [0, 2])
def test_exception_in_producer_reaches_consumer(prefetch):
    leaf = CountingLeaf(np.arange(20, dtype=np.float32), fail_at=3)
    it = iter(DataLoader({"x": leaf}, 4, prefetch=prefetch))
    got = [next(it), next(it)]
    np.testing.assert_array_equal(np.asarray(got[1]["x"]), [4, 5, 6, 7])
    with pytest.raises(KeyError, match="boom on read 3"):
        next(it)
    with pytest.raises(StopIteration):
        next(it)


def test_thread_stops_on_close_break_and_garbage_collection():
    arrays = np.zeros((1000, 4), np.float32)
    loader = DataLoader(arrays, 1, prefetch=2)
    it = iter(loader)
    next(it)
    t = it._thread
    assert t.is_alive() and t.daemon
    it.close()
    assert not t.is_alive()
    with pytest.raises(StopIteration):
        next(it)

    for _ in loader:  # break out of a for loop: the iterator is dropped
        break
    gc.collect()
    assert _wait_for(lambda: not any(th.name == "netcl-DataLoader-prefetch" and th.is_alive()
                                     for th in threading.enumerate()))

    it = iter(loader)
    t = it._thread
    del it  # abandoned without reading anything
    gc.collect()
    t.join(5.0)
    assert not t.is_alive()


def test_abandoned_loader_does_not_hang_or_crash_interpreter_exit():
    """Exit while the thread is busy uploading 16 MB batches (without the atexit hook that
    stops it, PyOpenCL aborts the process during finalisation)."""
    code = ("import numpy as np\n"
            "from netcl.data import DataLoader\n"
            "it = iter(DataLoader(np.zeros((256, 250000), np.float32), 16, prefetch=2))\n"
            "next(it)\n"
            "keep = it  # still referenced at exit\n"
            "print('done')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "done" in r.stdout, r.stderr


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"leading dimension.*\['y'\]: \(9,\)"):
        DataLoader({"x": np.zeros((10, 2)), "y": np.zeros(9)}, 2)
    for bs in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="batch_size"):
            DataLoader(np.zeros(4), bs)
    with pytest.raises(ValueError, match="prefetch"):
        DataLoader(np.zeros(4), 2, prefetch=-1)
    with pytest.raises(ValueError, match=r"0-d"):
        DataLoader((np.zeros(3), np.float32(1)), 2)
    with pytest.raises(ValueError, match="no leaves"):
        DataLoader({}, 2)
    with pytest.raises(TypeError, match=r"\[1\].*not supported"):
        DataLoader((np.zeros(3), np.zeros(3, np.clongdouble)), 2)
    with pytest.raises(TypeError, match="device"):
        DataLoader(np.zeros(3), 2, device="cpu")
    with pytest.raises(TypeError, match="seed"):
        DataLoader(np.zeros(3), 2, shuffle=True, seed=None)
    dev = netcl.default_device()
    with pytest.raises(ValueError, match="device or devices, not both"):
        DataLoader(np.zeros(4), 2, device=dev, devices=[dev])
    with pytest.raises(TypeError, match="devices must be a non-empty list"):
        DataLoader(np.zeros(4), 2, devices=[])
    with pytest.raises(ValueError, match="batch_size=3 does not divide over 2 devices"):
        DataLoader(np.zeros(4), 3, devices=[dev, dev])
    with pytest.raises(ValueError, match="final batch of 1 examples .* drop_last=True"):
        DataLoader(np.zeros(5), 2, devices=[dev, dev])
    assert len(DataLoader(np.zeros(5), 2, devices=[dev, dev], drop_last=True)) == 2


@pytest.mark.parametrize("prefetch", [0, 2])
def test_sharded_batches_for_pmap(prefetch):
    """devices=: every leaf a ShardedArray (devices, batch / devices, ...), in order."""
    dev = netcl.default_device()
    loader = DataLoader(_arrays(12), 6, devices=[dev, dev], prefetch=prefetch, shuffle=True)
    seen = []
    for b in loader:
        assert isinstance(b["i"], netcl.ShardedArray) and b["i"].shape == (2, 3)
        assert b["x"].shape == (2, 3, 3) and b["x"].sharding.devices == (dev, dev)
        np.testing.assert_array_equal(np.asarray(b["x"])[..., 0], np.asarray(b["i"]) * 10)
        seen.append(np.asarray(b["i"]).reshape(-1))
    order = loader.permutation(0)
    np.testing.assert_array_equal(np.concatenate(seen), order)


# ---- IDX ----------------------------------------------------------------------------------

_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D,
          np.float64: 0x0E}


def write_idx(path, arr, gz=False):
    arr = np.asarray(arr)
    head = bytes([0, 0, _CODES[arr.dtype.type], arr.ndim]) + np.asarray(arr.shape, ">u4").tobytes()
    raw = head + arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with open(path, "wb") as f:
        f.write(gzip.compress(raw) if gz else raw)
    return raw


@pytest.mark.parametrize("dtype", list(_CODES))
@pytest.mark.parametrize("gz", [False, True])
def test_read_idx_roundtrip(tmp_path, dtype, gz):
    rng = np.random.default_rng(0)
    for shape in [(5,), (3, 4, 2), (0, 2), ()]:
        a = (rng.normal(size=shape) * 50).astype(dtype)
        p = tmp_path / ("f.idx.gz" if gz else "f.idx")
        write_idx(p, a, gz)
        got = read_idx(p)
        assert got.dtype == np.dtype(dtype) and got.dtype.isnative and got.shape == shape
        np.testing.assert_array_equal(got, a)
        assert got.flags.writeable


def test_read_idx_errors(tmp_path):
    p = tmp_path / "bad-idx"
    raw = write_idx(p, np.arange(12, dtype=np.int32).reshape(3, 4))
    for bad, what in [(b"\x00\x00\x07\x01" + raw[4:], "bad magic"),
                      (b"\x01" + raw[1:], "bad magic"), (b"PK\x03\x04" + raw[4:], "bad magic"),
                      (raw[:2], "too short"), (raw[:10], "truncated header"),
                      (raw[:-1], "truncated"), (raw + b"\x00", "trailing")]:
        p.write_bytes(bad)
        with pytest.raises(ValueError, match=rf"read_idx: {p}: .*{what}"):
            read_idx(p)
    g = tmp_path / "trunc.gz"
    g.write_bytes(gzip.compress(raw)[:-6])
    with pytest.raises(ValueError, match=rf"{g}.*gzip"):
        read_idx(g)
    g.write_bytes(gzip.compress(raw[:-4]))
    with pytest.raises(ValueError, match=rf"{g}.*truncated"):
        read_idx(g)


def _fake_mnist(d, n_train=6, n_test=4, gz=(True, False, True, False)):
    rng = np.random.default_rng(1)
    parts = [rng.integers(0, 256, (n_train, 28, 28)).astype(np.uint8),
             rng.integers(0, 10, n_train).astype(np.uint8),
             rng.integers(0, 256, (n_test, 28, 28)).astype(np.uint8),
             rng.integers(0, 10, n_test).astype(np.uint8)]
    names = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
             "t10k-labels-idx1-ubyte"]
    for name, a, z in zip(names, parts, gz):
        write_idx(os.path.join(d, name + (".gz" if z else "")), a, z)
    return parts


def test_load_mnist(tmp_path):
    xi, yi, xti, yti = _fake_mnist(tmp_path)
    (x, y), (xt, yt) = load_mnist(tmp_path)
    assert x.shape == (6, 28, 28) and x.dtype == np.float32 and y.dtype == np.int32
    assert xt.shape == (4, 28, 28) and yt.shape == (4,)
    assert 0.0 <= x.min() and x.max() <= 1.0
    np.testing.assert_allclose(x, xi / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(yt, yti)
    (xf, _), (xtf, _) = load_mnist(str(tmp_path), flatten=True)
    assert xf.shape == (6, 784) and xtf.shape == (4, 784)


def test_load_mnist_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_mnist(tmp_path)
    _fake_mnist(tmp_path)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte", np.zeros(5, np.uint8))
    with pytest.raises(ValueError, match="t10k-images.*4 images.*t10k-labels.*5 labels"):
        load_mnist(tmp_path)
    (tmp_path / "train-images-idx3-ubyte.gz").write_bytes(b"not gzip, not idx")
    with pytest.raises(ValueError, match=r"train-images-idx3-ubyte\.gz: bad magic"):
        load_mnist(tmp_path)


# ---- scikit-learn digits ---------------------------------------------------------------------

def test_load_digits():
    pytest.importorskip("sklearn")
    (x, y), (xt, yt) = data.load_digits()
    assert x.shape[1:] == (64,) and xt.shape[1:] == (64,) and len(x) + len(xt) == 1797
    assert x.dtype == np.float32 and y.dtype == np.int32
    assert 0.0 <= x.min() and x.max() == 1.0 and xt.max() <= 1.0
    assert abs(len(xt) / 1797 - 0.2) < 0.01
    assert set(np.unique(y)) == set(range(10)) and set(np.unique(yt)) == set(range(10))
    counts = np.bincount(yt, minlength=10)  # stratified: about 20% of each class
    assert counts.min() >= 34 and counts.max() <= 38
    (x2, y2), (xt2, yt2) = data.load_digits()
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(xt, xt2)
    (x3, y3), _ = data.load_digits(seed=1)
    assert not np.array_equal(y, y3)
    (x4, _), (xt4, _) = data.load_digits(test_fraction=0.5, flatten=False)
    assert x4.shape[1:] == (8, 8) and abs(len(xt4) - 1797 / 2) < 6
    # real digits: a nearest-centroid classifier is far above chance
    cent = np.stack([x[y == c].mean(0) for c in range(10)])
    pred = np.argmin(((xt[:, None, :] - cent[None]) ** 2).sum(-1), axis=1)
    assert (pred == yt).mean() > 0.8
    with pytest.raises(ValueError, match="test_fraction"):
        data.load_digits(test_fraction=1.0)


def test_load_digits_without_sklearn(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r"pip install 'netcl\[examples\]'"):
        data.load_digits()
