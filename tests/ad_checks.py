"""Finite-difference checks of tf_numba derivatives, in float64, as ``jax.test_util``.

``check_jvp(f, args)`` compares ``tf.jvp`` with a central difference along a random tangent;
``check_vjp(f, args)`` checks ``<vjp(ct), t> == <ct, jvp(t)>`` against the same difference;
``check_grads(f, args, order=2)`` does both, then recurses on the derivative functions
(jvp of jvp, jvp of vjp, vjp of vjp, ...), so second derivatives are checked too.

Complex values follow JAX's convention: tangents perturb real and imaginary parts together
(the derivative is R-linear), cotangents pair with tangents by ``Re(sum(a * b))`` (no
conjugate), so for real ``f(z)`` the gradient is ``df/dx - i df/dy``.
"""
import numpy as np

import tf_numba as tf
from tf_numba.core import pytree

EPS = 1e-6      # finite-difference step, scaled by the size of the point
RTOL = 1e-6
ATOL = 1e-6


def _is_inexact(x):
    return np.asarray(x).dtype.kind in "fc"


def _random_like(rng, x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    if x.dtype.kind == "f":
        return rng.standard_normal(x.shape).astype(x.dtype)
    return np.zeros(x.shape, x.dtype)


def _tangents(rng, args):
    leaves, tree = pytree.flatten(args)
    return pytree.unflatten(tree, [_random_like(rng, x) for x in leaves])


def _leaves(tree):
    return [np.asarray(x) for x in pytree.flatten(tree)[0]]


def _axpy(a, t, x):
    """x + a t on every inexact leaf (integer leaves stay as they are)."""
    leaves, tree = pytree.flatten(x)
    ts = pytree.flatten(t)[0]
    return pytree.unflatten(tree, [np.asarray(xi) + a * ti if _is_inexact(xi) else xi
                                   for xi, ti in zip(leaves, ts)])


def _step(args):
    scale = max([1.0] + [float(np.max(np.abs(x))) for x in _leaves(args)
                         if _is_inexact(x) and x.size])
    return EPS * scale


def numerical_jvp(f, args, tangents, eps=None):
    """Central difference ``(f(x + h t) - f(x - h t)) / 2h``, leaf by leaf of the output."""
    h = _step(args) if eps is None else eps
    plus = _leaves(f(*_axpy(h, tangents, args)))
    minus = _leaves(f(*_axpy(-h, tangents, args)))
    return [(p - m) / (2 * h) if _is_inexact(p) else np.zeros(p.shape, p.dtype)
            for p, m in zip(plus, minus)]


def inner(a, b):
    """JAX's pairing of cotangents with tangents: ``Re(sum(a * b))`` over all leaves."""
    total = 0.0
    for x, y in zip(_leaves(a), _leaves(b)):
        if _is_inexact(x) and _is_inexact(y):
            total += float(np.real(np.sum(x * y)))
    return total


def assert_close(actual, expected, what, rtol=RTOL, atol=ATOL):
    """Elementwise ``|a - e| <= atol + rtol * max(|e|)``: error relative to the leaf's scale."""
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    assert len(a_leaves) == len(e_leaves), f"{what}: {len(a_leaves)} vs {len(e_leaves)} leaves"
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        assert a.shape == e.shape, f"{what}, leaf {i}: shape {a.shape} vs expected {e.shape}"
        scale = float(np.max(np.abs(e))) if e.size else 0.0
        err = np.abs(a - e)
        bad = ~(err <= atol + rtol * max(scale, 1.0))
        if np.any(bad):
            raise AssertionError(
                f"{what}, leaf {i}: max error {float(np.max(err)):.3g} "
                f"(scale {scale:.3g})\n  actual:   {a!r}\n  expected: {e!r}")


def check_jvp(f, args, *, rng=None, rtol=RTOL, atol=ATOL, eps=None):
    """``tf.jvp(f, args, t)`` matches ``f(args)`` and a central difference along ``t``."""
    rng = np.random.default_rng(0) if rng is None else rng
    args = tuple(args)
    t = _tangents(rng, args)
    out, tout = tf.jvp(f, args, t)
    for i, (o, to) in enumerate(zip(_leaves(out), _leaves(tout))):
        assert not _is_inexact(o) or (o.shape == to.shape and o.dtype == to.dtype), (
            f"jvp of {_name(f)}: tangent {i} is {to.dtype}{list(to.shape)}, its output is "
            f"{o.dtype}{list(o.shape)}")
    assert_close(out, f(*args), f"jvp primal output of {_name(f)}", rtol, atol)
    assert_close(tout, numerical_jvp(f, args, t, eps), f"jvp tangent of {_name(f)}",
                 rtol, atol)


def check_vjp(f, args, *, rng=None, rtol=RTOL, atol=ATOL, eps=None):
    """``<vjp(ct), t> == <ct, (f(x + h t) - f(x - h t)) / 2h>`` for random ``t`` and ``ct``,
    and ``<vjp(ct), t> == <ct, jvp(t)>`` to rounding error."""
    rng = np.random.default_rng(1) if rng is None else rng
    args = tuple(args)
    out, vjp_fn = tf.vjp(f, *args)
    assert_close(out, f(*args), f"vjp primal output of {_name(f)}", rtol, atol)
    ct = _tangents(rng, out)
    ct_in = vjp_fn(ct)
    for i, (c, x) in enumerate(zip(_leaves(ct_in), _leaves(args))):
        # an integer or bool input's cotangent is a float0 zero, as JAX's
        want = x.dtype if _is_inexact(x) else tf.float0
        assert c.shape == x.shape and c.dtype == want, (
            f"vjp of {_name(f)}: cotangent {i} is {c.dtype}{list(c.shape)}, its primal is "
            f"{x.dtype}{list(x.shape)}")
    t = _tangents(rng, args)
    lhs = inner(ct_in, t)
    fd = inner(ct, numerical_jvp(f, args, t, eps))
    _, tout = tf.jvp(f, args, t)
    ad = inner(ct, tout)
    scale = max(1.0, abs(fd), _norm(ct) * _norm(t))
    assert abs(lhs - fd) <= atol + rtol * scale, (
        f"vjp of {_name(f)}: <vjp(ct), t> = {lhs!r} but <ct, fd_jvp(t)> = {fd!r}")
    assert abs(lhs - ad) <= 1e-10 * scale, (
        f"vjp of {_name(f)} disagrees with its jvp: <vjp(ct), t> = {lhs!r}, "
        f"<ct, jvp(t)> = {ad!r}")


def _norm(tree):
    return float(np.sqrt(sum(np.sum(np.abs(x) ** 2) for x in _leaves(tree))))


def _name(f):
    return getattr(f, "__qualname__", repr(f))


def check_grads(f, args, order=2, modes=("fwd", "rev"), *, rng=None, rtol=RTOL, atol=ATOL,
                eps=None):
    """Check ``f``'s derivatives up to ``order`` against finite differences.

    Order 1 checks jvp and vjp; each further order applies the same checks to the derivative
    functions ``x -> jvp(f, x, t)`` and ``x -> vjp(f, x)(ct)`` for fixed random ``t``, ``ct``
    (so order 2 covers forward-over-forward, forward-over-reverse, reverse-over-forward and
    reverse-over-reverse). Tolerances loosen by 10x per order, as FD error compounds.
    """
    rng = np.random.default_rng(2) if rng is None else rng
    args = tuple(args)

    def recurse(fn, level, tol):
        # every check of this order first, so a failure names the lowest order that fails
        kw = dict(rng=rng, rtol=tol, atol=tol * atol / rtol, eps=eps)
        if "fwd" in modes:
            check_jvp(fn, args, **kw)
        if "rev" in modes:
            check_vjp(fn, args, **kw)
        if level >= order:
            return
        if "fwd" in modes:
            t = _tangents(rng, args)

            def f_jvp(*xs):
                return tf.jvp(fn, xs, t)
            f_jvp.__qualname__ = f"jvp({_name(fn)})"
            recurse(f_jvp, level + 1, 10 * tol)
        if "rev" in modes:
            ct = _tangents(rng, fn(*args))

            def f_vjp(*xs):
                return tf.vjp(fn, *xs)[1](ct)
            f_vjp.__qualname__ = f"vjp({_name(fn)})"
            recurse(f_vjp, level + 1, 10 * tol)

    recurse(f, 1, rtol)
