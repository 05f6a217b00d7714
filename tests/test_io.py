"""netcl.io: checkpoint round trips, atomic writes, corruption and `like=` checks."""
import collections
import os
import sys
import tempfile
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl import io, random, tree_util
from netcl.core.devices import numpy_device
from netcl.core.eval import to_array

Point = collections.namedtuple("Point", ["x", "y"])


def assert_tree_equal(got, want):
    assert tree_util.tree_structure(got) == tree_util.tree_structure(want), \
        f"{tree_util.tree_structure(got)} != {tree_util.tree_structure(want)}"
    for (path, g), w in zip(tree_util.tree_leaves_with_path(got), tree_util.tree_leaves(want)):
        where = tree_util.keystr(path)
        assert type(g) is type(w), f"{where}: {type(g)} != {type(w)}"
        if isinstance(w, (netcl.Array, np.ndarray, np.generic)):
            gh, wh = np.asarray(g), np.asarray(w)
            assert gh.dtype == wh.dtype and gh.shape == wh.shape, where
            np.testing.assert_array_equal(gh, wh, err_msg=where)
            if isinstance(w, netcl.Array):
                assert g.weak_type == w.weak_type, where
        elif isinstance(w, float) and w != w:
            assert g != g, where
        else:
            assert g == w, where


def roundtrip(tree, **kw):
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "ckpt.npz")
        io.save(p, tree)
        assert os.listdir(d) == ["ckpt.npz"]
        return io.load(p, **kw)


def sample_tree():
    from netcl.optim.transforms import ScaleByAdamState
    rng = np.random.default_rng(0)
    return {
        "params": [{"w": jnp.array(rng.normal(size=(3, 4)).astype(np.float32)),
                    "b": jnp.zeros((4,))},
                   (jnp.array(np.arange(6, dtype=np.float64).reshape(2, 3)), None)],
        "opt": ScaleByAdamState(count=jnp.array(np.int32(7)), mu=jnp.ones((2,)),
                                nu=jnp.array(np.array([True, False]))),
        "key": random.PRNGKey(42),
        "step": 100, "lr": 1e-3, "flag": False, "name": "run-1", "nothing": None,
        "weak": to_array(1.5),
        "half": jnp.array(np.array([1.5, -2.0], np.float16)),
        "empty": jnp.zeros((0, 3)), "u32": jnp.array(np.array([1, 2**32 - 1], np.uint32)),
        "np": np.arange(5, dtype=np.int64), "np0d": np.float64(2.5),
        "nested": collections.OrderedDict([("z", [1, (2.0, [None])]), ("a", Point(1, "s"))]),
        7: "int key", ("t", 1): 3,
    }


def test_roundtrip_nested_tree():
    tree = sample_tree()
    tree.pop(7)
    tree.pop(("t", 1))
    got = roundtrip(tree, like=tree)  # namedtuple classes come from like
    assert_tree_equal(got, tree)
    assert isinstance(got["opt"], type(tree["opt"]))
    assert got["key"].dtype == np.uint32 and got["key"].device is netcl.default_device()
    assert isinstance(got["nested"], collections.OrderedDict)
    assert list(got["nested"]) == ["z", "a"]
    # the result is usable: arithmetic on loaded arrays
    np.testing.assert_allclose(np.asarray(got["params"][0]["w"] * 2),
                               np.asarray(tree["params"][0]["w"]) * 2)


def test_roundtrip_non_string_keys_and_weak_types():
    tree = {7: "int key", ("t", 1): 3, None: 1.5, 2.5: True}
    got = roundtrip(tree)
    assert got == tree and list(got) == list(tree)
    weak, strong = to_array(2) + 1, jnp.array(np.int32(2))
    assert weak.weak_type and not strong.weak_type
    got = roundtrip({"weak": weak, "strong": strong})
    assert got["weak"].weak_type and not got["strong"].weak_type
    assert (got["weak"] + np.float32(1)).dtype == np.float32  # still weak in promotion


@pytest.mark.parametrize("value", [0, -1, 2**40, 3.25, float("inf"), float("nan"), -0.0, True,
                                   "", "ünïcode", None, (), [], {}])
