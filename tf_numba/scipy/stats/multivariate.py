"""The multivariate distributions of ``tf_numba.scipy.stats`` (``multivariate_normal``,
``dirichlet``, ``multinomial``), with SciPy's argument conventions.

>>> import numpy as np
>>> from tf_numba.scipy.stats import multivariate_normal
>>> multivariate_normal.logpdf(np.zeros(2), cov=np.eye(2))    # -log(2 pi)
np.float64(-1.8378770664093453)
"""
import math

import numpy as np

import tf_numba.numpy as tnp

from ...core import dtypes
from ...custom_derivatives import SymbolicZero, custom_vjp
from ...errors import ShapeError
from ...ext import linalg as xl
from ...numpy import _promote as P
from ...ops import elementwise as ew
from .. import linalg as sl
from .. import special as sc
from ._distribution import INF, NAN

LOG_2PI = math.log(2 * math.pi)
# SciPy's _eigvalsh_to_eps: eigenvalues below factor * eps * max|eigenvalue| count as zero
SINGULAR_FACTOR = {np.dtype(np.float32): 1e3, np.dtype(np.float64): 1e6}


def _shape(x):
    return tuple(P.shape_of(x))


def _same_float(*operands):
    """The operands in one real float dtype (NumPy promotion; ints become float64), not
    broadcast: SciPy's multivariate functions give their operands different ranks."""
    xs = [P.asarray(v) for v in operands]
    dt = P.result_type(*xs)
    dt = dt if dtypes.is_inexact(dt) else dtypes.float64
    return [np.asarray(v, dt) if P.is_weak(v) else P.cast(v, dt) for v in xs]


def _squeeze(out):
    """SciPy's ``_squeeze_output``: every length-1 axis dropped, rank 0 as a scalar."""
    axes = tuple(i for i, n in enumerate(_shape(out)) if n == 1)
    return P.scalar_result(tnp.squeeze(out, axis=axes) if axes else out)


class multivariate_normal_gen:
    """The multivariate normal distribution, as ``scipy.stats.multivariate_normal``.

    ``mean`` is a vector (or scalar) and ``cov`` a matrix, a vector (its diagonal) or a
    scalar (times the identity), as SciPy; ``x`` holds points along its last axis (for
    ``dim == 1`` a 1-D ``x`` is a list of points), and the result is squeezed as SciPy's.
    Batches (as ``jax.scipy.stats``): ``mean`` of rank 2 or more or ``cov`` of rank 3 or
    more broadcast with ``x``'s leading axes, and nothing is squeezed.

    ``allow_singular=False`` factors ``cov`` by Cholesky (differentiable in ``x``,
    ``mean`` and ``cov``; the factorization reads ``cov``'s lower triangle). For one
    covariance matrix, reverse mode has its own rule: the gradient in ``cov`` is
    ``(sum alpha alpha^T - K^-1) / 2`` (``alpha = K^-1 (x - mean)``), ``K^-1`` from the
    factor by LAPACK ``potri``, not reverse mode through the factorization. With
    ``allow_singular=True`` ``cov`` may be singular, as SciPy: the pseudo-determinant
    and pseudo-inverse from ``eigh`` with SciPy's cutoff, ``-inf`` off the support; a
    matrix that is not positive semidefinite gives NaN (SciPy raises). Its derivative in
    ``cov`` needs distinct eigenvalues (``eigh``'s).

    >>> multivariate_normal.logpdf(np.array([1.0, 0.0]), cov=np.diag([1.0, 0.0]),
    ...                            allow_singular=True)                 # N(0, 1) at 1
    np.float64(-1.4189385332046727)
    """
    name = "multivariate_normal"
    methods = ("logpdf", "pdf")
    accuracy = {"logpdf": 1e-12, "pdf": 1e-12}
    no_derivative = {}
    notes = ("``allow_singular=True``: derivatives in ``cov`` need distinct eigenvalues; "
             "a covariance that is not positive semidefinite gives NaN (SciPy raises).")

    def logpdf(self, x, mean=None, cov=1, allow_singular=False):
        """``log`` of the density at ``x`` (points along the last axis)."""
        return self._logpdf("multivariate_normal.logpdf", x, mean, cov, allow_singular)

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        """The density at ``x``: ``exp(logpdf)``."""
        out = self._logpdf("multivariate_normal.pdf", x, mean, cov, allow_singular)
        return P.scalar_result(tnp.exp(out))

    def _logpdf(self, name, x, mean, cov, allow_singular):
        x, mean, cov, batched = self._parameters(name, x, mean, cov)
        dev = x - mean
        with np.errstate(all="ignore"):
            if allow_singular:
                out = _logpdf_psd(dev, cov)
            else:
                out = _logpdf_cholesky(dev, cov)
        return P.scalar_result(out) if batched else _squeeze(out)

    def _parameters(self, name, x, mean, cov):
        """SciPy's ``_process_parameters`` and ``_process_quantiles``: one dtype, ``mean`` a
        vector of ``dim``, ``cov`` a ``dim x dim`` matrix, ``x`` points along its last axis."""
        x, cov, *rest = _same_float(x, cov, *([] if mean is None else [mean]))
        mean = rest[0] if rest else None
        dt = P.dtype_of(x)
        mean_rank = 0 if mean is None else len(_shape(mean))
        batched = mean_rank > 1 or len(_shape(cov)) > 2
        if batched:
            dim = _shape(cov)[-1] if len(_shape(cov)) > 2 else _shape(mean)[-1]
        elif mean is not None:
            dim = max(1, int(np.prod(_shape(mean))))
        else:
            dim = 1 if len(_shape(cov)) < 2 else _shape(cov)[0]
        if mean is None:
            mean = tnp.zeros((dim,), dt)
        elif mean_rank == 0:
            mean = tnp.broadcast_to(mean, (dim,))
        if len(_shape(cov)) == 0:
            cov = cov * tnp.eye(dim, dtype=dt)
        elif len(_shape(cov)) == 1:
            cov = _diag(name, cov, dim)
        if _shape(mean)[-1] != dim or _shape(cov)[-2:] != (dim, dim):
            raise ShapeError(f"mean {_shape(mean)} and cov {_shape(cov)} must describe one "
                             f"dimension ({dim}): a mean vector of length {dim} and a "
                             f"{dim} x {dim} covariance", op=name)
        if not batched:
            rank = len(_shape(x))
            if rank == 0:
                x = tnp.reshape(x, (1, 1))
            elif rank == 1:
                x = tnp.reshape(x, (-1, 1) if dim == 1 else (1, -1))
        if _shape(x)[-1] != dim:
            raise ShapeError(f"x {_shape(x)} must hold points of dimension {dim} along its "
                             f"last axis", op=name)
        P.broadcast_shapes_of(name, x, mean, cov[..., 0])
        return x, mean, cov, batched


