"""Combinators: serial, parallel, FanOut, FanInSum, FanInConcat, shape_dependent.

They follow stax (parameter trees: a list for serial, a tuple for parallel; the apply-time
``rng`` is split into one key per child) and also thread the state convention: with
``init_fun(..., return_state=True)`` the state tree mirrors the parameter tree (a list for
serial, a tuple for parallel, ``()`` for layers without state), and
``apply_fun(params, x, state=state, ...)`` returns ``(outputs, new_state)``. Children that
are plain stax layers (no ``stax_state`` attribute) are called the stax way and keep ``()``.
"""
import functools

from .. import numpy as jnp
from .. import random
from ._core import apply_with_state, as_shape, init_with_state, positive_int, shape_of, \
    stateless

__all__ = ["serial", "parallel", "FanOut", "FanInSum", "FanInConcat", "shape_dependent"]


def _check_layers(layers, where):
    for i, layer in enumerate(layers):
        if not (isinstance(layer, (tuple, list)) and len(layer) == 2 and all(map(callable, layer))):
            raise TypeError(f"{where}: layer {i} must be an (init_fun, apply_fun) pair, got "
                            f"{type(layer).__name__} {layer!r:.80}")
    return zip(*layers) if layers else ((), ())


def _check_len(tree, n, what, where):
    if not isinstance(tree, (list, tuple)) or len(tree) != n:
        got = f"{type(tree).__name__} of length {len(tree)}" if isinstance(
            tree, (list, tuple)) else type(tree).__name__
        raise ValueError(f"{where}: {what} must be a list/tuple with one entry per layer "
                         f"({n}), got {got}")


def serial(*layers):
    """Compose layers in sequence. params: a list, one entry per layer (as stax).

    apply_fun(params, x, rng=None, state=None, **kwargs): ``rng`` is split into one key per
    layer; other kwargs (e.g. ``mode``) reach every layer; with ``state`` (a list, one entry
    per layer) returns ``(outputs, new_state)``.
    """
    init_funs, apply_funs = _check_layers(layers, "serial")
    n = len(layers)

    def init_fun(rng, input_shape, *, return_state=False):
        params, states = [], []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p, s = init_with_state(init, layer_rng, input_shape)
            params.append(p)
            states.append(s)
        return (input_shape, params, states) if return_state else (input_shape, params)

    def apply_fun(params, inputs, *, rng=None, state=None, **kwargs):
        _check_len(params, n, "params", "serial")
        rngs = random.split(rng, n) if rng is not None and n else (None,) * n
        if state is None:
            for fun, p, r in zip(apply_funs, params, rngs):
                inputs = fun(p, inputs, rng=r, **kwargs)
            return inputs
        _check_len(state, n, "state", "serial")
        new_state = []
        for fun, p, s, r in zip(apply_funs, params, state, rngs):
            inputs, s = apply_with_state(fun, p, inputs, s, rng=r, **kwargs)
            new_state.append(s)
        return inputs, new_state

    init_fun.stax_state = apply_fun.stax_state = True
    return init_fun, apply_fun


def parallel(*layers):
    """Apply layers side by side to a sequence of inputs (one input per layer); outputs are
    a list. params: a tuple, one entry per layer (as stax). Used with FanOut and FanInSum /
    FanInConcat.
    """
    init_funs, apply_funs = _check_layers(layers, "parallel")
    n = len(layers)

    def init_fun(rng, input_shape, *, return_state=False):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != n or \
                not all(isinstance(s, (list, tuple)) for s in input_shape):
            raise ValueError(f"parallel: expects a sequence of {n} input shapes (one per "
                             f"layer; use FanOut({n}) before it), got {input_shape!r}")
        rngs = random.split(rng, n) if n else ()
        res = [init_with_state(init, r, s) for init, r, s in zip(init_funs, rngs, input_shape)]
        shapes = tuple(r[0] for r in res)
        params = tuple(r[1] for r in res)
        if return_state:
            return shapes, params, tuple(r[2] for r in res)
        return shapes, params

    def apply_fun(params, inputs, *, rng=None, state=None, **kwargs):
        _check_len(params, n, "params", "parallel")
        if not isinstance(inputs, (list, tuple)) or len(inputs) != n:
            raise ValueError(f"parallel: expects a list of {n} inputs (one per layer), got "
                             f"{type(inputs).__name__}"
                             + (f" of length {len(inputs)}" if isinstance(inputs, (list, tuple))
                                else f" of shape {shape_of(inputs)}"))
        rngs = random.split(rng, n) if rng is not None and n else (None,) * n
        if state is None:
            return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs,
                                                                    rngs)]
        _check_len(state, n, "state", "parallel")
        res = [apply_with_state(f, p, x, s, rng=r, **kwargs)
               for f, p, x, s, r in zip(apply_funs, params, inputs, state, rngs)]
        return [y for y, _ in res], tuple(s for _, s in res)

    init_fun.stax_state = apply_fun.stax_state = True
    return init_fun, apply_fun


