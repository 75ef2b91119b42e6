"""Prepare-hit and run fixed cost of the Runtime for programs of 3, 41 and 401 ops.

tenferro 0.8: prepare-hit 12 us (3 ops) and 89 us (41 ops), run fixed cost ~2 us.
Target: prepare-hit within 2x from 3 to 401 ops and under 10 us; run fixed cost under 2 us.
Run: python perf/prepare_cost.py
"""
import os
import statistics
import time

import numpy as np

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.runtime import CpuEngine, Runtime


def chain(n_ops):
    """A program of exactly ``n_ops`` equations on a symbolic vector."""
    def f(x):
        y = x
        for k in range(n_ops - 1):
            y = y * 1.0001 if k % 2 == 0 else y + 0.5
        return tnp.sum(y)
    program = tf.make_program(f)(tf.symbolic(("n",), name="x"))
    assert len(program.eqns) == n_ops, len(program.eqns)
    return program


def per_call(fn, number, repeats=15):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def main():
    rt, cpu = Runtime(), CpuEngine()
    target = [cpu.target()]
    x = np.ones(8)
    rows = []
    for n_ops in (3, 41, 401):
        program = chain(n_ops)
        prepared = rt.prepare(program, [x], target)
        rt.warm_up([cpu], prepared, [x])
        hit = per_call(lambda: rt.prepare(program, [x], target), 2000)
        run = per_call(lambda: rt.run([cpu], prepared, [x]), 2000)
        kernel = prepared.plan.segments[0].kernel.dispatcher
        direct = per_call(lambda: kernel(x), 2000)
        rows.append((n_ops, hit, run, direct))
    print(f"load average: {os.getloadavg()}")
    print(f"{'ops':>5} {'prepare hit':>12} {'run':>10} {'kernel only':>12} {'run overhead':>13}")
    for n_ops, hit, run, direct in rows:
        print(f"{n_ops:>5} {hit * 1e6:>10.2f}us {run * 1e6:>8.2f}us {direct * 1e6:>10.2f}us "
              f"{(run - direct) * 1e6:>11.2f}us")
    hits = [r[1] for r in rows]
    overheads = [r[2] - r[3] for r in rows]
    print(f"prepare-hit 401/3 ops ratio: {hits[-1] / hits[0]:.2f} (target <= 2), "
          f"max {max(hits) * 1e6:.2f} us (target < 10): "
          f"{'met' if hits[-1] / hits[0] <= 2 and max(hits) < 10e-6 else 'MISSED'}")
    print(f"run fixed cost (run - kernel call): max {max(overheads) * 1e6:.2f} us "
          f"(target < 2): {'met' if max(overheads) < 2e-6 else 'MISSED'}")
    print("tenferro 0.8: prepare-hit 12 us (3 ops), 89 us (41 ops); run fixed cost ~2 us")


if __name__ == "__main__":
    main()
