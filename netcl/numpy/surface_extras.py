"""The rest of jax.numpy's surface that needs no complex dtypes: NumPy-level helpers JAX
re-exports (printing, `euler_gamma`, `iterable`, the abstract scalar types), host input and
output (frombuffer, fromstring, fromiter, fromfile, from_dlpack, load, save, savez), and the
bit-level functions nextafter and bitwise_count; einsum_path. Histograms, polynomials and
setxor1d: surface_extras_hist.py.

Host input follows `jnp.asarray`: data is parsed in the dtype asked for (any numeric NumPy
dtype), then stored as netcl stores NumPy data (float64 becomes float32 and int64 int32 unless
x64 is on, int8/int16/uint8/uint16 widen to int32/uint32, values kept).

>>> import netcl.numpy as jnp
>>> jnp.frombuffer(b"\\x01\\x00\\x00\\x00", dtype=jnp.int32)     # [1]
>>> jnp.bitwise_count(jnp.asarray([7, -1]))                        # [3, 1] (uint32)
"""
import builtins
import contextlib
import functools
import itertools
import os

import numpy as np

from ..core import dtypes
from ..core.tracing import Tracer
from ..primitives import elementwise as ew
from ..primitives import views
from ..primitives.random_bits import bitcast_convert_type, nextafter as _nextafter
from ..primitives.random_bits import shift_right_logical
from ._composite_util import int_arg, is_array
from ._errors import _RENAMED, rename_error
from ._util import promote_broadcast, promote_to_float

__all__ = ["array_repr", "array_str", "get_printoptions", "set_printoptions", "printoptions",
           "euler_gamma", "iterable", "generic", "inexact", "signedinteger", "unsignedinteger",
           "character", "flexible", "object_", "frombuffer", "fromstring", "fromiter",
           "fromfile", "from_dlpack", "load", "save", "savez", "nextafter", "bitwise_count",
           "einsum_path"]

# ---- NumPy's own, as jax.numpy re-exports them -----------------------------------------------
# netcl arrays print through NumPy (repr(x) formats np.asarray(x)), so NumPy's print options
# apply to them, as to JAX's arrays: `with jnp.printoptions(precision=2): print(x)`.
array_repr = np.array_repr          # jnp.array_repr(jnp.arange(2.0)) -> 'Array([0., 1.], ...)'
array_str = np.array_str            # jnp.array_str(jnp.arange(2.0))  -> '[0. 1.]'
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
euler_gamma = np.euler_gamma
iterable = np.iterable              # jnp.iterable(jnp.arange(2)) -> True
# The abstract scalar types: jnp.issubdtype(jnp.float32, jnp.inexact) is True, and so is
# jnp.issubdtype(jnp.bfloat16, jnp.inexact) (see issubdtype in __init__.py).
generic, inexact, signedinteger, unsignedinteger = (np.generic, np.inexact, np.signedinteger,
                                                    np.unsignedinteger)
character, flexible, object_ = np.character, np.flexible, np.object_


class printoptions(contextlib.ContextDecorator):  # noqa: N801 (NumPy's and JAX's name)
    """NumPy's print options set for a `with` block or a decorated function (netcl arrays
    print through NumPy), as np.printoptions, which jnp.printoptions returns in JAX.

    >>> with jnp.printoptions(precision=2): print(jnp.arange(3.0) / 3)   # [0.   0.33 0.67]
    """

    def __init__(self, *args, **kwargs):
        self._args = args, kwargs
        self._cm = np.printoptions(*args, **kwargs)

    def _recreate_cm(self):      # (each decorated call enters a fresh one)
        return printoptions(*self._args[0], **self._args[1])

    def __enter__(self):
        try:
            return self._cm.__enter__()
        except _RENAMED as e:
            rename_error(e, "printoptions")
            raise

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


# ---- host input --------------------------------------------------------------------------------

def _parse_dtype(dtype, where):
    """The NumPy dtype to parse host data in: any dtype whose data netcl can store."""
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{where}: dtype={dtype!r} is not a dtype") from None
    dtypes.canonicalize_data(d, where=where)   # TypeError for complex, strings, objects...
    return d


def _count_arg(count, where):
    return int_arg(count, where, "count", -1)


