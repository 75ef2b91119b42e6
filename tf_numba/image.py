"""Image resampling as ``jax.image``: ``resize`` and ``scale_and_translate`` with JAX's
kernels (linear, Keys and PyTorch cubic, Lanczos 3 and 5, area, nearest) and antialiasing.

Each resampled dimension is one product with a weight matrix (JAX's construction: the
kernel evaluated at the distance from each output sample to each input pixel, scaled out
when downsampling with ``antialias``, each column normalized), so a resize differentiates
in the image, and ``scale_and_translate`` in its scale and translation too.

>>> image.resize(np.arange(4.0).reshape(2, 2), (4, 4), "linear")[0]
array([0.  , 0.25, 0.75, 1.  ])
"""
import enum
import math

import numpy as np

import tf_numba.numpy as tnp

from .errors import ArgumentError, ShapeError, UnsupportedError

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Resampling kernels, JAX's: nearest, linear, Lanczos of radius 3 and 5, Keys cubic,
    PyTorch's cubic and area."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        names = {"nearest": "NEAREST", "linear": "LINEAR", "bilinear": "LINEAR",
                 "trilinear": "LINEAR", "triangle": "LINEAR", "lanczos3": "LANCZOS3",
                 "lanczos5": "LANCZOS5", "cubic": "CUBIC", "bicubic": "CUBIC",
                 "tricubic": "CUBIC", "cubic-pytorch": "CUBIC_PYTORCH",
                 "bicubic-pytorch": "CUBIC_PYTORCH", "area": "AREA"}
        if s not in names:
            raise ArgumentError(f"unknown resize method {s!r}; one of {sorted(names)}",
                                op="image.resize")
        return ResizeMethod[names[s]]


def _lanczos(radius, x):
    y = radius * tnp.sin(np.pi * x) * tnp.sin(np.pi * x / radius)
    out = tnp.where(x > 1e-3, y / tnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
    return tnp.where(x > radius, 0.0, out)


def _keys_cubic(x):
    out = ((1.5 * x - 2.5) * x) * x + 1.0
    out = tnp.where(x >= 1.0, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0, out)
    return tnp.where(x >= 2.0, 0.0, out)


def _opencv_cubic(x):
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = tnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return tnp.where(x >= 2.0, 0.0, out)


def _triangle(x):
    return tnp.maximum(0, 1 - tnp.abs(x))


_AREA = object()
# method: (kernel radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos(3.0, x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos(5.0, x)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}
_SMALL = 1000.0 * float(np.finfo(np.float32).eps)    # JAX's: a column this light is 0


def _normalized(weights):
    total = tnp.sum(weights, axis=0, keepdims=True)
    return tnp.where(tnp.abs(total) > _SMALL, weights / tnp.where(total != 0, total, 1), 0)


def _weight_matrix(m, n, scale, translation, kernel, antialias, edge_padding, radius):
    """The (m, n) matrix taking an input dimension of m pixels to n output samples."""
    inv_scale = 1.0 / scale
    kernel_scale = tnp.maximum(inv_scale, 1.0) if antialias else 1.0
    sample = (np.arange(n) + 0.5) * inv_scale - translation * inv_scale - 0.5
    k = 0
    if edge_padding:
        k = math.ceil(radius * max(1.0 / float(scale), 1.0)) if antialias else radius
    positions = np.arange(-k, m + k, dtype=np.float64)
    if kernel is _AREA:
        left = np.arange(n) * inv_scale - translation * inv_scale
        right = left + inv_scale
        pixels = np.arange(m, dtype=np.float64)
        weights = tnp.maximum(0.0, tnp.minimum(right[None, :], pixels[:, None] + 1.0)
                              - tnp.maximum(left[None, :], pixels[:, None]))
    else:
        weights = kernel(tnp.abs(sample[None, :] - positions[:, None]) / kernel_scale)
    if edge_padding:
        clamped = np.clip(positions.astype(np.int64), 0, m - 1)
        rows = np.broadcast_to(clamped[:, None], (len(positions), n))
        cols = np.broadcast_to(np.arange(n)[None, :], (len(positions), n))
        return _normalized(tnp.at(tnp.zeros((m, n), tnp.result_type(weights)))[
            rows, cols].add(weights))
    weights = _normalized(weights)
    inside = tnp.logical_and(sample >= -0.5, sample <= m - 0.5)
    return tnp.where(inside[None, :], weights, 0)


def _resample(x, shape, dims, scales, translations, method, antialias):
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    rank = len(shape)
    operands, out_axes = [x, list(range(rank))], list(range(rank))
    for i, d in enumerate(dims):
        w = _weight_matrix(tnp.shape(x)[d], shape[d], scales[i], translations[i], kernel,
                           antialias, edge_padding, radius)
        operands += [w.astype(x.dtype) if hasattr(w, "astype") else w, [d, rank + i]]
        out_axes[d] = rank + i
    if not dims:
        return x
    return tnp.einsum(*operands, out_axes)


def _checked(image, shape, method, op):
    x = tnp.asarray(image)
    shape = tuple(int(s) for s in shape)
    if len(shape) != x.ndim:
        raise ShapeError(f"shape {shape} must have one length per dimension of the image "
                         f"{tuple(x.shape)}", op=op)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(np.float64)
    return x, shape, method


def resize(image, shape, method, antialias=True, precision=None):
    """``image`` resampled to ``shape`` by ``method`` (a ``ResizeMethod`` or its name:
    ``"nearest"``, ``"linear"``, ``"cubic"``, ``"lanczos3"``, ``"lanczos5"``, ``"area"``,
    ``"cubic-pytorch"``), antialiased when shrinking, as ``jax.image.resize``.

    >>> image.resize(np.ones((4, 4)), (2, 2), "linear")
    array([[1., 1.],
           [1., 1.]])
    """
    x, shape, method = _checked(image, shape, method, "image.resize")
    if method == ResizeMethod.NEAREST:
        for d, (m, n) in enumerate(zip(tuple(x.shape), shape)):
            if m != n:
                picks = np.floor((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m / n))
                x = tnp.take(x, picks.astype(np.int64), axis=d)
        return x
    dims = [d for d in range(len(shape)) if tnp.shape(x)[d] != shape[d]]
    scales = [1.0 if shape[d] == 0 else shape[d] / tnp.shape(x)[d] for d in dims]
    return _resample(x, shape, dims, scales, [0.0] * len(dims), method, antialias)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=None):
    """``image`` resampled to ``shape`` so that input position ``p`` of each of
    ``spatial_dims`` lands at ``p * scale + translation`` (pixel centres at ``i + 0.5``;
    samples that fall outside the input are 0), as ``jax.image.scale_and_translate``;
    differentiable in ``scale`` and ``translation``."""
    x, shape, method = _checked(image, shape, method, "image.scale_and_translate")
    if method == ResizeMethod.NEAREST:
        raise UnsupportedError("nearest neighbour resampling is only resize's (as JAX)",
                               op="image.scale_and_translate")
    dims = [d % len(shape) for d in spatial_dims]
    scale, translation = list(scale), list(translation)
    if not (len(dims) == len(scale) == len(translation)):
        raise ShapeError(f"give one scale and one translation per spatial dim; got "
                         f"{len(scale)} and {len(translation)} for {len(dims)}",
                         op="image.scale_and_translate")
    return _resample(x, shape, dims, scale, translation, method, antialias)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
