"""LAPACK called in NumPy's own OpenBLAS where np.linalg lacks the routine or copies more.

The linalg family runs its LAPACK where NumPy does, so that a plan's LAPACK and products
share one thread pool (``lowering/blas_threads.py``). NumPy's PyPI wheels export the whole
of their OpenBLAS with 64-bit integers (``scipy_cblas_?trsm64_``, ``scipy_?geqrf_64_``
...); these functions call it through ctypes (~2 us a call):

- ``triangular_solve`` (cblas trsm) and ``lu_factor`` (getrf), which np.linalg does not
  offer. On one thread, timed interleaved with SciPy's, the solve costs what
  ``scipy.linalg.solve_triangular`` does at 8x8 (10 us) and 15-20% less at 128 and 512
  (trsm, where SciPy calls trtrs); the LU costs 2-2.6x SciPy's at 8x8 (11 against 6 us:
  Python around the call) and 10-30% more at 128 and 512 (the column-major copy).
- ``cho_inverse`` (potri): ``(L L^H)^-1`` from a Cholesky factor in ``2n^3/3`` flops, where
  ``cho_solve(L, I)`` takes ``2n^3`` and np.linalg.inv (LU) ``2n^3`` more after its own
  factorization.
- ``qr`` (geqrf, orgqr) and ``svd`` (gesdd): np.linalg's gufuncs copy every matrix into a
  column-major buffer and back for each routine; here one column-major copy is factored
  in place and handed out. At 512x512 on two threads: QR 19 ms against np.linalg.qr's 25,
  SVD 77 against 81 (SciPy's, the same calls: 19 and 77).

Where NumPy's library lacks them (a NumPy built against another BLAS), ``AVAILABLE`` is
False and the linalg family uses SciPy's and np.linalg's routines instead.
"""
import ctypes
import math
import warnings

import numpy as np

def library_path():
    """Path of NumPy's extension module that links the BLAS its own products call
    (looking a symbol up in it searches that BLAS too; ``lowering/numpy_blas.py`` finds
    its products there)."""
    from numpy._core import _multiarray_umath
    return _multiarray_umath.__file__


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


# Fortran LAPACK routines: argument count (INFO last; complex gesdd also takes RWORK)
_FORTRAN = {"getrf": 6, "geqrf": 8, "orgqr": 9, "gesdd": 14, "potri": 5}
_COMPLEX_NAME = {"orgqr": "ungqr"}


def _find():
    """{(routine, kind): ctypes function}: cblas ``trsm`` and the ``_FORTRAN`` routines,
    or {} if any is missing."""
    try:
        lib = ctypes.CDLL(library_path())
    except OSError:
        return {}
    found = {}
    for kind in _KIND.values():
        trsm = getattr(lib, f"scipy_cblas_{kind}trsm64_", None)
        if trsm is None:
            return {}
        # alpha by value for real kinds, by address for complex ones
        alpha = {"s": ctypes.c_float, "d": ctypes.c_double}.get(kind, _PTR)
        trsm.argtypes = [ctypes.c_int] * 5 + [_INT, _INT, alpha, _PTR, _INT, _PTR, _INT]
        trsm.restype = None
        found["trsm", kind] = trsm
        for routine, count in _FORTRAN.items():
            name = _COMPLEX_NAME.get(routine, routine) if kind in "cz" else routine
            fn = getattr(lib, f"scipy_{kind}{name}_64_", None)
            if fn is None:
                return {}
            fn.argtypes = [_PTR] * (count + (routine == "gesdd" and kind in "cz"))
            fn.restype = None        # Fortran: every argument by address
            found[routine, kind] = fn
    return found


_ROUTINES = _find()
AVAILABLE = bool(_ROUTINES)


def _address(x):
    return x.__array_interface__["data"][0]


def _fortran(routine, kind, *args):
    """Call a Fortran routine: int arguments by the address of a copy, arrays by their
    data's; returns INFO (the last argument, added here)."""
    box = np.zeros(len(args) + 1, np.int64)
    base, addresses = _address(box), []
    for i, arg in enumerate(args):
        if isinstance(arg, int):
            box[i] = arg
            addresses.append(base + 8 * i)
        else:
            addresses.append(_address(arg))
    _ROUTINES[routine, kind](*addresses, base + 8 * len(args))
    return int(box[-1])


_CHAR = {c: np.frombuffer(c.encode(), np.uint8) for c in "NSAU"}
_WORK_SIZES = {}


