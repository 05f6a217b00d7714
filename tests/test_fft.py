"""jnp.fft and lax.fft against NumPy and JAX: every transform, lengths that are powers of
two and not (Bluestein), n=/s=/axes=/norm=, derivatives (float64 against JAX and finite
differences), jit and vmap, and bad inputs. The kernels alone: test_fft_kernels.py."""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import lax
from netcl.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402


def close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def _signal(shape, complex_=False, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(np.complex64 if dtype == np.float32 else np.complex128)
    return x.astype(dtype)


ONE_AXIS = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_INPUT = {"rfft", "ihfft", "rfft2", "rfftn"}


@pytest.mark.parametrize("name", ONE_AXIS)
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 12, 16, 17, 64, 100, 256])
def test_one_axis_transforms_match_numpy(name, n):
    x = _signal((3, n), complex_=name not in REAL_INPUT)
    if name in ("irfft", "hfft") and n == 1:
        return     # (NumPy: invalid number of data points 0)
    want = getattr(np.fft, name)(x)
    tol = 2e-5 * max(1.0, np.log2(n))
    close(getattr(jnp.fft, name)(jnp.asarray(x)), want.astype(
        np.float32 if want.dtype.kind == "f" else np.complex64), tol)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                                  "irfftn"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_multi_axis_transforms_and_norms_match_numpy(name, norm):
    x = _signal((2, 6, 8), complex_=name not in REAL_INPUT, dtype=np.float64)
    want = getattr(np.fft, name)(x, norm=norm)
    close(getattr(jnp.fft, name)(jnp.asarray(x), norm=norm), want, 1e-12)
    s, axes = (5, 4), (0, 2)
    want = getattr(np.fft, name)(x, s=s, axes=axes, norm=norm)
    close(getattr(jnp.fft, name)(jnp.asarray(x), s=s, axes=axes, norm=norm), want, 1e-12)


def test_lengths_norms_and_axes_of_one_axis_transforms():
    x = _signal((4, 10), complex_=True, dtype=np.float64)
    for name in ONE_AXIS:
        src = x.real.copy() if name in REAL_INPUT else x
        for n, axis, norm in ((7, -1, None), (16, 0, "ortho"), (3, 1, "forward")):
            want = getattr(np.fft, name)(src, n=n, axis=axis, norm=norm)
            close(getattr(jnp.fft, name)(jnp.asarray(src), n=n, axis=axis, norm=norm), want,
                  1e-12)


def test_large_batched_and_long_transforms():
    x = _signal((64, 1024), complex_=True, seed=1)
    close(jnp.fft.fft(jnp.asarray(x)), np.fft.fft(x).astype(np.complex64), 2e-4)
    y = _signal((1, 1 << 15), complex_=True, seed=2)
    close(jnp.fft.ifft(jnp.asarray(y)), np.fft.ifft(y).astype(np.complex64), 2e-4)
    z = _signal((2, 1000), seed=3)
    close(jnp.fft.irfft(jnp.fft.rfft(jnp.asarray(z)), n=1000), z, 2e-5)


def test_lax_fft_matches_jax():
    x = _signal((3, 4, 8), complex_=True)
    r = _signal((3, 4, 8))
    with jax.enable_x64(netcl.config.enable_x64):
        cases = [(x, "fft", (4, 8)), (x, "ifft", (8,)), (r, "rfft", (4, 8)),
                 (np.asarray(jax.lax.fft(r, "rfft", (4, 8))), "irfft", (4, 8))]
        for v, kind, lengths in cases:
            want = jax.lax.fft(v, kind.upper(), lengths)
            close(lax.fft(jnp.asarray(v), kind, lengths), want, 2e-5)
            close(lax.fft(jnp.asarray(v), lax.FftType[kind.upper()], lengths), want, 2e-5)


GRAD_CASES = {
    "fft": lambda m, x: m.sum(m.abs(m.fft.fft(x * (1 + 0.5j))) ** 2),
    "ifft_real": lambda m, x: m.sum(m.real(m.fft.ifft(x * x, n=7)) * m.arange(7.0)),
    "rfft": lambda m, x: m.sum(m.abs(m.fft.rfft(x, norm="ortho")) * m.arange(4.0)),
    "irfft": lambda m, x: m.sum(m.fft.irfft(m.fft.rfft(x) * (2 - 1j), n=6) ** 3),
    "fft2": lambda m, x: m.sum(m.imag(m.fft.fft2(x.reshape(2, 3) * 1j + x.reshape(2, 3) ** 2))),
    "hfft": lambda m, x: m.sum(m.sin(m.fft.hfft(x[:4])))
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_jax(name):
    x = np.linspace(-1.0, 1.3, 6)
    f = GRAD_CASES[name]
    with jax.enable_x64(True):
        want = jax.grad(lambda v: f(jjnp, v))(x)
    close(netcl.grad(lambda v: f(jnp, v))(jnp.asarray(x)), want, 1e-10)


def test_jvp_vjp_against_finite_differences_jit_and_vmap():
    z = _signal((3, 5), complex_=True, dtype=np.float64, seed=4)
    check_grads(lambda v: jnp.fft.fft(v * v), (z,), order=2, modes=("fwd", "rev"))
    check_grads(lambda v: jnp.fft.irfft(v, n=8), (z,), order=1, modes=("fwd", "rev"))
    x = _signal((4, 16), complex_=True, seed=5)
    f = lambda v: jnp.fft.ifft(jnp.fft.fft(v) * jnp.exp(-v))  # noqa: E731
    want = np.fft.ifft(np.fft.fft(x) * np.exp(-x))
    close(netcl.jit(f)(jnp.asarray(x)), want.astype(np.complex64), 1e-4)
    want_cols = np.fft.ifft(np.fft.fft(x, axis=0) * np.exp(-x), axis=0)
    close(netcl.vmap(f, in_axes=1, out_axes=1)(jnp.asarray(x)), want_cols.astype(np.complex64),
          1e-4)
    close(netcl.vmap(lambda v: jnp.fft.rfft(v))(jnp.asarray(x.real)),
          np.fft.rfft(x.real).astype(np.complex64), 1e-4)


def test_bad_inputs_raise_clear_errors():
    x = jnp.ones((2, 4))
    with pytest.raises(ValueError, match="fft.fft: n must be a non-negative int"):
        jnp.fft.fft(x, n=-1)
    with pytest.raises(ValueError, match="fft.fft: transform lengths must be positive"):
        jnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="fft.fft2: axes"):
        jnp.fft.fft2(x, axes=(0, 0))
    with pytest.raises(TypeError, match="fft.rfft: a must be real"):
        jnp.fft.rfft(x * 1j)
    with pytest.raises(ValueError, match="fft.ifft: norm"):
        jnp.fft.ifft(x, norm="bogus")
    with pytest.raises(ValueError, match="fft: fft_type"):
        lax.fft(x * 1j, "dct", (4,))
    with pytest.raises(ValueError, match="fft: fft_lengths"):
        lax.fft(x * 1j, "fft", (5,))
    with pytest.raises(TypeError, match="fft: FFT needs a complex operand"):
        lax.fft(x, "fft", (4,))
    with pytest.raises(ValueError, match="fft.fft: a must have at least one axis"):
        jnp.fft.fft(jnp.asarray(1.0))
