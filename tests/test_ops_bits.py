"""shift_right_logical against NumPy's unsigned shift, eagerly, compiled and batched."""
import numpy as np
import pytest

import tf_numba as tf
from tf_numba.errors import DTypeError
from tf_numba.ops.bits import shift_right_logical


@pytest.mark.parametrize("dtype,unsigned", [(np.int64, np.uint64), (np.int32, np.uint32)])
def test_matches_numpy_unsigned_shift_and_zero_out_of_range(dtype, unsigned):
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    x = rng.integers(info.min, info.max, 64, dtype=dtype)
    n = rng.integers(-3, info.bits + 3, 64).astype(dtype)
    in_range = (n >= 0) & (n < info.bits)
    expected = np.where(in_range, x.astype(unsigned) >> np.where(in_range, n, 0).astype(unsigned),
                        0).astype(dtype)
    np.testing.assert_array_equal(shift_right_logical(x, n), expected)
    jitted = tf.jit(shift_right_logical, tiered=False)(x, n)
    assert jitted.dtype == dtype
    np.testing.assert_array_equal(jitted, expected)


def test_scalar_count_batching_and_zero_derivative():
    x = np.array([-1, 256, 7])
    np.testing.assert_array_equal(tf.vmap(lambda v: shift_right_logical(v, 4))(x),
                                  (x.astype(np.uint64) >> np.uint64(4)).astype(np.int64))
    g = tf.grad(lambda f: f * shift_right_logical(np.int64(64), 2).astype(float))(1.0)
    assert g == 16.0


def test_needs_one_integer_dtype():
    with pytest.raises(DTypeError, match="shift_right_logical"):
        shift_right_logical(np.ones(2), np.ones(2))
