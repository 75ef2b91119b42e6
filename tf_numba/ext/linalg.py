"""Linear algebra ops (family ``tf_numba.linalg.v1``): LAPACK through NumPy/SciPy, with AD.

Every op works on stacks of matrices (leading batch dims) and runs on the host under
``jit``, between compiled kernels. LAPACK runs in NumPy's OpenBLAS, whose pool the plan's
products share (a plan whose LAPACK ran on SciPy's OpenBLAS lost 10% of a 128x128 eigh to
NumPy's idle pool holding the second core): through ``np.linalg`` (cholesky, solve, inv,
det, slogdet, eigh, pinv: NumPy's bits, float32 and complex64 computed in double as NumPy
does), or called directly where ``np.linalg`` adds copies or lacks the routine
(``numpy_lapack``: qr, svd, triangular solve, LU, the inverse from a Cholesky factor, in
the input's precision). SciPy's are
expm's Pade approximants, and schur, sqrtm, solve_sylvester, polar and solve_banded
(``scipy.linalg``, one matrix at a time). Each op has a JVP built from ops that have rules of their
own, so derivatives of derivatives work. Reverse mode transposes the linear parts: ``solve``
and ``triangular_solve`` are linear in their right-hand side, ``expm_frechet`` in its
direction.

Conventions of the derivative rules (each follows the impl, so finite differences agree):

- ``cholesky`` and ``eigh`` read one triangle (LAPACK ``uplo``; the lower one by default, as
  NumPy): their tangents are the Hermitian matrices built from that triangle of the
  perturbation.
- Degenerate eigenvalues / singular values: the eigenvector (singular vector) derivative
  couples pairs ``i, j`` through ``1 / (w_j - w_i)`` (``1 / (s_j^2 - s_i^2)``). Pairs closer
  than ``DEGENERACY_RTOL * n * max|w|`` (``... * max(s)^2``) span a subspace in which the
  vectors are not unique; their coupling is set to 0 instead of +-inf, so gradients are
  always finite. They are exact for symmetric functions of each group of equal values
  (``sum(f(w))``, ``slogdet``, norms) and for functions of the vectors through the
  projector onto each whole degenerate subspace; inside such a subspace only the diagonal
  of ``V^H dA V`` in the returned basis is seen, which no rule on eigh's outputs can avoid.
- Zero singular values of a non-square matrix: the terms ``1 / s_i`` are taken as 0 for
  ``s_i == 0``. ``u_i`` (tall) or ``v_i`` (wide) is not differentiable there, but a loss
  that does not use it now gets a finite, correct gradient (JAX and tenferro 0.8 give NaN:
  the zero cotangent meets ``1 / 0``). Losses through that vector (even times ``s_i``) and
  second derivatives across it are not differentiable at that point.
- Complete QR / full SVD of a non-square matrix: the extra columns of Q / U / V are an
  arbitrary orthonormal completion; their derivative is the one that keeps them orthogonal
  to the rest without rotating among themselves.
- ``eig`` (general matrices): eigenvalues and vectors are complex; the eigenvector
  derivative couples pairs through ``1 / (w_j - w_i)`` with the same degeneracy rule, and
  keeps each column at unit norm; its phase is LAPACK's, so only losses that do not depend
  on it are differentiable (as JAX's ``enable_eigvec_derivs``).
- ``sqrtm`` and ``polar`` differentiate their defining equations ``X X = A`` and
  ``P P = A^H A`` (``A A^H``) by a Sylvester solve: no gaps between eigen or singular
  values appear, only sums, so repeated values are fine; ``P`` must be nonsingular.
- ``lu`` is differentiated for the pivot order of the point (square and rectangular).
  ``schur`` (real form) is differentiated for distinct eigenvalues, keeping its shape:
  ``T`` zero below the diagonal but for its 2 x 2 blocks, whose diagonals stay equal
  (LAPACK's standard form); the complex form's vectors have free phases: no rule.
- Complex values follow JAX: transposes, not Hermitian adjoints (``core/linear.py``).

References: Giles, "An extended collection of matrix derivative results" (2008) for
inv/det/solve; Murray, "Differentiation of the Cholesky decomposition" (2016); Townsend,
"Differentiating the singular value decomposition" (2016) and JAX's ``svd_jvp_rule``;
Walter & Lehmann (2018) for QR; Al-Mohy & Higham (2009) for the Frechet derivative of expm;
Magnus, "On differentiating eigenvalues and eigenvectors" (1985) for eig; De Hoog,
Anderssen & Lukas (2011) for LU.
"""
import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import Zero, aval_of, defzero, is_undefined, is_zero, instantiate
from ..core.primitive import register
from ..core.trace import Tracer
from ..errors import DTypeError, MissingRuleError, ShapeError, UnsupportedError
from . import NUMPY_BLAS, SCIPY_BLAS, Family, batch_leading, numpy_lapack

FAMILY = Family("tf_numba.linalg.v1", module=__name__,
                doc="LAPACK-backed factorizations, solves and matrix functions")

DEGENERACY_RTOL = float(np.finfo(np.float64).eps) * 10


def _tnp():
    """``tf_numba.numpy``, which the derivative rules below are written in. It sits above
    this family (its ``linalg`` is built on it), so it is not imported here: it installs
    itself on ``Tracer`` when it loads, as it installs the tracer's operators."""
    return Tracer._tnp


# ---------------------------------------------------------------- abstract evaluation

def _check_matrix(name, a, square=False):
    if a.ndim < 2:
        raise ShapeError(f"needs an array of at least 2 dims (a stack of matrices), got "
                         f"shape {a.shape}", op=name)
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"needs square matrices, got shape {a.shape} (last two dims "
                         f"{a.shape[-2]} x {a.shape[-1]})", op=name)
    if not dtypes.is_inexact(a.dtype):
        raise DTypeError(f"needs a float or complex dtype, got {a.dtype.name}", op=name)
    if a.dtype == dtypes.float16:       # (NumPy's and JAX's linalg refuse it as well)
        raise DTypeError("LAPACK has no float16: cast the matrix to float32 first "
                         "(.astype(np.float32))", op=name)


def _same(name, a):
    _check_matrix(name, a, square=True)
    return a


def _solve_eval(name):
    def abstract_eval(a, b, **params):
        _check_matrix(name, a, square=True)
        _check_matrix(name, b)
        if a.dtype != b.dtype:
            raise DTypeError(f"operands need one dtype, got {a.dtype.name} and "
                             f"{b.dtype.name}", op=name)
        if a.shape[:-2] != b.shape[:-2]:
            raise ShapeError(f"batch dims differ: {a.shape} and {b.shape}", op=name)
        n = a.shape[-1]
        side = b.shape[-2] if params.get("left_side", True) else b.shape[-1]
        if side != n:
            raise ShapeError(f"matrix of shape {a.shape[-2:]} does not fit right-hand side "
                             f"of shape {b.shape[-2:]}", op=name)
        return b
    return abstract_eval


# ---------------------------------------------------------------- NumPy/SciPy impls

def _triangular_solve_scipy(a, b, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
    import scipy.linalg
    a, b = np.asarray(a), np.asarray(b)
    trans = int(transpose_a) if left_side else 1 - int(transpose_a)
    if conjugate_a:     # op(A) = conj(A)^T is LAPACK's trans='C'
        a, trans = (a, 2) if trans else (np.conj(a), 0)
    if not left_side:   # X op(A) = B  <=>  op(A)^T X^T = B^T
        b = np.swapaxes(b, -1, -2)
    x = scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower,
                                      unit_diagonal=unit_diagonal, check_finite=False)
    return x if left_side else np.swapaxes(x, -1, -2)


