"""Reductions and scans with NumPy's axis/keepdims/dtype/where/initial rules and result dtypes.

``sum`` and ``prod`` of bools and int32 accumulate in int64 (NumPy's ``int_`` on Linux);
``mean``/``var``/``std`` of integers compute in float64; ``argmax`` returns int64.

>>> tnp.sum(np.array([1, 2], np.int32)).dtype
dtype('int64')
"""
import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import Sym
from ..core.trace import current_builder
from ..errors import ConcretizationError, DTypeError, ShapeError
from ..ops import elementwise as ew
from ..ops import layout
from ..ops import reductions as red
from . import _promote as P

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "argmax",
           "argmin", "all", "any", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
           "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "ptp", "average", "median",
           "nanmedian", "quantile", "percentile", "count_nonzero", "nanquantile",
           "nanpercentile"]


_arr = P.as_array


def _dt(x):
    return aval_of(x).dtype


_shape = P.shape_of


def _keep(out, shape, axes, keepdims):
    """The reduced result with the reduced axes back as size-1 dims when ``keepdims``."""
    if not keepdims:
        return out
    return layout.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _count(shape, axes, name):
    """The number of elements in ``axes``: a Python int, or for symbolic lengths an int64
    traced value (``dim_size``)."""
    dims = [shape[a] for a in axes]
    if not builtins.any(isinstance(d, Sym) for d in dims):
        return math.prod(dims)
    return layout.dim_size(dims)


def _accumulator(dt):
    """NumPy's default dtype for add/multiply reductions: bools and signed ints widen to
    int64, unsigned ints to uint64."""
    if dtypes.is_integer(dt) and dt.kind == "u":
        return dtypes.uint64
    return dtypes.int64 if dtypes.is_bool(dt) or dtypes.is_integer(dt) else dt


def _where_fill(x, where, fill, name):
    """``x`` with the positions where ``where`` is False replaced by ``fill``."""
    if where is True:
        return x
    from .math import where as where_
    mask = P.broadcast_to(_arr(where), _shape(x), name)
    return where_(mask, x, P.cast(fill, _dt(x)))


