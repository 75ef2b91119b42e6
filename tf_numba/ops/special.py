"""Special-function primitives: one table row each, as in ``elementwise.py``, and their
JVPs. Each is an elementwise primitive of real float operands (equal shapes or rank 0, one
dtype) computed by ``scipy.special`` (between compiled kernels under ``jit``).

Derivatives are written with primitives that have JVPs themselves, so derivative programs
can be differentiated again (``gammaln' = psi``, ``psi' = polygamma(1, .)``,
``polygamma(n, .)' = polygamma(n + 1, .)``). The parameter derivatives of ``gammainc`` and
``betainc``, which have no closed form, are primitives of their own (``gammainc_da``,
``betainc_dab``, computed in ``incomplete.py``) whose order is a parameter, so each of them
differentiates into the next order. The inverses (``gammaincinv``, ``betaincinv``, ...)
differentiate by the implicit-function rule at their value ``x = F^-1(y)``: ``dx/dy =
1 / F_x(x)`` and ``dx/da = -F_a(x) / F_x(x)``, with ``F_x`` the density in closed form
and ``F_a`` the parameter-derivative primitives, so they too differentiate to any order.
The derivatives of ``iv``/``ive`` in the order, of ``zeta`` in its exponent and of
``hyp1f1`` in its parameters are primitives too (``iv_dv``, ``zeta_ds``,
``riemann_zeta_ds``, ``hyp1f1_dab``, computed in ``parameter_series.py``), each of every
order. Derivatives not provided raise ``MissingRuleError`` naming the primitive and the
``jvp`` role: those in an integer order (``polygamma``, ``expn``, ``jv``, ``yn``).

``erf_inv`` is XLA's erfinv (Giles' polynomials, ``jax.lax.erf_inv``), which the normal
samplers use: a compiled loop of its own under ``jit`` (``lowering.loops.erf_inv_into``).

``discrete_quantile`` is ``scipy.stats``' ``ppf``/``isf`` of a discrete distribution (a
step function: derivative zero), for the ones whose quantile is a search.
"""
import math

import numpy as np

from ..core.linear import aval_of, defjvp, defzero
from ..core.ir import ShapedArray
from ..core.primitive import Primitive, register
from ..errors import DTypeError, MissingRuleError, UnsupportedError
from ..numerics import ERF_INV
from ..kernel_vocab.scalar_exprs import call, literal, typed, written
from . import elementwise as ew
from .elementwise import (COMPLEX, FLOAT, INEXACT, SAME, _abstract_eval, _coerce, _op, _special,
                          batch_elementwise)

SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2
SQRT_2PI = math.sqrt(2 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
SQRT1_2 = math.sqrt(0.5)


def _special2(name):
    """A scipy.special ufunc of several operands, imported on first use (as
    ``elementwise._special``), its result in the operands' dtype (some ufuncs only have
    float64 loops)."""
    def impl(*args):
        import scipy.special
        with np.errstate(all="ignore"):
            out = getattr(scipy.special, name)(*args)
        return np.asarray(out, np.result_type(*args))
    impl.__name__ = name
    return impl


def _part(name, index):
    """Output ``index`` of a scipy.special ufunc of two outputs (``fresnel``, ``sici``)."""
    def impl(x):
        import scipy.special
        with np.errstate(all="ignore"):
            out = getattr(scipy.special, name)(x)[index]
        return np.asarray(out, np.result_type(x))
    impl.__name__ = f"{name}_{index}"
    return impl


def _sph_harm_y(n, m, theta, phi):
    """SciPy's ``sph_harm_y`` (whose degree and order must be integers) in the complex
    dtype of the angles' precision."""
    import scipy.special
    dt = np.result_type(theta, np.complex64)
    with np.errstate(all="ignore"):
        out = scipy.special.sph_harm_y(np.asarray(n).astype(np.int64),
                                       np.asarray(m).astype(np.int64), theta, phi)
    return np.asarray(out, dt)


def _with_params(name, impl):
    def call(*args, **params):
        with np.errstate(all="ignore"):
            return np.asarray(impl(*args, **params), np.result_type(*args))
    call.__name__ = name
    return call


def _polygamma(n, x):
    import scipy.special
    with np.errstate(invalid="ignore"):   # scipy evaluates (-1)**(n+1) for NaN orders too
        return np.asarray(scipy.special.polygamma(n, x), np.result_type(x))


def _xlog_source(log):
    """``x * log(y)`` (or log1p), 0 where ``x == 0`` and ``y`` is not NaN, as SciPy."""
    def template(a, i, o):
        return typed(f"({literal(0, o)} if ({a[0]} == 0 and not np.isnan({a[1]})) else "
                     f"{a[0]} * {log([a[1]], i, i)})", o)
    return template


# the special functions that compile into kernels (the others run as NumPy steps)
LOWERINGS = {
    "lgamma": call("math.lgamma", math=True),
    "xlogy": written(_xlog_source(ew.LOG_SOURCE), math=True),
    "xlog1py": written(_xlog_source(lambda a, i, o: f"np.log1p({a[0]})"), math=True),
}

PRIMS = {}


def _declare(name, impl, accepts, out_rule):
    """A row of the table: the primitive ``name`` (its SciPy impl, the dtypes it accepts,
    its output dtype rule, its lowering if ``LOWERINGS`` has one) and its op function. Not
    added to ``elementwise.PRIMS``: that table is the core elementwise vocabulary."""
    prim = Primitive(name, _abstract_eval(name, accepts, out_rule), impl)
    PRIMS[name] = prim
    if name in LOWERINGS:
        register("lower", prim, LOWERINGS[name])
    return prim, _op(prim)


# The table: per primitive its SciPy impl, accepted dtypes and output dtype rule.
erfinv_p, erfinv = _declare("erfinv", _special("erfinv"), FLOAT, SAME)
erfcx_p, erfcx = _declare("erfcx", _special("erfcx"), FLOAT, SAME)  # exp(x**2) * erfc(x)
lgamma_p, lgamma = _declare("lgamma", _special("gammaln"), FLOAT, SAME)  # log|gamma(x)|
digamma_p, digamma = _declare("digamma", _special("psi"), FLOAT, SAME)
polygamma_p, polygamma = _declare("polygamma", _polygamma, FLOAT, SAME)  # (n, x); n integer-valued
ndtri_p, ndtri = _declare("ndtri", _special("ndtri"), FLOAT, SAME)
log_ndtr_p, log_ndtr = _declare("log_ndtr", _special("log_ndtr"), FLOAT, SAME)
xlogy_p, xlogy = _declare("xlogy", _special2("xlogy"), FLOAT, SAME)  # x * log(y), 0 where x == 0
# x * log1p(y), 0 where x == 0
xlog1py_p, xlog1py = _declare("xlog1py", _special2("xlog1py"), FLOAT, SAME)
gamma_p, gamma = _declare("gamma", _special2("gamma"), FLOAT, SAME)
gammasgn_p, gammasgn = _declare("gammasgn", _special2("gammasgn"), FLOAT, SAME)
# 1 / gamma(x), 0 at the poles
rgamma_p, rgamma = _declare("rgamma", _special2("rgamma"), FLOAT, SAME)
beta_p, beta = _declare("beta", _special2("beta"), FLOAT, SAME)
betaln_p, betaln = _declare("betaln", _special2("betaln"), FLOAT, SAME)
gammainc_p, gammainc = _declare("gammainc", _special2("gammainc"), FLOAT, SAME)  # (a, x): P(a, x)
# (a, x): Q(a, x)
gammaincc_p, gammaincc = _declare("gammaincc", _special2("gammaincc"), FLOAT, SAME)
betainc_p, betainc = _declare("betainc", _special2("betainc"), FLOAT, SAME)  # (a, b, x)
# (a, p): x, P(a, x) = p
gammaincinv_p, gammaincinv = _declare("gammaincinv", _special2("gammaincinv"), FLOAT, SAME)
# (a, q): x, Q(a, x) = q
gammainccinv_p, gammainccinv = _declare("gammainccinv", _special2("gammainccinv"), FLOAT, SAME)
# (a, b, y): I_x(a, b) = y
betaincinv_p, betaincinv = _declare("betaincinv", _special2("betaincinv"), FLOAT, SAME)
# 1 - I_x(a, b) = y
betainccinv_p, betainccinv = _declare("betainccinv", _special2("betainccinv"), FLOAT, SAME)
ndtri_exp_p, ndtri_exp = _declare("ndtri_exp", _special("ndtri_exp"), FLOAT, SAME)  # ndtri(exp(y))
expn_p, expn = _declare("expn", _special2("expn"), FLOAT, SAME)  # (n, x); n integer-valued
exp1_p, exp1 = _declare("exp1", _special2("exp1"), FLOAT, SAME)
expi_p, expi = _declare("expi", _special2("expi"), FLOAT, SAME)
i0_p, i0 = _declare("i0", _special2("i0"), FLOAT, SAME)
i0e_p, i0e = _declare("i0e", _special2("i0e"), FLOAT, SAME)
i1_p, i1 = _declare("i1", _special2("i1"), FLOAT, SAME)
i1e_p, i1e = _declare("i1e", _special2("i1e"), FLOAT, SAME)
iv_p, iv = _declare("iv", _special2("iv"), FLOAT, SAME)  # (v, x)
ive_p, ive = _declare("ive", _special2("ive"), FLOAT, SAME)  # (v, x)
jv_p, jv = _declare("jv", _special2("jv"), FLOAT, SAME)  # (n, x); jn for integer n
yn_p, yn = _declare("yn", _special2("yn"), FLOAT, SAME)  # (n, x); n integer-valued
zeta_p, zeta = _declare("zeta", _special2("zeta"), FLOAT, SAME)  # (x, q): Hurwitz zeta
# zeta(x), continued to x < 1
riemann_zeta_p, riemann_zeta = _declare("riemann_zeta", _special2("zeta"), FLOAT, SAME)
poch_p, poch = _declare("poch", _special2("poch"), FLOAT, SAME)  # (z, m)
binom_p, binom = _declare("binom", _special2("binom"), FLOAT, SAME)  # (n, k)
hyp1f1_p, hyp1f1 = _declare("hyp1f1", _special2("hyp1f1"), FLOAT, SAME)  # (a, b, x)
spence_p, spence = _declare("spence", _special2("spence"), FLOAT, SAME)
dawsn_p, dawsn = _declare("dawsn", _special2("dawsn"), FLOAT, SAME)  # Dawson's integral
fresnel_s_p, fresnel_s = _declare("fresnel_s", _part("fresnel", 0), FLOAT, SAME)
fresnel_c_p, fresnel_c = _declare("fresnel_c", _part("fresnel", 1), FLOAT, SAME)
sici_si_p, sici_si = _declare("sici_si", _part("sici", 0), FLOAT, SAME)  # sine integral
sici_ci_p, sici_ci = _declare("sici_ci", _part("sici", 1), FLOAT, SAME)  # cosine integral
owens_t_p, owens_t = _declare("owens_t", _special2("owens_t"), FLOAT, SAME)  # (h, a)
hyp2f1_p, hyp2f1 = _declare("hyp2f1", _special2("hyp2f1"), FLOAT, SAME)  # (a, b, c, x)
# the Faddeeva function exp(-z**2) erfc(-iz), of complex z
wofz_p, wofz = _declare("wofz", _special2("wofz"), INEXACT, SAME)
# (n, m, theta, phi): the spherical harmonic Y_n^m, complex
sph_harm_y_p, sph_harm_y = _declare("sph_harm_y", _sph_harm_y, FLOAT, COMPLEX)


def _no_order_derivative(g, ans, n, x):
    raise MissingRuleError("polygamma", "jvp")


# JVP partials, ``partial(g, ans, *primals)``; every one is itself differentiable.
UNARY_JVP = {
    # erfinv'(x) = sqrt(pi)/2 exp(erfinv(x)**2)
    "erfinv": lambda g, ans, x: ew.mul(g, ew.mul(ew.exp(ew.mul(ans, ans)), SQRT_PI_OVER_2)),
    "erfcx": lambda g, ans, x: ew.mul(g, ew.sub(ew.mul(ew.mul(x, ans), 2), TWO_OVER_SQRT_PI)),
    "lgamma": lambda g, ans, x: ew.mul(g, digamma(x)),
    "digamma": lambda g, ans, x: ew.mul(g, polygamma(1, x)),
    # ndtri'(p) = 1 / pdf(ndtri(p))
    "ndtri": lambda g, ans, x: ew.mul(g, ew.mul(ew.exp(ew.mul(ew.mul(ans, ans), 0.5)),
                                                SQRT_2PI)),
    # pdf(x) / cdf(x) = sqrt(2/pi) / erfcx(-x/sqrt 2): no cancellation in the far left tail
    "log_ndtr": lambda g, ans, x: ew.div(
        ew.mul(g, SQRT_2_OVER_PI), erfcx(ew.mul(x, -math.sqrt(0.5)))),
}
BINARY_JVP = {
    "polygamma": (_no_order_derivative,
                  lambda g, ans, n, x: ew.mul(g, polygamma(ew.add(n, 1), x))),
    "xlogy": (lambda g, ans, x, y: ew.mul(g, ew.log(y)),
              lambda g, ans, x, y: ew.mul(g, ew.div(x, y))),
    "xlog1py": (lambda g, ans, x, y: ew.mul(g, ew.log1p(y)),
                lambda g, ans, x, y: ew.mul(g, ew.div(x, ew.add(y, 1)))),
}


# ---------------------------------------------------------------- erf_inv (XLA's)

def _erf_inv_eval(x):
    if x.dtype not in ERF_INV:
        raise DTypeError(f"needs float32 or float64, got {x.dtype.name}", op="erf_inv")
    return ShapedArray(x.shape, x.dtype)


def _erf_inv_impl(x):
    """``ERF_INV``'s ranges in NumPy: every polynomial everywhere, then a select (the
    compiled loop, ``lowering.loops.erf_inv_into``, computes the same bits but evaluates
    the outer ranges only where they are needed)."""
    x = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1 - x) * (1 + x))
        root = np.sqrt(w)
        result = None
        for i in reversed(range(len(ERF_INV[x.dtype]))):
            bound, shift, coefficients = ERF_INV[x.dtype][i]
            t = (w if i == 0 else root) - shift
            p = coefficients[0]
            for c in coefficients[1:]:
                p = c + p * t
            result = p if result is None else np.where(w < bound, p, result)
        return np.asarray(result * x)


