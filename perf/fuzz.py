"""An open-ended fuzzing campaign: random programs through every oracle, a fresh seed.

Worker processes draw programs (``tests/fuzz/random_programs.py``) and check them
(``tests/fuzz/oracles.py``): most through the oracles that need no compiled kernel, a
share of the time through those that compile (numba takes ~0.1-1 s a kernel). A failure
is shrunk by hypothesis to a short program and logged as a script that reproduces it.

Each program runs under a timeout: a worker's alarm interrupts Python, and this process
kills a worker that does not report back in time (a hang in compiled code) or that died
(a crash), and logs the program it was running. Workers start again with new seeds until
the campaign ends, on a kernel cache directory of its own.

    python perf/fuzz.py --minutes 30 [--workers 2] [--seed S] [--timeout 60]
                        [--compiled-share 0.5] [--log PATH] [--record]

The log (``--log``, default ``$TMPDIR/tf_numba_fuzz/<seed>.log``) lists every finding;
``--record`` appends the campaign's line to ``perf/FUZZ.md``. Beside the log, ``<log>.jsonl``
keeps each finding's program, oracles and seed; ``--replay <log>.jsonl`` checks them again
(after a fix: which pass now). ``--mutations`` times the CI samples finding each rule that
``tests/fuzz/mutations.py`` breaks.
"""
import argparse
import collections
import datetime
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ_DIR = os.path.join(REPO, "tests", "fuzz")

# a worker starts afresh after this long (its compiled kernels stay in its memory)
WORKER_SECONDS = 300.0
# a finding is shrunk for at most this long; the smallest failing program so far is kept
SHRINK_SECONDS = 120.0
BATCH = {"interpreted": 50, "references": 20, "compiled": 5, "long": 1}
# JAX runs a program op by op, ~0.1 s: it checks this share of the programs
REFERENCE_SHARE = 0.25


# ------------------------------------------------------------------------------ worker

_EVENTS = None      # the worker's event stream: its stdout as started (see worker_main)


def _emit(event, **fields):
    _EVENTS.write(json.dumps(dict(event=event, **fields)) + "\n")
    _EVENTS.flush()


def worker_main(args):
    """A worker's events go to the stdout it was started with; what anything else prints
    (hypothesis's reports, numba's warnings) goes to its stderr."""
    global _EVENTS
    _EVENTS = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.path[:0] = [REPO, FUZZ_DIR]
    worker(args.seed, args.until, args.timeout, args.compiled_share)


