"""netcl.numpy.linalg's array-API names, as jax.numpy.linalg defines them: cross, diagonal,
matmul, matrix_norm, matrix_transpose, multi_dot, outer, tensordot, trace, vecdot,
vector_norm; and eig, eigvals (general eigen-decomposition, complex results: the primitive
of netcl.primitives.linalg_eig, LAPACK on the host).

Each is composed from netcl.numpy functions (matmul, einsum, sum, max, ...) and so works
under grad, jit and vmap. Unlike their netcl.numpy namesakes, the operands are positional
only and the options keyword only (JAX's array-API signatures); matrices are the last two
axes. Lists and tuples are refused as JAX refuses them, and every error names the function
(``linalg.cross: ...``).

>>> import netcl.numpy as jnp
>>> jnp.linalg.vector_norm(jnp.array([3.0, 4.0]))              # 5.0
>>> jnp.linalg.trace(jnp.arange(9.0).reshape(3, 3), offset=1)  # 1 + 5 = 6.0
"""
import operator
from typing import NamedTuple

import numpy as np

from ..core import dtypes
from ..core.shapes import normalize_axis
from ._errors import public
from ._util import asarray_arg

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_transpose", "multi_dot",
           "outer", "tensordot", "trace", "vecdot", "vector_norm", "eig", "eigvals"]


def _jnp():
    from .. import numpy as jnp     # (netcl.numpy imports this module)
    return jnp


def _arrays(where, *xs):
    return [asarray_arg(x, where) for x in xs]


def _int(where, name, v):
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{where}: {name} must be an int, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: {name} must be an int, got {type(v).__name__} "
                        f"{v!r}") from None


def _at_least_2d(where, x, name="x"):
    if x.ndim < 2:
        raise ValueError(f"{where}: {name} must have at least two dimensions, shape "
                         f"(..., M, N), got shape {tuple(x.shape)}")


# ---- products ----------------------------------------------------------------------------------

