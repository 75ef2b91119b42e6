"""Code generation (``lowering/codegen.py``): what the generated kernels are made of (fused
loops, row sums, unrolled max/min, prange chunks and row groups, outer products, iota from
the loop index) and that each computes NumPy's result."""
import itertools

import numpy as np
import pytest
from jit_checks import assert_ulp_close, child_env, compiled, run_child
from schedule_checks import blocks, calls, helpers, nests, products, threaded

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.kernel_vocab.rules import fusion
from tf_numba.lowering.schedule import Nest

RNG = np.random.default_rng(0)


def test_kernels_assign_no_array_to_a_slice(tmp_path):
    """A kernel line assigning an array to a slice or row (``grown[:n] = active``) makes
    numba compile the formatting of its shape-mismatch error: ~3 s the first time in a
    process, which a compile worker pays again. Sorted rows and the tape a recorded while
    loop grows were such lines; here, in a fresh process, numba compiles neither kernel
    with it."""
    code = """
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from numba.core import event
        compiled = []
        class Listener(event.Listener):
            def on_start(self, ev):
                compiled.append(ev.data["dispatcher"].py_func.__qualname__)
            def on_end(self, ev):
                pass
        event.register("numba:compile", Listener())
        def newton_sqrt(a):
            return tf.lax.while_loop(lambda c: c[0] < 40, lambda c: (c[0] + 1,
                                     0.5 * (c[1] + a / c[1])), (0, a + 1.0))[1]
        x = np.array([[3.0, 1.0, 2.0], [0.5, -1.0, 4.0]])
        sort = tf.jit(lambda x: tnp.sort(x, axis=1) * 2.0, tiered=False)
        assert (sort(x) == np.sort(x, axis=1) * 2.0).all()
        grow = tf.jit(tf.grad(newton_sqrt), tiered=False)    # 40 steps: the tape grows
        assert abs(grow(2.0) - 0.5 / np.sqrt(2.0)) < 1e-12
        print(sum("kernel" in name for name in compiled), [
            name for name in compiled if "shape_context" in name])
    """
    run = run_child(code, dict(child_env(tmp_path), TF_NUMBA_CACHE_DIR="off"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "[]"], run.stdout


@pytest.mark.parametrize("n", [1, 5, 8, 11])
def test_unrolled_max_min_and_row_sums_match_numpy_with_nans(n):
    f = compiled(lambda x: (tnp.max(x, axis=1), tnp.min(x, axis=1), tnp.max(x),
                            tnp.sum(tnp.exp(x), axis=1), tnp.max(tnp.exp(x) - x, axis=1)))
    x = RNG.normal(size=(3, n))
    x[1, n // 2] = np.nan
    want = (np.max(x, axis=1), np.min(x, axis=1), np.max(x), np.sum(np.exp(x), axis=1),
            np.max(np.exp(x) - x, axis=1))
    for got, ref in zip(f(x), want):
        assert_ulp_close(got, ref, ulps=16)


def test_contractions_over_both_dims_of_a_transposed_matrix():
    a, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 3))
    f = compiled(lambda a, b: (tnp.tensordot(a, b, axes=([0, 1], [1, 0])),
                               tnp.einsum("ij,ji->", a, b), a.T @ b.T))
    got = f(a, b)
    np.testing.assert_allclose(got[0], np.tensordot(a, b, axes=([0, 1], [1, 0])), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.einsum("ij,ji->", a, b), rtol=1e-12)
    np.testing.assert_allclose(got[2], a.T @ b.T, rtol=1e-12)