def worker(seed, until, timeout, compiled_share):
    """Draw and check programs until ``until`` (time.time()), reporting each as JSON lines
    on the event stream: ``start`` (its script), ``end`` (checks made), ``finding``."""
    import numpy as np
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st
    import oracles
    from random_programs import CUT_PLAN, KERNEL_PLAN, LONG_PLAN, programs

    # mode -> (programs, oracles, share of the time)
    modes = {
        "interpreted": (programs(), oracles.INTERPRETED,
                        (1 - REFERENCE_SHARE) * (1 - compiled_share)),
        "references": (programs(), oracles.INTERPRETED + oracles.REFERENCES,
                       REFERENCE_SHARE * (1 - compiled_share)),
        "compiled": (st.one_of(
            programs(max_lines=4, sizes=("small", "tiny", "large")),
            programs(plan=KERNEL_PLAN, sizes=("large", "small", "medium")),
            programs(plan=CUT_PLAN, sizes=("small", "tiny", "medium"))),
            oracles.COMPILED + ("tiered", "mixed"), 0.85 * compiled_share),
        "long": (programs(plan=LONG_PLAN, sizes=("medium", "small")),
                 ("compiled", "mixed"), 0.15 * compiled_share),
    }
    if importlib.util.find_spec("jax") is None:
        del modes["references"]
    spent = collections.Counter()
    rng = np.random.default_rng(seed)

    def batch(mode):
        state = {"finding": None, "since": None}

        @seeded(int(rng.integers(2**63)))
        @settings(max_examples=BATCH[mode], database=None, deadline=None,
                  suppress_health_check=list(HealthCheck), print_blob=False,
                  phases=(Phase.generate, Phase.shrink))
        @given(modes[mode][0])
        def one(program):
            first = state["finding"]
            if first is not None and time.monotonic() - state["since"] > SHRINK_SECONDS:
                return              # shrunk long enough: hypothesis keeps what it has
            check_seed = int(rng.integers(2**31))
            _emit("start", mode=mode, script=program.script(), shrinking=first is not None,
                  program=program.to_json(), oracles=modes[mode][1], seed=check_seed)
            try:
                n = _checked(program, modes[mode][1], timeout, check_seed)
            except oracles.ProgramTimeout as err:
                if first is None:
                    _emit("finding", kind="hang", message=str(err), mode=mode,
                          script=program.script(), shrunk=False, program=program.to_json(),
                          oracles=modes[mode][1], seed=check_seed)
                else:
                    _emit("end", checks=0, mode=mode, shrinking=True)
                return
            except oracles.Finding as err:
                _emit("end", checks=0, mode=mode, shrinking=first is not None)
                if first is None:
                    state["finding"], state["since"] = err.kind, time.monotonic()
                    state["unshrunk"] = err
                if err.kind != state["finding"]:
                    return          # shrink toward the same kind of failure
                raise
            _emit("end", checks=n, mode=mode, shrinking=first is not None)

        try:
            one()
        except BaseException as err:     # noqa: BLE001 - a finding, shrunk, or a group
            found = _first_finding(err)
            shrunk = found is not None
            if not shrunk:          # (hypothesis could not replay it: the first as found)
                found = state.get("unshrunk")
            if found is None:
                _emit("finding", kind="fuzzer", mode=mode, shrunk=False,
                      message=f"{type(err).__name__}: {err}", script="")
            else:
                _emit("finding", kind=found.kind, message=found.message, mode=mode,
                      script=found.reproduction, shrunk=shrunk,
                      ops=sorted(found.program.ops) if found.program else [],
                      program=found.program.to_json() if found.program else None,
                      oracles=modes[mode][1], seed=getattr(found, "seed", 0))

    while time.time() < until:
        # the mode furthest below its share of the time so far
        total = sum(spent.values()) or 1.0
        mode = min(modes, key=lambda m: spent[m] / total - modes[m][2])
        started = time.monotonic()
        batch(mode)
        spent[mode] += time.monotonic() - started


def _checked(program, names, timeout, seed):
    """``oracles.check``, an exception of the oracles' own made a ``crash`` finding."""
    import oracles
    try:
        return oracles.check(program, names, timeout=timeout, seed=seed)
    except oracles.Finding as err:
        err.seed = seed         # (the oracles' draws: a replay makes the same checks)
        raise
    except oracles.ProgramTimeout:
        raise
    except Exception as err:    # noqa: BLE001
        found = oracles.Finding("crash", f"the oracles raised {type(err).__name__}: {err}",
                                program)
        found.seed = seed
        raise found from err


def _first_finding(err):
    import oracles
    if isinstance(err, oracles.Finding):
        return err
    for inner in getattr(err, "exceptions", ()):
        found = _first_finding(inner)
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------------------ campaign

class Worker:
    """A worker process, its events read line by line; ``current`` is the program it is
    checking, since ``started``."""

    def __init__(self, seed, until, args, cache):
        self.stderr_path = os.path.join(cache, f"worker-{seed}.stderr")
        env = dict(os.environ, TF_NUMBA_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(
            p for p in (REPO, FUZZ_DIR, os.environ.get("PYTHONPATH")) if p))
        self.seed = seed
        with open(self.stderr_path, "wb") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", "--seed", str(seed),
                 "--until", str(until), "--timeout", str(args.timeout),
                 "--compiled-share", str(args.compiled_share)],
                env=env, stdout=subprocess.PIPE, stderr=stderr, start_new_session=True)
        self.buffer = b""
        self.current, self.mode, self.started = None, None, time.monotonic()
        self.program = {}           # the current program's JSON, oracles and seed

    def lines(self):
        """Complete lines read so far (call when stdout is readable); [] and None at EOF."""
        chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
        if not chunk:
            return None
        self.buffer += chunk
        *done, self.buffer = self.buffer.split(b"\n")
        return [json.loads(line) for line in done if line.strip()]

    def stderr_tail(self):
        try:
            with open(self.stderr_path, "rb") as f:
                return f.read()[-1500:].decode(errors="replace")
        except OSError:
            return ""

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


