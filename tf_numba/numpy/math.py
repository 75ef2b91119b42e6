"""Elementwise NumPy functions: the ufuncs and their composites, in NumPy's loop dtypes.

Each ufunc asks NumPy which loop it would run (``_promote.ufunc_loop``), casts and broadcasts
its operands to it, and then emits one primitive or a short exact composite of primitives.

>>> import tf_numba.numpy as tnp
>>> tnp.add(np.float32([1, 2]), 0.5)        # Python scalars are weak
array([1.5, 2.5], dtype=float32)
"""
import math as _math

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..ops import elementwise as ew
from ..ops import layout
from . import _promote as P

__all__ = []


def _dt(x):
    return aval_of(x).dtype


_shape = P.shape_of


def _full_like(x, value, dt):
    return layout.full(_shape(x), value, dt)


def _public(fn, name=None):
    """List ``fn`` in ``__all__`` under ``name`` (its own by default); the caller binds
    that name to it."""
    __all__.append(name or fn.__name__)
    return fn


# The docstring example of each ufunc: (arguments, NumPy's printed result).
_EXAMPLES = {
    "add": ("np.array([0.5, 2.0]), 3.0", 'array([3.5, 5. ])'),
    "subtract": ("np.array([0.5, 2.0]), 3.0", 'array([-2.5, -1. ])'),
    "multiply": ("np.array([0.5, 2.0]), 3.0", 'array([1.5, 6. ])'),
    "divide": ("np.array([0.5, 2.0]), 3.0", 'array([0.16666667, 0.66666667])'),
    "true_divide": ("np.array([0.5, 2.0]), 3.0", 'array([0.16666667, 0.66666667])'),
    "floor_divide": ("np.array([0.5, 2.0]), 3.0", 'array([0., 0.])'),
    "remainder": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "mod": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "fmod": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "power": ("np.array([0.5, 2.0]), 3.0", 'array([0.125, 8.   ])'),
    "float_power": ("np.array([0.5, 2.0]), 3.0", 'array([0.125, 8.   ])'),
    "negative": ("np.array([-1.5, 2.5])", 'array([ 1.5, -2.5])'),
    "positive": ("np.array([-1.5, 2.5])", 'array([-1.5,  2.5])'),
    "absolute": ("np.array([-1.5, 2.5])", 'array([1.5, 2.5])'),
    "abs": ("np.array([-1.5, 2.5])", 'array([1.5, 2.5])'),
    "fabs": ("np.array([-1.5, 2.5])", 'array([1.5, 2.5])'),
    "sign": ("np.array([-1.5, 2.5])", 'array([-1.,  1.])'),
    "square": ("np.array([0.5, 2.0])", 'array([0.25, 4.  ])'),
    "reciprocal": ("np.array([0.5, 2.0])", 'array([2. , 0.5])'),
    "exp": ("np.array([0.5, 2.0])", 'array([1.64872127, 7.3890561 ])'),
    "exp2": ("np.array([0.5, 2.0])", 'array([1.41421356, 4.        ])'),
    "expm1": ("np.array([0.5, 2.0])", 'array([0.64872127, 6.3890561 ])'),
    "log": ("np.array([0.5, 2.0])", 'array([-0.69314718,  0.69314718])'),
    "log2": ("np.array([0.5, 2.0])", 'array([-1.,  1.])'),
    "log10": ("np.array([0.5, 2.0])", 'array([-0.30103,  0.30103])'),
    "log1p": ("np.array([0.5, 2.0])", 'array([0.40546511, 1.09861229])'),
    "sqrt": ("np.array([0.5, 2.0])", 'array([0.70710678, 1.41421356])'),
    "cbrt": ("np.array([0.5, 2.0])", 'array([0.79370053, 1.25992105])'),
    "sin": ("np.array([0.5, 2.0])", 'array([0.47942554, 0.90929743])'),
    "cos": ("np.array([0.5, 2.0])", 'array([ 0.87758256, -0.41614684])'),
    "tan": ("np.array([0.5, 2.0])", 'array([ 0.54630249, -2.18503986])'),
    "arcsin": ("np.array([0.0, 0.5])", 'array([0.        , 0.52359878])'),
    "arccos": ("np.array([0.0, 0.5])", 'array([1.57079633, 1.04719755])'),
    "arctan": ("np.array([0.5, 2.0])", 'array([0.46364761, 1.10714872])'),
    "sinh": ("np.array([0.5, 2.0])", 'array([0.52109531, 3.62686041])'),
    "cosh": ("np.array([0.5, 2.0])", 'array([1.12762597, 3.76219569])'),
    "tanh": ("np.array([0.5, 2.0])", 'array([0.46211716, 0.96402758])'),
    "arcsinh": ("np.array([0.5, 2.0])", 'array([0.48121183, 1.44363548])'),
    "arccosh": ("np.array([1.0, 2.0])", 'array([0.       , 1.3169579])'),
    "arctanh": ("np.array([0.0, 0.5])", 'array([0.        , 0.54930614])'),
    "arctan2": ("np.array([0.5, 2.0]), 3.0", 'array([0.16514868, 0.5880026 ])'),
    "hypot": ("np.array([0.5, 2.0]), 3.0", 'array([3.04138127, 3.60555128])'),
    "deg2rad": ("np.array([0.5, 2.0])", 'array([0.00872665, 0.03490659])'),
    "radians": ("np.array([0.5, 2.0])", 'array([0.00872665, 0.03490659])'),
    "rad2deg": ("np.array([0.5, 2.0])", 'array([ 28.64788976, 114.59155903])'),
    "degrees": ("np.array([0.5, 2.0])", 'array([ 28.64788976, 114.59155903])'),
    "logaddexp": ("np.array([0.5, 2.0]), 3.0", 'array([3.07888973, 3.31326169])'),
    "logaddexp2": ("np.array([0.5, 2.0]), 3.0", 'array([3.23484058, 3.5849625 ])'),
    "floor": ("np.array([-1.5, 2.5])", 'array([-2.,  2.])'),
    "ceil": ("np.array([-1.5, 2.5])", 'array([-1.,  3.])'),
    "trunc": ("np.array([-1.5, 2.5])", 'array([-1.,  2.])'),
    "fix": ("np.array([-1.5, 2.5])", 'array([-1.,  2.])'),
    "rint": ("np.array([-1.5, 2.5])", 'array([-2.,  2.])'),
    "maximum": ("np.array([0.5, 2.0]), 3.0", 'array([3., 3.])'),
    "minimum": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "fmax": ("np.array([0.5, 2.0]), 3.0", 'array([3., 3.])'),
    "fmin": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "heaviside": ("np.array([0.5, 2.0]), 3.0", 'array([1., 1.])'),
    "copysign": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "nextafter": ("np.array([0.5, 2.0]), 3.0", 'array([0.5, 2. ])'),
    "signbit": ("np.array([1.0, -np.inf, np.nan])", 'array([False,  True, False])'),
    "spacing": ("np.array([1.0, -1.0])", 'array([ 2.22044605e-16, -2.22044605e-16])'),
    "conjugate": ("np.array([1 + 2j])", 'array([1.-2.j])'),
    "conj": ("np.array([1 + 2j])", 'array([1.-2.j])'),
    "isnan": ("np.array([1.0, -np.inf, np.nan])", 'array([False, False,  True])'),
    "isfinite": ("np.array([1.0, -np.inf, np.nan])", 'array([ True, False, False])'),
    "isinf": ("np.array([1.0, -np.inf, np.nan])", 'array([False,  True, False])'),
    "equal": ("np.array([0.5, 2.0]), 3.0", 'array([False, False])'),
    "not_equal": ("np.array([0.5, 2.0]), 3.0", 'array([ True,  True])'),
    "less": ("np.array([0.5, 2.0]), 3.0", 'array([ True,  True])'),
    "less_equal": ("np.array([0.5, 2.0]), 3.0", 'array([ True,  True])'),
    "greater": ("np.array([0.5, 2.0]), 3.0", 'array([False, False])'),
    "greater_equal": ("np.array([0.5, 2.0]), 3.0", 'array([False, False])'),
    "logical_and": ("np.array([True, False]), True", 'array([ True, False])'),
    "logical_or": ("np.array([True, False]), True", 'array([ True,  True])'),
    "logical_xor": ("np.array([True, False]), True", 'array([False,  True])'),
    "logical_not": ("np.array([True, False])", 'array([False,  True])'),
    "bitwise_and": ("np.array([5, 12]), 3", 'array([1, 0])'),
    "bitwise_or": ("np.array([5, 12]), 3", 'array([ 7, 15])'),
    "bitwise_xor": ("np.array([5, 12]), 3", 'array([ 6, 15])'),
    "invert": ("np.array([5, 12])", 'array([ -6, -13])'),
    "bitwise_not": ("np.array([5, 12])", 'array([ -6, -13])'),
    "bitwise_invert": ("np.array([5, 12])", 'array([ -6, -13])'),
    "left_shift": ("np.array([5, 12]), 3", 'array([40, 96])'),
    "right_shift": ("np.array([5, 12]), 3", 'array([0, 1])'),
}


