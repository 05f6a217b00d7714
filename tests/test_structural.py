"""Structural primitives (iota, concatenate, pad, dynamic_slice, dynamic_update_slice, gather,
the scatter family) against their NumPy references and independent oracles, their derivative
and batching rules, and the joining functions of netcl.numpy (concatenate, stack, split, pad,
tile, repeat, roll, append)."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.core.eval import to_array
from netcl.primitives import structural as S
from util import assert_close, layouts, rand, shapes, to_device

SETTINGS = settings(max_examples=25, deadline=None)
DTYPES = st.sampled_from(["float32", "int32", "bool"])


def _host(dt, rng, shape):
    return np.asarray(rand(rng, shape, dt, -5, 5))


def _idx(host):
    return to_array(np.asarray(host, dtype=np.int32))


# ---- iota ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "float16"])
@pytest.mark.parametrize("n", [0, 1, 7, 300])
def test_iota(dtype, n):
    assert_close(S.iota(dtype, n), np.arange(n, dtype=dtype), dtype)


def test_iota_bad_input():
    with pytest.raises(TypeError, match="iota"):
        S.iota(np.bool_, 3)
    with pytest.raises(ValueError, match="iota"):
        S.iota(np.int32, -1)
    with pytest.raises(TypeError, match="iota"):
        S.iota(np.int32, 2.5)


# ---- concatenate -----------------------------------------------------------------------------

@SETTINGS
@given(base=shapes(1, 3, 0, 4), dim=st.integers(0, 2), sizes=st.lists(st.integers(0, 3), min_size=1,
       max_size=3), dt=DTYPES, lays=st.lists(layouts(), min_size=3, max_size=3),
       seed=st.integers(0, 2**16))
def test_concatenate_matches_numpy(base, dim, sizes, dt, lays, seed):
    dim %= len(base)
    rng = np.random.default_rng(seed)
    hosts = []
    for k in sizes:
        shape = list(base)
        shape[dim] = k
        hosts.append(_host(dt, rng, tuple(shape)))
    got = S.concatenate([to_device(h, lay) for h, lay in zip(hosts, lays)], dim)
    want = np.concatenate(hosts, axis=dim)
    assert_close(got, want, dt)
    assert_close(S.concatenate_p.reference(*hosts, dimension=dim), want, dt)


def test_concatenate_bad_input():
    a, b = jnp.zeros((2, 3), jnp.float32), jnp.zeros((2, 4), jnp.float32)
    with pytest.raises(ValueError, match=r"concatenate.*\(2, 3\).*\(2, 4\)"):
        S.concatenate([a, b], 0)
    with pytest.raises(TypeError, match="concatenate.*float32.*int32"):
        S.concatenate([a, jnp.zeros((2, 3), jnp.int32)], 0)
    with pytest.raises(ValueError, match="concatenate"):
        S.concatenate([a, a], 2)
    with pytest.raises(ValueError, match="concatenate"):
        S.concatenate([], 0)


# ---- pad -------------------------------------------------------------------------------------

def _pad_oracle(x, value, config):
    """lax.pad semantics written out element by element."""
    out_shape = tuple(lo + hi + n + max(0, n - 1) * it for n, (lo, hi, it) in zip(x.shape, config))
    out = np.full(out_shape, value, x.dtype)
    for idx in np.ndindex(*x.shape):
        pos = tuple(lo + i * (it + 1) for i, (lo, _, it) in zip(idx, config))
        if all(0 <= p < s for p, s in zip(pos, out_shape)):
            out[pos] = x[idx]
    return out


@SETTINGS
@given(shape=shapes(0, 3, 0, 4), cfg=st.lists(st.tuples(st.integers(-2, 3), st.integers(-2, 3),
       st.integers(0, 2)), min_size=3, max_size=3), dt=DTYPES, layout=layouts(),
       seed=st.integers(0, 2**16))
def test_pad_matches_oracle(shape, cfg, dt, layout, seed):
    config = tuple(cfg[:len(shape)])
    assume(all(lo + hi + n + max(0, n - 1) * it >= 0 for n, (lo, hi, it) in zip(shape, config)))
    rng = np.random.default_rng(seed)
    x = _host(dt, rng, shape)
    value = np.asarray(_host(dt, rng, ()))
    want = _pad_oracle(x, value, config)
    got = S.pad(to_device(x, layout), to_device(value), config)
    assert_close(got, want, dt)
    assert_close(S.pad_p.reference(x, value, padding_config=config), want, dt)


def test_pad_bad_input():
    x = jnp.zeros((2, 3), jnp.float32)
    with pytest.raises(ValueError, match="pad.*negative dimension"):
        S.pad(x, 0.0, ((0, 0, 0), (-4, 0, 0)))
    with pytest.raises(ValueError, match="pad.*interior"):
        S.pad(x, 0.0, ((0, 0, -1), (0, 0, 0)))
    with pytest.raises(ValueError, match="pad.*one"):
        S.pad(x, 0.0, ((0, 0, 0),))
    with pytest.raises(TypeError, match="pad.*int32.*float32"):
        S.pad(x, jnp.zeros((), jnp.int32), ((1, 0, 0), (0, 0, 0)))
    with pytest.raises(ValueError, match="pad.*scalar"):
        S.pad(x, jnp.zeros(2), ((1, 0, 0), (0, 0, 0)))


# ---- dynamic_slice / dynamic_update_slice ----------------------------------------------------

@SETTINGS
@given(shape=shapes(0, 3, 0, 5), data=st.data(), dt=DTYPES, layout=layouts(),
       seed=st.integers(0, 2**16))
def test_dynamic_slice_and_update(shape, data, dt, layout, seed):
    rng = np.random.default_rng(seed)
    sizes = tuple(data.draw(st.integers(0, n)) for n in shape)
    starts = [data.draw(st.integers(-3, n + 3)) for n in shape]
    x = _host(dt, rng, shape)
    clamped = [min(max(s, 0), n - k) for s, n, k in zip(starts, shape, sizes)]
    box = tuple(slice(c, c + k) for c, k in zip(clamped, sizes))
    dev_starts = [s if i % 2 else _idx(s) for i, s in enumerate(starts)]  # ints and arrays
    got = S.dynamic_slice(to_device(x, layout), dev_starts, sizes)
    assert_close(got, x[box], dt)
    u = _host(dt, rng, sizes)
    want = x.copy()
    want[box] = u
    got = S.dynamic_update_slice(to_device(x, layout), to_device(u, layout), dev_starts)
    assert_close(got, want, dt)
    s_host = [np.int32(s) for s in starts]
    assert_close(S.dynamic_slice_p.reference(x, *s_host, slice_sizes=sizes), x[box], dt)
    assert_close(S.dynamic_update_slice_p.reference(x, u, *s_host), want, dt)


def test_dynamic_slice_bad_input():
    x = jnp.zeros((3, 4), jnp.float32)
    with pytest.raises(ValueError, match="dynamic_slice.*2 start"):
        S.dynamic_slice(x, (1,), (1, 1))
    with pytest.raises(ValueError, match="dynamic_slice.*slice_sizes"):
        S.dynamic_slice(x, (0, 0), (4, 1))
    with pytest.raises(TypeError, match="dynamic_slice.*integers"):
        S.dynamic_slice(x, (jnp.zeros(()), 0), (1, 1))
    with pytest.raises(TypeError, match="dynamic_slice.*int32"):
        S.dynamic_slice_p.bind(x, jnp.zeros((), jnp.uint32), _idx(0), slice_sizes=(1, 1))
    with pytest.raises(ValueError, match=r"dynamic_update_slice.*\(4, 1\).*\(3, 4\)"):
        S.dynamic_update_slice(x, jnp.zeros((4, 1), jnp.float32), (0, 0))
    with pytest.raises(TypeError, match="dynamic_update_slice.*int32.*float32"):
        S.dynamic_update_slice(x, jnp.zeros((1, 1), jnp.int32), (0, 0))


# ---- gather / scatter ------------------------------------------------------------------------

@st.composite
def gather_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(rank))
    axis = draw(st.integers(0, rank - 1))
    nb = draw(st.integers(0, axis))
    ishape = tuple(shape[:nb]) + tuple(draw(st.integers(0, 3))
                                       for _ in range(draw(st.integers(0, 2))))
    return shape, axis, nb, ishape


def _gather_oracle(x, idx, axis, nb):
    n = x.shape[axis]
    out_shape = x.shape[:axis] + idx.shape[nb:] + x.shape[axis + 1:]
    out = np.zeros(out_shape, x.dtype)
    ni = idx.ndim - nb
    for o in np.ndindex(*out_shape):
        b, a, i, c = o[:nb], o[nb:axis], o[axis:axis + ni], o[axis + ni:]
        j = min(max(int(idx[b + i]), 0), n - 1)
        out[o] = x[b + a + (j,) + c]
    return out


def _scatter_oracle(mode, x, idx, upd, axis, nb):
    out = x.astype(np.float64 if x.dtype.kind == "f" else x.dtype).copy()
    n = x.shape[axis]
    ni = idx.ndim - nb
    for o in np.ndindex(*upd.shape):  # row-major order: index order within each row
        b, a, i, c = o[:nb], o[nb:axis], o[axis:axis + ni], o[axis + ni:]
        j = min(max(int(idx[b + i]), 0), n - 1)
        t = b + a + (j,) + c
        v = upd[o]
        if mode == "add":
            out[t] = (out[t] | v) if x.dtype == np.bool_ else out[t] + v
        elif mode == "mul":
            out[t] = (out[t] & v) if x.dtype == np.bool_ else out[t] * v
        elif mode == "min":
            out[t] = min(out[t], v)
        elif mode == "max":
            out[t] = max(out[t], v)
        else:
            out[t] = v
    return out.astype(x.dtype)


@SETTINGS
@given(case=gather_cases(), dt=DTYPES, layout=layouts(), seed=st.integers(0, 2**16))
def test_gather_matches_oracle(case, dt, layout, seed):
    shape, axis, nb, ishape = case
    out_shape = shape[:axis] + ishape[nb:] + shape[axis + 1:]
    assume(shape[axis] > 0 or np.prod(out_shape) == 0)
    rng = np.random.default_rng(seed)
    x = _host(dt, rng, shape)
    idx = rng.integers(-2, shape[axis] + 2, size=ishape).astype(np.int32)  # some out of range
    want = _gather_oracle(x, idx, axis, nb)
    got = S.gather(to_device(x, layout), to_device(idx, layout), axis, batch_dims=nb)
    assert_close(got, want, dt)
    assert_close(S.gather_p.reference(x, idx, axis=axis, batch_dims=nb), want, dt)


SCATTERS = {"add": S.scatter_add, "set": S.scatter, "mul": S.scatter_mul, "min": S.scatter_min,
            "max": S.scatter_max}


@SETTINGS
@given(case=gather_cases(), mode=st.sampled_from(sorted(SCATTERS)), dt=DTYPES,
       layout=layouts(), seed=st.integers(0, 2**16))
def test_scatter_matches_oracle(case, mode, dt, layout, seed):
    shape, axis, nb, ishape = case
    upd_shape = shape[:axis] + ishape[nb:] + shape[axis + 1:]
    assume(shape[axis] > 0 or np.prod(upd_shape) == 0)
    rng = np.random.default_rng(seed)
    x = _host(dt, rng, shape)
    idx = rng.integers(-1, max(shape[axis], 1) + 1, size=ishape).astype(np.int32)  # duplicates
    upd = _host(dt, rng, upd_shape)
    want = _scatter_oracle(mode, x, idx, upd, axis, nb)
    got = SCATTERS[mode](to_device(x, layout), to_device(idx, layout), to_device(upd, layout),
                         axis, batch_dims=nb)
    assert_close(got, want, dt)
    prim = {"add": S.scatter_add_p, "set": S.scatter_p, "mul": S.scatter_mul_p,
            "min": S.scatter_min_p, "max": S.scatter_max_p}[mode]
    assert_close(prim.reference(x, idx, upd, axis=axis, batch_dims=nb), want, dt)


def test_scatter_add_is_deterministic():
    rng = np.random.default_rng(0)
    x = np.zeros((3, 8), np.float32)
    idx = rng.integers(0, 3, 2000).astype(np.int32)
    upd = (rng.standard_normal((2000, 8)) * 1e4).astype(np.float32)
    outs = [np.asarray(S.scatter_add(jnp.asarray(x), _idx(idx), jnp.asarray(upd), 0))
            for _ in range(3)]
    assert all((o == outs[0]).all() for o in outs)  # bit-identical
    seq = x.copy()
    for i, j in enumerate(idx):  # accumulation in index order, in float32
        seq[j] += upd[i]
    np.testing.assert_array_equal(outs[0], seq)


def test_scatter_float_special_values():
    x = jnp.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    upd = jnp.asarray(np.array([np.nan, -np.inf, 5.0], np.float32))
    idx = _idx([0, 1, 1])
    assert np.isnan(np.asarray(S.scatter_max(x, idx, upd, 0))[0])
    assert_close(S.scatter_min(x, idx, upd, 0), np.array([np.nan, -np.inf, 3.0], np.float32))
    assert_close(S.scatter(x, idx, upd, 0), np.array([np.nan, 5.0, 3.0], np.float32))


def test_gather_scatter_bad_input():
    x = jnp.zeros((3, 4), jnp.float32)
    with pytest.raises(TypeError, match="gather.*indices must be int"):
        S.gather(x, jnp.zeros(2), 0)
    with pytest.raises(TypeError, match="gather: indices must be int32, got float32"):
        S.gather_p.bind(x, jnp.zeros(2, jnp.float32), axis=0, batch_dims=0)
    with pytest.raises(ValueError, match="gather.*batch_dims"):
        S.gather(x, _idx(np.zeros((4, 2))), 1, batch_dims=1)
    with pytest.raises(ValueError, match="gather.*axis"):
        S.gather(x, _idx([0]), 2)
    with pytest.raises(ValueError, match="gather.*size 0"):
        S.gather(jnp.zeros((0, 2)), _idx([0]), 0)
    with pytest.raises(ValueError, match=r"scatter_add: updates must have shape \(2, 4\)"):
        S.scatter_add(x, _idx([0, 1]), jnp.zeros((2, 3), jnp.float32), 0)
    with pytest.raises(TypeError, match="scatter.*int32.*float32"):
        S.scatter(x, _idx([0]), jnp.zeros((1, 4), jnp.int32), 0)


@pytest.mark.parametrize("dtype", ["float16", "uint32", "float64"])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(0)
    h = rand(rng, (3, 4), dtype, 0, 9)
    x = jnp.asarray(h)
    idx = np.array([2, 0, 2], np.int32)
    assert_close(S.concatenate([x, x[:1]], 0), np.concatenate([h, h[:1]]), dtype)
    assert_close(S.pad(x, h[0, 0], ((1, -1, 1), (0, 2, 0))),
                 _pad_oracle(h, h[0, 0], ((1, -1, 1), (0, 2, 0))), dtype)
    assert_close(S.gather(x, _idx(idx), 1), h[:, idx], dtype)
    assert_close(S.scatter_add(x, _idx(idx), x[idx], 0),
                 _scatter_oracle("add", h, idx, h[idx], 0, 0), dtype)
    assert_close(S.dynamic_update_slice(x, x[:2, :2], (2, 1)),
                 S.dynamic_update_slice_p.reference(h, h[:2, :2], np.int32(2), np.int32(1)),
                 dtype)


# ---- derivatives (float64) -------------------------------------------------------------------

def _f64(rng, *shape):
    return jnp.asarray(rng.standard_normal(shape))


def test_structural_grads():
    from netcl.test_util import check_grads
    rng = np.random.default_rng(0)
    x, y = _f64(rng, 3, 4), _f64(rng, 2, 4)
    idx = _idx([[2, 0, 2], [1, 1, 0]])
    check_grads(lambda a, b: S.concatenate([a, b, a], 0), (x, y), order=2)
    check_grads(lambda a, v: S.pad(a, v, ((1, -1, 1), (-2, 2, 0))), (x, _f64(rng)), order=2)
    check_grads(lambda a: S.dynamic_slice(a, (1, _idx(3)), (2, 2)), (x,), order=2)
    check_grads(lambda a, b: S.dynamic_update_slice(a, b, (_idx(2), -1)), (x, y[:, :2]),
                order=2)
    check_grads(lambda a: S.gather(a, idx, 1), (x,), order=2)
    check_grads(lambda a: S.gather(a, _idx([[3, 0], [1, 1], [2, 9]]), 1, batch_dims=1), (x,),
                order=2)
    u = _f64(rng, 2, 3, 4)
    check_grads(lambda a, b: S.scatter_add(a, idx, b, 0), (x, u), order=2)
    check_grads(lambda a, b: S.scatter(a, idx, b, 0), (x, u), order=2)
    check_grads(lambda a, b: S.scatter_mul(a, idx, b, 0), (x, u), order=2)
    check_grads(lambda a, b: S.scatter_max(a, idx, b, 0), (x, u), order=1)
    check_grads(lambda a, b: S.scatter_min(a, idx, b, 0), (x, u), order=1)


def test_joining_grads():
    from netcl.test_util import check_grads
    rng = np.random.default_rng(1)
    x, y = _f64(rng, 3, 4), _f64(rng, 3, 4)
    check_grads(lambda a, b: jnp.stack([a, b], 1), (x, y), order=2)
    check_grads(lambda a: jnp.pad(a, ((1, 2), (3, 0)), mode="reflect"), (x,), order=2)
    check_grads(lambda a: jnp.pad(a, 2, mode="wrap"), (x,), order=1)
    check_grads(lambda a: jnp.tile(a, (2, 1)), (x,), order=2)
    check_grads(lambda a: jnp.repeat(a, [1, 0, 3], axis=0), (x,), order=2)
    check_grads(lambda a: jnp.roll(a, _idx(-3), 1), (x,), order=2)


# ---- vmap ------------------------------------------------------------------------------------

def _check_vmap(f, args, axes):
    got = netcl.vmap(f, in_axes=axes)(*args)
    size = [a.shape[ax] for a, ax in zip(args, axes) if ax is not None][0]
    hosts = [np.asarray(a) for a in args]
    want = np.stack([np.asarray(f(*[jnp.asarray(np.take(h, b, ax)) if ax is not None else a
                                    for a, h, ax in zip(args, hosts, axes)]))
                     for b in range(size)])
    assert_close(got, want)


def test_vmap_structural():
    rng = np.random.default_rng(2)
    x = jnp.asarray(rng.standard_normal((3, 4, 5)).astype(np.float32))
    i1, i3 = _idx(rng.integers(0, 4, 2)), _idx(rng.integers(0, 4, (3, 2)))
    u = jnp.asarray(rng.standard_normal((3, 2, 5)).astype(np.float32))
    for axes in [(0, None), (2, None)]:
        _check_vmap(lambda a, i: S.gather(a, i, 0), (x, i1), axes)
    _check_vmap(lambda a, i: S.gather(a, i, 0), (x[0], i3), (None, 0))
    _check_vmap(lambda a, i: S.gather(a, i, 0), (x[:, 0], i3), (0, 0))
    for f in (S.scatter_add, S.scatter):
        _check_vmap(lambda a, i, v: f(a, i, v, 0), (x, i1, u), (0, None, 0))
        _check_vmap(lambda a, i, v: f(a, i, v, 0), (x, i3, u), (0, 0, 0))
        _check_vmap(lambda a, i, v: f(a, i, v, 0), (x[0], i3, u), (None, 0, 0))
    _check_vmap(lambda a, b: S.concatenate([a, b], 0), (x, jnp.transpose(x, (1, 0, 2))), (0, 1))
    _check_vmap(lambda a: S.pad(a, 1.0, ((1, -1, 1), (2, 0, 0))), (x,), (2,))
    _check_vmap(lambda a, v: S.pad(a, v, ((1, -1, 1), (2, 0, 0))),
                (x, jnp.asarray(np.arange(5, dtype=np.float32))), (2, 0))
    s = _idx([0, 3, -1])
    _check_vmap(lambda a, s: S.dynamic_slice(a, (s, 1), (2, 3)), (x, s), (0, 0))
    _check_vmap(lambda a: S.dynamic_slice(a, (1, 2), (2, 3)), (x,), (1,))
    up = jnp.asarray(rng.standard_normal((3, 2, 2)).astype(np.float32))
    _check_vmap(lambda a, u, s: S.dynamic_update_slice(a, u, (s, 3)), (x, up, s), (0, 0, 0))
    _check_vmap(lambda a, u, s: S.dynamic_update_slice(a, u, (s, 3)), (x[0], up, s),
                (None, 0, 0))
    _check_vmap(lambda a, u: S.dynamic_update_slice(a, u, (1, 3)), (x, up), (0, 0))


def test_vmap_of_grad_of_gather():
    rng = np.random.default_rng(3)
    table = jnp.asarray(rng.standard_normal((6, 3)))
    ids = _idx(rng.integers(0, 6, (4, 5)))
    from netcl.primitives.reductions import reduce_sum

    def loss(t, i):
        return reduce_sum(S.gather(t, i, 0) ** 2, (0, 1))
    g = netcl.vmap(netcl.grad(loss), (None, 0))(table, ids)
    want = np.zeros((4, 6, 3))
    t = np.asarray(table)
    for b, row in enumerate(np.asarray(ids)):
        np.add.at(want[b], row, 2 * t[row])
    assert_close(g, want)


# ---- netcl.numpy joining functions ----------------------------------------------------------

@SETTINGS
@given(shape=shapes(1, 3, 0, 4), n=st.integers(1, 3), axis=st.integers(-3, 3), dt=DTYPES,
       layout=layouts(), seed=st.integers(0, 2**16))
def test_stack_concatenate(shape, n, axis, dt, layout, seed):
    rng = np.random.default_rng(seed)
    hosts = [_host(dt, rng, shape) for _ in range(n)]
    devs = [to_device(h, layout) for h in hosts]
    ax = axis % (len(shape) + 1) - (len(shape) + 1) * (axis < 0)
    assert_close(jnp.stack(devs, ax), np.stack(hosts, ax), dt)
    ax = axis % len(shape)
    assert_close(jnp.concatenate(devs, ax), np.concatenate(hosts, ax), dt)
    assert_close(jnp.concatenate(devs, axis=None), np.concatenate(hosts, axis=None), dt)
    for f in ("hstack", "vstack", "dstack", "column_stack"):
        if f == "column_stack" and len(shape) > 2:
            continue
        assert_close(getattr(jnp, f)(devs), getattr(np, f)(hosts), dt)


def test_concatenate_promotes_and_checks():
    got = jnp.concatenate([jnp.ones(2, jnp.int32), jnp.zeros(1, jnp.float32)])
    assert_close(got, np.array([1, 1, 0], np.float32), np.float32)
    with pytest.raises(ValueError, match=r"concatenate.*\(2, 3\).*\(2, 2\)"):
        jnp.concatenate([jnp.zeros((2, 3)), jnp.zeros((2, 2))])
    with pytest.raises(ValueError, match="concatenate.*same number of dimensions"):
        jnp.concatenate([jnp.zeros((2, 3)), jnp.zeros(3)])
    with pytest.raises(ValueError, match="concatenate.*zero-dimensional"):
        jnp.concatenate([jnp.zeros(()), jnp.zeros(())])
    with pytest.raises(ValueError, match="concatenate: axis=2 is out of bounds"):
        jnp.concatenate([jnp.zeros((2, 3))], axis=2)
    with pytest.raises(ValueError, match=r"stack.*\(3,\).*\(2,\)"):
        jnp.stack([jnp.zeros(3), jnp.zeros(2)])
    with pytest.raises(ValueError, match="stack: need at least one"):
        jnp.stack([])


@SETTINGS
@given(shape=shapes(1, 3, 0, 6), sections=st.integers(1, 4), axis=st.integers(0, 2),
       points=st.lists(st.integers(-7, 8), max_size=3), layout=layouts(),
       seed=st.integers(0, 2**16))
def test_split(shape, sections, axis, points, layout, seed):
    axis %= len(shape)
    h = rand(np.random.default_rng(seed), shape, np.float32)
    x = to_device(h, layout)
    for got, want in zip(jnp.array_split(x, sections, axis), np.array_split(h, sections, axis)):
        assert_close(got, want)
    for got, want in zip(jnp.split(x, points, axis), np.split(h, points, axis)):
        assert_close(got, want)
    if shape[axis] % sections == 0:
        assert len(jnp.split(x, sections, axis)) == sections
    else:
        with pytest.raises(ValueError, match="split.*equal division"):
            jnp.split(x, sections, axis)


@SETTINGS
@given(shape=shapes(1, 3, 1, 4), widths=st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)),
       min_size=3, max_size=3), mode=st.sampled_from(["constant", "edge", "reflect", "symmetric",
       "wrap"]), dt=DTYPES, layout=layouts(), seed=st.integers(0, 2**16))
def test_pad_modes(shape, widths, mode, dt, layout, seed):
    h = _host(dt, np.random.default_rng(seed), shape)
    w = widths[:len(shape)]
    got = jnp.pad(to_device(h, layout), w, mode=mode)
    assert_close(got, np.pad(h, w, mode=mode), dt)


def test_pad_constant_values_and_errors():
    h = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_close(jnp.pad(jnp.asarray(h), 1, constant_values=7), np.pad(h, 1, constant_values=7))
    cv = ((1, 2), (3, 4))
    assert_close(jnp.pad(jnp.asarray(h), ((1, 1), (2, 1)), constant_values=cv),
                 np.pad(h, ((1, 1), (2, 1)), constant_values=cv))
    assert_close(jnp.pad(jnp.asarray(h), (1, 0), constant_values=jnp.asarray(np.int32(-1))),
                 np.pad(h, (1, 0), constant_values=-1))
    with pytest.raises(ValueError, match="pad.*negative"):
        jnp.pad(jnp.asarray(h), -1)
    with pytest.raises(ValueError, match="pad.*broadcast"):
        jnp.pad(jnp.asarray(h), ((1, 2, 3),))
    with pytest.raises(TypeError, match="pad: pad_width must be ints"):
        jnp.pad(jnp.asarray(h), 1.5)
    with pytest.raises(ValueError, match="pad: mode='median'"):
        jnp.pad(jnp.asarray(h), 1, mode="median")
    with pytest.raises(ValueError, match="pad.*empty axis"):
        jnp.pad(jnp.zeros((0, 2)), 1, mode="edge")


@SETTINGS
@given(shape=shapes(0, 3, 0, 4), reps=st.lists(st.integers(0, 3), max_size=3),
       count=st.integers(0, 3), axis=st.integers(-1, 2), shift=st.integers(-7, 7), dt=DTYPES, layout=layouts(),
       seed=st.integers(0, 2**16))
def test_tile_repeat_roll(shape, reps, count, axis, shift, dt, layout, seed):
    rng = np.random.default_rng(seed)
    h = _host(dt, rng, shape)
    x = to_device(h, layout)
    assert_close(jnp.tile(x, tuple(reps)), np.tile(h, tuple(reps)), dt)
    assert_close(jnp.repeat(x, count), np.repeat(h, count), dt)
    assert_close(jnp.roll(x, shift), np.roll(h, shift), dt)
    assert_close(jnp.append(x, x), np.append(h, h), dt)
    if shape:
        ax = axis % len(shape)
        assert_close(jnp.repeat(x, count, ax), np.repeat(h, count, ax), dt)
        counts = rng.integers(0, 3, shape[ax])
        assert_close(jnp.repeat(x, counts, ax), np.repeat(h, counts, ax), dt)
        assert_close(jnp.roll(x, shift, ax), np.roll(h, shift, ax), dt)
        assert_close(jnp.roll(x, _idx(shift), ax), np.roll(h, shift, ax), dt)
        assert_close(jnp.append(x, x, ax), np.append(h, h, ax), dt)


def test_roll_multi_axis_and_repeat_total_length():
    h = np.arange(12).reshape(3, 4).astype(np.int32)
    assert_close(jnp.roll(jnp.asarray(h), (1, -2), (0, 1)), np.roll(h, (1, -2), (0, 1)))
    assert_close(jnp.roll(jnp.asarray(h), (1, 2), (1, 1)), np.roll(h, (1, 2), (1, 1)))
    r = jnp.repeat(jnp.asarray(np.arange(3)), [2, 1, 1], total_repeat_length=6)
    assert_close(r, np.array([0, 0, 1, 2, 2, 2], np.int32))
    with pytest.raises(ValueError, match="repeat.*negative"):
        jnp.repeat(jnp.ones(3), -1)
    with pytest.raises(ValueError, match=r"repeat.*\(2,\).*size 3"):
        jnp.repeat(jnp.ones(3), [1, 2])
    with pytest.raises(ValueError, match="tile.*non-negative"):
        jnp.tile(jnp.ones(3), -1)
