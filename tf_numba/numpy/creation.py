"""Array creation: constants, ranges, grids and conversions, as primitives (``iota``, ``full``).

Under a trace these stage a broadcast scalar or an ``iota`` instead of embedding a whole
constant array in the program; eagerly they return NumPy arrays like NumPy does.

>>> tnp.eye(2, dtype=np.int32)
array([[1, 0],
       [0, 1]], dtype=int32)
"""
import numpy as np

from ..core import dtypes
from ..core.linear import aval_of
from ..core.shapes import Sym, at_least
from ..core.trace import Tracer
from ..errors import ShapeError, UnsupportedError
from ..ops import elementwise as ew
from ..ops import layout
from . import _promote as P

__all__ = ["zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
           "empty_like", "array", "asarray", "asanyarray", "ascontiguousarray", "copy",
           "arange", "linspace", "logspace", "geomspace", "eye", "identity", "tri",
           "meshgrid", "indices", "fromfunction"]


def _shape_arg(shape, name):
    """A shape of ints; symbolic dims (from another array's shape) pass through."""
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    return tuple(d if isinstance(d, Sym) else P.concrete_int(d, name, "shape") for d in shape)


def _dtype_arg(dtype, default=dtypes.float64):
    return default if dtype is None else dtypes.canonical(dtype)


def full(shape, fill_value, dtype=None, order="C"):
    """An array of ``shape`` filled with ``fill_value`` (a scalar or a broadcastable array).

    >>> tnp.full((2,), 7)
    array([7, 7])
    """
    P.check_unsupported("full", order=(order, "C"))
    value = P.asarray(fill_value)
    dt = dtypes.canonical(dtype) if dtype is not None else P.concrete_dtype(value)
    return P.broadcast_to(P.cast(value, dt), _shape_arg(shape, "full"), "full")


def zeros(shape, dtype=float, order="C"):
    """An array of zeros (float64 by default), as ``numpy.zeros``.

    >>> tnp.zeros((2,), np.int32)
    array([0, 0], dtype=int32)
    """
    return full(shape, 0, _dtype_arg(dtype), order)


def ones(shape, dtype=float, order="C"):
    """An array of ones (float64 by default), as ``numpy.ones``.

    >>> tnp.ones(2)
    array([1., 1.])
    """
    return full(shape, 1, _dtype_arg(dtype), order)


def empty(shape, dtype=float, order="C"):
    """``zeros``: a functional program has no uninitialized memory to hand out.

    >>> tnp.empty(2).shape
    (2,)
    """
    return zeros(shape, dtype, order)


def _like(a, dtype, shape):
    a = P.asarray(a)
    dt = P.concrete_dtype(a) if dtype is None else dtypes.canonical(dtype)
    return dt, (P.shape_of(a) if shape is None else _shape_arg(shape, "like"))


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """``full`` with the shape and dtype of ``a``.

    >>> tnp.full_like(np.zeros(2, np.float32), 3)
    array([3., 3.], dtype=float32)
    """
    dt, shape = _like(a, dtype, shape)
    return full(shape, fill_value, dt)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None):
    """Zeros with the shape and dtype of ``a``.

    >>> tnp.zeros_like(np.arange(2))
    array([0, 0])
    """
    return full_like(a, 0, dtype, shape=shape)


def ones_like(a, dtype=None, order="K", subok=True, shape=None):
    """Ones with the shape and dtype of ``a``.

    >>> tnp.ones_like(np.arange(2))
    array([1, 1])
    """
    return full_like(a, 1, dtype, shape=shape)


def empty_like(a, dtype=None, order="K", subok=True, shape=None):
    """``zeros_like`` (see ``empty``).

    >>> tnp.empty_like(np.arange(2)).shape
    (2,)
    """
    return zeros_like(a, dtype, shape=shape)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for e in x:
            yield from _leaves(e)
    else:
        yield x


def _stack_nested(x, dt):
    if isinstance(x, (list, tuple)):
        parts = [_stack_nested(e, dt) for e in x]
        from .manipulation import stack
        return stack(parts)
    return P.cast(P.asarray(x), dt)