def _ufunc(ufunc, compute, doc, name=None):
    """A tnp function for the NumPy ufunc ``ufunc`` computing ``compute`` on cast operands."""
    name = name or ufunc.__name__
    if ufunc.nin == 1:
        def fn(x, /, out=None, *, dtype=None, where=True):
            P.check_unsupported(name, out=(out, None), where=(where, True))
            return P.apply_ufunc(ufunc, name, compute, (x,), dtype)
    else:
        def fn(x1, x2, /, out=None, *, dtype=None, where=True):
            P.check_unsupported(name, out=(out, None), where=(where, True))
            return P.apply_ufunc(ufunc, name, compute, (x1, x2), dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    args, result = _EXAMPLES[name]
    fn.__doc__ = (f"{doc}\n\nAs ``numpy.{ufunc.__name__}``: NumPy's loop dtypes, NumPy "
                  f"broadcasting, Python scalars weak.\n\n>>> tnp.{name}({args})\n{result}")
    return _public(fn)


def _identity(x):
    return x


# ---------------------------------------------------------------- arithmetic

def _add(x, y):
    return ew.or_(x, y) if dtypes.is_bool(_dt(x)) else ew.add(x, y)


def _multiply(x, y):
    return ew.and_(x, y) if dtypes.is_bool(_dt(x)) else ew.mul(x, y)


def _reciprocal(x):
    if dtypes.is_inexact(_dt(x)):
        return ew.div(1, x)
    # C integer division 1/x: 0 unless |x| == 1; at 0 NumPy leaves INT_MIN for 32 and 64
    # bits and 0 for the narrower and the unsigned ints.
    info = np.iinfo(_dt(x))
    lowest = info.min if info.bits >= 32 else 0
    zero = _full_like(x, 0, _dt(x))
    if info.min == 0:
        return ew.select(ew.eq(x, 1), 1, zero)
    return ew.select(ew.eq(x, 1), 1, ew.select(ew.eq(x, -1), -1, ew.select(
        ew.eq(x, 0), lowest, zero)))


def _square(x):
    return _multiply(x, x)


add = _ufunc(np.add, _add, "Sum of ``x1`` and ``x2`` (logical or on bools).")
subtract = _ufunc(np.subtract, ew.sub, "Difference ``x1 - x2``.")
multiply = _ufunc(np.multiply, _multiply, "Product ``x1 * x2`` (logical and on bools).")
divide = _ufunc(np.divide, ew.div, "True division; int / int gives float64.")
true_divide = _ufunc(np.divide, ew.div,
                     "True division; int / int gives float64.", name="true_divide")
floor_divide = _ufunc(np.floor_divide, ew.floor_div, "Floor division ``x1 // x2``.")
remainder = _ufunc(np.remainder, ew.rem, "Remainder with the sign of the divisor (``x1 % x2``).")
mod = _ufunc(np.remainder, ew.rem, "Remainder with the sign of the divisor (``x1 % x2``).",
             name="mod")
fmod = _ufunc(np.fmod, ew.fmod, "C's fmod: remainder with the sign of the dividend.")
power = _ufunc(np.power, ew.pow, "``x1 ** x2``.")
float_power = _ufunc(np.float_power, ew.pow, "``x1 ** x2`` computed in float64 (or complex128).")
negative = _ufunc(np.negative, ew.neg, "``-x``.")
positive = _ufunc(np.positive, _identity, "``+x``.")
absolute = _ufunc(np.absolute, lambda x: x if dtypes.is_bool(_dt(x)) else ew.abs(x),
                  "Absolute value (the modulus of complex numbers).")
abs = _ufunc(np.absolute, lambda x: x if dtypes.is_bool(_dt(x)) else ew.abs(x),
             "Absolute value (the modulus of complex numbers).", name="abs")
fabs = _ufunc(np.fabs, ew.abs, "Absolute value of real numbers, as a float.")
sign = _ufunc(np.sign, ew.sign, "Sign: -1, 0 or 1 (``z / |z|`` for complex, as NumPy 2).")
square = _ufunc(np.square, _square, "``x * x``.")
reciprocal = _ufunc(np.reciprocal, _reciprocal,
                    "``1 / x`` (integer division for integers, as NumPy).")


def divmod(x1, x2, /):   # noqa: A001 - NumPy's name
    """``(x1 // x2, x1 % x2)``, as ``numpy.divmod``.

    >>> tnp.divmod(np.array([7, -7]), 2)
    (array([ 3, -4]), array([1, 1]))
    """
    return floor_divide(x1, x2), remainder(x1, x2)


_public(divmod)

# ---------------------------------------------------------------- exponentials and logs

exp = _ufunc(np.exp, ew.exp, "``e ** x``.")
exp2 = _ufunc(np.exp2, ew.exp2, "``2 ** x``.")
expm1 = _ufunc(np.expm1, ew.expm1, "``exp(x) - 1``, accurate near 0.")
log = _ufunc(np.log, ew.log, "Natural logarithm.")
log2 = _ufunc(np.log2, ew.log2, "Base-2 logarithm.")
log10 = _ufunc(np.log10, ew.log10, "Base-10 logarithm.")
log1p = _ufunc(np.log1p, ew.log1p, "``log(1 + x)``, accurate near 0.")
sqrt = _ufunc(np.sqrt, ew.sqrt, "Square root.")
cbrt = _ufunc(np.cbrt, ew.cbrt, "Real cube root.")
sin = _ufunc(np.sin, ew.sin, "Sine.")
cos = _ufunc(np.cos, ew.cos, "Cosine.")
tan = _ufunc(np.tan, ew.tan, "Tangent.")
arcsin = _ufunc(np.arcsin, ew.asin, "Inverse sine.")
arccos = _ufunc(np.arccos, ew.acos, "Inverse cosine.")
arctan = _ufunc(np.arctan, ew.atan, "Inverse tangent.")
sinh = _ufunc(np.sinh, ew.sinh, "Hyperbolic sine.")
cosh = _ufunc(np.cosh, ew.cosh, "Hyperbolic cosine.")
tanh = _ufunc(np.tanh, ew.tanh, "Hyperbolic tangent.")
arcsinh = _ufunc(np.arcsinh, ew.asinh, "Inverse hyperbolic sine.")
arccosh = _ufunc(np.arccosh, ew.acosh, "Inverse hyperbolic cosine.")
arctanh = _ufunc(np.arctanh, ew.atanh, "Inverse hyperbolic tangent.")

arctan2 = _ufunc(np.arctan2, ew.atan2, "Angle of the point ``(x2, x1)``, quadrant-aware.")
hypot = _ufunc(np.hypot, ew.hypot, "``sqrt(x1**2 + x2**2)`` without overflow.")


def _deg2rad(x):
    # NumPy's loop multiplies by pi/180 computed in the operand's own precision
    t = _dt(x).type
    return ew.mul(x, np.asarray(t(np.pi) / t(180), _dt(x)))


def _rad2deg(x):
    t = _dt(x).type
    return ew.mul(x, np.asarray(t(180) / t(np.pi), _dt(x)))


deg2rad = _ufunc(np.deg2rad, _deg2rad, "Degrees to radians.")
radians = _ufunc(np.radians, _deg2rad, "Degrees to radians.")
rad2deg = _ufunc(np.rad2deg, _rad2deg, "Radians to degrees.")
degrees = _ufunc(np.degrees, _rad2deg, "Radians to degrees.")


def _log_add(x, y, exp, log1p_scale, at_tie):
    """npy_logaddexp(2): ``max + log1p(exp(-|x - y|))``; equal infinities give
    ``x + at_tie`` (the difference would be NaN). Finite ties use the general branch too,
    which gives the same value and splits the derivative evenly between x and y."""
    d = ew.sub(x, y)
    pos = ew.gt(d, 0)
    big = ew.select(pos, x, y)
    tail = ew.log1p(exp(ew.select(pos, ew.neg(d), d)))
    if log1p_scale != 1:
        tail = ew.mul(tail, log1p_scale)
    infinite_tie = ew.and_(ew.eq(x, y), ew.eq(ew.abs(x), np.inf))
    return ew.select(infinite_tie, ew.add(x, at_tie), ew.add(big, tail))


def _logaddexp(x, y):
    return _log_add(x, y, ew.exp, 1, _math.log(2))


def _logaddexp2(x, y):
    # npy_log2_1p(t) = log1p(t) / ln 2
    return _log_add(x, y, ew.exp2, 1 / _math.log(2), 1)


logaddexp = _ufunc(np.logaddexp, _logaddexp, "``log(exp(x1) + exp(x2))`` without overflow.")
logaddexp2 = _ufunc(np.logaddexp2, _logaddexp2, "``log2(2**x1 + 2**x2)`` without overflow.")


def _ldexp(x, n):
    return ew.mul(x, ew.exp2(ew.convert_element_type(n, _dt(x))))


def ldexp(x1, x2, /):
    """``x1 * 2**x2`` (``x2`` integer), as ``numpy.ldexp``.

    >>> tnp.ldexp(np.array([1.5]), 3)
    array([12.])
    """
    return P.apply_ufunc(np.ldexp, "ldexp", _ldexp, (x1, x2))


_public(ldexp)

# ---------------------------------------------------------------- rounding


def _floor(x):
    return ew.floor(x) if dtypes.is_inexact(_dt(x)) else x


def _ceil(x):
    return ew.ceil(x) if dtypes.is_inexact(_dt(x)) else x


def _trunc(x):
    if not dtypes.is_inexact(_dt(x)):
        return x
    return ew.select(ew.lt(x, 0), ew.ceil(x), ew.floor(x))


def _rint(x):
    if dtypes.is_complex(_dt(x)):
        return ew.complex(ew.round(ew.real(x)), ew.round(ew.imag(x)))
    return ew.round(x)


floor = _ufunc(np.floor, _floor, "Largest integer <= x (integers are returned as they are).")
ceil = _ufunc(np.ceil, _ceil, "Smallest integer >= x (integers are returned as they are).")
trunc = _ufunc(np.trunc, _trunc, "Integer part, rounding towards zero.")
fix = _ufunc(np.trunc, _trunc,
             "Integer part, rounding towards zero (as ``numpy.fix``).", name="fix")
rint = _ufunc(np.rint, _rint, "Round to the nearest integer, halves to even.")


def round(a, decimals=0, out=None):  # noqa: A001 - NumPy's name
    """Round to ``decimals`` places, halves to even, as ``numpy.round``.

    Computes ``rint(a * 10**decimals) / 10**decimals`` in ``a``'s dtype like NumPy;
    integers with ``decimals >= 0`` are returned unchanged.

    >>> tnp.round(np.array([1.25, 2.5]), 1)
    array([1.2, 2.5])
    """
    P.check_unsupported("round", out=(out, None))
    decimals = P.concrete_int(decimals, "round", "decimals")
    x = P.asarray(a)
    if P.is_weak(x):
        x = np.asarray(x, dtypes.of_scalar(x))
    dt = _dt(x)
    if not dtypes.is_inexact(dt):
        if decimals >= 0:
            return P.scalar_result(x)
        rounded = round(ew.convert_element_type(x, dtypes.float64), decimals)
        return P.scalar_result(ew.convert_element_type(rounded, dt))
    if dtypes.is_complex(dt):
        parts = [round(ew.real(x), decimals), round(ew.imag(x), decimals)]
        return P.scalar_result(ew.complex(*parts))
    if decimals == 0:
        return P.scalar_result(ew.round(x))
    if decimals > 0:
        f = 10.0 ** decimals
        return P.scalar_result(ew.div(ew.round(ew.mul(x, f)), f))
    f = 10.0 ** -decimals
    return P.scalar_result(ew.mul(ew.round(ew.div(x, f)), f))


_public(round)
around = _public(round, "around")


def modf(x, /):
    """``(fractional part, integer part)``, both with the sign of ``x``, as ``numpy.modf``.

    >>> tnp.modf(np.array([-1.5, 2.25]))
    (array([-0.5 ,  0.25]), array([-1.,  2.]))
    """
    def fractional(v):
        whole = _trunc(v)
        frac = ew.sub(v, whole)
        # inf - inf would be NaN; C modf gives a zero with the sign of x.
        return ew.select(ew.eq(ew.abs(v), np.inf), ew.copysign(_full_like(v, 0, _dt(v)), v),
                         frac)
    return (P.apply_ufunc(np.modf, "modf", fractional, (x,)),
            P.apply_ufunc(np.modf, "modf", _trunc, (x,)))


_public(modf)


# ---------------------------------------------------------------- min / max


def _isnan_inexact(x):
    return ew.ne(x, x)


def _fmax(x, y):
    if not dtypes.is_inexact(_dt(x)):
        return ew.max(x, y)
    m = ew.max(x, y)
    return ew.select(_isnan_inexact(y), x, ew.select(_isnan_inexact(x), y, m))


def _fmin(x, y):
    if not dtypes.is_inexact(_dt(x)):
        return ew.min(x, y)
    m = ew.min(x, y)
    return ew.select(_isnan_inexact(y), x, ew.select(_isnan_inexact(x), y, m))


maximum = _ufunc(np.maximum, ew.max, "Elementwise maximum; NaN propagates.")
minimum = _ufunc(np.minimum, ew.min, "Elementwise minimum; NaN propagates.")
fmax = _ufunc(np.fmax, _fmax, "Elementwise maximum ignoring NaN.")
fmin = _ufunc(np.fmin, _fmin, "Elementwise minimum ignoring NaN.")


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):  # noqa: A002
    """``minimum(maximum(a, a_min), a_max)`` with NumPy promotion, as ``numpy.clip``.

    Either bound may be None; NumPy 2's ``min=``/``max=`` spellings are accepted too.

    >>> tnp.clip(np.array([-2, 0, 5]), -1, 3)
    array([-1,  0,  3])
    """
    P.check_unsupported("clip", out=(out, None))
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is None and hi is None:
        return P.asarray(a)
    if lo is None:
        return minimum(a, hi)
    if hi is None:
        return maximum(a, lo)
    x, lo, hi = P.promote("clip", a, lo, hi)
    if dtypes.is_complex(_dt(x)) or dtypes.is_bool(_dt(x)):
        return P.scalar_result(ew.min(ew.max(x, lo), hi))
    shape = P.broadcast_shapes_of("clip", x, lo, hi)
    # one clamp: its derivative is zero at the bounds (maximum's would split ties)
    x = P.broadcast_to(x, shape, "clip")
    return P.scalar_result(ew.clamp(lo, x, hi))


