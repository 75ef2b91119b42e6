"""How scalar values are written in generated code, and the builders of the ``Elementwise``
lowerings that ``ops`` states beside each primitive.

A template is ``template(args, in_dtype, out_dtype) -> str``; operands arrive as Python
expressions already of the primitive's input dtype. ``typed(expr, dtype)`` casts to the
output dtype so float32 code stays float32, as NumPy computes it.
"""
import numpy as np

from ..core import dtypes
from .rules import Elementwise

# every dtype numba computes in (not float16: see ``rules.numba_types``)
_CTOR = {d: "np.bool_" if dtypes.is_bool(d) else f"np.{d.name}"
         for d in dtypes.SUPPORTED if d != dtypes.float16}


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


def call(fn, *, math=False, complex=True):
    """``fn(operands...)`` in the output dtype; ``math``: ``fn`` is a math function."""
    return Elementwise(lambda a, i, o: typed(f"{fn}({', '.join(a)})", o),
                       math=math, complex=complex)


def infix(op):
    """``(a op b)`` in the output dtype."""
    return Elementwise(lambda a, i, o: typed(f"({a[0]} {op} {a[1]})", o))


def compare(op, *, complex=True):
    """``(a op b)``, a bool as it comes."""
    return Elementwise(lambda a, i, o: f"({a[0]} {op} {a[1]})", complex=complex)


def bitwise(op):
    """``(a op b)``: on bools as it comes; on integers cast back to their dtype, since numba
    widens int32 operands to int64 (Threefry's int32 words otherwise ran through 64-bit
    lanes and back: a jitted float64 uniform of 1e5 values 0.50 -> 0.25 ms)."""
    def template(a, i, o):
        expr = f"({a[0]} {op} {a[1]})"
        return expr if dtypes.is_bool(i) else typed(expr, o)
    return Elementwise(template)


def written(template, **flags):
    """A template of its own (``Elementwise`` flags: ``math``, ``complex``)."""
    return Elementwise(template, **flags)


# vmath functions that also have a float32-lane version (twice the lanes of float64)
_FLOAT32_LANES = {"exp": "exp32", "log": "log32", "tanh": "tanh32", "sin": "sin32",
                  "cos": "cos32"}


# vmath functions numba inlines where they are called (so that a loop calling them
# vectorizes), each beside a twin it calls instead (``<name>_called``)
_INLINED = {"sin", "cos", "sin32", "cos32", "log1p"}


def vmath(name):
    """Real ``name`` through vmath (vectorizes; numba's libm call does not): in float32
    lanes where vmath has them, else in float64 (float32 rounds back correctly); complex
    via NumPy. Code written one element at a time calls the twins of the functions numba
    inlines: inlined at each of up to 16 elements of each operation, they cost numba
    ~0.15 s of compile time apiece (a small loop body's gradient, 34 s), and a scalar has
    no loop to vectorize."""
    def written_as(called):
        def template(a, i, o):
            if dtypes.is_complex(i):
                return typed(f"np.{name}({a[0]})", o)
            fn, arg = name, f"np.float64({a[0]})"
            if i == dtypes.float32 and name in _FLOAT32_LANES:
                fn, arg = _FLOAT32_LANES[name], a[0]
            if called and fn in _INLINED:
                fn += "_called"
            return typed(f"vmath.{fn}({arg})", o)
        return template
    return Elementwise(written_as(False), math=True, one_element=written_as(True))
