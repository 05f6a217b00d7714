"""jit: trace once per signature, optimise the IR, fuse, and afterwards only launch kernels.

`jit(f)(*args)` flattens the arguments, keys a cache on (tree structure, abstract values,
static arguments, device), and on a miss stages `f` to the IR (transforms/staging.py), runs
dead-code elimination, common-subexpression elimination and fusion (transforms/fusion.py),
and keeps an `Executable`: the list of primitive applications left, each bound through the
eager interpreter (whose launchers are built once per input layout). Intermediate arrays are
dropped right after their last use, so the buffer pool hands them to later steps.

Under grad, jvp or vmap a jitted function is a call primitive (transforms/jit_call.py): the
transform's version of it is compiled once per signature, so grad(jit(f)) and vmap(jit(f))
launch fused kernels. Inside a function being staged (jit of a function calling a jitted
one) it is traced through, to fuse with the rest; jit of grad and jit of vmap are staged
whole and fused.
"""
import collections
import functools
import inspect
import logging
import operator
import os
import sys
import types
import weakref

import numpy as np

from ..core.array import Array
from ..core.config import config, register_forgetting
from ..core.nonfinite import check_jitted
from ..core.sharded import DistributedArray
from ..core.devices import default_device
from ..core.eval import eval_interpreter, to_array
from ..core.tracing import ShapedArray, Tracer, current_interpreter
from ..tree_util import tree_flatten, tree_unflatten
from .executable import Executable
from .jit_call import FlatCall, jit_call_p
from .passes import optimize
from .jit_stages import Compiled, Lowered, _fmt, _name
from .staging import StagingInterpreter, stage

# the module (netcl.core's `devices` is the function): its LOCK, looked up at each call
_devices = sys.modules["netcl.core.devices"]


def _log_compiles():
    """Whether compilations are logged: config's log_compiles (JAX's jax_log_compiles) or
    NETCL_LOG_COMPILES."""
    return config.log_compiles or os.environ.get("NETCL_LOG_COMPILES", "") not in ("", "0")


_DEFAULT_CACHE_SIZE = 4096


def _cache_size():
    """Executables one jitted function keeps (`NETCL_JIT_CACHE_SIZE`), least recently used
    evicted first: a loop over many static values or shapes must not grow memory forever."""
    raw = os.environ.get("NETCL_JIT_CACHE_SIZE")
    if raw is None:
        return _DEFAULT_CACHE_SIZE
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"NETCL_JIT_CACHE_SIZE={raw!r}: expected a positive integer (the "
                         "number of compiled signatures each jitted function keeps)")
    return n


_jitted_functions = weakref.WeakSet()   # for clear_caches()


def _describe(aval):
    return aval.str_short() + ("(weak)" if aval.weak_type else "")


class _FastPath:
    """How a call with positional arrays only finds its executable without flattening its
    arguments the generic way or building its cache key: `match` (PyTreeDef.matcher of the
    arguments' structure) takes them apart, and their layout ids must be `layouts`. A train
    step's host time per call is time the device waits on, so the common call skips the
    generic path's work."""
    __slots__ = ("match", "layouts", "exe")

    def __init__(self, match, layouts, exe):
        self.match, self.layouts, self.exe = match, layouts, exe


_LAYOUT_ID = operator.attrgetter("_lid")


def _same_layouts(leaves, layouts):
    """Whether `leaves` are arrays with these layout ids (dense: the ids name strides and
    offset; a deleted array's id, -1, is never among them)."""
    try:
        return list(map(_LAYOUT_ID, leaves)) == layouts
    except AttributeError:    # a leaf that is not an Array
        return False


