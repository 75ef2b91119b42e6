"""Window primitives: ``patches`` (im2col) and its transpose ``patches_transpose`` (col2im).

``patches`` takes a channel-last operand ``(N, S_1..S_n, C)``, dilates it (``lhs_dilation``
- 1 elements of ``fill`` between neighbours), pads it (``(lo, hi)`` per spatial dim;
negative ones crop; padding is ``fill``), and returns every window of it: shape
``(N, O_1..O_n, K, C)`` where ``K = prod(window)`` runs over the window offsets in C order
and offset ``k`` of output position ``o`` reads the padded element ``o * stride + k *
rhs_dilation``. A convolution is then one ``dot_general`` of the patches with the kernel
(``tf_numba/windows.py``), a windowed reduction a reduction over the ``K`` axis.

``patches`` with ``fill == 0`` is linear, and ``patches_transpose`` (adding each window
back where it came from) is its transpose and it is linear too: derivative programs stay
in these two primitives and ``dot_general``, to every order. With another ``fill`` (``-inf``
for a max pool) the op is affine: its tangent is ``patches`` of the tangent with
``fill == 0``. Under ``jit``, with one or two spatial dims, each is one call of a
hand-written loop in the kernel (``lowering/loops.py``: ``patches_into``,
``patches_transpose_into``; one function for every stride, padding and dilation), with
more they run their NumPy impls between kernels: one copy loop nest per window offset
generated into the kernel made a 3x3 convolution's gradient take numba tens of seconds
to compile.
"""
import itertools
import math
import operator

import numpy as np

from ..core.ir import ShapedArray
from ..core.linear import Zero, aval_of, instantiate, is_undefined
from ..core.primitive import Primitive, register
from ..core.shapes import Sym
from ..errors import ShapeError
from . import contraction, layout
from . import elementwise as ew

PRIMS = {}


def _declare(name, abstract_eval, impl):
    prim = Primitive(name, abstract_eval, impl)
    PRIMS[name] = prim
    return prim


def padded_sizes(in_sizes, padding, lhs_dilation):
    """Spatial sizes after dilation and padding."""
    return tuple((n - 1) * d + 1 + lo + hi if n else lo + hi
                 for n, (lo, hi), d in zip(in_sizes, padding, lhs_dilation))


def window_counts(padded, window, strides, rhs_dilation):
    """Output positions per spatial dim: windows of span ``(k - 1) * r + 1`` every stride."""
    out = []
    for n, k, s, r in zip(padded, window, strides, rhs_dilation):
        span = (k - 1) * r + 1
        out.append(0 if n < span else (n - span) // s + 1)
    return tuple(out)


def _check(x_shape, window, strides, padding, lhs_dilation, rhs_dilation, op):
    n_sp = len(window)
    if len(x_shape) != n_sp + 2:
        raise ShapeError(f"operand of shape {x_shape} needs rank {n_sp + 2} (batch, "
                         f"{n_sp} spatial dims, channels) for a window of {window}", op=op)
    if not len(strides) == len(padding) == len(lhs_dilation) == len(rhs_dilation) == n_sp:
        raise ShapeError(f"window {window}, strides {strides}, padding {padding} and "
                         f"dilations {lhs_dilation}, {rhs_dilation} need one entry per "
                         "spatial dim", op=op)
    if any(isinstance(d, Sym) for d in x_shape):
        raise ShapeError(f"windows need concrete shapes, got {x_shape}", op=op)
    padded = padded_sizes(x_shape[1:-1], padding, lhs_dilation)
    if any(p < 0 for p in padded):
        raise ShapeError(f"negative padding {padding} removes more than the operand's "
                         f"spatial sizes {x_shape[1:-1]}", op=op)
    return window_counts(padded, window, strides, rhs_dilation)


def _patches_eval(x, *, window, strides, padding, lhs_dilation, rhs_dilation, fill):
    out = _check(x.shape, window, strides, padding, lhs_dilation, rhs_dilation, "patches")
    return ShapedArray((x.shape[0],) + out + (math.prod(window), x.shape[-1]), x.dtype)


def _frame(in_sizes, padding, lhs_dilation):
    """Where the operand sits in the padded array: (extended sizes, the operand's strided
    slices in them, the slices of the extended array that are the padded one). Negative
    padding crops: the extended array has only the non-negative padding."""
    extended, placed, cropped = [], [], []
    for n, (lo, hi), d in zip(in_sizes, padding, lhs_dilation):
        body = (n - 1) * d + 1 if n else 0
        size = max(lo, 0) + body + max(hi, 0)
        extended.append(size)
        placed.append(slice(max(lo, 0), max(lo, 0) + body, d))
        cropped.append(slice(max(-lo, 0), size - max(-hi, 0)))
    return extended, placed, cropped


def _offsets(window, strides, rhs_dilation, out):
    """For each window offset (C order): the spatial slices of the padded array it reads."""
    for offset in itertools.product(*(range(k) for k in window)):
        yield tuple(slice(k * r, k * r + (m - 1) * s + 1 if m else k * r, s)
                    for k, s, r, m in zip(offset, strides, rhs_dilation, out))


def _patches_impl(x, *, window, strides, padding, lhs_dilation, rhs_dilation, fill):
    x = np.asarray(x)
    every = slice(None)
    if all(d == 1 for d in lhs_dilation) and all(lo >= 0 and hi >= 0 for lo, hi in padding):
        padded = np.pad(x, ((0, 0),) + tuple(padding) + ((0, 0),), constant_values=fill) \
            if any(p != (0, 0) for p in padding) else x
    else:
        extended, placed, cropped = _frame(x.shape[1:-1], padding, lhs_dilation)
        buf = np.full((x.shape[0],) + tuple(extended) + (x.shape[-1],), fill, x.dtype)
        buf[(every,) + tuple(placed) + (every,)] = x
        padded = buf[(every,) + tuple(cropped) + (every,)]
    out_sp = window_counts(padded.shape[1:-1], window, strides, rhs_dilation)
    out = np.empty((x.shape[0],) + out_sp + (math.prod(window), x.shape[-1]), x.dtype)
    for k, where in enumerate(_offsets(window, strides, rhs_dilation, out_sp)):
        out[(Ellipsis, k, every)] = padded[(every,) + where + (every,)]
    return out


patches_p = _declare("patches", _patches_eval, _patches_impl)


def _as_params(window, strides, padding, lhs_dilation, rhs_dilation):
    ints = lambda v: tuple(operator.index(d) for d in v)    # noqa: E731
    return dict(window=ints(window), strides=ints(strides),
                padding=tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding),
                lhs_dilation=ints(lhs_dilation), rhs_dilation=ints(rhs_dilation))


