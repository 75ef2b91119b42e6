"""The timing harness the issue-4 benchmarks share: interleaved rounds, medians, ratios.

A benchmark script builds ``Case`` objects (one per dtype / size / depth), adds a zero-argument
callable per tool, and hands them to ``Bench.run``. Every round times each tool once, in a
rotated order (the tools share whatever noise the machine has that round); a tool's time is
the median over rounds of its per-call time in that round, and a ratio of two tools is the
median over rounds of their ratio within the round (paired: the shared host here runs in
spells ~1.4x apart, lasting seconds, and a spell then slows both sides of a ratio instead
of whichever tool's median it happened to fall on). JAX's CPU client reads
``jax_cpu_enable_async_dispatch`` only when it is created, so the synchronous configuration
is measured in a child process of the same script (``--jax-sync-child``) that times
tf_numba, the reference and JAX side by side again; its ratios are same-process ratios.

    bench = Bench("small_grad", __doc__, reference="numba")   # parses --quick, --rounds, ...
    case = bench.case("float32", dtype="float32")
    case.add("tf_numba", lambda: g(W, x))
    if case.wants("autograd"):                      # False in the JAX-sync child
        case.add("autograd", lambda: ag(W, x))
    bench.run([case], title, targets)
"""
import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

TF = "tf_numba"
TF_WIDE = "tf_numba (all cores)"   # jit(engine=CpuEngine(threads=os.cpu_count()))
JAX_ASYNC = "jax (async)"
JAX_SYNC = "jax (sync)"
JAX = "jax"                     # what a script calls JAX; renamed per dispatch configuration
INFO = "info"                   # a targets() line that informs and is not a target
SETTLE_SECONDS = 0.02           # pause between tools so other thread pools stop spinning
# OpenBLAS's workers spin 2^THREAD_TIMEOUT TSC cycles after a call before they sleep: 2^28
# by default, ~0.1 s here, five settles. 2^24 (~7 ms) lets a pause put them to sleep.
OPENBLAS_THREAD_TIMEOUT = "24"
TIME_EACH_CALL_SECONDS = 20e-6  # calls at least this long are timed one by one


def _short_openblas_spin():
    """Make both OpenBLAS pools (NumPy's; SciPy's, which numba and JAX's LAPACK use) sleep
    within ``SETTLE_SECONDS`` of their last call. The library reads the setting when it
    loads, so a script that has imported NumPy already is started again with it. A value
    the caller set is kept."""
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = OPENBLAS_THREAD_TIMEOUT
    if "numpy" in sys.modules or "scipy" in sys.modules:
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable] + sys.argv)


_short_openblas_spin()


def load_average():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


class ForeignLoad:
    """CPU time other processes used while a block ran, in cores (from /proc/stat).

    The load average lags by a minute and counts our own threads; this says how much of
    the machine something else took during exactly this measurement.
    """

    def __enter__(self):
        self.start = (_proc_stat_busy(), _own_cpu(), time.perf_counter())
        return self

    def __exit__(self, *exc):
        busy, own, t = _proc_stat_busy(), _own_cpu(), time.perf_counter()
        if busy is None or self.start[0] is None:
            self.cores = None
        else:
            self.cores = max(0.0, ((busy - self.start[0]) - (own - self.start[1]))
                             / (t - self.start[2]))


