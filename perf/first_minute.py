"""The first minute: whole training scripts in fresh processes, tf_numba beside JAX and NumPy.

tf_numba runs each script cold, warm and edited; JAX in float64; NumPy with hand gradients.

Each workload is one script per tool in ``perf/first_minute/`` (``<name>_<tool>.py``), a
training loop as a user writes it, with a stopwatch (``_clock.py``) that writes one JSON line
of timings. The workloads:

- ``linreg``: linear regression, 1000 x 20, dict params, 500 steps of gradient descent;
- ``mlp``: a 32-128-5 ReLU MLP, softmax cross-entropy, batch 128, 300 SGD steps,
  ``jit(value_and_grad)`` on a list-of-dicts params pytree;
- ``rnn``: an Elman RNN over ``lax.scan``, T=50, batch 32, hidden 32, 200 steps;
- ``gp``: a Gaussian-process marginal likelihood (200 points, RBF kernel, log lengthscale,
  variance and noise; Cholesky and solve), 100 steps of gradient descent;
- ``mlp32``: a 32-layer tanh MLP (width 64, batch 32, mean squared error), 2000 SGD steps;
- ``vae``: a VAE step after JAX's ``mnist_vae.py`` (784-512-20, batch 128, images binarized
  and ``z`` drawn by ``tf.random`` inside the step, Adam), 2000 steps.

The last two are issue 38's programs larger than a toy: their kernels take seconds to
compile, and their scripts run long enough (2000 steps) for compiled steps to matter. They
run only when the whole set runs or ``--only`` names them, not with ``--quick`` (a round of
the VAE's six runs takes minutes), and without a NumPy script (hand-written gradients of a
VAE are not what the comparison is about).

Every round runs, per workload, each in a new interpreter:

- **cold**: tf_numba with an empty kernel cache (``TF_NUMBA_CACHE_DIR`` = a fresh directory;
  ``--fresh-numba-cache`` also points ``NUMBA_CACHE_DIR`` there, so the library's own numba
  helpers start cold too, as after an install);
- **warm**: the same script again, on that cache;
- **edited**: the script with one op or constant changed (``WORKLOADS``' ``edit``, a text
  substitution) on that warm cache, written over the same file, as a user edits it;
- JAX runs the same three scripts (no persistent compilation cache, so its three runs differ
  only in the edit); NumPy (one BLAS thread, hand-written gradients) runs once.

The two tools alternate which goes first in each phase, round by round. A time is the median
over rounds; a ratio is the median of the rounds' ratios (the shared host runs in spells,
which then slow both sides of a ratio). Times are seconds from the spawn of the process:
``wall`` to its exit, ``import`` to the end of the script's imports, ``1st step`` to the end of
the first training step, ``1st compiled`` to the end of the first step from which steps run
at compiled speed (within 3x of the fastest steady step time among the tool's runs in that
round, ``_clock.first_compiled_step``: the same rule for every tool, needing nothing from a
library's internals; "never" when no step got there, as when a compile lands only after the
script ends), ``exit`` from the script's last statement to the process's end.

Targets, per workload: cold wall <= 1.0x JAX's; warm wall <= 0.5x JAX's (0.7x for ``mlp32``
and ``vae``, issue 38's); edited wall <= 1.0x JAX's; tf_numba's first compiled step after
the edit no later than JAX's first step; the losses the tf_numba scripts print equal JAX's
(6 significant digits) in every run. A script that dies before its end counts as an
infinite time (its stderr is printed); one that finishes and then fails to exit keeps its
times, and its exit code is shown.

``--exit-check N`` instead runs each tf_numba script N times with the default settings (an
empty cache directory each time, so a compile is in flight when short scripts end;
``--exit-cache shared`` keeps one) and counts the runs that exit 0.

    python perf/first_minute.py [--rounds N | --quick] [--only mlp,rnn] [--json PATH]
                                [--python PYTHON] [--repo CHECKOUT] [--fresh-numba-cache]
    python perf/first_minute.py --exit-check 20 [--only rnn] [--exit-cache fresh|shared]
"""
import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "first_minute")
_USER_OPENBLAS_SPIN = os.environ.get("OPENBLAS_THREAD_TIMEOUT")
sys.path.insert(0, HERE)
sys.path.insert(0, SCRIPTS)
import _bench  # noqa: E402
import _clock  # noqa: E402  (the first-compiled-step rule; its clock is unused here)

