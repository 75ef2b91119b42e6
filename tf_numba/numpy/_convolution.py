"""N-D convolution as ``scipy.signal`` computes it: the one implementation behind
``tnp.convolve`` and ``tnp.correlate`` (its 1-D case, with NumPy's modes) and
``tf_numba.scipy.signal``'s convolutions.

A convolution is computed directly (a gather of the input's windows and one contraction
with the kernel) or through the FFT (``tnp.fft.rfftn``), chosen by the number of products
the direct form costs (``method="auto"``; ``_FFT_ABOVE``).
"""
import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ShapeError
from ..ops import layout
from . import _promote as P
from . import fft
from .indexing import take
from .manipulation import moveaxis
from .math import conj, rint
from .products import einsum

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
        windows = moveaxis(take(windows, rows, axis=a), a + 1, -1)
    kernel = layout.rev(w, tuple(axes))
    # windows: x's axes (output lengths) then one window axis per convolved axis, in order
    letters = "abcdefghijklmnopqrstuvwxyz"
    out = letters[:rank]
    win = "".join(letters[rank + i] for i in range(len(axes)))
    ker = "".join(letters[rank + axes.index(a)] if a in axes else letters[a]
                  for a in range(rank))
    return einsum(f"{out}{win},{ker}->{out}", windows, kernel)


def _full_fft(x, w, axes):
    """The full convolution along ``axes`` by the convolution theorem (real FFTs for real
    inputs), other axes broadcast."""
    shape = [P.shape_of(x)[a] + P.shape_of(w)[a] - 1 for a in axes]
    dt = aval_of(x).dtype
    if not dtypes.is_inexact(dt):
        # integers: in float64, rounded back (SciPy's fft method does the same)
        full = _full_fft(P.cast(x, dtypes.float64), P.cast(w, dtypes.float64), axes)
        return P.cast(rint(full), dt)
    if dtypes.is_complex(dt):
        return fft.ifftn(fft.fftn(x, shape, axes) * fft.fftn(w, shape, axes),
                             shape, axes)
    return fft.irfftn(fft.rfftn(x, shape, axes) * fft.rfftn(w, shape, axes),
                          shape, axes)


def crop(full, starts, lengths, axes):
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
    return crop(full, [(f - n) // 2 for f, n in zip(sizes, lengths)], lengths, axes)


def _direct_products(s1, s2, axes):
    return int(np.prod([s1[a] + s2[a] - 1 for a in axes], dtype=np.int64)) * \
        int(np.prod([s2[a] for a in axes], dtype=np.int64))


def convolve(in1, in2, mode, method, axes, name):
    """The convolution of ``in1`` and ``in2`` along ``axes`` (None: all; the other axes
    broadcast) in SciPy's ``mode``, by ``method`` ('direct', 'fft', or 'auto': by the
    direct form's cost); ``name`` is the op errors name."""
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
            x = P.broadcast_to(x, shape, name)
        full = _full_direct(x, w, axes)
    else:
        full = _full_fft(x, w, axes)
    return _scipy_mode(full, s1, s2, mode, axes)


def reverse_conj(w):
    """``w`` reversed along every axis and conjugated: correlation is convolution with it."""
    w = P.as_array(w)
    if dtypes.is_complex(aval_of(w).dtype):
        w = conj(w)
    return layout.rev(w, tuple(range(len(P.shape_of(w)))))
