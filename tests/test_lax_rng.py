"""lax.rng_bit_generator: JAX's signature, key and output types (against JAX's), the
ciphers' published known answers, a new key that continues the stream, one value eagerly,
compiled and batched over keys, and bits that look independent. Its bits are not XLA's,
whose layout is the platform's (tf_numba/lax/rng.py), so no test compares them with
JAX's."""
import importlib.util

import numpy as np
import pytest
import scipy.stats

import tf_numba as tf
from tf_numba import lax
from tf_numba.errors import DTypeError, ShapeError
from tf_numba.lax.rng import philox4x32
from tf_numba.numerics import threefry2x32_words

ALGORITHMS = list(lax.RandomAlgorithm)
KEYS = (np.array([7, 8, 9, 10], np.uint32), np.array([7 | 8 << 32, 9 | 10 << 32], np.uint64))


def test_philox_known_answers_eagerly_and_compiled():
    # Random123's known-answer vectors for Philox-4x32-10 (Salmon et al. 2011)
    known = [((0, 0), (0, 0, 0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
             ((0xffffffff,) * 2, (0xffffffff,) * 4,
              (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
             ((0xa4093822, 0x299f31d0), (0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
              (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))]
    key, counter, want = (tuple(np.array(w, np.uint64) for w in zip(*column))
                          for column in zip(*known))
    for got in (philox4x32(key, counter), tf.jit(philox4x32)(key, counter)):
        np.testing.assert_array_equal(np.array(got), np.array(want))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_value_i_is_the_cipher_of_counter_plus_i(algorithm):
    k0, k1, counter = 0x01234567, 0x89abcdef, 2 ** 32 - 2     # the counter crosses a word
    key = np.array([k0, k1, counter & 0xFFFFFFFF, counter >> 32], np.uint32)
    new_key, got = lax.rng_bit_generator(key, (2, 3), np.uint64, algorithm)
    with np.errstate(over="ignore"):
        c = np.arange(counter, counter + 6, dtype=np.uint64)
        lo, hi = c & 0xFFFFFFFF, c >> 32
        if algorithm == lax.RandomAlgorithm.RNG_PHILOX:
            zero = np.zeros_like(c)
            y = philox4x32((np.uint64(k0), np.uint64(k1)), (lo, hi, zero, zero))
            want = y[0] | (y[1] << 32)
        else:
            y0, y1 = threefry2x32_words(np.uint32(k0), np.uint32(k1), hi.astype(np.uint32),
                                        lo.astype(np.uint32))
            want = (y0.astype(np.uint64) << 32) | y1
    np.testing.assert_array_equal(got, want.reshape(2, 3))
    np.testing.assert_array_equal(new_key, [k0, k1, 4, 1])        # counter + 6, carried
    _, narrow = lax.rng_bit_generator(key, (2, 3), np.uint16, algorithm)
    np.testing.assert_array_equal(narrow, (want & 0xFFFF).astype(np.uint16).reshape(2, 3))


@pytest.mark.parametrize("key", KEYS, ids=["u32x4", "u64x2"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_the_new_key_continues_the_stream(key, algorithm):
    k1, first = lax.rng_bit_generator(key, (5,), np.uint32, algorithm)
    k2, second = lax.rng_bit_generator(k1, (2, 3), np.uint32, algorithm)
    k3, whole = lax.rng_bit_generator(key, (11,), np.uint32, algorithm)
    np.testing.assert_array_equal(whole, np.concatenate([first, second.ravel()]))
    np.testing.assert_array_equal(k2, k3)
    assert k1.dtype == key.dtype and k1.shape == key.shape and not np.array_equal(k1, key)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_eager_compiled_and_batched_over_keys_agree(algorithm):
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4) * np.uint32(2654435761)
    draw = lambda k: lax.rng_bit_generator(k, (4, 2), np.uint8, algorithm)  # noqa: E731
    eager = [draw(k) for k in keys]
    batched = tf.jit(tf.vmap(draw))(keys)
    for i, (new_key, bits) in enumerate(eager):
        np.testing.assert_array_equal(batched[0][i], new_key)
        np.testing.assert_array_equal(batched[1][i], bits)
        np.testing.assert_array_equal(tf.jit(draw)(keys[i])[1], bits)   # determinism


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_bits_look_independent(algorithm):
    key = np.array([3, 1, 4, 1], np.uint32)
    _, words = lax.rng_bit_generator(key, (1 << 14,), np.uint32, algorithm)
    bits = (words[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    # each bit is a fair coin (5 sigma of 2**14 draws) ...
    assert np.all(np.abs(bits.mean(axis=0) - 0.5) < 5 * 0.5 / 128)
    # ... neighbouring values are uncorrelated, and the bytes are uniform
    u = words / 2.0 ** 32
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 5 / 128
    _, octets = lax.rng_bit_generator(key, (1 << 14,), np.uint8, algorithm)
    assert scipy.stats.chisquare(np.bincount(octets, minlength=256)).pvalue > 1e-6
    # a key one counter on gives the stream one value on, not a near copy
    _, other = lax.rng_bit_generator(key + np.uint32([1, 0, 0, 0]), (1 << 14,), np.uint32,
                                     algorithm)
    assert abs(np.corrcoef(u, other / 2.0 ** 32)[0, 1]) < 5 / 128


def test_the_algorithms_differ():
    key = KEYS[0]
    draws = [lax.rng_bit_generator(key, (8,), np.uint64, a)[1] for a in ALGORITHMS]
    np.testing.assert_array_equal(draws[0], draws[1])     # the default is Threefry here
    assert not np.array_equal(draws[1], draws[2])


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
def test_types_and_signature_are_jax_s():
    import jax
    jax.config.update("jax_enable_x64", True)
    for key in KEYS:
        for dtype in (np.uint8, np.uint64):
            ours = lax.rng_bit_generator(key, (3, 2), dtype)
            theirs = jax.lax.rng_bit_generator(jax.numpy.asarray(key), (3, 2), dtype)
            assert [(a.shape, a.dtype) for a in ours] == [(a.shape, a.dtype) for a in theirs]
    assert [(a.name, a.value) for a in lax.RandomAlgorithm] == [
        (a.name, a.value) for a in jax.lax.RandomAlgorithm]
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == str(jax.lax.RandomAlgorithm.RNG_PHILOX)


def test_bad_keys_and_dtypes_are_errors_that_say_what_is_wanted():
    with pytest.raises(ShapeError, match=r"\(4,\) uint32"):
        lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    with pytest.raises(DTypeError, match=r"\(4,\) uint32"):
        lax.rng_bit_generator(np.zeros(4, np.int64), (3,))
    with pytest.raises(TypeError, match="uint8, uint16"):         # a TypeError, as JAX's
        lax.rng_bit_generator(KEYS[0], (3,), np.int32)


def test_a_function_of_the_bits_differentiates_in_its_float_inputs():
    _, bits = lax.rng_bit_generator(KEYS[0], (4,), np.uint8)
    f = lambda x, k: tf.numpy.sum(x * lax.rng_bit_generator(k, (4,), np.uint8)[1])  # noqa
    np.testing.assert_array_equal(tf.grad(f)(np.ones(4), KEYS[0]), bits.astype(float))
    np.testing.assert_array_equal(tf.jit(tf.grad(f))(np.ones(4), KEYS[0]), bits)
