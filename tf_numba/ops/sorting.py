"""``sort``: a stable sort of several equal-shape operands by the first ``num_keys`` of them.

Keys compare lexicographically in NumPy order (NaN last; complex by real, then imaginary
part). The JVP sorts an iota along to recover the permutation and gathers the tangents with
it, so the derivative is linear and transposes to a scatter_add.

``scatter_extreme`` (scatter-max and scatter-min) is a composition on ``sort``: the
updates sorted so that the one that must win is written last.
"""
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.linear import Zero, aval_of, has_tangent
from ..core.primitive import Primitive, register
from ..core.shapes import same_shape
from ..errors import ShapeError
from ..transforms import batching as B
from . import elementwise as ew
from . import indexing, layout
from .layout import located

PRIMS = {}


def _sort_eval(*operands, dimension, num_keys):
    if not operands:
        raise ShapeError("needs at least one operand", op="sort")
    shape = operands[0].shape
    if any(not same_shape(o.shape, shape, "sort") for o in operands):
        raise ShapeError("operands need one shape, got "
                         + ", ".join(str(o.shape) for o in operands), op="sort")
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"dimension {dimension} out of range for operands of shape {shape}",
                         op="sort")
    if not 1 <= num_keys <= len(operands):
        raise ShapeError(f"num_keys must be between 1 and the number of operands "
                         f"({len(operands)}), got {num_keys}", op="sort")
    return tuple(operands)


def _sort_impl(*operands, dimension, num_keys):
    operands = [np.asarray(o) for o in operands]
    if num_keys == 1:
        order = np.argsort(operands[0], axis=dimension, kind="stable")
    else:
        # lexsort takes the primary key last
        order = np.lexsort(operands[num_keys - 1::-1], axis=dimension)
    return [np.take_along_axis(o, order, dimension) for o in operands]


sort_p = Primitive("sort", _sort_eval, _sort_impl, multiple_results=True)
PRIMS["sort"] = sort_p


@located
def sort(operands, dimension, num_keys=1):
    """Sort every operand along ``dimension`` by the first ``num_keys`` operands (stable).

    Returns a list with one sorted array per operand.

    >>> sort([np.array([3., 1., 2.]), np.array([0, 1, 2])], 0)
    [array([1., 2., 3.]), array([1, 2, 0])]
    """
    operands = list(operands)
    rank = len(aval_of(operands[0]).shape) if operands else 0
    dimension = operator.index(dimension)
    if -rank <= dimension < 0:
        dimension += rank
    return sort_p.bind(*operands, dimension=dimension, num_keys=operator.index(num_keys))


def _sort_jvp(primals, tangents, *, dimension, num_keys):
    shape = aval_of(primals[0]).shape
    if all(type(t) is Zero for t in tangents):
        outs = sort_p.bind(*primals, dimension=dimension, num_keys=num_keys)
        return outs, [Zero(aval_of(o)) for o in outs]
    position = layout.iota(dtypes.int64, shape, dimension)
    *outs, permutation = sort_p.bind(*primals, position, dimension=dimension,
                                     num_keys=num_keys)
    out_tangents = [
        Zero(aval_of(o)) if type(t) is Zero or not has_tangent(aval_of(o))
        else indexing.take_along_axis(t, permutation, dimension)
        for o, t in zip(outs, tangents)]
    return outs, out_tangents


register("jvp", sort_p, _sort_jvp)


def _sort_batch(args, dims, *, dimension, num_keys):
    size = B.axis_size_of(args, dims)
    d = B.common_dim(args, dims)
    xs = [B.bdim_to(x, e, d, size) for x, e in zip(args, dims)]
    outs = sort_p.bind(*xs, dimension=dimension + (dimension >= d), num_keys=num_keys)
    return outs, [d] * len(outs)


register("batch", sort_p, _sort_batch)


# ---------------------------------------------------------------- scatter-max and -min

def _order_flip(v):
    """An order-reversing bijection: min(a, b) == flip(max(flip(a), flip(b)))."""
    dt = aval_of(v).dtype
    if dtypes.is_integer(dt) or dtypes.is_bool(dt):
        return ew.not_(v)
    return ew.neg(v)


def scatter_extreme(x, indices, updates, axes, kind):
    """A copy of ``x`` with ``max(x, update)`` (``kind`` "max") or ``min`` at the point
    positions of ``indices`` over ``axes`` (``indexing.scatter``'s convention), duplicates
    combined exactly: the updates are sorted so the largest is written last, and
    ``scatter`` keeps the last.

    >>> scatter_extreme(np.zeros(2), np.array([[0], [0]]), np.array([3., 5.]), (0,), "max")
    array([5., 0.])
    """
    if kind == "min":
        return _order_flip(scatter_extreme(_order_flip(x), indices, _order_flip(updates), axes,
                                           "max"))
    shape = tuple(aval_of(x).shape)
    rest = [d for d in range(len(shape)) if d not in axes]
    batch = tuple(aval_of(indices).shape[:-1])
    count = math.prod(batch)
    # make every update a scalar with a full coordinate, so sorting is per element
    rest_shape = tuple(shape[d] for d in rest)
    full_shape = batch + rest_shape
    cols = [layout.broadcast_in_dim(layout.slice_in_dim(indices, j, j + 1, 1, len(batch)),
                                    full_shape + (1,),
                                    tuple(range(len(batch))) + (len(full_shape),))
            for j in range(len(axes))]
    cols += [layout.reshape(layout.iota(dtypes.int64, full_shape, len(batch) + r),
                            full_shape + (1,)) for r in range(len(rest))]
    total = count * math.prod(rest_shape)
    coords = layout.reshape(layout.concatenate(cols, len(full_shape)),
                            (total, len(cols)))
    values = layout.reshape(updates, (total,))
    columns = [layout.reshape(layout.slice_in_dim(coords, j, j + 1, 1, 1), (total,))
               for j in range(len(cols))]
    ordered = sort([values] + columns, 0, 1)
    coords = layout.concatenate([layout.reshape(c, (total, 1)) for c in ordered[1:]], 1)
    all_axes = tuple(axes) + tuple(rest)
    current = indexing.gather(x, coords, all_axes)
    return indexing.scatter(x, coords, ew.max(current, ordered[0]), all_axes)
