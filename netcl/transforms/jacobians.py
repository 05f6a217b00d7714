"""Jacobians and Hessians: vmap over vjp (jacrev) or over jvp (jacfwd), as in JAX."""
from ..core import dtypes
from ..core.shapes import prod
from ..tree_util import tree_flatten, tree_unflatten
from .ad import _argnums_tuple, _as_array, jvp, vjp
from .batching import vmap


def _basis(x):
    """The standard basis of x's space, stacked: shape (x.size, *x.shape)."""
    from ..numpy import eye, reshape
    n = prod(x.shape)
    return reshape(eye(n, dtype=x.dtype), (n,) + tuple(x.shape))


def _reshape(x, shape):
    from ..primitives.views import reshape
    return reshape(x, shape)


def _check_holomorphic(where, leaves, what, holomorphic):
    """JAX's rules: real float `what` (complex ones need holomorphic=True, which needs them
    complex)."""
    from ..core import dtypes
    for v in leaves:
        if holomorphic and not dtypes.is_complex(v.dtype):
            raise TypeError(f"{where} with holomorphic=True requires complex {what}, got "
                            f"{v.dtype}")
        if not holomorphic and dtypes.is_complex(v.dtype):
            raise TypeError(f"{where} requires real-valued {what} (got {v.dtype}); for "
                            "holomorphic differentiation, pass holomorphic=True")


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: one vjp per output element, batched with vmap. Outputs are
    real, or complex with `holomorphic=True` (inputs complex too): then J[i, j] = df_i/dz_j.
    Integer and bool inputs need allow_int=True, and their blocks are zeros of the input's
    dtype and shape out.shape + in.shape, as JAX's.

    >>> J = netcl.jacrev(f)(x)      # shape f(x).shape + x.shape
    """
    def wrapped(*args):
        nums, multi = _argnums_tuple(argnums, len(args), "jacrev")

        def partial_fun(*dyn):
            full = list(args)
            for n, d in zip(nums, dyn):
                full[n] = d
            return fun(*full)
        dyn = [args[n] for n in nums]
        leaves = [_as_array(leaf, "jacrev") for leaf in tree_flatten(dyn)[0]]
        ints = [not dtypes.is_inexact(v.dtype) for v in leaves]
        if any(ints) and not allow_int:
            bad = next(v for v, i in zip(leaves, ints) if i)
            raise TypeError(f"jacrev: differentiated inputs must be float (or complex) "
                            f"arrays, got {bad.dtype}; pass allow_int=True (zero Jacobian "
                            "blocks for integer inputs), or leave them out of argnums")
        if holomorphic:        # (errors name jacrev, not the vjp it runs)
            _check_holomorphic("jacrev", leaves, "inputs", True)
        res = vjp(partial_fun, *dyn, has_aux=has_aux)
        y, pullback = res[0], res[1]
        ys, y_tree = tree_flatten(y)
        ys = [_as_array(v, "jacrev") for v in ys]
        _check_holomorphic("jacrev", ys, "outputs", holomorphic)
        dyn_flat, dyn_tree = tree_flatten(tuple(dyn))
        per_out = []
        for i, yi in enumerate(ys):
            def pull_i(ct, i=i):
                cts = [ct if j == i else _zeros(yj) for j, yj in enumerate(ys)]
                return tree_flatten(pullback(tree_unflatten(y_tree, cts)))[0]
            cols = vmap(pull_i)(_basis(yi))  # each: (yi.size, *arg_shape)
            per_out.append([_zeros_of(tuple(yi.shape) + tuple(a.shape), a.dtype) if
                            i_ else _reshape(c, tuple(yi.shape) + tuple(a.shape))
                            for c, a, i_ in zip(cols, dyn_flat, ints)])
        # result structure: outputs outside, arguments inside (as JAX)
        out = tree_unflatten(y_tree, [_pick(tree_unflatten(dyn_tree, cols), multi)
                                      for cols in per_out])
        return (out, res[2]) if has_aux else out
    return wrapped


def _zeros_of(shape, dtype):
    from ..primitives.views import full
    return full(shape, 0, dtype)


def _pick(dyn_tuple, multi):
    return dyn_tuple if multi else dyn_tuple[0]


def _zeros(x):
    from ..primitives.views import full
    return full(x.shape, 0, x.dtype)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: one jvp per input element, batched with vmap. Inputs are
    real, or complex with `holomorphic=True`."""
    def wrapped(*args):
        nums, multi = _argnums_tuple(argnums, len(args), "jacfwd")
        dyn = [args[n] for n in nums]
        dyn_flat, dyn_tree = tree_flatten(tuple(dyn))
        dyn_flat = [_as_array(d, "jacfwd") for d in dyn_flat]
        _check_holomorphic("jacfwd", dyn_flat, "inputs", holomorphic)

        def partial_fun(*flat):
            full = list(args)
            for n, d in zip(nums, tree_unflatten(dyn_tree, flat)):
                full[n] = d
            return fun(*full)
        per_arg = []
        aux = None
        y_tree = None
        for k, a in enumerate(dyn_flat):
            def push(t, k=k):
                ts = [t if j == k else _zeros(d) for j, d in enumerate(dyn_flat)]
                r = jvp(partial_fun, tuple(dyn_flat), tuple(ts), has_aux=has_aux)
                return r[1]
            cols = vmap(push)(_basis(a))  # pytree of (a.size, *y_shape)
            leaves, y_tree = tree_flatten(cols)
            per_arg.append(leaves)
        if has_aux:
            aux = jvp(partial_fun, tuple(dyn_flat), tuple(_zeros(d) for d in dyn_flat),
                      has_aux=True)[2]
        from ..numpy import moveaxis
        outs = []
        for j in range(len(per_arg[0]) if per_arg else 0):
            cols = []
            for k, a in enumerate(dyn_flat):
                c = per_arg[k][j]  # (a.size, *y_shape)
                y_shape = tuple(c.shape[1:])
                c = moveaxis(c, 0, -1) if c.ndim > 1 else c
                cols.append(_reshape(c, y_shape + tuple(a.shape)))
            outs.append(_pick(tree_unflatten(dyn_tree, cols), multi))
        out = tree_unflatten(y_tree, outs)
        return (out, aux) if has_aux else out
    return wrapped


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """Hessian of a scalar function: jacfwd(jacrev(f))."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
