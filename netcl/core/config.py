"""netcl.config: process-wide options, as jax.config.

- ``enable_x64`` (also ``jax_enable_x64``): off by default, as in JAX: float64, int64 and
  uint64 data and dtype requests become float32, int32 and uint32 (an explicit
  ``dtype=float64`` warns). On (``config.update("enable_x64", True)`` or
  ``NETCL_ENABLE_X64=1``): int64 and uint64 are kept, float64 where the device has fp64, and
  the default float and int (Python scalars, creation functions, samplers, indices) are
  float64 and int64, as in JAX (core/dtypes.py: `default_float_dtype`,
  `default_int_dtype`, read at each call).
- ``default_matmul_precision`` (also ``jax_default_matmul_precision``): the precision of
  float32 matrix products and convolutions that pass no ``precision=``, with JAX's names:
  None or "default"/"bfloat16" (the fastest: TF32 tensor cores on NVIDIA GPUs of sm_80 and
  newer, as XLA's default there), "high"/"tensorfloat32" (at most TF32), "highest"/"float32"
  (float32 products everywhere). A ``precision=`` argument beats it. Also set by
  ``NETCL_DEFAULT_MATMUL_PRECISION``, and for a block by ``netcl.default_matmul_precision``.
  Half-precision operands multiply exactly in every mode; float64 never uses tensor cores.
- ``autotune``: how matrix products choose their tiles (primitives/gemm_autotune.py):
  "cached" (the default: winners recorded earlier on this device, else the built-in
  tables), "on" (also time the classes with no record, at their first product, and record
  them; True means "on") or "off" (the tables only; False). Also ``NETCL_AUTOTUNE``
  (1/0/cached); ``netcl.tune(fun, *args)`` runs a function with it on.

- ``debug_nans`` / ``debug_infs`` (also ``jax_debug_nans``, ``jax_debug_infs``; for a block:
  ``netcl.debug_nans(True)``): every eager operation's and jitted call's floating-point
  outputs are checked (each waits for its device and reads its values back: for debugging),
  and a NaN (an infinity) raises FloatingPointError naming the operation; a jitted
  function's is run again op by op to name the operation that made it, as JAX does
  (core/nonfinite.py).
- ``log_compiles`` (also ``jax_log_compiles``): log a WARNING on the "netcl" logger each
  time a jitted function compiles for new argument shapes (what JAX logs).
- ``disable_jit`` (also ``jax_disable_jit``): jitted functions run as plain Python, op by
  op, everywhere (``netcl.disable_jit()`` does it for a block).
- ``numpy_rank_promotion`` ("allow", "warn", "raise") and ``numpy_dtype_promotion``
  ("standard", "strict"), also with ``jax_``: JAX's stricter broadcasting and promotion for
  netcl.numpy (numpy/_promotion_modes.py; blocks: ``netcl.numpy_rank_promotion("raise")``).
- ``platform_name`` / ``platforms`` (also ``jax_platform_name``, ``jax_platforms``): JAX's
  platform names ("cpu", "gpu", "cuda", "rocm"; "cuda,cpu": the first available) choose the
  default device: its first device of that kind (core/devices.set_default_platform).
- ``transfer_guard`` and ``transfer_guard_host_to_device`` / ``_device_to_host`` /
  ``_device_to_device`` (also ``jax_``; None: "allow"): JAX's transfer guard levels
  "allow", "log", "disallow", "log_explicit", "disallow_explicit" for implicit transfers
  (a NumPy array or list given to an operation; np.asarray, float, item, tolist or
  printing of an array) and explicit ones (device_put, device_get). Blocks:
  ``netcl.transfer_guard(level)`` and the per-direction context managers (thread-local).

>>> netcl.config.update("enable_x64", True)
>>> netcl.config.enable_x64
True
>>> netcl.config.update("jax_default_matmul_precision", "highest")
"""
import contextlib
import logging
import os
import threading

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")

# JAX's names for jax_default_matmul_precision (a config value, not a lax.Precision).
MATMUL_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32")


def _flag_from_env(name):
    raw = os.environ.get(name, "")
    if raw.strip().lower() in _TRUE:
        return True
    if raw.strip().lower() in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r}: expected 1/true/yes/on or 0/false/no/off")


