"""Straight-line OpenCL C of small DFTs ("codelets") on values in registers, for the steps of
the Stockham passes (fft_stockham.py).

A codelet of length m takes m complex values, each a (re, im) pair of C expressions of a
scalar type (or of a vector type, one transform per lane), and returns the m outputs of

    X[k] = sum_j x[j] W_m^(j k),    W_m = exp(-2 pi i / m)     (forward: the kernels
                                                              conjugate for the inverse)

as pairs naming fresh `const` locals. Composite m is split by its smallest prime factor p
(decimation in time: p codelets of m / p on the inputs j = r mod p, their outputs rotated by
W_m^(r k), then m / p butterflies of p); 2-point butterflies are a sum and a difference,
odd primes (3, 5, 7) use their conjugate symmetry:

    X[k], X[p - k] = A_k -/+ i B_k,   A_k = x0 + sum_j (x_j + x_(p-j)) cos(2 pi j k / p),
                                      B_k = sum_j (x_j - x_(p-j)) sin(2 pi j k / p)

(j, k = 1 .. (p - 1) / 2): (p - 1)^2 real multiplications instead of the (p - 1)^2 complex
ones of the direct sum. Rotations by +-1 and +-i are exact sign and part swaps; every other
constant is a float64 cosine or sine within an ulp (`unit_roots`, which the twiddle tables
use too) printed to 17 digits: exact for complex128, rounded once more by the OpenCL
compiler for complex64. Powers of two split by 2 all the way down: the radix-2/4/8 steps'
decimation in time as it was before odd radices.

    >>> em = Emitter("float", "s0_", lanes=1)
    >>> ys = em.dft([("ar", "ai"), ("br", "bi"), ("cr", "ci")])     # a 3-point DFT
    >>> "\\n".join(em.lines)        # const float s0_0r = ..., s0_0i = ...; ...
"""
import numpy as np


def smallest_factor(m):
    """The smallest prime factor of `m` >= 2."""
    p = 2
    while m % p:
        p += 1 if p == 2 else 2
        if p * p > m:
            return m
    return p


def unit_roots(num, den):
    """W_den^num = exp(-2 pi i num / den) (complex128) for integers `num`, `den` > 0 (arrays
    or scalars): reduced to an angle of at most pi / 4 from the exact fraction, its cosine
    and sine taken in long double (x86: 64-bit mantissa) and rounded once, so entries are
    within an ulp (np.exp of the float64 angle: up to 9 ulps, which showed in complex128
    transforms' errors).

    >>> unit_roots(np.arange(3), 3)      # 1, -1/2 - i sqrt(3)/2, -1/2 + i sqrt(3)/2
    """
    num, den = np.broadcast_arrays(np.asarray(num, np.int64), np.asarray(den, np.int64))
    # the angle 2 pi num / den = (octant + rem / den) pi / 4. In an even octant, the angle
    # past the quadrant's start is a = (rem / den) pi / 4; in an odd one, pi / 2 - b with
    # b = ((den - rem) / den) pi / 4, whose cosine and sine are a's sine and cosine
    octant, rem = np.divmod(8 * (num % den), den)
    odd = octant % 2 == 1
    part = np.where(odd, den - rem, rem).astype(np.longdouble) / den
    angle = np.arctan(np.longdouble(1)) * part          # <= pi / 4
    cos, sin = np.cos(angle), np.sin(angle)
    c, s = np.where(odd, sin, cos), np.where(odd, cos, sin)
    quadrant = octant // 2          # each quarter turn: (cos, sin) -> (-sin, cos)
    cos_all = np.select([quadrant == 0, quadrant == 1, quadrant == 2], [c, -s, -c], s)
    sin_all = np.select([quadrant == 0, quadrant == 1, quadrant == 2], [s, c, -s], -c)
    return cos_all.astype(np.float64) - 1j * sin_all.astype(np.float64)


def literal(x, real):
    """The C literal of float64 `x` as `real` (float: an f suffix, rounded by the compiler)."""
    return f"{x:.17g}" + ("f" if real == "float" else "")


