"""Helpers lax_extras.py, lax_bits.py and lax_conv_extras.py share."""
import operator

from . import numpy as jnp
from .core.array import Array
from .core.tracing import Tracer


def arr(x, where, arg="operand"):
    """x as an array (Arrays and traced values as they are), or a TypeError naming `where`
    and the argument."""
    if isinstance(x, (Array, Tracer)):
        return x
    try:
        return jnp.asarray(x)
    except TypeError as e:
        raise TypeError(f"{where}: {arg} must be an array, got {type(x).__name__} ({e})") \
            from None


def ints(v, where, arg, n=None):
    """v as a tuple of ints (of length n where given), or a TypeError naming `where`."""
    if isinstance(v, (Array, Tracer, str)) or not hasattr(v, "__iter__"):
        raise TypeError(f"{where}: {arg} must be a sequence of ints, got {type(v).__name__}")
    try:
        out = tuple(operator.index(d) for d in v)
    except TypeError:
        raise TypeError(f"{where}: {arg} must be a sequence of ints, got {v!r}") from None
    if n is not None and len(out) != n:
        raise ValueError(f"{where}: {arg} {out} must have {n} entries")
    return out


def pairs(pads, n, where):
    if isinstance(pads, (Array, Tracer, str)) or not hasattr(pads, "__iter__"):
        raise TypeError(f"{where}: padding must be 'SAME', 'VALID' or (low, high) pairs, got "
                        f"{pads!r}")
    out = [ints(p, where, "padding", 2) for p in pads]
    if len(out) != n:
        raise ValueError(f"{where}: padding {pads!r} must have {n} (low, high) pairs")
    return out
