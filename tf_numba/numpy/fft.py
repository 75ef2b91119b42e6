"""``tnp.fft``: ``numpy.fft`` on the ops of family ``tf_numba.fft.v1`` (``ext/fft.py``).

``n``/``s`` crop or zero-pad the input as NumPy does, ``axis``/``axes`` take negative
values, ``norm`` is 'backward' (default), 'ortho' or 'forward'. float32/complex64 inputs
give complex64 (or float32) results, as NumPy 2. Everything is differentiable with JAX's
convention for complex values (see ``ext/fft.py``).

>>> import numpy as np, tf_numba.numpy as tnp
>>> tnp.fft.rfft(np.array([1.0, 0.0, 0.0, 0.0]))
array([1.+0.j, 1.+0.j, 1.+0.j])
"""
import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import ArgumentError, DTypeError, ShapeError
from ..ext import fft as F
from ..ops import layout
from . import _promote as P

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "hfft",
           "ihfft"]


def _norm(norm):
    norm = "backward" if norm is None else norm
    if norm not in F.NORMS:
        raise ArgumentError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                            '"forward".')
    return norm


_shape = P.shape_of


def _as_complex(x):
    x = P.asarray(x)
    dt = dtypes.complex_of(dtypes.inexact_of(P.concrete_dtype(x)))
    return P.cast(x, dt)


def _as_real(x):
    x = P.asarray(x)
    dt = P.concrete_dtype(x)
    if dtypes.is_complex(dt):
        raise DTypeError(f"needs real input, got {dt.name}: use fft, or take the real "
                         "part first", op="rfft")
    return P.cast(x, dtypes.inexact_of(dt))


def _resize(x, axis, n):
    """``x`` cropped or zero-padded to length ``n`` along ``axis``."""
    size = _shape(x)[axis]
    if n == size:
        return x
    if n < size:
        return layout.slice_in_dim(x, 0, n, 1, axis)
    config = [(0, 0, 0)] * len(_shape(x))
    config[axis] = (0, n - size, 0)
    return layout.pad(x, np.zeros((), aval_of(x).dtype), config)


def _axes_and_lengths(x, s, axes, name, last_from=None):
    """Normalized axes and the logical length per axis (NumPy's rules for ``s``/``axes``)."""
    rank = len(_shape(x))
    if axes is None:
        axes = tuple(range(rank)) if s is None else tuple(range(rank - len(s), rank))
    else:
        axes = tuple(P.axis_arg(a, rank, name) for a in np.atleast_1d(axes).tolist())
    if len(set(axes)) != len(axes):
        raise ShapeError(f"repeated axes {axes}", op=name)
    if s is None:
        lengths = [_shape(x)[a] for a in axes]
        if last_from is not None and axes:
            lengths[-1] = last_from(_shape(x)[axes[-1]])
    else:
        lengths = [int(n) for n in np.atleast_1d(s).tolist()]
        if len(lengths) != len(axes):
            raise ShapeError("Shape and axes have different lengths.", op=name)
    for n in lengths:
        if n < 1:
            raise ShapeError(f"Invalid number of FFT data points ({n}) specified.", op=name)
    if not axes:
        raise ShapeError("fft over no axes", op=name)
    return axes, tuple(lengths)


def _c2c(op, x, s, axes, norm, name):
    x = _as_complex(x)
    axes, lengths = _axes_and_lengths(x, s, axes, name)
    for a, n in zip(axes, lengths):
        x = _resize(x, a, n)
    return op(x, axes, _norm(norm))


def _r2c(x, s, axes, norm, name):
    x = _as_real(x)
    axes, lengths = _axes_and_lengths(x, s, axes, name)
    for a, n in zip(axes, lengths):
        x = _resize(x, a, n)
    return F.rfft(x, axes, _norm(norm))


