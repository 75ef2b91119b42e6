"""``tf_numba.scipy.linalg``: ``scipy.linalg`` signatures on family ``tf_numba.linalg.v1``.

Triangular, banded and Sylvester solves, Cholesky and LU, eigen and Schur decompositions,
the matrix exponential, square root and polar decomposition, ``block_diag`` and
``toeplitz``, differentiable (``schur`` in its real form) and batched over leading dims; the
functions that ``numpy.linalg`` also has take SciPy's arguments here
(``cholesky(a, lower=False)`` returns the upper factor, ``qr`` defaults to ``mode='full'``,
``svd`` returns ``(U, s, Vh)``).

>>> import numpy as np, tf_numba.scipy.linalg as tsl
>>> tsl.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]), lower=True)
array([1., 2.])
"""
import numpy as np

from ..core.linear import aval_of
from ..errors import ArgumentError, UnsupportedError
from ..ext import linalg as L
from ..numpy import linalg as nl
from . import _matrices
from ._matrices import (circulant, companion, convolution_matrix, dft, fiedler,  # noqa: F401
                        fiedler_companion, hadamard, hankel, helmert, hilbert, invhilbert,
                        invpascal, leslie, pascal)

__all__ = ["solve", "inv", "det", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor",
           "lu_solve", "solve_triangular", "solve_banded", "solve_sylvester", "qr", "eig",
           "eigvals", "eigh", "eigvalsh", "schur", "svd", "svdvals", "norm", "pinv", "polar",
           "sqrtm", "expm", "expm_frechet", "block_diag", "toeplitz", "LinAlgError",
           "hessenberg", "rsf2csf", "funm", "qr_multiply", "eigh_tridiagonal",
           *_matrices.__all__]

LinAlgError = np.linalg.LinAlgError
norm = nl.norm
svdvals = nl.svdvals


def _tnp():
    from .. import numpy as tnp
    return tnp


def _shape(x):
    return tuple(aval_of(x).shape)


def _rhs(name, a, b):
    """``b`` as a stack of matrices with ``a``'s batch dims; and whether it was a vector."""
    tnp = _tnp()
    vector = len(_shape(b)) == len(_shape(a)) - 1
    if vector:
        b = tnp.expand_dims(b, -1)
    a, b = nl._broadcast_batch(name, a, b, 2)
    return a, b, vector


# the structures scipy.linalg.solve's ``assume_a`` names; each is solved as a general matrix
# here, which gives the same ``x`` for a matrix of that structure
_STRUCTURES = ("gen", "general", "sym", "symmetric", "her", "hermitian", "pos",
               "positive definite", "diagonal", "tridiagonal", "banded", "upper triangular",
               "lower triangular")


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """``x`` with ``a @ x == b`` (``transposed``: ``a.T @ x == b``)."""
    if assume_a is not None and assume_a not in _STRUCTURES:
        raise ArgumentError(f"{assume_a!r} is not a recognized matrix structure; assume_a is "
                            f"one of {', '.join(map(repr, _STRUCTURES))}", op="solve")
    a, b = nl.inexact(a, b)
    nl._matrices("solve", a)
    if transposed:
        a = L._mT(a)
    a, b, vector = _rhs("solve", a, b)
    x = L.solve(a, b)
    return x[..., 0] if vector else x


