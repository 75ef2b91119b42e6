"""Derivative checks against finite differences, as ``jax.test_util``: ``check_grads``,
``check_jvp``, ``check_vjp``.

Each compares tf_numba's derivative with a central difference along a random direction
(a fixed seed), forward mode as a JVP and reverse mode by the inner-product identity
``<vjp(ct), t> == <ct, jvp(t)>``, and raises ``AssertionError`` when they disagree beyond
the tolerance (by default 1e-5 in float64, 2e-3 in float32, JAX's).

>>> check_grads(tnp.sin, (0.5,), order=2)
"""
import functools

import numpy as np

from .api import jvp, vjp
from .core import pytree

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4
# JAX's default gradient tolerances by dtype
_TOLERANCE = {np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
              np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5}


def _tolerance(tree, given):
    if given is not None:
        return given
    found = [_TOLERANCE.get(np.asarray(x).dtype, 0.0) for x in pytree.flatten(tree)[0]]
    return max(found, default=1e-5)


def _close(actual, expected, atol, rtol, err_msg):
    a_leaves, a_tree = pytree.flatten(actual)
    e_leaves, e_tree = pytree.flatten(expected)
    assert a_tree == e_tree, f"{err_msg}: structure {a_tree} != {e_tree}"
    atol, rtol = _tolerance(expected, atol), _tolerance(expected, rtol)
    for a, e in zip(a_leaves, e_leaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), atol=atol, rtol=rtol,
                                   err_msg=err_msg)


def _rand_like(rng, x):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        return np.zeros(x.shape, x.dtype)
    out = rng.standard_normal(x.shape)
    if np.issubdtype(x.dtype, np.complexfloating):
        out = out + 1j * rng.standard_normal(x.shape)
    return np.asarray(out, x.dtype)


def _axpy(a, x, y):
    return pytree.tree_map(lambda xi, yi: np.asarray(yi) + a * np.asarray(xi)
                           if np.issubdtype(np.asarray(yi).dtype, np.inexact) else yi, x, y)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """``(f(x + eps t) - f(x - eps t)) / (2 eps)``, leaf by leaf."""
    plus = f(*_axpy(eps, tangents, primals))
    minus = f(*_axpy(-eps, tangents, primals))
    return pytree.tree_map(lambda p, m: (np.asarray(p) - np.asarray(m)) * (0.5 / eps),
                           plus, minus)


def _inner(xs, ys):
    total = 0.0
    for x, y in zip(pytree.flatten(xs)[0], pytree.flatten(ys)[0]):
        x, y = np.asarray(x), np.asarray(y)
        if np.issubdtype(x.dtype, np.inexact) and np.issubdtype(y.dtype, np.inexact):
            # the real inner product of C^n as R^2n, so complex tangents and cotangents
            # are paired as JAX's check_vjp pairs them
            total = total + np.real(np.sum(np.conj(x) * y))
    return total


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Assert that ``f_jvp(args, tangents)`` gives ``f(*args)`` and the central difference
    of ``f`` along random ``tangents``."""
    rng = np.random.RandomState(0)
    tangent = pytree.tree_map(functools.partial(_rand_like, rng), args)
    value, t_out = f_jvp(args, tangent)
    _close(value, f(*args), atol, rtol, f"{err_msg or 'JVP'} primal")
    _close(t_out, numerical_jvp(f, args, tangent, eps), atol, rtol,
           f"{err_msg or 'JVP'} tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Assert that ``f_vjp(*args) -> (f(*args), pullback)`` and that the pullback of a
    random cotangent meets the central difference along a random tangent:
    ``<pullback(ct), t> == <ct, df·t>``."""
    rng = np.random.RandomState(0)
    value, pullback = f_vjp(*args)
    _close(value, f(*args), atol, rtol, f"{err_msg or 'VJP'} primal")
    tangent = pytree.tree_map(functools.partial(_rand_like, rng), args)
    tangent_out = numerical_jvp(f, args, tangent, eps)
    cotangent = pytree.tree_map(functools.partial(_rand_like, rng), value)
    conj = functools.partial(pytree.tree_map, lambda x: np.conj(np.asarray(x)))
    cotangent_out = conj(pullback(conj(cotangent)))
    _close(_inner(tangent, cotangent_out), _inner(tangent_out, cotangent), atol, rtol,
           f"{err_msg or 'VJP'} inner product")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Assert that ``f``'s derivatives up to ``order`` (forward mode with ``"fwd"`` in
    ``modes``, reverse with ``"rev"``) agree with finite differences, as
    ``jax.test_util.check_grads``.

    >>> check_grads(lambda x, y: x * tnp.sin(y), (1.0, 2.0), order=2, modes=["rev"])
    """
    args = tuple(args)
    eps = eps or EPS

    def check(f, args, order, err_msg=""):
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, msg)
            if order > 1:
                def f_vjp(*args):
                    out, pullback = vjp(f, *args)
                    return pullback(out)
                check(f_vjp, args, order - 1, msg)
    check(f, args, order)


from .tracebacks import mark_entry_points  # noqa: E402
mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
