"""tf_numba.scipy.integrate: quadrature of samples against SciPy (values and, since the rules
are linear in y, their gradients against SciPy's weights), and odeint against
scipy.integrate.odeint, finite differences and jax.experimental.ode."""
import numpy as np
import pytest
import scipy.integrate as si

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError, UnsupportedError
from tf_numba.scipy import integrate

RNG = np.random.default_rng(0)


def _weights(rule, y, **kw):
    """SciPy's rule applied to each unit vector: the gradient of sum(rule(y))."""
    flat = np.eye(y.size).reshape((y.size,) + y.shape)
    return np.array([np.sum(rule(e, **kw)) for e in flat]).reshape(y.shape)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 9])
@pytest.mark.parametrize("spacing", ["dx", "x1d", "xnd"])
def test_simpson_matches_scipy(n, spacing):
    y = RNG.standard_normal((3, n))
    kw = {"dx": 0.3} if spacing == "dx" else \
        {"x": np.cumsum(RNG.uniform(0.1, 1.0, n))} if spacing == "x1d" else \
        {"x": np.cumsum(RNG.uniform(0.1, 1.0, (3, n)), axis=1)}
    np.testing.assert_allclose(integrate.simpson(y, **kw), si.simpson(y, **kw), rtol=1e-13)
    got = tf.grad(lambda v: tnp.sum(integrate.simpson(v, **kw)))(y)
    np.testing.assert_allclose(got, _weights(si.simpson, y, **kw), rtol=1e-12, atol=1e-14)


def test_simpson_along_axis_0_and_float32():
    y = RNG.standard_normal((6, 2)).astype(np.float32)
    x = np.linspace(0.0, 1.0, 6) ** 2
    np.testing.assert_allclose(integrate.simpson(y, x=x, axis=0), si.simpson(y, x=x, axis=0),
                               rtol=1e-6)
    np.testing.assert_allclose(integrate.simpson(y, axis=0), si.simpson(y, axis=0), rtol=1e-6)
    assert integrate.simpson(y[:5], axis=0).dtype == si.simpson(y[:5], axis=0).dtype


@pytest.mark.parametrize("spacing", ["dx", "x1d", "xnd"])
@pytest.mark.parametrize("initial", [None, 0])
def test_cumulative_trapezoid_matches_scipy(spacing, initial):
    y = RNG.standard_normal((2, 5))
    kw = {"dx": 0.5} if spacing == "dx" else \
        {"x": np.cumsum(RNG.uniform(0.1, 1.0, 5))} if spacing == "x1d" else \
        {"x": np.cumsum(RNG.uniform(0.1, 1.0, (2, 5)), axis=1)}
    want = si.cumulative_trapezoid(y, initial=initial, **kw)
    np.testing.assert_allclose(integrate.cumulative_trapezoid(y, initial=initial, **kw), want,
                               rtol=1e-14)
    got = tf.grad(lambda v: tnp.sum(integrate.cumulative_trapezoid(v, initial=initial,
                                                                   **kw)))(y)
    np.testing.assert_allclose(got, _weights(si.cumulative_trapezoid, y, initial=initial,
                                             **kw), rtol=1e-13)


def test_quadrature_rejects_mismatched_x():
    with pytest.raises(ShapeError, match="simpson"):
        integrate.simpson(np.ones(5), x=np.arange(4.0))
    with pytest.raises(ShapeError, match="initial"):
        integrate.cumulative_trapezoid(np.ones(5), initial=1.0)


def test_trapezoid_is_numpys():
    y = RNG.standard_normal(7)
    assert integrate.trapezoid(y, dx=0.2) == pytest.approx(np.trapezoid(y, dx=0.2), rel=1e-14)


# ---------------------------------------------------------------- odeint

def lotka_volterra(y, t, a, b, c, d):
    prey, pred = y[0], y[1]
    return tnp.stack([a * prey - b * prey * pred, -c * pred + d * prey * pred])


def lotka_volterra_np(y, t, a, b, c, d):
    return np.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


Y0 = np.array([1.0, 0.8])
TS = np.linspace(0.0, 4.0, 9)
THETA = np.array([1.0, 0.5, 1.5, 0.75])


def lv_loss(y0, theta, ts=TS, tol=None):
    ys = integrate.odeint(lotka_volterra, y0, ts, theta[0], theta[1], theta[2], theta[3],
                          rtol=tol, atol=tol)
    return tnp.sum(ys[:, 0] ** 2 + tnp.sin(ys[:, 1]))


