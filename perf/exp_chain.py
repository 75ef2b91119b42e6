"""Dependency chain: y = exp(y) * 0.25 applied k = 1, 25, 200 times to 8 float64 values.

The function is traced once per k (a Python loop unrolled into 2k equations). Tools, timed
interleaved in one process: tf_numba ``jit(f)``, NumPy (the same Python loop over ufuncs), a
plain numba loop (the reference: k is a runtime argument, the chain runs per element), and
JAX ``jit(f)`` in both dispatch configurations. autograd is not timed: the benchmark is a
forward pass, where autograd is NumPy. With 8 values the time is call overhead plus 8k
exp calls, so it shows what a long fused chain costs per equation.
Target: tf_numba within 1.5x of the numba loop at every k.

    python perf/exp_chain.py [--quick] [--rounds N] [--depths 1,25,200] [--json PATH]
"""
import sys
import time

import numba
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

DEPTHS = (1, 25, 200)
SIZE = 8


def chain(k, exp):
    def f(y):
        for _ in range(k):
            y = exp(y) * 0.25
        return y
    return f


@numba.njit(nogil=True)
def numba_chain(x, k):
    out = np.empty_like(x)
    for i in range(x.size):
        y = x[i]
        for _ in range(k):
            y = np.exp(y) * 0.25
        out[i] = y
    return out


def build_case(bench, k):
    x = np.linspace(-1.0, 1.0, SIZE)
    want = chain(k, np.exp)(x)
    case = bench.case(f"k={k}", k=k, size=SIZE, dtype="float64")

    jf = tf.jit(chain(k, tnp.exp))
    case.note(_bench.first_call_note(*_bench.tf_compiled(jf, x)))
    got = jf(x)
    _bench.assert_close("tf_numba", got, want, 1e-13)
    case.add(_bench.TF, lambda: jf(x))

    if case.wants("numpy"):
        npf = chain(k, np.exp)
        case.add("numpy", lambda: npf(x))
    if case.wants("numba"):
        _bench.assert_close("numba", numba_chain(x, k), want, 1e-13)
        case.add("numba", lambda: numba_chain(x, k))
    if case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy
        jj = jax.jit(chain(k, jnp.exp))
        xj = jnp.asarray(x)
        t0 = time.perf_counter()
        jj(xj).block_until_ready()
        case.note(f"jax first call (trace + compile): "
                  f"{_bench.fmt_time(time.perf_counter() - t0)}")
        _bench.assert_close("jax", jj(xj), want, 1e-13)
        case.add(_bench.JAX, lambda: jj(xj).block_until_ready())
    return case


def targets(bench):
    def check(case):
        r = bench.ratio_to_ref(case, _bench.TF)
        return [(f"tf_numba / numba loop = {_bench.fmt_ratio(r)} (<= 1.50x)",
                 None if r is None else r <= 1.5)]
    return check


def main():
    bench = _bench.Bench("exp_chain", __doc__, reference="numba", extra_args=[
        (("--depths",), dict(default=",".join(map(str, DEPTHS)),
                             help="comma-separated chain lengths (report.py sweeps more)"))])
    cases = [build_case(bench, int(k)) for k in bench.args.depths.split(",")]
    bench.run(cases, f"y = exp(y) * 0.25 chained k times on {SIZE} float64 values",
              targets(bench))


if __name__ == "__main__":
    main()
