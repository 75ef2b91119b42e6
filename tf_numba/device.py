"""The one device tf_numba computes on, this machine's CPU, and JAX's device queries over it
(``devices``, ``device_count``, ``default_backend``, ...). Placing arrays on it
(``device_put``) and shardings over it are ``tf_numba.sharding``'s.

>>> tf.devices()
[CpuDevice(id=0)]
"""
from .errors import ArgumentError

__all__ = ["Device", "copy_to_host_async", "default_backend", "device_count", "devices",
           "effects_barrier", "host_count", "host_id", "host_ids", "local_device_count",
           "local_devices", "print_environment_info", "process_count", "process_index",
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


def print_environment_info(return_string=False):
    """The versions of tf_numba and what it runs on (Python, NumPy, numba, SciPy, the
    machine), printed or, with ``return_string=True``, returned
    (``jax.print_environment_info``)."""
    import os
    import platform
    import sys

    import numba
    import numpy
    import scipy

    from .version import __version__
    text = "\n".join([f"tf_numba: {__version__}", f"numpy:    {numpy.__version__}",
                      f"numba:    {numba.__version__}", f"scipy:    {scipy.__version__}",
                      f"python:   {sys.version}",
                      f"machine:  {platform.platform()}, {os.cpu_count()} CPUs"]) + "\n"
    if return_string:
        return text
    print(text, end="")


def copy_to_host_async(x):
    """Nothing to do (``jax.copy_to_host_async``): tf_numba's arrays are on the host."""


def effects_barrier():
    """Nothing to wait for (``jax.effects_barrier``): tf_numba runs each call's effects
    (``tf.debug.print``, callbacks) before the call returns."""


from .core.public import public_dir  # noqa: E402
__dir__ = public_dir(globals())
