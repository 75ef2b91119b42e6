"""Sorting and searching: sort, argsort, lexsort, partition, searchsorted, unique, isin, ...

All sorts are stable and put NaN last (NumPy's order); ``partition`` returns the fully
sorted array, which satisfies NumPy's contract for every ``kth``.

>>> tnp.argsort(np.array([3.0, np.nan, 1.0]))
array([2, 0, 1])
"""
import collections
import math

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ConcretizationError, ShapeError, UnsupportedError
from ..ops import elementwise as ew
from ..ops import indexing as ix
from ..ops import layout
from ..ops import sorting
from . import _promote as P

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "sort_complex",
           "searchsorted", "digitize", "unique", "unique_values", "isin", "bincount",
           "unique_all", "unique_counts", "unique_inverse", "union1d", "intersect1d",
           "setdiff1d", "setxor1d", "trim_zeros"]


_arr = P.as_array


_shape = P.shape_of


def _check_kind(kind, name):
    if kind not in (None, "quicksort", "mergesort", "heapsort", "stable"):
        raise UnsupportedError(f"argument kind={kind!r} is not supported", op=name)


def _flat_or_axis(a, axis, name):
    x = _arr(a)
    if axis is None:
        return layout.reshape(x, (-1,)), 0
    return x, P.axis_arg(axis, len(_shape(x)), name)


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """``a`` sorted along ``axis`` (flattened when None); stable, NaN last.

    >>> tnp.sort(np.array([[3, 1], [0, 2]]), axis=None)
    array([0, 1, 2, 3])
    """
    _check_kind(kind, "sort")
    P.check_unsupported("sort", order=(order, None))
    x, ax = _flat_or_axis(a, axis, "sort")
    if not _shape(x):
        raise ShapeError("cannot sort a 0-d array; use axis=None", op="sort")
    return sorting.sort([x], ax)[0]


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Indices that sort ``a`` along ``axis`` (int64), as ``numpy.argsort``.

    Always stable: ties keep their order (NumPy's default quicksort may order ties
    differently).

    >>> tnp.argsort(np.array([2, 0, 1]))
    array([1, 2, 0])
    """
    _check_kind(kind, "argsort")
    P.check_unsupported("argsort", order=(order, None))
    x, ax = _flat_or_axis(a, axis, "argsort")
    if not _shape(x):
        raise ShapeError("cannot argsort a 0-d array; use axis=None", op="argsort")
    positions = layout.iota(dtypes.int64, _shape(x), ax)
    return sorting.sort([x, positions], ax, 1)[1]


def lexsort(keys, axis=-1):
    """Indices sorting by several keys, the last key primary, as ``numpy.lexsort``.

    >>> tnp.lexsort([np.array([1, 0, 1]), np.array([0, 0, 1])])
    array([1, 0, 2])
    """
    ks = [_arr(k) for k in keys]
    if not ks:
        raise ShapeError("need at least one key", op="lexsort")
    ks = P.broadcast_all("lexsort", ks, keep_scalars=False)
    ax = P.axis_arg(axis, len(_shape(ks[0])), "lexsort")
    positions = layout.iota(dtypes.int64, _shape(ks[0]), ax)
    return sorting.sort(ks[::-1] + [positions], ax, len(ks))[-1]


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A partition of ``a`` around ``kth``: here the sorted array, which is one.

    >>> tnp.partition(np.array([3, 1, 2]), 1)
    array([1, 2, 3])
    """
    x = _arr(a)
    _check_kth(x, kth, axis, "partition")
    return sort(x, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """Indices partitioning ``a`` around ``kth``: here those that sort it.

    >>> tnp.argpartition(np.array([3, 1, 2]), 1)
    array([1, 2, 0])
    """
    x = _arr(a)
    _check_kth(x, kth, axis, "argpartition")
    return argsort(x, axis)


def _check_kth(x, kth, axis, name):
    n = _shape(x)[P.axis_arg(axis, len(_shape(x)), name)] if axis is not None else \
        math.prod(_shape(x))
    for k in np.atleast_1d(P.concrete_value(kth, name, "kth")):
        if not -n <= int(k) < n:
            raise ShapeError(f"kth(={int(k)}) out of bounds ({n})", op=name)


def sort_complex(a):
    """``a`` sorted as complex numbers (real part first), as ``numpy.sort_complex``.

    >>> tnp.sort_complex(np.array([1 + 2j, 1 - 1j]))
    array([1.-1.j, 1.+2.j])
    """
    x = _arr(a)
    dt = aval_of(x).dtype
    if not dtypes.is_complex(dt):
        x = ew.convert_element_type(x, dtypes.complex128)   # NumPy's 'D' for these dtypes
    return sort(x)


def _less(a, b):
    """NumPy's sort order: NaN sorts last (``a < b``, or ``b`` is NaN and ``a`` is not)."""
    if not dtypes.is_inexact(aval_of(a).dtype):
        return ew.lt(a, b)
    return ew.or_(ew.lt(a, b), ew.and_(ew.ne(b, b), ew.eq(a, a)))


def searchsorted(a, v, side="left", sorter=None):
    """Insertion points of ``v`` into the sorted 1-D ``a``, as ``numpy.searchsorted``.

    A branch-free binary search: ``ceil(log2(n + 1))`` rounds of gather and compare.

    >>> tnp.searchsorted(np.array([1, 2, 2, 3]), np.array([2, 5]), side="right")
    array([3, 4])
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    x = _arr(a)
    if len(_shape(x)) != 1:
        raise ShapeError(f"a must be 1-D, got shape {_shape(x)}", op="searchsorted")
    if sorter is not None:
        from .indexing import take
        x = take(x, sorter)
    values = _arr(v)
    dt = P.result_type(x, values)
    x, values = P.cast(x, dt), P.cast(values, dt)
    n = _shape(x)[0]
    vshape = _shape(values)
    lo = layout.full(vshape, 0, dtypes.int64)
    hi = layout.full(vshape, n, dtypes.int64)
    for _ in range(max(n, 1).bit_length()):
        mid = ew.floor_div(ew.add(lo, hi), np.asarray(2, np.int64))
        safe = ew.min(mid, np.asarray(max(n - 1, 0), np.int64))
        pivot = ix.gather(x, layout.reshape(safe, vshape + (1,)), (0,)) if n else values
        # left: go right while a[mid] < v; right: while not (v < a[mid])
        go_right = _less(pivot, values) if side == "left" else ew.not_(_less(values, pivot))
        go_right = ew.and_(go_right, ew.lt(mid, hi))
        lo = ew.select(go_right, ew.add(mid, np.asarray(1, np.int64)), lo)
        hi = ew.select(go_right, hi, mid)
    return P.scalar_result(lo)


def digitize(x, bins, right=False):
    """The index of the bin each value falls in, as ``numpy.digitize`` (bins monotonic;
    increasing bins may be traced, decreasing ones must be concrete).

    >>> tnp.digitize(np.array([0.5, 1.5, 3.0]), np.array([1.0, 2.0]))
    array([0, 1, 2])
    """
    b = _arr(bins)
    if not P.is_tracer(b):
        bb = np.asarray(b)
        if bb.ndim != 1:
            raise ShapeError("bins must be 1-dimensional", op="digitize")
        if len(bb) > 1 and bb[0] > bb[-1]:
            from .math import subtract
            return subtract(len(bb), searchsorted(bb[::-1], x, side="left" if right
                                                  else "right"))
    return searchsorted(b, x, side="left" if right else "right")


def _concrete(x, name):
    """``x`` as a NumPy array; ConcretizationError if it is traced (the result's length
    would depend on its values)."""
    if P.is_tracer(x):
        raise ConcretizationError(
            "the shape of the result depends on the traced values; compute it on concrete "
            "data outside the traced function", op=name)
    return np.asarray(P.asarray(x))


def _canonical(result):
    if isinstance(result, tuple):
        return tuple(_canonical(r) for r in result)
    return result.astype(dtypes.canonical(result.dtype), copy=False)


def _sized(values, size, fill_value):
    """``values`` cut or padded to ``size`` with ``fill_value`` (default: its first, the
    smallest), as JAX's ``size=`` arguments make a result's length static."""
    if size is None:
        return values
    if len(values) >= size:
        return values[:size]
    fill = (values[0] if len(values) else 0) if fill_value is None else fill_value
    return np.concatenate([values, np.full(size - len(values), fill, values.dtype)])


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, sorted=True):
    """The sorted unique elements (concrete input only: the result's length depends on the
    values), as ``numpy.unique``.

    >>> tnp.unique(np.array([3, 1, 3]))
    array([1, 3])
    """
    return _canonical(np.unique(_concrete(ar, "unique"), return_index=return_index,
                                return_inverse=return_inverse, return_counts=return_counts,
                                axis=axis, equal_nan=equal_nan))


def unique_values(x):
    """The array API's ``unique_values``: sorted unique elements of concrete ``x``.

    >>> tnp.unique_values(np.array([2, 2, 1]))
    array([1, 2])
    """
    return unique(x)


def unique_all(x, *, size=None, fill_value=None):
    """The array API's ``unique_all``: ``(values, indices, inverse_indices, counts)`` of
    concrete ``x``, ``inverse_indices`` shaped as ``x``."""
    out = np.unique(_concrete(x, "unique_all"), return_index=True, return_inverse=True,
                    return_counts=True)
    values, indices, inverse, counts = _canonical(out)
    return _UniqueAll(_sized(values, size, fill_value), _sized(indices, size, 0),
                      inverse.reshape(np.shape(x)), _sized(counts, size, 0))


def unique_counts(x, *, size=None, fill_value=None):
    """The array API's ``unique_counts``: ``(values, counts)`` of concrete ``x``."""
    values, counts = _canonical(np.unique(_concrete(x, "unique_counts"), return_counts=True))
    return _UniqueCounts(_sized(values, size, fill_value), _sized(counts, size, 0))


def unique_inverse(x, *, size=None, fill_value=None):
    """The array API's ``unique_inverse``: ``(values, inverse_indices)`` of concrete ``x``,
    ``inverse_indices`` shaped as ``x``."""
    values, inverse = _canonical(np.unique(_concrete(x, "unique_inverse"),
                                           return_inverse=True))
    return _UniqueInverse(_sized(values, size, fill_value), inverse.reshape(np.shape(x)))


_UniqueAll = collections.namedtuple("UniqueAllResult",
                                    "values indices inverse_indices counts")
_UniqueCounts = collections.namedtuple("UniqueCountsResult", "values counts")
_UniqueInverse = collections.namedtuple("UniqueInverseResult", "values inverse_indices")


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted union of concrete ``ar1`` and ``ar2``, as ``numpy.union1d`` (``size``
    pads or cuts it, as JAX's)."""
    return _sized(_canonical(np.union1d(_concrete(ar1, "union1d"), _concrete(ar2, "union1d"))),
                  size, fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted common values of concrete ``ar1`` and ``ar2`` (with their first indices
    in each, ``return_indices=True``), as ``numpy.intersect1d``."""
    out = _canonical(np.intersect1d(_concrete(ar1, "intersect1d"),
                                    _concrete(ar2, "intersect1d"), assume_unique,
                                    return_indices))
    if not return_indices:
        return _sized(out, size, fill_value)
    values, i1, i2 = out
    return _sized(values, size, fill_value), _sized(i1, size, 0), _sized(i2, size, 0)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values of concrete ``ar1`` not in ``ar2``, as ``numpy.setdiff1d``."""
    return _sized(_canonical(np.setdiff1d(_concrete(ar1, "setdiff1d"),
                                          _concrete(ar2, "setdiff1d"), assume_unique)),
                  size, fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of concrete ``ar1`` and ``ar2``, as
    ``numpy.setxor1d``."""
    return _sized(_canonical(np.setxor1d(_concrete(ar1, "setxor1d"),
                                         _concrete(ar2, "setxor1d"), assume_unique)),
                  size, fill_value)


def trim_zeros(filt, trim="fb"):
    """Concrete 1-d ``filt`` without its leading (``"f"``) and trailing (``"b"``) zeros, as
    ``numpy.trim_zeros``."""
    return _canonical(np.trim_zeros(_concrete(filt, "trim_zeros"), trim))


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of ``element`` is in ``test_elements``, as ``numpy.isin``.

    Compares every pair (memory ``element.size * test_elements.size``).

    >>> tnp.isin(np.array([1, 2, 3]), [2, 4])
    array([False,  True, False])
    """
    from .math import equal
    from .reductions import any as any_
    e = _arr(element)
    t = layout.reshape(_arr(test_elements), (-1,))
    es = _shape(e)
    pairs = equal(layout.reshape(e, es + (1,)), t)
    found = P.asarray(any_(pairs, axis=-1))
    return ew.not_(found) if invert else found


def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer in ``x``.

    Concrete ``x`` behaves as ``numpy.bincount``; traced ``x`` needs a static ``length``
    (values >= length are dropped), as in JAX.

    >>> tnp.bincount(np.array([0, 1, 1, 3]))
    array([1, 2, 0, 1])
    """
    xs = _arr(x)
    if len(_shape(xs)) != 1:
        raise ShapeError(f"x must be 1-D, got shape {_shape(xs)}", op="bincount")
    if not dtypes.is_integer(aval_of(xs).dtype) and not dtypes.is_bool(aval_of(xs).dtype):
        raise ShapeError("x must hold non-negative integers", op="bincount")
    if length is None:
        if P.is_tracer(xs):
            raise ConcretizationError("a traced value needs a static length=",
                                      op="bincount")
        concrete = np.asarray(xs)
        if (concrete < 0).any():
            raise ValueError("'list' argument must have no negative elements")
        length = max(int(concrete.max()) + 1 if concrete.size else 0, minlength)
    length = P.concrete_int(length, "bincount", "length")
    idx = ew.convert_element_type(xs, dtypes.int64)
    n = _shape(xs)[0]
    if weights is None:
        upd = layout.full((n,), 1, dtypes.int64)
        dt = dtypes.int64
    else:
        w = _arr(weights)
        dt = P.result_type(w, dtypes.float64) if not dtypes.is_complex(aval_of(w).dtype) \
            else aval_of(w).dtype
        upd = P.broadcast_to(P.cast(w, dt), (n,), "bincount")
    # Values outside [0, length) land in one extra slot that is cut off afterwards.
    inside = ew.and_(ew.ge(idx, np.asarray(0, np.int64)), ew.lt(idx, np.asarray(length,
                                                                               np.int64)))
    target = ew.select(inside, idx, layout.full((n,), length, dtypes.int64))
    out = ix.scatter_add(layout.full((length + 1,), 0, dt), layout.reshape(target, (n, 1)),
                         upd, (0,))
    return layout.slice_in_dim(out, 0, length, 1, 0)