def inv(a, overwrite_a=False, check_finite=True):
    return nl.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    return nl.det(a)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor, upper unless ``lower`` (reads the lower triangle of ``a``)."""
    return nl.cholesky(a, upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for ``cho_solve``; the unused triangle of ``c`` is zero."""
    return cholesky(a, lower=lower), lower


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """``x`` with ``op(a) @ x == b`` for triangular ``a`` (``trans``: 0/'N', 1/'T', 2/'C')."""
    trans = {"N": 0, "T": 1, "C": 2}.get(trans, trans)
    if trans not in (0, 1, 2):
        raise ValueError(f"trans must be 0, 1, 2 or 'N', 'T', 'C', got {trans!r}")
    a, b = nl.inexact(a, b)
    nl._matrices("solve_triangular", a)
    a, b, vector = _rhs("solve_triangular", a, b)
    x = L.triangular_solve(a, b, left_side=True, lower=bool(lower), transpose_a=trans > 0,
                           conjugate_a=trans == 2, unit_diagonal=bool(unit_diagonal))
    return x[..., 0] if vector else x


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """``x`` with ``A x = b`` from ``(c, lower) = cho_factor(A)``."""
    c, lower = c_and_lower
    c, b = nl.inexact(c, b)
    c, b, vector = _rhs("cho_solve", c, b)
    complex_ = np.iscomplexobj(np.empty(0, aval_of(c).dtype))
    if lower:       # A = L L^H
        y = L.triangular_solve(c, b, lower=True)
        x = L.triangular_solve(c, y, lower=True, transpose_a=True, conjugate_a=complex_)
    else:           # A = U^H U
        y = L.triangular_solve(c, b, lower=False, transpose_a=True, conjugate_a=complex_)
        x = L.triangular_solve(c, y, lower=False)
    return x[..., 0] if vector else x


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)``: ``L`` (unit diagonal) and ``U`` packed in ``lu``, ``piv`` LAPACK's row
    interchanges (0-based, int32)."""
    (a,) = nl.inexact(a)
    nl._matrices("lu_factor", a, square=False)
    packed, piv, _ = L.lu(a)
    return packed, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """``x`` with ``op(A) x = b`` from ``(lu, piv) = lu_factor(A)`` (``trans`` 0, 1 or 2)."""
    tnp = _tnp()
    packed, piv = lu_and_piv
    packed, b = nl.inexact(packed, b)
    packed, b, vector = _rhs("lu_solve", packed, b)
    n = _shape(packed)[-1]
    perm = L.lu_pivots_to_permutation(piv, n)
    p = L._permutation_matrix(perm, n, aval_of(packed).dtype)
    if trans == 0:      # P A = L U:  x = U^-1 L^-1 P b
        y = L.triangular_solve(packed, tnp.matmul(p, b), lower=True, unit_diagonal=True)
        x = L.triangular_solve(packed, y, lower=False)
    elif trans in (1, 2):   # A^T = U^T L^T P:  x = P^T L^-T U^-T b
        conj = trans == 2
        y = L.triangular_solve(packed, b, lower=False, transpose_a=True, conjugate_a=conj)
        y = L.triangular_solve(packed, y, lower=True, unit_diagonal=True, transpose_a=True,
                               conjugate_a=conj)
        x = tnp.matmul(L._mT(p), y)
    else:
        raise ValueError(f"trans must be 0, 1 or 2, got {trans!r}")
    return x[..., 0] if vector else x


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(Q, R)`` for ``mode`` 'full' or 'economic'; ``(R,)`` for 'r'."""
    if pivoting:
        raise UnsupportedError("pivoting=True is not supported", op="qr")
    modes = {"full": "complete", "economic": "reduced", "r": "complete"}
    if mode not in modes:
        raise UnsupportedError(f"mode {mode!r} is not supported; use 'full', "
                               "'economic' or 'r'", op="qr")
    q, r = nl.qr(a, modes[mode])
    return (r,) if mode == "r" else (q, r)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
         overwrite_b=False, type=1, check_finite=True, subset_by_index=None,
         subset_by_value=None, driver=None):
    """Eigenvalues (and vectors) of Hermitian ``a``, from its ``lower`` (or upper) triangle."""
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise UnsupportedError("generalized problems and subsets are not supported",
                               op="eigh")
    uplo = "L" if lower else "U"
    if eigvals_only:
        return nl.eigvalsh(a, uplo)
    w, v = nl.eigh(a, uplo)
    return w, v


