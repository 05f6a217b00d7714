"""Checkpoints: ``save(path, tree)`` / ``load(path, like=None)`` for any pytree of arrays.

    >>> netcl.io.save("ckpt.npz", {"params": params, "opt": opt_state, "step": 100,
    ...                            "key": key})
    >>> state = netcl.io.load("ckpt.npz", like=state)     # checks structure, shapes, dtypes

Nodes: dict (str/int/float/bool/None/tuple keys), OrderedDict, list, tuple, namedtuple
(re-created by module + qualname when importable or found in ``like``; otherwise a plain
tuple with a warning), None. Leaves: netcl Arrays (come back as netcl Arrays on the default
device or ``device=``, with dtype and weak type), NumPy arrays and NumPy scalars (come back
as NumPy), Python int/float/bool/str (come back as themselves). Anything else, including
tracers, custom registered nodes and dataclasses, is refused with a TypeError naming the
leaf path, before anything is written.

File format (version 1): a NumPy ``.npz`` (a zip of ``.npy`` members; readable with
``np.load(path)``, no pickle anywhere). Member ``leaf_<k>`` holds the k-th array leaf;
member ``__netcl_tree__`` is a uint8 array holding UTF-8 JSON::

    {"format": "netcl-checkpoint", "version": 1,
     "tree":   {"t": "dict", "keys": [["s", "params"], ["s", "step"]], "c": [<node>, <node>]},
     "leaves": [{"kind": "array", "weak_type": false, "dtype": "float32", "shape": [3],
                 "member": "leaf_0", "sha256": "<of the array's C-order bytes>"},
                {"kind": "int", "value": 100}, ...],
     "sha256": "<sha256 of the canonical JSON of the fields above>"}

A node is ``{"t": "leaf", "i": <index into leaves>}``, ``{"t": "none"}``,
``{"t": "list"|"tuple", "c": [...]}``, ``{"t": "dict"|"ordereddict", "keys": [...],
"c": [...]}`` (keys tagged: ``["s", str]``, ``["i", int]``, ``["f", float.hex]``,
``["b", bool]``, ``["n", null]``, ``["t", [keys]]``) or ``{"t": "namedtuple", "module": m,
"qualname": q, "fields": [...], "c": [...]}``. Leaf kinds: ``array`` (netcl), ``ndarray`` and
``npscalar`` (NumPy; dtype, shape, member, sha256), ``int``, ``bool``, ``str`` and ``float``
(``float.hex``, exact, inf/nan included) with a ``value``.

``save`` writes a temporary file in the destination directory, fsyncs it and
``os.replace``s it over ``path``, so a crash or an error never leaves a half-written
checkpoint. ``load`` checks the zip CRCs, each member's size against its header (before
allocating), every array's sha256, dtype and shape, and the description's own sha256: a
truncated, corrupted or foreign file raises ValueError naming the path and the problem.
"""
import collections
import hashlib
import importlib
import json
import os
import secrets
import struct
import sys
import warnings
import zipfile
import zlib

import numpy as np

from . import tree_util
from .core import dtypes as _dtypes
from .core.array import Array
from .core.devices import Device, default_device
from .core.tracing import Tracer

__all__ = ["save", "load", "FORMAT_VERSION"]

FORMAT_VERSION = 1
_FORMAT = "netcl-checkpoint"
_TREE = "__netcl_tree__"
_SAVE_DTYPES = {np.dtype(d) for d in (np.bool_, np.int8, np.int16, np.int32, np.int64,
                                      np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
                                      np.float32, np.float64, np.complex64, np.complex128)}


# ---- saving -------------------------------------------------------------------------------