_public(clip)

# ---------------------------------------------------------------- floating point parts


def _heaviside(x, h0):
    return ew.select(ew.lt(x, 0), _full_like(x, 0, _dt(x)), ew.select(
        ew.gt(x, 0), _full_like(x, 1, _dt(x)), ew.select(ew.eq(x, 0), h0, x)))


def _signbit(x):
    dt = _dt(x)
    if dtypes.is_inexact(dt):
        return ew.signbit(x)
    if dtypes.is_bool(dt):
        return _full_like(x, False, dtypes.bool_)
    return ew.lt(x, 0)


heaviside = _ufunc(np.heaviside, _heaviside,
                   "Step function: 0 below zero, 1 above, ``x2`` at zero.")
copysign = _ufunc(np.copysign, ew.copysign, "``x1`` with the sign of ``x2``.")
nextafter = _ufunc(np.nextafter, ew.nextafter, "The next float after ``x1`` towards ``x2``.")
signbit = _ufunc(np.signbit, _signbit, "Whether the sign bit is set (true for -0.0).")


def _spacing(x):
    # npy_spacing steps towards -inf only for x < 0 (so -0.0 steps up, like +0.0)
    away = ew.select(ew.lt(x, 0), _full_like(x, -np.inf, _dt(x)), _full_like(x, np.inf, _dt(x)))
    return ew.sub(ew.nextafter(x, away), x)


