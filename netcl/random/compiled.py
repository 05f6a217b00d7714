"""Samplers called eagerly run as one compiled function, as JAX's do.

`normal(key, (256, 256))` is a dozen primitives (counters, threefry, bit tricks, erf_inv).
Run one by one, each is a kernel of its own to build on first use and to launch on every
call; compiled, they are a threefry kernel and one fused kernel whose sources serve every
shape (sizes are kernel arguments), built together as one program. Under a transform the
sampler's primitives join the caller's trace instead.

Arrays and Python floats are the compiled function's arguments (a float such as a
bernoulli probability may change every call without recompiling); every other hashable
value (shape, dtype, Python ints and bools, None) is static, so a sampler that treats a
Python int bound apart from an array bound (randint) keeps doing so. A call with any other
argument (a list, a NumPy or sharded array) runs eagerly, where the sampler checks it and
says what is wrong. Used as a decorator:

    @compiled_when_eager
    def normal(key, shape=(), dtype=float): ...
"""
import functools
import inspect

import numpy as np

from ..core.array import Array, ArrayBase
from ..core.eval import eval_interpreter
from ..core.tracing import current_interpreter


def compiled_when_eager(fun):
    """`fun` (a sampler) compiled per call signature when called outside any transform."""
    from ..transforms.jit import jit     # (transforms import the random module's users)
    signature = inspect.signature(fun)
    jitted = {}     # the static parameter names of a call -> fun jitted for them

    @functools.wraps(fun)
    def sampler(*args, **kwargs):
        if current_interpreter() is not eval_interpreter:
            return fun(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fun(*args, **kwargs)         # (fun raises the TypeError, naming itself)
        static = []
        for name, value in bound.arguments.items():
            if type(value) is Array or type(value) is float:
                continue
            if isinstance(value, (list, ArrayBase, np.ndarray)):
                return fun(*args, **kwargs)
            try:
                hash(value)
            except TypeError:
                return fun(*args, **kwargs)
            static.append(name)
        static = tuple(static)
        compiled = jitted.get(static)
        if compiled is None:
            compiled = jitted[static] = jit(fun, static_argnames=static)
        return compiled(**bound.arguments)

    sampler.eager = fun
    return sampler
