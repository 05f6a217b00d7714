"""jax.numpy names around ufuncs, bits and complex numbers:

- `ufunc` / `frompyfunc`: JAX's ufunc objects (`__call__`, `outer`, `reduce`,
  `accumulate`); importing this module also gives the common binary functions (add,
  multiply, maximum, minimum, logical/bitwise and/or/xor, subtract, ...) `.outer`,
  `.reduce` and `.accumulate`, as `jnp.add.outer(a, b)` in JAX.
- `packbits` / `unpackbits`: as NumPy's, except that netcl has no uint8: packed bytes are
  uint32 values in [0, 255] (and unpackbits takes int32/uint32 bytes).
- `angle`; the complex scalar types (`complex64`, `complex128`, `csingle`, ...),
  `sort_complex`, `roots`; `complexfloating` is NumPy's abstract type (so issubdtype tests
  work).

>>> jnp.add.outer(jnp.arange(2), jnp.arange(3))       # [[0, 1, 2], [1, 2, 3]]
>>> jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 1]))   # [177]
"""
import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.tracing import Tracer
from .scalar_types import scalar_types

__all__ = ["ufunc", "frompyfunc", "packbits", "unpackbits", "roots", "sort_complex", "angle",
           "complex64", "complex128", "complex_", "csingle", "cdouble", "complexfloating",
           "ComplexWarning"]

complexfloating = np.complexfloating
ComplexWarning = getattr(np, "exceptions", np).ComplexWarning


def _np_mod():
    from .. import numpy as jnp
    return jnp


def _arr(x, where, arg="x"):
    if isinstance(x, (Array, Tracer)):
        return x
    try:
        return _np_mod().asarray(x)
    except TypeError as e:
        raise TypeError(f"{where}: {arg} must be an array, got {type(x).__name__} ({e})") \
            from None


# ---- complex scalar types ----------------------------------------------------------------------

