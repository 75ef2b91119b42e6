"""vreduce's row sums against np.sum bit for bit: every leaf shape of NumPy's pairwise
tree (single leaves, leaf pairs, leaf quads, deeper trees), unit-stride and strided rows,
float and integer dtypes."""
import numpy as np
import pytest

from tf_numba.lowering import vreduce

LENGTHS = list(range(0, 300)) + [383, 384, 385, 511, 512, 513, 1000, 1023, 1024, 4099,
                                 65536 + 17]


def _scratch(dtype):
    return np.empty((3, vreduce._DEPTH), np.int64), np.empty(vreduce._DEPTH, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_pairwise_sum_is_numpys_sum_to_the_bit(dtype):
    rng = np.random.default_rng(7)
    scratch = _scratch(dtype)
    for n in LENGTHS:
        # magnitudes spread over 6 decades, so a different order of additions shows
        data = rng.standard_normal(2 * n) * 10.0 ** rng.integers(-3, 4, 2 * n)
        data = (data * 1000).astype(dtype) if dtype == np.int64 else data.astype(dtype)
        for row in (data[:n], data[::2]):
            got = vreduce.pairwise_sum(row, scratch)
            assert got == np.sum(row) or (np.isnan(got) and np.isnan(np.sum(row))), (n, row.strides)


def test_pairwise_sum_keeps_negative_zero_and_nan():
    scratch = _scratch(np.float64)
    for n in (5, 200, 1000):
        assert np.signbit(vreduce.pairwise_sum(np.full(n, -0.0), scratch)) == \
            np.signbit(np.sum(np.full(n, -0.0)))
        x = np.ones(n)
        x[n // 3] = np.nan
        assert np.isnan(vreduce.pairwise_sum(x, scratch))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_extremes_are_numpys_max_and_min(dtype):
    rng = np.random.default_rng(3)
    for n in LENGTHS[1:]:
        data = rng.standard_normal(2 * n).astype(dtype)
        for row in (data[:n], data[::2]):
            assert vreduce.row_extreme(row, dtype(-np.inf), True) == np.max(row)
            assert vreduce.row_extreme(row, dtype(np.inf), False) == np.min(row)
            # the initial value takes part, as the accumulator carried across chunks
            assert vreduce.row_extreme(row, dtype(100.0), True) == 100.0
        for at in {0, n // 2, n - 1}:           # NaN anywhere wins, as in np.max
            row = data[:n].copy()
            row[at] = np.nan
            assert np.isnan(vreduce.row_extreme(row, dtype(-np.inf), True))
            assert np.isnan(vreduce.row_extreme(row, dtype(np.inf), False))
