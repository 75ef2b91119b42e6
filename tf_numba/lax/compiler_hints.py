"""``jax.lax``'s operations that steer XLA's compiler, the placement of data on devices or
the order of effects: on one CPU with no effects to order they mean nothing, and each is
the identity (or chooses the CPU's code), keeping JAX programs that use them running.

>>> from tf_numba import lax
>>> lax.optimization_barrier((np.float64(1.0), np.arange(2)))
(np.float64(1.0), array([0, 1]))
"""
import functools

from ..core import pytree
from ..core.trace import user_source
from ..errors import TfNumbaError
from ._operands import leaf

__all__ = ["optimization_barrier", "with_sharding_constraint", "composite",
           "platform_dependent", "stage", "dce_sink", "create_token", "after_all"]


def optimization_barrier(operand, /):
    """``operand`` (a pytree) as it is (``jax.lax.optimization_barrier``: XLA may not move
    computations across it; nothing here reorders them)."""
    return operand


def with_sharding_constraint(x, shardings):
    """``x`` as it is (``jax.lax.with_sharding_constraint``: one device holds everything,
    so every sharding is satisfied)."""
    return x


def composite(decomposition, name, version=0):
    """``decomposition`` as a named composite (``jax.lax.composite``): XLA may replace a
    composite it recognizes by ``name``; here it is always its decomposition.

    >>> tangent = composite(lambda x: lax.sin(x) / lax.cos(x), "my.tangent")
    >>> tangent(np.float64(0.5))
    np.float64(0.5463024898437905)
    """
    if not callable(decomposition):
        raise TfNumbaError(f"needs a function to decompose into, got {decomposition!r}",
                           op="composite", source=user_source())

    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        return decomposition(*args, **kwargs)
    return call


def platform_dependent(*args, default=None, **per_platform):
    """``per_platform["cpu"](*args)``, else ``default(*args)``
    (``jax.lax.platform_dependent``: this is always a CPU)."""
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise TfNumbaError(f"has no branch for the CPU (given {sorted(per_platform)}) and no "
                           "default", op="platform_dependent", source=user_source())
    return branch(*args)


def stage(x, /):
    """``x`` as an array (``jax.lax.stage``: lifted into the trace; a NumPy array or a
    tracer here)."""
    return leaf(x)


def dce_sink(val, *, prevent_mlir_dce=False):
    """Nothing (``jax.lax.dce_sink``: marks ``val`` used so XLA keeps computing it; a
    value here is computed when it is asked for)."""
    pytree.flatten(val)


class Token:
    """An ordering token (``jax.lax.create_token``): XLA threads them through effects; there
    are none to order here."""

    def __repr__(self):
        return "Token()"


def create_token(_=None):
    """A ``Token`` (``jax.lax.create_token``; its argument is ignored, as JAX's)."""
    return Token()


def after_all(*operands):
    """A ``Token`` after ``operands`` (``jax.lax.after_all``)."""
    return Token()


from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