class Jitted:
    def __init__(self, fun, static_argnums, static_argnames, donate_argnums):
        # (first: update_wrapper copies fun's __dict__, whose names, such as a custom_jvp's
        # `fun`, must not replace this object's own)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.donate_argnums = donate_argnums
        self.cache = collections.OrderedDict()   # key -> Executable, least recent first
        self._cache_size = _cache_size()
        self._by_layout = {}   # (tree, leaf layout ids, static) -> the cache's executable
        # The last signature called with arrays only, by position: its structure compiled
        # into a matcher, its layout ids and executable (the signature's key is not built).
        self._fast = None
        self._fast_paths = {}  # signature -> _FastPath
        self._flat_calls = {}  # (tree, static) -> FlatCall: calls under other transforms
        self._last_key = None
        _jitted_functions.add(self)

    def __get__(self, obj, objtype=None):
        """A jitted function defined in a class is a method: `self` is its first argument
        (make it static with static_argnums=0 unless it is a pytree of arrays)."""
        return self if obj is None else types.MethodType(self, obj)

    def clear_cache(self):
        """Forget every compiled signature of this function (the next call traces again).

        >>> f = netcl.jit(lambda x: x * 2); f(jnp.ones(3)); f.clear_cache()
        """
        self.cache.clear()
        self._by_layout.clear()
        self._fast_paths.clear()
        self._flat_calls.clear()
        self._fast = None
        self._last_key = None

    # -- signature ------------------------------------------------------------------------
    def _split(self, args, kwargs):
        name = getattr(self.fun, "__name__", "fun")
        static = []
        for i in self.static_argnums:
            if i >= len(args):      # (passed by name, or left to its default)
                continue
            try:
                hash(args[i])
            except TypeError:
                raise ValueError(f"jit({name}): static argument {i} of type "
                                 f"{type(args[i]).__name__} is not hashable; pass a tuple "
                                 "instead of a list, or make it a traced argument") from None
            static.append((i, args[i]))
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                try:
                    hash(v)
                except TypeError:
                    raise ValueError(f"jit({name}): static argument '{k}' is not hashable")
                static.append((k, v))
            else:
                dyn_kwargs[k] = v
        dyn = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        return tuple(static), dyn, dyn_kwargs

    def _flatten(self, dyn, dyn_kwargs):
        flat, tree = tree_flatten((dyn, dyn_kwargs))
        arrays = []
        for x in flat:
            if type(x) is Array and x._contig and x.offset == 0 and not x.deleted:
                arrays.append(x)      # (the common leaf, in one test)
            else:
                arrays.append(self._argument(x))
        return arrays, tree, flat

    def _argument(self, x):
        """The dense array a jitted call passes for leaf `x` (a copy of a strided one)."""
        name = getattr(self.fun, "__name__", "fun")
        if isinstance(x, Array):
            x._check_live(f"jit({name})")
            return x if x._contig and x.offset == 0 else _dense_copy(x)
        if isinstance(x, (bool, int, float, np.ndarray, np.number, np.bool_, DistributedArray)):
            return to_array(x, f"jit({name})")
        raise TypeError(f"jit({name}): argument of type {type(x).__name__} is not an "
                        "array; mark it static with static_argnums/static_argnames")

    def __call__(self, *args, **kwargs):
        if current_interpreter() is not eval_interpreter:
            return self._call_traced(args, kwargs)
        if config.disable_jit or config.check_values:
            return self._call_checked(args, kwargs)
        return self._call_eager(args, kwargs)

    def _call_eager(self, args, kwargs):
        exe = flat = None
        fast = self._fast
        if fast is not None and not kwargs:
            flat = fast.match(args)
            if flat is not None and not _same_layouts(flat, fast.layouts):
                flat = None
            exe = fast.exe
        if flat is None:
            exe, flat, leaves = self._lookup(args, kwargs)
        else:
            leaves = flat
        if not self.donate_argnums:
            with _devices.LOCK:     # launchers share their kernels (see devices.LOCK)
                outs = exe.run_dense(flat)
            return exe.build_outputs(outs)
        # The call runs on the caller's donated arrays themselves (no new handles: one per
        # parameter and moment in a train step, host time a GPU step waits on). Where
        # nothing else holds one's buffer, a step where it dies writes its output over it
        # (adam's update over the
        # parameters and moments); afterwards the caller's arrays are deleted.
        at = self._check_donated(exe, args, leaves)
        with _devices.LOCK:
            outs = exe.run_dense(flat)
        donated = {id(leaves[i]): leaves[i] for i in at}
        for j, o in enumerate(outs):
            d = donated.get(id(o))
            if d is not None:   # returned as it came: the output is a new handle on it
                outs[j] = Array(d.device, d._buf, d._storage, d.shape, d.dtype, d.strides,
                                d.offset, d.weak_type, d._contig, d._lid)
        for d in donated.values():
            d.delete()
        return exe.build_outputs(outs)

    def _call_checked(self, args, kwargs):
        """A call under config's disable_jit (the function's Python, op by op) or
        debug_nans/debug_infs (the outputs checked: core/nonfinite.py)."""
        from ..api_extras import disable_jit
        if config.disable_jit:
            with disable_jit():
                return self.fun(*args, **kwargs)
        out = self._call_eager(args, kwargs)
        rerun = None if self.donate_argnums else (lambda: self.fun(*args, **kwargs))
        check_jitted(getattr(self.fun, "__name__", "fun"), tree_flatten(out)[0], rerun)
        return out

    def _lookup(self, args, kwargs):
        """(executable, dense arrays passed, the leaves) for a call: the arguments flattened,
        the executable looked up (compiled on a miss); and the call's fast path (`_fast`)
        pointed at this signature when it can take it."""
        if kwargs or self.static_argnums:
            static, dyn, dyn_kwargs = self._split(args, kwargs)
        else:                         # arrays only, by position (what _split would return)
            static, dyn, dyn_kwargs = (), args, {}
        flat, tree, leaves = self._flatten(dyn, dyn_kwargs)
        # Looked up by the leaves' layout ids first: small ints, where the full key's shape
        # and dtype tuples cost a call that finds the caches cold after a step. A layout id
        # names device, shape, dtype, weak type, strides and offset.
        lids = [x._layout_id() for x in flat]
        sig = (tree, tuple(lids), static)
        exe = self._by_layout.get(sig)
        if exe is None:
            device = flat[0].device if flat else default_device()
            key = (tree, tuple((x.shape, x.dtype, x.weak_type) for x in flat), static, device)
            exe = self.cache.get(key)
            if exe is None:
                exe = self._compile(key, args, kwargs, static, flat, tree)
            if len(self._by_layout) >= 4 * self._cache_size:
                self._by_layout.clear()   # (several layouts may name one key; rebuilt on use)
            self._by_layout[sig] = exe
        self.cache.move_to_end(exe.cache_key)   # (the fast path's calls count at its exit)
        if not kwargs and not self.static_argnums and \
                all(x is leaf for x, leaf in zip(flat, leaves)):
            fast = self._fast_paths.get(sig)
            if fast is None:
                fast = self._fast_paths[sig] = _FastPath(tree.children()[0].matcher(), lids, exe)
            self._fast = fast
        return exe, flat, leaves

    def _check_donated(self, exe, args, leaves):
        """The positions among the leaves of the donated arrays (cached on `exe` once
        checked): each donated array must appear once among all the leaves (keyword
        arguments included)."""
        at = exe.donated_at
        if at is None:      # first call with this signature: where the donated leaves are
            ids = {id(x) for x in self._donate(args)}
            at = tuple(i for i, x in enumerate(leaves) if id(x) in ids)
        ids = {id(leaves[i]) for i in at}
        if len(ids) != len(at) or sum(id(x) in ids for x in leaves) != len(at):
            raise ValueError(f"jit({getattr(self.fun, '__name__', 'fun')}): a donated array "
                             "is also passed as another argument; donate only arrays that "
                             "are not used again")
        exe.donated_at = at
        return at

    def _donated_leaves(self, args, tree):
        """The positions among the call's leaves of the donated arguments' leaves (what the
        in-place pass may overwrite): the leaves of arguments `donate_argnums` names."""
        if not self.donate_argnums:
            return frozenset()
        dyn_positions = [i for i in range(len(args)) if i not in self.static_argnums]
        counts = [tree_flatten(args[i])[1].num_leaves for i in dyn_positions]
        found, start = set(), 0
        for i, n in zip(dyn_positions, counts):
            if i in self.donate_argnums:
                found.update(range(start, start + n))
            start += n
        return frozenset(found)

    def _donate(self, args):
        if not self.donate_argnums:
            return []
        name = getattr(self.fun, "__name__", "fun")
        donated = []
        for i in self.donate_argnums:
            if i >= len(args):
                raise ValueError(f"jit({name}): donate_argnums={self.donate_argnums} is out of "
                                 f"range for {len(args)} arguments")
            donated += [x for x in tree_flatten(args[i])[0] if isinstance(x, Array)]
        ids = [id(x) for x in donated]
        others = [id(x) for j, a in enumerate(args) if j not in self.donate_argnums
                  for x in tree_flatten(a)[0]]
        if len(set(ids)) != len(ids) or set(ids) & set(others):
            raise ValueError(f"jit({name}): a donated array is also passed as another "
                             "argument; donate only arrays that are not used again")
        return donated

    # -- compilation ------------------------------------------------------------------------
    def _trace(self, args, kwargs, static, flat, tree):
        avals = [ShapedArray(x.shape, x.dtype, x.weak_type) for x in flat]
        return stage(self._on_leaves(tree, static), tuple(avals))

    def _on_leaves(self, tree, static):
        """`fun` as a function of the dynamic arguments' leaves (static ones closed over)."""
        static_d = dict(static)
        n_static = len([k for k in static_d if isinstance(k, int)])

        def f(*flat_in):
            dyn, dyn_kwargs = tree_unflatten(tree, list(flat_in))
            it = iter(dyn)
            full = [static_d[i] if i in static_d else next(it)
                    for i in range(len(dyn) + n_static)]
            kw = dict(dyn_kwargs)
            kw.update({k: v for k, v in static_d.items() if isinstance(k, str)})
            return self.fun(*full, **kw)
        return f

    def _call_traced(self, args, kwargs):
        """A call under another transform: inlined into a trace being staged (to fuse with
        its surroundings), else bound as a `jit_call` whose rules compile the transform's
        version of `fun` (grad(jit(f)) and vmap(jit(f)) stay compiled)."""
        if isinstance(current_interpreter(), StagingInterpreter):
            return self.fun(*args, **kwargs)
        static, dyn, dyn_kwargs = self._split(args, kwargs)
        flat, tree = tree_flatten((dyn, dyn_kwargs))
        flat = [x if isinstance(x, (Array, Tracer)) else self._argument(x) for x in flat]
        call = self._flat_calls.get((tree, static))
        if call is None:
            if len(self._flat_calls) >= self._cache_size:
                self._flat_calls.clear()
            call = self._flat_calls[(tree, static)] = self._flat_call(tree, static)
        outs = jit_call_p.bind(*flat, call=call)
        return tree_unflatten(call.out_trees[_signature(flat)], list(outs))

    def _flat_call(self, tree, static):
        on_leaves = self._on_leaves(tree, static)

        def flat(*leaves):
            outs, out_tree = tree_flatten(on_leaves(*leaves))
            call.out_trees[_signature(leaves)] = out_tree
            return tuple(outs)
        call = FlatCall(flat, _name(self.fun))
        return call

    def _compile(self, key, args, kwargs, static, flat, tree):
        if _log_compiles():     # (as JAX: a WARNING on the library's logger)
            shapes = ", ".join(_describe(ShapedArray(x.shape, x.dtype, x.weak_type))
                               for x in flat)
            logging.getLogger("netcl").warning(
                f"netcl.jit: compiling {getattr(self.fun, '__name__', 'fun')} for "
                f"({shapes}){self._reason(key)}")
        ir, out_tree = self._trace(args, kwargs, static, flat, tree)
        exe = self._compiled_for(key, optimize(ir, key[3], _name(self.fun),
                                               self._donated_leaves(args, tree)), out_tree)
        self._last_key = key
        return exe

    def _compiled_for(self, key, ir, out_tree=None):
        exe = self.cache.get(key)
        if exe is None:
            exe = Executable(ir, out_tree, key[3])
            exe.cache_key = key
            self.cache[key] = exe
            while len(self.cache) > self._cache_size:
                self._evict(self.cache.popitem(last=False)[1])
        return exe

    def _evict(self, exe):
        """Drop every path to an executable that left the cache."""
        for table in (self._by_layout, self._fast_paths):
            for sig in [s for s, v in table.items() if (v.exe if table is self._fast_paths
                                                           else v) is exe]:
                del table[sig]
        if self._fast is not None and self._fast.exe is exe:
            self._fast = None

    def _reason(self, key):
        old = self._last_key
        if old is None:
            return ": first call"
        if old[0] != key[0]:
            return f": the argument structure changed ({old[0]} -> {key[0]})"
        if old[2] != key[2]:
            return f": static arguments changed ({old[2]} -> {key[2]})"
        if old[3] is not key[3]:
            return f": the device changed ({old[3]} -> {key[3]})"
        diffs = [f"argument leaf {i}: {_fmt(a)} (was {_fmt(b)})"
                 for i, (a, b) in enumerate(zip(key[1], old[1])) if a != b]
        return ": new shapes/dtypes for " + "; ".join(diffs) if diffs else ""

    def lower(self, *args, **kwargs):
        """Trace and optimise for these arguments without running: `.as_text()`, `.kernels`,
        `.compile()`."""
        static, dyn, dyn_kwargs = self._split(args, kwargs)
        flat, tree, _ = self._flatten(dyn, dyn_kwargs)
        device = flat[0].device if flat else default_device()
        key = (tree, tuple((x.shape, x.dtype, x.weak_type) for x in flat), static, device)
        ir, out_tree = self._trace(args, kwargs, static, flat, tree)
        low = Lowered(self, key, optimize(ir, device, _name(self.fun),
                                          self._donated_leaves(args, tree)), flat)
        low._out_tree = out_tree
        low.compile = lambda: Compiled(self, self._compiled_for(key, low.ir, out_tree), key)
        return low


