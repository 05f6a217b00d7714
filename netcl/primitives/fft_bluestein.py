"""Device DFTs of lengths with a prime factor above 7, which the mixed-radix Stockham passes
do not take (plans: fft_kernels.py).

- n <= direct_max(device) (64 on GPUs; 8 on CPU devices, which leaves them none): the
  direct sum
  X[k] = sum_j x[j] W_n^(j k), a work-item per output, W_n^(j k) read from a table of the n
  roots at (j k) mod n. O(n^2) per row, but one launch and no scratch.
- longer rows: Bluestein's algorithm. With the chirp c_j = exp(-pi i j^2 / n), j k =
  (j^2 + k^2 - (k - j)^2) / 2 turns the DFT into a convolution:

      X_k = c_k sum_j (x_j c_j) conj(c_(k-j)),

  computed circularly at a power-of-two length M >= 2n - 1: A = FFT_M(x c, zero-padded),
  X = c * IFFT_M(A B) with B = FFT_M(conj(c) placed circularly), taken once in float64 on
  the host. The inverse FFT is a forward one between conjugations, IFFT(Y) = conj(FFT(conj
  Y)) / M, so the whole transform is two chained forward power-of-two FFTs whose first
  pass reads (conj x) c and whose last pass writes their product with a table:

      K1: w = conj(FFT_M(x c) * B / M)        K2: X = conj(FFT_M(w) * conj(c))

  (the inverse DFT conjugates x on K1's load and not K2's result, and scales by 1/n).
  Chirp angles are exact: j^2 is reduced mod 2n in integers before the float64 cosine and
  sine (fft_codelets.unit_roots).

    >>> passes, tables, m, regions = bluestein_passes(dev, 1009, 4, np.dtype(np.complex64),
    ...                                               inverse=False)
    >>> m, regions                      # rows of 2048 in one scratch region
    (2048, 1)
"""
import numpy as np

from ..core import kernels
from .fft_passes import (FftPass, PassArgs, build_kernels, chain_roles, device_table,
                         stockham_passes, stockham_shapes)
from .fft_codelets import unit_roots
from .fft_stockham import real_ctype

# The direct DFT up to these lengths (Bluestein above), for lengths the Stockham passes do
# not take. GPUs: a row of 64 costs 64 x 64 complex multiply-adds, spread over 64
# work-items, in one launch instead of two and without scratch. CPU devices (PoCL): the
# direct kernel keeps up with Bluestein only for the shortest rows, and every length up to
# 8 is a Stockham one there.
DIRECT_MAX_GPU = 64
DIRECT_MAX_CPU = 8


def direct_max(device):
    """The longest length (with a prime factor above 7) `device` transforms with the direct
    DFT."""
    return DIRECT_MAX_CPU if device.target.host_cpu else DIRECT_MAX_GPU

DIRECT_KERNEL = "netcl_fft_direct"


def direct_source(dtype):
    """OpenCL C of the direct DFT of rows of runtime length n (first 8 arguments as a
    Stockham pass's: fft_kernels.enqueue_fft sets 0, 1, 4 and 5 per call)."""
    R = real_ctype(dtype)
    return f"""// direct DFT, a work-item per output
__kernel void {DIRECT_KERNEL}(__global const {R}* restrict in, const long in_off,
    const int in_row, const int in_len, __global {R}* restrict out, const long out_off,
    const int out_row, const int out_len, __global const {R}* restrict tw, const int n,
    const {R} conj_in, const {R} conj_out, const {R} scale, const long total) {{
  const long g = get_global_id(0);
  if (g >= total) return;
  const long b = g / n;
  const int k = (int)(g - b * n);
  __global const {R}* x = in + 2 * (in_off + b * in_row);
  {R} accr = 0, acci = 0;
  int at = 0;                       // (j k) mod n, kept without a multiplication
  for (int j = 0; j < n; ++j) {{
    const {R} xr = x[2 * j], xi = x[2 * j + 1] * conj_in, c = tw[2 * at], d = tw[2 * at + 1];
    accr += xr * c - xi * d;
    acci += xr * d + xi * c;
    at += k;
    if (at >= n) at -= n;
  }}
  __global {R}* y = out + 2 * (out_off + b * out_row + k);
  y[0] = accr * scale;
  y[1] = acci * (conj_out * scale);
}}
"""