# XLA's erf_inv (``jax.lax.erf_inv``): the inverse of erf on (-1, 1) to a few ulps, which
# random.normal and truncated_normal sample through (``erfinv`` in the table is SciPy's).
erf_inv_p = Primitive("erf_inv", _erf_inv_eval, _erf_inv_impl)
PRIMS["erf_inv"] = erf_inv_p
erf_inv = _op(erf_inv_p)
UNARY_JVP["erf_inv"] = UNARY_JVP["erfinv"]


# ---------------------------------------------------------------- parameter derivatives

def _gammainc_da_impl(a, x, *, order):
    from .incomplete import gammainc_da as impl
    return impl(a, x, order)


def _betainc_dab_impl(a, b, x, *, da, db):
    from .incomplete import betainc_dab as impl
    return impl(a, b, x, da, db)


def _param_eval(name):
    base = _abstract_eval(name, FLOAT, SAME)
    return lambda *avals, **params: base(*avals)


# d^order/da^order gammainc(a, x), and d^(da+db)/da^da db^db betainc(a, b, x)
gammainc_da_p = Primitive("gammainc_da", _param_eval("gammainc_da"),
                          _with_params("gammainc_da", _gammainc_da_impl))
betainc_dab_p = Primitive("betainc_dab", _param_eval("betainc_dab"),
                          _with_params("betainc_dab", _betainc_dab_impl))
PRIMS["gammainc_da"], PRIMS["betainc_dab"] = gammainc_da_p, betainc_dab_p


def _series_impl(name):
    def impl(*args, **params):
        from . import parameter_series
        return getattr(parameter_series, name)(*args, **params)
    return _with_params(name, impl)


# d^order/dv^order iv(v, x) (ive's if scaled), d^order/ds^order zeta(s, q) (Hurwitz) and
# riemann_zeta(s), d^(da+db)/da^da db^db hyp1f1(a, b, x): ``parameter_series.py``
iv_dv_p = Primitive("iv_dv", _param_eval("iv_dv"), _series_impl("iv_dv"))
zeta_ds_p = Primitive("zeta_ds", _param_eval("zeta_ds"), _with_params(
    "zeta_ds", lambda s, q, *, n: _series_impl("zeta_ds")(s, q, n=n, riemann=False)))
riemann_zeta_ds_p = Primitive("riemann_zeta_ds", _param_eval("riemann_zeta_ds"), _with_params(
    "riemann_zeta_ds", lambda s, *, n: _series_impl("zeta_ds")(s, s, n=n, riemann=True)))
hyp1f1_dab_p = Primitive("hyp1f1_dab", _param_eval("hyp1f1_dab"), _series_impl("hyp1f1_dab"))
# d^(i+j+k)/da^i db^j dc^k hyp2f1(a, b, c, x), at most two of the orders nonzero
hyp2f1_dabc_p = Primitive("hyp2f1_dabc", _param_eval("hyp2f1_dabc"),
                          _series_impl("hyp2f1_dabc"))
