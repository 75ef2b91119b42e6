"""Shared checks for the primitive tests: impl vs abstract eval, and AD vs finite differences."""
import numpy as np

from tf_numba.api import jvp, make_program, vjp
from tf_numba.core.interpreter import eval_program

FLOATS = (np.float32, np.float64)
INTS = (np.int32, np.int64)
COMPLEX = (np.complex64, np.complex128)
NUMERIC = FLOATS + INTS + COMPLEX
ALL = NUMERIC + (np.bool_,)


def rand(rng, shape, dtype=np.float64):
    """Random values of ``dtype``: small ints, bools, normal floats, complex normals."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(-5, 6, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def evaluate(fn, *args):
    """``fn(*args)`` run through the program interpreter, whose impl outputs are uncast.

    Checks every output against the traced abstract value (shape and exact dtype) and
    against the eager result, then returns the eager result.
    """
    program = make_program(fn)(*args)
    outs = eval_program(program, list(args))
    eager = fn(*args)
    eager_list = eager if isinstance(eager, (list, tuple)) else [eager]
    for out, aval, e in zip(outs, program.out_avals, eager_list):
        out = np.asarray(out)
        assert out.shape == aval.shape, (out.shape, aval)
        assert out.dtype == aval.dtype, (out.dtype, aval)
        np.testing.assert_array_equal(out, np.asarray(e))
    return eager


def _fd(fn, args, tangents, eps):
    plus = fn(*[a + eps * t for a, t in zip(args, tangents)])
    minus = fn(*[a - eps * t for a, t in zip(args, tangents)])
    return (np.asarray(plus) - np.asarray(minus)) / (2 * eps)


def _like(rng, a):
    return rand(rng, np.shape(a), np.asarray(a).dtype)


def check_jvp(fn, args, rng, *, eps=1e-6, rtol=1e-5, atol=1e-6):
    """jvp's tangent output against central differences, on float64 or complex128 ``args``."""
    tangents = [_like(rng, a) for a in args]
    out, tout = jvp(fn, tuple(args), tuple(tangents))
    np.testing.assert_allclose(out, fn(*args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tout, _fd(fn, args, tangents, eps), rtol=rtol, atol=atol)


def check_vjp(fn, args, rng, *, eps=1e-6, rtol=1e-5, atol=1e-6):
    """<ct, J t> from finite differences against <vjp(ct), t>, on float64 or complex128
    ``args``. Complex values pair by ``Re(sum(a * b))`` (JAX's convention: no conjugate)."""
    tangents = [_like(rng, a) for a in args]
    out, vjp_fn = vjp(fn, *args)
    ct = _like(rng, out)
    cts = vjp_fn(ct)
    for c, a in zip(cts, args):
        assert np.shape(c) == np.shape(a)
    lhs = np.real(np.sum(ct * _fd(fn, args, tangents, eps)))
    rhs = sum(np.real(np.sum(c * t)) for c, t in zip(cts, tangents))
    np.testing.assert_allclose(rhs, lhs, rtol=rtol, atol=atol)


def check_grads(fn, args, rng, *, order=2, **tol):
    """JVP and VJP checks of ``fn`` and (for order 2) of its JVP, which tests that the rules
    are themselves built from differentiable primitives."""
    check_jvp(fn, args, rng, **tol)
    check_vjp(fn, args, rng, **tol)
    if order >= 2:
        tangents = [_like(rng, a) for a in args]

        def derivative(*xs):
            return jvp(fn, xs, tuple(tangents))[1]
        check_jvp(derivative, args, rng, **tol)
        check_vjp(derivative, args, rng, **tol)
