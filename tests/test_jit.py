"""jit: compiled results equal the NumPy interpreter's, kernels are reused across lengths,
the disk cache survives damage and concurrent writers, and jit composes with AD."""
import itertools
import os
import re
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
import scipy.linalg

import tf_numba as tf
import tf_numba.numpy as tnp
import tf_numba.scipy.linalg  # noqa: F401  (tf.scipy.linalg in a test below)
from tf_numba.lowering.kernel_cache import KERNELS

# numba's libm and NumPy's SIMD loops may round transcendental functions differently
ULPS = 8


def assert_ulp_close(actual, expected, ulps=ULPS):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype.kind in "biu":
        np.testing.assert_array_equal(actual, expected)
        return
    scale = np.finfo(actual.real.dtype).eps * ulps
    np.testing.assert_allclose(actual, expected, rtol=scale, atol=scale, equal_nan=True)


def compiled(fn, **kw):
    return tf.jit(fn, tiered=False, **kw)


RNG = np.random.default_rng(0)
X = RNG.uniform(0.2, 0.9, (3, 4))
Y = RNG.uniform(0.2, 0.9, (3, 4))

# One kernel for many functions: compile time, not the number of functions, is the cost.
UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
         "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arctanh",
         "sqrt", "cbrt", "abs", "sign", "floor", "ceil", "rint", "square", "reciprocal",
         "negative", "deg2rad", "rad2deg", "isfinite", "isnan", "signbit", "trunc"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod",
          "power", "maximum", "minimum", "arctan2", "hypot", "copysign", "logaddexp",
          "greater", "less_equal", "equal", "fmax", "fmin", "nextafter", "heaviside"]


def many(x, y):
    return ([getattr(tnp, n)(x) for n in UNARY] + [getattr(tnp, n)(x, y) for n in BINARY]
            + [tnp.where(x > y, x, y), tnp.clip(x, 0.3, 0.6), tnp.arccosh(x + 1.0)])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_elementwise_functions_jitted_equal_interpreted(dtype):
    x, y = X.astype(dtype), Y.astype(dtype)
    got, want = compiled(many)(x, y), many(x, y)
    for name, a, b in zip(UNARY + BINARY + ["where", "clip", "arccosh"], got, want):
        assert_ulp_close(a, b), name


def reductions_and_layout(x):
    return [tnp.sum(x), tnp.sum(x, axis=0), tnp.mean(x, axis=1), tnp.max(x, axis=1),
            tnp.min(x), tnp.prod(x, axis=0), tnp.var(x), tnp.std(x, axis=0),
            tnp.argmax(x, axis=1), tnp.argmin(x, axis=0), tnp.cumsum(x, axis=1),
            tnp.cumprod(x, axis=0), tnp.all(x > 0.1), tnp.any(x > 0.85, axis=0),
            x.T, tnp.reshape(x, (4, 3)), x[::-1, 1:3], x[:, ::2], tnp.flip(x, 1),
            tnp.concatenate([x, x], axis=0), tnp.stack([x, x]), tnp.pad(x, 1),
            tnp.tile(x, (2, 1)), tnp.roll(x, 1, axis=1), tnp.tril(x), tnp.sort(x, axis=1),
            tnp.argsort(x, axis=0), x[np.array([2, 0])], x[1], x[None, :, 1],
            tnp.take_along_axis(x, np.array([[0], [1], [2]]), 1), tnp.arange(5) * 2,
            tnp.eye(3), tnp.linspace(0.0, 1.0, 4), x @ x.T, tnp.outer(x[0], x[1]),
            tnp.tensordot(x, x, axes=([1], [1])), tnp.trace(x @ x.T), tnp.diagonal(x),
            tnp.at(x)[0, 1].set(5.0), tnp.at(x)[np.array([0, 0])].add(1.0)]


def test_reductions_layout_indexing_jitted_equal_interpreted():
    got, want = compiled(reductions_and_layout)(X), reductions_and_layout(X)
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert_ulp_close(a, b), k


