"""Loops: a 1,000-step RNN scan (h = tanh(W h + U x_t + b), 64 units) forward and gradient,
and a 1,000-step RK4 integration (fori_loop, Lorenz system) and its gradient w.r.t. the
initial state; then the memory of the scan gradient for 250/500/1000 steps.

Tools, timed interleaved in one process: tf_numba ``jit`` (the loop runs inside the numba
kernel), NumPy hand-written (BPTT for the RNN, a propagated 3x3 Jacobian for RK4), and JAX
``jit`` with ``lax.scan`` / ``lax.fori_loop`` in both dispatch configurations.
Target: tf_numba at least as fast as the faster JAX configuration on every case.

    python perf/loop_bench.py [--quick] [--rounds N] [--json PATH]
"""
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, __import__("os").path.dirname(__file__))
import _bench  # noqa: E402
import tf_numba as tf  # noqa: E402
import tf_numba.numpy as tnp  # noqa: E402
from tf_numba import lax  # noqa: E402
from tf_numba.transforms import ad  # noqa: E402

HIDDEN, INPUTS = 64, 16
DT, SIGMA, RHO, BETA = 0.001, 10.0, 28.0, 8.0 / 3.0


# ---------------------------------------------------------------- RNN

def rnn_loss(W, U, b, h0, xs):
    def cell(h, x):
        h = tnp.tanh(W @ h + U @ x + b)
        return h, h
    _, hs = lax.scan(cell, h0, xs)
    return tnp.sum(hs)


def numpy_rnn_forward(W, U, b, h0, xs):
    h, inputs = h0, xs @ U.T + b
    hs = np.empty((len(xs), len(h0)))
    for t in range(len(xs)):
        h = np.tanh(W @ h + inputs[t])
        hs[t] = h
    return hs


def numpy_rnn_loss(W, U, b, h0, xs):
    return numpy_rnn_forward(W, U, b, h0, xs).sum()


def numpy_rnn_grad(W, U, b, h0, xs):
    hs = numpy_rnn_forward(W, U, b, h0, xs)
    da = np.empty_like(hs)
    carried = np.zeros(len(h0))
    for t in range(len(xs) - 1, -1, -1):
        dh = 1.0 + carried
        da[t] = dh * (1.0 - hs[t] * hs[t])
        carried = W.T @ da[t]
    previous = np.vstack([h0[None], hs[:-1]])
    return da.T @ previous, da.T @ xs, da.sum(0)


def jax_rnn(jax):
    jnp = jax.numpy

    def loss(W, U, b, h0, xs):
        def cell(h, x):
            h = jnp.tanh(W @ h + U @ x + b)
            return h, h
        return jnp.sum(jax.lax.scan(cell, h0, xs)[1])
    return jax.jit(loss), jax.jit(jax.grad(loss, argnums=(0, 1, 2)))


def rnn_inputs(steps, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
            rng.normal(size=(HIDDEN, INPUTS)) / np.sqrt(INPUTS), rng.normal(size=HIDDEN) * 0.1,
            np.zeros(HIDDEN), rng.normal(size=(steps, INPUTS)))


# ---------------------------------------------------------------- RK4

def lorenz(y):
    return tnp.stack([SIGMA * (y[1] - y[0]), y[0] * (RHO - y[2]) - y[1],
                      y[0] * y[1] - BETA * y[2]])


def tf_rk4(steps):
    def rk4(y0):
        def step(i, y):
            k1 = lorenz(y)
            k2 = lorenz(y + 0.5 * DT * k1)
            k3 = lorenz(y + 0.5 * DT * k2)
            k4 = lorenz(y + DT * k3)
            return y + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return tnp.sum(lax.fori_loop(0, steps, step, y0))
    return rk4


def numpy_lorenz(y):
    return np.array([SIGMA * (y[1] - y[0]), y[0] * (RHO - y[2]) - y[1], y[0] * y[1] - BETA * y[2]])


def numpy_lorenz_jacobian(y):
    return np.array([[-SIGMA, SIGMA, 0.0], [RHO - y[2], -1.0, -y[0]], [y[1], y[0], -BETA]])