def test_roundtrip_scalars_and_empty_nodes(value):
    got = roundtrip({"v": value, "l": [value]})
    assert_tree_equal(got, {"v": value, "l": [value]})
    if isinstance(value, float) and value == 0:
        assert str(got["v"]) == "-0.0"


def test_roundtrip_leaf_root_and_device():
    x = jnp.array(np.arange(4, dtype=np.int32))
    got = roundtrip(x)
    assert isinstance(got, netcl.Array)
    np.testing.assert_array_equal(np.asarray(got), np.arange(4))
    got = roundtrip([x], device=numpy_device())
    assert got[0].device.is_numpy and got[0].dtype == np.int32


_DTYPES = [np.float32, np.float64, np.int32, np.uint32, np.bool_, np.float16]


def _leaf(kind, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    host = (rng.normal(size=shape) * 10).astype(dtype)
    if kind == "netcl":
        return jnp.array(host)
    return host if kind == "numpy" else host.reshape(-1)[0] if host.size else 1


_trees = st.recursive(
    st.builds(_leaf, st.sampled_from(["netcl", "numpy", "py"]), st.sampled_from(_DTYPES),
              st.lists(st.integers(0, 3), max_size=3).map(tuple), st.integers(0, 99))
    | st.none() | st.integers() | st.floats() | st.text(max_size=5) | st.booleans(),
    lambda kids: st.lists(kids, max_size=3) | st.tuples(kids, kids)
    | st.dictionaries(st.text(max_size=3), kids, max_size=3)
    | st.builds(Point, kids, kids),
    max_leaves=8)


@settings(max_examples=25, deadline=None)
@given(_trees)
def test_roundtrip_random_trees(tree):
    assert_tree_equal(roundtrip(tree, like=tree), tree)


def test_compressed_roundtrip_and_numpy_readable(tmp_path):
    p = tmp_path / "c.npz"
    tree = {"a": jnp.zeros((100, 100)), "b": 3}
    io.save(p, tree, compress=True)
    assert os.path.getsize(p) < 100 * 100 * 4 // 10
    assert_tree_equal(io.load(p), tree)
    with np.load(p) as f:  # a plain npz: NumPy can read it without pickle
        assert set(f.files) == {"__netcl_tree__", "leaf_0"}
        np.testing.assert_array_equal(f["leaf_0"], np.zeros((100, 100), np.float32))


# ---- atomic writes ----------------------------------------------------------------------

def test_save_overwrites_atomically_and_leaves_no_temp_files(tmp_path):
    p = tmp_path / "ckpt"
    io.save(p, {"a": 1})
    io.save(p, {"a": 2})
    assert os.listdir(tmp_path) == ["ckpt"]
    assert io.load(p) == {"a": 2}


@pytest.mark.parametrize("bad", [np.array([object()]), object(), {1, 2}, b"bytes",
                                 np.array(["str"])])
def test_failed_save_keeps_existing_checkpoint(tmp_path, bad):
    p = tmp_path / "ckpt.npz"
    io.save(p, {"w": jnp.ones(3), "step": 1})
    before = p.read_bytes()
    with pytest.raises(TypeError, match=r"netcl.io.save.*\['bad'\]\[1\]"):
        io.save(p, {"w": jnp.zeros(3), "step": 2, "bad": [0, bad]})
    assert p.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.npz"]
    assert io.load(p)["step"] == 1


def test_failure_while_writing_removes_temp_file(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.npz"
    io.save(p, {"step": 1})
    real_write = io._write

    def failing_write(f, members, compress):
        real_write(f, members[:1], compress)  # something half-written reaches the temp file
        raise OSError("disk full")
    monkeypatch.setattr(io, "_write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        io.save(p, {"step": 2, "w": np.ones(3)})
    assert os.listdir(tmp_path) == ["ckpt.npz"]
    monkeypatch.undo()
    assert io.load(p) == {"step": 1}


def test_save_refuses_tracers_and_custom_nodes(tmp_path):
    p = tmp_path / "c.npz"

    def f(x):
        io.save(p, {"x": x})
        return x
    with pytest.raises(TypeError, match=r"\['x'\].*traced"):
        netcl.grad(lambda x: jnp.sum(f(x)))(jnp.ones(2))
    with pytest.raises(TypeError, match="node.*Partial"):
        io.save(p, tree_util.Partial(len, 1))
    with pytest.raises(TypeError, match="key"):
        io.save(p, {frozenset(): 1})
    assert not os.listdir(tmp_path)


# ---- corrupted, truncated and foreign files ------------------------------------------------

MARK = (np.arange(256, dtype=np.float32) + 0.123).astype(np.float32)


def _write_marked(path):
    io.save(path, {"a": jnp.array(MARK), "b": 5})
    data = bytearray(path.read_bytes())
    pos = bytes(data).find(MARK.tobytes())
    assert pos > 0
    return data, pos


def test_flipped_bytes_in_leaf_data_are_detected(tmp_path):
    p = tmp_path / "c.npz"
    data, pos = _write_marked(p)
    data[pos + 100] ^= 0xFF
    p.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"{p}.*(corrupt|checksum)"):
        io.load(p)


def test_leaf_checksum_detects_consistent_zip_with_wrong_data(tmp_path):
    """A file whose zip CRCs are right but whose leaf differs: the sha256 catches it."""
    p, q = tmp_path / "c.npz", tmp_path / "d.npz"
    _write_marked(p)
    with zipfile.ZipFile(p) as src, zipfile.ZipFile(q, "w") as dst:
        for info in src.infolist():
            b = src.read(info)
            if info.filename == "leaf_0.npy":
                b = b.replace(MARK.tobytes()[:4], (MARK[:1] + 1).tobytes())
            dst.writestr(info.filename, b)
    with pytest.raises(ValueError, match=rf"{q}.*checksum mismatch.*\['a'\]"):
        io.load(q)


def test_tampered_description_is_detected(tmp_path):
    p, q = tmp_path / "c.npz", tmp_path / "d.npz"
    io.save(p, {"step": 5})
    with zipfile.ZipFile(p) as src, zipfile.ZipFile(q, "w") as dst:
        for info in src.infolist():
            b = src.read(info)
            if info.filename == "__netcl_tree__.npy":
                b = b.replace(b'"value": 5', b'"value": 6')
            dst.writestr(info.filename, b)
    with pytest.raises(ValueError, match=rf"{q}.*checksum mismatch.*description"):
        io.load(q)


def test_truncated_file(tmp_path):
    p = tmp_path / "c.npz"
    data, pos = _write_marked(p)
    for n in (0, 3, 30, pos + 10, len(data) // 2, len(data) - 1):
        p.write_bytes(bytes(data[:n]))
        with pytest.raises(ValueError, match=rf"netcl.io.load: {p}: "):
            io.load(p)


def test_random_byte_flips_never_escape_as_other_errors(tmp_path):
    p = tmp_path / "c.npz"
    data, _ = _write_marked(p)
    rng = np.random.default_rng(0)
    for _ in range(40):
        bad = bytearray(data)
        bad[rng.integers(len(bad))] ^= 1 << int(rng.integers(8))
        p.write_bytes(bytes(bad))
        try:
            got = io.load(p)
        except ValueError as e:
            assert str(p) in str(e)
        else:  # a flip in an unused zip field (e.g. a timestamp) is harmless
            assert got["b"] == 5
            np.testing.assert_array_equal(np.asarray(got["a"]), MARK)


def test_not_a_checkpoint(tmp_path):
    txt = tmp_path / "notes.txt"
    txt.write_text("hello\n")
    with pytest.raises(ValueError, match=rf"{txt}.*not a valid zip"):
        io.load(txt)
    npz = tmp_path / "plain.npz"
    np.savez(npz, a=np.ones(3))
    with pytest.raises(ValueError, match=rf"{npz}.*not a netcl checkpoint"):
        io.load(npz)
    npy = tmp_path / "a.npy"
    np.save(npy, np.ones(3))
    with pytest.raises(ValueError, match=rf"{npy}.*not a valid zip"):
        io.load(npy)
    pick = tmp_path / "pickle.npz"
    np.savez(pick, __netcl_tree__=np.array([{"evil": 1}], dtype=object))
    with pytest.raises(ValueError, match=rf"{pick}.*pickle"):
        io.load(pick)
    with pytest.raises(FileNotFoundError):
        io.load(tmp_path / "missing.npz")


# ---- like= ----------------------------------------------------------------------------

def test_like_accepts_matching_tree(tmp_path):
    p = tmp_path / "c.npz"
    tree = sample_tree()
    io.save(p, tree)
    assert_tree_equal(io.load(p, like=tree), tree)


@pytest.mark.parametrize("edit, where, what", [
    (lambda t: t["params"][0].update(w=jnp.ones((4, 3))), r"\['params'\]\[0\]\['w'\]", "shape"),
    (lambda t: t["params"][0].update(b=jnp.zeros((4,), np.int32)), r"\['params'\]\[0\]\['b'\]",
     "dtype"),
    (lambda t: t.update(opt=t["opt"]._replace(mu=jnp.ones((3,)))), r"\['opt'\]\.mu", "shape"),
    (lambda t: t.pop("lr"), "the root", "keys"),
    (lambda t: t["params"].append(1), r"\['params'\]", "length"),
    (lambda t: t.update(step=1.0), r"\['step'\]", "python float"),
    (lambda t: t.update(nothing=jnp.ones(1)), r"\['nothing'\]", "None"),
    (lambda t: t.update(step=(1, 2)), r"\['step'\]", "tuple of length 2"),
])
def test_like_mismatch_names_leaf_path(tmp_path, edit, where, what):
    p = tmp_path / "c.npz"
    tree = sample_tree()
    io.save(p, tree)
    like = sample_tree()
    edit(like)
    with pytest.raises(ValueError, match=rf"(?s){p}.*{where}.*{what}"):
        io.load(p, like=like)


def test_like_leaf_where_checkpoint_has_subtree(tmp_path):
    p = tmp_path / "c.npz"
    io.save(p, {"a": (1, 2), "b": None})
    with pytest.raises(ValueError, match=r"\['a'\]: expected a leaf"):
        io.load(p, like={"a": 0, "b": None})
    with pytest.raises(ValueError, match=r"\['b'\]"):
        io.load(p, like={"a": (1, 2), "b": 0})


def test_unimportable_namedtuple(tmp_path):
    Local = collections.namedtuple("Local", ["a", "b"])
    p = tmp_path / "c.npz"
    io.save(p, {"s": Local(jnp.ones(2), 3)})
    with pytest.warns(UserWarning, match=r"Local.*plain tuple"):
        got = io.load(p)
    assert type(got["s"]) is tuple and got["s"][1] == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = io.load(p, like={"s": Local(jnp.zeros(2), 0)})  # the class comes from like
    assert type(got["s"]) is Local


def test_newer_format_version_is_refused(tmp_path, monkeypatch):
    p = tmp_path / "c.npz"
    monkeypatch.setattr(io, "FORMAT_VERSION", 99)
    io.save(p, {"a": 1})
    monkeypatch.setattr(io, "FORMAT_VERSION", 1)
    with pytest.raises(ValueError, match=rf"{p}.*version 99"):
        io.load(p)


# ---- crafted files: loading imports nothing -------------------------------------------------

def _recraft(src, dst, edit, text=lambda t: t):
    """Copy checkpoint ``src`` to ``dst`` with its description changed by ``edit(desc)`` and
    its sha256 recomputed, as an attacker would (the checksum is not a signature); ``text``
    may then change the description's JSON text."""
    import json
    with zipfile.ZipFile(src) as z:
        members = {i.filename: z.read(i) for i in z.infolist()}
    with zipfile.ZipFile(src) as z, z.open("__netcl_tree__.npy") as g:
        desc = json.loads(np.lib.format.read_array(g).tobytes())
    edit(desc)
    desc["sha256"] = io._description_digest(desc)
    with zipfile.ZipFile(dst, "w") as z:
        for name, b in members.items():
            if name == "__netcl_tree__.npy":
                with z.open(name, "w") as g:
                    np.lib.format.write_array(g, np.frombuffer(text(json.dumps(desc)).encode(),
                                                               np.uint8))
            else:
                z.writestr(name, b)


def _set_namedtuple(module, qualname):
    def edit(desc):
        node = desc["tree"]["c"][0]
        assert node["t"] == "namedtuple"
        node["module"], node["qualname"] = module, qualname
    return edit


@pytest.mark.parametrize("module, qualname", [
    ("unittest.__main__", "TestProgram"),  # importing it runs test*.py here, then exits
    ("evil_mod", "Point"),                 # a module beside the checkpoint
    ("evil_mod.sub", "a.b.c"), ("os", "system")])
def test_load_imports_no_module_named_by_the_file(tmp_path, monkeypatch, module, qualname):
    # the user runs Python in the directory of a downloaded checkpoint: modules and test
    # files there would be importable
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    marker = tmp_path / "marker"
    payload = f"open({str(marker)!r}, 'a').write('ran')\n"
    (tmp_path / "evil_mod.py").write_text(payload)
    (tmp_path / "test_payload.py").write_text(payload)  # what unittest.__main__ would run
    p = tmp_path / "good.npz"
    io.save(p, {"s": Point(jnp.ones(2), 3)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        io.load(p)  # warm-up: whatever load imports legitimately is imported now
    q = tmp_path / "crafted.npz"
    _recraft(p, q, _set_namedtuple(module, qualname))
    before = set(sys.modules)
    try:
        with pytest.warns(UserWarning, match="plain tuple"):
            got = io.load(q)
        assert not marker.exists(), f"loading a file naming {module} ran code"
        assert type(got["s"]) is tuple and got["s"][1] == 3
        # like= without a namedtuple at that position: still a plain tuple, no import
        got = io.load(q, like={"s": (jnp.ones(2), 0)})
        assert type(got["s"]) is tuple
        # like= with the class at that position: the class comes from like, not the file
        got = io.load(q, like={"s": Point(jnp.ones(2), 0)})
        assert type(got["s"]) is Point
    except SystemExit:
        pytest.fail(f"loading a file naming {module} ran it and exited")
    assert not marker.exists(), f"loading a file naming {module} ran code"
    assert "evil_mod" not in sys.modules
    assert set(sys.modules) == before, f"load imported {set(sys.modules) - before}"


def test_namedtuple_class_comes_from_like_at_the_same_position(tmp_path):
    Other = collections.namedtuple("Other", ["u", "v"])
    p = tmp_path / "c.npz"
    io.save(p, {"a": Point(1, 2), "b": Point(3, 4), "n": [Point(5, (Point(6, 7),))]})
    got = io.load(p, like={"a": Point(0, 0), "b": (0, 0), "n": [Point(0, (Point(0, 0),))]})
    assert type(got["a"]) is Point and type(got["b"]) is tuple  # not looked up by name
    assert type(got["n"][0]) is Point and type(got["n"][0].y[0]) is Point
    assert got["n"][0].y[0].y == 7
    # a namedtuple with other fields at that position is not used: a clear mismatch
    with pytest.raises(ValueError, match=rf"{p}.*\['a'\].*namedtuple\[Other\]"):
        io.load(p, like={"a": Other(0, 0), "b": (0, 0), "n": [Point(0, (Point(0, 0),))]})


@pytest.mark.parametrize("node", [
    {"t": "dataclass", "module": "os", "qualname": "system", "c": []},
    {"t": "custom", "module": "evil_mod", "qualname": "X", "c": []},
    {"t": "namedtuple", "module": "os", "qualname": "X", "fields": ["a"], "c": []},
    {"t": "leaf", "i": 0},  # the same leaf twice: no amplification by repeated references
    {"t": "leaf", "i": -1},
    {"t": "dict", "keys": [["z", 1]], "c": [{"t": "none"}]},
])
def test_crafted_nodes_are_refused(tmp_path, node):
    p, q = tmp_path / "c.npz", tmp_path / "d.npz"
    io.save(p, [np.ones(3), None])
    _recraft(p, q, lambda d: d["tree"]["c"].__setitem__(1, node))
    with pytest.raises(ValueError, match=rf"netcl.io.load: {q}: "):
        io.load(q)


# ---- save hygiene ----------------------------------------------------------------------------

@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_resave_keeps_file_mode(tmp_path):
    p = tmp_path / "c.npz"
    io.save(p, {"a": 1})
    ref = tmp_path / "ref"
    ref.write_text("")
    assert os.stat(p).st_mode & 0o777 == os.stat(ref).st_mode & 0o777  # a new file: umask
    os.chmod(p, 0o600)
    io.save(p, {"a": 2})
    assert os.stat(p).st_mode & 0o777 == 0o600 and io.load(p) == {"a": 2}
    os.chmod(p, 0o640)
    io.save(p, {"a": 3})
    assert os.stat(p).st_mode & 0o777 == 0o640


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL and pid probing")
def test_next_save_removes_temp_files_of_killed_writers(tmp_path):
    import subprocess
    p = tmp_path / "c.npz"
    io.save(p, {"step": 1})
    code = f"""if 1:
        import os, signal
        import numpy as np
        from netcl import io
        real = io._write
        def killed_midway(f, members, compress):
            real(f, members[:1], compress)
            f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        io._write = killed_midway
        io.save({str(p)!r}, {{"step": 2, "w": np.ones(1000)}})
    """
    r = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), timeout=120)
    assert r.returncode == -9
    dead = [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]
    assert len(dead) == 1 and dead[0].startswith(".c.npz.")
    # files to keep: a live writer (our parent) and our own pid (another thread) of this
    # host, a writer of another host, another target's temp file
    keep = [f".c.npz.{io._HOST}.{os.getppid()}.0123abcd.tmp",
            f".c.npz.{io._HOST}.{os.getpid()}.0123abcd.tmp",
            f".c.npz.{'f' * 8 if io._HOST != 'f' * 8 else '0' * 8}.{dead[0].split('.')[4]}"
            ".0123abcd.tmp",
            f".other.npz.{io._HOST}.{dead[0].split('.')[4]}.0123abcd.tmp"]
    for n in keep:
        (tmp_path / n).write_bytes(b"partial")
    assert io.load(p) == {"step": 1}
    io.save(p, {"step": 3})
    assert sorted(os.listdir(tmp_path)) == sorted(keep + ["c.npz"])
    assert io.load(p) == {"step": 3}


def test_save_into_missing_directory_names_the_path(tmp_path):
    p = tmp_path / "missing" / "c.npz"
    with pytest.raises(FileNotFoundError, match=r"netcl.io.save.*does not exist") as e:
        io.save(p, {"a": 1})
    assert e.value.filename == str(p) and ".tmp" not in str(e.value)


def test_hash_in_chunks_matches_tobytes_without_a_full_copy(monkeypatch):
    import hashlib
    import tracemalloc
    big = np.ones((2048, 1024), np.float64)  # 16 MiB
    for a, limit in ((big, 1 << 20), (big.T, (4 << 20) + (1 << 20))):
        tracemalloc.start()
        try:
            io._sha256(a)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < limit, f"hashing {a.nbytes} bytes allocated {peak} bytes"
    rng = np.random.default_rng(0)
    base = rng.normal(size=(6, 5, 4))
    cases = [base, base.T, base[:, ::2], np.asfortranarray(base), base[::-1, :, 1:],
             np.float32(1.5), np.array(2.0), np.zeros((0, 3)), np.array([True, False]),
             (base[0] + 1j * base[1]).T, np.arange(10, dtype=np.int16)[::3]]
    for chunk in (1 << 22, 48, 8):  # small chunks exercise the row blocks and recursion
        monkeypatch.setattr(io, "_CHUNK", chunk)
        for a in cases:
            assert io._sha256(a) == hashlib.sha256(np.asarray(a).tobytes()).hexdigest()


def test_save_and_load_hold_one_copy_of_an_array(tmp_path):
    p = tmp_path / "big.npz"
    big = np.ones((4096, 1024), np.float64)  # 32 MiB
    # save: NumPy's .npy writer copies 16 MiB blocks; no copy of the whole array for hashing
    assert _peak_while(lambda: io.save(p, {"w": big})) < (16 << 20) + (4 << 20)
    # load: the result, plus chunks (zipfile's readinto would read it all into a bytes object)
    assert _peak_while(lambda: io.load(p)) < big.nbytes + (4 << 20)


# ---- size bounds and damaged files --------------------------------------------------------------

def _peak_while(f):
    import tracemalloc
    tracemalloc.start()
    try:
        f()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_inflating_members_are_refused_before_allocating(tmp_path):
    # a compressed member far larger than the description says (consistent zip, right CRC)
    p, q = tmp_path / "c.npz", tmp_path / "bomb.npz"
    io.save(p, {"w": np.zeros(3, np.float32)})
    with zipfile.ZipFile(p) as src, zipfile.ZipFile(q, "w", zipfile.ZIP_DEFLATED) as dst:
        dst.writestr("__netcl_tree__.npy", src.read("__netcl_tree__.npy"))
        with dst.open("leaf_0.npy", "w") as g:
            np.lib.format.write_array(g, np.zeros(1 << 22, np.float32))  # 16 MiB
    assert os.path.getsize(q) < 100_000
    assert _peak_while(lambda: pytest.raises(ValueError, io.load, q)) < 1 << 20
    with pytest.raises(ValueError, match=rf"{q}.*leaf_0.*\[4194304\] float32.*says \[3\]"):
        io.load(q)
    # a description claiming a huge array (checksum recomputed): refused from the sizes alone
    r = tmp_path / "huge.npz"
    _recraft(p, r, lambda d: d["leaves"][0].update(shape=[1 << 40]))
    with pytest.raises(ValueError, match=rf"{r}.*leaf 0 claims shape \[{1 << 40}\]"):
        io.load(r)
    # a zip directory claiming more uncompressed bytes than deflate can produce
    s = tmp_path / "sizes.npz"
    data = bytearray(q.read_bytes())
    cd = bytes(data).find(b"PK\x01\x02")  # central directory entries: sizes at +20/+24
    while cd >= 0:
        name_len = int.from_bytes(data[cd + 28:cd + 30], "little")
        if data[cd + 46:cd + 46 + name_len] == b"leaf_0.npy":
            data[cd + 24:cd + 28] = (1 << 31).to_bytes(4, "little")
        cd = bytes(data).find(b"PK\x01\x02", cd + 4)
    s.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"{s}.*leaf_0.*claims 2147483648 bytes"):
        io.load(s)


def _write_big_marked(path, compress=False):
    mark = (np.arange(1500, dtype=np.float32) * 0.37).astype(np.float32)  # 6 kB: more than
    io.save(path, {"a": jnp.array(mark), "b": 5}, compress=compress)     # one zip read
    return bytearray(path.read_bytes()), mark


def test_damaged_npy_header_and_deep_descriptions(tmp_path):
    p = tmp_path / "c.npz"
    data, _ = _write_big_marked(p)
    header = bytes(data).find(b"{'descr': '<f4'")
    data[bytes(data).find(b"}", header)] = ord("|")  # NumPy's parser: tokenize.TokenError
    p.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"{p}.*leaf_0.*damaged .npy header"):
        io.load(p)
    q, r = tmp_path / "plain.npz", tmp_path / "deep.npz"
    io.save(q, [None])

    def mark(desc):
        desc["tree"]["c"][0] = "DEEP"

    def nest(text):     # written out as text: json.dumps itself recurses (a C limit in 3.12)
        deep = '{"t": "list", "c": [' * 5000 + '{"t": "none"}' + ']}' * 5000
        return text.replace('"DEEP"', deep)
    _recraft(q, r, mark, nest)
    with pytest.raises(ValueError, match=rf"{r}.*nested too deeply"):
        io.load(r)


@pytest.mark.parametrize("compress", [False, True])
def test_byte_corruption_fuzz(tmp_path, compress):
    """Seeded single-byte corruptions (random bytes, plus every byte of the leaf's .npy
    header): a load returns the original values or raises ValueError naming the file, in
    bounded memory."""
    p = tmp_path / "c.npz"
    data, mark = _write_big_marked(p, compress)
    header = bytes(data).find(b"\x93NUMPY", bytes(data).find(b"leaf_0.npy"))
    rng = np.random.default_rng(1)
    spots = [int(i) for i in rng.integers(len(data), size=200)]
    if not compress:
        spots += list(range(header, header + 128))
    outcomes = collections.Counter()

    def run():
        for i in spots:
            bad = bytearray(data)
            bad[i] ^= int(rng.integers(1, 256))
            p.write_bytes(bytes(bad))
            try:
                got = io.load(p)
            except ValueError as e:
                assert f"netcl.io.load: {p}: " in str(e), str(e)
                outcomes["ValueError"] += 1
            else:  # e.g. a flip in a zip timestamp: harmless, but never wrong values
                assert got["b"] == 5
                np.testing.assert_array_equal(np.asarray(got["a"]), mark)
                outcomes["same"] += 1
    peak = _peak_while(run)
    assert outcomes["ValueError"] > len(spots) // 2, outcomes
    assert peak < 4 << 20, f"loading damaged 6 kB files allocated {peak} bytes"
