"""Elementwise primitives: one table row each (NumPy impl, accepted dtypes, output dtype,
the scalar source a kernel computes it with), and their JVP partials.

Operands have equal shapes, except that a rank-0 operand broadcasts (the one departure from
StableHLO's fully explicit broadcasting: it keeps scalar constants out of the program as
separate broadcast equations). Python scalars given to the op functions here are weak:
they take the dtype of the array operand.
"""
import builtins
import math

import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import (Zero, defjvp, deflinear, defzero, has_tangent, instantiate,
                           is_undefined, aval_of)
from ..core.primitive import Primitive, register
from ..core.shapes import same_shape
from ..errors import DTypeError, ShapeError
from ..kernel_vocab.scalar_exprs import (bitwise, call, compare, infix, literal, typed, vmath,
                                         written)
from ..transforms import batching as B
from ..transforms import simplify

# ---------------------------------------------------------------- dtype classes

ANY = "any"
NUMERIC = "numeric"      # everything but bool
INEXACT = "inexact"      # float and complex
FLOAT = "float"          # real floating point
REAL = "real"            # int or float (ordered, no complex)
LOGICAL = "logical"      # bool or int
_ACCEPTS = {
    ANY: lambda dt: True,
    NUMERIC: lambda dt: not dtypes.is_bool(dt),
    INEXACT: dtypes.is_inexact,
    FLOAT: lambda dt: dt.kind == "f",
    REAL: lambda dt: dt.kind in "iuf",
    LOGICAL: lambda dt: dt.kind in "biu",
}
_ACCEPT_TEXT = {ANY: "any dtype", NUMERIC: "a numeric dtype", INEXACT: "a float or complex dtype",
                FLOAT: "a real float dtype", REAL: "an integer or real float dtype",
                LOGICAL: "a bool or integer dtype"}

# output dtype rules
SAME, BOOL, REAL_PART, COMPLEX = "same", "bool", "real_part", "complex"
_OUT_DTYPE = {SAME: lambda dt: dt, BOOL: lambda dt: dtypes.bool_,
              REAL_PART: dtypes.real_part, COMPLEX: dtypes.complex_of}


def elementwise_shape(name, avals):
    """The common shape of elementwise operands: equal shapes, rank-0 ones broadcast."""
    shape = ()
    for a in avals:
        if not a.shape:
            continue
        if not shape:
            shape = a.shape
        elif not same_shape(a.shape, shape, name):
            raise ShapeError(
                "elementwise operands need equal shapes (or rank 0), got "
                + " and ".join(str(x.shape) for x in avals)
                + "; tnp functions broadcast NumPy-style", op=name)
    return shape


def _abstract_eval(name, accepts, out_rule):
    def abstract_eval(*avals):
        dt = avals[0].dtype
        for a in avals:
            if a.dtype != dt:
                raise DTypeError("operands need one dtype, got "
                                 + ", ".join(x.dtype.name for x in avals)
                                 + " (tnp functions promote; ops do not)", op=name)
        if not _ACCEPTS[accepts](dt):
            raise DTypeError(f"needs {_ACCEPT_TEXT[accepts]}, got {dt.name}", op=name)
        return ShapedArray(elementwise_shape(name, avals), _OUT_DTYPE[out_rule](dt))
    return abstract_eval


def _coerce(args):
    """Turn Python scalars into 0-d arrays of the first array operand's dtype. A NumPy
    scalar (``np.float64`` subclasses ``float``; eager NumPy gives them for 0-d results)
    keeps its own dtype."""
    weak = [type(a) in dtypes.WEAK_SCALAR_TYPES for a in args]
    dt = next((aval_of(a).dtype for a, w in zip(args, weak) if not w), None)
    if dt is None:
        return [np.asarray(a, dtypes.of_scalar(a)) for a in args]
    return [np.asarray(a, dt) if w else a for a, w in zip(args, weak)]


def _op(prim):
    def op(*args):
        return prim.bind(*_coerce(args))
    op.__name__ = prim.name
    op.__doc__ = f"The ``{prim.name}`` primitive (equal shapes or rank 0; Python scalars are weak)."
    return op


