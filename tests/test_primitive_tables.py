"""Every primitive of every table against its own NumPy reference.

The tables are not written out here: they are collected by scanning the modules of
`netcl.primitives` (and `netcl.transforms.ad`) for `Primitive` objects, grouped by fusion kind.
A primitive added to a table is therefore tested automatically:

  elementwise   operand count and accepted dtypes are probed through the primitive's own
                abstract_eval (float32, int32, bool, int64, uint64); only extra params need
                an entry below
  reduction     params drawn by signature (axes / axis+index_dtype / axis+reverse[+exclusive])
  view          one drawer per primitive (VIEW_CASES)
  opaque        a drawer here or a pointer to the test file that checks it against its reference
                or an independent oracle (COVERED_ELSEWHERE, verified to exist)

and `test_every_primitive_has_reference_and_a_test` fails for a primitive without a reference
or without a way to draw its params, unless listed in EXEMPT with a reason.

Hypothesis draws shapes (scalars, size 0, size 1), layouts (dense, transposed, reversed,
strided slices, broadcasts with stride 0) and values (inf/nan/0 for floats, INT_MIN/INT_MAX
for ints). Dtypes come from a short list per op so the number of distinct kernels stays small.
On the NumPy fallback this compares the reference with itself: test_fallback skips this file.
"""
import ast
import functools
import importlib
import inspect
import os
import pkgutil
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import netcl
import netcl.numpy as jnp
import netcl.primitives
import netcl.transforms.ad
from netcl.core.tracing import Primitive, ShapedArray
from util import example_body, prebuild_ahead, prebuilt_examples

# 25 examples per primitive: about 30 s on PoCL with a warm kernel cache;
# NETCL_TABLE_EXAMPLES=200 for a deeper search. The table tests are @prebuilt_examples
# (util.py): the kernels a test's drawn examples launch are built first, in few PoCL
# compiler runs, then the examples (the same draws) run and are checked as before.
SETTINGS = settings(max_examples=int(os.environ.get("NETCL_TABLE_EXAMPLES", 25)), deadline=None)
HERE = os.path.dirname(__file__)
# (each dtype draws those it holds: int64 and uint64 also their own, past 32 bits)
_INT_EXTREMES = (-2**31, 2**31 - 1, 0, -1, -2**63, 2**63 - 1, 2**64 - 1, 2**32, -2**32 - 1)


@pytest.fixture(autouse=True)
def _prebuilt_in_groups(request):
    """The table tests' kernels, built a dozen tests at a time (util.prebuild_ahead)."""
    prebuild_ahead(request, 12)


# ---- the tables -------------------------------------------------------------------------------

def _scan():
    """{name: (primitive, defining module)} of every Primitive in netcl.primitives.* and ad;
    the defining module (where the lax-level function lives) assigns it at top level."""
    mods = [netcl.transforms.ad]
    for info in pkgutil.walk_packages(netcl.primitives.__path__, "netcl.primitives."):
        mods.append(importlib.import_module(info.name))
    found = {}
    for mod in mods:
        try:
            src = inspect.getsource(mod)
        except (OSError, TypeError):
            src = ""
        for attr, v in vars(mod).items():
            if not isinstance(v, Primitive):
                continue
            defines = re.search(rf"^{attr}\s*=", src, re.M) is not None
            if v.name not in found or defines:
                found[v.name] = (v, mod)
    return found


ALL = _scan()


def _table(fusion):
    return sorted(n for n, (p, _) in ALL.items() if p.fusion == fusion and p.call is None)


ELEMENTWISE = _table("elementwise")
REDUCTION = _table("reduction")
VIEW = _table("view")
OPAQUE = _table("opaque")

# Primitives without a NumPy reference, or without a property test of their own, and why.
EXEMPT = {}