def _signature(leaves):
    return tuple((tuple(x.shape), x.dtype) for x in leaves)


def _dense_copy(x):
    from ..primitives.elementwise import copy_p
    return copy_p.bind(x)


def clear_caches():
    """Forget every compiled function, eager launcher and built kernel program: memory held by
    compiled code returns (arrays are untouched), and later calls compile again. As
    `jax.clear_caches()`.

    >>> netcl.clear_caches()
    """
    for f in list(_jitted_functions):
        f.clear_cache()
    from ..core import eval as eval_module, kernels
    eval_module.eval_interpreter.launchers.clear()
    eval_module._constants.clear()
    kernels.clear_programs()


def _forget_traces():
    """Drop every jitted function's compiled signatures and the eager launchers (kernel
    programs stay built): what a change of the default matmul precision invalidates."""
    for f in list(_jitted_functions):
        f.clear_cache()
    eval_interpreter.launchers.clear()


register_forgetting(all_caches=clear_caches, traces=_forget_traces)


def _argnums(v, arg, kind):
    """None, one `kind` (int or str) or a sequence of them -> a tuple, or a TypeError."""
    if v is None:
        return ()
    if isinstance(v, kind) and not isinstance(v, bool):
        return (v,)
    if isinstance(v, (tuple, list)) and all(isinstance(i, kind) and not isinstance(i, bool)
                                            for i in v):
        return tuple(v)
    raise TypeError(f"jit: {arg} must be None, {'an int' if kind is int else 'a str'} or a "
                    f"sequence of them, got {v!r}")


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(),
        donate_argnames=(), in_shardings=None, out_shardings=None, keep_unused=False,
        inline=False):
    """Compile `fun`: trace once per argument signature, fuse, cache, then only launch.

    `donate_argnames` donates the named arguments (passed by position); `out_shardings`
    places the results (jit_placement.py); `keep_unused` and `inline` are accepted for JAX's
    sake (netcl keeps every argument; an inner jit is inlined into the trace anyway).

    >>> @netcl.jit
    ... def step(w, x):
    ...     return jnp.tanh(x @ w) * 2.0 + 1.0
    """
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             in_shardings=in_shardings, out_shardings=out_shardings)
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {type(fun).__name__} {fun!r}")
    if in_shardings is not None or out_shardings is not None:
        from .jit_placement import PlacedJitted
        return PlacedJitted(jit(fun, static_argnums=static_argnums,
                                static_argnames=static_argnames, donate_argnums=donate_argnums,
                                donate_argnames=donate_argnames), in_shardings, out_shardings)
    sa = _argnums(static_argnums, "static_argnums", int)
    sn = _argnums(static_argnames, "static_argnames", str)
    da = _argnums(donate_argnums, "donate_argnums", int)
    da = tuple(sorted(set(da) | set(_positions(fun, _argnums(donate_argnames, "donate_argnames",
                                                              str)))))
    for i in sa + da:
        if not isinstance(i, int) or i < 0:
            raise ValueError(f"jit: static_argnums/donate_argnums must be non-negative ints, "
                             f"got {i!r}")
    from .shard_map import _ShardMapped
    if isinstance(fun, _ShardMapped) and not sa and not sn:
        return fun.under_jit(da)      # (a jit around shard_map keeps it on its devices)
    sa, sn = _static_both_ways(fun, sa, sn)
    if set(sa) & set(da):
        raise ValueError("jit: an argument cannot be both static and donated")
    key, keep = _reuse_key(fun, (sa, sn, da))
    if key is not None:
        hit = _recent.get(key)
        if hit is not None:
            _recent.move_to_end(key)
            return hit[0]
    jitted = Jitted(fun, sa, sn, da)
    if key is not None:
        _recent[key] = (jitted, keep)
        while len(_recent) > _RECENT:
            _recent.popitem(last=False)
    return jitted