def eigvalsh(a, lower=True, **kwargs):
    return eigh(a, lower=lower, eigvals_only=True, **kwargs)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
    """``(U, s, Vh)`` or ``s`` alone, as ``scipy.linalg.svd``."""
    out = nl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def pinv(a, *, atol=None, rtol=None, return_rank=False, check_finite=True):
    """Pseudo-inverse; singular values at most ``atol + rtol * max(s)`` are dropped
    (``atol`` must be 0 or None: tf_numba takes a relative cut-off)."""
    if atol:
        raise UnsupportedError("atol=... is not supported; use rtol", op="pinv")
    if return_rank:
        raise UnsupportedError("return_rank=True is not supported", op="pinv")
    if rtol is None:
        (a,) = nl.inexact(a)
        shape = _shape(a)
        rtol = max(shape[-2:]) * float(np.finfo(aval_of(a).dtype).eps)
    return nl.pinv(a, rcond=rtol)


def expm(A):
    """The matrix exponential of each square matrix of ``A`` (Pade with scaling and squaring)."""
    (a,) = nl.inexact(A)
    nl._matrices("expm", a)
    return L.expm(a)


def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """``(expm(A), L(A, E))``, or ``L(A, E)`` alone: the Frechet derivative in direction E."""
    a, e = nl.inexact(A, E)
    nl._matrices("expm_frechet", a)
    frechet = L.expm_frechet(a, e)
    return (L.expm(a), frechet) if compute_expm else frechet


def lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    """``(P, L, U)`` with ``a == P @ L @ U`` (``L`` unit lower m x k, ``U`` upper k x n,
    ``k = min(m, n)``); ``(P @ L, U)`` with ``permute_l``; ``P`` as row indices
    (``a == L[P] @ U``) with ``p_indices``. Differentiable in ``a`` (square or not), for
    the pivot order of the point: L and U are smooth while the pivots do not change.

    >>> P, L, U = tsl.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> P @ L @ U
    array([[1., 2.],
           [3., 4.]])
    """
    tnp = _tnp()
    (a,) = nl.inexact(a)
    nl._matrices("lu", a, square=False)
    packed, _, perm = L.lu(a)
    m, n = _shape(a)[-2:]
    k = min(m, n)
    dt = aval_of(packed).dtype
    low = tnp.add(tnp.tril(packed[..., :, :k], -1), np.eye(m, k, dtype=dt))
    up = tnp.triu(packed[..., :k, :])
    # perm lists, for each row of L U, the row of a it came from: a[perm] = L U
    inverse = tnp.argsort(perm, axis=-1).astype(np.int32)
    if permute_l:
        return tnp.take_along_axis(low, tnp.expand_dims(inverse, -1), axis=-2), up
    if p_indices:
        return inverse, low, up
    return L._mT(L._permutation_matrix(perm, m, dt)), low, up


def schur(a, output="real", lwork=None, overwrite_a=False, sort=None, check_finite=True):
    """``(T, Z)`` with ``a == Z @ T @ Z^H``: ``T`` quasi-upper-triangular (``output='real'``,
    2 x 2 blocks for complex pairs) or upper-triangular (``'complex'``). SciPy's values.
    The real form is differentiable to any order at matrices with distinct eigenvalues:
    ``dT`` keeps ``T``'s shape (LAPACK's standard 2 x 2 blocks, equal diagonals) and
    ``dZ = Z Omega`` with ``Omega`` skew, from one linear system of ``n(n-1)/2`` unknowns
    per matrix (``O(n^6)``: for small matrices): the derivative of the form at the point
    (LAPACK's can turn a block by 90 degrees under a tiny perturbation, where finite
    differences of SciPy's values jump; one 5 x 5 matrix in 30 at 1e-6). Normal 2 x 2
    blocks (``T[j, j+1] == -T[j+1, j]``) leave the block's rotation free (the system is
    singular: NumPy's ``LinAlgError``), and the complex form the vectors' phases
    (``MissingRuleError``)."""
    if sort is not None:
        raise UnsupportedError("sort=... is not supported", op="schur")
    if output not in ("real", "complex", "r", "c"):
        raise ValueError(f"argument must be 'real', or 'complex', got {output!r}")
    (a,) = nl.inexact(a)
    nl._matrices("schur", a)
    cplx = output in ("complex", "c") or np.iscomplexobj(np.empty(0, aval_of(a).dtype))
    t, z = L.schur(a, "complex" if cplx else "real")
    return t, z


