"""tf_numba.scipy.stats against scipy.stats: every method of every distribution at points
spread over its quantiles (both tails included), outside the support and at inf/NaN, for
several parameter sets, within the accuracy each distribution states (the figures that
docs/scipy.md prints); float32; broadcasting; NaN for invalid parameters; ShapeError;
first and second derivatives against finite differences; jit equal to the interpreter."""
import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as st

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError, UnsupportedError
from tf_numba.scipy import stats

from ad_checks import check_grads

INF = np.inf
LOG_METHODS = {"logpdf", "logpmf", "logcdf", "logsf"}
QUANTILE_METHODS = {"ppf", "isf"}
TAIL_QUANTILES = np.array([1e-12, 1e-6, 0.01, 0.2, 0.5, 0.8, 0.99, 1 - 1e-6, 1 - 1e-12])

# name: parameter sets (the shape parameters), from ordinary to extreme
CONTINUOUS = {
    "norm": [()], "expon": [()], "laplace": [()], "logistic": [()], "cauchy": [()],
    "uniform": [()], "gumbel_r": [()], "gumbel_l": [()],
    "pareto": [(0.5,), (3.0,), (40.0,)],
    "lognorm": [(0.1,), (1.0,), (5.0,)],
    "truncnorm": [(-1.0, 2.0), (-INF, 0.5), (3.0, 5.0), (-8.0, -6.0), (-0.5, INF),
                  (10.0, 11.0)],
    "t": [(0.5,), (3.5,), (40.0,), (1e6,), (INF,)],
    "chi2": [(0.5,), (3.0,), (50.0,), (1e3,)],
    "gamma": [(0.1,), (1.0,), (7.5,), (500.0,)],
    "beta": [(0.5, 0.5), (2.0, 3.0), (0.2, 50.0), (100.0, 200.0)],
    "gennorm": [(0.5,), (1.0,), (2.0,), (8.0,)],
    "vonmises": [(0.0,), (0.5,), (5.0,), (500.0,)],
    "wrapcauchy": [(0.01,), (0.5,), (0.99,)],
}
DISCRETE = {
    "bernoulli": [(0.0,), (0.3,), (1.0,)],
    "poisson": [(0.0,), (0.5,), (10.0,), (1e3,)],
    "geom": [(0.01,), (0.3,), (1.0,)],
    "binom": [(0.0, 0.3), (1.0, 0.5), (10.0, 0.3), (100.0, 0.01), (100.0, 1.0)],
    "nbinom": [(0.5, 0.3), (5.0, 0.9), (30.0, 0.05), (2.0, 1.0)],
    "betabinom": [(10.0, 2.5, 1.5), (100.0, 0.3, 0.7), (0.0, 1.0, 1.0)],
}


def _continuous_points(name, params, rng):
    ref = getattr(st, name)
    lo, hi = ref.support(*params)
    with np.errstate(all="ignore"):
        x = ref.ppf(TAIL_QUANTILES, *params)
        inner = ref.ppf(rng.uniform(0.02, 0.98, 6), *params)
    return np.concatenate([x, inner, [lo, hi, lo - 1, hi + 1, -INF, INF, np.nan]])


def _discrete_points(name, params):
    ref = getattr(st, name)
    lo, hi = ref.support(*params)
    k = np.unique(ref.ppf([1e-9, 0.01, 0.2, 0.5, 0.8, 0.99, 1 - 1e-9], *params))
    k = k[np.isfinite(k)]
    return np.concatenate([k, k + 0.5, [lo - 1, lo, min(hi, 1e9), hi + 1, -INF, INF, np.nan]])


def _quantiles():
    return np.concatenate([[0.0, 1.0, -0.5, 1.5, np.nan], TAIL_QUANTILES, [0.3, 0.45, 0.7]])


def _tolerance(dist, method):
    return dist.accuracy[method]