def _per_matrix(fn, *arrays):
    """Apply a 2-D-only SciPy routine to each matrix of equally batched stacks."""
    batch = arrays[0].shape[:-2]
    flat = [a.reshape((-1,) + a.shape[-2:]) for a in arrays]
    outs = [fn(*mats) for mats in zip(*flat)]
    if not outs:
        return np.zeros(batch + arrays[-1].shape[-2:], arrays[-1].dtype)
    return np.stack(outs).reshape(batch + outs[0].shape)


def _expm_impl(a):
    import scipy.linalg
    return np.asarray(scipy.linalg.expm(a), a.dtype)


def _expm_frechet_impl(a, e):
    import scipy.linalg
    out = _per_matrix(lambda x, y: scipy.linalg.expm_frechet(x, y, compute_expm=False,
                                                            check_finite=False), a, e)
    return out.astype(a.dtype)


def _lu_factor_scipy(a):
    import scipy.linalg
    m, n = a.shape[-2:]
    flat = a.reshape((-1, m, n))
    lus = np.empty_like(flat)
    pivs = np.empty((flat.shape[0], min(m, n)), np.int32)
    for i, mat in enumerate(flat):
        lus[i], pivs[i] = scipy.linalg.lu_factor(mat, check_finite=False)
    return lus.reshape(a.shape), pivs.reshape(a.shape[:-2] + (min(m, n),))


# NumPy's library has no public triangular solve or LU: called in it (numpy_lapack)
# where it exports them, else SciPy's
if numpy_lapack.AVAILABLE:
    _triangular_solve_impl, _lu_factor, _TRSM_GETRF_BLAS = (
        numpy_lapack.triangular_solve, numpy_lapack.lu_factor, NUMPY_BLAS)
else:
    _triangular_solve_impl, _lu_factor, _TRSM_GETRF_BLAS = (
        _triangular_solve_scipy, _lu_factor_scipy, SCIPY_BLAS)


def _cho_inverse_fallback(low):
    """``L^-H L^-1`` by a triangular solve against the identity (SciPy's library)."""
    n = low.shape[-1]
    eye = np.broadcast_to(np.eye(n, dtype=low.dtype), low.shape)
    inv_low = _triangular_solve_impl(low, eye, left_side=True, lower=True, transpose_a=False,
                                     conjugate_a=False, unit_diagonal=False)
    return np.conj(np.swapaxes(inv_low, -1, -2)) @ inv_low


_cho_inverse_impl = (numpy_lapack.cho_inverse if numpy_lapack.AVAILABLE
                     else _cho_inverse_fallback)


def _lu_impl(a):
    lu, piv = _lu_factor(np.asarray(a))
    return [lu, piv, _pivots_to_permutation_impl(piv, m=a.shape[-2])]


def _pivots_to_permutation_impl(piv, *, m):
    piv = np.asarray(piv)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), piv.shape[:-1] + (m,)).copy()
    rows = perm.reshape(-1, m)
    for r, p in zip(rows, piv.reshape(-1, piv.shape[-1])):
        for i, j in enumerate(p):
            r[i], r[j] = r[j], r[i]
    return perm


def _qr_impl(a, *, full):
    if numpy_lapack.AVAILABLE:
        return list(numpy_lapack.qr(a, full=full))
    return list(np.linalg.qr(a, mode="complete" if full else "reduced"))


def _svd_impl(a, *, full_matrices):
    if numpy_lapack.AVAILABLE:
        return list(numpy_lapack.svd(a, full_matrices=full_matrices, compute_uv=True))
    numpy_lapack.refuse_infinities(a)
    return list(np.linalg.svd(a, full_matrices=full_matrices))


def _pinv_impl(a, *, rcond):
    numpy_lapack.refuse_infinities(a)
    return np.linalg.pinv(a, rcond=rcond)


def _svdvals_impl(a):
    if numpy_lapack.AVAILABLE:
        return numpy_lapack.svd(a, full_matrices=False, compute_uv=False)
    return np.linalg.svd(a, compute_uv=False)


def _eigh_impl(a, *, lower):
    return list(np.linalg.eigh(a, UPLO="L" if lower else "U"))


def _eigvalsh_impl(a, *, lower):
    return np.linalg.eigvalsh(a, UPLO="L" if lower else "U")


def _eig_impl(a):
    w, v = np.linalg.eig(a)
    out = dtypes.complex_of(a.dtype)    # complex even where every eigenvalue is real (JAX)
    return [w.astype(out, copy=False), v.astype(out, copy=False)]


def _eigvals_impl(a):
    return np.linalg.eigvals(a).astype(dtypes.complex_of(a.dtype), copy=False)


def _schur_impl(a, *, output):
    import scipy.linalg
    outs = [_per_matrix(lambda x, k=k: scipy.linalg.schur(x, output=output,
                                                          check_finite=False)[k], a)
            for k in (0, 1)]
    dt = a.dtype if output == "real" else dtypes.complex_of(a.dtype)
    return [o.astype(dt, copy=False) for o in outs]


def _sqrtm_impl(a):
    import scipy.linalg
    out = _per_matrix(lambda x: scipy.linalg.sqrtm(x), a)
    if not dtypes.is_complex(a.dtype) and np.iscomplexobj(out):
        # SciPy returns complex for a real matrix with negative eigenvalues: NaN here, as
        # the real result this op promises does not exist
        bad = np.any(out.imag != 0, axis=(-2, -1), keepdims=True)
        out = np.where(bad, np.nan, out.real)
    return out.astype(a.dtype, copy=False)


def _sylvester_impl(a, b, c):
    import scipy.linalg
    return _per_matrix(scipy.linalg.solve_sylvester, a, b, c).astype(c.dtype, copy=False)


def _polar_impl(a, *, side):
    import scipy.linalg
    outs = [_per_matrix(lambda x, k=k: scipy.linalg.polar(x, side=side)[k], a)
            for k in (0, 1)]
    return [o.astype(a.dtype, copy=False) for o in outs]


def _banded_impl(ab, b, *, lower, upper):
    import scipy.linalg
    return _per_matrix(lambda m, r: scipy.linalg.solve_banded((lower, upper), m, r,
                                                              check_finite=False),
                       ab, b).astype(b.dtype, copy=False)


def _lapack(name, a):
    import scipy.linalg
    return scipy.linalg.get_lapack_funcs((name,), (a,))[0]


def _per_matrix_outputs(fn, a, *others):
    """``fn`` (a 2-D routine returning a list of arrays) on each matrix of a stack."""
    batch = a.shape[:-2]
    flat = [x.reshape((-1,) + x.shape[len(batch):]) for x in (a,) + others]
    outs = [fn(*xs) for xs in zip(*flat)]
    return [np.stack(parts).reshape(batch + parts[0].shape) for parts in zip(*outs)]


def _hessenberg_one(a):
    h, tau, _ = _lapack("gehrd", a)(a)
    return [h, tau[:max(a.shape[-1] - 1, 0)]]


def _tridiagonal_one(a, *, lower):
    name = "hetrd" if np.iscomplexobj(a) else "sytrd"
    c, d, e, tau, _ = _lapack(name, a)(a, lower=int(lower))
    return [c, d, e, tau]


