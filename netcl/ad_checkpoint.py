"""jax.ad_checkpoint: `checkpoint_name` tags values for the checkpoint policies (and the
policies themselves, as `checkpoint_policies`).

>>> from netcl.ad_checkpoint import checkpoint_name
>>> h = checkpoint_name(jnp.tanh(x @ w), "hidden")
"""
from . import checkpoint_policies  # noqa: F401
from .transforms.custom import checkpoint  # noqa: F401
from .transforms.remat_policies import checkpoint_name  # noqa: F401
