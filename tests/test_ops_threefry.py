"""ops.threefry: the Threefry-2x32 primitive against the cipher's published known answers,
eagerly, in a compiled kernel and batched; and what it makes of a kernel's source."""
import collections

import numpy as np
import pytest

import tf_numba as tf
from tf_numba import random
from tf_numba.errors import DTypeError
from tf_numba.ops.threefry import threefry2x32

# (key, counters, output words): Random123's known-answer vectors for Threefry-2x32-20
# (Salmon et al. 2011), the ones JAX's random_test checks its threefry_2x32 against
KNOWN = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6b200159, 0x99ba4efe)),
         ((0xffffffff, 0xffffffff), (0xffffffff, 0xffffffff), (0x1cb996fc, 0xbb002be7)),
         ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]


def _columns():
    k0, k1, x0, x1, y0, y1 = (np.array(c, np.int64) for c in zip(
        *[(*key, *counters, *words) for key, counters, words in KNOWN]))
    return (k0, k1, x0, x1), (y0 << 32) | y1


def test_known_answers_eagerly_and_compiled():
    args, packed = _columns()
    np.testing.assert_array_equal(threefry2x32(*args), packed)
    np.testing.assert_array_equal(tf.jit(threefry2x32, tiered=False)(*args), packed)


def test_rank_zero_words_broadcast_and_vmap_batches_them():
    counters = np.arange(6, dtype=np.int64).reshape(2, 3)
    key = np.int64(0x13198a2e), np.int64(0x03707344)
    each = np.array([[threefry2x32(*key, 0, c) for c in row] for row in counters])
    np.testing.assert_array_equal(threefry2x32(*key, 0, counters), each)
    np.testing.assert_array_equal(tf.vmap(lambda c: threefry2x32(*key, 0, c))(counters),
                                  each)
    keys = np.array([[1, 2], [3, 4]], np.int64)
    batched = tf.vmap(lambda k: threefry2x32(k[0], k[1], 0, counters[0]))(keys)
    np.testing.assert_array_equal(batched[1], threefry2x32(3, 4, 0, counters[0]))


def test_words_are_int64():
    with pytest.raises(DTypeError, match="threefry2x32.*int64 words.*int32"):
        threefry2x32(*np.zeros(4, np.int32))


def test_a_hash_is_one_primitive_and_one_call_in_the_kernel():
    # its rounds written out as elementwise primitives made ~100 lines of kernel source
    # per hash, and numba's front end grows with the square of a kernel's length
    normal = tf.jit(lambda k: random.normal(k, (64,), np.float32), tiered=False)
    program = tf.make_program(lambda k: random.normal(k, (64,), np.float32))(
        random.key(0))
    counts = collections.Counter(e.prim.name for e in program.eqns)
    assert counts["threefry2x32"] == 1 and counts["shift_right_logical"] <= 3, counts
    source = normal.lower(random.key(0)).as_text().split("== source ==")[1]
    assert source.count("threefry.threefry2x32(") == 1
    assert "np.int32(" not in source
