"""Run every benchmark (issues 4, 6, 7, 8), then write perf/RESULTS.md and the scaling charts (PNG).

Each benchmark runs in its own subprocess (``--json`` carries its numbers back). Before each
one the report waits, up to ``--max-wait`` seconds, until other processes leave the CPUs
idle, since on this 2-core machine someone else's test run moves every number; how busy
the machine was is recorded with the results either way. exp_chain and fused_elementwise
sweep more points than their targets need, for the charts. The BLAS-bound benchmarks run a
second time with one BLAS / XLA thread, which a busy machine cannot stall.

    python perf/report.py [--quick] [--only small_grad,matmul] [--max-wait 300]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# name, extra arguments (full run), extra arguments (--quick)
BENCHMARKS = [
    ("small_grad", [], []),
    ("exp_chain", ["--depths", "1,5,25,50,100,200"], ["--depths", "1,5,25,100,200"]),
    ("fused_elementwise", ["--sizes", "1e3,1e4,1e5,1e6,1e7"], ["--sizes", "1e3,1e4,1e5,1e6"]),
    ("mlp_step", [], []),
    ("matmul", [], []),
    ("compile_latency", [], []),
    ("loop_bench", [], []),
    ("nn_bench", [], []),
    ("ext_bench", [], []),
    ("eager_bench", [], []),
]
# BLAS-bound benchmarks run twice: as installed (2 BLAS threads), and with one thread per
# library, which another job holding a core cannot stall (2-thread OpenBLAS can lose 30x).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
ONE_THREAD_LABEL = "1 thread"
ONE_THREAD_RUNS = ("small_grad", "mlp_step", "matmul")


def wait_until_quiet(max_wait, threshold=0.3, window=3.0):
    """Wait until other processes use under ``threshold`` cores for ``window`` seconds."""
    start = time.monotonic()
    while True:
        with _bench.ForeignLoad() as foreign:
            time.sleep(window)
        if foreign.cores is None or foreign.cores < threshold:
            return time.monotonic() - start, foreign.cores
        if time.monotonic() - start > max_wait:
            return time.monotonic() - start, foreign.cores


def run_benchmark(name, extra, quick, out_json, max_wait, variant=None, env_extra=None):
    waited, busy = wait_until_quiet(max_wait)
    argv = [sys.executable, os.path.join(HERE, f"{name}.py"), *extra, "--json", out_json]
    if quick:
        argv.append("--quick")
    env = dict(os.environ, **(env_extra or {}))
    env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    title = name if variant is None else f"{name} ({variant}: " + " ".join(
        f"{k}={v!r}" for k, v in env_extra.items()) + ")"
    print(f"\n### {title} (waited {waited:.0f} s for a quiet machine; others then used "
          f"{busy:.2f} cores)" if busy is not None else f"\n### {title}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
        print(proc.stderr[-3000:], flush=True)
    data = None
    if proc.returncode == 0 and os.path.exists(out_json):
        with open(out_json) as f:
            data = json.load(f)
    return dict(name=name if variant is None else f"{name} ({variant})", script=name,
                title=title, argv=argv[1:], env=env_extra or {}, stdout=proc.stdout,
                stderr=proc.stderr, returncode=proc.returncode, elapsed=elapsed, data=data,
                waited=waited, busy_before=busy)


def _tool_series(data, key, filt=None):
    """{tool: [(x, median seconds)]} over the cases of one benchmark's JSON."""
    series = {}
    for case in data["cases"]:
        if filt and not filt(case):
            continue
        for tool, res in case["results"].items():
            series.setdefault(tool, []).append((case["params"][key], res["median"]))
    return {tool: sorted(points) for tool, points in series.items()}


STYLE = {"tf_numba": dict(color="C3", marker="o", linewidth=2.5),
         "numba": dict(color="C0", marker="s"), "numpy": dict(color="C2", marker="^"),
         "jax (async)": dict(color="C1", marker="v", linestyle="--"),
         "jax (sync)": dict(color="C1", marker="D"), "autograd": dict(color="C4", marker="x")}


