"""minimize: time to converge on the Rosenbrock function (BFGS), n = 10 and 100.

Tools, timed interleaved in one process, each from the same x0 to gtol 1e-5:
tf_numba ``jit(lambda x0: minimize(rosen, x0))`` (the whole optimizer, line search
included, in one compiled while_loop); ``scipy.optimize.minimize(method="BFGS",
jac=True)`` given tf_numba's jitted ``value_and_grad`` (SciPy's Python loop around
compiled gradients); ``jax.scipy.optimize.minimize(method="BFGS")`` under ``jax.jit``.
Each case notes every tool's function evaluations and distance to the minimum.

    python perf/optimize_bench.py [--quick] [--rounds N] [--json PATH] [--no-jax-sync]
"""
import sys

import numpy as np
import scipy.optimize as so

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402
from tf_numba.scipy import optimize  # noqa: E402

SCIPY = "scipy+tf grad"


def rosen(x):
    return tnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def build_case(bench, n):
    x0 = np.linspace(-1.2, 1.0, n)
    case = bench.case(f"n={n}", n=n)
    case.rounds = 5 if bench.quick else 11

    solve = tf.jit(lambda x: optimize.minimize(rosen, x))
    case.note(_bench.first_call_note(*_bench.tf_compiled(solve, x0)))
    res = solve(x0)
    assert bool(res.success), res.message
    _bench.assert_close("tf_numba", res.x, np.ones(n), 0, 1e-4)
    case.note(f"tf_numba: nit {int(res.nit)}, nfev {int(res.nfev)}, "
              f"max|x - 1| {np.max(np.abs(res.x - 1)):.1e}")
    case.add(_bench.TF, lambda: solve(x0))

    if case.wants(SCIPY):
        vg = tf.jit(tf.value_and_grad(rosen))
        _bench.tf_compiled(vg, x0)

        def scipy_run():
            return so.minimize(lambda x: vg(x), x0, jac=True, method="BFGS")
        ref = scipy_run()
        _bench.assert_close("scipy", ref.x, np.ones(n), 0, 1e-4)
        case.note(f"scipy: nit {ref.nit}, nfev {ref.nfev}, "
                  f"max|x - 1| {np.max(np.abs(ref.x - 1)):.1e}")
        case.add(SCIPY, scipy_run)
    if case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy
        from jax.scipy.optimize import minimize as jax_minimize

        def jrosen(x):
            return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        jsolve = jax.jit(lambda x: jax_minimize(jrosen, x, method="BFGS", tol=1e-5))
        xj = jnp.asarray(x0)
        jres = jsolve(xj)
        # not asserted: JAX's BFGS can stop early on this function (status != 0)
        case.note(f"jax: nit {int(jres.nit)}, nfev {int(jres.nfev)}, status "
                  f"{int(jres.status)}, success {bool(jres.success)}, "
                  f"max|x - 1| {np.max(np.abs(np.asarray(jres.x) - 1)):.1e}")
        case.add(_bench.JAX, lambda: jsolve(xj).x.block_until_ready())
    return case


def targets(bench):
    def check(case):
        return [(f"{SCIPY} / tf_numba = {_bench.fmt_ratio(bench.ratio_to_tf(case, SCIPY))}",
                 _bench.INFO),
                (f"best JAX / tf_numba = {_bench.fmt_ratio(bench.jax_best(case))}",
                 _bench.INFO)]
    return check


def main():
    bench = _bench.Bench("optimize_bench", __doc__, reference=SCIPY)
    sizes = (10,) if bench.quick else (10, 100)
    cases = [build_case(bench, n) for n in sizes]
    bench.run(cases, "minimize(rosen, x0), BFGS to gtol 1e-5, time to converge",
              targets(bench))


if __name__ == "__main__":
    main()
