"""MLP training step: value_and_grad of a 784-256-10 tanh MLP with softmax cross-entropy.

Batch 128, float32, one-hot labels; loss = -sum(y * log_softmax(tanh(x W1 + b1) W2 + b2)) / 128,
the log-softmax written with a max shift (the max under stop_gradient, as jax.nn does).
Tools, timed interleaved in one process: tf_numba ``jit(value_and_grad(loss))`` with the
parameters as one tuple (a pytree) and with them as four array arguments, NumPy
hand-written forward + backward (the reference), the same in numba, JAX
``jit(value_and_grad(loss))`` in both dispatch configurations, and autograd.
Target: tf_numba at most NumPy hand-written's time, each as wide as the other: jit's
default engine runs one thread (its BLAS too), so where NumPy's BLAS takes every core
the faster of that and ``engine=CpuEngine(threads=os.cpu_count())`` is judged.

    python perf/mlp_step.py [--quick] [--rounds N] [--json PATH]
"""
import sys

import numba
import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402

BATCH, D_IN, D_HIDDEN, D_OUT = 128, 784, 256, 10


def loss(params, x, y):
    W1, b1, W2, b2 = params
    h = tnp.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - tf.stop_gradient(tnp.max(logits, axis=1, keepdims=True))
    logp = shifted - tnp.log(tnp.sum(tnp.exp(shifted), axis=1, keepdims=True))
    return -tnp.sum(y * logp) / x.shape[0]


def loss_flat(W1, b1, W2, b2, x, y):
    return loss((W1, b1, W2, b2), x, y)


def numpy_step(params, x, y):
    W1, b1, W2, b2 = params
    h = np.tanh(x @ W1 + b1)
    logits = h @ W2 + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    value = -np.sum(y * (shifted - np.log(s))) / x.shape[0]
    dlogits = (e / s - y) / x.shape[0]          # one-hot rows sum to 1
    dh = (dlogits @ W2.T) * (1 - h * h)
    return value, (x.T @ dh, dh.sum(axis=0), h.T @ dlogits, dlogits.sum(axis=0))


@numba.njit(nogil=True)
def _numba_step(W1, b1, W2, b2, x, y):
    n = x.shape[0]
    inv_n = np.float32(1.0) / np.float32(n)
    h = x @ W1
    for i in range(n):
        for j in range(h.shape[1]):
            h[i, j] = np.tanh(h[i, j] + b1[j])
    logits = h @ W2
    k = logits.shape[1]
    dlogits = np.empty_like(logits)
    value = np.float32(0.0)
    for i in range(n):
        m = logits[i, 0] + b2[0]
        for j in range(k):
            logits[i, j] += b2[j]
            m = max(m, logits[i, j])
        s = np.float32(0.0)
        for j in range(k):
            e = np.exp(logits[i, j] - m)
            dlogits[i, j] = e
            s += e
        log_s = np.log(s)
        for j in range(k):
            value -= y[i, j] * (logits[i, j] - m - log_s)
            dlogits[i, j] = (dlogits[i, j] / s - y[i, j]) * inv_n
    dh = dlogits @ W2.T
    for i in range(n):
        for j in range(dh.shape[1]):
            dh[i, j] *= np.float32(1.0) - h[i, j] * h[i, j]
    return (value * inv_n, x.T @ dh, dh.sum(axis=0), h.T @ dlogits, dlogits.sum(axis=0))


def numba_step(params, x, y):
    value, *grads = _numba_step(*params, x, y)
    return value, tuple(grads)


def _check(tool, got, want):
    value, grads = got
    _bench.assert_close(f"{tool} value", value, want[0], 1e-5)
    for name, g, w in zip(("W1", "b1", "W2", "b2"), grads, want[1]):
        _bench.assert_close(f"{tool} d{name}", g, w, 2e-3, 2e-6)


