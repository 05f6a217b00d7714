"""netcl.lax: the primitives' direct forms, with jax.lax's names (no implicit broadcasting
or promotion: operands must already agree), and staged control flow."""
from .primitives.elementwise import *  # noqa: F401,F403
from .primitives.elementwise import abs_ as abs, and_ as bitwise_and, max_ as max  # noqa: F401
from .primitives.elementwise import min_ as min, not_ as bitwise_not, or_ as bitwise_or  # noqa
from .primitives.elementwise import pow_ as pow, round_ as round, xor as bitwise_xor  # noqa
from .primitives.elementwise import logistic as sigmoid  # noqa: F401
from .primitives.complex_ops import complex, conj, imag, real  # noqa: F401
from .primitives.fft import FftType, fft  # noqa: F401
from .primitives.views import *  # noqa: F401,F403
from .primitives.linalg import *  # noqa: F401,F403
from .transforms.ad import stop_gradient  # noqa: F401
from .transforms.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa

from .primitives.collectives import (all_gather, all_to_all, axis_index, axis_size,  # noqa
                                     pmax, pmean, pmin, ppermute, psum, psum_scatter)
from .primitives.random_bits import (bitcast_convert_type, nextafter, shift_left,  # noqa
                                     shift_right_arithmetic, shift_right_logical, threefry2x32)
from . import lax_linalg as linalg  # noqa: F401  (jax.lax.linalg)



class Precision(__import__("enum").Enum):
    """jax.lax.Precision: a matmul's or convolution's ``precision=``, with JAX's meaning on
    NVIDIA GPUs of sm_80 and newer: DEFAULT and HIGH let float32 products and convolutions
    take TF32 tensor cores (as XLA does); HIGHEST keeps float32 products. A product without
    one takes `netcl.config.default_matmul_precision` (netcl.primitives.matmul_precision).

    >>> netcl.lax.conv(x, w, (1, 1), "SAME", precision=netcl.lax.Precision.HIGHEST)
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


def top_k(operand, k, *, axis=-1):
    """(values, indices) of the k largest entries along `axis` (default the last), largest
    first (equal values: lower index first), as jax.lax.top_k (complex operands:
    ValueError, as JAX's).

    >>> netcl.lax.top_k(jnp.array([1.0, 3.0, 2.0]), 2)      # ([3., 2.], [1, 2])
    >>> netcl.lax.top_k(jnp.ones((4, 3)), 2, axis=0)[0].shape   # (2, 3)
    """
    if axis != -1:
        from .numpy import moveaxis
        from .primitives.views import operand as _operand
        x = _operand(operand, "top_k")
        if isinstance(axis, bool) or not isinstance(axis, int) or \
                not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
            raise ValueError(f"top_k: axis {axis!r} is out of range for an operand of shape "
                             f"{tuple(x.shape)}")
        axis %= x.ndim
        if axis != x.ndim - 1:
            v, i = top_k(moveaxis(x, axis, -1), k)
            return moveaxis(v, -1, axis), moveaxis(i, -1, axis)
    from .numpy import sorting
    from .numpy.selection import take_along_axis
    from .primitives.views import operand as _operand
    x = _operand(operand, "top_k")
    if x.dtype.kind == "c":         # JAX's ValueError
        raise ValueError(f"top_k: operand of shape {tuple(x.shape)} and dtype {x.dtype} is "
                         "complex; top_k is not compatible with complex inputs, as in JAX")
    if x.ndim == 0:
        raise ValueError("top_k: operand must have at least one axis")
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k: k={k!r} must be an int in [0, {x.shape[-1]}] (the last "
                         f"axis of shape {tuple(x.shape)})")
    idx = sorting._order(x, descending=True)[..., :k]
    return take_along_axis(x, idx, axis=-1), idx


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """jax.lax.sort: an array sorted along `dimension`, or a sequence of arrays of one
    shape all permuted by the order of the first (num_keys=1).

    >>> keys, vals = netcl.lax.sort((k, v))
    """
    from .numpy import sorting
    from .numpy.selection import take_along_axis
    many = isinstance(operand, (tuple, list))
    ops = list(operand) if many else [operand]
    if num_keys != 1:
        raise NotImplementedError("sort: only num_keys=1 is supported")
    x = sorting._along_last(ops[0], dimension, "sort")[0]
    order = sorting._order(x, descending=False)
    out = [sorting._back(take_along_axis(sorting._along_last(o, dimension, "sort")[0], order,
                                         axis=-1), dimension % x.ndim) for o in ops]
    return tuple(out) if many else out[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """(keys sorted along `dimension`, values in the same order)."""
    return sort((keys, values), dimension, is_stable)


_OPTIONAL = ["structural", "reductions", "conv"]
for _m in _OPTIONAL:  # families land one by one; each defines __all__
    _mod = __import__(f"netcl.primitives.{_m}", fromlist=["__all__"])
    globals().update({k: getattr(_mod, k) for k in getattr(_mod, "__all__", [])})

# Errors escaping these functions name them. Not the control flow, whose errors mostly come
# from the user's functions and say where they come from.
from .numpy._errors import wrap_namespace as _wrap_namespace  # noqa: E402

_wrap_namespace(globals(), [_n for _n in list(globals()) if not _n.startswith("_") and _n not in
                            ("cond", "fori_loop", "map", "scan", "switch", "while_loop",
                             "Precision")])

# jax.lax functions built from the primitives above (scans, reductions with a combining
# function, indexing helpers, bit operations, implicit differentiation): lax_extras.py
from .lax_extras import *  # noqa: E402,F401,F403
from .lax_extras import __all__ as _extras_all  # noqa: E402

_wrap_namespace(globals(), [_n for _n in _extras_all if _n not in (
    "associative_scan", "reduce", "custom_root", "custom_linear_solve")])
from .lax_more import *  # noqa: E402,F401,F403  (the rest of jax.lax: lax_more.py)
from .lax_ragged import *  # noqa: E402,F401,F403  (grouped matmuls: lax_ragged.py)

# gather and the scatter family take JAX's form (dimension numbers) beside netcl's (axis,
# batch_dims): lax_gather_scatter.py
from .lax_gather_scatter import install as _install_gather_scatter  # noqa: E402

_install_gather_scatter(globals())
_wrap_namespace(globals(), ["gather", "scatter", "scatter_add", "scatter_mul", "scatter_min",
                            "scatter_max", "scatter_sub", "scatter_apply"])