for _prim in (iv_dv_p, zeta_ds_p, riemann_zeta_ds_p, hyp1f1_dab_p, hyp2f1_dabc_p):
    PRIMS[_prim.name] = _prim


def iv_dv(v, x, n=1, scaled=False):
    """``d^n/dv^n iv(v, x)``, or ``ive``'s if ``scaled`` (``parameter_series.iv_dv``)."""
    return iv_dv_p.bind(*_coerce([v, x]), n=n, scaled=scaled)


def zeta_ds(s, q, n=1):
    """``d^n/ds^n zeta(s, q)``, the Hurwitz zeta (``parameter_series.zeta_ds``)."""
    return zeta_ds_p.bind(*_coerce([s, q]), n=n)


def riemann_zeta_ds(s, n=1):
    """``d^n/ds^n`` of the Riemann zeta, continued to ``s < 1``."""
    return riemann_zeta_ds_p.bind(*_coerce([s]), n=n)


def hyp1f1_dab(a, b, x, i=1, j=0):
    """``d^(i+j)/da^i db^j hyp1f1(a, b, x)`` (``parameter_series.hyp1f1_dab``)."""
    return hyp1f1_dab_p.bind(*_coerce([a, b, x]), i=i, j=j)


def hyp2f1_dabc(a, b, c, x, orders=(1, 0, 0)):
    """``d^(i+j+k)/da^i db^j dc^k hyp2f1(a, b, c, x)`` for ``orders = (i, j, k)``
    (``parameter_series.hyp2f1_dabc``)."""
    return hyp2f1_dabc_p.bind(*_coerce([a, b, c, x]), orders=tuple(orders))


def gammainc_da(a, x, order=1):
    """``d^order/da^order gammainc(a, x)`` (``incomplete.gammainc_da``)."""
    return gammainc_da_p.bind(*_coerce([a, x]), order=order)


def betainc_dab(a, b, x, da=1, db=0):
    """``d^(da+db)/da^da db^db betainc(a, b, x)`` (``incomplete.betainc_dab``)."""
    return betainc_dab_p.bind(*_coerce([a, b, x]), da=da, db=db)


# ---------------------------------------------------------------- discrete quantiles

def _discrete_quantile_impl(q, *shapes, dist, method):
    import scipy.stats
    return getattr(getattr(scipy.stats, dist), method)(q, *shapes)


# ``scipy.stats.<dist>.<method>(q, *shapes)`` of a discrete distribution (``ppf`` or
# ``isf``): the least count whose CDF reaches ``q`` (whose SF falls to it), found by
# SciPy's searches (cdflib's inversions, boost's quantiles, bisection), which have no
# closed form here; a step function of every argument, so its derivative is zero
discrete_quantile_p = Primitive("discrete_quantile", _param_eval("discrete_quantile"),
                                _with_params("discrete_quantile", _discrete_quantile_impl))
PRIMS["discrete_quantile"] = discrete_quantile_p
defzero(discrete_quantile_p)


def discrete_quantile(q, *shapes, dist, method):
    """``scipy.stats.<dist>.<method>(q, *shapes)`` (``ppf``/``isf``), derivative zero."""
    return discrete_quantile_p.bind(*_coerce([q, *shapes]), dist=dist, method=method)


def exp_partial(g, i, j):
    """``d^(i+j)/da^i db^j exp(G) / exp(G)`` from ``g(p, q) = d^(p+q) G/da^p db^q``: the
    complete Bell polynomial, by Leibniz's rule on ``d/da exp(G) = G_a exp(G)``."""
    table = {(0, 0): None}     # None: the polynomial 1

    def term(coef, gpart, rest):
        t = gpart if rest is None else ew.mul(gpart, rest)
        return t if coef == 1 else ew.mul(t, float(coef))

    def bell(p, q):
        if (p, q) in table:
            return table[(p, q)]
        out = None
        if p > 0:       # differentiate B(p - 1, q) exp(G) once more in a
            pairs = [(k, m) for k in range(p) for m in range(q + 1)]
            parts = [term(math.comb(p - 1, k) * math.comb(q, m), g(k + 1, m),
                          bell(p - 1 - k, q - m)) for k, m in pairs]
        else:           # in b
            parts = [term(math.comb(q - 1, m), g(0, m + 1), bell(0, q - 1 - m))
                     for m in range(q)]
        for t in parts:
            out = t if out is None else ew.add(out, t)
        table[(p, q)] = out
        return out

    return bell(i, j)


def _gamma_density(a, x, order):
    """``d^order/da^order`` of ``x^(a-1) e^-x / Gamma(a)`` (``d/dx gammainc``), 0 at
    ``x = 0`` where the density is 0 for every ``a`` near a point with ``a > 1``."""
    pos = ew.gt(x, 0)
    xs = ew.select(pos, x, 1.0)    # the "double where": log(0) never reaches a derivative
    log_x = ew.log(xs)
    dens = ew.exp(ew.sub(ew.sub(xlogy(ew.sub(a, 1.0), xs), xs), lgamma(a)))

    def g(p, q):
        return ew.sub(log_x, digamma(a)) if p == 1 else ew.neg(polygamma(p - 1, a))  # noqa

    if order:
        dens = ew.mul(dens, exp_partial(g, order, 0))
    return ew.select(pos, dens, ew.select(ew.eq(x, 0), _pdf_at_zero(a, order), dens))


def _full_like(x, value):
    """``value`` in the shape and dtype of ``x``, with no derivative path to ``x`` (so a
    branch of NaN or inf never meets a zero cotangent: 0 * inf is NaN)."""
    return ew.select(ew.eq(x, x), np.asarray(value, aval_of(x).dtype),
                     np.asarray(value, aval_of(x).dtype))