def _householder_product_one(a, taus):
    name = "ungqr" if np.iscomplexobj(a) else "orgqr"
    q, _, _ = _lapack(name, a)(a, taus)
    return [q]


def _qr_pivots_one(a):
    _, jpvt, *_ = _lapack("geqp3", a)(a)
    return [(jpvt - 1).astype(np.int32)]


def _hessenberg_impl(a):
    return _per_matrix_outputs(_hessenberg_one, np.asarray(a))


def _tridiagonal_impl(a, *, lower):
    return _per_matrix_outputs(lambda m: _tridiagonal_one(m, lower=lower), np.asarray(a))


def _householder_product_impl(a, taus):
    return _per_matrix_outputs(_householder_product_one, np.asarray(a), np.asarray(taus))[0]


def _qr_pivots_impl(a):
    return _per_matrix_outputs(_qr_pivots_one, np.asarray(a))[0]


# ---------------------------------------------------------------- ops

def _qr_eval(a, *, full):
    _check_matrix("qr", a)
    m, n = a.shape[-2:]
    k = m if full else min(m, n)
    batch = a.shape[:-2]
    return (ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype))


def _svd_eval(a, *, full_matrices):
    _check_matrix("svd", a)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    mu, nv = (m, n) if full_matrices else (k, k)
    return (ShapedArray(batch + (m, mu), a.dtype),
            ShapedArray(batch + (k,), dtypes.real_part(a.dtype)),
            ShapedArray(batch + (nv, n), a.dtype))


def _svdvals_eval(a):
    _check_matrix("svdvals", a)
    return ShapedArray(a.shape[:-2] + (min(a.shape[-2:]),), dtypes.real_part(a.dtype))


def _eigh_eval(a, *, lower):
    _check_matrix("eigh", a, square=True)
    return (ShapedArray(a.shape[:-1], dtypes.real_part(a.dtype)), a)


def _eigvalsh_eval(a, *, lower):
    _check_matrix("eigvalsh", a, square=True)
    return ShapedArray(a.shape[:-1], dtypes.real_part(a.dtype))


def _det_eval(a):
    _check_matrix("det", a, square=True)
    return ShapedArray(a.shape[:-2], a.dtype)


def _slogdet_eval(a):
    _check_matrix("slogdet", a, square=True)
    return (ShapedArray(a.shape[:-2], a.dtype),
            ShapedArray(a.shape[:-2], dtypes.real_part(a.dtype)))


def _pinv_eval(a, *, rcond):
    _check_matrix("pinv", a)
    return ShapedArray(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)


def _lu_eval(a):
    _check_matrix("lu", a)
    m, n = a.shape[-2:]
    return (a, ShapedArray(a.shape[:-2] + (min(m, n),), dtypes.int32),
            ShapedArray(a.shape[:-2] + (m,), dtypes.int32))


def _pivots_eval(piv, *, m):
    if piv.dtype != dtypes.int32 or piv.ndim < 1:
        raise DTypeError(f"pivots must be an int32 array, got {piv}", op="lu_pivots_to_permutation")
    return ShapedArray(piv.shape[:-1] + (m,), dtypes.int32)


def _eig_eval(a):
    _check_matrix("eig", a, square=True)
    out = dtypes.complex_of(a.dtype)
    return (ShapedArray(a.shape[:-1], out), ShapedArray(a.shape, out))


def _eigvals_eval(a):
    _check_matrix("eigvals", a, square=True)
    return ShapedArray(a.shape[:-1], dtypes.complex_of(a.dtype))


def _schur_eval(a, *, output):
    _check_matrix("schur", a, square=True)
    dt = a.dtype if output == "real" else dtypes.complex_of(a.dtype)
    return (ShapedArray(a.shape, dt), ShapedArray(a.shape, dt))


def _sylvester_eval(a, b, c):
    for x in (a, b):
        _check_matrix("solve_sylvester", x, square=True)
    if not a.dtype == b.dtype == c.dtype:
        raise DTypeError(f"operands need one dtype, got {a.dtype.name}, {b.dtype.name} and "
                         f"{c.dtype.name}", op="solve_sylvester")
    if c.shape != a.shape[:-1] + b.shape[-1:] or a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"A X + X B = C needs C of shape {a.shape[:-1] + b.shape[-1:]} "
                         f"for A {a.shape} and B {b.shape}, got {c.shape}",
                         op="solve_sylvester")
    return c


def _polar_eval(a, *, side):
    _check_matrix("polar", a)
    m, n = a.shape[-2:]
    k = n if side == "right" else m
    return (a, ShapedArray(a.shape[:-2] + (k, k), a.dtype))


def _banded_eval(ab, b, *, lower, upper):
    _check_matrix("solve_banded", ab)
    _check_matrix("solve_banded", b)
    if ab.dtype != b.dtype:
        raise DTypeError(f"operands need one dtype, got {ab.dtype.name} and {b.dtype.name}",
                         op="solve_banded")
    if ab.shape[-2] != lower + upper + 1 or ab.shape[-1] != b.shape[-2] \
            or ab.shape[:-2] != b.shape[:-2]:
        raise ShapeError(f"banded storage of shape {ab.shape} does not fit (l, u) = "
                         f"({lower}, {upper}) and a right-hand side of shape {b.shape}: it "
                         f"needs l + u + 1 rows and one column per equation",
                         op="solve_banded")
    return b


def _frechet_eval(a, e):
    _check_matrix("expm_frechet", a, square=True)
    if e.shape != a.shape or e.dtype != a.dtype:
        raise ShapeError(f"direction {e} must match the matrix {a}", op="expm_frechet")
    return a


def _hessenberg_eval(a):
    _check_matrix("hessenberg", a, square=True)
    return (a, ShapedArray(a.shape[:-2] + (max(a.shape[-1] - 1, 0),), a.dtype))


def _tridiagonal_eval(a, *, lower):
    _check_matrix("tridiagonal", a, square=True)
    n, batch, real = a.shape[-1], a.shape[:-2], dtypes.real_part(a.dtype)
    return (a, ShapedArray(batch + (n,), real), ShapedArray(batch + (max(n - 1, 0),), real),
            ShapedArray(batch + (max(n - 1, 0),), a.dtype))


def _householder_product_eval(a, taus):
    _check_matrix("householder_product", a)
    m, n = a.shape[-2:]
    if taus.dtype != a.dtype or taus.shape[:-1] != a.shape[:-2] or not taus.shape[-1] <= n <= m:
        raise ShapeError(f"needs reflectors a (m, n) with m >= n and taus (k,) with k <= n, of "
                         f"one dtype and batch, got {a} and {taus}", op="householder_product")
    return a


def _qr_pivots_eval(a):
    _check_matrix("qr", a)
    return ShapedArray(a.shape[:-2] + a.shape[-1:], dtypes.int32)


# Each op names the BLAS library its impl runs on (``blas=``), so that a plan sets that
# library's width and keeps its products there: NumPy's (np.linalg's LAPACK, numpy_lapack,
# and loops.gemm_into) but for expm's Pade approximants, which are SciPy's.
cholesky_p = FAMILY.op("cholesky", lambda a: _same("cholesky", a), np.linalg.cholesky,
                       blas=NUMPY_BLAS)
cho_inverse_p = FAMILY.op("cho_inverse", lambda a: _same("cho_inverse", a),
                          lambda a: _cho_inverse_impl(np.asarray(a)), blas=_TRSM_GETRF_BLAS)
