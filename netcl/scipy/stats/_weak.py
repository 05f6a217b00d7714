"""`finish` for results that went through netcl.scipy.special's incomplete gamma and beta
functions or i0e: those return strong-typed arrays even for weak (Python scalar) inputs, where
JAX keeps the weak type; the result takes its input's weak type back here.

>>> finish(_gammainc(a, x), dt, x)     # weak if x (so all the inputs) was
"""
from ...primitives.elementwise import convert_element_type
from .. import _util as _u


def finish(out, dtype, like):
    """_util.finish(out, dtype), weak-typed when `like` (a promoted input) is."""
    out = _u.finish(out, dtype)
    if like.weak_type and not out.weak_type:
        return convert_element_type(out, out.dtype, True)
    return out
