"""jax.sharding and shard_map: meshes, PartitionSpecs, NamedShardings, device_put into blocks
(GlobalArray), and shard_map's blocks, collectives over mesh axes, composition with jit/grad/
vmap, and its errors. Several devices need NETCL_CPU_DEVICES before PyOpenCL loads: those
programs run in a subprocess, next to JAX on as many host devices where JAX is installed."""
import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.core.global_array import GlobalArray
from netcl.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

ON_NUMPY = netcl.default_device().is_numpy


def mesh1(name="i"):
    return netcl.make_mesh((1,), (name,))


# ---- the records -------------------------------------------------------------------------------

def test_partition_spec_and_mesh_records():
    assert P("x", None) == P("x", None) and P(("x",)) == P("x") and P("x") != P("x", None)
    assert repr(P(("a", "b"), None)) == "P(('a', 'b'), None)" and repr(P("x")) == "P('x',)"
    assert len(P("x", None)) == 2 and tuple(P("x", ("a", "b"))) == ("x", ("a", "b"))
    m = mesh1()
    assert m.shape == {"i": 1} and m.axis_names == ("i",) and m.size == 1
    assert m.devices.shape == (1,) and m.devices[0] is netcl.local_devices()[0]
    assert m == mesh1() and hash(m) == hash(mesh1())
    with m:
        assert netcl.sharding.get_mesh() is m
    assert netcl.sharding.get_mesh() is None


def test_named_sharding_blocks_and_equality():
    m = mesh1()
    s = NamedSharding(m, P("i"))
    assert s.shard_shape((4, 3)) == (4, 3) and s.is_fully_replicated and s.num_devices == 1
    assert s.devices_indices_map((4, 3)) == {m.devices[0]: (slice(None), slice(None))}
    assert s == NamedSharding(m, P("i")) and hash(s) == hash(NamedSharding(m, P("i")))
    assert s != NamedSharding(m, P("i", None))
    assert SingleDeviceSharding(m.devices[0]).shard_shape((2,)) == (2,)


def test_records_agree_with_jax_on_one_device():
    jax = pytest.importorskip("jax")
    from jax.sharding import NamedSharding as JNS, PartitionSpec as JP
    jm = jax.make_mesh((1,), ("i",))
    for spec in [("i",), ("i", None), (None, "i"), ()]:
        js, ns = JNS(jm, JP(*spec)), NamedSharding(mesh1(), P(*spec))
        assert js.shard_shape((4, 6)) == ns.shard_shape((4, 6))
        assert list(js.devices_indices_map((4, 6)).values()) == \
            list(ns.devices_indices_map((4, 6)).values())
        assert repr(JP(*spec)) == repr(P(*spec))


def test_bad_meshes_and_specs_raise_naming_the_function():
    with pytest.raises(ValueError, match=r"make_mesh: Number of devices \d+ must be >= the "
                                         r"product of mesh_shape \(64,\)"):
        netcl.make_mesh((64,), ("x",))
    with pytest.raises(ValueError, match="make_mesh: axis_shapes"):
        netcl.make_mesh((1,), ("x", "y"))
    with pytest.raises(TypeError, match="Mesh: devices must be netcl Devices"):
        Mesh(np.array(["cpu"]), ("x",))
    with pytest.raises(ValueError, match="Mesh: devices has 1 dimensions"):
        Mesh(np.array(netcl.local_devices()[:1]), ("x", "y"))
    m = mesh1()
    with pytest.raises(ValueError, match=r"Resource axis: y of P\('y',\) is not found in mesh"):
        NamedSharding(m, P("y"))
    with pytest.raises(TypeError, match="NamedSharding: spec must be a PartitionSpec"):
        NamedSharding(m, ("i",))
    with pytest.raises(ValueError, match="device_put: P\\('i', None\\) is only valid for "
                                         "values of rank at least 2, but was applied to a "
                                         "value of rank 1"):
        netcl.device_put(np.zeros(3, np.float32), NamedSharding(m, P("i", None)))
    with pytest.raises(TypeError, match="device_put: device must be a netcl Device or a "
                                        "Sharding, got str"):
        netcl.device_put(np.zeros(3, np.float32), "gpu")


