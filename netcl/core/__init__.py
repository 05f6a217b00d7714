"""The core: dtypes, devices, the Array, the buffer pool, kernel build & cache, the
elementwise renderer, and the tracing machinery (Primitive, bind, interpreters, eager eval)."""
from . import dtypes
from .array import Array, ArrayBase, block_until_ready
from .devices import Device, default_device, devices, numpy_device
from .eval import LeakedTracerError, to_array
from .kernels import KernelBuildError
from .tracing import ConcretizationError, Primitive, ShapedArray, Tracer
