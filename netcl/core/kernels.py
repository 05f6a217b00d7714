"""Generated OpenCL C -> built, cached programs and reusable kernels.

Every kernel netcl launches passes through `build`: source + options + device give one
program, built once per process. Callers hold the returned `cl.Kernel` objects (never
`program.name`, which makes a new kernel object on each access). A failed build raises
`KernelBuildError` carrying the compiler's log and the numbered source.

Each compiler run costs a fixed time whatever the source's size, so a caller that knows
several sources ahead builds them together: inside `deferring(wanted)`, asking for a
program not built yet records a `BuildRequest` and raises `Deferred`; `build_together`
then builds what was recorded as one program (program_batch.py), and each source's kernels
come from it. jit's `build_kernels` pass works this way.
"""
import collections
import contextlib
import importlib
import os
import re
import threading
import warnings
from dataclasses import dataclass

import pyopencl as cl

from . import dtypes, float8, program_batch, subbyte, wide_math
from .target import X86_AVX512_ATTRIBUTE
from .launch import Kernel

_devices = importlib.import_module(".devices", __package__)   # (the module)

# Built programs, least recently asked for first. Launchers hold their kernels (and so their
# programs); this table only spares rebuilding a source a new launcher asks for again, and
# is bounded so that code compiled for ever new constants does not grow memory for ever.
_programs = collections.OrderedDict()
_MAX_PROGRAMS = 1024


class KernelBuildError(RuntimeError):
    """An OpenCL program failed to build; `.log` and `.source` say why."""

    def __init__(self, device, source, log):
        self.source = source
        self.log = log
        numbered = "\n".join(f"{i + 1:4d} | {line}" for i, line in enumerate(source.splitlines()))
        super().__init__(f"OpenCL build failed on {device.name}:\n{log}\n--- source ---\n{numbered}")


PREAMBLE_FP64 = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"

# CPU kernels move 8-wide vectors with netcl_vload8(T, p) / netcl_vstore8(T, v, p) (see
# `vload`). PoCL compiles vload8/vstore8 to out-of-line element copies, which make an adam
# update several times slower than going through a pointer to an under-aligned vector
# type (Clang's ext_vector_type with aligned(4): plain unaligned vector moves, valid at any
# offset). Compilers other than Clang keep vload8/vstore8.
_VECTOR_IO_CTYPES = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float")


def _vector_io_preamble():
    typedef = "typedef {t} netcl_{t}8u __attribute__((ext_vector_type(8), aligned(sizeof({t}))));"
    return "\n".join(
        ["#ifdef __clang__"] + [typedef.format(t=t) for t in _VECTOR_IO_CTYPES] +
        ["#ifdef cl_khr_fp64", typedef.format(t="double"), "#endif",
         "#define netcl_vload8(T, p) (*(const __global netcl_##T##8u*)(p))",
         "#define netcl_vstore8(T, v, p) (*(__global netcl_##T##8u*)(p) = (v))",
         "#else",
         "#define netcl_vload8(T, p) vload8(0, p)",
         "#define netcl_vstore8(T, v, p) vstore8(v, 0, p)",
         "#endif", ""])


PREAMBLE_VECTOR_IO = _vector_io_preamble()

# netcl_vload16(float, p) / netcl_vstore16(float, v, p): 16 floats at any alignment, as
# netcl_vload8 moves 8 (16-wide kernels on AVX-512 hosts: see target.X86_AVX512_ATTRIBUTE).
PREAMBLE_VECTOR_IO16 = "\n".join([
    "#ifdef __clang__",
    "typedef float netcl_float16u __attribute__((ext_vector_type(16), aligned(sizeof(float))));",
    "#define netcl_vload16(T, p) (*(const __global netcl_##T##16u*)(p))",
    "#define netcl_vstore16(T, v, p) (*(__global netcl_##T##16u*)(p) = (v))",
    "#else",
    "#define netcl_vload16(T, p) vload16(0, p)",
    "#define netcl_vstore16(T, v, p) vstore16(v, 0, p)",
    "#endif", ""])

# netcl_convert8(T, x): x as a T8 vector. On Clang, __builtin_convertvector (inline): PoCL
# (3.0, LLVM 14) on AVX-512 hosts compiles kernels without avx512f but links a builtin
# library built with it, so a call passing or returning a 512-bit vector (convert_int8 of a
# long8, vstore8 of a double8) breaks the ABI and the program comes out without its kernels.
PREAMBLE_CONVERT8 = "\n".join([
    "#ifdef __clang__",
    "#define netcl_convert8(T, x) __builtin_convertvector((x), T##8)",
    "#else",
    "#define netcl_convert8(T, x) convert_##T##8(x)",
    "#endif", ""])