def _sha256(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def _where(path):
    return tree_util.keystr(path) or "the root"


def _encode_key(k, path):
    if k is None:
        return ["n", None]
    if isinstance(k, bool):
        return ["b", k]
    if isinstance(k, int):
        return ["i", k]
    if isinstance(k, float):
        return ["f", float.hex(k)]
    if isinstance(k, str):
        return ["s", k]
    if isinstance(k, tuple):
        return ["t", [_encode_key(x, path) for x in k]]
    raise TypeError(f"netcl.io.save: dict key {k!r} of type {type(k).__name__} at "
                    f"{_where(path)} cannot be saved (keys must be str, int, float, bool, None "
                    "or tuples of those)")


def _decode_key(k):
    tag, v = k
    if tag == "t":
        return tuple(_decode_key(x) for x in v)
    return {"n": lambda v: None, "b": bool, "i": int, "f": float.fromhex, "s": str}[tag](v)


class _Saver:
    def __init__(self):
        self.arrays, self.leaves = [], []

    def _array(self, host, meta):
        host = np.asarray(host, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)
        if not host.dtype.isnative:
            host = host.astype(host.dtype.newbyteorder("="))
        meta.update(dtype=host.dtype.name, shape=list(host.shape),
                    member=f"leaf_{len(self.arrays)}", sha256=_sha256(host))
        self.arrays.append(host)
        return meta

    def leaf(self, x, path):
        if isinstance(x, Array):
            if x.deleted:
                raise ValueError(f"netcl.io.save: the array at {_where(path)} was donated to a "
                                 "jit call and has been deleted")
            meta = self._array(x._to_host(), {"kind": "array", "weak_type": bool(x.weak_type)})
        elif isinstance(x, Tracer):
            raise TypeError(f"netcl.io.save: the leaf at {_where(path)} is a traced value; "
                            "checkpoints can only be saved outside jit/grad/vmap")
        elif isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, (np.str_, np.bytes_)):
            if np.dtype(x.dtype) not in _SAVE_DTYPES:
                raise TypeError(f"netcl.io.save: the NumPy leaf at {_where(path)} has dtype "
                                f"{x.dtype}, which cannot be saved (numeric and bool only; no "
                                "object arrays)")
            kind = "ndarray" if isinstance(x, np.ndarray) else "npscalar"
            meta = self._array(np.asarray(x), {"kind": kind})
        elif isinstance(x, bool):
            meta = {"kind": "bool", "value": x}
        elif isinstance(x, int):
            meta = {"kind": "int", "value": int(x)}
        elif isinstance(x, float):
            meta = {"kind": "float", "value": float.hex(float(x))}
        elif isinstance(x, str):
            meta = {"kind": "str", "value": str(x)}
        else:
            raise TypeError(f"netcl.io.save: cannot save the leaf at {_where(path)} of type "
                            f"{type(x).__module__}.{type(x).__qualname__}; leaves must be netcl "
                            "or NumPy arrays, NumPy scalars, or Python int/float/bool/str")
        self.leaves.append(meta)
        return {"t": "leaf", "i": len(self.leaves) - 1}

    def node(self, x, path):
        t = type(x)
        h = tree_util._lookup(t)
        if h is None:
            return self.leaf(x, path)
        if x is None:
            return {"t": "none"}
        if t is list or t is tuple:
            return {"t": t.__name__, "c": [self.node(c, path + (tree_util.SequenceKey(i),))
                                           for i, c in enumerate(x)]}
        if h.kind == "namedtuple":
            return {"t": "namedtuple", "module": t.__module__, "qualname": t.__qualname__,
                    "fields": list(t._fields),
                    "c": [self.node(c, path + (tree_util.GetAttrKey(f),))
                          for f, c in zip(t._fields, x)]}
        if t is dict or t is collections.OrderedDict:
            keys = tree_util._dict_keys(x) if t is dict else tuple(x)
            return {"t": "dict" if t is dict else "ordereddict",
                    "keys": [_encode_key(k, path) for k in keys],
                    "c": [self.node(x[k], path + (tree_util.DictKey(k),)) for k in keys]}
        raise TypeError(f"netcl.io.save: cannot save the pytree node at {_where(path)} of type "
                        f"{t.__module__}.{t.__qualname__} ({h.kind}); checkpoints hold dict, "
                        "OrderedDict, list, tuple, namedtuple and None nodes")


def _description_digest(desc):
    body = {k: v for k, v in desc.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     allow_nan=False).encode()).hexdigest()


