"""einops on netcl arrays: `einops.rearrange(x, "b h w c -> b (h w) c")` and the rest work
on netcl arrays, traced values included (einops looks through its AbstractBackend's
subclasses for one whose framework is imported and whose arrays it is given).
`import netcl` defines it when einops is installed.

>>> einops.rearrange(jnp.ones((2, 3, 4)), "a b c -> c (a b)").shape
(4, 6)
"""
from einops._backends import NumpyBackend

from .core import dtypes


class NetclBackend(NumpyBackend):
    """NumPy's backend with netcl.numpy in NumPy's place."""
    framework_name = "netcl"

    def __init__(self):
        super().__init__()
        import netcl
        import netcl.numpy as jnp
        self.onp, self.np, self._array = self.np, jnp, netcl.Array

    def is_appropriate_type(self, tensor):
        return isinstance(tensor, self._array)

    def from_numpy(self, x):
        return self.np.asarray(x)

    def to_numpy(self, x):
        return self.onp.asarray(x)

    def is_float_type(self, x):
        return dtypes.kind(x.dtype) == "f"