TF, JAX, NUMPY = "tf_numba", "jax", "numpy"
TOOLS = (TF, JAX, NUMPY)
LABEL = {TF: "tf_numba", JAX: "jax", NUMPY: "numpy (1 BLAS thread)"}
PHASES = ("cold", "warm", "edited")
NAMESPACE = {TF: "tnp", JAX: "jnp"}     # the ``{np}`` of an edit

# name: (what it trains, (old, new): the edit, a text substitution where ``{np}`` stands for
# the tool's numpy namespace)
WORKLOADS = {
    "linreg": ("linear regression, 1000x20, dict params, 500 GD steps",
               ("1e-3 * {np}.sum", "2e-3 * {np}.sum")),           # a constant
    "mlp": ("32-128-5 MLP, softmax cross-entropy, batch 128, 300 SGD steps",
            ("{np}.maximum(z, 0.0)", "{np}.tanh(z)")),            # relu -> tanh
    "rnn": ("Elman RNN over lax.scan, T=50, batch 32, hidden 32, 200 SGD steps",
            ("{np}.tanh(", "{np}.sin(")),                         # the cell's nonlinearity
    "gp": ("GP marginal likelihood, 200 points, RBF kernel, 100 GD steps",
           ("{np}.exp(-0.5 * d2 / ls ** 2)", "1.0 / (1.0 + 0.5 * d2 / ls ** 2)")),  # RBF -> RQ
    "mlp32": ("32-layer tanh MLP, width 64, batch 32, 2000 SGD steps",
              ("{np}.tanh(", "{np}.sin(")),                        # every layer's activation
    "vae": ("VAE 784-512-20, batch 128, tf.random inside the step, Adam, 2000 steps",
            ("nn.relu(", "nn.softplus(")),                        # the hidden activation
}
FULL_RUN_ONLY = ("mlp32", "vae")    # not in --quick (see the module doc)
WITHOUT_NUMPY = ("mlp32", "vae")    # no NumPy script

TARGETS = (     # (phase, what is compared, limit): tf_numba / JAX, the median of rounds
    ("cold", "wall", 1.0),
    ("warm", "wall", 0.5),
    ("edited", "wall", 1.0),
    ("edited", "first compiled step / JAX first step", 1.0),
)
TARGETS_OF = {     # workloads whose targets differ: (phase, what): limit
    "mlp32": {("warm", "wall"): 0.7},
    "vae": {("warm", "wall"): 0.7},
}
LOSS_DIGITS = 6                 # the scripts print losses with %.6g
TIMES = ("wall", "import", "first_step", "first_compiled", "steady_step", "exit")


def script_text(name, tool, edited=False):
    """A workload's script for ``tool``; ``edited``: with its edit applied (exactly once)."""
    with open(os.path.join(SCRIPTS, f"{name}_{tool}.py")) as f:
        text = f.read()
    if not edited:
        return text
    old, new = (s.format(np=NAMESPACE[tool]) for s in WORKLOADS[name][1])
    if text.count(old) != 1:
        raise ValueError(f"{name}_{tool}.py: the edit {old!r} -> {new!r} should match once, "
                         f"matches {text.count(old)} times")
    return text.replace(old, new)


