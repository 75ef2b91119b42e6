"""NumPy's promotion and broadcasting, made explicit: every tnp function funnels its operands here.

``asarray`` canonicalizes an argument (tracers as they are, Python scalars kept weak, NumPy
values in one of the seven supported dtypes); ``ufunc_loop`` asks NumPy which loop a ufunc
would run for those dtypes; ``broadcast_all`` widens operands to their common shape with
``broadcast_in_dim``. The primitives below this layer see one dtype and one shape.
"""
import functools
import operator

import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import broadcast_shapes, normalize_axes, normalize_axis, same_shape
from ..core.trace import Tracer, current_builder
from ..errors import ConcretizationError, DTypeError, ShapeError, UnsupportedError
from ..ops import elementwise as ew
from ..ops import layout


def is_tracer(x):
    return type(x) is Tracer


_WEAK_TYPES = frozenset(dtypes.WEAK_SCALAR_TYPES)


def is_weak(x):
    """A Python scalar: it takes the dtype of the arrays it meets (NEP 50). NumPy scalars
    (``np.float64`` subclasses ``float``) are strong."""
    return type(x) in _WEAK_TYPES


def _contains_tracer(x):
    if type(x) is Tracer:
        return True
    if isinstance(x, (list, tuple)):
        return any(_contains_tracer(e) for e in x)
    return False


def asarray(x):
    """An operand a primitive accepts: a Tracer, a weak Python scalar, or a NumPy value of a
    supported dtype. Nested lists holding tracers are stacked."""
    if type(x) is Tracer or is_weak(x):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype in dtypes.SUPPORTED:
            return x
        return x.astype(dtypes.canonical(x.dtype, what="array dtype"))
    if isinstance(x, (list, tuple)) and _contains_tracer(x):
        from .creation import array
        return array(x)
    arr = np.asarray(x)
    return arr.astype(dtypes.canonical(arr.dtype, what="array dtype"), copy=False)


def dtype_of(x):
    """The dtype of an operand; for a weak Python scalar, its Python type (as NumPy wants it;
    a Python bool is simply bool, the lowest kind)."""
    if is_weak(x):
        return dtypes.bool_ if type(x) is bool else type(x)
    return x.dtype


def shape_of(x):
    t = type(x)
    if t is Tracer:
        return x.aval.shape
    if t is np.ndarray or isinstance(x, np.generic):
        return x.shape
    return () if t in _WEAK_TYPES else tuple(aval_of(x).shape)


def as_array(x):
    """An operand as an array (weak scalars become 0-d arrays of their default dtype)."""
    x = asarray(x)
    return np.asarray(x, dtypes.of_scalar(x)) if is_weak(x) else x


def ndim_of(x):
    return len(shape_of(x))


def concrete_dtype(x):
    """The dtype an operand has on its own (a weak scalar gets its default dtype)."""
    return dtypes.of_scalar(x) if is_weak(x) else x.dtype


@functools.lru_cache(maxsize=4096)
def _resolve(ufunc, key, dtype):
    operands = key + (None,) * ufunc.nout
    if dtype is None:
        resolved = ufunc.resolve_dtypes(operands)
    else:
        resolved = ufunc.resolve_dtypes(operands, signature=(None,) * ufunc.nin + (dtype,))
    return tuple(dtypes.canonical(d) for d in resolved)


def ufunc_loop(ufunc, operands, name, dtype=None):
    """(input dtypes, output dtype) of the loop NumPy's ``ufunc`` runs on ``operands``.

    NumPy's own type resolver decides, so weak scalars, int/int division and ``sin`` of
    ints follow NumPy exactly; a loop dtype tf_numba lacks (float16, int8) is widened.
    """
    if all(is_weak(x) for x in operands):
        # only Python scalars: NumPy converts each to its default dtype first
        key = tuple(dtypes.of_scalar(x) for x in operands)
    else:
        key = tuple(dtype_of(x) for x in operands)
    if dtype is not None:
        dtype = dtypes.canonical(dtype)
    try:
        resolved = _resolve(ufunc, key, dtype)
    except TypeError as err:   # numpy's UFuncTypeError and friends
        names = ", ".join(getattr(k, "name", None) or f"Python {k.__name__}" for k in key)
        raise DTypeError(f"not supported for dtypes ({names}): {err}", op=name) from None
    return resolved[:ufunc.nin], resolved[ufunc.nin]


