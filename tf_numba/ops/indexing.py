"""Indexing primitives: gather and the scatters (point indices), dynamic_slice and its update.

Index convention of gather and the scatters: ``indices`` has shape ``B + (k,)`` and names,
for every batch position ``b``, one element along each of the ``k`` dims ``axes``; the other
dims of ``x`` ("rest", in order) come along whole. Indices wrap NumPy-style (``-n..n-1``);
anything else raises ``TfIndexError`` — indices are never clamped.
"""
import operator

import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import Zero, aval_of, has_tangent, instantiate, is_undefined
from ..core.primitive import Primitive, register
from ..core.shapes import same_shape
from ..errors import DTypeError, ShapeError, TfIndexError
from ..transforms import batching
from . import elementwise as ew
from . import layout
from .layout import located

PRIMS = {}


def _declare(name, abstract_eval, impl):
    prim = Primitive(name, abstract_eval, impl)
    PRIMS[name] = prim
    return prim


def _check_index_dtype(aval, what, op):
    if not dtypes.is_integer(aval.dtype):
        raise DTypeError(f"{what} must be int32 or int64, got {aval.dtype.name}", op=op)


def _as_indices(indices):
    """Array-likes (lists, NumPy arrays) become int arrays; tracers pass through."""
    if hasattr(indices, "aval") or isinstance(indices, np.ndarray):
        return indices
    arr = np.asarray(indices)
    return arr.astype(dtypes.int64) if arr.dtype.kind in "iub" or arr.size == 0 else arr


def _check_bounds(idx, axes, shape, op):
    """Raise TfIndexError naming the axis, the first bad index and the size."""
    for j, axis in enumerate(axes):
        n = shape[axis]
        column = idx[..., j]
        bad = (column < -n) | (column >= n)
        if bad.any():
            value = int(column[bad].flat[0])
            raise TfIndexError(f"index {value} is out of range for axis {axis} of size {n} "
                               f"(valid indices are {-n}..{n - 1})", op=op)


def _index_tuple(idx):
    return tuple(idx[..., j] for j in range(idx.shape[-1]))


def _rest(shape, axes):
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _check_axes(axes, rank, op):
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"axes {axes} must be distinct axes of an operand of rank {rank}",
                         op=op)


def _gather_shape(x, indices, axes, op):
    _check_index_dtype(indices, "indices", op)
    _check_axes(axes, x.ndim, op)
    if indices.ndim < 1 or indices.shape[-1] != len(axes):
        raise ShapeError(f"indices of shape {indices.shape} must end in a dim of size "
                         f"{len(axes)}, one index per axis in {axes}", op=op)
    return indices.shape[:-1] + _rest(x.shape, axes)


# ---------------------------------------------------------------- gather

def _gather_eval(x, indices, *, axes):
    return ShapedArray(_gather_shape(x, indices, axes, "gather"), x.dtype)


def _gather_impl(x, indices, *, axes):
    x, idx = np.asarray(x), np.asarray(indices)
    _check_bounds(idx, axes, x.shape, "gather")
    k = len(axes)
    if k == 0:
        return np.array(np.broadcast_to(x, idx.shape[:-1] + x.shape))
    return np.moveaxis(x, axes, range(k))[_index_tuple(idx)]


gather_p = _declare("gather", _gather_eval, _gather_impl)


@located
def gather(x, indices, axes):
    """``out[b..., rest...] = x[axes[j] = indices[b..., j], rest...]``.

    >>> gather(np.arange(12).reshape(3, 4), np.array([[2], [0]]), (0,))
    array([[ 8,  9, 10, 11],
           [ 0,  1,  2,  3]])
    """
    axes = tuple(operator.index(a) for a in axes)
    return gather_p.bind(x, _as_indices(indices), axes=axes)


def _gather_jvp(primals, tangents, *, axes):
    (x, indices), (t, _) = primals, tangents
    ans = gather_p.bind(x, indices, axes=axes)
    if type(t) is Zero:
        return ans, Zero(aval_of(ans))
    return ans, gather_p.bind(t, indices, axes=axes)


def _gather_transpose(ct, x, indices, *, axes):
    zeros = layout.full(x.aval.shape, 0, x.aval.dtype)
    return [scatter_add(zeros, indices, ct, axes), None]


