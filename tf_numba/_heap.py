"""Keep freed heap memory for the next arrays instead of handing it back to the system.

Every interpreted step, eager op and compiled plan's output is a fresh NumPy array, and a
step of a small model allocates and frees tens of them. glibc's malloc serves arrays of
128 KiB and more from the top of its heap (its mmap threshold rises to their size after
the first is freed) and gives the top back to the system as soon as more than twice that
is free, so the next step grows the heap again, and the kernel zeroes and maps each page on
first touch: a chain of seven 128 x 128 float64 temporaries took 115 us instead of 36, and
the same chain at 256 x 256 435 us instead of 165. With ``M_TOP_PAD`` the heap grows by at
least that much at a time and keeps that much free when it trims, so those pages are
reused. The cost is at most ``TOP_PAD_MB`` of memory the process keeps after it frees it.

Set on import where the C library is glibc's; ``TF_NUMBA_HEAP_TOP_PAD_MB`` sets the size
(``0`` leaves malloc as it was).
"""
import ctypes
import os

TOP_PAD_MB = 32
_M_TOP_PAD = -2         # glibc's malloc.h


def _is_glibc():
    try:    # (not platform.libc_ver, which reads the Python binary: ~3 ms of the import)
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def keep_freed_heap():
    """Set glibc's ``M_TOP_PAD`` to ``TF_NUMBA_HEAP_TOP_PAD_MB`` (default ``TOP_PAD_MB``);
    returns the megabytes set, or 0 where nothing was set."""
    try:
        megabytes = int(os.environ.get("TF_NUMBA_HEAP_TOP_PAD_MB", TOP_PAD_MB))
    except ValueError:
        megabytes = TOP_PAD_MB
    if megabytes <= 0 or not _is_glibc():
        return 0
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return 0
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return megabytes if mallopt(_M_TOP_PAD, megabytes << 20) == 1 else 0
