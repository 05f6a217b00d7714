"""conv_general_dilated, conv_transpose, reduce_window and the pooling derivatives.

Results are compared with the primitives' NumPy references (run through the NumPy device, so
the lax-level normalisation is shared), and the conv reference itself with a naive loop
written straight from XLA's definition. Derivatives: netcl.test_util.check_grads (order 2,
fwd and rev, float64); batching: vmap against a Python loop.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.core.array import Array
from netcl.core.devices import numpy_device
from netcl.primitives import conv as C
from netcl.test_util import check_grads

from util import to_device

ON_NUMPY = netcl.default_device().is_numpy
LAYOUTS = {  # (lhs, rhs, out) per number of spatial dims, channels first / last
    "first": {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"),
              3: ("NCDHW", "OIDHW", "NCDHW")},
    "last": {1: ("NHC", "HIO", "NHC"), 2: ("NHWC", "HWIO", "NHWC"),
             3: ("NDHWC", "DHWIO", "NDHWC")},
}


# ---- helpers ----------------------------------------------------------------------------------

def _np_dev(a):
    return Array.from_numpy(numpy_device(), np.asarray(a))


def expected_conv(x, w, *args, **kwargs):
    """conv_general_dilated evaluated by the NumPy reference (same argument normalisation)."""
    return np.asarray(C.conv_general_dilated(_np_dev(x), _np_dev(w), *args, **kwargs)._buf)


def _physical(logical, spec):
    shape = [0] * len(spec)
    for i, d in enumerate(spec):
        shape[d] = logical[i]
    return tuple(shape)


def conv_gemm_tf32():
    from netcl.primitives.conv import conv_gemm
    dev = netcl.default_device()
    return not dev.is_numpy and conv_gemm._use_tf32(dev, np.dtype(np.float32), "default")


def _tol(dtype, k):
    return {np.float16: 2e-2, np.float32: 3e-6, np.float64: 1e-13}[np.dtype(dtype).type] * \
        max(k, 1) * 4


def _check(got, want, dtype, k):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=0,
                               atol=_tol(dtype, k))


def naive_conv(x, w, strides, pads, ld, rd, dn, G, B):
    """XLA's convolution by definition, one output element at a time (tiny shapes only)."""
    lhs_spec, rhs_spec, out_spec = dn
    xs = np.transpose(x, lhs_spec).astype(np.float64)
    ws = np.transpose(w, rhs_spec).astype(np.float64)
    N, Cin = xs.shape[:2]
    O, I = ws.shape[:2]
    sp_in, win = xs.shape[2:], ws.shape[2:]
    nsp = len(sp_in)
    out_sp = []
    for j in range(nsp):
        padded = (0 if sp_in[j] == 0 else (sp_in[j] - 1) * ld[j] + 1) + pads[j][0] + pads[j][1]
        kd = (win[j] - 1) * rd[j] + 1
        out_sp.append(0 if padded < kd else (padded - kd) // strides[j] + 1)
    out = np.zeros((N // B, O) + tuple(out_sp))
    for idx in np.ndindex(*out.shape):
        n, o, ys = idx[0], idx[1], idx[2:]
        g, bg = o // (O // G), o // (O // B)
        acc = 0.0
        for ks in np.ndindex(*win):
            pos = []
            for j in range(nsp):
                p = ys[j] * strides[j] + ks[j] * rd[j] - pads[j][0]
                if p < 0 or p % ld[j] or p // ld[j] >= sp_in[j]:
                    break
                pos.append(p // ld[j])
            else:
                for c in range(I):
                    acc += xs[(bg * (N // B) + n, g * I + c) + tuple(pos)] * \
                        ws[(o, c) + tuple(ks)]
        out[idx] = acc
    return np.transpose(out, np.argsort(out_spec))


@st.composite
def conv_problems(draw, nsp=None, dtypes=(np.float32, np.float64), max_side=6):
    nsp = draw(st.sampled_from([1, 2])) if nsp is None else nsp
    layout = draw(st.sampled_from(["first", "last", "perm"]))
    if layout == "perm":
        perms = [tuple(draw(st.permutations(range(nsp + 2)))) for _ in range(3)]
        dn = C.ConvDimensionNumbers(*perms)
    else:
        dn = LAYOUTS[layout][nsp]
    G = draw(st.sampled_from([1, 1, 2, 3]))
    B = draw(st.sampled_from([1, 1, 2])) if G == 1 else 1
    N = B * draw(st.integers(1, 2))
    Cg, Og = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    O = G * B * Og
    sp = [draw(st.integers(1, max_side)) for _ in range(nsp)]
    win = [draw(st.integers(1, 3)) for _ in range(nsp)]
    strides = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    ld = tuple(draw(st.sampled_from([1, 1, 2])) for _ in range(nsp))
    rd = tuple(draw(st.sampled_from([1, 1, 2])) for _ in range(nsp))
    kind = draw(st.sampled_from(["SAME", "VALID", "explicit"]))
    if kind != "explicit" and any(d > 1 for d in ld):
        kind = "explicit"
    if kind == "explicit":
        padding = []
        for j in range(nsp):
            lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
            ind = (sp[j] - 1) * ld[j] + 1
            if ind + lo + hi < 0:
                lo, hi = 0, 0
            padding.append((lo, hi))
    else:
        padding = kind
    dtype = draw(st.sampled_from(dtypes))
    dnc = C.conv_dimension_numbers((0,) * (nsp + 2), (0,) * (nsp + 2), dn)
    lhs_shape = _physical((N, G * Cg) + tuple(sp), dnc.lhs_spec)
    rhs_shape = _physical((O, Cg) + tuple(win), dnc.rhs_spec)
    x_layout = draw(st.sampled_from(["dense", "dense", "transposed", "reversed"]))
    seed = draw(st.integers(0, 2**16))
    return dict(lhs_shape=lhs_shape, rhs_shape=rhs_shape, dtype=dtype, x_layout=x_layout,
                seed=seed, kwargs=dict(window_strides=strides, padding=padding, lhs_dilation=ld,
                                       rhs_dilation=rd, dimension_numbers=dn,
                                       feature_group_count=G, batch_group_count=B))


def _data(p):
    rng = np.random.default_rng(p["seed"])
    x = rng.uniform(-1, 1, p["lhs_shape"]).astype(p["dtype"])
    w = rng.uniform(-1, 1, p["rhs_shape"]).astype(p["dtype"])
    return x, w


def _k(p):
    return int(np.prod(p["rhs_shape"])) // max(p["rhs_shape"][0], 1) if p["rhs_shape"] else 1


@pytest.fixture
def impl():
    """Force the direct kernel or the im2col + GEMM path (fresh launchers either way)."""
    def set_impl(name):
        C._impl_override = name
        netcl.test_util.forget_launchers()
    yield set_impl
    C._impl_override = None
    netcl.test_util.forget_launchers()


# ---- the reference against the definition -------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(conv_problems(dtypes=(np.float64,), max_side=5))
def test_reference_matches_naive_definition(p):
    x, w = _data(p)
    want = expected_conv(x, w, **p["kwargs"])
    kw = p["kwargs"]
    dn = C.conv_dimension_numbers(x.shape, w.shape, kw["dimension_numbers"])
    pads = kw["padding"]
    if isinstance(pads, str):
        in_sp = [x.shape[d] for d in dn.lhs_spec[2:]]
        k_sp = [(w.shape[d] - 1) * r + 1 for d, r in zip(dn.rhs_spec[2:], kw["rhs_dilation"])]
        pads = C.padtype_to_pads(in_sp, k_sp, kw["window_strides"], pads)
    naive = naive_conv(x, w, kw["window_strides"], pads, kw["lhs_dilation"],
                       kw["rhs_dilation"], dn, kw["feature_group_count"],
                       kw["batch_group_count"])
    np.testing.assert_allclose(want, naive, rtol=1e-12, atol=1e-12)


def test_reference_known_values():
    # 1-d, one channel: cross-correlation, as np.correlate
    x = np.arange(7.0).reshape(1, 1, 7)
    w = np.array([1.0, -2.0, 0.5]).reshape(1, 1, 3)
    got = C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1,), "VALID")
    np.testing.assert_allclose(np.asarray(got)[0, 0], np.correlate(x[0, 0], w[0, 0], "valid"))
    # an identity kernel returns the input; SAME keeps the size
    x = np.random.default_rng(0).standard_normal((2, 5, 6, 3)).astype(np.float32)
    w = np.zeros((3, 3, 3, 3), np.float32)
    w[1, 1] = np.eye(3)
    got = C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(np.asarray(got), x, rtol=0, atol=1e-6)


# ---- forward: OpenCL kernels against the reference ----------------------------------------------

@settings(max_examples=60, deadline=None)
@given(conv_problems())
def test_conv_matches_reference(p):
    x, w = _data(p)
    got = C.conv_general_dilated(to_device(x, p["x_layout"]), jnp.asarray(w), **p["kwargs"])
    _check(got, expected_conv(x, w, **p["kwargs"]), p["dtype"], _k(p))


GEMM_CASES = [  # lhs, rhs, kwargs: each hits a different GEMM operand arrangement
    ((2, 6, 7, 5), (3, 3, 5, 8), dict(window_strides=(1, 1), padding="SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 5, 6, 7), (8, 5, 3, 2), dict(window_strides=(2, 1), padding=((1, 0), (0, 2)))),
    ((2, 6, 7, 4), (6, 2, 3, 3), dict(window_strides=(1, 1), padding="SAME",
                                      dimension_numbers=("NHWC", "OIHW", "NCHW"),
                                      feature_group_count=2, rhs_dilation=(1, 2))),
    ((4, 3, 5, 6), (6, 3, 2, 2), dict(window_strides=(1, 1), padding=((1, 1), (0, 2)),
                                      batch_group_count=2, lhs_dilation=(2, 1))),
    ((3, 9, 5), (4, 3, 5), dict(window_strides=(2,), padding="SAME",
                                dimension_numbers=("NWC", "WOI", "WNC"))),
    ((2, 3, 4, 5, 4), (4, 3, 2, 3, 2), dict(window_strides=(1, 2, 1), padding="VALID")),
    # a kernel-gradient-like conv (few outputs, K = 4*38*29 = 4408): split-K on the CPU
    ((1, 40, 31, 4), (38, 29, 4, 4), dict(window_strides=(1, 1), padding="VALID",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    # K = 4*34*32 = 4352 = 16*272 splits into equal parts: one batched launch, no remainder
    ((1, 36, 33, 4), (34, 32, 4, 4), dict(window_strides=(1, 1), padding="VALID",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC"))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", ["direct", "gemm"])
@pytest.mark.parametrize("case", range(len(GEMM_CASES)))
def test_conv_paths(impl, path, case, dtype):
    lhs_shape, rhs_shape, kw = GEMM_CASES[case]
    impl(path)
    rng = np.random.default_rng(case)
    x = rng.uniform(-1, 1, lhs_shape).astype(dtype)
    w = rng.uniform(-1, 1, rhs_shape).astype(dtype)
    for xd, wd in ((jnp.asarray(x), jnp.asarray(w)),
                   (to_device(x, "reversed"), to_device(w, "reversed"))):  # strided views
        got = C.conv_general_dilated(xd, wd, **kw)
        _check(got, expected_conv(x, w, **kw), dtype, int(np.prod(rhs_shape)))


def test_conv_gemm_path_auto_and_kernel_views():
    # big enough for the im2col + GEMM path; the kernel read in place, transposed, reversed
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 10, 10, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 16, 32)).astype(np.float32)
    kw = dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    want = expected_conv(x, w, **kw)
    _check(C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), **kw), want, np.float32, 144)
    wt = jnp.transpose(jnp.asarray(np.ascontiguousarray(w.transpose(3, 2, 0, 1))), (2, 3, 1, 0))
    _check(C.conv_general_dilated(jnp.asarray(x), wt, **kw), want, np.float32, 144)
    wr = jnp.flip(jnp.asarray(np.ascontiguousarray(w[::-1, ::-1])), (0, 1))
    _check(C.conv_general_dilated(jnp.asarray(x), wr, **kw), want, np.float32, 144)


# ---- the specialised im2col (the GPU path), forced on this device ---------------------------

NHWC = ("NHWC", "HWIO", "NHWC")
IM2COL_CASES = GEMM_CASES + [  # more geometries for the specialised im2col
    ((2, 9, 9, 1), (3, 3, 1, 8), dict(window_strides=(2, 2), padding="VALID",
                                      dimension_numbers=NHWC)),
    ((2, 8, 8, 64), (3, 3, 64, 16), dict(window_strides=(2, 2), padding="SAME",
                                         dimension_numbers=NHWC)),
    ((2, 3, 8, 8), (8, 3, 3, 3), dict(window_strides=(1, 1), padding="SAME")),   # NCHW/OIHW
    ((2, 64, 5, 6), (3, 3, 64, 8), dict(window_strides=(1, 1), padding="SAME",   # P transposed
                                        dimension_numbers=("NCHW", "HWIO", "NCHW"))),
    ((2, 6, 6, 16), (3, 3, 8, 8), dict(window_strides=(1, 1), padding="SAME",
                                       dimension_numbers=NHWC, feature_group_count=2)),
]


def _both_im2cols(impl, monkeypatch, fn):
    """fn() run with the generic, then the specialised im2col: P is a copy either way, so the
    results agree bit for bit (16-bit inputs on tensor cores aside: there the generic P runs
    the float32 GEMM, the special one the 16-bit products, float32 sums in other orders each
    rounded once: at most one 16-bit step apart). Returns (result, modes of the im2cols the
    special run built)."""
    from netcl.primitives.conv import conv_gemm
    modes, make = [], conv_gemm._im2col_launcher

    def spy(*a):
        run = make(*a)
        modes.append(run.mode)
        return run
    monkeypatch.setattr(conv_gemm, "_im2col_launcher", spy)
    out = {}
    for mode in ("generic", "special"):
        monkeypatch.setattr(C, "_im2col_override", mode)
        impl("gemm")
        modes.clear()
        out[mode] = np.asarray(fn())
    if out["special"].dtype.itemsize == 2 and netcl.default_device().target.tensor_cores:
        np.testing.assert_allclose(out["special"].astype(np.float32),
                                   out["generic"].astype(np.float32), atol=0,
                                   rtol=float(jnp.finfo(out["special"].dtype).eps))
    else:
        np.testing.assert_array_equal(out["special"], out["generic"])
    return out["special"], modes


@pytest.mark.skipif(ON_NUMPY, reason="OpenCL kernels only")
@pytest.mark.parametrize("hw,cin,cout", [(32, 3, 32), (32, 32, 64), (16, 64, 128)])
def test_im2col_special_w5(impl, monkeypatch, hw, cin, cout):
    # W5's layers at batch 2: forward, input gradient, kernel gradient
    rng = np.random.default_rng(cin)
    x = rng.standard_normal((2, hw, hw, cin)).astype(np.float32)
    w = rng.standard_normal((3, 3, cin, cout)).astype(np.float32)
    kw = dict(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC)
    y, modes = _both_im2cols(impl, monkeypatch, lambda: C.conv_general_dilated(
        jnp.asarray(x), jnp.asarray(w), **kw))
    assert modes == ["special1" if cin == 3 else "special4"]
    _check(y, expected_conv(x, w, **kw), np.float32, 9 * cin)
    ct = rng.standard_normal(y.shape).astype(np.float32)
    dn = C.conv_dimension_numbers(x.shape, w.shape, NHWC)
    p = dict(window_strides=(1, 1), padding=((1, 1), (1, 1)), lhs_dilation=(1, 1),
             rhs_dilation=(1, 1), dimension_numbers=dn, feature_group_count=1,
             batch_group_count=1, precision=None, preferred_element_type=None)
    for f, k in ((C._conv_transpose_lhs, 9 * cout), (C._conv_transpose_rhs, 2 * hw * hw)):
        got, modes = _both_im2cols(impl, monkeypatch, lambda: f(
            jnp.asarray(ct), jnp.asarray(x), jnp.asarray(w), **p))
        assert modes and all(m.startswith("special") for m in modes), modes
        want = np.asarray(f(_np_dev(ct), _np_dev(x), _np_dev(w), **p)._buf)
        _check(got, want, np.float32, k)


@pytest.mark.skipif(ON_NUMPY, reason="OpenCL kernels only")
@pytest.mark.parametrize("case", range(len(IM2COL_CASES)))
def test_im2col_special_geometries(impl, monkeypatch, case):
    lhs_shape, rhs_shape, kw = IM2COL_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.uniform(-1, 1, lhs_shape).astype(np.float32)
    w = rng.uniform(-1, 1, rhs_shape).astype(np.float32)
    for layout in ("dense", "reversed"):     # reversed: negative strides, gathered vectors
        got, modes = _both_im2cols(impl, monkeypatch, lambda: C.conv_general_dilated(
            to_device(x, layout), jnp.asarray(w), **kw))
        _check(got, expected_conv(x, w, **kw), np.float32, int(np.prod(rhs_shape)))
        # lhs dilation is not specialised: the generic kernel runs
        dilated = any(d != 1 for d in kw.get("lhs_dilation", ()))
        assert modes and all(m.startswith("generic" if dilated else "special")
                             for m in modes), modes


IMPLICIT_CASES = [
    ((2, 8, 8, 32), (3, 3, 32, 64), dict(window_strides=(1, 1), padding="SAME",
                                         dimension_numbers=NHWC)),       # W5's conv2
    ((2, 7, 7, 20), (3, 3, 20, 12), dict(window_strides=(1, 1), padding="SAME",
                                         dimension_numbers=NHWC)),       # edge tiles
    ((2, 9, 9, 16), (3, 3, 16, 8), dict(window_strides=(2, 2), padding="VALID",
                                        dimension_numbers=NHWC)),        # strided
    ((2, 16, 9, 9), (8, 16, 3, 3), dict(window_strides=(1, 1), padding="SAME")),  # NCHW
    ((2, 9, 9, 16), (3, 3, 8, 8), dict(window_strides=(1, 1), padding="SAME",
                                       dimension_numbers=NHWC, feature_group_count=2)),
    ((2, 9, 9, 16), (3, 3, 16, 8), dict(window_strides=(1, 1), padding=((2, 1), (0, 2)),
                                        rhs_dilation=(2, 1), dimension_numbers=NHWC)),
    ((2, 8, 8, 3), (3, 3, 3, 8), dict(window_strides=(1, 1), padding="SAME",
                                      dimension_numbers=NHWC)),          # element gathers
]


@pytest.mark.skipif(ON_NUMPY, reason="OpenCL kernels only")
@pytest.mark.parametrize("case", range(len(IMPLICIT_CASES)))
def test_implicit_gemm(impl, monkeypatch, case):
    # the GEMM reads P straight from the input (GPUs' default; forced here, so CPUs run it
    # with GPU tiles): forward and both gradients against the NumPy reference
    lhs_shape, rhs_shape, kw = IMPLICIT_CASES[case]
    rng = np.random.default_rng(case)
    x = rng.uniform(-1, 1, lhs_shape).astype(np.float32)
    w = rng.uniform(-1, 1, rhs_shape).astype(np.float32)
    monkeypatch.setattr(C, "_im2col_override", "implicit")
    impl("gemm")
    made = []
    from netcl.primitives.conv import conv_gemm
    make = conv_gemm._im2col_launcher
    monkeypatch.setattr(conv_gemm, "_im2col_launcher", lambda *a: made.append(1) or make(*a))
    k = int(np.prod(rhs_shape)) // rhs_shape[-1 if kw.get("dimension_numbers") else 0]
    _check(C.conv_general_dilated(to_device(x, "reversed"), jnp.asarray(w), **kw),
           expected_conv(x, w, **kw), np.float32, k)
    assert not made or case == len(IMPLICIT_CASES) - 1   # no P stored, but with 3 channels
    f = lambda x, w: jnp.sum(jnp.sin(C.conv_general_dilated(x, w, **kw)))  # noqa: E731
    gx, gw = netcl.grad(f, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(w))
    C._impl_override = "direct"
    netcl.test_util.forget_launchers()
    wx, ww = netcl.grad(f, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(w))
    _check(gx, np.asarray(wx), np.float32, 4 * k)
    _check(gw, np.asarray(ww), np.float32, 4 * int(np.prod(lhs_shape)))


@pytest.mark.tf32
@pytest.mark.skipif(ON_NUMPY or not conv_gemm_tf32(), reason="needs TF32 tensor cores")
def test_tf32_default_precision(impl):
    # NVIDIA sm_80+: the default precision multiplies in TF32 (10-bit mantissas) on tensor
    # cores, as PyTorch and XLA do; "highest" keeps float32 products
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (4, 16, 16, 32)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 32, 64)).astype(np.float32)
    kw = dict(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC)
    want = expected_conv(x.astype(np.float64), w.astype(np.float64), **kw)
    impl("gemm")
    fast = np.asarray(C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), **kw))
    exact = np.asarray(C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w),
                                              precision="highest", **kw))
    scale = np.abs(want).max()
    assert np.abs(exact - want).max() < 1e-5 * scale
    err = np.abs(fast - want).max()
    assert 1e-5 * scale < err < 3e-3 * scale, err     # TF32, not float32, and not worse


@pytest.mark.skipif(ON_NUMPY, reason="OpenCL kernels only")
@pytest.mark.parametrize("dtype,vec", [(np.float16, 4), (np.float64, 4), (np.float32, 8),
                                       (np.float32, 2), (np.float32, 1)])
def test_im2col_special_dtypes_widths_offsets(impl, monkeypatch, dtype, vec):
    from netcl.primitives.conv import conv_gemm
    monkeypatch.setattr(conv_gemm, "_IM2COL_VEC", vec)
    rng = np.random.default_rng(vec)
    x = rng.uniform(-1, 1, (2, 6, 7, 17)).astype(dtype)
    w = rng.uniform(-1, 1, (3, 3, 16, 8)).astype(dtype)
    kw = dict(window_strides=(1, 1), padding="SAME", dimension_numbers=NHWC)
    # dense (vector loads where aligned) and a view at offset 1 (element loads)
    for xs, xd in ((x[..., :16], jnp.asarray(np.ascontiguousarray(x[..., :16]))),
                   (x[..., 1:], jnp.asarray(x)[..., 1:])):
        got, modes = _both_im2cols(impl, monkeypatch, lambda: C.conv_general_dilated(
            xd, jnp.asarray(w), **kw))
        assert modes == [f"special{vec}"], modes
        _check(got, expected_conv(xs, w, **kw), dtype, 144)


@settings(max_examples=10, deadline=None)
@given(conv_problems(nsp=3, dtypes=(np.float32,), max_side=4))
def test_conv_3d(p):
    x, w = _data(p)
    got = C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), **p["kwargs"])
    _check(got, expected_conv(x, w, **p["kwargs"]), np.float32, _k(p))


