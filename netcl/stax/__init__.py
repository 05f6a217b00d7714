"""netcl.stax: neural-network layers as ``(init_fun, apply_fun)`` pairs, in the shape of
``jax.example_libraries.stax`` (stax code and parameter trees port by changing imports)::

    init_fun(rng, input_shape)          -> (output_shape, params)
    apply_fun(params, inputs, **kwargs) -> outputs

    >>> from netcl import stax, random
    >>> init, apply = stax.serial(stax.Dense(512), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    >>> out_shape, params = init(random.PRNGKey(0), (-1, 784))    # params: [(W, b), (), ...]
    >>> logp = apply(params, x)

Beyond stax:

* ``Dropout(rate)``: ``rate`` is the KEEP probability, as in stax (``Dropout(0.9)`` drops
  10%); ``apply_fun(params, x, rng=key, mode='train'|'eval')``.
* State (BatchNorm's running statistics), threaded explicitly and kept out of params::

      _, params, state = init(rng, input_shape, return_state=True)
      y = apply(params, x)                                  # stax: batch statistics only
      y, state = apply(params, x, state=state)              # train: + updated running stats
      y, _ = apply(params, x, state=state, mode="eval")     # eval: uses the running stats

  The state tree mirrors the params tree (a list for serial, a tuple for parallel, ``()``
  for stateless layers, ``BatchNormState(mean, var)`` for BatchNorm). Rule: pass
  ``state=`` and you get ``(outputs, new_state)`` back; otherwise just the outputs.
  In a loss, return the new state as aux: ``netcl.value_and_grad(loss, has_aux=True)``.
* More layers: LayerNorm, Embedding, ConvTranspose, Conv1D/Conv3D, rhs_dilation and
  feature_group_count on convolutions, Gelu/Selu/...; models (mlp, lenet, resnet).
* Shape errors name the layer and the shapes, at init and at apply time.
"""
from . import initializers  # noqa: F401
from . import models  # noqa: F401
from .layers import *  # noqa: F401,F403
from .layers import __all__ as _layers_all
from .models import GlobalAvgPool, lenet, mlp, resnet  # noqa: F401
from .initializers import glorot_normal, normal, ones, zeros  # noqa: F401
from ..nn import log_softmax as _log_softmax

# stax's backward-compatibility aliases
glorot = glorot_normal
randn = normal
logsoftmax = _log_softmax

__all__ = list(_layers_all) + ["GlobalAvgPool", "mlp", "lenet", "resnet", "initializers",
                               "models", "glorot", "randn", "logsoftmax", "glorot_normal",
                               "normal", "ones", "zeros"]
