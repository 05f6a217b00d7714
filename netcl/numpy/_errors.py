"""Errors name the public function the user called.

Checks run where the information is (a primitive's abstract eval, `broadcast_shapes`, the
dtype rules) and name the function they run in: `jnp.zeros` builds on `full`, `nn.softmax`
on `max`, `jnp.divide` is `true_divide`. `public(fn, name)` wraps a function of a public
namespace so that a TypeError/ValueError/... escaping it names `name`: an internal prefix
(`"full: "`) is replaced, a bare message gets the prefix. Only the raising path does any
work (try costs nothing in Python 3.11 until something raises); the array operators
(`a + b`) do not go through these wrappers.

>>> jnp.zeros(-1)
ValueError: zeros: shape has a negative dimension: (-1,)
"""
import functools
import re

_RENAMED = (TypeError, ValueError, IndexError, OverflowError, NotImplementedError)
_PREFIX = re.compile(r"[A-Za-z_][\w.]*: ")


def rename_error(e, name):
    """Make `e`'s message start with `name` unless it already names it."""
    msg = e.args[0] if e.args and isinstance(e.args[0], str) else str(e)
    if re.search(rf"(?<![\w.]){re.escape(name)}\b", msg):
        return
    m = _PREFIX.match(msg)
    e.args = (f"{name}: {msg[m.end():] if m else msg}",) + tuple(e.args[1:])


def public(fn, name):
    """`fn`, whose escaping errors name `name` (see the module docstring)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _RENAMED as e:
            rename_error(e, name)
            raise
    wrapper.__name__ = name
    wrapper._netcl_public = True
    return wrapper


def wrap_namespace(namespace, names):
    """Wrap each function `names` lists in `namespace` (a module's globals) with `public`
    (functions only: classes and the scalar types stay what they are)."""
    import types
    for n in names:
        f = namespace.get(n)
        if isinstance(f, types.FunctionType) and not getattr(f, "_netcl_public", False):
            w = namespace[n] = public(f, n)
            # found where it lives now (pickle looks functions up by module and name)
            w.__module__, w.__qualname__ = namespace.get("__name__", w.__module__), n