# Opaque primitives whose params have structure of their own, checked against their reference
# (or an independent oracle) by a property test elsewhere: not drawn again here.
COVERED_ELSEWHERE = {
    "concatenate": "test_structural.py::test_concatenate_matches_numpy",
    "pad": "test_structural.py::test_pad_matches_oracle",
    "iota": "test_structural.py::test_iota",
    "dynamic_slice": "test_structural.py::test_dynamic_slice_and_update",
    "dynamic_update_slice": "test_structural.py::test_dynamic_slice_and_update",
    "gather": "test_structural.py::test_gather_matches_oracle",
    "argsort": "test_sorting.py::test_argsort_matches_numpy",
    "scatter": "test_structural.py::test_scatter_matches_oracle",
    "scatter_add": "test_structural.py::test_scatter_matches_oracle",
    "scatter_mul": "test_structural.py::test_scatter_matches_oracle",
    "scatter_max": "test_structural.py::test_scatter_matches_oracle",
    "scatter_min": "test_structural.py::test_scatter_matches_oracle",
    "dot_general": "test_linalg.py::test_dot_general_random",
    "conv_general_dilated": "test_conv.py::test_conv_matches_reference",
    "reduce_window_sum": "test_conv.py::test_reduce_window_matches_reference",
    "reduce_window_max": "test_conv.py::test_reduce_window_matches_reference",
    "reduce_window_min": "test_conv.py::test_reduce_window_matches_reference",
    "select_and_scatter_add": "test_conv.py::test_select_and_scatter_gather_match_reference",
    "select_and_gather_add": "test_conv.py::test_select_and_scatter_gather_match_reference",
    "threefry2x32": "test_random.py::test_threefry_matches_reference",
    "cholesky": "test_linalg_decomp.py::test_primitive_matches_reference",
    "triangular_solve": "test_linalg_decomp.py::test_primitive_matches_reference",
    "solve": "test_linalg_decomp.py::test_primitive_matches_reference",
    "slogdet": "test_linalg_decomp.py::test_primitive_matches_reference",
    "eigh": "test_linalg_decomp.py::test_primitive_matches_reference",
    "svd": "test_linalg_decomp.py::test_primitive_matches_reference",
    "qr": "test_linalg_decomp.py::test_primitive_matches_reference",
    "lu": "test_linalg_device.py::test_lu_reference_and_singular_matrices_as_lapack",
    "fft": "test_fft.py::test_one_axis_transforms_match_numpy",
    "eig": "test_linalg_eig.py::test_primitive_matches_reference",
}


def test_tables_are_found():
    assert len(ELEMENTWISE) >= 60 and len(REDUCTION) >= 11 and len(VIEW) >= 6, \
        (ELEMENTWISE, REDUCTION, VIEW)
    assert {"add", "select", "clamp", "convert_element_type", "nextafter"} <= set(ELEMENTWISE)
    assert {"reduce_sum", "argmax", "cumsum", "ffill"} <= set(REDUCTION)


# Call primitives (custom_jvp/vjp, checkpoint, jit_call, the collectives) are handed to their
# `call` object by every interpreter: they are tested with their transforms.
@pytest.mark.parametrize("name", sorted(n for n, (p, _) in ALL.items() if p.call is None))
def test_every_primitive_has_reference_and_a_test(name):
    prim, _ = ALL[name]
    if name in EXEMPT:
        return
    assert callable(prim.reference), f"{name}: no NumPy reference (add one, or list in EXEMPT)"
    if prim.fusion == "elementwise":
        _elementwise_signatures(prim)  # raises when params are missing from EW_PARAMS
    elif prim.fusion == "reduction":
        assert _reduction_kind(prim) is not None, f"{name}: no drawer for its params"
    elif prim.fusion == "view":
        assert name in VIEW_CASES, f"{name}: add a drawer to VIEW_CASES"
    else:
        assert name in OPAQUE_CASES or name in COVERED_ELSEWHERE, \
            f"{name}: add a drawer to OPAQUE_CASES or point COVERED_ELSEWHERE at its test"


@pytest.mark.parametrize("name", sorted(COVERED_ELSEWHERE))
def test_covered_elsewhere_points_at_a_real_test(name):
    fname, test = COVERED_ELSEWHERE[name].split("::")
    with open(os.path.join(HERE, fname)) as f:
        tree = ast.parse(f.read())
    fns = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert test in fns, f"{COVERED_ELSEWHERE[name]} does not exist"
    assert ALL.get(name) is not None, f"COVERED_ELSEWHERE names an unknown primitive {name}"


# ---- values and layouts -----------------------------------------------------------------------

