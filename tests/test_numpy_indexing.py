"""Indexing of traced arrays (every NumPy index kind), ``.at[]`` updates, and the index
functions (take, take_along_axis, nonzero, ...), against NumPy."""
import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError, TfIndexError, UnsupportedError

from conftest import assert_same, check, run_traced

X = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
I = np.array

INDICES = [
    # ints, negative ints
    1, -1, (1, 2), (0, -1, 3), (-2, -3, -4, -5),
    # slices with every step
    slice(None), slice(1, None), slice(None, 1), (slice(None), slice(0, 3, 2)),
    (slice(None), slice(None, None, -1)), (Ellipsis, slice(4, 0, -2)),
    (slice(None), slice(-1, -4, -1)), (slice(None), slice(10, None)),
    (slice(None), slice(2, 1)), (slice(None), slice(None, None, 5)),
    (slice(None), slice(-100, 100, 2)),
    # None and Ellipsis
    None, (None, 0), (Ellipsis, None), (0, Ellipsis, 1), (Ellipsis,), (None, Ellipsis, None),
    (slice(None), None, 1, None),
    # integer arrays
    I([1, 0, 1]), I([[0, 1], [1, 1]]), (slice(None), I([2, 0, -1])),
    (I([0, 1]), I([2, 0])), (I([[0], [1]]), I([0, 2, 1])), (1, I([0, 2])),
    (Ellipsis, I([4, 0])), (slice(None), I([0, 1]), slice(None), I([1, 1])),
    (I([0, 1]), slice(None), I([1, 2])), (slice(None), 0, slice(None), I([0, 1])),
    (0, slice(None), slice(None), I([1, 0])), (I([0, 1]), None, I([0, 1])),
    (slice(None), I([0, 1]), None, I([0, 1])), (I([1]), I([[0], [2]]), slice(1, 3)),
    (slice(None, None, -1), I([0, 2]), slice(None, None, 2)), [0, 1, 1], I([], dtype=int),
    (I(1), slice(None)), (I([-2, 1]), I([-1, 0]), I([3, -4])),
    # boolean masks
    I([True, False]), (slice(None), I([True, False, True])),
    (I([[True, False, True], [False, False, True]]),),
    (Ellipsis, I([True, False, True, True, False])),
    (0, I([False, True, True]), slice(1, 3)), (I([[True, False, True], [True, True, False]]),
                                              0),
    (I([True, True]), slice(None), I([1, 2])),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_getitem_matches_numpy(index):
    expected = X[index]
    out = run_traced(lambda x: x[index], X)
    assert_same(out, np.asarray(expected), check_type=False)
    assert_same(tnp.indexing.getitem(X, index), expected if isinstance(expected, np.ndarray)
                else np.asarray(expected), check_type=False)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_traced_integer_indices(dtype):
    for idx in [I([2, 0, -1]), I([[1, 1], [0, -3]]), I(2), I(-1)]:
        idx = idx.astype(dtype)
        out = run_traced(lambda x, i: x[:, i], X, idx)
        assert_same(out, X[:, idx], check_type=False)
        out = run_traced(lambda x, i: x[i, ..., i], X[:, :, :2, :3], np.abs(idx) % 2)
        assert_same(out, X[:, :, :2, :3][np.abs(idx) % 2, ..., np.abs(idx) % 2],
                    check_type=False)


def test_traced_scalar_index_works_like_an_int():
    y = np.arange(12.0).reshape(3, 4)
    out = run_traced(lambda a, i: a[i, 1:], y, np.array(1))
    assert_same(out, y[1, 1:], check_type=False)
    out = run_traced(lambda a, i: a[i], y, np.array(-1))
    assert_same(out, y[-1], check_type=False)
    out = run_traced(lambda a, i, j: a[i, j], y, np.array(2), np.array(1))
    assert_same(out, np.asarray(y[2, 1]), check_type=False)


def test_out_of_range_concrete_indices_raise_at_trace_time():
    for index in [3, -4, (0, 5), (slice(None), I([0, 4])), I([[3]])]:
        with pytest.raises(TfIndexError):
            run_traced(lambda x: x[index], X[0])


def test_bad_index_kinds():
    with pytest.raises(TfIndexError, match="too many"):
        run_traced(lambda x: x[0, 0, 0], np.ones((2, 2)))
    with pytest.raises(TfIndexError):
        run_traced(lambda x: x[1.5], np.ones(3))
    with pytest.raises(TfIndexError, match="ellipsis"):
        run_traced(lambda x: x[..., ...], np.ones(3))
    with pytest.raises(TfIndexError, match="boolean index"):
        run_traced(lambda x: x[I([True, False])], np.ones(3))
    with pytest.raises(TfIndexError, match="broadcast"):
        run_traced(lambda x: x[I([0, 1]), I([0, 1, 0])], np.ones((3, 3)))
    with pytest.raises(UnsupportedError):
        run_traced(lambda x: x[True], np.ones(3))


def test_traced_boolean_mask_is_a_concretization_error_pointing_to_where():
    with pytest.raises(ConcretizationError, match="tnp.where"):
        run_traced(lambda x: x[x > 0], np.ones(3))


def test_traced_slice_bounds_are_a_concretization_error():
    with pytest.raises(ConcretizationError):
        run_traced(lambda x, i: x[i:], np.ones(3), np.array(1))


def test_setitem_on_a_tracer_points_to_at():
    def f(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError, match=r"\.at\["):
        run_traced(f, np.ones(3))


# ---------------------------------------------------------------- .at updates

def _numpy_update(x, index, values, kind):
    """The NumPy equivalent of ``x.at[index].<kind>(values)``: ufunc.at accumulates over
    duplicate indices; set keeps the last write."""
    out = x.copy()
    if kind == "set":
        out[index] = values
        return out
    ufunc = {"add": np.add, "multiply": np.multiply, "min": np.minimum, "max": np.maximum,
             "subtract": np.subtract}[kind]
    view_shape = out[index].shape
    with np.errstate(invalid="ignore"):
        ufunc.at(out, index, np.broadcast_to(np.asarray(values, out.dtype), view_shape))
    return out


UPDATE_INDICES = [
    1, -1, (0, 2), slice(1, 3), (slice(None), slice(None, None, -2)), (Ellipsis, 0),
    (None, 1), I([2, 0]), I([0, 0, 2, 0]), (I([0, 1, 1]), I([2, 2, 2])),
    (slice(None), I([1, 1, 0])), (I([True, False, True]),), (I([[0, 1], [2, 2]]), 1),
    (I([0, 2]), slice(None), None), (slice(None), None), Ellipsis,
]


@pytest.mark.parametrize("kind", ["set", "add", "subtract", "multiply", "min", "max"])
@pytest.mark.parametrize("index", UPDATE_INDICES, ids=repr)
def test_at_updates_match_numpy(index, kind):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4))
    target_shape = x[index].shape
    for values in [rng.normal(size=target_shape), 2.5,
                   rng.normal(size=target_shape[-1:]) if target_shape else 1.0]:
        expected = _numpy_update(x, index, values, kind)
        eager = getattr(tnp.at(x)[index], kind)(values)
        assert_same(eager, expected, exact=kind != "subtract", what="eager")
        traced = run_traced(lambda a: getattr(a.at[index], kind)(values), x)
        assert_same(traced, expected, exact=kind != "subtract", check_type=False,
                    what="traced")


