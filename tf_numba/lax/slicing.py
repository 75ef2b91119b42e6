"""Slicing and indexing, as ``jax.lax``: static and dynamic slices, XLA's ``gather`` and the
scatters with their dimension numbers, and ``index_take``.

XLA's gather cuts a window of ``slice_sizes`` out of the operand at each start index;
``dimension_numbers`` say which operand dims the index vector names (``start_index_map``),
which window dims are dropped (``collapsed_slice_dims``), where the kept ones land in the
output (``offset_dims``) and which dims pair an operand dim with an index batch dim
(``operand_batching_dims``). Both are built here on the point primitives of
``ops/indexing.py`` (one element per index vector): the windows become point indices
``start + offset``, so derivatives (a gather transposes to a scatter_add), batching and
compilation are those primitives'. Out-of-bounds starts follow ``mode``: clamped (``clip``,
and ``promise_in_bounds`` for gathers, as XLA), or the whole window filled (gather) or
dropped (scatter, the scatters' default).
"""
import builtins
import enum
import math
import operator
from typing import NamedTuple

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import normalize_axis
from ..core.trace import user_source
from ..errors import ShapeError, TfIndexError, TfNumbaError
from ..ops import elementwise as ew
from ..ops import indexing, layout, reductions, sorting
from ._operands import concrete_int, leaf

__all__ = ["slice", "slice_in_dim", "index_in_dim", "dynamic_slice", "dynamic_update_slice",
           "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "GatherDimensionNumbers", "ScatterDimensionNumbers",
           "GatherScatterMode", "gather", "scatter", "scatter_add", "scatter_sub",
           "scatter_mul", "scatter_min", "scatter_max", "scatter_apply", "index_take"]


# ---------------------------------------------------------------- static slices