def _write(f, members, compress):
    """Write an npz (zip of .npy members) to the open binary file ``f``."""
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(f, "w", compression=mode, allowZip64=True) as zf:
        for name, arr in members:
            with zf.open(name + ".npy", "w", force_zip64=True) as g:
                np.lib.format.write_array(g, arr, allow_pickle=False)


def save(path, pytree, *, compress=False):
    """Write ``pytree`` to the checkpoint file ``path`` (atomically: temp file + rename).

    ``path`` is used as given (no suffix is added). ``compress=True`` deflates the members.
    Raises TypeError naming the leaf path for anything that cannot be saved, before any file
    is touched; an existing checkpoint at ``path`` survives any failure.

    >>> netcl.io.save("ckpt.npz", {"params": params, "step": 10})
    """
    path = os.fspath(path)
    saver = _Saver()
    tree = saver.node(pytree, ())
    desc = {"format": _FORMAT, "version": FORMAT_VERSION, "tree": tree, "leaves": saver.leaves}
    desc["sha256"] = _description_digest(desc)
    header = np.frombuffer(json.dumps(desc, allow_nan=False).encode("utf-8"), np.uint8)
    members = [(_TREE, header)] + [(f"leaf_{i}", a) for i, a in enumerate(saver.arrays)]

    directory, base = os.path.split(os.path.abspath(path))
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            _write(f, members, compress)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable (best effort; not possible everywhere)
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


# ---- loading ------------------------------------------------------------------------------

class _Corrupt(Exception):
    pass


class _DeviceError(TypeError):
    pass


_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError,
               zlib.error, struct.error, UnicodeDecodeError, NotImplementedError, SyntaxError,
               OverflowError, RuntimeError)  # RuntimeError: "encrypted" flag bit


def _read_npy(g, size, name):
    """Read one .npy member from the zip stream ``g`` (``size``: its uncompressed size).
    The header's claimed size is checked against ``size`` before anything is allocated."""
    fmt = np.lib.format
    version = fmt.read_magic(g)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(g)
    elif version == (2, 0):
        shape, fortran, dtype = fmt.read_array_header_2_0(g)
    else:
        raise _Corrupt(f"member {name!r} has unsupported .npy version {version}")
    if dtype.hasobject:
        raise _Corrupt(f"member {name!r} holds Python objects (pickle), which netcl never loads")
    count = 1
    for d in shape:
        count *= d
    nbytes = count * dtype.itemsize
    if nbytes != size - g.tell():
        raise _Corrupt(f"member {name!r} claims shape {shape} {dtype} ({nbytes} bytes) but "
                       f"holds {size - g.tell()} bytes")
    arr = np.empty(count, dtype)
    view, pos = memoryview(arr.view(np.uint8)), 0
    while pos < nbytes:
        n = g.readinto(view[pos:])
        if not n:
            raise _Corrupt(f"member {name!r} is truncated")
        pos += n
    if g.read(1):  # also makes zipfile check the CRC-32 at the end of the member
        raise _Corrupt(f"member {name!r} has trailing data")
    return arr.reshape(shape, order="F" if fortran else "C")


def _read_members(f):
    """Read every member of the npz ``f`` into a dict name -> array (CRC-checked)."""
    try:
        zf = zipfile.ZipFile(f)
        infos = zf.infolist()
    except _ZIP_ERRORS as e:
        raise _Corrupt(f"not a valid zip/npz file, or truncated ({type(e).__name__}: {e})") \
            from None
    out = {}
    with zf:
        if not any(i.filename == _TREE + ".npy" for i in infos):
            raise _Corrupt(f"not a netcl checkpoint (no {_TREE} entry; members are "
                           f"{[i.filename for i in infos][:8]})")
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in out:
                raise _Corrupt(f"unexpected member {name!r}")
            try:
                with zf.open(info) as g:
                    out[name[:-4]] = _read_npy(g, info.file_size, name)
            except _Corrupt:
                raise
            except _ZIP_ERRORS as e:
                raise _Corrupt(f"member {name!r} is corrupted or truncated "
                               f"({type(e).__name__}: {e})") from None
    return out


