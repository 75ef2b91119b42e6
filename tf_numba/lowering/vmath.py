"""Vectorizable math for generated kernels: numba from PyPI has no SVML, so ``np.exp``,
``np.tanh`` and ``np.log`` in a loop are scalar libm calls that keep LLVM from vectorizing
it. Written as straight-line arithmetic (selects, no branches) with integer/float bit casts,
the functions here let LLVM inline them and vectorize the loop.

``exp`` takes FreeBSD e_exp.c's Cody-Waite reduction and evaluates exp(r) as its Taylor
series to degree 13 in fused multiply-adds (no division: 143 -> 127 us for 128k float64
lanes): 0.86 ulp at most against a long-double reference on 4.5M samples over
[-745, 710] (NumPy's: 0.69), within 1 ulp of NumPy's, subnormals included, and exact on
NaN, +-inf and the overflow/underflow thresholds. ``exp32`` is float32 exp in float32
lanes (within 1 ulp of the correctly rounded result; NumPy's is within 2); ``tanh32``
likewise (within 1 ulp, 3x the float64 route's speed).

``tanh`` is Cephes' odd rational below |x| = 0.28 and 1 - 2 / (exp(2|x|) + 1) above, with
exp kept as 2^k (1 + hi - w) and the sum, quotient and difference compensated (as written,
that formula errs by up to 2.5 ulp); +-1 above |x| = 22. ``log`` follows FreeBSD's e_log.c
(x = 2^k (1 + f), log(1 + f) from s = f / (2 + f)), subnormals scaled by 2^54 first, with
its final sum compensated (0.84 ulp plain). Measured on 4M+ samples per range against a
long-double reference: tanh 0.64 ulp, log 0.58 ulp at most (NumPy's own SIMD float64
functions: 1.19 and 0.61), so at most 1 ulp from NumPy's results; float32 callers got the
correctly rounded float32 for all of 10^6 random values. Exact on NaN, +-inf, +-0 (tanh
keeps the sign of zero and is +-1 for huge |x|; log(0) = -inf, log(x < 0) = NaN) and on
subnormals. tests/test_vmath.py checks all of it.

Changing anything here changes what cached kernels compute: bump
``kernel_cache.FORMAT_VERSION`` with it.
"""
import math

import numba
import numpy as np
from numba import types
from numba.extending import intrinsic


@intrinsic
def _int64_bits_as_float64(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


@intrinsic
def _float64_bits_as_int64(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.int64))
    return types.int64(types.float64), codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c rounded once (llvm.fma: one instruction where the CPU has FMA)."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float64(types.float64, types.float64, types.float64), codegen


@intrinsic
def _fma32(typingctx, a, b, c):
    """float32 a * b + c rounded once."""
    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float32(types.float32, types.float32, types.float32), codegen


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_P1 = 1.66666666666666019037e-01
_P2 = -2.77777777770155933842e-03
_P3 = 6.61375632143793436117e-05
_P4 = -1.65339022054652515390e-06
_P5 = 4.13813679705723846039e-08
# 1 / n! for the Taylor series of exp
(_T2, _T3, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11, _T12,
 _T13) = (1.0 / math.factorial(n) for n in range(2, 14))
_OVERFLOW = 709.782712893383973096      # exp(x) = inf above
_UNDERFLOW = -745.13321910194110842     # exp(x) = 0 below


@numba.njit(cache=True, error_model="numpy")
def _exp_parts(x):
    """(k, hi, w) with exp(x) = 2^k (1 + hi - w): k integral, hi exact, |w| < 0.07.

    Keeping 1 + hi - w unsummed lets tanh use exp to far below an ulp."""
    k = np.floor(x * _INV_LN2 + 0.5)
    k = min(max(k, -1100.0), 1100.0)
    hi = x - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    return k, hi, lo - (r * c) / (2.0 - c)


@numba.njit(cache=True, error_model="numpy")
def exp(x):
    """exp of a float64 (float32 callers convert in and out: the result rounds correctly).

    >>> exp(0.5)
    1.6487212707001282
    """
    k = np.floor(x * _INV_LN2 + 0.5)
    k = min(max(k, -1100.0), 1100.0)
    hi = x - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    # exp(r) - 1 = hi + (r^2 q(r) - lo), q the Taylor series to r^11 / 13! (remainder
    # below 1e-17 on |r| <= ln2 / 2) in fused multiply-adds: no division, unlike the
    # rational form tanh keeps (_exp_parts), ~1.4x faster in vector lanes
    q = _fma(_fma(_fma(_fma(_T13, r, _T12), r, _T11), r, _T10), r, _T9)
    q = _fma(_fma(_fma(_fma(q, r, _T8), r, _T7), r, _T6), r, _T5)
    q = _fma(_fma(_fma(q, r, _T4), r, _T3), r, _T2)
    y = 1.0 + (hi + _fma(r * r, q, -lo))
    # 2^k as two exact factors, so subnormal results and k = 1024 need no special case
    ki = np.int64(k)
    k1 = ki >> 1
    scaled = (y * _int64_bits_as_float64((k1 + 1023) << 52)
              * _int64_bits_as_float64((ki - k1 + 1023) << 52))
    scaled = np.inf if x > _OVERFLOW else scaled
    scaled = 0.0 if x < _UNDERFLOW else scaled
    return x if x != x else scaled


