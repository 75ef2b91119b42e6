"""Discrete Fourier transforms (family ``tf_numba.fft.v1``): NumPy's pocketfft on the host.

Four ops, each over a tuple of ``axes`` with their logical ``lengths`` and a ``norm``
('backward', 'ortho' or 'forward', as NumPy):

| op | input | output |
| --- | --- | --- |
| ``fft.fft`` / ``fft.ifft`` | complex | complex, same shape |
| ``fft.rfft`` | real | complex, last of ``axes`` becomes ``n // 2 + 1`` |
| ``fft.irfft`` | complex | real, ``axes`` become ``lengths`` |

All four are linear, so their JVP is the op on the tangent and reverse mode needs only
their transposes. Complex derivatives follow JAX: a VJP is a *transpose*, not a Hermitian
adjoint (cotangents pair with tangents by ``Re(sum(ct * t))``, no conjugate), so for a real
function ``f`` of complex ``z = x + iy`` the gradient is ``df/dx - i df/dy``. Transposes:

- ``fft`` and ``ifft``: the DFT matrix is symmetric, so each is its own transpose.
- ``rfft``: ``irfft(conj(ct) / mask)`` with the reciprocal normalization (``mask`` as for
  ``irfft`` below). The transpose is ``Re(F^T pad(ct))`` (zero-pad to ``n``, complex
  ``fft``, real part: what JAX computes), and ``Re(F^T c) = Re(F^* conj(c))``, which is
  ``irfft(conj(c) / mask)`` up to scale because c2r doubles the bins other than the zero
  and Nyquist ones and reads only the real part of those two. One real ``n``-point
  transform instead of a complex one, and no pad.
- ``irfft``: ``conj(mask * rfft(ct))`` with the reciprocal normalization, ``mask`` 1 for the
  zero (and, for even ``n``, the Nyquist) frequency and 2 for the others, which appear
  twice in the Hermitian-symmetric spectrum (JAX's ``_irfft_transpose``).

complex64/float32 stay in single precision (NumPy 2's pocketfft computes in it).
"""
import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import aval_of, deflinear, instantiate
from ..core.primitive import register
from ..errors import DTypeError, ShapeError
from ..ops import layout
from . import Family

FAMILY = Family("tf_numba.fft.v1", module=__name__,
                doc="complex and real discrete Fourier transforms over any axes")

NORMS = ("backward", "ortho", "forward")
_RECIPROCAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check(name, x, axes, lengths, norm):
    if norm not in NORMS:
        raise ShapeError(f"norm must be one of {NORMS}, got {norm!r}", op=name)
    if len(axes) != len(lengths) or len(set(axes)) != len(axes) or not axes:
        raise ShapeError(f"needs distinct axes with one length each, got axes {axes} and "
                         f"lengths {lengths}", op=name)
    if any(not 0 <= a < x.ndim for a in axes):
        raise ShapeError(f"axes {axes} out of range for shape {x.shape}", op=name)
    if any(n < 1 for n in lengths):
        raise ShapeError(f"invalid number of FFT data points {lengths}", op=name)


def _c2c_eval(name):
    def abstract_eval(x, *, axes, lengths, norm):
        _check(name, x, axes, lengths, norm)
        if not dtypes.is_complex(x.dtype):
            raise DTypeError(f"needs a complex dtype, got {x.dtype.name}", op=name)
        if tuple(x.shape[a] for a in axes) != tuple(lengths):
            raise ShapeError(f"input dims {[x.shape[a] for a in axes]} along axes {axes} must "
                             f"equal lengths {lengths}", op=name)
        return x
    return abstract_eval


def _rfft_eval(x, *, axes, lengths, norm):
    _check("rfft", x, axes, lengths, norm)
    if x.dtype.kind != "f":
        raise DTypeError(f"needs a real float dtype, got {x.dtype.name}", op="rfft")
    if tuple(x.shape[a] for a in axes) != tuple(lengths):
        raise ShapeError(f"input dims along axes {axes} must equal lengths {lengths}",
                         op="rfft")
    shape = list(x.shape)
    shape[axes[-1]] = lengths[-1] // 2 + 1
    return ShapedArray(tuple(shape), dtypes.complex_of(x.dtype))