PRIMS = {}


def _declare(name, impl, accepts, out_rule, lowering):
    """A row of the table: the primitive ``name`` (its NumPy impl, the dtypes it accepts,
    its output dtype rule, its scalar source in kernels) and its op function."""
    prim = Primitive(name, _abstract_eval(name, accepts, out_rule), impl)
    PRIMS[name] = prim
    register("lower", prim, lowering)
    return prim, _op(prim)


def _special(name):
    """A scipy.special ufunc, imported on first use (scipy.special costs ~0.2 s to import)."""
    def impl(x):
        import scipy.special
        return getattr(scipy.special, name)(x)
    impl.__name__ = name
    return impl


_logistic = _special("expit")


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _complex(re, im):
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtypes.complex_of(re.dtype))
    out.real = re
    out.imag = im
    return out


# ---------------------------------------------------------------- scalar sources in kernels

def _not_source(a, i, o):
    return f"(not {a[0]})" if dtypes.is_bool(i) else typed(f"(~{a[0]})", o)


def _real_source(a, i, o):
    return typed(f"{a[0]}.real", o) if dtypes.is_complex(i) else a[0]


def _imag_source(a, i, o):
    return typed(f"{a[0]}.imag", o) if dtypes.is_complex(i) else literal(0, o)


def _conj_source(a, i, o):
    return typed(f"np.conj({a[0]})", o) if dtypes.is_complex(i) else a[0]


def _logistic_source(a, i, o):
    one = literal(1, o)
    return typed(f"({one} / ({one} + {EXP_SOURCE([f'(-{a[0]})'], i, i)}))", o)


def _fmod_source(a, i, o):
    if not dtypes.is_integer(i):
        return typed(f"np.fmod({a[0]}, {a[1]})", o)
    # numba's np.fmod of integers is not C's remainder; from Python's floor remainder
    # (the divisor's sign), moved to the dividend's sign; 0 for a zero divisor, as NumPy
    x, y = a
    r = f"({x} % {y})"
    return typed(f"(0 if {y} == 0 else ({r} - {y} if {r} != 0 and ({r} < 0) != ({x} < 0) "
                 f"else {r}))", o)


def _floor_div_source(a, i, o):
    if dtypes.is_integer(i):
        return typed(f"np.floor_divide({a[0]}, {a[1]})", o)
    # numba's floats agree with NumPy's where both operands are finite; past that, NumPy's
    # npy_divmod: inf // y is NaN, and x // inf is -1 where their signs differ
    x, y = a
    return typed(f"(np.floor_divide({x}, {y}) if np.isfinite({x}) and np.isfinite({y}) "
                 f"else ({x} / {y} if {y} == 0 else (-1.0 if {x} != 0 and np.isfinite({x}) "
                 f"and np.isinf({y}) and ({y} < 0) != ({x} < 0) else ({x} / {y} "
                 f"if np.isfinite({x}) and np.isinf({y}) else np.nan))))", o)


def _div_source(a, i, o):
    if not dtypes.is_complex(i):
        return typed(f"({a[0]} / {a[1]})", o)
    # numba raises ZeroDivisionError for a complex division by zero; NumPy divides each
    # part by +0 (an infinity, or NaN for a zero part)
    x, y = a
    return typed(f"({x} / {y} if {y} != 0 else "
                 f"complex({x}.real / abs({y}.real), {x}.imag / abs({y}.real)))", o)


def _pow_source(a, i, o):
    # a square as one multiply, not a call of np.power
    if a[1] == literal(2, i):
        return typed(f"({a[0]} * {a[0]})", o)
    if dtypes.is_integer(i):     # numba's np.power of 64-bit ints goes through float64
        return typed(f"({a[0]} ** {a[1]})", o)
    if dtypes.is_complex(i):
        # numba's complex power of a zero base is NaN for any exponent not real, and 0 for
        # a NaN one; NumPy's npy_cpow: 1 for a zero exponent, else 0 where its real part
        # is positive, else NaN
        x, y = a
        return typed(f"(np.power({x}, {y}) if {x} != 0 or {y} == 0 else "
                     f"({literal(0, o)} if {y}.real > 0 else {literal(np.nan, o)}))", o)
    return typed(f"np.power({a[0]}, {a[1]})", o)


