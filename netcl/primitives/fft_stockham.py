"""OpenCL C of one Stockham autosort pass over batched rows of interleaved complex numbers.

A DFT of length N = 2^a 3^b 5^c 7^d is a chain of passes of radices L1 L2 ... = N. A pass of
radix L after passes whose radices multiply to Ns (1 for the first) takes, for each of the
Q = N / L sub-transforms j of a row, the L inputs x[j + r Q] (r < L), multiplies input r by
the twiddle W_{Ns L}^(r (j mod Ns)) (W_m = exp(-2 pi i / m)), takes their L-point DFT and
writes output k at (j div Ns) Ns L + (j mod Ns) + k Ns. The output is in natural order after
the last pass (the autosort property: no bit reversal), every pass reads and writes runs of
consecutive j, and a pass reads one buffer and writes another. N = L makes the whole FFT one
pass: one read and one write of memory.

A work-group takes G consecutive sub-transforms: it loads them into local memory (real and
imaginary parts in separate arrays, element p of sub-transform g at [p G + g]), runs the
L-point DFTs there as in-register steps (`step_radices`: radix 8, then one of 4 or 2, for
the power-of-two part; 9, 7, 5, 3 for the rest; straight-line codelets: fft_codelets.py)
with the same indexing, and writes them out. Its work-items (`threads`) share the steps
(GPUs); one work-item (CPU devices) runs them as loops whose innermost index has unit
stride, which the compiler vectorises, or with `lanes` > 1 as explicit vectors holding one
sub-transform per lane (short rows, and the passes of long ones).

Everything about a pass's shape is compiled in (N, L, Ns, G): PoCL vectorises a kernel with
the sizes as runtime arguments much worse, at the price of one build per length (PoCL's
disk cache keeps them). One work-item means no barriers, which PoCL builds faster and runs
faster. Complex values are pairs of scalars (or of vectors), never float2: LLVM's loop
vectoriser, which PoCL's work-item loops rely on, leaves loops over float2 values scalar.

Every kernel computes the forward transform; the other directions and Bluestein's algorithm
(fft_bluestein.py) come from runtime arguments, so one program serves them all:
- conj_in / conj_out (+1 or -1) multiply the imaginary part of each value read / written
  (ifft(x) = conj(fft(conj(x))) / N), and scale each value written (1/N);
- rows of `in_row` elements of which the first `in_len` are read (zeros past them), written
  as rows of `out_row` of which the first `out_len` are kept;
- optional tables `pre` (multiplies input i of a row, before the twiddles) and `post`
  (multiplies output i before conj_out), switched by use_pre / use_post.
Those are meant for a chain's first pass and last pass. With one work-item per work-group,
whole groups take vectorisable loops: over whole rows, hooks included, in one-pass FFTs
(one row per work-group: only those loops are compiled); without hooks (their only use) in
the passes of longer ones, where the group's sub-transforms lie in one row and one output
block (always with powers of two; with other radices the groups that straddle two take the
per-element loops: `_plain_fits`).

Twiddles come from a per-pass table (`twiddle_table`) computed on the host from exact
integer angle fractions, each within an ulp of float64, so a float32 transform's error is a
few ulps times log2 N.

    >>> src = pass_source(PassShape(n=1024, radix=1024, ns=1), np.dtype(np.complex64))
"""
from dataclasses import dataclass

import numpy as np

from .fft_codelets import Emitter, unit_roots

# Radices of the steps inside a pass, largest first (radix 8 keeps the most work in
# registers per local-memory round trip; a 4 or 2 finishes a length that 8 does not divide;
# radix 16 steps spill on PoCL, radix 4 alone does no better than 8)
_STEP_RADICES = (8, 4, 2)
# The primes a pass's length may have, and the radices of the steps of its odd part, by
# preference (3^2 in one step of 9: fewer trips through local memory, as fast as two of 3
# or faster on PoCL; steps of 10, 15, 25 or 27 ran slower than their factors' steps)
STEP_PRIMES = (2, 3, 5, 7)
_ODD_STEP_RADICES = (9, 7, 5, 3)

# Work-groups of several work-items (GPUs) skip a local-memory word after every 2^_PAD_BITS:
# a step's writes at stride R (radix 8: every 8th word) then fall in distinct banks.
_PAD_BITS = 5

