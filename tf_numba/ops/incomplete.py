"""Parameter derivatives of the regularized incomplete gamma and beta functions, in NumPy.

``gammainc_da(a, x, n)`` is ``d^n/da^n gammainc(a, x)`` and ``betainc_dab(a, b, x, i, j)``
is ``d^(i+j)/da^i db^j betainc(a, b, x)``. Neither has a closed form; both are the series
and continued fractions SciPy's values come from (Numerical Recipes 6.2 and 6.4: the power
series of ``P`` for ``x < a + 1``, Legendre's continued fraction of ``Q`` beyond; the
continued fraction of ``I_x(a, b)`` for ``x < (a + 1)/(a + b + 2)``, of ``1 - I_{1-x}(b, a)``
beyond) run in truncated Taylor arithmetic in the parameters, so every order comes from one
pass (forward mode through the iteration, as JAX's ``igamma_grad_a``, to any order).

A jet is an array ``c[i, j, ...]`` of Taylor coefficients ``d^(i+j) f/da^i db^j / (i! j!)``
over a batch of points, truncated at the shape of its first two axes. Computed in float64.
"""
import math

import numpy as np

EPS = 1e-16
TINY = 1e-300        # Lentz's guard against a zero denominator
MAX_TERMS = 20000    # series and fractions need ~sqrt(a) terms; enough for a up to ~1e6


def _mul(x, y):
    """The truncated product of two jets (coefficient convolution)."""
    ni, nj = x.shape[:2]
    z = np.zeros(np.broadcast_shapes(x.shape, y.shape))
    for i in range(ni):
        for j in range(nj):
            z[i:, j:] += x[i, j] * y[:ni - i, :nj - j]
    return z


def _compose(x, derivs):
    """``f(x)`` for a jet ``x`` from ``derivs[k] = f^(k)(x[0, 0])``: the Taylor sum of
    ``f`` at the constant term, in powers of the jet's nilpotent part."""
    nil = x.copy()
    nil[0, 0] = 0
    out = np.zeros(x.shape)
    out[0, 0] = derivs[0]
    power = None
    for k in range(1, len(derivs)):
        power = nil if power is None else _mul(power, nil)
        out = out + power * (derivs[k] / math.factorial(k))
    return out


def _shift(x, c):
    """``x + c`` for a constant ``c`` (it adds to the constant term only)."""
    out = x.copy()
    out[0, 0] += c
    return out


def _degree(x):
    return x.shape[0] + x.shape[1] - 2


def _exp(x):
    e = np.exp(x[0, 0])
    return _compose(x, [e] * (_degree(x) + 1))


def _recip(x):
    x0 = x[0, 0]
    return _compose(x, [(-1) ** k * math.factorial(k) / x0 ** (k + 1)
                        for k in range(_degree(x) + 1)])


def _lgamma(x):
    import scipy.special as sps
    x0 = x[0, 0]
    return _compose(x, [sps.gammaln(x0)] + [sps.polygamma(k, x0)
                                            for k in range(_degree(x))])


def _constant(value, shape):
    out = np.zeros(shape + np.shape(value))
    out[0, 0] = value
    return out


def _variable(value, shape, axis):
    """The jet of the parameter ``a`` (axis 0) or ``b`` (axis 1) at ``value``."""
    out = _constant(value, shape)
    if shape[axis] > 1:
        out[(1, 0) if axis == 0 else (0, 1)] = 1
    return out


def _converged(term, total):
    """Per point: every coefficient of ``term`` is below EPS times the largest of ``total``."""
    scale = np.max(np.abs(total), axis=(0, 1))
    return np.all(np.abs(term) <= EPS * scale, axis=(0, 1))


def _gamma_series_p(a, x):
    """Jet of P(a, x) = x^a e^-x / Gamma(a + 1) * sum_k x^k / ((a+1)...(a+k))."""
    term = _constant(np.ones_like(x), a.shape[:2])
    total = term.copy()
    for k in range(1, MAX_TERMS):
        term = _mul(term, _recip(_shift(a, k))) * x
        total = total + term
        if np.all(_converged(term, total)):
            break
    log_pre = _shift(a * np.log(x) - _lgamma(_shift(a, 1)), -x)
    return _mul(_exp(log_pre), total)


