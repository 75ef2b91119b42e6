"""The continuous distributions of ``tf_numba.scipy.stats``: each one its standardized
formulas (SciPy's, or a more accurate form where SciPy's loses digits, as noted), on
``tf_numba.scipy.special`` and primitives; ``_distribution.Continuous`` adds the rest.

>>> from tf_numba.scipy.stats import norm
>>> norm.logpdf(1.0, loc=1.0, scale=2.0)
np.float64(-1.612085713764618)
"""
import math

import tf_numba.numpy as tnp

from ... import nn
from .. import special as sc
from ._distribution import INF, Continuous

LOG_2 = math.log(2.0)
LOG_PI = math.log(math.pi)
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _norm_logpdf(z):
    return z * z * -0.5 - LOG_SQRT_2PI


def _log_diff(log_p, log_q):
    """``log(exp(log_p) - exp(log_q))`` for ``log_p >= log_q``."""
    return log_p + tnp.log(-tnp.expm1(log_q - log_p))


def _log_gauss_mass(a, b):
    """``log(ndtr(b) - ndtr(a))`` for ``a <= b``, as SciPy's ``_log_gauss_mass``: the
    difference of log CDFs in the left tail, mirrored in the right, ``log1p`` of the two
    tails' masses when the interval holds 0."""
    left, right = b <= 0, a > 0
    central = tnp.logical_not(tnp.logical_or(left, right))
    # each case evaluated on its own bounds only, so none sees the others' infinities
    la, lb = tnp.where(left, a, -1.0), tnp.where(left, b, 0.0)
    ra, rb = tnp.where(right, a, 0.0), tnp.where(right, b, 1.0)
    ca, cb = tnp.where(central, a, -1.0), tnp.where(central, b, 1.0)
    return tnp.where(
        left, _log_diff(sc.log_ndtr(lb), sc.log_ndtr(la)),
        tnp.where(right, _log_diff(sc.log_ndtr(-ra), sc.log_ndtr(-rb)),
                  tnp.log1p(-sc.ndtr(ca) - sc.ndtr(-cb))))


def _ndtri_exp(y):
    """``ndtri(exp(y))``, through ``-ndtri(-expm1(y))`` above ``log(1/2)`` where ``exp(y)``
    nears 1. Underflows (to ``-inf``) below ``y = -745``."""
    low = y < -LOG_2
    return tnp.where(low, sc.ndtri(tnp.exp(tnp.where(low, y, -1.0))),
                     -sc.ndtri(-tnp.expm1(tnp.where(low, -0.5, y))))


def _log1mexp(x):
    """``log(1 - exp(x))`` for ``x < 0``, accurate near 0 and far below (Maechler 2012)."""
    near = x > -LOG_2
    return tnp.where(near, tnp.log(-tnp.expm1(tnp.where(near, x, -1.0))),
                     tnp.log1p(-tnp.exp(tnp.where(near, -1.0, x))))


def _log_gamma_ratio_half(a):
    """``log(gamma(a + 1/2) / gamma(a)) - log(a) / 2``: ``gammaln`` differences below
    ``a = 100``, the asymptotic series above (the differences cancel ~``log a`` digits
    there; the series' first omitted term is below ``1e-18``)."""
    big = a >= 100
    ab, asmall = tnp.where(big, a, 100.0), tnp.where(big, 1.0, a)
    inv = 1 / ab
    inv2 = inv * inv
    series = inv * (-1 / 8 + inv2 * (1 / 192 + inv2 * (1 / 640 - inv2 * (17 / 14336))))
    exact = sc.gammaln(asmall + 0.5) - sc.gammaln(asmall) - 0.5 * tnp.log(asmall)
    return tnp.where(big, series, exact)


class norm_gen(Continuous):
    """The normal distribution: ``exp(-z**2/2) / sqrt(2 pi)``."""
    name = "norm"
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-14, "sf": 1e-15, "logsf": 1e-14,
                "ppf": 1e-15, "isf": 1e-15}

    def _logpdf(self, z):
        return _norm_logpdf(z)

    def _cdf(self, z):
        return sc.ndtr(z)

    def _logcdf(self, z):
        return sc.log_ndtr(z)

    def _sf(self, z):
        return sc.ndtr(-z)

    def _logsf(self, z):
        return sc.log_ndtr(-z)

    def _ppf(self, q):
        return sc.ndtri(q)

    def _isf(self, q):
        return -sc.ndtri(q)