def assert_matches(got, want, method, tol, what):
    """``|got - want| <= tol * scale`` (scale ``max(|want|, 1)`` for logs and quantiles,
    ``|want|`` for probabilities), the same NaNs and infinities, except where SciPy
    underflows: its ``-inf`` (or 0) against a value of ours below ``log(tiny)`` (or tiny)."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, what
    log_like = method in LOG_METHODS or method in QUANTILE_METHODS
    underflow = (want == -INF) & (got < -700) if method in LOG_METHODS else \
        (want == 0) & (np.abs(got) < 1e-300)
    same = (got == want) | (np.isnan(got) & np.isnan(want)) | underflow
    finite = np.isfinite(want) & np.isfinite(got) & ~same
    scale = np.maximum(np.abs(want), 1.0) if log_like else np.abs(want) + 1e-300
    with np.errstate(invalid="ignore"):
        ok = same | (finite & (np.abs(got - want) <= tol * scale))
    if not ok.all():
        i = np.flatnonzero(~ok)
        raise AssertionError(f"{what}: tolerance {tol:g}\n  at  {i}\n  got  {got[i]!r}\n"
                             f"  want {want[i]!r}")


def _methods(dist):
    return [m for m in dist.methods if dist.provided(m)]


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_continuous_values_match_scipy(name):
    dist, ref = getattr(stats, name), getattr(st, name)
    rng = np.random.default_rng(0)
    for params in CONTINUOUS[name]:
        x = _continuous_points(name, params, rng)
        for method in _methods(dist):
            pts = _quantiles() if method in QUANTILE_METHODS else x
            for loc, scale in ((0.0, 1.0), (0.3, 1.7)):
                with np.errstate(all="ignore"):
                    want = getattr(ref, method)(pts, *params, loc=loc, scale=scale)
                got = getattr(dist, method)(pts, *params, loc=loc, scale=scale)
                assert got.dtype == np.float64
                assert_matches(got, want, method, _tolerance(dist, method),
                               f"{name}{params}.{method} loc={loc} scale={scale}")


@pytest.mark.parametrize("name", sorted(DISCRETE))
def test_discrete_values_match_scipy(name):
    dist, ref = getattr(stats, name), getattr(st, name)
    for params in DISCRETE[name]:
        k = _discrete_points(name, params)
        for method in _methods(dist):
            pts = _quantiles() if method in QUANTILE_METHODS else k
            for loc in (0, 2):
                with np.errstate(all="ignore"):
                    want = getattr(ref, method)(pts, *params, loc=loc)
                got = getattr(dist, method)(pts, *params, loc=loc)
                assert_matches(got, want, method, _tolerance(dist, method),
                               f"{name}{params}.{method} loc={loc}")


def test_every_provided_method_states_its_accuracy():
    for name in stats.CONTINUOUS + stats.DISCRETE + stats.MULTIVARIATE:
        dist = getattr(stats, name)
        assert set(dist.accuracy) == set(_methods(dist)) if hasattr(dist, "provided") \
            else set(dist.accuracy) == set(dist.methods), name


@pytest.mark.parametrize("name", ["norm", "gamma", "t", "beta", "binom", "poisson", "cauchy",
                                  "gennorm", "vonmises", "betabinom", "truncnorm"])
def test_float32_in_float32_out_near_scipy(name):
    dist, ref = getattr(stats, name), getattr(st, name)
    sets = CONTINUOUS.get(name) or DISCRETE[name]
    params = sets[min(1, len(sets) - 1)]
    if name in DISCRETE:
        x = _discrete_points(name, params)[:-3].astype(np.float32)
    else:
        x = ref.ppf(np.linspace(0.01, 0.99, 9), *params).astype(np.float32)
    p32 = tuple(np.float32(v) for v in params)
    for method in _methods(dist):
        pts = np.linspace(0.01, 0.99, 9).astype(np.float32) if method in QUANTILE_METHODS \
            else x
        got = getattr(dist, method)(pts, *p32)
        assert got.dtype == np.float32, (name, method)
        want = getattr(ref, method)(pts.astype(np.float64), *params)
        assert_matches(got, want, method, 2e-4, f"{name} float32 {method}")


def test_far_tails_where_scipy_underflows():
    # laplace: SciPy's logcdf is log(cdf), -inf beyond |z| ~ 745; ours is -|z| - log 2
    x = np.array([-800.0, -1e4])
    np.testing.assert_allclose(stats.laplace.logcdf(x), x - np.log(2), rtol=1e-15)
    np.testing.assert_allclose(stats.laplace.logsf(-x), x - np.log(2), rtol=1e-15)
    # cauchy's ppf in the tails: -1/tan(pi q) ~ -1/(pi q), full relative precision
    q = np.array([1e-20, 1e-300])
    np.testing.assert_allclose(stats.cauchy.ppf(q), -1 / (np.pi * q), rtol=1e-15)
    np.testing.assert_allclose(stats.cauchy.logpdf(1e200), -np.log(np.pi) - 400 * np.log(10),
                               rtol=1e-15)
    # poisson's logcdf near 0: log1p(-sf) where SciPy rounds log(cdf) to 0
    np.testing.assert_allclose(stats.poisson.logcdf(40, 2.5), -st.poisson.sf(40, 2.5),
                               rtol=1e-12)
    # expon's logcdf for tiny x: log(x), not log of a rounded 1 - exp(-x)
    np.testing.assert_allclose(stats.expon.logcdf(1e-20), np.log(1e-20), rtol=1e-15)


def test_quantiles_far_out_in_the_tails():
    # truncnorm beyond |a| ~ 37, where ndtr(a) underflows: ndtri_exp of the log target
    q = np.array([1e-12, 0.01, 0.5, 0.99, 1 - 1e-9])
    for a, b in ((50.0, 51.0), (-61.0, -60.0), (40.0, np.inf), (-np.inf, -45.0)):
        # (isf's ndtr(b) - q mass cancels for q near 1, in SciPy's formula too)
        for method, rtol in (("ppf", 1e-13), ("isf", 1e-9)):
            got = getattr(stats.truncnorm, method)(q, a, b)
            assert np.all((got >= a) & (got <= b))
            np.testing.assert_allclose(got, getattr(st.truncnorm, method)(q, a, b),
                                       rtol=rtol)
        g = tf.grad(lambda v, lo: tnp.sum(stats.truncnorm.ppf(v, lo, lo + 1.0)),
                    argnums=(0, 1))(q, a if np.isfinite(a) else b - 1.0)
        assert np.all(np.isfinite(g[0])) and np.isfinite(g[1])
    # chi2/gamma isf and t ppf at tiny tail probabilities, large df
    q = np.array([1e-300, 1e-100, 1e-20])
    np.testing.assert_allclose(stats.chi2.isf(q, 3.0), st.chi2.isf(q, 3.0), rtol=1e-14)
    np.testing.assert_allclose(stats.gamma.isf(q, 0.2), st.gamma.isf(q, 0.2), rtol=1e-14)
    for df in (0.3, 40.0, 1e9):
        np.testing.assert_allclose(stats.t.ppf(q[2:], df), st.t.ppf(q[2:], df), rtol=1e-12)
        np.testing.assert_allclose(stats.t.isf(q[2:], df), st.t.isf(q[2:], df), rtol=1e-12)
    # beyond SciPy's betaincinv (it stops at the smallest normal; SciPy's t.ppf(1e-300,
    # 3.5) is +inf): I_x(a, 1/2) ~ x^a / (a beta(a, 1/2)), t ~ -sqrt(df / x)
    for df, p in ((3.5, 1e-300), (1.0, 1e-300), (0.3, 1e-20)):
        a = df / 2
        log_x = (np.log(2 * p) + np.log(a) + sps.betaln(a, 0.5)) / a
        np.testing.assert_allclose(stats.t.ppf(p, df), -np.exp(0.5 * (np.log(df) - log_x)),
                                   rtol=1e-13)
    assert stats.t.ppf(1e-100, 0.3) == -np.inf        # |t| ~ 1e332
    # its derivatives: 1 / pdf in q, and in df a central difference (log scale)
    q, df = np.array([1e-30, 1e-80]), 0.5
    gq, gd = tf.grad(lambda v, d: tnp.sum(tnp.log(-stats.t.ppf(v, d))), argnums=(0, 1))(q, df)
    log_t = np.log(-stats.t.ppf(q, df))
    log_pdf = (sps.gammaln((df + 1) / 2) - sps.gammaln(df / 2) - 0.5 * np.log(df * np.pi)
               - (df + 1) / 2 * (2 * log_t - np.log(df)))     # t**2 / df overflows
    np.testing.assert_allclose(gq, -np.exp(-log_t - log_pdf), rtol=1e-12)
    h = 1e-6
    fd = (np.log(-stats.t.ppf(q, df + h)) - np.log(-stats.t.ppf(q, df - h))) / (2 * h)
    np.testing.assert_allclose(gd, np.sum(fd), rtol=1e-7)


def test_quantile_at_the_median_and_its_derivative():
    # t and gennorm take the median apart (sqrt and x**(1/beta) have no derivative at 0):
    # 0, with slope 1 / pdf(0)
    for dist, shape in ((stats.t, 3.5), (stats.gennorm, 1.6)):
        d = tf.grad(lambda q: dist.ppf(q, shape))(0.5)
        assert dist.ppf(0.5, shape) == 0.0
        np.testing.assert_allclose(d, 1 / dist.pdf(0.0, shape), rtol=1e-13)
        h = 1e-6
        np.testing.assert_allclose(d, (dist.ppf(0.5 + h, shape) - dist.ppf(0.5 - h, shape))
                                   / (2 * h), rtol=1e-7)
        # the edges run on the median: their derivatives are 0, not NaN
        g = tf.grad(lambda q: tnp.sum(dist.ppf(q, shape)))(np.array([0.0, 1.0, 1.5]))
        np.testing.assert_array_equal(g, 0.0)


def test_discrete_quantiles_are_step_functions_without_derivative():
    for name, params in (("poisson", (3.5,)), ("binom", (10.0, 0.3)),
                         ("nbinom", (3.5, 0.4)), ("betabinom", (10.0, 2.5, 1.5)),
                         ("geom", (0.3,))):
        dist = getattr(stats, name)
        for method in ("ppf", "isf"):
            fn = getattr(dist, method)
            g = tf.grad(lambda q, *ps: tnp.sum(fn(q, *ps)),
                        argnums=tuple(range(1 + len(params))))(
                np.array([0.1, 0.5, 0.95]), *(np.float64(v) for v in params))
            for gi in g:
                np.testing.assert_array_equal(gi, 0.0)
            # the least k whose cdf reaches q (whose sf falls to it)
            q = np.array([0.05, 0.5, 0.93])
            k = fn(q, *params)
            if method == "ppf":
                assert np.all(dist.cdf(k, *params) >= q) and np.all(dist.cdf(k - 1, *params) < q)
            else:
                assert np.all(dist.sf(k, *params) <= q) and np.all(dist.sf(k - 1, *params) > q)


def _central(f, x, h):
    """Fourth-order central difference (error O(h^4))."""
    return (8 * (f(x + h) - f(x - h)) - (f(x + 2 * h) - f(x - 2 * h))) / (12 * h)


def test_vonmises_quantiles_invert_the_cdf_with_inverse_function_derivatives():
    # the series (kappa < 50) and the normal approximation; d/dq = 1 / F_x, d/dkappa =
    # -F_kappa / F_x against differences of SciPy's root search
    q = np.array([0.01, 0.3, 0.5, 0.77, 0.95, 0.2, 0.6, 1e-6])
    kappa = np.array([0.3, 2.0, 5.0, 10.0, 30.0, 60.0, 0.0, 8.0])
    x = stats.vonmises.ppf(q, kappa)
    np.testing.assert_allclose(st.vonmises.cdf(x, kappa), q, rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(stats.vonmises.isf(q, kappa), -x)
    gq, gk = tf.grad(lambda a, b: tnp.sum(stats.vonmises.ppf(a, b)), argnums=(0, 1))(q, kappa)
    # 1 / the cdf's slope: the pdf's below kappa = 50 (to the series' 2e-8 in the tails),
    # above it the slope of SciPy's normal approximation
    small = kappa < 50
    np.testing.assert_allclose(gq[small], 1 / st.vonmises.pdf(x, kappa)[small], rtol=1e-7)
    np.testing.assert_allclose(gq, _central(lambda a: st.vonmises.ppf(a, kappa), q,
                                            1e-3 * np.minimum(q, 1 - q)), rtol=1e-6)
    # (SciPy's kappa = 0 is the uniform's boundary: differences from above)
    k = np.maximum(kappa, 1e-2)
    np.testing.assert_allclose(gk[:-2], _central(lambda b: st.vonmises.ppf(q, b), k, 1e-3)[:-2],
                               rtol=1e-8)
    forward = (st.vonmises.ppf(q[-2], 1e-7) - st.vonmises.ppf(q[-2], 0.0)) / 1e-7
    np.testing.assert_allclose(gk[-2], forward, rtol=1e-5)
    np.testing.assert_allclose(gk[-1], _central(lambda b: st.vonmises.ppf(q[-1], b), 8.0, 1e-3),
                               rtol=1e-6)


def test_vonmises_cdf_counts_whole_turns_and_matches_the_integral_of_the_pdf():
    x = np.array([-7.0, -3.0, 0.4, 2.5, 9.0])
    for kappa in (0.0, 0.7, 12.0, 80.0):
        np.testing.assert_allclose(stats.vonmises.cdf(x, kappa), st.vonmises.cdf(x, kappa),
                                   rtol=1e-14, atol=1e-300)
        np.testing.assert_allclose(stats.vonmises.cdf(x + 2 * np.pi, kappa),
                                   stats.vonmises.cdf(x, kappa) + 1, rtol=1e-13, atol=1e-15)
        # d/dx cdf = pdf, to the series' truncation (~1e-13 absolute); not for the normal
        # approximation above kappa = 50 (SciPy's too), off by ~1e-3 relative
        if kappa < 50:
            np.testing.assert_allclose(
                tf.grad(lambda v: tnp.sum(stats.vonmises.cdf(v, kappa)))(x),
                st.vonmises.pdf(x, kappa), rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- arguments

def test_parameters_broadcast_positionally_and_by_keyword():
    x = np.linspace(-2, 2, 3)[:, None]
    df = np.array([1.0, 4.0, 30.0, INF])
    got = stats.t.logpdf(x, df, 0.5, np.array([2.0]))
    assert got.shape == (3, 4)
    np.testing.assert_allclose(got, st.t.logpdf(x, df, 0.5, 2.0), rtol=1e-14)
    np.testing.assert_array_equal(stats.t.logpdf(x, df=df, scale=2.0, loc=0.5), got)
    np.testing.assert_allclose(stats.binom.pmf(np.arange(4)[:, None], [3, 5], 0.4),
                               st.binom.pmf(np.arange(4)[:, None], [3, 5], 0.4), rtol=1e-14)
    assert type(stats.norm.cdf(0.0)) is np.float64
    assert stats.expon.sf(np.array([1, 2])).dtype == np.float64      # ints become float64
    with pytest.raises(TypeError, match="df"):
        stats.t.logpdf(1.0)


def test_shape_mismatch_is_shape_error_naming_the_method():
    with pytest.raises(ShapeError, match=r"t\.cdf") as err:
        stats.t.cdf(np.ones(3), np.ones(4))
    assert "test_scipy_stats.py:" in str(err.value)        # the user's line
    with pytest.raises(ShapeError, match="multivariate_normal"):
        stats.multivariate_normal.logpdf(np.ones((2, 3)), np.zeros(2), np.eye(2))
    with pytest.raises(ShapeError, match="gaussian_kde"):
        data = np.random.default_rng(0).standard_normal((2, 5))
        stats.gaussian_kde(data).logpdf(np.ones((3, 4)))


INVALID = [
    ("norm", "logpdf", (1.0, 0.0, -1.0)), ("norm", "cdf", (1.0, 0.0, 0.0)),
    ("expon", "ppf", (0.5, 0.0, -2.0)), ("t", "logpdf", (1.0, -1.0)), ("t", "cdf", (1.0, 0.0)),
    ("gamma", "cdf", (1.0, -0.5)), ("beta", "logpdf", (0.5, 1.0, -1.0)),
    ("truncnorm", "logpdf", (0.0, 1.0, -1.0)), ("pareto", "sf", (2.0, 0.0)),
    ("vonmises", "logpdf", (0.0, -1.0)), ("lognorm", "ppf", (0.5, -1.0)),
    ("bernoulli", "pmf", (1, 1.5)), ("binom", "logpmf", (1, 2.5, 0.5)),
    ("binom", "cdf", (1, 3, -0.1)), ("poisson", "sf", (1, -1.0)), ("geom", "ppf", (0.5, 0.0)),
    ("nbinom", "pmf", (1, 0.0, 0.5)), ("betabinom", "logpmf", (1, 3, 0.0, 1.0)),
    ("t", "ppf", (0.3, -1.0)), ("gamma", "isf", (0.3, 0.0)), ("beta", "ppf", (0.3, 1.0, -1.0)),
    ("vonmises", "cdf", (0.5, -1.0)), ("betabinom", "cdf", (1, 3, 1.0, -1.0)),
    ("poisson", "ppf", (0.5, -1.0)), ("binom", "isf", (0.5, 3, 1.5)),
]


@pytest.mark.parametrize("name,method,args", INVALID)
def test_invalid_parameters_give_scipys_nan(name, method, args):
    with np.errstate(all="ignore"):
        want = getattr(getattr(st, name), method)(*args)
    fn = getattr(getattr(stats, name), method)
    assert np.isnan(want) and np.isnan(fn(*args))
    # traced too: NaN, not an exception
    out, tangent = tf.jvp(lambda v: fn(v, *args[1:]), (np.float64(args[0]),), (1.0,))
    assert np.isnan(out)
    # and a derivative in the parameters is NaN too, as JAX's (it never hides the NaN)
    params = tuple(np.float64(a) for a in args[1:])
    out, tangent = tf.jvp(lambda *p: fn(args[0], *p), params, (1.0,) * len(params))
    assert np.isnan(out) and np.isnan(tangent)
    grads = tf.grad(lambda *p: fn(args[0], *p), argnums=tuple(range(len(params))))(*params)
    assert np.isnan(grads).any()


def test_a_nan_parameter_or_point_gives_a_nan_derivative_and_valid_ones_stay_finite():
    # advi.py's funnel: a scale that underflows to 0 makes JAX's logpdf and its gradient
    # NaN; the optimizer must see the NaN, not a zero gradient
    g = tf.grad(lambda s: tnp.sum(stats.norm.logpdf(1.0, 0.0, s)))(np.array([0.0, 2.0]))
    assert np.isnan(g[0]) and g[1] == pytest.approx(-1 / 2.0 + 1 / 8.0, rel=1e-14)
    # in loc and the point too (JAX's are infinite there)
    g = tf.grad(lambda m, x: stats.norm.logpdf(x, m, 0.0), argnums=(0, 1))(0.0, 1.0)
    assert np.isnan(g).all()
    g = tf.grad(lambda x: tnp.sum(stats.expon.logpdf(x)))(np.array([np.nan, 1.0, -1.0]))
    assert np.isnan(g[0]) and g[1] == -1.0 and g[2] == 0.0
    g = tf.jit(tf.grad(lambda a: tnp.sum(stats.gamma.logpdf(1.5, a))))(np.array([-1.0, 2.0]))
    assert np.isnan(g[0]) and np.isfinite(g[1])


def test_methods_without_a_formula_raise_unsupported():
    from tf_numba.scipy.stats._distribution import Continuous

    class density_only(Continuous):
        name = "density_only"

        def _logpdf(self, z):
            return z * z * -0.5
    with pytest.raises(UnsupportedError, match=r"density_only\.ppf"):
        density_only().ppf(0.5)
    with pytest.raises(UnsupportedError, match=r"density_only\.isf"):
        density_only().isf(0.5)


# ---------------------------------------------------------------- derivatives

# name: (points, shape parameters, quantiles), away from kinks (laplace's 0) and edges
GRAD_CASES = {
    "norm": ([-0.3, 1.2], ()), "expon": ([0.4, 2.0], ()), "laplace": ([-0.8, 1.1], ()),
    "logistic": ([-0.8, 1.1], ()), "cauchy": ([-3.0, 0.4], ()), "uniform": ([0.5, 1.2], ()),
    "gumbel_r": ([-0.5, 1.5], ()), "gumbel_l": ([-0.5, 1.5], ()),
    "pareto": ([1.7, 3.0], (2.5,)), "lognorm": ([0.6, 2.2], (0.8,)),
    "truncnorm": ([-0.5, 0.9], (-1.2, 1.6)), "t": ([-0.7, 2.1], (3.7,)),
    "chi2": ([0.8, 3.1], (2.6,)), "gamma": ([0.7, 2.1], (1.7,)),
    "beta": ([0.4, 0.6], (1.8, 2.4)), "gennorm": ([-0.7, 1.3], (1.6,)),
    "vonmises": ([-0.7, 1.3], (2.2,)),
}


def _all_methods(dist, q):
    methods = [m for m in _methods(dist) if dist.provided(m) == "formula"]

    def fn(x, *params):
        return tuple(getattr(dist, m)(q if m in QUANTILE_METHODS else x, *params)
                     for m in methods)
    fn.__qualname__ = f"{dist.name}.{{{','.join(methods)}}}"
    return fn


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_continuous_second_derivatives_in_every_argument(name):
    dist = getattr(stats, name)
    x, params = GRAD_CASES[name]
    args = (np.array(x),) + tuple(np.array(v) for v in params) + (np.array(0.1),
                                                                  np.array(1.3))
    check_grads(_all_methods(dist, np.array([0.2, 0.7])), args, order=2, modes=("rev",))
    check_grads(dist.logpdf, args, order=2, modes=("fwd",))


DISCRETE_GRAD_CASES = {
    "bernoulli": ([0.0, 1.0], (0.3,)), "poisson": ([0.0, 3.0], (2.5,)),
    "geom": ([1.0, 4.0], (0.3,)), "binom": ([2.0, 7.0], (10.0, 0.3)),
    "nbinom": ([0.0, 6.0], (3.5, 0.4)), "betabinom": ([2.0, 7.0], (10.0, 2.5, 1.5)),
}
# the parameters that are real (binom's and betabinom's n are integers)
REAL_PARAMS = {"binom": (1,), "betabinom": (1, 2)}


@pytest.mark.parametrize("name", sorted(DISCRETE_GRAD_CASES))
def test_discrete_second_derivatives_in_the_real_parameters(name):
    dist = getattr(stats, name)
    k, params = DISCRETE_GRAD_CASES[name]
    real = REAL_PARAMS.get(name, tuple(range(len(params))))
    # logcdf and logsf are logs of these (and -inf where sf is 0 at the support's end)
    methods = [m for m in ("logpmf", "cdf", "sf") if dist.provided(m)]

    def fn(*reals):
        ps = list(params)
        for i, v in zip(real, reals):
            ps[i] = v
        return tuple(getattr(dist, m)(np.array(k), *ps) for m in methods)
    check_grads(fn, tuple(np.array(params[i]) for i in real), order=2)
    # k (and a count parameter such as binom's n) is integer-valued: derivative zero
    np.testing.assert_array_equal(
        tf.grad(lambda v: tnp.sum(dist.logpmf(v, *params)))(np.array(k)), 0.0)
    for i in sorted(set(range(len(params))) - set(real)):
        def at(v, i=i):
            ps = list(params)
            ps[i] = v
            return tnp.sum(dist.logpmf(np.array(k), *ps))
        assert tf.grad(at)(np.float64(params[i])) == 0.0


def test_gradient_of_norm_logpdf_matches_closed_form():
    x, mu, s = np.array([-1.0, 0.5, 3.0]), 0.2, 1.7
    g = tf.grad(lambda m, sd: tnp.sum(stats.norm.logpdf(x, m, sd)), argnums=(0, 1))(mu, s)
    np.testing.assert_allclose(g[0], np.sum(x - mu) / s ** 2, rtol=1e-14)
    np.testing.assert_allclose(g[1], np.sum((x - mu) ** 2 / s ** 3 - 1 / s), rtol=1e-14)


def test_derivatives_are_finite_outside_the_support():
    g = tf.grad(lambda x, a: tnp.sum(stats.gamma.logpdf(x, a)), argnums=(0, 1))(
        np.array([-1.0, 2.0]), 1.5)
    assert np.isfinite(g[0]).all() and np.isfinite(g[1])
    g = tf.grad(lambda q: tnp.sum(stats.norm.ppf(q)))(np.array([0.0, 0.5, 1.0, 2.0]))
    assert np.isfinite(g[1]) and g[3] == 0
    # every quantile: 0 at q outside (0, 1) (evaluated on the median there), finite inside
    q = np.array([0.0, 1.0, -0.5, 1.5, 0.3])
    for name, (_, params) in GRAD_CASES.items():
        dist = getattr(stats, name)
        for method in ("ppf", "isf"):
            if not dist.provided(method):
                continue
            g = tf.grad(lambda v, *ps: tnp.sum(getattr(dist, method)(v, *ps)),
                        argnums=tuple(range(1 + len(params))))(q, *map(np.float64, params))
            assert np.all(g[0][:4] == 0) and np.all(np.isfinite(np.hstack(g))), (name, method)


# ---------------------------------------------------------------- multivariate

def _spd(rng, k):
    a = rng.standard_normal((k, k))
    return a @ a.T + k * np.eye(k)


def test_multivariate_normal_matches_scipy():
    rng = np.random.default_rng(1)
    cov, mean = _spd(rng, 3), rng.standard_normal(3)
    x = rng.standard_normal((5, 3))
    tol = stats.multivariate_normal.accuracy["logpdf"]
    for xs in (x, x[0], x[:1]):
        for allow in (False, True):
            got = stats.multivariate_normal.logpdf(xs, mean, cov, allow_singular=allow)
            want = st.multivariate_normal.logpdf(xs, mean, cov)
            assert np.shape(got) == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=tol)
    np.testing.assert_allclose(stats.multivariate_normal.pdf(x, mean, cov),
                               st.multivariate_normal.pdf(x, mean, cov), rtol=tol)
    # scalar and diagonal covariances, dim 1 with a 1-D x (points), default mean
    for args in ((x, mean, np.array([1.0, 2.0, 3.0])), (x[:, 0], 0.5, 2.0),
                 (np.array([0.3, 1.0, -2.0]), None, 2.5)):
        np.testing.assert_allclose(stats.multivariate_normal.logpdf(*args),
                                   st.multivariate_normal.logpdf(*args), rtol=tol)
    x32 = x.astype(np.float32)
    got = stats.multivariate_normal.logpdf(x32, mean.astype(np.float32),
                                           cov.astype(np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-5)


def test_multivariate_normal_singular_covariance_as_scipy():
    rng = np.random.default_rng(2)
    b = rng.standard_normal((3, 2))
    cov = b @ b.T                                       # rank 2
    x = rng.standard_normal((4, 2)) @ b.T
    x[0] += 0.1 * np.cross(b[:, 0], b[:, 1])            # off the support
    got = stats.multivariate_normal.logpdf(x, np.zeros(3), cov, allow_singular=True)
    want = st.multivariate_normal.logpdf(x, np.zeros(3), cov, allow_singular=True)
    assert got[0] == want[0] == -INF
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)
    bad = np.diag([1.0, -1.0])                          # not positive semidefinite
    assert np.isnan(stats.multivariate_normal.logpdf(np.zeros(2), cov=bad,
                                                     allow_singular=True))


def test_multivariate_normal_batches_as_jax():
    rng = np.random.default_rng(3)
    covs = np.stack([_spd(rng, 2), _spd(rng, 2)])
    means = rng.standard_normal((4, 1, 2))
    x = rng.standard_normal((4, 2, 2))
    got = stats.multivariate_normal.logpdf(x, means, covs)
    assert got.shape == (4, 2)
    for i in range(4):
        for j in range(2):
            np.testing.assert_allclose(
                got[i, j], st.multivariate_normal.logpdf(x[i, j], means[i, 0], covs[j]),
                rtol=1e-13)


def test_multivariate_normal_second_derivatives_in_x_mean_and_cov():
    rng = np.random.default_rng(4)
    cov, mean, x = _spd(rng, 3), rng.standard_normal(3), rng.standard_normal((2, 3))
    check_grads(stats.multivariate_normal.logpdf, (x, mean, cov), order=2, modes=("rev",))
    # allow_singular (eigh): distinct eigenvalues, derivatives in x and mean
    check_grads(lambda a, m: stats.multivariate_normal.logpdf(a, m, cov, allow_singular=True),
                (x, mean), order=2, modes=("rev",))
    check_grads(stats.multivariate_normal.logpdf, (x, mean, cov), order=2, modes=("fwd",))


def test_multivariate_normal_cov_gradient_is_the_closed_form():
    # one covariance: its own reverse rule; a stack of one: reverse mode through cholesky
    rng = np.random.default_rng(5)
    cov, mean, x = _spd(rng, 4), rng.standard_normal(4), rng.standard_normal((5, 4))
    gx, gc = tf.grad(lambda a, c: tnp.sum(stats.multivariate_normal.logpdf(a, mean, c)),
                     argnums=(0, 1))(x, cov)
    alpha = np.linalg.solve(cov, (x - mean).T)
    w = 0.5 * (alpha @ alpha.T - 5 * np.linalg.inv(cov))
    np.testing.assert_allclose(gx, -alpha.T, rtol=1e-12)
    np.testing.assert_allclose(gc, np.tril(2 * w) - np.diag(np.diag(w)), rtol=1e-12,
                               atol=1e-15)
    stacked = tf.grad(lambda c: tnp.sum(stats.multivariate_normal.logpdf(x, mean, c)))(
        cov[None])
    np.testing.assert_allclose(stacked[0], gc, rtol=1e-12, atol=1e-15)


def test_dirichlet_and_multinomial_match_scipy():
    rng = np.random.default_rng(5)
    alpha = np.array([1.5, 2.0, 0.5])
    x = rng.dirichlet(alpha, 4).T
    tol = stats.dirichlet.accuracy["logpdf"]
    np.testing.assert_allclose(stats.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha),
                               rtol=tol)
    np.testing.assert_allclose(stats.dirichlet.pdf(x[:2], alpha),
                               st.dirichlet.pdf(x[:2], alpha), rtol=tol)
    assert stats.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha) == -INF
    assert np.isnan(stats.dirichlet.logpdf(x[:, 0], -alpha))
    counts = np.array([[1, 2, 0], [3, 0, 0], [1, 1, 0], [0, 1, 2]])
    p = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(stats.multinomial.logpmf(counts, 3, p),
                               st.multinomial.logpmf(counts, 3, p),
                               rtol=stats.multinomial.accuracy["logpmf"])
    np.testing.assert_allclose(stats.multinomial.pmf(counts, 3, p),
                               st.multinomial.pmf(counts, 3, p), rtol=1e-13)
    assert np.isnan(stats.multinomial.logpmf(counts[0], 3, np.array([1.2, -0.2, 0.0])))
    check_grads(lambda a, v: stats.dirichlet.logpdf(v, a), (alpha, x[:2]), order=2,
                modes=("rev",))
    check_grads(lambda q: stats.multinomial.logpmf(counts[[0, 1, 3]], 3, q), (p,), order=2)


# ---------------------------------------------------------------- entropy, rankdata, kde

def test_entropy_matches_scipy_and_differentiates():
    rng = np.random.default_rng(6)
    p, q = rng.random((4, 3)), rng.random((4, 3))
    p[0, 0] = 0.0
    np.testing.assert_allclose(stats.entropy(p), st.entropy(p), rtol=1e-14)
    np.testing.assert_allclose(stats.entropy(p, q, base=3, axis=1),
                               st.entropy(p, q, base=3, axis=1), rtol=1e-14)
    np.testing.assert_allclose(stats.entropy(p[1], keepdims=True),
                               st.entropy(p[1], keepdims=True), rtol=1e-14)
    check_grads(lambda a, b: stats.entropy(a, b, axis=1), (p[1:], q[1:]), order=2)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_matches_scipy(method):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, (3, 6)).astype(float)
    a[1, 2] = np.nan
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(stats.rankdata(a, method, axis=axis),
                                      st.rankdata(a, method, axis=axis))
    ints = a[0].astype(int)
    got = stats.rankdata(ints, method)
    np.testing.assert_array_equal(got, st.rankdata(ints, method))
    assert got.dtype == st.rankdata(ints, method).dtype


def test_gaussian_kde_matches_scipy():
    rng = np.random.default_rng(8)
    data, w, pts = rng.standard_normal((2, 30)), rng.random(30), rng.standard_normal((2, 5))
    for bw in (None, "silverman", 0.4, lambda k: 0.3):
        for weights in (None, w):
            kde, ref = stats.gaussian_kde(data, bw, weights), st.gaussian_kde(data, bw, weights)
            np.testing.assert_allclose(kde.logpdf(pts), ref.logpdf(pts), rtol=1e-13)
            np.testing.assert_allclose(kde(pts), ref(pts), rtol=1e-13)
            np.testing.assert_allclose(kde.covariance, ref.covariance, rtol=1e-13)
    one = stats.gaussian_kde(data[0])
    np.testing.assert_allclose(one.evaluate(0.3), st.gaussian_kde(data[0])(0.3), rtol=1e-13)
    far = np.array([[40.0], [0.0]])      # evaluate underflows there; logpdf does not
    np.testing.assert_allclose(stats.gaussian_kde(data).logpdf(far),
                               st.gaussian_kde(data).logpdf(far), rtol=1e-12)


def test_gaussian_kde_second_derivatives_in_points_data_and_weights():
    rng = np.random.default_rng(9)
    data, w, pts = rng.standard_normal((2, 8)), rng.random(8) + 0.5, rng.standard_normal((2, 3))
    check_grads(lambda p, d, ws: stats.gaussian_kde(d, weights=ws).logpdf(p), (pts, data, w),
                order=2, modes=("rev",))


# ---------------------------------------------------------------- jit

def test_jit_equals_the_interpreter():
    # one program (values and gradients together): each compiled kernel costs ~1 s
    rng = np.random.default_rng(10)
    cov, mean, x = _spd(rng, 3), rng.standard_normal(3), rng.standard_normal((4, 3))
    z = rng.uniform(0.1, 3.0, 4)

    def f(x, mean, cov, z):
        return (tnp.sum(stats.multivariate_normal.logpdf(x, mean, cov))
                + tnp.sum(stats.t.logpdf(z, 3.5, 0.2)) + tnp.sum(stats.gamma.cdf(z, 1.7))
                + tnp.sum(stats.poisson.logpmf(3, z)) + tnp.sum(stats.gamma.isf(0.3, z)))
    g = tf.value_and_grad(f, argnums=(0, 1, 2, 3))
    got, want = tf.jit(g, tiered=False)(x, mean, cov, z), g(x, mean, cov, z)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- mode and sem

def test_mode_and_sem_match_scipy_and_jax():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 4, size=(5, 7)).astype(float)
    a[0, 0] = a[1, 3] = np.nan
    for axis in (0, 1, None):
        for keepdims in (False, True):
            got, want = stats.mode(a, axis, keepdims=keepdims), st.mode(a, axis,
                                                                        keepdims=keepdims)
            np.testing.assert_array_equal(got.mode, want.mode)
            np.testing.assert_array_equal(got.count, want.count)
            np.testing.assert_allclose(stats.sem(a[1:], axis, keepdims=keepdims),
                                       st.sem(a[1:], axis, keepdims=keepdims), rtol=1e-14)
    np.testing.assert_allclose(stats.sem(a[2:], 1, ddof=0), st.sem(a[2:], 1, ddof=0), rtol=1e-14)
    ints = rng.integers(0, 3, size=9)
    assert stats.mode(ints) == tuple(st.mode(ints))
    batched = tf.vmap(lambda r: stats.mode(r).mode)(a[2:])
    np.testing.assert_array_equal(batched, st.mode(a[2:], axis=1).mode)
    np.testing.assert_array_equal(tf.jit(lambda v: stats.mode(v, 1))(a).count,
                                  st.mode(a, 1).count)
    # sem differentiates; mode's value moves with the element it picks
    check_grads(lambda v: stats.sem(v, None), (rng.normal(size=6),), order=2)
    g = tf.grad(lambda v: stats.mode(v).mode)(np.array([2.0, 1.0, 2.0, 3.0]))
    assert g.sum() == 1.0 and g[[0, 2]].sum() == 1.0
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.stats as jst
    for axis in (0, 1, None):
        np.testing.assert_array_equal(stats.mode(a, axis).mode, jst.mode(a, axis).mode)
        np.testing.assert_allclose(stats.sem(a[1:], axis), jst.sem(a[1:], axis), rtol=1e-14)
    x = np.linspace(0.1, 6.0, 7)
    np.testing.assert_allclose(stats.wrapcauchy.logpdf(x, 0.3), jst.wrapcauchy.logpdf(x, 0.3),
                               rtol=1e-14)


def test_poisson_entropy_matches_scipy_and_jax_and_differentiates():
    # SciPy's own sum drifts above mu ~ 200 (1.5e-13 at 500, 4e-4 at 5000): compare there
    # with the asymptotic series' first terms, below with SciPy
    mu = np.array([0.0, 1e-3, 0.5, 1.0, 5.0, 50.0, 199.9])
    np.testing.assert_allclose(stats.poisson.entropy(mu), st.poisson.entropy(mu), rtol=1e-13,
                               atol=1e-300)
    big = np.array([200.0, 1e4, 1e6])
    leading = 0.5 * np.log(2 * np.pi * np.e * big) - 1 / (12 * big) - 1 / (24 * big ** 2)
    np.testing.assert_allclose(stats.poisson.entropy(big), leading, rtol=1e-8)
    assert np.isnan(stats.poisson.entropy(-1.0))
    assert stats.poisson.entropy(np.float32(3.0)).dtype == np.float32
    tf.test_util.check_grads(stats.poisson.entropy, (np.array([0.3, 4.0, 70.0, 2e4]),), order=2)
    np.testing.assert_allclose(tf.jit(stats.poisson.entropy)(mu), stats.poisson.entropy(mu))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.stats as jst
    everywhere = np.concatenate([mu, big])
    # (JAX's approximations between its regimes are 2.6e-7 off near mu = 200)
    np.testing.assert_allclose(stats.poisson.entropy(everywhere),
                               jst.poisson.entropy(everywhere), rtol=1e-6)