def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's rules (jnp.matmul with array-API arguments): 1-d operands
    are vectors, leading (batch) dimensions broadcast.

    >>> jnp.linalg.matmul(jnp.ones((5, 2, 3)), jnp.ones((3, 4))).shape
    (5, 2, 4)
    """
    x1, x2 = _arrays("linalg.matmul", x1, x2)
    return _jnp().matmul(x1, x2, precision=precision,
                         preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """Sum of products over `axes`: an int n (x1's last n axes with x2's first n) or a pair
    of axis sequences (jnp.tensordot with array-API arguments).

    >>> jnp.linalg.tensordot(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5))).shape
    (2, 5)
    >>> jnp.linalg.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), axes=([1], [0])).shape
    (2, 2)
    """
    x1, x2 = _arrays("linalg.tensordot", x1, x2)
    return _jnp().tensordot(x1, x2, axes=axes, precision=precision,
                            preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """The dot product of the vectors along `axis` (the other axes broadcast).

    >>> jnp.linalg.vecdot(jnp.ones((4, 3)), jnp.arange(3.0))      # [3., 3., 3., 3.]
    """
    x1, x2 = _arrays("linalg.vecdot", x1, x2)
    return _jnp().vecdot(x1, x2, axis=axis, precision=precision,
                         preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """The outer product of two 1-d arrays: x1[:, None] * x2[None, :].

    >>> jnp.linalg.outer(jnp.array([1.0, 2.0]), jnp.array([1.0, 10.0, 100.0])).shape
    (2, 3)
    """
    x1, x2 = _arrays("linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: the arrays must be one-dimensional, got shapes "
                         f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    return x1[:, None] * x2[None, :]


def cross(x1, x2, /, *, axis=-1):
    """The cross product of (arrays of) 3-vectors along `axis` (the other axes broadcast).

    >>> jnp.linalg.cross(jnp.array([1.0, 0.0, 0.0]), jnp.array([0.0, 1.0, 0.0]))
    Array([0., 0., 1.], dtype=float32)
    """
    where = "linalg.cross"
    x1, x2 = _arrays(where, x1, x2)
    axis = _int(where, "axis", axis)
    n1 = x1.shape[normalize_axis(axis, x1.ndim, where, "axis")]
    n2 = x2.shape[normalize_axis(axis, x2.ndim, where, "axis")]
    if n1 != 3 or n2 != 3:
        raise ValueError(f"{where}: both arrays must be (arrays of) 3-dimensional vectors "
                         f"along axis {axis}, got shapes {tuple(x1.shape)} and "
                         f"{tuple(x2.shape)}")
    return _jnp().cross(x1, x2, axis=axis)


def _chain_order(dims):
    """The optimal parenthesization of a matrix chain with dimensions dims[0] x dims[1],
    dims[1] x dims[2], ... (the classic dynamic programme numpy's multi_dot uses):
    split[i][j] is where the product of matrices i..j splits."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices, multiplied in the cheapest order. The first and
    last arrays may be 1-d (a row and a column vector); all the others must be 2-d.

    >>> a, b, c = jnp.ones((10, 100)), jnp.ones((100, 5)), jnp.ones((5, 50))
    >>> jnp.linalg.multi_dot([a, b, c]).shape           # computed as (a @ b) @ c
    (10, 50)
    """
    where = "linalg.multi_dot"
    if isinstance(arrays, (str, bytes)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{where}: arrays must be a sequence of arrays, got "
                        f"{type(arrays).__name__}")
    arrs = _arrays(where, *arrays)
    shapes = [tuple(a.shape) for a in arrs]
    if len(arrs) < 2:
        raise ValueError(f"{where}: needs at least two arrays, got {len(arrs)}")
    if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrs[1:-1])):
        raise ValueError(f"{where}: the arrays must all be two-dimensional, except the first "
                         f"and last, which may be 1- or 2-dimensional; got shapes {shapes}")
    if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError(f"{where}: the last dimension of each array must match the first "
                         f"dimension of the next; got shapes {shapes}")
    jnp = _jnp()
    dims = [1 if arrs[0].ndim == 1 else arrs[0].shape[0]] + [a.shape[-1] for a in arrs[:-1]] \
        + [1 if arrs[-1].ndim == 1 else arrs[-1].shape[-1]]
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrs[i]
        k = split[i][j]
        return jnp.matmul(product(i, k), product(k + 1, j), precision=precision)
    return product(0, len(arrs) - 1)


# ---- views and sums of matrices ------------------------------------------------------------

def matrix_transpose(x, /):
    """Swap the last two axes (a batch of matrices transposed).

    >>> jnp.linalg.matrix_transpose(jnp.ones((4, 2, 3))).shape
    (4, 3, 2)
    """
    (x,) = _arrays("linalg.matrix_transpose", x)
    _at_least_2d("linalg.matrix_transpose", x)
    return _jnp().swapaxes(x, -1, -2)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two axes: shape (..., k), the `offset`-th
    diagonal (positive: above the main one).

    >>> jnp.linalg.diagonal(jnp.arange(9.0).reshape(3, 3), offset=1)   # [1., 5.]
    """
    where = "linalg.diagonal"
    (x,) = _arrays(where, x)
    offset = _int(where, "offset", offset)
    _at_least_2d(where, x)
    return _jnp().diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the matrices in the last two axes: shape x.shape[:-2]. `dtype` as in
    jnp.sum (integer traces are of the default int unless given).

    >>> jnp.linalg.trace(jnp.arange(12).reshape(3, 4), offset=1)       # 1 + 6 + 11 = 18
    """
    where = "linalg.trace"
    (x,) = _arrays(where, x)
    offset = _int(where, "offset", offset)
    _at_least_2d(where, x)
    return _jnp().trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


# ---- norms ---------------------------------------------------------------------------------

def _axes(where, axis, ndim):
    if axis is None:
        return None
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(_int(where, "axis", a), ndim, where, "axis") for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{where}: axis={tuple(axis)!r} repeats an axis")
        return axes
    return normalize_axis(_int(where, "axis", axis), ndim, where, "axis")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002 (the array API's)
    """Vector norms over `axis` (None: all the elements, whatever x.ndim; an int or a tuple
    of ints). ord: 2 (also None), 1, inf, -inf, 0 (the count of nonzeros) or any other
    number p: sum(|x|**p)**(1/p). Complex x: norms of the magnitudes, real (as JAX).

    >>> jnp.linalg.vector_norm(jnp.array([[3.0, 0.0], [0.0, -4.0]]))            # 5.0
    >>> jnp.linalg.vector_norm(jnp.array([[3.0, 0.0], [0.0, -4.0]]), ord=1, axis=1)
    Array([3., 4.], dtype=float32)
    """
    where = "linalg.vector_norm"
    (x,) = _arrays(where, x)
    if dtypes.kind(x.dtype) not in "biufc":
        raise TypeError(f"{where}: x must have a numeric dtype, got {x.dtype}")
    axes = _axes(where, axis, x.ndim)
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"{where}: keepdims must be a bool, got {keepdims!r}")
    if isinstance(ord, str):
        hint = {"inf": " (use jnp.inf)", "-inf": " (use -jnp.inf)"}.get(ord, "")
        raise ValueError(f"{where}: invalid order {ord!r} for a vector norm{hint}")
    if ord is not None and (isinstance(ord, (bool, np.bool_)) or
                            not isinstance(ord, (int, float, np.integer, np.floating))):
        raise TypeError(f"{where}: ord must be a number, got {type(ord).__name__} {ord!r}")
    jnp = _jnp()
    is_bool = x.dtype == dtypes.bool_
    if ord is None or ord == 2:
        # (complex: Re(x conj(x)), as JAX's, whose gradient at x = 0 is 0 where |x|'s is not
        # defined)
        sq = jnp.real(x * jnp.conj(x)) if dtypes.is_complex(x.dtype) else x * x
        return jnp.sqrt(jnp.sum(sq, axis=axes, keepdims=keepdims))
    if is_bool and ord in (np.inf, -np.inf):         # max and min of bools (JAX keeps bool)
        return (jnp.any if ord == np.inf else jnp.all)(x, axis=axes, keepdims=keepdims)
    absx = x if is_bool else jnp.abs(x)
    if ord == np.inf:
        return jnp.max(absx, axis=axes, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return jnp.min(absx, axis=axes, keepdims=keepdims)
    if ord == 1:
        return jnp.sum(absx, axis=axes, keepdims=keepdims)
    if dtypes.kind(absx.dtype) != "f":
        absx = absx.astype(dtypes.inexact_dtype(x.dtype))
    if ord == 0:
        return jnp.sum(x != 0, axis=axes, keepdims=keepdims, dtype=absx.dtype)
    p = float(ord)
    return jnp.sum(absx ** p, axis=axes, keepdims=keepdims) ** (1.0 / p)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002 (the array API's)
    """Norms of the matrices in the last two axes: ord 'fro' (also None), 'nuc', 1, -1, 2,
    -2, inf or -inf, as jnp.linalg.norm(x, ord, axis=(-2, -1)).

    >>> jnp.linalg.matrix_norm(jnp.array([[1.0, -2.0], [3.0, 4.0]]), ord=1)     # 6.0
    """
    where = "linalg.matrix_norm"
    (x,) = _arrays(where, x)
    _at_least_2d(where, x)
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"{where}: keepdims must be a bool, got {keepdims!r}")
    if not (ord is None or ord in ("fro", "nuc") or
            not isinstance(ord, (str, bool, np.bool_)) and
            isinstance(ord, (int, float, np.integer, np.floating)) and
            ord in (1, -1, 2, -2, np.inf, -np.inf)):
        raise ValueError(f"{where}: invalid order {ord!r} for a matrix norm; supported: "
                         "'fro', 'nuc', 1, -1, 2, -2, inf, -inf")
    return _jnp().linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=bool(keepdims))


# ---- general eigen-decomposition (complex results) --------------------------------------------

class EigResult(NamedTuple):
    """jnp.linalg.eig's result: (eigenvalues, eigenvectors)."""
    eigenvalues: object
    eigenvectors: object


def _eig_operand(where, a):
    """a promoted as jax.numpy.linalg promotes (bools and ints to the default float; float
    and complex kept), checked for shape (..., n, n)."""
    x = asarray_arg(a, where)
    if dtypes.kind(x.dtype) not in "biufc":
        raise TypeError(f"{where}: a must be numeric, got {x.dtype}")
    if dtypes.kind(x.dtype) in "biu":       # (as linalg_decomp's functions promote)
        dt, weak = dtypes.result_type(x)
        x = x.astype(dtypes.inexact_dtype(dt, weak))
    if x.dtype in dtypes.STORAGE_FLOATS:
        raise TypeError(f"{where}: {x.dtype} operands are not supported (LAPACK has no 16- "
                        "or 8-bit precision, and jax.numpy.linalg refuses them too); convert with "
                        ".astype(jnp.float32)")
    _at_least_2d(where, x, "a")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{where}: a must be square in its last two dimensions, shape "
                         f"(..., n, n), got shape {tuple(x.shape)}")
    return x


