"""Target: what generated kernels may assume about a device, decided once per device.

Every device policy lives here, as a field of one frozen record, instead of `if cpu`
branches in the generators: which family of kernels fits (host CPU cores running
work-items as loops, or SIMT GPUs), vector widths, the reduction style, the GEMM tier table,
how convolutions lower, whether long contractions split, tensor cores, whether buffers are
host memory. A generator reads `device.target`; nothing else asks `device.kind`.

    >>> netcl.default_device().target.kernel_family
    'cpu'

Tests and benchmarks try the other kernels of a family on one device through
`netcl.test_util.override_target(device, reduction_style="gpu")`.
"""
import os
from dataclasses import dataclass

# Columns one work-item of a column-sum epilogue covers on CPU targets: four float8 vectors.
CPU_COLUMN_SUM_WIDTH = 32

# Consecutive vectors (or scalar elements, in scalar code) one work-item of an elementwise,
# fused or row kernel walks on CPU targets, in work-groups of one work-item. PoCL compiles a
# kernel for its work-group size at the first launch, a group of many work-items several
# times slower than a group of one walking their elements, which runs as fast (a group of
# one work-item without the walk runs several times slower: a task per group).
CPU_ELEMENTWISE_WALK = 256

# Extra dense inputs a GEMM epilogue may read on CPU targets: the GEMM reads them row by
# row in its store loop, slower there than a streaming kernel over them.
CPU_DENSE_EPILOGUE_EXTRAS = 2

# The function attribute letting a kernel (and each helper it passes 16-float vectors) use
# AVX-512 on PoCL's x86-64 CPU devices. PoCL 3.0 (LLVM 14) compiles kernels for a CPU model
# LLVM 14 knows (AMD's AVX-512 EPYCs come out as znver3: AVX2 only) but links the builtin
# library built for the host's AVX-512: 16-float vectors then break the calling convention
# between the two (a program calling a builtin with one loses its kernels), and the
# kernel's own 16-wide code runs as two 8-wide halves. With the attribute, a kernel that
# calls no builtin with a 16-float vector (see codegen.wide_safe) runs 16 lanes per
# instruction: transcendental elementwise work (a tanh or exp per element) in half the
# instructions.
X86_AVX512_ATTRIBUTE = '__attribute__((target("avx512f")))'


