"""Reductions and scans: reduce_sum/prod/max/min/and/or, argmax/argmin, cumulative ops.

The derivative rules avoid dividing by the input, so they are exact where it has zeros
(products) and are themselves differentiable: ``reduce_prod`` uses exclusive cumulative
products, ``cumprod`` a first-order ``linear_recurrence`` primitive.
"""
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import Zero, aval_of, deflinear, defzero, has_tangent, is_undefined
from ..core.primitive import Primitive, register
from ..core.shapes import normalize_axes, normalize_axis, same_shape
from ..errors import DTypeError, ShapeError
from ..kernel_vocab.rules import Reduction
from ..kernel_vocab.scalar_exprs import literal
from ..transforms import batching as B
from . import elementwise as ew
from . import indexing, layout
from .layout import located

PRIMS = {}

ANY, NUMERIC, BOOL = "any", "numeric", "bool"
_ACCEPTS = {ANY: lambda dt: True, NUMERIC: lambda dt: not dtypes.is_bool(dt),
            BOOL: dtypes.is_bool}
_ACCEPT_TEXT = {ANY: "any dtype", NUMERIC: "a numeric dtype (sum bools as integers)",
                BOOL: "a bool operand"}


def _check_dtype(name, accepts, dt):
    if not _ACCEPTS[accepts](dt):
        raise DTypeError(f"needs {_ACCEPT_TEXT[accepts]}, got {dt.name}", op=name)


def _kept(rank, axes):
    return tuple(i for i in range(rank) if i not in axes)


# ---------------------------------------------------------------- reduce_*

def _reduce_eval(name, accepts, needs_elements):
    def abstract_eval(x, *, axes):
        _check_dtype(name, accepts, x.dtype)
        if any(not 0 <= a < x.ndim for a in axes) or list(axes) != sorted(set(axes)):
            raise ShapeError(f"axes {axes} must be sorted, distinct axes of an operand of rank "
                             f"{x.ndim}", op=name)
        if needs_elements and any(x.shape[a] == 0 for a in axes):
            raise ShapeError(f"cannot reduce the zero-size axes {axes} of {x.shape}: "
                             f"{name} has no identity (as in NumPy)", op=name)
        return ShapedArray(tuple(x.shape[i] for i in _kept(x.ndim, axes)), x.dtype)
    return abstract_eval


def _reducer(name, impl, accepts, needs_elements=False):
    prim = Primitive(name, _reduce_eval(name, accepts, needs_elements),
                     lambda x, *, axes: np.asarray(impl(np.asarray(x), axes)))
    PRIMS[name] = prim

    def op(x, axes=None):
        rank = len(aval_of(x).shape)
        axes = normalize_axes(axes, rank, name)
        if not axes:
            return x
        return prim.bind(x, axes=axes)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{name}`` over ``axes`` (an int, a sequence, or None for all); the "
                  "reduced axes are dropped. Empty ``axes`` returns ``x``.")
    return prim, located(op)


# NumPy reduces a short last axis one row at a time: ~4 us for a 128 x 5 sum, ~10 us for
# its max, so a softmax's every reduction. Column by column it is n - 1 vector operations
# over all rows, adding in the same order as NumPy does below 8 elements (in sequence from
# the first), so the same bits: for float32, float64 and integers (NumPy's float16 and
# complex reductions accumulate otherwise).
LONGEST_SEQUENTIAL_AXIS = 7
FEWEST_ROWS_BY_COLUMNS = 32
_BY_COLUMNS = frozenset(map(np.dtype, (np.float32, np.float64, np.bool_, np.int8, np.int16,
                                       np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                       np.uint64)))


def _reduce_with(ufunc, cast=False):
    """The interpreter's reduce by ``ufunc`` over ``axes``: the ufunc's own reduce, not
    np.sum and friends (the same reduction without their Python wrapper, ~1.5 us of a 3 us
    sum of a short vector), or a short last axis column by column. ``cast``: in the
    operand's own dtype (NumPy sums small integers in a wider one)."""
    def reduce(x, axes):
        n = x.shape[-1] if x.ndim > 1 else 0
        if (2 <= n <= LONGEST_SEQUENTIAL_AXIS and axes == (x.ndim - 1,)
                and x.size >= FEWEST_ROWS_BY_COLUMNS * n and x.dtype in _BY_COLUMNS):
            out = ufunc(x[..., 0], x[..., 1])
            for j in range(2, n):
                ufunc(out, x[..., j], out=out)
            return out
        return ufunc.reduce(x, axis=axes, dtype=x.dtype) if cast else ufunc.reduce(x, axis=axes)
    return reduce


reduce_sum_p, reduce_sum = _reducer("reduce_sum", _reduce_with(np.add, cast=True), NUMERIC)
reduce_prod_p, reduce_prod = _reducer(
    "reduce_prod", _reduce_with(np.multiply, cast=True), NUMERIC)
