"""tf_numba.scipy.cluster.vq against SciPy and JAX (x64) where installed; distances
differentiate by finite differences; jit and vmap."""
import numpy as np
import pytest
import scipy.cluster.vq

import tf_numba as tf
from tf_numba.errors import ShapeError
from tf_numba.scipy.cluster import vq

RNG = np.random.default_rng(0)
OBS, CODES = RNG.normal(size=(6, 3)), RNG.normal(size=(4, 3))


def test_codes_and_distances_match_scipy_and_jax():
    for obs, codes in ((OBS, CODES), (OBS[:, 0], CODES[:, 0]), (OBS.astype(int), CODES)):
        code, dist = vq.vq(obs, codes)
        want_code, want_dist = scipy.cluster.vq.vq(obs.astype(float), codes.astype(float))
        np.testing.assert_array_equal(code, want_code)
        np.testing.assert_allclose(dist, want_dist, rtol=1e-14)
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.cluster.vq as jvq
    for got, want in zip(vq.vq(OBS, CODES), jvq.vq(OBS, CODES)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_distances_differentiate_jit_and_vmap():
    tf.test_util.check_grads(lambda o, c: vq.vq(o, c)[1], (OBS, CODES), order=2)
    np.testing.assert_array_equal(tf.jit(vq.vq)(OBS, CODES)[0], vq.vq(OBS, CODES)[0])
    batched = tf.vmap(lambda o: vq.vq(o, CODES)[0])(np.stack([OBS, OBS[::-1]]))
    np.testing.assert_array_equal(batched[1], vq.vq(OBS, CODES)[0][::-1])
    with pytest.raises(ShapeError, match="same rank"):
        vq.vq(OBS, CODES[:, 0])