spacing = _ufunc(np.spacing, _spacing, "Distance to the next float away from zero.")


def sinc(x):
    """``sin(pi x) / (pi x)`` (1 at 0), as ``numpy.sinc``.

    >>> tnp.sinc(np.array([0.0, 0.5]))
    array([1.        , 0.63661977])
    """
    y = multiply(np.pi, where(equal(x, 0), 1.0e-20, x))
    return divide(sin(y), y)


_public(sinc)


# ---------------------------------------------------------------- complex parts


def real(val):
    """The real part (the array itself for real input), as ``numpy.real``.

    >>> tnp.real(np.array([1 + 2j]))
    array([1.])
    """
    x = P.asarray(val)
    if P.is_weak(x):
        return x.real
    out = ew.real(x) if dtypes.is_complex(_dt(x)) else x
    return P.scalar_result(out) if isinstance(val, np.generic) else out


def imag(val):
    """The imaginary part (zeros for real input), as ``numpy.imag``.

    >>> tnp.imag(np.array([1 + 2j]))
    array([2.])
    """
    x = P.asarray(val)
    if P.is_weak(x):
        return x.imag
    out = ew.imag(x) if dtypes.is_complex(_dt(x)) else _full_like(x, 0, _dt(x))
    return P.scalar_result(out) if isinstance(val, np.generic) else out


