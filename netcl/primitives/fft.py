"""fft: the discrete Fourier transform of every row along the last axis, with all its rules;
and lax.fft (JAX's FFT / IFFT / RFFT / IRFFT over the trailing axes) built on it.

The primitive is complex to complex: `inverse=False` is NumPy's fft (exp(-2 pi i jk/n), no
scaling), `inverse=True` NumPy's ifft (exp(+2 pi i jk/n) / n). Both are symmetric linear
maps, so each is its own transpose (JAX's VJP convention: no conjugation) and its own JVP.
The real transforms are compositions (a real input made complex, the half spectrum sliced
off; a Hermitian spectrum completed, its inverse's real part), so their derivatives come
from those pieces. The kernels (fft_kernels.py) run a batched Stockham FFT per row.

>>> lax.fft(jnp.ones(4, jnp.complex64), "fft", (4,))      # [4, 0, 0, 0]
"""
import enum

import numpy as np

from ..core import dtypes
from ..core.array import Array
from ..core.shapes import prod
from ..core.tracing import Primitive, ShapedArray
from . import elementwise as ew
from .complex_ops import conj, real

__all__ = ["fft", "FftType"]

fft_p = Primitive("fft", precision="keep_fp32")


def _abstract(x, *, inverse):
    if not dtypes.is_complex(x.dtype):
        raise TypeError(f"fft: operand must be complex64 or complex128, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError("fft: operand must have at least one axis (transformed: the last)")
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _reference(x, *, inverse):
    y = np.fft.ifft(x, axis=-1) if inverse else np.fft.fft(x, axis=-1)
    return np.asarray(y).astype(x.dtype)


def _launcher(device, args, params, out):
    from .fft_kernels import enqueue_fft, fft_plan, scratch_bytes
    (x,) = args
    n, rows = x.shape[-1], prod(x.shape[:-1])
    if n == 0 or rows == 0:
        return lambda x: Array.empty(device, out.shape, out.dtype)
    plan = fft_plan(device, n, rows, x.dtype, params["inverse"])
    need = scratch_bytes(plan)
    itemsize = x.dtype.itemsize

    def launch(x):
        x = x if x._contig else x._dense()
        result = Array.empty(device, out.shape, out.dtype)
        scratch = Array.empty(device, (-(-need // itemsize),), x.dtype)._buf if need else None
        enqueue_fft(device.queue, plan, x._buf, result._buf, scratch,
                    src_offset_elems=x.offset)
        return result
    return launch


def _jvp(primals, tangents, *, inverse):
    from ..core.ad_util import Zero, is_zero
    (x,), (t,) = primals, tangents
    out = fft_p.bind(x, inverse=inverse)
    if is_zero(t):
        return out, Zero(ShapedArray(out.shape, out.dtype, out.weak_type))
    return out, fft_p.bind(t, inverse=inverse)


def _batch(args, dims, *, inverse):
    (x,), (d,) = args, dims
    if d == x.ndim - 1:            # the batch axis must not be the transformed one
        from .views import move_batch_axis
        x, d = move_batch_axis(x, d, 0), 0
    return fft_p.bind(x, inverse=inverse), d


fft_p.abstract_eval = _abstract
fft_p.reference = _reference
fft_p.make_launcher = _launcher
fft_p.jvp = _jvp
fft_p.vjp = lambda ct, out, x, *, inverse: (fft_p.bind(ct, inverse=inverse),)
fft_p.batch = _batch


# ---- lax.fft ----------------------------------------------------------------------------------

class FftType(enum.IntEnum):
    """The kinds of lax.fft, as jax.lax.FftType."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def _fft_type(fft_type):
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            pass
    elif isinstance(fft_type, (int, enum.Enum)):
        try:
            return FftType(int(fft_type.value if isinstance(fft_type, enum.Enum)
                               else fft_type))
        except ValueError:
            pass
    raise ValueError(f"fft: fft_type must be one of FFT, IFFT, RFFT, IRFFT, got {fft_type!r}")


def transform_last(x, inverse):
    """The complex DFT (inverse: NumPy's ifft) of x's rows along its last axis."""
    return fft_p.bind(x, inverse=bool(inverse))


def _along(x, axis, fn):
    """fn (a transform of the last axis) applied along `axis`."""
    from .views import move_batch_axis
    if axis == x.ndim - 1:
        return fn(x)
    return move_batch_axis(fn(move_batch_axis(x, axis, x.ndim - 1)), x.ndim - 1, axis)


def rfft_last(x):
    """The half spectrum (n // 2 + 1 entries) of real x's rows along its last axis."""
    from .views import slice as slice_
    n = x.shape[-1]
    y = transform_last(ew.convert_element_type(x, dtypes.COMPLEX_OF[x.dtype]), False)
    return slice_(y, (0,) * x.ndim, tuple(x.shape[:-1]) + (n // 2 + 1,))


def irfft_last(x, n):
    """The real length-n signal whose half spectrum is x's first n // 2 + 1 entries along
    its last axis (the Hermitian rest completed as conj(x[n - k]), as NumPy's irfft)."""
    from .structural import concatenate
    from .views import rev, slice as slice_
    lead = tuple(x.shape[:-1])
    head = slice_(x, (0,) * x.ndim, lead + (n // 2 + 1,))
    tail_len = n - n // 2 - 1
    parts = [head]
    if tail_len > 0:
        tail = slice_(x, (0,) * (x.ndim - 1) + (1,), lead + (1 + tail_len,))
        parts.append(conj(rev(tail, (x.ndim - 1,))))
    full = concatenate(parts, x.ndim - 1) if len(parts) > 1 else head
    return real(transform_last(full, True))


def fft(x, fft_type, fft_lengths):
    """lax.fft: the FFT of the trailing len(fft_lengths) axes of x, as jax.lax.fft. FFT and
    IFFT take complex x (IFFT scaled by 1/n, as NumPy's ifft); RFFT takes real float x and
    gives the half spectrum along the last axis; IRFFT takes that half spectrum and gives
    the real signal with the last axis of length fft_lengths[-1].

    >>> lax.fft(jnp.arange(4.0), "rfft", (4,))      # [6, -2+2j, -2]
    """
    from .views import operand
    x = operand(x, "fft")
    kind = _fft_type(fft_type)
    try:
        lengths = tuple(int(n) for n in fft_lengths)
    except TypeError:
        raise TypeError(f"fft: fft_lengths must be a sequence of ints, got {fft_lengths!r}") \
            from None
    if not 1 <= len(lengths) <= x.ndim:
        raise ValueError(f"fft: {len(lengths)} fft_lengths for an operand of shape "
                         f"{tuple(x.shape)}")
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    want = tuple(x.shape[a] for a in axes)
    if kind == FftType.IRFFT:
        want = want[:-1] + (lengths[-1] // 2 + 1,)
        if lengths[:-1] != tuple(x.shape[a] for a in axes[:-1]) or \
                x.shape[-1] != lengths[-1] // 2 + 1:
            raise ValueError(f"fft: IRFFT of shape {tuple(x.shape)} needs its trailing axes "
                             f"to be {want} for fft_lengths {lengths}")
    elif want != lengths:
        raise ValueError(f"fft: fft_lengths {lengths} must equal the trailing axes of shape "
                         f"{tuple(x.shape)}")
    if kind in (FftType.FFT, FftType.IFFT, FftType.IRFFT) and not dtypes.is_complex(x.dtype):
        raise TypeError(f"fft: {kind.name} needs a complex operand, got {x.dtype}")
    if kind == FftType.RFFT and x.dtype not in dtypes.COMPLEX_OF:
        raise TypeError(f"fft: RFFT needs a float32 or float64 operand, got {x.dtype}")
    if kind in (FftType.FFT, FftType.IFFT):
        for a in axes:
            x = _along(x, a, lambda v: transform_last(v, kind == FftType.IFFT))
        return x
    if kind == FftType.RFFT:
        x = rfft_last(x)
        for a in axes[:-1]:
            x = _along(x, a, lambda v: transform_last(v, False))
        return x
    for a in axes[:-1]:
        x = _along(x, a, lambda v: transform_last(v, True))
    return irfft_last(x, lengths[-1])
