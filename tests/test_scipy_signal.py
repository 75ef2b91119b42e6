"""tf_numba.scipy.signal: convolutions and correlations against scipy.signal in every mode
and method (N-D, complex, integer), their derivatives in both inputs against finite
differences, detrend, and jit equal to the interpreter."""
import numpy as np
import pytest
import scipy.signal as ss

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError
from tf_numba.scipy import signal

from ad_checks import check_grads

RNG = np.random.default_rng(0)
SHAPES = [((7,), (3,)), ((6,), (4,)), ((3,), (5,)), ((5, 6), (2, 3)), ((4, 5), (3, 2)),
          ((2, 3), (4, 5)), ((4, 3, 3), (2, 2, 3))]


@pytest.mark.parametrize("s1,s2", SHAPES)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolve_and_correlate_match_scipy(s1, s2, mode, method):
    a, b = RNG.standard_normal(s1), RNG.standard_normal(s2)
    for ours, theirs in ((signal.convolve, ss.convolve), (signal.correlate, ss.correlate)):
        try:
            want = theirs(a, b, mode=mode, method=method)
        except ValueError:
            with pytest.raises(ShapeError, match="valid"):
                ours(a, b, mode=mode, method=method)
            continue
        got = ours(a, b, mode=mode, method=method)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_complex_integer_and_float32_inputs_keep_scipys_dtype():
    a = RNG.standard_normal(6) + 1j * RNG.standard_normal(6)
    b = RNG.standard_normal(3) - 1j * RNG.standard_normal(3)
    for method in ("direct", "fft"):
        np.testing.assert_allclose(signal.correlate(a, b, method=method),
                                   ss.correlate(a, b, method=method), rtol=1e-12)
    ai, bi = np.arange(6, dtype=np.int32), np.array([1, -2, 3], np.int32)
    for method in ("direct", "fft"):
        got = signal.convolve(ai, bi, method=method)
        want = ss.convolve(ai, bi, method=method)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    f32 = signal.convolve(a.real.astype(np.float32), b.real.astype(np.float32))
    assert f32.dtype == np.float32


def test_auto_picks_the_fft_for_large_products():
    a, b = RNG.standard_normal(2000), RNG.standard_normal(50)
    np.testing.assert_allclose(signal.convolve(a, b), ss.convolve(a, b), rtol=1e-10,
                               atol=1e-12)
    program = str(tf.make_program(lambda x, y: signal.convolve(x, y))(a, b))
    assert "fft" in program
    assert "fft" not in str(tf.make_program(lambda x, y: signal.convolve(x, y))(a[:20], b[:3]))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_along_axes_broadcasts_the_others(mode):
    a, b = RNG.standard_normal((3, 8)), RNG.standard_normal((1, 4))
    np.testing.assert_allclose(signal.fftconvolve(a, b, mode, axes=1),
                               ss.fftconvolve(a, b, mode, axes=1), rtol=1e-12, atol=1e-13)
    c = RNG.standard_normal((5, 3))
    np.testing.assert_allclose(signal.fftconvolve(c, c[:2], mode, axes=[0]),
                               ss.fftconvolve(c, c[:2], mode, axes=[0]), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve2d_and_correlate2d(mode):
    a, b = RNG.standard_normal((6, 5)), RNG.standard_normal((3, 2))
    np.testing.assert_allclose(signal.convolve2d(a, b, mode), ss.convolve2d(a, b, mode),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(signal.correlate2d(a, b, mode), ss.correlate2d(a, b, mode),
                               rtol=1e-12, atol=1e-13)
    with pytest.raises(ShapeError, match="2-D"):
        signal.convolve2d(a[0], b[0])


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_convolution_derivatives_in_both_inputs(method):
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((2, 3))
    check_grads(lambda x, y: signal.convolve(x, y, "same", method), (a, b), order=2)
    check_grads(lambda x, y: signal.correlate(x, y, "valid", method), (a, b), order=1)


def test_numpy_convolve_shares_the_implementation_and_its_gradient():
    a, v = RNG.standard_normal(7), RNG.standard_normal(3)
    np.testing.assert_allclose(tnp.convolve(a, v, "same"), np.convolve(a, v, "same"),
                               rtol=1e-13)
    check_grads(lambda x, y: tnp.correlate(x, y, "full"), (a, v), order=1)


@pytest.mark.parametrize("kw", [{}, {"bp": [3, 7]}, {"type": "constant"}, {"axis": 0},
                                {"axis": 0, "bp": 2}])
def test_detrend_matches_scipy_and_is_differentiable(kw):
    x = RNG.standard_normal((5, 10))
    np.testing.assert_allclose(signal.detrend(x, **kw), ss.detrend(x, **kw), rtol=1e-12,
                               atol=1e-13)
    check_grads(lambda y: signal.detrend(y, **kw), (x,), order=1)


def test_convolve_under_jit_equals_eager():
    a, b = RNG.standard_normal(9), RNG.standard_normal(3)
    f = tf.jit(lambda x, y: signal.convolve(x, y, "same"), tiered=False)
    np.testing.assert_allclose(f(a, b), signal.convolve(a, b, "same"), rtol=1e-14)


# ---------------------------------------------------------------- spectral estimates

_RNG = np.random.default_rng(5)
SIGNALS = _RNG.normal(size=(3, 100)), _RNG.normal(size=(3, 100))


@pytest.mark.parametrize("kw", [{}, {"nperseg": 16}, {"nperseg": 16, "noverlap": 4, "nfft": 20,
                                                     "detrend": "linear"},
                                {"nperseg": 15, "scaling": "spectrum", "average": "median"},
                                {"nperseg": 16, "return_onesided": False, "fs": 3.0}])
def test_welch_and_csd_match_scipy(kw):
    x, y = SIGNALS
    for got, want in ((signal.welch(x, **kw), ss.welch(x, **kw)),
                      (signal.csd(x, y, **kw), ss.csd(x, y, **kw)),
                      (signal.welch(x.T, axis=0, **kw), ss.welch(x.T, axis=0, **kw))):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-15)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kw", [{"nperseg": 16}, {"nperseg": 16, "noverlap": 10,
                                                  "boundary": "even"},
                                {"nperseg": 15, "boundary": "odd", "padded": False},
                                {"nperseg": 16, "boundary": None},
                                {"nperseg": 16, "boundary": "constant", "detrend": "constant"}])
