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
  gives float32 (a float32 value added to it), as PyTorch's autocast runs an elementwise
  op in its widest input type. That holds at the primitive level too, where operands must
  have equal dtypes: in softmax's `x - max(x)` the max came back float32 from a half `x`,
  so `x` is cast up and the softmax runs in float32. stax's Dense and Conv add their
  float32 bias in the product's dtype (stax/_core.add_bias), as PyTorch's layers add theirs
  inside the product, so their outputs stay half. To keep everything half, cast the
  parameters too (mixed_precision.Policy.cast_to_compute, jmp's way).

The casts are ordinary convert_element_type operations bound at the parent, so jit fuses
them, make_ir shows them, and grad differentiates through them: the gradient of a float32
input is float32 (parameters stay float32, "master weights").

A jitted function called inside is autocast too (as vmap and grad go through jit in JAX): it
runs as the compiled `autocast(f)`, made once per signature; a `checkpoint`ed function is
autocast inside its checkpoint. The other call primitives (custom_jvp/custom_vjp, whose
user rules expect the dtypes their function was written for; scan and the control flow,
whose carries must keep their dtypes; collectives) run as they are.

>>> loss = netcl.autocast(loss_fn, jnp.float16)
>>> grads = netcl.grad(loss)(params, x)        # float32 gradients, float16 products
>>> loss = netcl.autocast(loss_fn, "bf16")     # bfloat16 products
"""
import functools
from typing import NamedTuple

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
        if prim.call is not None:
            return self._process_call(prim, args, params)
        with set_interpreter(self.parent):
            return prim.bind(*self._cast(prim.precision, args), **params)

    def _process_call(self, prim, args, params):
        from .custom import checkpoint_call_p
        from .jit_call import jit_call_p
        with set_interpreter(self.parent):
            if prim is jit_call_p:
                # the compiled autocast version, cached on the call beside its compiled
                # derivatives; at the parent it is a jitted call again (compiled eagerly,
                # inlined under staging, a jit_call with its rules under grad or vmap)
                call, dtype = params["call"], self.dtype
                fun = call.compiled(("autocast", dtype.name), lambda: autocast(call.fun, dtype))
                return tuple(fun(*args))
            if prim is checkpoint_call_p:
                params = dict(params, fun=autocast(params["fun"], self.dtype))
            return prim.bind(*args, **params)

    def _cast(self, precision, args):
        from ..primitives.elementwise import convert_element_type
        if precision == "low":          # float32 operands down (float64 is left alone)
            return tuple(convert_element_type(a, self.dtype, getattr(a, "weak_type", False))
                         if _is_float(a) and a.dtype == dtypes.float32 else a for a in args)
        if precision == "keep_fp32":    # half operands up
            return tuple(convert_element_type(a, dtypes.float32, getattr(a, "weak_type", False))
                         if _is_float(a) and a.dtype == self.dtype else a for a in args)
        if len(args) > 1:
            return self._promote(args)
        return args

    def _promote(self, args):
        """Half and float32 operands of one primitive, promoted to their common dtype.

        Compositions written at the primitive level assume a reduction returns its
        operand's dtype (softmax's `x - max(x)`, layer norm's `x - mean(x)`); here a
        keep_fp32 reduction of a half `x` came back float32, so the two meet in one
        primitive, which takes equal dtypes: the half one goes up, as jnp's promotion
        would do (a weak float32 scalar goes down to the half dtype instead)."""
        floats = [a for a in args if _is_float(a)]
        found = {np.dtype(a.dtype) for a in floats}
        if len(found) < 2 or not found <= {self.dtype, dtypes.float32}:
            return args
        from ..primitives.elementwise import convert_element_type
        to, weak = dtypes.result_type(*[_Typed(np.dtype(a.dtype), getattr(a, "weak_type", False))
                                        for a in floats])
        return tuple(convert_element_type(a, to, weak and getattr(a, "weak_type", False))
                     if _is_float(a) and a.dtype != to else a for a in args)

    def concrete(self, tracer, what):
        return self.parent.concrete(tracer, what)


class _Typed(NamedTuple):     # what dtypes.result_type reads of an operand
    dtype: np.dtype
    weak_type: bool


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
            # (a scalar type such as np.int8 is a dtype itself; an array names its dtype)
            dt = None if dtype is None else np.dtype(
                dtype if isinstance(dtype, type) else getattr(dtype, "dtype", dtype))
        except TypeError:
            dt = None
    if dt not in dtypes.HALF and dt != dtypes.float32:
        got = dt.name if dt is not None else repr(dtype)
        raise ValueError(f"autocast: dtype must be float16 or bfloat16 (or float32: no "
                         f"autocast), got {got}")
    return dt
