"""Hand-written numba loops that generated kernels call for the non-fused library steps.

Each works on rows (the axis of interest last, leading axes flattened), so the generated
code only moves axes and reshapes around the call. They are compiled with ``cache=True``
and live in this real file so numba's on-disk cache keeps their machine code.
"""
import functools

import numba
import numpy as np
from numba import types
from numba.extending import overload

from ..numerics import ERF_INV
from . import numpy_blas
from .deferred import DeferredJit

_deferred = DeferredJit()
_jit = _deferred(cache=True, error_model="numpy", nogil=True)
# sums of products in any order (as BLAS sums them): LLVM then vectorizes the reductions
_jit_reassociating = _deferred(cache=True, error_model="numpy", nogil=True,
                               fastmath={"reassoc", "contract"})
# the helpers a plan's parallel variant calls to share one step out among its threads
_jit_parallel = _deferred(cache=True, error_model="numpy", nogil=True, parallel=True)

CUMSUM, CUMPROD, CUMMAX, CUMMIN = 0, 1, 2, 3


@_jit
def dot_into(a, b, out):
    """``out = a @ b`` for matrices by numba's ``np.dot``, on SciPy's BLAS: for plans that call
    SciPy's LAPACK, so one library, run wide, has all of the plan's BLAS work. Other plans'
    products run on NumPy's BLAS (``gemm_into``). An operand neither C- nor F-ordered is
    copied first (``_blas_view``), which np.dot would do too, with a warning."""
    np.dot(_blas_view(a)[0], _blas_view(b)[0], out)


@_jit
def gemm_into(a, b, out):
    """``out = a @ b`` (float or complex matrices of one dtype) by NumPy's cblas gemm, the
    same bits as ``np.matmul``. numba's ``np.dot`` calls SciPy's BLAS, a second OpenBLAS
    beside NumPy's in the PyPI wheels: two thread pools that spin on the same cores when
    a program alternates NumPy and compiled products, and a build 3-8% slower on an
    MLP's float32 products.

    Which gemm, and how BLAS reads each operand and writes ``out``, is chosen from their
    numba types when this compiles, so each signature compiles one path: C- and
    F-ordered operands are read in place and any other from a C-ordered copy; a
    column-major ``out`` is written as the transpose ``b.T @ a.T``, any other strided one
    through a copy. (With those choices made on strides at run time, a first compile
    took 2-6 s instead of 0.3 s.) BLAS sets ``out`` to zeros when ``a`` has no columns."""
    m, k = a.shape
    n = b.shape[1]
    a_read, ta, lda = _blas_view(a)
    b_read, tb, ldb = _blas_view(b)
    _gemm_to(ta, tb, m, n, k, a_read, lda, b_read, ldb, out)


@_jit
def matvec_into(a, b, out):
    """``out = a @ b`` for a program's matrix times a 1-D vector (``out`` of one column or
    one row) by NumPy's cblas gemv, as NumPy's matmul computes one (the interpreter's
    bits): gemm with one column packs the matrix as for a wide product, 1.7-2.7x slower
    on a 250000 x 64 matrix. gemv returns without writing ``out`` when ``a`` has no
    columns, and takes ``out`` as a vector: those cases go to ``gemm_into``."""
    m, k = a.shape
    n = b.shape[1]
    if k == 0 or not (n == 1 or m == 1) or not out.flags.c_contiguous:
        gemm_into(a, b, out)
        return
    a_read, ta, lda = _blas_view(a)
    b_read, tb, ldb = _blas_view(b)
    if n == 1:          # out's column = op(a) @ op(b)'s column
        _gemv(ta, k if ta else m, m if ta else k, a_read, lda, b_read, 1 if tb else ldb, out)
    else:               # out's row = op(b)^T @ op(a)'s row
        _gemv(1 - tb, n if tb else k, k if tb else n, b_read, ldb, a_read, lda if ta else 1,
              out)


def _gemv(trans, rows, cols, a, lda, x, incx, y):
    """cblas gemv of ``y``'s dtype, ``y = op(a) @ x`` for a row-major ``rows x cols``
    ``a`` (typed in ``_gemv_for``; float32 and float64)."""


