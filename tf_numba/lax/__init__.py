"""``tf.lax``: JAX's ``jax.lax``, the primitives' own API (no promotion, explicit
shapes), with JAX's signatures and semantics.

| module | functions |
| --- | --- |
| ``elementwise`` | arithmetic, comparisons, bits, special functions, conversions, select |
| ``layout`` | broadcasts, reshapes, transposes, pad, concatenate, iota, full |
| ``slicing`` | slices, dynamic slices, gather and the scatters with dimension numbers |
| ``reductions`` | reduce with any computation, the named reductions, cumulative ops, sort, top_k |
| ``products`` | dot_general, dot, batch_matmul, ragged and scaled products |
| ``windows`` | convolutions, reduce_window and their shape helpers |
| ``control`` | cond, switch, while_loop, fori_loop, scan, map, associative_scan, checkpoint, |
| | custom_linear_solve, custom_root |
| ``fft`` | fft by FftType |
| ``compiler_hints`` | optimization_barrier, with_sharding_constraint, composite, |
| | platform_dependent, tokens: identities here |
| ``parallel`` | the collectives (psum, all_gather, axis_index, ...) over the one device's |
| | named axes, each of size 1 |
| ``rng`` | rng_uniform, rng_bit_generator: XLA's stateful and stateless generators |
| ``linalg`` | ``tf.lax.linalg``: JAX's ``jax.lax.linalg`` |

>>> from tf_numba import lax
>>> lax.fori_loop(0, 5, lambda i, x: x * 2.0, 1.0)
array(32.)
"""
from ..api import stop_gradient
from . import (compiler_hints, control, elementwise, layout, linalg, parallel, products,
               reductions, rng, slicing, windows)
from . import fft as _fft     # the module; ``fft`` is its function, as jax.lax.fft
from .compiler_hints import *  # noqa: F401,F403
from .control import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403
from .layout import *  # noqa: F401,F403
from .parallel import *  # noqa: F401,F403
from .rng import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .slicing import *  # noqa: F401,F403
from .windows import *  # noqa: F401,F403

__all__ = (control.__all__ + elementwise.__all__ + layout.__all__ + products.__all__
           + reductions.__all__ + slicing.__all__ + windows.__all__ + compiler_hints.__all__
           + _fft.__all__ + parallel.__all__ + rng.__all__ + ["stop_gradient",
                                                                  "linalg"])

from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # (those its submodules do not mark: windows', stop_gradient)
from ..core.public import public_dir as _public_dir  # noqa: E402
__dir__ = _public_dir(globals())   # dir() shows __all__, not the imported helpers