def _values(rng, shape, dtype, lo, hi, special):
    dtype = np.dtype(dtype)
    if dtype.kind == "c":   # finite parts: infinities inside complex numbers follow the
        # formulas of complex_ops, not C99's special cases (see its docstring)
        part = np.float32 if dtype == np.complex64 else np.float64
        re, im = (rng.uniform(lo, hi, size=shape).astype(part) for _ in range(2))
        if special and re.size:
            re = np.where(rng.random(shape) < 0.3, part(0), re)
            im = np.where(rng.random(shape) < 0.3, part(0), im)
        return (re + 1j * im.astype(dtype)).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        x = rng.integers(lo, hi + 1, size=shape).astype(np.int64)
        if special and x.size:
            pool = np.array([v for v in _INT_EXTREMES
                             if np.iinfo(dtype).min <= v <= np.iinfo(dtype).max], dtype)
            mask = rng.random(shape) < 0.3
            return np.where(mask, rng.choice(pool, size=shape), x.astype(dtype))
        return x.astype(dtype)
    x = rng.uniform(lo, hi, size=shape).astype(dtype)
    if special and x.size:
        mask = rng.random(shape) < 0.3
        x = np.where(mask, rng.choice(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0], dtype),
                                      size=shape), x).astype(dtype)
    return x


LAYOUTS = ("dense", "transposed", "reversed", "sliced", "broadcast")


def _present(host, layout, rng):
    """(host values, netcl array) with those values in the given layout."""
    if host.ndim == 0 or layout == "dense":
        return host, jnp.asarray(host)
    if layout == "transposed":
        return host, jnp.transpose(jnp.asarray(np.ascontiguousarray(host.T)))
    if layout == "reversed":
        return host, jnp.flip(jnp.asarray(np.ascontiguousarray(np.flip(host))))
    if layout == "sliced":  # every other element of the last axis of a larger array
        big = np.repeat(host, 2, axis=-1)
        return host, jnp.asarray(big)[..., ::2]
    if layout == "broadcast":  # some axes read with stride 0
        keep = rng.random(host.ndim) < 0.5
        small = host[tuple(slice(None) if k else slice(0, min(1, s))
                           for k, s in zip(keep, host.shape))]
        return np.broadcast_to(small, host.shape), jnp.broadcast_to(jnp.asarray(small),
                                                                    host.shape)
    raise ValueError(layout)


def _check(got, want, exact, rtol=1e-5, atol=1e-6):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"dtype {got.dtype} != {want.dtype}"
    if got.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want)
    elif exact:
        np.testing.assert_array_equal(got, want)  # NaN positions must agree
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _lax_fn(prim, module):
    """The lax-level function binding `prim` (same name, or with a trailing underscore)."""
    for n in (prim.name, prim.name + "_"):
        f = getattr(module, n, None)
        if callable(f) and not isinstance(f, Primitive):
            return f
    return None


# ---- elementwise ------------------------------------------------------------------------------

# Params of the elementwise primitives that take any: operand dtype -> the valid params dicts
# to draw from (short lists: each is a kernel of its own).
EW_PARAMS = {
    "round": lambda dt: [{"rounding_method": m} for m in (0, 1)],
    "integer_pow": lambda dt: [{"y": y} for y in range(-3 if dt.kind == "f" else 0, 6)],
    "convert_element_type": lambda dt: [{"new_dtype": np.dtype(d), "weak_type": False}
                                        for d in ("float32", "int32", "bool", "int64",
                                                  "uint64", "float64", "complex64",
                                                  "complex128") if d != dt],
    "bitcast_convert_type": lambda dt: [{"new_dtype": np.dtype(d)} for d in
                                        (("float32", "int32", "uint32") if dt.itemsize == 4
                                         else ("float64", "int64", "uint64")) if d != dt],
}
# Results that must match the reference bit for bit (correctly rounded or exact operations);
# the others are libm functions, where devices differ from NumPy by an ulp or so.
EXACT = {"neg", "abs", "sign", "floor", "ceil", "round", "square", "add", "sub", "mul", "div",
         "rem", "floor_div", "max", "min", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor",
         "not", "is_finite", "select", "clamp", "copy", "convert_element_type",
         "bitcast_convert_type", "nextafter", "shift_left", "shift_right_logical",
         "shift_right_arithmetic", "sqrt"}
