"""``tf_numba.scipy.signal``: convolution and correlation of N-D arrays (``convolve``,
``correlate``, ``convolve2d``, ``correlate2d``, ``fftconvolve``), ``detrend``, and the
spectral estimates of windowed segments (``stft``, ``istft``, ``csd``, ``welch``), as
``scipy.signal`` computes them, differentiable in their inputs and jittable.

The convolutions are ``numpy/_convolution.py``'s (direct, or through the FFT by the cost
of the direct form), which ``tnp.convolve`` and ``tnp.correlate`` share.

>>> import numpy as np
>>> from tf_numba.scipy import signal
>>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
array([0. , 1. , 2.5, 4. , 1.5])
"""
import math

import numpy as np

import tf_numba.numpy as tnp

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ShapeError, UnsupportedError
from ..numpy import _convolution as C
from ..numpy import _promote as P
from ..ops import layout

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve", "detrend",
           "stft", "istft", "csd", "welch"]


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


# ---------------------------------------------------------------- spectral estimates

def _window(window, nperseg, length, op):
    """``(win, nperseg)``: a window by name (``scipy.signal.get_window``, periodic; 256
    points by default, at most the signal's length) or the given array."""
    import scipy.signal
    if isinstance(window, (str, tuple)):
        nperseg = 256 if nperseg is None else int(nperseg)
        if nperseg < 1:
            raise ShapeError(f"nperseg must be positive, got {nperseg}", op=op)
        nperseg = min(nperseg, length) if length is not None else nperseg
        return scipy.signal.get_window(window, nperseg), nperseg
    win = np.asarray(window)
    if win.ndim != 1:
        raise ShapeError(f"the window must be 1-D, got shape {win.shape}", op=op)
    if nperseg is not None and int(nperseg) != win.shape[0]:
        raise ShapeError(f"nperseg {nperseg} differs from the window's length "
                         f"{win.shape[0]}", op=op)
    return win, win.shape[0]


def _extended(x, n, boundary, op):
    """``x`` extended by ``n`` points at both ends of its last axis (SciPy's ``even_ext``,
    ``odd_ext``, ``const_ext``, ``zero_ext``)."""
    pad = [(0, 0)] * (tnp.ndim(x) - 1) + [(n, n)]
    if boundary not in ("zeros", "constant", "even", "odd"):
        raise ShapeError(f"boundary must be 'even', 'odd', 'constant', 'zeros' or None, got "
                         f"{boundary!r}", op=op)
    if n == 0:
        return x
    if boundary == "zeros":
        return tnp.pad(x, pad)
    if boundary == "constant":
        return tnp.pad(x, pad, mode="edge")
    even = tnp.pad(x, pad, mode="reflect")
    if boundary == "even":
        return even
    # odd: the even extension turned about the end points
    return tnp.concatenate([2 * x[..., :1] - even[..., :n], x, 2 * x[..., -1:] - even[..., -n:]],
                           axis=-1)