@pytest.mark.parametrize("index", [(I([0, 1]), slice(None), I([1, 2])),
                                   (slice(None), I([0, 2]), I([[1], [3]])),
                                   (0, slice(None), I([3, 3, 0])),
                                   (I([1, 0]), None, slice(1, 3), 2)], ids=repr)
def test_at_updates_with_separated_advanced_indices(index):
    x = np.arange(24.0).reshape(2, 3, 4)
    values = np.arange(np.prod(x[index].shape), dtype=float).reshape(x[index].shape) + 0.5
    for kind in ["set", "add"]:
        expected = _numpy_update(x, index, values, kind)
        out = run_traced(lambda a, v: getattr(a.at[index], kind)(v), x, values)
        assert_same(out, expected, check_type=False, what=kind)


def test_at_does_not_modify_numpy_input():
    x = np.zeros(3)
    y = tnp.at(x)[1].set(5.0)
    assert x[1] == 0.0 and y[1] == 5.0


def test_at_with_traced_indices_and_duplicates():
    x = np.zeros(5)
    idx = I([1, 3, 1, 1])
    vals = I([1.0, 2.0, 4.0, -3.0])
    for kind in ["add", "multiply", "min", "max", "set"]:
        expected = _numpy_update(x + 1, idx, vals, kind)
        out = run_traced(lambda a, i, v: getattr(a.at[i], kind)(v), x + 1, idx, vals)
        assert_same(out, expected, check_type=False, what=kind)


