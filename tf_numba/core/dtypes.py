"""The dtypes tf_numba supports and NumPy 2 type promotion over them.

Python scalars are *weak* (NEP 50): ``float32_array * 2.0`` and ``uint8_array + 1`` keep
the array's dtype. NumPy 2's ``np.result_type`` already implements that rule when handed
Python scalars, so promotion is delegated to it (the one table) and only the result is
checked against the supported set. JAX's lattice differs from it in one rule only: an
integer meeting a float or complex takes that float's width there (int32 + float32 is
float32, int16 + float16 float16), where NumPy widens the float until it holds the integer
(float64, float32); tf_numba promotes as NumPy (NumPy semantics by default).
"""
import functools

import numpy as np

from ..errors import DTypeError

bool_ = np.dtype(np.bool_)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
uint16 = np.dtype(np.uint16)
uint32 = np.dtype(np.uint32)
uint64 = np.dtype(np.uint64)
float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
complex64 = np.dtype(np.complex64)
complex128 = np.dtype(np.complex128)

# the dtype of the gradient of an integer input (``grad(..., allow_int=True)``), JAX's:
# a zero-size structured dtype, so such a gradient holds no data
float0 = np.dtype([("float0", np.void, 0)])

SUPPORTED = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
             float16, float32, float64, complex64, complex128)
SHORT_NAMES = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
               uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64", float16: "f16",
               float32: "f32", float64: "f64", complex64: "c64", complex128: "c128"}
WEAK_SCALAR_TYPES = (bool, int, float, complex)
_SUPPORTED_SET = {d: d for d in SUPPORTED}


def canonical(dtype_like, *, what="dtype"):
    """The supported ``np.dtype`` for ``dtype_like`` (a dtype, type or name), or DTypeError."""
    if dtype_like is None:
        return float64
    found = _SUPPORTED_SET.get(dtype_like)     # a supported np.dtype: the common case
    if found is not None:
        return found
    try:
        dt = np.dtype(dtype_like)
    except TypeError as exc:
        raise DTypeError(f"unknown {what} {dtype_like!r}; use one of "
                         f"{', '.join(d.name for d in SUPPORTED)}") from exc
    if dt in SUPPORTED:
        return dt
    raise DTypeError(f"{what} {dt.name} is not supported; use one of "
                     f"{', '.join(d.name for d in SUPPORTED)} (convert with .astype)")


def of_scalar(value):
    """The default dtype of a Python scalar when it stands alone (int64, float64, ...)."""
    return canonical(np.result_type(value))


def result_type(*operands):
    """NumPy 2 promotion over dtypes and (weak) Python scalars."""
    try:
        return _result_type(*operands)
    except TypeError:       # an unhashable operand
        return canonical(np.result_type(*operands))


@functools.lru_cache(maxsize=1024, typed=True)
def _result_type(*operands):
    # keyed by the operands and their types (2 and 2.0 promote differently); a Python
    # int's value can matter too (overflow)
    return canonical(np.result_type(*operands))


def is_bool(dt):
    return dt == bool_


def is_integer(dt):
    return dt.kind in "iu"


def is_inexact(dt):
    return dt.kind in "fc"


def is_complex(dt):
    return dt.kind == "c"


def real_part(dt):
    """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
    return {complex64: float32, complex128: float64}.get(dt, dt)


def complex_of(dt):
    return {float16: complex64, float32: complex64, float64: complex128}.get(dt, dt)


def inexact_of(dt):
    """The dtype a NumPy ufunc like ``sin`` computes in for an input of dtype ``dt``."""
    return dt if is_inexact(dt) else float64
