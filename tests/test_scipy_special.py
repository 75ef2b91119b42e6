"""tf_numba.scipy.special: SciPy's values (float32 and float64) at ordinary and extreme
inputs, derivatives against closed forms and finite differences to second order, the
missing derivative of polygamma in its order, and jit equal to the interpreter."""
import numpy as np
import pytest
import scipy.special as sps

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import DTypeError, MissingRuleError
from tf_numba.scipy import special

from ad_checks import check_grads

SQRT_PI = np.sqrt(np.pi)


def _tiny(dtype):
    return np.finfo(dtype).smallest_subnormal


def _points(dtype, values):
    tiny = _tiny(dtype)
    return np.array([v(tiny) if callable(v) else v for v in values], dtype)


REAL_LINE = [-1e3, -30, -3, -0.5, lambda t: -3 * t, -0.0, 0.0, lambda t: t, 0.5, 3, 30, 1e3,
             np.inf, -np.inf, np.nan]
GAMMA_LINE = [-1e3 + 0.5, -2.5, -2.0, -1.0, -0.5, lambda t: -t, 0.0, lambda t: t, 1e-30, 0.5,
              1.0, 2.0, 3.7, 30.5, 1e3, 1e30, np.inf, np.nan]
UNIT = [-1.5, -1.0, -0.999999, -0.5, lambda t: -t, 0.0, lambda t: t, 0.3, 0.9999, 1.0, 1.5,
        np.nan]
PROBABILITY = [-0.1, 0.0, lambda t: t, 1e-30, 1e-10, 0.025, 0.3, 0.31, 0.5, 0.64, 0.65, 0.66,
               0.975, 0.9999999, 1.0, 1.1, np.nan]
NORMAL_LINE = [-1e3, -40, -5, -0.8, -0.5, lambda t: -t, 0.0, 0.5, 0.8, 5, 40, 1e3, np.inf,
               -np.inf, np.nan]

# name: (tf_numba function, SciPy function, points)
UNARY = {
    "erf": (special.erf, sps.erf, REAL_LINE),
    "erfc": (special.erfc, sps.erfc, REAL_LINE),
    "erfcx": (special.erfcx, sps.erfcx, REAL_LINE),
    "erfinv": (special.erfinv, sps.erfinv, UNIT),
    "expit": (special.expit, sps.expit, REAL_LINE),
    "logit": (special.logit, sps.logit, PROBABILITY),
    "gammaln": (special.gammaln, sps.gammaln, GAMMA_LINE),
    "digamma": (special.digamma, sps.digamma, GAMMA_LINE),
    "ndtr": (special.ndtr, sps.ndtr, NORMAL_LINE),
    "log_ndtr": (special.log_ndtr, sps.log_ndtr, NORMAL_LINE),
    "ndtri": (special.ndtri, sps.ndtri, PROBABILITY),
}
# SciPy's own impl: the same bits. Composites of other primitives: a few ulps.
COMPOSITE = {"logit", "ndtr"}


