"""GEMM tiles chosen by measurement, per device and shape class.

gemm_tiers.py's tables were tuned on a few devices; another CPU or GPU gets whatever won
elsewhere. Here a product's *shape class* (dtype, which operands are stored transposed,
and M, N, K each rounded up to a power of two) is timed on the device with every tile
configuration of its table that fits (`gemm_tiers.candidates`), built as one program,
and the fastest is recorded in a JSON file keyed by device and driver. Every candidate
adds each output's products in the same order (K ascending, one accumulator per output),
so a tuned kernel computes what the table's kernel computes.

`netcl.config.autotune` (also NETCL_AUTOTUNE) says what products do:

- "cached" (the default): a shape class with a recorded winner takes it, others the table's;
- "on" (NETCL_AUTOTUNE=1): classes without a record are timed at their first product
  (within TIME_BUDGET_S each, about) and recorded;
- "off" (NETCL_AUTOTUNE=0): the tables only.

`netcl.tune(fun, *args)` runs `fun` once with tuning on. The file is
$NETCL_TUNING_CACHE, else $XDG_CACHE_HOME/netcl/gemm_tuning.json (~/.cache/...).
"""
from __future__ import annotations

import dataclasses
import json
import os
import statistics
import tempfile
import threading
import time
import warnings

import numpy as np
import pyopencl as cl

from ..core import kernels
from ..core.config import config
from . import gemm, gemm_tiers

# At most this long timing one class (the candidates timed by then are compared); each
# candidate runs once untimed, then at least _RUNS times and until _RUN_TIME_S has passed
# (at most 4 * _RUNS), and its median counts. The table's configuration stays unless
# another is faster by more than _MARGIN: a shared machine's noise must not flip it.
TIME_BUDGET_S = 3.0
_RUNS = 3
_RUN_TIME_S = 0.05
_MARGIN = 0.03

_lock = threading.Lock()
_records = None          # device key -> {class key: GemmConfig fields}, as in the file


@dataclasses.dataclass(frozen=True)
class ShapeClass:
    """Products that share a tuned configuration."""
    dtype: str           # "float" or "double"
    trans_a: bool
    trans_b: bool
    m: int               # M, N, K rounded up to powers of two
    n: int
    k: int

    @classmethod
    def of(cls, dtype, trans_a, trans_b, M, N, K):
        def up(v):
            return 1 << max(int(v) - 1, 0).bit_length()
        return cls(dtype, bool(trans_a), bool(trans_b), up(M), up(N), up(K))

    def key(self):
        return (f"{self.dtype} {'T' if self.trans_a else 'N'}{'T' if self.trans_b else 'N'} "
                f"{self.m}x{self.n}x{self.k}")


