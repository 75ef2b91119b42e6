"""Bit primitives, as ``jax.lax``'s: the shifts (``shift_left``, ``shift_right_logical``,
``shift_right_arithmetic``), ``population_count``, ``clz``, ``mulhi``, and the two that
read a float's bits: ``bitcast_convert_type`` and ``reduce_precision``.

Threefry's rotations need a right shift; as a floor division by a power of two it
compiled to numba's ``np.floor_divide`` (zero and sign checks that keep the loop scalar),
3x slower than the shift over a whole Threefry stream, hence the shift primitives. Shift
counts outside ``[0, bits)`` give what XLA gives: 0 for the left and logical shifts, the
sign fill for the arithmetic one.

All but ``reduce_precision`` have integer (or bit) outputs with a zero derivative;
``reduce_precision`` is treated as linear, as JAX does (its tangent is rounded too).
"""
import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import aval_of, deflinear, defzero
from ..core.primitive import Primitive, register
from ..errors import DTypeError, ShapeError
from ..kernel_vocab.scalar_exprs import typed, written
from .elementwise import _coerce, batch_elementwise, elementwise_shape

_UNSIGNED = {dtypes.int32: np.uint32, dtypes.int64: np.uint64}
PRIMS = {}


def _integer_eval(name):
    def abstract_eval(*avals):
        dt = avals[0].dtype
        if any(a.dtype != dt for a in avals) or dt not in _UNSIGNED:
            raise DTypeError("needs operands of one integer dtype (int32 or int64), got "
                             + " and ".join(a.dtype.name for a in avals), op=name)
        return ShapedArray(elementwise_shape(name, avals), dt)
    return abstract_eval


def _bits(dt):
    return np.iinfo(dt).bits


# ---------------------------------------------------------------- impls

def _unsigned_shift(shift):
    """A left or logical right shift: the bits of x as unsigned, shifted in zeros."""
    def impl(x, n):
        unsigned = _UNSIGNED[np.dtype(x.dtype)]
        n = np.asarray(n)
        in_range = (n >= 0) & (n < _bits(unsigned))
        shifted = shift(np.asarray(x).astype(unsigned), np.where(in_range, n, 0).astype(unsigned))
        return np.where(in_range, shifted, 0).astype(x.dtype)
    return impl


def _shift_right_arithmetic_impl(x, n):
    bits = _bits(x.dtype)
    n = np.asarray(n)
    return np.right_shift(x, np.where((n >= 0) & (n < bits), n, bits - 1).astype(x.dtype))


def _population_count_impl(x):
    # np.bitwise_count counts the bits of |x|; the two's complement bits are the unsigned view's
    unsigned = np.asarray(x).astype(_UNSIGNED[np.dtype(x.dtype)])
    return np.bitwise_count(unsigned).astype(x.dtype)


def _clz_impl(x):
    unsigned = _UNSIGNED[np.dtype(x.dtype)]
    y = np.asarray(x).astype(unsigned)
    bits = _bits(unsigned)
    count = np.full(y.shape, bits, np.int64)
    step = bits // 2
    while step:                 # binary search for the highest set bit
        high = y >> unsigned(step)
        found = high != 0
        count -= np.where(found, step, 0)
        y = np.where(found, high, y)
        step //= 2
    return (count - (y != 0)).astype(x.dtype)


def _mulhi_impl(x, y):
    """The high half of the double-width product of two's complement ``x * y``: from the
    unsigned product of 32-bit halves, less ``y`` where ``x < 0`` and ``x`` where ``y < 0``
    (Hacker's Delight 8-2)."""
    dt = np.dtype(x.dtype)
    if dt == dtypes.int32:
        return ((x.astype(np.int64) * y.astype(np.int64)) >> 32).astype(dt)
    u, v = np.asarray(x).astype(np.uint64), np.asarray(y).astype(np.uint64)
    low = np.uint64(0xFFFFFFFF)
    half = np.uint64(32)
    u0, u1, v0, v1 = u & low, u >> half, v & low, v >> half
    with np.errstate(over="ignore"):
        t = u1 * v0 + ((u0 * v0) >> half)
        w1 = (t & low) + u0 * v1
        high = u1 * v1 + (t >> half) + (w1 >> half)
        high = high - np.where(x < 0, v, np.uint64(0)) - np.where(y < 0, u, np.uint64(0))
    return high.astype(dt)


