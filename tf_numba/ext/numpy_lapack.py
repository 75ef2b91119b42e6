"""The BLAS and LAPACK routines np.linalg does not offer, called in NumPy's own OpenBLAS.

The linalg family runs its LAPACK where NumPy does, so that a plan's LAPACK and products
share one thread pool (``lowering/blas_threads.py``). NumPy's PyPI wheels export the whole
of their OpenBLAS with 64-bit integers (``scipy_cblas_?trsm64_``, ``scipy_?getrf_64_``);
the triangular solve and the LU factorization come from there through ctypes (~2 us a
call). On one thread, timed interleaved with SciPy's, the solve costs what
``scipy.linalg.solve_triangular`` does at 8x8 (10 us) and 15-20% less at 128 and 512
(cblas trsm, where SciPy calls trtrs); the LU costs 2x SciPy's at 8x8 (11 against 6 us,
Python around the call) and 10-20% more at 128 and 512 (the column-major copy).
Where NumPy's library lacks them (a NumPy built against another BLAS), ``AVAILABLE`` is
False and the linalg family uses SciPy's routines instead.
"""
import ctypes
import math
import warnings

import numpy as np

from ..lowering.numpy_blas import library_path

# cblas enums (C ints)
_ROW_MAJOR = 101
_NO_TRANS, _TRANS, _CONJ_TRANS = 111, 112, 113
_UPPER, _LOWER = 121, 122
_NON_UNIT, _UNIT = 131, 132
_LEFT, _RIGHT = 141, 142

_KIND = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
         np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
_INT = ctypes.c_int64
_PTR = ctypes.c_void_p


def _find():
    """{(routine, kind): ctypes function} for ``trsm`` and ``getrf``, or {} if any is
    missing."""
    try:
        lib = ctypes.CDLL(library_path())
    except OSError:
        return {}
    found = {}
    for kind in _KIND.values():
        trsm = getattr(lib, f"scipy_cblas_{kind}trsm64_", None)
        getrf = getattr(lib, f"scipy_{kind}getrf_64_", None)
        if trsm is None or getrf is None:
            return {}
        # alpha by value for real kinds, by address for complex ones
        alpha = {"s": ctypes.c_float, "d": ctypes.c_double}.get(kind, _PTR)
        trsm.argtypes = [ctypes.c_int] * 5 + [_INT, _INT, alpha, _PTR, _INT, _PTR, _INT]
        trsm.restype = None
        getrf.argtypes = [_PTR] * 6      # Fortran: every argument by address
        getrf.restype = None
        found["trsm", kind], found["getrf", kind] = trsm, getrf
    return found


_ROUTINES = _find()
AVAILABLE = bool(_ROUTINES)


def _matrices(x):
    """(address of the first matrix, bytes from one to the next, count) of a C-ordered
    stack."""
    return (x.__array_interface__["data"][0], x.shape[-2] * x.shape[-1] * x.itemsize,
            math.prod(x.shape[:-2]))


# trsm's alpha, 1: by value for real kinds, by address for complex ones
_ONE = {"s": 1.0, "d": 1.0}
_ONE.update((kind, np.ones(1, dtype)) for dtype, kind in _KIND.items() if kind in "cz")


def triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """``X`` with ``op(A) X = B`` (``left_side``) or ``X op(A) = B``, for stacks of
    triangular ``a`` (only the ``lower`` or upper triangle read) and ``b`` of one batch
    shape and dtype: cblas ``?trsm`` on each pair. A zero on ``a``'s diagonal raises
    ``LinAlgError``, as ``scipy.linalg.solve_triangular`` does."""
    kind = _KIND[a.dtype]
    if conjugate_a and not transpose_a:     # cblas has no plain conjugate: pass conj(A)
        a, conjugate_a = np.conj(a), False
    a = np.ascontiguousarray(a)
    x = np.array(b, order="C", copy=True)
    if not unit_diagonal:
        diagonal = a.diagonal(0, -2, -1)
        if not diagonal.all():
            raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal "
                                        f"{np.argwhere(diagonal == 0)[0, -1]}")
    m, n = x.shape[-2:]
    if x.size == 0:
        return x
    trans = (_CONJ_TRANS if conjugate_a else _TRANS) if transpose_a else _NO_TRANS
    one = _ONE[kind]
    alpha = one.__array_interface__["data"][0] if kind in "cz" else one
    trsm = _ROUTINES["trsm", kind]
    side, uplo = _LEFT if left_side else _RIGHT, _LOWER if lower else _UPPER
    diag, lda, ldb = _UNIT if unit_diagonal else _NON_UNIT, max(a.shape[-1], 1), max(n, 1)
    a_address, a_step, count = _matrices(a)
    x_address, x_step, _ = _matrices(x)
    for i in range(count):
        trsm(_ROW_MAJOR, side, uplo, trans, diag, m, n, alpha, a_address + i * a_step, lda,
             x_address + i * x_step, ldb)
    return x


def lu_factor(a):
    """(``lu``, ``pivots``) of each matrix of a stack, as ``scipy.linalg.lu_factor``
    returns them: ``L`` (unit diagonal, below) and ``U`` packed in one matrix, pivots
    0-based int32. LAPACK ``?getrf`` on a column-major copy."""
    kind = _KIND[a.dtype]
    m, n = a.shape[-2:]
    k = min(m, n)
    # a C-ordered stack of the transposes is a column-major stack of the matrices
    lu_t = np.array(np.swapaxes(a, -1, -2), order="C", copy=True)
    pivots = np.empty(a.shape[:-2] + (k,), np.int64)
    if lu_t.size:
        getrf = _ROUTINES["getrf", kind]
        dims = np.array([m, n, max(m, 1), 0], np.int64)     # m, n, lda, info
        address = dims.__array_interface__["data"][0]
        lu_address, lu_step, count = _matrices(lu_t)
        pivots_address = pivots.__array_interface__["data"][0]
        singular = 0
        for i in range(count):
            getrf(address, address + 8, lu_address + i * lu_step, address + 16,
                  pivots_address + i * k * 8, address + 24)
            singular = singular or dims[3]
        if singular > 0:
            import scipy.linalg
            warnings.warn(f"Diagonal number {singular} is exactly zero. Singular matrix.",
                          scipy.linalg.LinAlgWarning, stacklevel=3)
    return np.swapaxes(lu_t, -1, -2), (pivots - 1).astype(np.int32)
