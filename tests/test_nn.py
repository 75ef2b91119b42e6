"""tf_numba.nn: values against NumPy/SciPy formulas at ordinary and extreme inputs (±1e3,
subnormals, ±inf, masked and all -inf rows), exact derivatives at those points, finite
difference checks to second order, and jit equal to the interpreter."""
import numpy as np
import pytest
import scipy.special as sps

import tf_numba as tf
import tf_numba.nn as nn
import tf_numba.numpy as tnp
from tf_numba.core.shapes import Sym
from tf_numba.errors import DTypeError, ShapeError, UnsupportedError

from ad_checks import check_grads

ALPHA = 1.7
C = 0.044715
K = np.sqrt(2 / np.pi)
RTOL = {np.float32: 2e-6, np.float64: 2e-14}


def _extremes(dtype):
    """Ordinary values, kinks (0, ±1, ±3, 6), ±1e3 and subnormals of ``dtype``."""
    tiny = np.finfo(dtype).smallest_subnormal
    return np.array([-1e3, -50, -6, -3, -1, -0.5, -3 * tiny, -0.0, 0.0, tiny, 7 * tiny, 0.25,
                     1, 2.5, 3, 6, 7, 50, 1e3], dtype)


# name: (tf_numba function, NumPy/SciPy reference value, reference derivative). The
# derivatives at kinks follow JAX: relu'(0) = 0, leaky_relu'(0) = 1, hard_tanh'(±1) = 1,
# relu6'(0) = relu6'(6) = 0.
def _gelu_tanh(x):
    # x/2 (1 + tanh(u)) = x expit(2u); the tanh form cancels to nothing for x << 0
    return x * sps.expit(2 * K * (x + C * x ** 3))


def _gelu_tanh_grad(x):
    s = sps.expit(2 * K * (x + C * x ** 3))
    return s + x * s * (1 - s) * 2 * K * (1 + 3 * C * x * x)


UNARY = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6), lambda x: ((x > 0) & (x < 6)) * 1.0),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x),
                   lambda x: np.where(x >= 0, 1.0, 0.01)),
    "elu": (lambda x: nn.elu(x, ALPHA), lambda x: np.where(x > 0, x, ALPHA * np.expm1(
        np.minimum(x, 0))), lambda x: np.where(x > 0, 1.0, ALPHA * np.exp(np.minimum(x, 0)))),
    "selu": (nn.selu, lambda x: nn.SELU_SCALE * np.where(x > 0, x, nn.SELU_ALPHA * np.expm1(
        np.minimum(x, 0))), lambda x: nn.SELU_SCALE * np.where(
            x > 0, 1.0, nn.SELU_ALPHA * np.exp(np.minimum(x, 0)))),
    "celu": (lambda x: nn.celu(x, ALPHA),
             lambda x: np.maximum(x, 0) + ALPHA * np.expm1(np.minimum(x, 0) / ALPHA),
             lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0) / ALPHA))),
    "sigmoid": (nn.sigmoid, sps.expit, lambda x: sps.expit(x) * sps.expit(-x)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -np.logaddexp(0, -x), lambda x: sps.expit(-x)),
    "silu": (nn.silu, lambda x: x * sps.expit(x),
             lambda x: sps.expit(x) + x * sps.expit(x) * sps.expit(-x)),
    "softplus": (nn.softplus, lambda x: np.logaddexp(0, x), sps.expit),
    "soft_sign": (nn.soft_sign, lambda x: x / (1 + np.abs(x)),
                  lambda x: 1 / (1 + np.abs(x)) ** 2),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1), lambda x: (np.abs(x) <= 1) * 1.0),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6,
                     lambda x: ((x > -3) & (x < 3)) / 6),
    "gelu": (lambda x: nn.gelu(x, approximate=False), lambda x: x * sps.ndtr(x),
             lambda x: sps.ndtr(x) + x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi)),
    "gelu_tanh": (nn.gelu, _gelu_tanh, _gelu_tanh_grad),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_activation_values_match_reference_at_extremes(name, dtype):
    fn, ref, _ = UNARY[name]
    x = _extremes(dtype)
    got = fn(x)
    assert got.dtype == dtype and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
    # float32: the reference is evaluated in float64 on the same inputs; a subnormal result
    # carries only a few bits
    tiny = np.finfo(dtype).smallest_subnormal
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * 4, atol=4 * tiny, err_msg=name)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_activation_derivatives_exact_at_extremes_and_kinks(name):
    fn, _, dref = UNARY[name]
    x = _extremes(np.float64)
    g = tf.grad(lambda v: tnp.sum(fn(v)))(x)
    assert np.all(np.isfinite(g)), (name, g)
    np.testing.assert_allclose(g, dref(x), rtol=1e-13, atol=1e-300, err_msg=name)


