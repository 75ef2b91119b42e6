"""Matrix products on NumPy's own BLAS, called from compiled code.

NumPy's PyPI wheels bring an OpenBLAS of their own beside SciPy's (which numba's
``np.dot`` and LAPACK use; see ``blas_threads``), built with 64-bit integers and exporting
``scipy_cblas_?gemm64_`` and ``scipy_cblas_?gemv64_``. Its products are the faster ones
here (3-8% on an MLP's float32 products), so kernels call its ``cblas_?gemm`` (``?gemv``
for a matrix times a vector, as NumPy's matmul does) directly (``loops.gemm_into``). Through
``numba.objmode`` and ``np.matmul`` a call cost ~5 us of Python (the GIL, three arrays
boxed, the ufunc's dispatch) and kept the kernel from running free of the GIL; through
``native.calling`` it costs a C call.

The symbols are registered at import, before any kernel that calls them is compiled or
loaded, under names of our own (so cached code never binds to a library by accident).
Where NumPy's library has none of them (a NumPy built against another BLAS), ``AVAILABLE``
is False: plans then keep every product on numba's ``np.dot``, and the names resolve to a
placeholder nothing calls (``native.register``).
"""
import ctypes

from ..ext.numpy_lapack import library_path
from .native import calling, register

# cblas ?gemm (and real ?gemv) with 64-bit integers, in the naming of NumPy's wheels
# (scipy-openblas64)
_EXPORTED = "scipy_cblas_{}64_"
_ROUTINES = ("sgemm", "dgemm", "cgemm", "zgemm", "sgemv", "dgemv")
_SYMBOL = "tf_numba_numpy_{}"

# cblas enums (C ints): row-major storage; an operand read as it is (its transpose: 112)
ROW_MAJOR, NO_TRANS = 101, 111


def _register():
    """Register the ``_SYMBOL``s; True if all are NumPy's routines."""
    try:
        lib = ctypes.CDLL(library_path())
    except OSError:
        lib = None
    found = [getattr(lib, _EXPORTED.format(name), None) if lib is not None else None
             for name in _ROUTINES]
    available = all(f is not None for f in found)
    for name, f in zip(_ROUTINES, found):
        register(_SYMBOL.format(name), f if available else None)
    return available


AVAILABLE = _register()


def _gemm(kind, scalar):
    """``void cblas_?gemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c,
    ldc)``; ``scalar``: how alpha and beta are passed (by value, or by address for
    complex)."""
    return calling(_SYMBOL.format(kind + "gemm"), "void",
                   ("int", "int", "int", "int64", "int64", "int64", scalar, "pointer",
                    "int64", "pointer", "int64", scalar, "pointer", "int64"))


def _gemv(kind, scalar):
    """``void cblas_?gemv(order, trans, m, n, alpha, a, lda, x, incx, beta, y, incy)``
    (why: ``loops.matvec_into``)."""
    return calling(_SYMBOL.format(kind + "gemv"), "void",
                   ("int", "int", "int64", "int64", scalar, "pointer", "int64", "pointer",
                    "int64", scalar, "pointer", "int64"))


sgemm, dgemm, cgemm, zgemm = (_gemm(kind, scalar) for kind, scalar
                              in zip("sdcz", ("float", "double", "pointer", "pointer")))
sgemv, dgemv = _gemv("s", "float"), _gemv("d", "double")