@overload(_gemv)
def _gemv_for(trans, rows, cols, a, lda, x, incx, y):
    gemv = numpy_blas.sgemv if y.dtype == types.float32 else numpy_blas.dgemv
    one, zero = y.dtype(1), y.dtype(0)

    def call(trans, rows, cols, a, lda, x, incx, y):
        gemv(numpy_blas.ROW_MAJOR, numpy_blas.NO_TRANS + trans, rows, cols, one,
             a.ctypes.data, lda, x.ctypes.data, incx, zero, y.ctypes.data, 1)
    return call


def _blas_view(x):
    """``(x or a C-ordered copy, transposed, leading dimension)``: how BLAS reads matrix
    ``x`` row-major (typed in ``_blas_view_for``)."""


@overload(_blas_view)
def _blas_view_for(x):
    if x.layout == "C":
        return lambda x: (x, 0, max(x.shape[1], 1))
    if x.layout == "F":
        return lambda x: (x, 1, max(x.shape[0], 1))

    def copied(x):
        c = np.ascontiguousarray(x)
        return c, 0, max(c.shape[1], 1)
    return copied


def _gemm_to(ta, tb, m, n, k, a, lda, b, ldb, out):
    """``out = op(a) @ op(b)`` whatever ``out``'s layout (typed in ``_gemm_to_for``)."""


@overload(_gemm_to)
def _gemm_to_for(ta, tb, m, n, k, a, lda, b, ldb, out):
    if out.layout == "C":
        return lambda ta, tb, m, n, k, a, lda, b, ldb, out: _gemm(
            ta, tb, m, n, k, a, lda, b, ldb, out, max(n, 1))
    if out.layout == "F":
        return lambda ta, tb, m, n, k, a, lda, b, ldb, out: _gemm(
            1 - tb, 1 - ta, n, m, k, b, ldb, a, lda, out, max(m, 1))

    def through_copy(ta, tb, m, n, k, a, lda, b, ldb, out):
        c = np.empty((m, n), out.dtype)
        _gemm(ta, tb, m, n, k, a, lda, b, ldb, c, max(n, 1))
        # element by element: ``out[:] = c`` compiles numba's formatting of a
        # shape-mismatch error, ~3 s the first time in a process
        for i in range(m):
            for j in range(n):
                out[i, j] = c[i, j]
    return through_copy


def _gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
    """cblas gemm of ``c``'s dtype, ``c = op(a) @ op(b)`` (typed in ``_gemm_for``). The
    arrays are arguments so that the caller holds them while BLAS reads their
    addresses."""


@overload(_gemm)
def _gemm_for(ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
    order, plain = numpy_blas.ROW_MAJOR, numpy_blas.NO_TRANS
    if c.dtype == types.float32:
        def sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
            numpy_blas.sgemm(order, plain + ta, plain + tb, m, n, k, np.float32(1),
                             a.ctypes.data, lda, b.ctypes.data, ldb, np.float32(0),
                             c.ctypes.data, ldc)
        return sgemm
    if c.dtype == types.float64:
        def dgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
            numpy_blas.dgemm(order, plain + ta, plain + tb, m, n, k, 1.0, a.ctypes.data, lda,
                             b.ctypes.data, ldb, 0.0, c.ctypes.data, ldc)
        return dgemm

    def complex_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc):
        scalars = np.zeros(2, c.dtype)      # alpha = 1, beta = 0, passed by address
        scalars[0] = 1
        _complex_gemm(plain + ta, plain + tb, m, n, k, a, lda, b, ldb, c, ldc, scalars)
    return complex_gemm


@_jit
def _complex_gemm(ta_code, tb_code, m, n, k, a, lda, b, ldb, c, ldc, scalars):
    one, zero = scalars.ctypes.data, scalars.ctypes.data + scalars.itemsize
    if c.itemsize == 8:
        numpy_blas.cgemm(numpy_blas.ROW_MAJOR, ta_code, tb_code, m, n, k, one, a.ctypes.data,
                         lda, b.ctypes.data, ldb, zero, c.ctypes.data, ldc)
    else:
        numpy_blas.zgemm(numpy_blas.ROW_MAJOR, ta_code, tb_code, m, n, k, one, a.ctypes.data,
                         lda, b.ctypes.data, ldb, zero, c.ctypes.data, ldc)


