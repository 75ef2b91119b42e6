"""``tf_numba.scipy.signal``: convolution and correlation of N-D arrays (``convolve``,
``correlate``, ``convolve2d``, ``correlate2d``, ``fftconvolve``) and ``detrend``, as
``scipy.signal`` computes them, differentiable in both inputs and jittable.

The convolutions are ``numpy/_convolution.py``'s (direct, or through the FFT by the cost
of the direct form), which ``tnp.convolve`` and ``tnp.correlate`` share.

>>> import numpy as np
>>> from tf_numba.scipy import signal
>>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
array([0. , 1. , 2.5, 4. , 1.5])
"""
import numpy as np

import tf_numba.numpy as tnp

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ShapeError, UnsupportedError
from ..numpy import _convolution as C
from ..numpy import _promote as P
from ..ops import layout

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend"]


def convolve(in1, in2, mode="full", method="auto"):
    """The N-D convolution of ``in1`` and ``in2``, as ``scipy.signal.convolve``: ``mode``
    'full', 'same' (centred, ``in1``'s shape) or 'valid'; ``method`` 'direct', 'fft' or
    'auto' (by the direct form's cost).

    >>> convolve(np.ones((2, 2)), np.ones((2, 2)))
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    return C.convolve(in1, in2, mode, method, None, "convolve")


def correlate(in1, in2, mode="full", method="auto"):
    """The N-D cross-correlation of ``in1`` and ``in2`` (``in2`` conjugated), as
    ``scipy.signal.correlate``: the convolution with ``in2`` reversed.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    return C.convolve(in1, C.reverse_conj(in2), mode, method, None, "correlate")


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of ``in1`` and ``in2`` by FFT along ``axes`` (default all; the other
    axes broadcast), as ``scipy.signal.fftconvolve``.

    >>> fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), mode="same")
    array([1. , 2.5, 4. ])
    """
    return C.convolve(in1, in2, mode, "fft", axes, "fftconvolve")


def _two_d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise UnsupportedError("only boundary='fill' with fillvalue=0 is supported",
                               op=name)
    if P.ndim_of(in1) != 2 or P.ndim_of(in2) != 2:
        raise ShapeError(f"inputs must be 2-D, got {P.shape_of(in1)} and "
                         f"{P.shape_of(in2)}", op=name)


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-D convolution, as ``scipy.signal.convolve2d`` (zero fill only).

    >>> convolve2d(np.eye(2), np.array([[1.0, 2.0]]))
    array([[1., 2., 0.],
           [0., 1., 2.]])
    """
    _two_d("convolve2d", in1, in2, boundary, fillvalue)
    return C.convolve(in1, in2, mode, "auto", None, "convolve2d")


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-D cross-correlation, as ``scipy.signal.correlate2d`` (zero fill only).

    >>> correlate2d(np.eye(2), np.array([[1.0, 2.0]]))
    array([[2., 1., 0.],
           [0., 2., 1.]])
    """
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    if mode != "same":
        return C.convolve(in1, C.reverse_conj(in2), mode, "auto", None, "correlate2d")
    # SciPy centres correlate2d's 'same' window from the other end than correlate's: for an
    # even kernel length k it starts at k // 2 of the full result, not (k - 1) // 2
    full = C.convolve(in1, C.reverse_conj(in2), "full", "auto", None, "correlate2d")
    s1, s2 = P.shape_of(in1), P.shape_of(in2)
    return C.crop(full, [s2[0] // 2, s2[1] // 2], list(s1), [0, 1])


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=False):
    """``data`` less its mean (``type='constant'``) or its least-squares line on each piece
    between the breakpoints ``bp`` (``'linear'``), along ``axis``, as
    ``scipy.signal.detrend``.

    >>> detrend(np.array([1.0, 2.0, 4.0]))
    array([ 0.16666667, -0.33333333,  0.16666667])
    """
    x = P.as_array(data)
    if not dtypes.is_inexact(aval_of(x).dtype):
        x = P.cast(x, dtypes.float64)
    ax = P.axis_arg(axis, len(P.shape_of(x)), "detrend")
    if type in ("constant", "c"):
        return x - tnp.mean(x, axis=ax, keepdims=True)
    if type not in ("linear", "l"):
        raise ShapeError(f"type must be 'linear' or 'constant', got {type!r}",
                         op="detrend")
    n = P.shape_of(x)[ax]
    cuts = np.unique(np.concatenate([[0], np.atleast_1d(bp), [n]]).astype(np.int64))
    if np.any(cuts > n) or np.any(cuts < 0):
        raise ShapeError(f"breakpoints {bp} must lie in [0, {n}]", op="detrend")
    pieces = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        seg = layout.slice_in_dim(x, int(lo), int(hi), 1, ax)
        # the least-squares line in closed form, on SciPy's abscissa 1/m .. 1
        m = int(hi - lo)
        t = np.arange(1, m + 1, dtype=np.float64) / m
        t = t - t.mean()
        shape = [1] * len(P.shape_of(x))
        shape[ax] = m
        t = P.cast(t.reshape(shape), aval_of(x).dtype)
        centred = seg - tnp.mean(seg, axis=ax, keepdims=True)
        denom = float(np.sum(t * t)) if m > 1 else 1.0
        slope = tnp.sum(centred * t, axis=ax, keepdims=True) / denom
        pieces.append(centred - slope * t)
    return pieces[0] if len(pieces) == 1 else tnp.concatenate(pieces, axis=ax)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
