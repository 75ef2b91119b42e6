"""tf_numba.scipy.fft: the DCTs of every type and normalization against SciPy's, type 2
against JAX's (x64) where JAX is installed; derivatives by finite differences, jit, vmap."""
import importlib.util

import numpy as np
import pytest
import scipy.fft

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ArgumentError
from tf_numba.scipy import fft

X = np.random.default_rng(0).normal(size=(3, 5, 4))


@pytest.mark.parametrize("kind", [1, 2, 3, 4])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_one_axis_transforms_match_scipy(kind, norm):
    for name in ("dct", "idct"):
        for n in (None, 3, 7):
            for axis in (0, 1, -1):
                np.testing.assert_allclose(
                    getattr(fft, name)(X, kind, n, axis, norm),
                    getattr(scipy.fft, name)(X, kind, n, axis, norm), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fft.dctn(X, kind, norm=norm), scipy.fft.dctn(X, kind, norm=norm),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(fft.idctn(X, kind, (4, 6), norm=norm),
                               scipy.fft.idctn(X, kind, (4, 6), norm=norm), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(fft.idct(fft.dct(X, kind, norm=norm), kind, norm=norm), X,
                               atol=1e-13)


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_type_2_matches_jax():
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.fft as jfft
    for norm in (None, "ortho"):
        np.testing.assert_allclose(fft.dct(X, n=6, axis=1, norm=norm),
                                   jfft.dct(X, n=6, axis=1, norm=norm), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(fft.idctn(X, axes=(0, 2), norm=norm),
                                   jfft.idctn(X, axes=(0, 2), norm=norm), rtol=1e-12,
                                   atol=1e-13)


def test_float32_complex_derivatives_jit_and_vmap():
    assert fft.dct(X.astype(np.float32)).dtype == np.float32
    z = X + 1j * X[::-1]
    np.testing.assert_allclose(fft.dct(z, 3), scipy.fft.dct(z, 3), rtol=1e-12, atol=1e-13)
    tf.test_util.check_grads(lambda x: fft.dctn(x, 1, norm="ortho") ** 2, (X,), order=2)
    np.testing.assert_allclose(tf.jit(lambda x: fft.idct(x, 4))(X), scipy.fft.idct(X, 4),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tf.vmap(lambda x: fft.dct(x, axis=0))(X),
                               np.stack([scipy.fft.dct(x, axis=0) for x in X]), rtol=1e-12,
                               atol=1e-13)
    # the ortho transforms keep the sum of squares
    np.testing.assert_allclose(tnp.sum(fft.dctn(X, 2, norm="ortho") ** 2), np.sum(X ** 2))


def test_bad_type_and_norm_are_errors():
    with pytest.raises(ArgumentError, match="type must be"):
        fft.dct(X, 5)
    with pytest.raises(ArgumentError, match="norm must be"):
        fft.idct(X, norm="sideways")
