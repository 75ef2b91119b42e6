"""``tf_numba.scipy.integrate``: quadrature of sampled data (``trapezoid``,
``cumulative_trapezoid``, ``simpson``) and ``odeint``, an adaptive Dormand-Prince solver on
``lax.while_loop``, differentiable by the adjoint method and jittable.

>>> import numpy as np, tf_numba as tf
>>> from tf_numba.scipy import integrate
>>> integrate.odeint(lambda y, t, k: -k * y, np.array([1.0]), np.array([0.0, 1.0]), 2.0)[-1]
array([0.13533528])
>>> tf.grad(lambda k: integrate.odeint(lambda y, t, k: -k * y, 1.0, np.array([0.0, 1.0]),
...                                    k)[-1])(2.0)     # -exp(-2) to the tolerance
array(-0.1353353)
"""
import math
from typing import NamedTuple

import numpy as np

from .. import lax
from ..api import stop_gradient, vjp
from ..core import dtypes, pytree
from ..core.linear import aval_of
from ..core.trace import user_source
from ..custom_derivatives import closure_convert, custom_vjp
from ..errors import DTypeError, ShapeError, UnsupportedError
from ..numpy import _promote as P
from ..ops import layout
import tf_numba.numpy as tnp

__all__ = ["trapezoid", "cumulative_trapezoid", "simpson", "odeint", "solve_ivp", "OdeResult"]

trapezoid = tnp.trapezoid


# ---------------------------------------------------------------- sampled data

def _along(x, axis, start, stop, step=1):
    return layout.slice_in_dim(x, start, stop, step, axis)


def _spacings(y, x, axis, name):
    """``diff(x)`` shaped to broadcast against ``y``'s slices along ``axis`` (x 1-D or of
    ``y``'s rank), as SciPy's quadrature reads ``x``."""
    shape_y = P.shape_of(y)
    xs = P.as_array(x)
    shape_x = P.shape_of(xs)
    if len(shape_x) == 1:
        if shape_x[0] != shape_y[axis]:
            raise ShapeError(f"x has length {shape_x[0]} but y has {shape_y[axis]} "
                             f"samples along axis {axis}; give one x per sample", op=name)
        d = tnp.diff(xs)
        shape = [1] * len(shape_y)
        shape[axis] = shape_x[0] - 1
        return layout.reshape(d, tuple(shape))
    if len(shape_x) != len(shape_y) or shape_x[axis] != shape_y[axis]:
        raise ShapeError(f"x of shape {shape_x} does not match y of shape {shape_y}; "
                         "x must be 1-D or have y's shape", op=name)
    return tnp.diff(xs, axis=axis)


def _samples(name, y, axis):
    values = P.as_array(y)
    if not dtypes.is_inexact(aval_of(values).dtype):
        values = P.cast(values, dtypes.float64)
    ax = P.axis_arg(axis, len(P.shape_of(values)), name)
    return values, ax


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """The running integral of ``y`` by the trapezoidal rule along ``axis``, as
    ``scipy.integrate.cumulative_trapezoid`` (``initial=0`` prepends a zero).

    >>> cumulative_trapezoid(np.array([1.0, 2.0, 3.0]), initial=0)
    array([0. , 1.5, 4. ])
    """
    values, ax = _samples("cumulative_trapezoid", y, axis)
    n = P.shape_of(values)[ax]
    if n == 0:
        raise ShapeError("at least one point is required along axis "
                         f"{ax}", op="cumulative_trapezoid")
    d = dx if x is None else _spacings(values, x, ax, "cumulative_trapezoid")
    pairs = (_along(values, ax, 1, n) + _along(values, ax, 0, n - 1)) / 2.0
    out = tnp.cumsum(d * pairs, axis=ax)
    if initial is None:
        return out
    if np.ndim(initial) != 0 or initial != 0:
        raise ShapeError(f"initial must be None or 0, got {initial!r}",
                         op="cumulative_trapezoid")
    shape = list(P.shape_of(out))
    shape[ax] = 1
    return tnp.concatenate([tnp.zeros(tuple(shape), aval_of(P.as_array(out)).dtype), out], ax)