@intrinsic
def _int32_bits_as_float32(typingctx, x):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float32))
    return types.float32(types.int32), codegen


# float32 exp: FreeBSD e_expf.c's reduction (ln2 in two parts, the high one with trailing
# zero bits so k * hi is exact), then exp(r) on |r| <= ln2/2 as its Taylor polynomial to
# r^7 (remainder < 6e-9, a tenth of an ulp) instead of a rational: no division, so float32
# lanes run 8 wide, ~2.7x the float64 route's speed.
_F32 = np.float32
_LN2_HI32 = _F32(6.9314575195e-01)
_LN2_LO32 = _F32(1.4286067653e-06)
_INV_LN2_32 = _F32(1.4426950216e+00)
_E2, _E3, _E4, _E5, _E6, _E7 = (_F32(1.0 / n) for n in (2, 6, 24, 120, 720, 5040))
_OVERFLOW32 = _F32(88.72283935546875)     # exp(x) rounds to inf above
_UNDERFLOW32 = _F32(-103.97208)           # and to 0 below


@numba.njit(cache=True, error_model="numpy")
def exp32(x):
    """exp of a float32 in float32 arithmetic: within 1 ulp of the correctly rounded
    result (NumPy's float32 exp: 2 ulp), exact on NaN, +-inf, 0 and the thresholds.

    >>> exp32(np.float32(0.5))       # float32(1.6487212), boxed as a Python float
    1.6487212181091309
    """
    k = np.floor(x * _INV_LN2_32 + _F32(0.5))
    k = min(max(k, _F32(-160.0)), _F32(160.0))
    r = (x - k * _LN2_HI32) - k * _LN2_LO32
    # Horner in fused multiply-adds: half the instructions, one rounding per step
    p = _fma32(_fma32(_fma32(_fma32(_fma32(_E7, r, _E6), r, _E5), r, _E4), r, _E3), r, _E2)
    y = _F32(1.0) + _fma32(r * r, p, r)
    # 2^k as two exact factors, so subnormal results need no special case
    ki = np.int32(k)
    k1 = ki >> 1
    scaled = (y * _int32_bits_as_float32((k1 + 127) << 23)
              * _int32_bits_as_float32((ki - k1 + 127) << 23))
    scaled = _F32(np.inf) if x > _OVERFLOW32 else scaled
    scaled = _F32(0.0) if x < _UNDERFLOW32 else scaled
    return x if x != x else scaled


# float32 tanh in float32 lanes: below |x| = 0.55, x + x^3 P(x^2) with P of degree 6 fitted
# (least squares on 4000 Chebyshev nodes in x^2 against 40-digit tanh, coefficients rounded
# to float32); above, 1 - 2 / (exp32(2|x|) + 1), whose cancellation costs at most an ulp
# there; the sign restored by copysign (so -0.0 stays -0.0).
_TANH32_P = tuple(_F32(c) for c in (
    -0.3333333432674408, 0.13333332538604736, -0.05396806448698044, 0.021865688264369965,
    -0.00882638618350029, 0.0034054939169436693, -0.000966380990575999))
_TANH32_POLY_BELOW = _F32(0.55)


@numba.njit(cache=True, error_model="numpy")
def tanh32(x):
    """tanh of a float32 in float32 arithmetic: within 1 ulp of the correctly rounded
    result (as NumPy's float32 tanh), exact on NaN, +-inf, +-0.

    >>> tanh32(np.float32(0.5))      # float32(0.46211717), boxed as a Python float
    0.46211716532707214
    """
    p0, p1, p2, p3, p4, p5, p6 = _TANH32_P
    a = abs(x)
    z = a * a
    small = a + a * z * (p0 + z * (p1 + z * (p2 + z * (p3 + z * (p4 + z * (p5 + z * p6))))))
    big = _F32(1.0) - _F32(2.0) / (exp32(a + a) + _F32(1.0))
    return np.copysign(small if a < _TANH32_POLY_BELOW else big, x)


# Cephes tanh.c: tanh(a) = a + a^3 P(a^2) / Q(a^2) on [0, 0.625], Q monic. Used below 0.28
# only: its rounding grows past 0.6 ulp above 0.35, and the exp form below loses up to 0.9
# ulp to cancellation near 0.15.
_TP0 = -9.64399179425052238628e-01
_TP1 = -9.92877231001918586564e+01
_TP2 = -1.61468768441708447952e+03
_TQ0 = 1.12811678491632931402e+02
_TQ1 = 2.23548839060100448583e+03
_TQ2 = 4.84406305325125486048e+03
_TANH_RATIONAL_BELOW = 0.28
_TANH_ONE_ABOVE = 22.0      # 1 - tanh(22) ~ 2^-62, far below half an ulp of 1


