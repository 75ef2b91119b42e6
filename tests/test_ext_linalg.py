"""Linear algebra (family tf_numba.linalg.v1): tnp.linalg and tf_numba.scipy.linalg against
NumPy/SciPy, batched; derivatives against finite differences to second order (real,
complex, batched); degenerate and rank-deficient cases; jit."""
import itertools

import numpy as np
import pytest
import scipy.linalg as sl

import tf_numba as tf
import tf_numba.numpy as tnp
import tf_numba.scipy.linalg as tsl
from tf_numba.errors import TfNumbaError

from ad_checks import check_grads

TL = tnp.linalg


def rnd(*shape, seed=0):
    return np.random.default_rng(seed + 13 * len(shape)).standard_normal(shape)


def crnd(*shape, seed=0):
    return rnd(*shape, seed=seed) + 1j * rnd(*shape, seed=seed + 50)


def well(*shape, seed=0):
    """Well-conditioned square matrices."""
    return rnd(*shape, seed=seed) + 3 * np.eye(shape[-1])


def spd(*shape, seed=0, cplx=False):
    a = crnd(*shape, seed=seed) if cplx else rnd(*shape, seed=seed)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def close(a, b, tol=1e-10):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ---------------------------------------------------------------- values

VALUE_CASES = [
    ("solve", lambda m: (TL.solve(m[0], m[1]), np.linalg.solve(m[0], m[1])),
     lambda: (well(2, 3, 3), rnd(2, 3, 2))),
    ("solve_vector", lambda m: (TL.solve(m[0], m[1]), np.linalg.solve(m[0], m[1])),
     lambda: (well(3, 3), rnd(3))),
    ("solve_broadcast_batch", lambda m: (TL.solve(m[0], m[1]), np.linalg.solve(m[0], m[1])),
     lambda: (well(2, 1, 3, 3), rnd(4, 3, 2))),
    ("inv", lambda m: (TL.inv(m[0]), np.linalg.inv(m[0])), lambda: (well(2, 3, 3),)),
    ("det", lambda m: (TL.det(m[0]), np.linalg.det(m[0])), lambda: (well(2, 3, 3),)),
    ("slogdet", lambda m: (tuple(TL.slogdet(m[0])), tuple(np.linalg.slogdet(m[0]))),
     lambda: (rnd(2, 3, 3),)),
    ("cholesky", lambda m: (TL.cholesky(m[0]), np.linalg.cholesky(m[0])), lambda: (spd(2, 3, 3),)),
    ("cholesky_upper", lambda m: (TL.cholesky(m[0], upper=True),
                                  np.linalg.cholesky(m[0], upper=True)), lambda: (spd(3, 3),)),
    ("qr_tall", lambda m: (tuple(TL.qr(m[0])), tuple(np.linalg.qr(m[0]))), lambda: (rnd(2, 5, 3),)),
    ("qr_wide", lambda m: (tuple(TL.qr(m[0])), tuple(np.linalg.qr(m[0]))), lambda: (rnd(3, 5),)),
    ("qr_complete", lambda m: (tuple(TL.qr(m[0], "complete")),
                               tuple(np.linalg.qr(m[0], "complete"))), lambda: (rnd(5, 3),)),
    ("qr_r", lambda m: (TL.qr(m[0], "r"), np.linalg.qr(m[0], "r")), lambda: (rnd(5, 3),)),
    ("eigh", lambda m: (tuple(TL.eigh(m[0])), tuple(np.linalg.eigh(m[0]))),
     lambda: (rnd(2, 4, 4),)),
    ("eigh_upper", lambda m: (tuple(TL.eigh(m[0], "U")), tuple(np.linalg.eigh(m[0], "U"))),
     lambda: (rnd(4, 4),)),
    ("eigvalsh", lambda m: (TL.eigvalsh(m[0]), np.linalg.eigvalsh(m[0])), lambda: (rnd(2, 4, 4),)),
    ("svd_full", lambda m: (tuple(TL.svd(m[0])), tuple(np.linalg.svd(m[0]))),
     lambda: (rnd(2, 5, 3),)),
    ("svd_reduced", lambda m: (tuple(TL.svd(m[0], full_matrices=False)),
                               tuple(np.linalg.svd(m[0], full_matrices=False))),
     lambda: (rnd(3, 5),)),
    ("svd_values_only", lambda m: (TL.svd(m[0], compute_uv=False),
                                   np.linalg.svd(m[0], compute_uv=False)), lambda: (rnd(2, 4, 3),)),
    ("svdvals", lambda m: (TL.svdvals(m[0]), np.linalg.svdvals(m[0])), lambda: (rnd(4, 3),)),
    ("pinv", lambda m: (TL.pinv(m[0]), np.linalg.pinv(m[0])), lambda: (rnd(2, 5, 3),)),
    ("pinv_rank_deficient", lambda m: (TL.pinv(m[0]), np.linalg.pinv(m[0])),
     lambda: (np.outer(rnd(4), rnd(3, seed=1)),)),
    ("matrix_power", lambda m: (TL.matrix_power(m[0], 5), np.linalg.matrix_power(m[0], 5)),
     lambda: (rnd(2, 3, 3) / 2,)),
    ("matrix_power_negative", lambda m: (TL.matrix_power(m[0], -2),
                                         np.linalg.matrix_power(m[0], -2)), lambda: (well(3, 3),)),
    ("matrix_power_zero", lambda m: (TL.matrix_power(m[0], 0), np.linalg.matrix_power(m[0], 0)),
     lambda: (well(2, 3, 3),)),
    ("complex_solve", lambda m: (TL.solve(m[0], m[1]), np.linalg.solve(m[0], m[1])),
     lambda: (crnd(3, 3) + 3 * np.eye(3), crnd(3, 2))),
    ("complex_eigh", lambda m: (TL.eigvalsh(m[0]), np.linalg.eigvalsh(m[0])),
     lambda: (crnd(4, 4),)),
    ("complex_svd", lambda m: (TL.svd(m[0], compute_uv=False), np.linalg.svdvals(m[0])),
     lambda: (crnd(4, 3),)),
    ("sp_solve_triangular", lambda m: (tsl.solve_triangular(m[0], m[1], lower=True),
                                       sl.solve_triangular(m[0], m[1], lower=True)),
     lambda: (np.tril(well(4, 4)), rnd(4, 2))),
    ("sp_cho_solve", lambda m: (tsl.cho_solve(tsl.cho_factor(m[0]), m[1]),
                                sl.cho_solve(sl.cho_factor(m[0]), m[1])),
     lambda: (spd(4, 4), rnd(4))),
    ("sp_lu_solve", lambda m: (tsl.lu_solve(tsl.lu_factor(m[0]), m[1]),
                               sl.lu_solve(sl.lu_factor(m[0]), m[1])),
     lambda: (well(4, 4), rnd(4, 3))),
    ("sp_expm", lambda m: (tsl.expm(m[0]), sl.expm(m[0])), lambda: (rnd(2, 3, 3) / 2,)),
    ("sp_expm_frechet", lambda m: (tsl.expm_frechet(m[0], m[1]), sl.expm_frechet(m[0], m[1])),
     lambda: (rnd(3, 3) / 2, rnd(3, 3, seed=1))),
    ("sp_cholesky_upper", lambda m: (tsl.cholesky(m[0]), sl.cholesky(m[0])), lambda: (spd(3, 3),)),
    ("sp_qr_economic", lambda m: (tsl.qr(m[0], mode="economic"), sl.qr(m[0], mode="economic")),
     lambda: (rnd(5, 3),)),
    ("sp_svd", lambda m: (tsl.svd(m[0]), sl.svd(m[0])), lambda: (rnd(3, 5),)),
    ("sp_eigh_values",
     lambda m: (tsl.eigh(m[0], eigvals_only=True), sl.eigh(m[0], eigvals_only=True)),
     lambda: (spd(4, 4),)),
]


