"""Derivatives of ``iv``/``ive`` in the order, of ``zeta`` in its exponent and of ``hyp1f1``
in its parameters, in NumPy, by the series SciPy's values come from run in truncated
Taylor arithmetic over the parameter (the jets of ``incomplete.py``), so every order comes
from one pass.

* ``iv_dv(v, x, n, scaled)``: ``d^n/dv^n iv(v, x)`` (``ive`` if ``scaled``). The power
  series ``sum_k (x/2)^(2k+v) / (k! Gamma(k+v+1))`` (DLMF 10.25.2) for ``x <= max(50,
  v^2)``, kept in range by rescaling its terms; beyond, Hankel's expansion ``e^x /
  sqrt(2 pi x) sum_k (-1)^k a_k(v) / x^k`` (DLMF 10.40.1), whose omitted part is
  ``e^-2x`` relative.
* ``zeta_ds(s, q, n, riemann)``: ``d^n/ds^n zeta(s, q)``, by Euler-Maclaurin summation (as
  Cephes' ``zeta``: 10 terms, then 12 Bernoulli corrections); the Riemann zeta below
  ``s = -1/2`` (where that sum cancels) by the functional equation ``zeta(s) = 2^s
  pi^(s-1) sin(pi s/2) Gamma(1-s) zeta(1-s)``.
* ``hyp1f1_dab(a, b, x, i, j)``: ``d^(i+j)/da^i db^j M(a, b, x)``, Kummer's series for
  ``x >= 0`` and his transformation ``M(a, b, x) = e^x M(b - a, b, -x)`` below.
* ``hyp2f1_dabc(a, b, c, x, orders)``: a derivative of ``2F1(a, b; c; x)`` in up to two of
  its parameters, Gauss's series for ``0 <= x < 1`` and Pfaff's transformation
  ``2F1(a, b; c; x) = (1 - x)^-a 2F1(a, c - b; c; x / (x - 1))`` below (DLMF 15.8.1).

Computed in float64; the accuracy each reaches is stated on the public functions in
``tf_numba.scipy.special``.
"""
import math

import numpy as np

from .incomplete import (MAX_TERMS, _compose, _constant, _converged, _degree, _exp,
                         _lgamma, _mul, _recip, _shift, _variable)

RESCALE = 1e200      # the iv series' terms are divided by this when they grow past it
EULER_MACLAURIN_N = 10
# B_2k / (2k)! for k = 1..12 (Euler-Maclaurin's corrections)
BERNOULLI_OVER_FACTORIAL = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                            -691 / 1307674368000, 1 / 74724249600,
                            -3617 / 10670622842880000, 43867 / 5109094217170944000,
                            -174611 / 802857662698291200000,
                            77683 / 14101100039391805440000,
                            -236364091 / 1693824136731743669452800000]


def _sin(x):
    """``sin`` of a jet: its derivatives cycle through sin, cos, -sin, -cos."""
    s, c = np.sin(x[0, 0]), np.cos(x[0, 0])
    return _compose(x, [(s, c, -s, -c)[k % 4] for k in range(_degree(x) + 1)])


# ---------------------------------------------------------------- iv, ive

def _ive_series(v, x):
    """Jet of ``e^-x I_v(x)`` by the power series, for ``x > 0``."""
    import scipy.special as sps
    half = x / 2
    # the first term (x/2)^v / Gamma(v+1) e^-x, its log's constant part taken out
    log_first = v * np.log(half) - _lgamma(_shift(v, 1))
    log_scale = log_first[0, 0] - x
    term = _exp(_shift(log_first, -log_first[0, 0])) * sps.gammasgn(v[0, 0] + 1)
    total = term.copy()
    for k in range(1, MAX_TERMS):
        term = _mul(term, _recip(_shift(v, k))) * (half * half / k)
        total = total + term
        big = np.abs(term[0, 0]) > RESCALE
        if big.any():
            factor = np.where(big, 1 / RESCALE, 1.0)
            term, total = term * factor, total * factor
            log_scale = log_scale + np.where(big, math.log(RESCALE), 0.0)
        growing = half * half > k * np.abs(k + v[0, 0])
        if np.all(_converged(term, total) & ~growing):
            break
    size = np.abs(total[0, 0])
    return total / size * np.exp(log_scale + np.log(size))


