"""The Threefry-2x32 block cipher of ``random``'s keys and bits as one primitive, as JAX's
``threefry2x32_p``: ``threefry2x32(k0, k1, x0, x1)`` hashes the counters ``(x0, x1)``
under the key ``(k0, k1)`` (int64 operands holding 32-bit words, rank 0 ones broadcast)
and returns both output words in one int64, ``y0`` in its high half.

As one primitive a kernel computes it by one call to a compiled helper
(``lowering.threefry``), where its 20 rounds written out as elementwise primitives made
~100 lines of kernel source per hash, and numba's front end grows with the square of a
kernel's length: ``jit(random.gamma)``, seven hashes in a rejection loop, compiled for
~20 s.

``threefry2x32_words`` is the cipher once, for NumPy's uint32 arrays (the interpreter)
and numba's uint32 scalars (the helper) alike: every sum, product and shift is cut back
to 32 bits by ``np.uint32``, which numba widens and NumPy does not.
"""
import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import defzero
from ..core.primitive import Primitive, register
from ..errors import DTypeError
from ..numerics import threefry2x32_words, pack
from ..kernel_vocab.scalar_exprs import written
from .elementwise import _coerce, batch_elementwise, elementwise_shape

def _abstract_eval(*avals):
    if any(a.dtype != dtypes.int64 for a in avals):
        raise DTypeError("takes int64 words (values below 2**32), got "
                         + ", ".join(a.dtype.name for a in avals), op="threefry2x32")
    return ShapedArray(elementwise_shape("threefry2x32", avals), dtypes.int64)


def _impl(k0, k1, x0, x1):
    words = [np.asarray(x).astype(np.uint32) for x in (k0, k1, x0, x1)]
    with np.errstate(over="ignore"):    # rank-0 operands compute in NumPy scalars
        return np.asarray(pack(*threefry2x32_words(*words)))


def _source(args, in_dtype, out_dtype):
    return f"threefry.threefry2x32({', '.join(args)})"


threefry2x32_p = Primitive("threefry2x32", _abstract_eval, _impl)
defzero(threefry2x32_p)
batch_elementwise(threefry2x32_p)
register("lower", threefry2x32_p, written(_source))


def threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 of the counters ``(x0, x1)`` under the key ``(k0, k1)``: int64
    arrays of 32-bit words (equal shapes or rank 0); both output words in one int64.

    >>> threefry2x32(*np.array([0, 0, 0, 0]))     # JAX's threefry_2x32((0, 0), (0, 0))
    array(7719171245655871230)
    """
    return threefry2x32_p.bind(*_coerce((k0, k1, x0, x1)))