def build_case(bench):
    rng = np.random.default_rng(0)
    f32 = np.float32
    params = (
        (rng.standard_normal((D_IN, D_HIDDEN)) / np.sqrt(D_IN)).astype(f32),
        (rng.standard_normal(D_HIDDEN) * 0.1).astype(f32),
        (rng.standard_normal((D_HIDDEN, D_OUT)) / np.sqrt(D_HIDDEN)).astype(f32),
        (rng.standard_normal(D_OUT) * 0.1).astype(f32),
    )
    x = rng.uniform(0.0, 1.0, (BATCH, D_IN)).astype(f32)
    y = np.eye(D_OUT, dtype=f32)[rng.integers(0, D_OUT, BATCH)]
    case = bench.case(f"batch {BATCH}, {D_IN}-{D_HIDDEN}-{D_OUT}, float32",
                      batch=BATCH, sizes=[D_IN, D_HIDDEN, D_OUT], dtype="float32")
    want64 = numpy_step(tuple(p.astype(np.float64) for p in params), x.astype(np.float64),
                        y.astype(np.float64))

    def check(tool, got):
        assert all(g.dtype == f32 for g in got[1]) and np.asarray(got[0]).dtype == f32, \
            f"{tool} did not stay in float32"
        _check(tool, got, want64)
    _bench.add_tf(case, tf.value_and_grad(loss), (params, x, y), check)

    if case.wants("tf_numba (flat args)"):
        flat = tf.jit(tf.value_and_grad(loss_flat, argnums=(0, 1, 2, 3)))
        _bench.tf_compiled(flat, *params, x, y)
        got = flat(*params, x, y)
        _check("tf_numba (flat args)", got, want64)
        case.add("tf_numba (flat args)", lambda: flat(*params, x, y))
    if case.wants("numpy"):
        _check("numpy", numpy_step(params, x, y), want64)
        case.add("numpy", lambda: numpy_step(params, x, y))
    if case.wants("numba"):
        _check("numba", numba_step(params, x, y), want64)
        case.add("numba", lambda: numba_step(params, x, y))
    if case.wants(_bench.JAX):
        jax, jnp = bench.jax, bench.jax.numpy

        def jloss(params, x, y):
            W1, b1, W2, b2 = params
            logits = jnp.tanh(x @ W1 + b1) @ W2 + b2
            shifted = logits - jax.lax.stop_gradient(jnp.max(logits, axis=1, keepdims=True))
            logp = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
            return -jnp.sum(y * logp) / x.shape[0]
        jstep = jax.jit(jax.value_and_grad(jloss))
        jp, jx, jy = tuple(jnp.asarray(p) for p in params), jnp.asarray(x), jnp.asarray(y)
        _check("jax", jstep(jp, jx, jy), want64)
        case.add(_bench.JAX, lambda: jax.block_until_ready(jstep(jp, jx, jy)))
    if case.wants("autograd"):
        import autograd
        import autograd.numpy as anp

        def aloss(params, x, y):
            W1, b1, W2, b2 = params
            logits = anp.dot(anp.tanh(anp.dot(x, W1) + b1), W2) + b2
            shifted = logits - anp.max(logits, axis=1, keepdims=True)
            logp = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            return -anp.sum(y * logp) / x.shape[0]
        astep = autograd.value_and_grad(aloss)
        _check("autograd", astep(params, x, y), want64)
        case.add("autograd", lambda: astep(params, x, y))
    return case


def targets(bench):
    def check(case):
        judged = _bench.tf_judged(case)
        r = bench.ratio_to_ref(case, judged)
        flat = bench.ratio_to_ref(case, "tf_numba (flat args)")
        return [(f"{judged} / numpy hand-written = {_bench.fmt_ratio(r)} (<= 1.00x; NumPy's "
                 f"BLAS on {_bench.numpy_blas_threads()} threads)",
                 None if r is None else r <= 1.0),
                (f"tf_numba (flat args) / numpy = {_bench.fmt_ratio(flat)}; best JAX / tf_numba "
                 f"= {_bench.fmt_ratio(bench.jax_best(case))}", _bench.INFO)]
    return check


def main():
    bench = _bench.Bench("mlp_step", __doc__, reference="numpy")
    bench.run([build_case(bench)], "value_and_grad of a 784-256-10 tanh MLP, softmax "
              "cross-entropy, batch 128, float32", targets(bench))


if __name__ == "__main__":
    main()
