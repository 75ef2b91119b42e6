"""Time to compiled code as programs grow, one kernel per segment against region kernels,
beside JAX (issue 38).

The workloads are ``region_compile.py``'s (an L-layer tanh MLP's ``value_and_grad``, width
64, batch 32; a VAE step; ``random.gamma``). Each runs in fresh processes with an empty
kernel cache, with the default tiered ``jit`` (the interpreter answers while compile
workers build the kernels, in parallel), once with ``regions=False`` (one kernel per run of
compiled steps, cut at 32 nests) and once with ``regions=True`` (one kernel per fused
region or library step, identical ones shared). Columns:

- "first": the first call (trace, prepare, interpreted answer, kernels sent);
- "compiled": from the first call until a call runs compiled code
  (``jit(f).lower(*args).compile(*args)``, then one call);
- "kernels": distinct kernels compiled; "calls": kernel calls per step;
- "compile": the workers' compile seconds summed, and the largest single kernel;
- "step": the steady compiled step, interleaved in rounds with JAX's (synchronous
  dispatch) in the same process, as a paired ratio of medians;
- JAX's first call (trace + compile + run, asynchronous dispatch) in its own process.

    python perf/compile_scaling.py [--workloads mlp1,mlp4,...] [--modes one,regions]
                                   [--rounds N] [--json PATH]

Run it alone, under the machine's CPU lock: ``flock /tmp/tf_numba_cpu.lock python ...``.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402
import region_compile as rc  # noqa: E402

DEFAULT_WORKLOADS = "mlp1,mlp2,mlp4,mlp8,mlp16,mlp32,mlp64,vae,gamma"

TF_CHILD = r'''
import json, sys, time
perf, name, rounds, regions = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
sys.path.insert(0, perf)
import _bench
''' + rc._WORKLOADS + rc._TF_LIB + rc.COMPILE_LOG + r'''
tf_lib.jit = lambda f: tf.jit(f, regions=regions)
fn, args = workload(tf_lib, name)
wall = time.perf_counter()
fn(*args)
first = time.perf_counter() - wall
low = fn.lower(*args)
low.compile(*args)
out = fn(*args)
compiled = time.perf_counter() - wall
plan = low.plan
calls = sum(1 for seg in plan.segments if hasattr(seg, "kernel"))
jax = _bench.setup_jax(sync=True)
''' + rc._JAX_LIB + r'''
jfn, jargs = workload(jax_lib, name)
jax.block_until_ready(jfn(*jargs))
tools = {"tf": lambda: fn(*args), "jax": lambda: jax.block_until_ready(jfn(*jargs))}
stats = _bench.measure(tools, rounds, batch_seconds=0.05)
seconds = [s for kind, _, s in compiles if kind == "kernel"]
print(json.dumps(dict(first=first, compiled=compiled, kernels=len(seconds), calls=calls,
                      compile=sum(seconds), largest=max(seconds, default=0.0),
                      step=stats["tf"]["median"], jax_sync_step=stats["jax"]["median"],
                      step_ratio=_bench.paired_ratio(stats["tf"], stats["jax"]))))
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    parser.add_argument("--modes", default="one,regions")
    parser.add_argument("--rounds", type=int, default=15, help="steady-step rounds")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    print("== compile_scaling: fresh processes, empty kernel cache, tiered jit")
    print(f"   {_bench.load_average()}")
    print(f"   {'workload':9}{'mode':>8}{'first':>8}{'compiled':>9}{'jax 1st':>8}{'/jax':>6}"
          f"{'kernels':>8}{'calls':>6}{'compile':>8}{'largest':>8}{'step':>10}"
          f"{'jax sync':>10}{'/jax':>6}{'other':>6}")
    perf = os.path.dirname(os.path.abspath(__file__))
    results = {}
    for name in args.workloads.split(","):
        jax = rc.run_child(rc.JAX_CHILD, (perf, name, "3"))
        for mode in args.modes.split(","):
            with _bench.ForeignLoad() as foreign:
                tf = rc.run_with_empty_cache(
                    TF_CHILD, (perf, name, str(args.rounds), "1" if mode == "regions" else "0"))
            results[f"{name}/{mode}"] = dict(tf=tf, jax=jax, foreign_cores=foreign.cores)
            other = "" if foreign.cores is None else f"{foreign.cores:.2f}"
            print(f"   {name:9}{mode:>8}{tf['first']:7.2f}s{tf['compiled']:8.2f}s"
                  f"{jax['first']:7.2f}s{tf['compiled'] / jax['first']:5.1f}x"
                  f"{tf['kernels']:8d}{tf['calls']:6d}{tf['compile']:7.2f}s{tf['largest']:7.2f}s"
                  f"{_bench.fmt_time(tf['step']):>10}{_bench.fmt_time(tf['jax_sync_step']):>10}"
                  f"{tf['step_ratio']:5.2f}x{other:>6}", flush=True)
    print(f"   {_bench.load_average()}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(results=results, machine=_bench.machine_info()), f, indent=1)


if __name__ == "__main__":
    main()
