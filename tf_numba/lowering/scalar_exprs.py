"""How each elementwise primitive is written as a scalar expression in generated code.

``TEMPLATES[name](args, in_dtype, out_dtype) -> str``; operands arrive as Python expressions
already of the primitive's input dtype. ``typed(expr, dtype)`` casts to the output dtype so
float32 code stays float32, as NumPy computes it.
"""
import numpy as np

from ..core import dtypes

_CTOR = {dtypes.bool_: "np.bool_", dtypes.int32: "np.int32", dtypes.int64: "np.int64",
         dtypes.float32: "np.float32", dtypes.float64: "np.float64",
         dtypes.complex64: "np.complex64", dtypes.complex128: "np.complex128"}


def ctor(dtype):
    return _CTOR[dtype]


def typed(expr, dtype):
    return f"{_CTOR[dtype]}({expr})"


def literal(value, dtype):
    """A constant of ``dtype`` in source form (NaN and infinities included)."""
    v = np.asarray(value, dtype)[()]
    if dtypes.is_bool(dtype):
        return "True" if v else "False"
    if dtypes.is_integer(dtype):
        return f"{_CTOR[dtype]}({int(v)})"
    if dtypes.is_complex(dtype):
        return f"{_CTOR[dtype]}(complex({_float_text(v.real)}, {_float_text(v.imag)}))"
    return f"{_CTOR[dtype]}({_float_text(v)})"


def _float_text(x):
    x = float(x)
    if np.isnan(x):
        return "np.nan"
    if np.isinf(x):
        return "np.inf" if x > 0 else "-np.inf"
    return repr(x)


def _call(fn):
    return lambda a, i, o: typed(f"{fn}({', '.join(a)})", o)


def _infix(op):
    return lambda a, i, o: typed(f"({a[0]} {op} {a[1]})", o)


def _not(a, i, o):
    return f"(not {a[0]})" if dtypes.is_bool(i) else typed(f"(~{a[0]})", o)


def _real(a, i, o):
    return typed(f"{a[0]}.real", o) if dtypes.is_complex(i) else a[0]


def _imag(a, i, o):
    return typed(f"{a[0]}.imag", o) if dtypes.is_complex(i) else literal(0, o)


def _convert(a, i, o):
    x = a[0]
    if dtypes.is_complex(i) and not dtypes.is_complex(o):
        x = f"{x}.real"
    if dtypes.is_bool(o):
        return f"({x} != 0)"
    return typed(x, o)


# vmath functions that also have a float32-lane version (twice the lanes of float64)
_FLOAT32_LANES = {"exp": "exp32", "log": "log32", "tanh": "tanh32", "sin": "sin32",
                  "cos": "cos32"}


def _vmath(name):
    """Real ``name`` through vmath (vectorizes; numba's libm call does not): in float32
    lanes where vmath has them, else in float64 (float32 rounds back correctly); complex
    via NumPy."""
    def template(a, i, o):
        if dtypes.is_complex(i):
            return typed(f"np.{name}({a[0]})", o)
        if i == dtypes.float32 and name in _FLOAT32_LANES:
            return typed(f"vmath.{_FLOAT32_LANES[name]}({a[0]})", o)
        return typed(f"vmath.{name}(np.float64({a[0]}))", o)
    return template


_exp, _log = _vmath("exp"), _vmath("log")


def _logistic(a, i, o):
    one = literal(1, o)
    return typed(f"({one} / ({one} + {_exp([f'(-{a[0]})'], i, i)}))", o)