complex64, complex128 = scalar_types(dtypes.complex64, dtypes.complex128)
csingle, cdouble = complex64, complex128
complex_ = complex128


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients `p` (1-d, highest power first), as a
    complex array (always complex, as jnp.roots): the eigenvalues of its companion matrix.
    With strip_zeros (the default) leading zero coefficients are dropped first, as NumPy
    does, which reads p's values (not under jit); with strip_zeros=False the result keeps
    len(p) - 1 entries, the roots those zeros stand for being NaN (usable under jit).

    >>> jnp.roots(jnp.array([1.0, -3.0, 2.0]))                     # [2+0j, 1+0j]
    >>> jnp.roots(jnp.array([0.0, 1.0, 2.0]), strip_zeros=False)   # [-2+0j, nan+nanj]
    """
    jnp = _np_mod()
    x = _arr(p, "roots", "p")
    if dtypes.kind(x.dtype) not in "biufc":
        raise TypeError(f"roots: p must be numeric, got {x.dtype}")
    if not isinstance(strip_zeros, (bool, np.bool_)):
        raise TypeError(f"roots: strip_zeros must be a bool, got {strip_zeros!r}")
    if dtypes.kind(x.dtype) in "biu":
        dt, weak = dtypes.result_type(x)
        x = x.astype(dtypes.inexact_dtype(dt, weak))
    if x.dtype in dtypes.STORAGE_FLOATS:   # (LAPACK has none; JAX raises for them)
        raise TypeError(f"roots: {x.dtype} coefficients are not supported (the eigenvalue "
                        "routine has no 16- or 8-bit precision); convert with "
                        ".astype(jnp.float32)")
    x = jnp.atleast_1d(x)
    if x.ndim != 1:
        raise ValueError(f"roots: p must be a 1-d array of coefficients, got shape "
                         f"{tuple(x.shape)}")
    cdt = x.dtype if dtypes.is_complex(x.dtype) else dtypes.COMPLEX_OF[x.dtype]
    n = x.shape[0]
    if n < 2:
        return jnp.zeros((0,), cdt)
    if strip_zeros:
        if isinstance(x, Tracer):
            raise TypeError("roots: strip_zeros=True counts the leading zero coefficients, "
                            "which a traced array (under jit, vmap or grad) does not have; "
                            "pass strip_zeros=False (those roots are then NaN)")
        nonzero = np.flatnonzero(np.asarray(x) != 0)
        return _companion_roots(x[int(nonzero[0]) if nonzero.size else n:])
    # the leading zeros rolled to the end make as many zero roots, replaced by NaN
    is_zero = x == 0
    lead = jnp.where(jnp.all(is_zero), n, jnp.argmin(is_zero)).astype(dtypes.int32)
    x = jnp.where(lead == n, jnp.ones_like(x), x)      # (all zeros: no LAPACK error)
    r = _companion_roots(jnp.roll(x, -lead))
    from ..primitives.complex_ops import complex as lax_complex
    order = jnp.argsort(r == 0, stable=True)            # zero roots last, order kept
    # (part by part: gathers move elements of at most 8 bytes, not complex128's 16)
    r = lax_complex(jnp.take(jnp.real(r), order), jnp.take(jnp.imag(r), order))
    m = n - 1
    return jnp.where(jnp.arange(m) < m - lead, r, jnp.full((), complex(np.nan, np.nan), cdt))


def _companion_roots(p):
    """The eigenvalues of p's companion matrix (first row -p[1:] / p[0], ones below the
    diagonal): the roots of p, p[0] != 0."""
    jnp = _np_mod()
    n = p.shape[0]
    cdt = p.dtype if dtypes.is_complex(p.dtype) else dtypes.COMPLEX_OF[p.dtype]
    if n < 2:
        return jnp.zeros((0,), cdt)
    top = (-p[1:] / p[0])[None, :]
    a = jnp.concatenate([top, jnp.eye(n - 2, n - 1, dtype=p.dtype)], axis=0)
    return jnp.linalg.eigvals(a)


def sort_complex(a):
    """`a` sorted along its last axis by real part, then imaginary part, as a complex array
    (as jnp.sort_complex).

    >>> jnp.sort_complex(jnp.array([1 + 2j, 1 - 1j, 0.5]))   # [0.5+0j, 1-1j, 1+2j]
    """
    jnp = _np_mod()
    x = _arr(a, "sort_complex", "a")
    if not dtypes.is_complex(x.dtype):
        if dtypes.kind(x.dtype) not in "biuf":
            raise TypeError(f"sort_complex: a must be numeric, got {x.dtype}")
        x = x.astype(dtypes.COMPLEX_OF.get(dtypes.inexact_dtype(x.dtype), dtypes.complex64))
    if x.ndim == 0:
        return x
    order = jnp.lexsort((jnp.imag(x), jnp.real(x)), axis=-1)
    return jnp.take_along_axis(x, order, axis=-1)


def angle(z, deg=False):
    """The angle of each element seen as a complex number (atan2(imag, real)): for real
    arrays 0 where z >= 0 and pi where z < 0 (NaN kept), as jnp.angle.

    >>> jnp.angle(jnp.array([-1.0, 2.0]))        # [3.1415927, 0]
    """
    jnp = _np_mod()
    x = _arr(z, "angle", "z")
    if dtypes.is_complex(x.dtype):
        out = jnp.arctan2(jnp.imag(x), jnp.real(x))
        return jnp.degrees(out) if deg else out
    if dtypes.kind(x.dtype) != "f":     # (ints give the default float here, as in JAX)
        x = x.astype(dtypes.default_float_dtype())
    out = jnp.arctan2(jnp.zeros_like(x), x)
    return jnp.degrees(out) if deg else out


# ---- bits -----------------------------------------------------------------------------------

def _bitorder(bitorder, where):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{where}: bitorder must be 'big' or 'little', got {bitorder!r}")
    return bitorder


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth values of `a` into bytes along `axis` (flattened if None), 8 per byte,
    zero padded, as jnp.packbits; the bytes are uint32 values in [0, 255] (netcl has no
    uint8).

    >>> jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 1, 1]))    # [177, 128]
    """
    jnp = _np_mod()
    x = _arr(a, "packbits", "a")
    if dtypes.kind(x.dtype) not in "biu":
        raise TypeError(f"packbits: a must be a bool or integer array, got {x.dtype}")
    _bitorder(bitorder, "packbits")
    if axis is None:
        x, ax = jnp.ravel(x), 0
    else:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or \
                not -x.ndim <= axis < x.ndim:
            raise ValueError(f"packbits: axis={axis!r} is out of range for an array of shape "
                             f"{tuple(x.shape)}")
        ax = int(axis) % x.ndim
    bits = jnp.moveaxis(x != 0, ax, -1).astype(np.uint32)
    n = bits.shape[-1]
    pad = (-n) % 8
    if pad:
        bits = jnp.concatenate([bits, jnp.zeros(bits.shape[:-1] + (pad,), np.uint32)], axis=-1)
    bits = jnp.reshape(bits, bits.shape[:-1] + ((n + pad) // 8, 8))
    w = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    out = jnp.sum(bits * jnp.asarray(w.astype(np.uint32)), axis=-1, dtype=np.uint32)
    return jnp.moveaxis(out, -1, ax)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of byte values (int32/uint32 in [0, 255]: netcl has no uint8) along `axis`
    (flattened if None), 8 per byte, as jnp.unpackbits; `count` keeps the first `count`
    bits (zero padded beyond). The bits are uint32.

    >>> jnp.unpackbits(jnp.array([177], jnp.uint32))      # [1, 0, 1, 1, 0, 0, 0, 1]
    """
    jnp = _np_mod()
    x = _arr(a, "unpackbits", "a")
    if dtypes.kind(x.dtype) not in "iu":
        raise TypeError(f"unpackbits: a must be an integer array of byte values, got {x.dtype}")
    _bitorder(bitorder, "unpackbits")
    if count is not None and (isinstance(count, bool) or not isinstance(count, (int,
                                                                               np.integer))):
        raise TypeError(f"unpackbits: count must be an int or None, got {count!r}")
    if axis is None:
        x, ax = jnp.ravel(x), 0
    else:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or \
                not -x.ndim <= axis < x.ndim:
            raise ValueError(f"unpackbits: axis={axis!r} is out of range for an array of shape "
                             f"{tuple(x.shape)}")
        ax = int(axis) % x.ndim
    u = jnp.moveaxis(x, ax, -1).astype(np.uint32)
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    bits = jnp.right_shift(u[..., None], jnp.asarray(shifts.astype(np.uint32))) & \
        jnp.asarray(np.uint32(1))
    bits = jnp.reshape(bits, bits.shape[:-2] + (bits.shape[-2] * 8,))
    if count is not None:
        n = bits.shape[-1]
        c = count if count >= 0 else max(n + count, 0)
        if c <= n:
            bits = bits[..., :c]
        else:
            bits = jnp.concatenate([bits, jnp.zeros(bits.shape[:-1] + (c - n,), np.uint32)],
                                   axis=-1)
    return jnp.moveaxis(bits, -1, ax)


# ---- ufuncs ---------------------------------------------------------------------------------

class ufunc:
    """A function with NumPy's ufunc methods, as jnp.ufunc: `func` applies elementwise (it
    is called on whole broadcast arrays, so it must be written with array operations);
    `outer`, `reduce` (along an axis, from `identity` where given), `accumulate`.

    >>> f = jnp.ufunc(lambda a, b: a * b + 1, nin=2, nout=1)
    >>> f.outer(jnp.arange(2.0), jnp.arange(3.0)).shape       # (2, 3)
    """

    def __init__(self, func, nin, nout, *, name=None, nargs=None, identity=None,
                 associative=False):
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {type(func).__name__}")
        for n, v in (("nin", nin), ("nout", nout)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"ufunc: {n} must be a positive int, got {v!r}")
        self._func, self.nin, self.nout = func, nin, nout
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.nargs = nargs or nin
        self.identity = identity
        self._associative = associative     # reduce may then pair elements in a tree

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}: takes {self.nin} argument(s), got {len(args)}")
        return self._func(*args, **kwargs)

    def _binary(self, what):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{self.__name__}.{what}: only binary ufuncs with one output "
                             f"have {what} (this one has nin={self.nin}, nout={self.nout})")

    def outer(self, A, B, /, **kwargs):
        """f(A[..., None...], B) for every pair: shape A.shape + B.shape."""
        self._binary("outer")
        jnp = _np_mod()
        a, b = _arr(A, f"{self.__name__}.outer", "A"), _arr(B, f"{self.__name__}.outer", "B")
        return self(jnp.reshape(a, tuple(a.shape) + (1,) * b.ndim), b, **kwargs)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """f folded over `axis` (None: all axes), from `initial` or the identity where
        given: in order, one element at a time, or in a pairwise tree for the associative
        functions (add, multiply, maximum, logical and bitwise and/or/xor, ...)."""
        self._binary("reduce")
        from ..lax_extras import reduce as _reduce
        jnp = _np_mod()
        where_ = f"{self.__name__}.reduce"
        if out is not None:
            raise TypeError(f"{where_}: out= is not supported (arrays are immutable)")
        if where is not None:
            raise NotImplementedError(f"{where_}: where= is not supported")
        x = _arr(a, where_, "a")
        if dtype is not None:
            x = x.astype(dtypes.canonicalize(dtype, where=where_))
        axes = tuple(range(x.ndim)) if axis is None else \
            tuple(np.atleast_1d(axis).tolist())
        init = initial if initial is not None else self.identity
        flat = _flatten_axes(x, axes)
        if flat.shape[0] == 0:
            if init is None:
                raise ValueError(f"{where_}: zero-size reduction of a ufunc without identity")
            res = jnp.full(flat.shape[1:], init, x.dtype)
        elif self._associative:     # a pairwise tree: O(log n) calls
            if init is None:
                res = flat[0] if flat.shape[0] == 1 else \
                    _reduce(flat[1:], flat[0], self._func, (0,))
            else:
                res = _reduce(flat, jnp.asarray(init, dtype=x.dtype), self._func, (0,))
        else:                       # in order, one element at a time
            res = flat[0] if init is None else self._func(jnp.asarray(init, x.dtype), flat[0])
            for i in range(1, flat.shape[0]):
                res = self._func(res, flat[i])
        if keepdims:
            for d in sorted(d % x.ndim for d in axes):
                res = jnp.expand_dims(res, d)
        return res

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """Running f along `axis`, one element at a time (f need not be associative)."""
        self._binary("accumulate")
        jnp = _np_mod()
        where_ = f"{self.__name__}.accumulate"
        if out is not None:
            raise TypeError(f"{where_}: out= is not supported (arrays are immutable)")
        x = _arr(a, where_, "a")
        if dtype is not None:
            x = x.astype(dtypes.canonicalize(dtype, where=where_))
        if x.ndim == 0:
            raise ValueError(f"{where_}: a must have at least one axis")
        ax = int(axis) % x.ndim
        xs = jnp.moveaxis(x, ax, 0)
        if xs.shape[0] == 0:
            return x
        acc, outs = xs[0], [xs[0]]
        for i in range(1, xs.shape[0]):
            acc = self._func(acc, xs[i])
            outs.append(acc)
        return jnp.moveaxis(jnp.stack(outs), 0, ax)


def _flatten_axes(x, axes):
    """x with the reduced axes moved in front and merged into one."""
    jnp = _np_mod()
    axes = tuple(sorted({d % x.ndim for d in axes})) if x.ndim else ()
    keep = tuple(d for d in range(x.ndim) if d not in axes)
    n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    return jnp.reshape(jnp.transpose(x, axes + keep), (n,) + tuple(x.shape[d] for d in keep))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ufunc from `func`, as jnp.frompyfunc (func is called on whole arrays, so it must
    be written with array operations).

    >>> f = jnp.frompyfunc(jnp.maximum, 2, 1, identity=-jnp.inf); f.reduce(x)
    """
    return ufunc(func, nin, nout, identity=identity)


# The binary functions JAX makes ufuncs: their methods, on netcl.numpy's functions.
# name -> (identity, associative)
_BINARY = {"add": (0, True), "multiply": (1, True), "subtract": (None, False),
           "maximum": (None, True), "minimum": (None, True), "logical_and": (True, True),
           "logical_or": (False, True), "logical_xor": (False, True),
           "bitwise_and": (-1, True), "bitwise_or": (0, True), "bitwise_xor": (0, True),
           "true_divide": (None, False), "divide": (None, False), "power": (None, False),
           "arctan2": (None, False), "hypot": (None, True), "logaddexp": (None, True),
           "fmax": (None, True), "fmin": (None, True)}


def install():
    """Give netcl.numpy's binary functions the ufunc methods (called once, on import)."""
    jnp = _np_mod()
    for name, (ident, assoc) in _BINARY.items():
        f = getattr(jnp, name, None)
        if f is None or hasattr(f, "outer"):
            continue
        u = ufunc(f, 2, 1, name=name, identity=ident, associative=assoc)
        try:
            f.outer, f.reduce, f.accumulate = u.outer, u.reduce, u.accumulate
            f.nin, f.nout, f.identity = 2, 1, ident
        except AttributeError:      # (a builtin that takes no attributes)
            pass