def test_grad_jitted_equals_interpreted_and_composes_both_ways():
    def loss(w, x):
        return tnp.sum(tnp.tanh(x @ w) ** 2) + tnp.mean(tnp.exp(-w))
    w, x = RNG.normal(size=(4, 2)), RNG.normal(size=(3, 4))
    want = tf.grad(loss)(w, x)
    assert_ulp_close(compiled(tf.grad(loss))(w, x), want, ulps=64)
    assert_ulp_close(tf.grad(compiled(loss))(w, x), want, ulps=64)
    hvp = compiled(lambda w, v: tf.jvp(tf.grad(loss), (w, x), (v, np.zeros_like(x)))[1])
    v = RNG.normal(size=w.shape)
    assert_ulp_close(hvp(w, v), tf.jvp(tf.grad(loss), (w, x), (v, np.zeros_like(x)))[1],
                     ulps=256)


def test_new_length_reuses_the_kernel_without_compiling():
    f = compiled(lambda x: tnp.sum(tnp.exp(tnp.sin(x) * x + tnp.cos(x) ** 2)))
    f(np.linspace(0, 1, 5))
    before = tf.cache_info()
    for n in (7, 100, 1001):
        x = np.linspace(0, 1, n)
        assert_ulp_close(f(x), np.sum(np.exp(np.sin(x) * x + np.cos(x) ** 2)), ulps=64)
    after = tf.cache_info()
    assert after["compiles"] == before["compiles"]
    assert after["misses"] == before["misses"]
    assert after["hits"] == before["hits"] + 3


def test_matmul_of_new_shapes_reuses_the_kernel():
    f = compiled(lambda a, b: a @ b)
    f(np.ones((2, 3)), np.ones((3, 4)))
    before = tf.cache_info()["compiles"]
    a, b = RNG.normal(size=(5, 7)), RNG.normal(size=(7, 6))
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-13)
    assert tf.cache_info()["compiles"] == before


def test_static_argnums_pytrees_and_kwargs():
    @tf.jit(static_argnums=1, tiered=False)
    def f(params, power, *, scale):
        return {"y": tnp.sum(params["w"] ** power) * scale, "z": (params["b"], None)}
    p = {"w": np.arange(3.0), "b": np.ones(2)}
    out = f(p, 3, scale=2.0)
    assert out["y"] == 2.0 * np.sum(np.arange(3.0) ** 3)
    np.testing.assert_array_equal(out["z"][0], np.ones(2))
    assert out["z"][1] is None
    assert f(p, 2, scale=1.0)["y"] == 5.0


def test_jit_inside_a_trace_is_inlined():
    inner = tf.jit(lambda x: tnp.sin(x) * 2)
    program = tf.make_program(lambda x: inner(x) + 1)(np.ones(3))
    assert [e.prim.name for e in program.eqns] == ["sin", "mul", "add"]


def test_lower_shows_program_and_generated_source():
    text = compiled(lambda x: tnp.sum(tnp.exp(x))).lower(np.ones(4)).as_text()
    assert "exp" in text and "def kernel(" in text and "for i0 in range(" in text


def test_tiered_first_call_is_interpreted_then_compiled():
    f = tf.jit(lambda x: tnp.cumsum(tnp.tanh(x)) * 3, tiered=True)
    x = np.linspace(-1, 1, 9)
    first = f(x)
    assert_ulp_close(first, np.cumsum(np.tanh(x)) * 3)
    prepared = f.lower(x).compile()
    assert prepared.plan.ready
    assert_ulp_close(f(x), first)


def test_unlowerable_operands_run_as_numpy_steps():
    f = compiled(lambda z: tnp.sort(z) * 2)
    z = np.array([3 + 1j, 1 - 1j, 2 + 0j])
    np.testing.assert_array_equal(f(z), np.sort(z) * 2)
    assert "NumPy step for sort" in f.lower(z).as_text()