def _pdf_at_zero(a, order):
    """x^(a-1)/Gamma(a) at x = 0: inf for a < 1, 1/Gamma(1) = 1 for a = 1, else 0; its
    a-derivatives are 0 for a > 1 and left infinite or NaN below."""
    below = ew.select(ew.lt(a, 1.0), _full_like(a, np.inf), _full_like(a, np.nan))
    at_one = ew.select(ew.eq(a, 1.0), _full_like(a, 1.0 if order == 0 else np.nan), below)
    return ew.select(ew.gt(a, 1.0), _full_like(a, 0.0), at_one)


def _beta_density(a, b, x, i, j):
    """``d^(i+j)/da^i db^j`` of ``x^(a-1) (1-x)^(b-1) / B(a, b)`` (``d/dx betainc``)."""
    inside = ew.and_(ew.gt(x, 0), ew.lt(x, 1))
    xs = ew.select(inside, x, 0.5)
    log_x, log_1mx = ew.log(xs), ew.log1p(ew.neg(xs))
    dens = ew.exp(ew.sub(ew.add(xlogy(ew.sub(a, 1.0), xs),
                                xlog1py(ew.sub(b, 1.0), ew.neg(xs))),
                         betaln(a, b)))
    ab = ew.add(a, b)

    def g(p, q):
        if p + q == 1:
            own, lg = (a, log_x) if p else (b, log_1mx)
            return ew.add(ew.sub(lg, digamma(own)), digamma(ab))
        shared = polygamma(p + q - 1, ab)
        if p and q:
            return shared
        return ew.sub(shared, polygamma(p + q - 1, a if p else b))

    if i or j:
        dens = ew.mul(dens, exp_partial(g, i, j))
    # at the ends: the density's limit (0 or inf or 1 / B), as d/dx of SciPy's values
    return ew.select(inside, dens, _beta_density_at_ends(a, b, x, i + j))


def _beta_density_at_ends(a, b, x, order):
    """The density's limit at ``x = 0`` (power ``a``) or ``x = 1`` (power ``b``): 0 above
    power 1, inf below, ``1 / B(a, b)`` at 1 (its parameter derivatives left NaN)."""
    power = ew.select(ew.le(x, 0), a, b)
    edge = ew.or_(ew.eq(x, 0), ew.eq(x, 1))
    at_one = (ew.exp(ew.neg(betaln(a, b))) if order == 0
              else _full_like(x, np.nan))
    limit = ew.select(ew.gt(power, 1.0), _full_like(x, 0.0),
                      ew.select(ew.lt(power, 1.0), _full_like(x, np.inf), at_one))
    return ew.select(edge, limit, _full_like(x, np.nan))


def _pole(x):
    return ew.and_(ew.le(x, 0), ew.eq(ew.floor(x), x))


def _rgamma_partial(g, ans, x):
    """``-rgamma(x) psi(x)``; at the poles ``x = -n``, where both factors are 0 and
    infinite, its limit ``(-1)^n n!``, written ``cos(pi x) gamma(1 - x)``."""
    pole = _pole(x)
    xs = ew.select(pole, 0.5, x)
    regular = ew.neg(ew.mul(rgamma(xs), digamma(xs)))
    at_pole = ew.mul(ew.cos(ew.mul(x, math.pi)),
                     gamma(ew.sub(1.0, ew.select(pole, x, 0.5))))
    return ew.mul(g, ew.select(pole, at_pole, regular))


def _no_derivative(name):
    def partial(g, ans, *primals, **params):
        raise MissingRuleError(name, "jvp")
    return partial


def _integer_argument(name, what):
    """The partial in an argument that is an integer (JAX takes only integer arrays
    there, whose derivative is a float0 zero): an error that says so, not a zero."""
    def partial(g, ans, *primals, **params):
        raise UnsupportedError(
            f"{what} is an integer, and {name} has no derivative in it (JAX takes only "
            "integers there); pass it as an int (grad(..., allow_int=True) gives it a "
            "float0 zero) and differentiate in the other arguments", op=name)
    return partial


def _gamma_ratio(ans, up, down):
    """``ans * (psi(up) - psi(down))``: the derivative of a ratio of gamma functions."""
    return ew.mul(ans, ew.sub(digamma(up), digamma(down)))


def _nonzero(x, value):
    """(x != 0, x with ``value`` where it is 0): for the double where around ``1/x``."""
    nz = ew.ne(x, 0)
    return nz, ew.select(nz, x, value)


def _i1_partial(g, ans, x):
    nz, xs = _nonzero(x, 1.0)            # i1'(0) = i0(0) - 1/2 = 1/2
    return ew.mul(g, ew.select(nz, ew.sub(i0(x), ew.div(i1(xs), xs)), 0.5))


def _i1e_partial(g, ans, x):
    nz, xs = _nonzero(x, 1.0)
    regular = ew.sub(ew.sub(i0e(x), ew.div(i1e(xs), xs)), ew.mul(ew.sign(x), ans))  # noqa
    return ew.mul(g, ew.select(nz, regular, 0.5))


def _spence_partial(g, ans, x):
    """spence(x) = int_1^x log(t) / (1 - t) dt: derivative log(x) / (1 - x), -1 at x = 1."""
    one = ew.eq(x, 1.0)
    xs = ew.select(one, 2.0, x)
    return ew.mul(g, ew.select(one, -1.0, ew.div(ew.log(xs), ew.sub(1.0, xs))))


def _bessel_recurrence(fn, sign):
    """``(f(n - 1, x) + sign * f(n + 1, x)) / 2``: d/dx of I_v (sign +1), J_n, Y_n (-1)."""
    def partial(g, ans, n, x):
        both = ew.add(fn(ew.sub(n, 1.0), x), ew.mul(fn(ew.add(n, 1.0), x), float(sign)))
        return ew.mul(g, ew.mul(both, 0.5))
    return partial


