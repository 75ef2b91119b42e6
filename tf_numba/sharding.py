"""Shardings on one device, as ``jax.sharding``: a mesh of this machine's one CPU device,
and shardings over it that are checked and recorded, so that a JAX program written for a
mesh runs here unchanged with every mesh axis of size 1.

A tf_numba array is a NumPy array in this process's memory, so putting one on the device
is taking it as a NumPy array: ``device_put`` aliases its input where it can (as JAX's
CPU backend does with ``may_alias=None``) and copies it when asked (``may_alias=False``
or ``donate``).

A ``NamedSharding(mesh, P("batch"))`` is checked as JAX checks it (its axis names are
the mesh's, each used once, the spec no longer than the array's rank, each sharded dim
divisible by its axes' sizes) and changes nothing: the one device holds every array
whole. A mesh needs as many devices as its axes' sizes multiply to, so a mesh of more than
one device is an error that says tf_numba has one device.

>>> mesh = tf.make_mesh((1,), ("batch",))
>>> x = tf.device_put(np.ones((4, 3)), tf.NamedSharding(mesh, P("batch")))
"""
import enum
import functools
import math
import threading

import numpy as np

from .core import pytree
from .device import CPU, Device
from .errors import ArgumentError, ShapeError, UnboundAxisError

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "auto_axes", "explicit_axes", "get_abstract_mesh",
           "get_mesh", "make_mesh", "make_single_device_sharding", "reshard", "set_mesh",
           "use_abstract_mesh"]
# (device_put and the other placements, shard_map, smap and pmap, defined below, are
# top-level names: tf.device_put, tf.shard_map, ...)


class AxisType(enum.Enum):
    """How a mesh axis is sharded (``jax.sharding.AxisType``); on one device each kind
    computes the same."""
    Auto = "Auto"
    Explicit = "Explicit"
    Manual = "Manual"

    def __repr__(self):
        return self.value


class PartitionSpec(tuple):
    """How each dim of an array is split over mesh axes: an entry per dim, a mesh axis
    name, a tuple of names, or None (not split): ``P("batch", None)``."""

    def __new__(cls, *partitions):
        for p in partitions:
            if not (p is None or isinstance(p, str) or (isinstance(p, tuple) and all(
                    isinstance(q, str) for q in p))):
                raise ArgumentError(f"a PartitionSpec entry is a mesh axis name, a tuple of "
                                    f"names or None; got {p!r}", op="PartitionSpec")
        return super().__new__(cls, partitions)

    def __repr__(self):
        return "P(" + ", ".join(map(repr, self)) + ("," if len(self) == 1 else "") + ")"

    def __reduce__(self):
        return (PartitionSpec, tuple(self))


def _axis_names(entry):
    return () if entry is None else (entry,) if isinstance(entry, str) else tuple(entry)


class _MeshBase:
    """What ``Mesh`` and ``AbstractMesh`` share: axis names, sizes and types, and the check
    of a PartitionSpec against them."""

    def _set_axes(self, sizes, names, axis_types, op):
        names = (names,) if isinstance(names, str) else tuple(names)
        sizes = tuple(int(s) for s in sizes)
        if len(names) != len(sizes) or len(set(names)) != len(names):
            raise ArgumentError(f"axis names {names} must be distinct, one per axis of the "
                                f"mesh's shape {sizes}", op=op)
        if axis_types is None:
            axis_types = (AxisType.Explicit,) * len(names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(names)
        self.axis_names, self.axis_sizes = names, sizes
        self.axis_types = tuple(axis_types)

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return math.prod(self.axis_sizes)

    @property
    def empty(self):
        return not self.axis_names

    def check_spec(self, spec, shape, op):
        """ShapeError unless ``spec`` can split an array of ``shape`` over this mesh."""
        if len(spec) > len(shape):
            raise ShapeError(f"{spec} has {len(spec)} entries, more than the rank "
                             f"{len(shape)} of the array (shape {tuple(shape)})", op=op)
        used = []
        for dim, entry in enumerate(spec):
            names = _axis_names(entry)
            for name in names:
                if name not in self.axis_names:
                    raise ArgumentError(f"{spec} names axis {name!r}, which the mesh "
                                        f"{self} does not have", op=op)
                if name in used:
                    raise ArgumentError(f"{spec} uses mesh axis {name!r} twice", op=op)
                used.append(name)
            parts = math.prod(self.shape[n] for n in names)
            if shape[dim] % parts:
                raise ShapeError(f"dim {dim} of an array of shape {tuple(shape)} is split "
                                 f"{parts} ways by {spec}, which does not divide it", op=op)

    def __repr__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)
        kinds = ", ".join(repr(t) for t in self.axis_types)
        comma = "," if len(self.axis_types) == 1 else ""
        return f"{type(self).__name__}({axes}, axis_types=({kinds}{comma}))"

    def __eq__(self, other):
        return type(other) is type(self) and self.shape_tuple == other.shape_tuple and \
            self.axis_types == other.axis_types

    def __hash__(self):
        return hash((type(self), self.shape_tuple, self.axis_types))

    def __enter__(self):
        self._entered = set_mesh(self)
        return self._entered.__enter__()

    def __exit__(self, *exc):
        return self._entered.__exit__(*exc)


