"""The discrete distributions of ``tf_numba.scipy.stats``: each one its standardized
formulas on ``tf_numba.scipy.special``; ``_distribution.Discrete`` adds the rest (``pmf``
0 off the integers, step-function CDFs, NaN for invalid parameters).

>>> from tf_numba.scipy.stats import poisson
>>> poisson.logpmf(2, 3.0)      # log(3**2 exp(-3) / 2)
np.float64(-1.4959226032237258)
"""
import numpy as np

import tf_numba.numpy as tnp

from ... import lax, nn
from ...numpy import _promote as P
from ...ops import special as sp
from .. import special as sc
from ._distribution import INF, Discrete


def _is_count(n):
    """``n`` is a non-negative integer (SciPy's check on ``binom``'s ``n``)."""
    return tnp.logical_and(n >= 0, tnp.floor(n) == n)


class _SciPyQuantiles:
    """``_ppf`` and ``_isf`` as SciPy's own (``discrete_quantile``: its searches for the
    least count, a step function without derivative), for the distributions whose
    quantiles have no closed form."""

    def _ppf(self, q, *shapes):
        return sp.discrete_quantile(q, *shapes, dist=self.name, method="ppf")

    def _isf(self, q, *shapes):
        return sp.discrete_quantile(q, *shapes, dist=self.name, method="isf")


def _log_binom_coefficient(n, k):
    """``log(n choose k) = -log(n + 1) - betaln(n - k + 1, k + 1)``: ``betaln`` keeps its
    digits at large ``n``, where a difference of ``gammaln``s cancels."""
    return -tnp.log1p(n) - sc.betaln(n - k + 1, k + 1)


