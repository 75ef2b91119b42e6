"""The compile service under stress: every case many times, each run a fresh process on an
empty kernel cache, a hang caught by a timeout.

Cases (each run is one user script; the harness plays the user's terminal and the
operating system):

- ``sweep``: a jitted function called on every length from 2 to 5199 (one length-generic
  kernel: one job);
- ``threads``: 8 threads make 10,000 calls of 50 distinct jitted functions (at most 50 jobs);
- ``worker SIGKILL``: the worker is killed mid-compile; the script's ``compile()`` must still
  get the kernel (a retry on a new worker);
- ``worker SIGSTOP 10 s``: the worker is stopped mid-compile for 10 s while the script
  compiles two other kernels; those must not wait for it, and its own job lands after;
- ``Ctrl-C``: SIGINT to the script while it waits in ``compile()``: a KeyboardInterrupt
  at once, the process gone within 2 s, no worker left;
- ``exit mid-compile``: the script ends while its kernel compiles: no worker left 2 s
  after, nothing printed;
- ``user SIGKILL``: the script itself is killed mid-compile (no exit handler runs): no
  worker left 2 s after;
- ``user SIGKILL worker stopped``: the worker is stopped as it starts, then the script is
  killed: the stopped worker must not outlive it (no worker left 2 s after);
- ``two processes``: two scripts on one cache directory at once need the same kernels:
  both right.

A run is ``finished`` when it ended as the case expects, with right values and no compile
worker of its process running 2 s after it ended (found by the parent id in their
environment, ``compile_service.workers_of``); ``hung`` when it hit the timeout; ``crashed``
otherwise (the first such failure's reason is printed).

    python perf/compile_service_stress.py [--runs 20] [--only sweep,threads] [--timeout 300]
"""
import argparse
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))
from compile_scenarios import EXITS, SWEEP, THREADS, TWO, WAITS, reported, script  # noqa: E402
from tf_numba.lowering.compile_service import workers_of  # noqa: E402

class Failed(Exception):
    pass


