"""The NumPy/JAX names of issue 18 item 6: tnp.vectorize, apply_along_axis, piecewise, r_,
c_, fill_diagonal, gcd, lcm, frexp, unwrap, polyfit, histogram; tf.eval_shape,
tf.jacobian, tf.block_until_ready; lax.map, select, associative_scan, dynamic_slice and
dynamic_update_slice. Values against NumPy (and JAX where installed), derivatives against
closed forms or finite differences."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.errors import TfNumbaError
from ad_checks import check_grads

RNG = np.random.default_rng(0)


def test_vectorize_elementwise_and_with_signature():
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    np.testing.assert_allclose(tnp.vectorize(lambda x, y: x * y + 1)(a, b), a * b + 1)
    dot = tnp.vectorize(lambda x, y: tnp.dot(x, y), signature="(n),(n)->()")
    np.testing.assert_allclose(dot(a, b), a @ b)
    two = tnp.vectorize(lambda m, x: (m @ x, tnp.sum(x)), signature="(m,n),(n)->(m),()")
    m = RNG.standard_normal((5, 2, 3))
    got = two(m, b)
    np.testing.assert_allclose(got[0], m @ b)
    assert got[1].shape == (5,)
    scaled = tnp.vectorize(lambda x, k: x * k, excluded={1})
    np.testing.assert_allclose(scaled(a, 3.0), a * 3.0)
    g = tf.grad(lambda x: tnp.sum(tnp.vectorize(lambda v: tnp.sin(v) * v)(x)))(a)
    np.testing.assert_allclose(g, np.cos(a) * a + np.sin(a))
    with pytest.raises(TfNumbaError, match="core dim"):
        dot(a, np.ones(4))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_apply_along_axis_matches_numpy(axis):
    x = RNG.standard_normal((2, 3, 4))
    for f, g in ((tnp.cumsum, np.cumsum), (tnp.sum, np.sum),
                 (lambda v: tnp.outer(v, v), lambda v: np.outer(v, v))):
        np.testing.assert_allclose(tnp.apply_along_axis(f, axis, x),
                                   np.apply_along_axis(g, axis, x))


def test_piecewise_matches_numpy_and_differentiates():
    xs = np.linspace(-2.5, 2.5, 11)
    conds = [xs < 0, xs > 1]
    for fl in ([lambda v: -v, lambda v: v], [lambda v: -v, lambda v: v, 7.0], [1.0, 2.0]):
        np.testing.assert_allclose(tnp.piecewise(xs, conds, fl), np.piecewise(xs, conds, fl))
    g = tf.grad(lambda v: tnp.sum(tnp.piecewise(v, [v < 0], [lambda u: u * u,
                                                             lambda u: 3 * u])))(xs)
    np.testing.assert_allclose(g, np.where(xs < 0, 2 * xs, 3.0))


def test_r_and_c_match_numpy():
    a = np.array([[1, 2], [3, 4]])
    cases = [(tnp.r_[1:4, 0, np.array([7.0, 8.0])], np.r_[1:4, 0, np.array([7.0, 8.0])]),
             (tnp.r_[0:1:5j, 2], np.r_[0:1:5j, 2]), (tnp.r_["-1", a, a], np.r_["-1", a, a]),
             (tnp.r_["0,2", [1, 2], [3, 4]], np.r_["0,2", [1, 2], [3, 4]]),
             (tnp.r_["0,2,0", [1, 2], [3, 4]], np.r_["0,2,0", [1, 2], [3, 4]]),
             (tnp.c_[np.array([1, 2, 3]), np.array([4, 5, 6])],
              np.c_[np.array([1, 2, 3]), np.array([4, 5, 6])]),
             (tnp.c_[a, a], np.c_[a, a])]
    for got, want in cases:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape,val,wrap", [((3, 3), 5.0, False), ((5, 3), [1.0, 2.0], True),
                                            ((5, 3), [1.0, 2.0], False), ((2, 4), 7, False),
                                            ((3, 3, 3), [0.0, 1.0, 2.0], False)])
def test_fill_diagonal_matches_numpy_without_modifying(shape, val, wrap):
    x = RNG.standard_normal(shape)
    want = x.copy()
    np.fill_diagonal(want, val, wrap=wrap)
    before = x.copy()
    np.testing.assert_array_equal(tnp.fill_diagonal(x, np.asarray(val), wrap, inplace=False),
                                  want)
    np.testing.assert_array_equal(x, before)
    with pytest.raises(TfNumbaError, match="inplace=False"):
        tnp.fill_diagonal(x, val)


def test_gcd_lcm_match_numpy():
    a, b = RNG.integers(-50, 50, (4, 5)), RNG.integers(-30, 30, 5)
    for ours, theirs in ((tnp.gcd, np.gcd), (tnp.lcm, np.lcm)):
        got = ours(a, b)
        assert got.dtype == theirs(a, b).dtype
        np.testing.assert_array_equal(got, theirs(a, b))
    assert int(tf.jit(tnp.gcd, tiered=False)(np.int64(84), np.int64(36))) == 12
    # a scalar against an array: the loop carries both at the broadcast shape
    np.testing.assert_array_equal(tnp.gcd(a, 6), np.gcd(a, 6))
    np.testing.assert_array_equal(tnp.lcm(8, b), np.lcm(8, b))


def test_frexp_matches_numpy_on_extremes():
    x = np.concatenate([RNG.standard_normal(20) * 10.0 ** RNG.integers(-300, 300, 20),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 2.0 ** -1022, 1e-310,
                         1.0, 0.5, 2.0, -4.0]])
    m, e = tnp.frexp(x)
    want_m, want_e = np.frexp(x)
    np.testing.assert_array_equal(m, want_m)
    np.testing.assert_array_equal(e, want_e)
    assert e.dtype == np.int32 and tnp.frexp(np.float32([3.0, 0.1]))[0].dtype == np.float32
    g = tf.grad(lambda v: tnp.sum(tnp.frexp(v)[0]))(np.array([3.0, 0.3]))
    np.testing.assert_allclose(g, [0.25, 2.0])


def test_unwrap_matches_numpy():
    p = np.angle(np.exp(1j * np.cumsum(RNG.uniform(-3, 3, 30))))
    np.testing.assert_allclose(tnp.unwrap(p), np.unwrap(p))
    q = RNG.uniform(-10, 10, (3, 8))
    for axis in (0, 1):
        np.testing.assert_allclose(tnp.unwrap(q, axis=axis), np.unwrap(q, axis=axis))
    np.testing.assert_allclose(tnp.unwrap(q, discont=4.0, period=5.0),
                               np.unwrap(q, discont=4.0, period=5.0))
    np.testing.assert_allclose(tf.grad(lambda v: tnp.sum(tnp.unwrap(v) * np.arange(30.0)))(p),
                               np.arange(30.0))


@pytest.mark.parametrize("deg", [0, 1, 3])
def test_polyfit_matches_numpy_and_differentiates(deg):
    xs, ys, w = np.linspace(-1, 2, 12), RNG.standard_normal((12, 2)), RNG.uniform(0.5, 2, 12)
    np.testing.assert_allclose(tnp.polyfit(xs, ys[:, 0], deg), np.polyfit(xs, ys[:, 0], deg),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tnp.polyfit(xs, ys, deg, w=w), np.polyfit(xs, ys, deg, w=w),
                               rtol=1e-10, atol=1e-12)
    check_grads(lambda y: tnp.polyfit(xs, y, deg), (ys[:, 0],), order=1)


@pytest.mark.parametrize("kw", [dict(), dict(bins=7), dict(bins=5, range=(-1, 1)),
                                dict(bins=np.array([-2, -0.5, 0, 0.1, 3.0])),
                                dict(bins=6, density=True), dict(bins=4, weights=True)])
def test_histogram_matches_numpy(kw):
    d = RNG.standard_normal(100)
    if kw.get("weights") is True:
        kw = dict(kw, weights=RNG.uniform(0, 1, 100))
    hist, edges = tnp.histogram(d, **kw)
    want_hist, want_edges = np.histogram(d, **kw)
    assert hist.dtype == want_hist.dtype
    np.testing.assert_allclose(hist, want_hist, rtol=1e-12)
    np.testing.assert_allclose(edges, want_edges)


def test_histogram_weights_are_differentiable():
    d, w = RNG.standard_normal(50), RNG.uniform(0, 1, 50)
    g = tf.grad(lambda w: tnp.histogram(d, bins=4, weights=w)[0][1])(w)
    edges = np.histogram_bin_edges(d, 4)
    np.testing.assert_array_equal(g, ((d >= edges[1]) & (d < edges[2])).astype(float))


def test_eval_shape_jacobian_block_until_ready():
    out = tf.eval_shape(lambda x, y: {"s": tnp.sum(x), "p": x @ y},
                        tf.ShapeDtype((2, 3)), np.ones((3, 4), np.float32))
    assert out["s"].shape == () and out["p"].shape == (2, 4)
    assert out["p"].dtype == np.float64
    x = RNG.standard_normal(3)
    np.testing.assert_allclose(tf.jacobian(lambda v: v ** 2)(x), np.diag(2 * x))
    assert tf.block_until_ready(x) is x


def test_lax_select_and_map():
    p = np.array([True, False, True])
    np.testing.assert_array_equal(lax.select(p, np.ones(3), np.zeros(3)), [1.0, 0.0, 1.0])
    x = RNG.standard_normal((7, 3))
    for batch_size in (None, 1, 3, 7, 10):
        np.testing.assert_allclose(lax.map(lambda r: tnp.sum(r ** 2), x, batch_size=batch_size),
                                   np.sum(x ** 2, 1))
    pair = lax.map(lambda t: (t[0] + 1, t[1] * 2), (x[:, 0], x), batch_size=3)
    np.testing.assert_allclose(pair[1], 2 * x)


def test_associative_scan_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    for n in (1, 2, 5, 8, 13):
        a = RNG.standard_normal(n)
        for reverse in (False, True):
            np.testing.assert_allclose(
                lax.associative_scan(lambda p, q: p + q, a, reverse=reverse),
                jax.lax.associative_scan(jax.numpy.add, a, reverse=reverse), rtol=1e-12)

    def affine(p, q):       # (a, b) pairs compose as x -> a x + b
        return p[0] * q[0], q[0] * p[1] + q[1]
    A, B = RNG.standard_normal((2, 9, 4))
    for axis in (0, 1):
        got = lax.associative_scan(affine, (A, B), axis=axis)
        want = jax.lax.associative_scan(affine, (A, B), axis=axis)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    check_grads(lambda a: lax.associative_scan(lambda p, q: p * q, a), (A[:, 0],), order=2)


def test_dynamic_slice_clamps_as_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)      # float64 as ours (reset after the test)
    x = RNG.standard_normal((7, 3))
    for s in (-1, -7, 0, 3, 6, 9):
        np.testing.assert_array_equal(lax.dynamic_slice(x, (s, 1), (2, 2)),
                                      jax.lax.dynamic_slice(x, (s, 1), (2, 2)))
        np.testing.assert_array_equal(
            lax.dynamic_update_slice(x, np.ones((2, 2)), (s, 1)),
            jax.lax.dynamic_update_slice(x, np.ones((2, 2)), (s, 1)))
    f = tf.jit(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 3)), tiered=False)
    for i in (-1, 0, 6, 10):
        np.testing.assert_array_equal(f(x, np.int64(i)), jax.lax.dynamic_slice(x, (i, 0), (2, 3)))
    g = tf.grad(lambda x, i: tnp.sum(lax.dynamic_slice(x, (i, 0), (2, 3)) ** 2))(x, np.int64(-2))
    np.testing.assert_allclose(g, np.where(np.arange(7)[:, None] >= 5, 2 * x, 0.0))
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(x, 2, 0, False), x[2])
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, np.zeros(3), -1, 0)[-1],
                                  np.zeros(3))


@pytest.mark.parametrize("call", [
    lambda: lax.dynamic_slice_in_dim(np.array(1.0), 0, 1, axis=0),
    lambda: lax.dynamic_slice_in_dim(np.ones((3, 2)), 0, 1, axis=2),
    lambda: lax.dynamic_index_in_dim(np.ones(3), 0, axis=-2),
    lambda: lax.dynamic_update_slice_in_dim(np.array(1.0), np.array(2.0), 0, 0),
    lambda: lax.dynamic_update_slice_in_dim(np.ones((3, 2)), np.ones((3, 1)), 0, 3)])
def test_in_dim_slices_of_an_axis_the_operand_lacks_are_errors(call):
    # found by the fuzzer: a 0-d operand raised ZeroDivisionError (axis % rank), and an
    # axis past the rank wrapped around to another axis
    with pytest.raises(TfNumbaError, match="out of bounds"):
        call()
