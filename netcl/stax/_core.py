"""The layer protocol, the state convention, and small shared helpers.

A layer is a pair ``(init_fun, apply_fun)`` as in jax.example_libraries.stax:

    init_fun(rng, input_shape)              -> (output_shape, params)
    apply_fun(params, inputs, **kwargs)     -> outputs

netcl's layers also speak the *state* convention (see netcl/stax/__init__.py):

    init_fun(rng, input_shape, return_state=True)  -> (output_shape, params, state)
    apply_fun(params, inputs, state=state, **kw)   -> (outputs, new_state)

Such functions carry the attribute ``stax_state = True``. Layers without it (for example
plain stax layers written by users) still compose: the combinators give them the state ``()``
and call them the stax way.
"""
import operator

import numpy as np

__all__ = ["init_with_state", "apply_with_state", "stateless", "check_mode", "as_shape"]

_MODES = {"train": "train", "eval": "eval", "test": "eval"}


def _mark(fn):
    fn.stax_state = True
    return fn


def init_with_state(init_fun, rng, input_shape):
    """``(output_shape, params, state)`` of any layer's init_fun (state ``()`` for layers that
    do not speak the state convention)."""
    if getattr(init_fun, "stax_state", False):
        return init_fun(rng, input_shape, return_state=True)
    out_shape, params = init_fun(rng, input_shape)
    return out_shape, params, ()


def apply_with_state(apply_fun, params, inputs, state, **kwargs):
    """``(outputs, new_state)`` of any layer's apply_fun."""
    if getattr(apply_fun, "stax_state", False):
        return apply_fun(params, inputs, state=state, **kwargs)
    return apply_fun(params, inputs, **kwargs), state


def stateless(init_fun, apply_fun):
    """Make a stax pair without state speak the state convention (its state is ``()``)."""
    def init(rng, input_shape, *, return_state=False):
        out_shape, params = init_fun(rng, input_shape)
        return (out_shape, params, ()) if return_state else (out_shape, params)

    def apply(params, inputs, *, state=None, **kwargs):
        out = apply_fun(params, inputs, **kwargs)
        return out if state is None else (out, state)
    init.__doc__, apply.__doc__ = init_fun.__doc__, apply_fun.__doc__
    init.__qualname__ = getattr(init_fun, "__qualname__", "init_fun")
    apply.__qualname__ = getattr(apply_fun, "__qualname__", "apply_fun")
    return _mark(init), _mark(apply)


def add_bias(y, b):
    """``y + b`` for a layer's product `y` and bias `b`: a float32 bias joins a 16-bit product
    in the product's dtype (cast, not promoted), as PyTorch's layers add theirs inside the
    product, so that under autocast a layer's output stays 16-bit and the activations
    between layers take half the memory; the bias's gradient comes back float32 through
    the cast. Other dtypes add as jnp.add does.

    >>> add_bias(jnp.ones(3, jnp.bfloat16), jnp.ones(3)).dtype      # bfloat16
    """
    from .. import numpy as jnp
    from ..core import dtypes
    if y.dtype in dtypes.HALF and b.dtype == dtypes.float32:
        b = b.astype(y.dtype)
    return jnp.add(y, b)


def check_mode(mode, where):
    """'train' or 'eval' ('test', stax's word, is accepted for 'eval')."""
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"{where}: mode must be 'train' or 'eval' (or stax's 'test'), got "
                         f"{mode!r}")
    return _MODES[mode]


def as_shape(shape, where, what="input_shape"):
    """A tuple of ints (-1 allowed for an unknown batch size), or a TypeError naming `where`."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{where}: {what} must be a tuple of ints, got {shape!r}") from None


def shape_of(x):
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def positive_int(v, name, where):
    if isinstance(v, bool):
        raise TypeError(f"{where}: {name} must be a positive int, got {v!r}")
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: {name} must be a positive int, got {v!r}") from None
    if i <= 0:
        raise ValueError(f"{where}: {name} must be a positive int, got {v!r}")
    return i


def int_tuple(v, n, name, where, minimum=1):
    """``v`` (an int or a sequence of n ints, each >= minimum) as a tuple of n ints."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (v,) * n
    try:
        t = tuple(operator.index(a) for a in v)
    except TypeError:
        raise TypeError(f"{where}: {name} must be an int or a sequence of {n} ints, got "
                        f"{v!r}") from None
    if len(t) != n:
        raise ValueError(f"{where}: {name}={t} must have {n} entries")
    if any(a < minimum for a in t):
        raise ValueError(f"{where}: {name}={t} entries must be >= {minimum}")
    return t


def padding_arg(padding, n, where, allowed=("SAME", "SAME_LOWER", "VALID")):
    """A padding string (upper-cased) or a tuple of n (low, high) int pairs."""
    if isinstance(padding, str):
        p = padding.upper()
        if p not in allowed:
            raise ValueError(f"{where}: unknown padding {padding!r}; expected one of "
                             f"{', '.join(repr(a) for a in allowed)} or a sequence of {n} "
                             "(low, high) pairs")
        return p
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: padding must be a string or a sequence of {n} (low, high) "
                        f"int pairs, got {padding!r}") from None
    if len(pads) != n:
        raise ValueError(f"{where}: padding {pads} must have {n} (low, high) pairs, one per "
                         "spatial dimension")
    return pads


def dilate(k, d):
    return 0 if k == 0 else (k - 1) * d + 1


def window_out_size(n, k, s, pad, where):
    """Output length of a strided window over ``n`` elements with a (dilated) window ``k``;
    pad is 'SAME', 'SAME_LOWER', 'VALID' or a (low, high) pair. -1 (unknown) stays -1."""
    if n < 0:
        return -1
    if isinstance(pad, str):
        if pad == "VALID":
            return max(0, (n - k) // s + 1) if n >= k else 0
        return -(-n // s)
    lo, hi = pad
    total = n + lo + hi
    return (total - k) // s + 1 if total >= k else 0


def same_pads(n, k, s, mode):
    """Explicit (low, high) for 'SAME' / 'SAME_LOWER' (as lax.padtype_to_pads)."""
    o = -(-n // s)
    total = max((o - 1) * s + k - n, 0)
    lo = total // 2 if mode == "SAME" else total - total // 2
    return lo, total - lo