def _conj(x):
    return ew.conj(x) if dtypes.is_complex(_dt(x)) else x


conjugate = _ufunc(np.conjugate, _conj, "Complex conjugate (real input is returned as it is).")
conj = _ufunc(np.conjugate, _conj, "Complex conjugate (real input is returned as it is).",
              name="conj")


def angle(z, deg=False):
    """The argument of complex numbers, as ``numpy.angle`` (``arctan2(imag, real)``).

    >>> tnp.angle(np.array([1j]))
    array([1.57079633])
    """
    x = P.asarray(z)
    if P.is_weak(x):
        x = np.asarray(x)
    if dtypes.is_complex(_dt(x)):
        a = arctan2(ew.imag(x), ew.real(x))
    else:
        a = arctan2(0, x)
    return multiply(a, 180 / np.pi) if deg else a


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype, as ``numpy.iscomplexobj``.

    >>> tnp.iscomplexobj(np.array([1.0]))
    False
    """
    return dtypes.is_complex(P.concrete_dtype(P.asarray(x)))


def isrealobj(x):
    """Whether ``x`` has a non-complex dtype, as ``numpy.isrealobj``.

    >>> tnp.isrealobj(np.array([1.0]))
    True
    """
    return not iscomplexobj(x)


def iscomplex(x):
    """Elementwise: a nonzero imaginary part, as ``numpy.iscomplex``.

    >>> tnp.iscomplex(np.array([1 + 0j, 1j]))
    array([False,  True])
    """
    return not_equal(imag(x), 0)


def isreal(x):
    """Elementwise: a zero imaginary part, as ``numpy.isreal``.

    >>> tnp.isreal(np.array([1 + 0j, 1j]))
    array([ True, False])
    """
    return equal(imag(x), 0)


for _fn in (real, imag, angle, iscomplexobj, isrealobj, iscomplex, isreal):
    _public(_fn)

# ---------------------------------------------------------------- classification


def _isnan(x):
    if dtypes.is_inexact(_dt(x)):
        return _isnan_inexact(x)
    return _full_like(x, False, dtypes.bool_)


def _isfinite(x):
    if dtypes.is_inexact(_dt(x)):
        return ew.is_finite(x)
    return _full_like(x, True, dtypes.bool_)


def _isinf_real(x):
    return ew.eq(ew.abs(x), np.inf)


def _isinf(x):
    dt = _dt(x)
    if dtypes.is_complex(dt):
        return ew.or_(_isinf_real(ew.real(x)), _isinf_real(ew.imag(x)))
    if dtypes.is_inexact(dt):
        return _isinf_real(x)
    return _full_like(x, False, dtypes.bool_)


isnan = _ufunc(np.isnan, _isnan, "Whether each element is NaN.")
isfinite = _ufunc(np.isfinite, _isfinite, "Whether each element is finite.")
isinf = _ufunc(np.isinf, _isinf, "Whether each element is +inf or -inf.")


def isposinf(x):
    """Whether each element is +inf, as ``numpy.isposinf``.

    >>> tnp.isposinf(np.array([np.inf, -np.inf]))
    array([ True, False])
    """
    return logical_and(isinf(x), logical_not(signbit(x)))


def isneginf(x):
    """Whether each element is -inf, as ``numpy.isneginf``.

    >>> tnp.isneginf(np.array([np.inf, -np.inf]))
    array([False,  True])
    """
    return logical_and(isinf(x), signbit(x))


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN and infinities replaced by finite numbers, as ``numpy.nan_to_num``.

    >>> tnp.nan_to_num(np.array([np.nan, np.inf, 1.0]))
    array([0.00000000e+000, 1.79769313e+308, 1.00000000e+000])
    """
    x = P.asarray(x)
    if P.is_weak(x):
        x = np.asarray(x, dtypes.of_scalar(x))
    dt = _dt(x)
    if not dtypes.is_inexact(dt):
        return P.scalar_result(x)
    if dtypes.is_complex(dt):
        parts = [nan_to_num(p, copy, nan, posinf, neginf) for p in (ew.real(x), ew.imag(x))]
        return P.scalar_result(ew.complex(*parts))
    info = np.finfo(dt)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    out = ew.select(_isnan_inexact(x), P.cast(nan, dt), x)
    out = ew.select(ew.eq(out, np.inf), P.cast(big, dt), out)
    out = ew.select(ew.eq(out, -np.inf), P.cast(small, dt), out)
    return P.scalar_result(out)