class expon_gen(Continuous):
    """The exponential distribution: ``exp(-z)`` for ``z >= 0``."""
    name = "expon"
    support = (0.0, INF)
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15, "logsf": 1e-15,
                "ppf": 1e-15, "isf": 1e-15}

    def _logpdf(self, z):
        return -z

    def _cdf(self, z):
        return -tnp.expm1(-z)

    def _logcdf(self, z):
        return _log1mexp(-z)

    def _sf(self, z):
        return tnp.exp(-z)

    def _logsf(self, z):
        return -z

    def _ppf(self, q):
        return -tnp.log1p(-q)

    def _isf(self, q):
        return -tnp.log(q)


class laplace_gen(Continuous):
    """The Laplace distribution: ``exp(-|z|) / 2``. ``logcdf`` and ``logsf`` are computed
    in log space (SciPy takes the log of ``cdf``, ``-inf`` beyond ``|z| = 745``)."""
    name = "laplace"
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15, "logsf": 1e-15,
                "ppf": 1e-15, "isf": 1e-15}

    def _logpdf(self, z):
        return -tnp.abs(z) - LOG_2

    def _cdf(self, z):
        half = tnp.exp(-tnp.abs(z)) * 0.5   # never overflows, whichever side z is on
        return tnp.where(z < 0, half, 1 - half)

    def _logcdf(self, z):
        a = tnp.abs(z)
        return tnp.where(z < 0, -a - LOG_2, tnp.log1p(tnp.exp(-a) * -0.5))

    def _sf(self, z):
        return self._cdf(-z)

    def _logsf(self, z):
        return self._logcdf(-z)

    def _ppf(self, q):
        return tnp.where(q > 0.5, -tnp.log(2 - 2 * q), tnp.log(2 * q))

    def _isf(self, q):
        return -self._ppf(q)


class logistic_gen(Continuous):
    """The logistic distribution: ``exp(-z) / (1 + exp(-z))**2``."""
    name = "logistic"
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15, "logsf": 1e-15,
                "ppf": 1e-14, "isf": 1e-14}

    def _logpdf(self, z):
        a = tnp.abs(z)
        return -a - 2 * tnp.log1p(tnp.exp(-a))

    def _cdf(self, z):
        return sc.expit(z)

    def _logcdf(self, z):
        return nn.log_sigmoid(z)

    def _sf(self, z):
        return sc.expit(-z)

    def _logsf(self, z):
        return nn.log_sigmoid(-z)

    def _ppf(self, q):
        return sc.logit(q)

    def _isf(self, q):
        return -sc.logit(q)


class cauchy_gen(Continuous):
    """The Cauchy distribution: ``1 / (pi (1 + z**2))``. ``logpdf`` holds for ``|z|`` up to
    the float maximum (``2 log|z| + log1p(1/z**2)`` beyond 1, where ``z**2`` could
    overflow); ``ppf`` uses ``-cot(pi q)`` in the tails (SciPy's tangent loses relative
    accuracy there)."""
    name = "cauchy"
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15, "logsf": 1e-15,
                "ppf": 1e-14, "isf": 1e-14}

    def _logpdf(self, z):
        a = tnp.abs(z)
        big = a > 1
        ab, asmall = tnp.where(big, a, 1.0), tnp.where(big, 0.0, a)
        return -LOG_PI - tnp.where(big, 2 * tnp.log(ab) + tnp.log1p(1 / (ab * ab)),
                                   tnp.log1p(asmall * asmall))

    def _cdf(self, z):
        return tnp.arctan2(1.0, -z) / math.pi

    def _sf(self, z):
        return tnp.arctan2(1.0, z) / math.pi

    def _ppf(self, q):
        centre = tnp.abs(q - 0.5) < 0.25
        qt = tnp.where(centre, 0.25, q)
        tail = tnp.where(qt < 0.5, -1 / tnp.tan(math.pi * qt), 1 / tnp.tan(math.pi * (1 - qt)))
        return tnp.where(centre, tnp.tan(math.pi * (tnp.where(centre, q, 0.5) - 0.5)), tail)

    def _isf(self, q):
        return -self._ppf(q)


class uniform_gen(Continuous):
    """The uniform distribution on ``[loc, loc + scale]``."""
    name = "uniform"
    support = (0.0, 1.0)
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15, "logsf": 1e-15,
                "ppf": 1e-15, "isf": 1e-15}

    def _logpdf(self, z):
        return z * 0.0

    def _cdf(self, z):
        return z

    def _sf(self, z):
        return 1 - z

    def _ppf(self, q):
        return q

    def _isf(self, q):
        return 1 - q