def _safe_div(num, den):
    """``num / den`` where ``den != 0``, else 0 (SciPy's ``true_divide(where=den != 0)``),
    with a derivative that stays finite where ``den`` is 0."""
    nonzero = den != 0
    return tnp.where(nonzero, num / tnp.where(nonzero, den, 1.0), 0.0)


def _basic_simpson(y, stop, h, dx, axis):
    """Simpson's rule over the panels that start at samples ``0, 2, ...`` below ``stop``
    (SciPy's ``_basic_simpson``); ``h`` the spacings or None for equal spacing ``dx``."""
    y0 = _along(y, axis, 0, stop, 2)
    y1 = _along(y, axis, 1, stop + 1, 2)
    y2 = _along(y, axis, 2, stop + 2, 2)
    if h is None:
        return tnp.sum(y0 + 4.0 * y1 + y2, axis=axis) * (dx / 3.0)
    h0 = _along(h, axis, 0, stop, 2)
    h1 = _along(h, axis, 1, stop + 1, 2)
    hsum, hprod = h0 + h1, h0 * h1
    h0_over_h1 = _safe_div(h0, h1)
    panels = hsum / 6.0 * (y0 * (2.0 - _safe_div(1.0, h0_over_h1))
                           + y1 * (hsum * _safe_div(hsum, hprod))
                           + y2 * (2.0 - h0_over_h1))
    return tnp.sum(panels, axis=axis)