for _fn in (isposinf, isneginf, nan_to_num):
    _public(_fn)

# ---------------------------------------------------------------- comparisons and logic

equal = _ufunc(np.equal, ew.eq, "Elementwise ``equal`` comparison, as a bool array.")
not_equal = _ufunc(np.not_equal, ew.ne, "Elementwise ``not_equal`` comparison, as a bool array.")
less = _ufunc(np.less, ew.lt, "Elementwise ``less`` comparison, as a bool array.")
less_equal = _ufunc(np.less_equal, ew.le, "Elementwise ``less_equal`` comparison, as a bool array.")
greater = _ufunc(np.greater, ew.gt, "Elementwise ``greater`` comparison, as a bool array.")
greater_equal = _ufunc(np.greater_equal, ew.ge,
                       "Elementwise ``greater_equal`` comparison, as a bool array.")


def _truth(x):
    return x if dtypes.is_bool(_dt(x)) else ew.ne(x, 0)


logical_and = _ufunc(np.logical_and, lambda x, y: ew.and_(_truth(x), _truth(y)),
                     "Elementwise ``x1 and x2``.")
logical_or = _ufunc(np.logical_or, lambda x, y: ew.or_(_truth(x), _truth(y)),
                    "Elementwise ``x1 or x2``.")
logical_xor = _ufunc(np.logical_xor, lambda x, y: ew.xor(_truth(x), _truth(y)),
                     "Elementwise ``x1 xor x2``.")