def test_conv_float16_and_preferred_element_type():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, (2, 3, 6, 5)).astype(np.float16)
    w = rng.uniform(-1, 1, (4, 3, 3, 2)).astype(np.float16)
    want = expected_conv(x.astype(np.float64), w.astype(np.float64), (1, 2), "SAME")
    got = C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 2), "SAME")
    assert got.dtype == np.float16
    np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=2e-2)
    got = C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 2), "SAME",
                                 preferred_element_type=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=1e-5)


@pytest.mark.parametrize("path", ["direct", "gemm"])
def test_conv_float16_paths(impl, path):
    impl(path)
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (2, 7, 6, 8)).astype(np.float16)
    w = rng.uniform(-1, 1, (3, 2, 8, 12)).astype(np.float16)
    kw = dict(window_strides=(1, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    want = expected_conv(x.astype(np.float64), w.astype(np.float64), **kw)
    for pet, atol in ((None, 2e-2), (np.float32, 1e-5)):
        got = C.conv_general_dilated(to_device(x, "reversed"), jnp.asarray(w),
                                     preferred_element_type=pet, **kw)
        assert got.dtype == (np.float16 if pet is None else pet)
        np.testing.assert_allclose(np.asarray(got, np.float64), want, atol=atol)


def test_conv_zero_sizes():
    x = jnp.zeros((0, 3, 5, 5))
    w = jnp.ones((4, 3, 3, 3))
    assert C.conv_general_dilated(x, w, (1, 1), "SAME").shape == (0, 4, 5, 5)
    # window larger than the padded input: empty spatial output
    out = C.conv_general_dilated(jnp.ones((1, 3, 2, 2)), w, (1, 1), "VALID")
    assert out.shape == (1, 4, 0, 0)
    # no input channels: zeros
    out = C.conv_general_dilated(jnp.ones((2, 0, 4, 4)), jnp.ones((3, 0, 2, 2)), (1, 1), "VALID")
    np.testing.assert_array_equal(np.asarray(out), np.zeros((2, 3, 3, 3), np.float32))


def test_conv_lax_wrappers():
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (2, 3, 7, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 3, 3, 2)).astype(np.float32)
    _check(lax.conv(jnp.asarray(x), jnp.asarray(w), (2, 1), "SAME"),
           expected_conv(x, w, (2, 1), "SAME"), np.float32, 18)
    _check(lax.conv_with_general_padding(jnp.asarray(x), jnp.asarray(w), (1, 1),
                                         ((1, 2), (0, 1)), (2, 1), (1, 2)),
           expected_conv(x, w, (1, 1), ((1, 2), (0, 1)), (2, 1), (1, 2)), np.float32, 18)
    dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NCHW", "OIHW", "NHWC"))
    assert dn == C.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 3, 1, 2))
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME") == [(1, 1), (0, 1)]
    assert lax.padtype_to_pads((5,), (3,), (2,), "SAME_LOWER") == [(1, 1)]


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 2), (2, 1)])
def test_conv_transpose_is_the_gradient_of_conv(padding, strides):
    rng = np.random.default_rng(4)
    dn = ("NHWC", "HWIO", "NHWC")
    x = jnp.asarray(rng.standard_normal((2, 8, 6, 3)))
    w = jnp.asarray(rng.standard_normal((3, 2, 3, 5)))   # HWIO: 3 -> 5 channels
    y, f_vjp = netcl.vjp(lambda x: C.conv_general_dilated(x, w, strides, padding,
                                                          dimension_numbers=dn), x)
    ct = jnp.asarray(rng.standard_normal(y.shape))
    (want,) = f_vjp(ct)
    got = lax.conv_transpose(ct, w, strides, padding, dimension_numbers=dn,
                             transpose_kernel=True)
    got, want = np.asarray(got), np.asarray(want)
    if padding == "VALID" and strides != (1, 1):
        # VALID sizes differ (Keras' output size vs x's rows the conv never read, whose
        # gradient is 0): compare the overlap
        h, w_ = min(got.shape[1], want.shape[1]), min(got.shape[2], want.shape[2])
        assert not want[:, h:].any() and not want[:, :, w_:].any()
        got, want = got[:, :h, :w_], want[:, :h, :w_]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_conv_transpose_shapes():
    x = jnp.ones((1, 5, 5, 2))
    w = jnp.ones((3, 3, 2, 4))
    assert lax.conv_transpose(x, w, (2, 2), "SAME").shape == (1, 10, 10, 4)
    assert lax.conv_transpose(x, w, (2, 2), "VALID").shape == (1, 11, 11, 4)
    assert lax.conv_transpose(x, w, (1, 1), ((1, 1), (0, 0))).shape == (1, 5, 3, 4)