def test_odeint_matches_scipy_to_its_tolerance():
    want = si.odeint(lotka_volterra_np, Y0, TS, args=tuple(THETA), rtol=1e-12, atol=1e-12)
    got = integrate.odeint(lotka_volterra, Y0, TS, args=tuple(THETA))
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=2e-7)
    tight = integrate.odeint(lotka_volterra, Y0, TS, *THETA, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(tight, want, rtol=1e-9, atol=1e-9)


def test_odeint_takes_pytrees_tfirst_float32_and_complex():
    def f(t, state, k):
        return {"a": -k * state["a"], "b": state["a"] * tnp.ones(2)}
    ys = integrate.odeint(f, {"a": 1.0, "b": np.zeros(2)}, np.array([0.0, 1.0, 2.0]), 0.5,
                          tfirst=True)
    np.testing.assert_allclose(ys["a"], np.exp(-0.5 * np.array([0.0, 1.0, 2.0])), rtol=1e-7)
    np.testing.assert_allclose(ys["b"][:, 1], 2 * (1 - np.exp(-0.5 * np.array([0., 1., 2.]))),
                               rtol=1e-7)
    y32 = integrate.odeint(lambda y, t: -y, np.ones(2, np.float32), np.array([0.0, 1.0]),
                           rtol=1e-6, atol=1e-6)
    assert y32.dtype == np.float32
    np.testing.assert_allclose(y32[-1], np.exp(-1.0), rtol=1e-5)
    ts = np.linspace(0.0, 2.0, 5)
    yc = integrate.odeint(lambda y, t: 1j * y, np.array([1.0 + 0.5j]), ts)
    assert yc.dtype == np.complex128
    np.testing.assert_allclose(yc[:, 0], (1.0 + 0.5j) * np.exp(1j * ts), rtol=1e-7)


def _central(fn, x, h=1e-5):
    return np.array([(fn(x + h * e) - fn(x - h * e)) / (2 * h) for e in np.eye(len(x))])


def test_odeint_gradient_matches_finite_differences():
    # tight tolerances: the adjoint's error and the differences' noise (tol / h) stay small
    def loss(y, p):
        return lv_loss(y, p, TS[:5], tol=1e-11)
    g_y0, g_theta = tf.grad(loss, argnums=(0, 1))(Y0, THETA)
    np.testing.assert_allclose(g_y0, _central(lambda y: loss(y, THETA), Y0), rtol=1e-6)
    np.testing.assert_allclose(g_theta, _central(lambda p: loss(Y0, p), THETA), rtol=1e-6)


def test_odeint_gradient_in_the_times_and_in_closed_over_values():
    ts = TS[:5:2]
    g_t = tf.grad(lambda ts: lv_loss(Y0, THETA, ts, 1e-11))(ts)
    np.testing.assert_allclose(g_t, _central(lambda ts: lv_loss(Y0, THETA, ts, 1e-11), ts),
                               rtol=1e-6, atol=1e-6)

    def closed(k):                      # func closes over the traced k
        return integrate.odeint(lambda y, t: -k * y, 1.0, np.array([0.0, 1.0]))[-1]
    assert tf.grad(closed)(2.0) == pytest.approx(-np.exp(-2.0), rel=1e-7)


def test_odeint_second_derivative():
    # y(1) = exp(-k): d2/dk2 = exp(-k); the adjoint's own solve is differentiated
    def y1(k):
        return integrate.odeint(lambda y, t, k: -k * y, 1.0, np.array([0.0, 1.0]), k)[-1]
    assert tf.grad(tf.grad(y1))(0.7) == pytest.approx(np.exp(-0.7), rel=1e-6)
    # forward mode differentiates the solver's own steps (no adjoint): the same value
    assert tf.jvp(y1, (0.7,), (1.0,))[1] == pytest.approx(-np.exp(-0.7), rel=1e-7)


def test_odeint_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    from jax.experimental.ode import odeint as jax_odeint
    jnp = jax.numpy

    def jax_loss(y0, theta):
        def f(y, t, a, b, c, d):
            return jnp.stack([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])
        ys = jax_odeint(f, y0, TS, *theta, rtol=1e-10, atol=1e-10)
        return jnp.sum(ys[:, 0] ** 2 + jnp.sin(ys[:, 1]))
    # the step sequences differ (JAX's first step uses the 2-norm, Hairer's rule the RMS
    # norm), so the two agree to the tolerance, not to the bit
    want = jax.grad(jax_loss, argnums=(0, 1))(Y0, tuple(THETA))
    got = tf.grad(lambda y, p: lv_loss(y, p, tol=1e-10), argnums=(0, 1))(Y0, THETA)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-8)
    np.testing.assert_allclose(got[1], np.array(want[1]), rtol=1e-8)


