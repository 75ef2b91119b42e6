"""``jax.lax.fft``: the fast Fourier transforms of the last axes, by kind (``FftType``), on
the ``tf_numba.fft`` family (differentiable, batched, host steps under ``jit``).

>>> from tf_numba import lax
>>> lax.fft(np.array([1.0, 2.0, 3.0, 4.0]), lax.FftType.RFFT, (4,))
array([10.+0.j, -2.+2.j, -2.+0.j])
"""
import enum
import operator

from ..core.linear import aval_of
from ..core.trace import user_source
from ..errors import ShapeError
from ._operands import leaf

__all__ = ["FftType", "fft"]


class FftType(enum.IntEnum):
    """The kind of ``fft`` (``jax.lax.FftType``): complex to complex forward (``FFT``) or
    inverse (``IFFT``), real to half-spectrum (``RFFT``) and back (``IRFFT``)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def fft(x, fft_type, fft_lengths):
    """The transform ``fft_type`` (a ``FftType`` or its name, ``'fft'``, ``'ifft'``,
    ``'rfft'``, ``'irfft'``) of the last ``len(fft_lengths)`` axes of ``x``; the lengths
    are those axes' sizes, but for ``IRFFT``, where they are the real output's
    (``jax.lax.fft``)."""
    import tf_numba.numpy as tnp
    kind = FftType[fft_type.upper()] if isinstance(fft_type, str) else FftType(fft_type)
    x = leaf(x)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    rank = aval_of(x).ndim
    if not 1 <= len(lengths) <= rank:
        raise ShapeError(f"fft_lengths {lengths} must name between 1 and {rank} trailing axes "
                         f"of x of shape {tuple(aval_of(x).shape)}", op="fft",
                         source=user_source())
    axes = tuple(range(rank - len(lengths), rank))
    transform = {FftType.FFT: tnp.fft.fftn, FftType.IFFT: tnp.fft.ifftn,
                 FftType.RFFT: tnp.fft.rfftn, FftType.IRFFT: tnp.fft.irfftn}[kind]
    return transform(x, s=lengths, axes=axes)


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
