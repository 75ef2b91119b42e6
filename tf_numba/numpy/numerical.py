"""Numerical analysis on arrays: differences, gradients, integrals, convolutions,
interpolation, polynomials and covariances, written as NumPy writes them (same operations in
the same order, so the same bits).

>>> tnp.diff(np.array([1, 4, 9, 16]))
array([3, 5, 7])
"""
import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ShapeError, UnsupportedError
from ..ops import control, layout
from . import _promote as P

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "convolve", "correlate", "interp",
           "polyval", "cov", "corrcoef"]


_arr = P.as_array


_shape = P.shape_of


def _slice(x, axis, start, stop):
    return layout.slice_in_dim(x, start, stop, 1, axis)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``not_equal`` for bools), as
    ``numpy.diff``.

    >>> tnp.diff(np.array([[1, 3, 6]]), axis=1)
    array([[2, 3]])
    """
    from .manipulation import broadcast_to, concatenate
    from .math import not_equal, subtract
    n = P.concrete_int(n, "diff", "n")
    if n < 0:
        raise ShapeError(f"order must be non-negative but got {n}", op="diff")
    x = _arr(a)
    if not _shape(x):
        raise ShapeError("requires input that is at least one dimensional", op="diff")
    if n == 0:
        return x
    axis = P.axis_arg(axis, len(_shape(x)), "diff")
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        e = _arr(extra)
        if not _shape(e):
            shape = list(_shape(x))
            shape[axis] = 1
            e = broadcast_to(e, tuple(shape))
        parts.append(e)
    pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
    if len(pieces) > 1:
        x = concatenate(pieces, axis)
    op = not_equal if dtypes.is_bool(aval_of(x).dtype) else subtract
    for _ in range(n):
        length = _shape(x)[axis]
        x = P.asarray(op(_slice(x, axis, min(1, length), length),
                         _slice(x, axis, 0, max(length - 1, 0))))
    return x


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values before and after, as
    ``numpy.ediff1d``.

    >>> tnp.ediff1d(np.array([1, 2, 4]), to_begin=-9)
    array([-9,  1,  2])
    """
    from .manipulation import concatenate, ravel
    from .math import subtract
    x = ravel(ary)
    n = _shape(x)[0]
    d = P.asarray(subtract(_slice(x, 0, 1, n), _slice(x, 0, 0, max(n - 1, 0))))
    dt = aval_of(x).dtype
    pieces = [d]
    if to_begin is not None:
        pieces.insert(0, ravel(P.cast(_arr(to_begin), dt)))
    if to_end is not None:
        pieces.append(ravel(P.cast(_arr(to_end), dt)))
    return concatenate(pieces) if len(pieces) > 1 else d