# bfloat16 is storage only: a ushort holding the top half of a float32. Loads widen exactly;
# stores round to nearest even, and NaN stays a quiet NaN of the same sign (rounding could
# carry a NaN's payload into the exponent and make it infinite), as ml_dtypes and XLA do.
# netcl_bf16_round[N] is a store and a load in registers (see `round_to`); no 16-wide form,
# which PoCL on AVX-512 hosts cannot call (see PREAMBLE_CONVERT8).
PREAMBLE_BF16 = """#ifndef NETCL_BF16
#define NETCL_BF16
inline float netcl_bf16_load(ushort v) { return as_float(((uint)v) << 16); }
inline ushort netcl_bf16_store(float f) {
  const uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)(((u >> 16) & 0x8000u) | 0x7fc0u);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float netcl_bf16_round(float f) { return netcl_bf16_load(netcl_bf16_store(f)); }
""" + "".join(f"""inline float{w} netcl_bf16_round{w}(float{w} f) {{
  const uint{w} u = as_uint{w}(f);
  const uint{w} r = (u + (uint{w})0x7fffu + ((u >> 16) & (uint{w})1u)) & (uint{w})0xffff0000u;
  const uint{w} nan = (u & (uint{w})0x80000000u) | (uint{w})0x7fc00000u;
  return as_float{w}(select(r, nan, (u & (uint{w})0x7fffffffu) > (uint{w})0x7f800000u));
}}
""" for w in (2, 4, 8)) + """#endif
"""

# float16 rounding in registers: a fused kernel rounds each float16 result as an eager
# kernel's store would (vstore_half rounds to nearest even), through a private word.
PREAMBLE_F16_ROUND = """#ifndef NETCL_F16_ROUND
#define NETCL_F16_ROUND
inline float netcl_f16_round(float x) {
  ushort h; vstore_half(x, 0, (__private half*)&h); return vload_half(0, (__private half*)&h);
}
""" + "".join(f"""inline float{w} netcl_f16_round{w}(float{w} x) {{
  ushort{w} h; vstore_half{w}(x, 0, (__private half*)&h);
  return vload_half{w}(0, (__private half*)&h);
}}
""" for w in (2, 4, 8)) + """#endif
"""


def round_to(dtype, width, expr):
    """C expression of float (vector of `width`) `expr` rounded to storage float `dtype`
    (dtypes.STORAGE_FLOATS) and widened back: what storing it and loading it again gives,
    kept in registers. For a narrow integer (dtypes.SUBBYTE_INTS) `expr` is int / uint (or
    a vector of them) and comes back wrapped to the width, sign-extended where signed."""
    if dtype in dtypes.SUBBYTE_BITS:
        return subbyte.value(dtype, f"({expr})")
    if dtype in float8.FORMATS:
        return float8.round_to(dtype, width, expr)
    name = "netcl_bf16_round" if dtype == dtypes.bfloat16 else "netcl_f16_round"
    return f"{name}{width if width > 1 else ''}({expr})"


# Generated code spells cheap math builtins netcl_<name>(x). PoCL (3.0, LLVM 14) links its
# builtins out of line, even fabs and isnan (pocl issue 549): each call spills the live
# vector registers. On Clang CPU targets these become Clang's scalar builtins, which are
# LLVM intrinsics (inline; the vectorisers re-form vsqrtps / vroundps), with results
# identical to PoCL's own (the same IEEE operations, out of line), so an adam update's
# sqrt per element spills nothing. Other compilers get the OpenCL builtin. (NaN tests are
# spelled x != x in the templates, inline everywhere.)
INLINE_MATH = {             # name: (float body, double body) of x
    "sqrt": ("__builtin_sqrtf(x)", "__builtin_sqrt(x)"),
    "rsqrt": ("1.0f / __builtin_sqrtf(x)", "1.0 / __builtin_sqrt(x)"),   # PoCL's rsqrt too
    "fabs": ("__builtin_fabsf(x)", "__builtin_fabs(x)"),
    "floor": ("__builtin_floorf(x)", "__builtin_floor(x)"),
    "ceil": ("__builtin_ceilf(x)", "__builtin_ceil(x)"),
    "rint": ("__builtin_rintf(x)", "__builtin_rint(x)"),
    "round": ("__builtin_roundf(x)", "__builtin_round(x)"),
}
_INLINE_MATH_USE = re.compile(r"\bnetcl_(" + "|".join(INLINE_MATH) + r")\(")


