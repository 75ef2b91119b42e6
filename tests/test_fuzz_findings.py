"""Regression tests for the bugs the differential fuzzer found (tests/fuzz, perf/FUZZ.md),
each against an independent reference: NumPy's values or finite differences."""
import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax


def test_jit_grad_through_a_zero_length_slice_compiles():
    # a row group whose regions have a zero-length axis: its chunk step divided by zero
    def loss(x):
        return tnp.sum(tnp.sin(lax.dynamic_slice_in_dim(x, 0, 0, axis=1)))
    x = np.ones((2, 2))
    np.testing.assert_array_equal(tf.jit(tf.grad(loss), tiered=False)(x), np.zeros((2, 2)))