def test_at_min_max_combine_duplicates_with_nan_and_ints():
    x = np.array([1.0, 5.0, np.nan, 0.0])
    idx = I([0, 0, 1, 3, 3])
    vals = I([3.0, -2.0, np.nan, 7.0, 2.0])
    for kind in ["min", "max"]:
        expected = _numpy_update(x, idx, vals, kind)
        assert_same(getattr(tnp.at(x)[idx], kind)(vals), expected)
        out = run_traced(lambda a, i: getattr(a.at[i], kind)(vals), x, idx)
        assert_same(out, expected, check_type=False)
    xi = np.array([np.iinfo(np.int64).min, 4, 9])
    for kind in ["min", "max"]:
        expected = _numpy_update(xi, I([0, 0, 2]), I([3, -7, 12]), kind)
        out = run_traced(lambda a, i: getattr(a.at[i], kind)(I([3, -7, 12])), xi, I([0, 0, 2]))
        assert_same(out, expected, check_type=False)


def test_at_divide_power_and_get():
    x = np.array([2.0, 3.0, 4.0])
    assert_same(tnp.at(x)[I([0, 2])].divide(2.0), np.array([1.0, 3.0, 2.0]))
    assert_same(tnp.at(x)[1].power(2), np.array([2.0, 9.0, 4.0]))
    assert_same(run_traced(lambda a: a.at[::2].get(), x), x[::2], check_type=False)


def test_at_casts_values_like_numpy_assignment():
    x = np.arange(4)
    expected = x.copy()
    expected[1] = 2.7
    assert_same(tnp.at(x)[1].set(2.7), expected)
    assert_same(run_traced(lambda a: a.at[1].set(2.7), x), expected, check_type=False)


# ---------------------------------------------------------------- take and friends

@pytest.mark.parametrize("mode", [None, "wrap", "clip"])
def test_take_matches_numpy(mode):
    y = np.arange(12.0).reshape(3, 4)
    for indices, axis in [(I([0, 2, -1]), 1), (I([[1, 0], [2, 2]]), 0), (I([11, 0, 5]), None),
                          (2, 1), (I([7, -9, 3]), 1)]:
        if mode is None and np.any(np.abs(np.asarray(indices)) > 4) and axis == 1:
            with pytest.raises(TfIndexError):
                tnp.take(y, indices, axis=axis)
            continue
        check(lambda a: tnp.take(a, indices, axis=axis, mode=mode),
              lambda a: np.take(a, indices, axis=axis, mode=mode or "raise"), y)
        check(lambda a, i: tnp.take(a, i, axis=axis, mode=mode),
              lambda a, i: np.take(a, i, axis=axis, mode=mode or "raise"), y,
              np.asarray(indices))


@pytest.mark.parametrize("axis", [0, -1, None])
def test_take_from_a_0d_array_as_numpy(axis):
    # found by the fuzzer: take along axis 0 of a 0-d array raised a bare IndexError
    for indices in [np.int64(0), I([0, 0, -1])]:
        check(lambda a, i: tnp.take(a, i, axis=axis),
              lambda a, i: np.take(a, i, axis=axis), np.array(2.5), indices)
    with pytest.raises(TfIndexError):
        tnp.take(np.array(2.5), I([1]), axis=axis)


