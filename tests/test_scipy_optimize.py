"""tf_numba.scipy.optimize: minimize (BFGS, L-BFGS-B) converges where scipy.optimize does,
root/fsolve find SciPy's roots, line_search meets the Wolfe conditions, and the solutions'
derivatives (implicit-function theorem) match closed forms and finite differences."""
import numpy as np
import pytest
import scipy.optimize as so

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError, UnsupportedError
from tf_numba.scipy import optimize


def rosen(x):
    return tnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B"])
@pytest.mark.parametrize("n", [2, 10, 100])
def test_minimize_rosenbrock_reaches_scipys_answer(method, n):
    x0 = np.linspace(-1.2, 1.0, n)
    want = so.minimize(so.rosen, x0, jac=so.rosen_der, method=method)
    res = optimize.minimize(rosen, x0, method=method)
    assert bool(res.success) and res.status == 0, res.message
    # both stop at their tolerance (gtol 1e-5; L-BFGS-B also on a relative reduction of f
    # of 2.2e-9, which leaves x ~ 1e-3 from the minimum in 100 dimensions)
    tol = 1e-5 if method == "BFGS" else 3e-3
    np.testing.assert_allclose(res.x, want.x, atol=tol)
    np.testing.assert_allclose(res.x, np.ones(n), atol=tol)
    assert res.fun == pytest.approx(so.rosen(res.x), rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(res.jac, so.rosen_der(res.x), rtol=1e-9, atol=1e-12)
    assert 0.5 * want.nfev < res.nfev < 2 * want.nfev
    if method == "BFGS":
        assert np.max(np.abs(res.jac)) <= 1e-5


@pytest.mark.parametrize("n", [10, 100])
def test_minimize_with_bounds_reaches_scipys_answer(n):
    x0 = np.linspace(-1.2, 1.0, n)
    bounds = [(-1.5, 0.7)] * (n - 1) + [(None, 0.5)]
    want = so.minimize(so.rosen, x0, jac=so.rosen_der, method="L-BFGS-B", bounds=bounds)
    res = optimize.minimize(rosen, x0, method="L-BFGS-B", bounds=so.Bounds(
        [b[0] if b[0] is not None else -np.inf for b in bounds], [b[1] for b in bounds]))
    assert bool(res.success), res.message
    np.testing.assert_allclose(res.x, want.x, atol=1e-4)
    assert res.fun <= want.fun * (1 + 1e-9)
    assert np.all(res.x <= 0.7) and res.x[-1] <= 0.5


def test_bounded_solution_derivative_is_zero_at_active_bounds():
    # x* = clip(a, 0, 1): dx*/da is 1 where a is inside the box, 0 where a bound holds
    def xstar(a):
        return optimize.minimize(lambda x, a: tnp.sum(W * (x - a) ** 2), np.full(3, 0.5),
                                 args=(a,), method="L-BFGS-B", bounds=[(0, 1)] * 3,
                                 options={"gtol": 1e-10}).x
    a = np.array([0.4, 2.0, -1.0])
    np.testing.assert_allclose(xstar(a), np.clip(a, 0, 1), atol=1e-8)
    np.testing.assert_allclose(tf.jacrev(xstar)(a), np.diag([1.0, 0.0, 0.0]), atol=1e-8)


def test_minimize_jac_conventions_and_result_fields():
    x0 = np.array([-1.2, 1.0])
    a = optimize.minimize(rosen, x0, method="BFGS")
    b = optimize.minimize(lambda x: (rosen(x), tf.grad(rosen)(x)), x0, jac=True)
    def rosen_der(x):
        return tnp.concatenate([-400 * x[:1] * (x[1:2] - x[:1] ** 2) - 2 * (1 - x[:1]),
                                200 * (x[1:] - x[:1] ** 2)])
    c = optimize.minimize(rosen, x0, jac=rosen_der)
    np.testing.assert_allclose(b.x, a.x, rtol=1e-12)
    np.testing.assert_allclose(c.x, a.x, rtol=1e-10)
    assert a["x"] is a.x and a.nit == b.nit
    assert a.message == "Optimization terminated successfully."
    assert set(a.keys()) >= {"x", "fun", "jac", "nit", "nfev", "status", "success", "message"}


def test_minimize_reports_iteration_limit_and_rejects_unsupported():
    res = optimize.minimize(rosen, np.array([-1.2, 1.0]), options={"maxiter": 3})
    assert res.status == 1 and not res.success and res.nit == 3
    with pytest.raises(UnsupportedError, match="bounds"):
        optimize.minimize(rosen, np.zeros(2), method="BFGS", bounds=[(0, 1), (0, 1)])
    with pytest.raises(ShapeError, match="pair per variable"):
        optimize.minimize(rosen, np.zeros(2), method="L-BFGS-B", bounds=[(0, 1)])
    with pytest.raises(UnsupportedError, match="Nelder-Mead"):
        optimize.minimize(rosen, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(UnsupportedError, match="xatol"):
        optimize.minimize(rosen, np.zeros(2), options={"xatol": 1.0})
    with pytest.raises(ShapeError, match="1-D"):
        optimize.minimize(rosen, np.zeros((2, 2)))


# f(x; a, b) = sum(w (x - a)^2) / 2 + b sum(x^4) / 4 + sum(sin(x) a): strongly convex for b > 0
W = np.array([3.0, 1.0, 2.0])
A = np.array([0.5, -1.0, 2.0])


def convex(x, a, b):
    return (0.5 * tnp.sum(W * (x - a) ** 2) + 0.25 * b * tnp.sum(x ** 4)
            + 0.1 * tnp.sum(tnp.sin(x) * a))


def argmin(a, b, method="BFGS"):
    return optimize.minimize(convex, np.zeros(3), args=(a, b), method=method,
                             options={"gtol": 1e-11}).x


def _implicit_reference(a, b):
    """dx*/da and dx*/db = -H^-1 d(grad)/d(theta), from the closed-form second derivatives."""
    x = np.asarray(argmin(a, b))
    H = np.diag(W + 3 * b * x ** 2 - 0.1 * np.sin(x) * a)
    dgrad_da = np.diag(-W + 0.1 * np.cos(x))
    dgrad_db = x ** 3
    return -np.linalg.solve(H, dgrad_da), -np.linalg.solve(H, dgrad_db)


@pytest.mark.parametrize("method", ["BFGS", "L-BFGS-B"])
def test_minimize_solution_is_differentiable_by_implicit_function(method):
    b = 0.7
    da, db = tf.jacrev(lambda a, b: argmin(a, b, method), argnums=(0, 1))(A, b)
    want_a, want_b = _implicit_reference(A, b)
    np.testing.assert_allclose(da, want_a, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(db, want_b, rtol=1e-7, atol=1e-9)
    # the solves stop at |g| ~ 1e-8 (f's rounding): x* is that exact, so a wide step
    h = 1e-3
    fd = (np.asarray(argmin(A, b + h, method)) - np.asarray(argmin(A, b - h, method))) / (2 * h)
    np.testing.assert_allclose(db, fd, rtol=1e-4, atol=1e-6)


def test_minimum_value_gradient_is_the_partial_derivative():
    # envelope theorem: d f(x*(a), a) / da = (df/da)(x*, a)
    def best(a):
        return optimize.minimize(convex, np.zeros(3), args=(a, 0.7),
                                 options={"gtol": 1e-11}).fun
    x = np.asarray(argmin(A, 0.7))
    want = -W * (x - A) + 0.1 * np.sin(x)
    np.testing.assert_allclose(tf.grad(best)(A), want, rtol=1e-8, atol=1e-10)


def test_minimize_differentiates_values_fun_closes_over():
    def best_x(a):
        return optimize.minimize(lambda x: convex(x, a, 0.7), np.zeros(3),
                                 options={"gtol": 1e-11}).x
    np.testing.assert_allclose(tf.jacrev(best_x)(A), _implicit_reference(A, 0.7)[0],
                               rtol=1e-7, atol=1e-9)


def system(x, a):
    return tnp.stack([x[0] ** 3 + x[1] - a, tnp.sin(x[0]) + 2.0 * x[1] ** 3 - 1.0])


def system_np(x, a):
    return [x[0] ** 3 + x[1] - a, np.sin(x[0]) + 2.0 * x[1] ** 3 - 1.0]


def test_root_and_fsolve_find_scipys_root():
    x0 = np.array([0.5, 0.5])
    want = so.root(system_np, x0, args=(2.0,)).x
    res = optimize.root(system, x0, args=(2.0,))
    assert bool(res.success), res.message
    np.testing.assert_allclose(res.x, want, rtol=1e-10)
    np.testing.assert_allclose(res.fun, system_np(res.x, 2.0), atol=1e-12)
    np.testing.assert_allclose(optimize.fsolve(system, x0, args=(2.0,)), want, rtol=1e-10)
    x, info, ier, mesg = optimize.fsolve(lambda x: tnp.cos(x) - x, 1.0, full_output=True)
    assert ier == 1 and mesg == "The solution converged."
    np.testing.assert_allclose(x, so.fsolve(lambda x: np.cos(x) - x, 1.0), rtol=1e-12)
    def jac(x, a):
        return tnp.array([[3 * x[0] ** 2, 1.0], [tnp.cos(x[0]), 6 * x[1] ** 2]])
    np.testing.assert_allclose(optimize.root(system, x0, args=(2.0,), jac=jac).x, want,
                               rtol=1e-10)


def test_root_solution_gradient_matches_finite_differences():
    x0 = np.array([0.5, 0.5])
    got = tf.jacrev(lambda a: optimize.root(system, x0, args=(a,)).x)(2.0)
    h = 1e-6
    fd = (so.root(system_np, x0, args=(2.0 + h,), tol=1e-14).x
          - so.root(system_np, x0, args=(2.0 - h,), tol=1e-14).x) / (2 * h)
    np.testing.assert_allclose(got, fd, rtol=1e-6)


def test_line_search_meets_the_strong_wolfe_conditions():
    def f(x):
        return tnp.sum((x - 0.3) ** 4) + tnp.sum(x ** 2)
    grad = tf.grad(f)
    x, p = np.array([1.0, 2.0]), np.array([-1.0, -3.0])
    alpha, fc, gc, new_f, old_f, new_g = optimize.line_search(f, None, x, p)
    d0 = grad(x) @ p
    assert new_f <= old_f + 1e-4 * alpha * d0
    assert abs(grad(x + alpha * p) @ p) <= 0.9 * abs(d0)
    np.testing.assert_allclose(new_g, grad(x + alpha * p), rtol=1e-12)
    ref = so.line_search(lambda z: float(f(z)), lambda z: np.asarray(grad(z)), x, p)
    assert ref[0] is not None
    # no descent direction: no step
    assert optimize.line_search(f, None, x, -p)[0] is None


def test_minimize_under_jit_equals_eager():
    solve = tf.jit(lambda x0: optimize.minimize(rosen, x0).x, tiered=False)
    x0 = np.array([-1.2, 1.0])
    np.testing.assert_allclose(solve(x0), optimize.minimize(rosen, x0).x, rtol=1e-12)


def test_optimize_results_is_jax_s_name_for_the_result():
    from tf_numba.scipy import optimize
    res = optimize.minimize(lambda x: tnp.sum((x - 1.0) ** 2), np.zeros(2))
    assert isinstance(res, optimize.OptimizeResults) and res.success