TEMPLATES = {
    "neg": lambda a, i, o: typed(f"(-{a[0]})", o),
    "exp": _exp, "exp2": _call("np.exp2"), "log": _log,
    "log2": _call("np.log2"), "log10": _call("np.log10"), "log1p": _call("np.log1p"),
    "expm1": _call("np.expm1"), "sin": _vmath("sin"), "cos": _vmath("cos"),
    "tan": _call("np.tan"), "asin": _call("np.arcsin"), "acos": _call("np.arccos"),
    "atan": _call("np.arctan"), "sinh": _call("np.sinh"), "cosh": _call("np.cosh"),
    "tanh": _vmath("tanh"), "asinh": _call("np.arcsinh"), "acosh": _call("np.arccosh"),
    "atanh": _call("np.arctanh"), "sqrt": _call("np.sqrt"),
    "rsqrt": lambda a, i, o: typed(f"({literal(1, o)} / np.sqrt({a[0]}))", o),
    "cbrt": _call("np.cbrt"), "abs": _call("np.abs"), "sign": _call("np.sign"),
    "floor": _call("np.floor"), "ceil": _call("np.ceil"), "round": _call("np.rint"),
    "erf": _call("math.erf"), "erfc": _call("math.erfc"),
    "lgamma": _call("math.lgamma"),
    "xlogy": lambda a, i, o: typed(f"({literal(0, o)} if ({a[0]} == 0 and not np.isnan({a[1]}))"
                                   f" else {a[0]} * {_log([a[1]], i, i)})", o),
    "xlog1py": lambda a, i, o: typed(f"({literal(0, o)} if ({a[0]} == 0 and not "
                                     f"np.isnan({a[1]})) else {a[0]} * np.log1p({a[1]}))", o),
    "logistic": _logistic,
    "is_finite": lambda a, i, o: f"np.isfinite({a[0]})",
    "not": _not, "real": _real, "imag": _imag,
    "conj": lambda a, i, o: typed(f"np.conj({a[0]})", o) if dtypes.is_complex(i) else a[0],
    "stop_gradient": lambda a, i, o: a[0],
    "add": _infix("+"), "sub": _infix("-"), "mul": _infix("*"), "div": _infix("/"),
    "floor_div": _call("np.floor_divide"), "rem": _call("np.remainder"),
    "pow": lambda a, i, o: (typed(f"({a[0]} * {a[0]})", o) if a[1] == literal(2, i)
                            else typed(f"np.power({a[0]}, {a[1]})", o)), "max": _call("np.maximum"), "min": _call("np.minimum"),
    "atan2": _call("np.arctan2"), "hypot": _call("np.hypot"),
    "fmod": _call("np.fmod"), "copysign": _call("np.copysign"),
    "nextafter": _call("np.nextafter"), "signbit": lambda a, i, o: f"np.signbit({a[0]})",
    "eq": lambda a, i, o: f"({a[0]} == {a[1]})", "ne": lambda a, i, o: f"({a[0]} != {a[1]})",
    "lt": lambda a, i, o: f"({a[0]} < {a[1]})", "le": lambda a, i, o: f"({a[0]} <= {a[1]})",
    "gt": lambda a, i, o: f"({a[0]} > {a[1]})", "ge": lambda a, i, o: f"({a[0]} >= {a[1]})",
    "and": lambda a, i, o: f"({a[0]} & {a[1]})", "or": lambda a, i, o: f"({a[0]} | {a[1]})",
    "xor": lambda a, i, o: f"({a[0]} ^ {a[1]})",
    "complex": lambda a, i, o: typed(f"complex({a[0]}, {a[1]})", o),
    "select": lambda a, i, o: f"({a[1]} if {a[0]} else {a[2]})",
    "clamp": lambda a, i, o: typed(f"np.minimum(np.maximum({a[1]}, {a[0]}), {a[2]})", o),
    "convert_element_type": _convert,
    # ops/bits.py: the bits as unsigned; counts outside [0, bits) give 0
    "shift_right_logical": lambda a, i, o: typed(
        f"(np.u{i.name}({a[0]}) >> np.u{i.name}({a[1]}) if 0 <= {a[1]} < {np.iinfo(i).bits} "
        f"else np.u{i.name}(0))", o),
}


def expression(eqn, args):
    """Source of the scalar result of an elementwise equation on operand sources ``args``."""
    in_dtype = eqn.invars[-1].aval.dtype
    return TEMPLATES[eqn.prim.name](args, in_dtype, eqn.outvars[0].aval.dtype)


def is_elementwise(eqn):
    return eqn.prim.name in TEMPLATES


# numba has no NumPy-compatible version of these for complex operands (NumPy 2's complex
# sign is z/|z|; ordering of complex numbers is lexicographic): they run as NumPy steps.
_NO_COMPLEX = {"sign", "max", "min", "clamp", "lt", "le", "gt", "ge", "reduce_max",
               "reduce_min", "floor_div", "rem"}


def supports_dtype(eqn):
    if eqn.prim.name in _NO_COMPLEX:
        return not any(dtypes.is_complex(v.aval.dtype) for v in eqn.invars)
    return True
