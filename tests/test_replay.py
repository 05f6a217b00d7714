"""Compiled calls replayed as their recorded OpenCL commands (netcl.transforms.replay):
replayed calls give the plan's results bit for bit, on new arguments each call; calls the
recording does not fit (arguments sharing buffers otherwise, donated arguments held
elsewhere) take the plan; commands a replay cannot repeat stop the recording."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import netcl
import netcl.numpy as jnp
from netcl import optim, random, stax
from netcl.core import commands
from netcl.transforms import replay

pytestmark = pytest.mark.skipif(netcl.default_device().is_numpy,
                                reason="replays record OpenCL commands")


@pytest.fixture
def replays(monkeypatch):
    """[outputs of every replayed call]."""
    ran = []
    real = replay.Replay.run

    def run(self, args):
        out = real(self, args)
        ran.append(out)
        return out
    monkeypatch.setattr(replay.Replay, "run", run)
    monkeypatch.setattr(replay, "ENABLED", True)
    return ran


def test_new_arguments_each_call(replays):
    f = netcl.jit(lambda x, y: (jnp.tanh(x @ y) * 2 + 1, jnp.sum(x, axis=0)))
    rng = np.random.default_rng(0)
    for i in range(7):
        x = rng.standard_normal((33, 20)).astype(np.float32)
        y = rng.standard_normal((20, 9)).astype(np.float32)
        a, b = f(jnp.asarray(x), jnp.asarray(y))
        np.testing.assert_allclose(np.asarray(a), np.tanh(x @ y) * 2 + 1, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(b), x.sum(0), rtol=1e-5, atol=1e-5)
    assert len(replays) == 4           # (calls 2 and 3 record, 4 to 7 replay)


def _train(enabled, monkeypatch, steps=9):
    monkeypatch.setattr(replay, "ENABLED", enabled)
    init, apply = stax.serial(stax.Dense(32), stax.Relu, stax.Dense(10), stax.LogSoftmax)
    _, params = init(random.PRNGKey(0), (16, 12))
    opt = optim.adam(1e-2)
    state = opt.init(params)
    rng = np.random.default_rng(1)

    def step(p, s, x, y):
        loss, g = netcl.value_and_grad(lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, -1)))(p)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s, loss
    step = netcl.jit(step, donate_argnums=(0, 1))
    losses = []
    for _ in range(steps):
        x = jnp.asarray(rng.standard_normal((16, 12)).astype(np.float32))
        y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)])
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))
    return losses, [np.asarray(v) for v in netcl.tree_util.tree_leaves(params)]


def test_train_step_with_donation_matches_the_plan(replays, monkeypatch):
    losses, params = _train(True, monkeypatch)
    assert replays
    losses0, params0 = _train(False, monkeypatch)
    assert losses == losses0
    for a, b in zip(params, params0):
        np.testing.assert_array_equal(a, b)


def test_donated_argument_held_elsewhere_takes_the_plan(replays):
    f = netcl.jit(lambda x: x * 2 + 1, donate_argnums=0)
    for i in range(4):
        f(jnp.full((64,), float(i)))
    n = len(replays)
    x = jnp.full((64,), 5.0)
    view = x.reshape((8, 8))             # (shares x's buffer: x's may not be overwritten)
    out = f(x)
    assert len(replays) == n
    np.testing.assert_array_equal(np.asarray(out), 11.0)
    np.testing.assert_array_equal(np.asarray(view), 5.0)


@pytest.mark.parametrize("recorded_shared", [True, False])
def test_arguments_sharing_buffers_otherwise_take_the_plan(replays, recorded_shared):
    # (two functions: jit shares executables between equal ones)
    f = netcl.jit((lambda x, y: x * 3 - y) if recorded_shared else (lambda x, y: y - x * 3))
    a, b = jnp.full((50,), 2.0), jnp.full((50,), 1.0)
    for _ in range(4):
        f(a, a) if recorded_shared else f(a, b)
    n = len(replays)
    assert n == 1
    out = f(a, b) if recorded_shared else f(a, a)
    np.testing.assert_array_equal(np.asarray(out), 5.0 if recorded_shared else -4.0)
    assert len(replays) == n


def test_outputs_that_are_views_constants_and_arguments(replays):
    f = netcl.jit(lambda x: (x, x.reshape((4, 6)), x[1:] + 1, jnp.arange(3.0)))
    for i in range(5):
        x = jnp.asarray(np.arange(24, dtype=np.float32) + i)
        same, view, tail, const = f(x)
        assert same is x
        np.testing.assert_array_equal(np.asarray(view), np.asarray(x).reshape(4, 6))
        np.testing.assert_array_equal(np.asarray(tail), np.asarray(x)[1:] + 1)
        np.testing.assert_array_equal(np.asarray(const), [0, 1, 2])
    assert replays


def test_scans_sorts_gathers_and_copies(replays):
    # kernels with a NULL buffer argument (a scan's carry), scalars set through
    # scalar_arg_dtypes (strided copies), local memory and metadata buffers
    def f(x, i):
        return (jnp.cumsum(x, axis=0), jnp.sort(x, axis=1), x[i], x.T[1:, ::2] * 1,
                jnp.argmax(x, axis=0))
    f = netcl.jit(f)
    rng = np.random.default_rng(2)
    for _ in range(6):
        x = rng.standard_normal((37, 6)).astype(np.float32)
        i = rng.integers(0, 37, 5)
        got = f(jnp.asarray(x), jnp.asarray(i))
        want = (np.cumsum(x, 0), np.sort(x, 1), x[i], x.T[1:, ::2], np.argmax(x, 0))
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)
    assert replays


@pytest.mark.parametrize("budget", [0, 1 << 30])
def test_kept_temporaries_within_the_device_budget(replays, monkeypatch, budget):
    monkeypatch.setattr(replay, "DEVICE_BYTES", budget)
    built = []
    real = replay.build

    def build(*args):
        built.append(real(*args))
        return built[-1]
    monkeypatch.setattr(replay, "build", build)
    f = netcl.jit(lambda x, w: jnp.sum(jnp.tanh(x @ w) @ w.T))   # (temporaries: products)
    rows = 48 if budget else 64      # (jit shares the executables of equal programs)
    x, w = jnp.ones((rows, 32)), jnp.ones((32, 32)) * 0.01
    for _ in range(5):
        np.testing.assert_allclose(float(f(x, w)), float(np.sum(np.tanh(
            np.ones((rows, 32)) @ np.full((32, 32), 0.01)) @ np.full((32, 32), 0.01))),
            rtol=1e-5)
    kept = built[-1].kept       # (None for the output's slot: a buffer per call)
    assert any(k is not None for k in kept) == bool(budget)


def test_commands_a_replay_cannot_repeat_stop_the_recording():
    dev = netcl.default_device()
    import pyopencl as cl
    prg = cl.Program(dev.context, "__kernel void k(__global float* a) { a[0] = 1; }").build()
    buf = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 64)
    plain = cl.Kernel(prg, "k")
    plain.set_arg(0, buf)
    cases = {
        "does not track": lambda: commands.launch(dev.queue, plain, (1,), None),
        "enqueue_copy": lambda: cl.enqueue_copy(dev.queue, np.empty(16, np.float32), buf),
    }
    for why, command in cases.items():
        recorder = replay.Recorder(dev)
        replay.start(recorder)
        try:
            command()
        finally:
            replay.stop(recorder)
        assert recorder.failed and why in recorder.failed
        assert replay.build(recorder, [], [], set()) is None
    dev.queue.finish()
    assert not commands.RECORDERS and cl.enqueue_copy.__name__ != "refuse"


def _on_two_devices(script):
    """Run `script` on two PoCL devices (set before PyOpenCL loads: a subprocess); it
    prints "ok" at its end."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, NETCL_CPU_DEVICES="2", NETCL_ENABLE_X64="0")
    r = subprocess.run([sys.executable, "-c", script], cwd=root, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-2000:] + r.stderr[-3000:]


