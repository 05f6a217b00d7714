"""Losses with optax's names, arguments and formulas (optax.losses), for netcl arrays.

Each returns the loss per element or per example (no reduction: take `.mean()` yourself), is
written in a numerically stable form (log-sum-exp with a shifted maximum, log-sigmoid as
`min(x, 0) - log1p(exp(-|x|))` with the branch picked by a select, so that its derivative is
exact at 0 too) and binds only netcl.numpy ops, so it works under grad, vmap and jit.
Arguments are checked (dtype, rank, axes, broadcasting) before anything is computed; errors
name the loss and the argument.

    >>> from netcl import optim
    >>> loss = optim.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    >>> g = netcl.grad(lambda w: optim.l2_loss(x @ w, y).mean())(w)
"""
import math
import operator

from .. import numpy as jnp
from ..core import dtypes
from ..core.array import Array
from ..core.shapes import IncompatibleShapesError, broadcast_shapes, normalize_axes
from ..core.tracing import Tracer
from ..numpy._util import asarray_arg
from ..transforms.ad import stop_gradient
from . import _checks as chk

__all__ = ["l2_loss", "squared_error", "huber_loss", "log_cosh", "cosine_similarity",
           "cosine_distance", "sigmoid_binary_cross_entropy", "sigmoid_focal_loss",
           "hinge_loss", "softmax_cross_entropy", "softmax_cross_entropy_with_integer_labels",
           "safe_softmax_cross_entropy", "kl_divergence", "kl_divergence_with_log_targets"]


# ---- argument checks ---------------------------------------------------------------------

def _array(where, name, x, kind=None):
    """`x` as a netcl array (lists refused); `kind`: 'float' (floating dtype), 'int'
    (integer dtype), 'real' (numeric, not bool) or 'numeric' (bool too) is required of its
    dtype."""
    if x is None:
        raise TypeError(f"{where}: {name} must be an array, got None")
    x = asarray_arg(x, f"{where}: {name}")
    k = dtypes.kind(x.dtype)
    if kind == "float" and k != "f":
        raise TypeError(f"{where}: {name} must have a floating dtype, got {x.dtype}")
    if kind == "int" and k not in "iu":
        raise TypeError(f"{where}: {name} must have an integer dtype, got {x.dtype}")
    if kind == "real" and k not in "iuf":
        raise TypeError(f"{where}: {name} must have a numeric (not bool) dtype, got {x.dtype}")
    if kind == "numeric" and k not in "biuf":
        raise TypeError(f"{where}: {name} must have a numeric or bool dtype, got {x.dtype}")
    return x


def _broadcasts(where, a_name, a, b_name, b, to=None):
    """`a` and `b` broadcast together (and, with `to`, to exactly `to`'s shape)."""
    try:
        shape = broadcast_shapes(a.shape, b.shape, where=where)
    except IncompatibleShapesError:
        raise IncompatibleShapesError(
            f"{where}: {a_name} of shape {tuple(a.shape)} and {b_name} of shape "
            f"{tuple(b.shape)} do not broadcast together") from None
    if to is not None and shape != tuple(to):
        raise IncompatibleShapesError(
            f"{where}: {b_name} of shape {tuple(b.shape)} must broadcast to the shape "
            f"{tuple(to)} of {a_name}")
    return shape


def _axes(where, axis, ndim):
    if isinstance(axis, bool) or not (axis is None or isinstance(axis, (tuple, list))
                                      or hasattr(axis, "__index__")):
        raise TypeError(f"{where}: axis must be an int, a tuple of ints or None, got "
                        f"{type(axis).__name__} {axis!r}")
    return normalize_axes(axis, ndim, where)


class _Shape:
    """Stands for an array of a given shape in the shape checks."""
    def __init__(self, shape):
        self.shape = tuple(shape)
        self.ndim = len(self.shape)


def _where_mask(where_fn, where, axes, x):
    """optax's `where`: a bool mask of x's shape (or of x's shape without `axes`, then
    expanded along them)."""
    if where is None:
        return None
    w = _array(where_fn, "where", where)
    if w.dtype.kind != "b":
        raise TypeError(f"{where_fn}: where must be a bool array, got {w.dtype}")
    if w.ndim != x.ndim:
        if w.ndim + len(axes) != x.ndim:
            raise ValueError(f"{where_fn}: where of shape {tuple(w.shape)} must have the "
                             f"shape of the input {tuple(x.shape)}, or that shape without "
                             f"the reduced axes {axes}")
        w = jnp.expand_dims(w, axes)
    _broadcasts(where_fn, "the input", x, "where", w, to=x.shape)
    return w


