"""tf_numba.random: JAX's bits (jax.random as the oracle where installed), distributions by
Kolmogorov-Smirnov and moment checks with fixed keys, split independence, eager = jit = vmap
bits, derivatives of the reparameterized samplers.

The KS checks draw 4000 samples: at the 1e-4 level they reject a distribution whose CDF is
off by more than ~0.035 anywhere (power ~0.99), and a correct sampler fails one with
probability 1e-4; the keys are fixed, so each check is deterministic."""
import math
import warnings

import numpy as np
import pytest
from jit_checks import assert_ulp_close
from scipy import stats

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import random
from tf_numba.errors import DTypeError, ShapeError
from tf_numba.ops.special import erf_inv

N = 4000
KEY = random.key(2024)


def _ks(samples, cdf, *args):
    result = stats.kstest(np.asarray(samples).ravel(), cdf, args=args)
    assert result.pvalue > 1e-4, result


# ---------------------------------------------------------------- JAX's bits

@pytest.fixture(scope="module")
def jr():
    return pytest.importorskip("jax").random


@pytest.mark.parametrize("seed", [0, 42, 2 ** 31 - 1, 2 ** 40 + 5])
def test_keys_split_fold_in_and_bits_equal_jax(jr, seed):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):    # 64-bit seeds as JAX x64 takes them
        jk = jr.PRNGKey(seed)
    k = random.key(seed)
    np.testing.assert_array_equal(k, np.asarray(jk))
    np.testing.assert_array_equal(random.split(k), np.asarray(jr.split(jk)))
    np.testing.assert_array_equal(random.split(k, (2, 3)), np.asarray(jr.split(jk, (2, 3))))
    np.testing.assert_array_equal(random.fold_in(k, 12345), np.asarray(jr.fold_in(jk, 12345)))
    for shape in [(), (7,), (3, 5)]:
        np.testing.assert_array_equal(random.bits(k, shape), np.asarray(jr.bits(jk, shape)))


def test_samplers_equal_jax_bit_for_bit(jr):
    jax = pytest.importorskip("jax")
    k, jk = random.key(7), jr.PRNGKey(7)
    f32 = np.float32
    p = np.array([0.1, 0.2, 0.3, 0.4], f32)
    pairs = [
        (random.uniform(k, (9,), f32), jr.uniform(jk, (9,), f32)),
        (random.bernoulli(k, f32(0.3), (50,)), jr.bernoulli(jk, 0.3, (50,))),
        (random.randint(k, (20,), -5, 1000, np.int32), jr.randint(jk, (20,), -5, 1000)),
        (random.permutation(k, 50), jr.permutation(jk, 50)),
        (random.shuffle(k, np.arange(12).reshape(3, 4), 1),
         jr.permutation(jk, np.arange(12).reshape(3, 4), 1, independent=True)),
        (random.choice(k, 10, (3,)), jr.choice(jk, 10, (3,))),
        (random.choice(k, 10, (4,), replace=False), jr.choice(jk, 10, (4,), replace=False)),
        (random.choice(k, 4, (6,), p=p), jr.choice(jk, 4, (6,), p=p)),
        (random.choice(k, 4, (3,), replace=False, p=p),
         jr.choice(jk, 4, (3,), replace=False, p=p)),
    ]
    for i, (ours, theirs) in enumerate(pairs):
        np.testing.assert_array_equal(ours, np.asarray(theirs), err_msg=str(i))
    with jax.enable_x64(True):
        jk = jr.PRNGKey(7)
        np.testing.assert_array_equal(random.uniform(k, (9,)),
                                      np.asarray(jr.uniform(jk, (9,), np.float64)))
        np.testing.assert_allclose(random.exponential(k, (9,)),
                                   np.asarray(jr.exponential(jk, (9,), np.float64)), rtol=1e-15)
        np.testing.assert_allclose(random.normal(k, (9,)),
                                   np.asarray(jr.normal(jk, (9,), np.float64)), rtol=1e-13)


