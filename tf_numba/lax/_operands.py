"""What the ``tf.lax`` functions take: operands as tracers or NumPy arrays (a Python scalar
standing alone becomes an array of its default dtype), and the ints among them that are
known while tracing."""
import numbers

import numpy as np

from ..core import pytree
from ..core.ir import aval_of_value
from ..core.trace import Tracer


def leaf(x):
    """``x`` as a tracer or an ``np.ndarray``."""
    if isinstance(x, Tracer) or isinstance(x, np.ndarray):
        return x
    return np.asarray(x, aval_of_value(x).dtype)


def flat(tree):
    """The leaves of a pytree (as ``leaf`` makes them) and its treedef."""
    leaves, treedef = pytree.flatten(tree)
    return [leaf(x) for x in leaves], treedef


def concrete_int(x):
    """``x`` as a Python int when it is an integer known while tracing, else None."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu":
        return int(x)
    if isinstance(x, np.integer):
        return int(x)
    return None