def test_sigmoid_and_elu_derivatives_keep_relative_precision_in_the_tails():
    np.testing.assert_allclose(tf.grad(nn.sigmoid)(50.0), sps.expit(50) * sps.expit(-50),
                               rtol=1e-13)
    np.testing.assert_allclose(tf.grad(nn.elu)(-50.0), np.exp(-50), rtol=1e-13)


def test_activations_propagate_nan_and_handle_infinities():
    x = np.array([np.nan, np.inf, -np.inf])
    for name, (fn, ref, _) in UNARY.items():
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(fn(x), ref(x), err_msg=name)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_activation_second_derivatives_match_finite_differences(name):
    fn = UNARY[name][0]
    # clear of every kink (0, ±1, ±3, 6) by more than the difference step
    x = np.array([-4.3, -2.2, -0.7, 0.4, 1.6, 2.9, 4.8, 6.6])
    check_grads(fn, (x,), order=2)


def test_smooth_activations_have_exact_higher_derivatives_at_zero():
    # log(1 + e^x) at 0: 1/2, 1/4, 0, -1/8; the select form keeps the smooth branch's
    d1 = tf.grad(lambda x: nn.softplus(x))
    d2 = tf.grad(d1)
    d3 = tf.grad(d2)
    d4 = tf.grad(d3)
    assert [float(d(0.0)) for d in (d1, d2, d3, d4)] == [0.5, 0.25, 0.0, -0.125]
    # sigmoid'' (0) = 0, sigmoid''' (0) = -1/8
    s3 = tf.grad(tf.grad(tf.grad(lambda x: nn.sigmoid(x))))
    assert float(s3(0.0)) == -0.125
    np.testing.assert_allclose(tf.grad(tf.grad(lambda x: nn.gelu(x, approximate=False)))(0.0),
                               2 / np.sqrt(2 * np.pi), rtol=1e-15)


def test_integer_inputs_become_float64_and_complex_is_rejected():
    assert nn.relu(np.array([-1, 2])).dtype == np.float64
    assert nn.sigmoid(np.array([True])).dtype == np.float64
    assert nn.relu(np.float32(1.5)).dtype == np.float32
    with pytest.raises(DTypeError, match="real"):
        nn.softplus(np.array([1j]))


# ---------------------------------------------------------------- softmax family

RNG = np.random.default_rng(0)
X = RNG.normal(0, 2, (3, 5))
MASK = np.array([[True, False, True, True, False],
                 [False, False, False, False, False],
                 [True, True, True, True, True]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [-1, 0, None, (0, 1)])
def test_softmax_log_softmax_logsumexp_match_scipy(axis, dtype):
    x = (X * 100).astype(dtype)          # spread of hundreds: overflows without the shift
    rtol = RTOL[dtype] * 10
    np.testing.assert_allclose(nn.softmax(x, axis=axis), sps.softmax(x, axis=axis),
                               rtol=rtol, atol=1e-30)
    np.testing.assert_allclose(nn.log_softmax(x, axis=axis), sps.log_softmax(x, axis=axis),
                               rtol=rtol)
    for keepdims in (False, True):
        got = nn.logsumexp(x, axis=axis, keepdims=keepdims)
        want = sps.logsumexp(x, axis=axis, keepdims=keepdims)
        assert np.shape(got) == np.shape(want) and got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol)
    assert nn.softmax(x).dtype == dtype and nn.log_softmax(x).dtype == dtype


