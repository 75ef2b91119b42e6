"""``tf_numba.scipy.optimize``: ``minimize`` (BFGS, L-BFGS-B), ``root``/``fsolve`` (Newton)
and ``line_search`` (strong Wolfe), each one ``lax.while_loop`` (so ``jit`` compiles the
whole solve), with derivatives taken by tf_numba, and differentiable through the solution
by the implicit-function theorem.

>>> import numpy as np, tf_numba as tf, tf_numba.numpy as tnp
>>> from tf_numba.scipy import optimize
>>> res = optimize.minimize(lambda x, a: tnp.sum((x - a) ** 2), np.zeros(2), args=(3.0,))
>>> res.x, res.success
(array([3., 3.]), np.True_)
>>> tf.grad(lambda a: optimize.minimize(lambda x, a: tnp.sum((x - a) ** 2), np.zeros(2),
...                                     args=(a,)).x[0])(3.0)     # d x*/d a
np.float64(1.0)
"""
from typing import NamedTuple

import numpy as np

from .. import lax
from ..api import jacfwd, stop_gradient, value_and_grad, vjp
from ..core import dtypes, pytree
from ..core.linear import aval_of
from ..core.trace import user_source
from ..custom_derivatives import closure_convert, custom_vjp
from ..errors import ShapeError, UnsupportedError
from ..numpy import _promote as P
import tf_numba.numpy as tnp

__all__ = ["minimize", "root", "fsolve", "line_search", "OptimizeResult", "OptimizeResults"]

RUNNING = -1
_MESSAGES = {
    "BFGS": {0: "Optimization terminated successfully.",
             1: "Maximum number of iterations has been exceeded.",
             2: "Desired error not necessarily achieved due to precision loss.",
             3: "NaN result encountered."},
    "L-BFGS-B": {0: "CONVERGENCE: REL_REDUCTION_OF_F_<=_FACTR*EPSMCH or "
                    "NORM_OF_PROJECTED_GRADIENT_<=_PGTOL",
                 1: "STOP: TOTAL NO. OF ITERATIONS OR F EVALUATIONS REACHED LIMIT",
                 2: "ABNORMAL: line search failed",
                 3: "ABNORMAL: NaN result encountered"},
    "newton": {0: "The solution converged.",
               1: "The number of calls to function has reached maxfev.",
               2: "The iteration is not making good progress."},
}


class OptimizeResult(NamedTuple):
    """SciPy's result fields, as a pytree (so a jitted function can return it); ``res["x"]``
    reads a field as SciPy's dict does, ``message`` is the text for ``status``."""
    x: object
    fun: object
    jac: object
    nit: object
    nfev: object
    njev: object
    status: object
    success: object
    method: str = ""

    @property
    def message(self):
        return _MESSAGES[self.method].get(int(self.status), "")

    def __getitem__(self, key):
        return getattr(self, key) if isinstance(key, str) else tuple.__getitem__(self, key)

    def keys(self):
        return [*self._fields, "message"]


pytree.register_pytree_node(
    OptimizeResult, lambda r: (tuple(r[:8]), r.method),
    lambda method, c: OptimizeResult(*c, method=method))

# JAX's name for its minimize's result (whose BFGS also returns its inverse Hessian
# estimate, ``hess_inv``, which this one does not keep)
OptimizeResults = OptimizeResult


def _dot(a, b):
    return tnp.sum(a * b)


# ---------------------------------------------------------------- line search

class _Trial(NamedTuple):
    a: object      # step
    f: object      # phi(a) = f(x + a p)
    d: object      # phi'(a) = g(x + a p) . p


def _cubic_step(lo, hi):
    """The minimizer of the cubic through (a, f, d) at both ends (Nocedal & Wright, eq.
    3.59), bisection when it falls outside the middle 80% of the interval or is not finite."""
    width = lo.a - hi.a
    d1 = lo.d + hi.d - 3.0 * (lo.f - hi.f) / tnp.where(width == 0, 1.0, width)
    disc = d1 * d1 - lo.d * hi.d
    d2 = tnp.sign(hi.a - lo.a) * tnp.sqrt(tnp.maximum(disc, 0.0))
    den = hi.d - lo.d + 2.0 * d2
    a = hi.a - (hi.a - lo.a) * (hi.d + d2 - d1) / tnp.where(den == 0, 1.0, den)
    left, right = tnp.minimum(lo.a, hi.a), tnp.maximum(lo.a, hi.a)
    margin = 0.1 * (right - left)
    good = (disc >= 0) & (den != 0) & tnp.isfinite(a) & (a > left + margin) & (a < right - margin)
    return tnp.where(good, a, 0.5 * (lo.a + hi.a))


