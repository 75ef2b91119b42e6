"""Layout primitives: move, copy and pad elements without arithmetic on them.

All of them but ``iota`` are linear, so their JVP is the primitive applied to the tangents
and their transposes are other layout ops (or ``reduce_sum``). Shapes and index parameters
are static Python ints; dims that are symbols pass through where no arithmetic is needed.
"""
import functools
import math
import operator

import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import Zero, aval_of, deflinear, defzero, instantiate, is_undefined
from ..core.primitive import Primitive, register
from ..core.shapes import Sym, at_least, same_dim
from ..core.trace import user_source
from ..errors import DTypeError, ShapeError, TfNumbaError
from ..kernel_vocab.rules import IndexMap
from ..kernel_vocab.scalar_exprs import typed
from ..transforms import batching

PRIMS = {}


def located(fn):
    """Give the errors an op function raises before binding (bad parameters) its name and
    the user's source line, as ``bind`` does for abstract-evaluation errors."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TfNumbaError as err:
            if err.source is None:
                err.locate(fn.__name__, user_source())
            raise
    return op


def _declare(name, abstract_eval, impl, **kwargs):
    prim = Primitive(name, abstract_eval, impl, **kwargs)
    PRIMS[name] = prim
    return prim


def _ints(values, what, op):
    """A tuple of Python ints from a sequence of int-likes (params must be plain ints)."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise ShapeError(f"{what} must be a sequence of ints, got {values!r}", op=op) from None


def _shape(values, op):
    """A shape parameter: ints (or symbols), each >= 0."""
    out = []
    for d in values:
        if not isinstance(d, Sym):
            d = operator.index(d)
            if d < 0:
                raise ShapeError(f"negative dimension {d} in shape {tuple(values)}", op=op)
        out.append(d)
    return tuple(out)


def _concrete(dim, op, what):
    if isinstance(dim, Sym):
        raise ShapeError(f"{what} needs a concrete length, got the symbol {dim}", op=op)
    return dim


def _as_array(x):
    """Python scalars become 0-d arrays of their default dtype; arrays and tracers pass."""
    if isinstance(x, dtypes.WEAK_SCALAR_TYPES):
        return np.asarray(x, dtypes.of_scalar(x))
    return x


def _check_axes(axes, rank, op, what="dimensions"):
    for a in axes:
        if not 0 <= a < rank:
            raise ShapeError(f"{what} {axes} out of range for an operand of rank {rank}", op=op)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"repeated axis in {what} {axes}", op=op)


# ---------------------------------------------------------------- broadcast_in_dim

def _broadcast_in_dim_eval(x, *, shape, broadcast_dimensions):
    bd = broadcast_dimensions
    if len(bd) != x.ndim:
        raise ShapeError(f"broadcast_dimensions {bd} must name one output dim per operand dim "
                         f"of {x.shape}", op="broadcast_in_dim")
    if any(not 0 <= d < len(shape) for d in bd) or any(a >= b for a, b in zip(bd, bd[1:])):
        raise ShapeError(f"broadcast_dimensions {bd} must be strictly increasing dims of the "
                         f"output shape {shape}", op="broadcast_in_dim")
    for i, d in enumerate(bd):
        if x.shape[i] != 1 and not same_dim(x.shape[i], shape[d], "broadcast_in_dim"):
            raise ShapeError(f"operand shape {x.shape} cannot be broadcast to {shape}: operand "
                             f"dim {i} has size {x.shape[i]} but output dim {d} has size "
                             f"{shape[d]} (only size-1 dims broadcast)", op="broadcast_in_dim")
    return ShapedArray(shape, x.dtype)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    out = np.empty(shape, x.dtype)
    out[...] = x.reshape(expanded)      # (np.broadcast_to and a copy: 3.5x the time)
    return out


broadcast_in_dim_p = _declare("broadcast_in_dim", _broadcast_in_dim_eval, _broadcast_in_dim_impl)


def _broadcast_in_dim_read(name, eqn, idx):
    """In a loop nest: the operand at the loop's position, at 0 along its length-1 axes."""
    x = eqn.invars[0]
    if not x.aval.shape:
        return name(x)
    out_shape = eqn.outvars[0].aval.shape
    parts = ["0" if x.aval.shape[k] == 1 and out_shape[d] != 1 else idx[d]
             for k, d in enumerate(eqn.params["broadcast_dimensions"])]
    return f"{name(x)}[{', '.join(parts)}]"


