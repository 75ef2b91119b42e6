"""Vectorizable math for generated kernels: numba from PyPI has no SVML, so ``np.exp``,
``np.tanh``, ``np.log``, ``np.log1p``, ``np.expm1``, ``np.sin`` and ``np.cos`` in a loop are
scalar libm calls that keep LLVM from vectorizing it. Written as straight-line arithmetic
(selects, no branches) with integer/float bit casts, the functions here let LLVM inline
them and vectorize the loop.

``exp`` takes FreeBSD e_exp.c's Cody-Waite reduction and evaluates exp(r) as its Taylor
series to degree 13 in fused multiply-adds (no division: 143 -> 127 us for 128k float64
lanes; k from a rounding shift, not floor and conversion: 126 -> 116 us, same bits on
40M random inputs): 0.86 ulp at most against a long-double reference on 4.5M samples over
[-745, 710] (NumPy's: 0.69), within 1 ulp of NumPy's, subnormals included, and exact on
NaN, +-inf and the overflow/underflow thresholds. ``exp32`` is float32 exp in float32
lanes (within 1 ulp of the correctly rounded result; NumPy's is within 2); ``tanh32``
likewise (within 1 ulp, 3x the float64 route's speed); ``log32`` too (FreeBSD e_logf.c:
0.83 ulp at most from the exact log on 24M samples, NumPy's float32 log 3.8; 2.3x the
float64 route's speed, and a float32 loop that calls it keeps all its lanes).

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

``sin`` and ``cos`` share one reduction x = n pi/2 + r (Cody-Waite below 2^25, Payne-Hanek
from a table of 2/pi's bits above, r a double-double) and compute both polynomials, so a
loop calling both on one x does the work once (LLVM merges the copies). They and
``_sin_cos_parts`` are inlined by numba (``inline="always"``): LLVM inlines nothing this
big, and a call keeps the loop scalar; the small helpers are left to LLVM, as numba's
inlining of each costs compile time (a kernel with sin and cos: 1.1 s -> 0.5 s). Against
a long-double reference on 14M samples (|x| below 1, 10, 1e5, 1e9, 1e22, 2^1024 and random
bit patterns) and against mpmath on 1.8k doubles next to multiples of pi/2: 0.62 ulp at
most for both (NumPy's: 0.52, but 8 ulp on cos(6381956970095103 2^797), the double closest
to a multiple of pi/2), so within 1 ulp of NumPy but there; sin keeps the sign of zero,
NaN and +-inf give NaN. 128k float64 values in [-10, 10] take 4.6 ns each (numba's libm
call: 16.5, NumPy's ufunc: 16). ``sin32``/``cos32`` take float32 to float32, computing in
float64 with a two-window Payne-Hanek reduction for every |x|: over all 2^32 float32
inputs, never more than 1 ulp from NumPy's float32 sin/cos (itself 1 ulp from the
correctly rounded result on 1.6% of them) and equal to float64's result rounded to
float32 on all but 940 (sin) and 982 (cos); 2 ns a value (numba's libm call: 8, NumPy's
own AVX-512 float32 loop: 0.5-0.8; the two table gathers alone cost 0.5).

``log1p`` is log(u) + e / u for u = 1 + x rounded and its rounding error e (Fast2Sum),
x - x^2 / 2 below |x| = 2^-29: 1.02 ulp at most against a long-double reference on 5M
samples over every exponent (NumPy's: 0.59), within 1 ulp of NumPy's; float32 callers
got the correctly rounded float32 on all of 1.5M random values (NumPy's float32 log1p is
up to 2 ulp off). It is inlined by numba: its call of ``log`` then inlines into the loop,
which vectorizes (10^6 values in [-0.9, 5]: 2.7 ms, NumPy's scalar ufunc 17-21 ms).

``expm1`` is exp's reduction with 2^k (1 + m) - 1 summed as (2^k - 1) + 2^k m, the
rounding error of the main addition kept: 1.15 ulp at most against a long-double
reference on 3M samples over [-745, 710] (NumPy's: 0.52), within 1 ulp of NumPy's;
float32 callers got the correctly rounded float32 on all of 2M random values (NumPy's
float32 expm1: up to 2 ulp off). 10^6 values in [-3, 3]: 1.3 ms (NumPy's ufunc 11-13 ms).

Changing anything here changes what cached kernels compute: bump
``kernel_cache.FORMAT_VERSION`` with it.
"""
import functools
import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _bitcast(source, target, name):
    """An intrinsic reading the bits of a ``source`` value as a ``target`` of the same
    width (no conversion: one register move, or none)."""
    def cast(typingctx, x):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(target))
        return target(source), codegen
    cast.__name__ = name
    return intrinsic(cast)


