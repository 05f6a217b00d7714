"""The NumPy fallback backend: the suite's behavioural tests run again with NETCL_DEVICE=numpy,
where each primitive's NumPy reference executes instead of OpenCL kernels (as on a machine
without any OpenCL platform).

The rerun is a process of its own, started as soon as the suite is collected (conftest.py
calls `start_fallback_run`) and waited for by the last test: it runs on a second core
beside the rest of the suite instead of after it."""
import atexit
import glob
import os
import subprocess
import sys
import tempfile

import pytest

HERE = os.path.dirname(__file__)

# What the fallback run is for: the public API, its errors and semantics, the transforms, and
# the libraries on top (io, data, optim, stax, random, nn) running on the fallback's own
# launcher (core.eval.numpy_launcher, numpy-backed arrays and views, jit without fusion).
FALLBACK_FILES = [
    "test_api_errors.py", "test_autocast.py", "test_bfloat16.py", "test_complex.py",
    "test_complex_order.py",
    "test_float8.py",
    "test_subbyte_dtypes.py",
    "test_precision.py",
    "test_numpy_surface_extras.py", "test_checkpoint_policies.py", "test_collectives.py",
    "test_config_flags.py",
    "test_core.py",
    "test_data.py", "test_example_optimizers.py", "test_fft.py", "test_indexing.py",
    "test_io.py",
    "test_jax_api_more.py", "test_jax_api_more2.py",
    "test_jax_agreement.py", "test_jax_ops.py", "test_jax_ports.py", "test_jax_surface.py",
    "test_jax_signatures.py", "test_jax_surface2.py", "test_jit.py", "test_jit_casts.py",
    "test_linalg_complex.py", "test_linalg_decomp.py", "test_linalg_eig.py",
    "test_lu_surface.py",
    "test_linalg_surface.py", "test_random_more.py",
    "test_random_samplers.py", "test_scipy_signal.py", "test_lax_more.py",
    "test_numpy_api.py", "test_numpy_composites.py",
    "test_numpy_more.py", "test_optim.py", "test_optim_extras.py",
    "test_ode.py",
    "test_pmap.py", "test_random.py", "test_runtime_safety.py", "test_scan.py",
    "test_scipy.py", "test_silent_errors.py", "test_sorting.py", "test_stax.py",
    "test_scipy_linalg_more.py", "test_scipy_optimize_ndimage.py",
    "test_special_more.py", "test_special_complex.py",
    "test_special_hyper.py",
    "test_scipy_stats_more.py", "test_tree_util_more.py", "test_sharding.py",
    "test_transforms.py", "test_x64.py", "test_int64.py",
]
# Not rerun: these compare OpenCL kernels with the primitives' NumPy references (or check
# kernel structure), so on the fallback they would compare the references with themselves.
# The PoCL run already checks each reference's shape and dtype against abstract_eval.
KERNEL_FILES = {
    "test_primitive_tables.py": "every primitive against its reference",
    "test_elementwise.py": "elementwise kernels, templates and derivative rules",
    "test_reductions.py": "reduction kernel families, paths and layouts",
    "test_structural.py": "structural kernels against references and oracles",
    "test_linalg.py": "GEMM products against einsum",
    "test_conv.py": "convolution and pooling kernels against their references",
    "test_conv_half.py": "16-bit convolution kernels against float64 references",
    "test_window_vectors.py": "vectorised pooling kernels bit for bit against the scalar ones",
    "test_fft_kernels.py": "FFT kernels on raw buffers against numpy.fft",
    "test_eager_grad_cache.py": "eager grad's compiled backward (kernel launches counted)",
    "test_gemm_kernels.py": "raw OpenCL GEMM kernels",
    "test_gemm_mma.py": "tensor-core GEMM kernels",
    "test_gemm_wgmma.py": "Hopper's warpgroup tensor-core GEMM kernel",
    "test_gemm_ffma_async.py": "cp.async-staged float32 GEMM kernel and its operand pack",
    "test_jit_epilogue.py": "GEMM epilogue fusion (none on the fallback)",
    "test_jit_in_place.py": "in-place fused kernels (none on the fallback)",
    "test_replay.py": "compiled calls replayed as recorded OpenCL commands (none on the fallback)",
    "test_jit_horizontal.py": "horizontal kernels against each group's own",
    "test_pmap_pack.py": "pmap's bucket-packing kernel against NumPy",
    "test_peer_memory.py": "GPU memory other GPUs read (none on the fallback)",
    "test_program_batch.py": "OpenCL programs built together (none on the fallback)",
    "test_autotune.py": "GEMM tiles timed on the device (none on the fallback)",
    "test_tree_util.py": "pure Python, no device involved",
    "test_distributed.py": "MPI jobs of PoCL devices (the fallback's host path runs in test_pmap)",
    "test_mpi_fast_path.py": "MPI jobs: the all-reduce of PoCL buffers across processes",
    "test_linalg_device.py": "cholesky and triangular_solve device kernels against NumPy",
    "test_linalg_qr_device.py": "Householder QR device kernels against np.linalg.qr",
    "test_fallback.py": "this file",
}


def test_every_test_file_is_classified():
    files = {os.path.basename(f) for f in glob.glob(os.path.join(HERE, "test_*.py"))}
    both = set(FALLBACK_FILES) & set(KERNEL_FILES)
    assert not both, f"listed twice: {sorted(both)}"
    missing = files - set(FALLBACK_FILES) - set(KERNEL_FILES)
    assert not missing, (f"{sorted(missing)}: add to FALLBACK_FILES (behaviour that matters "
                         "on the NumPy fallback) or KERNEL_FILES (kernels vs references)")
    stale = (set(FALLBACK_FILES) | set(KERNEL_FILES)) - files
    assert not stale, f"listed but not in tests/: {sorted(stale)}"


_RUN = {}      # "process" and "output" of the fallback run, once started


def start_fallback_run():
    """Start the fallback run in the background (once; not inside the fallback run itself)."""
    if _RUN or os.environ.get("NETCL_DEVICE") == "numpy":
        return
    # one thread each for BLAS: the rest of the suite has the other core
    env = dict(os.environ, NETCL_DEVICE="numpy", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    files = [os.path.join(HERE, f) for f in FALLBACK_FILES]
    output = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-o",
         "addopts=", *files], env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    atexit.register(process.kill)       # (a suite stopped early stops it too)
    _RUN.update(process=process, output=output)


@pytest.mark.skipif(os.environ.get("NETCL_DEVICE") == "numpy", reason="already the fallback")
def test_suite_passes_on_numpy_fallback():
    start_fallback_run()        # (run on its own, no conftest hook started it)
    process, output = _RUN["process"], _RUN["output"]
    try:
        code = process.wait(timeout=1500)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    output.seek(0)
    text = output.read()
    assert code == 0, text[-8000:]
    assert " passed" in text.splitlines()[-1], text[-2000:]
