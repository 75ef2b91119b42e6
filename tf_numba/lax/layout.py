"""Shapes and layouts, as ``jax.lax``'s: broadcasts, reshapes, transposes, reversal,
padding, concatenation and their conveniences, ``iota`` and ``full``.

Each is a primitive of ``ops/layout.py`` (``broadcast_in_dim``, ``reshape``, ``transpose``,
``rev``, ``pad``, ``concatenate``, ``iota``) or a composition of them, with JAX's
signatures; shapes are static.

>>> from tf_numba import lax
>>> lax.broadcast_in_dim(np.arange(3), (2, 3), (1,))
array([[0, 1, 2],
       [0, 1, 2]])
"""
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.ir import aval_of_value
from ..core.linear import aval_of
from ..core.shapes import normalize_axis
from ..core.trace import Tracer, user_source
from ..errors import ShapeError
from ..ops import layout
from ._operands import leaf

__all__ = ["broadcast", "broadcast_in_dim", "broadcast_like", "broadcast_shapes",
           "broadcast_to_rank", "reshape", "squeeze", "expand_dims", "transpose", "rev", "pad",
           "concatenate", "collapse", "split", "stack", "unstack", "tile", "iota",
           "broadcasted_iota", "full", "full_like", "empty", "shape_as_value", "dtype"]


def broadcast(operand, sizes, *, out_sharding=None):
    """``operand`` repeated along new leading dims of ``sizes`` (``jax.lax.broadcast``).

    >>> broadcast(np.arange(2), (3,)).shape
    (3, 2)
    """
    x = leaf(operand)
    rank = aval_of(x).ndim
    sizes = tuple(operator.index(s) for s in sizes)
    return layout.broadcast_in_dim(x, sizes + tuple(aval_of(x).shape),
                                   tuple(range(len(sizes), len(sizes) + rank)))


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """``operand`` broadcast to ``shape``, its dim ``i`` becoming dim
    ``broadcast_dimensions[i]`` (of equal size, or size 1) (``jax.lax.broadcast_in_dim``)."""
    return layout.broadcast_in_dim(leaf(operand), tuple(shape), tuple(broadcast_dimensions))


def broadcast_to_rank(x, rank):
    """``x`` with size-1 leading dims added up to ``rank`` (``jax.lax.broadcast_to_rank``)."""
    x = leaf(x)
    missing = rank - aval_of(x).ndim
    return broadcast(x, (1,) * missing) if missing > 0 else x


def broadcast_like(arr, like_arr):
    """``arr`` broadcast NumPy-style to the shape of ``like_arr``
    (``jax.lax.broadcast_like``)."""
    x = leaf(arr)
    shape = tuple(aval_of(leaf(like_arr)).shape)
    rank = aval_of(x).ndim
    broadcast_shapes(tuple(aval_of(x).shape), shape)
    squeezed = [d for d in range(rank) if aval_of(x).shape[d] == 1
                and shape[len(shape) - rank + d] != 1]
    if squeezed:
        x = layout.squeeze(x, squeezed)
    kept = [d for d in range(rank) if d not in squeezed]
    return layout.broadcast_in_dim(x, shape, tuple(len(shape) - rank + d for d in kept))


def broadcast_shapes(*shapes):
    """The NumPy broadcast of ``shapes``, a tuple (``jax.lax.broadcast_shapes``).

    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ShapeError(f"shapes {', '.join(str(tuple(s)) for s in shapes)} do not "
                         "broadcast together", op="broadcast_shapes",
                         source=user_source()) from None


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """``operand``'s elements (read in the order of ``dimensions``, a permutation, when
    given) in the shape ``new_sizes`` (``jax.lax.reshape``).

    >>> reshape(np.arange(6).reshape(2, 3), (3, 2), (1, 0))
    array([[0, 3],
           [1, 4],
           [2, 5]])
    """
    x = leaf(operand)
    if dimensions is not None and tuple(dimensions) != tuple(range(aval_of(x).ndim)):
        x = layout.transpose(x, tuple(dimensions))
    return layout.reshape(x, tuple(new_sizes))


def squeeze(array, dimensions):
    """``array`` without its size-1 dims ``dimensions`` (``jax.lax.squeeze``)."""
    return layout.squeeze(leaf(array), tuple(dimensions))


def expand_dims(array, dimensions):
    """``array`` with size-1 dims inserted at ``dimensions`` of the result
    (``jax.lax.expand_dims``)."""
    return layout.expand_dims(leaf(array), tuple(dimensions))


def transpose(operand, permutation):
    """``operand``'s dims in the order ``permutation`` (``jax.lax.transpose``)."""
    x = leaf(operand)
    permutation = tuple(operator.index(p) for p in permutation)
    if permutation == tuple(range(aval_of(x).ndim)):
        return x
    return layout.transpose(x, permutation)


def rev(operand, dimensions):
    """``operand`` reversed along ``dimensions`` (``jax.lax.rev``)."""
    return layout.rev(leaf(operand), tuple(dimensions))


