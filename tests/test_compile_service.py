"""The compile service: kernels compile in worker processes while the interpreter answers;
exits, killed workers and unusable cache directories change no result."""
import glob
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from compile_scenarios import SWEEP, THREADS, WAITS, reported, script
from tf_numba.lowering.compile_service import CompileService, workers_of

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env(cache_dir, **extra):
    return dict(os.environ, TF_NUMBA_CACHE_DIR=str(cache_dir), **extra,
                PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))


def _run_script(source, cache_dir, timeout=120, **env):
    """Run ``source`` in a fresh process: its CompletedProcess, with its ``pid`` and the
    ``ended`` time (time.monotonic) at which it had exited."""
    run = subprocess.Popen([sys.executable, "-c", textwrap.dedent(source)],
                           env=_env(cache_dir, **env), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        out, err = run.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        run.kill()
        out, err = run.communicate()
        raise AssertionError(f"the script hung for {timeout} s\n{out}\n{err}") from None
    done = subprocess.CompletedProcess(run.args, run.returncode, out, err)
    done.pid, done.ended = run.pid, time.monotonic()
    return done


def assert_no_worker_outlives(done, seconds=2.0):
    """No compile worker of the finished script ``done`` runs ``seconds`` after its exit."""
    deadline = done.ended + seconds
    while workers_of(done.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not workers_of(done.pid), (
        f"compile workers {workers_of(done.pid)} outlived their process by {seconds} s")


def _numba_entries(cache_dir):
    return glob.glob(os.path.join(str(cache_dir), "*", "__pycache__", "*.nbi"))


def _wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


_EXITS_MID_COMPILE = """
        import sys, threading
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        f = tf.jit(lambda x: tnp.sum(tnp.sin(x) * 1.75 + tnp.cos(x)))
        x = np.linspace(0.0, 1.0, 50)
        print(float(f(x)), tf.cache_info()["compiles"])   # interpreted: nothing compiled yet
        # with no kernel to load yet, numba's SciPy imports have not started
        for _ in range(5):
            f(x)
        print("tf_numba-imports" in [t.name for t in threading.enumerate()] or
              "scipy.linalg.cython_blas" in sys.modules)
    """


def test_a_script_that_exits_mid_compile_leaves_no_worker_and_prints_nothing(tmp_path):
    script = _EXITS_MID_COMPILE + """
        from tf_numba.lowering.compile_service import SERVICE
        import time
        while not SERVICE.info()["compiling"]:      # a worker has the job
            time.sleep(0.01)
    """
    done = _run_script(script, tmp_path)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert_no_worker_outlives(done)


def test_with_compile_after_exit_the_worker_finishes_its_job_into_the_cache(tmp_path):
    script = _EXITS_MID_COMPILE + """
        from tf_numba.lowering.compile_service import SERVICE
        import time
        while not SERVICE.info()["compiling"]:
            time.sleep(0.01)
    """
    first = _run_script(script, tmp_path, TF_NUMBA_COMPILE_AFTER_EXIT="1")
    assert first.returncode == 0 and first.stderr == "", first.stderr
    value, compiles, importing = first.stdout.split()
    x = np.linspace(0.0, 1.0, 50)
    assert float(value) == pytest.approx(np.sum(np.sin(x) * 1.75 + np.cos(x)), rel=1e-12)
    assert compiles == "0" and importing == "False"
    # the worker finishes the job it was sent after the script has gone
    assert _wait_for(lambda: _numba_entries(tmp_path), 90), "no kernel reached the cache"
    # a first call is answered by the interpreter; a later one loads the kernel from disk
    # (once numba's imports, made in a thread meanwhile, are done)
    second = _run_script(textwrap.dedent(_EXITS_MID_COMPILE) + textwrap.dedent("""
        import time
        deadline = time.monotonic() + 60
        while tf.cache_info()["disk_hits"] < 1 and time.monotonic() < deadline:
            f(x)
            time.sleep(0.01)
        print(tf.cache_info()["disk_hits"])
    """), tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split()[0] == value
    assert int(second.stdout.split()[-1]) >= 1           # loaded, not compiled again


def test_workers_do_not_outlive_the_user_process_for_long(tmp_path):
    script = """
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering.compile_service import SERVICE
        f = tf.jit(lambda x: tnp.tanh(x) * 2.5 - x)
        f(np.ones(8))
        while not SERVICE.worker_pids():         # (it starts in a thread of its own)
            pass
        print(*SERVICE.worker_pids())
    """
    done = _run_script(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert [int(p) for p in done.stdout.split()]
    assert_no_worker_outlives(done)


def _request_for(fn, *args):
    """A compile request for the one kernel of ``jit(fn)`` on ``args``, and that kernel."""
    spec = tf.jit(fn, tiered=True).lower(*args)
    seg = spec.plan.segments[0]
    return seg.kernel.request(seg.signature(list(args))), seg


def test_a_worker_killed_mid_compile_costs_a_retry_not_a_result():
    service = CompileService(max_workers=1)
    x = np.linspace(-2.0, 2.0, 33)
    request, seg = _request_for(lambda x: tnp.exp(tnp.sin(x) * 0.625) + 0.3125, x)
    job = service.submit(request)
    time.sleep(0.3)                             # starting up or compiling: either way
    for pid in service.worker_pids():
        os.kill(pid, signal.SIGKILL)
    assert job.done.wait(120)
    assert job.error is None, job.error
    assert service.info()["retries"] >= 1
    seg.kernel.install(job.payload, request["signature"])
    seg.first = False
    np.testing.assert_allclose(seg([x])[0], np.exp(np.sin(x) * 0.625) + 0.3125, rtol=1e-14)


def test_a_job_that_kills_every_worker_is_reported_not_hung(monkeypatch):
    service = CompileService(max_workers=1)
    x = np.ones(4)
    request, _ = _request_for(lambda x: x * 0.4375, x)
    request = dict(request, function="kernel_that_is_not_there")
    job = service.submit(request)
    assert job.done.wait(120)
    assert job.payload is None and "kernel_that_is_not_there" in job.error


def test_a_tiered_plan_answers_by_the_interpreter_then_runs_compiled():
    f = tf.jit(lambda x: tnp.cumsum(tnp.tanh(x)) * 0.8125, tiered=True)
    x = np.linspace(0.0, 3.0, 21)
    want = np.cumsum(np.tanh(x)) * 0.8125
    np.testing.assert_allclose(f(x), want, rtol=1e-14)
    plan = f.lower(x).plan
    plan.compile()
    assert plan.ready
    np.testing.assert_allclose(f(x), want, rtol=1e-14)


def test_calls_while_kernels_are_in_flight_are_interpreted_at_the_engines_blas_width(
        monkeypatch):
    from tf_numba.lowering import blas_threads, compile_service
    monkeypatch.setattr(compile_service.SERVICE, "submit",      # a compile never answered
                        lambda request, block=False: compile_service.Job(request))
    widths = []
    set_width = blas_threads.set_width
    monkeypatch.setattr(blas_threads, "set_width",
                        lambda blas, threads: widths.append(threads) or set_width(blas, threads))
    f = tf.jit(lambda w, x: tnp.tanh(w @ x) * 0.71875, tiered=True)
    w = np.linspace(-1.0, 1.0, 128 * 96).reshape(128, 96)      # a product on BLAS
    x = np.linspace(0.0, 2.0, 96 * 64).reshape(96, 64)
    want = np.tanh(w @ x) * 0.71875
    np.testing.assert_allclose(f(w, x), want, rtol=1e-14)      # the first call sends for it
    plan = f.lower(w, x).plan
    seconds = plan.tiers.interpreted_seconds
    del widths[:]
    for _ in range(5):
        np.testing.assert_allclose(f(w, x), want, rtol=1e-14)
    assert not plan.ready and plan.tiers.interpreted_seconds > seconds
    assert widths == [1] * 5                # NumPy's BLAS as wide as the default engine


def test_an_unusable_cache_directory_warns_once_and_keeps_kernels_in_memory(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    script = """
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        f = tf.jit(lambda x: tnp.sum(x * 1.5), tiered=False)
        g = tf.jit(lambda x: tnp.max(x) - 0.5)
        x = np.arange(6.0)
        print(float(f(x)), float(g(x)), tf.cache_info()["directory"])
        g.lower(x).plan.compile()
        print(float(g(x)))
    """
    done = _run_script(script, blocker / "cache")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0].split() == ["22.5", "4.5", "None"]
    assert lines[1] == "4.5"
    warnings = [line for line in done.stderr.splitlines() if "unusable" in line]
    assert len(warnings) == 1 and "a_file" in warnings[0], done.stderr


def test_jit_returns_0d_arrays_and_takes_them_back_on_the_fast_path():
    @tf.jit
    def step(params, x):
        loss = tnp.sum((x * params["w"] + params["b"]) ** 2)
        return loss, {"w": params["w"] - 0.01 * loss, "b": params["b"] * 0.5}

    params = {"w": np.float64(1.5), "b": np.array(0.25)}
    x = np.linspace(0.0, 1.0, 5)
    step.lower(params, x).compile(params, x)
    step(params, x)                               # makes the fast path's entry
    (key, fast), = step.jitted._fast.items()
    fast_calls = []
    step.jitted._fast[key] = lambda leaves: (fast_calls.append(1), fast(leaves))[1]
    for _ in range(4):
        loss, params = step(params, x)
        assert type(loss) is np.ndarray and loss.shape == ()
        assert type(params["w"]) is np.ndarray and params["w"].shape == ()
    assert len(fast_calls) == 4


def test_a_batch_size_sweep_compiles_one_kernel():
    def loss(w, x, y):
        return tnp.mean((tnp.tanh(x @ w) - y) ** 2) + tnp.var(x, ddof=1)

    f = tf.jit(tf.value_and_grad(loss), tiered=False)
    rng = np.random.default_rng(1)
    w = rng.standard_normal(7)
    before = tf.cache_info()["misses"]
    for n in (9, 33, 100, 250, 17, 64, 500, 1000):
        x, y = rng.standard_normal((n, 7)), rng.standard_normal(n)
        value, grad = f(w, x, y)
        want_value, want_grad = tf.value_and_grad(loss)(w, x, y)
        np.testing.assert_allclose(value, want_value, rtol=1e-12)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-12)
    assert tf.cache_info()["misses"] - before == 1        # one kernel source for them all


def test_threads_share_a_compiling_plan_and_all_get_right_answers():
    import threading
    f = tf.jit(lambda x: tnp.sum(tnp.exp(x) * 0.9375, axis=0))
    x = np.linspace(0.0, 1.0, 24).reshape(6, 4)
    want = np.sum(np.exp(x) * 0.9375, axis=0)
    errors = []

    def calls():
        try:
            for _ in range(200):
                np.testing.assert_allclose(f(x), want, rtol=1e-14)
        except Exception as err:          # reported below, with the thread's failure
            errors.append(err)
    threads = [threading.Thread(target=calls) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    f.lower(x).plan.compile()
    np.testing.assert_allclose(f(x), want, rtol=1e-14)


def test_two_processes_that_need_the_same_kernel_both_succeed(tmp_path):
    script = textwrap.dedent("""
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        f = tf.jit(lambda x: tnp.max(tnp.sin(x) * 2.125))
        x = np.linspace(0.0, 3.0, 40)
        for _ in range(5):
            y = f(x)
        f.lower(x).plan.compile()
        print(float(f(x)), float(y))
    """)
    env = dict(os.environ, TF_NUMBA_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
    runs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    want = float(np.max(np.sin(np.linspace(0.0, 3.0, 40)) * 2.125))
    for run in runs:
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        assert [float(v) for v in out.split()] == [pytest.approx(want, rel=1e-15)] * 2


def test_an_idle_worker_leaves_and_a_new_one_takes_the_next_job(monkeypatch):
    monkeypatch.setenv("TF_NUMBA_WORKER_IDLE_SECONDS", "1")
    service = CompileService(max_workers=1)
    x = np.linspace(0.0, 1.0, 9)
    first, seg = _request_for(lambda x: x * 0.171875 + 1.0, x)
    job = service.submit(first)
    assert job.done.wait(120) and job.error is None, job.error
    (pid,) = service.worker_pids()
    assert _wait_for(lambda: not service.worker_pids(), 30)     # it left, idle
    second, _ = _request_for(lambda x: x * 0.203125 - 1.0, x)
    job = service.submit(second)
    assert job.done.wait(120) and job.error is None, job.error
    assert service.worker_pids() != [pid] and service.info()["retries"] == 0


def _one_kernel_plan(cache_dir, scale):
    """(plan, its kernel cache, x, NumPy's value): a tiered plan of one kernel,
    ``sum(exp(cos(x) * scale) ** 2)`` (each test its own scale, so its own kernel), on a
    kernel cache in ``cache_dir``."""
    import tf_numba.lowering.kernel_cache as kc
    from tf_numba.lowering.plan import Plan
    x = np.linspace(0.0, 1.0, 11)
    program = tf.make_program(lambda x: tnp.sum(tnp.exp(tnp.cos(x) * scale) ** 2))(x)
    cache = kc.KernelCache(directory=str(cache_dir))
    return (Plan(program, kernel_cache=cache, tiered=True), cache, x,
            np.sum(np.exp(np.cos(x) * scale) ** 2))


def _compile_to_disk(seg, x):
    """Compile ``seg``'s kernel for ``x`` into the disk cache, as another process would."""
    job = CompileService(max_workers=1).submit(seg.kernel.request(seg.signature([x])))
    assert job.done.wait(120) and job.error is None, job.error


def test_a_second_process_waits_for_a_compile_in_flight_instead_of_repeating_it(tmp_path):
    """The rerun case: the first script's worker is still compiling when the second
    script needs the kernel. The second worker finds the lock, waits for the first one's
    result to land in numba's disk cache, and reports it cached, not compiled."""
    service_a, service_b = CompileService(max_workers=1), CompileService(max_workers=1)
    plan, _, x, _ = _one_kernel_plan(tmp_path, 0.234375)
    seg = plan.segments[0]
    request = seg.kernel.request(seg.signature([x]))
    first = service_a.submit(request)
    time.sleep(0.5)                       # the first worker has the lock (or the result)
    second = service_b.submit(request)
    assert first.done.wait(120) and second.done.wait(120)
    assert first.error is None and second.error is None, (first.error, second.error)
    assert sorted([first.cached, second.cached]) == [False, True]     # one compile, one load
    assert not glob.glob(os.path.join(str(tmp_path), "*", "*.lock"))


def test_a_rerun_waits_for_the_compile_another_process_has_in_flight(tmp_path):
    """A plan whose kernel another process's worker is compiling (its lock file is there)
    sends no job of its own: it answers by the interpreter until the lock goes, then loads
    the kernel that compile left in numba's disk cache."""
    import tf_numba.lowering.kernel_cache as kc
    from tf_numba.lowering import tiers as tiers_module
    plan, cache, x, want = _one_kernel_plan(tmp_path, 0.359375)
    seg = plan.segments[0]
    signature = seg.signature([x])
    jobs_before = tiers_module.SERVICE.stats["jobs"]
    # "another process" is compiling it: it holds the lock
    with kc.holding_lock(kc.compile_lock(seg.kernel.path, signature)):
        for _ in range(3):
            assert plan.run([x])[0] == pytest.approx(want, rel=1e-13)
        assert tiers_module.SERVICE.stats["jobs"] == jobs_before and not plan.ready
    # that process's worker finishes: the kernel lands in the disk cache, the lock goes
    _compile_to_disk(seg, x)
    deadline = time.monotonic() + 60
    while not plan.ready and time.monotonic() < deadline:
        assert plan.run([x])[0] == pytest.approx(want, rel=1e-13)
    assert plan.ready and tiers_module.SERVICE.stats["jobs"] == jobs_before
    assert cache.stats["disk_hits"] == 1 and cache.stats["compiles"] == 0


def test_a_plan_loads_its_kernel_once_the_interpreted_calls_have_paid_for_it(
        tmp_path, monkeypatch):
    """A kernel on disk is loaded once the plan's interpreted calls have taken
    ``LOAD_PAYBACK`` times what loading costs, or ``LOAD_WITHIN_SECONDS`` after the first
    call whatever they took; until then the interpreter answers."""
    import tf_numba.lowering.kernel_cache as kc
    from tf_numba.lowering import tiers as tiers_module
    scale = 0.421875
    sender, _, x, want = _one_kernel_plan(tmp_path, scale)
    _compile_to_disk(sender.segments[0], x)

    monkeypatch.setattr(kc.NUMBA_IMPORTS, "load_seconds", lambda kernels: 0.05)
    monkeypatch.setattr(tiers_module.Tiers, "LOAD_WITHIN_SECONDS", 1e9)
    plan, cache, _, _ = _one_kernel_plan(tmp_path, scale)
    while not plan.ready:
        paid = plan.tiers.interpreted_seconds >= plan.tiers.LOAD_PAYBACK * 0.05
        assert plan.run([x])[0] == pytest.approx(want, rel=1e-13)
        # the plan stays interpreted until the calls have paid for the load
        assert not plan.ready or paid
    assert cache.stats["disk_hits"] == 1 and cache.stats["compiles"] == 0

    # a plan called now and then (in a process that has not loaded the kernel yet: a new
    # cache on the same directory) is loaded LOAD_WITHIN_SECONDS after its first call
    monkeypatch.setattr(kc.NUMBA_IMPORTS, "load_seconds", lambda kernels: 1e9)
    monkeypatch.setattr(tiers_module.Tiers, "LOAD_WITHIN_SECONDS", 0.3)
    plan, cache, _, _ = _one_kernel_plan(tmp_path, scale)
    first = time.perf_counter()
    while not plan.ready and time.perf_counter() - first < 60:
        assert plan.run([x])[0] == pytest.approx(want, rel=1e-13)
        time.sleep(0.02)
    assert plan.ready and time.perf_counter() - first >= 0.3
    assert cache.stats["disk_hits"] == 1 and cache.stats["compiles"] == 0


def test_numba_sets_up_while_the_kernels_compile_not_after_they_arrive(tmp_path):
    """A fresh process: once its interpreted calls have paid for loading, numba's imports
    and registries are set up in a thread while the worker still compiles, so an arrived
    kernel is installed at once. The set-up starts before the kernel is in, ends cleanly
    with the script, and the compiled values are the interpreter's and NumPy's."""
    done = _run_script("""
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering import kernel_cache
        from tf_numba.lowering.tiers import any_done
        imports = kernel_cache.NUMBA_IMPORTS
        imports.load_seconds = lambda kernels: 0.001      # worth loading at once
        seen = []
        start = type(imports).start
        def start_noting(self):
            seen.append(any_done(plan.tiers.jobs) if plan.tiers.jobs else None)
            start(self)
        type(imports).start = start_noting
        f = tf.jit(lambda x: tnp.sum(tnp.sin(x) * x))
        x = np.linspace(0.0, 1.0, 1000)
        f(x)
        plan = f.lower(x).plan
        while not plan.ready:
            assert abs(f(x) - np.sum(np.sin(x) * x)) < 1e-12
        assert abs(f(x) - np.sum(np.sin(x) * x)) < 1e-12
        print("set-up started before the kernel arrived:", seen[:1] == [False])
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "set-up started before the kernel arrived: True" in done.stdout, done.stdout
    assert done.stderr.strip() == "", done.stderr
    assert_no_worker_outlives(done)


def test_calls_waiting_for_kernels_keep_the_fast_path_once_numba_has_run_here(tmp_path):
    """In a process where numba has already compiled (an untiered jit), numba's set-up has
    nothing left to do: a tiered plan's calls while its kernel compiles take the fast
    waiting path, not ``Tiers.run`` with its lock on every call."""
    done = _run_script("""
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering import tiers
        x = np.linspace(0.0, 1.0, 1000)
        tf.jit(lambda x: tnp.sum(tnp.cos(x)), tiered=False)(x)
        through_run = []
        run = tiers.Tiers.run
        def counted(self, args):
            through_run.append(1)
            return run(self, args)
        tiers.Tiers.run = counted
        f = tf.jit(lambda x: tnp.sum(tnp.sin(x) * x))
        f(x)
        plan, waiting = f.lower(x).plan, 0
        while not plan.ready:
            assert abs(f(x) - np.sum(np.sin(x) * x)) < 1e-12
            waiting += 1
        print("waiting calls", waiting, "through Tiers.run", len(through_run))
    """, tmp_path)
    assert done.returncode == 0, done.stderr
    waiting, through_run = (int(w) for w in done.stdout.split()[2::3])
    # the first call, the one that installs the kernel, and at most a few on the way
    assert through_run <= 5 < waiting, done.stdout


def test_kernels_vectorize_at_512_bits_where_the_cpu_has_avx512_and_workers_agree(tmp_path):
    """Where the CPU has AVX-512, ``import tf_numba`` sets numba's CPU features to
    vectorize at 512 bits, before numba's CPU target exists, and hands the same settings
    to its compile workers (numba's disk cache keys machine code by them). Not with
    ``TF_NUMBA_WIDE_VECTORS=0``, and not once numba has compiled something."""
    import llvmlite.binding as llvm
    script = """
        import os, sys
        if sys.argv[1:] == ["numba first"]:
            import numba
            numba.njit(lambda x: x + 1)(1)
        import numba, tf_numba
        from tf_numba.lowering.kernel_cache import numba_target_environ
        print(numba.config.CPU_FEATURES is not None and
              numba.config.CPU_FEATURES.endswith(",-prefer-256-bit"),
              numba_target_environ().get("NUMBA_CPU_FEATURES") == numba.config.CPU_FEATURES)
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU_")}

    def run(*argv, **extra):
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *argv],
                              env=dict(env, PYTHONPATH=REPO, **extra), capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()
    wide = "+avx512f" in llvm.get_host_cpu_features().flatten().split(",")
    assert run() == [str(wide), "True"]
    assert run(TF_NUMBA_WIDE_VECTORS="0") == ["False", "True"]
    assert run("numba first") == ["False", "True"]


def test_a_forked_child_compiles_with_workers_of_its_own(tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    script = """
        import os, numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering.compile_service import SERVICE
        f = tf.jit(lambda x: tnp.sum(x * 0.296875))
        f(np.ones(3)); f.lower(np.ones(3)).plan.compile()      # the parent's worker
        parent_workers = SERVICE.worker_pids()
        pid = os.fork()
        if pid == 0:
            g = tf.jit(lambda x: tnp.prod(x + 0.328125))
            x = np.arange(1.0, 4.0)
            g(x); g.lower(x).plan.compile()
            ok = g.lower(x).plan.ready and float(g(x)) == float(np.prod(x + 0.328125))
            ok = ok and not set(SERVICE.worker_pids()) & set(parent_workers)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status))
    """
    done = _run_script(script, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0"


def test_a_worker_starts_for_a_kernel_to_compile_and_leaves_with_the_process(tmp_path):
    script = """
        import time
        import numpy as np, tf_numba as tf
        from tf_numba.lowering.compile_service import SERVICE
        step = tf.jit(lambda x: x * 1.5 + 0.25)
        print(len(SERVICE.worker_pids()))            # wrapping a function starts none
        step(np.ones(3))
        deadline = time.monotonic() + 30             # a call that sends for a kernel
        while not SERVICE.worker_pids() and time.monotonic() < deadline:
            time.sleep(0.01)                         # starts one (in a thread of its own)
        print(*SERVICE.worker_pids())
        step.lower(np.ones(3)).plan.compile()
    """
    run = _run_script(script, tmp_path)
    assert run.returncode == 0, run.stderr
    none, pid = map(int, run.stdout.split())
    assert none == 0
    assert_no_worker_outlives(run)
    # a rerun finds its kernel in the disk cache: no worker, whose start would cost it a
    # core for ~0.5-1 s
    assert _numba_entries(tmp_path), "no kernel reached the cache"
    rerun = _run_script(script, tmp_path)
    assert rerun.returncode == 0 and rerun.stdout.split() == ["0"], rerun.stdout + rerun.stderr
    # nor in a process whose kernels compile in its own thread
    env_script = "import os; os.environ['TF_NUMBA_TIERED'] = '0'\n" + textwrap.dedent(script)
    run = _run_script(env_script, tmp_path / "sync")
    assert run.returncode == 0 and run.stdout.split() == ["0"], run.stdout + run.stderr


@pytest.mark.parametrize("relaid", [True, False])
def test_a_kernel_handed_another_layout_than_the_interpreter_gave_is_sent_for_not_compiled_here(
        tmp_path, relaid):
    # The interpreter's iota along a row is a broadcast view (Fortran-ordered); in a
    # compiled run the kernel that computes it writes a C-ordered array, which the kernel
    # after the host step (cholesky) takes. Interpreted kernel outputs are typed as the
    # kernel writes them (relaid); without that, the first compiled call must find the
    # kernel typed otherwise and send for it. In a fresh cache directory, so that neither
    # signature is on disk yet.
    script = """
        import threading, time
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from numba.core import event
        from tf_numba.lowering import tiers
        from tf_numba.lowering.kernel_cache import KERNEL_MODULE_PREFIX
        if not RELAID:
            tiers.as_written = lambda value, inputs: value

        def loss(x):
            n = x.shape[0]
            k = x[:, None] * x[None, :] + n * tnp.eye(n)
            return tnp.sum(tnp.log(tnp.diagonal(tnp.linalg.cholesky(k))))

        def loss_np(x):
            k = np.outer(x, x) + x.shape[0] * np.eye(x.shape[0])
            return np.sum(np.log(np.diagonal(np.linalg.cholesky(k))))

        f = tf.jit(tf.grad(loss))
        x = np.linspace(0.5, 1.5, 12)
        want = [(loss_np(x + 1e-6 * e) - loss_np(x - 1e-6 * e)) / 2e-6 for e in np.eye(12)]
        here = []

        class Compiles(event.Listener):
            def on_start(self, ev):
                fn = ev.data["dispatcher"].py_func
                if (threading.current_thread() is threading.main_thread()
                        and fn.__module__.startswith(KERNEL_MODULE_PREFIX)):
                    here.append(fn.__module__)

            def on_end(self, ev):
                pass
        plan = f.lower(x).plan
        with event.install_listener("numba:compile", Compiles()):
            deadline = time.monotonic() + 100
            while not plan.ready and time.monotonic() < deadline:
                np.testing.assert_allclose(f(x), want, rtol=1e-6)
                time.sleep(0.05)
            np.testing.assert_allclose(f(x), want, rtol=1e-6)
        print(plan.ready, len(plan.segments) > 1, here)
    """
    done = _run_script(f"RELAID = {relaid}\n" + textwrap.dedent(script), tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "[]"], done.stdout + done.stderr


def test_a_kernel_shared_by_segments_compiles_once_though_the_interpreter_views_differ(
        tmp_path):
    """Two segments share one region kernel (``c @ w`` and ``tanh(z) @ w``); ``c`` is a
    reshape of a strided input, which NumPy gives as a strided view and the kernel before
    it as a C array. Typed from every interpreted call, the shared kernel was compiled
    twice, once for a layout no compiled call hands it."""
    source = """
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering.compile_service import SERVICE
        from tf_numba.lowering.segments import CompiledSegment
        B, T, H, Dh = 4, 5, 2, 3
        def f(x, b, z, w):
            c = x.reshape(B, T, H * Dh)
            d = tnp.einsum("btd,bte->de", b, c)
            return tnp.sum(d) + tnp.sum(c @ w) + tnp.sum(tnp.tanh(z) @ w)
        rng = np.random.default_rng(0)
        x = rng.standard_normal((B, T, H, 2 * Dh))[..., ::2]
        b, z = rng.standard_normal((2, B, T, H * Dh))
        w = rng.standard_normal((H * Dh, H * Dh))
        c = x.reshape(B, T, H * Dh)
        want = np.sum(np.einsum("btd,bte->de", b, c)) + np.sum(c @ w) + np.sum(np.tanh(z) @ w)
        g = tf.jit(f, regions=True)
        g(x, b, z, w)
        plan = g.lower(x, b, z, w).plan.compile((x, b, z, w))
        kernels = {id(s.kernel): s.kernel for s in plan.segments if type(s) is CompiledSegment}
        shared = len(kernels) < sum(type(s) is CompiledSegment for s in plan.segments)
        print(plan.ready, shared, SERVICE.info()["jobs"], len(kernels),
              max(len(k.dispatcher.overloads) for k in kernels.values()),
              abs(float(g(x, b, z, w)) - want) / abs(want))
    """
    done = _run_script(source, tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    ready, shared, jobs, kernels, overloads, error = done.stdout.split()
    assert ready == shared == "True", done.stdout
    assert jobs == kernels and overloads == "1", done.stdout
    assert float(error) < 1e-13


def test_compiles_count_distinct_kernels_not_the_segments_sharing_them(tmp_path):
    """A 4-layer and a 12-layer MLP of region kernels: the layers share their kernels, so
    the deeper one compiles nothing more, and ``cache_info()['compiles']`` counts each
    kernel compiled once (it counted every segment that installed it: 159 for 32 layers
    of 7 kernels)."""
    source = """
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering.segments import CompiledSegment
        rng = np.random.default_rng(0)
        def loss(params, x, y):
            h = x
            for w, b in params:
                h = tnp.tanh(h @ w + b)
            return tnp.mean((h - y) ** 2)
        x, y = rng.standard_normal((2, 8, 16))
        for layers in (4, 12):
            params = [(rng.standard_normal((16, 16)) / 4, rng.standard_normal(16) / 4)
                      for _ in range(layers)]
            lowered = tf.jit(tf.value_and_grad(loss), regions=True).lower(params, x, y)
            lowered.compile(params, x, y)
            segments = [s for s in lowered.plan.segments if type(s) is CompiledSegment]
            info = tf.cache_info()
            print(len(segments), len({id(s.kernel) for s in segments}), info["compiles"],
                  info["disk_hits"])
    """
    done = _run_script(source, tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    (segments4, kernels4, compiles4, hits4), (segments12, kernels12, compiles12, hits12) = (
        map(int, line.split()) for line in done.stdout.splitlines())
    assert segments12 > 2 * segments4 > 2 * kernels4 and kernels12 == kernels4, done.stdout
    assert compiles4 == kernels4 and hits4 == 0, done.stdout
    assert (compiles12, hits12) == (compiles4, hits4), done.stdout


# -- a service that cannot hang: each case under a hard timeout, so a hang fails ----------

def test_a_length_sweep_sends_one_job_and_finishes(tmp_path):
    """Every length runs on one length-generic kernel: one job, joined by every plan (a
    job per length once filled the worker's pipe while the user's thread wrote under the
    lock its reader needed: a deadlock)."""
    done = _run_script(script(SWEEP), tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    values = reported(done.stdout)
    assert values["jobs"] == "1" and float(values["worst"]) < 1e-14
    assert_no_worker_outlives(done)


def test_threads_submitting_many_kernels_get_one_job_each_and_right_answers(tmp_path):
    """10,000 calls of 50 distinct kernels from 8 threads: at most 50 jobs (fewer where a
    kernel was still interpreted when the script ended), a queue of 8 (most kernels are
    refused at first and sent again later), every value right."""
    done = _run_script(script("SERVICE.max_queued = 8\n", THREADS), tmp_path, timeout=240)
    assert done.returncode == 0, done.stderr
    values = reported(done.stdout)
    wrong, jobs, refused = (int(values[k]) for k in ("wrong", "jobs", "refused"))
    assert wrong == 0 and 8 <= jobs <= 50 and refused > 0, done.stdout
    assert_no_worker_outlives(done)


def _a_request(scale):
    x = np.linspace(-2.0, 2.0, 33)
    request, seg = _request_for(lambda x: tnp.exp(tnp.sin(x) * scale) + 0.3125, x)
    return request, seg, x


def _busy_pid(service, deadline=60.0):
    """The pid of the one worker of ``service`` once it has taken a job."""
    assert _wait_for(lambda: service.worker_pids() and service.info()["compiling"], deadline)
    (pid,) = service.worker_pids()
    return pid


def test_a_stopped_worker_delays_its_own_job_only():
    """A worker stopped (SIGSTOP) mid-job does not count as busy: another worker compiles
    the jobs that come meanwhile, and the stopped one's job lands once it is resumed."""
    service = CompileService(max_workers=1)
    first, seg, x = _a_request(0.53125)
    job = service.submit(first)
    pid = _busy_pid(service)
    os.kill(pid, signal.SIGSTOP)
    try:
        later = [service.submit(_a_request(scale)[0]) for scale in (0.5625, 0.59375)]
        assert all(j.done.wait(120) for j in later), service.info()
        assert all(j.error is None for j in later) and not job.done.is_set()
        assert pid not in {j.worker_pid for j in later}
    finally:
        os.kill(pid, signal.SIGCONT)
    assert job.done.wait(120) and job.error is None, job.error
    assert job.worker_pid == pid and service.info()["retries"] == 0
    seg.kernel.install(job.payload, first["signature"])
    seg.first = False
    np.testing.assert_allclose(seg([x])[0], np.exp(np.sin(x) * 0.53125) + 0.3125, rtol=1e-14)
    service.close()


def test_a_worker_stuck_past_the_timeout_is_replaced_and_the_job_retried():
    service = CompileService(max_workers=1, timeout=4.0)
    request, _, _ = _a_request(0.625)
    job = service.submit(request)
    pid = _busy_pid(service)
    os.kill(pid, signal.SIGSTOP)          # stuck for good: only the timeout ends it
    assert job.done.wait(120) and job.error is None, job.error
    info = service.info()
    assert info["timeouts"] == 1 and info["retries"] == 1 and job.worker_pid != pid
    assert _wait_for(lambda: pid not in workers_of(os.getpid()), 5)     # killed
    service.close()


def test_a_job_that_kills_two_workers_fails_once_and_its_plans_stay_interpreted(tmp_path):
    """A kernel whose compile kills the worker each time: two attempts, then one warning
    naming the kernel, and every plan waiting for it (one per length) keeps answering."""
    script = """
        import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
        from tf_numba.lowering import kernel_cache
        from tf_numba.lowering.compile_service import SERVICE
        fatal = "import os, signal\\nos.kill(os.getpid(), signal.SIGKILL)\\n"
        request = kernel_cache.Kernel.request
        kernel_cache.Kernel.request = lambda self, signature: dict(
            request(self, signature), path=None, text=fatal)
        f = tf.jit(lambda x: tnp.sum(tnp.cos(x) * 0.65625))
        for n in (40, 73, 40, 73):
            x = np.linspace(0.0, 1.0, n)
            assert abs(float(f(x)) - np.sum(np.cos(x) * 0.65625)) < 1e-14
        for n in (40, 73):
            f.lower(np.ones(n)).plan.compile()
        for n in range(30, 40):
            x = np.linspace(0.0, 1.0, n)
            assert abs(float(f(x)) - np.sum(np.cos(x) * 0.65625)) < 1e-14
        info = SERVICE.info()
        print(info["jobs"], info["retries"], info["worker_deaths"])
    """
    done = _run_script(script, tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "2"], done.stdout
    warnings = [line for line in done.stderr.splitlines() if "failed" in line]
    assert len(warnings) == 1, done.stderr
    assert "tf_numba_kernel_" in warnings[0] and "killed by signal 9" in warnings[0]
    assert_no_worker_outlives(done)


def _read_line(run, seconds=120):
    """The script's next line of output, failing (not hanging) after ``seconds``."""
    import select
    ready = select.select([run.stdout], [], [], seconds)[0]
    assert ready, f"no output from the script within {seconds} s"
    return run.stdout.readline()


def _start_script(source, cache_dir, **env):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(source)],
                            env=_env(cache_dir, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_ctrl_c_mid_compile_interrupts_at_once_and_leaves_no_worker(tmp_path):
    run = _start_script(script(WAITS), tmp_path)
    try:
        (pid,) = map(int, _read_line(run).split())
        os.kill(pid, signal.SIGSTOP)      # the compile cannot end before the interrupt
        time.sleep(0.3)
        os.kill(run.pid, signal.SIGINT)
        sent = time.monotonic()
        out, err = run.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        run.kill()
    assert "KeyboardInterrupt" in err and "jobs" not in out, err     # (no report)
    assert took < 2.0, took
    deadline = sent + 2.0
    while workers_of(run.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not workers_of(run.pid)


@pytest.mark.parametrize("stopped", [False, True], ids=["running", "stopped"])
def test_a_process_killed_mid_compile_takes_its_workers_with_it(tmp_path, stopped):
    """SIGKILL runs no exit handler: the workers die with the thread that started them,
    even a worker stopped (SIGSTOP) before it has run its own code: the death signal is
    armed before the worker starts, and SIGKILL reaches a stopped process (armed by the
    worker itself, ~1 s into its imports, a stopped worker outlived its parent for good)."""
    run = _start_script(script(WAITS), tmp_path)
    try:
        (pid,) = map(int, _read_line(run).split())
        if stopped:
            os.kill(pid, signal.SIGSTOP)      # (still importing)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(30)
        assert _wait_for(lambda: not workers_of(run.pid), 2.0), workers_of(run.pid)
    finally:
        run.kill()
        run.communicate()
        for orphan in workers_of(run.pid):    # (not to pile up when it fails)
            os.kill(orphan, signal.SIGKILL)


def test_a_killed_worker_leaves_no_lock_behind(tmp_path):
    """A worker killed while it holds a kernel's compile lock releases it (the operating
    system's lock), so the next process compiles instead of waiting for a dead one."""
    import tf_numba.lowering.kernel_cache as kc
    plan, _, x, want = _one_kernel_plan(tmp_path, 0.765625)
    seg = plan.segments[0]
    signature = seg.signature([x])
    service = CompileService(max_workers=1)
    job = service.submit(seg.kernel.request(signature))
    pid = _busy_pid(service)
    lock = kc.compile_lock(seg.kernel.path, signature)
    assert _wait_for(lambda: kc.lock_is_held(lock), 60)
    os.kill(pid, signal.SIGKILL)
    assert _wait_for(lambda: not kc.lock_is_held(lock), 5)
    assert not seg.kernel.compiling_elsewhere(signature)
    assert job.done.wait(120) and job.error is None, job.error
    service.close()


def test_a_kernel_loaded_again_for_its_signature_stays_on_numbas_fast_dispatch(tmp_path):
    """Region kernels share one kernel among many segments, and each loads it from the
    disk cache for the same signature: a second load adds no second overload (numba
    would find the two ambiguous and resolve every call in Python, ~45 us a call)."""
    scale = 0.609375
    sender, _, x, want = _one_kernel_plan(tmp_path, scale)
    seg = sender.segments[0]
    _compile_to_disk(seg, x)
    plan, _, _, _ = _one_kernel_plan(tmp_path, scale)
    seg = plan.segments[0]
    signature = seg.signature([x])
    assert seg.kernel.load_from_disk(signature) and seg.kernel.load_from_disk(signature)
    dispatcher = seg.kernel.dispatcher

    def resolved_in_python(*args, **kwargs):
        raise AssertionError("the call left numba's fast dispatch")
    dispatcher._compile_for_args = resolved_in_python
    assert seg.kernel.dispatcher(x) == pytest.approx(want, rel=1e-13)
