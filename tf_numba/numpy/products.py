"""Products of arrays: dot, matmul, inner, outer, tensordot, vdot, trace, kron, cross.

Contractions become one ``dot_general`` after NumPy promotion (bool products are logical:
computed in int64 and compared with zero, as NumPy's or-of-ands).

>>> tnp.matmul(np.ones((2, 3), np.float32), np.ones(3)).dtype
dtype('float64')
"""
import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import broadcast_shapes
from ..core.trace import Tracer
from ..errors import ArgumentError, ShapeError
from ..ext import einsum as E
from ..ops import contraction
from ..ops import elementwise as ew
from ..ops import layout
from . import _promote as P

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "trace", "kron", "cross",
           "vecdot", "matvec", "vecmat"]     # (and einsum, imported by name in __init__)


_shape = P.shape_of
_ARRAY_TYPES = (Tracer, np.ndarray)


def _operands(name, a, b):
    """Both operands as arrays of their promoted dtype (shapes untouched)."""
    if (type(a) in _ARRAY_TYPES and type(b) in _ARRAY_TYPES and a.dtype == b.dtype
            and a.dtype in dtypes.SUPPORTED):
        return [a, b]       # the common case: nothing to convert
    xs = [P.asarray(a), P.asarray(b)]
    dt = P.result_type(*xs)
    return [P.cast(x, dt) for x in xs]


def _contract(a, b, dims, preferred=None):
    """``dot_general`` with NumPy's bool semantics (or of ands), accumulating in
    ``preferred`` (JAX's ``preferred_element_type``) when given."""
    if dtypes.is_bool(aval_of(a).dtype) and preferred is None:
        out = contraction.dot_general(ew.convert_element_type(a, dtypes.int64),
                                      ew.convert_element_type(b, dtypes.int64), dims)
        return ew.ne(out, np.asarray(0, np.int64))
    return contraction.dot_general(a, b, dims, preferred)


def _jax_options(name, precision, preferred_element_type):
    """JAX's ``precision`` (checked, then nothing to do on a CPU) and
    ``preferred_element_type`` (the dtype to accumulate in and return, or None)."""
    contraction.check_precision(precision, name)
    return None if preferred_element_type is None else dtypes.canonical(preferred_element_type)


def _as_preferred(x, preferred):
    return x if preferred is None else ew.convert_element_type(x, preferred)


def _check_contract(name, a, b, i, j):
    sa, sb = _shape(a), _shape(b)
    if sa[i] != sb[j]:
        raise ShapeError(f"shapes {sa} and {sb} not aligned: {sa[i]} (dim {i % len(sa)}) != "
                         f"{sb[j]} (dim {j % len(sb)})", op=name)


def _multiply(a, b):
    from .math import multiply
    return multiply(a, b)


def matmul(x1, x2, /, out=None, *, dtype=None, precision=None, preferred_element_type=None):
    """Matrix product with broadcast batch dims, as ``numpy.matmul`` (``@``); JAX's
    ``precision`` (accepted: products run in their dtype here) and
    ``preferred_element_type`` (the dtype to accumulate in and return) too.

    >>> tnp.matmul(np.ones((4, 2, 3)), np.ones((3, 5))).shape
    (4, 2, 5)
    """
    P.check_unsupported("matmul", out=(out, None))
    preferred = _jax_options("matmul", precision, preferred_element_type)
    a, b = _operands("matmul", x1, x2)
    if dtype is not None:
        a, b = P.cast(a, dtypes.canonical(dtype)), P.cast(b, dtypes.canonical(dtype))
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ShapeError(f"Input operand {0 if not sa else 1} does not have enough "
                         "dimensions (scalars are not allowed; use multiply)", op="matmul")
    la, lb = len(sa), len(sb)
    if sa[-1] != sb[max(lb - 2, 0)]:
        raise ShapeError(f"Input operand 1 has a mismatch in its core dimension 0 (size "
                         f"{sb[max(lb - 2, 0)]} is different from {sa[-1]}); shapes {sa} and "
                         f"{sb}", op="matmul")
    if lb == 1 or la == 1 or lb == 2:
        # no batch dims to pair up: dot_general's (lhs free, rhs free) is matmul's order
        out = _contract(a, b, (((la - 1,), (max(lb - 2, 0),)), ((), ())), preferred)
        return P.scalar_result(out)
    batch = broadcast_shapes(sa[:-2], sb[:-2], op="matmul")
    nb = len(batch)
    a = P.broadcast_to(a, batch + sa[-2:], "matmul")
    b = P.broadcast_to(b, batch + sb[-2:], "matmul")
    out = _contract(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                    preferred)
    return P.scalar_result(out)