def test_outputs_that_are_inputs_are_not_copied():
    x = np.ones(3)
    y, z = compiled(lambda a: (a, a * 2))(x)
    assert y is x


def _run(code, env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)


CHILD = """
    import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
    f = tf.jit(lambda x: tnp.sum(tnp.sin(x) * {k}), tiered=False)
    assert abs(f(np.arange(4.0)) - {k} * np.sin(np.arange(4.0)).sum()) < 1e-12
    print(tf.cache_info()["compiles"], tf.cache_info()["disk_hits"])
"""


def _env(cache_dir):
    env = dict(os.environ, TF_NUMBA_CACHE_DIR=str(cache_dir))
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(tf.__file__)),
                                         env.get("PYTHONPATH", "")])
    return env


def test_disk_cache_serves_a_fresh_process_and_rebuilds_corrupt_entries(tmp_path):
    env = _env(tmp_path)
    first = _run(CHILD.format(k=3), env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["1", "0"]
    warm = _run(CHILD.format(k=3), env)
    assert warm.returncode == 0 and warm.stdout.split() == ["0", "1"], warm.stderr
    kernels = list(tmp_path.rglob("k_*.py"))
    numba_files = list(tmp_path.rglob("k_*.nb*"))
    assert kernels and numba_files
    for path in kernels:                       # truncated source: rewritten
        path.write_text(path.read_text()[:40])
    for path in numba_files:                   # garbage machine-code cache: dropped
        path.write_bytes(b"\x00garbage")
    damaged = _run(CHILD.format(k=3), env)
    assert damaged.returncode == 0, damaged.stderr


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
    run = _run(code, dict(_env(tmp_path), TF_NUMBA_CACHE_DIR="off"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["2", "[]"], run.stdout


def test_compiles_are_counted_with_the_disk_cache_off(tmp_path):
    env = dict(_env(tmp_path), TF_NUMBA_CACHE_DIR="off")
    run = _run(CHILD.format(k=3), env)
    assert run.returncode == 0 and run.stdout.split() == ["1", "0"], run.stderr
    assert not list(tmp_path.iterdir())


def test_two_processes_writing_the_same_entry_both_succeed(tmp_path):
    env = _env(tmp_path)
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(CHILD.format(k=5))],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err


def test_cache_info_reports_entries_and_bytes():
    info = tf.cache_info()
    for key in ("entries", "hits", "misses", "compiles", "disk_hits", "bytes"):
        assert key in info
    assert info["entries"] == len(KERNELS._entries)


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
    source = f.lower(col, row, batch_a, batch_b).as_text()
    assert "gemm_into" not in source and "dot_into" not in source


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
    from tf_numba.lowering.codegen import PARALLEL_MIN_ELEMENTS
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
        assert ("numba.prange(" in fj.lower(x, m).as_text()) == (threads > 1)
        results.append(fj(x, m))
    e = np.exp(np.sin(x) * x)
    want = (np.sum(e), np.sum(e, axis=-1), np.max(x, axis=-1), e * 2.0, np.sum(m * m),
            np.max(m), np.sum(np.cos(m)))
    for one, two, ref in zip(*results, want):
        np.testing.assert_array_equal(one, two)
        assert_ulp_close(one, ref, ulps=64)


def test_a_wide_run_sets_numbas_thread_count_and_restores_the_callers():
    """numba's thread count is set from compiled code around a parallel plan's run (the
    Python calls cost 3 us of every run), and the caller's count is back after it."""
    import numba
    from tf_numba.lowering.codegen import PARALLEL_MIN_ELEMENTS
    from tf_numba.lowering.widths import _thread_count_setter
    from tf_numba.runtime import CpuEngine
    swap = _thread_count_setter()
    before = swap(1)
    try:
        assert numba.get_num_threads() == 1
        assert swap(2) == 1 and numba.get_num_threads() == 2
        swap(1)
        x = RNG.normal(size=PARALLEL_MIN_ELEMENTS + 7)
        f = tf.jit(lambda x: tnp.exp(x) * 2.0, tiered=False, engine=CpuEngine(threads=2))
        assert "numba.prange(" in f.lower(x).as_text()
        for _ in range(3):          # the general path, then the fast path
            assert_ulp_close(f(x), np.exp(x) * 2.0, ulps=2)
            assert numba.get_num_threads() == 1
    finally:
        swap(before)


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
    text = two.lower(x, scale, bias, dy).as_text()
    assert "RowGroup(rows=128" in text and text.count("numba.prange(") == 1
    assert "numba.prange(" not in one.lower(x, scale, bias, dy).as_text()
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
    assert "numba.prange(" not in f.lower(x, scale, bias).as_text()
    # a memory-only pass at the group's end runs after it, and counts as a later reader
    scaled = tf.jit(lambda x, s, b: tnp.reshape(_layer_norm(x, s, b), (128, 24, 32)) * 2.0,
                    tiered=False, engine=CpuEngine(threads=2))
    text = scaled.lower(x, scale, bias).as_text()
    assert "RowGroup(rows=128" in text and "numba.prange(" not in text
    xc = x - x.mean(axis=1, keepdims=True)
    y = xc / np.sqrt((xc * xc).mean(axis=1, keepdims=True) + 1e-5) * scale + bias
    np.testing.assert_allclose(f(x, scale, bias), np.sum(y * y, axis=0), rtol=1e-12)
    np.testing.assert_allclose(scaled(x, scale, bias), (y * 2.0).reshape(128, 24, 32),
                               rtol=1e-12)


def test_reductions_across_the_chunked_axis_stay_serial():
    from tf_numba.lowering.codegen import PARALLEL_MIN_ELEMENTS
    from tf_numba.runtime import CpuEngine
    x = RNG.normal(size=(PARALLEL_MIN_ELEMENTS // 8, 8))
    f = tf.jit(lambda x: tnp.sum(tnp.exp(x), axis=0), tiered=False,
               engine=CpuEngine(threads=2))
    assert "prange" not in f.lower(x).as_text()
    assert_ulp_close(f(x), np.sum(np.exp(x), axis=0), ulps=64)


def test_jit_rejects_an_engine_of_another_target():
    from tf_numba.runtime import EngineTarget

    class Other:
        threads = 1

        def target(self):
            return EngineTarget("gpu:0", "gpu")

    with pytest.raises(tf.errors.TfNumbaError, match="CPU engine"):
        tf.jit(lambda x: x, engine=Other())


def test_parallel_plans_run_from_many_threads_at_once():
    import threading

    from tf_numba.lowering.codegen import PARALLEL_MIN_ELEMENTS
    from tf_numba.runtime import CpuEngine
    f = tf.jit(lambda x: tnp.sum(tnp.exp(x)), tiered=False, engine=CpuEngine(threads=2))
    x = RNG.normal(size=PARALLEL_MIN_ELEMENTS)
    want = f(x)
    results = []

    def worker():
        results.extend(f(x) for _ in range(5))
    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [want] * 20


def test_blas_runs_as_wide_as_the_engine_and_is_restored_after(monkeypatch):
    from tf_numba.lowering import blas_threads
    from tf_numba.runtime import CpuEngine
    libraries = blas_threads.setters(True, True)
    if not libraries:
        pytest.skip("this BLAS offers no way to set its thread count")
    # the setters are called from compiled code (ctypes costs 3 us a run); below, widths
    # set that way are read back through ctypes and the other way round
    assert blas_threads._COMPILED
    real_set, real_restore, seen = blas_threads.set_width, blas_threads.restore, []

    def recording_set(chosen, threads):
        seen.append((len(chosen), threads))
        return real_set(chosen, threads)

    def recording_restore(chosen, widths, threads):
        seen.append(list(widths))
        real_restore(chosen, widths, threads)

    before = [real_set([setter], 3)[0] for setter in libraries]
    if len(libraries) == 2:     # both in one plan: the first runs wide, the other alone
        assert real_set(libraries, 2) == [3, 3] and real_set(libraries, 3) == [2, 1]
        real_set(libraries[1:], 3)
    monkeypatch.setattr(blas_threads, "set_width", recording_set)
    monkeypatch.setattr(blas_threads, "restore", recording_restore)
    try:
        a, b = RNG.normal(size=(40, 30)), RNG.normal(size=(30, 20))
        big = RNG.normal(size=(128, 128))
        numpy_blas = blas_threads.setters(False, True)
        for threads in (1, 2):
            f = compiled(lambda a, b: a @ b, engine=CpuEngine(threads=threads))
            f(a, b)                             # compiles (a run that sets no width)
            for _ in range(3):                  # the fast path too
                # NumPy's own BLAS, called the way np.matmul calls it: the same bits
                np.testing.assert_array_equal(f(a, b), a @ b)
            assert seen[-6:] == [(len(numpy_blas), threads), [3] * len(numpy_blas)] * 3
            f(big, big)
            np.testing.assert_array_equal(f(big, big), big @ big)
            assert seen[-2:] == [(len(numpy_blas), threads), [3] * len(numpy_blas)]
        # every product of a plan without LAPACK: only NumPy's BLAS is set
        both = compiled(lambda a, b, c: (a @ b, c @ c))
        plan = both.lower(a, b, big).compile().plan
        assert plan.blas_use == (False, True, None) and plan.blas == numpy_blas
        seen.clear()
        compiled(lambda a: a * 2)(a)            # no BLAS: leaves it alone
        assert seen == []
    finally:
        for setter, width in zip(libraries, before):
            setter(width)


def test_a_plan_keeps_its_products_on_the_blas_its_lapack_runs_on():
    """np.linalg's LAPACK (eigh) runs on NumPy's BLAS, with NumPy's bits, and so do the
    plan's products; a routine only SciPy has (expm) runs on SciPy's BLAS, and
    then the products go there too: one BLAS library, run as wide as the engine, has all
    of a plan's work (two libraries wide in one plan spin against each other)."""
    from tf_numba.lowering import blas_threads
    big = RNG.normal(size=(128, 128))
    sym = big + big.T

    def f(a):
        w, v = tnp.linalg.eigh(a)
        return (v * w) @ v.T @ a                 # two 2^21 multiply-add products

    def sources(plan):
        return [seg.source for seg in plan.segments if hasattr(seg, "source")]

    plan = compiled(f).lower(sym).compile().plan
    assert plan.blas_use == (False, True, "numpy")
    assert plan.blas == blas_threads.setters(False, True)
    assert any("loops.gemm_into(" in s for s in sources(plan))
    assert not any("dot_into(" in s for s in sources(plan))
    w, v = np.linalg.eigh(sym)
    np.testing.assert_array_equal(compiled(lambda a: tnp.linalg.eigh(a))(sym)[1], v)
    np.testing.assert_allclose(compiled(f)(sym), (v * w) @ v.T @ sym, rtol=1e-9, atol=1e-9)

    def g(a, b):
        x = tf.scipy.linalg.expm(a)             # SciPy's Pade approximant
        return x @ x.T @ b

    small = big / 64
    plan = compiled(g).lower(small, big).compile().plan
    assert plan.blas_use == (True, False, "scipy")
    assert plan.blas == blas_threads.setters(True, False)
    assert any("loops.dot_into(" in s for s in sources(plan))
    assert not any("gemm_into(" in s for s in sources(plan))
    x = scipy.linalg.expm(small)
    np.testing.assert_allclose(compiled(g)(small, big), x @ x.T @ big, rtol=1e-9, atol=1e-9)
    # without LAPACK in the plan the same products run on NumPy's BLAS
    plain = compiled(lambda v, a: v @ v.T @ a).lower(big, sym).compile().plan
    assert plain.blas_use == (False, True, None)


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


def test_without_numpys_cblas_products_stay_on_numbas_blas(monkeypatch):
    """A NumPy built against a BLAS without the 64-bit cblas gemm (AVAILABLE False):
    plans keep every product on numba's np.dot, and set that library's width."""
    from tf_numba.lowering import numpy_blas
    from tf_numba.lowering.plan import Plan
    monkeypatch.setattr(numpy_blas, "AVAILABLE", False)
    a, b = RNG.normal(size=(7, 5)), RNG.normal(size=(5, 3))
    program = tf.jit(lambda a, b: a @ b).lower(a, b).program
    plan = Plan(program, tiered=False)
    assert plan.blas_use == (True, False, None)
    assert "loops.dot_into(" in plan.as_text() and "gemm_into" not in plan.as_text()
    np.testing.assert_allclose(plan.run([a, b])[0], a @ b, rtol=1e-12)


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
        assert "loops.dot_into(" in g.lower(small, y).as_text()


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
        source = f.lower(*args).as_text()
        views = set(re.findall(r"(\w+) = [\w.]+\.(?:T|transpose\(.*\))$", source, re.M))
        copied = set(re.findall(r"np\.ascontiguousarray\((\w+)\)", source))
        assert not views & copied and "moved" not in source, source
        if args[0].ndim == 2:       # a matrix product hands BLAS its operands as they are
            reads_in_place = r"gemm_into\((in\d\.T, in\d|in\d, in\d\.T),"
            assert not copied and re.search(reads_in_place, source), source
        else:                       # a batched one reads C-ordered stacks of matrices
            assert copied, source
    # transposing free axes out of order changes the product's axis order: still right
    reorder = compiled(lambda c, m: tnp.einsum("ijk,kl->ijl", tnp.transpose(c, (1, 0, 2)), m))
    m = RNG.normal(size=(6, 2))
    np.testing.assert_allclose(reorder(cube, m), np.einsum("ijk,kl->ijl",
                                                            cube.transpose(1, 0, 2), m),
                               rtol=1e-12)


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
    source = f.lower(x).as_text()
    kernels = source[source.index("def kernel"):]
    # (the library step for iota wrote index arrays: ``v2[j3, j4] = j3``)
    assert not re.search(r"\] = j\d+$", kernels, re.M), kernels


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


def test_calls_with_parameter_lists_dispatch_on_every_leaf():
    """f(params, x) with params a list or tuple of arrays takes the fast path once
    compiled; a change of any leaf's shape or dtype, of the container (list, tuple, its
    length, nesting) or a non-array leaf still reaches the right specialization."""
    def f(params, x):
        w, b = params[0], params[1]
        return tnp.sum(x @ w + b) + sum(tnp.sum(p) for p in params[2:])

    def want(params, x):
        return np.sum(x @ params[0] + params[1]) + sum(np.sum(p) for p in params[2:])

    g = tf.jit(f, tiered=False)
    w, b, x = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))
    calls = [([w, b], x), ([w, b], x), ((w, b), x), ([w, b, b], x),
             ([w.astype(np.float32), b], x), ([w[:2], b], x[:, :2]),
             ([w, b, [b, b]], x), ([w, 2.0], x), ([w, b], x)]
    for params, xv in calls:
        np.testing.assert_allclose(g(params, xv), want(params, xv), rtol=1e-6)
    assert len(g.jitted._prepared) == 7     # list/tuple, 3 leaves, float32, shapes, nested, scalar
    # the same leaves split differently between two lists are different calls
    h = tf.jit(lambda p, q: tnp.sum(p[-1]) * 2.0 - tnp.sum(q[0]), tiered=False)
    u, v, z = (RNG.normal(size=3) for _ in range(3))
    for _ in range(2):                        # the second round runs on the fast path
        np.testing.assert_allclose(h([u, v], [z]), np.sum(v) * 2 - np.sum(z), rtol=1e-12)
        np.testing.assert_allclose(h([u], [v, z]), np.sum(u) * 2 - np.sum(v), rtol=1e-12)
    k = tf.jit(lambda p, x=None: tnp.sum(p[-1]) - (0.0 if x is None else tnp.sum(x)),
               tiered=False)
    for _ in range(2):                        # ([u], v) and ([u, v]) have the same leaves
        np.testing.assert_allclose(k([u], v), np.sum(u) - np.sum(v), rtol=1e-12)
        np.testing.assert_allclose(k([u, v]), np.sum(v), rtol=1e-12)


def _parameter_trees():
    from hypothesis import strategies as st
    leaf = st.sampled_from([np.zeros(2), np.zeros((2, 3)), np.zeros(2, np.float32),
                            np.zeros(()), np.float64(1.0)])
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from("abc"), inner, max_size=3)), max_leaves=8)


