"""XLA's generators as ``jax.lax``'s:

- ``rng_uniform``: the stateful one, uniform values between bounds whose stream is the
  implementation's (not ``tf.random``'s keys). Its draws are an equation simplification
  never drops or merges (``core.primitive.EFFECTFUL``), so each call, and each run of a
  jitted function, draws anew.
- ``rng_bit_generator``: the stateless one, random bits from a key and a new key, a pure
  function of the key (a composition of ``ops.threefry``'s cipher or Philox's, so it
  compiles and batches over keys).

>>> lax.rng_uniform(0.0, 1.0, (2,)).shape
(2,)
"""
import enum
import math

import numpy as np

from .. import numpy as tnp
from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import aval_of
from ..core.primitive import EFFECTFUL, Primitive
from ..errors import DTypeError, ShapeError
from ..ops import elementwise as ew
from ..ops import layout
from ..ops.bits import bitcast_convert_type
from ..ops.threefry import threefry2x32

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]

# the stream of every rng_uniform: one per process, as XLA's generator state
_GENERATOR = np.random.default_rng()


def _uniform_eval(*, shape, dtype):
    return ShapedArray(shape, dtype)


def _uniform_impl(*, shape, dtype):
    return _GENERATOR.random(shape).astype(dtype)


# ``shape`` values uniform in [0, 1): no operands, so nothing to differentiate or batch
uniform_bits_p = Primitive("rng_uniform", _uniform_eval, _uniform_impl)
EFFECTFUL.add(uniform_bits_p)


def rng_uniform(a, b, shape):
    """Values uniform in ``[a, b)`` of ``shape`` from the process's stateful generator (a
    new draw at every call), as ``jax.lax.rng_uniform``; ``a`` and ``b`` are scalars of
    one float dtype (differentiable: the value is ``a + (b - a) u``)."""
    dt = aval_of(a).dtype
    if aval_of(b).dtype != dt or not dtypes.is_inexact(dt) or aval_of(a).shape:
        raise DTypeError(f"a and b must be scalars of one float dtype, got "
                         f"{aval_of(a)} and {aval_of(b)}", op="rng_uniform")
    shape = tuple(int(d) for d in shape)
    u = uniform_bits_p.bind(shape=shape, dtype=dt)
    full = lambda v: layout.broadcast_in_dim(v, shape, ())  # noqa: E731
    return ew.add(full(a), ew.mul(full(ew.sub(b, a)), u))



class RandomAlgorithm(enum.IntEnum):
    """The cipher of ``rng_bit_generator``, as ``jax.lax.RandomAlgorithm``."""

    RNG_DEFAULT = 0
    "Threefry-2x32 here (XLA leaves the default to the platform)."
    RNG_THREE_FRY = 1
    "The Threefry-2x32 cipher (20 rounds)."
    RNG_PHILOX = 2
    "The Philox-4x32 cipher (10 rounds)."

    def __str__(self):
        return self.name


_WORD = 0xFFFFFFFF
_BITS_DTYPES = (dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64)
# Salmon et al. 2011, "Parallel random numbers: as easy as 1, 2, 3": Philox-4x32's
# multipliers and key increments
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def _threefry_64(k0, k1, counters):
    """Threefry-2x32 of the 64-bit ``counters`` (uint64) under the key words ``k0, k1``:
    its two output words as one uint64."""
    as_words = lambda v: v.astype(np.int64)  # noqa: E731  (values below 2**32)
    packed = threefry2x32(as_words(k0), as_words(k1), as_words(counters >> 32),
                          as_words(counters & _WORD))
    return bitcast_convert_type(packed, np.uint64)