def _sign_source(a, i, o):
    # numba's np.sign reads an unsigned int as signed (sign of uint8 255 is 255)
    if i.kind == "u":
        return typed(f"({a[0]} != 0)", o)
    return typed(f"np.sign({a[0]})", o)


def _select_source(a, i, o):
    return f"({a[1]} if {a[0]} else {a[2]})"


def _clamp_source(a, i, o):
    return typed(f"np.minimum(np.maximum({a[1]}, {a[0]}), {a[2]})", o)


def _convert_source(a, i, o):
    x = a[0]
    if dtypes.is_complex(i) and not dtypes.is_complex(o):
        x = f"{x}.real"
    if dtypes.is_bool(o):
        return f"({x} != 0)"
    return typed(x, o)


EXP_SOURCE, LOG_SOURCE = vmath("exp").template, vmath("log").template


# The table: per primitive its NumPy impl, accepted dtypes, output dtype rule and lowering
# (its scalar source in kernels). Unary first, then binary.
neg_p, neg = _declare("neg", np.negative, NUMERIC, SAME,
                      written(lambda a, i, o: typed(f"(-{a[0]})", o)))
exp_p, exp = _declare("exp", np.exp, INEXACT, SAME, vmath("exp"))
exp2_p, exp2 = _declare("exp2", np.exp2, INEXACT, SAME, call("np.exp2", math=True))
log_p, log = _declare("log", np.log, INEXACT, SAME, vmath("log"))
log2_p, log2 = _declare("log2", np.log2, INEXACT, SAME, call("np.log2", math=True))
log10_p, log10 = _declare("log10", np.log10, INEXACT, SAME, call("np.log10", math=True))
log1p_p, log1p = _declare("log1p", np.log1p, INEXACT, SAME, vmath("log1p"))
expm1_p, expm1 = _declare("expm1", np.expm1, INEXACT, SAME, vmath("expm1"))
sin_p, sin = _declare("sin", np.sin, INEXACT, SAME, vmath("sin"))
cos_p, cos = _declare("cos", np.cos, INEXACT, SAME, vmath("cos"))
tan_p, tan = _declare("tan", np.tan, INEXACT, SAME, call("np.tan", math=True))
asin_p, asin = _declare("asin", np.arcsin, INEXACT, SAME, call("np.arcsin", math=True))
acos_p, acos = _declare("acos", np.arccos, INEXACT, SAME, call("np.arccos", math=True))
atan_p, atan = _declare("atan", np.arctan, INEXACT, SAME, call("np.arctan", math=True))
sinh_p, sinh = _declare("sinh", np.sinh, INEXACT, SAME, call("np.sinh", math=True))
cosh_p, cosh = _declare("cosh", np.cosh, INEXACT, SAME, call("np.cosh", math=True))
tanh_p, tanh = _declare("tanh", np.tanh, INEXACT, SAME, vmath("tanh"))
asinh_p, asinh = _declare("asinh", np.arcsinh, INEXACT, SAME, call("np.arcsinh", math=True))
acosh_p, acosh = _declare("acosh", np.arccosh, INEXACT, SAME, call("np.arccosh", math=True))
atanh_p, atanh = _declare("atanh", np.arctanh, INEXACT, SAME, call("np.arctanh", math=True))
sqrt_p, sqrt = _declare("sqrt", np.sqrt, INEXACT, SAME, call("np.sqrt"))
rsqrt_p, rsqrt = _declare(
    "rsqrt", _rsqrt, INEXACT, SAME,
    written(lambda a, i, o: _div_source([literal(1, o), f"np.sqrt({a[0]})"], i, o)))
