"""tf_numba.scipy.sparse.linalg: cg, bicgstab and gmres against NumPy's solution and JAX's
iterates (x64) where JAX is installed; under jit and vmap; implicit derivatives against
the derivative of the exact solve and finite differences."""
import importlib.util

import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba.errors import ShapeError
from tf_numba.scipy.sparse import linalg as sl

SOLVERS = ["cg", "bicgstab", "gmres"]
RNG = np.random.default_rng(0)
_B = RNG.normal(size=(6, 6))
SPD = _B @ _B.T + 6 * np.eye(6)
GENERAL = SPD + RNG.normal(size=(6, 6))
RHS = RNG.normal(size=6)


def _matrix(name):
    return SPD if name == "cg" else GENERAL


@pytest.mark.parametrize("name", SOLVERS)
def test_solves_as_numpy_and_stops_at_the_tolerance(name):
    a = _matrix(name)
    x, _ = getattr(sl, name)(a, RHS, tol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(a, RHS), rtol=1e-10)
    small_basis = {"restart": 2} if name == "gmres" else {}
    loose, _ = getattr(sl, name)(lambda v: a @ v, RHS, tol=1e-2, **small_basis)
    residual = np.linalg.norm(a @ loose - RHS)
    assert residual <= 1e-2 * np.linalg.norm(RHS) and residual > 1e-12


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="jax is not installed")
@pytest.mark.parametrize("name", SOLVERS)
def test_iterates_as_jax(name):
    import jax
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.sparse import linalg as jl
    a = _matrix(name)
    for kw in ({}, {"maxiter": 2}, {"M": np.diag(1 / np.diag(a))}):
        if name == "gmres" and "maxiter" in kw:
            kw = {"maxiter": 1, "restart": 3}
        ours = getattr(sl, name)(a, RHS, **kw)[0]
        theirs = getattr(jl, name)(a, RHS, **kw)[0]
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", SOLVERS)
def test_jit_vmap_and_pytrees(name):
    a = _matrix(name)
    exact = np.linalg.solve(a, RHS)
    f = tf.jit(lambda m, v: getattr(sl, name)(lambda x: m @ x, v, tol=1e-12)[0])
    np.testing.assert_allclose(f(a, RHS), exact, rtol=1e-10)
    batched = tf.vmap(lambda v: getattr(sl, name)(a, v, tol=1e-12)[0])(np.stack([RHS, -RHS]))
    np.testing.assert_allclose(batched, np.stack([exact, -exact]), rtol=1e-10)
    # a vector given as a pytree: two halves of the same system
    def halves(tree):
        full = a @ tnp.concatenate([tree["u"], tree["v"]])
        return {"u": full[:3], "v": full[3:]}
    tree, _ = getattr(sl, name)(halves, {"u": RHS[:3], "v": RHS[3:]}, tol=1e-12)
    np.testing.assert_allclose(np.concatenate([tree["u"], tree["v"]]), exact, rtol=1e-10)


@pytest.mark.parametrize("name", SOLVERS)
def test_derivatives_are_the_exact_solves(name):
    a = _matrix(name)

    def loss(m, v):
        return tnp.sum(getattr(sl, name)(lambda x: m @ x, v, tol=1e-13)[0] ** 2)
    x = np.linalg.solve(a, RHS)
    adjoint = np.linalg.solve(a.T, 2 * x)
    ga, gb = tf.grad(loss, argnums=(0, 1))(a, RHS)
    np.testing.assert_allclose(gb, adjoint, rtol=1e-9)
    np.testing.assert_allclose(ga, -np.outer(adjoint, x), rtol=1e-9)
    tf.test_util.check_grads(lambda v: loss(a, v), (RHS,), order=1, rtol=1e-5)


def test_complex_hermitian_cg():
    h = SPD + 1j * (RNG.normal(size=(6, 6)) * 0.1)
    h = (h + h.conj().T) / 2
    b = RHS + 1j * RHS[::-1]
    np.testing.assert_allclose(sl.cg(h, b, tol=1e-12)[0], np.linalg.solve(h, b), rtol=1e-9)


def test_gmres_reports_nan_and_mismatched_starts_are_errors():
    x, info = sl.gmres(GENERAL, RHS)
    assert info == 0
    x, info = sl.gmres(GENERAL, RHS, x0=np.full(6, np.nan))    # as JAX's: the start stays
    assert info == -1 and np.isnan(x).all()
    with pytest.raises(ShapeError, match="equal shapes"):
        sl.cg(SPD, RHS, x0=np.zeros(5))
    with pytest.raises(ShapeError, match="square"):
        sl.bicgstab(np.ones((2, 3)), RHS)
