"""Reductions by segment (``jax.ops``): ``segment_sum(data, ids)[k]`` combines the rows of
``data`` whose id is ``k``; composites of the scatter primitives, so they differentiate,
batch and compile as those do. Rows with an id outside ``[0, num_segments)`` are dropped,
as JAX's default mode.

>>> segment_sum(np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2]), num_segments=3)
array([3., 0., 3.])
"""
import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ConcretizationError, ShapeError, UnsupportedError
from . import elementwise as ew
from . import indexing as ix
from . import layout
from . import sorting


def _plan(data, segment_ids, num_segments, mode, name):
    """(data, ids as an index matrix, valid rows, output shape), rows outside
    ``[0, num_segments)`` pointed at row 0 and marked invalid."""
    from ..core.trace import Tracer
    if mode not in (None, "drop", "fill", "promise_in_bounds"):
        raise UnsupportedError(f"mode={mode!r}; rows outside the segments are dropped",
                               op=name)
    if num_segments is None:
        if type(segment_ids) is Tracer:
            raise ConcretizationError("num_segments is needed when segment_ids are traced "
                                      "(it is the output's length)", op=name)
        num_segments = int(np.max(segment_ids)) + 1 if np.size(segment_ids) else 0
    ids = segment_ids if type(segment_ids) is Tracer else np.asarray(segment_ids)
    id_aval = aval_of(ids)
    if not dtypes.is_integer(id_aval.dtype):
        raise ShapeError(f"segment_ids must be integers, got {id_aval.dtype.name}", op=name)
    ids = ew.convert_element_type(ids, dtypes.int64)
    shape = tuple(aval_of(data).shape)
    if len(id_aval.shape) != 1 or (shape and id_aval.shape[0] != shape[0]):
        raise ShapeError(f"segment_ids of shape {tuple(id_aval.shape)} must give one id per "
                         f"row of data (shape {shape})", op=name)
    n = int(num_segments)
    valid = ew.and_(ew.ge(ids, np.asarray(0, np.int64)), ew.lt(ids, np.asarray(n, np.int64)))
    safe = ew.select(valid, ids, layout.full(tuple(id_aval.shape), 0, dtypes.int64))
    matrix = layout.reshape(safe, tuple(id_aval.shape) + (1,))
    return matrix, valid, (n,) + shape[1:]


def _rows(valid, data):
    """``valid`` broadcast over ``data``'s rows."""
    shape = tuple(aval_of(data).shape)
    return layout.broadcast_in_dim(valid, shape, (0,))


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The sum of the rows of ``data`` in each segment (0 for an empty one), as
    ``jax.ops.segment_sum``; ``num_segments`` is needed when the ids are traced."""
    matrix, valid, out_shape = _plan(data, segment_ids, num_segments, mode, "segment_sum")
    dt = aval_of(data).dtype
    kept = ew.select(_rows(valid, data), data, layout.full(tuple(aval_of(data).shape), 0, dt))
    return ix.scatter_add(layout.full(out_shape, 0, dt), matrix, kept, (0,))


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """The product of the rows of ``data`` in each segment (1 for an empty one), as
    ``jax.ops.segment_prod``."""
    matrix, valid, out_shape = _plan(data, segment_ids, num_segments, mode, "segment_prod")
    dt = aval_of(data).dtype
    kept = ew.select(_rows(valid, data), data, layout.full(tuple(aval_of(data).shape), 1, dt))
    return ix.scatter_mul(layout.full(out_shape, 1, dt), matrix, kept, (0,))


def _extreme(data, segment_ids, num_segments, mode, kind):
    name = f"segment_{kind}"
    matrix, valid, out_shape = _plan(data, segment_ids, num_segments, mode, name)
    dt = aval_of(data).dtype
    if dtypes.is_inexact(dt):
        start = -np.inf if kind == "max" else np.inf
    elif dtypes.is_bool(dt):
        start = kind != "max"
    else:
        info = np.iinfo(dt)
        start = info.min if kind == "max" else info.max
    shape = tuple(aval_of(data).shape)
    kept = ew.select(_rows(valid, data), data, layout.full(shape, start, dt))
    return sorting.scatter_extreme(layout.full(out_shape, start, dt), matrix, kept, (0,), kind)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The largest row of ``data`` in each segment, elementwise (``-inf``, or the dtype's
    least value, for an empty one), as ``jax.ops.segment_max``."""
    return _extreme(data, segment_ids, num_segments, mode, "max")


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """The smallest row of ``data`` in each segment (``inf``, or the dtype's greatest
    value, for an empty one), as ``jax.ops.segment_min``."""
    return _extreme(data, segment_ids, num_segments, mode, "min")
