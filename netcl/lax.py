"""netcl.lax: the primitives' direct forms, with jax.lax's names (no implicit broadcasting
or promotion: operands must already agree), and staged control flow."""
from .primitives.elementwise import *  # noqa: F401,F403
from .primitives.elementwise import abs_ as abs, and_ as bitwise_and, max_ as max  # noqa: F401
from .primitives.elementwise import min_ as min, not_ as bitwise_not, or_ as bitwise_or  # noqa
from .primitives.elementwise import pow_ as pow, round_ as round, xor as bitwise_xor  # noqa
from .primitives.elementwise import logistic as sigmoid  # noqa: F401
from .primitives.views import *  # noqa: F401,F403
from .primitives.linalg import *  # noqa: F401,F403
from .transforms.ad import stop_gradient  # noqa: F401
from .transforms.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa

from .primitives.collectives import (all_gather, all_to_all, axis_index, axis_size,  # noqa
                                     pmax, pmean, pmin, ppermute, psum, psum_scatter)
from .primitives.random_bits import (bitcast_convert_type, nextafter, shift_left,  # noqa
                                     shift_right_arithmetic, shift_right_logical, threefry2x32)



class Precision(__import__("enum").Enum):
    """jax.lax.Precision: a matmul's or convolution's ``precision=``. DEFAULT lets float32
    convolutions take TF32 tensor cores on NVIDIA GPUs of sm_80 and newer (as PyTorch and
    XLA do); HIGH and HIGHEST keep float32 products.

    >>> netcl.lax.conv(x, w, (1, 1), "SAME", precision=netcl.lax.Precision.HIGHEST)
    """
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2


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