def inline_math_preamble(names):
    """Definitions of the netcl_<name> functions in `names` (see INLINE_MATH)."""
    def defs(T, name, body):
        # vectors lane by lane, each lane written out: the SLP vectoriser turns that back
        # into vector instructions (halving through .lo/.hi leaves adam scalar, far slower)
        lane = re.compile(r"\bx\b")
        lines = [f"NETCL_INLINE {T} netcl_{name}({T} x) {{ return {body}; }}"]
        lines += [f"NETCL_INLINE{'16' if w == 16 else ''} {T}{w} netcl_{name}({T}{w} x) "
                  f"{{ return ({T}{w})("
                  + ", ".join(lane.sub(f"x.s{i:x}", body) for i in range(w)) + "); }"
                  for w in (2, 4, 8, 16)]
        return lines
    names = sorted(names)
    return "\n".join(
        ["#if defined(__clang__) && (defined(__x86_64__) || defined(__i386__) || "
         "defined(__aarch64__) || defined(__arm__))",
         "#define NETCL_INLINE static inline __attribute__((overloadable, always_inline))",
         # 16-lane forms take AVX-512 where 16-wide kernels do (target.X86_AVX512_ATTRIBUTE)
         "#if defined(__x86_64__) && !defined(NETCL_INLINE16)",
         f"#define NETCL_INLINE16 NETCL_INLINE {X86_AVX512_ATTRIBUTE}",
         "#elif !defined(NETCL_INLINE16)",
         "#define NETCL_INLINE16 NETCL_INLINE",
         "#endif"] +
        [d for n in names for d in defs("float", n, INLINE_MATH[n][0])] +
        ["#ifdef cl_khr_fp64"] +
        [d for n in names for d in defs("double", n, INLINE_MATH[n][1])] +
        ["#endif", "#else"] + [f"#define netcl_{n} {n}" for n in names] + ["#endif", ""])


def vload(dtype, width, ptr, cpu):
    """C expression of the `width` consecutive `dtype` values stored at `ptr`, any alignment:
    vload_halfN for float16 (storage only), lane by lane for bfloat16, float8.vload for the
    8-bit floats, netcl_vload8 on CPU devices (see PREAMBLE_VECTOR_IO), vloadN elsewhere.
    Bools stay uchar vectors."""
    if dtype in float8.FORMATS and float8.vload(dtype, width, ptr):
        return float8.vload(dtype, width, ptr)
    if dtype == dtypes.bfloat16 or dtype in float8.FORMATS or dtype in dtypes.SUBBYTE_BITS:
        lanes = ", ".join(load(dtype, f"({ptr})", i) for i in range(width))
        return f"(({compute_ctype(dtype)}{width})({lanes}))"
    if dtype == dtypes.float16:
        return f"vload_half{width}(0, {ptr})"
    if cpu and width == 8:
        return f"netcl_vload8({storage_ctype(dtype)}, {ptr})"
    if cpu and width == 16 and dtype == dtypes.float32:
        return f"netcl_vload16(float, {ptr})"
    return f"vload{width}(0, {ptr})"


def vstore(dtype, width, ptr, value, cpu):
    """C statement storing vector `value` as `dtype` at `ptr` (the counterpart of `vload`)."""
    if dtype in float8.FORMATS and float8.vstore(dtype, width, ptr, value):
        return float8.vstore(dtype, width, ptr, value)
    if dtype == dtypes.bfloat16 or dtype in float8.FORMATS or dtype in dtypes.SUBBYTE_BITS:
        lanes = " ".join(store(dtype, f"({ptr})", i, f"netcl_v.s{i:x}") for i in range(width))
        return f"{{ const {compute_ctype(dtype)}{width} netcl_v = {value}; {lanes} }}"
    if dtype == dtypes.float16:
        return f"vstore_half{width}({value}, 0, {ptr});"
    if cpu and width == 8:
        return f"netcl_vstore8({storage_ctype(dtype)}, {value}, {ptr});"
    if cpu and width == 16 and dtype == dtypes.float32:
        return f"netcl_vstore16(float, {value}, {ptr});"
    return f"vstore{width}({value}, 0, {ptr});"


