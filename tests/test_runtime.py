"""Runtime: compile once with symbolic shapes, prepare per specialization, run many times."""
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import (ConcurrentReconfiguration, EmptyTargets, EngineMismatch,
                             ForeignPrepared, NoEngineForTarget, ShapeError,
                             SpecializationMismatch, StalePrepared, UnboundPlaceholder)
from tf_numba.runtime import CpuEngine, EngineTarget, PlanCache, Runtime

CPU = CpuEngine()


def sum_of_squares():
    return tf.make_program(lambda x: tnp.sum(x * x))(tf.symbolic(("n",), name="x"))


def test_symbolic_program_is_prepared_once_for_every_length():
    rt = Runtime()
    program = sum_of_squares()
    for n in (3, 5, 1000):
        x = np.arange(float(n))
        prepared = rt.prepare(program, [x], [CPU.target()])
        assert rt.run([CPU], prepared, [x])[0] == np.sum(x * x)
    stats = rt.stats()
    assert stats["preparations"] == 1 and stats["misses"] == 1 and stats["hits"] == 2


def test_prepare_hit_does_not_lower_again(monkeypatch):
    rt = Runtime()
    program = sum_of_squares()
    rt.prepare(program, [np.ones(3)], [CPU.target()])
    import tf_numba.runtime.runtime as module
    monkeypatch.setattr(module, "Plan", lambda *a, **k: pytest.fail("lowered on a hit"))
    rt.prepare(program, [np.ones(7)], [CPU.target()])


def test_symbolic_matmul_runs_other_shapes_through_run_and_jit():
    rt = Runtime()
    program = tf.make_program(lambda a, b: a @ b)(tf.symbolic(("n", "k")),
                                                   tf.symbolic(("k", "m")))
    prepared = rt.prepare(program, [np.ones((2, 3)), np.ones((3, 4))], [CPU.target()])
    a, b = np.random.rand(5, 7), np.random.rand(7, 4)
    np.testing.assert_allclose(rt.run([CPU], prepared, [a, b])[0], a @ b, rtol=1e-13)
    matmul = tf.jit(lambda a, b: a @ b, tiered=False)
    matmul(np.ones((2, 3)), np.ones((3, 4)))
    np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-13)


def test_concrete_program_names_the_axis_that_does_not_match():
    rt = Runtime()
    program = tf.make_program(lambda a, b: a @ b)(np.ones((2, 3)), np.ones((3, 4)))
    prepared = rt.prepare(program, [], [CPU.target()])
    with pytest.raises(SpecializationMismatch) as info:
        rt.run([CPU], prepared, [np.ones((5, 3)), np.ones((3, 4))])
    message = str(info.value)
    assert "input 0 axis 0" in message and "prepared as 2" in message and "got 5" in message
    assert "prepare again" in message


def test_guard_between_symbols_is_checked_at_prepare_with_the_source_line():
    rt = Runtime()
    program = tf.make_program(lambda a, b: a + b)(tf.symbolic(("n",)), tf.symbolic(("m",)))
    assert program.guards
    prepared = rt.prepare(program, [np.ones(4), np.ones(4)], [CPU.target()])
    assert rt.run([CPU], prepared, [np.ones(4), np.ones(4)])[0].tolist() == [2.0] * 4
    with pytest.raises(ShapeError) as info:
        rt.prepare(program, [np.ones(4), np.ones(5)], [CPU.target()])
    message = str(info.value)
    assert ("n == m" in message or "m == n" in message) and "= 5" in message and "= 4" in message
    assert message.startswith("add:") and "test_runtime.py" in message


def test_inputs_defaults_full_and_partial_lists():
    rt = Runtime()
    data = np.array([1.0, 2.0])
    program = tf.make_program(lambda a, b: b - a)(data, tf.symbolic(("n",), name="b"))
    assert program.input_index("b") == 1
    with pytest.raises(UnboundPlaceholder) as info:
        rt.prepare(program, [], [CPU.target()])
    assert "'b'" in str(info.value)
    b = np.array([10.0, 20.0])
    prepared = rt.prepare(program, [b], [CPU.target()])           # partial: fills b
    np.testing.assert_array_equal(rt.run([CPU], prepared, [b])[0], b - data)
    a2 = np.array([5.0, 5.0])
    np.testing.assert_array_equal(rt.run([CPU], prepared, [a2, b])[0], b - a2)  # full


def test_same_structure_from_other_data_hits_the_cache():
    rt = Runtime()
    double = lambda a: a * 2                                        # noqa: E731
    first = tf.make_program(double)(np.ones(3))
    second = tf.make_program(double)(np.full(3, 7.0))
    rt.prepare(first, [], [CPU.target()])
    prepared = rt.prepare(second, [], [CPU.target()])
    assert rt.stats()["hits"] == 1
    np.testing.assert_array_equal(rt.run([CPU], prepared, [])[0], np.full(3, 14.0))