# ---- device_put into blocks ----------------------------------------------------------------

def test_device_put_with_a_sharding_gives_a_global_array():
    m = mesh1()
    host = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    tree = netcl.device_put({"a": host, "b": (host[0], 2.0)},
                            {"a": NamedSharding(m, P("i")), "b": NamedSharding(m, P())})
    x = tree["a"]
    assert isinstance(x, GlobalArray) and isinstance(x, netcl.Array)
    assert x.shape == (4, 3) and x.dtype == jnp.float32 and x.sharding.spec == P("i")
    [shard] = x.addressable_shards
    assert shard.device is m.devices[0] and shard.replica_id == 0
    np.testing.assert_array_equal(np.asarray(shard.data), host)
    np.testing.assert_array_equal(np.asarray(x + 1), host + 1)       # eager use
    np.testing.assert_array_equal(np.asarray(netcl.jit(lambda v: v * 2)(x)), host * 2)
    assert tree["b"][1].weak_type                                     # Python scalar stays weak
    # a prefix: one sharding per subtree
    d = netcl.device_put((host, host), (NamedSharding(m, P("i")), m.devices[0]))
    assert isinstance(d[0], GlobalArray) and not isinstance(d[1], GlobalArray)
    plain = jnp.ones(3, jnp.float32)
    assert plain.sharding == SingleDeviceSharding(plain.device)
    assert plain.devices() == {plain.device} and plain.nbytes == 12 and plain.itemsize == 4


def test_make_array_from_callback_and_single_device_arrays():
    m = mesh1()
    s = NamedSharding(m, P("i"))
    host = np.arange(6.0, dtype=np.float32)
    x = netcl.make_array_from_callback((6,), s, lambda idx: host[idx])
    np.testing.assert_array_equal(np.asarray(x), host)
    y = netcl.make_array_from_single_device_arrays((6,), s, [jnp.asarray(host)])
    np.testing.assert_array_equal(np.asarray(y), host)
    with pytest.raises(ValueError, match="make_array_from_single_device_arrays: the array on "
                                         ".* has shape \\(5,\\); the sharding's block of"):
        netcl.make_array_from_single_device_arrays((6,), s, [jnp.zeros(5)])
    with pytest.raises(ValueError, match="make_array_from_callback: data_callback"):
        netcl.make_array_from_callback((6,), s, lambda idx: host[:2])
    z = netcl.make_array_from_process_local_data(s, host)
    assert z.sharding == s and np.array_equal(np.asarray(z), host)
    with pytest.raises(ValueError, match="make_array_from_process_local_data: global_shape"):
        netcl.make_array_from_process_local_data(s, host, (12,))


def test_jit_shardings_donate_argnames_and_sharding_constraints():
    m = mesh1()
    s = NamedSharding(m, P("i"))
    f = netcl.jit(lambda x, y: (x * 2, y + 1), in_shardings=(s, None),
                  out_shardings=(s, None), donate_argnames="y")
    a, b = f(jnp.ones(4, jnp.float32), jnp.ones(4, jnp.float32))
    assert isinstance(a, GlobalArray) and a.sharding == s and not isinstance(b, GlobalArray)
    np.testing.assert_array_equal(np.asarray(a), np.full(4, 2.0))
    y = jnp.ones(4, jnp.float32)
    f(jnp.ones(4, jnp.float32), y)
    assert y.is_deleted()                         # donated by name, passed by position
    with pytest.raises(ValueError, match=r"jit\(<lambda>\): in_shardings for argument 0: "
                                         r"P\('i', None\) is only valid for values of rank"):
        netcl.jit(lambda x: x, in_shardings=NamedSharding(m, P("i", None)))(jnp.ones(3))
    x = jnp.arange(4.0, dtype=jnp.float32)
    placed = lax.with_sharding_constraint(x, s)
    assert isinstance(placed, GlobalArray) and placed.sharding == s
    with m:
        assert netcl.reshard(x, P("i")).sharding == s
    with pytest.raises(ValueError, match="with_sharding_constraint: a bare PartitionSpec"):
        lax.with_sharding_constraint(x, P("i"))
    # traced: checked, passed through
    g = netcl.jit(lambda v: lax.with_sharding_constraint(v * 2, s))
    np.testing.assert_array_equal(np.asarray(g(x)), np.arange(4.0) * 2)


