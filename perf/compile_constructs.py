"""What numba's compile of a generated kernel costs per construct: a kernel's fixed cost,
each loop (1-D, and a 2-D nest), each array access, each scalar op, and each helper a
kernel calls (a ``vmath`` function, which must be inlined to vectorize, and the row sum,
which runs as a C function called by its symbol, beside the same sum linked in as a numba
callee, as kernels called it before).

Synthetic kernels in the shape the code generator writes, compiled in one process after
numba's one-time start, disk cache off; CPU seconds (``time.process_time``), the best of
``--repeats``. A cost per construct is the slope between two kernels that differ only in
how many of it they have.

    python perf/compile_constructs.py [--repeats N] [--json PATH]
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402

HEADER = ("import numpy as np\nimport numba\n"
          "from tf_numba.lowering import vmath, vreduce\n")


def _loops(n, nested, accesses=1, ops=1):
    """A kernel of ``n`` loop nests over ``x``'s shape, each reading ``accesses`` arrays
    and doing ``ops`` multiply-adds per element."""
    lines = ["def kernel(x, y, o):"]
    index = "i0, i1" if nested else "i0"
    for k in range(n):
        lines.append("    for i0 in range(x.shape[0]):")
        indent = "        "
        if nested:
            lines.append("        for i1 in range(x.shape[1]):")
            indent = "            "
        lines.append(indent + "s = 0.0")
        for a in range(accesses):
            lines.append(indent + f"s += {'xy'[a % 2]}[{index}]")
        for j in range(ops):
            lines.append(indent + f"s = s * 1.0001 + {k}.{j}5")
        lines.append(indent + f"o[{index}] = s")
    lines.append("    return 0")
    return "\n".join(lines) + "\n"


def _row_sums(n, call):
    """A kernel of ``n`` loops writing a row of sin(x) and summing it with ``call``."""
    lines = ["def kernel(x, y, o):",
             "    scratch = (np.empty((3, 64), np.int64), np.empty(64, np.float64))",
             "    row = np.empty((x.shape[0],), np.float64)",
             "    total = 0.0"]
    for k in range(n):
        lines += ["    for i0 in range(x.shape[0]):",
                  f"        row[i0] = vmath.sin(x[i0]) * {k}.5",
                  f"    total += {call}"]
    lines.append("    return total")
    return "\n".join(lines) + "\n"


def _compile(source, args, tag):
    import numba
    path = os.path.join(tempfile.gettempdir(), f"tf_numba_construct_{os.getpid()}_{tag}.py")
    with open(path, "w") as f:
        f.write(HEADER + source)
    spec = importlib.util.spec_from_file_location(f"construct_{tag}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = numba.njit(module.kernel, error_model="numpy", nogil=True)
    start = time.process_time()
    kernel.compile(tuple(numba.typeof(a) for a in args))
    elapsed = time.process_time() - start
    os.unlink(path)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    import numba
    import numpy as np
    from tf_numba.lowering import vreduce
    numba.njit(lambda v: v + 1)(1)           # numba's one-time start
    vreduce.register_native()
    flat = [np.ones(4096)] * 3
    grid = [np.ones((128, 32))] * 3
    counter = iter(range(10 ** 6))

    def best(source, args):
        return min(_compile(source, args, next(counter)) for _ in range(options.repeats))

    # linked: the row sum as a numba callee, as kernels called it before
    vreduce.pairwise_sum(np.ones(200), (np.empty((3, 64), np.int64), np.empty(64)))
    rows = {
        "kernel, 1 loop of 1 op (fixed cost)": best(_loops(1, False), flat),
        "1-D loop, each": (best(_loops(11, False), flat) - best(_loops(1, False), flat)) / 10,
        "2-D loop nest, each": (best(_loops(11, True), grid) - best(_loops(1, True), grid)) / 10,
        "array access (1-D), each": (best(_loops(1, False, 31), flat)
                                     - best(_loops(1, False, 1), flat)) / 30,
        "array access (2-D), each": (best(_loops(1, True, 31), grid)
                                     - best(_loops(1, True, 1), grid)) / 30,
        "scalar multiply-add, each": (best(_loops(1, False, 1, 41), flat)
                                      - best(_loops(1, False, 1, 1), flat)) / 40,
    }
    one = best(_row_sums(1, "row.sum()"), flat)
    rows["vmath.sin in a loop (inlined), per kernel"] = one - best(
        _loops(1, False), flat)
    rows["row sum by its C symbol (vreduce.pairwise_sum), per kernel"] = best(
        _row_sums(1, "vreduce.pairwise_sum(row, scratch)"), flat) - one
    rows["row sum linked in (vreduce._pairwise_unit), per kernel"] = best(
        _row_sums(1, "vreduce._pairwise_unit(row, scratch)"), flat) - one
    print(f"== compile_constructs: CPU seconds of numba's compile, best of {options.repeats}, "
          f"{_bench.load_average()}")
    for name, seconds in rows.items():
        print(f"   {name:58} {seconds * 1e3:7.0f} ms")
    print(f"   {_bench.load_average()}")
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"rows": rows, "machine": _bench.machine_info()}, f, indent=1)


if __name__ == "__main__":
    main()
