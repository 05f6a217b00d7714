"""netcl.mixed_precision: jmp's policies and loss scales.

A `Policy` names three dtypes: parameters are kept in `param_dtype`, computation runs in
`compute_dtype`, outputs are returned in `output_dtype`; its `cast_to_*` methods cast the
floating-point leaves of a pytree (integers and non-arrays pass through). `get_policy`
reads jmp's strings ("bfloat16"/"bf16" and "float16"/"f16"/"half" name the half types). The
loss scales are netcl.optim's (DynamicLossScale for float16; bfloat16 has float32's range and
needs none).

>>> policy = netcl.mixed_precision.get_policy("params=float32,compute=float16,output=float32")
>>> policy = netcl.mixed_precision.get_policy("p=f32,c=bf16,o=f32")
>>> y = policy.cast_to_output(apply(policy.cast_to_compute(params), policy.cast_to_compute(x)))
"""
from dataclasses import dataclass

import numpy as np

from .core import dtypes
from .optim.loss_scale import (DynamicLossScale, NoOpLossScale, StaticLossScale,  # noqa: F401
                               all_finite, select_tree)

__all__ = ["Policy", "get_policy", "half_dtype", "DynamicLossScale", "StaticLossScale",
           "NoOpLossScale", "all_finite", "select_tree"]

_NAMES = {"float32": dtypes.float32, "f32": dtypes.float32, "full": dtypes.float32,
          "float16": dtypes.float16, "f16": dtypes.float16, "half": dtypes.float16,
          "bfloat16": dtypes.bfloat16, "bf16": dtypes.bfloat16,
          "float64": dtypes.float64, "f64": dtypes.float64}
_ROLES = {"params": "param_dtype", "param": "param_dtype", "p": "param_dtype",
          "compute": "compute_dtype", "c": "compute_dtype",
          "output": "output_dtype", "o": "output_dtype"}


def half_dtype():
    """The half-precision dtype of jmp's `half_dtype()`: float16, as jmp gives on GPUs
    (bfloat16 works too: name it in a Policy).

    >>> netcl.mixed_precision.half_dtype()     # dtype('float16')
    """
    return dtypes.float16


def _dtype(value, where):
    if isinstance(value, str):
        name = value.strip().lower()
        if name not in _NAMES:
            raise ValueError(f"{where}: unknown dtype {value!r}; use one of {sorted(_NAMES)}")
        return _NAMES[name]
    d = np.dtype(getattr(value, "dtype", value))
    if dtypes.kind(d) != "f":
        raise ValueError(f"{where}: {d} is not a floating-point dtype")
    return dtypes.canonicalize(d, where=where)


def _cast_tree(tree, dtype):
    from .numpy import asarray
    from .primitives.elementwise import convert_element_type
    from .tree_util import tree_map

    def cast(x):
        dt = getattr(x, "dtype", None)
        if dt is None or dtypes.kind(np.dtype(dt)) != "f" or np.dtype(dt) == dtype:
            return x
        if isinstance(x, np.ndarray):
            x = asarray(x)
        return convert_element_type(x, dtype, getattr(x, "weak_type", False))
    return tree_map(cast, tree)


@dataclass(frozen=True)
class Policy:
    """Which dtype parameters, computation and outputs use (jmp.Policy)."""
    param_dtype: np.dtype
    compute_dtype: np.dtype
    output_dtype: np.dtype

    def __post_init__(self):
        for field in ("param_dtype", "compute_dtype", "output_dtype"):
            object.__setattr__(self, field, _dtype(getattr(self, field), f"Policy.{field}"))

    def cast_to_param(self, x):
        """x's floating leaves in param_dtype."""
        return _cast_tree(x, self.param_dtype)

    def cast_to_compute(self, x):
        """x's floating leaves in compute_dtype."""
        return _cast_tree(x, self.compute_dtype)

    def cast_to_output(self, x):
        """x's floating leaves in output_dtype."""
        return _cast_tree(x, self.output_dtype)

    def with_output_dtype(self, output_dtype):
        return Policy(self.param_dtype, self.compute_dtype, output_dtype)

    def __str__(self):
        return (f"p={self.param_dtype.name},c={self.compute_dtype.name},"
                f"o={self.output_dtype.name}")


def get_policy(policy):
    """A Policy from a string, as jmp.get_policy: "params=float32,compute=float16,
    output=float32", the short "p=f32,c=f16,o=f32", or one dtype for all three ("float32").

    >>> netcl.mixed_precision.get_policy("p=f32,c=f16,o=f32").compute_dtype
    dtype('float16')
    >>> netcl.mixed_precision.get_policy("p=f32,c=bf16,o=f32").compute_dtype
    dtype(bfloat16)
    """
    if isinstance(policy, Policy):
        return policy
    if not isinstance(policy, str):
        raise TypeError(f"get_policy: expected a string, got {type(policy).__name__}")
    if "=" not in policy:
        d = _dtype(policy, "get_policy")
        return Policy(d, d, d)
    found = {}
    for part in policy.split(","):
        key, sep, value = part.partition("=")
        role = _ROLES.get(key.strip().lower())
        if not sep or role is None:
            raise ValueError(f"get_policy: cannot read {part!r} in {policy!r}; write "
                             "params=...,compute=...,output=... (or p=,c=,o=)")
        found[role] = _dtype(value, "get_policy")
    param = found.get("param_dtype", dtypes.float32)
    return Policy(param, found.get("compute_dtype", param), found.get("output_dtype", param))
