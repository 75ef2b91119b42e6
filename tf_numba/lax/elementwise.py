"""Elementwise operations, as ``jax.lax``'s: no dtype promotion (operands of one dtype; a
Python scalar takes the dtype of the array beside it), shapes equal or rank 0.

Each is a primitive of ``ops/elementwise.py``, ``ops/special.py`` or ``ops/bits.py``, or a
short composition of them (``round`` away from zero, ``integer_pow``, ``select_n``, integer
``div``), so each differentiates, batches and compiles as those do. The ``accuracy``
argument JAX's transcendental functions take chooses between accelerator approximations;
on a CPU there is one, and it is accepted and ignored.

>>> from tf_numba import lax
>>> lax.add(np.float32(1), 2)
array(3., dtype=float32)
"""
import builtins
import enum

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..errors import DTypeError
from ..ops import bits, special
from ..ops import elementwise as ew
from ..ops import layout
from ._operands import leaf

__all__ = [
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos", "cosh",
    "exp", "exp2", "expm1", "floor", "imag", "is_finite", "log", "log1p", "logistic", "neg",
    "real", "rsqrt", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "erf", "erfc", "erf_inv",
    "lgamma", "digamma", "bessel_i0e", "bessel_i1e", "conj", "square", "reciprocal",
    "bitwise_not", "population_count", "clz", "round", "RoundingMethod",
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "complex",
    "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor",
    "shift_left", "shift_right_arithmetic", "shift_right_logical", "mulhi",
    "igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "polygamma", "zeta", "betainc",
    "integer_pow", "clamp", "select", "select_n", "convert_element_type",
    "bitcast_convert_type", "reduce_precision", "Tolerance", "AccuracyMode",
]


def _named(name, fn, doc):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _unary(name, op, doc, accuracy=False):
    """``jax.lax.<name>(x)``, with JAX's keyword ``accuracy`` where JAX has it."""
    if accuracy:
        def fn(x, *, accuracy=None):
            return op(x)
    else:
        def fn(x):
            return op(x)
    return _named(name, fn, doc + f" (``jax.lax.{name}``)")


def _binary(name, op, doc):
    """``jax.lax.<name>(x, y)``; Python scalars are weak."""
    def fn(x, y):
        return op(x, y)
    return _named(name, fn, doc + f" (``jax.lax.{name}``)")


class Tolerance:
    """The error bounds ``accuracy=`` may ask of a transcendental function
    (``jax.lax.Tolerance``); on a CPU the one implementation is used whatever they say."""

    def __init__(self, atol=0.0, rtol=0.0, ulps=0):
        self.atol, self.rtol, self.ulps = atol, rtol, ulps

    def __repr__(self):
        return f"Tolerance(atol={self.atol}, rtol={self.rtol}, ulps={self.ulps})"


class AccuracyMode(enum.Enum):
    """``accuracy=`` as a mode (``jax.lax.AccuracyMode``); means nothing on a CPU."""
    HIGHEST = 1
    DEFAULT = 2