def _pick(cond, new, old):
    return type(old)(*[tnp.where(cond, a, b) for a, b in zip(new, old)])


def _wolfe(value_and_grad_fn, x, p, f0, g0, a1, c1, c2, maxiter):
    """A step along ``p`` meeting the strong Wolfe conditions (Nocedal & Wright, Algorithms
    3.5 and 3.6: double the step until a bracket, then zoom with cubic interpolation), as
    one while_loop with one evaluation per iteration.

    Returns (ok, alpha, f, g, evaluations); when not ok, alpha is 0 and (f, g) are x's."""
    d0 = _dot(g0, p)
    dt = aval_of(f0).dtype
    zero = _Trial(np.zeros((), dt), f0, d0)

    def cond(s):
        return ~s[1] & (s[0] < maxiter)

    def body(s):
        i, _, found, bracketed, prev, lo, hi, a_next, best, g_best = s
        a = tnp.where(bracketed, _cubic_step(lo, hi), a_next)
        f, g = value_and_grad_fn(x + a * p)
        trial = _Trial(a, f, _dot(g, p))
        # a step that does not decrease enough (or rises above the previous one / the low
        # end of the bracket) becomes a high end
        to_high = (f > f0 + c1 * a * d0) | ~tnp.isfinite(f) \
            | (~bracketed & (i > 0) & (f >= prev.f)) | (bracketed & (f >= lo.f))
        found = ~to_high & (tnp.abs(trial.d) <= -c2 * d0)
        # past a minimum: the slope points back towards the other end
        uphill = ~to_high & ~found & (trial.d * tnp.where(bracketed, hi.a - lo.a, 1.0) >= 0)
        new_lo = _pick(bracketed, _pick(to_high, lo, trial), _pick(to_high, prev, trial))
        new_hi = _pick(bracketed, _pick(to_high, trial, _pick(uphill, lo, hi)),
                       _pick(to_high, trial, prev))
        now_bracketed = bracketed | to_high | uphill
        lo = _pick(now_bracketed, new_lo, lo)
        hi = _pick(now_bracketed, new_hi, hi)
        # a bracket narrower than rounding: no representable step satisfies the conditions
        collapsed = now_bracketed & (tnp.abs(hi.a - lo.a) <= 1e-15 * tnp.abs(lo.a) + 1e-300)
        best = _pick(found, trial, best)
        g_best = tnp.where(found, g, g_best)
        return (i + 1, found | collapsed, found, now_bracketed, trial, lo, hi, 2.0 * a,
                best, g_best)

    init = (np.int64(0), np.bool_(False), np.bool_(False), np.bool_(False), zero, zero, zero,
            tnp.asarray(a1, dt).astype(dt), zero, g0)
    out = lax.while_loop(cond, body, init)
    evaluations, found, best, g = out[0], out[2], out[8], out[9]
    return found, best.a, best.f, g, evaluations


def line_search(f, myfprime, xk, pk, gfk=None, old_fval=None, old_old_fval=None, args=(),
                c1=1e-4, c2=0.9, amax=None, extra_condition=None, maxiter=10):
    """A step ``alpha`` along ``pk`` meeting the strong Wolfe conditions, as
    ``scipy.optimize.line_search``: returns ``(alpha, fc, gc, new_fval, old_fval,
    new_slope)``, alpha None when no step was found in ``maxiter`` evaluations (under
    tracing, NaN). ``myfprime`` None differentiates ``f``; f and its gradient are evaluated
    together, so ``fc == gc``; ``new_slope`` is the gradient at the new point, as SciPy
    returns it.

    >>> line_search(lambda x: tnp.sum(x ** 2), None, np.array([1.0]), np.array([-1.0]))[0]
    1.0
    """
    if amax is not None or extra_condition is not None:
        raise UnsupportedError("amax and extra_condition are not supported",
                               op="line_search", source=user_source())
    vg = _value_and_grad(f, myfprime if myfprime is not None else None, args)
    xk = _float(xk)
    pk = P.cast(P.as_array(pk), aval_of(xk).dtype)
    f0, g0 = vg(xk) if gfk is None or old_fval is None else (old_fval, gfk)
    a1 = _first_step(f0, old_old_fval, _dot(g0, pk))
    ok, alpha, fa, ga, count = _wolfe(vg, xk, pk, f0, g0, a1, c1, c2, maxiter)
    fc = count + (gfk is None or old_fval is None)
    slope = ga
    if P.tracing() or any(P.is_tracer(v) for v in (ok, alpha)):
        nan = tnp.where(ok, alpha, np.nan)
        return nan, fc, fc, tnp.where(ok, fa, np.nan), f0, tnp.where(ok, slope, np.nan)
    if not bool(ok):
        return None, int(fc), int(fc), None, f0, None
    return float(alpha), int(fc), int(fc), fa, f0, slope


