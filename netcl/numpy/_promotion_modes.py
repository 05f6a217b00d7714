"""JAX's stricter promotion modes for netcl.numpy (config's numpy_dtype_promotion and
numpy_rank_promotion; `netcl.numpy_dtype_promotion("strict")` and
`netcl.numpy_rank_promotion("raise")` for a block).

- dtype promotion "strict": operands of different dtypes do not promote implicitly; only a
  Python int, float or complex scalar (weakly typed) joins an array of a dtype of its kind
  or a wider kind (an int into ints and floats, a float into floats, a complex into
  complex), as JAX's strict lattice. Otherwise TypePromotionError, raised by `promote`
  before anything runs.
- rank promotion "warn"/"raise": broadcasting arrays of different ranks (neither a scalar)
  warns or raises ValueError, as JAX's (same-rank broadcasting of size-1 dims is allowed).

>>> with netcl.numpy_dtype_promotion("strict"):
...     jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.float32)     # TypePromotionError
"""
import warnings

from ..core import dtypes
from ..core.config import config

_KIND_ORDER = {"i": 1, "u": 1, "f": 2, "c": 3}


def check_dtypes(where, values):
    """Under strict dtype promotion, raise TypePromotionError unless `values` (arrays and
    weak scalars, each with .dtype and .weak_type) promote without widening any strong
    dtype."""
    strong = {v.dtype for v in values if not getattr(v, "weak_type", False) or
              v.dtype == dtypes.bool_}
    weak = [v.dtype for v in values if getattr(v, "weak_type", False) and
            v.dtype != dtypes.bool_]
    ok = len(strong) <= 1
    if ok and strong:
        (s,) = strong
        order = _KIND_ORDER.get(dtypes.kind(s), 0)
        ok = all(0 < _KIND_ORDER.get(dtypes.kind(w), 9) <= order for w in weak)
    if not ok:
        names = ", ".join(repr(f"weak {v.dtype}" if getattr(v, "weak_type", False) and
                               v.dtype != dtypes.bool_ else str(v.dtype)) for v in values)
        raise dtypes.TypePromotionError(
            f"{where}: input dtypes ({names}) have no available implicit dtype promotion path "
            "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
            "desired output type, or set jax_numpy_dtype_promotion=standard.")


def check_ranks(where, shapes):
    """Under rank promotion "warn" or "raise", warn or raise ValueError where `shapes`
    (of arrays being broadcast together) have different ranks, none of them 0."""
    ranks = {len(s) for s in shapes if len(s)}
    if len(ranks) < 2:
        return
    message = (f"Operands could not be broadcast together for {where} on shapes "
               f"{' '.join(str(tuple(s)) for s in shapes)} and with the config option "
               f"jax_numpy_rank_promotion='{config.numpy_rank_promotion}'.")
    if config.numpy_rank_promotion == "raise":
        raise ValueError(message)
    warnings.warn(message, UserWarning, stacklevel=4)