def FanOut(num):
    """Copy the input ``num`` times (a list), for ``parallel`` to consume."""
    num = positive_int(num, "num", "FanOut")
    return stateless(lambda rng, input_shape: ([as_shape(input_shape, "FanOut")] * num, ()),
                     lambda params, inputs, **kwargs: [inputs] * num)


def _shape_list(input_shape, where):
    if not isinstance(input_shape, (list, tuple)) or not input_shape or \
            not all(isinstance(s, (list, tuple)) for s in input_shape):
        raise ValueError(f"{where}: expects a non-empty sequence of input shapes, got "
                         f"{input_shape!r}")
    return [as_shape(s, where) for s in input_shape]


def _fan_in_sum():
    def init_fun(rng, input_shape):
        shapes = _shape_list(input_shape, "FanInSum")
        if any(s != shapes[0] for s in shapes):
            raise ValueError(f"FanInSum: all inputs must have the same shape, got {shapes}")
        return shapes[0], ()

    def apply_fun(params, inputs, **kwargs):
        if not isinstance(inputs, (list, tuple)) or not inputs:
            raise ValueError(f"FanInSum: expects a non-empty list of inputs, got "
                             f"{type(inputs).__name__}")
        shapes = [shape_of(x) for x in inputs]
        if any(s != shapes[0] for s in shapes):
            raise ValueError(f"FanInSum: all inputs must have the same shape, got {shapes}")
        return functools.reduce(jnp.add, inputs)
    return stateless(init_fun, apply_fun)


FanInSum = _fan_in_sum()  # a layer (not a constructor), as in stax


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along ``axis``."""
    def init_fun(rng, input_shape):
        shapes = _shape_list(input_shape, "FanInConcat")
        rank = len(shapes[0])
        if not -rank <= axis < rank:
            raise ValueError(f"FanInConcat: axis {axis} is out of range for input shapes "
                             f"{shapes}")
        ax = axis % rank
        rest = {s[:ax] + s[ax + 1:] for s in shapes}
        if any(len(s) != rank for s in shapes) or len(rest) != 1:
            raise ValueError(f"FanInConcat: input shapes {shapes} must agree except along "
                             f"axis {axis}")
        size = sum(s[ax] for s in shapes)
        return shapes[0][:ax] + (size,) + shapes[0][ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(list(inputs), axis)
    return stateless(init_fun, apply_fun)


def shape_dependent(make_layer):
    """Delay building a layer until its input shape is known: ``make_layer(input_shape)``
    returns an (init_fun, apply_fun) pair (called again at apply time with ``inputs.shape``).
    """
    def init_fun(rng, input_shape, *, return_state=False):
        res = init_with_state(make_layer(input_shape)[0], rng, input_shape)
        return res if return_state else res[:2]

    def apply_fun(params, inputs, *, state=None, **kwargs):
        fun = make_layer(shape_of(inputs))[1]
        if state is None:
            return fun(params, inputs, **kwargs)
        return apply_with_state(fun, params, inputs, state, **kwargs)

    init_fun.stax_state = apply_fun.stax_state = True
    return init_fun, apply_fun
