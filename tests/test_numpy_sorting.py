"""tnp sorting and searching against NumPy, eagerly and traced."""
import numpy as np
import pytest

import tf_numba.numpy as tnp
from tf_numba.errors import ConcretizationError

from conftest import DTYPES, assert_same, check, run_traced, sample

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("axis", [-1, 0, None])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_sort_and_stable_argsort(dtype, axis):
    x = sample(dtype, (3, 5), RNG)
    check(lambda a: tnp.sort(a, axis=axis), lambda a: np.sort(a, axis=axis), x)
    check(lambda a: tnp.argsort(a, axis=axis),
          lambda a: np.argsort(a, axis=axis, kind="stable"), x)


def test_sort_puts_nan_last_and_orders_complex_lexicographically():
    x = np.array([3.0, np.nan, -1.0, np.inf, np.nan, -np.inf, 0.0])
    check(tnp.sort, np.sort, x)
    check(tnp.argsort, lambda a: np.argsort(a, kind="stable"), x)
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 2j, complex(np.nan, 0)])
    check(tnp.sort, np.sort, z)
    check(tnp.sort_complex, np.sort_complex, np.array([3.0, 1.0, 2.0], np.float32))


def test_lexsort_and_partitions():
    k1, k2 = np.array([1, 0, 1, 0, 2]), np.array([3, 3, 1, 2, 0])
    check(lambda a, b: tnp.lexsort([a, b]), lambda a, b: np.lexsort([a, b]), k1, k2)
    check(lambda a, b: tnp.lexsort((a, b)), lambda a, b: np.lexsort((a, b)), k2, k1)
    x = sample(np.float64, (6,), RNG)
    part = tnp.partition(x, 2)
    assert np.all(part[:2] <= part[2]) and np.all(part[3:] >= part[2])
    assert part[2] == np.partition(x, 2)[2]
    order = tnp.argpartition(x, 3)
    assert x[order][3] == np.sort(x)[3]


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 8])
def test_searchsorted_matches_numpy(side, n):
    a = np.sort(np.repeat(sample(np.int64, (n,), RNG), 1))
    v = np.array([-6, -1, 0, 1, 3, 7, 2])
    check(lambda x, y: tnp.searchsorted(x, y, side=side),
          lambda x, y: np.searchsorted(x, y, side=side), a, v)
    check(lambda x: tnp.searchsorted(x, 2, side=side),
          lambda x: np.searchsorted(x, 2, side=side), a)
    af = np.array([-1.0, 0.5, 0.5, 2.0, np.nan])
    check(lambda x, y: tnp.searchsorted(x, y, side=side),
          lambda x, y: np.searchsorted(x, y, side=side), af,
          np.array([np.nan, 0.5, -np.inf, 3.0]))


def test_searchsorted_with_sorter_and_digitize():
    a = np.array([3.0, 1.0, 2.0])
    check(lambda x, y: tnp.searchsorted(x, y, sorter=np.argsort(a)),
          lambda x, y: np.searchsorted(x, y, sorter=np.argsort(a)), a, np.array([2.5, 0.0]))
    bins = np.array([0.0, 1.0, 2.5, 4.0])
    x = np.array([-1.0, 0.0, 1.0, 2.6, 4.0, 5.0])
    for right in [False, True]:
        check(lambda v: tnp.digitize(v, bins, right=right),
              lambda v: np.digitize(v, bins, right=right), x)
        check(lambda v: tnp.digitize(v, bins[::-1], right=right),
              lambda v: np.digitize(v, bins[::-1], right=right), x)


def test_unique_is_concrete_only():
    x = np.array([3, 1, 3, 2, 1])
    assert_same(tnp.unique(x), np.unique(x))
    assert_same(tnp.unique(x, return_counts=True), np.unique(x, return_counts=True))
    assert_same(tnp.unique_values(x), np.sort(np.unique_values(x)))
    with pytest.raises(ConcretizationError):
        run_traced(tnp.unique, x)


def test_isin():
    x = np.array([[1, 2], [3, 4]])
    check(lambda a: tnp.isin(a, [2, 4, 9]), lambda a: np.isin(a, [2, 4, 9]), x)
    check(lambda a, b: tnp.isin(a, b, invert=True), lambda a, b: np.isin(a, b, invert=True),
          x, np.array([1, 4]))


def test_bincount():
    x = np.array([0, 1, 1, 3, 1])
    check(tnp.bincount, np.bincount, x, traced=False)
    check(lambda a: tnp.bincount(a, minlength=7), lambda a: np.bincount(a, minlength=7), x,
          traced=False)
    w = np.array([0.5, 1.0, 2.0, -1.0, 0.25])
    check(lambda a, b: tnp.bincount(a, b), lambda a, b: np.bincount(a, b), x, w, traced=False)
    out = run_traced(lambda a, b: tnp.bincount(a, b, length=4), x, w)
    assert_same(out, np.bincount(x, w), check_type=False)
    out = run_traced(lambda a: tnp.bincount(a, length=2), x)
    assert_same(out, np.bincount(x)[:2], check_type=False)
    with pytest.raises(ConcretizationError, match="length"):
        run_traced(tnp.bincount, x)