_COMPARISONS = frozenset((np.less, np.less_equal, np.greater, np.greater_equal, np.equal,
                          np.not_equal))


def _fits(x, dt):
    """Is ``x`` anything but a Python int that the integer dtype ``dt`` cannot hold?"""
    if type(x) is not int or not dtypes.is_integer(dt):
        return True
    info = np.iinfo(dt)
    return info.min <= x <= info.max


def _beyond_range(ufunc, xs, in_dts, name):
    """NumPy compares an integer array with a Python int its dtype cannot hold by value
    (uint8 < -1 is False), so the answer is the same for every element: the comparison
    with an infinity of the int's sign. None if no operand is such an int."""
    for k, (x, dt) in enumerate(zip(xs, in_dts)):
        if not _fits(x, dt):
            beyond = np.inf if x > 0 else -np.inf
            answer = bool(ufunc(*[beyond if j == k else 0 for j in range(len(xs))]))
            return layout.full(broadcast_shapes_of(name, *xs), answer, dtypes.bool_)
    return None


def result_type(*operands):
    """NumPy 2 promotion of operands (tracers, arrays, dtypes, weak Python scalars).

    >>> tnp.result_type(np.float32, 2.0)
    dtype('float32')
    """
    keys = []
    for x in operands:
        if is_weak(x):
            keys.append(x)
        elif isinstance(x, (np.dtype, type, str)):
            keys.append(dtypes.canonical(x))
        else:
            keys.append(asarray(x).dtype)
    return dtypes.result_type(*keys)


def cast(x, dt):
    """``x`` as dtype ``dt``; a weak scalar becomes a 0-d NumPy array of ``dt``."""
    if is_weak(x):
        if type(x) is complex and not dtypes.is_complex(dt):
            x = bool(x) if dtypes.is_bool(dt) else x.real
        if not _fits(x, dt):
            raise DTypeError(f"the Python int {x} is out of range for {dt.name} (a Python int "
                             f"takes the dtype of the array it meets); pass it as an array of "
                             f"a wider dtype, e.g. np.int64({x}), or convert the array")
        return np.asarray(x, dt)
    if dtypes.is_bool(dt) and dtypes.is_complex(x.dtype):
        # NumPy's complex -> bool is "nonzero", not "real part nonzero"
        return ew.ne(x, np.zeros((), x.dtype))
    return ew.convert_element_type(x, dt)


def broadcast_to(x, shape, name="broadcast_to"):
    """``x`` broadcast NumPy-style to ``shape`` (a ShapeError names both shapes otherwise)."""
    xs, shape = shape_of(x), tuple(shape)
    if xs == shape:
        return x
    if not same_shape(broadcast_shapes(xs, shape, op=name), shape, name):
        raise ShapeError(f"cannot broadcast shape {xs} to shape {shape}", op=name)
    if is_weak(x):
        x = np.asarray(x, dtypes.of_scalar(x))
    rank = len(shape)
    return layout.broadcast_in_dim(x, tuple(shape), tuple(range(rank - len(xs), rank)))


def broadcast_all(name, operands, keep_scalars=True):
    """Operands widened to their common shape; rank-0 ones stay rank 0 (the elementwise
    primitives broadcast those themselves) unless ``keep_scalars`` is False."""
    shapes = [shape_of(x) for x in operands]
    if keep_scalars and len({s for s in shapes if s}) <= 1:
        return operands     # one shape, or rank 0: nothing to broadcast
    shape = broadcast_shapes(*shapes, op=name)
    return [x if (keep_scalars and not s) else broadcast_to(x, shape, name)
            for x, s in zip(operands, shapes)]


def broadcast_shapes_of(name, *operands):
    return broadcast_shapes(*[shape_of(x) for x in operands], op=name)


def promote(name, *operands, dtype=None):
    """Operands converted to one dtype (NumPy promotion, or ``dtype``) and one shape."""
    xs = [asarray(x) for x in operands]
    dt = dtypes.canonical(dtype) if dtype is not None else result_type(*xs)
    return broadcast_all(name, [cast(x, dt) for x in xs])