class RoundingMethod(enum.IntEnum):
    """How ``round`` breaks ties (``jax.lax.RoundingMethod``)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


# ---------------------------------------------------------------- unary

abs = _unary("abs", ew.abs, "``|x|``; the modulus (a real) of a complex ``x``")  # noqa: A001
acos = _unary("acos", ew.acos, "The inverse cosine")
acosh = _unary("acosh", ew.acosh, "The inverse hyperbolic cosine")
asin = _unary("asin", ew.asin, "The inverse sine")
asinh = _unary("asinh", ew.asinh, "The inverse hyperbolic sine")
atan = _unary("atan", ew.atan, "The inverse tangent")
atanh = _unary("atanh", ew.atanh, "The inverse hyperbolic tangent")
cbrt = _unary("cbrt", ew.cbrt, "The cube root", accuracy=True)
ceil = _unary("ceil", ew.ceil, "The least integer not below ``x``")
cos = _unary("cos", ew.cos, "The cosine", accuracy=True)
cosh = _unary("cosh", ew.cosh, "The hyperbolic cosine")
exp = _unary("exp", ew.exp, "``e ** x``", accuracy=True)
exp2 = _unary("exp2", ew.exp2, "``2 ** x``", accuracy=True)
expm1 = _unary("expm1", ew.expm1, "``exp(x) - 1``, exact near 0", accuracy=True)
floor = _unary("floor", ew.floor, "The greatest integer not above ``x``")
imag = _unary("imag", ew.imag, "The imaginary part")
is_finite = _unary("is_finite", ew.is_finite, "True where ``x`` is neither infinite nor NaN")
log = _unary("log", ew.log, "The natural logarithm", accuracy=True)
log1p = _unary("log1p", ew.log1p, "``log(1 + x)``, exact near 0", accuracy=True)
logistic = _unary("logistic", ew.logistic, "The logistic sigmoid ``1 / (1 + exp(-x))``",
                  accuracy=True)
neg = _unary("neg", ew.neg, "``-x``")
real = _unary("real", ew.real, "The real part")
rsqrt = _unary("rsqrt", ew.rsqrt, "``1 / sqrt(x)``", accuracy=True)
sign = _unary("sign", ew.sign, "-1, 0 or 1 as ``x`` is negative, zero or positive "
              "(``x / |x|`` for a complex ``x``)")
sin = _unary("sin", ew.sin, "The sine", accuracy=True)
sinh = _unary("sinh", ew.sinh, "The hyperbolic sine")
sqrt = _unary("sqrt", ew.sqrt, "The square root", accuracy=True)
tan = _unary("tan", ew.tan, "The tangent", accuracy=True)
tanh = _unary("tanh", ew.tanh, "The hyperbolic tangent", accuracy=True)
erf = _unary("erf", ew.erf, "The error function")
erfc = _unary("erfc", ew.erfc, "The complementary error function ``1 - erf(x)``")
erf_inv = _unary("erf_inv", special.erf_inv, "The inverse error function (XLA's)")
lgamma = _unary("lgamma", special.lgamma, "``log |gamma(x)|``")
digamma = _unary("digamma", special.digamma, "The digamma function ``gamma'(x) / gamma(x)``")
bessel_i0e = _unary("bessel_i0e", special.i0e, "The exponentially scaled modified Bessel "
                    "function of order 0, ``exp(-|x|) I0(x)``")
bessel_i1e = _unary("bessel_i1e", special.i1e, "The exponentially scaled modified Bessel "
                    "function of order 1, ``exp(-|x|) I1(x)``")
bitwise_not = _unary("bitwise_not", ew.not_, "``~x``: logical on bools, bitwise on ints")
population_count = _unary("population_count", bits.population_count,
                          "The number of set bits of an integer")
clz = _unary("clz", bits.clz, "The number of leading zero bits of an integer")


def conj(x):
    """The complex conjugate; a real ``x`` becomes complex, as JAX's (``jax.lax.conj``)."""
    x = leaf(x)
    dt = aval_of(x).dtype
    if not dtypes.is_complex(dt):
        x = ew.convert_element_type(x, dtypes.complex_of(dt))
    return ew.conj(x)


def square(x):
    """``x * x`` (``jax.lax.square``)."""
    x = leaf(x)
    return ew.mul(x, x)


def reciprocal(x):
    """``1 / x`` (``jax.lax.reciprocal``; integers raise, as ``integer_pow(x, -1)``)."""
    return integer_pow(x, -1)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - jax.lax's name
    """``x`` rounded to an integer value, ties away from zero or, with
    ``RoundingMethod.TO_NEAREST_EVEN``, to even (``jax.lax.round``).

    >>> round(np.array([0.5, 1.5, -0.5]))
    array([ 1.,  2., -1.])
    """
    x = leaf(x)
    if RoundingMethod(rounding_method) == RoundingMethod.TO_NEAREST_EVEN:
        return ew.round(x)
    # trunc(x), moved one away from zero where the dropped fraction is at least 1/2 (not
    # floor(|x| + 1/2), which rounds 0.49999999999999994 up)
    truncated = ew.select(ew.lt(x, 0), ew.ceil(x), ew.floor(x))
    half_or_more = ew.ge(ew.abs(ew.sub(x, truncated)), 0.5)
    return ew.add(truncated, ew.select(half_or_more, ew.sign(x), 0))


# ---------------------------------------------------------------- binary

add = _binary("add", ew.add, "``x + y``")
sub = _binary("sub", ew.sub, "``x - y``")
rem = _binary("rem", ew.fmod, "The remainder of ``x / y`` rounded toward zero, with the "
              "sign of ``x`` (C's ``fmod``)")