def _segments_fft(x, win, detrend_kind, nperseg, noverlap, nfft, onesided):
    """The DFTs of the windowed, detrended segments of ``x``'s last axis: ``(..., segments,
    frequencies)``."""
    step = nperseg - noverlap
    count = (tnp.shape(x)[-1] - noverlap) // step
    index = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
    segments = tnp.take(x, index, axis=-1)
    if callable(detrend_kind):
        segments = detrend_kind(segments)
    elif detrend_kind:
        segments = detrend(segments, axis=-1, type=detrend_kind)
    segments = segments * win.astype(np.finfo(segments.dtype).dtype)   # the signal's precision
    if onesided:
        return tnp.fft.rfft(tnp.real(segments), n=nfft, axis=-1)
    return tnp.fft.fft(segments, n=nfft, axis=-1)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_kind, return_onesided,
              scaling, axis, mode, boundary=None, padded=False, op="csd"):
    """SciPy's ``_spectral_helper``: ``(freqs, times, result)``, the result's frequencies
    where ``axis`` was and its segments last. ``mode`` 'psd' (cross spectral densities
    ``conj(X) Y``, one-sided ones doubled but at 0 and Nyquist) or 'stft' (the DFTs)."""
    same = y is None
    x = tnp.asarray(x)
    if not tnp.issubdtype(x.dtype, tnp.inexact):
        x = x.astype(np.float64)
    if not same:
        y = tnp.asarray(y)
        if not tnp.issubdtype(y.dtype, tnp.inexact):
            y = y.astype(np.float64)
        shape = np.broadcast_shapes(tuple(np.delete(tnp.shape(x), axis)),
                                    tuple(np.delete(tnp.shape(y), axis)))
        x = tnp.moveaxis(x, axis, -1)
        y = tnp.moveaxis(y, axis, -1)
        x = tnp.broadcast_to(x, tuple(shape) + (tnp.shape(x)[-1],))
        y = tnp.broadcast_to(y, tuple(shape) + (tnp.shape(y)[-1],))
        if tnp.shape(x)[-1] != tnp.shape(y)[-1]:
            longer = max(tnp.shape(x)[-1], tnp.shape(y)[-1])   # SciPy pads the shorter
            x, y = (tnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, longer - tnp.shape(v)[-1])])
                    for v in (x, y))
    else:
        x = tnp.moveaxis(x, axis, -1)
    if scaling not in ("density", "spectrum"):
        raise ShapeError(f"scaling must be 'density' or 'spectrum', got {scaling!r}", op=op)
    win, nperseg = _window(window, nperseg, tnp.shape(x)[-1], op)
    nfft = nperseg if nfft is None else int(nfft)
    if nfft < nperseg:
        raise ShapeError(f"nfft ({nfft}) must be at least nperseg ({nperseg})", op=op)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ShapeError(f"noverlap ({noverlap}) must be less than nperseg ({nperseg})",
                         op=op)
    step = nperseg - noverlap
    operands = [x] if same else [x, y]
    if boundary is not None:
        operands = [_extended(v, nperseg // 2, boundary, op) for v in operands]
    if padded:
        extra = (-(tnp.shape(operands[0])[-1] - nperseg) % step) % nperseg
        operands = [tnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, extra)]) for v in operands]
    onesided = return_onesided and not any(tnp.iscomplexobj(v) for v in operands)
    freqs = (np.fft.rfftfreq(nfft, 1 / fs) if onesided else np.fft.fftfreq(nfft, 1 / fs))
    spectra = [_segments_fft(v, win, detrend_kind, nperseg, noverlap, nfft, onesided)
               for v in operands]
    scale = float(1.0 / (fs * np.sum(win * win)) if scaling == "density"
                  else 1.0 / np.sum(win) ** 2)
    if mode == "stft":
        result = spectra[0] * math.sqrt(scale)
    else:
        result = tnp.conj(spectra[0]) * spectra[-1] * scale
        if onesided:
            inner = np.ones(len(freqs))
            inner[1:len(freqs) - (0 if nfft % 2 else 1)] = 2.0
            result = result * inner.astype(np.finfo(result.dtype).dtype)
    length = tnp.shape(operands[0])[-1]
    times = np.arange(nperseg / 2, length - nperseg / 2 + 1, step) / float(fs)
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    if same and mode != "stft":
        result = tnp.real(result)
    axis = axis - 1 if axis < 0 else axis
    return freqs, times, tnp.moveaxis(tnp.swapaxes(result, -1, -2), -2, axis)