AUTOTUNE_MODES = ("cached", "on", "off")


def _check_autotune(value, where):
    """`value` as stored: one of AUTOTUNE_MODES (True: "on", False: "off")."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, str) and value.strip().lower() in AUTOTUNE_MODES:
        return value.strip().lower()
    raise ValueError(f"{where}: autotune must be True, False or one of "
                     f"{', '.join(map(repr, AUTOTUNE_MODES))}, got {value!r}")


def _autotune_from_env():
    raw = os.environ.get("NETCL_AUTOTUNE", "").strip().lower()
    if raw in ("", "cached"):
        return "cached"
    if raw in _TRUE or raw in _FALSE:
        return "on" if raw in _TRUE else "off"
    return _check_autotune(raw, "NETCL_AUTOTUNE")


def _check_matmul_precision(value, where):
    """`value` as stored: None or one of MATMUL_PRECISIONS (lower case); a clear error naming
    `where` otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{where}: the matmul precision must be None or one of "
                        f"{', '.join(map(repr, MATMUL_PRECISIONS))}, got {value!r}")
    v = value.strip().lower()
    if v not in MATMUL_PRECISIONS:
        raise ValueError(f"{where}: unknown matmul precision {value!r}; expected None or one "
                         f"of {', '.join(map(repr, MATMUL_PRECISIONS))}")
    return v


def _in_trace():
    from .tracing import current_interpreter
    from .eval import eval_interpreter
    return current_interpreter() is not eval_interpreter


# How compiled code is forgotten when an option changes: netcl.transforms.jit registers
# them (core imports nothing above it). "all": every cache; "traces": jitted functions'
# traces and the eager launchers.
_forget = {}


def register_forgetting(all_caches, traces):
    """Register the functions that drop compiled code (netcl.transforms.jit does)."""
    _forget.update(all=all_caches, traces=traces)


def _forget_compiled():
    """Drop jitted functions' traces and eager launchers, which resolved the old default
    (built kernel programs stay: the new ones differ in source). Inside a trace only what
    is bound from now on changes, as in JAX, and nothing is dropped."""
    if not _in_trace() and "traces" in _forget:
        _forget["traces"]()