def _work(routine, kind, dtype, *query):
    """A WORK array of the size LAPACK asks for (``query``: the call's arguments with
    LWORK = -1 and a one-element WORK in place of None), asked once per shape."""
    key = (routine, kind) + tuple(q if q is None or isinstance(q, int) else q.shape
                                  for q in query)
    size = _WORK_SIZES.get(key)
    if size is None:
        answer = np.zeros(1, dtype)
        _fortran(routine, kind, *(answer if q is None else q for q in query))
        size = _WORK_SIZES[key] = max(1, math.ceil(answer[0].real * (1 + 1e-6)))
    return np.empty(size, dtype)


def _column_major(a, columns):
    """A stack of column-major ``m x columns`` buffers (``columns`` at least ``a``'s), ``a``
    copied into their first columns: ``(buffers, views)``, ``views[b]`` being matrix ``b``
    as an (m, columns) array and ``buffers[b]`` the same memory C-ordered."""
    buffers = np.empty(a.shape[:-2] + (columns, a.shape[-2]), a.dtype)
    views = np.swapaxes(buffers, -1, -2)
    views[..., :a.shape[-1]] = a
    return buffers, views


def _flat(x):
    return x.reshape((math.prod(x.shape[:-2]),) + x.shape[-2:])


def qr(a, *, full):
    """(Q, R) of each matrix of a stack, as ``np.linalg.qr`` gives them (reduced, or
    ``complete`` if ``full``), in ``a``'s precision: LAPACK ``?geqrf`` and ``?orgqr``
    (``?ungqr``) on one column-major copy, which then holds Q (np.linalg.qr copies in and
    out of each of its two gufuncs: 25 ms against 19 at 512x512)."""
    kind = _KIND[a.dtype]
    m, n = a.shape[-2:]
    k = min(m, n)
    q_columns = m if full else k
    buffers, views = _column_major(a, max(n, q_columns))
    count, lda = math.prod(a.shape[:-2]), max(m, 1)
    taus = np.empty((count, k), a.dtype)
    flat = _flat(buffers)
    if k and count:
        work = _work("geqrf", kind, a.dtype, m, n, flat[0], lda, taus[0], None, -1)
        for mat, tau in zip(flat, taus):
            _fortran("geqrf", kind, m, n, mat, lda, tau, work, work.size)
    r = np.triu(views[..., :m if full else k, :n])
    if k and count:
        work = _work("orgqr", kind, a.dtype, m, q_columns, k, flat[0], lda, taus[0], None,
                     -1)
        for mat, tau in zip(flat, taus):
            _fortran("orgqr", kind, m, q_columns, k, mat, lda, tau, work, work.size)
    else:       # no reflectors: Q is the identity's first columns
        views[..., :q_columns] = np.eye(m, q_columns, dtype=a.dtype)
    return views[..., :q_columns], r


def refuse_infinities(a):
    """Raise LinAlgError for a stack with an infinity, as gesdd does for a NaN: computing
    singular vectors, LAPACK's ?gesdd never returns from some such matrices (OpenBLAS
    0.3.31, NumPy's own ``np.linalg.svd`` and ``pinv`` too)."""
    if np.isinf(a).any():
        raise np.linalg.LinAlgError("SVD did not converge (an infinity in the matrix)")


def svd(a, *, full_matrices, compute_uv):
    """(U, S, Vh) of each matrix of a stack (S alone unless ``compute_uv``), as
    ``np.linalg.svd`` gives them, in ``a``'s precision: LAPACK ``?gesdd`` on a column-major
    copy, U and Vh written column-major where the caller gets them (np.linalg.svd copies
    each in and out: 81 ms against 77 at 512x512)."""
    if compute_uv:
        refuse_infinities(a)
    kind = _KIND[a.dtype]
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    count = math.prod(batch)
    real = np.empty(0, a.dtype).real.dtype
    u_columns, v_rows = (m, n) if full_matrices else (k, k)
    jobz = "N" if not compute_uv else "A" if full_matrices else "S"
    s = np.empty(batch + (k,), real)
    # column-major U (m x u_columns) and Vh (v_rows x n): C-ordered transposes
    u = np.empty(batch + ((u_columns, m) if compute_uv else (1, 1)), a.dtype)
    vh = np.empty(batch + ((n, v_rows) if compute_uv else (1, 1)), a.dtype)
    if k and count:
        buffers, _ = _column_major(a, n)
        lda, ldu, ldvt = max(m, 1), max(m, 1), max(v_rows, 1) if compute_uv else 1
        iwork = np.empty(8 * k, np.int64)
        extra = ()
        if kind in "cz":    # RWORK, sized as LAPACK 3.7+ documents it
            big, small = max(m, n), k
            size = (5 * small if jobz == "N" else
                    max(5 * small * small + 5 * small, 2 * big * small + 2 * small * small
                        + small))
            extra = (np.empty(size, real),)
        flat, flat_s, flat_u, flat_vh = _flat(buffers), s.reshape(count, k), _flat(u), _flat(vh)
        work = _work("gesdd", kind, a.dtype, _CHAR[jobz], m, n, flat[0], lda, flat_s[0],
                     flat_u[0], ldu, flat_vh[0], ldvt, None, -1, *extra, iwork)
        for mat, sv, um, vm in zip(flat, flat_s, flat_u, flat_vh):
            info = _fortran("gesdd", kind, _CHAR[jobz], m, n, mat, lda, sv, um, ldu, vm,
                            ldvt, work, work.size, *extra, iwork)
            if info:    # -4: LAPACK found a NaN in the matrix
                raise np.linalg.LinAlgError(
                    "SVD did not converge" + ("" if info > 0 else " (a NaN in the matrix)"
                                              if info == -4 else
                                              f": illegal argument {-info} of gesdd"))
    if not compute_uv:
        return s
    u, vh = np.swapaxes(u, -1, -2), np.swapaxes(vh, -1, -2)
    if not k or not count:    # nothing factored: the identity's first columns
        u[...] = np.eye(m, u_columns, dtype=a.dtype)
        vh[...] = np.eye(v_rows, n, dtype=a.dtype)
    return u, s, vh


