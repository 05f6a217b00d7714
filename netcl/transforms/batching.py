"""vmap: vectorise a function over a batch axis by applying each primitive's batching rule.

A `BatchTracer` carries a value with its batch dimension (or None: not batched). The
interpreter binds each primitive once for the whole batch through the primitive's `batch`
rule, never looping over the batch in Python.
"""
import operator

from ..core.tracing import Interpreter, ShapedArray, Tracer, current_interpreter, set_interpreter
from ..tree_util import tree_flatten, tree_unflatten
from .ad import MissingRuleError, _as_array


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, interp, val, bdim):
        self._interp = interp
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        s = self.val.shape
        shape = s if self.bdim is None else s[:self.bdim] + s[self.bdim + 1:]
        return ShapedArray(shape, self.val.dtype, self.val.weak_type)


class BatchInterpreter(Interpreter):
    transform_name = "vmap"

    def __init__(self, parent, axis_size, axis_name=None):
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name

    def lift(self, x):
        if isinstance(x, BatchTracer) and x._interp is self:
            return x.val, x.bdim
        return x, None

    def process(self, prim, args, params):
        if prim.call is not None:
            return prim.call.batch(self, args, params)
        vals, dims = zip(*[self.lift(a) for a in args]) if args else ((), ())
        if all(d is None for d in dims):
            with set_interpreter(self.parent):
                return prim.bind(*vals, **params)
        if prim.batch is None:
            raise MissingRuleError(f"vmap: batching rule for '{prim.name}' is not implemented")
        with set_interpreter(self.parent):
            out, out_dim = prim.batch(vals, dims, **params)
        if prim.multiple_results:
            dims_out = out_dim if isinstance(out_dim, (tuple, list)) else [out_dim] * len(out)
            return tuple(BatchTracer(self, o, d) for o, d in zip(out, dims_out))
        return BatchTracer(self, out, out_dim)

    def concrete(self, tracer, what):
        raise TypeError(f"{what} needs a single concrete value, but inside vmap the array "
                        "holds a whole batch of values; use netcl.numpy.where or "
                        "netcl.lax.cond/select instead of Python control flow")


def _broadcast_prefix(prefix, tree, name):
    """Expand an in_axes/out_axes prefix to one entry per leaf of `tree`."""
    leaves, treedef = tree_flatten(tree, is_leaf=lambda x: x is None)
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, (list, tuple)) and isinstance(tree, (list, tuple)):
        if len(prefix) != len(tree):
            raise ValueError(f"vmap: {name} has {len(prefix)} entries but there are "
                             f"{len(tree)} arguments/outputs")
        out = []
        for p, t in zip(prefix, tree):
            out += _broadcast_prefix(p, t, name)
        return out
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            raise ValueError(f"vmap: {name} keys {sorted(prefix)} differ from the argument's "
                             f"{sorted(tree)}")
        out = []
        for k in sorted(tree):
            out += _broadcast_prefix(prefix[k], tree[k], name)
        return out
    raise ValueError(f"vmap: {name}={prefix!r} is not a prefix of the argument structure "
                     f"{treedef}")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         sum_match=False):
    """Vectorise `fun` over axis `in_axes` of its arguments. `spmd_axis_name` is accepted
    (in JAX it only shards the batch dimension over a mesh axis: the values are the same).

    >>> per_example = netcl.vmap(netcl.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
    """
    if sum_match:
        raise NotImplementedError("vmap: sum_match=True is not supported")
    if spmd_axis_name is not None and not isinstance(spmd_axis_name, (str, tuple)):
        raise TypeError(f"vmap: spmd_axis_name must be a mesh axis name or a tuple of them, "
                        f"got {spmd_axis_name!r}")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def wrapped(*args, **kwargs):
        fname = f"vmap({getattr(fun, '__name__', 'fun')})"
        axes = _broadcast_prefix(in_axes if isinstance(in_axes, tuple) else
                                 (in_axes,) * len(args) if isinstance(in_axes, int) or
                                 in_axes is None else in_axes, tuple(args), "in_axes")
        flat, tree = tree_flatten(tuple(args))
        flat = [_as_array(x, fname) if a is not None else x for x, a in zip(flat, axes)]
        sizes = set()
        norm_axes = []
        for i, (x, a) in enumerate(zip(flat, axes)):
            if a is None:
                norm_axes.append(None)
                continue
            a = operator.index(a)
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"{fname}: in_axes={a} is out of range for argument leaf {i} "
                                 f"of shape {tuple(x.shape)}")
            a %= x.ndim
            norm_axes.append(a)
            sizes.add(x.shape[a])
        if not sizes and axis_size is None:
            raise ValueError(f"{fname}: in_axes maps no argument; give axis_size or map "
                             "at least one argument")
        if len(sizes) > 1:
            raise ValueError(f"{fname}: mapped axes have different sizes {sorted(sizes)} "
                             f"(in_axes={in_axes})")
        size = sizes.pop() if sizes else axis_size
        interp = BatchInterpreter(current_interpreter(), size, axis_name)
        ins = [x if a is None else BatchTracer(interp, x, a) for x, a in zip(flat, norm_axes)]
        if axis_name is None:
            with set_interpreter(interp):
                out = fun(*tree_unflatten(tree, ins), **kwargs)
        else:   # collectives over axis_name (netcl.lax.psum...) see it bound, of this size
            from ..primitives.axis_env import axis_frame
            with axis_frame(axis_name, size), set_interpreter(interp):
                out = fun(*tree_unflatten(tree, ins), **kwargs)
        outs, out_tree = tree_flatten(out)
        o_axes = _broadcast_prefix(out_axes, out, "out_axes")
        res = []
        for o, a in zip(outs, o_axes):
            val, bdim = interp.lift(o) if isinstance(o, Tracer) else (o, None)
            res.append(_move_out(_as_array(val, fname), bdim, a, size, fname))
        return tree_unflatten(out_tree, res)
    wrapped.__name__ = f"vmap_{getattr(fun, '__name__', 'fun')}"
    wrapped.__doc__ = fun.__doc__
    return wrapped


def _move_out(val, bdim, out_axis, size, fname):
    from ..primitives.views import bdim_at_front, move_batch_axis
    if out_axis is None:
        if bdim is not None:
            raise ValueError(f"{fname}: out_axes=None but the output is batched")
        return val
    val = bdim_at_front(val, bdim, size)
    if not -val.ndim <= out_axis < val.ndim:
        raise ValueError(f"{fname}: out_axes={out_axis} is out of range for an output of "
                         f"rank {val.ndim - 1}")
    return move_batch_axis(val, 0, out_axis % val.ndim)