def _shift_left_source(a, i, o):
    return typed(f"(({a[0]} << {a[1]}) if 0 <= {a[1]} < {_bits(i)} else 0)", o)


def _shift_right_logical_source(a, i, o):
    unsigned, bits = f"np.u{i.name}", _bits(i)
    return typed(f"({unsigned}({a[0]}) >> {unsigned}({a[1]}) if 0 <= {a[1]} < {bits} "
                 f"else {unsigned}(0))", o)


def _shift_right_arithmetic_source(a, i, o):
    bits = _bits(i)
    return typed(f"({a[0]} >> ({a[1]} if 0 <= {a[1]} < {bits} else {bits - 1}))", o)


# name: (NumPy impl, the scalar source a kernel computes it with, or None: a NumPy step)
TABLE = {
    "shift_left": (_unsigned_shift(np.left_shift), _shift_left_source),
    "shift_right_logical": (_unsigned_shift(np.right_shift), _shift_right_logical_source),
    "shift_right_arithmetic": (_shift_right_arithmetic_impl, _shift_right_arithmetic_source),
    "population_count": (_population_count_impl, None),
    "clz": (_clz_impl, None),
    "mulhi": (_mulhi_impl, None),
}

for _name, (_impl, _source) in TABLE.items():
    _prim = Primitive(_name, _integer_eval(_name), _impl)
    PRIMS[_name] = _prim
    defzero(_prim)
    batch_elementwise(_prim)
    if _source is not None:
        register("lower", _prim, written(_source))
shift_left_p = PRIMS["shift_left"]
shift_right_logical_p = PRIMS["shift_right_logical"]
shift_right_arithmetic_p = PRIMS["shift_right_arithmetic"]
population_count_p = PRIMS["population_count"]
clz_p = PRIMS["clz"]
mulhi_p = PRIMS["mulhi"]


def shift_left(x, n):
    """``x << n``; 0 for counts outside ``[0, bits)``. Integer operands of one dtype;
    Python ints are weak.

    >>> shift_left(np.array([1, -1]), 3)
    array([ 8, -8])
    """
    return shift_left_p.bind(*_coerce((x, n)))


def shift_right_logical(x, n):
    """``x >> n`` filling with zeros (the bits of ``x`` read as unsigned); 0 for counts
    outside ``[0, bits)``. Integer operands of one dtype; Python ints are weak.

    >>> shift_right_logical(np.array([-1, 256]), 4)
    array([1152921504606846975,                  16])
    """
    return shift_right_logical_p.bind(*_coerce((x, n)))


def shift_right_arithmetic(x, n):
    """``x >> n`` filling with the sign bit; counts outside ``[0, bits)`` fill all.

    >>> shift_right_arithmetic(np.array([-8, 8]), 2)
    array([-2,  2])
    """
    return shift_right_arithmetic_p.bind(*_coerce((x, n)))


def population_count(x):
    """The number of set bits of each element (two's complement for negative ones).

    >>> population_count(np.array([0, 5, -1], np.int32))
    array([ 0,  2, 32], dtype=int32)
    """
    return population_count_p.bind(x)


def clz(x):
    """The number of leading zero bits of each element.

    >>> clz(np.array([0, 1, -1], np.int32))
    array([32, 31,  0], dtype=int32)
    """
    return clz_p.bind(x)


def mulhi(x, y):
    """The high half of the double-width product ``x * y`` (the low half is ``x * y``).

    >>> mulhi(np.array([-5], np.int32), np.array([1 << 30], np.int32))
    array([-2], dtype=int32)
    """
    return mulhi_p.bind(*_coerce((x, y)))


# ---------------------------------------------------------------- bitcast_convert_type

