"""The linear algebra of issue 17: tnp.linalg.eig/eigvals/tensorsolve/tensorinv/cond/
matrix_rank and tf_numba.scipy.linalg.lu/schur/sqrtm/polar/solve_sylvester/solve_banded/
block_diag/toeplitz against NumPy/SciPy (batched), derivatives against finite differences
to second order (and JAX's eig where installed), jit equal to eager."""
import numpy as np
import pytest
import scipy.linalg as sl

import tf_numba as tf
import tf_numba.numpy as tnp
import tf_numba.scipy.linalg as tsl
from tf_numba.errors import MissingRuleError

from ad_checks import check_grads

TL = tnp.linalg


def rnd(*shape, seed=0):
    return np.random.default_rng(seed + 7 * len(shape)).standard_normal(shape)


def _per_matrix(fn, a):
    return np.stack([fn(m) for m in a.reshape((-1,) + a.shape[-2:])]).reshape(
        a.shape[:-2] + fn(a.reshape((-1,) + a.shape[-2:])[0]).shape)


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------- values

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_eig_and_eigvals_match_numpy_batched_and_complex(dtype):
    a = rnd(2, 4, 4).astype(dtype)
    if dtype == np.complex128:
        a = a + 1j * rnd(2, 4, 4, seed=3)
    w, v = TL.eig(a)
    out = np.result_type(dtype, np.complex64)
    assert w.dtype == v.dtype == out and w.shape == (2, 4) and v.shape == (2, 4, 4)
    ref_w, ref_v = np.linalg.eig(a)
    close(w, ref_w.astype(out), 1e-5 if dtype == np.float32 else 1e-12)
    close(v, ref_v.astype(out), 1e-5 if dtype == np.float32 else 1e-12)
    close(TL.eigvals(a), ref_w, 1e-5 if dtype == np.float32 else 1e-12)
    close(tsl.eigvals(a), ref_w, 1e-5 if dtype == np.float32 else 1e-12)


def test_lu_matches_scipy_for_square_tall_wide_and_batched():
    for shape in ((4, 4), (5, 3), (3, 5), (2, 4, 4)):
        a = rnd(*shape)
        got = tsl.lu(a)
        for g, w in zip(got, _lu_ref(a)):
            close(g, w)
        close(tsl.lu(a, permute_l=True)[0], _per_matrix(lambda m: sl.lu(m, permute_l=True)[0],
                                                        a))
        if len(shape) == 2:
            np.testing.assert_array_equal(tsl.lu(a, p_indices=True)[0],
                                          sl.lu(a, p_indices=True)[0])


def _lu_ref(a):
    return [_per_matrix(lambda m, k=k: sl.lu(m)[k], a) for k in range(3)]


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_matches_scipy(output):
    a = rnd(2, 4, 4)
    t, z = tsl.schur(a, output)
    close(t, _per_matrix(lambda m: sl.schur(m, output)[0], a))
    close(z, _per_matrix(lambda m: sl.schur(m, output)[1], a))
    close(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a)


def test_sqrtm_polar_sylvester_banded_match_scipy():
    a = rnd(3, 3)
    s = a @ a.T + np.eye(3)
    close(tsl.sqrtm(s), sl.sqrtm(s))
    assert np.all(np.isnan(tsl.sqrtm(-s)))      # SciPy: complex; a real op: NaN
    close(tsl.sqrtm(-s + 0j), sl.sqrtm(-s + 0j))
    for side in ("right", "left"):
        for shape in ((4, 4), (5, 3), (3, 5)):
            b = rnd(*shape)
            for got, want in zip(tsl.polar(b, side), sl.polar(b, side)):
                close(got, want)
    b, q = rnd(2, 2, seed=1) + 3 * np.eye(2), rnd(3, 2, seed=2)
    close(tsl.solve_sylvester(s, b, q), sl.solve_sylvester(s, b, q))
    ab, rhs = rnd(4, 6), rnd(6)
    close(tsl.solve_banded((1, 2), ab, rhs), sl.solve_banded((1, 2), ab, rhs))
    close(tsl.solve_banded((1, 2), ab, rnd(6, 2)), sl.solve_banded((1, 2), ab, rnd(6, 2)))
    close(tsl.solve_banded((0, 0), ab[:1], rhs), sl.solve_banded((0, 0), ab[:1], rhs))


