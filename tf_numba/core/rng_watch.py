"""Notices NumPy's global random generator advancing while a function is traced.

``np.random.normal(...)`` inside a traced function runs once, at trace time: its numbers
become constants of the program, so a jitted function returns the same "noise" at every
call. A top-level trace reads the generator's position before and after (two ctypes reads
of MT19937's state, ~0.3 us; ``np.random.get_state()`` copies it in ~100 us) and warns if
it moved.
"""
import ctypes
import warnings

import numpy as np

_MT19937_WORDS = 624   # the state: uint32 key[624], then int pos (numpy/random/src/mt19937)


class NumpyRandomInTraceWarning(UserWarning):
    """A function drew from ``np.random`` while it was being traced."""


def _position_reader():
    """A function returning a value that changes whenever the global generator draws, or
    None if this NumPy's generator is not laid out as expected."""
    try:
        bit_generator = np.random.mtrand._rand._bit_generator
        address = bit_generator.ctypes.state_address
        first = ctypes.c_uint32.from_address(address)
        pos = ctypes.c_int.from_address(address + 4 * _MT19937_WORDS)
        state = bit_generator.state["state"]
        if (pos.value, first.value) != (state["pos"], int(state["key"][0])):
            return None
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    return lambda: (pos.value, first.value)


_read = _position_reader()


def mark():
    """The global generator's current position (None if it cannot be read)."""
    return None if _read is None else _read()


def check(before, source):
    """Warn, at the user's line ``source()`` (a ``SourceInfo`` or None), if the global
    generator moved since ``before`` (a ``mark()``)."""
    if before is None or _read() == before:
        return
    where = source()
    message = (
        "np.random was called while tracing: its numbers are drawn once, when the function "
        "is traced, and become constants of the program, so under jit every call returns "
        "the same ones. Draw with tf_numba.random from a key passed in as an argument "
        "(tf.random.normal(key, shape); split the key for each call), or draw outside the "
        "function and pass the array in.")
    if where is None:
        warnings.warn(message, NumpyRandomInTraceWarning, stacklevel=3)
    else:
        warnings.warn_explicit(message, NumpyRandomInTraceWarning, where[0], where[1])
