"""``tf_numba.scipy.fft``: the discrete cosine transforms ``dct``, ``idct``, ``dctn`` and
``idctn`` of SciPy's four types and three normalizations (JAX has type 2 only).

A transform along an axis is a product with its ``N x N`` cosine matrix (SciPy's
definitions, made in NumPy once per type, length and normalization), so it differentiates,
batches and compiles as a product does; the inverse of each type is the matrix of its
inverse type (I and IV their own, II and III each other's) with the normalization swapped.

>>> dct(np.array([1.0, 2.0, 3.0]))[:2]
array([12.        , -3.46410162])
"""
import functools

import numpy as np

import tf_numba.numpy as tnp

from ..errors import ArgumentError, ShapeError

__all__ = ["dct", "dctn", "idct", "idctn"]

_INVERSE_TYPE = {1: 1, 2: 3, 3: 2, 4: 4}
_SWAPPED_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


@functools.lru_cache(maxsize=64)
def _matrix(kind, n, norm):
    """``M`` with ``dct(x) = M @ x`` for ``x`` of length ``n`` (SciPy's ``scipy.fft.dct``
    formulas for the types I to IV; 'ortho' makes ``M`` orthogonal)."""
    k, j = np.arange(n)[:, None], np.arange(n)[None, :]
    if kind == 1:
        if n < 2:
            raise ShapeError(f"a type 1 DCT needs at least 2 points, got {n}", op="dct")
        m = 2 * np.cos(np.pi * k * j / (n - 1))
        m[:, 0] /= 2
        m[:, -1] /= 2
        scale = 2 * (n - 1)
    elif kind == 2:
        m = 2 * np.cos(np.pi * k * (2 * j + 1) / (2 * n))
        scale = 2 * n
    elif kind == 3:
        m = 2 * np.cos(np.pi * (2 * k + 1) * j / (2 * n))
        m[:, 0] /= 2
        scale = 2 * n
    else:
        m = 2 * np.cos(np.pi * (2 * k + 1) * (2 * j + 1) / (4 * n))
        scale = 2 * n
    if norm == "forward":
        return m / scale
    if norm == "ortho":
        # scaled so that M^T M = I: the first (and for type I the last) row and column
        # weighted as the transform's symmetric extension counts them
        if kind == 1:
            w = np.ones(n)
            w[0] = w[-1] = np.sqrt(2)
            return m * w[None, :] / w[:, None] / np.sqrt(scale)
        if kind == 2:
            m = m / np.sqrt(scale)
            m[0] /= np.sqrt(2)
            return m
        if kind == 3:
            return _matrix(2, n, "ortho").T.copy()
        return m / np.sqrt(scale)
    return m


def _checked(name, kind, norm):
    if kind not in _INVERSE_TYPE:
        raise ArgumentError(f"type must be 1, 2, 3 or 4, got {kind!r}", op=name)
    norm = "backward" if norm is None else norm
    if norm not in _SWAPPED_NORM:
        raise ArgumentError(f"norm must be 'backward', 'ortho' or 'forward', got {norm!r}",
                            op=name)
    return norm


def _along(x, axis, n, matrix_of):
    """The transform ``matrix_of(length)`` applied along ``axis`` of ``x``, after cutting
    or zero-padding it to ``n`` points."""
    x = tnp.asarray(x)
    if not tnp.issubdtype(x.dtype, tnp.inexact):
        x = x.astype(tnp.float64)
    axis = axis % x.ndim
    length = x.shape[axis]
    if n is not None:
        if n < 1:
            raise ShapeError(f"the number of points must be positive, got {n}", op="dct")
        if n < length:
            x = tnp.take(x, np.arange(n), axis=axis)
        elif n > length:
            pad = [(0, 0)] * x.ndim
            pad[axis] = (0, n - length)
            x = tnp.pad(x, pad)
        length = n
    m = matrix_of(length).astype(np.finfo(x.dtype).dtype)
    return tnp.moveaxis(tnp.tensordot(x, m, axes=([axis], [1])), -1, axis)


def dct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002 - SciPy's name
    """The discrete cosine transform of ``type`` (1 to 4) along ``axis``, of ``x`` cut or
    zero-padded to ``n`` points, as ``scipy.fft.dct``; ``norm`` 'backward' (None),
    'ortho' or 'forward'.

    >>> dct(np.array([1.0, 2.0, 3.0]), norm="ortho")[:2]
    array([ 3.46410162, -1.41421356])
    """
    norm = _checked("dct", type, norm)
    return _along(x, axis, n, lambda length: _matrix(type, length, norm))


def idct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002 - SciPy's name
    """The inverse of ``dct`` of ``type`` and ``norm`` (``idct(dct(x)) == x``), as
    ``scipy.fft.idct``.

    >>> idct(dct(np.array([1.0, 2.0, 3.0])))
    array([1., 2., 3.])
    """
    norm = _checked("idct", type, norm)
    return _along(x, axis, n, lambda length: _matrix(_INVERSE_TYPE[type], length,
                                                     _SWAPPED_NORM[norm]))


def _axes(name, x, s, axes):
    ndim = tnp.ndim(x)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [a % ndim for a in np.atleast_1d(axes)]
    if s is None:
        s = [None] * len(axes)
    if len(s) != len(axes):
        raise ShapeError(f"s ({len(s)} lengths) and axes ({len(axes)}) must have one length "
                         "per axis", op=name)
    return list(zip(axes, s))


def dctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002 - SciPy's name
    """``dct`` along each of ``axes`` (default all; the last ``len(s)`` with ``s``), each
    cut or padded to its length in ``s``, as ``scipy.fft.dctn``."""
    for axis, n in _axes("dctn", x, s, axes):
        x = dct(x, type, n, axis, norm)
    return x


def idctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002 - SciPy's name
    """The inverse of ``dctn``, as ``scipy.fft.idctn``."""
    for axis, n in _axes("idctn", x, s, axes):
        x = idct(x, type, n, axis, norm)
    return x


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
