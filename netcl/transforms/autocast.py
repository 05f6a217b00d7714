"""autocast: run a function with its matrix products and convolutions in a half-precision
dtype (float16 or bfloat16), as torch.autocast does for a PyTorch model.

`autocast(f, dtype)(*args)` runs `f` under an interpreter that reads each primitive's
precision class (declared with the primitive) before binding it at the parent interpreter:

- "low" (dot_general, conv_general_dilated): float32 operands are cast to `dtype`; the
  kernels accumulate in float32 registers and store `dtype`;
- "keep_fp32" (exp, log, pow, log1p, expm1, the reductions and cumulative ops, and so
  softmax, log_softmax, logsumexp, means, variances, norms and losses built on them):
  half operands are cast to float32, as PyTorch keeps them;
- "follow_inputs" (the rest): bound as they are, so JAX's promotion decides: elementwise
  work on half values stays half (an activation of a product), and half with float32
  gives float32 (a float32 bias added to it), as PyTorch's autocast runs an elementwise
  op in its widest input type. To keep everything half, cast the parameters too
  (mixed_precision.Policy.cast_to_compute, jmp's way).

The casts are ordinary convert_element_type operations bound at the parent, so jit fuses
them, make_ir shows them, and grad differentiates through them: the gradient of a float32
input is float32 (parameters stay float32, "master weights"). Call primitives (jit'd
functions, custom rules, scans, collectives) run inside as they are, without autocast.

>>> loss = netcl.autocast(loss_fn, jnp.float16)
>>> grads = netcl.grad(loss)(params, x)        # float32 gradients, float16 products
>>> loss = netcl.autocast(loss_fn, "bf16")     # bfloat16 products
"""
import functools

import numpy as np

from ..core import dtypes
from ..core.tracing import Interpreter, current_interpreter, set_interpreter

# dtype names autocast takes besides dtypes (jmp's short names too)
_NAMES = {"float16": dtypes.float16, "f16": dtypes.float16, "half": dtypes.float16,
          "bfloat16": dtypes.bfloat16, "bf16": dtypes.bfloat16,
          "float32": dtypes.float32, "f32": dtypes.float32}


class AutocastInterpreter(Interpreter):
    transform_name = "autocast"

    def __init__(self, parent, dtype):
        self.parent = parent
        self.dtype = dtype

    def process(self, prim, args, params):
        with set_interpreter(self.parent):
            if prim.call is None:
                args = self._cast(prim.precision, args)
            return prim.bind(*args, **params)

    def _cast(self, precision, args):
        from ..primitives.elementwise import convert_element_type
        if precision == "low":          # float32 operands down (float64 is left alone)
            return tuple(convert_element_type(a, self.dtype, getattr(a, "weak_type", False))
                         if _is_float(a) and a.dtype == dtypes.float32 else a for a in args)
        if precision == "keep_fp32":    # half operands up
            return tuple(convert_element_type(a, dtypes.float32, getattr(a, "weak_type", False))
                         if _is_float(a) and a.dtype == self.dtype else a for a in args)
        return args

    def concrete(self, tracer, what):
        return self.parent.concrete(tracer, what)


def _is_float(a):
    dt = getattr(a, "dtype", None)
    return dt is not None and dtypes.kind(np.dtype(dt)) == "f"


def autocast(fun, dtype=dtypes.float16):
    """`fun` with its matmuls and convolutions (and the elementwise work between them) in
    `dtype` (float16 or bfloat16: a dtype, or a name such as "bf16"), accumulating in
    float32, and exp/log/pow, reductions, softmax and losses in float32 (see the module
    docstring). float32 gives `fun` itself. Composes with jit, grad, vmap and pmap.

    >>> f = netcl.autocast(lambda w, x: jnp.sum(jnp.tanh(x @ w)), jnp.bfloat16)
    >>> netcl.grad(f)(w, x).dtype            # float32, as w
    """
    if not callable(fun):
        raise TypeError(f"autocast: expected a function, got {type(fun).__name__}")
    dt = _dtype_arg(dtype)
    if dt == dtypes.float32:
        return fun

    @functools.wraps(fun)
    def run(*args, **kwargs):
        interp = AutocastInterpreter(current_interpreter(), dt)
        with set_interpreter(interp):
            return fun(*args, **kwargs)
    return run


def _dtype_arg(dtype):
    """The half dtype `dtype` names (or float32), else ValueError naming autocast."""
    if isinstance(dtype, str):
        dt = _NAMES.get(dtype.strip().lower())
    else:
        try:
            dt = np.dtype(getattr(dtype, "dtype", dtype)) if dtype is not None else None
        except TypeError:
            dt = None
    if dt not in dtypes.HALF and dt != dtypes.float32:
        raise ValueError(f"autocast: dtype must be float16 or bfloat16 (or float32: no "
                         f"autocast), got {dtype!r}")
    return dt
