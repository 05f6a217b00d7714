"""More of JAX's surface, checked against JAX: lax.ragged_dot / ragged_dot_general (values,
float64 gradients, jit, vmap, bad input), lax.pcast / pbroadcast, the transfer guard,
host_count / host_id / host_ids, Shard and sharding.make_single_device_sharding."""
import logging
import threading
import warnings

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.sharding import P

jax = pytest.importorskip("jax")
jlax = jax.lax


@pytest.fixture(autouse=True)
def _jax_x64():
    """JAX with x64 for this file's references (as netcl in the suite), restored after each
    test: a module-level update would change JAX's mode for every file collected after."""
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", old)


def _rng(seed=0):
    return np.random.RandomState(seed)


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# ---- ragged_dot ----------------------------------------------------------------------------

@pytest.mark.parametrize("sizes", [[2, 3, 1], [0, 6, 0], [2, 1, 0], [4, 4, 4]])
def test_ragged_dot_matches_jax(sizes):
    r = _rng()
    lhs, rhs = r.randn(6, 3), r.randn(3, 3, 4)
    gs = np.array(sizes, np.int32)      # [2, 1, 0]: rows 3.. are zeros; [4, 4, 4]: overfull
    got = lax.ragged_dot(jnp.array(lhs), jnp.array(rhs), jnp.array(gs))
    _close(got, jlax.ragged_dot(lhs, rhs, gs))
    assert got.shape == (6, 4) and got.dtype == np.float64


def test_ragged_dot_dtypes_follow_jax():
    r = _rng(1)
    lhs, rhs, gs = r.randn(5, 2), r.randn(2, 2, 3), np.array([3, 2], np.int32)
    for a, b, pet in [(np.float32, np.float32, None), (np.float32, np.float64, None),
                      (np.float32, np.float32, np.float64), (np.int32, np.int32, None)]:
        x, y = (lhs * 3).astype(a), (rhs * 3).astype(b)
        got = lax.ragged_dot(x, y, gs, preferred_element_type=pet)
        want = jlax.ragged_dot(x, y, gs, preferred_element_type=pet)
        assert got.dtype == want.dtype, (a, b, pet)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_ragged_dot_grad_jit_vmap():
    r = _rng(2)
    lhs, rhs, gs = r.randn(7, 3), r.randn(3, 3, 2), np.array([2, 0, 4], np.int32)
    w = r.randn(7, 2)

    def loss(mod):
        return lambda a, b: mod.numpy.sum(mod.lax.ragged_dot(a, b, gs) ** 2 * w)
    got = netcl.grad(loss(netcl), argnums=(0, 1))(jnp.array(lhs), jnp.array(rhs))
    want = jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs)
    for g, h in zip(got, want):
        _close(g, h)
    jitted = netcl.jit(lambda a, b, s: lax.ragged_dot(a, b, s))
    _close(jitted(lhs, rhs, gs), jlax.ragged_dot(lhs, rhs, gs))
    gss = np.array([[2, 0, 4], [7, 0, 0]], np.int32)   # vmap over group sizes (JAX: NYI)
    lhss = np.stack([lhs, -lhs])
    got = netcl.vmap(lambda a, s: lax.ragged_dot(a, rhs, s))(lhss, gss)
    _close(got, np.stack([jlax.ragged_dot(a, rhs, s) for a, s in zip(lhss, gss)]))


def _dn(mod, *args):
    return mod.lax.RaggedDotDimensionNumbers(*args)


RAGGED_CASES = [
    # mode 1 with a batch dim: [b, m, k] x [g, b, k, n]
    ((((2,), (2,)), ((0,), (1,))), (1,), (0,), (2, 5, 3), (2, 2, 3, 4), (2,)),
    # mode 1, batched group sizes [b, g]
    ((((2,), (2,)), ((0,), (1,))), (1,), (0,), (2, 5, 3), (2, 2, 3, 4), (2, 2)),
    # mode 2 (ragged contracting, the rhs gradient): [m, k] x [m, n] -> [g, k, n]
    ((((0,), (0,)), ((), ())), (0,), (), (6, 3), (6, 4), (3,)),
    # mode 2 with a batch dim
    ((((1,), (1,)), ((0,), (0,))), (1,), (), (2, 6, 3), (2, 6, 4), (3,)),
    # mode 3 (ragged batch)
    ((((2,), (1,)), ((0,), (0,))), (0,), (), (3, 5, 2), (3, 2, 4), (2,)),
]