def _static_or_array(where, name, value, lo=None, lo_open=False, hi=None):
    """A scalar hyperparameter: a static number checked against its interval, or a 0-d
    array / tracer."""
    if isinstance(value, (Array, Tracer)):
        if value.ndim != 0:
            raise ValueError(f"{where}: {name} must be a scalar, got shape {tuple(value.shape)}")
        return value
    return chk.hyperparam(where, name, value, lo=lo, hi=hi, lo_open=lo_open)


def _sub(where, predictions, targets, same_shape=False):
    p = _array(where, "predictions", predictions, "float")
    if targets is None:
        return p
    t = _array(where, "targets", targets, "real")
    if same_shape and tuple(p.shape) != tuple(t.shape):
        raise ValueError(f"{where}: predictions and targets must have the same shape, got "
                         f"{tuple(p.shape)} and {tuple(t.shape)}")
    _broadcasts(where, "predictions", p, "targets", t)
    return p - t.astype(p.dtype)


# ---- stable building blocks --------------------------------------------------------------

def _log_sigmoid(x):
    """log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), each kink taken by a select so the
    derivative is sigmoid(-x) everywhere, 0.5 at 0 (a max/abs form splits ties wrongly)."""
    neg = x < 0
    neg_abs = jnp.where(neg, x, -x)
    return jnp.where(neg, x, jnp.zeros_like(x)) - jnp.log1p(jnp.exp(neg_abs))


def _softplus(x):
    return -_log_sigmoid(-x)


def _masked_max(x, axes, w):
    if w is not None:
        x = jnp.where(w, x, jnp.full_like(x, -math.inf))
    m = jnp.max(x, axis=axes, keepdims=True)
    # rows that are all -inf (or masked out) shift by 0, not by -inf (no inf - inf)
    return stop_gradient(jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m)))


def _logsumexp(x, axes, w=None, keepdims=False):
    """log(sum(exp(x))) over `axes` (only where `w`), shifted by the stop-gradient max."""
    m = _masked_max(x, axes, w)
    shifted = x - m
    if w is not None:
        shifted = jnp.where(w, shifted, jnp.full_like(shifted, -math.inf))
    out = jnp.log(jnp.sum(jnp.exp(shifted), axis=axes, keepdims=True)) + m
    return out if keepdims else jnp.squeeze(out, axis=axes)


def _log_softmax(x, axes, w=None):
    m = _masked_max(x, axes, w)
    shifted = x - m
    e = jnp.exp(shifted if w is None else jnp.where(w, shifted, jnp.full_like(x, -math.inf)))
    return shifted - jnp.log(jnp.sum(e, axis=axes, keepdims=True))


def _sum(x, axes, w=None, keepdims=False):
    if w is not None:
        x = jnp.where(w, x, jnp.zeros_like(x))
    return jnp.sum(x, axis=axes, keepdims=keepdims)


# ---- regression ---------------------------------------------------------------------------

def squared_error(predictions, targets=None):
    """(predictions - targets)^2 elementwise (targets of the same shape, or None for 0).

    >>> optim.squared_error(jnp.array([1.0, 2.0]), jnp.array([0.0, 0.0]))   # [1, 4]
    """
    return _sub("squared_error", predictions, targets, same_shape=True) ** 2


def l2_loss(predictions, targets=None):
    """0.5 * (predictions - targets)^2 elementwise (targets of the same shape, or None).

    >>> optim.l2_loss(jnp.array([1.0, 2.0]))    # [0.5, 2.0]
    """
    return 0.5 * _sub("l2_loss", predictions, targets, same_shape=True) ** 2