cbrt_p, cbrt = _declare("cbrt", np.cbrt, FLOAT, SAME, call("np.cbrt", math=True))
abs_p, abs = _declare("abs", np.abs, NUMERIC, REAL_PART, call("np.abs"))
sign_p, sign = _declare("sign", np.sign, NUMERIC, SAME, written(_sign_source, complex=False))
floor_p, floor = _declare("floor", np.floor, FLOAT, SAME, call("np.floor"))
ceil_p, ceil = _declare("ceil", np.ceil, FLOAT, SAME, call("np.ceil"))
round_p, round = _declare("round", np.round, FLOAT, SAME, call("np.rint"))  # half to even, as NumPy
erf_p, erf = _declare("erf", _special("erf"), FLOAT, SAME, call("math.erf", math=True))
erfc_p, erfc = _declare("erfc", _special("erfc"), FLOAT, SAME, call("math.erfc", math=True))
logistic_p, logistic = _declare("logistic", _logistic, FLOAT, SAME,
                                written(_logistic_source, math=True))
is_finite_p, is_finite = _declare("is_finite", np.isfinite, INEXACT, BOOL,
                                  written(lambda a, i, o: f"np.isfinite({a[0]})"))
# sees the sign of -0.0 and of NaNs
signbit_p, signbit = _declare("signbit", np.signbit, FLOAT, BOOL,
                              written(lambda a, i, o: f"np.signbit({a[0]})"))
# logical on bool, bitwise on ints
not_p, not_ = _declare("not", np.invert, LOGICAL, SAME, written(_not_source))
real_p, real = _declare("real", np.real, INEXACT, REAL_PART, written(_real_source))
imag_p, imag = _declare("imag", np.imag, INEXACT, REAL_PART, written(_imag_source))
conj_p, conj = _declare("conj", np.conjugate, INEXACT, SAME, written(_conj_source))
stop_gradient_p, stop_gradient = _declare("stop_gradient", lambda x: x, ANY, SAME,
                                          written(lambda a, i, o: a[0]))

add_p, add = _declare("add", np.add, NUMERIC, SAME, infix("+"))
sub_p, sub = _declare("sub", np.subtract, NUMERIC, SAME, infix("-"))
mul_p, mul = _declare("mul", np.multiply, NUMERIC, SAME, infix("*"))
div_p, div = _declare("div", np.true_divide, INEXACT, SAME, written(_div_source))
# NumPy `//`
floor_div_p, floor_div = _declare("floor_div", np.floor_divide, REAL, SAME,
                                  written(_floor_div_source, complex=False))
# NumPy `%`: sign of the divisor
rem_p, rem = _declare("rem", np.remainder, REAL, SAME, call("np.remainder", complex=False))
# C fmod: sign of the dividend
fmod_p, fmod = _declare("fmod", np.fmod, REAL, SAME, written(_fmod_source, math=True))
pow_p, pow = _declare("pow", np.power, NUMERIC, SAME, written(_pow_source, math=True))
# NaN-propagating, as NumPy
max_p, max = _declare("max", np.maximum, ANY, SAME, call("np.maximum", complex=False))
min_p, min = _declare("min", np.minimum, ANY, SAME, call("np.minimum", complex=False))
atan2_p, atan2 = _declare("atan2", np.arctan2, FLOAT, SAME, call("np.arctan2", math=True))
hypot_p, hypot = _declare("hypot", np.hypot, FLOAT, SAME, call("np.hypot", math=True))
copysign_p, copysign = _declare("copysign", np.copysign, FLOAT, SAME, call("np.copysign"))
nextafter_p, nextafter = _declare("nextafter", np.nextafter, FLOAT, SAME, call("np.nextafter"))
eq_p, eq = _declare("eq", np.equal, ANY, BOOL, compare("=="))
ne_p, ne = _declare("ne", np.not_equal, ANY, BOOL, compare("!="))
lt_p, lt = _declare("lt", np.less, ANY, BOOL, compare("<", complex=False))
le_p, le = _declare("le", np.less_equal, ANY, BOOL, compare("<=", complex=False))
gt_p, gt = _declare("gt", np.greater, ANY, BOOL, compare(">", complex=False))
ge_p, ge = _declare("ge", np.greater_equal, ANY, BOOL, compare(">=", complex=False))
and_p, and_ = _declare("and", np.bitwise_and, LOGICAL, SAME, bitwise("&"))
or_p, or_ = _declare("or", np.bitwise_or, LOGICAL, SAME, bitwise("|"))
xor_p, xor = _declare("xor", np.bitwise_xor, LOGICAL, SAME, bitwise("^"))
complex_p, complex = _declare("complex", _complex, FLOAT, COMPLEX,
                              written(lambda a, i, o: typed(f"complex({a[0]}, {a[1]})", o)))


