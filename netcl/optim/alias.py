"""Popular optimizers as chains of transformations, with optax's defaults and order.

Every `learning_rate` is a float >= 0 or a schedule (a function of the 0-based step count).
"""
from . import _checks as chk
from .base import identity
from .combine import chain
from .transforms import (add_decayed_weights, add_noise, scale_by_adam, scale_by_learning_rate,
                         scale_by_lion, scale_by_rms, scale_by_rss, scale_by_stddev,
                         scale_by_trust_ratio, trace)

__all__ = ["sgd", "adam", "adamw", "nadam", "nadamw", "rmsprop", "adagrad", "lamb", "lion",
           "noisy_sgd"]


def _lr(where, learning_rate):
    return scale_by_learning_rate(chk.learning_rate(where, learning_rate))


def sgd(learning_rate, momentum=None, nesterov=False, accumulator_dtype=None):
    """Stochastic gradient descent, with optional (Nesterov) momentum:
    chain(trace(momentum, nesterov), scale_by_learning_rate(learning_rate)).

    >>> opt = netcl.optim.sgd(0.1, momentum=0.9)
    """
    lr = _lr("sgd", learning_rate)
    if momentum is None:
        return chain(identity(), lr)
    chk.decay_rate("sgd", "momentum", momentum)
    return chain(trace(momentum, nesterov, accumulator_dtype), lr)


def adam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *,
         nesterov=False):
    """Adam: chain(scale_by_adam(b1, b2, eps, eps_root), scale_by_learning_rate(lr)).

    >>> opt = netcl.optim.adam(1e-3); state = opt.init(params)
    """
    _check_adam("adam", b1, b2, eps, eps_root)
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 _lr("adam", learning_rate))


def nadam(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None, *,
          nesterov=True):
    """Adam with Nesterov momentum (NAdam)."""
    _check_adam("nadam", b1, b2, eps, eps_root)
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 _lr("nadam", learning_rate))


def adamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
          weight_decay=1e-4, mask=None, *, nesterov=False):
    """Adam with decoupled weight decay: chain(scale_by_adam, add_decayed_weights(weight_decay,
    mask), scale_by_learning_rate(lr)); the decay is multiplied by the learning rate.

    >>> opt = netcl.optim.adamw(1e-3, weight_decay=1e-2)
    """
    _check_adam("adamw", b1, b2, eps, eps_root)
    chk.non_negative("adamw", "weight_decay", weight_decay)
    return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov=nesterov),
                 add_decayed_weights(weight_decay, mask),
                 _lr("adamw", learning_rate))


def nadamw(learning_rate, b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, mu_dtype=None,
           weight_decay=1e-4, mask=None, *, nesterov=True):
    """AdamW with Nesterov momentum."""
    return adamw(learning_rate, b1, b2, eps, eps_root, mu_dtype, weight_decay, mask,
                 nesterov=nesterov)


def rmsprop(learning_rate, decay=0.9, eps=1e-8, initial_scale=0.0, eps_in_sqrt=True,
            centered=False, momentum=None, nesterov=False, bias_correction=False):
    """RMSProp: chain(scale_by_rms (or scale_by_stddev when centered),
    scale_by_learning_rate(lr), trace(momentum, nesterov) when momentum is given).

    >>> opt = netcl.optim.rmsprop(1e-3, centered=True, momentum=0.9)
    """
    chk.decay_rate("rmsprop", "decay", decay, allow_one=not bias_correction)
    chk.non_negative("rmsprop", "eps", eps)
    chk.non_negative("rmsprop", "initial_scale", initial_scale)
    if momentum is not None:
        chk.decay_rate("rmsprop", "momentum", momentum)
    scaler = scale_by_stddev if centered else scale_by_rms
    return chain(scaler(decay, eps, initial_scale, eps_in_sqrt, bias_correction),
                 _lr("rmsprop", learning_rate),
                 trace(momentum, nesterov) if momentum is not None else identity())


def adagrad(learning_rate, initial_accumulator_value=0.1, eps=1e-7):
    """Adagrad: chain(scale_by_rss(initial_accumulator_value, eps), scale_by_learning_rate(lr)).

    >>> opt = netcl.optim.adagrad(0.1)
    """
    chk.non_negative("adagrad", "initial_accumulator_value", initial_accumulator_value)
    chk.non_negative("adagrad", "eps", eps)
    return chain(scale_by_rss(initial_accumulator_value, eps), _lr("adagrad", learning_rate))


def lamb(learning_rate, b1=0.9, b2=0.999, eps=1e-6, eps_root=0.0, weight_decay=0.0, mask=None):
    """LAMB: chain(scale_by_adam, add_decayed_weights(weight_decay, mask), scale_by_trust_ratio,
    scale_by_learning_rate(lr)).

    >>> opt = netcl.optim.lamb(1e-3, weight_decay=1e-2)
    """
    _check_adam("lamb", b1, b2, eps, eps_root)
    chk.non_negative("lamb", "weight_decay", weight_decay)
    return chain(scale_by_adam(b1, b2, eps, eps_root),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_trust_ratio(),
                 _lr("lamb", learning_rate))


def lion(learning_rate, b1=0.9, b2=0.99, mu_dtype=None, weight_decay=1e-3, mask=None):
    """Lion: chain(scale_by_lion(b1, b2), add_decayed_weights(weight_decay, mask),
    scale_by_learning_rate(lr)). Use a learning rate 3-10x smaller than adam's.

    >>> opt = netcl.optim.lion(1e-4)
    """
    chk.decay_rate("lion", "b1", b1)
    chk.decay_rate("lion", "b2", b2)
    chk.non_negative("lion", "weight_decay", weight_decay)
    return chain(scale_by_lion(b1, b2, mu_dtype),
                 add_decayed_weights(weight_decay, mask),
                 _lr("lion", learning_rate))


def noisy_sgd(learning_rate, eta=0.01, gamma=0.55, key=None, *, seed=None):
    """SGD with annealed Gaussian gradient noise: chain(add_noise(eta, gamma, key, seed=seed),
    scale_by_learning_rate(lr))."""
    return chain(add_noise(eta, gamma, key, seed=seed), _lr("noisy_sgd", learning_rate))


def _check_adam(where, b1, b2, eps, eps_root):
    chk.decay_rate(where, "b1", b1, allow_one=False)
    chk.decay_rate(where, "b2", b2, allow_one=False)
    chk.non_negative(where, "eps", eps)
    chk.non_negative(where, "eps_root", eps_root)