triangular_solve_p = FAMILY.op("triangular_solve", _solve_eval("triangular_solve"),
                               _triangular_solve_impl, blas=_TRSM_GETRF_BLAS)
solve_p = FAMILY.op("solve", _solve_eval("solve"), np.linalg.solve, blas=NUMPY_BLAS)
inv_p = FAMILY.op("inv", lambda a: _same("inv", a), np.linalg.inv, blas=NUMPY_BLAS)
det_p = FAMILY.op("det", _det_eval, lambda a: np.asarray(np.linalg.det(a)), blas=NUMPY_BLAS)
slogdet_p = FAMILY.op("slogdet", _slogdet_eval,
                      lambda a: [np.asarray(x) for x in np.linalg.slogdet(a)],
                      multiple_results=True, blas=NUMPY_BLAS)
qr_p = FAMILY.op("qr", _qr_eval, _qr_impl, multiple_results=True, blas=NUMPY_BLAS)
eigh_p = FAMILY.op("eigh", _eigh_eval, _eigh_impl, multiple_results=True, blas=NUMPY_BLAS)
eigvalsh_p = FAMILY.op("eigvalsh", _eigvalsh_eval, _eigvalsh_impl, blas=NUMPY_BLAS)
svd_p = FAMILY.op("svd", _svd_eval, _svd_impl, multiple_results=True, blas=NUMPY_BLAS)
svdvals_p = FAMILY.op("svdvals", _svdvals_eval, _svdvals_impl, blas=NUMPY_BLAS)
pinv_p = FAMILY.op("pinv", _pinv_eval, _pinv_impl, blas=NUMPY_BLAS)
lu_p = FAMILY.op("lu", _lu_eval, _lu_impl, multiple_results=True, blas=_TRSM_GETRF_BLAS)
lu_pivots_to_permutation_p = FAMILY.op("lu_pivots_to_permutation", _pivots_eval,
                                       _pivots_to_permutation_impl)
expm_p = FAMILY.op("expm", lambda a: _same("expm", a), _expm_impl, blas=SCIPY_BLAS)
expm_frechet_p = FAMILY.op("expm_frechet", _frechet_eval, _expm_frechet_impl, blas=SCIPY_BLAS)
eig_p = FAMILY.op("eig", _eig_eval, _eig_impl, multiple_results=True, blas=NUMPY_BLAS)
eigvals_p = FAMILY.op("eigvals", _eigvals_eval, _eigvals_impl, blas=NUMPY_BLAS)
schur_p = FAMILY.op("schur", _schur_eval, _schur_impl, multiple_results=True,
                    blas=SCIPY_BLAS)
sqrtm_p = FAMILY.op("sqrtm", lambda a: _same("sqrtm", a), _sqrtm_impl, blas=SCIPY_BLAS)
sylvester_p = FAMILY.op("solve_sylvester", _sylvester_eval, _sylvester_impl,
                        blas=SCIPY_BLAS)
polar_p = FAMILY.op("polar", _polar_eval, _polar_impl, multiple_results=True,
                    blas=SCIPY_BLAS)
banded_p = FAMILY.op("solve_banded", _banded_eval, _banded_impl, blas=SCIPY_BLAS)
# LAPACK's Householder forms (JAX's lax.linalg), without derivatives (as JAX's); the
# column order of a pivoted QR (geqp3), whose derivative is zero
hessenberg_p = FAMILY.op("hessenberg", _hessenberg_eval, _hessenberg_impl,
                         multiple_results=True, blas=SCIPY_BLAS)
tridiagonal_p = FAMILY.op("tridiagonal", _tridiagonal_eval, _tridiagonal_impl,
                          multiple_results=True, blas=SCIPY_BLAS)
householder_product_p = FAMILY.op("householder_product", _householder_product_eval,
                                  _householder_product_impl, blas=SCIPY_BLAS)
qr_pivots_p = FAMILY.op("qr_pivots", _qr_pivots_eval, _qr_pivots_impl, blas=SCIPY_BLAS)
defzero(qr_pivots_p)

for _prim, _ranks in ((eig_p, (2,)), (eigvals_p, (2,)), (schur_p, (2,)), (sqrtm_p, (2,)),
                      (sylvester_p, (2, 2, 2)), (polar_p, (2,)), (banded_p, (2, 2)),
                      (hessenberg_p, (2,)), (tridiagonal_p, (2,)),
                      (householder_product_p, (2, 1)), (qr_pivots_p, (2,))):
    batch_leading(_prim, _ranks)

for _prim, _ranks in ((cholesky_p, (2,)), (cho_inverse_p, (2,)), (triangular_solve_p, (2, 2)),
                      (solve_p, (2, 2)), (inv_p, (2,)), (det_p, (2,)), (slogdet_p, (2,)),
                      (qr_p, (2,)), (eigh_p, (2,)), (eigvalsh_p, (2,)), (svd_p, (2,)),
                      (svdvals_p, (2,)), (pinv_p, (2,)), (lu_p, (2,)),
                      (lu_pivots_to_permutation_p, (1,)), (expm_p, (2,)), (expm_frechet_p, (2, 2))):
    batch_leading(_prim, _ranks)


def cholesky(a):
    """Lower Cholesky factor of Hermitian positive-definite matrices (reads the lower triangle)."""
    return cholesky_p.bind(a)


def cho_inverse(low):
    """``(L L^H)^-1`` from lower Cholesky factors ``L`` (reads their lower triangle): the
    inverse of the matrix they factor, as ``cho_solve((L, True), I)`` in a third of its
    flops (LAPACK ``potri``).

    >>> import numpy as np
    >>> cho_inverse(np.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 3.0]])))
    array([[ 0.375, -0.25 ],
           [-0.25 ,  0.5  ]])
    """
    return cho_inverse_p.bind(low)


