"""JAX's dtype helpers (``jax.dtypes``) over tf_numba's dtypes: bool, the signed and
unsigned ints of 8 to 64 bits, float16, float32, float64, complex64, complex128, with NumPy 2
promotion (``core/dtypes.py``).

>>> tf.dtypes.canonicalize_dtype(np.uint8)
dtype('uint8')
"""
import numpy as np

from .core import dtypes as _dtypes
from .core.dtypes import float0
from .errors import DTypeError

__all__ = ["TypePromotionError", "canonicalize_dtype", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "result_type", "scalar_type_of"]

# the error a promotion tf_numba does not make raises (JAX's name for it)
TypePromotionError = DTypeError
issubdtype = np.issubdtype


def _dtype_of(x):
    """The dtype of a dtype-like, or of an array or traced value."""
    if hasattr(x, "aval"):
        return x.aval.dtype
    return x.dtype if isinstance(x, (np.ndarray, np.generic)) else x


def iinfo(int_type):
    """Machine limits of an integer dtype, or of an array's or traced value's, as
    ``numpy.iinfo``.

    >>> tf.dtypes.iinfo(np.uint8).max
    255
    """
    return np.iinfo(_dtype_of(int_type))


def finfo(dtype):
    """Machine limits of a float dtype, or of an array's or traced value's, as
    ``numpy.finfo``.

    >>> float(tf.dtypes.finfo(np.float16).eps)
    0.0009765625
    """
    return np.finfo(_dtype_of(dtype))


def canonicalize_dtype(dtype, allow_extended_dtype=False):
    """The dtype tf_numba computes ``dtype`` in (``jax.dtypes.canonicalize_dtype``)."""
    return _dtypes.canonical(dtype)


def result_type(*args, return_weak_type_flag=False):
    """The dtype NumPy 2 promotion gives ``args`` (arrays, dtypes, Python scalars, which
    are weak), as ``jax.dtypes.result_type``."""
    dt = _dtypes.result_type(*[a.dtype if hasattr(a, "aval") else a for a in args])
    if return_weak_type_flag:
        return dt, all(isinstance(a, _dtypes.WEAK_SCALAR_TYPES) for a in args)
    return dt


def scalar_type_of(x):
    """The Python scalar type of ``x``'s kind: bool, int, float or complex."""
    kind = np.asarray(x).dtype.kind if not hasattr(x, "aval") else x.aval.dtype.kind
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind]


def itemsize_bits(dtype):
    """The size of one element of ``dtype`` in bits."""
    return np.dtype(dtype).itemsize * 8


from .tracebacks import mark_entry_points  # noqa: E402
mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
