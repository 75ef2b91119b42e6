"""BLAS calls of a plan run as wide as the caller's ``CpuEngine`` allows.

numba's ``np.dot`` calls the BLAS behind ``scipy.linalg.cython_blas`` (SciPy's OpenBLAS in
the PyPI wheels); NumPy brings an OpenBLAS of its own, which ``np.linalg`` and so most of
the linalg family run on (its ops name theirs: ``ext.HOST_BLAS``). Each keeps a pool of
worker threads that spin after a call. With both pools two threads wide on two cores, a loop
alternating NumPy and compiled matmuls (a 784-256-10 MLP step: NumPy's 0.65 ms, the numba
one's 1.1 ms) took 8 ms per pair, up to 70 ms, as each library's workers waited for cores
the other's were spinning on; with the kernels' BLAS one thread wide the pair took 2.3 ms.
So for the duration of a run a plan sets the thread count of the libraries it calls (its
products run on NumPy's, ``loops.gemm_into``, unless its LAPACK runs on SciPy's): one of
them to the engine's width, the other to one thread (``set_width``), like numba's own
threads.

OpenBLAS built with pthreads (the wheels) has no per-thread count: its
``openblas_set_num_threads_local`` sets the process-wide one, so callers running plans of
different widths at once may see each other's width (never each other's results). MKL's
``MKL_Set_Num_Threads_Local`` is per thread. Other BLAS libraries keep their own setting.

The setters are called from compiled code (``_set_widths``, through symbols registered with
LLVM under names of our own, as the two libraries export the same name): through ctypes,
setting and restoring two libraries cost 3.3 us a run, a fifth of a 256 x 256 gradient.
"""
import ctypes
import functools

import numba

from ..ext.numpy_lapack import library_path
from .native import calling, register

_SETTERS = ("openblas_set_num_threads_local", "MKL_Set_Num_Threads_Local")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _library_of_numba_blas():
    """Path of the module numba takes its dgemm from (SciPy's ``cython_blas``, which links
    the BLAS: looking a symbol up in it searches that BLAS too), or None."""
    from scipy.linalg import cython_blas
    capsule = cython_blas.__pyx_capi__["dgemm"]
    # own prototypes: setting restype on ctypes.pythonapi's would change them for everyone
    get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
        ("PyCapsule_GetName", ctypes.pythonapi))
    get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))
    address = get_pointer(capsule, get_name(capsule))
    process = ctypes.CDLL(None)     # dladdr from the C library already loaded (no ldconfig)
    info = _DlInfo()
    if not address or not process.dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
        return None
    return info.dli_fname.decode()


def _setter_in(path):
    """The thread-count setter of the BLAS that the module at ``path`` links, or None."""
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for name in _SETTERS:
        setter = getattr(lib, name, None)
        if setter is not None:
            setter.restype = ctypes.c_int
            setter.argtypes = [ctypes.c_int]
            return setter
    return None


def _numba_blas_setter():
    try:
        path = _library_of_numba_blas()
    except (ImportError, AttributeError, KeyError, OSError):
        return None
    return path and _setter_in(path)


def _numpy_blas_setter():
    return _setter_in(library_path())


def _same(a, b):
    return (a is not None and b is not None
            and ctypes.cast(a, ctypes.c_void_p).value == ctypes.cast(b, ctypes.c_void_p).value)


@functools.cache
def _found():
    """[numba's setter, NumPy's setter]: ``setter(threads) -> width before`` for numba's BLAS
    (SciPy's: its LAPACK, and the products of plans that call it, ``loops.dot_into``) and
    NumPy's (np.linalg's LAPACK, other products, ``loops.gemm_into``), None where a library
    offers no way to set it. Looked up on first use: importing ``scipy.linalg`` costs ~150
    ms, which ``import tf_numba`` and a tiered first call must not pay."""
    numba_blas, numpy_blas = _numba_blas_setter(), _numpy_blas_setter()
    found = [numba_blas, None if _same(numba_blas, numpy_blas) else numpy_blas]
    if any(found):
        _use_compiled(found)
    return found