def eig(a):
    """Eigenvalues (..., n) and right eigenvectors (..., n, n), as columns of unit norm, of
    each general square matrix of `a`: complex64 for float32/complex64 input, complex128 for
    float64/complex128 (JAX's rule; ints become floats). Computed by LAPACK on the host; NaN
    where a matrix fails. As in JAX, the eigenvectors have no derivative (the eigenvalues
    do: use eigvals); see netcl.lax.linalg.eig for left eigenvectors.

    >>> w, v = jnp.linalg.eig(jnp.array([[1.0, 2.0], [2.0, 1.0]]))
    >>> w                                  # [3+0j, -1+0j], complex64
    """
    from ..primitives.linalg_eig import eig_p
    x = _eig_operand("linalg.eig", a)
    w, v = eig_p.bind(x, compute_left_eigenvectors=False, compute_right_eigenvectors=True,
                      enable_eigvec_derivs=False)
    return EigResult(w, v)


def eigvals(a):
    """The eigenvalues (..., n) of each general square matrix of `a`, complex (complex64 for
    float32/complex64 input, complex128 for float64/complex128), as jnp.linalg.eigvals;
    differentiable (dw = diag(V^-1 dA V), forward and reverse mode, as JAX's).

    >>> jnp.linalg.eigvals(jnp.array([[0.0, 1.0], [-1.0, 0.0]]))    # [0+1j, 0-1j]
    """
    from ..primitives.linalg_eig import eig_p
    x = _eig_operand("linalg.eigvals", a)
    return eig_p.bind(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
                      enable_eigvec_derivs=False)[0]


# Errors escaping these functions name them as they are called (linalg.cross: ...).
for _n in __all__:
    _w = globals()[_n] = public(globals()[_n], f"linalg.{_n}")
    _w.__module__, _w.__qualname__, _w.__name__ = "netcl.numpy.linalg", _n, _n
del _n, _w
