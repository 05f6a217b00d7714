"""netcl.lax: the primitives' direct forms, with jax.lax's names (no implicit broadcasting
or promotion: operands must already agree)."""
from .primitives.elementwise import *  # noqa: F401,F403
from .primitives.elementwise import abs_ as abs, and_ as bitwise_and, max_ as max  # noqa: F401
from .primitives.elementwise import min_ as min, not_ as bitwise_not, or_ as bitwise_or  # noqa
from .primitives.elementwise import pow_ as pow, round_ as round, xor as bitwise_xor  # noqa
from .primitives.views import *  # noqa: F401,F403

from .primitives.elementwise import logistic as sigmoid  # noqa: F401  (alias; jax has both)
