"""NumPy's index tricks: ``r_`` and ``c_`` (concatenation by slicing syntax),
``fill_diagonal`` (which returns a new array, as ``jax.numpy.fill_diagonal``), the index
arrays of another array's triangles and diagonal, and NumPy's ``mgrid``, ``ogrid``,
``s_`` and ``index_exp`` (their results are concrete: indices and grids of constants).

>>> tnp.r_[1:4, 0, np.array([7.0, 8.0])]
array([1., 2., 3., 0., 7., 8.])
"""
import numpy as np

from ..errors import TfNumbaError, UnsupportedError
from ..ops import layout
from . import _promote as P

__all__ = ["r_", "c_", "fill_diagonal", "diag_indices_from", "tril_indices_from",
           "triu_indices_from", "mask_indices", "mgrid", "ogrid", "s_", "index_exp"]

# NumPy's objects: what they make is constants (grids and index tuples)
mgrid, ogrid, s_, index_exp = np.mgrid, np.ogrid, np.s_, np.index_exp


def _square_of(arr, name, ndim=None):
    shape = P.shape_of(P.as_array(arr))
    if ndim is not None and len(shape) != ndim:
        raise TfNumbaError(f"needs a {ndim}-d array, got shape {shape}", op=name)
    return shape


def diag_indices_from(arr):
    """The indices of the main diagonal of ``arr`` (all dims equal), as
    ``numpy.diag_indices_from``.

    >>> tnp.diag_indices_from(np.zeros((2, 2)))
    (array([0, 1]), array([0, 1]))
    """
    shape = _square_of(arr, "diag_indices_from")
    if len(shape) < 2 or len(set(shape)) != 1:
        raise TfNumbaError(f"needs an array of at least 2 dims, all equal; got shape {shape}",
                           op="diag_indices_from")
    return tuple(i.astype(np.int64) for i in np.diag_indices(shape[0], len(shape)))


def tril_indices_from(arr, k=0):
    """The indices of the lower triangle of the 2-d ``arr``, as
    ``numpy.tril_indices_from``."""
    n, m = _square_of(arr, "tril_indices_from", 2)
    return tuple(i.astype(np.int64) for i in np.tril_indices(n, k, m))


def triu_indices_from(arr, k=0):
    """The indices of the upper triangle of the 2-d ``arr``, as
    ``numpy.triu_indices_from``."""
    n, m = _square_of(arr, "triu_indices_from", 2)
    return tuple(i.astype(np.int64) for i in np.triu_indices(n, k, m))


def mask_indices(n, mask_func, k=0):
    """The indices where ``mask_func(ones((n, n)), k)`` (``tnp.triu``, ``tnp.tril``, ...) is
    nonzero, as ``numpy.mask_indices``.

    >>> tnp.mask_indices(2, tnp.triu)
    (array([0, 0, 1]), array([0, 1, 1]))
    """
    mask = np.asarray(mask_func(np.ones((n, n), np.int64), k)) != 0
    return tuple(i.astype(np.int64) for i in np.nonzero(mask))


class AxisConcatenator:
    """``r_``/``c_``: ``obj[a, b:c:d, ...]`` concatenates its items along ``axis``; a slice
    is an ``arange`` (a complex step ``5j`` a ``linspace`` of 5 points); a leading string
    ``"axis,ndmin,trans1d"`` changes the three settings, as NumPy's."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        from . import creation, manipulation
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        items = []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0 or item in ("r", "c"):
                    raise UnsupportedError(f"the directive {item!r} is not supported "
                                           "(matrix results, or a string not in front)",
                                           op="r_")
                parts = [int(p) for p in item.split(",")]
                axis, ndmin, trans1d = (parts + [ndmin, trans1d][len(parts) - 1:])[:3]
                continue
            if isinstance(item, slice):
                start = 0 if item.start is None else item.start
                step = 1 if item.step is None else item.step
                if isinstance(step, complex):
                    arr = creation.linspace(start, item.stop, int(abs(step)))
                else:
                    arr = creation.arange(start, item.stop, step)
            else:
                arr = P.as_array(item)
            items.append(self._widened(arr, ndmin, trans1d))
        if not items:
            raise TfNumbaError("needs at least one item", op="r_")
        return manipulation.concatenate(items, axis=axis)

    @staticmethod
    def _widened(arr, ndmin, trans1d):
        """NumPy's ``array(item, ndmin=ndmin)`` then the ``trans1d`` move of the item's
        own dims."""
        shape = P.shape_of(arr)
        if len(shape) >= ndmin:
            return arr
        extra = ndmin - len(shape)
        arr = layout.reshape(arr, (1,) * extra + shape)
        if trans1d == -1:
            return arr
        k1 = trans1d if trans1d >= 0 else ndmin + trans1d
        axes = list(range(ndmin))
        perm = axes[:k1] + axes[extra:] + axes[k1:extra]
        return layout.transpose(arr, perm)


r_ = AxisConcatenator(0, 1, -1)
c_ = AxisConcatenator(-1, 2, 0)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal set to ``val`` (repeated as needed), as
    ``jax.numpy.fill_diagonal``: arrays are never modified, so pass ``inplace=False`` and
    use the result. For a tall 2-D ``a``, ``wrap=True`` restarts the diagonal every
    ``n + 1`` rows as NumPy does.

    >>> tnp.fill_diagonal(np.zeros((2, 3)), 5.0, inplace=False)
    array([[5., 0., 0.],
           [0., 5., 0.]])
    """
    from . import manipulation
    from .indexing import at
    if inplace:
        raise TfNumbaError("cannot modify its argument (tf_numba never changes "
                           "an array in place): call fill_diagonal(a, val, inplace=False) and "
                           "use the array it returns", op="fill_diagonal")
    a = P.as_array(a)
    shape = P.shape_of(a)
    if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
        raise TfNumbaError(f"needs a 2-D array or one whose dims are all "
                           f"equal, got shape {shape}", op="fill_diagonal")
    total = int(np.prod(shape))
    if len(shape) == 2:
        step = shape[1] + 1
        end = total if wrap else min(shape[0], shape[1]) * shape[1]
    else:
        step = 1 + int(np.sum(np.cumprod(shape[:-1])))
        end = total
    where = np.arange(0, end, step)
    values = manipulation.ravel(P.cast(P.as_array(val), P.dtype_of(a)))
    count = P.shape_of(values)[0]
    if count == 0:
        return a
    values = manipulation.tile(values, -(-len(where) // count))
    values = layout.slice_in_dim(values, 0, len(where), 1, 0)
    return layout.reshape(at(manipulation.ravel(a))[where].set(values), shape)
