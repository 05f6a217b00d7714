"""The OpenCL source of the convolution kernels, the layouts of their metadata buffers, and
`_ConvGeometry` (one call in canonical terms, from avals and layouts).

  conv_direct      one work-item per output element, looping over the window and the
                   group's input channels; serves every configuration
  conv_im2col      gathers the patches matrix P for the GEMMs planned in conv_gemm.py
                   (rows: the output's non-feature dims in the output's memory order;
                   columns: the kernel's non-output dims in the kernel's memory order)
  conv_splitk_sum  adds the partial results of a GEMM split along K

and, for GPUs, code generated for one geometry: `_im2col_special_source` (conv_im2col with
literal sizes) and `_p_gather_source` (P's elements read straight from the input inside the
GEMM, so P is never stored: the implicit GEMM).
"""
from ...core import dtypes, kernels
from ...core.shapes import contiguous_strides, prod
from .kernel_metadata import _INDEX_LIMIT, _NDIV, _magic

_MAX_SPATIAL = 3   # conv kernels handle up to 3 spatial dims (more: a ValueError)


def _meta_layout(names):
    return {n: i for i, n in enumerate(names)}


# direct kernel metadata (3 spatial slots; missing dims have size 1)
_DM = _meta_layout(
    ["nout", "oc", "cg", "og", "ob", "total",
     "osn", "oso", "os0", "os1", "os2", "sz0", "sz1", "sz2",
     "mosn", "sosn", "moso", "soso", "mos0", "sos0", "mos1", "sos1", "mos2", "sos2",
     "mnout", "snout", "moc", "soc", "msz0", "ssz0", "msz1", "ssz1", "msz2", "ssz2",
     "mob", "sob", "mog", "sog", "mld0", "sld0", "mld1", "sld1", "mld2", "sld2",
     "k0", "k1", "k2", "i0", "i1", "i2", "st0", "st1", "st2", "pl0", "pl1", "pl2",
     "ld0", "ld1", "ld2", "rd0", "rd1", "rd2",
     "loff", "lsn", "lsc", "ls0", "ls1", "ls2", "roff", "rso", "rsi", "rs0", "rs1", "rs2"])

# im2col metadata: 9 slots (0-7 decomposed from the work-item id, 8 looped) of
# (size, lhs address coef, position coefs b0 b1 b2, P storage stride)
_SLOT_FIELDS = ("sz", "a", "b0", "b1", "b2", "ps", "mg", "sh")
_IM = _meta_layout(
    ["total", "i0", "i1", "i2", "ls0", "ls1", "ls2", "ld0", "ld1", "ld2", "pl0", "pl1", "pl2",
     "loff", "goffa", "goffp", "nodil", "mld0", "mld1", "mld2", "sld0", "sld1", "sld2"]
    + [f"{f}{s}" for s in range(9) for f in _SLOT_FIELDS])


def _defines(prefix, layout):
    return "".join(f"#define {prefix}_{k.upper()} {v}\n" for k, v in layout.items())


def _gemm_dtype(dtype):
    """The GEMM runs in float64 for float64 convs, else in float32 (float16 is storage)."""
    return dtypes.float64 if dtype == dtypes.float64 else dtypes.float32