def _c2r(x, s, axes, norm, name):
    x = _as_complex(x)
    axes, lengths = _axes_and_lengths(x, s, axes, name, last_from=lambda m: 2 * (m - 1))
    for a, n in zip(axes[:-1], lengths[:-1]):
        x = _resize(x, a, n)
    x = _resize(x, axes[-1], lengths[-1] // 2 + 1)
    return F.irfft(x, axes, lengths, _norm(norm))


def _one(axis, n):
    return (axis,), (None if n is None else (n,))


def fft(a, n=None, axis=-1, norm=None, out=None):
    """1-D complex DFT along ``axis``.

    >>> tnp.fft.fft(np.array([1.0, 1.0]))
    array([2.+0.j, 0.+0.j])
    """
    P.check_unsupported("fft", out=(out, None))
    axes, s = _one(axis, n)
    return _c2c(F.fft, a, s, axes, norm, "fft")


def ifft(a, n=None, axis=-1, norm=None, out=None):
    P.check_unsupported("ifft", out=(out, None))
    axes, s = _one(axis, n)
    return _c2c(F.ifft, a, s, axes, norm, "ifft")


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """1-D DFT of real input: the ``n // 2 + 1`` non-negative frequencies."""
    P.check_unsupported("rfft", out=(out, None))
    axes, s = _one(axis, n)
    return _r2c(a, s, axes, norm, "rfft")


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """Inverse of ``rfft``: ``n`` real samples (default ``2 * (m - 1)``)."""
    P.check_unsupported("irfft", out=(out, None))
    axes, s = _one(axis, n)
    return _c2r(a, s, axes, norm, "irfft")


_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The DFT of a signal with Hermitian symmetry given by its non-negative half: ``n``
    real values (default ``2 * (m - 1)``), as ``numpy.fft.hfft``."""
    from .math import conjugate
    P.check_unsupported("hfft", out=(out, None))
    return irfft(conjugate(P.asarray(a)), n, axis, _SWAPPED[_norm_arg(norm)])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of ``hfft``: the non-negative half of the Hermitian DFT of a real
    signal, as ``numpy.fft.ihfft``."""
    from .math import conjugate
    P.check_unsupported("ihfft", out=(out, None))
    return conjugate(rfft(a, n, axis, _SWAPPED[_norm_arg(norm)]))


def _norm_arg(norm):
    if norm not in _SWAPPED:
        raise ValueError(f"Invalid norm value {norm}; should be 'backward', 'ortho' or "
                         "'forward'.")
    return norm


def fftn(a, s=None, axes=None, norm=None, out=None):
    P.check_unsupported("fftn", out=(out, None))
    return _c2c(F.fft, a, s, axes, norm, "fftn")


def ifftn(a, s=None, axes=None, norm=None, out=None):
    P.check_unsupported("ifftn", out=(out, None))
    return _c2c(F.ifft, a, s, axes, norm, "ifftn")


def rfftn(a, s=None, axes=None, norm=None, out=None):
    P.check_unsupported("rfftn", out=(out, None))
    return _r2c(a, s, axes, norm, "rfftn")


def irfftn(a, s=None, axes=None, norm=None, out=None):
    P.check_unsupported("irfftn", out=(out, None))
    return _c2r(a, s, axes, norm, "irfftn")


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return fftn(a, s, axes, norm, out)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return ifftn(a, s, axes, norm, out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return irfftn(a, s, axes, norm, out)


def fftfreq(n, d=1.0, device=None, *, dtype=None):
    """Sample frequencies of an ``n``-point DFT with sample spacing ``d``."""
    base = np.fft.fftfreq(int(n), 1.0)
    return _over_d(base, d, dtype)


def rfftfreq(n, d=1.0, device=None, *, dtype=None):
    base = np.fft.rfftfreq(int(n), 1.0)
    return _over_d(base, d, dtype)


def _over_d(base, d, dtype):
    if dtype is not None:
        base = base.astype(dtypes.canonical(dtype))
    if P.is_tracer(d):
        from .math import divide
        return divide(base, d)
    out = base / d
    return out.astype(base.dtype) if dtype is not None else out


def _shift(x, axes, sign):
    from .manipulation import roll
    x = P.asarray(x)
    rank = len(_shape(x))
    axes = tuple(range(rank)) if axes is None else tuple(np.atleast_1d(axes).tolist())
    shifts = tuple(sign * (_shape(x)[a] // 2) for a in axes)
    return roll(x, shifts, axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (``roll`` by ``n // 2`` along ``axes``)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    return _shift(x, axes, -1)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