@_jit
def cumulative_rows(x, op, reverse):
    out = np.empty_like(x)
    n = x.shape[1]
    for r in range(x.shape[0]):
        for step in range(n):
            j = n - 1 - step if reverse else step
            v = x[r, j]
            if step > 0:
                prev = out[r, j + 1] if reverse else out[r, j - 1]
                if op == CUMSUM:
                    v = prev + v
                elif op == CUMPROD:
                    v = prev * v
                elif op == CUMMAX:
                    v = np.maximum(prev, v)
                else:
                    v = np.minimum(prev, v)
            out[r, j] = v
    return out


@_jit
def linear_recurrence_rows(a, b, reverse):
    out = np.empty_like(b)
    n = b.shape[1]
    for r in range(b.shape[0]):
        h = b[r, 0] * 0
        for step in range(n):
            j = n - 1 - step if reverse else step
            h = a[r, j] * h + b[r, j]
            out[r, j] = h
    return out


@_jit
def argextreme_rows(x, find_max):
    """First index of the max (min) per row; the first NaN wins, as in NumPy."""
    out = np.empty(x.shape[0], np.int64)
    for r in range(x.shape[0]):
        best = 0
        bv = x[r, 0]
        if bv != bv:
            out[r] = 0
            continue
        for j in range(1, x.shape[1]):
            v = x[r, j]
            if v != v:
                best = j
                break
            if (v > bv) if find_max else (v < bv):
                best = j
                bv = v
        out[r] = best
    return out


@_jit
def flat_rows(idx, sizes):
    """Row numbers for multi-indices ``idx`` (B, k) into axes of ``sizes``; NumPy wrap, checked."""
    out = np.empty(idx.shape[0], np.int64)
    for b in range(idx.shape[0]):
        flat = 0
        for j in range(idx.shape[1]):
            i = idx[b, j]
            n = sizes[j]
            if i < 0:
                i += n
            if i < 0 or i >= n:
                raise IndexError("gather/scatter: index out of range")
            flat = flat * n + i
        out[b] = flat
    return out


@_jit
def gather_rows(x, rows):
    out = np.empty((rows.shape[0], x.shape[1]), x.dtype)
    for b in range(rows.shape[0]):      # element by element: see ``gemm_into``'s copy
        r = rows[b]
        for c in range(x.shape[1]):
            out[b, c] = x[r, c]
    return out


SCATTER_ADD, SCATTER_SET, SCATTER_MUL = 0, 1, 2


@_jit
def scatter_rows(x, rows, updates, mode, inplace):
    """Combine ``updates`` rows into ``x`` (``inplace``) or a copy of it, at ``rows``;
    duplicates: add/multiply, or the last one wins for set."""
    out = x if inplace else x.copy()
    for b in range(rows.shape[0]):
        r = rows[b]
        for c in range(x.shape[1]):
            if mode == SCATTER_ADD:
                out[r, c] += updates[b, c]
            elif mode == SCATTER_MUL:
                out[r, c] *= updates[b, c]
            else:
                out[r, c] = updates[b, c]
    return out


@_jit
def window_start(start, size, n):
    """A dynamic_slice start after NumPy's negative wrap; IndexError if the window leaves."""
    s = start + n if start < 0 else start
    if s < 0 or s > n - size:
        raise IndexError("dynamic_slice: start index puts the window out of range")
    return s


@_jit
def sort_order(keys):
    """Stable lexicographic order of the rows of ``keys`` (num_keys, n): key 0 first, NaN last."""
    n = keys.shape[1]
    order = np.arange(n)
    for k in range(keys.shape[0] - 1, -1, -1):
        sub = np.argsort(keys[k][order], kind="mergesort")
        order = order[sub]
    return order


MATVEC_MAX_ELEMENTS = 128 * 128


