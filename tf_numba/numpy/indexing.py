"""NumPy indexing of traced arrays (``x[idx]``), functional updates (``x.at[idx].set(v)``), and
the index-based functions (take, take_along_axis, nonzero, ...).

An index is parsed once into a plan: static slices (one ``rev``, one ``slice`` and one
``reshape``) followed, when there are array indices, by one ``gather`` and a ``transpose``
that puts the advanced dims where NumPy puts them (in place when the advanced indices are
adjacent, first otherwise). Updates turn the same plan into scatter coordinates.

>>> x = np.arange(12).reshape(3, 4)
>>> tnp.at(x)[1, ::2].set(-1)
array([[ 0,  1,  2,  3],
       [-1,  5, -1,  7],
       [ 8,  9, 10, 11]])
"""
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import Sym, at_least
from ..errors import (ConcretizationError, ShapeError, TfIndexError, TfNumbaError,
                      UnsupportedError)
from ..ops import elementwise as ew
from ..ops import indexing as ix
from ..ops import layout
from ..ops import reductions as red
from ..ops import sorting
from . import _promote as P
from ..tracebacks import api_boundary

__all__ = ["take", "take_along_axis", "put_along_axis", "nonzero", "flatnonzero",
           "argwhere", "compress", "extract", "select", "unravel_index",
           "ravel_multi_index", "tril_indices", "triu_indices", "diag_indices", "at",
           "choose", "ix_", "place", "put"]


# ---------------------------------------------------------------- index parsing

class _Adv:
    """An advanced (integer array) index entry: a NumPy int array or a traced int array.
    ``mask_size`` is the length of the boolean mask axis it came from, if any."""
    __slots__ = ("index", "mask_size")

    def __init__(self, index, mask_size=None):
        self.index = index
        self.mask_size = mask_size


class _Int:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


_NEW = object()      # newaxis entry


class _Plan:
    """A parsed index. ``entries`` has one entry per consumed dim of ``x`` plus newaxes:
    a slice as (start, step, length), an _Int, an _Adv, or _NEW."""
    __slots__ = ("shape", "entries", "axes", "has_adv", "adv_shape", "contiguous")


def _bad_index(item):
    return TfIndexError(
        f"only integers, slices (`:`), ellipsis (`...`), tnp.newaxis (`None`) and integer "
        f"or boolean arrays are valid indices, got {item!r}", op="getitem")


def _normalize_entry(item):
    """One index item as a list of raw entries (a boolean mask expands to one per dim)."""
    if item is None:
        return [_NEW]
    if item is Ellipsis:
        return [Ellipsis]
    if isinstance(item, slice):
        for part in (item.start, item.stop, item.step):
            if P.is_tracer(part):
                raise ConcretizationError(
                    "slice bounds must be concrete; for a window at a traced position use "
                    "tnp.take or dynamic_slice", op="getitem")
        return [item]
    if isinstance(item, (bool, np.bool_)):
        raise UnsupportedError("scalar boolean indices are not supported; use None to add "
                               "an axis", op="getitem")
    if P.is_tracer(item):
        if dtypes.is_bool(item.dtype):
            raise ConcretizationError(
                f"a traced boolean mask of shape {item.shape} cannot index: the result's "
                "shape would depend on its values. Use tnp.where(mask, x, other) to select "
                "elementwise instead (or tnp.nonzero(mask, size=...)).", op="getitem")
        if not dtypes.is_integer(item.dtype):
            raise _bad_index(item)
        return [_Adv(item)]
    if isinstance(item, (int, np.integer)):
        return [_Int(operator.index(item))]
    arr = np.asarray(item)
    if arr.dtype == np.bool_:
        if arr.ndim == 0:
            raise UnsupportedError("scalar boolean indices are not supported", op="getitem")
        return [_Adv(a.astype(np.int64), n) for a, n in zip(np.nonzero(arr), arr.shape)]
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise _bad_index(item)
    if arr.ndim == 0:
        return [_Int(int(arr))]
    return [_Adv(arr.astype(np.int64))]


def _concrete_dim(n, what):
    if isinstance(n, Sym):
        raise UnsupportedError(f"{what} on an axis of symbolic length {n} is not supported",
                               op="getitem")
    return n