@numba.njit(cache=True, error_model="numpy")
def tanh(x):
    """tanh of a float64 (float32 callers convert in and out), within 0.64 ulp.

    >>> tanh(0.5)
    0.46211715726000974
    """
    a = abs(x)
    s = a * a
    small = a + a * s * ((_TP0 * s + _TP1) * s + _TP2) / (((s + _TQ0) * s + _TQ1) * s + _TQ2)
    # 1 - 2 / (1 + e), e = exp(2a) = p (1 + hi - w), p = 2^k. Computed plainly it errs by
    # 2.5 ulp; so d = 1 + e as dh + dl by two Fast2Sums (larger operand first), 2 / d as
    # q0 + ql (the remainder by FMA), and 1 - q0 by Fast2Sum: only the last addition rounds
    k, hi, w = _exp_parts(2.0 * a)
    p = _int64_bits_as_float64((np.int64(k) + 1023) << 52)
    one_p = 1.0 + p
    t = one_p + p * hi
    dh = t - p * w
    dl = ((one_p - t) + p * hi) + ((t - dh) - p * w)
    q0 = 2.0 / dh
    ql = (_fma(-q0, dh, 2.0) - q0 * dl) * (0.5 * q0)   # / dh: a correction, no divide
    r0 = 1.0 - q0
    large = r0 + (((1.0 - r0) - q0) - ql)
    y = small if a < _TANH_RATIONAL_BELOW else large
    y = 1.0 if a > _TANH_ONE_ABOVE else y
    return x if x != x else np.copysign(y, x)


# FreeBSD e_log.c: x = 2^k (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)), s = f / (2 + f),
# log(1 + f) = f - hfsq + s (hfsq + R(s^2)), hfsq = f^2 / 2, R a minimax fit (2^-58.45)
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_SMALLEST_NORMAL = 2.2250738585072014e-308
_TWO54 = 18014398509481984.0
_MANTISSA = (1 << 52) - 1
_EXPONENT_OF_ONE = 1023 << 52
_SQRT2_CARRY = 0x95f6400000000      # mantissas from sqrt(2) up carry into the exponent


@numba.njit(cache=True, error_model="numpy")
def log(x):
    """Natural log of a float64 (float32 callers convert in and out), within 0.58 ulp.

    >>> log(2.0)
    0.6931471805599453
    """
    subnormal = x < _SMALLEST_NORMAL
    bits = _float64_bits_as_int64(x * _TWO54 if subnormal else x)
    # 1 + f = the mantissa; from sqrt(2) up, halved and k raised by one
    m = bits & _MANTISSA
    carry = (m + _SQRT2_CARRY) & (1 << 52)
    f = _int64_bits_as_float64(m | (carry ^ _EXPONENT_OF_ONE)) - 1.0
    dk = np.float64((bits >> 52) + (carry >> 52)) - (1023.0 + 54.0 if subnormal else 1023.0)
    # s as s + s_err: 2 + f by Fast2Sum, the quotient's remainder by FMA, times
    # 1 / (2 + f) = (1 - s) / 2 (a correction: no second divide)
    two_f = 2.0 + f
    s = f / two_f
    s_err = (_fma(-s, two_f, f) - s * ((2.0 - two_f) + f)) * (0.5 - 0.5 * s)
    # one Horner chain, not FreeBSD's odd/even pair: compiled alone, LLVM pairs those into
    # <2 x double> ops, and a loop holding vector ops no longer vectorizes once inlined
    z = s * s
    r = z * (_LG1 + z * (_LG2 + z * (_LG3 + z * (_LG4 + z * (_LG5 + z * (_LG6 + z * _LG7))))))
    # k ln2_hi + f - hfsq + s (hfsq + r) with every rounding error kept (FMA for products,
    # Fast2Sum for sums, larger operand first) and added back before the last addition:
    # plainly summed, as FreeBSD does, the error reaches 0.84 ulp
    hfsq = 0.5 * f * f
    hfsq_err = _fma(0.5 * f, f, -hfsq)
    a = f - hfsq
    a_err = ((f - a) - hfsq) - hfsq_err
    b = dk * _LN2_HI + a
    b_err = (dk * _LN2_HI - b) + a
    u = hfsq + r
    su = s * u
    su_err = _fma(s, u, -su) + s * ((hfsq - u) + r) + s_err * u
    y = b + (su + (b_err + a_err + su_err + dk * _LN2_LO))
    y = -np.inf if x == 0.0 else y
    y = np.nan if x < 0.0 else y
    return y if x < np.inf else x
