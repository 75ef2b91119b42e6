"""tnp reductions and scans against NumPy: axis/keepdims/dtype/where/initial and result
dtypes, eagerly and traced."""
import contextlib
import warnings

import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError, ShapeError, UnsupportedError

from conftest import DTYPES, assert_same, check, run_traced, sample

AXES = [None, 0, 1, -1, (0, 2), ()]
REDUCERS = [("sum", True), ("prod", True), ("max", True), ("min", True), ("amax", True),
            ("amin", True), ("mean", False), ("var", False), ("std", False), ("all", True),
            ("any", True), ("ptp", True), ("count_nonzero", True)]


def _np_call(name, *args, **kwargs):
    return getattr(np, name)(*args, **kwargs)


def _run(name, x, exact, **kwargs):
    fn = getattr(tnp, name)
    try:
        with np.errstate(all="ignore"):
            expected = _np_call(name, x, **kwargs)
    except (TypeError, ValueError) as err:
        with pytest.raises(type(err)):
            fn(x, **kwargs)
        return
    check(lambda a: fn(a, **kwargs), lambda a: expected, x, exact=exact)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=repr)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,exact", REDUCERS, ids=[r[0] for r in REDUCERS])
def test_reduction_matches_numpy(name, exact, dtype, axis, keepdims):
    x = sample(dtype, (2, 3, 4), np.random.default_rng(0))
    if name == "count_nonzero" or name == "ptp" and np.dtype(dtype) == np.bool_:
        _run(name, x, exact, axis=axis, keepdims=keepdims)     # (ptp of bools: NumPy raises)
        return
    if name == "prod":
        x = sample(dtype, (2, 3, 4), np.random.default_rng(0), "small")
    _run(name, x, exact, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_sum_and_prod_accumulator_dtypes_follow_numpy(dtype):
    x = sample(dtype, (5,), np.random.default_rng(1), "small")
    for fn, np_fn in [(tnp.sum, np.sum), (tnp.prod, np.prod), (tnp.cumsum, np.cumsum),
                      (tnp.cumprod, np.cumprod), (tnp.mean, np.mean)]:
        check(fn, np_fn, x, exact=fn is not tnp.mean)
    assert tnp.sum(np.arange(3, dtype=np.int32)).dtype == np.int64


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.complex128])
def test_dtype_argument(dtype):
    x = sample(np.int32, (3, 4), np.random.default_rng(2))
    for name in ["sum", "prod", "mean", "cumsum", "cumprod", "var", "std"]:
        exact = name in ("sum", "prod", "cumsum", "cumprod")
        if name in ("var", "std") and np.dtype(dtype).kind in "iu":
            continue
        check(lambda a: getattr(tnp, name)(a, axis=1, dtype=dtype),
              lambda a: getattr(np, name)(a, axis=1, dtype=dtype), x, exact=exact)


def test_where_and_initial():
    rng = np.random.default_rng(3)
    x = sample(np.float64, (3, 4), rng)
    mask = sample(np.bool_, (3, 4), rng)
    row = np.array([True, False, True, True])
    for name in ["sum", "prod", "mean", "all", "any", "var", "std"]:
        for where in (mask, row):
            exact = name in ("sum", "prod", "all", "any")
            check(lambda a, w: getattr(tnp, name)(a, axis=1, where=w),
                  lambda a, w: getattr(np, name)(a, axis=1, where=w), x, where, exact=exact)
    for name in ["max", "min"]:
        check(lambda a, w: getattr(tnp, name)(a, axis=0, where=w, initial=0.5),
              lambda a, w: getattr(np, name)(a, axis=0, where=w, initial=0.5), x, mask)
    check(lambda a: tnp.sum(a, initial=10.0), lambda a: np.sum(a, initial=10.0), x,
          exact=False)
    check(lambda a: tnp.max(a, axis=1, initial=0.0), lambda a: np.max(a, axis=1, initial=0.0),
          x)
    check(lambda a: tnp.max(a, axis=0, initial=-1.0),
          lambda a: np.max(a, axis=0, initial=-1.0), np.zeros((0, 3)))


