"""shard_map: a function run per block of a mesh, with collectives over the mesh's axes.

`shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)` cuts each argument into
blocks as its PartitionSpec says, runs `f` on every block with each mesh axis bound as a
collective axis (`lax.psum(y, "i")`, `lax.axis_index("i")`), and puts the results' blocks
together as `out_specs` say; a mesh axis an out spec does not name must hold the same value on
every device (as JAX's check_vma, checked while tracing).

How it runs:
- the blocks are the batch of one vmap level per mesh axis (`_run_levels`): the same
  batching rules as `vmap(f, axis_name=...)`, so shard_map composes with grad, jit and vmap;
- called on concrete arrays over a mesh whose devices lie along one axis (`make_mesh((n,),
  ...)`), that axis is a `pmap` over the devices (devices run concurrently, collectives on
  pmap's paths) and arguments already placed as the specs ask (GlobalArrays from
  `device_put(x, NamedSharding(mesh, spec))` or an earlier shard_map) stay where they are;
- other meshes run the batched function under jit on one device and place the results'
  blocks on the mesh's devices.

>>> mesh = netcl.make_mesh((2,), ("i",))
>>> f = netcl.shard_map(lambda x: x / lax.psum(x.sum(), "i"), mesh=mesh,
...                     in_specs=P("i"), out_specs=P("i"))
>>> f(jnp.arange(4.0))        # blocks [0, 1] and [2, 3], each divided by 6
"""
import functools
from dataclasses import dataclass

from ..core.array import Array
from ..core.eval import to_array
from ..core.global_array import GlobalArray, Shard
from ..core.sharded import ShardedArray
from ..core.tracing import Tracer, current_interpreter, set_interpreter
from ..primitives.axis_env import axis_frame
from ..sharding import (Mesh, NamedSharding, PartitionSpec, _names_of, block_shape,
                        expand_prefix, get_mesh)
from ..tree_util import tree_flatten, tree_unflatten
from .batching import BatchInterpreter, BatchTracer, _as_array


class _Infer:
    def __repr__(self):
        return "Infer"


Infer = _Infer()         # in_specs from the arguments' NamedShardings (jax.sharding.Infer)
_REQUIRED = object()


def shard_map(f=None, mesh=None, in_specs=Infer, out_specs=_REQUIRED, check_rep=True,
              auto=frozenset(), *, axis_names=frozenset(), check_vma=None):
    """jax.shard_map (and jax.experimental.shard_map.shard_map's positional form).

    `in_specs`/`out_specs`: pytree prefixes of the arguments / results with PartitionSpec
    leaves; `mesh` defaults to the mesh of `with mesh:` / `set_mesh`; `axis_names` (default
    all) the mesh axes split manually, the others (and `auto`) left whole; `check_vma`
    (`check_rep`) checks that results are the same along mesh axes their spec leaves out.

    >>> @functools.partial(netcl.shard_map, mesh=mesh, in_specs=(P("i"), P()),
    ...                    out_specs=P())
    ... def loss(xs, w):
    ...     return lax.pmean(jnp.mean((xs @ w) ** 2), "i")
    """
    if out_specs is _REQUIRED:
        raise TypeError("shard_map: missing the required argument out_specs")
    check = check_rep if check_vma is None else check_vma
    if f is None:
        return lambda fun: shard_map(fun, mesh, in_specs, out_specs, check, auto,
                                     axis_names=axis_names)
    if not callable(f):
        raise TypeError(f"shard_map: expected a function, got {type(f).__name__}")
    return _ShardMapped(f, mesh, in_specs, out_specs, bool(check), frozenset(auto),
                        frozenset(axis_names))


