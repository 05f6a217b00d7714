"""netcl.scipy.spatial: jax.scipy.spatial's names (the transform submodule: Rotation and
Slerp).

>>> from netcl.scipy.spatial.transform import Rotation
>>> Rotation.from_euler("z", 90.0, degrees=True).as_rotvec()     # [0, 0, 1.5707964]
"""
from . import transform

__all__ = ["transform"]