def _fused_multiply_add(dtype, name):
    """An intrinsic ``a * b + c`` rounded once, in ``dtype`` (llvm.fma: one instruction
    where the CPU has FMA)."""
    def fma(typingctx, a, b, c):
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return dtype(dtype, dtype, dtype), codegen
    fma.__name__ = name
    return intrinsic(fma)


_int64_bits_as_float64 = _bitcast(types.int64, types.float64, "_int64_bits_as_float64")
_float64_bits_as_int64 = _bitcast(types.float64, types.int64, "_float64_bits_as_int64")
_int32_bits_as_float32 = _bitcast(types.int32, types.float32, "_int32_bits_as_float32")
_float32_bits_as_int32 = _bitcast(types.float32, types.int32, "_float32_bits_as_int32")
_fma = _fused_multiply_add(types.float64, "_fma")
_fma32 = _fused_multiply_add(types.float32, "_fma32")


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
_ROUNDING_SHIFT = 1.5 * 2.0 ** 52        # (y + it) - it rounds y to an integer
_ROUNDING_SHIFT_BITS = np.int64(np.array([_ROUNDING_SHIFT]).view(np.int64)[0])
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
def _exp_reduced(x):
    """``(ki, hi, tail, two_k1, two_k2)``: exp(x) = 2^k (1 + hi + tail) with k = ``ki``
    (int64), |hi + tail| <= ln2 / 2, and 2^k = ``two_k1 * two_k2``, two exact factors, so
    that subnormal results and k = 1024 need no special case. Lanes where k is out of
    range are the overflow and underflow ones, which the callers replace; NaN runs through.
    """
    # k = round(x / ln2) from adding 1.5 * 2^52, which leaves k in the low bits of the sum:
    # no floor, no clamp, no float-to-int conversion (AVX2 has none for int64 lanes)
    shifted = _fma(x, _INV_LN2, _ROUNDING_SHIFT)
    k = shifted - _ROUNDING_SHIFT
    hi = x - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    # exp(r) - 1 = hi + (r^2 q(r) - lo), q the Taylor series to r^11 / 13! (remainder
    # below 1e-17 on |r| <= ln2 / 2) in fused multiply-adds: no division, unlike the
    # rational form tanh keeps (_exp_parts), ~1.4x faster in vector lanes
    q = _fma(_fma(_fma(_fma(_T13, r, _T12), r, _T11), r, _T10), r, _T9)
    q = _fma(_fma(_fma(_fma(q, r, _T8), r, _T7), r, _T6), r, _T5)
    q = _fma(_fma(_fma(q, r, _T4), r, _T3), r, _T2)
    ki = _float64_bits_as_int64(shifted) - _ROUNDING_SHIFT_BITS
    k1 = ki >> 1
    return (ki, hi, _fma(r * r, q, -lo), _int64_bits_as_float64((k1 + 1023) << 52),
            _int64_bits_as_float64((ki - k1 + 1023) << 52))


