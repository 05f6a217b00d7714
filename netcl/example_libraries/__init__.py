"""netcl.example_libraries: the counterpart of ``jax.example_libraries``, so that programs
written against JAX's example libraries port by changing imports::

    from netcl.example_libraries import stax, optimizers   # was: from jax.example_libraries

``stax`` is ``netcl.stax`` itself (one module, not a copy); ``optimizers`` holds the
``(init_fn, update_fn, params_fn)`` optimizers of ``jax.example_libraries.optimizers``.
(``netcl.optim`` is the optax-shaped optimizer library.)
"""
import sys

from .. import stax
from . import optimizers  # noqa: F401

# `import netcl.example_libraries.stax` needs a module entry, not just the attribute
sys.modules.setdefault(__name__ + ".stax", stax)

__all__ = ["optimizers", "stax"]
