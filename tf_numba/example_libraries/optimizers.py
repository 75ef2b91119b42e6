"""``jax.example_libraries.optimizers`` under JAX's path: the objects of ``tf.optimizers``
(``(init, update, get_params)`` triples over pytrees, schedules, clipping and the state's
packing for serialization).

>>> from tf_numba.example_libraries import optimizers
>>> opt_init, opt_update, get_params = optimizers.adam(1e-3)
"""
from ..optimizers import (JoinPoint, Optimizer, OptimizerState, adagrad, adam, adamax, adamw,
                          clip_by_global_norm, clip_grads, constant, cosine_decay,
                          exponential_decay, inverse_time_decay, l2_norm, make_schedule,
                          momentum, nesterov, optimizer, pack_optimizer_state,
                          piecewise_constant, polynomial_decay, rmsprop, rmsprop_momentum, sgd,
                          sm3, unpack_optimizer_state, warmup)

__all__ = ["JoinPoint", "Optimizer", "OptimizerState", "adagrad", "adam", "adamax", "adamw",
           "clip_by_global_norm", "clip_grads", "constant", "cosine_decay",
           "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule", "momentum",
           "nesterov", "optimizer", "pack_optimizer_state", "piecewise_constant",
           "polynomial_decay", "rmsprop", "rmsprop_momentum", "sgd", "sm3",
           "unpack_optimizer_state", "warmup"]

from tf_numba.core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