def _sum_like(a, axis, dtype, out, keepdims, initial, where, name, reduce, identity, combine):
    P.check_unsupported(name, out=(out, None))
    x = _arr(a)
    dt = dtypes.canonical(dtype) if dtype is not None else _accumulator(_dt(x))
    x = ew.convert_element_type(x, dt)
    shape = _shape(x)
    axes = P.axes_arg(axis, len(shape), name)
    x = _where_fill(x, where, identity, name)
    y = reduce(x, axes) if axes else x
    if initial is not None:
        y = combine(y, P.cast(initial, dt))
    return P.scalar_result(_keep(y, shape, axes, keepdims))


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):  # noqa: A001
    """Sum over ``axis`` (all by default), as ``numpy.sum``; bools and int32 sum in int64.

    >>> tnp.sum(np.array([[1, 2], [3, 4]]), axis=0)
    array([4, 6])
    """
    return _sum_like(a, axis, dtype, out, keepdims, initial, where, "sum",
                     _reduce_add, 0, _add)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product over ``axis`` (all by default), as ``numpy.prod``.

    >>> tnp.prod(np.array([1.0, 2.0, 3.0]))
    np.float64(6.0)
    """
    return _sum_like(a, axis, dtype, out, keepdims, initial, where, "prod",
                     _reduce_mul, 1, _mul)


def _reduce_add(x, axes):
    return red.reduce_or(x, axes) if dtypes.is_bool(_dt(x)) else red.reduce_sum(x, axes)


def _reduce_mul(x, axes):
    return red.reduce_and(x, axes) if dtypes.is_bool(_dt(x)) else red.reduce_prod(x, axes)


def _add(x, y):
    return ew.or_(x, y) if dtypes.is_bool(_dt(x)) else ew.add(x, y)


def _mul(x, y):
    return ew.and_(x, y) if dtypes.is_bool(_dt(x)) else ew.mul(x, y)


def _extreme(a, axis, out, keepdims, initial, where, name, reduce, combine):
    P.check_unsupported(name, out=(out, None))
    x = _arr(a)
    shape = _shape(x)
    axes = P.axes_arg(axis, len(shape), name)
    if where is not True:
        if initial is None:
            raise ShapeError("reduction operation with where= needs an initial value",
                             op=name)
        x = _where_fill(x, where, initial, name)
    if initial is not None and builtins.any(shape[i] == 0 for i in axes):
        out_shape = tuple(d for i, d in enumerate(shape) if i not in axes)
        y = layout.full(out_shape, P.cast(initial, _dt(x)), _dt(x))
    else:
        y = reduce(x, axes) if axes else x
        if initial is not None:
            y = combine(y, P.cast(initial, _dt(x)))
    return P.scalar_result(_keep(y, shape, axes, keepdims))


def max(a, axis=None, out=None, keepdims=False, initial=None, where=True):  # noqa: A001
    """Maximum over ``axis``; NaN propagates, as ``numpy.max``.

    >>> tnp.max(np.array([[1, 5], [3, 2]]), axis=1)
    array([5, 3])
    """
    return _extreme(a, axis, out, keepdims, initial, where, "max", red.reduce_max, ew.max)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=True):  # noqa: A001
    """Minimum over ``axis``; NaN propagates, as ``numpy.min``.

    >>> tnp.min(np.array([[1, 5], [3, 2]]), axis=1)
    array([1, 2])
    """
    return _extreme(a, axis, out, keepdims, initial, where, "min", red.reduce_min, ew.min)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Alias of ``max``.

    >>> tnp.amax(np.array([1, 3]))
    np.int64(3)
    """
    return max(a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """Alias of ``min``.

    >>> tnp.amin(np.array([1, 3]))
    np.int64(1)
    """
    return min(a, axis, out, keepdims, initial, where)


def ptp(a, axis=None, out=None, keepdims=False):
    """``max - min`` over ``axis``, as ``numpy.ptp``.

    >>> tnp.ptp(np.array([4, 1, 7]))
    np.int64(6)
    """
    from .math import subtract
    return subtract(max(a, axis, out, keepdims), min(a, axis, None, keepdims))


def _mean_dtype(dt, dtype):
    if dtype is not None:
        return dtypes.canonical(dtype)
    return dtypes.float64 if not dtypes.is_inexact(dt) else dt


def _counts(x, axes, where, keepdims, name):
    """The number of elements reduced: a Python int, or an int64 array when ``where`` masks."""
    shape = _shape(x)
    if where is True:
        if current_builder() is not None:
            # traced: the count is read from the operand's shape, not written into the
            # program as a literal, so a compiled kernel serves every length
            return layout.dim_size([shape[a] for a in axes])
        return _count(shape, axes, name)
    mask = P.broadcast_to(_arr(where), shape, name)
    counts = red.reduce_sum(ew.convert_element_type(mask, dtypes.int64), axes)
    return _keep(counts, shape, axes, keepdims)


def _divide(total, count):
    """``total / count`` in ``total``'s dtype, as NumPy's ``true_divide(ret, rcount)``."""
    dt = _dt(total)
    if not dtypes.is_inexact(dt):
        # NumPy divides in float64 and casts back (an integer dtype= truncates the mean)
        quotient = _divide(ew.convert_element_type(total, dtypes.float64), count)
        return ew.convert_element_type(quotient, dt)
    if isinstance(count, int):
        return ew.div(total, np.asarray(count, dt))
    return ew.div(total, ew.convert_element_type(count, dt))


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """Arithmetic mean over ``axis``, as ``numpy.mean`` (integers give float64).

    >>> tnp.mean(np.array([1, 2]))
    np.float64(1.5)
    """
    P.check_unsupported("mean", out=(out, None))
    x = _arr(a)
    dt = _mean_dtype(_dt(x), dtype)
    axes = P.axes_arg(axis, len(_shape(x)), "mean")
    total = sum(x, axes, dt, None, keepdims, None, where)
    return P.scalar_result(_divide(total, _counts(x, axes, where, keepdims, "mean")))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=None):  # noqa: A002 - NumPy's names
    """Variance ``sum(|x - mean|**2) / (n - ddof)`` over ``axis``, as ``numpy.var``.

    >>> tnp.var(np.array([1.0, 2.0, 3.0, 4.0]))
    np.float64(1.25)
    """
    return _var(a, axis, dtype, out, ddof, keepdims, where, mean, correction, "var")


