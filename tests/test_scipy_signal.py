"""netcl.scipy.signal and netcl.scipy.fft against scipy.signal / scipy.fft (whose numbers
jax.scipy's match for these arguments; JAX itself where its defaults differ from scipy's):
convolutions (direct and FFT, N-d, complex, every mode), detrend, stft/istft, welch/csd,
the DCTs; float32 and float64 (x64 on, restored after); derivatives through an FFT
convolution and through welch against JAX's; jit; and bad arguments (typed errors naming
the function). (scipy is the oracle for speed: each jax.scipy call compiles.)"""
import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
import netcl.scipy.fft as nfft
import netcl.scipy.signal as sig

jax = pytest.importorskip("jax")
jsig = pytest.importorskip("jax.scipy.signal")
sps = pytest.importorskip("scipy.signal")
spf = pytest.importorskip("scipy.fft")

TOL = {np.float32: 2e-5, np.float64: 1e-11}


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request):
    """The data dtype; float64 runs with x64 on in netcl and JAX, both restored after."""
    if request.param == np.float64 and not netcl.default_device().capabilities.fp64:
        pytest.skip("the device has no fp64")
    old, old_jax = netcl.config.enable_x64, jax.config.jax_enable_x64
    if request.param == np.float64:
        netcl.config.update("enable_x64", True)
        jax.config.update("jax_enable_x64", True)
    try:
        yield request.param
    finally:
        netcl.config.update("enable_x64", old)
        jax.config.update("jax_enable_x64", old_jax)


def close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    tol = TOL[dtype]
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * 10 * scale)


def data(shape, dtype, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if complex_:
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype if not complex_ else np.result_type(dtype, np.complex64))


# ---- convolutions -----------------------------------------------------------------------------

CONV_SHAPES = [((13,), (4,)), ((3,), (8,)), ((6, 7), (3, 2)), ((4, 5, 6), (2, 3, 2))]


@pytest.mark.parametrize("s1,s2", CONV_SHAPES)
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolve_and_correlate_match_scipy(s1, s2, method, dtype):
    x, h = data(s1, dtype, 1), data(s2, dtype, 2)
    for mode in ("full", "same", "valid"):
        for ours, theirs in ((sig.convolve, sps.convolve), (sig.correlate, sps.correlate)):
            got = ours(jnp.asarray(x), jnp.asarray(h), mode, method)
            assert got.dtype == dtype
            close(got, theirs(x, h, mode, method), dtype)


def test_complex_convolutions_match_scipy(dtype):
    x, h = data((9,), dtype, 3, True), data((4,), dtype, 4, True)
    for mode in ("full", "same", "valid"):
        for method in ("direct", "fft"):
            got = sig.convolve(jnp.asarray(x), jnp.asarray(h), mode, method)
            assert got.dtype == x.dtype
            close(got, sps.convolve(x, h, mode), dtype)
            close(sig.correlate(jnp.asarray(x), jnp.asarray(h), mode, method),
                  sps.correlate(x, h, mode), dtype)


@pytest.mark.parametrize("s1,s2", [((6, 7), (3, 2)), ((3, 2), (6, 7)), ((4, 4), (4, 4))])
def test_2d_convolutions_match_scipy(s1, s2, dtype):
    x, h = data(s1, dtype, 5), data(s2, dtype, 6)
    for mode in ("full", "same", "valid"):
        close(sig.convolve2d(jnp.asarray(x), jnp.asarray(h), mode),
              sps.convolve2d(x, h, mode), dtype)
        close(sig.correlate2d(jnp.asarray(x), jnp.asarray(h), mode),
              sps.correlate2d(x, h, mode), dtype)


def test_fftconvolve_axes_and_modes_match_scipy(dtype):
    x, h = data((3, 11, 4), dtype, 7), data((3, 4, 4), dtype, 8)
    for mode in ("full", "same", "valid"):
        close(sig.fftconvolve(jnp.asarray(x), jnp.asarray(h), mode, axes=1),
              sps.fftconvolve(x, h, mode, axes=1), dtype)
    # (inputs that are length 1 along every axis: a product, no transform)
    close(sig.fftconvolve(jnp.asarray(x[:, :1]), jnp.asarray(h[:1, :1]), axes=(0, 1)),
          sps.fftconvolve(x[:, :1], h[:1, :1], axes=(0, 1)), dtype)


def test_detrend_matches_scipy(dtype):
    d = data((3, 40), dtype, 9) + np.arange(40, dtype=dtype) * 0.3
    for kw in ({}, {"type": "constant"}, {"axis": 0}, {"bp": [7, 25, 39]}):
        got = sig.detrend(jnp.asarray(d), **kw)
        assert got.dtype == dtype
        close(got, sps.detrend(d, **kw), dtype)