def test_pmap_replays_as_the_plan_runs():
    # two PoCL devices (set before PyOpenCL loads: a subprocess): a pmapped train step's
    # state after several steps, with replays and without, bit for bit
    script = textwrap.dedent("""
        import sys, numpy as np
        sys.path.insert(0, "benchmarks")
        from netcl.transforms import replay
        import netcl, pmap_bench
        used = []
        real = replay.Replay.in_slices
        replay.Replay.in_slices = lambda self, sizes: used.append(sizes) or real(self, sizes)
        out = []
        for enabled in (False, True):
            replay.ENABLED = enabled
            run, sync = pmap_bench.cnn_step(2, 4)
            for _ in range(6):
                run()
            sync()
            state = [c.cell_contents for c in run.__closure__
                     if isinstance(c.cell_contents, list)][0]
            out.append(np.concatenate([np.asarray(v).ravel()
                                       for v in netcl.tree_util.tree_leaves(state)]))
        # calls 4 to 6 replay on both devices: each segment (before and after the
        # all-reduce through host memory), or the whole call (an all-reduce through GPU
        # memory)
        assert len(used) in (3 * 2 * 2, 3 * 2), len(used)
        assert np.array_equal(out[0], out[1]), np.abs(out[0] - out[1]).max()
        print("ok")
        """)
    _on_two_devices(script)


def test_a_pmapped_call_without_host_work_replays_whole():
    # two PoCL devices: a pmapped function whose collectives enqueue nothing (axis_index)
    # is recorded from its first segment to its last, on each device, and replayed; its
    # results on new arguments each call are the plan's
    script = textwrap.dedent("""
        import numpy as np
        import netcl, netcl.numpy as jnp
        from netcl import lax
        from netcl.transforms import replay
        whole = []
        real = replay.Replay.in_slices
        replay.Replay.in_slices = lambda self, sizes: whole.append(self.n_args) or \\
            real(self, sizes)
        f = netcl.pmap(lambda x, y: (jnp.tanh(x @ y) * (lax.axis_index("i") + 1),
                                     jnp.sum(x, 0)), axis_name="i")
        rng = np.random.default_rng(0)
        for call in range(6):
            x = rng.standard_normal((2, 7, 5)).astype(np.float32)
            y = rng.standard_normal((2, 5, 3)).astype(np.float32)
            a, b = f(x, y)
            want = np.tanh(x @ y) * np.array([1.0, 2.0], np.float32)[:, None, None]
            np.testing.assert_allclose(np.asarray(a), want, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(np.asarray(b), x.sum(1), rtol=1e-5, atol=1e-5)
        # calls 4 to 6 replay one recording per device of the whole call (two arguments)
        assert whole == [2] * 6, whole
        print("ok")
        """)
    _on_two_devices(script)