def test_equal_programs_from_other_lines_get_their_own_plan_and_share_its_kernels():
    """A plan names its program's lines in errors raised when it runs; kernels name none."""
    rt = Runtime(tiered=False)
    first = tf.make_program(lambda a: a * 3 + 1)(np.ones(3))
    second = tf.make_program(lambda a: a * 3 + 1)(np.ones(3))
    assert first.fingerprint() == second.fingerprint()
    a, b = (rt.prepare(p, [], [CPU.target()]) for p in (first, second))
    assert rt.stats()["hits"] == 0 and a.plan is not b.plan
    assert [s.kernel for s in a.plan.segments] == [s.kernel for s in b.plan.segments]
    np.testing.assert_array_equal(rt.run([CPU], b, [])[0], np.full(3, 4.0))


def test_running_twice_does_not_touch_the_cache():
    rt = Runtime()
    prepared = rt.prepare(sum_of_squares(), [np.ones(3)], [CPU.target()])
    before = rt.stats()
    rt.run([CPU], prepared, [np.ones(3)])
    rt.run([CPU], prepared, [np.ones(4)])
    assert rt.stats() == before


def test_reconfigure_starts_a_new_epoch():
    rt = Runtime()
    program = sum_of_squares()
    prepared = rt.prepare(program, [np.ones(3)], [CPU.target()])
    base = rt.config
    rt.reconfigure(base, fastmath=False)
    with pytest.raises(StalePrepared):
        rt.run([CPU], prepared, [np.ones(3)])
    rt.prepare(program, [np.ones(3)], [CPU.target()])
    assert rt.stats()["preparations"] == 2
    with pytest.raises(ConcurrentReconfiguration):
        rt.reconfigure(base, plan_cache_entries=4)


def test_pooled_and_serial_engines_share_plans():
    rt = Runtime()
    program = sum_of_squares()
    serial, pooled = CpuEngine(threads=1), CpuEngine(threads=4)
    p1 = rt.prepare(program, [np.ones(3)], [serial.target()])
    p2 = rt.prepare(program, [np.ones(3)], [pooled.target()])
    assert p1.entry is p2.entry
    assert rt.run([pooled], p1, [np.ones(3)])[0] == rt.run([serial], p1, [np.ones(3)])[0]


def test_engine_and_prepared_misuse_errors_say_what_to_do():
    rt, other = Runtime(), Runtime()
    program = sum_of_squares()
    with pytest.raises(EmptyTargets):
        rt.prepare(program, [np.ones(3)], [])
    prepared = rt.prepare(program, [np.ones(3)], [CPU.target()])
    with pytest.raises(EngineMismatch):
        rt.run([CPU, CPU], prepared, [np.ones(3)])

    class GpuEngine:
        def target(self):
            return EngineTarget("gpu:0", "gpu")
    with pytest.raises(NoEngineForTarget):
        rt.run([GpuEngine()], prepared, [np.ones(3)])
    with pytest.raises(ForeignPrepared):
        other.run([CPU], prepared, [np.ones(3)])


def test_eight_threads_preparing_one_key_prepare_once():
    rt = Runtime()
    program = sum_of_squares()
    barrier = threading.Barrier(8)
    results = []

    def worker():
        barrier.wait()
        results.append(rt.prepare(program, [np.ones(3)], [CPU.target()]))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(results) == 8 and all(r.entry is results[0].entry for r in results)
    stats = rt.stats()
    assert stats["preparations"] == 1 and stats["hits"] + stats["waits"] >= 7


def test_waiter_that_registers_before_the_publish_and_sleeps_after_does_not_hang():
    cache = PlanCache()
    preparing, registered = threading.Event(), threading.Event()
    out = []

    def prepare():
        preparing.set()
        registered.wait(10)      # publish only after the waiter registered ...
        return "plan"

    def on_wait(key):            # ... and let the waiter sleep only after the publish
        registered.set()
        preparer.join(10)

    cache.on_wait = on_wait
    preparer = threading.Thread(target=lambda: out.append(cache.get_or_prepare("k", prepare)))
    preparer.start()
    preparing.wait(10)
    waiter = threading.Thread(target=lambda: out.append(cache.get_or_prepare("k", prepare)))
    waiter.start()
    waiter.join(10)
    assert not waiter.is_alive() and out == ["plan", "plan"]
    assert cache.stats()["waits"] == 1 and cache.stats()["preparations"] == 1


def test_deterministic_failures_are_negative_entries():
    cache = PlanCache()
    calls = []

    def prepare():
        calls.append(1)
        raise ShapeError("bad shapes", op="test")

    for _ in range(3):
        with pytest.raises(ShapeError):
            cache.get_or_prepare("k", prepare)
    assert len(calls) == 1 and cache.stats()["negative_hits"] == 2


