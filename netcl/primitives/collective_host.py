"""How pmap runs each collective across devices, through host memory (NumPy).

`HOST_RULES[prim](shards, **params) -> per-device results`: `shards[i]` is device i's input,
devices in axis order (the device index is the axis index), dtypes kept. `axis_index`'s rule
takes the device count instead: `HOST_RULES[axis_index_p](n, axis_name=...) -> [int32 0-d
arrays]`. The semantics are the collectives' (primitives/collectives.py); device kernels and
ring schedules would replace these rules, not change them.
"""
import numpy as np

from .collectives import (all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p, ppermute_p,
                          psum_p, psum_scatter_p)


def _host_sum(shards):
    total = np.array(shards[0], copy=True)
    for s in shards[1:]:
        total = np.add(total, s, dtype=total.dtype)
    return total


def _host_psum(shards, **params):
    t = _host_sum(shards)
    return [t.copy() for _ in shards]


def _host_reduce(fn):
    def rule(shards, **params):
        t = np.array(shards[0], copy=True)
        for s in shards[1:]:
            t = fn(t, s)
        return [np.asarray(t, shards[0].dtype).copy() for _ in shards]
    return rule


def _host_all_gather(shards, *, axis, tiled, **params):
    g = np.concatenate(shards, axis) if tiled else np.stack(shards, axis)
    return [g.copy() for _ in shards]


def _host_psum_scatter(shards, *, scatter_dimension, tiled, **params):
    t, n = _host_sum(shards), len(shards)
    if tiled:
        return [np.ascontiguousarray(p) for p in np.split(t, n, scatter_dimension)]
    return [np.ascontiguousarray(np.take(t, k, scatter_dimension)) for k in range(n)]


def _host_ppermute(shards, *, perm, **params):
    out = [np.zeros_like(s) for s in shards]
    for s, t in perm:
        out[t] = np.array(shards[s], copy=True)
    return out


def _host_all_to_all(shards, *, split_axis, concat_axis, **params):
    n = len(shards)
    chunks = [np.split(s, n, split_axis) for s in shards]
    return [np.concatenate([chunks[s][k] for s in range(n)], concat_axis) for k in range(n)]


def _host_axis_index(n, **params):
    return [np.asarray(i, np.int32) for i in range(n)]


HOST_RULES = {
    psum_p: _host_psum,
    pmax_p: _host_reduce(np.maximum),
    pmin_p: _host_reduce(np.minimum),
    all_gather_p: _host_all_gather,
    psum_scatter_p: _host_psum_scatter,
    ppermute_p: _host_ppermute,
    all_to_all_p: _host_all_to_all,
    axis_index_p: _host_axis_index,
}
