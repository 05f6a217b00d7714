"""netcl.optim: optimizers as composable gradient transformations, in optax's shape.

A `GradientTransformation` is a pair of pure functions `init(params) -> state` and
`update(updates, state, params=None) -> (updates, state)`; states are NamedTuples of netcl
arrays (step counts are 0-d int32 arrays), so a training step works under grad, vmap and jit.
Optax code ports by changing imports:

    >>> from netcl import optim
    >>> opt = optim.chain(optim.clip_by_global_norm(1.0),
    ...                   optim.adamw(optim.warmup_cosine_decay_schedule(0, 1e-3, 100, 1000)))
    >>> state = opt.init(params)
    >>> updates, state = opt.update(grads, state, params)
    >>> params = optim.apply_updates(params, updates)

Files: base (the interface, identity, apply_updates), combine (chain), transforms (scale_by_*,
trace, add_decayed_weights, add_noise), clipping, wrappers (masked), alias (sgd, adam, ...),
schedules, loss_scale (dynamic loss scaling for mixed precision), numerics (shared helpers),
losses (optax.losses: l2_loss, softmax_cross_entropy, ...), extras (inject_hyperparams, flatten,
MultiSteps, apply_if_finite, zero_nans, ema, amsgrad), factored (adafactor).
"""
from .alias import adagrad, adam, adamw, lamb, lion, nadam, nadamw, noisy_sgd, rmsprop, sgd
from .base import (EmptyState, GradientTransformation, OptState, Params, Schedule,
                   ScalarOrSchedule, Updates, apply_updates, identity, init_empty_state,
                   stateless)
from .clipping import ClipByGlobalNormState, ClipState, clip, clip_by_global_norm, global_norm
from .combine import chain
from .extras import (ApplyIfFiniteState, EmaState, InjectHyperparamsState,
                     InjectStatefulHyperparamsState, MultiSteps, MultiStepsState,
                     ScaleByAmsgradState, WrappedScheduleState, ZeroNansState, amsgrad,
                     apply_if_finite, ema, flatten, inject_hyperparams, scale_by_amsgrad,
                     skip_large_updates, skip_not_finite, zero_nans)
from .factored import (FactoredState, adafactor, clip_by_block_rms, scale_by_factored_rms,
                       scale_by_param_block_rms)
from .loss_scale import (DynamicLossScale, NoOpLossScale, StaticLossScale, all_finite,
                         select_tree)
from .losses import (cosine_distance, cosine_similarity, hinge_loss, huber_loss,
                     kl_divergence, kl_divergence_with_log_targets, l2_loss, log_cosh,
                     safe_softmax_cross_entropy, sigmoid_binary_cross_entropy,
                     sigmoid_focal_loss, softmax_cross_entropy,
                     softmax_cross_entropy_with_integer_labels, squared_error)
from .numerics import safe_increment, safe_int32_increment, safe_norm
from .schedules import (constant_schedule, cosine_decay_schedule, exponential_decay,
                        join_schedules, linear_schedule, piecewise_constant_schedule,
                        polynomial_schedule, warmup_cosine_decay_schedule,
                        warmup_exponential_decay_schedule)
from .transforms import (AddDecayedWeightsState, AddNoiseState, ScaleByAdamState,
                         ScaleByLionState, ScaleByRmsState, ScaleByRmsWithCountState,
                         ScaleByRssState, ScaleByRStdDevState, ScaleByRStdDevWithCountState,
                         ScaleByScheduleState, ScaleByTrustRatioState, ScaleState, TraceState,
                         add_decayed_weights, add_noise, scale, scale_by_adam,
                         scale_by_learning_rate, scale_by_lion, scale_by_rms, scale_by_rss,
                         scale_by_schedule, scale_by_stddev, scale_by_trust_ratio, trace)
from .wrappers import MaskedNode, MaskedState, masked

__all__ = [
    # interface
    "GradientTransformation", "EmptyState", "OptState", "Params", "Updates", "Schedule",
    "ScalarOrSchedule", "identity", "init_empty_state", "stateless", "apply_updates", "chain",
    # transformations
    "scale", "scale_by_learning_rate", "scale_by_schedule", "scale_by_adam", "scale_by_rms",
    "scale_by_stddev", "scale_by_rss", "scale_by_trust_ratio", "scale_by_lion", "trace",
    "add_decayed_weights", "add_noise", "clip", "clip_by_global_norm", "global_norm", "masked",
    "scale_by_amsgrad", "scale_by_factored_rms", "clip_by_block_rms", "scale_by_param_block_rms",
    "ema", "zero_nans", "apply_if_finite", "flatten", "inject_hyperparams", "MultiSteps",
    "skip_not_finite", "skip_large_updates",
    # states
    "ScaleState", "ScaleByScheduleState", "TraceState", "ScaleByAdamState", "ScaleByRmsState",
    "ScaleByRmsWithCountState", "ScaleByRStdDevState", "ScaleByRStdDevWithCountState",
    "ScaleByRssState", "ScaleByTrustRatioState", "ScaleByLionState", "AddDecayedWeightsState",
    "AddNoiseState", "ClipState", "ClipByGlobalNormState", "MaskedState", "MaskedNode",
    "ScaleByAmsgradState", "FactoredState", "EmaState", "ZeroNansState", "ApplyIfFiniteState",
    "MultiStepsState", "InjectHyperparamsState", "InjectStatefulHyperparamsState",
    "WrappedScheduleState",
    # optimizers
    "sgd", "adam", "adamw", "nadam", "nadamw", "rmsprop", "adagrad", "lamb", "lion",
    "noisy_sgd", "amsgrad", "adafactor",
    # schedules
    "constant_schedule", "polynomial_schedule", "linear_schedule", "exponential_decay",
    "cosine_decay_schedule", "warmup_cosine_decay_schedule",
    "warmup_exponential_decay_schedule", "piecewise_constant_schedule", "join_schedules",
    # loss scaling
    "DynamicLossScale", "StaticLossScale", "NoOpLossScale", "all_finite", "select_tree",
    # losses
    "l2_loss", "squared_error", "huber_loss", "log_cosh", "cosine_similarity",
    "cosine_distance", "sigmoid_binary_cross_entropy", "sigmoid_focal_loss", "hinge_loss",
    "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
    "safe_softmax_cross_entropy", "kl_divergence", "kl_divergence_with_log_targets",
    # numerics
    "safe_increment", "safe_int32_increment", "safe_norm",
]
