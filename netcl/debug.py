"""netcl.debug: jax.debug's printing and callbacks.

`print(fmt, *args, **kwargs)` formats host copies of the arrays with `str.format` and prints
the line; `callback(fn, *args, **kwargs)` calls `fn` on host (NumPy) copies. Eagerly they run
at once. Under grad/jvp they see the primal values; under vmap they run once per batch
element; under jit they run when the compiled function runs, every call, with that call's
values (netcl.callbacks' `debug_callback_p`, a step of the compiled function).

Limitation under jit: netcl's jit drops computations whose results nothing reads, and a
print is kept by making what is computed afterwards read the printed values through it. A
print of values that nothing after it reads (and that are not results of the function) is
dropped from the compiled function: print values that are used afterwards or returned.

>>> @netcl.jit
... def f(x):
...     y = jnp.sin(x)
...     netcl.debug.print("y = {y}, sum {s:.3f}", y=y, s=y.sum())
...     return y * 2
"""
import builtins
import sys

import numpy as np

from .callbacks import emit_debug_callback
from .core.array import Array
from .core.tracing import Tracer

__all__ = ["print", "callback", "breakpoint", "inspect_array_sharding",
           "visualize_array_sharding", "visualize_sharding"]


def _is_array(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


class _Rebuild:
    """Host values of the array leaves back into the call's (args, kwargs) structure."""
    __slots__ = ("fn", "tree", "static")

    def __init__(self, fn, tree, static):
        self.fn, self.tree, self.static = fn, tree, static

    def __call__(self, *values):
        from .tree_util import tree_unflatten
        it = iter(values)
        leaves = [next(it) if s is _DYN else s for s in self.static]
        args, kwargs = tree_unflatten(self.tree, leaves)
        self.fn(*args, **kwargs)


_DYN = object()


def _split(where, args, kwargs):
    from .tree_util import tree_flatten
    leaves, tree = tree_flatten((args, kwargs))
    static, dyn = [], []
    for x in leaves:
        if _is_array(x):
            static.append(_DYN)
            dyn.append(x)
        else:
            static.append(x)
    return dyn, tree, tuple(static)


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Call `callback(*args, **kwargs)` with the arrays among them as host NumPy arrays, for
    its effect (logging, plotting), as jax.debug.callback; returns None. See the module
    docstring for when it runs under jit, grad and vmap. (`ordered` is accepted: netcl's
    callbacks run in program order.)

    >>> netcl.debug.callback(lambda x: print(x.sum()), jnp.arange(3.0))
    """
    if not callable(callback):
        raise TypeError(f"debug.callback: callback must be callable, got "
                        f"{type(callback).__name__}")
    dyn, tree, static = _split("debug.callback", args, kwargs)
    emit_debug_callback(_Rebuild(callback, tree, static), dyn)


class _Printer:
    __slots__ = ("fmt",)

    def __init__(self, fmt):
        self.fmt = fmt

    def __call__(self, *args, **kwargs):
        builtins.print(self.fmt.format(*args, **kwargs), file=sys.stdout, flush=True)


def print(fmt, *args, ordered=False, **kwargs):    # noqa: A001 (jax.debug.print's name)
    """Print `fmt.format(*args, **kwargs)`, with the arrays as host NumPy values, as
    jax.debug.print: eagerly at once, under jit each time the compiled function runs (see
    the module docstring's limitation), under vmap once per element, under grad the primal.

    >>> netcl.debug.print("x = {}, mean {m:.2f}", x, m=x.mean())
    """
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: fmt must be a format string, got {type(fmt).__name__}")
    # a bad format string fails here, at the call, not later inside a compiled function
    try:
        fmt.format(*[0] * len(args), **{k: 0 for k in kwargs})
    except (IndexError, KeyError) as e:
        raise ValueError(f"debug.print: format string {fmt!r} does not match the {len(args)} "
                         f"positional and {sorted(kwargs)} keyword arguments given ({e!r})") \
            from None
    except (ValueError, TypeError):
        pass    # a format spec that 0 does not take (e.g. "{:s}"): checked when it runs
    callback(_Printer(fmt), *args, **kwargs)


def breakpoint(*args, **kwargs):    # noqa: A001
    """jax.debug.breakpoint: not supported (netcl has no interactive debugger for compiled
    code); raises NotImplementedError. Use netcl.disable_jit() and Python's breakpoint()."""
    raise NotImplementedError("debug.breakpoint: not supported in netcl; run the function "
                              "under netcl.disable_jit() and use Python's breakpoint()")


from .debug_sharding import (inspect_array_sharding,  # noqa: E402,F401
                             visualize_array_sharding, visualize_sharding)
