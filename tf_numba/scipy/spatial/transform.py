"""``Rotation`` and ``Slerp`` of ``scipy.spatial.transform``, as JAX's: a rotation (or a
stack of them) is a unit quaternion ``(x, y, z, w)`` in a pytree, so it passes through
``jit``, ``vmap`` and ``grad``; every conversion (Euler angles, matrices, rotation vectors,
modified Rodrigues parameters) is a composite of tf_numba operations on the last axis,
with SciPy's formulas and branches.

>>> r = Rotation.from_euler("z", 90, degrees=True)
>>> r.apply(np.array([1.0, 0.0, 0.0])).round(12)
array([0., 1., 0.])
"""
import math
import re
from typing import NamedTuple

import numpy as np

import tf_numba.numpy as tnp

from ...errors import ArgumentError, ShapeError
from ...tree_util import register_pytree_node

__all__ = ["Rotation", "Slerp"]

_AXIS = {"x": 0, "y": 1, "z": 2}


def _norm(v):
    return tnp.sqrt(tnp.sum(v * v, axis=-1))


def _float(x):
    x = tnp.asarray(x)
    return x if tnp.issubdtype(x.dtype, tnp.inexact) else x.astype(np.float64)


def _compose(p, q):
    """The quaternion of ``p`` after ``q`` (Hamilton's product, scalar last)."""
    pv, pw, qv, qw = p[..., :3], p[..., 3:], q[..., :3], q[..., 3:]
    vector = pw * qv + qw * pv + tnp.cross(pv, qv)
    scalar = pw * qw - tnp.sum(pv * qv, axis=-1, keepdims=True)
    return tnp.concatenate([vector, scalar], axis=-1)


def _elementary(axis, angle):
    """The quaternion of a rotation by ``angle`` about basis axis ``axis``."""
    half = angle / 2
    parts = [tnp.zeros_like(half)] * 3 + [tnp.cos(half)]
    parts[axis] = tnp.sin(half)
    return tnp.stack(parts, axis=-1)


def _sequence(seq, op):
    """``(axes, intrinsic)`` of a sequence like 'xyz' (extrinsic) or 'ZXZ' (intrinsic)."""
    if not (1 <= len(seq) <= 3) or not (re.fullmatch(r"[xyz]+", seq)
                                        or re.fullmatch(r"[XYZ]+", seq)):
        raise ArgumentError(f"seq must be 1 to 3 axes from 'xyz' (extrinsic) or 'XYZ' "
                            f"(intrinsic), got {seq!r}", op=op)
    if any(a == b for a, b in zip(seq, seq[1:])):
        raise ArgumentError(f"consecutive axes must differ, got {seq!r}", op=op)
    return [_AXIS[c] for c in seq.lower()], seq.isupper()


def _canonical(quat):
    """``quat`` or ``-quat``, whichever has its first nonzero component from ``w``, ``x``,
    ``y``, ``z`` positive (SciPy's choice between the two quaternions of a rotation)."""
    w, x, y, z = quat[..., 3], quat[..., 0], quat[..., 1], quat[..., 2]
    negative = (w < 0) | ((w == 0) & ((x < 0) | ((x == 0) & ((y < 0) | ((y == 0)
                                                                          & (z < 0))))))
    return tnp.where(negative[..., None], -quat, quat)


