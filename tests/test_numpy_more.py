"""The rest of jax.numpy: set operations, polynomials, windows, vander, insert, resize,
place and put, nanquantile, bit packing and counting, histograms in 2 and D dims, the
array API's aliases; values against NumPy (JAX where the two differ), derivatives by
finite differences, traced equal to eager."""
import importlib.util
import io
import warnings

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError, TfNumbaError

HAS_JAX = importlib.util.find_spec("jax") is not None
RNG = np.random.default_rng(5)
A = RNG.integers(-3, 6, 12)
B = RNG.integers(0, 8, 9)


@pytest.mark.parametrize("name", ["union1d", "intersect1d", "setdiff1d", "setxor1d"])
def test_set_operations_match_numpy(name):
    np.testing.assert_array_equal(getattr(tnp, name)(A, B), getattr(np, name)(A, B))
    with pytest.raises(ConcretizationError):
        tf.jit(lambda a: getattr(tnp, name)(a, B))(A)


def test_set_operations_with_size_pad_as_jax():
    got = tnp.union1d(np.array([3, 1]), np.array([1, 2]), size=5, fill_value=-1)
    np.testing.assert_array_equal(got, [1, 2, 3, -1, -1])
    values, i1, i2 = tnp.intersect1d(A, B, return_indices=True)
    w = np.intersect1d(A, B, return_indices=True)
    for g, e in zip((values, i1, i2), w):
        np.testing.assert_array_equal(g, e)


def test_unique_all_counts_inverse_as_the_array_api():
    x = np.array([[3, 1], [3, 2]])
    out = tnp.unique_all(x)
    w = np.unique_all(x)
    for field in ("values", "indices", "inverse_indices", "counts"):
        np.testing.assert_array_equal(getattr(out, field), getattr(w, field))
    np.testing.assert_array_equal(tnp.unique_counts(x).counts, np.unique_counts(x).counts)
    np.testing.assert_array_equal(tnp.unique_inverse(x).inverse_indices,
                                  np.unique_inverse(x).inverse_indices)
    np.testing.assert_array_equal(tnp.trim_zeros(np.array([0, 0, 1, 0, 2, 0])), [1, 0, 2])


P1, P2 = np.array([1.0, -2.0, 3.0, 4.0]), np.array([2.0, -1.0])


@pytest.mark.parametrize("name", ["polyadd", "polysub", "polymul"])
def test_polynomial_arithmetic_matches_numpy(name):
    np.testing.assert_allclose(getattr(tnp, name)(P1, P2), getattr(np, name)(P1, P2))
    np.testing.assert_allclose(getattr(tnp, name)(P2, P1), getattr(np, name)(P2, P1))


def test_polydiv_polyder_polyint_poly_roots_vander_match_numpy():
    q, r = tnp.polydiv(P1, P2)
    wq, wr = np.polydiv(P1, P2)
    np.testing.assert_allclose(q, wq)
    np.testing.assert_allclose(np.trim_zeros(r, "f"), wr)      # JAX keeps the zeros too
    np.testing.assert_allclose(tnp.polyder(P1, 2), np.polyder(P1, 2))
    np.testing.assert_allclose(tnp.polyint(P1, 2, [1.0, 2.0]), np.polyint(P1, 2, [1.0, 2.0]))
    np.testing.assert_allclose(tnp.poly(P1), np.poly(P1))
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(tnp.poly(m), np.poly(m))
    p = np.array([0.0, 1.0, -6.0, 11.0, -6.0, 0.0])
    np.testing.assert_allclose(np.sort_complex(tnp.roots(p)), np.sort_complex(np.roots(p)),
                               atol=1e-12)
    for n, inc in [(None, False), (4, True), (2, False)]:
        np.testing.assert_allclose(tnp.vander(P1, n, inc), np.vander(P1, n, inc))


