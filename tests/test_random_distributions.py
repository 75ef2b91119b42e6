"""The rest of jax.random's samplers, checked as distributions (a Kolmogorov-Smirnov test
against SciPy's CDF, chi-square tests of counts against SciPy's pmf, moments) rather than
bit for bit; fixed keys make each test deterministic."""
import numpy as np
import pytest
import scipy.stats as st

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import random

KEY = random.key(7)
N = 20000
P_MIN = 1e-3        # a correct sampler fails one of these tests once in a thousand keys

# name: (draw n samples, SciPy distribution with its parameters)
CONTINUOUS = {
    "cauchy": (lambda k: random.cauchy(k, (N,)), st.cauchy()),
    "lognormal": (lambda k: random.lognormal(k, 0.7, (N,)), st.lognorm(0.7)),
    "pareto": (lambda k: random.pareto(k, 2.5, (N,)), st.pareto(2.5)),
    "rayleigh": (lambda k: random.rayleigh(k, 1.5, (N,)), st.rayleigh(scale=1.5)),
    "weibull_min": (lambda k: random.weibull_min(k, 2.0, 1.7, (N,)),
                    st.weibull_min(1.7, scale=2.0)),
    "wald": (lambda k: random.wald(k, 1.3, (N,)), st.invgauss(1.3)),
    "triangular": (lambda k: random.triangular(k, -1.0, 0.5, 2.0, (N,)),
                   st.triang(0.5, loc=-1.0, scale=3.0)),
    "maxwell": (lambda k: random.maxwell(k, (N,)), st.maxwell()),
    "double_sided_maxwell": (lambda k: np.abs(random.double_sided_maxwell(k, 0.0, 1.0, (N,))),
                             st.maxwell()),
    "loggamma": (lambda k: np.exp(random.loggamma(k, 0.3, (N,))), st.gamma(0.3)),
    "chisquare": (lambda k: random.chisquare(k, 3.5, (N,)), st.chi2(3.5)),
    "f": (lambda k: random.f(k, 3.0, 7.0, (N,)), st.f(3.0, 7.0)),
    "generalized_normal": (lambda k: random.generalized_normal(k, 1.5, (N,)),
                           st.gennorm(1.5)),
    "ball_radius_cubed": (lambda k: np.linalg.norm(random.ball(k, 3, 2, (N,)), axis=-1) ** 3,
                          st.uniform()),
    "binomial_normal_limit": (  # a large count: BTRS, standardized
        lambda k: (random.binomial(k, 4000.0, 0.3, (N,)) - 1200) / np.sqrt(840),
        None),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_samples_follow_scipys_distribution(name):
    draw, dist = CONTINUOUS[name]
    x = np.asarray(draw(KEY)).ravel()
    assert x.shape == (N,) and np.all(np.isfinite(x))
    if dist is None:
        assert abs(x.mean()) < 0.05 and abs(x.std() - 1) < 0.05
        return
    assert st.kstest(x, dist.cdf).pvalue > P_MIN, name


def _chisquare_counts(x, pmf, support):
    counts = np.array([np.sum(x == v) for v in support])
    expected = pmf(support) * len(x)
    keep = expected > 5
    return st.chisquare(counts[keep], expected[keep] * counts[keep].sum()
                        / expected[keep].sum()).pvalue


@pytest.mark.parametrize("n, p", [(5, 0.3), (40, 0.2), (50, 0.8), (300, 0.5), (1000, 0.02)])
def test_binomial_counts_follow_scipys_pmf(n, p):
    x = random.binomial(KEY, n, p, (N,))
    assert x.dtype == np.float64 and np.all(x == np.floor(x)) and x.min() >= 0 and x.max() <= n
    assert _chisquare_counts(x, st.binom(n, p).pmf, np.arange(n + 1)) > P_MIN


def test_binomial_edges_and_invalid_parameters():
    x = random.binomial(KEY, 7.0, np.array([0.0, 1.0, 1.5, -0.1, np.nan]))
    np.testing.assert_array_equal(x[:2], [0.0, 7.0])
    assert np.all(np.isnan(x[2:]))
    assert random.binomial(KEY, np.array([3.0, 30.0]), 0.5, (4, 2)).shape == (4, 2)


def test_geometric_and_rademacher():
    g = random.geometric(KEY, 0.3, (N,))
    assert g.dtype == np.int64 and g.min() >= 1
    assert _chisquare_counts(g, st.geom(0.3).pmf, np.arange(1, 30)) > P_MIN
    r = random.rademacher(KEY, (N,))
    assert set(np.unique(r)) == {-1, 1} and abs(r.mean()) < 4 / np.sqrt(N)


def test_multinomial_counts_sum_to_n_and_have_the_right_marginals():
    p = np.array([0.2, 0.5, 0.3])
    m = random.multinomial(KEY, 20.0, p, shape=(N, 3))
    assert m.shape == (N, 3) and np.all(m.sum(-1) == 20)
    for i in range(3):
        assert _chisquare_counts(m[:, i], st.binom(20, p[i]).pmf, np.arange(21)) > P_MIN
    assert random.multinomial(KEY, np.array([5.0, 9.0]), np.tile(p, (2, 1))).sum(-1).tolist() \
        == [5.0, 9.0]


def test_loggamma_reaches_below_the_floats_and_differentiates_implicitly():
    tiny = random.loggamma(KEY, 1e-3, (1000,))
    assert np.all(np.isfinite(tiny)) and tiny.min() < -1000     # gamma itself underflows
    # d x / d a = -(dF/da) / pdf(x) at the sample x (the CDF F(x; a) held fixed), here from
    # SciPy's CDF by central differences
    import scipy.special as sps
    a, h = 0.7, 1e-6
    x = np.exp(random.loggamma(KEY, a, (4,)))
    dF = (sps.gammainc(a + h, x) - sps.gammainc(a - h, x)) / (2 * h)
    want = -dF / st.gamma(a).pdf(x)
    np.testing.assert_allclose(tf.jacfwd(lambda a: tnp.exp(random.loggamma(KEY, a, (4,))))(a),
                               want, rtol=1e-6)
    np.testing.assert_allclose(tf.grad(lambda a: tnp.sum(random.loggamma(KEY, a, (4,))))(a),
                               np.sum(want / x), rtol=1e-6)


def test_shapes_follow_jax_s_rules():
    assert random.double_sided_maxwell(KEY, np.zeros(3), 1.0).shape == (3, 3)
    assert random.double_sided_maxwell(KEY, 0.0, 1.0, (2,)).shape == (2,)
    assert random.weibull_min(KEY, np.ones(3), 2.0).shape == (3,)
    assert random.ball(KEY, 4, 1, (5,)).shape == (5, 4)
    assert random.maxwell(KEY, (2, 3)).shape == (2, 3)
    assert random.pareto(KEY, np.array([1.0, 2.0])).shape == (2,)


def test_samplers_run_under_jit_and_vmap_as_eagerly():
    keys = random.split(KEY, 3)
    for sample in (lambda k: random.binomial(k, 30.0, 0.4, (4,)),
                   lambda k: random.chisquare(k, 2.5, (4,)),
                   lambda k: random.triangular(k, 0.0, 0.2, 1.0, (4,))):
        eager = np.stack([sample(k) for k in keys])
        np.testing.assert_allclose(tf.vmap(sample)(keys), eager, rtol=1e-12)
        np.testing.assert_allclose(tf.jit(sample)(keys[0]), eager[0], rtol=1e-12)


def test_key_data_round_trips_and_jax_key_data_is_accepted():
    k = random.key(3)
    np.testing.assert_array_equal(random.wrap_key_data(random.key_data(k)), k)
    assert random.clone(k) is k and random.key_impl(k) == "threefry2x32"
    words = np.array([0, 3], np.uint32)             # jax.random.key_data(jax.random.key(3))
    np.testing.assert_array_equal(random.uniform(random.wrap_key_data(words), (3,)),
                                  random.uniform(k, (3,)))
