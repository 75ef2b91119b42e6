"""tf_numba.scipy.special: SciPy's values (float32 and float64) at ordinary and extreme
inputs, derivatives against closed forms and finite differences to second order, the
missing derivative of polygamma in its order, and jit equal to the interpreter."""
import functools

import numpy as np
import pytest
import scipy.special as sps

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import DTypeError, MissingRuleError, UnsupportedError
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
        assert info.value.role == "jvp" and str(info.value).startswith("polygamma: ")
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


# ---------------------------------------------------------------- gamma, beta, incomplete,
# exponential integrals, Bessel functions: SciPy's own impl (the same bits)

POSITIVE = [lambda t: t, 1e-30, 1e-3, 0.3, 1.0, 2.5, 30.0, 1e3, 1e30, np.inf, np.nan]
SIGNED = [-1e3 + 0.5, -30.5, -2.0, -1.5, -0.5, lambda t: -t, -0.0, 0.0] + POSITIVE
UNIT_CLOSED = [-0.5, 0.0, lambda t: t, 1e-10, 0.1, 0.5, 0.9, 1 - 1e-7, 1.0, 1.5, np.nan]

# name: (tf_numba function, SciPy function, points per argument); arguments form a grid
HOST = {
    "gamma": (special.gamma, sps.gamma, [SIGNED]),
    "gammasgn": (special.gammasgn, sps.gammasgn, [SIGNED]),
    "rgamma": (special.rgamma, sps.rgamma, [SIGNED]),
    "exp1": (special.exp1, sps.exp1, [SIGNED]),
    "expi": (special.expi, sps.expi, [SIGNED]),
    "i0": (special.i0, sps.i0, [SIGNED]), "i0e": (special.i0e, sps.i0e, [SIGNED]),
    "i1": (special.i1, sps.i1, [SIGNED]), "i1e": (special.i1e, sps.i1e, [SIGNED]),
    "spence": (special.spence, sps.spence, [SIGNED]),
    "zeta": (special.zeta, sps.zeta, [SIGNED]),
    "beta": (special.beta, sps.beta, [SIGNED[::3], SIGNED[1::3]]),
    "betaln": (special.betaln, sps.betaln, [SIGNED[::3], SIGNED[1::3]]),
    "gammainc": (special.gammainc, sps.gammainc, [SIGNED[::2], SIGNED[1::2]]),
    "gammaincc": (special.gammaincc, sps.gammaincc, [SIGNED[::2], SIGNED[1::2]]),
    "betainc": (special.betainc, sps.betainc,
                [[-1.0, 0.0, 0.5, 3.0, 500.0, np.nan], [0.0, 0.2, 2.0, 800.0], UNIT_CLOSED]),
    "poch": (special.poch, sps.poch, [SIGNED[::3], SIGNED[1::3]]),
    "gammaincinv": (special.gammaincinv, sps.gammaincinv, [SIGNED[::2], UNIT_CLOSED]),
    "gammainccinv": (special.gammainccinv, sps.gammainccinv, [SIGNED[::2], UNIT_CLOSED]),
    "betaincinv": (special.betaincinv, sps.betaincinv,
                   [[-1.0, 0.0, 0.5, 3.0, 500.0, np.nan], [0.0, 0.2, 2.0, 800.0], UNIT_CLOSED]),
    "betainccinv": (special.betainccinv, sps.betainccinv,
                    [[-1.0, 0.0, 0.5, 3.0, 500.0, np.nan], [0.0, 0.2, 2.0, 800.0],
                     UNIT_CLOSED]),
    "ndtri_exp": (special.ndtri_exp, sps.ndtri_exp,
                  [[-np.inf, -1e5, -800.0, -40.0, -0.7, -1e-20, lambda t: -t, -0.0, 0.5,
                    np.nan]]),
    "expn": (special.expn, sps.expn, [[-1.0, 0.0, 1.0, 2.0, 7.0, 60.0], SIGNED[3:]]),
    "iv": (special.iv, sps.iv, [[-2.5, -1.0, 0.0, 0.5, 3.0, 40.0], SIGNED[4:]]),
    "ive": (special.ive, sps.ive, [[-2.5, -1.0, 0.0, 0.5, 3.0, 40.0], SIGNED[4:]]),
    "jn": (special.jn, sps.jn, [[-3.0, 0.0, 1.0, 2.0, 30.0], SIGNED]),
    "yn": (special.yn, sps.yn, [[-3.0, 0.0, 1.0, 2.0, 30.0], SIGNED]),
    "hurwitz": (special.zeta, sps.zeta, [[-1.0, 0.5, 1.0, 1.5, 4.0, 60.0], SIGNED[4:]]),
    "hyp1f1": (special.hyp1f1, sps.hyp1f1,
               [[-2.0, 0.5, 3.0], [-1.5, 1.0, 4.0], [-30.0, -1.0, 0.0, 0.5, 20.0]]),
}


