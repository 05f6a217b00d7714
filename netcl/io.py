"""Checkpoints: ``save(path, tree)`` / ``load(path, like=None)`` for any pytree of arrays.

    >>> netcl.io.save("ckpt.npz", {"params": params, "opt": opt_state, "step": 100,
    ...                            "key": key})
    >>> state = netcl.io.load("ckpt.npz", like=state)     # checks structure, shapes, dtypes

Nodes: dict (str/int/float/bool/None/tuple keys), OrderedDict, list, tuple, namedtuple
(see below), None. Leaves: netcl Arrays (come back as netcl Arrays on the default
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
(``float.hex``, exact, inf/nan included) with a ``value``. A bfloat16 array's member holds
its bits as uint16 (``.npy`` has no bfloat16); its description says ``"bfloat16"``. The
8-bit floats (``"float8_e4m3fn"``, ...) likewise, as uint8.

``save`` writes a temporary file ``.<name>.<host>.<pid>.<random>.tmp`` in the destination
directory, fsyncs it and ``os.replace``s it over ``path``, so a crash or an error never leaves
a half-written checkpoint. Re-saving keeps the old file's permission bits (a new file gets the
umask default); temporary files of the same target left by killed writers of this host (whose
pid no longer exists) are removed by the next save.

Loading treats the file as untrusted data. The sha256 fields are checksums against damage,
not signatures (anyone can recompute them), so nothing in the file is ever executed or
imported: **loading imports no module and looks up no attribute named by the file**. The
stored module and qualname of a namedtuple are informational only. A namedtuple node is
rebuilt with the class of the namedtuple found at the same position of ``like`` (same
field names); without one it comes back as a plain tuple (with one warning per ``load`` when
``like`` is not given). The format has no other class-bearing node kind: dataclasses and
custom registered nodes are refused by ``save``, and any unknown node type in a file is a
ValueError. ``load`` reads the description first and checks it (its sha256, every leaf's
kind, dtype, shape and member, each leaf used once) and the zip directory (member sizes
against the file's size and deflate's 1032:1 limit) before allocating anything; each
member's ``.npy`` header must agree with the description, the zip CRCs and every array's
sha256 are checked, and a load never allocates more than the description's arrays. A
truncated, damaged, foreign or crafted file raises ValueError naming the path and the
problem.
"""
import collections
import errno
import hashlib
import json
import os
import re
import secrets
import socket
import struct
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
                                      np.float32, np.float64, np.complex64, np.complex128,
                                      _dtypes.bfloat16, *_dtypes.FLOAT8,
                                      *_dtypes.SUBBYTE_INTS)}
# dtypes .npy cannot name, stored as their bits
_STORED_AS = {_dtypes.bfloat16: np.dtype(np.uint16), **{d: np.dtype(np.uint8)
                                                      for d in _dtypes.FLOAT8},
              **{d: np.dtype(np.uint8) for d in _dtypes.SUBBYTE_INTS}}


# ---- saving -------------------------------------------------------------------------------

_CHUNK = 1 << 22  # bytes copied at a time when hashing a non-contiguous array
_READ_CHUNK = 1 << 20  # bytes read at a time (zipfile copies each read twice)


def _sha256(a):
    """sha256 of ``a``'s bytes in C order, equal to ``sha256(a.tobytes())`` but without a copy
    of the whole array: a C-contiguous array is hashed in place, any other in row blocks."""
    h = hashlib.sha256()
    _hash_c_order(h, np.asarray(a))
    return h.hexdigest()


