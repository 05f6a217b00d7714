"""Argument checks shared by netcl.optim: hyperparameters are validated when a transformation
is built (never inside `update`, which must stay traceable), and states are checked against
the trees they are meant for."""
import math
import numbers

from ..core.array import Array
from ..core.tracing import Tracer
from ..tree_util import tree_structure


def is_static_number(x):
    """A Python/NumPy real number (not an array, not a tracer)."""
    return isinstance(x, numbers.Real) and not isinstance(x, (Array, Tracer))


def _interval(lo, hi, lo_open, hi_open):
    left = "-inf" if lo is None else f"{lo:g}"
    right = "inf" if hi is None else f"{hi:g}"
    opening = "(" if lo_open or lo is None else "["
    closing = ")" if hi_open or hi is None else "]"
    return f"{opening}{left}, {right}{closing}"


def hyperparam(where, name, value, lo=None, hi=None, lo_open=False, hi_open=False):
    """Check a scalar hyperparameter: a static number must lie in the interval (raises
    ValueError naming `where` and `name`); an array or tracer passes unchecked (it may be
    traced). Static numbers come back as Python floats, so they stay weakly typed."""
    if isinstance(value, (Array, Tracer)):
        return value
    if not is_static_number(value):
        raise TypeError(f"{where}: {name} must be a real number or a netcl array, got "
                        f"{type(value).__name__} {value!r}")
    v = float(value)
    bad = math.isnan(v)
    if lo is not None:
        bad = bad or v < lo or (lo_open and v == lo)
    if hi is not None:
        bad = bad or v > hi or (hi_open and v == hi)
    if bad:
        raise ValueError(f"{where}: {name} must be in {_interval(lo, hi, lo_open, hi_open)}, "
                         f"got {value!r}")
    return v


def decay_rate(where, name, value, allow_one=True):
    """A decay/momentum rate: [0, 1] (or [0, 1) when `allow_one` is False)."""
    return hyperparam(where, name, value, 0.0, 1.0, hi_open=not allow_one)


def non_negative(where, name, value):
    return hyperparam(where, name, value, lo=0.0)


def learning_rate(where, value, name="learning_rate"):
    """A learning rate: a schedule (any callable of the step count) or a number >= 0."""
    if callable(value):
        return value
    return hyperparam(where, name, value, lo=0.0)


def state_type(where, state, cls):
    """The state handed to `update` must be the one this transformation's `init` made."""
    if not isinstance(state, cls):
        raise ValueError(f"{where}: expected a {cls.__name__} as state, got "
                         f"{type(state).__name__}; was the state made by another "
                         f"optimizer's init?")


def same_structure(where, a, a_name, b, b_name):
    """Raise ValueError naming both structures when trees `a` and `b` differ in structure."""
    ta, tb = tree_structure(a), tree_structure(b)
    if ta != tb:
        raise ValueError(f"{where}: {a_name} and {b_name} have different tree structures "
                         f"(was the optimizer state initialised from another parameter "
                         f"tree?)\n  {a_name}: {ta!r}\n  {b_name}: {tb!r}")


def need_params(where, params, updates):
    if params is None:
        raise ValueError(f"{where}: this transformation needs the current params; call "
                         f"update(updates, state, params)")
    same_structure(where, updates, "updates", params, "params")