# ---------------------------------------------------------------- select, clamp, convert

def _select_eval(pred, on_true, on_false):
    if pred.dtype != dtypes.bool_:
        raise DTypeError(f"predicate must be bool, got {pred.dtype.name}", op="select")
    if on_true.dtype != on_false.dtype:
        raise DTypeError(f"branches need one dtype, got {on_true.dtype.name} and "
                         f"{on_false.dtype.name}", op="select")
    return ShapedArray(elementwise_shape("select", (pred, on_true, on_false)), on_true.dtype)


def _select_impl(pred, on_true, on_false):
    # np.where takes ~0.75 ns an element even where its predicate is false throughout (a
    # max's gradient asks where its operands tie: hardly ever); finding no true element
    # and copying on_false takes a third of that, and adds nothing measurable before an
    # irregular mask's where
    # (the plan's interpreter may hand pred and on_false as broadcast views smaller than
    # on_true: the copy is the answer only when on_false has the result's shape)
    if pred.ndim and pred.shape == np.shape(on_false) and (
            np.ndim(on_true) == 0 or np.shape(on_true) == pred.shape) and not pred.any():
        return on_false.copy()
    return np.where(pred, on_true, on_false)


select_p = Primitive("select", _select_eval, _select_impl)
PRIMS["select"] = select_p
register("lower", select_p, written(_select_source))


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (equal shapes or rank 0)."""
    on_true, on_false = _coerce([on_true, on_false])
    return select_p.bind(pred, on_true, on_false)


def _clamp_eval(lo, x, hi):
    for a in (lo, hi):
        if a.dtype != x.dtype:
            raise DTypeError(f"bounds need the operand's dtype {x.dtype.name}, got "
                             f"{a.dtype.name}", op="clamp")
        if a.shape and not same_shape(a.shape, x.shape, "clamp"):
            raise ShapeError(f"bounds must be rank 0 or of the operand's shape {x.shape}, "
                             f"got {a.shape}", op="clamp")
    if not _ACCEPTS[REAL](x.dtype):
        raise DTypeError(f"needs {_ACCEPT_TEXT[REAL]}, got {x.dtype.name}", op="clamp")
    return x


def _clamp_impl(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


clamp_p = Primitive("clamp", _clamp_eval, _clamp_impl)
PRIMS["clamp"] = clamp_p
register("lower", clamp_p, written(_clamp_source, complex=False))


def clamp(lo, x, hi):
    """``min(max(x, lo), hi)``; ``lo`` and ``hi`` are rank 0 or of ``x``'s shape."""
    x, lo, hi = _coerce([x, lo, hi])
    return clamp_p.bind(lo, x, hi)


def _convert_eval(x, *, new_dtype):
    return ShapedArray(x.shape, dtypes.canonical(new_dtype))


def _convert_impl(x, *, new_dtype):
    if type(x) is np.ndarray and x.dtype.kind in "iuf" and new_dtype.kind != "b":
        return x.astype(new_dtype)       # the common case, without the checks below
    if dtypes.is_bool(new_dtype):
        return np.not_equal(x, 0)        # NumPy's cast to bool: nonzero, both parts of a complex
    if dtypes.is_complex(np.result_type(x)) and not dtypes.is_complex(new_dtype):
        x = np.real(x)
    return np.asarray(x).astype(new_dtype)


convert_element_type_p = Primitive("convert_element_type", _convert_eval, _convert_impl)
PRIMS["convert_element_type"] = convert_element_type_p
register("lower", convert_element_type_p, written(_convert_source))


def convert_element_type(x, new_dtype):
    """``x`` as ``new_dtype``; complex to real keeps the real part. No-op if already so."""
    new_dtype = dtypes.canonical(new_dtype)
    if isinstance(x, dtypes.WEAK_SCALAR_TYPES):
        return np.asarray(x, new_dtype)
    if aval_of(x).dtype == new_dtype:
        return x
    return convert_element_type_p.bind(x, new_dtype=new_dtype)