def test_polynomials_differentiate():
    tf.test_util.check_grads(lambda a, b: tnp.polymul(a, b), (P1, P2), order=2)
    tf.test_util.check_grads(lambda a: tnp.polydiv(a, P2)[0], (P1,), order=1)
    tf.test_util.check_grads(lambda x: tnp.vander(x, 4), (np.array([0.0, 0.5, -2.0]),),
                             order=2)
    g = tf.grad(lambda x: tnp.sum(tnp.vander(x, 3)))(np.array([0.0]))
    assert g[0] == 1.0            # d/dx (x**2 + x + 1) at 0, exactly (no 0 * inf)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_match_numpy(name):
    for m in (0, 1, 7, 8):
        np.testing.assert_allclose(getattr(tnp, name)(m), getattr(np, name)(m), atol=1e-15)


def test_kaiser_matches_numpy_and_differentiates_in_beta():
    for m, beta in [(1, 3.0), (6, 0.0), (9, 8.6)]:
        np.testing.assert_allclose(tnp.kaiser(m, beta), np.kaiser(m, beta), rtol=1e-12)
    tf.test_util.check_grads(lambda b: tnp.kaiser(7, b), (2.5,), order=2)


def test_insert_follows_numpy_placement_and_broadcasting():
    a = np.arange(6.0).reshape(2, 3)
    for obj, values, axis in [(1, 9.0, None), ([0, 2], [7.0, 8.0], None), (1, [5.0, 6.0], 1),
                              (1, [5.0, 6.0, 7.0], 0), (slice(0, 2), [[1.0], [2.0]], 1),
                              ([3, 0], [1.0, 2.0], 1), (-1, [1.0, 2.0, 3.0], 0)]:
        np.testing.assert_array_equal(tnp.insert(a, obj, values, axis),
                                      np.insert(a, obj, values, axis))
    tf.test_util.check_grads(lambda x, v: tnp.insert(x, 1, v, axis=0), (a, np.ones(3)),
                             order=1)


def test_resize_place_put():
    np.testing.assert_array_equal(tnp.resize(np.arange(3), (2, 4)), np.resize(np.arange(3),
                                                                              (2, 4)))
    a, mask = np.zeros(5), np.array([1, 0, 1, 1, 0])
    want = a.copy()
    np.place(want, mask, [7.0, 8.0])
    np.testing.assert_array_equal(tnp.place(a, mask, [7.0, 8.0], inplace=False), want)
    np.testing.assert_array_equal(
        tf.jit(lambda a, m: tnp.place(a, m, np.array([7.0, 8.0]), inplace=False))(
            a, mask.astype(bool)), want)
    for mode in ("clip", "wrap"):
        want = a.copy()
        np.put(want, [0, 7, -1], [5.0, 6.0], mode=mode)
        np.testing.assert_array_equal(tnp.put(a, [0, 7, -1], [5.0, 6.0], mode=mode,
                                              inplace=False), want)
    with pytest.raises(TfNumbaError, match="inplace=False"):
        tnp.put(a, [0], 1.0)