def _median_bias(n):
    """SciPy's bias of the median of ``n`` chi-square(2) values over their mean."""
    even = 2 * np.arange(1, (n - 1) // 2 + 1)
    return 1 + np.sum(1.0 / (even + 1) - 1.0 / even)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """``(f, Pxy)``: the cross power spectral density of ``x`` and ``y`` by Welch's method
    (the mean, or with ``average='median'`` the bias-corrected median, of ``conj(X) Y``
    over windowed, detrended segments overlapping by ``noverlap``), as
    ``scipy.signal.csd``; differentiable in ``x`` and ``y``.

    >>> f, p = csd(np.sin(np.arange(64.0)), np.cos(np.arange(64.0)), nperseg=16)
    """
    if average not in ("mean", "median"):
        raise ShapeError(f"average must be 'mean' or 'median', got {average!r}", op="csd")
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd", op="csd")
    return freqs, _averaged(pxy, average)


def _averaged(pxy, average):
    if tnp.shape(pxy)[-1] == 1:
        return pxy[..., 0]
    if average == "mean":
        return tnp.mean(pxy, axis=-1)
    median = tnp.median(tnp.real(pxy), axis=-1)
    if tnp.iscomplexobj(pxy):
        median = median + 1j * tnp.median(tnp.imag(pxy), axis=-1)
    return median / _median_bias(tnp.shape(pxy)[-1])


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """``(f, Pxx)``: the power spectral density of ``x`` by Welch's method, as
    ``scipy.signal.welch`` (``csd`` of ``x`` with itself, real).

    >>> f, p = welch(np.sin(np.arange(64.0)), nperseg=16)
    """
    if average not in ("mean", "median"):
        raise ShapeError(f"average must be 'mean' or 'median', got {average!r}",
                         op="welch")
    freqs, _, pxx = _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd", op="welch")
    return freqs, _averaged(pxx, average)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1, scaling="spectrum"):
    """``(f, t, Zxx)``: the short-time Fourier transform of ``x`` along ``axis`` (the DFTs
    of windowed segments, the signal extended by half a segment at each end by
    ``boundary`` and zero-padded to whole segments), as ``scipy.signal.stft``; ``Zxx`` has
    the frequencies where ``axis`` was and the times last. Differentiable.

    >>> f, t, z = stft(np.arange(32.0), nperseg=8)
    """
    if scaling == "psd":
        scaling = "density"
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, scaling, axis, "stft", boundary, padded, op="stft")


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2,
          scaling="spectrum"):
    """``(t, x)``: the signal whose ``stft`` is ``Zxx``, by inverse DFTs of the segments
    and a windowed overlap-add divided by the summed squared window, as
    ``scipy.signal.istft``; differentiable.

    >>> t, x = istft(stft(np.arange(32.0), nperseg=8)[2], nperseg=8)
    """
    z = tnp.asarray(Zxx)
    ndim = z.ndim
    if ndim < 2:
        raise ShapeError(f"Zxx must have at least 2 axes, got shape {tuple(z.shape)}",
                         op="istft")
    freq_axis, time_axis = freq_axis % ndim, time_axis % ndim
    if freq_axis == time_axis:
        raise ShapeError("freq_axis and time_axis must differ", op="istft")
    n_freq = tnp.shape(z)[freq_axis]
    default = 2 * (n_freq - 1) if input_onesided else n_freq
    nperseg = default if nperseg is None else int(nperseg)
    if nfft is None:
        nfft = nperseg if (input_onesided and nperseg == default + 1) else default
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg or nfft < nperseg:
        raise ShapeError(f"noverlap ({noverlap}) must be below nperseg ({nperseg}) and nfft "
                         f"({nfft}) at least it", op="istft")
    step = nperseg - noverlap
    rest = [a for a in range(ndim) if a not in (freq_axis, time_axis)]
    z = tnp.transpose(z, rest + [time_axis, freq_axis])        # (..., segments, freqs)
    win, _ = _window(window, nperseg, None, "istft")
    inverse = tnp.fft.irfft(z, n=nfft, axis=-1) if input_onesided else \
        tnp.fft.ifft(z, n=nfft, axis=-1)
    segments = inverse[..., :nperseg]
    if scaling == "spectrum":
        segments = segments * float(np.sum(win))
    elif scaling == "psd":
        segments = segments * math.sqrt(fs * np.sum(win ** 2))
    count = tnp.shape(segments)[-2]
    length = nperseg + (count - 1) * step
    index = np.arange(count)[:, None] * step + np.arange(nperseg)[None, :]
    total = tnp.zeros(tuple(tnp.shape(segments)[:-2]) + (length,), segments.dtype)
    real = np.finfo(segments.dtype).dtype                  # the spectrum's precision
    total = tnp.at(total)[..., index].add(segments * win.astype(real))
    norm = np.zeros(length)
    np.add.at(norm, index, np.broadcast_to(win ** 2, index.shape))
    if boundary:
        total = total[..., nperseg // 2:length - nperseg // 2]
        norm = norm[nperseg // 2:length - nperseg // 2]
    x = total / np.where(norm > 1e-10, norm, 1.0).astype(real)
    if input_onesided:
        x = tnp.real(x)
    if x.ndim > 1 and time_axis != ndim - 1:
        x = tnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    # the times count x's first axis, as SciPy's and JAX's do (its time axis for 1-D x)
    return np.arange(tnp.shape(x)[0]) / float(fs), x


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