KERNEL_NAME = "netcl_fft_pass"
# The arguments enqueue_fft sets per call (the rest are set once, when a plan is made)
ARG_IN, ARG_IN_OFFSET, ARG_OUT, ARG_OUT_OFFSET = 0, 1, 4, 5


@dataclass(frozen=True)
class PassShape:
    """Everything about one pass that is compiled into its source: n (the transform's N),
    radix (L), ns (the product of the earlier passes' radices), group (G, sub-transforms per
    work-group), threads (work-items per work-group), lanes (sub-transforms per vector, with
    one work-item; 1: scalar code)."""
    n: int
    radix: int
    ns: int
    group: int = 1
    threads: int = 1
    lanes: int = 1

    @property
    def per_row(self):
        """Q: sub-transforms in one row."""
        return self.n // self.radix

    def local_bytes(self, dtype):
        """__local bytes a work-group takes: four arrays of G L parts (and their padding)."""
        parts = self.group * self.radix
        parts += parts >> _PAD_BITS if self.threads > 1 else 0
        return 4 * parts * (np.dtype(dtype).itemsize // 2)


def real_ctype(dtype):
    """The OpenCL C type of the parts of NumPy complex `dtype`: float for complex64, double
    for complex128 (NumPy's interleaved layout: part 2 i is the real, 2 i + 1 the imaginary
    part of element i)."""
    dtype = np.dtype(dtype)
    if dtype == np.complex64:
        return "float"
    if dtype == np.complex128:
        return "double"
    raise TypeError(f"fft kernels: dtype {dtype} is not complex64 or complex128")


def step_radices(length):
    """Radices of the in-register steps of a length-`length` DFT (2^a 3^b 5^c 7^d): the
    power-of-two part in steps of 8 (then one of 4 or 2), then the odd part in steps of
    _ODD_STEP_RADICES, larger first; a lone radix-2 step (length 2 mod 4) goes last.
    (A step's loops run over the product of the earlier steps' radices, unit-stride and
    vectorised, so a small first radix leaves the next step's loop too short to fill a
    vector: lengths 2 mod 4 take their 2 last.)"""
    steps, pow2 = [], length & -length
    while pow2 > 1:
        r = next(r for r in _STEP_RADICES if pow2 % r == 0)
        steps.append(r)
        pow2 //= r
    odd = length // (length & -length)
    for r in _ODD_STEP_RADICES:
        while odd % r == 0:
            steps.append(r)
            odd //= r
    if odd != 1:
        raise ValueError(f"fft: {length} has a prime factor above {STEP_PRIMES[-1]}")
    if steps[0] == 2:
        steps = steps[1:] + steps[:1]
    return steps


def _table(index):
    """The (re, im) C expressions of entry `index` of the twiddle table."""
    return f"tw[2 * ({index})]", f"tw[2 * ({index}) + 1]"


_SIGNATURE = """__global const {R}* restrict in, const long in_off, const int in_row,
    const int in_len, __global {R}* restrict out, const long out_off, const int out_row,
    const int out_len, __global const {R}* restrict tw, __global const {R}* restrict pre,
    const int use_pre, __global const {R}* restrict post, const int use_post,
    const {R} conj_in, const {R} conj_out, const {R} scale, const long total"""

# Element i of the row at `row_at` (complex elements from the buffer's start): zero from
# in_len on, conjugated by conj_in, times pre[i] where use_pre; and its counterpart storing.
_HELPERS = """inline void netcl_fft_load(__global const {R}* restrict in, long row_at, int i,
    int in_len, {R} conj_in, __global const {R}* restrict pre, int use_pre, {R}* re, {R}* im) {{
  {R} a = 0, b = 0;
  if (i < in_len) {{
    a = in[2 * (row_at + i)];
    b = in[2 * (row_at + i) + 1] * conj_in;
    if (use_pre) {{
      const {R} c = pre[2 * i], d = pre[2 * i + 1], t = a * c - b * d;
      b = a * d + b * c;
      a = t;
    }}
  }}
  *re = a;
  *im = b;
}}
inline void netcl_fft_store(__global {R}* restrict out, long row_at, int i, int out_len,
    {R} a, {R} b, __global const {R}* restrict post, int use_post, {R} conj_out, {R} scale) {{
  if (i >= out_len) return;
  if (use_post) {{
    const {R} c = post[2 * i], d = post[2 * i + 1], t = a * c - b * d;
    b = a * d + b * c;
    a = t;
  }}
  out[2 * (row_at + i)] = a * scale;
  out[2 * (row_at + i) + 1] = b * (conj_out * scale);
}}
"""


def twiddle_layout(shape):
    """Where a pass's twiddles sit in its table, in the order the pass reads them: the
    outer table (W_{Ns L}^(r m) at [m L + r], m < Ns: a work-group's G consecutive
    sub-transforms read one contiguous block) when Ns > 1, then one table per in-register
    step after the first (W_{ns R}^(r kk) at [r ns + kk]: unit stride along kk). (One table
    of W_N read at r m N / (Ns L) instead touched a new cache line per twiddle once N
    outgrew the caches.) Returns (outer offset or None, [(step radix, step ns, offset or
    None)], total entries)."""
    at, outer = 0, None
    if shape.ns > 1:
        outer, at = 0, shape.ns * shape.radix
    steps, s_ns = [], 1
    for R in step_radices(shape.radix):
        steps.append((R, s_ns, at if s_ns > 1 else None))
        if s_ns > 1:
            at += s_ns * R
        s_ns *= R
    return outer, steps, at


def twiddle_table(shape):
    """The pass's twiddles (complex128, see `twiddle_layout`), each exp(-2 pi i a / b) from
    the exact integer fraction a / b, within an ulp (fft_codelets.unit_roots)."""
    outer, steps, total = twiddle_layout(shape)
    num, den = np.zeros(max(total, 1), np.int64), np.ones(max(total, 1), np.int64)

    def fill(at, m, radix, r_major):
        span = m * radix
        if r_major:
            rr, mm = np.divmod(np.arange(span, dtype=np.int64), m)
        else:
            mm, rr = np.divmod(np.arange(span, dtype=np.int64), radix)
        num[at:at + span], den[at:at + span] = (mm * rr) % span, span

    if outer is not None:
        fill(outer, shape.ns, shape.radix, r_major=False)
    for R, s_ns, at in steps:
        if at is not None:
            fill(at, s_ns, R, r_major=True)
    return unit_roots(num, den)


def _load_mapping(shape):
    """C lines mapping a work-group's element e (< G L) to its sub-transform g and input r,
    consecutive e reading consecutive addresses."""
    G, n, q = shape.group, shape.n, shape.per_row
    if G <= q or G % q:     # G consecutive sub-transforms (of one row, where Q % G == 0)
        return [f"const int g = e % {G}, r = e / {G};"]
    # G / Q whole rows: e walks them in order
    return [f"const int i_row = e % {n};",
            f"const int g = (e / {n}) * {q} + i_row % {q}, r = i_row / {q};"]


def _store_mapping(shape):
    """C lines mapping a work-group's output element e (< G L) to (g, k), consecutive e
    writing consecutive addresses."""
    G, L, ns = shape.group, shape.radix, shape.ns
    if G <= ns or G % ns:
        return [f"const int g = e % {G}, k = e / {G};"]
    return [f"const int g = (e / {ns * L}) * {ns} + e % {ns}, k = (e / {ns}) % {L};"]


def _loops(*ranges):
    """C loop heads over (name, count) pairs, outermost first (the compiler drops loops of
    one iteration, and vectorises the innermost of the rest)."""
    return " ".join(f"for (int {v} = 0; {v} < {c}; ++{v})" for v, c in ranges) + " {"


_MUL_BY = """if ({flag}) {{
        const {R} c = {table}[2 * {i}], d = {table}[2 * {i} + 1], t = {a} * c - {b} * d;
        {b} = {a} * d + {b} * c;
        {a} = t;
      }}"""


def _whole_rows_load(shape, real):
    """C of a one-pass work-group's load of its G whole rows, hooks included: loops over the
    first in_len elements of each (vectorisable; pre's test is the same for all), then
    zeros."""
    G, L = shape.group, shape.radix
    return [f"for (int bl = 0; bl < {G}; ++bl) {{",
            f"  __global const {real}* src = in + 2 * (in_off + (J0 + bl) * in_row);",
            f"  const int valid = min(in_len, {L});",
            "  for (int r = 0; r < valid; ++r) {",
            f"    {real} vr = src[2 * r], vi = src[2 * r + 1] * conj_in;",
            "    " + _MUL_BY.format(flag="use_pre", R=real, table="pre", i="r", a="vr", b="vi"),
            f"    re0[LX(r * {G} + bl)] = vr;",
            f"    im0[LX(r * {G} + bl)] = vi;",
            "  }",
            f"  for (int r = valid; r < {L}; ++r) {{",
            f"    re0[LX(r * {G} + bl)] = 0;",
            f"    im0[LX(r * {G} + bl)] = 0;",
            "  }",
            "}"]


def _whole_rows_store(shape, real, res):
    """C of a one-pass work-group's store of its G whole rows, hooks included (the first
    out_len elements of each)."""
    G, L = shape.group, shape.radix
    return [f"for (int bl = 0; bl < {G}; ++bl) {{",
            f"  __global {real}* dst = out + 2 * (out_off + (J0 + bl) * out_row);",
            f"  const int valid = min(out_len, {L});",
            "  for (int k = 0; k < valid; ++k) {",
            f"    {real} a = re{res}[LX(k * {G} + bl)], b = im{res}[LX(k * {G} + bl)];",
            "    " + _MUL_BY.format(flag="use_post", R=real, table="post", i="k", a="a", b="b"),
            "    dst[2 * k] = a * scale;",
            "    dst[2 * k + 1] = b * scale_im;",
            "  }",
            "}"]


def _plain_fits(G, span, name):
    """The C condition (appended with &&) under which a work-group's G consecutive
    sub-transforms lie in one run of `span` (Q: one row's; NS: one output block's) or take
    whole runs, as _plain_load / _plain_store assume: "" when that holds for every group
    (span a multiple of G, or G of span: always with powers of two), a test of J0 where
    G <= span does not divide it (mixed radices: the groups that straddle two runs take
    the per-element loops), None where G > span does not divide it (they all do)."""
    if G <= span:
        return "" if span % G == 0 else f" && J0 % {name} + {G} <= {name}"
    return "" if G % span == 0 else None


def _plain_load(shape, real):
    """C of a work-group's load from `in` with no hooks, for one work-item: loops whose
    innermost index is the unit-stride one in memory (vectorisable), no per-element tests."""
    G, L, q = shape.group, shape.radix, shape.per_row
    twiddled = []
    if shape.ns > 1:
        tr, ti = _table(f"(j % NS) * {L} + r")
        twiddled = [f"  const {real} c = {tr}, d = {ti}, t = vr * c - vi * d;",
                    "  vi = vr * d + vi * c;", "  vr = t;"]
    body = [f"  {real} vr = src[2 * (jl + r * Q)], vi = src[2 * (jl + r * Q) + 1] * conj_in;"]
    body += twiddled + [f"  re0[r * {G} + lo] = vr;", f"  im0[r * {G} + lo] = vi;", "}"]
    if G <= q:      # G consecutive sub-transforms of one row
        return ["const long b = J0 / Q;",
                "const int j0 = (int)(J0 - b * Q);",
                f"__global const {real}* src = in + 2 * (in_off + b * in_row + j0);",
                _loops(("r", L), ("jl", G)),
                "  const int j = j0 + jl, lo = jl;"] + body
    # G / Q whole rows
    return [_loops(("bl", G // q)),
            f"__global const {real}* src = in + 2 * (in_off + (J0 / Q + bl) * in_row);",
            _loops(("r", L), ("jl", q)),
            f"  const int j = jl, lo = bl * {q} + jl;"] + body + ["}"]


def _plain_store(shape, real, res):
    """C of a work-group's store to `out` with no hooks, for one work-item (see _plain_load)."""
    G, L, ns, n = shape.group, shape.radix, shape.ns, shape.n
    body = [f"  dst[2 * (k * NS + m)] = re{res}[k * {G} + lo] * scale;",
            f"  dst[2 * (k * NS + m) + 1] = im{res}[k * {G} + lo] * scale_im;", "}"]
    if G <= ns:     # runs of G at stride Ns, one row
        return [f"const long o0 = (J0 / NS) * NS * {L} + J0 % NS;",
                f"const long b = o0 / {n};",
                f"__global {real}* dst = out + 2 * (out_off + b * out_row + (o0 - b * {n}));",
                _loops(("k", L), ("m", G)),
                "  const int lo = m;"] + body
    # blocks of Ns L contiguous outputs, Ns sub-transforms each
    return [_loops(("a", G // ns)),
            f"const long o0 = J0 * {L} + (long)a * {ns * L};",
            f"const long b = o0 / {n};",
            f"__global {real}* dst = out + 2 * (out_off + b * out_row + (o0 - b * {n}));",
            _loops(("k", L), ("m", ns)),
            f"  const int lo = a * {ns} + m;"] + body + ["}"]


def _local_index(threads):
    """C macro LX(i): where local element i sits (padded for several work-items)."""
    if threads > 1:
        return f"#define LX(i) ((i) + ((i) >> {_PAD_BITS}))"
    return "#define LX(i) (i)"


def _barrier(threads):
    """A local-memory barrier, where a work-group has several work-items. (One work-item sees
    its own writes; PoCL, given barriers, spent 2-3 s more compiling a kernel of 4096 and
    ran it 1.7x slower, even with reqd_work_group_size(1, 1, 1).)"""
    return "barrier(CLK_LOCAL_MEM_FENCE);" if threads > 1 else "// (one work-item: no barrier)"


def _local_steps(shape, real):
    """C of the in-register steps of the L-point DFTs of the G sub-transforms in local memory
    (element p of sub-transform g at [p G + g] of the re and im arrays); returns (lines, the
    number of the buffer holding the result)."""
    G, L, T, W = shape.group, shape.radix, shape.threads, shape.lanes
    src, dst = 0, 1
    lines = []
    for step, (R, s_ns, at) in enumerate(twiddle_layout(shape)[1]):
        count = G * L // R
        if W > 1:
            # one work-item, W sub-transforms per vector (lane g of element p at [p G + g]):
            # every value a vector, every twiddle a scalar the lanes share
            head = [f"for (int blk = 0; blk < {L // (R * s_ns)}; ++blk) "
                    f"for (int kk = 0; kk < {s_ns}; ++kk) "
                    f"for (int g = 0; g < {G // W}; ++g) {{",
                    f"  const int jj = blk * {s_ns} + kk, o = blk * {s_ns * R} + kk;"]
        elif T == 1:
            # one work-item: loops whose indices are affine in the innermost one (kk, or g),
            # which the compiler vectorises (unit strides in local memory and the table)
            head = [f"for (int blk = 0; blk < {L // (R * s_ns)}; ++blk) "
                    f"for (int kk = 0; kk < {s_ns}; ++kk) "
                    + (f"for (int g = 0; g < {G}; ++g) {{" if G > 1 else "{ const int g = 0;"),
                    f"  const int jj = blk * {s_ns} + kk, o = blk * {s_ns * R} + kk;"]
        else:
            head = [(f"for (int u = lid; u < {count}; u += {T}) {{" if count > T else
                     "{ const int u = lid;" if count == T else
                     f"if (lid < {count}) {{ const int u = lid;"),
                    f"  const int g = u % {G}, jj = u / {G}, kk = jj % {s_ns};",
                    f"  const int o = (jj / {s_ns}) * {s_ns * R} + kk;"]
        em = Emitter(real, f"s{step}_", W)
        xs = []
        arr = "" if W == 1 else "v"      # (vector arrays: see pass_source)
        for r in range(R):
            at_r = f"(jj + {r * (L // R)}) * {G // W} + g"
            v = (f"re{src}{arr}[LX({at_r})]", f"im{src}{arr}[LX({at_r})]")
            xs.append(em.mul(v, _table(f"{at + r * s_ns} + kk")) if s_ns > 1 and r > 0 else v)
        for k, (yr, yi) in enumerate(em.dft(xs)):
            at_k = f"(o + {k * s_ns}) * {G // W} + g"
            em.lines += [f"re{dst}{arr}[LX({at_k})] = {yr};",
                         f"im{dst}{arr}[LX({at_k})] = {yi};"]
        lines += [f"// step {step}: radix {R}, after {s_ns}"] + head
        lines += ["  " + x for x in em.lines]
        lines += ["}", _barrier(T)]
        src, dst = dst, src
    return lines, src


def pass_source(shape, dtype):
    """OpenCL C of the pass `shape` for `dtype` (kernel KERNEL_NAME). Its arguments: in,
    in_off, in_row, in_len, out, out_off, out_row, out_len (complex elements), tw (the
    twiddle table), pre, use_pre, post, use_post, conj_in, conj_out, scale, total
    (sub-transforms: batch N / L; work-groups: ceil(total / G) of `threads` work-items)."""
    real = real_ctype(dtype)
    n, L, ns, G, T, q = shape.n, shape.radix, shape.ns, shape.group, shape.threads, shape.per_row
    steps, res = _local_steps(shape, real)
    twiddled = []
    if ns > 1:      # (entry r = 0 is exactly 1: multiplying by it changes no finite value)
        tr, ti = _table(f"(j % NS) * {L} + r")
        twiddled = [f"const {real} c = {tr}, d = {ti}, t = vr * c - vi * d;",
                    "vi = vr * d + vi * c;", "vr = t;"]
    load = "\n    ".join(_load_mapping(shape) + [
        "const long J = J0 + g;",
        "const long b = J / Q;",
        "const int j = (int)(J - b * Q);",
        f"{real} vr = 0, vi = 0;",
        "if (J < total) netcl_fft_load(in, in_off + b * in_row, j + r * Q, in_len, conj_in, "
        "pre, use_pre, &vr, &vi);"] + twiddled + [
        f"re0[LX(r * {G} + g)] = vr;",
        f"im0[LX(r * {G} + g)] = vi;"])
    store = "\n    ".join(_store_mapping(shape) + [
        "const long J = J0 + g;",
        "if (J >= total) continue;",
        f"const long o = (J / NS) * NS * {L} + J % NS + (long)k * NS;",   # flat output index
        f"const long b = o / {n};",
        f"netcl_fft_store(out, out_off + b * out_row, (int)(o - b * {n}), out_len, "
        f"re{res}[LX(k * {G} + g)], im{res}[LX(k * {G} + g)], post, use_post, conj_out, "
        "scale);"])
    steps = "\n  ".join(steps)
    plain_load = plain_store = ""
    if T == 1 and q == 1:   # one work-item, one pass: vectorisable loops over whole rows
        plain_load = ("if (whole) {\n    " + "\n    ".join(_whole_rows_load(shape, real))
                      + "\n  } else ")
        plain_store = ("if (whole) {\n    " + f"const {real} scale_im = conj_out * scale;\n    "
                       + "\n    ".join(_whole_rows_store(shape, real, res)) + "\n  } else ")
    elif T == 1:    # one work-item, a pass of several: the same for groups without hooks
        fits = _plain_fits(G, q, "Q")       # (None: never; the rest take the per-element loops)
        if fits is not None:
            plain_load = (f"if (whole && !use_pre && in_len >= {n}{fits}) {{\n    "
                          + "\n    ".join(_plain_load(shape, real)) + "\n  } else ")
        fits = _plain_fits(G, ns, "NS")
        if fits is not None:
            plain_store = (f"if (whole && !use_post && out_len >= {n}{fits}) {{\n    "
                           + f"const {real} scale_im = conj_out * scale;\n    "
                           + "\n    ".join(_plain_store(shape, real, res)) + "\n  } else ")
    general_load = f"for (int e = lid; e < {G * L}; e += {T}) {{\n    {load}\n  }}"
    general_store = f"for (int e = lid; e < {G * L}; e += {T}) {{\n    {store}\n  }}"
    if T == 1 and q == 1 and G == 1:
        # one row per work-group: every group is whole, so the per-element loops would only
        # be code to compile (the test of `whole` folds away)
        plain_load, plain_store = plain_load[:-len(" else ")], plain_store[:-len(" else ")]
        general_load = general_store = ""
    if shape.lanes == 1:
        size = shape.local_bytes(dtype) // (4 * (np.dtype(dtype).itemsize // 2))
        arrays = f"__local {real} re0[{size}], im0[{size}], re1[{size}], im1[{size}];"
    else:       # vector arrays (aligned; PoCL's vloadN is an out-of-line call), and scalar views
        W = shape.lanes
        arrays = "\n  ".join(
            [f"__local {real}{W} re0v[{G * L // W}], im0v[{G * L // W}], re1v[{G * L // W}], "
             f"im1v[{G * L // W}];"] +
            [f"__local {real}* {a} = (__local {real}*){a}v;" for a in ("re0", "im0", "re1", "im1")])
    return f"""// Stockham pass: N = {n}, radix {L}, after {ns}, {G} per group, {T} work-items
#define NS {ns}
#define Q {q}
{_local_index(T)}
{_HELPERS.format(R=real)}
__kernel __attribute__((reqd_work_group_size({T}, 1, 1)))
void {KERNEL_NAME}({_SIGNATURE.format(R=real)}) {{
  {arrays}
  const int lid = get_local_id(0);
  const long J0 = (long)get_group_id(0) * {G};
  const int whole = J0 + {G} <= total;
  {plain_load}{general_load}
  {_barrier(T)}
  {steps}
  {plain_store}{general_store}
}}
"""

