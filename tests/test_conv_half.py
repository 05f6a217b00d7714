"""Convolutions with float16 and bfloat16 operands (and float32 at the default precision,
TF32 on tensor cores): forward, both gradients and jit's epilogues, against float64
references, on whichever path the device takes (tensor cores with 16-bit operands on NVIDIA
GPUs of sm_80 and newer, the float32 GEMM elsewhere).

The data are multiples of 1/4 in [-2, 2]: every product and sum is exact in float32, so
each path's result, rounded once to the 16-bit dtype, must equal the reference bit for bit.
"""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.primitives import conv as C

HALF = [jnp.bfloat16, jnp.float16]
# float32 at the default precision: TF32 tensor cores on NVIDIA sm_80+ (exact on quarters too)
HALF_AND_TF32 = HALF + [pytest.param(jnp.float32, marks=pytest.mark.tf32, id="float32-tf32")]


def _quarters(rng, shape, dtype):
    return (rng.integers(-8, 9, shape) / 4).astype(np.float32).astype(dtype)


def _exact(got, want):
    """Equal values (a zero's sign aside: float64 references and kernels may differ there)."""
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got).astype(np.float32), want.astype(np.float32))


def _np_conv(x, w, strides, padding, groups=1):
    """NHWC x HWIO -> NHWC in float64, explicit padding [(lo, hi), (lo, hi)]."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    (pt, pb), (pl, pr) = padding
    x = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    n, h, wd, c = x.shape
    kh, kw, cg, o = w.shape
    oh = (h - kh) // strides[0] + 1
    ow = (wd - kw) // strides[1] + 1
    og = o // groups
    out = np.zeros((n, oh, ow, o))
    for g in range(groups):
        xs = x[..., g * cg:(g + 1) * cg]
        ws = w[..., g * og:(g + 1) * og]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
                out[..., g * og:(g + 1) * og] += patch @ ws[i, j]
    return out


def _same(k):
    return ((k - 1) // 2, k // 2)


CASES = [  # (x shape NHWC, w shape HWIO, strides, groups)
    ((2, 9, 7, 16), (3, 3, 16, 24), (1, 1), 1),
    ((2, 8, 8, 3), (3, 3, 3, 32), (1, 1), 1),        # a first layer: 3 channels
    ((3, 9, 9, 8), (3, 3, 8, 16), (2, 2), 1),
    ((2, 6, 6, 32), (1, 1, 32, 40), (1, 1), 1),
    ((2, 7, 7, 16), (3, 3, 8, 16), (1, 1), 2),       # feature groups
]


@pytest.fixture(params=[None, "implicit", "special"])
def im2col_mode(request, monkeypatch):
    if request.param is not None and netcl.default_device().target.kernel_family == "cpu":
        pytest.skip("the GPUs' P modes")
    monkeypatch.setattr(C, "_im2col_override", request.param)
    monkeypatch.setattr(C, "_impl_override", "gemm")
    return request.param


@pytest.mark.parametrize("dtype", HALF_AND_TF32)
@pytest.mark.parametrize("case", CASES)
def test_forward_bit_exact(dtype, case, im2col_mode):
    xs, ws, strides, groups = case
    rng = np.random.default_rng(sum(xs) + sum(ws))
    x, w = _quarters(rng, xs, dtype), _quarters(rng, ws, dtype)
    pad = [_same(ws[0]), _same(ws[1])]
    got = lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), strides, pad,
                                   dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                   feature_group_count=groups)
    assert got.dtype == dtype
    want = _np_conv(x, w, strides, pad, groups).astype(dtype)
    _exact(got, want)


@pytest.mark.parametrize("dtype", HALF)
def test_nchw_layout(dtype, im2col_mode):
    rng = np.random.default_rng(3)
    x, w = _quarters(rng, (2, 16, 7, 6), dtype), _quarters(rng, (24, 16, 3, 3), dtype)
    got = lax.conv_general_dilated(jnp.asarray(x), jnp.asarray(w), (1, 1), "SAME")
    want = _np_conv(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), (1, 1),
                    [(1, 1), (1, 1)]).transpose(0, 3, 1, 2).astype(dtype)
    _exact(got, want)


@pytest.mark.parametrize("dtype", HALF_AND_TF32)
@pytest.mark.parametrize("shape", [(2, 8, 8, 16), (8, 24, 24, 16)])   # (a split-K gradient)
def test_gradients(dtype, shape):
    """Both gradients of a conv against float64 ones of the same 16-bit data, rounded once."""
    rng = np.random.default_rng(shape[0])
    x, w = _quarters(rng, shape, dtype), _quarters(rng, (3, 3, 16, 32), dtype)
    pad = [(1, 1), (1, 1)]
    ct = _quarters(rng, shape[:3] + (32,), dtype)

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), pad,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    _, vjp = netcl.vjp(f, jnp.asarray(x), jnp.asarray(w))
    gx, gw = vjp(jnp.asarray(ct))
    assert gx.dtype == dtype and gw.dtype == dtype
    x64, w64, ct64 = (np.asarray(a, np.float64) for a in (x, w, ct))
    # dx: the cotangent convolved with the flipped, transposed kernel
    want_x = _np_conv(ct64, w64[::-1, ::-1].transpose(0, 1, 3, 2), (1, 1), pad)
    want_w = np.zeros(w64.shape)
    xp = np.pad(x64, ((0, 0), (1, 1), (1, 1), (0, 0)))
    for i in range(3):
        for j in range(3):
            patch = xp[:, i:i + shape[1], j:j + shape[2]]
            want_w[i, j] = np.einsum("nhwc,nhwo->co", patch, ct64)
    _exact(gx, want_x.astype(dtype))
    _exact(gw, want_w.astype(dtype))


@pytest.mark.parametrize("dtype", HALF_AND_TF32)
def test_jit_epilogue(dtype):
    """A conv, a bias and a relu under jit (one kernel where the device takes epilogues)
    equal the eager ops: one rounding of the conv, then the 16-bit bias add and relu."""
    rng = np.random.default_rng(9)
    x, w = _quarters(rng, (4, 10, 10, 16), dtype), _quarters(rng, (3, 3, 16, 32), dtype)
    b = _quarters(rng, (32,), dtype)

    def f(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jnp.maximum(y + b, 0)
    args = (jnp.asarray(x), jnp.asarray(w), jnp.asarray(b))
    got = netcl.jit(f)(*args)
    conv = _np_conv(x, w, (1, 1), [(1, 1), (1, 1)]).astype(dtype).astype(np.float64)
    want = np.maximum((conv + np.asarray(b, np.float64)).astype(dtype), 0).astype(dtype)
    assert got.dtype == dtype
    _exact(got, want)
    _exact(f(*args), want)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("shape", [(256, 8192, 10), (64, 96, 48)])   # (a split K on GPUs)
def test_matmul(dtype, shape):
    """16-bit products (a classifier's long K runs in float32 chunks on GPUs), rounded once."""
    M, K, N = shape
    rng = np.random.default_rng(K)
    a, b = _quarters(rng, (M, K), dtype), _quarters(rng, (K, N), dtype)
    got = jnp.asarray(a) @ jnp.asarray(b)
    _exact(got, (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype))


@pytest.mark.parametrize("dtype", HALF)
def test_matmul_epilogue(dtype):
    """A 16-bit product, a bias and a relu under jit (one kernel where the device takes
    epilogues) equal the eager ops, each rounded once."""
    rng = np.random.default_rng(5)
    a, b = _quarters(rng, (96, 64), dtype), _quarters(rng, (64, 80), dtype)
    c = _quarters(rng, (80,), dtype)

    def f(a, b, c):
        return jnp.maximum(a @ b + c, 0)
    args = tuple(jnp.asarray(v) for v in (a, b, c))
    prod = (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype).astype(np.float64)
    want = np.maximum((prod + c.astype(np.float64)).astype(dtype), 0).astype(dtype)
    _exact(netcl.jit(f)(*args), want)
    _exact(f(*args), want)