def power_by_squaring(x, n, multiply):
    """``x`` multiplied by itself to the ``n``-th power (``n >= 1``) with ``multiply``, in
    ``O(log n)`` products (binary powering, as XLA's integer_pow).

    >>> power_by_squaring(np.float64(3.0), 5, mul)
    array(243.)
    """
    out, base = None, x
    while n:
        if n & 1:
            out = base if out is None else multiply(out, base)
        n >>= 1
        if n:
            base = multiply(base, base)
    return out


# ---------------------------------------------------------------- JVP rules

LN2, LN10 = math.log(2.0), math.log(10.0)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _abs_partial(g, ans, x):
    if not dtypes.is_complex(aval_of(x).dtype):
        return mul(g, sign(x))
    # d|z| = Re(conj(z) dz) / |z|; zero at z = 0 (the subgradient JAX picks)
    safe = select(eq(ans, 0), 1, ans)
    return div(real(mul(conj(x), g)), safe)


def _extreme_mask(g, a, b, chosen):
    # JAX's convention: at ties each operand gets half of the cotangent, which JAX writes
    # as (a == ans) / (1 + (b == ans)). a == max(a, b) is a >= b, NaN in either giving
    # false (max propagates NaN), and it reads no ans: against a literal (a ReLU's 0) it
    # is a comparison with a scalar. Where a != b at most one operand is chosen, so the
    # weight is ``chosen(a, b)``, and 1/2 where a == b: the same 0, 1/2 and 1 (NaN and
    # signed zeros included). The select reads a == b, false almost everywhere, which
    # NumPy's where runs fast; a select on an irregular mask such as a ReLU's would cost
    # it ~4 ns an element, so that mask is converted and multiplied.
    mine = convert_element_type(chosen(a, b), aval_of(g).dtype)
    return mul(g, select(eq(a, b), 0.5, mine))


def _trunc(x):
    return select(lt(x, 0), ceil(x), floor(x))


def _pow_base(g, ans, x, y):
    d = mul(y, pow(x, sub(y, 1)))
    return mul(g, select(eq(y, 0), 0, d))


def _pow_exponent(g, ans, x, y):
    d = mul(log(select(eq(x, 0), 1, x)), ans)
    return mul(g, d)