def _diag(name, v, dim):
    if _shape(v) != (dim,):
        raise ShapeError(f"a 1-D cov holds the diagonal: {dim} entries, got {_shape(v)}",
                         op=name)
    return tnp.eye(dim, dtype=P.dtype_of(v)) * v


def _whitened_norm2(low, dev):
    """``|low^-1 dev|**2`` over the last axis, ``low`` lower triangular (batched)."""
    k = _shape(dev)[-1]
    if len(_shape(low)) == 2:
        y = sl.solve_triangular(low, tnp.reshape(dev, (-1, k)).T, lower=True)
        return tnp.reshape(tnp.sum(y * y, axis=0), _shape(dev)[:-1])
    batch = P.broadcast_shapes_of("multivariate_normal", dev[..., 0], low[..., 0, 0])
    y = sl.solve_triangular(tnp.broadcast_to(low, batch + (k, k)),
                            tnp.broadcast_to(dev, batch + (k,)), lower=True)
    return tnp.sum(y * y, axis=-1)


def _logpdf_cholesky(dev, cov):
    if len(_shape(cov)) == 2:
        return _logpdf_one_cov(dev, cov)
    low = tnp.linalg.cholesky(cov)
    return _logpdf_from_factor(dev, low, _whitened_norm2(low, dev))