def parse_index(shape, idx):
    """The plan for ``x[idx]`` on an array of ``shape``."""
    items = idx if isinstance(idx, tuple) else (idx,)
    raw = [entry for item in items for entry in _normalize_entry(item)]
    if sum(e is Ellipsis for e in raw) > 1:
        raise TfIndexError("an index can only have a single ellipsis ('...')", op="getitem")
    consumed = sum(1 for e in raw if e is not _NEW and e is not Ellipsis)
    rank = len(shape)
    if consumed > rank:
        raise TfIndexError(f"too many indices for array: array is {rank}-dimensional, but "
                           f"{consumed} were indexed", op="getitem")
    fill = [slice(None)] * (rank - consumed)
    empty_ellipsis_at = None   # NumPy counts even an empty ``...`` as a separator
    if Ellipsis in raw:
        at_ = raw.index(Ellipsis)
        raw = raw[:at_] + fill + raw[at_ + 1:]
        if not fill:
            empty_ellipsis_at = at_
    else:
        raw = raw + fill
    plan = _Plan()
    plan.shape = tuple(shape)
    plan.has_adv = any(isinstance(e, _Adv) for e in raw)
    entries, axes = [], []
    axis = 0
    for e in raw:
        if e is _NEW:
            entries.append(_NEW)
            axes.append(None)
            continue
        n = shape[axis]
        if isinstance(e, slice):
            entries.append(_slice_entry(e, n))
        elif isinstance(e, _Int):
            if isinstance(n, Sym):
                entries.append(_Int(_symbolic_int_index(e.value, n)))
                axes.append(axis)
                axis += 1
                continue
            if not -n <= e.value < n:
                raise TfIndexError(f"index {e.value} is out of bounds for axis {axis} with "
                                   f"size {n}", op="getitem")
            value = e.value % n
            entries.append(_Adv(np.asarray(value, np.int64)) if plan.has_adv else _Int(value))
        else:
            if e.mask_size is not None and e.mask_size != n:
                raise TfIndexError(f"boolean index did not match indexed array along axis "
                                   f"{axis}; size of axis is {n} but size of corresponding "
                                   f"boolean axis is {e.mask_size}", op="getitem")
            entries.append(_Adv(_checked_index(e.index, n, axis)))
        axes.append(axis)
        axis += 1
    plan.entries, plan.axes = entries, axes
    adv_positions = [i for i, e in enumerate(entries) if isinstance(e, _Adv)]
    plan.contiguous = bool(adv_positions) and (
        adv_positions[-1] - adv_positions[0] + 1 == len(adv_positions)) and not (
        empty_ellipsis_at is not None and adv_positions[0] < empty_ellipsis_at
        <= adv_positions[-1])
    plan.adv_shape = _adv_shape([entries[i].index for i in adv_positions])
    return plan


def _adv_shape(indices):
    from ..core.shapes import broadcast_shapes
    try:
        return broadcast_shapes(*[tuple(aval_of(i).shape) for i in indices], op="getitem")
    except ShapeError:
        raise TfIndexError("shape mismatch: indexing arrays could not be broadcast together "
                           "with shapes " + " ".join(str(tuple(aval_of(i).shape))
                                                     for i in indices), op="getitem") from None


def _slice_entry(s, n):
    if s.start is None and s.stop is None and s.step in (None, 1):
        return (0, 1, n)
    if isinstance(n, Sym):
        return _symbolic_slice_entry(s, n)
    start, stop, step = slice(*(None if v is None else operator.index(v)
                                for v in (s.start, s.stop, s.step))).indices(n)
    return (start, step, len(range(start, stop, step)))


def _symbolic_slice_entry(s, n):
    """(start, step, length) of a slice of an axis of symbolic length ``n``.

    Python clamps out-of-range bounds; a symbolic length cannot be clamped, so the bounds
    become guards (``n >= stop``) checked when the program is prepared.
    """
    step = 1 if s.step is None else operator.index(s.step)
    if step == -1 and s.start is None and s.stop is None:
        return (n - 1, -1, n)
    if step != 1:
        raise UnsupportedError(f"slicing an axis of symbolic length {n} with step {step} is "
                               "not supported (steps 1, and -1 over the whole axis, are)",
                               op="getitem")

    def bound(v, default):
        if v is None:
            return default
        v = operator.index(v)
        return n + v if v < 0 else v
    start, stop = bound(s.start, 0), bound(s.stop, n)
    for low, high in ((n, stop), (stop, start), (start, 0)):
        at_least(low, high, "getitem")
    return (start, 1, stop - start)


def _symbolic_int_index(value, n):
    """An int index into an axis of symbolic length ``n`` (guarded to be in range)."""
    index = n + value if value < 0 else value
    at_least(index, 0, "getitem")
    at_least(n - 1, index, "getitem")
    return index


def _checked_index(index, n, axis):
    """A concrete index array range-checked and wrapped; a traced one as it is."""
    if P.is_tracer(index):
        return index
    n = _concrete_dim(n, "array indexing")
    bad = (index < -n) | (index >= n)
    if bad.any():
        raise TfIndexError(f"index {int(index[bad].flat[0])} is out of bounds for axis {axis} "
                           f"with size {n}", op="getitem")
    return np.where(index < 0, index + n, index)


# ---------------------------------------------------------------- getitem