def test_log_and_erfinv_samplers_agree_with_jax_to_ulps(jr):
    k, jk = random.key(3), jr.PRNGKey(3)
    f32 = np.float32
    # JAX's uniform on [lo, hi) may round floats * (hi - lo) + lo as one fused multiply-add
    for ours, theirs in [(random.uniform(k, (200,), f32, -2.0, 3.0),
                          jr.uniform(jk, (200,), f32, -2.0, 3.0)),
                         (random.normal(k, (200,), f32), jr.normal(jk, (200,))),
                         (random.exponential(k, (200,), f32), jr.exponential(jk, (200,))),
                         (random.gumbel(k, (200,), f32), jr.gumbel(jk, (200,))),
                         (random.laplace(k, (200,), f32), jr.laplace(jk, (200,))),
                         (random.logistic(k, (200,), f32), jr.logistic(jk, (200,))),
                         (random.truncated_normal(k, -1.0, 2.0, (200,), f32),
                          jr.truncated_normal(jk, -1.0, 2.0, (200,)))]:
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, np.asarray(theirs), rtol=2e-6, atol=2e-6)


# ---------------------------------------------------------------- distributions

CONTINUOUS = {
    "uniform": (lambda k: random.uniform(k, (N,), minval=-1.0, maxval=3.0), "uniform",
                (-1.0, 4.0)),
    "normal": (lambda k: random.normal(k, (N,)), "norm", ()),
    "normal32": (lambda k: random.normal(k, (N,), np.float32), "norm", ()),
    "truncated_normal": (lambda k: random.truncated_normal(k, -0.5, 1.5, (N,)), "truncnorm",
                         (-0.5, 1.5)),
    "exponential": (lambda k: random.exponential(k, (N,)), "expon", ()),
    "gumbel": (lambda k: random.gumbel(k, (N,)), "gumbel_r", ()),
    "laplace": (lambda k: random.laplace(k, (N,)), "laplace", ()),
    "logistic": (lambda k: random.logistic(k, (N,)), "logistic", ()),
    "gamma_small": (lambda k: random.gamma(k, 0.3, (N,)), "gamma", (0.3,)),
    "gamma": (lambda k: random.gamma(k, 4.5, (N,)), "gamma", (4.5,)),
    "beta": (lambda k: random.beta(k, 2.0, 0.7, (N,)), "beta", (2.0, 0.7)),
    "t": (lambda k: random.t(k, 3.0, (N,)), "t", (3.0,)),
    "dirichlet_marginal": (lambda k: random.dirichlet(k, np.array([1.5, 2.0, 0.5]), (N,))[:, 0],
                           "beta", (1.5, 2.5)),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_sampler_passes_ks(name):
    draw, dist, args = CONTINUOUS[name]
    _ks(draw(random.fold_in(KEY, len(name))), dist, *args)


def test_multivariate_normal_moments_and_whitened_ks():
    mean = np.array([1.0, -2.0, 0.5])
    a = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, -0.4], [0.0, -0.4, 0.7]])
    for method in ("cholesky", "eigh", "svd"):
        x = random.multivariate_normal(KEY, mean, a, (N,), method=method)
        assert x.shape == (N, 3)
        np.testing.assert_allclose(x.mean(0), mean, atol=4 * np.sqrt(a.diagonal().max() / N))
        np.testing.assert_allclose(np.cov(x.T), a, atol=0.12)
        white = np.linalg.solve(np.linalg.cholesky(a), (x - mean).T)
        _ks(white, "norm")


def test_discrete_samplers_match_their_pmfs():
    def chi2(counts, probs):
        expected = probs * counts.sum()
        assert stats.chisquare(counts, expected).pvalue > 1e-4
    r = random.randint(KEY, (N,), -3, 4)
    assert r.dtype == np.int64 and r.min() == -3 and r.max() == 3
    chi2(np.bincount(r + 3, minlength=7), np.full(7, 1 / 7))
    b = random.bernoulli(KEY, 0.3, (N,))
    assert b.dtype == np.bool_
    chi2(np.bincount(b.astype(int), minlength=2), np.array([0.7, 0.3]))
    logits = np.log(np.array([0.1, 0.5, 0.15, 0.25]))
    c = random.categorical(KEY, logits, shape=(N,))
    chi2(np.bincount(c, minlength=4), np.exp(logits))
    p = np.array([0.4, 0.1, 0.5])
    chi2(np.bincount(random.choice(KEY, 3, (N,), p=p), minlength=3), p)
    for lam in (0.7, 4.0, 35.0):
        x = random.poisson(random.fold_in(KEY, int(lam * 10)), lam, (N,))
        assert x.dtype == np.int64
        top = int(lam + 6 * math.sqrt(lam) + 5)
        counts = np.bincount(np.minimum(x, top), minlength=top + 1)
        probs = stats.poisson.pmf(np.arange(top + 1), lam)
        probs[-1] += stats.poisson.sf(top, lam)
        keep = probs * N > 5      # pool sparse tails into their neighbours
        chi2(np.append(counts[keep], counts[~keep].sum()),
             np.append(probs[keep], probs[~keep].sum()))