# OpenCL lets float division and sqrt be off by ulps (NVIDIA's are); CPU builds round them
# correctly, as NumPy does: elsewhere they are checked to 2 ulps.
_DEVICE = netcl.default_device()
ROUNDED = _DEVICE.is_numpy or _DEVICE.target.host_cpu
ROUNDED_ONLY_ON_CPUS = {"div", "sqrt"}
# (int64 and uint64: x64 is on in the suite, see conftest.py)
_PROBE_DTYPES = [np.dtype(d) for d in ("float32", "int32", "bool", "int64", "uint64",
                                        "complex64", "complex128")]
# Complex results that must match NumPy exactly (the others are complex formulas: mul's
# products may be contracted to FMAs, exp/log/... are libm calls on the parts)
EXACT_COMPLEX = {"neg", "add", "sub", "eq", "ne", "select", "copy", "convert_element_type",
                 "is_finite", "real", "imag", "conj", "complex"}


@functools.lru_cache(maxsize=None)
def _elementwise_signatures(prim):
    """[(operand dtypes, [params dicts])] that the primitive's abstract_eval accepts: all
    operands of one dtype of the short list (uint32 where none is accepted), or a bool
    predicate first (select). int64 and uint64 are probed too: x64 is on in the suite."""
    sigs, last_error = [], None
    for dt in _PROBE_DTYPES + [np.dtype("uint32")]:
        if dt == np.dtype("uint32") and sigs:
            break
        choices = EW_PARAMS[prim.name](dt) if prim.name in EW_PARAMS else [{}]
        for ins in [(dt,) * n for n in (1, 2, 3)] + [(np.dtype("bool"), dt, dt)]:
            try:
                prim.abstract_eval(*[ShapedArray((2,), d, False) for d in ins], **choices[0])
            except (TypeError, ValueError) as e:
                last_error = e
                continue
            if ins not in [s[0] for s in sigs]:
                sigs.append((ins, choices))
    assert sigs, (f"{prim.name}: abstract_eval accepts none of the operand dtypes tried "
                  f"({last_error}); if it takes params, add them to EW_PARAMS")
    return sigs


@pytest.mark.parametrize("name", ELEMENTWISE)
@prebuilt_examples
@SETTINGS
@given(data=st.data(), shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
       seed=st.integers(0, 2**32 - 1), special=st.booleans(),
       rng_=st.sampled_from([(-4.0, 4.0), (-1.2, 1.2), (-40, 40)]))
@example_body
def test_elementwise_table(name, data, shape, seed, special, rng_):
    prim, module = ALL[name]
    ins, choices = data.draw(st.sampled_from(_elementwise_signatures(prim)), label="signature")
    params = data.draw(st.sampled_from(choices), label="params")
    rng = np.random.default_rng(seed)
    lo, hi = rng_
    if ins[0].kind in "iu":
        lo, hi = int(min(lo, -5)), int(max(hi, 5))
    hosts, args = [], []
    for d in ins:
        layout = data.draw(st.sampled_from(LAYOUTS), label="layout")
        h = _values(rng, shape, d, lo, hi, special)
        h, a = _present(h, layout, rng)
        hosts.append(h)
        args.append(a)
    fn = _lax_fn(prim, module)
    with np.errstate(all="ignore"):  # (the NumPy fallback runs the reference in the call)
        want = prim.reference(*[np.array(h) for h in hosts], **params)
        got = fn(*args, **params) if fn is not None else prim.bind(*args, **params)
    if any(d.kind == "c" for d in ins):
        exact = name in EXACT_COMPLEX
        tol = 1e-5 if all(d != np.complex128 for d in ins) else 1e-12
        if name == "pow":    # exp(y log x): relative error grows with |y log x| (to ~150 here)
            tol *= 20
        _check(got, np.asarray(want), exact=exact, rtol=tol, atol=tol)
    elif name in ROUNDED_ONLY_ON_CPUS and not ROUNDED:
        _check(got, np.asarray(want), exact=False, rtol=2.4e-7, atol=1.2e-38)
    else:
        _check(got, np.asarray(want), exact=name in EXACT)