def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - jax.lax's name
    """``operand[start:limit:stride]`` on every axis (``jax.lax.slice``; static bounds).

    >>> slice(np.arange(10), (1,), (8,), (3,))
    array([1, 4, 7])
    """
    return layout.slice_(leaf(operand), start_indices, limit_indices, strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``slice`` along ``axis`` only; None bounds mean the ends and negative ones count from
    the end (``jax.lax.slice_in_dim``).

    >>> slice_in_dim(np.arange(6).reshape(2, 3), -2, None, axis=1)
    array([[1, 2],
           [4, 5]])
    """
    x = leaf(operand)
    shape = aval_of(x).shape
    axis = normalize_axis(axis, len(shape), "slice_in_dim")
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    return layout.slice_in_dim(x, start, limit, operator.index(stride), axis)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Element ``index`` (static; negative counts from the end) along ``axis``, kept as a
    size-1 axis when ``keepdims`` (``jax.lax.index_in_dim``).

    >>> index_in_dim(np.arange(6).reshape(2, 3), -1, axis=1, keepdims=False)
    array([2, 5])
    """
    x = leaf(operand)
    shape = aval_of(x).shape
    axis = normalize_axis(axis, len(shape), "index_in_dim")
    n, k = shape[axis], operator.index(index)
    if not -n <= k < n:
        raise TfIndexError(f"index {k} is out of bounds for axis {axis} of size {n}",
                           op="index_in_dim", source=user_source())
    k = k + n if k < 0 else k
    out = layout.slice_in_dim(x, k, k + 1, 1, axis)
    return out if keepdims else layout.squeeze(out, (axis,))


# ---------------------------------------------------------------- dynamic slices

def _clamped_starts(shape, starts, sizes, allow_negative_indices, op):
    """JAX's start indices: negative ones count from the end (when allowed), then each is
    clamped so that the window fits (``jax.lax.dynamic_slice`` never fails)."""
    starts = list(starts)
    if len(starts) != len(shape) or len(sizes) != len(shape):
        raise ShapeError(f"needs one start index and one size per dim of the operand of "
                         f"shape {tuple(shape)}, got {len(starts)} starts and sizes "
                         f"{tuple(sizes)}", op=op, source=user_source())
    allow = ([allow_negative_indices] * len(shape) if isinstance(allow_negative_indices, bool)
             else list(allow_negative_indices))
    out = []
    for s, n, size, neg in zip(starts, shape, sizes, allow):
        if not 0 <= size <= n:
            raise ShapeError(f"window size {size} does not fit in a dim of size {n} "
                             f"(operand shape {tuple(shape)})", op=op, source=user_source())
        k = concrete_int(s)
        if k is not None:
            k = k + n if neg and k < 0 else k
            out.append(np.int64(builtins.min(builtins.max(k, 0), n - size)))
            continue
        s = ew.convert_element_type(leaf(s), dtypes.int64)
        if neg:
            s = ew.select(ew.lt(s, np.int64(0)), ew.add(s, np.int64(n)), s)
        out.append(ew.clamp(np.int64(0), s, np.int64(n - size)))
    return out


def _start_list(start_indices):
    """Start indices given as a sequence of scalars or as one rank-1 array."""
    if isinstance(start_indices, (list, tuple)):
        return list(start_indices)
    starts = leaf(start_indices)
    n = aval_of(starts).shape[0] if aval_of(starts).shape else 0
    return [layout.reshape(layout.slice_in_dim(starts, i, i + 1), ()) for i in range(n)]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """The window of ``slice_sizes`` at ``start_indices`` (ints, may be traced), as
    ``jax.lax.dynamic_slice``: negative starts count from the end and starts are clamped
    so that the window fits.

    >>> dynamic_slice(np.arange(5), (4,), (2,))
    array([3, 4])
    """
    x = leaf(operand)
    sizes = tuple(int(s) for s in slice_sizes)
    starts = _clamped_starts(aval_of(x).shape, _start_list(start_indices), sizes,
                             allow_negative_indices, "dynamic_slice")
    return indexing.dynamic_slice(x, starts, sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """``operand`` with ``update`` written at ``start_indices``, clamped as
    ``dynamic_slice``'s (``jax.lax.dynamic_update_slice``).

    >>> dynamic_update_slice(np.zeros(4), np.ones(2), (3,))
    array([0., 0., 1., 1.])
    """
    x, upd = leaf(operand), leaf(update)
    starts = _clamped_starts(aval_of(x).shape, _start_list(start_indices), aval_of(upd).shape,
                             allow_negative_indices, "dynamic_update_slice")
    return indexing.dynamic_update_slice(x, upd, starts)


def _in_dim(shape, axis, value, other):
    return [value if d == axis else other(d) for d in range(len(shape))]


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """``dynamic_slice`` along one axis (the others whole)."""
    shape = aval_of(leaf(operand)).shape
    axis = normalize_axis(axis, len(shape), "dynamic_slice_in_dim")
    return dynamic_slice(operand, _in_dim(shape, axis, start_index, lambda d: 0),
                         _in_dim(shape, axis, slice_size, lambda d: shape[d]),
                         allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """Element ``index`` along ``axis`` (kept as a size-1 axis when ``keepdims``)."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else layout.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """``dynamic_update_slice`` along one axis."""
    shape = aval_of(leaf(operand)).shape
    axis = normalize_axis(axis, len(shape), "dynamic_update_slice_in_dim")
    return dynamic_update_slice(operand, update, _in_dim(shape, axis, start_index, lambda d: 0),
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``operand`` with element ``index`` along ``axis`` replaced by ``update`` (which may
    lack that axis)."""
    x, upd = leaf(operand), leaf(update)
    axis = axis % aval_of(x).ndim
    if aval_of(upd).ndim < aval_of(x).ndim:
        upd = layout.expand_dims(upd, (axis,))
    return dynamic_update_slice_in_dim(x, upd, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# ---------------------------------------------------------------- dimension numbers, modes

class GatherDimensionNumbers(NamedTuple):
    """How ``gather`` reads its windows (``jax.lax.GatherDimensionNumbers``): the output
    positions of the window dims kept (``offset_dims``), the window dims of size 1 dropped
    (``collapsed_slice_dims``), the operand dim each index-vector entry starts
    (``start_index_map``), and operand dims indexed by an index batch dim
    (``operand_batching_dims`` with ``start_indices_batching_dims``)."""
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter writes its windows (``jax.lax.ScatterDimensionNumbers``): the dims of
    ``updates`` that are window dims (``update_window_dims``), the operand dims of size 1 the
    window lacks (``inserted_window_dims``), the operand dim each index-vector entry starts
    (``scatter_dims_to_operand_dims``), and operand dims indexed by an index batch dim
    (``operand_batching_dims`` with ``scatter_indices_batching_dims``)."""
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What a gather or scatter does with a window that does not fit
    (``jax.lax.GatherScatterMode``): ``CLIP`` moves its start so that it fits;
    ``FILL_OR_DROP`` fills a gathered window with ``fill_value`` and drops a scattered one;
    ``PROMISE_IN_BOUNDS`` (and ``ONE_HOT``) does what XLA does with such a promise broken:
    clamps gathers and drops scatters."""
    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3
    ONE_HOT = 4

    @staticmethod
    def from_any(s):
        """A mode from itself, None (``FILL_OR_DROP``) or its name: ``'clip'``, ``'fill'``
        or ``'drop'``, ``'promise_in_bounds'``, ``'one_hot'``."""
        if isinstance(s, GatherScatterMode):
            return s
        named = {None: GatherScatterMode.FILL_OR_DROP, "fill": GatherScatterMode.FILL_OR_DROP,
                 "drop": GatherScatterMode.FILL_OR_DROP, "clip": GatherScatterMode.CLIP,
                 "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS,
                 "one_hot": GatherScatterMode.ONE_HOT}
        if not isinstance(s, (str, type(None))) or s not in named:
            raise TfNumbaError(f"unknown gather/scatter mode {s!r}; use one of 'clip', "
                               "'fill', 'drop', 'promise_in_bounds' or a GatherScatterMode",
                               op="gather", source=user_source())
        return named[s]


# ---------------------------------------------------------------- windows as point indices

class _Windows(NamedTuple):
    """The point form of a gather's or scatter's windows: point ``indices`` of shape
    ``batch + window + (len(axes),)`` over the operand dims ``axes`` (the other operand dims,
    ``rest``, are whole windows and come along), the ``windowed`` operand dims (in operand
    order) whose window axes follow the batch dims, and ``in_bounds``, a bool over the
    batch dims: True where the window fits unclamped."""
    indices: object
    axes: tuple
    windowed: tuple
    rest: tuple
    in_bounds: object


def _check_dims(dims, rank, what, op):
    dims = tuple(operator.index(d) for d in dims)
    if any(not 0 <= d < rank for d in dims) or len(set(dims)) != len(dims):
        raise ShapeError(f"{what} {dims} must be distinct dims below {rank}", op=op,
                         source=user_source())
    return dims


def _windows(shape, indices, start_map, operand_batching, index_batching, window, dropped,
             op, redirect=False):
    """``_Windows`` of windows of sizes ``window`` (one per operand dim) starting at
    ``indices`` (shape ``batch + (len(start_map),)``); ``dropped`` operand dims have no
    window axis (their size is 1). Starts are clamped so that the windows fit; with
    ``redirect``, a window that does not fit starts instead at the size of the dim
    ``start_map[0]`` (past its end, where a scatter pads the operand)."""
    idx_shape = aval_of(indices).shape
    batch = tuple(idx_shape[:-1])
    if len(idx_shape) < 1 or idx_shape[-1] != len(start_map):
        raise ShapeError(f"indices of shape {tuple(idx_shape)} must end in a dim of size "
                         f"{len(start_map)}, one start per dim in {start_map}", op=op,
                         source=user_source())
    if len(index_batching) != len(operand_batching) or any(
            not 0 <= d < len(batch) for d in index_batching):
        raise ShapeError(f"the index batching dims {index_batching} must pair the operand "
                         f"batching dims {operand_batching} with dims of the index batch "
                         f"shape {batch}", op=op, source=user_source())
    for d in dropped:
        if window[d] != 1:
            raise ShapeError(f"the window of the collapsed operand dim {d} must have size 1, "
                             f"got {window[d]}", op=op, source=user_source())
    for d, (w, n) in enumerate(zip(window, shape)):
        if not 0 <= w <= n:
            raise ShapeError(f"the window of size {w} does not fit in operand dim {d} of "
                             f"size {n}", op=op, source=user_source())
    axes = tuple(d for d in range(len(shape)) if d in start_map or d in operand_batching
                 or d in dropped or window[d] != shape[d])
    rest = tuple(d for d in range(len(shape)) if d not in axes)
    windowed = tuple(d for d in axes if d not in dropped)
    grid = batch + tuple(window[d] for d in windowed)
    over_batch = tuple(range(len(batch)))
    indices = ew.convert_element_type(indices, dtypes.int64)
    starts, in_bounds = {}, layout.full(batch, True, dtypes.bool_)
    for k, d in enumerate(start_map):
        start = layout.reshape(layout.slice_in_dim(indices, k, k + 1, 1, len(batch)), batch)
        upper = np.int64(shape[d] - window[d])
        in_bounds = ew.and_(in_bounds, ew.and_(ew.ge(start, np.int64(0)), ew.le(start, upper)))
        starts[d] = ew.clamp(np.int64(0), start, upper)
    if redirect and start_map:
        d = start_map[0]
        starts[d] = ew.select(in_bounds, starts[d], np.int64(shape[d]))
    columns = []
    for d in axes:
        if d in starts:
            column = layout.broadcast_in_dim(starts[d], grid, over_batch)
        elif d in operand_batching:
            column = layout.iota(dtypes.int64, grid, index_batching[operand_batching.index(d)])
        else:
            column = layout.full(grid, 0, dtypes.int64)
        if d in windowed:
            column = ew.add(column, layout.iota(dtypes.int64, grid,
                                                len(batch) + windowed.index(d)))
        columns.append(layout.expand_dims(column, (len(grid),)))
    point = (layout.concatenate(columns, len(grid)) if columns
             else layout.full(grid + (0,), 0, dtypes.int64))
    return _Windows(point, axes, windowed, rest, in_bounds)


# ---------------------------------------------------------------- gather

def _fill_value(dt, fill_value):
    if fill_value is not None:
        return np.asarray(fill_value, dt)
    if dtypes.is_inexact(dt):
        return np.asarray(np.nan, dt)
    if dtypes.is_bool(dt):
        return np.asarray(True)
    return np.asarray(np.iinfo(dt).min, dt)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather (``jax.lax.gather``): a window of ``slice_sizes`` at each index vector
    (the last axis of ``start_indices``), placed as ``dimension_numbers`` (a
    ``GatherDimensionNumbers``) say. ``mode`` None is ``promise_in_bounds`` (starts
    clamped); ``'fill'`` fills windows that do not fit with ``fill_value`` (NaN, the most
    negative integer, or True by default). ``unique_indices`` and ``indices_are_sorted`` are
    hints and change nothing.

    >>> dn = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
    ...                             start_index_map=(0,))
    >>> gather(np.arange(5.0), np.array([[0], [3]]), dn, (2,))
    array([[0., 1.],
           [3., 4.]])
    """
    x, idx = leaf(operand), leaf(start_indices)
    shape = tuple(aval_of(x).shape)
    dn = dimension_numbers
    rank = len(shape)
    mode = GatherScatterMode.from_any("promise_in_bounds" if mode is None else mode)
    window = tuple(operator.index(s) for s in slice_sizes)
    if len(window) != rank:
        raise ShapeError(f"slice_sizes {window} need one size per dim of the operand of shape "
                         f"{shape}", op="gather", source=user_source())
    collapsed = _check_dims(dn.collapsed_slice_dims, rank, "collapsed_slice_dims", "gather")
    operand_batching = _check_dims(dn.operand_batching_dims, rank, "operand_batching_dims",
                                   "gather")
    start_map = _check_dims(dn.start_index_map, rank, "start_index_map", "gather")
    index_batching = tuple(operator.index(d) for d in dn.start_indices_batching_dims)
    w = _windows(shape, idx, start_map, operand_batching, index_batching, window,
                 collapsed + operand_batching, "gather")
    out = indexing.gather(x, w.indices, w.axes)
    nb = len(aval_of(w.in_bounds).shape)
    kept = [d for d in range(rank) if d not in collapsed and d not in operand_batching]
    offset_dims = tuple(operator.index(d) for d in dn.offset_dims)
    if len(offset_dims) != len(kept) or list(offset_dims) != sorted(set(offset_dims)):
        raise ShapeError(f"offset_dims {offset_dims} must be sorted and name one output dim "
                         f"per operand dim not collapsed ({len(kept)} of them)", op="gather",
                         source=user_source())
    # point gather's layout: batch, windowed dims, rest dims; the output's: batch dims
    # between the offset dims, the kept operand dims in order at offset_dims
    source = {d: nb + (w.windowed.index(d) if d in w.windowed
                       else len(w.windowed) + w.rest.index(d)) for d in kept}
    batch_positions = iter(range(nb))
    perm = tuple(source[kept[offset_dims.index(p)]] if p in offset_dims
                 else next(batch_positions) for p in range(nb + len(kept)))
    if perm != tuple(range(len(perm))):
        out = layout.transpose(out, perm)
    if mode == GatherScatterMode.FILL_OR_DROP:
        out_shape = aval_of(out).shape
        batch_dims = tuple(p for p in range(len(out_shape)) if p not in offset_dims)
        fits = layout.broadcast_in_dim(w.in_bounds, out_shape, batch_dims)
        out = ew.select(fits, out, _fill_value(aval_of(out).dtype, fill_value))
    return out


# ---------------------------------------------------------------- scatters

def _lowest(dt):
    if dtypes.is_bool(dt):
        return np.asarray(False)
    return np.asarray(-np.inf if dt.kind in "fc" else np.iinfo(dt).min, dt)


def _highest(dt):
    if dtypes.is_bool(dt):
        return np.asarray(True)
    return np.asarray(np.inf if dt.kind in "fc" else np.iinfo(dt).max, dt)


# how each scatter combines an update into the operand at point indices, and the update
# that leaves an element as it is (None: a dropped window is written past the operand's end)
_COMBINE = {
    "add": (indexing.scatter_add, lambda dt: np.zeros((), dt)),
    "mul": (indexing.scatter_mul, lambda dt: np.ones((), dt)),
    "min": (lambda x, i, u, a: sorting.scatter_extreme(x, i, u, a, "min"), _highest),
    "max": (lambda x, i, u, a: sorting.scatter_extreme(x, i, u, a, "max"), _lowest),
    "set": (indexing.scatter, None),
}


def _scatter(kind, operand, scatter_indices, updates, dimension_numbers, mode, op):
    x, idx = leaf(operand), leaf(scatter_indices)
    shape, dt = tuple(aval_of(x).shape), aval_of(x).dtype
    upd = np.asarray(updates, dt) if isinstance(updates, dtypes.WEAK_SCALAR_TYPES) \
        else leaf(updates)
    dn, rank = dimension_numbers, len(shape)
    mode = GatherScatterMode.from_any(mode)
    inserted = _check_dims(dn.inserted_window_dims, rank, "inserted_window_dims", op)
    operand_batching = _check_dims(dn.operand_batching_dims, rank, "operand_batching_dims", op)
    start_map = _check_dims(dn.scatter_dims_to_operand_dims, rank,
                            "scatter_dims_to_operand_dims", op)
    index_batching = tuple(operator.index(d) for d in dn.scatter_indices_batching_dims)
    upd_shape = tuple(aval_of(upd).shape)
    window_dims = _check_dims(dn.update_window_dims, len(upd_shape), "update_window_dims", op)
    kept = [d for d in range(rank) if d not in inserted and d not in operand_batching]
    if len(window_dims) != len(kept):
        raise ShapeError(f"update_window_dims {window_dims} must name one dim of the updates "
                         f"(shape {upd_shape}) per operand dim not inserted ({len(kept)} of "
                         "them)", op=op, source=user_source())
    window = [1] * rank
    for d, u in zip(kept, window_dims):
        window[d] = upd_shape[u]
    combine, identity = _COMBINE[kind]
    clip = mode == GatherScatterMode.CLIP
    redirect = not clip and identity is None
    w = _windows(shape, idx, start_map, operand_batching, index_batching, tuple(window),
                 inserted + operand_batching, op, redirect=redirect)
    batch = tuple(aval_of(w.in_bounds).shape)
    scatter_dims = [i for i in range(len(upd_shape)) if i not in window_dims]
    if tuple(upd_shape[i] for i in scatter_dims) != batch:
        raise ShapeError(f"the updates' scatter dims {scatter_dims} (shape {upd_shape}) must "
                         f"match the index batch shape {batch}", op=op, source=user_source())
    perm = tuple(scatter_dims) + tuple(window_dims[kept.index(d)] for d in w.windowed + w.rest)
    if perm != tuple(range(len(perm))):
        upd = layout.transpose(upd, perm)
    if not clip and identity is not None:
        fits = layout.broadcast_in_dim(w.in_bounds, aval_of(upd).shape, tuple(range(len(batch))))
        upd = ew.select(fits, upd, identity(dt))
    if redirect and start_map:
        d = start_map[0]
        config = [(0, window[d] if k == d else 0, 0) for k in range(rank)]
        padded = layout.pad(x, np.zeros((), dt), config)
        return layout.slice_in_dim(combine(padded, w.indices, upd, w.axes), 0, shape[d], 1, d)
    return combine(x, w.indices, upd, w.axes)


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """XLA's scatter (``jax.lax.scatter``): ``operand`` with each window of ``updates``
    written at its index vector, placed as ``dimension_numbers`` (a
    ``ScatterDimensionNumbers``) say; of windows written twice, the last wins. ``mode``
    None drops windows that do not fit, ``'clip'`` moves them so that they fit. The other
    flags are hints and change nothing.

    >>> dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                              scatter_dims_to_operand_dims=(0,))
    >>> scatter(np.zeros(3), np.array([[2], [7]]), np.array([1.0, 2.0]), dn)
    array([0., 0., 1.])
    """
    return _scatter("set", operand, scatter_indices, updates, dimension_numbers, mode, "scatter")


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """``scatter`` that adds the updates; duplicates accumulate (``jax.lax.scatter_add``).

    >>> dn = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_add(np.zeros(3), np.array([[1], [1]]), np.array([2.0, 3.0]), dn)
    array([0., 5., 0.])
    """
    return _scatter("add", operand, scatter_indices, updates, dimension_numbers, mode,
                    "scatter_add")


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """``scatter`` that subtracts the updates (``jax.lax.scatter_sub``)."""
    upd = -updates if isinstance(updates, dtypes.WEAK_SCALAR_TYPES) else ew.neg(leaf(updates))
    return _scatter("add", operand, scatter_indices, upd, dimension_numbers, mode,
                    "scatter_sub")


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """``scatter`` that multiplies by the updates; duplicates multiply
    (``jax.lax.scatter_mul``)."""
    return _scatter("mul", operand, scatter_indices, updates, dimension_numbers, mode,
                    "scatter_mul")


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """``scatter`` that keeps the minimum of the element and the updates
    (``jax.lax.scatter_min``)."""
    return _scatter("min", operand, scatter_indices, updates, dimension_numbers, mode,
                    "scatter_min")


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    """``scatter`` that keeps the maximum of the element and the updates
    (``jax.lax.scatter_max``)."""
    return _scatter("max", operand, scatter_indices, updates, dimension_numbers, mode,
                    "scatter_max")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """``operand`` with ``func`` (a function of a scalar) applied at the positions a scatter
    of updates of ``update_shape`` writes, once per update that lands there, so twice where
    two do (``jax.lax.scatter_apply``).

    >>> dn = ScatterDimensionNumbers((), (0,), (0,))
    >>> scatter_apply(np.ones(3), np.array([[0], [0], [2]]), lambda v: v * 2, dn,
    ...               update_shape=(3,))
    array([4., 1., 2.])
    """
    from ..api import vmap
    from .control import while_loop
    x = leaf(operand)
    shape = tuple(aval_of(x).shape)
    ones = layout.full(tuple(update_shape), 1, dtypes.int64)
    counts = _scatter("add", layout.full(shape, 0, dtypes.int64), scatter_indices, ones,
                      dimension_numbers, mode, "scatter_apply")
    size = math.prod(shape)

    def apply(v):
        return layout.reshape(vmap(func)(layout.reshape(v, (size,))), shape)

    if unique_indices:
        return ew.select(ew.gt(counts, np.int64(0)), apply(x), x)

    def body(carry):
        i, v = carry
        return ew.add(i, np.int64(1)), ew.select(ew.gt(counts, i), apply(v), v)
    rounds = reductions.reduce_max(counts) if size else np.int64(0)
    return while_loop(lambda carry: ew.lt(carry[0], rounds), body, (np.int64(0), x))[1]


def index_take(src, idxs, axes):
    """``src`` at the index arrays ``idxs``, one per axis in ``axes`` (wrapped modulo the
    axis size), the other axes whole after them (``jax.lax.index_take``).

    >>> index_take(np.arange(12).reshape(3, 4), [np.array([2, -1])], (0,))
    array([[ 8,  9, 10, 11],
           [ 8,  9, 10, 11]])
    """
    x = leaf(src)
    shape = tuple(aval_of(x).shape)
    axes = tuple(normalize_axis(a, len(shape), "index_take") for a in axes)
    columns = [ew.rem(ew.convert_element_type(leaf(i), dtypes.int64), np.int64(shape[a]))
               for i, a in zip(idxs, axes)]
    indices = layout.concatenate([layout.expand_dims(c, (1,)) for c in columns], 1)
    sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
                                collapsed_slice_dims=axes, start_index_map=axes)
    return gather(x, indices, dn, sizes)


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
