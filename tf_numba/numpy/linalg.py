"""``tnp.linalg``: ``numpy.linalg`` on the ops of family ``tf_numba.linalg.v1`` (``ext/linalg.py``).

Signatures, result types and batching follow NumPy 2: leading dims are stacks of matrices,
integer inputs compute in float64, 0-d results come back as NumPy scalars. Every function
is differentiable (see ``ext/linalg.py`` for the rules and their conventions).

>>> import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
>>> tf.grad(lambda a: tnp.linalg.slogdet(a)[1])(2 * np.eye(2))
array([[0.5, 0. ],
       [0. , 0.5]])

Departures: ``eig`` and ``eigvals`` always return complex arrays (NumPy returns real ones
when every eigenvalue happens to be real, which a traced program cannot know; JAX does the
same as here); ``svd(..., hermitian=True)`` computes a general SVD (same singular values, the
vectors may differ in sign from NumPy's eigh-based ones); ``lstsq`` on traced inputs
returns the residuals of a full-rank fit (NumPy drops them when the rank is deficient,
which a traced program cannot know in advance).
"""
import builtins
from collections import namedtuple

import numpy as np

from ..core import dtypes
from ..core.shapes import broadcast_shapes
from ..errors import ArgumentError, ShapeError, UnsupportedError
from ..ext import linalg as L
from ..ops import elementwise as ew
from . import _promote as P

__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "qr", "eig", "eigvals", "eigh",
           "eigvalsh", "svd", "svdvals", "norm", "vector_norm", "matrix_norm", "pinv", "lstsq",
           "matrix_power", "tensorsolve", "tensorinv", "cond", "matrix_rank", "LinAlgError",
           "cross", "diagonal", "matmul", "matrix_transpose", "multi_dot", "outer", "tensordot",
           "trace", "vecdot"]

LinAlgError = np.linalg.LinAlgError


class LinAlgShapeError(ShapeError, LinAlgError):
    """Operands of a shape linalg cannot take (not matrices, not square): NumPy's
    ``LinAlgError``, as NumPy raises, and a ``ShapeError`` of tf_numba's."""

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
LstsqResult = namedtuple("LstsqResult", ["x", "residuals", "rank", "s"])


def _tnp():
    from .. import numpy as tnp
    return tnp


_shape = P.shape_of


def inexact(*xs):
    """The operands as arrays of one float or complex dtype (ints and bools as float64)."""
    xs = [P.asarray(x) for x in xs]
    for x in xs:
        if P.is_weak(x):
            raise ShapeError("the operands must be arrays, got a Python scalar",
                             op="linalg")
    dt = dtypes.inexact_of(P.result_type(*xs))
    return [P.cast(x, dt) for x in xs]


def _matrices(name, a, square=True):
    s = _shape(a)
    if len(s) < 2:
        raise LinAlgShapeError(f"{len(s)}-dimensional array given. Array must be at least "
                               f"two-dimensional ({name})")
    if square and s[-1] != s[-2]:
        raise LinAlgShapeError(f"Last 2 dimensions of the array must be square ({name}: {s})")


def _broadcast_batch(name, a, b, b_core):
    sa, sb = _shape(a), _shape(b)
    batch = broadcast_shapes(sa[:-2], sb[:len(sb) - b_core], op=name)
    tnp = _tnp()
    if sa[:-2] != batch:
        a = tnp.broadcast_to(a, batch + sa[-2:])
    if sb[:len(sb) - b_core] != batch:
        b = tnp.broadcast_to(b, batch + sb[len(sb) - b_core:])
    return a, b


def solve(a, b):
    """``x`` with ``a @ x == b``; ``b`` is a vector if 1-D, else a stack of matrices.

    >>> tnp.linalg.solve(2 * np.eye(2), np.ones(2))
    array([0.5, 0.5])
    """
    a, b = inexact(a, b)
    _matrices("solve", a)
    vector = len(_shape(b)) == 1
    if vector:
        b = _tnp().expand_dims(b, -1)
    a, b = _broadcast_batch("solve", a, b, 2)
    x = L.solve(a, b)
    return x[..., 0] if vector else x


def inv(a):
    """The inverse of each square matrix of ``a``."""
    (a,) = inexact(a)
    _matrices("inv", a)
    return L.inv(a)


