"""tf_numba: JAX-style transforms (grad, jvp, vjp, jit, ...) for NumPy code, built on numba."""
import gc as _gc
import os as _os

# Importing numba leaves ~50k long-lived objects (its type registries and compiler state)
# that no full collection has scanned yet. Python's first full collection then costs
# 20-30 ms here, landing inside this import or the user's first call, and every later one
# rescans them. Those objects, and the modules imported below, live as long as the
# process, so the collector stops tracking them (gc.freeze) once the import is done.
# TF_NUMBA_GC_FREEZE=0 keeps the interpreter's collector as it was.
_freeze = _os.environ.get("TF_NUMBA_GC_FREEZE", "1").lower() not in ("0", "false", "off", "no")
_gc_was_enabled = _gc.isenabled()
if _freeze:
    _gc.disable()
try:
    from ._heap import keep_freed_heap as _keep_freed_heap
    _keep_freed_heap()
    from . import ops  # noqa: F401  (registers every primitive)
    from .api import (ShapeDtype, block_until_ready, eval_shape, grad, hessian, jacfwd,
                      jacobian, jacrev, jvp, linearize, make_program, stop_gradient, symbolic,
                      value_and_grad, vjp, vmap)
    from .tree_util import register_pytree_node
    from .custom_derivatives import custom_jvp, custom_vjp
    from .errors import TfNumbaError
    from .numpy import einsum
    from .jit import jit
    from .lowering.kernel_cache import cache_info
    from . import runtime  # noqa: E402
    from . import nn  # noqa: E402,F401
    from . import lax  # noqa: E402
    from .lax import checkpoint  # noqa: E402
    from . import tree, tree_util  # noqa: E402
    from . import optimizers, random  # noqa: E402
    from . import debug  # noqa: E402
    from . import config  # noqa: E402
finally:
    if _freeze:
        _gc.freeze()
        if _gc_was_enabled:
            _gc.enable()

__all__ = ["ShapeDtype", "TfNumbaError", "block_until_ready", "eval_shape", "jacobian",
           "cache_info", "checkpoint", "config", "custom_jvp", "custom_vjp", "debug", "einsum",
           "errors", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax", "linearize",
           "make_program", "nn", "optimizers", "random", "register_pytree_node", "runtime",
           "stop_gradient", "symbolic", "tree", "tree_util", "value_and_grad", "vjp", "vmap"]

from .core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir(tf) shows __all__, not the implementation modules

# modules a user reaches as ``tf.scipy`` or ``tf.dask`` without importing them first, as
# ``jax.scipy``: imported on first use, not at ``import tf_numba`` (SciPy's surface costs
# import time; tf.dask needs the optional dask extra, and says so if it is missing)
_ON_FIRST_USE = ("scipy", "dask")


def __getattr__(name):
    if name in _ON_FIRST_USE:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
