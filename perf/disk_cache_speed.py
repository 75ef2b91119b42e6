"""A kernel loaded from numba's disk cache, or installed from a compile worker, runs at the
speed of the same kernel compiled in the process: the same plan three ways, timed side by
side in one process.

- ``fresh``: compiled in this process (``tiered=False``, no disk cache);
- ``from disk``: written to a disk cache by an earlier process's compile worker and loaded
  from it here (what every warm rerun runs);
- ``from a worker``: compiled by this process's compile worker and installed from its
  result (what a cold run runs once its kernel arrives).

The steps are those of ``perf/first_minute`` (the MLP, the RNN over ``lax.scan``), whose
kernels once ran 1.8-2.5x slower from the disk cache, and a chain of transcendental
functions over 10^5 elements, the code most sensitive to how it was vectorized. The
``fresh`` plan is the reference. Target: each of the others within 1.10x of it.

    python perf/disk_cache_speed.py [--quick] [--rounds N] [--json PATH]
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "first_minute"))
import _bench  # noqa: E402
from _first_step import step_and_args  # noqa: E402

FRESH, DISK, WORKER = "fresh", "from disk", "from a worker"
TARGET = 1.10
# an earlier process: its compile worker writes the kernels into the disk cache at ARGV[2]
_EARLIER_RUN = r'''
import os, sys
sys.path[:0] = [os.path.join(sys.argv[1], "first_minute"), sys.argv[1]]
import disk_cache_speed
from tf_numba.lowering.kernel_cache import KernelCache
from tf_numba.lowering.plan import Plan
program, leaves = disk_cache_speed.workload(sys.argv[3])
plan = Plan(program, kernel_cache=KernelCache(directory=sys.argv[2]), tiered=True)
plan.run(leaves)
plan.compile(leaves)
'''


def _chain_step(x):
    import tf_numba.numpy as tnp
    return tnp.sum(tnp.exp(tnp.sin(x) * x) + tnp.tanh(x) * tnp.log1p(x * x))


def workload(name):
    """``(program, leaves)``: the flat program a jitted step runs and its arguments."""
    import numpy as np
    if name == "chain":
        import tf_numba as tf
        jitted = tf.jit(_chain_step).jitted
        args = (np.linspace(-3.0, 3.0, 10 ** 5),)
    else:
        step, args = step_and_args(os.path.join(HERE, "first_minute", f"{name}_tf_numba.py"))
        jitted = step.jitted
    spec, leaves = jitted._prepare(args, {})
    return spec.program, leaves


def build_case(bench, name, directory):
    from tf_numba.lowering.kernel_cache import KernelCache
    from tf_numba.lowering.plan import Plan
    program, leaves = workload(name)
    on_disk = os.path.join(directory, name + "-disk")
    subprocess.run([sys.executable, "-c", _EARLIER_RUN, HERE, on_disk, name], check=True,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                       [os.path.dirname(HERE), os.environ.get("PYTHONPATH", "")])))
    plans = {FRESH: Plan(program, kernel_cache=KernelCache(), tiered=False),
             DISK: Plan(program, kernel_cache=KernelCache(directory=on_disk), tiered=True),
             WORKER: Plan(program, kernel_cache=KernelCache(
                 directory=os.path.join(directory, name + "-worker")), tiered=True)}
    case = bench.case(name)
    want = plans[FRESH].run(leaves)
    for tool, plan in plans.items():
        plan.run(leaves)
        plan.compile(leaves)
        assert plan.ready, f"{name}: the {tool} plan is not running compiled code"
        for got, expected in zip(plan.run(leaves), want):
            _bench.assert_close(tool, got, expected, rtol=1e-12)
        case.add(tool, lambda plan=plan: plan.run(leaves))
    disk_hits = plans[DISK].kernel_cache.stats["disk_hits"]
    case.note(f"{len(plans[FRESH].segments)} segment(s); the from-disk plan's kernel cache "
              f"counted {disk_hits} disk hit(s), its compiles ran in the earlier process")
    return case


def targets(bench):
    def check(case):
        return [(f"{tool} / fresh = {_bench.fmt_ratio(bench.ratio_to_ref(case, tool))} "
                 f"(<= {TARGET:.2f}x)", None if bench.ratio_to_ref(case, tool) is None
                 else bench.ratio_to_ref(case, tool) <= TARGET) for tool in (DISK, WORKER)]
    return check


def main():
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    bench = _bench.Bench("disk_cache_speed", __doc__, reference=FRESH, default_rounds=15,
                         quick_rounds=7)
    bench.jax = None
    with tempfile.TemporaryDirectory(prefix="tf_numba_disk_speed_") as directory:
        cases = [build_case(bench, name, directory) for name in ("mlp", "rnn", "chain")]
        bench.run(cases, "steady-state calls of one plan compiled three ways",
                  targets(bench))


if __name__ == "__main__":
    main()
