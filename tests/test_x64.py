"""x64 off by default, as in JAX: float64 and int64/uint64 data and dtype requests give
float32 and int32/uint32 unless `netcl.config.update("enable_x64", True)` or
NETCL_ENABLE_X64=1. The default is checked in
a subprocess (the suite runs with x64 on, see conftest.py), against JAX's own default. The
default dtypes that follow the setting (Python floats, creation functions, samplers, weak
types, result_type) are compared with JAX's under both settings, in this process."""
import ast
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from util import build_kernels_together

CASES = [
    "lib.asarray(np.zeros(3))",
    "lib.array(np.float64(1.5))",
    "lib.ones(2) * np.float64(2)",
    "lib.ones(2, np.float32) + np.ones(2)",
    "lib.asarray(np.arange(3))",
    "lib.zeros(3, lib.float64)",
    "lib.ones(3).astype(np.float64)",
    "lib.float64(1.5)",
    "lib.sum(lib.asarray(np.ones(3)))",
    "lib.arange(3.0)",
    "lib.linspace(0.0, 1.0, 5)",
    "lib.full((2,), 1.5, np.float64)",
]


# Programs that run in a fresh interpreter with neither x64 variable set (the suite sets
# NETCL_ENABLE_X64), by the test that checks each: one interpreter runs them one after the
# other (a start-up importing netcl, PyOpenCL and JAX costs seconds), each in its own
# namespace, and reports each one's outcome; "off_by_default" last (it turns x64 on at its
# end).
_UNSET_X64 = {
    "keeps_64_bit_data_32_bit": textwrap.dedent("""
        import numpy as np
        import netcl, netcl.numpy as jnp
        assert not netcl.config.enable_x64
        assert jnp.asarray(np.arange(3)).dtype == np.int32
        assert jnp.asarray(np.arange(3, dtype=np.uint64)).dtype == np.uint32
        assert jnp.arange(3).dtype == np.int32 and jnp.argmax(jnp.ones(3)).dtype == np.int32
        assert jnp.zeros(2, jnp.int64).dtype == np.int32 and jnp.int_(3).dtype == np.int32
        assert jnp.sum(jnp.arange(3)).dtype == np.int32
        assert jnp.mean(jnp.arange(3)).dtype == np.float32
        print("ok")
        """),
    "off_by_default": textwrap.dedent(f"""
        import warnings
        warnings.simplefilter("ignore")
        import numpy as np
        import jax.numpy as jjnp
        import netcl, netcl.numpy as jnp
        assert not netcl.config.enable_x64
        for case in {CASES!r}:
            ours = eval(case, {{"lib": jnp, "np": np}}).dtype
            theirs = eval(case, {{"lib": jjnp, "np": np}}).dtype
            assert ours == theirs, (case, ours, theirs)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert jnp.zeros(2, np.float64).dtype == np.float32
        assert any("enable_x64" in str(w.message) for w in seen), seen
        netcl.config.update("jax_enable_x64", True)
        assert netcl.config.read("enable_x64")
        if netcl.default_device().capabilities.fp64:
            assert jnp.asarray(np.zeros(3)).dtype == np.float64
        print("ok")
        """),
}


@pytest.fixture(scope="module")
def x64_unset_run():
    """Run each program of _UNSET_X64 in one fresh interpreter with neither x64 variable
    set: (its output, {name: "ok" or the traceback of what it raised})."""
    env = {k: v for k, v in os.environ.items() if k not in ("NETCL_ENABLE_X64",
                                                              "JAX_ENABLE_X64")}
    code = "import traceback\n" + "".join(
        f"try:\n    exec({body!r}, {{}})\nexcept BaseException:\n"
        f"    print({name!r}, repr(traceback.format_exc()), flush=True)\n"
        f"else:\n    print({name!r}, repr('ok'), flush=True)\n"
        for name, body in _UNSET_X64.items())
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300)
    outcomes = {}
    for line in r.stdout.splitlines():
        name, _, outcome = line.partition(" ")
        if name in _UNSET_X64:
            outcomes[name] = ast.literal_eval(outcome)
    return r, outcomes