logical_not = _ufunc(np.logical_not, lambda x: ew.not_(_truth(x)), "Elementwise ``not x``.")
bitwise_and = _ufunc(np.bitwise_and, ew.and_, "Bitwise and (logical on bools).")
bitwise_or = _ufunc(np.bitwise_or, ew.or_, "Bitwise or (logical on bools).")
bitwise_xor = _ufunc(np.bitwise_xor, ew.xor, "Bitwise xor (logical on bools).")
invert = _ufunc(np.invert, ew.not_, "Bitwise not (logical on bools).")
bitwise_not = _ufunc(np.invert, ew.not_, "Bitwise not (logical on bools).", name="bitwise_not")
bitwise_invert = _ufunc(np.invert, ew.not_,
                        "Bitwise not (logical on bools).", name="bitwise_invert")


def _left_shift(x, n):
    # x * 2**n wraps modulo 2**bits exactly like the shift; shifts past the width give 0.
    bits = np.iinfo(_dt(x)).bits
    in_range = ew.and_(ew.ge(n, 0), ew.lt(n, bits))
    safe = ew.select(in_range, n, _full_like(n, 0, _dt(n)))
    shifted = ew.mul(x, ew.pow(_full_like(safe, 2, _dt(x)), safe))
    return ew.select(in_range, shifted, _full_like(shifted, 0, _dt(x)))


def _right_shift(x, n):
    # Arithmetic shift is floor division by 2**n; from bits-1 on only the sign is left
    # (an unsigned x has no sign bit: from bits on, 0).
    info = np.iinfo(_dt(x))
    signed = info.min < 0
    in_range = ew.and_(ew.ge(n, 0), ew.lt(n, info.bits - signed))
    safe = ew.select(in_range, n, _full_like(n, 0, _dt(n)))
    shifted = ew.floor_div(x, ew.pow(_full_like(safe, 2, _dt(x)), safe))
    beyond = _full_like(shifted, 0, _dt(x))
    if signed:
        beyond = ew.select(ew.lt(x, 0), _full_like(shifted, -1, _dt(x)), beyond)
    return ew.select(in_range, shifted, beyond)


left_shift = _ufunc(np.left_shift, _left_shift, "``x1 << x2``.")
right_shift = _ufunc(np.right_shift, _right_shift, "``x1 >> x2`` (arithmetic).")


# ---------------------------------------------------------------- where, isclose


