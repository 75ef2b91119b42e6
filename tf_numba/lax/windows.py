"""Convolutions and windowed reductions, as ``jax.lax``: ``conv_general_dilated``,
``conv``, ``conv_transpose``, ``reduce_window`` and their ``tf.nn`` conveniences.

A convolution is an im2col product: the input is moved channel-last, cut into its windows
by the ``patches`` primitive (padding, input and kernel dilation and strides are its
parameters; ``ops/windows.py``) and contracted with the kernel by one ``dot_general``
(BLAS under ``jit``), feature groups as a batch dim of that product. A windowed
reduction reduces the ``patches`` over their window axis, or, for non-overlapping windows
(the usual pool), reshapes the operand so that each window is a pair of axes and reduces
those (one fused reduction under ``jit``). ``patches`` is linear with ``patches_transpose``
(col2im) as its transpose, so the JVPs, the transposes in either operand, batching and
derivatives of every order come from those two primitives and ``dot_general``.

Why primitives and not layout ops: written as ``pad``, one strided ``slice`` per kernel
offset, ``concatenate`` and ``dot_general``, the convolution compiled too, but every copy
was a loop nest in the kernel and the reverse pass pads each offset back (two more): numba
took 98 s to compile the CNN step of ``perf/cnn_bench.py`` (jit 27 ms a step against
JAX's 40 ms there). As primitives they are one call each of a hand-written loop
compiled once per dtype (``lowering/loops.py``), inside the kernel that holds the
products, pools and activations.

>>> import numpy as np
>>> from tf_numba import lax
>>> x = np.arange(16.0).reshape(1, 1, 4, 4)
>>> lax.conv_general_dilated(x, np.ones((1, 1, 2, 2)), (2, 2), "VALID")[0, 0]
array([[10., 18.],
       [42., 50.]])
"""
import builtins
import math
import operator

import numpy as np

from ..core import dtypes, pytree
from ..core.linear import aval_of
from ..core.shapes import Sym
from ..errors import DTypeError, ShapeError, TfNumbaError
from ..ops import contraction
from ..ops import elementwise as ew
from ..ops import layout, windows
from ..ops.layout import located
from . import reductions as lax_reductions

__all__ = ["ConvDimensionNumbers", "ConvGeneralDilatedDimensionNumbers",
           "conv_with_general_padding", "conv_general_dilated_patches",
           "conv_general_dilated_local", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose", "conv_transpose_shape_tuple", "padtype_to_pads", "reduce_window",
           "reduce_window_shape_tuple"]


class ConvDimensionNumbers(tuple):
    """``(lhs_spec, rhs_spec, out_spec)``: for each operand, the axis of (batch, feature,
    spatial...) in lhs and out, of (out feature, in feature, spatial...) in rhs (JAX's)."""

    def __new__(cls, lhs_spec, rhs_spec, out_spec):
        return super().__new__(cls, (tuple(lhs_spec), tuple(rhs_spec), tuple(out_spec)))

    lhs_spec = property(operator.itemgetter(0))
    rhs_spec = property(operator.itemgetter(1))
    out_spec = property(operator.itemgetter(2))


class ConvGeneralDilatedDimensionNumbers:
    """What ``dimension_numbers=`` of a convolution takes, for annotations (JAX's type
    alias): None, a ``ConvDimensionNumbers``, or three spec strings."""


def _check_letters(spec, pair, what):
    for c in pair:
        if spec.count(c) != 1:
            raise ShapeError(f"dimension_numbers {what} spec {spec!r} must contain {c!r} "
                             "exactly once", op="conv_general_dilated")
    if len(set(spec)) != len(spec):
        raise ShapeError(f"dimension_numbers {what} spec {spec!r} repeats a letter",
                         op="conv_general_dilated")