def test_odeint_adjoint_memory_does_not_grow_with_the_steps(monkeypatch):
    import tracemalloc
    from tf_numba.core import interpreter
    # a loop body run often enough is written out as a Python function once (a transient
    # allocation of its own, which only the longer solve would reach): not the tape
    monkeypatch.setattr(interpreter, "COMPILE_AFTER_RUNS", 10 ** 9)
    k, y0, ts = np.linspace(0.5, 2.0, 200), np.ones(200), np.array([0.0, 3.0])

    def rhs(y, t, k):
        return -k * y + 0.1 * tnp.sin(t)

    def adjoint(k, tol):
        ys = integrate.odeint(rhs, y0, ts, k, rtol=tol, atol=tol, mxstep=10 ** 6)
        return tnp.sum(ys[-1] ** 2)

    def direct(k, tol):     # reverse mode through the while_loop: it records every step
        ys = integrate._solve(lambda y, t: rhs(y, t, k), y0, ts, np.float64(tol),
                              np.float64(tol), np.int64(10 ** 6), np.float64(np.inf))
        return tnp.sum(ys[-1] ** 2)

    def peak(fn, tol):
        # the least of three calls: a call can also allocate for something else (a cache
        # another test filled being rebuilt), never less than its own tape
        tf.grad(fn)(k, tol)
        peaks = []
        for _ in range(3):
            tracemalloc.start()
            tf.grad(fn)(k, tol)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        return min(peaks)
    # 1e-4 -> 1e-8: 7 -> 30 steps; the recorded loop's memory shows them, the adjoint's not
    assert peak(direct, 1e-8) > 1.5 * peak(direct, 1e-4)
    assert peak(adjoint, 1e-8) < 1.2 * peak(adjoint, 1e-4)


def test_odeint_under_jit_equals_eager():
    f = tf.jit(lambda y0: integrate.odeint(lotka_volterra, y0, TS, *THETA), tiered=False)
    np.testing.assert_allclose(f(Y0), integrate.odeint(lotka_volterra, Y0, TS, *THETA),
                               rtol=1e-13)


def test_odeint_rejects_bad_times_and_state_mismatch():
    with pytest.raises(ShapeError, match="odeint"):
        integrate.odeint(lambda y, t: -y, 1.0, np.ones((2, 2)))
    with pytest.raises(ShapeError, match="state"):
        integrate.odeint(lambda y, t: tnp.ones(3), np.ones(2), np.array([0.0, 1.0]))


def test_odeint_runs_backwards_in_time_like_scipy():
    ts = np.linspace(2.0, 0.0, 5)
    want = si.odeint(lambda y, t: -y * t, np.array([1.0]), ts, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(integrate.odeint(lambda y, t: -y * t, np.array([1.0]), ts), want,
                               rtol=1e-7)


def test_solve_ivp_reports_at_t_eval_within_its_tolerance():
    te = np.linspace(0.0, 3.0, 4)
    def f(t, y, k):
        return tnp.stack([y[1], -k * y[0]])
    res = integrate.solve_ivp(f, (0.0, 3.0), np.array([1.0, 0.0]), t_eval=te, args=(2.0,),
                              rtol=1e-8, atol=1e-10)
    want = si.solve_ivp(lambda t, y, k: [y[1], -k * y[0]], (0.0, 3.0), [1.0, 0.0],
                        t_eval=te, args=(2.0,), rtol=1e-8, atol=1e-10)
    assert res.y.shape == want.y.shape and bool(res.success)
    np.testing.assert_allclose(res.y[0], np.cos(np.sqrt(2.0) * te), atol=1e-7)
    np.testing.assert_allclose(res.y, want.y, atol=1e-7)
    with pytest.raises(UnsupportedError, match="t_eval"):
        integrate.solve_ivp(f, (0.0, 3.0), np.array([1.0, 0.0]), args=(2.0,))