def test_plan_cache_is_bounded_by_entries_and_bytes():
    cache = PlanCache(max_entries=2, max_bytes=1000)

    class Plan:
        def __init__(self, nbytes):
            self.nbytes = nbytes
    for k in range(3):
        cache.get_or_prepare(k, lambda: Plan(10))
    assert cache.stats()["entries"] == 2 and cache.stats()["evictions"] == 1
    cache.get_or_prepare("big", lambda: Plan(995))
    assert cache.stats()["bytes"] <= 1000
    cache.clear()
    assert cache.stats()["entries"] == 0


def test_outputs_that_are_inputs_are_returned_without_copy():
    rt = Runtime()
    program = tf.make_program(lambda a: (a, a * 2))(tf.symbolic(("n",)))
    x = np.ones(3)
    prepared = rt.prepare(program, [x], [CPU.target()])
    out = rt.run([CPU], prepared, [x])
    assert out[0] is x


def test_warm_up_compiles_and_discards():
    rt = Runtime(tiered=True)
    prepared = rt.prepare(sum_of_squares(), [np.ones(3)], [CPU.target()])
    assert rt.warm_up([CPU], prepared, [np.ones(3)]) is None
    assert prepared.plan.ready


def test_grad_of_a_symbolic_program_runs_for_any_length():
    rt = Runtime()
    program = tf.make_program(tf.grad(lambda x: tnp.sum(tnp.sin(x) * x)))(
        tf.symbolic(("n",)))
    prepared = rt.prepare(program, [np.ones(3)], [CPU.target()])
    for n in (3, 11):
        x = np.linspace(0, 1, n)
        np.testing.assert_allclose(rt.run([CPU], prepared, [x])[0],
                                   np.cos(x) * x + np.sin(x), rtol=1e-14)


SYMBOLIC_COMPOSITES = {
    "diff": (lambda x: x[1:] - x[:-1], lambda x: np.diff(x)),
    "ends": (lambda x: x[0] + x[-1], lambda x: x[0] + x[-1]),
    "reversed_tail": (lambda x: x[2:][::-1], lambda x: x[2:][::-1]),
    "concat": (lambda x: tnp.concatenate([x, x * 2]), lambda x: np.concatenate([x, x * 2])),
    "arange": (lambda x: x * tnp.arange(x.shape[0]), lambda x: x * np.arange(x.shape[0])),
    "mean_var": (lambda x: tnp.var(x) + tnp.mean(x), lambda x: np.var(x) + np.mean(x)),
    "grad_of_diff": (tf.grad(lambda x: tnp.sum(tnp.diff(x) ** 2)),
                     lambda x: np.concatenate([[0], 2 * np.diff(x)])
                     - np.concatenate([2 * np.diff(x), [0]])),
}


@pytest.mark.parametrize("name", sorted(SYMBOLIC_COMPOSITES))
def test_composites_and_gradients_trace_on_symbolic_lengths(name):
    fn, reference = SYMBOLIC_COMPOSITES[name]
    rt = Runtime()
    program = tf.make_program(fn)(tf.symbolic(("n",)))
    for n in (4, 9):
        x = np.random.default_rng(n).normal(size=n)
        prepared = rt.prepare(program, [x], [CPU.target()])
        np.testing.assert_allclose(rt.run([CPU], prepared, [x])[0], reference(x), rtol=1e-12)
    assert rt.stats()["preparations"] == 1


def test_slice_bounds_on_a_symbolic_axis_become_guards():
    rt = Runtime()
    program = tf.make_program(lambda x: x[3:])(tf.symbolic(("n",)))
    assert any(g.relation == ">=" for g in program.guards)
    rt.prepare(program, [np.ones(5)], [CPU.target()])
    with pytest.raises(ShapeError) as info:
        rt.prepare(program, [np.ones(2)], [CPU.target()])
    assert ">=" in str(info.value)


@pytest.mark.skipif(not tf._heap._is_glibc(), reason="glibc's malloc only")
@pytest.mark.parametrize("trim, n, faults", [("64", 256, "none"), ("64", 1024, "none"),
                                             ("0", 256, "many")])
def test_the_heap_keeps_freed_memory_for_the_next_arrays(trim, n, faults):
    """With tf_numba imported, temporaries of 512 KiB or 8 MiB made and freed again and
    again reuse the heap's pages (``tf_numba._heap``): no page faults, where malloc left
    alone maps fresh pages for the smaller ones each time (~220 per chain of four)."""
    script = textwrap.dedent(f"""
        import resource
        import numpy as np
        import tf_numba
        y = np.random.rand({n}, {n})
        def chain():
            return ((y + 1.0) * 2.0 - y) / (y + 3.0)
        chain()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(100):
            chain()
        print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    """)
    env = dict(os.environ, TF_NUMBA_HEAP_TRIM_MB=trim)
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    page_faults = int(out.stdout.split()[-1])
    assert page_faults < 100 if faults == "none" else page_faults > 2000