@numba.njit(cache=True, error_model="numpy")
def exp(x):
    """exp of a float64 (float32 callers convert in and out: the result rounds correctly).

    >>> exp(0.5)
    1.6487212707001282
    """
    _, hi, tail, two_k1, two_k2 = _exp_reduced(x)
    scaled = (1.0 + (hi + tail)) * two_k1 * two_k2
    scaled = np.inf if x > _OVERFLOW else scaled
    scaled = 0.0 if x < _UNDERFLOW else scaled
    return x if x != x else scaled


@numba.njit(cache=True, error_model="numpy")
def expm1(x):
    """exp(x) - 1 of a float64, accurate near 0 (float32 callers convert in and out).

    ``exp``'s reduction x = k ln2 + r and its exp(r) - 1 = m, kept apart: expm1(x) =
    (2^k - 1) + 2^k m, where 2^k - 1 is exact for the k that matter (above 56 the 1 is
    below an ulp), summed with its rounding error kept.

    >>> expm1(1e-20)
    1e-20
    """
    ki, hi, tail, two_k1, two_k2 = _exp_reduced(x)
    # (2^k - 1) + 2^k hi by TwoSum, its rounding error added back with 2^k tail: summed
    # plainly, 1 - 0.58 at k = 1 (x just above ln2 / 2) erred by 1.6 ulp
    a = two_k1 * two_k2 - 1.0
    b = (hi * two_k1) * two_k2
    s = a + b
    b_part = s - a
    err = (a - (s - b_part)) + (b - b_part)
    y = s + (err + (tail * two_k1) * two_k2)
    y = ((1.0 + (hi + tail)) * two_k1) * two_k2 if ki > 56 else y   # 2^1024 (1 + m) < inf
    y = np.inf if x > _OVERFLOW else y
    y = -1.0 if x < _EXPM1_IS_MINUS_ONE else y
    y = x if x == 0.0 else y            # keeps the sign of zero
    return x if x != x else y


_EXPM1_IS_MINUS_ONE = -40.0     # exp(x) below half an ulp of 1


# float32 exp: FreeBSD e_expf.c's reduction (ln2 in two parts, the high one with trailing
# zero bits so k * hi is exact), then exp(r) on |r| <= ln2/2 as its Taylor polynomial to
# r^7 (remainder < 6e-9, a tenth of an ulp) instead of a rational: no division, so float32
# lanes run 8 wide, ~2.7x the float64 route's speed. k = round(x / ln2) comes from adding
# 1.5 * 2^23, which leaves k in the low bits of the sum (so no floor and no conversion), and
# needs no clamp: lanes where k is out of range are the overflow and underflow ones,
# replaced at the end; NaN runs through as NaN. Checked on all 2^32 inputs: within 1 ulp
# of float64 exp rounded to float32, as before, with 6 of 31 vector operations fewer
# (~19% faster in a loop).
_F32 = np.float32
_LN2_HI32 = _F32(6.9314575195e-01)
_LN2_LO32 = _F32(1.4286067653e-06)
_INV_LN2_32 = _F32(1.4426950216e+00)
_ROUNDING_SHIFT32 = _F32(1.5 * 2 ** 23)
_ROUNDING_SHIFT32_BITS = np.int32(np.array([_ROUNDING_SHIFT32]).view(np.int32)[0])
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
    shifted = _fma32(x, _INV_LN2_32, _ROUNDING_SHIFT32)   # 1.5 * 2^23 + k, k = round(x/ln2)
    k = shifted - _ROUNDING_SHIFT32
    r = _fma32(-k, _LN2_LO32, _fma32(-k, _LN2_HI32, x))
    # Horner in fused multiply-adds: half the instructions, one rounding per step
    p = _fma32(_fma32(_fma32(_fma32(_fma32(_E7, r, _E6), r, _E5), r, _E4), r, _E3), r, _E2)
    y = _F32(1.0) + _fma32(r * r, p, r)
    # 2^k as two exact factors, so subnormal results need no special case
    ki = _float32_bits_as_int32(shifted) - _ROUNDING_SHIFT32_BITS
    k1 = ki >> 1
    scaled = (y * _int32_bits_as_float32((k1 + 127) << 23)
              * _int32_bits_as_float32((ki - k1 + 127) << 23))
    scaled = _F32(np.inf) if x > _OVERFLOW32 else scaled
    return _F32(0.0) if x < _UNDERFLOW32 else scaled


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