@pytest.mark.parametrize("case", RAGGED_CASES)
def test_ragged_dot_general_matches_jax(case):
    dot_dn, ragged, group, lshape, rshape, gshape = case
    r = _rng(3)
    lhs, rhs = r.randn(*lshape), r.randn(*rshape)
    n = lshape[ragged[0]]
    gs = r.randint(0, n // 2 + 1, size=gshape).astype(np.int32)
    want = jlax.ragged_dot_general(lhs, rhs, gs, _dn(jax, dot_dn, ragged, group))
    got = lax.ragged_dot_general(lhs, rhs, gs, _dn(netcl, dot_dn, ragged, group))
    assert got.shape == want.shape
    _close(got, want)
    # float64 gradients w.r.t. both operands, against JAX's reference implementation (its
    # own transpose rule has no rhs gradient in the contracting and batch modes)
    from jax._src.lax.lax import _ragged_dot_general_impl
    ct = r.randn(*want.shape)
    dn = _dn(netcl, dot_dn, ragged, group)
    got = netcl.grad(lambda a, b: jnp.sum(lax.ragged_dot_general(a, b, gs, dn) * ct),
                     (0, 1))(lhs, rhs)
    want = jax.grad(lambda a, b: jax.numpy.sum(_ragged_dot_general_impl(
        a, b, gs, _dn(jax, dot_dn, ragged, group)) * ct), (0, 1))(lhs, rhs)
    for g, h in zip(got, want):
        _close(g, h)


def test_ragged_dot_dimension_numbers_record():
    dn = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    assert dn.dot_dimension_numbers == (((1,), (1,)), ((), ()))
    assert dn.lhs_ragged_dimensions == (0,) and dn.rhs_group_dimensions == (0,)
    assert dn == lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    hash(dn)
    with pytest.raises(TypeError, match="RaggedDotDimensionNumbers.*lhs_ragged_dimensions"):
        lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), ["a"], [0])


def test_ragged_dot_bad_inputs():
    lhs, rhs, gs = jnp.ones((5, 3)), jnp.ones((2, 3, 4)), jnp.array([2, 3], jnp.int32)
    cases = [
        ((lhs, rhs, gs.astype(jnp.float32)), r"ragged_dot: group_sizes must have an integer "
                                             r"dtype, got shape \(2,\) and dtype float32"),
        ((lhs, jnp.ones((2, 4, 4)), gs), r"ragged_dot: lhs \[m, k\] and rhs \[g, k, n\] "
                                         r"must agree in k.*\(5, 3\).*\(2, 4, 4\)"),
        ((lhs, rhs, jnp.array([1, 1, 1], jnp.int32)), r"ragged_dot: group_sizes has 3 "
                                                      r"groups but rhs .* has g=2"),
        ((jnp.ones((2, 5, 3)), rhs, gs), r"ragged_dot: lhs must be 2-d \[m, k\], got shape "
                                         r"\(2, 5, 3\)"),
        ((lhs, jnp.ones((3, 4)), gs), r"ragged_dot: rhs must be 3-d"),
        ((lhs, rhs, jnp.array(3, jnp.int32)), r"ragged_dot: group_sizes must be 1-d"),
        ((lhs > 0, rhs, gs), r"ragged_dot: lhs must be numeric.*bool"),
    ]
    for args, msg in cases:
        with pytest.raises(TypeError, match=msg):
            lax.ragged_dot(*args)
        if args[0].dtype != np.bool_:            # JAX raises TypeError for these as well
            with pytest.raises(TypeError):
                jlax.ragged_dot(*[np.asarray(a) for a in args])
    with pytest.raises(NotImplementedError, match="ragged_dot: group_offset"):
        lax.ragged_dot(lhs, rhs, gs, group_offset=jnp.array([0], jnp.int32))


def test_ragged_dot_general_bad_dimension_numbers():
    x, y, gs = jnp.ones((6, 3)), jnp.ones((6, 4)), jnp.array([2, 4], jnp.int32)
    bad = [
        (lax.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0], [0]),
         "takes no rhs group dimension"),
        (lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], []),
         "needs exactly one rhs group dimension"),
        (lax.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [5], []),
         "lhs ragged dimension 5 is out of range"),
        (lax.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0, 1], []),
         "exactly one lhs ragged dimension"),
    ]
    for dn, msg in bad:
        with pytest.raises(TypeError, match="ragged_dot_general: .*" + msg):
            lax.ragged_dot_general(x, y, gs, dn)
    with pytest.raises(TypeError, match="ragged_dot_general: expected group_sizes of shape"):
        lax.ragged_dot_general(x, y, jnp.ones((3, 2), jnp.int32),
                               lax.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0], []))
    with pytest.raises(TypeError, match="must be a RaggedDotDimensionNumbers"):
        lax.ragged_dot_general(x, y, gs, (([0], [0]), ([], [])))