def test_length_one_contractions_fuse_as_outer_products_in_any_layout():
    """dot_general contracting only length-1 axes is written as a loop (no BLAS call):
    column x row, transposed operands, a batch dim, a float32 x float64 mix, a scalar."""
    col, row = RNG.normal(size=(5, 1)), RNG.normal(size=(1, 4))
    batch_a, batch_b = RNG.normal(size=(3, 5, 1)), RNG.normal(size=(3, 1, 4))
    f = compiled(lambda c, r, ba, bb: (
        c @ r, r.T @ c.T, tnp.matmul(ba, bb), tnp.einsum("bij,bjk->bki", ba, bb),
        tnp.outer(c[:, 0].astype(np.float32), r[0]), c @ r[:, :1]))
    want = (col @ row, row.T @ col.T, batch_a @ batch_b,
            np.einsum("bij,bjk->bki", batch_a, batch_b),
            np.outer(col[:, 0].astype(np.float32), row[0]), col @ row[:, :1])
    for got, ref in zip(f(col, row, batch_a, batch_b), want):
        assert got.dtype == ref.dtype
        assert_ulp_close(got, ref, ulps=2)
    assert not products(f, col, row, batch_a, batch_b)     # fused: no product call


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sums_are_numpys_pairwise_sums_bit_for_bit(dtype):
    """Compiled row sums use NumPy's own pairwise order (vreduce), so they agree to the
    bit, not just to a tolerance; max/min rows propagate NaN as np.max."""
    f = compiled(lambda x: (tnp.sum(x, axis=1), tnp.sum(tnp.exp(x), axis=1), tnp.sum(x),
                            tnp.max(x * 2.0, axis=1), tnp.min(x, axis=1)))
    for n in (3, 8, 127, 128, 129, 1000, 4099):
        x = RNG.normal(size=(4, n)).astype(dtype)
        x[3, n // 2] = np.nan
        got = f(x)
        np.testing.assert_array_equal(got[0], np.sum(x, axis=1))
        assert_ulp_close(got[1], np.sum(np.exp(x), axis=1), ulps=4)
        np.testing.assert_array_equal(got[3], np.max(x * 2.0, axis=1))
        np.testing.assert_array_equal(got[4], np.min(x, axis=1))
        assert np.isnan(got[2])


def test_large_regions_run_as_prange_chunks_with_the_engines_width():
    """Regions of >= PARALLEL_MIN_ELEMENTS run as loops over chunks, numba.prange loops
    when the engine allows more than one thread; results do not depend on the thread count
    (full sums combine chunk partials in order either way)."""
    from tf_numba.lowering.schedule import PARALLEL_MIN_ELEMENTS
    from tf_numba.runtime import CpuEngine

    def f(x, m):
        e = tnp.exp(tnp.sin(x) * x)
        return (tnp.sum(e), tnp.sum(e, axis=-1), tnp.max(x, axis=-1), e * 2.0,
                tnp.sum(m * m), tnp.max(m), tnp.sum(tnp.cos(m)))

    x = RNG.normal(size=(64, PARALLEL_MIN_ELEMENTS // 64 + 3))
    m = RNG.normal(size=PARALLEL_MIN_ELEMENTS + 5)
    m[1000] = np.nan
    results = []
    for threads in (1, 2):
        fj = tf.jit(f, tiered=False, engine=CpuEngine(threads=threads))
        # one thread runs chunked range() loops, two the prange variant: same bits
        assert threaded(fj, x, m) == (threads > 1)
        chunked = [n for n in nests(fj, x, m) if n.chunks is not None]
        assert chunked and all(n.chunks.threaded == (threads > 1) for n in chunked)
        results.append(fj(x, m))
    e = np.exp(np.sin(x) * x)
    want = (np.sum(e), np.sum(e, axis=-1), np.max(x, axis=-1), e * 2.0, np.sum(m * m),
            np.max(m), np.sum(np.cos(m)))
    for one, two, ref in zip(*results, want):
        np.testing.assert_array_equal(one, two)
        assert_ulp_close(one, ref, ulps=64)


def _layer_norm(x, scale, bias):
    xc = x - tnp.mean(x, axis=1, keepdims=True)
    return xc / tnp.sqrt(tnp.mean(xc * xc, axis=1, keepdims=True) + 1e-5) * scale + bias


def test_row_aligned_regions_run_as_one_prange_with_the_same_bits_on_any_width():
    """layer_norm's mean, variance and output regions read each other's values only at
    their own row: a plan's parallel variant runs them as one prange over chunks of rows
    (no region alone pays for threads), and the serial variant computes the same bits."""
    from tf_numba.runtime import CpuEngine
    x = RNG.normal(size=(128, 768))
    scale, bias, dy = RNG.normal(size=768), RNG.normal(size=768), RNG.normal(size=(128, 768))

    def loss(x, scale, bias, dy):
        return tnp.sum(_layer_norm(x, scale, bias) * dy)

    one = tf.jit(loss, tiered=False)
    two = tf.jit(loss, tiered=False, engine=CpuEngine(threads=2))
    (block,) = blocks(two, x, scale, bias, dy)
    assert block.group.rows == 128 and block.chunks.threaded
    assert all(n.chunks is block.chunks for n in block.members if type(n) is Nest)
    assert not any(n.chunks is not None for n in nests(two, x, scale, bias, dy)
                   if not n.in_block)       # the block's prange is the kernel's only one
    assert not threaded(one, x, scale, bias, dy)
    got = two(x, scale, bias, dy)
    assert got == one(x, scale, bias, dy)           # bit for bit
    xc = x - x.mean(axis=1, keepdims=True)
    want = np.sum((xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5) * scale + bias)
                  * dy)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_row_group_whose_array_a_later_pass_reads_stays_plain_regions():
    """Run on both cores, a group's large output would then be read by a serial pass from
    the other core's cache (2x slower here): the regions stay plain loops. Reading across
    rows (a sum over the rows) never joins a group."""
    from tf_numba.runtime import CpuEngine
    x = RNG.normal(size=(128, 768))
    scale, bias = RNG.normal(size=768), RNG.normal(size=768)

    def column_energy(x, scale, bias):
        y = _layer_norm(x, scale, bias)
        return tnp.sum(y * y, axis=0)

    f = tf.jit(column_energy, tiered=False, engine=CpuEngine(threads=2))
    assert not threaded(f, x, scale, bias)
    # a memory-only pass at the group's end runs after it, and counts as a later reader
    scaled = tf.jit(lambda x, s, b: tnp.reshape(_layer_norm(x, s, b), (128, 24, 32)) * 2.0,
                    tiered=False, engine=CpuEngine(threads=2))
    (block,) = blocks(scaled, x, scale, bias)
    assert block.group.rows == 128 and block.chunks is None and block.tail
    assert not threaded(scaled, x, scale, bias)
    xc = x - x.mean(axis=1, keepdims=True)
    y = xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5) * scale + bias
    np.testing.assert_allclose(f(x, scale, bias), np.sum(y * y, axis=0), rtol=1e-12)
    np.testing.assert_allclose(scaled(x, scale, bias), (y * 2.0).reshape(128, 24, 32),
                               rtol=1e-12)


def test_reductions_across_the_chunked_axis_combine_chunk_partials_in_order():
    """A sum over the rows of a large region (a bias gradient) runs in chunks of rows, each
    adding into a row of partials of its own, combined in chunk order: a prange with two
    threads, the same bits with one."""
    from tf_numba.lowering.schedule import PARALLEL_MIN_ELEMENTS
    from tf_numba.runtime import CpuEngine
    x = RNG.normal(size=(PARALLEL_MIN_ELEMENTS // 8, 8))
    x[5, 3] = np.nan

    def f(x):
        return tnp.sum(tnp.exp(x), axis=0), tnp.max(x, axis=0) * 2.0

    results = []
    for threads in (1, 2):
        fj = tf.jit(f, tiered=False, engine=CpuEngine(threads=threads))
        assert threaded(fj, x) == (threads > 1)
        big = [n for n in nests(fj, x) if n.region.space == x.shape]
        assert big and all(n.chunks is not None and n.chunks.threaded == (threads > 1)
                           for n in big)
        results.append(fj(x))
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)
    assert_ulp_close(results[0][0], np.sum(np.exp(x), axis=0), ulps=64)
    np.testing.assert_array_equal(results[0][1], np.max(x, axis=0) * 2.0)


def test_iota_is_computed_from_the_loop_index_inside_fused_loops():
    """A triangular mask or an arange feeding elementwise work is a function of the loop
    position: no index array is written out and read back."""
    x = RNG.normal(size=(37, 45))
    f = compiled(lambda x: (tnp.triu(x, 1), tnp.tril(x, -2) * 2.0, tnp.arange(45.0) * x,
                            tnp.sum(tnp.arange(37)[:, None] * x, axis=0)))
    want = (np.triu(x, 1), np.tril(x, -2) * 2.0, np.arange(45.0) * x,
            np.sum(np.arange(37)[:, None] * x, axis=0))
    for got, ref in zip(f(x), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12)
    # iota fuses into the nests that read it: no library step writes an index array
    assert not [r for r in calls(f, x) if r.eqn.prim.name == "iota"]
    assert any(e.prim.name == "iota" for n in nests(f, x) for e in n.region.eqns)


def test_int32_bitwise_results_stay_int32_in_fused_loops():
    """numba widens int32 ``^ | &`` to int64: the kernel casts each result back (a chain of
    them, as Threefry's, otherwise runs in 64-bit lanes), with NumPy's bits."""
    a = RNG.integers(-2 ** 31, 2 ** 31, 1000, dtype=np.int64).astype(np.int32)
    b = RNG.integers(-2 ** 31, 2 ** 31, 1000, dtype=np.int64).astype(np.int32)
    f = compiled(lambda a, b: ((a ^ b) | (a & 12345)) + a)
    got = f(a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ((a ^ b) | (a & 12345)) + a)
    # each bitwise op's scalar expression casts back to its dtype
    (nest,) = nests(f, a, b)
    bitwise = [e for e in nest.region.eqns if e.prim.name in ("xor", "or", "and")]
    assert len(bitwise) == 3
    for e in bitwise:
        assert fusion(e).expression(e, ["x", "y"]).startswith("np.int32("), e


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))))
def test_products_of_every_transpose_of_a_3d_operand_match_numpy(perm):
    """The transpose folding renames axes in the dimension numbers: every permutation,
    with a contraction, a batch axis and a free axis, on either side of the product."""
    a = RNG.normal(size=(2, 3, 4))
    t = a.transpose(perm)                            # the shape the product sees
    b = RNG.normal(size=(t.shape[0], t.shape[2], 5))
    f = compiled(lambda a, b: (tnp.einsum("bij,bjk->bik", tnp.transpose(a, perm), b),
                               tnp.einsum("bjk,bij->bki", b, tnp.transpose(a, perm))))
    got = f(a, b)
    np.testing.assert_allclose(got[0], np.einsum("bij,bjk->bik", t, b), rtol=1e-12)
    np.testing.assert_allclose(got[1], np.einsum("bjk,bij->bki", b, t), rtol=1e-12)