def test_permutations_are_permutations_and_uniform():
    x = np.arange(30).reshape(10, 3)
    p = random.permutation(KEY, x)
    assert sorted(p[:, 0]) == list(range(0, 30, 3)) and (p[:, 1] - p[:, 0] == 1).all()
    firsts = [int(random.permutation(random.fold_in(KEY, i), 5)[0]) for i in range(500)]
    assert stats.chisquare(np.bincount(firsts, minlength=5)).pvalue > 1e-4
    assert sorted(random.choice(KEY, 10, (10,), replace=False)) == list(range(10))


# ---------------------------------------------------------------- keys

def test_split_keys_give_independent_streams():
    keys = random.split(KEY, 64)
    assert len({tuple(k) for k in keys.tolist()}) == 64
    u = np.stack([random.uniform(k, (N // 4,)) for k in keys])
    corr = np.corrcoef(u)[np.triu_indices(64, 1)]
    # independent streams: correlations ~ N(0, 1/1000), max of 2016 below 5 sigma
    assert np.abs(corr).max() < 5 / math.sqrt(N // 4)
    _ks(u[:, 0], "uniform")      # across keys, first draws are uniform too
    a, b = random.split(KEY)
    assert not np.array_equal(random.bits(a, (4,)), random.bits(b, (4,)))
    assert not np.array_equal(random.fold_in(KEY, 1), random.fold_in(KEY, 2))


def test_same_key_same_numbers():
    np.testing.assert_array_equal(random.normal(KEY, (5,)), random.normal(KEY, (5,)))


def test_a_batch_of_keys_is_an_error_that_says_vmap():
    with pytest.raises(ShapeError, match="vmap"):
        random.normal(random.split(KEY, 3), (2,))
    with pytest.raises(Exception, match="integer"):
        random.key(1.5)


def test_a_float_key_is_a_dtype_error():
    with pytest.raises(DTypeError, match=r"a key is a \(2,\) integer array .* got float64"):
        random.normal(np.array([1.0, 2.0]), (3,))


@pytest.mark.parametrize("shape", [(2, -1), (2, 1.5), -3, "3"])
def test_a_shape_of_negative_or_fractional_lengths_is_an_error(shape):
    """As JAX, which refuses them: not an empty or truncated axis."""
    with pytest.raises(ShapeError, match=r"random.normal: shape must be a tuple of non-neg"):
        random.normal(KEY, shape)


def test_uint32_keys_from_jax_are_accepted():
    k = random.key(5)
    np.testing.assert_array_equal(random.bits(k.astype(np.uint32), (3,)), random.bits(k, (3,)))


# ---------------------------------------------------------------- transforms

def _draws(k):
    k1, k2 = random.split(k)
    return (random.uniform(k1, (500,)), random.randint(k2, (50,), 0, 100), k1,
            random.normal(k2, (500,), np.float32))


def test_eager_jit_and_vmap_give_the_same_bits():
    # keys, uniforms and integers to the bit; normal through the compiled log within 1 ulp
    def compiled(k):   # fewer Threefry streams than _draws: one kernel compile, kept small
        k1, k2 = random.split(k)
        return random.uniform(k1, (500,)), k1, random.normal(k2, (500,), np.float32)
    eager = compiled(KEY)
    jitted = tf.jit(compiled, tiered=False)(KEY)
    for a, b in zip(jitted, eager):
        assert np.asarray(a).dtype == np.asarray(b).dtype
    for a, b in zip(jitted[:2], eager[:2]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(jitted[2], eager[2], rtol=np.finfo(np.float32).eps, atol=0)
    keys = random.split(KEY, 3)
    batched = tf.vmap(_draws)(keys)
    for i, k in enumerate(keys):
        for a, b in zip(batched, _draws(k)):
            np.testing.assert_array_equal(a[i], b)


def test_traced_seed_and_fold_in_data():
    out = tf.vmap(lambda s: random.bits(random.key(s), (2,)))(np.array([0, 5, 2 ** 35]))
    for row, s in zip(out, [0, 5, 2 ** 35]):
        np.testing.assert_array_equal(row, random.bits(random.key(s), (2,)))
    steps = tf.vmap(lambda i: random.fold_in(KEY, i))(np.arange(3))
    for i in range(3):
        np.testing.assert_array_equal(steps[i], random.fold_in(KEY, i))


def test_reparameterized_samplers_are_differentiable():
    # uniform in its bounds: d/dlo = 1 - u, d/dhi = u
    u = random.uniform(KEY, (5,))
    g_lo, g_hi = tf.grad(lambda lo, hi: tnp.sum(random.uniform(KEY, (5,), minval=lo,
                                                               maxval=hi)),
                         argnums=(0, 1))(0.0, 1.0)
    assert g_lo == pytest.approx(np.sum(1 - u)) and g_hi == pytest.approx(np.sum(u))
    # multivariate normal: d sum(x) / d mean = number of draws per coordinate
    g = tf.grad(lambda m: tnp.sum(random.multivariate_normal(KEY, m, np.eye(2), (7,))))(
        np.zeros(2))
    np.testing.assert_allclose(g, [7.0, 7.0])
    # truncated normal in its bounds: finite differences with the same key
    f = lambda lo: tnp.sum(random.truncated_normal(KEY, lo, 2.0, (5,)))  # noqa: E731
    eps = 1e-6
    assert tf.grad(f)(-0.5) == pytest.approx((f(-0.5 + eps) - f(-0.5 - eps)) / (2 * eps),
                                              rel=1e-5)


def test_gamma_derivative_by_implicit_differentiation():
    # E[x] = a for x ~ Gamma(a): the mean of dx/da over many draws is 1
    a = 2.5
    grads = tf.vmap(tf.grad(lambda k, a: random.gamma(k, a), argnums=1), in_axes=(0, None))(
        random.split(KEY, 2000), a)
    assert np.mean(grads) == pytest.approx(1.0, abs=4 * np.std(grads) / math.sqrt(2000))
    # one draw: dx/da = -(dF/da) / pdf(x) with F = gammainc(a, x) held fixed, from SciPy
    from scipy import special
    for a in (0.4, 3.0):
        x = float(random.gamma(KEY, a))
        eps = 1e-6
        dF_da = (special.gammainc(a + eps, x) - special.gammainc(a - eps, x)) / (2 * eps)
        expected = -dF_da / stats.gamma.pdf(x, a)
        assert tf.grad(lambda a: random.gamma(KEY, a))(a) == pytest.approx(expected, rel=1e-6)


def _erfinv_points(dtype):
    """Uniform points and points towards +-1: all of erf_inv's ranges (w = -log(1 - x**2)
    up to 35 for float64: its third range starts at 16)."""
    rng = np.random.default_rng(0)
    tail = 1 - np.logspace(np.log10(np.finfo(dtype).eps), -1, 2000)
    return np.concatenate([rng.uniform(-1, 1, 50000), tail, -tail]).astype(dtype)


@pytest.mark.parametrize("dtype,ulps", [(np.float32, 2.5), (np.float64, 4.0)])
def test_erf_inv_eager_and_compiled_are_within_a_few_ulps_of_scipy(dtype, ulps):
    from scipy import special
    x = _erfinv_points(dtype)
    exact = special.erfinv(x.astype(np.float64))
    # the compiled loop evaluates the outer ranges in a second pass over the values
    # that need them: shuffled, so the chunks it works in mix both kinds
    order = np.random.default_rng(1).permutation(x.size)
    compiled = tf.jit(erf_inv, tiered=False)
    for got in (erf_inv(x), compiled(x[order])[np.argsort(order)]):
        assert got.dtype == dtype
        assert np.max(np.abs(got - exact) / np.abs(exact)) < ulps * np.finfo(dtype).eps


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_erf_inv_takes_any_layout_and_rank_zero(dtype):
    # the same bits as the NumPy impl but for its log (vmath's, within an ulp of NumPy's)
    x = _erfinv_points(dtype)[-4000:].reshape(80, 50)
    eager = erf_inv(x)
    compiled = tf.jit(lambda a: (erf_inv(a.T), erf_inv(a[0, -1])),
                      tiered=False)
    matrix, scalar = compiled(x)
    np.testing.assert_allclose(matrix, eager.T, rtol=2 * np.finfo(dtype).eps, atol=0)
    np.testing.assert_allclose(scalar, eager[0, -1], rtol=2 * np.finfo(dtype).eps, atol=0)
    assert np.asarray(scalar).shape == () and matrix.dtype == dtype


# ---------------------------------------------------------------- np.random while tracing

def test_numpy_random_in_a_traced_function_warns_at_the_users_line():
    from tf_numba.core.rng_watch import NumpyRandomInTraceWarning

    def noisy(x):
        return x + np.random.normal(size=x.shape)
    with pytest.warns(NumpyRandomInTraceWarning, match="tf_numba.random") as record:
        tf.make_program(noisy)(np.ones(3))
    assert record[0].filename == __file__
    with pytest.warns(NumpyRandomInTraceWarning):
        tf.grad(lambda x: tnp.sum(noisy(x)))(np.ones(3))


def test_tf_random_and_numpy_outside_the_trace_do_not_warn():
    noise = np.random.normal(size=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.make_program(lambda x, k: x + random.normal(k, (3,)) + noise)(np.ones(3), KEY)


def test_gamma_of_a_non_positive_shape_is_nan_and_keeps_the_others_bits():
    key = tf.random.key(3)
    good = np.array([2.5, 3.0, 0.5, 1.0])
    bad = np.array([2.5, -1.0, 0.5, 0.0])
    with np.errstate(all="raise"):
        got = tf.random.gamma(key, bad)
    want = tf.random.gamma(key, good)
    assert np.isnan(got[[1, 3]]).all()
    np.testing.assert_array_equal(got[[0, 2]], want[[0, 2]])
    np.testing.assert_array_equal(tf.jit(tf.random.gamma)(key, bad), got)


def test_compiled_gamma_takes_the_interpreters_decisions_within_ulps():
    # every accept/reject decision of the rejection loop as NumPy takes it (one differing
    # decision gives another sample, far beyond ulps); the logs are vmath's and NumPy's
    key, shapes = tf.random.key(0), np.linspace(0.5, 5.0, 1000)
    assert_ulp_close(tf.jit(tf.random.gamma, tiered=False)(key, shapes),
                     tf.random.gamma(key, shapes), ulps=4)


def test_permutation_of_a_float_length_is_an_error():
    with pytest.raises(DTypeError, match="integer .* got float 5.0"):
        tf.random.permutation(tf.random.key(0), 5.0)


@pytest.mark.parametrize("n, m", [(4, 4), (3, 5), (5, 2)])
def test_orthogonal_is_haar_distributed_and_orthonormal(n, m):
    q = random.orthogonal(KEY, n, (N,), m=m)
    assert q.shape == (N, n, m) and q.dtype == np.float64
    gram = q @ np.swapaxes(q, -1, -2) if n <= m else np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(min(n, m)), gram.shape),
                               atol=1e-13)
    # Haar: every entry has mean 0 and variance 1/max(n, m); for square Q, tr Q has mean 0
    # and mean square 1 (Diaconis and Shahshahani 1994). QR without the sign fix fails both.
    se = math.sqrt(1 / max(n, m) / N)
    assert np.abs(q.mean(axis=0)).max() < 5 * se
    np.testing.assert_allclose(q.var(axis=0), 1 / max(n, m), rtol=0.1)
    if n == m:
        tr = np.trace(q, axis1=-2, axis2=-1)
        assert abs(tr.mean()) < 5 / math.sqrt(N) and abs(np.mean(tr ** 2) - 1) < 0.1


def test_orthogonal_equals_jax(jr):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        theirs = jax.jit(lambda k: jr.orthogonal(k, 3, (2,), np.float64, 5))(jr.PRNGKey(5))
    np.testing.assert_allclose(random.orthogonal(random.key(5), 3, (2,), m=5),
                               np.asarray(theirs), atol=1e-14)