def _hash_c_order(h, a):
    if a.flags.c_contiguous:  # (0-d and empty arrays always are)
        h.update(a.reshape(-1).view(np.uint8))
        return
    row = a.nbytes // a.shape[0]
    step = max(1, _CHUNK // row)
    for i in range(0, a.shape[0], step):
        if step == 1 and a.ndim > 1 and row > _CHUNK:
            _hash_c_order(h, a[i])  # one row is itself too big to copy at once
        else:
            h.update(np.ascontiguousarray(a[i:i + step]).reshape(-1).view(np.uint8))


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
        self.arrays.append(host.view(_STORED_AS.get(host.dtype, host.dtype)))
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


# Temporary files carry the writer's host and pid, so that a later save can tell a dead
# writer's leftover (same host, pid gone) from a live writer's file, also on a directory
# shared between machines.
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists but belongs to someone else
        return True
    return True


def _remove_stale_temps(directory, base):
    """Remove the temporary files of target ``base`` left by killed writers of this host."""
    if os.name != "posix":  # os.kill(pid, 0) would terminate the process on Windows
        return
    pattern = re.compile(re.escape(f".{base}.{_HOST}.") + r"(\d+)\.[0-9a-f]{8}\.tmp")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for n in names:
        m = pattern.fullmatch(n)
        if m is None:
            continue
        pid = int(m.group(1))
        # our own pid: another thread of this process may be writing it right now
        if pid != os.getpid() and not _pid_alive(pid):
            try:
                os.unlink(os.path.join(directory, n))
            except OSError:
                pass


def save(path, pytree, *, compress=False):
    """Write ``pytree`` to the checkpoint file ``path`` (atomically: temp file + rename).

    ``path`` is used as given (no suffix is added). ``compress=True`` deflates the members.
    Raises TypeError naming the leaf path for anything that cannot be saved, before any file
    is touched; an existing checkpoint at ``path`` survives any failure, and keeps its
    permission bits when replaced. A missing directory raises FileNotFoundError naming
    ``path``. Temporary files of ``path`` left by killed saves on this host are removed.
    In a job of several processes (netcl.distributed) every process calls it, only process 0
    writes, and it returns once the file is written, so that every process can load it.

    >>> netcl.io.save("ckpt.npz", {"params": params, "step": 10})
    """
    path = os.fspath(path)
    from .distributed import world
    job = world()
    if job is not None and job.index != 0:  # process 0 writes the file meanwhile
        return job.comm.Barrier(what=f"netcl.io.save({path!r})")
    saver = _Saver()
    tree = saver.node(pytree, ())
    desc = {"format": _FORMAT, "version": FORMAT_VERSION, "tree": tree, "leaves": saver.leaves}
    desc["sha256"] = _description_digest(desc)
    header = np.frombuffer(json.dumps(desc, allow_nan=False).encode("utf-8"), np.uint8)
    members = [(_TREE, header)] + [(f"leaf_{i}", a) for i, a in enumerate(saver.arrays)]

    directory, base = os.path.split(os.path.abspath(path))
    _remove_stale_temps(directory, base)
    try:
        mode = os.stat(path).st_mode & 0o777  # re-saving keeps the file's permissions
    except OSError:
        mode = None
    tmp = os.path.join(directory, f".{base}.{_HOST}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:  # created with the old mode, so a 0600 checkpoint is never readable while written
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o666 if mode is None else mode)
    except OSError as e:  # name the user's path, not the temporary file
        why = (f"the directory {directory!r} does not exist" if e.errno == errno.ENOENT
               else f"cannot create a file in {directory!r} ({e.strerror})")
        raise OSError(e.errno, f"netcl.io.save: {why}", path) from None  # str() adds path
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)  # the umask may have dropped some of its bits
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
    if job is not None:
        job.comm.Barrier(what=f"netcl.io.save({path!r})")


# ---- loading ------------------------------------------------------------------------------

class _Corrupt(Exception):
    pass


class _DeviceError(TypeError):
    pass


_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError,
               zlib.error, struct.error, UnicodeDecodeError, NotImplementedError, SyntaxError,
               OverflowError, RuntimeError)  # RuntimeError: "encrypted" flag bit
_DTYPE_NAMES = {d.name: d for d in _SAVE_DTYPES}
_ARRAY_KINDS = ("array", "ndarray", "npscalar")
_DEFLATE_MAX_RATIO = 1032  # deflate's limit: one 258-byte match costs at least 2 bits
_MAX_DESCRIPTION = 1 << 24  # a larger description must be stored or compress at most 64:1