def gradient(f, *varargs, axis=None, edge_order=1):
    """Second-order central differences inside, one-sided ones (of order ``edge_order``) at
    the edges, as ``numpy.gradient`` with scalar spacings.

    >>> tnp.gradient(np.array([1.0, 2.0, 4.0, 7.0]))
    array([1. , 1.5, 2.5, 3. ])
    """
    from .math import add, divide, multiply, subtract
    x = _arr(f)
    rank = len(_shape(x))
    axes = tuple(range(rank)) if axis is None else tuple(P.axes_arg(axis, rank, "gradient")) \
        if isinstance(axis, (tuple, list)) else (P.axis_arg(axis, rank, "gradient"),)
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise ShapeError("invalid number of arguments", op="gradient")
    for s in spacings:
        if P.is_tracer(s) or np.ndim(s) != 0:
            raise UnsupportedError("only scalar (concrete) spacings are supported, not "
                                   "coordinate arrays", op="gradient")
    if edge_order not in (1, 2):
        raise ShapeError("'edge_order' greater than 2 not supported", op="gradient")
    if not dtypes.is_inexact(aval_of(x).dtype):
        x = P.cast(x, dtypes.float64)
    outs = []
    for ax, dx in zip(axes, spacings):
        n = _shape(x)[ax]
        if n < edge_order + 1:
            raise ShapeError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.", op="gradient")
        inner = divide(subtract(_slice(x, ax, 2, n), _slice(x, ax, 0, n - 2)), 2.0 * dx)
        if edge_order == 1:
            first = divide(subtract(_slice(x, ax, 1, 2), _slice(x, ax, 0, 1)), dx)
            last = divide(subtract(_slice(x, ax, n - 1, n), _slice(x, ax, n - 2, n - 1)), dx)
        else:
            a, b, c = -1.5 / dx, 2.0 / dx, -0.5 / dx
            first = add(add(multiply(a, _slice(x, ax, 0, 1)), multiply(b, _slice(x, ax, 1, 2))),
                        multiply(c, _slice(x, ax, 2, 3)))
            a, b, c = 0.5 / dx, -2.0 / dx, 1.5 / dx
            last = add(add(multiply(a, _slice(x, ax, n - 3, n - 2)),
                           multiply(b, _slice(x, ax, n - 2, n - 1))),
                       multiply(c, _slice(x, ax, n - 1, n)))
        outs.append(layout.concatenate([P.asarray(first), P.asarray(inner), P.asarray(last)],
                                       ax))
    return outs[0] if len(outs) == 1 else tuple(outs)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` by the trapezoidal rule along ``axis``, as ``numpy.trapezoid``.

    >>> tnp.trapezoid(np.array([1.0, 2.0, 3.0]), dx=0.5)
    np.float64(2.0)
    """
    from .math import add, divide, multiply
    from .reductions import sum as sum_
    values = _arr(y)
    rank = len(_shape(values))
    ax = P.axis_arg(axis, rank, "trapezoid")
    n = _shape(values)[ax]
    if x is None:
        d = dx
    else:
        xs = _arr(x)
        if len(_shape(xs)) == 1:
            d = diff(xs)
            shape = [1] * rank
            shape[ax] = _shape(d)[0]
            d = layout.reshape(d, tuple(shape))
        else:
            d = diff(xs, axis=ax)
    mean_pairs = divide(add(_slice(values, ax, 1, n), _slice(values, ax, 0, max(n - 1, 0))),
                        2.0)
    return sum_(multiply(d, mean_pairs), axis=ax)


def _numpy_convolve(a, v, mode, name):
    """NumPy's 1-D modes on the full convolution ``scipy.signal`` computes too (one
    implementation for both): 'same' keeps max(n, m) values and 'valid' max - min + 1,
    centred."""
    from . import _convolution
    x, w = _arr(a), _arr(v)
    if len(_shape(x)) != 1 or len(_shape(w)) != 1:
        raise ShapeError("object too deep for desired array (inputs must be 1-D)", op=name)
    n, m = _shape(x)[0], _shape(w)[0]
    if n == 0 or m == 0:
        raise ShapeError(f"{'a' if n == 0 else 'v'} cannot be empty", op=name)
    if mode not in ("full", "same", "valid"):
        raise ShapeError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})",
                         op=name)
    full = _convolution.convolve(x, w, "full", "auto", None, name)
    short = min(n, m)
    start, count = {"full": (0, n + m - 1), "same": ((short - 1) // 2, max(n, m)),
                    "valid": (short - 1, max(n, m) - short + 1)}[mode]
    return _slice(full, 0, start, start + count)


def correlate(a, v, mode="valid"):
    """Cross-correlation of two 1-D sequences (``v`` conjugated), as ``numpy.correlate``.

    >>> tnp.correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([3.5])
    """
    from .math import conj
    w = _arr(v)
    if dtypes.is_complex(aval_of(w).dtype):
        w = conj(w)
    return _numpy_convolve(a, layout.rev(w, (0,)) if _shape(w) else w, mode, "correlate")


def convolve(a, v, mode="full"):
    """Discrete linear convolution of two 1-D sequences, as ``numpy.convolve``.

    >>> tnp.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    return _numpy_convolve(a, v, mode, "convolve")


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation, as ``numpy.interp`` (float64 or
    complex128 results; ``xp`` increasing).

    >>> tnp.interp(np.array([0.5, 1.5, 9.0]), np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 0.0]))
    array([5., 5., 0.])
    """
    from .math import (add, divide, equal, greater, isnan, less, logical_and, multiply,
                       subtract, where)
    from .indexing import take
    from .sorting import searchsorted
    if period is not None:
        raise UnsupportedError("argument period is not supported", op="interp")
    xs = P.cast(_arr(x), dtypes.float64)
    xps = P.cast(_arr(xp), dtypes.float64)
    fps = _arr(fp)
    out_dt = dtypes.complex128 if dtypes.is_complex(aval_of(fps).dtype) else dtypes.float64
    fps = P.cast(fps, out_dt)
    if len(_shape(xps)) != 1 or _shape(xps) != _shape(fps):
        raise ShapeError(f"fp and xp are not of the same length ({_shape(fps)} and "
                         f"{_shape(xps)})", op="interp")
    n = _shape(xps)[0]
    if n == 0:
        raise ShapeError("array of sample points is empty", op="interp")
    lval = take(fps, 0) if left is None else P.cast(_arr(left), out_dt)
    rval = take(fps, n - 1) if right is None else P.cast(_arr(right), out_dt)
    if n == 1:
        inside = take(fps, 0)
        # NumPy's one-point branch compares only (so a NaN x gets fp[0])
        return where(less(xs, take(xps, 0)), lval, where(greater(xs, take(xps, 0)), rval,
                                                         inside))
    j = P.asarray(subtract(searchsorted(xps, xs, side="right"), 1))
    j = where(less(j, 0), 0, where(greater(j, n - 2), n - 2, j))
    x0, x1 = take(xps, j), take(xps, P.asarray(add(j, 1)))
    y0, y1 = take(fps, j), take(fps, P.asarray(add(j, 1)))
    slope = divide(subtract(y1, y0), subtract(x1, x0))
    value = add(multiply(slope, subtract(xs, x0)), y0)
    # NumPy: a NaN from one end is retried from the other, then from a flat segment
    retry = add(multiply(slope, subtract(xs, x1)), y1)
    value = where(isnan(value), retry, value)
    value = where(logical_and(isnan(value), equal(y0, y1)), y0, value)
    value = where(equal(xs, x0), y0, value)
    last = take(xps, n - 1)
    value = where(equal(xs, last), take(fps, n - 1), value)
    value = where(less(xs, take(xps, 0)), lval, value)
    value = where(greater(xs, last), rval, value)
    value = where(isnan(xs), P.cast(xs, out_dt), value)
    return P.scalar_result(P.asarray(value))


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's
    rule exactly as ``numpy.polyval``.

    >>> tnp.polyval([3, 0, 1], np.array([5.0, 1.0]))
    array([76.,  4.])
    """
    from .creation import zeros_like
    from .math import add, multiply
    # as np.asarray(p): the coefficients are (strong) elements of one array
    arr = _arr(p)
    coefficients = [layout.squeeze(layout.slice_in_dim(arr, i, i + 1, 1, 0), (0,))
                    for i in range(_shape(arr)[0])]
    xs = _arr(x)
    y = zeros_like(xs)
    for c in coefficients:
        y = add(multiply(y, xs), c)
    return y


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """The covariance matrix of the rows (variables) of ``m``, as ``numpy.cov`` without
    weights.

    >>> tnp.cov(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    from .creation import array
    from .math import conj, multiply, subtract
    from .manipulation import atleast_2d, concatenate
    from .products import dot
    from .reductions import mean
    P.check_unsupported("cov", fweights=(fweights, None), aweights=(aweights, None))
    if ddof is not None and ddof != int(ddof):
        raise ShapeError("ddof must be integer", op="cov")
    X = atleast_2d(_arr(m))
    if len(_shape(X)) > 2:
        raise ShapeError("m has more than 2 dimensions", op="cov")
    if dtype is None:
        dtype = P.result_type(X, dtypes.float64)
    if not rowvar and _shape(X)[0] != 1:
        X = layout.transpose(X, (1, 0))
    if _shape(X)[0] == 0:
        return array(np.empty((0, 0), dtype))
    if y is not None:
        Y = atleast_2d(_arr(y))
        if not rowvar and _shape(Y)[0] != 1:
            Y = layout.transpose(Y, (1, 0))
        X = concatenate([X, Y], axis=0)
    X = P.cast(X, dtypes.canonical(dtype))
    if ddof is None:
        ddof = 0 if bias else 1
    avg = mean(X, axis=1)
    fact = _shape(X)[1] - ddof
    if fact <= 0:
        fact = 0.0
    X = P.asarray(subtract(X, layout.expand_dims(P.asarray(avg), (1,))))
    c = P.asarray(dot(X, conj(layout.transpose(X, (1, 0)))))
    # NumPy's in-place ``c *= 1 / fact`` multiplies in float64 and rounds back to c's dtype
    dt = aval_of(c).dtype
    wide = P.cast(c, P.result_type(dt, dtypes.float64))
    c = P.cast(P.asarray(multiply(wide, np.true_divide(1, fact))), dt)
    if 1 in _shape(c):
        return layout.reshape(c, tuple(d for d in _shape(c) if d != 1))
    return c


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Pearson correlation coefficients, as ``numpy.corrcoef``.

    >>> tnp.corrcoef(np.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.5]]))[0, 1]
    np.float64(-0.9819805060619656)
    """
    from .math import clip, divide, real, sqrt
    from .manipulation import diag
    c = P.asarray(cov(x, y, rowvar, dtype=dtype))
    if not _shape(c):
        return divide(c, c)
    d = diag(c)
    stddev = P.asarray(sqrt(real(d)))
    c = divide(c, layout.expand_dims(stddev, (1,)))
    c = P.asarray(divide(c, layout.expand_dims(stddev, (0,))))
    if dtypes.is_complex(aval_of(c).dtype):
        from ..ops import elementwise as ew
        from .math import imag
        return ew.complex(P.asarray(clip(real(c), -1, 1)), P.asarray(clip(imag(c), -1, 1)))
    return clip(c, -1, 1)


# ---------------------------------------------------------------- integer and float parts,
# phase unwrapping, polynomial fits, histograms

__all__ += ["gcd", "lcm", "frexp", "unwrap", "polyfit", "histogram", "histogram_bin_edges",
            "histogram2d", "histogramdd", "polyadd", "polysub", "polymul", "polydiv",
            "polyder", "polyint", "vander", "poly", "roots", "bartlett", "blackman", "hamming",
            "hanning", "kaiser"]


def gcd(x1, x2):
    """The greatest common divisor of ``|x1|`` and ``|x2|``, elementwise (integers),
    by Euclid's algorithm as a ``while_loop`` over the whole arrays.

    >>> tnp.gcd(np.array([12, 20, 0]), 8)
    array([4, 4, 8])
    """
    from . import math as tm
    from .reductions import any as any_
    a, b = P.promote("gcd", x1, x2)
    if not dtypes.is_integer(P.dtype_of(a)):
        raise UnsupportedError(f"needs integers, got {P.dtype_of(a).name}", op="gcd")
    carry = [_arr(x) for x in P.broadcast_all("gcd", [tm.abs(a), tm.abs(b)],
                                              keep_scalars=False)]

    def step(a, b):
        nonzero = b != 0
        safe = tm.where(nonzero, b, 1)
        return tm.where(nonzero, b, a), tm.where(nonzero, tm.remainder(a, safe), 0)
    # the loop primitive itself: lax.while_loop sits above tnp
    avals = [aval_of(x) for x in carry]
    cond, cond_lead = control.trace_program(lambda a, b: [any_(b != 0)], avals)
    body, body_lead = control.trace_program(step, avals)
    return control.while_bind(cond_lead, body_lead, carry, cond, body)[0]


def lcm(x1, x2):
    """The least common multiple of ``|x1|`` and ``|x2|`` (0 where either is 0).

    >>> tnp.lcm(np.array([4, 6, 0]), 6)
    array([12,  6,  0])
    """
    from . import math as tm
    a, b = P.promote("lcm", x1, x2)
    g = gcd(a, b)
    zero = g == 0
    return tm.where(zero, 0, tm.abs(tm.floor_divide(a, tm.where(zero, 1, g)) * b))


def frexp(x):
    """Mantissa and exponent, ``x = m * 2**e`` with ``0.5 <= |m| < 1`` (``m = x``, ``e = 0``
    for 0, inf and NaN), as ``np.frexp``; ``e`` is int32. ``m`` is differentiable
    (``dm/dx = 2**-e``).

    >>> tnp.frexp(np.array([8.0, -3.0, 0.0]))
    (array([ 0.5 , -0.75,  0.  ]), array([4, 2, 0], dtype=int32))
    """
    from ..ops import elementwise as ew
    from . import math as tm
    x = P.as_array(x)
    if not dtypes.is_inexact(P.dtype_of(x)):
        x = P.cast(x, dtypes.float64)
    if dtypes.is_complex(P.dtype_of(x)):
        raise UnsupportedError("needs real values", op="frexp")
    finite = tm.isfinite(x) & (x != 0)
    mag = ew.stop_gradient(tm.abs(tm.where(finite, x, 1)))
    def scaled(v, e):      # v * 2**-e in two steps: 2**-e alone overflows for subnormals
        half = tm.floor(e / 2)
        return v * tm.exp2(-half) * tm.exp2(-(e - half))
    e = tm.floor(tm.log2(mag)) + 1
    # log2 rounds near powers of two: fix the exponent so that 0.5 <= |m| < 1 holds exactly
    e = tm.where(scaled(mag, e) >= 1, e + 1, e)
    e = tm.where(scaled(mag, e) < 0.5, e - 1, e)
    e = tm.where(finite, e, 0)
    return tm.where(finite, scaled(x, e), x), P.cast(e, dtypes.int32)


def unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """``np.unwrap``: add multiples of ``period`` so that consecutive differences along
    ``axis`` are at most ``max(discont, period / 2)``. The corrections are piecewise
    constant, so the derivative is that of the identity.

    >>> tnp.unwrap(np.array([0.0, 3.0, 6.5, 0.1]))
    array([ 0.        ,  3.        ,  0.21681469,  0.1       ])
    """
    from ..ops import elementwise as ew
    from . import math as tm, reductions
    p = P.as_array(p)
    if not dtypes.is_inexact(P.dtype_of(p)):
        p = P.cast(p, dtypes.float64)
    axis = P.axis_arg(axis, len(_shape(p)), "unwrap")
    discont = period / 2 if discont is None else discont
    dd = diff(p, axis=axis)
    half = period / 2
    ddmod = tm.mod(dd + half, period) - half
    ddmod = tm.where((ddmod == -half) & (dd > 0), half, ddmod)
    correct = tm.where(tm.abs(dd) < discont, 0, ddmod - dd)
    correct = ew.stop_gradient(reductions.cumsum(correct, axis=axis))
    n = _shape(p)[axis]
    head = _slice(p, axis, 0, 1)
    return layout.concatenate([head, _slice(p, axis, 1, n) + correct], axis)


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial coefficients, highest power first, as ``np.polyfit``
    (columns of the Vandermonde matrix scaled to unit norm, then ``lstsq``); ``y`` may
    be 2-D (one fit per column), ``w`` weights the residuals. Differentiable in ``x``, ``y``
    and ``w``. ``full`` and ``cov`` are not supported.

    >>> tnp.polyfit(np.array([0.0, 1.0, 2.0]), np.array([1.0, 3.0, 5.0]), 1)
    array([2., 1.])
    """
    from . import creation, linalg, math as tm, reductions
    if full or cov:
        raise UnsupportedError("full=True and cov=True are not supported; fit "
                               "with the default and compute residuals with tnp.polyval",
                               op="polyfit")
    deg = int(deg)
    x, y = P.as_array(x), P.as_array(y)
    dt = P.result_type(x, y, 1.0)
    x, y = P.cast(x, dt), P.cast(y, dt)
    if len(_shape(x)) != 1 or len(_shape(y)) not in (1, 2) or _shape(y)[0] != _shape(x)[0]:
        raise ShapeError(f"needs x of shape (n,) and y of shape (n,) or (n, k), got "
                         f"{_shape(x)} and {_shape(y)}", op="polyfit")
    powers = creation.arange(deg, -1, -1, dtype=dt)
    lhs = tm.power(x[:, None], powers[None, :])
    rhs = y
    if w is not None:
        w = P.cast(P.as_array(w), dt)
        lhs = lhs * w[:, None]
        rhs = rhs * (w if len(_shape(y)) == 1 else w[:, None])
    scale = tm.sqrt(reductions.sum(lhs * lhs, axis=0))
    rcond = _shape(x)[0] * np.finfo(dt).eps if rcond is None else rcond
    coef = linalg.lstsq(lhs / scale, rhs, rcond=rcond)[0]
    return (coef.T / scale).T


def _bin_edges(a, bins, range, name):  # noqa: A002
    """The edges of ``bins`` equal bins over ``range`` (default: the data's min and max,
    without derivative), or the given edges."""
    from ..ops import elementwise as ew
    from . import creation, math as tm, reductions
    if not isinstance(bins, (int, np.integer)):
        return P.as_array(bins)
    if range is None:
        lo, hi = reductions.min(a), reductions.max(a)
        lo, hi = ew.stop_gradient(lo), ew.stop_gradient(hi)
        same = lo == hi
        lo, hi = tm.where(same, lo - 0.5, lo), tm.where(same, hi + 0.5, hi)
    else:
        lo, hi = range
    edges = creation.linspace(lo, hi, int(bins) + 1)
    if not dtypes.is_inexact(P.dtype_of(edges)):
        edges = P.cast(edges, dtypes.float64)
    return edges


def _bin_index(a, edges):
    """Each value's bin among ``edges`` (the last bin closed) and whether it is inside."""
    from . import math as tm, sorting
    n = _shape(edges)[0] - 1
    idx = sorting.searchsorted(edges, a, side="right") - 1
    idx = tm.where(a == edges[n], n - 1, idx)
    inside = (idx >= 0) & (idx < n) & (a == a)
    return P.cast(tm.where(inside, idx, 0), dtypes.int64), inside


def _bin_totals(flat_index, inside, weights, size, density):
    from ..ops.indexing import scatter_add
    from . import creation, math as tm
    if weights is None:
        values = P.cast(inside, dtypes.float64 if density else dtypes.int64)
    else:
        values = tm.where(inside, weights, 0)
    zeros = creation.zeros(size, P.dtype_of(values))
    return scatter_add(zeros, layout.reshape(flat_index, _shape(flat_index) + (1,)), values,
                       (0,))


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges ``histogram`` uses, as ``numpy.histogram_bin_edges``.

    >>> tnp.histogram_bin_edges(np.array([0.0, 3.0]), bins=3)
    array([0., 1., 2., 3.])
    """
    from .manipulation import ravel
    return _bin_edges(ravel(P.as_array(a)), bins, range, "histogram_bin_edges")


def histogram(a, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """``np.histogram``: counts (or summed ``weights``) of ``a`` in ``bins`` equal bins over
    ``range`` (default: the data's min and max) or between the given bin edges, the last
    bin closed; returns ``(hist, bin_edges)``. Values outside are not counted. The counts
    are piecewise constant in ``a`` (no derivative); weighted counts and ``density`` are
    differentiable in ``weights``.

    >>> tnp.histogram(np.array([0.0, 1.0, 1.0, 3.0]), bins=3)
    (array([1, 2, 1]), array([0., 1., 2., 3.]))
    """
    from . import reductions
    from .manipulation import ravel
    a = ravel(P.as_array(a))
    edges = _bin_edges(a, bins, range, "histogram")
    idx, inside = _bin_index(a, edges)
    weights = None if weights is None else ravel(P.as_array(weights))
    hist = _bin_totals(idx, inside, weights, _shape(edges)[0] - 1, density)
    if density:
        hist = hist / (reductions.sum(hist) * diff(edges))
    return hist, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """The D-dimensional histogram of ``sample`` ((N, D), or D arrays of N points), as
    ``numpy.histogramdd``: ``bins`` an int, or one per dimension (a count or edges);
    returns ``(hist, [edges per dimension])``.

    >>> tnp.histogramdd(np.array([[0.0, 0.0], [1.0, 1.0]]), bins=2)[0]
    array([[1., 0.],
           [0., 1.]])
    """
    from . import math as tm, reductions
    from .manipulation import ravel, reshape
    if isinstance(sample, (list, tuple)):
        columns = [ravel(P.as_array(c)) for c in sample]
    else:
        x = P.as_array(sample)
        columns = [x[:, d] for d in builtins.range(_shape(x)[1])]
    dims = len(columns)
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * dims
    ranges = list(range) if range is not None else [None] * dims
    edges, flat, inside, sizes = [], None, None, []
    for column, b, r in zip(columns, per_dim, ranges):
        e = _bin_edges(column, b, r, "histogramdd")
        idx, ok = _bin_index(column, e)
        n = _shape(e)[0] - 1
        flat = idx if flat is None else flat * n + idx
        inside = ok if inside is None else inside & ok
        edges.append(e)
        sizes.append(n)
    weights = None if weights is None else ravel(P.as_array(weights))
    hist = _bin_totals(flat, inside, weights, math.prod(sizes), True)   # (float, as NumPy)
    hist = reshape(hist, tuple(sizes))
    if density:
        volume = None
        for d, e in enumerate(edges):
            w = reshape(diff(e), tuple(-1 if i == d else 1 for i in builtins.range(dims)))
            volume = w if volume is None else tm.multiply(volume, w)
        hist = hist / (reductions.sum(hist) * volume)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=False):  # noqa: A002
    """The 2-D histogram of points ``(x, y)``, as ``numpy.histogram2d``: returns
    ``(hist, xedges, yedges)``.

    >>> tnp.histogram2d(np.array([0.0, 1.0]), np.array([0.0, 1.0]), bins=2)[0]
    array([[1., 0.],
           [0., 1.]])
    """
    hist, (xedges, yedges) = histogramdd([x, y], bins, range, weights, density)
    return hist, xedges, yedges


# ---------------------------------------------------------------- polynomials
#
# Coefficients highest power first, as numpy.poly* (not numpy.polynomial).

def _one_dtype(*xs):
    xs = [P.as_array(x) for x in xs]
    dt = P.result_type(*xs)
    return [P.cast(x, dt) for x in xs]


def _poly_pair(a1, a2):
    """Two coefficient vectors of one dtype, the shorter padded with leading zeros."""
    from . import manipulation
    a1, a2 = _one_dtype(a1, a2)
    a1, a2 = manipulation.atleast_1d(a1), manipulation.atleast_1d(a2)
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    pad = builtins.max(n1, n2)
    return (manipulation.pad(a1, (pad - n1, 0)), manipulation.pad(a2, (pad - n2, 0)))


def polyadd(a1, a2):
    """The sum of two polynomials, as ``numpy.polyadd``.

    >>> tnp.polyadd(np.array([1.0, 2.0]), np.array([1.0, 0.0, 1.0]))
    array([1., 2., 3.])
    """
    a1, a2 = _poly_pair(a1, a2)
    return a1 + a2


def polysub(a1, a2):
    """The difference of two polynomials, as ``numpy.polysub``."""
    a1, a2 = _poly_pair(a1, a2)
    return a1 - a2


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (their coefficients' convolution), as
    ``numpy.polymul``.

    >>> tnp.polymul(np.array([1.0, 1.0]), np.array([1.0, -1.0]))
    array([ 1.,  0., -1.])
    """
    from . import manipulation
    a1, a2 = _one_dtype(a1, a2)
    if trim_leading_zeros:
        a1, a2 = (np.trim_zeros(P.concrete_value(a, "polymul", "a"), "f") for a in (a1, a2))
    return convolve(manipulation.atleast_1d(a1), manipulation.atleast_1d(a2))


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial long division, as ``numpy.polydiv`` (the
    leading coefficient of ``v`` must be nonzero).

    >>> tnp.polydiv(np.array([1.0, 0.0, -1.0]), np.array([1.0, 1.0]))
    (array([ 1., -1.]), array([0., 0.]))
    """
    from . import creation, manipulation
    u, v = _one_dtype(u, v)
    if not dtypes.is_inexact(P.dtype_of(u)):
        u, v = P.cast(u, dtypes.float64), P.cast(v, dtypes.float64)
    u, v = manipulation.atleast_1d(u), manipulation.atleast_1d(v)
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = 1.0 / v[0]
    q = creation.zeros(builtins.max(m - n + 1, 1), P.dtype_of(u))
    r = u
    from .indexing import at
    for k in builtins.range(0, m - n + 1):
        d = scale * r[k]
        q = at(q)[k].set(d)
        r = at(r)[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = np.trim_zeros(P.concrete_value(r, "polydiv", "r"), "f")
    return q, r


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial, as ``numpy.polyder``.

    >>> tnp.polyder(np.array([1.0, 1.0, 1.0]))
    array([2., 1.])
    """
    p = P.as_array(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    for _ in builtins.range(int(m)):
        n = _shape(p)[0] - 1
        p = p[:-1] * np.arange(n, 0, -1, dtype=np.int64)
    return p


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial with integration constants ``k`` (zeros
    by default), as ``numpy.polyint``.

    >>> tnp.polyint(np.array([3.0, 2.0, 1.0]))
    array([1., 1., 1., 0.])
    """
    from . import manipulation
    p = P.as_array(p)
    if not dtypes.is_inexact(P.dtype_of(p)):
        p = P.cast(p, dtypes.float64)
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k), (m,))
    for i in builtins.range(m):
        n = _shape(p)[0]
        p = manipulation.concatenate([p / np.arange(n, 0, -1), np.asarray([ks[i]])])
    return p


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of ``x``: columns ``x**(N-1), ..., x**0`` (``increasing``:
    the other way round), as ``numpy.vander``; built by products, so its derivative is
    exact at ``x = 0``.

    >>> tnp.vander(np.array([2.0, 3.0]), 3)
    array([[4., 2., 1.],
           [9., 3., 1.]])
    """
    from . import creation, manipulation, reductions
    x = P.as_array(x)
    if len(_shape(x)) != 1:
        raise ShapeError(f"x must be one-dimensional, got shape {_shape(x)}", op="vander")
    n = _shape(x)[0] if N is None else int(N)
    if n == 0:
        return creation.zeros((_shape(x)[0], 0), P.dtype_of(x))
    column = manipulation.reshape(x, (-1, 1))
    rows = manipulation.concatenate(
        [creation.ones_like(column), manipulation.tile(column, (1, n - 1))], axis=1)
    powers = reductions.cumprod(rows, axis=1)
    return powers if increasing else manipulation.flip(powers, axis=1)


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with roots ``seq_of_zeros`` (or the
    characteristic polynomial of a square matrix), as ``numpy.poly``.

    >>> tnp.poly(np.array([1.0, 2.0]))
    array([ 1., -3.,  2.])
    """
    from . import linalg
    z = P.as_array(seq_of_zeros)
    shape = _shape(z)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        z = linalg.eigvals(z)
    elif len(shape) != 1:
        raise ShapeError(f"input must be 1d or non-empty square 2d array, got shape {shape}",
                         op="poly")
    a = np.ones(1, P.dtype_of(z) if dtypes.is_inexact(P.dtype_of(z)) else np.float64)
    for i in builtins.range(_shape(z)[0]):
        a = convolve(a, P.as_array([1.0, 0.0]) - z[i] * P.as_array([0.0, 1.0]))
    if dtypes.is_complex(P.dtype_of(a)) and len(shape) == 2:
        return a.real
    return a


def roots(p, *, strip_zeros=True):
    """The roots of a polynomial (eigenvalues of its companion matrix), complex, as
    ``numpy.roots``; ``strip_zeros`` needs concrete coefficients (leading zeros are
    dropped, trailing ones give zero roots).

    >>> tnp.roots(np.array([1.0, -3.0, 2.0]))
    array([2.+0.j, 1.+0.j])
    """
    from . import creation, linalg, manipulation
    p = P.as_array(p)
    if not dtypes.is_inexact(P.dtype_of(p)):
        p = P.cast(p, dtypes.float64)
    zeros_at_end = 0
    if strip_zeros:
        c = P.concrete_value(p, "roots", "p")
        nonzero = np.flatnonzero(c)
        if len(nonzero) == 0:
            return np.zeros(0, np.complex128)
        zeros_at_end = len(c) - nonzero[-1] - 1
        p = p[nonzero[0]:nonzero[-1] + 1]
    n = _shape(p)[0] - 1
    if n < 1:
        return creation.zeros(zeros_at_end, dtypes.complex128 if P.dtype_of(p) == np.float64
                              else dtypes.complex64)
    # first row -p[1:] / p[0], ones below the diagonal
    companion = manipulation.concatenate(
        [manipulation.reshape(-p[1:] / p[0], (1, n)),
         creation.eye(n - 1, n, dtype=P.dtype_of(p))], axis=0)
    found = linalg.eigvals(companion)
    if zeros_at_end:
        found = manipulation.concatenate([found, creation.zeros(zeros_at_end,
                                                                P.dtype_of(found))])
    return found


# ---------------------------------------------------------------- windows

def _window(M, name):
    return int(P.concrete_value(M, name, "M"))


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points, as ``numpy.bartlett``."""
    return np.bartlett(_window(M, "bartlett")).astype(np.float64)


def blackman(M):
    """The Blackman window of ``M`` points, as ``numpy.blackman``."""
    return np.blackman(_window(M, "blackman")).astype(np.float64)


def hamming(M):
    """The Hamming window of ``M`` points, as ``numpy.hamming``."""
    return np.hamming(_window(M, "hamming")).astype(np.float64)


def hanning(M):
    """The Hann window of ``M`` points, as ``numpy.hanning``."""
    return np.hanning(_window(M, "hanning")).astype(np.float64)


def kaiser(M, beta):
    """The Kaiser window of ``M`` points and shape ``beta`` (which may be traced:
    ``i0(beta sqrt(1 - t**2)) / i0(beta)``), as ``numpy.kaiser``.

    >>> tnp.kaiser(3, 0.0)
    array([1., 1., 1.])
    """
    from .math import i0, sqrt
    M = _window(M, "kaiser")
    if M == 1:
        return np.ones(1)
    t = np.linspace(-1.0, 1.0, M)
    beta = P.as_array(beta)
    if not dtypes.is_inexact(P.dtype_of(beta)):
        beta = P.cast(beta, dtypes.float64)
    return i0(beta * sqrt(np.maximum(1 - t * t, 0.0))) / i0(beta)
