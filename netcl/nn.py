"""netcl.nn: activations and normalisations with jax.nn's names.

Each is written so that its derivative is finite for any finite input: logsumexp,
log_softmax and softmax subtract a stop_gradient'ed maximum; softplus and log_sigmoid go
through logaddexp; sigmoid is the `logistic` primitive whose derivative uses its output.
"""
import math

from . import numpy as jnp
from .core import dtypes
from .primitives import elementwise as ew
from .primitives.views import full_like
from .transforms.ad import stop_gradient
from .transforms.custom import custom_jvp
from .core.shapes import normalize_axes as _normalize_axes
from .numpy._util import asarray_arg, promote_to_float

__all__ = ["relu", "relu6", "gelu", "sigmoid", "log_sigmoid", "softplus", "silu", "swish", "elu",
           "celu", "selu", "leaky_relu", "hard_tanh", "tanh", "softmax", "log_softmax",
           "logsumexp", "one_hot", "standardize", "normalize", "glu", "soft_sign"]


def _float(x, where, axis=False):
    """x promoted to float; `axis` (unless False) is checked against x's rank first, so a bad
    axis fails before the conversion kernel runs."""
    if axis is not False:
        x = asarray_arg(x, where)
        _normalize_axes(axis, x.ndim, where)
    return promote_to_float(where, x)[0]


def relu(x):
    """max(x, 0); its derivative at 0 is 0, as in JAX.

    >>> netcl.grad(lambda x: netcl.nn.relu(x).sum())(jnp.array([-1.0, 0.0, 2.0]))  # [0, 0, 1]
    """
    return _relu(asarray_arg(x, "relu"))


@custom_jvp
def _relu(x):
    return ew.max_(x, full_like(x, 0))


# The tangent is masked by the *output* (out > 0 exactly where x > 0): a train step then
# keeps only the activation for its backward pass, not the pre-activation as well (jit's
# fused forward stores one array per layer instead of two).
_relu.defjvps(lambda t, out, x: ew.select(ew.gt(out, full_like(out, 0)), t, full_like(t, 0)))


def relu6(x):
    """min(max(x, 0), 6); its derivative is 0 at 0 and at 6, as in JAX (a clamp's, where
    max/min would split ties and give 0.5).

    >>> netcl.grad(netcl.nn.relu6)(0.0)    # 0.0
    """
    x = asarray_arg(x, "relu6")
    return ew.clamp(full_like(x, 0), x, full_like(x, 6))


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return ew.logistic(_float(x, "sigmoid"))


def softplus(x):
    """log(1 + exp(x)), stable for large |x|."""
    return jnp.logaddexp(_float(x, "softplus"), 0.0)


def log_sigmoid(x):
    x = _float(x, "log_sigmoid")
    return ew.neg(softplus(ew.neg(x)))


def silu(x):
    """x * sigmoid(x)."""
    x = _float(x, "silu")
    return ew.mul(x, ew.logistic(x))


swish = silu


def gelu(x, approximate=True):
    """Gaussian error linear unit; the tanh approximation by default (as jax.nn.gelu)."""
    x = _float(x, "gelu")
    if approximate:
        c = math.sqrt(2 / math.pi)
        inner = ew.mul(full_like(x, c), ew.add(x, ew.mul(full_like(x, 0.044715),
                                                          ew.integer_pow(x, 3))))
        return ew.mul(ew.mul(full_like(x, 0.5), x), ew.add(full_like(x, 1), ew.tanh(inner)))
    return ew.mul(ew.mul(full_like(x, 0.5), x),
                  ew.add(full_like(x, 1), ew.erf(ew.mul(x, full_like(x, 1 / math.sqrt(2))))))


def elu(x, alpha=1.0):
    x = _float(x, "elu")
    # expm1 of large x is never evaluated; a select, not min(x, 0), so that the derivative
    # at 0 is alpha (JAX's), not the average of the two sides
    safe = ew.select(ew.gt(x, full_like(x, 0)), full_like(x, 0), x)
    return ew.select(ew.gt(x, full_like(x, 0)), x,
                     ew.mul(full_like(x, alpha), ew.expm1(safe)))


def celu(x, alpha=1.0):
    x = _float(x, "celu")
    safe = ew.select(ew.gt(x, full_like(x, 0)), full_like(x, 0), x)  # see elu
    return ew.select(ew.gt(x, full_like(x, 0)), x,
                     ew.mul(full_like(x, alpha), ew.expm1(ew.div(safe, full_like(x, alpha)))))


def selu(x):
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return jnp.multiply(scale, elu(x, alpha))


def leaky_relu(x, negative_slope=0.01):
    if not isinstance(negative_slope, (bool, int, float)):  # checked before x's conversion
        slope = asarray_arg(negative_slope, "leaky_relu")
        if slope.ndim:
            raise ValueError(f"leaky_relu: negative_slope must be a scalar, got shape "
                             f"{slope.shape}")
    x = _float(x, "leaky_relu")
    return ew.select(ew.ge(x, full_like(x, 0)), x, ew.mul(x, full_like(x, negative_slope)))


def hard_tanh(x):
    """x clipped to [-1, 1]; the derivative at +-1 is 1, as in JAX (selects, not max/min).

    >>> netcl.grad(netcl.nn.hard_tanh)(1.0)    # 1.0
    """
    x = _float(x, "hard_tanh")
    one = full_like(x, 1)
    return ew.select(ew.gt(x, one), one, ew.select(ew.lt(x, ew.neg(one)), ew.neg(one), x))


def soft_sign(x):
    x = _float(x, "soft_sign")
    return ew.div(x, ew.add(ew.abs_(x), full_like(x, 1)))


