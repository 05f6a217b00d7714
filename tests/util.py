"""Shared test helpers: random data, tolerances, hypothesis strategies, layouts."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

import netcl.numpy as jnp

FLOAT_TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}


def rand(rng, shape, dtype=np.float32, low=-3.0, high=3.0, special=False):
    """Random host data of `dtype`; with special=True some entries are inf/-inf/nan/0."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo = max(int(low), np.iinfo(dtype).min)
        return rng.integers(lo, int(high) + 1, size=shape).astype(dtype)
    x = rng.uniform(low, high, size=shape).astype(dtype)
    if special and x.size:
        flat = x.reshape(-1)
        for v in (np.inf, -np.inf, np.nan, 0.0):
            flat[rng.integers(0, flat.size)] = v
    return x


def assert_close(got, want, dtype=None, rtol=None, atol=None):
    """Compare a netcl result with a NumPy reference (dtype and shape too)."""
    got_h = np.asarray(got)
    want = np.asarray(want)
    assert got_h.shape == want.shape, f"shape {got_h.shape} != {want.shape}"
    if dtype is not None:
        assert got_h.dtype == np.dtype(dtype), f"dtype {got_h.dtype} != {dtype}"
    if got_h.dtype.kind == "f":
        tol = FLOAT_TOL.get(got_h.dtype, 1e-5)
        np.testing.assert_allclose(got_h.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol or tol, atol=atol if atol is not None else tol,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(got_h, want)


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=5):
    return st.lists(st.integers(min_side, max_side), min_size=min_dims,
                    max_size=max_dims).map(tuple)


def layouts():
    """How to present a host array to netcl: dense, transposed view, reversed view."""
    return st.sampled_from(["dense", "transposed", "reversed"])


def to_device(host, layout="dense"):
    """Upload `host`, returning a netcl array with the same values in the given layout."""
    if layout == "dense" or host.ndim == 0:
        return jnp.asarray(host)
    if layout == "transposed":
        # store the transpose densely, then view it transposed back
        return jnp.transpose(jnp.asarray(np.ascontiguousarray(host.T)))
    if layout == "reversed":
        return jnp.flip(jnp.asarray(np.ascontiguousarray(np.flip(host))))
    raise ValueError(layout)


def float32_params(tree):
    """`tree` with its float64 leaves converted to float32: stax layers and initializers give
    the default float, float64 under the suite's x64 (conftest.py, as JAX's do), where a test
    means float32 parameters."""
    from netcl.tree_util import tree_map
    return tree_map(lambda a: a.astype(jnp.float32) if a.dtype == np.float64 else a, tree)