def test_block_diag_and_toeplitz_match_scipy():
    parts = (np.array([[1.0, 2.0]]), np.array([3, 4]), np.float32(5), np.ones((2, 3)))
    got, want = tsl.block_diag(*parts), sl.block_diag(*parts)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(tsl.block_diag(), sl.block_diag())
    c, r = np.array([1.0, 2.0, 3.0]), np.array([9.0, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(tsl.toeplitz(c, r), sl.toeplitz(c, r))
    np.testing.assert_array_equal(tsl.toeplitz(c * 1j + 1), sl.toeplitz(c * 1j + 1))
    batch_c = rnd(2, 3)
    np.testing.assert_array_equal(tsl.toeplitz(batch_c, r), sl.toeplitz(batch_c, r))


def test_tensorsolve_tensorinv_cond_matrix_rank_match_numpy():
    a, b = rnd(2, 3, 6), rnd(2, 3)
    a = a.reshape(2, 3, 2, 3)
    close(TL.tensorsolve(a, b), np.linalg.tensorsolve(a, b))
    moved = np.moveaxis(a, 0, 3)
    close(TL.tensorsolve(moved, rnd(3, 2), axes=(0,)),
          np.linalg.tensorsolve(moved, rnd(3, 2), axes=(0,)))
    t = rnd(4, 6, 8, 3)
    close(TL.tensorinv(t), np.linalg.tensorinv(t))
    x = rnd(3, 4, 4)
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"):
        close(TL.cond(x, p), np.linalg.cond(x, p))
    close(TL.cond(rnd(3, 5)), np.linalg.cond(rnd(3, 5)))
    low = rnd(5, 2) @ rnd(2, 4)
    for m in (low, np.ones((3, 3)), np.zeros((2, 2)), rnd(2, 3, 3)):
        np.testing.assert_array_equal(TL.matrix_rank(m), np.linalg.matrix_rank(m))
    assert TL.matrix_rank(low, tol=1e-30) == np.linalg.matrix_rank(low, tol=1e-30)
    assert TL.matrix_rank(np.zeros(3)) == 0 and TL.matrix_rank(np.ones(3)) == 1
    with pytest.raises(np.linalg.LinAlgError, match="tensorsolve"):
        TL.tensorsolve(rnd(2, 3, 4), rnd(2, 3))


# ---------------------------------------------------------------- derivatives

def _eig_invariants(a):
    """Functions of eig that do not depend on LAPACK's choice of eigenvector phase."""
    w, v = TL.eig(a)
    weights = np.arange(1.0, 1 + a.shape[-1])
    return (tnp.real(w) * weights, tnp.imag(w) ** 2, tnp.abs(v) ** 2)


GRAD_CASES = [
    ("eig", _eig_invariants, lambda: (rnd(4, 4),)),
    ("eig batched", _eig_invariants, lambda: (rnd(2, 3, 3),)),
    ("eigvals", lambda a: TL.eigvals(a) * np.array([1.0, 2j, 3.0]), lambda: (rnd(3, 3),)),
    ("lu square", lambda a: tsl.lu(a)[1:], lambda: (rnd(4, 4),)),
    ("lu tall", lambda a: tsl.lu(a)[1:], lambda: (rnd(5, 3),)),
    ("lu wide", lambda a: tsl.lu(a)[1:], lambda: (rnd(3, 5),)),
    ("sqrtm", tsl.sqrtm, lambda: (rnd(3, 3) @ rnd(3, 3).T + np.eye(3),)),
    ("sqrtm general", tsl.sqrtm, lambda: (rnd(3, 3) + 4 * np.eye(3),)),
    ("solve_sylvester", tsl.solve_sylvester,
     lambda: (rnd(3, 3) + 3 * np.eye(3), rnd(2, 2, seed=1) + 3 * np.eye(2), rnd(3, 2))),
    ("polar right", tsl.polar, lambda: (rnd(4, 3),)),
    ("polar left", lambda a: tsl.polar(a, "left"), lambda: (rnd(3, 4),)),
    ("polar orthogonal", tsl.polar, lambda: (np.linalg.qr(rnd(3, 3))[0],)),
    ("solve_banded", lambda ab, b: tsl.solve_banded((1, 2), ab, b),
     lambda: (rnd(4, 5) + np.array([[0], [0], [4], [0]]), rnd(5, 2))),
    ("solve_banded vector", lambda ab, b: tsl.solve_banded((2, 0), ab, b),
     lambda: (rnd(3, 4) + np.array([[3], [0], [0]]), rnd(4))),
    ("block_diag", lambda x, y: tsl.block_diag(x, y), lambda: (rnd(2, 2), rnd(3))),
    ("toeplitz", tsl.toeplitz, lambda: (rnd(3), rnd(4))),
    ("tensorsolve", TL.tensorsolve, lambda: (rnd(6, 6).reshape(2, 3, 2, 3) + np.eye(6).reshape(
        2, 3, 2, 3) * 3, rnd(2, 3))),
    ("tensorinv", TL.tensorinv, lambda: ((rnd(6, 6) + 3 * np.eye(6)).reshape(2, 3, 6),)),
    ("cond", TL.cond, lambda: (rnd(3, 3),)),
    ("cond fro", lambda a: TL.cond(a, "fro"), lambda: (rnd(3, 3),)),
]


@pytest.mark.parametrize("name, fn, make", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_derivatives_to_second_order(name, fn, make):
    check_grads(fn, make(), order=2, rtol=1e-5, atol=1e-5)


def test_eig_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a = rnd(4, 4)

    def loss(lib, eig):
        def f(m):
            w, v = eig(m)
            return lib.sum(lib.real(w) ** 3 + lib.imag(w) ** 2) + lib.sum(lib.abs(v) ** 2 * a)
        return f
    got = tf.grad(loss(tnp, TL.eig))(a)
    def jax_eig(m):     # JAX asks for an opt-in to eigenvector derivatives
        return jax.lax.linalg.eig(m, compute_left_eigenvectors=False,
                                  enable_eigvec_derivs=True)
    want = jax.grad(loss(jnp, jax_eig))(a)
    close(got, np.asarray(want), 1e-9)


def test_real_schur_derivatives_match_finite_differences():
    # real eigenvalues only, 2 x 2 blocks of complex pairs, a stack of matrices
    # (LAPACK's real form can turn a 2 x 2 block by 90 degrees under a perturbation of
    # 1e-6, one 5 x 5 matrix in 30: these are matrices whose form is continuous there)
    rng = np.random.default_rng(0)
    three, four, stack = (rng.standard_normal((3, 3)), rng.standard_normal((4, 4)),
                          rng.standard_normal((2, 4, 4)))
    assert np.any(np.diag(sl.schur(four)[0], -1)) and np.any(np.diag(sl.schur(stack[0])[0], -1))
    for a in (three, np.stack([four, stack[0]])):
        check_grads(lambda x: tsl.schur(x), (a,), order=2, rtol=1e-5)


def test_real_schur_derivative_solves_the_defining_equations():
    # dZ T Z^T + Z dT Z^T + Z T dZ^T = dA, Z^T dZ skew, dT of T's shape (zero below but
    # for the blocks' subdiagonals, blocks' diagonals equal): they fix the derivative
    rng = np.random.default_rng(5)
    a, d = rng.standard_normal((2, 30, 5, 5))
    (t, z), (dt, dz) = tf.jvp(lambda x: tsl.schur(x), (a,), (d,))
    zt = np.swapaxes(z, -1, -2)
    np.testing.assert_allclose(dz @ t @ zt + z @ dt @ zt + z @ t @ np.swapaxes(dz, -1, -2), d,
                               atol=1e-12)
    omega = zt @ dz
    np.testing.assert_allclose(omega, -np.swapaxes(omega, -1, -2), atol=1e-12)
    sub = np.diagonal(t, -1, -2, -1) != 0
    assert sub.any()
    np.testing.assert_allclose(np.tril(dt, -2), 0, atol=1e-12)
    np.testing.assert_allclose(np.where(sub, 0, np.diagonal(dt, -1, -2, -1)), 0, atol=1e-12)
    diag = np.diagonal(dt, 0, -2, -1)
    np.testing.assert_allclose(np.where(sub, diag[..., 1:] - diag[..., :-1], 0), 0, atol=1e-10)


def test_complex_schur_derivative_is_missing_rule_error():
    with pytest.raises(MissingRuleError, match="schur"):
        tf.grad(lambda a: tnp.sum(tnp.real(tsl.schur(a, "complex")[0])))(rnd(3, 3))


def test_jit_equals_eager():
    def f(a, ab, b):
        w, v = TL.eig(a)
        return (tnp.sum(tnp.abs(v) ** 2 * a) + tnp.sum(tnp.real(w))
                + tnp.sum(tsl.sqrtm(a @ a.T + tnp.eye(3)))
                + tnp.sum(tsl.solve_banded((1, 1), ab, b)) + tnp.sum(tsl.lu(a)[2]))
    args = (rnd(3, 3), rnd(3, 3) + np.array([[0], [4], [0]]), rnd(3))
    close(tf.jit(f, tiered=False)(*args), f(*args), 1e-12)
    g = tf.grad(f, argnums=(0, 1, 2))
    for got, want in zip(tf.jit(g, tiered=False)(*args), g(*args)):
        close(got, want, 1e-10)


# ---------------------------------------------------------------- the rest of JAX's names

_RNG = np.random.default_rng(7)
_V, _W = _RNG.normal(size=5) + [2.0, 0, 0, 0, 0], _RNG.normal(size=4)   # a[0] far from 0
BUILT = {   # name: arguments; compared with SciPy, differentiated in the float vectors
    "circulant": (_V,), "hankel": (_V, _W), "fiedler": (_V,), "companion": (_V,),
    "fiedler_companion": (_V,), "leslie": (_V, _W),
}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_special_matrices_from_vectors_match_scipy_batch_and_differentiate(name):
    ours, theirs = getattr(tsl, name), getattr(sl, name)
    args = BUILT[name]
    np.testing.assert_allclose(ours(*args), theirs(*args), rtol=1e-15)
    batched = ours(*[np.stack([a, 2 * a]) for a in args])
    np.testing.assert_allclose(batched[1], theirs(*[2 * a for a in args]), rtol=1e-15)
    np.testing.assert_allclose(tf.vmap(ours)(*[np.stack([a, a]) for a in args])[0],
                               theirs(*args), rtol=1e-15)
    tf.test_util.check_grads(ours, args, order=1)


def test_convolution_matrix_and_constant_matrices_match_scipy():
    for n in (1, 2, 3, 7):
        for mode in ("full", "same", "valid"):
            np.testing.assert_array_equal(tsl.convolution_matrix(_V, n, mode),
                                          sl.convolution_matrix(_V, n, mode))
    for name, args in [("hilbert", (4,)), ("invhilbert", (4,)), ("hadamard", (8,)),
                       ("helmert", (5,)), ("pascal", (5,)), ("invpascal", (5,)),
                       ("dft", (4,)), ("pascal", (4, "lower")), ("dft", (3, "sqrtn"))]:
        np.testing.assert_allclose(getattr(tsl, name)(*args),
                                   getattr(sl, name)(*args), rtol=1e-15)


def test_hessenberg_rsf2csf_funm_qr_multiply_eigh_tridiagonal_match_scipy():
    a = _RNG.normal(size=(5, 5))
    for m in (a, a + 1j * _RNG.normal(size=(5, 5))):
        for got, want in zip(tsl.hessenberg(m, calc_q=True),
                             sl.hessenberg(m, calc_q=True)):
            np.testing.assert_allclose(got, want, atol=1e-13)
    t, z = sl.schur(a)
    for got, want in zip(tsl.rsf2csf(t, z), sl.rsf2csf(t, z)):
        np.testing.assert_allclose(got, want, atol=1e-14)
    np.testing.assert_allclose(tsl.funm(a, tnp.exp), sl.expm(a), rtol=1e-12)
    np.testing.assert_allclose(tsl.funm(a, tnp.sin, disp=False)[1],
                               sl.funm(a, np.sin, disp=False)[1], rtol=1e-6)
    for mode, c in (("left", _RNG.normal(size=(5, 3))), ("right", _RNG.normal(size=(3, 5))),
                    ("right", _V)):
        for got, want in zip(tsl.qr_multiply(a, c, mode, conjugate=True),
                             sl.qr_multiply(a, c, mode, conjugate=True)):
            np.testing.assert_allclose(got, want, atol=1e-14)
    w, v = tsl.eigh_tridiagonal(_V, _W, select="i", select_range=(1, 3))
    want_w, want_v = sl.eigh_tridiagonal(_V, _W, select="i", select_range=(1, 3))
    np.testing.assert_allclose(w, want_w, rtol=1e-14)
    np.testing.assert_allclose(np.abs(v), np.abs(want_v), atol=1e-14)   # up to signs


def test_decompositions_differentiate_and_compile():
    a = _RNG.normal(size=(4, 4))
    tf.test_util.check_grads(lambda m: tsl.hessenberg(m, calc_q=True), (a,), order=1)
    tf.test_util.check_grads(lambda m: tnp.real(tsl.funm(m, tnp.exp)), (a,), order=1)
    tf.test_util.check_grads(lambda d: tsl.eigh_tridiagonal(d, _W, eigvals_only=True),
                             (_V,), order=1)
    np.testing.assert_allclose(tf.jit(lambda m: tsl.funm(m, tnp.exp))(a),
                               sl.expm(a), rtol=1e-12)
    np.testing.assert_allclose(tf.jit(tsl.hessenberg)(a), sl.hessenberg(a),
                               atol=1e-13)


def test_new_linalg_names_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.scipy.linalg as jsl
    a = _RNG.normal(size=(5, 5))
    for name, args in [("circulant", (_V,)), ("hankel", (_V, _W)), ("companion", (_V,)),
                       ("fiedler_companion", (_V,)), ("leslie", (_V, _W)),
                       ("convolution_matrix", (_V, 3, "same")), ("hessenberg", (a,)),
                       ("helmert", (4, True)), ("hilbert", (3,)), ("invpascal", (4,))]:
        np.testing.assert_allclose(getattr(tsl, name)(*args), getattr(jsl, name)(*args),
                                   atol=1e-12, err_msg=name)
    np.testing.assert_allclose(tsl.funm(a, tnp.exp), jsl.funm(a, jax.numpy.exp), rtol=1e-10)
    np.testing.assert_allclose(tsl.eigh_tridiagonal(_V, _W, eigvals_only=True),
                               jsl.eigh_tridiagonal(_V, _W, eigvals_only=True), rtol=1e-12)
