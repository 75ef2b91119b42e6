"""tf_numba: JAX-style transforms (grad, jvp, vjp, jit, ...) for NumPy code, built on numba."""
from . import ops  # noqa: F401  (registers every primitive)
from .api import (ShapeDtype, grad, hessian, jacfwd, jacrev, jvp, linearize, make_program,
                  stop_gradient, symbolic, value_and_grad, vjp, vmap)
from .core.pytree import register_pytree_node
from .custom_derivatives import custom_jvp, custom_vjp
from .errors import TfNumbaError
from .ext.einsum import einsum
from .jit import jit
from .lowering.kernel_cache import cache_info
from . import runtime  # noqa: E402
from . import nn  # noqa: E402,F401
from . import lax  # noqa: E402
from .lax import checkpoint  # noqa: E402

__all__ = ["ShapeDtype", "TfNumbaError", "cache_info", "checkpoint", "custom_jvp", "custom_vjp", "einsum", "grad", "hessian",
           "jacfwd", "jacrev", "jit", "jvp", "lax", "linearize", "make_program", "register_pytree_node",
           "stop_gradient", "symbolic", "value_and_grad", "vjp", "vmap"]
