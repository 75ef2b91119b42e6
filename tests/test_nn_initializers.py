"""tf_numba.nn.initializers: moments of large draws against each initializer's formula
(fans counted by hand here), bounds, shapes and dtypes, and JAX's values for the same key
where JAX is installed (float64 with x64, float32 without)."""
import math

import numpy as np
import pytest
from scipy import stats

import tf_numba as tf
from tf_numba import random
from tf_numba.errors import ArgumentError, ShapeError
from tf_numba.nn import initializers as init

from conftest import run_traced

KEY = random.key(11)


def _moments(x, mean, var, rel=0.02):
    """Sample mean and variance of ``x`` against the formula's: 200k draws put the sample
    variance within ~0.5% of the true one, so 2% fails a wrong factor, not chance."""
    x = np.asarray(x).ravel()
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / x.size)
    assert abs(x.var() / var - 1) < rel


def test_zeros_ones_constant_fill_with_the_dtype_asked():
    for dtype in (None, np.float32, np.int32):
        expected = np.float64 if dtype is None else dtype
        z, o = init.zeros(KEY, (2, 3), dtype), init.ones(KEY, (4,), dtype)
        c = init.constant(-7, dtype)(KEY, (3, 1))
        for x, value, shape in ((z, 0, (2, 3)), (o, 1, (4,)), (c, -7, (3, 1))):
            assert x.dtype == expected and x.shape == shape
            assert np.all(x == value)
    assert init.constant(2.5, np.float32)(KEY, (2,)).dtype == np.float32   # its default
    assert init.constant(2.5, np.float32)(KEY, (2,), np.float64).dtype == np.float64


def test_uniform_normal_truncated_normal_moments():
    n = (400, 500)
    _moments(init.uniform(3.0)(KEY, n), 1.5, 9.0 / 12)
    _moments(init.normal(0.5)(KEY, n), 0.0, 0.25)
    x = init.truncated_normal(2.0, lower=-1.0, upper=1.5)(KEY, n)
    assert x.min() > -2.0 and x.max() < 3.0
    ref = stats.truncnorm(-1.0, 1.5, scale=2.0)
    _moments(x, ref.mean(), ref.var())
    u = init.uniform(3.0)(KEY, n)
    assert u.min() >= 0 and u.max() < 3.0


def test_truncation_constant_is_the_stddev_of_a_normal_truncated_at_two():
    assert init._TRUNCATED_STDDEV == pytest.approx(stats.truncnorm(-2, 2).std(), rel=1e-15)


# shape (3, 5, 4, 40): a conv kernel with in_axis -2 (4), out_axis -1 (40), receptive field 15
CONV = (3, 5, 4, 40)
FAN_IN, FAN_OUT = 4 * 15, 40 * 15
MODES = {"fan_in": FAN_IN, "fan_out": FAN_OUT, "fan_avg": (FAN_IN + FAN_OUT) / 2,
         "fan_geo_avg": math.sqrt(FAN_IN * FAN_OUT)}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling_has_variance_scale_over_the_fan(mode, distribution):
    var = 0.7 / MODES[mode]
    draws = [init.variance_scaling(0.7, mode, distribution)(k, CONV)
             for k in random.split(KEY, 80)]
    x = np.stack(draws)
    assert x.shape == (80,) + CONV and x.dtype == np.float64
    _moments(x, 0.0, var)
    bound = {"uniform": math.sqrt(3 * var),
             "truncated_normal": 2 * math.sqrt(var) / init._TRUNCATED_STDDEV}.get(distribution)
    if bound is not None:
        assert np.abs(x).max() <= bound


def test_variance_scaling_axes_tuples_and_batch_axis():
    # in (0, 1) = 6, out 3 = 50, batch 2 = 7: no receptive field left
    x = init.variance_scaling(1.0, "fan_in", "normal", in_axis=(0, 1), out_axis=3,
                              batch_axis=2)(KEY, (2, 3, 7, 50))
    y = init.variance_scaling(1.0, "fan_out", "normal", in_axis=(0, 1), out_axis=3,
                              batch_axis=2)(random.split(KEY)[0], (200, 3, 7, 50))
    _moments(np.stack([init.variance_scaling(1.0, "fan_in", "normal", in_axis=(0, 1),
                                             out_axis=3, batch_axis=2)(k, (2, 3, 7, 50))
                       for k in random.split(KEY, 100)]), 0.0, 1 / 6)
    _moments(y, 0.0, 1 / 50)
    assert x.shape == (2, 3, 7, 50)


@pytest.mark.parametrize("distribution", ["truncated_normal", "uniform"])
def test_complex_variance_scaling_has_that_variance_in_modulus(distribution):
    x = init.variance_scaling(2.0, "fan_in", distribution, dtype=np.complex128)(KEY, (40, 5000))
    assert x.dtype == np.complex128
    var = 2.0 / 40
    if distribution == "truncated_normal":   # JAX's divisor: see _COMPLEX_TRUNCATED_STDDEV
        # |z|^2 of a complex standard normal is Exp(1); here truncated at |z| = 2
        var *= stats.truncexpon(4.0).mean() / init._COMPLEX_TRUNCATED_STDDEV ** 2
    assert abs(np.mean(np.abs(x) ** 2) / var - 1) < 0.01
    assert abs(x.mean()) < 0.005 and abs(np.mean(x ** 2)) < 0.005   # circular
    bound = math.sqrt(2 * 2.0 / 40) if distribution == "uniform" else \
        2 * math.sqrt(2.0 / 40) / init._COMPLEX_TRUNCATED_STDDEV
    assert np.abs(x).max() <= bound * (1 + 1e-12)