register("lower", broadcast_in_dim_p, IndexMap(_broadcast_in_dim_read))


@located
def broadcast_in_dim(x, shape, broadcast_dimensions):
    """Broadcast ``x`` to ``shape``: operand dim ``i`` becomes output dim
    ``broadcast_dimensions[i]`` (strictly increasing); operand dims are 1 or equal.

    >>> broadcast_in_dim(np.arange(3.0), (2, 3), (1,)).shape
    (2, 3)
    """
    x = _as_array(x)
    shape = _shape(shape, "broadcast_in_dim")
    bd = _ints(broadcast_dimensions, "broadcast_dimensions", "broadcast_in_dim")
    if aval_of(x).shape == shape and bd == tuple(range(len(shape))):
        return x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=bd)


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    in_shape = x.aval.shape
    kept = set(broadcast_dimensions)
    summed = [d for d in range(len(shape)) if d not in kept]
    summed += [d for i, d in enumerate(broadcast_dimensions)
               if in_shape[i] == 1 and shape[d] != 1]
    from .reductions import reduce_sum
    ct = reduce_sum(ct, tuple(sorted(summed)))
    return [reshape(ct, in_shape)]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


# ---------------------------------------------------------------- reshape

def _same_size(a, b):
    """Whether two shapes hold the same number of elements (symbolic dims multiply out)."""
    return math.prod(a) == math.prod(b)


def _reshape_eval(x, *, new_sizes):
    if not _same_size(x.shape, new_sizes):
        raise ShapeError(f"cannot reshape an array of shape {x.shape} into shape {new_sizes} "
                         "(the number of elements differs)", op="reshape")
    return ShapedArray(new_sizes, x.dtype)


def _reshape_impl(x, *, new_sizes):
    # the method: np.reshape's wrapper costs ten times the reshape of a small array
    return x.reshape(new_sizes) if type(x) is np.ndarray else np.reshape(x, new_sizes)


reshape_p = _declare("reshape", _reshape_eval, _reshape_impl)


@located
def reshape(x, new_sizes):
    """Row-major reshape, as ``np.reshape``; one size may be -1. No-op if the shape is equal.

    >>> reshape(np.arange(6), (2, -1)).shape
    (2, 3)
    """
    x = _as_array(x)
    old = aval_of(x).shape
    sizes = [d if isinstance(d, Sym) else operator.index(d) for d in new_sizes]
    if sizes.count(-1) > 1:
        raise ShapeError(f"only one size may be -1, got {tuple(sizes)}", op="reshape")
    if -1 in sizes:
        rest = math.prod(d for d in sizes if d != -1)
        total = math.prod(old)
        if isinstance(rest, Sym) or rest == 0:
            raise ShapeError(f"cannot infer -1 in shape {tuple(sizes)} from {old}: the other "
                             "sizes must be nonzero ints", op="reshape")
        if type(total) is int and total % rest:
            raise ShapeError(f"cannot reshape an array of shape {old} into shape "
                             f"{tuple(sizes)}", op="reshape")
        sizes[sizes.index(-1)] = total // rest
    sizes = _shape(sizes, "reshape")
    if sizes == old:
        return x
    return reshape_p.bind(x, new_sizes=sizes)


deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])


@located
def squeeze(x, dimensions):
    """Remove the size-1 axes ``dimensions`` (negative axes count from the end)."""
    shape = aval_of(x).shape
    dims = {d % len(shape) if -len(shape) <= d < len(shape) else d
            for d in _ints(dimensions, "dimensions", "squeeze")}
    for d in dims:
        if not 0 <= d < len(shape) or shape[d] != 1:
            raise ShapeError(f"cannot squeeze axis {d} of shape {shape}: it must exist and "
                             "have size 1", op="squeeze")
    return reshape(x, tuple(s for i, s in enumerate(shape) if i not in dims))


@located
def expand_dims(x, dimensions):
    """Insert size-1 axes so that they sit at ``dimensions`` of the result (as np.expand_dims)."""
    shape = list(aval_of(x).shape)
    rank = len(shape) + len(dimensions)
    dims = sorted(d % rank if -rank <= d < rank else d
                  for d in _ints(dimensions, "dimensions", "expand_dims"))
    _check_axes(tuple(dims), rank, "expand_dims")
    for d in dims:
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


# ---------------------------------------------------------------- transpose

def _transpose_eval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"permutation {permutation} is not a permutation of the "
                         f"{x.ndim} axes of {x.shape}", op="transpose")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)


