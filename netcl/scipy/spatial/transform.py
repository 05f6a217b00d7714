"""netcl.scipy.spatial.transform: jax.scipy.spatial.transform's Rotation and Slerp.

A Rotation holds unit quaternions in scalar-last order (x, y, z, w), shape (4,) for one
rotation or (N, 4) for N; Slerp interpolates between key rotations at key times. Both are
NamedTuples, as JAX's, and so pytrees: they pass through jit, vmap and grad (a Rotation's
leaf is its `quat`). Everything is composed from netcl operations; the conversions work on
any leading batch shape (what JAX's jnp.vectorize gives), with the Euler axis sequence and
the degrees/intrinsic choices static Python values.

Beyond JAX's: Rotation.identity(num) and Rotation.random(key, num) are implemented (JAX's
identity asserts num is None, its random raises NotImplementedError); random draws
quaternions from a 4-D standard normal, normalized (uniform on SO(3)).

>>> from netcl.scipy.spatial.transform import Rotation, Slerp
>>> r = Rotation.from_euler("z", 90.0, degrees=True)
>>> r.apply(jnp.array([1.0, 0.0, 0.0]))             # [0, 1, 0]
>>> (r * r.inv()).magnitude()                         # 0
"""
import re
from typing import NamedTuple

import numpy as np

from ...core import dtypes
from ...numpy._util import asarray_arg

__all__ = ["Rotation", "Slerp"]


def _jnp():
    from ... import numpy as jnp
    return jnp


def _arr(where, v, name):
    if isinstance(v, (list, tuple)):
        # (scipy takes lists; JAX's jnp.asarray does too for these constructors)
        return _jnp().asarray(np.asarray(v))
    return asarray_arg(v, where)


def _last(where, x, size, name):
    if x.ndim < 1 or x.shape[-1] != size:
        raise ValueError(f"{where}: {name} must have shape (..., {size}), got shape "
                         f"{tuple(x.shape)}")
    return x


def _norm(v):
    jnp = _jnp()
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """The quaternion product p q (the rotation q, then p), batch dimensions broadcast."""
    jnp = _jnp()
    cross = jnp.cross(p[..., :3], q[..., :3])
    pw, qw = p[..., 3:], q[..., 3:]
    vec = pw * q[..., :3] + qw * p[..., :3] + cross
    w = pw * qw - jnp.sum(p[..., :3] * q[..., :3], axis=-1, keepdims=True)
    return jnp.concatenate([vec, w], axis=-1)


def _as_matrix(q):
    jnp = _jnp()
    x, y, z, w = (q[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _as_rotvec(q, degrees):
    jnp = _jnp()
    q = jnp.where(q[..., 3:] < 0, -q, q)     # w >= 0: angles in [0, pi]
    angle = 2.0 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880       # (the series of angle / sin(angle / 2))
    large = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= 1e-3, small, large)
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _from_rotvec(rotvec, degrees):
    jnp = _jnp()
    if degrees:
        rotvec = jnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    a2 = angle * angle
    small = 0.5 - a2 / 48 + a2 * a2 / 3840          # (the series of sin(angle / 2) / angle)
    large = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= 1e-3, small, large)
    return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