def _runs_with_x64_unset(name, run):
    """The program `name` of _UNSET_X64 ran to its end (it prints "ok" there) in the
    interpreter with x64 unset."""
    r, outcomes = run
    assert r.returncode == 0 and outcomes.get(name) == "ok", \
        f"{name}: {outcomes.get(name, 'no outcome')}\n" + r.stdout[-2000:] + r.stderr[-4000:]


def test_x64_is_off_by_default_as_in_jax(x64_unset_run):
    pytest.importorskip("jax")
    _runs_with_x64_unset("off_by_default", x64_unset_run)


def test_x64_on_keeps_float64_where_the_device_has_it():
    assert netcl.config.enable_x64          # (conftest.py)
    fp64 = netcl.default_device().capabilities.fp64
    want = np.float64 if fp64 else np.float32
    assert jnp.asarray(np.zeros(3)).dtype == want
    if fp64:                                        # Python floats: the default float
        assert jnp.array([1.5]).dtype == np.float64


def test_bad_options_and_values():
    with pytest.raises(AttributeError, match="unknown option 'enable_x32'"):
        netcl.config.update("enable_x32", True)
    with pytest.raises(TypeError, match="takes a bool"):
        netcl.config.update("enable_x64", "yes")
    env = dict(os.environ, NETCL_ENABLE_X64="maybe")
    r = subprocess.run([sys.executable, "-c", "import netcl"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "NETCL_ENABLE_X64='maybe'" in r.stderr, r.stderr[-2000:]


# ---- default dtypes with x64 on and off, against JAX ---------------------------------------
# Each expression runs with netcl's modules and with JAX's under the same x64 setting: `lib`
# is netcl.numpy / jax.numpy, `random`, `nn`, `init` (nn.initializers), `dtypes` and `scipy`
# likewise; `key`, `i32` (an int32 vector), `f32` and `f16` (float vectors of its size) are
# made by each library. Compared: the dtype and, for arrays, the weak type.
DEFAULT_DTYPE_CASES = [
    # Python scalars and lists
    "lib.asarray(0.7)", "lib.array(2.0)", "lib.asarray(3)", "lib.asarray(True)",
    "lib.array([1.0, 2.0])", "lib.asarray([1, 2])", "lib.asarray([1, 2.0])",
    "lib.array(2.0, dtype=float)", "lib.asarray(2.0, lib.float32)",
    "lib.asarray(np.float32(2.0))", "lib.asarray(np.float64(2.0))",
    # creation functions without a dtype
    "lib.zeros(3)", "lib.ones((2, 2))", "lib.empty(2)", "lib.full(3, 1.5)", "lib.full(3, 1)",
    "lib.full(3, True)", "lib.full((), 2.0)", "lib.zeros_like(i32)", "lib.full_like(f32, 2.5)",
    "lib.eye(2)", "lib.identity(2)", "lib.linspace(0, 1, 5)",
    "lib.linspace(0, 1, 5, dtype=lib.int32)", "lib.arange(0.0, 1.0, 0.1)", "lib.arange(2.0)",
    "lib.arange(0, 5, 1.0)", "lib.arange(3)", "lib.arange(True, 3)",
    "lib.fromfunction(lambda a: a, (2,))", "lib.fft.fftfreq(4)", "lib.fft.rfftfreq(4)",
    "lib.hanning(4)", "lib.hamming(1)", "lib.bartlett(4)", "lib.blackman(0)", "lib.kaiser(4, 1.0)",
    "lib.zeros(3, float)", "lib.zeros(3, int)", "lib.ones(2).astype(float)",
    "lib.empty_like(i32, dtype=float)",
    # scalar types, result_type, promote_types, canonicalize_dtype
    "lib.float_", "lib.int_", "lib.float_(1.5)", "lib.int_(3)", "lib.float32(2.0)",
    "lib.float64(2.0)", "lib.result_type(float)", "lib.result_type(int)",
    "lib.result_type(1.0)", "lib.result_type(1)", "lib.result_type(lib.float32, float)",
    "lib.result_type(i32, 1.0)", "lib.result_type(f16, 2.0)", "lib.result_type(bool)",
    "dtypes.canonicalize_dtype(lib.promote_types(float, int))",
    "lib.promote_types(lib.float32, float)",
    "lib.promote_types(int, lib.int32)", "lib.promote_types(lib.int32, lib.float16)",
    "dtypes.canonicalize_dtype(float)", "dtypes.canonicalize_dtype(np.float64)",
    "dtypes.canonicalize_dtype(int)", "dtypes.canonicalize_dtype(np.int64)",
    "dtypes.result_type(lib.float32, float)", "dtypes.result_type(float)",
    # weak types meeting arrays
    "f32 * 2.0", "f16 * 2.0", "i32 * 2.5", "i32 + 1.0", "(i32 * 2.5) * f32", "i32 + 1",
    "lib.asarray(2.0) * f32", "lib.asarray(2.0) * f16", "lib.full(3, 1.5) * f32",
    "lib.asarray(2.0) * 2", "2.0 * lib.asarray(3)", "lib.asarray(True) * 2.5",
    "lib.asarray(True) + 1",
    "lib.asarray(1) + lib.ones(2, lib.uint32)", "lib.asarray(2) / 2", "lib.asarray(2) / 2.0",
    # functions that need floats: int32 arrays give float32, Python ints the default float
    "lib.sin(i32)", "lib.sqrt(i32)", "i32 / i32", "lib.true_divide(i32, 2)", "lib.mean(i32)",
    "lib.var(i32)", "lib.std(i32)", "lib.median(i32)", "lib.quantile(i32, 0.5)",
    "lib.average(i32)", "lib.cov(i32)", "lib.histogram(i32)[1]", "lib.gradient(i32)",
    "lib.i0(i32)", "lib.polyder(i32)", "lib.convolve(i32, i32)", "lib.angle(i32)",
    "lib.mean(lib.asarray([True, False]))", "lib.mean(lib.arange(3, dtype=lib.uint32))",
    "lib.linalg.det(lib.eye(2, dtype=lib.int32))", "nn.softmax(i32)",
    "lib.sin(2)", "lib.sqrt(lib.asarray(3))", "lib.mean(lib.asarray(3))", "lib.sin(2.0)",
    "lib.exp2(3)", "lib.round(2.5)", "lib.floor(2)", "lib.power(i32, 2.0)",
    "lib.sum(lib.asarray([True]))", "lib.cumsum(lib.asarray([True]))",
    "scipy.special.erf(1)", "scipy.special.erf(i32)", "scipy.stats.norm.pdf(1.0)",
    "scipy.stats.norm.cdf(i32)",
    # samplers and initializers without a dtype
    "random.uniform(key, (2,))", "random.normal(key, (2,))",
    "random.truncated_normal(key, -1.0, 1.0, (2,))", "random.gumbel(key, (2,))",
    "random.exponential(key, (2,))", "random.laplace(key, (2,))", "random.logistic(key, (2,))",
    "random.cauchy(key, (2,))", "random.normal(key, (2,), lib.float32)",
    "random.bernoulli(key, 0.5, (2,))", "random.randint(key, (2,), 0, 5)",
    "random.choice(key, 5, (2,))", "random.permutation(key, 5)",
    "random.categorical(key, lib.zeros(3))", "random.rademacher(key, (2,))",
    "init.normal()(key, (2,))", "init.glorot_normal()(key, (2, 2))",
    "init.uniform()(key, (2,))", "init.constant(1.5)(key, (2,))", "init.zeros(key, (2,))",
    "init.ones(key, (2,))", "nn.one_hot(i32, 3)", "nn.sigmoid(1.0)",
]


def _dtype_and_weak(v):
    """What a case's value is compared by: (dtype, weak) for arrays, the dtype otherwise."""
    if isinstance(v, tuple):
        return tuple(_dtype_and_weak(x) for x in v)
    array = hasattr(v, "shape") and not isinstance(v, (type, np.dtype))
    d = np.dtype(v.dtype if array else v)
    return (str(d), bool(getattr(v, "weak_type", False))) if array else str(d)


def _outcome(case, namespace):
    try:
        return _dtype_and_weak(eval(case, dict(namespace)))
    except Exception as e:      # (compared too: both must raise)
        return f"raises {type(e).__name__}: {e}"


def _jax_outcome(case, namespace):
    """_outcome of `case` in JAX, read from jax.eval_shape where it traces: the dtype and
    weak type JAX's eager ops give (they are their traced abstract values), without an XLA
    compile per op. Eagerly where it does not trace (value-dependent shapes, results that
    are not arrays, errors), so a case that raises still raises."""
    import jax
    try:
        return _dtype_and_weak(jax.eval_shape(lambda: eval(case, dict(namespace))))
    except Exception:   # noqa: BLE001
        return _outcome(case, namespace)


def _namespace(lib, random, nn, dtypes, scipy):
    return {"lib": lib, "random": random, "nn": nn, "init": nn.initializers, "dtypes": dtypes,
            "scipy": scipy, "np": np, "key": random.PRNGKey(0),
            "i32": lib.arange(3, dtype=lib.int32), "f32": lib.ones(3, lib.float32),
            "f16": lib.ones(3, lib.float16)}


# (the fixture `x64`: tests/conftest.py)


def test_default_dtypes_follow_x64_as_in_jax(x64):
    import jax
    import jax.numpy as jjnp
    import jax.scipy.special, jax.scipy.stats   # noqa: E401,F401
    import netcl.scipy.special, netcl.scipy.stats   # noqa: E401,F401
    ours = _namespace(jnp, netcl.random, netcl.nn, netcl.dtypes, netcl.scipy)
    theirs = _namespace(jjnp, jax.random, jax.nn, jax.dtypes, jax.scipy)
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (jnp.float_ with x64 off: checked below)
        # (the kernels the cases launch, built in few compiler runs: see util.py)
        build_kernels_together([lambda c=c: eval(c, dict(ours))
                                for c in DEFAULT_DTYPE_CASES])
        for case in DEFAULT_DTYPE_CASES:
            got, want = _outcome(case, ours), _jax_outcome(case, theirs)
            if got != want:
                wrong.append(f"{case}: netcl {got}, JAX {want}")
    assert not wrong, "\n".join(wrong)


def test_defaults_read_the_setting_at_each_call(x64):
    want = np.float64 if x64 else np.float32
    assert netcl.core.dtypes.default_float_dtype() == want
    # (jnp.tri: the default float as JAX 0.11 gives it; JAX 0.10 gave float32 with x64 too)
    assert jnp.tri(3).dtype == want
    assert netcl.core.dtypes.default_int_dtype() == (np.int64 if x64 else np.int32)
    assert jnp.zeros(3).dtype == want and jnp.asarray(0.7).dtype == want
    np.testing.assert_allclose(np.asarray(jnp.asarray(0.7)), 0.7, rtol=0 if x64 else 1e-7)
    # under jit too: a Python float argument is a weak default float
    f = netcl.jit(lambda a, b: (a * b, jnp.ones(2)))
    prod, ones = f(jnp.ones(2, jnp.float32), 0.5)
    assert prod.dtype == np.float32 and ones.dtype == want
    assert f(jnp.ones(2, jnp.int32), 0.5)[0].dtype == want


def test_float_scalar_type_warns_without_x64_as_in_jax(x64):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert jnp.float_(1.5).dtype == (np.float64 if x64 else np.float32)
        assert jnp.zeros(2, float).dtype == (np.float64 if x64 else np.float32)
    assert len(seen) == (0 if x64 else 1), [str(w.message) for w in seen]


# ---- integers with x64 on and off, against JAX ---------------------------------------------
# With x64, Python ints, arange, indices and NumPy int64/uint64 data are int64/uint64 and
# promote on JAX's lattice (int32 with uint32: int64; uint64 with signed ints: a weak
# float); sums of narrower ints widen to them. Without x64 the same expressions give the
# 32-bit types. Compared: the dtype, the weak type, and (but for random draws and
# `unique`'s padded order) the values; where JAX raises, netcl must raise the same type.
# `i64` and `u64` hold small values, so that they index; `b64` holds values past 2**31.
INT_CASES = [
    # creation and Python ints
    "lib.arange(3)", "lib.arange(2, 9, 3)", "lib.asarray(3)", "lib.asarray([1, 2])",
    "lib.array(2**40)", "lib.asarray([2**40, -1])", "lib.full(3, 7)", "lib.zeros(2, int)",
    "lib.zeros(2, lib.int64)", "lib.ones(2, lib.uint64)", "lib.asarray(np.arange(3))",
    "lib.asarray(np.arange(3, dtype=np.uint64))", "lib.asarray(np.int64(5))",
    "lib.asarray(np.uint64(5))", "lib.int64(3)", "lib.uint64(3)", "lib.int_(3)",
    "lib.arange(3).astype(lib.uint64)",
    "lib.indices((2, 3))", "lib.tri(2, dtype=int)", "lib.eye(2, dtype=int)",
    "lib.linspace(0, 10, 3, dtype=int)",
    # promotion
    "i64 + i32", "i64 + u32", "i32 + u32", "u64 + u32", "i64 + u64", "u64 + i32",
    "i64 + 1", "u64 + 1", "u64 - 1", "i64 * 2.5", "i64 + f32", "i64 + f16", "u64 * f32",
    "lib.asarray(3) + i32", "lib.asarray(3) + u32", "lib.asarray(3) + f32",
    "i64 // (i32 + 1)", "i64 % 3", "i64 / 2", "u64 / u64", "i64 ** 2", "-i64", "abs(i64)",
    "i64 & u32", "i64 | 1", "~u64", "i64 == i32", "u64 < 2",
    "lib.maximum(i64, u32)", "lib.minimum(u64, 3)", "lib.where(i64 > 0, i64, 0)",
    "lib.where(i64 > 0, i32, u64)", "lib.clip(i64, 0, 1)", "lib.sign(u64)", "lib.abs(i64)",
    "lib.floor_divide(u64, 2)", "lib.remainder(i64, -2)", "lib.power(i64, 3)",
    "lib.left_shift(u64, u64)", "lib.right_shift(i32, 1)", "lib.bitwise_xor(i64, i64)",
    "lib.gcd(i64, 4)", "lib.lcm(i64, 4)", "lib.square(i64)",
    # needing floats
    "lib.sin(i64)", "lib.sqrt(u64)", "i64 / i64", "lib.mean(i64)", "lib.mean(lib.arange(3))",
    "lib.var(u64)", "lib.std(i64)", "lib.median(i64)", "lib.average(i64)", "lib.exp(i64)",
    "lib.mean(i32)", "lib.true_divide(i32, i64)",
    # reductions
    "lib.sum(i32)", "lib.sum(u32)", "lib.sum(i64)", "lib.sum(u64)", "lib.sum(i32 > 0)",
    "lib.prod(i32)", "lib.prod(u32)", "lib.max(i64)", "lib.min(u64)", "lib.cumsum(i32)",
    "lib.cumsum(i64)", "lib.cumsum(i32 > 0)", "lib.cumprod(u32)", "lib.cumprod(u64)",
    "lib.sum(i32, dtype=lib.int32)", "lib.count_nonzero(i32)", "lib.ptp(i64)",
    "lib.trace(lib.eye(2, dtype=lib.int32))", "lib.all(i64)", "lib.any(u64)",
    # indices
    "lib.argmax(i32)", "lib.argmin(i64)", "lib.argmax(f32)", "lib.argsort(i32)",
    "lib.argsort(u64)", "lib.sort(i64)", "lib.sort(u64)", "lib.nonzero(i32)[0]",
    "lib.where(i32)[0]", "lib.argwhere(i32)", "lib.flatnonzero(i32)",
    "lib.searchsorted(i32, 1)", "lib.searchsorted(lib.sort(i64), i64)", "lib.digitize(i32, i32)",
    "lib.bincount(i32)", "lib.unravel_index(i32, (3,))[0]", "lib.ravel_multi_index((i32,), (3,))",
    "lib.unique(i64)", "lib.unique(i32, return_index=True)[1]",
    "lib.unique(i32, return_inverse=True)[1]", "lib.unique(i32, return_counts=True)[1]",
    "lib.diag_indices(2)[0]", "lib.tril_indices(2)[0]", "lib.triu_indices(3, 1)[1]",
    "lib.histogram(i64)[0]", "lib.lexsort([i32])", "lib.argpartition(i32, 1)",
    "lib.nanargmax(f32)",
    # indexing and structure
    "i64[1]", "i64[i64]", "i64[i32]", "f32[i64]", "f32[u64]", "i64[1:]", "i64[::-1]",
    "lib.take(f32, i64)", "lib.take_along_axis(f32, i64, 0)", "f32.at[i64].set(1.0)",
    "i64.at[0].add(5)", "u64.at[i32].max(2)", "lib.concatenate([i64, i32])",
    "lib.concatenate([i64, u64])", "lib.stack([u64, u64])", "lib.pad(i64, 1)",
    "lib.transpose(lib.reshape(i64, (3, 1)))", "lib.broadcast_to(u64, (2, 3))",
    "lib.roll(i64, 1)", "lib.flip(u64)", "lib.tile(i64, 2)", "lib.repeat(i64, 2)",
    "lib.outer(i64, i64)", "lib.dot(i64, i64)", "lib.matmul(i32, i32)", "lib.dot(i64, f32)",
    "lib.diff(u64)", "lib.ediff1d(i64)", "lib.cross(f32, f32)", "lib.convolve(i64, i64)",
    "lax.dynamic_slice(i64, (i64[1],), (2,))", "lax.dynamic_update_slice(i64, i64[:1], (1,))",
    "lax.dynamic_slice(f32, (1,), (2,))", "lax.iota(lib.int64, 3)", "lax.iota(int, 3)",
    "lax.convert_element_type(f32, lib.int64)", "lax.bitcast_convert_type(i64, lib.float64)",
    "lax.shift_right_logical(i64, i64)", "lax.population_count(i64)",
    "lax.top_k(i64, 2)[1]", "lax.sort(i64)", "lax.argmax(f32, 0, lib.int64)",
    "lax.reduce_max(i64, (0,))", "lax.cumsum(u64)", "lax.rem(i64, i64)", "lax.div(u64, u64)",
    # random
    "random.randint(key, (2,), 0, 5)", "random.randint(key, (2,), 0, 5, lib.int64)",
    "random.choice(key, 5, (2,))", "random.permutation(key, 5)",
    "random.categorical(key, lib.zeros(3))", "random.bits(key, (2,), lib.uint64)",
    "nn.one_hot(i64, 3)",
    # values past 2**31
    "b64 * b64", "b64 + 2**40", "b64 // 7", "b64 // -7", "b64 % 7", "b64 % -7",
    "lax.div(b64, -i64 - 1)", "lax.rem(b64, i64 + 3)", "lib.abs(b64)", "lib.sign(b64)",
    "lib.right_shift(b64, 3)", "lib.left_shift(b64, 20)", "lax.shift_right_logical(b64, i64)",
    "b64.astype(lib.float32)", "b64.astype(lib.int32)", "b64.astype(lib.uint64)",
    "lib.sum(b64)", "lib.max(b64)", "lib.argmax(b64)", "lib.argmin(b64)", "lib.cumsum(b64)",
    "lib.cumprod(b64)", "lib.sort(b64)", "lib.argsort(b64)", "lib.maximum(b64, 0)",
    "lib.where(b64 > 0, b64, -b64)", "lib.concatenate([b64, b64[::-1]])", "b64[i64]",
    "lib.mean(b64)", "b64 / 3", "lib.float32(2.0**40).astype(lib.int64)",
]


def _int_namespace(lib, random, nn, lax):
    return {"lib": lib, "random": random, "nn": nn, "lax": lax, "np": np,
            "key": random.PRNGKey(0), "i32": lib.arange(3, dtype=lib.int32),
            "u32": lib.arange(3, dtype=lib.uint32),
            "i64": lib.asarray(np.array([2, 0, 1]), dtype=lib.int64),
            "u64": lib.asarray(np.array([1, 2, 0]), dtype=lib.uint64),
            "b64": lib.asarray(np.array([5, -2**33 + 1, 2**35 + 3]), dtype=lib.int64),
            "f32": lib.asarray([0.5, 1.5, -2.0], lib.float32),
            "f16": lib.ones(3, lib.float16)}


def _int_outcome(case, namespace):
    try:
        v = eval(case, dict(namespace))
    except Exception as e:
        return f"raises {type(e).__name__}", None
    return _dtype_and_weak(v), v


def _values_differ(ours, theirs):
    flat = (lambda v: [np.asarray(x) for x in (v if isinstance(v, (tuple, list)) else [v])])
    for a, b in zip(flat(ours), flat(theirs)):
        if a.shape != b.shape:
            return f"shape {a.shape} != {b.shape}"
        same = np.array_equal(a, b) if a.dtype.kind in "biu" else \
            np.allclose(a, b, rtol=1e-6, equal_nan=True)
        if not same:
            return f"{a.tolist()} != {b.tolist()}"
    return None


def test_integer_dtypes_and_values_follow_x64_as_in_jax(x64):
    import jax
    import jax.numpy as jjnp
    wrong = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # (JAX without x64 warns for int64 requests)
        ours = _int_namespace(jnp, netcl.random, netcl.nn, netcl.lax)
        theirs = _int_namespace(jjnp, jax.random, jax.nn, jax.lax)
        # (the kernels the cases launch, built in few compiler runs: see util.py)
        build_kernels_together([lambda c=c: eval(c, dict(ours)) for c in INT_CASES])
        for case in INT_CASES:
            (got, vg), (want, vw) = _int_outcome(case, ours), _int_outcome(case, theirs)
            if got != want:
                wrong.append(f"{case}: netcl {got}, JAX {want}")
            elif vg is not None and "random" not in case and "unique" not in case:
                diff = _values_differ(vg, vw)
                if diff:
                    wrong.append(f"{case}: values {diff}")
    assert not wrong, "\n".join(wrong)


def test_x64_off_keeps_64_bit_data_32_bit(x64_unset_run):
    _runs_with_x64_unset("keeps_64_bit_data_32_bit", x64_unset_run)


def test_prng_keys_of_64_bit_seeds_as_in_jax(x64):
    import jax
    import jax.numpy as jjnp
    for seed in (5, -1, 2**40, -2**40 - 3):
        ours = [np.asarray(netcl.random.PRNGKey(seed))]
        theirs = [np.asarray(jax.random.PRNGKey(seed))]
        if x64:     # (without x64, JAX's int32 arrays cannot hold these seeds)
            ours.append(np.asarray(netcl.random.PRNGKey(jnp.asarray(seed))))
            theirs.append(np.asarray(jax.random.PRNGKey(jjnp.asarray(seed))))
        for a, b in zip(ours, theirs):
            assert a.tolist() == b.tolist(), (seed, a, b)
