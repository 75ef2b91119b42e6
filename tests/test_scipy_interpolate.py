"""tf_numba.scipy.interpolate.RegularGridInterpolator against SciPy and JAX (x64) where
installed; derivatives by finite differences; a pytree through jit and vmap."""
import importlib.util

import numpy as np
import pytest
import scipy.interpolate

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ArgumentError, UnsupportedError
from tf_numba.scipy.interpolate import RegularGridInterpolator

RNG = np.random.default_rng(0)
GRID = (np.sort(RNG.uniform(0, 1, 5)), np.sort(RNG.uniform(0, 2, 4)))
VALUES = RNG.normal(size=(5, 4, 2))
QUERY = np.stack([RNG.uniform(-0.1, 1.1, 9), RNG.uniform(-0.1, 2.1, 9)], -1)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 0.5])
def test_matches_scipy_and_jax(method, fill_value):
    ours = RegularGridInterpolator(GRID, VALUES, method, fill_value=fill_value)(QUERY)
    want = scipy.interpolate.RegularGridInterpolator(GRID, VALUES, method, bounds_error=False,
                                                     fill_value=fill_value)(QUERY)
    np.testing.assert_allclose(ours, want, rtol=1e-13, atol=1e-14)
    if importlib.util.find_spec("jax"):
        import jax
        jax.config.update("jax_enable_x64", True)
        from jax.scipy.interpolate import RegularGridInterpolator as J
        np.testing.assert_allclose(ours, J(GRID, VALUES, method, fill_value=fill_value)(QUERY),
                                   rtol=1e-13, atol=1e-14)


def test_derivatives_jit_vmap_and_tuple_points():
    # inside cells, away from the grid lines (where the derivative jumps)
    inside = np.array([[0.3 * GRID[0][1] + 0.7 * GRID[0][2], 0.6 * GRID[1][0] + 0.4 * GRID[1][1]],
                       [0.5 * GRID[0][3] + 0.5 * GRID[0][4], 0.2 * GRID[1][2] + 0.8 * GRID[1][3]]])

    def f(values, points):
        return RegularGridInterpolator(GRID, values)(points)
    tf.test_util.check_grads(f, (VALUES, inside), order=1)
    interp = RegularGridInterpolator(GRID, VALUES)
    np.testing.assert_allclose(tf.jit(lambda g, x: g(x))(interp, inside), interp(inside))
    batched = tf.vmap(lambda v: RegularGridInterpolator(GRID, v)(inside))(np.stack([VALUES,
                                                                              2 * VALUES]))
    np.testing.assert_allclose(batched[1], 2 * interp(inside))
    np.testing.assert_allclose(interp((inside[:, 0], inside[:, 1])), interp(inside))
    assert tnp.shape(interp(inside.reshape(2, 1, 2))) == (2, 1, 2)


def test_unknown_method_and_bounds_error():
    with pytest.raises(ArgumentError, match="method"):
        RegularGridInterpolator(GRID, VALUES, "cubic")
    with pytest.raises(UnsupportedError, match="bounds_error"):
        RegularGridInterpolator(GRID, VALUES, bounds_error=True)