def _ive_asymptotic(v, x):
    """Jet of ``e^-x I_v(x)`` by Hankel's expansion, for ``x > max(50, v^2)``."""
    mu = 4 * _mul(v, v)
    term = _constant(np.ones_like(x), v.shape[:2])
    total = term.copy()
    for k in range(1, int(2 * np.max(x)) + 2):
        term = _mul(term, _shift(mu, -(2 * k - 1) ** 2)) * (-1 / (8 * k * x))
        total = total + term
        if np.all(_converged(term, total)):
            break
    return total / np.sqrt(2 * np.pi * x)


def iv_dv(v, x, n, scaled):
    """``d^n/dv^n iv(v, x)`` (``ive`` if ``scaled``), ``n >= 1``: 0 at ``x = 0`` for
    ``v > 0``; NaN for ``x < 0`` (SciPy's ``iv`` is defined there at integer ``v`` only),
    at negative integer ``v`` and where SciPy's value is NaN."""
    v, x = np.broadcast_arrays(np.asarray(v, np.float64), np.asarray(x, np.float64))
    out = np.full(v.shape, np.nan)
    out[(x == 0) & (v > 0)] = 0
    inner = (x > 0) & np.isfinite(x) & np.isfinite(v) & ~((v < 0) & (v == np.floor(v)))
    far = inner & (x > np.maximum(50, v * v))
    near = inner & ~far
    shape = (n + 1, 1)
    for part, series in ((near, _ive_series), (far, _ive_asymptotic)):
        if part.any():
            jet = series(_variable(v[part], shape, 0), x[part])[n, 0]
            out[part] = jet if scaled else jet * np.exp(x[part])
    return out * math.factorial(n)


# ---------------------------------------------------------------- zeta

def _hurwitz(s, q):
    """Jet of ``zeta(s, q)`` by Euler-Maclaurin summation (``q > 0``, ``s != 1``)."""
    total = _constant(np.zeros_like(q), s.shape[:2])
    for k in range(EULER_MACLAURIN_N):
        total = total + _exp(-s * np.log(q + k))
    log_w = np.log(q + EULER_MACLAURIN_N)
    w_s = _exp(-s * log_w)                                       # w^-s
    total = total + _mul(w_s * np.exp(log_w), _recip(_shift(s, -1))) + w_s / 2
    rising = s                                                   # s (s+1) ... (s+2k-2)
    power = w_s / np.exp(log_w)                                  # w^(-s-2k+1)
    for k, coef in enumerate(BERNOULLI_OVER_FACTORIAL, 1):
        if k > 1:
            rising = _mul(_mul(rising, _shift(s, 2 * k - 3)), _shift(s, 2 * k - 2))
            power = power / np.exp(2 * log_w)
        total = total + _mul(rising, power) * coef
    return total


def _riemann_reflected(s):
    """Jet of the Riemann zeta at ``s < -1/2`` from ``zeta(1 - s)`` (functional equation)."""
    one_minus = _shift(-s, 1)
    factor = _exp(_shift(s * math.log(2 * math.pi) + _lgamma(one_minus), -math.log(math.pi)))
    return _mul(_mul(factor, _sin(s * (math.pi / 2))),
                _hurwitz(one_minus, np.ones(s.shape[2:])))