class Run:
    """One script in a fresh process, its output read line by line with a deadline."""

    def __init__(self, body, cache, deadline, *argv):
        env = dict(os.environ, TF_NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH"))
                                              if p))
        self.deadline = deadline
        self.proc = subprocess.Popen(
            [sys.executable, "-c", script(body), *argv],
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.ended = None

    def line(self):
        remaining = self.deadline - time.monotonic()
        if remaining <= 0 or not select.select([self.proc.stdout], [], [], remaining)[0]:
            raise TimeoutError
        return self.proc.stdout.readline()

    def finish(self):
        try:
            out, err = self.proc.communicate(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise TimeoutError from None
        self.ended = time.monotonic()
        return out, err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        for pid in workers_of(self.proc.pid):     # a hung run's workers, not to pile up
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.communicate()

    def no_worker_left(self, since=None):
        deadline = (since or self.ended) + 2.0
        while workers_of(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = workers_of(self.proc.pid)
        if left:
            self.kill()         # (not to pile up over the runs)
            raise Failed(f"workers {left} outlived the script by 2 s")


def _ran(run, out, err):
    if run.proc.returncode != 0:
        raise Failed(f"exit code {run.proc.returncode}: {err.strip()[-300:]}")
    return reported(out)


def case_sweep(cache, deadline):
    run = Run(SWEEP, cache, deadline)
    values = _ran(run, *run.finish())
    if values["jobs"] != "1" or float(values["worst"]) > 1e-14:
        raise Failed(f"jobs {values['jobs']}, worst error {values['worst']}")
    run.no_worker_left()
    return values["jobs"], ""


def case_threads(cache, deadline):
    run = Run(THREADS, cache, deadline)
    values = _ran(run, *run.finish())
    if values["wrong"] != "0" or int(values["jobs"]) > 50:
        raise Failed(f"{values['wrong']} wrong values, {values['jobs']} jobs")
    run.no_worker_left()
    return values["jobs"], ""


def case_worker_sigkill(cache, deadline):
    run = Run(WAITS, cache, deadline)
    (pid,) = map(int, run.line().split())
    os.kill(pid, signal.SIGKILL)
    values = _ran(run, *run.finish())
    if float(values["error"]) > 1e-14 or values["retries"] != "1":
        raise Failed(f"error {values['error']}, retries {values['retries']}")
    run.no_worker_left()
    return values["jobs"], ""


def case_worker_sigstop(cache, deadline):
    run = Run(WAITS, cache, deadline, "others")
    (pid,) = map(int, run.line().split())
    os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        run.proc.stdin.write("stopped\n")
        run.proc.stdin.flush()
        others = run.line().split()
        waited = time.monotonic() - stopped
        time.sleep(max(0.0, 10.0 - waited))
    finally:
        os.kill(pid, signal.SIGCONT)
    values = _ran(run, *run.finish())
    if float(values["error"]) > 1e-14:
        raise Failed(f"error {values['error']}")
    run.no_worker_left()
    note = "others done while stopped" if waited < 10.0 else \
        f"others took {float(others[1]):.1f} s"
    return values["jobs"], note


def case_ctrl_c(cache, deadline):
    run = Run(WAITS, cache, deadline)
    (pid,) = map(int, run.line().split())
    os.kill(pid, signal.SIGSTOP)          # so the compile is still on when the interrupt comes
    time.sleep(0.2)
    os.kill(run.proc.pid, signal.SIGINT)
    sent = time.monotonic()
    out, err = run.finish()
    if "KeyboardInterrupt" not in err or "jobs" in out:
        raise Failed(f"no KeyboardInterrupt: {err.strip()[-300:]}")
    if run.ended - sent > 2.0:
        raise Failed(f"exited {run.ended - sent:.2f} s after the interrupt")
    run.no_worker_left(since=sent)
    return "1", ""


def case_exit(cache, deadline):
    run = Run(EXITS, cache, deadline)
    out, err = run.finish()
    values = _ran(run, out, err)
    if err.strip():
        raise Failed(f"printed at exit: {err.strip()[-300:]}")
    run.no_worker_left()
    return values["jobs"], ""


def case_user_sigkill(cache, deadline):
    run = Run(WAITS, cache, deadline)
    run.line()
    os.kill(run.proc.pid, signal.SIGKILL)
    run.finish()
    run.no_worker_left()
    return "1", ""


def case_stopped_worker_user_sigkill(cache, deadline):
    run = Run(WAITS, cache, deadline)
    (pid,) = map(int, run.line().split())
    os.kill(pid, signal.SIGSTOP)
    os.kill(run.proc.pid, signal.SIGKILL)
    run.finish()
    run.no_worker_left()
    return "1", ""


def case_two_processes(cache, deadline):
    runs = [Run(TWO, cache, deadline) for _ in range(2)]
    jobs = []
    try:
        for run in runs:
            jobs.append(_ran(run, *run.finish())["jobs"])
            run.no_worker_left()
    finally:
        for run in runs:
            if run.proc.poll() is None:
                run.kill()
    return "+".join(jobs), ""


CASES = {
    "sweep": case_sweep,
    "threads": case_threads,
    "worker SIGKILL": case_worker_sigkill,
    "worker SIGSTOP 10 s": case_worker_sigstop,
    "Ctrl-C": case_ctrl_c,
    "exit mid-compile": case_exit,
    "user SIGKILL": case_user_sigkill,
    "user SIGKILL worker stopped": case_stopped_worker_user_sigkill,
    "two processes": case_two_processes,
}


def _load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--only", default="", help="comma-separated case names")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run")
    args = parser.parse_args()
    chosen = [c for c in CASES if not args.only or c in args.only.split(",")]
    print(f"== compile_service_stress: {args.runs} runs per case, fresh processes, empty "
          f"cache each, timeout {args.timeout:g} s; load average {_load()}", flush=True)
    rows = []
    for name in chosen:
        counts = {"finished": 0, "hung": 0, "crashed": 0}
        jobs, notes, longest, first_failure = set(), set(), 0.0, ""
        for _ in range(args.runs):
            cache = tempfile.mkdtemp(prefix="tf_numba_stress_")
            started = time.monotonic()
            try:
                job_count, note = CASES[name](cache, started + args.timeout)
                counts["finished"] += 1
                jobs.add(job_count)
                if note:
                    notes.add(note)
            except TimeoutError:
                counts["hung"] += 1
                first_failure = first_failure or "hung"
            except (Failed, ValueError, OSError) as err:
                counts["crashed"] += 1
                first_failure = first_failure or f"{type(err).__name__}: {err}"
            longest = max(longest, time.monotonic() - started)
            shutil.rmtree(cache, ignore_errors=True)
        rows.append((name, counts, sorted(jobs), longest, sorted(notes)))
        print(f"   {name}: {counts}, jobs {sorted(jobs)}, longest {longest:.1f} s"
              + (f"; first failure: {first_failure}" if first_failure else ""), flush=True)
    print(f"\n   load average {_load()}")
    print("| case | runs finished | hung | crashed | jobs submitted | longest wall | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, counts, jobs, longest, notes in rows:
        print(f"| {name} | {counts['finished']}/{args.runs} | {counts['hung']} | "
              f"{counts['crashed']} | {', '.join(jobs) or '-'} | {longest:.1f} s | "
              f"{'; '.join(notes)} |")


if __name__ == "__main__":
    main()
