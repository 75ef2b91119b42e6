"""``tf.lax.linalg`` against ``jax.lax.linalg`` (x64): values (or the defining identities
where a factorization's signs are free), JAX's output conventions, and gradients against
JAX's and finite differences."""
import numpy as np
import pytest

import tf_numba as tf
import tf_numba.numpy as tnp
from tf_numba import lax
from tf_numba.errors import UnsupportedError
from ad_checks import check_grads

jax = pytest.importorskip("jax")
jnp = jax.numpy
L, JL = lax.linalg, jax.lax.linalg

RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def _jax_x64():
    jax.config.update("jax_enable_x64", True)


def spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def close(got, want, rtol=1e-10, atol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape,
                                                                 got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def test_cholesky_eigh_svd_and_triangular_solve_match_jax():
    a = spd(4, (2,))
    close(L.cholesky(a), JL.cholesky(a))
    v, w = L.eigh(a)
    jv, jw = JL.eigh(a)
    close(w, jw)
    close(np.abs(v), np.abs(jv))
    v, w = L.eigh(a, subset_by_index=(1, 3))      # JAX's CPU eigh has no subsets
    close(w, np.asarray(jw)[:, 1:3])
    close(np.abs(v), np.abs(jv)[..., 1:3])
    x = RNG.standard_normal((2, 5, 3))
    u, s, vh = L.svd(x)
    ju, js, jvh = JL.svd(x)
    close(s, js)
    assert u.shape == ju.shape and vh.shape == jvh.shape           # complete by default
    close(L.svd(x, compute_uv=False), JL.svd(x, compute_uv=False))
    low = np.tril(spd(3)) + np.eye(3)
    b = RNG.standard_normal((4, 3))
    close(L.triangular_solve(low, b, lower=True), JL.triangular_solve(low, b, lower=True))
    close(L.triangular_solve(low, b.T, left_side=True, lower=True, transpose_a=True),
          JL.triangular_solve(low, b.T, left_side=True, lower=True, transpose_a=True))
    g = tf.grad(lambda m: tnp.sum(L.cholesky(m) ** 2))(a[0])
    close(g, jax.grad(lambda m: jnp.sum(JL.cholesky(m) ** 2))(a[0]), rtol=1e-9)
    g = tf.grad(lambda m: tnp.sum(L.eigh(m)[1] ** 3))(a[0])
    close(g, jax.grad(lambda m: jnp.sum(JL.eigh(m)[1] ** 3))(a[0]), rtol=1e-9)


def test_lu_qr_and_pivoted_qr_match_jax():
    x = RNG.standard_normal((4, 4))
    for got, want in zip(L.lu(x), JL.lu(x)):
        close(got, want)
    close(L.lu_pivots_to_permutation(np.array([2, 2, 3, 3], np.int32), 5),
          JL.lu_pivots_to_permutation(np.array([2, 2, 3, 3], np.int32), 5))
    tall = RNG.standard_normal((5, 3))
    for full in (True, False):
        q, r = L.qr(tall, full_matrices=full)
        jq, jr = JL.qr(tall, full_matrices=full)
        close(np.abs(q), np.abs(jq))
        close(np.abs(r), np.abs(jr))
    q, r, p = L.qr(tall, pivoting=True, full_matrices=False)
    jq, jr, jp = JL.qr(tall, pivoting=True, full_matrices=False)
    close(p, jp)
    close(np.abs(r), np.abs(jr))
    np.testing.assert_allclose(q @ r, tall[:, p], atol=1e-12)
    check_grads(lambda m: L.qr(m, pivoting=True, full_matrices=False)[1], (tall,), order=1)


def test_householder_forms_and_ormqr_match_jax():
    a = RNG.standard_normal((2, 4, 4))
    for got, want in zip(L.hessenberg(a), JL.hessenberg(a)):
        close(got, want)
    sym = a + np.swapaxes(a, 1, 2)
    for got, want in zip(L.tridiagonal(sym), JL.tridiagonal(sym)):
        close(got, want)
    h, taus = JL.hessenberg(a[0])
    h, taus = np.asarray(h), np.asarray(taus)
    close(L.householder_product(h[:, :3], taus), JL.householder_product(h[:, :3], taus))
    c = RNG.standard_normal((4, 2))
    for left, transpose in ((True, False), (True, True)):
        close(L.ormqr(h[:, :3], taus, c, left=left, transpose=transpose),
              JL.ormqr(h[:, :3], taus, c, left=left, transpose=transpose))
    close(L.ormqr(h[:, :3], taus, c.T, left=False), JL.ormqr(h[:, :3], taus, c.T, left=False))


def test_eig_returns_what_was_asked_with_unit_norm_vectors():
    x = RNG.standard_normal((2, 4, 4))
    w, vl, vr = L.eig(x)
    jw, jvl, jvr = JL.eig(x)
    assert w.dtype == jw.dtype == np.complex128
    order = np.argsort(np.round(w, 8), axis=-1)
    jorder = np.argsort(np.round(jw, 8), axis=-1)
    close(np.take_along_axis(w, order, -1), np.take_along_axis(np.asarray(jw), jorder, -1))
    # the defining identities: x vr = vr w, vl^H x = w vl^H, unit columns, largest real
    np.testing.assert_allclose(x @ vr, vr * w[:, None, :], atol=1e-10)
    vlh = np.conj(np.swapaxes(vl, -1, -2))
    np.testing.assert_allclose(vlh @ x, w[:, :, None] * vlh, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(vl, axis=-2), 1.0)
    assert len(L.eig(x, compute_left_eigenvectors=False)) == 2
    assert len(L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)) == 1