def dot(a, b, out=None, *, precision=None, preferred_element_type=None):
    """Dot product, as ``numpy.dot``: sum over the last axis of ``a`` and the second-to-last
    of ``b`` (the only one for 1-D ``b``); scalars multiply. JAX's ``precision`` and
    ``preferred_element_type`` as ``matmul``'s.

    >>> tnp.dot(np.ones((2, 3)), np.ones((4, 3, 5))).shape
    (2, 4, 5)
    """
    P.check_unsupported("dot", out=(out, None))
    preferred = _jax_options("dot", precision, preferred_element_type)
    x, y = _operands("dot", a, b)
    sx, sy = _shape(x), _shape(y)
    if not sx or not sy:
        return _as_preferred(_multiply(x, y), preferred)
    j = 0 if len(sy) == 1 else len(sy) - 2
    _check_contract("dot", x, y, len(sx) - 1, j)
    return P.scalar_result(_contract(x, y, (((len(sx) - 1,), (j,)), ((), ())), preferred))


def vdot(a, b, /, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating the first, as ``numpy.vdot``
    (JAX's ``precision`` and ``preferred_element_type`` as ``matmul``'s).

    >>> tnp.vdot(np.array([1j, 2]), np.array([1j, 1]))
    np.complex128(3+0j)
    """
    from .math import conj
    preferred = _jax_options("vdot", precision, preferred_element_type)
    x, y = _operands("vdot", a, b)
    if dtypes.is_complex(aval_of(x).dtype):
        x = conj(x)
    x, y = layout.reshape(x, (-1,)), layout.reshape(y, (-1,))
    if _shape(x) != _shape(y):
        raise ShapeError(f"vectors have different lengths: {_shape(x)} and {_shape(y)}",
                         op="vdot")
    return P.scalar_result(_contract(x, y, (((0,), (0,)), ((), ())), preferred))


def inner(a, b, /, *, precision=None, preferred_element_type=None):
    """Sum over the last axes of ``a`` and ``b``, as ``numpy.inner`` (JAX's ``precision``
    and ``preferred_element_type`` as ``matmul``'s).

    >>> tnp.inner(np.ones((2, 3)), np.ones((4, 3))).shape
    (2, 4)
    """
    preferred = _jax_options("inner", precision, preferred_element_type)
    x, y = _operands("inner", a, b)
    sx, sy = _shape(x), _shape(y)
    if not sx or not sy:
        return _as_preferred(_multiply(x, y), preferred)
    _check_contract("inner", x, y, -1, -1)
    return P.scalar_result(_contract(x, y, (((len(sx) - 1,), (len(sy) - 1,)), ((), ())),
                                     preferred))


def outer(a, b, out=None):
    """``a.ravel()[:, None] * b.ravel()[None, :]``, as ``numpy.outer``.

    >>> tnp.outer(np.arange(2), np.arange(3)).shape
    (2, 3)
    """
    P.check_unsupported("outer", out=(out, None))
    x = layout.reshape(P.asarray(a) if not P.is_weak(a) else np.asarray(a), (-1, 1))
    y = layout.reshape(P.asarray(b) if not P.is_weak(b) else np.asarray(b), (1, -1))
    return _multiply(x, y)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    """Sum over the last ``axes`` axes of ``a`` and the first of ``b`` (or the given axis
    lists), as ``numpy.tensordot`` (JAX's ``precision`` and ``preferred_element_type`` as
    ``matmul``'s).

    >>> tnp.tensordot(np.ones((2, 3, 4)), np.ones((3, 4, 5))).shape
    (2, 5)
    """
    preferred = _jax_options("tensordot", precision, preferred_element_type)
    x, y = _operands("tensordot", a, b)
    sx, sy = _shape(x), _shape(y)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > len(sx) or n > len(sy):
            raise ShapeError(f"axes={n} is out of range for shapes {sx} and {sy}",
                             op="tensordot")
        ax_a, ax_b = list(range(len(sx) - n, len(sx))), list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    if len(ax_a) != len(ax_b):
        raise ShapeError("shape-mismatch for sum: the axis lists differ in length",
                         op="tensordot")
    for shape, listed in ((sx, ax_a), (sy, ax_b)):
        if listed and not shape:
            raise ShapeError(f"axes {listed} of a 0-d operand: it has no axis to contract",
                             op="tensordot")
    ax_a = [P.axis_arg(i, len(sx), "tensordot") for i in ax_a]
    ax_b = [P.axis_arg(i, len(sy), "tensordot") for i in ax_b]
    for i, j in zip(ax_a, ax_b):
        if sx[i] != sy[j]:
            raise ShapeError(f"shape-mismatch for sum: shapes {sx} and {sy} differ on axes "
                             f"{i} and {j}", op="tensordot")
    return _contract(x, y, ((tuple(ax_a), tuple(ax_b)), ((), ())), preferred)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal, as ``numpy.trace`` (int32 sums in int64).

    >>> tnp.trace(np.arange(9).reshape(3, 3))
    np.int64(12)
    """
    from .manipulation import diagonal
    from .reductions import sum as sum_
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def kron(a, b):
    """The Kronecker product, as ``numpy.kron``.

    >>> tnp.kron(np.eye(2), np.ones((1, 2))).shape
    (2, 4)
    """
    x, y = _operands("kron", a, b)
    sx, sy = _shape(x), _shape(y)
    n = max(len(sx), len(sy))
    sx, sy = (1,) * (n - len(sx)) + sx, (1,) * (n - len(sy)) + sy
    x = layout.reshape(x, tuple(d for s in sx for d in (s, 1)))
    y = layout.reshape(y, tuple(d for s in sy for d in (1, s)))
    return layout.reshape(_multiply(x, y), tuple(p * q for p, q in zip(sx, sy)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (a 2-vector counts as having z = 0), as
    ``numpy.cross``; other dims broadcast.

    >>> tnp.cross(np.array([1, 0, 0]), np.array([0, 1, 0]))
    array([0, 0, 1])
    """
    from .manipulation import moveaxis
    from .math import multiply, negative, subtract
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _operands("cross", a, b)
    x = moveaxis(x, axisa, -1)
    y = moveaxis(y, axisb, -1)
    na, nb = _shape(x)[-1], _shape(y)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError(f"incompatible dimensions for cross product (dimension must be 2 "
                         f"or 3), got {na} and {nb}", op="cross")

    def part(v, i):
        k = len(_shape(v)) - 1
        return layout.squeeze(layout.slice_in_dim(v, i, i + 1, 1, k), (k,))

    a0, a1 = part(x, 0), part(x, 1)
    b0, b1 = part(y, 0), part(y, 1)
    cp2 = subtract(multiply(a0, b1), multiply(a1, b0))
    if na == 2 and nb == 2:
        return cp2 if P.is_tracer(cp2) else np.asarray(cp2)
    if na == 2:
        b2 = part(y, 2)
        cp0, cp1 = multiply(a1, b2), negative(multiply(a0, b2))
    elif nb == 2:
        a2 = part(x, 2)
        cp0, cp1 = negative(multiply(a2, b1)), multiply(a2, b0)
    else:
        a2, b2 = part(x, 2), part(y, 2)
        cp0 = subtract(multiply(a1, b2), multiply(a2, b1))
        cp1 = subtract(multiply(a2, b0), multiply(a0, b2))
    from .manipulation import broadcast_arrays, stack
    comps = broadcast_arrays(cp0, cp1, cp2)
    result = stack(comps, axis=-1)
    return moveaxis(result, -1, axisc)


def vecdot(x1, x2, /, *, axis=-1):
    """``sum(conj(x1) * x2, axis)`` with broadcasting, as ``numpy.vecdot``.

    >>> tnp.vecdot(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    from .manipulation import moveaxis
    from .math import conj
    x, y = _operands("vecdot", x1, x2)
    x = moveaxis(conj(x), axis, -1)
    y = moveaxis(y, axis, -1)
    x = layout.expand_dims(x, (len(_shape(x)) - 1,))
    y = layout.expand_dims(y, (len(_shape(y)),))
    out = P.asarray(matmul(x, y))
    s = P.shape_of(out)
    return P.scalar_result(layout.reshape(out, s[:-2]))


def matvec(x1, x2, /):
    """Matrix-vector product with broadcast batch dims, as ``numpy.matvec``.

    >>> tnp.matvec(np.ones((2, 3)), np.ones(3))
    array([3., 3.])
    """
    v = P.asarray(x2)
    out = P.asarray(matmul(x1, layout.expand_dims(v, (len(P.shape_of(v)),))))
    return layout.reshape(out, P.shape_of(out)[:-1])


def vecmat(x1, x2, /):
    """Vector-matrix product ``conj(x1) @ x2`` with broadcast batch dims, as
    ``numpy.vecmat``.

    >>> tnp.vecmat(np.ones(2), np.ones((2, 3)))
    array([2., 2., 2.])
    """
    from .math import conj
    v = P.asarray(conj(x1))
    out = P.asarray(matmul(layout.expand_dims(v, (len(P.shape_of(v)) - 1,)), x2))
    s = P.shape_of(out)
    return layout.reshape(out, s[:-2] + s[-1:])


def einsum(*operands, optimize="auto", dtype=None, out=None, order="K", casting="safe",
           precision=None, preferred_element_type=None):
    """Einstein summation over ``operands``, as ``numpy.einsum``.

    The operands are promoted to one dtype, then contracted by the family
    ``tf_numba.einsum.v1`` (``ext/einsum.py``). Implicit (``"ij,jk"``) and explicit
    (``"ij,jk->ik"``) output, ``...``, repeated labels (``"ii->i"``, ``"ii"``), size-1
    broadcasting and the sublist form are supported. ``optimize`` picks the contraction
    order (see ``ext/einsum.py``). JAX's ``precision`` is accepted (products run in their
    dtype here) and its ``preferred_element_type`` is the dtype to compute in and return,
    as ``dtype``.

    >>> tnp.einsum("ii", np.eye(3))
    np.float64(3.0)
    """
    P.check_unsupported("einsum", out=(out, None), order=(order, "K"))
    contraction.check_precision(precision, "einsum")
    if preferred_element_type is not None:
        if dtype is not None and dtypes.canonical(dtype) != dtypes.canonical(
                preferred_element_type):
            raise ArgumentError(f"dtype {dtype} and preferred_element_type "
                                f"{preferred_element_type} disagree; give one", op="einsum")
        dtype = preferred_element_type
    subscripts, arrays = E.split_args(operands)
    xs = [P.asarray(x) for x in arrays]
    dt = P.result_type(*xs)
    xs = [P.cast(x, dt) for x in xs]
    if dtype is not None:
        dt = dtypes.canonical(dtype)
        xs = [P.cast(x, dt) for x in xs]
    return P.scalar_result(E.contract(subscripts, xs, dt, optimize))