def _read_npy(g, size, name, dtype, shape):
    """Read one .npy member from the zip stream ``g`` (``size``: its uncompressed size). The
    header must claim ``dtype`` and ``shape`` (None: any shape) and exactly ``size`` bytes:
    all checked before anything is allocated; no more than that is ever read."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(g)
        if version == (1, 0):
            hshape, fortran, hdtype = fmt.read_array_header_1_0(g)
        elif version == (2, 0):
            hshape, fortran, hdtype = fmt.read_array_header_2_0(g)
        else:
            raise _Corrupt(f"member {name!r} has unsupported .npy version {version}")
    except (_Corrupt, zipfile.BadZipFile):
        raise
    except Exception as e:  # noqa: BLE001 - NumPy's parser of a damaged header raises
        # ValueError, SyntaxError, tokenize.TokenError, ... : all mean "damaged"
        raise _Corrupt(f"member {name!r} has a damaged .npy header "
                       f"({type(e).__name__}: {e})") from None
    if hdtype.hasobject:
        raise _Corrupt(f"member {name!r} holds Python objects (pickle), which netcl never loads")
    if hdtype != dtype or (shape is not None and tuple(hshape) != tuple(shape)):
        want = "" if shape is None else f"{list(shape)} "
        raise _Corrupt(f"member {name!r} holds {list(hshape)} {hdtype}, the description "
                       f"says {want}{dtype}")
    count = 1
    for d in hshape:
        count *= d
    nbytes = count * hdtype.itemsize
    if nbytes != size - g.tell():
        raise _Corrupt(f"member {name!r} claims shape {hshape} {hdtype} ({nbytes} bytes) but "
                       f"holds {size - g.tell()} bytes")
    arr = np.empty(count, hdtype)
    view, pos = memoryview(arr.view(np.uint8)), 0
    while pos < nbytes:  # in chunks: zipfile's readinto reads into a temporary bytes object
        n = g.readinto(view[pos:pos + _READ_CHUNK])
        if not n:
            raise _Corrupt(f"member {name!r} is truncated")
        pos += n
    if g.read(1):  # also makes zipfile check the CRC-32 at the end of the member
        raise _Corrupt(f"member {name!r} has trailing data")
    return arr.reshape(hshape, order="F" if fortran else "C")


class _Members:
    """The members of an open npz, their directory checked against the file's size (so that
    no member can claim more data than the file can hold) before anything is read."""

    def __init__(self, f):
        size = os.fstat(f.fileno()).st_size
        try:
            self.zf = zipfile.ZipFile(f)
            infos = self.zf.infolist()
        except _ZIP_ERRORS as e:
            raise _Corrupt(f"not a valid zip/npz file, or truncated ({type(e).__name__}: {e})") \
                from None
        self.infos = {}
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in self.infos:
                raise _Corrupt(f"unexpected member {name!r}")
            if info.compress_type == zipfile.ZIP_STORED:
                limit = info.compress_size
            elif info.compress_type == zipfile.ZIP_DEFLATED:
                limit = _DEFLATE_MAX_RATIO * info.compress_size + 64
            else:
                raise _Corrupt(f"member {name!r} uses compression method "
                               f"{info.compress_type}; checkpoints are stored or deflated")
            if info.file_size > limit:
                raise _Corrupt(f"member {name!r} claims {info.file_size} bytes from "
                               f"{info.compress_size} stored bytes, which is impossible")
            self.infos[name[:-4]] = info
        if _TREE not in self.infos:
            raise _Corrupt(f"not a netcl checkpoint (no {_TREE} entry; members are "
                           f"{[i.filename for i in infos][:8]})")
        # members may not overlap: together they cannot hold more than the file
        if sum(i.compress_size for i in infos) > size:
            raise _Corrupt(f"the zip directory claims {sum(i.compress_size for i in infos)} "
                           f"bytes of members in a file of {size} bytes")
        tree = self.infos[_TREE]
        if tree.file_size > max(_MAX_DESCRIPTION, 64 * tree.compress_size):
            raise _Corrupt(f"the tree description claims {tree.file_size} bytes from "
                           f"{tree.compress_size} stored bytes")

    def size(self, member):
        return self.infos[member].file_size

    def read(self, member, dtype, shape=None):
        info = self.infos[member]
        try:
            with self.zf.open(info) as g:
                return _read_npy(g, info.file_size, info.filename, dtype, shape)
        except _Corrupt:
            raise
        except _ZIP_ERRORS as e:
            raise _Corrupt(f"member {info.filename!r} is corrupted or truncated "
                           f"({type(e).__name__}: {e})") from None


def _read_description(members):
    header = members.read(_TREE, np.dtype(np.uint8))
    if header.ndim != 1:
        raise _Corrupt(f"bad {_TREE} entry")
    try:
        desc = json.loads(header.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _Corrupt(f"the tree description is not valid JSON ({e})") from None
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
    leaves = desc["leaves"]
    if not isinstance(leaves, list) or not isinstance(desc["tree"], dict):
        raise _Corrupt("malformed tree description (no tree or leaves)")
    wanted = {_TREE}
    for i, meta in enumerate(leaves):
        m = _check_leaf_meta(i, meta)
        if m is None:
            continue
        if m in wanted or m not in members.infos:
            raise _Corrupt(f"leaf {i}: member {m!r} is missing or used twice")
        wanted.add(m)
        # a description can never claim more data than its member holds (checked before
        # any leaf is read, so a crafted description allocates nothing)
        count = 1
        for d in meta["shape"]:
            count *= d
        if count * _DTYPE_NAMES[meta["dtype"]].itemsize > members.size(m):
            raise _Corrupt(f"leaf {i} claims shape {meta['shape']} {meta['dtype']}, more than "
                           f"its member {m!r} holds ({members.size(m)} bytes)")
    if wanted != set(members.infos):
        raise _Corrupt(f"members {sorted(set(members.infos) - wanted)[:8]} are unexpected")
    return desc


def _check_leaf_meta(i, meta):
    """Check one leaf description's fields and types; return its member name or None."""
    kind = meta["kind"]
    value_types = {"bool": (bool,), "int": (int,), "str": (str,), "float": (str,)}
    if kind in value_types:
        v = meta["value"]
        if not isinstance(v, value_types[kind]) or (kind == "int" and isinstance(v, bool)):
            raise _Corrupt(f"leaf {i}: bad {kind} value {v!r}")
        if kind == "float":
            try:
                float.fromhex(v)
            except ValueError:
                raise _Corrupt(f"leaf {i}: bad float value {v!r}") from None
        return None
    if kind not in _ARRAY_KINDS:
        raise _Corrupt(f"leaf {i}: unknown leaf kind {kind!r}")
    shape, dtype, member = meta["shape"], meta["dtype"], meta["member"]
    if not isinstance(dtype, str) or dtype not in _DTYPE_NAMES:
        raise _Corrupt(f"leaf {i}: unsupported dtype {dtype!r}")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape):
        raise _Corrupt(f"leaf {i}: bad shape {shape!r}")
    if kind == "npscalar" and shape:
        raise _Corrupt(f"leaf {i}: a NumPy scalar with shape {shape}")
    if not isinstance(member, str) or not isinstance(meta["sha256"], str) or \
            (kind == "array" and not isinstance(meta["weak_type"], bool)):
        raise _Corrupt(f"leaf {i}: malformed array description")
    return member