# ---- pcast / pbroadcast --------------------------------------------------------------------

def test_pbroadcast_matches_jax_definition():
    x = np.arange(8.0).reshape(4, 2)

    def jax_def(v):     # JAX's documented meaning (its own batcher is broken in 0.10.2)
        return jlax.psum(jax.numpy.where(jlax.axis_index("i") == 2, v, 0.0), "i")
    got = netcl.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x)
    _close(got, jax.vmap(jax_def, axis_name="i")(x))
    w = np.arange(4.0)[:, None]

    def loss(mod, fn):
        return lambda v: mod.numpy.sum(mod.vmap(fn, axis_name="i")(v) * w)
    _close(netcl.grad(loss(netcl, lambda v: lax.pbroadcast(v, "i", 2)))(x),
           jax.grad(loss(jax, jax_def))(x))
    jitted = netcl.jit(netcl.vmap(lambda v: lax.pbroadcast(v, "i", 0), axis_name="i"))
    _close(jitted(x), np.broadcast_to(x[0], x.shape))
    m = netcl.make_mesh((1,), ("i",))
    got = netcl.shard_map(lambda v: lax.pbroadcast(v, "i", 0), mesh=m, in_specs=P("i"),
                          out_specs=P("i"))(jnp.array(x))
    _close(got, x)


def test_pcast_identity_and_errors():
    x = jnp.arange(4.0)
    for to in ("varying", "reduced", "unreduced"):
        _close(netcl.vmap(lambda v: lax.pcast(v, "i", to=to), axis_name="i")(x), x)
    m = netcl.make_mesh((1,), ("i",))
    got = netcl.shard_map(lambda v: lax.pcast(v, "i", to="varying") * 2, mesh=m,
                          in_specs=P(), out_specs=P("i"))(x)
    _close(got, np.arange(4.0) * 2)
    assert lax.pcast(x, (), to="varying") is x           # no names: x itself, as JAX
    with pytest.raises(NameError, match="pcast: unbound axis name: i"):
        lax.pcast(x, "i", to="varying")
    with pytest.raises(NameError, match="pbroadcast: unbound axis name: i"):
        lax.pbroadcast(x, "i", 0)
    with pytest.raises(ValueError, match="pcast: got unexpected to='sideways'"):
        lax.pcast(x, "i", to="sideways")
    with pytest.raises(ValueError, match="Allowed `to` values"):
        jlax.pcast(np.arange(4.0), "i", to="sideways")
    with pytest.raises(TypeError, match="pcast: axis_name=.* must be a tuple or a str"):
        lax.pcast(x, {"i"}, to="varying")
    with pytest.raises(TypeError, match="must be a tuple or a str"):
        jlax.pcast(np.arange(4.0), {"i"}, to="varying")
    with pytest.raises(ValueError, match="pbroadcast: source=4 is out of range.*size 4"):
        netcl.vmap(lambda v: lax.pbroadcast(v, "i", 4), axis_name="i")(x)
    with pytest.raises(TypeError, match="pbroadcast: source must be"):
        netcl.vmap(lambda v: lax.pbroadcast(v, "i", 1.5), axis_name="i")(x)
    assert not hasattr(jlax, "all_gather_invariant")      # (not public in JAX 0.10.2)


# ---- transfer guard ------------------------------------------------------------------------

def test_transfer_guard_host_to_device():
    x = jnp.ones(3)
    with netcl.transfer_guard("disallow"):
        x + 1.0                                  # Python scalars: cached constants
        netcl.jit(lambda a, b: a * b)(x, 2.0)
        jnp.ones(3)
        netcl.device_put(np.ones(3))             # explicit
        netcl.jit(lambda a: a + np.ones(3))(x)   # a constant of the trace, as JAX's
        netcl.eval_shape(lambda a: a + 1, np.ones(3))
        with pytest.raises(RuntimeError, match=r"Disallowed host-to-device transfer: .*"
                                               r"float64\[3\]"):
            x + np.ones(3)
        with pytest.raises(RuntimeError, match="Disallowed host-to-device.*numpy.array"):
            jnp.asarray([1.0, 2.0])
        with pytest.raises(RuntimeError, match=r"Disallowed host-to-device.*jit\(<lambda>\)"):
            netcl.jit(lambda a: a + 1)(np.ones(3))
    with netcl.transfer_guard_host_to_device("disallow_explicit"):
        with pytest.raises(RuntimeError, match="Disallowed host-to-device.*device_put"):
            netcl.device_put(np.ones(3))
        np.asarray(x)                            # another direction
    x + np.ones(3)                               # the block's end restores "allow"
    with jax.transfer_guard("disallow"):         # (JAX agrees on the arrays)
        with pytest.raises(RuntimeError, match="Disallowed host-to-device"):
            jax.numpy.ones(3, np.float32) + np.ones(3, np.float32)


