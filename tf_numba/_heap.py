"""Keep freed heap memory for the next arrays instead of handing it back to the system.

Every interpreted step, eager op and compiled plan's output is a fresh array, and a step of
a small model allocates and frees tens of them. glibc's malloc adapts to that only slowly:
an array of 128 KiB or more is mapped fresh from the system until one that size has been
freed, which raises the mapping threshold to its size and the heap's trim threshold to
twice that, and the heap then hands its top back to the system whenever more than that is
free. So each step grows the heap again and the kernel zeroes and maps every page on first
touch: a chain of four 256 x 256 float64 temporaries page-faulted ~220 times, and an eager
256 x 256 gradient took 3.1 ms instead of 2.0. Here malloc starts where its adaptation
ends (the largest mapping threshold it would pick, 32 MiB on 64-bit, and a trim threshold
of twice that): arrays below 32 MiB come from the heap, and up to ``TRIM_MB`` of freed
memory stays with the process for the next ones. (Setting any of these turns glibc's
adaptation off, so both are set: a top pad alone froze the mapping threshold low, and a
1024 x 1024 product's output was mapped and faulted in on every call.)

Set on import where the C library is glibc's; ``TF_NUMBA_HEAP_TRIM_MB`` sets the size
(``0`` leaves malloc as it was).
"""
import ctypes
import os

MMAP_MB = 32            # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_MB = 2 * MMAP_MB   # what it would set the trim threshold to with it
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3       # glibc's malloc.h


def _is_glibc():
    try:    # (not platform.libc_ver, which reads the Python binary: ~3 ms of the import)
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def keep_freed_heap():
    """Set glibc's trim threshold to ``TF_NUMBA_HEAP_TRIM_MB`` (default ``TRIM_MB``) and its
    mapping threshold to ``MMAP_MB`` (or less, to stay below the trim threshold); returns
    the trim threshold set in megabytes, or 0 where nothing was set."""
    try:
        megabytes = int(os.environ.get("TF_NUMBA_HEAP_TRIM_MB", TRIM_MB))
    except ValueError:
        megabytes = TRIM_MB
    if megabytes <= 0 or not _is_glibc():
        return 0
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return 0
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    mapped = min(MMAP_MB, max(1, megabytes // 2))
    if mallopt(_M_MMAP_THRESHOLD, mapped << 20) != 1:
        return 0
    return megabytes if mallopt(_M_TRIM_THRESHOLD, megabytes << 20) == 1 else 0
