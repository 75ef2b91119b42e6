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
