"""``jax.example_libraries.optimizers`` under JAX's path: the objects of ``tf.optimizers``
(``(init, update, get_params)`` triples over pytrees, schedules, clipping and the state's
packing for serialization).

>>> from tf_numba.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.adam(1e-3)
"""
from .. import optimizers as _optimizers
from ..optimizers import *  # noqa: F401,F403  (the same objects, JAX's path)

__all__ = list(_optimizers.__all__)

from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