reduce_max_p, reduce_max = _reducer(
    "reduce_max", _reduce_with(np.maximum), ANY, needs_elements=True)
reduce_min_p, reduce_min = _reducer(
    "reduce_min", _reduce_with(np.minimum), ANY, needs_elements=True)
reduce_and_p, reduce_and = _reducer(
    "reduce_and", lambda x, axes: np.logical_and.reduce(x, axis=axes), BOOL)
reduce_or_p, reduce_or = _reducer(
    "reduce_or", lambda x, axes: np.logical_or.reduce(x, axis=axes), BOOL)


# ---------------------------------------------------------------- in kernels: accumulators

def _lowest(dt):
    if dt.kind == "f":
        return literal(-np.inf, dt)
    return "False" if dtypes.is_bool(dt) else literal(np.iinfo(dt).min, dt)


def _highest(dt):
    if dt.kind == "f":
        return literal(np.inf, dt)
    return "True" if dtypes.is_bool(dt) else literal(np.iinfo(dt).max, dt)


# max/min as a compare-and-select that keeps a NaN once seen (np.maximum's semantics):
# numba's np.maximum on scalars costs ~6x more per element in a reduction loop
for _prim, _lowering in (
        (reduce_sum_p, Reduction(lambda dt: literal(0, dt), "{acc} + {x}", row_helper="sum")),
        (reduce_prod_p, Reduction(lambda dt: literal(1, dt), "{acc} * {x}")),
        (reduce_max_p, Reduction(_lowest, "{x} if ({x} > {acc} or {x} != {x}) else {acc}",
                                 row_helper="extreme", extreme="max", complex=False)),
        (reduce_min_p, Reduction(_highest, "{x} if ({x} < {acc} or {x} != {x}) else {acc}",
                                 row_helper="extreme", extreme="min", complex=False)),
        (reduce_and_p, Reduction(lambda dt: "True", "({acc} and {x})")),
        (reduce_or_p, Reduction(lambda dt: "False", "({acc} or {x})"))):
    register("lower", _prim, _lowering)


def _reduce_sum_transpose(ct, x, *, axes):
    shape = x.aval.shape
    return [layout.broadcast_in_dim(ct, shape, _kept(len(shape), axes))]


deflinear(reduce_sum_p, _reduce_sum_transpose)
defzero(reduce_and_p)
defzero(reduce_or_p)


def _chooser_jvp(prim):
    """max/min: the tangent at the locations equal to the result, averaged over ties (JAX)."""
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if type(t) is Zero or not has_tangent(aval_of(ans)):
            return ans, Zero(aval_of(ans))
        shape = aval_of(x).shape
        at_result = ew.eq(x, layout.broadcast_in_dim(ans, shape, _kept(len(shape), axes)))
        mask = ew.convert_element_type(at_result, aval_of(t).dtype)
        total = reduce_sum(ew.mul(t, mask), axes)
        count = reduce_sum(mask, axes)
        return ans, ew.div(total, count)
    register("jvp", prim, jvp)


_chooser_jvp(reduce_max_p)
_chooser_jvp(reduce_min_p)


def _axes_last(x, axes):
    """``x`` with ``axes`` moved last and flattened into one axis of length prod(sizes)."""
    shape = aval_of(x).shape
    kept = _kept(len(shape), axes)
    moved = layout.transpose(x, kept + tuple(axes))
    if len(axes) == 1:
        return moved
    return layout.reshape(moved, tuple(shape[i] for i in kept)
                          + (math.prod(shape[a] for a in axes),))


def _reduce_prod_jvp(primals, tangents, *, axes):
    # d prod(x) = sum_i t_i * prod_{j<i} x_j * prod_{j>i} x_j: no division, exact at zeros.
    (x,), (t,) = primals, tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    shape = aval_of(x).shape
    if type(t) is Zero or not has_tangent(aval_of(ans)) or any(shape[a] == 0 for a in axes):
        return ans, Zero(aval_of(ans))
    y, ty = _axes_last(x, axes), _axes_last(t, axes)
    last = len(aval_of(y).shape) - 1
    left = exclusive_cumprod(y, last, reverse=False)
    right = exclusive_cumprod(y, last, reverse=True)
    return ans, reduce_sum(ew.mul(ty, ew.mul(left, right)), (last,))


register("jvp", reduce_prod_p, _reduce_prod_jvp)


# ---------------------------------------------------------------- argmax / argmin

def _arg_eval(name):
    def abstract_eval(x, *, axis, index_dtype):
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"axis {axis} out of range for an operand of rank {x.ndim}", op=name)
        if x.shape[axis] == 0:
            raise ShapeError(f"the zero-size axis {axis} of {x.shape} has no "
                             "answer (as in NumPy)", op=name)
        if not dtypes.is_integer(index_dtype):
            raise DTypeError(f"index_dtype must be int32 or int64, got {index_dtype.name}",
                             op=name)
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), index_dtype)
    return abstract_eval