class bernoulli_gen(Discrete):
    """One trial with success probability ``p``: ``pmf(1) = p``, ``pmf(0) = 1 - p``."""
    name = "bernoulli"
    shapes = (("p", 0.5),)
    support = (0.0, 1.0)
    accuracy = {"logpmf": 1e-15, "pmf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 0.0, "isf": 0.0}

    def _argcheck(self, p):
        return tnp.logical_and(p >= 0, p <= 1)

    def _logpmf(self, k, p):
        return sc.xlogy(k, p) + sc.xlog1py(1 - k, -p)

    def _cdf(self, k, p):
        return tnp.where(k >= 1, 1.0, 1 - p)

    def _sf(self, k, p):
        return tnp.where(k >= 1, 0.0, p)

    def _ppf(self, q, p):
        return tnp.where(q <= 1 - p, 0.0, 1.0)

    def _isf(self, q, p):
        return tnp.where(q >= p, 0.0, 1.0)


class poisson_gen(_SciPyQuantiles, Discrete):
    """The Poisson distribution with mean ``mu``: ``mu**k exp(-mu) / k!``; ``ppf`` and
    ``isf`` are SciPy's (``pdtrik`` and a step back; ``isf(q) = ppf(1 - q)``)."""
    name = "poisson"
    shapes = (("mu", 1.0),)
    support = (0.0, INF)
    accuracy = {"logpmf": 1e-15, "pmf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 0.0, "isf": 0.0}
    notes = ("``isf`` is SciPy's ``ppf(1 - q)``: NaN where ``1 - q`` rounds to 1 "
             "(``q`` below ~1e-17).")

    def _argcheck(self, mu):
        return mu >= 0

    def _logpmf(self, k, mu):
        return sc.xlogy(k, mu) - sc.gammaln(k + 1) - mu

    def _cdf(self, k, mu):
        return sc.gammaincc(k + 1, mu)

    def _sf(self, k, mu):
        return sc.gammainc(k + 1, mu)

    def entropy(self, mu, loc=0):
        """The Shannon entropy ``-sum_k p_k log p_k`` (``loc`` does not change it), as
        ``scipy.stats.poisson.entropy``: summed over a window of ``ENTROPY_TERMS`` counts
        from ``mu - 12 sqrt(mu) - 10`` for ``mu`` below ``ENTROPY_ASYMPTOTIC`` (the rest of
        the mass is below 1e-30; the terms' logs cancel, so the sum is within 1e-13 of
        40-digit sums), beyond by the asymptotic series ``ENTROPY_SERIES`` (within 1e-16);
        NaN for ``mu < 0``; differentiable.

        >>> poisson.entropy(1.0)
        np.float64(1.3048422422562516)
        """
        mu, loc = nn.floats("poisson.entropy", mu, loc)
        direct = mu < ENTROPY_ASYMPTOTIC
        m = tnp.where(direct & (mu >= 0), mu, 1.0)
        start = tnp.maximum(tnp.floor(m - 12 * tnp.sqrt(m) - 10), 0.0)
        k = start[..., None] + np.arange(ENTROPY_TERMS, dtype=P.dtype_of(mu))
        log_p = sc.xlogy(k, m[..., None]) - sc.gammaln(k + 1) - m[..., None]
        mass = log_p > -745                  # counts whose p_k does not underflow to 0
        safe = tnp.where(mass, log_p, 0.0)   # the double where: no 0 * inf
        summed = -tnp.sum(tnp.where(mass, tnp.exp(safe) * safe, 0.0), axis=-1)
        big = tnp.where(direct, ENTROPY_ASYMPTOTIC, mu)
        series = 0.5 * tnp.log(2 * np.pi * np.e * big)
        for n, c in enumerate(ENTROPY_SERIES, 1):
            series = series + c / big ** n
        out = tnp.where(direct, summed, series) + 0 * loc
        return P.scalar_result(tnp.where(mu >= 0, out, np.nan))


# poisson.entropy's window of counts and where its asymptotic series takes over
ENTROPY_TERMS, ENTROPY_ASYMPTOTIC = 400, 200.0
# H(mu) - log(2 pi e mu) / 2 = sum_n c_n mu^-n: -1/12, -1/24, -19/360, -9/80 and three more,
# fitted to 50-digit sums at mu = 400 .. 15000 (the series diverges: these are enough above
# ENTROPY_ASYMPTOTIC, where the next term is below 1e-16)
ENTROPY_SERIES = (-1 / 12, -1 / 24, -19 / 360, -9 / 80, -0.34246031746, -1.36408730189,
                  -6.7367057754)


class geom_gen(Discrete):
    """The number of trials up to the first success: ``(1 - p)**(k - 1) p`` for ``k >= 1``;
    ``ppf`` is SciPy's closed form, ``isf(q)`` SciPy's ``ppf(1 - q)``."""
    name = "geom"
    shapes = (("p", 0.5),)
    support = (1.0, INF)
    accuracy = {"logpmf": 1e-15, "pmf": 1e-13, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 0.0, "isf": 0.0}

    def _argcheck(self, p):
        return tnp.logical_and(p > 0, p <= 1)

    def _logpmf(self, k, p):
        return sc.xlog1py(k - 1, -p) + tnp.log(p)

    def _cdf(self, k, p):
        return -tnp.expm1(k * tnp.log1p(-p))

    def _logcdf(self, k, p):
        return tnp.log(-tnp.expm1(k * tnp.log1p(-p)))

    def _sf(self, k, p):
        return tnp.exp(k * tnp.log1p(-p))

    def _logsf(self, k, p):
        return k * tnp.log1p(-p)

    def _ppf(self, q, p):
        k = tnp.ceil(tnp.log1p(-q) / tnp.log1p(-p))
        # the quotient can round up past the step: step back when cdf(k - 1) reaches q
        return tnp.where(tnp.logical_and(self._cdf(k - 1, p) >= q, k > 0), k - 1, k)

    def _isf(self, q, p):
        return self._ppf(1 - q, p)


class binom_gen(_SciPyQuantiles, Discrete):
    """The number of successes in ``n`` trials (``n`` a non-negative integer); ``ppf``
    and ``isf`` are SciPy's (boost's quantiles)."""
    name = "binom"
    shapes = (("n", 1.0), ("p", 0.5))
    integer_shapes = ("n",)
    accuracy = {"logpmf": 1e-13, "pmf": 1e-12, "cdf": 1e-14, "logcdf": 1e-14, "sf": 1e-15,
                "logsf": 1e-14, "ppf": 0.0, "isf": 0.0}

    def _argcheck(self, n, p):
        return tnp.logical_and(_is_count(n), tnp.logical_and(p >= 0, p <= 1))

    def _support(self, n, p):
        return 0.0, n

    def _logpmf(self, k, n, p):
        return _log_binom_coefficient(n, k) + sc.xlogy(k, p) + sc.xlog1py(n - k, -p)

    def _cdf(self, k, n, p):
        # SciPy's bdtr: I_{1-p}(n - k, k + 1) below n; 1 at k = n (where a would be 0)
        below = k < n
        return tnp.where(below, sc.betainc(tnp.where(below, n - k, 1.0), k + 1, 1 - p), 1.0)

    def _sf(self, k, n, p):
        below = k < n
        return tnp.where(below, sc.betainc(k + 1, tnp.where(below, n - k, 1.0), p), 0.0)


class nbinom_gen(_SciPyQuantiles, Discrete):
    """The number of failures before the ``n``-th success (``n > 0`` real); ``ppf`` and
    ``isf`` are SciPy's (boost's quantiles)."""
    name = "nbinom"
    shapes = (("n", 1.0), ("p", 0.5))
    support = (0.0, INF)
    accuracy = {"logpmf": 1e-15, "pmf": 1e-11, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-13,
                "logsf": 1e-13, "ppf": 0.0, "isf": 0.0}

    def _argcheck(self, n, p):
        return tnp.logical_and(n > 0, tnp.logical_and(p > 0, p <= 1))

    def _logpmf(self, k, n, p):
        return (sc.gammaln(n + k) - sc.gammaln(k + 1) - sc.gammaln(n) + sc.xlogy(n, p)
                + sc.xlog1py(k, -p))

    def _cdf(self, k, n, p):
        return sc.betainc(n, k + 1, p)

    def _sf(self, k, n, p):
        return sc.betainc(k + 1, n, 1 - p)


class betabinom_gen(_SciPyQuantiles, Discrete):
    """The binomial distribution whose ``p`` is ``beta(a, b)``-distributed. ``cdf`` sums
    the pmf from 0 to ``k``, as SciPy, in a ``lax.while_loop`` over the counts (as many
    steps as the largest ``k``), each term from the last by the ratio
    ``pmf(j+1)/pmf(j) = (n-j)(j+a) / ((j+1)(n-j-1+b))`` in log space (no underflow of
    the first terms); ``sf`` is ``1 - cdf`` as SciPy's; ``ppf``/``isf`` are SciPy's
    (bisection on its cdf)."""
    name = "betabinom"
    shapes = (("n", 1.0), ("a", 1.0), ("b", 1.0))
    integer_shapes = ("n",)
    accuracy = {"logpmf": 1e-15, "pmf": 1e-15, "cdf": 1e-13, "logcdf": 1e-13, "sf": 1e-11,
                "logsf": 1e-11, "ppf": 0.0, "isf": 0.0}
    notes = ("``sf`` is ``1 - cdf``, as SciPy's (it cancels where ``cdf`` nears 1); "
             "``cdf`` takes one loop step per count up to the largest ``k`` and differs "
             "from SciPy's by ~1e-11 relative at ``n = 1e4`` (both round log-space terms "
             "of size ``log C(n, k)``).")

    def _argcheck(self, n, a, b):
        return tnp.logical_and(_is_count(n), tnp.logical_and(a > 0, b > 0))

    def _support(self, n, a, b):
        return 0.0, n

    def _logpmf(self, k, n, a, b):
        return (_log_binom_coefficient(n, k) + sc.betaln(k + a, n - k + b) - sc.betaln(a, b))

    def _cdf(self, k, n, a, b):
        log_first = sc.betaln(a, n + b) - sc.betaln(a, b) + k * 0.0    # logpmf(0)
        last = tnp.max(k)

        def step(carry):
            j, total, log_term = carry
            total = total + tnp.where(j <= k, tnp.exp(log_term), 0.0)
            # past the last count the ratio would be 0 (or negative): 1 instead, so the
            # log and its derivative stay finite where the sum no longer looks
            more = j < n
            js = tnp.where(more, j, 0.0)
            ratio = (n - js) * (js + a) / ((js + 1) * (n - js - 1 + b))
            return j + 1, total, log_term + tnp.log(tnp.where(more, ratio, 1.0))

        zero = tnp.zeros((), log_first.dtype)
        _, total, _ = lax.while_loop(lambda c: c[0] <= last, step,
                                     (zero, log_first * 0.0, log_first))
        return tnp.where(k >= n, 1.0, total)     # the whole mass, as SciPy, not its sum


bernoulli = bernoulli_gen()
poisson = poisson_gen()
geom = geom_gen()
binom = binom_gen()
nbinom = nbinom_gen()
betabinom = betabinom_gen()
