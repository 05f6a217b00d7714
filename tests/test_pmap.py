"""pmap over several PoCL devices (NETCL_CPU_DEVICES must be set before PyOpenCL loads, so
each test runs its program in a subprocess): shards, collectives, gradients, agreement with
vmap over a named axis and with single-device training, and bad inputs. The sharded-array
helpers and the errors that need no second device run here too."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp

ON_NUMPY = netcl.default_device().is_numpy
multi = pytest.mark.skipif(ON_NUMPY, reason="several devices need OpenCL (PoCL)")

PRELUDE = """
import numpy as np
import netcl, netcl.numpy as jnp
from netcl import lax
def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)
"""


# A GPU host has as many devices as GPUs whatever NETCL_CPU_DEVICES says: a test asking for
# more skips there (on CPUs, as in CI, NETCL_CPU_DEVICES always provides them: no skip).
FEWER_GPUS = """
if netcl.device_count() < {n} and netcl.default_device().kind != "cpu":
    print("SKIP: {n} devices asked, the host has", netcl.device_count(), "GPUs")
    raise SystemExit(0)
"""


def run_on(n_devices, code, timeout=240):
    env = dict(os.environ, NETCL_CPU_DEVICES=str(n_devices))
    env.pop("POCL_DEVICES", None)
    r = subprocess.run([sys.executable, "-c", PRELUDE + FEWER_GPUS.format(n=n_devices) +
                        textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-5000:]
    if r.stdout.startswith("SKIP: "):
        pytest.skip(r.stdout.strip()[6:])
    return r.stdout


@multi
def test_shards_stay_on_their_devices_and_collectives_agree_with_vmap():
    run_on(2, """
    devs = netcl.local_devices()[:2]     # (a host with more GPUs than asked for: the first 2)
    assert len(devs) == 2 and netcl.device_count() >= 2
    x = np.arange(2 * 5, dtype=np.float32).reshape(2, 5)

    f = netcl.pmap(lambda v: v * 2.0 + 1.0)
    out = f(x)
    assert isinstance(out, netcl.ShardedArray) and out.shape == (2, 5)
    assert [s.device for s in out.shards] == devs and out.devices() == set(devs)
    assert out[1] is out.shards[1]
    close(out, x * 2 + 1)
    again = netcl.pmap(lambda v: v)(out)            # passed back: no copy, no move
    assert all(a is b for a, b in zip(again.shards, out.shards))
    close(jnp.sum(out), (x * 2 + 1).sum())           # eager use gathers

    def body(v):
        s = lax.psum(v, "i")
        m = lax.pmean(v, "i")
        g = lax.all_gather(v, "i")
        p = lax.ppermute(v, "i", [(0, 1), (1, 0)])
        i = lax.axis_index("i")
        return s, m, g, p, v * i, lax.pmax(v, "i")
    got = netcl.pmap(body, axis_name="i")(x)
    want = netcl.vmap(body, axis_name="i")(jnp.asarray(x))
    for a, b in zip(got, want):
        close(a, b)
    close(got[0], np.broadcast_to(x.sum(0), x.shape))
    close(got[3], x[::-1])

    # operand-less primitives (iota) run on the default device of the call: each device
    # keeps its own launcher, also inside a plan compiled for another device
    with netcl.default_device(devs[1]):
        assert jnp.arange(3).device is devs[1]
    assert jnp.arange(3).device is devs[0]
    g = netcl.jit(lambda v: v + jnp.arange(5.0))
    for _ in range(2):
        y = g(netcl.device_put(jnp.asarray(x[0]), devs[1]))
        assert y.device is devs[1]
        close(y, x[0] + np.arange(5))
    """)


@multi
def test_transforms_inside_pmap():
    """pmap(jit(f)), jit and vmap (with its own axis name) inside the mapped function, and
    grad through a psum, against vmap over a named axis or NumPy."""
    run_on(2, """
    x = np.arange(2 * 6, dtype=np.float32).reshape(2, 3, 2) / 10
    body = lambda v: lax.psum(jnp.sin(v), "i") * v
    ref = np.sin(x).sum(0) * x
    close(netcl.pmap(netcl.jit(body), axis_name="i")(x), ref)
    close(netcl.pmap(lambda v: netcl.jit(body)(v) + 1.0, axis_name="i")(x), ref + 1)
    both = netcl.pmap(lambda v: netcl.vmap(lambda r: lax.psum(r, "i") + lax.psum(r, "j"),
                                           axis_name="j")(v), axis_name="i")
    close(both(x), x.sum(0) + x.sum(1, keepdims=True))
    loss = lambda v: jnp.sum(lax.psum(v * v, "i") * v)
    close(netcl.pmap(netcl.grad(loss), axis_name="i")(x),
          netcl.vmap(netcl.grad(loss), axis_name="i")(jnp.asarray(x)))
    """)


@multi
def test_data_parallel_training_matches_one_device():
    """A pmapped sgd step on 2 devices (replicated parameters, sharded batch, pmean of the
    gradients) gives the parameters of the same steps on the whole batch on one device."""
    run_on(2, """
    from netcl import optim, random, stax
    init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    _, params = init(random.PRNGKey(0), (-1, 4))
    opt = optim.sgd(0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((3, 8, 4)).astype(np.float32)
    ys = rng.integers(0, 3, (3, 8)).astype(np.int32)

    def loss(p, x, y):      # (one_hot's iota has no array input: it runs on each device)
        return -jnp.mean(jnp.sum(apply(p, x) * netcl.nn.one_hot(y, 3), axis=-1))

    def step(p, s, x, y, mean=lambda a: lax.pmean(a, "batch")):
        l, g = netcl.value_and_grad(loss)(p, x, y)
        g = netcl.tree_util.tree_map(mean, g)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s, mean(l)
    pstep = netcl.pmap(step, axis_name="batch", donate_argnums=(0, 1))
    jstep = netcl.jit(lambda p, s, x, y: step(p, s, x, y, mean=lambda a: a))
    devs = netcl.local_devices()[:2]
    p2 = netcl.device_put_replicated(params, devs)
    s2 = netcl.device_put_replicated(opt.init(params), devs)
    p1, s1 = params, opt.init(params)
    for k in range(3):
        old = p2
        p2, s2, l2 = pstep(p2, s2, xs[k].reshape(2, 4, 4), ys[k].reshape(2, 4))
        assert netcl.tree_util.tree_leaves(old)[0].is_deleted()     # donated
        p1, s1, l1 = jstep(p1, s1, jnp.asarray(xs[k]), jnp.asarray(ys[k]))
        close(l2[0], l1, 1e-5)
    for a, b in zip(netcl.tree_util.tree_leaves(p2), netcl.tree_util.tree_leaves(p1)):
        close(a[0], b, 1e-5)
        close(a[1], b, 1e-5)

    # a DataLoader sharding its batches over the devices feeds pmap where they are
    loader = netcl.data.DataLoader((xs.reshape(-1, 4), ys.reshape(-1)), 8, devices=devs)
    for k, (xb, yb) in enumerate(loader):
        assert [s.device for s in xb.shards] == devs and yb.shape == (2, 4)
        p2, s2, l2 = pstep(p2, s2, xb, yb)
        p1, s1, l1 = jstep(p1, s1, jnp.asarray(xs[k]), jnp.asarray(ys[k]))
        close(l2[1], l1, 1e-5)
    """)


@multi
def test_four_devices_rings_scatter_and_broadcast_arguments():
    run_on(4, """
    x = np.arange(4 * 8, dtype=np.float32).reshape(4, 8) - 10
    w = np.float32(3.0)

    def body(v, w, scale):
        ring = lax.ppermute(v, "d", [(i, (i + 1) % 4) for i in range(4)])
        return (ring, lax.psum_scatter(v, "d", tiled=True) * w * scale,
                lax.all_gather(v, "d", tiled=True), lax.all_to_all(
                    v.reshape(4, 2), "d", 0, 0), lax.pmin(v, "d"))
    f = netcl.pmap(body, axis_name="d", in_axes=(0, None, None),
                   static_broadcasted_argnums=2)
    got = f(x, w, 2)
    want = netcl.vmap(lambda v: body(v, w, 2), axis_name="d")(jnp.asarray(x))
    for a, b in zip(got, want):
        close(a, b)
    close(got[0], np.roll(x, 1, axis=0))
    n = netcl.pmap(lambda v: v.sum(), out_axes=None)(np.ones((4, 3), np.float32))
    assert isinstance(n, netcl.Array) and float(n) == 3.0
    try:
        netcl.pmap(lambda v: v)(np.ones((5, 2), np.float32))
    except ValueError as e:
        assert "requires 5 logical devices, but only 4" in str(e), e
    else:
        raise AssertionError("5 shards on 4 devices")
    """)


@multi
def test_exchange_on_three_devices_odd_sizes_buckets_and_back_to_back_calls():
    """The device path of the collectives (pmap_exchange) against NumPy on 3 devices: sizes
    that do not split evenly (or have fewer elements than devices, or none), several psums
    of two dtypes bucketed in one step, pmax with a NaN, float16, all_gather along an inner
    axis, a partial ppermute; then calls enqueued back to back without waiting, each on the
    last one's outputs, while the pinned buffers are reused (and grow)."""
    run_on(3, """
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 37)).astype(np.float32)
    b = rng.standard_normal((3, 2, 5)).astype(np.float32)
    c = rng.integers(-50, 50, (3, 7)).astype(np.int32)
    h = rng.standard_normal((3, 4)).astype(np.float16)
    one = rng.standard_normal((3, 1)).astype(np.float32)
    empty = np.zeros((3, 0), np.float32)
    a[1, 3] = np.nan

    def body(a, b, c, h, one, empty):
        return (lax.psum(a, "i"), lax.psum(b, "i"), lax.psum(c, "i"), lax.pmax(a, "i"),
                lax.pmin(c, "i"), lax.psum(h, "i"), lax.psum(one, "i"), lax.psum(empty, "i"),
                lax.all_gather(b, "i", axis=1), lax.all_gather(b, "i", axis=1, tiled=True),
                lax.ppermute(c, "i", [(0, 2), (2, 1)]))
    got = netcl.pmap(body, axis_name="i")(a, b, c, h, one, empty)
    tile = lambda v: np.broadcast_to(v, (3,) + v.shape)
    want = (tile(a.sum(0)), tile(b.sum(0)), tile(c.sum(0)), tile(np.max(a, 0)),
            tile(c.min(0)), tile(h.astype(np.float32).sum(0)), tile(one.sum(0)),
            tile(empty.sum(0)), tile(np.stack(list(b), 1)), tile(np.concatenate(list(b), 1)),
            np.stack([np.zeros(7, np.int32), c[2], c[0]]))
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, (k, g.shape, w.shape)
        close(np.asarray(g, np.float32), np.asarray(w, np.float32), 2e-3 if k == 5 else 1e-5)
    assert np.isnan(np.asarray(got[3])[:, 3]).all() and got[2].dtype == np.int32
    many = netcl.pmap(lambda v: lax.psum([v[:k + 1] * k for k in range(40)], "i"),
                      axis_name="i")(a)             # more outputs than one kernel writes
    for k, g in enumerate(many):
        close(g, tile(a[:, :k + 1].sum(0) * k))

    # back to back: x <- x / psum(x) * 3 + ppermute(x); sizes grow the pinned buffers, and
    # past pmap_exchange.ONE_ROUND_BYTES the all-reduce takes its two rounds
    step = netcl.pmap(lambda x: x / lax.psum(x, "i") * 3.0 + lax.ppermute(
        x, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")
    from netcl.transforms.pmap_exchange import ONE_ROUND_BYTES
    for size in (5, 100_003, ONE_ROUND_BYTES // 4 + 1001):
        x = rng.uniform(1, 2, (3, size)).astype(np.float32)
        ref, out = x, netcl.device_put_sharded([jnp.asarray(v) for v in x],
                                               netcl.local_devices()[:3])
        for _ in range(4):
            out = step(out)
            ref = ref / ref.sum(0) * 3.0 + np.roll(ref, 1, axis=0)
        close(out, ref, 1e-4)
    """)


@multi
def test_64_bit_integers_through_the_collectives():
    """int64 and uint64 (x64, as the suite runs) through the device path's all-reduce
    (a bucket of two), pmax/pmin, all_gather and ppermute: exact past 2**32."""
    run_on(2, """
    assert netcl.config.enable_x64
    x = np.array([[2**40 + 1, -5, 2**62], [3, 2**40, -2**62]], dtype=np.int64)
    u = x.astype(np.uint64)
    body = lambda a, b: (lax.psum(a, "i"), lax.pmax(a, "i"), lax.pmin(b, "i"),
                         lax.all_gather(a, "i"), lax.ppermute(a, "i", [(0, 1), (1, 0)]),
                         lax.psum((a, a * 2), "i"))
    got = netcl.pmap(body, axis_name="i")(x, u)
    want = (x.sum(0), x.max(0), u.min(0), x, x[::-1], (x.sum(0), 2 * x.sum(0)))
    for g, w in zip(netcl.tree_util.tree_leaves(got), netcl.tree_util.tree_leaves(want)):
        g = np.asarray(g)
        w = np.broadcast_to(w, g.shape) if w.shape != g.shape else w
        assert g.dtype == w.dtype and g.tolist() == w.tolist(), (g, w)
    """)


@multi
def test_grad_and_jvp_of_a_pmapped_function():
    """grad and jvp outside pmap (pmap_call.py): mapped and broadcast arguments, another
    mapped axis, a collective inside, checked against float64 finite differences and
    closed forms; the gradient of a broadcast argument is the sum over the devices."""
    run_on(2, """
    from netcl.test_util import check_grads
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-1, 1, (2, 3)))                  # float64 (x64 in tests)
    w = jnp.asarray(np.float64(0.7))
    h = netcl.pmap(lambda w, x: jnp.sin(w * x), in_axes=(None, 0))
    loss = lambda w, x: jnp.sum(h(w, x) ** 2)
    check_grads(loss, (w, x), order=1)
    gw, gx = netcl.grad(loss, argnums=(0, 1))(w, x)
    xh = np.asarray(x)
    close(gw, np.sum(2 * np.sin(0.7 * xh) * np.cos(0.7 * xh) * xh), 1e-9)
    close(gx, 2 * np.sin(0.7 * xh) * np.cos(0.7 * xh) * 0.7, 1e-9)
    assert isinstance(gx, netcl.Array) and gx.shape == (2, 3)
    # a collective inside, and a mapped axis other than 0
    k = netcl.pmap(lambda x: x * lax.psum(x, "i"), axis_name="i", in_axes=1)
    xt = jnp.asarray(rng.uniform(-1, 1, (3, 2)))
    check_grads(lambda x: jnp.sum(k(x) ** 2), (xt,), order=1)
    close(netcl.grad(lambda x: jnp.sum(k(x)))(xt),
          np.broadcast_to(2 * np.asarray(xt).sum(1, keepdims=True), (3, 2)), 1e-9)
    # forward mode, and the outputs' structure (a dict, an unmapped output)
    m = netcl.pmap(lambda x: {"s": jnp.sin(x), "t": lax.psum(x, "i")}, axis_name="i",
                   out_axes={"s": 0, "t": None})
    out, t = netcl.jvp(m, (x,), (jnp.ones_like(x),))
    close(t["s"], np.cos(xh), 1e-9)
    close(t["t"], np.full(3, 2.0), 1e-9)
    # a 1-d argument maps to 0-d shards
    out = netcl.pmap(lambda v: v * 2)(jnp.arange(2.0))
    assert out.shards[0].shape == () and out.shape == (2,)
    close(out, [0.0, 2.0])
    # second order: grad of grad stays a pmap
    close(netcl.grad(lambda w: netcl.grad(lambda w: jnp.sum(h(w, x)))(w))(w),
          -np.sum(xh * xh * np.sin(0.7 * xh)), 1e-9)
    """)


@multi
def test_vmap_of_a_pmapped_function():
    """vmap outside pmap (a pmap of vmap, pmap_call.py): batched and unbatched, mapped and
    broadcast arguments, batch axes other than 0, a mapped output axis other than 0, an
    unmapped output, a collective inside; against the same sums in NumPy."""
    run_on(2, """
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 2, 4)).astype(np.float32)     # batch 3, devices 2
    w = rng.standard_normal(4).astype(np.float32)
    f = netcl.pmap(lambda v, w: lax.psum(v * w, "i") + v, axis_name="i", in_axes=(0, None))
    want = np.stack([(xb * w).sum(0, keepdims=True) + xb for xb in x])
    close(netcl.vmap(f, in_axes=(0, None))(x, w), want)
    close(netcl.vmap(f, in_axes=(1, None))(x.transpose(1, 0, 2), w), want)
    ws = rng.standard_normal((3, 4)).astype(np.float32)          # w batched too
    close(netcl.vmap(f)(x, ws),
          np.stack([(xb * wb).sum(0, keepdims=True) + xb for xb, wb in zip(x, ws)]))
    close(netcl.vmap(f, in_axes=(None, 0))(x[0], ws),            # only w batched
          np.stack([(x[0] * wb).sum(0, keepdims=True) + x[0] for wb in ws]))
    g = netcl.pmap(lambda v: (v * 2, lax.psum(v, "i")), axis_name="i", in_axes=1,
                   out_axes=(1, None))
    y = rng.standard_normal((3, 4, 2)).astype(np.float32)
    a, b = netcl.vmap(g)(y)
    close(a, y * 2)
    close(b, y.sum(2))
    assert a.shape == (3, 4, 2) and b.shape == (3, 4)
    """)


def test_bad_inputs_name_pmap_and_the_sizes():
    with pytest.raises(TypeError, match="pmap: expected a function"):
        netcl.pmap(3)
    with pytest.raises(TypeError, match="static_broadcasted_argnums"):
        netcl.pmap(lambda x: x, static_broadcasted_argnums=("a",))
    f = netcl.pmap(lambda x, y: x + y)
    with pytest.raises(ValueError, match=r"inconsistent sizes .* size 1 .* size 2"):
        f(np.ones((1, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="in_axes=2 is out of range .* shape \\(1, 3\\)"):
        netcl.pmap(lambda x: x, in_axes=2)(np.ones((1, 3), np.float32))
    with pytest.raises(ValueError, match="not hashable"):
        netcl.pmap(lambda x, s: x, static_broadcasted_argnums=1)(np.ones((1, 2)), [1])
    with pytest.raises(NameError, match="unbound axis name: j"):
        netcl.pmap(lambda x: netcl.lax.psum(x, "j"), axis_name="i")(np.ones((1, 2)))
    with pytest.raises(NotImplementedError, match="under staging .* inside the pmapped"):
        netcl.jit(lambda x: netcl.pmap(jnp.sin)(x))(jnp.ones((1, 2)))


def test_one_device_pmap_and_sharded_helpers():
    dev = netcl.default_device()
    x = np.arange(6, dtype=np.float32).reshape(1, 6)
    out = netcl.pmap(lambda v: netcl.lax.psum(v * v, "i"), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(out), x * x)
    xs = netcl.device_put_sharded([{"a": jnp.ones(2)}], [dev])
    assert isinstance(xs["a"], netcl.ShardedArray) and xs["a"].shape == (1, 2)
    r = netcl.device_put_replicated(jnp.arange(3.0), [dev])
    assert r.sharding.devices == (dev,) and r.sharding.shard_shape == (3,)
    np.testing.assert_allclose(np.asarray(r + 1.0), [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="expected a list of 1 shards"):
        netcl.device_put_sharded([jnp.ones(2), jnp.ones(2)], [dev])