class Config:
    """The options; read them as attributes, change them with `update`."""

    _NAMES = {"enable_x64": "enable_x64", "jax_enable_x64": "enable_x64",
              "default_matmul_precision": "default_matmul_precision",
              "jax_default_matmul_precision": "default_matmul_precision",
              "autotune": "autotune",
              "debug_nans": "debug_nans", "jax_debug_nans": "debug_nans",
              "debug_infs": "debug_infs", "jax_debug_infs": "debug_infs",
              "log_compiles": "log_compiles", "jax_log_compiles": "log_compiles",
              "disable_jit": "disable_jit", "jax_disable_jit": "disable_jit",
              "platform_name": "platform_name", "jax_platform_name": "platform_name",
              "platforms": "platforms", "jax_platforms": "platforms",
              "numpy_rank_promotion": "numpy_rank_promotion",
              "jax_numpy_rank_promotion": "numpy_rank_promotion",
              "numpy_dtype_promotion": "numpy_dtype_promotion",
              "jax_numpy_dtype_promotion": "numpy_dtype_promotion",
              **{p + n: n for p in ("", "jax_") for n in (
                  "transfer_guard", "transfer_guard_host_to_device",
                  "transfer_guard_device_to_host", "transfer_guard_device_to_device")}}
    # options that take one of a few names, and change what tracing produces
    _CHOICES = {"numpy_rank_promotion": ("allow", "warn", "raise"),
                "numpy_dtype_promotion": ("standard", "strict")}
    # options that take a bool and change nothing already traced or compiled
    _PLAIN_FLAGS = ("debug_nans", "debug_infs", "log_compiles", "disable_jit")

    def __init__(self):
        self.enable_x64 = _flag_from_env("NETCL_ENABLE_X64")
        self.debug_nans = self.debug_infs = self.log_compiles = self.disable_jit = False
        self.check_values = False       # debug_nans or debug_infs (read on every eager op)
        self.platform_name = self.platforms = None
        self.numpy_rank_promotion, self.numpy_dtype_promotion = "allow", "standard"
        self.default_matmul_precision = _check_matmul_precision(
            os.environ.get("NETCL_DEFAULT_MATMUL_PRECISION") or None,
            "NETCL_DEFAULT_MATMUL_PRECISION")
        self.autotune = _autotune_from_env()
        self.transfer_guard = None      # (set-only in JAX: it sets the three below)
        self.transfer_guard_host_to_device = self.transfer_guard_device_to_host = \
            self.transfer_guard_device_to_device = None

    @property
    def jax_enable_x64(self):
        return self.enable_x64

    @property
    def jax_default_matmul_precision(self):
        return self.default_matmul_precision

    def update(self, name, value):
        """Set option `name` to `value`: 'enable_x64' (JAX's 'jax_enable_x64') takes a bool,
        'default_matmul_precision' (JAX's 'jax_default_matmul_precision') None or a name,
        'autotune' True, False, "cached", "on" or "off".

        >>> netcl.config.update("jax_enable_x64", True)
        >>> netcl.config.update("jax_default_matmul_precision", "float32")
        """
        key = self._NAMES.get(name)
        if key is None:
            raise AttributeError(f"netcl.config.update: unknown option {name!r}; options are "
                                 f"{sorted(self._NAMES)}")
        if key in self._PLAIN_FLAGS:
            if not isinstance(value, (bool, int)):
                raise TypeError(f"netcl.config.update: {name} takes a bool, got {value!r}")
            setattr(self, key, bool(value))
            self.check_values = self.debug_nans or self.debug_infs
            return
        if key in self._CHOICES:
            if value not in self._CHOICES[key]:
                raise ValueError(f"netcl.config.update: {name} takes one of "
                                 f"{', '.join(map(repr, self._CHOICES[key]))}, got {value!r}")
            if value != getattr(self, key):
                setattr(self, key, value)
                _forget_compiled()      # (traces made under the other mode)
            return
        if key.startswith("transfer_guard"):
            _check_guard_level(value, f"netcl.config.update({name!r})", none_ok=True)
            setattr(self, key, value)
            if key == "transfer_guard":
                for d in _GUARD_DIRECTIONS:
                    setattr(self, "transfer_guard_" + d, value)
            _refresh_guard()
            return
        if key in ("platform_name", "platforms"):
            from .devices import set_default_platform
            set_default_platform(value, f"netcl.config.update({name!r})")
            setattr(self, key, value)
            return
        if key in ("default_matmul_precision", "autotune"):
            check = _check_matmul_precision if key != "autotune" else _check_autotune
            value = check(value, f"netcl.config.update({name!r})")
            if value != getattr(self, key):
                setattr(self, key, value)
                _forget_compiled()      # (launchers resolved the old setting)
            return
        if not isinstance(value, (bool, int)):
            raise TypeError(f"netcl.config.update: {name} takes a bool, got {value!r}")
        if bool(value) != getattr(self, key):
            setattr(self, key, bool(value))
            if "all" in _forget:            # (traces baked the old dtypes in)
                _forget["all"]()

    def __getattr__(self, name):
        # (jax_-prefixed names read their option: config.jax_debug_nans)
        key = Config._NAMES.get(name)
        if key is None or key == name:
            raise AttributeError(f"netcl.config has no option {name!r}")
        return getattr(self, key)

    def read(self, name):
        key = self._NAMES.get(name)
        if key is None:
            raise AttributeError(f"netcl.config.read: unknown option {name!r}")
        return getattr(self, key)


config = Config()


@contextlib.contextmanager
def default_matmul_precision(name):
    """Run a block with `config.default_matmul_precision` set to `name` (None, "default",
    "high", "highest", "bfloat16", "tensorfloat32" or "float32"), as
    `jax.default_matmul_precision`: matrix products and convolutions bound inside it without
    a ``precision=`` take it. Entered outside a trace, a change of the setting makes jitted
    functions trace again on their next call.

    >>> with netcl.default_matmul_precision("float32"):
    ...     y = x @ w                      # float32 products, also on tensor-core GPUs
    """
    value = _check_matmul_precision(name, "netcl.default_matmul_precision")
    old = config.default_matmul_precision
    if value != old:
        config.default_matmul_precision = value
        _forget_compiled()
    try:
        yield
    finally:
        if config.default_matmul_precision != old:
            config.default_matmul_precision = old
            _forget_compiled()