def test_nanquantile_and_nanpercentile_match_numpy():
    x = RNG.standard_normal((4, 5))
    x[0, 1] = x[3, [0, 2, 4]] = np.nan
    x[2] = np.nan
    for axis in (None, 0, 1, (0, 1)):
        for q in (0.3, [0.0, 0.5, 1.0]):
            for keepdims in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    want = np.nanquantile(x, q, axis=axis, keepdims=keepdims)
                got = tnp.nanquantile(x, q, axis=axis, keepdims=keepdims)
                assert np.shape(got) == np.shape(want)
                np.testing.assert_allclose(got, want, equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(tnp.nanpercentile(x, 40, axis=1),
                                   np.nanpercentile(x, 40, axis=1), equal_nan=True)
    tf.test_util.check_grads(lambda v: tnp.nanquantile(v, 0.3, axis=1), (x[:2],), order=1,
                             modes=["rev"])


def test_bit_counting_and_packing_match_numpy():
    x = np.array([0, 7, -8, 255, 2 ** 40 + 3, -2 ** 62])
    np.testing.assert_array_equal(tnp.bitwise_count(x), np.bitwise_count(x))
    np.testing.assert_array_equal(tf.jit(tnp.bitwise_count)(x), np.bitwise_count(x))
    bits = RNG.integers(0, 2, (3, 13))
    for axis in (None, 0, 1):
        for order in ("big", "little"):
            packed = np.packbits(bits, axis, order)
            np.testing.assert_array_equal(tnp.packbits(bits, axis, order), packed)
            for count in (None, 5):
                np.testing.assert_array_equal(tnp.unpackbits(packed, axis, count, order),
                                              np.unpackbits(packed, axis, count, order))


def test_histograms_in_two_and_d_dimensions_match_numpy():
    x, y, z = RNG.random((3, 60))
    got, gx, gy = tnp.histogram2d(x, y, bins=(3, 4))
    want, wx, wy = np.histogram2d(x, y, bins=(3, 4))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(gx, wx)
    np.testing.assert_allclose(gy, wy)
    sample = np.stack([x, y, z], 1)
    for kw in (dict(bins=3), dict(bins=[2, 3, 4], density=True),
               dict(bins=2, weights=z, range=[(0, 1), (0, 0.5), (0, 1)])):
        got, edges = tnp.histogramdd(sample, **kw)
        want, wedges = np.histogramdd(sample, **kw)
        np.testing.assert_allclose(got, want)
        for g, w in zip(edges, wedges):
            np.testing.assert_allclose(g, w)
    np.testing.assert_allclose(tnp.histogram_bin_edges(x, 5), np.histogram_bin_edges(x, 5))


def test_i0_matches_numpy_and_differentiates():
    x = np.array([0.0, 0.5, -3.0, 20.0])
    np.testing.assert_allclose(tnp.i0(x), np.i0(x), rtol=1e-14)
    tf.test_util.check_grads(tnp.i0, (x[:3],), order=2)


def test_small_functions_and_aliases():
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(tnp.apply_over_axes(tnp.sum, a, [0, 1]),
                                  np.apply_over_axes(np.sum, a, [0, 1]))
    for name in ("diag_indices_from", "tril_indices_from", "triu_indices_from"):
        arg = np.zeros((3, 3)) if name == "diag_indices_from" else a
        for g, w in zip(getattr(tnp, name)(arg), getattr(np, name)(arg)):
            np.testing.assert_array_equal(g, w)
    for g, w in zip(tnp.mask_indices(3, tnp.triu, 1), np.mask_indices(3, np.triu, 1)):
        np.testing.assert_array_equal(g, w)
    assert tnp.isscalar(np.array(1.0)) and tnp.isscalar(2) and not tnp.isscalar([1.0])
    assert tf.jit(lambda x: np.float64(tnp.isscalar(x)))(1.0) == 1.0
    for alias, name, args in [("acos", "arccos", (0.3,)), ("asinh", "arcsinh", (0.3,)),
                              ("atan2", "arctan2", (0.3, -2.0)), ("pow", "power", (2.0, 3)),
                              ("bitwise_left_shift", "left_shift", (3, 2))]:
        assert getattr(tnp, alias)(*args) == getattr(np, name)(*args)
    assert isinstance(np.ones(2), tnp.ndarray) and tnp.double is np.float64
    assert tnp.isdtype(np.float32, "real floating")
    np.testing.assert_array_equal(tnp.frombuffer(b"\x01\x02", dtype=np.uint8), [1, 2])
    np.testing.assert_array_equal(tnp.fromstring("1 2 3", sep=" "), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tnp.fromiter(range(3), float), [0.0, 1.0, 2.0])
    buffer = io.BytesIO()
    tnp.save(buffer, np.arange(3, dtype=np.int32))
    buffer.seek(0)
    loaded = tnp.load(buffer)
    assert loaded.dtype == np.int32 and loaded.tolist() == [0, 1, 2]


@pytest.mark.skipif(not HAS_JAX, reason="jax is not installed")
def test_where_tf_numba_follows_jax_not_numpy():
    import jax.numpy as jnp
    assert tnp.isscalar(np.array(1.0)) == bool(jnp.isscalar(np.array(1.0)))
    np.testing.assert_allclose(tnp.roots(np.array([1.0, -3.0, 2.0])),
                               jnp.roots(np.array([1.0, -3.0, 2.0])))
    q, r = tnp.polydiv(P1, P2)
    jq, jr = jnp.polydiv(P1, P2)
    np.testing.assert_allclose(r, jr, atol=1e-12)