def _proc_stat_busy():
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu():
    """CPU time of this process and its children: those waited for (``os.times``) and
    those alive, such as a benchmark's Dask workers, whose time is the benchmark's own."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system + _live_children_cpu()


def _live_children_cpu():
    try:
        import psutil
    except ImportError:
        return 0.0
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            c = child.cpu_times()
        except psutil.Error:            # exited (then counted in os.times once waited)
            continue
        total += c.user + c.system
    return total


def machine_info():
    """One dict of what the numbers depend on: CPU, cores, versions, BLAS settings, load."""
    import numpy as np
    info = dict(python=platform.python_version(), numpy=np.__version__,
                cpus=os.cpu_count(), platform=platform.platform())
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next(line.split(":", 1)[1].strip() for line in f
                               if line.startswith("model name"))
    except (OSError, StopIteration):
        info["cpu"] = platform.processor()
    from importlib import metadata
    for mod in ("numba", "scipy", "jax", "jaxlib", "autograd", "matplotlib"):
        try:
            info[mod] = metadata.version(mod)
        except metadata.PackageNotFoundError:
            info[mod] = None
    for mod in ("numpy", "scipy"):
        try:
            deps = __import__(mod).show_config(mode="dicts")["Build Dependencies"]["blas"]
            info[f"{mod}_blas"] = (deps.get("openblas configuration") or
                                   f"{deps.get('name')} {deps.get('version')}")
        except Exception:  # noqa: BLE001 - informational only
            info[f"{mod}_blas"] = None
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS",
                "OPENBLAS_NUM_THREADS"):
        info[var] = os.environ.get(var)
    info["loadavg"] = os.getloadavg()
    return info


def have(module):
    """Is ``module`` importable (jax, autograd)?  Imports it as a side effect."""
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def setup_jax(sync):
    """Import jax with float64 enabled and the requested dispatch mode; None if missing."""
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_cpu_enable_async_dispatch", not sync)
    return jax


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 0:         # a difference of two timings can be negative
        return "-" + fmt_time(-seconds)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def fmt_ratio(r):
    return "-" if r is None else f"{r:.2f}x"


class Case:
    """One configuration (dtype, size, ...) and the tools timed on it."""

    def __init__(self, bench, label, params):
        self.bench, self.label, self.params = bench, label, params
        self.tools = {}
        self.notes = []
        self.rounds = None        # overrides the bench's rounds (slow, large cases)
        self.results = {}         # tool -> dict(median, q1, q3, rounds, number)

    def wants(self, tool):
        """Should the script build ``tool`` here (the JAX-sync child builds only a few)."""
        if tool == JAX and self.bench.jax is None:
            return False
        if tool == "autograd" and not have("autograd"):
            return False
        return (not self.bench.sync_child) or tool in (TF, TF_WIDE, JAX, self.bench.reference)

    def add(self, tool, fn):
        if self.wants(tool):
            if tool == JAX:
                tool = JAX_SYNC if self.bench.sync_child else JAX_ASYNC
            self.tools[tool] = fn

    def note(self, text):
        self.notes.append(text)

    def time(self, tool):
        r = self.results.get(tool)
        return None if r is None else r["median"]

    def ratio(self, tool, to):
        """Time of ``tool`` / time of ``to``: paired by round (see the module doc)."""
        a, b = self.results.get(tool), self.results.get(to)
        return None if a is None or b is None else paired_ratio(a, b)


def paired_ratio(a, b):
    """The median over rounds of ``a``'s time / ``b``'s time in the same round, for two
    tools of one ``measure`` call; the ratio of their medians otherwise."""
    sa, sb = a.get("samples"), b.get("samples")
    if sa and sb and len(sa) == len(sb):
        return statistics.median(x / y for x, y in zip(sa, sb))
    return a["median"] / b["median"]


def wide_engine():
    """The CpuEngine a user who wants every core passes to ``jit``."""
    from tf_numba.runtime import CpuEngine
    return CpuEngine(threads=os.cpu_count())


def numpy_blas_threads():
    """How many threads NumPy's BLAS runs here (report.py's one-thread runs set
    ``OPENBLAS_NUM_THREADS=1``; otherwise OpenBLAS takes every core)."""
    return int(os.environ.get("OPENBLAS_NUM_THREADS") or os.cpu_count())


def tf_judged(case):
    """The tf_numba row to judge: jit's default engine (one thread, its BLAS too) when
    NumPy's BLAS runs one thread; where NumPy's BLAS and XLA take every core, the faster
    of that row and the all-cores one (tf_numba at its best, as JAX is judged at its
    best: two threads win an exp over 128x1000 and lose a 128x128 LAPACK call)."""
    if numpy_blas_threads() == 1:
        return TF
    rows = [t for t in (TF, TF_WIDE) if case.time(t) is not None]
    return min(rows, key=case.time) if rows else TF


def cores_used(fn, seconds=0.3):
    """How many cores ``fn`` keeps busy: this process's CPU time over wall time while it
    runs back to back (a multi-threaded library shows more than 1)."""
    fn()
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        fn()
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def _calibrate(fn, batch_seconds):
    """(calls per timed batch, estimated seconds per call): a batch lasts ~``batch_seconds``.

    The estimate is the fastest of a few trials, so a stall while calibrating (another job
    taking a core) does not shrink every later batch to one call.
    """
    once = math.inf
    for _ in range(3):          # the first call after another tool's BLAS may stall
        t0 = time.perf_counter()
        fn()
        once = min(once, time.perf_counter() - t0)
    if once >= batch_seconds:
        return 1, once
    number, per_call = 1, once
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        per_call = min(per_call, elapsed / number)
        if elapsed >= batch_seconds / 4 or number >= 1 << 20:
            break
        number *= 4
    for _ in range(2):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        per_call = min(per_call, (time.perf_counter() - t0) / number)
    return max(1, int(batch_seconds / max(per_call, 1e-9))), per_call


def measure(tools, rounds, batch_seconds, warmup=3, settle_seconds=SETTLE_SECONDS):
    """{tool: stats}: per-call medians over ``rounds`` interleaved rounds.

    A round times a batch of calls of each tool in turn (rotating who goes first). A round's
    sample is the batch's mean per-call time, or, for calls of at least
    ``TIME_EACH_CALL_SECONDS``, the median of the batch's individually timed calls: a
    single stall (2-thread BLAS while another job holds a core can stall a call by ~30 ms)
    then does not move the round. The reported time is the median over rounds.

    Between two tools' batches the harness sleeps ``settle_seconds`` (outside any timing):
    NumPy, numba (SciPy's OpenBLAS) and XLA each keep their own thread pool whose workers
    spin for a while after a call, and on two cores a pool still spinning makes the next
    tool's first BLAS call up to ~100x slower. A user running one tool never sees that.
    OpenBLAS's spin is cut to less than the pause (``_short_openblas_spin``): with its
    default (~0.1 s), a 128x128 QR on NumPy's two-thread pool took 1.7 ms when timed after
    SciPy's, SciPy's 12 ms after NumPy's, against 1.2 ms alone.
    """
    names = list(tools)
    for name in names:
        t0 = time.perf_counter()
        for _ in range(warmup):
            tools[name]()
            if time.perf_counter() - t0 > 0.3:
                break
    numbers, each = {}, {}
    for name in names:
        numbers[name], per_call = _calibrate(tools[name], batch_seconds)
        each[name] = per_call >= TIME_EACH_CALL_SECONDS
        time.sleep(settle_seconds)
    samples = {name: [] for name in names}
    gc.collect()
    clock = time.perf_counter
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            fn, number = tools[name], numbers[name]
            if each[name]:
                calls = []
                for _ in range(number):
                    t0 = clock()
                    fn()
                    calls.append(clock() - t0)
                samples[name].append(statistics.median(calls))
            else:
                t0 = clock()
                for _ in range(number):
                    fn()
                samples[name].append((clock() - t0) / number)
            if settle_seconds:
                time.sleep(settle_seconds)
    out = {}
    for name in names:
        s = sorted(samples[name])
        q = statistics.quantiles(s, n=4) if len(s) > 1 else [s[0], s[0], s[0]]
        out[name] = dict(median=statistics.median(s), q1=q[0], q3=q[2], min=s[0],
                         rounds=len(s), number=numbers[name], each_call_timed=each[name],
                         samples=samples[name])
    return out


class Bench:
    """Command line, cases, measurement, JAX-sync child, table printing and JSON output."""

    def __init__(self, name, doc, reference, extra_args=None, default_rounds=21,
                 quick_rounds=9, batch_seconds=0.02):
        self.name = name
        self.reference = reference
        parser = argparse.ArgumentParser(description=doc.splitlines()[0])
        parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds")
        parser.add_argument("--rounds", type=int, default=None)
        parser.add_argument("--json", default=None, help="also write the results here")
        parser.add_argument("--no-jax-sync", action="store_true",
                            help="skip the child process that times JAX with sync dispatch")
        parser.add_argument("--jax-sync-child", action="store_true", help=argparse.SUPPRESS)
        for args, kwargs in (extra_args or ()):
            parser.add_argument(*args, **kwargs)
        self.args = parser.parse_args()
        self.sync_child = self.args.jax_sync_child
        self.rounds = self.args.rounds or (quick_rounds if self.args.quick else default_rounds)
        self.batch_seconds = batch_seconds / (2 if self.args.quick else 1)
        self.jax = setup_jax(sync=self.sync_child)

    @property
    def quick(self):
        return self.args.quick

    def case(self, label, **params):
        return Case(self, label, params)

    def run(self, cases, title, targets):
        """Measure every case, add the JAX-sync child's numbers, print, write JSON.

        ``targets(case) -> list of (text, met)`` states each target on a case: met is True,
        False, None (a tool is missing) or ``INFO`` (a line to print, not a target).
        """
        reference = self.reference
        if not self.sync_child:
            print(f"== {self.name}: {title}")
            print(f"   {load_average()} | {self.rounds} rounds (unless a case says otherwise), "
                  "tools interleaved, medians; ratios are time / time, the median of "
                  f"each round's (above 1: slower than tf_numba / {reference}); "
                  f"{SETTLE_SECONDS * 1e3:g} ms pause between tools, OpenBLAS workers "
                  f"sleep after 2^{os.environ.get('OPENBLAS_THREAD_TIMEOUT')} cycles")
        for case in cases:
            case.load_before = os.getloadavg()
            with ForeignLoad() as foreign:
                case.results = measure(case.tools, case.rounds or self.rounds,
                                       self.batch_seconds)
            case.foreign_cores = foreign.cores
            case.load_after = os.getloadavg()
        if self.sync_child:
            self._write_json(cases, [])
            return cases
        self._merge_sync_child(cases)
        summary = []
        for case in cases:
            self._print_case(case, reference)
            for text, met in targets(case):
                if met == INFO:
                    print(f"   info: {text}")
                    continue
                status = {True: "MET", False: "NOT MET", None: "n/a"}[met]
                print(f"   target: {text} -> {status}")
                summary.append(dict(case=case.label, target=text, met=met))
        print(f"   {load_average()}")
        self._write_json(cases, summary)
        return cases

    def _merge_sync_child(self, cases):
        if self.jax is None or self.args.no_jax_sync:
            return
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "sync.json")
            argv = [sys.executable, sys.argv[0], *sys.argv[1:], "--jax-sync-child", "--json",
                    out]
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode != 0:
                print("   (JAX sync-dispatch child failed:\n" + proc.stderr[-2000:] + ")")
                return
            with open(out) as f:
                child = {c["label"]: c for c in json.load(f)["cases"]}
        for case in cases:
            c = child.get(case.label)
            if c is None or JAX_SYNC not in c["results"]:
                continue
            res = c["results"]
            tf_child = res[TF]["median"]
            sync = dict(res[JAX_SYNC])
            # same-process ratios from the child, carried over onto this process's scale:
            # against each tf_numba row the child timed, so JAX / tf_numba (all cores)
            # never mixes two processes, which may run in different spells of the host
            sync["vs_same_process"] = {t: paired_ratio(sync, res[t]) for t in (TF, TF_WIDE)
                                       if t in res}
            if self.reference in res:
                sync["vs_ref_same_process"] = paired_ratio(sync, res[self.reference])
            sync["child_tf_median"] = tf_child
            case.results[JAX_SYNC] = sync

    def ratio_to_tf(self, case, tool):
        r = case.results.get(tool)
        if r is None:
            return None
        if "vs_same_process" in r:
            return r["vs_same_process"][TF]
        return case.ratio(tool, TF)

    def ratio_to_ref(self, case, tool):
        r = case.results.get(tool)
        if r is None or self.reference is None:
            return None
        if "vs_ref_same_process" in r:
            return r["vs_ref_same_process"]
        return case.ratio(tool, self.reference)

    def _print_case(self, case, reference):
        rounds = f", {case.rounds} rounds" if case.rounds else ""
        foreign = ("" if case.foreign_cores is None else
                   f", other processes used {case.foreign_cores:.2f} of {os.cpu_count()} cores")
        print(f"\n-- {case.label}   (load {case.load_before[0]:.2f} -> {case.load_after[0]:.2f}"
              f"{foreign}{rounds})")
        print(f"   {'tool':<22}{'median':>11}{'IQR':>21}{'calls':>7}"
              f"{'/ tf_numba':>12}{'/ ' + reference:>14}")
        for tool, r in case.results.items():
            iqr = f"{fmt_time(r['q1'])}..{fmt_time(r['q3'])}"
            mark = " *" if tool == JAX_SYNC else ""
            print(f"   {tool + mark:<22}{fmt_time(r['median']):>11}{iqr:>21}{r['number']:>7}"
                  f"{fmt_ratio(self.ratio_to_tf(case, tool)):>12}"
                  f"{fmt_ratio(self.ratio_to_ref(case, tool)):>14}")
        if JAX_SYNC in case.results:
            print(f"   * measured in a child process with jax_cpu_enable_async_dispatch=False; "
                  f"its ratios, and its JAX / tf_numba (all cores) in the targets, are "
                  f"against tf_numba / {reference} timed in that child "
                  f"(tf_numba there: {fmt_time(case.results[JAX_SYNC]['child_tf_median'])})")
        for text in case.notes:
            print(f"   note: {text}")

    def jax_best(self, case):
        """The faster JAX configuration's ratio to tf_numba (JAX time / tf_numba time)."""
        ratios = [self.ratio_to_tf(case, t) for t in (JAX_SYNC, JAX_ASYNC)]
        ratios = [r for r in ratios if r is not None]
        return min(ratios) if ratios else None

    def jax_best_vs(self, case, tool):
        """The faster JAX configuration's ratio to ``tool`` (a tf_numba row), each taken in
        the process that timed both; a child that did not time ``tool`` gives its JAX /
        tf_numba rescaled by this process's tf_numba / ``tool``."""
        ratios = []
        sync = case.results.get(JAX_SYNC)
        if sync is not None:
            same, scale = sync["vs_same_process"], case.ratio(TF, tool)
            ratios.append(same[tool] if tool in same else
                          None if scale is None else same[TF] * scale)
        ratios.append(case.ratio(JAX_ASYNC, tool))
        ratios = [r for r in ratios if r is not None]
        return min(ratios) if ratios else None

    def _write_json(self, cases, summary):
        if not self.args.json:
            return
        data = dict(name=self.name, quick=self.quick, rounds=self.rounds,
                    machine=machine_info(), reference=self.reference, summary=summary,
                    cases=[dict(label=c.label, params=c.params, notes=c.notes,
                                foreign_cores=c.foreign_cores,
                                results=c.results,
                                ratios_to_tf={t: self.ratio_to_tf(c, t) for t in c.results},
                                ratios_to_ref={t: self.ratio_to_ref(c, t) for t in c.results})
                           for c in cases])
        with open(self.args.json, "w") as f:
            json.dump(data, f, indent=1, default=str)


def tf_compiled(jitted, *args):
    """Call a tf_numba jitted function and wait until it runs compiled code.

    jit is tiered: the first calls of a new specialization are answered by the NumPy
    interpreter while numba compiles in a background thread. Timing must start after that
    (and correctness is checked on the compiled result). Returns (first call seconds, seconds
    until compiled, kernel-cache counters that changed).
    """
    from tf_numba import cache_info
    before = cache_info()
    t0 = time.perf_counter()
    jitted(*args)
    first = time.perf_counter() - t0
    jitted.lower(*args).compile(*args)
    ready = time.perf_counter() - t0
    after = cache_info()
    changed = {k: after[k] - before[k] for k in ("compiles", "disk_hits", "disk_writes")
               if isinstance(after.get(k), int) and after[k] != before[k]}
    return first, ready, changed


def add_tf(case, fn, args, check=None):
    """Time ``tf.jit(fn)`` in ``case`` on jit's default engine (``TF``) and on every core
    (``TF_WIDE``), each running compiled code first; ``check(tool, result)`` sees each
    one's result before it is timed. Returns the default-engine function."""
    import tf_numba as tf
    one, wide = tf.jit(fn), tf.jit(fn, engine=wide_engine())
    case.note(first_call_note(*tf_compiled(one, *args)))
    tf_compiled(wide, *args)
    for tool, jitted in ((TF, one), (TF_WIDE, wide)):
        if check is not None:
            check(tool, jitted(*args))
        case.add(tool, lambda jitted=jitted: jitted(*args))
    return one


def first_call_note(first, ready, changed):
    what = ", ".join(f"{k} +{v}" for k, v in changed.items()) or "in-memory kernel cache hit"
    return (f"tf_numba first call {fmt_time(first)} (interpreted while compiling), "
            f"compiled after {fmt_time(ready)} ({what})")


def assert_close(name, got, want, rtol, atol=0.0):
    """Check one tool's result against NumPy's before it is timed; say which tool failed."""
    import numpy as np
    try:
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                                   np.asarray(want, dtype=np.float64), rtol=rtol, atol=atol)
    except AssertionError as exc:
        raise AssertionError(f"{name} disagrees with NumPy:\n{exc}") from None