def child_env(args, tool, cache_dir, pycache):
    """The environment a script runs in: the chosen checkout first on the path, bytecode
    cached (as for an installed package, even where PYTHONDONTWRITEBYTECODE is set), the
    user's OpenBLAS defaults, ``cache_dir`` as tf_numba's cache (None: the default), JAX
    without a persistent compilation cache, NumPy on one BLAS thread."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([args.repo, SCRIPTS] + [p for p in
                                        [os.environ.get("PYTHONPATH")] if p])
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = pycache
    if _USER_OPENBLAS_SPIN is None:
        env.pop("OPENBLAS_THREAD_TIMEOUT", None)    # set by _bench for in-process timing
    for key in ("TF_NUMBA_CACHE_DIR", "NUMBA_CACHE_DIR", "FIRST_MINUTE_JSON"):
        env.pop(key, None)
    if cache_dir is not None:
        env["TF_NUMBA_CACHE_DIR"] = cache_dir
        if args.fresh_numba_cache:
            env["NUMBA_CACHE_DIR"] = os.path.join(cache_dir, "numba")
    if tool == JAX:
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    if tool == NUMPY:
        env["OPENBLAS_NUM_THREADS"] = "1"
    return env


def run_script(args, path, env):
    """Run one script in a new interpreter: its exit code, wall time, printed losses and the
    stopwatch's record, with every time made relative to the spawn of the process."""
    out = path + ".json"
    if os.path.exists(out):
        os.remove(out)
    env = dict(env, FIRST_MINUTE_JSON=out)
    load = os.getloadavg()[0]
    spawn_epoch = time.time()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([args.python, path], capture_output=True, text=True, env=env,
                              timeout=args.timeout, cwd=os.path.dirname(path))
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = "timeout", exc.stdout or "", exc.stderr or ""
        stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
        stderr = stderr.decode() if isinstance(stderr, bytes) else stderr
    wall = time.perf_counter() - t0
    run = dict(rc=rc, wall=wall, load=load, printed=[line for line in stdout.splitlines()
                                                     if " loss " in line],
               stderr_tail=stderr[-1500:])
    try:
        with open(out) as f:
            record = json.load(f)
    except (OSError, ValueError):       # the script died before its end: no times, and a
        run.update(wall=math.inf, wall_measured=wall)   # tf_numba / JAX ratio of infinity
        return run
    startup = record["t0_epoch"] - spawn_epoch
    ends = [startup + e for e in record["ends"]]
    run.update({"import": startup + record["imported"], "first_step": ends[0], "ends": ends,
                "steady_step": record["steady_step"],
                "exit": wall - startup - record["done"], "losses": record["losses"],
                "durations": [e - s for s, e in zip([record["begin"]] + record["ends"][:-1],
                                                     record["ends"])],
                "modules": record["modules"], "tf_cache_info": record.get("tf_cache_info")})
    return run


def fmt_time(seconds, infinite="never"):
    """``_bench.fmt_time``; infinity (never compiled, or the script failed) as ``infinite``."""
    return infinite if seconds == math.inf else _bench.fmt_time(seconds)


def fmt_ratio(r):
    return "inf" if r == math.inf else _bench.fmt_ratio(r)


def signal_name(rc):
    if isinstance(rc, int) and rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            pass
    return str(rc)


def first_compiled(runs):
    """Set each run's ``first_compiled`` against the fastest steady step of ``runs`` (one
    tool's runs of one workload in one round)."""
    steady = [r["steady_step"] for r in runs if "steady_step" in r]
    if not steady:
        return
    for r in runs:
        if "durations" in r:
            i = _clock.first_compiled_step(r["durations"], min(steady))
            r["first_compiled_index"] = i
            r["first_compiled"] = math.inf if i is None else r["ends"][i]   # inf: never


def one_round(args, r, name, pycache, tools):
    """{phase: {tool: run}} for one workload in round ``r``; NumPy's run is its 'cold'."""
    work = tempfile.mkdtemp(prefix=f"{name}_", dir=args.workdir)
    try:
        cache = os.path.join(work, "cache")
        os.mkdir(cache)
        pair = [t for t in (TF, JAX) if t in tools]
        if r % 2:
            pair.reverse()
        out = {phase: {} for phase in PHASES}
        if name in WITHOUT_NUMPY:
            tools = [t for t in tools if t != NUMPY]
        if NUMPY in tools and r % 2:
            out["cold"][NUMPY] = run_tool(args, name, NUMPY, False, work, cache, pycache)
        for phase in PHASES:
            for tool in pair:
                out[phase][tool] = run_tool(args, name, tool, phase == "edited", work, cache,
                                            pycache)
        if NUMPY in tools and not r % 2:
            out["cold"][NUMPY] = run_tool(args, name, NUMPY, False, work, cache, pycache)
        for tool in pair:
            first_compiled([out[phase][tool] for phase in PHASES])
        if NUMPY in out["cold"]:
            first_compiled([out["cold"][NUMPY]])
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_tool(args, name, tool, edited, work, cache, pycache):
    """Write ``tool``'s script (edited or not) to ``work`` and run it; the path is the same
    for the three phases, as when a user edits a file in place."""
    path = os.path.join(work, f"{name}_{tool}.py")
    with open(path, "w") as f:
        f.write(script_text(name, tool, edited))
    env = child_env(args, tool, cache if tool == TF else None, pycache)
    return checked_checkout(args, run_script(args, path, env), path)


