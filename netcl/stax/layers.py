"""Dense, Embedding, Flatten, Identity, Dropout and the elementwise layers.

Convolutions and pooling live in `conv.py`, BatchNorm and LayerNorm in `normalization.py`,
the combinators in `combinators.py`; all are re-exported here and from `netcl.stax`.

Each constructor returns ``(init_fun, apply_fun)`` as jax.example_libraries.stax does; the
parameter trees are stax's: ``(W, b)`` for Dense and Conv, ``()`` for layers without
parameters, ``(beta, gamma)`` for BatchNorm, a list for ``serial``.
"""
import math

from .. import nn
from .. import numpy as jnp
from .. import random
from ._core import add_bias, as_shape, check_mode, positive_int, shape_of, stateless
from .initializers import glorot_normal, normal, variance_scaling

__all__ = ["Dense", "Embedding", "Flatten", "Identity", "Dropout", "elementwise", "Relu",
           "Gelu", "Sigmoid", "Tanh", "Softplus", "Elu", "LeakyRelu", "Selu", "Softmax",
           "LogSoftmax", "Exp"]


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """A fully connected layer: ``inputs @ W + b`` over the last axis.

    params: ``(W, b)`` with W of shape (in_dim, out_dim) and b of shape (out_dim,), drawn by
    ``W_init`` / ``b_init`` (stax's defaults: glorot_normal and normal(1e-2)).
    Input shape (..., in_dim) -> output shape (..., out_dim).
    """
    out_dim = positive_int(out_dim, "out_dim", "Dense")

    def init_fun(rng, input_shape):
        input_shape = as_shape(input_shape, "Dense")
        if len(input_shape) == 0 or input_shape[-1] <= 0:
            raise ValueError(f"Dense: input_shape {input_shape} must have a known, positive "
                             "last (feature) dimension")
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        xs, ws = shape_of(inputs), shape_of(W)
        if len(xs) == 0 or len(ws) != 2 or xs[-1] != ws[0]:
            raise ValueError(f"Dense: inputs of shape {xs} do not fit the layer: their last "
                             f"dimension must equal W's first (W shape {ws}, b shape "
                             f"{shape_of(b)})")
        return add_bias(jnp.dot(inputs, W), b)
    return stateless(init_fun, apply_fun)


def Embedding(vocab_size, embedding_dim,
              embedding_init=variance_scaling(1.0, "fan_in", "normal", out_axis=0)):
    """A lookup table: integer ids of any shape S -> vectors, output shape S + (embedding_dim,).

    params: the table itself, an array of shape (vocab_size, embedding_dim) (not wrapped in a
    tuple). The default init is Flax's: normal with variance 1 / embedding_dim.
    """
    vocab_size = positive_int(vocab_size, "vocab_size", "Embedding")
    embedding_dim = positive_int(embedding_dim, "embedding_dim", "Embedding")

    def init_fun(rng, input_shape):
        input_shape = as_shape(input_shape, "Embedding")
        return input_shape + (embedding_dim,), embedding_init(rng, (vocab_size, embedding_dim))

    def apply_fun(params, inputs, **kwargs):
        table = params
        ts = shape_of(table)
        if len(ts) != 2:
            raise ValueError(f"Embedding: params must be a table of shape (vocab_size, "
                             f"embedding_dim), got shape {ts}")
        dt = getattr(inputs, "dtype", None)
        if dt is None or dt.kind not in "iu":
            raise TypeError(f"Embedding: inputs must be an integer array of ids, got "
                            f"{type(inputs).__name__} of dtype {dt} and shape "
                            f"{shape_of(inputs)}")
        return jnp.take(table, inputs, axis=0)
    return stateless(init_fun, apply_fun)