@layout.located
def patches(x, window, strides, padding, lhs_dilation, rhs_dilation, fill=0):
    """Every window of the channel-last ``x`` (N, spatial..., C): (N, out..., K, C).

    >>> patches(np.arange(4.0).reshape(1, 4, 1), (2,), (2,), ((0, 0),), (1,), (1,))[0, :, :, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    return patches_p.bind(x, **_as_params(window, strides, padding, lhs_dilation, rhs_dilation),
                          fill=fill)


def _patches_transpose_eval(ct, *, in_shape, window, strides, padding, lhs_dilation,
                            rhs_dilation):
    out = _check(in_shape, window, strides, padding, lhs_dilation, rhs_dilation,
                 "patches_transpose")
    want = (in_shape[0],) + out + (math.prod(window), in_shape[-1])
    if tuple(ct.shape) != want:
        raise ShapeError(f"patches of an operand of shape {in_shape} have shape {want}, "
                         f"got {ct.shape}", op="patches_transpose")
    return ShapedArray(tuple(in_shape), ct.dtype)


def _patches_transpose_impl(ct, *, in_shape, window, strides, padding, lhs_dilation,
                            rhs_dilation):
    ct = np.asarray(ct)
    every = slice(None)
    extended, placed, cropped = _frame(in_shape[1:-1], padding, lhs_dilation)
    buf = np.zeros((in_shape[0],) + tuple(extended) + (in_shape[-1],), ct.dtype)
    padded = buf[(every,) + tuple(cropped) + (every,)]
    out_sp = ct.shape[1:-2]
    for k, where in enumerate(_offsets(window, strides, rhs_dilation, out_sp)):
        padded[(every,) + where + (every,)] += ct[(Ellipsis, k, every)]
    return np.ascontiguousarray(buf[(every,) + tuple(placed) + (every,)])


patches_transpose_p = _declare("patches_transpose", _patches_transpose_eval,
                               _patches_transpose_impl)


def _patches_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    ans = patches_p.bind(x, **params)
    if type(t) is Zero:
        return ans, Zero(aval_of(ans))
    return ans, patches_p.bind(instantiate(t), **dict(params, fill=0))


def _patches_transpose(ct, x, *, fill, **params):
    if fill != 0:
        raise NotImplementedError("patches with a nonzero fill is affine, not linear; its "
                                  "tangents use fill 0")
    return [patches_transpose_p.bind(instantiate(ct), in_shape=tuple(x.aval.shape), **params)]


def _patches_transpose_transpose(ct, c, *, in_shape, **params):
    return [patches_p.bind(instantiate(ct), fill=0, **params)]


def _patches_transpose_jvp(primals, tangents, **params):
    (c,), (t,) = primals, tangents
    ans = patches_transpose_p.bind(c, **params)
    if type(t) is Zero:
        return ans, Zero(aval_of(ans))
    return ans, patches_transpose_p.bind(instantiate(t), **params)


register("jvp", patches_p, _patches_jvp)
register("transpose", patches_p, _patches_transpose)
register("jvp", patches_transpose_p, _patches_transpose_jvp)
register("transpose", patches_transpose_p, _patches_transpose_transpose)


# ---------------------------------------------------------------- batching
# Windows of different examples never mix: the vmapped axis joins the batch axis N.

def _merged(x, d):
    shape = aval_of(x).shape
    x = layout.transpose(x, (d,) + tuple(a for a in range(len(shape)) if a != d))
    return layout.reshape(x, (shape[d] * aval_of(x).shape[1],) + aval_of(x).shape[2:]), shape[d]


def _split(y, size):
    shape = aval_of(y).shape
    return layout.reshape(y, (size, shape[0] // size) + shape[1:]), 0


def _patches_batch(args, dims, **params):
    (x,), (d,) = args, dims
    merged, size = _merged(x, d)
    return _split(patches_p.bind(merged, **params), size)


def _patches_transpose_batch(args, dims, *, in_shape, **params):
    (c,), (d,) = args, dims
    merged, size = _merged(c, d)
    in_shape = (size * in_shape[0],) + tuple(in_shape[1:])
    return _split(patches_transpose_p.bind(merged, in_shape=in_shape, **params), size)


register("batch", patches_p, _patches_batch)
register("batch", patches_transpose_p, _patches_transpose_batch)


# ---------------------------------------------------------------- col2im of a product
# A convolution's input gradient is col2im of the product of the output's cotangent with
# the kernel: (N, out..., F) . (K, C, F) -> (N, out..., K, C), K times the input's size.
# ``product_patches_transpose`` is the two as one step, made by the lowering rewrite
# ``fuse_product_into_patches_transpose`` (``lowering/rewrites.py``) so that
# the compiled loop multiplies and adds back a few examples at a time while their
# product is in cache (a 64x14x14x16 3x3 layer: 0.80 -> 0.68 ms on two threads).

def _product_patches_transpose_eval(g, w, *, in_shape, **frame):
    want = tuple(g.shape[:-1]) + tuple(w.shape[:2])
    if len(w.shape) != 3 or g.shape[-1] != w.shape[2]:
        raise ShapeError(f"a cotangent of shape {g.shape} and a kernel of shape {w.shape} "
                         "must be (N, out..., F) and (K, C, F)", op="product_patches_transpose")
    return _patches_transpose_eval(ShapedArray(want, g.dtype), in_shape=in_shape, **frame)


def _product_of(g, w):
    """(N, out..., F) . (K, C, F) -> (N, out..., K, C), dot_general's bits."""
    return contraction.dot_general_p.impl(g, w, dimension_numbers=(((g.ndim - 1,), (2,)),
                                                                   ((), ())),
                                          preferred_element_type=None)


