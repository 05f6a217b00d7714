"""jax.experimental.mesh_utils: device arrays for `netcl.sharding.Mesh`.

>>> from netcl.experimental import mesh_utils
>>> mesh = Mesh(mesh_utils.create_device_mesh((2, 2)), ("data", "model"))
"""
import numpy as np

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False):
    """The first prod(mesh_shape) devices (default: netcl.local_devices()) as an array of
    `mesh_shape`, in discovery order (OpenCL reports no interconnect topology to order them
    by, which JAX does on TPUs; the remaining flags are accepted for that reason).

    >>> mesh_utils.create_device_mesh((netcl.device_count(),))
    """
    from ..transforms.pmap import local_devices
    shape = tuple(int(s) for s in mesh_shape)
    devs = list(local_devices() if devices is None else devices)
    n = int(np.prod(shape, dtype=np.int64))
    if n != len(devs):
        raise ValueError(f"create_device_mesh: Number of devices {len(devs)} must equal the "
                         f"product of mesh_shape {shape}")
    grid = np.empty(n, dtype=object)
    grid[:] = devs
    return grid.reshape(shape)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False):
    """mesh_shape within a process times dcn_mesh_shape across processes, as JAX's. netcl's
    meshes hold this process's devices only, so dcn_mesh_shape must be all ones.

    >>> mesh_utils.create_hybrid_device_mesh((2,), (1,))
    """
    dcn = tuple(int(s) for s in dcn_mesh_shape)
    if len(dcn) != len(tuple(mesh_shape)):
        raise ValueError(f"create_hybrid_device_mesh: mesh_shape {tuple(mesh_shape)} and "
                         f"dcn_mesh_shape {dcn} differ in length")
    if any(s != 1 for s in dcn):
        raise NotImplementedError(
            f"create_hybrid_device_mesh: dcn_mesh_shape {dcn} spans processes; netcl's "
            "meshes hold this process's devices (across processes: pmap over "
            "netcl.distributed's global devices)")
    return create_device_mesh(mesh_shape, devices)
