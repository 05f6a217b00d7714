"""jax.profiler: host-side traces of a netcl program, written as Chrome trace-event JSON.

While a trace is active (`trace(log_dir)`, or `start_trace` ... `stop_trace`), netcl
records a span for every eager primitive dispatch, every call of a jitted function (its
tracing and compilation included, on a signature's first call), every `TraceAnnotation`,
`StepTraceAnnotation`, `annotate_function` call, `netcl.named_scope` block and
`netcl.named_call` call. `stop_trace` writes them as
`log_dir/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz` (JAX's layout; the
format chrome://tracing, Perfetto and TensorBoard's trace viewer read).

The spans are host time: OpenCL runs kernels asynchronously, so a span is how long the host
took to dispatch the work, not how long the device ran it (end a span with
`x.block_until_ready()` to include that). Device-side kernel timing needs OpenCL profiling
events, which need command queues created with profiling enabled; netcl's queues are not,
and this module does not change them. The kernels of one jitted call show as that call's
span, not one by one.

Cost: none while no trace is active. The hooks (the eager interpreter's `process`, a
jitted function's `__call__`) are installed by `start_trace` and removed by `stop_trace`,
so the eager hot path is the same code with or without this module; annotations check one
module global.

>>> with netcl.profiler.trace("/tmp/netcl-trace"):
...     with netcl.profiler.StepTraceAnnotation("train", step_num=0):
...         loss = step(params, batch)
"""
import contextlib
import functools
import gzip
import json
import operator
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

__all__ = ["trace", "start_trace", "stop_trace", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function", "device_memory_profile", "save_device_memory_profile"]

_now = time.perf_counter_ns


@dataclass
class _Session:
    """One active trace: where it goes, and the spans recorded so far."""
    log_dir: str
    perfetto_trace: bool
    perfetto_link: bool
    start_ns: int = field(default_factory=_now)
    wall_start: float = field(default_factory=time.time)
    # (name, category, start ns, end ns, thread id, args or None): tuples, built cheaply
    # while tracing, turned into JSON events once at stop_trace
    spans: list = field(default_factory=list)
    uninstall: Optional[Callable] = None


_session: Optional[_Session] = None   # the active trace (None: none; the hooks' one check)
_lock = threading.Lock()


def _record(name, cat, t0, t1, args=None):
    """Add a finished span to the active trace (if one is still active)."""
    s = _session
    if s is not None:
        s.spans.append((name, cat, t0, t1, threading.get_native_id(), args))


@contextlib.contextmanager
def _span(name, cat, args=None):
    """A span around the block while a trace is active (named_scope and named_call use it)."""
    if _session is None:
        yield
        return
    t0 = _now()
    try:
        yield
    finally:
        _record(name, cat, t0, _now(), args)


def _check_log_dir(log_dir, where):
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"{where}: log_dir must be a str or os.PathLike, got "
                        f"{type(log_dir).__name__}")
    return os.fspath(log_dir)


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                profiler_options=None):
    """Start recording spans (see the module); `stop_trace` writes them under `log_dir`.
    One trace at a time: RuntimeError if one is active (as in JAX). `create_perfetto_trace`
    also writes `perfetto_trace.json.gz` beside the trace (for ui.perfetto.dev);
    `create_perfetto_link` does too, then serves it at 127.0.0.1:9001 and prints the
    Perfetto link, waiting until the UI has fetched it. `profiler_options` (JAX's
    ProfileOptions) is accepted and ignored: netcl traces the host only.

    >>> netcl.profiler.start_trace("/tmp/netcl-trace")
    >>> y = jnp.sin(x)
    >>> netcl.profiler.stop_trace()
    """
    global _session
    log_dir = _check_log_dir(log_dir, "start_trace")
    with _lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be run "
                               "at a time.")
        session = _Session(log_dir, bool(create_perfetto_trace or create_perfetto_link),
                           bool(create_perfetto_link))
        session.uninstall = _install_hooks()
        _session = session