def _matrix_to_quat(m):
    """SciPy's conversion: from the largest of the diagonal and the trace, for accuracy."""
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = tnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = tnp.argmax(decision, axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        parts = [None] * 4
        parts[i] = 1 - trace + 2 * m[..., i, i]
        parts[j] = m[..., j, i] + m[..., i, j]
        parts[k] = m[..., k, i] + m[..., i, k]
        parts[3] = m[..., k, j] - m[..., j, k]
        candidates.append(tnp.stack(parts, axis=-1))
    candidates.append(tnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    quat = candidates[3]
    for i in range(3):
        quat = tnp.where((choice == i)[..., None], candidates[i], quat)
    return quat / _norm(quat)[..., None]


def _euler_from_quat(quat, axes, extrinsic):
    """Bernardes and Viollet's quaternion-to-Euler method ("Quaternion to Euler angles
    conversion: A direct, general and computationally efficient method", PLoS ONE 17
    (2022)), SciPy's: angles in ``[-pi, pi)``; in gimbal lock the third angle is 0."""
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    w = quat[..., 3]
    qi, qj, qk = quat[..., i], quat[..., j], quat[..., k] * sign
    if symmetric:
        a, b, c, d = w, qi, qj, qk
    else:
        a, b, c, d = w - qj, qi + qk, qj + w, qk - qi
    middle = 2 * tnp.arctan2(tnp.hypot(c, d), tnp.hypot(a, b))
    eps = 1e-7
    at_zero, at_pi = tnp.abs(middle) <= eps, tnp.abs(middle - math.pi) <= eps
    half_sum, half_diff = tnp.arctan2(b, a), tnp.arctan2(d, c)
    locked = tnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    regular = at_zero | at_pi
    first, third = (0, 2) if extrinsic else (2, 0)
    angles = [None] * 3
    angles[first] = tnp.where(regular, 0.0, half_sum - half_diff)
    angles[third] = tnp.where(regular, 0.0, half_sum + half_diff)
    angles[0] = tnp.where(regular, locked, angles[0])
    angles[1] = middle
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - math.pi / 2
    out = tnp.stack(angles, axis=-1)
    return (out + math.pi) % (2 * math.pi) - math.pi


class Rotation:
    """Rotations in 3 dimensions, as ``scipy.spatial.transform.Rotation`` (JAX's subset):
    one (``quat`` of shape ``(4,)``) or a stack (``(n, 4)``), made by the ``from_*``
    constructors and read by the ``as_*`` methods; ``r * s`` applies ``s`` first.

    >>> Rotation.from_rotvec(np.array([0.0, 0.0, np.pi / 2])).as_euler("xyz")
    array([0.        , 0.        , 1.57079633])
    """

    def __init__(self, quat):
        self.quat = quat

    def __repr__(self):
        return f"Rotation({self.quat!r})"

    @classmethod
    def from_quat(cls, quat, *, scalar_first=False):
        """The rotations of quaternions ``(x, y, z, w)`` (``(w, x, y, z)`` with
        ``scalar_first``), normalized."""
        quat = _float(quat)
        if tnp.shape(quat)[-1] != 4 or quat.ndim > 2:
            raise ShapeError(f"expected quaternions of shape (4,) or (n, 4), got "
                             f"{tuple(quat.shape)}", op="Rotation.from_quat")
        if scalar_first:
            quat = tnp.roll(quat, -1, axis=-1)
        return cls(quat / _norm(quat)[..., None])

    @classmethod
    def from_matrix(cls, matrix):
        """The rotations of 3 x 3 rotation matrices (SciPy's branch-wise conversion)."""
        matrix = _float(matrix)
        if tuple(tnp.shape(matrix)[-2:]) != (3, 3) or matrix.ndim > 3:
            raise ShapeError(f"expected matrices of shape (3, 3) or (n, 3, 3), got "
                             f"{tuple(matrix.shape)}", op="Rotation.from_matrix")
        return cls(_matrix_to_quat(matrix))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """The rotations by ``|v|`` about ``v`` (radians, or degrees); a Taylor series of
        ``sin(t/2) / t`` near 0 keeps small vectors and their derivatives exact."""
        rotvec = _float(rotvec)
        if degrees:
            rotvec = tnp.deg2rad(rotvec)
        angle = _norm(rotvec)
        small = angle <= 1e-3
        safe = tnp.where(small, 1.0, angle)
        a2 = angle * angle
        scale = tnp.where(small, 0.5 - a2 / 48 + a2 * a2 / 3840, tnp.sin(safe / 2) / safe)
        return cls(tnp.concatenate([scale[..., None] * rotvec,
                                    tnp.cos(angle / 2)[..., None]], axis=-1))

    @classmethod
    def from_mrp(cls, mrp):
        """The rotations of modified Rodrigues parameters ``tan(angle / 4) axis``."""
        mrp = _float(mrp)
        plus_one = tnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
        return cls(tnp.concatenate([2 * mrp, 2 - plus_one], axis=-1) / plus_one)

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """The rotations by ``angles`` about the axes of ``seq`` in turn: lower case about
        the fixed axes (extrinsic), upper case about the rotating ones (intrinsic)."""
        axes, intrinsic = _sequence(seq, "Rotation.from_euler")
        angles = _float(angles)
        if degrees:
            angles = tnp.deg2rad(angles)
        if angles.ndim == 0 or (len(axes) > 1 and angles.ndim == 1
                                and tnp.shape(angles)[0] == len(axes)):
            angles = tnp.reshape(angles, (len(axes),))
        elif len(axes) == 1 and angles.ndim == 1:
            angles = angles[:, None]
        if tnp.shape(angles)[-1] != len(axes):
            raise ShapeError(f"expected {len(axes)} angles per rotation, got shape "
                             f"{tuple(angles.shape)}", op="Rotation.from_euler")
        quat = _elementary(axes[0], angles[..., 0])
        for n, axis in enumerate(axes[1:], 1):
            turn = _elementary(axis, angles[..., n])
            quat = _compose(quat, turn) if intrinsic else _compose(turn, quat)
        return cls(quat)

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation (``num`` of them)."""
        quat = np.zeros(4 if num is None else (num, 4), dtype)
        quat[..., 3] = 1
        return cls(quat)

    @classmethod
    def random(cls, random_key, num=None):
        """Rotations uniform on SO(3): normalized normal quaternions from ``random_key``
        (``tf.random``'s; JAX's own raises NotImplementedError)."""
        from ... import random
        return cls.from_quat(random.normal(random_key, (4,) if num is None else (num, 4)))

    @classmethod
    def concatenate(cls, rotations):
        """The rotations of ``rotations`` in one stack."""
        return cls(tnp.concatenate([tnp.atleast_2d(r.quat) for r in rotations]))

    def __getitem__(self, indexer):
        if self.single:
            raise ArgumentError("a single rotation is not subscriptable",
                                op="Rotation.__getitem__")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise ArgumentError("a single rotation has no len", op="Rotation.__len__")
        return tnp.shape(self.quat)[0]

    def __mul__(self, other):
        """The composition: ``other`` first, then ``self``."""
        return Rotation(_compose(self.quat, other.quat))

    @property
    def single(self):
        """Whether this is one rotation rather than a stack."""
        return tnp.ndim(self.quat) == 1

    def apply(self, vectors, inverse=False):
        """The vectors rotated (by the inverse rotations with ``inverse``)."""
        matrix = self.as_matrix()
        if inverse:
            matrix = tnp.swapaxes(matrix, -1, -2)
        return tnp.einsum("...ij,...j->...i", matrix, _float(vectors))

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions ``(x, y, z, w)`` (``w >= 0`` with ``canonical``; ``w`` first
        with ``scalar_first``)."""
        quat = _canonical(self.quat) if canonical else self.quat
        return tnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def as_matrix(self):
        """The 3 x 3 rotation matrices."""
        x, y, z, w = (self.quat[..., i] for i in range(4))
        x2, y2, z2, w2 = x * x, y * y, z * z, w * w
        xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
        rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
                [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
                [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
        return tnp.stack([tnp.stack(r, axis=-1) for r in rows], axis=-2)

    def as_rotvec(self, degrees=False):
        """The rotation vectors (angle times unit axis, angle in ``[0, pi]``)."""
        quat = tnp.where((self.quat[..., 3] < 0)[..., None], -self.quat, self.quat)
        angle = 2 * tnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
        small = angle <= 1e-3
        safe = tnp.where(small, 1.0, angle)
        a2 = angle * angle
        scale = tnp.where(small, 2 + a2 / 12 + 7 * a2 * a2 / 2880, safe / tnp.sin(safe / 2))
        rotvec = scale[..., None] * quat[..., :3]
        return tnp.rad2deg(rotvec) if degrees else rotvec

    def as_mrp(self):
        """The modified Rodrigues parameters (of the quaternion with ``w >= 0``)."""
        sign = tnp.where(self.quat[..., 3] < 0, -1.0, 1.0)[..., None]
        return sign * self.quat[..., :3] / (1 + sign * self.quat[..., 3:])

    def as_euler(self, seq, degrees=False):
        """The Euler angles about the axes of ``seq`` (three, as ``from_euler``'s), each in
        ``[-pi, pi)`` (the middle one in ``[0, pi]`` for symmetric sequences)."""
        axes, intrinsic = _sequence(seq, "Rotation.as_euler")
        if len(axes) != 3:
            raise ArgumentError(f"expected 3 axes, got {seq!r}", op="Rotation.as_euler")
        angles = _euler_from_quat(self.quat, axes, not intrinsic)
        return tnp.rad2deg(angles) if degrees else angles

    def inv(self):
        """The inverse rotations."""
        return Rotation(self.quat * np.array([-1.0, -1.0, -1.0, 1.0]))

    def magnitude(self):
        """The rotation angles, in ``[0, pi]``."""
        return 2 * tnp.arctan2(_norm(self.quat[..., :3]), tnp.abs(self.quat[..., 3]))

    def mean(self, weights=None):
        """The weighted mean rotation: the principal eigenvector of ``sum(w q q^T)``
        (Markley et al., J. Guid. Control Dyn. 30 (2007) 1193)."""
        quat = tnp.atleast_2d(self.quat)
        w = tnp.ones(tnp.shape(quat)[0], quat.dtype) if weights is None else _float(weights)
        if w.ndim != 1 or tnp.shape(w)[0] != tnp.shape(quat)[0]:
            raise ShapeError(f"expected one weight per rotation ({tnp.shape(quat)[0]}), got "
                             f"shape {tuple(w.shape)}", op="Rotation.mean")
        k = (w[None, :] * quat.T) @ quat
        return Rotation(tnp.linalg.eigh(k)[1][:, -1])


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing ``times``, as
    ``scipy.spatial.transform.Slerp``: made by ``Slerp.init(times, rotations)``, called
    with the times to interpolate at.

    >>> keys = Rotation.from_euler("z", np.array([0.0, 90.0]), degrees=True)
    >>> Slerp.init(np.array([0.0, 1.0]), keys)(0.5).as_euler("zyx", degrees=True)[0]
    np.float64(45.0)
    """
    times: object
    timedelta: object
    rotations: Rotation
    rotvecs: object

    @classmethod
    def init(cls, times, rotations):
        """The interpolator through ``rotations`` (at least 2) at ``times``."""
        if not isinstance(rotations, Rotation):
            raise ArgumentError("rotations must be a Rotation", op="Slerp.init")
        if rotations.single or len(rotations) < 2:
            raise ShapeError("rotations must be a stack of at least 2", op="Slerp.init")
        times = tnp.asarray(times).astype(rotations.quat.dtype)
        if times.ndim != 1 or tnp.shape(times)[0] != len(rotations):
            raise ShapeError(f"expected one time per rotation ({len(rotations)}), got shape "
                             f"{tuple(times.shape)}", op="Slerp.init")
        first = Rotation(rotations.quat[:-1])
        steps = (first.inv() * Rotation(rotations.quat[1:])).as_rotvec()
        return cls(times, tnp.diff(times), first, steps)

    def __call__(self, times):
        t = tnp.asarray(times).astype(self.times.dtype)
        if t.ndim > 1:
            raise ShapeError("times must be a scalar or a vector", op="Slerp")
        one = t.ndim == 0
        t = tnp.atleast_1d(t)
        index = tnp.maximum(tnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - tnp.take(self.times, index)) / tnp.take(self.timedelta, index)
        start = Rotation(tnp.take(self.rotations.quat, index, axis=0))
        step = Rotation.from_rotvec(tnp.take(self.rotvecs, index, axis=0) * alpha[:, None])
        out = start * step
        return out[0] if one else out


# a pytree of its quaternions (a class of its own, not a NamedTuple as JAX's: its
# __getitem__ and __len__ are the stack's, not a tuple's)
register_pytree_node(Rotation, lambda r: ((r.quat,), None), lambda _, c: Rotation(c[0]))


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