register("jvp", gather_p, _gather_jvp)
register("transpose", gather_p, _gather_transpose)


@located
def take_along_axis(x, indices, axis):
    """``np.take_along_axis`` for an ``indices`` of ``x``'s shape except along ``axis``.

    Built on ``gather`` (so it is linear in ``x`` and transposes to a scatter_add).
    """
    shape = aval_of(x).shape
    idx_aval = aval_of(indices)
    axis = axis % len(shape) if -len(shape) <= axis < len(shape) else axis
    if len(idx_aval.shape) != len(shape) or any(
            d != e for i, (d, e) in enumerate(zip(idx_aval.shape, shape)) if i != axis):
        raise ShapeError(f"indices of shape {idx_aval.shape} must match the operand's shape "
                         f"{shape} except along axis {axis}", op="take_along_axis")
    columns = []
    for d in range(len(shape)):
        column = indices if d == axis else layout.iota(idx_aval.dtype, idx_aval.shape, d)
        columns.append(layout.expand_dims(column, (len(shape),)))
    return gather(x, layout.concatenate(columns, len(shape)), tuple(range(len(shape))))


# ---------------------------------------------------------------- scatters

def _scatter_eval(name):
    def abstract_eval(x, indices, updates, *, axes):
        batch_rest = _gather_shape(x, indices, axes, name)
        if updates.dtype != x.dtype:
            raise DTypeError(f"updates dtype {updates.dtype.name} differs from the operand's "
                             f"{x.dtype.name}", op=name)
        if not same_shape(updates.shape, batch_rest, name):
            raise ShapeError(f"updates must have shape {batch_rest} (index batch dims "
                             f"{indices.shape[:-1]} + operand dims not in axes {axes}), got "
                             f"{updates.shape}", op=name)
        return x
    return abstract_eval


def _scatter_impl(name, combine):
    def impl(x, indices, updates, *, axes):
        out = np.array(x, copy=True)
        idx, updates = np.asarray(indices), np.asarray(updates)
        _check_bounds(idx, axes, out.shape, name)
        k = len(axes)
        view = np.moveaxis(out, axes, range(k))
        if k == 0:
            flat = updates.reshape((int(np.prod(idx.shape[:-1])),) + out.shape)
            combine(view, (), flat, flat_batch=True)
        else:
            combine(view, _index_tuple(idx), updates, flat_batch=False)
        return out
    return impl


def _add_at(view, where, updates, *, flat_batch):
    if flat_batch:
        view += updates.sum(axis=0, dtype=view.dtype)
    else:
        np.add.at(view, where, updates)


def _mul_at(view, where, updates, *, flat_batch):
    if flat_batch:
        view *= updates.prod(axis=0, dtype=view.dtype)
    else:
        np.multiply.at(view, where, updates)


def _set_at(view, where, updates, *, flat_batch):
    if flat_batch:
        if len(updates):
            view[...] = updates[-1]
        return
    # Guarantee "last update wins" for duplicate indices instead of relying on the order
    # NumPy's fancy assignment happens to write in.
    k = len(where)
    sizes = view.shape[:k]
    count = where[0].size
    wrapped = [np.where(w < 0, w + n, w).ravel().astype(np.intp) for w, n in zip(where, sizes)]
    flat = np.ravel_multi_index(wrapped, sizes)
    _, first_of_reversed = np.unique(flat[::-1], return_index=True)
    keep = count - 1 - first_of_reversed
    rest = view.shape[k:]
    view[tuple(w[keep] for w in wrapped)] = updates.reshape((count,) + rest)[keep]


scatter_add_p = _declare("scatter_add", _scatter_eval("scatter_add"),
                         _scatter_impl("scatter_add", _add_at))
scatter_p = _declare("scatter", _scatter_eval("scatter"), _scatter_impl("scatter", _set_at))
scatter_mul_p = _declare("scatter_mul", _scatter_eval("scatter_mul"),
                         _scatter_impl("scatter_mul", _mul_at))


@located
def scatter_add(x, indices, updates, axes):
    """A copy of ``x`` with ``updates`` added at the gather positions; duplicates accumulate.

    >>> scatter_add(np.zeros(3), np.array([[1], [1]]), np.array([2., 3.]), (0,))
    array([0., 5., 0.])
    """
    axes = tuple(operator.index(a) for a in axes)
    return scatter_add_p.bind(x, _as_indices(indices), updates, axes=axes)