def array(object, dtype=None, copy=True, order="K", ndmin=0):  # noqa: A002 - NumPy's name
    """An array from a tracer, a NumPy value or nested sequences (which may hold tracers).

    >>> tnp.array([[1, 2], [3, 4]], dtype=np.float32).dtype
    dtype('float32')
    """
    if isinstance(object, (list, tuple)) and any(type(e) is Tracer for e in _leaves(object)):
        # as in np.array, Python scalars in a nested list count with their default dtype
        leaves = [P.concrete_dtype(P.asarray(e)) for e in _leaves(object)]
        dt = dtypes.canonical(dtype) if dtype is not None else P.result_type(*leaves)
        out = _stack_nested(object, dt)
    elif type(object) is Tracer:
        out = object if dtype is None else ew.convert_element_type(object, dtype)
    else:
        ref = np.array(object, dtype=dtype, copy=copy)
        out = ref.astype(dtypes.canonical(ref.dtype, what="array dtype"), copy=False)
    rank = len(aval_of(out).shape)
    if ndmin > rank:
        out = layout.reshape(out, (1,) * (ndmin - rank) + tuple(aval_of(out).shape))
    return out


def asarray(a, dtype=None, order=None, *, copy=None):
    """``a`` as an array without copying where possible, as ``numpy.asarray``.

    >>> tnp.asarray([1.0, 2.0])
    array([1., 2.])
    """
    if type(a) is Tracer:
        return a if dtype is None else ew.convert_element_type(a, dtype)
    if isinstance(a, np.ndarray) and dtype is None and a.dtype in dtypes.SUPPORTED:
        return a
    return array(a, dtype, copy=copy)


def asanyarray(a, dtype=None, order=None):
    """``asarray`` (tf_numba has no array subclasses).

    >>> tnp.asanyarray([1])
    array([1])
    """
    return asarray(a, dtype)


def ascontiguousarray(a, dtype=None):
    """``asarray``; layout is the runtime's business, so this only converts.

    >>> tnp.ascontiguousarray([1])
    array([1])
    """
    return asarray(a, dtype)


def copy(a, order="K"):
    """A copy of ``a`` (a traced value is immutable, so it is returned as it is).

    >>> tnp.copy(np.array([1, 2]))
    array([1, 2])
    """
    if type(a) is Tracer:
        return a
    return array(a, copy=True)