def triangular_solve(a, b, *, left_side=True, lower=True, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """Solve ``op(A) X = B`` (``left_side``) or ``X op(A) = B`` with triangular ``A``; only the
    ``lower`` (or upper) triangle of ``A`` is read; ``op`` transposes and/or conjugates."""
    return triangular_solve_p.bind(a, b, left_side=left_side, lower=lower,
                                   transpose_a=transpose_a, conjugate_a=conjugate_a,
                                   unit_diagonal=unit_diagonal)


def solve(a, b):
    """``X`` with ``A X = B`` for square ``A`` and matrix ``B`` (equal batch dims)."""
    return solve_p.bind(a, b)


def inv(a):
    return inv_p.bind(a)


def det(a):
    return det_p.bind(a)


def slogdet(a):
    return slogdet_p.bind(a)


def qr(a, full=False):
    return qr_p.bind(a, full=full)


def eigh(a, lower=True):
    """(w, V) of Hermitian matrices, read from the ``lower`` (or upper) triangle."""
    return eigh_p.bind(a, lower=lower)


def eigvalsh(a, lower=True):
    return eigvalsh_p.bind(a, lower=lower)


def svd(a, full_matrices=False):
    """(U, s, Vh), as ``numpy.linalg.svd``."""
    return svd_p.bind(a, full_matrices=full_matrices)


def svdvals(a):
    return svdvals_p.bind(a)


def pinv(a, rcond):
    return pinv_p.bind(a, rcond=float(rcond))


def lu(a):
    """(lu, pivots, permutation): ``a[..., permutation, :] == L @ U`` with unit-lower ``L``
    and upper ``U`` packed in ``lu``; ``pivots`` are LAPACK's (0-based) row swaps."""
    return lu_p.bind(a)


def lu_pivots_to_permutation(piv, m):
    return lu_pivots_to_permutation_p.bind(piv, m=int(m))


def expm(a):
    return expm_p.bind(a)


def eig(a):
    """(w, V) of general square matrices, complex (also for real input, as JAX), each
    column of ``V`` of unit norm (LAPACK's phase)."""
    return eig_p.bind(a)


def eigvals(a):
    return eigvals_p.bind(a)


def schur(a, output="real"):
    """(T, Z) with ``a = Z T Z^H``: T quasi-upper (``output='real'``) or upper triangular."""
    return schur_p.bind(a, output=output)


def sqrtm(a):
    """The principal square root (SciPy's Schur method); NaN for a real matrix whose root
    is not real."""
    return sqrtm_p.bind(a)


def solve_sylvester(a, b, c):
    """``X`` with ``A X + X B = C`` (Bartels-Stewart, SciPy's); linear in ``C``."""
    return sylvester_p.bind(a, b, c)


def polar(a, side="right"):
    """(U, P) with ``a = U P`` (``side='right'``) or ``a = P U`` (``'left'``)."""
    return polar_p.bind(a, side=side)


def solve_banded(ab, b, lower, upper):
    """``x`` with ``A x = b`` for ``A`` in LAPACK's banded storage
    ``ab[upper + i - j, j] == A[i, j]``; linear in ``b``."""
    return banded_p.bind(ab, b, lower=int(lower), upper=int(upper))


def hessenberg(a):
    """(packed, taus): LAPACK's Hessenberg reduction (``gehrd``): ``H`` on and above the
    first subdiagonal, the reflectors below it."""
    return hessenberg_p.bind(a)


def tridiagonal(a, lower=True):
    """(packed, d, e, taus): LAPACK's reduction of a Hermitian matrix to real tridiagonal
    form (``sytrd``/``hetrd``) from its ``lower`` (or upper) triangle."""
    return tridiagonal_p.bind(a, lower=bool(lower))


def householder_product(a, taus):
    """The product of the Householder reflectors stored in ``a``'s columns with ``taus``
    (LAPACK ``orgqr``/``ungqr``): the first ``n`` columns of ``Q``."""
    return householder_product_p.bind(a, taus)


def qr_pivots(a):
    """The column order of a pivoted QR of ``a`` (LAPACK ``geqp3``), 0-based int32."""
    return qr_pivots_p.bind(a)


def expm_frechet(a, e):
    """The Frechet derivative of ``expm`` at ``a`` in direction ``e`` (linear in ``e``)."""
    return expm_frechet_p.bind(a, e)


# ---------------------------------------------------------------- rule building blocks

def _is_complex(x):
    return dtypes.is_complex(aval_of(x).dtype)


def _mT(x):
    return _tnp().swapaxes(x, -1, -2)


def _H(x):
    return _tnp().conj(_mT(x)) if _is_complex(x) else _mT(x)


def _conj(x):
    return _tnp().conj(x) if _is_complex(x) else x


def _mm(a, b):
    return _tnp().matmul(a, b)


def _diag(x):
    return _tnp().diagonal(x, 0, -2, -1)


def _eye(n, dt):
    return np.eye(n, dtype=dt)


def _diag_matrix(v, dt):
    tnp = _tnp()
    n = aval_of(v).shape[-1]
    return tnp.multiply(tnp.expand_dims(v, -1), _eye(n, dt))


def _real(x):
    return _tnp().real(x) if _is_complex(x) else x


def _dtype(x):
    return aval_of(x).dtype


def _hermitian_from(t, lower=True):
    """The Hermitian matrix a routine reading the ``lower`` (or upper) triangle sees in ``t``."""
    tnp = _tnp()
    low = tnp.tril(t, -1) if lower else tnp.triu(t, 1)
    n = aval_of(t).shape[-1]
    diag = tnp.multiply(t, _eye(n, dtypes.real_part(_dtype(t))))
    if _is_complex(t):
        diag = tnp.real(diag).astype(_dtype(t))
    return tnp.add(tnp.add(low, _H(low)), diag)


def _safe_reciprocal_gaps(w, squared=False):
    """``F[i, j] = 1 / (w_j - w_i)`` (or ``1 / (w_j^2 - w_i^2)``), 0 on the diagonal and for
    pairs closer than the degeneracy tolerance (see the module docstring)."""
    tnp = _tnp()
    n = aval_of(w).shape[-1]
    row, col = tnp.expand_dims(w, -2), tnp.expand_dims(w, -1)
    gaps = tnp.multiply(row - col, row + col) if squared else row - col
    scale = tnp.max(tnp.abs(w), axis=-1, keepdims=True) if n else 1.0
    if squared:
        scale = scale * scale
    tol = tnp.expand_dims(scale * (DEGENERACY_RTOL * max(n, 1)), -1)
    apart = tnp.abs(gaps) > tol
    return tnp.where(apart, 1 / tnp.where(apart, gaps, 1), 0)


def _jvp(prim):
    """Register a JVP written as ``fn(out, primals, tangents, **params)`` returning the output
    tangent(s), where ``tangents`` holds None for symbolically zero ones."""
    def decorate(fn):
        def rule(primals, tangents, **params):
            out = prim.bind(*primals, **params)
            outs = out if prim.multiple_results else [out]
            if all(is_zero(t) for t in tangents):
                zeros = [Zero(aval_of(o)) for o in outs]
                return out, (zeros if prim.multiple_results else zeros[0])
            ts = [None if is_zero(t) else t for t in tangents]
            tout = fn(out, primals, ts, **params)
            if not prim.multiple_results:
                return out, tout
            return out, [Zero(aval_of(o)) if t is None else t for o, t in zip(outs, tout)]
        register("jvp", prim, rule)
        return fn
    return decorate


# ---------------------------------------------------------------- JVP rules

@_jvp(solve_p)
def _solve_jvp(x, primals, tangents):
    a, _ = primals
    ta, tb = tangents
    rhs = tb
    if ta is not None:
        term = _mm(ta, x)
        rhs = _tnp().negative(term) if rhs is None else _tnp().subtract(rhs, term)
    return solve(a, rhs)


def _solve_transpose(ct, a, b):
    if is_undefined(a):
        raise UnsupportedError("solve is linear in its right-hand side only", op="linalg.solve")
    return [None, solve(_mT(a), instantiate(ct))]


register("transpose", solve_p, _solve_transpose)


def _op_a(a, transpose_a, conjugate_a):
    if conjugate_a:
        a = _conj(a)
    return _mT(a) if transpose_a else a


@_jvp(triangular_solve_p)
def _triangular_solve_jvp(x, primals, tangents, **params):
    # X = op(A)^-1 B:  dX = op(A)^-1 (dB - op(dA) X)  (left) or (dB - X op(dA)) op(A)^-1
    tnp = _tnp()
    a, _ = primals
    ta, tb = tangents
    rhs = tb
    if ta is not None:
        ta = tnp.tril(ta) if params["lower"] else tnp.triu(ta)
        if params["unit_diagonal"]:
            n = aval_of(ta).shape[-1]
            ta = tnp.multiply(ta, 1 - _eye(n, dtypes.real_part(_dtype(ta))))
        op = _op_a(ta, params["transpose_a"], params["conjugate_a"])
        term = _mm(op, x) if params["left_side"] else _mm(x, op)
        rhs = tnp.negative(term) if rhs is None else tnp.subtract(rhs, term)
    return triangular_solve_p.bind(a, rhs, **params)


def _triangular_solve_transpose(ct, a, b, **params):
    if is_undefined(a):
        raise UnsupportedError("triangular_solve is linear in its right-hand side only",
                               op="linalg.triangular_solve")
    flipped = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, instantiate(ct), **flipped)]


