"""Key paths of pytrees, with ``jax.tree_util``'s key classes: the entries a path is made
of (`SequenceKey`, `DictKey`, `GetAttrKey`, `FlattenedIndexKey`) and `keystr`, which
renders a path. tree_util.py's node handlers make them; its *_with_path functions return
them.

    >>> keystr((DictKey('a'), SequenceKey(1)))
    "['a'][1]"

Standard library only; never imports other netcl modules.
"""


class _KeyEntry:
    """Hashable key-path entry holding one value (like JAX's key classes)."""
    __slots__ = ()

    def __init__(self, value):
        setattr(self, self.__slots__[0], value)

    def _value(self):
        return getattr(self, self.__slots__[0])

    def __eq__(self, other):
        return type(other) is type(self) and other._value() == self._value()

    def __hash__(self):
        return hash((type(self).__name__, self._value()))

    def __repr__(self):
        return f"{type(self).__name__}({self.__slots__[0]}={self._value()!r})"

    def __str__(self):
        return self._fmt.format(self._value())


class SequenceKey(_KeyEntry):
    """Index into a tuple/list; ``str(SequenceKey(0)) == '[0]'``."""
    __slots__, __match_args__, _fmt = ("idx",), ("idx",), "[{}]"


class DictKey(_KeyEntry):
    """Key of a dict; ``str(DictKey('a')) == "['a']"``."""
    __slots__, __match_args__, _fmt = ("key",), ("key",), "[{!r}]"


class GetAttrKey(_KeyEntry):
    """Attribute of a namedtuple/dataclass; ``str(GetAttrKey('x')) == '.x'``."""
    __slots__, __match_args__, _fmt = ("name",), ("name",), ".{}"


class FlattenedIndexKey(_KeyEntry):
    """Child index of a custom node registered without keys."""
    __slots__, __match_args__, _fmt = ("key",), ("key",), "[<flat index {}>]"


def keystr(keys, *, simple=False, separator=""):
    """Render a key path: ``keystr((DictKey('a'), SequenceKey(1))) == "['a'][1]"``;
    ``simple=True, separator='/'`` gives ``'a/1'``."""
    if simple:
        return separator.join(str(k._value()) if isinstance(k, _KeyEntry) else str(k) for k in keys)
    return separator.join(str(k) for k in keys)
