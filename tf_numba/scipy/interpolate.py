"""``tf_numba.scipy.interpolate``: ``RegularGridInterpolator``, linear or nearest
interpolation of values on a rectangular grid, as ``jax.scipy.interpolate``;
differentiable in the values, the grid and the query points, and a pytree (its grid,
values and fill value are leaves), so it passes through ``jit`` and ``vmap``.

>>> f = RegularGridInterpolator((np.array([0.0, 1.0]),), np.array([0.0, 10.0]))
>>> f(np.array([[0.25]]))
array([2.5])
"""
import itertools

import numpy as np

import tf_numba.numpy as tnp

from ..errors import ArgumentError, ShapeError, UnsupportedError
from ..tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _method(method):
    if method not in _METHODS:
        raise ArgumentError(f"method must be 'linear' or 'nearest', got {method!r}",
                            op="RegularGridInterpolator")
    return method


class RegularGridInterpolator:
    """Interpolation on the grid ``points`` (one strictly increasing array per leading
    dimension of ``values``) by ``method`` 'linear' or 'nearest', as
    ``scipy.interpolate.RegularGridInterpolator``; query points outside the grid give
    ``fill_value`` (NaN by default; ``None`` extrapolates linearly). ``bounds_error`` is
    not available (as JAX's: a traced point cannot raise).

    >>> grid = (np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]))
    >>> f = RegularGridInterpolator(grid, np.arange(9.0).reshape(3, 3))
    >>> f(np.array([[1.5, 4.5], [2.2, 5.8]]))
    array([2. , 4.4])
    """

    def __init__(self, points, values, method="linear", bounds_error=False,
                 fill_value=np.nan):
        self.method = _method(method)
        if bounds_error:
            raise UnsupportedError("bounds_error=True: points outside the grid give "
                                   "fill_value (a traced point cannot raise)",
                                   op="RegularGridInterpolator")
        self.bounds_error = False
        values = tnp.asarray(values)
        if len(points) > values.ndim:
            raise ShapeError(f"{len(points)} point arrays for values of {values.ndim} "
                             "dimensions", op="RegularGridInterpolator")
        if not tnp.issubdtype(values.dtype, tnp.inexact):
            values = values.astype(np.float64)
        self.values = values
        self.grid = tuple(tnp.asarray(p) for p in points)
        for axis, p in enumerate(self.grid):
            if p.ndim != 1 or p.shape[0] != values.shape[axis]:
                raise ShapeError(f"the points of axis {axis} (shape {tuple(p.shape)}) must "
                                 f"be a vector of {values.shape[axis]}, as values' axis",
                                 op="RegularGridInterpolator")
        self.fill_value = None if fill_value is None else tnp.asarray(fill_value)

    def __call__(self, xi, method=None):
        """The interpolated values at ``xi`` (``(..., ndim)`` points, or a tuple of ``ndim``
        coordinate arrays), of shape ``xi.shape[:-1] + values.shape[ndim:]``."""
        method = _method(self.method if method is None else method)
        ndim = len(self.grid)
        if isinstance(xi, tuple):
            xi = tnp.stack(tnp.broadcast_arrays(*xi), axis=-1)
        xi = tnp.asarray(xi)
        if xi.shape[-1] != ndim:
            raise ShapeError(f"the query points have {xi.shape[-1]} coordinates, the grid "
                             f"{ndim} dimensions", op="RegularGridInterpolator")
        lead = tuple(xi.shape[:-1])
        flat = xi.reshape(-1, ndim)
        indices, fractions, outside = [], [], tnp.zeros(flat.shape[0], bool)
        for axis, g in enumerate(self.grid):
            x = flat[:, axis]
            i = tnp.clip(tnp.searchsorted(g, x) - 1, 0, g.shape[0] - 2)
            indices.append(i)
            low, high = tnp.take(g, i), tnp.take(g, i + 1)   # (g may be NumPy's, i traced)
            fractions.append((x - low) / (high - low))
            outside = outside | (x < g[0]) | (x > g[-1])
        trailing = (slice(None),) + (None,) * (self.values.ndim - ndim)
        if method == "nearest":
            out = tnp.at(self.values)[tuple(tnp.where(t <= 0.5, i, i + 1)
                                            for i, t in zip(indices, fractions))].get()
        else:
            out = 0
            for corner in itertools.product((0, 1), repeat=ndim):
                weight = 1
                for up, t in zip(corner, fractions):
                    weight = weight * (t if up else 1 - t)
                at = tuple(i + up for i, up in zip(indices, corner))
                out = out + tnp.at(self.values)[at].get() * weight[trailing]
        if self.fill_value is not None:
            out = tnp.where(outside[trailing], self.fill_value.astype(out.dtype), out)
        return out.reshape(lead + tuple(self.values.shape[ndim:]))


def _rebuilt(aux, children):
    out = object.__new__(RegularGridInterpolator)
    out.grid, out.values, out.fill_value = children
    out.method, out.bounds_error = aux
    return out


register_pytree_node(RegularGridInterpolator,
                     lambda f: ((f.grid, f.values, f.fill_value), (f.method, f.bounds_error)),
                     _rebuilt)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
