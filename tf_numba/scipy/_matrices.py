"""The special matrices of ``scipy.linalg`` (``tf.scipy.linalg`` shows them): those built
from vectors (``circulant``, ``companion``, ``convolution_matrix``, ``fiedler``,
``fiedler_companion``, ``hankel``, ``leslie``) are gathers of their entries, batched over
leading dims as JAX's and differentiable in them; those of a size alone (``dft``,
``hadamard``, ``helmert``, ``hilbert``, ``invhilbert``, ``pascal``, ``invpascal``) are
SciPy's NumPy constants in a dtype tf_numba computes in.
"""
import operator

import numpy as np

import tf_numba.numpy as tnp

from ..errors import ArgumentError, ShapeError

__all__ = ["circulant", "companion", "convolution_matrix", "dft", "fiedler",
           "fiedler_companion", "hadamard", "hankel", "helmert", "hilbert", "invhilbert",
           "invpascal", "leslie", "pascal"]


def _vector(x, name, least=1):
    x = tnp.atleast_1d(tnp.asarray(x))
    if x.shape[-1] < least:
        raise ShapeError(f"needs at least {least} entries along the last axis, got shape "
                         f"{tuple(x.shape)}", op=name)
    return x


def _gather(values, index, zero_where=None):
    """``values[..., index]`` (an index matrix), 0 where ``zero_where`` holds."""
    out = tnp.take(values, np.where(zero_where, 0, index) if zero_where is not None
                   else index, axis=-1)
    if zero_where is None:
        return out
    return tnp.where(zero_where, tnp.zeros((), out.dtype), out)


def circulant(c):
    """The circulant matrix whose first column is ``c``: ``C[i, j] = c[(i - j) % n]``.

    >>> circulant(np.array([1.0, 2.0, 3.0]))
    array([[1., 3., 2.],
           [2., 1., 3.],
           [3., 2., 1.]])
    """
    c = _vector(c, "circulant")
    n = c.shape[-1]
    return _gather(c, (np.arange(n)[:, None] - np.arange(n)[None, :]) % n)