register("transpose", triangular_solve_p, _triangular_solve_transpose)


@_jvp(inv_p)
def _inv_jvp(ainv, primals, tangents):
    (ta,) = tangents
    return _tnp().negative(_mm(ainv, _mm(ta, ainv)))


def _trace_of_solve(a, ta):
    return _tnp().sum(_diag(solve(a, ta)), axis=-1)


@_jvp(det_p)
def _det_jvp(d, primals, tangents):
    # d det A = det A * tr(A^-1 dA)   (Jacobi's formula)
    return _tnp().multiply(d, _trace_of_solve(primals[0], tangents[0]))


@_jvp(slogdet_p)
def _slogdet_jvp(out, primals, tangents):
    sign, _ = out
    t = _trace_of_solve(primals[0], tangents[0])
    if not _is_complex(t):
        return [None, t]
    tnp = _tnp()
    return [tnp.multiply(sign, tnp.multiply(1j, tnp.imag(t))), tnp.real(t)]


@_jvp(cholesky_p)
def _cholesky_jvp(low, primals, tangents):
    # dL = L Phi(L^-1 dA L^-H), Phi = lower triangle with half the diagonal (Murray 2016)
    tnp = _tnp()
    ta = _hermitian_from(tangents[0])
    y = triangular_solve(low, ta, left_side=True, lower=True)
    z = triangular_solve(low, y, left_side=False, lower=True, transpose_a=True,
                         conjugate_a=_is_complex(low))
    n = aval_of(low).shape[-1]
    phi = np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n)
    return _mm(low, tnp.multiply(z, phi.astype(dtypes.real_part(_dtype(low)))))


@_jvp(cho_inverse_p)
def _cho_inverse_jvp(x, primals, tangents):
    # X = (L L^H)^-1: dX = -X dK X with dK = dL L^H + L dL^H, and L^H X = L^-1, so
    # dX = -(M + M^H), M = X dL L^-1 (dL: the lower triangle the impl reads)
    low = primals[0]
    right = triangular_solve(low, _tnp().tril(tangents[0]), left_side=False, lower=True)
    m = _mm(x, right)
    return _tnp().negative(_tnp().add(m, _H(m)))


@_jvp(eigh_p)
def _eigh_jvp(out, primals, tangents, *, lower):
    w, v = out
    tnp = _tnp()
    vhav = _mm(_H(v), _mm(_hermitian_from(tangents[0], lower), v))
    dw = _real(_diag(vhav))
    dv = _mm(v, tnp.multiply(_safe_reciprocal_gaps(w), vhav))
    return [dw, dv]


def _quadratic_diag(u, ta, v):
    """``real(diag(U^H dA V))`` with one matrix product."""
    tnp = _tnp()
    return _real(tnp.sum(tnp.multiply(_conj(u), _mm(ta, v)), axis=-2))


@_jvp(eigvalsh_p)
def _eigvalsh_jvp(w, primals, tangents, *, lower):
    _, v = eigh(primals[0], lower)
    return _quadratic_diag(v, _hermitian_from(tangents[0], lower), v)


@_jvp(svdvals_p)
def _svdvals_jvp(s, primals, tangents):
    u, _, vh = svd(primals[0], full_matrices=False)
    return _quadratic_diag(u, tangents[0], _H(vh))


def _safe_inverse(s):
    tnp = _tnp()
    nonzero = s != 0
    return tnp.where(nonzero, 1 / tnp.where(nonzero, s, 1), 0)


def _svd_reduced_jvp(a, u, s, vh, ta):
    """(dU, ds, dV) of the reduced SVD (JAX's svd_jvp_rule, with zero singular values and
    degenerate pairs handled as the module docstring says)."""
    tnp = _tnp()
    m, n = aval_of(a).shape[-2:]
    k = min(m, n)
    v = _H(vh)
    ds_mat = _mm(_H(u), _mm(ta, v))
    ds = _real(_diag(ds_mat))
    s_row = tnp.expand_dims(s, -2)
    s_col = tnp.expand_dims(s, -1)
    f = _safe_reciprocal_gaps(s, squared=True)
    dss = tnp.multiply(ds_mat, s_row)
    sds = tnp.multiply(s_col, ds_mat)
    inner_u = tnp.multiply(f, tnp.add(dss, _H(dss)))
    s_inv = _safe_inverse(s)
    if _is_complex(a):
        skew = tnp.multiply(tnp.subtract(ds_mat, _H(ds_mat)), 0.5)
        inner_u = tnp.add(inner_u, tnp.multiply(skew, _diag_matrix(s_inv, _dtype(s))))
    du = _mm(u, inner_u)
    dv = _mm(v, tnp.multiply(f, tnp.add(sds, _H(sds))))
    s_inv_row = tnp.expand_dims(s_inv, -2)
    if m > k:
        dav = _mm(ta, v)
        du = tnp.add(du, tnp.multiply(tnp.subtract(dav, _mm(u, _mm(_H(u), dav))), s_inv_row))
    if n > k:
        dahu = _mm(_H(ta), u)
        dv = tnp.add(dv, tnp.multiply(tnp.subtract(dahu, _mm(v, _mm(vh, dahu))), s_inv_row))
    return du, ds, dv


def _complete_columns(q1, dq1, q2):
    """Derivative of an orthonormal completion Q2 of Q1 that stays orthogonal to Q1 and does
    not rotate within itself: dQ2 = -Q1 (dQ1^H Q2)."""
    return _tnp().negative(_mm(q1, _mm(_H(dq1), q2)))


@_jvp(svd_p)
def _svd_jvp(out, primals, tangents, *, full_matrices):
    tnp = _tnp()
    (a,), (ta,) = primals, tangents
    u, s, vh = out
    m, n = aval_of(a).shape[-2:]
    k = min(m, n)
    if not full_matrices or m == n:
        du, ds, dv = _svd_reduced_jvp(a, u, s, vh, ta)
        return [du, ds, _H(dv)]
    u1, vh1 = u[..., :, :k], vh[..., :k, :]
    du, ds, dv = _svd_reduced_jvp(a, u1, s, vh1, ta)
    if m > k:
        du = tnp.concatenate([du, _complete_columns(u1, du, u[..., :, k:])], axis=-1)
    if n > k:
        v = _H(vh)
        dv = tnp.concatenate([dv, _complete_columns(v[..., :, :k], dv, v[..., :, k:])], axis=-1)
    return [du, ds, _H(dv)]


def _qr_square_jvp(q, r, ta):
    """(dQ, dR) for A = QR with A m x n, m >= n, Q m x n (Walter & Lehmann; JAX's qr_jvp)."""
    tnp = _tnp()
    n = aval_of(r).shape[-1]
    dx_rinv = triangular_solve(r, ta, left_side=False, lower=False)
    qt_dx_rinv = _mm(_H(q), dx_rinv)
    low = tnp.tril(qt_dx_rinv, -1)
    do = tnp.subtract(low, _H(low))
    if _is_complex(q):
        eye = _eye(n, dtypes.real_part(_dtype(q)))
        do = tnp.add(do, tnp.multiply(tnp.multiply(1j, tnp.imag(qt_dx_rinv)), eye))
    dq = tnp.add(_mm(q, tnp.subtract(do, qt_dx_rinv)), dx_rinv)
    dr = _mm(tnp.subtract(qt_dx_rinv, do), r)
    return dq, dr