max = _binary("max", ew.max, "The larger of ``x`` and ``y``, NaN if either is")  # noqa: A001
min = _binary("min", ew.min, "The smaller of ``x`` and ``y``, NaN if either is")  # noqa: A001
atan2 = _binary("atan2", ew.atan2, "``atan(x / y)`` in the quadrant of the point ``(y, x)``")
complex = _binary("complex", ew.complex, "``x + 1j * y``")  # noqa: A001
eq = _binary("eq", ew.eq, "``x == y``")
ne = _binary("ne", ew.ne, "``x != y``")
lt = _binary("lt", ew.lt, "``x < y``")
le = _binary("le", ew.le, "``x <= y``")
gt = _binary("gt", ew.gt, "``x > y``")
ge = _binary("ge", ew.ge, "``x >= y``")
bitwise_and = _binary("bitwise_and", ew.and_, "``x & y``: logical on bools, bitwise on ints")
bitwise_or = _binary("bitwise_or", ew.or_, "``x | y``: logical on bools, bitwise on ints")
bitwise_xor = _binary("bitwise_xor", ew.xor, "``x ^ y``: logical on bools, bitwise on ints")
shift_left = _binary("shift_left", bits.shift_left, "``x << y``; 0 for counts outside "
                     "``[0, bits)``")
shift_right_arithmetic = _binary("shift_right_arithmetic", bits.shift_right_arithmetic,
                                 "``x >> y`` filling with the sign bit")
shift_right_logical = _binary("shift_right_logical", bits.shift_right_logical,
                              "``x >> y`` filling with zeros")
mulhi = _binary("mulhi", bits.mulhi, "The high half of the double-width product ``x * y``")


def nextafter(x1, x2):
    """The next float after ``x1`` toward ``x2`` (``jax.lax.nextafter``)."""
    return ew.nextafter(x1, x2)


def igamma(a, x):
    """The regularized lower incomplete gamma function ``P(a, x)`` (``jax.lax.igamma``)."""
    return special.gammainc(a, x)