def _arg_op(name, np_fn):
    prim = Primitive(name, _arg_eval(name), lambda x, *, axis, index_dtype:
                     np.asarray(np_fn(x, axis=axis)).astype(index_dtype))
    PRIMS[name] = prim
    defzero(prim)

    def op(x, axis, index_dtype=dtypes.int64):
        axis = normalize_axis(operator.index(axis), len(aval_of(x).shape), name)
        return prim.bind(x, axis=axis, index_dtype=dtypes.canonical(index_dtype))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"Index of the {name[3:]} along ``axis`` (NumPy semantics: the first one "
                  "wins, and the first NaN wins over any number).")
    return prim, located(op)


argmax_p, argmax = _arg_op("argmax", np.argmax)
argmin_p, argmin = _arg_op("argmin", np.argmin)


# ---------------------------------------------------------------- cumulative ops

def _scan_eval(name, accepts):
    def abstract_eval(x, *, axis, reverse):
        _check_dtype(name, accepts, x.dtype)
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"axis {axis} out of range for an operand of rank {x.ndim}", op=name)
        return x
    return abstract_eval


def _scan_impl(np_fn):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return np.flip(np_fn(np.flip(x, axis), axis), axis)
        return np_fn(x, axis)
    return impl


def _scan(name, np_fn, accepts):
    prim = Primitive(name, _scan_eval(name, accepts), _scan_impl(np_fn))
    PRIMS[name] = prim

    def op(x, axis, reverse=False):
        axis = normalize_axis(operator.index(axis), len(aval_of(x).shape), name)
        return prim.bind(x, axis=axis, reverse=bool(reverse))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"Inclusive ``{name}`` along ``axis``; ``reverse=True`` scans from the "
                  "end (``out[i]`` combines ``x[i:]``).")
    return prim, located(op)


cumsum_p, cumsum = _scan("cumsum", lambda x, axis: np.cumsum(x, axis, dtype=x.dtype), NUMERIC)
cumprod_p, cumprod = _scan("cumprod", lambda x, axis: np.cumprod(x, axis, dtype=x.dtype),
                           NUMERIC)
cummax_p, cummax = _scan("cummax", np.maximum.accumulate, ANY)   # NaN propagates
cummin_p, cummin = _scan("cummin", np.minimum.accumulate, ANY)

deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def previous(x, axis, reverse, fill):
    """The scan's previous element at each position: ``x[i-1]`` (``x[i+1]`` when reversed),
    ``fill`` at the first position."""
    shape = aval_of(x).shape
    config = [(0, 0, 0)] * len(shape)
    config[axis] = (-1, 1, 0) if reverse else (1, -1, 0)
    return layout.pad(x, np.asarray(fill, aval_of(x).dtype), tuple(config))


def exclusive_cumprod(x, axis, reverse=False):
    """``out[i] = prod(x[:i])`` (``prod(x[i+1:])`` when reversed), by a cumprod of a shift."""
    return cumprod(previous(x, axis, reverse, 1), axis, reverse)


def _cumprod_jvp(primals, tangents, *, axis, reverse):
    # dy_i = sum_{j<=i} (prod_{k<j} x_k) t_j (prod_{j<k<=i} x_k): the recurrence
    # h_i = x_i h_{i-1} + t_i prod_{k<i} x_k, exact where x has zeros.
    (x,), (t,) = primals, tangents
    ans = cumprod_p.bind(x, axis=axis, reverse=reverse)
    if type(t) is Zero or not has_tangent(aval_of(ans)):
        return ans, Zero(aval_of(ans))
    scaled = ew.mul(t, exclusive_cumprod(x, axis, reverse))
    return ans, linear_recurrence(x, scaled, axis, reverse)


register("jvp", cumprod_p, _cumprod_jvp)


def _cum_extreme_jvp(prim):
    """cummax/cummin: the tangent where the running extreme was last attained."""
    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        if type(t) is Zero or not has_tangent(aval_of(ans)):
            return ans, Zero(aval_of(ans))
        shape = aval_of(x).shape
        position = layout.iota(dtypes.int64, shape, axis)
        attained = ew.eq(x, ans)  # never true past a NaN: fall back to an in-range position
        if reverse:
            where = cummin(ew.select(attained, position, shape[axis] - 1), axis, True)
        else:
            where = cummax(ew.select(attained, position, 0), axis)
        return ans, indexing.take_along_axis(t, where, axis)
    register("jvp", prim, jvp)


_cum_extreme_jvp(cummax_p)
_cum_extreme_jvp(cummin_p)


# ---------------------------------------------------------------- linear_recurrence