def pad(operand, padding_value, padding_config):
    """``operand`` padded by a ``(low, high, interior)`` triple per dim: negative low and
    high crop, interior inserts elements between neighbours (``jax.lax.pad``).

    >>> pad(np.array([1, 2]), 0, [(1, -1, 2)])
    array([0, 1, 0, 0])
    """
    x = leaf(operand)
    dt = aval_of(x).dtype
    if isinstance(padding_value, dtypes.WEAK_SCALAR_TYPES):
        padding_value = np.asarray(padding_value, dt)
    return layout.pad(x, padding_value, padding_config)


def concatenate(operands, dimension):
    """``operands`` joined along ``dimension`` (``jax.lax.concatenate``)."""
    operands = [leaf(x) for x in operands]
    if len(operands) == 1:
        return operands[0]
    return layout.concatenate(operands, operator.index(dimension))


def collapse(operand, start_dimension, stop_dimension=None):
    """``operand`` with the dims ``[start_dimension, stop_dimension)`` merged into one
    (``jax.lax.collapse``).

    >>> collapse(np.zeros((2, 3, 4)), 0, 2).shape
    (6, 4)
    """
    x = leaf(operand)
    shape = tuple(aval_of(x).shape)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ShapeError(f"cannot collapse dims [{start_dimension}:{stop_dimension}] of shape "
                         f"{shape}", op="collapse", source=user_source())
    return layout.reshape(x, shape[:lo] + (math.prod(shape[lo:hi]),) + shape[hi:])


def split(operand, sizes, axis=0):
    """``operand`` cut along ``axis`` into pieces of ``sizes`` (``jax.lax.split``).

    >>> [p.tolist() for p in split(np.arange(5), (2, 3))]
    [[0, 1], [2, 3, 4]]
    """
    x = leaf(operand)
    shape = aval_of(x).shape
    axis = normalize_axis(axis, len(shape), "split")
    sizes = [operator.index(s) for s in sizes]
    if sum(sizes) != shape[axis]:
        raise ShapeError(f"sizes {sizes} must add up to the size {shape[axis]} of axis {axis}",
                         op="split", source=user_source())
    pieces, start = [], 0
    for size in sizes:
        pieces.append(layout.slice_in_dim(x, start, start + size, 1, axis))
        start += size
    return pieces


def stack(operands, axis=0):
    """``operands`` of one shape joined along a new dim ``axis`` (``jax.lax.stack``)."""
    operands = [leaf(x) for x in operands]
    rank = aval_of(operands[0]).ndim + 1
    axis = normalize_axis(axis, rank, "stack")
    return concatenate([layout.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, a tuple (``jax.lax.unstack``)."""
    x = leaf(x)
    shape = aval_of(x).shape
    axis = normalize_axis(axis, len(shape), "unstack")
    return tuple(layout.squeeze(layout.slice_in_dim(x, i, i + 1, 1, axis), (axis,))
                 for i in range(shape[axis]))


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each dim ``i`` (``jax.lax.tile``).

    >>> tile(np.array([1, 2]), (2,))
    array([1, 2, 1, 2])
    """
    x = leaf(operand)
    shape = tuple(aval_of(x).shape)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != len(shape):
        raise ShapeError(f"reps {reps} need one count per dim of the operand of shape "
                         f"{shape}", op="tile", source=user_source())
    wide = tuple(n for pair in zip(reps, shape) for n in pair)
    x = layout.broadcast_in_dim(x, wide, tuple(range(1, 2 * len(shape), 2)))
    return layout.reshape(x, tuple(r * n for r, n in zip(reps, shape)))


def iota(dtype, size):
    """``0, 1, ..., size - 1`` as ``dtype`` (``jax.lax.iota``)."""
    return layout.iota(dtype, (operator.index(size),), 0)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """``0, 1, ...`` along ``dimension`` of ``shape``, repeated along the other dims
    (``jax.lax.broadcasted_iota``)."""
    shape = tuple(shape)
    return layout.iota(dtype, shape, normalize_axis(dimension, len(shape), "broadcasted_iota"))


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (as ``dtype``, else its own dtype)
    (``jax.lax.full``)."""
    shape = (operator.index(shape),) if not isinstance(shape, (tuple, list)) else tuple(shape)
    return layout.full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """``full`` in the shape and dtype of ``x`` unless ``shape`` or ``dtype`` say otherwise
    (``jax.lax.full_like``)."""
    x_aval = aval_of(x)
    return layout.full(tuple(x_aval.shape) if shape is None else tuple(shape), fill_value,
                       x_aval.dtype if dtype is None else dtype)


def empty(shape, dtype, *, out_sharding=None):
    """An array of ``shape`` and ``dtype`` whose values do not matter; zeros here
    (``jax.lax.empty``)."""
    return full(shape, 0, dtype)


def shape_as_value(shape):
    """``shape`` as a 1-d integer array (int32 where its dims fit, as JAX's)
    (``jax.lax.shape_as_value``)."""
    shape = tuple(operator.index(d) for d in shape)
    fits = all(d <= np.iinfo(np.int32).max for d in shape)
    return np.asarray(shape, np.int32 if fits else np.int64).reshape(len(shape))


def dtype(x):
    """The dtype ``x`` has as an operand (a Python float is float64) (``jax.lax.dtype``)."""
    if isinstance(x, Tracer):
        return x.aval.dtype
    if isinstance(x, (type, np.dtype, str)):
        return dtypes.canonical(x)
    return aval_of_value(x).dtype


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
