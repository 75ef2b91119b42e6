"""Fused elementwise: sum(exp(sin(x)*x + cos(x)**2)) and its gradient, n = 1e6 and 1e7.

Tools, timed interleaved in one process: tf_numba ``jit(f)`` / ``jit(grad(f))`` on one
thread (the default ``CpuEngine()``) and with ``engine=CpuEngine(threads=os.cpu_count())``
(its fused loops become ``numba.prange`` chunks), NumPy
hand-written (the gradient written out: exp(u) * (cos(x)*x + sin(x) - 2 cos(x) sin(x))),
single-loop numba (the reference: one pass, one core), JAX ``jit`` in both dispatch
configurations (XLA may use both cores at this size), and autograd for the gradient.
float64. ``--quick`` uses n = 1e5 and 1e6.
Target: tf_numba within 1.1x of single-loop numba (both one core), and faster than NumPy
and JAX (JAX uses every core, so it is compared with tf_numba on every core too).

    python perf/fused_elementwise.py [--quick] [--rounds N] [--sizes 1e4,1e6] [--json PATH]
"""
import sys

import numba
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

SIZES = (10**6, 10**7)
QUICK_SIZES = (10**5, 10**6)


def f(x):
    return tnp.sum(tnp.exp(tnp.sin(x) * x + tnp.cos(x) ** 2))


def numpy_f(x):
    return np.sum(np.exp(np.sin(x) * x + np.cos(x) ** 2))


def numpy_grad(x):
    s, c = np.sin(x), np.cos(x)
    return np.exp(s * x + c * c) * (c * x + s - 2 * c * s)


@numba.njit(nogil=True)
def numba_f(x):
    acc = 0.0
    for i in range(x.size):
        xi = x[i]
        c = np.cos(xi)
        acc += np.exp(np.sin(xi) * xi + c * c)
    return acc


@numba.njit(nogil=True)
def numba_grad(x):
    out = np.empty_like(x)
    for i in range(x.size):
        xi = x[i]
        s, c = np.sin(xi), np.cos(xi)
        out[i] = np.exp(s * xi + c * c) * (c * xi + s - 2.0 * c * s)
    return out


def _jax_fns(jax):
    jnp = jax.numpy

    def jf(x):
        return jnp.sum(jnp.exp(jnp.sin(x) * x + jnp.cos(x) ** 2))
    return jax.jit(jf), jax.jit(jax.grad(jf))


def build_cases(bench, n, judged=True):
    x = np.random.default_rng(0).uniform(-2.0, 2.0, n)
    label = f"n=1e{len(str(n)) - 1}"
    rounds = max(5, bench.rounds // 2) if n >= 10**7 else None
    fwd = bench.case(f"forward {label}", kind="forward", n=n, dtype="float64", judged=judged)
    grd = bench.case(f"grad {label}", kind="grad", n=n, dtype="float64", judged=judged)
    fwd.rounds = grd.rounds = rounds
    want_f, want_g = numpy_f(x), numpy_grad(x)

    _bench.add_tf(fwd, f, (x,), lambda tool, got: _bench.assert_close(
        f"{tool} forward", got, want_f, 1e-9))
    _bench.add_tf(grd, tf.grad(f), (x,), lambda tool, got: _bench.assert_close(
        f"{tool} grad", got, want_g, 1e-9, 1e-12))

    if fwd.wants("numpy"):
        fwd.add("numpy", lambda: numpy_f(x))
        grd.add("numpy", lambda: numpy_grad(x))
    if fwd.wants("numba"):
        _bench.assert_close("numba forward", numba_f(x), want_f, 1e-9)
        _bench.assert_close("numba grad", numba_grad(x), want_g, 1e-9, 1e-12)
        fwd.add("numba", lambda: numba_f(x))
        grd.add("numba", lambda: numba_grad(x))
    if fwd.wants(_bench.JAX):
        jf, jg = _jax_fns(bench.jax)
        xj = bench.jax.numpy.asarray(x)
        _bench.assert_close("jax forward", jf(xj), want_f, 1e-9)
        _bench.assert_close("jax grad", jg(xj), want_g, 1e-9, 1e-12)
        fwd.add(_bench.JAX, lambda: jf(xj).block_until_ready())
        grd.add(_bench.JAX, lambda: jg(xj).block_until_ready())
    if grd.wants("autograd"):
        import autograd
        import autograd.numpy as anp
        ag = autograd.grad(lambda x: anp.sum(anp.exp(anp.sin(x) * x + anp.cos(x) ** 2)))
        _bench.assert_close("autograd grad", ag(x), want_g, 1e-9, 1e-12)
        grd.add("autograd", lambda: ag(x))
    return [fwd, grd]


def targets(bench):
    def check(case):
        n = case.params["n"]
        vs_numba = bench.ratio_to_ref(case, _bench.TF)
        vs_numpy = case.ratio("numpy", _bench.TF)
        vs_jax = bench.jax_best(case)
        judged = _bench.tf_judged(case)
        vs_jax_judged = bench.jax_best_vs(case, judged)

        def judge(ratio, ok):
            if not case.params["judged"]:
                return _bench.INFO
            return None if ratio is None else ok(ratio)
        size_note = "" if case.params["judged"] else " [not a target size]"
        return [
            (f"tf_numba / numba single loop = {_bench.fmt_ratio(vs_numba)} (<= 1.10x){size_note}",
             judge(vs_numba, lambda r: r <= 1.1)),
            (f"numpy / tf_numba = {_bench.fmt_ratio(vs_numpy)} (> 1)",
             judge(vs_numpy, lambda r: r > 1.0)),
            (f"best JAX / tf_numba (one core) = {_bench.fmt_ratio(vs_jax)}", _bench.INFO),
            (f"best JAX / {judged} = {_bench.fmt_ratio(vs_jax_judged)} (> 1)",
             judge(vs_jax_judged, lambda r: r > 1.0)),
            ("ns/element: " + ", ".join(f"{tool} {r['median'] / n * 1e9:.1f}"
                                        for tool, r in case.results.items()), _bench.INFO),
        ]
    return check


def main():
    bench = _bench.Bench("fused_elementwise", __doc__, reference="numba", default_rounds=15,
                         quick_rounds=7, extra_args=[
                             (("--sizes",), dict(default=None, help=(
                                 "comma-separated n (report.py sweeps more); the targets are "
                                 "judged at the default sizes only")))])
    target_sizes = QUICK_SIZES if bench.quick else SIZES
    sizes = ([int(float(n)) for n in bench.args.sizes.split(",")] if bench.args.sizes
             else target_sizes)
    cases = []
    for n in sizes:
        cases += build_cases(bench, n, judged=n in target_sizes)
    bench.run(cases, "sum(exp(sin(x)*x + cos(x)**2)) and its gradient, float64", targets(bench))


if __name__ == "__main__":
    main()
