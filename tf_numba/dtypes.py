"""JAX's dtype helpers (``jax.dtypes``) over tf_numba's dtypes: bool, int32, int64,
float32, float64, complex64, complex128, with NumPy 2 promotion (``core/dtypes.py``).

>>> tf.dtypes.canonicalize_dtype(np.float16)     # computed in float32
dtype('float32')
"""
import numpy as np

from .core import dtypes as _dtypes
from .core.dtypes import float0
from .errors import DTypeError

__all__ = ["TypePromotionError", "canonicalize_dtype", "finfo", "float0", "iinfo",
           "issubdtype", "itemsize_bits", "result_type", "scalar_type_of"]

# the error a promotion tf_numba does not make raises (JAX's name for it)
TypePromotionError = DTypeError
finfo, iinfo, issubdtype = np.finfo, np.iinfo, np.issubdtype


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
