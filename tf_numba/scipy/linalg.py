"""``tf_numba.scipy.linalg``: ``scipy.linalg`` signatures on family ``tf_numba.linalg.v1``.

Triangular solves, Cholesky and LU solves, and the matrix exponential, all differentiable
and batched over leading dims; the functions that ``numpy.linalg`` also has take SciPy's
arguments here (``cholesky(a, lower=False)`` returns the upper factor, ``qr`` defaults to
``mode='full'``, ``svd`` returns ``(U, s, Vh)``).

>>> import numpy as np, tf_numba.scipy.linalg as tsl
>>> tsl.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]), lower=True)
array([1., 2.])
"""
import numpy as np

from ..core.linear import aval_of
from ..errors import UnsupportedError
from ..ext import linalg as L
from ..numpy import linalg as nl

__all__ = ["solve", "inv", "det", "cholesky", "cho_factor", "cho_solve", "lu_factor",
           "lu_solve", "solve_triangular", "qr", "eigh", "eigvalsh", "svd", "svdvals",
           "norm", "pinv", "expm", "expm_frechet", "LinAlgError"]

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


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    """``x`` with ``a @ x == b`` (``transposed``: ``a.T @ x == b``)."""
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
        raise UnsupportedError("qr(pivoting=True) is not supported", op="qr")
    modes = {"full": "complete", "economic": "reduced", "r": "complete"}
    if mode not in modes:
        raise UnsupportedError(f"qr mode {mode!r} is not supported; use 'full', "
                               "'economic' or 'r'", op="qr")
    q, r = nl.qr(a, modes[mode])
    return (r,) if mode == "r" else (q, r)


def eigh(a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False,
         overwrite_b=False, type=1, check_finite=True, subset_by_index=None,
         subset_by_value=None, driver=None):
    """Eigenvalues (and vectors) of Hermitian ``a``, from its ``lower`` (or upper) triangle."""
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise UnsupportedError("eigh: generalized problems and subsets are not supported",
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
        raise UnsupportedError("pinv(atol=...) is not supported; use rtol", op="pinv")
    if return_rank:
        raise UnsupportedError("pinv(return_rank=True) is not supported", op="pinv")
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