def test_mesh_utils_and_multihost_utils_in_one_process():
    from netcl.experimental import mesh_utils, multihost_utils
    grid = mesh_utils.create_device_mesh((1,))
    assert grid.shape == (1,) and grid[0] is netcl.local_devices()[0]
    assert Mesh(grid, ("i",)) == mesh1()
    with pytest.raises(ValueError, match=r"create_device_mesh: Number of devices \d+ must "
                                         r"equal the product of mesh_shape \(64,\)"):
        mesh_utils.create_device_mesh((64,))
    with pytest.raises(NotImplementedError, match="create_hybrid_device_mesh: dcn_mesh_shape"):
        mesh_utils.create_hybrid_device_mesh((1,), (2,))
    g = multihost_utils.process_allgather({"a": jnp.arange(3.0), "b": 2})
    assert g["a"].shape == (1, 3) and g["b"].tolist() == [2]
    assert multihost_utils.process_allgather(jnp.arange(3.0), tiled=True).shape == (3,)
    multihost_utils.sync_global_devices("one process")
    multihost_utils.assert_equal(jnp.ones(2))
    with pytest.raises(TypeError, match="sync_global_devices: name must be a str"):
        multihost_utils.sync_global_devices(3)


def test_visualize_and_inspect_array_sharding(capsys):
    m = mesh1()
    x = netcl.device_put(np.ones((4, 8), np.float32), NamedSharding(m, P("i")))
    netcl.debug.visualize_array_sharding(x)
    drawn = capsys.readouterr().out.splitlines()
    assert drawn[0].startswith("┌") and drawn[-1].startswith("└") and len(drawn) == 3
    assert drawn[1].strip("│ ") == f"{netcl.local_devices()[0].kind.upper()} 0" or \
        drawn[1].strip("│ ") == "DEV 0"
    seen = []
    netcl.jit(lambda v: netcl.debug.inspect_array_sharding(v, callback=seen.append) or v)(x)
    netcl.debug.inspect_array_sharding({"x": x}, callback=seen.append)
    assert isinstance(seen[0], SingleDeviceSharding) and seen[1] == x.sharding
    with pytest.raises(ValueError, match=r"visualize_sharding: only 1-D and 2-D arrays can "
                                         r"be drawn, got shape \(2, 2, 2\)"):
        netcl.debug.visualize_array_sharding(jnp.ones((2, 2, 2)))


# ---- shard_map on one device: composition and errors -------------------------------------------

def _normalize(x):
    return x / lax.psum(jnp.sum(x), "i")


def test_shard_map_composes_with_jit_grad_and_vmap():
    m = mesh1()
    f = netcl.shard_map(_normalize, mesh=m, in_specs=P("i"), out_specs=P("i"))
    x = np.arange(1.0, 5.0, dtype=np.float32)
    y = f(x)
    assert isinstance(y, GlobalArray) and y.sharding == NamedSharding(m, P("i"))
    np.testing.assert_allclose(np.asarray(y), x / x.sum(), rtol=1e-6)
    w = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    g = netcl.jit(netcl.grad(lambda v: jnp.sum(f(v) * w)))(x)
    s = x.sum()
    np.testing.assert_allclose(np.asarray(g), w / s - (w @ x) / s ** 2, rtol=1e-5)
    batched = netcl.vmap(f)(np.stack([x, 2 * x]))
    np.testing.assert_allclose(np.asarray(batched), np.stack([x / s, x / s]), rtol=1e-6)


