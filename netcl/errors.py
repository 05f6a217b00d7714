"""netcl.errors: jax.errors' names for the errors netcl raises, so that `except
jax.errors.X` clauses port. Tracer conversions (bool(x), int(x), np.asarray(x) of a traced
value) all raise netcl's ConcretizationError, so those names are one class here.

>>> try:
...     netcl.jit(lambda x: bool(x))(jnp.ones(()))
... except netcl.errors.ConcretizationTypeError:
...     pass
"""
from .core.eval import LeakedTracerError
from .core.tracing import ConcretizationError

__all__ = ["ConcretizationTypeError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "TracerArrayConversionError",
           "NonConcreteBooleanIndexError", "UnexpectedTracerError", "JaxRuntimeError",
           "JAXTypeError", "JAXIndexError", "KeyReuseError"]

ConcretizationTypeError = ConcretizationError
TracerBoolConversionError = ConcretizationError
TracerIntegerConversionError = ConcretizationError
TracerArrayConversionError = ConcretizationError
NonConcreteBooleanIndexError = ConcretizationError
UnexpectedTracerError = LeakedTracerError
JaxRuntimeError = RuntimeError
JAXTypeError = TypeError
JAXIndexError = IndexError


class KeyReuseError(RuntimeError):
    """jax.errors.KeyReuseError (netcl does not check PRNG key reuse; nothing raises it)."""
