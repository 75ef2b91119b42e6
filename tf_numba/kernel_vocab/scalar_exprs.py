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


# dtypes that numba's arithmetic, bitwise operators and NumPy functions give back for
# operands of that dtype (narrower ones numba widens: those casts are needed)
_KEPT = {dtypes.float64, dtypes.int64}


def typed_from(expr, in_dtype, out_dtype):
    """``typed(expr, out_dtype)`` of an expression numba computes from operands of
    ``in_dtype``, without the cast where it would change nothing (``_KEPT``): each cast is
    a call that numba types and lowers, which a large kernel paid hundreds of times."""
    return expr if in_dtype == out_dtype and out_dtype in _KEPT else typed(expr, out_dtype)


def literal(value, dtype):
    """A constant of ``dtype`` in source form (NaN and infinities included)."""
    v = np.asarray(value, dtype)[()]
    if dtypes.is_bool(dtype):
        return "True" if v else "False"
    if dtypes.is_integer(dtype):
        return f"{_CTOR[dtype]}({int(v)})"
    if dtypes.is_complex(dtype):
        return f"{_CTOR[dtype]}(complex({_float_text(v.real)}, {_float_text(v.imag)}))"
    if dtype == dtypes.float64:     # numba's type of a float constant: no cast to compile
        return _float_text(v)
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
    # NumPy's functions keep float64 as float64; another callee may not (math.floor)
    cast = typed_from if fn.startswith("np.") else (lambda expr, i, o: typed(expr, o))
    return Elementwise(lambda a, i, o: cast(f"{fn}({', '.join(a)})", i, o),
                       math=math, complex=complex)


def infix(op):
    """``(a op b)`` in the output dtype."""
    return Elementwise(lambda a, i, o: typed_from(f"({a[0]} {op} {a[1]})", i, o))


def compare(op, *, complex=True):
    """``(a op b)``, a bool as it comes."""
    return Elementwise(lambda a, i, o: f"({a[0]} {op} {a[1]})", complex=complex)


def bitwise(op):
    """``(a op b)``: on bools as it comes; on integers cast back to their dtype, since numba
    widens int32 operands to int64 (Threefry's int32 words otherwise ran through 64-bit
    lanes and back: a jitted float64 uniform of 1e5 values 0.50 -> 0.25 ms)."""
    def template(a, i, o):
        expr = f"({a[0]} {op} {a[1]})"
        return expr if dtypes.is_bool(i) else typed_from(expr, i, o)
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
            # a vmath function returns the dtype it computes in
            fn, arg, lanes = name, typed_from(a[0], i, dtypes.float64), dtypes.float64
            if i == dtypes.float32 and name in _FLOAT32_LANES:
                fn, arg, lanes = _FLOAT32_LANES[name], a[0], dtypes.float32
            if called and fn in _INLINED:
                fn += "_called"
            return typed_from(f"vmath.{fn}({arg})", lanes, o)
        return template
    return Elementwise(written_as(False), math=True, one_element=written_as(True))