@pytest.mark.parametrize("name,run,make", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_numpy_and_scipy(name, run, make):
    ours, theirs = run(make())
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, t in zip(ours, theirs):
        assert np.shape(o) == np.shape(t), name
        assert np.asarray(o).dtype == np.asarray(t).dtype, name
        close(o, t, 1e-9)


def test_scipy_triangular_lu_and_cholesky_variants():
    low, b = np.tril(well(4, 4)), rnd(4, 2)
    for trans in (0, 1, 2, "T"):
        for lower in (True, False):
            for unit in (False, True):
                m = low if lower else low.T
                close(tsl.solve_triangular(m, b, trans=trans, lower=lower, unit_diagonal=unit),
                      sl.solve_triangular(m, b, trans=trans, lower=lower, unit_diagonal=unit))
    a = crnd(4, 4) + 3 * np.eye(4)
    lu, piv = tsl.lu_factor(a)
    ref_lu, ref_piv = sl.lu_factor(a)
    close(lu, ref_lu)
    np.testing.assert_array_equal(piv, ref_piv)
    rhs = crnd(4, 2)
    for trans in (0, 1, 2):
        close(tsl.lu_solve((lu, piv), rhs, trans=trans),
              sl.lu_solve((ref_lu, ref_piv), rhs, trans=trans))
    s = spd(4, 4, cplx=True)
    for lower in (True, False):
        close(tsl.cho_solve(tsl.cho_factor(s, lower=lower), b),
              sl.cho_solve(sl.cho_factor(s, lower=lower), b))


def test_np_linalg_routines_give_numpys_bits():
    """The family runs LAPACK where NumPy does (np.linalg, on NumPy's OpenBLAS): the same
    routines on the same library give NumPy's results bit for bit."""
    a, sym = rnd(2, 6, 4), rnd(2, 5, 5)
    sym = sym + np.swapaxes(sym, -1, -2)
    pairs = [(TL.qr(a), np.linalg.qr(a)), (TL.svd(a), np.linalg.svd(a)),
             (TL.eigh(sym), np.linalg.eigh(sym)), (TL.cholesky(spd(2, 4, 4)),
                                                   np.linalg.cholesky(spd(2, 4, 4))),
             (TL.inv(well(2, 4, 4)), np.linalg.inv(well(2, 4, 4))),
             (TL.svdvals(a), np.linalg.svd(a, compute_uv=False))]
    for ours, theirs in pairs:
        for o, t in zip(ours if isinstance(ours, tuple) else [ours],
                        theirs if isinstance(theirs, tuple) else [theirs]):
            np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_triangular_solve_and_lu_on_numpys_lapack_match_scipys(dtype):
    """numpy_lapack (cblas trsm and getrf in NumPy's OpenBLAS) against the SciPy routines
    the family falls back to, for every flag, batched, tall and wide LU, and empty stacks."""
    from tf_numba.ext import linalg, numpy_lapack
    if not numpy_lapack.AVAILABLE:
        pytest.skip("NumPy's BLAS exports no 64-bit trsm/getrf")
    cplx = np.dtype(dtype).kind == "c"
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-12
    make = crnd if cplx else rnd
    a = (make(2, 3, 5, 5) + 4 * np.eye(5)).astype(dtype)
    for left in (True, False):
        b = make(2, 3, *((5, 4) if left else (4, 5)), seed=1).astype(dtype)
        for flags in itertools.product((False, True), repeat=4):
            params = dict(zip(("lower", "transpose_a", "conjugate_a", "unit_diagonal"), flags),
                          left_side=left)
            ours = numpy_lapack.triangular_solve(a, b, **params)
            assert ours.dtype == dtype and ours.shape == b.shape
            close(ours, linalg._triangular_solve_scipy(a, b, **params), tol)
    empty = np.zeros((0, 5, 2), dtype)
    assert numpy_lapack.triangular_solve(a[0, :0], empty, left_side=True, lower=True,
                                         transpose_a=False, conjugate_a=False,
                                         unit_diagonal=False).shape == (0, 5, 2)
    singular = np.tril(a[0, 0])
    singular[2, 2] = 0
    with pytest.raises(np.linalg.LinAlgError, match="diagonal 2"):
        numpy_lapack.triangular_solve(singular, b[0, 0].T, left_side=True, lower=True,
                                      transpose_a=False, conjugate_a=False, unit_diagonal=False)
    for shape in ((2, 3, 5, 5), (3, 7, 4), (4, 6), (0, 3, 3)):
        m = make(*shape, seed=2).astype(dtype)
        lu, piv = numpy_lapack.lu_factor(m)
        ref_lu, ref_piv = linalg._lu_factor_scipy(m)
        assert lu.shape == m.shape and lu.dtype == dtype and piv.dtype == np.int32
        close(lu, ref_lu, tol)
        np.testing.assert_array_equal(piv, ref_piv)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_qr_and_svd_on_numpys_lapack_match_scipys(dtype):
    """numpy_lapack's qr (geqrf, orgqr/ungqr) and svd (gesdd) in NumPy's OpenBLAS: SciPy's
    factors (the same LAPACK calls on the same column-major copy) in the input's dtype,
    NumPy's shapes for tall, wide, batched and empty stacks, both modes of each."""
    from tf_numba.ext import numpy_lapack
    if not numpy_lapack.AVAILABLE:
        pytest.skip("NumPy's BLAS exports no 64-bit LAPACK")
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-12
    make = crnd if np.dtype(dtype).kind == "c" else rnd
    for shape in ((5, 3), (3, 5), (4, 4), (2, 3, 6, 4), (2, 4, 6), (1, 1), (0, 3, 3), (3, 0),
                  (2, 3, 0)):
        a = make(*shape, seed=3).astype(dtype)
        for full in (False, True):
            q, r = numpy_lapack.qr(a, full=full)
            want_q, want_r = np.linalg.qr(a, "complete" if full else "reduced")
            assert (q.shape, r.shape, q.dtype, r.dtype) == (want_q.shape, want_r.shape,
                                                            dtype, dtype)
            close(q, want_q, tol)
            close(r, want_r, tol)
            u, s, vh = numpy_lapack.svd(a, full_matrices=full, compute_uv=True)
            want = np.linalg.svd(a, full_matrices=full)
            assert [x.shape for x in (u, s, vh)] == [x.shape for x in want]
            assert u.dtype == vh.dtype == dtype and s.dtype == np.empty(0, dtype).real.dtype
            close(np.abs(u), np.abs(want[0]), 10 * tol)
            close(s, want[1], tol)
            close(np.abs(vh), np.abs(want[2]), 10 * tol)
            close(numpy_lapack.svd(a, full_matrices=full, compute_uv=False), want[1], tol)
        if a.ndim == 2 and a.size:
            for ours, theirs in ((numpy_lapack.qr(a, full=False), sl.qr(a, mode="economic")),
                                 (numpy_lapack.svd(a, full_matrices=False, compute_uv=True),
                                  sl.svd(a, full_matrices=False))):
                for o, t in zip(ours, theirs):
                    np.testing.assert_array_equal(o, t)
    broken = make(6, 4).astype(dtype)
    broken[0, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        numpy_lapack.svd(broken, full_matrices=False, compute_uv=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_cho_inverse_on_numpys_lapack_inverts_the_factored_matrix(dtype):
    """numpy_lapack.cho_inverse (potri) against np.linalg.inv of L L^H: only the lower
    triangle of L is read; a zero pivot is a LinAlgError."""
    from tf_numba.ext import linalg, numpy_lapack
    cplx = np.dtype(dtype).kind == "c"
    k = spd(2, 5, 5, cplx=cplx)
    low = np.linalg.cholesky(k)
    junk = low + 7 * np.triu(np.ones((5, 5)), 1)
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    want = np.linalg.inv(k)
    impls = [linalg._cho_inverse_fallback] + ([numpy_lapack.cho_inverse]
                                              if numpy_lapack.AVAILABLE else [])
    for impl in impls:
        got = impl(junk.astype(dtype) if impl is not linalg._cho_inverse_fallback
                   else low.astype(dtype))
        assert got.dtype == dtype
        close(got, want, tol)
    close(linalg.cho_inverse(junk.astype(dtype)), want, tol)
    if numpy_lapack.AVAILABLE:
        with pytest.raises(np.linalg.LinAlgError, match="singular"):
            numpy_lapack.cho_inverse(np.tril(np.ones((3, 3)), -1).astype(dtype))


def test_the_scipy_fallback_serves_the_family(monkeypatch):
    """Where NumPy's library lacks trsm/getrf the family's impls are SciPy's, and qr and
    svd are np.linalg's: the same values through the public functions."""
    from tf_numba.ext import linalg
    calls = []

    def spy(fn):
        def wrapped(*args, **kw):
            calls.append(fn.__name__)
            return fn(*args, **kw)
        return wrapped
    monkeypatch.setattr(linalg.triangular_solve_p, "impl",
                        spy(linalg._triangular_solve_scipy))
    monkeypatch.setattr(linalg, "_lu_factor", spy(linalg._lu_factor_scipy))
    low, b = np.tril(well(4, 4)), rnd(4, 2)
    close(tsl.solve_triangular(low, b, lower=True), sl.solve_triangular(low, b, lower=True))
    lu, piv = tsl.lu_factor(well(4, 4))
    close(lu, sl.lu_factor(well(4, 4))[0])
    assert calls == ["_triangular_solve_scipy", "_lu_factor_scipy"]
    monkeypatch.setattr(linalg.numpy_lapack, "AVAILABLE", False)    # qr, svd: np.linalg's
    a = rnd(2, 5, 3)
    for ours, theirs in ((TL.qr(a), np.linalg.qr(a)), (TL.svd(a), np.linalg.svd(a)),
                         ((TL.svdvals(a),), (np.linalg.svd(a, compute_uv=False),))):
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("ord,axis", [(None, None), (2, None), (1, None), (np.inf, None),
                                      (-np.inf, None), (0, None), (3, None), (None, 1),
                                      ("fro", (0, 1)), ("nuc", (0, 1)), (2, (0, 1)),
                                      (-2, (1, 0)), (1, (0, 1)), (-1, (0, 1)),
                                      (np.inf, (0, 1)), (-np.inf, (0, 1))])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_matches_numpy(ord, axis, keepdims):
    x = rnd(3, 4)
    if axis is None and ord is not None:
        x = x[0] if ord in (0, 3) or ord == -np.inf else x
    ours = TL.norm(x, ord, axis, keepdims)
    theirs = np.linalg.norm(x, ord, axis, keepdims)
    assert np.shape(ours) == np.shape(theirs)
    close(ours, theirs)


def test_lstsq_matches_numpy():
    a, b = rnd(6, 3), rnd(6, 2)
    for rhs in (b, b[:, 0]):
        ours, theirs = TL.lstsq(a, rhs), np.linalg.lstsq(a, rhs)
        for o, t in zip(ours, theirs):
            assert np.shape(o) == np.shape(t)
            close(o, t)
    deficient = np.outer(rnd(6), rnd(3, seed=1))
    ours, theirs = TL.lstsq(deficient, b), np.linalg.lstsq(deficient, b)
    assert ours.rank == theirs[2] == 1 and ours.residuals.shape == theirs[1].shape
    close(ours.x, theirs[0])


def test_float32_stays_float32_and_ints_become_float64():
    a = well(3, 3).astype(np.float32)
    for out in (TL.inv(a), TL.svd(a)[1], TL.eigh(a)[0], TL.det(a), tsl.expm(a)):
        assert np.asarray(out).dtype == np.float32
    assert TL.inv(np.array([[2, 0], [0, 4]])).dtype == np.float64


def test_eigh_of_empty_stacks_and_matrices_has_numpys_shapes():
    for shape in ((0, 3, 3), (2, 0, 0), (0, 0)):
        a = np.zeros(shape)
        for ours, theirs in zip(TL.eigh(a), np.linalg.eigh(a)):
            assert ours.shape == theirs.shape
        assert TL.eigvalsh(a).shape == np.linalg.eigvalsh(a).shape


def test_non_square_input_is_a_linalg_error():
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        TL.inv(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="two-dimensional"):
        TL.det(np.ones(3))


@pytest.mark.parametrize("call", [lambda: TL.inv(np.ones((2, 3))), lambda: TL.det(np.ones(3)),
                                  lambda: TL.lstsq(np.ones((2, 3)), np.ones(3)),
                                  lambda: TL.tensorinv(np.ones((2, 3)), 1),
                                  lambda: TL.norm(np.ones((2, 2)), ord="sideways"),
                                  lambda: TL.eigh(np.eye(2), UPLO="X")])
def test_shape_and_argument_errors_are_tf_numba_errors(call):
    # found by the fuzzer: det of a non-square matrix raised NumPy's LinAlgError alone
    with pytest.raises(TfNumbaError):
        call()


# ---------------------------------------------------------------- derivatives

def _cho_inverse(low):
    from tf_numba.ext import linalg
    return linalg.cho_inverse(low)


GRAD_CASES = [
    ("solve", lambda a, b: TL.solve(a, b), lambda: (well(2, 3, 3), rnd(2, 3, 2))),
    ("solve_vector", lambda a, b: TL.solve(a, b), lambda: (well(3, 3), rnd(3))),
    ("inv", TL.inv, lambda: (well(2, 3, 3),)),
    ("det", TL.det, lambda: (well(2, 3, 3),)),
    ("slogdet", lambda a: TL.slogdet(a).logabsdet, lambda: (rnd(2, 3, 3),)),
    ("cholesky", TL.cholesky, lambda: (spd(2, 3, 3),)),
    ("qr_tall", lambda a: tuple(TL.qr(a)), lambda: (rnd(2, 4, 3),)),
    ("qr_square", lambda a: tuple(TL.qr(a)), lambda: (rnd(3, 3),)),
    ("qr_wide", lambda a: tuple(TL.qr(a)), lambda: (rnd(3, 5),)),
    ("qr_complete", lambda a: (lambda q, r: (q[:, 3:] @ q[:, 3:].T, q[:, :3], r))(
        *TL.qr(a, "complete")), lambda: (rnd(5, 3),)),
    ("eigh", lambda a: tuple(TL.eigh(a)), lambda: (rnd(2, 3, 3),)),
    ("eigvalsh", TL.eigvalsh, lambda: (rnd(2, 4, 4),)),
    ("svd_tall", lambda a: tuple(TL.svd(a, full_matrices=False)), lambda: (rnd(2, 4, 3),)),
    ("svd_wide", lambda a: tuple(TL.svd(a, full_matrices=False)), lambda: (rnd(3, 5),)),
    ("svd_full_tall", lambda a: (lambda u, s, vh: (u[:, 3:] @ u[:, 3:].T, s, (u[:, :3] * s) @ vh))(
        *TL.svd(a)), lambda: (rnd(5, 3),)),
    ("svd_full_wide", lambda a: (lambda u, s, vh: (vh[3:].T @ vh[3:], u, s, vh[:3]))(
        *TL.svd(a)), lambda: (rnd(3, 5),)),
    ("svdvals", TL.svdvals, lambda: (rnd(2, 4, 3),)),
    ("svd_no_uv", lambda a: TL.svd(a, compute_uv=False), lambda: (rnd(3, 4),)),
    ("pinv", TL.pinv, lambda: (rnd(2, 4, 3),)),
    ("pinv_wide", TL.pinv, lambda: (rnd(3, 4),)),
    ("lstsq", lambda a, b: TL.lstsq(a, b)[0], lambda: (rnd(5, 3), rnd(5, 2))),
    ("norm_fro", TL.norm, lambda: (rnd(3, 4),)),
    ("norm_nuc", lambda x: TL.norm(x, "nuc"), lambda: (rnd(3, 4),)),
    ("norm_2", lambda x: TL.norm(x, 2, axis=(1, 2)), lambda: (rnd(2, 3, 4),)),
    ("norm_inf", lambda x: TL.norm(x, np.inf), lambda: (rnd(3, 4),)),
    ("norm_p", lambda x: TL.norm(x, 3, axis=0), lambda: (rnd(3, 4) + 5,)),
    ("matrix_power", lambda a: TL.matrix_power(a, 3), lambda: (rnd(2, 3, 3),)),
    ("matrix_power_negative", lambda a: TL.matrix_power(a, -2), lambda: (well(3, 3),)),
    ("solve_triangular", lambda a, b: tsl.solve_triangular(a, b, lower=True),
     lambda: (np.tril(well(2, 3, 3)), rnd(2, 3, 2))),
    ("solve_triangular_trans_unit", lambda a, b: tsl.solve_triangular(
        a, b, trans=1, lower=False, unit_diagonal=True), lambda: (np.triu(well(3, 3)), rnd(3))),
    ("cho_solve", lambda a, b: tsl.cho_solve(tsl.cho_factor(a, lower=True), b),
     lambda: (spd(3, 3), rnd(3, 2))),
    ("cho_solve_upper", lambda a, b: tsl.cho_solve(tsl.cho_factor(a), b),
     lambda: (spd(2, 3, 3), rnd(2, 3, 2))),
    ("lu_factor", lambda a: tsl.lu_factor(a)[0], lambda: (well(2, 3, 3),)),
    ("lu_solve", lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b), lambda: (well(3, 3), rnd(3, 2))),
    ("lu_solve_trans", lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b, trans=1),
     lambda: (well(3, 3), rnd(3))),
    ("expm", tsl.expm, lambda: (rnd(2, 3, 3) / 2,)),
    ("cho_inverse", lambda a: _cho_inverse(TL.cholesky(a)), lambda: (spd(2, 3, 3),)),
    ("cho_inverse_factor", lambda low: _cho_inverse(low), lambda: (well(3, 3),)),
    ("expm_frechet", lambda a, e: tsl.expm_frechet(a, e, compute_expm=False),
     lambda: (rnd(3, 3) / 2, rnd(3, 3, seed=1))),
]


@pytest.mark.parametrize("name,fn,make", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_derivatives_to_second_order(name, fn, make):
    check_grads(fn, make(), order=2)


def _svd_invariants(a):
    """Gauge-invariant functions of a complex SVD: |U|, s, |Vh| and the reconstruction."""
    u, s, vh = TL.svd(a, full_matrices=False)
    return tnp.abs(u), s, tnp.abs(vh), (u * s[..., None, :]) @ vh


def _eigh_invariants(a):
    w, v = TL.eigh(a)
    return w, (v * w[..., None, :]) @ tnp.conj(tnp.swapaxes(v, -1, -2)), tnp.abs(v)


COMPLEX_CASES = [
    ("solve", lambda a, b: TL.solve(a, b), lambda: (crnd(2, 3, 3) + 3 * np.eye(3), crnd(2, 3, 2))),
    ("inv", TL.inv, lambda: (crnd(3, 3) + 3 * np.eye(3),)),
    ("det", TL.det, lambda: (crnd(3, 3) + 3 * np.eye(3),)),
    ("slogdet", lambda a: tuple(TL.slogdet(a)), lambda: (crnd(3, 3),)),
    ("cholesky", TL.cholesky, lambda: (spd(3, 3, cplx=True),)),
    ("qr", lambda a: tuple(TL.qr(a)), lambda: (crnd(4, 3),)),
    ("qr_wide", lambda a: tuple(TL.qr(a)), lambda: (crnd(3, 4),)),
    ("eigh", _eigh_invariants, lambda: (crnd(2, 3, 3),)),
    ("svd", _svd_invariants, lambda: (crnd(4, 3),)),
    ("svd_wide", _svd_invariants, lambda: (crnd(2, 3, 4),)),
    ("pinv", TL.pinv, lambda: (crnd(4, 3),)),
    ("expm", tsl.expm, lambda: (crnd(3, 3) / 2,)),
    ("lu_solve_conj", lambda a, b: tsl.lu_solve(tsl.lu_factor(a), b, trans=2),
     lambda: (crnd(3, 3) + 3 * np.eye(3), crnd(3, 2))),
    ("solve_triangular_conj", lambda a, b: tsl.solve_triangular(a, b, trans=2, lower=True),
     lambda: (np.tril(crnd(3, 3)) + 3 * np.eye(3), crnd(3, 2))),
    ("cho_solve", lambda a, b: tsl.cho_solve(tsl.cho_factor(a), b),
     lambda: (spd(3, 3, cplx=True), crnd(3, 2))),
    ("cho_inverse", lambda a: _cho_inverse(TL.cholesky(a)), lambda: (spd(3, 3, cplx=True),)),
]


@pytest.mark.parametrize("name,fn,make", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_derivatives_to_second_order(name, fn, make):
    check_grads(fn, make(), order=2)


def test_tenferro_regression_svd_gradient_finite_for_nonsquare_with_zero_singular_value():
    # tenferro 0.8 (and JAX) return NaN here: the 1/s_i term of a tall or wide SVD divides
    # by s_i = 0 even when the loss does not use that singular vector, and 0 * inf = NaN.
    a = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert np.linalg.svd(a, compute_uv=False)[-1] == 0.0

    def make_loss(weights):
        def loss(x):
            u, s, vh = TL.svd(x, full_matrices=False)
            # the rank-2 truncation and |A|_F^2 are smooth at A: their gradients exist
            top = (u[:, :2] * s[:2]) @ vh[:2]
            return tnp.sum(weights * top) + tnp.sum(s ** 2) + tnp.sum(u[:, :2] ** 3)
        return loss

    for x in (a, a.T):
        loss = make_loss(rnd(*x.shape))
        g = tf.grad(loss)(x)
        assert np.all(np.isfinite(g)), g
        assert np.all(np.isfinite(tf.hessian(loss)(x)))
        # first order only: at s_i = 0, u_i is not differentiable, and second derivatives
        # through it are not either (see ext/linalg.py)
        check_grads(loss, (x,), order=1)
    s_grad = tf.grad(lambda x: tnp.sum(TL.svdvals(x)[:2]))(a)
    close(s_grad, np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 0], [0, 0, 0]]))