UNARY_JVP = {
    "neg": lambda g, ans, x: neg(g),
    "exp": lambda g, ans, x: mul(g, ans),
    "exp2": lambda g, ans, x: mul(g, mul(ans, LN2)),
    "log": lambda g, ans, x: div(g, x),
    "log2": lambda g, ans, x: div(g, mul(x, LN2)),
    "log10": lambda g, ans, x: div(g, mul(x, LN10)),
    "log1p": lambda g, ans, x: div(g, add(x, 1)),
    # exp(x), not expm1(x) + 1: the latter rounds to 0 for x < -37
    "expm1": lambda g, ans, x: mul(g, exp(x)),
    "sin": lambda g, ans, x: mul(g, cos(x)),
    "cos": lambda g, ans, x: neg(mul(g, sin(x))),
    "tan": lambda g, ans, x: mul(g, add(mul(ans, ans), 1)),
    "asin": lambda g, ans, x: mul(g, rsqrt(sub(1, mul(x, x)))),
    "acos": lambda g, ans, x: neg(mul(g, rsqrt(sub(1, mul(x, x))))),
    "atan": lambda g, ans, x: div(g, add(mul(x, x), 1)),
    "sinh": lambda g, ans, x: mul(g, cosh(x)),
    "cosh": lambda g, ans, x: mul(g, sinh(x)),
    "tanh": lambda g, ans, x: mul(g, sub(1, mul(ans, ans))),
    "asinh": lambda g, ans, x: mul(g, rsqrt(add(mul(x, x), 1))),
    # 1/(sqrt(z-1) sqrt(z+1)), not 1/sqrt((z-1)(z+1)): the same for real z > 1, and the
    # right branch for complex z with Re z < 0
    "acosh": lambda g, ans, x: mul(g, mul(rsqrt(sub(x, 1)), rsqrt(add(x, 1)))),
    "atanh": lambda g, ans, x: div(g, sub(1, mul(x, x))),
    "sqrt": lambda g, ans, x: div(g, mul(ans, 2)),
    "rsqrt": lambda g, ans, x: mul(g, mul(div(ans, x), -0.5)),
    "cbrt": lambda g, ans, x: div(g, mul(mul(ans, ans), 3)),
    "abs": _abs_partial,
    "erf": lambda g, ans, x: mul(g, mul(exp(neg(mul(x, x))), TWO_OVER_SQRT_PI)),
    "erfc": lambda g, ans, x: mul(g, mul(exp(neg(mul(x, x))), -TWO_OVER_SQRT_PI)),
    # s(x) s(-x), not s(x) (1 - s(x)): the latter rounds to 0 for x > 37
    "logistic": lambda g, ans, x: mul(g, mul(ans, logistic(neg(x)))),
}
BINARY_JVP = {
    "add": (lambda g, ans, x, y: g, lambda g, ans, x, y: g),
    "sub": (lambda g, ans, x, y: g, lambda g, ans, x, y: neg(g)),
    "mul": (lambda g, ans, x, y: mul(g, y), lambda g, ans, x, y: mul(x, g)),
    "div": (lambda g, ans, x, y: div(g, y), lambda g, ans, x, y: neg(mul(g, div(ans, y)))),
    "rem": (lambda g, ans, x, y: g, lambda g, ans, x, y: neg(mul(g, floor(div(x, y))))),
    "fmod": (lambda g, ans, x, y: g, lambda g, ans, x, y: neg(mul(g, _trunc(div(x, y))))),
    "pow": (_pow_base, _pow_exponent),
    "max": (lambda g, ans, x, y: _extreme_mask(g, x, y, ge),
            lambda g, ans, x, y: _extreme_mask(g, y, x, ge)),
    "min": (lambda g, ans, x, y: _extreme_mask(g, x, y, le),
            lambda g, ans, x, y: _extreme_mask(g, y, x, le)),
    "atan2": (lambda g, ans, x, y: mul(g, div(y, add(mul(x, x), mul(y, y)))),
              lambda g, ans, x, y: neg(mul(g, div(x, add(mul(x, x), mul(y, y)))))),
    "hypot": (lambda g, ans, x, y: mul(g, div(x, select(eq(ans, 0), 1, ans))),
              lambda g, ans, x, y: mul(g, div(y, select(eq(ans, 0), 1, ans)))),
    "copysign": (lambda g, ans, x, y: mul(g, mul(sign(x), sign(ans))), None),
    "nextafter": (lambda g, ans, x, y: g, None),
}
ZERO_DERIVATIVE = ("sign", "floor", "ceil", "round", "is_finite", "signbit", "not",
                   "floor_div", "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor")

for _name, _partial in UNARY_JVP.items():
    defjvp(PRIMS[_name], _partial)
for _name, _partials in BINARY_JVP.items():
    defjvp(PRIMS[_name], *_partials)
for _name in ZERO_DERIVATIVE:
    defzero(PRIMS[_name])
defzero(stop_gradient_p)
defjvp(clamp_p,
       lambda g, ans, lo, x, hi: select(gt(lo, x), g, 0),
       lambda g, ans, lo, x, hi: select(and_(gt(x, lo), lt(x, hi)), g, 0),
       lambda g, ans, lo, x, hi: select(lt(hi, x), g, 0))


# ---------------------------------------------------------------- linear ops: transposes

def unbroadcast(aval, ct):
    """Sum a cotangent back down to a rank-0 operand that was broadcast."""
    if aval.shape or not aval_of(ct).shape:
        return ct
    from .reductions import reduce_sum
    return reduce_sum(ct, tuple(range(len(aval_of(ct).shape))))


def _lin(x, ct_fn, ct):
    return unbroadcast(x.aval, ct_fn(ct)) if is_undefined(x) else None


def _transpose_add(ct, x, y):
    return [_lin(x, lambda c: c, ct), _lin(y, lambda c: c, ct)]