class Mesh(_MeshBase):
    """Devices laid out on named axes (``jax.sharding.Mesh``); here the one CPU device, so
    every axis has size 1.

    >>> Mesh(np.array(tf.devices()).reshape(1, 1), ("data", "model"))
    Mesh('data': 1, 'model': 1, axis_types=(Explicit, Explicit))
    """

    def __init__(self, devices, axis_names, axis_types=None):
        devices = np.asarray(devices, dtype=object)
        if devices.ndim == 0:
            devices = devices.reshape(1)
        for d in devices.flat:
            if not isinstance(d, Device):
                raise ArgumentError(f"a mesh holds devices (tf.devices()); got {d!r}",
                                    op="Mesh")
        if devices.size != 1:
            raise ArgumentError(f"a mesh of {devices.size} devices (shape {devices.shape}): "
                                "tf_numba computes on one device, this machine's CPU; use "
                                "axes of size 1 (tf.make_mesh((1,), ('batch',)))", op="Mesh")
        self.devices = devices
        self._set_axes(devices.shape, axis_names, axis_types, "Mesh")

    @property
    def device_ids(self):
        return np.zeros(self.devices.shape, dtype=int)

    @property
    def abstract_mesh(self):
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types)


class AbstractMesh(_MeshBase):
    """A mesh's axis names, sizes and types without its devices
    (``jax.sharding.AbstractMesh``)."""

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        self._set_axes(axis_sizes, axis_names, axis_types, "AbstractMesh")

    @property
    def abstract_mesh(self):
        return self


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A mesh of ``axis_shapes`` named ``axis_names`` over this machine's one device
    (``jax.make_mesh``): every size must be 1.

    >>> tf.make_mesh((1,), ("batch",))
    Mesh('batch': 1, axis_types=(Explicit,))
    """
    shape = tuple(int(s) for s in axis_shapes)
    devices = [CPU] if devices is None else list(devices)
    if math.prod(shape) != len(devices):
        raise ArgumentError(f"a mesh of shape {shape} needs {math.prod(shape)} devices; "
                            f"there is {len(devices)} (tf_numba computes on one device, this "
                            "machine's CPU: use axes of size 1)", op="make_mesh")
    return Mesh(np.array(devices, dtype=object).reshape(shape), axis_names, axis_types)


class Sharding:
    """How an array is laid out over devices (``jax.sharding.Sharding``). Every sharding
    here places the whole array on the one CPU device."""
    memory_kind = "device"

    @property
    def device_set(self):
        return {CPU}

    @property
    def addressable_devices(self):
        return {CPU}

    @property
    def num_devices(self):
        return 1

    @property
    def is_fully_replicated(self):
        return True

    @property
    def is_fully_addressable(self):
        return True

    def shard_shape(self, global_shape):
        """The shape of each shard: the whole array's, on one device."""
        return tuple(global_shape)

    def devices_indices_map(self, global_shape):
        return {CPU: tuple(slice(None) for _ in global_shape)}

    def addressable_devices_indices_map(self, global_shape):
        return self.devices_indices_map(global_shape)

    def check(self, shape, op):
        """Raise unless an array of ``shape`` can take this sharding."""


class SingleDeviceSharding(Sharding):
    """The whole array on ``device`` (``jax.sharding.SingleDeviceSharding``)."""

    def __init__(self, device, *, memory_kind=None):
        if not isinstance(device, Device):
            raise ArgumentError(f"expected a device (tf.devices()[0]), got {device!r}",
                                op="SingleDeviceSharding")
        self.device = device

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r})"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding)

    def __hash__(self):
        return hash(SingleDeviceSharding)


def make_single_device_sharding(device):
    """``SingleDeviceSharding(device)``."""
    return SingleDeviceSharding(device)