def _flatten():
    def init_fun(rng, input_shape):
        input_shape = as_shape(input_shape, "Flatten")
        if len(input_shape) < 1 or any(d < 0 for d in input_shape[1:]):
            raise ValueError(f"Flatten: input_shape {input_shape} needs a leading batch "
                             "dimension and known sizes after it")
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        s = shape_of(inputs)
        if len(s) < 1:
            raise ValueError(f"Flatten: inputs must have a leading batch dimension, got shape "
                             f"{s}")
        return jnp.reshape(inputs, (s[0], math.prod(s[1:])))
    return stateless(init_fun, apply_fun)


Flatten = _flatten()  # a layer (not a constructor), as in stax: flattens all but dim 0


def _identity():
    return stateless(lambda rng, input_shape: (as_shape(input_shape, "Identity"), ()),
                     lambda params, inputs, **kwargs: inputs)


Identity = _identity()  # a layer (not a constructor), as in stax


def Dropout(rate, mode="train"):
    """Dropout as jax.example_libraries.stax's: ``rate`` is the probability of KEEPING an
    element (``Dropout(0.9)`` drops 10%); kept elements are scaled by 1/rate.

    apply: ``apply_fun(params, x, rng=key, mode='train'|'eval')``. ``mode`` given to apply
    overrides the constructor's (stax only has the constructor's; its 'test' is accepted as
    'eval'). In 'eval' mode, or with rate 1, the inputs come back unchanged and no key is
    needed; in 'train' mode a key is required (``serial`` splits one key per layer). The
    mask is ``bernoulli(key, rate, shape)``, stax's: the same key gives stax's mask.

    >>> init, apply = stax.Dropout(0.9)                 # keeps 90%
    >>> y = apply((), x, rng=netcl.random.PRNGKey(0))
    """
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) and \
            not hasattr(rate, "__float__"):
        raise TypeError(f"Dropout: rate must be a number in (0, 1], got {rate!r}")
    rate = float(rate)
    if not 0.0 < rate <= 1.0:
        raise ValueError(f"Dropout: rate={rate} must be in (0, 1]; it is the probability of "
                         "KEEPING an element, as in jax.example_libraries.stax (0.9 drops 10%)")
    default_mode = check_mode(mode, "Dropout")

    def init_fun(rng, input_shape):
        return as_shape(input_shape, "Dropout"), ()

    def apply_fun(params, inputs, *, rng=None, mode=None, **kwargs):
        m = default_mode if mode is None else check_mode(mode, "Dropout")
        if m == "eval" or rate == 1.0:
            return inputs
        if rng is None:
            raise ValueError("Dropout: mode='train' needs a PRNG key: call "
                             "apply_fun(params, inputs, rng=key) (or pass mode='eval')")
        keep = random.bernoulli(rng, rate, shape_of(inputs))
        return jnp.where(keep, jnp.divide(inputs, rate), 0)
    return stateless(init_fun, apply_fun)


def elementwise(fun, **fun_kwargs):
    """A layer without parameters applying ``fun(inputs, **fun_kwargs)``."""
    def init_fun(rng, input_shape):
        return as_shape(input_shape, getattr(fun, "__name__", "elementwise")), ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)
    return stateless(init_fun, apply_fun)


Relu = elementwise(nn.relu)
Gelu = elementwise(nn.gelu)
Sigmoid = elementwise(nn.sigmoid)
Tanh = elementwise(jnp.tanh)
Softplus = elementwise(nn.softplus)
Elu = elementwise(nn.elu)
LeakyRelu = elementwise(nn.leaky_relu)
Selu = elementwise(nn.selu)
Softmax = elementwise(nn.softmax, axis=-1)
LogSoftmax = elementwise(nn.log_softmax, axis=-1)
Exp = elementwise(jnp.exp)

from .conv import *  # noqa: E402,F401,F403
from .conv import __all__ as _conv_all  # noqa: E402
from .normalization import *  # noqa: E402,F401,F403
from .normalization import __all__ as _norm_all  # noqa: E402
from .combinators import *  # noqa: E402,F401,F403
from .combinators import __all__ as _comb_all  # noqa: E402

__all__ += _conv_all + _norm_all + _comb_all