def _product_patches_transpose_impl(g, w, **params):
    return _patches_transpose_impl(_product_of(np.asarray(g), np.asarray(w)), **params)


product_patches_transpose_p = _declare("product_patches_transpose",
                                       _product_patches_transpose_eval,
                                       _product_patches_transpose_impl)


def _product_patches_transpose_jvp(primals, tangents, **params):
    (g, w), (tg, tw) = primals, tangents
    ans = product_patches_transpose_p.bind(g, w, **params)
    terms = []
    if type(tg) is not Zero:
        terms.append(product_patches_transpose_p.bind(instantiate(tg), w, **params))
    if type(tw) is not Zero:
        terms.append(product_patches_transpose_p.bind(g, instantiate(tw), **params))
    if not terms:
        return ans, Zero(aval_of(ans))
    return ans, terms[0] if len(terms) == 1 else ew.add(*terms)


def _product_patches_transpose_transpose(ct, g, w, *, in_shape, **frame):
    """Bilinear: the patches of ``ct`` contracted with the kernel (for ``g``) or with
    ``g`` over the examples and positions (for ``w``)."""
    if is_undefined(g) and is_undefined(w):
        raise NotImplementedError("product_patches_transpose is bilinear: it transposes in "
                                  "one operand at a time")
    cols = patches_p.bind(instantiate(ct), fill=0, **frame)
    rank = len(aval_of(cols).shape)                     # (N, out..., K, C)
    if is_undefined(g):
        dims = (((rank - 2, rank - 1), (0, 1)), ((), ()))
        return [contraction.dot_general(cols, w, dims), None]
    lead = tuple(range(rank - 2))
    return [None, contraction.dot_general(cols, g, ((lead, lead), ((), ())))]


register("jvp", product_patches_transpose_p, _product_patches_transpose_jvp)
register("transpose", product_patches_transpose_p, _product_patches_transpose_transpose)
