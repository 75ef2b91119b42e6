"""JAX's example libraries, ``jax.example_libraries``: ``stax`` (layers as ``(init_fun,
apply_fun)`` pairs) and ``optimizers`` (``(init, update, get_params)`` triples, the same
objects as ``tf.optimizers``), so that a stax program ports by changing its imports.

>>> from tf_numba.example_libraries import optimizers, stax
"""
from . import optimizers, stax

__all__ = ["optimizers", "stax"]

from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
