"""``tf.debug``: look at values while a program runs, as ``jax.debug``.

``tf.debug.print(fmt, *args, **kwargs)`` prints ``fmt.format(*args, **kwargs)`` with the
arguments' values at run time: eagerly at once, under ``jit`` on every call (the print
runs between the compiled kernels), under ``grad`` with the primal values, under ``vmap``
with the batched ones. It is an equation of its own that simplification never drops or
merges (``core.primitive.EFFECTFUL``); calling ``print`` on a traced value instead shows
only its type (``Tracer<f64[3]>``), once, when the function is traced.

>>> import numpy as np, tf_numba as tf
>>> f = tf.jit(lambda x: (tf.debug.print("x = {}", x), x * 2)[1], tiered=False)
>>> f(np.arange(3.0))
x = [0. 1. 2.]
array([0., 2., 4.])
"""
import builtins

from .core import pytree
from .core.primitive import EFFECTFUL, Primitive, register
from .core.public import public_dir

__all__ = ["print"]


def _print_avals(*avals, fmt, tree):
    return ()


def _print_impl(*values, fmt, tree):
    args, kwargs = pytree.unflatten(tree, values)
    builtins.print(fmt.format(*args, **kwargs), flush=True)
    return []


debug_print_p = Primitive("debug_print", _print_avals, _print_impl, multiple_results=True)
EFFECTFUL.add(debug_print_p)


def print(fmt, *args, **kwargs):  # noqa: A001 - jax.debug.print's name
    """Print ``fmt.format(*args, **kwargs)`` with the values the arguments (arrays,
    traced values, pytrees of them) have when the program runs.

    >>> import numpy as np, tf_numba as tf
    >>> tf.debug.print("{a} and {b}", a=np.ones(2), b=3)
    [1. 1.] and 3
    """
    leaves, tree = pytree.flatten((args, kwargs))
    debug_print_p.bind(*leaves, fmt=fmt, tree=tree)


def _print_jvp(primals, tangents, *, fmt, tree):
    debug_print_p.bind(*primals, fmt=fmt, tree=tree)
    return [], []


def _print_batch(args, dims, *, fmt, tree):
    debug_print_p.bind(*args, fmt=fmt, tree=tree)
    return [], []


register("jvp", debug_print_p, _print_jvp)
register("batch", debug_print_p, _print_batch)

from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
__dir__ = public_dir(globals())
