"""Eager evaluation: the interpreter that runs when no transform is active.

The hot path of the library. For each (primitive, params, input layouts, device) it checks
shapes and dtypes once (`abstract_eval`), builds a launcher once (kernel built, scalar
arguments set), and afterwards a call is a dictionary lookup plus the launcher: set the
buffer arguments, enqueue, wrap the output. On the NumPy fallback device the launcher
runs the primitive's NumPy reference instead.
"""
import numpy as np

from . import dtypes
from .array import Array
from .devices import default_device
from .tracing import Interpreter, Tracer, set_eval_interpreter

_MAX_LAUNCHERS = 50_000


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
            key = (prim,) + tuple(a._layout_id() for a in args)
        if params:
            key = key + tuple(params.items())
        try:
            launcher = self.launchers.get(key)
        except TypeError:  # unhashable params: run without caching
            return self._build(prim, args, params)(*args)
        if launcher is None:
            launcher = self._build(prim, args, params)
            if len(self.launchers) >= _MAX_LAUNCHERS:
                self.launchers.clear()
            self.launchers[key] = launcher
        return launcher(*args)

    def launcher(self, prim, args, params):
        """The launcher `process` runs for these arguments (built and cached once), or None
        where it would not cache one (non-array arguments, unhashable params)."""
        if not all(type(a) is Array for a in args):
            return None
        key = (prim,) + tuple(a._layout_id() for a in args)
        if params:
            key = key + tuple(params.items())
        try:
            launcher = self.launchers.get(key)
        except TypeError:
            return None
        if launcher is None:
            launcher = self._build(prim, args, params)
            if len(self.launchers) >= _MAX_LAUNCHERS:
                self.launchers.clear()
            self.launchers[key] = launcher
        return launcher

    def _process_slow(self, prim, args, params):
        return self.process(prim, tuple(to_array(a, prim.name) for a in args), params)

    def _build(self, prim, args, params):
        if prim.call is not None:
            call = prim.call
            return lambda *xs: call.eval(xs, params)
        device = args[0].device if args else params.get("device") or default_device()
        for a in args[1:]:
            if a.device is not device:
                raise ValueError(
                    f"{prim.name}: arguments are on different devices ({args[0].device} and "
                    f"{a.device}); move them with netcl.device_put first")
        out = prim.abstract_eval(*args, **params)
        if device.is_numpy:
            return numpy_launcher(prim, device, params, out)
        return prim.make_launcher(device, args, params, out)

    def concrete(self, tracer, what):
        raise LeakedTracerError(_leak_message(tracer))


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
    device = device or default_device()
    if isinstance(x, (bool, int, float, np.bool_)) and type(x) in (bool, int, float):
        return scalar_constant(x, dtypes.scalar_dtype(x), device, weak=True)
    try:
        host = np.asarray(x)
    except Exception:
        raise TypeError(f"{where}: expected an array, got {type(x).__name__}") from None
    if host.dtype == object or host.dtype.kind not in "biuf":
        raise TypeError(f"{where}: expected a numeric array, got {type(x).__name__} "
                        f"with dtype {host.dtype}")
    dt = dtypes.canonicalize(host.dtype, where=where)
    if dt == dtypes.float64 and not device.capabilities.fp64:
        dt = dtypes.float32
    return Array.from_numpy(device, host.astype(dt, copy=False))


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