def cache_path():
    """The file the winners are kept in (see the module docstring)."""
    explicit = os.environ.get("NETCL_TUNING_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "netcl", "gemm_tuning.json")


def device_key(device):
    """What a record is valid for: platform, device, driver version and tier family."""
    d = device.cl_device
    return (f"{d.platform.name} | {d.name} | driver {d.driver_version} | "
            f"{device.target.gemm_tiers}")


def _load():
    global _records
    if _records is None:
        try:
            with open(cache_path()) as f:
                data = json.load(f)
            _records = data if isinstance(data, dict) else {}
        except FileNotFoundError:
            _records = {}
        except (OSError, ValueError) as e:
            warnings.warn(f"netcl: ignoring the GEMM tuning cache {cache_path()} ({e})",
                          RuntimeWarning, stacklevel=4)
            _records = {}
    return _records


def forget():
    """Drop what was read from the file (it is read again at the next lookup)."""
    global _records
    with _lock:
        _records = None


def _save(records):
    path = cache_path()
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(records, f, indent=1, sort_keys=True)
        os.replace(tmp, path)       # (readers see the old file or the new one, never half)
    except OSError as e:
        warnings.warn(f"netcl: could not write the GEMM tuning cache {path} ({e})",
                      RuntimeWarning, stacklevel=4)


def recorded(device, cls):
    """The recorded winner of `cls` on `device`, or None."""
    with _lock:
        fields = _load().get(device_key(device), {}).get(cls.key())
    if not fields:
        return None
    try:
        cfg = gemm.GemmConfig(**fields)
        cfg.validate(cls.dtype)
    except (TypeError, ValueError):
        return None             # (a record from another netcl version)
    return cfg


def record(device, cls, cfg):
    """Keep `cfg` as the winner of `cls` on `device` (in memory and in the file)."""
    with _lock:
        records = _load()
        records.setdefault(device_key(device), {})[cls.key()] = dataclasses.asdict(cfg)
        _save(records)


def tuned_config(device, dtype, trans_a, trans_b, M, N, K):
    """The configuration tuning gives this product on `device` (see the module docstring),
    or None where the table's is to be used."""
    mode = config.autotune
    if mode == "off" or device.is_numpy:
        return None
    cls = ShapeClass.of(dtype, trans_a, trans_b, M, N, K)
    cfg = recorded(device, cls)
    if cfg is not None or mode != "on":
        return cfg
    cfg = measure(device, cls, M, N, K)
    if cfg is not None:
        record(device, cls, cfg)
    return cfg


def measure(device, cls, M, N, K):
    """The fastest candidate for a product of M x N x K in class `cls` on `device` (None
    where fewer than two candidates build)."""
    family = device.target.gemm_tiers
    cands = gemm_tiers.candidates(device.cl_device, cls.dtype, M, N, K, cls.trans_a, family)
    sources = {c: gemm.gemm_source(c, cls.dtype, cls.trans_a, cls.trans_b) for c in cands}
    with kernels.deferring(None):           # (a launcher of a jit pass may ask for this)
        kernels.build_together([kernels.BuildRequest(device, s, ()) for s in sources.values()])
        built = {}
        for c, s in sources.items():
            try:
                built[c] = kernels.kernel(device, s, gemm.GEMM_KERNEL_NAME)
            except kernels.KernelBuildError:
                pass
    if len(built) < 2:
        return None
    bench = _Operands(device, cls, M, N, K)
    start, times = time.perf_counter(), {}
    for c, k in built.items():
        times[c] = bench.time(k, c)
        if time.perf_counter() - start > TIME_BUDGET_S and len(times) >= 2:
            break
    best = min(times, key=times.get)
    table = cands[0]
    if table in times and times[table] <= times[best] * (1 + _MARGIN):
        return table
    return best


class _Operands:
    """Random operands of one product on the device, and a timer of kernels over them."""

    def __init__(self, device, cls, M, N, K):
        self.device, self.M, self.N, self.K = device, M, N, K
        dt = np.float32 if cls.dtype == "float" else np.float64
        rng = np.random.default_rng(0)
        ctx, mf = device.context, cl.mem_flags

        def upload(n):
            host = rng.standard_normal(max(n, 1)).astype(dt)
            return cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=host)
        self.a, self.b = upload(M * K), upload(K * N)
        self.c = cl.Buffer(ctx, mf.READ_WRITE, max(M * N, 1) * dt().itemsize)
        self.lda = M if cls.trans_a else K      # (transposed: stored K x M)
        self.ldb = K if cls.trans_b else N      # (transposed: stored N x K)

    def time(self, k, cfg):
        """Median seconds of one run of kernel `k` (configuration `cfg`)."""
        M, N, K = self.M, self.N, self.K
        k.set_args(self.c, self.a, self.b, *(np.int32(v) for v in (
            M, N, K, self.lda, self.ldb, N, 0, 0, 0, 0, 0, 0)))
        g, l_ = gemm.launch_dims(cfg, 1, M, N)
        queue = self.device.queue
        runs = []
        first = True
        while len(runs) < _RUNS or (sum(runs) < _RUN_TIME_S and len(runs) < 4 * _RUNS):
            queue.finish()
            t = time.perf_counter()
            cl.enqueue_nd_range_kernel(queue, k, g, l_)
            queue.finish()
            if not first:
                runs.append(time.perf_counter() - t)
            first = False
        return statistics.median(runs)