def _from_matrix(m):
    """Shepperd's method, as JAX's: the quaternion from the largest of the diagonal entries
    and the trace (all four candidates computed, one selected per matrix)."""
    jnp = _jnp()
    e = lambda i, j: m[..., i, j]  # noqa: E731
    trace = e(0, 0) + e(1, 1) + e(2, 2)
    decision = jnp.stack([e(0, 0), e(1, 1), e(2, 2), trace], axis=-1)
    choice = jnp.argmax(decision, axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - trace + 2 * e(i, i)
        q[j] = e(j, i) + e(i, j)
        q[k] = e(k, i) + e(i, k)
        q[3] = e(k, j) - e(j, k)
        candidates.append(jnp.stack(q, axis=-1))
    candidates.append(jnp.stack([e(2, 1) - e(1, 2), e(0, 2) - e(2, 0), e(1, 0) - e(0, 1),
                                 1 + trace], axis=-1))
    quat = candidates[3]
    for c in range(3):
        quat = jnp.where((choice == c)[..., None], candidates[c], quat)
    return _normalize(quat)


def _from_mrp(mrp):
    jnp = _jnp()
    sq1 = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return jnp.concatenate([2 * mrp[..., :3], 2 - sq1], axis=-1) / sq1


def _as_mrp(q):
    jnp = _jnp()
    sign = jnp.where(q[..., 3:] < 0, -1.0, 1.0).astype(q.dtype)
    return sign * q[..., :3] / (1.0 + sign * q[..., 3:])


def _make_canonical(q):
    """q or -q: the one whose first nonzero of (w, x, y, z) is positive."""
    jnp = _jnp()
    neg, zero = q < 0, q == 0
    flip = neg[..., 3] | (zero[..., 3] & neg[..., 0]) | \
        (zero[..., 3] & zero[..., 0] & neg[..., 1]) | \
        (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2])
    return jnp.where(flip[..., None], -q, q)


_AXIS = {"x": 0, "y": 1, "z": 2}