def _grid(dtype, point_lists):
    axes = [_points(dtype, pts) for pts in point_lists]
    return [a.reshape([-1 if i == k else 1 for i in range(len(axes))])
            for k, a in enumerate(axes)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(HOST))
def test_host_functions_equal_scipy_and_broadcast(name, dtype):
    fn, ref, point_lists = HOST[name]
    args = _grid(dtype, point_lists)
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")
        got, want = fn(*args), ref(*args)
    assert got.dtype == dtype and got.shape == np.broadcast_shapes(*(a.shape for a in args))
    np.testing.assert_array_equal(got, np.asarray(want, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_composites_match_scipy(dtype):
    y = _points(dtype, [-0.1, 0.0, lambda t: t, 1e-30, 1e-10, 0.3, 1.0, 1.7, 2 - 1e-7, 2.0,
                        2.5, np.nan])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(special.erfcinv(y), sps.erfcinv(y))
        x = np.concatenate([_points(dtype, [-1.0, 0.0, lambda t: t, 1e-20, 0.5, 3.0, 1e30,
                                            np.inf, np.nan]),
                            np.random.default_rng(0).uniform(0.01, 3, 20).astype(dtype)])
        x, z = x[:, None], x[None, :]
        np.testing.assert_array_equal(special.entr(x), sps.entr(x))
        _close(special.rel_entr(x, z), sps.rel_entr(x, z), dtype, 2)
        # SciPy's kl_div is its rel_entr - x + y, except that it is -inf where x/y underflows
        want = sps.rel_entr(x, z) - x + z
        scale = np.maximum(np.maximum(np.abs(sps.rel_entr(x, z)), np.abs(x)), np.abs(z))
        got = special.kl_div(x, z)
        np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
        fin = np.isfinite(want)
        assert np.all(np.abs(got - want)[fin] <= 2 * np.finfo(dtype).eps * scale[fin])
        n = _points(dtype, [-2.0, -0.5, 0.0, 1.0, 2.5, 5.0, 30.0, 170.0, np.nan])
        _close(special.factorial(n), sps.factorial(n), dtype, 2)
        a = _points(dtype, [0.5, 1.0, 1.6, 3.0, 40.0, 1e4])
        for d in (1, 2, 3):
            _close(special.multigammaln(a[a > (d - 1) / 2], d),
                   sps.multigammaln(a[a > (d - 1) / 2], d), dtype, 4)
            assert np.isnan(special.multigammaln(np.array((d - 1) / 2, dtype), d)) or d == 1


def test_invalid_parameters_give_nan_as_scipy():
    assert np.isnan(special.gammainc(-1.0, 1.0)) and np.isnan(special.gammaincc(1.0, -1.0))
    assert np.isnan(special.betainc(1.0, -2.0, 0.5)) and np.isnan(special.betainc(1.0, 1.0, 2))
    # and their derivatives
    for f in (lambda a: special.gammainc(a, 1.0), lambda x: special.betainc(2.0, 3.0, x)):
        assert np.isnan(tf.grad(f)(-1.0))
    assert np.isnan(tf.grad(lambda b: special.betainc(2.0, b, 0.5))(-1.0))
    with pytest.raises(ValueError, match="positive int"):
        special.multigammaln(3.0, 0)


# ---------------------------------------------------------------- their derivatives

def _central(f, x, h):
    """Fourth-order central difference (error O(h^4))."""
    return (8 * (f(x + h) - f(x - h)) - (f(x + 2 * h) - f(x - 2 * h))) / (12 * h)


def test_gammainc_parameter_derivatives_match_differences_of_scipy():
    # series (x < a + 1) and fraction sides, tiny and large a, far tails
    a = np.array([1e-3, 0.1, 0.5, 2.0, 2.0, 10.0, 10.0, 150.0, 150.0, 3.0, 0.5])
    x = np.array([0.5, 1e-5, 3.0, 1.0, 30.0, 9.0, 12.0, 140.0, 170.0, 1e-3, 1e-12])
    h = 1e-4 * np.minimum(a, 1)
    # differences of the smaller of P and Q (dP = -dQ): no cancellation against 1
    small_q = sps.gammaincc(a, x) < 0.5
    d_p = np.where(small_q, -_central(lambda s: sps.gammaincc(s, x), a, h),
                   _central(lambda s: sps.gammainc(s, x), a, h))
    for fn, sign in ((special.gammainc, 1), (special.gammaincc, -1)):
        da = tf.grad(lambda s: tnp.sum(fn(s, x)))(a)
        np.testing.assert_allclose(da, sign * d_p, rtol=1e-9, atol=1e-300)
        d2 = tf.grad(lambda s: tnp.sum(tf.grad(lambda u: tnp.sum(fn(u, x)))(s)))(a)
        np.testing.assert_allclose(d2, _central(lambda s: tf.grad(
            lambda u: tnp.sum(fn(u, x)))(s), a, h), rtol=1e-7, atol=1e-300)
    dx = tf.grad(lambda v: tnp.sum(special.gammainc(a, v)))(x)
    np.testing.assert_allclose(dx, np.exp((a - 1) * np.log(x) - x - sps.gammaln(a)),
                               rtol=1e-13)


def test_betainc_parameter_derivatives_match_differences_of_scipy():
    a = np.array([0.1, 0.5, 2.0, 2.0, 10.0, 100.0, 5.0, 300.0])
    b = np.array([5.0, 0.5, 3.0, 3.0, 20.0, 50.0, 0.1, 400.0])
    x = np.array([0.01, 0.3, 0.4, 0.9, 0.3, 0.6, 0.999, 0.43])
    for k, arg in ((0, a), (1, b)):
        def f(v, k=k):
            args = [a, b, x]
            args[k] = v
            return special.betainc(*args)

        def ref(v, k=k):
            args = [a, b, x]
            args[k] = v
            return sps.betainc(*args)
        h = 1e-3 * np.minimum(arg, 1)
        np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(f(v)))(arg),
                                   _central(ref, arg, h), rtol=1e-8)
        g = tf.grad(lambda v: tnp.sum(f(v)))
        np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(g(v)))(arg),
                                   _central(g, arg, h), rtol=1e-6)
    lbeta = sps.betaln(a, b)
    np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(special.betainc(a, b, v)))(x),
                               np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - lbeta),
                               rtol=1e-12)