def _is_namedtuple(x):
    h = tree_util._lookup(type(x))
    return h is not None and h.kind == "namedtuple"


class _Loader:
    """Builds the tree from a checked description, reading each array member when its leaf
    is reached (so at most one host copy is alive per leaf). ``like`` is walked alongside:
    it is the only source of namedtuple classes."""

    def __init__(self, leaves, members, device, name):
        self.leaves, self.members, self.device, self.name = leaves, members, device, name
        self.used = set()
        self.plain = []  # (path, qualname) of namedtuples restored as plain tuples

    def leaf(self, i, path):
        if type(i) is not int or not 0 <= i < len(self.leaves) or i in self.used:
            raise _Corrupt(f"bad or repeated leaf index {i!r} at {_where(path)}")
        self.used.add(i)
        meta = self.leaves[i]
        kind = meta["kind"]
        if kind in ("bool", "int", "str"):
            return meta["value"]
        if kind == "float":
            return float.fromhex(meta["value"])
        dt = _DTYPE_NAMES[meta["dtype"]]
        host = self.members.read(meta["member"], _STORED_AS.get(dt, dt), meta["shape"]).view(dt)
        if _sha256(host) != meta["sha256"]:
            raise _Corrupt(f"checksum mismatch for the array at {_where(path)} "
                           f"(member {meta['member']!r}): the data is corrupted")
        if kind == "ndarray":
            return host
        if kind == "npscalar":
            return host[()]
        dev = self.device
        if dt not in _dtypes.SUPPORTED:
            raise _Corrupt(f"the netcl array at {_where(path)} has unsupported dtype {dt}")
        if dt == _dtypes.float64 and not dev.capabilities.fp64:
            raise _DeviceError(f"netcl.io.load: {self.name}: the array at {_where(path)} is "
                               f"float64 but {dev.name} has no fp64 support")
        return Array.from_numpy(dev, host, weak_type=meta["weak_type"])

    def node(self, n, path, like):
        t = n["t"]
        if t == "leaf":
            return self.leaf(n["i"], path)
        if t == "none":
            return None
        if t in ("list", "tuple", "namedtuple"):
            cs, seq = n["c"], like if isinstance(like, (list, tuple)) else ()
            if not isinstance(cs, list):
                raise _Corrupt(f"malformed {t} node at {_where(path)}")
            if t == "namedtuple":
                fields = n["fields"]
                if not isinstance(fields, list) or len(fields) != len(cs) or \
                        not all(isinstance(f, str) for f in fields):
                    raise _Corrupt(f"malformed namedtuple node at {_where(path)}")
                keys = [tree_util.GetAttrKey(f) for f in fields]
            else:
                keys = [tree_util.SequenceKey(i) for i in range(len(cs))]
            out = [self.node(c, path + (k,), seq[i] if i < len(seq) else None)
                   for i, (k, c) in enumerate(zip(keys, cs))]
            if t == "list":
                return out
            if t == "namedtuple":
                if _is_namedtuple(like) and tuple(type(like)._fields) == tuple(fields):
                    return type(like)(*out)
                self.plain.append((path, n["qualname"]))
            return tuple(out)
        if t in ("dict", "ordereddict"):
            if not isinstance(n["keys"], list) or not isinstance(n["c"], list) or \
                    len(n["keys"]) != len(n["c"]):
                raise _Corrupt(f"malformed {t} node at {_where(path)}")
            keys = [_decode_key(k) for k in n["keys"]]
            sub = like if isinstance(like, dict) else {}
            cs = [self.node(c, path + (tree_util.DictKey(k),), sub.get(k))
                  for k, c in zip(keys, n["c"])]
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
    that differs.

    Loading imports nothing and runs no code named by the file (its checksums are not
    signatures: treat a checkpoint from elsewhere as data). A namedtuple is rebuilt with the
    class of the namedtuple at the same position in ``like`` when its field names agree;
    otherwise it comes back as a plain tuple (with a warning when ``like`` is not given), and
    a ``like`` that expects a namedtuple there raises ValueError. A truncated, damaged,
    foreign or crafted file raises ValueError naming ``path`` (before allocating more than
    the description's arrays); a missing or unreadable file raises the OSError as is.

    >>> state = netcl.io.load("ckpt.npz", like=state)
    >>> netcl.io.load("ckpt.npz")["opt"]   # no like: namedtuples come back as tuples
    """
    name = os.fspath(path)
    if device is not None and not isinstance(device, Device):
        raise TypeError(f"netcl.io.load: device must be a netcl Device, got "
                        f"{type(device).__name__}")
    dev = device or default_device()
    with open(name, "rb") as f:  # missing file / permissions: the OSError as is
        try:
            members = _Members(f)
            with members.zf:
                desc = _read_description(members)
                loader = _Loader(desc["leaves"], members, dev, name)
                tree = loader.node(desc["tree"], (), like)
                if len(loader.used) != len(desc["leaves"]):
                    raise _Corrupt(f"{len(desc['leaves']) - len(loader.used)} leaves of the "
                                   "description are not in its tree")
        except _DeviceError as e:
            raise TypeError(str(e)) from None
        except _Corrupt as e:
            raise ValueError(f"netcl.io.load: {name}: {e}") from None
        except RecursionError:
            raise ValueError(f"netcl.io.load: {name}: the tree description is nested too "
                             "deeply") from None
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
            raise ValueError(f"netcl.io.load: {name}: malformed tree description "
                             f"({type(e).__name__}: {e})") from None
    if like is None and loader.plain:
        path0, qualname = loader.plain[0]
        more = f" (and {len(loader.plain) - 1} more)" if len(loader.plain) > 1 else ""
        warnings.warn(f"netcl.io.load: {name}: the namedtuple {qualname!r} at {_where(path0)}"
                      f"{more} is restored as a plain tuple: loading never imports classes "
                      "named by a file; pass like= with the namedtuple there to rebuild it",
                      stacklevel=2)
    if like is not None:
        _check_like(name, tree, like)
    return tree