def _first_step(f0, old_f0, d0):
    """SciPy's first trial step: the quadratic model's step from the last decrease."""
    if old_f0 is None:
        return 1.0
    a = 1.01 * 2 * (f0 - old_f0) / d0
    return tnp.where((d0 != 0) & (a > 0) & tnp.isfinite(a), tnp.minimum(1.0, a), 1.0)


# ---------------------------------------------------------------- objectives

def _float(x):
    x = P.as_array(x)
    if not dtypes.is_inexact(aval_of(x).dtype) or dtypes.is_complex(aval_of(x).dtype):
        x = P.cast(x, dtypes.float64)
    return x


def _value_and_grad(fun, jac, args):
    """``x -> (f, g)`` from SciPy's ``jac`` convention: None/False differentiates ``fun``,
    True means ``fun`` returns both, a callable computes the gradient."""
    if jac is None or jac is False:
        vg = value_and_grad(lambda x: fun(x, *args))
    elif jac is True:
        def vg(x):
            return fun(x, *args)
    elif callable(jac):
        def vg(x):
            return fun(x, *args), jac(x, *args)
    else:
        raise UnsupportedError(f"jac must be None, True or a callable, got {jac!r} "
                               "(finite-difference schemes are not needed: tf_numba "
                               "differentiates fun)", op="minimize", source=user_source())

    def checked(x):
        f, g = vg(x)
        dt = aval_of(x).dtype
        return P.cast(tnp.reshape(P.as_array(f), ()), dt), P.cast(P.as_array(g), dt)
    return checked


# ---------------------------------------------------------------- the solvers (x -> state)

def _status(ok, f, g, gtol):
    """After a step: 2 if the line search failed, 3 on NaN, 0 if converged, else running."""
    gnorm = tnp.max(tnp.abs(g))
    return tnp.where(~ok, 2, tnp.where(tnp.isnan(f) | tnp.isnan(gnorm), 3,
                                        tnp.where(gnorm <= gtol, 0, RUNNING)))


def _bfgs(vg, x0, gtol, maxiter, c1, c2, maxls):
    """SciPy's BFGS (Nocedal & Wright, Algorithm 6.1: inverse-Hessian update, identity
    start) with a strong-Wolfe line search. Returns (x, f, g, nit, nfev, status)."""
    n = P.shape_of(x0)[0]
    dt = aval_of(x0).dtype
    f0, g0 = vg(x0)
    start = tnp.where(tnp.max(tnp.abs(g0)) <= gtol, 0, RUNNING)

    def cond(s):
        return (s[-1] == RUNNING) & (s[0] < maxiter)

    def body(s):
        k, x, f, g, H, old_f, nfev, _ = s
        p = -(H @ g)
        ok, a, f1, g1, evals = _wolfe(vg, x, p, f, g, _first_step(f, old_f, _dot(g, p)),
                                      c1, c2, maxls)
        step, y = a * p, g1 - g
        sy = _dot(y, step)
        rho = tnp.where(sy == 0, 1000.0, 1.0 / tnp.where(sy == 0, 1.0, sy))
        # (I - rho s y^T) H (I - rho y s^T) + rho s s^T, expanded (H is symmetric): one
        # matrix-vector product and rank-one terms instead of two matrix products
        Hy = H @ y
        H1 = H - rho * (step[:, None] * Hy[None, :] + Hy[:, None] * step[None, :]) \
            + (rho * rho * _dot(y, Hy) + rho) * (step[:, None] * step[None, :])
        new = (x + step, f1, g1, H1, f)
        x, f, g, H, old_f = (tnp.where(ok, a_, b_) for a_, b_ in zip(new, (x, f, g, H, old_f)))
        return (k + ok.astype(np.int64), x, f, g, H, old_f, nfev + evals,
                _status(ok, f1, g1, gtol))

    # SciPy's "previous f" for the first step's estimate: f0 + |g0| / 2
    init = (np.int64(0), x0, f0, g0, np.eye(n, dtype=dt), f0 + tnp.sqrt(_dot(g0, g0)) / 2,
            np.int64(1), start)
    k, x, f, g, _, _, nfev, status = lax.while_loop(cond, body, init)
    return x, f, g, k, nfev, tnp.where(status == RUNNING, 1, status)