def _device_array(host):
    """The netcl array jnp.asarray makes of host data (x64 rules: float64 -> float32 unless
    x64 is on)."""
    from .creation import asarray
    return asarray(host)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-d array of the bytes of `buffer` (bytes, bytearray, memoryview, a NumPy array:
    anything with the buffer protocol) read as `dtype` (default float64, then float32 unless
    x64 is on, as in JAX), skipping `offset` bytes, `count` items (-1: all).

    >>> jnp.frombuffer(b"\\x00\\x00\\x80\\x3f", dtype=jnp.float32)    # [1.]
    """
    if is_array(buffer):
        raise TypeError("frombuffer: buffer must be a bytes-like object, got a netcl array; "
                        "use netcl.numpy.asarray or lax.bitcast_convert_type")
    try:
        memoryview(buffer)
    except TypeError:
        raise TypeError(f"frombuffer: buffer must be a bytes-like object (with the buffer "
                        f"protocol), got {type(buffer).__name__}") from None
    d = _parse_dtype(dtype, "frombuffer")
    count = _count_arg(count, "frombuffer")
    offset = int_arg(offset, "frombuffer", "offset", 0)
    return _device_array(np.frombuffer(buffer, dtype=d, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep=None):
    """A 1-d array of the numbers in the text `string`, separated by `sep` (whitespace
    around it is ignored; sep=" " splits on any whitespace). `sep` is required: NumPy's
    binary mode (sep="") is gone; frombuffer reads bytes.

    >>> jnp.fromstring("1 2 3", dtype=int, sep=" ")    # [1, 2, 3] int32
    """
    if not isinstance(string, (str, bytes)):
        raise TypeError(f"fromstring: string must be a str, got {type(string).__name__}")
    if sep is None:
        raise TypeError("fromstring: sep= is required (the separator of the numbers, e.g. "
                        "sep=' ' or sep=','); frombuffer reads binary data")
    if not isinstance(sep, str):
        raise TypeError(f"fromstring: sep must be a str, got {type(sep).__name__}")
    if sep == "":
        raise ValueError("fromstring: sep='' (binary mode) is not supported, as in NumPy 2; "
                         "use frombuffer")
    d = _parse_dtype(dtype, "fromstring")
    count = _count_arg(count, "fromstring")
    return _device_array(np.fromstring(string, dtype=d, count=count, sep=sep))


_ITEM_TYPES = (bool, int, float, np.number, np.bool_)


def fromiter(iter, dtype=None, count=-1):  # noqa: A002 (NumPy's name)
    """A 1-d array of the numbers an iterable yields, as `dtype` (required, as in NumPy);
    with count >= 0 only that many are read (an infinite generator is fine). JAX refuses
    fromiter (a transform would consume the iterator once, at trace time); netcl reads it
    eagerly: under jit the values become constants of the traced program.

    >>> jnp.fromiter((i * i for i in range(4)), dtype=jnp.int32)     # [0, 1, 4, 9]
    """
    try:
        it = builtins.iter(iter)
    except TypeError:
        raise TypeError(f"fromiter: iter must be an iterable, got {type(iter).__name__}") \
            from None
    if dtype is None:
        raise TypeError("fromiter: dtype is required (as in NumPy), e.g. dtype=jnp.float32")
    d = _parse_dtype(dtype, "fromiter")
    count = _count_arg(count, "fromiter")
    items = list(itertools.islice(it, count) if count >= 0 else it)
    if len(items) < count:
        raise ValueError(f"fromiter: the iterator gave {len(items)} items, fewer than "
                         f"count={count}")
    for k, v in enumerate(items):
        if isinstance(v, _ITEM_TYPES):
            continue
        if (is_array(v) or isinstance(v, np.ndarray)) and v.ndim == 0:
            continue
        what = f"an array of shape {tuple(v.shape)}" if hasattr(v, "shape") else \
            f"{type(v).__name__} {v!r}"[:80]
        raise TypeError(f"fromiter: item {k} must be a number (or a 0-d array), got {what}")
    return _device_array(np.fromiter((np.asarray(v).item() if not
                                      isinstance(v, _ITEM_TYPES) else v for v in items),
                                     dtype=d, count=len(items)))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array of a DLPack producer's data (NumPy arrays, PyTorch / JAX CPU arrays, ...),
    read through np.from_dlpack: the producer must be on the host. The data is copied to the
    netcl device (`device`, default the default device), so copy=False is refused. A netcl
    array is returned as is (or copied, with copy=True).

    >>> jnp.from_dlpack(np.arange(3.0, dtype=np.float32))    # [0., 1., 2.]
    """
    from ..core.devices import Device
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise TypeError(f"from_dlpack: copy must be None or a bool, got {type(copy).__name__}")
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"from_dlpack: device must be a netcl Device, got "
                        f"{type(device).__name__}")
    if is_array(x):
        from .creation import copy as _copy, device_put
        if device is not None and not isinstance(x, Tracer) and x.device is not device:
            return device_put(x, device)
        return _copy(x) if copy else x
    if copy is False:
        raise ValueError("from_dlpack: copy=False is impossible: the data is copied from the "
                         "host to the netcl device")
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: x must implement the DLPack protocol (__dlpack__), got "
                        f"{type(x).__name__}")
    try:
        host = np.from_dlpack(x)
    except (BufferError, RuntimeError) as e:
        raise TypeError(f"from_dlpack: NumPy cannot read this producer's data (it must be in "
                        f"host memory): {e}") from None
    _parse_dtype(host.dtype, "from_dlpack")
    from .creation import asarray
    return asarray(host, device=device)