def _expn_partial(g, ans, n, x):
    """``E_n' = -E_(n-1)``; for ``n = 0`` (``E_0 = e^-x / x``, SciPy has no ``E_-1``)
    ``-e^-x (x + 1) / x**2``."""
    zero = ew.eq(n, 0)
    lower = ew.neg(expn(ew.select(zero, 1.0, ew.sub(n, 1.0)), x))
    at_zero = ew.neg(ew.div(ew.mul(ew.exp(ew.neg(x)), ew.add(x, 1.0)), ew.mul(x, x)))
    return ew.mul(g, ew.select(zero, at_zero, lower))


def _ive_partial(g, ans, v, x):
    d = _bessel_recurrence(ive, 1)(g, ans, v, x)
    return ew.sub(d, ew.mul(g, ew.mul(ew.sign(x), ans)))


UNARY_JVP.update({
    "gamma": lambda g, ans, x: ew.mul(g, ew.mul(ans, digamma(x))),
    "gammasgn": None,
    "rgamma": _rgamma_partial,
    "exp1": lambda g, ans, x: ew.mul(g, ew.neg(ew.div(ew.exp(ew.neg(x)), x))),
    "expi": lambda g, ans, x: ew.mul(g, ew.div(ew.exp(x), x)),
    "i0": lambda g, ans, x: ew.mul(g, i1(x)),
    "i0e": lambda g, ans, x: ew.mul(g, ew.sub(i1e(x), ew.mul(ew.sign(x), ans))),  # noqa
    "i1": _i1_partial,
    "i1e": _i1e_partial,
    "spence": _spence_partial,
    "riemann_zeta": lambda g, ans, x: ew.mul(g, riemann_zeta_ds(x)),
})
BINARY_JVP.update({
    "beta": (lambda g, ans, a, b: ew.mul(g, _gamma_ratio(ans, a, ew.add(a, b))),
             lambda g, ans, a, b: ew.mul(g, _gamma_ratio(ans, b, ew.add(a, b)))),
    "betaln": (lambda g, ans, a, b: ew.mul(g, _gamma_ratio(1.0, a, ew.add(a, b))),
               lambda g, ans, a, b: ew.mul(g, _gamma_ratio(1.0, b, ew.add(a, b)))),
    "gammainc": (lambda g, ans, a, x: ew.mul(g, gammainc_da(a, x)),
                 lambda g, ans, a, x: ew.mul(g, _gamma_density(a, x, 0))),
    "gammaincc": (lambda g, ans, a, x: ew.neg(ew.mul(g, gammainc_da(a, x))),
                  lambda g, ans, a, x: ew.neg(ew.mul(g, _gamma_density(a, x, 0)))),
    "expn": (_no_derivative("expn"), _expn_partial),
    "iv": (lambda g, ans, v, x: ew.mul(g, iv_dv(v, x)),
           _bessel_recurrence(iv, 1)),
    "ive": (lambda g, ans, v, x: ew.mul(g, iv_dv(v, x, 1, True)), _ive_partial),
    "jv": (_no_derivative("jv"), _bessel_recurrence(jv, -1)),
    "yn": (_no_derivative("yn"), _bessel_recurrence(yn, -1)),
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    "zeta": (lambda g, ans, x, q: ew.mul(g, zeta_ds(x, q)),
             lambda g, ans, x, q: ew.neg(ew.mul(g, ew.mul(x, zeta(ew.add(x, 1.0), q))))),  # noqa
    "poch": (lambda g, ans, z, m: ew.mul(g, _gamma_ratio(ans, ew.add(z, m), z)),
             lambda g, ans, z, m: ew.mul(g, ew.mul(ans, digamma(ew.add(z, m))))),
})


def _inverse(density, *param_partials, sign=1):
    """JVP partials of ``x = F^-1(params, y)`` from ``F``'s partials at ``x = ans``: each
    parameter's ``-F_p / F_x``, then ``y``'s ``1 / F_x`` (implicit-function rule).
    ``density(*params, x)`` and ``param_partials`` are those of the increasing function
    (``gammainc``, ``betainc``); ``sign=-1`` inverts its complement ``1 - F``, whose
    partials are all negated: the parameter terms are unchanged, ``y``'s is negated."""
    def param(partial):
        return lambda g, ans, *args: ew.neg(ew.div(ew.mul(g, partial(*args[:-1], ans)),
                                                   density(*args[:-1], ans)))

    def point(g, ans, *args):
        out = ew.div(g, density(*args[:-1], ans))
        return out if sign == 1 else ew.neg(out)
    return tuple(param(p) for p in param_partials) + (point,)


_gammainc_partials = (lambda a, x: _gamma_density(a, x, 0), gammainc_da)
_betainc_partials = (lambda a, b, x: _beta_density(a, b, x, 0, 0),
                     lambda a, b, x: betainc_dab(a, b, x, 1, 0),
                     lambda a, b, x: betainc_dab(a, b, x, 0, 1))
BINARY_JVP.update({
    "gammaincinv": _inverse(*_gammainc_partials),
    "gammainccinv": _inverse(*_gammainc_partials, sign=-1),
})
# ndtri_exp' = 1 / log_ndtr'(x) = erfcx(-x/sqrt 2) sqrt(pi/2): no exp(y) / pdf(x) overflow
UNARY_JVP["ndtri_exp"] = lambda g, ans, y: ew.mul(
    g, ew.mul(erfcx(ew.mul(ans, -math.sqrt(0.5))), math.sqrt(math.pi / 2)))
TERNARY_JVP = {
    "betaincinv": _inverse(*_betainc_partials),
    "betainccinv": _inverse(*_betainc_partials, sign=-1),
    "betainc": (lambda g, ans, a, b, x: ew.mul(g, betainc_dab(a, b, x, 1, 0)),
                lambda g, ans, a, b, x: ew.mul(g, betainc_dab(a, b, x, 0, 1)),
                lambda g, ans, a, b, x: ew.mul(g, _beta_density(a, b, x, 0, 0))),
    # d/dx M(a, b, x) = a/b M(a + 1, b + 1, x)
    "hyp1f1": (lambda g, ans, a, b, x: ew.mul(g, hyp1f1_dab(a, b, x, 1, 0)),
               lambda g, ans, a, b, x: ew.mul(g, hyp1f1_dab(a, b, x, 0, 1)),
               lambda g, ans, a, b, x: ew.mul(g, ew.mul(ew.div(a, b), hyp1f1(
                   ew.add(a, 1.0), ew.add(b, 1.0), x)))),
}