class NamedSharding(Sharding):
    """An array split over ``mesh``'s named axes as ``spec`` says
    (``jax.sharding.NamedSharding``); checked against each array it is given to.

    >>> NamedSharding(tf.make_mesh((1,), ("batch",)), P("batch"))
    NamedSharding(mesh=Mesh('batch': 1, axis_types=(Explicit,)), spec=P('batch',))
    """

    def __init__(self, mesh, spec, *, memory_kind=None):
        if not isinstance(mesh, _MeshBase):
            raise ArgumentError(f"expected a Mesh (tf.make_mesh), got {mesh!r}",
                                op="NamedSharding")
        if not isinstance(spec, PartitionSpec):
            raise ArgumentError(f"expected a PartitionSpec (P(...)), got {spec!r}",
                                op="NamedSharding")
        for entry in spec:
            for name in _axis_names(entry):
                if name not in mesh.axis_names:
                    raise ArgumentError(f"{spec} names axis {name!r}, which the mesh {mesh} "
                                        "does not have", op="NamedSharding")
        self.mesh, self.spec = mesh, spec

    def check(self, shape, op):
        self.mesh.check_spec(self.spec, tuple(shape), op)

    def with_spec(self, spec):
        return NamedSharding(self.mesh, spec)

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def __eq__(self, other):
        return isinstance(other, NamedSharding) and (self.mesh, self.spec) == \
            (other.mesh, other.spec)

    def __hash__(self):
        return hash((self.mesh, self.spec))


# the mesh set by set_mesh, per thread as JAX's context is
_state = threading.local()


def get_mesh():
    """The mesh ``set_mesh`` set, or an empty one (``jax.sharding.get_mesh``)."""
    return getattr(_state, "mesh", None) or _EMPTY


def get_abstract_mesh():
    """The current mesh's ``AbstractMesh``."""
    return get_mesh().abstract_mesh


_EMPTY = AbstractMesh((), ())


class bound_axes:
    """While a ``shard_map`` or ``pmap`` body runs (or is traced): the axis names its
    collectives may name, each of size 1 on the one device."""

    def __init__(self, names):
        self.names = tuple(names)

    def __enter__(self):
        self.previous = getattr(_state, "axes", ())
        _state.axes = self.previous + self.names

    def __exit__(self, *exc):
        _state.axes = self.previous
        return False


def axis_names_of(axis_name, op):
    """The names in ``axis_name`` (a name or a tuple of them), each checked to be bound
    by an enclosing ``shard_map`` or ``pmap``."""
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    bound = getattr(_state, "axes", ())
    for name in names:
        if name not in bound:
            raise UnboundAxisError(
                f"unbound axis name: {name!r}; axis names are bound by shard_map (its mesh's "
                f"axes) and pmap(axis_name=...) (bound here: {list(bound)})", op=op)
    return tuple(names)


def current_mesh(op):
    """The mesh a bare PartitionSpec refers to; an error naming ``op`` if none is set."""
    mesh = get_mesh()
    if mesh.empty:
        raise ArgumentError("a PartitionSpec alone needs a mesh: use NamedSharding(mesh, "
                            "spec) or `with tf.set_mesh(mesh):`", op=op)
    return mesh


class set_mesh:
    """Make ``mesh`` the current mesh (``jax.set_mesh``): for good when called, until the
    block ends as a context manager (``with tf.set_mesh(mesh): ...``)."""

    def __init__(self, mesh):
        if not isinstance(mesh, _MeshBase):
            raise ArgumentError(f"expected a Mesh (tf.make_mesh), got {mesh!r}",
                                op="set_mesh")
        self.previous = getattr(_state, "mesh", None)
        self.mesh = _state.mesh = mesh

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _state.mesh = self.previous
        return False


use_abstract_mesh = set_mesh


def reshard(xs, out_shardings):
    """``xs`` laid out as ``out_shardings`` say (``jax.sharding.reshard``): checked, and
    otherwise ``xs`` itself, as one device holds every array whole."""
    return device_put(xs, out_shardings)


def _same_function(what):
    def decorator(fun=None, *, axes=None, out_sharding=None):
        if fun is None:
            return functools.partial(decorator, axes=axes, out_sharding=out_sharding)
        return fun
    decorator.__name__ = what
    decorator.__doc__ = (f"``fun`` itself (``jax.sharding.{what}``): on one device, axes "
                         "that are auto or explicit compute the same.")
    return decorator


auto_axes = _same_function("auto_axes")
explicit_axes = _same_function("explicit_axes")

