"""Eager evaluation: the interpreter that runs when no transform is active.

The hot path of the library. For each (primitive, params, input layouts, device) it checks
shapes and dtypes once (`abstract_eval`), builds a launcher once (kernel built, scalar
arguments set), and afterwards a call is a dictionary lookup plus the launcher: set the
buffer arguments, enqueue, wrap the output. On the NumPy fallback device the launcher
runs the primitive's NumPy reference instead. Launchers run under `devices.LOCK` (they
share their kernel objects between threads).
"""
import importlib
import sys

import numpy as np
import pyopencl as cl

from . import config as _config_module, dtypes, nonfinite
from .config import config
from .array import Array, deleted_message
from .sharded import DistributedArray
from .devices import default_device
from .launch import Launch, as_launch
from .pool import _OUT_OF_MEMORY
from .shapes import prod
from .tracing import Interpreter, Tracer, set_eval_interpreter

_MAX_LAUNCHERS = 50_000

# the module (netcl.core's `devices` is the function): its LOCK is looked up at each use,
# so that a forked child's replacement takes effect
_devices = importlib.import_module(".devices", __package__)


class LeakedTracerError(RuntimeError):
    """A value from inside a transform was used after the transform returned."""


class EvalInterpreter(Interpreter):
    transform_name = "eager evaluation"

    def __init__(self):
        self.launchers = {}

    def process(self, prim, args, params):
        # The launcher cache key: primitive, params and one layout id per argument.
        n = len(args)
        if n == 2 and type(args[0]) is Array and type(args[1]) is Array:
            a, b = args
            la, lb = a._lid, b._lid
            key = (prim, la if la is not None else a._layout_id(),
                   lb if lb is not None else b._layout_id())
        elif n == 1 and type(args[0]) is Array:
            la = args[0]._lid
            key = (prim, la if la is not None else args[0]._layout_id())
        else:
            for a in args:
                if type(a) is not Array:
                    return self._process_slow(prim, args, params)
            # (an operand-less primitive, an iota, runs on the default device: its launcher
            # is that device's)
            key = (prim,) + tuple(a._layout_id() for a in args) if args else \
                (prim, default_device())
        if params:
            key = key + tuple(params.items())
        try:
            launcher = self.launchers.get(key)
        except TypeError:  # unhashable params: run without caching
            with _devices.LOCK:
                out = self._build(prim, args, params).run(*args)
            if config.check_values:
                nonfinite.check(prim.name, out)
            return out
        if launcher is None:
            launcher = self._build_cached(key, prim, args, params)
        # Launchers share their cl.Kernel: setting its arguments and enqueueing it must not
        # interleave with another thread's launch of the same kernel. (acquire/release: half
        # the cost of a with statement, on the path every eager op takes)
        lock = _devices.LOCK
        lock.acquire()
        try:
            out = launcher.run(*args)
        except MemoryError as e:    # the pool knows bytes only: add what the user called
            raise _out_of_memory(e, prim, args) from None
        except cl.Error as e:       # drivers that allocate at first use fail at the launch
            if getattr(e, "code", None) not in _OUT_OF_MEMORY:
                raise
            if args and args[0].device.pool is not None:
                args[0].device.pool.empty()     # (so that a retry may fit)
            raise _out_of_memory(e, prim, args) from None
        finally:
            lock.release()
        if config.check_values:         # (debug_nans / debug_infs)
            nonfinite.check(prim.name, out)
        return out

    def launcher(self, prim, args, params, shared=True):
        """The Launch `process` runs for these arguments (built and cached once), or None
        where it would not cache one (non-array arguments, unhashable params). With
        `shared=False` it is built for the caller alone and not cached: a primitive made for
        one compiled function (jit's fused groups) must not outlive it in this table."""
        if not all(type(a) is Array for a in args):
            return None
        if not shared:
            return self._build(prim, args, params)
        key = (prim,) + tuple(a._layout_id() for a in args) if args else \
            (prim, default_device())
        if params:
            key = key + tuple(params.items())
        try:
            launcher = self.launchers.get(key)
        except TypeError:
            return None
        if launcher is None:
            launcher = self._build_cached(key, prim, args, params)
        return launcher

    def _build_cached(self, key, prim, args, params):
        """Build the launcher for `key` (once: a thread that finds it built meanwhile uses
        that one) and cache it."""
        with _devices.LOCK:
            launcher = self.launchers.get(key)
            if launcher is None:
                launcher = self._build(prim, args, params)
                if len(self.launchers) >= _MAX_LAUNCHERS:
                    self.launchers.clear()
                self.launchers[key] = launcher
            return launcher

    def _process_slow(self, prim, args, params):
        return self.process(prim, tuple(to_array(a, prim.name) for a in args), params)

    def _build(self, prim, args, params):
        for a in args:
            # (a deleted array's layout id has no launcher: every use of it comes here)
            if a.deleted:
                raise RuntimeError(deleted_message(a, _public_caller() or prim.name))
        if prim.call is not None:
            call = prim.call
            return Launch(lambda *xs: call.eval(xs, params))
        device = args[0].device if args else params.get("device") or default_device()
        for a in args[1:]:
            if a.device is not device:
                raise ValueError(
                    f"{prim.name}: arguments are on different devices ({args[0].device} and "
                    f"{a.device}); move them with netcl.device_put first")
        out = prim.abstract_eval(*args, **params)
        if device.is_numpy:
            return Launch(numpy_launcher(prim, device, params, out))
        _check_fits(prim, device, out)
        return as_launch(prim.make_launcher(device, args, params, out))

    def concrete(self, tracer, what):
        raise LeakedTracerError(_leak_message(tracer))


