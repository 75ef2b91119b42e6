"""How wide a plan runs: numba's thread count around its parallel kernels, and the
thread counts of the BLAS libraries its steps call (``blas_threads``)."""
import contextlib
import functools
import threading

import numba
from numba.np.ufunc.parallel import _launch_threads as launch_threads

from ..ext import HOST_BLAS, NUMPY_BLAS, SCIPY_BLAS
from . import blas_threads
from .native import calling


# numba's fallback threading layer (workqueue, used where neither OpenMP nor TBB is
# installed) aborts the process when two threads launch parallel regions at once: runs of
# parallel plans are serialized while the layer is unknown or workqueue.
_WORKQUEUE_LOCK = threading.Lock()


def _concurrent_launches_safe():
    try:
        return numba.threading_layer() != "workqueue"
    except ValueError:          # no parallel region has run yet in this process
        return False


# numba registers these two symbols with LLVM when it starts its threads
_get_thread_count = calling("get_num_threads", "int", ())
_set_thread_count = calling("set_num_threads", "void", ("int",))


def _swap_thread_count(threads):
    """Set numba's thread count for this thread; returns the count before. Compiled: 0.3
    us, where Python's numba.get_num_threads and set_num_threads cost 1-2 us each (a
    parallel softmax cross-entropy over 128 x 1000 paid 5.8 us a run, a tenth)."""
    before = _get_thread_count()
    _set_thread_count(threads)
    return before


@functools.cache
def _thread_count_setter():
    """``_swap_thread_count`` compiled, after numba has started its threads (which
    registers the symbols it calls; numba's check takes two locks, ~3 us, so it is made
    once). Made on first use: a dispatcher made at import costs ``import tf_numba``
    0.4 ms, and the first of a process 9 ms more (``deferred``)."""
    launch_threads()
    return numba.njit(cache=True, nogil=True)(_swap_thread_count)


def run_with_width(run, args, threads):
    """``run(args)`` on ``threads`` of numba's threads (this thread's count, restored after)."""
    threads = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
    swap = _thread_count_setter()
    with _NO_LOCK if _concurrent_launches_safe() else _WORKQUEUE_LOCK:
        before = swap(threads)
        try:
            return run(args)
        finally:
            swap(before)


_NO_LOCK = contextlib.nullcontext()


def run_with_blas(blas, run, args, threads):
    """``run(args)`` with the BLAS libraries ``blas`` (setters) as wide as ``threads``
    (``blas_threads.set_width``), restored after."""
    before = blas_threads.set_width(blas, threads)
    try:
        return run(args)
    finally:
        blas_threads.restore(blas, before, threads)


def lapack_libraries(groups):
    """The BLAS libraries the plan's host steps call (``ext.HOST_BLAS``)."""
    return frozenset(HOST_BLAS[g.prim] for g in groups
                     if not isinstance(g, list) and g.prim in HOST_BLAS)


def blas_libraries(kernel_blas, lapack):
    """(numba's BLAS, NumPy's BLAS, LAPACK's): which of the two BLAS libraries a plan's
    steps may call (``kernel_blas``: those its kernels' products call, from their
    ``Generated`` records), and which one runs its host steps' LAPACK (SciPy's where any
    does, else NumPy's; None without LAPACK). Products go to NumPy's (``loops.gemm_into``)
    unless LAPACK runs on SciPy's, numba's (``loops.dot_into``)."""
    wide = next((lib for lib in (SCIPY_BLAS, NUMPY_BLAS) if lib in lapack), None)
    return (SCIPY_BLAS in lapack or SCIPY_BLAS in kernel_blas,
            NUMPY_BLAS in lapack or NUMPY_BLAS in kernel_blas, wide)