def test_schur_qdwh_and_products_match_jax():
    x = RNG.standard_normal((4, 4))
    t, vs = L.schur(x)
    np.testing.assert_allclose(vs @ t @ vs.T, x, atol=1e-12)
    assert np.allclose(np.tril(t, -2), 0)
    assert len(L.schur(x, compute_schur_vectors=False)) == 1
    with pytest.raises(UnsupportedError, match="sorted"):
        L.schur(x, sort_eig_vals=True)
    u, h, _, converged = L.qdwh(x)
    ju, jh, _, _ = JL.qdwh(x)
    close(u, ju, rtol=1e-8, atol=1e-8)
    close(h, jh, rtol=1e-8, atol=1e-8)
    assert converged
    a, c = RNG.standard_normal((3, 5)), spd(3)
    for sym in (False, True):
        close(L.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=sym),
              JL.symmetric_product(a, c, alpha=2.0, beta=0.5, symmetrize_output=sym))
    r = np.linalg.cholesky(spd(3)).T
    w = RNG.standard_normal(3)
    close(L.cholesky_update(r, w), JL.cholesky_update(r, w))


def test_tridiagonal_solve_matches_jax_and_differentiates():
    m = 6
    dl, du = RNG.standard_normal((2, m)), RNG.standard_normal((2, m))
    dl[:, 0] = du[:, -1] = 0.0
    d = 4.0 + RNG.random((2, m))
    b = RNG.standard_normal((2, m, 3))
    close(L.tridiagonal_solve(dl, d, du, b), JL.tridiagonal_solve(dl, d, du, b))
    args = (dl[0], d[0], du[0], b[0])
    got = tf.grad(lambda *v: tnp.sum(L.tridiagonal_solve(*v) ** 2), (0, 1, 2, 3))(*args)
    want = jax.grad(lambda *v: jnp.sum(JL.tridiagonal_solve(*v) ** 2), (0, 1, 2, 3))(*args)
    for g, j in zip(got[1:], want[1:]):       # JAX's dl[0] gradient is of an unused entry
        close(g, j, rtol=1e-9)
    close(got[0][1:], want[0][1:], rtol=1e-9)