def _check_description(desc, members):
    if not isinstance(desc, dict) or desc.get("format") != _FORMAT:
        raise _Corrupt("not a netcl checkpoint (bad format tag)")
    version = desc.get("version")
    if not isinstance(version, int) or version < 1:
        raise _Corrupt(f"bad format version {version!r}")
    if version > FORMAT_VERSION:
        raise _Corrupt(f"written with format version {version}, newer than this netcl reads "
                       f"({FORMAT_VERSION}); upgrade netcl")
    if desc.get("sha256") != _description_digest(desc):
        raise _Corrupt(f"checksum mismatch in the tree description ({_TREE})")
    wanted = {m["member"] for m in desc["leaves"] if "member" in m} | {_TREE}
    if wanted != set(members):
        raise _Corrupt(f"members {sorted(set(members) ^ wanted)[:8]} are missing or unexpected")


def _namedtuple_types(tree, out):
    """Collect namedtuple classes in ``tree`` by (module, qualname)."""
    h = tree_util._lookup(type(tree))
    if h is None or tree is None:
        return out
    if h.kind == "namedtuple":
        out[(type(tree).__module__, type(tree).__qualname__)] = type(tree)
    if h.kind in ("tuple", "list", "namedtuple"):
        for c in tree:
            _namedtuple_types(c, out)
    elif h.dict_keys is not None:
        for c in tree.values():
            _namedtuple_types(c, out)
    return out


def _resolve_namedtuple(module, qualname, fields, known, where):
    cls = known.get((module, qualname))
    problem = None
    if cls is None:
        try:
            obj = sys.modules.get(module) or importlib.import_module(module)
            for part in qualname.split("."):
                obj = getattr(obj, part)
            cls = obj
        except Exception as e:  # noqa: BLE001 - any import problem means "not found"
            problem = f"cannot import it ({type(e).__name__}: {e})"
    if cls is not None and not (isinstance(cls, type) and issubclass(cls, tuple)
                                and tuple(getattr(cls, "_fields", ())) == tuple(fields)):
        problem = (f"{module}.{qualname} is no longer a namedtuple with fields "
                   f"{tuple(fields)}")
        cls = None
    if cls is None:
        warnings.warn(f"netcl.io.load: the namedtuple {module}.{qualname} at {where} is "
                      f"restored as a plain tuple: {problem}", stacklevel=2)
    return cls


class _Loader:
    def __init__(self, leaves, members, device, known, name):
        self.leaves, self.members, self.device, self.known = leaves, members, device, known
        self.name = name

    def leaf(self, meta, path):
        kind = meta["kind"]
        if kind in ("bool", "int", "str"):
            return {"bool": bool, "int": int, "str": str}[kind](meta["value"])
        if kind == "float":
            return float.fromhex(meta["value"])
        host = self.members[meta["member"]]
        dt = np.dtype(meta["dtype"])
        if host.dtype != dt or list(host.shape) != list(meta["shape"]):
            raise _Corrupt(f"the array at {_where(path)} is {host.dtype}{list(host.shape)}, "
                           f"the description says {dt}{list(meta['shape'])}")
        if _sha256(host) != meta["sha256"]:
            raise _Corrupt(f"checksum mismatch for the array at {_where(path)} "
                           f"(member {meta['member']!r}): the data is corrupted")
        if kind == "ndarray":
            return host
        if kind == "npscalar":
            return host[()]
        if kind != "array":
            raise _Corrupt(f"unknown leaf kind {kind!r} at {_where(path)}")
        dev = self.device
        if dt not in _dtypes.SUPPORTED:
            raise _Corrupt(f"the netcl array at {_where(path)} has unsupported dtype {dt}")
        if dt == _dtypes.float64 and not dev.capabilities.fp64:
            raise _DeviceError(f"netcl.io.load: {self.name}: the array at {_where(path)} is "
                            f"float64 but {dev.name} has no fp64 support")
        return Array.from_numpy(dev, host, weak_type=bool(meta["weak_type"]))

    def node(self, n, path):
        t = n["t"]
        if t == "leaf":
            return self.leaf(self.leaves[n["i"]], path)
        if t == "none":
            return None
        if t in ("list", "tuple"):
            cs = [self.node(c, path + (tree_util.SequenceKey(i),)) for i, c in enumerate(n["c"])]
            return cs if t == "list" else tuple(cs)
        if t == "namedtuple":
            fields = n["fields"]
            cs = [self.node(c, path + (tree_util.GetAttrKey(f),)) for f, c in zip(fields, n["c"])]
            cls = _resolve_namedtuple(n["module"], n["qualname"], fields, self.known,
                                      _where(path))
            return tuple(cs) if cls is None else cls(*cs)
        if t in ("dict", "ordereddict"):
            keys = [_decode_key(k) for k in n["keys"]]
            cs = [self.node(c, path + (tree_util.DictKey(k),)) for k, c in zip(keys, n["c"])]
            return (dict if t == "dict" else collections.OrderedDict)(zip(keys, cs))
        raise _Corrupt(f"unknown node type {t!r} at {_where(path)}")


