"""A kernel's intermediate arrays carved from a workspace its segment keeps between calls.

Why: glibc hands allocations above its mmap threshold (dynamically up to 32 MB) back to
the kernel and trims the top of the heap when a large block is freed, so a kernel that
makes and drops a few 1 MB intermediates page-faults on every call: the float64 softmax
cross-entropy gradient at 128 x 1000 took 1.6 ms with ~700 minor faults per call, and
0.3 ms once its intermediates stopped moving. XLA and PyTorch keep their own allocators
for the same reason; here a segment keeps one byte buffer per concurrent caller.

A workspace is ``(arena, state)``: ``arena`` a uint8 buffer, ``state[0]`` the bytes
handed out in this call, ``state[1]`` the bytes this call asked for. ``take`` bumps
through the arena and, when it runs out (the first call, or longer inputs), falls back
to a fresh array while still counting the request, so the pool grows the arena to fit
for the next call. Only arrays that never reach a kernel output (not even as a view) are
taken here; the codegen decides which (``codegen.private_values``).
"""
import numpy as np

from .deferred import DeferredJit

ALIGN = 64                          # bytes: a cache line, and an AVX-512 vector
MAX_ARENA_BYTES = 64 << 20          # beyond this a segment's intermediates use malloc


_deferred = DeferredJit()


@_deferred(cache=True, error_model="numpy", nogil=True)
def take(ws, shape, dtype):
    """An uninitialized C-contiguous array of ``shape`` and ``dtype``, from the arena
    when it has room (the caller fills it completely, as with ``np.empty``)."""
    arena, state = ws
    n = 1
    for d in shape:
        n *= d
    nbytes = n * np.empty(0, dtype).itemsize
    padded = (nbytes + ALIGN - 1) // ALIGN * ALIGN
    start = state[0]
    state[1] += padded
    if start + padded > arena.size:
        return np.empty(shape, dtype)
    state[0] = start + padded
    return arena[start:start + nbytes].view(dtype).reshape(shape)


# numba's own array constructors, behind helpers of ours: numba compiles the
# implementation of ``np.empty``, ``np.full`` or ``np.ascontiguousarray`` again in every
# process, once per argument types, inside the kernel that calls it (a compile worker
# starts with none of them), while these are compiled once per install and loaded from
# numba's disk cache. Kernels allocate what they return or keep here (``take`` for the rest).

@_deferred(cache=True, error_model="numpy", nogil=True)
def empty(shape, dtype):
    """``np.empty(shape, dtype)``."""
    return np.empty(shape, dtype)


@_deferred(cache=True, error_model="numpy", nogil=True)
def full(shape, value, dtype):
    """``np.full(shape, value, dtype)``."""
    return np.full(shape, value, dtype)


@_deferred(cache=True, error_model="numpy", nogil=True)
def contiguous(x):
    """``np.ascontiguousarray(x)``: ``x`` itself when it is C-contiguous, else a C copy."""
    return np.ascontiguousarray(x)


def new_workspace(nbytes):
    """A workspace whose arena starts on an ``ALIGN``-byte boundary."""
    raw = np.empty(nbytes + ALIGN, np.uint8)
    skip = -raw.ctypes.data % ALIGN
    return raw[skip:skip + nbytes], np.zeros(2, np.int64)


class Workspaces:
    """The workspaces of one kernel, one per caller running it at the same moment (a
    list's pop and append are atomic, so threads never share one)."""

    def __init__(self):
        self._free = []

    def acquire(self):
        """A workspace for one call (the kernel zeroes its ``state`` first thing)."""
        return self._free.pop() if self._free else new_workspace(0)

    def release(self, ws):
        """Back to the pool, grown to what the call asked for (up to the cap)."""
        arena, state = ws
        asked = int(state[1])
        if asked > arena.size and arena.size < MAX_ARENA_BYTES:
            ws = new_workspace(min(asked, MAX_ARENA_BYTES))
        self._free.append(ws)

    def nbytes(self):
        return sum(arena.size for arena, _ in list(self._free))


_deferred.finish(globals())