def huber_loss(predictions, targets=None, *, delta=1.0):
    """0.5 * e^2 where |e| <= delta, delta * (|e| - delta / 2) beyond (e = predictions -
    targets; targets broadcast, or None for 0). Its gradient is e clipped to [-delta, delta].

    >>> optim.huber_loss(jnp.array([0.5, 3.0]), delta=1.0)   # [0.125, 2.5]
    """
    delta = _static_or_array("huber_loss", "delta", delta, lo=0.0)
    errors = _sub("huber_loss", predictions, targets)
    abs_errors = jnp.abs(errors)
    quadratic = jnp.minimum(abs_errors, delta)
    linear = abs_errors - quadratic      # max(|e| - delta, 0) with a single gradient path
    return 0.5 * quadratic ** 2 + delta * linear


def log_cosh(predictions, targets=None):
    """log(cosh(predictions - targets)) elementwise, computed as |e| + log1p(exp(-2|e|)) -
    log 2 (no overflow; derivative tanh(e), exactly 0 at e = 0).

    >>> optim.log_cosh(jnp.array([0.0, 100.0]))    # [0, 100 - log 2]
    """
    errors = _sub("log_cosh", predictions, targets)
    a = jnp.where(errors >= 0, errors, -errors)
    return a + jnp.log1p(jnp.exp(-2.0 * a)) - math.log(2.0)


def cosine_similarity(predictions, targets, *, epsilon=0.0, axis=-1, where=None):
    """Cosine of the angle between predictions and targets along `axis`: <a/|a|, b/|b|>, the
    squared norms clipped below at `epsilon` (so zero vectors need epsilon > 0). `where`
    (bool, of the inputs' shape) selects the elements that count.

    >>> optim.cosine_similarity(jnp.array([[1.0, 0.0]]), jnp.array([[1.0, 1.0]]))  # [0.7071]
    """
    return _cosine("cosine_similarity", predictions, targets, epsilon, axis, where)


def cosine_distance(predictions, targets, *, epsilon=0.0, axis=-1, where=None):
    """1 - cosine_similarity(predictions, targets) along `axis`.

    >>> optim.cosine_distance(jnp.array([[1.0, 0.0]]), jnp.array([[0.0, 1.0]]))   # [1.0]
    """
    return 1.0 - _cosine("cosine_distance", predictions, targets, epsilon, axis, where)


def _cosine(fn, predictions, targets, epsilon, axis, where):
    a = _array(fn, "predictions", predictions, "float")
    b = _array(fn, "targets", targets, "float")
    epsilon = _static_or_array(fn, "epsilon", epsilon, lo=0.0)
    shape = _broadcasts(fn, "predictions", a, "targets", b)
    axes = _axes(fn, axis, len(shape))
    w = _where_mask(fn, where, axes, _Shape(shape))
    a_norm = jnp.sqrt(jnp.maximum(_sum(a * a, axes, w, keepdims=True), epsilon))
    b_norm = jnp.sqrt(jnp.maximum(_sum(b * b, axes, w, keepdims=True), epsilon))
    return _sum((a / a_norm) * (b / b_norm), axes, w)


# ---- classification -------------------------------------------------------------------------

def sigmoid_binary_cross_entropy(logits, labels):
    """-labels * log(sigmoid(logits)) - (1 - labels) * log(1 - sigmoid(logits)) elementwise,
    through log-sigmoids (stable for any logit). Labels: {0, 1} or probabilities.

    >>> optim.sigmoid_binary_cross_entropy(jnp.array([0.0, 100.0]), jnp.array([1.0, 0.0]))
    ... # [log 2, 100]
    """
    where = "sigmoid_binary_cross_entropy"
    x = _array(where, "logits", logits, "float")
    y = _array(where, "labels", labels, "numeric")
    _broadcasts(where, "logits", x, "labels", y)
    y = y.astype(x.dtype)
    return -y * _log_sigmoid(x) - (1.0 - y) * _log_sigmoid(-x)


