"""How the cost of reverse mode grows with depth: trace, build the gradient, simplify.

For ``x`` of 16 float64 values and ``acc = acc * x + x`` repeated ``depth`` times, then
summed, prints per depth: the time to trace ``f``, to build its gradient program
(``transforms.ad.grad_program``), to simplify that, the equation counts, the time per
equation of the whole pipeline, and (if jax is importable) ``jax.make_jaxpr(jax.grad(f))``.
Medians over many runs; "others" is the CPU (in cores) other processes used meanwhile
(perf/_bench.ForeignLoad), since the load average lags. Target: depth 200 built +
simplified in under 20 ms, and a flat per-equation cost (linear scaling).

    python perf/ad_scaling.py [--repeats N]
"""
import argparse
import gc
import os
import statistics
import time

import numpy as np

import _bench
import tf_numba as tf
from tf_numba.transforms.ad import grad_program
from tf_numba.transforms.simplify import simplify

DEPTHS = (5, 20, 50, 100, 200)


def _spelling():
    """The tnp spelling when ``tf_numba.numpy`` has landed, else the primitives directly."""
    try:
        import tf_numba.numpy as tnp
        if hasattr(tnp, "sum"):
            return "tnp", tnp.sum
    except ImportError:
        pass
    from tf_numba.ops.reductions import reduce_sum
    return "ops", reduce_sum


SPELLING, SUM = _spelling()


def chain(depth):
    from tf_numba.ops import elementwise as E

    def f(x):
        acc = x
        for _ in range(depth):
            acc = acc * x + x if SPELLING == "tnp" else E.add(E.mul(acc, x), x)
        return SUM(acc)
    return f


def median_time(fn, repeats):
    gc.collect()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def jax_time(depth, x, repeats):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)

    def f(x):
        acc = x
        for _ in range(depth):
            acc = acc * x + x
        return jnp.sum(acc)
    jaxpr = jax.make_jaxpr(jax.grad(f))(x)
    return median_time(lambda: jax.make_jaxpr(jax.grad(f))(x), repeats), len(jaxpr.eqns)


def _cores(load):
    return f"{load.cores:6.2f}" if load.cores is not None else f"{'-':>6}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    args = parser.parse_args()
    x = np.linspace(0.1, 0.9, 16)
    print(f"load average: {os.getloadavg()}   spelling: {SPELLING}   "
          f"medians of {args.repeats} runs, times in ms")
    header = (f"{'depth':>5} {'eqns':>5} {'grad eqns':>9} {'simpl eqns':>10} {'trace':>7} "
              f"{'grad':>7} {'simplify':>8} {'grad+simp':>9} {'us/eqn':>7} {'jax':>7} "
              f"{'jax eqns':>8} {'others':>6}")
    print(header)
    per_eqn = {}
    for depth in DEPTHS:
        f = chain(depth)
        program = tf.make_program(f)(x)
        gprog = grad_program(program, [True], keep_outputs=False)
        sprog = simplify(gprog)
        with _bench.ForeignLoad() as others:
            t_trace = median_time(lambda: tf.make_program(f)(x), args.repeats)
            t_grad = median_time(lambda: grad_program(program, [True], keep_outputs=False),
                                 args.repeats)
            t_simp = median_time(lambda: simplify(gprog), args.repeats)
            t_jax, jax_eqns = jax_time(depth, x, max(5, args.repeats // 3))
        total = t_grad + t_simp
        per_eqn[depth] = (t_trace + total) / len(program.eqns)
        jax_text = (f"{t_jax * 1e3:7.2f} {jax_eqns:>8}" if t_jax is not None
                    else f"{'-':>7} {'-':>8}")
        print(f"{depth:>5} {len(program.eqns):>5} {len(gprog.eqns):>9} {len(sprog.eqns):>10} "
              f"{t_trace * 1e3:7.2f} {t_grad * 1e3:7.2f} {t_simp * 1e3:8.2f} {total * 1e3:9.2f} "
              f"{per_eqn[depth] * 1e6:7.1f} {jax_text} {_cores(others)}")
    costs = list(per_eqn.values())
    deepest = DEPTHS[-1]
    f = chain(deepest)
    program = tf.make_program(f)(x)
    t_build = median_time(lambda: simplify(grad_program(program, [True], keep_outputs=False)),
                          args.repeats)
    print(f"per-eqn cost max/min over depths {DEPTHS[1]}..{deepest}: "
          f"{max(costs[1:]) / min(costs[1:]):.2f} (target <= 2)")
    print(f"depth {deepest} gradient built + simplified: {t_build * 1e3:.2f} ms (target < 20)")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