def _gamma_fraction_q(a, x):
    """Jet of Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a)/(x + 3 - a - ...)),
    by the modified Lentz method."""
    b = _shift(-a, x + 1)
    c = _constant(np.full_like(x, 1 / TINY), a.shape[:2])
    d = _recip(b)
    h = d
    for i in range(1, MAX_TERMS):
        an = _shift(a * i, -i * i)
        b = _shift(b, 2)
        d = _mul(an, d) + b
        c = b + _mul(an, _recip(c))
        d = _recip(d)
        delta = _mul(d, c)
        h = _mul(h, delta)
        if np.all(_converged(_shift(delta, -1), np.ones_like(delta))):
            break
    log_pre = _shift(a * np.log(x) - _lgamma(a), -x)
    return _mul(_exp(log_pre), h)


def _valid_gamma(a, x):
    return (a > 0) & (x >= 0)


def gammainc_da(a, x, n):
    """``d^n/da^n gammainc(a, x)`` (``n >= 1``); 0 at ``x = 0`` and ``x = inf``, NaN where
    SciPy's value is NaN (``a <= 0``, ``x < 0``, NaN)."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    out = np.full(a.shape, np.nan)
    ok = _valid_gamma(a, x)
    out[ok & ((x == 0) | np.isposinf(x))] = 0
    inner = ok & (x > 0) & np.isfinite(x)
    series = inner & (x < a + 1)
    fraction = inner & ~series
    shape = (n + 1, 1)
    if series.any():
        out[series] = _gamma_series_p(_variable(a[series], shape, 0), x[series])[n, 0]
    if fraction.any():
        out[fraction] = -_gamma_fraction_q(_variable(a[fraction], shape, 0), x[fraction])[n, 0]
    return out * math.factorial(n)


def _beta_fraction(a, b, x):
    """Jet of I_x(a, b) by its continued fraction (Numerical Recipes' betacf, modified Lentz)."""
    shape = a.shape[:2]
    one = _constant(np.ones_like(x), shape)
    qab, qap = a + b, _shift(a, 1)
    c = one
    d = _recip(one - _mul(qab, _recip(qap)) * x)
    h = d
    for m in range(1, MAX_TERMS):
        m2 = 2 * m
        aa = _mul(_shift(b, -m), _recip(_mul(_shift(a, m2 - 1), _shift(a, m2)))) * (m * x)
        d = _recip(one + _mul(aa, d))
        c = one + _mul(aa, _recip(c))
        h = _mul(h, _mul(d, c))
        aa = -_mul(_mul(_shift(a, m), _shift(qab, m)),
                   _recip(_mul(_shift(a, m2), _shift(qap, m2)))) * x
        d = _recip(one + _mul(aa, d))
        c = one + _mul(aa, _recip(c))
        delta = _mul(d, c)
        h = _mul(h, delta)
        step = delta - one
        if np.all(_converged(step, one)):
            break
    lbeta = _lgamma(a) + _lgamma(b) - _lgamma(qab)
    log_pre = a * np.log(x) + b * np.log1p(-x) - lbeta
    return _mul(_mul(_exp(log_pre), h), _recip(a))


def betainc_dab(a, b, x, i, j):
    """``d^(i+j)/da^i db^j betainc(a, b, x)`` (``i + j >= 1``); 0 at ``x = 0`` and
    ``x = 1``, NaN where SciPy's value is NaN (``a, b <= 0``, ``x`` outside ``[0, 1]``)."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    out = np.full(a.shape, np.nan)
    ok = (a > 0) & (b > 0) & (x >= 0) & (x <= 1) & np.isfinite(a) & np.isfinite(b)
    out[ok & ((x == 0) | (x == 1))] = 0
    inner = ok & (x > 0) & (x < 1)
    direct = inner & (x < (a + 1) / (a + b + 2))
    mirrored = inner & ~direct
    shape = (i + 1, j + 1)
    if direct.any():
        jet = _beta_fraction(_variable(a[direct], shape, 0), _variable(b[direct], shape, 1),
                             x[direct])
        out[direct] = jet[i, j]
    if mirrored.any():
        # I_x(a, b) = 1 - I_{1-x}(b, a): the fraction converges fast on that side
        jet = _beta_fraction(_variable(b[mirrored], shape, 1), _variable(a[mirrored], shape, 0),
                             1 - x[mirrored])
        out[mirrored] = -jet[i, j]
    return out * (math.factorial(i) * math.factorial(j))