class Campaign:
    """The counts and findings of one campaign, and its log."""

    def __init__(self, seed, log_path):
        self.seed = seed
        self.programs = collections.Counter()    # by mode
        self.checks = 0
        self.findings = []          # (signature, event), the first of each signature
        self.repeats = collections.Counter()
        self.log_path = log_path
        os.makedirs(os.path.dirname(log_path), exist_ok=True)
        self.log = open(log_path, "w", encoding="utf-8")
        # each finding's program, oracles and seed, as JSON lines: ``--replay`` reads it
        self.programs_log = open(log_path + ".jsonl", "w", encoding="utf-8")
        self.log.write(f"# tf_numba fuzz campaign, seed {seed}, started "
                       f"{datetime.datetime.now():%Y-%m-%d %H:%M}\n\n")

    def event(self, worker, ev):
        kind = ev["event"]
        if kind == "start":
            worker.current, worker.mode, worker.started = ev["script"], ev["mode"], \
                time.monotonic()
            worker.program = {k: ev[k] for k in ("program", "oracles", "seed")}
        elif kind == "end":
            if not ev["shrinking"]:     # (a program shrinking tries is not another one)
                self.programs[ev["mode"]] += 1
                self.checks += ev["checks"]
            worker.current = None
        elif kind == "finding":
            if worker.current is not None:      # a hang its alarm ended
                self.programs[ev["mode"]] += 1
                worker.current = None
            self.finding(ev)

    def finding(self, ev):
        signature = (ev["kind"], _shape_of(ev["message"]), tuple(ev.get("ops", ())))
        if any(s == signature for s, _ in self.findings):
            self.repeats[signature] += 1
            return
        self.findings.append((signature, ev))
        number = len(self.findings)
        print(f"finding {number}: [{ev['kind']}] {ev['message'][:200]}", flush=True)
        self.log.write(f"## finding {number}: {ev['kind']} ({ev['mode']} oracles"
                       f"{', shrunk' if ev.get('shrunk') else ''})\n\n{ev['message']}\n\n"
                       f"```python\n{ev['script']}```\n\n")
        self.log.flush()
        self.programs_log.write(json.dumps(dict(ev, number=number)) + "\n")
        self.programs_log.flush()

    def line(self):
        kinds = collections.Counter(s[0] for s, _ in self.findings)
        by_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        return (f"{sum(self.programs.values())} programs, {self.checks} checks, "
                f"{len(self.findings)} findings, 0 fixed"
                + (f" ({by_kind})" if by_kind else ""))


def _shape_of(message):
    """A message with its numbers left out: the same failure on other values."""
    return re.sub(r"[-+]?[0-9][0-9.e+-]*|np\.\w+\(|\)", "", message)[:120]


def campaign(args):
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    log = args.log or os.path.join(tempfile.gettempdir(), "tf_numba_fuzz", f"{seed}.log")
    run = Campaign(seed, log)
    cache = tempfile.mkdtemp(prefix="tf_numba_fuzz_cache_")
    end = time.time() + 60.0 * args.minutes
    print(f"campaign seed {seed}, {args.minutes} minutes, {args.workers} workers, "
          f"log {log}", flush=True)
    workers, next_seed = [], seed
    try:
        while True:
            now = time.time()
            while now < end - 5 and len(workers) < args.workers:
                next_seed += 1
                workers.append(Worker(next_seed, min(end, now + WORKER_SECONDS), args,
                                      cache))
            if not workers:
                break
            ready, _, _ = select.select([w.proc.stdout for w in workers], [], [], 1.0)
            for w in list(workers):
                if w.proc.stdout in ready:
                    lines = w.lines()
                    if lines is None:       # the worker ended
                        w.proc.wait()
                        if w.proc.returncode != 0:
                            run.finding(dict(
                                kind="crash", mode=w.mode or "?", shrunk=False,
                                message=f"the worker (seed {w.seed}) exited with "
                                        f"{w.proc.returncode}: "
                                        f"{w.stderr_tail()}",
                                script=w.current or "",
                                **(w.program if w.current else {})))
                            if w.current:
                                run.programs[w.mode] += 1
                        workers.remove(w)
                        continue
                    for ev in lines:
                        run.event(w, ev)
                if w.current is not None and \
                        time.monotonic() - w.started > args.timeout + 30:
                    # the alarm did not end it: stuck in compiled code
                    w.kill()
                    run.finding(dict(kind="hang", mode=w.mode, shrunk=False,
                                     message=f"no answer within {args.timeout + 30} s",
                                     script=w.current, **w.program))
                    run.programs[w.mode] += 1
                    workers.remove(w)
    finally:
        for w in workers:
            w.kill()
        shutil.rmtree(cache, ignore_errors=True)
    summary = run.line()
    repeats = sum(run.repeats.values())
    run.log.write(f"\n{summary}\n({dict(run.programs)} programs by oracle set; "
                  f"{repeats} repeats of a finding already listed)\n")
    run.log.close()
    print(summary, flush=True)
    print(f"programs by oracle set: {dict(run.programs)}; log: {log}", flush=True)
    if args.record:
        _record(run, args, summary)
    return run


