"""tf_numba over Dask: programs, not Python functions, run on the blocks of Dask arrays.

``pip install 'tf_numba[dask]'`` (``dask[array]`` and ``distributed``), then::

    import tf_numba.dask
    y = tf.dask.map_blocks(f, x)                       # a Dask array, blockwise f
    per_row = tf.dask.vmap(tf.grad(loss), in_axes=(None, 0, 0))(w, X, Y)
    value, g = tf.dask.value_and_grad(loss, data_argnums=(1, 2))(w, X, Y)

| module | what it holds |
| --- | --- |
| ``api.py`` | ``map_blocks``, ``vmap``, ``value_and_grad``: the graphs they build |
| ``blocks.py`` | the grid of blocks, one trace per shape class, guard checks per block |
| ``worker.py`` | what runs on a worker: ``ShippedProgram``, its Runtime, one block's run |

A traced program pickles compactly (``core/serialize.py``) and runs where it lands without
the user's source; each worker process decodes it once and prepares it through its own
``Runtime``, with the kernel cache on its disk. Any Dask scheduler works: the threaded one
by default, a ``distributed.Client`` (``LocalCluster``, dask-jobqueue, Kubernetes) when one
is active. ``examples/dask_train.py`` fits a model this way.
"""
try:
    import dask.array  # noqa: F401
except ImportError as err:         # the optional extra is not installed
    raise ImportError("tf_numba.dask needs dask[array] and distributed: "
                      "pip install 'tf_numba[dask]'") from err

from ..core.public import public_dir as _public_dir
from .api import map_blocks, value_and_grad, vmap
from .worker import ShippedProgram

__all__ = ["ShippedProgram", "map_blocks", "value_and_grad", "vmap"]
from ..tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
__dir__ = _public_dir(globals())   # dir() shows __all__, not dask or the submodules