def eig(a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False,
        check_finite=True, homogeneous_eigvals=False):
    """``(w, vr)`` (or ``w`` with ``right=False``) of general square matrices, complex
    (see ``tnp.linalg.eig``); generalized problems and left vectors are not supported."""
    if b is not None or left or homogeneous_eigvals:
        raise UnsupportedError("generalized problems, left eigenvectors and "
                               "homogeneous eigenvalues are not supported", op="eig")
    w, v = nl.eig(a)
    return (w, v) if right else w


def eigvals(a, b=None, overwrite_a=False, check_finite=True, homogeneous_eigvals=False):
    return eig(a, b, right=False, homogeneous_eigvals=homogeneous_eigvals)


def sqrtm(A, disp=True, blocksize=64):
    """The principal square root ``X`` (``X @ X == A``), SciPy's values (Schur method);
    for a real ``A`` with no real root (negative eigenvalues) NaN, where SciPy returns a
    complex result: pass a complex ``A`` for that one. Derivative: ``X dX + dX X = dA``
    solved with ``solve_sylvester`` (needs no eigenvalue pair with ``sqrt(l_i) +
    sqrt(l_j) == 0``).

    >>> tsl.sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]]))
    array([[2., 0.],
           [0., 3.]])
    """
    (a,) = nl.inexact(A)
    nl._matrices("sqrtm", a)
    return L.sqrtm(a)


def solve_sylvester(a, b, q):
    """``x`` with ``a @ x + x @ b == q`` (Bartels-Stewart); differentiable in all three.

    >>> tsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2))
    array([[0.5, 0. ],
           [0. , 0.5]])
    """
    a, b, q = nl.inexact(a, b, q)
    nl._matrices("solve_sylvester", a)
    nl._matrices("solve_sylvester", b)
    return L.solve_sylvester(a, b, q)


def polar(a, side="right"):
    """``(u, p)`` with ``a == u @ p`` (``side='right'``, ``p = sqrtm(a^H a)``) or
    ``a == p @ u`` (``'left'``), SciPy's values (through the SVD). Derivative for full-rank
    ``a`` from ``p dp + dp p = d(a^H a)`` (a Sylvester equation: no division by gaps
    between singular values, so repeated singular values, as of an orthogonal matrix,
    are fine).

    >>> u, p = tsl.polar(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> p
    array([[3., 0.],
           [0., 2.]])
    """
    if side not in ("right", "left"):
        raise ValueError("`side` must be either 'right' or 'left'")
    (a,) = nl.inexact(a)
    nl._matrices("polar", a, square=False)
    return tuple(L.polar(a, side))


def solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """``x`` with ``A x = b`` for ``A`` in banded storage, ``ab[u + i - j, j] == A[i, j]``
    (SciPy's LAPACK gbsv/gtsv); ``b`` a vector or matrix. Differentiable in ``ab`` and
    ``b`` at banded cost: ``dx`` solves ``A dx = db - dA x`` with the banded ``dA x``, and
    reverse mode solves with ``A^T``'s banded storage.

    >>> ab = np.array([[0.0, 1.0, 1.0], [2.0, 2.0, 2.0], [1.0, 1.0, 0.0]])
    >>> tsl.solve_banded((1, 1), ab, np.array([3.0, 4.0, 3.0]))
    array([1., 1., 1.])
    """
    tnp = _tnp()
    lower, upper = (int(v) for v in l_and_u)
    ab, b = nl.inexact(ab, b)
    vector = len(_shape(b)) == 1
    if vector:
        b = tnp.expand_dims(b, -1)
    x = L.solve_banded(ab, b, lower, upper)
    return x[..., 0] if vector else x


