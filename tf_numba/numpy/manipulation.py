"""Shape and layout manipulation: reshape, transpose, join, split, tile, flip, pad, diagonals.

Each function emits layout primitives (``reshape``, ``transpose``, ``slice``, ``concatenate``,
``rev``, ``pad``, ``broadcast_in_dim``) with static parameters taken from the shapes.

>>> tnp.concatenate([np.zeros(2, np.float32), np.arange(2)]).dtype
dtype('float64')
"""
import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import broadcast_shapes as _broadcast_shapes, normalize_axis
from ..errors import DTypeError, ShapeError, UnsupportedError
from ..ops import elementwise as ew
from ..ops import layout
from . import _promote as P

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "swapaxes", "moveaxis", "rollaxis",
           "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays", "broadcast_shapes",
           "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
           "split", "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat", "flip",
           "fliplr", "flipud", "roll", "rot90", "pad", "diag", "diagonal", "diagflat", "tril",
           "triu", "atleast_1d", "atleast_2d", "atleast_3d", "astype", "append", "delete",
           "shape", "ndim", "size", "matrix_transpose", "unstack", "block", "isscalar",
           "iterable", "insert", "resize"]


_arr = P.as_array


_shape = P.shape_of


def shape(a):
    """The shape of ``a`` as a tuple, as ``numpy.shape``.

    >>> tnp.shape(np.zeros((2, 3)))
    (2, 3)
    """
    return _shape(_arr(a))


def ndim(a):
    """The number of dimensions of ``a``, as ``numpy.ndim``.

    >>> tnp.ndim(1.0)
    0
    """
    return len(shape(a))


def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis``), as ``numpy.size``.

    >>> tnp.size(np.zeros((2, 3)))
    6
    """
    s = shape(a)
    if axis is None:
        return math.prod(s)
    return s[normalize_axis(axis, len(s), "size")]


def isscalar(element):
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or a 0-d array (traced
    values included), as ``jax.numpy.isscalar`` (NumPy says False for 0-d arrays).

    >>> tnp.isscalar(np.array(1.0)), tnp.isscalar([1.0])
    (True, False)
    """
    if np.isscalar(element):
        return True
    if isinstance(element, np.ndarray) or P.is_tracer(element):
        return len(_shape(element)) == 0
    return False


iterable = np.iterable


# ---------------------------------------------------------------- reshape and axes


def reshape(a, /, shape=None, order="C", *, newshape=None, copy=None):
    """``a`` with a new shape (one entry may be -1), as ``numpy.reshape``; ``order`` C or F.

    >>> tnp.reshape(np.arange(6), (2, -1))
    array([[0, 1, 2],
           [3, 4, 5]])
    """
    if shape is None:
        shape = newshape
    a = _arr(a)
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    shape = tuple(P.concrete_int(d, "reshape", "shape") for d in shape)
    if order in ("C", "A"):
        return layout.reshape(a, shape)
    if order == "F":
        flipped = transpose(a)
        if -1 in shape:
            shape = _shape(layout.reshape(np.zeros(_shape(a), np.bool_), shape))
        return transpose(layout.reshape(flipped, shape[::-1]))
    raise UnsupportedError(f"order={order!r} is not supported; use 'C' or 'F'", op="reshape")


def ravel(a, order="C"):
    """``a`` flattened to 1-D, as ``numpy.ravel``.

    >>> tnp.ravel(np.ones((2, 2))).shape
    (4,)
    """
    return reshape(a, (-1,), order=order)


def transpose(a, axes=None):
    """``a`` with its axes permuted (reversed by default), as ``numpy.transpose``.

    >>> tnp.transpose(np.zeros((2, 3))).shape
    (3, 2)
    """
    a = _arr(a)
    rank = len(_shape(a))
    if axes is None:
        perm = tuple(range(rank))[::-1]
    else:
        perm = tuple(normalize_axis(P.concrete_int(x, "transpose", "axes"), rank, "transpose")
                     for x in axes)
        if sorted(perm) != list(range(rank)):
            raise ShapeError(f"axes {tuple(axes)} don't match array of rank {rank}",
                             op="transpose")
    return layout.transpose(a, perm)