@dataclass(frozen=True)
class Target:
    """What kernels generated for one device may assume."""
    platform: str            # "opencl", or "numpy" (the reference fallback: no kernels)
    kernel_family: str       # "cpu": work-items run as loops on host cores (PoCL; explicit
    #                          vectors, a work-item per row or column block, GEMM panels in
    #                          local memory, which is cache); "gpu": work-groups of SIMT lanes
    #                          cooperating through local memory (GPUs, accelerators)
    vector_width: int        # lanes of generated elementwise and row code (1: scalar)
    preferred_vector_width: int   # the float width the device prefers (8 on AVX2 hosts, 16
    #                               on AVX-512); kernels use `vector_width`
    epilogue_vector_width: int    # columns per vector GEMM-epilogue call
    reduction_style: str     # "cpu" or "gpu" kernels for reductions (reductions/launch.py)
    gemm_tiers: str          # which tuned tier table GEMMs choose from ("cpu" or "gpu")
    conv_lowering: str       # "generic" (patches stored, then a GEMM) or "implicit" (the GEMM
    #                          gathers patches from the input)
    split_k: bool            # long contractions with few output tiles split into K chunks
    tensor_cores: bool       # mma.sync through inline PTX (NVIDIA, sm_80 and newer): TF32,
    #                          float16 and bfloat16 operands, float32 accumulation
    column_sum_width: int    # columns per work-item of a column-sum epilogue
    max_dense_epilogue_extras: int   # dense extra inputs a GEMM epilogue may read (-1: any)
    # lanes of elementwise and fused kernels whose every op is written for any width in
    # OpenCL C itself (codegen.wide_safe; 0: none), in functions carrying
    # `wide_kernel_attribute`: 16 with X86_AVX512_ATTRIBUTE on PoCL's AVX-512 CPU devices
    wide_vector_width: int = 0
    wide_kernel_attribute: str = ""
    # vectors (scalar code: elements) one work-item of an elementwise or fused kernel walks,
    # and the elements a row kernel's work-item covers in rows; with a walk > 1 work-groups
    # hold one work-item (kernels.walk_grid). 1: a work-item per vector, in work-groups of
    # the device's size
    elementwise_walk: int = 1
    # M*N*K from which a float32 matrix product at a precision allowing TF32 runs on the
    # tensor cores: below it the float32 tiles, with more work-groups for few output tiles,
    # finish first
    tf32_min_work: int = 2 ** 29
    local_mem_limit: int = 0  # bytes of __local memory one work-group may declare (0: no
    #                           OpenCL device); the device's CL_DEVICE_LOCAL_MEM_SIZE, or more
    #                           where the driver grants more (nvidia_local_mem_limit)
    # the device's buffers are host memory (PoCL's CPU devices): mapping one gives the host
    # a view of the device's own bytes, no copy, so the host (MPI across processes) reads
    # and writes buffers in place instead of staging them through pinned memory
    host_memory_buffers: bool = False
    # buffers are made over host memory netcl allocates (CL_MEM_USE_HOST_PTR, in the buffer
    # pool) and the device runs its commands on those bytes themselves, with no copy or
    # cache of its own: once the commands writing a buffer have completed (clFinish), the
    # host reads its value there, and what the host writes there before enqueueing the
    # commands that read it is what they read, with no map or unmap (MPI across processes
    # reduces device buffers so). OpenCL promises this only through map and unmap (a
    # device may cache a USE_HOST_PTR buffer's contents in its own memory); PoCL's CPU
    # devices keep none: a buffer's device storage is its host pointer
    # (pocl_driver_alloc_mem_obj: mem_ptr = mem_host_ptr), so only they set it
    host_pointer_buffers: bool = False
    # bytes of arguments one kernel may take (CL_DEVICE_MAX_PARAMETER_SIZE; OpenCL 1.2
    # guarantees 1024): how many segments a horizontal kernel holds
    kernel_argument_bytes: int = 1024
    # Hopper's warpgroup tensor-core instructions (wgmma, PTX sm_90a: NVIDIA compute
    # capability 9.0 exactly; Blackwell has other ones): large 16-bit products and float32
    # ones at TF32 take gemm_wgmma.py's kernel. NETCL_WGMMA=0 turns it off (benchmarks
    # compare it with mma.sync).
    wgmma: bool = False
    # memory another API allocated can be imported as a buffer ("opaque_fd": NVIDIA's
    # cl_khr_external_memory_opaque_fd, through which GPUs of one host read each other's
    # memory: core/peer_memory.py); "" where not
    external_memory: str = ""

    @property
    def host_cpu(self):
        return self.kernel_family == "cpu"


NUMPY = Target(platform="numpy", kernel_family="cpu", vector_width=1, preferred_vector_width=1,
               epilogue_vector_width=1, reduction_style="cpu", gemm_tiers="cpu",
               conv_lowering="generic", split_k=False, tensor_cores=False,
               column_sum_width=1, max_dense_epilogue_extras=-1)


def nvidia_tensor_cores(cl_device):
    """True on NVIDIA GPUs of compute capability 8.0 or newer (TF32 mma.sync)."""
    try:
        return "NVIDIA" in cl_device.vendor.upper() and \
            int(cl_device.compute_capability_major_nv) >= 8
    except Exception:      # no cl_nv_device_attribute_query
        return False


def nvidia_wgmma(cl_device):
    """True on NVIDIA GPUs of compute capability 9.0 (wgmma), unless NETCL_WGMMA=0."""
    if os.environ.get("NETCL_WGMMA", "1") == "0" or not nvidia_tensor_cores(cl_device):
        return False
    return (int(cl_device.compute_capability_major_nv),
            int(cl_device.compute_capability_minor_nv)) == (9, 0)