def _var(a, axis, dtype, out, ddof, keepdims, where, mean_, correction, name):
    P.check_unsupported(name, out=(out, None))
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    x = _arr(a)
    shape = _shape(x)
    axes = P.axes_arg(axis, len(shape), name)
    dt = _mean_dtype(_dt(x), dtype)
    count = _counts(x, axes, where, True, name)
    if mean_ is None:
        centre = _divide(sum(x, axes, dt, None, True, None, where), count)
    else:
        centre = P.asarray(mean_)
    from .math import subtract
    d = subtract(x, centre)
    if dtypes.is_complex(_dt(d)):
        re, im = ew.real(d), ew.imag(d)
        sq = ew.add(ew.mul(re, re), ew.mul(im, im))
    else:
        sq = ew.mul(d, d)
    total = sum(sq, axes, dtypes.real_part(dt) if dtype is None else dt, None, keepdims, None,
                where)
    if isinstance(count, int):
        denom = builtins.max(count - ddof, 0)
    else:
        if not keepdims and _shape(count):
            count = layout.reshape(count, _shape(total))
        denom = count if ddof == 0 else ew.max(ew.sub(count, np.asarray(ddof, dtypes.int64)),
                                                np.asarray(0, np.int64))
    return _divide(total, denom)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
        mean=None, correction=None):  # noqa: A002 - NumPy's names
    """Standard deviation, ``sqrt(var)``, as ``numpy.std``.

    >>> tnp.std(np.array([1.0, 3.0]))
    np.float64(1.0)
    """
    v = _var(a, axis, dtype, out, ddof, keepdims, where, mean, correction, "std")
    return P.scalar_result(ew.sqrt(v))


def _flat_axis(a, axis, name):
    x = _arr(a)
    if axis is None:
        return layout.reshape(x, (-1,)), 0, None
    shape = _shape(x)
    return x, P.axis_arg(axis, len(shape), name), shape


def _arg(a, axis, out, keepdims, name, op):
    P.check_unsupported(name, out=(out, None))
    x, ax, shape = _flat_axis(a, axis, name)
    y = op(x, ax, dtypes.int64)
    if keepdims:
        shape = shape if shape is not None else (1,) * len(_shape(_arr(a)))
        y = layout.reshape(y, tuple(1 if i == ax or axis is None else d
                                    for i, d in enumerate(shape)))
    return P.scalar_result(y)


def argmax(a, axis=None, out=None, *, keepdims=False):
    """Index of the first maximum along ``axis`` (of the flattened array by default).

    >>> tnp.argmax(np.array([1, 3, 3]))
    np.int64(1)
    """
    return _arg(a, axis, out, keepdims, "argmax", red.argmax)


def argmin(a, axis=None, out=None, *, keepdims=False):
    """Index of the first minimum along ``axis`` (of the flattened array by default).

    >>> tnp.argmin(np.array([3, 1, 1]))
    np.int64(1)
    """
    return _arg(a, axis, out, keepdims, "argmin", red.argmin)


def _truth(x):
    return x if dtypes.is_bool(_dt(x)) else ew.ne(x, P.cast(0, _dt(x)))


def _logical(a, axis, out, keepdims, where, name, reduce, identity):
    P.check_unsupported(name, out=(out, None))
    x = _truth(_arr(a))
    shape = _shape(x)
    axes = P.axes_arg(axis, len(shape), name)
    x = _where_fill(x, where, identity, name)
    y = reduce(x, axes) if axes else x
    return P.scalar_result(_keep(y, shape, axes, keepdims))