@pytest.mark.parametrize("name, scale, mode, truncated", [
    ("glorot_uniform", 1.0, "fan_avg", False), ("glorot_normal", 1.0, "fan_avg", True),
    ("lecun_uniform", 1.0, "fan_in", False), ("lecun_normal", 1.0, "fan_in", True),
    ("he_uniform", 2.0, "fan_in", False), ("he_normal", 2.0, "fan_in", True)])
def test_named_initializers_are_their_variance_scaling(name, scale, mode, truncated):
    ours = getattr(init, name)(dtype=np.float32)(KEY, CONV)
    distribution = "truncated_normal" if truncated else "uniform"
    ref = init.variance_scaling(scale, mode, distribution, dtype=np.float32)(KEY, CONV)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, ref)
    var = scale / MODES[mode]
    _moments(np.stack([getattr(init, name)()(k, CONV) for k in random.split(KEY, 80)]),
             0.0, var)


def test_aliases():
    assert init.xavier_uniform is init.glorot_uniform
    assert init.xavier_normal is init.glorot_normal
    assert init.kaiming_uniform is init.he_uniform
    assert init.kaiming_normal is init.he_normal
    assert isinstance(init.he_normal(), init.Initializer)


@pytest.mark.parametrize("shape, column_axis", [((4, 4), -1), ((3, 7), -1), ((9, 2), -1),
                                                ((2, 3, 4), -1), ((5, 2, 3), 0)])
def test_orthogonal_is_orthonormal_along_the_shorter_side(shape, column_axis):
    w = init.orthogonal(2.0, column_axis)(KEY, shape)
    assert w.shape == shape and w.dtype == np.float64
    m = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis]) / 2.0
    gram = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-13)


def test_delta_orthogonal_is_an_orthogonal_matrix_at_the_centre_and_zero_elsewhere():
    for shape in [(3, 4, 4), (3, 5, 4, 6), (2, 3, 3, 2, 2)]:
        w = init.delta_orthogonal()(KEY, shape)
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        m = w[centre]
        np.testing.assert_allclose(m @ m.T, np.eye(shape[-2]), atol=1e-13)
        rest = w.copy()
        rest[centre] = 0
        assert not rest.any()
    with pytest.raises(ShapeError, match="rank 3, 4 or 5"):
        init.delta_orthogonal()(KEY, (4, 4))
    with pytest.raises(ShapeError, match="fan_in <= fan_out"):
        init.delta_orthogonal()(KEY, (3, 5, 4))


def test_errors_name_the_initializer_and_what_to_give():
    with pytest.raises(ShapeError, match="in_axis"):
        init.glorot_normal()(KEY, (5,))
    assert init.glorot_normal(in_axis=0, out_axis=0)(KEY, (5,)).shape == (5,)
    with pytest.raises(ArgumentError, match="mode"):
        init.variance_scaling(1.0, "fan_sum", "normal")
    with pytest.raises(ArgumentError, match="distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ShapeError, match="rank 2"):
        init.orthogonal()(KEY, (4,))


def test_traced_initializers_give_the_eager_values():
    for f in (init.he_uniform(), init.glorot_normal(), init.orthogonal(), init.normal(1.0)):
        np.testing.assert_allclose(run_traced(lambda k: f(k, (3, 4)), KEY), f(KEY, (3, 4)),
                                   rtol=1e-14, atol=1e-15)


BUILDERS = [("constant", (-7.0,)), ("uniform", (2.0,)), ("normal", (0.5,)),
            ("truncated_normal", (1.5,)), ("glorot_uniform", ()), ("glorot_normal", ()),
            ("lecun_uniform", ()), ("lecun_normal", ()), ("he_uniform", ()),
            ("he_normal", ()), ("orthogonal", ()), ("delta_orthogonal", ())]


@pytest.mark.parametrize("x64", [True, False])
def test_values_equal_jax_for_the_same_key(x64):
    jax = pytest.importorskip("jax")
    from jax.nn import initializers as jinit
    dtype, cdt, tol = (np.float64, np.complex128, 1e-14) if x64 else \
        (np.float32, np.complex64, 2e-6)
    # (ours, JAX's, shape, dtype)
    cases = [(getattr(init, name)(*args), getattr(jinit, name)(*args), (3, 3, 4, 6), dtype)
             for name, args in BUILDERS]
    cases.append((init.orthogonal(1.0, 0), jinit.orthogonal(1.0, 0), (5, 3, 4), dtype))
    # every mode with one distribution, every distribution with one mode
    for mode, distribution in [(m, "normal") for m in sorted(MODES)] + [
            ("fan_avg", d) for d in ("truncated_normal", "uniform")]:
        args = (0.7, mode, distribution, (0, 1), 3, 2)
        cases.append((init.variance_scaling(*args), jinit.variance_scaling(*args),
                      (2, 3, 4, 5), dtype))
    for distribution in ["truncated_normal", "uniform"]:
        cases.append((init.variance_scaling(0.7, "fan_in", distribution),
                      jinit.variance_scaling(0.7, "fan_in", distribution), (4, 5), cdt))
    with jax.enable_x64(x64):
        # one jitted program of them all: one XLA compile, where eager JAX compiles each op
        theirs = jax.jit(lambda k: [f(k, shape, dt) for _, f, shape, dt in cases])(
            jax.random.PRNGKey(3))
    for (ours, _, shape, dt), expected in zip(cases, theirs):
        got = ours(random.key(3), shape, dt)
        assert got.dtype == dt
        np.testing.assert_allclose(got, np.asarray(expected), rtol=tol, atol=tol)


def test_initializers_are_reached_as_jax_spells_them():
    import tf_numba.nn.initializers as by_import
    assert tf.nn.initializers is by_import is init
