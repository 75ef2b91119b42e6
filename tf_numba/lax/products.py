"""Products, as ``jax.lax``'s: ``dot_general`` and its conveniences (``dot``,
``batch_matmul``), the grouped products ``ragged_dot``/``ragged_dot_general`` and
``scaled_dot``, and the records that tune products on accelerators (``Precision``,
``DotAlgorithm``, ``DotAlgorithmPreset``), accepted here and meaning nothing on a CPU.

Each is the ``dot_general`` primitive (BLAS under ``jit``) with layout ops and masks around
it. A ragged product computes every group's product and keeps each row's (or contracting
element's) own group by a mask: ``g`` times the work of one product, in exchange for no
gather of the weights per row.

>>> from tf_numba import lax
>>> lax.dot_general(np.ones((5, 2, 3)), np.ones((5, 3, 4)), (((2,), (1,)), ((0,), (0,)))).shape
(5, 2, 4)
"""
import enum
import operator
from typing import NamedTuple

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.trace import user_source
from ..errors import ShapeError, UnsupportedError
from ..ops import contraction
from ..ops import elementwise as ew
from ..ops import layout, reductions
from ..ops.contraction import Precision, check_precision
from ._operands import leaf

__all__ = ["Precision", "PrecisionLike", "DotAlgorithm", "DotAlgorithmPreset",
           "DotDimensionNumbers", "RaggedDotDimensionNumbers", "dot", "dot_general",
           "batch_matmul", "ragged_dot", "ragged_dot_general", "scaled_dot"]

class PrecisionLike:
    """What ``precision=`` takes, for annotations (JAX's type alias): None, a
    ``Precision``, its name, a pair of them, a ``DotAlgorithm`` or a
    ``DotAlgorithmPreset``."""


class DotDimensionNumbers(tuple):
    """``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, for annotations
    (JAX's type alias); any such pair of pairs is one."""


