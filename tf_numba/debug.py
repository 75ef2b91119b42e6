"""``tf.debug``: look at values while a program runs, as ``jax.debug``.

``tf.debug.callback(fn, *args)`` calls ``fn`` on the arguments' values at run time;
``tf.debug.print(fmt, *args, **kwargs)`` (and ``log``, through the logger) prints
``fmt.format(*args, **kwargs)`` with them: eagerly at once, under ``jit`` on every call
(between the compiled kernels), under ``grad`` with the primal values, under ``vmap``
with the batched ones. Each is an equation (``debug_callback``) that simplification never
drops or merges (``core.primitive.EFFECTFUL``); calling ``print`` on a traced value instead
shows only its type (``Tracer<f64[3]>``), once, when the function is traced.

>>> import numpy as np, tf_numba as tf
>>> f = tf.jit(lambda x: (tf.debug.print("x = {}", x), x * 2)[1], tiered=False)
>>> f(np.arange(3.0))
x = [0. 1. 2.]
array([0., 2., 4.])
"""
import builtins
import logging

from .core import pytree
from .core.primitive import EFFECTFUL, Primitive, register
from .core.public import public_dir

__all__ = ["callback", "log", "print"]


class _Call:
    """A callback as a parameter of the equation: called with the argument tree rebuilt.
    Fingerprinted by identity (two functions of one name are two callbacks)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, tree, values):
        args, kwargs = pytree.unflatten(tree, values)
        self.fn(*args, **kwargs)

    def fingerprint(self):
        return f"debug_callback({getattr(self.fn, '__qualname__', self.fn)}@{id(self.fn):x})"


class _Formatted:
    """``fmt.format(*args, **kwargs)`` handed to ``emit`` (printing or logging); equal for
    one format and one destination, so a cached program is reused."""

    def __init__(self, fmt, emit):
        self.fmt, self.emit = fmt, emit

    def __call__(self, tree, values):
        args, kwargs = pytree.unflatten(tree, values)
        self.emit(self.fmt.format(*args, **kwargs))

    def __eq__(self, other):
        return type(other) is _Formatted and (self.fmt, self.emit) == (other.fmt, other.emit)

    def __hash__(self):
        return hash((self.fmt, self.emit))

    def fingerprint(self):
        return f"debug_format({self.fmt!r}, {self.emit.__qualname__})"


def _callback_avals(*avals, fn, tree):
    return ()


def _callback_impl(*values, fn, tree):
    fn(tree, values)
    return []


debug_callback_p = Primitive("debug_callback", _callback_avals, _callback_impl,
                             multiple_results=True)
EFFECTFUL.add(debug_callback_p)


def _bind(fn, args, kwargs):
    leaves, tree = pytree.flatten((args, kwargs))
    debug_callback_p.bind(*leaves, fn=fn, tree=tree)


def _print_line(text):
    builtins.print(text, flush=True)


def print(fmt, *args, **kwargs):  # noqa: A001 - jax.debug.print's name
    """Print ``fmt.format(*args, **kwargs)`` with the values the arguments (arrays,
    traced values, pytrees of them) have when the program runs.

    >>> import numpy as np, tf_numba as tf
    >>> tf.debug.print("{a} and {b}", a=np.ones(2), b=3)
    [1. 1.] and 3
    """
    _bind(_Formatted(fmt, _print_line), args, kwargs)


_LOGGER = logging.getLogger("tf_numba.debug")


def _log_line(text):
    _LOGGER.info(text)


def log(fmt, *args, **kwargs):
    """As ``print``, through the ``tf_numba.debug`` logger at level INFO
    (``jax.debug.log``)."""
    _bind(_Formatted(fmt, _log_line), args, kwargs)


def callback(callback, *args, ordered=False, partitioned=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` with the values the arguments have when the
    program runs, for what it does (its result is dropped), as ``jax.debug.callback``:
    eagerly at once, under ``jit`` on every call, under ``grad`` with the primal values,
    under ``vmap`` with the batched ones. Calls run in program order (``ordered`` is
    always so).

    >>> seen = []
    >>> tf.jit(lambda x: (tf.debug.callback(seen.append, x), x)[1])(np.ones(2))
    """
    _bind(_Call(callback), args, kwargs)


def _callback_jvp(primals, tangents, *, fn, tree):
    debug_callback_p.bind(*primals, fn=fn, tree=tree)
    return [], []


def _callback_batch(args, dims, *, fn, tree):
    debug_callback_p.bind(*args, fn=fn, tree=tree)
    return [], []


register("jvp", debug_callback_p, _callback_jvp)
register("batch", debug_callback_p, _callback_batch)

from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
__dir__ = public_dir(globals())
