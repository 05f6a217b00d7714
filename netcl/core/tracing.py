"""The tracing core: abstract values, primitives, `bind`, interpreters and tracers.

As in JAX's autodidax2, there is no trace stack: a context variable holds the *current*
interpreter, and `Primitive.bind` hands every call to it. A transform (grad, vmap, jvp,
staging) installs its interpreter for the duration of a call; an interpreter that wraps
another keeps a reference to its parent and binds there while applying rules. With no
transform active the current interpreter is eager evaluation (`core.eval`).
"""
import abc
import contextlib
import contextvars

from .array import ArrayBase
from .shapes import prod


class ShapedArray:
    """An abstract value: shape, dtype and weak_type, no data."""
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: prod(self.shape))

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def str_short(self):
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


class Primitive:
    """A named operation with rules; see DESIGN.md 'The primitive'.

    Rules, each set where the primitive is defined:
      abstract_eval(*avals, **params) -> aval (or tuple of avals if multiple_results)
      make_launcher(device, args, params, out_avals) -> Launch (core/launch.py; a plain
          fn(*arrays) -> array(s) is taken as its `run`)                            (OpenCL)
      reference(*ndarrays, **params) -> ndarray(s)                      (NumPy oracle/fallback)
      jvp(primals, tangents, **params) -> (primal_out, tangent_out)
      vjp(cotangent, out, *primals, **params) -> tuple of cotangents (None: no gradient)
      batch(args, dims, **params) -> (out, out_dim)
      precision: "low" | "keep_fp32" | "follow_inputs"   (autocast)
      fusion: "elementwise" | "reduction" | "view" | "opaque"   (jit's fusion pass)
    Optional, on jit's fused primitives: in_place_inputs(n_inputs) -> positions of inputs
    an output may overwrite where they die (read only where the output is written), with
    Launches that have a `run_into` (see transforms/plan.py's assign_in_place).
    """

    def __init__(self, name, multiple_results=False, fusion="opaque", precision="follow_inputs"):
        self.name = name
        self.multiple_results = multiple_results
        self.fusion = fusion
        self.precision = precision
        self.abstract_eval = None
        self.make_launcher = None
        self.reference = None
        self.jvp = None
        self.vjp = None
        self.batch = None
        self.lowering = None  # elementwise: the expression template (see core.codegen)
        # elementwise: whether the template is valid OpenCL C for float vectors as well as
        # scalars (True/False, or a predicate (in_dtype, out_dtype) -> bool)
        self.vector_safe = False
        # Call primitives (custom_jvp, custom_vjp, checkpoint) wrap a Python function; `call`
        # is an object with eval/jvp/vjp/batch/stage methods that each interpreter defers to.
        self.call = None
        # Primitives with effects beyond their outputs (a debug print): jit's dead-code and
        # common-subexpression passes keep each of their equations.
        self.has_side_effects = False

    def bind(self, *args, **params):
        return _current.get(_root).process(self, args, params)

    def returns_view(self, eqn):
        """Whether equation `eqn` of this primitive returns a view of its input's buffer in
        eager execution (jit's in-place pass must not write over a buffer a view reads).
        A primitive that is a view only for some parameters overrides this."""
        return self.fusion == "view"

    def __repr__(self):
        return self.name


class Interpreter(abc.ABC):
    """Base of all interpreters: `process` one primitive application."""
    # True for an interpreter that records a program (jit's staging): host data it meets
    # becomes a constant of that program rather than an upload (the transfer guard's view)
    records_program = False

    @abc.abstractmethod
    def process(self, prim, args, params):
        """Apply `prim` to `args` (values of this interpreter or constants)."""

    def concrete(self, tracer, what):
        """Concrete value of `tracer` for Python control flow, or raise."""
        raise ConcretizationError(what, self)


_current = contextvars.ContextVar("netcl_interpreter")
_root = None  # the eager interpreter, current wherever no transform is active (any thread)


def current_interpreter():
    return _current.get(_root)


@contextlib.contextmanager
def set_interpreter(interp):
    token = _current.set(interp)
    try:
        yield interp
    finally:
        _current.reset(token)


def set_eval_interpreter(interp):
    """Install the eager interpreter as the root (done once by netcl.core.eval)."""
    global _root
    _root = interp


class ConcretizationError(TypeError):
    """A traced value was used where Python needs a concrete one (bool, int, shape...)."""

    def __init__(self, what, interp):
        name = getattr(interp, "transform_name", type(interp).__name__)
        super().__init__(
            f"{what} needs a concrete value, but the array is being traced by {name}, which has "
            "no values. Under jit mark the argument static (static_argnums/static_argnames) or "
            "use netcl.lax.cond / netcl.numpy.where instead of Python control flow.")


class Tracer(ArrayBase):
    """A value inside a transform. Subclasses set `_interp` and implement `aval`."""
    __slots__ = ("_interp",)
    __array_priority__ = 1000

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    weak_type = property(lambda self: self.aval.weak_type)

    def _concrete(self, what):
        return self._interp.concrete(self, what)

    def __bool__(self):
        return bool(self._concrete("bool(x)"))

    def __int__(self):
        return int(self._concrete("int(x)"))

    def __float__(self):
        return float(self._concrete("float(x)"))

    def __index__(self):
        return self._concrete("using an array as an index").__index__()

    def item(self):
        return self._concrete("x.item()").item()

    def __format__(self, spec):
        return format(self._concrete("formatting a traced value"), spec)

    def tolist(self):
        return self._concrete("x.tolist()").tolist()

    def __array__(self, dtype=None, copy=None):
        import numpy as np
        return np.asarray(self._concrete("np.asarray(x)"), dtype)

    def block_until_ready(self):
        return self

    def __hash__(self):
        raise TypeError("unhashable type: netcl Tracer")

    def __repr__(self):
        return f"{type(self).__name__}<{self.aval.str_short()}>"


def get_aval(x):
    """The abstract value of an Array, Tracer or anything with shape/dtype/weak_type."""
    return ShapedArray(x.shape, x.dtype, x.weak_type)