def tune(fun, *args, **kwargs):
    """Run `fun(*args, **kwargs)` with `config.autotune` "on": every matrix product it runs
    whose shape class has no recorded tiles on its device is timed with each candidate
    configuration first, and the fastest recorded (primitives/gemm_autotune.py); later
    runs, in this process or another, take the recorded tiles. Returns what `fun` returns.

    >>> netcl.tune(train_step, params, state, x, y)    # once; then train as usual
    """
    if not callable(fun):
        raise TypeError(f"netcl.tune: fun must be callable, got {type(fun).__name__}")
    old = config.autotune
    config.update("autotune", "on")
    try:
        return fun(*args, **kwargs)
    finally:
        config.update("autotune", old)


@contextlib.contextmanager
def _flag_block(key, value):
    before = getattr(config, key)
    config.update(key, value)
    try:
        yield
    finally:
        config.update(key, before)


def debug_nans(value=True):
    """A block in which NaNs raise FloatingPointError (config's debug_nans), as
    `jax.debug_nans`.

    >>> with netcl.debug_nans(True):
    ...     jnp.log(jnp.float32(-1.0))          # FloatingPointError: ... nan ... log
    """
    return _flag_block("debug_nans", value)


def debug_infs(value=True):
    """A block in which infinities raise FloatingPointError (config's debug_infs), as
    `jax.debug_infs`.

    >>> with netcl.debug_infs(True):
    ...     jnp.float32(1.0) / 0.0              # FloatingPointError: ... inf ... div
    """
    return _flag_block("debug_infs", value)


def log_compiles(value=True):
    """A block in which each compilation of a jitted function is logged, as
    `jax.log_compiles`.

    >>> with netcl.log_compiles():
    ...     netcl.jit(f)(x)                     # WARNING netcl: compiling f for ...
    """
    return _flag_block("log_compiles", value)


def numpy_rank_promotion(value):
    """A block with config's numpy_rank_promotion set ("allow", "warn" or "raise"), as
    `jax.numpy_rank_promotion`.

    >>> with netcl.numpy_rank_promotion("raise"):
    ...     jnp.ones(2) + jnp.ones((3, 2))          # ValueError: ... could not be broadcast
    """
    return _flag_block("numpy_rank_promotion", value)


def numpy_dtype_promotion(value):
    """A block with config's numpy_dtype_promotion set ("standard" or "strict"), as
    `jax.numpy_dtype_promotion`.

    >>> with netcl.numpy_dtype_promotion("strict"):
    ...     jnp.ones(2, jnp.int32) + 1.5             # TypePromotionError
    """
    return _flag_block("numpy_dtype_promotion", value)


# ---- transfer guard -------------------------------------------------------------------------
# The hooks (core/eval.to_array, core/array.Array._to_host / from_numpy) read the one module
# flag GUARD_ON first: False while every level is "allow" (None) globally and no guard block
# is open in any thread, so the default costs them a single global lookup.

TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_GUARD_DIRECTIONS = ("host_to_device", "device_to_host", "device_to_device")
GUARD_ON = False
_guard_local = threading.local()      # per-thread levels of the open guard blocks
_guard_blocks = [0]                   # guard blocks open now, in all threads
_guard_lock = threading.Lock()
_log = logging.getLogger("netcl")


def _check_guard_level(value, where, none_ok=False):
    if (value is None and none_ok) or (isinstance(value, str) and
                                       value in TRANSFER_GUARD_LEVELS):
        return value
    raise ValueError(f"{where}: the transfer guard level must be one of "
                     f"{', '.join(map(repr, TRANSFER_GUARD_LEVELS))}"
                     f"{' or None' if none_ok else ''}, got {value!r}")


