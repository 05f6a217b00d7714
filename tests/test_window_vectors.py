"""The vector window kernels (conv/window_vectors.py): pooling over NHWC's H and W with
several adjacent channels per work-item gives the scalar kernels' results bit for bit, and
runs wherever the channels, offsets and strides allow aligned vectors."""
import ml_dtypes
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.primitives import conv as C
from netcl.primitives.conv import scatter_epilogue, window_vectors
from netcl.primitives.conv.pooling import _window_args, _window_out_shape
from netcl.primitives.conv.window_kernels import _window_classes

ON_OPENCL = not netcl.default_device().is_numpy
DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16]
POOL = ((1, 2, 2, 1), (1, 2, 2, 1), "VALID")
WINDOWS = [POOL, ((1, 3, 3, 1), (1, 1, 1, 1), "SAME"), ((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
           ((2, 3, 2, 1), (1, 2, 1, 1), ((0, 1), (1, 1), (0, 1), (0, 0)), (1, 2, 1, 1),
            (1, 1, 2, 1))]    # padding, base and window dilation


def _classes(shape, win, strides, padding, base_dilation=None, window_dilation=None):
    params = _window_args("test", jnp.zeros(shape), win, strides, padding, base_dilation,
                          window_dilation)
    return _window_classes(shape, _window_out_shape("test", shape, **params), params)


def _strides(shape):
    return tuple(int(np.prod(shape[d + 1:])) for d in range(len(shape)))


def test_vector_width():
    shape = (4, 8, 8, 64)

    def vw(dtype, cls, arrays, other=()):
        return window_vectors.vector_width(np.dtype(dtype), cls, arrays,
                                           [np.dtype(d) for d in other])
    cls = _classes(shape, *POOL)
    assert cls == "TVVT"
    dense = [(shape, _strides(shape), 0)]
    assert vw(ml_dtypes.bfloat16, cls, dense) == 8          # 16 bytes of 16-bit values
    assert vw(np.float16, cls, dense) == 8
    assert vw(np.float32, cls, dense) == 4
    assert vw(np.float64, cls, dense) == 1                  # scalar kernels
    assert vw(np.int32, cls, dense) == 1
    assert vw(np.float32, cls, dense, [np.int32]) == 1      # an epilogue's int output
    assert vw(ml_dtypes.bfloat16, cls, [((4, 8, 8, 6), (384, 48, 6, 1), 0)]) == 2
    assert vw(ml_dtypes.bfloat16, cls, [((4, 8, 8, 3), (192, 24, 3, 1), 0)]) == 1
    assert vw(ml_dtypes.bfloat16, cls, [(shape, _strides(shape), 4)]) == 4   # offset
    assert vw(ml_dtypes.bfloat16, cls, [((4, 8, 8, 64), (8 * 8 * 66, 8 * 66, 66, 1), 0)]) == 2
    assert vw(ml_dtypes.bfloat16, cls, [((4, 8, 8, 64), (1, 2048, 256, 4), 0)]) == 1
    assert vw(np.float32, "TVVV", dense) == 1                # windows along the last dim
    assert vw(np.float32, "TVVT", [((1, 8, 8, 64), (7, 512, 64, 1), 0)]) == 4  # size-1 dim


def _data(shape, dtype, seed):
    """Small integers (ties everywhere), signed zeros, infinities and NaNs."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, shape).astype(np.float32)
    flat = x.reshape(-1)
    for v in (np.nan, -np.inf, np.inf, -0.0):
        flat[rng.integers(0, x.size, 3)] = v
    return x.astype(dtype)


def _vector_and_scalar(x, c, lo=0):
    """(channels lo .. lo + c of x as a dense array: the vector kernels, the same channels as
    a view whose row stride is x's odd channel count: the scalar kernels)."""
    assert x.shape[-1] % 2 == 1
    dense = jnp.asarray(np.ascontiguousarray(x[..., lo:lo + c]))
    return dense, jnp.asarray(x)[..., lo:lo + c]


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), np.argwhere(a.view(np.uint8) != b.view(np.uint8))[:5]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c", [16, 6])
@pytest.mark.parametrize("window", WINDOWS)
def test_reduce_window_vectors_match_scalar(dtype, c, window):
    x = _data((2, 7, 6, c + 1), dtype, c)
    vec, sca = _vector_and_scalar(x, c)
    assert window_vectors.vector_width(np.dtype(dtype), _classes(vec.shape, *window),
                                       [(vec.shape, vec.strides, vec.offset)]) > 1
    for op, init in ((lax.max, -np.inf), (lax.min, np.inf), (lax.add, 0.0)):
        _same_bits(lax.reduce_window(vec, init, op, *window),
                   lax.reduce_window(sca, init, op, *window))
        want = lax.reduce_window(vec, init, op, *window)
        assert np.asarray(want).dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c,lo", [(8, 0), (8, 2), (6, 0)])
def test_pooling_gradient_vectors_match_scalar(dtype, c, lo):
    x = _data((3, 4, 6, 11), dtype, c + lo)
    vec, sca = _vector_and_scalar(x, c, lo)
    src = jnp.asarray(np.random.default_rng(1).standard_normal((3, 2, 3, c)).astype(dtype))
    for select in ("ge", "le"):
        _same_bits(C.select_and_scatter_add(src, vec, select, *POOL),
                   C.select_and_scatter_add(src, sca, select, *POOL))
    # an offset source view, aligned to 2 channels only
    big = np.random.default_rng(2).standard_normal((3, 2, 3, c + 2)).astype(dtype)
    s_view = jnp.asarray(big)[..., 2:]
    _same_bits(C.select_and_scatter_add(s_view, vec, "ge", *POOL),
               C.select_and_scatter_add(jnp.asarray(np.ascontiguousarray(big[..., 2:])), sca,
                                        "ge", *POOL))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("c", [16, 6])
def test_pooling_gradient_epilogue_vectors(dtype, c, monkeypatch):
    """The relu mask the max-pooling gradient takes in jit (scatter_epilogue.py), with a
    second output reading an extra: the vector kernel's outputs are the scalar one's."""
    x = jnp.asarray(_data((2, 4, 6, c), dtype, c))
    e = jnp.asarray(_data((2, 4, 6, c), dtype, c + 1))
    t = jnp.asarray(np.random.default_rng(3).standard_normal((2, 2, 3, c)).astype(dtype))

    def f(x, e, t):
        g = lax.select_and_scatter_add(t, x, "ge", *POOL)
        return jnp.where(e > 0, g, jnp.zeros_like(g)), g * e
    low = netcl.jit(f).lower(x, e, t)
    assert len(low.kernels) == 1, low.as_text()
    if ON_OPENCL:
        lanes = 2 if c == 6 else 16 // np.dtype(dtype).itemsize
        kind = "float" if dtype == np.float32 else "ushort"
        assert f"{kind}{lanes}*" in low.kernels[0].source
    got = netcl.jit(f)(x, e, t)
    monkeypatch.setattr(scatter_epilogue, "vector_width", lambda *a: 1)
    low = netcl.jit(f).lower(x, e, t)
    if ON_OPENCL:
        assert "float2" not in low.kernels[0].source
    for a, b in zip(got, netcl.jit(f)(x, e, t)):
        _same_bits(a, b)