def _bitcast_shape(shape, old, new, op="bitcast_convert_type"):
    if old != new and any(dtypes.is_bool(d) or dtypes.is_complex(d) for d in (old, new)):
        raise DTypeError(f"cannot bitcast {old.name} to {new.name}: bool and complex values "
                         "bitcast only to their own dtype (as JAX's)", op=op)
    if new.itemsize == old.itemsize:
        return tuple(shape)
    if new.itemsize < old.itemsize:
        return tuple(shape) + (old.itemsize // new.itemsize,)
    ratio = new.itemsize // old.itemsize
    if not shape or shape[-1] != ratio:
        raise ShapeError(f"bitcasting {old.name} of shape {tuple(shape)} to the wider "
                         f"{new.name} needs a last dim of {ratio}, which it consumes", op=op)
    return tuple(shape[:-1])


def _bitcast_eval(x, *, new_dtype):
    return ShapedArray(_bitcast_shape(x.shape, x.dtype, new_dtype), new_dtype)


def _bitcast_impl(x, *, new_dtype):
    x = np.ascontiguousarray(x)
    return x.view(new_dtype).reshape(_bitcast_shape(x.shape, x.dtype, new_dtype))


bitcast_convert_type_p = Primitive("bitcast_convert_type", _bitcast_eval, _bitcast_impl)
PRIMS["bitcast_convert_type"] = bitcast_convert_type_p
defzero(bitcast_convert_type_p)


def bitcast_convert_type(x, new_dtype):
    """The bits of ``x`` read as ``new_dtype``: a narrower one adds a last dim (float64 to
    two int32s), a wider one consumes it.

    >>> bitcast_convert_type(np.float32(1.0), np.int32)
    array(1065353216, dtype=int32)
    """
    return bitcast_convert_type_p.bind(x, new_dtype=dtypes.canonical(new_dtype))


def _bitcast_batch(args, dims, *, new_dtype):
    (x,), (d,) = args, dims
    if d == len(aval_of(x).shape) - 1 and aval_of(x).dtype.itemsize != new_dtype.itemsize:
        from ..transforms.batching import moveaxis
        x, d = moveaxis(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


register("batch", bitcast_convert_type_p, _bitcast_batch)


# ---------------------------------------------------------------- reduce_precision

_FLOAT_BITS = {dtypes.float32: (8, 23), dtypes.float64: (11, 52)}   # exponent, mantissa


def _reduce_precision_eval(x, *, exponent_bits, mantissa_bits):
    if x.dtype not in _FLOAT_BITS:
        raise DTypeError(f"needs a real float operand, got {x.dtype.name}",
                         op="reduce_precision")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise DTypeError(f"needs exponent_bits >= 1 and mantissa_bits >= 0, got "
                         f"{exponent_bits} and {mantissa_bits}", op="reduce_precision")
    return x


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision: round the mantissa to ``mantissa_bits`` (to nearest, ties to
    even), then send exponents beyond ``exponent_bits``' range to infinity or (signed)
    zero; NaNs stay NaN."""
    x = np.asarray(x)
    src_exponent, src_mantissa = _FLOAT_BITS[np.dtype(x.dtype)]
    unsigned = np.uint32 if x.dtype == np.float32 else np.uint64
    one = unsigned(1)
    bits = x.view(unsigned).copy()
    with np.errstate(over="ignore"):
        if mantissa_bits < src_mantissa:
            drop = unsigned(src_mantissa - mantissa_bits)
            last_kept = one << drop
            bias = ((last_kept >> one) - one) + ((bits & last_kept) >> drop)
            bits = (bits + bias) & ~(last_kept - one)
        if exponent_bits < src_exponent:
            mantissa_width = unsigned(src_mantissa)
            sign = bits & (one << unsigned(src_exponent + src_mantissa))
            exponent_mask = unsigned((1 << src_exponent) - 1) << mantissa_width
            bias = (1 << (src_exponent - 1)) - 1
            reduced_bias = (1 << (exponent_bits - 1)) - 1
            exponent = bits & exponent_mask
            overflows = exponent > (unsigned(bias + reduced_bias) << mantissa_width)
            underflows = exponent <= (unsigned(bias - reduced_bias) << mantissa_width)
            bits = np.where(overflows, sign | exponent_mask, np.where(underflows, sign, bits))
    out = np.asarray(bits, unsigned).view(x.dtype)
    return np.where(np.isnan(x), x, out)


reduce_precision_p = Primitive("reduce_precision", _reduce_precision_eval,
                               _reduce_precision_impl)
PRIMS["reduce_precision"] = reduce_precision_p
deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])
batch_elementwise(reduce_precision_p)


def reduce_precision(x, exponent_bits, mantissa_bits):
    """``x`` rounded to a float of ``exponent_bits`` and ``mantissa_bits`` (bfloat16 is
    8 and 7), kept in ``x``'s dtype.

    >>> reduce_precision(np.float64(1.2345678901), 8, 7)
    array(1.234375)
    """
    return reduce_precision_p.bind(x, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))