def _logpdf_from_factor(dev, low, maha):
    log_det = 2 * tnp.sum(tnp.log(tnp.diagonal(low, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * (_shape(dev)[-1] * LOG_2PI + log_det + maha)


def _whitened_points(dev, low):
    """``low^-1 dev^T``: the points (columns) whitened, for one ``k x k`` factor."""
    return sl.solve_triangular(low, tnp.reshape(dev, (-1, _shape(dev)[-1])).T, lower=True)


@custom_vjp
def _logpdf_one_cov(dev, cov):
    """The log density at the points ``dev`` (last axis) for one covariance matrix, with
    a reverse-mode rule of its own (below)."""
    low = tnp.linalg.cholesky(cov)
    y = _whitened_points(dev, low)
    return _logpdf_from_factor(dev, low, tnp.reshape(tnp.sum(y * y, axis=0), _shape(dev)[:-1]))


def _logpdf_one_cov_fwd(dev, cov):
    low = tnp.linalg.cholesky(cov.value)
    y = _whitened_points(dev.value, low)
    maha = tnp.reshape(tnp.sum(y * y, axis=0), _shape(dev.value)[:-1])
    return _logpdf_from_factor(dev.value, low, maha), (low, y, cov.perturbed)


def _logpdf_one_cov_bwd(res, g):
    """With ``alpha = K^-1 dev`` per point and weights ``g``: ``d/d dev = -g alpha`` and
    ``d/dK = (sum g alpha alpha^T - (sum g) K^-1) / 2`` (Rasmussen & Williams eq. 5.9),
    ``K^-1`` by ``cho_inverse`` (potri: a third of ``cho_solve(L, I)``, where reverse mode
    through the Cholesky factor costs two ``n x n`` triangular solves and a product)."""
    low, y, cov_wanted = res
    if isinstance(g, SymbolicZero):
        return None, None
    k = _shape(low)[-1]
    alpha = sl.solve_triangular(low, y, trans="T", lower=True)       # (k, points)
    weights = tnp.reshape(g, (-1,))
    weighted = alpha * weights
    ct_dev = tnp.reshape(-weighted.T, _shape(g) + (k,))
    if not cov_wanted:
        return ct_dev, None
    w = 0.5 * (tnp.matmul(weighted, alpha.T) - tnp.sum(weights) * xl.cho_inverse(low))
    # cholesky reads the lower triangle: K's (i, j) and (j, i) are both its (i, j) there
    return ct_dev, tnp.tril(w + w.T) - w * tnp.eye(k, dtype=P.dtype_of(w))


_logpdf_one_cov.defvjp(_logpdf_one_cov_fwd, _logpdf_one_cov_bwd, symbolic_zeros=True)


def _logpdf_psd(dev, cov):
    """SciPy's ``_PSD``: eigenvalues at or below ``eps`` are zero; the pseudo-inverse and
    pseudo-determinant use the others, and points with a residual of at least
    ``1e3 eps`` in the null space are off the support."""
    s, u = tnp.linalg.eigh(cov)
    eps = SINGULAR_FACTOR[np.dtype(P.dtype_of(s))] * np.finfo(P.dtype_of(s)).eps * \
        tnp.max(tnp.abs(s), axis=-1, keepdims=True)
    keep = s > eps
    safe = tnp.where(keep, s, 1.0)
    proj = tnp.matmul(dev[..., None, :], u)[..., 0, :]      # dev in the eigenbasis
    p2 = proj * proj
    maha = tnp.sum(tnp.where(keep, p2 / safe, 0.0), axis=-1)
    log_pdet = tnp.sum(tnp.where(keep, tnp.log(safe), 0.0), axis=-1)
    rank = tnp.sum(tnp.astype(keep, P.dtype_of(s)), axis=-1)
    out = -0.5 * (rank * LOG_2PI + log_pdet + maha)
    residual = tnp.sqrt(tnp.sum(tnp.where(keep, 0.0, p2), axis=-1))
    out = tnp.where(residual < 1e3 * eps[..., 0], out, -INF)
    return tnp.where(tnp.min(s, axis=-1) < -eps[..., 0], NAN, out)


class dirichlet_gen:
    """The Dirichlet distribution on the simplex, as ``scipy.stats.dirichlet``: ``x`` holds
    the ``k`` components along its first axis (or ``k - 1``, the last being ``1 - sum``),
    ``alpha`` is a vector of ``k``. Points off the simplex (an entry below 0, or a sum
    farther than ``1e-9`` from 1, ``1e-5`` in float32) give ``-inf`` (as ``jax``; SciPy
    raises), ``alpha <= 0`` gives NaN (SciPy raises).

    >>> dirichlet.logpdf(np.array([0.25, 0.75]), np.array([1.0, 1.0]))    # log gamma(2)
    np.float64(0.0)
    """
    name = "dirichlet"
    methods = ("logpdf", "pdf")
    accuracy = {"logpdf": 1e-14, "pdf": 1e-14}
    no_derivative = {}
    notes = "Points off the simplex give ``-inf`` and ``alpha <= 0`` NaN (SciPy raises)."

    def logpdf(self, x, alpha):
        """``log`` of the density at ``x`` (components along axis 0)."""
        return P.scalar_result(self._logpdf("dirichlet.logpdf", x, alpha))

    def pdf(self, x, alpha):
        """The density at ``x``: ``exp(logpdf)``."""
        return P.scalar_result(tnp.exp(self._logpdf("dirichlet.pdf", x, alpha)))

    def _logpdf(self, name, x, alpha):
        x, alpha = _same_float(x, alpha)
        k = _shape(alpha)[0] if len(_shape(alpha)) == 1 else None
        if k is None or not _shape(x) or _shape(x)[0] not in (k, k - 1):
            raise ShapeError(f"alpha must be a vector of k entries and x hold k or k - 1 "
                             f"components along its first axis; got alpha {_shape(alpha)}, "
                             f"x {_shape(x)}", op=name)
        if _shape(x)[0] == k - 1:
            x = tnp.concatenate([x, 1 - tnp.sum(x, axis=0, keepdims=True)], axis=0)
        a = tnp.reshape(alpha, (k,) + (1,) * (len(_shape(x)) - 1))
        valid = tnp.all(alpha > 0)
        a = tnp.where(valid, a, 1.0)
        tol = 1e-5 if P.dtype_of(x) == np.float32 else 1e-9
        on = tnp.logical_and(tnp.all(x >= 0, axis=0),
                             tnp.abs(tnp.sum(x, axis=0) - 1) <= tol)
        xs = tnp.where(on, x, 1.0 / k)
        with np.errstate(all="ignore"):
            out = (sc.gammaln(tnp.sum(a, axis=0)) - tnp.sum(sc.gammaln(a), axis=0)
                   + tnp.sum(sc.xlogy(a - 1, xs), axis=0))
        return tnp.where(valid, tnp.where(on, out, -INF), NAN)


class multinomial_gen:
    """The multinomial distribution, as ``scipy.stats.multinomial``: ``x`` counts along
    its last axis, ``n`` trials, ``p`` probabilities along its last axis (broadcast).
    ``x`` that is not a vector of non-negative integers summing to ``n`` gives ``-inf``;
    ``n`` not a non-negative integer or ``p`` outside ``[0, 1]`` gives NaN; the derivative
    in the counts ``x`` and ``n`` is zero. ``p`` is used
    as given (SciPy 1.17 replaces its last entry by ``1 - sum`` of the others and warns;
    SciPy 1.18 gives NaN where the sum is not 1): derivatives flow into every entry.

    >>> multinomial.logpmf(np.array([1.0, 1.0]), 2, np.array([0.5, 0.5]))   # log(1/2)
    np.float64(-0.6931471805599453)
    """
    name = "multinomial"
    methods = ("logpmf", "pmf")
    accuracy = {"logpmf": 1e-13, "pmf": 1e-13}
    no_derivative = {"logpmf": ("x", "n"), "pmf": ("x", "n")}
    notes = "``p`` is used as given (SciPy 1.17 adjusts its last entry)."

    def logpmf(self, x, n, p):
        """``log`` of the probability of the counts ``x``."""
        return P.scalar_result(self._logpmf("multinomial.logpmf", x, n, p))

    def pmf(self, x, n, p):
        """The probability of the counts ``x``: ``exp(logpmf)``."""
        return P.scalar_result(tnp.exp(self._logpmf("multinomial.pmf", x, n, p)))

    def _logpmf(self, name, x, n, p):
        x, p, n = _same_float(x, p, n)
        x, n = ew.stop_gradient(x), ew.stop_gradient(n)    # counts: no derivative
        if not _shape(x) or not _shape(p):
            raise ShapeError(f"x {_shape(x)} and p {_shape(p)} must hold their k entries "
                             f"along the last axis", op=name)
        P.broadcast_shapes_of(name, x, p, n[..., None] if _shape(n) else n)
        valid = tnp.logical_and(tnp.all(tnp.logical_and(p >= 0, p <= 1), axis=-1),
                                tnp.logical_and(n >= 0, tnp.floor(n) == n))
        counts = tnp.logical_and(tnp.all(tnp.logical_and(x >= 0, tnp.floor(x) == x), axis=-1),
                                 tnp.sum(x, axis=-1) == n)
        with np.errstate(all="ignore"):
            out = (sc.gammaln(n + 1)
                   + tnp.sum(sc.xlogy(x, p) - sc.gammaln(x + 1), axis=-1))
        return tnp.where(valid, tnp.where(counts, out, -INF), NAN)


multivariate_normal = multivariate_normal_gen()
dirichlet = dirichlet_gen()
multinomial = multinomial_gen()