def test_transfer_guard_device_to_host():
    x, s = jnp.arange(3.0), jnp.ones(())
    for level in ("disallow", "disallow_explicit"):
        with netcl.transfer_guard_device_to_host(level):
            for read in (lambda: np.asarray(x), lambda: float(s), lambda: s.item(),
                         lambda: x.tolist(), lambda: str(x), lambda: repr(x)):
                with pytest.raises(RuntimeError, match=r"Disallowed device-to-host "
                                                       r"transfer: .*float64"):
                    read()
            x + np.ones(3)                       # another direction
            if level == "disallow":
                assert netcl.device_get(x).tolist() == [0.0, 1.0, 2.0]
            else:
                with pytest.raises(RuntimeError, match="Disallowed device-to-host"):
                    netcl.device_get(x)
    assert x.tolist() == [0.0, 1.0, 2.0]


def test_transfer_guard_log(caplog):
    x = jnp.arange(3.0)
    with caplog.at_level(logging.WARNING, logger="netcl"):
        with netcl.transfer_guard("log"):
            y = x + np.ones(3)
            np.asarray(y)
            netcl.device_get(y)                  # explicit: silent under "log"
        with netcl.transfer_guard("log_explicit"):
            netcl.device_get(y)
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("host-to-device transfer") for m in msgs), msgs
    assert any(m.startswith("device-to-host transfer: np.asarray") for m in msgs), msgs
    assert sum("explicit device-to-host" in m for m in msgs) == 1, msgs


def test_transfer_guard_config_nesting_threads():
    x = jnp.ones(2)
    assert netcl.config.jax_transfer_guard_host_to_device is None      # as JAX's default
    netcl.config.update("jax_transfer_guard", "disallow")
    try:
        assert netcl.config.read("transfer_guard_device_to_host") == "disallow"
        with pytest.raises(RuntimeError, match="Disallowed device-to-host"):
            np.asarray(x)
        with netcl.transfer_guard("allow"):      # a block beats the global option
            np.asarray(x)
            with netcl.transfer_guard_device_to_host("disallow"):
                with pytest.raises(RuntimeError):
                    np.asarray(x)
            np.asarray(x)
    finally:
        netcl.config.update("jax_transfer_guard", None)
    np.asarray(x)
    seen = []
    with netcl.transfer_guard("disallow"):       # thread-local, as JAX's blocks
        t = threading.Thread(target=lambda: seen.append(np.asarray(x).tolist()))
        t.start()
        t.join()
    assert seen == [[1.0, 1.0]]
    for bad in (lambda: netcl.transfer_guard("forbid").__enter__(),
                lambda: netcl.config.update("jax_transfer_guard_host_to_device", "no")):
        with pytest.raises(ValueError, match="transfer guard level must be one of 'allow'"):
            bad()
    with pytest.raises(ValueError):
        jax.transfer_guard("forbid").__enter__()
    from netcl.core import config as cfg
    assert cfg.GUARD_ON is False                 # the hot paths' one check is off again


# ---- small names ---------------------------------------------------------------------------

def test_host_aliases_and_shard_and_single_device_sharding():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = (netcl.host_count(), netcl.host_id(), netcl.host_ids())
        want = (jax.host_count(), jax.host_id(), jax.host_ids())
    assert got == want == (1, 0, [0])
    assert [x.category for x in w] == [UserWarning] * 6
    assert "process_count" in str(w[0].message)
    x = jnp.arange(3.0)
    shard = x.addressable_shards[0]
    assert isinstance(shard, netcl.Shard) and shard.data is x
    dev = netcl.devices()[0]
    s = netcl.sharding.make_single_device_sharding(dev)
    assert s == netcl.sharding.SingleDeviceSharding(dev) and s.device is dev
    assert netcl.device_put(x, s).sharding == s
    with pytest.raises(TypeError, match="make_single_device_sharding: device must be a "
                                        "netcl Device, got str"):
        netcl.sharding.make_single_device_sharding("cpu:0")