@_jvp(qr_p)
def _qr_jvp(out, primals, tangents, *, full):
    tnp = _tnp()
    (a,), (ta,) = primals, tangents
    q, r = out
    m, n = aval_of(a).shape[-2:]
    if m < n:       # A = [X | Y] with X square: QR of X, and R's right block is Q^H Y
        dq, drx = _qr_square_jvp(q, r[..., :, :m], ta[..., :, :m])
        dry = tnp.add(_mm(_H(dq), a[..., :, m:]), _mm(_H(q), ta[..., :, m:]))
        return [dq, tnp.concatenate([drx, dry], axis=-1)]
    if not full or m == n:
        return list(_qr_square_jvp(q, r, ta))
    q1 = q[..., :, :n]
    dq1, dr1 = _qr_square_jvp(q1, r[..., :n, :], ta)
    dq = tnp.concatenate([dq1, _complete_columns(q1, dq1, q[..., :, n:])], axis=-1)
    dr = tnp.concatenate([dr1, tnp.zeros_like(r[..., n:, :])], axis=-2)
    return [dq, dr]


@_jvp(pinv_p)
def _pinv_jvp(p, primals, tangents, *, rcond):
    # Golub & Pereyra (1973), as JAX: valid where the rank is locally constant
    tnp = _tnp()
    (a,), (ta,) = primals, tangents
    m, n = aval_of(a).shape[-2:]
    if m >= n:
        s = _mm(_mm(p, _H(p)), _H(ta))
        t = _mm(_mm(_H(ta), _H(p)), p)
        out = tnp.negative(_mm(_mm(p, ta), p))
        out = tnp.add(out, tnp.subtract(s, _mm(_mm(s, a), p)))
        return tnp.add(out, tnp.subtract(t, _mm(_mm(p, a), t)))
    s = _mm(p, _mm(_H(p), _H(ta)))
    t = _mm(_H(ta), _mm(_H(p), p))
    out = tnp.negative(_mm(p, _mm(ta, p)))
    out = tnp.add(out, tnp.subtract(s, _mm(s, _mm(a, p))))
    return tnp.add(out, tnp.subtract(t, _mm(p, _mm(a, t))))


def _permutation_matrix(perm, n, dt):
    """P with ``P @ x == x[..., perm, :]``."""
    tnp = _tnp()
    hit = tnp.equal(tnp.expand_dims(perm, -1), np.arange(n, dtype=np.int32))
    return hit.astype(dt)