def _apply_slices(x, plan):
    """The static part: negative-step slices reversed, all slices taken, ints squeezed."""
    shape = plan.shape
    rev_dims, starts, limits, strides = [], [], [], []
    kept_shape = []
    for e, axis in zip(plan.entries, plan.axes):
        if axis is None:
            continue
        n = shape[axis]
        if isinstance(e, tuple):
            start, step, length = e
            if step < 0:
                rev_dims.append(axis)
                start, step = n - 1 - start, -step
            starts.append(start)
            limits.append(start + (length - 1) * step + 1 if length else start)
            strides.append(step)
            kept_shape.append(length)
        elif isinstance(e, _Int):
            starts.append(e.value)
            limits.append(e.value + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(n)
            strides.append(1)
            kept_shape.append(n)
    x = layout.rev(x, tuple(rev_dims))
    x = layout.slice_(x, starts, limits, strides)
    return layout.reshape(x, tuple(kept_shape))


def _index_matrix(indices, batch_shape):
    """Index arrays broadcast to ``batch_shape`` and stacked on a new last axis (int64)."""
    if all(not P.is_tracer(i) for i in indices):
        return np.stack([np.broadcast_to(i, batch_shape) for i in indices], -1).astype(np.int64)
    columns = []
    for i in indices:
        i = ew.convert_element_type(i, dtypes.int64) if P.is_tracer(i) else i
        i = P.broadcast_to(i, batch_shape, "getitem")
        columns.append(layout.reshape(i, tuple(batch_shape) + (1,)))
    return layout.concatenate(columns, len(batch_shape))


def _output_layout(plan):
    """Kinds of the output dims in order: ('S', i) for the i-th kept slice, ('B',), or _NEW."""
    tokens, seen_adv, n_slices = [], False, 0
    for e in plan.entries:
        if e is _NEW:
            tokens.append(_NEW)
        elif isinstance(e, tuple):
            tokens.append(("S", n_slices))
            n_slices += 1
        elif isinstance(e, _Adv) and not seen_adv:
            seen_adv = True
            if plan.contiguous:
                tokens.append(("B",))
    if plan.has_adv and not plan.contiguous:
        tokens.insert(0, ("B",))
    return tokens


def getitem(x, idx):
    """``x[idx]`` with NumPy's semantics for every index kind (see the module docstring).

    >>> tnp.getitem(np.arange(6).reshape(2, 3), (slice(None), [2, 0]))
    array([[2, 0],
           [5, 3]])
    """
    x = P.asarray(x)
    if P.is_weak(x):
        x = np.asarray(x)
    plan = parse_index(aval_of(x).shape, idx)
    y = _apply_slices(x, plan)
    slice_sizes = [e[2] for e in plan.entries if isinstance(e, tuple)]
    tokens = _output_layout(plan)
    if plan.has_adv:
        adv_axes, indices, k = [], [], 0
        for e in plan.entries:
            if e is _NEW or isinstance(e, _Int):
                continue
            if isinstance(e, _Adv):
                adv_axes.append(k)
                indices.append(e.index)
            k += 1
        batch = plan.adv_shape
        y = ix.gather(y, _index_matrix(indices, batch), tuple(adv_axes))
        # gather gives B + slice dims; move B to where NumPy puts it
        b = len(batch)
        before = sum(1 for t in tokens[:tokens.index(("B",))] if t is not _NEW)
        perm = [b + i for i in range(before)] + list(range(b)) + [
            b + i for i in range(before, len(slice_sizes))]
        y = layout.transpose(y, tuple(perm))
    final = []
    for t in tokens:
        if t is _NEW:
            final.append(1)
        elif t[0] == "S":
            final.append(slice_sizes[t[1]])
        else:
            final.extend(plan.adv_shape)
    return layout.reshape(y, tuple(final))


# ---------------------------------------------------------------- functional updates


def _scatter_plan(x, idx):
    """How to scatter into ``x[idx]``: (indexed axes of ``x``, index matrix of shape
    batch + (len(axes),) or None when nothing is indexed, the permutation taking
    ``x[idx]``-shaped updates to batch + rest dims, the shape of ``x[idx]``).

    Full slices become the scatter's "rest" dims; every other output dim is a batch dim.
    The matrix is a NumPy constant unless an index is traced.
    """
    shape = tuple(aval_of(x).shape)
    plan = parse_index(shape, idx)
    out_shape, kinds = [], []
    slice_entries = [(e, a) for e, a in zip(plan.entries, plan.axes) if isinstance(e, tuple)]
    for t in _output_layout(plan):
        if t is _NEW:
            out_shape.append(1)
            kinds.append(("N",))
        elif t[0] == "S":
            e, axis = slice_entries[t[1]]
            out_shape.append(e[2])
            kinds.append(("rest", axis) if e == (0, 1, shape[axis]) else ("S", axis))
        else:
            out_shape.extend(plan.adv_shape)
            kinds.extend(("B", j) for j in range(len(plan.adv_shape)))
    batch_pos = [i for i, k in enumerate(kinds) if k[0] != "rest"]
    rest_pos = [i for i, k in enumerate(kinds) if k[0] == "rest"]
    batch = tuple(out_shape[i] for i in batch_pos)
    adv_dims = tuple(batch_pos.index(i) for i, k in enumerate(kinds) if k[0] == "B")
    traced = any(isinstance(e, _Adv) and P.is_tracer(e.index) for e in plan.entries)
    axes, columns = [], []
    for e, axis in zip(plan.entries, plan.axes):
        if axis is None or (isinstance(e, tuple) and e == (0, 1, shape[axis])):
            continue
        axes.append(axis)
        if isinstance(e, _Int):
            columns.append(np.full(batch, e.value, np.int64))
        elif isinstance(e, _Adv):
            columns.append(_spread(e.index, plan.adv_shape, batch, adv_dims))
        else:
            start, step, length = e
            pos = batch_pos.index(kinds.index(("S", axis)))
            ramp = (start + step * np.arange(length, dtype=np.int64)).reshape(
                tuple(length if i == pos else 1 for i in range(len(batch))))
            columns.append(np.broadcast_to(ramp, batch))
    perm = tuple(batch_pos + rest_pos)
    if not columns:
        return (), None, perm, tuple(out_shape)
    if not traced:
        return tuple(axes), np.stack(columns, -1), perm, tuple(out_shape)
    expanded = [layout.reshape(P.broadcast_to(c, batch, "at"), batch + (1,)) for c in columns]
    return tuple(axes), layout.concatenate(expanded, len(batch)), perm, tuple(out_shape)


def _spread(index, adv_shape, batch, adv_dims):
    """An advanced index broadcast to ``adv_shape`` and placed at ``adv_dims`` of ``batch``."""
    if not P.is_tracer(index):
        full = np.broadcast_to(index, adv_shape)
        expanded = [1] * len(batch)
        for d, n in zip(adv_dims, adv_shape):
            expanded[d] = n
        return np.broadcast_to(full.reshape(expanded), batch)
    i = ew.convert_element_type(index, dtypes.int64)
    return layout.broadcast_in_dim(P.broadcast_to(i, adv_shape, "at"), batch, adv_dims)


def _updates(x, out_shape, perm, values):
    """``values`` cast to ``x``'s dtype (as NumPy's assignment casts), broadcast to the shape
    of ``x[idx]`` and laid out as the scatter's batch + rest dims."""
    v = P.cast(P.asarray(values), aval_of(x).dtype)
    return layout.transpose(P.broadcast_to(v, out_shape, "at"), perm)


def _unique_concrete(matrix):
    if matrix is None or P.is_tracer(matrix) or not isinstance(matrix, np.ndarray):
        return False
    flat = matrix.reshape(-1, matrix.shape[-1])
    return len(np.unique(flat, axis=0)) == len(flat)


@api_boundary     # (``x.at[i].set(v)``: the user calls it through _AtIndexer)
def _update(x, idx, values, kind):
    x = P.asarray(x)
    if P.is_weak(x):
        x = np.asarray(x)
    axes, matrix, perm, out_shape = _scatter_plan(x, idx)
    upd = _updates(x, out_shape, perm, values)
    shape = tuple(aval_of(x).shape)
    dt = aval_of(x).dtype
    if matrix is None:
        # nothing indexed (x[...], x[:, None]): the update covers x whole
        return _ELEMENTWISE[kind](x, layout.reshape(upd, shape))
    if kind == "set":
        return ix.scatter(x, matrix, upd, axes)
    if kind == "add":
        return ix.scatter_add(x, matrix, upd, axes)
    if kind == "multiply":
        return ix.scatter_mul(x, matrix, upd, axes)
    if kind in ("divide", "power"):
        ones = layout.full(shape, 1, dt)
        combined = ix.scatter_mul(ones, matrix, upd, axes)
        return ew.div(x, combined) if kind == "divide" else ew.pow(x, combined)
    # min / max
    if _unique_concrete(matrix):
        current = ix.gather(x, matrix, axes)
        return ix.scatter(x, matrix, _ELEMENTWISE[kind](current, upd), axes)
    return sorting.scatter_extreme(x, matrix, upd, axes, kind)


_ELEMENTWISE = {
    "set": lambda x, v: v,
    "add": lambda x, v: _arith(ew.add, ew.or_, x, v),
    "multiply": lambda x, v: _arith(ew.mul, ew.and_, x, v),
    "divide": lambda x, v: ew.div(x, v),
    "power": lambda x, v: ew.pow(x, v),
    "min": lambda x, v: ew.min(x, v),
    "max": lambda x, v: ew.max(x, v),
}


def _arith(op, bool_op, x, v):
    return bool_op(x, v) if dtypes.is_bool(aval_of(x).dtype) else op(x, v)


class _IndexedUpdate:
    """``x.at[idx]``: functional updates of the elements ``x[idx]``."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def get(self, *, mode=None):
        """``x[idx]``."""
        _check_mode(mode)
        return getitem(self.array, self.index)

    def set(self, values, *, mode=None):
        """A copy of ``x`` with ``x[idx] = values`` (the last of duplicate indices wins)."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "set")

    def add(self, values, *, mode=None):
        """A copy of ``x`` with ``values`` added at ``idx``; duplicate indices accumulate
        (like ``np.add.at``, unlike ``x[idx] += values``)."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "add")

    def subtract(self, values, *, mode=None):
        """``add(-values)``."""
        from .math import negative
        return self.add(negative(values), mode=mode)

    def multiply(self, values, *, mode=None):
        """A copy of ``x`` with ``x[idx]`` multiplied by ``values``; duplicates multiply."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "multiply")

    def divide(self, values, *, mode=None):
        """A copy of ``x`` with ``x[idx]`` divided by ``values`` (by their product for
        duplicate indices)."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "divide")

    def power(self, values, *, mode=None):
        """A copy of ``x`` with ``x[idx]`` raised to ``values`` (their product for
        duplicate indices)."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "power")

    def min(self, values, *, mode=None):
        """A copy of ``x`` with ``x[idx] = minimum(x[idx], values)``, duplicates combined."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "min")

    def max(self, values, *, mode=None):
        """A copy of ``x`` with ``x[idx] = maximum(x[idx], values)``, duplicates combined."""
        _check_mode(mode)
        return _update(self.array, self.index, values, "max")

    def __repr__(self):
        return f"_IndexedUpdate({self.array!r}, {self.index!r})"


def _check_mode(mode):
    if mode not in (None, "promise_in_bounds", "raise"):
        raise UnsupportedError(f"argument mode={mode!r} is not supported: out-of-range "
                               "indices always raise", op="at")


class _AtIndexer:
    """The object behind ``x.at`` and ``tnp.at(x)``: index it to choose the elements."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexedUpdate(self.array, index)


def at(x):
    """Functional index updates for any array, as JAX's ``x.at``: ``tnp.at(x)[idx].set(v)``.

    Works on NumPy arrays (computing eagerly, never modifying ``x``) and on tracers (where
    it is the same as ``x.at``). Methods: ``get set add subtract multiply divide power min
    max``. Eager results and ``jit`` outputs are plain ``numpy.ndarray``, which has no
    ``.at`` (NumPy raises ``AttributeError: 'numpy.ndarray' object has no attribute
    'at'``): code that runs both traced and on results writes ``tnp.at(x)[idx].set(v)``,
    which works on both.

    >>> tnp.at(np.zeros(3))[[0, 0, 2]].add(1.0)
    array([2., 0., 1.])
    """
    x = P.asarray(x)
    if P.is_weak(x):
        x = np.asarray(x)
    return _AtIndexer(x)


# ---------------------------------------------------------------- take and friends


def _index_operand(indices, n, mode, name):
    """Indices as int64, with NumPy's ``mode`` applied: raise (bounds-checked), wrap, clip."""
    if mode not in (None, "raise", "wrap", "clip"):
        raise UnsupportedError(f"argument mode={mode!r} is not supported", op=name)
    if P.is_tracer(indices):
        if not dtypes.is_integer(indices.dtype):
            raise TfIndexError(f"indices must be integers, got {indices.dtype.name}", op=name)
        i = ew.convert_element_type(indices, dtypes.int64)
        if mode == "wrap":
            return ew.rem(i, n)
        if mode == "clip":
            return ew.clamp(0, i, n - 1)
        return i
    i = np.asarray(indices)
    if i.size == 0:
        i = i.astype(np.int64)
    if i.dtype.kind not in "iu":
        raise TfIndexError(f"indices must be integers, got {i.dtype}", op=name)
    i = i.astype(np.int64)
    if mode == "wrap":
        return np.mod(i, n) if n else i
    if mode == "clip":
        return np.clip(i, 0, n - 1)
    bad = (i < -n) | (i >= n)
    if bad.any():
        raise TfIndexError(f"index {int(i[bad].flat[0])} is out of bounds for size {n}", op=name)
    return np.where(i < 0, i + n, i)


def take(a, indices, axis=None, out=None, mode=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` when None).

    ``mode``: 'raise' (default; out-of-range indices are an error), 'wrap' or 'clip'.

    >>> tnp.take(np.array([[1, 2], [3, 4]]), [1, 0], axis=1)
    array([[2, 1],
           [4, 3]])
    """
    P.check_unsupported("take", out=(out, None))
    x = P.asarray(a)
    if P.is_weak(x):
        x = np.asarray(x)
    if axis is not None:
        axis = P.axis_arg(axis, max(len(aval_of(x).shape), 1), "take")
    if axis is None or not aval_of(x).shape:
        # (NumPy takes from a 0-d array along axis 0 or -1 as from its one element)
        x = layout.reshape(x, (-1,))
        axis = 0
    shape = tuple(aval_of(x).shape)
    idx = _index_operand(indices, shape[axis], mode, "take")
    ishape = tuple(aval_of(idx).shape)
    y = ix.gather(x, layout.reshape(idx, ishape + (1,)), (axis,))
    k = len(ishape)
    perm = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, len(shape) - 1 + k))
    return P.scalar_result(layout.transpose(y, tuple(perm)))


def take_along_axis(arr, indices, axis=-1):
    """Values of ``arr`` at ``indices`` along ``axis`` (other dims broadcast), as
    ``numpy.take_along_axis``; ``axis=None`` works on the flattened array.

    >>> tnp.take_along_axis(np.array([[10, 30, 20]]), np.array([[0, 2, 1]]), axis=1)
    array([[10, 20, 30]])
    """
    x = P.asarray(arr)
    if axis is None:
        x = layout.reshape(x, (-1,))
        axis = 0
    shape = tuple(aval_of(x).shape)
    idx = P.asarray(indices)
    ishape = P.shape_of(idx)
    if len(ishape) != len(shape):
        raise ShapeError(f"indices of shape {ishape} must have the same number of dimensions "
                         f"as the array of shape {shape}", op="take_along_axis")
    axis = P.axis_arg(axis, len(shape), "take_along_axis")
    idx = _index_operand(idx, shape[axis], None, "take_along_axis")
    from ..core.shapes import broadcast_shapes
    other = broadcast_shapes(tuple(1 if i == axis else d for i, d in enumerate(shape)),
                             tuple(1 if i == axis else d for i, d in enumerate(ishape)),
                             op="take_along_axis")
    x = P.broadcast_to(x, tuple(shape[axis] if i == axis else d for i, d in enumerate(other)),
                       "take_along_axis")
    idx = P.broadcast_to(idx, tuple(ishape[axis] if i == axis else d
                                    for i, d in enumerate(other)), "take_along_axis")
    return ix.take_along_axis(x, idx, axis)


def put_along_axis(arr, indices, values, axis):
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis``.

    Unlike ``numpy.put_along_axis`` (which writes in place and returns None) it returns the
    new array: traced values are immutable.

    >>> tnp.put_along_axis(np.zeros((1, 3)), np.array([[2]]), 5.0, axis=1)
    array([[0., 0., 5.]])
    """
    x = P.asarray(arr)
    if axis is None:
        flat = layout.reshape(x, (-1,))
        return layout.reshape(put_along_axis(flat, indices, values, 0), tuple(aval_of(x).shape))
    shape = tuple(aval_of(x).shape)
    axis = P.axis_arg(axis, len(shape), "put_along_axis")
    idx = _index_operand(indices, shape[axis], None, "put_along_axis")
    ishape = tuple(aval_of(idx).shape)
    full = tuple(ishape[axis] if i == axis else d for i, d in enumerate(shape))
    idx = P.broadcast_to(idx, full, "put_along_axis")
    columns = [idx if d == axis else layout.iota(dtypes.int64, full, d) for d in range(len(shape))]
    matrix = layout.concatenate([layout.reshape(c, full + (1,)) for c in columns], len(shape))
    upd = P.broadcast_to(P.cast(P.asarray(values), aval_of(x).dtype), full, "put_along_axis")
    return ix.scatter(x, matrix, upd, tuple(range(len(shape))))


def _concrete_array(a, name, hint):
    if P.is_tracer(a):
        raise ConcretizationError(
            f"the shape of the result depends on the traced values; {hint}", op=name)
    return np.asarray(P.asarray(a))


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per dim, as ``numpy.nonzero``.

    Traced input needs a static ``size``: the result is padded with ``fill_value`` (0 by
    default) or cut to ``size`` entries, as in JAX.

    >>> tnp.nonzero(np.array([0, 3, 0, 4]))
    (array([1, 3]),)
    """
    if not P.is_tracer(a):
        arr = np.asarray(P.asarray(a))
        if arr.ndim == 0:
            raise ShapeError("is not allowed on a 0-d array; use atleast_1d",
                             op="nonzero")
        found = tuple(i.astype(np.int64) for i in np.nonzero(arr))
        if size is None:
            return found
        return tuple(_pad_to(i, size, fill_value) for i in found)
    if size is None:
        raise ConcretizationError(
            "the shape of the result depends on the traced values; pass size=N (and "
            "optionally fill_value) or use tnp.where(mask, x, y)", op="nonzero")
    size = P.concrete_int(size, "nonzero", "size")
    shape = tuple(a.shape)
    if not shape:
        raise ShapeError("is not allowed on a 0-d array; use atleast_1d", op="nonzero")
    n = math.prod(shape)
    mask = layout.reshape(ew.ne(a, P.cast(0, a.dtype)) if not dtypes.is_bool(a.dtype) else a,
                          (n,))
    as_int = ew.convert_element_type(mask, dtypes.int64)
    slot = ew.sub(red.cumsum(as_int, 0), 1)
    target = ew.select(ew.and_(mask, ew.lt(slot, size)), slot,
                       layout.full((n,), size, dtypes.int64))
    flat = ix.scatter(layout.full((size + 1,), 0, dtypes.int64),
                      layout.reshape(target, (n, 1)), layout.iota(dtypes.int64, (n,), 0), (0,))
    flat = layout.slice_in_dim(flat, 0, size, 1, 0)
    valid = ew.lt(layout.iota(dtypes.int64, (size,), 0), red.reduce_sum(as_int, (0,)))
    out, stride = [], n
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * len(shape)
    for d, fill in zip(shape, fills):
        stride //= d
        coord = ew.rem(ew.floor_div(flat, stride), d) if d else flat
        out.append(ew.select(valid, coord, layout.full((size,), 0 if fill is None else fill,
                                                       dtypes.int64)))
    return tuple(out)


def _pad_to(i, size, fill_value):
    size = P.concrete_int(size, "nonzero", "size")
    fill = 0 if fill_value is None else fill_value
    return np.concatenate([i[:size], np.full(max(size - len(i), 0), fill, np.int64)])


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened ``a``, as ``numpy.flatnonzero``.

    >>> tnp.flatnonzero(np.array([[0, 1], [2, 0]]))
    array([1, 2])
    """
    from .manipulation import ravel
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements as rows, as ``numpy.argwhere``.

    >>> tnp.argwhere(np.array([[0, 1], [2, 0]]))
    array([[0, 1],
           [1, 0]])
    """
    from .manipulation import stack
    x = P.asarray(a)
    if not P.shape_of(x):
        from .manipulation import atleast_1d
        return layout.slice_in_dim(argwhere(atleast_1d(x), size=size, fill_value=fill_value),
                                   0, 0, 1, 1)
    found = nonzero(x, size=size, fill_value=fill_value)
    return stack(found, axis=1)


def compress(condition, a, axis=None, out=None):
    """The slices of ``a`` where the (concrete) ``condition`` is true, as ``numpy.compress``.

    >>> tnp.compress([False, True], np.array([[1, 2], [3, 4]]), axis=0)
    array([[3, 4]])
    """
    P.check_unsupported("compress", out=(out, None))
    cond = _concrete_array(condition, "compress", "use tnp.where instead").astype(bool)
    if cond.ndim != 1:
        raise ShapeError("condition must be a 1-d array", op="compress")
    x = P.asarray(a)
    if axis is None:
        x = layout.reshape(x, (-1,))
        axis = 0
    n = tuple(aval_of(x).shape)[P.axis_arg(axis, len(aval_of(x).shape), "compress")]
    if len(cond) > n:
        raise TfIndexError(f"condition of length {len(cond)} is longer than axis {axis} of "
                           f"size {n}", op="compress")
    return take(x, np.flatnonzero(cond), axis=axis)


def extract(condition, arr):
    """The elements of ``arr`` where the (concrete) ``condition`` is true, flattened.

    >>> tnp.extract(np.array([True, False, True]), np.array([1, 2, 3]))
    array([1, 3])
    """
    cond = _concrete_array(condition, "extract", "use tnp.where instead")
    return take(layout.reshape(P.asarray(arr), (-1,)), np.flatnonzero(cond.reshape(-1)))


def select(condlist, choicelist, default=0):
    """Elements from ``choicelist`` by the first true condition, as ``numpy.select``.

    >>> tnp.select([np.array([True, False]), np.array([True, True])], [1, 2], 0)
    array([1, 2])
    """
    from .math import where
    if len(condlist) != len(choicelist):
        raise ShapeError("list of cases must be same length as list of conditions",
                         op="select")
    if not condlist:
        raise ShapeError("needs at least one condition (the list is empty)", op="select")
    choices = [P.asarray(c) for c in choicelist] + [P.asarray(default)]
    dt = P.result_type(*choices)
    result = P.cast(choices[-1], dt)
    for cond, choice in zip(condlist[::-1], choices[-2::-1]):
        c = P.asarray(cond)
        if P.is_weak(c) or not dtypes.is_bool(P.concrete_dtype(c)):
            raise ShapeError(f"invalid entry in condlist: should be boolean ndarray, got "
                             f"{P.concrete_dtype(c)}", op="select")
        result = where(c, P.cast(choice, dt), result)
    shape = P.shape_of(result)
    return P.broadcast_to(result, shape)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` for each position, as ``numpy.choose``.

    >>> tnp.choose(np.array([0, 1]), [np.array([1, 2]), np.array([3, 4])])
    array([1, 4])
    """
    P.check_unsupported("choose", out=(out, None))
    from .manipulation import stack
    index = P.asarray(a)
    options = [P.asarray(c) for c in choices]
    index, *options = P.broadcast_all("choose", [index] + options, keep_scalars=False)
    stacked = stack(options, axis=0)
    idx = _index_operand(index, len(options), mode, "choose")
    from .manipulation import expand_dims
    return layout.squeeze(ix.take_along_axis(stacked, expand_dims(idx, 0), 0), (0,))


def unravel_index(indices, shape, order="C"):
    """Flat indices into a tuple of coordinate arrays, as ``numpy.unravel_index``.

    >>> tnp.unravel_index(np.array([5, 1]), (2, 3))
    (array([1, 0]), array([2, 1]))
    """
    if order != "C":
        raise UnsupportedError(f"argument order={order!r} is not supported", op="unravel_index")
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    total = math.prod(dims)
    idx = P.asarray(indices)
    if not P.is_tracer(idx):
        arr = np.asarray(idx)
        if ((arr < 0) | (arr >= total)).any():
            raise TfIndexError(f"index {arr[(arr < 0) | (arr >= total)].flat[0]} is out of "
                               f"bounds for array with size {total}", op="unravel_index")
        return tuple(i.astype(np.int64) for i in np.unravel_index(arr, dims))
    idx = ew.convert_element_type(idx, dtypes.int64)
    out, stride = [], total
    for d in dims:
        stride //= d
        out.append(ew.rem(ew.floor_div(idx, stride), d))
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Coordinate arrays into flat indices, as ``numpy.ravel_multi_index``.

    >>> tnp.ravel_multi_index((np.array([1, 0]), np.array([2, 1])), (2, 3))
    array([5, 1])
    """
    if order != "C":
        raise UnsupportedError(f"argument order={order!r} is not supported",
                               op="ravel_multi_index")
    dims = tuple(dims)
    if len(multi_index) != len(dims):
        raise ShapeError(f"parameter multi_index must be a sequence of length {len(dims)}",
                         op="ravel_multi_index")
    columns = [_index_operand(i, d, None if mode == "raise" else mode, "ravel_multi_index")
               for i, d in zip(multi_index, dims)]
    if all(not P.is_tracer(c) for c in columns):
        raw = [np.asarray(i) for i in multi_index]
        if mode == "raise" and any((r < 0).any() for r in raw):
            raise TfIndexError("invalid entry in coordinates array", op="ravel_multi_index")
    columns = P.broadcast_all("ravel_multi_index", columns, keep_scalars=False)
    flat, stride = None, 1
    for c, d in zip(columns[::-1], dims[::-1]):
        term = ew.mul(c, np.asarray(stride, np.int64))
        flat = term if flat is None else ew.add(flat, term)
        stride *= d
    return flat


def tril_indices(n, k=0, m=None):
    """The indices of the lower triangle of an (n, m) array, as ``numpy.tril_indices``.

    >>> tnp.tril_indices(2)
    (array([0, 1, 1]), array([0, 0, 1]))
    """
    return tuple(i.astype(np.int64) for i in np.tril_indices(n, k, m))


def triu_indices(n, k=0, m=None):
    """The indices of the upper triangle of an (n, m) array, as ``numpy.triu_indices``.

    >>> tnp.triu_indices(2)
    (array([0, 0, 1]), array([0, 1, 1]))
    """
    return tuple(i.astype(np.int64) for i in np.triu_indices(n, k, m))


def diag_indices(n, ndim=2):
    """The indices of the main diagonal of an ``n``-sided ``ndim``-d array.

    >>> tnp.diag_indices(2)
    (array([0, 1]), array([0, 1]))
    """
    return tuple(i.astype(np.int64) for i in np.diag_indices(n, ndim))


def ix_(*args):
    """Open-mesh index arrays: the ``k``-th of ``n`` sequences reshaped to put its length on
    axis ``k``, as ``numpy.ix_`` (boolean sequences become their nonzero positions).

    >>> [i.shape for i in tnp.ix_([0, 1], [2, 0, 1])]
    [(2, 1), (1, 3)]
    """
    out = []
    for k, seq in enumerate(args):
        s = P.asarray(seq) if P.is_tracer(seq) else np.asarray(seq)
        if not P.is_tracer(s):
            if s.size == 0:
                s = s.astype(np.int64)
            if s.dtype == np.bool_:
                s = np.flatnonzero(s)
            s = np.asarray(P.asarray(s))
        if len(P.shape_of(s)) != 1:
            raise ShapeError("Cross index must be 1 dimensional", op="ix_")
        shape = [1] * len(args)
        shape[k] = P.shape_of(s)[0]
        out.append(layout.reshape(s, tuple(shape)))
    return tuple(out)


def _never_in_place(inplace, name):
    if inplace:
        raise TfNumbaError(f"cannot modify its argument (tf_numba never changes an array in "
                           f"place): call {name}(..., inplace=False) and use the array it "
                           "returns", op=name)


def place(arr, mask, vals, *, inplace=True):
    """A copy of ``arr`` with the entries where ``mask`` holds replaced, in order, by
    ``vals`` (repeated as needed), as ``jax.numpy.place`` with ``inplace=False`` (NumPy's
    ``place`` writes in place).

    >>> tnp.place(np.zeros(4), np.array([1, 0, 1, 1]), [7.0, 8.0], inplace=False)
    array([7., 0., 8., 7.])
    """
    _never_in_place(inplace, "place")
    from .manipulation import ravel
    from .math import where
    from .reductions import cumsum
    x = P.asarray(arr)
    shape = tuple(aval_of(x).shape)
    m = P.broadcast_to(P.cast(P.asarray(mask), dtypes.bool_), shape, "place")
    v = ravel(P.cast(P.asarray(vals), aval_of(x).dtype))
    n = aval_of(v).shape[0]
    if n == 0:
        return x
    flat_m = ravel(m)
    order = ew.sub(cumsum(P.cast(flat_m, dtypes.int64)), np.asarray(1, np.int64))
    picked = take(v, ew.rem(ew.max(order, np.asarray(0, np.int64)), np.asarray(n, np.int64)))
    return layout.reshape(where(flat_m, picked, ravel(x)), shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of ``a`` with the flat entries ``ind`` set to ``v`` (repeated as needed), as
    ``jax.numpy.put`` with ``inplace=False``; ``mode`` ``'clip'`` or ``'wrap'`` brings
    out-of-range indices in, as NumPy's.

    >>> tnp.put(np.zeros(4), [0, 2], 5.0, inplace=False)
    array([5., 0., 5., 0.])
    """
    _never_in_place(inplace, "put")
    from .manipulation import ravel, resize
    x = P.asarray(a)
    shape = tuple(aval_of(x).shape)
    n = math.prod(shape)
    idx = ravel(P.cast(P.asarray(ind), dtypes.int64))
    if mode == "clip":
        idx = ew.clamp(np.asarray(0, np.int64), idx, np.asarray(max(n - 1, 0), np.int64))
    elif mode == "wrap":
        idx = ew.rem(ew.add(ew.rem(idx, np.asarray(n, np.int64)), np.asarray(n, np.int64)),
                     np.asarray(n, np.int64))
    elif mode not in (None, "raise"):
        raise UnsupportedError(f"mode={mode!r}; use None, 'raise', 'clip' or 'wrap'", op="put")
    count = aval_of(idx).shape[0]
    values = resize(P.cast(P.asarray(v), aval_of(x).dtype), (count,))
    return layout.reshape(at(ravel(x))[idx].set(values), shape)