def roots(n):
    """W_n^k = exp(-2 pi i k / n), k < n, in float64 (within an ulp: unit_roots)."""
    return unit_roots(np.arange(n), n)


def direct_passes(device, n, batch, dtype, inverse):
    """([FftPass], tables) of the direct DFT of `batch` rows of `n` from src to dst."""
    real = np.float32 if dtype == np.complex64 else np.float64
    (k,) = build_kernels(device, [direct_source(dtype)], DIRECT_KERNEL)
    tw = device_table(device, ("roots", n), dtype, lambda: roots(n))
    total = batch * n
    for i, v in ((2, np.int32(n)), (3, np.int32(n)), (6, np.int32(n)), (7, np.int32(n)),
                 (8, tw), (9, np.int32(n)), (10, real(-1 if inverse else 1)),
                 (11, real(-1 if inverse else 1)), (12, real(1.0 / n if inverse else 1.0)),
                 (13, np.int64(total))):
        k.set_arg(i, v)
    wg = device.work_group
    sizes = ((max(kernels.round_up(total, wg), wg),), (wg,))
    return [FftPass(k, *sizes, "src", "dst", f"direct DFT of {n}")], (tw,)


def chirp(n):
    """c_j = exp(-pi i j^2 / n) = W_2n^(j^2), j < n, from j^2 mod 2n (exact integers) in
    float64 (within an ulp: unit_roots)."""
    j = np.arange(n, dtype=np.int64)
    return unit_roots((j * j) % (2 * n), 2 * n)


def chirp_spectrum(n, m):
    """B / M: the length-m FFT (NumPy, float64) of conj(c) placed circularly (entries 0..n-1
    and m-n+1..m-1), over m (K2's FFT is an unnormalised inverse)."""
    c = np.conj(chirp(n))
    b = np.zeros(m, np.complex128)
    b[:n] = c
    b[m - n + 1:] = c[1:][::-1]
    return np.fft.fft(b) / m


def bluestein_passes(device, n, batch, dtype, inverse):
    """(passes, tables, M, scratch regions) of Bluestein's algorithm for `batch` rows of `n`
    (scratch regions of batch * M elements)."""
    m = 1 << (2 * n - 2).bit_length()           # the least power of two >= 2n - 1
    shapes = stockham_shapes(device, m, dtype)
    p, last = len(shapes), len(shapes) - 1
    pre = device_table(device, ("chirp", n), dtype, lambda: chirp(n))
    spectrum = device_table(device, ("chirp_spectrum", n, m), dtype,
                            lambda: chirp_spectrum(n, m))
    post = device_table(device, ("conj_chirp", n), dtype, lambda: np.conj(chirp(n)))
    first = [PassArgs(n if i == 0 else m, n if i == 0 else m, m, m,
                      pre=pre if i == 0 else None, post=spectrum if i == last else None,
                      conj_in=inverse and i == 0, conj_out=i == last) for i in range(p)]
    second = [PassArgs(m, m, n if i == last else m, n if i == last else m,
                       post=post if i == last else None,
                       conj_out=i == last and not inverse,
                       scale=1.0 / n if inverse and i == last else 1.0) for i in range(p)]
    roles, regions = chain_roles(2 * p, dst_holds_rows=False)
    passes, tables = stockham_passes(device, shapes + shapes, dtype, batch, first + second,
                                     roles)
    return passes, tuple(tables) + (pre, spectrum, post), m, regions
