"""The axis environment: the names of mapped axes bound while a function is traced or run.

`axis_frame(name, size)` binds a name (vmap with `axis_name` and pmap push one); the innermost
binding of a name wins; collectives look their names up here and an unbound name raises JAX's
NameError before anything is bound.

>>> with axis_frame("i", 4):
...     axis_size("i")
4
"""
import contextlib
import contextvars
import operator

from ..core.shapes import prod

_frames = contextvars.ContextVar("netcl_axis_frames", default=())


@contextlib.contextmanager
def axis_frame(name, size):
    """Bind axis `name` (of `size` members) while the block runs (vmap/pmap use this)."""
    try:
        hash(name)
    except TypeError:
        raise TypeError(f"axis_name must be hashable, got {name!r}") from None
    token = _frames.set(_frames.get() + ((name, operator.index(size)),))
    try:
        yield
    finally:
        _frames.reset(token)


def bound_axis_names():
    """The names bound now, outermost first."""
    return [n for n, _ in _frames.get()]


def _unbound(name, fname):
    return NameError(f"{fname}: unbound axis name: {name}. The following axis names (e.g. "
                     "defined by pmap) are available to collective operations: "
                     f"{bound_axis_names()}")


def _size_of(name, fname="axis_size"):
    for n, s in reversed(_frames.get()):   # the innermost binding shadows outer ones
        if n == name:
            return s
    raise _unbound(name, fname)


def axis_size(axis_name):
    """lax.axis_size: the size of the bound axis `axis_name` (a tuple: the product of its
    names' sizes), a Python int."""
    return prod([_size_of(n) for n in _names(axis_name, "axis_size")])


def _names(axis_name, fname):
    """axis_name as a tuple of bound, distinct names; NameError where one is unbound."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        try:
            hash(n)
        except TypeError:
            raise TypeError(f"{fname}: axis names must be hashable, got {n!r}") from None
    if len(set(names)) != len(names):
        raise ValueError(f"{fname}: axis_name {axis_name!r} repeats a name")
    for n in names:
        _size_of(n, fname)
    return names