def test_degenerate_eigenvalues_give_finite_correct_gradients():
    q, _ = np.linalg.qr(rnd(4, 4))
    a = q @ np.diag([1.0, 2.0, 2.0, 3.0]) @ q.T           # a repeated eigenvalue
    w = rnd(4, 4)

    def loss(a):
        vals, vecs = TL.eigh(a)
        pair = vecs[:, 1:3]          # only the projector onto the degenerate eigenspace
        return tnp.sum(w * (pair @ pair.T)) + tnp.sum(vals ** 3)

    g = tf.grad(loss)(a)
    assert np.all(np.isfinite(g))
    check_grads(loss, (a,), order=1)
    g_vals = tf.grad(lambda a: tnp.sum(TL.eigvalsh(a) ** 3))(a)
    sym = q @ np.diag(3 * np.array([1.0, 2.0, 2.0, 3.0]) ** 2) @ q.T
    close(g_vals, np.tril(2 * sym) - np.diag(np.diag(sym)), 1e-8)    # eigh reads the lower half


def test_degenerate_singular_values_give_finite_gradients():
    a = np.diag([2.0, 2.0, 1.0])
    a = np.vstack([a, np.zeros((1, 3))])
    g = tf.grad(lambda a: tnp.sum(tnp.abs((lambda u, s, vh: u @ vh)(*TL.svd(a, False)))))(a)
    assert np.all(np.isfinite(g))


def test_linalg_jit_matches_eager():
    def f(a, b, c):
        x = TL.solve(a, b)
        u, s, vh = TL.svd(c, full_matrices=False)
        q, r = TL.qr(c)
        w, v = TL.eigh(a + tnp.swapaxes(a, -1, -2))
        chol = TL.cholesky(a @ tnp.swapaxes(a, -1, -2) + 3 * np.eye(3))
        return (tnp.sum(x ** 2) + tnp.sum(s) + tnp.sum(r ** 2) + tnp.sum(w * w)
                + TL.det(a) + tnp.sum(chol) + tnp.sum(tsl.expm(a / 4)))

    args = (well(3, 3), rnd(3, 2, seed=1), rnd(4, 3, seed=2))
    close(tf.jit(f, tiered=False)(*args), f(*args), 1e-12)
