"""OpenCL C that both reduction kernel families share: each operation's identity and combine
template (also used by jit's fusion pass through the primitives' `lowering`), the arg-op
comparison helper, the chunk bounds of a split pass, and the dtype of pass-1 partials."""
from ...core import dtypes, kernels


def _init_expr(op, dtype):
    """The identity of `op` as a C expression of the accumulator type."""
    k = "b" if dtype == dtypes.bool_ else dtypes.kind(dtype)
    acc = kernels.compute_ctype(dtype)
    if op in ("sum",):
        return f"(({acc})0)"
    if op == "prod":
        return f"(({acc})1)"
    wide = dtype.itemsize == 8 and k in "iu"
    if op in ("max", "argmax"):
        return {"f": f"(({acc})-INFINITY)", "i": "LONG_MIN" if wide else "INT_MIN",
                "u": f"(({acc})0)", "b": "0"}[k]
    if op in ("min", "argmin"):
        return {"f": f"(({acc})INFINITY)", "i": "LONG_MAX" if wide else "INT_MAX",
                "u": "ULONG_MAX" if wide else "UINT_MAX", "b": "1"}[k]
    if op == "ffill":
        return f"(({acc})NAN)"
    raise AssertionError(op)


def _combine(op, dtype, n=""):
    """C template combining {a} (earlier) with {b} (later); n is a vector width ("", "8")."""
    k = dtypes.kind(dtype)
    # signed sums and products wrap through the unsigned type (signed overflow is undefined)
    i, u = ("long", "ulong") if dtype.itemsize == 8 else ("int", "uint")
    if op == "sum":
        return f"as_{i}{n}(as_{u}{n}({{a}}) + as_{u}{n}({{b}}))" if k == "i" else "({a} + {b})"
    if op == "prod":
        return f"as_{i}{n}(as_{u}{n}({{a}}) * as_{u}{n}({{b}}))" if k == "i" else "({a} * {b})"
    # float max/min propagate NaN: take {b} when it is greater or NaN. {a} (the accumulator)
    # stays off the NaN test, and the masks combine with `|` (vector-friendly: `||` and
    # isnan() compile to scalarised code on PoCL)
    # 64-bit integers compare with `?:`, not the max/min builtins: PoCL 3.0 on AVX-512 hosts
    # compiles kernels for an AVX2 CPU but links AVX-512 builtins, and a 512-bit long8
    # passed to one breaks the calling convention (garbage results)
    if op == "max":
        return "(((({b}) > ({a})) | (({b}) != ({b}))) ? ({b}) : ({a}))" if k == "f" \
            else "((({b}) > ({a})) ? ({b}) : ({a}))" if dtype.itemsize == 8 \
            else "max({a}, {b})"
    if op == "min":
        return "(((({b}) < ({a})) | (({b}) != ({b}))) ? ({b}) : ({a}))" if k == "f" \
            else "((({b}) < ({a})) ? ({b}) : ({a}))" if dtype.itemsize == 8 \
            else "min({a}, {b})"
    if op == "ffill":
        return "((({b}) != ({b})) ? ({a}) : ({b}))"
    raise AssertionError(op)


def _better_fn(op, dtype):
    """C helper: is (v, i) a better arg-candidate than (bv, bi)? NaN first, then ties by index."""
    acc = kernels.compute_ctype(dtype)
    cmp = ">" if op == "argmax" else "<"
    if dtypes.kind(dtype) == "f":
        body = (f"  const int vn = v != v, bn = bv != bv;\n"
                f"  if (vn != bn) return vn;\n"
                f"  if (vn || v == bv) return i < bi;\n"
                f"  return v {cmp} bv;\n")
    else:
        body = f"  return v {cmp} bv || (v == bv && i < bi);\n"
    return f"inline int netcl_better({acc} v, int i, {acc} bv, int bi) {{\n{body}}}\n"


_CHUNK_BOUNDS = ("  const int start = max(0, g * chunk - shift), "
                 "end = min(K, (g + 1) * chunk - shift);")


def _partial_dtype(op, dtype):
    """dtype in which pass-1 partials are stored (exact for max/min; float for 16- and 8-bit
    float sums)."""
    if op in ("sum", "prod") and dtype in dtypes.STORAGE_FLOATS:
        return dtypes.float32
    return dtype
