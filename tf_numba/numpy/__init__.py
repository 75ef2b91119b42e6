"""``tf_numba.numpy``: the NumPy-compatible namespace (``import tf_numba.numpy as tnp``).

Every function emits tf_numba primitives. Called on NumPy arrays outside any trace it
computes eagerly and returns NumPy arrays and scalars as NumPy does; called on traced values
it stages primitives into the program. NumPy 2 semantics throughout: Python scalars are weak
(``float32_array * 2.0`` stays float32), int / int is float64, ``sum`` of int32 is int64.

>>> import numpy as np, tf_numba.numpy as tnp
>>> tnp.sum(tnp.sin(np.arange(3, dtype=np.float32)) * 2.0).dtype
dtype('float32')

Functional updates replace in-place assignment: ``x.at[idx].set(v)`` on traced values and
``tnp.at(x)[idx].set(v)`` on any array (NumPy arrays are never modified).

| module | contents |
| --- | --- |
| math | ufuncs and elementwise composites, where, clip, isclose |
| reductions | sum, mean, var, argmax, cumsum, nan-functions, median, quantile |
| creation | zeros, full, arange, linspace, eye, array, meshgrid |
| manipulation | reshape, transpose, concatenate, split, tile, pad, diagonal, tril |
| products | dot, matmul, tensordot, inner, outer, kron, cross, trace |
| indexing | ``x[idx]``, ``.at``, take, take_along_axis, nonzero, select |
| sorting | sort, argsort, searchsorted, unique, isin, bincount |
| numerical | diff, gradient, trapezoid, convolve, interp, polyval, cov, corrcoef |
| linalg, fft | ``numpy.linalg`` and ``numpy.fft`` on the extension op families |
"""
import math as _math
import sys as _sys

import numpy as _np

from . import _methods
from .creation import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .manipulation import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403
from .numerical import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .functional import *  # noqa: F401,F403
from .index_tricks import *  # noqa: F401,F403
from . import fft, linalg  # noqa: F401  (tnp.fft, tnp.linalg)
from ._promote import result_type  # noqa: F401  (tnp.result_type)
from .products import einsum  # noqa: F401  (tnp.einsum)
from ..ext.einsum import einsum_path  # noqa: F401  (tnp.einsum_path)

_methods.install(_sys.modules[__name__])

# dtypes: NumPy's scalar types, so ``x.astype(tnp.float32)`` and ``tnp.float32(1)`` work.
bool_ = _np.bool_
bool = _np.bool_  # noqa: A001 - NumPy 2's name
int8 = _np.int8
int16 = _np.int16
int32 = _np.int32
int64 = _np.int64
uint8 = _np.uint8
uint16 = _np.uint16
uint32 = _np.uint32
uint64 = _np.uint64
uint = _np.uint
float16 = _np.float16
float32 = _np.float32
float64 = _np.float64
complex64 = _np.complex64
complex128 = _np.complex128
int_ = _np.int64
float_ = _np.float64
complex_ = _np.complex128
dtype = _np.dtype
from ..dtypes import finfo, iinfo  # noqa: E402,F401  (of traced values too)
issubdtype = _np.issubdtype
promote_types = _np.promote_types
can_cast = _np.can_cast
number, integer, floating, inexact, complexfloating, signedinteger, generic = (
    _np.number, _np.integer, _np.floating, _np.inexact, _np.complexfloating,
    _np.signedinteger, _np.generic)

double, single, cdouble, csingle = float64, float32, complex128, complex64
unsignedinteger, character, flexible, object_ = (
    _np.unsignedinteger, _np.character, _np.flexible, _np.object_)
isdtype = _np.isdtype
ComplexWarning = _np.exceptions.ComplexWarning
# NumPy's printing and saving: tf_numba's arrays are NumPy arrays
save, savez = _np.save, _np.savez
array_repr, array_str = _np.array_repr, _np.array_str
printoptions, get_printoptions, set_printoptions = (
    _np.printoptions, _np.get_printoptions, _np.set_printoptions)
# ``isinstance(x, tnp.ndarray)`` holds for tf_numba's arrays and traced values, as JAX's
from ..typing import Array as ndarray  # noqa: E402,F401

pi = _math.pi
e = _math.e
euler_gamma = _np.euler_gamma
inf = _math.inf
nan = _math.nan
newaxis = None

# Keep this last: the public names are the ones defined above, less the modules that
# implement them (tnp.linalg and tnp.fft are public namespaces of their own).
import types as _types  # noqa: E402
from ..core.public import public_dir as _public_dir  # noqa: E402

__all__ = sorted(name for name, value in globals().items()
                 if not name.startswith("_") and (not isinstance(value, _types.ModuleType)
                                                  or name in ("linalg", "fft")))
from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # errors name the function and the user's line (tracebacks.py)
__dir__ = _public_dir(globals())