def test_a_reader_written_for_one_structure_reads_it_as_the_walk_and_no_other():
    """jit's fast path reads arguments with code written for the first call's structure
    (``_reader_for``): on arguments of that structure it gives ``_fast_signature``'s key
    and leaves, on any other None (never another structure's key)."""
    from hypothesis import given, settings, strategies as st
    from tf_numba.jit import _fast_signature, _reader_for

    @settings(max_examples=300, deadline=None)
    @given(st.lists(_parameter_trees(), min_size=1, max_size=3).map(tuple),
           st.lists(_parameter_trees(), min_size=1, max_size=3).map(tuple))
    def check(first, other):
        reader = _reader_for(first)
        if reader is None:      # a leaf that is not an ndarray: the walk reads it
            assert any(type(x) is not np.ndarray for x in tf.tree_util.tree_leaves(first))
            return
        want = _fast_signature(first)
        key, leaves = reader(first)
        assert key == want[0] and len(leaves) == len(want[1])
        assert all(a is b for a, b in zip(leaves, want[1]))
        got, walked = reader(other), _fast_signature(other)
        same = tf.tree_util.tree_structure(other) == tf.tree_util.tree_structure(first)
        if got is not None:
            assert same and got[0] == walked[0]
            assert all(a is b for a, b in zip(got[1], walked[1]))
        else:       # another structure, or a leaf that is not an ndarray
            assert not same or any(type(x) is not np.ndarray
                                   for x in tf.tree_util.tree_leaves(other))
    check()