def checked_checkout(args, run, path):
    """``run``, once its tf_numba (if it imported one) is known to come from ``--repo``."""
    got = run.get("modules", {}).get("tf_numba")
    if got and not os.path.abspath(got).startswith(args.repo + os.sep):
        sys.exit(f"{os.path.basename(path)} imported tf_numba from {got}, not from --repo "
                 f"{args.repo}")
    return run


def compare_losses(tf_run, jax_run):
    """(printed lines equal, max relative difference of the per-step losses) for two runs."""
    same = bool(tf_run["printed"]) and tf_run["printed"] == jax_run["printed"]
    a, b = tf_run.get("losses"), jax_run.get("losses")
    if not a or not b or len(a) != len(b):
        return same, None
    return same, max(abs(x - y) / max(abs(y), 1e-300) for x, y in zip(a, b))


def median_of(rounds, phase, tool, key):
    values = [rd[phase][tool][key] for rd in rounds
              if tool in rd[phase] and rd[phase][tool].get(key) is not None]
    return statistics.median(values) if values else None


def paired(rounds, phase, key_tf, key_jax="wall"):
    """The median over rounds of tf_numba's ``key_tf`` / JAX's ``key_jax`` in ``phase``."""
    ratios = []
    for rd in rounds:
        a, b = rd[phase].get(TF, {}), rd[phase].get(JAX, {})
        if a.get(key_tf) is not None and b.get(key_jax) and b[key_jax] != math.inf:
            ratios.append(a[key_tf] / b[key_jax])
    return statistics.median(ratios) if ratios else None


def summarize(name, rounds):
    """Medians, ratios, the loss check and the targets of one workload."""
    rows = []
    for phase in PHASES:
        for tool in TOOLS:
            if not any(tool in rd[phase] for rd in rounds):
                continue
            runs = [rd[phase][tool] for rd in rounds if tool in rd[phase]]
            row = dict(phase=phase, tool=tool, rounds=len(runs),
                       exits=[signal_name(r["rc"]) for r in runs],
                       **{k: median_of(rounds, phase, tool, k) for k in TIMES})
            if tool == TF:
                row["vs_jax"] = paired(rounds, phase, "wall")
                row["tf_cache_info"] = runs[-1].get("tf_cache_info")
            rows.append(row)
    loss_checks = []
    for rd in rounds:
        for phase in PHASES:
            if TF in rd[phase] and JAX in rd[phase]:
                same, rel = compare_losses(rd[phase][TF], rd[phase][JAX])
                loss_checks.append(dict(phase=phase, same=same, max_rel_diff=rel,
                                        tf=rd[phase][TF]["printed"],
                                        jax=rd[phase][JAX]["printed"]))
    targets = []
    for phase, what, limit in TARGETS:
        limit = TARGETS_OF.get(name, {}).get((phase, what), limit)
        ratio = (paired(rounds, phase, "first_compiled", "first_step") if what.startswith("first")
                 else paired(rounds, phase, "wall"))
        text = f"{phase} {what}: tf_numba / JAX = {fmt_ratio(ratio)} (<= {limit:.2f}x)"
        targets.append(dict(target=text, met=None if ratio is None else ratio <= limit))
    if loss_checks:
        same = sum(c["same"] for c in loss_checks)
        rels = [c["max_rel_diff"] for c in loss_checks if c["max_rel_diff"] is not None]
        targets.append(dict(
            target=f"printed losses equal JAX's to {LOSS_DIGITS} digits: {same} of "
                   f"{len(loss_checks)} runs (largest relative difference of any step's loss "
                   f"{max(rels):.1e})" if rels else "printed losses equal JAX's: no losses",
            met=same == len(loss_checks)))
    failures = {f"{LABEL[tool]} {phase}, exit {signal_name(run['rc'])}": run["stderr_tail"]
                for rd in rounds for phase in PHASES for tool, run in rd[phase].items()
                if run["rc"] != 0}
    return dict(name=name, title=WORKLOADS[name][0], rows=rows, targets=targets,
                loss_checks=loss_checks, failures=failures,
                load=[rd[p][t]["load"] for rd in rounds for p in PHASES for t in rd[p]])


