"""The kernels' helpers (``lowering/loops.py``): ``gemm_into`` reads every layout NumPy can
hand it, and products read column-major, strided and transposed operands in place."""

import numba
import numpy as np
import pytest
import scipy.linalg
from jit_checks import compiled
from schedule_checks import calls, products

import tf_numba as tf
import tf_numba.numpy as tnp
import tf_numba.scipy.linalg  # noqa: F401  (tf.scipy.linalg in a test below)

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_gemm_into_reads_every_layout_numpy_can_hand_it(dtype):
    """loops.gemm_into calls NumPy's cblas gemm on the operands in place when BLAS can
    read them (row- or column-major, padded rows; any stride along a length-1 axis), else
    on a copy, and writes a column-major or strided output too; zero-size products."""
    from tf_numba.lowering import loops, numpy_blas
    if not numpy_blas.AVAILABLE:
        pytest.skip("NumPy's BLAS exports no cblas gemm with 64-bit integers")

    # Each numba type of each operand (C, F, A or read-only A, by the strides of its shape)
    # is a numba compile of gemm_into: all 48 triples for float64 and 27 for the other
    # dtypes were 1.5 of the suite's cold 6 minutes. How BLAS reads a is chosen apart from
    # how it reads b, and out's layout only swaps the two, so for float64 every pair of
    # types (a, out) and (b, out) is met, in 12 triples; the other dtypes differ only in
    # the gemm they call: each writable layout once, for all three operands alike.
    kinds = ("C", "F", "A", "A read-only")
    triples = ({(kinds[i], kinds[(i + j) % 4], kinds[j]) for i in range(4) for j in range(3)}
               if dtype == np.float64 else {(kind, kind, kind) for kind in kinds[:3]})

    def kind(x):
        t = numba.typeof(x)
        return t.layout + (" read-only" if not t.mutable else "")

    def layouts(shape):
        x = RNG.normal(size=shape) + (1j * RNG.normal(size=shape) if dtype in
                                      (np.complex64, np.complex128) else 0)
        x = x.astype(dtype)
        padded = np.zeros((shape[0], shape[1] + 3), dtype)
        padded[:, :shape[1]] = x
        spaced = np.zeros((2 * shape[0], 3 * shape[1]), dtype)
        spaced[::2, ::3] = x
        for y in (x, np.asfortranarray(x), padded[:, :shape[1]], spaced[::2, ::3],
                  np.broadcast_to(x[:1], shape)):       # zero strides: copied
            yield kind(y), y
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    met = set()
    for m, k, n in [(5, 4, 3), (1, 4, 3), (5, 1, 3), (5, 4, 1), (1, 1, 1), (0, 2, 3),
                    (3, 0, 2), (2, 3, 0)]:
        for ta, a in layouts((m, k)):
            for tb, b in layouts((k, n)):
                want = a.astype(np.complex128) @ b.astype(np.complex128)
                for tout, out in layouts((m, n)):
                    if (ta, tb, tout) not in triples:
                        continue
                    met.add((ta, tb, tout))
                    out[...] = np.nan
                    loops.gemm_into(a, b, out)
                    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    assert met == triples


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_matrix_times_a_vector_gives_numpys_bits(dtype):
    """A matrix times a 1-D vector too large for the kernel's own loops runs as NumPy's
    matmul runs it, cblas gemv (``loops.matvec_into``): the bits of ``np.matmul`` for a
    C-ordered matrix read as stored or transposed, on either side of the vector; a
    column-major one is copied C-ordered first (NumPy reads it in place: the same values
    to rounding); a matrix with no columns gives zeros."""
    from tf_numba.lowering import loops
    rows, depth = 2 * loops.MATVEC_MAX_ELEMENTS // 64, 64
    a = RNG.normal(size=(rows, depth)).astype(dtype)
    x, y = RNG.normal(size=depth).astype(dtype), RNG.normal(size=rows).astype(dtype)
    right = compiled(lambda m, v: m @ v)
    left = compiled(lambda v, m: v @ m)
    transposed = compiled(lambda m, v: m.T @ v)
    np.testing.assert_array_equal(right(a, x), np.matmul(a, x))
    np.testing.assert_array_equal(left(y, a), np.matmul(y, a))
    np.testing.assert_array_equal(transposed(a, y), np.matmul(a.T, y))
    f = np.asfortranarray(a)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    for got, want in ((right(f, x), f @ x), (left(y, f), y @ f), (transposed(f, y), f.T @ y)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    empty = np.zeros((rows, 0), dtype)
    np.testing.assert_array_equal(right(empty, np.zeros(0, dtype)), np.zeros(rows, dtype))


def test_a_parallel_variant_splits_a_matrix_vector_product_and_keeps_gemv():
    """On two threads a large matrix times a vector is split by rows (each chunk gemv:
    NumPy's bits, the rows are independent) and a matrix's transpose times a vector by
    the contraction (partials added in order: NumPy's values to rounding)."""
    from tf_numba.runtime.engine import CpuEngine
    x = RNG.normal(size=(40000, 64))
    w, r = RNG.normal(size=64), RNG.normal(size=40000)
    f = compiled(lambda x, w, r: (x @ w, x.T @ r), engine=CpuEngine(threads=2))
    forward, backward = f(x, w, r)
    np.testing.assert_array_equal(forward, np.matmul(x, w))
    np.testing.assert_allclose(backward, np.matmul(x.T, r), rtol=1e-11, atol=1e-11)


def test_matrix_products_read_column_major_and_strided_operands_in_place():
    """A LAPACK result is column-major and a user's array may be a strided view: the
    product reads each as it is (C and F in place, others through a copy), on NumPy's
    BLAS and, in a plan that calls SciPy's LAPACK, on numba's."""
    a, b = RNG.normal(size=(30, 40)), RNG.normal(size=(40, 20))
    f = compiled(lambda x, y: x @ y)
    for x in (a, np.asfortranarray(a), RNG.normal(size=(60, 80))[::2, ::2]):
        for y in (b, np.asfortranarray(b), RNG.normal(size=(80, 40))[::2, ::2]):
            np.testing.assert_allclose(f(x, y), x @ y, rtol=1e-12, atol=1e-12)
    small = RNG.normal(size=(30, 30)) / 30

    def propagated(m, b):                   # b column-major or strided, read by numba's BLAS
        return tf.scipy.linalg.expm(m) @ b
    g = compiled(propagated)
    for y in (np.asfortranarray(a), RNG.normal(size=(60, 80))[::2, ::2]):
        np.testing.assert_allclose(g(small, y), scipy.linalg.expm(small) @ y, rtol=1e-10,
                                   atol=1e-10)
        assert {p.helper for p in products(g, small, y)} == {"dot_into"}


def test_a_transposed_operand_reaches_blas_without_a_copy():
    """dot_general of transpose(y) reads y with its axes renamed (BLAS takes either
    order), as long as the product's free axes keep their order; otherwise it copies."""
    q, g = RNG.normal(size=(40, 30)), RNG.normal(size=(40, 20))
    batch_a, batch_b = RNG.normal(size=(3, 40, 30)), RNG.normal(size=(3, 40, 20))
    cube = RNG.normal(size=(4, 5, 6))
    cases = [
        (lambda q, g: q.T @ g, (q, g)),
        (lambda q, g: g.T @ q, (q, g)),
        (lambda a, b: tnp.swapaxes(a, 1, 2) @ b, (batch_a, batch_b)),
        (lambda q, g: (q @ q.T) @ g, (q, g)),
    ]
    for fn, args in cases:
        f = compiled(fn)
        np.testing.assert_allclose(f(*args), fn(*args), rtol=1e-12, atol=1e-12)
        assert not calls(f, *args, prim="transpose")     # folded into the product
        made = products(f, *args)
        assert made and all(p.copied == (False, False) for p in made), made
        if args[0].ndim == 2:       # a matrix product hands BLAS its operands as they are
            assert any(any(p.transposed) for p in made), made
        else:                       # a batched one reads C-ordered stacks of matrices
            assert [p.form for p in made] == ["batched"], made
    # transposing free axes out of order changes the product's axis order: still right
    reorder = compiled(lambda c, m: tnp.einsum("ijk,kl->ijl", tnp.transpose(c, (1, 0, 2)), m))
    m = RNG.normal(size=(6, 2))
    np.testing.assert_allclose(reorder(cube, m), np.einsum("ijk,kl->ijl",
                                                            cube.transpose(1, 0, 2), m),
                               rtol=1e-12)
