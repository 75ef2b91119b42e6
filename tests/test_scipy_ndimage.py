"""tf_numba.scipy.ndimage.map_coordinates against SciPy (``prefilter=False``; JAX's 'wrap'
and 'constant' are SciPy's 'grid-wrap' and 'grid-constant') and JAX (x64) where installed;
derivatives by finite differences, jit and vmap."""
import importlib.util

import numpy as np
import pytest
import scipy.ndimage

import tf_numba as tf
from tf_numba.errors import UnsupportedError
from tf_numba.scipy import ndimage

RNG = np.random.default_rng(0)
IMAGE = RNG.normal(size=(5, 6))
POINTS = [RNG.uniform(-2, 7, size=(4, 3)), RNG.uniform(-2, 8, size=(4, 3))]
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap"}


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
def test_matches_scipy_and_jax(order, mode):
    ours = ndimage.map_coordinates(IMAGE, POINTS, order, mode, cval=1.5)
    want = scipy.ndimage.map_coordinates(IMAGE, np.stack(POINTS), order=order,
                                         mode=SCIPY_MODE.get(mode, mode), cval=1.5,
                                         prefilter=False)
    np.testing.assert_allclose(ours, want, rtol=1e-13, atol=1e-13)
    if importlib.util.find_spec("jax"):
        import jax
        jax.config.update("jax_enable_x64", True)
        from jax.scipy import ndimage as jnd
        np.testing.assert_allclose(ours, jnd.map_coordinates(IMAGE, POINTS, order, mode, 1.5),
                                   rtol=1e-13, atol=1e-13)


def test_integers_round_and_derivatives_jit_vmap():
    counts = np.arange(10).reshape(2, 5)
    got = ndimage.map_coordinates(counts, [np.array([0.5, 1.0]), np.array([1.5, 2.5])], 1)
    assert got.dtype == counts.dtype and list(got) == [4, 8]    # 3.5 and 7.5 away from zero
    inside = [np.array([0.3, 2.6, 3.9]), np.array([1.2, 4.4, 0.1])]
    tf.test_util.check_grads(lambda im, r: ndimage.map_coordinates(im, [r, inside[1]], 1),
                             (IMAGE, inside[0]), order=1)
    f = tf.jit(lambda c0: ndimage.map_coordinates(IMAGE, [c0, inside[1]], 1, "reflect"))
    np.testing.assert_allclose(f(inside[0]),
                               ndimage.map_coordinates(IMAGE, inside, 1, "reflect"))
    batched = tf.vmap(lambda im: ndimage.map_coordinates(im, inside, 0))(np.stack([IMAGE, -IMAGE]))
    np.testing.assert_array_equal(batched[1], -ndimage.map_coordinates(IMAGE, inside, 0))


def test_spline_orders_above_one_are_unsupported():
    with pytest.raises(UnsupportedError, match="order 3"):
        ndimage.map_coordinates(IMAGE, POINTS, 3)