def print_summary(s):
    load = s["load"]
    print(f"\n-- {s['name']}: {s['title']}   (load average {min(load):.2f}..{max(load):.2f} "
          f"over its runs; now {_bench.load_average()})")
    edit_old, edit_new = WORKLOADS[s["name"]][1]
    print(f"   edit: {edit_old.format(np='tnp')!r} -> {edit_new.format(np='tnp')!r}")
    print(f"   {'phase':<8}{'tool':<23}{'wall':>9}{'import':>9}{'1st step':>10}"
          f"{'1st compiled':>14}{'steady step':>13}{'exit':>9}{'/ jax':>8}  exit codes")
    for row in s["rows"]:
        codes = ",".join(sorted(set(row["exits"])))
        print(f"   {row['phase']:<8}{LABEL[row['tool']]:<23}"
              + "".join(f"{fmt_time(row[k], 'failed' if k == 'wall' else 'never'):>{w}}"
                        for k, w in
                        zip(TIMES, (9, 9, 10, 14, 13, 9)))
              + f"{fmt_ratio(row.get('vs_jax')) if row['tool'] == TF else '':>8}  "
              + codes)
    for row in s["rows"]:
        info = row.get("tf_cache_info")
        if info:
            print(f"   info: tf_numba {row['phase']} run's cache_info: compiles "
                  f"{info.get('compiles')}, disk hits {info.get('disk_hits')}, disk writes "
                  f"{info.get('disk_writes')}")
    for c in s["loss_checks"]:
        if not c["same"]:
            print(f"   losses differ ({c['phase']}): tf_numba {c['tf']} / jax {c['jax']}")
    for what, tail in s["failures"].items():
        lines = tail.strip().splitlines()[-4:]
        print(f"   failed ({what}), stderr ends:\n      " + "\n      ".join(lines))
    for t in s["targets"]:
        status = {True: "PASS", False: "MISS", None: "n/a"}[t["met"]]
        print(f"   target: {t['target']} -> {status}")