def _two_loop(g, S, Y, rho, valid):
    """``-H g`` for the L-BFGS inverse Hessian of the stored pairs (Nocedal & Wright,
    Algorithm 7.4), the newest pair last; ``valid`` masks the slots not yet filled."""
    def newest_first(q, xs):
        s, y, r, v = xs
        a = tnp.where(v, r * _dot(s, q), 0.0)
        return q - a * y, a
    q, alphas = lax.scan(newest_first, g, (S, Y, rho, valid), reverse=True)
    yy = _dot(Y[-1], Y[-1])
    gamma = tnp.where(valid[-1] & (yy > 0), _dot(S[-1], Y[-1]) / tnp.where(yy > 0, yy, 1.0),
                      1.0)

    def oldest_first(r, xs):
        s, y, rh, v, a = xs
        return r + tnp.where(v, a - rh * _dot(y, r), 0.0) * s, None
    r, _ = lax.scan(oldest_first, gamma * q, (S, Y, rho, valid, alphas))
    return -r


def _projected_search(vg, x, p, f0, g0, a1, lo, hi, c1, maxiter):
    """Backtracking along the projected path ``clip(x + a p, lo, hi)``, halving ``a`` from
    ``a1`` until the Armijo condition holds for the projected step (Bertsekas 1982).
    Returns (ok, x1, f1, g1, evaluations)."""
    def cond(s):
        return ~s[1] & (s[0] < maxiter)

    def body(s):
        i = s[0]
        z = tnp.clip(x + (a1 * 0.5 ** i.astype(aval_of(x).dtype)) * p, lo, hi)
        f, g = vg(z)
        ok = (f <= f0 + c1 * _dot(g0, z - x)) & tnp.isfinite(f)
        return i + 1, ok, z, f, g
    i, ok, z, f, g = lax.while_loop(cond, body, (np.int64(0), np.bool_(False), x, f0, g0))
    return ok, z, f, g, i


def _free(x, g, lo, hi):
    """The variables not held at a bound by a gradient pointing out of the box."""
    return ~(((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0)))