def _close(got, want, dtype, ulps):
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(got, want, rtol=ulps * eps, atol=ulps * _tiny(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_scipy(name, dtype):
    fn, ref, points = UNARY[name]
    x = _points(dtype, points)
    with np.errstate(all="ignore"):
        got, want = fn(x), ref(x)
    assert got.dtype == want.dtype == dtype and got.shape == x.shape
    if name in COMPOSITE:
        _close(got, want, dtype, 4)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_xlogy_xlog1py_polygamma_values_match_scipy(dtype):
    x = np.array([0.0, 0.0, 0.0, 0.0, -0.0, 2.0, -3.0, 1e-30, 1.5, np.nan, 0.0], dtype)
    y = np.array([0.0, np.nan, np.inf, -1.0, 3.0, 0.0, 5.0, 1e30, -0.5, 1.0, -2.0], dtype)
    for fn, ref in ((special.xlogy, sps.xlogy), (special.xlog1py, sps.xlog1py)):
        with np.errstate(all="ignore"):
            got, want = fn(x, y), ref(x, y)
        assert got.dtype == want.dtype == dtype
        np.testing.assert_array_equal(got, want)
    z = np.array([-2.5, -0.5, 0.25, 1.0, 3.0, 30.0], dtype)
    for n in (0, 1, 2, 3):
        got = special.polygamma(n, z)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, sps.polygamma(n, z.astype(np.float64)),
                                   rtol=4 * np.finfo(dtype).eps)
    np.testing.assert_allclose(special.polygamma(np.array([0, 1, 2]), 2.0),
                               sps.polygamma([0, 1, 2], 2.0), rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_log_softmax_logsumexp_match_scipy(dtype):
    x = (np.random.default_rng(0).normal(0, 300, (3, 4))).astype(dtype)
    rtol = 16 * np.finfo(dtype).eps
    for axis in (None, 0, 1):
        np.testing.assert_allclose(special.softmax(x, axis), sps.softmax(x, axis), rtol=rtol,
                                   atol=1e-30)
        np.testing.assert_allclose(special.log_softmax(x, axis), sps.log_softmax(x, axis),
                                   rtol=rtol)
        np.testing.assert_allclose(special.logsumexp(x, axis), sps.logsumexp(x, axis),
                                   rtol=rtol)
    b = np.array([1.0, -2.0, 0.0, 0.5], dtype)
    got = special.logsumexp(x, axis=1, b=b, return_sign=True)
    want = sps.logsumexp(x, axis=1, b=b, return_sign=True)
    np.testing.assert_allclose(got[0], want[0], rtol=rtol)
    np.testing.assert_array_equal(got[1], want[1])


def test_integers_become_float64_python_scalars_give_numpy_scalars():
    assert special.gammaln(np.array([3, 4])).dtype == np.float64
    assert special.xlogy(2, 3) == sps.xlogy(2, 3)
    assert type(special.erf(0.5)) is np.float64
    assert special.xlogy(np.float32(2), 3.0).dtype == np.float32   # the scalar is weak
    with pytest.raises(DTypeError, match="real"):
        special.erf(np.array([1j]))


# ---------------------------------------------------------------- derivatives

def _grad(fn):
    return tf.grad(lambda v: tnp.sum(fn(v)))


def test_gamma_family_derivatives_chain_into_polygamma():
    x = np.array([-2.5, -0.5, 1e-8, 0.3, 1.0, 7.5, 1e3])
    np.testing.assert_allclose(_grad(special.gammaln)(x), sps.digamma(x), rtol=1e-14)
    np.testing.assert_allclose(_grad(special.digamma)(x), sps.polygamma(1, x), rtol=1e-14)
    np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(_grad(special.digamma)(v)))(x),
                               sps.polygamma(2, x), rtol=1e-14)
    third = tf.grad(lambda v: tnp.sum(tf.grad(lambda u: tnp.sum(_grad(special.gammaln)(u)))(v)))
    np.testing.assert_allclose(third(x), sps.polygamma(2, x), rtol=1e-14)
    np.testing.assert_allclose(_grad(lambda v: special.polygamma(3, v))(x),
                               sps.polygamma(4, x), rtol=1e-14)


def test_closed_form_derivatives_in_the_tails():
    p = np.array([1e-300, 1e-10, 0.3, 0.5, 0.999999])
    q = sps.ndtri(p)
    np.testing.assert_allclose(_grad(special.ndtri)(p),
                               np.sqrt(2 * np.pi) * np.exp(q * q / 2), rtol=1e-13)
    u = np.array([-0.999999, -0.3, 0.0, 0.5, 0.9999999999])
    np.testing.assert_allclose(_grad(special.erfinv)(u),
                               SQRT_PI / 2 * np.exp(sps.erfinv(u) ** 2), rtol=1e-13)
    np.testing.assert_allclose(_grad(special.logit)(p[1:]), 1 / (p[1:] * (1 - p[1:])),
                               rtol=1e-13)
    x = np.array([-1e3, -40.0, -5.0, 0.0, 5.0, 40.0])
    np.testing.assert_allclose(_grad(special.ndtr)(x),
                               np.exp(-x * x / 2) / np.sqrt(2 * np.pi), rtol=1e-13)
    np.testing.assert_allclose(_grad(special.erfcx)(x),
                               2 * x * sps.erfcx(x) - 2 / SQRT_PI, rtol=1e-13, atol=1e-16)
    # d log_ndtr = pdf / cdf; ~ -x far left (no cancellation between -x**2/2 and log_ndtr)
    mills = np.sqrt(2 / np.pi) / sps.erfcx(-x / np.sqrt(2))
    np.testing.assert_allclose(_grad(special.log_ndtr)(x), mills, rtol=1e-14)
    for dtype in (np.float32, np.float64):
        got = _grad(special.log_ndtr)(x.astype(dtype))
        assert got.dtype == dtype
        # erfcx(-x/sqrt 2) amplifies a rounding of its argument by ~x**2
        np.testing.assert_allclose(got, mills, rtol=64 * np.finfo(dtype).eps)