# ---- the windowed-FFT family ------------------------------------------------------------------

SPECTRAL = [dict(nperseg=32), dict(nperseg=31, noverlap=10, nfft=40),
            dict(nperseg=32, return_onesided=False, detrend="linear"),
            dict(nperseg=50, scaling="spectrum", window="hamming"), dict(nperseg=32, fs=8.0),
            dict(nperseg=32, average="median")]


@pytest.mark.parametrize("kw", SPECTRAL, ids=range(len(SPECTRAL)))
def test_welch_and_csd_match_scipy(kw, dtype):
    x, y = data((2, 200), dtype, 10), data((2, 200), dtype, 11)
    for ours, theirs in ((sig.welch, sps.welch), (sig.csd, sps.csd)):
        args = (x,) if ours is sig.welch else (x, y)
        got = ours(*[jnp.asarray(a) for a in args], **kw)
        want = theirs(*args, **kw)
        cdt = np.result_type(dtype, np.complex64)
        assert (got[0].dtype, got[1].dtype) == (dtype, dtype if ours is sig.welch else cdt)
        for g, w in zip(got, want):
            close(g, w, dtype)
    f, p = sig.welch(jnp.asarray(x.T), axis=0, nperseg=32)
    wf, wp = sps.welch(x.T, axis=0, nperseg=32)
    close(f, wf, dtype)
    close(p, wp, dtype)


def test_jax_defaults_match_jax():
    """Where jax.scipy's defaults differ from scipy's (nperseg=None: the whole signal)."""
    x, y = data((2, 100), np.float32, 21), data((2, 100), np.float32, 22)
    # (JAX under jit: one compilation, not one per operation)
    for got, want in ((sig.welch(jnp.asarray(x)), jax.jit(jsig.welch)(x)),
                      (sig.csd(jnp.asarray(x), jnp.asarray(y)), jax.jit(jsig.csd)(x, y))):
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            close(g, w, np.float32)


@pytest.mark.parametrize("kw", [dict(nperseg=32), dict(nperseg=16, boundary="even"),
                                dict(nperseg=16, boundary="odd", noverlap=4),
                                dict(nperseg=16, boundary=None, padded=False),
                                dict(nperseg=20, return_onesided=False)], ids=range(5))
def test_stft_matches_scipy_and_istft_inverts_it(kw, dtype):
    x = data((3, 150), dtype, 12)
    got = sig.stft(jnp.asarray(x), **kw)
    want = sps.stft(x, **kw)
    assert [g.dtype for g in got] == [dtype, dtype, np.result_type(dtype, np.complex64)]
    for g, w in zip(got, want):
        close(g, w, dtype)
    if kw.get("boundary", "zeros") == "zeros":
        onesided = kw.get("return_onesided", True)
        t, back = sig.istft(got[2], nperseg=kw["nperseg"], input_onesided=onesided)
        close(back[..., :150], x, dtype)
        close(t, sps.istft(want[2], nperseg=kw["nperseg"])[0], dtype)


def test_istft_axes_match_scipy(dtype):
    _, _, z = sps.stft(data((2, 128), dtype, 13), nperseg=32)
    zt = np.moveaxis(z, 1, 0)             # (freq, batch, time)
    for a, b in zip(sig.istft(jnp.asarray(zt), freq_axis=0, time_axis=-1),
                    sps.istft(zt, freq_axis=0, time_axis=-1)):
        close(a, b, dtype)


# ---- DCTs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("type_", [2, 3])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dcts_match_scipy(type_, norm, dtype):
    x = data((4, 6, 5), dtype, 14)
    for n in (None, 4, 8):
        for ours, theirs in ((nfft.dct, spf.dct), (nfft.idct, spf.idct)):
            got = ours(jnp.asarray(x), type=type_, n=n, axis=1, norm=norm)
            assert got.dtype == dtype
            close(got, theirs(x, type=type_, n=n, axis=1, norm=norm), dtype)
    for ours, theirs in ((nfft.dctn, spf.dctn), (nfft.idctn, spf.idctn)):
        close(ours(jnp.asarray(x), type=type_, norm=norm), theirs(x, type=type_, norm=norm),
              dtype)
        close(ours(jnp.asarray(x), type=type_, s=(3, 7), axes=(0, 2), norm=norm),
              theirs(x, type=type_, s=(3, 7), axes=(0, 2), norm=norm), dtype)
    z = data((7,), dtype, 15, complex_=True)
    close(nfft.dct(jnp.asarray(z), type=type_, norm=norm), spf.dct(z, type=type_, norm=norm),
          dtype)