@dataclass(frozen=True, slots=True)
class _Built:
    """A built program and, where it was built together with other sources, the names its
    kernels were given there ({name in the source: name in the program})."""
    program: object
    names: dict


@dataclass(frozen=True, slots=True)
class BuildRequest:
    """A source a launcher asked for while builds were deferred (see `deferring`)."""
    device: object
    source: str
    options: tuple


class Deferred(BaseException):
    """Raised by `build` inside `deferring` for a program not built yet, after recording
    it. A BaseException, so that a launcher's `except Exception` fallback does not take it
    for a failed build."""


_deferral = threading.local()


@contextlib.contextmanager
def deferring(wanted):
    """Within this block, asking for a program not built yet appends a BuildRequest to
    `wanted` and raises `Deferred` instead of building it: a caller walks every launcher
    a compiled function needs this way, then builds what they asked for at once with
    `build_together`."""
    outer = getattr(_deferral, "wanted", None)
    _deferral.wanted = wanted
    try:
        yield wanted
    finally:
        _deferral.wanted = outer


def _key(device, source, options):
    # Keyed by device, not only context: a program built for one device of a multi-device
    # context has no binary for the others, and enqueueing its kernels there crashes PoCL.
    return (device.context.int_ptr, device.cl_device.int_ptr, source, tuple(options))


_PREAMBLES = (PREAMBLE_VECTOR_IO, PREAMBLE_VECTOR_IO16, PREAMBLE_BF16, PREAMBLE_F16_ROUND,
              PREAMBLE_CONVERT8, PREAMBLE_FP64, *float8.SOURCES.values())


def _with_preambles(source):
    """`source` with the preamble definitions it uses (see PREAMBLE_*, INLINE_MATH)."""
    generated = source
    math = set(_INLINE_MATH_USE.findall(source))
    if math:
        source = inline_math_preamble(math) + source
    wide = set(wide_math.WIDE_MATH_USE.findall(generated))
    if wide:
        source = wide_math.wide_math_preamble(wide) + source
    if ("netcl_vload8" in source or "netcl_vstore8" in source) and \
            "#define netcl_vload8" not in source:   # (a source may carry its own)
        source = PREAMBLE_VECTOR_IO + source
    if ("netcl_vload16" in generated or "netcl_vstore16" in generated) and \
            "#define netcl_vload16" not in generated:
        source = PREAMBLE_VECTOR_IO16 + source
    if "netcl_bf16_" in generated:
        source = PREAMBLE_BF16 + source
    if "netcl_f16_round" in generated:
        source = PREAMBLE_F16_ROUND + source
    source = float8.preamble(generated) + source
    if "netcl_convert8" in generated:
        source = PREAMBLE_CONVERT8 + source
    if "double" in generated and "cl_khr_fp64" not in generated:   # (first line)
        source = PREAMBLE_FP64 + source
    return source


# Inline PTX for a newer target than NVIDIA's OpenCL compiler emits (Hopper's wgmma needs
# sm_90a; the compiler writes sm_90): the source names the target with `ptx_target_mark`
# and writes each such statement behind PTX_DEFERRED, a PTX comment, so that the OpenCL
# build assembles; `build_program` then uncomments them in the PTX the driver made,
# retargets it and builds that (NVIDIA's drivers take PTX as a program's binary).
PTX_DEFERRED = "//@"
_PTX_TARGET_MARK = re.compile(r"/\* netcl-ptx-target: (sm_\w+) \*/")


def ptx_target_mark(target):
    """The source comment asking `build_program` to rebuild a program's PTX for `target`
    (e.g. "sm_90a") with the statements behind PTX_DEFERRED enabled."""
    return f"/* netcl-ptx-target: {target} */"


def build_program(context, cl_device, source, options=()):
    """``cl.Program(context, source).build(options)`` for `cl_device`, and for a source
    carrying `ptx_target_mark` the rebuild its PTX asks for (see PTX_DEFERRED)."""
    with warnings.catch_warnings():
        # NVIDIA prints informational build logs; real failures raise
        warnings.simplefilter("ignore", cl.CompilerWarning)
        prg = cl.Program(context, source).build(options=list(options), devices=[cl_device])
        mark = _PTX_TARGET_MARK.search(source)
        if mark is None:
            return prg
        ptx = prg.get_info(cl.program_info.BINARIES)[0].decode().rstrip("\0")
        ptx = retarget_ptx(ptx, mark.group(1))
        return cl.Program(context, [cl_device], [ptx.encode()]).build(options=list(options))