def test_xlogy_derivatives_at_x_zero():
    x, y = np.array([0.0, 0.0, 2.0]), np.array([3.0, 0.5, 4.0])
    gx, gy = tf.grad(lambda a, b: tnp.sum(special.xlogy(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.log(y), rtol=1e-15)
    np.testing.assert_allclose(gy, x / y, rtol=1e-15)
    gx, gy = tf.grad(lambda a, b: tnp.sum(special.xlog1py(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.log1p(y), rtol=1e-15)
    np.testing.assert_allclose(gy, x / (1 + y), rtol=1e-15)


DOMAINS = {
    "erf": np.array([-2.0, -0.3, 0.4, 1.7]), "erfc": np.array([-2.0, -0.3, 0.4, 1.7]),
    "erfcx": np.array([-1.5, -0.3, 0.4, 5.0]), "erfinv": np.array([-0.8, -0.1, 0.2, 0.7]),
    "expit": np.array([-4.0, -0.3, 0.4, 3.0]), "logit": np.array([0.05, 0.32, 0.6, 0.9]),
    "gammaln": np.array([-1.5, 0.3, 2.2, 9.0]), "digamma": np.array([-1.5, 0.3, 2.2, 9.0]),
    "ndtr": np.array([-6.0, -0.6, 0.5, 3.0]), "log_ndtr": np.array([-30.0, -0.6, 0.5, 3.0]),
    "ndtri": np.array([0.02, 0.2, 0.6, 0.99]),
}


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_unary_second_derivatives_match_finite_differences(name):
    check_grads(UNARY[name][0], (DOMAINS[name],), order=2)


def test_binary_second_derivatives_match_finite_differences():
    x, y = np.array([0.3, -1.2, 2.0]), np.array([0.4, 2.5, 7.0])
    check_grads(special.xlogy, (x, y), order=2)
    check_grads(special.xlog1py, (x, y), order=2)
    check_grads(lambda v: special.polygamma(2, v), (y,), order=2)
    check_grads(lambda v, b: special.logsumexp(v, b=b), (x, y), order=2)
    check_grads(lambda v: special.softmax(v), (x,), order=2)


def test_polygamma_derivative_in_its_order_is_missing_rule_error():
    x = np.array([0.5, 2.0])
    for transform in (lambda f: tf.grad(f)(np.array([1.0, 2.0])),
                      lambda f: tf.jvp(f, (np.array([1.0, 2.0]),), (np.ones(2),))):
        with pytest.raises(MissingRuleError) as info:
            transform(lambda n: tnp.sum(special.polygamma(n, x)))
        assert info.value.role == "jvp" and "'polygamma'" in str(info.value)
    # a constant order is fine
    np.testing.assert_allclose(tf.grad(lambda v: special.polygamma(1, v))(2.0),
                               sps.polygamma(2, 2.0), rtol=1e-15)


# ---------------------------------------------------------------- jit

def _compiled_ones(x, y, p):
    """Functions that become numba code (templates or composites of them)."""
    return dict(erf=special.erf(x), erfc=special.erfc(x), expit=special.expit(x),
                ndtr=special.ndtr(x), gammaln=special.gammaln(y), xlogy=special.xlogy(x, y),
                xlog1py=special.xlog1py(p, y), logit=special.logit(p),
                logsumexp=special.logsumexp(x), softmax=special.softmax(x))


def _library_ones(x, y, p):
    """Functions that run SciPy between kernels."""
    return dict(erfinv=special.erfinv(p), erfcx=special.erfcx(x), digamma=special.digamma(y),
                ndtri=special.ndtri(p), log_ndtr=special.log_ndtr(x),
                polygamma=special.polygamma(1, y))


# numba's math.erf/erfc/lgamma (the C library's) and SciPy's differ by a few ulps, and in
# erfc's far tail (ndtr(-30) ~ 5e-198) by ~1e-13, where both are that far from the truth
JIT_ULPS = dict(erfc=512, ndtr=512)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jit_equals_interpreter(dtype):
    x = _points(dtype, REAL_LINE)
    y = _points(dtype, GAMMA_LINE[:15])
    p = _points(dtype, PROBABILITY[:15])
    with np.errstate(all="ignore"):
        for fn in (_compiled_ones, _library_ones):
            got, want = tf.jit(fn, tiered=False)(x, y, p), fn(x, y, p)
            assert got.keys() == want.keys()
            for name in want:
                assert got[name].dtype == want[name].dtype == dtype
                a, b = got[name], want[name]
                if name == "gammaln":
                    # SciPy's gammaln overflows to inf at float64 subnormals (1/x does);
                    # math.lgamma gives the true -log|x| there
                    sub = (y != 0) & (np.abs(y) < np.finfo(dtype).tiny)
                    if dtype == np.float64:
                        assert np.all(np.isinf(b[sub]))
                    _close(a[sub], -np.log(np.abs(y[sub])), dtype, 8)
                    a, b = a[~sub], b[~sub]
                _close(a, b, dtype, JIT_ULPS.get(name, 8))


def test_jit_of_gradient_equals_interpreted_gradient():
    def loss(x, y, p):
        return tnp.sum(special.gammaln(y) + special.xlogy(x, y) + special.ndtr(x)
                       + special.logit(p) + special.erfinv(p) + special.log_ndtr(x))
    args = (np.array([-2.0, 0.0, 0.5, 3.0]), np.array([0.3, 1.0, 2.5, 9.0]),
            np.array([0.01, 0.3, 0.5, 0.9]))
    g = tf.grad(loss, argnums=(0, 1, 2))
    for a, b in zip(tf.jit(g, tiered=False)(*args), g(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-13)