def _refresh_guard():
    global GUARD_ON
    GUARD_ON = bool(_guard_blocks[0]) or any(
        getattr(config, "transfer_guard_" + d) not in (None, "allow")
        for d in _GUARD_DIRECTIONS)


def guard_level(direction):
    """The transfer guard level in force in this thread for `direction` ("host_to_device",
    "device_to_host" or "device_to_device"): the innermost open block's, else the global
    option's, else "allow"."""
    level = getattr(_guard_local, direction, None)
    if level is None:
        level = getattr(config, "transfer_guard_" + direction) or "allow"
    return level


def check_transfer(direction, explicit, describe):
    """Apply the guard to one transfer: log it or raise RuntimeError (JAX's "Disallowed
    ... transfer"), per the level; `describe()` says what moves where. Callers test
    GUARD_ON first."""
    level = guard_level(direction)
    explicit = explicit or getattr(_guard_local, "explicit", False)
    if level == "allow" or (explicit and level in ("log", "disallow")):
        return
    kind = direction.replace("_", "-")
    if level in ("disallow", "disallow_explicit"):
        raise RuntimeError(
            f"Disallowed {kind} transfer: {describe()} (transfer guard level {level!r}"
            f"{'' if explicit else '; move data explicitly with netcl.device_put / device_get'}"
            ")")
    _log.warning("%s%s transfer: %s", "explicit " if explicit else "", kind, describe())


@contextlib.contextmanager
def explicit_transfers():
    """Within the block (this thread), transfers are the user's explicit ones
    (netcl.device_get's reads, netcl.device_put's uploads)."""
    old = getattr(_guard_local, "explicit", False)
    _guard_local.explicit = True
    try:
        yield
    finally:
        _guard_local.explicit = old


@contextlib.contextmanager
def _guard_block(directions, level, where):
    _check_guard_level(level, where)
    old = [getattr(_guard_local, d, None) for d in directions]
    with _guard_lock:
        _guard_blocks[0] += 1
        _refresh_guard()
    for d in directions:
        setattr(_guard_local, d, level)
    try:
        yield
    finally:
        for d, o in zip(directions, old):
            setattr(_guard_local, d, o)
        with _guard_lock:
            _guard_blocks[0] -= 1
            _refresh_guard()


def transfer_guard(new_val):
    """A block (in this thread) with the transfer guard level `new_val` for every direction,
    as `jax.transfer_guard`: "allow", "log" / "disallow" (implicit transfers: a NumPy array
    or list given to an operation, np.asarray / float / item / tolist / printing of an
    array), "log_explicit" / "disallow_explicit" (also netcl.device_put / device_get).
    Python scalars in operations are not guarded (netcl keeps them as cached constants).

    >>> with netcl.transfer_guard("disallow"):
    ...     x + np.ones(3)                   # RuntimeError: Disallowed host-to-device transfer
    """
    return _guard_block(_GUARD_DIRECTIONS, new_val, "netcl.transfer_guard")


def transfer_guard_host_to_device(new_val):
    """transfer_guard for host-to-device transfers only (jax.transfer_guard_host_to_device).

    >>> with netcl.transfer_guard_host_to_device("disallow"):
    ...     netcl.device_put(np.ones(3))         # explicit: allowed
    """
    return _guard_block(("host_to_device",), new_val, "netcl.transfer_guard_host_to_device")


def transfer_guard_device_to_host(new_val):
    """transfer_guard for device-to-host transfers only (jax.transfer_guard_device_to_host).

    >>> with netcl.transfer_guard_device_to_host("disallow"):
    ...     float(loss)                          # RuntimeError: Disallowed device-to-host ...
    """
    return _guard_block(("device_to_host",), new_val, "netcl.transfer_guard_device_to_host")


def transfer_guard_device_to_device(new_val):
    """transfer_guard for copies between devices (jax.transfer_guard_device_to_device).

    >>> with netcl.transfer_guard_device_to_device("disallow_explicit"):
    ...     netcl.device_put(x, other_device)    # RuntimeError: Disallowed device-to-device
    """
    return _guard_block(("device_to_device",), new_val,
                        "netcl.transfer_guard_device_to_device")