def _lbfgs(vg, x0, gtol, ftol, maxiter, maxfun, maxcor, c1, c2, maxls, bounds=None):
    """L-BFGS with L-BFGS-B's stopping rules: relative reduction of f below ``ftol`` or
    largest projected-gradient component below ``gtol``. Unbounded, the line search is the
    strong-Wolfe one with L-BFGS-B's constants (c1 = 1e-3, c2 = 0.9); with ``bounds``
    (lo, hi), a projected quasi-Newton step: the two-loop direction on the free variables,
    then backtracking along the projection onto the box (not L-BFGS-B's Cauchy point and
    subspace minimization, so its iterates differ from SciPy's; the solution is the same).
    The first step is 1/|g| long, as L-BFGS-B's."""
    n = P.shape_of(x0)[0]
    dt = aval_of(x0).dtype
    lo, hi = bounds if bounds is not None else (None, None)
    if bounds is not None:
        x0 = tnp.clip(x0, lo, hi)
    f0, g0 = vg(x0)
    eps = np.finfo(dt).eps

    def projected(x, g):
        return g if bounds is None else x - tnp.clip(x - g, lo, hi)
    start = tnp.where(tnp.max(tnp.abs(projected(x0, g0))) <= gtol, 0, RUNNING)

    def cond(s):
        return (s[-1] == RUNNING) & (s[0] < maxiter) & (s[-2] < maxfun)

    def body(s):
        k, x, f, g, S, Y, rho, valid, nfev, _ = s
        a1 = tnp.where(k == 0, tnp.minimum(1.0, 1.0 / tnp.sqrt(_dot(g, g))), 1.0)
        if bounds is None:
            p = _two_loop(g, S, Y, rho, valid)
            ok, a, f1, g1, evals = _wolfe(vg, x, p, f, g, a1, c1, c2, maxls)
            x1 = x + a * p
        else:
            # the pairs restricted to the free variables (those with too little curvature
            # there are left out)
            free = _free(x, g, lo, hi)
            Sf, Yf = S * free, Y * free
            sy_f = tnp.sum(Sf * Yf, axis=1)
            valid_f = valid & (sy_f > eps * tnp.sum(Yf * Yf, axis=1))
            p = _two_loop(g * free, Sf, Yf, 1.0 / tnp.where(valid_f, sy_f, 1.0), valid_f)
            p = p * free
            p = tnp.where(_dot(g, p) < 0, p, -g * free)
            ok, x1, f1, g1, evals = _projected_search(vg, x, p, f, g, a1, lo, hi, c1, maxls)
        step, y = x1 - x, g1 - g
        sy, yy = _dot(step, y), _dot(y, y)
        # L-BFGS-B keeps a pair only if it has enough curvature
        keep = ok & (sy > eps * yy)

        def push(buf, v):
            return tnp.where(keep, tnp.concatenate([buf[1:], v[None]]), buf)
        S1, Y1 = push(S, step), push(Y, y)
        rho1 = push(rho, 1.0 / tnp.where(keep, sy, 1.0))
        valid1 = push(valid, np.bool_(True))
        reduced = (f - f1) <= ftol * tnp.maximum(tnp.maximum(tnp.abs(f), tnp.abs(f1)), 1.0)
        status = tnp.where(ok & reduced & tnp.isfinite(f1), 0,
                           _status(ok, f1, projected(x1, g1), gtol))
        x, f, g = (tnp.where(ok, a_, b_) for a_, b_ in zip((x1, f1, g1), (x, f, g)))
        return (k + ok.astype(np.int64), x, f, g, S1, Y1, rho1, valid1, nfev + evals, status)

    init = (np.int64(0), x0, f0, g0, np.zeros((maxcor, n), dt), np.zeros((maxcor, n), dt),
            np.zeros(maxcor, dt), np.zeros(maxcor, np.bool_), np.int64(1), start)
    k, x, f, g, _, _, _, _, nfev, status = lax.while_loop(cond, body, init)
    return x, f, g, k, nfev, tnp.where(status == RUNNING, 1, status)


def _newton(F_and_J, x0, xtol, maxfev):
    """Newton's method on ``F(x) = 0`` with backtracking on ``|F|^2`` (halving the step
    until it decreases, Dennis & Schnabel 6.3). Stops when a step is below
    ``xtol * (xtol + |x|)`` or ``F`` vanishes. Returns (x, F, J, nit, nfev, status)."""
    F0, J0 = F_and_J(x0)

    def cond(s):
        return (s[-1] == RUNNING) & (s[-2] < maxfev)

    def body(s):
        k, x, F, J, nfev, _ = s
        d = -tnp.linalg.solve(J, F)
        norm0 = _dot(F, F)

        def shrinking(c):
            t, F1, _, evals = c
            return (_dot(F1, F1) > (1.0 - 1e-4 * t) * norm0) & (evals < 30)

        def halve(c):
            t, _, _, evals = c
            t = 0.5 * t
            F1, J1 = F_and_J(x + t * d)
            return t, F1, J1, evals + 1
        F1, J1 = F_and_J(x + d)
        t, F1, J1, evals = lax.while_loop(shrinking, halve, (tnp.ones_like(norm0), F1, J1,
                                                             np.int64(1)))
        progress = _dot(F1, F1) <= (1.0 - 1e-4 * t) * norm0
        x1 = x + t * d
        small = tnp.sqrt(_dot(t * d, t * d)) <= xtol * (xtol + tnp.sqrt(_dot(x1, x1)))
        status = tnp.where(~tnp.all(tnp.isfinite(F1)), 2,
                           tnp.where((_dot(F1, F1) == 0) | (small & progress), 0,
                                     tnp.where(progress, RUNNING, 2)))
        x, F, J = (tnp.where(progress, a_, b_) for a_, b_ in zip((x1, F1, J1), (x, F, J)))
        return k + 1, x, F, J, nfev + evals, status

    start = tnp.where(_dot(F0, F0) == 0, 0, RUNNING)
    k, x, F, J, nfev, status = lax.while_loop(cond, body, (np.int64(0), x0, F0, J0,
                                                           np.int64(1), start))
    return x, F, J, k, nfev, tnp.where(status == RUNNING, 1, status)