def _irfft_eval(x, *, axes, lengths, norm):
    _check("irfft", x, axes, lengths, norm)
    if not dtypes.is_complex(x.dtype):
        raise DTypeError(f"needs a complex dtype, got {x.dtype.name}", op="irfft")
    want = tuple(lengths[:-1]) + (lengths[-1] // 2 + 1,)
    if tuple(x.shape[a] for a in axes) != want:
        raise ShapeError(f"input dims along axes {axes} must be {want} for output lengths "
                         f"{lengths}", op="irfft")
    shape = list(x.shape)
    for a, n in zip(axes, lengths):
        shape[a] = n
    return ShapedArray(tuple(shape), dtypes.real_part(x.dtype))


def _impl(one_axis, many_axes):
    # the 1-D functions skip fftn's argument handling: a few microseconds a call
    def impl(x, *, axes, lengths, norm):
        if len(axes) == 1:
            return one_axis(x, lengths[0], axes[0], norm)
        return many_axes(x, s=lengths, axes=axes, norm=norm)
    impl.__name__ = many_axes.__name__
    return impl


fft_p = FAMILY.op("fft", _c2c_eval("fft"), _impl(np.fft.fft, np.fft.fftn))
ifft_p = FAMILY.op("ifft", _c2c_eval("ifft"), _impl(np.fft.ifft, np.fft.ifftn))
rfft_p = FAMILY.op("rfft", _rfft_eval, _impl(np.fft.rfft, np.fft.rfftn))
irfft_p = FAMILY.op("irfft", _irfft_eval, _impl(np.fft.irfft, np.fft.irfftn))


def fft(x, axes, norm="backward"):
    """Complex DFT of ``x`` over ``axes`` (their lengths are ``x``'s)."""
    return fft_p.bind(x, axes=tuple(axes), lengths=_lengths(x, axes), norm=norm)


def ifft(x, axes, norm="backward"):
    return ifft_p.bind(x, axes=tuple(axes), lengths=_lengths(x, axes), norm=norm)


def rfft(x, axes, norm="backward"):
    return rfft_p.bind(x, axes=tuple(axes), lengths=_lengths(x, axes), norm=norm)


def irfft(x, axes, lengths, norm="backward"):
    """Real inverse DFT: output lengths ``lengths`` along ``axes``; the input's last axis
    holds ``lengths[-1] // 2 + 1`` frequencies."""
    return irfft_p.bind(x, axes=tuple(axes), lengths=tuple(lengths), norm=norm)


def _lengths(x, axes):
    shape = aval_of(x).shape
    return tuple(shape[a] for a in axes)


# ---------------------------------------------------------------- transposes

def _fft_transpose(ct, x, *, axes, lengths, norm):
    return [fft_p.bind(instantiate(ct), axes=axes, lengths=lengths, norm=norm)]


def _ifft_transpose(ct, x, *, axes, lengths, norm):
    return [ifft_p.bind(instantiate(ct), axes=axes, lengths=lengths, norm=norm)]


def _bin_weights(aval, axes, lengths, middle):
    """Weights along the last of ``axes``, broadcast to ``aval`` in its complex dtype: 1 for
    the zero (and, for even ``n``, the Nyquist) frequency, ``middle`` for the others (the
    bins that appear twice in the full Hermitian-symmetric spectrum)."""
    from ..ops import elementwise as ew
    n = lengths[-1]
    mask = np.full(n // 2 + 1, middle)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    weights = layout.broadcast_in_dim(mask.astype(dtypes.real_part(aval.dtype)), aval.shape,
                                      (axes[-1],))
    return ew.convert_element_type(weights, aval.dtype)


def _rfft_transpose(ct, x, *, axes, lengths, norm):
    from ..ops import elementwise as ew
    ct = instantiate(ct)
    weighted = ew.mul(ew.conj(ct), _bin_weights(aval_of(ct), axes, lengths, 0.5))
    return [irfft_p.bind(weighted, axes=axes, lengths=lengths, norm=_RECIPROCAL[norm])]


def _irfft_transpose(ct, x, *, axes, lengths, norm):
    from ..ops import elementwise as ew
    spectrum = rfft_p.bind(instantiate(ct), axes=axes, lengths=lengths,
                           norm=_RECIPROCAL[norm])
    return [ew.mul(ew.conj(spectrum), _bin_weights(aval_of(spectrum), axes, lengths, 2.0))]


deflinear(fft_p, _fft_transpose)
deflinear(ifft_p, _ifft_transpose)
deflinear(rfft_p, _rfft_transpose)
deflinear(irfft_p, _irfft_transpose)


def _batch_rule(prim):
    def rule(args, dims, *, axes, lengths, norm):
        (x,), (d,) = args, dims
        x = layout.transpose(x, (d,) + tuple(i for i in range(len(aval_of(x).shape)) if i != d))
        return prim.bind(x, axes=tuple(a + 1 for a in axes), lengths=lengths, norm=norm), 0
    return rule


for _prim in (fft_p, ifft_p, rfft_p, irfft_p):
    register("batch", _prim, _batch_rule(_prim))
