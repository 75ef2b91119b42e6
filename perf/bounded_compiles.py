"""Compile seconds of every kernel of the programs whose kernels were the slowest to
compile: ``jit(random.gamma)``, ``jit(random.beta)`` (1000 shapes each) and the VAE step
(``region_compile``'s workloads), each in a fresh process with an empty kernel cache and
``jit(..., tiered=False)``, so numba compiles every kernel in the calling thread.

For each kernel: numba's compile seconds (tf_numba's compile log) and the lines of its
generated source; for the call: numba's slowest passes (``CompileSplit``, thread CPU)
and the helpers compiled for it.

    flock /tmp/tf_numba_cpu.lock python perf/bounded_compiles.py [--workloads gamma,beta,vae]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402
from region_compile import _TF_LIB, _WORKLOADS, COMPILE_LOG, run_with_empty_cache  # noqa: E402

CHILD = r'''
import json, sys, time
perf, name = sys.argv[1], sys.argv[2]
sys.path.insert(0, perf)
''' + _WORKLOADS + _TF_LIB + COMPILE_LOG + r'''
from region_call_cost import CompileSplit
fn, args = workload(tf_lib, name)
source = fn.lower(*args).as_text().split("== source ==")[-1]
lines = {}
for chunk in source.split("# segment ")[1:]:
    key = chunk.split("kernel ", 1)[1].split()[0]
    lines[key] = chunk.count("\n")
wall = time.perf_counter()
with CompileSplit() as split:
    fn(*args)
first = time.perf_counter() - wall
print(json.dumps(dict(
    first=first,
    kernels=[(s, lines.get(key.split(".")[0], 0)) for kind, key, s in compiles
             if kind == "kernel"],
    helpers=[(key, s) for kind, key, s in compiles if kind == "helper"],
    passes=sorted(split.passes.items(), key=lambda kv: -kv[1])[:4])))
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="gamma,beta,vae")
    args = parser.parse_args()
    print("== bounded_compiles: each kernel's compile, fresh process, empty kernel cache")
    print(f"   {_bench.load_average()}")
    perf = os.path.dirname(os.path.abspath(__file__))
    for name in args.workloads.split(","):
        r = run_with_empty_cache(CHILD, (perf, name), TF_NUMBA_TIERED="0")
        kernels = sorted(r["kernels"], reverse=True)
        print(f"   {name:6} first call {r['first']:6.2f}s  kernels (s, source lines): "
              + ", ".join(f"{s:.2f}/{n}" for s, n in kernels))
        print("          slowest passes: " + ", ".join(f"{p} {s:.2f}s" for p, s in r["passes"])
              + (f"; helpers: {len(r['helpers'])} in {sum(s for _, s in r['helpers']):.2f}s"
                 if r["helpers"] else ""))
    print(f"   {_bench.load_average()}")


if __name__ == "__main__":
    main()