# ---------------------------------------------------------------- implicit differentiation

def _implicit(solver, residual, value, x0, theta, free=None):
    """``solver(x0, theta)`` (a tuple whose first item is x* with ``residual(x*, theta) ==
    0``) made differentiable in ``theta`` by the implicit-function theorem:
    ``dx*/dtheta = -(dR/dx)^-1 dR/dtheta``. With ``value``, the second item is
    ``value(x*, theta)`` (f at a minimum) and its cotangent adds its partial derivative in
    theta (the derivative through x* vanishes where the gradient does); the other items
    (gradient or residual at x*, counts) are zero or constant along the solution set and
    get none. ``free(x*, theta)``, for a box-constrained minimum, marks the variables not
    held at a bound: the others have derivative 0 and the system is solved on the free ones."""
    if not any(P.is_tracer(t) for t in theta):
        # nothing to differentiate but x0, on which x* does not depend: the plain loop
        # (which jit compiles, where a custom_vjp call runs on NumPy)
        return solver(stop_gradient(x0), theta)
    diff = [k for k, t in enumerate(theta) if dtypes.is_inexact(aval_of(t).dtype)]

    def solve(x0, *theta):
        return solver(x0, theta)
    solve_vjp = custom_vjp(solve)

    def fwd(x0, *theta):
        out = solve(x0, *theta)
        return out, (out[0], theta)

    def bwd(res, cts):
        x, theta = res
        ct_x, ct_f = cts[0], cts[1]

        def with_diff(th):
            full = list(theta)
            for k, t in zip(diff, th):
                full[k] = t
            return full
        J = jacfwd(lambda x_: residual(x_, theta))(x)
        if free is not None:
            mask = free(x, theta)
            both = mask[:, None] & mask[None, :]
            J = tnp.where(both, J, np.eye(P.shape_of(x)[0], dtype=aval_of(x).dtype))
            ct_x = tnp.where(mask, ct_x, 0.0)
        u = tnp.linalg.solve(tnp.transpose(J), ct_x)
        if value is None:
            _, pull = vjp(lambda th: residual(x, with_diff(th)), [theta[k] for k in diff])
            (th_ct,) = pull(-u)
        else:
            _, pull = vjp(lambda th: (residual(x, with_diff(th)), value(x, with_diff(th))),
                          [theta[k] for k in diff])
            (th_ct,) = pull((-u, ct_f))
        out = [tnp.zeros_like(t) for t in theta]
        for k, c in zip(diff, th_ct):
            out[k] = c
        return (tnp.zeros_like(x0), *out)

    solve_vjp.defvjp(fwd, bwd)
    return solve_vjp(x0, *theta)


def _vector(x0, name):
    x = _float(P.as_array(x0))
    if len(P.shape_of(x)) == 0:
        x = tnp.reshape(x, (1,))
    if len(P.shape_of(x)) != 1:
        raise ShapeError(f"x0 must be 1-D (or a scalar), got shape {P.shape_of(x)}; "
                         "ravel it and reshape inside fun", op=name, source=user_source())
    return x


def _options(name, options, defaults):
    options = dict(options or {})
    unknown = sorted(set(options) - set(defaults) - {"disp"})
    if unknown:
        raise UnsupportedError(f"unknown options {unknown}; supported: "
                               f"{sorted(defaults)}", op=name, source=user_source())
    return {k: options.get(k, v) for k, v in defaults.items()}


def _box(bounds, n, dt):
    """(lo, hi) arrays of length n from SciPy's bounds: a ``Bounds``-like object with
    ``lb``/``ub``, or one (min, max) pair per variable, None for no bound."""
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):
        lo, hi = (np.broadcast_to(np.asarray(b, dt), (n,)) for b in (bounds.lb, bounds.ub))
    else:
        pairs = list(bounds)
        if len(pairs) != n:
            raise ShapeError(f"{len(pairs)} bounds for {n} variables; give one "
                             "(min, max) pair per variable", op="minimize",
                             source=user_source())
        lo = np.array([-np.inf if p[0] is None else p[0] for p in pairs], dt)
        hi = np.array([np.inf if p[1] is None else p[1] for p in pairs], dt)
    if np.any(lo > hi):
        raise ShapeError("a lower bound exceeds its upper bound", op="minimize",
                         source=user_source())
    return lo, hi


