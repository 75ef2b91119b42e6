"""``numerics``' Threefry cipher compiled once, for the kernels that call it per element
(``threefry.threefry2x32(k0, k1, x0, x1)``): the kernel's source stays one line per hash,
and LLVM inlines the helper into the kernel's loop and vectorizes it in 32-bit lanes."""
import numba
import numpy as np

from .. import numerics as _cipher

_OPTIONS = dict(cache=True, error_model="numpy")
_words = numba.njit(**_OPTIONS)(_cipher.threefry2x32_words)
_pack = numba.njit(**_OPTIONS)(_cipher.pack)


@numba.njit(**_OPTIONS)
def threefry2x32(k0, k1, x0, x1):
    """``ops.threefry.threefry2x32`` of one element: int64 words in, both words out."""
    y0, y1 = _words(np.uint32(k0), np.uint32(k1), np.uint32(x0), np.uint32(x1))
    return _pack(y0, y1)