@_jit_reassociating
def matvec(a, x, out):
    """``out = a @ x`` for a matrix of at most ``MATVEC_MAX_ELEMENTS``, where BLAS gemv
    costs more than its work (~100 ns of call overhead, then slower than these loops up
    to 128 x 128 on one thread): the dot products of four rows at a time."""
    m, k = a.shape
    zero = out.dtype.type(0)
    stop = m - m % 4
    for i in range(0, stop, 4):
        s0, s1, s2, s3 = zero, zero, zero, zero
        for j in range(k):
            xj = x[j]
            s0 += a[i, j] * xj
            s1 += a[i + 1, j] * xj
            s2 += a[i + 2, j] * xj
            s3 += a[i + 3, j] * xj
        out[i], out[i + 1], out[i + 2], out[i + 3] = s0, s1, s2, s3
    for i in range(stop, m):
        s = zero
        for j in range(k):
            s += a[i, j] * x[j]
        out[i] = s


@_jit_reassociating
def vecmat(x, a, out):
    """``out = x @ a`` (that is ``a.T @ x``) for a matrix of at most
    ``MATVEC_MAX_ELEMENTS``: multiples of four rows of ``a`` at a time added to ``out``,
    reading ``a`` along its rows."""
    k, n = a.shape
    zero = out.dtype.type(0)
    for j in range(n):
        out[j] = zero
    stop = k - k % 4
    for i in range(0, stop, 4):
        x0, x1, x2, x3 = x[i], x[i + 1], x[i + 2], x[i + 3]
        for j in range(n):
            out[j] += a[i, j] * x0 + a[i + 1, j] * x1 + a[i + 2, j] * x2 + a[i + 3, j] * x3
    for i in range(stop, k):
        xi = x[i]
        for j in range(n):
            out[j] += a[i, j] * xi


@_jit_reassociating
def dot(x, y):
    """``x @ y`` of two vectors (summed in any order, as BLAS does)."""
    s = x.dtype.type(0)
    for j in range(x.shape[0]):
        s += x[j] * y[j]
    return s


# ---------------------------------------------------------------- across threads
# A parallel variant's large products and windows: SPLIT_CHUNKS chunks, which numba shares
# out among the threads (a count fixed here: a function that asks numba.get_num_threads()
# cannot be kept in numba's disk cache, and eight serve one to eight threads evenly
# enough). Each chunk calls BLAS, which the variant sets to one thread, so OpenMP's and
# OpenBLAS's pools never spin against each other.
SPLIT_CHUNKS = 8


@_jit_parallel
def product_by_rows(a, b, out, vector):
    """``out = a @ b``, each chunk of rows of ``a`` and ``out`` one ``gemm_into`` (one
    ``matvec_into`` for a program's matrix times a vector, ``vector``)."""
    m = out.shape[0]
    for c in numba.prange(SPLIT_CHUNKS):
        lo, hi = m * c // SPLIT_CHUNKS, m * (c + 1) // SPLIT_CHUNKS
        if vector:
            matvec_into(a[lo:hi], b, out[lo:hi])
        else:
            gemm_into(a[lo:hi], b, out[lo:hi])


@_jit_parallel
def product_by_depth(a_stored, b, out, vector):
    """``out = a_stored.T @ b`` for a small ``out`` and a long contraction (a kernel's
    gradient, a matrix's transpose times a vector: ``vector``, as in ``product_by_rows``):
    each chunk of the contraction one BLAS call into a partial output of its own, the
    partials summed in chunk order."""
    k = b.shape[0]
    parts = np.empty((SPLIT_CHUNKS, out.shape[0], out.shape[1]), out.dtype)
    for c in numba.prange(SPLIT_CHUNKS):
        lo, hi = k * c // SPLIT_CHUNKS, k * (c + 1) // SPLIT_CHUNKS
        if vector:
            matvec_into(a_stored[lo:hi].T, b[lo:hi], parts[c])
        else:
            gemm_into(a_stored[lo:hi].T, b[lo:hi], parts[c])
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            total = parts[0, i, j]
            for c in range(1, SPLIT_CHUNKS):
                total += parts[c, i, j]
            out[i, j] = total


@_jit_parallel
def patches_by_examples(x, out, window, strides, lo, lhs_dilation, rhs_dilation, fill):
    """``patches_into``, each chunk of examples on its own (windows never mix them)."""
    n = out.shape[0]
    for c in numba.prange(SPLIT_CHUNKS):
        first, stop = n * c // SPLIT_CHUNKS, n * (c + 1) // SPLIT_CHUNKS
        patches_into(x[first:stop], out[first:stop], window, strides, lo, lhs_dilation,
                     rhs_dilation, fill)