def minimize(fun, x0, args=(), method="BFGS", jac=None, bounds=None, tol=None, options=None):
    """The minimum of ``fun(x, *args)`` from ``x0`` (1-D), as ``scipy.optimize.minimize``
    with ``method`` "BFGS" or "L-BFGS-B" (``bounds``: a ``Bounds`` or (min, max) pairs,
    None for unbounded): the gradient comes from
    differentiating ``fun`` (``jac=None``), from ``fun`` itself (``jac=True``: it returns
    ``(f, g)``) or from ``jac(x, *args)``. Both are traced once (write them with
    ``tf_numba.numpy``).

    The whole optimizer is one ``lax.while_loop`` (its strong-Wolfe line search another),
    compiled under ``jit`` when no float in ``args`` (nor a value ``fun`` closes over) is
    traced; otherwise the solve is a ``custom_vjp`` call, which a jitted plan runs on NumPy.
    The result (an ``OptimizeResult``: ``x, fun, jac,
    nit, nfev, njev, status, success, message``) is a pytree of arrays. ``x`` and ``fun``
    are differentiable in the float arguments in ``args`` (and in values ``fun`` closes
    over) by the implicit-function theorem, which solves one linear system with the
    Hessian at the optimum (on the variables not held at a bound); no derivative flows
    through the iterations.

    Options, BFGS: ``gtol`` (1e-5), ``maxiter`` (200 n), ``c1``, ``c2`` (1e-4, 0.9);
    L-BFGS-B: ``maxcor`` (10), ``ftol`` (2.2e-9), ``gtol`` (1e-5), ``maxiter``, ``maxfun``
    (15000), ``maxls`` (20). ``tol`` sets ``gtol`` (and ``ftol`` for L-BFGS-B).

    >>> rosen = lambda x: tnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    >>> minimize(rosen, np.zeros(3)).x.round(4)
    array([1., 1., 1.])
    """
    name = "minimize"
    method_key = str(method).upper()
    if method_key not in ("BFGS", "L-BFGS-B"):
        raise UnsupportedError(f"method {method!r} is not supported; use 'BFGS' or "
                               "'L-BFGS-B'", op=name, source=user_source())
    x0 = _vector(x0, name)
    n = P.shape_of(x0)[0]
    if bounds is not None:
        if method_key != "L-BFGS-B":
            raise UnsupportedError(f"method {method!r} cannot handle bounds; use "
                                   "'L-BFGS-B'", op=name, source=user_source())
        bounds = _box(bounds, n, aval_of(x0).dtype)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    leaves, tree = pytree.flatten(pytree.tree_map(P.as_array, args))
    vg_c, consts = closure_convert(
        lambda x, *ls: _value_and_grad(fun, jac, pytree.unflatten(tree, ls))(x), x0, *leaves)
    theta = list(leaves) + list(consts)
    if method_key == "BFGS":
        o = _options(name, options, {"gtol": 1e-5, "maxiter": 200 * n, "c1": 1e-4,
                                     "c2": 0.9})
        gtol = o["gtol"] if tol is None else tol

        def solver(x, th):
            return _bfgs(lambda z: vg_c(z, *th), x, gtol, o["maxiter"], o["c1"], o["c2"], 20)
        method_name = "BFGS"
    else:
        o = _options(name, options, {"maxcor": 10, "ftol": 2.220446049250313e-09,
                                     "gtol": 1e-5, "maxiter": 15000, "maxfun": 15000,
                                     "maxls": 20})
        gtol = o["gtol"] if tol is None else tol
        ftol = o["ftol"] if tol is None else tol

        def solver(x, th):
            return _lbfgs(lambda z: vg_c(z, *th), x, gtol, ftol, o["maxiter"], o["maxfun"],
                          int(o["maxcor"]), 1e-3, 0.9, o["maxls"], bounds)
        method_name = "L-BFGS-B"
    free = None if bounds is None else \
        (lambda x, th: _free(x, vg_c(x, *th)[1], bounds[0], bounds[1]))
    x, f, g, nit, nfev, status = _implicit(
        solver, lambda x, th: vg_c(x, *th)[1], lambda x, th: vg_c(x, *th)[0], x0, theta,
        free)
    return OptimizeResult(x, f, stop_gradient(g), nit, nfev, nfev, status, status == 0,
                          method_name)