def all(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether every element along ``axis`` is true, as ``numpy.all``.

    >>> tnp.all(np.array([1, 0]))
    np.False_
    """
    return _logical(a, axis, out, keepdims, where, "all", red.reduce_and, True)


def any(a, axis=None, out=None, keepdims=False, *, where=True):  # noqa: A001
    """Whether any element along ``axis`` is true, as ``numpy.any``.

    >>> tnp.any(np.array([1, 0]))
    np.True_
    """
    return _logical(a, axis, out, keepdims, where, "any", red.reduce_or, False)


def count_nonzero(a, axis=None, *, keepdims=False):
    """The number of nonzero elements along ``axis`` (int64), as ``numpy.count_nonzero``.

    >>> tnp.count_nonzero(np.array([[0, 1], [2, 3]]))
    np.int64(3)
    """
    x = _truth(_arr(a))
    return sum(ew.convert_element_type(x, dtypes.int64), axis, keepdims=keepdims)


# ---------------------------------------------------------------- scans


def _scan(a, axis, dtype, out, name, scan, bool_op):
    P.check_unsupported(name, out=(out, None))
    x, ax, _ = _flat_axis(a, axis, name)
    dt = dtypes.canonical(dtype) if dtype is not None else _accumulator(_dt(x))
    x = ew.convert_element_type(x, dt)
    if dtypes.is_bool(dt):
        return bool_op(x, ax)
    return scan(x, ax)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array by default), as ``numpy.cumsum``.

    >>> tnp.cumsum(np.array([1, 2, 3]))
    array([1, 3, 6])
    """
    return _scan(a, axis, dtype, out, "cumsum", red.cumsum, red.cummax)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis``, as ``numpy.cumprod``.

    >>> tnp.cumprod(np.array([1, 2, 3]))
    array([1, 2, 6])
    """
    return _scan(a, axis, dtype, out, "cumprod", red.cumprod, red.cummin)


def _cumulative(a, axis, dtype, include_initial, name, scan_fn, identity):
    x = _arr(a)
    if axis is None:
        if len(_shape(x)) > 1:
            raise ShapeError("axis must be given for arrays of rank > 1", op=name)
        axis = 0
    y = scan_fn(x, axis, dtype)
    if include_initial:
        ax = P.axis_arg(axis, len(_shape(y)), name)
        config = tuple((1, 0, 0) if i == ax else (0, 0, 0) for i in range(len(_shape(y))))
        y = layout.pad(y, P.cast(identity, _dt(y)), config)
    return y


def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The array API's cumulative sum (with an optional leading 0), as ``numpy.cumulative_sum``.

    >>> tnp.cumulative_sum(np.array([1, 2]), include_initial=True)
    array([0, 1, 3])
    """
    P.check_unsupported("cumulative_sum", out=(out, None))
    return _cumulative(x, axis, dtype, include_initial, "cumulative_sum", cumsum, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """The array API's cumulative product, as ``numpy.cumulative_prod``.

    >>> tnp.cumulative_prod(np.array([2, 3]), include_initial=True)
    array([1, 2, 6])
    """
    P.check_unsupported("cumulative_prod", out=(out, None))
    return _cumulative(x, axis, dtype, include_initial, "cumulative_prod", cumprod, 1)


# ---------------------------------------------------------------- NaN-ignoring


def _isnan(x):
    return ew.ne(x, x)


def _nan_replaced(a, value):
    x = _arr(a)
    if not dtypes.is_inexact(_dt(x)):
        return x, None
    mask = _isnan(x)
    return ew.select(mask, P.cast(value, _dt(x)), x), mask


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """``sum`` treating NaN as zero, as ``numpy.nansum``.

    >>> tnp.nansum(np.array([1.0, np.nan]))
    np.float64(1.0)
    """
    return sum(_nan_replaced(a, 0)[0], axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """``prod`` treating NaN as one, as ``numpy.nanprod``.

    >>> tnp.nanprod(np.array([2.0, np.nan]))
    np.float64(2.0)
    """
    return prod(_nan_replaced(a, 1)[0], axis, dtype, out, keepdims, initial, where)


def nancumsum(a, axis=None, dtype=None, out=None):
    """``cumsum`` treating NaN as zero, as ``numpy.nancumsum``.

    >>> tnp.nancumsum(np.array([1.0, np.nan, 2.0]))
    array([1., 1., 3.])
    """
    return cumsum(_nan_replaced(a, 0)[0], axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    """``cumprod`` treating NaN as one, as ``numpy.nancumprod``.

    >>> tnp.nancumprod(np.array([2.0, np.nan, 2.0]))
    array([2., 2., 4.])
    """
    return cumprod(_nan_replaced(a, 1)[0], axis, dtype, out)


def _nan_extreme(a, axis, out, keepdims, initial, where, name, fn, fill):
    x = _arr(a)
    if not dtypes.is_inexact(_dt(x)):
        return fn(x, axis, out, keepdims, initial, where)
    mask = _isnan(x)
    m = fn(ew.select(mask, P.cast(fill, _dt(x)), x), axis, out, keepdims, initial, where)
    if initial is not None:
        return m
    all_nan = all(mask, axis, None, keepdims)
    return P.scalar_result(ew.select(all_nan, P.cast(np.nan, _dt(x)), m))


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """``max`` ignoring NaN (NaN only for an all-NaN slice), as ``numpy.nanmax``.

    >>> tnp.nanmax(np.array([1.0, np.nan, 3.0]))
    np.float64(3.0)
    """
    return _nan_extreme(a, axis, out, keepdims, initial, where, "nanmax", max, -np.inf)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    """``min`` ignoring NaN (NaN only for an all-NaN slice), as ``numpy.nanmin``.

    >>> tnp.nanmin(np.array([1.0, np.nan, 3.0]))
    np.float64(1.0)
    """
    return _nan_extreme(a, axis, out, keepdims, initial, where, "nanmin", min, np.inf)


def _nan_arg(a, axis, out, keepdims, name, fn, fill):
    x = _arr(a)
    if not dtypes.is_inexact(_dt(x)):
        return fn(x, axis, out, keepdims=keepdims)
    mask = _isnan(x)
    if not P.is_tracer(mask) and np.asarray(all(mask, axis)).any():
        raise ValueError("All-NaN slice encountered")
    return fn(ew.select(mask, P.cast(fill, _dt(x)), x), axis, out, keepdims=keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    """``argmax`` ignoring NaN, as ``numpy.nanargmax`` (an all-NaN slice is an error
    eagerly; traced, it gives 0).

    >>> tnp.nanargmax(np.array([1.0, np.nan, 3.0]))
    np.int64(2)
    """
    return _nan_arg(a, axis, out, keepdims, "nanargmax", argmax, -np.inf)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    """``argmin`` ignoring NaN, as ``numpy.nanargmin``.

    >>> tnp.nanargmin(np.array([1.0, np.nan, 0.5]))
    np.int64(2)
    """
    return _nan_arg(a, axis, out, keepdims, "nanargmin", argmin, np.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    """``mean`` of the non-NaN elements, as ``numpy.nanmean``.

    >>> tnp.nanmean(np.array([1.0, np.nan, 3.0]))
    np.float64(2.0)
    """
    x = _arr(a)
    replaced, mask = _nan_replaced(x, 0)
    if mask is None:
        return mean(x, axis, dtype, out, keepdims, where=where)
    P.check_unsupported("nanmean", out=(out, None))
    dt = _mean_dtype(_dt(x), dtype)
    total = P.asarray(sum(replaced, axis, dt, None, keepdims, None, where))
    valid = ew.not_(mask)
    if where is not True:
        valid = ew.and_(valid, P.broadcast_to(_truth(_arr(where)), _shape(x)))
    count = P.asarray(sum(valid, axis, dtypes.int64, None, keepdims))
    return P.scalar_result(_divide(total, count))


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):  # noqa: A002
    """``var`` of the non-NaN elements, as ``numpy.nanvar``.

    >>> tnp.nanvar(np.array([1.0, np.nan, 3.0]))
    np.float64(1.0)
    """
    x = _arr(a)
    if not dtypes.is_inexact(_dt(x)):
        return var(x, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                   correction=correction)
    # NaNs are zeroed before var sees them (as NumPy's nanvar does), so no NaN reaches
    # even a masked-out product, where it would poison the derivatives.
    replaced, mask = _nan_replaced(x, 0)
    valid = ew.not_(mask)
    if where is not True:
        valid = ew.and_(valid, P.broadcast_to(_truth(_arr(where)), _shape(x)))
    return var(replaced, axis, dtype, out, ddof, keepdims, where=valid, mean=mean,
               correction=correction)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
           mean=None, correction=None):  # noqa: A002
    """``std`` of the non-NaN elements, as ``numpy.nanstd``.

    >>> tnp.nanstd(np.array([1.0, np.nan, 3.0]))
    np.float64(1.0)
    """
    v = nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
               correction=correction)
    return P.scalar_result(ew.sqrt(v))


# ---------------------------------------------------------------- weighted and order stats


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """Weighted average over ``axis``, as ``numpy.average``.

    >>> tnp.average(np.array([1.0, 2.0]), weights=np.array([3.0, 1.0]))
    np.float64(1.25)
    """
    from .math import multiply
    x = _arr(a)
    shape = _shape(x)
    if weights is None:
        avg = P.asarray(mean(x, axis, keepdims=keepdims))
        avg_arr = np.asarray(avg) if isinstance(avg, np.generic) else avg
        n_out = math.prod(_shape(avg_arr))
        scl = np.asarray(math.prod(shape) / n_out if n_out else 0, _dt(avg_arr))
    else:
        w = _arr(weights)
        dt = _dt(x)
        if not dtypes.is_inexact(dt):
            result_dtype = P.result_type(dt, _dt(w), dtypes.float64)
        else:
            result_dtype = P.result_type(dt, _dt(w))
        if _shape(w) != shape:
            if axis is None:
                raise ShapeError("Axis must be specified when shapes of a and weights differ.",
                                 op="average")
            axes = axis if isinstance(axis, (tuple, list)) else (axis,)
            axes = tuple(P.axis_arg(ax, len(shape), "average") for ax in axes)
            if _shape(w) != tuple(shape[ax] for ax in axes):
                raise ShapeError(f"Shape of weights {_shape(w)} must be consistent with "
                                 f"shape of a {shape} along specified axis.", op="average")
            w = layout.transpose(w, tuple(np.argsort(axes).tolist()))
            w = layout.reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(shape)))
        scl = P.asarray(sum(w, axis, result_dtype, keepdims=keepdims))
        if not P.is_tracer(scl) and np.any(np.asarray(scl) == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        total = sum(multiply(x, w, dtype=result_dtype), axis, keepdims=keepdims)
        from .math import divide
        avg = divide(total, scl)
        avg_arr = P.asarray(avg)
    if returned:
        scl_shape = P.shape_of(P.asarray(scl))
        if scl_shape != P.shape_of(P.asarray(avg_arr)):
            scl = P.broadcast_to(scl, P.shape_of(P.asarray(avg_arr)))
        return avg, P.scalar_result(scl)
    return avg


def _sorted_along(a, axis, name):
    """``a`` sorted along one axis (the flattened array, or several axes merged at the end)."""
    x = _arr(a)
    if dtypes.is_complex(_dt(x)):
        raise DTypeError("a must be an array of real numbers", op=name)
    shape = _shape(x)
    if axis is None:
        x = layout.reshape(x, (-1,))
        ax, kept = 0, ()
    else:
        axes = P.axes_arg(axis, len(shape), name)
        kept = tuple(i for i in range(len(shape)) if i not in axes)
        x = layout.transpose(x, kept + axes)
        x = layout.reshape(x, tuple(shape[i] for i in kept) + (_count(shape, axes, name),))
        ax = len(kept)
    from ..ops import sorting
    return sorting.sort([x], ax)[0], ax, shape


def _restore(y, shape, axis, keepdims, lead=()):
    if not keepdims:
        return y
    axes = P.axes_arg(axis, len(shape), "keepdims")
    return layout.reshape(y, lead + tuple(1 if i in axes else d for i, d in enumerate(shape)))


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median along ``axis`` (NaN if a slice holds NaN), as ``numpy.median``.

    >>> tnp.median(np.array([3.0, 1.0, 2.0, 10.0]))
    np.float64(2.5)
    """
    P.check_unsupported("median", out=(out, None))
    s, ax, shape = _sorted_along(a, axis, "median")
    n = _shape(s)[ax]
    if n == 0:
        raise ShapeError("an empty slice has no median", op="median")
    lo = (n - 1) // 2
    middle = layout.slice_in_dim(s, lo, lo + (2 if n % 2 == 0 else 1), 1, ax)
    result = P.asarray(mean(middle, axis=ax))
    if dtypes.is_inexact(_dt(s)):
        last = layout.squeeze(layout.slice_in_dim(s, n - 1, n, 1, ax), (ax,))
        result = ew.select(_isnan(last), ew.convert_element_type(last, _dt(result)), result)
    return P.scalar_result(_restore(result, shape, axis, keepdims))


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of the non-NaN elements along ``axis`` (NaN for an all-NaN slice).

    >>> tnp.nanmedian(np.array([3.0, np.nan, 1.0]))
    np.float64(2.0)
    """
    P.check_unsupported("nanmedian", out=(out, None))
    x = _arr(a)
    if not dtypes.is_inexact(_dt(x)):
        return median(x, axis, None, overwrite_input, keepdims)
    s, ax, shape = _sorted_along(x, axis, "nanmedian")
    n = _shape(s)[ax]
    valid = ew.convert_element_type(ew.not_(_isnan(s)), dtypes.int64)
    count = red.reduce_sum(valid, (ax,))
    lo = ew.floor_div(ew.sub(count, np.asarray(1, np.int64)), np.asarray(2, np.int64))
    hi = ew.floor_div(count, np.asarray(2, np.int64))
    lo = ew.max(lo, np.asarray(0, np.int64))
    from ..ops import indexing as ix
    pick = []
    for i in (lo, hi):
        i = ew.min(i, np.asarray(builtins.max(n - 1, 0), np.int64))
        pick.append(layout.squeeze(ix.take_along_axis(s, layout.expand_dims(i, (ax,)), ax),
                                   (ax,)))
    total = ew.add(pick[0], pick[1])
    result = ew.div(total, P.cast(2, _dt(total)))
    result = ew.select(ew.eq(count, np.asarray(0, np.int64)), P.cast(np.nan, _dt(result)),
                       result)
    return P.scalar_result(_restore(result, shape, axis, keepdims))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The ``q``-th quantiles (``q`` concrete, in [0, 1]) along ``axis``, as
    ``numpy.quantile`` with ``method='linear'``.

    >>> tnp.quantile(np.array([1.0, 2.0, 3.0, 4.0]), 0.5)
    np.float64(2.5)
    """
    return _quantile(a, q, axis, out, method, keepdims, weights, "quantile", 1)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    """The ``q``-th percentiles (``q`` concrete, in [0, 100]) along ``axis``, as
    ``numpy.percentile`` with ``method='linear'``.

    >>> tnp.percentile(np.array([1.0, 2.0, 3.0, 4.0]), 50)
    np.float64(2.5)
    """
    return _quantile(a, q, axis, out, method, keepdims, weights, "percentile", 100)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
    """The ``q``-th quantiles of the non-NaN elements (``q`` concrete, in [0, 1]) along
    ``axis``, NaN for an all-NaN slice, as ``numpy.nanquantile`` with ``method='linear'``.

    >>> tnp.nanquantile(np.array([1.0, np.nan, 3.0, 4.0]), 0.5)
    np.float64(3.0)
    """
    return _nanquantile(a, q, axis, out, method, keepdims, "nanquantile", 1)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
    """The ``q``-th percentiles of the non-NaN elements (``q`` concrete, in [0, 100]), as
    ``numpy.nanpercentile`` with ``method='linear'``.

    >>> tnp.nanpercentile(np.array([1.0, np.nan, 3.0, 4.0]), 50)
    np.float64(3.0)
    """
    return _nanquantile(a, q, axis, out, method, keepdims, "nanpercentile", 100)


def _nanquantile(a, q, axis, out, method, keepdims, name, scale):
    x = _arr(a)
    if not dtypes.is_inexact(_dt(x)):
        return _quantile(x, q, axis, out, method, keepdims, None, name, scale)
    P.check_unsupported(name, out=(out, None), method=(method, "linear"))
    qa = _concrete_fractions(q, x, name, scale)
    s, ax, shape = _sorted_along(x, axis, name)            # NaN last
    n = _shape(s)[ax]
    from ..ops import indexing as ix
    count = red.reduce_sum(ew.convert_element_type(ew.not_(_isnan(s)), dtypes.int64), (ax,))
    top = ew.max(ew.sub(count, np.asarray(1, np.int64)), np.asarray(0, np.int64))
    results = []
    for fraction in qa.reshape(-1):
        virtual = ew.mul(ew.convert_element_type(top, _dt(s)), np.asarray(fraction, _dt(s)))
        prev = ew.floor(virtual)
        gamma = ew.sub(virtual, prev)
        prev_i = ew.min(ew.convert_element_type(prev, dtypes.int64),
                        np.asarray(builtins.max(n - 1, 0), np.int64))
        next_i = ew.min(ew.add(prev_i, np.asarray(1, np.int64)), top)
        lo, hi = (layout.squeeze(ix.take_along_axis(s, layout.expand_dims(i, (ax,)), ax),
                                 (ax,)) for i in (prev_i, next_i))
        value = ew.add(lo, ew.mul(ew.sub(hi, lo), gamma))
        results.append(ew.select(ew.eq(count, np.asarray(0, np.int64)),
                                 P.cast(np.nan, _dt(value)), value))
    out_shape = tuple(aval_of(results[0]).shape)
    result = layout.reshape(layout.concatenate([layout.reshape(r, (1,) + out_shape)
                                                for r in results], 0), qa.shape + out_shape)
    if keepdims:
        result = _restore(result, shape, axis, True, lead=qa.shape)
    return P.scalar_result(P.asarray(result))


def _concrete_fractions(q, x, name, scale):
    """``q`` as a concrete array of fractions in [0, 1] in ``x``'s float dtype."""
    if P.is_tracer(q):
        raise ConcretizationError(f"q must be concrete for {name}", op=name)
    qa = np.asarray(np.true_divide(q, scale) if scale != 1 else q, dtype=_dt(x))
    if not ((qa >= 0) & (qa <= 1)).all():
        raise ValueError(f"{'Percentiles' if scale == 100 else 'Quantiles'} must be in the "
                         f"range [0, {scale}]")
    return qa


def _quantile(a, q, axis, out, method, keepdims, weights, name, scale):
    P.check_unsupported(name, out=(out, None), method=(method, "linear"),
                        weights=(weights, None))
    if P.is_tracer(q):
        raise ConcretizationError(f"q must be concrete for {name}", op=name)
    x = _arr(a)
    qa = np.true_divide(q, scale) if scale != 1 else q
    if isinstance(qa, (int, float)) and _dt(x).kind == "f":
        qa = np.asarray(qa, _dt(x))
    else:
        qa = np.asarray(qa)
    if qa.dtype not in dtypes.SUPPORTED:
        qa = qa.astype(dtypes.canonical(qa.dtype))
    if not ((qa >= 0) & (qa <= 1)).all():
        raise ValueError(f"{'Percentiles' if scale == 100 else 'Quantiles'} must be in the "
                         f"range [0, {scale}]")
    s, ax, shape = _sorted_along(x, axis, name)
    n = _shape(s)[ax]
    s = layout.transpose(s, (ax,) + tuple(i for i in range(len(_shape(s))) if i != ax))
    virtual = (n - 1) * qa
    prev = np.floor(virtual)
    above = virtual >= n - 1
    prev = np.where(above, -1, prev)
    nxt = np.where(above, -1, prev + 1)
    gamma = np.asarray(virtual - prev, dtype=virtual.dtype)
    prev_i = np.where(prev < 0, prev + n, prev).astype(np.int64)
    next_i = np.where(nxt < 0, nxt + n, nxt).astype(np.int64)
    from .indexing import take
    lo, hi = take(s, prev_i, axis=0), take(s, next_i, axis=0)
    rest = len(_shape(s)) - 1
    g = gamma.reshape(gamma.shape + (1,) * rest)
    from .math import add, greater_equal, multiply, subtract, where
    diff = subtract(hi, lo)
    lerp = add(lo, multiply(diff, g))
    lerp_hi = subtract(hi, multiply(diff, subtract(1, g)))
    result = P.asarray(where(greater_equal(g, 0.5), lerp_hi, lerp))
    if dtypes.is_inexact(_dt(s)):
        last = layout.squeeze(layout.slice_in_dim(s, n - 1, n, 1, 0), (0,))
        result = where(_isnan(last), P.cast(last, _dt(result)), result)
    if keepdims:
        result = _restore(result, shape, axis, True, lead=qa.shape)
    return P.scalar_result(P.asarray(result))
