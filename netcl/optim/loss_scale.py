"""Loss scaling for mixed precision, as pure state (jmp's design).

A loss scale is an immutable pytree: `scale` multiplies the loss (or any tree) before
differentiation, `unscale` divides the gradients, and `adjust(grads_finite)` returns the
*next* loss scale. `DynamicLossScale` halves its scale (down to min_loss_scale) whenever the
gradients overflowed and doubles it after `period` finite steps in a row; its numbers are
arrays, so a jitted step can carry it:

    >>> ls = DynamicLossScale(2.0 ** 15)
    >>> def step(params, opt_state, ls, x, y):
    ...     grads = netcl.grad(lambda p: ls.scale(loss(p, x, y)))(params)
    ...     grads = ls.unscale(grads)
    ...     finite = all_finite(grads)
    ...     updates, new_state = opt.update(grads, opt_state, params)
    ...     params = select_tree(finite, apply_updates(params, updates), params)
    ...     opt_state = select_tree(finite, new_state, opt_state)
    ...     return params, opt_state, ls.adjust(finite)
"""
import dataclasses
from typing import Any

from .. import numpy as jnp
from ..core import dtypes
from ..tree_util import tree_leaves, tree_map
from . import _checks as chk

__all__ = ["NoOpLossScale", "StaticLossScale", "DynamicLossScale", "all_finite", "select_tree"]


def all_finite(tree):
    """A 0-d bool array: True when no leaf holds an inf or a NaN (True for an empty tree).

    >>> all_finite({'w': netcl.numpy.array([1.0, float('inf')])})   # False
    """
    out = None
    for x in tree_leaves(tree):
        x = jnp.asarray(x)
        f = jnp.all(jnp.isfinite(x)) if dtypes.kind(x.dtype) == "f" else jnp.asarray(True)
        out = f if out is None else jnp.logical_and(out, f)
    return jnp.asarray(True) if out is None else out


def select_tree(pred, a, b):
    """Leafwise `a if pred else b` for a 0-d bool `pred` (traceable: no Python branch).

    >>> params = select_tree(all_finite(grads), new_params, params)
    """
    chk.same_structure("select_tree", a, "a", b, "b")
    pred = jnp.asarray(pred)
    if pred.shape != () or pred.dtype != jnp.bool_:
        raise ValueError(f"select_tree: pred must be a 0-d bool array, got {pred.dtype} of "
                         f"shape {tuple(pred.shape)}")
    return tree_map(lambda x, y: jnp.where(pred, x, y).astype(jnp.asarray(x).dtype), a, b)


def _times(tree, factor):
    """Each floating leaf times `factor`, computed in float32 at least and cast back."""
    def one(x):
        x = jnp.asarray(x)
        if dtypes.kind(x.dtype) != "f":
            return x
        return (x * factor).astype(x.dtype)
    return tree_map(one, tree)


@dataclasses.dataclass(frozen=True)
class NoOpLossScale:
    """No loss scaling (the same interface, for code that is generic over policies)."""

    @property
    def loss_scale(self):
        return jnp.ones([], jnp.float32)

    def scale(self, tree):
        return tree

    def unscale(self, tree):
        return tree

    def adjust(self, grads_finite):
        del grads_finite
        return self


@dataclasses.dataclass(frozen=True)
class StaticLossScale:
    """A fixed loss scale."""
    loss_scale: Any

    def __post_init__(self):
        v = chk.hyperparam("StaticLossScale", "loss_scale", self.loss_scale, lo=0.0,
                           lo_open=True)
        object.__setattr__(self, "loss_scale", jnp.asarray(v, jnp.float32))

    def scale(self, tree):
        return _times(tree, self.loss_scale)

    def unscale(self, tree):
        return _times(tree, 1.0 / self.loss_scale)

    def adjust(self, grads_finite):
        del grads_finite
        return self


@dataclasses.dataclass(frozen=True)
class DynamicLossScale:
    """A loss scale that adapts to overflow (pure: `adjust` returns a new one).

    loss_scale: the current scale (float32, 0-d); counter: finite steps since the last change
    (int32, 0-d); period: finite steps before the scale grows by `factor`; min_loss_scale:
    the scale never shrinks below it. Children (traced under jit): loss_scale, counter;
    period, factor and min_loss_scale are static.

    >>> ls = DynamicLossScale(2.0 ** 15, period=2000)
    >>> ls = ls.adjust(all_finite(grads))
    """
    loss_scale: Any
    counter: Any = None
    period: int = dataclasses.field(default=2000, metadata={"static": True})
    factor: float = dataclasses.field(default=2.0, metadata={"static": True})
    min_loss_scale: float = dataclasses.field(default=1.0, metadata={"static": True})

    def __post_init__(self):
        where = "DynamicLossScale"
        if isinstance(self.period, bool) or not isinstance(self.period, int) or self.period < 1:
            raise ValueError(f"{where}: period must be an int >= 1, got {self.period!r}")
        factor = chk.hyperparam(where, "factor", self.factor, lo=1.0, lo_open=True)
        if not chk.is_static_number(factor):
            raise TypeError(f"{where}: factor must be a Python number (it is static)")
        min_scale = chk.hyperparam(where, "min_loss_scale", self.min_loss_scale, lo=0.0,
                                   lo_open=True)
        if not chk.is_static_number(min_scale):
            raise TypeError(f"{where}: min_loss_scale must be a Python number (it is static)")
        ls = chk.hyperparam(where, "loss_scale", self.loss_scale, lo=0.0, lo_open=True)
        object.__setattr__(self, "factor", factor)
        object.__setattr__(self, "min_loss_scale", min_scale)
        object.__setattr__(self, "loss_scale", jnp.asarray(ls, jnp.float32))
        counter = jnp.zeros([], jnp.int32) if self.counter is None else self.counter
        object.__setattr__(self, "counter", jnp.asarray(counter, jnp.int32))

    def scale(self, tree):
        """tree * loss_scale (each floating leaf keeps its dtype)."""
        return _times(tree, self.loss_scale)

    def unscale(self, tree):
        """tree / loss_scale (computed in float32, each leaf cast back to its dtype)."""
        return _times(tree, 1.0 / self.loss_scale)

    def adjust(self, grads_finite):
        """The next loss scale: finite grads count towards growth (x factor once `period`
        finite steps accumulate, counter reset); non-finite grads shrink the scale
        (/ factor, at least min_loss_scale) and reset the counter."""
        finite = jnp.asarray(grads_finite)
        if finite.shape != () or finite.dtype != jnp.bool_:
            raise ValueError(f"DynamicLossScale.adjust: grads_finite must be a 0-d bool "
                             f"array (all_finite(grads)), got {finite.dtype} of shape "
                             f"{tuple(finite.shape)}")
        grow = self.counter == self.period - 1
        up = jnp.where(grow, self.loss_scale * self.factor, self.loss_scale)
        down = jnp.maximum(self.loss_scale / self.factor, self.min_loss_scale)
        loss_scale = jnp.where(finite, up, down)
        counter = jnp.where(finite, jnp.where(grow, 0, self.counter + 1), 0)
        return dataclasses.replace(self, loss_scale=loss_scale, counter=counter)