def warm_bytecode(args, pycache):
    """Import everything once (twice: the second confirms) so bytecode is cached before any
    run is timed; returns which tools' modules import under ``args.python``."""
    code = ("import importlib.util, json\n"
            "have = {m: importlib.util.find_spec(m) is not None for m in ('jax', 'tf_numba')}\n"
            "import numpy, scipy, tf_numba, tf_numba.numpy\n"
            "if have['jax']:\n    import jax, jax.numpy\n"
            "print(json.dumps(dict(have, tf_numba_file=tf_numba.__file__)))\n")
    env = child_env(args, TF, None, pycache)
    for _ in range(2):
        proc = subprocess.run([args.python, "-c", code], capture_output=True, text=True,
                              env=env, cwd=pycache)    # not the caller's directory: it
                                                        # would come first on sys.path
        if proc.returncode != 0:
            sys.exit(f"importing tf_numba with {args.python} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def exit_check(args, names, pycache):
    """Run each tf_numba script ``args.exit_check`` times; count the runs that exit 0."""
    print(f"== first_minute --exit-check: each tf_numba script {args.exit_check} times, default "
          f"settings, {args.exit_cache} cache directory ({_bench.load_average()})")
    results = {}
    shared = tempfile.mkdtemp(prefix="exit_", dir=args.workdir)
    try:
        for name in names:
            runs = []
            for _ in range(args.exit_check):
                work = tempfile.mkdtemp(prefix=f"{name}_", dir=shared)
                cache = os.path.join(shared if args.exit_cache == "shared" else work, "cache")
                os.makedirs(cache, exist_ok=True)
                path = os.path.join(work, f"{name}_{TF}.py")
                with open(path, "w") as f:
                    f.write(script_text(name, TF))
                runs.append(checked_checkout(
                    args, run_script(args, path, child_env(args, TF, cache, pycache)), path))
                shutil.rmtree(work, ignore_errors=True)
            clean = [r["rc"] == 0 for r in runs]
            streak = best = 0
            for ok in clean:
                streak = streak + 1 if ok else 0
                best = max(best, streak)
            outputs = {tuple(r["printed"]) for r in runs}
            results[name] = dict(runs=len(runs), clean=sum(clean), longest_clean_streak=best,
                                 exits=[signal_name(r["rc"]) for r in runs],
                                 walls=[r["wall"] for r in runs],
                                 same_output=len(outputs) == 1,
                                 failures=[r["stderr_tail"] for r in runs if r["rc"] != 0][:3])
            met = sum(clean) == len(runs)
            print(f"   {name:<8} {sum(clean)} of {len(runs)} exited 0 (exit codes "
                  f"{' '.join(results[name]['exits'])}; wall median "
                  f"{_bench.fmt_time(statistics.median(results[name]['walls']))}; printed "
                  f"losses {'identical' if len(outputs) == 1 else 'DIFFER'} across runs) -> "
                  f"{'PASS' if met else 'MISS'}")
            for tail in results[name]["failures"][:1]:
                print("      first failure's stderr tail: " + tail[-600:].replace("\n", "\n      "))
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    print(f"   {_bench.load_average()}")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=None, help="default 5; --quick: 2")
    parser.add_argument("--quick", action="store_true", help="2 rounds")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated workloads (of {', '.join(WORKLOADS)})")
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter that runs the scripts (default: this one)")
    parser.add_argument("--repo", default=os.path.dirname(HERE),
                        help="the tf_numba checkout the scripts import (default: this one)")
    parser.add_argument("--fresh-numba-cache", action="store_true",
                        help="cold runs also start with an empty NUMBA_CACHE_DIR")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--no-numpy", action="store_true")
    parser.add_argument("--exit-check", type=int, default=0, metavar="N",
                        help="instead: run each tf_numba script N times, count clean exits")
    parser.add_argument("--exit-cache", choices=("fresh", "shared"), default="fresh",
                        help="--exit-check: a new cache directory per run, or one for all")
    args = parser.parse_args()
    args.repo = os.path.abspath(args.repo)
    args.rounds = args.rounds or (2 if args.quick else 5)
    names = ([n for n in WORKLOADS if not (args.quick and n in FULL_RUN_ONLY)]
             if args.only is None else args.only.split(","))
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")
    for name in names:          # every edit applies before anything runs
        for tool in NAMESPACE:
            script_text(name, tool, edited=True)

    # every run's files under one directory; a compile that a script's background workers
    # finish after the script ended may still land in it after the run's own removal
    with tempfile.TemporaryDirectory(prefix="first_minute_",
                                     ignore_cleanup_errors=True) as args.workdir:
        pycache = os.path.join(args.workdir, "pycache")
        os.mkdir(pycache)
        have = warm_bytecode(args, pycache)
        print(f"   tf_numba from {have['tf_numba_file']} ({args.python})")
        if args.exit_check:
            results = exit_check(args, names, pycache)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(dict(name="first_minute_exit_check", args=vars(args),
                                   machine=_bench.machine_info(), results=results), f, indent=1)
            return
        tools = [TF] + ([JAX] if have["jax"] else []) + ([] if args.no_numpy else [NUMPY])
        print(f"== first_minute: training scripts in fresh processes, {args.rounds} rounds, "
              f"workloads interleaved, tools alternating; medians (ratios: of each round's)")
        print(f"   {_bench.load_average()} | times from the spawn of each process; cold = "
              f"empty TF_NUMBA_CACHE_DIR{' and NUMBA_CACHE_DIR' if args.fresh_numba_cache else ''}"
              f", warm = the same script again, edited = one change on the warm cache")
        results = {name: [] for name in names}
        with _bench.ForeignLoad() as foreign:
            for r in range(args.rounds):
                for name in names:
                    results[name].append(one_round(args, r, name, pycache, tools))
                    print(f"   (round {r + 1}/{args.rounds} {name}: done, "
                          f"{_bench.load_average()})", flush=True)
    summaries = [summarize(name, rounds) for name, rounds in results.items()]
    for s in summaries:
        print_summary(s)
    if foreign.cores is not None:
        print(f"\n   other processes used {foreign.cores:.2f} of {os.cpu_count()} cores "
              f"meanwhile (beyond this harness and its scripts); {_bench.load_average()}")
    for rounds in results.values():        # the raw per-step data is not kept
        for rd in rounds:
            for runs in rd.values():
                for run in runs.values():
                    for key in ("durations", "ends", "losses"):
                        run.pop(key, None)
    if args.json:
        with open(args.json, "w") as f:
            # ``summary`` as perf/report.py reads it: (case, target, met) rows
            summary = [dict(case=s["name"], target=t["target"], met=t["met"])
                       for s in summaries for t in s["targets"]]
            json.dump(dict(name="first_minute", args=vars(args), machine=_bench.machine_info(),
                           foreign_cores=foreign.cores, summary=summary, summaries=summaries,
                           runs=results),
                      f, indent=1, default=str)


if __name__ == "__main__":
    main()
