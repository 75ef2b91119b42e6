"""Small gradient: d/dW sum(tanh(W @ x)) for W 256x256, x 256x1, float32 and float64.

Tools, timed interleaved in one process: tf_numba ``jit(grad(f))``, NumPy hand-written,
hand-written numba (BLAS matvec, then one fused loop for the outer product), JAX
``jit(grad(f))`` in both dispatch configurations, and autograd. Per call, inputs already in
place (JAX: device arrays, result blocked on).
Target: tf_numba within 1.3x of hand-written numba and at least 2x faster than JAX (jax.jit
with its default dispatch, as in the issue's figures; JAX with synchronous dispatch is
reported beside it).

    python perf/small_grad.py [--quick] [--rounds N] [--json PATH]
"""
import sys

import numba
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

N = 256
TOLERANCE = {np.float32: 2e-4, np.float64: 1e-11}


def f(W, x):
    return tnp.sum(tnp.tanh(W @ x))


def numpy_grad(W, x):
    t = np.tanh(W @ x)
    return (1 - t * t) * x.T


def make_numba_grad(dtype):
    one = dtype(1)

    @numba.njit(nogil=True)
    def numba_grad(W, x):
        y = W @ x
        n, m = W.shape
        out = np.empty((n, m), W.dtype)
        for i in range(n):
            t = np.tanh(y[i, 0])
            d = one - t * t
            for j in range(m):
                out[i, j] = d * x[j, 0]
        return out
    return numba_grad


def build_case(bench, dtype):
    rng = np.random.default_rng(0)
    W = (rng.standard_normal((N, N)) / 16).astype(dtype)
    x = rng.standard_normal((N, 1)).astype(dtype)
    case = bench.case(np.dtype(dtype).name, dtype=np.dtype(dtype).name, n=N)
    want = numpy_grad(W.astype(np.float64), x.astype(np.float64))
    tol = TOLERANCE[dtype]

    g = tf.jit(tf.grad(f))
    case.note(_bench.first_call_note(*_bench.tf_compiled(g, W, x)))
    got = g(W, x)
    assert got.dtype == dtype, f"tf_numba returned {got.dtype} for {np.dtype(dtype).name}"
    _bench.assert_close("tf_numba", got, want, tol)
    case.add(_bench.TF, lambda: g(W, x))

    if case.wants("numpy"):
        _bench.assert_close("numpy", numpy_grad(W, x), want, tol)
        case.add("numpy", lambda: numpy_grad(W, x))
    if case.wants("numba"):
        nb = make_numba_grad(dtype)
        _bench.assert_close("numba", nb(W, x), want, tol)
        case.add("numba", lambda: nb(W, x))
    if case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy
        jg = jax.jit(jax.grad(lambda W, x: jnp.sum(jnp.tanh(W @ x))))
        Wj, xj = jnp.asarray(W), jnp.asarray(x)
        _bench.assert_close("jax", jg(Wj, xj), want, tol)
        case.add(_bench.JAX, lambda: jg(Wj, xj).block_until_ready())
    if case.wants("autograd"):
        import autograd
        import autograd.numpy as anp
        ag = autograd.grad(lambda W, x: anp.sum(anp.tanh(anp.dot(W, x))))
        _bench.assert_close("autograd", ag(W, x), want, tol)
        case.add("autograd", lambda: ag(W, x))
    return case


def targets(bench):
    # The JAX figures (35 / 76 us beside NumPy's 17 / 35 and numba's 10 / 14) are
    # jax.jit with its default asynchronous dispatch, so "2x faster than JAX" is judged
    # against that row. Against JAX at its best (synchronous dispatch: 9.3 / 16.1 us in
    # PERF_FACTS) it would ask for less than half the hand-written numba loop's time, which
    # the same issue calls the practical limit; that ratio is printed as information.
    def check(case):
        vs_numba = bench.ratio_to_ref(case, _bench.TF)
        jax_default = bench.ratio_to_tf(case, _bench.JAX_ASYNC)
        jax_best = bench.jax_best(case)
        return [(f"tf_numba / numba = {_bench.fmt_ratio(vs_numba)} (<= 1.30x)",
                 None if vs_numba is None else vs_numba <= 1.3),
                (f"JAX (default dispatch) / tf_numba = {_bench.fmt_ratio(jax_default)} "
                 "(>= 2.00x)", None if jax_default is None else jax_default >= 2.0),
                (f"best JAX / tf_numba = {_bench.fmt_ratio(jax_best)}", _bench.INFO)]
    return check


def main():
    bench = _bench.Bench("small_grad", __doc__, reference="numba")
    cases = [build_case(bench, dt) for dt in (np.float32, np.float64)]
    bench.run(cases, "jit(grad(sum(tanh(W @ x)))) w.r.t. W, W 256x256, x 256x1",
              targets(bench))


if __name__ == "__main__":
    main()