def _positions(fun, argnames):
    """The positions of the parameters `argnames` of `fun` (those it can take by position)."""
    if not argnames:
        return ()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return ()
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    return tuple(positional.index(n) for n in argnames if n in positional)


def _static_both_ways(fun, argnums, argnames):
    """static_argnums and static_argnames completed from each other through `fun`'s
    signature, as JAX does: a static argument is static passed by position or by name."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):     # (builtins and some callables have none)
        return argnums, argnames
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                        p.POSITIONAL_OR_KEYWORD)]
    if not any(p.kind is p.VAR_POSITIONAL for p in params):
        for i in argnums:
            if i >= len(positional):
                raise ValueError(f"jit({getattr(fun, '__name__', 'fun')}): static_argnums="
                                 f"{argnums} but the function has {len(positional)} "
                                 "positional parameters")
    nums = set(argnums) | {positional.index(n) for n in argnames if n in positional}
    names = set(argnames) | {positional[i] for i in argnums if i < len(positional) and
                             params[i].kind is not params[i].POSITIONAL_ONLY}
    return tuple(sorted(nums)), tuple(sorted(names))


# `jit(f)` called again with the same function (and options) returns the same Jitted, so
# that `jit(f)(x)` inside a loop reuses its compiled code instead of tracing each time, as
# JAX's cache keyed by the function does. Functions count as the same when their code, the
# contents of their closure, the values of the globals their code names, and their defaults
# are the same objects (a lambda re-created each iteration over the same variables; one
# whose closure or globals now hold other values is another function: `lambda v: v * k`
# for a new k traces again). The entry keeps those objects alive, so their ids stay theirs.
_recent = collections.OrderedDict()
_RECENT = 256
_ABSENT = object()
_GLOBAL_NAMES = {}      # code object -> the names its code (and nested code) may read


def _reuse_key(fun, options):
    """(key, the objects the key names by id) for `fun`, or (None, None)."""
    if isinstance(fun, types.FunctionType):
        contents = tuple(c.cell_contents if _filled(c) else _ABSENT
                         for c in (fun.__closure__ or ()))
        g = fun.__globals__
        values = tuple(g.get(n, _ABSENT) for n in _names_read(fun.__code__))
        keep = (contents, values, fun.__defaults__, fun.__kwdefaults__)
        return (("function", fun.__code__, tuple(map(id, contents)), tuple(map(id, values)),
                 id(fun.__defaults__), id(fun.__kwdefaults__), id(g), options), keep)
    if isinstance(fun, types.MethodType):
        return ("method", id(fun.__func__), id(fun.__self__), options), fun
    return None, None


def _names_read(code):
    """The global names `code` and the code objects nested in it name (co_names holds
    attribute names too: their lookups find nothing, or a module, which is harmless)."""
    got = _GLOBAL_NAMES.get(code)
    if got is None:
        names, todo = set(), [code]
        while todo:
            c = todo.pop()
            names.update(c.co_names)
            todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        got = _GLOBAL_NAMES[code] = tuple(sorted(names))
        if len(_GLOBAL_NAMES) > 4096:
            _GLOBAL_NAMES.clear()
            _GLOBAL_NAMES[code] = got
    return got


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:      # (a cell not yet assigned)
        return False
    return True