def _euler_seq(where, seq, exactly_three=False):
    """(axis indices, intrinsic) of an Euler axis sequence, or a ValueError."""
    if not isinstance(seq, str):
        raise TypeError(f"{where}: seq must be a string of axes, got {type(seq).__name__}")
    if exactly_three and len(seq) != 3:
        raise ValueError(f"{where}: expected 3 axes, got {seq!r}")
    if not 1 <= len(seq) <= 3:
        raise ValueError(f"{where}: expected the axis specification to be a non-empty string "
                         f"of up to 3 characters, got {seq!r}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"{where}: expected axes from ['x', 'y', 'z'] (extrinsic) or "
                         f"['X', 'Y', 'Z'] (intrinsic), got {seq!r}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"{where}: expected consecutive axes to be different, got {seq!r}")
    return [_AXIS[c] for c in seq.lower()], intrinsic


def _elementary(axis, angle):
    """The quaternion of a rotation by `angle` about coordinate axis `axis`."""
    jnp = _jnp()
    zero = jnp.zeros_like(angle)
    parts = [zero, zero, zero, jnp.cos(angle / 2.0)]
    parts[axis] = jnp.sin(angle / 2.0)
    return jnp.stack(parts, axis=-1)


def _euler_from_quat(q, axes, extrinsic, degrees):
    """Euler angles of the sequence `axes` (JAX's and scipy's quaternion method, Bernardes
    and Viollet 2022); the axis choices are static, the degenerate cases (gimbal lock)
    selected per rotation."""
    jnp = _jnp()
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    qi, qj, qk, qw = q[..., i], q[..., j], q[..., k], q[..., 3]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk * sign
    else:
        a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
    eps = 1e-7
    zero = jnp.zeros_like(qw)
    ang = [zero, 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b)), zero]
    case = jnp.where(jnp.abs(ang[1] - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(ang[1]) <= eps, 1, case)
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    ang[0] = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    ang[first] = jnp.where(case == 0, half_sum - half_diff, ang[first])
    ang[third] = jnp.where(case == 0, half_sum + half_diff, ang[third])
    if not symmetric:
        ang[third] = ang[third] * sign
        ang[1] = ang[1] - np.pi / 2
    angles = jnp.stack(ang, axis=-1)
    angles = (angles + np.pi) % (2 * np.pi) - np.pi
    return jnp.rad2deg(angles) if degrees else angles


class Rotation(NamedTuple):
    """Rotations in 3 dimensions (scipy's and JAX's Rotation), as unit quaternions `quat`
    (x, y, z, w): (4,) for one rotation, (N, 4) for several.

    >>> r = Rotation.from_euler("z", 90.0, degrees=True)
    >>> r.as_matrix()                                  # [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    >>> (r * Rotation.from_euler("x", 90.0, degrees=True)).as_matrix()
    """
    quat: object

    @classmethod
    def concatenate(cls, rotations):
        """One Rotation of all the given ones, in order."""
        jnp = _jnp()
        return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes of `seq` ('xyz'-style: extrinsic, fixed axes;
        'XYZ'-style: intrinsic, rotating axes; 1 to 3 axes): angles (..., len(seq))."""
        where = "Rotation.from_euler"
        axes, intrinsic = _euler_seq(where, seq)
        jnp = _jnp()
        angles = jnp.atleast_1d(_arr(where, angles, "angles"))
        if angles.shape[-1] != len(axes):
            raise ValueError(f"{where}: angles must have shape (..., {len(axes)}) for seq "
                             f"{seq!r}, got shape {tuple(angles.shape)}")
        if dtypes.kind(angles.dtype) not in "f":
            angles = angles.astype(dtypes.default_float_dtype())
        if degrees:
            angles = jnp.deg2rad(angles)
        result = _elementary(axes[0], angles[..., 0])
        for idx in range(1, len(axes)):
            q = _elementary(axes[idx], angles[..., idx])
            result = _compose(result, q) if intrinsic else _compose(q, result)
        return cls(result)

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices (..., 3, 3)."""
        m = _arr("Rotation.from_matrix", matrix, "matrix")
        if m.ndim < 2 or tuple(m.shape[-2:]) != (3, 3):
            raise ValueError(f"Rotation.from_matrix: matrix must have shape (..., 3, 3), got "
                             f"shape {tuple(m.shape)}")
        if dtypes.kind(m.dtype) != "f":
            m = m.astype(dtypes.default_float_dtype())
        return cls(_from_matrix(m))

    @classmethod
    def from_mrp(cls, mrp):
        """From Modified Rodrigues Parameters (..., 3)."""
        where = "Rotation.from_mrp"
        return cls(_from_mrp(_last(where, _arr(where, mrp, "mrp"), 3, "mrp")))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (..., 4), scalar last; normalized."""
        where = "Rotation.from_quat"
        q = _last(where, _arr(where, quat, "quat"), 4, "quat")
        if dtypes.kind(q.dtype) != "f":
            q = q.astype(dtypes.default_float_dtype())
        return cls(_normalize(q))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors (..., 3): axis times angle."""
        where = "Rotation.from_rotvec"
        v = _last(where, _arr(where, rotvec, "rotvec"), 3, "rotvec")
        if dtypes.kind(v.dtype) != "f":
            v = v.astype(dtypes.default_float_dtype())
        return cls(_from_rotvec(v, bool(degrees)))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (num=None), or num of them."""
        jnp = _jnp()
        q = jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(q if num is None else jnp.tile(q, (int(num), 1)))

    @classmethod
    def random(cls, random_key, num=None):
        """Uniformly distributed rotations (num=None: one): normalized 4-D standard normal
        quaternions."""
        from ... import random
        shape = (4,) if num is None else (int(num), 4)
        return cls(_normalize(random.normal(random_key, shape)))

    def __getitem__(self, indexer):
        """The rotation(s) at `indexer` of several rotations."""
        if self.single:
            raise TypeError("Rotation: a single rotation is not subscriptable")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Rotation: a single rotation has no len()")
        return self.quat.shape[0]

    def __mul__(self, other):
        """The composition: self * other applies other first, then self."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """The rotated vectors (..., 3) (inverse=True: rotated by the inverse); rotations
        and vectors broadcast against each other."""
        where = "Rotation.apply"
        v = _last(where, _arr(where, vectors, "vectors"), 3, "vectors")
        m = self.as_matrix()
        if inverse:
            m = _jnp().swapaxes(m, -1, -2)
        return (m @ v[..., None])[..., 0]

    def as_euler(self, seq, degrees=False):
        """Euler angles (..., 3) about the 3 axes of `seq` (see from_euler)."""
        axes, intrinsic = _euler_seq("Rotation.as_euler", seq, exactly_three=True)
        return _euler_from_quat(self.quat, axes, not intrinsic, bool(degrees))

    def as_matrix(self):
        """Rotation matrices (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (..., 3)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees=False):
        """Rotation vectors (..., 3), angles in [0, pi] (degrees: [0, 180])."""
        return _as_rotvec(self.quat, bool(degrees))

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions (..., 4): scalar last (default) or first; canonical picks the
        sign with w >= 0 (ties broken by x, y, z)."""
        q = _make_canonical(self.quat) if canonical else self.quat
        return _jnp().roll(q, 1, axis=-1) if scalar_first else q

    def inv(self):
        """The inverse rotation(s)."""
        jnp = _jnp()
        return Rotation(self.quat * jnp.asarray([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """The rotation angle(s) in radians, in [0, pi]."""
        jnp = _jnp()
        return 2.0 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The (weighted) mean rotation of several: the eigenvector of the largest
        eigenvalue of sum_i w_i q_i q_i^T (Markley et al. 2007)."""
        jnp = _jnp()
        n = len(self)
        w = jnp.ones(n, dtype=self.quat.dtype) if weights is None else \
            jnp.asarray(weights, dtype=self.quat.dtype)
        if w.ndim != 1:
            raise ValueError(f"Rotation.mean: expected weights to be 1-dimensional, got shape "
                             f"{tuple(w.shape)}")
        if w.shape[0] != n:
            raise ValueError(f"Rotation.mean: expected one weight per rotation, got "
                             f"{w.shape[0]} weights and {n} rotations")
        K = (w[None, :] * self.quat.T) @ self.quat
        _, v = jnp.linalg.eigh(K)
        return Rotation(v[:, -1])

    @property
    def single(self):
        """Whether this holds one rotation (quat of shape (4,))."""
        return self.quat.ndim == 1


class Slerp(NamedTuple):
    """Spherical linear interpolation of rotations (scipy's and JAX's Slerp): build with
    Slerp.init(times, rotations) (key times, increasing, and as many key rotations), call
    with the times to interpolate at (a scalar: one rotation; a 1-D array: several).

    >>> s = Slerp.init(jnp.array([0.0, 1.0]), Rotation.from_euler("z", jnp.array([[0.0],
    ...                [90.0]]), degrees=True))
    >>> s(0.5).as_euler("zyx", degrees=True)          # [45, 0, 0]
    """
    times: object
    timedelta: object
    rotations: object
    rotvecs: object

    @classmethod
    def init(cls, times, rotations):
        where = "Slerp.init"
        jnp = _jnp()
        if not isinstance(rotations, Rotation):
            raise TypeError(f"{where}: rotations must be a Rotation, got "
                            f"{type(rotations).__name__}")
        if rotations.single or len(rotations) == 1:
            raise ValueError(f"{where}: rotations must be a sequence of at least 2 rotations")
        times = jnp.asarray(_arr(where, times, "times"), dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(f"{where}: expected times to be 1-dimensional, got shape "
                             f"{tuple(times.shape)}")
        if times.shape[0] != len(rotations):
            raise ValueError(f"{where}: expected as many times as rotations, got "
                             f"{times.shape[0]} times and {len(rotations)} rotations")
        # (that the times increase is not checked: it would need their values, under jit too)
        quat = rotations.as_quat()
        start = Rotation(quat[:-1])
        return cls(times=times, timedelta=jnp.diff(times), rotations=start,
                   rotvecs=(start.inv() * Rotation(quat[1:])).as_rotvec())

    def __call__(self, times):
        """The interpolated rotations at `times` (scalar or 1-D)."""
        jnp = _jnp()
        t = jnp.asarray(_arr("Slerp", times, "times"), dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError(f"Slerp: times must be at most 1-dimensional, got shape "
                             f"{tuple(t.shape)}")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return result[0] if single else result