def test_var_and_std_ddof_correction_and_complex():
    rng = np.random.default_rng(4)
    for dtype in [np.float32, np.complex128, np.int64]:
        x = sample(dtype, (4, 3), rng)
        for kwargs in [dict(ddof=1), dict(correction=2, axis=0), dict(axis=1, keepdims=True),
                       dict(ddof=5, axis=0)]:
            with _quiet():
                check(lambda a: tnp.var(a, **kwargs), lambda a: np.var(a, **kwargs), x,
                      exact=False)
                check(lambda a: tnp.std(a, **kwargs), lambda a: np.std(a, **kwargs), x,
                      exact=False)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmax_argmin_match_numpy(dtype, axis):
    x = sample(dtype, (3, 4), np.random.default_rng(5))
    for name in ["argmax", "argmin"]:
        check(lambda a: getattr(tnp, name)(a, axis=axis),
              lambda a: getattr(np, name)(a, axis=axis), x)
        check(lambda a: getattr(tnp, name)(a, axis=axis, keepdims=True),
              lambda a: getattr(np, name)(a, axis=axis, keepdims=True), x)


def test_argmax_finds_the_first_nan_like_numpy():
    x = np.array([1.0, np.nan, 5.0, np.nan])
    check(tnp.argmax, np.argmax, x)
    check(tnp.argmin, np.argmin, x)


@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_scans_match_numpy(dtype, axis):
    x = sample(dtype, (3, 4), np.random.default_rng(6), "small")
    check(lambda a: tnp.cumsum(a, axis=axis), lambda a: np.cumsum(a, axis=axis), x)
    check(lambda a: tnp.cumprod(a, axis=axis), lambda a: np.cumprod(a, axis=axis), x)


def test_cumulative_sum_and_prod_with_initial():
    x = np.array([[1, 2], [3, 4]], np.int32)
    for fn in ["cumulative_sum", "cumulative_prod"]:
        for kwargs in [dict(axis=0), dict(axis=1, include_initial=True)]:
            check(lambda a: getattr(tnp, fn)(a, **kwargs),
                  lambda a: getattr(np, fn)(a, **kwargs), x)


NAN_X = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan],
                  [0.5, 2.0, np.nan, 4.0]])


@pytest.mark.parametrize("axis", [None, 1])
@pytest.mark.parametrize("name,exact", [("nansum", True), ("nanprod", True), ("nanmax", True),
                                        ("nanmin", True), ("nanmean", False),
                                        ("nanvar", False), ("nanstd", False),
                                        ("nancumsum", True), ("nancumprod", True),
                                        ("nanmedian", False)])
def test_nan_functions_match_numpy(name, exact, axis):
    for dtype in [np.float32, np.float64]:
        x = NAN_X.astype(dtype)
        with np.errstate(all="ignore"), _quiet():
            check(lambda a: getattr(tnp, name)(a, axis=axis),
                  lambda a: getattr(np, name)(a, axis=axis), x, exact=exact)
    check(lambda a: getattr(tnp, name)(a, axis=axis),
          lambda a: getattr(np, name)(a, axis=axis), np.arange(12).reshape(3, 4),
          exact=exact)


