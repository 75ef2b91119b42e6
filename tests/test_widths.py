"""Thread widths (``lowering/widths.py``, ``blas_threads.py``): numba's and the BLAS
libraries' thread counts are the engine's while a plan runs and the caller's after; a
plan keeps its products on the BLAS its LAPACK runs on."""

import numba
import numpy as np
import pytest
import scipy.linalg
from jit_checks import assert_ulp_close, compiled
from schedule_checks import threaded

import tf_numba as tf
import tf_numba.numpy as tnp
import tf_numba.scipy.linalg  # noqa: F401  (tf.scipy.linalg in a test below)

RNG = np.random.default_rng(0)


def test_a_wide_run_sets_numbas_thread_count_and_restores_the_callers():
    """numba's thread count is set from compiled code around a parallel plan's run (the
    Python calls cost 3 us of every run), and the caller's count is back after it."""
    from tf_numba.lowering.schedule import PARALLEL_MIN_ELEMENTS
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
        assert threaded(f, x)
        for _ in range(3):          # the general path, then the fast path
            assert_ulp_close(f(x), np.exp(x) * 2.0, ulps=2)
            assert numba.get_num_threads() == 1
    finally:
        swap(before)


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

    def helpers(plan):
        return {c.product.helper for s in plan.schedules for c in s.calls()
                if c.product is not None}

    plan = compiled(f).lower(sym).compile().plan
    assert plan.blas_use == (False, True, "numpy")
    assert plan.blas == blas_threads.setters(False, True)
    assert "gemm_into" in helpers(plan) and "dot_into" not in helpers(plan)
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
    assert "dot_into" in helpers(plan) and "gemm_into" not in helpers(plan)
    x = scipy.linalg.expm(small)
    np.testing.assert_allclose(compiled(g)(small, big), x @ x.T @ big, rtol=1e-9, atol=1e-9)
    # without LAPACK in the plan the same products run on NumPy's BLAS
    plain = compiled(lambda v, a: v @ v.T @ a).lower(big, sym).compile().plan
    assert plain.blas_use == (False, True, None)


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
    (sched,) = plan.schedules
    assert [c.product.helper for c in sched.calls()] == ["dot_into"]
    assert sched.blas == {"scipy"}
    np.testing.assert_allclose(plan.run([a, b])[0], a @ b, rtol=1e-12)