def retarget_ptx(ptx, target):
    """PTX text `ptx` for `target` (its ``.target`` line's architecture replaced), with the
    statements behind PTX_DEFERRED enabled."""
    return re.sub(r"^\.target\s+sm_\w+", ".target " + target, ptx, count=1,
                  flags=re.M).replace(PTX_DEFERRED, "")


def _compile(device, source, options):
    """Build the program for `source` (preambles added) or raise KernelBuildError."""
    _devices.check_not_forked()   # (a build in a forked child would hang)
    source = _with_preambles(source)
    try:
        return build_program(device.context, device.cl_device, source, options)
    except cl.RuntimeError as e:
        raise KernelBuildError(device, source, str(e)) from None


def _remember(key, built):
    built = _programs.setdefault(key, built)   # (a thread that built it first wins)
    while len(_programs) > _MAX_PROGRAMS:
        _programs.popitem(last=False)
    return built


def _built(device, source, options):
    key = _key(device, source, options)
    built = _programs.get(key)
    if built is not None:
        _programs.move_to_end(key)
        return built
    wanted = getattr(_deferral, "wanted", None)
    if wanted is not None:
        wanted.append(BuildRequest(device, source, tuple(options)))
        raise Deferred(source)
    return _remember(key, _Built(_compile(device, source, options), {}))


def build(device, source, options=()):
    """Build (once) and return the cl.Program for `source` on `device`'s context."""
    return _built(device, source, options).program


def build_together(requests):
    """Build the sources of `requests` not built yet, as few programs as can hold them: one
    per device, options and FP_CONTRACT state (program_batch.combine). Where a combined
    program fails to build or lacks a kernel, each source is built alone instead; with
    NETCL_CHECK_IR set (the test suite), that is an error unless some source also fails
    alone (a source the combining broke)."""
    with deferring(None):       # (a build inside a deferring walk: build it now)
        _build_groups(requests)


def _build_groups(requests):
    groups = {}
    for r in requests:
        key = _key(r.device, r.source, r.options)
        if key not in _programs:
            group = (r.device.context.int_ptr, r.device.cl_device.int_ptr, r.options,
                     program_batch.contract_state(r.source))
            groups.setdefault(group, {}).setdefault(r.source, r)
    for group in groups.values():
        reqs = list(group.values())
        if len(reqs) == 1 or not _build_combined(reqs):
            _build_each(reqs)


def _build_combined(reqs):
    device, options = reqs[0].device, reqs[0].options
    source, names = program_batch.combine([r.source for r in reqs], _PREAMBLES)
    wanted = [names[i].get(n, n) for i, r in enumerate(reqs)
              for n in program_batch.kernel_names(r.source)]
    try:
        prg = _compile(device, source, options)
        have = _defined(prg, wanted)
    except (KernelBuildError, cl.Error) as e:
        failure = e
    else:
        if have.issuperset(wanted):
            for r, renamed in zip(reqs, names):
                _remember(_key(device, r.source, options), _Built(prg, renamed))
            return True
        failure = f"kernels missing from the combined program: {set(wanted) - have}"
    if _build_each(reqs) and _check_batches():
        raise AssertionError(f"{len(reqs)} sources build alone but not combined: {failure}")
    return False


def _defined(prg, names):
    """The kernels among `names` that `prg` defines. (Asked one by one: NVIDIA's driver
    answers CL_PROGRAM_KERNEL_NAMES only for a program built for every device of its
    context, and netcl builds for one device of a context that may hold several.)"""
    have = set()
    for n in names:
        try:
            cl.Kernel(prg, n)
        except cl.Error:
            continue
        have.add(n)
    return have


def _build_each(reqs):
    """Build each request alone; whether all built (a failure is left for the launcher
    that asks for it to raise)."""
    ok = True
    for r in reqs:
        try:
            _built(r.device, r.source, r.options)
        except KernelBuildError:
            ok = False
    return ok


def _check_batches():
    return os.environ.get("NETCL_CHECK_IR", "") not in ("", "0")


class TrackedKernel(cl.Kernel):
    """A cl.Kernel that remembers its arguments (`arguments`: index -> value, every one
    set through it; `scalar_arg_dtypes` as given to `kernel`): a recorded replay of a
    compiled call (transforms/replay.py) reads which buffers each launch took and makes
    a kernel object of its own with the same arguments."""

    def set_arg(self, index, value):
        self.arguments[index] = value
        _set_arg(self, index, value)

    def set_args(self, *values):
        self.arguments.update(enumerate(values))
        _set_args(self, *values)