# ---------------------------------------------------------------- ranges


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)``, exactly as ``numpy.arange``.

    The arguments must be concrete (they decide the length). Traced, it is an ``iota``
    times the step plus the start when that reproduces NumPy's values exactly.

    >>> tnp.arange(1, 7, 2)
    array([1, 3, 5])
    """
    args = [a for a in (start, stop, step) if a is not None]
    if any(isinstance(a, Sym) for a in args):
        return _symbolic_arange(start, stop, step, dtype)
    for a in args:
        P.concrete_value(a, "arange", "start, stop and step")
    ref = np.arange(start, stop, step, dtype=dtype) if stop is not None or step is not None \
        else np.arange(start, dtype=dtype)
    ref = ref.astype(dtypes.canonical(ref.dtype), copy=False)
    if not P.tracing() or ref.size == 0:
        return ref
    first = ref.dtype.type(ref[0])
    delta = ref.dtype.type(ref[1] - ref[0]) if ref.size > 1 else ref.dtype.type(0)
    if dtypes.is_complex(ref.dtype) or dtypes.is_bool(ref.dtype):
        return ref
    with np.errstate(all="ignore"):
        formula = np.arange(ref.size, dtype=ref.dtype) * delta + first
    if not np.array_equal(formula, ref):
        return ref
    return ew.add(ew.mul(layout.iota(ref.dtype, ref.shape, 0), delta), first)


def _symbolic_arange(start, stop, step, dtype):
    """``arange`` whose bounds involve a symbolic length: unit steps only, as ``iota``."""
    if stop is None:
        start, stop = 0, start
    if step not in (None, 1):
        raise UnsupportedError(f"a symbolic bound needs step 1, got {step}",
                               op="arange")
    length = stop - start
    at_least(length, 0, "arange")
    dt = dtypes.canonical(dtype) if dtype is not None else dtypes.int64
    out = layout.iota(dt, (length,), 0)
    return out if isinstance(start, int) and start == 0 else ew.add(out, start)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``, as ``numpy.linspace``.

    ``start`` and ``stop`` may be traced arrays (they broadcast); ``num`` is static.

    >>> tnp.linspace(0, 1, 5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    num = P.concrete_int(num, "linspace", "num")
    if num < 0:
        raise ShapeError(f"number of samples, {num}, must be non-negative", op="linspace")
    div = num - 1 if endpoint else num
    start, stop = P.asarray(start), P.asarray(stop)
    dt = P.result_type(start, stop, 1.0)
    start, stop = P.broadcast_all("linspace", [P.cast(start, dt), P.cast(stop, dt)],
                                  keep_scalars=False)
    delta = ew.sub(stop, start)
    extra = P.shape_of(delta)
    y = layout.iota(dt, (num,) + extra, 0) if num else layout.full((0,) + extra, 0, dt)
    start_b = P.broadcast_to(start, (num,) + extra)
    if div > 0:
        step = ew.div(delta, np.asarray(div, dt))
        concrete_zero = not P.is_tracer(step) and np.any(np.asarray(step) == 0)
        y = ew.mul(ew.div(y, np.asarray(div, dt)), P.broadcast_to(delta, (num,) + extra)) \
            if concrete_zero else ew.mul(y, P.broadcast_to(step, (num,) + extra))
    else:
        step = np.asarray(np.nan, dt)
        y = ew.mul(y, P.broadcast_to(delta, (num,) + extra))
    y = ew.add(y, start_b)
    if endpoint and num > 1:
        body = layout.slice_in_dim(y, 0, num - 1, 1, 0)
        y = layout.concatenate([body, layout.reshape(stop, (1,) + extra)], 0)
    if axis != 0:
        from .manipulation import moveaxis
        y = moveaxis(y, 0, axis)
    if dtype is not None:
        dtype = dtypes.canonical(dtype)
        if dtypes.is_integer(dtype):
            y = ew.floor(y)
        y = ew.convert_element_type(y, dtype)
    return (y, P.scalar_result(step)) if retstep else y


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``, as ``numpy.logspace``.

    >>> tnp.logspace(0, 2, 3)
    array([  1.,  10., 100.])
    """
    from .math import power
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    if P.ndim_of(P.asarray(base)):
        raise ShapeError("array-valued base is not supported; pass a scalar", op="logspace")
    out = power(base, y)
    return out if dtype is None else ew.convert_element_type(out, dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Values spaced evenly on a log scale between positive ``start`` and ``stop``.

    Computed as ``exp(linspace(log(start), log(stop)))`` with exact end points; unlike
    ``numpy.geomspace`` it does not handle negative or complex end points.

    >>> tnp.geomspace(1, 100, 3)
    array([  1.,  10., 100.])
    """
    from .math import exp, log
    y = exp(linspace(log(start), log(stop), num=num, endpoint=endpoint, axis=0))
    y = P.asarray(y)
    dt = aval_of(y).dtype
    if num > 0:
        extra = tuple(aval_of(y).shape[1:])
        first = layout.reshape(P.broadcast_to(P.cast(P.asarray(start), dt), extra), (1,) + extra)
        parts = [first, layout.slice_in_dim(y, 1, num, 1, 0)]
        if endpoint and num > 1:
            last = layout.reshape(P.broadcast_to(P.cast(P.asarray(stop), dt), extra),
                                  (1,) + extra)
            parts = [first, layout.slice_in_dim(y, 1, num - 1, 1, 0), last]
        y = layout.concatenate(parts, 0)
    if axis != 0:
        from .manipulation import moveaxis
        y = moveaxis(y, 0, axis)
    return y if dtype is None else ew.convert_element_type(y, dtype)


# ---------------------------------------------------------------- matrices and grids


def _diagonal_mask(n, m, k, compare):
    rows = layout.iota(dtypes.int64, (n, m), 0)
    cols = layout.iota(dtypes.int64, (n, m), 1)
    return compare(ew.add(rows, k), cols)


def eye(N, M=None, k=0, dtype=float, order="C"):
    """Ones on the ``k``-th diagonal, zeros elsewhere, as ``numpy.eye``.

    >>> tnp.eye(2, 3, k=1)
    array([[0., 1., 0.],
           [0., 0., 1.]])
    """
    n = P.concrete_int(N, "eye", "N")
    m = n if M is None else P.concrete_int(M, "eye", "M")
    k = P.concrete_int(k, "eye", "k")
    if n == 0 or m == 0:
        return zeros((n, m), dtype)
    return ew.convert_element_type(_diagonal_mask(n, m, k, ew.eq), _dtype_arg(dtype))


def identity(n, dtype=None):
    """The ``n`` by ``n`` identity matrix, as ``numpy.identity``.

    >>> tnp.identity(2)
    array([[1., 0.],
           [0., 1.]])
    """
    return eye(n, dtype=_dtype_arg(dtype))


def tri(N, M=None, k=0, dtype=float):
    """Ones at and below the ``k``-th diagonal, as ``numpy.tri``.

    >>> tnp.tri(2)
    array([[1., 0.],
           [1., 1.]])
    """
    n = P.concrete_int(N, "tri", "N")
    m = n if M is None else P.concrete_int(M, "tri", "M")
    k = P.concrete_int(k, "tri", "k")
    if n == 0 or m == 0:
        return zeros((n, m), dtype)
    return ew.convert_element_type(_diagonal_mask(n, m, k, ew.ge), _dtype_arg(dtype))


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays from 1-D coordinate vectors, as ``numpy.meshgrid``.

    >>> [g.shape for g in tnp.meshgrid(np.arange(2), np.arange(3))]
    [(3, 2), (3, 2)]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    from .manipulation import ravel
    xs = [ravel(x) for x in xi]
    ndim = len(xs)
    sizes = [P.shape_of(x)[0] for x in xs]
    if indexing == "xy" and ndim > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and ndim > 1 and i < 2:
            axis = 1 - i
        if sparse:
            shape = [1] * ndim
            shape[axis] = P.shape_of(x)[0]
            out.append(layout.reshape(x, tuple(shape)))
        else:
            out.append(layout.broadcast_in_dim(x, tuple(sizes), (axis,)))
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """The index grids of an array of shape ``dimensions``, as ``numpy.indices``.

    >>> tnp.indices((2, 2))[0]
    array([[0, 0],
           [1, 1]])
    """
    dims = _shape_arg(dimensions, "indices")
    dt = dtypes.canonical(dtype)
    grids = []
    for axis, n in enumerate(dims):
        if sparse:
            shape = tuple(n if i == axis else 1 for i in range(len(dims)))
            grids.append(layout.iota(dt, shape, axis) if n else zeros(shape, dt))
        else:
            grids.append(layout.iota(dt, dims, axis) if 0 not in dims else zeros(dims, dt))
    if sparse:
        return tuple(grids)
    from .manipulation import stack
    return stack(grids) if grids else zeros((0,), dt)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function(*indices(shape))``: the function receives index grids of ``dtype``.

    >>> tnp.fromfunction(lambda i, j: i + j, (2, 2), dtype=int)
    array([[0, 1],
           [1, 2]])
    """
    return function(*indices(shape, dtype), **kwargs)


# ---------------------------------------------------------------- arrays from bytes and files

def _canonical_array(out):
    out = np.asarray(out)
    return out.astype(dtypes.canonical(out.dtype), copy=False) if out.dtype.kind in "biufc" \
        else out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """A 1-d array of the buffer's bytes read as ``dtype``, as ``numpy.frombuffer``.

    >>> tnp.frombuffer(b"\\x01\\x02", dtype=np.uint8)
    array([1, 2], dtype=uint8)
    """
    return _canonical_array(np.frombuffer(buffer, dtype, count, offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-d array of the numbers in a text string separated by ``sep``, as
    ``numpy.fromstring``.

    >>> tnp.fromstring("1 2 3", sep=" ")
    array([1., 2., 3.])
    """
    return _canonical_array(np.fromstring(string, dtype, count, sep=sep))


def fromfile(file, dtype=float, count=-1, sep="", offset=0):
    """A 1-d array of the numbers in a file, as ``numpy.fromfile``."""
    return _canonical_array(np.fromfile(file, dtype, count, sep, offset))


def fromiter(iterable, dtype, count=-1):
    """A 1-d array of the values an iterable yields, as ``numpy.fromiter``."""
    return _canonical_array(np.fromiter(iterable, dtype, count))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from an object with ``__dlpack__`` (a NumPy, JAX or PyTorch array), as
    ``numpy.from_dlpack``."""
    return _canonical_array(np.from_dlpack(x, copy=copy))


def load(file, *args, **kwargs):
    """Arrays saved with ``save`` or ``savez`` (NumPy's ``.npy``/``.npz``), as
    ``numpy.load``; an ``.npy`` file's array comes in tf_numba's dtypes."""
    out = np.load(file, *args, **kwargs)
    return _canonical_array(out) if isinstance(out, np.ndarray) else out


__all__ += ["frombuffer", "fromstring", "fromfile", "fromiter", "from_dlpack", "load"]
