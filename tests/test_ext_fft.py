"""FFT (family tf_numba.fft.v1): tnp.fft against numpy.fft for every function, n/s, axes and
norm; dtypes; derivatives to second order with JAX's complex convention; jit."""
import warnings

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import TfNumbaError

from ad_checks import check_grads

NORMS = [None, "backward", "ortho", "forward"]


def rnd(*shape, seed=0):
    return np.random.default_rng(seed + 17 * len(shape)).standard_normal(shape)


def crnd(*shape, seed=0):
    return rnd(*shape, seed=seed) + 1j * rnd(*shape, seed=seed + 40)


X, Z = rnd(3, 8), crnd(3, 8)
X3, Z3 = rnd(2, 4, 6), crnd(2, 4, 6)

# (function name, input, keyword arguments)
CALLS = [
    ("fft", Z, {}), ("fft", X, {"n": 5}), ("fft", Z, {"n": 11, "axis": 0}),
    ("ifft", Z, {}), ("ifft", X, {"n": 12, "axis": -1}),
    ("rfft", X, {}), ("rfft", X, {"n": 7}), ("rfft", X, {"n": 4, "axis": 0}),
    ("irfft", Z, {}), ("irfft", Z, {"n": 7}), ("irfft", Z, {"n": 20}), ("irfft", Z, {"axis": 0}),
    ("fft2", Z3, {}), ("ifft2", Z3, {"s": (3, 5)}), ("rfft2", X3, {}), ("irfft2", Z3, {}),
    ("fftn", Z3, {}), ("ifftn", Z3, {"axes": (0, 2)}), ("fftn", X3, {"s": (3, 5), "axes": (2, 0)}),
    ("rfftn", X3, {"s": (3, 4, 5)}), ("rfftn", X3, {"axes": (1, 0)}),
    ("irfftn", Z3, {"s": (2, 4, 9)}), ("irfftn", Z3, {"axes": (0, 1)}),
    ("irfft2", Z3, {"s": (5, 5), "axes": (0, 2)}),
]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name,x,kwargs", CALLS)
def test_fft_matches_numpy(name, x, kwargs, norm):
    ours = getattr(tnp.fft, name)(x, norm=norm, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # NumPy's s without axes
        theirs = getattr(np.fft, name)(x, norm=norm, **kwargs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_single_precision_stays_single():
    z64, x32 = Z.astype(np.complex64), X.astype(np.float32)
    assert tnp.fft.fft(z64).dtype == np.complex64
    assert tnp.fft.fft(x32).dtype == np.complex64
    assert tnp.fft.rfft(x32).dtype == np.complex64
    assert tnp.fft.irfft(z64).dtype == np.float32
    assert tnp.fft.fft(np.arange(4)).dtype == np.complex128
    np.testing.assert_allclose(tnp.fft.irfftn(z64), np.fft.irfftn(z64), rtol=1e-5, atol=1e-5)


def test_frequencies_and_shifts():
    np.testing.assert_allclose(tnp.fft.fftfreq(7, 0.3), np.fft.fftfreq(7, 0.3))
    np.testing.assert_allclose(tnp.fft.rfftfreq(8, 2.0), np.fft.rfftfreq(8, 2.0))
    for axes in (None, 1, (0,), (0, 1)):
        np.testing.assert_array_equal(tnp.fft.fftshift(X, axes), np.fft.fftshift(X, axes))
        np.testing.assert_array_equal(tnp.fft.ifftshift(X, axes), np.fft.ifftshift(X, axes))
    np.testing.assert_allclose(tf.grad(lambda d: tnp.sum(tnp.fft.fftfreq(4, d)))(2.0),
                               -np.sum(np.fft.fftfreq(4)) / 4.0)


def test_bad_arguments_are_errors():
    with pytest.raises(ValueError, match="norm"):
        tnp.fft.fft(Z, norm="sideways")
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        tnp.fft.fft(Z, n=0)
    with pytest.raises(TypeError, match="real input"):
        tnp.fft.rfft(Z)


@pytest.mark.parametrize("call", [lambda: tnp.fft.fft(Z, norm="sideways"),
                                  lambda: tnp.fft.fft(Z, n=0), lambda: tnp.fft.rfft(Z),
                                  lambda: tnp.fft.fftn(Z3, s=(2, 2), axes=(0,)),
                                  lambda: tnp.fft.fftn(Z, axes=())])
def test_bad_arguments_are_tf_numba_errors(call):
    # found by the fuzzer: rfft of a complex array raised a bare TypeError
    with pytest.raises(TfNumbaError):
        call()


GRAD_CASES = [
    ("fft", lambda z, norm: tnp.fft.fft(z, norm=norm), (Z,)),
    ("fft_of_real_cropped", lambda x, norm: tnp.fft.fft(x, n=5, norm=norm), (X,)),
    ("ifft_padded_axis0", lambda z, norm: tnp.fft.ifft(z, n=5, axis=0, norm=norm), (Z,)),
    ("rfft_even", lambda x, norm: tnp.fft.rfft(x, norm=norm), (X,)),
    ("rfft_odd", lambda x, norm: tnp.fft.rfft(x, n=7, norm=norm), (X,)),
    ("irfft_even", lambda z, norm: tnp.fft.irfft(z, norm=norm), (Z,)),
    ("irfft_odd", lambda z, norm: tnp.fft.irfft(z, n=7, norm=norm), (Z,)),
    ("irfft_axis0", lambda z, norm: tnp.fft.irfft(z, axis=0, norm=norm), (Z,)),
    ("fft2", lambda z, norm: tnp.fft.fft2(z, norm=norm), (Z3,)),
    ("ifftn", lambda z, norm: tnp.fft.ifftn(z, s=(3, 5), axes=(2, 0), norm=norm), (Z3,)),
    ("rfftn", lambda x, norm: tnp.fft.rfftn(x, norm=norm), (X3,)),
    ("rfft2_axes", lambda x, norm: tnp.fft.rfft2(x, axes=(2, 0), norm=norm), (X3,)),
    ("irfftn", lambda z, norm: tnp.fft.irfftn(z, s=(2, 4, 9), norm=norm), (Z3,)),
    ("irfft2_axes", lambda z, norm: tnp.fft.irfft2(z, axes=(0, 1), norm=norm), (Z3,)),
]


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
@pytest.mark.parametrize("name,fn,args", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_fft_derivatives_to_second_order(name, fn, args, norm):
    check_grads(lambda x: fn(x, norm), args, order=2)


def test_nonlinear_spectral_losses():
    x = rnd(16)
    check_grads(lambda x: tnp.abs(tnp.fft.rfft(tnp.sin(x))) ** 2, (x,), order=2)
    check_grads(lambda x: tnp.fft.irfft(tnp.fft.rfft(x) * tnp.exp(1j * tnp.arange(9) / 3.0)),
                (x,), order=2)
    z = crnd(4, 6)
    check_grads(lambda z: tnp.fft.fftshift(tnp.angle(tnp.fft.fft2(z * tnp.conj(z) + z))),
                (z,), order=2)


def test_complex_gradient_convention_is_jax():
    # for real f(z) the gradient is df/dx - i df/dy (a transpose, not an adjoint)
    z = crnd(8)
    w = rnd(8, seed=3)

    def f(z):
        return tnp.sum(w * tnp.real(tnp.fft.fft(z)) ** 2)

    g = tf.grad(f)(z)
    h = 1e-6
    fd = np.empty(8, complex)
    for k in range(8):
        e = np.zeros(8)
        e[k] = h
        dfdx = (f(z + e) - f(z - e)) / (2 * h)
        dfdy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * h)
        fd[k] = dfdx - 1j * dfdy
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_complex_elementwise_math_and_promotion_in_tnp():
    z = crnd(5)
    z64 = z.astype(np.complex64)
    for name in ("real", "imag", "conj", "abs", "angle", "exp", "log", "sqrt", "sin", "tanh",
                 "square", "reciprocal", "sign"):
        np.testing.assert_allclose(getattr(tnp, name)(z), getattr(np, name)(z), rtol=1e-12)
        assert getattr(tnp, name)(z64).dtype == getattr(np, name)(z64).dtype, name
    assert (tnp.add(z64, 1.0)).dtype == np.complex64
    assert (tnp.multiply(z64, np.float64(2.0))).dtype == np.complex128
    assert (tnp.add(np.float32(1.0), z64)).dtype == np.complex64


def test_fft_jit_matches_eager():
    def f(x, z):
        spectrum = tnp.fft.rfft(x, axis=0) * tnp.fft.fft(z, n=3, axis=0, norm="ortho")
        back = tnp.fft.irfft(spectrum, n=4, axis=0)
        return tnp.sum(back ** 2) + tnp.sum(tnp.abs(tnp.fft.fftshift(tnp.fft.ifft2(z))))

    args = (rnd(4, 3), crnd(4, 3, seed=1))
    np.testing.assert_allclose(tf.jit(f, tiered=False)(*args), f(*args), rtol=1e-12)
    grad_f = tf.grad(f, argnums=(0, 1))
    for g_jit, g in zip(tf.jit(grad_f, tiered=False)(*args), grad_f(*args)):
        np.testing.assert_allclose(g_jit, g, rtol=1e-10, atol=1e-12)