def _inverse_case(fn, args, k, h):
    """``d fn / d args[k]`` by tf_numba and by a central difference of SciPy's ``fn``."""
    def at(v):
        full = list(args)
        full[k] = v
        return full
    got = tf.grad(lambda v: tnp.sum(getattr(special, fn)(*at(v))))(args[k])
    return got, _central(lambda v: getattr(sps, fn)(*at(v)), args[k], h)


def test_inverse_derivatives_match_differences_of_scipy():
    # small and large shapes, both tails of the probability (the density there tiny)
    a = np.array([0.05, 0.5, 2.0, 2.0, 30.0, 400.0, 3.0, 0.7])
    p = np.array([0.3, 1e-6, 0.5, 0.999, 0.2, 0.6, 1e-12, 0.9999])
    for fn in ("gammaincinv", "gammainccinv"):
        for k, h in ((0, 1e-4 * np.minimum(a, 1)), (1, 1e-4 * np.minimum(p, 1 - p))):
            got, want = _inverse_case(fn, (a, p), k, h)
            np.testing.assert_allclose(got, want, rtol=1e-8, err_msg=f"{fn} d/arg{k}")
    a = np.array([0.1, 0.5, 2.0, 2.0, 10.0, 100.0, 5.0, 300.0])
    b = np.array([5.0, 0.5, 3.0, 3.0, 20.0, 50.0, 0.1, 400.0])
    y = np.array([0.01, 0.3, 1e-8, 0.9, 0.3, 0.6, 0.999, 0.43])
    for fn in ("betaincinv", "betainccinv"):
        for k, h in ((0, 1e-4 * np.minimum(a, 1)), (1, 1e-4 * np.minimum(b, 1)),
                     (2, 1e-4 * np.minimum(y, 1 - y))):
            got, want = _inverse_case(fn, (a, b, y), k, h)
            np.testing.assert_allclose(got, want, rtol=1e-7, err_msg=f"{fn} d/arg{k}")
    # ndtri_exp: ndtr(x) / pdf(x) at x = ndtri_exp(y), from the far left tail to exp(y)
    # rounding to 1 (the exponent cancels to ~1e5 eps at y = -1e5)
    y = np.array([-1e5, -700.0, -30.0, -1.0, -0.01, -1e-10, -1e-200])
    x = sps.ndtri_exp(y)
    np.testing.assert_allclose(_grad(special.ndtri_exp)(y), np.exp(
        sps.log_ndtr(x) + x * x / 2 + 0.5 * np.log(2 * np.pi)), rtol=1e-10)
    got, want = _inverse_case("ndtri_exp", (y[:-2],), 0, 1e-5 * np.abs(y[:-2]))
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_inverses_invert_the_forward_functions_with_their_derivatives():
    a, p = np.array([0.5, 3.0, 40.0]), np.array([0.05, 0.5, 0.95])
    # d/da P(a, gammaincinv(a, p)) = 0 and d/dp = 1: the two rules agree
    ga, gp = tf.grad(lambda s, q: tnp.sum(special.gammainc(s, special.gammaincinv(s, q))),
                     argnums=(0, 1))(a, p)
    np.testing.assert_allclose(ga, 0.0, atol=1e-12)
    np.testing.assert_allclose(gp, 1.0, rtol=1e-12)
    b = np.array([2.0, 0.7, 9.0])
    g = tf.grad(lambda s, t, q: tnp.sum(special.betainc(s, t, special.betainccinv(s, t, q))),
                argnums=(0, 1, 2))(a, b, p)
    np.testing.assert_allclose(g[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(g[1], 0.0, atol=1e-12)
    np.testing.assert_allclose(g[2], -1.0, rtol=1e-12)


# (function, arguments, indices of the arguments it is differentiated in)
SECOND_ORDER = {
    "gamma": (special.gamma, (np.array([-1.5, 0.4, 2.2, 7.0]),), (0,)),
    "rgamma": (special.rgamma, (np.array([-1.5, 0.4, 2.2, 7.0]),), (0,)),
    "beta": (special.beta, (np.array([0.4, 2.2, 7.0]), np.array([1.5, 0.3, 4.0])), (0, 1)),
    "betaln": (special.betaln, (np.array([0.4, 2.2, 7.0]), np.array([1.5, 0.3, 4.0])),
               (0, 1)),
    "gammainc": (special.gammainc, (np.array([0.6, 2.2, 7.0]), np.array([0.3, 4.0, 6.5])),
                 (0, 1)),
    "gammaincc": (special.gammaincc, (np.array([0.6, 2.2, 7.0]), np.array([0.3, 4.0, 9.5])),
                  (0, 1)),
    "betainc": (special.betainc, (np.array([0.6, 2.2, 7.0]), np.array([1.3, 4.0, 2.5]),
                                  np.array([0.2, 0.5, 0.8])), (0, 1, 2)),
    "gammaincinv": (special.gammaincinv, (np.array([0.6, 2.2, 7.0]),
                                          np.array([0.1, 0.5, 0.97])), (0, 1)),
    "gammainccinv": (special.gammainccinv, (np.array([0.6, 2.2, 7.0]),
                                            np.array([0.1, 0.5, 0.97])), (0, 1)),
    "betaincinv": (special.betaincinv, (np.array([0.6, 2.2, 7.0]), np.array([1.3, 4.0, 2.5]),
                                        np.array([0.2, 0.5, 0.8])), (0, 1, 2)),
    "betainccinv": (special.betainccinv, (np.array([0.6, 2.2, 7.0]),
                                          np.array([1.3, 4.0, 2.5]),
                                          np.array([0.2, 0.5, 0.8])), (0, 1, 2)),
    "ndtri_exp": (special.ndtri_exp, (np.array([-30.0, -3.0, -0.5, -0.05]),), (0,)),
    "erfcinv": (special.erfcinv, (np.array([0.01, 0.6, 1.3, 1.9]),), (0,)),
    "multigammaln": (lambda a: special.multigammaln(a, 3), (np.array([1.2, 3.0, 9.0]),), (0,)),
    "poch": (special.poch, (np.array([0.4, 2.2, 7.0]), np.array([1.5, 0.3, -0.5])), (0, 1)),
    "factorial": (special.factorial, (np.array([0.4, 2.2, 7.0]),), (0,)),
    "expn": (special.expn, (np.array([0.0, 1.0, 3.0]), np.array([0.3, 1.2, 4.0])), (1,)),
    "exp1": (special.exp1, (np.array([0.1, 1.2, 4.0]),), (0,)),
    "expi": (special.expi, (np.array([-2.0, 0.1, 1.2, 4.0]),), (0,)),
    "i0": (special.i0, (np.array([-2.0, 0.1, 1.2, 4.0]),), (0,)),
    "i0e": (special.i0e, (np.array([-2.0, 0.1, 1.2, 4.0]),), (0,)),
    "i1": (special.i1, (np.array([-2.0, 0.1, 1.2, 4.0]),), (0,)),
    "i1e": (special.i1e, (np.array([-2.0, 0.1, 1.2, 4.0]),), (0,)),
    "iv": (special.iv, (np.array([0.5, 1.0, 2.5]), np.array([0.7, 1.2, 4.0])), (1,)),
    "ive": (special.ive, (np.array([1.0, 2.0, 2.5]), np.array([-0.7, 1.2, 4.0])), (1,)),
    # in the order too: the series (negative orders included) and Hankel's expansion
    "iv_order": (special.iv, (np.array([0.5, 1.3, -1.5, 25.0]),
                              np.array([0.7, 1.2, 4.0, 60.0])), (0, 1)),
    "ive_order": (special.ive, (np.array([0.5, 2.2, 0.3]), np.array([0.7, 3.0, 80.0])), (0, 1)),
    "jn": (special.jn, (np.array([0.0, 1.0, 3.0]), np.array([0.7, 1.2, 4.0])), (1,)),
    "yn": (special.yn, (np.array([0.0, 1.0, 3.0]), np.array([0.7, 1.2, 4.0])), (1,)),
    "hurwitz": (special.zeta, (np.array([1.5, 3.5]), np.array([0.7, 4.0])), (0, 1)),
    "riemann_zeta": (special.zeta, (np.array([-3.3, 0.5, 3.5]),), (0,)),
    "hyp1f1": (special.hyp1f1, (np.array([0.5, 2.0, -1.3]), np.array([1.5, 3.0, 2.2]),
                                np.array([-1.0, 2.0, 5.0])), (0, 1, 2)),
    "spence": (special.spence, (np.array([0.2, 0.9, 1.5, 4.0]),), (0,)),
    "entr": (special.entr, (np.array([0.2, 0.9, 1.5]),), (0,)),
    "rel_entr": (special.rel_entr, (np.array([0.2, 0.9, 1.5]), np.array([0.4, 2.0, 1.1])),
                 (0, 1)),
    "kl_div": (special.kl_div, (np.array([0.2, 0.9, 1.5]), np.array([0.4, 2.0, 1.1])), (0, 1)),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives_match_finite_differences(name):
    fn, args, wrt = SECOND_ORDER[name]

    def only(*free):
        full = list(args)
        for k, v in zip(wrt, free):
            full[k] = v
        return fn(*full)
    check_grads(only, tuple(args[k] for k in wrt), order=2, rtol=1e-5)


def test_derivatives_at_special_points():
    # rgamma at its poles: (-1)^n n!; i1, i1e at 0: 1/2; spence at 1: -1
    np.testing.assert_allclose(_grad(special.rgamma)(np.array([0.0, -1.0, -3.0])),
                               [1.0, -1.0, -6.0])
    np.testing.assert_allclose(_grad(special.i1)(np.array([0.0])), [0.5])
    np.testing.assert_allclose(_grad(special.i1e)(np.array([0.0])), [0.5])
    np.testing.assert_allclose(_grad(special.spence)(np.array([1.0])), [-1.0])
    assert _grad(special.gammasgn)(np.array([-0.5, 2.0])).tolist() == [0.0, 0.0]
    # gammainc's a-derivative is 0 at x = 0 and x = inf; betainc's at x = 0 and 1
    assert tf.grad(lambda a: tnp.sum(special.gammainc(a, np.array([0.0, np.inf]))))(
        np.array([2.0, 2.0])).tolist() == [0.0, 0.0]
    assert tf.grad(lambda a: tnp.sum(special.betainc(a, 2.0, np.array([0.0, 1.0]))))(
        np.array([2.0, 2.0])).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name, fn, args, k", [
    ("expn", special.expn, (1.0, 2.0), 0),
    ("jv", special.jn, (1.0, 2.0), 0), ("yn", special.yn, (1.0, 2.0), 0),
])
def test_derivatives_not_provided_raise_missing_rule_error(name, fn, args, k):
    with pytest.raises(MissingRuleError) as info:
        tf.grad(fn, argnums=k)(*args)
    assert info.value.role == "jvp" and str(info.value).startswith(f"{name}: ")


def test_factorial_exact_is_refused():
    from tf_numba.errors import UnsupportedError
    with pytest.raises(UnsupportedError, match="scipy.special.factorial"):
        special.factorial(5, exact=True)


def test_logsumexp_b_broadcasts_and_differentiates_in_b():
    a = np.array([[0.3, -1.0, 2.0], [1.0, 0.5, -0.2]])
    b = np.array([2.0, -0.5, 1.0])
    for axis in (None, 0, 1):
        got = special.logsumexp(a, axis=axis, b=b, return_sign=True)
        want = sps.logsumexp(a, axis=axis, b=b, return_sign=True)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
        np.testing.assert_array_equal(got[1], want[1])
    check_grads(lambda v, w: special.logsumexp(v, axis=1, b=w), (a, b), order=2)


def test_jit_equals_interpreter_for_new_functions():
    def f(a, x, p):
        return (special.gammainc(a, x) + special.betainc(a, a + 1, p) + special.gamma(a)
                + special.erfcinv(p) + special.entr(p) + special.i0e(x)
                + special.gammaincinv(a, p) + special.betainccinv(a, x, p)
                + special.ndtri_exp(-x))
    args = (np.array([0.5, 2.0, 9.0]), np.array([0.3, 3.0, 7.0]), np.array([0.1, 0.5, 0.9]))
    np.testing.assert_array_equal(tf.jit(f, tiered=False)(*args), f(*args))
    g = tf.grad(lambda *v: tnp.sum(f(*v)), argnums=(0, 1, 2))
    for got, want in zip(tf.jit(g, tiered=False)(*args), g(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_parameter_derivatives_keep_float32_and_vectorize():
    a, x = np.array([0.5, 2.0, 9.0], np.float32), np.array([0.3, 3.0, 12.0], np.float32)
    g = tf.grad(lambda s: tnp.sum(special.gammainc(s, x)))(a)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, tf.grad(lambda s: tnp.sum(special.gammainc(s, x)))(
        a.astype(np.float64)), rtol=1e-6)
    per_row = tf.vmap(tf.grad(lambda s, v: special.betainc(s, 2.0, v)), in_axes=(0, 0))
    b = np.array([[0.2, 0.5], [0.7, 0.9]])
    want = np.array([[tf.grad(lambda s: special.betainc(s, 2.0, v))(s_) for s_, v in
                      zip(row_a, row_x)] for row_a, row_x in zip(b + 1, b)])
    np.testing.assert_allclose(tf.vmap(per_row)(b + 1, b), want, rtol=1e-14)


def _difference_of_scipy(fn, args, k, h):
    def at(v):
        full = list(args)
        full[k] = v
        return fn(*full)
    return _central(at, args[k], h)


def test_order_exponent_and_parameter_derivatives_match_differences_of_scipy():
    from tf_numba.ops import special as sp
    # iv/ive in v: small and large x, negative orders, Hankel's side (x > max(50, v^2))
    v = np.array([0.0, 0.5, 2.3, -0.4, -1.5, -2.7, 10.0, 30.0, 0.3, 5.0, 20.0])
    x = np.array([0.3, 2.0, 5.0, 1.0, 3.0, 0.5, 20.0, 100.0, 60.0, 300.0, 500.0])
    for fn, ref, scaled in ((special.iv, sps.iv, False), (special.ive, sps.ive, True)):
        got = tf.grad(lambda s: tnp.sum(fn(s, x)))(v)
        np.testing.assert_allclose(got, _difference_of_scipy(ref, (v, x), 0, 1e-3), rtol=1e-9)
        np.testing.assert_allclose(sp.iv_dv(v, x, 2, scaled), _central(
            lambda s: sp.iv_dv(s, x, 1, scaled), v, 1e-3), rtol=1e-9)
    # zeta in s: Hurwitz near the pole, small and large q; Riemann both sides of 1 and
    # through the functional equation (s < 0)
    s, q = np.array([1.5, 2.0, 3.5, 10.0, 1.05, 30.0]), np.array([0.3, 1.0, 4.0, 0.1, 2.0, 1e3])
    got = tf.grad(lambda t: tnp.sum(special.zeta(t, q)))(s)
    np.testing.assert_allclose(got, _difference_of_scipy(sps.zeta, (s, q), 0, 1e-4), rtol=1e-9)
    s = np.array([-20.3, -5.5, -3.0, -0.5, 0.0, 0.5, 0.95, 1.05, 2.0, 10.0])
    np.testing.assert_allclose(tf.grad(lambda t: tnp.sum(special.zeta(t)))(s),
                               _difference_of_scipy(sps.zeta, (s,), 0, 1e-4), rtol=1e-8)
    np.testing.assert_allclose(sp.riemann_zeta_ds(s, 2), _central(
        lambda t: sp.riemann_zeta_ds(t, 1), s, 1e-4), rtol=1e-8)
    np.testing.assert_allclose(sp.zeta_ds(s[-2:], 0.5, 2), _central(
        lambda t: sp.zeta_ds(t, 0.5, 1), s[-2:], 1e-4), rtol=1e-9)
    # hyp1f1 in a and b: Kummer's series (x >= 0) and transformation (x < 0)
    a = np.array([0.5, 2.0, -1.5, 3.0, 0.3, 1.0, -2.0])
    b = np.array([1.5, 3.0, 2.0, 0.5, 4.0, 2.0, -0.5])
    x = np.array([2.0, -3.0, 1.0, 40.0, -30.0, -100.0, 0.7])
    for k in (0, 1):
        got = tf.grad(lambda t: tnp.sum(special.hyp1f1(*[(a, b)[i] if i != k else t
                                                          for i in (0, 1)], x)))((a, b)[k])
        np.testing.assert_allclose(got, _difference_of_scipy(sps.hyp1f1, (a, b, x), k, 1e-4),
                                   rtol=1e-9)
    np.testing.assert_allclose(sp.hyp1f1_dab(a, b, x, 1, 1), _central(
        lambda t: sp.hyp1f1_dab(a, t, x, 1, 0), b, 1e-4), rtol=1e-8)


def test_order_derivatives_outside_their_domain():
    # iv's order derivative: 0 at x = 0 for v > 0; NaN for x < 0 and negative integer v;
    # zeta's exponent derivative NaN where SciPy's zeta is (s <= 1 with q, q <= 0)
    g = tf.grad(lambda s: tnp.sum(special.iv(s, np.array([0.0, -1.0, 2.0]))))(
        np.array([1.5, 1.5, -2.0]))
    assert g[0] == 0 and np.isnan(g[1:]).all()
    g = tf.grad(lambda s: tnp.sum(special.zeta(s, np.array([2.0, -0.5, 1.0]))))(
        np.array([0.5, 2.5, 1.0]))
    assert np.isnan(g).all()


# ---------------------------------------------------------------- the rest of JAX's names

X = np.array([0.3, 1.7, -2.2, 4.5])
MORE = {   # name: (tf_numba call, SciPy call, arguments, derivative in these argnums)
    "j0": (special.j0, sps.j0, (X,), (0,)),
    "j1": (special.j1, sps.j1, (X,), (0,)),
    "y0": (special.y0, sps.y0, (np.abs(X),), (0,)),
    "y1": (special.y1, sps.y1, (np.abs(X),), (0,)),
    "dawsn": (special.dawsn, sps.dawsn, (X,), (0,)),
    "fresnel": (special.fresnel, sps.fresnel, (X,), (0,)),
    "sici": (special.sici, sps.sici, (X,), (0,)),
    "owens_t": (special.owens_t, sps.owens_t, (X, X[::-1]), (0, 1)),
    "hyp2f1": (special.hyp2f1, sps.hyp2f1, (0.5, 1.5, 2.5, X / 5), (3,)),
    "wofz": (special.wofz, sps.wofz, (X + 1j * X[::-1],), (0,)),
    "sph_harm_y": (special.sph_harm_y, lambda n, m, t, p: sps.sph_harm_y(
        n.astype(int), m.astype(int), t, p),
        (np.array([3.0, 2, 1, 4]), np.array([1.0, -2, 0, 3]), np.abs(X) / 2, X), (2, 3)),
    "loggamma": (special.loggamma, sps.loggamma, (X,), (0,)),
    "comb": (special.comb, sps.comb, (np.array([5.5, 7, 30, 3]), np.array([2.0, 3, 12, 4])),
             (0, 1)),
    "boxcox": (special.boxcox, sps.boxcox, (np.abs(X), np.array([0.5, 0.0, -1.2, 2.0])),
               (0, 1)),
    "boxcox1p": (special.boxcox1p, sps.boxcox1p, (np.abs(X), np.array([0.5, 0.0, -1.2, 2.0])),
                 (0, 1)),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_functions_match_scipy_differentiate_and_compile(name):
    ours, theirs, args, diff = MORE[name]
    want = theirs(*args)
    np.testing.assert_allclose(ours(*args), want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(tf.jit(ours)(*args), want, rtol=1e-13, atol=1e-15)
    batched = tf.vmap(ours)(*[np.stack([a, a]) if np.ndim(a) else np.full(2, a) for a in args])
    np.testing.assert_allclose(batched, [want, want] if not isinstance(want, tuple)
                               else [[w, w] for w in want], rtol=1e-13, atol=1e-15)
    safe = args if name != "loggamma" else (np.abs(X),)

    def part(*d):
        full = list(safe)
        for i, v in zip(diff, d):
            full[i] = v
        return ours(*full)
    check_grads(part, tuple(np.asarray(safe[i], float) if not np.iscomplexobj(safe[i])
                            else safe[i] for i in diff), order=2)


def test_more_functions_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.special as jsp
    for name in ("dawsn", "fresnel", "sici", "owens_t", "hyp2f1", "loggamma", "comb", "boxcox",
                 "boxcox1p"):
        ours, _, args, _ = MORE[name]
        np.testing.assert_allclose(ours(*args), getattr(jsp, name)(*args), rtol=1e-7,
                                   atol=1e-12, err_msg=name)
    z = X + 1j * X[::-1]
    np.testing.assert_allclose(special.wofz(z), jsp.wofz(z), rtol=1e-7)
    np.testing.assert_allclose(special.bessel_jn(X, v=3), jsp.bessel_jn(X, v=3), rtol=1e-6,
                               atol=1e-12)
    # (JAX's B_4 is -0.0333332487, 2.5e-6 from -1/30, which SciPy gives)
    np.testing.assert_allclose(special.bernoulli(10), jsp.bernoulli(10), rtol=1e-5)
    n, m, theta, phi = MORE["sph_harm_y"][2]
    np.testing.assert_allclose(special.sph_harm_y(n.astype(int), m.astype(int), theta, phi),
                               jsp.sph_harm_y(n.astype(int), m.astype(int), theta, phi),
                               rtol=1e-10, atol=1e-12)


def test_bessel_jn_bernoulli_and_the_missing_parameter_derivatives():
    np.testing.assert_allclose(special.bessel_jn(X, v=3), [sps.jv(k, X) for k in range(4)],
                               rtol=1e-15)
    np.testing.assert_array_equal(special.bernoulli(8), sps.bernoulli(8))
    assert special.comb(5, 2) == 10.0 and special.comb(2, 5) == 0.0
    assert special.comb(3, 2, repetition=True) == sps.comb(3, 2, repetition=True)
    assert np.isnan(special.loggamma(-0.5)) and tf.grad(special.loggamma)(-0.5) == 0.0
    with pytest.raises(UnsupportedError, match="the degree n is an integer"):
        tf.grad(lambda n: special.sph_harm_y(n, 1, 0.3, 0.5).real)(2.0)
    assert tf.grad(lambda n: special.sph_harm_y(n, 1, 0.3, 0.5).real,
                   allow_int=True)(2).dtype == tf.float0


# (a, b, c, x): Gauss's series on both sides of 0, a polynomial (a = -2), x near 1
HYP2F1_POINTS = np.array([(0.5, 1.3, 2.2, 0.3), (1.5, -0.7, 3.1, -0.8), (-2.0, 1.3, 2.5, 0.6),
                          (0.3, 0.4, 1.2, -3.0), (0.7, 1.1, 0.9, 0.95)]).T


@pytest.mark.parametrize("orders", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 2, 0),
                                    (1, 0, 1)])
def test_hyp2f1_parameter_derivatives_match_mpmath(orders):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    want = [float(mpmath.diff(lambda a, b, c: mpmath.hyp2f1(a, b, c, x), (a, b, c), orders))
            for a, b, c, x in HYP2F1_POINTS.T]
    f = special.hyp2f1
    for p, n in enumerate(orders):          # differentiate in each parameter its times
        for _ in range(n):
            f = functools.partial(lambda g, q, *args: tf.grad(g, argnums=q)(*args), f, p)
    got = [f(*point) for point in HYP2F1_POINTS.T]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_hyp2f1_parameter_derivatives_compiled_and_batched_are_the_eager_ones():
    # (JAX's own, jax.grad of jax.scipy.special.hyp2f1, take ~15 s to compile: they agree
    # to ~1e-15 where JAX's series converges and a, b are not negative integers, where
    # JAX's is NaN and the polynomial's derivative is not)
    grads = tf.grad(special.hyp2f1, argnums=(0, 1, 2))
    batched = np.array(tf.jit(tf.vmap(grads))(*HYP2F1_POINTS))
    eager = np.array([grads(*point) for point in HYP2F1_POINTS.T]).T
    np.testing.assert_allclose(batched, eager, rtol=1e-14)


def test_hyp2f1_parameter_derivatives_are_nan_where_the_series_is_not_and_say_what_lacks():
    assert np.isnan(tf.grad(special.hyp2f1)(0.5, 1.0, 2.0, 1.5))
    assert np.isnan(tf.grad(special.hyp2f1, argnums=2)(0.5, 1.0, -1.0, 0.5))   # a pole
    with pytest.raises(UnsupportedError, match="all three"):
        tf.grad(tf.grad(tf.grad(special.hyp2f1), argnums=1), argnums=2)(0.5, 1.0, 2.0, 0.3)


def test_hyp2f1_mixed_derivatives_in_a_parameter_and_x_match_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for a, b, c, x in HYP2F1_POINTS.T[:3]:
        for p, orders in ((0, (1, 0, 0, 1)), (2, (0, 0, 2, 1))):
            want = float(mpmath.diff(lambda *v: mpmath.hyp2f1(*v), (a, b, c, x), orders))
            f = tf.grad(special.hyp2f1, argnums=p)
            f = tf.grad(f, argnums=p) if orders[p] == 2 else f
            np.testing.assert_allclose(tf.grad(f, argnums=3)(a, b, c, x), want, rtol=1e-11)
