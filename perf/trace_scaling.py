"""Trace time per equation for programs of 10 to 10,000 equations: tracing must be linear.

The program is a chain of elementwise ops (sin, mul, add with a weak scalar) on a small
array, written with ``tf_numba.numpy`` once it has landed (else with the primitives).
Prints, per size, the equation count, the median trace time and the time per equation,
then the ratio max/min of the per-equation cost, and the CPU (in cores) other processes
used meanwhile (perf/_bench.ForeignLoad). Target: flat within 2x.

    python perf/trace_scaling.py [--budget SECONDS]
"""
import argparse
import gc
import os
import statistics
import time

import numpy as np

import _bench
import tf_numba as tf

SIZES = (10, 100, 1_000, 10_000)


def _steps():
    """One function per step, each emitting one equation."""
    try:
        import tf_numba.numpy as tnp
        if hasattr(tnp, "sin"):
            return "tnp", (tnp.sin, lambda y: y * y, lambda y: y + 0.5)
    except ImportError:
        pass
    from tf_numba.ops import elementwise as E
    return "ops", (E.sin, lambda y: E.mul(y, y), lambda y: E.add(y, 0.5))


SPELLING, STEPS = _steps()


def chain(n):
    def f(x):
        y = x
        for i in range(n):
            y = STEPS[i % len(STEPS)](y)
        return y
    return f


def median_time(fn, budget):
    """Median over repeats filling about ``budget`` seconds (at least 5, at most 2000)."""
    gc.collect()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < budget and len(times) < 2000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=1.0,
                        help="seconds of repeats per size (default 1)")
    args = parser.parse_args()
    x = np.linspace(0.1, 0.9, 8)
    print(f"load average: {os.getloadavg()}   spelling: {SPELLING}")
    print(f"{'target':>7} {'eqns':>6} {'runs':>5} {'trace ms':>9} {'us/eqn':>7} {'others':>6}")
    per_eqn = []
    for n in SIZES:
        f = chain(n)
        eqns = len(tf.make_program(f)(x).eqns)
        with _bench.ForeignLoad() as others:
            t, runs = median_time(lambda: tf.make_program(f)(x), args.budget)
        per_eqn.append(t / eqns)
        busy = f"{others.cores:6.2f}" if others.cores is not None else f"{'-':>6}"
        print(f"{n:>7} {eqns:>6} {runs:>5} {t * 1e3:9.3f} {t / eqns * 1e6:7.2f} {busy}")
    print(f"per-eqn cost max/min: {max(per_eqn) / min(per_eqn):.2f} (target <= 2)")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