_TWO_MINUS_29 = 2.0 ** -29


@numba.njit(cache=True, error_model="numpy", inline="always")
def log1p(x):
    """log(1 + x) of a float64, accurate near 0 (float32 callers convert in and out).

    1 + x rounds to u with an error e = (1 + x) - u that Fast2Sum gives exactly, and
    log1p(x) = log(u) + log(1 + e / u), where |e / u| <= 2^-53 makes the last term e / u
    to far below an ulp of the result (Goldberg's device; FreeBSD's s_log1p.c applies the
    same correction). So log1p costs a log, a divide and four additions.

    >>> log1p(1e-20)
    1e-20
    """
    u = 1.0 + x
    e = x - (u - 1.0) if abs(x) <= 1.0 else 1.0 - (u - x)
    y = log(u) + e / u
    # below 2^-29 the series' third term is under 2^-58 |x|: x - x^2 / 2 rounds better
    # than the sum above, whose log(u) is of a u within an ulp or two of 1
    y = x - 0.5 * x * x if abs(x) < _TWO_MINUS_29 else y
    y = -np.inf if x == -1.0 else y
    y = x if x == 0.0 else y            # keeps the sign of zero
    return y if x < np.inf else x


# float32 log in float32 lanes: FreeBSD e_logf.c's x = 2^k (1 + f), s = f / (2 + f), its
# degree-4 polynomial in s^2 (Lg1-Lg4) and ln 2 in two parts, subnormals scaled by 2^25 first
_LOG32_LG = tuple(_F32(c) for c in (0.66666662693, 0.40000972152, 0.28498786688,
                                     0.24279078841))
_LOG32_LN2_HI = _F32(6.9313812256e-01)
_LOG32_LN2_LO = _F32(9.0580006145e-06)
_SMALLEST_NORMAL32 = _F32(np.finfo(np.float32).tiny)
_TWO25_32 = _F32(2.0 ** 25)
_MANTISSA32 = np.int32((1 << 23) - 1)
_SQRT2_CARRY32 = np.int32(0x95f64 << 3)     # mantissas from sqrt(2) up carry into the exponent
_CARRY_BIT32 = np.int32(1 << 23)
_EXPONENT_OF_ONE32 = np.int32(127 << 23)
_BIAS32, _BIAS32_SUBNORMAL = _F32(127.0), _F32(127.0 + 25.0)


@numba.njit(cache=True, error_model="numpy")
def log32(x):
    """log of a float32 in float32 arithmetic, within 1 ulp of the correctly rounded
    result; log(0) = -inf, log(x < 0) = NaN, exact on NaN and +inf.

    >>> log32(np.float32(2.0))       # float32(0.6931472), boxed as a Python float
    0.6931471824645996
    """
    lg1, lg2, lg3, lg4 = _LOG32_LG
    subnormal = x < _SMALLEST_NORMAL32
    bits = _float32_bits_as_int32(x * _TWO25_32 if subnormal else x)
    m = bits & _MANTISSA32
    carry = (m + _SQRT2_CARRY32) & _CARRY_BIT32
    f = _int32_bits_as_float32(m | (carry ^ _EXPONENT_OF_ONE32)) - _F32(1.0)
    k = _F32((bits >> 23) + (carry >> 23)) - (_BIAS32_SUBNORMAL if subnormal else _BIAS32)
    s = f / (_F32(2.0) + f)
    z = s * s
    w = z * z
    r = z * (lg1 + w * lg3) + w * (lg2 + w * lg4)
    hfsq = _F32(0.5) * f * f
    y = k * _LOG32_LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LOG32_LN2_LO)) - f)
    y = _F32(-np.inf) if x == _F32(0.0) else y
    y = _F32(np.nan) if x < _F32(0.0) else y
    return y if x < _F32(np.inf) else x