def test_shard_map_decorator_forms_mesh_context_and_infer():
    m = mesh1()

    @functools.partial(netcl.shard_map, mesh=m, in_specs=(P("i"), P()), out_specs=P())
    def loss(xs, w):
        return lax.pmean(jnp.mean((xs @ w) ** 2), "i")
    xs, w = np.ones((4, 3), np.float32), np.full(3, 0.5, np.float32)
    np.testing.assert_allclose(float(loss(xs, w)), 2.25, rtol=1e-6)
    from netcl.experimental.shard_map import shard_map as old_shard_map
    old = old_shard_map(lambda v: v + lax.axis_index("i"), m, P("i"), P("i"))
    np.testing.assert_array_equal(np.asarray(old(xs)), xs)
    with m:
        inferred = netcl.shard_map(lambda v: v * 2, out_specs=P("i"))
        placed = netcl.device_put(xs, NamedSharding(m, P("i")))
        np.testing.assert_array_equal(np.asarray(inferred(placed)), xs * 2)


def test_shard_map_errors():
    m = mesh1()
    x = np.zeros((4, 2), np.float32)
    with pytest.raises(TypeError, match="shard_map: missing the required argument out_specs"):
        netcl.shard_map(lambda v: v, mesh=m, in_specs=P("i"))
    with pytest.raises(ValueError, match=r"shard_map\(<lambda>\): no mesh"):
        netcl.shard_map(lambda v: v, in_specs=P("i"), out_specs=P("i"))(x)
    with pytest.raises(ValueError, match=r"in_specs P\('i', None, None\) for argument 0 has "
                                         r"3 entries; the argument has rank 2 \(shape \(4, 2\)"):
        netcl.shard_map(lambda v: v, mesh=m, in_specs=P("i", None, None), out_specs=P())(x)
    with pytest.raises(ValueError, match="names 'j', which is not a manual axis of the mesh"):
        netcl.shard_map(lambda v: v, mesh=m, in_specs=P("j"), out_specs=P())(x)
    with pytest.raises(ValueError, match="in_specs has 2 entries but the value it describes "
                                         "has 1"):
        netcl.shard_map(lambda v: v, mesh=m, in_specs=(P(), P()), out_specs=P())(x)
    with pytest.raises(ValueError, match=r"out_specs P\('i', None, None\) for result 0 has 3 "
                                         r"entries; the result has rank 2"):
        netcl.shard_map(lambda v: v, mesh=m, in_specs=P("i"), out_specs=P("i", None, None))(x)