def sigmoid_focal_loss(logits, labels, *, alpha=None, gamma=2.0):
    """Focal loss (Lin et al. 2017): sigmoid_binary_cross_entropy * (1 - p_t)^gamma, times
    alpha_t = alpha * labels + (1 - alpha) * (1 - labels) when alpha is given. (1 - p_t) is
    formed in log space (optax's stable form), so extreme logits give no NaN.

    >>> optim.sigmoid_focal_loss(logits, labels, alpha=0.25, gamma=2.0).mean()
    """
    where = "sigmoid_focal_loss"
    x = _array(where, "logits", logits, "float")
    y = _array(where, "labels", labels, "numeric")
    if alpha is not None:
        alpha = _static_or_array(where, "alpha", alpha, lo=0.0, hi=1.0)
    gamma = _static_or_array(where, "gamma", gamma, lo=0.0)
    _broadcasts(where, "logits", x, "labels", y)
    y = y.astype(x.dtype)
    ce = -y * _log_sigmoid(x) - (1.0 - y) * _log_sigmoid(-x)
    # log(1 - p_t) = log(y sigmoid(-x) + (1 - y) sigmoid(x)), factoring out the larger of
    # y, 1 - y: log_sigmoid(x') + log(y') + softplus(-x' + log1p(-y') - log(y'))
    big = y >= 0.5
    y_p = jnp.where(big, y, 1.0 - y)
    x_p = jnp.where(big, -x, x)
    log_y = jnp.log(y_p)
    log_one_minus_pt = _log_sigmoid(x_p) + log_y + _softplus(-x_p + jnp.log1p(-y_p) - log_y)
    loss = ce * jnp.exp(gamma * log_one_minus_pt)
    if alpha is None:
        return loss
    return (alpha * y + (1.0 - alpha) * (1.0 - y)) * loss


def hinge_loss(predictor_outputs, targets):
    """max(0, 1 - predictor_outputs * targets) elementwise; targets in {-1, 1}.

    >>> optim.hinge_loss(jnp.array([0.5, 2.0]), jnp.array([1.0, -1.0]))   # [0.5, 3.0]
    """
    where = "hinge_loss"
    s = _array(where, "predictor_outputs", predictor_outputs, "real")
    t = _array(where, "targets", targets, "real")
    _broadcasts(where, "predictor_outputs", s, "targets", t)
    return jnp.maximum(0, 1 - s * t)


def softmax_cross_entropy(logits, labels, axis=-1, where=None):
    """-sum(labels * log_softmax(logits)) along `axis` (an int or a tuple), labels being
    probability distributions (e.g. one-hot) that broadcast to logits' shape. `where`
    (bool, logits' shape or logits' shape without `axis`) selects the classes that count.

    >>> optim.softmax_cross_entropy(jnp.array([[1.2, -0.8, -0.5]]),
    ...                             jnp.array([[1.0, 0.0, 0.0]]))     # [0.2761]
    """
    fn = "softmax_cross_entropy"
    x = _array(fn, "logits", logits, "float")
    y = _array(fn, "labels", labels, "numeric")
    _broadcasts(fn, "logits", x, "labels", y, to=x.shape)
    axes = _axes(fn, axis, x.ndim)
    w = _where_mask(fn, where, axes, x)
    return -_sum(y.astype(x.dtype) * _log_softmax(x, axes, w), axes, w)


def safe_softmax_cross_entropy(logits, labels):
    """softmax_cross_entropy over the last axis, with 0 * log(0) taken as 0: classes whose
    label is 0 contribute nothing even where the logit is -inf (value and gradient stay
    finite).

    >>> optim.safe_softmax_cross_entropy(jnp.array([[0.0, -jnp.inf]]),
    ...                                  jnp.array([[1.0, 0.0]]))    # [0.0]
    """
    fn = "safe_softmax_cross_entropy"
    x = _array(fn, "logits", logits, "float")
    y = _array(fn, "labels", labels, "numeric")
    if x.ndim == 0:
        raise ValueError(f"{fn}: logits must have a class axis, got a 0-d array")
    _broadcasts(fn, "logits", x, "labels", y, to=x.shape)
    y = jnp.broadcast_to(y.astype(x.dtype), x.shape)
    axes = (x.ndim - 1,)
    nz = y != 0
    lsm = _log_softmax(x, axes)
    # select the logits of zero-label classes away before the product (no 0 * -inf)
    term = jnp.where(nz, y * jnp.where(nz, lsm, jnp.zeros_like(lsm)), jnp.zeros_like(lsm))
    return -jnp.sum(term, axis=-1)


