"""Sources built together as one program (core/program_batch.py, kernels.build_together) and
the jit pass that builds a compiled call's kernels that way (build_kernels)."""
import numpy as np
import pyopencl as cl
import pytest

import netcl
import netcl.numpy as jnp
from netcl import optim, random, stax
from netcl.core import kernels, program_batch

pytestmark = pytest.mark.skipif(netcl.default_device().is_numpy,
                                reason="no OpenCL device: nothing is built")

# Two sources that would collide if pasted together: the same kernel, helper, typedef,
# constant table and macro names with different meanings.
_SOURCE = """#define SCALE {scale}
typedef float real_t;
__constant real_t table[2] = {{{scale}.0f, 1.0f}};
inline real_t helper(real_t x) {{ return x * SCALE + table[1]; }}
__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void fill(__global real_t* out) {{ out[get_global_id(0)] = helper((real_t)get_global_id(0)); }}
"""
# FP_CONTRACT off at file scope: built apart from sources in the default state
_NO_CONTRACT = "#pragma OPENCL FP_CONTRACT OFF\n" + _SOURCE.replace("fill(", "fill_exact(")


def _run(k, n=4):
    dev = netcl.default_device()
    out = np.empty(n, np.float32)
    buf = cl.Buffer(dev.context, cl.mem_flags.WRITE_ONLY, out.nbytes)
    k.set_args(buf)
    cl.enqueue_nd_range_kernel(dev.queue, k, (n,), (1,))
    cl.enqueue_copy(dev.queue, out, buf)
    return out


@pytest.fixture
def compiles(monkeypatch):
    """The sources of the compiler runs made while the test runs."""
    runs, compile_ = [], kernels._compile

    def counting(device, source, options):
        runs.append(source)
        return compile_(device, source, options)
    monkeypatch.setattr(kernels, "_compile", counting)
    return runs


def test_names_a_source_defines_and_its_contraction_state():
    src = _SOURCE.format(scale=2)
    assert program_batch.defined_names(src) == {"real_t", "table", "helper", "fill"}
    assert program_batch.kernel_names(src) == ["fill"]
    assert program_batch.contract_state(src) == "default"
    assert program_batch.contract_state(_NO_CONTRACT) == "off"
    # a pragma inside a function body ends with it: not the file's state
    inner = "__kernel void k(__global float* x) {\n#pragma OPENCL FP_CONTRACT OFF\n x[0] = 1; }"
    assert program_batch.contract_state(inner) == "default"


def test_clashing_sources_built_together_compute_what_each_computes_alone(compiles):
    dev = netcl.default_device()
    a, b = _SOURCE.format(scale=3), _SOURCE.format(scale=5)
    kernels.build_together([kernels.BuildRequest(dev, s, ()) for s in (a, b)])
    assert len(compiles) == 1                     # one compiler run for both
    got_a, got_b = _run(kernels.kernel(dev, a, "fill")), _run(kernels.kernel(dev, b, "fill"))
    np.testing.assert_array_equal(got_a, 3 * np.arange(4) + 1)
    np.testing.assert_array_equal(got_b, 5 * np.arange(4) + 1)
    assert len(compiles) == 1                     # the kernels came from that program
    assert kernels.described(kernels.kernel(dev, a, "fill")).name == "fill"


def test_sources_in_different_contraction_states_build_apart(compiles):
    dev = netcl.default_device()
    srcs = [_SOURCE.format(scale=7), _SOURCE.format(scale=9), _NO_CONTRACT.format(scale=7)]
    kernels.build_together([kernels.BuildRequest(dev, s, ()) for s in srcs])
    assert len(compiles) == 2
    assert sum("FP_CONTRACT OFF" in s for s in compiles) == 1
    np.testing.assert_array_equal(_run(kernels.kernel(dev, srcs[2], "fill_exact")),
                                  7 * np.arange(4) + 1)


def test_a_source_that_fails_leaves_the_others_built_and_raises_when_asked_for(monkeypatch):
    monkeypatch.delenv("NETCL_CHECK_IR", raising=False)
    dev = netcl.default_device()
    good = _SOURCE.format(scale=11)
    bad = "__kernel void broken(__global float* x) { x[0] = no_such_name; }"
    kernels.build_together([kernels.BuildRequest(dev, s, ()) for s in (good, bad)])
    np.testing.assert_array_equal(_run(kernels.kernel(dev, good, "fill")),
                                  11 * np.arange(4) + 1)
    with pytest.raises(kernels.KernelBuildError, match="no_such_name"):
        kernels.kernel(dev, bad, "broken")


def test_deferring_records_instead_of_building():
    dev = netcl.default_device()
    src = _SOURCE.format(scale=13)
    wanted = []
    with kernels.deferring(wanted):
        with pytest.raises(kernels.Deferred):
            kernels.kernel(dev, src, "fill")
        try:                        # not an Exception: a launcher's fallback does not take it
            kernels.kernel(dev, src, "fill")
        except Exception:           # noqa: BLE001
            pytest.fail("Deferred was caught as an Exception")
        except kernels.Deferred:
            pass
    assert [r.source for r in wanted] == [src, src]
    kernels.build_together(wanted)
    np.testing.assert_array_equal(_run(kernels.kernel(dev, src, "fill")), 13 * np.arange(4) + 1)


def test_a_compiled_train_step_builds_its_kernels_in_few_programs(compiles):
    """jit's build_kernels pass: the products, their epilogues and the fused groups of a
    train step come from a handful of compiler runs, where each was one of its own."""
    init, apply = stax.serial(stax.Dense(96), stax.Relu, stax.Dense(48), stax.Relu,
                              stax.Dense(10), stax.LogSoftmax)
    _, params = init(random.PRNGKey(0), (-1, 40))
    opt = optim.adam(1e-3)
    state = opt.init(params)
    x = jnp.asarray(np.random.default_rng(0).standard_normal((24, 40), dtype=np.float32))
    y = jnp.asarray(np.eye(10, dtype=np.float32)[np.arange(24) % 10])

    def step(params, state):
        loss, g = netcl.value_and_grad(
            lambda p: -jnp.mean(jnp.sum(apply(p, x) * y, axis=-1)))(params)
        updates, state = opt.update(g, state, params)
        return optim.apply_updates(params, updates), state, loss
    kernels.clear_programs()
    netcl.test_util.forget_launchers()
    del compiles[:]
    jf = netcl.jit(step)
    n_kernels = len([k for k in jf.lower(params, state).kernels if k.source])
    runs = len(compiles)
    out = jf(params, state)
    assert len(compiles) == runs            # the call built nothing more
    assert n_kernels >= 8 and runs <= 4, (n_kernels, runs)
    want = step(params, state)
    np.testing.assert_allclose(float(out[2]), float(want[2]), rtol=1e-5)
