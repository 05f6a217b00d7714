"""gaussian_kde (jax.scipy.stats.gaussian_kde): a Gaussian kernel density estimate, a
registered pytree (its arrays are leaves: jit, grad and vmap take it as an argument), with
JAX's methods: evaluate / __call__ / pdf, logpdf, integrate_gaussian, integrate_box_1d,
integrate_kde, resample. integrate_box and set_bandwidth raise NotImplementedError, as in
JAX.

>>> kde = st.gaussian_kde(jnp.asarray([0.0, 1.0, 2.0, 4.0]))
>>> kde.evaluate(jnp.asarray([1.0, 10.0]))    # [0.19665501, 1.6610874e-06]
"""
import math
from dataclasses import dataclass

import numpy as np

from ... import numpy as jnp
from ... import random
from ...core import dtypes
from ...tree_util import register_pytree_node_class
from .. import _util as _u
from .. import linalg as _linalg
from .. import special as _sp

__all__ = ["gaussian_kde"]


def _array(where, name, v):
    """v as a float array of the dtype JAX would give it; lists and complex data refused."""
    dt = getattr(v, "dtype", None)
    if dt is not None and dtypes.kind(np.dtype(dt)) == "c":
        raise NotImplementedError(f"{where}: gaussian_kde does not support complex data")
    _u.shape_dtype(where, name, v)
    return v


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:    # noqa: N801 - JAX's (and scipy's) name
    """Gaussian kernel density estimator of `dataset` ((n,) data, or (d, n): n points in d
    dimensions), with bandwidth `bw_method` ("scott" (default), "silverman", a scalar
    factor, or a callable of the estimator) and optional `weights` of the n points.

    >>> kde = st.gaussian_kde(jnp.asarray([[0.0, 1.0, 3.0], [1.0, 0.0, 2.0]]))
    >>> kde.logpdf(jnp.asarray([[0.5], [0.5]]))    # [-2.6303856]
    """
    neff: object
    dataset: object
    weights: object
    covariance: object
    inv_cov: object

    def __init__(self, dataset, bw_method=None, weights=None):
        where = "gaussian_kde"
        dataset = jnp.atleast_2d(_array(where, "dataset", dataset))
        if not dataset.size > 1:
            raise ValueError(f"{where}: `dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            (dataset, weights), _ = _u.floats(where, broadcast=False, dataset=dataset,
                                              weights=_array(where, "weights", weights))
            weights = jnp.atleast_1d(weights)
            if weights.ndim != 1:
                raise ValueError(f"{where}: `weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError(f"{where}: `weights` input should be of length n ({n}), "
                                 f"got {weights.shape[0]}")
            weights = weights / jnp.sum(weights)
        else:
            (dataset,), _ = _u.floats(where, dataset=dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._setattr("dataset", dataset)
        self._setattr("weights", weights)
        neff = self._setattr("neff", 1 / jnp.sum(weights ** 2))

        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError(f"{where}: `bw_method` should be 'scott', 'silverman', a scalar, "
                             f"or a callable; got {bw_method!r}")
        data_cov = _weighted_cov(dataset, weights)
        data_inv_cov = jnp.linalg.inv(data_cov)
        self._setattr("covariance", data_cov * factor ** 2)
        self._setattr("inv_cov", data_inv_cov / factor ** 2)

    def _setattr(self, name, value):
        # a frozen dataclass: the fields are set once, here and in tree_unflatten
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = cls.__new__(cls)
        for name, v in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children):
            kde._setattr(name, v)
        return kde

    @property
    def d(self):
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The estimated density at `points` ((d, m), or (m,) for d = 1, or (d,) for one
        point).

        >>> st.gaussian_kde(jnp.asarray([0.0, 2.0])).evaluate(jnp.asarray([1.0]))  # [0.23299001]
        """
        points = self._reshape_points("gaussian_kde.evaluate", points)
        return _kernel_eval(False, self.dataset.T, self.weights, points.T, self.inv_cov)

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        """The estimated density, as evaluate.

        >>> st.gaussian_kde(jnp.asarray([0.0, 2.0])).pdf(jnp.asarray([1.0]))    # [0.23299001]
        """
        return self.evaluate(x)

    def logpdf(self, x):
        """The log of the estimated density, by logsumexp over the kernels (finite far from
        the data, where the density underflows).

        >>> st.gaussian_kde(jnp.asarray([0.0, 2.0])).logpdf(jnp.asarray([1.0]))  # [-1.4567597]
        """
        x = self._reshape_points("gaussian_kde.logpdf", x)
        return _kernel_eval(True, self.dataset.T, self.weights, x.T, self.inv_cov)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian N(mean, cov).

        >>> st.gaussian_kde(jnp.asarray([0.0, 2.0])).integrate_gaussian(0.0, 1.0)    # 0.18255356
        """
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean does not have dimension "
                             f"{self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: covariance does not have "
                             f"dimension {self.d}")
        chol, norm = self._convolution(self.covariance + cov)
        return _kernel_convolve(chol, norm, self.dataset, self.weights, mean[:, None])[0]

    def integrate_box_1d(self, low, high):
        """The probability mass between `low` and `high` (scalars; one-dimensional data).

        >>> st.gaussian_kde(jnp.asarray([0.0, 2.0])).integrate_box_1d(-np.inf, 1.0)    # 0.5
        """
        where = "gaussian_kde.integrate_box_1d"
        if self.d != 1:
            raise ValueError(f"{where}: integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(f"{where}: the limits of integration in integrate_box_1d must "
                             "be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        lo = jnp.squeeze((low - self.dataset) / sigma)
        hi = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (_sp.ndtr(hi) - _sp.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of this density and `other`'s.

        >>> k = st.gaussian_kde(jnp.asarray([0.0, 2.0])); k.integrate_kde(k)    # 0.17379428
        """
        if other.d != self.d:
            raise ValueError("gaussian_kde.integrate_kde: KDEs are not the same "
                             "dimensionality")
        chol, norm = self._convolution(self.covariance + other.covariance)
        sm, lg = (self, other) if self.n < other.n else (other, self)
        # every pair of points at once (JAX maps over the smaller set's points)
        per_point = _kernel_convolve(chol, norm, lg.dataset, lg.weights, sm.dataset)
        return jnp.sum(per_point * sm.weights)

    def resample(self, key, shape=()):
        """Samples of the estimated distribution, of shape (d,) + shape: data points drawn
        by weight, plus N(0, covariance) noise.

        >>> st.gaussian_kde(jnp.asarray([0.0, 2.0])).resample(random.PRNGKey(0), (5,)).shape
        (1, 5)
        """
        shape = tuple(shape)
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype),
                                         self.covariance, shape=shape,
                                         dtype=self.dataset.dtype)
        # the sample axis last to first (JAX writes .T, which agrees for shapes of rank <= 1)
        return self.dataset[:, ind] + jnp.moveaxis(eps, -1, 0)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not implemented (as in JAX): use integrate_box_1d."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("gaussian_kde.integrate_box: only 1D box integrations "
                                  "are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not implemented (as in JAX): the estimator is immutable; build a new one."""
        del bw_method
        raise NotImplementedError("gaussian_kde.set_bandwidth: dynamically changing the "
                                  "bandwidth method is not supported")

    def _convolution(self, cov):
        """(the Cholesky factor of cov, 1 / the normal's normalising constant)."""
        chol = _linalg.cho_factor(cov)
        norm = math.sqrt(2 * math.pi) ** self.d * jnp.prod(jnp.diag(chol[0]))
        return chol, 1.0 / norm

    def _reshape_points(self, where, points):
        _array(where, "points", points)
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return jnp.reshape(points, (self.d, 1))
            raise ValueError(f"{where}: points have dimension {d}, dataset has dimension "
                             f"{self.d}")
        return points


def _weighted_cov(x, w):
    """np.cov(x, aweights=w) (rows are variables, ddof 1), written out: netcl.numpy.cov
    takes no weights."""
    v1 = jnp.sum(w)
    xc = x - (jnp.sum(x * w, axis=1) / v1)[:, None]
    fact = v1 - jnp.sum(w * w) / v1
    return jnp.matmul(xc * w, xc.T) / fact


def _kernel_convolve(chol, norm, target, weights, means):
    """norm * sum_j w_j exp(-(t_j - m)^T C^-1 (t_j - m) / 2) for each column m of `means`
    (C = chol chol^T), all columns at once: a (d, n_target * n_means) solve."""
    d, n = target.shape
    diff = jnp.reshape(target[:, :, None] - means[:, None, :], (d, -1))
    alpha = _linalg.cho_solve(chol, diff)
    arg = jnp.reshape(jnp.sum(diff * alpha, axis=0) * 0.5, (n, -1))
    return norm * jnp.sum(jnp.exp(-arg) * weights[:, None], axis=0)


def _kernel_eval(in_log, points, weights, xi, precision):
    """The weighted sum (or its log) over the data `points` (n, d) of the Gaussian kernel of
    precision `precision` at each of `xi` (m, d)."""
    (points, weights, xi, precision), _ = _u.floats("gaussian_kde", broadcast=False,
                                                    points=points, weights=weights, xi=xi,
                                                    precision=precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("gaussian_kde: points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("gaussian_kde: precision matrix must match data dims")
    # whitened coordinates: the kernel's exponent is then half a squared distance
    whitening = _linalg.cholesky(precision, lower=True)
    points = jnp.matmul(points, whitening)
    xi = jnp.matmul(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * math.log(2 * math.pi)
    arg = log_norm - 0.5 * jnp.sum(jnp.square(points[None, :, :] - xi[:, None, :]), axis=-1)
    if in_log:
        return _sp.logsumexp(jnp.log(weights)[None, :] + arg, axis=1)
    return jnp.sum(weights[None, :] * jnp.exp(arg), axis=1)