# ---------------------------------------------------------------- placing arrays

def _check_placement(placement, x, op):
    """A device, a sharding or a PartitionSpec given for ``x``: each must name this CPU."""
    if placement is None or placement is CPU:
        return
    if isinstance(placement, Sharding):
        placement.check(np.shape(x), op)
    elif isinstance(placement, PartitionSpec):
        current_mesh(op).check_spec(placement, np.shape(x), op)
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
    return p is None or isinstance(p, (Device, Sharding, PartitionSpec))


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


# ---------------------------------------------------------------- SPMD on one device

class _Infer:
    def __repr__(self):
        return "Infer"


Infer = _Infer()    # shard_map's default in_specs: read each argument's own sharding


def _check_specs(specs, tree, mesh, what, op):
    """Check a pytree of PartitionSpecs (a prefix of ``tree``) against the arrays of it."""
    if specs is Infer:
        return
    is_spec = lambda s: s is None or isinstance(s, PartitionSpec)  # noqa: E731
    leaves, prefix = pytree.flatten(specs, is_leaf=is_spec)
    for spec, sub in zip(leaves, pytree.flatten_up_to(prefix, tree)):
        for x in pytree.flatten(sub)[0]:
            if spec is not None:
                mesh.check_spec(spec, np.shape(x), f"{op} {what}")


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True):
    """``f`` mapped over the shards of its arguments on ``mesh``, as ``jax.shard_map``: on
    the one-device mesh each argument is one shard, so ``f`` sees whole arrays; the specs
    are checked against the arguments and results. Collectives over the mesh's axes (size
    1) are ``tf.lax``'s.

    >>> g = shard_map(lambda x: 2 * x, mesh=tf.make_mesh((1,), ("i",)), in_specs=P("i"),
    ...               out_specs=P("i"))
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs,
                                 mesh=mesh, axis_names=axis_names, check_vma=check_vma)

    @functools.wraps(f)
    def mapped(*args):
        on = mesh if mesh is not None else current_mesh("shard_map")
        _check_specs(in_specs, args, on, "in_specs", "shard_map")
        with bound_axes(on.axis_names):
            out = f(*args)
        _check_specs(out_specs, out, on, "out_specs", "shard_map")
        return out
    return mapped


def smap(f, /, *, in_axes=Infer, out_axes, axis_name):
    """``shard_map`` over the one mesh axis ``axis_name`` (``jax.smap``): ``in_axes`` and
    ``out_axes`` name the array axis each argument and result is split along."""
    def specs(axes):
        if axes is Infer or axes is None:
            return axes
        if isinstance(axes, int):
            return PartitionSpec(*([None] * axes + [axis_name]))
        return type(axes)(specs(a) for a in axes)

    @functools.wraps(f)
    def mapped(*args):
        return shard_map(f, out_specs=specs(out_axes), in_specs=specs(in_axes))(*args)
    return mapped


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
    """``fun`` mapped over a leading axis, one device per element, as ``jax.pmap``: with
    one device that axis has length 1, and this is ``vmap``.

    >>> pmap(lambda x: x * 2)(np.ones((1, 3)))
    array([[2., 2., 2.]])
    """
    from .api import vmap
    statics = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)

    @functools.wraps(fun)
    def mapped(*args):
        axes = in_axes if isinstance(in_axes, (list, tuple)) \
            else (in_axes,) * len(args)
        for i, (a, ax) in enumerate(zip(args, axes)):
            if i in statics or ax is None:
                continue
            for leaf in pytree.flatten(a)[0]:
                if np.ndim(leaf) and np.shape(leaf)[ax] != 1:
                    raise ShapeError(f"argument {i} has a mapped axis of length "
                                     f"{np.shape(leaf)[ax]}; pmap maps one element per "
                                     "device and tf_numba has one device (use vmap)",
                                     op="pmap")
        dynamic = [i for i in range(len(args)) if i not in statics]

        def call(*dyn):
            full = list(args)
            for i, x in zip(dynamic, dyn):
                full[i] = x
            with bound_axes(() if axis_name is None else (axis_name,)):
                return fun(*full)
        dyn_axes = tuple(axes[i] for i in dynamic) if isinstance(in_axes, (list, tuple)) \
            else in_axes
        return vmap(call, in_axes=dyn_axes, out_axes=out_axes)(*[args[i] for i in dynamic])
    return mapped


from .tracebacks import mark_entry_points  # noqa: E402
mark_entry_points(globals())   # their errors' tracebacks end at the caller's code
from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
