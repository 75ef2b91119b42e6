"""Reductions, scans and sorts, as ``jax.lax``'s: ``reduce`` with any computation, the
named reductions, ``argmax``/``argmin``, the cumulative ops, ``sort``, ``top_k``.

A ``reduce`` whose computation is a monoid of ``ops/reductions.py`` (``add`` from 0,
``mul`` from 1, ``max``/``min`` from their identities, ``and``/``or`` of bools) is that
primitive; any other computation, pytrees of operands included, is a tree of its own
applications over pairs of neighbouring slices (``log2 n`` vectorized steps, each
combining elements in their order), so it differentiates, batches and compiles as the
computation does.

>>> from tf_numba import lax
>>> lax.reduce(np.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))
array([ 3., 12.])
"""
import functools
import operator

import numpy as np

from ..core import dtypes, pytree
from ..core.linear import aval_of
from ..core.shapes import normalize_axis
from ..core.trace import user_source
from ..errors import DTypeError, ShapeError, TfNumbaError
from ..ops import elementwise as ew
from ..ops import indexing, layout
from ..ops import reductions as red
from ..ops import sorting
from . import elementwise as lax_ew
from ._operands import flat, leaf

__all__ = ["reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and",
           "reduce_or", "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax",
           "cummin", "cumlogsumexp", "sort", "sort_key_val", "top_k", "approx_max_k",
           "approx_min_k"]


def lowest(dt):
    """The identity of ``max`` over ``dt``."""
    if dtypes.is_bool(dt):
        return False
    return -np.inf if dtypes.is_inexact(dt) else np.iinfo(dt).min


def highest(dt):
    """The identity of ``min`` over ``dt``."""
    if dtypes.is_bool(dt):
        return True
    return np.inf if dtypes.is_inexact(dt) else np.iinfo(dt).max


# name: (the binary op, its reduction over axes, its identity for a dtype)
MONOIDS = {"add": (ew.add, red.reduce_sum, lambda dt: 0),
           "mul": (ew.mul, red.reduce_prod, lambda dt: 1),
           "max": (ew.max, red.reduce_max, lowest),
           "min": (ew.min, red.reduce_min, highest)}


@functools.cache
def _monoid_names():
    import tf_numba.numpy as tnp
    return {lax_ew.add: "add", ew.add: "add", tnp.add: "add", "add": "add", "sum": "add",
            lax_ew.mul: "mul", ew.mul: "mul", tnp.multiply: "mul", "mul": "mul", "prod": "mul",
            lax_ew.max: "max", ew.max: "max", tnp.maximum: "max", "max": "max",
            lax_ew.min: "min", ew.min: "min", tnp.minimum: "min", "min": "min"}


def monoid(computation):
    """``MONOIDS``' entry for ``computation`` (``lax.add``, ``tnp.add``, ``'add'``, ...),
    or None."""
    try:
        name = _monoid_names().get(computation)
    except TypeError:           # an unhashable computation
        return None
    return MONOIDS[name] if name is not None else None


def is_identity(init, identity):
    """Whether ``init`` is the concrete scalar ``identity``."""
    if hasattr(init, "aval") or np.ndim(init):
        return False
    return bool(np.asarray(init) == identity)


def tree_reduce(combine, leaves, axis):
    """``combine`` (lists of leaves to a list of leaves) folded over ``axis`` of every leaf
    (one length ``n >= 1``), pairing neighbours: ``ceil(log2 n)`` applications on
    slices, each pairing element ``2i`` with ``2i + 1`` so the elements combine in
    order. The reduced axis is dropped."""
    n = aval_of(leaves[0]).shape[axis]
    while n > 1:
        half = n // 2
        even = [layout.slice_in_dim(x, 0, 2 * half, 2, axis) for x in leaves]
        odd = [layout.slice_in_dim(x, 1, 2 * half, 2, axis) for x in leaves]
        pairs = combine(even, odd)
        if n % 2:
            pairs = [layout.concatenate([p, layout.slice_in_dim(x, n - 1, n, 1, axis)], axis)
                     for p, x in zip(pairs, leaves)]
        leaves, n = pairs, half + n % 2
    return [layout.squeeze(x, (axis,)) for x in leaves]


def combiner(computation, tree, op):
    """``computation`` of two pytrees (of ``tree``) as a function of two lists of leaves."""
    def combine(a, b):
        out = computation(pytree.unflatten(tree, a), pytree.unflatten(tree, b))
        leaves, out_tree = pytree.flatten(out)
        if out_tree != tree:
            raise TfNumbaError(f"the computation must return the operands' structure {tree}, "
                               f"got {out_tree}", op=op, source=user_source())
        return [leaf(x) for x in leaves]
    return combine


