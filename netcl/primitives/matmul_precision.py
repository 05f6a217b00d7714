"""The precision of matrix products and convolutions: ``precision=`` values with JAX's
meaning, the process default (``netcl.config.default_matmul_precision``), and which
arithmetic a GEMM runs in on a device.

A ``precision=`` is None, a `netcl.lax.Precision` (or JAX's), one of JAX's names for its
levels, or a pair of them (lhs, rhs). Bound primitives carry it canonical: None, one of
``"default"``, ``"high"``, ``"highest"``, or a pair of those where the two differ; a None
given to `dot_general` or `conv_general_dilated` takes the config's default when the
default is set, as `jax.lax` does (`canonicalize`).

On NVIDIA GPUs with tensor cores (``Target.tensor_cores``) float32 products at "default"
and "high" run in TF32 (10-bit mantissas, float32 accumulation), as XLA runs them there;
"highest" keeps float32 products. float16 and bfloat16 operands multiply exactly on the
half-precision tensor cores at every level (their products fit float32), accumulating in
float32. float64 never runs on tensor cores.
"""
from ..core import dtypes
from ..core.config import config as _config

# JAX's names of the Precision levels (lax.Precision's and the config's).
_LEVELS = {"default": "default", "fastest": "default", "bfloat16": "default",
           "high": "high", "tensorfloat32": "high", "bfloat16_3x": "high",
           "highest": "highest", "float32": "highest"}
_ORDER = {"default": 0, "high": 1, "highest": 2}


def _level(p, where):
    name = getattr(p, "name", p)           # lax.Precision members (netcl's or JAX's)
    if isinstance(name, str):
        level = _LEVELS.get(name.strip().lower())
        if level is not None:
            return level
    raise ValueError(f"{where}: precision {p!r} is not a precision; expected None, a "
                     "lax.Precision, one of " + ", ".join(repr(n) for n in _LEVELS) +
                     ", or a pair of them")


def canonicalize(precision, where, use_config=True):
    """The canonical form of a ``precision=`` argument (see the module's docstring); None
    becomes the config's default where `use_config` and the default is set. Raises a
    ValueError naming `where` for anything else."""
    if precision is None:
        if not use_config:
            return None
        precision = _config.default_matmul_precision
        if precision is None:
            return None
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"{where}: precision must be one value or a pair (lhs, rhs), "
                             f"got {precision!r}")
        a, b = (None if p is None else _level(p, where) for p in precision)
        if a is None and b is None:
            return canonicalize(None, where, use_config)
        a, b = a or "default", b or "default"
        return a if a == b else (a, b)
    return _level(precision, where)


def level(precision):
    """The effective level of a bound (canonical) precision: the higher of a pair; None
    (no config default either) is "default"."""
    if precision is None:
        precision = _config.default_matmul_precision
        if precision is None:
            return "default"
        precision = _LEVELS[precision]
    if isinstance(precision, tuple):
        return max(precision, key=_ORDER.__getitem__)
    return precision


def allows_tf32(precision):
    """Whether float32 operands at this precision may be multiplied in TF32."""
    return _ORDER[level(precision)] <= _ORDER["high"]


def gemm_arithmetic(target, operand_dtype, precision, work=None):
    """How a GEMM over operands of `operand_dtype` runs on a device of `target`:
    "tf32" (float32 operands on TF32 tensor cores), "f16" / "bf16" (16-bit operands on
    half-precision tensor cores, float32 accumulation), or None (the portable kernels, in
    float32 or float64). `work`: the product's M*N*K (batches included) where known; TF32
    only from `target.tf32_min_work` on (float32 products are always allowed)."""
    if not target.tensor_cores:
        return None
    if operand_dtype == dtypes.float32:
        big = work is None or work >= target.tf32_min_work
        return "tf32" if big and allows_tf32(precision) else None
    if operand_dtype == dtypes.float16:
        return "f16"
    bf16 = getattr(dtypes, "bfloat16", None)
    if bf16 is not None and operand_dtype == bf16:
        return "bf16"
    return None