# ---- reductions and scans ---------------------------------------------------------------------

def _reduction_kind(prim):
    sig = set(inspect.signature(prim.abstract_eval).parameters) - {"x"}
    if sig == {"axes"}:
        return "reduce"
    if sig == {"axis", "index_dtype"}:
        return "arg"
    if sig in ({"axis", "reverse"}, {"axis", "reverse", "exclusive"}):
        return "scan"
    return None


def _reduction_dtypes(prim):
    out = []
    for dt in _PROBE_DTYPES:
        try:
            kind = _reduction_kind(prim)
            params = {"reduce": {"axes": (0,)},
                      "arg": {"axis": 0, "index_dtype": np.dtype("int32")},
                      "scan": {"axis": 0, "reverse": False}}[kind]
            prim.abstract_eval(ShapedArray((2,), dt, False), **params)
        except (TypeError, ValueError):
            continue
        out.append(dt)
    return out


def _sum_tolerance(x, axes, want_shape, keep):
    with np.errstate(all="ignore"):
        mag = np.sum(np.abs(x.astype(np.float64)), axis=axes, keepdims=keep)
    return 8 * np.finfo(np.float32).eps * (np.broadcast_to(mag, want_shape) + 1)


@pytest.mark.parametrize("name", REDUCTION)
@prebuilt_examples
@SETTINGS
@given(data=st.data(), shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
       seed=st.integers(0, 2**32 - 1), special=st.booleans())
@example_body
def test_reduction_table(name, data, shape, seed, special):
    prim, module = ALL[name]
    kind = _reduction_kind(prim)
    dt = data.draw(st.sampled_from(_reduction_dtypes(prim)), label="dtype")
    rng = np.random.default_rng(seed)
    lo, hi = ((0.5, 1.5) if "prod" in name else (-3.0, 3.0)) if dt.kind == "f" else (-20, 20)
    host = _values(rng, shape, dt, lo, hi, special and dt.kind == "f")
    if name == "ffill" and host.size:  # mostly NaN: the values to carry forward
        host = np.where(rng.random(shape) < 0.5, np.float32(np.nan), host).astype(dt)
    host, x = _present(host, data.draw(st.sampled_from(LAYOUTS), label="layout"), rng)
    host = np.array(host)
    fn = _lax_fn(prim, module)
    if kind == "reduce":
        axes = tuple(sorted(data.draw(st.lists(st.integers(0, max(len(shape) - 1, 0)),
                                               unique=True, max_size=len(shape)), label="axes")))
        params = {"axes": axes}
        got = fn(x, axes) if fn is not None else prim.bind(x, **params)
        red, keep = axes, False
    else:
        if not shape:
            shape, host, x = (1,), host.reshape(1), jnp.reshape(x, (1,))
        axis = data.draw(st.integers(0, len(shape) - 1), label="axis")
        if kind == "arg":
            if shape[axis] == 0:
                with pytest.raises(ValueError, match=name):
                    prim.bind(x, axis=axis, index_dtype=np.dtype("int32"))
                return
            params = {"axis": axis, "index_dtype": np.dtype("int32")}
        else:
            params = {"axis": axis, "reverse": data.draw(st.booleans(), label="reverse")}
            # exclusive scans are internal (ffill's, whose reference starts them with NaN):
            # drawn where no lax-level function hides the param
            if "exclusive" in inspect.signature(prim.abstract_eval).parameters and (
                    fn is None or "exclusive" in inspect.signature(fn).parameters):
                params["exclusive"] = data.draw(st.booleans(), label="exclusive")
        public = fn is not None and set(params) <= set(inspect.signature(fn).parameters)
        got = fn(x, **params) if public else prim.bind(x, **params)
        red, keep = (axis,), True
    want = np.asarray(prim.reference(host, **params))
    if dt.kind == "f" and name in ("reduce_sum", "cumsum"):
        g = np.asarray(got)
        assert g.shape == want.shape and g.dtype == want.dtype
        tol = _sum_tolerance(host, red, want.shape, keep)
        with np.errstate(invalid="ignore"):
            ok = (np.isnan(g) & np.isnan(want)) | (g == want) | (np.abs(g - want) <= tol)
        assert ok.all(), (g[~ok], want[~ok])
    elif dt.kind == "f" and name in ("reduce_prod", "cumprod"):
        n = int(np.prod([shape[a] for a in red])) if red else 1
        _check(got, want, exact=False, rtol=2e-7 * (n + 1), atol=1e-6)
    else:
        _check(got, want, exact=True)