def _leaf_sig(x):
    """(kind, shape, dtype) of a leaf for comparison with ``like``."""
    if isinstance(x, (bool, int, float, str)) and not isinstance(x, np.generic):
        return ("python " + type(x).__name__, None, None)
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return ("array", tuple(shape), np.dtype(dtype))
    return (type(x).__name__, None, None)


def _check_like(name, tree, like):
    like_leaves, like_def = tree_util.tree_flatten_with_path(like)
    try:
        got = like_def.flatten_up_to(tree)
    except ValueError as e:
        msg = str(e).split(": ", 1)[-1]
        raise ValueError(f"netcl.io.load: {name}: the checkpoint does not match `like`: "
                         f"{msg}") from None
    for (p, want), have in zip(like_leaves, got):
        where = _where(p)
        if not tree_util.all_leaves([have]):
            raise ValueError(f"netcl.io.load: {name}: the checkpoint does not match `like` at "
                             f"{where}: expected a leaf, got {tree_util.tree_structure(have)}")
        ws, hs = _leaf_sig(want), _leaf_sig(have)
        if ws[0] != hs[0]:
            raise ValueError(f"netcl.io.load: {name}: the checkpoint does not match `like` at "
                             f"{where}: expected {ws[0]}, got {hs[0]}")
        if ws[1] != hs[1] or ws[2] != hs[2]:
            raise ValueError(f"netcl.io.load: {name}: the checkpoint does not match `like` at "
                             f"{where}: expected shape {ws[1]} dtype {ws[2]}, got shape {hs[1]} "
                             f"dtype {hs[2]}")


def load(path, like=None, *, device=None):
    """Read a checkpoint written by ``save``.

    netcl Arrays come back on ``device`` (default: the default device) with their dtypes and
    weak types; NumPy arrays/scalars and Python scalars come back as they were saved.
    ``like``: a pytree the result must match (structure, and shape/dtype of array leaves, or
    the type of Python scalar leaves); a mismatch raises ValueError naming the first leaf path
    that differs. Namedtuple classes found in ``like`` are used to rebuild the checkpoint's.
    A truncated, corrupted or foreign file raises ValueError naming ``path``.

    >>> state = netcl.io.load("ckpt.npz", like=state)
    """
    name = os.fspath(path)
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"netcl.io.load: device must be a netcl Device, got "
                        f"{type(device).__name__}")
    dev = device or default_device()
    known = _namedtuple_types(like, {}) if like is not None else {}
    with open(name, "rb") as f:  # missing file / permissions: the OSError as is
        try:
            members = _read_members(f)
            header = members[_TREE]
            if header.dtype != np.uint8 or header.ndim != 1:
                raise _Corrupt(f"bad {_TREE} entry")
            try:
                desc = json.loads(header.tobytes().decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                raise _Corrupt(f"the tree description is not valid JSON ({e})") from None
            _check_description(desc, members)
            tree = _Loader(desc["leaves"], members, dev, known, name).node(desc["tree"], ())
        except _DeviceError as e:
            raise TypeError(str(e)) from None
        except _Corrupt as e:
            raise ValueError(f"netcl.io.load: {name}: {e}") from None
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            raise ValueError(f"netcl.io.load: {name}: malformed tree description "
                             f"({type(e).__name__}: {e})") from None
    if like is not None:
        _check_like(name, tree, like)
    return tree