def block_diag(*arrs):
    """The block-diagonal matrix of ``arrs`` (0-d as 1 x 1, 1-d as one row), in their
    promoted dtype, as ``scipy.linalg.block_diag``.

    >>> tsl.block_diag(np.array([[1.0]]), np.array([2.0, 3.0]))
    array([[1., 0., 0.],
           [0., 2., 3.]])
    """
    tnp = _tnp()
    if not arrs:
        return np.empty((1, 0))
    mats = [tnp.atleast_2d(tnp.asarray(x)) for x in arrs]
    for i, m in enumerate(mats):
        if len(_shape(m)) > 2:
            raise ValueError(f"arguments in the following positions have dimension greater "
                             f"than 2: [{i}]")
    dt = tnp.result_type(*mats)
    widths = [_shape(m)[1] for m in mats]
    total = sum(widths)
    rows, start = [], 0
    for m, w in zip(mats, widths):
        h = _shape(m)[0]
        parts = [np.zeros((h, start), dt), tnp.asarray(m, dt),
                 np.zeros((h, total - start - w), dt)]
        rows.append(tnp.concatenate(parts, axis=1))
        start += w
    return tnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default
    ``conj(c)``; ``r[0]`` is ignored), batched over leading dims as SciPy 1.17.

    >>> tsl.toeplitz(np.array([1.0, 2.0, 3.0]), np.array([1.0, 4.0]))
    array([[1., 4.],
           [2., 1.],
           [3., 2.]])
    """
    tnp = _tnp()
    c = tnp.asarray(c)
    r = tnp.conj(c) if r is None else tnp.asarray(r)
    c, r = tnp.atleast_1d(c), tnp.atleast_1d(r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    batch = tuple(np.broadcast_shapes(_shape(c)[:-1], _shape(r)[:-1]))
    c = tnp.broadcast_to(c, batch + (m,))
    r = tnp.broadcast_to(r, batch + (n,))
    # vals = (c reversed, r[1:]): entry (i, j) is vals[m - 1 - i + j]
    vals = tnp.concatenate([tnp.flip(c, -1), r[..., 1:]], axis=-1)
    index = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return tnp.take(vals, index, axis=-1)


def _complex_dtype(*xs):
    return np.result_type(*[aval_of(x).dtype for x in xs], np.complex64)


def hessenberg(a, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form ``H = Q^H a Q`` of a square matrix (and ``Q`` with
    ``calc_q``), by Householder reflections with LAPACK's conventions (``gehrd``: each
    reflector ``I - tau v v^H`` with ``v[0] = 1`` and the new subdiagonal entry
    ``-sign(alpha) |x|``), so the values are SciPy's up to rounding; differentiable.

    >>> tsl.hessenberg(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]]))[2, 0]
    np.float64(0.0)
    """
    tnp = _tnp()
    h = tnp.asarray(a)
    if not tnp.issubdtype(h.dtype, tnp.inexact):
        h = h.astype(np.float64)
    n = _shape(h)[-1]
    if h.ndim != 2 or _shape(h)[0] != n:
        raise ArgumentError(f"needs a square matrix, got shape {_shape(h)}", op="hessenberg")
    q = tnp.eye(n, dtype=h.dtype)
    if n <= 2:                  # SciPy returns these as they are
        return (h, q) if calc_q else h
    # the last reflector only makes a complex subdiagonal entry real
    for k in range(n - 1 if tnp.iscomplexobj(h) else n - 2):
        x = h[k + 1:, k]
        alpha, rest = x[0], x[1:]
        rest_norm2 = tnp.sum(tnp.abs(rest) ** 2)
        # LAPACK leaves a column that is already reduced (and real at alpha) alone
        skip = (rest_norm2 == 0) & (tnp.imag(alpha) == 0)
        norm = tnp.sqrt(tnp.where(skip, 1.0, tnp.abs(alpha) ** 2 + rest_norm2))
        beta = -tnp.where(tnp.real(alpha) >= 0, 1.0, -1.0) * norm
        tau = tnp.where(skip, 0.0, (beta - alpha) / beta)
        v = tnp.concatenate([tnp.ones(1, h.dtype),
                             tnp.where(skip, 0.0, rest / tnp.where(skip, 1.0, alpha - beta))])
        # h <- (I - tau v v^H)^H h (I - tau v v^H), on the rows and columns it changes
        block = h[k + 1:, :]
        block = block - tnp.conj(tau) * v[:, None] * (tnp.conj(v) @ block)[None, :]
        h = tnp.at(h)[k + 1:, :].set(block)
        cols = h[:, k + 1:]
        h = tnp.at(h)[:, k + 1:].set(cols - tau * (cols @ v)[:, None] * tnp.conj(v)[None, :])
        if calc_q:
            qc = q[:, k + 1:]
            q = tnp.at(q)[:, k + 1:].set(qc - tau * (qc @ v)[:, None] * tnp.conj(v)[None, :])
    h = tnp.where(np.tri(n, n, -2, dtype=bool), tnp.zeros((), h.dtype), h)
    return (h, q) if calc_q else h


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form ``(T, Z)`` from a real one (``schur(a)``'s), as
    ``scipy.linalg.rsf2csf``: each 2 x 2 block of a complex pair is triangularized by a
    complex Givens rotation from its eigenvalue of positive imaginary part, applied to
    ``T``'s rows and columns and ``Z``'s columns (SciPy's algorithm); differentiable."""
    tnp = _tnp()
    dt = _complex_dtype(T, Z)
    t, z = tnp.asarray(T).astype(dt), tnp.asarray(Z).astype(dt)
    n = _shape(t)[-1]
    eps = float(np.finfo(dt).eps)
    for m in range(n - 1, 0, -1):
        a, b, c, d = t[m - 1, m - 1], t[m - 1, m], t[m, m - 1], t[m, m]
        coupled = tnp.abs(c) > eps * (tnp.abs(a) + tnp.abs(d))
        # the block's eigenvalue with positive imaginary part, minus T[m, m]
        mu = (a - d) / 2 + tnp.sqrt(((a - d) / 2) ** 2 + b * c)
        r = tnp.sqrt(tnp.abs(mu) ** 2 + tnp.abs(c) ** 2)
        safe_r = tnp.where(coupled, r, 1.0)
        cos = tnp.where(coupled, mu / safe_r, 1.0)
        sin = tnp.where(coupled, c / safe_r, 0.0)
        g = tnp.stack([tnp.stack([tnp.conj(cos), sin]), tnp.stack([-sin, cos])])
        t = tnp.at(t)[m - 1:m + 1, m - 1:].set(g @ t[m - 1:m + 1, m - 1:])
        gh = tnp.conj(g).T
        t = tnp.at(t)[:m + 1, m - 1:m + 1].set(t[:m + 1, m - 1:m + 1] @ gh)
        z = tnp.at(z)[:, m - 1:m + 1].set(z[:, m - 1:m + 1] @ gh)
        t = tnp.at(t)[m, m - 1].set(0.0)
    return t, z


def funm(A, func, disp=True):
    """The matrix function ``func(A)`` of a square matrix, for ``func`` an elementwise
    function of eigenvalues (``tnp.exp``, ...), as ``scipy.linalg.funm``: the complex
    Schur form (``schur`` then ``rsf2csf``), ``func`` on its diagonal and Parlett's
    recurrence above it (Golub and Van Loan, "Matrix Computations", algorithm 11.1.1),
    undone by ``Z``. Complex like SciPy's; with ``disp=False`` also an estimate of the
    relative error (large where eigenvalues are close). Differentiable for distinct
    eigenvalues.

    >>> tsl.funm(np.diag([1.0, 2.0]), tnp.exp).real
    array([[2.71828183, 0.        ],
           [0.        , 7.3890561 ]])
    """
    tnp = _tnp()
    a = tnp.asarray(A)
    if a.ndim != 2 or _shape(a)[0] != _shape(a)[1]:
        raise ArgumentError(f"needs a square matrix, got shape {_shape(a)}", op="funm")
    if tnp.iscomplexobj(a):
        t, z = schur(a, output="complex")
    else:
        t, z = rsf2csf(*schur(a if tnp.issubdtype(a.dtype, tnp.inexact)
                              else a.astype(np.float64)))
    n = _shape(t)[0]
    f = tnp.diag(tnp.asarray(func(tnp.diag(t))).astype(t.dtype))
    min_gap = tnp.abs(t[0, 0])
    for p in range(1, n):
        for i in range(n - p):
            j = i + p
            s = t[i, j] * (f[j, j] - f[i, i])
            if j > i + 1:
                s = s + t[i, i + 1:j] @ f[i + 1:j, j] - f[i, i + 1:j] @ t[i + 1:j, j]
            gap = t[j, j] - t[i, i]
            f = tnp.at(f)[i, j].set(tnp.where(gap != 0, s / tnp.where(gap != 0, gap, 1.0), s))
            min_gap = tnp.minimum(min_gap, tnp.abs(gap))
    out = z @ f @ tnp.conj(z).T
    if disp:
        return out
    tol = float(np.finfo(out.dtype).eps)
    min_gap = tnp.where(min_gap == 0, tol, min_gap)
    err = tnp.where(tnp.any(tnp.isinf(out)), np.inf, tnp.minimum(1.0, tnp.maximum(
        tol, (tol / min_gap) * nl.norm(tnp.triu(t, 1), 1))))
    return out, err


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
    """``(Q @ c, R)`` (``mode='left'``) or ``(c @ Q, R)`` (``'right'``) for the economic
    ``Q, R = qr(a)``, ``Q`` conjugated with ``conjugate``, as ``scipy.linalg.qr_multiply``;
    a vector ``c`` is a column (left) or a row (right) and the product a vector.

    >>> cq, r = tsl.qr_multiply(np.eye(2), np.array([1.0, 2.0]))
    """
    tnp = _tnp()
    if pivoting:
        raise UnsupportedError("pivoting=True is not supported", op="qr_multiply")
    if mode not in ("left", "right"):
        raise ArgumentError(f"mode must be 'left' or 'right', got {mode!r}", op="qr_multiply")
    q, r = qr(a, mode="economic")
    if conjugate:
        q = tnp.conj(q)
    c = tnp.asarray(c)
    vector = c.ndim == 1
    if mode == "left":
        out = q @ (c[:, None] if vector else c)
    else:
        out = (c[None, :] if vector else c) @ q
    return (tnp.ravel(out) if vector else out), r


def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                     check_finite=True, tol=0.0, lapack_driver="auto"):
    """The eigenvalues (ascending; with their vectors unless ``eigvals_only``) of the real
    symmetric tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``, as
    ``scipy.linalg.eigh_tridiagonal``: ``select`` 'a' (all) or 'i' (the indices
    ``select_range[0]`` to ``select_range[1]``, inclusive). Through ``eigh`` of the dense
    matrix, so differentiable as ``eigh`` is.

    >>> tsl.eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]), eigvals_only=True)
    array([1., 3.])
    """
    tnp = _tnp()
    d, e = tnp.asarray(d), tnp.asarray(e)
    if _shape(e)[-1] != _shape(d)[-1] - 1:
        raise ArgumentError(f"e must have one entry fewer than d: d has {_shape(d)[-1]}, "
                            f"e {_shape(e)[-1]}", op="eigh_tridiagonal")
    if select not in ("a", "i", "all", "index"):
        raise UnsupportedError(f"select={select!r}: 'a' or 'i' (a range of values gives "
                               "a number of eigenvalues only the data decides)",
                               op="eigh_tridiagonal")
    matrix = tnp.diag(d) + tnp.diag(e, 1) + tnp.diag(e, -1)
    lo, hi = (0, _shape(d)[-1] - 1) if select in ("a", "all") else select_range
    if eigvals_only:
        return nl.eigvalsh(matrix)[lo:hi + 1]
    w, v = nl.eigh(matrix)
    return w[lo:hi + 1], v[:, lo:hi + 1]


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
