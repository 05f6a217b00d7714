"""The gamma family of jax.random, drawing what JAX draws from a key: gamma, loggamma, and on
them beta, dirichlet, chisquare, t and f.

gamma is Marsaglia and Tsang's rejection sampler as JAX writes it (`_gamma_one`): one key per
element (split(key, a.size)); per element, key -> (key, subkey), then rounds of key ->
(key, x_key, u_key) until a candidate is accepted, each round drawing normals from x_key
(x_key -> (x_key, sub), normal(sub, ())) until v = 1 + x c > 0 and a uniform from u_key;
for a < 1 the sample of a + 1 is boosted by uniform(subkey) ** (1 / a) (loggamma: in log
space, with -exponential(subkey) / a). JAX runs the loop per element; here one loop runs
over all the elements at once, each element's carry frozen once accepted, which draws the
same numbers. The loop is netcl.lax.while_loop (a real loop under jit; under vmap it runs
until every example is done).

The derivative with respect to `a` is JAX's implicit reparameterization: d sample / da =
lax.random_gamma_grad(a, sample) (divided by the sample in log space), so gamma, loggamma,
beta, dirichlet and the samplers built on them differentiate in their parameters as in JAX.

>>> from netcl import random
>>> random.gamma(random.PRNGKey(0), 2.0, (3,))
"""
from ..core.shapes import prod
from ..transforms.custom import custom_jvp
from .continuous import _normal, _uniform
from .distributions import (_arg_dtype, _check_safe_cast, _dtype, _jnp, _shape, _split2,
                            checked_arguments)
from .keys import _check_key, split

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "t", "f"]


def _vmap(fun, *args):
    from ..transforms.batching import vmap
    return vmap(fun)(*args)


def _draw_all(name, keys, alpha, log_space):
    """gamma (or log-gamma) samples, one per key of `keys` (n, 2) and alpha (n,)."""
    from ..lax import while_loop
    jnp = _jnp()
    dtype = alpha.dtype
    zeros = jnp.zeros_like(alpha)
    boost_mask = alpha >= 1
    alpha_orig = alpha
    alpha = jnp.where(boost_mask, alpha, alpha + 1)
    d = alpha - 1.0 / 3.0
    c = (1.0 / 3.0) / jnp.sqrt(d)

    def split_each(ks, num):
        return _vmap(lambda k: split(k, num), ks)

    def pending(X, V, U):
        return (U >= 1 - 0.0331 * (X * X)) & (jnp.log(U) >= X * 0.5 + d * ((1 - V) +
                                                                          jnp.log(V)))

    def next_normal(state):
        x_key, x, v = state
        active = v <= 0
        ks = split_each(x_key, 2)
        xn = _vmap(lambda k: _normal(name, k, (), dtype), ks[:, 1])
        vn = 1 + xn * c
        return (jnp.where(active[:, None], ks[:, 0], x_key), jnp.where(active, xn, x),
                jnp.where(active, vn, v))

    def round_(state):
        key, X, V, U = state
        todo = pending(X, V, U)
        ks = split_each(key, 3)
        _, x, v = while_loop(lambda s: jnp.any(s[2] <= 0), next_normal,
                             (ks[:, 1], zeros, zeros - 1))
        Un = _vmap(lambda k: _uniform(name, k, (), dtype, 0.0, 1.0), ks[:, 2])
        return (jnp.where(todo[:, None], ks[:, 0], key), jnp.where(todo, x * x, X),
                jnp.where(todo, (v * v) * v, V), jnp.where(todo, Un, U))

    ks = split_each(keys, 2)
    _, _, V, _ = while_loop(lambda s: jnp.any(pending(*s[1:])), round_,
                            (ks[:, 0], zeros, zeros + 1, zeros + 2))
    u = _vmap(lambda k: _uniform(name, k, (), dtype, 0.0, 1.0), ks[:, 1])
    if log_space:
        log_samples = jnp.log1p(-u)         # -exponential(subkey)
        log_boost = jnp.where(boost_mask | (log_samples == 0), 0,
                              log_samples * (1 / alpha_orig))
        return (jnp.log(d) + jnp.log(V)) + log_boost
    boost = jnp.where(boost_mask, 1, (1 - u) ** (1 / alpha_orig))
    return (d * V) * boost


def _reparameterized_jvp(sample, log_space):
    """The samples' tangent in `a`: random_gamma_grad(a, x) a_dot for x = the sample (in log
    space the derivative of log x: divided by x, kept off 0 where exp underflows), as JAX."""
    def jvp(primals, tangents):
        from ..lax_more_random import random_gamma_grad
        jnp = _jnp()
        key, a = primals
        a_dot = tangents[1]
        out = sample(key, a)
        if log_space:
            x = jnp.exp(out)
            x = jnp.where(x == 0, jnp.finfo(x.dtype).tiny, x)
            return out, a_dot * random_gamma_grad(a, x) / x
        return out, a_dot * random_gamma_grad(a, out)
    return jvp


def _make_sampler(name, log_space):
    @custom_jvp
    def sample(key, a):
        n = prod(a.shape)
        keys = split(key, n)
        out = _draw_all(name, keys, _jnp().reshape(a, (n,)), log_space)
        return _jnp().reshape(out, a.shape)
    sample.defjvp(_reparameterized_jvp(sample, log_space))
    return sample


_gamma_sample = _make_sampler("gamma", False)
_loggamma_sample = _make_sampler("loggamma", True)