@contextlib.contextmanager
def _quiet():
    """NumPy warns about all-NaN and empty slices; the values are what is compared."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_nanargmax_and_nanargmin():
    x = np.array([[1.0, np.nan, 3.0], [np.nan, 0.5, -1.0]])
    for name in ["nanargmax", "nanargmin"]:
        check(lambda a: getattr(tnp, name)(a, axis=1), lambda a: getattr(np, name)(a, axis=1), x)
        check(getattr(tnp, name), getattr(np, name), x)
    with pytest.raises(ValueError):
        tnp.nanargmax(np.array([np.nan, np.nan]))


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_median_matches_numpy(dtype, axis):
    rng = np.random.default_rng(7)
    for shape in [(3, 4), (3, 5)]:
        x = sample(dtype, shape, rng)
        check(lambda a: tnp.median(a, axis=axis), lambda a: np.median(a, axis=axis), x,
              exact=False)
        check(lambda a: tnp.median(a, axis=axis, keepdims=True),
              lambda a: np.median(a, axis=axis, keepdims=True), x, exact=False)


def test_median_of_a_slice_with_nan_is_nan():
    x = np.array([[1.0, np.nan, 2.0], [3.0, 1.0, 2.0]])
    check(lambda a: tnp.median(a, axis=1), lambda a: np.median(a, axis=1), x)


@pytest.mark.parametrize("q", [0.0, 0.3, 0.5, 1.0, [0.1, 0.9], np.array([[0.25], [0.75]])],
                         ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_quantile_and_percentile_match_numpy(dtype, q):
    x = sample(dtype, (3, 5), np.random.default_rng(8))
    for axis in [None, 1]:
        for keepdims in [False, True]:
            check(lambda a: tnp.quantile(a, q, axis=axis, keepdims=keepdims),
                  lambda a: np.quantile(a, q, axis=axis, keepdims=keepdims), x, exact=False)
        qp = np.asarray(q) * 100 if not isinstance(q, float) else q * 100
        check(lambda a: tnp.percentile(a, qp, axis=axis),
              lambda a: np.percentile(a, qp, axis=axis), x, exact=False)


def test_average_matches_numpy():
    rng = np.random.default_rng(9)
    x = sample(np.float32, (3, 4), rng)
    w = sample(np.float32, (4,), rng, "positive")
    check(tnp.average, np.average, x, exact=False)
    check(lambda a: tnp.average(a, axis=0), lambda a: np.average(a, axis=0), x, exact=False)
    check(lambda a, b: tnp.average(a, axis=1, weights=b),
          lambda a, b: np.average(a, axis=1, weights=b), x, w, exact=False)
    check(lambda a, b: tnp.average(a, axis=1, weights=b, returned=True),
          lambda a, b: np.average(a, axis=1, weights=b, returned=True), x, w, exact=False)
    xi = sample(np.int32, (3, 4), rng)
    check(lambda a, b: tnp.average(a, axis=1, weights=b, keepdims=True),
          lambda a, b: np.average(a, axis=1, weights=b, keepdims=True), xi, w, exact=False)
    with pytest.raises(ZeroDivisionError):
        tnp.average(x, axis=1, weights=np.zeros(4))


def test_empty_max_without_initial_is_an_error():
    with pytest.raises(ShapeError):
        tnp.max(np.zeros((0, 3)), axis=0)


def test_mean_of_empty_is_nan_like_numpy():
    with np.errstate(all="ignore"), _quiet():
        check(tnp.mean, np.mean, np.zeros((0,)))


def test_out_is_unsupported_and_axis_errors_name_the_function():
    with pytest.raises(UnsupportedError, match="out"):
        tnp.sum(np.ones(3), out=np.ones(()))
    with pytest.raises(ShapeError, match="sum"):
        tnp.sum(np.ones(3), axis=2)


def test_traced_axis_is_a_concretization_error():
    with pytest.raises(ConcretizationError):
        run_traced(lambda x, a: tnp.sum(x, axis=a), np.ones(3), np.array(0))


def test_reductions_return_numpy_scalars_eagerly():
    assert_same(tnp.sum(np.arange(3)), np.sum(np.arange(3)))
    assert_same(tnp.all(np.ones(2)), np.all(np.ones(2)))
    assert_same(tnp.mean(np.arange(4, dtype=np.float32)), np.mean(np.arange(4, dtype=np.float32)))


@pytest.mark.parametrize("axis", [0, -1, (0,)])
@pytest.mark.parametrize("name", ["sum", "max", "min", "mean", "prod", "var", "any"])
def test_reductions_over_axis_0_or_minus_1_of_a_0d_array_as_numpy(name, axis):
    # found by the fuzzer: max(x, axis=0, initial=...) of a 0-d x raised a bare IndexError,
    # and axis=-1 a ShapeError where NumPy reduces nothing (NumPy's own functions differ
    # here: those that raise AxisError are left out)
    x = np.array(2.5)
    extra = [{}, {"keepdims": True}] + ([{"initial": -1.0}] if name in ("max", "min") else [])
    for kw in extra:
        try:
            getattr(np, name)(x, axis=axis, **kw)
        except np.exceptions.AxisError:
            continue
        check(lambda a: getattr(tnp, name)(a, axis=axis, **kw),
              lambda a: getattr(np, name)(a, axis=axis, **kw), x)
