"""debug_nans / debug_infs (core/config.py): raise where a computation makes a NaN or an inf.

With either option on, `check(where, outputs)` reads back every floating-point (or complex)
output of an eager operation or of a jitted call and raises FloatingPointError, as JAX:
"invalid value (nan) encountered in log". A jitted call whose outputs hold one runs its
function again op by op (as `netcl.disable_jit`), where the eager checks name the operation
that made it; if that run makes none (the fused kernels round differently), the error names
the jitted function. Each check waits for the device: a debugging mode, off by default.

>>> netcl.config.update("jax_debug_nans", True)
>>> jnp.log(jnp.float32(-1.0))      # FloatingPointError: invalid value (nan) encountered in log
"""
import numpy as np

from . import dtypes
from .config import config


def check(where, outputs):
    """Raise FloatingPointError if an Array among `outputs` (one, or a sequence) holds a NaN
    (config.debug_nans) or an infinity (config.debug_infs); `where` names the operation."""
    from .array import Array
    for x in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        if not isinstance(x, Array) or not dtypes.is_inexact(x.dtype) or x.deleted:
            continue
        kind = _first_bad(np.asarray(x))
        if kind is not None:
            raise FloatingPointError(f"invalid value ({kind}) encountered in {where}")


def check_jitted(name, outputs, rerun):
    """`check` for a jitted function's outputs: on a bad value, `rerun()` (the function op by
    op, whose eager checks raise at the operation that made it) before raising for the
    whole call."""
    try:
        check(f"jit({name})", outputs)
    except FloatingPointError as e:
        if rerun is not None:
            from ..api_extras import disable_jit
            with disable_jit():
                rerun()
        raise FloatingPointError(
            f"{e}. Because debug_nans/debug_infs is on, the function was run again op by op "
            "(as without jit) to find the operation, but that run made no invalid value "
            "(fused kernels may round differently)" if rerun is not None else
            f"{e} (its donated arguments are gone: it cannot run again op by op)") from None


def _first_bad(values):
    if config.debug_nans and np.isnan(values).any():
        return "nan"
    if config.debug_infs and np.isinf(values).any():
        return "inf"
    return None
