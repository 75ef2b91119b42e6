"""``tf_numba.scipy.signal``: convolution and correlation of N-D arrays (``convolve``,
``correlate``, ``convolve2d``, ``correlate2d``, ``fftconvolve``) and ``detrend``, as
``scipy.signal`` computes them, differentiable in both inputs and jittable.

A convolution is computed directly (a gather of the input's windows and one contraction
with the kernel) or through the FFT (``tnp.fft.rfftn``), chosen by the number of products
the direct form costs (``method="auto"``; ``_FFT_ABOVE``). ``tnp.convolve`` and
``tnp.correlate`` are this module's 1-D case with NumPy's modes.

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
from ..numpy import _promote as P
from ..ops import layout

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend"]

# method="auto" takes the FFT when the direct form needs more products than this. Measured
# with the interpreter, float64, on a loaded 2-core host: 1-D 1024 x 16 (1.7e4 products)
# direct 0.29 ms, FFT 0.38; 4096 x 64 (2.7e5) direct 48 ms, FFT 13; 2-D 32^2 x 3^2 (1e4)
# direct 0.32 ms, FFT 0.25; 64^2 x 5^2 (1.2e5) direct 6 ms, FFT 0.7
_FFT_ABOVE = 1 << 14
_MODES = ("full", "same", "valid")


def _check_mode(mode, name):
    if mode not in _MODES:
        raise ShapeError(f"mode must be 'full', 'same' or 'valid', got {mode!r}",
                         op=name)


def _operands(in1, in2):
    """Both inputs in their common dtype (integers stay integers, as SciPy's and NumPy's
    convolutions keep them)."""
    x, w = P.as_array(in1), P.as_array(in2)
    dt = P.result_type(x, w)
    if dtypes.is_bool(dt):
        dt = dtypes.int64
    return P.cast(x, dt), P.cast(w, dt)


def _full_direct(x, w, axes):
    """The full convolution along ``axes`` (same-size other axes), by gathering each output's
    window of the zero-padded ``x`` and contracting it with the reversed kernel."""
    rank = len(P.shape_of(x))
    pads = [(0, 0, 0)] * rank
    for a in axes:
        k = P.shape_of(w)[a]
        pads[a] = (k - 1, k - 1, 0)
    windows = layout.pad(x, P.cast(0, aval_of(x).dtype), tuple(pads))
    for a in axes:
        n, k = P.shape_of(x)[a], P.shape_of(w)[a]
        rows = np.arange(n + k - 1)[:, None] + np.arange(k)[None, :]
        # the window axis goes last; later gathers keep it there
        windows = tnp.moveaxis(tnp.take(windows, rows, axis=a), a + 1, -1)
    kernel = layout.rev(w, tuple(axes))
    # windows: x's axes (output lengths) then one window axis per convolved axis, in order
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = letters[:rank]
    win = "".join(letters[rank + i] for i in range(len(axes)))
    ker = "".join(letters[rank + axes.index(a)] if a in axes else letters[a]
                  for a in range(rank))
    return tnp.einsum(f"{out}{win},{ker}->{out}", windows, kernel)


def _full_fft(x, w, axes):
    """The full convolution along ``axes`` by the convolution theorem (real FFTs for real
    inputs), other axes broadcast."""
    shape = [P.shape_of(x)[a] + P.shape_of(w)[a] - 1 for a in axes]
    dt = aval_of(x).dtype
    if not dtypes.is_inexact(dt):
        # integers: in float64, rounded back (SciPy's fft method does the same)
        full = _full_fft(P.cast(x, dtypes.float64), P.cast(w, dtypes.float64), axes)
        return P.cast(tnp.rint(full), dt)
    if dtypes.is_complex(dt):
        return tnp.fft.ifftn(tnp.fft.fftn(x, shape, axes) * tnp.fft.fftn(w, shape, axes),
                             shape, axes)
    return tnp.fft.irfftn(tnp.fft.rfftn(x, shape, axes) * tnp.fft.rfftn(w, shape, axes),
                          shape, axes)


def _crop(full, starts, lengths, axes):
    for a, s, n in zip(axes, starts, lengths):
        full = layout.slice_in_dim(full, s, s + n, 1, a)
    return full


def _scipy_mode(full, s1, s2, mode, axes):
    """SciPy's modes: 'same' is the centre of the full result at in1's shape, 'valid' the
    part that needs no zero padding."""
    if mode == "full":
        return full
    sizes = [P.shape_of(full)[a] for a in axes]
    if mode == "same":
        lengths = [s1[a] for a in axes]
    else:
        lengths = [max(s1[a], s2[a]) - min(s1[a], s2[a]) + 1 for a in axes]
    return _crop(full, [(f - n) // 2 for f, n in zip(sizes, lengths)], lengths, axes)


def _direct_products(s1, s2, axes):
    return int(np.prod([s1[a] + s2[a] - 1 for a in axes], dtype=np.int64)) * \
        int(np.prod([s2[a] for a in axes], dtype=np.int64))


def _convolve(in1, in2, mode, method, axes, name):
    _check_mode(mode, name)
    x, w = _operands(in1, in2)
    s1, s2 = P.shape_of(x), P.shape_of(w)
    if len(s1) != len(s2):
        raise ShapeError(f"in1 and in2 must have the same number of dimensions, got "
                         f"{s1} and {s2}", op=name)
    if 0 in s1 or 0 in s2:
        raise ShapeError(f"inputs of shapes {s1} and {s2} must not be empty", op=name)
    if mode == "valid" and not (all(a >= b for a, b in zip(s1, s2))
                                or all(a <= b for a, b in zip(s1, s2))):
        raise ShapeError(f"for 'valid' mode one input must be at least as large as "
                         f"the other in every dimension, got {s1} and {s2}", op=name)
    if not s1:
        return x * w
    if method not in ("auto", "direct", "fft"):
        raise ShapeError(f"method must be 'auto', 'direct' or 'fft', got {method!r}",
                         op=name)
    axes = list(range(len(s1))) if axes is None else sorted(P.axes_arg(axes, len(s1), name))
    for a in range(len(s1)):
        if a not in axes and s1[a] != s2[a] and 1 not in (s1[a], s2[a]):
            raise ShapeError(f"along axis {a}, not convolved, the shapes {s1} and "
                             f"{s2} must match or be 1", op=name)
    if method == "auto":
        method = "fft" if _direct_products(s1, s2, axes) > _FFT_ABOVE else "direct"
    if method == "direct":
        if axes != list(range(len(s1))):
            shape = tuple(s1[a] if a in axes else max(s1[a], s2[a]) for a in range(len(s1)))
            x = tnp.broadcast_to(x, shape)
        full = _full_direct(x, w, axes)
    else:
        full = _full_fft(x, w, axes)
    return _scipy_mode(full, s1, s2, mode, axes)


def _reverse_conj(w):
    w = P.as_array(w)
    if dtypes.is_complex(aval_of(w).dtype):
        w = tnp.conj(w)
    return layout.rev(w, tuple(range(len(P.shape_of(w)))))


def convolve(in1, in2, mode="full", method="auto"):
    """The N-D convolution of ``in1`` and ``in2``, as ``scipy.signal.convolve``: ``mode``
    'full', 'same' (centred, ``in1``'s shape) or 'valid'; ``method`` 'direct', 'fft' or
    'auto' (by the direct form's cost).

    >>> convolve(np.ones((2, 2)), np.ones((2, 2)))
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    return _convolve(in1, in2, mode, method, None, "convolve")


def correlate(in1, in2, mode="full", method="auto"):
    """The N-D cross-correlation of ``in1`` and ``in2`` (``in2`` conjugated), as
    ``scipy.signal.correlate``: the convolution with ``in2`` reversed.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    return _convolve(in1, _reverse_conj(in2), mode, method, None, "correlate")


def fftconvolve(in1, in2, mode="full", axes=None):
    """The convolution of ``in1`` and ``in2`` by FFT along ``axes`` (default all; the other
    axes broadcast), as ``scipy.signal.fftconvolve``.

    >>> fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]), mode="same")
    array([1. , 2.5, 4. ])
    """
    return _convolve(in1, in2, mode, "fft", axes, "fftconvolve")


def _two_d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise UnsupportedError(f"only boundary='fill' with fillvalue=0 is supported",
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
    return _convolve(in1, in2, mode, "auto", None, "convolve2d")


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """The 2-D cross-correlation, as ``scipy.signal.correlate2d`` (zero fill only).

    >>> correlate2d(np.eye(2), np.array([[1.0, 2.0]]))
    array([[2., 1., 0.],
           [0., 2., 1.]])
    """
    _two_d("correlate2d", in1, in2, boundary, fillvalue)
    if mode != "same":
        return _convolve(in1, _reverse_conj(in2), mode, "auto", None, "correlate2d")
    # SciPy centres correlate2d's 'same' window from the other end than correlate's: for an
    # even kernel length k it starts at k // 2 of the full result, not (k - 1) // 2
    full = _convolve(in1, _reverse_conj(in2), "full", "auto", None, "correlate2d")
    s1, s2 = P.shape_of(in1), P.shape_of(in2)
    return _crop(full, [s2[0] // 2, s2[1] // 2], list(s1), [0, 1])


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


from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