def test_stft_and_its_inverse_match_scipy(kw):
    x = SIGNALS[0]
    got, want = signal.stft(x, **kw), ss.stft(x, **kw)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
    inverse = {k: v for k, v in kw.items() if k in ("nperseg", "noverlap")}
    for g, w in zip(signal.istft(want[2], **inverse), ss.istft(want[2], **inverse)):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


def test_istft_axes_and_two_sided_input_match_scipy():
    x, y = SIGNALS
    z = ss.stft(x.T, nperseg=16, axis=0)[2]
    np.testing.assert_allclose(signal.istft(z, nperseg=16, freq_axis=0)[1],
                               ss.istft(z, nperseg=16, freq_axis=0)[1], atol=1e-14)
    z = ss.stft(x[0] + 1j * y[0], nperseg=16, return_onesided=False)[2]
    np.testing.assert_allclose(signal.istft(z, nperseg=16, input_onesided=False)[1],
                               ss.istft(z, nperseg=16, input_onesided=False)[1], atol=1e-14)


def test_spectral_estimates_differentiate_compile_and_batch():
    x, y = SIGNALS
    tf.test_util.check_grads(lambda v: signal.csd(v, y[0], nperseg=16)[1], (x[0],), order=1)
    tf.test_util.check_grads(lambda v: signal.istft(signal.stft(v, nperseg=16)[2],
                                                    nperseg=16)[1], (x[0],), order=1)
    np.testing.assert_allclose(tf.jit(lambda v: signal.welch(v, nperseg=16)[1])(x),
                               ss.welch(x, nperseg=16)[1], rtol=1e-12)
    np.testing.assert_allclose(tf.vmap(lambda v: signal.welch(v, nperseg=16)[1])(x),
                               ss.welch(x, nperseg=16)[1], rtol=1e-12)


def test_spectral_estimates_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.signal as jss
    x, y = SIGNALS
    np.testing.assert_allclose(signal.welch(x, nperseg=16)[1], jss.welch(x, nperseg=16)[1],
                               rtol=1e-12)
    np.testing.assert_allclose(signal.csd(x, y, nperseg=16)[1], jss.csd(x, y, nperseg=16)[1],
                               rtol=1e-12, atol=1e-15)
    z = signal.stft(x, nperseg=16)[2]
    np.testing.assert_allclose(z, jss.stft(x, nperseg=16)[2], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(signal.istft(z, nperseg=16)[1], jss.istft(z, nperseg=16)[1],
                               atol=1e-13)


def test_spectral_estimates_keep_float32():
    x = SIGNALS[0].astype(np.float32)
    for got, want in ((signal.welch(x, nperseg=16)[1], ss.welch(x, nperseg=16)[1]),
                      (signal.stft(x, nperseg=16)[2], ss.stft(x, nperseg=16)[2]),
                      (signal.istft(ss.stft(x, nperseg=16)[2], nperseg=16)[1],
                       ss.istft(ss.stft(x, nperseg=16)[2], nperseg=16)[1])):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