def _sinc_partial(g, ans, x):
    """Si' = sin(x) / x, 1 at 0."""
    nz, xs = _nonzero(x, 1.0)
    return ew.mul(g, ew.select(nz, ew.div(ew.sin(xs), xs), 1.0))


def _owens_t_dh(g, ans, h, a):
    """dT/dh = -phi(h) erf(a h / sqrt 2) / 2, differentiating under Owen's integral
    ``T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``."""
    density = ew.mul(ew.exp(ew.mul(ew.mul(h, h), -0.5)), 1 / SQRT_2PI)
    return ew.mul(g, ew.mul(ew.mul(density, ew.erf(ew.mul(ew.mul(a, h), SQRT1_2))), -0.5))


def _owens_t_da(g, ans, h, a):
    """dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2)), the integrand at ``a``."""
    one_a2 = ew.add(ew.mul(a, a), 1.0)
    return ew.mul(g, ew.div(ew.exp(ew.mul(ew.mul(ew.mul(h, h), one_a2), -0.5)),
                            ew.mul(one_a2, 2 * math.pi)))


def _hyp2f1_dx(g, ans, a, b, c, x):
    """d/dx 2F1(a, b; c; x) = a b / c 2F1(a + 1, b + 1; c + 1; x) (DLMF 15.5.1)."""
    up = hyp2f1(ew.add(a, 1.0), ew.add(b, 1.0), ew.add(c, 1.0), x)
    return ew.mul(g, ew.mul(ew.div(ew.mul(a, b), c), up))


def _hyp2f1_dparam(p):
    """The partial of ``hyp2f1`` (or of one of its parameter derivatives) in parameter
    ``p`` (0, 1, 2: ``a``, ``b``, ``c``)."""
    def partial(g, ans, a, b, c, x, orders=(0, 0, 0)):
        up = tuple(n + (q == p) for q, n in enumerate(orders))
        if sum(1 for n in up if n) > 2:
            raise UnsupportedError(
                f"a derivative of hyp2f1 in all three of a, b and c at once (orders {up}) "
                "is not available; derivatives in up to two of them are",
                op="hyp2f1")
        return ew.mul(g, hyp2f1_dabc(a, b, c, x, up))
    return partial


def _hyp2f1_dabc_x(g, ans, a, b, c, x, *, orders):
    """d/dx of ``d^(i+j+k)/da^i db^j dc^k 2F1``: the same derivative of ``a b c^-1
    2F1(a+1, b+1; c+1; x)`` (DLMF 15.5.1) by Leibniz's rule (``a``'s and ``b``'s
    derivatives stop at the first, ``c^-1``'s m-th is ``(-1)^m m! c^-(m+1)``)."""
    i, j, k = orders
    up = [ew.add(v, 1.0) for v in (a, b, c)]
    out = None
    for p in range(min(i, 1) + 1):
        for q in range(min(j, 1) + 1):
            for m in range(k + 1):
                rest = (i - p, j - q, k - m)
                t = hyp2f1(*up, x) if rest == (0, 0, 0) else hyp2f1_dabc(*up, x, rest)
                coef = (math.comb(i, p) * math.comb(j, q) * math.comb(k, m) * (-1) ** m
                        * math.factorial(m))
                t = ew.mul(ew.div(t, ew.pow(c, float(m + 1)) if m else c), float(coef))
                t = ew.mul(t, a) if p == 0 else t
                t = ew.mul(t, b) if q == 0 else t
                out = t if out is None else ew.add(out, t)
    return ew.mul(g, out)


def _wofz_partial(g, ans, z):
    """w'(z) = -2 z w(z) + 2i / sqrt(pi) (DLMF 7.10.2)."""
    two_i = np.asarray(2j / math.sqrt(math.pi), aval_of(z).dtype)
    return ew.mul(g, ew.add(ew.mul(ew.mul(z, ans), -2.0), two_i))


def _sph_harm_dtheta(g, ans, n, m, theta, phi):
    """dY_n^m/dtheta = m cot(theta) Y_n^m + sqrt((n - m)(n + m + 1)) e^(-i phi) Y_n^(m+1)
    (the raising operator on the Legendre functions, Condon-Shortley phase as SciPy)."""
    raised = sph_harm_y(n, ew.add(m, 1.0), theta, phi)
    scale = ew.sqrt(ew.max(ew.mul(ew.sub(n, m), ew.add(ew.add(n, m), 1.0)), 0.0))
    turn = ew.exp(ew.complex(ew.mul(phi, 0.0), ew.neg(phi)))
    first = ew.mul(ans, ew.complex(ew.div(m, ew.tan(theta)), ew.mul(theta, 0.0)))
    second = ew.mul(ew.mul(raised, turn), ew.complex(scale, ew.mul(scale, 0.0)))
    return ew.mul(ew.complex(g, ew.mul(g, 0.0)), ew.add(first, second))


def _sph_harm_dphi(g, ans, n, m, theta, phi):
    """dY_n^m/dphi = i m Y_n^m."""
    return ew.mul(ew.complex(ew.mul(g, 0.0), ew.mul(g, m)), ans)