@_jvp(lu_p)
def _lu_jvp(out, primals, tangents):
    # De Hoog, Anderssen & Lukas (2011), as JAX's lu_jvp_rule: with L padded to m x m and
    # U to n x n (identity blocks), X = L^-1 P dA U^-1 and dLU = L tril(X, -1) + triu(X) U
    tnp = _tnp()
    (a,), (ta,) = primals, tangents
    packed, _, perm = out
    m, n = aval_of(a).shape[-2:]
    k = min(m, n)
    dt = _dtype(a)
    x = _mm(_permutation_matrix(perm, m, dt), ta)
    low = tnp.tril(packed[..., :, :k], -1)
    if m > k:
        low = tnp.concatenate([low, tnp.zeros_like(packed[..., :, :m - k])], axis=-1)
    low = tnp.add(low, _eye(m, dt))
    up = tnp.triu(packed[..., :k, :])
    if n > k:
        eye = np.zeros((n - k, n), dt)
        eye[:, k:] = np.eye(n - k, dtype=dt)
        up = tnp.concatenate([up, tnp.broadcast_to(eye, aval_of(up).shape[:-2] + eye.shape)],
                             axis=-2)
    la = triangular_solve(low, x, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(up, la, left_side=False, lower=False)
    return [tnp.add(_mm(low, tnp.tril(lau, -1)), _mm(tnp.triu(lau), up)), None, None]


@_jvp(expm_p)
def _expm_jvp(out, primals, tangents):
    return expm_frechet(primals[0], tangents[0])


def _block_upper(a, e):
    """[[A, E], [0, A]]: its exponential holds expm(A) on the diagonal, L(A, E) top right."""
    tnp = _tnp()
    top = tnp.concatenate([a, e], axis=-1)
    bottom = tnp.concatenate([tnp.zeros_like(a), a], axis=-1)
    return tnp.concatenate([top, bottom], axis=-2)


@_jvp(expm_frechet_p)
def _expm_frechet_jvp(out, primals, tangents):
    a, e = primals
    ta, te = tangents
    if ta is None:
        return expm_frechet(a, te)
    n = aval_of(a).shape[-1]
    te = _tnp().zeros_like(a) if te is None else te
    big = expm_frechet(_block_upper(a, e), _block_upper(ta, te))
    return big[..., :n, n:]


def _expm_frechet_transpose(ct, a, e):
    if is_undefined(a):
        raise UnsupportedError("expm_frechet is linear in its direction only",
                               op="linalg.expm_frechet")
    # <C, L(A, E)> = <L(A^T, C), E> with the bilinear pairing (no conjugate)
    return [None, expm_frechet(_mT(a), instantiate(ct))]


register("transpose", expm_frechet_p, _expm_frechet_transpose)


def _zero_jvp(prim):
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return out, Zero(aval_of(out))
    register("jvp", prim, rule)


_zero_jvp(lu_pivots_to_permutation_p)


@_jvp(eig_p)
def _eig_jvp(out, primals, tangents):
    # Magnus (1985); JAX's eig_jvp_rule: with V^-1 dA V = M, dw = diag(M) and
    # dV = V (F * M) for F[i, j] = 1 / (w_j - w_i), then each column's change along itself
    # removed from its real part so that it keeps unit norm. Pairs of (near-)equal
    # eigenvalues get F = 0 (the module docstring's degeneracy rule).
    tnp = _tnp()
    w, v = out
    ta = tangents[0].astype(_dtype(v))
    m = _mm(solve(v, ta), v)
    du = _mm(v, tnp.multiply(_safe_reciprocal_gaps(w), m))
    along = tnp.real(_diag(_mm(_H(v), du)))
    dv = tnp.subtract(du, tnp.multiply(v, tnp.expand_dims(along, -2)))
    return [_diag(m), dv]


@_jvp(eigvals_p)
def _eigvals_jvp(w, primals, tangents):
    _, v = eig(primals[0])
    return _diag(_mm(solve(v, tangents[0].astype(_dtype(v))), v))


@_jvp(sqrtm_p)
def _sqrtm_jvp(x, primals, tangents):
    # X X = A:  X dX + dX X = dA
    return solve_sylvester(x, x, tangents[0])


@_jvp(sylvester_p)
def _sylvester_jvp(x, primals, tangents):
    # A X + X B = C:  A dX + dX B = dC - dA X - X dB
    tnp = _tnp()
    a, b, _ = primals
    ta, tb, tc = tangents
    rhs = tc
    for term in ([] if ta is None else [_mm(ta, x)]) + ([] if tb is None else [_mm(x, tb)]):
        rhs = tnp.negative(term) if rhs is None else tnp.subtract(rhs, term)
    return solve_sylvester(a, b, rhs)


def _sylvester_transpose(ct, a, b, c):
    if is_undefined(a) or is_undefined(b):
        raise UnsupportedError("solve_sylvester is linear in its right-hand side only",
                               op="linalg.solve_sylvester")
    # <G, S(C)> = <S^T(G), C> where S^T solves A^T Y + Y B^T = G (bilinear pairing)
    return [None, None, solve_sylvester(_mT(a), _mT(b), instantiate(ct))]


register("transpose", sylvester_p, _sylvester_transpose)


@_jvp(polar_p)
def _polar_jvp(out, primals, tangents, *, side):
    # right: P^2 = A^H A, so P dP + dP P = dA^H A + A^H dA, and dU = (dA - U dP) P^-1;
    # left: P^2 = A A^H and dU = P^-1 (dA - dP U). P must be nonsingular (full rank A).
    tnp = _tnp()
    (a,), (ta,) = primals, tangents
    u, p = out
    if side == "right":
        sym = _mm(_H(ta), a)
        dp = solve_sylvester(p, p, tnp.add(sym, _H(sym)))
        du = _mT(solve(_mT(p), _mT(tnp.subtract(ta, _mm(u, dp)))))
    else:
        sym = _mm(ta, _H(a))
        dp = solve_sylvester(p, p, tnp.add(sym, _H(sym)))
        du = solve(p, tnp.subtract(ta, _mm(dp, u)))
    return [du, dp]


def _schur_constraints(n, dt):
    """Constant pieces of the real Schur JVP's linear system over the ``m = n(n-1)/2``
    strictly lower entries ``(i, j)`` of the skew ``Omega = Z^T dZ``: ``P`` (n^2 x m) puts
    them into ``vec(Omega)`` (``+1`` below, ``-1`` mirrored above); ``G`` (m x n^2) reads
    each constrained entry of ``vec(dT)``, ``dT[i, j] = 0``; ``G_block`` the constraint of a
    2 x 2 block in its subdiagonal's row instead, ``dT[j, j] = dT[j + 1, j + 1]`` (LAPACK's
    standard form keeps the block's diagonal equal); ``sub`` which rows are subdiagonal."""
    rows, cols = np.tril_indices(n, -1)
    m = rows.size
    at = np.arange(m)
    p = np.zeros((n * n, m), dt)
    p[rows * n + cols, at], p[cols * n + rows, at] = 1, -1
    g = np.zeros((m, n * n), dt)
    g[at, rows * n + cols] = 1
    sub = rows == cols + 1
    g_block = np.zeros((m, n * n), dt)
    g_block[at[sub], cols[sub] * (n + 1)] = 1
    g_block[at[sub], rows[sub] * (n + 1)] = -1
    return p, g, g_block, sub, rows, cols


@_jvp(schur_p)
def _schur_jvp(out, primals, tangents, *, output):
    # A = Z T Z^T with Omega = Z^T dZ skew: dT = C + T Omega - Omega T for C = Z^T dA Z,
    # and Omega's lower part is the one that keeps dT in Schur form (zero below the
    # diagonal but for the 2 x 2 blocks' subdiagonals, whose blocks keep equal diagonals):
    # a linear system of n(n-1)/2 unknowns, nonsingular for distinct eigenvalues and
    # blocks that are not normal (the standard form's rotation is fixed there); the
    # triangular Sylvester system of Kressner, "Block algorithms for reordering standard
    # and generalized Schur forms" (2006), written out as a dense solve.
    tnp = _tnp()
    (_,), (ta,) = primals, tangents
    t, z = out
    if output != "real" or _is_complex(t):     # the complex form's vectors' phases are free
        raise MissingRuleError("schur", "jvp", FAMILY.id)
    n, dt = aval_of(t).shape[-1], _dtype(t)
    if n < 2:
        return [ta, tnp.zeros_like(z)]
    p, g, g_block, sub, rows, cols = _schur_constraints(n, dt)
    eye = _eye(n, dt)
    # K vec(X) = vec(T X - X T), row-major: kron(T, I) - kron(I, T^T)
    batch = aval_of(t).shape[:-2]
    k = tnp.subtract(tnp.multiply(t[..., :, None, :, None], eye[:, None, :]),
                     tnp.multiply(eye[:, None, :, None], _mT(t)[..., None, :, None, :]))
    k = tnp.reshape(k, batch + (n * n, n * n))
    blocks = tnp.logical_and(tnp.not_equal(t[..., rows, cols], 0), sub)
    constraints = tnp.where(blocks[..., None], g_block, g)
    c = _mm(_mT(z), _mm(ta, z))
    lhs = _mm(constraints, _mm(k, p))
    rhs = tnp.negative(_mm(constraints, tnp.reshape(c, batch + (n * n, 1))))
    omega = tnp.reshape(_mm(p, solve(lhs, rhs)), batch + (n, n))
    dt_ = tnp.add(c, tnp.subtract(_mm(t, omega), _mm(omega, t)))
    return [dt_, _mm(z, omega)]


def _shift_rows(x, k):
    """``y[..., i, :] = x[..., i + k, :]``, zero where ``i + k`` falls outside."""
    tnp = _tnp()
    n = aval_of(x).shape[-2]
    if k == 0:
        return x
    if abs(k) >= n:
        return tnp.zeros_like(x)
    zeros = tnp.zeros_like(x[..., :abs(k), :])
    if k > 0:
        return tnp.concatenate([x[..., k:, :], zeros], axis=-2)
    return tnp.concatenate([zeros, x[..., :n + k, :]], axis=-2)


def banded_matmul(ab, x, lower, upper):
    """``A @ x`` for ``A`` in banded storage (``ab[upper + i - j, j] == A[i, j]``), in
    ``O(n (l + u))``: row ``r`` of ``ab`` is the diagonal of offset ``upper - r``."""
    tnp = _tnp()
    out = None
    for r in range(lower + upper + 1):
        term = _shift_rows(tnp.multiply(tnp.expand_dims(ab[..., r, :], -1), x), upper - r)
        out = term if out is None else tnp.add(out, term)
    return out


def banded_transpose(ab, lower, upper):
    """The banded storage of ``A^T`` (``upper`` and ``lower`` swap): its row ``r`` is row
    ``l + u - r`` of ``ab`` moved right by ``l - r`` columns."""
    tnp = _tnp()
    rows = []
    for r in range(lower + upper + 1):
        row = tnp.expand_dims(ab[..., lower + upper - r, :], -1)
        rows.append(_mT(_shift_rows(row, r - lower)))
    return tnp.concatenate(rows, axis=-2)


@_jvp(banded_p)
def _banded_jvp(x, primals, tangents, *, lower, upper):
    # A x = b:  A dx = db - dA x
    tnp = _tnp()
    ab, _ = primals
    tab, tb = tangents
    rhs = tb
    if tab is not None:
        term = banded_matmul(tab, x, lower, upper)
        rhs = tnp.negative(term) if rhs is None else tnp.subtract(rhs, term)
    return solve_banded(ab, rhs, lower, upper)


def _banded_transpose_rule(ct, ab, b, *, lower, upper):
    if is_undefined(ab):
        raise UnsupportedError("solve_banded is linear in its right-hand side only",
                               op="linalg.solve_banded")
    return [None, solve_banded(banded_transpose(ab, lower, upper), instantiate(ct),
                               upper, lower)]


register("transpose", banded_p, _banded_transpose_rule)