def stop_trace():
    """Stop the active trace and write it (see the module); returns the path of the
    `.trace.json.gz` file. RuntimeError if no trace is active (as in JAX).

    >>> netcl.profiler.start_trace("/tmp/netcl-trace"); f(x); netcl.profiler.stop_trace()
    """
    global _session
    with _lock:
        session = _session
        if session is None:
            raise RuntimeError("No profile started")
        _session = None
        session.uninstall()
    path, perfetto = _write(session)
    if session.perfetto_link:
        _host_perfetto_trace_file(perfetto)
    return path


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
          profiler_options=None):
    """Trace the block: `start_trace` on entry, `stop_trace` on exit (see both).

    >>> with netcl.profiler.trace("/tmp/netcl-trace"):
    ...     y = netcl.jit(f)(x).block_until_ready()
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A span named `name` around the block while a trace is active (keyword arguments are
    recorded as the event's args); nothing otherwise, at the cost of one check.

    >>> with netcl.profiler.TraceAnnotation("data", batch=3):
    ...     x = next(loader)
    """
    __slots__ = ("name", "args", "_t0")

    def __init__(self, name, **kwargs):
        if not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a str, got "
                            f"{type(name).__name__}")
        self.name = name
        self.args = kwargs or None
        self._t0 = []       # (a stack: the same annotation may be entered again inside)

    _category = "annotation"

    def __enter__(self):
        if _session is not None:
            self._t0.append(_now())
        return self

    def __exit__(self, *exc):
        if self._t0:
            _record(self.name, self._category, self._t0.pop(), _now(), self.args)
        return False


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation marking one step of a loop: pass the step as `step_num` (recorded
    in the event's args, as TensorBoard's step view reads it).

    >>> for step_num in range(10):
    ...     with netcl.profiler.StepTraceAnnotation("train", step_num=step_num):
    ...         state = train_step(state)
    """
    __slots__ = ()
    _category = "step"

    def __init__(self, name, **kwargs):
        step = kwargs.get("step_num")
        if step is not None:
            try:        # (a NumPy or netcl integer scalar is recorded as a Python int)
                if isinstance(step, bool):
                    raise TypeError
                kwargs["step_num"] = operator.index(step)
            except TypeError:
                raise TypeError(f"StepTraceAnnotation: step_num must be an int, got "
                                f"{type(step).__name__}") from None
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """Decorator: each call of `func` is a TraceAnnotation named `name` (default: its
    qualified name).

    >>> @netcl.profiler.annotate_function
    ... def load_batch(i): ...
    >>> f = netcl.profiler.annotate_function(g, name="g_step")
    """
    if not callable(func):
        raise TypeError(f"annotate_function: func must be callable, got "
                        f"{type(func).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"annotate_function: name must be a str, got {type(name).__name__}")
    name = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "fun")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


# ---- the hooks ----------------------------------------------------------------------------

def _install_hooks():
    """Install the spans of eager dispatches and jitted calls; returns what removes them.

    The eager interpreter's `process` is shadowed by an instance attribute, and Jitted's
    `__call__` replaced, only for the trace's duration: no check is left on the eager path
    when no trace is active."""
    from .core.array import Array
    from .core.eval import EvalInterpreter, eval_interpreter
    from .transforms.jit import Jitted
    eager = EvalInterpreter.process
    call = Jitted.__call__

    def process(prim, args, params):
        for a in args:
            if type(a) is not Array:
                # (non-array operands are converted, and the call comes back here)
                return eager(eval_interpreter, prim, args, params)
        t0 = _now()
        try:
            return eager(eval_interpreter, prim, args, params)
        finally:
            _record(prim.name, "eager", t0, _now())

    def jitted_call(self, *args, **kwargs):
        t0 = _now()
        try:
            return call(self, *args, **kwargs)
        finally:
            _record(f"jit({getattr(self.fun, '__name__', 'fun')})", "jit", t0, _now())

    eval_interpreter.process = process
    Jitted.__call__ = jitted_call

    def uninstall():
        if eval_interpreter.__dict__.get("process") is process:
            del eval_interpreter.process
        if Jitted.__dict__.get("__call__") is jitted_call:
            Jitted.__call__ = call
    return uninstall


# ---- writing the trace --------------------------------------------------------------------

def _events(session):
    """The Chrome trace-event list: complete events ('X', microseconds from the trace's
    start) and the process and thread names."""
    pid = os.getpid()
    start = session.start_ns
    events = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
               "args": {"name": f"netcl host ({socket.gethostname()})"}}]
    names = {t.native_id: t.name for t in threading.enumerate()}
    for tid in sorted({s[4] for s in session.spans}):
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                       "args": {"name": names.get(tid, f"thread {tid}")}})
    for name, cat, t0, t1, tid, args in session.spans:
        e = {"ph": "X", "name": name, "cat": cat, "pid": pid, "tid": tid,
             "ts": (t0 - start) / 1000.0, "dur": (t1 - t0) / 1000.0}
        if args:
            e["args"] = {k: v if isinstance(v, (int, float, str, bool)) else repr(v)
                         for k, v in args.items()}
        events.append(e)
    return events


def _write(session):
    """Write the trace (and the Perfetto copy if asked); returns both paths (None where
    not written)."""
    from . import __version__
    stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(session.wall_start))
    base = os.path.join(session.log_dir, "plugins", "profile", stamp)
    folder, k = base, 0
    while os.path.exists(folder):       # (two traces in one second: one folder each)
        k += 1
        folder = f"{base}_{k}"
    os.makedirs(folder)
    events = _events(session)
    path = os.path.join(folder, f"{socket.gethostname()}.trace.json.gz")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"displayTimeUnit": "ns", "traceEvents": events,
                   "metadata": {"netcl_version": __version__}}, f)
    perfetto = None
    if session.perfetto_trace:
        # (Perfetto rejects the `metadata` field, as JAX's writer notes)
        perfetto = os.path.join(folder, "perfetto_trace.json.gz")
        with gzip.open(perfetto, "wt", encoding="utf-8") as f:
            json.dump({"displayTimeUnit": "ns", "traceEvents": events}, f)
    return path, perfetto


def _host_perfetto_trace_file(path, port=9001):
    """Serve `path` once at 127.0.0.1:`port` (where ui.perfetto.dev looks for a trace) and
    print the link; returns after the file was fetched."""
    import http.server
    folder, filename = os.path.split(os.path.abspath(path))

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=folder, **kwargs)

        def end_headers(self):
            self.send_header("Access-Control-Allow-Origin", "https://ui.perfetto.dev")
            self.send_header("Cache-Control", "no-cache")
            super().end_headers()

        def log_message(self, *args):
            pass

    with http.server.HTTPServer(("127.0.0.1", port), Handler) as server:
        url = f"https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{filename}"
        print(f"Open URL in browser: {url}", flush=True)
        server.handle_request()


# ---- device memory ------------------------------------------------------------------------

def device_memory_profile(backend=None):
    """A snapshot of the live arrays' device memory as a gzipped pprof protocol buffer
    (jax.profiler.device_memory_profile; read it with `pprof`). netcl records no
    allocation sites (that would cost every eager op), so each sample's stack is the
    device and the array type (`float32[1024,1024]`) instead of Python frames; arrays that
    share a buffer (views) count it once.

    >>> open("mem.prof", "wb").write(netcl.profiler.device_memory_profile())
    """
    from .api_extras import live_arrays
    if backend is not None and not isinstance(backend, str):
        raise TypeError(f"device_memory_profile: backend must be a str or None, got "
                        f"{type(backend).__name__}")
    groups = {}     # (device, type) -> [count, bytes]
    seen = set()
    for a in live_arrays(backend):
        for x in (a._arrays() if hasattr(a, "_arrays") else (a,)):
            storage = x._storage if x._storage is not None else x._buf
            if storage is not None and id(storage) in seen:
                continue
            if storage is not None:
                seen.add(id(storage))
            key = (str(x.device), f"{x.dtype.name}[{','.join(map(str, x.shape))}]")
            g = groups.setdefault(key, [0, 0])
            g[0] += 1
            g[1] += int(x.nbytes)
    return gzip.compress(_pprof(groups))


def save_device_memory_profile(filename, backend=None):
    """Write `device_memory_profile(backend)` to `filename`.

    >>> netcl.profiler.save_device_memory_profile("mem.prof")
    """
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, value):
    """One protobuf field: an int as a varint, bytes as a length-delimited field."""
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _pprof(groups):
    """A pprof `Profile` message (profile.proto) for {(device, type): [count, bytes]}:
    sample types allocations/count and space/bytes, one two-frame stack per group."""
    strings = [""]
    index = {"": 0}

    def s(text):
        if text not in index:
            index[text] = len(strings)
            strings.append(text)
        return index[text]

    out = bytearray()
    for kind, unit in (("allocations", "count"), ("space", "bytes")):
        out += _field(1, _field(1, s(kind)) + _field(2, s(unit)))
    frames = {}     # function name -> location (and function) id

    def frame(name):
        if name not in frames:
            frames[name] = len(frames) + 1
        return frames[name]

    for (device, typ), (count, nbytes) in sorted(groups.items()):
        leaf, root = frame(typ), frame(device)      # (a sample's stack: leaf first)
        locs = _varint(leaf) + _varint(root)
        values = _varint(count) + _varint(nbytes)
        out += _field(2, _field(1, locs) + _field(2, values))
    for name, ident in frames.items():
        out += _field(4, _field(1, ident) + _field(4, _field(1, ident)))
        out += _field(5, _field(1, ident) + _field(2, s(name)) + _field(3, s(name)))
    for text in strings:
        out += _field(6, text.encode())
    return bytes(out)
