"""tf_numba.scipy.spatial.transform: Rotation and Slerp against SciPy's and JAX's (x64)
where installed; derivatives by finite differences; rotations as pytrees through jit and
vmap."""
import importlib.util

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as SciRotation
from scipy.spatial.transform import Slerp as SciSlerp

import tf_numba as tf
from tf_numba.errors import ArgumentError
from tf_numba.scipy.spatial.transform import Rotation, Slerp

RNG = np.random.default_rng(0)
QUATS = RNG.normal(size=(6, 4))
VECTORS = RNG.normal(size=(6, 3))
SEQUENCES = ["xyz", "ZXZ", "zyx", "XYZ", "xzx", "YXY", "yzy", "ZYX"]


def test_conversions_match_scipy():
    ours, theirs = Rotation.from_quat(QUATS), SciRotation.from_quat(QUATS)
    for name in ("as_matrix", "as_rotvec", "as_mrp", "magnitude"):
        np.testing.assert_allclose(getattr(ours, name)(), getattr(theirs, name)(), atol=1e-15)
    np.testing.assert_allclose(ours.as_quat(canonical=True, scalar_first=True),
                               theirs.as_quat(canonical=True, scalar_first=True), atol=1e-16)
    for seq in SEQUENCES:
        np.testing.assert_allclose(ours.as_euler(seq), theirs.as_euler(seq), atol=1e-14)
        angles = theirs.as_euler(seq, degrees=True)
        np.testing.assert_allclose(Rotation.from_euler(seq, angles, degrees=True).as_matrix(),
                                   theirs.as_matrix(), atol=1e-14)
    m = theirs.as_matrix()
    np.testing.assert_allclose(Rotation.from_matrix(m).as_quat(),
                               SciRotation.from_matrix(m).as_quat(), atol=1e-15)
    for name in ("from_rotvec", "from_mrp"):
        np.testing.assert_allclose(getattr(Rotation, name)(VECTORS).as_quat(),
                                   getattr(SciRotation, name)(VECTORS).as_quat(), atol=1e-15)
    small = VECTORS * 1e-5         # the series branches
    np.testing.assert_allclose(Rotation.from_rotvec(small).as_rotvec(), small, rtol=1e-12)


def test_gimbal_lock_sets_the_third_angle_to_zero_as_scipy():
    locked = SciRotation.from_euler("xyz", [[0.3, np.pi / 2, 0.2], [0.1, -np.pi / 2, 0.4]])
    with pytest.warns(UserWarning):
        want = locked.as_euler("xyz")
    np.testing.assert_allclose(Rotation.from_quat(locked.as_quat()).as_euler("xyz"), want,
                               atol=1e-7)


def test_composition_application_mean_and_slerp_match_scipy():
    ours, theirs = Rotation.from_quat(QUATS), SciRotation.from_quat(QUATS)
    np.testing.assert_allclose((ours * ours[::-1]).as_matrix(),
                               (theirs * theirs[::-1]).as_matrix(), atol=1e-15)
    for inverse in (False, True):
        np.testing.assert_allclose(ours.apply(VECTORS, inverse), theirs.apply(VECTORS, inverse),
                                   atol=1e-15)
    np.testing.assert_allclose(ours.inv().as_matrix(), theirs.inv().as_matrix(), atol=1e-16)
    weights = np.arange(1.0, 7.0)
    np.testing.assert_allclose(ours.mean(weights).as_matrix(),
                               theirs.mean(weights).as_matrix(), atol=1e-14)
    times = np.array([0.0, 1.0, 2.5, 3.0, 4.0, 6.0])
    at = np.array([0.0, 0.3, 1.7, 4.0, 6.0])
    np.testing.assert_allclose(Slerp.init(times, ours)(at).as_matrix(),
                               SciSlerp(times, theirs)(at).as_matrix(), atol=1e-14)
    assert Slerp.init(times, ours)(2.0).single
    assert len(Rotation.concatenate([ours, ours[0]])) == 7
    np.testing.assert_array_equal(Rotation.identity(2).as_matrix(), [np.eye(3)] * 2)


def test_derivatives_and_pytrees():
    tf.test_util.check_grads(lambda a: Rotation.from_euler("xyz", a).as_matrix(),
                             (VECTORS[0],), order=2)
    tf.test_util.check_grads(lambda q: Rotation.from_quat(q).as_euler("ZXZ"), (QUATS[:2],),
                             order=1)
    tf.test_util.check_grads(lambda v: Rotation.from_rotvec(v).apply(VECTORS[1]), (VECTORS[0],),
                             order=2)
    slerp = Slerp.init(np.array([0.0, 1.0, 2.0]), Rotation.from_quat(QUATS[:3]))
    tf.test_util.check_grads(lambda t: slerp(t).as_quat(), (np.array([0.3, 1.6]),), order=1)
    rotations = Rotation.from_quat(QUATS)
    np.testing.assert_allclose(tf.jit(lambda r, v: r.apply(v))(rotations, VECTORS),
                               rotations.apply(VECTORS), atol=1e-15)
    np.testing.assert_allclose(tf.vmap(lambda q: Rotation.from_quat(q).as_rotvec())(QUATS),
                               rotations.as_rotvec(), atol=1e-15)
    with pytest.raises(ArgumentError, match="not subscriptable"):
        rotations[0][0]
    with pytest.raises(ArgumentError, match="consecutive axes"):
        Rotation.from_euler("xxy", VECTORS[0])


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_matches_jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.spatial.transform import Rotation as JaxRotation
    from jax.scipy.spatial.transform import Slerp as JaxSlerp
    ours, theirs = Rotation.from_quat(QUATS), JaxRotation.from_quat(QUATS)
    for seq in SEQUENCES:
        np.testing.assert_allclose(ours.as_euler(seq), theirs.as_euler(seq), atol=1e-14)
    np.testing.assert_allclose(ours.as_rotvec(), theirs.as_rotvec(), atol=1e-15)
    times = np.arange(6.0)
    np.testing.assert_allclose(Slerp.init(times, ours)(np.array([0.5, 4.2])).as_quat(),
                               JaxSlerp.init(times, theirs)(np.array([0.5, 4.2])).as_quat(),
                               atol=1e-14)
    # (JAX's Rotation.random raises NotImplementedError: ours normalizes tf.random's
    # normals, which are JAX's)
    normals = np.asarray(jax.random.normal(jax.random.PRNGKey(3), (3, 4)))
    np.testing.assert_allclose(Rotation.random(tf.random.PRNGKey(3), 3).as_quat(),
                               normals / np.linalg.norm(normals, axis=-1, keepdims=True),
                               atol=1e-14)