@located
def scatter(x, indices, updates, axes):
    """A copy of ``x`` with ``updates`` written at the gather positions.

    With duplicate indices the last update (in row-major order of the batch dims) wins,
    and only it receives a cotangent.
    """
    axes = tuple(operator.index(a) for a in axes)
    return scatter_p.bind(x, _as_indices(indices), updates, axes=axes)


@located
def scatter_mul(x, indices, updates, axes):
    """A copy of ``x`` with its elements at the gather positions multiplied by ``updates``.

    Duplicates multiply together, and each update's derivative is the product of ``x``
    and the other updates at its position (JAX implements only unique indices). Where an
    update beside a duplicate is exactly zero, derivatives past the first are those of
    the branch taken there (the others' product is found by a division elsewhere).
    """
    axes = tuple(operator.index(a) for a in axes)
    return scatter_mul_p.bind(x, _as_indices(indices), updates, axes=axes)


def _linear_scatter_jvp(prim):
    def jvp(primals, tangents, *, axes):
        (x, indices, updates), (tx, _, tu) = primals, tangents
        ans = prim.bind(x, indices, updates, axes=axes)
        if type(tx) is Zero and type(tu) is Zero or not has_tangent(aval_of(ans)):
            return ans, Zero(aval_of(ans))
        return ans, prim.bind(instantiate(tx), indices, instantiate(tu), axes=axes)
    register("jvp", prim, jvp)


_linear_scatter_jvp(scatter_add_p)
_linear_scatter_jvp(scatter_p)


def _scatter_add_transpose(ct, x, indices, updates, *, axes):
    return [ct if is_undefined(x) else None, None,
            gather(ct, indices, axes) if is_undefined(updates) else None]


def _winners(x_shape, indices, updates_shape, axes):
    """A bool mask over the updates: True where that update is the one scatter kept."""
    index_dtype = aval_of(indices).dtype
    batch = aval_of(indices).shape[:-1]
    count = 1
    for d in batch:
        count *= d
    ids = layout.reshape(layout.iota(index_dtype, (count,), 0), batch)
    ids = layout.broadcast_in_dim(ids, updates_shape, tuple(range(len(batch))))
    owner = scatter(layout.full(x_shape, -1, index_dtype), indices, ids, axes)
    return ew.eq(gather(owner, indices, axes), ids)


def _scatter_transpose(ct, x, indices, updates, *, axes):
    ct_x = ct_updates = None
    upd_aval = aval_of(updates) if not is_undefined(updates) else updates.aval
    if is_undefined(x):
        zeros = layout.full(upd_aval.shape, 0, upd_aval.dtype)
        ct_x = scatter(ct, indices, zeros, axes)
    if is_undefined(updates):
        shape = x.aval.shape if is_undefined(x) else aval_of(x).shape
        kept = _winners(shape, indices, upd_aval.shape, axes)
        ct_updates = ew.select(kept, gather(ct, indices, axes), 0)
    return [ct_x, None, ct_updates]


register("transpose", scatter_add_p, _scatter_add_transpose)
register("transpose", scatter_p, _scatter_transpose)


def _scatter_mul_jvp(primals, tangents, *, axes):
    # out[p] = x[p] * prod_k u_k over the updates k at p, so
    # d out[p] = dx[p] * prod_k u_k + x[p] * sum_k du_k * prod_{j != k} u_j
    (x, indices, updates), (tx, _, tu) = primals, tangents
    ans = scatter_mul_p.bind(x, indices, updates, axes=axes)
    out_aval = aval_of(ans)
    if type(tx) is Zero and type(tu) is Zero or not has_tangent(out_aval):
        return ans, Zero(out_aval)
    out = None
    if type(tx) is not Zero:
        out = scatter_mul_p.bind(tx, indices, updates, axes=axes)
    if type(tu) is not Zero:
        base = out if out is not None else layout.full(out_aval.shape, 0, out_aval.dtype)
        others = _product_of_the_others(x, indices, updates, axes)
        out = scatter_add(base, indices, ew.mul(ew.mul(tu, gather(x, indices, axes)), others),
                          axes)
    return ans, out