@pytest.mark.skipif(ON_NUMPY, reason="several devices need OpenCL (PoCL)")
def test_shard_map_over_four_devices_agrees_with_jax():
    """1-D meshes run as a pmap over the devices (inputs placed as the specs ask stay where
    they are); 2-D meshes as batches on one device; both against NumPy and JAX's shard_map on
    four host devices."""
    code = textwrap.dedent("""
    import numpy as np
    import netcl, netcl.numpy as jnp
    from netcl import lax
    from netcl.core.array import Array
    from netcl.core.global_array import GlobalArray
    from netcl.sharding import NamedSharding, PartitionSpec as P
    try:
        import jax, jax.numpy as xnp
        from jax import lax as xlax
        from jax.sharding import PartitionSpec as JP
    except ImportError:
        jax = None

    def close(a, b):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)

    # (a GPU host has as many devices as GPUs whatever NETCL_CPU_DEVICES says)
    if netcl.device_count() < 4:
        print("SKIP: 4 devices asked, the host has", netcl.device_count())
        raise SystemExit(0)

    def both(body_n, body_j, shape, specs_in, spec_out, *args, jax_check=True):
        mesh = netcl.make_mesh(shape, names)
        got = netcl.shard_map(body_n, mesh=mesh, in_specs=specs_in, out_specs=spec_out)(*args)
        if jax is not None:
            jm = jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,)
                               * len(shape))
            conv = lambda s: JP(*s) if isinstance(s, P) else tuple(conv(e) for e in s)
            want = jax.shard_map(body_j, mesh=jm, in_specs=conv(specs_in),
                                 out_specs=conv(spec_out), check_vma=jax_check)(*args)
            close(got, want)
        return got

    # 1-D: pmap over four devices
    names = ("i",)
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    y = both(lambda b: b / lax.psum(b.sum(), "i") + lax.axis_index("i"),
             lambda b: b / xlax.psum(b.sum(), "i") + xlax.axis_index("i"), (4,), P("i"), P("i"),
             x)
    close(y, x / x.sum() + np.repeat(np.arange(4), 2)[:, None])
    assert isinstance(y, GlobalArray)
    assert [s.device for s in y.addressable_shards] == netcl.local_devices()
    both(lambda b: lax.ppermute(b, "i", [(k, (k + 1) % 4) for k in range(4)]),
         lambda b: xlax.ppermute(b, "i", [(k, (k + 1) % 4) for k in range(4)]),
         (4,), P("i"), P("i"), x)
    both(lambda b: lax.psum_scatter(b, "i", tiled=True),
         lambda b: xlax.psum_scatter(b, "i", tiled=True), (4,), P(), P("i"), x)
    r = both(lambda b: lax.psum(b, "i"), lambda b: xlax.psum(b, "i"), (4,), P("i"), P(), x)
    assert [s.replica_id for s in r.addressable_shards] == [0, 1, 2, 3]
    m22 = netcl.make_mesh((2, 2), ("a", "b"))
    netcl.debug.visualize_array_sharding(netcl.device_put(np.ones((4, 8), np.float32),
                                                          NamedSharding(m22, P("a"))))

    # a GlobalArray placed as the spec asks is used where it is: no copy through the host
    mesh = netcl.make_mesh((4,), ("i",))
    placed = netcl.device_put(x, NamedSharding(mesh, P("i")))
    f = netcl.shard_map(lambda b: b * 2.0, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    f(placed)
    reads = []
    orig = Array._to_host
    Array._to_host = lambda self, *a, **k: reads.append(1) or orig(self, *a, **k)
    out = f(f(placed))
    Array._to_host = orig
    assert reads == [], len(reads)
    close(out, x * 4)
    close(f(x[:4]), x[:4] * 2)                # another shape: another signature

    # grad through shard_map (traced: batched on one device)
    g = netcl.grad(lambda v: jnp.sum(netcl.shard_map(
        lambda b: b * lax.psum(jnp.sum(b), "i"), mesh=mesh, in_specs=P("i"),
        out_specs=P("i"))(v)))(x)
    close(g, 2 * x.sum() * np.ones_like(x))

    # 2-D meshes: blocks batched on one device, results placed on the mesh's devices.
    # (netcl checks that a result left out of an axis does not vary along it by value, as
    # vmap sees it; JAX by type, where all_gather's result still counts as varying)
    names = ("d", "m")
    a = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    b = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    r = both(lambda a, b: lax.psum(a @ b, "m"), lambda a, b: xlax.psum(a @ b, "m"), (2, 2),
             (P("d", "m"), P("m", None)), P("d", None), a, b)
    close(r, a @ b)
    assert [(s.device.index, s.replica_id) for s in r.addressable_shards] == \\
        [(0, 0), (1, 1), (2, 0), (3, 1)]
    v = np.arange(8.0, dtype=np.float32)
    both(lambda u: lax.all_gather(u, "d", tiled=True),
         lambda u: xlax.all_gather(u, "d", tiled=True), (2, 2), P(("d", "m")), P("m"), v,
         jax_check=False)
    both(lambda u: u * (lax.axis_index("d") * 10 + lax.axis_index("m")),
         lambda u: u * (xlax.axis_index("d") * 10 + xlax.axis_index("m")), (2, 2),
         P(("m", "d")), P(("m", "d")), v)
    both(lambda u: lax.pmean(u, ("d", "m")), lambda u: xlax.pmean(u, ("d", "m")), (2, 2),
         P("d", "m"), P(), a)
    print("OK")
    """)
    grid = ["┌─────────┐", "│ CPU 0,1 │", "├─────────┤", "│ CPU 2,3 │", "└─────────┘"]
    env = dict(os.environ, NETCL_CPU_DEVICES="4", JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=4")
    env.pop("POCL_DEVICES", None)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    if r.stdout.startswith("SKIP: "):
        pytest.skip(r.stdout.strip()[6:])
    assert "OK" in r.stdout, r.stdout[-3000:]
    assert "\n".join(grid) in r.stdout, r.stdout[-3000:]      # (replicas share a cell)