class _Chosen(list):
    """Setters a plan calls, in ``set_width`` order; ``slots`` says which library each is
    (0: numba's, 1: NumPy's) for the compiled path."""
    slots = ()


def setters(numba_blas, numpy_blas, first_numpy=False):
    """The setters of the libraries a plan calls (so a plan touches only those its
    products use), NumPy's first if ``first_numpy`` (see ``set_width``)."""
    found = _found()
    slots = [k for k, used in enumerate((numba_blas, numpy_blas))
             if used and found[k] is not None]
    if first_numpy:
        slots.reverse()
    chosen = _Chosen(found[k] for k in slots)
    chosen.slots = tuple(slots)
    return chosen


def numpy_setters():
    """The setters for NumPy's BLAS alone (an interpreted plan's), found without looking
    for SciPy's (whose ``scipy.linalg`` import costs ~150 ms)."""
    if _found.cache_info().currsize:
        return setters(False, True)
    setter = _numpy_blas_setter()
    return _Chosen([setter] if setter is not None else [])


def set_width(chosen, threads):
    """The first of ``chosen`` setters to ``threads``, the other to one thread; returns
    the widths before. Two libraries both wide inside one plan are the two spinning pools
    again: a 128x128 svd VJP (LAPACK on one library, its products on the other) took 44 ms
    on two cores instead of 2.6 ms on one. (Runs on every call of a plan that calls BLAS:
    the one-library case, an interpreted plan's, is spelled out.)"""
    slots = getattr(chosen, "slots", ())
    if slots and _COMPILED:
        widths = [0, 0]
        widths[slots[0]] = threads
        if len(slots) > 1:
            widths[slots[1]] = 1
        before = _COMPILED[0](widths[0], widths[1])
        return [before[k] for k in slots]
    if len(chosen) == 1:
        return [chosen[0](threads)]
    return [setter(threads if k == 0 else 1) for k, setter in enumerate(chosen)]


def restore(chosen, widths, threads):
    """Undo ``set_width(chosen, threads)``, which returned ``widths``: a library that was
    at the width it was set to is not called again (~0.5 us a setter, every run)."""
    slots = getattr(chosen, "slots", ())
    if slots and _COMPILED:
        back = [0, 0]
        for n, (k, width) in enumerate(zip(slots, widths)):
            if width != (threads if n == 0 else 1):
                back[k] = width
        if back[0] or back[1]:
            _COMPILED[0](back[0], back[1])
        return
    if len(chosen) == 1:
        if widths[0] != threads:
            chosen[0](widths[0])
        return
    for n, (setter, width) in enumerate(zip(chosen, widths)):
        if width != (threads if n == 0 else 1):
            setter(width)


# ---------------------------------------------------------------- the compiled path

_SYMBOLS = ("tf_numba_set_numba_blas_threads", "tf_numba_set_numpy_blas_threads")
_COMPILED = []      # [_set_widths compiled], once both symbols are registered


# the names are ours, so cached code never binds to one library's setter by accident
_set_numba_blas, _set_numpy_blas = (calling(name) for name in _SYMBOLS)


def _set_widths(numba_blas, numpy_blas):
    """Each library with a width above 0 to that width; (widths before, 0 if untouched)."""
    before_numba = _set_numba_blas(numba_blas) if numba_blas > 0 else 0
    before_numpy = _set_numpy_blas(numpy_blas) if numpy_blas > 0 else 0
    return before_numba, before_numpy


def _use_compiled(found):
    """Register the setters' addresses under our symbols and load ``_set_widths``; on any
    failure the ctypes path stays in use. A library without a setter is never called (its
    width stays 0) but its symbol must resolve (``native.register``)."""
    try:
        for name, setter in zip(_SYMBOLS, found):
            register(name, setter)
        compiled = numba.njit(cache=True, nogil=True)(_set_widths)
        compiled(0, 0)
    except Exception:   # noqa: BLE001 - any failure leaves the ctypes path, which works
        return
    _COMPILED.append(compiled)
