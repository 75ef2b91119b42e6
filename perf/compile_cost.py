"""Where a jitted step's compile time goes, kernel by kernel: trace, code generation, and
numba's phases (front end: bytecode to typed IR; lowering to LLVM IR; LLVM: optimization
and machine code), for the ``perf/first_minute`` workloads.

Each workload runs in a fresh process with the disk cache off, after numba's one-time
start (a trivial compile, reported apart). The step is the tf_numba script's own
(``perf/first_minute/<name>_tf_numba.py``, run up to its training loop), prepared for its
first call's arguments; every kernel is then compiled in that process, as a compile
worker would. CPU seconds (``time.process_time``) beside wall seconds: on a shared machine
the CPU figure is the steadier.

    python perf/compile_cost.py [--only mlp,rnn] [--repeats N] [--json PATH]
    python perf/compile_cost.py --constructs [--repo CHECKOUT]

``--constructs``: the first-call CPU seconds (trace, codegen and the kernel's compile) of
each control-flow construct of ``tests/test_control_flow.CONSTRUCTS`` (scan, while and
fori loops, cond, switch, checkpoint, with their derivatives), each alone in a fresh
process after numba's one-time start: what a compile worker's first kernel of its kind
costs, numba's own first compiles of what it calls included.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
WORKLOADS = ("linreg", "mlp", "rnn", "gp")

_CHILD = r'''
import json, sys, time
from _first_step import silence_clock, step_and_args
silence_clock()
import numba
t0, c0 = time.perf_counter(), time.process_time()
numba.njit(lambda x: x + 1)(1)
numba_start = (time.perf_counter() - t0, time.process_time() - c0)
step_function, args = step_and_args(SCRIPT)
import tf_numba as tf
from tf_numba.core import pytree
from tf_numba.lowering.plan import Plan
OLD = not hasattr(Plan, "_signatures")
step = step_function.jitted
t0 = time.perf_counter()
spec, leaves = step._prepare(args, {})
prepare = time.perf_counter() - t0
t0 = time.perf_counter()
plan = Plan(spec.program, tiered=not OLD)
codegen = time.perf_counter() - t0
kernels = []
if OLD:     # a checkout from before compile workers: its kernels compile on a first run
    t0, c0 = time.perf_counter(), time.process_time()
    plan.run(leaves)
    run_wall, run_cpu = time.perf_counter() - t0, time.process_time() - c0
    wanted = [(seg, next(iter(seg.kernel.dispatcher.overloads)))
              for seg in plan.segments if hasattr(seg, "kernel")]
else:
    wanted, _ = plan._signatures(leaves)
for seg, sig in wanted:
    dispatcher = seg.kernel.dispatcher
    t0, c0 = time.perf_counter(), time.process_time()
    dispatcher.compile(sig)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if OLD:
        wall, cpu = run_wall / len(wanted), run_cpu / len(wanted)
    meta = dispatcher.get_metadata(sig)
    passes = {k: v.run for k, v in meta["pipeline_times"]["nopython"].items()}
    native = sum(v for k, v in passes.items() if k.endswith("native_lowering"))
    llvm = meta["timers"].get("llvm_lock", 0.0)
    kernels.append(dict(lines=seg.source.count("\n"), wall=wall, cpu=cpu,
                        front_end=sum(passes.values()) - native,
                        typing=sum(v for k, v in passes.items() if "type_inference" in k),
                        lowering=max(native - llvm, 0.0), llvm=llvm))
print(json.dumps(dict(eqns=len(spec.program.eqns), numba_start=numba_start,
                      trace_and_prepare=prepare - codegen, codegen=codegen, kernels=kernels)))
'''


def _run_child(what, source, pythonpath, python, timeout):
    """The last line ``source`` prints, run by ``python -c`` with the disk cache off and
    ``pythonpath``. It runs from perf/: a child's sys.path starts with its working
    directory, which must not be a checkout other than the one measured."""
    env = dict(os.environ, TF_NUMBA_CACHE_DIR="off", PYTHONPATH=pythonpath)
    done = subprocess.run([python, "-c", source], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=HERE)
    if done.returncode != 0:
        raise RuntimeError(f"{what}: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def measure(name, python=sys.executable, repo=REPO):
    """One workload's figures in a fresh process importing tf_numba from ``repo`` (a
    checkout from before the compile workers works too: its kernels compile on a first
    run, and their time is split evenly among them)."""
    script = os.path.join(HERE, "first_minute", f"{name}_tf_numba.py")
    source = "SCRIPT = " + repr(script) + "\n" + _CHILD
    pythonpath = os.pathsep.join([os.path.join(HERE, "first_minute"), repo])
    return json.loads(_run_child(name, source, pythonpath, python, 1800))


_CONSTRUCT_CHILD = r'''
import os, sys, time
import numpy as np, numba
numba.njit(lambda x: x + 1)(1)
sys.path.insert(0, os.path.join(REPO, "tests"))
import tf_numba as tf
import test_control_flow as t
f = t.CONSTRUCTS[KEY]
rng = np.random.default_rng(0)
args = (rng.normal(size=4), t.W + rng.normal(size=(4, 4)) * 0.1, rng.normal(size=3),
        np.float64(2.0), np.int64(-1))
jitted = tf.jit(f, tiered=False)
c0 = time.process_time()
jitted(*args)
print(time.process_time() - c0)
'''


def measure_construct(key, python=sys.executable, repo=REPO):
    """CPU seconds of construct ``key``'s first call, in a fresh process."""
    source = f"REPO = {repo!r}\nKEY = {key!r}\n" + _CONSTRUCT_CHILD
    return float(_run_child(key, source, repo, python, 600))