_set_arg, _set_args = cl.Kernel.set_arg, cl.Kernel.set_args


def kernel(device, source, name, scalar_arg_dtypes=None, options=()):
    """A fresh cl.Kernel from the (cached) program; the caller keeps it for reuse.

    Each launcher owns its kernel object so that arguments that never change for it
    (sizes, offsets, metadata buffers) are set once and only buffers are set per call.
    """
    built = _built(device, source, options)
    prg = built.program
    try:
        k = TrackedKernel(prg, built.names.get(name, name))
    except cl.LogicError as e:
        # A compiler may "succeed" without the kernel (PoCL on AVX-512 hosts, given a
        # builtin called with a 512-bit vector): say so with its log, not INVALID_KERNEL_NAME
        try:
            log = prg.get_build_info(device.cl_device, cl.program_build_info.LOG)
        except cl.Error:
            log = ""
        raise KernelBuildError(device, source, f"the program has no kernel {name!r} "
                               f"({e}); compiler log:\n{log}") from None
    k.arguments = {}
    k._netcl_source = source    # what jit's lower().kernels shows (see `described`)
    k._netcl_name = name        # (its function_name may be the batch's, program_batch)
    k.scalar_arg_dtypes = scalar_arg_dtypes
    if scalar_arg_dtypes is not None:
        k.set_scalar_arg_dtypes(scalar_arg_dtypes)
    return k


def described(k):
    """The Kernel record (name and source, as the launcher asked for it) of a kernel from
    `kernel`."""
    return Kernel(k._netcl_name, k._netcl_source)


def clear_programs():
    """Drop the process's built programs (launchers that hold a kernel keep theirs alive);
    `netcl.clear_caches()` calls this."""
    _programs.clear()


def round_up(n, m):
    return (n + m - 1) // m * m


def grid_1d(device, n):
    """(global, local) sizes for one work-item per element, bounded by the device limits."""
    wg = device.work_group
    return (max(round_up(n, wg), wg),), (wg,)


def walk_grid(device, n, walk):
    """(global, local) sizes for `n` units (vectors, elements or rows) of which each
    work-item walks `walk` consecutive ones: work-groups of one work-item where walk > 1
    (the Target's elementwise_walk), grid_1d's one unit per work-item where walk is 1."""
    if walk <= 1:
        return grid_1d(device, n)
    return (max(-(-n // walk), 1),), (1,)


# ---- C spelling of loads and stores (float16, bfloat16 and the 8-bit floats are storage
# only: see vload_half/vstore_half, PREAMBLE_BF16 and float8.py; a narrow integer is its
# low bits in a uchar, as ml_dtypes lays it out, read into an int / uint register: see
# subbyte.py) ----

def storage_ctype(dtype):
    return dtypes.STORAGE_CTYPE[dtype]


def compute_ctype(dtype):
    return dtypes.COMPUTE_CTYPE[dtype]


def load(dtype, ptr, index):
    """C expression reading element `index` of `ptr` as the compute type."""
    if dtype == dtypes.bfloat16:
        return f"netcl_bf16_load({ptr}[{index}])"
    if dtype in float8.FORMATS:
        return float8.load(dtype, f"{ptr}[{index}]")
    if dtype in dtypes.SUBBYTE_BITS:
        return subbyte.value(dtype, f"({compute_ctype(dtype)}){ptr}[{index}]")
    if dtype == dtypes.float16:
        return f"vload_half({index}, {ptr})"
    if dtype == dtypes.bool_:
        return f"(int){ptr}[{index}]"
    return f"{ptr}[{index}]"


def store(dtype, ptr, index, value):
    """C statement writing `value` (compute type) to element `index` of `ptr`."""
    if dtype == dtypes.bfloat16:
        return f"{ptr}[{index}] = netcl_bf16_store({value});"
    if dtype in float8.FORMATS:
        return f"{ptr}[{index}] = {float8.store(dtype, value)};"
    if dtype in dtypes.SUBBYTE_BITS:    # wrapped: the width's low bits
        return f"{ptr}[{index}] = {subbyte.bits(dtype, value)};"
    if dtype == dtypes.float16:
        return f"vstore_half({value}, {index}, {ptr});"
    if dtype == dtypes.bool_:
        return f"{ptr}[{index}] = (uchar)(({value}) != 0);"
    return f"{ptr}[{index}] = {value};"