def philox4x32(key, counter):
    """Philox-4x32-10 of the counter words ``(c0, c1, c2, c3)`` under the key words
    ``(k0, k1)``: uint64 arrays holding 32-bit words (each product of two words fits in
    64 bits); its four output words."""
    (k0, k1), c = key, counter
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + _PHILOX_W[0]) & _WORD, (k1 + _PHILOX_W[1]) & _WORD
        p0, p1 = c[0] * _PHILOX_M[0], c[2] * _PHILOX_M[1]
        c = ((p1 >> 32) ^ c[1] ^ k0, p1 & _WORD, (p0 >> 32) ^ c[3] ^ k1, p0 & _WORD)
    return c


def _philox_64(k0, k1, counters):
    """Philox-4x32 of the counters ``(low word, high word, 0, 0)``: its first two output
    words as one uint64 (the first the low half)."""
    zero = counters & 0
    y = philox4x32((k0, k1), (counters & _WORD, counters >> 32, zero, zero))
    return y[0] | (y[1] << 32)


_CIPHERS = {RandomAlgorithm.RNG_DEFAULT: _threefry_64,
            RandomAlgorithm.RNG_THREE_FRY: _threefry_64,
            RandomAlgorithm.RNG_PHILOX: _philox_64}


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
    """Random bits of ``shape`` and ``dtype`` (uint8 to uint64) from ``key`` and the next
    key, ``(new_key, bits)``, as ``jax.lax.rng_bit_generator``; a pure function of the
    key, eagerly, under ``jit`` and under ``vmap`` over keys.

    The key is JAX's: a ``(4,)`` uint32 array (or ``(2,)`` uint64), read as XLA reads it,
    two 64-bit words: the cipher's key and a counter. Value ``i`` (in row-major order) is
    the cipher of ``counter + i``, cut to ``dtype``'s low bits, and the new key's counter
    is ``counter + shape's size``, so the bits from ``new_key`` continue those from
    ``key``. The bits are not XLA's: XLA leaves its layout (and its default algorithm) to
    the platform, so JAX's own bits differ between CPU and GPU; what holds is the
    shapes, dtypes, the determinism and the independence of the values.

    >>> new_key, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (2, 3))
    >>> new_key.dtype, bits.shape, bits.dtype
    (dtype('uint32'), (2, 3), dtype('uint32'))
    """
    del out_sharding                     # one device: every array is on it
    key_aval = aval_of(key)
    if (key_aval.shape, key_aval.dtype) not in (((4,), dtypes.uint32),
                                                ((2,), dtypes.uint64)):
        cls = ShapeError if key_aval.dtype in (dtypes.uint32, dtypes.uint64) else DTypeError
        raise cls(f"the key is a (4,) uint32 array (or (2,) uint64), as JAX's, got "
                  f"{key_aval}", op="rng_bit_generator")
    dtype = np.dtype(dtype)
    if dtype not in _BITS_DTYPES:
        raise DTypeError(f"gives uint8, uint16, uint32 or uint64 bits, got {dtype.name}",
                         op="rng_bit_generator")
    shape = tuple(int(d) for d in shape)
    cipher = _CIPHERS[RandomAlgorithm(algorithm)]
    words = ew.convert_element_type(key, dtypes.uint64)
    if key_aval.dtype == dtypes.uint32:   # little-endian pairs of words, as XLA's bitcast
        words = [words[0] | (words[1] << 32), words[2] | (words[3] << 32)]
    else:
        words = [words[0], words[1]]
    cipher_key, counter = words
    size = math.prod(shape)
    offsets = layout.reshape(layout.iota(dtypes.uint64, (size,), 0), shape)
    value = cipher(cipher_key & _WORD, cipher_key >> 32, counter + offsets)
    new_counter = counter + np.uint64(size)           # wraps at 2**64, as the counter
    if key_aval.dtype == dtypes.uint32:
        new_key = [cipher_key & _WORD, cipher_key >> 32, new_counter & _WORD,
                   new_counter >> 32]
    else:
        new_key = [cipher_key, new_counter]
    new_key = ew.convert_element_type(tnp.stack(new_key), key_aval.dtype)
    return new_key, ew.convert_element_type(value, dtype)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