class Emitter:
    """C statements over complex values held as (re, im) pairs of expressions of a scalar
    type (or of vectors of `lanes`), each intermediate a fresh const pair named from
    `prefix`; `lines` collects them."""

    def __init__(self, real, prefix, lanes):
        self.real, self.prefix = real, prefix
        self.ctype = real if lanes == 1 else f"{real}{lanes}"
        self.lines, self.count = [], 0

    def let(self, re, im):
        name = f"{self.prefix}{self.count}"
        self.count += 1
        self.lines.append(f"const {self.ctype} {name}r = {re}, {name}i = {im};")
        return f"{name}r", f"{name}i"

    def mul(self, v, w):
        """v times w (both pairs of expressions)."""
        (a, b), (c, d) = v, w
        return self.let(f"{a} * {c} - {b} * {d}", f"{a} * {d} + {b} * {c}")

    def rotate(self, v, k, radix):
        """v times W_radix^k, with the exact constants (forward direction)."""
        (a, b), k = v, k % radix
        if k == 0:
            return v
        if 4 * k == radix:              # -i
            return b, f"(-{a})"
        if 2 * k == radix:              # -1
            return f"(-{a})", f"(-{b})"
        if 4 * k == 3 * radix:          # +i
            return f"(-{b})", a
        w = complex(unit_roots(k, radix))
        return self.mul(v, (literal(w.real, self.real), literal(w.imag, self.real)))

    def _terms(self, head, pairs):
        """The C sum `head` + c1 * x1 + c2 * x2 ... of (float64 c, expression x) `pairs`
        (zero coefficients dropped, signs folded into the operators)."""
        text = head or ""
        for c, x in pairs:
            if abs(c) < 1e-15:
                continue
            sign = "-" if c < 0 else "+"
            term = x if abs(abs(c) - 1.0) < 1e-15 else f"{literal(abs(c), self.real)} * {x}"
            text = (f"{text} {sign} {term}" if text else
                    (term if sign == "+" else f"-({term})"))
        return text or "0"

    def odd_prime(self, xs):
        """The DFT of an odd prime number of values `xs` (see the module docstring)."""
        p = len(xs)
        h = (p - 1) // 2
        sums = [self.let(f"{xs[j][0]} + {xs[p - j][0]}", f"{xs[j][1]} + {xs[p - j][1]}")
                for j in range(1, h + 1)]
        diffs = [self.let(f"{xs[j][0]} - {xs[p - j][0]}", f"{xs[j][1]} - {xs[p - j][1]}")
                 for j in range(1, h + 1)]
        (x0r, x0i) = xs[0]
        out = [None] * p
        out[0] = self.let(" + ".join([x0r] + [s[0] for s in sums]),
                          " + ".join([x0i] + [s[1] for s in sums]))
        for k in range(1, h + 1):
            w = unit_roots(np.arange(1, h + 1) * k, p)        # cos - i sin
            cos, sin = w.real.tolist(), (-w.imag).tolist()
            a = self.let(self._terms(x0r, [(c, s[0]) for c, s in zip(cos, sums)]),
                         self._terms(x0i, [(c, s[1]) for c, s in zip(cos, sums)]))
            b = self.let(self._terms(None, [(s, d[0]) for s, d in zip(sin, diffs)]),
                         self._terms(None, [(s, d[1]) for s, d in zip(sin, diffs)]))
            # X_k = A - i B, X_(p-k) = A + i B
            out[k] = self.let(f"{a[0]} + {b[1]}", f"{a[1]} - {b[0]}")
            out[p - k] = self.let(f"{a[0]} - {b[1]}", f"{a[1]} + {b[0]}")
        return out

    def dft(self, xs):
        """The DFT of the values `xs` (any length; mixed-radix decimation in time), as
        pairs."""
        m = len(xs)
        if m == 1:
            return list(xs)
        p = smallest_factor(m)
        if p == m and p > 2:
            return self.odd_prime(xs)
        q = m // p
        subs = [self.dft(xs[r::p]) for r in range(p)]
        out = [None] * m
        for k in range(q):
            vals = [self.rotate(subs[r][k], r * k, m) for r in range(p)]
            if p == 2:
                (er, ei), (tr, ti) = vals
                ys = [self.let(f"{er} + {tr}", f"{ei} + {ti}"),
                      self.let(f"{er} - {tr}", f"{ei} - {ti}")]
            else:
                ys = self.odd_prime(vals)
            for s in range(p):
                out[k + s * q] = ys[s]
        return out