def softmax_cross_entropy_with_integer_labels(logits, labels, axis=-1, where=None):
    """logsumexp(logits) - logits[label] along `axis`, labels being integer class indices
    of logits' shape without `axis`. With a tuple `axis`, a label is a flat (row-major)
    index into the slice those axes span. `where` (bool) selects the classes that count;
    rows with none selected give 0.

    >>> optim.softmax_cross_entropy_with_integer_labels(
    ...     jnp.array([[1.2, -0.8, -0.5], [0.9, -1.2, 1.1]]), jnp.array([0, 1]))  # [0.2761 2.9518]
    """
    fn = "softmax_cross_entropy_with_integer_labels"
    x = _array(fn, "logits", logits, "float")
    y = _array(fn, "labels", labels, "int")
    if isinstance(axis, bool) or not (isinstance(axis, tuple) or hasattr(axis, "__index__")):
        raise TypeError(f"{fn}: axis must be an int or a tuple of ints, got "
                        f"{type(axis).__name__} {axis!r}")
    if isinstance(axis, tuple):
        logit_axes = tuple(_axes(fn, a, x.ndim)[0] for a in axis)
        if len(set(logit_axes)) != len(logit_axes):
            raise ValueError(f"{fn}: axis={axis} has repeated axes")
    else:
        logit_axes = (_axes(fn, operator.index(axis), x.ndim)[0],)
    batch_axes = tuple(a for a in range(x.ndim) if a not in logit_axes)
    batch_shape = tuple(x.shape[a] for a in batch_axes)
    if y.ndim != len(batch_shape):
        raise ValueError(f"{fn}: labels of shape {tuple(y.shape)} must have logits' shape "
                         f"{tuple(x.shape)} without the class axis {axis}, i.e. "
                         f"{batch_shape}")
    _broadcasts(fn, "logits without the class axis", _Shape(batch_shape), "labels", y,
                to=batch_shape)
    w = _where_mask(fn, where, tuple(sorted(logit_axes)), x)
    if isinstance(axis, tuple):
        # class axes last, in the order given, then flattened into one
        perm = batch_axes + logit_axes
        full_shape = tuple(x.shape)
        x = jnp.reshape(jnp.transpose(x, perm), batch_shape + (-1,))
        if w is not None:
            w = jnp.broadcast_to(w, full_shape)
            w = jnp.reshape(jnp.transpose(w, perm), batch_shape + (-1,))
        ax = len(batch_axes)
    else:
        ax = logit_axes[0]
    if tuple(y.shape) != batch_shape:
        y = jnp.broadcast_to(y, batch_shape)
    label_logits = jnp.squeeze(
        jnp.take_along_axis(x, jnp.expand_dims(y, ax), axis=ax), axis=ax)
    out = _logsumexp(x, (ax,), w) - label_logits
    if w is not None:
        out = jnp.where(jnp.any(w, axis=ax), out, jnp.zeros_like(out))
    return out


def kl_divergence(log_predictions, targets, axis=-1, where=None):
    """KL(targets || predictions) = sum(targets * (log(targets) - log_predictions)) along
    `axis`, with 0 * log(0) taken as 0 (finite gradients there too).

    >>> optim.kl_divergence(jnp.log(jnp.array([[0.5, 0.5]])), jnp.array([[1.0, 0.0]]))
    ... # [log 2]
    """
    fn = "kl_divergence"
    lp = _array(fn, "log_predictions", log_predictions, "float")
    t = _array(fn, "targets", targets, "float")
    shape = _broadcasts(fn, "log_predictions", lp, "targets", t)
    axes = _axes(fn, axis, len(shape))
    loss = t * (jnp.log(jnp.where(t == 0, jnp.ones_like(t), t)) - lp)
    w = _where_mask(fn, where, axes, loss)
    return _sum(loss, axes, w)


def kl_divergence_with_log_targets(log_predictions, log_targets, axis=-1, where=None):
    """KL divergence with the targets given as log-probabilities:
    sum(exp(log_targets) * (log_targets - log_predictions)) along `axis`.

    >>> optim.kl_divergence_with_log_targets(jnp.log(q), jnp.log(p))
    """
    fn = "kl_divergence_with_log_targets"
    lp = _array(fn, "log_predictions", log_predictions, "float")
    lt = _array(fn, "log_targets", log_targets, "float")
    shape = _broadcasts(fn, "log_predictions", lp, "log_targets", lt)
    axes = _axes(fn, axis, len(shape))
    loss = jnp.exp(lt) * (lt - lp)
    w = _where_mask(fn, where, axes, loss)
    return _sum(loss, axes, w)