# sin and cos. x = n pi/2 + r, |r| <= pi/4, as r = rh + rl (a double-double: x can lie
# within 2^-61 of a multiple of pi/2, so r needs ~120 good bits), then sin(r) and cos(r)
# from their Taylor-shaped polynomials and the quadrant n mod 4 picks one and its sign.
# Below 2^25 the reduction is Cody-Waite with pi/2 in three doubles; above, Payne-Hanek
# with a table of 2/pi's bits. Both are straight-line code, and LLVM computes both for
# every lane and selects: branching to a libm call for rare huge lanes keeps the loop
# from vectorizing at all.
_PIO2_1 = 1.5707963267948966          # pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 to 2^-160
_PIO2_2 = 6.123233995736766e-17
_PIO2_3 = -1.4973849048591698e-33
_INV_PIO2 = 0.6366197723675814
_CODY_WAITE_BELOW = 33554432.0         # 2^25: n < 2^25, so n _PIO2_3 errs < 2^-130
_SIN_TINY = 2.0 ** -26                 # sin(x) rounds to x below

# floor(2/pi 2^1200), hex digits (computed with mpmath at 1400 bits)
_TWO_OVER_PI_2_1200 = int(
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006"
    "492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c8"
    "45f8bbdf9283b1ff897ffde05980fef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527"
    "bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d0856033046fc7b", 16)
_PH_FIRST_EXPONENT = 1023 + 25         # biased exponent of _CODY_WAITE_BELOW


def _payne_hanek_table(exponents, mantissa_bits, windows):
    """Row e for x = M 2^q, e its biased exponent (q = e - bias - mantissa_bits, M an
    integer below 2^(mantissa_bits + 1)): 2/pi without its bits of weight 2^(2-q) and
    up (they add multiples of 4 to x 2/pi), cut into 53-bit windows and scaled by 2^q,
    so T_j = K_j 2^(-51 - 53 j) with K_j < 2^53: each M T_j is an exact double-double,
    and M T_0 a multiple of 2^-51."""
    bias = {52: 1023, 23: 127}[mantissa_bits]
    rows = []
    for e in exponents:
        q = max(e, 1) - bias - mantissa_bits
        rows.append([math.ldexp((_TWO_OVER_PI_2_1200 >> (1200 - (q - 2 + 53 * (j + 1))))
                                & ((1 << 53) - 1), 2 - 53 * (j + 1)) for j in range(windows)])
    return np.array(rows)


_PH_EXPONENTS = range(_PH_FIRST_EXPONENT, 2047)
_PH_LAST_ROW = len(_PH_EXPONENTS) - 1


def _constant_table_load(make_table, columns, symbol):
    """An intrinsic ``load(row, column) -> table[row, column]`` reading an LLVM constant
    global: a load LLVM can turn into a vector gather (a global NumPy array costs
    reference counting calls, which keep the loop from vectorizing). ``make_table()``
    runs when a kernel using it compiles, not at import: building the float64 table took
    ~7 ms of every first call that loaded a cached kernel (which imports this module)."""
    table = functools.lru_cache(maxsize=None)(make_table)

    @intrinsic
    def load(typingctx, row, column):
        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            values = table()
            array = ir.ArrayType(ir.DoubleType(), values.size)
            try:
                data = builder.module.get_global(symbol)
            except KeyError:
                data = ir.GlobalVariable(builder.module, array, symbol)
                data.initializer = ir.Constant(array, [float(v) for v in values.flat])
                data.global_constant = True
                data.linkage = "internal"
            row64, column64 = (builder.sext(v, i64) if v.type.width < 64 else v for v in args)
            index = builder.add(builder.mul(row64, ir.Constant(i64, columns)), column64)
            return builder.load(builder.gep(data, [ir.Constant(i64, 0), index], inbounds=True))
        return types.float64(row, column), codegen
    return load


