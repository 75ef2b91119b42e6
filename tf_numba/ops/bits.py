"""Bit primitives: ``shift_right_logical`` (JAX's ``lax.shift_right_logical``).

Threefry's rotations need a right shift; as a floor division by a power of two it
compiled to numba's ``np.floor_divide`` (zero and sign checks that keep the loop scalar),
3x slower than the shift over a whole Threefry stream. Left shifts stay products.
"""
import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import defzero
from ..core.primitive import Primitive, register
from ..errors import DTypeError
from ..kernel_vocab.scalar_exprs import typed, written
from .elementwise import _coerce, batch_elementwise, elementwise_shape

_UNSIGNED = {dtypes.int32: np.uint32, dtypes.int64: np.uint64}


def _shift_eval(x, n):
    if x.dtype != n.dtype or x.dtype not in _UNSIGNED:
        raise DTypeError(f"needs two operands of one integer dtype (int32 or int64), got "
                         f"{x.dtype.name} and {n.dtype.name}", op="shift_right_logical")
    return ShapedArray(elementwise_shape("shift_right_logical", (x, n)), x.dtype)


def _shift_impl(x, n):
    # the bits of x as unsigned, shifted in zeros; counts outside [0, bits) give 0, as JAX
    unsigned = _UNSIGNED[np.dtype(x.dtype)]
    bits = np.iinfo(unsigned).bits
    n = np.asarray(n)
    in_range = (n >= 0) & (n < bits)
    shifted = np.right_shift(np.asarray(x).astype(unsigned),
                             np.where(in_range, n, 0).astype(unsigned))
    return np.where(in_range, shifted, 0).astype(x.dtype)


def _shift_source(a, i, o):
    unsigned, bits = f"np.u{i.name}", np.iinfo(i).bits
    return typed(f"({unsigned}({a[0]}) >> {unsigned}({a[1]}) if 0 <= {a[1]} < {bits} "
                 f"else {unsigned}(0))", o)


shift_right_logical_p = Primitive("shift_right_logical", _shift_eval, _shift_impl)
defzero(shift_right_logical_p)
register("lower", shift_right_logical_p, written(_shift_source))
batch_elementwise(shift_right_logical_p)

PRIMS = {"shift_right_logical": shift_right_logical_p}


def shift_right_logical(x, n):
    """``x >> n`` filling with zeros (the bits of ``x`` read as unsigned); 0 for counts
    outside ``[0, bits)``. Integer operands of one dtype; Python ints are weak.

    >>> shift_right_logical(np.array([-1, 256]), 4)
    array([1152921504606846975,                  16])
    """
    return shift_right_logical_p.bind(*_coerce((x, n)))
