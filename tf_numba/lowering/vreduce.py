"""Row reductions for generated kernels that vectorize.

A sum carried through a loop (``acc = acc + x``) is one dependent chain of additions that
LLVM may not reorder without fastmath: one add per 3-4 cycles, 4-5x slower than NumPy.
``pairwise_sum`` is NumPy's own algorithm (8 interleaved partial sums in blocks of at most
128 elements, blocks combined by halving), so a row sums to the same bits as ``np.sum``
of a contiguous row; ``row_max``/``row_min`` keep 8 running extremes and a NaN flag (NaN
propagates, as in ``np.max``). The 8 lanes become one vector operation through LLVM's SLP
vectorizer, which numba leaves off: ``kernel_cache`` turns it on while it compiles a
kernel (it changes no result, only the instructions).

The recursion of NumPy's pairwise sum is written with an explicit stack (numba cannot
cache self-recursive functions) held in a scratch array the kernel allocates once
(``scratch(dtype)``), not per row.

Changing anything here changes what cached kernels compute: bump
``kernel_cache.FORMAT_VERSION`` with it.
"""
import numba
import numpy as np

_jit = numba.njit(cache=True, error_model="numpy", nogil=True)

_BLOCK = 128        # NumPy's PW_BLOCKSIZE
_DEPTH = 64         # halving 2**63 elements down to one block takes < 64 levels


def scratch_source(dtype_ctor):
    """Source of the scratch arrays ``pairwise_sum`` needs, allocated once per kernel."""
    return f"(np.empty((3, {_DEPTH}), np.int64), np.empty({_DEPTH}, {dtype_ctor}))"


@_jit
def _block(a, lo, n):
    """NumPy's leaf: sequential below 8 elements, else 8 partial sums combined in pairs."""
    if n < 8:
        res = a.dtype.type(0)
        for i in range(lo, lo + n):
            res += a[i]
        return res
    u = np.uint64(lo)          # unsigned indices: no wraparound check between the 8 loads
    one, two, three, four = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
    five, six, seven = np.uint64(5), np.uint64(6), np.uint64(7)
    r0, r1, r2, r3 = a[u], a[u + one], a[u + two], a[u + three]
    r4, r5, r6, r7 = a[u + four], a[u + five], a[u + six], a[u + seven]
    for k in range(1, n // 8):
        i = u + np.uint64(8 * k)
        r0 += a[i]
        r1 += a[i + one]
        r2 += a[i + two]
        r3 += a[i + three]
        r4 += a[i + four]
        r5 += a[i + five]
        r6 += a[i + six]
        r7 += a[i + seven]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(lo + n - n % 8, lo + n):
        res += a[i]
    return res


@_jit
def _half(n):
    h = n // 2
    return h - h % 8


@_jit
def pairwise_sum(a, scratch):
    """Sum of the 1-D array ``a`` in NumPy's pairwise order; ``scratch`` from
    ``scratch_source``."""
    n = a.shape[0]
    zero = a.dtype.type(0)
    if n <= _BLOCK:
        return zero + _block(a, 0, n)
    frames, left = scratch
    # frames[0] = start, frames[1] = length, frames[2] = children done (0, 1)
    depth = 0
    frames[0, 0], frames[1, 0], frames[2, 0] = 0, n, 0
    while True:
        lo, m = frames[0, depth], frames[1, depth]
        if m > _BLOCK:                       # descend into the left half
            depth += 1
            frames[0, depth], frames[1, depth], frames[2, depth] = lo, _half(m), 0
            continue
        value = _block(a, lo, m)
        while True:                          # hand the value up until a right half opens
            if depth == 0:
                return zero + value
            depth -= 1
            if frames[2, depth] == 0:
                left[depth] = value
                frames[2, depth] = 1
                lo, m = frames[0, depth], frames[1, depth]
                h = _half(m)
                depth += 1
                frames[0, depth], frames[1, depth], frames[2, depth] = lo + h, m - h, 0
                break
            value = left[depth] + value


@_jit
def _pick(x, acc, is_max):
    return x if (x > acc if is_max else x < acc) else acc


@_jit
def row_extreme(a, init, is_max):
    """max (``is_max``) or min of ``init`` and the float 1-D array ``a``; a NaN anywhere
    makes the result NaN, as ``np.max``."""
    n = a.shape[0]
    acc = init
    nan = False
    if n >= 8:
        one, two, three, four = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
        five, six, seven = np.uint64(5), np.uint64(6), np.uint64(7)
        p0, p1, p2, p3, p4, p5, p6, p7 = acc, acc, acc, acc, acc, acc, acc, acc
        for k in range(n // 8):
            i = np.uint64(8 * k)
            x0, x1, x2, x3 = a[i], a[i + one], a[i + two], a[i + three]
            x4, x5, x6, x7 = a[i + four], a[i + five], a[i + six], a[i + seven]
            p0, p1 = _pick(x0, p0, is_max), _pick(x1, p1, is_max)
            p2, p3 = _pick(x2, p2, is_max), _pick(x3, p3, is_max)
            p4, p5 = _pick(x4, p4, is_max), _pick(x5, p5, is_max)
            p6, p7 = _pick(x6, p6, is_max), _pick(x7, p7, is_max)
            nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3)
            nan |= (x4 != x4) | (x5 != x5) | (x6 != x6) | (x7 != x7)
        for p in (p1, p2, p3, p4, p5, p6, p7):
            p0 = _pick(p, p0, is_max)
        acc = p0
    for i in range(n - n % 8, n):
        x = a[i]
        acc = _pick(x, acc, is_max)
        nan |= x != x
    return acc * np.nan if nan else acc
