"""``jax.lax.rng_uniform``: XLA's stateful generator, uniform values between bounds whose
stream is the implementation's (not ``tf.random``'s keys). Its draws are an equation
simplification never drops or merges (``core.primitive.EFFECTFUL``), so each call, and
each run of a jitted function, draws anew.

>>> lax.rng_uniform(0.0, 1.0, (2,)).shape
(2,)
"""
import numpy as np

from ..core import dtypes
from ..core.ir import ShapedArray
from ..core.linear import aval_of
from ..core.primitive import EFFECTFUL, Primitive
from ..errors import DTypeError
from ..ops import elementwise as ew
from ..ops import layout

__all__ = ["rng_uniform"]

# the stream of every rng_uniform: one per process, as XLA's generator state
_GENERATOR = np.random.default_rng()


def _uniform_eval(*, shape, dtype):
    return ShapedArray(shape, dtype)


def _uniform_impl(*, shape, dtype):
    return _GENERATOR.random(shape).astype(dtype)


# ``shape`` values uniform in [0, 1): no operands, so nothing to differentiate or batch
uniform_bits_p = Primitive("rng_uniform", _uniform_eval, _uniform_impl)
EFFECTFUL.add(uniform_bits_p)


def rng_uniform(a, b, shape):
    """Values uniform in ``[a, b)`` of ``shape`` from the process's stateful generator (a
    new draw at every call), as ``jax.lax.rng_uniform``; ``a`` and ``b`` are scalars of
    one float dtype (differentiable: the value is ``a + (b - a) u``)."""
    dt = aval_of(a).dtype
    if aval_of(b).dtype != dt or not dtypes.is_inexact(dt) or aval_of(a).shape:
        raise DTypeError(f"a and b must be scalars of one float dtype, got "
                         f"{aval_of(a)} and {aval_of(b)}", op="rng_uniform")
    shape = tuple(int(d) for d in shape)
    u = uniform_bits_p.bind(shape=shape, dtype=dt)
    full = lambda v: layout.broadcast_in_dim(v, shape, ())  # noqa: E731
    return ew.add(full(a), ew.mul(full(ew.sub(b, a)), u))


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