def test_dct_type_2_matches_jax():
    import jax.scipy.fft as jfft
    x = data((5, 8), np.float32, 16)
    for norm in (None, "ortho"):
        want = jax.jit(lambda v: (jfft.dctn(v, norm=norm), jfft.idct(v, norm=norm)))(x)
        close(nfft.dctn(jnp.asarray(x), norm=norm), want[0], np.float32)
        close(nfft.idct(jnp.asarray(x), norm=norm), want[1], np.float32)


# ---- derivatives, jit -------------------------------------------------------------------------

def test_gradients_through_fft_convolution_and_welch_match_jax(dtype):
    import jax.numpy as jjnp
    x, h = data((24,), dtype, 17), data((5,), dtype, 18)

    def loss(lib, signal, xx, hh):
        c = signal.fftconvolve(xx, hh, "same")
        return lib.sum(c * c) + lib.sum(signal.welch(xx, nperseg=8)[1])
    got = netcl.grad(lambda a, b: loss(jnp, sig, a, b), argnums=(0, 1))(jnp.asarray(x),
                                                                       jnp.asarray(h))
    want = jax.jit(jax.grad(lambda a, b: loss(jjnp, jsig, a, b), argnums=(0, 1)))(x, h)
    for g, w in zip(got, want):
        close(g, w, dtype)
    # the DCT's derivative: it is linear, so the gradient of <dct(x), w> is dct's transpose
    w = data((8,), dtype, 19)
    g = netcl.grad(lambda v: jnp.sum(nfft.dct(v, norm="ortho") * jnp.asarray(w)))(
        jnp.asarray(x[:8]))
    close(g, spf.idct(w.astype(np.float64), norm="ortho"), dtype)


def test_jit_matches_eager():
    x = data((2, 96), np.float32, 20)
    f = netcl.jit(lambda v: (sig.stft(v, nperseg=16)[2], sig.correlate(v[0], v[1, :7]),
                             nfft.dct(v)))
    for a, b in zip(f(jnp.asarray(x)), (sig.stft(jnp.asarray(x), nperseg=16)[2],
                                         sig.correlate(jnp.asarray(x[0]), jnp.asarray(x[1, :7])),
                                         nfft.dct(jnp.asarray(x)))):
        close(a, b, np.float32)


# ---- bad arguments ----------------------------------------------------------------------------

@pytest.mark.parametrize("call,error,words", [
    (lambda: sig.convolve(jnp.ones(3), jnp.ones(2), mode="middle"), ValueError, "convolve"),
    (lambda: sig.convolve(jnp.ones(3), jnp.ones(2), method="winograd"), ValueError, "method"),
    (lambda: sig.correlate(jnp.ones(3), jnp.ones((2, 2))), ValueError, "correlate"),
    (lambda: sig.convolve(jnp.ones((3, 1)), jnp.ones((1, 3))), ValueError, "one input"),
    (lambda: sig.convolve(jnp.ones(3), [1.0, 2.0]), TypeError, "convolve"),
    (lambda: sig.fftconvolve(jnp.ones((2, 3)), jnp.ones((3, 3)), axes=1), ValueError,
     "fftconvolve"),
    (lambda: sig.convolve2d(jnp.ones(3), jnp.ones(3)), ValueError, "2-d"),
    (lambda: sig.correlate2d(jnp.ones((3, 3)), jnp.ones((2, 2)), boundary="wrap"),
     NotImplementedError, "correlate2d"),
    (lambda: sig.detrend(jnp.ones(5), type="quadratic"), ValueError, "detrend"),
    (lambda: sig.detrend(jnp.ones(5), bp=[9]), ValueError, "bp"),
    (lambda: sig.welch(jnp.ones(64), nperseg=16, noverlap=16), ValueError, "noverlap"),
    (lambda: sig.welch(jnp.ones(64), nperseg=16, nfft=8), ValueError, "nfft"),
    (lambda: sig.welch(jnp.ones(64), average="max"), ValueError, "average"),
    (lambda: sig.welch(jnp.ones(64), scaling="power"), ValueError, "scaling"),
    (lambda: sig.stft(jnp.ones(64), boundary="wrap"), ValueError, "boundary"),
    (lambda: sig.istft(jnp.ones(8)), ValueError, "istft"),
    (lambda: sig.istft(jnp.ones((5, 8)), time_axis=0, freq_axis=0), ValueError, "differ"),
    (lambda: nfft.dct(jnp.ones(4), type=1), NotImplementedError, "dct"),
    (lambda: nfft.idct(jnp.ones(4), norm="forward"), ValueError, "idct"),
    (lambda: nfft.dctn(jnp.ones((2, 2)), s=(1, 2, 3)), ValueError, "dctn"),
    (lambda: nfft.idctn(jnp.ones((2, 2)), axes=(0, 0)), ValueError, "idctn"),
])
def test_bad_arguments_raise_typed_errors_naming_the_function(call, error, words):
    with pytest.raises(error, match=words):
        call()
