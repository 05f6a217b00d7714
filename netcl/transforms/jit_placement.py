"""jit's `in_shardings` / `out_shardings`: where a jitted function's results are placed.

netcl does not partition a computation over devices (no GSPMD partitioner: `shard_map` and
`pmap` are how work is split), so a jitted function runs on one device, global-array
arguments gathered there. `out_shardings` puts each result into blocks on the devices of its
sharding, as JAX's results would be; `in_shardings` is checked against the arguments' shapes
(a spec that cannot cut an argument raises before anything runs).

>>> step = netcl.jit(f, out_shardings=NamedSharding(mesh, P("batch")))
"""
from ..core.tracing import Tracer, current_interpreter
from ..core.eval import eval_interpreter
from ..tree_util import tree_flatten, tree_unflatten


class PlacedJitted:
    """A Jitted function whose results go where `out_shardings` says."""

    def __init__(self, jitted, in_shardings, out_shardings):
        self._jitted = jitted
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.__wrapped__ = jitted
        self.__name__ = getattr(jitted, "__name__", "fun")
        self.__doc__ = getattr(jitted, "__doc__", None)

    def __getattr__(self, name):          # lower, clear_cache, trace, ... of the Jitted
        return getattr(self._jitted, name)

    def __get__(self, obj, objtype=None):
        import types
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        from ..sharding import Sharding, expand_prefix
        name = f"jit({self.__name__})"
        if self.in_shardings is not None:
            leaves = tree_flatten(args)[0]
            shardings = expand_prefix(self.in_shardings, args, _is_sharding, name,
                                      "in_shardings")
            for k, (x, s) in enumerate(zip(leaves, shardings)):
                if s is not None and hasattr(x, "shape"):
                    if not isinstance(s, Sharding):
                        raise TypeError(f"{name}: in_shardings entries must be Shardings or "
                                        f"None, got {type(s).__name__}")
                    s.check_fits(tuple(x.shape), f"{name}: in_shardings for argument {k}")
        out = self._jitted(*args, **kwargs)
        if self.out_shardings is None or current_interpreter() is not eval_interpreter:
            return out
        from ..core.global_array import put
        flat, tree = tree_flatten(out)
        shardings = expand_prefix(self.out_shardings, out, _is_sharding, name, "out_shardings")
        return tree_unflatten(tree, [y if s is None or isinstance(y, Tracer)
                                     else put(y, s, name) for y, s in zip(flat, shardings)])


def _is_sharding(s):
    from ..sharding import Sharding
    return s is None or isinstance(s, Sharding)
