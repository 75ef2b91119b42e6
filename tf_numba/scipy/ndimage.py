"""``tf_numba.scipy.ndimage``: ``map_coordinates``, the values of an N-D array at
fractional coordinates by nearest-neighbour (order 0) or linear (order 1) interpolation,
with JAX's edge modes, differentiable in the array and the coordinates.

>>> map_coordinates(np.arange(4.0), [np.array([0.5, 2.25])], order=1)
array([0.5 , 2.25])
"""
import functools
import itertools
import operator

import numpy as np

import tf_numba.numpy as tnp

from ..errors import ArgumentError, ShapeError, UnsupportedError

__all__ = ["map_coordinates"]


def _mirror(index, size):
    """Indices reflected at the centres of the edge elements (``d c b | a b c d | c b a``):
    a triangular wave of half period ``size - 1``."""
    s = max(size - 1, 1)
    return tnp.abs((index + s) % (2 * s) - s)


def _reflect(index, size):
    """Indices reflected at the outer edges (``d c b a | a b c d | d c b a``)."""
    return tnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


# mode: where an index outside [0, size) reads
_EDGES = {
    "constant": lambda index, size: index,          # nowhere: it is cval (masked below)
    "nearest": lambda index, size: tnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x):
    return tnp.sign(x) * tnp.floor(tnp.abs(x) + 0.5)


def _nearest(coordinate):
    return [(_round_half_away(coordinate).astype(np.int64), None)]


def _linear(coordinate):
    lower = tnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int64)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002
    """``input`` at the points ``coordinates`` (one array of positions per dimension of
    ``input``, all of one shape, the result's), interpolated with spline ``order`` 0
    (nearest, halves rounded away from zero) or 1 (linear), as
    ``jax.scipy.ndimage.map_coordinates``. ``mode`` says what lies outside: 'constant'
    (``cval``; each neighbour outside counts as ``cval``), 'nearest', 'wrap', 'mirror' or
    'reflect'. Integer inputs give rounded integers. Differentiable in ``input`` and, for
    order 1, in the coordinates.

    >>> map_coordinates(np.eye(2), [np.array([0.5]), np.array([0.5])], order=1)
    array([0.5])
    """
    x = tnp.asarray(input)
    coordinates = [tnp.asarray(c) for c in coordinates]
    if len(coordinates) != x.ndim:
        raise ShapeError(f"give one coordinate array per dimension of the input: "
                         f"{len(coordinates)} for {x.ndim}", op="map_coordinates")
    if mode not in _EDGES:
        raise ArgumentError(f"mode must be one of {sorted(_EDGES)}, got {mode!r}",
                            op="map_coordinates")
    if order not in (0, 1):
        raise UnsupportedError(f"order {order}: only nearest (0) and linear (1) "
                               "interpolation, as JAX's", op="map_coordinates")
    nodes_of = _nearest if order == 0 else _linear
    per_axis = []
    for coordinate, size in zip(coordinates, x.shape):
        if not tnp.issubdtype(coordinate.dtype, tnp.inexact):
            coordinate = coordinate.astype(np.float64)
        per_axis.append([(_EDGES[mode](index, size),
                          (index >= 0) & (index < size) if mode == "constant" else None,
                          weight) for index, weight in nodes_of(coordinate)])
    total = None
    for corner in itertools.product(*per_axis):
        indices, valid, weights = zip(*corner)
        # (through at: x may be NumPy's and the indices traced)
        value = tnp.at(x)[tuple(tnp.clip(i, 0, s - 1) for i, s in zip(indices, x.shape))].get()
        valid = [v for v in valid if v is not None]
        if valid:
            value = tnp.where(functools.reduce(operator.and_, valid), value,
                              tnp.asarray(cval, value.dtype))
        weights = [w for w in weights if w is not None]
        if weights:
            value = functools.reduce(operator.mul, weights) * value
        total = value if total is None else total + value
    if tnp.issubdtype(x.dtype, tnp.integer):
        total = _round_half_away(total)
    return total.astype(x.dtype)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
