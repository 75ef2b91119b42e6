"""tnp differences, gradients, integrals, convolutions, interpolation, polynomials and
covariances against NumPy, eagerly and traced."""
import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import UnsupportedError

from conftest import DTYPES, assert_same, check, run_traced, sample

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_diff_and_ediff1d(dtype):
    x = sample(dtype, (3, 5), RNG)
    for kwargs in [{}, dict(n=2), dict(axis=0), dict(n=0), dict(n=6),
                   dict(prepend=0, append=np.ones((3, 1), dtype))]:
        check(lambda a: tnp.diff(a, **kwargs), lambda a: np.diff(a, **kwargs), x)
    if np.dtype(dtype) == np.bool_:
        with pytest.raises(TypeError):
            tnp.ediff1d(x)     # NumPy subtracts bools here (an error), unlike diff
        return
    check(tnp.ediff1d, np.ediff1d, x)
    check(lambda a: tnp.ediff1d(a, to_end=[7, 8], to_begin=-1),
          lambda a: np.ediff1d(a, to_end=[7, 8], to_begin=-1), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128])
def test_gradient(dtype):
    x = sample(dtype, (4, 5), RNG)
    for args, kwargs in [((), {}), ((0.5,), {}), ((2.0, 0.25), {}), ((), dict(axis=1)),
                         ((), dict(edge_order=2)), ((0.3,), dict(axis=0, edge_order=2))]:
        check(lambda a: tnp.gradient(a, *args, **kwargs),
              lambda a: np.gradient(a, *args, **kwargs), x, exact=False)
    with pytest.raises(UnsupportedError):
        tnp.gradient(x, np.arange(4.0), np.arange(5.0))


def test_trapezoid():
    y = sample(np.float64, (3, 4), RNG)
    check(tnp.trapezoid, np.trapezoid, y, exact=False)
    check(lambda a: tnp.trapezoid(a, dx=0.1, axis=0), lambda a: np.trapezoid(a, dx=0.1, axis=0),
          y, exact=False)
    check(lambda a, b: tnp.trapezoid(a, b), lambda a, b: np.trapezoid(a, b), y,
          np.array([0.0, 0.5, 2.0, 2.1]), exact=False)
    check(lambda a, b: tnp.trapezoid(a, b, axis=0), lambda a, b: np.trapezoid(a, b, axis=0), y,
          np.cumsum(sample(np.float64, (3, 4), RNG, "positive"), axis=0), exact=False)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("na,nv", [(5, 3), (3, 5), (4, 4), (1, 3), (6, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex128])
def test_convolve_and_correlate(dtype, na, nv, mode):
    a, v = sample(dtype, (na,), RNG), sample(dtype, (nv,), RNG)
    exact = np.dtype(dtype).kind in "iu"
    check(lambda x, y: tnp.convolve(x, y, mode), lambda x, y: np.convolve(x, y, mode), a, v,
          exact=exact)
    check(lambda x, y: tnp.correlate(x, y, mode), lambda x, y: np.correlate(x, y, mode), a, v,
          exact=exact)


def test_interp():
    xp = np.array([0.0, 1.0, 1.5, 4.0])
    fp = np.array([1.0, -2.0, 3.0, 3.0])
    x = np.array([-1.0, 0.0, 0.3, 1.0, 1.2, 3.9, 4.0, 5.0, np.nan])
    check(tnp.interp, np.interp, x, xp, fp)
    check(lambda a, b, c: tnp.interp(a, b, c, left=-9.0, right=9.0),
          lambda a, b, c: np.interp(a, b, c, left=-9.0, right=9.0), x, xp, fp)
    check(tnp.interp, np.interp, x, xp, fp + 1j * fp[::-1])
    check(tnp.interp, np.interp, np.float64(0.5), xp, fp)
    check(tnp.interp, np.interp, x, xp[:1], fp[:1])
    check(tnp.interp, np.interp, np.arange(5), np.arange(3), np.array([1, 2, 4]))


def test_polyval():
    for p in [[3, 0, 1], np.array([1.5, -2.0]), [2]]:
        for x in [np.array([5.0, 1.0, -0.5]), np.arange(3), np.float32([1.5])]:
            check(lambda a: tnp.polyval(p, a), lambda a: np.polyval(p, a), x)
    check(lambda c, a: tnp.polyval(c, a), lambda c, a: np.polyval(c, a),
          np.array([1.0, 2.0, 3.0]), np.array([0.5, 2.0]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_cov_and_corrcoef(dtype):
    m = sample(dtype, (3, 6), RNG)
    y = sample(dtype, (2, 6), RNG)
    for kwargs in [{}, dict(bias=True), dict(ddof=2), dict(rowvar=False)]:
        check(lambda a: tnp.cov(a, **kwargs), lambda a: np.cov(a, **kwargs), m, exact=False)
    check(lambda a, b: tnp.cov(a, b), lambda a, b: np.cov(a, b), m, y, exact=False)
    check(lambda a: tnp.cov(a[0]), lambda a: np.cov(a[0]), m, exact=False)
    check(tnp.corrcoef, np.corrcoef, m, exact=False)
    check(lambda a, b: tnp.corrcoef(a, b), lambda a, b: np.corrcoef(a, b), m, y, exact=False)
    with pytest.raises(UnsupportedError, match="fweights"):
        tnp.cov(m, fweights=np.ones(6, int))


def test_array_equal_and_equiv_and_ix():
    a = np.array([1.0, np.nan])
    for fn in ["array_equal", "array_equiv"]:
        for x, y in [(a, a), (a, a[:1]), (np.ones((2, 2)), np.ones(2)), ([1, 2], [1, 2])]:
            assert getattr(tnp, fn)(x, y) is getattr(np, fn)(x, y)
    assert tnp.array_equal(a, a, equal_nan=True) is True
    out = run_traced(lambda x: tnp.array_equal(x, x + 0), np.arange(3))
    assert out.dtype == np.bool_ and bool(out)
    assert_same(tnp.ix_([0, 1], np.array([True, False, True])),
                np.ix_([0, 1], np.array([True, False, True])))
