"""The one device tf_numba computes on, this machine's CPU, and JAX's device queries over it
(``devices``, ``device_count``, ``default_backend``, ``device_put``, ...).

A tf_numba array is a NumPy array in this process's memory, so "putting" one on the device
is taking it as a NumPy array: ``device_put`` aliases its input where it can (as JAX's CPU
backend does with ``may_alias=None``) and copies it when asked (``may_alias=False`` or
``donate``). Shardings are checked against the mesh of this one device and otherwise change
nothing (``tf_numba.sharding``).

>>> tf.devices()
[CpuDevice(id=0)]
>>> tf.device_put(np.arange(3.0))
array([0., 1., 2.])
"""
import numpy as np

from .core import pytree
from .errors import ArgumentError

__all__ = ["Device", "copy_to_host_async", "default_backend", "effects_barrier", "device_count", "device_get", "device_put",
           "devices", "host_count", "host_id", "host_ids", "local_device_count",
           "local_devices", "make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "process_count", "process_index",
           "process_indices"]


class Device:
    """This machine's CPU as JAX names a device: ``platform`` 'cpu', ``id`` 0."""
    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0
    host_id = 0
    client = None

    def __repr__(self):
        return "CpuDevice(id=0)"

    def __reduce__(self):
        return (_the_device, ())


CPU = Device()


def _the_device():
    return CPU


def _check_backend(backend, op):
    if backend not in (None, "cpu"):
        raise ArgumentError(f"backend {backend!r}: tf_numba runs on the CPU only (backend "
                            "'cpu' or None)", op=op)


def devices(backend=None):
    """The devices tf_numba computes on: ``[CpuDevice(id=0)]`` (``jax.devices``)."""
    _check_backend(backend, "devices")
    return [CPU]


def local_devices(process_index=None, backend=None, host_id=None):
    """This process's devices: the one CPU device (``jax.local_devices``)."""
    _check_backend(backend, "local_devices")
    return [CPU]


def device_count(backend=None):
    """1: tf_numba computes on this machine's CPU as one device (it may use several threads,
    ``CpuEngine(threads=N)``, within it)."""
    _check_backend(backend, "device_count")
    return 1


def local_device_count(backend=None):
    """1, as ``device_count``."""
    return device_count(backend)


def default_backend():
    """``'cpu'`` (``jax.default_backend``)."""
    return "cpu"


def process_count(backend=None):
    """1: one process computes (``jax.process_count``)."""
    return 1


def process_index(backend=None):
    """0, this process's index (``jax.process_index``)."""
    return 0


def process_indices(backend=None):
    """``[0]`` (``jax.process_indices``)."""
    return [0]


host_count, host_id, host_ids = process_count, process_index, process_indices


def _check_placement(placement, x, op):
    """A device, a sharding or a PartitionSpec given for ``x``: each must name this CPU."""
    from . import sharding
    if placement is None or placement is CPU:
        return
    if isinstance(placement, sharding.Sharding):
        placement.check(np.shape(x), op)
    elif isinstance(placement, sharding.PartitionSpec):
        sharding.current_mesh(op).check_spec(placement, np.shape(x), op)
    elif isinstance(placement, Device):
        return
    else:
        raise ArgumentError(f"cannot place an array on {placement!r}: give the CPU device "
                            "(tf.devices()[0]), a Sharding or a PartitionSpec", op=op)


def _placed(x, placement, copy, op):
    from .core.trace import Tracer
    if type(x) is Tracer:
        return x
    _check_placement(placement, x, op)
    return np.array(x, copy=True) if copy else np.asarray(x)


def _is_placement(p):
    from . import sharding
    return p is None or isinstance(p, (Device, sharding.Sharding, sharding.PartitionSpec))


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """``x`` (a pytree of arrays) as tf_numba's arrays, NumPy arrays in this process
    (``jax.device_put``). ``device`` may be the CPU device, a Sharding of the one-device
    mesh or a PartitionSpec (or a tree of them, a prefix of ``x``'s); each is checked, and
    none changes the data. The result aliases ``x`` where it can (``may_alias=None``, as
    JAX's CPU backend); ``may_alias=False`` or ``donate=True`` copy.

    >>> tf.device_put({"w": [1.0, 2.0]})["w"]
    array([1., 2.])
    """
    copy = may_alias is False or bool(donate)
    if _is_placement(device) or not isinstance(device, (list, tuple, dict)):
        return pytree.tree_map(lambda leaf: _placed(leaf, device, copy, "device_put"), x)
    places, prefix = pytree.flatten(device, is_leaf=_is_placement)
    subtrees = pytree.flatten_up_to(prefix, x)
    return pytree.unflatten(prefix, [device_put(t, p, donate=donate, may_alias=may_alias)
                                     for t, p in zip(subtrees, places)])


def device_get(x):
    """``x`` with its arrays as NumPy arrays on the host (``jax.device_get``): they are
    already, so this is ``x`` with Python scalars left as they are."""
    return pytree.tree_map(lambda a: a if np.isscalar(a) else np.asarray(a), x)


def copy_to_host_async(x):
    """Nothing to do (``jax.copy_to_host_async``): tf_numba's arrays are on the host."""


def effects_barrier():
    """Nothing to wait for (``jax.effects_barrier``): tf_numba runs each call's effects
    (``tf.debug.print``, callbacks) before the call returns."""


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """The array of ``shape`` whose one shard (all of it, on this one device) is
    ``data_callback(index)`` with ``index`` a tuple of full slices
    (``jax.make_array_from_callback``)."""
    shape = tuple(shape)
    sharding.check(shape, "make_array_from_callback")
    out = np.asarray(data_callback(tuple(slice(None) for _ in shape)), dtype=dtype)
    if out.shape != shape:
        raise ArgumentError(f"the callback returned shape {out.shape} for the one shard of "
                            f"an array of shape {shape}", op="make_array_from_callback")
    return out


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array whose one shard is ``arrays[0]`` (``jax.make_array_from_single_device_
    arrays`` on one device)."""
    arrays = list(arrays)
    if len(arrays) != 1:
        raise ArgumentError(f"got {len(arrays)} shards; the one-device mesh has one",
                            op="make_array_from_single_device_arrays")
    return make_array_from_callback(shape, sharding, lambda _: arrays[0], dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """``local_data`` as the global array: this process holds all of it
    (``jax.make_array_from_process_local_data`` with one process)."""
    shape = np.shape(local_data) if global_shape is None else tuple(global_shape)
    return make_array_from_callback(shape, sharding, lambda _: local_data)


from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