def test_calls_with_parameter_dicts_dispatch_on_names_and_leaves():
    """A dict of arrays takes the fast path too, its leaves in sorted-key order as the
    pytree flattening; other names, shapes or a non-array value reach their own
    specialization."""
    g = tf.jit(lambda p, x: tnp.sum(x @ p["w"]) * 2.0 - tnp.sum(p["b"]), tiered=False)
    w, b, x = RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3))
    for _ in range(2):                        # the second round runs on the fast path
        for params, xv in [({"w": w, "b": b}, x), ({"b": b, "w": w}, x),
                           ({"w": w[:2], "b": b}, x[:, :2]), ({"w": w, "b": 1.5}, x)]:
            want = np.sum(xv @ params["w"]) * 2.0 - np.sum(params["b"])
            np.testing.assert_allclose(g(params, xv), want, rtol=1e-12)
    swapped = tf.jit(lambda p: tnp.sum(p["a"]) - 2.0 * tnp.sum(p["z"]), tiered=False)
    u, v = RNG.normal(size=3), RNG.normal(size=3)
    for _ in range(2):                        # same leaves under other names
        np.testing.assert_allclose(swapped({"a": u, "z": v}), u.sum() - 2 * v.sum(), rtol=1e-12)
        np.testing.assert_allclose(swapped({"z": u, "a": v}), v.sum() - 2 * u.sum(), rtol=1e-12)
    named = tf.jit(lambda p: sum(tnp.sum(v) * len(k) for k, v in p.items()), tiered=False)
    for _ in range(2):                        # same leaves, other names: other results
        np.testing.assert_allclose(named({"a": u, "zz": v}), u.sum() + 2 * v.sum(), rtol=1e-12)
        np.testing.assert_allclose(named({"a": u, "z": v}), u.sum() + v.sum(), rtol=1e-12)
