"""netcl.numpy: the jax.numpy surface over netcl's primitives.

Every function converts its arguments (Python scalars are weakly typed), promotes dtypes
as JAX does, broadcasts with NumPy's rules, and binds primitives; nothing else.

>>> import netcl.numpy as jnp
>>> jnp.sum(jnp.arange(4.0) * 2.0)
"""
from ..core.array import AnyArray as ndarray  # noqa: F401
from ..core import dtypes as _dtypes
from .scalar_types import ScalarType, scalar_types
from .creation import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .index_update import *  # noqa: F401,F403
from .selection import *  # noqa: F401,F403
from .joining import *  # noqa: F401,F403
from .linalg_ops import *  # noqa: F401,F403
from .manipulation import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .composites import *  # noqa: F401,F403
from .polynomials import *  # noqa: F401,F403
from .searching import *  # noqa: F401,F403
from .aliases import *  # noqa: F401,F403
from .extra_ops import *  # noqa: F401,F403
from .extra_numeric import *  # noqa: F401,F403
from .signals import *  # noqa: F401,F403
from .surface_extras import *  # noqa: F401,F403
from .surface_extras_hist import *  # noqa: F401,F403

import numpy as _np

pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
bool_, float16, bfloat16, float32, float64, int32, uint32, int64, uint64 = scalar_types(
    _dtypes.bool_, _dtypes.float16, _dtypes.bfloat16, _dtypes.float32, _dtypes.float64,
    _dtypes.int32, _dtypes.uint32, _dtypes.int64, _dtypes.uint64)
bool_.__name__ = bool_.__qualname__ = "bool_"
# the 8-bit floats, as jnp.float8_e4m3fn, jnp.float8_e5m2, ..., and the MX floats,
# jnp.float4_e2m1fn, jnp.float6_e2m3fn, jnp.float6_e3m2fn (storage dtypes, as bfloat16)
globals().update({_t.__name__: _t for _t in scalar_types(*_dtypes.FLOAT8)})
# the narrow integers jnp.int4, jnp.uint4, jnp.int2, jnp.uint2, jnp.int1, jnp.uint1
globals().update({_t.__name__: _t for _t in scalar_types(*_dtypes.SUBBYTE_INTS)})
# (int64, uint64, float64: without x64, arrays asked for them get int32, uint32, float32)
# Named so that asking for them raises (dtypes.canonicalize) instead of giving int32 silently.
int8, int16, uint8, uint16 = (_np.dtype(t) for t in (_np.int8, _np.int16, _np.uint8, _np.uint16))
float_ = float64  # as in JAX; without x64 it gives float32 and warns, as jnp.float64 does
integer, floating, number, bool = _np.integer, _np.floating, _np.number, bool_  # noqa: A001


def dtype(x):
    return _np.dtype(x)


def result_type(*args):
    """The dtype JAX's promotion gives `args`: arrays, Python scalars, dtypes, and Python's
    int and float types (weak, as Python scalars are: `result_type(float)` is the default
    float, float64 with x64, and `result_type(jnp.float32, float)` float32 either way).

    >>> jnp.result_type(jnp.ones(2, jnp.int32), 1.0)    # float32 (float64 with x64)
    """
    from ..core.dtypes import result_type as _rt
    from ._util import promotion_operand
    return _rt(*[promotion_operand(a, "result_type") for a in args])[0]


def issubdtype(a, b):
    """NumPy's issubdtype, where bfloat16 and the 8-bit and MX floats are floating types,
    and int4, uint4, ... (un)signed integers (as in JAX).

    >>> jnp.issubdtype(jnp.bfloat16, jnp.floating)   # True
    >>> jnp.issubdtype(jnp.int4, jnp.signedinteger)  # True
    """
    ml = [_ml_float(t) for t in (a, b)]     # (an np.dtype is falsy: compare with None)
    if ml[0] is not None or ml[1] is not None:
        return ml[0] is not None and (ml[1] == ml[0] or b in _ML_PARENTS[_dtypes.kind(ml[0])])
    return _np.issubdtype(a, b)


# the abstract NumPy types above each kind of ml_dtypes' dtypes
_ML_PARENTS = {"f": (_np.floating, _np.inexact, _np.number, _np.generic),
               "i": (_np.signedinteger, _np.integer, _np.number, _np.generic),
               "u": (_np.unsignedinteger, _np.integer, _np.number, _np.generic)}


def _ml_float(t):
    """The dtype `t` names where it is one of ml_dtypes' (bfloat16, an 8-bit or MX float, a
    narrow integer: NumPy does not know them as floating or integer), else None."""
    try:
        d = _np.dtype(getattr(t, "dtype", t))
    except TypeError:    # abstract types (np.floating) are no dtype
        return None
    return d if d == _dtypes.bfloat16 or d in _dtypes.FLOAT8 or d in _dtypes.SUBBYTE_INTS \
        else None


from . import linalg  # noqa: E402,F401
from . import methods as _methods  # noqa: E402

_methods.install()

# Errors escaping a public function name it (zeros, not full; divide, not true_divide). After
# `install`, so that the array operators keep calling the functions themselves.
from ._errors import wrap_namespace as _wrap_namespace  # noqa: E402

_wrap_namespace(globals(), [_n for _n in list(globals()) if not _n.startswith("_")])

# ufunc objects and methods, packbits/unpackbits, the complex scalar types, fft
from .ufuncs import *  # noqa: E402,F401,F403
from .ufuncs import install as _install_ufuncs  # noqa: E402
from . import fft  # noqa: E402,F401

_install_ufuncs()
_wrap_namespace(globals(), ["frompyfunc", "packbits", "unpackbits", "roots", "sort_complex",
                            "angle"])