def _record(run, args, summary):
    path = os.path.join(REPO, "perf", "FUZZ.md")
    lines = [f"- {datetime.date.today()}, seed {run.seed}, {args.minutes} min, "
             f"{args.workers} workers: {summary}\n"]
    for number, (_, ev) in enumerate(run.findings, 1):
        lines.append(f"  - finding {number} [{ev['kind']}]: {ev['message'].splitlines()[0][:160]}"
                     "\n")
    with open(path, "a", encoding="utf-8") as f:
        f.writelines(lines)


def replay(path, timeout):
    """Check each finding of a campaign (its ``.jsonl``) again, with its oracles and
    seed: the number that pass now."""
    sys.path[:0] = [REPO, FUZZ_DIR]
    import oracles
    from random_programs import RandomProgram
    fixed = total = 0
    with open(path, encoding="utf-8") as f:
        findings = [json.loads(line) for line in f if line.strip()]
    for ev in findings:
        if not ev.get("program"):
            print(f"finding {ev['number']} [{ev['kind']}]: no program to check")
            continue
        total += 1
        program = RandomProgram.from_json(ev["program"])
        try:
            _checked(program, tuple(ev["oracles"]), timeout, ev["seed"])
        except oracles.ProgramTimeout as err:
            print(f"finding {ev['number']} [{ev['kind']}]: still fails: hang: {err}")
        except oracles.Finding as err:
            print(f"finding {ev['number']} [{ev['kind']}]: still fails: [{err.kind}] "
                  f"{err.message[:200]}")
        else:
            fixed += 1
            print(f"finding {ev['number']} [{ev['kind']}]: passes")
    print(f"{fixed} of {total} findings pass now")
    return fixed


def mutations():
    """Each of ``tests/fuzz/mutations.py``'s broken rules: how many programs of its CI
    sample ran, and how long, until the first finding."""
    sys.path[:0] = [REPO, FUZZ_DIR]
    import warnings
    warnings.simplefilter("ignore")
    from mutations import MUTATIONS
    for name, mutation in MUTATIONS.items():
        started = time.monotonic()
        found = mutation.first_finding()
        seconds = time.monotonic() - started
        if found is None:
            print(f"{name}: NOT FOUND by its sample ({seconds:.1f} s)")
        else:
            print(f"{name}: found by program {found[0]} of its sample in {seconds:.1f} s "
                  f"[{found[1].kind}]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds a program's checks may take")
    parser.add_argument("--compiled-share", type=float, default=0.5,
                        help="the share of the time spent on the compiling oracles")
    parser.add_argument("--log", default=None)
    parser.add_argument("--record", action="store_true",
                        help="append the campaign's line to perf/FUZZ.md")
    parser.add_argument("--replay", metavar="JSONL", default=None,
                        help="check a campaign's findings again (its log's .jsonl)")
    parser.add_argument("--mutations", action="store_true",
                        help="time the CI samples finding each broken rule")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--until", type=float, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args)
    elif args.mutations:
        mutations()
    elif args.replay:
        replay(args.replay, args.timeout)
    else:
        campaign(args)


if __name__ == "__main__":
    main()