class pareto_gen(Continuous):
    """The Pareto distribution: ``b / z**(b + 1)`` for ``z >= 1``, ``b > 0``."""
    name = "pareto"
    shapes = (("b", 1.0),)
    support = (1.0, INF)
    accuracy = {"logpdf": 1e-15, "cdf": 1e-14, "logcdf": 1e-14, "sf": 1e-14, "logsf": 1e-15,
                "ppf": 1e-14, "isf": 1e-14}

    def _argcheck(self, b):
        return b > 0

    def _logpdf(self, z, b):
        return tnp.log(b) - (b + 1) * tnp.log(z)

    def _cdf(self, z, b):
        return -tnp.expm1(-b * tnp.log(z))

    def _logcdf(self, z, b):
        return _log1mexp(-b * tnp.log(z))

    def _sf(self, z, b):
        return tnp.exp(-b * tnp.log(z))

    def _logsf(self, z, b):
        return -b * tnp.log(z)

    def _ppf(self, q, b):
        return tnp.exp(-tnp.log1p(-q) / b)

    def _isf(self, q, b):
        return tnp.exp(-tnp.log(q) / b)


class gumbel_r_gen(Continuous):
    """The right-skewed Gumbel distribution: ``exp(-(z + exp(-z)))``."""
    name = "gumbel_r"
    accuracy = {"logpdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15, "logsf": 1e-14,
                "ppf": 1e-14, "isf": 1e-14}

    def _logpdf(self, z):
        return -z - tnp.exp(-z)

    def _cdf(self, z):
        return tnp.exp(-tnp.exp(-z))

    def _logcdf(self, z):
        return -tnp.exp(-z)

    def _sf(self, z):
        return -tnp.expm1(-tnp.exp(-z))

    def _logsf(self, z):
        return _log1mexp(-tnp.exp(-z))

    def _ppf(self, q):
        return -tnp.log(-tnp.log(q))

    def _isf(self, q):
        return -tnp.log(-tnp.log1p(-q))


class gumbel_l_gen(Continuous):
    """The left-skewed Gumbel distribution: ``exp(z - exp(z))``."""
    name = "gumbel_l"
    accuracy = gumbel_r_gen.accuracy

    def _logpdf(self, z):
        return z - tnp.exp(z)

    def _cdf(self, z):
        return -tnp.expm1(-tnp.exp(z))

    def _logcdf(self, z):
        return _log1mexp(-tnp.exp(z))

    def _sf(self, z):
        return tnp.exp(-tnp.exp(z))

    def _logsf(self, z):
        return -tnp.exp(z)

    def _ppf(self, q):
        return tnp.log(-tnp.log1p(-q))

    def _isf(self, q):
        return tnp.log(-tnp.log(q))


class lognorm_gen(Continuous):
    """The log-normal distribution: ``log(z)`` is normal with standard deviation ``s``."""
    name = "lognorm"
    shapes = (("s", 1.0),)
    support = (0.0, INF)
    accuracy = {"logpdf": 1e-14, "cdf": 1e-14, "logcdf": 1e-14, "sf": 1e-14, "logsf": 1e-14,
                "ppf": 1e-14, "isf": 1e-14}

    def _argcheck(self, s):
        return s > 0

    def _logpdf(self, z, s):
        pos = z > 0   # the density is 0 at z = 0 (log z = -inf), not -inf + inf
        lz = tnp.log(tnp.where(pos, z, 1.0))
        u = lz / s
        return tnp.where(pos, -0.5 * u * u - lz - tnp.log(s) - LOG_SQRT_2PI, -INF)

    def _cdf(self, z, s):
        return sc.ndtr(tnp.log(z) / s)

    def _logcdf(self, z, s):
        return sc.log_ndtr(tnp.log(z) / s)

    def _sf(self, z, s):
        return sc.ndtr(-tnp.log(z) / s)

    def _logsf(self, z, s):
        return sc.log_ndtr(-tnp.log(z) / s)

    def _ppf(self, q, s):
        return tnp.exp(s * sc.ndtri(q))

    def _isf(self, q, s):
        return tnp.exp(-s * sc.ndtri(q))


