"""Operators and methods of arrays and tracers (x + y, x.sum(), x[1:], x.T ...).

They are attached to `core.ArrayBase`, the class shared by concrete arrays and tracers, and
each calls the netcl.numpy function of the same meaning. Binary operators on two arrays of
the same shape and dtype go straight to the primitive: that is the eager hot path.
"""
from .. import numpy as jnp
from ..core import dtypes
from ..core.array import Array, ArrayBase
from ..primitives import elementwise as ew


def _fast_binop(prim, slow, allow_bool=False):
    bind = prim.bind
    bool_ = dtypes.bool_

    def op(self, other):
        if type(other) is Array and type(self) is Array and other.shape == self.shape \
                and other.dtype is self.dtype and other.weak_type is self.weak_type \
                and (allow_bool or self.dtype is not bool_):
            return bind(self, other)
        return slow(self, other)
    return op


def _swap(fn):
    return lambda self, other: fn(other, self)


def _deferred(name):
    """A method calling netcl.numpy.<name>(self, ...) looked up at call time."""
    def method(self, *args, **kwargs):
        return getattr(jnp, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _astype(self, dtype):
    """A copy cast to `dtype` (float -> int truncates toward zero)."""
    return ew.convert_element_type(self, dtypes.canonicalize(dtype, where="astype"))


def _reshape(self, *shape, order="C"):
    if order != "C":
        raise ValueError("reshape: only order='C' is supported")
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return jnp.reshape(self, shape)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return jnp.transpose(self, axes or None)


def install():
    A = ArrayBase
    A.__add__ = _fast_binop(ew.add_p, jnp.add)
    A.__radd__ = _swap(jnp.add)
    A.__sub__ = _fast_binop(ew.sub_p, jnp.subtract)
    A.__rsub__ = _swap(jnp.subtract)
    A.__mul__ = _fast_binop(ew.mul_p, jnp.multiply)
    A.__rmul__ = _swap(jnp.multiply)
    A.__truediv__ = lambda s, o: jnp.true_divide(s, o)
    A.__rtruediv__ = _swap(jnp.true_divide)
    A.__floordiv__ = lambda s, o: jnp.floor_divide(s, o)
    A.__rfloordiv__ = _swap(jnp.floor_divide)
    A.__mod__ = lambda s, o: jnp.remainder(s, o)
    A.__rmod__ = _swap(jnp.remainder)
    A.__pow__ = lambda s, o: jnp.power(s, o)
    A.__rpow__ = _swap(jnp.power)
    A.__matmul__ = lambda s, o: jnp.matmul(s, o)
    A.__rmatmul__ = _swap(lambda a, b: jnp.matmul(a, b))
    A.__neg__ = lambda s: jnp.negative(s)
    A.__pos__ = lambda s: s
    A.__abs__ = lambda s: jnp.abs(s)
    A.__invert__ = lambda s: jnp.invert(s)
    A.__and__ = lambda s, o: jnp.bitwise_and(s, o)
    A.__rand__ = _swap(jnp.bitwise_and)
    A.__or__ = lambda s, o: jnp.bitwise_or(s, o)
    A.__ror__ = _swap(jnp.bitwise_or)
    A.__xor__ = lambda s, o: jnp.bitwise_xor(s, o)
    A.__rxor__ = _swap(jnp.bitwise_xor)
    A.__eq__ = lambda s, o: jnp.equal(s, o)
    A.__ne__ = lambda s, o: jnp.not_equal(s, o)
    A.__lt__ = lambda s, o: jnp.less(s, o)
    A.__le__ = lambda s, o: jnp.less_equal(s, o)
    A.__gt__ = lambda s, o: jnp.greater(s, o)
    A.__ge__ = lambda s, o: jnp.greater_equal(s, o)
    A.__getitem__ = _deferred("_getitem")
    A.astype = _astype
    A.reshape = _reshape
    A.transpose = _transpose
    A.T = property(lambda s: jnp.transpose(s))
    A.mT = property(lambda s: jnp.swapaxes(s, -1, -2))
    A.at = property(lambda s: jnp._IndexUpdateHelper(s))
    A.flatten = _deferred("ravel")
    for name in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "var",
                 "std", "cumsum", "cumprod", "ravel", "squeeze", "swapaxes", "clip",
                 "round", "dot", "take", "repeat", "nonzero", "diagonal", "trace"):
        setattr(A, name, _deferred(name))
    A.real = property(lambda s: jnp.real(s))
    A.imag = property(lambda s: jnp.imag(s))
    A.conj = A.conjugate = lambda s: jnp.conj(s)