def _spec_from_string(spec, pair, rhs_spec):
    """One operand's permutation from its letters: the ``pair`` letters first, then the
    spatial letters in the order the kernel's spec names them (JAX's convention)."""
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if spec is not rhs_spec:
        spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_general_permutations(dimension_numbers):
    """The axis permutations ``(lhs, rhs, out)`` of three spec strings such as
    ``("NHWC", "HWIO", "NHWC")``: each lists the axes of (batch, feature, spatial...), of
    (out feature, in feature, spatial...) for rhs, the spatial ones in the kernel's order.

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    if len(dimension_numbers) != 3 or not all(isinstance(s, str) for s in dimension_numbers):
        raise ShapeError(f"dimension_numbers must be three spec strings (lhs, rhs, out), got "
                         f"{dimension_numbers!r}", op="conv_general_dilated")
    lhs, rhs, out = dimension_numbers
    for spec, pair, what in ((lhs, "NC", "lhs"), (rhs, "OI", "rhs"), (out, "NC", "out")):
        _check_letters(spec, pair, what)
    if not set(lhs) - set("NC") == set(rhs) - set("OI") == set(out) - set("NC"):
        raise ShapeError(f"dimension_numbers {dimension_numbers} must name the same "
                         "spatial letters in all three specs", op="conv_general_dilated")
    return (_spec_from_string(lhs, "NC", rhs), _spec_from_string(rhs, "OI", rhs),
            _spec_from_string(out, "NC", rhs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """``dimension_numbers`` (None, three strings such as ``("NHWC", "HWIO", "NHWC")``, or
    three axis tuples) as a ``ConvDimensionNumbers``.

    >>> conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    rank = len(lhs_shape)
    if len(rhs_shape) != rank:
        raise ShapeError(f"lhs of shape {tuple(lhs_shape)} and rhs of shape "
                         f"{tuple(rhs_shape)} must have the same rank",
                         op="conv_general_dilated")
    if dimension_numbers is None:
        iota = tuple(range(rank))
        return ConvDimensionNumbers(iota, iota, iota)
    if len(dimension_numbers) != 3:
        raise ShapeError(f"dimension_numbers must be (lhs_spec, rhs_spec, out_spec), got "
                         f"{dimension_numbers!r}", op="conv_general_dilated")
    if all(isinstance(s, str) for s in dimension_numbers):
        if any(len(s) != rank for s in dimension_numbers):
            raise ShapeError(f"dimension_numbers {dimension_numbers} need {rank} letters "
                             f"each, one per axis of the operands of shapes "
                             f"{tuple(lhs_shape)} and {tuple(rhs_shape)}",
                             op="conv_general_dilated")
        return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))
    specs = [tuple(operator.index(a) for a in s) for s in dimension_numbers]
    for s in specs:
        if sorted(s) != list(range(rank)):
            raise ShapeError(f"dimension_numbers {dimension_numbers} must be permutations "
                             f"of the {rank} axes", op="conv_general_dilated")
    return ConvDimensionNumbers(*specs)


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """``'SAME'``, ``'SAME_LOWER'`` or ``'VALID'`` as ``(lo, hi)`` pairs (JAX's rule: SAME
    gives ``ceil(n / stride)`` outputs, an odd total pad puts the extra one at the end;
    SAME_LOWER at the start).

    >>> padtype_to_pads((5,), (3,), (2,), "SAME")
    [(1, 1)]
    """
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ShapeError(f"padding must be 'SAME', 'SAME_LOWER', 'VALID' or (lo, hi) pairs, "
                         f"got {padding!r}", op="conv_general_dilated")
    pads = []
    for n, k, s in zip(in_shape, window_shape, window_strides):
        total = builtins.max((-(-n // s) - 1) * s + k - n, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return pads


def _ints(values, n, what, op, default=1):
    if values is None:
        return (default,) * n
    if isinstance(values, int):
        return (operator.index(values),) * n
    try:
        out = tuple(operator.index(v) for v in values)
    except TypeError:
        raise ShapeError(f"{what} must be ints, got {values!r}", op=op) from None
    if len(out) != n:
        raise ShapeError(f"{what} {out} needs {n} entries, one per spatial dim", op=op)
    return out


def _concrete(shape, op):
    if any(isinstance(d, Sym) for d in shape):
        raise ShapeError(f"needs concrete shapes, got {shape}; trace it on arrays "
                         "of known shape", op=op)
    return tuple(shape)


def _explicit_pads(padding, n, op):
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ShapeError(f"padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of "
                         f"(lo, hi) pairs, got {padding!r}", op=op) from None
    if len(pads) != n:
        raise ShapeError(f"padding {pads} needs {n} (lo, hi) pairs, one per spatial dim",
                         op=op)
    return pads


def _out_sizes(in_sizes, pads, lhs_dilation, window, strides, rhs_dilation, op, shapes):
    padded = windows.padded_sizes(in_sizes, pads, lhs_dilation)
    if any(n < 0 for n in padded):
        raise ShapeError(f"negative padding larger than the operand: padded spatial "
                         f"sizes {tuple(padded)} ({shapes})", op=op)
    return windows.window_counts(padded, window, strides, rhs_dilation)


@located
def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None):
    """N-d convolution (a cross-correlation, as XLA's and ``jax.lax``'s), with strides,
    padding (``'SAME'``, ``'SAME_LOWER'``, ``'VALID'`` or ``(lo, hi)`` pairs, negative
    ones crop), input dilation (a transposed convolution), kernel dilation (atrous) and
    feature groups (``feature_group_count = C_in / I``; depthwise when ``I == 1``).

    ``dimension_numbers`` is None (``NC...``, ``OI...``, ``NC...``), three strings such as
    ``("NHWC", "HWIO", "NHWC")`` or three axis tuples; strides and dilations follow the
    spatial letters in the order of the kernel's spec. ``precision`` is accepted and
    ignored (products run in the operands' dtype). ``batch_group_count`` convolves runs of
    the batch with runs of the output features (the kernel gradient of a grouped
    convolution).

    >>> x, w = np.ones((1, 5, 5, 2)), np.ones((3, 3, 2, 4))
    >>> conv_general_dilated(x, w, (1, 1), "SAME",
    ...                      dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (1, 5, 5, 4)
    """
    op = "conv_general_dilated"
    contraction.check_precision(precision, op)
    lhs, rhs = layout._as_array(lhs), layout._as_array(rhs)
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.dtype != ra.dtype:
        raise DTypeError(f"lhs and rhs need one dtype, got {la.dtype.name} and "
                         f"{ra.dtype.name}; cast one (x.astype(w.dtype))", op=op)
    if not (dtypes.is_inexact(la.dtype) or dtypes.is_integer(la.dtype)):
        raise DTypeError(f"needs numeric operands, got {la.dtype.name}", op=op)
    if la.ndim < 2:
        raise ShapeError(f"operands need rank >= 2 (batch, feature, spatial...), got shapes "
                         f"{la.shape} and {ra.shape}", op=op)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(la.shape, ra.shape,
                                                          dimension_numbers)
    batch_groups = operator.index(batch_group_count)
    if batch_groups != 1:
        return _batch_grouped(lhs, rhs, batch_groups, (lhs_spec, rhs_spec, out_spec),
                              window_strides, padding, lhs_dilation, rhs_dilation,
                              feature_group_count, preferred_element_type)
    n_sp = la.ndim - 2
    strides = _ints(window_strides, n_sp, "window_strides", op)
    lhs_dil = _ints(lhs_dilation, n_sp, "lhs_dilation", op)
    rhs_dil = _ints(rhs_dilation, n_sp, "rhs_dilation", op)
    if any(v < 1 for v in strides + lhs_dil + rhs_dil):
        raise ShapeError(f"strides {strides} and dilations {lhs_dil}, {rhs_dil} must be "
                         ">= 1", op=op)
    lshape = _concrete(tuple(la.shape[a] for a in lhs_spec), op)    # N, C, spatial
    rshape = _concrete(tuple(ra.shape[a] for a in rhs_spec), op)    # O, I, spatial
    batch, channels, in_sp = lshape[0], lshape[1], lshape[2:]
    out_ch, in_per_group, window = rshape[0], rshape[1], rshape[2:]
    groups = operator.index(feature_group_count)
    shapes = f"lhs {la.shape}, rhs {ra.shape}, dimension_numbers {dimension_numbers}"
    if groups < 1 or channels != groups * in_per_group or out_ch % groups:
        raise ShapeError(f"input features {channels} must equal feature_group_count "
                         f"({groups}) x the kernel's input features ({in_per_group}), and "
                         f"the kernel's output features {out_ch} must divide by "
                         f"feature_group_count ({shapes})", op=op)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dil):
            raise ShapeError("string padding with lhs_dilation is ambiguous: give explicit "
                             "(lo, hi) pairs, or use lax.conv_transpose", op=op)
        span = [(k - 1) * r + 1 for k, r in zip(window, rhs_dil)]
        pads = tuple(padtype_to_pads(in_sp, span, strides, padding))
    else:
        pads = _explicit_pads(padding, n_sp, op)
    out_sp = _out_sizes(in_sp, pads, lhs_dil, window, strides, rhs_dil, op, shapes)

    # channel-last working layout: x (N, spatial..., C), w (spatial..., I, O)
    x = layout.transpose(lhs, (lhs_spec[0],) + lhs_spec[2:] + (lhs_spec[1],))
    w = layout.transpose(rhs, rhs_spec[2:] + (rhs_spec[1], rhs_spec[0]))
    k = math.prod(window)
    if 0 in out_sp or k == 0 or batch == 0:
        y = layout.full((batch,) + out_sp + (out_ch,), 0, la.dtype)
    else:
        cols = windows.patches(x, window, strides, pads, lhs_dil, rhs_dil)
        y = _contract(cols, w, k, groups, in_per_group, out_ch, preferred_element_type)
    # y is (N, spatial..., O): out axis out_spec[j] holds y's axis canonical[j]
    canonical = (0, n_sp + 1) + tuple(range(1, n_sp + 1))
    perm = [0] * la.ndim
    for j, axis in enumerate(out_spec):
        perm[axis] = canonical[j]
    return layout.transpose(y, perm)


def _batch_grouped(lhs, rhs, groups, specs, window_strides, padding, lhs_dilation,
                   rhs_dilation, feature_group_count, preferred_element_type):
    """XLA's ``batch_group_count``: the batch cut into ``groups`` runs, run ``g`` convolved
    with the ``g``-th run of output features. That is a feature-grouped convolution of the
    runs moved into the features: (N, C) -> (N / G, G * C)."""
    op = "conv_general_dilated"
    lhs_spec, rhs_spec, out_spec = specs
    shape = tuple(aval_of(lhs).shape)
    n, c, spatial = shape[lhs_spec[0]], shape[lhs_spec[1]], [shape[a] for a in lhs_spec[2:]]
    out_ch = aval_of(rhs).shape[rhs_spec[0]]
    if operator.index(feature_group_count) != 1 or groups < 1 or n % groups or out_ch % groups:
        raise ShapeError(f"batch_group_count {groups} must divide the batch {n} and the "
                         f"kernel's output features {out_ch}, with feature_group_count 1",
                         op=op)
    x = layout.transpose(lhs, lhs_spec)                           # (N, C, spatial...)
    rank = len(shape)
    x = layout.reshape(x, (groups, n // groups, c) + tuple(spatial))
    x = layout.transpose(x, (1, 0) + tuple(range(2, rank + 1)))
    x = layout.reshape(x, (n // groups, groups * c) + tuple(spatial))
    canonical = tuple(range(rank))
    return conv_general_dilated(x, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                (canonical, rhs_spec, out_spec), feature_group_count=groups,
                                preferred_element_type=preferred_element_type)


def _contract(cols, w, k, groups, in_per_group, out_ch, preferred_element_type):
    """(N, out..., K, C) patches times the (window..., I, O) kernel: (N, out..., O)."""
    rank = len(aval_of(cols).shape)
    lead = aval_of(cols).shape[:-2]
    if groups == 1:
        w3 = layout.reshape(w, (k, in_per_group, out_ch))
        return contraction.dot_general(cols, w3, (((rank - 2, rank - 1), (0, 1)), ((), ())),
                                       preferred_element_type)
    # channels are (group, channel in group): contract (offset, channel), batch the groups
    p = layout.reshape(cols, lead + (k, groups, in_per_group))
    w4 = layout.reshape(w, (k, in_per_group, groups, out_ch // groups))
    y = contraction.dot_general(p, w4, (((rank - 2, rank), (0, 1)), ((rank - 1,), (2,))),
                                preferred_element_type)            # (G, N, out..., O/G)
    y = layout.transpose(y, tuple(range(1, rank - 1)) + (0, rank - 1))
    return layout.reshape(y, lead + (out_ch,))


def _channel_last_specs(n_sp):
    """``conv_transpose``'s default: ``("NHWC", "HWIO", "NHWC")`` for two spatial dims."""
    letters = "HWDABEFGJKLMPQRSTUVXYZ"[:n_sp]
    return ("N" + letters + "C", letters + "IO", "N" + letters + "C")


@located
def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with NC... input and OI... kernel and no dilation
    (``jax.lax.conv``).

    >>> conv(np.ones((1, 1, 4, 4)), np.ones((2, 1, 3, 3)), (1, 1), "VALID").shape
    (1, 2, 2, 2)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


@located
def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
    """``conv_general_dilated`` with NC... input and OI... kernel, explicit or string
    padding and dilations (``jax.lax.conv_with_general_padding``)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


@located
def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None,
                                 rhs_dilation=None, dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
    """The patches a convolution of ``filter_shape`` reads, as output features: each input
    feature followed by its window's elements (``jax.lax.conv_general_dilated_patches``),
    JAX's construction, a depthwise convolution with one-hot kernels.

    >>> conv_general_dilated_patches(np.arange(4.0).reshape(1, 1, 4), (2,), (2,), "VALID")
    array([[[0., 2.],
            [1., 3.]]])
    """
    x = layout._as_array(lhs)
    shape, dt = aval_of(x).shape, aval_of(x).dtype
    filter_shape = tuple(operator.index(k) for k in filter_shape)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(shape, (1, 1) + filter_shape,
                                                          dimension_numbers)
    size, channels = math.prod(filter_shape), shape[lhs_spec[1]]
    eye = ew.eq(layout.iota(dtypes.int64, (size, size), 0), layout.iota(dtypes.int64,
                                                                        (size, size), 1))
    eye = ew.convert_element_type(eye, dt)
    w = layout.reshape(layout.broadcast_in_dim(eye, (channels, size, size), (1, 2)),
                       (channels * size, 1) + filter_shape)
    # the (O, I, spatial...) kernel moved to rhs_spec's order
    order = [0] * (len(filter_shape) + 2)
    for j, axis in enumerate(rhs_spec):
        order[axis] = j
    w = layout.transpose(w, tuple(order))
    return conv_general_dilated(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                                (lhs_spec, rhs_spec, out_spec), feature_group_count=channels,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


@located
def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                               precision=None):
    """The unshared (locally connected) convolution: a kernel of its own at each output
    position (``jax.lax.conv_general_dilated_local``): ``rhs``'s spatial dims are the
    output's, its ``I`` dim the input features times the ``filter_shape`` window; JAX's
    construction, the patches contracted with ``rhs`` position by position."""
    x = layout._as_array(lhs)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding,
                                           lhs_dilation, rhs_dilation, dimension_numbers)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        aval_of(x).shape, (1, 1) + tuple(filter_shape), dimension_numbers)
    lhs_b, rhs_b = out_spec[2:], rhs_spec[2:]
    rhs_b = tuple(rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k]))
    lhs_b = tuple(sorted(lhs_b))
    out = contraction.dot_general(patches, layout._as_array(rhs),
                                  (((out_spec[1],), (rhs_spec[1],)), (lhs_b, rhs_b)))
    # out: (spatial..., N, O) -> the output's spec
    rank = aval_of(out).ndim
    canonical = (rank - 2, rank - 1) + tuple(range(rank - 2))
    perm = [0] * rank
    for j, axis in enumerate(out_spec):
        perm[axis] = canonical[j]
    return layout.transpose(out, tuple(perm))


def _transpose_pads(window, strides, padding, dilation):
    """``conv_transpose``'s explicit padding of the dilated input (JAX's rule)."""
    if not isinstance(padding, str):
        return _explicit_pads(padding, len(window), "conv_transpose")
    pads = []
    for k, s, r in zip(window, strides, dilation):
        span = (k - 1) * r + 1
        kind = padding.upper()
        if kind == "SAME":
            total = span + s - 2
            lo = (span - 1) if s > span - 1 else -(-total // 2)
        elif kind == "VALID":
            total = span + s - 2 + builtins.max(span - s, 0)
            lo = span - 1
        else:
            raise ShapeError(f"padding must be 'SAME', 'VALID' or (lo, hi) pairs, got "
                             f"{padding!r}", op="conv_transpose")
        pads.append((lo, total - lo))
    return tuple(pads)


@located
def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None):
    """The transposed ("fractionally strided") convolution of ``jax.lax.conv_transpose``:
    the input dilated by ``strides``, then convolved with stride 1. With
    ``transpose_kernel=True`` it is the gradient of ``conv_general_dilated`` (the kernel
    flipped spatially and its in/out features swapped).

    >>> conv_transpose(np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1)), (2, 2), "SAME",
    ...                dimension_numbers=("NHWC", "HWIO", "NHWC")).shape
    (1, 6, 6, 1)
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if dimension_numbers is None:
        dimension_numbers = _channel_last_specs(la.ndim - 2)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    n_sp = la.ndim - 2
    window = tuple(ra.shape[a] for a in dn.rhs_spec[2:])
    strides = _ints(strides, n_sp, "strides", "conv_transpose")
    rhs_dil = _ints(rhs_dilation, n_sp, "rhs_dilation", "conv_transpose")
    pads = _transpose_pads(window, strides, padding, rhs_dil)
    if transpose_kernel:
        rhs = layout.rev(rhs, dn.rhs_spec[2:])
        spec = list(dn.rhs_spec)
        spec[0], spec[1] = spec[1], spec[0]
        dn = ConvDimensionNumbers(dn.lhs_spec, spec, dn.out_spec)
    return conv_general_dilated(lhs, rhs, (1,) * n_sp, pads, strides, rhs_dil, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


# ---------------------------------------------------------------- output shapes

def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of operands in ``NC...``/``OI...`` order, as
    ``jax.lax.conv_shape_tuple`` (``pads`` a padding string or ``(lo, hi)`` pairs).

    >>> conv_shape_tuple((8, 3, 28, 28), (16, 3, 5, 5), (2, 2), "SAME")
    (8, 16, 14, 14)
    """
    op = "conv_shape_tuple"
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    n_sp = len(lhs_shape) - 2
    strides = _ints(strides, n_sp, "strides", op)
    window = rhs_shape[2:]
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], window, strides, pads)
    pads = _explicit_pads(pads, n_sp, op)
    ones = (1,) * n_sp
    out = _out_sizes(lhs_shape[2:], pads, ones, window, strides, ones, op,
                     f"lhs {lhs_shape}, rhs {rhs_shape}, padding {pads}")
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + out


def _in_conv_order(lhs_shape, rhs_shape, dimension_numbers):
    """Both shapes permuted to ``NC...``/``OI...`` order, and the out spec."""
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    return ([lhs_shape[a] for a in dn.lhs_spec], [rhs_shape[a] for a in dn.rhs_spec],
            dn.out_spec)


def _from_conv_order(shape, out_spec):
    return tuple(int(shape[out_spec.index(axis)]) for axis in range(len(shape)))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
    """The output shape of ``conv_general_dilated`` without dilations, as
    ``jax.lax.conv_general_shape_tuple``.

    >>> conv_general_shape_tuple((8, 28, 28, 3), (5, 5, 3, 16), (1, 1), "VALID",
    ...                          ("NHWC", "HWIO", "NHWC"))
    (8, 24, 24, 16)
    """
    lhs, rhs, out_spec = _in_conv_order(lhs_shape, rhs_shape, dimension_numbers)
    return _from_conv_order(conv_shape_tuple(lhs, rhs, window_strides, padding), out_spec)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
    """The output shape of ``conv_transpose``, as ``jax.lax.conv_transpose_shape_tuple``.

    >>> conv_transpose_shape_tuple((1, 3, 3, 1), (2, 2, 1, 4), (2, 2), "SAME",
    ...                            ("NHWC", "HWIO", "NHWC"))
    (1, 6, 6, 4)
    """
    op = "conv_transpose_shape_tuple"
    lhs, rhs, out_spec = _in_conv_order(lhs_shape, rhs_shape, dimension_numbers)
    n_sp = len(lhs) - 2
    strides = _ints(window_strides, n_sp, "window_strides", op)
    ones = (1,) * n_sp
    pads = _transpose_pads(tuple(rhs[2:]), strides, padding, ones)
    out = _out_sizes(tuple(lhs[2:]), pads, strides, tuple(rhs[2:]), ones, ones, op,
                     f"lhs {tuple(lhs_shape)}, rhs {tuple(rhs_shape)}, padding {pads}")
    return _from_conv_order((lhs[0], rhs[0]) + out, out_spec)


def _window_pads(shape, window, strides, padding, base, wdil, op):
    """``reduce_window``'s ``(lo, hi)`` pairs: a padding string applies to the operand
    dilated by ``base`` and windows dilated by ``wdil``."""
    if not isinstance(padding, str):
        return _explicit_pads(padding, len(shape), op)
    span = [(k - 1) * r + 1 for k, r in zip(window, wdil)]
    dil_shape = [(n - 1) * b + 1 if n else 0 for n, b in zip(shape, base)]
    return tuple(padtype_to_pads(dil_shape, span, strides, padding))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """The output shape of ``reduce_window``, as ``jax.lax.reduce_window_shape_tuple``
    (``padding`` ``(lo, hi)`` pairs, or a padding string); a size that leaves no whole
    window gives 0.

    >>> reduce_window_shape_tuple((8, 28, 28, 3), (1, 2, 2, 1), (1, 2, 2, 1), ((0, 0),) * 4)
    (8, 14, 14, 3)
    """
    op = "reduce_window_shape_tuple"
    shape = tuple(operand_shape)
    rank = len(shape)
    window = _ints(window_dimensions, rank, "window_dimensions", op)
    strides = _ints(window_strides, rank, "window_strides", op)
    base = _ints(base_dilation, rank, "base_dilation", op)
    wdil = _ints(window_dilation, rank, "window_dilation", op)
    pads = _window_pads(shape, window, strides, padding, base, wdil, op)
    # no check of the sizes, as JAX's: stax passes a batch size of -1 for "any", which
    # comes out 0 (and is not read again)
    return windows.window_counts(windows.padded_sizes(shape, pads, base), window, strides,
                                 wdil)


# ---------------------------------------------------------------- reduce_window

@located
def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with ``computation``, as
    ``jax.lax.reduce_window``: windows of ``window_dimensions`` (one per axis) every
    ``window_strides``, ``padding`` as in ``conv_general_dilated``, and ``init_value``
    combined once into every result (padded and dilation-hole elements take no part, as in
    JAX). ``lax.add``, ``lax.max``, ``lax.min`` and ``lax.mul`` are reductions of their
    own; any other associative ``computation`` of two pytrees of scalars (``operand`` and
    ``init_value`` then pytrees too) folds each window pairwise. Differentiable: max/min
    windows pass the cotangent to the element that is the result (shared equally among
    ties).

    >>> reduce_window(np.arange(8.0).reshape(2, 4), -np.inf, max, (1, 2), (1, 2), "VALID")
    array([[1., 3.],
           [5., 7.]])
    """
    op = "reduce_window"
    leaves, tree = pytree.flatten(operand)
    x = layout._as_array(leaves[0])
    aval = aval_of(x)
    rank = aval.ndim
    shape = _concrete(aval.shape, op)
    window = _ints(window_dimensions, rank, "window_dimensions", op)
    strides = _ints(window_strides, rank, "window_strides", op)
    base = _ints(base_dilation, rank, "base_dilation", op)
    wdil = _ints(window_dilation, rank, "window_dilation", op)
    if any(v < 1 for v in strides + base + wdil) or any(v < 0 for v in window):
        raise ShapeError(f"window {window}, strides {strides} and dilations {base}, {wdil} "
                         "must be positive", op=op)
    pads = _window_pads(shape, window, strides, padding, base, wdil, op)
    out = _out_sizes(shape, pads, base, window, strides, wdil, op,
                     f"operand {shape}, padding {pads}")
    found = lax_reductions.monoid(computation) if len(leaves) == 1 else None
    if found is None and not callable(computation):
        raise TfNumbaError(f"the computation is a function of two scalars, or one of "
                           f"'add', 'max', 'min', 'mul'; got {computation!r}", op=op)
    if found is None:
        return _folded_windows(leaves, tree, init_value, computation, window, strides, pads,
                               base, wdil, out)
    binary, reduce, identity = found
    ident = identity(aval.dtype)
    init = _scalar_like(init_value, aval.dtype, op)
    if 0 in out or 0 in window:
        result = layout.full(out, ident, aval.dtype)
    elif all(k == s for k, s in zip(window, strides)) and all(r == 1 for r in wdil + base):
        if any(p != (0, 0) for p in pads):
            x = layout.pad(x, np.asarray(ident, aval.dtype), tuple((lo, hi, 0) for lo, hi in pads))
        result = _tiled_reduce(x, window, out, reduce)
    else:
        # every axis is a spatial one: (1, shape..., 1) -> (1, out..., K, 1)
        x = layout.reshape(x, (1,) + shape + (1,))
        cols = windows.patches(x, window, strides, pads, base, wdil, fill=ident.item()
                               if isinstance(ident, np.generic) else ident)
        result = layout.reshape(reduce(cols, (rank + 1,)), out)
    if not lax_reductions.is_identity(init, ident):
        result = binary(result, layout.broadcast_in_dim(init, aval_of(result).shape, ()))
    return result


def _scalar_like(init, dt, op):
    if isinstance(init, dtypes.WEAK_SCALAR_TYPES) or isinstance(init, np.generic):
        init = np.asarray(init, dt)
    if aval_of(init).shape != () or aval_of(init).dtype != dt:
        raise DTypeError(f"init_value must be a scalar of the operand's dtype {dt.name}, got "
                         f"{aval_of(init)}", op=op)
    return init


def _folded_windows(leaves, tree, init_value, computation, window, strides, pads, base, wdil,
                    out):
    """``reduce_window`` of a general ``computation``: each leaf's windows cut out by
    ``patches`` (the padding and dilation holes, found by the patches of ones, hold
    ``init_value``), folded pairwise over the window axis, then combined with
    ``init_value``."""
    op = "reduce_window"
    inits, init_tree = pytree.flatten(init_value)
    if init_tree != tree:
        raise TfNumbaError(f"init_value must have the operand's structure {tree}, got "
                           f"{init_tree}", op=op)
    xs = [layout._as_array(x) for x in leaves]
    shape = tuple(aval_of(xs[0]).shape)
    inits = [_scalar_like(i, aval_of(x).dtype, op) for i, x in zip(inits, xs)]
    fills = [layout.broadcast_in_dim(i, out, ()) for i in inits]
    combine = lax_reductions.combiner(computation, tree, op)
    if 0 in out or 0 in window:
        return pytree.unflatten(tree, fills)
    size = math.prod(window)

    def columns(x):
        x = layout.reshape(x, (1,) + shape + (1,))
        return layout.reshape(windows.patches(x, window, strides, pads, base, wdil),
                              out + (size,))
    real = ew.ne(columns(layout.full(shape, 1, dtypes.int64)), np.int64(0))
    cols = [ew.select(real, columns(x), i) for x, i in zip(xs, inits)]
    folded = lax_reductions.tree_reduce(combine, cols, len(out))
    return pytree.unflatten(tree, combine(fills, folded))


def _tiled_reduce(x, window, out, reduce):
    """Non-overlapping windows: crop to whole windows, split each windowed axis into
    (out, window) and reduce the window axes, one pass (a fused reduction under jit)."""
    used = [o * k for o, k in zip(out, window)]
    x = layout.slice_(x, [0] * len(used), used)
    split, axes = [], []
    for o, k in zip(out, window):
        split.append(o)
        if k > 1:
            axes.append(len(split))
            split.append(k)
    return reduce(layout.reshape(x, tuple(split)), tuple(axes))