# Shared memory one thread block may use, by NVIDIA compute capability (CUDA C++ Programming
# Guide, "Technical Specifications per Compute Capability"). NVIDIA's OpenCL driver reports
# CL_DEVICE_LOCAL_MEM_SIZE = 48 KB (CUDA's static limit) but builds and runs kernels whose
# static __local arrays take more, up to this: checked on an H200 (sm_90) with 107 KB.
_NVIDIA_BLOCK_SMEM = {(8, 0): 163 * 1024, (8, 6): 99 * 1024, (8, 7): 163 * 1024,
                      (8, 9): 99 * 1024, (9, 0): 227 * 1024, (10, 0): 227 * 1024,
                      (12, 0): 99 * 1024}


def nvidia_local_mem_limit(cl_device):
    """The __local bytes a work-group may declare on an NVIDIA GPU of sm_80 or newer (None
    elsewhere, or for a compute capability not in the table)."""
    if not nvidia_tensor_cores(cl_device):
        return None
    cc = (int(cl_device.compute_capability_major_nv), int(cl_device.compute_capability_minor_nv))
    return _NVIDIA_BLOCK_SMEM.get(cc)


def _pocl_x86_64(cl_device):
    """Whether `cl_device` is a PoCL 3.0 CPU device compiling for x86-64 (its version string
    names the target triple: "OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-...").
    (wide_math computes 16 lanes as PoCL 3.0's builtins compute 8: other versions keep 8.)"""
    try:
        return "PoCL" in cl_device.version and "x86_64" in cl_device.version and \
            cl_device.driver_version.split("-")[0] == "3.0"
    except Exception:
        return False


def _pocl(cl_device):
    """Whether `cl_device` is a PoCL device (its version string: "OpenCL 3.0 PoCL ...")."""
    try:
        return "PoCL" in cl_device.version
    except Exception:
        return False


def _has_extension(cl_device, name):
    try:
        return name in cl_device.extensions.split()
    except Exception:
        return False


def target_for(cl_device, kind):
    """The Target of an OpenCL device of `kind` ("cpu", "gpu" or "accel")."""
    preferred = int(getattr(cl_device, "preferred_vector_width_float", 1) or 1)
    arg_bytes = int(getattr(cl_device, "max_parameter_size", 1024) or 1024)
    local_mem = int(getattr(cl_device, "local_mem_size", 0) or 0)
    if kind == "cpu":
        wide = 16 if preferred == 16 and _pocl_x86_64(cl_device) else 0
        return Target(platform="opencl", kernel_family="cpu", vector_width=8,
                      preferred_vector_width=preferred, epilogue_vector_width=8,
                      reduction_style="cpu", gemm_tiers="cpu", conv_lowering="generic",
                      split_k=False, tensor_cores=False,
                      column_sum_width=CPU_COLUMN_SUM_WIDTH,
                      max_dense_epilogue_extras=CPU_DENSE_EPILOGUE_EXTRAS,
                      elementwise_walk=CPU_ELEMENTWISE_WALK, local_mem_limit=local_mem,
                      host_memory_buffers=True, host_pointer_buffers=_pocl(cl_device),
                      wide_vector_width=wide,
                      kernel_argument_bytes=arg_bytes,
                      wide_kernel_attribute=X86_AVX512_ATTRIBUTE if wide else "")
    # the GPU float GEMM tiers keep 4 columns per register vector (their rvec)
    return Target(platform="opencl", kernel_family="gpu", vector_width=1,
                  preferred_vector_width=preferred, epilogue_vector_width=4,
                  reduction_style="gpu", gemm_tiers="gpu", conv_lowering="implicit",
                  split_k=True, tensor_cores=nvidia_tensor_cores(cl_device), column_sum_width=1,
                  max_dense_epilogue_extras=-1, kernel_argument_bytes=arg_bytes,
                  local_mem_limit=max(local_mem, nvidia_local_mem_limit(cl_device) or 0),
                  wgmma=nvidia_wgmma(cl_device),
                  external_memory="opaque_fd" if _has_extension(
                      cl_device, "cl_khr_external_memory_opaque_fd") else "")
