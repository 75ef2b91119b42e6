"""``tf.lax.linalg``: JAX's ``jax.lax.linalg``, the factorizations with JAX's signatures and
output conventions (``eigh`` returns ``(v, w)``, ``triangular_solve`` solves from the
right by default, ``qr`` is complete by default, ``eig``/``schur`` return lists of what
was asked for).

Each is an op of the LAPACK family ``tf_numba.ext.linalg`` (with its derivatives, batching
over leading dims, and host steps under ``jit``) or a composition of them: left
eigenvectors from the right ones, ``ormqr`` from the explicit ``Q``, a pivoted QR as the
QR of the permuted columns, ``tridiagonal_solve`` as a banded solve, ``cholesky_update``
as the Cholesky factor of the updated product, ``qdwh`` as the polar decomposition.
Where JAX has no derivative (``hessenberg``, ``tridiagonal``, ``householder_product``,
``ormqr``) there is none here either. ``cholesky`` of a matrix that is not positive
definite raises (NumPy's LAPACK), where JAX returns NaNs.

>>> from tf_numba import lax
>>> v, w = lax.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
>>> w
array([1., 3.])
"""
import enum

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.trace import user_source
from ..errors import UnsupportedError
from ..ext import linalg as L
from ..ops import elementwise as ew
from ..ops import indexing, layout, reductions
from ..ops.contraction import dot_general
from ._operands import leaf

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky",
           "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu",
           "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd",
           "symmetric_product", "triangular_solve", "tridiagonal", "tridiagonal_solve"]


class EigImplementation(enum.Enum):
    """Which library ``eig`` calls on an accelerator (``jax.lax.linalg``); LAPACK here."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which algorithm ``eigh`` uses on an accelerator; LAPACK's here."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which algorithm ``svd`` uses on an accelerator; LAPACK's divide and conquer here."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _mT(x):
    rank = aval_of(x).ndim
    return layout.transpose(x, tuple(range(rank - 2)) + (rank - 1, rank - 2))


def _H(x):
    x = _mT(x)
    return ew.conj(x) if dtypes.is_complex(aval_of(x).dtype) else x


def _matmul(a, b):
    batch = tuple(range(aval_of(a).ndim - 2))
    return dot_general(a, b, (((len(batch) + 1,), (len(batch),)), (batch, batch)))


def _symmetrized(x):
    return ew.mul(ew.add(x, _H(x)), 0.5)


def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor ``L`` of Hermitian positive-definite matrices, ``x = L
    L^H`` (``jax.lax.linalg.cholesky``); ``symmetrize_input`` averages ``x`` with its
    conjugate transpose first, else only the lower triangle is read."""
    x = leaf(x)
    return L.cholesky(_symmetrized(x) if symmetrize_input else x)


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of ``R^H R + w w^H`` from the upper factor ``R``
    (``jax.lax.linalg.cholesky_update``).

    >>> r = np.array([[2.0, 1.0], [0.0, 1.0]])
    >>> cholesky_update(r, np.array([1.0, 0.0]))
    array([[2.23606798, 0.89442719],
           [0.        , 1.09544512]])
    """
    r, w = leaf(r_matrix), leaf(w_vector)
    n = aval_of(w).shape[-1]
    column = layout.reshape(w, (n, 1))
    product = ew.add(_matmul(_H(r), r), _matmul(column, _H(column)))
    return _H(L.cholesky(product))


def _unit_columns_largest_real(v):
    """Each column of ``v`` scaled to unit norm with its largest entry real and positive
    (LAPACK ``geev``'s normalization of eigenvectors)."""
    shape, dt = tuple(aval_of(v).shape), aval_of(v).dtype
    axis = len(shape) - 2
    modulus = ew.abs(v)
    norm = ew.sqrt(reductions.reduce_sum(ew.mul(modulus, modulus), (axis,)))
    largest = layout.expand_dims(reductions.argmax(modulus, axis), (axis,))
    picked = indexing.take_along_axis(v, largest, axis)             # (..., 1, n)
    length = ew.mul(ew.abs(picked), layout.expand_dims(norm, (axis,)))
    scale = ew.div(ew.conj(picked), ew.convert_element_type(length, dt))
    return ew.mul(v, layout.broadcast_in_dim(scale, shape, tuple(range(len(shape)))))


def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
        enable_eigvec_derivs=False, implementation=None, use_magma=None):
    """``[w, vl, vr]`` of general square matrices (``jax.lax.linalg.eig``): complex
    eigenvalues, left eigenvectors (``vl^H x = w vl^H``) and right ones (``x vr = vr w``),
    each of unit norm; the vectors not asked for are left out of the list."""
    x = leaf(x)
    w, vr = L.eig(x)
    out = [w]
    if compute_left_eigenvectors:
        out.append(_unit_columns_largest_real(_H(L.inv(vr))))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True,
         subset_by_index=None, implementation=None):
    """``(v, w)`` of Hermitian matrices: eigenvectors in the columns of ``v``, eigenvalues
    ``w`` ascending (``jax.lax.linalg.eigh``); ``subset_by_index=(lo, hi)`` keeps the pairs
    ``lo`` to ``hi - 1``."""
    x = leaf(x)
    w, v = L.eigh(_symmetrized(x) if symmetrize_input else x, lower=lower)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w = layout.slice_in_dim(w, lo, hi, 1, aval_of(w).ndim - 1)
        v = layout.slice_in_dim(v, lo, hi, 1, aval_of(v).ndim - 1)
    return v, w


