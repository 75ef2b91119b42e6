"""The continuous distributions of ``tf_numba.scipy.stats``: each one its standardized
formulas (SciPy's, or a more accurate form where SciPy's loses digits, as noted), on
``tf_numba.scipy.special`` and primitives; ``_distribution.Continuous`` adds the rest.

>>> from tf_numba.scipy.stats import norm
>>> norm.logpdf(1.0, loc=1.0, scale=2.0)
np.float64(-1.612085713764618)
"""
import math

import numpy as np

import tf_numba.numpy as tnp

from ... import lax, nn
from ...custom_derivatives import custom_jvp
from ...numpy import _promote as P
from .. import special as sc
from ._distribution import INF, Continuous

LOG_2 = math.log(2.0)
LOG_PI = math.log(math.pi)
LOG_2PI = math.log(2 * math.pi)
LOG_SQRT_2PI = 0.5 * LOG_2PI


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


def _log1mexp(x):
    """``log(1 - exp(x))`` for ``x < 0``, accurate near 0 and far below (Maechler 2012)."""
    near = x > -LOG_2
    return tnp.where(near, tnp.log(-tnp.expm1(tnp.where(near, x, -1.0))),
                     tnp.log1p(-tnp.exp(tnp.where(near, -1.0, x))))


class norm_gen(Continuous):
    """The normal distribution: ``exp(-z**2/2) / sqrt(2 pi)``."""
    name = "norm"
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-15, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-13, "cdf": 1e-10, "logcdf": 1e-11, "sf": 1e-14,
                "logsf": 1e-15, "ppf": 1e-14, "isf": 1e-14}
    notes = ("``cdf`` near ``z = 1`` is ``-expm1(-b log z)``; SciPy's ``1 - z**-b`` cancels "
             "there, so the figures against it are SciPy's error.")

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-14, "isf": 1e-15}

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
    accuracy = {"logpdf": 1e-15, "pdf": 1e-12, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

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
    from the other where it nears 0. ``ppf`` and ``isf`` are SciPy's: the target
    ``log ndtr(x)`` formed in log space and inverted by ``special.ndtri_exp``, so they hold
    however far out the interval lies (``truncnorm(50, 51).ppf(0.5)`` is ~50.01)."""
    name = "truncnorm"
    shapes = (("a", -1.0), ("b", 1.0))
    accuracy = {"logpdf": 1e-15, "pdf": 1e-15, "cdf": 1e-07, "logcdf": 1e-09, "sf": 1e-07,
                "logsf": 1e-09, "ppf": 1e-14, "isf": 1e-09}
    notes = ("``cdf``/``sf`` within ``1e-12`` of a bound (in probability) cancel in "
             "``ndtr(z) - ndtr(a)``, here as in SciPy, and the two differ there; so does "
             "``isf``'s ``ndtr(b) - q mass`` for ``q`` near 1 (SciPy forms the difference "
             "with a complex ``logsumexp``, this with ``expm1``).")

    def _argcheck(self, a, b):
        return a < b

    def _support(self, a, b):
        return a, b

    def _interior(self, a, b):
        return tnp.where(a > 0, a, tnp.where(b < 0, b, 0.0))

    def _logpdf(self, z, a, b):
        return _norm_logpdf(z) - _log_gauss_mass(a, b)

    def _log_cdf_sf(self, z, a, b):
        # the bounds themselves (infinite ones included) answer exactly; inside, each log
        # is log1p(-exp(other)) where it nears 0, as SciPy (avoids its cancellation)
        at_a, at_b = z <= a, z >= b
        zs = tnp.where(tnp.logical_or(at_a, at_b), self._interior(a, b), z)
        mass = _log_gauss_mass(a, b)
        logcdf = _log_gauss_mass(a, zs) - mass
        logsf = _log_gauss_mass(zs, b) - mass
        cdf_near, sf_near = logcdf > -0.1, logsf > -0.1
        logcdf = tnp.where(cdf_near, _log1mexp(tnp.where(cdf_near, logsf, -1.0)), logcdf)
        logsf = tnp.where(sf_near, _log1mexp(tnp.where(sf_near, logcdf, -1.0)), logsf)
        return (tnp.where(at_a, -INF, tnp.where(at_b, 0.0, logcdf)),
                tnp.where(at_b, -INF, tnp.where(at_a, 0.0, logsf)))

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
        x_left = sc.ndtri_exp(tnp.logaddexp(sc.log_ndtr(la), tnp.log(q) + mass))
        x_right = -sc.ndtri_exp(tnp.logaddexp(sc.log_ndtr(-rb), tnp.log1p(-q) + mass))
        return tnp.where(left, x_left, x_right)

    def _isf(self, q, a, b):
        mass = _log_gauss_mass(a, b)
        left = b < 0
        # left: ndtr(x) = ndtr(b) - q mass; right, mirrored: ndtr(-x) = ndtr(-a) - (1-q) mass
        lb, ra = tnp.where(left, b, -1.0), tnp.where(left, 1.0, a)
        top_left, top_right = sc.log_ndtr(lb), sc.log_ndtr(-ra)
        # the other side's difference would be the log of a negative number: a placeholder
        cut_left = tnp.where(left, tnp.log(q) + mass, top_left - 1)
        cut_right = tnp.where(left, top_right - 1, tnp.log1p(-q) + mass)
        x_left = sc.ndtri_exp(_log_diff(top_left, cut_left))
        x_right = -sc.ndtri_exp(_log_diff(top_right, cut_right))
        return tnp.where(left, x_left, x_right)


# below x = e^-80 the first term of I_x's series is exact in float32 and float64 alike
DEEP_LOG_X = -80.0


class t_gen(Continuous):
    """Student's t distribution with ``df`` degrees of freedom (``df = inf``: the normal).
    ``logpdf`` as SciPy's (``log poch(df/2, 1/2)``, no ``gammaln`` cancellation at large
    ``df``); ``cdf`` from ``betainc``: ``1/2 + sign(z) I_{z^2/(df+z^2)}(1/2, df/2) / 2``
    near the centre, the tail ``I_{df/(df+z^2)}(df/2, 1/2) / 2`` where that is below 0.1,
    so neither cancels (``df`` above ~``1e8`` loses digits in the tail's argument).
    ``ppf`` inverts the same two forms with the tail probability ``p = 2 min(q, 1 - q)``:
    ``x = betaincinv(df/2, 1/2, p) = df / (df + t**2)`` gives ``t**2 = df (1 - x) / x``
    where ``x < 1/2``, and ``z = betainccinv(1/2, df/2, p) = t**2 / (df + t**2)`` gives
    ``t**2 = df z / (1 - z)`` elsewhere, so neither ``1 - x`` nor ``1 - z`` rounds; below
    ``x = e^-80`` the first term of ``I_x``'s series gives ``log x`` in closed form (SciPy's
    ``betaincinv`` stops at the smallest normal, so its ``t.ppf`` is wrong beyond)."""
    name = "t"
    shapes = (("df", 1.0),)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-10, "logcdf": 1e-11, "sf": 1e-09,
                "logsf": 1e-10, "ppf": 1e-12, "isf": 1e-12}
    notes = ("``cdf``/``sf`` lose digits as ``df`` grows (``1e-10`` at ``df = 1e6``). "
             "``ppf`` differs from SciPy's where ``df / (df + t**2)`` is below the "
             "smallest normal (``|t|`` beyond ~``1e154 sqrt(df)``, e.g. "
             "``t.ppf(1e-100, 0.3)``: ``-inf``, SciPy's ``-2e153``), where SciPy's is wrong.")

    def _argcheck(self, df):
        return df > 0

    def _logpdf(self, z, df):
        finite = df != INF
        d = tnp.where(finite, df, 1.0)
        student = (tnp.log(sc.poch(d * 0.5, 0.5)) - 0.5 * (tnp.log(d) + LOG_PI)
                   - (d + 1) * 0.5 * tnp.log1p(z * z / d))
        return tnp.where(finite, student, _norm_logpdf(z))

    def _cdf(self, z, df):
        finite = df != INF
        d = tnp.where(finite, df, 1.0)
        z2 = tnp.where(tnp.isinf(z), 1.0, z * z)
        # the smaller of cdf and sf is ``tail``; near the centre (tail > 0.1) ``1/2 - half``
        # is accurate and tail's argument d / (d + z**2) nears 1, where I_x(., 1/2) is
        # infinitely sensitive to it
        half = 0.5 * sc.betainc(0.5, d * 0.5, z2 / (d + z2))
        centre = tnp.logical_and(half < 0.4, tnp.isfinite(z))
        zt = tnp.where(centre, d, tnp.where(tnp.isinf(z), INF, z2))
        tail = 0.5 * sc.betainc(d * 0.5, 0.5, d / (d + zt))
        pos = z > 0
        student = tnp.where(centre, tnp.where(pos, 0.5 + half, 0.5 - half),
                            tnp.where(pos, 1 - tail, tail))
        return tnp.where(finite, student, sc.ndtr(z))

    def _sf(self, z, df):
        return self._cdf(-z, df)

    def _ppf(self, q, df):
        finite = df != INF
        d = tnp.where(finite, df, 1.0)
        mid = q == 0.5
        p = 2 * tnp.where(q < 0.5, q, 1 - q)
        a = d * 0.5
        # far out, I_x(a, 1/2) = x^a / (a beta(a, 1/2)) (1 + O(x)): log x in closed form,
        # where betaincinv would stop at the smallest normal (SciPy's t.ppf does)
        log_x = (tnp.log(p) + tnp.log(a) + sc.betaln(a, 0.5)) / a
        deep = log_x < DEEP_LOG_X
        x = sc.betaincinv(a, 0.5, tnp.where(deep, 0.5, p))
        tail = tnp.logical_and(x < 0.5, tnp.logical_not(deep))
        # each form sees only its own points (the double where): at the others', and at
        # the median, where sqrt(z) has no derivative, it runs on a placeholder
        xs = tnp.where(tail, x, 0.25)
        elsewhere = tnp.logical_or(tnp.logical_or(tail, mid), deep)
        z = sc.betainccinv(0.5, a, tnp.where(elsewhere, 0.5, p))
        t2 = tnp.where(tail, d * (1 - xs) / xs, d * z / (1 - z))
        far = tnp.exp(0.5 * (tnp.log(d) - tnp.where(deep, log_x, 0.0)))
        mag = tnp.where(deep, far, tnp.sqrt(t2))
        student = tnp.where(q < 0.5, -mag, mag)
        # the median: 0, with the slope 1 / pdf(0) = sqrt(df) beta(df/2, 1/2)
        student = tnp.where(mid, (q - 0.5) * tnp.sqrt(d) * sc.beta(d * 0.5, 0.5), student)
        return tnp.where(finite, student, sc.ndtri(q))

    def _isf(self, q, df):
        return -self._ppf(q, df)


class chi2_gen(Continuous):
    """The chi-squared distribution with ``df`` degrees of freedom; ``cdf`` and ``sf`` are
    ``gammainc`` and ``gammaincc`` (``sf`` accurate in the right tail)."""
    name = "chi2"
    shapes = (("df", 1.0),)
    support = (0.0, INF)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-13, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

    def _argcheck(self, df):
        return df > 0

    def _logpdf(self, z, df):
        a = df * 0.5
        return sc.xlogy(a - 1, z) - z * 0.5 - sc.gammaln(a) - a * LOG_2

    def _cdf(self, z, df):
        return sc.gammainc(df * 0.5, z * 0.5)

    def _sf(self, z, df):
        return sc.gammaincc(df * 0.5, z * 0.5)

    def _ppf(self, q, df):
        return 2 * sc.gammaincinv(df * 0.5, q)

    def _isf(self, q, df):
        return 2 * sc.gammainccinv(df * 0.5, q)


class gamma_gen(Continuous):
    """The gamma distribution with shape ``a``: ``z**(a-1) exp(-z) / gamma(a)``."""
    name = "gamma"
    shapes = (("a", 1.0),)
    support = (0.0, INF)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-13, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

    def _argcheck(self, a):
        return a > 0

    def _logpdf(self, z, a):
        return sc.xlogy(a - 1, z) - z - sc.gammaln(a)

    def _cdf(self, z, a):
        return sc.gammainc(a, z)

    def _sf(self, z, a):
        return sc.gammaincc(a, z)

    def _ppf(self, q, a):
        return sc.gammaincinv(a, q)

    def _isf(self, q, a):
        return sc.gammainccinv(a, q)


class beta_gen(Continuous):
    """The beta distribution on ``[0, 1]``: ``z**(a-1) (1-z)**(b-1) / beta(a, b)``."""
    name = "beta"
    shapes = (("a", 1.0), ("b", 1.0))
    support = (0.0, 1.0)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-12, "cdf": 1e-15, "logcdf": 1e-14, "sf": 1e-11,
                "logsf": 1e-14, "ppf": 1e-15, "isf": 1e-15}
    notes = ("``sf`` is ``1 - cdf`` where ``cdf < 1/2``: SciPy's ``I_{1-z}(b, a)`` loses "
             "``z`` where ``1 - z`` rounds (``beta(0.5, 0.5).sf(2.5e-24)`` is ``1 - 1e-12``, "
             "SciPy's 1.0).")

    def _argcheck(self, a, b):
        return tnp.logical_and(a > 0, b > 0)

    def _logpdf(self, z, a, b):
        return sc.xlogy(a - 1, z) + sc.xlog1py(b - 1, -z) - sc.betaln(a, b)

    def _cdf(self, z, a, b):
        return sc.betainc(a, b, z)

    def _sf(self, z, a, b):
        # I_{1-z}(b, a) loses z where 1 - z rounds (z near 0); 1 - cdf is accurate while
        # cdf < 1/2, and I_{1-z}(b, a) is where cdf >= 1/2 (z is then not small)
        cdf = sc.betainc(a, b, z)
        low = cdf < 0.5
        return tnp.where(low, 1 - cdf, sc.betainc(b, a, 1 - tnp.where(low, 0.5, z)))

    def _ppf(self, q, a, b):
        return sc.betaincinv(a, b, q)

    def _isf(self, q, a, b):
        return sc.betainccinv(a, b, q)


class gennorm_gen(Continuous):
    """The generalized normal distribution: ``beta / (2 gamma(1/beta)) exp(-|z|**beta)``;
    ``cdf`` as SciPy's, ``(1/2 + c) - c gammaincc(1/beta, |z|**beta)``, ``c = sign(z)/2``
    (each tail from ``gammaincc``); ``ppf`` its inverse,
    ``c gammainccinv(1/beta, (1 + c) - 2 c q)**(1/beta)``, ``c = sign(q - 1/2)``."""
    name = "gennorm"
    shapes = (("beta", 2.0),)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-15, "logcdf": 1e-15, "sf": 1e-15,
                "logsf": 1e-15, "ppf": 1e-15, "isf": 1e-15}

    def _argcheck(self, beta):
        return beta > 0

    def _logpdf(self, z, beta):
        return tnp.log(beta) - LOG_2 - sc.gammaln(1 / beta) - tnp.abs(z) ** beta

    def _cdf(self, z, beta):
        c = tnp.sign(z) * 0.5
        return (0.5 + c) - c * sc.gammaincc(1 / beta, tnp.abs(z) ** beta)

    def _sf(self, z, beta):
        return self._cdf(-z, beta)

    def _ppf(self, q, beta):
        # the median runs on a placeholder (x**(1/beta) has no derivative at x = 0) and
        # is 0 with the slope 1 / pdf(0) = 2 gamma(1/beta) / beta
        mid = q == 0.5
        qs = tnp.where(mid, 0.25, q)
        c = tnp.sign(qs - 0.5)         # never 0: the median is the placeholder's
        # (1 + c) first: the tail probability 2 min(q, 1 - q) without cancellation
        x = c * sc.gammainccinv(1 / beta, (1 + c) - 2 * c * qs) ** (1 / beta)
        slope = tnp.exp(sc.gammaln(1 / beta) + LOG_2 - tnp.log(beta))
        return tnp.where(mid, (q - 0.5) * slope, x)

    def _isf(self, q, beta):
        return -self._ppf(q, beta)


# SciPy's von_mises_cdf: the series below VONMISES_CK (its number of terms growing with
# kappa as below, "12 decimal digits"), a normal approximation above
VONMISES_CK = 50.0
VONMISES_TERMS = (28.0, 0.5, 100.0, 5.0)


def _vonmises_terms(kappa):
    a1, a2, a3, a4 = VONMISES_TERMS
    return tnp.floor(1 + a1 + a2 * kappa - a3 / (kappa + a4))


def _vonmises_cdf_series(z, kappa):
    """Hill's series (Algorithm 518) for ``z`` in ``[-pi, pi]``: ``1/2 + z/(2 pi) + V/pi``,
    ``V`` summed by the backward recurrence ``R = k/(2n + k R)``, ``V = R (sin(nz)/n + V)``
    from ``n = p - 1`` down, ``sin(nz)`` by rotations from ``sin(pz)``, ``p`` as SciPy's
    (the same operations, so the same roundings). One ``fori_loop`` over the largest ``p``
    below ``VONMISES_CK`` (a loop, not 52 unrolled steps: their fused kernel and its
    derivative take minutes to compile), each point starting at its own ``p``."""
    p = _vonmises_terms(kappa)
    s, c = tnp.sin(z), tnp.cos(z)
    top = int(_vonmises_terms(VONMISES_CK))
    dt = P.dtype_of(z)

    def step(i, carry):
        sn, cn, r, v = carry
        n = tnp.astype(top - 1 - i, dt)
        on = n < p
        sn, cn = tnp.where(on, sn * c - cn * s, sn), tnp.where(on, cn * c + sn * s, cn)
        r = tnp.where(on, kappa / (2 * n + kappa * r), 0.0)
        return sn, cn, r, tnp.where(on, r * (sn / n + v), 0.0)

    zero = z * kappa * 0.0
    start = (tnp.sin(p * z) + zero, tnp.cos(p * z) + zero, zero, zero)
    v = lax.fori_loop(0, top - 1, step, start)[3]
    return tnp.clip(0.5 + z / (2 * math.pi) + v / math.pi, 0.0, 1.0)


VONMISES_NEWTON_STEPS = 60     # the most; Newton inside the bracket takes ~5-10


def _vonmises_root(q, kappa, cdf):
    """``z`` in ``[-pi, pi]`` with ``cdf(z, kappa) = q`` for ``q`` in ``(0, 1)``: Newton
    steps on ``cdf`` (its slope by ``jvp``, so also above ``VONMISES_CK`` where ``cdf`` is
    SciPy's normal approximation), each kept inside a bracket that the residual's sign
    shrinks (a step leaving it is a bisection), from the normal approximation's inverse
    ``2 asin(ndtri(q) i0e(kappa) sqrt(pi/2))``, in a ``while_loop`` until no step moves."""
    from ... import api
    dt = P.dtype_of(q)
    tol = 4 * float(np.finfo(dt).eps)
    guess = sc.ndtri(q) * sc.i0e(kappa) * math.sqrt(math.pi / 2)
    z0 = 2 * tnp.arcsin(tnp.clip(guess, -0.999, 0.999)) + 0 * kappa   # inside (-pi, pi)
    lo, hi = z0 * 0 - math.pi, z0 * 0 + math.pi

    def cond(carry):
        i, _, _, _, moving = carry
        return tnp.logical_and(i < VONMISES_NEWTON_STEPS, tnp.any(moving))

    def body(carry):
        i, z, lo, hi, moving = carry
        f, slope = api.jvp(lambda u: cdf(u, kappa), (z,), (tnp.ones_like(z),))
        r = f - q
        lo, hi = tnp.where(r < 0, z, lo), tnp.where(r > 0, z, hi)
        steep = slope > 0         # a flat cdf (underflowed density) takes a bisection
        step = z - r / tnp.where(steep, slope, 1.0)
        inside = tnp.logical_and(steep, tnp.logical_and(step > lo, step < hi))
        new = tnp.where(tnp.logical_and(inside, tnp.isfinite(step)), step, (lo + hi) / 2)
        new = tnp.where(moving, new, z)
        return i + 1, new, lo, hi, tnp.abs(new - z) > tol * (1 + tnp.abs(z))

    start = (np.asarray(0), z0, lo, hi, tnp.ones_like(z0) > 0)
    return lax.while_loop(cond, body, start)[1]


class vonmises_gen(Continuous):
    """The von Mises distribution on the circle (periodic in ``z``, as SciPy's):
    ``exp(kappa cos z) / (2 pi i0(kappa))``, computed as SciPy with ``i0e`` and
    ``cos z - 1 = -2 sin(z/2)**2``. ``kappa = 0`` is the uniform density. ``cdf`` is
    SciPy's: ``z`` reduced to ``[-pi, pi]`` plus the number of whole turns, then Hill's
    series below ``kappa = 50`` and ``ndtr(sqrt(2/pi) / i0e(kappa) sin(z/2))`` above."""
    name = "vonmises"
    shapes = (("kappa", 1.0),)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-13, "cdf": 1e-14, "logcdf": 1e-14, "sf": 1e-12,
                "logsf": 1e-12, "ppf": 5e-7, "isf": 5e-7}
    notes = ("``sf`` is ``1 - cdf``, as SciPy's (negative beyond the first turn, so "
             "``logsf`` is NaN there). Above ``kappa = 50`` ``cdf`` is SciPy's normal "
             "approximation, whose derivative in ``x`` differs from ``pdf`` by ~1e-3 "
             "relative. ``ppf`` inverts ``cdf`` on ``[-pi, pi]`` by bracketed Newton "
             "steps (``_vonmises_root``); its derivatives are the inverse-function rule's, "
             "``1 / F_x`` in ``q`` and ``-F_kappa / F_x`` in ``kappa``, of every order; "
             "``isf(q) = -ppf(q)`` (symmetry). Its distance from SciPy's root search is "
             "the cdf's rounding (1e-16) over the density: 2e-15 for ``kappa <= 0.5``, "
             "1e-11 at ``kappa = 5`` and 2e-7 at ``kappa = 500`` for ``q`` within 1e-12 "
             "of 0 or 1 (both roots leave a residual of one rounding).")

    def _argcheck(self, kappa):
        return kappa >= 0

    def _logpdf(self, z, kappa):
        h = tnp.sin(z * 0.5)
        return kappa * (-2 * h * h) - LOG_2PI - tnp.log(sc.i0e(kappa))

    def _cdf(self, z, kappa):
        finite = tnp.isfinite(z)
        zf = tnp.where(finite, z, 0.0)
        turns = tnp.round(zf / (2 * math.pi))
        zr = zf - turns * (2 * math.pi)
        small = kappa < VONMISES_CK
        series = _vonmises_cdf_series(zr, tnp.where(small, kappa, 1.0))
        big = tnp.where(small, VONMISES_CK, kappa)
        normal = sc.ndtr(math.sqrt(2 / math.pi) / sc.i0e(big) * tnp.sin(zr * 0.5))
        out = tnp.where(small, series, normal) + turns
        return tnp.where(finite, out, tnp.where(z > 0, 1.0, tnp.where(z < 0, 0.0, z)))

    def _ppf(self, q, kappa):
        return _vonmises_ppf(q, kappa)

    def _isf(self, q, kappa):
        return -_vonmises_ppf(q, kappa)


class wrapcauchy_gen(Continuous):
    """The wrapped Cauchy distribution on ``[0, 2 pi]``: ``(1 - c**2) / (2 pi (1 + c**2 -
    2 c cos z))`` for ``0 < c < 1``; ``cdf`` and ``ppf`` are SciPy's ``arctan`` forms, each
    half of the circle from its own end."""
    name = "wrapcauchy"
    shapes = (("c", 0.5),)
    support = (0.0, 2 * math.pi)
    accuracy = {"logpdf": 1e-15, "pdf": 1e-14, "cdf": 1e-14, "logcdf": 1e-13, "sf": 1e-13,
                "logsf": 1e-13, "ppf": 1e-13, "isf": 1e-13}

    def _argcheck(self, c):
        return (c > 0) & (c < 1)

    def _logpdf(self, z, c):
        return (tnp.log1p(-c * c) - LOG_2PI
                - tnp.log(1 + c * c - 2 * c * tnp.cos(z)))

    def _cdf(self, z, c):
        ratio = (1 + c) / (1 - c)
        first = z < math.pi
        low = tnp.where(first, z, 0.0)              # each half sees only its own points
        high = tnp.where(first, math.pi, z)
        return tnp.where(first, tnp.arctan(ratio * tnp.tan(low / 2)) / math.pi,
                         1 - tnp.arctan(ratio * tnp.tan((2 * math.pi - high) / 2)) / math.pi)

    def _ppf(self, q, c):
        ratio = (1 - c) / (1 + c)
        first = q < 0.5
        low = tnp.where(first, q, 0.25)
        high = tnp.where(first, 0.75, q)
        return tnp.where(first, 2 * tnp.arctan(ratio * tnp.tan(math.pi * low)),
                         2 * math.pi - 2 * tnp.arctan(ratio * tnp.tan(math.pi * (1 - high))))


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
chi2 = chi2_gen()
gamma = gamma_gen()
beta = beta_gen()
gennorm = gennorm_gen()
vonmises = vonmises_gen()
wrapcauchy = wrapcauchy_gen()


@custom_jvp
def _vonmises_ppf(q, kappa):
    return _vonmises_root(q, kappa, vonmises._cdf)


@_vonmises_ppf.defjvp
def _vonmises_ppf_jvp(primals, tangents):
    # x = F^-1(q, kappa): dx = (dq - F_kappa dkappa) / F_x at x (implicit-function rule),
    # F's partials by jvp, so the rule is differentiable again
    from ... import api
    (q, kappa), (dq, dkappa) = primals, tangents
    x = _vonmises_ppf(q, kappa)
    slope = api.jvp(lambda u: vonmises._cdf(u, kappa), (x,), (tnp.ones_like(x),))[1]
    change = tnp.zeros_like(x) if dq is None else dq
    if dkappa is not None:
        change = change - api.jvp(lambda k: vonmises._cdf(x, k), (kappa,), (dkappa,))[1]
    return x, change / slope