def tanh(x):
    return jnp.tanh(x)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(exp(a))) along `axis`, without overflow; -inf rows give -inf. `where`: the
    elements to include (the others count as exp(-inf) = 0), as JAX's.

    >>> netcl.nn.logsumexp(jnp.array([1000.0, 1000.0]))   # 1000.6931
    >>> netcl.nn.logsumexp(jnp.array([1.0, 9.0]), where=jnp.array([True, False]))   # 1.0
    """
    a = _float(a, "logsumexp", axis)
    if return_sign:
        raise ValueError("logsumexp: return_sign is not supported")
    if where is not None:
        mask = _mask(where, a, "logsumexp")
        a = jnp.where(mask, a, -jnp.inf)
        if b is not None:   # (b * exp(-inf) would be NaN where b is inf)
            b = jnp.where(mask, b, 0)
    m = jnp.max(a, axis=axis, keepdims=True)
    # A row of -inf (or +inf) makes a - m NaN: shift by 0 there instead.
    m = stop_gradient(ew.select(jnp.isfinite(m), m, full_like(m, 0)))
    e = ew.exp(ew.sub(a, jnp.broadcast_to(m, a.shape)))
    if b is not None:
        e = jnp.multiply(e, b)
    s = jnp.sum(e, axis=axis, keepdims=True)
    out = ew.add(ew.log(s), m)
    if not keepdims:
        out = jnp.squeeze(out, axis=axis) if axis is not None else jnp.reshape(out, ())
    return out


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along `axis`."""
    x = _float(x, "log_softmax", axis)
    shifted = ew.sub(x, jnp.broadcast_to(stop_gradient(jnp.max(x, axis=axis, keepdims=True)),
                                         x.shape))
    lse = ew.log(jnp.sum(ew.exp(shifted), axis=axis, keepdims=True))
    return ew.sub(shifted, jnp.broadcast_to(lse, x.shape))


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`."""
    x = _float(x, "softmax", axis)
    e = ew.exp(ew.sub(x, jnp.broadcast_to(stop_gradient(jnp.max(x, axis=axis, keepdims=True)),
                                          x.shape)))
    return ew.div(e, jnp.broadcast_to(jnp.sum(e, axis=axis, keepdims=True), x.shape))


def _mask(where, a, name):
    """A bool mask broadcastable to a's shape (ValueError naming `name` otherwise)."""
    m = jnp.asarray(where)
    if m.dtype != jnp.bool_:
        raise TypeError(f"{name}: where must be a bool array, got {m.dtype}")
    jnp.broadcast_shapes(tuple(m.shape), tuple(a.shape))
    return m


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """(x - mean) / sqrt(variance + epsilon) along `axis`, the statistics over the elements
    `where` selects. algorithm as JAX's: "fast" (its default) takes the variance as
    mean(x**2) - mean**2 clipped at 0; "stable" as mean((x - mean)**2).

    >>> netcl.nn.standardize(jnp.array([1.0, 2.0, 3.0]), algorithm="stable")
    """
    x = _float(x, "standardize", axis)
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"standardize: algorithm must be 'fast' or 'stable', got "
                         f"{algorithm!r}")
    w = None if where is None else _mask(where, x, "standardize")
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True, where=w)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis=axis, keepdims=True,
                                where=w)
        else:
            variance = jnp.maximum(jnp.subtract(
                jnp.mean(jnp.square(x), axis=axis, keepdims=True, where=w),
                jnp.square(mean)), 0)
    return jnp.multiply(jnp.subtract(x, mean), ew.rsqrt(jnp.add(variance, epsilon)))


normalize = standardize


def one_hot(x, num_classes, dtype=float, axis=-1):
    """One-hot encode integer labels: out[..., c] = (x[...] == c), of the default float
    (float64 with x64, as jax.nn.one_hot) unless dtype is given.

    >>> netcl.nn.one_hot(jnp.array([0, 2]), 3)    # [[1, 0, 0], [0, 0, 1]]
    """
    x = asarray_arg(x, "one_hot")
    if x.dtype.kind not in "iu":
        raise TypeError(f"one_hot: labels must be integers, got {x.dtype}")
    if not isinstance(num_classes, int) or num_classes < 0:
        raise ValueError(f"one_hot: num_classes must be a non-negative int, got {num_classes!r}")
    classes = jnp.arange(num_classes, dtype=x.dtype)
    out_ndim = x.ndim + 1
    ax = axis % out_ndim
    labels = jnp.expand_dims(x, ax)
    shape = list(x.shape)
    shape.insert(ax, num_classes)
    cls_shape = [1] * out_ndim
    cls_shape[ax] = num_classes
    eq = jnp.equal(labels, jnp.reshape(classes, tuple(cls_shape)))
    return ew.convert_element_type(eq, dtypes.canonicalize(dtype, where="one_hot"))


def glu(x, axis=-1):
    """a * sigmoid(b) where a, b are the halves of x along `axis`."""
    a, b = jnp.split(x, 2, axis=axis)
    return jnp.multiply(a, sigmoid(b))


# Errors escaping these functions name them (softmax, not the max it calls).
from .numpy._errors import wrap_namespace as _wrap_namespace  # noqa: E402

_wrap_namespace(globals(), __all__)

# More of jax.nn (softmax / log_softmax with where=, attention, further activations), and
# jax.nn.initializers (stax's): nn_extras.py. Imported last: it wraps the versions above.
from .nn_extras import *  # noqa: E402,F401,F403
from .nn_extras import __all__ as _extras_all  # noqa: E402
from .stax import initializers  # noqa: E402,F401
# nn.py is a module, not a package: registered so `import netcl.nn.initializers` works as in JAX
__import__("sys").modules[__name__ + ".initializers"] = initializers

_wrap_namespace(globals(), _extras_all)