def where(condition, x=None, y=None, /):
    """``x`` where ``condition`` else ``y``, with NumPy promotion and broadcasting.

    The one-argument form (``nonzero``) needs a concrete condition.

    >>> tnp.where(np.array([True, False]), 1.0, np.array([5, 6]))
    array([1., 6.])
    """
    if x is None and y is None:
        from .indexing import nonzero
        return nonzero(condition)
    if x is None or y is None:
        raise TypeError("where takes either 1 or 3 arguments")
    cond = P.asarray(condition)
    if P.is_weak(cond):
        cond = np.asarray(cond)
    if not dtypes.is_bool(_dt(cond)):
        cond = _truth(cond)
    a, b = P.promote("where", x, y)
    cond, a, b = P.broadcast_all("where", [cond, a, b])
    return ew.select(cond, a, b)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` (and equal infinities), as ``numpy.isclose``.

    >>> tnp.isclose(np.array([1.0, 1.1]), 1.0)
    array([ True, False])
    """
    x, y = P.asarray(a), P.asarray(b)
    if not P.is_weak(y):
        y = P.cast(y, P.result_type(y, 1.0))
    elif isinstance(y, int):
        y = float(y)
    with np.errstate(invalid="ignore"):   # inf - inf, as NumPy's isclose
        close = less_equal(absolute(subtract(x, y)),
                           add(atol, multiply(rtol, absolute(y))))
    result = logical_or(logical_and(close, isfinite(y)), equal(x, y))
    if equal_nan:
        result = logical_or(result, logical_and(isnan(x), isnan(y)))
    return P.scalar_result(result)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every pair is ``isclose``; a Python bool eagerly, a traced bool when traced.

    >>> tnp.allclose(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))
    True
    """
    from .reductions import all as all_
    result = all_(isclose(a, b, rtol, atol, equal_nan))
    return result if P.is_tracer(result) else bool(result)


def array_equal(a1, a2, equal_nan=False):
    """Whether two arrays have the same shape and elements, as ``numpy.array_equal``: a
    Python bool eagerly (and for differing shapes), a traced bool when traced.

    >>> tnp.array_equal(np.array([1, 2]), [1, 2])
    True
    """
    x, y = P.asarray(a1), P.asarray(a2)
    if P.shape_of(x) != P.shape_of(y):
        return False
    from .reductions import all as all_
    same = equal(x, y)
    if equal_nan and any(dtypes.is_inexact(P.concrete_dtype(v)) for v in (x, y)):
        same = logical_or(same, logical_and(isnan(x), isnan(y)))
    result = all_(same)
    return result if P.is_tracer(result) else bool(result)


def array_equiv(a1, a2):
    """Whether two arrays are equal after broadcasting, as ``numpy.array_equiv``.

    >>> tnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 2]]))
    True
    """
    from ..core.shapes import broadcast_shapes
    from ..errors import ShapeError
    from .reductions import all as all_
    x, y = P.asarray(a1), P.asarray(a2)
    try:
        broadcast_shapes(P.shape_of(x), P.shape_of(y))
    except ShapeError:
        return False
    result = all_(equal(x, y))
    return result if P.is_tracer(result) else bool(result)


for _fn in (where, isclose, allclose, array_equal, array_equiv):
    _public(_fn)


# ---------------------------------------------------------------- the array API's names

acos, acosh, asin, asinh, atan, atanh, atan2 = (
    arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2)
pow = power  # noqa: A001 - the array API's name
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
__all__ += ["acos", "acosh", "asin", "asinh", "atan", "atanh", "atan2", "pow",
            "bitwise_left_shift", "bitwise_right_shift"]


# ---------------------------------------------------------------- i0 and bits

def i0(x):
    """The modified Bessel function of the first kind of order 0, as ``numpy.i0``
    (differentiable: its derivative is ``i1``).

    >>> tnp.i0(np.array([0.0, 1.0]))
    array([1.        , 1.26606588])
    """
    from ..ops import special
    x = P.asarray(x)
    if dtypes.is_complex(_dt(x)):
        from ..errors import DTypeError
        raise DTypeError("needs real input, got complex", op="i0")
    if not dtypes.is_inexact(_dt(x)):
        x = P.cast(x, dtypes.float64)
    return P.scalar_result(special.i0(x))


def bitwise_count(x):
    """The number of 1 bits in ``|x|`` (integers and bools), a uint8, as
    ``numpy.bitwise_count``; by the SWAR sums of Hacker's Delight 5-1.

    >>> tnp.bitwise_count(np.array([0, 7, -8, 255]))
    array([0, 3, 1, 8], dtype=uint8)
    """
    from ..errors import DTypeError
    from ..ops.bits import shift_right_logical
    x = P.asarray(x)
    if not (dtypes.is_integer(_dt(x)) or dtypes.is_bool(_dt(x))):
        raise DTypeError(f"needs integers or bools, got {_dt(x).name}", op="bitwise_count")
    v = absolute(P.cast(x, dtypes.int64))
    v = v - bitwise_and(shift_right_logical(v, 1), 0x5555555555555555)
    v = bitwise_and(v, 0x3333333333333333) + bitwise_and(shift_right_logical(v, 2),
                                                         0x3333333333333333)
    v = bitwise_and(v + shift_right_logical(v, 4), 0x0F0F0F0F0F0F0F0F)
    return P.cast(shift_right_logical(v * 0x0101010101010101, 56), dtypes.uint8)


def _bit_weights(bitorder, name):
    from ..errors import ArgumentError
    if bitorder not in ("big", "little"):
        raise ArgumentError(f"bitorder must be 'big' or 'little', got {bitorder!r}", op=name)
    weights = 1 << np.arange(8, dtype=np.int64)
    return weights[::-1].copy() if bitorder == "big" else weights


def packbits(a, axis=None, bitorder="big"):
    """The elements of ``a`` (nonzero is 1) packed eight to a number along ``axis``
    (flattened when None), the last group padded with zeros, a uint8, as ``numpy.packbits``.

    >>> tnp.packbits(np.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
    array([176, 128], dtype=uint8)
    """
    from .manipulation import moveaxis, pad, ravel, reshape
    from .reductions import sum as sum_
    weights = _bit_weights(bitorder, "packbits")
    x = not_equal(P.asarray(a), 0)
    if axis is None:
        x, axis = ravel(x), 0
    axis = P.axis_arg(axis, len(_shape(x)), "packbits")
    x = moveaxis(P.cast(x, dtypes.int64), axis, -1)
    n = _shape(x)[-1]
    x = pad(x, [(0, 0)] * (len(_shape(x)) - 1) + [(0, -n % 8)])
    groups = reshape(x, _shape(x)[:-1] + ((n + 7) // 8, 8))
    return P.cast(moveaxis(sum_(groups * weights, axis=-1), -1, axis), dtypes.uint8)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """Each number of ``a`` (0-255) as its eight bits along ``axis`` (flattened when None),
    the first ``count`` of them kept, a uint8, as ``numpy.unpackbits``.

    >>> tnp.unpackbits(np.array([176]))
    array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    """
    from ..ops.bits import shift_right_logical
    from .manipulation import broadcast_to, moveaxis, ravel, reshape
    shifts = np.log2(_bit_weights(bitorder, "unpackbits")).astype(np.int64)
    x = P.cast(P.asarray(a), dtypes.int64)
    if axis is None:
        x, axis = ravel(x), 0
    axis = P.axis_arg(axis, len(_shape(x)), "unpackbits")
    x = moveaxis(x, axis, -1)
    wide = _shape(x) + (8,)
    bits = bitwise_and(shift_right_logical(broadcast_to(reshape(x, _shape(x) + (1,)), wide),
                                           broadcast_to(shifts, wide)), 1)
    bits = reshape(bits, _shape(x)[:-1] + (_shape(x)[-1] * 8,))
    if count is not None:
        bits = bits[..., :count]
    return P.cast(moveaxis(bits, -1, axis), dtypes.uint8)


for _fn in (i0, bitwise_count, packbits, unpackbits):
    _public(_fn)