transpose_p = _declare("transpose", _transpose_eval,
                       lambda x, *, permutation: np.asarray(x).transpose(permutation))


@located
def transpose(x, permutation):
    """Permute axes: output axis ``i`` is input axis ``permutation[i]`` (as np.transpose)."""
    x = _as_array(x)
    perm = _ints(permutation, "permutation", "transpose")
    if perm == tuple(range(len(perm))) and len(perm) == len(aval_of(x).shape):
        return x
    return transpose_p.bind(x, permutation=perm)


deflinear(transpose_p, lambda ct, x, *, permutation:
          [transpose(ct, tuple(np.argsort(permutation).tolist()))])


# ---------------------------------------------------------------- rev

def _rev_eval(x, *, dimensions):
    _check_axes(dimensions, x.ndim, "rev")
    return x


rev_p = _declare("rev", _rev_eval, lambda x, *, dimensions: np.flip(x, dimensions))


@located
def rev(x, dimensions):
    """Reverse the order of elements along ``dimensions`` (as np.flip)."""
    x = _as_array(x)
    dims = _ints(dimensions, "dimensions", "rev")
    if not dims:
        return x
    return rev_p.bind(x, dimensions=dims)


deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


# ---------------------------------------------------------------- slice

def _slice_eval(x, *, start_indices, limit_indices, strides):
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"start {start_indices}, limit {limit_indices} and strides {strides} "
                         f"need one entry per dim of {x.shape}", op="slice")
    out = []
    for axis, (s, l, st, n) in enumerate(zip(start_indices, limit_indices, strides, x.shape)):
        if s == 0 and isinstance(l, Sym) and l is n and st == 1:
            out.append(n)
            continue
        if any(isinstance(v, Sym) for v in (s, l, n)):
            length = l - s
            if st != 1 and isinstance(length, Sym):
                raise ShapeError(f"[{s}:{l}:{st}] of axis {axis}: a stride other than 1 "
                                 "needs a concrete length", op="slice")
            if not (at_least(s, 0, "slice") and at_least(l, s, "slice")
                    and at_least(n, l, "slice")):
                raise ShapeError(f"[{s}:{l}:{st}] of axis {axis} (size {n}) is invalid",
                                 op="slice")
            out.append(length if st == 1 else -(-length // st))
            continue
        if not 0 <= s <= l <= n or st < 1:
            raise ShapeError(f"[{s}:{l}:{st}] of axis {axis} (size {n}) is invalid: "
                             "need 0 <= start <= limit <= size and stride >= 1; "
                             f"operand shape {x.shape}", op="slice")
        out.append(-(-(l - s) // st))
    return ShapedArray(tuple(out), x.dtype)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    return np.asarray(x)[tuple(map(slice, start_indices, limit_indices, strides))]


slice_p = _declare("slice", _slice_eval, _slice_impl)


@located
def slice_(x, start_indices, limit_indices, strides=None):
    """``x[start:limit:stride]`` on every axis, with static, positive strides.

    >>> slice_(np.arange(10), (1,), (8,), (3,))
    array([1, 4, 7])
    """
    x = _as_array(x)
    start = tuple(d if isinstance(d, Sym) else operator.index(d) for d in start_indices)
    limit = tuple(d if isinstance(d, Sym) else operator.index(d) for d in limit_indices)
    strides = (1,) * len(start) if strides is None else _ints(strides, "strides", "slice")
    shape = aval_of(x).shape
    if all(s == 0 for s in start) and limit == shape and all(st == 1 for st in strides):
        return x
    return slice_p.bind(x, start_indices=start, limit_indices=limit, strides=strides)


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    config = []
    for s, st, n, m in zip(start_indices, strides, x.aval.shape, aval_of(ct).shape):
        used = m + max(m - 1, 0) * (st - 1)
        config.append((s, n - s - used, st - 1))
    zero = np.zeros((), aval_of(ct).dtype)
    return [pad(ct, zero, tuple(config))]


deflinear(slice_p, _slice_transpose)


@located
def slice_in_dim(x, start, limit, stride=1, axis=0):
    """``slice_`` along one axis only."""
    shape = aval_of(x).shape
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice_(x, starts, limits, strides)


def diagonal(x, offset, axis1, axis2):
    """The ``offset`` diagonal of ``x`` over its distinct axes ``axis1`` and ``axis2``
    (non-negative), appended as the last axis: the two axes moved last and flattened into
    one, then a strided slice of it."""
    rank = len(aval_of(x).shape)
    x = transpose(x, tuple(a for a in range(rank) if a not in (axis1, axis2)) + (axis1, axis2))
    s = aval_of(x).shape
    n, m = s[-2], s[-1]
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    flat = reshape(x, s[:-2] + (n * m,))
    start = offset if offset >= 0 else -offset * m
    if length == 0:
        return slice_in_dim(flat, 0, 0, 1, len(s) - 2)
    limit = start + (length - 1) * (m + 1) + 1
    return slice_in_dim(flat, start, limit, m + 1, len(s) - 2)


# ---------------------------------------------------------------- pad

def _pad_eval(x, padding_value, *, padding_config):
    if padding_value.shape != ():
        raise ShapeError(f"padding_value must be rank 0, got shape {padding_value.shape}",
                         op="pad")
    if padding_value.dtype != x.dtype:
        raise DTypeError(f"padding_value dtype {padding_value.dtype.name} differs from the "
                         f"operand's {x.dtype.name}", op="pad")
    if len(padding_config) != x.ndim:
        raise ShapeError(f"padding_config {padding_config} needs one (lo, hi, interior) per "
                         f"dim of {x.shape}", op="pad")
    out = []
    for axis, ((lo, hi, interior), n) in enumerate(zip(padding_config, x.shape)):
        if (lo, hi, interior) == (0, 0, 0):
            out.append(n)
            continue
        size = lo + hi + n + max(n - 1, 0) * interior
        if interior < 0 or not at_least(size, 0, "pad"):
            raise ShapeError(f"padding {(lo, hi, interior)} of axis {axis} (size {n}) is "
                             "invalid: interior must be >= 0 and the result size "
                             f"{size} must be >= 0", op="pad")
        out.append(size)
    return ShapedArray(tuple(out), x.dtype)


def _pad_impl(x, padding_value, *, padding_config):
    x = np.asarray(x)
    extended, placed, cropped = [], [], []
    for (lo, hi, interior), n in zip(padding_config, x.shape):
        body = n + max(n - 1, 0) * interior
        size = max(lo, 0) + body + max(hi, 0)
        extended.append(size)
        placed.append(slice(max(lo, 0), max(lo, 0) + body, interior + 1))
        cropped.append(slice(max(-lo, 0), size - max(-hi, 0)))
    out = np.full(extended, padding_value, x.dtype)
    out[tuple(placed)] = x
    return out[tuple(cropped)]


pad_p = _declare("pad", _pad_eval, _pad_impl)


@located
def pad(x, padding_value, padding_config):
    """Pad (or, with negative lo/hi, crop) ``x``; ``padding_config`` has one
    ``(lo, hi, interior)`` per dim.

    ``interior`` inserts that many padding elements between neighbours, as ``lax.pad``.

    >>> pad(np.array([1, 2]), np.array(0), [(1, 0, 1)])
    array([0, 1, 0, 2])
    """
    x = _as_array(x)
    dt = aval_of(x).dtype
    if isinstance(padding_value, dtypes.WEAK_SCALAR_TYPES):
        padding_value = np.asarray(padding_value, dt)
    config = tuple(_ints(c, "padding_config entries", "pad") for c in padding_config)
    if any(len(c) != 3 for c in config):
        raise ShapeError(f"padding_config {padding_config} needs (lo, hi, interior) triples",
                         op="pad")
    return pad_p.bind(x, padding_value, padding_config=config)


def _pad_transpose(ct, x, padding_value, *, padding_config):
    # ct_x is ct at the operand's positions: undo the cropping with zeros, then take the
    # strided slice. Every other position came from the padding value.
    in_shape = aval_of(x).shape
    zero = np.zeros((), aval_of(ct).dtype)
    uncropped = pad(ct, zero, tuple((max(-lo, 0), max(-hi, 0), 0)
                                    for lo, hi, _ in padding_config))
    starts, limits, strides = [], [], []
    for (lo, _, interior), n in zip(padding_config, in_shape):
        starts.append(max(lo, 0))
        limits.append(max(lo, 0) + n + max(n - 1, 0) * interior)
        strides.append(interior + 1)
    ct_x = slice_(uncropped, starts, limits, strides)
    ct_value = None
    if is_undefined(padding_value):
        from .elementwise import sub
        from .reductions import reduce_sum
        ct_value = sub(reduce_sum(ct, tuple(range(len(aval_of(ct).shape)))),
                       reduce_sum(ct_x, tuple(range(len(in_shape)))))
    return [ct_x if is_undefined(x) else None, ct_value]


deflinear(pad_p, _pad_transpose)


# ---------------------------------------------------------------- concatenate

def _concatenate_eval(*operands, dimension):
    if not operands:
        raise ShapeError("needs at least one operand", op="concatenate")
    first = operands[0]
    if not 0 <= dimension < first.ndim:
        raise ShapeError(f"dimension {dimension} out of range for operands of shape "
                         f"{first.shape}", op="concatenate")
    for a in operands:
        if a.dtype != first.dtype:
            raise DTypeError("operands need one dtype, got "
                             + ", ".join(o.dtype.name for o in operands)
                             + " (tnp.concatenate promotes; the op does not)", op="concatenate")
        if a.ndim != first.ndim or any(not same_dim(d, e, "concatenate")
                                       for i, (d, e) in enumerate(zip(a.shape, first.shape))
                                       if i != dimension):
            raise ShapeError("operands must agree on every dim but the concatenated one "
                             f"({dimension}), got " + ", ".join(str(o.shape) for o in operands),
                             op="concatenate")
    if len(operands) == 1:
        return first
    total = sum(a.shape[dimension] for a in operands)
    shape = list(first.shape)
    shape[dimension] = total
    return ShapedArray(tuple(shape), first.dtype)


concatenate_p = _declare("concatenate", _concatenate_eval,
                         lambda *xs, dimension: np.concatenate(xs, axis=dimension))


@located
def concatenate(operands, dimension):
    """Join ``operands`` (one dtype, equal other dims) along ``dimension`` (may be negative)."""
    operands = [_as_array(x) for x in operands]
    dimension = operator.index(dimension)
    if operands and -len(aval_of(operands[0]).shape) <= dimension < 0:
        dimension += len(aval_of(operands[0]).shape)
    if len(operands) == 1:
        _concatenate_eval(aval_of(operands[0]), dimension=dimension)
        return operands[0]
    return concatenate_p.bind(*operands, dimension=dimension)


def _concatenate_transpose(ct, *operands, dimension):
    cts, offset = [], 0
    for x in operands:
        n = aval_of(x).shape[dimension]
        cts.append(slice_in_dim(ct, offset, offset + n, 1, dimension) if is_undefined(x)
                   else None)
        offset += n
    return cts


def _concatenate_jvp(primals, tangents, *, dimension):
    ans = concatenate_p.bind(*primals, dimension=dimension)
    if all(type(t) is Zero for t in tangents):
        return ans, Zero(aval_of(ans))
    return ans, concatenate_p.bind(*[instantiate(t) for t in tangents], dimension=dimension)


register("jvp", concatenate_p, _concatenate_jvp)
register("transpose", concatenate_p, _concatenate_transpose)


# ---------------------------------------------------------------- dim_size

def _dim_size_eval(*, dims):
    return ShapedArray((), dtypes.int64)


def _dim_size_impl(*, dims):
    return np.int64(math.prod(dims))


dim_size_p = _declare("dim_size", _dim_size_eval, _dim_size_impl)
defzero(dim_size_p)


def dim_size(dims):
    """The product of ``dims`` (ints or symbolic dims) as an int64 scalar value: a length
    used as a number (a mean's count), which compiled code reads from its inputs' shapes
    instead of holding as a literal, so one kernel serves every length.

    >>> dim_size((2, 3))
    np.int64(6)
    """
    return dim_size_p.bind(dims=tuple(dims))


# ---------------------------------------------------------------- iota and full

def _iota_eval(*, dtype, shape, dimension):
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"dimension {dimension} out of range for shape {shape}", op="iota")
    if dtypes.is_bool(dtype):
        raise DTypeError("needs a numeric dtype, got bool", op="iota")
    return ShapedArray(shape, dtype)


def _iota_impl(*, dtype, shape, dimension):
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.array(np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(expanded),
                                    shape))


iota_p = _declare("iota", _iota_eval, _iota_impl)
defzero(iota_p)
# in a loop nest, the loop's own index: a triangular mask is then a compare of two indices
register("lower", iota_p, IndexMap(
    lambda name, eqn, idx: typed(idx[eqn.params["dimension"]], eqn.outvars[0].aval.dtype)))


@located
def iota(dtype, shape, dimension=0):
    """``0, 1, ..., n-1`` along ``dimension`` of ``shape``, repeated along the other dims.

    >>> iota(np.int32, (2, 3), 1)
    array([[0, 1, 2],
           [0, 1, 2]], dtype=int32)
    """
    shape = _shape(shape, "iota")
    return iota_p.bind(dtype=dtypes.canonical(dtype), shape=shape,
                       dimension=operator.index(dimension))


@located
def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (a scalar or a 0-d array) as ``dtype``.

    It is a broadcast of a 0-d value, so the program holds one scalar, not the whole array.
    """
    from .elementwise import convert_element_type
    if isinstance(fill_value, dtypes.WEAK_SCALAR_TYPES) or isinstance(fill_value, np.generic):
        dt = dtypes.canonical(dtype) if dtype is not None else dtypes.result_type(fill_value)
        value = np.asarray(fill_value, dt)
    else:
        value = fill_value
        if dtype is not None:
            value = convert_element_type(value, dtype)
    if aval_of(value).shape != ():
        raise ShapeError(f"fill_value must be a scalar, got shape {aval_of(value).shape}",
                         op="full")
    return broadcast_in_dim(value, _shape(shape, "full"), ())


# ---------------------------------------------------------------- batching

def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions):
    # the batch axis lands right after the output dim of the operand dim before it, so
    # broadcast_dimensions stay increasing and nothing moves
    (x,), (d,) = args, dims
    size = aval_of(x).shape[d]
    bd = broadcast_dimensions
    out_dim = bd[d - 1] + 1 if d > 0 else 0
    new_bd = tuple(b + (b >= out_dim) for b in bd)
    new_bd = new_bd[:d] + (out_dim,) + new_bd[d:]
    new_shape = tuple(shape[:out_dim]) + (size,) + tuple(shape[out_dim:])
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_bd), out_dim


def _reshape_batch(args, dims, *, new_sizes):
    (x,), (d,) = args, dims
    size = aval_of(x).shape[d]
    x = batching.moveaxis(x, d, 0)
    return reshape(x, (size,) + tuple(new_sizes)), 0


def _transpose_batch(args, dims, *, permutation):
    (x,), (d,) = args, dims
    perm = (d,) + tuple(p + (p >= d) for p in permutation)
    return transpose(x, perm), 0


def _rev_batch(args, dims, *, dimensions):
    (x,), (d,) = args, dims
    return rev_p.bind(x, dimensions=tuple(a + (a >= d) for a in dimensions)), d


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    size = aval_of(x).shape[d]
    return slice_p.bind(x, start_indices=start_indices[:d] + (0,) + start_indices[d:],
                        limit_indices=limit_indices[:d] + (size,) + limit_indices[d:],
                        strides=strides[:d] + (1,) + strides[d:]), d


def _pad_batch(args, dims, *, padding_config):
    B = batching
    (x, value), (dx, dv) = args, dims
    size = B.axis_size_of(args, dims)
    d = 0 if dx is None else dx
    x = B.bdim_to(x, dx, d, size)
    config = padding_config[:d] + ((0, 0, 0),) + padding_config[d:]
    if dv is None:
        return pad_p.bind(x, value, padding_config=config), d
    # a per-example padding value: pad with zeros, then choose it where the padding went
    from .elementwise import select
    zero = np.zeros((), aval_of(x).dtype)
    padded = pad_p.bind(x, zero, padding_config=config)
    out_shape = aval_of(padded).shape
    inside = pad_p.bind(full(aval_of(x).shape, True), np.asarray(False),
                        padding_config=config)
    values = broadcast_in_dim(value, out_shape, (d,))
    return select(inside, padded, values), d


def _concatenate_batch(args, dims, *, dimension):
    B = batching
    size = B.axis_size_of(args, dims)
    d = B.common_dim(args, dims)
    xs = [B.bdim_to(x, e, d, size) for x, e in zip(args, dims)]
    return concatenate_p.bind(*xs, dimension=dimension + (dimension >= d)), d


def _iota_batch(args, dims, **params):
    return iota_p.bind(**params), None


for _prim, _rule in ((broadcast_in_dim_p, _broadcast_in_dim_batch), (reshape_p, _reshape_batch),
                     (transpose_p, _transpose_batch), (rev_p, _rev_batch),
                     (slice_p, _slice_batch), (pad_p, _pad_batch),
                     (concatenate_p, _concatenate_batch), (iota_p, _iota_batch)):
    register("batch", _prim, _rule)