def reduce(operands, init_values, computation, dimensions, out_sharding=None):  # noqa: A001
    """``computation`` folded over ``dimensions`` of ``operands`` (an array or a pytree of
    arrays of one shape), starting from ``init_values`` (scalars, the same pytree), as
    ``jax.lax.reduce``. ``computation`` takes two such pytrees of scalars and must be
    associative; ``init_values`` is combined in once.

    >>> reduce((np.array([3.0, 1.0, 2.0]), np.arange(3)), (np.inf, 0),
    ...        lambda a, b: (lax.min(a[0], b[0]), lax.select(a[0] <= b[0], a[1], b[1])), (0,))
    (array(1.), array(1))
    """
    xs, tree = flat(operands)
    inits, init_tree = pytree.flatten(init_values)
    if tree != init_tree:
        raise TfNumbaError(f"init_values must have the operands' structure {tree}, got "
                           f"{init_tree}", op="reduce", source=user_source())
    shape = tuple(aval_of(xs[0]).shape)
    if any(tuple(aval_of(x).shape) != shape for x in xs):
        raise ShapeError("operands need one shape, got "
                         + ", ".join(str(aval_of(x).shape) for x in xs), op="reduce",
                         source=user_source())
    inits = [np.asarray(i, aval_of(x).dtype) if isinstance(i, dtypes.WEAK_SCALAR_TYPES)
             else leaf(i) for i, x in zip(inits, xs)]
    dims = tuple(sorted(normalize_axis(d, len(shape), "reduce") for d in dimensions))
    found = monoid(computation) if len(xs) == 1 else None
    if found is not None:
        binary, reduction, identity = found
        dt = aval_of(xs[0]).dtype
        out = reduction(xs[0], dims) if dims else xs[0]
        if not is_identity(inits[0], identity(dt)):
            out = binary(out, inits[0])
        return pytree.unflatten(tree, [out])
    combine = combiner(computation, tree, "reduce")
    kept = [d for d in range(len(shape)) if d not in dims]
    out_shape = tuple(shape[d] for d in kept)
    count = int(np.prod([shape[d] for d in dims]))
    if count == 0:
        outs = [layout.broadcast_in_dim(i, out_shape, ()) for i in inits]
        return pytree.unflatten(tree, outs)
    if dims:
        # the reduced dims last, as one
        perm = tuple(kept) + dims
        xs = [layout.reshape(layout.transpose(x, perm) if perm != tuple(range(len(shape)))
                             else x, out_shape + (count,)) for x in xs]
        xs = tree_reduce(combine, xs, len(out_shape))
    outs = combine([layout.broadcast_in_dim(i, out_shape, ()) for i in inits], xs)
    return pytree.unflatten(tree, outs)


def reduce_sum(operand, axes, *, out_sharding=None):
    """The sum over ``axes`` (``jax.lax.reduce_sum``)."""
    return red.reduce_sum(leaf(operand), tuple(axes))


def reduce_prod(operand, axes):
    """The product over ``axes`` (``jax.lax.reduce_prod``)."""
    return red.reduce_prod(leaf(operand), tuple(axes))


def reduce_max(operand, axes):
    """The maximum over ``axes`` (``jax.lax.reduce_max``; NaN if any element is)."""
    return red.reduce_max(leaf(operand), tuple(axes))


def reduce_min(operand, axes):
    """The minimum over ``axes`` (``jax.lax.reduce_min``; NaN if any element is)."""
    return red.reduce_min(leaf(operand), tuple(axes))


def _bitwise_reduce(x, axes, prim_reduce, binary, identity):
    x = leaf(x)
    dt = aval_of(x).dtype
    if dtypes.is_bool(dt) and prim_reduce is not None:
        return prim_reduce(x, tuple(axes))
    if not (dtypes.is_bool(dt) or dtypes.is_integer(dt)):
        raise DTypeError(f"needs a bool or integer operand, got {dt.name}",
                         source=user_source())
    return reduce(x, np.asarray(identity, dt), binary, axes)


def reduce_and(operand, axes):
    """``&`` over ``axes``: all of them for bools, the bitwise and of integers
    (``jax.lax.reduce_and``)."""
    return _bitwise_reduce(operand, axes, red.reduce_and, lax_ew.bitwise_and, -1)


def reduce_or(operand, axes):
    """``|`` over ``axes``: any of them for bools, the bitwise or of integers
    (``jax.lax.reduce_or``)."""
    return _bitwise_reduce(operand, axes, red.reduce_or, lax_ew.bitwise_or, 0)


def reduce_xor(operand, axes):
    """``^`` over ``axes``: the parity of bools, the bitwise xor of integers
    (``jax.lax.reduce_xor``)."""
    return _bitwise_reduce(operand, axes, None, lax_ew.bitwise_xor, 0)


def argmax(operand, axis, index_dtype):
    """The index of the largest element along ``axis`` (the first of ties; a NaN is the
    largest), as ``index_dtype`` (``jax.lax.argmax``)."""
    return red.argmax(leaf(operand), axis, index_dtype)


