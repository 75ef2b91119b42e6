"""``gaussian_kde``: a Gaussian kernel density estimate, as ``scipy.stats.gaussian_kde``,
differentiable in the points, the dataset and the weights (the bandwidth rules included).

>>> import numpy as np
>>> from tf_numba.scipy.stats import gaussian_kde
>>> kde = gaussian_kde(np.array([-1.0, 0.0, 1.0]), bw_method=1.0)
>>> kde.evaluate(np.array([0.0]))
array([0.29429458])
"""
import math

import numpy as np

import tf_numba.numpy as tnp

from ... import nn
from ...core import dtypes
from ...errors import ArgumentError, ShapeError
from ...numpy import _promote as P
from .. import linalg as sl

LOG_2PI = math.log(2 * math.pi)


def _shape(x):
    return tuple(P.shape_of(x))


class gaussian_kde:
    """A kernel density estimate with Gaussian kernels on ``dataset`` (``(d, n)``: ``n``
    points of dimension ``d``; a 1-D dataset is ``d = 1``), optionally ``weights``.

    The kernel covariance is the data's (weighted) covariance times ``factor**2``, with
    ``factor`` from ``bw_method``: 'scott' (the default, ``neff**(-1/(d+4))``),
    'silverman' (``(neff (d+2)/4)**(-1/(d+4))``), a number, or a callable taking the
    estimate. ``dataset`` and ``weights`` may be traced: the estimate is then a function
    of them (gradients of a held-out log-likelihood, for instance).

    >>> kde = gaussian_kde(np.array([-1.0, 0.0, 1.0]), bw_method=1.0)
    >>> kde.logpdf(np.array([0.0]))
    array([-1.22317405])
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        operands = [dataset] if weights is None else [dataset, weights]
        xs = [P.asarray(v) for v in operands]
        dt = P.result_type(*xs)
        dt = dt if dtypes.is_inexact(dt) else dtypes.float64
        self.dataset = tnp.atleast_2d(P.cast(xs[0], dt))
        self.d, self.n = _shape(self.dataset)
        if self.n < 2 or self.d > self.n:
            raise ShapeError(f"dataset {_shape(self.dataset)} needs more points than "
                             "dimensions (and at least 2)", op="gaussian_kde")
        if weights is None:
            self.weights = tnp.full((self.n,), 1.0 / self.n, dt)
        else:
            w = P.cast(xs[1], dt)
            if _shape(w) != (self.n,):
                raise ShapeError(f"weights {_shape(w)} must be a vector of one entry per "
                                 f"point ({self.n})", op="gaussian_kde")
            self.weights = w / tnp.sum(w)
        self.neff = 1 / tnp.sum(self.weights * self.weights)
        self.set_bandwidth(bw_method)

    def scotts_factor(self):
        """``neff**(-1/(d+4))``."""
        return self.neff ** (-1.0 / (self.d + 4))

    def silverman_factor(self):
        """``(neff (d+2)/4)**(-1/(d+4))``."""
        return (self.neff * (self.d + 2.0) / 4.0) ** (-1.0 / (self.d + 4))

    def set_bandwidth(self, bw_method=None):
        """Recompute the kernel covariance for ``bw_method`` (as SciPy's)."""
        if bw_method is None or bw_method == "scott":
            self.covariance_factor = self.scotts_factor
        elif bw_method == "silverman":
            self.covariance_factor = self.silverman_factor
        elif callable(bw_method):
            self.covariance_factor = lambda: bw_method(self)
        elif np.isscalar(bw_method) and not isinstance(bw_method, str):
            self.covariance_factor = lambda: bw_method
        else:
            raise ArgumentError("bw_method should be 'scott', 'silverman', a scalar or a "
                                "callable", op="gaussian_kde")
        self.factor = self.covariance_factor()
        mean = tnp.sum(self.dataset * self.weights, axis=1, keepdims=True)
        dev = self.dataset - mean
        # numpy.cov with aweights summing to 1: normalized by 1 - sum(w**2)
        data_cov = (dev * self.weights) @ dev.T / (1 - tnp.sum(self.weights * self.weights))
        self.covariance = data_cov * self.factor ** 2
        self.cho_cov = sl.cholesky(self.covariance, lower=True)
        self.log_det = 2 * tnp.sum(tnp.log(tnp.diagonal(self.cho_cov)))

    def _points(self, points):
        x = tnp.atleast_2d(P.cast(P.asarray(points), P.dtype_of(self.dataset)))
        d, m = _shape(x)
        if d != self.d:
            if d == 1 and m == self.d:
                return tnp.reshape(x, (self.d, 1))
            raise ShapeError(f"points {_shape(x)} have dimension {d}, the dataset "
                             f"{self.d}", op="gaussian_kde")
        return x

    def logpdf(self, points):
        """``log`` of the estimated density at ``points`` (``(d, m)``), a vector of ``m``:
        a ``logsumexp`` over the kernels, accurate far from the data."""
        x = self._points(points)
        whiten = lambda v: sl.solve_triangular(self.cho_cov, v, lower=True)  # noqa: E731
        zx, zd = whiten(x), whiten(self.dataset)
        diff = zx[:, :, None] - zd[:, None, :]
        energy = tnp.sum(diff * diff, axis=0) * 0.5
        with np.errstate(all="ignore"):
            log_w = tnp.log(self.weights)
        return (nn.logsumexp(log_w - energy, axis=1)
                - 0.5 * (self.log_det + self.d * LOG_2PI))

    def evaluate(self, points):
        """The estimated density at ``points``: ``exp(logpdf)``."""
        return tnp.exp(self.logpdf(points))

    __call__ = evaluate
    pdf = evaluate