class _ShardMapped:
    def __init__(self, fun, mesh, in_specs, out_specs, check, auto, axis_names, donate=()):
        functools.update_wrapper(self, fun)      # (first: fun's __dict__ must not win)
        self.fun = fun
        self.donate = tuple(donate)      # argument positions (from jit(shard_map(f), ...))
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.check = check
        self.auto = auto
        self.axis_names = axis_names
        self._jitted = {}
        self._pmapped = {}       # (signature, in_axes) -> _DevicePlan
        self._checked = {}       # signature -> the manual axes (its specs checked)
        self._shardings = {}     # (mesh, spec) -> NamedSharding
        self._per_tree = {}      # argument structure -> (in specs, donated leaves)

    def under_jit(self, donate_argnums):
        """`jit(shard_map(f, ...), donate_argnums=...)`: the shard_map itself (it compiles
        its blocks' function already), with the donated arguments' buffers given to it."""
        return _ShardMapped(self.fun, self.mesh, self.in_specs, self.out_specs, self.check,
                            self.auto, self.axis_names, donate_argnums)

    def _donated_leaves(self, args):
        out, start = [], 0
        for i, a in enumerate(args):
            n = len(tree_flatten(a)[0])
            if i in self.donate:
                out += range(start, start + n)
            start += n
        return tuple(out)

    @property
    def _name(self):
        return f"shard_map({getattr(self.fun, '__name__', 'fun')})"

    # -- the call --

    def __call__(self, *args):
        mesh = self._mesh()
        leaves, in_tree = tree_flatten(args)
        traced = any(isinstance(x, Tracer) for x in leaves)
        leaves = [x if isinstance(x, (Array, Tracer, GlobalArray, ShardedArray))
                  else to_array(x, self._name) for x in leaves]
        per_tree = self._per_tree.get(in_tree)
        if per_tree is None or self.in_specs is Infer:
            per_tree = (tuple(self._in_specs(args, leaves, mesh)), self._donated_leaves(args))
            self._per_tree[in_tree] = per_tree
        specs, donated = per_tree
        sig = (mesh, in_tree, specs, tuple((tuple(x.shape), x.dtype) for x in leaves))
        manual = self._checked.get(sig)
        if manual is None:                  # (checked once per signature)
            manual = self._manual_axes(mesh)
            for k, (x, spec) in enumerate(zip(leaves, specs)):
                self._check_in_spec(k, x, spec, mesh, manual)
            self._checked[sig] = manual
        donated = () if traced else donated
        spread = [a for a in manual if mesh.shape[a] > 1]
        if not traced and len(spread) == 1 and mesh.shape[spread[0]] == mesh.size:
            return self._on_devices(mesh, manual, spread[0], leaves, specs, in_tree, donated,
                                    sig)
        key = (mesh, in_tree, specs)
        fn = self._jitted.get(key)
        if fn is None:
            from .jit import jit
            fn = jit(functools.partial(self._global, mesh, manual, in_tree, specs),
                     donate_argnums=donated)
            fn.__name__ = self._name
            self._jitted[key] = fn
        outs = fn(*leaves)
        if traced:
            return outs
        flat, out_tree = tree_flatten(outs)
        placed = [_place(y, self._sharding(mesh, s))
                  for y, s in zip(flat, self._out_specs(outs, mesh, manual))]
        return tree_unflatten(out_tree, placed)

    def _sharding(self, mesh, spec):
        s = self._shardings.get((mesh, spec))
        if s is None:
            s = self._shardings[(mesh, spec)] = NamedSharding(mesh, spec)
        return s

    def _global(self, mesh, manual, in_tree, specs, *leaves):
        """The whole computation on global arrays: blocks stacked, one vmap level per mesh
        axis, results unstacked."""
        stacked = [_stack(x, s, manual, mesh) for x, s in zip(leaves, specs)]
        outs, out_tree, out_specs = self._run_levels(mesh, manual, manual, in_tree, specs,
                                                     stacked)
        return tree_unflatten(out_tree, [_unstack(y, s, manual, mesh)
                                         for y, s in zip(outs, out_specs)])

    def _run_levels(self, mesh, manual, levels, in_tree, specs, stacked):
        """f on the blocks: stacked[k] carries one leading dimension per level its spec
        names (in `levels` order, a subset of the manual axes); results carry one per level
        their out spec names."""
        found = {}

        def run(depth, xs):
            if depth == len(levels):
                out = self.fun(*tree_unflatten(in_tree, xs))
                flat, out_tree = tree_flatten(out)
                found["tree"] = out_tree
                found["specs"] = self._out_specs(out, mesh, manual)
                return flat
            name = levels[depth]
            size = mesh.shape[name]
            interp = BatchInterpreter(current_interpreter(), size, name)
            ins = [BatchTracer(interp, x, 0) if name in s.axis_names() else x
                   for x, s in zip(xs, specs)]
            with axis_frame(name, size), set_interpreter(interp):
                outs = run(depth + 1, ins)
            res = []
            for k, o in enumerate(outs):
                val, bdim = interp.lift(o) if isinstance(o, Tracer) else (o, None)
                val = _as_array(val, self._name)
                res.append(self._level_out(val, bdim, size, name, found["specs"][k], k))
            return res
        outs = run(0, list(stacked))
        return outs, found["tree"], found["specs"]

    def _level_out(self, val, bdim, size, name, spec, k):
        from ..primitives.views import bdim_at_front
        from ..lax_extras import index_in_dim
        if name in spec.axis_names():
            return bdim_at_front(val, bdim, size)
        if bdim is None:
            return val
        if self.check:
            raise ValueError(
                f"{self._name}: out_specs {spec!r} for result {k} leave out mesh axis "
                f"{name!r}, which says the result is the same on every device along it, but "
                f"the result varies along {name!r}. Name {name!r} in the out spec, reduce "
                f"over it (lax.psum/pmean), or pass check_vma=False to take the first "
                f"device's value.")
        return index_in_dim(val, 0, bdim, keepdims=False)

    # -- one mesh axis of devices: pmap --

    def _on_devices(self, mesh, manual, axis, leaves, specs, in_tree, donated, sig):
        levels = [axis] + [a for a in manual if a != axis]
        devices = list(mesh.devices.flat)
        ins, in_axes = [], []
        for x, s in zip(leaves, specs):
            if isinstance(x, GlobalArray) and x.sharding == self._sharding(mesh, s):
                inner = (1,) * sum(a in s.axis_names() for a in levels[1:])
                ins.append(ShardedArray([_reshaped(sh.data, inner + tuple(sh.data.shape))
                                         for sh in x.addressable_shards]))
                in_axes.append(0)
            else:
                ins.append(_stack(x if isinstance(x, Array) else to_array(x, self._name),
                                  s, levels, mesh))
                in_axes.append(0 if axis in s.axis_names() else None)
        key = (sig, tuple(in_axes))
        entry = self._pmapped.get(key)
        if entry is None:
            entry = self._pmapped[key] = self._make_pmap(mesh, manual, levels, in_tree, specs,
                                                         in_axes, leaves, devices, donated)
        outs = entry.pmapped(*ins)
        return tree_unflatten(entry.out_tree, [
            GlobalArray(layout.shape, layout.sharding, [
                Shard(d, index, replica, _reshaped(data, layout.block))
                for (d, index, replica), data in zip(layout.blocks, y.shards)])
            for y, layout in zip(outs, entry.layouts)])

    def _make_pmap(self, mesh, manual, levels, in_tree, specs, in_axes, leaves, devices,
                   donated):
        from ..api_extras import eval_shape
        from .pmap import pmap
        # Traced once over the global values: the results' structure, specs and shapes, and
        # the check that results left out of an axis do not vary along it.
        found = {}

        def whole(*xs):
            out = self._global(mesh, manual, in_tree, specs, *xs)
            found["tree"] = tree_flatten(out)[1]
            found["specs"] = self._out_specs(out, mesh, manual)
            return out
        shapes = [tuple(o.shape) for o in tree_flatten(eval_shape(whole, *leaves))[0]]

        def per_device(*xs):
            return self._run_levels(mesh, manual, levels[1:], in_tree, specs, xs)[0]
        per_device.__name__ = getattr(self.fun, "__name__", "fun")
        pmapped = pmap(per_device, axis_name=levels[0], in_axes=tuple(in_axes), out_axes=0,
                       devices=devices, axis_size=len(devices), donate_argnums=donated)
        layouts = []
        for spec, shape in zip(found["specs"], shapes):
            sharding = self._sharding(mesh, spec)
            layouts.append(_Layout(shape, sharding, sharding.shard_shape(shape),
                                   list(sharding._blocks(shape))))
        return _DevicePlan(pmapped, found["tree"], layouts)

    # -- specs --

    def _mesh(self):
        mesh = self.mesh if self.mesh is not None else get_mesh()
        if mesh is None:
            raise ValueError(f"{self._name}: no mesh: pass mesh= or call inside `with mesh:` "
                             "/ netcl.sharding.set_mesh(mesh)")
        if not isinstance(mesh, Mesh):
            raise TypeError(f"{self._name}: mesh must be a netcl.sharding.Mesh, got "
                            f"{type(mesh).__name__}")
        return mesh

    def _manual_axes(self, mesh):
        names = set(self.axis_names) if self.axis_names else set(mesh.axis_names)
        names -= set(self.auto)
        for n in names:
            if n not in mesh.axis_names:
                raise ValueError(f"{self._name}: axis_names names {n!r}, which is not an axis "
                                 f"of the mesh {mesh.axis_names}")
        return [n for n in mesh.axis_names if n in names]

    def _in_specs(self, args, leaves, mesh):
        if self.in_specs is Infer:
            return [x.sharding.spec if isinstance(x, GlobalArray)
                    and isinstance(x.sharding, NamedSharding) and x.sharding.mesh == mesh
                    else PartitionSpec() for x in leaves]
        specs = expand_prefix(self.in_specs, args, _is_spec, self._name, "in_specs")
        for k, s in enumerate(specs):
            if not _is_spec(s):
                raise TypeError(f"{self._name}: in_specs entries must be PartitionSpecs, got "
                                f"{type(s).__name__} {s!r} for argument {k}")
        return [PartitionSpec() if s is None else s for s in specs]

    def _out_specs(self, out, mesh, manual):
        specs = expand_prefix(self.out_specs, out, _is_spec, self._name, "out_specs")
        flat = tree_flatten(out)[0]
        for k, (y, s) in enumerate(zip(flat, specs)):
            if s is not None and not isinstance(s, PartitionSpec):
                raise TypeError(f"{self._name}: out_specs entries must be PartitionSpecs, got "
                                f"{type(s).__name__} {s!r} for result {k}")
            if s is None:
                raise ValueError(f"{self._name}: out_specs entry for result {k} is None; "
                                 "give a PartitionSpec (P() for a replicated result)")
            self._check_spec_names("out_specs", k, s, manual)
            if len(s) > len(y.shape):
                raise ValueError(f"{self._name}: out_specs {s!r} for result {k} has "
                                 f"{len(s)} entries; the result has rank {len(y.shape)} "
                                 f"(shape {tuple(y.shape)})")
        return specs

    def _check_spec_names(self, what, k, spec, manual):
        names = spec.axis_names()
        if len(set(names)) != len(names):
            raise ValueError(f"{self._name}: {what} {spec!r} (entry {k}) names a mesh axis "
                             "twice")
        for n in names:
            if n not in manual:
                raise ValueError(f"{self._name}: {what} {spec!r} (entry {k}) names {n!r}, "
                                 f"which is not a manual axis of the mesh (manual: {manual})")

    def _check_in_spec(self, k, x, spec, mesh, manual):
        self._check_spec_names("in_specs", k, spec, manual)
        shape = tuple(x.shape)
        if len(spec) > len(shape):
            raise ValueError(f"{self._name}: in_specs {spec!r} for argument {k} has "
                             f"{len(spec)} entries; the argument has rank {len(shape)} "
                             f"(shape {shape}, {x.dtype})")
        block_shape(shape, spec, mesh, f"{self._name}: argument {k}")