def simpson(y, x=None, *, dx=1.0, axis=-1):
    """The integral of ``y`` by the composite Simpson rule along ``axis``, as
    ``scipy.integrate.simpson``: with an even number of samples the last interval gets
    Cartwright's correction (exact for quadratics on any spacing).

    >>> simpson(np.array([0.0, 1.0, 4.0, 9.0, 16.0]))        # x**2 on 0..4
    np.float64(21.333333333333332)
    """
    values, ax = _samples("simpson", y, axis)
    n = P.shape_of(values)[ax]
    h = None if x is None else P.cast(_spacings(values, x, ax, "simpson"), dtypes.float64)
    if n % 2:
        return _basic_simpson(values, n - 2, h, dx, ax)
    last = _along(values, ax, n - 1, n)
    before = _along(values, ax, n - 2, n - 1)
    if n == 2:
        width = np.float64(dx) if h is None else h
        return tnp.squeeze(0.5 * width * (last + before), ax)
    result = _basic_simpson(values, n - 3, h, dx, ax)
    if h is None:
        h0 = h1 = np.float64(dx)
    else:
        h0, h1 = _along(h, ax, n - 3, n - 2), _along(h, ax, n - 2, n - 1)
    alpha = _safe_div(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _safe_div(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _safe_div(1 * h1 ** 3, 6 * h0 * (h0 + h1))
    third = _along(values, ax, n - 3, n - 2)
    return result + tnp.squeeze(alpha * last + beta * before - eta * third, ax)


# ---------------------------------------------------------------- odeint
#
# The solver follows jax.experimental.ode (Dormand & Prince 1980's RK5(4)7M tableau, Hairer,
# Norsett & Wanner's initial step, 4th-order dense output) and its adjoint (Chen et al.
# 2018, arXiv:1806.07366, appendix C): the backward pass integrates the state, its
# cotangent and the parameters' cotangents backwards in time between output times, so its
# memory does not grow with the number of steps.

_ALPHA = (1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0)
_BETA = ((1 / 5,),
         (3 / 40, 9 / 40),
         (44 / 45, -56 / 15, 32 / 9),
         (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
         (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656))
_C_SOL = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
_C_ERR = (35 / 384 - 1951 / 21600, 0.0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1 / 60)
_C_MID = (6025192743 / 30085553152 / 2, 0.0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2)
_ORDER = 5.0
_SCIPY_TOL = 1.49012e-8          # scipy.integrate.odeint's default rtol and atol
_SCIPY_MXSTEP = 500              # its default steps per output time


def _combine(coeffs, ks):
    """``sum(c * k)`` over the nonzero coefficients (Python floats, so no dtype change)."""
    total = None
    for c, k in zip(coeffs, ks):
        if c:
            term = c * k
            total = term if total is None else total + term
    return total


def _dopri_step(f, y, fy, t, dt):
    """One Dormand-Prince step: (y1, f(y1), error estimate, the seven stages)."""
    h = dt.astype(aval_of(y).dtype)
    ks = [fy]
    for a, row in zip(_ALPHA, _BETA):
        ks.append(f(y + h * _combine(row, ks), t + a * dt))
    y1 = y + h * _combine(_C_SOL, ks)
    ks.append(f(y1, t + dt))
    return y1, ks[-1], h * _combine(_C_ERR, ks), ks


def _dense_output(y0, y1, ks, dt):
    """Coefficients (highest power first) of the quartic through the step, in the step's
    relative time, from y0, y1, the midpoint value and the end slopes."""
    h = dt.astype(aval_of(y0).dtype)
    y_mid = y0 + h * _combine(_C_MID, ks)
    dy0, dy1 = h * ks[0], h * ks[-1]
    return (-2. * dy0 + 2. * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid,
            5. * dy0 - 3. * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid,
            -4. * dy0 + dy1 - 11. * y0 - 5. * y1 + 16. * y_mid,
            dy0,
            y0)


def _rms(x):
    if dtypes.is_complex(aval_of(x).dtype):
        x = tnp.abs(x)
    return tnp.sqrt(tnp.mean(x * x))


def _initial_step(f, t0, y0, f0, rtol, atol):
    """Hairer, Norsett & Wanner, Solving ODEs I, sec. II.4 (order 4 as JAX takes it)."""
    scale = atol + tnp.abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = tnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1).astype(aval_of(t0).dtype)
    f1 = f(y0 + h0.astype(aval_of(y0).dtype) * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    h1 = tnp.where((d1 <= 1e-15) & (d2 <= 1e-15), tnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / tnp.maximum(d1, d2)) ** (1. / 5.))
    return tnp.minimum(100. * h0, h1).astype(aval_of(t0).dtype)


def _next_step(dt, ratio, safety=0.9, ifactor=10.0, dfactor=0.2):
    """The step after one of error ratio ``ratio`` (grows at most 10x, shrinks at most 5x
    after a rejection)."""
    low = tnp.where(ratio < 1, 1.0, dfactor)
    safe = tnp.where(ratio == 0, 1.0, ratio)
    factor = tnp.minimum(ifactor, tnp.maximum(safe ** (-1.0 / _ORDER) * safety, low))
    return tnp.where(ratio == 0, dt * ifactor, dt * factor).astype(aval_of(dt).dtype)


def _solve(f, y0, ts, rtol, atol, mxstep, hmax):
    """The states at ``ts`` of ``y' = f(y, t)`` from ``y0`` (flat), shape (len(ts), n)."""
    t0 = ts[0]
    f0 = f(y0, t0)
    dt = stop_gradient(tnp.clip(_initial_step(f, t0, y0, f0, rtol, atol), 0.0, hmax))
    tdt = aval_of(dt).dtype

    def advance(carry, target):
        def running(state):
            i, _, _, t, dt = state[:5]
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, fy, t, dt, last_t = state[:6]
            y1, f1, err, ks = _dopri_step(f, y, fy, t, dt)
            tol = atol + rtol * tnp.maximum(tnp.abs(y), tnp.abs(y1))
            # step sizes are the controller's choice, not a function to differentiate:
            # forward mode then differentiates the steps taken, as the adjoint does
            ratio = stop_gradient(_rms(err / tol))
            accept = ratio <= 1.0
            dt_next = tnp.clip(_next_step(dt, ratio), 0.0, hmax).astype(tdt)
            new = (y1, f1, t + dt, t) + _dense_output(y, y1, ks, dt)
            old = (y, fy, t, last_t) + tuple(state[6:])
            kept = tuple(tnp.where(accept, a, b) for a, b in zip(new, old))
            return (i + 1,) + kept[:3] + (dt_next,) + kept[3:]

        state = lax.while_loop(running, step, (np.int64(0),) + carry)
        _, y, fy, t, dt, last_t = state[:6]
        coeffs = state[6:]
        # relative time in the last step; before any step the coefficients are y0's constant
        stepped = t > last_t
        s = tnp.where(stepped, (target - last_t) / tnp.where(stepped, t - last_t, 1.0), 0.0)
        s = s.astype(aval_of(y).dtype)
        out = coeffs[0]
        for c in coeffs[1:]:
            out = out * s + c
        return state[1:], out

    carry = (y0, f0, t0, dt, t0) + (tnp.zeros_like(y0),) * 4 + (y0,)
    _, ys = lax.scan(advance, carry, ts[1:])
    return tnp.concatenate([y0[None], ys])


def _ravel(tree):
    """(flat vector of the leaves in their common dtype, function rebuilding the tree, each
    leaf in its own dtype, from such a vector or a stack of them)."""
    leaves, treedef = pytree.flatten(tree)
    shapes = [P.shape_of(x) for x in leaves]
    kinds = [aval_of(P.as_array(x)).dtype for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    flat = tnp.concatenate([tnp.ravel(x) for x in leaves]) if len(leaves) != 1 \
        else tnp.ravel(leaves[0])

    def unravel(vec, lead=()):
        parts, start = [], 0
        for shape, size, kind in zip(shapes, sizes, kinds):
            part = tnp.reshape(vec[..., start:start + size], lead + tuple(shape))
            parts.append(part if aval_of(part).dtype == kind else P.cast(part, kind))
            start += size
        return pytree.unflatten(treedef, parts)
    return flat, unravel


def _inexact(x):
    return dtypes.is_inexact(aval_of(x).dtype)


def _make_odeint(f, n_args, rtol, atol, mxstep, hmax, fingerprint):
    """The custom_vjp solve ``(y0, ts, *args) -> ys`` of ``y' = f(y, t, *args)``."""
    def solve(y0, ts, *args):
        return _solve(lambda y, t: f(y, t, *args), y0, ts, rtol, atol, mxstep, hmax)

    solve_vjp = custom_vjp(solve)
    solve_vjp.fingerprint = lambda: fingerprint

    def fwd(y0, ts, *args):
        ys = solve(y0, ts, *args)
        return ys, (ys, ts, args)

    def bwd(res, g):
        ys, ts, args = res
        diff = [k for k, a in enumerate(args) if _inexact(a)]

        def with_diff(y, t, da):
            full = list(args)
            for k, a in zip(diff, da):
                full[k] = a
            return f(y, t, *full)

        da = [args[k] for k in diff]

        def adjoint_system(y, y_bar, minus_t):
            """d/d(-t) of (y, y_bar, t_bar, args_bar): Chen et al.'s augmented dynamics."""
            y_dot, pullback = vjp(with_diff, y, -minus_t, da)
            y_ct, t_ct, a_ct = pullback(y_bar)
            return (-y_dot, y_ct, t_ct, a_ct)

        def back(carry, x):
            y_bar, t0_bar, a_bar = carry
            y_i, t_i, t_prev, g_i, g_prev = x
            t_bar = tnp.real(tnp.dot(f(y_i, t_i, *args), g_i)).astype(aval_of(t0_bar).dtype)
            # solved backwards in time: forwards in -t, from -t_i to -t_prev
            state, unravel = _ravel((y_i, y_bar, t0_bar - t_bar, a_bar))

            def system(s, minus_t):
                y, y_bar, _, _ = unravel(s)
                return _ravel(adjoint_system(y, y_bar, minus_t))[0]
            out = _solve(system, state, tnp.stack([-t_i, -t_prev]), rtol, atol, mxstep, hmax)
            _, y_bar, t0_bar, a_bar = unravel(out[1])
            return (y_bar + g_prev, t0_bar, a_bar), t_bar

        init = (g[-1], tnp.zeros((), aval_of(ts).dtype), [tnp.zeros_like(a) for a in da])
        xs = (ys[1:], ts[1:], ts[:-1], g[1:], g[:-1])
        (y_bar, t0_bar, a_bar), ts_bar = lax.scan(back, init, xs, reverse=True)
        args_bar = [tnp.zeros_like(a) for a in args]
        for k, a in zip(diff, a_bar):
            args_bar[k] = a
        return (y_bar, tnp.concatenate([t0_bar[None], ts_bar]), *args_bar)

    solve_vjp.defvjp(fwd, bwd)
    return solve_vjp


def odeint(func, y0, t, *extra_args, args=(), rtol=None, atol=None, mxstep=0, hmax=0.0,
           tfirst=False):
    """The solution of ``dy/dt = func(y, t, *args)`` at the times ``t`` (monotonic;
    decreasing only when concrete), ``t[0]`` the time of ``y0``, as
    ``scipy.integrate.odeint`` (``args=`` or trailing positional arguments, as
    ``jax.experimental.ode.odeint``; ``tfirst`` for
    ``func(t, y, ...)``). ``y0`` may be a pytree of arrays; the result has its structure
    with a leading axis of ``len(t)``.

    Adaptive Dormand-Prince RK5(4) with local error ``atol + rtol * |y|`` per component
    (defaults 1.49012e-8, SciPy's), at most ``mxstep`` steps (accepted or rejected) per
    output time (0: SciPy's 500) and steps of at most ``hmax`` (0: unbounded). Values
    between steps come from a 4th-order dense output. The loop is a ``lax.while_loop``
    inside a ``lax.scan`` over ``t``. The solve is a ``custom_vjp`` call, which a jitted
    plan runs on NumPy: ``jit(odeint)`` is the interpreter's speed, while ``jit(grad(...))``
    (forward solve and adjoint, both plain loops there) compiles into one kernel. Differentiable in
    ``y0``, ``t`` and every float argument (and in values ``func`` closes over) by the
    adjoint method: the backward pass solves the adjoint system backwards between output
    times, in memory independent of the number of steps.

    >>> odeint(lambda y, t: -y, np.array([1.0]), np.linspace(0.0, 1.0, 3))[:, 0]
    array([1.        , 0.60653066, 0.36787944])
    """
    if extra_args and args:
        raise ShapeError("give the extra arguments of func either positionally or "
                         "as args=(...), not both", op="odeint", source=user_source())
    args = tuple(extra_args) if extra_args else (tuple(args) if isinstance(args, (tuple, list))
                                                 else (args,))
    ts = P.as_array(t)
    if not dtypes.is_inexact(aval_of(ts).dtype) or dtypes.is_complex(aval_of(ts).dtype):
        ts = P.cast(ts, dtypes.float64)
    if len(P.shape_of(ts)) != 1 or P.shape_of(ts)[0] < 1:
        raise ShapeError(f"t must be a 1-D array of output times, got shape "
                         f"{P.shape_of(ts)}", op="odeint", source=user_source())
    user_f = (lambda y, t_, *a: func(t_, y, *a)) if tfirst else func
    if not P.is_tracer(ts) and P.shape_of(ts)[0] > 1 and ts[-1] < ts[0]:
        # backwards in time, as SciPy allows: forwards in s = -t for dy/ds = -func(y, -s)
        def backwards(y, s, *a, f=user_f):
            return pytree.tree_map(lambda v: -P.as_array(v), f(y, -s, *a))
        return odeint(backwards, y0, -ts, *args, rtol=rtol, atol=atol, mxstep=mxstep,
                      hmax=hmax)
    y_flat, unravel = _ravel(pytree.tree_map(P.as_array, y0))
    if not dtypes.is_inexact(aval_of(y_flat).dtype):
        y_flat = P.cast(y_flat, dtypes.float64)
    ydt = aval_of(y_flat).dtype
    arg_leaves, arg_tree = pytree.flatten(pytree.tree_map(P.as_array, args))

    def flat_f(y, t_, *leaves):
        dy = user_f(unravel(y), t_, *pytree.unflatten(arg_tree, list(leaves)))
        out, _ = _ravel(pytree.tree_map(P.as_array, dy))
        if P.shape_of(out) != P.shape_of(y):
            raise ShapeError(f"func returned {P.shape_of(out)} values for a state of "
                             f"{P.shape_of(y)}; it must return the state's structure",
                             op="odeint", source=user_source())
        return P.cast(out, ydt)

    f, captured = closure_convert(flat_f, y_flat, ts[0], *arg_leaves)
    rtol = _SCIPY_TOL if rtol is None else rtol
    atol = _SCIPY_TOL if atol is None else atol
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if P.is_tracer(tol):
            raise DTypeError(f"{name} must be a concrete number or array, not a traced "
                             "value", op="odeint", source=user_source())
    rtol, atol = np.asarray(rtol, ydt), np.asarray(atol, ydt)
    mxstep = _SCIPY_MXSTEP if mxstep in (0, None) else mxstep
    mxstep = np.int64(min(mxstep, np.iinfo(np.int64).max) if math.isfinite(mxstep)
                      else np.iinfo(np.int64).max)
    hmax = np.asarray(np.inf if hmax in (0, None) else hmax, aval_of(ts).dtype)
    fingerprint = (f"odeint(rtol={rtol.tolist()},atol={atol.tolist()},mxstep={int(mxstep)},"
                   f"hmax={float(hmax)},func=P{f.program.fingerprint()})")
    solve = _make_odeint(f, len(arg_leaves) + len(captured), rtol, atol, mxstep, hmax,
                         fingerprint)
    ys = solve(y_flat, ts, *arg_leaves, *captured)
    return unravel(ys, (P.shape_of(ts)[0],))


from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers


class OdeResult(NamedTuple):
    """``solve_ivp``'s result: times ``t``, states ``y`` (one column per time), and the
    status (0; -1 when the solution is not finite)."""
    t: object
    y: object
    status: object
    success: object

    @property
    def message(self):
        return ("The solver successfully reached the end of the integration interval."
                if int(self.status) == 0 else "The solution is not finite.")

    def __getitem__(self, key):
        return getattr(self, key) if isinstance(key, str) else tuple.__getitem__(self, key)


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, args=None, rtol=1e-3, atol=1e-6,
              max_step=np.inf):
    """``dy/dt = fun(t, y, *args)`` from ``y0`` at ``t_span[0]``, reported at ``t_eval``, as
    ``scipy.integrate.solve_ivp`` with method "RK45" (Dormand-Prince, ``odeint``'s solver,
    and its adjoint derivatives). ``t_eval`` is required: a traced program has no
    variable-length output for the solver's own steps.

    >>> solve_ivp(lambda t, y: -y, (0.0, 1.0), np.array([1.0]), t_eval=np.array([1.0])).y
    ...                                    # exp(-1) = 0.3679 to rtol 1e-3 (SciPy: 0.36809)
    array([[0.36820871]])
    """
    if method not in ("RK45", "DOP853", "RK23"):
        raise UnsupportedError(f"method {method!r} is not supported; the explicit "
                               "Runge-Kutta methods are solved by RK45", op="solve_ivp",
                               source=user_source())
    if t_eval is None:
        raise UnsupportedError("pass t_eval, the times to report (the solver's own "
                               "steps have no fixed count)", op="solve_ivp",
                               source=user_source())
    t0, t1 = (float(v) for v in t_span)
    times = P.as_array(t_eval)
    if not dtypes.is_inexact(aval_of(times).dtype):
        times = P.cast(times, dtypes.float64)
    ts = tnp.concatenate([np.full((1,), t0, aval_of(times).dtype), times])
    y0 = P.as_array(y0)
    ys = odeint(fun, y0, ts, *(() if args is None else tuple(args)), rtol=rtol, atol=atol,
                mxstep=np.inf, hmax=max_step, tfirst=True)
    status = tnp.where(tnp.all(tnp.isfinite(ys)), 0, -1)
    return OdeResult(times, tnp.moveaxis(ys[1:], 0, -1), status, status == 0)


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