def _gamma_impl(name, key, a, shape, dtype, log_space):
    """JAX's _gamma: `a` as `dtype` broadcast to `shape` (default: a's shape), sampled."""
    jnp = _jnp()
    key = _check_key(name, key)
    dtype = _dtype(name, dtype, key)
    _arg_dtype(name, "a", a)
    shape = _shape(name, shape, [("a", a)])
    a = jnp.broadcast_to(jnp.asarray(a).astype(dtype), shape)
    return (_loggamma_sample if log_space else _gamma_sample)(key, a)


def gamma(key, a, shape=None, dtype=None):
    """Gamma values of shape parameter `a` (scale 1), Marsaglia and Tsang's method; `a`
    broadcasts to `shape` (default: a's shape).

    >>> netcl.random.gamma(netcl.random.PRNGKey(0), 2.0, (3,))
    """
    return _gamma_impl("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape=None, dtype=None):
    """The logarithms of gamma values, drawn in log space (accurate for small `a`, where
    gamma values underflow).

    >>> netcl.random.loggamma(netcl.random.PRNGKey(0), 0.01, (3,))
    """
    return _gamma_impl("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape=None, dtype=None):
    """Beta(a, b) values: G_a / (G_a + G_b) of two log-gamma draws (split keys), scaled by
    their maximum.

    >>> netcl.random.beta(netcl.random.PRNGKey(0), 2.0, 3.0, (3,))
    """
    jnp = _jnp()
    key = _check_key("beta", key)
    dtype = _dtype("beta", dtype, key)
    named = [("a", a), ("b", b)]
    for arg, x in named:
        _arg_dtype("beta", arg, x)
    _check_safe_cast("beta", dtype, named)
    shape = _shape("beta", shape, named)
    key_a, key_b = _split2(key)
    a = jnp.broadcast_to(jnp.asarray(a).astype(dtype), shape)
    b = jnp.broadcast_to(jnp.asarray(b).astype(dtype), shape)
    log_a = _loggamma_sample(key_a, a)
    log_b = _loggamma_sample(key_b, b)
    log_max = jnp.maximum(log_a, log_b)
    ga, gb = jnp.exp(log_a - log_max), jnp.exp(log_b - log_max)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet values with concentrations `alpha` (..., k): softmax of k log-gamma draws;
    result shape shape + (k,) (shape defaults to alpha.shape[:-1]).

    >>> netcl.random.dirichlet(netcl.random.PRNGKey(0), jnp.ones(3), (2,)).shape
    (2, 3)
    """
    from ..core.shapes import canonical_shape
    from .continuous import _check_shape, _shape_of
    jnp = _jnp()
    key = _check_key("dirichlet", key)
    dtype = _dtype("dirichlet", dtype, key)
    _arg_dtype("dirichlet", "alpha", alpha)
    ashape = _shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(f"dirichlet: alpha must have at least one dimension, got shape "
                         f"{ashape}")
    if shape is None:
        shape = ashape[:-1]
    else:
        shape = canonical_shape(shape, "dirichlet")
        _check_shape("dirichlet", shape, ashape[:-1])
    full = shape + ashape[-1:]
    alpha = jnp.broadcast_to(jnp.asarray(alpha).astype(dtype), full)
    log_g = _loggamma_sample(key, alpha)
    from ..nn import softmax
    return softmax(log_g, axis=-1)


def _checked(name, key, dtype, shape, named):
    key, dtype, shape = checked_arguments(name, key, shape, dtype, named)
    jnp = _jnp()
    return key, dtype, shape, [jnp.asarray(x).astype(dtype) for _, x in named]


def _chi2(key, df, shape, dtype):
    jnp = _jnp()
    half_df = jnp.broadcast_to(df / 2, shape)
    return jnp.exp(_loggamma_sample(key, half_df)) * 2


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square values with `df` degrees of freedom: 2 * exp(loggamma(df / 2)).

    >>> netcl.random.chisquare(netcl.random.PRNGKey(0), 3.0, (3,))
    """
    key, dtype, shape, (df,) = _checked("chisquare", key, dtype, shape, [("df", df)])
    return _chi2(key, df, shape, dtype)


def t(key, df, shape=None, dtype=None):
    """Student's t values with `df` degrees of freedom: n * sqrt(df / 2 / g), n normal and
    g gamma(df / 2) (split keys).

    >>> netcl.random.t(netcl.random.PRNGKey(0), 5.0, (3,))
    """
    jnp = _jnp()
    key, dtype, shape, (df,) = _checked("t", key, dtype, shape, [("df", df)])
    key_n, key_g = _split2(key)
    n = _normal("t", key_n, shape, dtype)
    half_df = df / 2
    g = _gamma_sample(key_g, jnp.broadcast_to(half_df, shape))
    return n * jnp.sqrt(half_df / g)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F values: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden), the denominator's draw from
    the first split key.

    >>> netcl.random.f(netcl.random.PRNGKey(0), 3.0, 5.0, (3,))
    """
    key, dtype, shape, (dfnum, dfden) = _checked(
        "f", key, dtype, shape, [("dfnum", dfnum), ("dfden", dfden)])
    key_dfd, key_dfn = _split2(key)
    chi2_dfn = _chi2(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chi2(key_dfd, dfden, shape, dtype)
    return (chi2_dfn / dfnum) / (chi2_dfd / dfden)

