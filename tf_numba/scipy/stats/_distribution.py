"""What SciPy's ``rv_continuous`` and ``rv_discrete`` do around a distribution's formulas,
on tf_numba primitives: argument parsing (shape parameters, then ``loc`` and ``scale``,
positionally or by keyword), promotion and broadcasting, NaN for invalid parameters, the
support, and the ``loc``/``scale`` transform.

A distribution is a subclass that states its standardized formulas (``_logpdf(z, *shapes)``,
``_cdf``, ``_ppf``, ...), its shape parameters with a valid placeholder value each, its
support and its parameter check; every public method (``logpdf``, ``cdf``, ``ppf``, ...) is
built here from them, so each method behaves as SciPy's around the formula:

- an invalid parameter (``scale <= 0``, a shape outside its domain) gives NaN, as SciPy;
- outside the support a density is 0 (``logpdf`` ``-inf``), a CDF 0 or 1, ``ppf`` of 0 and 1
  the ends of the support, ``ppf`` outside ``[0, 1]`` NaN;
- every formula sees only valid parameters and points inside the support (the rest are
  replaced by placeholders before it runs, the "double where"), so no derivative is ever
  ``0 * inf`` or ``0 * NaN``: derivatives are finite wherever the value is;
- where the value is NaN for an invalid parameter, so is its derivative in every argument,
  and where it is NaN for a NaN point, in that point, as JAX's formulas give it: a
  derivative never hides an invalid input (an optimizer that meets one stops on NaN instead
  of walking on).

A method a distribution lacks a formula for falls back as SciPy's do (``pdf = exp(logpdf)``,
``logcdf = log(cdf)``, ``sf = 1 - cdf``, ``logsf = log(sf)``, ``isf(q) = ppf(1 - q)``), or, if
there is nothing to fall back on (``ppf`` without an inverse), raises ``UnsupportedError``.
"""
import inspect

import numpy as np

import tf_numba.numpy as tnp

from ... import nn
from ...errors import UnsupportedError
from ...numpy import _promote as P
from ...ops import elementwise as ew
from ...tracebacks import api_boundary

NAN = float("nan")
INF = float("inf")

# method: (what its first argument is called, how it treats points outside the support)
CONTINUOUS_METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
DISCRETE_METHODS = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
# the fallback each method has when a distribution states no formula for it
FALLBACK = {
    "pdf": ("logpdf", tnp.exp), "pmf": ("logpmf", tnp.exp),
    "logcdf": ("cdf", tnp.log), "sf": ("cdf", lambda c: 1 - c), "logsf": ("sf", tnp.log),
}
# (below the support, above it) for each method that maps points to probabilities
OUTSIDE = {
    "logpdf": (-INF, -INF), "logpmf": (-INF, -INF), "cdf": (0.0, 1.0), "logcdf": (-INF, 0.0),
    "sf": (1.0, 0.0), "logsf": (0.0, -INF),
}
# with formulas for both tails, log(cdf) near 1 is log1p(-sf) (and log(sf) log1p(-cdf))
LOG_OF_EITHER = {"logcdf": ("cdf", "sf"), "logsf": ("sf", "cdf")}
DERIVED_NOTE = {"pdf": "exp(logpdf)", "pmf": "exp(logpmf)", "logcdf": "log(cdf)",
                "sf": "1 - cdf", "logsf": "log(sf)", "isf": "ppf(1 - q)"}
BOTH_TAILS_NOTE = {"logcdf": "log(cdf), or log1p(-sf) where cdf > 1/2",
                   "logsf": "log(sf), or log1p(-cdf) where sf > 1/2"}


def _log_of_either(p, other):
    """``log(p)`` where ``p < 1/2``, else ``log1p(-other)`` (``other = 1 - p``, accurate
    where ``p`` rounds to 1); each branch fed only its own side's values."""
    low = p < 0.5
    return tnp.where(low, tnp.log(tnp.where(low, p, 0.5)),
                     tnp.log1p(-tnp.where(low, 0.5, other)))


def _typed(dt, *values):
    """Python constants as 0-d arrays of ``dt``: a ``where`` between two Python floats
    would otherwise be float64 whatever the operands' dtype."""
    return [np.asarray(v, dt) if P.is_weak(v) else v for v in values]


def _nan_where(bad, like, *inputs):
    """0 where ``bad`` is false and NaN where it holds, with a derivative in each of
    ``inputs`` of 0 and NaN there: ``sum(inputs) * where(bad, NaN, 0)``, whose reverse mode
    multiplies a zero cotangent by 0, never by NaN, where ``bad`` is false."""
    nan, zero = _typed(P.dtype_of(like), NAN, 0.0)
    total = inputs[0]
    for x in inputs[1:]:
        total = total + x
    return total * tnp.where(bad, nan, zero)