@dataclass(frozen=True)
class _Layout:
    """Where a result's blocks go: its global shape, sharding, block shape and (device,
    index, replica id) per device in mesh order."""
    shape: tuple
    sharding: NamedSharding
    block: tuple
    blocks: list


@dataclass(frozen=True)
class _DevicePlan:
    """A signature's pmap over the mesh's devices and its results' layouts."""
    pmapped: object
    out_tree: object
    layouts: list


def _is_spec(s):
    return s is None or isinstance(s, PartitionSpec)


# ---- blocks as leading dimensions ----------------------------------------------------------

def _stack(x, spec, levels, mesh):
    """x with each split dimension cut into (one dim per mesh axis, the block), the mesh-axis
    dimensions first in `levels` order."""
    shape, new_shape, axis_pos, block_pos = tuple(x.shape), [], {}, []
    for dim, n in enumerate(shape):
        names = _names_of(spec[dim]) if dim < len(spec) else ()
        k = 1
        for name in names:
            axis_pos[name] = len(new_shape)
            new_shape.append(mesh.shape[name])
            k *= mesh.shape[name]
        block_pos.append(len(new_shape))
        new_shape.append(n // k)
    if not axis_pos:
        return x
    perm = [axis_pos[a] for a in levels if a in axis_pos] + block_pos
    return x.reshape(tuple(new_shape)).transpose(perm)


def _unstack(y, spec, levels, mesh):
    """The inverse of _stack: leading mesh-axis dimensions merged into the dims they split."""
    used = [a for a in levels if a in spec.axis_names()]
    if not used:
        return y
    pos = {a: i for i, a in enumerate(used)}
    nb = len(used)
    perm, shape = [], []
    for dim in range(y.ndim - nb):
        names = _names_of(spec[dim]) if dim < len(spec) else ()
        k = 1
        for name in names:
            perm.append(pos[name])
            k *= mesh.shape[name]
        perm.append(nb + dim)
        shape.append(y.shape[nb + dim] * k)
    return y.transpose(perm).reshape(tuple(shape))


def _reshaped(x, shape):
    """x as `shape` (only size-1 axes differ): x itself where the shape is already it."""
    return x if tuple(x.shape) == shape else x.reshape(shape)


def _place(y, sharding):
    from ..core.global_array import put
    return put(y, sharding, "shard_map")
