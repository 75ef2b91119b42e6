"""JAX's type names (``jax.Array``, ``jax.typing``): ``Array`` for ``isinstance`` checks
and the annotations ``ArrayLike`` and ``DTypeLike``.

A tf_numba array is a NumPy array (a 0-d result a NumPy scalar), and a traced value a
``Tracer``; ``isinstance(x, tf.Array)`` holds for each, as ``isinstance(x, jax.Array)`` for
JAX's arrays and tracers.

>>> isinstance(tf.jit(tnp.sin)(np.ones(2)), tf.Array)
True
"""
import abc
import typing

import numpy as np

from .core.trace import Tracer

__all__ = ["Array", "ArrayLike", "DTypeLike"]


class Array(abc.ABC):  # noqa: B024 (no methods: its members are the types registered below)
    """What tf_numba computes with: NumPy arrays and scalars, and traced values."""


Array.register(np.ndarray)
Array.register(np.number)
Array.register(np.bool_)
Array.register(Tracer)

ArrayLike = typing.Union[Array, np.ndarray, np.number, np.bool_, bool, int, float, complex]
DTypeLike = typing.Union[str, type, np.dtype]

from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