def test_a_parallel_variant_shares_large_products_and_windows_out_among_threads():
    """With loops worth threads beside them, a plan's parallel variant splits its large
    products (by rows; a small output by the contraction, partials summed in order), its
    im2col and its input gradient's product with col2im (by examples) across the
    threads, BLAS on one thread in each: the values are the unsplit ones, the split
    contraction's to rounding."""
    from tf_numba import lax
    from tf_numba.runtime import CpuEngine
    x = RNG.normal(size=(64, 16, 16, 8))       # col2im's output: PARALLEL_MIN_ELEMENTS
    w = RNG.normal(size=(3, 3, 8, 32))
    dn = ("NHWC", "HWIO", "NHWC")

    def loss(w, x):
        y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
        return tnp.sum(y * y)
    step = tf.grad(loss, argnums=(0, 1))
    two = tf.jit(step, tiered=False, engine=CpuEngine(threads=2))
    plan = two.lower(w, x).plan
    assert plan.variant_for(2) is not plan
    assert {"product_by_rows", "product_by_depth", "patches threaded",
            "product_patches_transpose threaded"} <= helpers(two, w, x)
    assert not {h for h in helpers(tf.jit(step, tiered=False), w, x)
                if "by_" in h or "threaded" in h}
    # against the interpreter, whose products are NumPy's BLAS unsplit and whose col2im
    # sums in the compiled loop's order (a serial kernel to compare with costs a compile)
    (w1, x1), (w2, x2) = step(w, x), two(w, x)
    np.testing.assert_array_equal(x2, x1)
    np.testing.assert_allclose(w2, w1, rtol=1e-12, atol=1e-12 * np.abs(w1).max())


def test_a_large_product_that_cannot_be_split_keeps_the_serial_plan_with_wide_blas():
    """``a.T @ b`` with a large output splits neither by rows nor by its contraction: the
    plan runs serially, its BLAS as wide as the engine, however large its loops."""
    from tf_numba.runtime import CpuEngine
    a, b = RNG.normal(size=(256, 300)), RNG.normal(size=(256, 300))
    f = tf.jit(lambda a, b: tnp.tanh(a.T @ b) + tnp.sum(tnp.exp(a)),
               tiered=False, engine=CpuEngine(threads=2))
    plan = f.lower(a, b).plan
    assert plan.variant_for(2) is plan
    np.testing.assert_allclose(f(a, b), np.tanh(a.T @ b) + np.sum(np.exp(a)), rtol=1e-12)
