"""Normal samples per second: ``tf.jit(lambda key: tf.random.normal(key, (n,)))`` against
``numpy.random.Generator.standard_normal`` (PCG64, ziggurat) and ``jax.jit`` of
``jax.random.normal`` (Threefry, as tf_numba), float32 and float64, n = 10^6
(10^5 with --quick). Also uniform, to show the cost of the bits alone.

tf_numba and JAX draw from a key (a new key each call costs the same); NumPy advances its
generator's state. Target: tf_numba's jitted normal at least as fast as NumPy's Generator.

    python perf/random_bench.py [--quick] [--rounds N] [--json PATH]
"""
import sys

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402


def build_case(bench, sampler, dtype, n):
    case = bench.case(f"{sampler} {np.dtype(dtype).name} n={n}", sampler=sampler,
                      dtype=np.dtype(dtype).name, n=n)
    key = tf.random.key(0)
    draw = getattr(tf.random, sampler)
    one = _bench.add_tf(case, lambda k: draw(k, (n,), dtype), (key,))
    moments = one(key)
    assert abs(float(np.mean(moments)) - (0.0 if sampler == "normal" else 0.5)) < 0.01
    if case.wants("numpy"):
        gen = np.random.default_rng(0)
        numpy_draw = {"normal": gen.standard_normal, "uniform": gen.random}[sampler]
        case.add("numpy", lambda: numpy_draw(n, dtype=dtype))
    if case.wants(_bench.JAX):
        jax = bench.jax
        jdraw = jax.jit(lambda k: getattr(jax.random, sampler)(k, (n,), dtype))
        jkey = jax.random.PRNGKey(0)
        jdraw(jkey).block_until_ready()
        case.add(_bench.JAX, lambda: jdraw(jkey).block_until_ready())
    return case


def targets(bench):
    def check(case):
        vs_numpy = bench.ratio_to_ref(case, _bench.TF)
        rows = [(f"tf_numba / numpy = {_bench.fmt_ratio(vs_numpy)} (<= 1.00x for normal)",
                 _bench.INFO if case.params["sampler"] != "normal" or vs_numpy is None
                 else vs_numpy <= 1.0)]
        jax_best = bench.jax_best(case)
        rows.append((f"best JAX / tf_numba = {_bench.fmt_ratio(jax_best)}", _bench.INFO))
        return rows
    return check


def main():
    bench = _bench.Bench("random_bench", __doc__, reference="numpy", default_rounds=11,
                         quick_rounds=5)
    n = 10 ** 5 if bench.quick else 10 ** 6
    cases = [build_case(bench, s, dt, n) for s in ("normal", "uniform")
             for dt in (np.float32, np.float64)]
    bench.run(cases, f"random samples, n = {n}", targets(bench))


if __name__ == "__main__":
    main()
