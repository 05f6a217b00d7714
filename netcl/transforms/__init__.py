"""Function transforms, each an interpreter over primitives:

  ad.py         jvp, vjp, grad, value_and_grad, stop_gradient (forward and reverse mode)
  custom.py     custom_jvp, custom_vjp, checkpoint (call primitives)
  jacobians.py  jacrev, jacfwd, hessian
  batching.py   vmap
  staging.py    make_ir: trace to the IR (core/ir.py) that jit compiles
  jit.py        jit: the cache, the optimising passes, the executable
  fusion.py, row_fusion.py, epilogue_fusion.py   jit's fusion passes
  control_flow.py   cond, switch, while_loop, fori_loop, scan
  staged_loop.py    the loop primitive under jit, with its batching and forward-mode rules
  loop_carry.py     JAX's rule for a loop carry's dtypes (weak scalars may promote)
"""
from .ad import grad, jvp, stop_gradient, value_and_grad, vjp
from .batching import vmap
from .custom import checkpoint, custom_jvp, custom_vjp, remat
from .jacobians import hessian, jacfwd, jacrev
from .staging import make_ir