def _residual_and_jacobian(fun, jac, args):
    """``x -> (F, J)`` from SciPy's ``jac`` convention; None takes J by ``jacfwd``."""
    if jac is None or jac is False:
        def fj(x):
            return fun(x, *args), jacfwd(lambda z: fun(z, *args))(x)
    elif jac is True:
        def fj(x):
            return fun(x, *args)
    elif callable(jac):
        def fj(x):
            return fun(x, *args), jac(x, *args)
    else:
        raise UnsupportedError(f"jac must be None, True or a callable, got {jac!r}",
                               op="root", source=user_source())

    def checked(x):
        F, J = fj(x)
        dt = aval_of(x).dtype
        F, J = P.cast(P.as_array(F), dt), P.cast(P.as_array(J), dt)
        n = P.shape_of(x)[0]
        if P.shape_of(F) != (n,) or P.shape_of(J) != (n, n):
            raise ShapeError(f"fun returned {P.shape_of(F)} values and a Jacobian of "
                             f"{P.shape_of(J)} for {n} unknowns; a square system needs "
                             f"({n},) and ({n}, {n})", op="root", source=user_source())
        return F, J
    return checked


def root(fun, x0, args=(), method="hybr", jac=None, tol=None, options=None):
    """A zero of ``fun(x, *args)`` (n equations in n unknowns) near ``x0``, as
    ``scipy.optimize.root``; every ``method`` is solved by Newton's method with
    backtracking on ``|F|^2``, the Jacobian from ``jacfwd`` (``jac=None``), from ``fun``
    (``jac=True``) or from ``jac(x, *args)``. One ``lax.while_loop``, so ``jit`` compiles
    it; ``x`` is differentiable in the float arguments by the implicit-function theorem.

    Options: ``xtol`` (1.49012e-8, the relative step below which it stops; ``tol`` sets
    it) and ``maxfev`` (100 (n + 1)). The result's ``fun`` is F at x, ``jac`` its Jacobian.

    >>> root(lambda x: x ** 2 - 2.0, np.array([1.0])).x
    array([1.41421356])
    """
    x0 = _vector(x0, "root")
    n = P.shape_of(x0)[0]
    o = _options("root", options, {"xtol": 1.49012e-8, "maxfev": 100 * (n + 1)})
    xtol = o["xtol"] if tol is None else tol
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    leaves, tree = pytree.flatten(pytree.tree_map(P.as_array, args))
    fj_c, consts = closure_convert(
        lambda x, *ls: _residual_and_jacobian(fun, jac, pytree.unflatten(tree, ls))(x),
        x0, *leaves)
    theta = list(leaves) + list(consts)

    def solver(x, th):
        return _newton(lambda z: fj_c(z, *th), x, xtol, o["maxfev"])

    def residual(x, th):
        return fj_c(x, *th)[0]
    x, F, J, nit, nfev, status = _implicit(solver, residual, None, x0, theta)
    return OptimizeResult(x, stop_gradient(F), stop_gradient(J), nit, nfev, nfev, status,
                          status == 0, "newton")


def fsolve(func, x0, args=(), fprime=None, full_output=False, xtol=1.49012e-8, maxfev=0):
    """A zero of ``func(x, *args)`` near ``x0``, as ``scipy.optimize.fsolve`` (solved as
    ``root``: Newton's method, differentiable in the float arguments). With
    ``full_output``, ``(x, infodict, ier, mesg)``: ``infodict`` has ``nfev`` and ``fvec``,
    ``ier`` is 1 on success.

    >>> fsolve(lambda x: tnp.cos(x) - x, np.array([1.0]))
    array([0.73908513])
    """
    options = {"xtol": xtol}
    if maxfev:
        options["maxfev"] = maxfev
    res = root(func, x0, args=args, jac=fprime if fprime is not None else None,
               options=options)
    if not full_output:
        return res.x
    # SciPy's 'fjac', 'r' and 'qtf' are MINPACK's QR factors, which Newton does not form
    info = {"nfev": res.nfev, "fvec": res.fun}
    ier = tnp.where(res.success, 1, 5)
    return res.x, info, ier, res.message if not P.is_tracer(res.status) else ""


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
