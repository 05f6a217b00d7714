"""netcl.numpy indexing against NumPy: x[idx] with every kind of index (ints, slices with
negative steps, None, Ellipsis, integer arrays on the host and on the device, boolean masks),
x.at[idx].set/add/multiply/min/max, take, take_along_axis, nonzero & co., diagonals and
triangles; bad indices; derivatives and vmap."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl.core.eval import to_array
from util import assert_close, layouts, rand, shapes, to_device

SETTINGS = settings(max_examples=40, deadline=None)
DTYPES = st.sampled_from(["float32", "int32", "bool"])


def _host(dt, rng, shape):
    return np.asarray(rand(rng, shape, dt, -5, 5))


def _dev_idx(h):
    return to_array(np.asarray(h, dtype=np.int32))


@st.composite
def index_cases(draw, allow_mask=True):
    """(shape, index tuple as NumPy sees it, the same index with some arrays on the device)."""
    shape = draw(shapes(0, 4, 0, 4))
    nd = len(shape)
    kinds = draw(st.lists(st.sampled_from(["int", "slice", "slice", "none", "ellipsis", "array"]
                                          + (["mask"] if allow_mask else [])), max_size=nd + 2))
    items, used, ell = [], 0, False
    for k in kinds:  # keep at most one ellipsis and no more indices than dimensions
        need = {"int": 1, "slice": 1, "array": 1, "mask": draw(st.integers(1, 2)),
                "none": 0, "ellipsis": 0}[k]
        if (k == "ellipsis" and ell) or used + need > nd:
            continue
        ell |= k == "ellipsis"
        used += need
        items.append((k, need))
    # axis of each consuming item: from the left before the ellipsis, from the right after
    before = True
    after_need = 0
    for k, need in items:
        if k == "ellipsis":
            before = False
        elif not before:
            after_need += need
    d_left, d_right = 0, nd - after_need
    base = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    host_idx, dev_idx, before = [], [], True
    for k, need in items:
        if k == "ellipsis":
            before = False
            host_idx.append(Ellipsis)
            dev_idx.append(Ellipsis)
            continue
        if k == "none":
            host_idx.append(None)
            dev_idx.append(None)
            continue
        d = d_left if before else d_right
        if before:
            d_left += need
        else:
            d_right += need
        n = shape[d]
        if k == "int" and n > 0:
            v = draw(st.integers(-n, n - 1))
            host_idx.append(v)
            dev_idx.append(v)
        elif k == "mask":
            m = draw(st.lists(st.booleans(), min_size=int(np.prod(shape[d:d + need])),
                              max_size=int(np.prod(shape[d:d + need]))))
            m = np.array(m, dtype=bool).reshape(shape[d:d + need])
            host_idx.append(m)
            dev_idx.append(jnp.asarray(m) if draw(st.booleans()) else m)
        elif k == "array" and (n > 0 or np.prod(base) == 0):
            ashape = tuple(s if draw(st.booleans()) or n == 0 else 1 for s in base)
            a = np.array(draw(st.lists(st.integers(-n, n - 1) if n else st.just(0),
                                       min_size=int(np.prod(ashape)),
                                       max_size=int(np.prod(ashape)))), dtype=np.int64)
            a = a.reshape(ashape)
            host_idx.append(a)
            dev_idx.append(_dev_idx(a) if draw(st.booleans()) else a)
        else:
            start = draw(st.none() | st.integers(-n - 2, n + 2))
            stop = draw(st.none() | st.integers(-n - 2, n + 2))
            step = draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3]))
            host_idx.append(slice(start, stop, step))
            dev_idx.append(slice(start, stop, step))
    return shape, tuple(host_idx), tuple(dev_idx)


@SETTINGS
@given(case=index_cases(), dt=DTYPES, layout=layouts(), seed=st.integers(0, 2**16))
def test_getitem_matches_numpy(case, dt, layout, seed):
    shape, hidx, didx = case
    h = _host(dt, np.random.default_rng(seed), shape)
    try:
        want = h[hidx]
    except IndexError:
        with pytest.raises(IndexError):
            to_device(h, layout)[didx]
        return
    got = to_device(h, layout)[didx]
    assert_close(got, want, dt)


def test_getitem_basic_indexing_is_a_view():
    x = jnp.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    for idx in [(1,), (slice(None, None, -1), None, slice(1, 3)), (Ellipsis, slice(None, None, 2)),
                (0, slice(None), slice(3, 0, -1))]:
        y = x[idx]
        assert y._buf is x._buf or netcl.default_device().is_numpy
        assert_close(y, np.asarray(x)[idx])


def test_getitem_advanced_combinations():
    h = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    x = jnp.asarray(h)
    i = np.array([[0, 1], [2, 0]])
    for idx in [np.s_[:, 0, :, [1, 2]], np.s_[0, :, [1, 2]], np.s_[[0], None, [0]],
                np.s_[:, [0], None, [0]], np.s_[True], np.s_[False, 1], np.s_[..., 0, [1, 2]],
                np.s_[1, i, :, i], np.s_[:, i, i], np.s_[[1, 0], ..., [-1, 2]],
                np.s_[:, h[0, :, :, 0] > 30], np.s_[1, :, h[0, 0] > 30], np.s_[[]],
                np.s_[:, [2, -1], [[1], [3]]], np.s_[::-1, ::-2, 3:0:-2, -1]]:
        assert_close(x[idx], h[idx])
        dev = tuple(_dev_idx(e) if isinstance(e, np.ndarray) and e.dtype.kind == "i" else e
                    for e in (idx if isinstance(idx, tuple) else (idx,)))
        assert_close(x[dev], h[idx])


def test_device_indices_are_clamped():
    x = jnp.asarray(np.arange(5, dtype=np.float32))
    assert_close(x[_dev_idx([7, -1, -9, 2])], np.array([4, 4, 0, 2], np.float32))
    assert_close(x[_dev_idx(3)], np.float32(3))  # 0-d device index


def test_bad_indices():
    x = jnp.zeros((3, 4))
    with pytest.raises(IndexError, match="__getitem__.*index 3 is out of bounds for axis 0 "
                                         "with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis 1 with size 4"):
        x[0, -5]
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 4"):
        x[:, [1, 4]]
    with pytest.raises(IndexError, match="too many indices.*2-dimensional, but 3"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="__getitem__.*float"):
        x[1.0]
    with pytest.raises(TypeError, match="__getitem__.*float32"):
        x[jnp.zeros(2, jnp.float32)]
    with pytest.raises(TypeError, match="__getitem__.*float64"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match=r"boolean index of shape \(2,\).*\(3,\)"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match="shape mismatch.*broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError, match="__getitem__"):
        x["a"]


# ---- x.at ------------------------------------------------------------------------------------

@SETTINGS
@given(case=index_cases(allow_mask=True), mode=st.sampled_from(["set", "add", "multiply", "min",
       "max"]), dt=DTYPES, layout=layouts(), scalar=st.booleans(), seed=st.integers(0, 2**16))
def test_at_updates_match_numpy(case, mode, dt, layout, scalar, seed):
    shape, hidx, didx = case
    rng = np.random.default_rng(seed)
    h = _host(dt, rng, shape)
    try:
        sel_shape = h[hidx].shape
    except IndexError:
        return
    v = _host(dt, rng, () if scalar else sel_shape)
    want = h.copy()
    if mode == "set":
        # NumPy's assignment keeps the last of duplicate indices, as netcl does; compare on
        # the positions written once, and only the multiset of values elsewhere
        want[hidx] = v
    else:
        ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum,
                 "max": np.maximum}[mode]
        if dt == "bool" and mode in ("add", "multiply"):
            ufunc = np.logical_or if mode == "add" else np.logical_and
        ufunc.at(want, hidx, v)
    got = getattr(to_device(h, layout).at[didx], mode)(to_device(np.asarray(v)))
    assert_close(got, want, dt)


def test_at_duplicates_and_out_of_range():
    x = jnp.zeros(5)
    assert_close(x.at[[1, 1, 3]].set(jnp.asarray(np.array([1, 2, 3], np.float32))),
                 np.array([0, 2, 0, 3, 0], np.float32))
    assert_close(x.at[[1, 1, 3]].add(1.0), np.array([0, 2, 0, 1, 0], np.float32))
    i = _dev_idx([1, 7, -1, -6])  # 7 and -6 are out of range: dropped
    assert_close(x.at[i].set(5.0), np.array([0, 5, 0, 0, 5], np.float32))
    assert_close(x.at[i].add(5.0), np.array([0, 5, 0, 0, 5], np.float32))
    assert_close(x.at[i].max(5.0), np.array([0, 5, 0, 0, 5], np.float32))
    assert_close(x.at[2].get(), np.float32(0))
    assert_close(jnp.ones(3).at[1].divide(4.0), np.array([1, 0.25, 1], np.float32))
    with pytest.raises(IndexError, match=r"at\[\]\.set.*out of bounds"):
        x.at[5].set(1.0)
    with pytest.raises(ValueError, match=r"at\[\]\.add.*\(3,\).*\(2,\)"):
        x.at[[0, 1]].add(jnp.ones(3))


def test_at_embedding_update():
    rng = np.random.default_rng(0)
    table = rng.standard_normal((10, 4)).astype(np.float32)
    ids = rng.integers(0, 10, (3, 6))
    g = rng.standard_normal((3, 6, 4)).astype(np.float32)
    want = table.copy()
    np.add.at(want, ids, g)
    got = jnp.asarray(table).at[_dev_idx(ids)].add(jnp.asarray(g))
    assert_close(got, want)


# ---- take / take_along_axis -------------------------------------------------------------------

@SETTINGS
@given(shape=shapes(1, 3, 0, 4), ishape=shapes(0, 2, 0, 3), axis=st.integers(-3, 2),
       dt=DTYPES, layout=layouts(), on_device=st.booleans(), seed=st.integers(0, 2**16))
def test_take_matches_numpy(shape, ishape, axis, dt, layout, on_device, seed):
    rng = np.random.default_rng(seed)
    h = _host(dt, rng, shape)
    axis = axis % len(shape)
    n = shape[axis]
    idx = rng.integers(-n, max(n, 1), ishape) if n else np.zeros(ishape, np.int64)
    if n == 0 and idx.size:
        return
    ii = _dev_idx(idx) if on_device else idx
    x = to_device(h, layout)
    assert_close(jnp.take(x, ii, axis), np.take(h, idx, axis), dt)
    if h.size:
        flat_idx = rng.integers(-h.size, h.size, ishape)
        fi = _dev_idx(flat_idx) if on_device else flat_idx
        assert_close(jnp.take(x, fi), np.take(h, flat_idx), dt)
        assert_close(x.take(fi), np.take(h, flat_idx), dt)
    # take_along_axis with broadcasting in the other dimensions
    ta = rng.integers(-n, max(n, 1), tuple(1 if (d != axis and rng.random() < 0.3) else
                                           (3 if d == axis else s) for d, s in enumerate(shape)))
    if n or not ta.size:
        ti = _dev_idx(ta) if on_device else ta
        want = np.take_along_axis(h, np.where(ta < 0, ta + n, ta), axis)
        assert_close(jnp.take_along_axis(x, ti, axis), want, dt)


def test_take_modes():
    x = jnp.asarray(np.arange(5, dtype=np.float32))
    idx = [0, -1, 7, -6]
    assert_close(jnp.take(x, idx), np.array([0, 4, np.nan, np.nan], np.float32))
    assert_close(jnp.take(x, _dev_idx(idx)), np.array([0, 4, np.nan, np.nan], np.float32))
    assert_close(jnp.take(x, idx, mode="clip"), np.array([0, 4, 4, 0], np.float32))
    assert_close(jnp.take(x, _dev_idx(idx), mode="wrap"), np.take(np.arange(5.0), idx,
                                                                  mode="wrap").astype(np.float32))
    assert_close(jnp.take(x, idx, fill_value=-1.0), np.array([0, 4, -1, -1], np.float32))
    ints = jnp.asarray(np.arange(3, dtype=np.int32))
    assert_close(jnp.take(ints, [5]), np.array([np.iinfo(np.int32).min], np.int32))
    with pytest.raises(IndexError, match="take.*out of bounds"):
        jnp.take(x, [9], mode="raise")
    with pytest.raises(ValueError, match="take: mode"):
        jnp.take(x, [0], mode="bogus")
    with pytest.raises(TypeError, match="take: indices must be integers, got float"):
        jnp.take(x, [0.5])
    with pytest.raises(ValueError, match="take_along_axis.*same number of dimensions"):
        jnp.take_along_axis(jnp.zeros((2, 3)), _dev_idx([0]), 1)
    with pytest.raises(ValueError, match="take_along_axis.*broadcast"):
        jnp.take_along_axis(jnp.zeros((2, 3)), _dev_idx(np.zeros((3, 1))), 1)


# ---- nonzero & co. -----------------------------------------------------------------------------

@SETTINGS
@given(shape=shapes(1, 3, 0, 4), dt=DTYPES, seed=st.integers(0, 2**16))
def test_nonzero_family(shape, dt, seed):
    h = _host(dt, np.random.default_rng(seed), shape)
    h = np.where(np.random.default_rng(seed).random(shape) < 0.5, h, 0).astype(h.dtype)
    x = jnp.asarray(h)
    for got, want in zip(jnp.nonzero(x), np.nonzero(h)):
        assert_close(got, want.astype(np.int32))
    assert_close(jnp.flatnonzero(x), np.flatnonzero(h).astype(np.int32))
    assert_close(jnp.argwhere(x), np.argwhere(h).astype(np.int32))
    assert_close(jnp.nonzero(x, size=3, fill_value=-1)[0],
                 np.concatenate([np.nonzero(h)[0], np.full(3, -1)])[:3].astype(np.int32))


def test_nonzero_bad_input():
    with pytest.raises(ValueError, match="nonzero.*0-d"):
        jnp.nonzero(jnp.ones(()))


# ---- diagonals and triangles --------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(shape=shapes(2, 4, 0, 4), k=st.integers(-4, 4), axes=st.sampled_from([(0, 1), (1, 0),
       (-1, -2), (0, -1)]), dt=st.sampled_from(["float32", "int32"]), layout=layouts(),
       seed=st.integers(0, 2**16))
def test_diagonal_triangles(shape, k, axes, dt, layout, seed):
    h = _host(dt, np.random.default_rng(seed), shape)
    x = to_device(h, layout)
    assert_close(jnp.diagonal(x, k, *axes), np.diagonal(h, k, *axes), dt)
    assert_close(jnp.tril(x, k), np.tril(h, k), dt)
    assert_close(jnp.triu(x, k), np.triu(h, k), dt)
    if dt != "bool":
        sd = netcl.core.dtypes.sum_dtype(np.dtype(dt))     # (int32: int64 with x64)
        assert_close(jnp.trace(x, k, *axes), np.trace(h, k, *axes).astype(sd), sd)
    if len(shape) == 2:
        assert_close(jnp.diag(x, k), np.diag(h, k), dt)
        assert_close(jnp.diag(jnp.diagonal(x), k), np.diag(np.diagonal(h), k), dt)


def test_bool_triangles():
    h = np.random.default_rng(0).random((2, 3, 4)) < 0.5
    for k in (-1, 0, 2):
        assert_close(jnp.tril(jnp.asarray(h), k), np.tril(h, k))
        assert_close(jnp.triu(jnp.asarray(h), k), np.triu(h, k))
    assert_close(jnp.diagonal(jnp.asarray(h), 1, 1, 2), np.diagonal(h, 1, 1, 2))
    it = netcl.core.dtypes.default_int_dtype()
    assert_close(jnp.trace(jnp.asarray(h[0])), np.trace(h[0]).astype(it), it)


def test_index_helpers():
    for got, want in zip(jnp.tril_indices(4, 1, 5), np.tril_indices(4, 1, 5)):
        assert_close(got, want.astype(np.int32))
    for got, want in zip(jnp.triu_indices_from(jnp.zeros((3, 4)), -1),
                         np.triu_indices_from(np.zeros((3, 4)), -1)):
        assert_close(got, want.astype(np.int32))
    assert_close(jnp.diagflat(jnp.asarray(np.arange(4.0).reshape(2, 2)), 1),
                 np.diagflat(np.arange(4.0).reshape(2, 2), 1))
    with pytest.raises(ValueError, match="diagonal.*two dimensions"):
        jnp.diagonal(jnp.ones(3))
    with pytest.raises(ValueError, match="diagonal.*same"):
        jnp.diagonal(jnp.ones((3, 3)), 0, 1, -1)
    with pytest.raises(ValueError, match="diag.*1-d or 2-d"):
        jnp.diag(jnp.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="tril.*two dimensions"):
        jnp.tril(jnp.ones(3))


# ---- derivatives and vmap ------------------------------------------------------------------

def test_indexing_grads():
    from netcl.test_util import check_grads
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((3, 4, 2)))
    i = _dev_idx([[2, 0], [0, 0]])
    check_grads(lambda a: a[1:, ::-2, 0], (x,), order=2)
    check_grads(lambda a: a[i, :, 1], (x,), order=2)
    check_grads(lambda a: a[[0, 2, 2], None, [1, 3, 3]], (x,), order=2)
    mask = rng.random((3, 4)) < 0.5
    check_grads(lambda a: a[mask], (x,), order=2)
    v = jnp.asarray(rng.standard_normal((2, 2, 4, 2)))
    check_grads(lambda a, b: a.at[i].set(b), (x, v), order=2)
    check_grads(lambda a, b: a.at[i].add(b), (x, v), order=2)
    w = jnp.asarray(rng.standard_normal((3, 2, 2)))
    check_grads(lambda a, b: a.at[:, 1:3].multiply(b), (x, w), order=2)
    check_grads(lambda a, b: a.at[i].max(b), (x, v), order=1)
    check_grads(lambda a: jnp.take(a, _dev_idx([5, -1, 0]), axis=1, mode="clip"), (x,), order=2)
    ta = _dev_idx(rng.integers(0, 4, (3, 5, 1)))
    check_grads(lambda a: jnp.take_along_axis(a, ta, 1), (x,), order=2)
    m = jnp.asarray(rng.standard_normal((4, 4)))
    check_grads(lambda a: jnp.diagonal(a, 1), (m,), order=2)
    check_grads(lambda a: jnp.tril(a, -1) + jnp.triu(a, 2), (m,), order=2)
    check_grads(lambda a: jnp.diag(jnp.diagonal(a), -1), (m,), order=2)
    check_grads(lambda a: jnp.trace(a), (m,), order=2)


def test_vmap_indexing():
    rng = np.random.default_rng(1)
    x = jnp.asarray(rng.standard_normal((3, 4, 5)).astype(np.float32))
    ids = _dev_idx(rng.integers(-4, 4, (3, 2)))
    got = netcl.vmap(lambda a, i: a[i, ::-1])(x, ids)
    h, hi = np.asarray(x), np.asarray(ids)
    assert_close(got, np.stack([h[b][hi[b], ::-1] for b in range(3)]))
    got = netcl.vmap(lambda a, i: a.at[i].add(1.0))(x, ids)
    want = h.copy()
    for b in range(3):
        np.add.at(want[b], hi[b], 1.0)
    assert_close(got, want)
    got = netcl.vmap(lambda a, i: a.at[:, i].set(2.0), (0, None))(x, _dev_idx([0, 4]))
    want = h.copy()
    want[:, :, [0, 4]] = 2.0
    assert_close(got, want)
    got = netcl.vmap(lambda a: jnp.diagonal(a, 1))(x)
    assert_close(got, np.diagonal(h, 1, 1, 2))


def test_jit_indexing_and_updates():
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, i = jnp.asarray(h), _dev_idx([2, 0])

    def f(x, i):
        y = x[i, ::-1].at[0].add(1.0)
        return jnp.take_along_axis(y, _dev_idx([[3], [0]]), 1), y.at[:, i].set(0.0)

    jf = netcl.jit(f)
    for _ in range(2):
        for got, want in zip(jf(x, i), f(x, i)):
            assert_close(got, want)
    with pytest.raises(TypeError, match="boolean mask.*jit"):
        netcl.jit(lambda x: x[x > 3])(x)