def test_softmax_at_plus_minus_1e3_and_infinities():
    x = np.array([[1e3, -1e3, 0.0], [-np.inf, 1.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    s = nn.softmax(x)
    np.testing.assert_allclose(s[:2], sps.softmax(x[:2], axis=-1), rtol=1e-15)
    np.testing.assert_array_equal(s[2], 0.0)    # JAX and SciPy give NaN; zeros here
    ls = nn.log_softmax(x)
    np.testing.assert_allclose(ls[:2], sps.log_softmax(x[:2], axis=-1), rtol=1e-15)
    np.testing.assert_array_equal(ls[2], -np.inf)
    np.testing.assert_array_equal(nn.logsumexp(x, axis=1), sps.logsumexp(x, axis=1))
    w = RNG.normal(size=x.shape)
    for fn in (nn.softmax, lambda v: tnp.where(tnp.isfinite(v), nn.log_softmax(v), 0.0),
               lambda v: tnp.where(tnp.isfinite(v), v, 0.0) * nn.logsumexp(v, axis=1,
                                                                           keepdims=True)):
        g = tf.grad(lambda v: tnp.sum(fn(v) * w))(x)
        assert np.all(np.isfinite(g)), g
        np.testing.assert_array_equal(g[x == -np.inf], 0.0)


def _masked_softmax_ref(x, mask):
    e = np.where(mask, np.exp(x - np.max(np.where(mask, x, -np.inf), -1, keepdims=True)), 0)
    s = e.sum(-1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def test_masked_softmax_zeros_and_finite_gradients_with_inf_in_masked_rows():
    x = np.where(MASK, X, -np.inf)       # masked positions hold -inf (or anything: +inf, NaN)
    x[0, 1], x[1, 2] = np.inf, np.nan
    s = nn.softmax(x, where=MASK)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(s, _masked_softmax_ref(X, MASK), rtol=1e-15)
    np.testing.assert_array_equal(s[1], 0.0)
    np.testing.assert_allclose(s.sum(-1), [1, 0, 1], rtol=1e-15)
    w = RNG.normal(size=X.shape)
    g = tf.grad(lambda v: tnp.sum(nn.softmax(v, where=MASK) * w))(x)
    assert np.all(np.isfinite(g))
    want = s * (w - np.sum(s * w, -1, keepdims=True))
    np.testing.assert_allclose(g, want, rtol=1e-14, atol=1e-16)
    ls = nn.log_softmax(x, where=MASK)
    np.testing.assert_array_equal(ls[~MASK], -np.inf)
    np.testing.assert_allclose(ls[MASK], np.log(s[MASK]), rtol=1e-14)
    g = tf.grad(lambda v: tnp.sum(tnp.where(MASK, nn.log_softmax(v, where=MASK), 0) * w))(x)
    assert np.all(np.isfinite(g)) and np.all(g[~MASK] == 0)
    lse = nn.logsumexp(x, axis=1, where=MASK)
    np.testing.assert_allclose(lse, [sps.logsumexp(X[0, MASK[0]]), -np.inf,
                                     sps.logsumexp(X[2])], rtol=1e-15)
    g = tf.grad(lambda v: tnp.sum(tnp.where(MASK.any(1), nn.logsumexp(v, 1, where=MASK), 0)))(x)
    np.testing.assert_allclose(g, s, rtol=1e-14)


def test_masked_softmax_second_derivatives_match_finite_differences():
    check_grads(lambda v: nn.softmax(v, where=MASK), (X,), order=2)
    check_grads(lambda v: tnp.where(MASK, nn.log_softmax(v, where=MASK), 0), (X,), order=2)
    check_grads(lambda v: tnp.where(MASK.any(1), nn.logsumexp(v, axis=1, where=MASK), 0),
                (X,), order=2)


@pytest.mark.parametrize("fn", [nn.softmax, nn.log_softmax,
                                lambda v: nn.logsumexp(v, axis=-1),
                                lambda v: nn.softmax(v, axis=0), lambda v: nn.logsumexp(v)])
def test_softmax_family_second_derivatives_match_finite_differences(fn):
    check_grads(fn, (X,), order=2)


def test_logsumexp_b_and_return_sign_match_scipy():
    a = np.array([[1.0, 2.0, 3.0], [1e3, 1e3 - 1, -1e3], [np.inf, 1.0, 2.0]])
    b = np.array([[1.0, -3.0, 0.5], [2.0, -1.0, 0.0], [0.0, 1.0, 1.0]])
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got = nn.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            want = sps.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
            np.testing.assert_array_equal(got[1], want[1])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.isnan(nn.logsumexp(a, axis=1, b=b)),
                                      np.isnan(sps.logsumexp(a, axis=1, b=b)))
    # derivatives in a and b, including d/db where b == 0 (the entry is still there)
    a2, b2 = a[:2] / 1e3, np.abs(b[:2]) + np.array([[0, 0, 0], [0, 0, 0.5]])
    b2[0, 1] = 0.0
    check_grads(lambda x, y: nn.logsumexp(x, axis=1, b=y), (a2, b2), order=2)
    g = tf.grad(lambda y: nn.logsumexp(np.array([0.5, 1.0]), b=y))(np.array([1.0, 0.0]))
    np.testing.assert_allclose(g, np.exp([0.5, 1.0]) / np.exp(0.5), rtol=1e-15)


def test_logsumexp_of_nothing_is_minus_inf():
    assert nn.logsumexp(np.zeros(0)) == -np.inf
    np.testing.assert_array_equal(nn.softmax(np.zeros((2, 0))), np.zeros((2, 0)))


# ---------------------------------------------------------------- normalization

def _layer_norm_ref(x, scale, bias, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * scale + bias


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_rms_norm_standardize_match_reference(dtype):
    x = (RNG.normal(3, 2, (4, 6)) * 1e3).astype(dtype)    # a large mean: no cancellation
    scale, bias = RNG.uniform(0.5, 2, 6).astype(dtype), RNG.normal(size=6).astype(dtype)
    x64 = x.astype(np.float64)
    rtol = RTOL[dtype] * 20
    y = nn.layer_norm(x, scale, bias)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, _layer_norm_ref(x64, scale, bias, 1e-5), rtol=rtol,
                               atol=rtol)
    np.testing.assert_allclose(nn.layer_norm(x, axis=(0, 1), epsilon=0.0),
                               (x64 - x64.mean()) / x64.std(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(nn.rms_norm(x, scale, epsilon=1e-6),
                               x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * scale,
                               rtol=rtol)
    np.testing.assert_allclose(nn.standardize(x, axis=0, epsilon=0.0),
                               (x64 - x64.mean(0)) / x64.std(0), rtol=rtol, atol=rtol)


def test_standardize_with_where_given_mean_and_variance():
    x = RNG.normal(size=(3, 5))
    where = MASK.copy()
    where[1, :2] = True
    got = nn.standardize(x, where=where, epsilon=0.0)
    for i in range(3):
        row = x[i, where[i]]
        np.testing.assert_allclose(got[i, where[i]], (row - row.mean()) / row.std(), rtol=1e-13)
    m, v = np.float64(0.1), np.float64(4.0)
    np.testing.assert_allclose(nn.standardize(x, mean=m, variance=v, epsilon=0.0),
                               (x - 0.1) / 2, rtol=1e-15)
    # a given mean without a variance: mean(x**2) - mean**2, as JAX
    np.testing.assert_allclose(nn.standardize(x, mean=m, epsilon=0.0),
                               (x - 0.1) / np.sqrt((x ** 2).mean(-1, keepdims=True) - 0.01),
                               rtol=1e-14)


def test_normalization_second_derivatives_match_finite_differences():
    x = RNG.normal(size=(3, 4))
    scale, bias = RNG.uniform(0.5, 2, 4), RNG.normal(size=4)
    check_grads(lambda a, s, b: nn.layer_norm(a, s, b), (x, scale, bias), order=2)
    check_grads(lambda a, s: nn.rms_norm(a, s), (x, scale), order=2)
    check_grads(lambda a: nn.standardize(a, axis=0, where=MASK[:, :4] | True), (x,), order=2)


# ---------------------------------------------------------------- one_hot, glu

def test_one_hot_matches_jax_semantics():
    labels = np.array([[2, 0], [5, -1]])
    got = nn.one_hot(labels, 4)
    assert got.shape == (2, 2, 4) and got.dtype == np.float64
    np.testing.assert_array_equal(got, (labels[..., None] == np.arange(4)).astype(float))
    np.testing.assert_array_equal(nn.one_hot(labels, 4, dtype=np.int32, axis=0),
                                  np.moveaxis(labels[..., None] == np.arange(4), -1, 0))
    with pytest.raises(DTypeError, match="integers"):
        nn.one_hot(np.array([1.0]), 3)


def test_glu_splits_in_halves_and_rejects_odd_lengths():
    x = RNG.normal(size=(3, 4))
    np.testing.assert_allclose(nn.glu(x), x[:, :2] * sps.expit(x[:, 2:]), rtol=1e-15)
    with pytest.raises(ShapeError, match="even"):
        nn.glu(x, axis=0)
    check_grads(nn.glu, (x,), order=2)


# ---------------------------------------------------------------- losses

LABELS = np.array([3, 0, 4])


def test_softmax_cross_entropy_integer_labels_and_probabilities_agree():
    z = X * 100
    want = sps.logsumexp(z, axis=1) - z[np.arange(3), LABELS]
    np.testing.assert_allclose(nn.softmax_cross_entropy(z, LABELS), want, rtol=1e-14)
    probs = nn.one_hot(LABELS, 5)
    np.testing.assert_allclose(nn.softmax_cross_entropy(z, probs), want, rtol=1e-14)
    soft = sps.softmax(X, axis=1)
    np.testing.assert_allclose(nn.softmax_cross_entropy(z, soft),
                               -np.sum(soft * sps.log_softmax(z, axis=1), 1), rtol=1e-14)
    # axis 0: labels index rows
    np.testing.assert_allclose(nn.softmax_cross_entropy(z.T, LABELS, axis=0), want, rtol=1e-14)


def test_softmax_cross_entropy_out_of_range_label_is_nan():
    got = nn.softmax_cross_entropy(X, np.array([5, -1, 2]))
    assert np.isnan(got[0]) and np.isnan(got[1]) and np.isfinite(got[2])


def test_softmax_cross_entropy_gradients_with_minus_inf_logits():
    z = np.where(MASK | (np.arange(5) == LABELS[:, None]), X, -np.inf)
    probs = nn.one_hot(LABELS, 5)
    for labels in (LABELS, probs):
        g = tf.grad(lambda v: tnp.sum(nn.softmax_cross_entropy(v, labels)))(z)
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, nn.softmax(z) - probs, rtol=1e-14, atol=1e-16)
    check_grads(lambda v: nn.softmax_cross_entropy(v, LABELS), (X,), order=2)
    check_grads(lambda v, p: nn.softmax_cross_entropy(v, p), (X, sps.softmax(X, 1)), order=2)


def test_binary_cross_entropy_with_logits_is_stable():
    x = np.array([-1e3, -30.0, -1.0, 0.0, 2.0, 30.0, 1e3])
    for z in (0.0, 1.0, 0.3):
        want = -(z * -np.logaddexp(0, -x) + (1 - z) * -np.logaddexp(0, x))
        np.testing.assert_allclose(nn.binary_cross_entropy_with_logits(x, z), want,
                                   rtol=1e-14, atol=1e-300)
        g = tf.grad(lambda v: tnp.sum(nn.binary_cross_entropy_with_logits(v, z)))(x)
        np.testing.assert_allclose(g, sps.expit(x) - z, rtol=1e-14, atol=1e-300)
    assert nn.binary_cross_entropy_with_logits(np.float32(30), np.float32(1)) > 0
    check_grads(nn.binary_cross_entropy_with_logits, (X, sps.expit(X.T).T), order=2)


def test_mean_squared_error_and_huber_loss():
    p, t = X, X[::-1]
    np.testing.assert_allclose(nn.mean_squared_error(p, t), np.mean((p - t) ** 2), rtol=1e-15)
    np.testing.assert_allclose(nn.mean_squared_error(p, t, axis=1), np.mean((p - t) ** 2, 1),
                               rtol=1e-15)
    d = np.abs(p - t)
    np.testing.assert_allclose(nn.huber_loss(p, t, 1.5),
                               np.where(d <= 1.5, 0.5 * d * d, 1.5 * (d - 0.75)), rtol=1e-15)
    check_grads(nn.mean_squared_error, (p, t), order=2)
    check_grads(lambda a, b: nn.huber_loss(a, b, 1.5), (p + 0.01, t), order=2)


# ---------------------------------------------------------------- symbolic shapes

B, N = Sym("b"), Sym("n")
SYMBOLIC = [
    ("softmax", lambda x, l, s: nn.softmax(x, where=x > 0), (B, N)),
    ("log_softmax", lambda x, l, s: nn.log_softmax(x, axis=0), (B, N)),
    ("logsumexp", lambda x, l, s: nn.logsumexp(x, axis=1, b=x), (B,)),
    ("layer_norm", lambda x, l, s: nn.layer_norm(x, s, s), (B, N)),
    ("rms_norm", lambda x, l, s: nn.rms_norm(x, s), (B, N)),
    ("one_hot", lambda x, l, s: nn.one_hot(l, 4), (B, 4)),
    ("cross_entropy", lambda x, l, s: nn.softmax_cross_entropy(x, l), (B,)),
    ("gradient", tf.grad(lambda x, l, s: tnp.mean(nn.softmax_cross_entropy(x, l))
                         + tnp.sum(nn.layer_norm(x, s) * nn.gelu(x))), (B, N)),
]


@pytest.mark.parametrize("name,fn,shape", SYMBOLIC, ids=[c[0] for c in SYMBOLIC])
def test_composites_trace_on_symbolic_shapes(name, fn, shape):
    program = tf.make_program(fn)(tf.symbolic(("b", "n")), tf.symbolic(("b",), np.int64),
                                  tf.symbolic(("n",)))
    assert program.out_avals[0].shape == shape


def test_glu_on_a_symbolic_axis_says_it_needs_its_length():
    with pytest.raises(UnsupportedError, match="symbolic"):
        tf.make_program(nn.glu)(tf.symbolic(("b", "n")))


def test_vmap_over_examples_equals_the_batched_call():
    per_example = tf.vmap(lambda z, y, m: nn.softmax_cross_entropy(z, y)
                          + tnp.sum(nn.softmax(z, where=m) * nn.layer_norm(z)))
    want = nn.softmax_cross_entropy(X, LABELS) + tnp.sum(nn.softmax(X, where=MASK)
                                                         * nn.layer_norm(X), axis=1)
    np.testing.assert_allclose(per_example(X, LABELS, MASK), want, rtol=1e-14)


# ---------------------------------------------------------------- jit
# numba's compile time grows faster than the kernel: a few mid-sized kernels, not one
# kernel per function and not one for everything.

def _activations(x):
    return [fn(x) for fn, _, _ in UNARY.values()]


def _composites(x, w, mask, labels, scale):
    return [nn.softmax(x, axis=0, where=mask), nn.log_softmax(x, where=mask),
            nn.logsumexp(x, axis=1, b=w, return_sign=True), nn.layer_norm(x, scale, w[0]),
            nn.softmax_cross_entropy(x, labels), nn.binary_cross_entropy_with_logits(x, w)]


def _loss(x, w, scale):
    return (tnp.mean(nn.softmax_cross_entropy(x, LABELS)) + tnp.sum(nn.softmax(x, where=MASK) * w)
            + tnp.sum(nn.layer_norm(x, scale, w[0]) * w) + tnp.sum(nn.gelu(x) * nn.softplus(w)))


def _assert_jit_close(got, want, dtype):
    got, want = tf.core.pytree.flatten(got)[0], tf.core.pytree.flatten(want)[0]
    assert len(got) == len(want)
    # numba's libm and NumPy's SIMD loops round exp, log, erf... differently
    rtol = 64 * np.finfo(dtype).eps
    for k, (a, b) in enumerate(zip(got, want)):
        assert np.asarray(a).dtype == np.asarray(b).dtype, k
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 1e-3, err_msg=f"output {k}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jit_activations_equal_interpreter(dtype):
    x = np.concatenate([_extremes(dtype), [np.nan, np.inf, -np.inf]]).astype(dtype)
    with np.errstate(all="ignore"):
        _assert_jit_close(tf.jit(_activations, tiered=False)(x), _activations(x), dtype)


def test_jit_composites_equal_interpreter():
    dtype = np.float32
    x = np.concatenate([X * 3, [[-1e3, 1e3, -np.inf, 0.0, 1e-45]]]).astype(dtype)
    w = RNG.normal(size=x.shape).astype(dtype)
    mask = np.concatenate([MASK, [[True, True, False, True, True]]])
    args = (x, w, mask, np.array([3, 0, 4, 7]), RNG.uniform(0.5, 2, 5).astype(dtype))
    with np.errstate(all="ignore"):
        _assert_jit_close(tf.jit(_composites, tiered=False)(*args), _composites(*args), dtype)


def test_jit_of_grad_equals_interpreted_grad():
    args = (X * 3, RNG.normal(size=X.shape), RNG.uniform(0.5, 2, 5))
    g = tf.grad(_loss, argnums=(0, 1, 2))
    want = g(*args)
    got = tf.jit(g, tiered=False)(*args)
    for a, b in zip(got, want):
        assert np.all(np.isfinite(a))
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [0, -1])
def test_softmax_family_of_a_0d_array_as_scipy(axis):
    # found by the fuzzer: axis 0 of a 0-d array raised a bare IndexError in tnp.max
    x = np.array(1.5)
    np.testing.assert_allclose(nn.softmax(x, axis=axis), sps.softmax(x, axis=axis))
    np.testing.assert_allclose(nn.log_softmax(x, axis=axis), sps.log_softmax(x, axis=axis))
    np.testing.assert_allclose(nn.logsumexp(x, axis=axis), sps.logsumexp(x, axis=axis))
    np.testing.assert_allclose(tf.grad(lambda a: nn.logsumexp(a, axis=axis))(x), 1.0)