def _transpose_sub(ct, x, y):
    return [_lin(x, lambda c: c, ct), _lin(y, neg, ct)]


def _transpose_mul(ct, x, y):
    return [_lin(x, lambda c: mul(c, y), ct), _lin(y, lambda c: mul(x, c), ct)]


def _transpose_div(ct, x, y):
    return [_lin(x, lambda c: div(c, y), ct), None]


for _name, _rule in (("add", _transpose_add), ("sub", _transpose_sub),
                     ("mul", _transpose_mul), ("div", _transpose_div)):
    register("transpose", PRIMS[_name], _rule)

register("transpose", neg_p, lambda ct, x: [neg(ct)])
# JAX's conventions for complex values: transposes, not Hermitian adjoints.
deflinear(real_p, lambda ct, x: [complex(ct, 0) if dtypes.is_complex(x.aval.dtype) else ct])
deflinear(imag_p, lambda ct, x: [complex(0, neg(ct))])
deflinear(conj_p, lambda ct, x: [conj(ct)])
deflinear(complex_p, lambda ct, re, im: [_lin(re, real, ct), _lin(im, lambda c: neg(imag(c)), ct)])


def _select_jvp(primals, tangents):
    pred, a, b = primals
    ans = select_p.bind(pred, a, b)
    _, ta, tb = tangents
    if type(ta) is Zero and type(tb) is Zero:
        return ans, Zero(aval_of(ans))
    return ans, select_p.bind(pred, instantiate(ta), instantiate(tb))


def _select_transpose(ct, pred, a, b):
    zero = np.zeros((), aval_of(ct).dtype)
    return [None,
            _lin(a, lambda c: select_p.bind(pred, c, zero), ct),
            _lin(b, lambda c: select_p.bind(pred, zero, c), ct)]


register("jvp", select_p, _select_jvp)
register("transpose", select_p, _select_transpose)


def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    ans = convert_element_type_p.bind(x, new_dtype=new_dtype)
    out_aval = aval_of(ans)
    if type(t) is Zero or not has_tangent(out_aval):
        return ans, Zero(out_aval)
    return ans, convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_transpose(ct, x, *, new_dtype):
    old = x.aval.dtype
    if dtypes.is_complex(aval_of(ct).dtype) and not dtypes.is_complex(old):
        ct = real(ct)
    return [convert_element_type(ct, old)]


register("jvp", convert_element_type_p, _convert_jvp)
register("transpose", convert_element_type_p, _convert_transpose)


# ---------------------------------------------------------------- batching

def batch_elementwise(prim):
    """Batch rule of an elementwise primitive: batched operands of the output's rank share
    one batch axis (the most common one, so usually nothing moves); a batched rank-0 operand
    and an unbatched operand of the output's shape are broadcast to the batched shape;
    unbatched rank-0 operands stay scalars."""
    def rule(args, dims, **params):
        size = B.axis_size_of(args, dims)
        ranks = [len(B.shape_of(x)) - (d is not None) for x, d in zip(args, dims)]
        rank = builtins.max(ranks)   # this module's `max` is the primitive
        if rank == 0:
            return prim.bind(*args, **params), 0
        out_dim = B.common_dim(args, dims, rank)
        full = next((x, d) for x, d, r in zip(args, dims, ranks) if r == rank)
        shape = B.batched_aval(B.unbatched_aval(aval_of(full[0]), full[1]), out_dim, size).shape
        moved = []
        for x, d, r in zip(args, dims, ranks):
            if r == 0:
                if d is not None:
                    from .layout import broadcast_in_dim
                    x = broadcast_in_dim(x, shape, (out_dim,))
            elif d is None:
                x = B.broadcast_batch(x, size, out_dim)
            else:
                x = B.moveaxis(x, d, out_dim)
            moved.append(x)
        return prim.bind(*moved, **params), out_dim
    register("batch", prim, rule)
    return rule


for _prim in PRIMS.values():
    batch_elementwise(_prim)

simplify.SCALAR_BROADCASTING.update(PRIMS.values())
simplify.COMMUTATIVE.update((PRIMS["add"], PRIMS["mul"]))