def hessenberg(a):
    """``(packed, taus)``: the Hessenberg reduction ``a = Q H Q^H`` as LAPACK's ``gehrd``
    stores it, ``H`` on and above the first subdiagonal and Householder reflectors below,
    with their scales ``taus`` (``jax.lax.linalg.hessenberg``)."""
    return tuple(L.hessenberg(leaf(a)))


def tridiagonal(a, *, lower=True):
    """``(packed, d, e, taus)``: the reduction of a Hermitian matrix to real tridiagonal
    form (LAPACK ``sytrd``/``hetrd``): diagonal ``d``, off-diagonal ``e``, reflectors in
    ``packed`` with scales ``taus`` (``jax.lax.linalg.tridiagonal``)."""
    return tuple(L.tridiagonal(leaf(a), lower=lower))


def householder_product(a, taus):
    """The first columns of the product of the Householder reflectors stored below the
    diagonal of ``a`` with scales ``taus`` (LAPACK ``orgqr``;
    ``jax.lax.linalg.householder_product``)."""
    return L.householder_product(leaf(a), leaf(taus))


def ormqr(a, taus, c, *, left=True, transpose=False):
    """``Q c`` (``left``) or ``c Q``, ``Q`` (conjugate-)transposed when ``transpose``, for
    the ``Q`` whose reflectors ``a`` and ``taus`` store (LAPACK ``ormqr``;
    ``jax.lax.linalg.ormqr``)."""
    a, taus, c = leaf(a), leaf(taus), leaf(c)
    m, k = aval_of(a).shape[-2:]
    if k < m:       # the full Q: reflectors with tau 0 are identities
        batch = tuple(aval_of(a).shape[:-2])
        a = layout.concatenate([a, layout.full(batch + (m, m - k), 0, aval_of(a).dtype)],
                               len(batch) + 1)
    t = aval_of(taus).shape[-1]
    if t < m:
        batch = tuple(aval_of(taus).shape[:-1])
        taus = layout.concatenate([taus, layout.full(batch + (m - t,), 0, aval_of(taus).dtype)],
                                  len(batch))
    q = L.householder_product(layout.slice_in_dim(a, 0, m, 1, aval_of(a).ndim - 1), taus)
    q = _H(q) if transpose else q
    return _matmul(q, c) if left else _matmul(c, q)