def _all(conds):
    out = None
    for c in conds:
        out = c if out is None else tnp.logical_and(out, c)
    return out


class Distribution:
    """Base of ``Continuous`` and ``Discrete``: parsing, validity, the public methods.

    A subclass sets ``name``, ``shapes`` (``(("df", 1.0), ...)``: each shape parameter's
    name and a valid value that stands in for invalid ones), ``support`` (standardized
    ``(lo, hi)``, or ``_support(*shapes)``), ``_argcheck(*shapes)`` (a bool array or None
    for "always valid") and the formulas it has. ``accuracy`` maps a method to the largest
    error against SciPy the tests accept (relative, float64), and ``no_derivative`` maps a
    method to the arguments it is not differentiable in; both are rendered in
    ``docs/scipy.md``.
    """
    name = None
    shapes = ()
    integer_shapes = ()     # shape parameters that are counts: no derivative in them
    support = (-INF, INF)
    accuracy = {}
    no_derivative = {}
    notes = ""
    methods = ()
    point = "x"
    takes_scale = True
    isf_from_ppf = True     # a step function's isf is not ppf(1 - q) at its jumps

    def __init__(self):
        for method in self.methods:
            setattr(self, method, self._public(method))

    # -------------------------------------------------------------- description

    def _signature(self, method):
        first = "q" if method in ("ppf", "isf") else self.point
        params = [inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        params += [inspect.Parameter(s, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                   for s, _ in self.shapes]
        params.append(inspect.Parameter("loc", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=0))
        if self.takes_scale:
            params.append(inspect.Parameter("scale", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=1))
        return inspect.Signature(params)

    def _both_tails(self):
        return self.has_formula("cdf") and self.has_formula("sf")

    def derived_note(self, method):
        """How a derived method is computed, for its docstring and ``docs/scipy.md``."""
        if method in BOTH_TAILS_NOTE and self._both_tails():
            return BOTH_TAILS_NOTE[method]
        return DERIVED_NOTE[method]

    def has_formula(self, method):
        return callable(getattr(type(self), "_" + method, None))

    def provided(self, method):
        """How ``method`` is computed: 'formula', 'derived' (a fallback) or None (absent)."""
        if self.has_formula(method):
            return "formula"
        if method in FALLBACK and self.provided(FALLBACK[method][0]):
            return "derived"
        if method == "isf" and self.isf_from_ppf and self.has_formula("ppf"):
            return "derived"
        return None

    # -------------------------------------------------------------- the public methods

    def _public(self, method):
        sig = self._signature(method)
        qualname = f"{self.name}.{method}"
        dist = self

        def fn(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            values = list(bound.arguments.values())
            with np.errstate(all="ignore"):
                return P.scalar_result(dist._method(method, qualname, values))

        fn.__name__ = method
        fn.__qualname__ = qualname
        fn.__signature__ = sig
        fn.__doc__ = self._method_doc(method, sig)
        return api_boundary(fn, qualname)

    def _method_doc(self, method, sig):
        how = self.provided(method)
        how = "" if how == "formula" else f" Computed as ``{self.derived_note(method)}``." \
            if how == "derived" else " Not provided: raises ``UnsupportedError``."
        return f"``{self.name}.{method}{sig}``, as ``scipy.stats.{self.name}.{method}``.{how}"

    def _method(self, method, qualname, values):
        how = self.provided(method)
        if how is None:
            raise UnsupportedError(
                "no formula here (SciPy computes it numerically); compute "
                "it with scipy.stats on concrete arrays", op=qualname)
        if how == "derived":
            if method == "isf":
                return self._method("ppf", qualname, [1 - P.asarray(values[0])] + values[1:])
            if method in LOG_OF_EITHER and self._both_tails():
                mine, other = LOG_OF_EITHER[method]
                return _log_of_either(self._method(mine, qualname, values),
                                      self._method(other, qualname, values))
            base, finish = FALLBACK[method]
            return finish(self._method(base, qualname, values))
        point, *rest = nn.floats(qualname, *values)
        n = len(self.shapes)
        shapes, loc = rest[:n], rest[n]
        shapes = [ew.stop_gradient(v) if s in self.integer_shapes else v
                  for v, (s, _) in zip(shapes, self.shapes)]
        scale = rest[n + 1] if self.takes_scale else None
        valid = self._valid(shapes, scale)
        given = [v for v in (*shapes, scale) if v is not None]
        if valid is not None:
            # invalid parameters are replaced before any formula sees them
            shapes = [tnp.where(valid, s, ph) for s, (_, ph) in zip(shapes, self.shapes)]
            if scale is not None:
                scale = tnp.where(valid, scale, 1)
        if method in ("ppf", "isf"):
            out = self._quantile(method, point, shapes, loc, scale)
        else:
            out = self._probability(method, point, shapes, loc, scale)
        if valid is None:
            return out
        # NaN in the derivative of every argument, the point and loc too (JAX's formulas
        # give inf or NaN there: a zero would let an optimizer walk on)
        return tnp.where(valid, out, _nan_where(tnp.logical_not(valid), out, point, loc,
                                                *given))

    def _valid(self, shapes, scale):
        conds = [] if scale is None else [scale > 0]
        check = self._argcheck(*shapes)
        if check is not None:
            conds.append(check)
        return _all(conds)

    def _argcheck(self, *shapes):
        return None

    def _support(self, *shapes):
        return self.support

    def _interior(self, *shapes):
        """A point inside the support, where formulas are evaluated for points outside it."""
        lo, hi = self.support
        if lo == -INF:
            return 0.0 if hi == INF else hi - 1.0
        return lo + 1.0 if hi == INF else (lo + hi) / 2

    def _bounded(self):
        lo, hi = self.support
        return lo != -INF or hi != INF or type(self)._support is not Distribution._support


class Continuous(Distribution):
    """A distribution of a real variable (``rv_continuous``): ``loc`` and ``scale``."""
    methods = CONTINUOUS_METHODS

    def _probability(self, method, x, shapes, loc, scale):
        z = (x - loc) / scale
        formula = getattr(self, "_" + method)
        if not self._bounded():
            out = formula(z, *shapes)
        else:
            lo, hi = self._support(*shapes)
            inside = tnp.logical_and(z >= lo, z <= hi)
            below, above = _typed(P.dtype_of(z), *OUTSIDE[method])
            zs = tnp.where(inside, z, self._interior(*shapes))
            nan_z = tnp.isnan(z)
            out = tnp.where(inside, formula(zs, *shapes),
                            tnp.where(nan_z, _nan_where(nan_z, z, z),
                                      tnp.where(z < lo, below, above)))
        return out - tnp.log(scale) if method == "logpdf" else out

    def _quantile(self, method, q, shapes, loc, scale):
        inside = tnp.logical_and(q > 0, q < 1)
        lo, hi = _typed(P.dtype_of(q), *self._support(*shapes))
        if method == "isf":
            lo, hi = hi, lo
        z = self.__getattribute__("_" + method)(tnp.where(inside, q, 0.5), *shapes)
        z = tnp.where(inside, z, tnp.where(q == 0, lo, tnp.where(q == 1, hi, NAN)))
        return z * scale + loc


class Discrete(Distribution):
    """A distribution on the integers (``rv_discrete``): ``loc`` shifts, no ``scale``.

    ``pmf`` is 0 off the integers; ``cdf`` and ``sf`` are step functions, evaluated at
    ``floor(k - loc)``; ``ppf(q)`` is the least ``k`` with ``cdf(k) >= q`` (``ppf(0)`` is
    ``lo - 1``, as SciPy), ``isf(q)`` the least with ``sf(k) <= q``. None of them is
    differentiable in ``k`` or ``loc`` (their derivative there is 0), all but the
    quantiles (step functions, derivative 0) are in the shape parameters.
    """
    methods = DISCRETE_METHODS
    point = "k"
    takes_scale = False
    isf_from_ppf = False

    def _probability(self, method, k, shapes, loc, scale):
        # a pmf lives on the integers: no derivative in k (the formulas are smooth in it)
        k = ew.stop_gradient(k - loc)
        formula = getattr(self, "_" + method)
        lo, hi = self._support(*shapes)
        if method == "logpmf":
            inside = _all([k >= lo, k <= hi, tnp.floor(k) == k])
        else:
            k = tnp.floor(k)
            inside = tnp.logical_and(k >= lo, k <= hi)
        below, above = _typed(P.dtype_of(k), *OUTSIDE[method])
        ks = tnp.where(inside, k, self._interior(*shapes))
        return tnp.where(inside, formula(ks, *shapes),
                         tnp.where(tnp.isnan(k), NAN, tnp.where(k < lo, below, above)))

    def _interior(self, *shapes):
        lo, hi = self._support(*shapes)
        return lo

    def _quantile(self, method, q, shapes, loc, scale):
        inside = tnp.logical_and(q > 0, q < 1)
        lo, hi = _typed(P.dtype_of(q), *self._support(*shapes))
        first, last = (lo - 1, hi) if method == "ppf" else (hi, lo - 1)
        k = getattr(self, "_" + method)(tnp.where(inside, q, 0.5), *shapes)
        k = tnp.where(inside, k, tnp.where(q == 0, first, tnp.where(q == 1, last, NAN)))
        return k + loc