def det(a):
    """Determinants of the square matrices of ``a``."""
    (a,) = inexact(a)
    _matrices("det", a)
    return P.scalar_result(L.det(a))


def slogdet(a):
    """``(sign, logabsdet)`` with ``det(a) == sign * exp(logabsdet)``."""
    (a,) = inexact(a)
    _matrices("slogdet", a)
    sign, logdet = L.slogdet(a)
    return SlogdetResult(P.scalar_result(sign), P.scalar_result(logdet))


def cholesky(a, /, *, upper=False):
    """Lower (or ``upper``) Cholesky factor; reads the lower triangle of ``a``."""
    (a,) = inexact(a)
    _matrices("cholesky", a)
    low = L.cholesky(a)
    return L._H(low) if upper else low


def qr(a, mode="reduced"):
    """``(Q, R)`` for ``mode`` 'reduced' or 'complete'; ``R`` alone for 'r'."""
    (a,) = inexact(a)
    _matrices("qr", a, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise UnsupportedError(f"mode {mode!r} is not supported; use 'reduced', "
                               "'complete' or 'r'", op="qr")
    q, r = L.qr(a, full=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _lower(uplo):
    if uplo not in ("L", "U"):
        raise ArgumentError(f"UPLO argument must be 'L' or 'U', got {uplo!r}")
    return uplo == "L"


def eig(a):
    """Eigenvalues and right eigenvectors (unit-norm columns) of general square matrices,
    complex. Differentiable where the eigenvalues are distinct (``ext/linalg.py``); the
    derivative of each eigenvector keeps its norm, and its phase is LAPACK's, so losses
    should not depend on the phase (``abs(v)``, ``v v^-1``-type products do not).

    >>> tnp.linalg.eig(np.array([[2.0, 1.0], [0.0, 3.0]])).eigenvalues
    array([2.+0.j, 3.+0.j])
    """
    (a,) = inexact(a)
    _matrices("eig", a)
    w, v = L.eig(a)
    return EigResult(w, v)


def eigvals(a):
    """Eigenvalues of general square matrices, complex; derivative ``diag(V^-1 dA V)``."""
    (a,) = inexact(a)
    _matrices("eigvals", a)
    return L.eigvals(a)


def eigh(a, UPLO="L"):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, from the ``UPLO``
    triangle."""
    (a,) = inexact(a)
    _matrices("eigh", a)
    w, v = L.eigh(a, _lower(UPLO))
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    (a,) = inexact(a)
    _matrices("eigvalsh", a)
    return L.eigvalsh(a, _lower(UPLO))


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``(U, S, Vh)`` with ``a == U[..., :k] * S @ Vh[..., :k, :]``, or ``S`` alone."""
    (a,) = inexact(a)
    _matrices("svd", a, square=False)
    if not compute_uv:
        return L.svdvals(a)
    u, s, vh = L.svd(a, full_matrices=bool(full_matrices))
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """Singular values, descending."""
    (x,) = inexact(x)
    _matrices("svdvals", x, square=False)
    return L.svdvals(x)


def _vector_norm(x, ord, axes, keepdims):
    tnp = _tnp()
    mag = tnp.abs(x)
    if ord is None or ord == 2:
        out = tnp.sqrt(tnp.sum(tnp.real(x * tnp.conj(x)) if dtypes.is_complex(x.dtype)
                               else x * x, axis=axes, keepdims=keepdims))
    elif ord == np.inf:
        out = tnp.max(mag, axis=axes, keepdims=keepdims)
    elif ord == -np.inf:
        out = tnp.min(mag, axis=axes, keepdims=keepdims)
    elif ord == 0:
        out = tnp.sum(tnp.not_equal(x, 0).astype(mag.dtype), axis=axes, keepdims=keepdims)
    elif ord == 1:
        out = tnp.sum(mag, axis=axes, keepdims=keepdims)
    else:
        out = tnp.sum(mag ** ord, axis=axes, keepdims=keepdims) ** (1.0 / ord)
    return out


def _matrix_norm(x, ord, axes, keepdims):
    tnp = _tnp()
    rank = len(_shape(x))
    row, col = (a % rank for a in axes)
    if row == col:
        raise ShapeError("Duplicate axes given.", op="norm")
    if ord in (None, "fro", "f"):
        out = _vector_norm(x, None, (row, col), keepdims)
    elif ord in ("nuc", 2, -2):
        s = L.svdvals(tnp.moveaxis(x, (row, col), (-2, -1)))
        out = {"nuc": lambda: tnp.sum(s, axis=-1), 2: lambda: tnp.max(s, axis=-1),
               -2: lambda: tnp.min(s, axis=-1)}[ord]()
        if keepdims:
            out = tnp.expand_dims(out, tuple(sorted((row, col))))
    elif ord in (1, -1, np.inf, -np.inf):
        summed, reduce_axis = (row, col) if ord in (1, -1) else (col, row)
        sums = tnp.sum(tnp.abs(x), axis=summed, keepdims=True)
        pick = tnp.max if ord in (1, np.inf) else tnp.min
        out = pick(sums, axis=reduce_axis, keepdims=True)
        if not keepdims:
            out = tnp.squeeze(out, (row, col))
    else:
        raise ArgumentError(f"Invalid norm order {ord!r} for matrices.", op="norm")
    return out


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as ``numpy.linalg.norm``.

    >>> tnp.linalg.norm(np.array([3.0, 4.0]))
    np.float64(5.0)
    """
    (x,) = inexact(x)
    rank = len(_shape(x))
    if axis is None:
        if ord is None:
            axes = tuple(range(rank))
            return P.scalar_result(_vector_norm(x, None, axes if rank else None, keepdims))
        if rank == 1:
            axis = (0,)
        elif rank == 2:
            axis = (0, 1)
        else:
            raise ShapeError("Improper number of dimensions to norm.", op="norm")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ArgumentError(f"Invalid norm order '{ord}' for vectors", op="norm")
        return P.scalar_result(_vector_norm(x, ord, axes, keepdims))
    if len(axes) == 2:
        return P.scalar_result(_matrix_norm(x, ord, axes, keepdims))
    raise ShapeError("Improper number of dimensions to norm.", op="norm")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    (x,) = inexact(x)
    axes = tuple(range(len(_shape(x)))) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    return P.scalar_result(_vector_norm(x, ord, axes, keepdims))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    (x,) = inexact(x)
    return P.scalar_result(_matrix_norm(x, ord, (-2, -1), keepdims))


def _pinv_rcond(rcond, rtol, shape, dt):
    if rcond is not None and rtol is not None:
        raise ArgumentError("`rtol` and `rcond` can't be both set.", op="pinv")
    value = rtol if rcond is None else rcond
    if value is None:
        if rtol is None and rcond is None:
            return 1e-15
        return builtins.max(shape[-2:]) * float(np.finfo(dt).eps)
    if P.is_tracer(value):
        raise UnsupportedError("needs a concrete rcond/rtol", op="pinv")
    return float(value)


_NO_VALUE = object()


def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """Moore-Penrose pseudo-inverse; singular values below ``rcond * max(s)`` are dropped."""
    (a,) = inexact(a)
    _matrices("pinv", a, square=False)
    explicit_rtol = rtol is not _NO_VALUE
    if explicit_rtol and rtol is None and rcond is None:
        cut = builtins.max(_shape(a)[-2:]) * float(np.finfo(a.dtype).eps)
    else:
        cut = _pinv_rcond(rcond, rtol if explicit_rtol else None, _shape(a), a.dtype)
    return L.pinv(a, cut)


def lstsq(a, b, rcond=None):
    """``(x, residuals, rank, s)`` minimizing ``||b - a x||``, as ``numpy.linalg.lstsq``."""
    tnp = _tnp()
    a, b = inexact(a, b)
    sa, sb = _shape(a), _shape(b)
    if len(sa) != 2 or len(sb) not in (1, 2) or sb[0] != sa[0]:
        raise LinAlgShapeError(f"needs a 2-D a and a 1-D or 2-D b with matching rows, got "
                               f"{sa} and {sb}", op="lstsq")
    m, n = sa
    cut = float(np.finfo(a.dtype).eps) * builtins.max(m, n) if rcond is None else float(rcond)
    x = tnp.matmul(L.pinv(a, cut), b)
    s = L.svdvals(a)
    real = dtypes.real_part(a.dtype)
    if P.is_tracer(s):
        rank = tnp.sum(s > cut * s[0]) if sa[0] and sa[1] else 0
        full = True
    else:
        rank = int(np.sum(s > cut * s[0])) if s.size else 0
        full = rank == n
    if m > n and full:
        r = tnp.subtract(b, tnp.matmul(a, x))
        residuals = tnp.sum(tnp.abs(r) ** 2, axis=0)
        if len(sb) == 1:
            residuals = tnp.reshape(residuals, (1,))
    else:
        residuals = np.empty((0,), real)
    return LstsqResult(x, residuals, rank, s)


def matrix_power(a, n):
    """``a`` multiplied by itself ``n`` times (``n < 0``: of its inverse), by squaring."""
    tnp = _tnp()
    a = P.asarray(a)
    _matrices("matrix_power", a)
    n = P.concrete_int(n, "matrix_power", "n")
    if n == 0:
        s = _shape(a)
        return tnp.broadcast_to(np.eye(s[-1], dtype=a.dtype), s)
    if n < 0:
        (a,) = inexact(a)
        a, n = L.inv(a), -n
    return ew.power_by_squaring(a, n, tnp.matmul)


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a, x, x.ndim) == b``, as ``numpy.linalg.tensorsolve``: ``a``'s
    leading ``b.ndim`` axes against its trailing ones, reshaped to one square solve."""
    tnp = _tnp()
    a, b = inexact(a, b)
    if axes is not None:
        axes = [ax % len(_shape(a)) for ax in (axes if np.iterable(axes) else [axes])]
        rest = [ax for ax in range(len(_shape(a))) if ax not in axes]
        a = tnp.transpose(a, rest + axes)
    sa, nb = _shape(a), len(_shape(b))
    x_shape = sa[nb:]
    rows = int(np.prod(sa[:nb], dtype=np.int64))
    cols = int(np.prod(x_shape, dtype=np.int64))
    if rows != cols:
        raise LinAlgShapeError(f"the product of a's first {nb} dims ({rows}) must equal "
                               f"that of the rest ({cols}), for a of shape {sa}",
                               op="tensorsolve")
    x = L.solve(tnp.reshape(a, (rows, cols)), tnp.reshape(b, (rows, 1)))
    return tnp.reshape(x, x_shape)


def tensorinv(a, ind=2):
    """The inverse of ``a`` under ``tensordot(., ., ind)``, as ``numpy.linalg.tensorinv``."""
    tnp = _tnp()
    (a,) = inexact(a)
    if not isinstance(ind, int) or ind <= 0:
        raise ArgumentError("Invalid ind argument.", op="tensorinv")
    sa = _shape(a)
    rows = int(np.prod(sa[:ind], dtype=np.int64))
    cols = int(np.prod(sa[ind:], dtype=np.int64))
    if rows != cols:
        raise LinAlgShapeError(f"the product of a's first {ind} dims ({rows}) must equal "
                               f"that of the rest ({cols}), for a of shape {sa}",
                               op="tensorinv")
    return tnp.reshape(L.inv(tnp.reshape(a, (rows, cols))), sa[ind:] + sa[:ind])


def cond(x, p=None):
    """The condition number ``norm(x, p) * norm(inv(x), p)``; for ``p`` None, 2 or -2 the
    ratio of extreme singular values (any shape). Differentiable (through ``svdvals`` or
    ``inv``); a singular matrix gives ``inf`` as NumPy.

    >>> tnp.linalg.cond(np.diag([1.0, 4.0]))
    np.float64(4.0)
    """
    tnp = _tnp()
    (x,) = inexact(x)
    _matrices("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = L.svdvals(x)
        big, small = tnp.max(s, axis=-1), tnp.min(s, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = big / small if p != -2 else small / big
    else:
        out = tnp.multiply(_matrix_norm(x, p, (-2, -1), False),
                           _matrix_norm(L.inv(x), p, (-2, -1), False))
    return P.scalar_result(out)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    """The number of singular values above ``tol`` (default NumPy's
    ``max(s) * max(M, N) * eps``, or ``rtol * max(s)``); an integer, not differentiable.

    >>> tnp.linalg.matrix_rank(np.ones((3, 3)))
    np.int64(1)
    """
    tnp = _tnp()
    A = P.asarray(A)
    if len(_shape(A)) < 2:
        return P.scalar_result(tnp.asarray(tnp.any(A != 0), np.int64) * 1)
    (a,) = inexact(A)
    s = L.svdvals(a)
    if tol is None:
        if rtol is None:
            rtol = builtins.max(_shape(a)[-2:]) * float(np.finfo(dtypes.real_part(
                P.dtype_of(a))).eps)
        tol = tnp.max(s, axis=-1, keepdims=True) * rtol
    else:
        tol = tnp.expand_dims(P.asarray(tol), -1)
    return P.scalar_result(tnp.sum(s > tol, axis=-1))



# ---------------------------------------------------------------- the array API's linalg names

def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along ``axis``, as ``numpy.linalg.cross``."""
    from .products import cross as cross_
    return cross_(x1, x2, axis=axis)


def diagonal(x, /, *, offset=0):
    """The diagonals of the matrices in the last two axes, as ``numpy.linalg.diagonal``."""
    from .manipulation import diagonal as diagonal_
    return diagonal_(x, offset, -2, -1)


def matmul(x1, x2, /):
    """The matrix product, as ``numpy.linalg.matmul`` (``tnp.matmul``)."""
    from .products import matmul as matmul_
    return matmul_(x1, x2)


def matrix_transpose(x, /):
    """The matrices in the last two axes transposed, as ``numpy.linalg.matrix_transpose``."""
    from .manipulation import matrix_transpose as transpose_
    return transpose_(x)


def outer(x1, x2, /):
    """The outer product of two vectors, as ``numpy.linalg.outer``."""
    from .products import outer as outer_
    if P.ndim_of(x1) != 1 or P.ndim_of(x2) != 1:
        raise ShapeError(f"takes vectors, got shapes {P.shape_of(x1)} and {P.shape_of(x2)}",
                         op="linalg.outer")
    return outer_(x1, x2)


def tensordot(x1, x2, /, *, axes=2):
    """The tensor contraction over ``axes``, as ``numpy.linalg.tensordot``."""
    from .products import tensordot as tensordot_
    return tensordot_(x1, x2, axes)


def trace(x, /, *, offset=0, dtype=None):
    """The traces of the matrices in the last two axes, as ``numpy.linalg.trace``."""
    from .products import trace as trace_
    return trace_(x, offset, -2, -1, dtype)


def vecdot(x1, x2, /, *, axis=-1):
    """The dot product of vectors along ``axis`` (conjugating ``x1``), as
    ``numpy.linalg.vecdot``."""
    from .products import vecdot as vecdot_
    return vecdot_(x1, x2, axis=axis)


def multi_dot(arrays, *, precision=None):
    """The product of a chain of matrices (the first may be a row vector, the last a
    column vector), in the order of fewest multiplications, as ``numpy.linalg.multi_dot``.

    >>> tnp.linalg.multi_dot([np.ones(2), np.ones((2, 3)), np.ones(3)])
    np.float64(6.0)
    """
    from .products import matmul as matmul_
    arrays = [P.asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ShapeError("needs at least two arrays", op="multi_dot")
    first_vector, last_vector = P.ndim_of(arrays[0]) == 1, P.ndim_of(arrays[-1]) == 1
    if first_vector:
        arrays[0] = arrays[0][None, :]
    if last_vector:
        arrays[-1] = arrays[-1][:, None]
    dims = [P.shape_of(a)[0] for a in arrays] + [P.shape_of(arrays[-1])[1]]
    out = _chain(arrays, _chain_order(dims), 0, len(arrays) - 1, matmul_)
    if first_vector:
        out = out[0]
    if last_vector:
        out = out[..., 0]
    return P.scalar_result(out)


def _chain_order(dims):
    """Where to split each sub-chain ``i..j`` for the fewest multiplications (the dynamic
    programme of Cormen et al., "Introduction to Algorithms", 15.2)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays, split, i, j, matmul_):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return matmul_(_chain(arrays, split, i, k, matmul_), _chain(arrays, split, k + 1, j,
                                                                  matmul_))


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