def zeta_ds(s, q, n, riemann):
    """``d^n/ds^n zeta(s, q)`` (``n >= 1``) for ``s > 1``, ``q > 0`` (NaN elsewhere, as
    SciPy's values); with ``riemann`` (``q`` ignored), of the Riemann zeta at every
    ``s != 1``."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    out = np.full(s.shape, np.nan)
    shape = (n + 1, 1)
    if riemann:
        q = np.ones(s.shape)
        ok = np.isfinite(s) & (s != 1)
        reflected = ok & (s < -0.5)
        direct = ok & ~reflected
        if reflected.any():
            out[reflected] = _riemann_reflected(_variable(s[reflected], shape, 0))[n, 0]
    else:
        direct = (s > 1) & (q > 0) & np.isfinite(s) & np.isfinite(q)
    if direct.any():
        out[direct] = _hurwitz(_variable(s[direct], shape, 0), q[direct])[n, 0]
    return out * math.factorial(n)


# ---------------------------------------------------------------- hyp1f1

def _kummer_series(a, b, x):
    """Jet of ``M(a, b, x) = sum_k (a)_k / (b)_k x^k / k!``."""
    term = _constant(np.ones_like(x), a.shape[:2])
    total = term.copy()
    for k in range(1, MAX_TERMS):
        term = _mul(_mul(term, _shift(a, k - 1)), _recip(_shift(b, k - 1))) * (x / k)
        total = total + term
        growing = np.abs((a[0, 0] + k) * x) > np.abs((b[0, 0] + k) * (k + 1))
        if np.all(_converged(term, total) & ~growing):
            break
    return total


def hyp1f1_dab(a, b, x, i, j):
    """``d^(i+j)/da^i db^j hyp1f1(a, b, x)`` (``i + j >= 1``); NaN at the poles ``b = 0,
    -1, ...``, for ``|x| > 700`` (where ``e^|x|`` overflows) and at NaN."""
    a, b, x = np.broadcast_arrays(*(np.asarray(t, np.float64) for t in (a, b, x)))
    out = np.full(a.shape, np.nan)
    ok = (np.isfinite(a) & np.isfinite(b) & (np.abs(x) <= 700)
          & ~((b <= 0) & (b == np.floor(b))))
    shape = (i + 1, j + 1)
    for part, sign in ((ok & (x >= 0), 1), (ok & (x < 0), -1)):
        if not part.any():
            continue
        ja, jb = _variable(a[part], shape, 0), _variable(b[part], shape, 1)
        if sign == 1:
            jet = _kummer_series(ja, jb, x[part])
        else:
            jet = _kummer_series(jb - ja, jb, -x[part]) * np.exp(x[part])
        out[part] = jet[i, j]
    return out * (math.factorial(i) * math.factorial(j))


# ---------------------------------------------------------------- hyp2f1

def _gauss_series(a, b, c, z):
    """Jet of ``2F1(a, b; c; z) = sum_k (a)_k (b)_k / (c)_k z^k / k!`` for ``0 <= z < 1``,
    and per point whether it converged."""
    term = _constant(np.ones_like(z), a.shape[:2])
    total = term.copy()
    done = np.zeros(z.shape, bool)
    for k in range(1, MAX_TERMS):
        term = _mul(_mul(term, _shift(a, k - 1)),
                    _mul(_shift(b, k - 1), _recip(_shift(c, k - 1)))) * (z / k)
        total = total + term
        growing = (np.abs((a[0, 0] + k) * (b[0, 0] + k) * z)
                   > np.abs((c[0, 0] + k) * (k + 1)))
        done = _converged(term, total) & ~growing
        if np.all(done):
            break
    return total, done


def hyp2f1_dabc(a, b, c, x, orders):
    """``d^(i+j+k)/da^i db^j dc^k hyp2f1(a, b, c, x)`` for ``orders = (i, j, k)``, at most
    two of them nonzero; NaN for ``x >= 1`` (where the series diverges), at the poles
    ``c = 0, -1, ...``, at NaN and where the series has not converged in ``MAX_TERMS``
    terms (``x`` within ~1e-3 of 1)."""
    a, b, c, x = np.broadcast_arrays(*(np.asarray(t, np.float64) for t in (a, b, c, x)))
    out = np.full(a.shape, np.nan)
    varying = [p for p in range(3) if orders[p]]
    shape = tuple(orders[p] + 1 for p in varying) + (1,) * (2 - len(varying))
    ok = (np.isfinite(a) & np.isfinite(b) & np.isfinite(c) & (x < 1)
          & ~((c <= 0) & (c == np.floor(c))))
    for part, pfaff in ((ok & (x >= 0), False), (ok & (x < 0), True)):
        if not part.any():
            continue
        ja, jb, jc = (_variable(v[part], shape, varying.index(p)) if p in varying
                      else _constant(v[part], shape) for p, v in enumerate((a, b, c)))
        xs = x[part]
        if pfaff:
            jet, done = _gauss_series(ja, jc - jb, jc, xs / (xs - 1))
            jet = _mul(jet, _exp(ja * -np.log1p(-xs)))
        else:
            jet, done = _gauss_series(ja, jb, jc, xs)
        value = jet[tuple(orders[p] for p in varying) + (0,) * (2 - len(varying))]
        out[part] = np.where(done, value, np.nan)
    return out * math.prod(math.factorial(n) for n in orders)