def lu(x):
    """``(lu, pivots, permutation)``: ``x[permutation] = L U`` with unit-lower ``L`` and
    upper ``U`` packed in ``lu``, LAPACK's row swaps ``pivots`` (``jax.lax.linalg.lu``)."""
    return tuple(L.lu(leaf(x)))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The row permutation that LAPACK's row swaps ``pivots`` make of ``permutation_size``
    rows (``jax.lax.linalg.lu_pivots_to_permutation``)."""
    return L.lu_pivots_to_permutation(leaf(pivots), permutation_size)


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """``(q, r)``, complete by default, or ``(q, r, p)`` with ``pivoting``: the QR of the
    columns in the order ``p`` of LAPACK's ``geqp3`` (``jax.lax.linalg.qr``)."""
    x = leaf(x)
    if not pivoting:
        return tuple(L.qr(x, full=full_matrices))
    p = L.qr_pivots(x)
    order = layout.broadcast_in_dim(p, tuple(aval_of(x).shape),
                                    tuple(range(aval_of(x).ndim - 2)) + (aval_of(x).ndim - 1,))
    q, r = L.qr(indexing.take_along_axis(x, ew.convert_element_type(order, dtypes.int64),
                                         aval_of(x).ndim - 1), full=full_matrices)
    return q, r, p


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h`` with ``u``
    unitary and ``h`` Hermitian positive semi-definite (``jax.lax.linalg.qdwh``), computed
    here from the SVD (SciPy's ``polar``) rather than by QDWH iterations, so
    ``num_iters`` is 0 and ``is_converged`` True."""
    if dynamic_shape is not None:
        raise UnsupportedError("dynamic_shape (a padded matrix) is not supported",
                               op="qdwh", source=user_source())
    u, h = L.polar(leaf(x), "right")
    return u, h, np.int64(0), np.bool_(True)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """``[T, vs]`` with ``x = vs T vs^H`` (``jax.lax.linalg.schur``): ``T`` quasi-upper
    triangular for a real ``x`` (real Schur form), upper triangular for a complex one;
    ``[T]`` without the vectors."""
    if sort_eig_vals or select_callable is not None:
        raise UnsupportedError("sorted Schur forms (sort_eig_vals, select_callable) are not "
                               "supported", op="schur", source=user_source())
    x = leaf(x)
    t, vs = L.schur(x, "complex" if dtypes.is_complex(aval_of(x).dtype) else "real")
    return [t, vs] if compute_schur_vectors else [t]


def svd(x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None):
    """``(u, s, vh)`` with ``x = u diag(s) vh``, singular values descending, or ``s`` alone
    without ``compute_uv`` (``jax.lax.linalg.svd``); ``subset_by_index=(lo, hi)`` keeps the
    values ``lo`` to ``hi - 1`` (and their vectors)."""
    x = leaf(x)
    if not compute_uv:
        s = L.svdvals(x)
        return s if subset_by_index is None else layout.slice_in_dim(
            s, *(int(i) for i in subset_by_index), 1, aval_of(s).ndim - 1)
    u, s, vh = L.svd(x, full_matrices=full_matrices)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        u = layout.slice_in_dim(u, lo, hi, 1, aval_of(u).ndim - 1)
        s = layout.slice_in_dim(s, lo, hi, 1, aval_of(s).ndim - 1)
        vh = layout.slice_in_dim(vh, lo, hi, 1, aval_of(vh).ndim - 2)
    return u, s, vh


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """``alpha a a^T + beta c`` (``jax.lax.linalg.symmetric_product``); with
    ``symmetrize_output`` the upper triangle is the transpose of the lower."""
    a, c = leaf(a_matrix), leaf(c_matrix)
    out = ew.add(ew.mul(_matmul(a, _mT(a)), alpha), ew.mul(c, beta))
    if not symmetrize_output:
        return out
    shape = tuple(aval_of(out).shape)
    row, column = (layout.iota(dtypes.int64, shape, len(shape) - k) for k in (2, 1))
    return ew.select(ew.ge(row, column), out, _mT(out))


def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False,
                     conjugate_a=False, unit_diagonal=False):
    """``X`` with ``op(a) X = b`` (``left_side``) or ``X op(a) = b`` for triangular ``a``,
    reading its ``lower`` (or upper) triangle (``jax.lax.linalg.triangular_solve``; note
    JAX's defaults: from the right, upper)."""
    return L.triangular_solve(leaf(a), leaf(b), left_side=left_side, lower=lower,
                              transpose_a=transpose_a, conjugate_a=conjugate_a,
                              unit_diagonal=unit_diagonal)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """``X`` with ``A X = b`` for the tridiagonal ``A`` of sub-diagonal ``dl`` (``dl[0]``
    unused), diagonal ``d`` and super-diagonal ``du`` (``du[-1]`` unused), all ``(..., m)``,
    and ``b`` of shape ``(..., m, n)`` (``jax.lax.linalg.tridiagonal_solve``): LAPACK's
    banded solve with partial pivoting, differentiable in every operand."""
    dl, d, du, b = (leaf(v) for v in (dl, d, du, b))
    shape = tuple(aval_of(d).shape)
    m, axis = shape[-1], len(shape) - 1
    zero = layout.full(shape[:-1] + (1,), 0, aval_of(d).dtype)
    # LAPACK's band storage: ab[1 + i - j, j] = A[i, j]
    upper = layout.concatenate([zero, layout.slice_in_dim(du, 0, m - 1, 1, axis)], axis)
    lower = layout.concatenate([layout.slice_in_dim(dl, 1, m, 1, axis), zero], axis)
    ab = layout.concatenate([layout.expand_dims(r, (axis,)) for r in (upper, d, lower)], axis)
    return L.solve_banded(ab, b, 1, 1)


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from ..core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