class truncnorm_gen(Continuous):
    """The normal distribution truncated to ``[a, b]`` (in standard units), as SciPy's:
    the interval's mass in log space (``_log_gauss_mass``), ``logcdf`` and ``logsf`` each
    from the other where it nears 0. ``ppf`` inverts ``log ndtr`` through
    ``ndtri(exp(.))``, so it holds while ``ndtr(a)`` (or ``ndtr(-b)``) is above ``1e-308``
    (|a| up to ~37; SciPy's ``ndtri_exp`` goes further)."""
    name = "truncnorm"
    shapes = (("a", -1.0), ("b", 1.0))
    accuracy = {"logpdf": 1e-14, "cdf": 1e-13, "logcdf": 1e-13, "sf": 1e-13, "logsf": 1e-13,
                "ppf": 1e-12, "isf": 1e-12}

    def _argcheck(self, a, b):
        return a < b

    def _support(self, a, b):
        return a, b

    def _interior(self, a, b):
        return tnp.where(a > 0, a, tnp.where(b < 0, b, 0.0))

    def _logpdf(self, z, a, b):
        return _norm_logpdf(z) - _log_gauss_mass(a, b)

    def _log_cdf_sf(self, z, a, b):
        mass = _log_gauss_mass(a, b)
        logcdf = _log_gauss_mass(a, z) - mass
        logsf = _log_gauss_mass(z, b) - mass
        # near 0, each is log1p(-exp(other)), as SciPy (avoids its cancellation)
        cdf_near, sf_near = logcdf > -0.1, logsf > -0.1
        return (tnp.where(cdf_near, _log1mexp(tnp.where(cdf_near, logsf, -1.0)), logcdf),
                tnp.where(sf_near, _log1mexp(tnp.where(sf_near, logcdf, -1.0)), logsf))

    def _logcdf(self, z, a, b):
        return self._log_cdf_sf(z, a, b)[0]

    def _logsf(self, z, a, b):
        return self._log_cdf_sf(z, a, b)[1]

    def _cdf(self, z, a, b):
        return tnp.exp(self._logcdf(z, a, b))

    def _sf(self, z, a, b):
        return tnp.exp(self._logsf(z, a, b))

    def _ppf(self, q, a, b):
        mass = _log_gauss_mass(a, b)
        left = a < 0
        # left: ndtr(x) = ndtr(a) + q mass; right, mirrored: ndtr(-x) = ndtr(-b) + (1-q) mass
        la, rb = tnp.where(left, a, -1.0), tnp.where(left, 1.0, b)
        x_left = _ndtri_exp(tnp.logaddexp(sc.log_ndtr(la), tnp.log(q) + mass))
        x_right = -_ndtri_exp(tnp.logaddexp(sc.log_ndtr(-rb), tnp.log1p(-q) + mass))
        return tnp.where(left, x_left, x_right)


class t_gen(Continuous):
    """Student's t distribution with ``df`` degrees of freedom (``df = inf``: the normal).
    ``logpdf``'s ``log(gamma((df+1)/2) / gamma(df/2))`` switches to its asymptotic series
    at ``df = 200`` (as SciPy's ``poch``, no ``gammaln`` cancellation)."""
    name = "t"
    shapes = (("df", 1.0),)
    accuracy = {"logpdf": 1e-14}

    def _argcheck(self, df):
        return df > 0

    def _logpdf(self, z, df):
        finite = df != INF
        d = tnp.where(finite, df, 1.0)
        student = (_log_gamma_ratio_half(d * 0.5) - 0.5 * (LOG_2 + LOG_PI)
                   - (d + 1) * 0.5 * tnp.log1p(z * z / d))
        return tnp.where(finite, student, _norm_logpdf(z))


class gennorm_gen(Continuous):
    """The generalized normal distribution: ``beta / (2 gamma(1/beta)) exp(-|z|**beta)``."""
    name = "gennorm"
    shapes = (("beta", 2.0),)
    accuracy = {"logpdf": 1e-14}

    def _argcheck(self, beta):
        return beta > 0

    def _logpdf(self, z, beta):
        return tnp.log(beta) - LOG_2 - sc.gammaln(1 / beta) - tnp.abs(z) ** beta


norm = norm_gen()
expon = expon_gen()
laplace = laplace_gen()
logistic = logistic_gen()
cauchy = cauchy_gen()
uniform = uniform_gen()
pareto = pareto_gen()
gumbel_r = gumbel_r_gen()
gumbel_l = gumbel_l_gen()
lognorm = lognorm_gen()
truncnorm = truncnorm_gen()
t = t_gen()
gennorm = gennorm_gen()
