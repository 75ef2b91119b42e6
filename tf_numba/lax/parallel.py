"""JAX's collectives (``jax.lax.psum``, ``all_gather``, ``axis_index``, ...) on the one
device: inside ``shard_map`` (over its mesh's axes) or ``pmap`` (over its ``axis_name``)
every named axis has size 1, so a reduction over it is the value itself, a gather adds an
axis of length 1, the index is 0 and the size 1. A name no enclosing map binds is an
``UnboundAxisError`` (a ``NameError``, as JAX's).

>>> f = tf.shard_map(lambda x: lax.psum(x, "i"), mesh=tf.make_mesh((1,), ("i",)),
...                  in_specs=tf.P(), out_specs=tf.P())
"""
import numpy as np

import tf_numba.numpy as tnp

from ..core import pytree
from ..errors import ArgumentError, ShapeError
from ..sharding import axis_names_of

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "all_to_all", "axis_index",
           "axis_size", "ppermute", "pshuffle", "psum_scatter", "pswapaxes", "pbroadcast",
           "pcast"]


def _each(fn, x):
    return pytree.tree_map(fn, x)


def psum(x, axis_name, *, axis_index_groups=None):
    """The sum of ``x`` (a pytree) over the devices along ``axis_name``: ``x``, as one
    device holds the one term."""
    axis_names_of(axis_name, "psum")
    return _each(lambda v: v, x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """The mean of ``x`` over the devices along ``axis_name``: ``x`` on one device."""
    axis_names_of(axis_name, "pmean")
    return _each(lambda v: v, x)


def pmax(x, axis_name, *, axis_index_groups=None):
    """The elementwise maximum of ``x`` over the devices along ``axis_name``: ``x``."""
    axis_names_of(axis_name, "pmax")
    return _each(lambda v: v, x)


def pmin(x, axis_name, *, axis_index_groups=None):
    """The elementwise minimum of ``x`` over the devices along ``axis_name``: ``x``."""
    axis_names_of(axis_name, "pmin")
    return _each(lambda v: v, x)


def axis_index(axis_name):
    """This device's index along ``axis_name``: 0 (int32, as JAX's)."""
    axis_names_of(axis_name, "axis_index")
    return np.int32(0)


def axis_size(axis_name):
    """The number of devices along ``axis_name``: 1."""
    axis_names_of(axis_name, "axis_size")
    return 1


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Every device's ``x`` stacked along a new axis ``axis`` (concatenated along it with
    ``tiled``): ``x`` with an axis of length 1 there (``x`` itself when tiled)."""
    axis_names_of(axis_name, "all_gather")
    return _each(lambda v: v if tiled else tnp.expand_dims(v, axis), x)


def _one_along(v, axis, op, what):
    shape = tnp.shape(v)
    if shape[axis] != 1:
        raise ShapeError(f"the {what} axis {axis} of shape {shape} must have one entry per "
                         "device along the axis name: 1 here", op=op)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """``x`` split along ``split_axis`` into one piece per device, exchanged, and the pieces
    received stacked along ``concat_axis``: with one device, ``split_axis`` (of length 1)
    moves to ``concat_axis`` (``x`` itself when tiled)."""
    axis_names_of(axis_name, "all_to_all")
    if tiled:
        return x
    _one_along(x, split_axis, "all_to_all", "split")
    return tnp.expand_dims(tnp.squeeze(x, split_axis), concat_axis)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The sum over devices, each keeping its block along ``scatter_dimension``: with one
    device ``x``, the dimension (of length 1) dropped unless ``tiled``."""
    axis_names_of(axis_name, "psum_scatter")
    if tiled:
        return x
    _one_along(x, scatter_dimension, "psum_scatter", "scatter")
    return tnp.squeeze(x, scatter_dimension)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """The device axis swapped with array axis ``axis`` (of length 1 here): ``x``."""
    axis_names_of(axis_name, "pswapaxes")
    _one_along(x, axis, "pswapaxes", "swapped")
    return x


def _permutation(perm, op):
    pairs = [tuple(p) for p in perm]
    if any(i != 0 or j != 0 for i, j in pairs):
        raise ArgumentError(f"the permutation {pairs} names a device beyond the one here "
                            "(index 0)", op=op)
    return pairs


def ppermute(x, axis_name, perm):
    """``x`` sent along ``perm``'s ``(source, destination)`` pairs; a device no pair sends
    to receives zeros: ``x`` for ``[(0, 0)]``, zeros for ``[]``."""
    axis_names_of(axis_name, "ppermute")
    pairs = _permutation(perm, "ppermute")
    return _each(lambda v: v if pairs else tnp.zeros_like(v), x)


def pshuffle(x, axis_name, perm):
    """``x`` from device ``perm[i]`` at device ``i``: ``perm`` must be ``[0]``."""
    axis_names_of(axis_name, "pshuffle")
    _permutation([(p, i) for i, p in enumerate(perm)], "pshuffle")
    if list(perm) != [0]:
        raise ArgumentError(f"perm {list(perm)} is not a permutation of the one device",
                            op="pshuffle")
    return x


def pbroadcast(x, axis_name, source):
    """Device ``source``'s ``x`` on every device: ``x`` (``source`` must be 0)."""
    axis_names_of(axis_name, "pbroadcast")
    if source != 0:
        raise ArgumentError(f"source {source} is beyond the one device (index 0)",
                            op="pbroadcast")
    return x


def pcast(x, axis_name, *, to):
    """``x`` marked as varying or invariant along ``axis_name`` (a type-level change in
    JAX's shard_map): ``x``."""
    axis_names_of(axis_name, "pcast")
    return x


from tf_numba.tracebacks import mark_entry_points as _mark_entry_points  # noqa: E402
_mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