@_jit_parallel
def patches_transpose_by_examples(ct, out, window, strides, lo, lhs_dilation,
                                  rhs_dilation):
    """``patches_transpose_into``, each chunk of examples on its own."""
    n = out.shape[0]
    for c in numba.prange(SPLIT_CHUNKS):
        first, stop = n * c // SPLIT_CHUNKS, n * (c + 1) // SPLIT_CHUNKS
        patches_transpose_into(ct[first:stop], out[first:stop], window, strides, lo,
                               lhs_dilation, rhs_dilation)


# A product followed by col2im (``product_patches_transpose``): a few examples at a time,
# their product written into a buffer of ~PRODUCT_BUFFER_ELEMENTS that stays in cache
# while ``patches_transpose_into`` adds it back.
PRODUCT_BUFFER_ELEMENTS = 1 << 17


@_jit
def _product_patches_transpose_examples(g, w_read, out, first, stop, window, strides, lo,
                                        lhs_dilation, rhs_dilation):
    """``out[first:stop]`` = col2im of ``g[first:stop] @ w_read`` (w_read: (F, K * C))."""
    positions = g.shape[1] * g.shape[2]
    depth = w_read.shape[1]
    step = max(1, PRODUCT_BUFFER_ELEMENTS // max(1, positions * depth))
    rows = g.reshape((g.shape[0] * positions, g.shape[3]))
    buffer = np.empty((step * positions, depth), g.dtype)
    k = window[0] * window[1]
    for e in range(first, stop, step):
        last = min(stop, e + step)
        part = buffer[:(last - e) * positions]
        gemm_into(rows[e * positions:last * positions], w_read, part)
        patches_transpose_into(part.reshape((last - e, g.shape[1], g.shape[2], k, depth // k)),
                               out[e:last], window, strides, lo, lhs_dilation, rhs_dilation)


@_jit
def product_patches_transpose_into(g, w_read, out, window, strides, lo, lhs_dilation,
                                   rhs_dilation):
    """``out`` = col2im of ``g @ w_read`` for C-ordered ``g`` (N, O_0, O_1, F)."""
    _product_patches_transpose_examples(g, w_read, out, 0, g.shape[0], window, strides, lo,
                                        lhs_dilation, rhs_dilation)


@_jit_parallel
def product_patches_transpose_by_examples(g, w_read, out, window, strides, lo,
                                          lhs_dilation, rhs_dilation):
    """``product_patches_transpose_into``, each chunk of examples on its own."""
    n = g.shape[0]
    for c in numba.prange(SPLIT_CHUNKS):
        _product_patches_transpose_examples(g, w_read, out, n * c // SPLIT_CHUNKS,
                                            n * (c + 1) // SPLIT_CHUNKS, window, strides,
                                            lo, lhs_dilation, rhs_dilation)


# ---------------------------------------------------------------- windows (im2col)
# The ``patches`` primitive and its transpose (``ops/windows.py``) for one or two spatial
# dims, as loops over a 2-D frame: an operand (N, S_0, S_1, C), patches (N, O_0, O_1,
# K_0 * K_1, C). Offset (a, b) of output position (i, j) reads the dilated operand at
# ``(i * stride_0 + a * rhs_dilation_0 - lo_0, ...)``; a position between dilated
# elements or outside them reads ``fill``. One function for every stride, padding and
# dilation (arguments, not constants): one compile per dtype, where a loop nest per
# offset written into the kernel took numba tens of seconds for a 3x3 CNN step.

@_jit
def _window_sources(axis, outputs, window, strides, lo, size, lhs_dilation, rhs_dilation):
    """(outputs, window[axis]) table: the operand index that offset ``a`` of output
    position ``i`` reads along ``axis``, or -1 for padding or a hole. Made once per call,
    so the element loops do no division (a 1-channel 3x3 im2col: 1.0 -> 0.4 ms)."""
    table = np.empty((outputs, window[axis]), np.int64)
    for i in range(outputs):
        for a in range(window[axis]):
            q = i * strides[axis] + a * rhs_dilation[axis] - lo[axis]
            d = lhs_dilation[axis]
            table[i, a] = q // d if q >= 0 and q % d == 0 and q // d < size else -1
    return table


@_jit
def patches_into(x, out, window, strides, lo, lhs_dilation, rhs_dilation, fill):
    """``out`` = the patches of ``x`` (the NumPy impl's bits: a copy)."""
    rows = _window_sources(0, out.shape[1], window, strides, lo, x.shape[1], lhs_dilation,
                           rhs_dilation)
    cols = _window_sources(1, out.shape[2], window, strides, lo, x.shape[2], lhs_dilation,
                           rhs_dilation)
    channels = x.shape[3]
    if channels == 1:
        _patches_of_one_channel(x, out, rows, cols, window[1], fill)
        return
    for n in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                for a in range(window[0]):
                    row = rows[i, a]
                    for b in range(window[1]):
                        col = cols[j, b]
                        k = a * window[1] + b
                        if row < 0 or col < 0:
                            for c in range(channels):
                                out[n, i, j, k, c] = fill
                        else:
                            for c in range(channels):
                                out[n, i, j, k, c] = x[n, row, col, c]


@_jit
def _patches_of_one_channel(x, out, rows, cols, width, fill):
    """``patches_into`` for one channel (an image network's first layer): a window row
    outside the operand is filled at once, and a row inside is read as a vector of its
    own (a 64x28x28 3x3 im2col: 0.64 -> 0.48 ms on one core)."""
    for n in range(out.shape[0]):
        for i in range(out.shape[1]):
            o = out[n, i]
            for a in range(rows.shape[1]):
                row = rows[i, a]
                if row < 0:
                    for j in range(o.shape[0]):
                        for b in range(width):
                            o[j, a * width + b, 0] = fill
                    continue
                source = x[n, row, :, 0]
                for j in range(o.shape[0]):
                    for b in range(width):
                        col = cols[j, b]
                        o[j, a * width + b, 0] = source[col] if col >= 0 else fill


@_jit
def patches_transpose_into(ct, out, window, strides, lo, lhs_dilation, rhs_dilation):
    """``out`` = every window of ``ct`` added back where ``patches`` read it. Offsets are
    the outer loop, as in the NumPy impl, so each element sums its terms in the same
    order (the same bits); padding and holes receive nothing."""
    rows = _window_sources(0, ct.shape[1], window, strides, lo, out.shape[1], lhs_dilation,
                           rhs_dilation)
    cols = _window_sources(1, ct.shape[2], window, strides, lo, out.shape[2], lhs_dilation,
                           rhs_dilation)
    for n in range(out.shape[0]):
        for i in range(out.shape[1]):
            for j in range(out.shape[2]):
                for c in range(out.shape[3]):
                    out[n, i, j, c] = 0
        for a in range(window[0]):
            for b in range(window[1]):
                k = a * window[1] + b
                for i in range(ct.shape[1]):
                    row = rows[i, a]
                    if row < 0:
                        continue
                    for j in range(ct.shape[2]):
                        col = cols[j, b]
                        if col >= 0:
                            for c in range(out.shape[3]):
                                out[n, row, col, c] += ct[n, i, j, k, c]


# ---------------------------------------------------------------- erf_inv

ERF_INV_CHUNK = 256     # values whose w a chunk keeps for its second pass


def _erf_inv_ranges(dtype):
    """``ERF_INV[dtype]`` with its numbers in ``dtype`` (numba then computes in it)."""
    t = np.dtype(dtype).type
    return tuple((t(bound), t(shift), tuple(t(c) for c in coefficients))
                 for bound, shift, coefficients in ERF_INV[np.dtype(dtype)])


_ERF_INV_RANGES = {types.float32: _erf_inv_ranges(np.float32),
                   types.float64: _erf_inv_ranges(np.float64)}


def _erf_inv_central(v):
    """``(w, p)`` of ``v``: ``w = -log(1 - v**2)`` and the first range's polynomial at it."""


def _erf_inv_outer(w):
    """The outer ranges' polynomial at ``w`` (beyond the first range's bound)."""


def _horner(t, coefficients):
    """Horner's rule, the highest degree's coefficient first."""


@overload(_horner)
def _horner_for(t, coefficients):
    return _horner_of_degree(len(coefficients) - 1)


@functools.cache
def _horner_of_degree(degree):
    """``_horner`` written out for one degree: straight-line code that LLVM vectorizes (a
    loop over the tuple indexes it at run time, through a switch), and one function to
    compile (with an instance per degree, each calling the next, erf_inv_into took 2.8 s
    to compile, not 2.1)."""
    p = "coefficients[0]"
    for k in range(1, degree + 1):
        p = f"(coefficients[{k}] + {p} * t)"
    namespace = {}
    exec(f"def horner(t, coefficients):\n    return {p}\n", namespace)
    return namespace["horner"]


def _log_of(dtype):
    # imported when a kernel compiles: importing vmath with ``import tf_numba`` would make
    # numba's CPU target before kernel_cache has chosen its features (512-bit vectors)
    from . import vmath
    return vmath.log32 if dtype == types.float32 else vmath.log


@overload(_erf_inv_central, inline="always")     # LLVM left it a call: a scalar loop
def _erf_inv_central_for(v):
    (_, shift, coefficients), log = _ERF_INV_RANGES[v][0], _log_of(v)
    one = np.dtype(str(v)).type(1)

    def central(v):
        w = -log((one - v) * (one + v))
        return w, _horner(w - shift, coefficients)
    return central


@overload(_erf_inv_outer)
def _erf_inv_outer_for(w):
    ranges = _ERF_INV_RANGES[w]
    if len(ranges) == 2:
        (_, shift, coefficients), = ranges[1:]
        return lambda w: _horner(np.sqrt(w) - shift, coefficients)
    (bound, shift1, c1), (_, shift2, c2) = ranges[1:]

    def outer(w):
        root = np.sqrt(w)
        return _horner(root - shift1, c1) if w < bound else _horner(root - shift2, c2)
    return outer


def _erf_inv_bound(x):
    """The first range's bound, in the dtype of ``x`` (an array or a value)."""


@overload(_erf_inv_bound)
def _erf_inv_bound_for(x):
    bound = _ERF_INV_RANGES[x.dtype if isinstance(x, types.Array) else x][0][0]
    return lambda x: bound


@_jit
def erf_inv_into(x, out):
    """``out = erf_inv(x)`` (1-D arrays), the bits of ``ops.special.erf_inv``'s NumPy impl
    (but the log: vmath's, as the fused kernels', within an ulp of NumPy's). A fused
    kernel would compute every range's polynomial for every value and select (LLVM
    if-converts a branch in a loop it vectorizes); here a chunk's first pass computes
    only the first range's, which ~99.9% of uniform values need, and keeps w, and a
    second pass redoes the rare values beyond its bound (w >= 6.25: |x| > 0.999 for
    float64): the jitted float64 random.normal of 1e5 values went 1.65 -> 0.97 ms."""
    bound = _erf_inv_bound(x)
    w = np.empty(ERF_INV_CHUNK, x.dtype)
    n = x.shape[0]
    for lo in range(0, n, ERF_INV_CHUNK):
        # the chunk as views: LLVM's overlap check before the vector loop is then exact
        # (indexing the whole arrays, it took an output starting within 128 bytes after
        # the input, as two adjacent allocations do, for an overlap: the scalar loop ran,
        # 6x slower)
        xs, outs = x[lo:lo + ERF_INV_CHUNK], out[lo:lo + ERF_INV_CHUNK]
        outer = False
        for i in range(xs.shape[0]):
            v = xs[i]
            wi, p = _erf_inv_central(v)
            w[i] = wi
            outs[i] = p * v
            outer |= wi >= bound
        if outer:
            for i in range(xs.shape[0]):
                if w[i] >= bound:
                    outs[i] = _erf_inv_outer(w[i]) * xs[i]


@_jit
def erf_inv(v):
    """``erf_inv`` of one value (``erf_inv_into``'s bits)."""
    w, p = _erf_inv_central(v)
    return (_erf_inv_outer(w) if w >= _erf_inv_bound(v) else p) * v


_deferred.finish(globals())