def _product_of_the_others(x, indices, updates, axes):
    """For each update, the product of the other updates at its position (1 when it is
    alone there): the product of the nonzero ones divided by its own when none is zero,
    that product for the one zero, and 0 when another is zero too."""
    dt = aval_of(updates).dtype
    shape = aval_of(x).shape
    zero = ew.eq(updates, np.zeros((), dt))
    nonzero = ew.select(zero, np.ones((), dt), updates)
    product = gather(scatter_mul(layout.full(shape, 1, dt), indices, nonzero, axes),
                     indices, axes)
    zeros_there = gather(scatter_add(layout.full(shape, 0, dt), indices,
                                     ew.convert_element_type(zero, dt), axes), indices, axes)
    none_zero = ew.eq(zeros_there, np.zeros((), dt))
    only_this_zero = ew.and_(zero, ew.eq(zeros_there, np.ones((), dt)))
    return ew.select(none_zero, ew.div(product, nonzero),
                     ew.select(only_this_zero, product, np.zeros((), dt)))


def _scatter_mul_transpose(ct, x, indices, updates, *, axes):
    if is_undefined(updates):
        raise NotImplementedError("scatter_mul is linear in its operand, not in its updates")
    return [scatter_mul(ct, indices, updates, axes), None, None]


register("jvp", scatter_mul_p, _scatter_mul_jvp)
register("transpose", scatter_mul_p, _scatter_mul_transpose)


# ---------------------------------------------------------------- dynamic_slice

def _check_starts(x, starts, op):
    if len(starts) != x.ndim:
        raise ShapeError(f"needs {x.ndim} start indices for an operand of shape {x.shape}, "
                         f"got {len(starts)}", op=op)
    for i, s in enumerate(starts):
        _check_index_dtype(s, f"start index {i}", op)
        if s.shape != ():
            raise ShapeError(f"start index {i} must be rank 0, got shape {s.shape}", op=op)


def _concrete_starts(starts, shape, sizes, op):
    """Start ints after NumPy-style negative wrap; TfIndexError if the window does not fit."""
    out = []
    for axis, (s, n, size) in enumerate(zip(starts, shape, sizes)):
        s = int(s)
        wrapped = s + n if s < 0 else s
        if not 0 <= wrapped <= n - size:
            raise TfIndexError(f"start index {s} of axis {axis} puts a window of size {size} "
                               f"outside the axis of size {n} (valid starts are "
                               f"{-n}..{n - size} with negative ones counted from the end)",
                               op=op)
        out.append(wrapped)
    return out


def _dynamic_slice_eval(x, *starts, slice_sizes):
    _check_starts(x, starts, "dynamic_slice")
    if len(slice_sizes) != x.ndim or any(not 0 <= s <= n for s, n in zip(slice_sizes, x.shape)):
        raise ShapeError(f"slice_sizes {slice_sizes} must give 0 <= size <= dim for every dim "
                         f"of {x.shape}", op="dynamic_slice")
    return ShapedArray(slice_sizes, x.dtype)


def _dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    begin = _concrete_starts(starts, x.shape, slice_sizes, "dynamic_slice")
    return x[tuple(slice(b, b + s) for b, s in zip(begin, slice_sizes))]


dynamic_slice_p = _declare("dynamic_slice", _dynamic_slice_eval, _dynamic_slice_impl)


def _as_starts(start_indices):
    return [np.asarray(s, dtypes.int64) if isinstance(s, (int, np.integer)) else s
            for s in start_indices]


@located
def dynamic_slice(x, start_indices, slice_sizes):
    """The window of ``slice_sizes`` starting at ``start_indices`` (0-d ints, may be traced).

    Negative starts count from the end; a window that does not fit raises TfIndexError.

    >>> dynamic_slice(np.arange(5), [np.int64(1)], (3,))
    array([1, 2, 3])
    """
    sizes = tuple(operator.index(s) for s in slice_sizes)
    return dynamic_slice_p.bind(x, *_as_starts(start_indices), slice_sizes=sizes)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, starts, t = primals[0], primals[1:], tangents[0]
    ans = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    if type(t) is Zero:
        return ans, Zero(aval_of(ans))
    return ans, dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    zeros = layout.full(x.aval.shape, 0, x.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts)] + [None] * len(starts)