_payne_hanek_entry = _constant_table_load(
    lambda: _payne_hanek_table(_PH_EXPONENTS, 52, 4), 4, "tf_numba_vmath_payne_hanek")


@numba.njit(cache=True, error_model="numpy")
def _two_sum(a, b):
    """(s, e): s = fl(a + b), e its exact rounding error (Knuth's TwoSum)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@numba.njit(cache=True, error_model="numpy")
def _reduce_cody_waite(x):
    """(n, rh, rl), x = n pi/2 + rh + rl, for |x| < 2^25."""
    shifted = x * _INV_PIO2 + _ROUNDING_SHIFT
    n = shifted - _ROUNDING_SHIFT
    # exact: x - n _PIO2_1 is below 1 and, if n != 0, a multiple of 2^-53 like both terms
    a = _fma(-n, _PIO2_1, x)
    bh = n * _PIO2_2
    bl = _fma(n, _PIO2_2, -bh)
    s, se = _two_sum(a, -bh)
    rl = (se - bl) - n * _PIO2_3
    rh = s + rl
    return _float64_bits_as_int64(shifted), rh, rl - (rh - s)


@numba.njit(cache=True, error_model="numpy")
def _reduce_payne_hanek(x):
    """(n, rh, rl), x = n pi/2 + rh + rl (n mod 4 only), for finite |x| >= 2^25.

    x 2/pi mod 4 = M (T_0 + T_1 + T_2 + T_3) mod 4 (see _payne_hanek_table): the integer
    parts of the products are split off exactly by floor, every fraction but the last
    few terms is a multiple of 2^-51 and their sum exact, so r keeps ~2^-150 absolute."""
    bits = _float64_bits_as_int64(x)
    row = min(max(((bits >> 52) & 0x7ff) - _PH_FIRST_EXPONENT, 0), _PH_LAST_ROW)
    m = np.copysign(_int64_bits_as_float64((bits & _MANTISSA) | (1075 << 52)), x)
    t0, t1 = _payne_hanek_entry(row, 0), _payne_hanek_entry(row, 1)
    t2, t3 = _payne_hanek_entry(row, 2), _payne_hanek_entry(row, 3)
    p0 = m * t0
    e0 = _fma(m, t0, -p0)
    p1 = m * t1
    e1 = _fma(m, t1, -p1)
    p2 = m * t2
    e2 = _fma(m, t2, -p2)
    f0, f1, f2 = np.floor(p0), np.floor(e0), np.floor(p1)
    # p1 = f2 + (p1_hi - f2) + (p1 - p1_hi), the middle a multiple of 2^-51 in [0, 1), the
    # last in [0, 2^-51): all exact (p1 - f2 is not when p1 is a small negative)
    p1_hi = np.floor(p1 * 2.0 ** 51) * 2.0 ** -51
    h = ((p0 - f0) + (e0 - f1)) + (p1_hi - f2)     # multiples of 2^-51 below 3: exact
    k = np.floor(h + 0.5)
    s1, s1e = _two_sum(p1 - p1_hi, e1)
    s2, s2e = _two_sum(s1, p2)
    fh, fe = _two_sum(h - k, s2)
    fl = fe + (((s1e + s2e) + e2) + m * t3)
    # to radians: (fh + fl) pi/2 as a double-double
    rh = fh * _PIO2_1
    rl = _fma(fh, _PIO2_1, -rh) + (fh * _PIO2_2 + fl * _PIO2_1)
    n = np.int64(f0) + np.int64(f1) + np.int64(f2) + np.int64(k)
    return n, rh, rl


_S = (-0.16666666666666632, 0.008333333333322403, -0.00019841269829798218,
      2.755731368847614e-06, -2.5050757558867626e-08, 1.5896762421609028e-10)
_C = (0.0416666666666666, -0.0013888888888874107, 2.4801587289471678e-05,
      -2.755731434919603e-07, 2.0875722833455406e-09, -1.1359624361350816e-11)


@numba.njit(cache=True, error_model="numpy", inline="always")
def _sin_cos_parts(x):
    """(sin(r), cos(r), n mod 4) for x = n pi/2 + r."""
    n0, rh0, rl0 = _reduce_cody_waite(x)
    n1, rh1, rl1 = _reduce_payne_hanek(x)
    cody_waite = abs(x) < _CODY_WAITE_BELOW
    n = n0 if cody_waite else n1
    rh = rh0 if cody_waite else rh1
    rl = rl0 if cody_waite else rl1
    s1, s2, s3, s4, s5, s6 = _S
    c1, c2, c3, c4, c5, c6 = _C
    z = rh * rh
    ze = _fma(rh, rh, -z)
    # sin(rh + rl) = rh + rh^3 S(z) + rl (1 - z/2); the polynomials fitted (Lawson's
    # weighted least squares, 600 Chebyshev nodes on |r| <= pi/4) to 2^-58 and 2^-64
    # with v = rh^3 as v + v_err and s1 v apart from the rest (each rounding in the tail
    # costs up to 0.1 ulp: 0.74 ulp at most without these)
    v = z * rh
    v_err = _fma(z, rh, -v) + ze * rh
    ps = _fma(_fma(_fma(_fma(s6, z, s5), z, s4), z, s3), z, s2)
    sin_r = rh + _fma(v, s1, _fma(v * z, ps, _fma(v_err, s1, rl - 0.5 * z * rl)))
    # cos(rh + rl) = 1 - (z + ze)/2 + z^2 C(z) - rh rl, 1 - z/2 by Fast2Sum
    pc = _fma(_fma(_fma(_fma(_fma(c6, z, c5), z, c4), z, c3), z, c2), z, c1)
    hz = 0.5 * z
    w = 1.0 - hz
    cos_r = w + (((1.0 - w) - hz) + _fma(z * z, pc, -(0.5 * ze + rh * rl)))
    return sin_r, cos_r, n & 3


@numba.njit(cache=True, error_model="numpy")
def _quadrant(sin_r, cos_r, q):
    """sin(q pi/2 + r): cos(r) on odd quadrants, negated on quadrants 2 and 3."""
    y = cos_r if q & 1 else sin_r
    return _int64_bits_as_float64(_float64_bits_as_int64(y) ^ ((q & 2) << 62))


@numba.njit(cache=True, error_model="numpy", inline="always")
def sin(x):
    """sin of a float64 (float32 callers convert in and out).

    >>> sin(0.5)
    0.479425538604203
    """
    sin_r, cos_r, q = _sin_cos_parts(x)
    y = _quadrant(sin_r, cos_r, q)
    y = x if abs(x) < _SIN_TINY else y          # keeps -0.0 and subnormals exact
    return y if abs(x) < np.inf else x - x


@numba.njit(cache=True, error_model="numpy", inline="always")
def cos(x):
    """cos of a float64 (float32 callers convert in and out).

    >>> cos(0.5)
    0.8775825618903728
    """
    sin_r, cos_r, q = _sin_cos_parts(x)
    y = _quadrant(sin_r, cos_r, (q + 1) & 3)
    return y if abs(x) < np.inf else x - x


# float32 sin and cos: float32 in and out, float64 inside (8 lanes, but no double-double:
# a float32 x has 24 bits, so two 53-bit windows of 2/pi carry r = x - n pi/2 to ~2^-80,
# and polynomials to 2^-43 round to the correctly rounded float32 but for ~1 in 2^22
# inputs). One Payne-Hanek reduction for all |x|: two table loads are cheaper than a
# Cody-Waite reduction beside it.
_payne_hanek32_entry = _constant_table_load(
    lambda: _payne_hanek_table(range(256), 23, 2), 2, "tf_numba_vmath_payne_hanek32")
_S32 = (-0.16666666666631547, 0.008333333325263372, -0.0001984126381824989,
        2.755535672426922e-06, -2.4761575713959145e-08)
_C32 = (0.041666666622747074, -0.0013888883746485954, 2.4799518186707618e-05,
        -2.721008721599195e-07)
_SIN32_TINY = _F32(2.0 ** -12)                  # sin(x) rounds to x, cos(x) to 1, below


@numba.njit(cache=True, error_model="numpy", inline="always")
def _sin_cos_parts32(x):
    """(sin(r), cos(r), n mod 4) in float64 for a float32 x = n pi/2 + r."""
    bits = _float32_bits_as_int32(x)
    row = (bits >> 23) & 0xff
    # x = m 2^q, m the 24-bit integer mantissa (subnormals are tiny: sin32 returns x)
    m = np.copysign(np.float64((bits & 0x7fffff) | 0x800000), np.float64(x))
    t0, t1 = _payne_hanek32_entry(row, 0), _payne_hanek32_entry(row, 1)
    p0 = m * t0
    e0 = _fma(m, t0, -p0)
    f0 = np.floor(p0)
    h = (p0 - f0) + e0                  # multiples of 2^-51 below 2: exact
    k = np.floor(h + 0.5)
    r = ((h - k) + m * t1) * _PIO2_1
    s1, s2, s3, s4, s5 = _S32
    c1, c2, c3, c4 = _C32
    z = r * r
    sin_r = r + z * r * (s1 + z * (s2 + z * (s3 + z * (s4 + z * s5))))
    cos_r = 1.0 - 0.5 * z + z * z * (c1 + z * (c2 + z * (c3 + z * c4)))
    return sin_r, cos_r, (np.int64(f0) + np.int64(k)) & 3


@numba.njit(cache=True, error_model="numpy", inline="always")
def sin32(x):
    """sin of a float32 as a float32, nearly always the correctly rounded one.

    >>> sin32(np.float32(0.5))       # float32(0.47942555), boxed as a Python float
    0.4794255495071411
    """
    sin_r, cos_r, q = _sin_cos_parts32(x)
    y = np.float32(_quadrant(sin_r, cos_r, q))
    y = x if abs(x) < _SIN32_TINY else y
    return y if abs(x) < np.inf else x - x


@numba.njit(cache=True, error_model="numpy", inline="always")
def cos32(x):
    """cos of a float32 as a float32, nearly always the correctly rounded one.

    >>> cos32(np.float32(0.5))       # float32(0.87758255), boxed as a Python float
    0.8775825500488281
    """
    sin_r, cos_r, q = _sin_cos_parts32(x)
    y = np.float32(_quadrant(sin_r, cos_r, (q + 1) & 3))
    return y if abs(x) < np.inf else x - x


# Twins of the functions numba inlines (``inline="always"``), which it calls instead: code
# written one element at a time (lowering/unrolled.py) calls these, since each inlined
# copy costs numba ~0.15 s of compile time and a scalar has no loop to vectorize
@numba.njit(cache=True, error_model="numpy")
def sin_called(x):
    return sin(x)


@numba.njit(cache=True, error_model="numpy")
def cos_called(x):
    return cos(x)


@numba.njit(cache=True, error_model="numpy")
def sin32_called(x):
    return sin32(x)


@numba.njit(cache=True, error_model="numpy")
def cos32_called(x):
    return cos32(x)


@numba.njit(cache=True, error_model="numpy")
def log1p_called(x):
    return log1p(x)