_NOT_PUBLIC = ("op", "method", "wrapper", "wrapped", "inner", "fun", "f")


def _public_caller():
    """The netcl function the user called (the outermost public netcl frame under user
    code: not an operator, decorator or private helper), as `netcl.numpy.sum`, or None."""
    f, frames = sys._getframe(1), []
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if not (mod == "netcl" or mod.startswith("netcl.")):
            break           # user code
        if not mod.startswith("netcl.core."):     # (bind, dispatch: machinery)
            frames.append(f)
        f = f.f_back
    for found in reversed(frames):
        name, mod = found.f_code.co_name, found.f_globals["__name__"]
        if name.startswith(("_", "<")) or name in _NOT_PUBLIC:
            continue
        parts = mod.split(".")
        for i in range(1, len(parts) + 1):   # the shortest module that exports it
            m = sys.modules.get(".".join(parts[:i]))
            fn = getattr(m, name, None)
            if getattr(getattr(fn, "__wrapped__", fn), "__code__", None) is found.f_code or \
                    getattr(fn, "__code__", None) is found.f_code:
                return f"{'.'.join(parts[:i])}.{name}"
        return f"{mod}.{name}"
    return None


def _check_fits(prim, device, out):
    """MemoryError, before anything runs, for an output larger than the device's largest
    buffer (the driver's INVALID_BUFFER_SIZE would not say which array)."""
    limit = device.capabilities.max_mem_alloc_size
    if not limit:
        return
    for aval in (out if isinstance(out, (tuple, list)) else (out,)):
        nbytes = prod(aval.shape) * np.dtype(aval.dtype).itemsize
        if nbytes > limit:
            from .pool import nbytes_str
            where = _public_caller()
            where = f"{where} ({prim.name})" if where else prim.name
            raise MemoryError(
                f"{where}: an array of shape {tuple(aval.shape)} and dtype {aval.dtype} needs "
                f"{nbytes_str(nbytes)}, more than the largest buffer {device.name} allows "
                f"(max_mem_alloc_size {nbytes_str(limit)}; device memory "
                f"{nbytes_str(device.capabilities.global_mem_size)})")


class OutOfMemoryError(MemoryError):
    """A MemoryError that already names the call (nested dispatch adds nothing more)."""


def _out_of_memory(error, prim, args):
    if isinstance(error, OutOfMemoryError):
        return error
    where = _public_caller()
    where = f"{where} ({prim.name})" if where else prim.name
    ins = ", ".join(f"{a.dtype}{list(a.shape)}" for a in args)
    return OutOfMemoryError(f"{where} on arguments {ins}: out of device memory: {error}"
                            if isinstance(error, cl.Error) else f"{where} on arguments {ins}: "
                            f"{error}")