def _linear_recurrence_eval(a, b, *, axis, reverse):
    if a.dtype != b.dtype:
        raise DTypeError(f"coefficients and inputs need one dtype, got {a.dtype.name} and "
                         f"{b.dtype.name}", op="linear_recurrence")
    _check_dtype("linear_recurrence", NUMERIC, a.dtype)
    if not same_shape(a.shape, b.shape, "linear_recurrence"):
        raise ShapeError(f"coefficients {a.shape} and inputs {b.shape} need one shape",
                         op="linear_recurrence")
    if not 0 <= axis < a.ndim:
        raise ShapeError(f"axis {axis} out of range for operands of rank {a.ndim}",
                         op="linear_recurrence")
    return b


def _linear_recurrence_impl(a, b, *, axis, reverse):
    a = np.moveaxis(np.asarray(a), axis, 0)
    b = np.moveaxis(np.asarray(b), axis, 0)
    h = np.empty_like(b)
    state = np.zeros(b.shape[1:], b.dtype)
    for i in (range(len(b) - 1, -1, -1) if reverse else range(len(b))):
        state = a[i] * state + b[i]
        h[i] = state
    return np.moveaxis(h, 0, axis)


linear_recurrence_p = Primitive("linear_recurrence", _linear_recurrence_eval,
                                _linear_recurrence_impl)
PRIMS["linear_recurrence"] = linear_recurrence_p


@located
def linear_recurrence(a, b, axis, reverse=False):
    """``h_i = a_i * h_{i-1} + b_i`` along ``axis`` with ``h_{-1} = 0`` (from the end when
    ``reverse``). Linear in ``b``.

    >>> linear_recurrence(np.array([2., 2., 2.]), np.array([1., 1., 1.]), 0)
    array([1., 3., 7.])
    """
    axis = normalize_axis(operator.index(axis), len(aval_of(b).shape), "linear_recurrence")
    return linear_recurrence_p.bind(a, b, axis=axis, reverse=bool(reverse))


def _linear_recurrence_jvp(primals, tangents, *, axis, reverse):
    # dh_i = a_i dh_{i-1} + (da_i h_{i-1} + db_i): the same recurrence on a new input.
    (a, b), (ta, tb) = primals, tangents
    h = linear_recurrence_p.bind(a, b, axis=axis, reverse=reverse)
    if not has_tangent(aval_of(h)) or (type(ta) is Zero and type(tb) is Zero):
        return h, Zero(aval_of(h))
    drive = None if type(ta) is Zero else ew.mul(ta, previous(h, axis, reverse, 0))
    if type(tb) is not Zero:
        drive = tb if drive is None else ew.add(drive, tb)
    return h, linear_recurrence_p.bind(a, drive, axis=axis, reverse=reverse)


def _linear_recurrence_transpose(ct, a, b, *, axis, reverse):
    # h = L b with L_ij = prod_{j<k<=i} a_k, so L^T runs the other way with a shifted by one.
    if is_undefined(a):
        raise NotImplementedError("linear_recurrence is linear in its inputs b, not in a")
    shifted = previous(a, axis, not reverse, 0)
    return [None, linear_recurrence_p.bind(shifted, ct, axis=axis, reverse=not reverse)]


register("jvp", linear_recurrence_p, _linear_recurrence_jvp)
register("transpose", linear_recurrence_p, _linear_recurrence_transpose)


# ---------------------------------------------------------------- batching

def _reduce_batch(prim):
    def rule(args, dims, *, axes):
        (x,), (d,) = args, dims
        new_axes = tuple(a + (a >= d) for a in axes)
        return prim.bind(x, axes=new_axes), d - sum(a < d for a in axes)
    register("batch", prim, rule)


def _arg_batch(prim):
    def rule(args, dims, *, axis, index_dtype):
        (x,), (d,) = args, dims
        return (prim.bind(x, axis=axis + (axis >= d), index_dtype=index_dtype),
                d - (axis < d))
    register("batch", prim, rule)


def _cumulative_batch(prim):
    def rule(args, dims, *, axis, reverse):
        (x,), (d,) = args, dims
        return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d
    register("batch", prim, rule)


def _linear_recurrence_batch(args, dims, *, axis, reverse):
    size = B.axis_size_of(args, dims)
    d = B.common_dim(args, dims)
    a, b = (B.bdim_to(x, e, d, size) for x, e in zip(args, dims))
    return linear_recurrence_p.bind(a, b, axis=axis + (axis >= d), reverse=reverse), d


for _prim in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p,
              reduce_or_p):
    _reduce_batch(_prim)
_arg_batch(argmax_p)
_arg_batch(argmin_p)
for _prim in (cumsum_p, cumprod_p, cummax_p, cummin_p):
    _cumulative_batch(_prim)
register("batch", linear_recurrence_p, _linear_recurrence_batch)
