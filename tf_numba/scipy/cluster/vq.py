"""``tf_numba.scipy.cluster.vq``: ``vq``, each observation's nearest code, as
``scipy.cluster.vq``; the distances differentiate in the observations and the code book.

>>> vq(np.array([[1.1, 2.1], [5.9, 4.8]]), np.array([[1.0, 2.0], [6.0, 5.0]]))[0]
array([0, 1])
"""
import numpy as np

import tf_numba.numpy as tnp

from ...errors import ShapeError
from ...numpy import _promote as P

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """``(code, dist)``: for each row of ``obs`` (``(M, N)``; a vector is ``M``
    observations of one feature) the index of the nearest row of ``code_book`` (``(K,
    N)``) and the Euclidean distance to it, as ``scipy.cluster.vq.vq``. ``check_finite``
    is taken (a traced value cannot be checked).

    >>> vq(np.array([1.0, 4.0]), np.array([0.0, 5.0]))
    (array([0, 1]), array([1., 1.]))
    """
    x, codes = tnp.asarray(obs), tnp.asarray(code_book)
    dt = P.result_type(x, codes)
    if not tnp.issubdtype(dt, tnp.inexact):
        dt = np.float64
    x, codes = x.astype(dt), codes.astype(dt)
    if x.ndim != codes.ndim:
        raise ShapeError(f"obs (shape {tuple(x.shape)}) and code_book (shape "
                         f"{tuple(codes.shape)}) need the same rank", op="vq")
    if x.ndim == 1:
        x, codes = x[:, None], codes[:, None]
    if x.ndim != 2:
        raise ShapeError(f"obs must be a vector or a matrix, got shape {tuple(x.shape)}",
                         op="vq")
    dist = tnp.linalg.norm(x[:, None, :] - codes[None, :, :], axis=-1)
    code = tnp.argmin(dist, axis=-1)
    return code, tnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