register("jvp", dynamic_slice_p, _dynamic_slice_jvp)
register("transpose", dynamic_slice_p, _dynamic_slice_transpose)


def _dynamic_update_slice_eval(x, update, *starts):
    _check_starts(x, starts, "dynamic_update_slice")
    if update.dtype != x.dtype:
        raise DTypeError(f"update dtype {update.dtype.name} differs from the operand's "
                         f"{x.dtype.name}", op="dynamic_update_slice")
    if update.ndim != x.ndim or any(not u <= n for u, n in zip(update.shape, x.shape)):
        raise ShapeError(f"update of shape {update.shape} does not fit in an operand of shape "
                         f"{x.shape}", op="dynamic_update_slice")
    return x


def _dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    update = np.asarray(update)
    begin = _concrete_starts(starts, out.shape, update.shape, "dynamic_update_slice")
    out[tuple(slice(b, b + s) for b, s in zip(begin, update.shape))] = update
    return out


dynamic_update_slice_p = _declare("dynamic_update_slice", _dynamic_update_slice_eval,
                                  _dynamic_update_slice_impl)


@located
def dynamic_update_slice(x, update, start_indices):
    """A copy of ``x`` with ``update`` written at ``start_indices`` (0-d ints, may be traced).

    >>> dynamic_update_slice(np.zeros(4), np.ones(2), [np.int64(1)])
    array([0., 1., 1., 0.])
    """
    return dynamic_update_slice_p.bind(x, update, *_as_starts(start_indices))


def _dynamic_update_slice_jvp(primals, tangents):
    (x, update), starts = primals[:2], primals[2:]
    tx, tu = tangents[:2]
    ans = dynamic_update_slice_p.bind(x, update, *starts)
    if type(tx) is Zero and type(tu) is Zero or not has_tangent(aval_of(ans)):
        return ans, Zero(aval_of(ans))
    return ans, dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *starts)


def _dynamic_update_slice_transpose(ct, x, update, *starts):
    upd_aval = update.aval if is_undefined(update) else aval_of(update)
    ct_x = ct_update = None
    if is_undefined(x):
        zeros = layout.full(upd_aval.shape, 0, upd_aval.dtype)
        ct_x = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if is_undefined(update):
        ct_update = dynamic_slice_p.bind(ct, *starts, slice_sizes=upd_aval.shape)
    return [ct_x, ct_update] + [None] * len(starts)


register("jvp", dynamic_update_slice_p, _dynamic_update_slice_jvp)
register("transpose", dynamic_update_slice_p, _dynamic_update_slice_transpose)


# ---------------------------------------------------------------- batching

def _with_batch_index(indices, size):
    """Batched ``indices`` (batch axis first) with a leading column naming the example."""
    shape = aval_of(indices).shape
    dt = aval_of(indices).dtype
    column = layout.iota(dt, shape[:-1] + (1,), 0)
    return layout.concatenate([column, indices], len(shape) - 1)


def _index_to_front(indices, d):
    return batching.moveaxis(indices, d, 0)


def _gather_batch(args, dims, *, axes):
    B = batching
    (x, indices), (dx, di) = args, dims
    batch_rank = len(aval_of(indices).shape) - 1 - (di is not None)
    if di is None:
        new_axes = tuple(a + (a >= dx) for a in axes)
        rest = [a for a in range(len(aval_of(x).shape)) if a not in new_axes]
        return gather_p.bind(x, indices, axes=new_axes), batch_rank + rest.index(dx)
    if dx is None:
        if di == len(aval_of(indices).shape) - 1:     # batch axis after the index column
            indices, di = _index_to_front(indices, di), 0
        return gather_p.bind(x, indices, axes=axes), di
    size = aval_of(x).shape[dx]
    x = B.moveaxis(x, dx, 0)
    indices = _with_batch_index(_index_to_front(indices, di), size)
    return gather_p.bind(x, indices, axes=(0,) + tuple(a + 1 for a in axes)), 0


