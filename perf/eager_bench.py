"""Un-jitted transforms: tf_numba's grad / value_and_grad / hessian without jit, against
autograd and hand-written NumPy gradients, in one process.

An un-jitted transform traces the function on every call (Python control flow sees this
call's values, as under autograd), looks its transformed program up by the trace's
structure (``tf_numba/transforms/cache.py``) and interprets it with NumPy, so its cost is
tracing plus NumPy's. Cases:

- ``small_grad``: ``grad(sum(tanh(W @ x)))`` w.r.t. W, W n x n, x n x 1 (n = 16: the
  per-call overhead; n = 256: the issue's figure, where NumPy's work shows).
- ``mlp``: ``value_and_grad`` of a 2-layer tanh MLP's squared error, 32-64-10, batch 64,
  parameters a list of (W, b) pairs.
- ``rnn``: ``grad`` of a tanh RNN run by a Python ``for`` loop over 20 steps (hidden 32,
  input 8), loss on the last state: 20 x 5 traced operations a call.
- ``hessian``: ``hessian(sum(sin(x) * x) + sum(x) ** 2)``, x of 8.

Target: tf_numba within 1.5x of autograd on each case.

    python perf/eager_bench.py [--quick] [--rounds N] [--json PATH]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

TARGET = 1.5


def small_grad_case(bench, n):
    rng = np.random.default_rng(0)
    W, x = rng.standard_normal((n, n)) / 16, rng.standard_normal((n, 1))

    def numpy_grad(W, x):
        t = np.tanh(W @ x)
        return (1 - t * t) * x.T
    want = numpy_grad(W, x)
    case = bench.case(f"small_grad n={n}", n=n)
    g = tf.grad(lambda W, x: tnp.sum(tnp.tanh(W @ x)))
    _bench.assert_close("tf_numba", g(W, x), want, 1e-12)
    case.add(_bench.TF, lambda: g(W, x))
    case.add("numpy", lambda: numpy_grad(W, x))
    if case.wants("autograd"):
        import autograd
        import autograd.numpy as anp
        ag = autograd.grad(lambda W, x: anp.sum(anp.tanh(anp.dot(W, x))))
        _bench.assert_close("autograd", ag(W, x), want, 1e-12)
        case.add("autograd", lambda: ag(W, x))
    return case


def mlp_case(bench):
    rng = np.random.default_rng(1)
    sizes, batch = (32, 64, 10), 64
    params = [(rng.standard_normal((m, k)) / np.sqrt(m), np.zeros(k))
              for m, k in zip(sizes[:-1], sizes[1:])]
    x, y = rng.standard_normal((batch, sizes[0])), rng.standard_normal((batch, sizes[-1]))

    def make_loss(np_):
        def loss(params, x, y):
            (W1, b1), (W2, b2) = params
            h = np_.tanh(np_.dot(x, W1) + b1)
            return np_.mean((np_.dot(h, W2) + b2 - y) ** 2)
        return loss

    def numpy_value_and_grad(params, x, y):
        (W1, b1), (W2, b2) = params
        h = np.tanh(x @ W1 + b1)
        err = h @ W2 + b2 - y
        d_out = 2 * err / err.size
        d_h = (d_out @ W2.T) * (1 - h * h)
        return np.mean(err ** 2), [(x.T @ d_h, d_h.sum(0)), (h.T @ d_out, d_out.sum(0))]
    want_value, want = numpy_value_and_grad(params, x, y)
    case = bench.case("mlp value_and_grad", sizes=sizes, batch=batch)
    vg = tf.value_and_grad(make_loss(tnp))
    value, got = vg(params, x, y)
    _bench.assert_close("tf_numba", value, want_value, 1e-12)
    for (gw, gb), (ww, wb) in zip(got, want):
        _bench.assert_close("tf_numba", gw, ww, 1e-10, 1e-15)
        _bench.assert_close("tf_numba", gb, wb, 1e-11, 1e-15)
    case.add(_bench.TF, lambda: vg(params, x, y))
    case.add("numpy", lambda: numpy_value_and_grad(params, x, y))
    if case.wants("autograd"):
        import autograd
        import autograd.numpy as anp
        ag = autograd.value_and_grad(make_loss(anp))
        _bench.assert_close("autograd", ag(params, x, y)[1][0][0], want[0][0], 1e-10, 1e-15)
        case.add("autograd", lambda: ag(params, x, y))
    return case


def rnn_case(bench):
    rng = np.random.default_rng(2)
    hidden, inputs, steps = 32, 8, 20
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    U = rng.standard_normal((hidden, inputs)) / np.sqrt(inputs)
    b, h0 = np.zeros(hidden), np.zeros(hidden)
    xs = rng.standard_normal((steps, inputs))

    def make_loss(np_):
        def loss(W, U, b, h0, xs):
            h = h0
            for t in range(xs.shape[0]):
                h = np_.tanh(np_.dot(W, h) + np_.dot(U, xs[t]) + b)
            return np_.sum(h ** 2)
        return loss

    def numpy_grad(W, U, b, h0, xs):
        hs = [h0]
        for t in range(xs.shape[0]):
            hs.append(np.tanh(W @ hs[-1] + U @ xs[t] + b))
        gW, gU, gb = np.zeros_like(W), np.zeros_like(U), np.zeros_like(b)
        d_h = 2 * hs[-1]
        for t in reversed(range(xs.shape[0])):
            d_pre = d_h * (1 - hs[t + 1] ** 2)
            gW += np.outer(d_pre, hs[t])
            gU += np.outer(d_pre, xs[t])
            gb += d_pre
            d_h = W.T @ d_pre
        return gW, gU, gb
    want = numpy_grad(W, U, b, h0, xs)
    case = bench.case(f"rnn grad {steps} steps", hidden=hidden, steps=steps)
    g = tf.grad(make_loss(tnp), argnums=(0, 1, 2))
    for got, w in zip(g(W, U, b, h0, xs), want):
        _bench.assert_close("tf_numba", got, w, 1e-11)
    case.add(_bench.TF, lambda: g(W, U, b, h0, xs))
    case.add("numpy", lambda: numpy_grad(W, U, b, h0, xs))
    if case.wants("autograd"):
        import autograd
        import autograd.numpy as anp
        ag = autograd.grad(make_loss(anp), argnum=0)
        _bench.assert_close("autograd", ag(W, U, b, h0, xs), want[0], 1e-11)
        # autograd takes one argnum at a time: its grad over all three is a tuple argument
        ag3 = autograd.grad(lambda p, h0, xs: make_loss(anp)(*p, h0, xs))
        case.add("autograd", lambda: ag3((W, U, b), h0, xs))
    return case


def hessian_case(bench):
    x = np.linspace(-1.0, 1.5, 8)

    def make_f(np_):
        return lambda x: np_.sum(np_.sin(x) * x) + np_.sum(x) ** 2

    def numpy_hessian(x):
        return np.diag(2 * np.cos(x) - x * np.sin(x)) + 2.0
    want = numpy_hessian(x)
    case = bench.case("hessian n=8", n=x.size)
    h = tf.hessian(make_f(tnp))
    _bench.assert_close("tf_numba", h(x), want, 1e-12)
    case.add(_bench.TF, lambda: h(x))
    case.add("numpy", lambda: numpy_hessian(x))
    if case.wants("autograd"):
        import autograd
        import autograd.numpy as anp
        ah = autograd.hessian(make_f(anp))
        _bench.assert_close("autograd", ah(x), want, 1e-12)
        case.add("autograd", lambda: ah(x))
    return case


def targets(bench):
    def check(case):
        vs_autograd = bench.ratio_to_ref(case, _bench.TF)
        vs_numpy = case.ratio(_bench.TF, "numpy")
        return [(f"tf_numba / autograd = {_bench.fmt_ratio(vs_autograd)} (<= {TARGET:.2f}x)",
                 None if vs_autograd is None else vs_autograd <= TARGET),
                (f"tf_numba / NumPy hand-written = {_bench.fmt_ratio(vs_numpy)}", _bench.INFO)]
    return check


def main():
    bench = _bench.Bench("eager_bench", __doc__, reference="autograd")
    bench.jax = None        # no JAX tool here: no sync-dispatch child either
    cases = [small_grad_case(bench, 16), small_grad_case(bench, 256), mlp_case(bench),
             rnn_case(bench), hessian_case(bench)]
    bench.run(cases, "un-jitted grad / value_and_grad / hessian against autograd",
              targets(bench))


if __name__ == "__main__":
    main()