def _conv_source(in_dtype, out_dtype):
    S, So = kernels.storage_ctype(in_dtype), kernels.storage_ctype(out_dtype)
    acc = "double" if dtypes.float64 in (in_dtype, out_dtype) else "float"
    ld = lambda p, i: f"(({acc}){kernels.load(in_dtype, p, i)})"  # noqa: E731
    P = kernels.storage_ctype(_gemm_dtype(in_dtype))                # im2col's matrix type
    lx = lambda i: f"(({P}){kernels.load(in_dtype, 'lhs', i)})"  # noqa: E731
    slot = "\n".join(
        f"  if (m[IM_SZ{s}] > 1) {{ const int q = NDIV(rem, m[IM_MG{s}], m[IM_SH{s}]);"
        f" const int c = rem - q * m[IM_SZ{s}]; rem = q;"
        f" addr += c * m[IM_A{s}]; q0 += c * m[IM_B0{s}]; q1 += c * m[IM_B1{s}];"
        f" q2 += c * m[IM_B2{s}]; ps += c * m[IM_PS{s}]; }}"
        for s in range(7, -1, -1))

    hoist = "".join(f"  const int dm_{k} = m[DM_{k.upper()}];\n" for k in _DM)
    lines = []
    for var, stride, size in (("n", "osn", "nout"), ("o", "oso", "oc"), ("y0", "os0", "sz0"),
                              ("y1", "os1", "sz1"), ("y2", "os2", "sz2")):
        lines.append(f"  const int {var}_q = NDIV(i, dm_m{stride}, dm_s{stride});")
        lines.append(f"  const int {var} = {var}_q - NDIV({var}_q, dm_m{size}, dm_s{size}) "
                     f"* dm_{size};")
    decomp = "\n".join(lines)
    src = f"""{_NDIV}{_defines("DM", _DM)}{_defines("IM", _IM)}
__kernel void conv_direct(__global {So}* out, __global const {S}* lhs,
                          __global const {S}* rhs, __constant int* m) {{
  const int i = get_global_id(0);
  if (i >= m[DM_TOTAL]) return;
{hoist}{decomp}
  const int nin = NDIV(o, dm_mob, dm_sob) * dm_nout + n;
  const int lbase = dm_loff + nin * dm_lsn + NDIV(o, dm_mog, dm_sog) * dm_cg * dm_lsc;
  const int rbase = dm_roff + o * dm_rso;
  {acc} a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int k0 = 0; k0 < dm_k0; ++k0) {{
    int p0 = y0 * dm_st0 + k0 * dm_rd0 - dm_pl0;
    if (p0 < 0) continue;
    {{ const int q = NDIV(p0, dm_mld0, dm_sld0); if (q * dm_ld0 != p0) continue; p0 = q; }}
    if (p0 >= dm_i0) break;
    for (int k1 = 0; k1 < dm_k1; ++k1) {{
      int p1 = y1 * dm_st1 + k1 * dm_rd1 - dm_pl1;
      if (p1 < 0) continue;
      {{ const int q = NDIV(p1, dm_mld1, dm_sld1); if (q * dm_ld1 != p1) continue; p1 = q; }}
      if (p1 >= dm_i1) break;
      for (int k2 = 0; k2 < dm_k2; ++k2) {{
        int p2 = y2 * dm_st2 + k2 * dm_rd2 - dm_pl2;
        if (p2 < 0) continue;
        {{ const int q = NDIV(p2, dm_mld2, dm_sld2); if (q * dm_ld2 != p2) continue; p2 = q; }}
        if (p2 >= dm_i2) break;
        const int la = lbase + p0 * dm_ls0 + p1 * dm_ls1 + p2 * dm_ls2;
        const int ra = rbase + k0 * dm_rs0 + k1 * dm_rs1 + k2 * dm_rs2;
        int c = 0;   /* four partial sums: the adds do not wait on each other */
        for (; c + 4 <= dm_cg; c += 4) {{
          a0 += {ld("lhs", "la + c * dm_lsc")} * {ld("rhs", "ra + c * dm_rsi")};
          a1 += {ld("lhs", "la + (c + 1) * dm_lsc")} * {ld("rhs", "ra + (c + 1) * dm_rsi")};
          a2 += {ld("lhs", "la + (c + 2) * dm_lsc")} * {ld("rhs", "ra + (c + 2) * dm_rsi")};
          a3 += {ld("lhs", "la + (c + 3) * dm_lsc")} * {ld("rhs", "ra + (c + 3) * dm_rsi")};
        }}
        for (; c < dm_cg; ++c)
          a0 += {ld("lhs", "la + c * dm_lsc")} * {ld("rhs", "ra + c * dm_rsi")};
      }}
    }}
  }}
  const {acc} acc = (a0 + a1) + (a2 + a3);
  {kernels.store(out_dtype, "out", "i", "acc")}
}}

/* im2col: P[g][m][k] (or P[g][k][m]) = lhs element read by output row m at window column k,
   0 outside the (dilated, padded) input. One work-item per 8 decomposed coordinates, looping
   over slot 8 (the dimension read contiguously). */
__kernel void conv_im2col(__global {P}* P, __global const {S}* lhs, __constant int* m) {{
  const int gid = get_global_id(0);
  if (gid >= m[IM_TOTAL]) return;
  int rem = gid, addr = 0, q0 = 0, q1 = 0, q2 = 0, ps = 0;
{slot}
  addr += m[IM_LOFF] + rem * m[IM_GOFFA];
  ps += rem * m[IM_GOFFP];
  q0 -= m[IM_PL0]; q1 -= m[IM_PL1]; q2 -= m[IM_PL2];
  const int n = m[IM_SZ8], da = m[IM_A8], d0 = m[IM_B08], d1 = m[IM_B18], d2 = m[IM_B28];
  const int dps = m[IM_PS8];
  const int i0 = m[IM_I0], i1 = m[IM_I1], i2 = m[IM_I2];
  const int ls0 = m[IM_LS0], ls1 = m[IM_LS1], ls2 = m[IM_LS2];
  if (m[IM_NODIL]) {{
    if (d0 == 0 && d1 == 0 && d2 == 0) {{   /* positions fixed along the loop */
      if (q0 >= 0 && q0 < i0 && q1 >= 0 && q1 < i1 && q2 >= 0 && q2 < i2) {{
        const int base = addr + q0 * ls0 + q1 * ls1 + q2 * ls2;
        for (int t = 0; t < n; ++t) P[ps + t * dps] = {lx("base + t * da")};
      }} else {{
        for (int t = 0; t < n; ++t) P[ps + t * dps] = 0;
      }}
      return;
    }}
    for (int t = 0; t < n; ++t) {{
      const int p0 = q0 + t * d0, p1 = q1 + t * d1, p2 = q2 + t * d2;
      const int ok = p0 >= 0 && p0 < i0 && p1 >= 0 && p1 < i1 && p2 >= 0 && p2 < i2;
      P[ps + t * dps] = ok ? {lx("addr + t * da + p0 * ls0 + p1 * ls1 + p2 * ls2")} : 0;
    }}
    return;
  }}
  const int l0 = m[IM_LD0], l1 = m[IM_LD1], l2 = m[IM_LD2];
  const int ml0 = m[IM_MLD0], ml1 = m[IM_MLD1], ml2 = m[IM_MLD2];
  const int sl0 = m[IM_SLD0], sl1 = m[IM_SLD1], sl2 = m[IM_SLD2];
  for (int t = 0; t < n; ++t) {{
    const int p0 = q0 + t * d0, p1 = q1 + t * d1, p2 = q2 + t * d2;
    const int r0 = NDIV(max(p0, 0), ml0, sl0), r1 = NDIV(max(p1, 0), ml1, sl1);
    const int r2 = NDIV(max(p2, 0), ml2, sl2);
    const int ok = p0 >= 0 && p1 >= 0 && p2 >= 0 && r0 * l0 == p0 && r1 * l1 == p1 &&
                   r2 * l2 == p2 && r0 < i0 && r1 < i1 && r2 < i2;
    P[ps + t * dps] = ok ? {lx("addr + t * da + r0 * ls0 + r1 * ls1 + r2 * ls2")} : 0;
  }}
}}

/* split-K: out[i] = sum of the GEMM's partial results t[s][i] */
__kernel void conv_splitk_sum(__global {P}* out, __global const {P}* t, const int n,
                              const int parts) {{
  const int i = get_global_id(0);
  if (i >= n) return;
  {P} acc = 0;
  for (int s = 0; s < parts; ++s) acc += t[s * n + i];
  out[i] = acc;
}}
"""
    return src