def _scatter_batch(prim):
    def rule(args, dims, *, axes):
        B = batching
        (x, indices, updates), (dx, di, du) = args, dims
        size = B.axis_size_of(args, dims)
        if di is None:
            # the same positions in every example: the batch axis is one more "rest" dim
            d = 0 if dx is None else dx
            x = B.bdim_to(x, dx, d, size)
            new_axes = tuple(a + (a >= d) for a in axes)
            rest = [a for a in range(len(aval_of(x).shape)) if a not in new_axes]
            batch_rank = len(aval_of(indices).shape) - 1
            updates = B.bdim_to(updates, du, batch_rank + rest.index(d), size)
            return prim.bind(x, indices, updates, axes=new_axes), d
        x = B.bdim_to(x, dx, 0, size)
        indices = _with_batch_index(_index_to_front(indices, di), size)
        updates = B.bdim_to(updates, du, 0, size)
        return prim.bind(x, indices, updates, axes=(0,) + tuple(a + 1 for a in axes)), 0
    register("batch", prim, rule)


def _window_indices(starts, start_dims, operand_shape, window, size, x_batched):
    """Point indices (size, *window, k) of every element of per-example windows.

    A start whose window does not fit is replaced by the axis size, so the gather or
    scatter that reads it raises TfIndexError, as dynamic_slice itself would (windows
    of size 0 read nothing, so they cannot raise).
    """
    grid = (size,) + tuple(window)
    columns = []
    for axis, (s, d, n, w) in enumerate(zip(starts, start_dims, operand_shape, window)):
        s = ew.convert_element_type(s, dtypes.int64)
        wrapped = ew.select(ew.lt(s, 0), ew.add(s, np.int64(n)), s)
        bad = ew.or_(ew.lt(wrapped, 0), ew.gt(wrapped, np.int64(n - w)))
        begin = ew.select(bad, np.int64(n), wrapped)
        begin = layout.broadcast_in_dim(begin, grid, (0,) if d is not None else ())
        columns.append(ew.add(begin, layout.iota(dtypes.int64, grid, axis + 1)))
    if x_batched:
        columns.insert(0, layout.iota(dtypes.int64, grid, 0))
    return layout.concatenate([layout.expand_dims(c, (len(grid),)) for c in columns],
                              len(grid))


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    B = batching
    x, starts = args[0], args[1:]
    dx, start_dims = dims[0], dims[1:]
    if all(d is None for d in start_dims):
        size = aval_of(x).shape[dx]
        zero = np.zeros((), aval_of(starts[0]).dtype if starts else dtypes.int64)
        new_starts = list(starts[:dx]) + [zero] + list(starts[dx:])
        sizes = slice_sizes[:dx] + (size,) + slice_sizes[dx:]
        return dynamic_slice_p.bind(x, *new_starts, slice_sizes=sizes), dx
    size = B.axis_size_of(args, dims)
    shape = B.unbatched_aval(aval_of(x), dx).shape
    indices = _window_indices(starts, start_dims, shape, slice_sizes, size, dx is not None)
    if dx is None:
        return gather_p.bind(x, indices, axes=tuple(range(len(shape)))), 0
    x = B.moveaxis(x, dx, 0)
    return gather_p.bind(x, indices, axes=tuple(range(len(shape) + 1))), 0


def _dynamic_update_slice_batch(args, dims):
    B = batching
    (x, update), starts = args[:2], args[2:]
    (dx, du), start_dims = dims[:2], dims[2:]
    size = B.axis_size_of(args, dims)
    if all(d is None for d in start_dims):
        d = dx if dx is not None else du
        x, update = B.bdim_to(x, dx, d, size), B.bdim_to(update, du, d, size)
        zero = np.zeros((), aval_of(starts[0]).dtype if starts else dtypes.int64)
        new_starts = list(starts[:d]) + [zero] + list(starts[d:])
        return dynamic_update_slice_p.bind(x, update, *new_starts), d
    shape = B.unbatched_aval(aval_of(x), dx).shape
    window = B.unbatched_aval(aval_of(update), du).shape
    x, update = B.bdim_to(x, dx, 0, size), B.bdim_to(update, du, 0, size)
    indices = _window_indices(starts, start_dims, shape, window, size, True)
    return scatter_p.bind(x, indices, update, axes=tuple(range(len(shape) + 1))), 0


register("batch", gather_p, _gather_batch)
for _prim in (scatter_add_p, scatter_p, scatter_mul_p):
    _scatter_batch(_prim)
register("batch", dynamic_slice_p, _dynamic_slice_batch)
register("batch", dynamic_update_slice_p, _dynamic_update_slice_batch)
