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
# A compile worker (``lowering.compile_worker``) imports only the modules its kernels
# call: the API below is ~0.5 s of its start, which a first compiled call waits for.
_api = not _os.environ.get("TF_NUMBA_COMPILE_WORKER")
try:
    if _api:
        from ._heap import keep_freed_heap as _keep_freed_heap
        _keep_freed_heap()
        from . import ops  # noqa: F401  (registers every primitive)
        from .api import (ShapeDtype, ShapeDtypeStruct, block_until_ready, eval_shape,
                          fwd_and_bwd, grad, hessian, jacfwd, jacobian, jacrev, jvp,
                          linear_transpose, linearize, make_jaxpr, make_program, named_call,
                          named_scope, stop_gradient, symbolic, typeof, value_and_grad, vjp, vmap)
        from .core.dtypes import float0
        from .core.trace import compile_time_eval as ensure_compile_time_eval
        from .tree_util import register_pytree_node
        from .custom_derivatives import closure_convert, custom_gradient, custom_jvp, custom_vjp
        from .errors import TfNumbaError
        from .numpy import einsum
        from .jit import clear_caches, jit
        from .lowering.kernel_cache import cache_info
        from . import runtime  # noqa: E402
        from . import numpy  # noqa: E402
        from . import nn  # noqa: E402,F401
        from . import lax  # noqa: E402
        from .lax import checkpoint  # noqa: E402
        from .lax import checkpoint as remat  # noqa: E402
        from . import tree, tree_util  # noqa: E402
        from . import optimizers, random  # noqa: E402
        from . import debug  # noqa: E402
        from . import config  # noqa: E402
        from .config import (check_tracer_leaks, checking_leaks, default_device,  # noqa: E402
                             default_matmul_precision, disable_jit, enable_x64, log_compiles,
                             transfer_guard, transfer_guard_device_to_device,
                             transfer_guard_device_to_host, transfer_guard_host_to_device)
        from . import custom_derivatives, dtypes, sharding, test_util, typing  # noqa: E402
        from . import checkpoint_policies, image, version  # noqa: E402
        from .callback import pure_callback  # noqa: E402
        from .device import (Device, copy_to_host_async, default_backend,  # noqa: E402
                             device_count, devices, effects_barrier, host_count, host_id,
                             host_ids, local_device_count, local_devices, print_environment_info,
                             process_count, process_index, process_indices)
        from .sharding import (NamedSharding, device_get, device_put,  # noqa: E402
                               make_array_from_callback, make_array_from_process_local_data,
                               make_array_from_single_device_arrays, make_mesh, pmap, reshard,
                               set_mesh, shard_map, smap)
        from .sharding import PartitionSpec as P  # noqa: E402
        from .typing import Array  # noqa: E402
finally:
    if _freeze:
        _gc.freeze()
        if _gc_was_enabled:
            _gc.enable()

__all__ = [
    # transforms
    "checkpoint", "closure_convert", "custom_gradient", "custom_jvp", "custom_vjp",
    "eval_shape", "fwd_and_bwd", "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jit",
    "jvp", "linear_transpose", "linearize", "make_jaxpr", "make_program", "named_call",
    "named_scope", "pure_callback", "remat", "stop_gradient", "value_and_grad", "vjp", "vmap",
    # values and their types
    "Array", "ShapeDtype", "ShapeDtypeStruct", "block_until_ready", "einsum", "float0",
    "register_pytree_node", "symbolic", "typeof",
    # the one device, shardings over it, and SPMD programs on it
    "Device", "NamedSharding", "P", "copy_to_host_async", "default_backend", "device_count",
    "device_get", "device_put", "devices", "effects_barrier", "host_count", "host_id",
    "host_ids", "local_device_count", "local_devices", "make_array_from_callback",
    "make_array_from_process_local_data", "make_array_from_single_device_arrays",
    "make_mesh", "pmap", "process_count", "process_index", "process_indices", "reshard",
    "set_mesh", "shard_map", "smap",
    # switches and caches
    "cache_info", "check_tracer_leaks", "checking_leaks", "checkpoint_policies",
    "clear_caches", "default_device",
    "default_matmul_precision", "disable_jit", "enable_x64", "ensure_compile_time_eval",
    "log_compiles", "transfer_guard", "transfer_guard_device_to_device",
    "transfer_guard_device_to_host", "transfer_guard_host_to_device",
    # errors and modules
    "TfNumbaError", "config", "custom_derivatives", "debug", "dtypes", "errors", "image",
    "lax", "nn", "numpy", "ops", "optimizers", "print_environment_info", "random", "runtime",
    "sharding", "test_util", "tree", "tree_util", "typing", "version"]

if _api:
    from .tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
    _mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
    _mark_entry_points(vars(config))   # (config cannot: tracebacks reads its switch)
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