UNARY_JVP.update({
    "dawsn": lambda g, ans, x: ew.mul(g, ew.sub(1.0, ew.mul(ew.mul(x, ans), 2.0))),
    "fresnel_s": lambda g, ans, x: ew.mul(g, ew.sin(ew.mul(ew.mul(x, x), math.pi / 2))),
    "fresnel_c": lambda g, ans, x: ew.mul(g, ew.cos(ew.mul(ew.mul(x, x), math.pi / 2))),
    "sici_si": _sinc_partial,
    "sici_ci": lambda g, ans, x: ew.mul(g, ew.div(ew.cos(x), x)),
    "wofz": _wofz_partial,
})
BINARY_JVP["owens_t"] = (_owens_t_dh, _owens_t_da)
# binom = gamma(n + 1) / (gamma(k + 1) gamma(n - k + 1))
BINARY_JVP["binom"] = (
    lambda g, ans, n, k: ew.mul(g, _gamma_ratio(ans, ew.add(n, 1.0), ew.add(ew.sub(n, k), 1.0))),
    lambda g, ans, n, k: ew.mul(g, _gamma_ratio(ans, ew.add(ew.sub(n, k), 1.0), ew.add(k, 1.0))))
QUATERNARY_JVP = {
    # in the parameters by Gauss's series (JAX's too), in x by DLMF 15.5.1
    "hyp2f1": tuple(_hyp2f1_dparam(p) for p in range(3)) + (_hyp2f1_dx,),
    "sph_harm_y": (_integer_argument("sph_harm_y", "the degree n"),
                   _integer_argument("sph_harm_y", "the order m"),
                   _sph_harm_dtheta, _sph_harm_dphi),
}
defzero(PRIMS["gammasgn"])   # piecewise constant
for _name, _partial in UNARY_JVP.items():
    if _partial is not None:
        defjvp(PRIMS[_name], _partial)
for _name, _partials in {**BINARY_JVP, **TERNARY_JVP, **QUATERNARY_JVP}.items():
    defjvp(PRIMS[_name], *_partials)

defjvp(gammainc_da_p,
       lambda g, ans, a, x, *, order: ew.mul(g, gammainc_da(a, x, order + 1)),
       lambda g, ans, a, x, *, order: ew.mul(g, _gamma_density(a, x, order)))
defjvp(betainc_dab_p,
       lambda g, ans, a, b, x, *, da, db: ew.mul(g, betainc_dab(a, b, x, da + 1, db)),
       lambda g, ans, a, b, x, *, da, db: ew.mul(g, betainc_dab(a, b, x, da, db + 1)),
       lambda g, ans, a, b, x, *, da, db: ew.mul(g, _beta_density(a, b, x, da, db)))



def _iv_dv_x(g, ans, v, x, *, n, scaled):
    """d/dx of ``d^n/dv^n I_v(x)``: the n-th v-derivative of ``I_(v+1) + (v/x) I_v``
    (DLMF 10.29.2), so only orders above ``v`` appear; ``ive``'s also ``- sign(x) D_n``."""
    def d(order, at):
        if order == 0:
            return (ive if scaled else iv)(at, x)
        return iv_dv(at, x, order, scaled)
    out = ew.add(d(n, ew.add(v, 1.0)), ew.div(ew.mul(v, ans), x))
    out = ew.add(out, ew.div(ew.mul(d(n - 1, v), float(n)), x))
    if scaled:
        out = ew.sub(out, ew.mul(ew.sign(x), ans))
    return ew.mul(g, out)


def _zeta_ds_q(g, ans, s, q, *, n):
    """d/dq of ``d^n/ds^n zeta(s, q)``: the n-th s-derivative of ``-s zeta(s + 1, q)``."""
    up = ew.add(s, 1.0)
    lower = zeta(up, q) if n == 1 else zeta_ds(up, q, n - 1)
    out = ew.add(ew.mul(s, zeta_ds(up, q, n)), ew.mul(lower, float(n)))
    return ew.neg(ew.mul(g, out))


def _hyp1f1_dab_x(g, ans, a, b, x, *, i, j):
    """d/dx of ``d^(i+j)/da^i db^j M(a, b, x)``: the same derivative of ``a b^-1 M(a+1,
    b+1, x)`` (DLMF 13.3.15) by Leibniz's rule (``a``'s derivatives stop at the first,
    ``b^-1``'s m-th is ``(-1)^m m! b^-(m+1)``)."""
    a1, b1 = ew.add(a, 1.0), ew.add(b, 1.0)
    out = None
    for p in range(min(i, 1) + 1):
        for m in range(j + 1):
            rest = (hyp1f1(a1, b1, x) if (i - p, j - m) == (0, 0)
                    else hyp1f1_dab(a1, b1, x, i - p, j - m))
            coef = math.comb(i, p) * math.comb(j, m) * (-1) ** m * math.factorial(m)
            t = ew.mul(ew.div(rest, ew.pow(b, float(m + 1)) if m else b), float(coef))
            t = ew.mul(t, a) if p == 0 else t
            out = t if out is None else ew.add(out, t)
    return ew.mul(g, out)


defjvp(hyp2f1_dabc_p, *(_hyp2f1_dparam(p) for p in range(3)), _hyp2f1_dabc_x)
defjvp(iv_dv_p, lambda g, ans, v, x, *, n, scaled: ew.mul(g, iv_dv(v, x, n + 1, scaled)),
       _iv_dv_x)
defjvp(zeta_ds_p, lambda g, ans, s, q, *, n: ew.mul(g, zeta_ds(s, q, n + 1)), _zeta_ds_q)
defjvp(riemann_zeta_ds_p, lambda g, ans, s, *, n: ew.mul(g, riemann_zeta_ds(s, n + 1)))
defjvp(hyp1f1_dab_p,
       lambda g, ans, a, b, x, *, i, j: ew.mul(g, hyp1f1_dab(a, b, x, i + 1, j)),
       lambda g, ans, a, b, x, *, i, j: ew.mul(g, hyp1f1_dab(a, b, x, i, j + 1)),
       _hyp1f1_dab_x)

for _prim in PRIMS.values():
    batch_elementwise(_prim)