def permute_dims(a, axes=None):
    """The array API's name for ``transpose``.

    >>> tnp.permute_dims(np.zeros((2, 3)), (1, 0)).shape
    (3, 2)
    """
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes, as ``numpy.matrix_transpose``.

    >>> tnp.matrix_transpose(np.zeros((4, 2, 3))).shape
    (4, 3, 2)
    """
    x = _arr(x)
    if len(_shape(x)) < 2:
        raise ShapeError(f"needs an array of rank >= 2, got shape {_shape(x)}",
                         op="matrix_transpose")
    return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
    """``a`` with two axes interchanged, as ``numpy.swapaxes``.

    >>> tnp.swapaxes(np.zeros((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    a = _arr(a)
    rank = len(_shape(a))
    i, j = P.axis_arg(axis1, rank, "swapaxes"), P.axis_arg(axis2, rank, "swapaxes")
    perm = list(range(rank))
    perm[i], perm[j] = perm[j], perm[i]
    return layout.transpose(a, tuple(perm))


def _axis_list(axis, rank, name):
    if isinstance(axis, (tuple, list)):
        return [P.axis_arg(x, rank, name) for x in axis]
    return [P.axis_arg(axis, rank, name)]


def moveaxis(a, source, destination):
    """``a`` with axes moved from ``source`` to ``destination``, as ``numpy.moveaxis``.

    >>> tnp.moveaxis(np.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    a = _arr(a)
    rank = len(_shape(a))
    src = _axis_list(source, rank, "moveaxis")
    dst = _axis_list(destination, rank, "moveaxis")
    if len(src) != len(dst):
        raise ShapeError("`source` and `destination` arguments must have the same number of "
                         "elements", op="moveaxis")
    order = [n for n in range(rank) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return layout.transpose(a, tuple(order))


def rollaxis(a, axis, start=0):
    """Roll ``axis`` backwards until it lies before ``start``, as ``numpy.rollaxis``.

    >>> tnp.rollaxis(np.zeros((2, 3, 4)), 2).shape
    (4, 2, 3)
    """
    a = _arr(a)
    rank = len(_shape(a))
    axis = P.axis_arg(axis, rank, "rollaxis")
    start = P.concrete_int(start, "rollaxis", "start")
    if start < 0:
        start += rank
    if not 0 <= start < rank + 1:
        raise ShapeError(f"start={start} must satisfy 0 <= start < {rank + 1}", op="rollaxis")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    axes = list(range(rank))
    axes.remove(axis)
    axes.insert(start, axis)
    return layout.transpose(a, tuple(axes))


def expand_dims(a, axis):
    """``a`` with size-1 axes inserted at ``axis`` (an int or a tuple), as ``numpy.expand_dims``.

    >>> tnp.expand_dims(np.zeros(3), (0, 2)).shape
    (1, 3, 1)
    """
    a = _arr(a)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    rank = len(_shape(a)) + len(axes)
    dims = sorted(normalize_axis(P.concrete_int(x, "expand_dims", "axis"), rank, "expand_dims")
                  for x in axes)
    if len(set(dims)) != len(dims):
        raise ShapeError(f"repeated axis in {tuple(axes)}", op="expand_dims")
    return layout.expand_dims(a, tuple(dims))


def squeeze(a, axis=None):
    """``a`` without size-1 axes (all of them, or those in ``axis``), as ``numpy.squeeze``.

    >>> tnp.squeeze(np.zeros((1, 3, 1))).shape
    (3,)
    """
    a = _arr(a)
    s = _shape(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        dims = tuple(P.axes_arg(axis, len(s), "squeeze"))
        for d in dims:
            if s[d] != 1:
                raise ShapeError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one (axis {d} of shape {s})", op="squeeze")
    return layout.squeeze(a, dims)


def broadcast_to(array, shape):
    """``array`` broadcast to ``shape``, as ``numpy.broadcast_to``.

    >>> tnp.broadcast_to(np.arange(3), (2, 3)).shape
    (2, 3)
    """
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return P.broadcast_to(_arr(array), tuple(P.concrete_int(d, "broadcast_to", "shape")
                                             for d in shape), "broadcast_to")


def broadcast_arrays(*args):
    """The arguments broadcast against each other, as ``numpy.broadcast_arrays``.

    >>> [x.shape for x in tnp.broadcast_arrays(np.zeros(3), np.zeros((2, 1)))]
    [(2, 3), (2, 3)]
    """
    xs = [_arr(x) for x in args]
    return tuple(P.broadcast_all("broadcast_arrays", xs, keep_scalars=False))


def broadcast_shapes(*shapes):
    """The broadcast of several shapes, as ``numpy.broadcast_shapes``.

    >>> tnp.broadcast_shapes((2, 1), (3,))
    (2, 3)
    """
    return _broadcast_shapes(*[tuple(s) if isinstance(s, (tuple, list)) else (s,)
                               for s in shapes], op="broadcast_shapes")


def astype(x, dtype, /, *, copy=True):
    """``x`` converted to ``dtype``, as ``numpy.astype``.

    >>> tnp.astype(np.array([1.7, -1.7]), np.int32)
    array([ 1, -1], dtype=int32)
    """
    return ew.convert_element_type(_arr(x), dtypes.canonical(dtype))


# ---------------------------------------------------------------- joining


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along ``axis`` (flattened first when ``axis`` is None), with promotion.

    >>> tnp.concatenate([np.zeros((1, 2)), np.ones((1, 2))]).shape
    (2, 2)
    """
    P.check_unsupported("concatenate", out=(out, None))
    xs = [_arr(x) for x in arrays]
    if not xs:
        raise ShapeError("need at least one array to concatenate", op="concatenate")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    dt = _join_dtype(xs, dtype, casting, "concatenate")
    xs = [P.cast(x, dt) for x in xs]
    rank = len(_shape(xs[0]))
    if rank == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated", op="concatenate")
    for x in xs:
        if len(_shape(x)) != rank:
            raise ShapeError("all the input arrays must have same number of dimensions, got "
                             + ", ".join(str(_shape(x)) for x in xs), op="concatenate")
    axis = P.axis_arg(axis, rank, "concatenate")
    return layout.concatenate(xs, axis)


def _join_dtype(xs, dtype, casting, name):
    """The promoted dtype of ``xs``, or ``dtype`` if every input may be cast to it."""
    if dtype is None:
        return P.result_type(*xs)
    dt = dtypes.canonical(dtype)
    for x in xs:
        if not np.can_cast(aval_of(x).dtype, dt, casting):
            raise DTypeError(f"cannot cast {aval_of(x).dtype.name} to {dt.name} with "
                             f"casting={casting!r}", op=name)
    return dt


def concat(arrays, /, *, axis=0):
    """The array API's name for ``concatenate``.

    >>> tnp.concat([np.zeros(1), np.ones(1)])
    array([0., 1.])
    """
    return concatenate(arrays, axis)


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join equal-shape arrays along a new ``axis``, as ``numpy.stack``.

    >>> tnp.stack([np.zeros(2), np.ones(2)], axis=1).shape
    (2, 2)
    """
    P.check_unsupported("stack", out=(out, None))
    xs = [_arr(x) for x in arrays]
    if not xs:
        raise ShapeError("need at least one array to stack", op="stack")
    shapes = {_shape(x) for x in xs}
    if len(shapes) != 1:
        raise ShapeError("all input arrays must have the same shape, got "
                         + ", ".join(str(_shape(x)) for x in xs), op="stack")
    rank = len(_shape(xs[0])) + 1
    axis = P.axis_arg(axis, rank, "stack")
    return concatenate([layout.expand_dims(x, (axis,)) for x in xs], axis, dtype=dtype,
                       casting=casting)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis`` as a tuple, as ``numpy.unstack``.

    >>> len(tnp.unstack(np.zeros((3, 2))))
    3
    """
    x = _arr(x)
    rank = len(_shape(x))
    axis = P.axis_arg(axis, rank, "unstack")
    return tuple(layout.squeeze(layout.slice_in_dim(x, i, i + 1, 1, axis), (axis,))
                 for i in range(_shape(x)[axis]))


def atleast_1d(*arys):
    """Inputs with at least one dimension, as ``numpy.atleast_1d``.

    >>> tnp.atleast_1d(1.0).shape
    (1,)
    """
    out = [layout.reshape(x, (1,)) if not _shape(x) else x for x in map(_arr, arys)]
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*arys):
    """Inputs with at least two dimensions (new axes in front), as ``numpy.atleast_2d``.

    >>> tnp.atleast_2d(np.zeros(3)).shape
    (1, 3)
    """
    out = []
    for x in map(_arr, arys):
        s = _shape(x)
        out.append(layout.reshape(x, (1,) * (2 - len(s)) + s) if len(s) < 2 else x)
    return out[0] if len(out) == 1 else tuple(out)


def atleast_3d(*arys):
    """Inputs with at least three dimensions: ``(N,)`` becomes ``(1, N, 1)`` and ``(M, N)``
    becomes ``(M, N, 1)``, as ``numpy.atleast_3d``.

    >>> tnp.atleast_3d(np.zeros((2, 3))).shape
    (2, 3, 1)
    """
    out = []
    for x in map(_arr, arys):
        s = _shape(x)
        new = {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)
        out.append(layout.reshape(x, new))
    return out[0] if len(out) == 1 else tuple(out)


def _as_list(result):
    return list(result) if isinstance(result, tuple) else [result]


def hstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the second axis (the first for 1-D inputs), as ``numpy.hstack``.

    >>> tnp.hstack([np.zeros(2), np.ones(1)]).shape
    (3,)
    """
    xs = _as_list(atleast_1d(*tup))
    return concatenate(xs, 0 if len(_shape(xs[0])) == 1 else 1, dtype=dtype)


def vstack(tup, *, dtype=None, casting="same_kind"):
    """Join along the first axis after ``atleast_2d``, as ``numpy.vstack``.

    >>> tnp.vstack([np.zeros(2), np.ones(2)]).shape
    (2, 2)
    """
    return concatenate(_as_list(atleast_2d(*tup)), 0, dtype=dtype)


def dstack(tup):
    """Join along the third axis after ``atleast_3d``, as ``numpy.dstack``.

    >>> tnp.dstack([np.zeros(2), np.ones(2)]).shape
    (1, 2, 2)
    """
    return concatenate(_as_list(atleast_3d(*tup)), 2)


def column_stack(tup):
    """1-D arrays as columns of a 2-D array, as ``numpy.column_stack``.

    >>> tnp.column_stack([np.zeros(2), np.ones(2)]).shape
    (2, 2)
    """
    cols = []
    for x in map(_arr, tup):
        s = _shape(x)
        cols.append(layout.reshape(x, s + (1,)) if len(s) < 2 else x)
    cols = [layout.reshape(c, (1, 1)) if not _shape(c) else c for c in cols]
    return concatenate(cols, 1)


def block(arrays):
    """An array assembled from nested lists of blocks, as ``numpy.block``.

    >>> tnp.block([[np.zeros((1, 1)), np.ones((1, 1))]]).shape
    (1, 2)
    """
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else 0

    levels = depth(arrays)

    def leaf_rank(x):
        return leaf_rank(x[0]) if isinstance(x, list) else len(_shape(_arr(x)))

    rank = max(levels, leaf_rank(arrays))

    def assemble(x, level):
        if not isinstance(x, list):
            x = _arr(x)
            s = _shape(x)
            return layout.reshape(x, (1,) * (rank - len(s)) + s)
        parts = [assemble(e, level + 1) for e in x]
        return concatenate(parts, axis=rank - levels + level)

    return assemble(arrays, 0)


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None).

    >>> tnp.append(np.arange(2), [5])
    array([0, 1, 5])
    """
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# ---------------------------------------------------------------- splitting


def _split_points(n, indices_or_sections, name, even):
    if isinstance(indices_or_sections, (list, tuple, np.ndarray)):
        points = [int(i) for i in indices_or_sections]
        bounds = [0] + points + [n]
        return [(max(min(lo if lo >= 0 else lo + n, n), 0), max(min(hi if hi >= 0 else hi + n,
                                                                    n), 0))
                for lo, hi in zip(bounds[:-1], bounds[1:])]
    sections = P.concrete_int(indices_or_sections, name, "indices_or_sections")
    if sections <= 0:
        raise ShapeError("number sections must be larger than 0", op=name)
    if even and n % sections:
        raise ShapeError(f"array split does not result in an equal division: {n} elements "
                         f"into {sections} sections", op=name)
    each, extras = divmod(n, sections)
    sizes = [each + 1] * extras + [each] * (sections - extras)
    starts = np.cumsum([0] + sizes)
    return [(int(starts[i]), int(starts[i + 1])) for i in range(sections)]


def array_split(ary, indices_or_sections, axis=0):
    """Split into sections (unequal sizes allowed), as ``numpy.array_split``.

    >>> [x.shape for x in tnp.array_split(np.arange(5), 2)]
    [(3,), (2,)]
    """
    return _split(ary, indices_or_sections, axis, "array_split", even=False)


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections or at indices, as ``numpy.split``.

    >>> [x.tolist() for x in tnp.split(np.arange(4), [1])]
    [[0], [1, 2, 3]]
    """
    return _split(ary, indices_or_sections, axis, "split", even=True)


def _split(ary, indices_or_sections, axis, name, even):
    x = _arr(ary)
    rank = len(_shape(x))
    axis = P.axis_arg(axis, rank, name)
    n = _shape(x)[axis]
    out = []
    for lo, hi in _split_points(n, indices_or_sections, name, even):
        out.append(layout.slice_in_dim(x, lo, builtins.max(lo, hi), 1, axis))
    return out


def hsplit(ary, indices_or_sections):
    """``split`` along the second axis (the first for 1-D), as ``numpy.hsplit``.

    >>> len(tnp.hsplit(np.zeros((2, 4)), 2))
    2
    """
    x = _arr(ary)
    if not _shape(x):
        raise ShapeError("only works on arrays of 1 or more dimensions", op="hsplit")
    return split(x, indices_or_sections, 1 if len(_shape(x)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along the first axis of an array of rank >= 2, as ``numpy.vsplit``.

    >>> len(tnp.vsplit(np.zeros((4, 2)), 2))
    2
    """
    if len(shape(ary)) < 2:
        raise ShapeError("only works on arrays of 2 or more dimensions", op="vsplit")
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    """``split`` along the third axis of an array of rank >= 3, as ``numpy.dsplit``.

    >>> len(tnp.dsplit(np.zeros((1, 1, 4)), 2))
    2
    """
    if len(shape(ary)) < 3:
        raise ShapeError("only works on arrays of 3 or more dimensions", op="dsplit")
    return split(ary, indices_or_sections, 2)


# ---------------------------------------------------------------- repetition


def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis, as ``numpy.tile``.

    >>> tnp.tile(np.array([1, 2]), 2)
    array([1, 2, 1, 2])
    """
    x = _arr(A)
    reps = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    reps = tuple(P.concrete_int(r, "tile", "reps") for r in reps)
    s = _shape(x)
    rank = builtins.max(len(s), len(reps))
    s = (1,) * (rank - len(s)) + s
    reps = (1,) * (rank - len(reps)) + reps
    x = layout.reshape(x, s)
    expanded = tuple(d for pair in zip(reps, s) for d in pair)
    x = layout.broadcast_in_dim(x, expanded, tuple(range(1, 2 * rank, 2)))
    return layout.reshape(x, tuple(r * d for r, d in zip(reps, s)))


def repeat(a, repeats, axis=None):
    """Each element repeated ``repeats`` times (an int, or one count per element; concrete).

    >>> tnp.repeat(np.array([1, 2]), [1, 3])
    array([1, 2, 2, 2])
    """
    x = _arr(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    rank = len(_shape(x))
    axis = P.axis_arg(axis, rank, "repeat")
    counts = P.concrete_value(repeats, "repeat", "repeats")
    n = _shape(x)[axis]
    if counts.ndim == 0 or counts.size == 1:
        r = int(counts.reshape(()))
        if r < 0:
            raise ShapeError(f"negative repeats {r}", op="repeat")
        s = _shape(x)
        expanded = s[:axis + 1] + (r,) + s[axis + 1:]
        dims = tuple(range(axis + 1)) + tuple(range(axis + 2, rank + 1))
        y = layout.broadcast_in_dim(x, expanded, dims)
        return layout.reshape(y, s[:axis] + (n * r,) + s[axis + 1:])
    if counts.shape != (n,):
        raise ShapeError(f"repeats of shape {counts.shape} do not match axis {axis} of size "
                         f"{n}", op="repeat")
    from .indexing import take
    return take(x, np.repeat(np.arange(n), counts), axis=axis)


# ---------------------------------------------------------------- flips and rolls


def flip(m, axis=None):
    """``m`` with the order of elements reversed along ``axis`` (all axes by default).

    >>> tnp.flip(np.arange(3))
    array([2, 1, 0])
    """
    x = _arr(m)
    return layout.rev(x, P.axes_arg(axis, len(_shape(x)), "flip"))


def fliplr(m):
    """``m`` reversed along axis 1, as ``numpy.fliplr``.

    >>> tnp.fliplr(np.eye(2))[0]
    array([0., 1.])
    """
    if len(shape(m)) < 2:
        raise ShapeError("Input must be >= 2-d.", op="fliplr")
    return flip(m, 1)


def flipud(m):
    """``m`` reversed along axis 0, as ``numpy.flipud``.

    >>> tnp.flipud(np.arange(2))
    array([1, 0])
    """
    if len(shape(m)) < 1:
        raise ShapeError("Input must be >= 1-d.", op="flipud")
    return flip(m, 0)


def _roll_axis(x, shift, axis):
    n = _shape(x)[axis]
    if n == 0:
        return x
    if P.is_tracer(shift):
        from .indexing import take
        positions = layout.iota(dtypes.int64, (n,), 0)
        source = ew.rem(ew.sub(positions, ew.convert_element_type(shift, dtypes.int64)), n)
        return take(x, source, axis=axis)
    k = int(shift) % n
    if k == 0:
        return x
    return layout.concatenate([layout.slice_in_dim(x, n - k, n, 1, axis),
                               layout.slice_in_dim(x, 0, n - k, 1, axis)], axis)


def roll(a, shift, axis=None):
    """Elements shifted cyclically along ``axis`` (of the flattened array by default).

    ``shift`` may be traced (the roll then becomes a gather).

    >>> tnp.roll(np.arange(4), 1)
    array([3, 0, 1, 2])
    """
    x = _arr(a)
    if axis is None:
        return layout.reshape(roll(ravel(x), shift, 0), _shape(x))
    rank = len(_shape(x))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(axes) != len(shifts):
        raise ShapeError("'shift' and 'axis' should be scalars or 1D sequences of the same "
                         "length", op="roll")
    totals = {}
    for s, ax in zip(shifts, axes):
        ax = P.axis_arg(ax, rank, "roll")
        totals[ax] = s if ax not in totals else _add_shift(totals[ax], s)
    for ax, s in totals.items():
        x = _roll_axis(x, s, ax)
    return x


def _add_shift(a, b):
    if P.is_tracer(a) or P.is_tracer(b):
        from .math import add
        return add(a, b)
    return int(a) + int(b)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, as ``numpy.rot90``.

    >>> tnp.rot90(np.array([[1, 2], [3, 4]]))
    array([[2, 4],
           [1, 3]])
    """
    x = _arr(m)
    rank = len(_shape(x))
    if len(axes) != 2:
        raise ShapeError("len(axes) must be 2.", op="rot90")
    a0, a1 = (P.axis_arg(ax, rank, "rot90") for ax in axes)
    if a0 == a1:
        raise ShapeError("Axes must be different.", op="rot90")
    k = P.concrete_int(k, "rot90", "k") % 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    perm = list(range(rank))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(x, a1), perm)
    return flip(transpose(x, perm), a1)


# ---------------------------------------------------------------- pad


def _constant(v, dt):
    """A pad value as a 0-d array of ``dt`` (cast unsafely, as NumPy's pad does)."""
    if P.is_tracer(v):
        return ew.convert_element_type(v, dt)
    v = np.asarray(v)
    return (v.real if dtypes.is_complex(v.dtype) and not dtypes.is_complex(dt) else v).astype(dt)


def _pairs(value, rank, name, what):
    """NumPy's ``_as_pairs``: a scalar, a pair, or one pair per axis -> one pair per axis."""
    if P.is_tracer(value):
        if value.ndim:
            raise UnsupportedError(f"a traced {what} must be a scalar", op=name)
        return [(value, value)] * rank
    arr = np.asarray(value)
    if arr.ndim == 0 or arr.size == 1 and arr.ndim <= 2:
        v = arr.reshape(-1)[0] if arr.ndim else arr[()]
        return [(v, v)] * rank
    if arr.shape == (2,) or arr.shape == (1, 2):
        lo, hi = arr.reshape(-1)
        return [(lo, hi)] * rank
    try:
        arr = np.broadcast_to(arr, (rank, 2))
    except ValueError:
        raise ShapeError(f"{what} {value!r} cannot be broadcast to ({rank}, 2)",
                         op=name) from None
    return [tuple(p) for p in arr]


def _stat_block(x, axis, width, stat, dt):
    """A block of ``width`` copies of the statistic of ``x`` along ``axis``."""
    from . import reductions
    fn = {"maximum": reductions.max, "minimum": reductions.min,
          "mean": reductions.mean}[stat]
    s = fn(x, axis=axis, keepdims=True)
    if stat == "mean" and not dtypes.is_inexact(dt):
        from .math import round as round_
        s = round_(s)
    s = P.cast(s, dt)
    shp = list(_shape(x))
    shp[axis] = width
    return P.broadcast_to(s, tuple(shp))


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded, as ``numpy.pad``.

    Modes: constant (``constant_values``, may be traced), edge, reflect, symmetric, wrap
    (index modes, exactly NumPy's, via a gather with concrete indices), linear_ramp
    (``end_values``), maximum, minimum, mean (whole-axis statistics) and empty (zeros).

    >>> tnp.pad(np.array([1, 2]), 1, mode="edge")
    array([1, 1, 2, 2])
    """
    x = _arr(array)
    rank = len(_shape(x))
    dt = aval_of(x).dtype
    widths = [(P.concrete_int(lo, "pad", "pad_width"), P.concrete_int(hi, "pad", "pad_width"))
              for lo, hi in _pairs(pad_width, rank, "pad", "pad_width")]
    if any(w < 0 for pair in widths for w in pair):
        raise ShapeError("index can't contain negative values", op="pad")
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
               "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               "linear_ramp": {"end_values"}, "maximum": {"stat_length"},
               "minimum": {"stat_length"}, "mean": {"stat_length"}, "empty": set()}
    if not isinstance(mode, str) or mode not in allowed:
        raise UnsupportedError(f"mode={mode!r} is not supported; use one of "
                               f"{', '.join(allowed)}", op="pad")
    for key in kwargs:
        if key not in allowed[mode]:
            raise UnsupportedError(f"argument {key!r} is not supported for mode {mode!r}",
                                   op="pad")
    if kwargs.get("stat_length") is not None:
        raise UnsupportedError("argument stat_length is not supported (statistics use the "
                               "whole axis)", op="pad")
    if kwargs.get("reflect_type", "even") != "even":
        raise UnsupportedError("argument reflect_type='odd' is not supported", op="pad")
    if mode in ("constant", "empty"):
        values = kwargs.get("constant_values", 0) if mode == "constant" else 0
        value_pairs = _pairs(values, rank, "pad", "constant_values")
        flat = [v for pair in value_pairs for v in pair]
        if all(not P.is_tracer(v) for v in flat) and len({complex(v) for v in flat}) <= 1:
            fill = _constant(flat[0], dt) if flat else np.zeros((), dt)
            return layout.pad(x, fill, tuple((lo, hi, 0) for lo, hi in widths))
        for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, value_pairs)):
            parts = []
            for width, v in ((lo, vlo), (hi, vhi)):
                shp = list(_shape(x))
                shp[axis] = width
                parts.append(P.broadcast_to(_constant(v, dt), tuple(shp)))
            x = layout.concatenate([parts[0], x, parts[1]], axis)
        return x
    if mode == "linear_ramp":
        return _linear_ramp(x, widths, _pairs(kwargs.get("end_values", 0), rank, "pad",
                                              "end_values"), dt)
    if mode in ("maximum", "minimum", "mean"):
        for axis, (lo, hi) in enumerate(widths):
            if lo == hi == 0:
                continue
            if _shape(x)[axis] == 0:
                raise ShapeError(f"can't extend empty axis {axis} using modes other than "
                                 "'constant' or 'empty'", op="pad")
            x = layout.concatenate([_stat_block(x, axis, lo, mode, dt), x,
                                    _stat_block(x, axis, hi, mode, dt)], axis)
        return x
    from .indexing import take
    for axis, (lo, hi) in enumerate(widths):
        if lo == hi == 0:
            continue
        n = _shape(x)[axis]
        if n == 0:
            raise ShapeError(f"can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'", op="pad")
        source = np.pad(np.arange(n), (lo, hi), mode=mode)
        x = take(x, source, axis=axis)
    return x


def _linear_ramp(x, widths, ends, dt):
    from .creation import linspace
    for axis, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(widths, ends)):
        if lo == hi == 0:
            continue
        n = _shape(x)[axis]
        first = layout.squeeze(layout.slice_in_dim(x, 0, 1, 1, axis), (axis,))
        last = layout.squeeze(layout.slice_in_dim(x, n - 1, n, 1, axis), (axis,))
        ramps = []
        for width, end, edge in ((lo, end_lo, first), (hi, end_hi, last)):
            start = P.broadcast_to(P.cast(_arr(end), dt), _shape(edge))
            ramp = linspace(start, edge, num=width, endpoint=False, dtype=dt, axis=axis)
            ramps.append(ramp)
        x = layout.concatenate([ramps[0], x, layout.rev(ramps[1], (axis,))], axis)
    return x


# ---------------------------------------------------------------- diagonals and triangles


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of ``a`` over ``axis1``/``axis2``, appended as the last axis.

    >>> tnp.diagonal(np.arange(9).reshape(3, 3), 1)
    array([1, 5])
    """
    x = _arr(a)
    rank = len(_shape(x))
    if rank < 2:
        raise ShapeError("diag requires an array of at least two dimensions", op="diagonal")
    i = P.axis_arg(axis1, rank, "diagonal")
    j = P.axis_arg(axis2, rank, "diagonal")
    if i == j:
        raise ShapeError("axis1 and axis2 cannot be the same", op="diagonal")
    return layout.diagonal(x, P.concrete_int(offset, "diagonal", "offset"), i, j)


def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D ``v``, or a 2-D array with 1-D ``v`` on it.

    >>> tnp.diag(np.array([1, 2]))
    array([[1, 0],
           [0, 2]])
    """
    x = _arr(v)
    k = P.concrete_int(k, "diag", "k")
    s = _shape(x)
    if len(s) == 2:
        return diagonal(x, k)
    if len(s) != 1:
        raise ShapeError("Input must be 1- or 2-d.", op="diag")
    n = s[0] + builtins.abs(k)
    padded = layout.pad(x, P.cast(0, aval_of(x).dtype), ((0, builtins.abs(k), 0),))
    rows = layout.iota(dtypes.int64, (n, n), 0)
    cols = layout.iota(dtypes.int64, (n, n), 1)
    mask = ew.eq(ew.add(rows, k), cols)
    spread = layout.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    return ew.select(mask, spread, P.cast(0, aval_of(x).dtype))


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal.

    >>> tnp.diagflat(np.array([[1, 2]])).shape
    (2, 2)
    """
    return diag(ravel(v), k)


def _triangle(m, k, keep_lower, name):
    x = _arr(m)
    s = _shape(x)
    if not s:
        raise ShapeError("needs an array of at least one dimension", op=name)
    k = P.concrete_int(k, name, "k")
    rows_n, cols_n = (s[-2], s[-1]) if len(s) >= 2 else (s[-1], s[-1])
    rows = layout.iota(dtypes.int64, (rows_n, cols_n), 0)
    cols = layout.iota(dtypes.int64, (rows_n, cols_n), 1)
    # tril keeps j <= i + k; triu keeps j >= i + k
    mask = ew.ge(ew.add(rows, k), cols) if keep_lower else ew.le(ew.add(rows, k), cols)
    out_shape = _broadcast_shapes(s, (rows_n, cols_n), op=name)
    x = P.broadcast_to(x, out_shape, name)
    mask = P.broadcast_to(mask, out_shape, name)
    return ew.select(mask, x, P.cast(0, aval_of(x).dtype))


def tril(m, k=0):
    """``m`` with the elements above the ``k``-th diagonal zeroed, as ``numpy.tril``.

    >>> tnp.tril(np.ones((2, 2)))
    array([[1., 0.],
           [1., 1.]])
    """
    return _triangle(m, k, True, "tril")


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal zeroed, as ``numpy.triu``.

    >>> tnp.triu(np.ones((2, 2)))
    array([[1., 1.],
           [0., 1.]])
    """
    return _triangle(m, k, False, "triu")


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (concrete ints, a slice or a bool mask) on ``axis``.

    >>> tnp.delete(np.arange(4), [0, 2])
    array([1, 3])
    """
    x = _arr(arr)
    if axis is None:
        x = ravel(x)
        axis = 0
    axis = P.axis_arg(axis, len(_shape(x)), "delete")
    n = _shape(x)[axis]
    keep = np.ones(n, bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        index = P.concrete_value(obj, "delete", "obj")
        if index.dtype == bool:
            if index.shape != (n,):
                raise ShapeError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}", op="delete")
            keep = ~index
        else:
            from ..errors import TfIndexError
            index = index.astype(np.int64).reshape(-1)
            if ((index < -n) | (index >= n)).any():
                raise TfIndexError(f"index {index[(index < -n) | (index >= n)][0]} is out "
                                   f"of bounds for axis {axis} with size {n}", op="delete")
            keep[index] = False
    from .indexing import take
    return take(x, np.flatnonzero(keep), axis=axis)


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the indices ``obj`` (concrete: an int, a
    sequence of ints or a slice) along ``axis`` (flattened when None), as
    ``numpy.insert``, whose placement and broadcasting rules it follows by running
    ``numpy.insert`` on the positions of the elements.

    >>> tnp.insert(np.array([1.0, 2.0, 3.0]), 1, 9.0)
    array([1., 9., 2., 3.])
    """
    x = _arr(arr)
    v = P.cast(_arr(values), P.dtype_of(x))
    if not isinstance(obj, slice):
        obj = P.concrete_value(obj, "insert", "obj")
    # the elements of x numbered 1.., those of values -1..: numpy.insert places them
    x_pos = np.arange(1, math.prod(_shape(x)) + 1).reshape(_shape(x))
    v_pos = -np.arange(1, math.prod(_shape(v)) + 1).reshape(_shape(v))
    try:
        where = np.insert(x_pos, obj, v_pos, axis=axis)
    except (IndexError, ValueError) as err:
        raise ShapeError(f"{err} (array of shape {_shape(x)}, values of shape {_shape(v)})",
                         op="insert") from None
    from .indexing import take
    from .math import where as where_
    from_x = take(ravel(x), np.maximum(where - 1, 0))
    from_v = take(ravel(v), np.maximum(-where - 1, 0)) if _shape(v) != (0,) else from_x
    return where_(where > 0, from_x, from_v)


def resize(a, new_shape):
    """``a`` repeated (flattened, in order) to fill ``new_shape``, as ``numpy.resize``
    (an empty ``a`` gives zeros).

    >>> tnp.resize(np.array([1, 2, 3]), (2, 2))
    array([[1, 2],
           [3, 1]])
    """
    x = ravel(_arr(a))
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    total, n = math.prod(new_shape), _shape(x)[0]
    if n == 0:
        return np.zeros(new_shape, P.dtype_of(x))
    from .indexing import take
    return reshape(take(x, np.arange(total) % n), new_shape)