def argmin(operand, axis, index_dtype):
    """The index of the smallest element along ``axis`` (the first of ties; a NaN is the
    smallest), as ``index_dtype`` (``jax.lax.argmin``)."""
    return red.argmin(leaf(operand), axis, index_dtype)


def cumsum(operand, axis=0, reverse=False):
    """The inclusive running sum along ``axis``, from the end if ``reverse``
    (``jax.lax.cumsum``)."""
    return red.cumsum(leaf(operand), axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    """The inclusive running product along ``axis`` (``jax.lax.cumprod``)."""
    return red.cumprod(leaf(operand), axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """The inclusive running maximum along ``axis`` (``jax.lax.cummax``)."""
    return red.cummax(leaf(operand), axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """The inclusive running minimum along ``axis`` (``jax.lax.cummin``)."""
    return red.cummin(leaf(operand), axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """The inclusive running ``log(sum(exp(x)))`` along ``axis``, without overflow
    (``jax.lax.cumlogsumexp``): an ``associative_scan`` of ``logaddexp``.

    >>> cumlogsumexp(np.array([0.0, 0.0]))
    array([0.        , 0.69314718])
    """
    import tf_numba.numpy as tnp
    from .control import associative_scan
    x = leaf(operand)
    axis = normalize_axis(axis, aval_of(x).ndim, "cumlogsumexp")
    if not dtypes.is_inexact(aval_of(x).dtype):
        raise DTypeError(f"needs a float operand, got {aval_of(x).dtype.name}",
                         op="cumlogsumexp", source=user_source())
    return associative_scan(tnp.logaddexp, x, reverse=reverse, axis=axis)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``operand`` sorted along ``dimension``, or, for a sequence of arrays, all of them
    ordered by the first ``num_keys`` (a tuple); stable, NaNs last (``jax.lax.sort``).

    >>> sort((np.array([2, 1, 2]), np.array([5.0, 6.0, 4.0])), num_keys=2)
    (array([1, 2, 2]), array([6., 4., 5.]))
    """
    if isinstance(operand, (tuple, list)):
        return tuple(sorting.sort([leaf(x) for x in operand], dimension, num_keys))
    return sorting.sort([leaf(operand)], dimension)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """``(keys, values)`` both ordered by ``keys`` along ``dimension``
    (``jax.lax.sort_key_val``)."""
    return tuple(sorting.sort([leaf(keys), leaf(values)], dimension))


def _descending_key(x):
    """Keys whose ascending order is ``x``'s descending one, a NaN first (as XLA's TopK):
    ``[not isnan(x), -x]`` for floats, ``[~x]`` for integers and bools."""
    dt = aval_of(x).dtype
    if dtypes.is_inexact(dt):
        return [ew.eq(x, x), ew.neg(x)]
    return [ew.not_(x)]


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest elements along ``axis`` (the last by default), largest first, and
    their indices as int32; of equal elements the first comes first, a NaN is the
    largest (``jax.lax.top_k``).

    >>> top_k(np.array([9.0, 3.0, 6.0, 4.0, 10.0]), 3)
    (array([10.,  9.,  6.]), array([4, 0, 2], dtype=int32))
    """
    x = leaf(operand)
    shape = aval_of(x).shape
    axis = normalize_axis(axis, len(shape), "top_k")
    k = operator.index(k)
    if not 0 <= k <= shape[axis]:
        raise ShapeError(f"k = {k} must be between 0 and the size {shape[axis]} of axis "
                         f"{axis}", op="top_k", source=user_source())
    keys = _descending_key(x)
    order = layout.iota(dtypes.int32, shape, axis)
    *_, values, indices = sorting.sort(keys + [x, order], axis, len(keys))
    return (layout.slice_in_dim(values, 0, k, 1, axis),
            layout.slice_in_dim(indices, 0, k, 1, axis))


def _approx_k(operand, k, reduction_dimension, largest):
    x = leaf(operand)
    if largest:
        return top_k(x, k, axis=reduction_dimension)
    flipped = ew.neg(x) if dtypes.is_inexact(aval_of(x).dtype) else ew.not_(x)
    values, indices = top_k(flipped, k, axis=reduction_dimension)
    dim = normalize_axis(reduction_dimension, aval_of(x).ndim, "approx_min_k")
    return indexing.take_along_axis(x, ew.convert_element_type(indices, dtypes.int64), dim), \
        indices


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest elements along ``reduction_dimension`` and their indices
    (``jax.lax.approx_max_k``); exact here, as ``top_k`` (a CPU has no approximate one)."""
    return _approx_k(operand, k, reduction_dimension, largest=True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest elements along ``reduction_dimension`` and their indices
    (``jax.lax.approx_min_k``); exact here."""
    return _approx_k(operand, k, reduction_dimension, largest=False)


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
