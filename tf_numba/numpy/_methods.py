"""Operators, methods and properties of traced arrays, attached to ``core.trace.Tracer``.

Each one forwards to the tnp function of the same meaning, so ``x + 1``, ``x @ w``,
``x.sum(axis=0)`` and ``x[::2]`` on a Tracer follow NumPy exactly as the functions do.
"""
import numpy as np

from ..core.trace import Tracer, user_source
from ..errors import ImmutableArrayError
from . import indexing, manipulation, math, products, reductions, sorting
from ..tracebacks import api_boundary


def _is_operand(x):
    return isinstance(x, (Tracer, np.ndarray, np.generic, bool, int, float, complex, list,
                          tuple))


def _named(op, fn):
    """``op`` named as the tnp function it forwards to: errors name ``add``, not ``op``
    (its signature stays its own, for ``help``)."""
    op.__name__ = op.__qualname__ = fn.__name__
    return op


def _forward(fn):
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        return fn(self, other)
    return _named(op, fn)


def _reflected(fn):
    def op(self, other):
        if not _is_operand(other):
            return NotImplemented
        return fn(other, self)
    return _named(op, fn)


_BINARY = {
    "add": math.add, "sub": math.subtract, "mul": math.multiply, "truediv": math.true_divide,
    "floordiv": math.floor_divide, "mod": math.remainder, "pow": math.power,
    "matmul": products.matmul, "and": math.bitwise_and, "or": math.bitwise_or,
    "xor": math.bitwise_xor, "lshift": math.left_shift, "rshift": math.right_shift,
    "divmod": math.divmod,
}
_COMPARISONS = {"eq": math.equal, "ne": math.not_equal, "lt": math.less,
                "le": math.less_equal, "gt": math.greater, "ge": math.greater_equal}
_UNARY = {"neg": math.negative, "pos": math.positive, "abs": math.absolute,
          "invert": math.invert}


def _pow(self, other):
    """``x ** y``, with ndarray's fast paths: a float or complex array to the Python power
    2, -1 or 0.5 is ``square``, ``reciprocal`` or ``sqrt`` (bit-identical to NumPy)."""
    if not _is_operand(other):
        return NotImplemented
    if self.dtype.kind in "fc":
        if type(other) is int and other in (2, -1):
            return (math.square if other == 2 else math.reciprocal)(self)
        if type(other) is float and other == 0.5:
            return math.sqrt(self)
    return math.power(self, other)


def _reshape(self, *shape, order="C"):
    """``reshape((2, 3))`` or ``reshape(2, 3)``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return manipulation.reshape(self, shape, order=order)


def _transpose(self, *axes):
    """``transpose()``, ``transpose((1, 0))`` or ``transpose(1, 0)``."""
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return manipulation.transpose(self, axes or None)


def _item(self, *args):
    """The Python scalar, where the trace knows the value (un-jitted transforms)."""
    return self.concrete_value("item()").item(*args)


def _tolist(self):
    return self.concrete_value("tolist()").tolist()


def _setitem(self, index, value):
    raise ImmutableArrayError("traced arrays are immutable: use x = x.at[index].set(value) "
                              "instead of x[index] = value", op="setitem",
                              source=user_source())


def _sort(self, axis=-1, kind=None, order=None, *, stable=None):
    """The sorted array (returned, not sorted in place: traced arrays are immutable)."""
    return sorting.sort(self, axis, kind, order)


# No ``var`` method: Tracer's slot ``var`` holds its IR variable (use ``tnp.var(x)``).
_METHODS = {
    "__getitem__": indexing.getitem,
    "__setitem__": _setitem,
    "__round__": lambda self, ndigits=None: math.round(self, ndigits or 0),
    "sum": reductions.sum, "prod": reductions.prod, "mean": reductions.mean,
    "std": reductions.std, "var": reductions.var, "max": reductions.max,
    "min": reductions.min, "argmax": reductions.argmax, "argmin": reductions.argmin,
    "all": reductions.all, "any": reductions.any, "cumsum": reductions.cumsum,
    "cumprod": reductions.cumprod,
    "reshape": _reshape, "transpose": _transpose, "swapaxes": manipulation.swapaxes,
    "squeeze": manipulation.squeeze, "ravel": manipulation.ravel,
    "flatten": manipulation.ravel, "repeat": manipulation.repeat,
    "diagonal": manipulation.diagonal, "trace": products.trace, "dot": products.dot,
    "astype": lambda self, dtype, order="K", casting="unsafe", subok=True, copy=True:
        manipulation.astype(self, dtype),
    "clip": math.clip, "conj": math.conj, "conjugate": math.conjugate,
    "round": math.round, "sort": _sort, "argsort": sorting.argsort,
    "take": indexing.take, "nonzero": indexing.nonzero, "searchsorted": sorting.searchsorted,
    "copy": lambda self, order="C": self, "item": _item, "tolist": _tolist,
}

_PROPERTIES = {
    "T": manipulation.transpose,
    "mT": manipulation.matrix_transpose,
    "real": math.real,
    "imag": math.imag,
    "at": indexing._AtIndexer,
    "itemsize": lambda self: self.dtype.itemsize,
    "nbytes": lambda self: self.dtype.itemsize * manipulation.size(self),
}


def install(namespace):
    """Attach everything above to Tracer (idempotent), and ``namespace`` (``tf_numba.numpy``)
    as the functions NumPy's operators on a tracer run; each is an entry point, so its
    errors name the op and the user's line."""
    Tracer._tnp = namespace

    def located(fn):
        return api_boundary(fn, fn.__name__)
    for name, fn in _BINARY.items():
        setattr(Tracer, f"__{name}__", located(_forward(fn)))
        setattr(Tracer, f"__r{name}__", located(_reflected(fn)))
    for name, fn in _COMPARISONS.items():
        setattr(Tracer, f"__{name}__", located(_forward(fn)))
    for name, fn in _UNARY.items():
        setattr(Tracer, f"__{name}__", located(fn))
    Tracer.__pow__ = located(_pow)
    for name, fn in _METHODS.items():
        setattr(Tracer, name, located(fn))
    for name, fn in _PROPERTIES.items():
        setattr(Tracer, name, property(located(fn)))