def constructs(repo):
    sys.path.insert(0, os.path.join(repo, "tests"))
    import test_control_flow
    print(f"load average {_bench.load_average()}")
    print(f"{'construct':12} {'first call, CPU':>16}")
    total = 0.0
    for key in test_control_flow.CONSTRUCTS:
        cpu = measure_construct(key, repo=repo)
        total += cpu
        print(f"{key:12} {cpu:15.2f}s")
    print(f"{'total':12} {total:15.2f}s")
    print(f"load average {_bench.load_average()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(WORKLOADS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json")
    parser.add_argument("--repo", default=REPO, help="the tf_numba checkout to measure")
    parser.add_argument("--constructs", action="store_true",
                        help="the control-flow constructs' first calls instead")
    opts = parser.parse_args()
    if opts.constructs:
        return constructs(opts.repo)
    results = {}
    print(f"load average {_bench.load_average()}")
    header = (f"{'workload':8} {'eqns':>4} {'kernel':>6} {'lines':>5} {'wall':>7} {'cpu':>7} "
              f"{'front':>7} {'(typing)':>8} {'lower':>7} {'llvm':>7}   trace+prep  codegen")
    print(header)
    for name in opts.only.split(","):
        runs = [measure(name, repo=opts.repo) for _ in range(opts.repeats)]
        results[name] = runs
        r = min(runs, key=lambda r: sum(k["cpu"] for k in r["kernels"]))
        for k, kern in enumerate(r["kernels"]):
            tail = (f"   {r['trace_and_prepare'] * 1e3:7.0f} ms {r['codegen'] * 1e3:5.0f} ms"
                    if k == 0 else "")
            print(f"{name:8} {r['eqns']:4} {k:6} {kern['lines']:5} {kern['wall']:6.2f}s "
                  f"{kern['cpu']:6.2f}s {kern['front_end']:6.2f}s {kern['typing']:7.2f}s "
                  f"{kern['lowering']:6.2f}s {kern['llvm']:6.2f}s{tail}")
        print(f"{'':8} numba's one-time start in that process: {r['numba_start'][0]:.2f} s wall")
    print(f"load average {_bench.load_average()}")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