def apply_ufunc(ufunc, name, compute, operands, dtype=None):
    """Run ``compute`` on the operands cast to NumPy's loop dtypes and broadcast; the output
    is cast to the loop's output dtype."""
    if dtype is None and ufunc.nout == 1 and all(type(x) is Tracer for x in operands):
        # the common traced case, first: operands of one shape whose dtypes NumPy's loop
        # takes as they are (what the general path below concludes, in fewer steps)
        avals = [x.aval for x in operands]
        try:
            resolved = _resolve(ufunc, tuple(a.dtype for a in avals), None)
        except TypeError:       # no such loop: the general path says so
            resolved = ()
        if (resolved and all(a.shape == avals[0].shape for a in avals)
                and all(a.dtype == d for a, d in zip(avals, resolved))
                and dtypes.float16 not in resolved):
            out = compute(*operands)
            if aval_of(out).dtype != resolved[ufunc.nin]:
                out = ew.convert_element_type(out, resolved[ufunc.nin])
            return scalar_result(out)
    xs = [asarray(x) for x in operands]
    in_dts, out_dt = ufunc_loop(ufunc, xs, name, dtype)
    if ufunc in _COMPARISONS:
        constant = _beyond_range(ufunc, xs, in_dts, name)
        if constant is not None:
            return scalar_result(constant)
    # NumPy's half loops compute in float32 and round the result once, as ``compute``'s
    # composites then do (numba has no half arithmetic either)
    xs = [cast(x, dt) for x, dt in zip(xs, in_dts)]
    if ufunc not in _OF_HALF_BITS:
        xs = [cast(x, dtypes.float32) if dt == dtypes.float16 else x
              for x, dt in zip(xs, in_dts)]
    xs = broadcast_all(name, xs)
    out = compute(*xs)
    if aval_of(out).dtype != out_dt:
        out = ew.convert_element_type(out, out_dt)
    return scalar_result(out)


# ufuncs that step through float16's own representation, so compute in float16
_OF_HALF_BITS = frozenset((np.nextafter, np.spacing))


def scalar_result(out):
    """Eagerly, a 0-d result is returned as a NumPy scalar, as NumPy's ufuncs do."""
    if isinstance(out, np.ndarray) and out.ndim == 0:
        return out[()]
    return out


def tracing():
    return current_builder() is not None


def check_unsupported(name, **kwargs):
    """UnsupportedError naming the first argument given a value tnp does not implement.

    Each kwarg is ``name=(value, allowed_default)``.
    """
    for arg, (value, default) in kwargs.items():
        if value is not default and not (default is not None and _equal(value, default)):
            raise UnsupportedError(f"argument {arg}={value!r} is not supported "
                                   f"(tnp is functional: use the return value)"
                                   if arg == "out" else
                                   f"argument {arg}={value!r} is not supported", op=name)


def _equal(a, b):
    try:
        return bool(a == b)
    except Exception:   # noqa: BLE001 - an array or tracer is simply "not the default"
        return False


def concrete_int(x, name, what):
    """A Python int from a static argument; a tracer raises ConcretizationError."""
    if is_tracer(x):
        raise ConcretizationError(
            f"{what} must be a concrete integer, got a traced {x.aval} value; pass it as a "
            "Python int (static)", op=name)
    try:
        return operator.index(x)
    except TypeError:
        raise DTypeError(f"{what} must be an integer, got {x!r}", op=name) from None


def concrete_value(x, name, what):
    """A concrete NumPy value of a static argument; a tracer raises ConcretizationError."""
    if _contains_tracer(x):
        raise ConcretizationError(
            f"{what} must be concrete (its value decides the result's shape), got a traced "
            "value", op=name)
    return np.asarray(x)


def axis_arg(axis, rank, name):
    return normalize_axis(concrete_int(axis, name, "axis"), rank, name)


def axes_arg(axis, rank, name):
    """Sorted distinct non-negative axes from None/int/sequence."""
    if axis is not None and not isinstance(axis, (tuple, list)):
        axis = concrete_int(axis, name, "axis")
    elif axis is not None:
        axis = tuple(concrete_int(a, name, "axis") for a in axis)
    return normalize_axes(axis, rank, name)