def _matrices(x):
    """(address of the first matrix, bytes from one to the next, count) of a C-ordered
    stack (what ``_flat`` gives, without a view per matrix: trsm is called per pair)."""
    return _address(x), x.shape[-2] * x.shape[-1] * x.itemsize, math.prod(x.shape[:-2])


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
    alpha = _address(_ONE[kind]) if kind in "cz" else _ONE[kind]
    trsm = _ROUTINES["trsm", kind]
    side, uplo = _LEFT if left_side else _RIGHT, _LOWER if lower else _UPPER
    diag, lda, ldb = _UNIT if unit_diagonal else _NON_UNIT, max(a.shape[-1], 1), max(n, 1)
    a_address, a_step, count = _matrices(a)
    x_address, x_step, _ = _matrices(x)
    for i in range(count):
        trsm(_ROW_MAJOR, side, uplo, trans, diag, m, n, alpha, a_address + i * a_step, lda,
             x_address + i * x_step, ldb)
    return x


def cho_inverse(low):
    """``(L L^H)^-1`` for each lower-triangular ``L`` of a stack (only its lower triangle
    read), Hermitian and complete. LAPACK ``?potri``: a C-ordered ``L`` is, read
    column-major, the upper factor ``U = L^T`` of ``U^T U = L L^T``; for complex ``L``
    the buffer holds ``conj(L)``, whose ``U^H U`` is ``L L^H``. The inverse comes back in
    that upper triangle (column-major), the lower one as C reads it, conjugated for
    complex; the other half is its transpose."""
    kind = _KIND[low.dtype]
    complex_kind = kind in "cz"
    buffers = np.array(np.conj(low) if complex_kind else low, order="C", copy=True)
    n = low.shape[-1]
    if buffers.size:
        for mat in _flat(buffers):
            info = _fortran("potri", kind, _CHAR["U"], n, mat, max(n, 1))
            if info > 0:
                raise np.linalg.LinAlgError(f"singular Cholesky factor: zero at diagonal "
                                            f"{info - 1}")
    # C's lower triangle holds the inverse's (conjugated for complex), its transpose the
    # upper one: one select (np.tril and a conjugated transpose cost 2-4x the LAPACK call)
    lower = np.conj(buffers) if complex_kind else buffers
    return np.where(np.tri(n, dtype=bool), lower, np.swapaxes(buffers, -1, -2))


def lu_factor(a):
    """(``lu``, ``pivots``) of each matrix of a stack, as ``scipy.linalg.lu_factor``
    returns them: ``L`` (unit diagonal, below) and ``U`` packed in one matrix, pivots
    0-based int32. LAPACK ``?getrf`` on a column-major copy."""
    kind = _KIND[a.dtype]
    m, n = a.shape[-2:]
    k = min(m, n)
    buffers, views = _column_major(a, n)
    pivots = np.empty(a.shape[:-2] + (k,), np.int64)
    if buffers.size:
        singular = 0
        for mat, piv in zip(_flat(buffers), pivots.reshape(-1, k)):
            singular = singular or _fortran("getrf", kind, m, n, mat, max(m, 1), piv)
        if singular > 0:
            import scipy.linalg
            warnings.warn(f"Diagonal number {singular} is exactly zero. Singular matrix.",
                          scipy.linalg.LinAlgWarning, stacklevel=3)
    return views, (pivots - 1).astype(np.int32)