def hankel(c, r=None):
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros;
    ``r[0]`` is ignored): ``H[i, j] = c[i + j]``, then ``r``.

    >>> hankel(np.array([1.0, 2.0]), np.array([9.0, 3.0, 4.0]))
    array([[1., 2., 3.],
           [2., 3., 4.]])
    """
    c = _vector(c, "hankel")
    r = tnp.zeros_like(c) if r is None else _vector(r, "hankel")
    m, n = c.shape[-1], r.shape[-1]
    batch = tuple(np.broadcast_shapes(tuple(c.shape[:-1]), tuple(r.shape[:-1])))
    c, r = tnp.broadcast_to(c, batch + (m,)), tnp.broadcast_to(r, batch + (n,))
    values = tnp.concatenate([c, r[..., 1:]], axis=-1)
    return _gather(values, np.arange(m)[:, None] + np.arange(n)[None, :])


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest first,
    ``a[0] != 0``): first row ``-a[1:] / a[0]``, ones below the diagonal.

    >>> companion(np.array([1.0, -3.0, 2.0]))
    array([[ 3., -2.],
           [ 1.,  0.]])
    """
    a = _vector(a, "companion", 2)
    n = a.shape[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    below = np.eye(n, k=-1, dtype=bool)
    rows = np.arange(n)[:, None] + np.zeros(n, int)
    out = _gather(first, np.broadcast_to(np.arange(n), (n, n)), rows > 0)
    return tnp.where(below, tnp.ones((), out.dtype), out)


def fiedler(a):
    """The symmetric Fiedler matrix ``|a[i] - a[j]|``.

    >>> fiedler(np.array([1.0, 4.0, 2.0]))
    array([[0., 3., 1.],
           [3., 0., 2.],
           [1., 2., 0.]])
    """
    a = _vector(a, "fiedler")
    return tnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (highest
    first): pentadiagonal, with the polynomial's roots as eigenvalues (Fiedler, "A note on
    companion matrices", Linear Algebra Appl. 372 (2003) 325), as SciPy builds it.

    >>> fiedler_companion(np.array([1.0, -3.0, 2.0]))
    array([[ 3., -2.],
           [ 1.,  0.]])
    """
    a = _vector(a, "fiedler_companion", 2)
    a = a / a[..., :1]
    n = a.shape[-1] - 1
    # index into [0, 1, -a[1], ..., -a[n]] (-a[k] at k + 1): SciPy's entries and pattern
    template = np.zeros((n, n), int)
    template[range(3, n, 2), range(1, n - 2, 2)] = 1
    template[range(2, n, 2), range(1, n - 1, 2)] = 1 + np.arange(3, n + 1, 2)
    template[range(0, n - 2, 2), range(2, n, 2)] = 1
    template[range(0, n - 1, 2), range(1, n, 2)] = 1 + np.arange(2, n + 1, 2)
    template[0, 0] = 2
    if n > 1:
        template[1, 0] = 1
    values = tnp.concatenate([tnp.zeros_like(a[..., :1]), tnp.ones_like(a[..., :1]),
                              -a[..., 1:]], axis=-1)
    return _gather(values, template)


def leslie(f, s):
    """The Leslie matrix of fecundities ``f`` (first row) and survival rates ``s`` (the
    subdiagonal, one shorter).

    >>> leslie(np.array([0.1, 2.0, 1.0]), np.array([0.5, 0.8]))
    array([[0.1, 2. , 1. ],
           [0.5, 0. , 0. ],
           [0. , 0.8, 0. ]])
    """
    f, s = _vector(f, "leslie", 2), _vector(s, "leslie")
    n = f.shape[-1]
    if s.shape[-1] != n - 1:
        raise ShapeError(f"s must have one entry fewer than f: f has {n}, s "
                         f"{s.shape[-1]}", op="leslie")
    batch = tuple(np.broadcast_shapes(tuple(f.shape[:-1]), tuple(s.shape[:-1])))
    dt = tnp.result_type(f, s)
    values = tnp.concatenate([tnp.broadcast_to(f, batch + (n,)).astype(dt),
                              tnp.broadcast_to(s, batch + (n - 1,)).astype(dt)], axis=-1)
    rows, cols = np.arange(n)[:, None], np.arange(n)[None, :]
    index = np.where(rows == 0, cols, n + cols)
    return _gather(values, index, ~((rows == 0) | (rows == cols + 1)))


def convolution_matrix(a, n, mode="full"):
    """The matrix ``A`` with ``A @ v == np.convolve(a, v, mode)`` for ``v`` of length
    ``n``: ``mode`` 'full', 'same' or 'valid'.

    >>> convolution_matrix(np.array([1.0, 2.0]), 2)
    array([[1., 0.],
           [2., 1.],
           [0., 2.]])
    """
    n = operator.index(n)
    if n <= 0:
        raise ShapeError(f"n must be positive, got {n}", op="convolution_matrix")
    if mode not in ("full", "same", "valid"):
        raise ArgumentError(f"mode must be 'full', 'same' or 'valid', got {mode!r}",
                            op="convolution_matrix")
    a = tnp.asarray(a)
    if a.ndim == 0:
        raise ShapeError("a must be a vector, got a scalar", op="convolution_matrix")
    a = _vector(a, "convolution_matrix")
    m = a.shape[-1]
    length = m + n - 1
    if mode == "same":
        start = (min(n, m) - 1) // 2
        rows = max(m, n)
    elif mode == "valid":
        start = min(n, m) - 1
        rows = length - 2 * start
    else:
        start, rows = 0, length
    index = np.arange(start, start + rows)[:, None] - np.arange(n)[None, :]
    return _gather(a, index, (index < 0) | (index >= m))


def hilbert(n):
    """The Hilbert matrix ``1 / (i + j + 1)`` of order ``n``."""
    import scipy.linalg
    return scipy.linalg.hilbert(operator.index(n))


def invhilbert(n, exact=False):
    """The inverse of the Hilbert matrix of order ``n`` (SciPy's exact integers, as
    floats)."""
    import scipy.linalg
    return np.asarray(scipy.linalg.invhilbert(operator.index(n), exact=exact), np.float64)


def hadamard(n, dtype=int):
    """The Hadamard matrix of order ``n`` (a power of 2), Sylvester's construction."""
    import scipy.linalg
    return np.asarray(scipy.linalg.hadamard(operator.index(n), dtype=np.dtype(dtype)))


def helmert(n, full=False):
    """The Helmert matrix of order ``n`` (without its first row unless ``full``)."""
    import scipy.linalg
    return scipy.linalg.helmert(operator.index(n), full=full)


def pascal(n, kind="symmetric", exact=True):
    """The Pascal matrix of order ``n`` ('symmetric', 'lower' or 'upper'), as floats."""
    import scipy.linalg
    return np.asarray(scipy.linalg.pascal(operator.index(n), kind or "symmetric", exact=False),
                      np.float64)


def invpascal(n, kind="symmetric", exact=True):
    """The inverse of ``pascal(n, kind)``, exact integers as floats."""
    import scipy.linalg
    return np.asarray(scipy.linalg.invpascal(operator.index(n), kind or "symmetric"),
                      np.float64)


def dft(n, scale=None, *, dtype=None):
    """The ``n x n`` discrete Fourier transform matrix (``dft(n) @ x == fft(x)``), scaled by
    ``scale`` None, 'sqrtn' or 'n'."""
    import scipy.linalg
    out = scipy.linalg.dft(operator.index(n), scale=scale)
    return out if dtype is None else out.astype(dtype)