def _leak_message(tracer):
    name = getattr(tracer._interp, "transform_name", type(tracer._interp).__name__)
    return (f"a traced value ({tracer!r}) from {name} was used outside of it: a tracer leaked, "
            "e.g. stored in a global or a closure during the transformed call. Return it "
            "from the function instead.")


def numpy_launcher(prim, device, params, out_avals):
    """Launcher that runs the NumPy reference (the fallback backend, and a test oracle)."""
    ref = prim.reference
    multi = prim.multiple_results

    def wrap(value, aval):
        value = np.asarray(value, dtype=aval.dtype)
        if value.shape != aval.shape:
            raise AssertionError(f"{prim.name}: reference gave shape {value.shape}, "
                                 f"abstract_eval said {aval.shape}")
        return Array(device, value, None, aval.shape, aval.dtype, None, 0, aval.weak_type)

    def launch(*xs):
        outs = ref(*[x._buf for x in xs], **params)
        if multi:
            return tuple(wrap(o, a) for o, a in zip(outs, out_avals))
        return wrap(outs, out_avals)
    return launch


_constants = {}


def to_array(x, where="netcl", device=None):
    """Any array-like to an Array on `device` (default device); Python scalars are weak."""
    if isinstance(x, Array):
        return x
    if isinstance(x, Tracer):
        raise LeakedTracerError(_leak_message(x))
    if isinstance(x, DistributedArray):   # (eager use of blocks on devices: gathered)
        if _config_module.GUARD_ON:
            _config_module.check_transfer(
                "device_to_device", False,
                lambda: f"{where}: gathering a {x.dtype}{list(x.shape)} sharded array")
        x = x._as_array()
        return x if device is None or x.device is device else \
            Array.from_numpy(device, np.asarray(x), x.weak_type)
    device = device or default_device()
    if type(x) in (bool, int, float, complex):
        return scalar_constant(x, dtypes.scalar_dtype(x, where), device, weak=True)
    try:
        host = np.asarray(x)
    except Exception:
        raise TypeError(f"{where}: expected an array, got {type(x).__name__}") from None
    # dtype rules and int range checks for Python data live in dtypes (TypeError if not numeric)
    host = dtypes.from_python(x, host, where=where)
    if host.dtype in (dtypes.float64, dtypes.complex128) and not device.capabilities.fp64:
        host = host.astype(dtypes.float32 if host.dtype == dtypes.float64 else dtypes.complex64)
    if _config_module.GUARD_ON and where not in _NOT_TRANSFERS and not _in_staging():
        _config_module.check_transfer(
            "host_to_device", where == "device_put",
            lambda: f"{where}: {host.dtype}{list(host.shape)} to {device.name}")
    return Array.from_numpy(device, host)


def _in_staging():
    """Whether a jit/make_ir trace is active: host data met while tracing becomes a constant
    of the compiled function (JAX embeds those: no transfer the guard sees)."""
    from .tracing import current_interpreter
    interp = current_interpreter()
    while interp is not None and interp is not eval_interpreter:
        if interp.records_program:
            return True
        interp = getattr(interp, "parent", None)
    return False


# to_array callers that want an abstract value, or a constant captured by a trace (part of
# the compiled function, as JAX embeds it): no transfer the guard should see
_NOT_TRANSFERS = frozenset(("staging", "make_ir", "eval_shape", "linear_transpose", "typeof",
                            "closure_convert"))


def scalar_constant(value, dtype, device, weak=True):
    """A 0-d array for a Python scalar, cached: `x * 2.0` uploads 2.0 only once."""
    key = (device, dtype, weak, type(value), value, repr(value))
    arr = _constants.get(key)
    if arr is None:
        arr = Array.from_numpy(device, np.asarray(value, dtype=dtype), weak_type=weak)
        if len(_constants) > 4096:
            _constants.clear()
        _constants[key] = arr
    return arr


eval_interpreter = EvalInterpreter()
set_eval_interpreter(eval_interpreter)