def igammac(a, x):
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``
    (``jax.lax.igammac``)."""
    return special.gammaincc(a, x)


def igamma_grad_a(a, x):
    """``d/da igamma(a, x)`` (``jax.lax.igamma_grad_a``)."""
    return special.gammainc_da(a, x)


def polygamma(m, x):
    """The ``m``-th derivative of digamma (``jax.lax.polygamma``)."""
    return special.polygamma(m, x)


def zeta(x, q):
    """The Hurwitz zeta function ``sum_k (k + q) ** -x`` (``jax.lax.zeta``)."""
    return special.zeta(x, q)

def mul(x, y, *, out_dtype=None):
    """``x * y``; with ``out_dtype`` the operands are converted to it first
    (``jax.lax.mul``)."""
    if out_dtype is not None:
        x, y = (convert_element_type(v, out_dtype) for v in (x, y))
    return ew.mul(x, y)


def div(x, y):
    """``x / y``, for integers rounded toward zero (``jax.lax.div``).

    >>> div(np.array([7, -7]), 2)
    array([ 3, -3])
    """
    x, y = ew._coerce([x, y])
    if dtypes.is_integer(aval_of(x).dtype):
        # x - fmod(x, y) is a multiple of y, so its floor division is exact
        return ew.floor_div(ew.sub(x, ew.fmod(x, y)), y)
    return ew.div(x, y)


def pow(x, y):  # noqa: A001 - jax.lax's name
    """``x ** y`` for a float or complex ``x``; ``y`` of its dtype or an integer
    (``jax.lax.pow``)."""
    x = leaf(x) if not isinstance(x, dtypes.WEAK_SCALAR_TYPES) else x
    if not isinstance(y, dtypes.WEAK_SCALAR_TYPES) and not isinstance(x, dtypes.WEAK_SCALAR_TYPES):
        x_dt, y_dt = aval_of(x).dtype, aval_of(leaf(y)).dtype
        if not dtypes.is_inexact(x_dt):
            raise DTypeError(f"needs a float or complex base, got {x_dt.name}; use "
                             "integer_pow for integer powers of integers", op="pow")
        if dtypes.is_integer(y_dt):
            y = ew.convert_element_type(leaf(y), x_dt)
    return ew.pow(x, y)


def random_gamma_grad(a, x):
    """``d x / d a`` of a Gamma(a, 1) sample ``x`` held at its quantile (implicit
    reparameterization, Figurnov et al. 2018): ``-igamma_grad_a(a, x)`` over the gamma
    density at ``x`` (``jax.lax.random_gamma_grad``)."""
    a, x = ew._coerce([a, x])
    log_density = ew.sub(ew.sub(special.xlogy(ew.sub(a, 1), x), x), special.lgamma(a))
    return ew.neg(ew.mul(special.gammainc_da(a, x), ew.exp(ew.neg(log_density))))


def betainc(a, b, x):
    """The regularized incomplete beta function ``I_x(a, b)`` (``jax.lax.betainc``)."""
    return special.betainc(a, b, x)


# ---------------------------------------------------------------- the others

def integer_pow(x, y):
    """``x ** y`` for a Python int ``y``, by repeated squaring (``jax.lax.integer_pow``);
    a negative ``y`` is ``1 / x ** -y`` (integer ``x`` then raises).

    >>> integer_pow(np.array([2, 3]), 3)
    array([ 8, 27])
    """
    x = leaf(x)
    y = int(y)
    if y < 0 and not dtypes.is_inexact(aval_of(x).dtype):
        raise DTypeError(f"integers cannot be raised to the negative power {y}",
                         op="integer_pow")
    if y == 0:
        return layout.full(aval_of(x).shape, 1, aval_of(x).dtype)
    out = ew.power_by_squaring(x, builtins.abs(y), ew.mul)
    return ew.div(np.ones((), aval_of(x).dtype), out) if y < 0 else out


def clamp(min, x, max):  # noqa: A002 - jax.lax's names
    """``x`` clamped to ``[min, max]`` (bounds rank 0 or of ``x``'s shape;
    ``jax.lax.clamp``)."""
    return ew.clamp(min, x, max)


def select(pred, on_true, on_false):
    """``on_true`` where the bool ``pred`` holds, else ``on_false`` (``jax.lax.select``: no
    broadcasting but of a rank-0 ``pred``; the branches share one dtype).

    >>> select(np.array([True, False]), np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array([1., 4.])
    """
    return ew.select(leaf(pred), on_true, on_false)


def select_n(which, *cases):
    """``cases[which]`` elementwise (``jax.lax.select_n``): ``which`` is a bool (two cases)
    or an integer array, of the cases' shape or rank 0.

    >>> select_n(np.array([0, 2, 1]), np.zeros(3), np.ones(3), np.full(3, 2.0))
    array([0., 2., 1.])
    """
    which = leaf(which)
    if not cases:
        raise DTypeError("needs at least one case", op="select_n")
    if len(cases) == 1:
        return cases[0]
    if dtypes.is_bool(aval_of(which).dtype):
        if len(cases) != 2:
            raise DTypeError(f"a bool selector picks one of two cases, got {len(cases)}",
                             op="select_n")
        return ew.select(which, cases[1], cases[0])
    out = cases[0]
    for k, case in enumerate(cases[1:], 1):
        out = ew.select(ew.eq(which, k), case, out)
    return out


def convert_element_type(operand, new_dtype):
    """``operand`` as ``new_dtype`` (``jax.lax.convert_element_type``): floats to integers
    round toward zero and saturate, NaN giving 0 (XLA's, where NumPy's cast is undefined
    out of range); complex to real keeps the real part.

    >>> convert_element_type(np.array([2.7, -2.7, 1e20, np.nan]), np.int32)
    array([          2,          -2,  2147483647,           0], dtype=int32)
    """
    x = leaf(operand)
    new = dtypes.canonical(new_dtype)
    if aval_of(x).dtype.kind != "f" or not dtypes.is_integer(new):
        return ew.convert_element_type(x, new)
    info = np.iinfo(new)
    edge = float(2 ** (info.bits - 1))          # exact in every float dtype
    above, below = ew.ge(x, edge), ew.lt(x, -edge)
    outside = ew.or_(ew.or_(above, below), ew.ne(x, x))
    out = ew.convert_element_type(ew.select(outside, 0, x), new)
    return ew.select(above, np.asarray(info.max, new),
                     ew.select(below, np.asarray(info.min, new), out))


def bitcast_convert_type(operand, new_dtype):
    """The bits of ``operand`` read as ``new_dtype``; a narrower dtype adds a last dim, a
    wider one consumes it (``jax.lax.bitcast_convert_type``).

    >>> bitcast_convert_type(np.float32(1.0), np.int32)
    array(1065353216, dtype=int32)
    """
    return bits.bitcast_convert_type(leaf(operand), new_dtype)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """``operand`` rounded to a float of ``exponent_bits`` and ``mantissa_bits`` (bfloat16:
    8 and 7), kept in its dtype (``jax.lax.reduce_precision``).

    >>> reduce_precision(np.float64(1.2345678901), 8, 7)
    array(1.234375)
    """
    return bits.reduce_precision(leaf(operand), exponent_bits, mantissa_bits)


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