def test_conv_under_jit():
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.standard_normal((2, 6, 6, 3)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

    def f(x, w):
        y = C.conv_general_dilated(x, w, (1, 1), "SAME",
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lax.reduce_window(jnp.maximum(y, 0.0), -np.inf, lax.max, (1, 2, 2, 1),
                                 (1, 2, 2, 1), "VALID")
    np.testing.assert_allclose(np.asarray(netcl.jit(f)(x, w)), np.asarray(f(x, w)),
                               rtol=1e-6, atol=1e-6)


# ---- bad input ----------------------------------------------------------------------------------

def test_conv_errors():
    x = jnp.ones((2, 3, 5, 5))
    w = jnp.ones((4, 3, 3, 3))
    f = C.conv_general_dilated
    with pytest.raises(ValueError, match=r"conv_general_dilated.*\(3\).*\(2\).*shape \(2, 3, 5, 5\)"
                       r".*dimension_numbers"):
        f(x, jnp.ones((4, 2, 3, 3)), (1, 1), "SAME")                  # channel mismatch
    with pytest.raises(ValueError, match="conv_general_dilated: feature_group_count=2 must "
                       "divide the lhs feature dimension"):
        f(x, jnp.ones((4, 1, 3, 3)), (1, 1), "SAME", feature_group_count=2)
    with pytest.raises(ValueError, match="feature_group_count=2 must divide the rhs output"):
        f(jnp.ones((2, 4, 5, 5)), jnp.ones((3, 2, 3, 3)), (1, 1), "SAME", feature_group_count=2)
    with pytest.raises(ValueError, match="batch_group_count=2 must divide the lhs batch"):
        f(jnp.ones((3, 3, 5, 5)), w, (1, 1), "SAME", batch_group_count=2)
    with pytest.raises(ValueError, match="at most one of feature_group_count"):
        f(jnp.ones((4, 4, 5, 5)), jnp.ones((4, 2, 3, 3)), (1, 1), "SAME",
          feature_group_count=2, batch_group_count=2)
    with pytest.raises(ValueError, match=r"conv_general_dilated: unknown padding 'SAMEE'.*"
                       r"lhs shape \(2, 3, 5, 5\), rhs shape \(4, 3, 3, 3\)"):
        f(x, w, (1, 1), "SAMEE")
    with pytest.raises(TypeError, match=r"conv_general_dilated: lhs and rhs must have the same "
                       r"rank, got lhs shape \(2, 3, 5, 5\) and rhs shape \(4, 3, 3\)"):
        f(x, jnp.ones((4, 3, 3)), (1, 1), "SAME")
    with pytest.raises(ValueError, match=r"window_strides=\(1,\) must have 2 entries"):
        f(x, w, (1,), "SAME")
    with pytest.raises(TypeError, match=r"dimension_numbers\[1\]='HWI' must have one letter"):
        f(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWI", "NHWC"))
    with pytest.raises(TypeError, match="must contain 'O' and 'I' exactly once"):
        f(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIX", "NHWC"))
    with pytest.raises(TypeError, match="same dtype"):
        f(x.astype(np.float32), jnp.ones((4, 3, 3, 3), dtype=np.float64), (1, 1), "SAME")
    with pytest.raises(TypeError, match="floating point"):
        f(jnp.ones((2, 3, 5, 5), dtype=np.int32), jnp.ones((4, 3, 3, 3), dtype=np.int32),
          (1, 1), "SAME")
    with pytest.raises(ValueError, match="negative padding"):
        f(x, w, (1, 1), ((-4, -3), (0, 0)))
    with pytest.raises(ValueError, match="string padding 'SAME' is not defined with "
                       "lhs_dilation"):
        f(x, w, (1, 1), "SAME", lhs_dilation=(2, 1))
    with pytest.raises(TypeError, match="padding must be"):
        f(x, w, (1, 1), 3)


def test_window_errors():
    x = jnp.ones((2, 5, 5, 3))
    with pytest.raises(ValueError, match=r"reduce_window: unknown padding 'FULL'.*"
                       r"operand shape \(2, 5, 5, 3\)"):
        lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "FULL")
    with pytest.raises(ValueError, match=r"window_dimensions=\(2, 2\) must have 4 entries"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match="reduce_window: computation"):
        lax.reduce_window(x, 0.0, lax.mul, (1, 2, 2, 1), (1, 1, 1, 1), "VALID")
    with pytest.raises(ValueError, match="window_strides .* must be positive"):
        C.reduce_window_max(x, (1, 2, 2, 1), (1, 0, 1, 1), "VALID")
    with pytest.raises(ValueError, match=r"select_and_scatter_add: source has shape \(1, 2\)"):
        C.select_and_scatter_add(jnp.ones((1, 2)), jnp.ones((4, 4)), "ge", (2, 2), (2, 2),
                                 "VALID")


# ---- reduce_window ------------------------------------------------------------------------------

@st.composite
def window_problems(draw, dtypes=(np.float32, np.float64)):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(0 if rank > 1 else 1, 5)) for _ in range(rank))
    win = tuple(draw(st.sampled_from([1, 1, 2, 3])) for _ in range(rank))
    strides = tuple(draw(st.sampled_from([1, 1, 2, 3])) for _ in range(rank))
    bd = tuple(draw(st.sampled_from([1, 1, 1, 2])) for _ in range(rank))
    wd = tuple(draw(st.sampled_from([1, 1, 1, 2])) for _ in range(rank))
    kind = draw(st.sampled_from(["SAME", "VALID", "explicit"]))
    if kind == "explicit":
        padding = tuple((draw(st.integers(0, 2)), draw(st.integers(-1, 2))) for _ in range(rank))
        padding = tuple((lo, hi) if (n - 1) * b + 1 + lo + hi >= 0 else (0, 0)
                        for (lo, hi), n, b in zip(padding, shape, bd))
    else:
        padding = kind
    return dict(shape=shape, args=(win, strides, padding, bd, wd),
                dtype=draw(st.sampled_from(dtypes)), seed=draw(st.integers(0, 2**16)),
                layout=draw(st.sampled_from(["dense", "dense", "transposed"])))


def _window_data(p, special=False):
    rng = np.random.default_rng(p["seed"])
    x = rng.uniform(-3, 3, p["shape"]).astype(p["dtype"])
    if special and x.size > 2:
        x.reshape(-1)[rng.integers(0, x.size)] = np.nan
        x.reshape(-1)[rng.integers(0, x.size)] = -np.inf
    return x


@settings(max_examples=30, deadline=None)
@given(window_problems(), st.sampled_from(["max", "add", "min"]), st.booleans())
def test_reduce_window_matches_reference(p, op, special):
    x = _window_data(p, special and op != "add")
    init = {"max": -np.inf, "add": 0.0, "min": np.inf}[op]
    comp = {"max": lax.max, "add": lax.add, "min": lax.min}[op]
    got = lax.reduce_window(to_device(x, p["layout"]), init, comp, *p["args"])
    want = np.asarray(lax.reduce_window(_np_dev(x), init, op, *p["args"])._buf)
    k = int(np.prod(p["args"][0]))
    assert np.asarray(got).dtype == x.dtype
    np.testing.assert_allclose(np.asarray(got, np.float64), want.astype(np.float64), rtol=0,
                               atol=_tol(x.dtype, k) * 3)


def _xla_reduce_window(x, init, op, win, strides, pads, bd, wd):
    """XLA semantics by definition: holes and padding hold init; each window starts at init."""
    fn = {"max": max, "min": min, "add": lambda a, b: a + b}[op]
    dil = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, bd)]
    outs = [max(0, (d + lo + hi - ((w - 1) * e + 1)) // s + 1) if d + lo + hi >= (w - 1) * e + 1
            else 0 for d, (lo, hi), w, s, e in zip(dil, pads, win, strides, wd)]
    out = np.zeros(outs)
    for y in np.ndindex(*outs):
        acc = init
        for k in np.ndindex(*win):
            v = init
            ps = [yy * s + kk * e - lo for yy, s, kk, e, (lo, _) in zip(y, strides, k, wd, pads)]
            if all(0 <= p < d and p % b == 0 for p, d, b in zip(ps, dil, bd)):
                v = x[tuple(p // b for p, b in zip(ps, bd))]
            acc = fn(acc, v)
        out[y] = acc
    return out


@pytest.mark.parametrize("op,init", [("add", 1.5), ("max", 0.25), ("min", -0.5), ("add", 0.0)])
def test_reduce_window_init_value(op, init):
    x = np.random.default_rng(6).uniform(-1, 1, (3, 5)).astype(np.float64)
    args = ((2, 3), (1, 2), ((1, 0), (2, 1)), (2, 1), (1, 1))
    got = lax.reduce_window(jnp.asarray(x), init, op, *args)
    np.testing.assert_allclose(np.asarray(got), _xla_reduce_window(x, init, op, *args),
                               rtol=1e-12, atol=1e-12)


def test_reduce_window_int32_and_pooling():
    x = np.arange(2 * 6 * 6 * 3, dtype=np.int32).reshape(2, 6, 6, 3) % 17
    got = lax.reduce_window(jnp.asarray(x), 0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    np.testing.assert_array_equal(np.asarray(got),
                                  x.reshape(2, 3, 2, 3, 2, 3).sum(axis=(2, 4)))
    got = C.reduce_window_max(jnp.asarray(x), (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    np.testing.assert_array_equal(np.asarray(got), x.reshape(2, 3, 2, 3, 2, 3).max(axis=(2, 4)))


@settings(max_examples=20, deadline=None)
@given(window_problems(), st.sampled_from(["ge", "le"]), st.booleans())
def test_select_and_scatter_gather_match_reference(p, select, special):
    x = _window_data(p, special)
    win, strides, padding, bd, wd = p["args"]
    out_shape = C.reduce_window_max(_np_dev(x), *p["args"]).shape
    rng = np.random.default_rng(p["seed"] + 1)
    src = rng.uniform(-1, 1, out_shape).astype(x.dtype)
    t = rng.uniform(-1, 1, x.shape).astype(x.dtype)
    got = C.select_and_scatter_add(jnp.asarray(src), to_device(x, p["layout"]), select,
                                   *p["args"])
    want = C.select_and_scatter_add(_np_dev(src), _np_dev(x), select, *p["args"])._buf
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=_tol(x.dtype, 9) * 3)
    got = C.select_and_gather_add(to_device(t, p["layout"]), jnp.asarray(x), select,
                                  *p["args"])
    want = C.select_and_gather_add(_np_dev(t), _np_dev(x), select, *p["args"])._buf
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("shape,win,dtype", [
    ((3, 8, 6, 5), (1, 2, 2, 1), np.float32),   # windows tile the operand: no fill pass
    ((2, 9, 9, 3), (1, 3, 3, 1), np.float64),
    ((2, 7, 6, 3), (1, 2, 2, 1), np.float32),   # a remainder row: zero fill, then scatter
    ((5, 3), (1, 1), np.float32)])
def test_select_and_scatter_disjoint_windows(shape, win, dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 3, shape).astype(dtype)  # many ties: the first element must win
    args = (win, win, "VALID", (1,) * len(shape), (1,) * len(shape))
    src = rng.uniform(1, 2, C.reduce_window_max(_np_dev(x), *args).shape).astype(dtype)
    for select in ("ge", "le"):
        got = C.select_and_scatter_add(jnp.asarray(src), jnp.asarray(x), select, *args)
        want = C.select_and_scatter_add(_np_dev(src), _np_dev(x), select, *args)._buf
        np.testing.assert_array_equal(np.asarray(got), want)


def test_select_semantics():
    # ties: the first element of the window wins; NaN wins; all -inf selects the first
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, -np.inf, -np.inf]])
    src = np.array([[10.0, 20.0], [30.0, 40.0]])
    got = C.select_and_scatter_add(jnp.asarray(src), jnp.asarray(x), "ge", (1, 2), (1, 2),
                                   "VALID")
    np.testing.assert_array_equal(np.asarray(got), [[0, 10, 20, 0], [30, 0, 40, 0]])
    got = C.reduce_window_max(jnp.asarray(x), (1, 2), (1, 2), "VALID")
    np.testing.assert_array_equal(np.asarray(got), [[3, 3], [np.nan, -np.inf]])


# ---- derivatives (float64, order 2, forward and reverse) -------------------------------------


GRAD_CASES = [
    ((2, 3, 5, 4), (2, 3, 3, 2), dict(window_strides=(1, 1), padding="SAME")),
    ((2, 4, 5, 4), (6, 2, 3, 2), dict(window_strides=(2, 1), padding=((1, 0), (0, 2)),
                                      feature_group_count=2, rhs_dilation=(1, 2))),
    ((2, 4, 5, 4), (4, 4, 2, 2), dict(window_strides=(1, 2), padding=((1, 1), (-1, 1)),
                                      lhs_dilation=(2, 1))),
    ((4, 3, 5, 4), (4, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID",
                                      batch_group_count=2)),
    ((2, 5, 6, 3), (3, 3, 3, 4), dict(window_strides=(2, 2), padding="SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    ((2, 7, 4), (3, 4, 2), dict(window_strides=(2,), padding="SAME",
                                dimension_numbers=("NWC", "WOI", "NCW"), feature_group_count=2)),
    ((2, 6, 4), (3, 1, 4), dict(window_strides=(1,), padding=((2, 0),), rhs_dilation=(2,),
                                dimension_numbers=("NWC", "WIO", "NWC"),
                                feature_group_count=4)),            # depthwise
    ((1, 2, 3, 3, 4), (2, 2, 2, 1, 2), dict(window_strides=(1, 2, 1), padding="SAME")),
]


@pytest.mark.parametrize("case", range(len(GRAD_CASES)))
def test_conv_grads(case):
    lhs_shape, rhs_shape, kw = GRAD_CASES[case]
    rng = np.random.default_rng(10 + case)
    x = jnp.asarray(rng.standard_normal(lhs_shape))
    w = jnp.asarray(rng.standard_normal(rhs_shape))
    check_grads(lambda x, w: C.conv_general_dilated(x, w, **kw), (x, w), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("case", [0, 4])
def test_conv_grads_gemm_path(impl, case):
    impl("gemm")
    test_conv_grads(case)


@settings(max_examples=8, deadline=None)
@given(conv_problems(dtypes=(np.float64,), max_side=4))
def test_conv_grads_random(p):
    x, w = _data(p)
    check_grads(lambda x, w: C.conv_general_dilated(x, w, **p["kwargs"]),
                (jnp.asarray(x), jnp.asarray(w)), order=1, modes=("fwd", "rev"))


WINDOW_GRAD_CASES = [
    ((2, 6, 6, 3), ((1, 2, 2, 1), (1, 2, 2, 1), "VALID", None, None)),
    ((2, 5, 6, 3), ((1, 3, 2, 1), (1, 1, 2, 1), "SAME", (1, 2, 1, 1), (1, 1, 2, 1))),
    ((5, 7), ((3, 2), (2, 1), ((1, 2), (0, 1)), None, None)),
]


@pytest.mark.parametrize("op", ["max", "add", "min"])
@pytest.mark.parametrize("case", range(len(WINDOW_GRAD_CASES)))
def test_reduce_window_grads(op, case):
    shape, args = WINDOW_GRAD_CASES[case]
    x = jnp.asarray(np.random.default_rng(20 + case).permutation(np.prod(shape))
                    .reshape(shape) / 7.0)            # distinct values: no ties
    init = {"max": -np.inf, "add": 0.0, "min": np.inf}[op]
    check_grads(lambda x: lax.reduce_window(x, init, op, *args), (x,), order=2)


@pytest.mark.parametrize("select", ["ge", "le"])
def test_select_and_scatter_add_grads(select):
    rng = np.random.default_rng(30)
    x = jnp.asarray(rng.permutation(30).reshape(5, 6) / 3.0)
    args = ((2, 3), (1, 2), ((1, 0), (1, 1)))
    out_shape = C.reduce_window_max(x, *args).shape
    src = jnp.asarray(rng.standard_normal(out_shape))
    check_grads(lambda s: C.select_and_scatter_add(s, x, select, *args), (src,), order=2)
    t = jnp.asarray(rng.standard_normal(x.shape))
    check_grads(lambda t: C.select_and_gather_add(t, x, select, *args), (t,), order=2)


# ---- vmap ---------------------------------------------------------------------------------------

VMAP_CASES = [
    ((2, 4, 5, 4), (6, 2, 3, 2), dict(window_strides=(1, 1), padding="SAME",
                                      feature_group_count=2)),
    ((4, 3, 5, 4), (4, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID",
                                      batch_group_count=2)),
    ((2, 5, 6, 3), (3, 3, 3, 4), dict(window_strides=(2, 2), padding="SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))),
]


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1), (None, 3)])
@pytest.mark.parametrize("case", range(len(VMAP_CASES)))
def test_conv_vmap(case, in_axes):
    lhs_shape, rhs_shape, kw = VMAP_CASES[case]
    rng = np.random.default_rng(40 + case)
    nb = 3

    def batched(shape, ax):
        if ax is None:
            return rng.standard_normal(shape).astype(np.float32)
        return np.moveaxis(rng.standard_normal((nb,) + shape).astype(np.float32), 0, ax)
    xa, wa = batched(lhs_shape, in_axes[0]), batched(rhs_shape, in_axes[1])

    def f(a, b):
        return C.conv_general_dilated(a, b, **kw)
    got = netcl.vmap(f, in_axes=in_axes)(jnp.asarray(xa), jnp.asarray(wa))
    pick = lambda a, ax, i: a if ax is None else np.take(a, i, ax)  # noqa: E731
    want = np.stack([np.asarray(f(jnp.asarray(pick(xa, in_axes[0], i)),
                                  jnp.asarray(pick(wa, in_axes[1], i)))) for i in range(nb)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_conv_vmap_of_grad():
    rng = np.random.default_rng(50)
    xs = jnp.asarray(rng.standard_normal((3, 2, 4, 5, 5)).astype(np.float32))
    w = jnp.asarray(rng.standard_normal((2, 4, 3, 3)).astype(np.float32))

    def loss(w, x):
        return jnp.sum(C.conv_general_dilated(x, w, (1, 1), "SAME") ** 2)
    got = netcl.vmap(netcl.grad(loss), in_axes=(None, 0))(w, xs)
    want = np.stack([np.asarray(netcl.grad(loss)(w, xs[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("op", ["max", "add"])
def test_window_vmap(op):
    x = np.random.default_rng(51).standard_normal((3, 2, 5, 6)).astype(np.float32)
    init = -np.inf if op == "max" else 0.0

    def f(a):
        return lax.reduce_window(a, init, op, (1, 2, 2), (1, 2, 1), "SAME")
    got = netcl.vmap(f, in_axes=1)(jnp.asarray(x))
    want = np.stack([np.asarray(f(jnp.asarray(x[:, i]))) for i in range(2)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
    g = netcl.vmap(netcl.grad(lambda a: jnp.sum(f(a) ** 2)), in_axes=1)(jnp.asarray(x))
    want = np.stack([np.asarray(netcl.grad(lambda a: jnp.sum(f(a) ** 2))(jnp.asarray(x[:, i])))
                     for i in range(2)])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(ON_NUMPY, reason="OpenCL kernels only")
def test_split_k_with_gpu_tiles(impl, monkeypatch):
    """GPUs run split-K kernel gradients with big tiles (_split_config); the tiled kernels
    compile on PoCL too, so the path is checked here with the 128x64 tier forced."""
    from netcl.primitives import gemm_tiers
    from netcl.primitives.conv import conv_gemm
    monkeypatch.setattr(conv_gemm, "_split_config",
                        lambda device, tname, M, N: gemm_tiers.GPU_TIERS[tname][1])
    impl("gemm")
    lhs_shape, rhs_shape, kw = GEMM_CASES[-1]     # K = 4352: equal parts
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, lhs_shape).astype(np.float32)
    w = rng.uniform(-1, 1, rhs_shape).astype(np.float32)
    got = C.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), **kw)
    _check(got, expected_conv(x, w, **kw), np.float32, int(np.prod(rhs_shape)))


@pytest.mark.tf32
def test_tf32_policy():
    # TF32 only for float32 at the default and "high" precisions (JAX's meaning on these
    # GPUs) on tensor-core GPUs; lax.Precision names map to the strings the rule reads
    from netcl.primitives.conv import conv_gemm
    from netcl.primitives.conv.dimension_numbers import _canonical_precision
    dev = netcl.default_device()
    if dev.is_numpy:
        pytest.skip("OpenCL devices only")
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    for p in (netcl.lax.Precision.HIGHEST, "highest", "float32"):
        assert not conv_gemm._use_tf32(dev, f32, _canonical_precision(p))
    assert conv_gemm._use_tf32(dev, f32, _canonical_precision(netcl.lax.Precision.HIGH)) == \
        conv_gemm_tf32()
    assert not conv_gemm._use_tf32(dev, f64, None)
    default = conv_gemm._use_tf32(dev, f32, _canonical_precision(netcl.lax.Precision.DEFAULT))
    assert default == (dev.kind != "cpu" and conv_gemm_tf32())