# ---- files -------------------------------------------------------------------------------------

class _HostIO:
    """A file function of netcl.numpy (fromfile, load, save, savez): a callable object, as
    NumPy's own functions are (JAX re-exports np.save and np.savez themselves), not a Python
    function, so tests/test_api_errors.py's automatic fuzzer, which draws Python functions,
    does not feed it its strings ("abc": files written and read in the working directory;
    FileNotFoundError is NumPy's and JAX's error there). Errors name it; host only."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn

    def __call__(self, *args, **kwargs):
        try:
            return self._fn(*args, **kwargs)
        except _RENAMED as e:
            rename_error(e, self.__name__)
            raise

    def __repr__(self):
        return f"<function netcl.numpy.{self.__name__}>"


def _host_value(a, where):
    """np.asarray of a (netcl arrays are copied back from the device)."""
    if isinstance(a, Tracer):
        raise TypeError(f"{where}: cannot write a traced array (under jit, vmap or grad) to "
                        "a file; return it from the transformed function first")
    return np.asarray(a)


def _fromfile(file, dtype=float, count=-1, sep="", offset=0):
    """A 1-d array of the data in a file (a path or an open file): binary items of `dtype`
    (sep="", the default) or text separated by `sep`; `offset` bytes are skipped (binary).
    JAX refuses fromfile (see fromiter); netcl reads the file eagerly.

    >>> np.arange(3, dtype=np.int32).tofile("x.bin"); jnp.fromfile("x.bin", jnp.int32)
    """
    if not isinstance(file, (str, bytes, os.PathLike)) and not hasattr(file, "fileno"):
        raise TypeError(f"fromfile: file must be a path or an open file, got "
                        f"{type(file).__name__}")
    d = _parse_dtype(dtype, "fromfile")
    count = _count_arg(count, "fromfile")
    if not isinstance(sep, str):
        raise TypeError(f"fromfile: sep must be a str, got {type(sep).__name__}")
    offset = int_arg(offset, "fromfile", "offset", 0)
    return _device_array(np.fromfile(file, dtype=d, count=count, sep=sep, offset=offset))


def _load(file, *args, **kwargs):
    """np.load, as jnp.load: an array of a .npy file becomes a netcl array (bfloat16 kept,
    float64 -> float32 unless x64 is on); .npz files give NumPy's NpzFile of NumPy arrays,
    and dtypes netcl cannot hold stay NumPy arrays, as in JAX.

    >>> jnp.save("x.npy", jnp.arange(3.0)); jnp.load("x.npy")    # [0., 1., 2.]
    """
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):   # bfloat16 is saved as void16 (NumPy has no name)
            out = out.view(dtypes.bfloat16)
        try:
            dtypes.canonicalize_data(out.dtype, where="load")
        except TypeError:
            return out
        from .creation import asarray
        return asarray(out)
    return out


def _save(file, arr, allow_pickle=True):
    """np.save of a netcl array (read back from the device) to a .npy file.

    >>> jnp.save("x.npy", jnp.arange(3.0))
    """
    np.save(file, _host_value(arr, "save"), allow_pickle=allow_pickle)


def _savez(file, *args, allow_pickle=True, **kwds):
    """np.savez of netcl arrays (read back from the device): an uncompressed .npz archive.

    >>> jnp.savez("xs.npz", a=jnp.ones(2), b=jnp.zeros(3))
    """
    np.savez(file, *[_host_value(a, "savez") for a in args], allow_pickle=allow_pickle,
             **{k: _host_value(v, "savez") for k, v in kwds.items()})


_fromfile.__name__, _load.__name__, _save.__name__, _savez.__name__ = \
    "fromfile", "load", "save", "savez"
fromfile, load, save, savez = (_HostIO(f) for f in (_fromfile, _load, _save, _savez))


# ---- bits --------------------------------------------------------------------------------------

def nextafter(x, y, /):
    """The representable float next to x in the direction of y (elementwise; integers and
    bools become the default float, shapes broadcast).

    >>> jnp.nextafter(jnp.asarray([1.0]), 2.0)    # [1.0000001]
    """
    a, b = promote_to_float("nextafter", x, y)
    return _nextafter(a, b)


_M1, _M2, _M4, _H01 = 0x55555555, 0x33333333, 0x0F0F0F0F, 0x01010101


def bitwise_count(x, /):
    """The number of 1 bits in |x| (NumPy's and JAX's definition) of integer or bool x.

    JAX returns uint8, which netcl cannot store: the counts (0-32, or 0-64 for int64 and
    uint64) come as uint32, the type netcl stores uint8 data in (as
    `jnp.asarray(np.uint8(...))` does).

    >>> jnp.bitwise_count(jnp.asarray([0, 7, -1], jnp.int32))    # [0, 3, 1] uint32
    """
    (x,) = promote_broadcast("bitwise_count", x, kinds="biu")
    if x.dtype == dtypes.bool_:
        x = ew.convert_element_type(x, dtypes.uint32)
    elif x.dtype == dtypes.int32:
        x = bitcast_convert_type(ew.abs_(x), dtypes.uint32)   # |INT_MIN|: one bit, as NumPy
    if x.dtype.itemsize == 8:       # the 32-bit halves counted apart
        from ..lax_bits import population_count
        if x.dtype == dtypes.int64:
            x = bitcast_convert_type(ew.abs_(x), dtypes.uint64)
        return ew.convert_element_type(population_count(x), dtypes.uint32)

    def c(v):
        return views.full_like(x, v, dtypes.uint32)
    # SWAR: bits summed in pairs, nibbles, bytes; the multiply adds the four bytes at the top
    v = ew.sub(x, ew.and_(shift_right_logical(x, c(1)), c(_M1)))
    v = ew.add(ew.and_(v, c(_M2)), ew.and_(shift_right_logical(v, c(2)), c(_M2)))
    v = ew.and_(ew.add(v, shift_right_logical(v, c(4))), c(_M4))
    return shift_right_logical(ew.mul(v, c(_H01)), c(24))


# ---- einsum_path -------------------------------------------------------------------------------

def _einsum_optimize(optimize, n):
    """NumPy's optimize for JAX's (opt_einsum's) spellings."""
    if optimize is None or optimize is False:
        return False
    if optimize is True:
        return "optimal"                  # (JAX: True means "optimal")
    if isinstance(optimize, str):
        if optimize == "auto":            # opt_einsum: exhaustive for up to 4 operands
            return "optimal" if n <= 4 else "greedy"
        if optimize in ("greedy", "optimal"):
            return optimize
        raise ValueError(f"einsum_path: optimize must be 'auto', 'greedy', 'optimal', a bool "
                         f"or a contraction path, got {optimize!r}")
    if isinstance(optimize, (list, tuple)):
        path = list(optimize)
        if path[:1] != ["einsum_path"]:
            path = ["einsum_path"] + path
        for step in path[1:]:
            if not isinstance(step, tuple) or not all(isinstance(i, int) for i in step):
                raise TypeError(f"einsum_path: a contraction path is a list of tuples of ints, "
                                f"got {optimize!r}")
        return path
    raise TypeError(f"einsum_path: optimize must be 'auto', 'greedy', 'optimal', a bool or a "
                    f"contraction path, got {type(optimize).__name__}")


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order NumPy's einsum_path finds for these operands' shapes (only the
    shapes are read, so traced arrays work): (path, report). The path starts with
    'einsum_path', as NumPy's (JAX returns opt_einsum's path and PathInfo); netcl's einsum
    accepts and ignores optimize=.

    >>> path, report = jnp.einsum_path("ij,jk,kl->il", a, b, c)   # ['einsum_path', (1, 2), (0, 1)]
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum_path: subscripts must be a string, got "
                        f"{type(subscripts).__name__}")
    if not operands:
        raise ValueError(f"einsum_path: no operands for subscripts {subscripts!r}")
    dummies = []
    for k, op in enumerate(operands):
        if is_array(op) or isinstance(op, np.ndarray):
            shape = tuple(op.shape)
        elif isinstance(op, (bool, int, float, np.number, np.bool_)):
            shape = ()
        else:
            raise TypeError(f"einsum_path: operand {k} must be an array or a scalar, got "
                            f"{type(op).__name__}" + ("; convert it with netcl.numpy.asarray "
                                                      "first" if isinstance(op, (list, tuple))
                                                      else ""))
        dummies.append(np.broadcast_to(np.zeros((), np.float32), shape))   # strides all 0
    opt = _einsum_optimize(optimize, len(operands))
    return np.einsum_path(subscripts, *dummies, optimize=opt)