def chart_exp_chain(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series = _tool_series(data, "k")
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    for tool, pts in series.items():
        ks, ts = zip(*pts)
        ax.plot(ks, [t * 1e6 for t in ts], label=tool, **STYLE.get(tool, {}))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chain length k (2k equations)")
    ax.set_ylabel("time per call (us)")
    ax.set_title("exp_chain: y = exp(y) * 0.25, 8 float64 values")
    ax.legend(fontsize=8)
    ratios = {}
    for case in data["cases"]:
        for tool, r in case["ratios_to_ref"].items():
            if r is not None:
                ratios.setdefault(tool, []).append((case["params"]["k"], r))
    for tool, pts in ratios.items():
        if tool == data["reference"]:
            continue
        ks, rs = zip(*sorted(pts))
        ax2.plot(ks, rs, label=tool, **STYLE.get(tool, {}))
    ax2.axhline(1.5, color="gray", linestyle=":", label="target 1.5x")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("chain length k")
    ax2.set_ylabel("time / numba loop")
    ax2.set_title("ratio to the numba loop")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def chart_fused(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, kind in zip(axes, ("forward", "grad")):
        series = _tool_series(data, "n", lambda c: c["params"]["kind"] == kind)
        for tool, pts in series.items():
            ns, ts = zip(*pts)
            ax.plot(ns, [t / n * 1e9 for n, t in pts], label=tool, **STYLE.get(tool, {}))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (float64 elements)")
        ax.set_title(f"fused_elementwise {kind}")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("ns per element")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _status(met):
    return {True: "met", False: "**not met**", None: "n/a", "info": "info, not a target"}[met]


def write_results(runs, quick, path, charts):
    machine = next((r["data"]["machine"] for r in runs if r["data"]), _bench.machine_info())
    lines = ["# tf_numba performance results (issues 4, 6, 7, 8)", "",
             f"Generated by `python perf/report.py{' --quick' if quick else ''}` on "
             f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}.", "",
             "Every table times the tools interleaved in one process (rounds of batches, "
             "rotating order, medians over rounds); ratios are time / time, so a ratio above "
             "1 in the `/ tf_numba` column means slower than tf_numba. JAX is reported with "
             "its default async dispatch and, from a child process of the same script, with "
             "`jax_cpu_enable_async_dispatch=False` (JAX at its best for small calls); that "
             "row's ratios are taken against tf_numba timed in the same child.", "",
             "## Machine", ""]
    for key in ("cpu", "cpus", "platform", "python", "numpy", "scipy", "numba", "jax", "jaxlib",
                "autograd", "matplotlib",
                "numpy_blas", "scipy_blas", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        lines.append(f"- {key}: {machine.get(key)}")
    lines += ["", "How busy the machine was (other processes' CPU use, in cores, while each "
              "benchmark measured; the machine has 2):", ""]
    for r in runs:
        d = r["data"]
        if not d:
            continue
        if "cases" in d:
            busy = [c.get("foreign_cores") for c in d["cases"] if c.get("foreign_cores")
                    is not None]
            text = ", ".join(f"{b:.2f}" for b in busy)
        else:
            text = f"{d.get('foreign_cores') or 0:.2f}"
        lines.append(f"- {r['name']}: {text} (run took {r['elapsed']:.0f} s)")
    lines += ["", "## Targets", "", "| benchmark | case | target (measured) | status |",
              "| --- | --- | --- | --- |"]
    for r in runs:
        if not r["data"]:
            lines.append(f"| {r['name']} | - | benchmark failed (exit {r['returncode']}) | "
                         "**failed** |")
            continue
        for s in r["data"]["summary"]:
            lines.append(f"| {r['name']} | {s['case']} | {s['target']} | {_status(s['met'])} |")
    if charts:
        lines += ["", "## Scaling charts", ""]
        for name, file in charts:
            lines += [f"![{name}]({file})", ""]
    lines += ["", "## Full tables", ""]
    for r in runs:
        args = " ".join(a for a in r["argv"][1:] if not a.endswith(".json") and a != "--json")
        env = "".join(f"{k}={v!r} " for k, v in r["env"].items())
        lines += [f"### {r['name']}", "", f"`{env}python perf/{r['script']}.py {args}".rstrip()
                  + "`", "", "```", r["stdout"].rstrip(), "```", ""]
        if r["returncode"] != 0:
            lines += ["stderr:", "", "```", r["stderr"][-3000:].rstrip(), "```", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer rounds")
    parser.add_argument("--only", default=None, help="comma-separated benchmark names")
    parser.add_argument("--max-wait", type=float, default=300.0,
                        help="seconds to wait for a quiet machine before each benchmark")
    parser.add_argument("--no-one-thread", action="store_true",
                        help="skip the single-thread reruns of the BLAS-bound benchmarks")
    parser.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"))
    args = parser.parse_args()
    wanted = set(args.only.split(",")) if args.only else None
    print(f"{_bench.load_average()}", flush=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, full, quick in BENCHMARKS:
            if wanted and name not in wanted:
                continue
            extra = quick if args.quick else full
            runs.append(run_benchmark(name, extra, args.quick,
                                      os.path.join(tmp, f"{name}.json"), args.max_wait))
            if name in ONE_THREAD_RUNS and not args.no_one_thread:
                runs.append(run_benchmark(name, extra, args.quick,
                                          os.path.join(tmp, f"{name}-1.json"), args.max_wait,
                                          ONE_THREAD_LABEL, ONE_THREAD))
    charts = []
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib is not installed: no charts")
    else:
        for r in runs:
            if r["data"] and r["name"] in ("exp_chain", "fused_elementwise"):
                file = f"{r['name']}.png"
                (chart_exp_chain if r["name"] == "exp_chain" else chart_fused)(
                    r["data"], os.path.join(HERE, file))
                charts.append((r["name"], file))
    write_results(runs, args.quick, args.output, charts)
    print(f"\nwrote {args.output}" + "".join(f", perf/{c}" for _, c in charts))


if __name__ == "__main__":
    main()