def numpy_rk4(y0, steps):
    y = np.array(y0)
    for _ in range(steps):
        k1 = numpy_lorenz(y)
        k2 = numpy_lorenz(y + 0.5 * DT * k1)
        k3 = numpy_lorenz(y + 0.5 * DT * k2)
        k4 = numpy_lorenz(y + DT * k3)
        y = y + (DT / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
    return y.sum()


def numpy_rk4_grad(y0, steps):
    """d sum(y_T) / d y0 by propagating the 3x3 Jacobian through every RK4 stage."""
    y, J = np.array(y0), np.eye(3)
    eye = np.eye(3)
    for _ in range(steps):
        k1 = numpy_lorenz(y)
        d1 = numpy_lorenz_jacobian(y)
        y2 = y + 0.5 * DT * k1
        k2 = numpy_lorenz(y2)
        d2 = numpy_lorenz_jacobian(y2) @ (eye + 0.5 * DT * d1)
        y3 = y + 0.5 * DT * k2
        k3 = numpy_lorenz(y3)
        d3 = numpy_lorenz_jacobian(y3) @ (eye + 0.5 * DT * d2)
        y4 = y + DT * k3
        k4 = numpy_lorenz(y4)
        d4 = numpy_lorenz_jacobian(y4) @ (eye + DT * d3)
        y = y + (DT / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        J = (eye + (DT / 6.0) * (d1 + 2 * d2 + 2 * d3 + d4)) @ J
    return J.sum(0)


def jax_rk4(jax, steps):
    jnp = jax.numpy

    def f(y):
        return jnp.stack([SIGMA * (y[1] - y[0]), y[0] * (RHO - y[2]) - y[1],
                          y[0] * y[1] - BETA * y[2]])

    def rk4(y0):
        def step(i, y):
            k1 = f(y)
            k2 = f(y + 0.5 * DT * k1)
            k3 = f(y + 0.5 * DT * k2)
            k4 = f(y + DT * k3)
            return y + (DT / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return jnp.sum(jax.lax.fori_loop(0, steps, step, y0))
    return jax.jit(rk4), jax.jit(jax.grad(rk4))


# ---------------------------------------------------------------- cases

def _tf(case, fn, args, want, tol):
    jitted = tf.jit(fn)
    case.note(_bench.first_call_note(*_bench.tf_compiled(jitted, *args)))
    _bench.assert_close("tf_numba", _flat(jitted(*args)), _flat(want), tol, tol)
    case.add(_bench.TF, lambda: jitted(*args))


def _flat(x):
    if isinstance(x, (tuple, list)):
        return np.concatenate([np.ravel(v) for v in x])
    return np.ravel(x)


def _jax(bench, case, fn, args, want, tol):
    if not case.wants(_bench.JAX):
        return
    jnp = bench.jax.numpy
    jargs = [jnp.asarray(a) for a in args]
    _bench.assert_close("jax", _flat([np.asarray(v) for v in _as_list(fn(*jargs))]), _flat(want),
                        tol, tol)
    case.add(_bench.JAX, lambda: bench.jax.block_until_ready(fn(*jargs)))


def _as_list(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def rnn_cases(bench, steps):
    args = rnn_inputs(steps)
    jax_f = jax_g = None
    if bench.jax is not None:
        jax_f, jax_g = jax_rnn(bench.jax)
    forward = bench.case(f"rnn forward, {steps} steps", kind="rnn_forward", steps=steps)
    want = numpy_rnn_loss(*args)
    _tf(forward, rnn_loss, args, want, 1e-10)
    if forward.wants("numpy"):
        forward.add("numpy", lambda: numpy_rnn_loss(*args))
    if jax_f is not None:
        _jax(bench, forward, jax_f, args, want, 1e-10)
    gradient = bench.case(f"rnn gradient (W, U, b), {steps} steps", kind="rnn_grad", steps=steps)
    want = numpy_rnn_grad(*args)
    _tf(gradient, tf.grad(rnn_loss, argnums=(0, 1, 2)), args, want, 1e-9)
    if gradient.wants("numpy"):
        gradient.add("numpy", lambda: numpy_rnn_grad(*args))
    if jax_g is not None:
        _jax(bench, gradient, jax_g, args, want, 1e-9)
    return [forward, gradient]


def rk4_cases(bench, steps):
    y0 = np.array([1.0, 1.0, 1.0])
    rk4 = tf_rk4(steps)
    jax_f = jax_g = None
    if bench.jax is not None:
        jax_f, jax_g = jax_rk4(bench.jax, steps)
    forward = bench.case(f"rk4 forward, {steps} steps", kind="rk4_forward", steps=steps)
    want = numpy_rk4(y0, steps)
    _tf(forward, rk4, (y0,), want, 1e-10)
    if forward.wants("numpy"):
        forward.add("numpy", lambda: numpy_rk4(y0, steps))
    if jax_f is not None:
        _jax(bench, forward, jax_f, (y0,), want, 1e-10)
    gradient = bench.case(f"rk4 gradient w.r.t. y0, {steps} steps", kind="rk4_grad", steps=steps)
    want = numpy_rk4_grad(y0, steps)
    _tf(gradient, tf.grad(rk4), (y0,), want, 1e-8)
    if gradient.wants("numpy"):
        gradient.add("numpy", lambda: numpy_rk4_grad(y0, steps))
    if jax_g is not None:
        _jax(bench, gradient, jax_g, (y0,), want, 1e-8)
    return [forward, gradient]


def memory_lines():
    """Residual bytes the scan gradient keeps, and the interpreter's tracemalloc peak."""
    lines = []
    for steps in (250, 500, 1000):
        args = rnn_inputs(steps)
        program = tf.make_program(rnn_loss)(*args)
        known, _, _ = ad.vjp_parts(program, [True, True, True, False, False])
        residual = sum(int(np.prod([int(d) for d in v.aval.shape])) * v.aval.dtype.itemsize
                       for v in known.outvars[1:])
        grad = tf.grad(rnn_loss, argnums=(0, 1, 2))
        tracemalloc.start()
        grad(*args)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        lines.append(f"scan gradient, {steps:>4} steps: residuals {residual / 1e6:6.3f} MB, "
                     f"interpreter tracemalloc peak {peak / 1e6:6.3f} MB")
    return lines


def targets(bench):
    def check(case):
        jax_ratio = bench.jax_best(case)
        return [(f"best JAX / tf_numba = {_bench.fmt_ratio(jax_ratio)} (>= 1.00x)",
                 None if jax_ratio is None else jax_ratio >= 1.0)]
    return check


def main():
    bench = _bench.Bench("loop_bench", __doc__, reference="numpy")
    steps = 200 if bench.quick else 1000
    cases = rnn_cases(bench, steps) + rk4_cases(bench, steps)
    bench.run(cases, f"scan RNN ({HIDDEN} units) and RK4 fori_loop, {steps} steps",
              targets(bench))
    if not bench.sync_child:
        print("\n-- memory of the scan gradient (linear in the number of steps)")
        for line in memory_lines():
            print("   " + line)


if __name__ == "__main__":
    main()
