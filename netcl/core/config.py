"""netcl.config: process-wide options, as jax.config.

- ``enable_x64`` (also ``jax_enable_x64``): off by default, as in JAX: float64 data and
  dtype requests become float32 (an explicit ``dtype=float64`` warns). On (``config.update(
  "enable_x64", True)`` or ``NETCL_ENABLE_X64=1``): float64 is kept where the device has
  fp64. Integers are 32-bit either way (netcl has no int64).

>>> netcl.config.update("enable_x64", True)
>>> netcl.config.enable_x64
True
"""
import os

_TRUE, _FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def _flag_from_env(name):
    raw = os.environ.get(name, "")
    if raw.strip().lower() in _TRUE:
        return True
    if raw.strip().lower() in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r}: expected 1/true/yes/on or 0/false/no/off")


class Config:
    """The options; read them as attributes, change them with `update`."""

    _NAMES = {"enable_x64": "enable_x64", "jax_enable_x64": "enable_x64"}

    def __init__(self):
        self.enable_x64 = _flag_from_env("NETCL_ENABLE_X64")

    @property
    def jax_enable_x64(self):
        return self.enable_x64

    def update(self, name, value):
        """Set option `name` ('enable_x64' or JAX's 'jax_enable_x64') to `value`.

        >>> netcl.config.update("jax_enable_x64", True)
        """
        key = self._NAMES.get(name)
        if key is None:
            raise AttributeError(f"netcl.config.update: unknown option {name!r}; options are "
                                 f"{sorted(self._NAMES)}")
        if not isinstance(value, (bool, int)):
            raise TypeError(f"netcl.config.update: {name} takes a bool, got {value!r}")
        if bool(value) != getattr(self, key):
            setattr(self, key, bool(value))
            from ..transforms.jit import clear_caches   # (traces baked the old dtypes in)
            clear_caches()

    def read(self, name):
        key = self._NAMES.get(name)
        if key is None:
            raise AttributeError(f"netcl.config.read: unknown option {name!r}")
        return getattr(self, key)


config = Config()
