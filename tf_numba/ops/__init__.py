"""The primitives, grouped by kind; importing this package registers all of them.

| module | primitives |
| --- | --- |
| elementwise | unary/binary math, comparisons, logic, select, clamp, convert_element_type, |
| | stop_gradient |
| layout | broadcast_in_dim, reshape, transpose, rev, slice, pad, concatenate, iota |
| reductions | reduce_sum/prod/max/min/and/or, argmax/argmin, cumsum/prod/max/min, |
| | linear_recurrence |
| indexing | gather, scatter_add, scatter, scatter_mul, dynamic_slice, dynamic_update_slice |
| contraction | dot_general |
| sorting | sort (several operands, stable, NaN last) |
| control | cond, while_loop, scan, checkpoint (sub-programs in params; see ``tf_numba.lax``) |
| windows | patches (im2col) and patches_transpose (col2im), behind convolutions and pooling |
| bits | shift_right_logical (Threefry's rotations in ``tf_numba.random``) |
| segment | segment_sum/prod/max/min: ``jax.ops``'s reductions by segment id, composites |
| | of the scatters (the names this package shows as ``tf.ops``) |

Each module declares its primitives with abstract eval and NumPy impl and registers their
JVP and transpose rules next to them (see ``core/linear.py`` for the rule conventions),
and how the ones that fuse into kernels lower (``kernel_vocab/rules.py``: an elementwise
template, a reduction's accumulator, an index map); library steps' rules, which write
kernel code around helpers, are in ``lowering/library.py`` under the same primitives.
Each module's ``PRIMS`` maps primitive names to primitives.
"""
from . import elementwise, layout, reductions, indexing, contraction, sorting, special, control  # noqa: F401,E501
from . import windows  # noqa: F401,E402
from . import bits  # noqa: F401,E402
from ..core.linear import ARRAY_OPS  # noqa: E402

# the ops that core's rule helpers and the transforms build arrays with (core cannot import
# this package)
ARRAY_OPS.update(full=layout.full, broadcast_in_dim=layout.broadcast_in_dim,
                 transpose=layout.transpose, add=elementwise.add)

from .segment import segment_max, segment_min, segment_prod, segment_sum  # noqa: E402

# as a public module (``tf.ops``, JAX's ``jax.ops``) it shows the segment reductions; the
# primitive modules stay reachable by name
__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from ..core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())