class _ConvGeometry:
    """Everything about one conv call in canonical (logical) terms, from avals and layouts."""

    def __init__(self, lhs, rhs, out, params):
        dn = params["dimension_numbers"]
        lhs_spec, rhs_spec, out_spec = dn
        self.nsp = nsp = len(lhs_spec) - 2
        if nsp > _MAX_SPATIAL:
            raise ValueError(f"conv_general_dilated: {nsp} spatial dimensions; the "
                             f"OpenCL kernels handle at most {_MAX_SPATIAL}")
        self.G = params["feature_group_count"]
        self.B = params["batch_group_count"]
        pad3 = lambda v, fill: tuple(v) + (fill,) * (_MAX_SPATIAL - len(v))  # noqa: E731
        self.N = lhs.shape[lhs_spec[0]]
        self.C = lhs.shape[lhs_spec[1]]
        self.O = rhs.shape[rhs_spec[0]]
        self.Cg = rhs.shape[rhs_spec[1]]
        self.Nout = out.shape[out_spec[0]]
        self.I = pad3([lhs.shape[d] for d in lhs_spec[2:]], 1)
        self.K = pad3([rhs.shape[d] for d in rhs_spec[2:]], 1)
        self.S = pad3([out.shape[d] for d in out_spec[2:]], 1)
        self.st = pad3(params["window_strides"], 1)
        self.pl = pad3([lo for lo, _ in params["padding"]], 0)
        self.ld = pad3(params["lhs_dilation"], 1)
        self.rd = pad3(params["rhs_dilation"], 1)
        self.precision = params.get("precision")
        ls = lhs.strides
        self.loff = lhs.offset
        self.lsn, self.lsc = ls[lhs_spec[0]], ls[lhs_spec[1]]
        self.ls = pad3([ls[d] for d in lhs_spec[2:]], 0)
        rs = rhs.strides
        self.roff = rhs.offset
        self.rso, self.rsi = rs[rhs_spec[0]], rs[rhs_spec[1]]
        self.rs = pad3([rs[d] for d in rhs_spec[2:]], 0)
        ocs = contiguous_strides(out.shape)
        self.osn, self.oso = ocs[out_spec[0]], ocs[out_spec[1]]
        self.os = pad3([ocs[d] for d in out_spec[2:]], 1)
        self.out_spec, self.rhs_spec = out_spec, rhs_spec
        self.out_shape, self.rhs_shape = out.shape, rhs.shape
        self.total = prod(out.shape)
        for name, a in (("lhs", lhs), ("rhs", rhs), ("output", out)):
            if prod(a.shape) > _INDEX_LIMIT:
                raise ValueError(f"conv_general_dilated: the {name} has {prod(a.shape)} "
                                 "elements, more than the kernels' 2^31 index limit")

    def direct_meta(self):
        v = dict(nout=self.Nout, oc=self.O, cg=self.Cg, og=max(self.O // self.G, 1),
                 ob=max(self.O // self.B, 1), total=self.total, osn=self.osn, oso=self.oso,
                 loff=self.loff, lsn=self.lsn, lsc=self.lsc, roff=self.roff, rso=self.rso,
                 rsi=self.rsi)
        for j in range(3):
            v.update({f"os{j}": self.os[j], f"sz{j}": self.S[j], f"k{j}": self.K[j],
                      f"i{j}": self.I[j], f"st{j}": self.st[j], f"pl{j}": self.pl[j],
                      f"ld{j}": self.ld[j], f"rd{j}": self.rd[j], f"ls{j}": self.ls[j],
                      f"rs{j}": self.rs[j]})
        for k in ("osn", "oso", "os0", "os1", "os2", "nout", "oc", "sz0", "sz1", "sz2", "ob",
                  "og", "ld0", "ld1", "ld2"):
            v["m" + k], v["s" + k] = _magic(v[k])
        return [v[k] for k in _DM]


# ---- conv_im2col specialised for one geometry (the GPU path) -----------------------------------

def _term(var, coef):
    return var if coef == 1 else f"{var} * {coef}"


def _decompose(dims, var, vec, r):
    """Statements splitting index `var` (in units of `vec` along the last dim) into the
    coordinates of `dims` (slowest first), through the temporary `r`."""
    body = [f"  uint {r} = (uint)({var});"]
    for i in range(len(dims) - 1, -1, -1):
        name, size = dims[i][0], dims[i][1]
        n = size // vec if i == len(dims) - 1 else size
        scale = f" * {vec}" if i == len(dims) - 1 and vec > 1 else ""
        if i == 0:
            body.append(f"  const int {name} = (int){r}{scale};")
        else:
            body.append(f"  const int {name} = (int)({r} % {n}u){scale}; {r} /= {n}u;")
    return body


def _p_address(geo, dims, var, vec, outer=None):
    """(statements, test, address) locating the `vec` consecutive elements of P that start at
    vector index `var` (a C expression; element index `var * vec`) in lhs: the statements
    decompose the index into P's `dims` (slowest first, P dense, as `_p_dims` gives them) and
    compute the input positions; `test` is true where they fall inside the input (else the
    zero padding is read), `address` is the lhs index of the first element. Literal sizes:
    the divisions compile to multiply-shifts. With `outer` = (j, expr), `var` indexes only
    dims[j:] and `expr` dims[:j] (P as a matrix: row `expr`, column `var`)."""
    if outer is None:
        body = _decompose(dims, var, vec, "r")
    else:
        j, row = outer
        body = _decompose(dims[:j], row, 1, "ro") + _decompose(dims[j:], var, vec, "r")
    tests, addr = [], [str(geo.loff)] if geo.loff else []
    for s in range(geo.nsp):
        terms = " + ".join(_term(d[0], d[3 + s]) for d in dims if d[3 + s]) or "0"
        if geo.pl[s]:
            terms += f" {'-' if geo.pl[s] > 0 else '+'} {abs(geo.pl[s])}"
        body.append(f"  const int p{s} = {terms};")
        tests.append(f"(uint)p{s} < {geo.I[s]}u")
        if geo.ls[s]:
            addr.append(_term(f"p{s}", geo.ls[s]))
    addr += [_term(d[0], d[2]) for d in dims if d[2]]
    return body, " && ".join(tests) if tests else "1", " + ".join(addr) if addr else "0"


def _p_element(in_dtype, raw=False):
    """(C type of P's elements, of lhs's elements, and ``read(i)``: the C expression of lhs
    element i as one of P's). P is in the GEMM's dtype (float16 and bfloat16 converted to
    float32), or, `raw`, 16-bit floats kept as their bits (``ushort``) for tensor cores
    that multiply them as stored."""
    if raw:
        return "ushort", "ushort", lambda i: f"lhs[{i}]"
    P = kernels.storage_ctype(_gemm_dtype(in_dtype))
    return P, kernels.storage_ctype(in_dtype), \
        lambda i: f"(({P}){kernels.load(in_dtype, 'lhs', i)})"


def _p_vector_load(in_dtype, geo, dims, vec, raw=False):
    """(vector type, load expression of `vec` P elements from lhs index `a`) where P's
    fastest dim moves along the input's channel or batch dim (no window position changes
    along it: one bounds test); None where it does not. `raw`: see _p_element."""
    P, _, ld = _p_element(in_dtype, raw)
    if vec == 1 or not dims or any(dims[-1][3:6]) or dims[-1][1] % vec:
        return None
    T = f"{P}{vec}"
    if _p_runs_aligned(in_dtype, geo, dims, vec, raw):   # one vector load
        return T, f"*(__global const {T}*)(lhs + a)"
    run = dims[-1][2]   # lhs stride along the vector
    return T, f"({T})(" + ", ".join(
        ld("a" + (f" + {t * run}" if t else "")) for t in range(vec)) + ")"


def _p_runs_aligned(in_dtype, geo, dims, vec, raw=False):
    """Whether every `vec` consecutive elements of P along its fastest dim are `vec`
    consecutive elements of lhs starting at a multiple of `vec` (P in lhs's own dtype), where
    _p_vector_load applies."""
    return ((raw or in_dtype == _gemm_dtype(in_dtype)) and dims[-1][2] == 1 and
            all(c % vec == 0 for c in [geo.loff] + [d[2] for d in dims[:-1]] +
                [geo.ls[s] for s in range(geo.nsp)]))


def _im2col_special_source(in_dtype, geo, dims, vec_max=4, raw=False):
    """(source, vec, items) of a `conv_im2col` with the geometry baked in, or None where it
    does not apply (lhs dilation: the generic kernel's divisibility tests).

    `dims` are P's dims of size > 1 in storage order, slowest first, as (name, size, lhs
    coef, position coefs b0 b1 b2, P stride), P dense. Work-item `gid` writes the `vec`
    consecutive elements P[gid*vec ...]: consecutive work-items store consecutive vectors
    (coalesced), and every size and stride is a literal, so the divisions below compile to
    multiply-shifts and no metadata is read. `vec` > 1 where P's fastest dim moves along the
    input's channel or batch dim (no window position changes along it: one bounds test).
    `raw`: P keeps 16-bit inputs as bits (see _p_element)."""
    if any(v != 1 for v in geo.ld):
        return None
    P, L, read = _p_element(in_dtype, raw)
    total = prod(d[1] for d in dims)
    vec = 1
    if dims and not any(dims[-1][3:6]):
        vec = next(v for v in (8, 4, 2, 1) if v <= vec_max and dims[-1][1] % v == 0)
    items = total // vec
    if items > _INDEX_LIMIT:
        return None
    body, test, addr = _p_address(geo, dims, "gid", vec)
    T, load = _p_vector_load(in_dtype, geo, dims, vec, raw) or (P, read("a"))
    src = f"""/* conv_im2col for one geometry: {items} work-items, each storing {vec} consecutive
   element(s) of P; P dims (slowest first): {', '.join(f'{d[0]}={d[1]}' for d in dims)} */
__kernel void conv_im2col(__global {T}* restrict P, __global const {L}* restrict lhs) {{
  const int gid = get_global_id(0);
  if (gid >= {items}) return;
{chr(10).join(body)}
  {T} v = ({T})0;
  if ({test}) {{
    const int a = {addr};
    v = {load};
  }}
  P[gid] = v;
}}
"""
    return src, vec, items


def _tile_uniform(sizes, bk):
    """Whether index i0 + t, with i0 a multiple of `bk` and 0 <= t < bk, splits into dims of
    `sizes` (innermost first) as the coordinates of i0 plus those of t, with no carry: the
    dims below some dim d have a product Q dividing bk, and Q * size(d) is a multiple of bk."""
    q = 1
    for size in sizes:
        if bk % q == 0 and (q * size) % bk == 0:
            return True
        if bk % (q * size):
            return False
        q *= size
    return False


def _p_column_dims(dims, ld):
    """The index j of P's dims from which on they make its `ld` columns (P as a matrix: row
    dims[:j], column dims[j:]), or None where no split gives `ld` columns."""
    j, inner = len(dims), 1
    while j > 0 and inner < ld:
        j -= 1
        inner *= dims[j][1]
    return j if inner == ld else None


def _p_chunk_source(in_dtype, geo, dims, name, vec, ld, raw=False):
    """C function ``int name_at(const int row, const int col)``: the lhs index of P's `vec`
    elements from (row, col) on (col a multiple of vec), or -1 where they are the zero
    padding; P addressed as a matrix of `ld` columns. For kernels that copy P's tiles from
    the input in whole chunks (gemm_mma_staged.py's cp.async), so only where every run of
    `vec` is one aligned vector of the input (a channel run: one bounds test per chunk);
    None elsewhere."""
    if any(v != 1 for v in geo.ld) or (in_dtype != _gemm_dtype(in_dtype) and not raw):
        return None
    j = _p_column_dims(dims, ld)
    if j is None or j == len(dims) or _p_vector_load(in_dtype, geo, dims, vec, raw) is None \
            or not _p_runs_aligned(in_dtype, geo, dims, vec, raw):
        return None
    body, test, addr = _p_address(geo, dims, f"col / {vec}", vec, (j, "row"))
    return f"""int {name}_at(const int row, const int col) {{
{chr(10).join(body)}
  return ({test}) ? {addr} : -1;
}}
"""


def _p_gather_source(in_dtype, geo, dims, name, vec, ld, bk=0, raw=False):
    """C functions reading P's elements straight from lhs, for a GEMM that multiplies P
    without materialising it (gemm.py's ``gather_a``/``gather_b``; the implicit GEMM). P is
    addressed as a matrix of `ld` columns (its storage, dense):

    * ``T name(lhs, row, col)``: its element (0 in the padding); ``T<vec> name_v(lhs, row,
      col)``: the `vec` elements from col on (col a multiple of vec);
    * for the GEMM's inner loop: ``int4 name_part_row(row)`` and ``name_part_col(col)`` are
      what a row and a column add to the lhs address and the input positions; the element
      at (row, col) is ``name_at_v(lhs, part_row(row) + part_col(col))``. The GEMM computes
      the part fixed along its K loop once, and where ``NAME_TILE_ROW`` (``_COL``) is 1 the
      moving part of a K tile of `bk` as its start's part (once per tile) plus each
      work-item's offset's part (once): then a gather is an add, the bounds tests and a load.

    None where the geometry has lhs dilation (divisibility tests: the im2col runs). Only for
    dtypes the GEMM runs in, and 16-bit floats read as bits (`raw`, see _p_element)."""
    if any(v != 1 for v in geo.ld) or (in_dtype != _gemm_dtype(in_dtype) and not raw):
        return None
    j = _p_column_dims(dims, ld)
    if j is None:
        return None
    T = _p_element(in_dtype, raw)[1]
    sig = f"(__global const {T}* restrict lhs, const int row, const int col)"
    body, test, addr = _p_address(geo, dims, "col", 1, (j, "row"))
    src = f"""{T} {name}{sig} {{
{chr(10).join(body)}
  return ({test}) ? lhs[{addr}] : ({T})0;
}}
"""
    TV = f"{T}{vec}" if vec > 1 else T
    vload = _p_vector_load(in_dtype, geo, dims, vec, raw) if vec > 1 else (T, "lhs[a]")
    if vec > 1 and (vload is None or j == len(dims)):   # elements one by one
        parts = ", ".join(f"{name}(lhs, row, col + {t})" for t in range(vec))
        return src + f"""{TV} {name}_v{sig} {{
  return ({TV})({parts});
}}
#define {name.upper()}_TILE_ROW 0
#define {name.upper()}_TILE_COL 0
"""
    if vec > 1:
        vbody, vtest, vaddr = _p_address(geo, dims, f"col / {vec}", vec, (j, "row"))
        src += f"""{TV} {name}_v{sig} {{
{chr(10).join(vbody)}
  if (!({vtest})) return ({TV})0;
  const int a = {vaddr};
  return {vload[1]};
}}
"""
    else:
        src += f"#define {name}_v {name}\n"
    # the split form: (address, position 0, 1, 2) contributions of a row and of a column
    for part, pdims in (("row", dims[:j]), ("col", dims[j:])):
        lines = _decompose(pdims, part, 1, "r") if pdims else []
        terms = [" + ".join(_term(d[0], d[k]) for d in pdims if d[k]) or "0"
                 for k in range(2, 6)]
        src += f"""int4 {name}_part_{part}(const int {part}) {{
{chr(10).join(lines)}
  return (int4)({", ".join(terms)});
}}
"""
    ps = [f"q.s{s + 1}" + (f" - {geo.pl[s]}" if geo.pl[s] > 0 else
                           f" + {-geo.pl[s]}" if geo.pl[s] < 0 else "") for s in range(geo.nsp)]
    tests = " && ".join(f"(uint)({p}) < {geo.I[s]}u" for s, p in enumerate(ps)) or "1"
    addr = " + ".join([str(geo.loff)] * bool(geo.loff) + [
        f"({p}) * {geo.ls[s]}" for s, p in enumerate(ps) if geo.ls[s]] + ["q.s0"])
    rows_in = [d[1] for d in reversed(dims[:j])]     # innermost first
    cols_in = [d[1] for d in reversed(dims[j:])]
    src += f"""{TV} {name}_at_v(__global const {T}* restrict lhs, const int4 q) {{
  if (!({tests})) return ({TV})0;
  const int a = {addr};
  return {vload[1]};
}}
#define {name.upper()}_TILE_ROW {int(bool(bk) and _tile_uniform(rows_in, bk))}
#define {name.upper()}_TILE_COL {int(bool(bk) and _tile_uniform(cols_in, bk))}
"""
    return src
