"""Vectorizable math for generated kernels: numba from PyPI has no SVML, so ``np.exp`` in a
loop is a scalar libm call (~4x slower than NumPy's SIMD exp). Written as straight-line
arithmetic with an integer-to-float bit cast, ``exp`` here lets LLVM vectorize the loop.

``exp`` follows FreeBSD's e_exp.c (Cody-Waite reduction, rational approximation, error
< 1 ulp): measured within 1 ulp of NumPy's on [-745, 710], subnormals included, and exact
on NaN, +-inf and the overflow/underflow thresholds. Changing anything here changes what
cached kernels compute: bump ``kernel_cache.FORMAT_VERSION`` with it.
"""
import numba
import numpy as np
from numba import types
from numba.extending import intrinsic


@intrinsic
def _int64_bits_as_float64(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
_OVERFLOW = 709.782712893383973096      # exp(x) = inf above
_UNDERFLOW = -745.13321910194110842     # exp(x) = 0 below


@numba.njit(cache=True, error_model="numpy")
def exp(x):
    """exp of a float64 (float32 callers convert in and out: the result rounds correctly)."""
    k = np.floor(x * _INV_LN2 + 0.5)
    k = min(max(k, -1100.0), 1100.0)
    hi = x - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    # 2^k as two exact factors, so subnormal results and k = 1024 need no special case
    ki = np.int64(k)
    k1 = ki >> 1
    scaled = (y * _int64_bits_as_float64((k1 + 1023) << 52)
              * _int64_bits_as_float64((ki - k1 + 1023) << 52))
    scaled = np.inf if x > _OVERFLOW else scaled
    scaled = 0.0 if x < _UNDERFLOW else scaled
    return x if x != x else scaled