# ---- views ----------------------------------------------------------------------------------

@st.composite
def _broadcast_in_dim_case(draw, shape):
    extra = draw(st.integers(0, 2))
    out_rank = len(shape) + extra
    dims = tuple(sorted(draw(st.permutations(range(out_rank)))[:len(shape)]))
    out = [draw(st.integers(0, 3)) for _ in range(out_rank)]
    for i, d in enumerate(dims):
        out[d] = shape[i] if shape[i] != 1 else draw(st.integers(0, 3))
    return {"shape": tuple(out), "broadcast_dimensions": dims}


@st.composite
def _reshape_case(draw, shape):
    n = int(np.prod(shape))
    if n == 0:
        out = draw(st.lists(st.integers(0, 3), max_size=3)) + [0]
        return {"new_sizes": tuple(draw(st.permutations(out)))}
    factors = [p for p in (2, 3, 5, 7) for _ in range(100) if n % p ** (_ + 1) == 0]
    groups = [1] * draw(st.integers(1, 3))
    for f in factors:
        groups[draw(st.integers(0, len(groups) - 1))] *= f
    return {"new_sizes": tuple(groups)}


@st.composite
def _slice_case(draw, shape):
    start, limit, strides = [], [], []
    for s in shape:
        a = draw(st.integers(0, s))
        start.append(a)
        limit.append(draw(st.integers(a, s)))
        strides.append(draw(st.integers(1, 3)))
    return {"start_indices": tuple(start), "limit_indices": tuple(limit),
            "strides": tuple(strides)}


VIEW_CASES = {
    "broadcast_in_dim": _broadcast_in_dim_case,
    "reshape": _reshape_case,
    "transpose": lambda shape: st.permutations(range(len(shape))).map(
        lambda p: {"permutation": tuple(p)}),
    "rev": lambda shape: st.lists(st.integers(0, max(len(shape) - 1, 0)), unique=True,
                                  max_size=len(shape)).map(
        lambda d: {"dimensions": tuple(sorted(d))}),
    "slice": _slice_case,
    "stop_gradient": lambda shape: st.just({}),
}


@pytest.mark.parametrize("name", VIEW)
@prebuilt_examples
@SETTINGS
@given(data=st.data(), shape=st.lists(st.integers(0, 4), max_size=3).map(tuple),
       seed=st.integers(0, 2**32 - 1), dt=st.sampled_from(["float32", "int32"]))
@example_body
def test_view_table(name, data, shape, seed, dt):
    prim, module = ALL[name]
    params = data.draw(VIEW_CASES[name](shape), label="params")
    rng = np.random.default_rng(seed)
    host = _values(rng, shape, dt, -3, 3, special=dt == "float32")
    host, x = _present(host, data.draw(st.sampled_from(LAYOUTS), label="layout"), rng)
    host = np.array(host)
    fn = _lax_fn(prim, module)
    got = fn(x, **params) if fn is not None else prim.bind(x, **params)
    _check(got, np.asarray(prim.reference(host, **params)), exact=True)


# ---- opaque primitives with simple params -----------------------------------------------------

def _counter_iota_case(data):
    shape = data.draw(st.lists(st.integers(0, 5), max_size=3).map(tuple), label="shape")
    return (), {"shape": shape}


OPAQUE_CASES = {"counter_iota": _counter_iota_case}


@pytest.mark.parametrize("name", sorted(OPAQUE_CASES))
@prebuilt_examples
@SETTINGS
@given(data=st.data())
@example_body
def test_opaque_table(name, data):
    prim, _ = ALL[name]
    hosts, params = OPAQUE_CASES[name](data)
    got = prim.bind(*[jnp.asarray(h) for h in hosts], **params)
    want = prim.reference(*hosts, **params)
    if prim.multiple_results:
        for g, w in zip(got, want):
            _check(g, np.asarray(w), exact=True)
    else:
        _check(got, np.asarray(want), exact=True)