class DotAlgorithm(NamedTuple):
    """The operand and accumulation types an accelerator's product uses
    (``jax.lax.DotAlgorithm``); accepted as ``precision=``, and the product runs in its
    operands' dtype."""
    lhs_precision_type: object
    rhs_precision_type: object
    accumulation_type: object
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named ``DotAlgorithm``s (``jax.lax.DotAlgorithmPreset``); accepted as
    ``precision=``."""
    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()


def _check_precision(precision, op):
    if not isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        check_precision(precision, op)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *,
                out_sharding=None):
    """The general contraction ``jax.lax.dot_general``: ``dimension_numbers =
    ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``, output axes batch, lhs
    free, rhs free; the operands promoted to one dtype, accumulated in
    ``preferred_element_type`` when given; ``precision`` is accepted and means nothing on
    a CPU.

    >>> dot_general(np.ones((5, 2, 3)), np.ones((5, 3, 4)), (((2,), (1,)), ((0,), (0,)))).shape
    (5, 2, 4)
    """
    from ..numpy import _promote as P
    _check_precision(precision, "dot_general")
    a, b = P.asarray(lhs), P.asarray(rhs)
    dt = P.result_type(a, b)
    return contraction.dot_general(P.cast(a, dt), P.cast(b, dt), dimension_numbers,
                                   preferred_element_type)


def dot(lhs, rhs, precision=None, preferred_element_type=None, *, dimension_numbers=None,
        out_sharding=None):
    """The vector/matrix product ``jax.lax.dot`` of operands of rank 1 or 2: ``lhs``'s last
    axis contracted with ``rhs``'s first; with ``dimension_numbers``, ``dot_general``.

    >>> dot(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
    la, ra = aval_of(leaf(lhs)), aval_of(leaf(rhs))
    if not (1 <= la.ndim <= 2 and 1 <= ra.ndim <= 2) or la.shape[-1] != ra.shape[0]:
        raise ShapeError(f"lax.dot multiplies vectors and matrices of matching inner sizes, "
                         f"got shapes {tuple(la.shape)} and {tuple(ra.shape)}; use "
                         "lax.dot_general with dimension_numbers for other ranks",
                         op="dot", source=user_source())
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products of the last two dims, batched over the leading dims of equal sizes
    (``jax.lax.batch_matmul``).

    >>> batch_matmul(np.ones((4, 2, 3)), np.ones((4, 3, 5))).shape
    (4, 2, 5)
    """
    la, ra = aval_of(leaf(lhs)), aval_of(leaf(rhs))
    if la.ndim != ra.ndim or la.ndim < 2 or tuple(la.shape[:-2]) != tuple(ra.shape[:-2]):
        raise ShapeError(f"needs operands of one rank >= 2 and equal batch dims, "
                         f"got shapes {tuple(la.shape)} and {tuple(ra.shape)}",
                         op="batch_matmul", source=user_source())
    batch = tuple(range(la.ndim - 2))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)), precision)


class RaggedDotDimensionNumbers(NamedTuple):
    """``ragged_dot_general``'s dims (``jax.lax.RaggedDotDimensionNumbers``): the
    ``dot_general`` dimension numbers, the ragged dim of ``lhs`` (one) and the group dim of
    ``rhs`` (none or one)."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple


def _group_of(n, group_sizes):
    """A (g, n) bool mask: element ``i`` of a ragged dim of size ``n`` belongs to group
    ``j`` (consecutive runs of ``group_sizes[j]``; elements past their sum to none)."""
    sizes = ew.convert_element_type(leaf(group_sizes), dtypes.int64)
    g = aval_of(sizes).shape[0]
    ends = reductions.cumsum(sizes, 0)
    starts = ew.sub(ends, sizes)
    position = layout.iota(dtypes.int64, (g, n), 1)
    return ew.and_(ew.ge(position, layout.broadcast_in_dim(starts, (g, n), (0,))),
                   ew.lt(position, layout.broadcast_in_dim(ends, (g, n), (0,))))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """A ``dot_general`` whose ``lhs`` ragged dim is cut into consecutive groups of
    ``group_sizes`` (``jax.lax.ragged_dot_general``): a ragged free dim of ``lhs`` takes
    each group's rows through ``rhs``'s slice of that group (along its group dim); a
    ragged contracting dim gives one product per group (a new leading dim); a ragged batch
    dim keeps the rows within the groups. Rows past the groups give zeros.

    >>> dn = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    >>> ragged_dot_general(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]),
    ...                    np.array([1, 2]), dn)
    array([[1., 1.],
           [2., 2.],
           [2., 2.]])
    """
    op = "ragged_dot_general"
    _check_precision(precision, op)
    if group_offset is not None:
        raise UnsupportedError("group_offset (sharded groups) is not supported; the groups "
                               "start at 0", op=op, source=user_source())
    a, b = leaf(lhs), leaf(rhs)
    dn = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = (tuple(map(tuple, t)) for t in dn.dot_dimension_numbers)
    ragged, = dn.lhs_ragged_dimensions
    groups = tuple(dn.rhs_group_dimensions)
    if aval_of(leaf(group_sizes)).ndim != 1:
        raise UnsupportedError("group_sizes must be one size per group (rank 1)", op=op,
                               source=user_source())
    a_shape, b_shape = tuple(aval_of(a).shape), tuple(aval_of(b).shape)
    mask = _group_of(a_shape[ragged], group_sizes)           # (g, n)
    g = aval_of(mask).shape[0]
    a_mask = layout.broadcast_in_dim(mask, (g,) + a_shape, (0, ragged + 1))
    dt = aval_of(a).dtype
    # lhs with each group's part alone, over a new leading group dim
    per_group = ew.select(a_mask, layout.broadcast_in_dim(a, (g,) + a_shape,
                                                          tuple(range(1, len(a_shape) + 1))),
                          np.zeros((), dt))
    shift = lambda dims: tuple(d + 1 for d in dims)          # noqa: E731
    if ragged in lc:                     # one product per group: (g, batch, m, n)
        if groups:
            raise ShapeError("a ragged contracting dim takes no rhs group dim", op=op,
                             source=user_source())
        out = dot_general(per_group, b, ((shift(lc), rc), (shift(lb), rb)), None,
                          preferred_element_type)
        # dot_general puts the batch dims first, then g (the first lhs free dim)
        nb = len(lb)
        return layout.transpose(out, (nb,) + tuple(range(nb)) + tuple(
            range(nb + 1, len(aval_of(out).shape))))
    if ragged in lb:
        kept = reductions.reduce_or(mask, (0,))             # rows inside some group
        a = ew.select(layout.broadcast_in_dim(kept, a_shape, (ragged,)), a, np.zeros((), dt))
        return dot_general(a, b, ((lc, rc), (lb, rb)), None, preferred_element_type)
    group, = groups
    if b_shape[group] != g:
        raise ShapeError(f"rhs group dim {group} has size {b_shape[group]}, but "
                         f"group_sizes names {g} groups", op=op, source=user_source())
    # the group dim is a batch dim of the product of every group's rows with its weights
    out = dot_general(per_group, b, ((shift(lc), rc), ((0,) + shift(lb), (group,) + rb)),
                      None, preferred_element_type)
    return reductions.reduce_sum(out, (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """Rows of ``lhs`` (m, k) in consecutive groups of ``group_sizes`` (g,), each group
    multiplied by its own ``rhs[j]`` (g, k, n): a mixture-of-experts product
    (``jax.lax.ragged_dot``); rows past the groups give zeros.

    >>> ragged_dot(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]), np.array([1, 2]))
    array([[1., 1.],
           [2., 2.],
           [2., 2.]])
    """
    dn = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    return ragged_dot_general(lhs, rhs, group_sizes, dn, precision, preferred_element_type,
                              group_offset)


def _scaled(x, scale, contracting):
    """``x * scale``, each scale element covering a run of the contracting dims (the scale
    is smaller there by a whole factor) and one element elsewhere."""
    x, scale = leaf(x), leaf(scale)
    shape, s_shape = tuple(aval_of(x).shape), tuple(aval_of(scale).shape)
    if len(s_shape) != len(shape) or any(
            n % s or (d not in contracting and n != s)
            for d, (n, s) in enumerate(zip(shape, s_shape))):
        raise ShapeError(f"a scale of shape {s_shape} does not divide an operand of shape "
                         f"{shape} (equal sizes but along contracting dims {contracting}, "
                         "where the operand's is a multiple)", op="scaled_dot",
                         source=user_source())
    wide = tuple(n for s, size in zip(s_shape, shape) for n in (s, size // s))
    spread = layout.broadcast_in_dim(scale, wide, tuple(range(0, 2 * len(shape), 2)))
    scale = layout.reshape(spread, shape)
    return ew.mul(x, ew.convert_element_type(scale, aval_of(x).dtype))


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """``dot_general(lhs * lhs_scale, rhs * rhs_scale)`` (``jax.lax.scaled_dot``): a scale
    element covers a block of the contracting dims (sub-channel scaling) and one element
    elsewhere; without ``dimension_numbers``, the last dim of ``lhs`` meets the last but
    one of ``rhs``, the dims before batched. Computed in the operands' dtype (JAX's
    default bfloat16 is not a dtype here)."""
    a, b = leaf(lhs), leaf(rhs)
    n = aval_of(a).ndim
    if dimension_numbers is None:
        if n < 2:
            raise ShapeError("needs operands of rank 2 or more", op="scaled_dot",
                             source=user_source())
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), _ = dimension_numbers
    if lhs_scale is not None:
        a = _scaled(a, lhs_scale, tuple(map(operator.index, lc)))
    if rhs_scale is not None:
        b = _scaled(b, rhs_scale, tuple(map(operator.index, rc)))
    return dot_general(a, b, dimension_numbers, None, preferred_element_type)


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
