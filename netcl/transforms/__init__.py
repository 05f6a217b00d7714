"""Function transforms, each an interpreter over primitives:

  ad.py         jvp, vjp, grad, value_and_grad, stop_gradient (forward and reverse mode)
  custom.py     custom_jvp, custom_vjp, checkpoint (call primitives)
  jacobians.py  jacrev, jacfwd, hessian
  batching.py   vmap
  staging.py    make_ir: trace to the IR (core/ir.py) that jit compiles
"""
from .ad import grad, jvp, stop_gradient, value_and_grad, vjp
from .batching import vmap
from .custom import checkpoint, custom_jvp, custom_vjp, remat
from .jacobians import hessian, jacfwd, jacrev
from .staging import make_ir