def test_take_along_axis_and_put_along_axis():
    y = np.array([[10, 30, 20], [60, 40, 50]])
    order = np.argsort(y, axis=1)
    check(lambda a, i: tnp.take_along_axis(a, i, axis=1),
          lambda a, i: np.take_along_axis(a, i, axis=1), y, order)
    check(lambda a, i: tnp.take_along_axis(a, i, axis=0),
          lambda a, i: np.take_along_axis(a, i, axis=0), y, I([[1, 0, -1]]))
    check(lambda a, i: tnp.take_along_axis(a, i, axis=None),
          lambda a, i: np.take_along_axis(a, i, axis=None), y, I([5, 0]))
    check(lambda a, i: tnp.take_along_axis(a, i, axis=1),
          lambda a, i: np.take_along_axis(a, i, axis=1), y[:1], I([[0], [2]]))
    expected = y.copy()
    np.put_along_axis(expected, I([[2], [0]]), 99, axis=1)
    check(lambda a, i: tnp.put_along_axis(a, i, 99, axis=1), lambda a, i: expected, y,
          I([[2], [0]]))


def test_nonzero_family_concrete():
    y = np.array([[0, 3, 0], [4, 0, 5]])
    check(tnp.nonzero, np.nonzero, y, traced=False)
    check(tnp.flatnonzero, np.flatnonzero, y, traced=False)
    check(tnp.argwhere, np.argwhere, y, traced=False)
    check(tnp.argwhere, np.argwhere, np.array(3), traced=False)
    check(lambda a: tnp.compress([True, False, True], a, axis=1),
          lambda a: np.compress([True, False, True], a, axis=1), y)
    check(lambda a: tnp.extract(y > 2, a), lambda a: np.extract(y > 2, a), y * 1.5)


def test_nonzero_of_a_traced_value_needs_size():
    y = np.array([[0, 3, 0], [4, 0, 5]])
    with pytest.raises(ConcretizationError, match="size"):
        run_traced(tnp.nonzero, y)
    for size, fill in [(3, None), (5, -1), (2, None)]:
        out = run_traced(lambda a: tnp.nonzero(a, size=size, fill_value=fill), y)
        expected = tnp.nonzero(y, size=size, fill_value=fill)
        ref = tuple(np.concatenate([i[:size], np.full(max(size - len(i), 0),
                                                      0 if fill is None else fill)])
                    for i in np.nonzero(y))
        assert_same(list(out), list(ref), check_type=False)
        assert_same(list(expected), list(ref), check_type=False)
    out = run_traced(lambda a: tnp.flatnonzero(a, size=4), y)
    assert_same(out, np.array([1, 3, 5, 0]), check_type=False)


def test_select_and_choose():
    x = np.arange(6.0)
    conds = [x < 2, x > 3]
    check(lambda a: tnp.select([a < 2, a > 3], [a, a ** 2], default=-1.0),
          lambda a: np.select([a < 2, a > 3], [a, a ** 2], default=-1.0), x)
    check(lambda a: tnp.select(conds, [1, 2]), lambda a: np.select(conds, [1, 2]), x)
    choices = [np.array([0, 1, 2, 3]), np.array([10, 11, 12, 13]), np.array([20, 21, 22, 23])]
    check(lambda i: tnp.choose(i, choices), lambda i: np.choose(i, choices), I([2, 0, 1, 2]))
    check(lambda i: tnp.choose(i, choices, mode="wrap"),
          lambda i: np.choose(i, choices, mode="wrap"), I([5, 0, -1, 2]))


def test_index_conversions():
    check(lambda i: tnp.unravel_index(i, (3, 4)), lambda i: np.unravel_index(i, (3, 4)),
          I([0, 5, 11]))
    check(lambda i, j: tnp.ravel_multi_index((i, j), (3, 4)),
          lambda i, j: np.ravel_multi_index((i, j), (3, 4)), I([0, 2]), I([3, 1]))
    check(lambda i, j: tnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
          lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="clip"), I([0, 7]), I([3, -1]))
    with pytest.raises(TfIndexError):
        tnp.unravel_index(I([12]), (3, 4))
    for fn in ["tril_indices", "triu_indices"]:
        assert_same(getattr(tnp, fn)(3, 1), getattr(np, fn)(3, 1))
    assert_same(tnp.diag_indices(3), np.diag_indices(3))


def test_an_empty_ellipsis_still_separates_advanced_indices():
    x = np.zeros((1, 1))
    index = (None, I([0, 0]), Ellipsis, 0)
    assert_same(run_traced(lambda a: a[index], x), x[index], check_type=False)
    assert tnp.at(x)[index].set(1.0).shape == x.shape