def mlp_adam_step(batch, n_in, hidden, n_out, lr=1e-2, seed=5):
    """(step, params, optimizer state): a stax MLP (relu hidden layers, log-softmax) on fixed
    random inputs and one-hot labels, whose `step(params, state)` takes one adam step and
    returns (params, state, loss). Parameters are float32."""
    import netcl
    from netcl import optim, random, stax
    layers = [f for h in hidden for f in (stax.Dense(h), stax.Relu)]
    init, apply = stax.serial(*layers, stax.Dense(n_out), stax.LogSoftmax)
    params = float32_params(init(random.PRNGKey(0), (batch, n_in))[1])
    opt = optim.adam(lr)
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((batch, n_in)).astype(np.float32))
    y = jnp.asarray(np.eye(n_out, dtype=np.float32)[rng.integers(0, n_out, batch)])

    def step(params, state):
        loss, g = netcl.value_and_grad(
            lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
        updates, state = opt.update(g, state, params)
        return optim.apply_updates(params, updates), state, loss
    return step, params, opt.init(params)


def raises_with(exc, fn, *words):
    """fn() raises `exc` whose message contains every one of `words`."""
    import pytest
    with pytest.raises(exc) as info:
        fn()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"


F32_TINY = float(np.finfo(np.float32).tiny)


def assert_agrees(got, want, rtol, atol=0.0, what=""):
    """got == want within atol + rtol |want|, with NaN and +-inf in the same places (values
    below the result dtype's smallest normal number get that much slack)."""
    got_h = np.asarray(got)
    atol = max(atol, F32_TINY if got_h.dtype == np.float32 else
               float(np.finfo(np.float64).tiny))
    g, w = got_h.astype(np.float64), np.asarray(want, np.float64)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    assert (nan_g == nan_w).all(), (f"{what}: NaN at {np.flatnonzero(nan_g != nan_w)[:5]}: "
                                    f"got {g[nan_g != nan_w][:5]}, want {w[nan_g != nan_w][:5]}")
    inf_w = np.isinf(w)
    assert (g[inf_w] == w[inf_w]).all() and not np.isinf(g[~inf_w]).any(), \
        f"{what}: infinities differ: got {g[inf_w | np.isinf(g)]}, want {w[inf_w | np.isinf(g)]}"
    fin = np.isfinite(w)
    err = np.abs(g[fin] - w[fin])
    bad = err > atol + rtol * np.abs(w[fin])
    if bad.any():
        i = np.argmax(np.where(bad, err / (atol + rtol * np.abs(w[fin])), 0))
        raise AssertionError(f"{what}: {bad.sum()} values off (worst: got {g[fin][i]!r}, want "
                             f"{w[fin][i]!r}, rtol={rtol}, atol={atol})")


def as_dtype(x, dtype):
    """A netcl array of `x`'s values in `dtype`."""
    return jnp.asarray(np.asarray(x, dtype))


def concat_points(*parts):
    """The values of `parts` (scalars or arrays) as one flat float64 array."""
    return np.concatenate([np.asarray(p, np.float64).ravel() for p in parts])


def grid_points(*axes):
    """The points of the grid over `axes`, one flat float64 array per axis."""
    return [g.ravel() for g in np.meshgrid(*[np.asarray(a, np.float64) for a in axes])]


def build_kernels_together(thunks):
    """Build the OpenCL programs that calling each of `thunks` (eager netcl code) will ask
    for, in few compiler runs instead of one each, and return. Only what each program is
    built with changes: the thunks run for real after, each launching the same kernels
    (from the same sources) as without this, and checks compare what they return then.

    A compiler run costs a fixed time whatever its size (kernels.py, program_batch.py), and
    a test that evaluates a hundred eager expressions, each launching kernels of its own
    shapes and dtypes, otherwise pays it once per kernel with PoCL's cache cold (CI). The
    thunks run with builds deferred (kernels.deferring, as jit's build pass walks its
    launchers): each runs until it asks for a program not built yet; what all of them asked
    for is built together (kernels.build_together, which with NETCL_CHECK_IR, as in the
    suite, fails if a combined program breaks a source that builds alone); the thunks that
    stopped run again, up to their next unbuilt program, until none stops. Exceptions the
    thunks raise are left for the real run to see. Nothing on the NumPy fallback."""
    import netcl
    from netcl.core import kernels
    if netcl.default_device().is_numpy:
        return
    pending, tried = list(thunks), set()
    while pending:
        wanted, stopped = [], []
        with kernels.deferring(wanted):
            for thunk in pending:
                try:
                    thunk()
                except kernels.Deferred:
                    stopped.append(thunk)
                except Exception:   # noqa: BLE001 - (the real run reports it)
                    pass
        new = {r.source for r in wanted} - tried
        if not new:     # (none, or only sources that failed to build: their launchers raise)
            return
        tried |= new
        kernels.build_together(wanted)
        pending = stopped


class _ExampleState(__import__("threading").local):
    recording = False   # (prebuilt_examples' first runs: examples stop at an unbuilt program)
    deferred = False    # (an example stopped so, this run)


_EXAMPLES = _ExampleState()


def prebuilt_examples(hypothesis_test):
    """Decorator for a @given test whose examples evaluate small eager netcl expressions
    (over @settings and @given; the test function itself gets @example_body, under @given):
    the kernels every drawn example will launch are built first, in few compiler runs
    (build_kernels_together), then the test runs as before, every example checked.

    The first runs draw the same examples as the real one (derandomized, the same seed):
    there each example runs with builds deferred until it asks for a program not built yet
    (example_body ends it there quietly, and its checks are not looked at); the real run
    then finds every program built. example_body leaves the test's source, signature and
    pytest id as they were, so hypothesis derives the same seed and draws the same
    examples as the undecorated test did. Nothing changes on the NumPy fallback."""
    import functools

    def recorder(*args, **kwargs):
        """The thunk (for build_kernels_together) of the first runs."""
        from netcl.core import kernels

        def record():
            _EXAMPLES.recording, _EXAMPLES.deferred = True, False
            try:
                hypothesis_test(*args, **kwargs)
            finally:
                _EXAMPLES.recording = False
            if _EXAMPLES.deferred:
                raise kernels.Deferred()
        return record

    @functools.wraps(hypothesis_test)
    def run(*args, **kwargs):
        if not _PREBUILT.pop((run, repr(args), repr(sorted(kwargs.items()))), False):
            build_kernels_together([recorder(*args, **kwargs)])
        hypothesis_test(*args, **kwargs)
    run.recorder = recorder
    return run


_PREBUILT = {}  # (prebuilt_examples test, its arguments) whose kernels prebuild_ahead built


def prebuild_ahead(request, count):
    """For an autouse fixture of a module of parametrized @prebuilt_examples tests: before
    the first of every `count` of them (in run order), the kernels that all `count` will
    launch are built together (fewer compiler runs than one test at a time); each test then
    runs its examples as before. Each one's first runs draw what its own run will: the
    pytest id enters hypothesis' seed (its pytest plugin sets it again for the real run)."""
    def key(item):
        return (item.obj, repr(()), repr(sorted(item.callspec.params.items())))
    item = request.node
    if not hasattr(item.obj, "recorder") or key(item) in _PREBUILT:
        return
    items = [i for i in request.session.items if i.module is item.module
             and hasattr(i.obj, "recorder") and hasattr(i, "callspec")]
    if item not in items:
        return
    start = items.index(item)
    thunks = []
    for it in items[start:start + count]:
        record = it.obj.recorder(**it.callspec.params)

        def with_its_seed(it=it, record=record):
            it.obj.hypothesis.inner_test._hypothesis_internal_add_digest = it.nodeid.encode()
            record()
        thunks.append(with_its_seed)
        _PREBUILT[key(it)] = True
    build_kernels_together(thunks)


def example_body(test):
    """The body of a @prebuilt_examples test (the decorator just above the def): runs it
    unchanged, except in the recording runs, where an example ends quietly at its first
    unbuilt program or any error (the real run reports errors)."""
    import functools

    @functools.wraps(test)
    def body(*args, **kwargs):
        if not _EXAMPLES.recording:
            return test(*args, **kwargs)
        from netcl.core import kernels
        try:
            test(*args, **kwargs)
        except kernels.Deferred:
            _EXAMPLES.deferred = True
        except HypothesisException:     # (assume(...) and the like: as in the real run)
            raise
        except Exception:   # noqa: BLE001 - (the real run reports it)
            pass
    return body
